package tvmnode

// #include "helpers.h"
import "C"

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// anyLayout is C's TnAny as Go sees it: building and reading values here
// avoids a cgo call per value (the union is not visible to cgo). cgo gives
// C.TnAny an alignment of 4, so the 8-byte payload is read and written as
// bytes (little-endian targets; see endian_check.go).
type anyLayout struct {
	typeIndex int32
	smallLen  uint32
	b         [8]byte
}

// TnAny must be 16 bytes, as abi.h fixes it.
var _ [16 - unsafe.Sizeof(C.TnAny{})]byte
var _ [unsafe.Sizeof(C.TnAny{}) - 16]byte

// anyOfWords is the TnAny a hot call returned as two words (helpers.h).
func anyOfWords(w C.TngoAny) (a C.TnAny) {
	l := lay(&a)
	l.typeIndex = int32(uint32(w.lo))
	l.smallLen = uint32(w.lo >> 32)
	binary.LittleEndian.PutUint64(l.b[:], uint64(w.hi))
	return a
}

func lay(a *C.TnAny) *anyLayout { return (*anyLayout)(unsafe.Pointer(a)) }

func (l *anyLayout) v() uint64 { return binary.LittleEndian.Uint64(l.b[:]) }

func mkAny(t int32, v uint64) (a C.TnAny) {
	l := lay(&a)
	l.typeIndex = t
	binary.LittleEndian.PutUint64(l.b[:], v)
	return a
}

func anyNone() C.TnAny           { return mkAny(C.TN_TYPE_NONE, 0) }
func anyInt(v int64) C.TnAny     { return mkAny(C.TN_TYPE_INT, uint64(v)) }
func anyFloat(v float64) C.TnAny { return mkAny(C.TN_TYPE_FLOAT, math.Float64bits(v)) }
func anyBool(v bool) C.TnAny {
	if v {
		return mkAny(C.TN_TYPE_BOOL, 1)
	}
	return mkAny(C.TN_TYPE_BOOL, 0)
}

// anyObj borrows o (no reference taken).
func anyObj(o *C.TnObject) C.TnAny {
	if o == nil {
		return anyNone()
	}
	a := mkAny(int32(o.type_index), 0)
	copy(lay(&a).b[:], (*[8]byte)(unsafe.Pointer(&o))[:])
	return a
}

func anyDType(d DataType) C.TnAny {
	return mkAny(C.TN_TYPE_DATA_TYPE, uint64(d.Code)|uint64(d.Bits)<<8|uint64(d.Lanes)<<16)
}

func anyDevice(d Device) C.TnAny {
	return mkAny(C.TN_TYPE_DEVICE, uint64(uint32(d.Type))|uint64(uint32(d.ID))<<32)
}

func anyI64(a *C.TnAny) int64   { return int64(lay(a).v()) }
func anyF64(a *C.TnAny) float64 { return math.Float64frombits(lay(a).v()) }
func anyObjPtr(a *C.TnAny) (p *C.TnObject) {
	copy((*[8]byte)(unsafe.Pointer(&p))[:], lay(a).b[:])
	return p
}
func anyDTypeOf(a *C.TnAny) DataType {
	v := lay(a).v()
	return DataType{uint8(v), uint8(v >> 8), uint16(v >> 16)}
}
func anyDeviceOf(a *C.TnAny) Device {
	v := lay(a).v()
	return Device{int32(uint32(v)), int32(uint32(v >> 32))}
}
func isObject(a *C.TnAny) bool { return lay(a).typeIndex >= C.TN_TYPE_STATIC_OBJECT_BEGIN }

// anySmallStr holds a string of up to 7 bytes inline (no object).
func anySmallStr(s string) C.TnAny {
	a := mkAny(C.TN_TYPE_SMALL_STR, 0)
	l := lay(&a)
	l.smallLen = uint32(len(s))
	copy(l.b[:], s)
	return a
}
