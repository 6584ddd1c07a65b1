package tvmnode

// #include "helpers.h"
import "C"

import (
	"fmt"
	"runtime"
	"strings"
)

// Error is a tvmnode error: the kind (a Python-style exception name such as
// "TypeError", "KeyError", "ValueError"), the message, and the frames the
// error passed through in every language, oldest first.
type Error struct {
	Kind    string
	Message string
	Frames  []string
	Cause   *Error
}

func (e *Error) Error() string { return e.Kind + ": " + e.Message }

// Unwrap gives the cause, for errors.Is / errors.As.
func (e *Error) Unwrap() error {
	if e.Cause == nil {
		return nil
	}
	return e.Cause
}

func newError(kind, msg string) *Error { return &Error{Kind: kind, Message: msg} }

// fromErrorObject reads a tn.Error object (borrowed).
func fromErrorObject(p *C.TnObject) *Error {
	e := &Error{
		Kind:    C.GoString(C.tn_error_kind(p)),
		Message: C.GoString(C.tn_error_message(p)),
	}
	n := int64(C.tn_error_frame_count(p))
	for i := int64(0); i < n; i++ {
		e.Frames = append(e.Frames, C.GoString(C.tn_error_frame(p, C.int64_t(i))))
	}
	if c := C.tn_error_cause(p); c != nil { // transfer none
		e.Cause = fromErrorObject(c)
	}
	return e
}

// takeRaised turns the thread's raised C error into a *Error with a frame
// naming the Go caller. Must run on the OS thread that made the failing
// call: see cobj and crc.
func takeRaised(who string) *Error {
	p := C.tn_error_take_raised()
	var e *Error
	if p == nil {
		e = newError("RuntimeError", who+" failed without raising an error")
	} else {
		e = fromErrorObject(p)
		C.tn_object_release(p)
	}
	e.Frames = append(e.Frames, goFrame(who))
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

// cobj runs f, which returns a new reference or NULL with an error raised,
// on one OS thread (the raised error is thread-local in C).
func cobj(who string, f func() *C.TnObject) (Object, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := f()
	if p == nil {
		return Object{}, takeRaised(who)
	}
	return wrap(p), nil
}

// crc runs f, which returns 0 or -1 with an error raised, on one OS thread.
func crc(who string, f func() C.int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if f() != 0 {
		return takeRaised(who)
	}
	return nil
}

// toErrorObject makes a tn.Error for a Go error (transfer full): a *Error
// keeps its kind, frames and cause; any other error is a RuntimeError.
func toErrorObject(err error, frame string) *C.TnObject {
	te, ok := err.(*Error)
	if !ok {
		te = &Error{Kind: "RuntimeError", Message: err.Error()}
	}
	kind := C.CString(te.Kind)
	msg := C.CString(te.Message)
	p := C.tn_error_new(kind, msg)
	C.free(unsafePointer(kind))
	C.free(unsafePointer(msg))
	if p == nil {
		return nil
	}
	for _, f := range te.Frames {
		appendFrame(p, f)
	}
	if frame != "" {
		appendFrame(p, frame)
	}
	if te.Cause != nil {
		if c := toErrorObject(te.Cause, ""); c != nil {
			C.tn_error_set_cause(p, c)
			C.tn_object_release(c)
		}
	}
	return p
}

func appendFrame(p *C.TnObject, f string) {
	c := C.CString(f)
	C.tn_error_append_frame(p, c)
	C.free(unsafePointer(c))
}

// Format is the error with its frames, one per line, as the C library
// prints it.
func (e *Error) Format() string {
	var b strings.Builder
	b.WriteString(e.Error())
	for _, f := range e.Frames {
		b.WriteString("\n  ")
		b.WriteString(f)
	}
	if e.Cause != nil {
		b.WriteString("\ncaused by: ")
		b.WriteString(e.Cause.Format())
	}
	return b.String()
}
