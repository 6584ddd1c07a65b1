package device

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"tvmnode.dev/go/serve/device/internal/crtframe"
)

// pipe is the host's side of a serial line to a board: what the host
// writes goes through fault (when set) to the board.
type pipe struct {
	toBoard, fromBoard chan []byte
	closed             chan struct{}
	once               sync.Once
	mu                 sync.Mutex
	fault              func([]byte) []byte
	pending            []byte
}

func newPipe() *pipe {
	return &pipe{toBoard: make(chan []byte, 256), fromBoard: make(chan []byte, 256), closed: make(chan struct{})}
}

func (p *pipe) setFault(f func([]byte) []byte) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

func (p *pipe) Write(b []byte) (int, error) {
	c := append([]byte(nil), b...)
	p.mu.Lock()
	if p.fault != nil {
		c = p.fault(c)
	}
	p.mu.Unlock()
	select {
	case p.toBoard <- c:
		return len(b), nil
	case <-p.closed:
		return 0, io.ErrClosedPipe
	}
}

func (p *pipe) Read(b []byte) (int, error) {
	if len(p.pending) == 0 {
		select {
		case c := <-p.fromBoard:
			p.pending = c
		case <-p.closed:
			return 0, io.EOF
		}
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	return n, nil
}

func (p *pipe) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// board runs the crt's link (through cgo) as a board would: each REQUEST
// is answered with a RESPONSE of its body reversed, LOG lines are sent
// when asked, an unacknowledged frame is sent again every 10 ms, and
// reboot starts a fresh link that sends a RESET.
type board struct {
	p       *pipe
	reboot  chan struct{}
	logs    chan string
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	answers bool // answer requests (false: a board that hangs in the model)
	got     [][]byte
}

func startBoard(p *pipe) *board {
	b := &board{p: p, reboot: make(chan struct{}), logs: make(chan string, 4), stop: make(chan struct{}), answers: true}
	b.wg.Add(1)
	go b.run()
	return b
}

func (b *board) halt() {
	close(b.stop)
	b.wg.Wait()
}

func (b *board) requests() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.got...)
}

func (b *board) run() {
	defer b.wg.Done()
	c := crtframe.NewBoard()
	defer func() { c.Free() }()
	var queue []crtframe.Frame
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case chunk := <-b.p.toBoard:
			frames, _, _ := c.Push(chunk)
			for _, f := range frames {
				b.mu.Lock()
				b.got = append(b.got, f.Body)
				answers := b.answers
				b.mu.Unlock()
				if answers {
					r := make([]byte, len(f.Body))
					for i, x := range f.Body {
						r[len(r)-1-i] = x
					}
					queue = append(queue, crtframe.Frame{Type: uint8(Response), Body: r})
				}
			}
		case line := <-b.logs:
			queue = append(queue, crtframe.Frame{Type: uint8(Log), Body: []byte(line)})
		case <-b.reboot:
			c.Free()
			c = crtframe.NewBoard()
			queue = nil
			c.Send(uint8(Reset), nil)
		case <-tick.C:
			c.Resend()
		case <-b.stop:
			return
		}
		if !c.Waiting() && len(queue) > 0 {
			c.Send(queue[0].Type, queue[0].Body)
			queue = queue[1:]
		}
		if out := c.Take(); len(out) > 0 {
			select {
			case b.p.fromBoard <- out:
			case <-b.stop:
				return
			}
		}
	}
}

func setup(t *testing.T, onLog func(string)) (*Link, *pipe, *board) {
	t.Helper()
	p := newPipe()
	b := startBoard(p)
	l := NewLink(p, 1024, onLog)
	l.Resend, l.Tries = 20*time.Millisecond, 10
	t.Cleanup(func() {
		b.halt()
		_ = l.Close()
	})
	return l, p, b
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func exchange(t *testing.T, l *Link, body []byte) error {
	t.Helper()
	f, err := l.Call(ctx(t), body)
	if err != nil {
		return err
	}
	for i, x := range body {
		if f.Body[len(body)-1-i] != x || f.Type != Response {
			t.Fatalf("answer %v % x to % x", f.Type, f.Body, body)
		}
	}
	return nil
}

// 300 requests (past the 256 sequence numbers) and their answers, and
// the board's log lines on the way.
func TestLinkWithCrtBoard(t *testing.T) {
	var logs []string
	var mu sync.Mutex
	l, _, b := setup(t, func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() })
	for i := 0; i < 300; i++ {
		if i%100 == 0 {
			b.logs <- "request " + string(rune('0'+i/100))
		}
		if err := exchange(t, l, []byte{byte(i), 0, byte(i >> 8), 7}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if n := len(b.requests()); n != 300 {
		t.Fatalf("the board took %d requests of 300", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(logs, ",") != "request 0,request 1,request 2" {
		t.Fatalf("log lines %q", logs)
	}
}

// A request whose frame is damaged on the way (bytes flipped, cut short,
// lost) is sent again; the board takes it once.
func TestLinkDamagedFrames(t *testing.T) {
	faults := map[string]func([]byte) []byte{
		"flipped":   func(c []byte) []byte { c[len(c)/2] ^= 0x5A; c[len(c)/2+1] ^= 0x01; return c },
		"truncated": func(c []byte) []byte { return c[:len(c)-3] },
		"lost":      func(c []byte) []byte { return nil },
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			l, p, b := setup(t, nil)
			if err := exchange(t, l, []byte("before")); err != nil {
				t.Fatal(err)
			}
			n := 0
			p.setFault(func(c []byte) []byte {
				if len(c) > 12 && n < 2 { // the request, twice; not ACKs
					n++
					return fault(c)
				}
				return c
			})
			start := time.Now()
			if err := exchange(t, l, []byte("damaged on the way")); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
			got := b.requests()
			if len(got) != 2 || string(got[1]) != "damaged on the way" {
				t.Fatalf("the board took %q", got)
			}
			if err := exchange(t, l, []byte("after")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The host's ACKs of the board's answers are lost: the board sends each
// answer again, and the host takes it once (the next call gets its own
// answer, not the repeat).
func TestLinkLostAcks(t *testing.T) {
	l, p, _ := setup(t, nil)
	n := 0
	p.setFault(func(c []byte) []byte {
		if len(c) <= EncodedMax(0) && n < 3 { // an ACK
			n++
			return nil
		}
		return c
	})
	for i := 0; i < 5; i++ {
		if err := exchange(t, l, []byte{byte(i), 1, 2, 3}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n != 3 || l.Dropped != 0 || len(l.frames) != 0 {
		t.Fatalf("%d ACKs lost, %d dropped, %d frames left", n, l.Dropped, len(l.frames))
	}
}

// A board that starts again mid-request: the request ends with ErrReset at
// once, and the next one is answered.
func TestLinkBoardReset(t *testing.T) {
	l, _, b := setup(t, nil)
	if err := exchange(t, l, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.answers = false // in the middle of the model...
	b.mu.Unlock()
	go func() {
		time.Sleep(50 * time.Millisecond)
		b.mu.Lock()
		b.answers = true
		b.mu.Unlock()
		b.reboot <- struct{}{} // ...it starts again
	}()
	start := time.Now()
	_, err := l.Call(ctx(t), []byte{4, 5, 6})
	if !errors.Is(err, ErrReset) || time.Since(start) > time.Second {
		t.Fatalf("Call: %v after %v, want ErrReset", err, time.Since(start))
	}
	if got := b.requests(); len(got) != 2 {
		t.Fatalf("the board took %d requests, want 2", len(got))
	}
	for i := 0; i < 3; i++ {
		if err := exchange(t, l, []byte{7, 8, byte(i)}); err != nil {
			t.Fatalf("after the reset: %v", err)
		}
	}
}

// A board that never answers: Send gives up after Tries sends, saying so.
func TestLinkNoAck(t *testing.T) {
	p := newPipe()
	l := NewLink(p, 64, nil)
	l.Resend, l.Tries = 10*time.Millisecond, 3
	defer l.Close()
	start := time.Now()
	err := l.Send(ctx(t), Request, []byte("anyone?"))
	if err == nil || !strings.Contains(err.Error(), "no ACK of REQUEST seq 0 after 3 sends") {
		t.Fatalf("Send: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	if len(p.toBoard) != 3 {
		t.Fatalf("%d sends", len(p.toBoard))
	}
	if err := l.Send(ctx(t), Ack, nil); err == nil || !strings.Contains(err.Error(), "device.Link.Send") {
		t.Fatalf("Send(Ack): %v", err)
	}
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Send(c, Request, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send, cancelled: %v", err)
	}
}
