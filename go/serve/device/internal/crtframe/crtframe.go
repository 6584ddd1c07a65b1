// Package crtframe calls runtime/crt's frame encoder and decoder
// (tvmnode/crt/frame.h, in libtvmnode), so that the tests of package
// device can check the Go frames against the device's own, byte for byte.
package crtframe

/*
#cgo pkg-config: tvmnode
#include <stdlib.h>
#include <tvmnode/crt/frame.h>
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
