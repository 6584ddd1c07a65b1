package tvmnode

// #include "helpers.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Get reads a reflected field by name, converted to Go (AttributeError
// naming the type and the field if it has none).
func (o Object) Get(field string) (interface{}, error) {
	p, err := o.live("Object.Get")
	if err != nil {
		return nil, err
	}
	c := C.CString(field)
	defer C.free(unsafePointer(c))
	var out C.TnAny
	err = crc("Object.Get", func() C.int { return C.tn_node_get(p, c, &out) })
	runtime.KeepAlive(o.r)
	if err != nil {
		return nil, err
	}
	return fromOwned(&out), nil
}

// GetObject reads a field that holds an object.
func (o Object) GetObject(field string) (Object, error) {
	v, err := o.Get(field)
	if err != nil {
		return Object{}, err
	}
	h, ok := v.(Handle)
	if !ok {
		return Object{}, Errorf(TypeError, "Object.GetObject: %s.%s is %T, not an object", o.TypeKey(), field, v)
	}
	return h.AsObject(), nil
}

// fieldObjects reads a field that holds an array of objects (release
// them when done).
func (o Object) fieldObjects(field string) ([]Object, error) {
	a, err := o.GetObject(field)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return Array{a}.Objects()
}

// Set writes a reflected field, checked against its declared kind.
func (o Object) Set(field string, value interface{}) error {
	p, err := o.live("Object.Set")
	if err != nil {
		return err
	}
	x, tmp, cerr := toAny(value)
	if cerr != nil {
		return Errorf(TypeError, "Object.Set: %s: %s", field, cerr.Error())
	}
	c := C.CString(field)
	defer C.free(unsafePointer(c))
	err = crc("Object.Set", func() C.int { return C.tn_node_set(p, c, &x) })
	if tmp != nil {
		C.tn_object_release(tmp)
	}
	runtime.KeepAlive(o.r)
	runtime.KeepAlive(value)
	return err
}

// Fields lists the reflected field names of the object's type.
func (o Object) Fields() []string {
	t := o.TypeIndex()
	if t < 0 {
		return nil
	}
	n := int(C.tngo_field_count(C.int32_t(t)))
	if n < 0 {
		return nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoString(C.tn_type_field_at(C.int32_t(t), C.int32_t(i)).name)
	}
	return names
}

// Node kinds for RegisterNodeType (how structural equality treats a type).
const (
	NodeTree   = int32(C.TN_NODE_TREE)
	NodeDAG    = int32(C.TN_NODE_DAG)
	NodeVar    = int32(C.TN_NODE_VAR)
	NodeUnique = int32(C.TN_NODE_UNIQUE)
)

// RegisterNodeType declares a node type from Go whose fields are Any slots,
// visible to C, Python and Rust like any other node type. parent is a type
// key ("" for tn.Object). It returns the type index.
func RegisterNodeType(typeKey, parent string, kind int32, fields []string) (int32, error) {
	parentIndex := int32(C.TN_TYPE_OBJECT)
	if parent != "" {
		if parentIndex = TypeIndex(parent); parentIndex < 0 {
			return -1, Errorf(KeyError, "RegisterNodeType: %s: no parent type '%s'", typeKey, parent)
		}
	}
	ckey := C.CString(typeKey)
	defer C.free(unsafePointer(ckey))
	cnames := make([]*C.char, len(fields))
	for i, f := range fields {
		cnames[i] = C.CString(f)
		defer C.free(unsafePointer(cnames[i]))
	}
	// The name pointers live in C memory: the array handed to C must not
	// hold Go pointers, and it does not.
	arr := (**C.char)(C.malloc(C.size_t(len(fields)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(arr))
	names := unsafe.Slice(arr, len(fields)+1)
	copy(names, cnames)
	var t C.int32_t
	err := crc("RegisterNodeType", func() C.int {
		t = C.tn_node_register_any_slots(ckey, C.int32_t(parentIndex), C.int32_t(kind), arr, C.int32_t(len(fields)))
		if t < 0 {
			return -1
		}
		return 0
	})
	return int32(t), err
}

// NewNode makes a node of a registered type from field values (missing
// fields take their defaults; unknown or ill-typed ones are errors naming
// them).
func NewNode(typeKey string, fields map[string]interface{}) (Object, error) {
	t := TypeIndex(typeKey)
	if t < 0 {
		return Object{}, Errorf(KeyError, "NewNode: no type '%s'", typeKey)
	}
	keys := sortedKeys(fields)
	vals := make([]interface{}, len(keys))
	for i, k := range keys {
		vals[i] = fields[k]
	}
	a, err := makeArgs("NewNode", vals)
	if err != nil {
		return Object{}, err
	}
	defer a.free()
	arr := (**C.char)(C.malloc(C.size_t(len(keys)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(arr))
	names := unsafe.Slice(arr, len(keys)+1)
	for i, k := range keys {
		names[i] = C.CString(k)
		defer C.free(unsafePointer(names[i]))
	}
	o, err := cobj("NewNode", func() *C.TnObject {
		return C.tn_node_new(C.int32_t(t), arr, a.ptr(), C.int32_t(len(keys)))
	})
	runtime.KeepAlive(a)
	return o, err
}

// StructuralEqual compares two values by content (alpha-equivalence for
// defined variables; mapFreeVars maps free ones too).
func StructuralEqual(a, b interface{}, mapFreeVars bool) (bool, error) {
	xa, ta, err := toAny(a)
	if err != nil {
		return false, NewError(TypeError, "StructuralEqual: lhs: "+err.Error())
	}
	xb, tb, err := toAny(b)
	if err != nil {
		releaseTemp(ta)
		return false, NewError(TypeError, "StructuralEqual: rhs: "+err.Error())
	}
	defer releaseTemp(ta)
	defer releaseTemp(tb)
	var r C.int
	err = crc("StructuralEqual", func() C.int {
		r = C.tn_structural_equal(&xa, &xb, boolInt(mapFreeVars))
		if r < 0 {
			return -1
		}
		return 0
	})
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return r == 1, err
}

// StructuralHash hashes a value by content, consistently with
// StructuralEqual.
func StructuralHash(v interface{}, mapFreeVars bool) (uint64, error) {
	x, tmp, err := toAny(v)
	if err != nil {
		return 0, NewError(TypeError, "StructuralHash: "+err.Error())
	}
	defer releaseTemp(tmp)
	var h C.uint64_t
	err = crc("StructuralHash", func() C.int { return C.tn_structural_hash(&x, boolInt(mapFreeVars), &h) })
	runtime.KeepAlive(v)
	return uint64(h), err
}

// SaveJSON writes a value's whole object graph as JSON (sharing kept).
func SaveJSON(v interface{}, indent int) (string, error) {
	x, tmp, err := toAny(v)
	if err != nil {
		return "", NewError(TypeError, "SaveJSON: "+err.Error())
	}
	defer releaseTemp(tmp)
	o, err := cobj("SaveJSON", func() *C.TnObject { return C.tn_json_save(&x, C.int(indent)) })
	runtime.KeepAlive(v)
	return stringOf(o, err)
}

// LoadJSON reads what SaveJSON wrote (ValueError saying where it is bad).
func LoadJSON(text string) (interface{}, error) {
	c := C.CString(text)
	defer C.free(unsafePointer(c))
	var out C.TnAny
	err := crc("LoadJSON", func() C.int { return C.tn_json_load(c, C.size_t(len(text)), &out) })
	if err != nil {
		return nil, err
	}
	return fromOwned(&out), nil
}

// Repr is the printer's text for a value.
func Repr(v interface{}) (string, error) {
	x, tmp, err := toAny(v)
	if err != nil {
		return "", NewError(TypeError, "Repr: "+err.Error())
	}
	defer releaseTemp(tmp)
	o, err := cobj("Repr", func() *C.TnObject { return C.tn_repr(&x) })
	runtime.KeepAlive(v)
	return stringOf(o, err)
}

// stringOf reads and releases a tn.String result.
func stringOf(o Object, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer o.Release()
	var data *C.char
	var size C.size_t
	x := anyObj(o.ptr())
	if C.tngo_as_str(&x, &data, &size) != 0 {
		return "", NewError(TypeError, "expected a string, got "+o.TypeKey())
	}
	return C.GoStringN(data, C.int(size)), nil
}

func releaseTemp(p *C.TnObject) {
	if p != nil {
		C.tn_object_release(p)
	}
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
