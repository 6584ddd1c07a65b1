package device

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrReset is what a call waiting on the device returns when the device
// started over (it sent a RESET): the request under way is lost.
var ErrReset = errors.New("device: the device started over (RESET) during the request")

// Link is the host's end of a session over a byte stream, acknowledging as
// runtime/crt's TnCrtLink does: one frame outstanding, sent again every
// Resend until its ACK comes, at most Tries times; every frame received but
// an ACK is acknowledged, a repeat is not delivered twice, and a RESET from
// the device starts both ends over. LOG frames go to OnLog. Close ends it.
type Link struct {
	Resend  time.Duration // between sends of an unacknowledged frame
	Tries   int           // sends of a frame before giving up
	onLog   func(line string)
	rw      io.ReadWriteCloser
	wmu     sync.Mutex // writes: frames and ACKs
	mu      sync.Mutex // the fields below
	txSeq   uint8
	waitFor int // the seq waited for, or -1
	acked   chan struct{}
	rxAny   bool
	rxLast  uint8
	frames  chan Frame    // REQUEST and RESPONSE frames received
	resetCh chan struct{} // closed (and replaced) at each RESET received
	// Resets counts the RESETs received; Dropped the frames received while
	// 16 were already waiting for Receive.
	Resets, Dropped int
	done            chan struct{}
	err             error // why reading stopped
}

// NewLink starts a link over rw that receives bodies of up to maxBody
// bytes and hands the device's log lines to onLog (which may be nil). Set
// Resend and Tries before the first call.
func NewLink(rw io.ReadWriteCloser, maxBody int, onLog func(line string)) *Link {
	l := &Link{Resend: 200 * time.Millisecond, Tries: 10, rw: rw, waitFor: -1, onLog: onLog,
		frames: make(chan Frame, 16), resetCh: make(chan struct{}), done: make(chan struct{})}
	go l.read(NewDecoder(maxBody))
	return l
}

// Close closes the stream and waits for the reader to stop.
func (l *Link) Close() error {
	err := l.rw.Close()
	<-l.done
	return err
}

func (l *Link) write(p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.rw.Write(p)
	return err
}

func (l *Link) read(d *Decoder) {
	defer close(l.done)
	buf := make([]byte, 4096)
	for {
		n, err := l.rw.Read(buf)
		for _, b := range buf[:n] {
			if e, f := d.Push(b); e == Ready {
				l.handle(f)
			}
		}
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
	}
}

func (l *Link) handle(f Frame) {
	if f.Type == Ack {
		l.mu.Lock()
		if l.waitFor == int(f.Seq) {
			l.waitFor = -1
			l.txSeq++
			close(l.acked)
		}
		l.mu.Unlock()
		return
	}
	ack, _ := AppendFrame(nil, Ack, f.Seq, nil)
	_ = l.write(ack) // a lost ACK is a frame sent again
	l.mu.Lock()
	if f.Type == Reset {
		l.rxAny, l.txSeq, l.waitFor = false, 0, -1
		l.Resets++
		close(l.resetCh)
		l.resetCh = make(chan struct{})
		l.mu.Unlock()
		return
	}
	dup := l.rxAny && f.Seq == l.rxLast
	l.rxAny, l.rxLast = true, f.Seq
	l.mu.Unlock()
	if dup {
		return
	}
	if f.Type == Log {
		if l.onLog != nil {
			l.onLog(string(f.Body))
		}
		return
	}
	select {
	case l.frames <- Frame{f.Type, f.Seq, append([]byte(nil), f.Body...)}:
	default:
		l.mu.Lock()
		l.Dropped++
		l.mu.Unlock()
	}
}

// Send sends one frame and waits for its ACK; ErrReset if the device
// starts over meanwhile (for a RESET, the device's RESET is as good as an
// ACK), an error naming the frame if no ACK comes after
// Tries sends, ctx's error when it ends first.
func (l *Link) Send(ctx context.Context, t FrameType, body []byte) error {
	return l.send(ctx, t, body, l.resetChan())
}

func (l *Link) resetChan() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resetCh
}

// Call sends a REQUEST and waits for the next REQUEST or RESPONSE frame
// from the device; ErrReset if the device starts over at any point after
// the call began.
func (l *Link) Call(ctx context.Context, body []byte) (Frame, error) {
	reset := l.resetChan()
	if err := l.send(ctx, Request, body, reset); err != nil {
		return Frame{}, err
	}
	return l.receive(ctx, reset)
}

func (l *Link) send(ctx context.Context, t FrameType, body []byte, reset chan struct{}) error {
	if t == Ack {
		return fmt.Errorf("device.Link.Send: type must not be ACK (ACKs are the link's)")
	}
	l.mu.Lock()
	if t == Reset {
		l.txSeq, l.rxAny = 0, false
	}
	seq := l.txSeq
	frame, err := AppendFrame(nil, t, seq, body)
	if err != nil {
		l.mu.Unlock()
		return err
	}
	l.waitFor = int(seq)
	acked := make(chan struct{})
	l.acked = acked
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.acked == acked && l.waitFor == int(seq) {
			l.waitFor = -1
		}
		l.mu.Unlock()
	}()
	tick := time.NewTicker(l.Resend)
	defer tick.Stop()
	for try := 1; ; try++ {
		if err := l.write(frame); err != nil {
			return fmt.Errorf("device: writing %v seq %d: %w", t, seq, err)
		}
		select {
		case <-acked:
			return nil
		case <-reset:
			if t == Reset { // both ends started over
				return nil
			}
			return ErrReset
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return fmt.Errorf("device: the stream ended waiting for the ACK of %v seq %d: %v", t, seq, l.readErr())
		case <-tick.C:
			if try >= l.Tries {
				return fmt.Errorf("device: no ACK of %v seq %d after %d sends %v apart", t, seq, try, l.Resend)
			}
		}
	}
}

func (l *Link) readErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Receive waits for the next REQUEST or RESPONSE frame; ErrReset if the
// device starts over first.
func (l *Link) Receive(ctx context.Context) (Frame, error) {
	return l.receive(ctx, l.resetChan())
}

func (l *Link) receive(ctx context.Context, reset chan struct{}) (Frame, error) {
	select {
	case f := <-l.frames:
		return f, nil
	case <-reset:
		return Frame{}, ErrReset
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	case <-l.done:
		return Frame{}, fmt.Errorf("device: the stream ended: %v", l.readErr())
	}
}
