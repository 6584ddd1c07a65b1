package tvmnode

// #include "helpers.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// ErrorKind is the kind of an error: the Python-style class name the C
// library and every binding use ("TypeError", "KeyError", ...), so kinds
// map one to one onto Python exceptions. Any name is a valid kind; the
// constants are the ones the library raises.
//
// A kind is also an error value to compare with: errors.Is(err,
// tvmnode.KeyError) reports whether err, or an error it wraps, is an *Error
// of that kind. A Go function called from C may return a kind, or wrap one
// (fmt.Errorf("%w: no entry %q", tvmnode.KeyError, name)), to fail with it.
type ErrorKind string

// The kinds the library raises.
const (
	TypeError           ErrorKind = "TypeError"           // a value of the wrong type
	ValueError          ErrorKind = "ValueError"          // the right type, not an acceptable value
	IndexError          ErrorKind = "IndexError"          // an index out of range
	KeyError            ErrorKind = "KeyError"            // a missing key or name
	AttributeError      ErrorKind = "AttributeError"      // a missing field or method
	RuntimeError        ErrorKind = "RuntimeError"        // any other failure, Go panics included
	MemoryError         ErrorKind = "MemoryError"         // an allocation failed
	OverflowError       ErrorKind = "OverflowError"       // a number does not fit
	NotImplementedError ErrorKind = "NotImplementedError" // not supported
)

// Error is the kind's name.
func (k ErrorKind) Error() string { return string(k) }

// Error is a tvmnode error. It holds the C error object itself (a tn.Error:
// kind, message, frames, cause), not a copy of its text: an error raised in
// C, returned through a Go function and caught again in C, Python or Rust
// is the same object all the way, with a frame appended by every layer it
// crossed, and those frames are shared by every holder of the object (so
// Frames may grow after the Error was returned).
//
// Use errors.As(err, &e) to find the *Error in a chain (the binding's own
// errors are *Error, but callers may wrap them), errors.Is(err,
// tvmnode.KeyError) to test the kind, and errors.Is(err, e) to test
// identity (the same C object, whichever *Error wraps it).
//
// The reference to the C object is dropped when the collector finalizes
// the Error. Make errors with NewError or Errorf; a zero Error reads as an
// empty RuntimeError.
type Error struct {
	obj Object

	mu    sync.Mutex
	cause *Error // the last Cause, kept while it is the object's cause
	// classes are Go sentinel errors the binding classified this error as
	// (ErrShape, ErrClosed, fs.ErrNotExist, ...; see module.go): errors.Is
	// matches them. They belong to this *Error, not to the C object.
	classes []error
}

// NewError makes an error of kind (one of the constants, or any other name)
// with message. C frames of the caller are captured (see TN_BACKTRACE);
// returned by a Go function called from C, it is raised as it is.
func NewError(kind ErrorKind, message string) *Error {
	k, m := cString(string(kind)), cString(message)
	defer C.free(unsafePointer(k))
	defer C.free(unsafePointer(m))
	o, err := cobj("NewError", func() *C.TnObject { return C.tn_error_new(k, m) })
	if err != nil {
		return err.(*Error) // the library's out-of-memory error
	}
	return &Error{obj: o}
}

// Errorf is NewError with the message formatted as by fmt.Sprintf (a %w
// verb only formats: use SetCause to chain errors).
func Errorf(kind ErrorKind, format string, args ...interface{}) *Error {
	return NewError(kind, fmt.Sprintf(format, args...))
}

// wrapError takes a tn.Error handle (its reference moves to the Error).
func wrapError(o Object) *Error { return &Error{obj: o} }

// ptr is the C error object (nil for a nil or zero Error).
func (e *Error) ptr() *C.TnObject {
	if e == nil {
		return nil
	}
	return e.obj.ptr()
}

// Kind is the error's kind ("" for a nil Error).
func (e *Error) Kind() ErrorKind {
	p := e.ptr()
	if p == nil {
		if e == nil {
			return ""
		}
		return RuntimeError
	}
	k := ErrorKind(C.GoString(C.tn_error_kind(p)))
	runtime.KeepAlive(e)
	return k
}

// Message is the error's message.
func (e *Error) Message() string {
	p := e.ptr()
	if p == nil {
		return ""
	}
	m := C.GoString(C.tn_error_message(p))
	runtime.KeepAlive(e)
	return m
}

// Frames are the backtrace frames, innermost first: the C frames captured
// when the error was made, then one frame per language layer it crossed
// ("Go: ..." for this binding's).
func (e *Error) Frames() []string {
	p := e.ptr()
	if p == nil {
		return nil
	}
	n := int64(C.tn_error_frame_count(p))
	frames := make([]string, 0, n)
	for i := int64(0); i < n; i++ {
		frames = append(frames, C.GoString(C.tn_error_frame(p, C.int64_t(i))))
	}
	runtime.KeepAlive(e)
	return frames
}

// Cause is the error this one was raised from, or nil.
func (e *Error) Cause() *Error {
	p := e.ptr()
	if p == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c := C.tn_error_cause(p) // transfer none
	if c == nil {
		e.cause = nil
	} else if e.cause.ptr() != c {
		e.cause = wrapError(borrow(c))
	}
	runtime.KeepAlive(e)
	return e.cause
}

// SetCause makes cause the cause of this error (nil removes it). Like the
// frames, the cause belongs to the C object, shared by all its holders.
func (e *Error) SetCause(cause *Error) error {
	p := e.ptr()
	if p == nil {
		return NewError(ValueError, "Error.SetCause: the error is nil or empty")
	}
	c := cause.ptr()
	if cause != nil && c == nil {
		return NewError(ValueError, "Error.SetCause: the cause is empty")
	}
	err := crc("Error.SetCause", func() C.int { return C.tn_error_set_cause(p, c) })
	runtime.KeepAlive(e)
	runtime.KeepAlive(cause)
	return err
}

// Error is "Kind: message".
func (e *Error) Error() string { return string(e.Kind()) + ": " + e.Message() }

// Unwrap gives the cause, for errors.Is / errors.As.
func (e *Error) Unwrap() error {
	if c := e.Cause(); c != nil {
		return c
	}
	return nil
}

// Is makes errors.Is(err, kind) true for an error of that kind,
// errors.Is(err, other) true when other wraps the same C object, and
// errors.Is(err, class) true for the sentinel errors the binding
// classified it as (ErrShape, ErrDType, ErrName, ErrClosed, ...).
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case ErrorKind:
		return e.Kind() == t
	case *Error:
		return e.Same(t)
	}
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.classes {
		if c == target {
			return true
		}
	}
	return false
}

// Same reports whether two Errors wrap the same C error object.
func (e *Error) Same(other *Error) bool {
	p := e.ptr()
	return p != nil && p == other.ptr()
}

// Object is the C error object as a handle of its own (release it when
// done), for storing it or passing it to other C code.
func (e *Error) Object() Object {
	o := borrow(e.ptr())
	runtime.KeepAlive(e)
	return o
}

// Format is the error as the C library prints it, like a Python traceback:
// the frames (most recent call last), "Kind: message", then the same for
// each cause, root cause first.
func (e *Error) Format() string {
	p := e.ptr()
	if p == nil {
		return e.Error()
	}
	s := C.tn_error_format(p) // a tn.String, or NULL when out of memory
	runtime.KeepAlive(e)
	if s == nil {
		return e.Error()
	}
	so := (*C.TnStringObj)(unsafe.Pointer(s))
	text := C.GoStringN(so.data, C.int(so.size))
	C.tn_object_release(s)
	return text
}

// appendFrame adds a frame to the error object (shared by all its holders).
func (e *Error) appendFrame(frame string) {
	if p := e.ptr(); p != nil {
		appendFrame(p, frame)
	}
	runtime.KeepAlive(e)
}

func appendFrame(p *C.TnObject, frame string) {
	c := cString(frame)
	C.tn_error_append_frame(p, c)
	C.free(unsafePointer(c))
}

// cString is C.CString with NUL bytes replaced (C strings end at the
// first), so that a message is never cut short.
func cString(s string) *C.char {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return C.CString(s)
}

// ccall is how every C call that may fail is made (but for Function.Call
// and CallInt64, whose C helpers take the error themselves, and the
// Module's hot calls: callResult):
// call makes the call and
// reports whether it succeeded. The raised error of a failing call is in a
// thread-local slot, so the goroutine stays on its OS thread from the call
// until the error is taken. On failure the error gains a frame naming who
// and the Go caller. (No defer: call makes only C calls, which do not
// panic, and a deferred unlock would cost every call.)
func ccall(who string, call func() bool) error {
	runtime.LockOSThread()
	ok := call()
	var err error
	if !ok {
		err = takeRaised(who)
	}
	runtime.UnlockOSThread()
	return err
}

// cobj calls f, which returns a new reference or NULL with an error raised.
func cobj(who string, f func() *C.TnObject) (Object, error) {
	var p *C.TnObject
	if err := ccall(who, func() bool { p = f(); return p != nil }); err != nil {
		return Object{}, err
	}
	return wrap(p), nil
}

// crc calls f, which returns 0, or -1 with an error raised.
func crc(who string, f func() C.int) error {
	return ccall(who, func() bool { return f() == 0 })
}

// takeRaised takes the thread's raised error (see ccall) and appends a
// frame naming the Go caller.
func takeRaised(who string) *Error {
	return raisedError(who, C.tn_error_take_raised())
}

// callResult is the error of a hot call's result (helpers.h): nil, or the
// error the C helper took on the thread that raised it when the result's
// type index is TNGO_FAILED. Those paths need neither ccall's thread lock
// nor its closure.
func callResult(who string, r *C.TnAny) error {
	if lay(r).typeIndex != C.TNGO_FAILED {
		return nil
	}
	return raisedError(who, anyObjPtr(r))
}

// raisedError wraps a taken error (a new reference, or nil) and appends a
// frame naming the Go caller.
func raisedError(who string, p *C.TnObject) *Error {
	var e *Error
	if p == nil || C.tn_error_kind(p) == nil {
		if p != nil {
			C.tn_object_release(p)
		}
		e = NewError(RuntimeError, who+" failed without raising an error")
	} else {
		e = wrapError(wrap(p))
	}
	e.appendFrame(goFrame(who))
	return e
}

// goFrame names who failed and the first caller outside this package.
func goFrame(who string) string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "tvmnode.dev/go/tvmnode.") {
			return fmt.Sprintf("Go: %s, called from %s at %s:%d", who, f.Function, f.File, f.Line)
		}
		if !more {
			return "Go: in " + who
		}
	}
}

// toErrorObject is the C error object for a Go error going into C (transfer
// full), with frame appended. An *Error is its own object: the same object
// goes back. An error wrapping an *Error is a new error of that kind with
// the whole message, caused by the wrapped one; an error wrapping an
// ErrorKind has that kind; any other error is a RuntimeError.
func toErrorObject(err error, frame string) *C.TnObject {
	e, ok := err.(*Error)
	if !ok || e.ptr() == nil {
		kind, msg := RuntimeError, err.Error()
		var inner *Error
		var k ErrorKind
		wrapsError := errors.As(err, &inner) && inner.ptr() != nil
		switch {
		case wrapsError:
			kind = inner.Kind()
		case errors.As(err, &k):
			kind = k
			if err == error(k) {
				msg = "" // a bare kind
			}
		}
		e = NewError(kind, msg)
		if wrapsError {
			_ = e.SetCause(inner) // a new error: no loop to refuse
		}
	}
	p := e.ptr()
	if p == nil {
		return nil
	}
	C.tn_object_retain(p)
	appendFrame(p, frame)
	runtime.KeepAlive(e)
	return p
}
