package tvmnode

// #include "helpers.h"
import "C"

import (
	"runtime"
)

// Array is a tn.Array (immutable) or tn.List.
type Array struct{ Object }

// NewArray makes a tn.Array of Go values (converted as Function.Call's
// arguments are).
func NewArray(items ...interface{}) (Array, error) {
	p, err := newArray(items)
	if err != nil {
		return Array{}, NewError(TypeError, "NewArray: "+err.Error())
	}
	return Array{wrap(p)}, nil
}

// Len is the number of items (0 for a nil handle).
func (a Array) Len() int {
	p := a.ptr()
	if p == nil {
		return 0
	}
	n := int(C.tn_array_size(p))
	runtime.KeepAlive(a.r)
	return n
}

// At is item i, converted to Go (IndexError when out of range).
func (a Array) At(i int) (interface{}, error) {
	p, err := a.live("Array.At")
	if err != nil {
		return nil, err
	}
	var out C.TnAny
	err = crc("Array.At", func() C.int { return C.tn_array_get(p, C.int64_t(i), &out) })
	runtime.KeepAlive(a.r)
	if err != nil {
		return nil, err
	}
	return fromOwned(&out), nil
}

// Items is every item, converted to Go.
func (a Array) Items() ([]interface{}, error) {
	out := make([]interface{}, a.Len())
	for i := range out {
		v, err := a.At(i)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Objects is every item as an Object (TypeError naming the first item
// that is not an object).
func (a Array) Objects() ([]Object, error) {
	items, err := a.Items()
	if err != nil {
		return nil, err
	}
	out := make([]Object, len(items))
	for i, v := range items {
		h, ok := v.(Handle)
		if !ok {
			return nil, Errorf(TypeError, "Array.Objects: item %d is %T, not an object", i, v)
		}
		out[i] = h.AsObject()
	}
	return out, nil
}

// Strings is every item as a string (TypeError naming the first that is not).
func (a Array) Strings() ([]string, error) {
	items, err := a.Items()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, v := range items {
		s, ok := v.(string)
		if !ok {
			return nil, Errorf(TypeError, "Array.Strings: item %d is %T, not a string", i, v)
		}
		out[i] = s
	}
	return out, nil
}

// Map is a tn.Map (insertion-ordered, copy-on-write) or tn.Dict.
type Map struct{ Object }

// NewMap makes a tn.Map of a Go map (keys in sorted order).
func NewMap(m map[string]interface{}) (Map, error) {
	p, err := newMap(m)
	if err != nil {
		return Map{}, NewError(TypeError, "NewMap: "+err.Error())
	}
	return Map{wrap(p)}, nil
}

// Len is the number of entries.
func (m Map) Len() int {
	p := m.ptr()
	if p == nil {
		return 0
	}
	n := int(C.tn_map_size(p))
	runtime.KeepAlive(m.r)
	return n
}

// Get is the value under key (KeyError naming it when missing).
func (m Map) Get(key interface{}) (interface{}, error) {
	p, err := m.live("Map.Get")
	if err != nil {
		return nil, err
	}
	k, tmp, cerr := toAny(key)
	if cerr != nil {
		return nil, NewError(TypeError, "Map.Get: key: "+cerr.Error())
	}
	var out C.TnAny
	err = crc("Map.Get", func() C.int { return C.tn_map_get(p, &k, &out) })
	if tmp != nil {
		C.tn_object_release(tmp)
	}
	runtime.KeepAlive(m.r)
	if err != nil {
		return nil, err
	}
	return fromOwned(&out), nil
}

// Keys is every key, in order.
func (m Map) Keys() ([]interface{}, error) {
	p, err := m.live("Map.Keys")
	if err != nil {
		return nil, err
	}
	var keys []interface{}
	var k *C.TnAny
	for pos := C.tn_map_next(p, 0, &k, nil); pos >= 0; pos = C.tn_map_next(p, pos+1, &k, nil) {
		keys = append(keys, fromAny(k))
	}
	runtime.KeepAlive(m.r)
	return keys, nil
}
