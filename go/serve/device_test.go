package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"tvmnode.dev/go/serve/device"
	"tvmnode.dev/go/serve/device/sessionpb"
	pb "tvmnode.dev/go/serve/inference"
)

// fakeDevice answers the crt session's requests as a board would, over
// the crt's link, for one model "inc": x (int8 [1, 4]) plus one; an input
// starting with 127 fails its run (OVERFLOW); a repeat takes 40 ticks a
// run of a 1000-tick-a-second clock, 25 instructions a tick. It serves one
// connection on sock.
func fakeDevice(t *testing.T, sock string) { fakeBoard(t, sock, fake{}) }

// fake varies fakeDevice: n, the elements of x and y (0: 4); with held
// set, a run of an input starting with 100 sends on held, then waits for
// release to close.
type fake struct {
	n       int
	held    chan<- struct{}
	release <-chan struct{}
}

func fakeBoard(t *testing.T, sock string, fk fake) {
	t.Helper()
	if fk.n == 0 {
		fk.n = 4
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		l := device.NewLink(conn, 4096, nil)
		defer l.Close()
		ctx := context.Background()
		for {
			f, err := l.Receive(ctx)
			if errors.Is(err, device.ErrReset) { // the host started over
				continue
			}
			if err != nil {
				return
			}
			var rq sessionpb.Request
			rs := &sessionpb.Response{}
			if err := proto.Unmarshal(f.Body, &rq); err != nil {
				rs.Error = &sessionpb.Error{Status: 1, Message: err.Error()}
			}
			rs.Id = rq.Id
			info := func(name string) *sessionpb.TensorInfo {
				return &sessionpb.TensorInfo{Name: name, Dtype: 2, Shape: []int32{1, int32(fk.n)},
					Nbytes: uint32(fk.n), Scale: 0.5}
			}
			switch in := rq.Infer; {
			case rs.Error != nil:
			case rq.Metadata != nil && rq.Metadata.Model != "inc":
				rs.Error = &sessionpb.Error{Status: 1, Message: "metadata: no model \"" + rq.Metadata.Model + "\""}
			case rq.Metadata != nil:
				rs.Metadata = &sessionpb.MetadataResponse{Model: "inc", Inputs: []*sessionpb.TensorInfo{info("x")},
					Outputs: []*sessionpb.TensorInfo{info("y")}, Macs: 4, TicksPerSecond: 1000}
			case len(in.Inputs) != 1 || len(in.Inputs[0]) != fk.n:
				rs.Error = &sessionpb.Error{Status: 2, Message: "infer: input 0 (x): wrong size"}
			case in.Inputs[0][0] == 127:
				rs.Error = &sessionpb.Error{Status: 7, Message: "infer: the model's run returned OVERFLOW"}
			default:
				if in.Inputs[0][0] == 100 && fk.held != nil {
					fk.held <- struct{}{}
					<-fk.release
				}
				y := make([]byte, fk.n)
				for i, v := range in.Inputs[0] {
					y[i] = v + 1
				}
				number := max(in.Number, 1)
				rs.Infer = &sessionpb.InferResponse{Outputs: [][]byte{y}, TicksPerSecond: 1000,
					InstructionsPerTick: 25}
				for range in.Repeat {
					rs.Infer.Ticks = append(rs.Infer.Ticks, 40*uint64(number))
				}
				if in.Repeat > 0 {
					rs.Infer.Number = number
				}
			}
			body, _ := proto.Marshal(rs)
			if err := l.Send(ctx, device.Response, body); err != nil {
				return
			}
		}
	}()
}

// Several devices of one NAME are that model's pool of boards: two
// requests run at once, one on each, and a third waits in the queue until
// a board is free; devices that describe other tensors are refused, naming
// both.
func TestDevicesOfOneModel(t *testing.T) {
	dir := t.TempDir()
	held, release := make(chan struct{}, 3), make(chan struct{})
	socks := []string{filepath.Join(dir, "uart0.sock"), filepath.Join(dir, "uart1.sock")}
	for _, sock := range socks {
		fakeBoard(t, sock, fake{held: held, release: release})
	}
	s, err := New(Config{Devices: []string{"inc=" + socks[0], "inc=" + socks[1]}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if got := s.Models(); len(got) != 1 || got[0] != "inc" || len(s.models["inc"].devs) != 2 {
		t.Fatalf("models %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 3)
	for k := range 3 {
		go func() {
			x := []byte{100, byte(k), 0, 0}
			res, err := s.Infer(ctx, &Request{Model: "inc", Inputs: []Input{{Name: "x", Datatype: "INT8",
				Shape: []int64{1, 4}, Data: x}}})
			if err == nil && string(res.Outputs[0].Data) != string([]byte{101, byte(k + 1), 1, 1}) {
				err = fmt.Errorf("request %d: outputs %v", k, res.Outputs[0].Data)
			}
			errs <- err
		}()
	}
	for range 2 { // both boards hold a request
		select {
		case <-held:
		case <-ctx.Done():
			t.Fatal("the two boards never held a request each")
		}
	}
	select {
	case <-held:
		t.Fatal("a third request ran with both boards busy")
	case <-time.After(50 * time.Millisecond):
	}
	if q := metricValue(s.metrics.queue.WithLabelValues("inc")); q != 1 {
		t.Fatalf("%v requests waiting, want the third", q)
	}
	close(release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	_, err = New(Config{Devices: []string{"inc=" + socks[0], "inc=" + socks[0] + "/."}})
	if err == nil || !strings.Contains(err.Error(), "is given twice") {
		t.Fatalf("one port twice: %v", err)
	}

	other := filepath.Join(dir, "uart2.sock")
	fakeBoard(t, other, fake{n: 6})
	fakeBoard(t, filepath.Join(dir, "uart3.sock"), fake{})
	_, err = New(Config{Devices: []string{"inc=" + filepath.Join(dir, "uart3.sock"), "inc=" + other}})
	if err == nil || !strings.Contains(err.Error(), "the devices of one model must serve the same model") ||
		!strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), "x INT8 [1 6]") {
		t.Fatalf("mismatched devices: %v", err)
	}
}

// A model on a device (Config.Devices) is served like a Module: described
// from the device's metadata, its inference and timing run there (the
// device's own clock), requests checked before they go, and the device's
// refusals turned into gRPC statuses.
func TestDeviceModel(t *testing.T) {
	dir := t.TempDir()
	fakeDevice(t, filepath.Join(dir, "uart.sock"))
	s, err := New(Config{Devices: []string{"inc=" + filepath.Join(dir, "uart.sock")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if got := s.Models(); len(got) != 1 || got[0] != "inc" {
		t.Fatalf("models %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := func(x []byte) *Request {
		return &Request{Model: "inc", Inputs: []Input{{Name: "x", Datatype: "INT8", Shape: []int64{1, 4}, Data: x}}}
	}
	res, err := s.Infer(ctx, req([]byte{1, 2, 0xff, 0x80}))
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Outputs; len(o) != 1 || o[0].Name != "y" || o[0].Datatype != "INT8" ||
		string(o[0].Data) != string([]byte{2, 3, 0, 0x81}) {
		t.Fatalf("outputs %+v", o)
	}
	r := req([]byte{0, 0, 0, 0})
	r.Repeat, r.Number = 3, 2
	if res, err = s.Infer(ctx, r); err != nil {
		t.Fatal(err)
	}
	if res.Number != 2 || len(res.RepeatSeconds) != 3 || res.RepeatSeconds[2] != 0.04 ||
		len(res.RepeatInstructions) != 3 || res.RepeatInstructions[2] != 1000 {
		t.Fatalf("timing: number %d, seconds %v, instructions %v", res.Number, res.RepeatSeconds,
			res.RepeatInstructions)
	}
	for _, c := range []struct {
		r    *Request
		code codes.Code
		msg  string
	}{
		{func() *Request { r := req(make([]byte, 4)); r.Repeat, r.MinRepeatMs = 1, 5; return r }(),
			codes.InvalidArgument, "'min_repeat_ms' is not supported"},
		{func() *Request { r := req(make([]byte, 4)); r.Repeat = 33; return r }(),
			codes.InvalidArgument, "must be in [0, 32]"},
		{req([]byte{1, 2}), codes.InvalidArgument, "is 4 bytes, got 2 bytes"},
		{req([]byte{127, 0, 0, 0}), codes.Internal, "OVERFLOW"},
	} {
		_, err := s.Infer(ctx, c.r)
		if status.Code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v, want %v with %q", err, c.code, c.msg)
		}
	}
	// the device still answers
	if _, err := s.Infer(ctx, req([]byte{1, 1, 1, 1})); err != nil {
		t.Fatal(err)
	}
}

// A device that does not serve the model named, or a bad NAME=PATH, is
// refused at start with what is wrong.
func TestDeviceModelRefused(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "uart.sock")
	fakeDevice(t, sock)
	for spec, want := range map[string]string{
		"kws=" + sock:                       "no model \"kws\"",
		"inc":                               "expected NAME=PATH",
		"inc=" + filepath.Join(dir, "nope"): "no such file",
	} {
		if _, err := New(Config{Devices: []string{spec}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// KWS on the emulated board behind tvmnode-serve's --device: the case
// python/tests/test_firmware_device.py's test_model_behind_the_uart writes
// (the firmware, an input and the host's outputs); an inference through the
// server answers the host's outputs, a timed one the device's repeats.
// Skipped without TVMNODE_SESSION_CASE.
func TestQemuDeviceServe(t *testing.T) {
	c, err := device.ReadSessionCase()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Skip("TVMNODE_SESSION_CASE not set (python/tests/test_firmware_device.py sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sock := filepath.Join(t.TempDir(), "uart.sock")
	var qout bytes.Buffer
	qemu, err := device.StartQemu(ctx, c.ELF, sock, &qout)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = qemu.Process.Kill()
		_ = qemu.Wait()
	}()
	s, err := New(Config{Devices: []string{c.Model + "=" + sock}})
	if err != nil {
		t.Fatalf("%v\n%s", err, qout.String())
	}
	defer s.Shutdown(context.Background())
	m := s.models[c.Model]
	r := &Request{Model: c.Model, Repeat: 2, Number: 1}
	for i, in := range m.ins {
		r.Inputs = append(r.Inputs, Input{Name: in.Name, Datatype: in.datatype, Shape: in.Shape, Data: c.Inputs[i]})
	}
	start := time.Now()
	res, err := s.Infer(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a timed inference through the server on the emulated board: %v", time.Since(start))
	for i, o := range res.Outputs {
		if !bytes.Equal(o.Data, c.Outputs[i]) {
			t.Fatalf("output %s: %v, the host's %v", o.Name, o.Data, c.Outputs[i])
		}
	}
	if len(res.RepeatSeconds) != 2 || res.RepeatSeconds[0] <= 0 {
		t.Fatalf("timing %v", res.RepeatSeconds)
	}
	t.Logf("device seconds per run (virtual time, 1 ns an instruction): %v", res.RepeatSeconds)
}

// A timed request on a device answers, over gRPC and over HTTP, the
// device's instructions per run (repeat_instructions) beside the seconds.
func TestDeviceTimingParameters(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "uart.sock")
	fakeDevice(t, sock)
	ts := start(t, Config{Models: []string{}, Devices: []string{"inc=" + sock}})
	p := func(v int64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
	}
	res, err := ts.client.ModelInfer(context.Background(), &pb.ModelInferRequest{ModelName: "inc",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "INT8", Shape: []int64{1, 4}}},
		RawInputContents: [][]byte{{1, 2, 3, 4}}, Parameters: map[string]*pb.InferParameter{"repeat": p(2), "number": p(3)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Parameters["repeat_instructions"].GetStringParam(); got != "1000,1000" ||
		res.Parameters["repeat_seconds"].GetStringParam() != "0.04,0.04" {
		t.Fatalf("gRPC parameters %v", res.Parameters)
	}
	code, out := postJSON(t, ts, "/v2/models/inc/infer", map[string]interface{}{
		"inputs":     []map[string]interface{}{{"name": "x", "shape": []int{1, 4}, "datatype": "INT8", "data": []int{1, 2, 3, 4}}},
		"parameters": map[string]interface{}{"repeat": 2, "number": 3}})
	params, _ := out["parameters"].(map[string]interface{})
	if code != http.StatusOK || params["repeat_instructions"] != "1000,1000" {
		t.Fatalf("HTTP %d: %v", code, out)
	}
	// untimed: no timing parameters
	res, err = ts.client.ModelInfer(context.Background(), &pb.ModelInferRequest{ModelName: "inc",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "INT8", Shape: []int64{1, 4}}},
		RawInputContents: [][]byte{{1, 2, 3, 4}}})
	if err != nil || res.Parameters != nil {
		t.Fatalf("untimed: %v, parameters %v", err, res.Parameters)
	}
}
