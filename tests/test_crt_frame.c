/*
 * test_crt_frame.c: the crt's frames over a byte stream (tvmnode/crt/
 * frame.h). Two frames written out by hand (from zlib's CRC-32 and a COBS
 * encoder of the textbook form) pin the wire format; bodies of every length
 * around the COBS block size, all zeros, all 0xFF and random, make the round
 * trip; and hostile streams (every truncation of a frame, every byte of a
 * frame replaced by every other value, frames one byte over the receiver's
 * buffer, random garbage between frames) each cost only the damaged frame:
 * no damaged frame is delivered, and the intact frame after it always is.
 * The link (TnCrtLink) joins two ends over wires that lose, cut, flip and
 * pad writes, ACKs included: every frame arrives once and in order within a
 * bounded number of rounds; a repeat is acknowledged and not delivered
 * again; a board that starts again mid-request is heard at once. The suite
 * links the crt alone, as a firmware would.
 */
#include <string.h>

#include <tvmnode/crt/frame.h>

#include "kernel_test.h"

enum { kCap = 600 };

typedef struct {
  uint8_t type, seq;
  size_t len;
  uint8_t body[kCap];
} Frame;

/* Encodes a frame into out; its length. */
static size_t encode(uint8_t type, uint8_t seq, const uint8_t *body,
                     size_t len, uint8_t *out, size_t cap) {
  size_t n = 0;
  EXPECT_ST(tn_crt_frame_encode(type, seq, body, len, out, cap, &n),
            TN_CRT_OK);
  ck_assert_uint_le(n, TN_CRT_FRAME_ENCODED_MAX(len));
  ck_assert_uint_eq(out[0], 0);
  ck_assert_uint_eq(out[n - 1], 0);
  for (size_t i = 1; i + 1 < n; i++) EXPECT(out[i] != 0, "a 0 at %zu", i);
  return n;
}

/* Feeds n bytes; the frames delivered go to got[0 .. max), their count is
 * returned; the other events are counted into events[]. */
static int feed(TnCrtFrameDecoder *d, const uint8_t *p, size_t n, Frame *got,
                int max, int events[6]) {
  int k = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t e = tn_crt_frame_decoder_push(d, p[i]);
    /* checked only when out of range: Check's assertions cost a mark
     * point each, millions of them in the round trip */
    if (e < 0 || e > TN_CRT_FRAME_BAD_TYPE)
      ck_abort_msg("byte %zu: event %d out of range", i, (int)e);
    if (events) events[e]++;
    if (e != TN_CRT_FRAME_READY) continue;
    ck_assert_int_lt(k, max);
    got[k].type = d->type;
    got[k].seq = d->seq;
    got[k].len = d->body_len;
    ck_assert_uint_le(d->body_len, sizeof got[k].body);
    memcpy(got[k].body, d->body, d->body_len);
    k++;
  }
  return k;
}

static void expect_frame(const Frame *f, uint8_t type, uint8_t seq,
                         const uint8_t *body, size_t len) {
  ck_assert_uint_eq(f->type, type);
  ck_assert_uint_eq(f->seq, seq);
  ck_assert_uint_eq(f->len, len);
  ck_assert(len == 0 || memcmp(f->body, body, len) == 0);
}

START_TEST(test_crc32) {
  ck_assert_uint_eq(tn_crt_crc32(0, "123456789", 9), 0xCBF43926u);
  ck_assert_uint_eq(tn_crt_crc32(0, "", 0), 0);
  /* continued over pieces, as the encoder computes it */
  uint32_t c = tn_crt_crc32(tn_crt_crc32(0, "1234", 4), "56789", 5);
  ck_assert_uint_eq(c, 0xCBF43926u);
}
END_TEST

START_TEST(test_wire_format) {
  static const uint8_t ack[] = {0x00, 0x02, 0x03, 0x05, 0x3c,
                                0x41, 0xf4, 0x6a, 0x00};
  static const uint8_t req[] = {0x00, 0x03, 0x01, 0x07, 0x03, 0x68, 0x69,
                                0x05, 0x60, 0xe4, 0x45, 0x3a, 0x00};
  uint8_t out[64];
  size_t n = encode(TN_CRT_FRAME_ACK, 0, NULL, 0, out, sizeof out);
  ck_assert_uint_eq(n, sizeof ack);
  ck_assert(memcmp(out, ack, n) == 0);
  static const uint8_t body[] = {0, 'h', 'i', 0};
  n = encode(TN_CRT_FRAME_REQUEST, 7, body, 4, out, sizeof out);
  ck_assert_uint_eq(n, sizeof req);
  ck_assert(memcmp(out, req, n) == 0);

  uint8_t buf[16];
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  Frame got[2];
  ck_assert_int_eq(feed(&d, req, sizeof req, got, 2, NULL), 1);
  expect_frame(&got[0], TN_CRT_FRAME_REQUEST, 7, body, 4);
  ck_assert_int_eq(feed(&d, ack, sizeof ack, got, 2, NULL), 1);
  expect_frame(&got[0], TN_CRT_FRAME_ACK, 0, NULL, 0);
  ck_assert_uint_eq(d.frames, 2);

  ck_assert_str_eq(tn_crt_frame_type_name(TN_CRT_FRAME_LOG), "LOG");
  ck_assert_str_eq(tn_crt_frame_type_name(TN_CRT_FRAME_RESET), "RESET");
  ck_assert_str_eq(tn_crt_frame_type_name(0), "UNKNOWN");
  ck_assert_str_eq(tn_crt_frame_type_name(6), "UNKNOWN");
}
END_TEST

/* Bodies of every length from 0 to 600 (across the 254-byte COBS blocks,
 * twice), filled with zeros, with 0xFF and at random, as one stream. */
START_TEST(test_round_trip) {
  static uint8_t buf[kCap + TN_CRT_FRAME_OVERHEAD];
  static uint8_t body[kCap], out[TN_CRT_FRAME_ENCODED_MAX(kCap)];
  static Frame got[1];
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  KtRng r = kt_rng(31);
  uint32_t sent = 0;
  for (int fill = 0; fill < 3; fill++) {
    for (size_t len = 0; len <= kCap; len++) {
      for (size_t i = 0; i < len; i++)
        body[i] = fill == 0 ? 0 : fill == 1 ? 0xFF : (uint8_t)kt_next(&r);
      uint8_t type = (uint8_t)(1 + len % 5), seq = (uint8_t)(len * 7 + fill);
      size_t n = encode(type, seq, body, len, out, sizeof out);
      int events[6] = {0};
      ck_assert_int_eq(feed(&d, out, n, got, 1, events), 1);
      ck_assert_int_eq(events[TN_CRT_FRAME_PENDING], (int)n - 1);
      expect_frame(&got[0], type, seq, body, len);
      sent++;
    }
  }
  ck_assert_uint_eq(d.frames, sent);
  ck_assert_uint_eq(d.bad_crc + d.truncated + d.too_long + d.bad_type, 0);
}
END_TEST

START_TEST(test_empty_frames_ignored) {
  uint8_t buf[8], zeros[5] = {0};
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  int events[6] = {0};
  ck_assert_int_eq(feed(&d, zeros, sizeof zeros, NULL, 0, events), 0);
  ck_assert_int_eq(events[TN_CRT_FRAME_PENDING], 5);
  ck_assert_uint_eq(d.frames + d.bad_crc + d.truncated + d.too_long, 0);
}
END_TEST

/* The frame every hostile test sends after its damage, and checks. */
static const uint8_t good_body[] = {1, 0, 2, 0, 0, 3, 0xFF, 0};

static void expect_good_next(TnCrtFrameDecoder *d) {
  uint8_t out[64];
  size_t n = encode(TN_CRT_FRAME_RESPONSE, 42, good_body, sizeof good_body,
                    out, sizeof out);
  Frame got[1];
  ck_assert_int_eq(feed(d, out, n, got, 1, NULL), 1);
  expect_frame(&got[0], TN_CRT_FRAME_RESPONSE, 42, good_body,
               sizeof good_body);
}

/* Every prefix of a frame (its leading delimiter and more), cut off and
 * ended by the next frame's leading delimiter. */
START_TEST(test_every_truncation) {
  uint8_t body[300], out[TN_CRT_FRAME_ENCODED_MAX(300)], buf[320];
  KtRng r = kt_rng(7);
  for (size_t i = 0; i < sizeof body; i++)
    body[i] = (uint8_t)(kt_next(&r) % 4 == 0 ? 0 : kt_next(&r));
  size_t n = encode(TN_CRT_FRAME_REQUEST, 1, body, sizeof body, out,
                    sizeof out);
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  uint32_t damaged = 0;
  for (size_t k = 2; k < n - 1; k++) {
    int events[6] = {0};
    Frame got[1];
    ck_assert_int_eq(feed(&d, out, k, got, 1, events), 0);
    expect_good_next(&d);
    damaged++;
    ck_assert_uint_eq(d.truncated + d.bad_crc, damaged);
  }
  ck_assert_uint_eq(d.frames, damaged);
  ck_assert_uint_eq(d.too_long + d.bad_type, 0);
}
END_TEST

/* Every byte of a frame, its delimiters included, replaced by each of the
 * 255 other values: the damaged frame is never delivered, the next one is. */
START_TEST(test_every_byte_replaced) {
  uint8_t out[64], bad[64], buf[64];
  static const uint8_t body[] = {'l', 'o', 'g', 0, 0xFF, 1, 0, 0};
  size_t n = encode(TN_CRT_FRAME_LOG, 200, body, sizeof body, out,
                    sizeof out);
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  uint32_t cases = 0;
  for (size_t i = 0; i < n; i++) {
    for (int x = 1; x < 256; x++) {
      memcpy(bad, out, n);
      bad[i] ^= (uint8_t)x;
      Frame got[2];
      int k = feed(&d, bad, n, got, 2, NULL);
      /* a damaged leading delimiter joins the frame to the delimiter
       * before it, so the frame is damaged all the same */
      EXPECT(k == 0, "byte %zu ^ 0x%02x delivered a frame", i, x);
      expect_good_next(&d);
      cases++;
    }
  }
  ck_assert_uint_eq(cases, n * 255);
}
END_TEST

/* A receiver of cap bytes takes bodies up to cap - 6 and refuses longer
 * ones at their delimiter, however long they are. */
START_TEST(test_oversized_frames) {
  enum { cap = 40 };
  uint8_t buf[cap], body[1000], out[TN_CRT_FRAME_ENCODED_MAX(1000)];
  memset(body, 0x5A, sizeof body);
  body[3] = 0;
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  size_t lens[] = {cap - 5, cap - 4, cap, 253, 254, 255, 1000};
  for (size_t j = 0; j < sizeof lens / sizeof *lens; j++) {
    size_t n = encode(TN_CRT_FRAME_REQUEST, 3, body, lens[j], out, sizeof out);
    int events[6] = {0};
    Frame got[1];
    ck_assert_int_eq(feed(&d, out, n, got, 1, events), 0);
    ck_assert_int_eq(events[TN_CRT_FRAME_TOO_LONG], 1);
    expect_good_next(&d);
  }
  size_t n = encode(TN_CRT_FRAME_REQUEST, 4, body, cap - 6, out, sizeof out);
  Frame got[1];
  ck_assert_int_eq(feed(&d, out, n, got, 1, NULL), 1);
  expect_frame(&got[0], TN_CRT_FRAME_REQUEST, 4, body, cap - 6);
  ck_assert_uint_eq(d.too_long, 7);
}
END_TEST

/* Random garbage (zeros in it or not, up to 300 bytes) before each of 500
 * frames: all 500 arrive, in order, and nothing else. */
START_TEST(test_garbage_between_frames) {
  static uint8_t stream[500 * (300 + 64)];
  static Frame got[501];
  uint8_t bodies[500][8];
  KtRng r = kt_rng(99);
  size_t at = 0;
  for (int f = 0; f < 500; f++) {
    size_t g = (size_t)kt_int(&r, 0, 300);
    int zeros = f % 2;
    for (size_t i = 0; i < g; i++) {
      uint8_t b = (uint8_t)kt_next(&r);
      stream[at++] = zeros || b != 0 ? b : 1;
    }
    for (int i = 0; i < 8; i++) bodies[f][i] = (uint8_t)kt_next(&r);
    at += encode(TN_CRT_FRAME_REQUEST, (uint8_t)f, bodies[f], 8, stream + at,
                 64);
  }
  uint8_t buf[64];
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  ck_assert_int_eq(feed(&d, stream, at, got, 501, NULL), 500);
  for (int f = 0; f < 500; f++)
    expect_frame(&got[f], TN_CRT_FRAME_REQUEST, (uint8_t)f, bodies[f], 8);
}
END_TEST

/* A frame intact but of an unknown type is refused as such. */
START_TEST(test_unknown_type) {
  uint8_t out[32], buf[32];
  size_t n = encode(TN_CRT_FRAME_ACK, 9, NULL, 0, out, sizeof out);
  /* rewrite type 3 as type 9, with its CRC */
  uint8_t raw[6] = {9, 9};
  uint32_t crc = tn_crt_crc32(0, raw, 2);
  for (int i = 0; i < 4; i++) raw[2 + i] = (uint8_t)(crc >> (8 * i));
  ck_assert_int_eq(n, 9);
  for (int i = 0; i < 6; i++) ck_assert_uint_ne(raw[i], 0);
  out[1] = 7;
  memcpy(out + 2, raw, 6);
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  int events[6] = {0};
  ck_assert_int_eq(feed(&d, out, n, NULL, 0, events), 0);
  ck_assert_int_eq(events[TN_CRT_FRAME_BAD_TYPE], 1);
  ck_assert_uint_eq(d.bad_type, 1);
  expect_good_next(&d);
}
END_TEST

/* A reset mid-frame (a receive timeout) drops the partial frame. */
START_TEST(test_decoder_reset) {
  uint8_t out[64], buf[64];
  size_t n = encode(TN_CRT_FRAME_REQUEST, 5, good_body, sizeof good_body, out,
                    sizeof out);
  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, sizeof buf), TN_CRT_OK);
  ck_assert_int_eq(feed(&d, out, n / 2, NULL, 0, NULL), 0);
  tn_crt_frame_decoder_reset(&d);
  /* the second half alone is garbage up to its delimiter */
  ck_assert_int_eq(feed(&d, out + n / 2, n - n / 2, NULL, 0, NULL), 0);
  ck_assert_uint_eq(d.truncated + d.bad_crc, 1);
  expect_good_next(&d);
  tn_crt_frame_decoder_reset(NULL);
  ck_assert_int_eq(tn_crt_frame_decoder_push(NULL, 1), TN_CRT_FRAME_PENDING);
}
END_TEST

START_TEST(test_bad_calls) {
  uint8_t out[32], buf[32], body[4] = {1, 2, 3, 4};
  size_t n = 123;
  EXPECT_ST(tn_crt_frame_encode(0, 0, body, 4, out, sizeof out, &n),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_frame_encode(6, 0, body, 4, out, sizeof out, &n),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_frame_encode(1, 0, NULL, 4, out, sizeof out, &n),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_frame_encode(1, 0, body, 4, NULL, sizeof out, &n),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_frame_encode(1, 0, body, 4, out, sizeof out, NULL),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_frame_encode(1, 0, body, (size_t)-1, out, sizeof out, &n),
            TN_CRT_OVERFLOW);
  memset(out, 0xEE, sizeof out);
  size_t need = TN_CRT_FRAME_ENCODED_MAX(4);
  EXPECT_ST(tn_crt_frame_encode(1, 0, body, 4, out, need - 1, &n),
            TN_CRT_SCRATCH_TOO_SMALL);
  for (size_t i = 0; i < sizeof out; i++) ck_assert_uint_eq(out[i], 0xEE);
  ck_assert_uint_eq(n, 123);
  EXPECT_ST(tn_crt_frame_encode(1, 0, body, 4, out, need, &n), TN_CRT_OK);

  TnCrtFrameDecoder d;
  EXPECT_ST(tn_crt_frame_decoder_init(NULL, buf, sizeof buf),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_frame_decoder_init(&d, NULL, sizeof buf),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, TN_CRT_FRAME_OVERHEAD - 1),
            TN_CRT_INVALID_ARGUMENT);
  /* the smallest receiver takes empty bodies */
  EXPECT_ST(tn_crt_frame_decoder_init(&d, buf, TN_CRT_FRAME_OVERHEAD),
            TN_CRT_OK);
  n = encode(TN_CRT_FRAME_RESET, 0, NULL, 0, out, sizeof out);
  Frame got[1];
  ck_assert_int_eq(feed(&d, out, n, got, 1, NULL), 1);
  expect_frame(&got[0], TN_CRT_FRAME_RESET, 0, NULL, 0);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* The link                                                                  */
/* ------------------------------------------------------------------------ */

/* One direction of a wire: the bytes written and not yet read, damaged on
 * the way when `faults` says so (one write in `faults` at random). */
typedef struct {
  uint8_t q[1 << 14];
  size_t len;
  KtRng rng;
  int faults, fail_writes;
  uint32_t writes, damaged;
} Wire;

static int32_t wire_write(void *ctx, const uint8_t *p, size_t n) {
  Wire *w = ctx;
  if (w->fail_writes) return -1;
  w->writes++;
  uint8_t tmp[700];
  ck_assert_uint_le(n, sizeof tmp);
  memcpy(tmp, p, n);
  int kind = w->faults ? kt_int(&w->rng, 0, 5 * w->faults - 1) : 99;
  size_t at = n > 0 ? (size_t)kt_int(&w->rng, 0, (int32_t)n - 1) : 0;
  if (kind < 5) w->damaged++;
  switch (kind) {
    case 0: return 0; /* lost */
    case 1: tmp[at] ^= (uint8_t)kt_int(&w->rng, 1, 255); break;
    case 2: n = at; break; /* cut short */
    case 3: /* noise before it, zeros in it */
      for (int i = kt_int(&w->rng, 1, 20); i > 0; i--)
        w->q[w->len++] = (uint8_t)kt_int(&w->rng, 0, 3);
      break;
    case 4: /* a byte lost inside it */
      memmove(tmp + at, tmp + at + 1, n - at - 1);
      n--;
      break;
  }
  ck_assert_uint_le(w->len + n, sizeof w->q);
  memcpy(w->q + w->len, tmp, n);
  w->len += n;
  return 0;
}

typedef struct {
  TnCrtLink link;
  uint8_t rx[64], tx[TN_CRT_FRAME_ENCODED_MAX(58)];
  Wire out; /* what this end writes */
  int sent, received, acked, resets;
  uint8_t got[400][8];
  uint8_t got_type[400];
} End;

static void end_init(End *e, uint64_t seed, int faults) {
  memset(&e->out, 0, sizeof e->out);
  e->out.rng = kt_rng(seed);
  e->out.faults = faults;
  EXPECT_ST(tn_crt_link_init(&e->link, e->rx, sizeof e->rx, e->tx,
                             sizeof e->tx, wire_write, &e->out),
            TN_CRT_OK);
  e->sent = e->received = e->acked = e->resets = 0;
}

/* Delivers what `from` wrote to `to`. */
static void deliver(End *from, End *to) {
  Wire *w = &from->out;
  size_t n = w->len;
  uint8_t bytes[sizeof w->q];
  memcpy(bytes, w->q, n);
  w->len = 0;
  for (size_t i = 0; i < n; i++) {
    switch (tn_crt_link_push(&to->link, bytes[i])) {
      case TN_CRT_LINK_FRAME:
        ck_assert_int_lt(to->received, 400);
        ck_assert_uint_eq(to->link.rx.body_len, 8);
        memcpy(to->got[to->received], to->link.rx.body, 8);
        to->got_type[to->received++] = to->link.rx.type;
        break;
      case TN_CRT_LINK_ACKED: to->acked++; break;
      case TN_CRT_LINK_RESET: to->resets++; break;
      default: break;
    }
  }
}

static void message(uint8_t *body, int side, int i) {
  for (int k = 0; k < 8; k++) body[k] = (uint8_t)(side * 97 + i * 13 + k * k);
  body[i % 8] = 0;
}

/* Both ends send `count` frames at once over wires that damage one write
 * in `faults`; a frame unacknowledged after a round is sent again. Every
 * frame arrives once, in order, within a bounded number of rounds. */
static void run_lossy(int count, int faults, uint64_t seed) {
  static End a, b;
  end_init(&a, seed, faults);
  end_init(&b, seed + 1, faults);
  int rounds = 0;
  while (a.acked < count || b.acked < count) {
    ck_assert_int_lt(rounds++, count * 40);
    End *ends[2] = {&a, &b};
    for (int s = 0; s < 2; s++) {
      End *e = ends[s];
      if (e->link.waiting) {
        EXPECT_ST(tn_crt_link_resend(&e->link), TN_CRT_OK);
      } else if (e->sent < count) {
        uint8_t body[8];
        message(body, s, e->sent);
        uint8_t type = s == 0 ? TN_CRT_FRAME_REQUEST : TN_CRT_FRAME_LOG;
        EXPECT_ST(tn_crt_link_send(&e->link, type, body, 8), TN_CRT_OK);
        e->sent++;
      }
    }
    while (a.out.len > 0 || b.out.len > 0) { /* ACKs of this round too */
      deliver(&a, &b);
      deliver(&b, &a);
    }
  }
  End *ends[2] = {&a, &b};
  for (int s = 0; s < 2; s++) {
    End *rx = ends[1 - s];
    ck_assert_int_eq(rx->received, count);
    for (int i = 0; i < count; i++) {
      uint8_t body[8];
      message(body, s, i);
      EXPECT(memcmp(rx->got[i], body, 8) == 0, "side %d frame %d", s, i);
      ck_assert_uint_eq(rx->got_type[i], s == 0 ? TN_CRT_FRAME_REQUEST
                                                : TN_CRT_FRAME_LOG);
    }
    ck_assert_int_eq(rx->resets, 0);
  }
  if (faults) {
    ck_assert_uint_gt(a.out.damaged + b.out.damaged, count / faults / 2);
    ck_assert_uint_gt(a.link.resent + b.link.resent, 0);
  } else {
    ck_assert_uint_eq(a.link.resent + b.link.resent, 0);
  }
}

START_TEST(test_link_clean_wire) { run_lossy(300, 0, 1); }
END_TEST

/* Lost, cut, flipped and noisy writes, ACKs included: 300 frames each way
 * (past the 256 sequence numbers), with one write in three damaged, then
 * with every write damaged (only the frames behind noise get through). */
START_TEST(test_link_lossy_wire) {
  run_lossy(300, 3, 2);
  run_lossy(300, 1, 3);
}
END_TEST

/* A frame received twice (its ACK lost) is delivered once and acknowledged
 * twice; an ACK of another seq is stale. */
START_TEST(test_link_repeats) {
  static End a, b;
  end_init(&a, 5, 0);
  end_init(&b, 6, 0);
  uint8_t body[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_ST(tn_crt_link_send(&a.link, TN_CRT_FRAME_REQUEST, body, 8),
            TN_CRT_OK);
  EXPECT_ST(tn_crt_link_resend(&a.link), TN_CRT_OK);
  deliver(&a, &b);
  ck_assert_int_eq(b.received, 1);
  ck_assert_uint_eq(b.link.duplicates, 1);
  ck_assert_uint_eq(b.out.writes, 2);
  deliver(&b, &a);
  ck_assert_int_eq(a.acked, 1);
  ck_assert_uint_eq(a.link.stale_acks, 1);
  ck_assert_int_eq(a.link.waiting, 0);
  /* nothing outstanding: resend writes nothing */
  uint32_t writes = a.out.writes;
  EXPECT_ST(tn_crt_link_resend(&a.link), TN_CRT_OK);
  ck_assert_uint_eq(a.out.writes, writes);
}
END_TEST

/* A board that starts again mid-request sends a RESET: the host drops the
 * request under way (its RESET event), and the next request goes through
 * whatever seq either end had reached. */
START_TEST(test_link_board_reset) {
  static End host, board;
  end_init(&host, 7, 0);
  end_init(&board, 8, 0);
  uint8_t body[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  /* the board says hello; a few requests and answers */
  EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESET, NULL, 0),
            TN_CRT_OK);
  deliver(&board, &host);
  ck_assert_int_eq(host.resets, 1);
  deliver(&host, &board);
  ck_assert_int_eq(board.acked, 1);
  for (int i = 0; i < 3; i++) {
    body[0] = (uint8_t)i;
    EXPECT_ST(tn_crt_link_send(&host.link, TN_CRT_FRAME_REQUEST, body, 8),
              TN_CRT_OK);
    deliver(&host, &board);
    deliver(&board, &host);
    EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESPONSE, body, 8),
              TN_CRT_OK);
    deliver(&board, &host);
    deliver(&host, &board);
  }
  ck_assert_int_eq(host.received, 3);
  ck_assert_int_eq(board.received, 3);
  /* a request reaches the board, which starts again before answering */
  EXPECT_ST(tn_crt_link_send(&host.link, TN_CRT_FRAME_REQUEST, body, 8),
            TN_CRT_OK);
  deliver(&host, &board);
  ck_assert_int_eq(board.received, 4);
  board.out.len = 0; /* its ACK is lost in the restart */
  end_init(&board, 9, 0);
  EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESET, NULL, 0),
            TN_CRT_OK);
  deliver(&board, &host);
  ck_assert_int_eq(host.resets, 2);
  ck_assert_int_eq(host.link.waiting, 0);
  deliver(&host, &board);
  ck_assert_int_eq(board.acked, 1);
  /* a fresh request and its answer */
  body[0] = 42;
  EXPECT_ST(tn_crt_link_send(&host.link, TN_CRT_FRAME_REQUEST, body, 8),
            TN_CRT_OK);
  deliver(&host, &board);
  ck_assert_int_eq(board.received, 1);
  ck_assert_uint_eq(board.got[0][0], 42);
  deliver(&board, &host);
  ck_assert_int_eq(host.link.waiting, 0);
  EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESPONSE, body, 8),
            TN_CRT_OK);
  deliver(&board, &host);
  ck_assert_int_eq(host.received, 4);
  ck_assert_uint_eq(host.got[3][0], 42);
  /* a RESET right after a RESET is heard too */
  EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESET, NULL, 0),
            TN_CRT_OK);
  deliver(&board, &host);
  EXPECT_ST(tn_crt_link_send(&board.link, TN_CRT_FRAME_RESET, NULL, 0),
            TN_CRT_OK);
  deliver(&board, &host);
  ck_assert_int_eq(host.resets, 4);
}
END_TEST

START_TEST(test_link_bad_calls) {
  static End a;
  end_init(&a, 10, 0);
  uint8_t body[60] = {0}, small[8];
  TnCrtLink l;
  EXPECT_ST(tn_crt_link_init(NULL, a.rx, 64, a.tx, 64, wire_write, &a.out),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_link_init(&l, NULL, 64, a.tx, 64, wire_write, &a.out),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_link_init(&l, a.rx, 64, NULL, 64, wire_write, &a.out),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_link_init(&l, a.rx, 64, a.tx, 64, NULL, &a.out),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_link_init(&l, a.rx, 64, small, sizeof small, wire_write,
                             &a.out),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_link_init(&l, a.rx, 5, a.tx, 64, wire_write, &a.out),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_link_send(NULL, TN_CRT_FRAME_REQUEST, body, 8),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_link_resend(NULL), TN_CRT_NULL_POINTER);
  ck_assert_int_eq(tn_crt_link_push(NULL, 0), TN_CRT_LINK_NONE);
  EXPECT_ST(tn_crt_link_send(&a.link, TN_CRT_FRAME_ACK, body, 0),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_link_send(&a.link, 9, body, 0), TN_CRT_INVALID_ARGUMENT);
  /* a body too long for the transmit buffer */
  EXPECT_ST(tn_crt_link_send(&a.link, TN_CRT_FRAME_REQUEST, body, 59),
            TN_CRT_SCRATCH_TOO_SMALL);
  ck_assert_int_eq(a.link.waiting, 0);
  /* a failing transport: the frame stays outstanding, then goes through */
  a.out.fail_writes = 1;
  EXPECT_ST(tn_crt_link_send(&a.link, TN_CRT_FRAME_REQUEST, body, 58),
            TN_CRT_WRITE_FAILED);
  ck_assert_int_eq(a.link.waiting, 1);
  EXPECT_ST(tn_crt_link_resend(&a.link), TN_CRT_WRITE_FAILED);
  EXPECT_ST(tn_crt_link_send(&a.link, TN_CRT_FRAME_LOG, body, 1),
            TN_CRT_BUSY);
  a.out.fail_writes = 0;
  EXPECT_ST(tn_crt_link_resend(&a.link), TN_CRT_OK);
  ck_assert_uint_eq(a.out.writes, 1);
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_BUSY), "BUSY");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_WRITE_FAILED), "WRITE_FAILED");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("crt_frame");
  TCase *tc = tcase_create("crt_frame");
  tcase_add_test(tc, test_crc32);
  tcase_add_test(tc, test_wire_format);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_empty_frames_ignored);
  tcase_add_test(tc, test_every_truncation);
  tcase_add_test(tc, test_every_byte_replaced);
  tcase_add_test(tc, test_oversized_frames);
  tcase_add_test(tc, test_garbage_between_frames);
  tcase_add_test(tc, test_unknown_type);
  tcase_add_test(tc, test_decoder_reset);
  tcase_add_test(tc, test_bad_calls);
  tcase_add_test(tc, test_link_clean_wire);
  tcase_add_test(tc, test_link_lossy_wire);
  tcase_add_test(tc, test_link_repeats);
  tcase_add_test(tc, test_link_board_reset);
  tcase_add_test(tc, test_link_bad_calls);
  suite_add_tcase(s, tc);
  return s;
}

KT_MAIN(make_suite)
