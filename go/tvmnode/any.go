package tvmnode

// #include "helpers.h"
import "C"

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"unsafe"
)

// DataType is a tensor element type (DLPack's code, bits, lanes).
type DataType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// Common data types.
var (
	Float32 = DataType{2, 32, 1}
	Float64 = DataType{2, 64, 1}
	Int8    = DataType{0, 8, 1}
	Int32   = DataType{0, 32, 1}
	Int64   = DataType{0, 64, 1}
	Uint8   = DataType{1, 8, 1}
	Bool    = DataType{6, 8, 1}
)

// ParseDataType reads "float32", "int8", "uint8x4", "bool", ...
func ParseDataType(s string) (DataType, error) {
	c := C.CString(s)
	defer C.free(unsafePointer(c))
	var out C.DLDataType
	err := crc("ParseDataType", func() C.int { return C.tn_dtype_parse(c, &out) })
	return DataType{uint8(out.code), uint8(out.bits), uint16(out.lanes)}, err
}

func (d DataType) c() C.DLDataType {
	return C.DLDataType{code: C.uint8_t(d.Code), bits: C.uint8_t(d.Bits), lanes: C.uint16_t(d.Lanes)}
}

func (d DataType) String() string {
	var buf [32]C.char
	if C.tngo_dtype_print(d.c(), &buf[0], C.size_t(len(buf))) != 0 {
		return fmt.Sprintf("DataType(%d, %d, %d)", d.Code, d.Bits, d.Lanes)
	}
	return C.GoString(&buf[0])
}

// Device is where a tensor lives (DLPack's device type and id).
type Device struct {
	Type int32
	ID   int32
}

// CPU is device cpu:0.
var CPU = Device{1, 0}

func (d Device) String() string {
	var buf [32]C.char
	dev := C.DLDevice{device_type: C.DLDeviceType(d.Type), device_id: C.int32_t(d.ID)}
	if C.tngo_device_print(dev, &buf[0], C.size_t(len(buf))) != 0 {
		return fmt.Sprintf("Device(%d, %d)", d.Type, d.ID)
	}
	return C.GoString(&buf[0])
}

// args holds C values made from Go values for one call, and the
// references it made for them (released by free).
type args struct {
	vals  []C.TnAny
	temps []*C.TnObject
	small [4]C.TnAny
}

func (a *args) free() {
	for _, t := range a.temps {
		C.tn_object_release(t)
	}
	a.temps = a.temps[:0]
}

// add converts one Go value; the error names the argument.
func (a *args) add(v interface{}, who string, i int) error {
	x, tmp, err := toAny(v)
	if err != nil {
		return Errorf(TypeError, "%s: argument %d: %s", who, i, err.Error())
	}
	if tmp != nil {
		a.temps = append(a.temps, tmp)
	}
	a.vals = append(a.vals, x)
	return nil
}

func makeArgs(who string, vs []interface{}) (*args, error) {
	a := &args{}
	a.vals = a.small[:0]
	for i, v := range vs {
		if err := a.add(v, who, i); err != nil {
			a.free()
			return nil, err
		}
	}
	return a, nil
}

func (a *args) ptr() *C.TnAny {
	if len(a.vals) == 0 {
		return nil
	}
	return &a.vals[0]
}

// toAny makes a C value of a Go value. Objects are borrowed; a value that
// needs a new object (a string, a slice, a map, a Go func) returns it as
// tmp, owned by the caller.
func toAny(v interface{}) (x C.TnAny, tmp *C.TnObject, err error) {
	switch t := v.(type) {
	case nil:
		return anyNone(), nil, nil
	case bool:
		return anyBool(t), nil, nil
	case int:
		return anyInt(int64(t)), nil, nil
	case int64:
		return anyInt(int64(t)), nil, nil
	case int32:
		return anyInt(int64(t)), nil, nil
	case float64:
		return anyFloat(float64(t)), nil, nil
	case float32:
		return anyFloat(float64(t)), nil, nil
	case string:
		if len(t) <= C.TN_SMALL_STR_MAX {
			return anySmallStr(t), nil, nil
		}
		p := newString(t)
		return anyObj(p), p, nil
	case []byte:
		var data *C.char
		if len(t) > 0 {
			data = (*C.char)(unsafe.Pointer(&t[0]))
		}
		p := C.tn_bytes_new(data, C.size_t(len(t)))
		return anyObj(p), p, nil
	case DataType:
		return anyDType(t), nil, nil
	case Device:
		return anyDevice(t), nil, nil
	case *Error:
		p := t.ptr()
		if p == nil {
			return x, nil, fmt.Errorf("a nil or empty *tvmnode.Error")
		}
		return anyObj(p), nil, nil
	case Handle:
		o := t.AsObject()
		p := o.ptr()
		if p == nil && o.r != nil {
			return x, nil, fmt.Errorf("a released %T", v)
		}
		return anyObj(p), nil, nil
	case []interface{}:
		p, err := newArray(t)
		if err != nil {
			return x, nil, err
		}
		return anyObj(p), p, nil
	case map[string]interface{}:
		p, err := newMap(t)
		if err != nil {
			return x, nil, err
		}
		return anyObj(p), p, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int8, reflect.Int16:
		return anyInt(int64(rv.Int())), nil, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return x, nil, fmt.Errorf("%d does not fit in a 64-bit signed integer", u)
		}
		return anyInt(int64(u)), nil, nil
	case reflect.Func:
		f, err := FunctionOf(v)
		if err != nil {
			return x, nil, err
		}
		p := f.ptr()
		C.tn_object_retain(p)
		f.Release()
		return anyObj(p), p, nil
	case reflect.Slice:
		items := make([]interface{}, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
		p, err := newArray(items)
		if err != nil {
			return x, nil, err
		}
		return anyObj(p), p, nil
	}
	return x, nil, fmt.Errorf("cannot convert a Go %T to a tvmnode value", v)
}

func newString(s string) *C.TnObject {
	var data *C.char
	if len(s) > 0 {
		data = (*C.char)(unsafe.Pointer(*(**byte)(unsafe.Pointer(&s))))
	}
	return C.tn_string_new(data, C.size_t(len(s)))
}

func newArray(items []interface{}) (*C.TnObject, error) {
	a, err := makeArgs("Array", items)
	if err != nil {
		return nil, err
	}
	defer a.free()
	p := C.tn_array_new(a.ptr(), C.int64_t(len(a.vals)))
	runtime.KeepAlive(a)
	return p, nil
}

func newMap(m map[string]interface{}) (*C.TnObject, error) {
	keys := make([]interface{}, 0, len(m))
	vals := make([]interface{}, 0, len(m))
	for _, k := range sortedKeys(m) {
		keys = append(keys, k)
		vals = append(vals, m[k])
	}
	ka, err := makeArgs("Map keys", keys)
	if err != nil {
		return nil, err
	}
	defer ka.free()
	va, err := makeArgs("Map values", vals)
	if err != nil {
		return nil, err
	}
	defer va.free()
	return C.tn_map_new(ka.ptr(), va.ptr(), C.int64_t(len(keys))), nil
}

// fromAny converts a borrowed C value to Go: nil, bool, int64, float64,
// string, []byte, DataType, Device, *Error for an error object, or a handle
// (Function, Array, Map, *Tensor, or Object for every other type; IR
// nodes as Object, see the ir helpers).
func fromAny(a *C.TnAny) interface{} {
	switch t := int32(a.type_index); t {
	case C.TN_TYPE_NONE:
		return nil
	case C.TN_TYPE_BOOL:
		return anyI64(a) != 0
	case C.TN_TYPE_INT:
		return int64(anyI64(a))
	case C.TN_TYPE_FLOAT:
		return float64(anyF64(a))
	case C.TN_TYPE_DATA_TYPE:
		return anyDTypeOf(a)
	case C.TN_TYPE_DEVICE:
		return anyDeviceOf(a)
	case C.TN_TYPE_OPAQUE_PTR:
		return uintptr(lay(a).v())
	case C.TN_TYPE_SMALL_STR:
		l := lay(a)
		return string(l.b[:l.smallLen&7])
	}
	var data *C.char
	var size C.size_t
	if C.tngo_as_str(a, &data, &size) == 0 {
		return C.GoStringN(data, C.int(size))
	}
	if C.tngo_as_bytes(a, &data, &size) == 0 {
		return C.GoBytes(unsafe.Pointer(data), C.int(size))
	}
	if isObject(a) {
		return typed(borrow(anyObjPtr(a)))
	}
	return fmt.Sprintf("<%s>", C.GoString(C.tn_any_type_key(a)))
}

// fromOwned converts an owned C value and clears it.
func fromOwned(a *C.TnAny) interface{} {
	v := fromAny(a)
	C.tn_any_clear(a)
	return v
}

// typed wraps an object in its typed handle where there is one.
func typed(o Object) interface{} {
	switch o.TypeIndex() {
	case C.TN_TYPE_FUNCTION:
		return Function{o}
	case C.TN_TYPE_ARRAY, C.TN_TYPE_LIST:
		return Array{o}
	case C.TN_TYPE_MAP, C.TN_TYPE_DICT:
		return Map{o}
	case C.TN_TYPE_ERROR:
		return wrapError(o)
	case C.TN_TYPE_TENSOR:
		return &Tensor{o}
	}
	return o
}

func sortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
