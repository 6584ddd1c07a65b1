// Package serve is tvmnode-serve: compiled models (shared libraries from
// `tvmnode compile --shared`) served on the Open Inference Protocol (the
// KServe v2 inference protocol) over gRPC and over HTTP/JSON, with a pool
// of Module instances per model, a bounded queue, per-request deadlines,
// graceful shutdown, bearer tokens, TLS and Prometheus metrics.
//
// It is a Go module of its own (tvmnode.dev/go/serve, its go.mod replacing
// tvmnode.dev/go by ../) so that the binding module does not make every
// user depend on grpc-go and the Prometheus client.
//
// The server only loads the libraries named when it starts: no operation
// of the protocol loads or runs code that a client sends.
package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	tn "tvmnode.dev/go/tvmnode"
)

// Version is the server's version in ServerMetadata.
const Version = "0.1.0"

// Config configures a Server.
type Config struct {
	// Models: shared libraries of compiled models (each served under its
	// model's name, or NAME=PATH to name it), or model repository folders
	// (every *.so in the folder and in its sub-folders one level down).
	Models []string
	// Instances of each model that run at once (default 1).
	Instances int
	// QueueSize is the number of requests per model that may wait for an
	// instance; one more is answered RESOURCE_EXHAUSTED (default 64).
	QueueSize int
	// MaxRequestBytes bounds a request's size (default 16 MiB).
	MaxRequestBytes int
	// Timeout bounds every request, whatever deadline the client set
	// (default 30 s).
	Timeout time.Duration
	// Token, when not empty, is the bearer token every request must carry
	// ("authorization: Bearer TOKEN").
	Token string
	// Devices: models on devices, NAME=PATH: the model NAME served by the
	// crt's session (tvmnode/crt/session.h) at PATH, a serial port or
	// qemu's UART socket (device.go); or NAME=qemu-m4:ARCHIVE_DIR: the
	// model of an exported archive on an emulated Cortex-M4 that the
	// server builds, starts and restarts itself (qemu.go). Several devices
	// of one NAME serve that model together, one request each at a time.
	Devices []string
	// DeviceTimeout bounds each call to an emulated board: one that does
	// not answer in it is restarted (default 10 s).
	DeviceTimeout time.Duration
	// FirmwareRunner is firmware/common/run.py of the tvmnode sources,
	// which builds an archive into the session firmware (default: under
	// $TVMNODE_SOURCE_DIR, or found above the program or the working
	// folder).
	FirmwareRunner string
	// FirmwareCache holds the firmware built, keyed by content (default:
	// the user's cache folder, tvmnode-serve/firmware).
	FirmwareCache string
}

func (c *Config) defaults() {
	if c.Instances <= 0 {
		c.Instances = 1
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 64
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = 16 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.DeviceTimeout <= 0 {
		c.DeviceTimeout = 10 * time.Second
	}
}

// Limits of the timing parameters.
const (
	maxRepeat = 10000
	maxNumber = 1 << 24
)

// Server serves models. Make it with New, serve with ServeGRPC and
// ServeHTTP (or Handler), stop with Shutdown.
type Server struct {
	cfg     Config
	models  map[string]*model
	names   []string
	metrics *metrics
	ready   atomic.Bool
	gate    sync.RWMutex   // guards closed against runs.Add
	closed  bool           // Shutdown has drained the requests
	runs    sync.WaitGroup // requests under way in Infer
	mu      sync.Mutex
	stops   []func(context.Context) error // of the servers serving
	stopped bool                          // Shutdown began: serve no more
}

// model is one served model and its pool of instances.
type model struct {
	name     string
	path     string
	info     tn.ModelInfo
	ins      []tensorMeta
	outs     []tensorMeta
	idle     chan *instance
	all      []*instance
	queued   atomic.Int64
	maxQueue int64
	devs     []*deviceHandle // a model on devices (device.go): no Modules
}

// tensorMeta is an input or output: its protocol datatype and byte size.
type tensorMeta struct {
	tn.TensorInfo
	datatype string
	nbytes   int
}

// instance is one Module with buffers its inputs and outputs are staged in
// (8-byte aligned, so that they are viewed as slices of any element type).
type instance struct {
	dev  *deviceHandle // or, for a model on devices, the device
	mod  *tn.Module
	ins  [][]uint64
	outs [][]uint64
}

// New loads the models (Instances Modules of each) and returns a ready
// server. Errors name the file and what is wrong with it.
func New(cfg Config) (*Server, error) {
	cfg.defaults()
	s := &Server{cfg: cfg, models: map[string]*model{}}
	s.metrics = newMetrics()
	paths, err := expandModels(cfg.Models)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 && len(cfg.Devices) == 0 {
		return nil, errors.New("serve: no models: name shared libraries (.so) or a model repository folder")
	}
	// the device specs by NAME, in the order the names first come
	var boards [][]string
	byName := map[string]int{}
	for _, spec := range cfg.Devices {
		name, _, _ := strings.Cut(spec, "=")
		k, seen := byName[name]
		if !seen || name == "" {
			k = len(boards)
			byName[name] = k
			boards = append(boards, nil)
		}
		boards[k] = append(boards[k], spec)
	}
	for k := range len(paths) + len(boards) {
		var m *model
		var err error
		if k < len(paths) {
			m, err = loadModel(paths[k].name, paths[k].path, cfg)
		} else {
			m, err = loadDevices(boards[k-len(paths)], cfg, s.metrics)
		}
		if err != nil {
			s.closeModels()
			return nil, err
		}
		if old, dup := s.models[m.name]; dup {
			m.close()
			s.closeModels()
			return nil, fmt.Errorf("serve: two models named '%s' (%s and %s): name one NAME=PATH", m.name,
				old.path, m.path)
		}
		s.models[m.name] = m
		s.names = append(s.names, m.name)
	}
	sort.Strings(s.names)
	s.ready.Store(true)
	return s, nil
}

type namedPath struct{ name, path string }

// expandModels turns the Models arguments into libraries.
func expandModels(args []string) ([]namedPath, error) {
	var out []namedPath
	for _, a := range args {
		name, path := "", a
		if i := strings.IndexByte(a, '='); i > 0 && !strings.ContainsRune(a[:i], filepath.Separator) {
			name, path = a[:i], a[i+1:]
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("serve: model %q: %w", a, err)
		}
		if !st.IsDir() {
			out = append(out, namedPath{name, path})
			continue
		}
		if name != "" {
			return nil, fmt.Errorf("serve: model %q: a folder is a repository, its models are named by their libraries", a)
		}
		libs, _ := filepath.Glob(filepath.Join(path, "*.so"))
		sub, _ := filepath.Glob(filepath.Join(path, "*", "*.so"))
		libs = append(libs, sub...)
		if len(libs) == 0 {
			return nil, fmt.Errorf("serve: model repository %s holds no .so (in it or one folder down)", path)
		}
		sort.Strings(libs)
		for _, l := range libs {
			out = append(out, namedPath{"", l})
		}
	}
	return out, nil
}

// datatypes maps element types to the protocol's names.
var datatypes = map[string]string{
	"bool": "BOOL", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
	"uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
	"float32": "FP32", "float64": "FP64",
}

func describe(lib string, infos []tn.TensorInfo) ([]tensorMeta, error) {
	out := make([]tensorMeta, len(infos))
	for i, t := range infos {
		dt, ok := datatypes[t.DType.String()]
		if !ok || t.DType.Lanes != 1 {
			return nil, fmt.Errorf("serve: %s: tensor '%s' is %s, which the server does not serve", lib,
				t.Name, t.DType)
		}
		out[i] = tensorMeta{TensorInfo: t, datatype: dt, nbytes: int(t.NumElements()) * int(t.DType.Bits) / 8}
	}
	return out, nil
}

func loadModel(name, path string, cfg Config) (*model, error) {
	m := &model{path: path, idle: make(chan *instance, cfg.Instances), maxQueue: int64(cfg.QueueSize)}
	for k := 0; k < cfg.Instances; k++ {
		mod, err := tn.LoadModule(path)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("serve: %s: %w", path, err)
		}
		if k == 0 {
			m.info = mod.Info()
			m.name = name
			if m.name == "" {
				m.name = mod.Name()
			}
			if m.ins, err = describe(path, mod.Inputs()); err == nil {
				m.outs, err = describe(path, mod.Outputs())
			}
			if err != nil {
				mod.Close()
				return nil, err
			}
		}
		inst := &instance{mod: mod}
		for _, t := range m.ins {
			inst.ins = append(inst.ins, make([]uint64, (t.nbytes+7)/8+1))
		}
		for _, t := range m.outs {
			inst.outs = append(inst.outs, make([]uint64, (t.nbytes+7)/8+1))
		}
		m.all = append(m.all, inst)
		m.idle <- inst
	}
	return m, nil
}

func (m *model) close() {
	for _, inst := range m.all {
		inst.mod.Close()
	}
	m.all = nil
	for _, d := range m.devs {
		d.close()
	}
	m.devs = nil
}

func (s *Server) closeModels() {
	for _, m := range s.models {
		m.close()
	}
}

// Models lists the served models' names.
func (s *Server) Models() []string { return append([]string(nil), s.names...) }

// Ready is whether the server takes requests (false once Shutdown began).
func (s *Server) Ready() bool { return s.ready.Load() }

// lookup finds a model, checking the version asked for ("" or "1").
func (s *Server) lookup(name, version string) (*model, error) {
	m, ok := s.models[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "model '%s' is not served (served: %s)", name,
			strings.Join(s.names, ", "))
	}
	if version != "" && version != "1" {
		return nil, status.Errorf(codes.NotFound, "model '%s' has no version '%s' (it has version '1')", name,
			version)
	}
	return m, nil
}

// Input is one input tensor of a request.
type Input struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     []byte // row-major, little-endian
}

// Output is one output tensor of a response.
type Output struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     []byte
}

// Request is one inference request, as either protocol gives it.
type Request struct {
	Model, Version, ID string
	Inputs             []Input
	Outputs            []string // all when empty
	// Timing: Repeat > 0 times the model (Number runs per repeat, raised
	// so that a repeat lasts at least MinRepeatMs).
	Repeat, Number, MinRepeatMs int64
}

// Result is an inference's outputs, and the timing asked for.
type Result struct {
	Outputs       []Output
	RepeatSeconds []float64 // seconds per run, one per repeat
	Number        int64     // runs per repeat
	// RepeatInstructions: on a device that counts them (the emulated
	// board's SysTick under -icount), instructions per run, one per
	// repeat; nil elsewhere. Instructions, not cycles.
	RepeatInstructions []uint64
	// RepeatCycles: on an emulated board whose core the cycle estimate
	// prices (qemu-m4, qemu-m33), the estimated cycles a run of each
	// repeat, as RepeatInstructions (the Cortex-M4 timing table of
	// firmware/common/cycles.py applied to the instructions that ran).
	RepeatCycles []uint64
}

// checkRequest checks a request against the model's inputs and outputs and
// returns the inputs in the model's order and the outputs asked for.
func (m *model) checkRequest(r *Request) ([]*Input, []int, error) {
	bad := func(format string, args ...interface{}) error {
		return status.Errorf(codes.InvalidArgument, "model '%s': "+format, append([]interface{}{m.name}, args...)...)
	}
	if len(r.Inputs) != len(m.ins) {
		return nil, nil, bad("expected %d inputs (%s), got %d", len(m.ins), m.inputList(), len(r.Inputs))
	}
	ordered := make([]*Input, len(m.ins))
	for k := range r.Inputs {
		in := &r.Inputs[k]
		i := -1
		for j := range m.ins {
			if m.ins[j].Name == in.Name {
				i = j
			}
		}
		if i < 0 {
			return nil, nil, bad("no input '%s' (its inputs: %s)", in.Name, m.inputList())
		}
		if ordered[i] != nil {
			return nil, nil, bad("input '%s' given twice", in.Name)
		}
		want := &m.ins[i]
		if in.Datatype != want.datatype {
			return nil, nil, bad("input '%s' is %s, got datatype %s", in.Name, want.datatype, in.Datatype)
		}
		if !sameShape(in.Shape, want.Shape) {
			return nil, nil, bad("input '%s' has shape %v, got shape %v", in.Name, want.Shape, in.Shape)
		}
		if len(in.Data) != want.nbytes {
			return nil, nil, bad("input '%s' (%s %v) is %d bytes, got %d bytes", in.Name, want.datatype,
				want.Shape, want.nbytes, len(in.Data))
		}
		ordered[i] = in
	}
	var outs []int
	if len(r.Outputs) == 0 {
		for i := range m.outs {
			outs = append(outs, i)
		}
	}
	for _, name := range r.Outputs {
		i := -1
		for j := range m.outs {
			if m.outs[j].Name == name {
				i = j
			}
		}
		if i < 0 {
			names := make([]string, len(m.outs))
			for j := range m.outs {
				names[j] = "'" + m.outs[j].Name + "'"
			}
			return nil, nil, bad("no output '%s' (its outputs: %s)", name, strings.Join(names, ", "))
		}
		outs = append(outs, i)
	}
	if r.Repeat < 0 || r.Repeat > maxRepeat {
		return nil, nil, bad("parameter 'repeat' must be in [0, %d], got %d", maxRepeat, r.Repeat)
	}
	if r.Number < 0 || r.Number > maxNumber {
		return nil, nil, bad("parameter 'number' must be in [0, %d], got %d", maxNumber, r.Number)
	}
	if r.MinRepeatMs < 0 || r.MinRepeatMs > 60000 {
		return nil, nil, bad("parameter 'min_repeat_ms' must be in [0, 60000], got %d", r.MinRepeatMs)
	}
	if r.Repeat == 0 && (r.Number != 0 || r.MinRepeatMs != 0) {
		return nil, nil, bad("parameters 'number' and 'min_repeat_ms' need 'repeat' > 0")
	}
	return ordered, outs, nil
}

func (m *model) inputList() string {
	parts := make([]string, len(m.ins))
	for i, t := range m.ins {
		parts[i] = fmt.Sprintf("'%s' %s %v", t.Name, t.datatype, t.Shape)
	}
	return strings.Join(parts, ", ")
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ctxError is the status of a request whose context ended.
func ctxError(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return status.Errorf(codes.DeadlineExceeded, "%s: the request's deadline passed", what)
	}
	return status.Errorf(codes.Canceled, "%s: the request was cancelled", what)
}

// acquire takes an idle instance, waiting in the bounded queue.
func (s *Server) acquire(ctx context.Context, m *model) (*instance, error) {
	select {
	case inst := <-m.idle:
		return inst, nil
	default:
	}
	if n := m.queued.Add(1); n > m.maxQueue {
		m.queued.Add(-1)
		return nil, status.Errorf(codes.ResourceExhausted,
			"model '%s': %d requests are already waiting for an instance (the queue's bound; --queue)", m.name,
			m.maxQueue)
	}
	s.metrics.queue.WithLabelValues(m.name).Inc()
	defer func() {
		m.queued.Add(-1)
		s.metrics.queue.WithLabelValues(m.name).Dec()
	}()
	select {
	case inst := <-m.idle:
		return inst, nil
	case <-ctx.Done():
		return nil, ctxError(ctx, fmt.Sprintf("model '%s': waiting for an instance", m.name))
	}
}

// Infer runs one request: checks it, waits for an instance (bounded), sets
// the inputs, runs (or times) the model and copies the outputs. Errors are
// gRPC statuses: InvalidArgument, NotFound, ResourceExhausted,
// DeadlineExceeded, Canceled, Unavailable (shutting down), Internal.
func (s *Server) Infer(ctx context.Context, r *Request) (*Result, error) {
	s.gate.RLock()
	if s.closed {
		s.gate.RUnlock()
		return nil, status.Error(codes.Unavailable, "the server is shutting down")
	}
	s.runs.Add(1)
	s.gate.RUnlock()
	defer s.runs.Done()
	m, err := s.lookup(r.Model, r.Version)
	if err != nil {
		return nil, err
	}
	ins, outs, err := m.checkRequest(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	inst, err := s.acquire(ctx, m)
	if err != nil {
		return nil, err
	}
	s.metrics.inflight.WithLabelValues(m.name).Inc()
	defer func() {
		s.metrics.inflight.WithLabelValues(m.name).Dec()
		m.idle <- inst
	}()
	if ctx.Err() != nil {
		return nil, ctxError(ctx, fmt.Sprintf("model '%s'", m.name))
	}
	if inst.dev != nil {
		return s.inferDevice(ctx, m, inst.dev, ins, outs, r)
	}
	for i, in := range ins {
		if err := inst.setInput(m, i, in.Data); err != nil {
			return nil, status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
		}
	}
	res := &Result{}
	if r.Repeat > 0 {
		if err := s.time(ctx, m, inst, r, res); err != nil {
			return nil, err
		}
	} else if err := inst.mod.Run(); err != nil {
		return nil, status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
	}
	for _, i := range outs {
		data, err := inst.output(m, i)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
		}
		t := &m.outs[i]
		res.Outputs = append(res.Outputs, Output{Name: t.Name, Datatype: t.datatype,
			Shape: append([]int64(nil), t.Shape...), Data: data})
	}
	return res, nil
}

// time runs the model once to warm up, then Repeat times Number runs, each
// repeat timed in C (Module.Time); the context is checked between repeats,
// so a deadline or a cancellation ends the timing after the repeat under
// way. With MinRepeatMs, Number grows (as time_evaluator does) until one
// timed repeat of Number runs lasts at least MinRepeatMs: one cold warm-up
// run is slower than the runs after it, so it cannot set Number alone.
func (s *Server) time(ctx context.Context, m *model, inst *instance, r *Request, res *Result) error {
	number := r.Number
	if number == 0 {
		number = 1
	}
	if _, err := inst.mod.Time(1, 1); err != nil {
		return status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
	}
	for r.MinRepeatMs > 0 && number < maxNumber {
		if ctx.Err() != nil {
			return ctxError(ctx, fmt.Sprintf("model '%s': timing, while choosing 'number'", m.name))
		}
		ms, err := inst.mod.Time(int(number), 1)
		if err != nil {
			return status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
		}
		total := float64(number) * ms[0]
		if total >= float64(r.MinRepeatMs) {
			break
		}
		next := number * 2
		if ms[0] > 0 {
			// Aim past the target so one more round usually suffices.
			next = int64(math.Ceil(1.618 * float64(r.MinRepeatMs) / ms[0]))
		}
		if next <= number {
			next = number + 1
		}
		number = min(next, maxNumber)
	}
	res.Number = number
	for k := int64(0); k < r.Repeat; k++ {
		if ctx.Err() != nil {
			return ctxError(ctx, fmt.Sprintf("model '%s': timing, after %d of %d repeats", m.name, k, r.Repeat))
		}
		ms, err := inst.mod.Time(int(number), 1)
		if err != nil {
			return status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
		}
		res.RepeatSeconds = append(res.RepeatSeconds, ms[0]/1000)
	}
	return nil
}

// view is a staging buffer as a slice of n elements of T.
func view[T tn.Element](w []uint64, n int) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(&w[0])), n)
}

func bytesOf(w []uint64, n int) []byte { return view[byte](w, n) }

func setTyped[T tn.Element](mod *tn.Module, name string, w []uint64, n int) error {
	return tn.SetInputSlice(mod, name, view[T](w, n))
}

func copyTyped[T tn.Element](mod *tn.Module, i int, w []uint64, n int) error {
	return tn.CopyOutputSlice(mod, i, view[T](w, n))
}

func (inst *instance) setInput(m *model, i int, data []byte) error {
	t := &m.ins[i]
	w := inst.ins[i]
	copy(bytesOf(w, t.nbytes), data)
	n := int(t.NumElements())
	switch t.datatype {
	case "INT8":
		return setTyped[int8](inst.mod, t.Name, w, n)
	case "UINT8", "BOOL":
		return setTyped[uint8](inst.mod, t.Name, w, n)
	case "INT16":
		return setTyped[int16](inst.mod, t.Name, w, n)
	case "UINT16":
		return setTyped[uint16](inst.mod, t.Name, w, n)
	case "INT32":
		return setTyped[int32](inst.mod, t.Name, w, n)
	case "UINT32":
		return setTyped[uint32](inst.mod, t.Name, w, n)
	case "INT64":
		return setTyped[int64](inst.mod, t.Name, w, n)
	case "UINT64":
		return setTyped[uint64](inst.mod, t.Name, w, n)
	case "FP32":
		return setTyped[float32](inst.mod, t.Name, w, n)
	case "FP64":
		return setTyped[float64](inst.mod, t.Name, w, n)
	}
	return fmt.Errorf("input '%s': datatype %s not served", t.Name, t.datatype)
}

func (inst *instance) output(m *model, i int) ([]byte, error) {
	t := &m.outs[i]
	w := inst.outs[i]
	n := int(t.NumElements())
	var err error
	switch t.datatype {
	case "INT8":
		err = copyTyped[int8](inst.mod, i, w, n)
	case "UINT8", "BOOL":
		err = copyTyped[uint8](inst.mod, i, w, n)
	case "INT16":
		err = copyTyped[int16](inst.mod, i, w, n)
	case "UINT16":
		err = copyTyped[uint16](inst.mod, i, w, n)
	case "INT32":
		err = copyTyped[int32](inst.mod, i, w, n)
	case "UINT32":
		err = copyTyped[uint32](inst.mod, i, w, n)
	case "INT64":
		err = copyTyped[int64](inst.mod, i, w, n)
	case "UINT64":
		err = copyTyped[uint64](inst.mod, i, w, n)
	case "FP32":
		err = copyTyped[float32](inst.mod, i, w, n)
	case "FP64":
		err = copyTyped[float64](inst.mod, i, w, n)
	default:
		err = fmt.Errorf("output '%s': datatype %s not served", t.Name, t.datatype)
	}
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), bytesOf(w, t.nbytes)...), nil
}

// Shutdown stops taking requests (readiness turns false, new requests are
// answered UNAVAILABLE), lets the servers started by ServeGRPC and ServeHTTP
// finish the requests in flight, and closes the Modules; if ctx ends first
// the servers are stopped at once (the runs under way still finish before
// their Modules close).
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	s.mu.Lock()
	stops := s.stops
	s.stops = nil
	s.stopped = true
	s.mu.Unlock()
	var first error
	for _, stop := range stops {
		if err := stop(ctx); err != nil && first == nil {
			first = err
		}
	}
	s.gate.Lock()
	done := s.closed
	s.closed = true
	s.gate.Unlock()
	s.runs.Wait()
	if !done {
		s.closeModels()
	}
	return first
}

// onShutdown registers how Shutdown stops a server; false when Shutdown
// began already (then the server must not start).
func (s *Server) onShutdown(stop func(context.Context) error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.stops = append(s.stops, stop)
	return true
}
