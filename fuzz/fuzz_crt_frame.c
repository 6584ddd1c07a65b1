/*
 * fuzz_crt_frame.c: libFuzzer target for the crt's frame decoder and
 * encoder (tvmnode/crt/frame.h), what a device reads from its UART.
 *
 * The first input byte sizes the receiver's buffer (6 to 261 bytes, on the
 * heap so ASan sees every byte past it); the rest is the received stream.
 * Every frame the decoder delivers must fit the buffer and have a known
 * type, and encode again to a frame that decodes to itself. After the
 * stream, whatever it was, one intact frame (RESET, with a body when the
 * buffer takes one) must be delivered: the decoder never stays out of
 * step. A link (TnCrtLink) fed the same stream writes nothing but single
 * ACKs and takes no ACK for a frame it never sent. The whole input is also
 * sent as a body (up to 600 bytes) and must come back unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/crt/frame.h>

enum { kMaxBody = 600 };

static void fail(const char *what) {
  fprintf(stderr, "fuzz_crt_frame: %s\n", what);
  abort();
}

/* Encodes (type, seq, body) and decodes it with a fresh receiver of
 * body_len + 6 bytes: the same frame must come out, once. */
static void round_trip(uint8_t type, uint8_t seq, const uint8_t *body,
                       size_t len) {
  size_t cap = TN_CRT_FRAME_ENCODED_MAX(len), n = 0;
  uint8_t *out = malloc(cap);
  uint8_t *buf = malloc(len + TN_CRT_FRAME_OVERHEAD);
  if (out == NULL || buf == NULL) abort();
  if (tn_crt_frame_encode(type, seq, body, len, out, cap, &n) != TN_CRT_OK)
    fail("encode refused a valid frame");
  if (n > cap || out[0] != 0 || out[n - 1] != 0) fail("bad encoding bounds");
  TnCrtFrameDecoder d;
  if (tn_crt_frame_decoder_init(&d, buf, len + TN_CRT_FRAME_OVERHEAD) !=
      TN_CRT_OK)
    fail("decoder_init refused a valid buffer");
  int ready = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && i + 1 < n && out[i] == 0) fail("a 0 inside a frame");
    int32_t e = tn_crt_frame_decoder_push(&d, out[i]);
    if (e == TN_CRT_FRAME_READY) {
      if (d.type != type || d.seq != seq || d.body_len != len ||
          (len > 0 && memcmp(d.body, body, len) != 0))
        fail("a frame decoded to something else");
      ready++;
    } else if (e != TN_CRT_FRAME_PENDING) {
      fail("an intact frame was refused");
    }
  }
  if (ready != 1) fail("an intact frame was not delivered once");
  free(out);
  free(buf);
}

/* Feeds one stream byte: a frame it delivers must be sound. */
static void push_checked(TnCrtFrameDecoder *d, uint8_t byte) {
  int32_t e = tn_crt_frame_decoder_push(d, byte);
  if (e < TN_CRT_FRAME_PENDING || e > TN_CRT_FRAME_BAD_TYPE)
    fail("an unknown event");
  if (e != TN_CRT_FRAME_READY) return;
  if (d->body_len > d->cap - TN_CRT_FRAME_OVERHEAD || d->body != d->buf + 2)
    fail("a delivered body outside the buffer");
  if (d->type < TN_CRT_FRAME_REQUEST || d->type > TN_CRT_FRAME_RESET)
    fail("a frame of an unknown type delivered");
  round_trip(d->type, d->seq, d->body, d->body_len);
}

/* What a link writes while it receives: ACKs only, each one frame. */
static int32_t check_ack(void *ctx, const uint8_t *p, size_t n) {
  (void)ctx;
  uint8_t buf[TN_CRT_FRAME_OVERHEAD];
  TnCrtFrameDecoder d;
  if (tn_crt_frame_decoder_init(&d, buf, sizeof buf) != TN_CRT_OK) abort();
  int ready = 0;
  for (size_t i = 0; i < n; i++)
    if (tn_crt_frame_decoder_push(&d, p[i]) == TN_CRT_FRAME_READY) {
      if (d.type != TN_CRT_FRAME_ACK || d.body_len != 0)
        fail("a link wrote something but an ACK while receiving");
      ready++;
    }
  if (ready != 1) fail("a link's write was not one frame");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t cap = TN_CRT_FRAME_OVERHEAD + data[0];
  uint8_t *buf = malloc(cap);
  if (buf == NULL) abort();
  TnCrtFrameDecoder d;
  if (tn_crt_frame_decoder_init(&d, buf, cap) != TN_CRT_OK) abort();
  for (size_t i = 1; i < size; i++) push_checked(&d, data[i]);
  /* resynchronisation: one intact frame after anything (with a body when
   * the buffer takes one) */
  static const uint8_t body[] = {0, 1, 0xFF, 0};
  size_t blen = cap - TN_CRT_FRAME_OVERHEAD < sizeof body ? 0 : sizeof body;
  uint8_t out[TN_CRT_FRAME_ENCODED_MAX(sizeof body)];
  size_t n = 0;
  if (tn_crt_frame_encode(TN_CRT_FRAME_RESET, 77, body, blen, out,
                          sizeof out, &n) != TN_CRT_OK)
    abort();
  /* its leading delimiter ends the stream's last frame, which may be one
   * that lacked only its own */
  push_checked(&d, out[0]);
  int ready = 0;
  for (size_t i = 1; i < n; i++)
    if (tn_crt_frame_decoder_push(&d, out[i]) == TN_CRT_FRAME_READY) {
      if (d.type != TN_CRT_FRAME_RESET || d.seq != 77 ||
          d.body_len != blen || memcmp(d.body, body, blen) != 0)
        fail("the frame after the stream decoded to something else");
      ready++;
    }
  if (ready != 1) fail("the decoder did not resynchronise after the stream");
  free(buf);
  /* the same stream to a link: it acknowledges, never misreports */
  uint8_t *rx = malloc(cap), tx[TN_CRT_FRAME_ENCODED_MAX(0)];
  if (rx == NULL) abort();
  TnCrtLink l;
  if (tn_crt_link_init(&l, rx, cap, tx, sizeof tx, check_ack, NULL) !=
      TN_CRT_OK)
    abort();
  for (size_t i = 1; i < size; i++) {
    int32_t e = tn_crt_link_push(&l, data[i]);
    if (e < TN_CRT_LINK_NONE || e > TN_CRT_LINK_RESET)
      fail("an unknown link event");
    if (e == TN_CRT_LINK_ACKED) fail("an ACK taken with nothing outstanding");
  }
  free(rx);
  /* the input itself as a body */
  size_t len = size - 1 < kMaxBody ? size - 1 : kMaxBody;
  round_trip((uint8_t)(1 + data[0] % 5), data[0], data + 1, len);
  return 0;
}
