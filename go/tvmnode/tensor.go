package tvmnode

// Tensors (tn.Tensor) from Go: made from Go slices (copied, or viewed in
// place while pinned), exchanged with other DLPack users without copying,
// and read back as Go slices that view the tensor's memory. Reading goes
// through the public TnTensorObj / DLTensor layout, so a view or a shape
// costs no cgo call. A view of C memory is valid only while the tensor
// lives: Go's collector does not know that a slice into C memory needs the
// object, so the caller keeps the *Tensor reachable (or Closes it after
// the last use), exactly as with syscall.Mmap.

// #include "helpers.h"
import "C"

import (
	"fmt"
	"reflect"
	"runtime"
	"unsafe"
)

// Tensor is a tn.Tensor: an n-dimensional array (a DLTensor inside a
// reference-counted object), shared with C, Python, Rust and any DLPack
// user without copying.
//
// Slices returned by the views (Int8s, Float32s, ..., Bytes, TensorData)
// point into the tensor's memory, which is not Go memory: they are valid
// while the tensor lives. Keep the *Tensor reachable while you use them
// (runtime.KeepAlive(t) after the last use, or defer t.Close()); a
// tensor the collector finalizes frees memory a forgotten view still
// points to. Close drops the reference at once; the finalizer is the
// backstop. Other holders (an IR constant, a Module input) keep the
// memory alive on their own.
type Tensor struct{ Object }

func init() {
	registerHandleType(reflect.TypeOf(Tensor{}), "tn.Tensor")
}

// Close drops the tensor's reference now (views of it must not be used
// afterwards unless something else holds the tensor). Closing twice, or a
// nil *Tensor, is harmless. The error is always nil (io.Closer).
func (t *Tensor) Close() error {
	if t != nil {
		t.Release()
	}
	return nil
}

// AsTensor checks that o is a tensor and wraps it (sharing o's reference).
func AsTensor(o Object) (*Tensor, error) {
	if err := checkType(o, "tn.Tensor", "AsTensor"); err != nil {
		return nil, err
	}
	return &Tensor{o}, nil
}

// Element is a Go element type a tensor can hold: the signed and unsigned
// integers of 8 to 64 bits and float32 and float64 (and types defined on
// them).
type Element interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// DTypeOf is the tensor element type of a Go element type.
func DTypeOf[T Element]() DataType {
	var zero T
	return dtypeOfKind(reflect.TypeOf(zero).Kind())
}

func dtypeOfKind(k reflect.Kind) DataType {
	switch k {
	case reflect.Int8:
		return Int8
	case reflect.Int16:
		return int16Type
	case reflect.Int32:
		return Int32
	case reflect.Int64:
		return Int64
	case reflect.Uint8:
		return Uint8
	case reflect.Uint16:
		return uint16Type
	case reflect.Uint32:
		return uint32Type
	case reflect.Uint64:
		return uint64Type
	case reflect.Float32:
		return Float32
	case reflect.Float64:
		return Float64
	}
	panic("tvmnode: no tensor element type for " + k.String())
}

// NewTensor makes a compact CPU tensor of zeros.
func NewTensor(shape []int64, dtype DataType) (*Tensor, error) {
	var sp *C.int64_t
	if len(shape) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	o, err := cobj("NewTensor", func() *C.TnObject {
		return C.tn_tensor_empty(sp, C.int32_t(len(shape)), dtype.c(), C.DLDevice{device_type: C.kDLCPU})
	})
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return &Tensor{o}, nil
}

// shapeFor checks shape against n elements (the product of the dimensions
// must be n, a ValueError otherwise); with no shape given, one dimension
// of n. (A 0-d tensor of one element needs the empty shape given
// explicitly: TensorFrom(data, []int64{}...).)
func shapeFor(who string, n int, shape []int64, given bool) ([]int64, error) {
	if !given {
		return []int64{int64(n)}, nil
	}
	numel := int64(1)
	for i, d := range shape {
		if d < 0 {
			return nil, Errorf(ValueError, "%s: dimension %d is negative (%d)", who, i, d)
		}
		numel *= d
	}
	if numel != int64(n) {
		return nil, Errorf(ValueError, "%s: shape %v has %d elements, the data %d", who, shape, numel, n)
	}
	return shape, nil
}

// TensorFrom makes a new CPU tensor holding a copy of data, of shape
// shape (row-major; the product of the dimensions must be len(data), a
// ValueError otherwise), or one-dimensional when no shape is given.
func TensorFrom[T Element](data []T, shape ...int64) (*Tensor, error) {
	sh, err := shapeFor("TensorFrom", len(data), shape, shape != nil)
	if err != nil {
		return nil, err
	}
	t, err := NewTensor(sh, DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	copy(tensorBytes(t.Object), rawBytes(data))
	runtime.KeepAlive(t)
	return t, nil
}

// TensorView makes a CPU tensor over data's own memory, without copying,
// of shape shape (or one-dimensional). The slice's memory is pinned
// (runtime.Pinner) for as long as the tensor lives anywhere: a C function
// or another language may keep the tensor (an IR constant, a Module input
// set without a copy), and the memory stays put and alive until the last
// reference is dropped, whenever and on whatever thread that is. So the
// view is safe under cgo's rules however long C holds it; what stays the
// caller's to ensure is that nothing writes data while C reads it, and
// that data is not written through the slice while a C consumer relies on
// it staying the same.
//
// With Go older than 1.21 (no runtime.Pinner) a Go pointer cannot be left
// with C safely, and TensorView copies, as TensorFrom does.
func TensorView[T Element](data []T, shape ...int64) (*Tensor, error) {
	sh, err := shapeFor("TensorView", len(data), shape, shape != nil)
	if err != nil {
		return nil, err
	}
	if !canPin || len(data) == 0 {
		return TensorFrom(data, sh...)
	}
	p := unsafe.Pointer(&data[0])
	h := pinHandle(p)
	var sp *C.int64_t
	if len(sh) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&sh[0]))
	}
	dt := DTypeOf[T]()
	// tngo_tensor_view hands h to the DLPack deleter, which unpins (also
	// when the call fails).
	o, err := cobj("TensorView", func() *C.TnObject {
		return C.tngo_tensor_view(p, sp, C.int32_t(len(sh)), dt.c(), C.uintptr_t(h))
	})
	runtime.KeepAlive(sh)
	if err != nil {
		return nil, err
	}
	return &Tensor{o}, nil
}

//export tngoUnpin
func tngoUnpin(h C.uintptr_t) { unpinHandle(uintptr(h)) }

// FromDLPack wraps a DLPack tensor without copying. managed is a
// DLManagedTensorVersioned * (C memory, from any DLPack producer); the
// tensor takes it over (transfer full): its deleter runs when the tensor
// dies, or at once if FromDLPack fails.
func FromDLPack(managed unsafe.Pointer) (*Tensor, error) {
	return fromDLPack("FromDLPack", managed, func() *C.TnObject {
		return C.tn_tensor_from_dlpack((*C.DLManagedTensorVersioned)(managed))
	})
}

// FromDLPackLegacy is FromDLPack for a pre-1.0 DLManagedTensor *.
func FromDLPackLegacy(managed unsafe.Pointer) (*Tensor, error) {
	return fromDLPack("FromDLPackLegacy", managed, func() *C.TnObject {
		return C.tn_tensor_from_dlpack_legacy((*C.DLManagedTensor)(managed))
	})
}

func fromDLPack(who string, managed unsafe.Pointer, wrap func() *C.TnObject) (*Tensor, error) {
	if managed == nil {
		return nil, NewError(ValueError, who+": managed is nil")
	}
	o, err := cobj(who, wrap)
	if err != nil {
		return nil, err
	}
	return &Tensor{o}, nil
}

// ToDLPack exports the tensor without copying, as a
// DLManagedTensorVersioned * (C memory) that holds a reference to the
// tensor until its deleter is called: hand it to a DLPack consumer, which
// calls the deleter, or call DeleteDLPack.
func (t *Tensor) ToDLPack() (unsafe.Pointer, error) {
	return t.toDLPack("Tensor.ToDLPack", func(p *C.TnObject) unsafe.Pointer {
		return unsafe.Pointer(C.tn_tensor_to_dlpack(p))
	})
}

// ToDLPackLegacy is ToDLPack as a pre-1.0 DLManagedTensor *.
func (t *Tensor) ToDLPackLegacy() (unsafe.Pointer, error) {
	return t.toDLPack("Tensor.ToDLPackLegacy", func(p *C.TnObject) unsafe.Pointer {
		return unsafe.Pointer(C.tn_tensor_to_dlpack_legacy(p))
	})
}

func (t *Tensor) toDLPack(who string, export func(*C.TnObject) unsafe.Pointer) (unsafe.Pointer, error) {
	p, err := t.tensorPtr(who)
	if err != nil {
		return nil, err
	}
	var m unsafe.Pointer
	err = ccall(who, func() bool { m = export(p); return m != nil })
	runtime.KeepAlive(t)
	return m, err
}

// DeleteDLPack calls the deleter of a DLManagedTensorVersioned * (nil, or
// one without a deleter, is left alone).
func DeleteDLPack(managed unsafe.Pointer) {
	C.tngo_dlpack_delete((*C.DLManagedTensorVersioned)(managed))
}

// tensorPtr is the C object, or an error for a nil, released or
// non-tensor handle.
func (t *Tensor) tensorPtr(who string) (*C.TnObject, error) {
	if t == nil {
		return nil, NewError(ValueError, who+": the tensor is nil")
	}
	p, err := t.live(who)
	if err != nil {
		return nil, err
	}
	if int32(p.type_index) != C.TN_TYPE_TENSOR && !t.IsInstance("tn.Tensor") {
		return nil, Errorf(TypeError, "%s: expected tn.Tensor, got %s", who, t.TypeKey())
	}
	return p, nil
}

// obj is the C object, or nil for a nil or closed tensor.
func (t *Tensor) obj() *C.TnObject {
	if t == nil {
		return nil
	}
	return t.ptr()
}

// dl is the tensor's DLTensor (valid while the tensor lives), or nil.
func (t *Tensor) dl() *C.DLTensor {
	p := t.obj()
	if p == nil {
		return nil
	}
	return &(*C.TnTensorObj)(unsafe.Pointer(p)).dl
}

// Shape is the dimensions (nil for a nil or closed tensor).
func (t *Tensor) Shape() []int64 {
	dl := t.dl()
	if dl == nil {
		return nil
	}
	shape := make([]int64, int(dl.ndim))
	if len(shape) > 0 {
		copy(shape, unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), len(shape)))
	}
	runtime.KeepAlive(t)
	return shape
}

// DType is the element type.
func (t *Tensor) DType() DataType {
	dl := t.dl()
	if dl == nil {
		return DataType{}
	}
	d := DataType{uint8(dl.dtype.code), uint8(dl.dtype.bits), uint16(dl.dtype.lanes)}
	runtime.KeepAlive(t)
	return d
}

// Device is where the tensor lives.
func (t *Tensor) Device() Device {
	dl := t.dl()
	if dl == nil {
		return Device{}
	}
	d := Device{int32(dl.device.device_type), int32(dl.device.device_id)}
	runtime.KeepAlive(t)
	return d
}

// NumElements is the product of the dimensions (1 for a 0-d tensor).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape() {
		n *= d
	}
	return n
}

// NBytes is the size of the elements in bytes.
func (t *Tensor) NBytes() int64 {
	p := t.obj()
	if p == nil {
		return 0
	}
	n := int64(C.tn_tensor_nbytes(p))
	runtime.KeepAlive(t)
	return n
}

// IsContiguous reports whether the tensor is compact row-major.
func (t *Tensor) IsContiguous() bool {
	dl := t.dl()
	if dl == nil {
		return false
	}
	ok := contiguous(dl)
	runtime.KeepAlive(t)
	return ok
}

func contiguous(dl *C.DLTensor) bool {
	if dl.strides == nil {
		return true
	}
	n := int(dl.ndim)
	shape := unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), n)
	strides := unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), n)
	want := int64(1)
	for i := n - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// view checks that the tensor is a compact CPU tensor of dtype want (any
// dtype when want is nil) and returns its bytes.
func (t *Tensor) view(who string, want *DataType) ([]byte, error) {
	if _, err := t.tensorPtr(who); err != nil {
		return nil, err
	}
	dl := t.dl()
	got := DataType{uint8(dl.dtype.code), uint8(dl.dtype.bits), uint16(dl.dtype.lanes)}
	if want != nil && got != *want {
		return nil, Errorf(TypeError, "%s: the tensor's dtype is %s, not %s", who, got, *want)
	}
	if dl.device.device_type != C.kDLCPU {
		return nil, Errorf(ValueError, "%s: the tensor is on %s, not the CPU", who, t.Device())
	}
	if !contiguous(dl) {
		return nil, Errorf(ValueError, "%s: the tensor is not compact (strided)", who)
	}
	return tensorBytes(t.Object), nil
}

// Bytes views the elements of a compact CPU tensor as bytes (no copy;
// valid while the tensor lives).
func (t *Tensor) Bytes() ([]byte, error) { return t.view("Tensor.Bytes", nil) }

// TensorData views the elements of a compact CPU tensor of T's dtype (a
// TypeError naming both dtypes otherwise) as a []T, without copying: the
// slice is valid while the tensor lives (see Tensor). Writing through it
// writes the tensor.
func TensorData[T Element](t *Tensor) ([]T, error) {
	dt := DTypeOf[T]()
	b, err := t.view("TensorData", &dt)
	if err != nil || len(b) == 0 {
		return []T{}, err
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero))), nil
}

// ToSlice copies the elements of a compact CPU tensor of T's dtype into a
// new Go slice (which stays valid after the tensor is gone).
func ToSlice[T Element](t *Tensor) ([]T, error) {
	v, err := TensorData[T](t)
	if err != nil {
		return nil, err
	}
	out := append([]T(nil), v...)
	runtime.KeepAlive(t)
	return out, nil
}

// The typed views: TensorData for each element type (no copy; valid while
// the tensor lives).

// Int8s views an int8 tensor.
func (t *Tensor) Int8s() ([]int8, error) { return TensorData[int8](t) }

// Uint8s views a uint8 tensor.
func (t *Tensor) Uint8s() ([]uint8, error) { return TensorData[uint8](t) }

// Int16s views an int16 tensor.
func (t *Tensor) Int16s() ([]int16, error) { return TensorData[int16](t) }

// Uint16s views a uint16 tensor.
func (t *Tensor) Uint16s() ([]uint16, error) { return TensorData[uint16](t) }

// Int32s views an int32 tensor.
func (t *Tensor) Int32s() ([]int32, error) { return TensorData[int32](t) }

// Uint32s views a uint32 tensor.
func (t *Tensor) Uint32s() ([]uint32, error) { return TensorData[uint32](t) }

// Int64s views an int64 tensor.
func (t *Tensor) Int64s() ([]int64, error) { return TensorData[int64](t) }

// Uint64s views a uint64 tensor.
func (t *Tensor) Uint64s() ([]uint64, error) { return TensorData[uint64](t) }

// Float32s views a float32 tensor.
func (t *Tensor) Float32s() ([]float32, error) { return TensorData[float32](t) }

// Float64s views a float64 tensor.
func (t *Tensor) Float64s() ([]float64, error) { return TensorData[float64](t) }

// String describes the tensor without its elements.
func (t *Tensor) String() string {
	if t.obj() == nil {
		return "<nil tvmnode.Tensor>"
	}
	return fmt.Sprintf("Tensor(shape=%v, dtype=%s, device=%s)", t.Shape(), t.DType(), t.Device())
}
