package tvmnode

// #include "helpers.h"
import "C"

import (
	"fmt"
	"reflect"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Function is a packed function: C, Python, Rust and Go functions alike.
type Function struct{ Object }

// GetGlobal looks up a registered function (a *Error of kind KeyError
// naming it when there is none).
func GetGlobal(name string) (Function, error) {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("GetGlobal", func() *C.TnObject { return C.tn_func_get(c) })
	return Function{o}, err
}

// ListGlobalNames returns the registered names, sorted.
func ListGlobalNames() ([]string, error) {
	o, err := cobj("ListGlobalNames", func() *C.TnObject { return C.tn_func_list() })
	if err != nil {
		return nil, err
	}
	defer o.Release()
	return Array{o}.Strings()
}

// Call calls the function with Go values (converted as toAny says:
// numbers, bool, nil, strings, []byte, DataType, Device, handles, slices,
// map[string]interface{}, Go funcs) and returns the result converted back.
func (f Function) Call(vs ...interface{}) (interface{}, error) {
	p, err := f.live("Function.Call")
	if err != nil {
		return nil, err
	}
	if len(vs) <= 4 {
		// By value: no argument array in Go memory for C to point into.
		var a [4]C.TnAny
		var temps [4]*C.TnObject
		for i, v := range vs {
			x, tmp, cerr := toAny(v)
			if cerr != nil {
				releaseTemps(temps[:i])
				return nil, Errorf(TypeError, "Function.Call: argument %d: %s", i, cerr.Error())
			}
			a[i], temps[i] = x, tmp
		}
		fp := C.uintptr_t(uintptr(unsafe.Pointer(p)))
		var w C.TngoAny
		if len(vs) <= 2 {
			w = C.tngo_call2(fp, C.int32_t(len(vs)), a[0], a[1])
		} else {
			w = C.tngo_call4(fp, C.int32_t(len(vs)), a[0], a[1], a[2], a[3])
		}
		r := anyOfWords(w)
		cerr := callResult("Function.Call", &r)
		releaseTemps(temps[:len(vs)])
		runtime.KeepAlive(f.r)
		runtime.KeepAlive(vs)
		if cerr != nil {
			return nil, cerr
		}
		return resultOf(r), nil
	}
	a, err := makeArgs("Function.Call", vs)
	if err != nil {
		return nil, err
	}
	defer a.free()
	var ret C.TnAny
	cerr := ccall("Function.Call", func() bool {
		return C.tngo_call(p, a.ptr(), C.int32_t(len(a.vals)), &ret) == 0
	})
	runtime.KeepAlive(f.r)
	runtime.KeepAlive(vs)
	if cerr != nil {
		return nil, cerr
	}
	return fromOwned(&ret), nil
}

// resultOf converts an owned result (by value, so plain values stay on
// the caller's stack).
func resultOf(ret C.TnAny) interface{} {
	switch lay(&ret).typeIndex {
	case C.TN_TYPE_INT:
		return anyI64(&ret)
	case C.TN_TYPE_FLOAT:
		return anyF64(&ret)
	case C.TN_TYPE_NONE:
		return nil
	}
	return fromOwned(&ret)
}

func releaseTemps(ts []*C.TnObject) {
	for _, t := range ts {
		if t != nil {
			C.tn_object_release(t)
		}
	}
}

// CallInt64 is Call for a function of int64 arguments returning an int64,
// without conversions through interface values.
func (f Function) CallInt64(vs ...int64) (int64, error) {
	p, err := f.live("Function.CallInt64")
	if err != nil {
		return 0, err
	}
	if len(vs) <= 4 {
		fp := C.uintptr_t(uintptr(unsafe.Pointer(p)))
		var w C.TngoAny
		if len(vs) == 2 {
			w = C.tngo_call_i2(fp, C.int64_t(vs[0]), C.int64_t(vs[1]))
		} else {
			var a [4]int64
			copy(a[:], vs)
			w = C.tngo_call_ints(fp, C.int32_t(len(vs)), C.int64_t(a[0]), C.int64_t(a[1]),
				C.int64_t(a[2]), C.int64_t(a[3]))
		}
		runtime.KeepAlive(f.r)
		if int32(uint32(w.lo)) == C.TN_TYPE_INT {
			return int64(w.hi), nil
		}
		r := anyOfWords(w)
		if err := callResult("Function.CallInt64", &r); err != nil {
			return 0, err
		}
		return int64Result(r)
	}
	// Arguments and result in one buffer: one allocation (what C sees
	// escapes to the heap), no cgo call to build the values.
	var buf []C.TnAny
	var small [5]C.TnAny
	if len(vs) < len(small) {
		buf = small[:len(vs)+1]
	} else {
		buf = make([]C.TnAny, len(vs)+1)
	}
	for i, v := range vs {
		buf[i] = anyInt(v)
	}
	ret := &buf[len(vs)]
	cerr := ccall("Function.CallInt64", func() bool {
		return C.tngo_call(p, &buf[0], C.int32_t(len(vs)), ret) == 0
	})
	runtime.KeepAlive(f.r)
	if cerr != nil {
		return 0, cerr
	}
	return int64Result(*ret)
}

// int64Result reads an owned result that should be an int (taken by
// value, so the caller's copy stays on its stack).
func int64Result(ret C.TnAny) (int64, error) {
	if lay(&ret).typeIndex != C.TN_TYPE_INT {
		v := fromOwned(&ret)
		return 0, Errorf(TypeError, "Function.CallInt64: the result is %T, not an int", v)
	}
	return anyI64(&ret), nil
}

// Register registers the function under name (a *Error of kind ValueError
// if the name is taken and override is false).
func (f Function) Register(name string, override bool) error {
	p, err := f.live("Function.Register")
	if err != nil {
		return err
	}
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	ov := 0
	if override {
		ov = 1
	}
	err = crc("Function.Register", func() C.int { return C.tn_func_register(c, p, C.int(ov)) })
	runtime.KeepAlive(f.r)
	return err
}

// RemoveGlobal unregisters name (KeyError if it is not registered).
func RemoveGlobal(name string) error {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	return crc("RemoveGlobal", func() C.int { return C.tn_func_unregister(c) })
}

// RegisterGlobal makes a Function of a Go func (see FunctionOf) and
// registers it under name; it returns the function.
func RegisterGlobal(name string, fn interface{}, override bool) (Function, error) {
	f, err := FunctionOfNamed(name, fn)
	if err != nil {
		return f, err
	}
	if err := f.Register(name, override); err != nil {
		f.Release()
		return Function{}, err
	}
	return f, nil
}

// PackedFunc is a Go function over the raw arguments: it sees them
// converted as Function.Call's results are, and returns any Go value Call
// accepts.
type PackedFunc func(args []interface{}) (interface{}, error)

// goFunc is what the cgo.Handle of a Go-made Function holds.
type goFunc struct {
	name string
	call func(args []C.TnAny) (interface{}, error)
	// direct, when set, handles the commonest argument kinds of a few
	// signatures without reflection or boxing; false sends the call to call.
	direct func(args []C.TnAny, ret *C.TnAny) bool
	// instrument, for an instrument's hook, are all its hooks (passctx.go).
	instrument *InstrumentHooks
}

// FunctionOf makes a Function of a Go func. A PackedFunc gets the
// arguments as they come. Any other func is called with its arguments
// converted to its parameter types (int and float kinds, bool, string,
// []byte, DataType, Device, interface{}, and handle types such as Object,
// Function, Array, Map, Expr, IRModule, Tensor), a wrong count or type being a
// TypeError that names the argument; it may return nothing, a value, an
// error, or a value and an error. A panic becomes a RuntimeError; it never
// unwinds through C.
func FunctionOf(fn interface{}) (Function, error) { return FunctionOfNamed("", fn) }

// FunctionOfNamed is FunctionOf with a name used in messages and frames.
func FunctionOfNamed(name string, fn interface{}) (Function, error) {
	g := &goFunc{name: name}
	if name == "" {
		g.name = "<anonymous Go function>"
	}
	switch f := fn.(type) {
	case PackedFunc:
		g.call = func(args []C.TnAny) (interface{}, error) {
			vs := make([]interface{}, len(args))
			for i := range args {
				vs[i] = fromAny(&args[i])
			}
			return f(vs)
		}
	case func(args []interface{}) (interface{}, error):
		return FunctionOfNamed(name, PackedFunc(f))
	case func(int64, int64) int64:
		g.direct = func(args []C.TnAny, ret *C.TnAny) bool {
			if len(args) != 2 || lay(&args[0]).typeIndex != C.TN_TYPE_INT ||
				lay(&args[1]).typeIndex != C.TN_TYPE_INT {
				return false
			}
			*ret = anyInt(f(anyI64(&args[0]), anyI64(&args[1])))
			return true
		}
	case func(int64) int64:
		g.direct = func(args []C.TnAny, ret *C.TnAny) bool {
			if len(args) != 1 || lay(&args[0]).typeIndex != C.TN_TYPE_INT {
				return false
			}
			*ret = anyInt(f(anyI64(&args[0])))
			return true
		}
	case func(float64, float64) float64:
		g.direct = func(args []C.TnAny, ret *C.TnAny) bool {
			if len(args) != 2 || lay(&args[0]).typeIndex != C.TN_TYPE_FLOAT ||
				lay(&args[1]).typeIndex != C.TN_TYPE_FLOAT {
				return false
			}
			*ret = anyFloat(f(anyF64(&args[0]), anyF64(&args[1])))
			return true
		}
	}
	if g.call == nil {
		// Everything else, and the fast paths' other cases (conversions,
		// errors naming the argument), through reflection.
		call, err := reflectCall(g.name, fn)
		if err != nil {
			return Function{}, err
		}
		g.call = call
	}
	h := cgo.NewHandle(g)
	// tn_func_new calls the deleter (tngoForget) even when it fails.
	o, err := cobj("FunctionOf", func() *C.TnObject { return C.tngo_func_new(C.uintptr_t(h)) })
	return Function{o}, err
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

func reflectCall(name string, fn interface{}) (func([]C.TnAny) (interface{}, error), error) {
	fv := reflect.ValueOf(fn)
	ft := fv.Type()
	if ft.Kind() != reflect.Func {
		return nil, Errorf(TypeError, "FunctionOf: expected a func, got %T", fn)
	}
	if ft.IsVariadic() {
		return nil, Errorf(TypeError, "FunctionOf: %s: variadic funcs are not supported (use PackedFunc)", ft)
	}
	nout := ft.NumOut()
	if nout > 2 || (nout == 2 && ft.Out(1) != errorType) {
		return nil, Errorf(TypeError, "FunctionOf: %s: return a value, an error, or (value, error)", ft)
	}
	nin := ft.NumIn()
	convs := make([]func(*C.TnAny) (reflect.Value, error), nin)
	for i := 0; i < nin; i++ {
		c, err := converter(ft.In(i))
		if err != nil {
			return nil, Errorf(TypeError, "FunctionOf: %s: parameter %d: %s", ft, i, err.Error())
		}
		convs[i] = c
	}
	return func(args []C.TnAny) (interface{}, error) {
		if len(args) != nin {
			return nil, Errorf(TypeError, "%s takes %d argument(s), got %d", name, nin, len(args))
		}
		in := make([]reflect.Value, nin)
		for i := range args {
			v, err := convs[i](&args[i])
			if err != nil {
				return nil, Errorf(TypeError, "%s: argument %d: %s", name, i, err.Error())
			}
			in[i] = v
		}
		out := fv.Call(in)
		switch {
		case nout == 0:
			return nil, nil
		case nout == 2:
			if e := out[1].Interface(); e != nil {
				return nil, e.(error)
			}
			return out[0].Interface(), nil
		case ft.Out(0) == errorType:
			if e := out[0].Interface(); e != nil {
				return nil, e.(error)
			}
			return nil, nil
		}
		return out[0].Interface(), nil
	}, nil
}

var (
	handleType   = reflect.TypeOf((*Handle)(nil)).Elem()
	dataTypeType = reflect.TypeOf(DataType{})
	deviceType   = reflect.TypeOf(Device{})
	objectType   = reflect.TypeOf(Object{})
)

// converter reads one C argument as a value of Go type t.
func converter(t reflect.Type) (func(*C.TnAny) (reflect.Value, error), error) {
	kindErr := func(a *C.TnAny) error {
		return fmt.Errorf("expected %s, got %s", t, C.GoString(C.tn_any_type_key(a)))
	}
	switch {
	case t == dataTypeType || t == deviceType:
		return func(a *C.TnAny) (reflect.Value, error) {
			v := reflect.ValueOf(fromAny(a))
			if v.Type() != t {
				return v, kindErr(a)
			}
			return v, nil
		}, nil
	case t.Kind() == reflect.Struct && t.Implements(handleType):
		// A handle type: Object itself, or a struct embedding it.
		key := handleTypeKey(t)
		return func(a *C.TnAny) (reflect.Value, error) {
			if !isObject(a) {
				return reflect.Value{}, kindErr(a)
			}
			o := borrow(anyObjPtr(a))
			if key != "" && !o.IsInstance(key) {
				o.Release()
				return reflect.Value{}, kindErr(a)
			}
			v := reflect.New(t).Elem()
			if t == objectType {
				v.Set(reflect.ValueOf(o))
			} else {
				v.Field(0).Set(reflect.ValueOf(o))
			}
			return v, nil
		}, nil
	case t.Kind() == reflect.Ptr && t.Elem().Kind() == reflect.Struct && t.Implements(handleType):
		// A pointer to a handle type (*Tensor).
		inner, err := converter(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(a *C.TnAny) (reflect.Value, error) {
			v, err := inner(a)
			if err != nil {
				return v, err
			}
			p := reflect.New(t.Elem())
			p.Elem().Set(v)
			return p, nil
		}, nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(a *C.TnAny) (reflect.Value, error) {
			var x C.int64_t
			if C.tngo_as_int(a, &x) != 0 {
				return reflect.Value{}, kindErr(a)
			}
			v := reflect.New(t).Elem()
			if v.OverflowInt(int64(x)) {
				return v, fmt.Errorf("%d does not fit in %s", int64(x), t)
			}
			v.SetInt(int64(x))
			return v, nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(a *C.TnAny) (reflect.Value, error) {
			var x C.int64_t
			if C.tngo_as_int(a, &x) != 0 {
				return reflect.Value{}, kindErr(a)
			}
			v := reflect.New(t).Elem()
			if x < 0 || v.OverflowUint(uint64(x)) {
				return v, fmt.Errorf("%d does not fit in %s", int64(x), t)
			}
			v.SetUint(uint64(x))
			return v, nil
		}, nil
	case reflect.Float32, reflect.Float64:
		return func(a *C.TnAny) (reflect.Value, error) {
			var x C.double
			if C.tngo_as_float(a, &x) != 0 {
				return reflect.Value{}, kindErr(a)
			}
			v := reflect.New(t).Elem()
			v.SetFloat(float64(x))
			return v, nil
		}, nil
	case reflect.Bool:
		return func(a *C.TnAny) (reflect.Value, error) {
			var x C.int
			if C.tngo_as_bool(a, &x) != 0 {
				return reflect.Value{}, kindErr(a)
			}
			return reflect.ValueOf(x != 0).Convert(t), nil
		}, nil
	case reflect.String:
		return func(a *C.TnAny) (reflect.Value, error) {
			var data *C.char
			var size C.size_t
			if C.tngo_as_str(a, &data, &size) != 0 {
				return reflect.Value{}, kindErr(a)
			}
			return reflect.ValueOf(C.GoStringN(data, C.int(size))).Convert(t), nil
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return func(a *C.TnAny) (reflect.Value, error) {
				var data *C.char
				var size C.size_t
				if C.tngo_as_bytes(a, &data, &size) != 0 {
					return reflect.Value{}, kindErr(a)
				}
				return reflect.ValueOf(C.GoBytes(unsafe.Pointer(data), C.int(size))).Convert(t), nil
			}, nil
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return func(a *C.TnAny) (reflect.Value, error) {
				v := fromAny(a)
				if v == nil {
					return reflect.Zero(t), nil
				}
				return reflect.ValueOf(v), nil
			}, nil
		}
	}
	return nil, fmt.Errorf("%s is not a type tvmnode values convert to", t)
}

// handleTypeKeys maps typed handle types to the type key they hold.
var handleTypeKeys = map[reflect.Type]string{}

func registerHandleType(t reflect.Type, key string) { handleTypeKeys[t] = key }

func handleTypeKey(t reflect.Type) string { return handleTypeKeys[t] }

func init() {
	registerHandleType(reflect.TypeOf(Function{}), "tn.Function")
	registerHandleType(reflect.TypeOf(Array{}), "tn.Array")
	registerHandleType(reflect.TypeOf(Map{}), "tn.Map")
}

//export tngoCall
func tngoCall(h C.uintptr_t, args *C.TnAny, nargs C.int32_t, ret *C.TnAny) (rc C.int) {
	g := cgo.Handle(h).Value().(*goFunc)
	defer func() {
		if r := recover(); r != nil {
			e := Errorf(RuntimeError, "Go function '%s' panicked: %v", g.name, r)
			raise(e, g.name)
			rc = -1
		}
	}()
	var argv []C.TnAny
	if nargs > 0 {
		argv = unsafe.Slice(args, int(nargs))
	}
	if g.direct != nil && g.direct(argv, ret) {
		return 0
	}
	out, err := g.call(argv)
	if err != nil {
		raise(err, g.name)
		return -1
	}
	x, tmp, cerr := toAny(out)
	if cerr != nil {
		raise(Errorf(TypeError, "%s returned a value tvmnode cannot hold: %s", g.name, cerr.Error()), g.name)
		return -1
	}
	if tmp == nil && isObject(&x) {
		// Borrowed from a handle: the result needs its own reference.
		C.tn_any_copy(ret, &x)
	} else {
		*ret = x // a plain value, or tmp's reference moving to the result
	}
	runtime.KeepAlive(out)
	return 0
}

// raise sets the thread's raised error (we are on the C caller's thread).
func raise(err error, name string) {
	p := toErrorObject(err, "Go: in function '"+name+"'")
	if p != nil {
		C.tn_error_set_raised(p)
	}
}

//export tngoForget
func tngoForget(h C.uintptr_t) {
	cgo.Handle(h).Delete()
}
