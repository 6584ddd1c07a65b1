/*
 * tvmnode/crt/frame.h: frames over a byte stream (a UART), for device
 * sessions.
 *
 * A frame on the wire is
 *
 *     0x00  COBS( type | seq | body... | crc32 )  0x00
 *
 * - type (1 byte): REQUEST, RESPONSE, ACK, LOG or RESET (TnCrtFrameType);
 * - seq (1 byte): the sender's sequence number of the frame, modulo 256;
 *   an ACK carries the seq of the frame it acknowledges;
 * - body: 0 to (the receiver's buffer - 6) bytes;
 * - crc32: CRC-32 (IEEE 802.3, the zlib and Go hash/crc32 one) of type, seq
 *   and body, little-endian.
 *
 * COBS (consistent overhead byte stuffing) removes every 0 byte from the
 * frame, at a cost of one byte per 254, so 0 only ever delimits frames. A
 * receiver that lost or mangled a byte therefore loses only the frame it was
 * in: at the next 0 it starts afresh. A delimiter before the frame as well
 * as after it ends whatever garbage preceded it (line noise, a boot banner);
 * empty frames (two delimiters in a row) are ignored.
 *
 * Acknowledgement (TnCrtLink below, one end of a session):
 * every frame but an ACK is acknowledged by an ACK of its seq; a sender
 * sends one frame at a time and sends it again when no ACK comes within its
 * timeout; a receiver acknowledges a repeat of the last seq it accepted
 * again but does not deliver it twice. A RESET (sent by a board when it
 * starts, or by the host to start over) is sent with seq 0 and both ends
 * start over: the sender numbers its next frames from 1, the receiver's
 * own numbering starts at 0, each end takes the other's next frame whatever
 * its seq, and whatever request was under way ends. A RESET is never taken
 * for a repeat (a board that starts again must be heard), so one sent again
 * after a lost ACK costs at most the request under way, with an error;
 * messages carry their request's id so that a late answer is recognised.
 *
 * Nothing here allocates: the decoder writes into a buffer the application
 * supplies, and the encoder into the application's output buffer. Like all
 * of the crt, this header needs only <stdint.h> and <stddef.h>.
 */
#ifndef TVMNODE_CRT_FRAME_H_
#define TVMNODE_CRT_FRAME_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/crc32.h" /* tn_crt_crc32, the frames' checksum */
#include "tvmnode/crt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TN_CRT_FRAME_REQUEST = 1,  /* host -> device: a request message */
  TN_CRT_FRAME_RESPONSE = 2, /* device -> host: its answer */
  TN_CRT_FRAME_ACK = 3,      /* either way: seq received intact */
  TN_CRT_FRAME_LOG = 4,      /* device -> host: one log line (UTF-8) */
  TN_CRT_FRAME_RESET = 5     /* either way: sequence numbers start over */
} TnCrtFrameType;

/* type, seq and the CRC around a body */
#define TN_CRT_FRAME_OVERHEAD 6u

/* The most bytes tn_crt_frame_encode writes for a body of `body_len` bytes:
 * both delimiters and the COBS overhead included. */
#define TN_CRT_FRAME_ENCODED_MAX(body_len)                          \
  (2u + ((size_t)(body_len) + TN_CRT_FRAME_OVERHEAD) +             \
   ((size_t)(body_len) + TN_CRT_FRAME_OVERHEAD) / 254u + 1u)

/* The name of a frame type ("REQUEST"), or "UNKNOWN". */
const char *tn_crt_frame_type_name(int32_t type);

/* Encodes one frame into out[0 .. cap) and stores its length in *out_len.
 * INVALID_ARGUMENT for a type not in TnCrtFrameType, NULL_POINTER for a NULL
 * out, out_len, or body with body_len > 0, SCRATCH_TOO_SMALL when cap is
 * under TN_CRT_FRAME_ENCODED_MAX(body_len) (nothing is written then), OK
 * otherwise. */
int32_t tn_crt_frame_encode(uint8_t type, uint8_t seq, const void *body,
                            size_t body_len, uint8_t *out, size_t cap,
                            size_t *out_len);

/* What tn_crt_frame_decoder_push reports for a byte. */
typedef enum {
  TN_CRT_FRAME_PENDING = 0,   /* inside a frame, or between frames */
  TN_CRT_FRAME_READY = 1,     /* a frame was received intact: read it from
                                 the decoder before the next push */
  TN_CRT_FRAME_BAD_CRC = 2,   /* a frame ended whose CRC does not match */
  TN_CRT_FRAME_TRUNCATED = 3, /* a frame ended inside a COBS block, or
                                 shorter than type, seq and CRC */
  TN_CRT_FRAME_TOO_LONG = 4,  /* a frame ended that did not fit the buffer */
  TN_CRT_FRAME_BAD_TYPE = 5   /* an intact frame of an unknown type */
} TnCrtFrameEvent;

/* A streaming decoder. Its fields are read-only to the application: after
 * READY, `type`, `seq`, `body` and `body_len` describe the frame (`body`
 * points into the buffer, valid until the next push). The counters count
 * every event but PENDING since init. */
typedef struct {
  uint8_t *buf;
  size_t cap;
  size_t len;        /* decoded bytes of the current frame */
  uint8_t left;      /* bytes left in the current COBS block */
  uint8_t last_code; /* the current block's code byte; 0 before the first */
  uint8_t overflow;  /* the current frame did not fit */
  uint8_t type;
  uint8_t seq;
  const uint8_t *body;
  size_t body_len;
  uint32_t frames, bad_crc, truncated, too_long, bad_type;
} TnCrtFrameDecoder;

/* A decoder writing into buf[0 .. cap): frames with a body of up to
 * cap - TN_CRT_FRAME_OVERHEAD bytes are received. INVALID_ARGUMENT for a cap
 * under TN_CRT_FRAME_OVERHEAD, NULL_POINTER for a NULL d or buf. */
int32_t tn_crt_frame_decoder_init(TnCrtFrameDecoder *d, uint8_t *buf,
                                  size_t cap);

/* Forgets a partly received frame; the next byte starts a new one (a
 * receive timeout calls this). The counters are kept. */
void tn_crt_frame_decoder_reset(TnCrtFrameDecoder *d);

/* Feeds one received byte; returns a TnCrtFrameEvent. Every event but
 * PENDING comes at a delimiter, after which the decoder waits for the next
 * frame, so any byte sequence is accepted and a damaged frame costs only
 * itself. */
int32_t tn_crt_frame_decoder_push(TnCrtFrameDecoder *d, uint8_t byte);

/* ------------------------------------------------------------------------ */
/* The link: frames acknowledged one at a time                               */
/* ------------------------------------------------------------------------ */

/* Writes n bytes to the transport (a UART); 0 on success. */
typedef int32_t (*TnCrtLinkWrite)(void *ctx, const uint8_t *p, size_t n);

/* One end of a session: a decoder for what arrives, and the one frame sent
 * and not yet acknowledged, kept encoded in the application's buffer to be
 * sent again. Fields are read-only to the application. */
typedef struct {
  TnCrtFrameDecoder rx;
  TnCrtLinkWrite write;
  void *ctx;
  uint8_t *tx;
  size_t tx_cap, tx_len;
  uint8_t tx_seq;      /* the seq of the frame outstanding, or the next */
  uint8_t waiting;     /* a frame is outstanding */
  uint8_t rx_last;     /* the seq of the last frame accepted */
  uint8_t rx_any;      /* a frame was accepted since the last RESET */
  uint32_t resent, duplicates, stale_acks, resets;
} TnCrtLink;

/* What tn_crt_link_push reports. */
typedef enum {
  TN_CRT_LINK_NONE = 0,   /* nothing for the application */
  TN_CRT_LINK_FRAME = 1,  /* a new REQUEST, RESPONSE or LOG: its type and
                             body are in the link's decoder (rx.type,
                             rx.body, rx.body_len) until the next push */
  TN_CRT_LINK_ACKED = 2,  /* the outstanding frame was acknowledged */
  TN_CRT_LINK_RESET = 3   /* the peer started over: the frame outstanding
                             is dropped, numbering is back at 0, and the
                             RESET's body is in the decoder as for FRAME */
} TnCrtLinkEvent;

/* A link receiving into rx_buf[0 .. rx_cap) and encoding into
 * tx_buf[0 .. tx_cap) (a body of n bytes needs
 * TN_CRT_FRAME_ENCODED_MAX(n)), writing through write(ctx, ...). */
int32_t tn_crt_link_init(TnCrtLink *l, uint8_t *rx_buf, size_t rx_cap,
                         uint8_t *tx_buf, size_t tx_cap, TnCrtLinkWrite write,
                         void *ctx);

/* Sends a frame (not an ACK): BUSY while an earlier one waits for its ACK,
 * the encoder's statuses, WRITE_FAILED when write fails (the frame then
 * stays outstanding, to be sent again). A RESET puts this end's numbering
 * back to 0 first and drops an outstanding frame. */
int32_t tn_crt_link_send(TnCrtLink *l, uint8_t type, const void *body,
                         size_t len);

/* Sends the outstanding frame again (the application calls this when its
 * ACK has not come in time); OK with nothing to do when none is
 * outstanding. */
int32_t tn_crt_link_resend(TnCrtLink *l);

/* Feeds one received byte; returns a TnCrtLinkEvent. Frames other than
 * ACKs are acknowledged here, through write (a failed write of an ACK is
 * a lost ACK: the peer sends its frame again); a repeat of the last frame
 * accepted is acknowledged again and not reported; an ACK of anything but
 * the frame outstanding is counted as stale and ignored. */
int32_t tn_crt_link_push(TnCrtLink *l, uint8_t byte);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_FRAME_H_ */
