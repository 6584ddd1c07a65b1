// Package device is the host's end of a device session: the frames of
// runtime/crt's tvmnode/crt/frame.h, byte for byte, so that tvmnode-serve
// can talk to a board (or the emulated one) over a UART.
//
// A frame on the wire is
//
//	0x00  COBS( type | seq | body... | crc32 )  0x00
//
// with the CRC-32 (IEEE, hash/crc32) of type, seq and body, little-endian.
// COBS removes every 0 from the frame, so 0 only ever delimits frames and a
// damaged frame costs only itself. docs/remote.md describes the format and
// its acknowledgement.
package device

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// FrameType is a frame's first byte.
type FrameType uint8

// The frame types, as TnCrtFrameType numbers them.
const (
	Request  FrameType = 1 // host to device: a request message
	Response FrameType = 2 // device to host: its answer
	Ack      FrameType = 3 // either way: seq received intact
	Log      FrameType = 4 // device to host: one log line
	Reset    FrameType = 5 // either way: sequence numbers start over
)

// Overhead is the bytes a frame adds to its body before COBS: type, seq and
// the CRC.
const Overhead = 6

func (t FrameType) String() string {
	switch t {
	case Request:
		return "REQUEST"
	case Response:
		return "RESPONSE"
	case Ack:
		return "ACK"
	case Log:
		return "LOG"
	case Reset:
		return "RESET"
	}
	return fmt.Sprintf("UNKNOWN(%d)", uint8(t))
}

func (t FrameType) valid() bool { return t >= Request && t <= Reset }

// EncodedMax is the most bytes AppendFrame adds for a body of n bytes, as
// TN_CRT_FRAME_ENCODED_MAX.
func EncodedMax(n int) int { return 2 + (n + Overhead) + (n+Overhead)/254 + 1 }

// AppendFrame appends the frame (t, seq, body), both delimiters included,
// to dst.
func AppendFrame(dst []byte, t FrameType, seq uint8, body []byte) ([]byte, error) {
	if !t.valid() {
		return dst, fmt.Errorf("device.AppendFrame: type must be 1 (REQUEST) to 5 (RESET), got %d", uint8(t))
	}
	raw := make([]byte, 0, len(body)+Overhead)
	raw = append(raw, byte(t), seq)
	raw = append(raw, body...)
	raw = binary.LittleEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	dst = append(dst, 0)
	codeAt := len(dst)
	dst = append(dst, 0)
	code := byte(1)
	for _, b := range raw {
		if b != 0 {
			dst = append(dst, b)
			code++
			if code != 0xFF {
				continue
			}
		}
		dst[codeAt] = code
		codeAt = len(dst)
		dst = append(dst, 0)
		code = 1
	}
	dst[codeAt] = code
	return append(dst, 0), nil
}

// Event is what Decoder.Push reports for a byte, as TnCrtFrameEvent.
type Event int

// The events; every one but Pending comes at a delimiter.
const (
	Pending   Event = 0 // inside a frame, or between frames
	Ready     Event = 1 // a frame was received intact
	BadCRC    Event = 2 // a frame ended whose CRC does not match
	Truncated Event = 3 // a frame ended inside a COBS block, or too short
	TooLong   Event = 4 // a frame ended that did not fit the decoder
	BadType   Event = 5 // an intact frame of an unknown type
)

func (e Event) String() string {
	switch e {
	case Pending:
		return "pending"
	case Ready:
		return "ready"
	case BadCRC:
		return "bad CRC"
	case Truncated:
		return "truncated"
	case TooLong:
		return "too long"
	case BadType:
		return "unknown type"
	}
	return fmt.Sprintf("event(%d)", int(e))
}

// Frame is a frame received intact.
type Frame struct {
	Type FrameType
	Seq  uint8
	Body []byte // the decoder's: valid until the next Push
}

// Decoder receives frames one byte at a time, as TnCrtFrameDecoder does.
type Decoder struct {
	buf            []byte
	left, lastCode byte
	overflow       bool
	// Counts of the events other than Pending since NewDecoder.
	Frames, BadCRCs, Truncations, TooLongs, BadTypes int
}

// NewDecoder returns a decoder that takes bodies of up to maxBody bytes.
func NewDecoder(maxBody int) *Decoder {
	if maxBody < 0 {
		maxBody = 0
	}
	return &Decoder{buf: make([]byte, 0, maxBody+Overhead)}
}

// Reset forgets a partly received frame.
func (d *Decoder) Reset() {
	d.buf = d.buf[:0]
	d.left, d.lastCode, d.overflow = 0, 0, false
}

func (d *Decoder) put(b byte) {
	if len(d.buf) < cap(d.buf) {
		d.buf = append(d.buf, b)
	} else {
		d.overflow = true
	}
}

// Push feeds one received byte; on Ready, f is the frame.
func (d *Decoder) Push(b byte) (e Event, f Frame) {
	if b != 0 {
		switch {
		case d.overflow:
		case d.left == 0:
			if d.lastCode != 0 && d.lastCode != 0xFF {
				d.put(0)
			}
			d.lastCode, d.left = b, b-1
		default:
			d.put(b)
			d.left--
		}
		return Pending, Frame{}
	}
	defer d.Reset()
	switch {
	case d.overflow:
		d.TooLongs++
		return TooLong, Frame{}
	case d.lastCode == 0:
		return Pending, Frame{}
	case d.left != 0 || len(d.buf) < Overhead:
		d.Truncations++
		return Truncated, Frame{}
	}
	n := len(d.buf) - 4
	if crc32.ChecksumIEEE(d.buf[:n]) != binary.LittleEndian.Uint32(d.buf[n:]) {
		d.BadCRCs++
		return BadCRC, Frame{}
	}
	t := FrameType(d.buf[0])
	if !t.valid() {
		d.BadTypes++
		return BadType, Frame{}
	}
	d.Frames++
	return Ready, Frame{Type: t, Seq: d.buf[1], Body: d.buf[2:n:n]}
}
