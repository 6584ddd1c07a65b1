package tvmnode

// #include "helpers.h"
import "C"

import (
	"reflect"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Expr is an IR expression (ir.Var, ir.Call, ir.Constant, ir.Function, ...):
// read its fields with Get, its type with CheckedType.
type Expr struct{ Object }

// Type is an IR type (ir.TensorType, ir.TupleType, ir.FuncType).
type Type struct{ Object }

// IRModule is an ir.IRModule: global functions by name.
type IRModule struct{ Object }

// Pass is an ir.Pass: C, Python, Rust and Go passes alike.
type Pass struct{ Object }

func init() {
	registerHandleType(reflect.TypeOf(Expr{}), "ir.Expr")
	registerHandleType(reflect.TypeOf(Type{}), "ir.Type")
	registerHandleType(reflect.TypeOf(IRModule{}), "ir.IRModule")
	registerHandleType(reflect.TypeOf(Pass{}), "ir.Pass")
}

// AsExpr checks that o is an IR expression.
func AsExpr(o Object) (Expr, error) {
	return Expr{o}, checkType(o, "ir.Expr", "AsExpr")
}

// AsIRModule checks that o is an IR module (ir.IRModule).
func AsIRModule(o Object) (IRModule, error) {
	return IRModule{o}, checkType(o, "ir.IRModule", "AsIRModule")
}

func ptrs(who string, hs []Expr) ([]*C.TnObject, error) {
	out := make([]*C.TnObject, len(hs))
	for i, h := range hs {
		if out[i] = h.ptr(); out[i] == nil {
			return nil, Errorf(ValueError, "%s: argument %d is a nil or released handle", who, i)
		}
	}
	return out, nil
}

// cArray copies object pointers into C memory (an array handed to C must
// not be Go memory holding pointers); free it with C.free.
func cArray(ps []*C.TnObject) **C.TnObject {
	n := len(ps)
	if n == 0 {
		n = 1
	}
	arr := (**C.TnObject)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.TnObject)(nil)))))
	copy(unsafe.Slice(arr, n), ps)
	return arr
}

// TensorType is Tensor[shape, dtype].
func TensorType(shape []int64, dtype DataType) (Type, error) {
	var sp *C.int64_t
	if len(shape) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	o, err := cobj("TensorType", func() *C.TnObject {
		return C.tn_ir_tensor_type(sp, C.int32_t(len(shape)), dtype.c())
	})
	return Type{o}, err
}

// Var is a variable with a tensor type annotation.
func Var(name string, shape []int64, dtype DataType) (Expr, error) {
	t, err := TensorType(shape, dtype)
	if err != nil {
		return Expr{}, err
	}
	defer t.Release()
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("Var", func() *C.TnObject { return C.tn_ir_var(c, t.ptr()) })
	return Expr{o}, err
}

// Scalar is a constant scalar of a data type.
func Scalar(value float64, dtype DataType) (Expr, error) {
	o, err := cobj("Scalar", func() *C.TnObject { return C.tn_ir_scalar(C.double(value), dtype.c()) })
	return Expr{o}, err
}

// CallOp builds a call of a registered operator with attributes by name;
// the builder checks arity and attributes and types the call when its
// arguments are typed (a TypeError naming the operator, the argument and
// both types otherwise).
func CallOp(op string, args []Expr, attrs map[string]interface{}) (Expr, error) {
	ps, err := ptrs("CallOp "+op, args)
	if err != nil {
		return Expr{}, err
	}
	keys := sortedKeys(attrs)
	vals := make([]interface{}, len(keys))
	for i, k := range keys {
		vals[i] = attrs[k]
	}
	a, err := makeArgs("CallOp "+op+" attrs", vals)
	if err != nil {
		return Expr{}, err
	}
	defer a.free()
	names := (**C.char)(C.malloc(C.size_t(len(keys)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(names))
	ns := unsafe.Slice(names, len(keys)+1)
	for i, k := range keys {
		ns[i] = C.CString(k)
		defer C.free(unsafePointer(ns[i]))
	}
	arr := cArray(ps)
	defer C.free(unsafe.Pointer(arr))
	c := C.CString(op)
	defer C.free(unsafePointer(c))
	o, err := cobj("CallOp", func() *C.TnObject {
		return C.tn_ir_call_op(c, arr, C.int32_t(len(ps)), names, a.ptr(), C.int32_t(len(keys)))
	})
	runtime.KeepAlive(args)
	runtime.KeepAlive(a)
	return Expr{o}, err
}

// NewFunction is fn(params) { body }.
func NewFunction(params []Expr, body Expr) (Expr, error) {
	ps, err := ptrs("NewFunction", params)
	if err != nil {
		return Expr{}, err
	}
	arr := cArray(ps)
	defer C.free(unsafe.Pointer(arr))
	o, err := cobj("NewFunction", func() *C.TnObject {
		return C.tn_ir_function(arr, C.int32_t(len(ps)), body.ptr(), nil, nil)
	})
	runtime.KeepAlive(params)
	runtime.KeepAlive(body.r)
	return Expr{o}, err
}

// CheckedType is the expression's inferred type (a nil Type before
// inference).
func (e Expr) CheckedType() Type {
	p := e.ptr()
	if p == nil {
		return Type{}
	}
	t := borrow(C.tn_ir_checked_type(p)) // transfer none
	runtime.KeepAlive(e.r)
	return Type{t}
}

// OpName is the operator's name when e is a call of a registered
// operator, else "".
func (e Expr) OpName() string {
	if !e.IsInstance("ir.Call") {
		return ""
	}
	op, err := e.GetObject("op")
	if err != nil {
		return ""
	}
	defer op.Release()
	if !op.IsInstance("ir.Op") {
		return ""
	}
	name, _ := op.Get("name")
	s, _ := name.(string)
	return s
}

// Args are a call's arguments.
func (e Expr) Args() ([]Expr, error) {
	objs, err := e.fieldObjects("args")
	if err != nil {
		return nil, err
	}
	out := make([]Expr, len(objs))
	for i, o := range objs {
		out[i] = Expr{o}
	}
	return out, nil
}

// AsText prints a module, an expression or a type in the text format.
func AsText(node Handle, showMeta bool) (string, error) {
	p, err := node.AsObject().live("AsText")
	if err != nil {
		return "", err
	}
	o, err := cobj("AsText", func() *C.TnObject { return C.tn_ir_astext(p, boolInt(showMeta)) })
	runtime.KeepAlive(node)
	return stringOf(o, err)
}

// ParseModule reads the text format (ValueError with line and column).
func ParseModule(text string) (IRModule, error) {
	c := C.CString(text)
	defer C.free(unsafePointer(c))
	o, err := cobj("ParseModule", func() *C.TnObject { return C.tn_ir_parse(c, C.size_t(len(text))) })
	return IRModule{o}, err
}

// ModuleFromExpr makes a module whose "main" is expr (a function, or an
// expression wrapped in one).
func ModuleFromExpr(expr Expr) (IRModule, error) {
	p, err := expr.live("ModuleFromExpr")
	if err != nil {
		return IRModule{}, err
	}
	o, err := cobj("ModuleFromExpr", func() *C.TnObject { return C.tn_ir_module_from_expr(p) })
	runtime.KeepAlive(expr.r)
	return IRModule{o}, err
}

// Function is the module's global function name (KeyError if none).
func (m IRModule) Function(name string) (Expr, error) {
	p, err := m.live("IRModule.Function")
	if err != nil {
		return Expr{}, err
	}
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("IRModule.Function", func() *C.TnObject { return C.tn_ir_module_get(p, c) })
	runtime.KeepAlive(m.r)
	return Expr{o}, err
}

// Mutate rewrites bottom-up: fn gets each node and the node rebuilt over
// its rewritten children (the node itself when no child changed) and
// returns the replacement (return rebuilt to keep it). Nodes are visited
// once each, without recursion; an unchanged graph comes back as the same
// object. An error or panic from fn stops the walk and is returned.
func Mutate(e Expr, fn func(orig, rebuilt Expr) (Expr, error)) (Expr, error) {
	p, err := e.live("Mutate")
	if err != nil {
		return Expr{}, err
	}
	h := cgo.NewHandle(&rewriter{fn: fn})
	defer h.Delete()
	o, err := cobj("Mutate", func() *C.TnObject { return C.tngo_mutate(p, C.uintptr_t(h)) })
	runtime.KeepAlive(e.r)
	return Expr{o}, err
}

// PostOrderVisit calls fn on every node under e, children first, each once.
func PostOrderVisit(e Expr, fn func(Expr) error) error {
	p, err := e.live("PostOrderVisit")
	if err != nil {
		return err
	}
	h := cgo.NewHandle(&visitor{fn: fn})
	defer h.Delete()
	err = crc("PostOrderVisit", func() C.int { return C.tngo_visit(p, C.uintptr_t(h)) })
	runtime.KeepAlive(e.r)
	return err
}

type rewriter struct {
	fn func(orig, rebuilt Expr) (Expr, error)
}

type visitor struct{ fn func(Expr) error }

//export tngoRewrite
func tngoRewrite(h C.uintptr_t, orig, rebuilt *C.TnObject) (out *C.TnObject) {
	r := cgo.Handle(h).Value().(*rewriter)
	defer func() {
		if x := recover(); x != nil {
			raise(Errorf(RuntimeError, "Mutate: the Go rewrite panicked: %v", x), "Mutate")
			out = nil
		}
	}()
	o, rb := borrow(orig), borrow(rebuilt)
	defer o.Release()
	defer rb.Release()
	res, err := r.fn(Expr{o}, Expr{rb})
	if err != nil {
		raise(err, "Mutate")
		return nil
	}
	p := res.ptr()
	if p == nil {
		raise(NewError(TypeError, "Mutate: the rewrite returned a nil expression"), "Mutate")
		return nil
	}
	C.tn_object_retain(p)
	runtime.KeepAlive(res.r)
	return p
}

//export tngoVisit
func tngoVisit(h C.uintptr_t, expr *C.TnObject) (rc C.int) {
	v := cgo.Handle(h).Value().(*visitor)
	defer func() {
		if x := recover(); x != nil {
			raise(Errorf(RuntimeError, "PostOrderVisit: the Go visitor panicked: %v", x), "PostOrderVisit")
			rc = -1
		}
	}()
	e := borrow(expr)
	defer e.Release()
	if err := v.fn(Expr{e}); err != nil {
		raise(err, "PostOrderVisit")
		return -1
	}
	return 0
}

// ---- passes -------------------------------------------------------------

func stringArray(names []string) (*C.TnObject, error) {
	items := make([]interface{}, len(names))
	for i, n := range names {
		items[i] = n
	}
	return newArray(items)
}

// FunctionPass makes a pass that calls fn on every (non-primitive) function
// of a module; required names passes that must run first. A Go error or
// panic fails the pass, and the pass infrastructure names the pass and
// leaves the module unchanged.
func FunctionPass(name string, optLevel int32, required []string,
	fn func(f Expr, mod IRModule) (Expr, error)) (Pass, error) {
	body, err := FunctionOfNamed(name, func(f Expr, mod IRModule, ctx interface{}) (Expr, error) {
		return fn(f, mod)
	})
	if err != nil {
		return Pass{}, err
	}
	defer body.Release()
	return makePass(name, optLevel, required, body, false)
}

// ModulePass makes a pass over a whole module.
func ModulePass(name string, optLevel int32, required []string,
	fn func(mod IRModule) (IRModule, error)) (Pass, error) {
	body, err := FunctionOfNamed(name, func(mod IRModule, ctx interface{}) (IRModule, error) {
		return fn(mod)
	})
	if err != nil {
		return Pass{}, err
	}
	defer body.Release()
	return makePass(name, optLevel, required, body, true)
}

func makePass(name string, optLevel int32, required []string, body Function, module bool) (Pass, error) {
	req, err := stringArray(required)
	if err != nil {
		return Pass{}, err
	}
	defer C.tn_object_release(req)
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("makePass", func() *C.TnObject {
		if module {
			return C.tn_pass_module(c, C.int32_t(optLevel), req, body.ptr())
		}
		return C.tn_pass_function(c, C.int32_t(optLevel), req, body.ptr())
	})
	runtime.KeepAlive(body.r)
	return Pass{o}, err
}

// GetPass looks up a registered pass ("InferType", "FuseOps", or one
// registered from any language).
func GetPass(name string) (Pass, error) {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("GetPass", func() *C.TnObject { return C.tn_pass_get(c) })
	return Pass{o}, err
}

// SequentialNamed runs registered passes by name, in order.
func SequentialNamed(name string, passes ...string) (Pass, error) {
	arr := (**C.char)(C.malloc(C.size_t(len(passes)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(arr))
	ns := unsafe.Slice(arr, len(passes)+1)
	for i, p := range passes {
		ns[i] = C.CString(p)
		defer C.free(unsafePointer(ns[i]))
	}
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("SequentialNamed", func() *C.TnObject {
		return C.tn_pass_sequential_named(arr, C.int32_t(len(passes)), c)
	})
	return Pass{o}, err
}

// Register registers the pass under its name so that any language can
// look it up and compose it.
func (p Pass) Register(override bool) error {
	ptr, err := p.live("Pass.Register")
	if err != nil {
		return err
	}
	err = crc("Pass.Register", func() C.int { return C.tn_pass_register(ptr, boolInt(override)) })
	runtime.KeepAlive(p.r)
	return err
}

// UnregisterPass removes a registered pass (KeyError if none).
func UnregisterPass(name string) error {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	return crc("UnregisterPass", func() C.int { return C.tn_pass_unregister(c) })
}

// Run runs the pass on a module under the current pass context (the one
// PassContext.Do entered on this goroutine, or the default one; see
// PassContext.Run); the input module is never changed.
func (p Pass) Run(mod IRModule) (IRModule, error) {
	return p.run("Pass.Run", mod, nil, nil)
}

// run runs under ctx (nil: the current context); keep holds ctx's handle.
func (p Pass) run(who string, mod IRModule, ctx *C.TnObject, keep *ref) (IRModule, error) {
	pp, err := p.live(who)
	if err != nil {
		return IRModule{}, err
	}
	mp, err := mod.live(who)
	if err != nil {
		return IRModule{}, err
	}
	o, err := cobj(who, func() *C.TnObject { return C.tn_pass_run(pp, mp, ctx) })
	runtime.KeepAlive(p.r)
	runtime.KeepAlive(mod.r)
	runtime.KeepAlive(keep)
	return IRModule{o}, err
}

// Fusion patterns of operators, as FuseOps reads them (RegisterOp).
const (
	PatternElemwise   = int32(C.TN_OP_ELEMWISE)
	PatternBroadcast  = int32(C.TN_OP_BROADCAST)
	PatternInjective  = int32(C.TN_OP_INJECTIVE)
	PatternReduce     = int32(C.TN_OP_REDUCE)
	PatternOutFusable = int32(C.TN_OP_OUT_FUSABLE)
	PatternOpaque     = int32(C.TN_OP_OPAQUE)
)

// RegisterOp registers an operator whose type inference is a Go func:
// infer gets the argument types and the call's attrs node (a nil Object
// when there is none) and returns the call's type or an error (a
// *Error of kind TypeError for arguments it does not accept), which the
// builder raises where the call is made. numInputs is the arity (-1: any),
// attrsType the type key of an ir.Attrs node type ("" for none). The C
// builders, the text format and every pass, in any language, then use it;
// a taken name is a ValueError.
func RegisterOp(name string, numInputs int32, pattern int32, attrsType, doc string,
	infer func(argTypes []Type, attrs Object) (Type, error)) error {
	f, err := FunctionOfNamed(name, func(types Array, attrs interface{}) (Type, error) {
		objs, err := types.Objects()
		if err != nil {
			return Type{}, err
		}
		ts := make([]Type, len(objs))
		for i, o := range objs {
			ts[i] = Type{o}
		}
		a, _ := attrs.(Object)
		return infer(ts, a)
	})
	if err != nil {
		return err
	}
	defer f.Release()
	cname := C.CString(name)
	defer C.free(unsafePointer(cname))
	var ckey, cdoc *C.char
	if attrsType != "" {
		ckey = C.CString(attrsType)
		defer C.free(unsafePointer(ckey))
	}
	if doc != "" {
		cdoc = C.CString(doc)
		defer C.free(unsafePointer(cdoc))
	}
	err = crc("RegisterOp", func() C.int {
		return C.tn_ir_op_register(cname, C.int32_t(numInputs), ckey, C.int32_t(pattern), f.ptr(), cdoc, 0)
	})
	runtime.KeepAlive(f.r)
	return err
}

// UnregisterOp removes an operator (KeyError if none); calls already built
// keep it.
func UnregisterOp(name string) error {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	return crc("UnregisterOp", func() C.int { return C.tn_ir_op_unregister(c) })
}

// Names of the operator attributes the library reads (OpGetAttr, OpSetAttr).
const (
	OpAttrInferType  = "infer_type"  // Function infer(argTypes, attrs) -> Type
	OpAttrPattern    = "pattern"     // int64, a Pattern* value
	OpAttrDoc        = "doc"         // string, one line on what it computes
	OpAttrInputNames = "input_names" // Array of string, one per input
)

// lookupOp returns the operator registered as name (KeyError if none).
func lookupOp(who, name string) (Object, error) {
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	return cobj(who, func() *C.TnObject { return C.tn_ir_op_get(c) })
}

// OpGetAttr returns attribute attr of the operator registered as op, or
// nil when it has none (a KeyError when there is no such operator). The
// value is converted as function results are (int64, string, Array, ...).
func OpGetAttr(op, attr string) (interface{}, error) {
	o, err := lookupOp("OpGetAttr", op)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	cattr := C.CString(attr)
	defer C.free(unsafePointer(cattr))
	v := C.tn_ir_op_get_attr(o.ptr(), cattr)
	if v == nil {
		return nil, nil
	}
	return fromAny(v), nil // fromAny copies what it keeps
}

// OpSetAttr attaches value as attribute attr of the operator registered as
// op, visible from every language. A set attribute is a ValueError unless
// override; values of the attributes the library reads (OpAttr*) are
// checked.
func OpSetAttr(op, attr string, value interface{}, override bool) error {
	a, err := makeArgs("OpSetAttr", []interface{}{value})
	if err != nil {
		return err
	}
	defer a.free()
	o, err := lookupOp("OpSetAttr", op)
	if err != nil {
		return err
	}
	defer o.Release()
	cattr := C.CString(attr)
	defer C.free(unsafePointer(cattr))
	ov := C.int(0)
	if override {
		ov = 1
	}
	return crc("OpSetAttr", func() C.int {
		return C.tn_ir_op_set_attr(o.ptr(), cattr, a.ptr(), ov)
	})
}
