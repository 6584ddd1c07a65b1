package device

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A compiled model behind the emulated board's UART, through Session: the
// metadata describes it, an inference's outputs are the host's, a timed one
// answers `repeat` counts, requests the device refuses come back as
// DeviceErrors, and a request with a flipped or a dropped byte is sent
// again and answered. Run by the Python test above (it needs a model
// compiled); skipped without TVMNODE_SESSION_CASE.
func TestQemuModelSession(t *testing.T) {
	c, err := ReadSessionCase()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Skip("TVMNODE_SESSION_CASE not set (python/tests/test_firmware_device.py sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := startQemu(t, ctx, c.ELF, filepath.Join(t.TempDir(), "uart.sock"))
	wire := &faulty{Conn: conn}
	logs := make(chan string, 8)
	l := NewLink(wire, 4096, func(s string) { logs <- s })
	// the pace go/serve keeps for a socket, which loses no byte: qemu
	// feeds the board a 500-byte request slowly on a loaded host, and
	// copies sent every 200 ms queue up in front of it
	l.Resend = time.Second
	defer l.Close()
	select {
	case s := <-logs:
		if s != "session: "+c.Model+" ready" {
			t.Fatalf("log line %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no log line from the board")
	}
	s := NewSession(l)
	call := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		t.Cleanup(cancel)
		return c
	}

	md, err := s.Metadata(call(), "")
	if err != nil {
		t.Fatal(err)
	}
	if md.Model != c.Model || len(md.Inputs) != len(c.Inputs) || len(md.Outputs) != len(c.Outputs) {
		t.Fatalf("metadata %v", md)
	}
	for i, in := range md.Inputs {
		if int(in.Nbytes) != len(c.Inputs[i]) {
			t.Fatalf("input %s: %d bytes, the case has %d", in.Name, in.Nbytes, len(c.Inputs[i]))
		}
	}
	if md.InstructionsPerTick == 0 || md.TicksPerSecond == 0 || md.Macs <= 0 {
		t.Fatalf("metadata %v: no clock or MACs", md)
	}

	check := func(what string, got [][]byte) {
		t.Helper()
		if len(got) != len(c.Outputs) {
			t.Fatalf("%s: %d outputs, want %d", what, len(got), len(c.Outputs))
		}
		for i := range got {
			if !bytes.Equal(got[i], c.Outputs[i]) {
				t.Fatalf("%s: output %d is %v, the host's %v", what, i, got[i], c.Outputs[i])
			}
		}
	}
	start := time.Now()
	out, err := s.Infer(call(), c.Model, c.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	check("infer", out)
	t.Logf("one inference over the emulated UART: %v round trip", time.Since(start))

	tm, err := s.Time(call(), c.Model, c.Inputs, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	check("timed infer", tm.Outputs)
	if len(tm.Ticks) != 3 || tm.Number != 2 {
		t.Fatalf("timing: %d repeats of %d", len(tm.Ticks), tm.Number)
	}
	for i, n := range tm.Instructions() {
		if n == 0 || tm.Seconds()[i] <= 0 {
			t.Fatalf("timing: repeat %d counted nothing (%v)", i, tm.Ticks)
		}
	}
	t.Logf("instructions per run, 3 repeats of 2 runs: %v (device seconds %v)", tm.Instructions(), tm.Seconds())

	var de *DeviceError
	short := [][]byte{c.Inputs[0][:len(c.Inputs[0])-1]}
	if _, err := s.Infer(call(), c.Model, short); !errors.As(err, &de) || de.Status != 2 {
		t.Fatalf("an input a byte short: %v, want SHAPE_MISMATCH", err)
	}
	t.Logf("a short input: %v", de)
	if _, err := s.Infer(call(), "no_such_model", c.Inputs); !errors.As(err, &de) || de.Status != 1 {
		t.Fatalf("an unknown model: %v, want INVALID_ARGUMENT", err)
	}

	for name, fault := range map[string]func([]byte) []byte{
		"flipped": func(b []byte) []byte { b[len(b)/2] ^= 0x41; return b },
		"dropped": func(b []byte) []byte { return append(b[:len(b)/3], b[len(b)/3+1:]...) },
	} {
		n := wire.once(fault)
		out, err := s.Infer(call(), c.Model, c.Inputs)
		wire.set(nil)
		if err != nil {
			t.Fatalf("a request with a %s byte: %v", name, err)
		}
		if *n != 1 {
			t.Fatalf("%s: the fault hit %d writes", name, *n)
		}
		check(name+" byte", out)
	}
}
