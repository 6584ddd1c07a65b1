package device

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"tvmnode.dev/go/serve/device/internal/crtframe"
)

// Two frames written out by hand (zlib's CRC-32, textbook COBS), the same
// as tests/test_crt_frame.c's.
var (
	ackFrame = []byte{0x00, 0x02, 0x03, 0x05, 0x3c, 0x41, 0xf4, 0x6a, 0x00}
	reqFrame = []byte{0x00, 0x03, 0x01, 0x07, 0x03, 0x68, 0x69, 0x05, 0x60,
		0xe4, 0x45, 0x3a, 0x00}
)

func TestWireFormat(t *testing.T) {
	got, err := AppendFrame(nil, Ack, 0, nil)
	if err != nil || !bytes.Equal(got, ackFrame) {
		t.Fatalf("ACK 0: % x, %v; want % x", got, err, ackFrame)
	}
	got, err = AppendFrame([]byte("x"), Request, 7, []byte{0, 'h', 'i', 0})
	if err != nil || !bytes.Equal(got[1:], reqFrame) || got[0] != 'x' {
		t.Fatalf("REQUEST 7: % x, %v; want x then % x", got, err, reqFrame)
	}
	d := NewDecoder(16)
	var frames []Frame
	for _, b := range append(append([]byte{}, reqFrame...), ackFrame...) {
		if e, f := d.Push(b); e == Ready {
			frames = append(frames, Frame{f.Type, f.Seq, append([]byte{}, f.Body...)})
		}
	}
	if len(frames) != 2 || frames[0].Type != Request || frames[0].Seq != 7 ||
		!bytes.Equal(frames[0].Body, []byte{0, 'h', 'i', 0}) ||
		frames[1].Type != Ack || len(frames[1].Body) != 0 {
		t.Fatalf("decoded %+v", frames)
	}
}

func TestBadType(t *testing.T) {
	for _, ft := range []FrameType{0, 6, 255} {
		_, err := AppendFrame(nil, ft, 0, nil)
		if err == nil || !strings.Contains(err.Error(), "device.AppendFrame: type must be") {
			t.Errorf("type %d: %v", ft, err)
		}
	}
	if Reset.String() != "RESET" || FrameType(9).String() != "UNKNOWN(9)" {
		t.Error("FrameType.String")
	}
}

func body(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	switch r.Intn(3) {
	case 0: // mostly zeros
		for i := range b {
			if r.Intn(4) == 0 {
				b[i] = byte(r.Intn(256))
			}
		}
	case 1: // no zeros: the 254-byte COBS blocks
		for i := range b {
			b[i] = byte(1 + r.Intn(255))
		}
	default:
		r.Read(b)
	}
	return b
}

// The Go encoder writes what the crt's writes, and each decodes the
// other's frames.
func TestEncodingAgreesWithCrt(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	var stream []byte
	var want []crtframe.Frame
	for n := 0; n <= 600; n++ {
		ft, seq, b := uint8(1+r.Intn(5)), uint8(r.Intn(256)), body(r, n)
		g, err := AppendFrame(nil, FrameType(ft), seq, b)
		if err != nil {
			t.Fatal(err)
		}
		c, err := crtframe.Encode(ft, seq, b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, c) {
			t.Fatalf("body of %d: Go and crt encodings differ\n% x\n% x", n, g, c)
		}
		if len(g) > EncodedMax(n) {
			t.Fatalf("body of %d: %d bytes, over EncodedMax %d", n, len(g), EncodedMax(n))
		}
		stream = append(stream, g...)
		want = append(want, crtframe.Frame{Type: ft, Seq: seq, Body: b})
	}
	got, _ := crtframe.Decode(stream, 600)
	if len(got) != len(want) {
		t.Fatalf("the crt decoded %d frames of %d", len(got), len(want))
	}
	d := NewDecoder(600)
	i := 0
	for _, b := range stream {
		if e, f := d.Push(b); e == Ready {
			if i >= len(want) || uint8(f.Type) != want[i].Type || f.Seq != want[i].Seq || !bytes.Equal(f.Body, want[i].Body) {
				t.Fatalf("frame %d: Go decoded %v %d % x", i, f.Type, f.Seq, f.Body)
			}
			i++
		} else if e != Pending {
			t.Fatalf("frame %d: Go decoder: %v", i, e)
		}
	}
	for i := range want {
		if got[i].Type != want[i].Type || got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Body, want[i].Body) {
			t.Fatalf("frame %d: crt decoded %+v", i, got[i])
		}
	}
	if i != len(want) {
		t.Fatalf("the Go decoder delivered %d frames of %d", i, len(want))
	}
}

// Hostile streams (frames cut short, bytes flipped, dropped or repeated,
// noise between frames, frames over the receiver's size): the Go decoder
// reports, byte by byte, what the crt's reports, and delivers the same
// frames.
func TestHostileStreamsAgreeWithCrt(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const maxBody = 300 // past a 254-byte COBS block
	for round := 0; round < 200; round++ {
		var stream []byte
		for f := 0; f < 10; f++ {
			fr, _ := AppendFrame(nil, FrameType(1+r.Intn(5)), uint8(f), body(r, r.Intn(maxBody+20)))
			switch r.Intn(6) {
			case 0:
				fr = fr[:r.Intn(len(fr))]
			case 1:
				fr[r.Intn(len(fr))] ^= byte(1 + r.Intn(255))
			case 2:
				i := r.Intn(len(fr))
				fr = append(fr[:i], fr[i+1:]...)
			case 3:
				i := r.Intn(len(fr))
				fr = append(fr[:i+1], fr[i:]...)
			case 4:
				noise := make([]byte, r.Intn(30))
				r.Read(noise)
				fr = append(noise, fr...)
			}
			stream = append(stream, fr...)
		}
		cf, ce := crtframe.Decode(stream, maxBody)
		d := NewDecoder(maxBody)
		var gf []crtframe.Frame
		for i, b := range stream {
			e, f := d.Push(b)
			if int(e) != ce[i] {
				t.Fatalf("round %d byte %d: Go %v, crt event %d", round, i, e, ce[i])
			}
			if e == Ready {
				gf = append(gf, crtframe.Frame{Type: uint8(f.Type), Seq: f.Seq, Body: append([]byte{}, f.Body...)})
			}
		}
		if len(gf) != len(cf) {
			t.Fatalf("round %d: Go delivered %d frames, crt %d", round, len(gf), len(cf))
		}
		for i := range gf {
			if gf[i].Type != cf[i].Type || gf[i].Seq != cf[i].Seq || !bytes.Equal(gf[i].Body, cf[i].Body) {
				t.Fatalf("round %d frame %d: Go %+v, crt %+v", round, i, gf[i], cf[i])
			}
		}
		if d.Frames != len(gf) {
			t.Fatalf("Frames counter %d, delivered %d", d.Frames, len(gf))
		}
	}
}
