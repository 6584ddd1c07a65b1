//go:build go1.21

package tvmnode

import (
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// canPin: runtime.Pinner exists (Go 1.21), so TensorView can leave a Go
// pointer with C for as long as C wants it.
const canPin = true

// pinHandle pins the Go object p points into and returns a handle for
// unpinHandle. The Pinner lives in the handle, so it stays reachable (a
// Pinner collected while it pins panics) until the DLPack deleter unpins.
func pinHandle(p unsafe.Pointer) uintptr {
	pn := new(runtime.Pinner)
	pn.Pin(p)
	livePins.Add(1)
	return uintptr(cgo.NewHandle(pn))
}

func unpinHandle(h uintptr) {
	ch := cgo.Handle(h)
	ch.Value().(*runtime.Pinner).Unpin()
	ch.Delete()
	livePins.Add(-1)
}

// livePins counts the Go slices pinned for tensors (for the tests).
var livePins atomic.Int64
