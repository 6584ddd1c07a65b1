//go:build !go1.21

package tvmnode

import (
	"sync/atomic"
	"unsafe"
)

// canPin: before Go 1.21 there is no runtime.Pinner, and cgo forbids C to
// keep a Go pointer after a call returns, so TensorView copies.
const canPin = false

func pinHandle(p unsafe.Pointer) uintptr { panic("tvmnode: pinning needs Go 1.21") }

func unpinHandle(h uintptr) {}

var livePins atomic.Int64
