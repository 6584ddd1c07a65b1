// Command bench measures tvmnode-serve under load on loopback, bounded in
// count and time (go/serve/run_bench.sh, `./dev bench serve`): the keyword-
// spotting model (int8) compiled once, then
//   - in-process: SetInput + Run + CopyOutput on a Module, per call;
//   - echo: a minimal grpc-go server answering ModelInfer with the request's
//     raw_input_contents, with no model and no checks (the floor of a gRPC
//     round trip carrying the same payload);
//   - tvmnode-serve over gRPC at 1, 2, 8 and 64 concurrent clients (2
//     instances), and at 8 clients with 1 instance, for the scaling ratio;
//   - tvmnode-serve over HTTP with the binary data extension, 1 client.
//
// Every configuration runs ROUNDS times (default 5) in turn, so the
// machine's slow spells fall on all alike; the table gives the medians over
// rounds of each round's p50 and p99 latency and throughput, and the CPU
// time of the process (server and clients: they share it) per request.
// Markdown on stdout.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
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
	type served struct {
		client pb.GRPCInferenceServiceClient
		http   string
	}
	start := func(instances int) (*served, func(), error) {
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
	two, stop2, err := start(2)
	if err != nil {
		return err
	}
	defer stop2()
	one, stop1, err := start(1)
	if err != nil {
		return err
	}
	defer stop1()
	econn, err := grpc.NewClient(echoL.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer econn.Close()
	echoClient := pb.NewGRPCInferenceServiceClient(econn)

	grpcCall := func(c pb.GRPCInferenceServiceClient) func() error {
		return func() error {
			_, err := c.ModelInfer(context.Background(), req)
			return err
		}
	}
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
	configs := []struct {
		name    string
		clients int
		call    func() error
	}{
		{"in-process `SetInput` + `Run` + `CopyOutput`", 1, inProcess},
		{"echo gRPC server (no model), 1 client", 1, grpcCall(echoClient)},
		{"tvmnode-serve gRPC, 2 instances, 1 client", 1, grpcCall(two.client)},
		{"tvmnode-serve gRPC, 2 instances, 2 clients", 2, grpcCall(two.client)},
		{"tvmnode-serve gRPC, 2 instances, 8 clients", 8, grpcCall(two.client)},
		{"tvmnode-serve gRPC, 2 instances, 64 clients", 64, grpcCall(two.client)},
		{"tvmnode-serve gRPC, 1 instance, 8 clients", 8, grpcCall(one.client)},
		{"tvmnode-serve HTTP (binary data), 2 instances, 1 client", 1, httpCall},
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
			s, err := load(c.clients, *requests, c.call)
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
	if len(configs) < 7 {
		return nil
	}
	model, echoP50, serveP50 := median(p50s[0]), median(p50s[1]), median(p50s[2])
	fmt.Printf("\nOverhead at 1 client: tvmnode-serve p50 %.1f µs = echo %.1f µs + model in-process %.1f µs + %.1f µs (target: + ≤ 20 µs).\n",
		serveP50, echoP50, model, serveP50-echoP50-model)
	fmt.Printf("Throughput at 8 clients: 2 instances / 1 instance = %.2f× (target ≥ 1.8× on 2 cores).\n",
		median(rps[4])/median(rps[6]))
	return nil
}
