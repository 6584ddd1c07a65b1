package tvmnode

// The host executor from Go: run a function of an IR module on Go slices
// through the crt kernels. Like Python and Rust, this goes through the
// registered functions only ("runtime.Executor", "runtime.ExecutorRun",
// "runtime.ExecutorInputs", "runtime.ExecutorOutputs",
// "runtime.ExecutorStats", "runtime.ExecutorProfile",
// "runtime.ExecutorThreads"); the C executor
// decides everything (typing, lowering, checking the inputs against the
// parameter types, running the kernels), and this file only converts:
// slices into new tensors and tensors back into slices, through the public
// TnTensorObj and TnShapeObj layouts. Slices are copied in both directions,
// since C may not keep pointers into Go memory.

// #include "helpers.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// TensorInfo describes one input or output of an Executor or a Module.
type TensorInfo struct {
	Name  string  // an executor's parameter name (inputs) or "output0", "output1", ... (outputs); a model's tensor name
	Shape []int64 // the dimensions
	DType DataType
	// The quantization of a compiled model's tensor, real = Scale * (q -
	// ZeroPoint); zero when it is not quantized (and for an Executor).
	Scale     float64
	ZeroPoint int32
}

// NumElements is the product of the dimensions (1 for a scalar).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// ExecutorStats are an executor's statistics. The first five describe the
// program and do not change; the next three count runs while profiling is
// on (SetProfiling); the last two say how runs are cut over threads.
type ExecutorStats struct {
	Steps           int64 // kernel calls per run
	ArenaBytes      int64 // bytes of the arena holding the intermediates and kernel scratch (the plan's size)
	ArenaLowerBound int64 // the largest total of intermediates alive at one step
	ScratchBytes    int64 // the most scratch bytes one kernel call takes (inside the arena)
	MACs            int64 // multiply-accumulates per run (convolutions and dense layers)
	Runs            int64 // runs timed since profiling was switched on
	RunNs           int64 // their total time, in nanoseconds
	KernelNs        int64 // of that, the time inside kernel calls
	Threads         int64 // the threads a run takes (1: off; SetThreads)
	SplitSteps      int64 // the steps a run cuts over those threads
}

// Executor runs one function of an IR module on Go slices, through the crt
// kernels.
//
// Making one types the module (InferType) if it is not typed yet and
// lowers the function once: a module that does not type-check is a
// TypeError, an operator with no kernel for its types a
// NotImplementedError naming it. The same module before and after the pass
// pipeline (FuseOps included) gives the same outputs.
//
// An Executor may be used from several goroutines. The C program runs one
// call at a time (a second concurrent run would be a RuntimeError there),
// so the Executor takes turns: a Run waits for the one in progress, and
// Stats never reads the profiling counters while a run writes them. For
// runs in parallel, make one Executor per goroutine.
//
// Close releases the program at once; an Executor that is never closed
// releases it when the collector finalizes its handles, as every handle of
// this package does.
type Executor struct {
	mu      sync.Mutex
	prog    Object   // the kernel.Program
	run     Function // "runtime.ExecutorRun", looked up once
	inputs  []TensorInfo
	outputs []TensorInfo
}

// NewExecutor makes an executor for function entry of mod ("main" when
// entry is not given; KeyError if the module has no such function).
func NewExecutor(mod IRModule, entry ...string) (*Executor, error) {
	if len(entry) > 1 {
		return nil, Errorf(TypeError, "NewExecutor: at most one entry, got %d", len(entry))
	}
	if err := checkType(mod.Object, "ir.IRModule", "NewExecutor"); err != nil {
		return nil, err
	}
	args := []interface{}{mod}
	if len(entry) == 1 {
		args = append(args, entry[0])
	}
	prog, err := callObject("runtime.Executor", args...)
	if err != nil {
		return nil, err
	}
	e := &Executor{prog: prog}
	if e.inputs, err = describe("runtime.ExecutorInputs", prog); err == nil {
		if e.outputs, err = describe("runtime.ExecutorOutputs", prog); err == nil {
			e.run, err = GetGlobal("runtime.ExecutorRun")
		}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Inputs describes the inputs, in the function's parameter order.
func (e *Executor) Inputs() []TensorInfo { return cloneInfos(e.inputs) }

// Outputs describes the outputs, in order (a tuple result flattened).
func (e *Executor) Outputs() []TensorInfo { return cloneInfos(e.outputs) }

// Run runs on one value per input, in order, and returns one Go slice per
// output, of the output's element type ([]float32 for float32, []int8 for
// int8, ...; []bool for bool).
//
// An input is a slice of float32, float64, int8, int16, int32, int64,
// uint8, uint16, uint32, uint64 or bool, copied into a new tensor of the
// input's shape (row-major), or a handle to a tn.Tensor, passed as it is.
// The executor checks them: a wrong count, or a slice of another element
// type or length (which goes in one-dimensional), is a TypeError naming
// the input and both types; a value of any other Go type is a TypeError
// naming the input here.
func (e *Executor) Run(inputs ...interface{}) ([]interface{}, error) {
	args := make([]interface{}, 0, len(inputs)+1)
	var temps []Object
	defer func() {
		for _, t := range temps {
			t.Release()
		}
	}()
	args = append(args, nil) // the program, set under the lock
	for i, v := range inputs {
		if h, ok := v.(Handle); ok {
			args = append(args, h)
			continue
		}
		var info *TensorInfo
		if i < len(e.inputs) {
			info = &e.inputs[i]
		}
		t, err := tensorOf(v, info, i)
		if err != nil {
			return nil, err
		}
		temps = append(temps, t)
		args = append(args, t)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.prog.IsNil() {
		return nil, NewError(ValueError, "Executor.Run: the executor is closed")
	}
	args[0] = e.prog
	ret, err := e.run.Call(args...)
	if err != nil {
		return nil, err
	}
	arr, ok := ret.(Array)
	if !ok {
		return nil, Errorf(TypeError, "Executor.Run: runtime.ExecutorRun returned %T, not an array", ret)
	}
	defer arr.Release()
	outs, err := arr.Objects()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, o := range outs {
			o.Release()
		}
	}()
	res := make([]interface{}, len(outs))
	for i, o := range outs {
		if res[i], err = sliceOf(o, i); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Stats reads the executor's statistics.
func (e *Executor) Stats() (ExecutorStats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.prog.IsNil() {
		return ExecutorStats{}, NewError(ValueError, "Executor.Stats: the executor is closed")
	}
	ret, err := callObject("runtime.ExecutorStats", e.prog)
	if err != nil {
		return ExecutorStats{}, err
	}
	defer ret.Release()
	m := Map{ret}
	var s ExecutorStats
	for _, f := range []struct {
		key string
		dst *int64
	}{{"steps", &s.Steps}, {"arena_bytes", &s.ArenaBytes},
		{"arena_lower_bound", &s.ArenaLowerBound}, {"scratch_bytes", &s.ScratchBytes},
		{"macs", &s.MACs}, {"runs", &s.Runs}, {"run_ns", &s.RunNs},
		{"kernel_ns", &s.KernelNs}, {"threads", &s.Threads},
		{"split_steps", &s.SplitSteps}} {
		v, err := m.Get(f.key)
		if err != nil {
			return ExecutorStats{}, err
		}
		n, ok := v.(int64)
		if !ok {
			return ExecutorStats{}, Errorf(TypeError, "Executor.Stats: %q is %T, not an integer", f.key, v)
		}
		*f.dst = n
	}
	return s, nil
}

// SetProfiling switches timing of runs and kernel calls on or off; either
// resets the counters Stats reports. Off by default: timing costs two clock
// reads per kernel call.
func (e *Executor) SetProfiling(on bool) error {
	return e.setting("Executor.SetProfiling", "runtime.ExecutorProfile", on)
}

// SetThreads runs the executor's largest convolutions and dense layers over
// n threads from now on (a pool made once, each thread a band of output
// rows or a block of output features); 1, the default, is off. int8 outputs
// are the same bytes for any n; n outside 1..64 is a ValueError.
func (e *Executor) SetThreads(n int) error {
	return e.setting("Executor.SetThreads", "runtime.ExecutorThreads", int64(n))
}

// setting calls the registered function fn(program, value) under the lock.
func (e *Executor) setting(who, fn string, value interface{}) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.prog.IsNil() {
		return NewError(ValueError, who+": the executor is closed")
	}
	f, err := GetGlobal(fn)
	if err != nil {
		return err
	}
	defer f.Release()
	_, err = f.Call(e.prog, value)
	return err
}

// Close releases the program now (waiting for a run in progress). Methods
// called afterwards return a ValueError; closing again does nothing. The
// error is always nil (Close satisfies io.Closer).
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prog.Release()
	e.run.Release()
	return nil
}

// callObject calls a registered function whose result is an object, and
// returns it as a handle the caller releases.
func callObject(name string, args ...interface{}) (Object, error) {
	f, err := GetGlobal(name)
	if err != nil {
		return Object{}, err
	}
	defer f.Release()
	ret, err := f.Call(args...)
	if err != nil {
		return Object{}, err
	}
	h, ok := ret.(Handle)
	if !ok {
		return Object{}, Errorf(TypeError, "%s returned %T, not an object", name, ret)
	}
	return h.AsObject(), nil
}

// describe reads the inputs or outputs of a program (name is
// "runtime.ExecutorInputs" or "runtime.ExecutorOutputs").
func describe(name string, prog Object) ([]TensorInfo, error) {
	list, err := callObject(name, prog)
	if err != nil {
		return nil, err
	}
	defer list.Release()
	return tensorInfos(Array{list})
}

// tensorInfos reads a list of {name, shape, dtype[, scale, zero_point]}
// maps, as the executor and Modules describe their tensors.
func tensorInfos(list Array) ([]TensorInfo, error) {
	var infos []TensorInfo
	err := eachMap(list, func(n int) { infos = make([]TensorInfo, n) }, func(i int, m Map) error {
		n, err := m.Get("name")
		if err != nil {
			return err
		}
		d, err := m.Get("dtype")
		if err != nil {
			return err
		}
		s, err := m.Get("shape")
		if err != nil {
			return err
		}
		shape, _ := s.(Object)
		dims, err := shapeDims(shape)
		shape.Release()
		if err != nil {
			return err
		}
		ds, _ := d.(string)
		dt, err := ParseDataType(ds)
		if err != nil {
			return err
		}
		ns, _ := n.(string)
		infos[i] = TensorInfo{Name: ns, Shape: dims, DType: dt}
		if v, err := m.Get("scale"); err == nil {
			infos[i].Scale, _ = v.(float64)
		}
		if v, err := m.Get("zero_point"); err == nil {
			z, _ := v.(int64)
			infos[i].ZeroPoint = int32(z)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// eachMap calls start with the number of items of a list of maps, then f
// with each item and its index, stopping at the first error; the items
// are released after.
func eachMap(list Array, start func(n int), f func(i int, m Map) error) error {
	items, err := list.Objects()
	if err != nil {
		return err
	}
	defer func() {
		for _, o := range items {
			o.Release()
		}
	}()
	start(len(items))
	for i, item := range items {
		if err := f(i, Map{item}); err != nil {
			return err
		}
	}
	return nil
}

// shapeDims copies a tn.Shape's dimensions (the public TnShapeObj layout).
func shapeDims(o Object) ([]int64, error) {
	if err := checkType(o, "tn.Shape", "shape"); err != nil {
		return nil, err
	}
	s := (*C.TnShapeObj)(unsafe.Pointer(o.ptr()))
	dims := make([]int64, int(s.ndim))
	if len(dims) > 0 {
		copy(dims, unsafe.Slice((*int64)(unsafe.Pointer(s.data)), len(dims)))
	}
	runtime.KeepAlive(o.r)
	return dims, nil
}

func cloneInfos(in []TensorInfo) []TensorInfo {
	out := make([]TensorInfo, len(in))
	for i, t := range in {
		out[i] = t
		out[i].Shape = append([]int64(nil), t.Shape...)
	}
	return out
}

// Element types a tensor and a Go slice share, besides the exported ones.
var (
	int16Type  = DataType{0, 16, 1}
	uint16Type = DataType{1, 16, 1}
	uint32Type = DataType{1, 32, 1}
	uint64Type = DataType{1, 64, 1}
)

// rawBytes views a slice's elements as bytes.
func rawBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// fromBytes copies bytes into a new slice of T.
func fromBytes[T any](b []byte) []T {
	var zero T
	out := make([]T, len(b)/int(unsafe.Sizeof(zero)))
	copy(rawBytes(out), b)
	return out
}

// tensorOf copies slice v, input i, into a new CPU tensor: of the input's
// shape when v has as many elements as it (info may be nil for an input
// beyond the function's), one-dimensional otherwise.
func tensorOf(v interface{}, info *TensorInfo, i int) (Object, error) {
	var raw []byte
	var n int
	var dt DataType
	switch s := v.(type) {
	case []float32:
		raw, n, dt = rawBytes(s), len(s), Float32
	case []float64:
		raw, n, dt = rawBytes(s), len(s), Float64
	case []int8:
		raw, n, dt = rawBytes(s), len(s), Int8
	case []int16:
		raw, n, dt = rawBytes(s), len(s), int16Type
	case []int32:
		raw, n, dt = rawBytes(s), len(s), Int32
	case []int64:
		raw, n, dt = rawBytes(s), len(s), Int64
	case []uint8:
		raw, n, dt = rawBytes(s), len(s), Uint8
	case []uint16:
		raw, n, dt = rawBytes(s), len(s), uint16Type
	case []uint32:
		raw, n, dt = rawBytes(s), len(s), uint32Type
	case []uint64:
		raw, n, dt = rawBytes(s), len(s), uint64Type
	case []bool: // Go stores a bool as one byte, 0 or 1, as DLPack's bool
		raw, n, dt = rawBytes(s), len(s), Bool
	default:
		name := ""
		if info != nil {
			name = fmt.Sprintf(" ('%s')", info.Name)
		}
		return Object{}, Errorf(TypeError, "Executor.Run: input %d%s: a Go %T is not a tensor "+
			"(pass a slice of a numeric type or bool, or a tn.Tensor)", i, name, v)
	}
	shape := []int64{int64(n)}
	if info != nil && info.NumElements() == int64(n) {
		shape = info.Shape
	}
	var sp *C.int64_t
	if len(shape) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	t, err := cobj("Executor.Run", func() *C.TnObject {
		return C.tn_tensor_empty(sp, C.int32_t(len(shape)), dt.c(), C.DLDevice{device_type: C.kDLCPU})
	})
	if err != nil {
		return Object{}, err
	}
	copy(tensorBytes(t), raw)
	runtime.KeepAlive(t.r)
	return t, nil
}

// tensorBytes views a compact tensor's elements (the public TnTensorObj
// layout); valid while the tensor lives.
func tensorBytes(t Object) []byte {
	p := t.ptr()
	n := int(C.tn_tensor_nbytes(p))
	if n <= 0 {
		return nil
	}
	dl := &(*C.TnTensorObj)(unsafe.Pointer(p)).dl
	return unsafe.Slice((*byte)(unsafe.Add(dl.data, uintptr(dl.byte_offset))), n)
}

// sliceOf copies output i, a new compact CPU tensor, into a Go slice of
// its element type.
func sliceOf(t Object, i int) (interface{}, error) {
	if err := checkType(t, "tn.Tensor", "Executor.Run"); err != nil {
		return nil, err
	}
	dl := &(*C.TnTensorObj)(unsafe.Pointer(t.ptr())).dl
	dt := DataType{uint8(dl.dtype.code), uint8(dl.dtype.bits), uint16(dl.dtype.lanes)}
	b := tensorBytes(t)
	defer runtime.KeepAlive(t.r)
	switch dt {
	case Float32:
		return fromBytes[float32](b), nil
	case Float64:
		return fromBytes[float64](b), nil
	case Int8:
		return fromBytes[int8](b), nil
	case int16Type:
		return fromBytes[int16](b), nil
	case Int32:
		return fromBytes[int32](b), nil
	case Int64:
		return fromBytes[int64](b), nil
	case Uint8:
		return fromBytes[uint8](b), nil
	case uint16Type:
		return fromBytes[uint16](b), nil
	case uint32Type:
		return fromBytes[uint32](b), nil
	case uint64Type:
		return fromBytes[uint64](b), nil
	case Bool:
		out := make([]bool, len(b))
		for k, x := range b {
			out[k] = x != 0
		}
		return out, nil
	}
	return nil, Errorf(TypeError, "Executor.Run: output %d has element type %s, which has no Go slice type", i, dt)
}
