package tvmnode

// Compiled models as runtime Modules (tvmnode/module.h): a model compiled
// ahead of time (docs/mlf.md) and built into a shared library, or linked
// into the program as the "system library", run from Go on Go slices. The
// C Module does the work (pools, buffers, checks, the run); this file
// describes it once when it is opened, checks Go slices against that
// description before a cgo call (so a wrong dtype or length never reaches
// C), and keeps the hot calls (SetInput, Run, Output) to one cgo call
// each, whose C helper takes a failing call's error on the thread that
// raised it (no thread lock, no closure, no allocation in Go).
//
// One Module serves one goroutine at a time. The Go side enforces that with
// an atomic state word (busy, closed) rather than a mutex: a second
// goroutine calling while a call is under way gets ErrBusy at once, and
// Close waits for nobody, the last call in progress releasing the C
// object. The C Module has the same busy flag of its own, which catches
// sharing with other languages.

/*
#include "helpers.h"
#include <tvmnode/module.h>

typedef struct {
  int rc;
  TnObject *err;
} TngoStatus;

static inline TngoStatus tngo_status(int rc) {
  TngoStatus s = {rc, rc ? tn_error_take_raised() : NULL};
  return s;
}
static inline TngoStatus tngo_module_run(uintptr_t m) {
  return tngo_status(tn_module_run((TnObject *)m));
}
static inline TngoStatus tngo_module_reset(uintptr_t m) {
  return tngo_status(tn_module_reset((TnObject *)m));
}
static inline TngoStatus tngo_module_set_input_bytes(uintptr_t m, int32_t i,
                                                     const void *data, size_t n) {
  return tngo_status(tn_module_set_input_bytes((TnObject *)m, i, data, n));
}
static inline TngoStatus tngo_module_set_input(uintptr_t m, int32_t i, uintptr_t t) {
  return tngo_status(tn_module_set_input((TnObject *)m, i, (TnObject *)t));
}
static inline TngoStatus tngo_module_set_workspace(uintptr_t m, int32_t i, uintptr_t t) {
  return tngo_status(tn_module_set_workspace_tensor((TnObject *)m, i, (TnObject *)t));
}
static inline TngoStatus tngo_module_set_threads(uintptr_t m, int64_t n) {
  return tngo_status(tn_module_set_threads((TnObject *)m, n));
}
static inline TngoStatus tngo_module_copy_output(uintptr_t m, int32_t i, void *out, size_t n) {
  return tngo_status(tn_module_copy_output((TnObject *)m, i, out, n));
}
typedef struct {
  TnObject *obj;
  TnObject *err;
} TngoObject;
static inline TngoObject tngo_module_get_output(uintptr_t m, int32_t i) {
  TngoObject r = {tn_module_get_output((TnObject *)m, i), NULL};
  if (r.obj == NULL) r.err = tn_error_take_raised();
  return r;
}
*/
import "C"

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Sentinel errors of Modules. Every error a Module returns is a *Error
// (kind, message naming the model and the input, the C frames); these
// classify it further: errors.Is(err, tvmnode.ErrShape) is true for an
// error of that class (and errors.Is(err, tvmnode.ValueError) for its
// kind, as always).
var (
	// ErrShape: an input of the wrong shape or number of elements, or
	// a workspace tensor too small, misaligned or not compact CPU
	// memory (kind ValueError).
	ErrShape = errors.New("tvmnode: wrong shape")
	// ErrDType: an input of the wrong element type (TypeError), or a
	// *Tensor argument that is not a live tensor (TypeError, or
	// ValueError for a closed one).
	ErrDType = errors.New("tvmnode: wrong element type")
	// ErrName: no input, output, workspace pool or model of that name or
	// index (KeyError or IndexError).
	ErrName = errors.New("tvmnode: no such name")
	// ErrClosed: the Module is closed (ValueError).
	ErrClosed = errors.New("tvmnode: the module is closed")
	// ErrBusy: the Module is in use by another goroutine or thread
	// (RuntimeError); make one Module per goroutine.
	ErrBusy = errors.New("tvmnode: the module is in use")
	// ErrLoad: the library cannot be loaded: missing (then errors.Is(err,
	// fs.ErrNotExist) holds too), not a shared library, or unresolved
	// symbols (OSError).
	ErrLoad = errors.New("tvmnode: cannot load the library")
	// ErrNotModel: the library loaded but holds no model this runtime
	// reads (OSError, or ValueError for a malformed descriptor).
	ErrNotModel = errors.New("tvmnode: not a model library")
	// ErrNotReady: a run before every input was set, or outputs asked
	// for before a successful run (RuntimeError).
	ErrNotReady = errors.New("tvmnode: inputs or outputs not ready")
)

// tag adds classes to an *Error (returned as it is otherwise).
func tag(err error, classes ...error) error {
	var e *Error
	if errors.As(err, &e) {
		e.mu.Lock()
		e.classes = append(e.classes, classes...)
		e.mu.Unlock()
	}
	return err
}

// TensorInfo's Scale and ZeroPoint describe quantized tensors (zero when
// not quantized): real = Scale * (q - ZeroPoint).

// ModelInfo describes a compiled model.
type ModelInfo struct {
	Name           string
	Version        string // of the generator
	MACs           int64  // multiply-accumulates per inference
	WorkspaceBytes int64  // of the workspace pools
	ConstantBytes  int64  // weights, biases, tables
	// StateBytes is the state pool of a streaming model (LSTM, SVDF,
	// resource variables), kept across runs; 0 for a model without state.
	StateBytes int64
	Devices    []string
}

// PoolInfo describes a workspace pool of a compiled model: the memory
// its intermediate tensors (and, compiled with --io-in-pool, its inputs
// and outputs) live in during a run.
type PoolInfo struct {
	Name      string
	Size      int64 // bytes
	Alignment int64 // of the pool's start, in bytes
}

// Module is one instance of a compiled model: its pools, input and output
// buffers, and the library it came from (kept loaded while the Module or
// any output tensor of it lives).
//
// A Module serves one goroutine at a time: a call while another goroutine's
// call on the same Module is under way fails with ErrBusy (never a race).
// For parallel inference make one Module per goroutine; Modules of one
// library share its code and constants and nothing else.
//
// Close releases the Module (output tensors keep what they view alive); a
// Module never closed is released by a finalizer.
type Module struct {
	state atomic.Int32 // stateBusy | stateClosed
	p     *C.TnObject  // owned; released once, by Close or the last call
	info  ModelInfo
	ins   []TensorInfo
	outs  []TensorInfo
	pools []PoolInfo
	inN   []int // bytes of each input
	outN  []int
}

const (
	stateBusy   = 1
	stateClosed = 2
)

// LoadModule opens the model in the shared library at path (built from a
// compiled model: `tvmnode compile MODEL --shared lib.so`). A library that
// holds several models needs the model's name. Errors: ErrLoad, ErrNotModel,
// ErrName (no model of that name, or a name needed).
func LoadModule(path string, name ...string) (*Module, error) {
	if len(name) > 1 {
		return nil, Errorf(TypeError, "LoadModule: at most one model name, got %d", len(name))
	}
	// C strings end at a NUL: such a path or name would name another
	if k := strings.IndexByte(path, 0); k >= 0 {
		return nil, tag(Errorf(ValueError, "LoadModule: the path holds a NUL byte at %d", k), ErrLoad)
	}
	if len(name) == 1 {
		if k := strings.IndexByte(name[0], 0); k >= 0 {
			return nil, tag(Errorf(ValueError, "LoadModule: the model name holds a NUL byte at %d",
				k), ErrName)
		}
	}
	if _, err := os.Stat(path); err != nil && errors.Is(err, fs.ErrNotExist) {
		e := Errorf("OSError", "LoadModule: cannot load '%s': no such file", path)
		return nil, tag(e, ErrLoad, fs.ErrNotExist)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cname *C.char
	if len(name) == 1 {
		cname = C.CString(name[0])
		defer C.free(unsafe.Pointer(cname))
	}
	o, err := cobj("LoadModule", func() *C.TnObject { return C.tn_module_load(cpath, cname) })
	if err != nil {
		return nil, classifyLoad(err)
	}
	return newModule(o)
}

// SystemModule opens model name of the system library: models compiled
// with -DTVMGEN_SYSTEM_LIB and linked into the program (ErrName when
// there is none of that name).
func SystemModule(name string) (*Module, error) {
	if k := strings.IndexByte(name, 0); k >= 0 {
		return nil, tag(Errorf(ValueError, "SystemModule: the model name holds a NUL byte at %d",
			k), ErrName)
	}
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	o, err := cobj("SystemModule", func() *C.TnObject { return C.tn_module_system(c) })
	if err != nil {
		return nil, classifyLoad(err)
	}
	return newModule(o)
}

func classifyLoad(err error) error {
	switch kindOfErr(err) {
	case "OSError":
		if strings.Contains(err.Error(), "holds no model") {
			return tag(err, ErrNotModel)
		}
		return tag(err, ErrLoad)
	case KeyError:
		return tag(err, ErrName)
	case ValueError: // a descriptor this runtime does not read
		return tag(err, ErrNotModel)
	}
	return err
}

func kindOfErr(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind()
	}
	return ""
}

// newModule describes the Module o (its reference moves to the Module).
func newModule(o Object) (*Module, error) {
	defer o.Release() // a no-op once detached
	d, err := callObject("runtime.ModuleDescribe", o)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	desc := Map{d}
	m := &Module{}
	strs := []struct {
		key string
		dst *string
	}{{"name", &m.info.Name}, {"version", &m.info.Version}}
	for _, f := range strs {
		v, err := desc.Get(f.key)
		if err != nil {
			return nil, err
		}
		*f.dst, _ = v.(string)
	}
	ints := []struct {
		key string
		dst *int64
	}{{"macs", &m.info.MACs}, {"workspace_bytes", &m.info.WorkspaceBytes},
		{"constant_bytes", &m.info.ConstantBytes}, {"state_bytes", &m.info.StateBytes}}
	for _, f := range ints {
		v, err := desc.Get(f.key)
		if err != nil {
			return nil, err
		}
		*f.dst, _ = v.(int64)
	}
	if v, err := desc.Get("devices"); err == nil {
		if a, ok := v.(Array); ok {
			m.info.Devices, _ = a.Strings()
			a.Release()
		}
	}
	for _, io := range []struct {
		key   string
		infos *[]TensorInfo
		sizes *[]int
	}{{"inputs", &m.ins, &m.inN}, {"outputs", &m.outs, &m.outN}} {
		v, err := desc.Get(io.key)
		if err != nil {
			return nil, err
		}
		list, ok := v.(Array)
		if !ok {
			return nil, Errorf(TypeError, "runtime.ModuleDescribe: %q is %T, not a list", io.key, v)
		}
		*io.infos, err = tensorInfos(list)
		list.Release()
		if err != nil {
			return nil, err
		}
		for _, t := range *io.infos {
			*io.sizes = append(*io.sizes, int(t.NumElements())*int(t.DType.Bits/8)*int(t.DType.Lanes))
		}
	}
	v, err := desc.Get("workspace_pools")
	if err != nil {
		return nil, err
	}
	list, ok := v.(Array)
	if !ok {
		return nil, Errorf(TypeError, "runtime.ModuleDescribe: \"workspace_pools\" is %T, not a list", v)
	}
	m.pools, err = poolInfos(list)
	list.Release()
	if err != nil {
		return nil, err
	}
	m.p = (*C.TnObject)(o.Detach())
	runtime.SetFinalizer(m, (*Module).finalize)
	return m, nil
}

// poolInfos reads a list of {name, size, alignment} maps.
func poolInfos(list Array) ([]PoolInfo, error) {
	var pools []PoolInfo
	err := eachMap(list, func(n int) { pools = make([]PoolInfo, n) }, func(i int, d Map) error {
		n, err := d.Get("name")
		if err != nil {
			return err
		}
		pools[i].Name, _ = n.(string)
		for _, f := range []struct {
			key string
			dst *int64
		}{{"size", &pools[i].Size}, {"alignment", &pools[i].Alignment}} {
			v, err := d.Get(f.key)
			if err != nil {
				return err
			}
			*f.dst, _ = v.(int64)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pools, nil
}

func (m *Module) finalize() {
	if m.state.Load()&stateClosed == 0 {
		C.tn_object_release(m.p)
	}
}

// acquire takes the Module for one call (ErrClosed, ErrBusy otherwise).
func (m *Module) acquire(who string) error {
	if m == nil {
		return tag(NewError(ValueError, who+": the module is nil"), ErrClosed)
	}
	if m.state.CompareAndSwap(0, stateBusy) {
		return nil
	}
	if m.state.Load()&stateClosed != 0 {
		return tag(Errorf(ValueError, "%s: model '%s': the module is closed", who, m.info.Name), ErrClosed)
	}
	return tag(Errorf(RuntimeError, "%s: model '%s': the module is in use by another goroutine "+
		"(a Module serves one goroutine at a time; make one Module per goroutine)", who, m.info.Name), ErrBusy)
}

// release ends a call; a Close that came meanwhile releases the C object.
func (m *Module) release() {
	if m.state.Add(-stateBusy) == stateClosed {
		m.free()
	}
	runtime.KeepAlive(m)
}

func (m *Module) free() {
	runtime.SetFinalizer(m, nil)
	C.tn_object_release(m.p)
}

// Close releases the Module now, or, when a call of another goroutine is
// under way, as that call ends. Later calls fail with ErrClosed; closing
// again does nothing. Output tensors stay valid (each holds the Module's
// memory). The error is always nil (io.Closer).
func (m *Module) Close() error {
	if m == nil {
		return nil
	}
	for {
		s := m.state.Load()
		if s&stateClosed != 0 {
			return nil
		}
		if m.state.CompareAndSwap(s, s|stateClosed) {
			if s&stateBusy == 0 {
				m.free()
			}
			return nil
		}
	}
}

// Info describes the model.
func (m *Module) Info() ModelInfo {
	i := m.info
	i.Devices = append([]string(nil), i.Devices...)
	return i
}

// Name is the model's name.
func (m *Module) Name() string { return m.info.Name }

// Inputs describes the inputs, in order: name, shape, dtype, and the
// quantization (Scale, ZeroPoint).
func (m *Module) Inputs() []TensorInfo { return cloneInfos(m.ins) }

// Outputs describes the outputs, in order.
func (m *Module) Outputs() []TensorInfo { return cloneInfos(m.outs) }

// Pools describes the workspace pools, in order (the indexes SetWorkspace
// takes).
func (m *Module) Pools() []PoolInfo {
	out := make([]PoolInfo, len(m.pools))
	copy(out, m.pools)
	return out
}

// inputIndex finds an input by name (ErrName listing the inputs).
func (m *Module) inputIndex(who, name string) (int, error) {
	for i := range m.ins {
		if m.ins[i].Name == name {
			return i, nil
		}
	}
	names := make([]string, len(m.ins))
	for i := range m.ins {
		names[i] = "'" + m.ins[i].Name + "'"
	}
	return -1, tag(Errorf(KeyError, "%s: model '%s' has no input '%s' (its inputs: %s)",
		who, m.info.Name, name, strings.Join(names, ", ")), ErrName)
}

// SetInput copies data into input name: a slice of the input's element
// type ([]int8 for an int8 input, []float32 for float32, ...) with as many
// elements as the input has (row-major), or a *Tensor (as SetInputTensor).
// Errors: ErrName, ErrDType (a slice of another element type), ErrShape
// (another length), ErrBusy, ErrClosed.
func (m *Module) SetInput(name string, data interface{}) error {
	switch s := data.(type) {
	case []int8:
		return SetInputSlice(m, name, s)
	case []uint8:
		return SetInputSlice(m, name, s)
	case []int16:
		return SetInputSlice(m, name, s)
	case []uint16:
		return SetInputSlice(m, name, s)
	case []int32:
		return SetInputSlice(m, name, s)
	case []uint32:
		return SetInputSlice(m, name, s)
	case []int64:
		return SetInputSlice(m, name, s)
	case []uint64:
		return SetInputSlice(m, name, s)
	case []float32:
		return SetInputSlice(m, name, s)
	case []float64:
		return SetInputSlice(m, name, s)
	case *Tensor:
		return m.SetInputTensor(name, s)
	case Tensor:
		return m.SetInputTensor(name, &s)
	}
	i, err := m.inputIndex("Module.SetInput", name)
	if err != nil {
		return err
	}
	return tag(Errorf(TypeError, "Module.SetInput: model '%s', input '%s' is %s: expected a slice of "+
		"its element type or a *Tensor, got %s", m.info.Name, name, m.ins[i].DType, typeName(data)), ErrDType)
}

// SetInputSlice is SetInput for a slice of any element type, with no
// interface value in between.
func SetInputSlice[T Element](m *Module, name string, data []T) error {
	const who = "Module.SetInput"
	if m == nil {
		return m.acquire(who)
	}
	i, err := m.inputIndex(who, name)
	if err != nil {
		return err
	}
	p, err := checkSlice(m, who, "input", &m.ins[i], data)
	if err != nil {
		return err
	}
	r := C.tngo_module_set_input_bytes(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int32_t(i), p,
		C.size_t(m.inN[i]))
	m.release()
	runtime.KeepAlive(data)
	return m.status(who, &r)
}

// checkSlice checks a slice against an input or output (ErrDType, ErrShape)
// and acquires the Module; it returns the slice's data.
func checkSlice[T Element](m *Module, who, what string, info *TensorInfo, data []T) (unsafe.Pointer, error) {
	if dt := DTypeOf[T](); dt != info.DType {
		return nil, tag(Errorf(TypeError, "%s: model '%s', %s '%s' is %s, got a []%s", who,
			m.info.Name, what, info.Name, info.DType, dt), ErrDType)
	}
	if int64(len(data)) != info.NumElements() {
		return nil, tag(Errorf(ValueError, "%s: model '%s', %s '%s' has shape %v (%d elements), "+
			"got %d elements", who, m.info.Name, what, info.Name, info.Shape, info.NumElements(), len(data)),
			ErrShape)
	}
	if err := m.acquire(who); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	return unsafe.Pointer(&data[0]), nil
}

// SetInputTensor sets input name from a compact CPU tensor of the input's
// dtype and shape (ErrDType, ErrShape otherwise). The Module reads the
// tensor's memory without copying when it can (then it keeps the tensor
// alive until the input is set again; do not write the tensor before the
// run), and copies it otherwise.
func (m *Module) SetInputTensor(name string, t *Tensor) error {
	const who = "Module.SetInputTensor"
	if m == nil {
		return m.acquire(who)
	}
	i, err := m.inputIndex(who, name)
	if err != nil {
		return err
	}
	tp, err := t.tensorPtr(who)
	if err != nil {
		return tag(err, ErrDType)
	}
	if err := m.acquire(who); err != nil {
		return err
	}
	r := C.tngo_module_set_input(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int32_t(i),
		C.uintptr_t(uintptr(unsafe.Pointer(tp))))
	m.release()
	runtime.KeepAlive(t)
	return m.status(who, &r)
}

// Run runs one inference on the inputs set (ErrNotReady naming an input
// not set; a RuntimeError naming the crt status if the model fails).
func (m *Module) Run() error {
	const who = "Module.Run"
	if err := m.acquire(who); err != nil {
		return err
	}
	r := C.tngo_module_run(C.uintptr_t(uintptr(unsafe.Pointer(m.p))))
	m.release()
	return m.status(who, &r)
}

// Reset gives a streaming model's states their initial values again, as
// when the Module was loaded: every Run advances them (Info().StateBytes
// says whether the model has any; for one without state Reset does
// nothing). Errors: ErrBusy, ErrClosed.
func (m *Module) Reset() error {
	const who = "Module.Reset"
	if err := m.acquire(who); err != nil {
		return err
	}
	r := C.tngo_module_reset(C.uintptr_t(uintptr(unsafe.Pointer(m.p))))
	m.release()
	return m.status(who, &r)
}

// Output is output i of the last run as a tensor viewing the Module's
// output buffer, without copying: its views (Int8s, Float32s, ...) read
// the buffer directly. The next Run overwrites it (copy what you keep:
// ToSlice, CopyOutput); the tensor keeps the Module's memory alive, even
// after Close. Errors: ErrName (no output i), ErrNotReady (no successful
// run yet), ErrBusy, ErrClosed.
func (m *Module) Output(i int) (*Tensor, error) {
	const who = "Module.Output"
	if err := m.acquire(who); err != nil {
		return nil, err
	}
	if i < 0 || i >= len(m.outs) {
		m.release()
		return nil, tag(Errorf(IndexError, "%s: model '%s' has %d outputs, no output %d", who,
			m.info.Name, len(m.outs), i), ErrName)
	}
	r := C.tngo_module_get_output(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int32_t(i))
	m.release()
	if r.obj == nil {
		return nil, m.classify(raisedError(who, r.err))
	}
	return &Tensor{wrap(r.obj)}, nil
}

// CopyOutput copies output i of the last run into dst, a slice of the
// output's element type and length (ErrDType, ErrShape otherwise).
func (m *Module) CopyOutput(i int, dst interface{}) error {
	switch s := dst.(type) {
	case []int8:
		return CopyOutputSlice(m, i, s)
	case []uint8:
		return CopyOutputSlice(m, i, s)
	case []int16:
		return CopyOutputSlice(m, i, s)
	case []uint16:
		return CopyOutputSlice(m, i, s)
	case []int32:
		return CopyOutputSlice(m, i, s)
	case []uint32:
		return CopyOutputSlice(m, i, s)
	case []int64:
		return CopyOutputSlice(m, i, s)
	case []uint64:
		return CopyOutputSlice(m, i, s)
	case []float32:
		return CopyOutputSlice(m, i, s)
	case []float64:
		return CopyOutputSlice(m, i, s)
	}
	return tag(Errorf(TypeError, "Module.CopyOutput: expected a slice of the output's element type, got %s",
		typeName(dst)), ErrDType)
}

// CopyOutputSlice is CopyOutput for a slice of any element type.
func CopyOutputSlice[T Element](m *Module, i int, dst []T) error {
	const who = "Module.CopyOutput"
	if m == nil {
		return m.acquire(who)
	}
	if i < 0 || i >= len(m.outs) {
		return tag(Errorf(IndexError, "%s: model '%s' has %d outputs, no output %d", who,
			m.info.Name, len(m.outs), i), ErrName)
	}
	p, err := checkSlice(m, who, "output", &m.outs[i], dst)
	if err != nil {
		return err
	}
	r := C.tngo_module_copy_output(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int32_t(i), p,
		C.size_t(m.outN[i]))
	m.release()
	runtime.KeepAlive(dst)
	return m.status(who, &r)
}

// Time runs the model number times per repeat, repeat times, on the
// inputs set, and returns each repeat's mean milliseconds per run.
func (m *Module) Time(number, repeat int) ([]float64, error) {
	const who = "Module.Time"
	if number < 1 || repeat < 1 || number > 1<<31-1 || repeat > 100000 {
		return nil, Errorf(ValueError, "%s: number must be in [1, 2^31) and repeat in [1, 100000], got %d and %d",
			who, number, repeat)
	}
	if err := m.acquire(who); err != nil {
		return nil, err
	}
	ms := (*C.double)(C.malloc(C.size_t(repeat) * C.size_t(unsafe.Sizeof(C.double(0)))))
	defer C.free(unsafe.Pointer(ms))
	err := crc(who, func() C.int { return C.tn_module_time(m.p, C.int32_t(number), C.int32_t(repeat), ms) })
	m.release()
	if err != nil {
		return nil, m.classify(err)
	}
	out := make([]float64, repeat)
	for k, v := range unsafe.Slice(ms, repeat) {
		out[k] = float64(v)
	}
	return out, nil
}

// SetWorkspace makes workspace pool number pool (an index into Pools) the
// memory of t: a compact CPU tensor of any dtype whose bytes are at least the
// pool's Size, starting at a multiple of its Alignment (NewTensor's memory
// is aligned to 64 bytes; a TensorView of a Go slice is as aligned as the
// slice). The Module keeps t alive until the pool is set again, and an
// Output tensor that lives in the pool keeps t alive as long as the
// output does. A nil t gives the Module its own pool back.
//
// What lived in the old pool is gone: inputs that live in that pool (a
// model compiled with --io-in-pool) must be set again before the next
// Run, and outputs are there to read only after the next Run (Output
// fails with ErrNotReady until then; an Output tensor taken before keeps
// viewing the memory it viewed). Do not write t while the Module runs.
//
// Errors: ErrName (no such pool; an IndexError), ErrShape (t too small,
// misaligned, strided or not in CPU memory; a ValueError), ErrDType (t
// is not a tensor, or is closed), ErrBusy, ErrClosed.
func (m *Module) SetWorkspace(pool int, t *Tensor) error {
	const who = "Module.SetWorkspace"
	if m == nil {
		return m.acquire(who)
	}
	var tp *C.TnObject
	if t != nil {
		p, err := t.tensorPtr(who)
		if err != nil {
			return tag(err, ErrDType)
		}
		tp = p
	}
	if err := m.acquire(who); err != nil {
		return err
	}
	if pool < 0 || pool >= len(m.pools) {
		m.release()
		return tag(Errorf(IndexError, "%s: model '%s' has %d workspace pools, no pool %d", who,
			m.info.Name, len(m.pools), pool), ErrName)
	}
	r := C.tngo_module_set_workspace(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int32_t(pool),
		C.uintptr_t(uintptr(unsafe.Pointer(tp))))
	m.release()
	runtime.KeepAlive(t)
	return m.status(who, &r)
}

// SetThreads runs the model's large convolutions and dense layers over n
// threads from now on: the calls its generated code hands to the crt's
// parallel hook (a host library's layers of at least 65,536
// multiply-accumulates) are cut into up to n bands of output rows or
// blocks of output features, run on a pool of n - 1 threads made here,
// once, and the calling goroutine's thread. 1, the default, is off. The
// int8 outputs are the same bytes for any n. A library with no such call
// (or built before threads) starts no thread, and SplitCalls stays 0.
//
// Errors: n outside 1..64 is a ValueError naming tn_module_set_threads,
// the model, the argument, the range and the count received (no ErrShape:
// no input is wrong), and changes nothing; ErrBusy, ErrClosed.
func (m *Module) SetThreads(n int) error {
	const who = "Module.SetThreads"
	if err := m.acquire(who); err != nil {
		return err
	}
	r := C.tngo_module_set_threads(C.uintptr_t(uintptr(unsafe.Pointer(m.p))), C.int64_t(n))
	m.release()
	if r.rc == 0 {
		return nil
	}
	err := raisedError(who, r.err)
	if err.Kind() == RuntimeError { // in use from another language
		return m.classify(err)
	}
	return err
}

// Threads is the threads a run takes (1: off; SetThreads). Errors: ErrBusy
// (another goroutine's call is under way), ErrClosed.
func (m *Module) Threads() (int, error) {
	n, err := m.read("Module.Threads", func(p *C.TnObject) int64 { return int64(C.tn_module_threads(p)) })
	return int(n), err
}

// SplitCalls is how many calls the last Run ran in parts over the threads
// (0 at one thread, or before a run). Errors: ErrBusy, ErrClosed.
func (m *Module) SplitCalls() (int64, error) {
	return m.read("Module.SplitCalls", func(p *C.TnObject) int64 { return int64(C.tn_module_split_calls(p)) })
}

// read returns what get reads of the C Module, with the Module held.
func (m *Module) read(who string, get func(*C.TnObject) int64) (int64, error) {
	if err := m.acquire(who); err != nil {
		return 0, err
	}
	n := get(m.p)
	m.release()
	return n, nil
}

// Object is the C Module (a tn.Module) as a handle of its own, for
// passing to functions of other languages (release it when done). Calls
// from there while a Go call is under way fail in C (RuntimeError).
func (m *Module) Object() (Object, error) {
	if err := m.acquire("Module.Object"); err != nil {
		return Object{}, err
	}
	o := borrow(m.p)
	m.release()
	return o, nil
}

// status is the error of a finished call (nil on success).
func (m *Module) status(who string, r *C.TngoStatus) error {
	if r.rc == 0 {
		return nil
	}
	return m.classify(raisedError(who, r.err))
}

// classify tags a C error of a Module call with its class.
func (m *Module) classify(err error) error {
	switch kindOfErr(err) {
	case TypeError:
		return tag(err, ErrDType)
	case ValueError:
		return tag(err, ErrShape)
	case KeyError, IndexError:
		return tag(err, ErrName)
	case RuntimeError:
		msg := err.Error()
		switch {
		case strings.Contains(msg, "in use by another"):
			return tag(err, ErrBusy)
		case strings.Contains(msg, "is not set") || strings.Contains(msg, "no outputs to give"):
			return tag(err, ErrNotReady)
		}
	}
	return err
}

// typeName is %T without handing v to fmt (which would make every caller's
// interface value escape, an allocation per call on the hot paths).
func typeName(v interface{}) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}
