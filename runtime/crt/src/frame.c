/*
 * frame.c: COBS frames with a type, a sequence number and a CRC-32 (see
 * tvmnode/crt/frame.h for the format). The encoder stuffs type, seq, body
 * and CRC straight into the output, without a copy of the raw frame; the
 * decoder unstuffs one byte at a time into the application's buffer and
 * judges a frame only at its delimiter.
 */
#include "tvmnode/crt/frame.h"

static int valid_type(uint32_t type) {
  return type >= TN_CRT_FRAME_REQUEST && type <= TN_CRT_FRAME_RESET;
}

const char *tn_crt_frame_type_name(int32_t type) {
  switch (type) {
    case TN_CRT_FRAME_REQUEST: return "REQUEST";
    case TN_CRT_FRAME_RESPONSE: return "RESPONSE";
    case TN_CRT_FRAME_ACK: return "ACK";
    case TN_CRT_FRAME_LOG: return "LOG";
    case TN_CRT_FRAME_RESET: return "RESET";
    default: return "UNKNOWN";
  }
}

/* The COBS encoder's state: where the current block's code byte goes and
 * what it will be. */
typedef struct {
  uint8_t *out;
  size_t code_at, len;
  uint8_t code;
} Stuffer;

static void stuff(Stuffer *s, uint8_t b) {
  if (b != 0) {
    s->out[s->len++] = b;
    if (++s->code != 0xFF) return;
  }
  s->out[s->code_at] = s->code;
  s->code_at = s->len++;
  s->code = 1;
}

int32_t tn_crt_frame_encode(uint8_t type, uint8_t seq, const void *body,
                            size_t body_len, uint8_t *out, size_t cap,
                            size_t *out_len) {
  if (out == NULL || out_len == NULL || (body == NULL && body_len > 0))
    return TN_CRT_NULL_POINTER;
  if (!valid_type(type)) return TN_CRT_INVALID_ARGUMENT;
  if (body_len > (size_t)-1 / 2) return TN_CRT_OVERFLOW;
  if (cap < TN_CRT_FRAME_ENCODED_MAX(body_len)) return TN_CRT_SCRATCH_TOO_SMALL;
  const uint8_t *b = body;
  uint8_t head[2] = {type, seq};
  uint32_t crc = tn_crt_crc32(tn_crt_crc32(0, head, 2), b, body_len);
  Stuffer s = {out, 1, 2, 1};
  out[0] = 0;
  stuff(&s, type);
  stuff(&s, seq);
  for (size_t i = 0; i < body_len; i++) stuff(&s, b[i]);
  for (int i = 0; i < 4; i++) stuff(&s, (uint8_t)(crc >> (8 * i)));
  out[s.code_at] = s.code;
  out[s.len++] = 0;
  *out_len = s.len;
  return TN_CRT_OK;
}

int32_t tn_crt_frame_decoder_init(TnCrtFrameDecoder *d, uint8_t *buf,
                                  size_t cap) {
  if (d == NULL || buf == NULL) return TN_CRT_NULL_POINTER;
  if (cap < TN_CRT_FRAME_OVERHEAD) return TN_CRT_INVALID_ARGUMENT;
  *d = (TnCrtFrameDecoder){0};
  d->buf = buf;
  d->cap = cap;
  return TN_CRT_OK;
}

void tn_crt_frame_decoder_reset(TnCrtFrameDecoder *d) {
  if (d == NULL) return;
  d->len = 0;
  d->left = 0;
  d->last_code = 0;
  d->overflow = 0;
}

static void put(TnCrtFrameDecoder *d, uint8_t b) {
  if (d->len < d->cap)
    d->buf[d->len++] = b;
  else
    d->overflow = 1;
}

/* The event for the frame a delimiter ends. */
static int32_t finish(TnCrtFrameDecoder *d) {
  if (d->overflow) {
    d->too_long++;
    return TN_CRT_FRAME_TOO_LONG;
  }
  if (d->last_code == 0) return TN_CRT_FRAME_PENDING; /* an empty frame */
  if (d->left != 0 || d->len < TN_CRT_FRAME_OVERHEAD) {
    d->truncated++;
    return TN_CRT_FRAME_TRUNCATED;
  }
  size_t n = d->len - 4;
  const uint8_t *c = d->buf + n;
  uint32_t want = (uint32_t)c[0] | (uint32_t)c[1] << 8 |
                  (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
  if (tn_crt_crc32(0, d->buf, n) != want) {
    d->bad_crc++;
    return TN_CRT_FRAME_BAD_CRC;
  }
  if (!valid_type(d->buf[0])) {
    d->bad_type++;
    return TN_CRT_FRAME_BAD_TYPE;
  }
  d->type = d->buf[0];
  d->seq = d->buf[1];
  d->body = d->buf + 2;
  d->body_len = n - 2;
  d->frames++;
  return TN_CRT_FRAME_READY;
}

int32_t tn_crt_frame_decoder_push(TnCrtFrameDecoder *d, uint8_t byte) {
  if (d == NULL) return TN_CRT_FRAME_PENDING;
  if (byte == 0) {
    int32_t event = finish(d);
    tn_crt_frame_decoder_reset(d);
    return event;
  }
  if (d->overflow) return TN_CRT_FRAME_PENDING; /* skip to the delimiter */
  if (d->left == 0) { /* a code byte: a block of byte - 1 data bytes */
    if (d->last_code != 0 && d->last_code != 0xFF) put(d, 0);
    d->last_code = byte;
    d->left = (uint8_t)(byte - 1);
  } else {
    put(d, byte);
    d->left--;
  }
  return TN_CRT_FRAME_PENDING;
}

/* ------------------------------------------------------------------------ */
/* The link                                                                  */
/* ------------------------------------------------------------------------ */

int32_t tn_crt_link_init(TnCrtLink *l, uint8_t *rx_buf, size_t rx_cap,
                         uint8_t *tx_buf, size_t tx_cap, TnCrtLinkWrite write,
                         void *ctx) {
  if (l == NULL || tx_buf == NULL || write == NULL) return TN_CRT_NULL_POINTER;
  if (tx_cap < TN_CRT_FRAME_ENCODED_MAX(0)) return TN_CRT_INVALID_ARGUMENT;
  *l = (TnCrtLink){0};
  int32_t st = tn_crt_frame_decoder_init(&l->rx, rx_buf, rx_cap);
  if (st != TN_CRT_OK) return st;
  l->write = write;
  l->ctx = ctx;
  l->tx = tx_buf;
  l->tx_cap = tx_cap;
  return TN_CRT_OK;
}

int32_t tn_crt_link_send(TnCrtLink *l, uint8_t type, const void *body,
                         size_t len) {
  if (l == NULL) return TN_CRT_NULL_POINTER;
  if (type == TN_CRT_FRAME_ACK || !valid_type(type))
    return TN_CRT_INVALID_ARGUMENT;
  if (type == TN_CRT_FRAME_RESET) {
    l->tx_seq = 0;
    l->waiting = 0;
    l->rx_any = 0;
  } else if (l->waiting) {
    return TN_CRT_BUSY;
  }
  size_t n = 0;
  int32_t st =
      tn_crt_frame_encode(type, l->tx_seq, body, len, l->tx, l->tx_cap, &n);
  if (st != TN_CRT_OK) return st;
  l->tx_len = n;
  l->waiting = 1;
  return l->write(l->ctx, l->tx, n) == 0 ? TN_CRT_OK : TN_CRT_WRITE_FAILED;
}

int32_t tn_crt_link_resend(TnCrtLink *l) {
  if (l == NULL) return TN_CRT_NULL_POINTER;
  if (!l->waiting) return TN_CRT_OK;
  l->resent++;
  return l->write(l->ctx, l->tx, l->tx_len) == 0 ? TN_CRT_OK
                                                 : TN_CRT_WRITE_FAILED;
}

static void send_ack(TnCrtLink *l, uint8_t seq) {
  uint8_t out[TN_CRT_FRAME_ENCODED_MAX(0)];
  size_t n = 0;
  if (tn_crt_frame_encode(TN_CRT_FRAME_ACK, seq, NULL, 0, out, sizeof out,
                          &n) == TN_CRT_OK)
    (void)l->write(l->ctx, out, n); /* a lost ACK is a resent frame */
}

int32_t tn_crt_link_push(TnCrtLink *l, uint8_t byte) {
  if (l == NULL) return TN_CRT_LINK_NONE;
  if (tn_crt_frame_decoder_push(&l->rx, byte) != TN_CRT_FRAME_READY)
    return TN_CRT_LINK_NONE;
  uint8_t seq = l->rx.seq;
  if (l->rx.type == TN_CRT_FRAME_ACK) {
    if (l->waiting && seq == l->tx_seq) {
      l->waiting = 0;
      l->tx_seq = (uint8_t)(l->tx_seq + 1u); /* modulo 256 */
      return TN_CRT_LINK_ACKED;
    }
    l->stale_acks++;
    return TN_CRT_LINK_NONE;
  }
  send_ack(l, seq);
  if (l->rx.type == TN_CRT_FRAME_RESET) {
    /* never taken for a repeat: a board that starts again sends a RESET
     * of seq 0 whatever came before, and must be heard */
    l->rx_any = 0;
    l->tx_seq = 0;
    l->waiting = 0;
    l->resets++;
    return TN_CRT_LINK_RESET;
  }
  if (l->rx_any && seq == l->rx_last) {
    l->duplicates++;
    return TN_CRT_LINK_NONE;
  }
  l->rx_last = seq;
  l->rx_any = 1;
  return TN_CRT_LINK_FRAME;
}
