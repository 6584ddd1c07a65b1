// Package crtframe calls runtime/crt's frame encoder and decoder
// (tvmnode/crt/frame.h, in libtvmnode), so that the tests of package
// device can check the Go frames against the device's own, byte for byte.
package crtframe

/*
#cgo pkg-config: tvmnode
#include <stdlib.h>
#include <tvmnode/crt/frame.h>
#include <string.h>

typedef struct {
  TnCrtLink link;
  uint8_t rx[1100], tx[1200];
  uint8_t out[1 << 16];
  size_t len;
} CrtBoard;

static int32_t crt_board_write(void *ctx, const uint8_t *p, size_t n) {
  CrtBoard *b = ctx;
  if (b->len + n > sizeof b->out) return 1;
  memcpy(b->out + b->len, p, n);
  b->len += n;
  return 0;
}

static CrtBoard *crt_board_new(void) {
  CrtBoard *b = calloc(1, sizeof *b);
  if (b != NULL &&
      tn_crt_link_init(&b->link, b->rx, sizeof b->rx, b->tx, sizeof b->tx,
                       crt_board_write, b) != TN_CRT_OK) {
    free(b);
    return NULL;
  }
  return b;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Encode is tn_crt_frame_encode.
func Encode(t uint8, seq uint8, body []byte) ([]byte, error) {
	out := make([]byte, 2+len(body)+6+(len(body)+6)/254+1)
	var b unsafe.Pointer
	if len(body) > 0 {
		b = C.CBytes(body)
		defer C.free(b)
	}
	o := C.malloc(C.size_t(len(out)))
	defer C.free(o)
	var n C.size_t
	st := C.tn_crt_frame_encode(C.uint8_t(t), C.uint8_t(seq), b, C.size_t(len(body)),
		(*C.uint8_t)(o), C.size_t(len(out)), &n)
	if st != C.TN_CRT_OK {
		return nil, fmt.Errorf("tn_crt_frame_encode: %s", C.GoString(C.tn_crt_status_name(st)))
	}
	return C.GoBytes(o, C.int(n)), nil
}

// Frame is a frame the crt's decoder delivered.
type Frame struct {
	Type, Seq uint8
	Body      []byte
}

// Decode feeds stream to a fresh tn_crt_frame_decoder of capacity
// maxBody+6; the frames it delivers, and its events (one per byte).
func Decode(stream []byte, maxBody int) ([]Frame, []int) {
	buf := C.malloc(C.size_t(maxBody + 6))
	defer C.free(buf)
	d := (*C.TnCrtFrameDecoder)(C.malloc(C.size_t(unsafe.Sizeof(C.TnCrtFrameDecoder{}))))
	defer C.free(unsafe.Pointer(d))
	if C.tn_crt_frame_decoder_init(d, (*C.uint8_t)(buf), C.size_t(maxBody+6)) != C.TN_CRT_OK {
		panic("tn_crt_frame_decoder_init")
	}
	var frames []Frame
	events := make([]int, len(stream))
	for i, b := range stream {
		e := C.tn_crt_frame_decoder_push(d, C.uint8_t(b))
		events[i] = int(e)
		if e == C.TN_CRT_FRAME_READY {
			frames = append(frames, Frame{uint8(d._type), uint8(d.seq),
				C.GoBytes(unsafe.Pointer(d.body), C.int(d.body_len))})
		}
	}
	return frames, events
}

// Board is one end of a session on the crt's link (TnCrtLink), as a board
// runs it; what it writes collects until Take.
type Board struct{ b *C.CrtBoard }

// NewBoard starts a board's link (receiving bodies of up to 1094 bytes).
func NewBoard() *Board {
	b := C.crt_board_new()
	if b == nil {
		panic("crt_board_new")
	}
	return &Board{b}
}

// Free releases the board.
func (b *Board) Free() { C.free(unsafe.Pointer(b.b)) }

// Push is tn_crt_link_push over p: the frames delivered (FRAME), and the
// counts of ACKED and RESET events.
func (b *Board) Push(p []byte) (frames []Frame, acked, resets int) {
	for _, c := range p {
		switch C.tn_crt_link_push(&b.b.link, C.uint8_t(c)) {
		case C.TN_CRT_LINK_FRAME:
			rx := &b.b.link.rx
			frames = append(frames, Frame{uint8(rx._type), uint8(rx.seq),
				C.GoBytes(unsafe.Pointer(rx.body), C.int(rx.body_len))})
		case C.TN_CRT_LINK_ACKED:
			acked++
		case C.TN_CRT_LINK_RESET:
			resets++
		}
	}
	return
}

// Send is tn_crt_link_send; the status's name.
func (b *Board) Send(t uint8, body []byte) string {
	var p unsafe.Pointer
	if len(body) > 0 {
		p = C.CBytes(body)
		defer C.free(p)
	}
	return C.GoString(C.tn_crt_status_name(C.tn_crt_link_send(&b.b.link, C.uint8_t(t), p, C.size_t(len(body)))))
}

// Resend is tn_crt_link_resend.
func (b *Board) Resend() { C.tn_crt_link_resend(&b.b.link) }

// Waiting says whether a frame the board sent waits for its ACK.
func (b *Board) Waiting() bool { return b.b.link.waiting != 0 }

// Take returns what the board wrote since the last Take.
func (b *Board) Take() []byte {
	out := C.GoBytes(unsafe.Pointer(&b.b.out[0]), C.int(b.b.len))
	b.b.len = 0
	return out
}
