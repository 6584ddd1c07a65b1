package device

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"tvmnode.dev/go/serve/device/sessionpb"
)

// DeviceError is a request the device answered with an Error: a crt status
// code (TnCrtStatus, tvmnode/crt/status.h) and the device's message.
type DeviceError struct {
	Status  int32
	Message string
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("device: status %d (%s): %s", e.Status, statusName(e.Status), e.Message)
}

// statusName names the crt's codes a session answers with.
func statusName(code int32) string {
	names := map[int32]string{0: "OK", 1: "INVALID_ARGUMENT", 2: "SHAPE_MISMATCH",
		3: "DTYPE_MISMATCH", 4: "UNSUPPORTED", 5: "SCRATCH_TOO_SMALL", 6: "POOL_TOO_SMALL",
		7: "OVERFLOW", 9: "NULL_POINTER", 10: "MODEL_MISMATCH", 11: "NOT_BOUND",
		12: "DEVICE_FAILED"}
	if n, ok := names[code]; ok {
		return n
	}
	return "UNKNOWN"
}

// Session sends the device session's requests (runtime/crt/proto/
// tvmnode_session.proto) over a Link to a device running the crt's session
// (tvmnode/crt/session.h, firmware/common/session_uart.c) and returns its
// answers. One request is under way at a time; calls from several
// goroutines wait for each other.
type Session struct {
	link *Link
	mu   sync.Mutex
	id   uint32
}

// NewSession starts a session over l.
func NewSession(l *Link) *Session { return &Session{link: l} }

// Timing is what a timed inference answers: the outputs, and per repeat
// the device's clock ticks for Number runs.
type Timing struct {
	Outputs             [][]byte
	Ticks               []uint64
	Number              uint32
	TicksPerSecond      uint32
	InstructionsPerTick uint32 // 0 when the device does not know
}

// Seconds is each repeat's time per run, in the device's seconds (on an
// emulated board, its virtual time).
func (t *Timing) Seconds() []float64 {
	s := make([]float64, len(t.Ticks))
	for i, k := range t.Ticks {
		if t.TicksPerSecond > 0 && t.Number > 0 {
			s[i] = float64(k) / float64(t.TicksPerSecond) / float64(t.Number)
		}
	}
	return s
}

// Instructions is each repeat's instruction count per run (0s when the
// device does not count instructions).
func (t *Timing) Instructions() []uint64 {
	s := make([]uint64, len(t.Ticks))
	for i, k := range t.Ticks {
		if t.Number > 0 {
			s[i] = k * uint64(t.InstructionsPerTick) / uint64(t.Number)
		}
	}
	return s
}

// call sends req with the next id and waits for the answer of that id
// (answers of earlier, abandoned requests are skipped).
func (s *Session) call(ctx context.Context, req *sessionpb.Request) (*sessionpb.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id++
	req.Id = s.id
	body, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("device.Session: encoding the request: %w", err)
	}
	f, err := s.link.Call(ctx, body)
	for {
		if err != nil {
			return nil, err
		}
		if f.Type == Response {
			var rs sessionpb.Response
			if err := proto.Unmarshal(f.Body, &rs); err != nil {
				return nil, fmt.Errorf("device.Session: an answer that is not a tvmnode.session.Response: %w", err)
			}
			if rs.Id == req.Id {
				if e := rs.GetError(); e != nil {
					return nil, &DeviceError{Status: e.Status, Message: e.Message}
				}
				return &rs, nil
			}
		}
		f, err = s.link.Receive(ctx)
	}
}

// Metadata describes model (an empty name: the device's first).
func (s *Session) Metadata(ctx context.Context, model string) (*sessionpb.MetadataResponse, error) {
	rs, err := s.call(ctx, &sessionpb.Request{Metadata: &sessionpb.MetadataRequest{Model: model}})
	if err != nil {
		return nil, err
	}
	if rs.Metadata == nil {
		return nil, fmt.Errorf("device.Session.Metadata: the answer has no metadata")
	}
	return rs.Metadata, nil
}

// Infer runs model once on the raw bytes of its inputs (in its order) and
// returns the raw bytes of its outputs.
func (s *Session) Infer(ctx context.Context, model string, inputs [][]byte) ([][]byte, error) {
	t, err := s.Time(ctx, model, inputs, 0, 0)
	if err != nil {
		return nil, err
	}
	return t.Outputs, nil
}

// Time runs model once on inputs, then repeat times number runs (number 0
// is 1), each repeat timed on the device's clock (repeat at most 32).
func (s *Session) Time(ctx context.Context, model string, inputs [][]byte, repeat, number uint32) (*Timing, error) {
	start := time.Now()
	rs, err := s.call(ctx, &sessionpb.Request{Infer: &sessionpb.InferRequest{
		Model: model, Inputs: inputs, Repeat: repeat, Number: number}})
	if err != nil {
		return nil, err
	}
	in := rs.Infer
	if in == nil {
		return nil, fmt.Errorf("device.Session.Time: the answer has no outputs (after %v)", time.Since(start))
	}
	if uint32(len(in.Ticks)) != repeat {
		return nil, fmt.Errorf("device.Session.Time: %d timed repeats answered, expected %d", len(in.Ticks), repeat)
	}
	return &Timing{Outputs: in.Outputs, Ticks: in.Ticks, Number: in.Number,
		TicksPerSecond: in.TicksPerSecond, InstructionsPerTick: in.InstructionsPerTick}, nil
}
