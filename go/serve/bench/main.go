// Command bench measures tvmnode-serve under load on loopback, bounded in
// count and time (go/serve/run_bench.sh, `./dev bench serve`): the keyword-
// spotting model (int8) compiled once, then
//   - in-process: SetInput + Run + CopyOutput on a Module, per call;
//   - echo: a minimal grpc-go server answering ModelInfer with the request's
//     raw_input_contents, with no model and no checks (the floor of a gRPC
//     round trip carrying the same payload);
//   - tvmnode-serve over gRPC at 1, 2, 8 and 64 concurrent clients (2
//     instances), and at 8 clients with 1 instance, for the scaling ratio;
//   - tvmnode-serve over HTTP with the binary data extension, 1 client;
//   - the smallest gRPC server that runs the model in its handler
//     (modelEcho), 1 client: what a handler that runs for the model's time
//     costs on this machine, apart from the server's own code;
//   - image classification (IC, float32, ten times KWS's run or more) at 8
//     clients with 2 instances and with 1, for the scaling ratio of a model
//     whose run outweighs the gRPC work of a request;
//   - the device session's round trip over the emulated UART (runDevice
//     below; -only device runs just that).
//
// Every configuration runs ROUNDS times (default 5) in turn, so the
// machine's slow spells fall on all alike; the table gives the medians over
// rounds of each round's p50 and p99 latency and throughput, and the CPU
// time of the process (server and clients: they share it) per request. The
// overhead at 1 client (tvmnode-serve's p50 less the echo's and the
// in-process run's) and the scaling ratios are taken per round, from
// configurations that ran seconds apart, then their median and range.
// Markdown on stdout.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"tvmnode.dev/go/internal/modeltest"
	"tvmnode.dev/go/serve"
	pb "tvmnode.dev/go/serve/inference"
	tn "tvmnode.dev/go/tvmnode"
)

type echo struct {
	pb.UnimplementedGRPCInferenceServiceServer
}

func (echo) ModelInfer(_ context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	return &pb.ModelInferResponse{ModelName: r.ModelName, RawOutputContents: r.RawInputContents}, nil
}

// modelEcho is the smallest gRPC server that runs the model: ModelInfer
// sets the request's one input on a Module of its own, runs it and answers
// the raw output, with no checks, queue, metrics or staging (one request at
// a time). Beside tvmnode-serve it says what the server's own code costs;
// beside the echo and the in-process run it says what a handler that runs
// for the model's time costs over their sum on this machine.
type modelEcho struct {
	pb.UnimplementedGRPCInferenceServiceServer
	mu  sync.Mutex
	mod *tn.Module
	in  string
	x   []int8
	y   []int8
}

func (e *modelEcho) ModelInfer(_ context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, b := range r.RawInputContents[0] {
		e.x[i] = int8(b)
	}
	if err := e.mod.SetInput(e.in, e.x); err != nil {
		return nil, err
	}
	if err := e.mod.Run(); err != nil {
		return nil, err
	}
	if err := e.mod.CopyOutput(0, e.y); err != nil {
		return nil, err
	}
	out := make([]byte, len(e.y))
	for i, v := range e.y {
		out[i] = byte(v)
	}
	return &pb.ModelInferResponse{ModelName: r.ModelName, RawOutputContents: [][]byte{out}}, nil
}

// sample is one configuration's round: latencies, wall time, CPU time.
type sample struct {
	lat  []time.Duration
	wall time.Duration
	cpu  time.Duration
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// load runs n calls of call spread over clients goroutines.
func load(clients, n int, call func() error) (sample, error) {
	var s sample
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	c0, t0 := cpuTime(), time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for k := c; k < n; k += clients {
				start := time.Now()
				if err := call(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				lats[c] = append(lats[c], time.Since(start))
			}
		}(c)
	}
	wg.Wait()
	s.wall, s.cpu = time.Since(t0), cpuTime()-c0
	for _, l := range lats {
		s.lat = append(s.lat, l...)
	}
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	return s, first
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[int(float64(len(l)-1)*p)]
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cpuName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// request is a ModelInferRequest for the model in lib, served as name,
// every input (int8 or float32) filled.
func request(lib, name string) (*pb.ModelInferRequest, error) {
	mod, err := tn.LoadModule(lib)
	if err != nil {
		return nil, err
	}
	defer mod.Close()
	r := &pb.ModelInferRequest{ModelName: name}
	for _, in := range mod.Inputs() {
		var raw []byte
		datatype := "INT8"
		switch in.DType {
		case tn.Int8:
			raw = make([]byte, in.NumElements())
			for i := range raw {
				raw[i] = byte(i * 7 % 256)
			}
		case tn.Float32:
			datatype = "FP32"
			for i := range in.NumElements() {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(i%17)/17))
			}
		default:
			return nil, fmt.Errorf("%s: input %s is %v, expected int8 or float32", lib, in.Name, in.DType)
		}
		r.Inputs = append(r.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: in.Name, Datatype: datatype,
			Shape: in.Shape})
		r.RawInputContents = append(r.RawInputContents, raw)
	}
	return r, nil
}

func listen() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return l
}

func run() error {
	rounds := flag.Int("rounds", 5, "rounds of every configuration")
	requests := flag.Int("requests", 2000, "requests per configuration and round")
	only := flag.String("only", "", "run only the configurations whose name holds this")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the measured rounds")
	devRequests := flag.Int("device-requests", 20, "requests per round on the emulated device (0: none; "+
		"-only device: only those)")
	devModel := flag.String("device-model", "ad", "the model on the emulated device: ad or kws")
	flag.Parse()
	tool, why := modeltest.Find()
	if tool == nil {
		return fmt.Errorf("needs the Python tooling and the models: %s", why)
	}
	dir, err := os.MkdirTemp("", "tvmnode-serve-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lib, err := tool.Compile("kws_ref_model.tflite", "kws", dir)
	if err != nil {
		return err
	}
	mod, err := tn.LoadModule(lib)
	if err != nil {
		return err
	}
	defer mod.Close()
	in, out := mod.Inputs()[0], mod.Outputs()[0]
	x := make([]int8, in.NumElements())
	for i := range x {
		x[i] = int8(i*7%256 - 128)
	}
	y := make([]int8, out.NumElements())
	raw := make([]byte, len(x))
	for i, v := range x {
		raw[i] = byte(v)
	}
	req := &pb.ModelInferRequest{ModelName: "kws", Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: in.Name, Datatype: "INT8", Shape: in.Shape}}, RawInputContents: [][]byte{raw}}

	// the servers: echo, tvmnode-serve with 2 and with 1 instance
	echoL := listen()
	eg := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(eg, echo{})
	go func() { _ = eg.Serve(echoL) }()
	defer eg.Stop()
	meMod, err := tn.LoadModule(lib)
	if err != nil {
		return err
	}
	defer meMod.Close()
	meL := listen()
	meg := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(meg, &modelEcho{mod: meMod, in: in.Name, x: make([]int8, len(x)),
		y: make([]int8, len(y))})
	go func() { _ = meg.Serve(meL) }()
	defer meg.Stop()
	type served struct {
		client pb.GRPCInferenceServiceClient
		http   string
	}
	icLib, err := tool.Compile("pretrainedResnet.tflite", "ic", dir)
	if err != nil {
		return err
	}
	icReq, err := request(icLib, "ic")
	if err != nil {
		return err
	}
	start := func(lib string, instances int) (*served, func(), error) {
		s, err := serve.New(serve.Config{Models: []string{lib}, Instances: instances, QueueSize: 1024})
		if err != nil {
			return nil, nil, err
		}
		gl, hl := listen(), listen()
		go func() { _ = s.ServeGRPC(gl, nil) }()
		go func() { _ = s.ServeHTTP(hl, nil) }()
		conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, nil, err
		}
		return &served{pb.NewGRPCInferenceServiceClient(conn), "http://" + hl.Addr().String()}, func() {
			conn.Close()
			_ = s.Shutdown(context.Background())
		}, nil
	}
	var servers []*served
	for _, sv := range []struct {
		lib       string
		instances int
	}{{lib, 2}, {lib, 1}, {icLib, 2}, {icLib, 1}} {
		one, stop, err := start(sv.lib, sv.instances)
		if err != nil {
			return err
		}
		defer stop()
		servers = append(servers, one)
	}
	two, one, icTwo, icOne := servers[0], servers[1], servers[2], servers[3]
	econn, err := grpc.NewClient(echoL.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer econn.Close()
	echoClient := pb.NewGRPCInferenceServiceClient(econn)
	meConn, err := grpc.NewClient(meL.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer meConn.Close()
	meClient := pb.NewGRPCInferenceServiceClient(meConn)

	grpcCallOf := func(c pb.GRPCInferenceServiceClient, req *pb.ModelInferRequest) func() error {
		return func() error {
			_, err := c.ModelInfer(context.Background(), req)
			return err
		}
	}
	grpcCall := func(c pb.GRPCInferenceServiceClient) func() error { return grpcCallOf(c, req) }
	head := fmt.Sprintf(`{"inputs":[{"name":%q,"shape":%s,"datatype":"INT8","parameters":{"binary_data_size":%d}}],`+
		`"parameters":{"binary_data_output":true}}`, in.Name, strings.ReplaceAll(fmt.Sprint(in.Shape), " ", ","),
		len(raw))
	body := append([]byte(head), raw...)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	httpCall := func() error {
		r, err := http.NewRequest("POST", two.http+"/v2/models/kws/infer", bytes.NewReader(body))
		if err != nil {
			return err
		}
		r.Header.Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
		resp, err := hc.Do(r)
		if err != nil {
			return err
		}
		var buf [4096]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
	inProcess := func() error {
		if err := mod.SetInput(in.Name, x); err != nil {
			return err
		}
		if err := mod.Run(); err != nil {
			return err
		}
		return mod.CopyOutput(0, y)
	}
	// share: a configuration runs requests/share requests a round (IC
	// runs about ten times as long as KWS).
	configs := []struct {
		name    string
		clients int
		call    func() error
		share   int
	}{
		{"in-process `SetInput` + `Run` + `CopyOutput`", 1, inProcess, 1},
		{"echo gRPC server (no model), 1 client", 1, grpcCall(echoClient), 1},
		{"tvmnode-serve gRPC, 2 instances, 1 client", 1, grpcCall(two.client), 1},
		{"tvmnode-serve gRPC, 2 instances, 2 clients", 2, grpcCall(two.client), 1},
		{"tvmnode-serve gRPC, 2 instances, 8 clients", 8, grpcCall(two.client), 1},
		{"tvmnode-serve gRPC, 2 instances, 64 clients", 64, grpcCall(two.client), 1},
		{"tvmnode-serve gRPC, 1 instance, 8 clients", 8, grpcCall(one.client), 1},
		{"tvmnode-serve HTTP (binary data), 2 instances, 1 client", 1, httpCall, 1},
		{"minimal gRPC server running the model (no checks, queue or metrics), 1 client", 1, grpcCall(meClient), 1},
		{"IC (float32): tvmnode-serve gRPC, 2 instances, 8 clients", 8, grpcCallOf(icTwo.client, icReq), 8},
		{"IC (float32): tvmnode-serve gRPC, 1 instance, 8 clients", 8, grpcCallOf(icOne.client, icReq), 8},
	}
	if *only == "device" {
		return runDevice(tool, dir, *devModel, *rounds, *devRequests, echoClient)
	}
	if *only != "" {
		kept := configs[:0]
		for _, c := range configs {
			if strings.Contains(c.name, *only) {
				kept = append(kept, c)
			}
		}
		configs = kept
	}
	// warm up every path
	for _, c := range configs {
		if _, err := load(c.clients, 100, c.call); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	p50s := make([][]float64, len(configs))
	p99s := make([][]float64, len(configs))
	rps := make([][]float64, len(configs))
	cpus := make([][]float64, len(configs))
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for r := 0; r < *rounds; r++ {
		fmt.Fprintf(os.Stderr, "== round %d of %d\n", r+1, *rounds)
		for i, c := range configs {
			s, err := load(c.clients, max(1, *requests/c.share), c.call)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			p50s[i] = append(p50s[i], float64(pct(s.lat, 0.50))/1e3)
			p99s[i] = append(p99s[i], float64(pct(s.lat, 0.99))/1e3)
			rps[i] = append(rps[i], float64(len(s.lat))/s.wall.Seconds())
			cpus[i] = append(cpus[i], float64(s.cpu)/1e3/float64(len(s.lat)))
		}
	}
	fmt.Printf("\ntvmnode-serve under load, KWS (int8), loopback; %s, %d cores (GOMAXPROCS %d); %d rounds of %d requests, medians over rounds\n\n",
		cpuName(), runtime.NumCPU(), runtime.GOMAXPROCS(0), *rounds, *requests)
	fmt.Println("| configuration | p50 µs | p99 µs | requests/s | CPU µs per request (process) |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for i, c := range configs {
		fmt.Printf("| %s | %.1f | %.1f | %.0f | %.1f |\n", c.name, median(p50s[i]), median(p99s[i]),
			median(rps[i]), median(cpus[i]))
	}
	if len(configs) == 11 {
		// the overhead and the ratios per round (a round's configurations
		// ran seconds apart), then their median and range
		var over, own, kws, ic []float64
		for r := range p50s[0] {
			over = append(over, p50s[2][r]-p50s[1][r]-p50s[0][r])
			own = append(own, p50s[2][r]-p50s[8][r])
			kws = append(kws, rps[4][r]/rps[6][r])
			ic = append(ic, rps[9][r]/rps[10][r])
		}
		span := func(v []float64, f string) string {
			s := append([]float64(nil), v...)
			sort.Float64s(s)
			return fmt.Sprintf(f+" (rounds: "+f+" to "+f+")", median(v), s[0], s[len(s)-1])
		}
		fmt.Printf("\nOverhead at 1 client: tvmnode-serve p50 - echo p50 - model in-process p50 = %s µs "+
			"(target: ≤ 20 µs).\n", span(over, "%.1f"))
		fmt.Printf("The minimal server running the model: p50 %.1f µs, %.1f µs over the echo and the in-process run; "+
			"tvmnode-serve - minimal server = %s µs.\n", median(p50s[8]), median(p50s[8])-median(p50s[1])-median(p50s[0]),
			span(own, "%.1f"))
		fmt.Printf("Throughput at 8 clients, 2 instances / 1 instance: KWS %s×, IC %s× (target ≥ 1.8× on 2 cores).\n",
			span(kws, "%.2f"), span(ic, "%.2f"))
		// The clients share the process and its cores: 2 instances cannot
		// serve more than NumCPU cores' time / the CPU time a request
		// takes (server and client), whatever the server does.
		cap := float64(runtime.NumCPU()) * 1e6 / median(cpus[4])
		fmt.Printf("The cores cap KWS's ratio: %d cores / %.1f µs of CPU a request (2 instances, 8 clients) = %.0f "+
			"requests/s, %.2f× the 1-instance throughput.\n", runtime.NumCPU(), median(cpus[4]), cap,
			cap/median(rps[6]))
	}
	if *devRequests > 0 && *only == "" {
		return runDevice(tool, dir, *devModel, *rounds, *devRequests, echoClient)
	}
	return nil
}

// deviceModels are the models -device-model names: file and name.
var deviceModels = map[string][2]string{"ad": {"ad01_int8.tflite", "AD"}, "kws": {"kws_ref_model.tflite", "KWS"}}

// runDevice measures the device session's round trip: tvmnode-serve with
// --device NAME=qemu-m4:ARCHIVE (which: the anomaly-detection model, ad,
// or keyword spotting, kws, int8, exported for the Cortex-M4), one gRPC
// client on loopback. A request's latency is the round trip (gRPC, the
// server, the frames over the emulated UART both ways, the session on the
// board) plus the run itself; the run's host time comes from timed
// requests: one with number N2 minus one with number N1 is N2 - N1 runs
// on the board, so a run costs their difference over N2 - N1, and the
// overhead per request is an untimed request's latency minus one run.
// Medians over rounds of each round's median.
func runDevice(tool *modeltest.Tooling, dir, which string, rounds, requests int,
	echo pb.GRPCInferenceServiceClient) error {
	dm, ok := deviceModels[which]
	if !ok {
		return fmt.Errorf("-device-model %q: expected ad or kws", which)
	}
	for _, t := range []string{"qemu-system-arm", "arm-none-eabi-gcc"} {
		if _, err := exec.LookPath(t); err != nil {
			fmt.Printf("\nThe device session's round trip: not measured, %s is not installed.\n", t)
			return nil
		}
	}
	arch := filepath.Join(dir, which+"-m4")
	if err := tool.Tvmnode("compile", tool.Model(dm[0]), "--name", which, "-o", arch,
		"--target", "cortex-m"); err != nil {
		return err
	}
	s, err := serve.New(serve.Config{Devices: []string{which + "=qemu-m4:" + arch},
		FirmwareCache: filepath.Join(dir, "firmware")})
	if err != nil {
		return err
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	gl := listen()
	go func() { _ = s.ServeGRPC(gl, nil) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewGRPCInferenceServiceClient(conn)
	ctx := context.Background()
	md, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: which})
	if err != nil {
		return err
	}
	in := md.Inputs[0]
	n := elements(in.Shape)
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i * 13)
	}
	req := func(number int64) *pb.ModelInferRequest {
		r := &pb.ModelInferRequest{ModelName: which, Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape}}, RawInputContents: [][]byte{raw}}
		if number > 0 {
			p := func(v int64) *pb.InferParameter {
				return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
			}
			r.Parameters = map[string]*pb.InferParameter{"repeat": p(1), "number": p(number)}
		}
		return r
	}
	var instructions string
	call := func(r *pb.ModelInferRequest) func() error {
		return func() error {
			res, err := c.ModelInfer(ctx, r)
			if err == nil && res.Parameters["repeat_instructions"] != nil {
				instructions = res.Parameters["repeat_instructions"].GetStringParam()
			}
			return err
		}
	}
	echoCall := func() error {
		_, err := echo.ModelInfer(ctx, req(0))
		return err
	}
	const n1, n2 = 1, 6
	// warm up
	for _, f := range []func() error{call(req(0)), call(req(n1)), call(req(n2)), echoCall} {
		if _, err := load(1, 3, f); err != nil {
			return fmt.Errorf("device bench: %w", err)
		}
	}
	// Each round sends the three kinds in turn (untimed, number N1, number
	// N2), so that the machine's slow spells fall on all three alike, and
	// makes the difference within the round.
	// A request that fails (the board restarted under it) is counted and
	// left out; the next one waits for the new board.
	var infer, t1, t2, runs, overhead, echoP50, cpu []float64
	var failed []string
	for r := 0; r < rounds; r++ {
		fmt.Fprintf(os.Stderr, "== device round %d of %d\n", r+1, rounds)
		var lat [3][]time.Duration
		var busy time.Duration
		for k := 0; k < requests; k++ {
			for i, number := range []int64{0, n1, n2} {
				c0, start := cpuTime(), time.Now()
				if err := call(req(number))(); err != nil {
					failed = append(failed, err.Error())
					continue
				}
				lat[i] = append(lat[i], time.Since(start))
				if i == 0 {
					busy += cpuTime() - c0
				}
			}
		}
		se, err := load(1, requests, echoCall)
		if err != nil {
			return err
		}
		var p50 [3]float64
		for i := range lat {
			sort.Slice(lat[i], func(a, b int) bool { return lat[i][a] < lat[i][b] })
			p50[i] = float64(pct(lat[i], 0.5)) / 1e3
		}
		run := (p50[2] - p50[1]) / (n2 - n1)
		infer, t1, t2 = append(infer, p50[0]), append(t1, p50[1]), append(t2, p50[2])
		runs, overhead = append(runs, run), append(overhead, p50[0]-run)
		echoP50 = append(echoP50, float64(pct(se.lat, 0.5))/1e3)
		cpu = append(cpu, float64(busy)/1e3/float64(len(lat[0])))
	}
	run := median(runs)
	ins, _ := strconv.ParseUint(strings.Split(instructions, ",")[0], 10, 64)
	outBytes := int64(0)
	for _, o := range md.Outputs {
		outBytes += elements(o.Shape) // int8 models: a byte an element
	}
	fmt.Printf("\nThe device session's round trip: tvmnode-serve --device %s=qemu-m4:ARCHIVE (%s, int8, "+
		"%d instructions a run on the emulated Cortex-M4, %d input and %d output bytes), 1 gRPC client on "+
		"loopback; %s, %d cores; %d rounds of %d requests of each kind, medians over "+
		"rounds of each round's p50 (the kinds in turn, the differences within each round)\n\n", which, dm[1], ins,
		n, outBytes, cpuName(), runtime.NumCPU(), rounds, requests)
	fmt.Println("| measure | µs |")
	fmt.Println("|---|---:|")
	fmt.Printf("| untimed request, p50 (round trip + one run) | %.0f |\n", median(infer))
	fmt.Printf("| timed request, number %d, p50 (round trip + %d runs) | %.0f |\n", n1, n1+1, median(t1))
	fmt.Printf("| timed request, number %d, p50 (round trip + %d runs) | %.0f |\n", n2, n2+1, median(t2))
	fmt.Printf("| one run on the emulator, host time ((number %d - number %d) / %d) | %.0f |\n", n2, n1,
		n2-n1, run)
	fmt.Printf("| **round-trip overhead per request** (untimed p50 - one run) | **%.0f** |\n", median(overhead))
	fmt.Printf("| echo gRPC server, same payload, p50 | %.0f |\n", median(echoP50))
	fmt.Printf("| server process CPU per untimed request (qemu's own not included) | %.0f |\n", median(cpu))
	if len(failed) > 0 {
		fmt.Printf("\n%d of %d requests failed (left out above); the first: %s\n", len(failed), 3*rounds*requests,
			failed[0])
	}
	if run > 0 {
		fmt.Printf("\nThe emulator ran %.0f M instructions a second of host time.\n", float64(ins)/run)
	}
	return nil
}

// elements is the number of elements of a tensor of shape s.
func elements(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}
