package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"tvmnode.dev/go/internal/modeltest"
	pb "tvmnode.dev/go/serve/inference"
	tn "tvmnode.dev/go/tvmnode"
	tnt "tvmnode.dev/go/tvmnode/tvmnodetest"
)

// The keyword-spotting model (int8), compiled once for every test.
var kws struct {
	once sync.Once
	lib  string
	dir  string
	skip string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if kws.dir != "" {
		os.RemoveAll(kws.dir)
	}
	if adM4.dir != "" {
		os.RemoveAll(adM4.dir)
	}
	os.Exit(code)
}

func kwsLib(t testing.TB) string {
	t.Helper()
	kws.once.Do(func() {
		tool, why := modeltest.Find()
		if tool == nil {
			kws.skip = why
			return
		}
		kws.dir, kws.err = os.MkdirTemp("", "tvmnode-serve-")
		if kws.err == nil {
			kws.lib, kws.err = tool.Compile("kws_ref_model.tflite", "kws", kws.dir)
		}
		if kws.err == nil {
			kws.err = loadOnce(kws.lib)
		}
	})
	skipOrFail(t, "model tests skipped: ", kws.skip, kws.err)
	return kws.lib
}

// loadOnce loads and closes a library: what the first load keeps for the
// process is then kept before a test counts the objects alive.
func loadOnce(lib string) error {
	mod, err := tn.LoadModule(lib)
	if err == nil {
		mod.Close()
	}
	return err
}

// skipOrFail ends a test that cannot have what it needs: skipped with why
// when skip says why, failed on err.
func skipOrFail(t testing.TB, what, skip string, err error) {
	t.Helper()
	if skip != "" {
		t.Skip(what + skip)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// testServer is a Server on loopback ports with a gRPC client.
type testServer struct {
	s        *Server
	grpcAddr string
	client   pb.GRPCInferenceServiceClient
	url      string
	http     *http.Client
}

func start(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.Models == nil {
		cfg.Models = []string{kwsLib(t)}
	}
	live := tnt.Settle(-1)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = s.ServeGRPC(gl, nil) }()
	go func() { defer wg.Done(); _ = s.ServeHTTP(hl, nil) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{s: s, grpcAddr: gl.Addr().String(), client: pb.NewGRPCInferenceServiceClient(conn), url: "http://" + hl.Addr().String(),
		http: &http.Client{Timeout: 20 * time.Second}}
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		wg.Wait()
		ts.http.CloseIdleConnections()
		checkIdle(t, s)
		if after := tnt.Settle(live); after != live {
			t.Errorf("%d tvmnode objects left alive after Shutdown", after-live)
		}
	})
	return ts
}

// checkIdle checks that no request is left running: every instance is back
// in its pool and nothing waits.
func checkIdle(t *testing.T, s *Server) {
	t.Helper()
	for name, m := range s.models {
		if len(m.idle) != cap(m.idle) || m.queued.Load() != 0 {
			t.Errorf("model %s: %d of %d instances idle, %d queued", name, len(m.idle), cap(m.idle),
				m.queued.Load())
		}
	}
}

// kwsInput is a random input of the model and its outputs run in-process.
func kwsInput(t *testing.T, seed int64) (info tn.TensorInfo, data []byte, want [][]byte) {
	t.Helper()
	mod, err := tn.LoadModule(kwsLib(t))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	info = mod.Inputs()[0]
	x := make([]int8, info.NumElements())
	rng := mrand.New(mrand.NewSource(seed))
	for i := range x {
		x[i] = int8(rng.Intn(256) - 128)
	}
	if err := mod.SetInput(info.Name, x); err != nil {
		t.Fatal(err)
	}
	if err := mod.Run(); err != nil {
		t.Fatal(err)
	}
	for i, o := range mod.Outputs() {
		y := make([]int8, o.NumElements())
		if err := mod.CopyOutput(i, y); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, len(y))
		for k, v := range y {
			b[k] = byte(v)
		}
		want = append(want, b)
	}
	data = make([]byte, len(x))
	for k, v := range x {
		data[k] = byte(v)
	}
	return info, data, want
}

func inferRequest(info tn.TensorInfo, data []byte) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{ModelName: "kws", Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: info.Name, Datatype: "INT8", Shape: info.Shape}}, RawInputContents: [][]byte{data}}
}

func wantCode(t *testing.T, err error, code codes.Code, substr string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
	if !strings.Contains(status.Convert(err).Message(), substr) {
		t.Fatalf("got message %q, want it to say %q", status.Convert(err).Message(), substr)
	}
}

func TestMetadata(t *testing.T) {
	ts := start(t, Config{})
	ctx := context.Background()
	live, err := ts.client.ServerLive(ctx, &pb.ServerLiveRequest{})
	if err != nil || !live.Live {
		t.Fatalf("ServerLive: %v %v", live, err)
	}
	ready, err := ts.client.ServerReady(ctx, &pb.ServerReadyRequest{})
	if err != nil || !ready.Ready {
		t.Fatalf("ServerReady: %v %v", ready, err)
	}
	sm, err := ts.client.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	if err != nil || sm.Name != "tvmnode-serve" {
		t.Fatalf("ServerMetadata: %v %v", sm, err)
	}
	mr, err := ts.client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "kws"})
	if err != nil || !mr.Ready {
		t.Fatalf("ModelReady: %v %v", mr, err)
	}
	if mr, _ := ts.client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "nope"}); mr.Ready {
		t.Fatal("ModelReady of an unknown model is true")
	}
	md, err := ts.client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "kws"})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := tn.LoadModule(kwsLib(t))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	in, out := mod.Inputs()[0], mod.Outputs()[0]
	if md.Name != "kws" || len(md.Inputs) != 1 || len(md.Outputs) != 1 || md.Inputs[0].Name != in.Name ||
		md.Inputs[0].Datatype != "INT8" || !sameShape(md.Inputs[0].Shape, in.Shape) ||
		!sameShape(md.Outputs[0].Shape, out.Shape) {
		t.Fatalf("ModelMetadata: %v", md)
	}
	p := md.Inputs[0].Parameters
	if p["scale"].GetDoubleParam() != in.Scale || in.Scale == 0 || p["zero_point"].GetInt64Param() != int64(in.ZeroPoint) {
		t.Fatalf("quantization parameters %v, want scale %v zero point %v", p, in.Scale, in.ZeroPoint)
	}
	_, err = ts.client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "kws", Version: "2"})
	wantCode(t, err, codes.NotFound, "no version '2'")
}

func TestInferMatchesModule(t *testing.T) {
	ts := start(t, Config{})
	info, data, want := kwsInput(t, 1)
	res, err := ts.client.ModelInfer(context.Background(), inferRequest(info, data))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RawOutputContents) != len(want) || !bytes.Equal(res.RawOutputContents[0], want[0]) {
		t.Fatalf("outputs %v, want %v", res.RawOutputContents, want)
	}
	if res.Outputs[0].Datatype != "INT8" || res.ModelName != "kws" {
		t.Fatalf("output metadata %v", res.Outputs[0])
	}
	// The same input as typed contents.
	req := inferRequest(info, nil)
	req.RawInputContents = nil
	ints := make([]int32, len(data))
	for i, b := range data {
		ints[i] = int32(int8(b))
	}
	req.Inputs[0].Contents = &pb.InferTensorContents{IntContents: ints}
	res, err = ts.client.ModelInfer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.RawOutputContents[0], want[0]) {
		t.Fatalf("typed contents: outputs %v, want %v", res.RawOutputContents[0], want[0])
	}
}

func TestConcurrentClients(t *testing.T) {
	ts := start(t, Config{Instances: 2})
	const clients, each = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		info, data, want := kwsInput(t, int64(10+c))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; k++ {
				res, err := ts.client.ModelInfer(context.Background(), inferRequest(info, data))
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(res.RawOutputContents[0], want[0]) {
					errs <- fmt.Errorf("client output %v, want %v", res.RawOutputContents[0], want[0])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestInvalidRequests(t *testing.T) {
	ts := start(t, Config{})
	info, data, _ := kwsInput(t, 2)
	cases := []struct {
		name  string
		edit  func(r *pb.ModelInferRequest)
		code  codes.Code
		words string
	}{
		{"unknown model", func(r *pb.ModelInferRequest) { r.ModelName = "nope" }, codes.NotFound,
			"model 'nope' is not served (served: kws)"},
		{"input name", func(r *pb.ModelInferRequest) { r.Inputs[0].Name = "x" }, codes.InvalidArgument,
			"no input 'x' (its inputs: '" + info.Name + "' INT8"},
		{"datatype", func(r *pb.ModelInferRequest) { r.Inputs[0].Datatype = "FP32" }, codes.InvalidArgument,
			"is INT8, got datatype FP32"},
		{"shape", func(r *pb.ModelInferRequest) { r.Inputs[0].Shape = []int64{1, 490} }, codes.InvalidArgument,
			"got shape [1 490]"},
		{"byte length", func(r *pb.ModelInferRequest) { r.RawInputContents[0] = data[:10] },
			codes.InvalidArgument, fmt.Sprintf("is %d bytes, got 10 bytes", len(data))},
		{"no inputs", func(r *pb.ModelInferRequest) { r.Inputs = nil; r.RawInputContents = nil },
			codes.InvalidArgument, "expected 1 inputs"},
		{"raw count", func(r *pb.ModelInferRequest) { r.RawInputContents = append(r.RawInputContents, data) },
			codes.InvalidArgument, "raw_input_contents has 2 entries for 1 inputs"},
		{"no data", func(r *pb.ModelInferRequest) { r.RawInputContents = nil }, codes.InvalidArgument,
			"no data"},
		{"output name", func(r *pb.ModelInferRequest) {
			r.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y"}}
		}, codes.InvalidArgument, "no output 'y'"},
		{"repeat", func(r *pb.ModelInferRequest) {
			r.Parameters = map[string]*pb.InferParameter{"repeat": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -1}}}
		}, codes.InvalidArgument, "parameter 'repeat' must be in [0, 10000], got -1"},
		{"repeat type", func(r *pb.ModelInferRequest) {
			r.Parameters = map[string]*pb.InferParameter{"repeat": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "3"}}}
		}, codes.InvalidArgument, "parameter 'repeat' must be an int64_param"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := inferRequest(info, data)
			c.edit(r)
			_, err := ts.client.ModelInfer(context.Background(), r)
			wantCode(t, err, c.code, c.words)
		})
	}
}

// rawCodec sends bytes as they are, to make malformed messages.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func TestMalformedRequests(t *testing.T) {
	ts := start(t, Config{})
	conn, err := grpc.NewClient(ts.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// not a protobuf message: a field 1 of wire type 7 (no such type)
	in, out := []byte{0x0f, 0xff, 0xff}, []byte(nil)
	err = conn.Invoke(context.Background(), "/inference.GRPCInferenceService/ModelInfer", &in, &out,
		grpc.ForceCodec(rawCodec{}))
	wantCode(t, err, codes.Internal, "unmarshal")
	// HTTP: a binary header length past the body, binary data left over
	for _, c := range []struct {
		head, body, words string
	}{
		{"1000", "{}", "expected a length within the body's 2 bytes"},
		{"2", "{}xyz", "3 bytes of binary data follow"},
		{"", `{"inputs": [], "bogus": 1}`, "unknown field"},
	} {
		req, _ := http.NewRequest("POST", ts.url+"/v2/models/kws/infer", strings.NewReader(c.body))
		if c.head != "" {
			req.Header.Set(headerLength, c.head)
		}
		resp, err := ts.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e["error"], c.words) {
			t.Fatalf("%q: %d %v, want 400 saying %q", c.body, resp.StatusCode, e, c.words)
		}
	}
}

func TestOversizedRequest(t *testing.T) {
	ts := start(t, Config{MaxRequestBytes: 256})
	info, data, _ := kwsInput(t, 3)
	_, err := ts.client.ModelInfer(context.Background(), inferRequest(info, data))
	wantCode(t, err, codes.ResourceExhausted, "larger than max")
	body := strings.NewReader(`{"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[` +
		strings.Repeat("1,", 300) + `1]}]}`)
	resp, err := ts.http.Post(ts.url+"/v2/models/kws/infer", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("HTTP status %d, want 413", resp.StatusCode)
	}
}

// timing is a request that times the model for at least ms milliseconds.
func timing(info tn.TensorInfo, data []byte, repeat, number, ms int64) *pb.ModelInferRequest {
	r := inferRequest(info, data)
	p := func(v int64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
	}
	r.Parameters = map[string]*pb.InferParameter{"repeat": p(repeat), "number": p(number), "min_repeat_ms": p(ms)}
	return r
}

func TestTiming(t *testing.T) {
	ts := start(t, Config{})
	info, data, want := kwsInput(t, 4)
	res, err := ts.client.ModelInfer(context.Background(), timing(info, data, 3, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	secs := strings.Split(res.Parameters["repeat_seconds"].GetStringParam(), ",")
	if len(secs) != 3 || res.Parameters["number"].GetInt64Param() != 2 {
		t.Fatalf("timing parameters %v", res.Parameters)
	}
	for _, s := range secs {
		if v, err := strconv.ParseFloat(s, 64); err != nil || v <= 0 || v > 1 {
			t.Fatalf("repeat seconds %q", s)
		}
	}
	if !bytes.Equal(res.RawOutputContents[0], want[0]) {
		t.Fatal("a timed request's outputs differ from the Module's")
	}
	// min_repeat_ms raises number until a repeat lasts that long.
	res, err = ts.client.ModelInfer(context.Background(), timing(info, data, 2, 1, 20))
	if err != nil {
		t.Fatal(err)
	}
	n := res.Parameters["number"].GetInt64Param()
	first, _ := strconv.ParseFloat(strings.Split(res.Parameters["repeat_seconds"].GetStringParam(), ",")[0], 64)
	if n < 2 || float64(n)*first < 0.010 {
		t.Fatalf("min_repeat_ms 20: number %d, %g s per run", n, first)
	}
}

func TestDeadlineShorterThanModel(t *testing.T) {
	ts := start(t, Config{})
	info, data, _ := kwsInput(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	// 50 repeats of at least 100 ms each: far longer than the deadline.
	_, err := ts.client.ModelInfer(ctx, timing(info, data, 50, 1, 100))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	// The server stops after the repeat under way: the instance is free
	// again well before the 5 s the request asked for.
	waitIdle(t, ts.s, 2*time.Second)
	if time.Since(begin) > 3*time.Second {
		t.Fatalf("the instance came back after %v", time.Since(begin))
	}
}

// waitIdle waits until every instance is back in its pool.
func waitIdle(t *testing.T, s *Server, limit time.Duration) {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		idle := true
		for _, m := range s.models {
			idle = idle && len(m.idle) == cap(m.idle) && m.queued.Load() == 0
		}
		if idle {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("requests still running after %v", limit)
}

func TestCancelMidRequest(t *testing.T) {
	ts := start(t, Config{})
	info, data, _ := kwsInput(t, 6)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// cancel once the request holds the instance
		for len(ts.s.models["kws"].idle) != 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := ts.client.ModelInfer(ctx, timing(info, data, 50, 1, 100))
	if status.Code(err) != codes.Canceled {
		t.Fatalf("got %v, want Canceled", err)
	}
	waitIdle(t, ts.s, 2*time.Second)
	// The server goes on serving.
	if _, err := ts.client.ModelInfer(context.Background(), inferRequest(info, data)); err != nil {
		t.Fatal(err)
	}
}

func TestBoundedQueue(t *testing.T) {
	ts := start(t, Config{Instances: 1, QueueSize: 1})
	info, data, _ := kwsInput(t, 7)
	m := ts.s.models["kws"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	go func() { _, err := ts.client.ModelInfer(ctx, timing(info, data, 50, 1, 100)); done <- err }()
	for len(m.idle) != 0 {
		time.Sleep(time.Millisecond)
	}
	go func() { _, err := ts.client.ModelInfer(ctx, inferRequest(info, data)); done <- err }()
	for m.queued.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	_, err := ts.client.ModelInfer(context.Background(), inferRequest(info, data))
	wantCode(t, err, codes.ResourceExhausted, "1 requests are already waiting")
	// The queue depth is a metric.
	resp, err := ts.http.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(text), `tvmnode_serve_queue_depth{model="kws"} 1`) {
		t.Fatalf("no queue depth of 1 in the metrics:\n%s", text)
	}
	cancel()
	for k := 0; k < 2; k++ {
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("got %v, want Canceled", err)
		}
	}
	waitIdle(t, ts.s, 2*time.Second)
}

func TestGracefulShutdown(t *testing.T) {
	lib := kwsLib(t)
	s, err := New(Config{Models: []string{lib}, Instances: 2})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ServeGRPC(l, nil) }()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewGRPCInferenceServiceClient(conn)
	info, data, want := kwsInput(t, 8)
	results := make(chan *pb.ModelInferResponse, 2)
	errs := make(chan error, 2)
	for k := 0; k < 2; k++ {
		go func() {
			res, err := client.ModelInfer(context.Background(), timing(info, data, 3, 1, 100))
			results <- res
			errs <- err
		}()
	}
	for len(s.models["kws"].idle) != 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Ready() {
		t.Fatal("ready after Shutdown")
	}
	for k := 0; k < 2; k++ {
		if err := <-errs; err != nil {
			t.Fatalf("a request in flight during Shutdown: %v", err)
		}
		if res := <-results; !bytes.Equal(res.RawOutputContents[0], want[0]) {
			t.Fatal("a request in flight during Shutdown: wrong outputs")
		}
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	// After Shutdown nothing is served, and serving returns at once.
	if _, err := s.Infer(context.Background(), &Request{Model: "kws"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("after Shutdown: %v, want Unavailable", err)
	}
	for _, serve := range []func(net.Listener) error{
		func(l net.Listener) error { return s.ServeGRPC(l, nil) },
		func(l net.Listener) error { return s.ServeHTTP(l, nil) },
	} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := serve(l); err != nil {
			t.Fatal(err)
		}
		if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
			t.Fatal("a server started after Shutdown accepts connections")
		}
	}
}

func TestToken(t *testing.T) {
	ts := start(t, Config{Token: "s3cret"})
	info, data, _ := kwsInput(t, 9)
	for _, auth := range []string{"", "Bearer wrong", "s3cret", "Basic s3cret"} {
		ctx := context.Background()
		if auth != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
		}
		_, err := ts.client.ModelInfer(ctx, inferRequest(info, data))
		wantCode(t, err, codes.Unauthenticated, "bearer token is required")
		_, err = ts.client.ServerLive(ctx, &pb.ServerLiveRequest{})
		wantCode(t, err, codes.Unauthenticated, "bearer token is required")
		req, _ := http.NewRequest("GET", ts.url+"/v2/models/kws", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := ts.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("HTTP with %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret")
	if _, err := ts.client.ModelInfer(ctx, inferRequest(info, data)); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", ts.url+"/v2/models/kws", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := ts.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP with the token: status %d", resp.StatusCode)
	}
}

// selfSigned makes a certificate for 127.0.0.1.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tvmnode-serve test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func TestTLS(t *testing.T) {
	lib := kwsLib(t)
	cert, pool := selfSigned(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s, err := New(Config{Models: []string{lib}})
	if err != nil {
		t.Fatal(err)
	}
	gl, _ := net.Listen("tcp", "127.0.0.1:0")
	hl, _ := net.Listen("tcp", "127.0.0.1:0")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = s.ServeGRPC(gl, credentials.NewTLS(cfg)) }()
	go func() { defer wg.Done(); _ = s.ServeHTTP(hl, cfg) }()
	defer func() {
		_ = s.Shutdown(context.Background())
		wg.Wait()
	}()
	info, data, want := kwsInput(t, 11)
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := pb.NewGRPCInferenceServiceClient(conn).ModelInfer(context.Background(), inferRequest(info, data))
	if err != nil || !bytes.Equal(res.RawOutputContents[0], want[0]) {
		t.Fatalf("over TLS: %v", err)
	}
	// A plaintext client is refused.
	plain, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := pb.NewGRPCInferenceServiceClient(plain).ServerLive(ctx, &pb.ServerLiveRequest{}); status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("plaintext gRPC client against TLS: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("https://" + hl.Addr().String() + "/v2/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTPS ready: %d", resp.StatusCode)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + hl.Addr().String() + "/v2/health/ready"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered by the TLS server")
		}
	}
}

func postJSON(t *testing.T, ts *testServer, path string, body interface{}) (int, map[string]interface{}) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := ts.http.Post(ts.url+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]interface{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func TestHTTP(t *testing.T) {
	ts := start(t, Config{})
	info, data, want := kwsInput(t, 12)
	vals := make([]int, len(data))
	for i, b := range data {
		vals[i] = int(int8(b))
	}
	in := map[string]interface{}{"name": info.Name, "shape": info.Shape, "datatype": "INT8", "data": vals}
	code, out := postJSON(t, ts, "/v2/models/kws/infer", map[string]interface{}{"id": "a", "inputs": []interface{}{in}})
	if code != http.StatusOK {
		t.Fatalf("infer: %d %v", code, out)
	}
	got := out["outputs"].([]interface{})[0].(map[string]interface{})["data"].([]interface{})
	for i, v := range got {
		if int8(v.(float64)) != int8(want[0][i]) {
			t.Fatalf("JSON output %v, want %v", got, want[0])
		}
	}
	if out["id"] != "a" {
		t.Fatalf("id %v", out["id"])
	}
	// Errors are JSON with the status the gRPC code maps to.
	in["datatype"] = "FP32"
	code, out = postJSON(t, ts, "/v2/models/kws/infer", map[string]interface{}{"inputs": []interface{}{in}})
	if code != http.StatusBadRequest || !strings.Contains(out["error"].(string), "is INT8, got datatype FP32") {
		t.Fatalf("wrong datatype: %d %v", code, out)
	}
	in["datatype"] = "INT8"
	vals[0] = 200
	code, out = postJSON(t, ts, "/v2/models/kws/infer", map[string]interface{}{"inputs": []interface{}{in}})
	if code != http.StatusBadRequest || !strings.Contains(out["error"].(string), "200 is out of the range of INT8") {
		t.Fatalf("out of range: %d %v", code, out)
	}
	resp, err := ts.http.Post(ts.url+"/v2/models/kws/infer", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed JSON: %d", resp.StatusCode)
	}
	// The binary tensor data extension, both ways.
	head, _ := json.Marshal(map[string]interface{}{"inputs": []interface{}{map[string]interface{}{
		"name": info.Name, "shape": info.Shape, "datatype": "INT8",
		"parameters": map[string]interface{}{"binary_data_size": len(data)}}},
		"parameters": map[string]interface{}{"binary_data_output": true}})
	req, _ := http.NewRequest("POST", ts.url+"/v2/models/kws/versions/1/infer", bytes.NewReader(append(head, data...)))
	req.Header.Set(headerLength, strconv.Itoa(len(head)))
	resp, err = ts.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	n, err := strconv.Atoi(resp.Header.Get(headerLength))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("binary: %d %s", resp.StatusCode, body)
	}
	if !bytes.Equal(body[n:], want[0]) {
		t.Fatalf("binary output %v, want %v", body[n:], want[0])
	}
	// Metadata, readiness, metrics.
	resp, err = ts.http.Get(ts.url + "/v2/models/kws")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Inputs []struct {
			Name       string
			Parameters map[string]float64
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if len(md.Inputs) != 1 || md.Inputs[0].Name != info.Name || md.Inputs[0].Parameters["scale"] != info.Scale {
		t.Fatalf("metadata %+v", md)
	}
	for path, code := range map[string]int{"/v2/health/live": 200, "/v2/health/ready": 200,
		"/v2/models/kws/ready": 200, "/v2/models/nope/ready": 404, "/v2": 200} {
		resp, err := ts.http.Get(ts.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Fatalf("%s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	resp, err = ts.http.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`tvmnode_serve_requests_total{code="OK",model="kws",protocol="http"} 2`,
		`tvmnode_serve_requests_total{code="InvalidArgument",model="kws",protocol="http"} 3`,
		`tvmnode_serve_request_duration_seconds_count{model="kws",protocol="http"} 5`} {
		if !strings.Contains(string(text), m) {
			t.Errorf("metrics lack %s", m)
		}
	}
}

func TestRepository(t *testing.T) {
	lib := kwsLib(t)
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/kws", 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/kws/model.so", b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Models: []string{dir, "other=" + lib}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if got := strings.Join(s.Models(), ","); got != "kws,other" {
		t.Fatalf("models %s", got)
	}
	if _, err := New(Config{Models: []string{lib, lib}}); err == nil || !strings.Contains(err.Error(), "two models named 'kws'") {
		t.Fatalf("two of a name: %v", err)
	}
	if _, err := New(Config{Models: []string{t.TempDir()}}); err == nil || !strings.Contains(err.Error(), "holds no .so") {
		t.Fatalf("empty repository: %v", err)
	}
	if _, err := New(Config{Models: []string{dir + "/missing.so"}}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing library: %v", err)
	}
}
