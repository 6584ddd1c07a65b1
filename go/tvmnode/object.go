// Package tvmnode is the Go binding of tvmnode: reference-counted C objects
// and nodes, packed functions callable across languages, tensors shared
// with DLPack, the tensor IR with its passes, pass contexts and
// instruments, and compiled models run as runtime Modules.
//
// Every handle (Object and the typed handles that embed it) owns one
// reference to a C object. Release drops it at once; a handle that is never
// released drops it when the garbage collector finalizes it. Copies of a
// handle value share that one reference, so Release one copy only when no
// other copy is used after it (as with *os.File). Clone takes a new
// reference.
//
// Errors from C come back as *Error, which holds the C error object itself
// (kind, message, frames, cause); find it with errors.As, test its kind
// with errors.Is(err, KeyError). Go functions called from C may return an
// error or panic, and either crosses C as an error object, never as an
// unwinding panic; an *Error returned goes back into C as the same object.
//
// Building: cgo finds the library with pkg-config (tvmnode.pc). Against an
// installed library nothing else is needed; for a build tree put a
// tvmnode-uninstalled.pc that points into it on PKG_CONFIG_PATH
// (go/tools.sh writes one; go/run_tests.sh uses it).
package tvmnode

// #cgo pkg-config: tvmnode
// #include "helpers.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ref owns one C reference; the finalizer is the safety net for handles
// that are never released.
type ref struct {
	mu sync.Mutex
	p  *C.TnObject
}

func releaseRef(r *ref) {
	r.mu.Lock()
	p := r.p
	r.p = nil
	r.mu.Unlock()
	if p != nil {
		C.tn_object_release(p)
	}
}

// Object is a handle to any tvmnode object. The zero Object is a nil
// handle: methods on it return errors (or zero values where documented).
type Object struct {
	r *ref
}

// wrap takes ownership of one reference (transfer full); nil stays nil.
func wrap(p *C.TnObject) Object {
	if p == nil {
		return Object{}
	}
	r := &ref{p: p}
	runtime.SetFinalizer(r, releaseRef)
	return Object{r}
}

// borrow takes a new reference to p (transfer none).
func borrow(p *C.TnObject) Object {
	if p != nil {
		C.tn_object_retain(p)
	}
	return wrap(p)
}

// ptr is the C object, or nil for a nil or released handle.
func (o Object) ptr() *C.TnObject {
	if o.r == nil {
		return nil
	}
	return o.r.p
}

// live is ptr, or an error naming what needed the object.
func (o Object) live(who string) (*C.TnObject, error) {
	if p := o.ptr(); p != nil {
		return p, nil
	}
	return nil, NewError(ValueError, who+": the handle is nil or released")
}

// Pointer is the C object (a TnObject *), borrowed: valid while the handle
// holds it; for handing objects to other C code (take a reference there,
// tn_object_retain, to keep one). Nil for a nil or released handle.
func (o Object) Pointer() unsafe.Pointer { return unsafe.Pointer(o.ptr()) }

// Detach hands the handle's reference to the caller (transfer full, for C
// code that will release it) and makes every copy of the handle nil.
func (o Object) Detach() unsafe.Pointer {
	if o.r == nil {
		return nil
	}
	runtime.SetFinalizer(o.r, nil)
	o.r.mu.Lock()
	p := o.r.p
	o.r.p = nil
	o.r.mu.Unlock()
	return unsafe.Pointer(p)
}

// IsNil reports whether the handle holds no object.
func (o Object) IsNil() bool { return o.ptr() == nil }

// Release drops the handle's reference now (every copy of this handle
// becomes nil). Releasing twice is harmless.
func (o Object) Release() {
	if o.r != nil {
		runtime.SetFinalizer(o.r, nil)
		releaseRef(o.r)
	}
}

// Clone returns a new handle with its own reference.
func (o Object) Clone() Object {
	r := borrow(o.ptr())
	runtime.KeepAlive(o.r)
	return r
}

// AsObject returns the handle as a plain Object (sharing its reference);
// typed handles embed Object, so they all have this method and can be
// passed wherever an object is expected.
func (o Object) AsObject() Object { return o }

// TypeIndex is the object's run-time type index (-1 for a nil handle).
func (o Object) TypeIndex() int32 {
	p := o.ptr()
	if p == nil {
		return -1
	}
	t := int32(p.type_index)
	runtime.KeepAlive(o.r)
	return t
}

// TypeKey is the object's type key, e.g. "ir.Call" ("" for a nil handle).
func (o Object) TypeKey() string {
	p := o.ptr()
	if p == nil {
		return ""
	}
	k := C.GoString(C.tn_object_type_key(p))
	runtime.KeepAlive(o.r)
	return k
}

// IsInstance reports whether the object's type is typeKey or derives from it.
func (o Object) IsInstance(typeKey string) bool {
	p := o.ptr()
	t := TypeIndex(typeKey)
	if p == nil || t < 0 {
		return false
	}
	ok := C.tn_object_is_instance(p, C.int32_t(t)) != 0
	runtime.KeepAlive(o.r)
	return ok
}

// Same reports whether two handles hold the same object (identity).
func (o Object) Same(other Object) bool {
	return o.ptr() != nil && o.ptr() == other.ptr()
}

// String is the printer's text for the object.
func (o Object) String() string {
	if o.ptr() == nil {
		return "<nil tvmnode.Object>"
	}
	s, err := Repr(o)
	if err != nil {
		return fmt.Sprintf("<%s: %v>", o.TypeKey(), err)
	}
	return s
}

// LiveObjects is the number of tvmnode objects alive in the process, which
// tests compare before and after.
func LiveObjects() int64 { return int64(C.tn_object_live_count()) }

// TypeIndex is the run-time index of a registered type key, or -1.
func TypeIndex(typeKey string) int32 {
	c := C.CString(typeKey)
	defer C.free(unsafePointer(c))
	return int32(C.tngo_type_index(c))
}

// TypeKeyOf is the type key of a run-time type index, or "".
func TypeKeyOf(index int32) string {
	k := C.tngo_type_key(C.int32_t(index))
	if k == nil {
		return ""
	}
	return C.GoString(k)
}

// Handle is what every typed handle satisfies.
type Handle interface {
	AsObject() Object
}

// checkType is nil when o holds an object of typeKey (or a subtype), else
// an error naming who wanted it and both types.
func checkType(o Object, typeKey, who string) error {
	if o.ptr() == nil {
		return NewError(ValueError, who+": the handle is nil or released")
	}
	if !o.IsInstance(typeKey) {
		return Errorf(TypeError, "%s: expected %s, got %s", who, typeKey, o.TypeKey())
	}
	return nil
}

func unsafePointer(c *C.char) unsafe.Pointer { return unsafe.Pointer(c) }
