//! The tensor IR and passes, from Rust.
//!
//! IR nodes are ordinary reflected nodes, so everything in
//! [`node`](mod@crate::node) works on them; this module adds typed handles
//! (`Call` derefs to `Expr` derefs to `Object`), field getters that read the
//! public C layouts of `ir.h` directly, the C builders (which check arity and
//! attributes and infer types as the call is built), and passes.
//!
//! A pass written in Rust is a closure turned into a `tn.Function` (see
//! [`function`](crate::function)) and handed to `tn_pass_module` /
//! `tn_pass_function`, so the pass infrastructure cannot tell it from a C or
//! Python pass: it can be registered by name with [`Pass::register`] and run
//! inside a [`Pass::sequential_named`] pipeline next to the built-in ones.
//! A panic inside the closure becomes an error that names the pass.

use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tvmnode_sys as sys;

use crate::error::{check, check_typed, cstring, take_raised, Error, ErrorKind, Result};
use crate::object::ObjectType;
use crate::{object_handle, Any, Array, DataType, FromAny, IntoAny, Map, Object, Shape, Tensor};

fn types() -> &'static sys::TnIrTypes {
    // SAFETY: a static table, valid once the library is loaded.
    unsafe { &*sys::tn_ir_types() }
}

object_handle! {
    /// The base of IR types (`ir.Type`).
    pub struct Type: Object, key "ir.Type", index types().type_;
}
object_handle! {
    /// `Tensor[(d0, d1, ...), dtype]` (`ir.TensorType`).
    pub struct TensorType: Type, key "ir.TensorType", index types().tensor_type;
}
object_handle! {
    /// `(T0, T1, ...)` (`ir.TupleType`).
    pub struct TupleType: Type, key "ir.TupleType", index types().tuple_type;
}
object_handle! {
    /// `fn (T0, ...) -> R` (`ir.FuncType`).
    pub struct FuncType: Type, key "ir.FuncType", index types().func_type;
}
object_handle! {
    /// The base of expressions (`ir.Expr`).
    pub struct Expr: Object, key "ir.Expr", index types().expr;
}
object_handle! {
    /// A variable (`ir.Var`).
    pub struct Var: Expr, key "ir.Var", index types().var;
}
object_handle! {
    /// A constant tensor (`ir.Constant`).
    pub struct Constant: Expr, key "ir.Constant", index types().constant;
}
object_handle! {
    /// A registered operator (`ir.Op`).
    pub struct Op: Expr, key "ir.Op", index types().op;
}
object_handle! {
    /// A call of an operator, global function or function (`ir.Call`).
    pub struct Call: Expr, key "ir.Call", index types().call;
}
object_handle! {
    /// A tuple expression (`ir.Tuple`).
    pub struct Tuple: Expr, key "ir.Tuple", index types().tuple;
}
object_handle! {
    /// `tuple.index` (`ir.TupleGetItem`).
    pub struct TupleGetItem: Expr, key "ir.TupleGetItem", index types().tuple_get_item;
}
object_handle! {
    /// `let var = value; body` (`ir.Let`).
    pub struct Let: Expr, key "ir.Let", index types().let_;
}
object_handle! {
    /// A function expression (`ir.Function`).
    pub struct Function: Expr, key "ir.Function", index types().function;
}
object_handle! {
    /// A global function's name (`ir.GlobalVar`).
    pub struct GlobalVar: Expr, key "ir.GlobalVar", index types().global_var;
}
object_handle! {
    /// Named global functions and module attributes (`ir.IRModule`).
    pub struct Module: Object, key "ir.IRModule", index types().module;
}
object_handle! {
    /// A pass: a named function from module to module (`ir.Pass`).
    pub struct Pass: Object, key "ir.Pass", lookup;
}
object_handle! {
    /// Opt level, config, required/disabled passes, instruments
    /// (`ir.PassContext`).
    pub struct PassContext: Object, key "ir.PassContext", lookup;
}

/// A borrowed C field as a handle (a new reference); `None` for NULL.
fn field<T: ObjectType>(p: *mut sys::TnObject) -> Option<T> {
    // SAFETY: `p` is a field of a live node, NULL or of the type the layout
    // documents.
    unsafe { Object::from_borrowed(p).map(|o| T::from_object_unchecked(o)) }
}

/// A required field (the builders never leave it NULL).
fn required<T: ObjectType>(p: *mut sys::TnObject) -> T {
    field(p).expect("required IR field is NULL")
}

/// The C layout behind a handle.
///
/// # Safety
/// `L` is the C layout of the handle's type.
unsafe fn layout<L>(o: &Object) -> &L {
    &*(o.as_ptr() as *const L)
}

fn raw_ptrs<T: ObjectType>(items: &[&T]) -> Vec<*mut sys::TnObject> {
    items.iter().map(|x| x.as_object().as_ptr()).collect()
}

fn opt_ptr<T: ObjectType>(x: Option<&T>) -> *mut sys::TnObject {
    x.map_or(std::ptr::null_mut(), |x| x.as_object().as_ptr())
}

fn text(s: Object) -> std::string::String {
    crate::String::try_from(s)
        .map(|s| s.as_str_lossy().into_owned())
        .unwrap_or_default()
}

impl TensorType {
    /// `Tensor[shape, dtype]`.
    pub fn new(shape: &[i64], dtype: DataType) -> Result<TensorType> {
        // SAFETY: valid shape slice.
        check_typed(unsafe { sys::tn_ir_tensor_type(shape.as_ptr(), shape.len() as i32, dtype.0) })
    }
    /// The shape.
    pub fn shape(&self) -> Shape {
        // SAFETY: ir.TensorType layout.
        required(unsafe { layout::<sys::TnIrTensorType>(self) }.shape)
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        // SAFETY: ir.TensorType layout.
        DataType(unsafe { layout::<sys::TnIrTensorType>(self) }.dtype)
    }
}

impl TupleType {
    /// `(T0, T1, ...)`.
    pub fn new(fields: &[&Type]) -> Result<TupleType> {
        let p = raw_ptrs(fields);
        // SAFETY: borrowed pointers valid for the call.
        check_typed(unsafe { sys::tn_ir_tuple_type(p.as_ptr(), p.len() as i32) })
    }
    /// The field types.
    pub fn fields(&self) -> Result<Vec<Type>> {
        // SAFETY: ir.TupleType layout.
        required::<Array>(unsafe { layout::<sys::TnIrTupleType>(self) }.fields).to_vec()
    }
}

impl FuncType {
    /// `fn (args) -> ret`.
    pub fn new(arg_types: &[&Type], ret: &Type) -> Result<FuncType> {
        let p = raw_ptrs(arg_types);
        // SAFETY: borrowed pointers valid for the call.
        check_typed(unsafe { sys::tn_ir_func_type(p.as_ptr(), p.len() as i32, ret.as_ptr()) })
    }
    /// The argument types.
    pub fn arg_types(&self) -> Result<Vec<Type>> {
        // SAFETY: ir.FuncType layout.
        required::<Array>(unsafe { layout::<sys::TnIrFuncType>(self) }.arg_types).to_vec()
    }
    /// The result type.
    pub fn ret_type(&self) -> Type {
        // SAFETY: ir.FuncType layout.
        required(unsafe { layout::<sys::TnIrFuncType>(self) }.ret_type)
    }
}

impl Expr {
    /// The type inference gave this expression, if it has run.
    pub fn checked_type(&self) -> Option<Type> {
        // SAFETY: ir.Expr layout (every expression starts with it).
        field(unsafe { layout::<sys::TnIrExpr>(self) }.checked_type)
    }

    /// The expression in the text format.
    pub fn astext(&self) -> Result<std::string::String> {
        astext(self.as_object(), false)
    }
}

impl Var {
    /// A variable, optionally annotated with a type.
    pub fn new(name_hint: &str, type_annotation: Option<&Type>) -> Result<Var> {
        let c = cstring(name_hint)?;
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_ir_var(c.as_ptr(), opt_ptr(type_annotation)) })
    }
    /// The name it prints with (not its identity).
    pub fn name_hint(&self) -> std::string::String {
        // SAFETY: ir.Var layout.
        text(required(unsafe { layout::<sys::TnIrVar>(self) }.name_hint))
    }
    /// Its annotation, if any.
    pub fn type_annotation(&self) -> Option<Type> {
        // SAFETY: ir.Var layout.
        field(unsafe { layout::<sys::TnIrVar>(self) }.type_annotation)
    }
}

impl Constant {
    /// A constant holding `tensor`.
    pub fn new(tensor: &Tensor) -> Result<Constant> {
        // SAFETY: borrowed tensor.
        check_typed(unsafe { sys::tn_ir_constant(tensor.as_ptr()) })
    }
    /// A 0-d constant.
    pub fn scalar(value: f64, dtype: DataType) -> Result<Constant> {
        // SAFETY: plain values.
        check_typed(unsafe { sys::tn_ir_scalar(value, dtype.0) })
    }
    /// The tensor.
    pub fn data(&self) -> Tensor {
        // SAFETY: ir.Constant layout.
        required(unsafe { layout::<sys::TnIrConstant>(self) }.data)
    }
}

impl Op {
    /// The registered operator named `name`; `KeyError` if there is none.
    pub fn lookup(name: &str) -> Result<Op> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check_typed(unsafe { sys::tn_ir_op_get(c.as_ptr()) })
    }
    /// Its name.
    pub fn name(&self) -> std::string::String {
        // SAFETY: ir.Op layout.
        text(required(unsafe { layout::<sys::TnIrOp>(self) }.name))
    }
    /// Number of inputs (`-1`: any).
    pub fn num_inputs(&self) -> i64 {
        // SAFETY: ir.Op layout.
        unsafe { layout::<sys::TnIrOp>(self) }.num_inputs
    }
    /// Fusion pattern (`sys::TN_OP_*`; opaque when it has none): its
    /// `"pattern"` attribute.
    pub fn pattern(&self) -> i64 {
        self.attr_c(sys::TN_OP_ATTR_PATTERN)
            .and_then(|a| i64::from_any(&a).ok())
            .unwrap_or(sys::TN_OP_OPAQUE as i64)
    }
    /// The names of its inputs (its `"input_names"` attribute; empty when
    /// it has none).
    pub fn input_names(&self) -> Vec<std::string::String> {
        self.attr_c(sys::TN_OP_ATTR_INPUT_NAMES)
            .and_then(|a| Array::from_any(&a).ok())
            .and_then(|a| a.to_vec().ok())
            .unwrap_or_default()
    }
    /// Its one-line description (its `"doc"` attribute), if any.
    pub fn doc(&self) -> Option<std::string::String> {
        self.attr_c(sys::TN_OP_ATTR_DOC)
            .and_then(|a| std::string::String::from_any(&a).ok())
    }
    /// The operator attribute `attr` (a copy), or `None` when it has none.
    /// Attributes are shared by every language: type inference
    /// (`"infer_type"`), `"pattern"`, `"doc"`, `"input_names"`, and
    /// whatever a binding attached.
    pub fn attr(&self, attr: &str) -> Result<Option<Any>> {
        let c = cstring(attr)?;
        Ok(self.attr_c(&c))
    }
    fn attr_c(&self, attr: &std::ffi::CStr) -> Option<Any> {
        // SAFETY: `self` is an ir.Op; the result is borrowed from it and
        // copied at once.
        let p = unsafe { sys::tn_ir_op_get_attr(self.as_ptr(), attr.as_ptr()) };
        if p.is_null() {
            return None;
        }
        let mut out = Any::none();
        // SAFETY: `p` is a valid any while `self` lives; `out` is None.
        check(unsafe { sys::tn_any_to_owned(out.as_mut_raw(), p) }).ok()?;
        Some(out)
    }
    /// Attach `value` as attribute `attr`, visible from every language. A
    /// set attribute is a `ValueError` unless `overwrite`; the attributes
    /// the library reads are checked (`TypeError`/`ValueError`).
    pub fn set_attr(&self, attr: &str, value: impl IntoAny, overwrite: bool) -> Result<()> {
        let c = cstring(attr)?;
        let v = value.into_any();
        // SAFETY: `self` is an ir.Op; `v` is borrowed (the op keeps a copy).
        check(unsafe {
            sys::tn_ir_op_set_attr(self.as_ptr(), c.as_ptr(), v.as_raw(), c_int::from(overwrite))
        })
    }
    /// Register an operator whose type inference is a Rust closure:
    /// `infer(arg_types, attrs)` gets the argument types and the call's
    /// attrs node (if any) and returns the call's type, or an error (a
    /// `TypeError` for arguments it does not accept), which the builder
    /// raises where the call is made. `num_inputs` is the arity (`-1`:
    /// any), `pattern` a `sys::TN_OP_*` fusion pattern, `attrs_type` the
    /// type key of an `ir.Attrs` node type. The C builders, the text format
    /// and every pass, in any language, then use it. A taken name is a
    /// `ValueError`; a panic in `infer` becomes an error naming the
    /// operator.
    pub fn register<F>(
        name: &str,
        num_inputs: i32,
        pattern: i32,
        attrs_type: Option<&str>,
        doc: Option<&str>,
        infer: F,
    ) -> Result<Op>
    where
        F: Fn(&[Type], Option<&Object>) -> Result<Type> + Send + Sync + 'static,
    {
        let cname = cstring(name)?;
        let ckey = attrs_type.map(cstring).transpose()?;
        let cdoc = doc.map(cstring).transpose()?;
        let f = crate::Function::from_fn_named(name, move |types: Array, attrs: Option<Object>| {
            let types: Vec<Type> = types.to_vec()?;
            infer(&types, attrs.as_ref())
        });
        // SAFETY: NUL-terminated strings or NULL; `f` is borrowed (the
        // registry takes its own reference).
        check(unsafe {
            sys::tn_ir_op_register(
                cname.as_ptr(),
                num_inputs,
                ckey.as_ref().map_or(std::ptr::null(), |k| k.as_ptr()),
                pattern,
                f.as_ptr(),
                cdoc.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
                0,
            )
        })?;
        Op::lookup(name)
    }

    /// Remove an operator from the registry (`KeyError` if there is none);
    /// calls already built keep it.
    pub fn unregister(name: &str) -> Result<()> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check(unsafe { sys::tn_ir_op_unregister(c.as_ptr()) })
    }

    /// Names of every registered operator, sorted.
    pub fn list() -> Result<Vec<std::string::String>> {
        // SAFETY: transfer full.
        let a: Array = check_typed(unsafe { sys::tn_ir_op_list() })?;
        a.to_vec()
    }
}

impl Call {
    /// A call of `op` (an `Op`, `GlobalVar` or `Function`) with an attrs node
    /// (`None`: the op's defaults). For an operator whose arguments are all
    /// typed the call is typed at once, and a mismatch is a `TypeError` here.
    pub fn new(op: &Expr, args: &[&Expr], attrs: Option<&Object>) -> Result<Call> {
        let p = raw_ptrs(args);
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_ir_call(op.as_ptr(), p.as_ptr(), p.len() as i32, opt_ptr(attrs)) })
    }

    /// A call of the operator named `op_name`, with attributes by name:
    /// `Call::op("nn.dense", &[&x, &w], &[("units", 128.into())])`.
    pub fn op(op_name: &str, args: &[&Expr], attrs: &[(&str, Any)]) -> Result<Call> {
        let name = cstring(op_name)?;
        let p = raw_ptrs(args);
        let names: Vec<_> = attrs.iter().map(|(n, _)| cstring(n)).collect::<Result<_>>()?;
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // Borrowed copies of the values (ownership stays with `attrs`).
        let values: Vec<sys::TnAny> = attrs.iter().map(|(_, v)| *v.as_raw()).collect();
        // SAFETY: all arrays valid for the call.
        check_typed(unsafe {
            sys::tn_ir_call_op(
                name.as_ptr(),
                p.as_ptr(),
                p.len() as i32,
                name_ptrs.as_ptr(),
                values.as_ptr(),
                values.len() as i32,
            )
        })
    }

    /// What is called.
    pub fn callee(&self) -> Expr {
        // SAFETY: ir.Call layout.
        required(unsafe { layout::<sys::TnIrCall>(self) }.op)
    }
    /// The callee as an operator, if it is one.
    pub fn callee_op(&self) -> Option<Op> {
        self.callee().into_object().downcast().ok()
    }
    /// The arguments.
    pub fn args(&self) -> Result<Vec<Expr>> {
        self.args_array().to_vec()
    }
    /// The arguments as the stored array.
    pub fn args_array(&self) -> Array {
        // SAFETY: ir.Call layout.
        required(unsafe { layout::<sys::TnIrCall>(self) }.args)
    }
    /// The attrs node, if any.
    pub fn attrs(&self) -> Option<Object> {
        // SAFETY: ir.Call layout.
        field(unsafe { layout::<sys::TnIrCall>(self) }.attrs)
    }
}

impl Tuple {
    /// `(e0, e1, ...)`.
    pub fn new(fields: &[&Expr]) -> Result<Tuple> {
        let p = raw_ptrs(fields);
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_ir_tuple(p.as_ptr(), p.len() as i32) })
    }
    /// The fields.
    pub fn fields(&self) -> Result<Vec<Expr>> {
        // SAFETY: ir.Tuple layout.
        required::<Array>(unsafe { layout::<sys::TnIrTuple>(self) }.fields).to_vec()
    }
}

impl TupleGetItem {
    /// `tuple.index`.
    pub fn new(tuple: &Expr, index: i64) -> Result<TupleGetItem> {
        // SAFETY: borrowed argument.
        check_typed(unsafe { sys::tn_ir_tuple_get_item(tuple.as_ptr(), index) })
    }
    /// The tuple.
    pub fn tuple(&self) -> Expr {
        // SAFETY: ir.TupleGetItem layout.
        required(unsafe { layout::<sys::TnIrTupleGetItem>(self) }.tuple)
    }
    /// The index.
    pub fn index(&self) -> i64 {
        // SAFETY: ir.TupleGetItem layout.
        unsafe { layout::<sys::TnIrTupleGetItem>(self) }.index
    }
}

impl Let {
    /// `let var = value; body`.
    pub fn new(var: &Var, value: &Expr, body: &Expr) -> Result<Let> {
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_ir_let(var.as_ptr(), value.as_ptr(), body.as_ptr()) })
    }
    /// The variable defined.
    pub fn var(&self) -> Var {
        // SAFETY: ir.Let layout.
        required(unsafe { layout::<sys::TnIrLet>(self) }.var)
    }
    /// The bound value.
    pub fn value(&self) -> Expr {
        // SAFETY: ir.Let layout.
        required(unsafe { layout::<sys::TnIrLet>(self) }.value)
    }
    /// The body.
    pub fn body(&self) -> Expr {
        // SAFETY: ir.Let layout.
        required(unsafe { layout::<sys::TnIrLet>(self) }.body)
    }
}

impl Function {
    /// `fn (params) -> ret_type { body }` with optional attrs.
    pub fn new(
        params: &[&Var],
        body: &Expr,
        ret_type: Option<&Type>,
        attrs: Option<&Map>,
    ) -> Result<Function> {
        let p = raw_ptrs(params);
        // SAFETY: borrowed arguments.
        check_typed(unsafe {
            sys::tn_ir_function(
                p.as_ptr(),
                p.len() as i32,
                body.as_ptr(),
                opt_ptr(ret_type),
                opt_ptr(attrs),
            )
        })
    }
    /// The parameters.
    pub fn params(&self) -> Result<Vec<Var>> {
        // SAFETY: ir.Function layout.
        required::<Array>(unsafe { layout::<sys::TnIrFunction>(self) }.params).to_vec()
    }
    /// The body.
    pub fn body(&self) -> Expr {
        // SAFETY: ir.Function layout.
        required(unsafe { layout::<sys::TnIrFunction>(self) }.body)
    }
    /// The declared result type, if any.
    pub fn ret_type(&self) -> Option<Type> {
        // SAFETY: ir.Function layout.
        field(unsafe { layout::<sys::TnIrFunction>(self) }.ret_type)
    }
    /// The attributes, if any (`{"Primitive": 1}` for fused functions).
    pub fn attrs(&self) -> Option<Map> {
        // SAFETY: ir.Function layout.
        field(unsafe { layout::<sys::TnIrFunction>(self) }.attrs)
    }
}

impl GlobalVar {
    /// `@name`.
    pub fn new(name: &str) -> Result<GlobalVar> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check_typed(unsafe { sys::tn_ir_global_var(c.as_ptr()) })
    }
    /// The name.
    pub fn name_hint(&self) -> std::string::String {
        // SAFETY: ir.GlobalVar layout.
        text(required(unsafe { layout::<sys::TnIrGlobalVar>(self) }.name_hint))
    }
}

impl Module {
    /// An empty module.
    pub fn new() -> Result<Module> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_ir_module_new() })
    }
    /// A module whose `main` is `expr` (free variables become parameters).
    pub fn from_expr(expr: &Expr) -> Result<Module> {
        // SAFETY: borrowed argument.
        check_typed(unsafe { sys::tn_ir_module_from_expr(expr.as_ptr()) })
    }
    /// Parse the text format.
    pub fn parse(text: &str) -> Result<Module> {
        // SAFETY: `text` valid for its length.
        check_typed(unsafe { sys::tn_ir_parse(text.as_ptr().cast(), text.len()) })
    }
    /// A function by name; `KeyError` if absent.
    pub fn function(&self, name: &str) -> Result<Function> {
        let c = cstring(name)?;
        // SAFETY: live module.
        check_typed(unsafe { sys::tn_ir_module_get(self.as_ptr(), c.as_ptr()) })
    }
    /// A new module with `func` as `name` (this one is unchanged).
    pub fn with(&self, name: &str, func: &Function) -> Result<Module> {
        let c = cstring(name)?;
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_ir_module_with(self.as_ptr(), c.as_ptr(), func.as_ptr()) })
    }
    /// The functions, by name.
    pub fn functions(&self) -> Map {
        // SAFETY: ir.IRModule layout.
        required(unsafe { layout::<sys::TnIrModule>(self) }.functions)
    }
    /// The module in the text format (`show_meta`: constants after a
    /// `#[metadata]` line, so that [`Module::parse`] reads them back).
    pub fn astext(&self, show_meta: bool) -> Result<std::string::String> {
        astext(self.as_object(), show_meta)
    }
}

fn astext(node: &Object, show_meta: bool) -> Result<std::string::String> {
    // SAFETY: borrowed node; transfer full of a tn.String.
    let s = crate::error::check_obj(unsafe { sys::tn_ir_astext(node.as_ptr(), show_meta as c_int) })?;
    Ok(text(s))
}

// ---------------------------------------------------------------------------
// Visiting and rewriting.

struct VisitState<'a> {
    f: &'a mut dyn FnMut(&Expr) -> Result<()>,
    err: Option<Error>,
}

unsafe extern "C" fn visit_cb(ctx: *mut c_void, expr: *mut sys::TnObject) -> c_int {
    // SAFETY: `ctx` is the VisitState of post_order_visit, alive for the walk.
    let st = &mut *(ctx as *mut VisitState<'_>);
    let e: Expr = match Object::from_borrowed(expr).map(|o| o.downcast::<Expr>()) {
        Some(Ok(e)) => e,
        _ => return 0,
    };
    match catch_unwind(AssertUnwindSafe(|| (st.f)(&e))) {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => {
            st.err = Some(err);
            // Raise a marker so the C walk stops; our error wins afterwards.
            Error::new(ErrorKind::RuntimeError, "stopped by a Rust visitor").raise();
            -1
        }
        Err(p) => {
            st.err = Some(panic_error("visitor", &*p));
            Error::new(ErrorKind::RuntimeError, "Rust visitor panicked").raise();
            -1
        }
    }
}

/// Call `f` on every expression under `expr` (nested functions included),
/// children before parents, each node once. The first error stops the walk.
pub fn post_order_visit(expr: &Expr, mut f: impl FnMut(&Expr) -> Result<()>) -> Result<()> {
    let mut st = VisitState { f: &mut f, err: None };
    // SAFETY: `st` outlives the call; the callback only runs during it.
    let rc = unsafe {
        sys::tn_ir_post_order_visit(
            expr.as_ptr(),
            Some(visit_cb),
            (&mut st as *mut VisitState<'_>).cast(),
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let c_err = take_raised();
    Err(st.err.take().unwrap_or(c_err))
}

struct MutateState<'a> {
    f: &'a mut dyn FnMut(&Expr, &Expr) -> Result<Expr>,
    err: Option<Error>,
}

unsafe extern "C" fn mutate_cb(
    ctx: *mut c_void,
    orig: *mut sys::TnObject,
    rebuilt: *mut sys::TnObject,
) -> *mut sys::TnObject {
    // SAFETY: `ctx` is the MutateState of mutate, alive for the walk.
    let st = &mut *(ctx as *mut MutateState<'_>);
    let (Some(Ok(o)), Some(Ok(r))) = (
        Object::from_borrowed(orig).map(|o| o.downcast::<Expr>()),
        Object::from_borrowed(rebuilt).map(|o| o.downcast::<Expr>()),
    ) else {
        // Not an expression: keep the rebuilt node.
        sys::tn_object_retain(rebuilt);
        return rebuilt;
    };
    match catch_unwind(AssertUnwindSafe(|| (st.f)(&o, &r))) {
        Ok(Ok(new)) => new.into_object().into_raw(),
        Ok(Err(err)) => {
            st.err = Some(err);
            Error::new(ErrorKind::RuntimeError, "stopped by a Rust rewriter").raise();
            std::ptr::null_mut()
        }
        Err(p) => {
            st.err = Some(panic_error("rewriter", &*p));
            Error::new(ErrorKind::RuntimeError, "Rust rewriter panicked").raise();
            std::ptr::null_mut()
        }
    }
}

/// Rewrite bottom-up, each node once: `f(orig, rebuilt)` gets every node
/// and the node rebuilt over its rewritten children, and returns the
/// replacement (return `rebuilt.clone()` to keep it). An unchanged graph
/// comes back as the very same object.
pub fn mutate(expr: &Expr, mut f: impl FnMut(&Expr, &Expr) -> Result<Expr>) -> Result<Expr> {
    let mut st = MutateState { f: &mut f, err: None };
    // SAFETY: `st` outlives the call.
    let p = unsafe {
        sys::tn_ir_mutate(
            expr.as_ptr(),
            Some(mutate_cb),
            (&mut st as *mut MutateState<'_>).cast(),
        )
    };
    if p.is_null() {
        let c_err = take_raised();
        return Err(st.err.take().unwrap_or(c_err));
    }
    check_typed(p)
}

fn panic_error(what: &str, payload: &(dyn std::any::Any + Send)) -> Error {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<std::string::String>().map(|s| s.as_str()))
        .unwrap_or("(non-string panic payload)");
    Error::new(ErrorKind::RuntimeError, format!("Rust {what} panicked: {msg}"))
}

// ---------------------------------------------------------------------------
// Passes.

fn name_array(names: &[&str]) -> Result<Option<Array>> {
    if names.is_empty() {
        return Ok(None);
    }
    Array::from_values(names.iter().copied()).map(Some)
}

impl Pass {
    /// A module pass from a Rust closure `f(module, ctx) -> module`.
    /// `required` names passes that run first.
    pub fn module<F>(name: &str, opt_level: i32, required: &[&str], f: F) -> Result<Pass>
    where
        F: Fn(Module, PassContext) -> Result<Module> + Send + Sync + 'static,
    {
        let func = crate::Function::from_fn_named(name, f);
        let c = cstring(name)?;
        let req = name_array(required)?;
        // SAFETY: borrowed arguments.
        check_typed(unsafe {
            sys::tn_pass_module(c.as_ptr(), opt_level, opt_ptr(req.as_ref()), func.as_ptr())
        })
    }

    /// A function pass from a Rust closure `f(function, module, ctx) ->
    /// function`, called for every function that is not primitive.
    pub fn function<F>(name: &str, opt_level: i32, required: &[&str], f: F) -> Result<Pass>
    where
        F: Fn(Function, Module, PassContext) -> Result<Function> + Send + Sync + 'static,
    {
        let func = crate::Function::from_fn_named(name, f);
        let c = cstring(name)?;
        let req = name_array(required)?;
        // SAFETY: borrowed arguments.
        check_typed(unsafe {
            sys::tn_pass_function(c.as_ptr(), opt_level, opt_ptr(req.as_ref()), func.as_ptr())
        })
    }

    /// Run `passes` in order.
    pub fn sequential(passes: &[&Pass], name: &str, opt_level: i32) -> Result<Pass> {
        let p = raw_ptrs(passes);
        let c = cstring(name)?;
        // SAFETY: borrowed arguments.
        check_typed(unsafe { sys::tn_pass_sequential(p.as_ptr(), p.len() as i32, c.as_ptr(), opt_level) })
    }

    /// A sequential of registered passes, by name: C, Python and Rust passes
    /// alike.
    pub fn sequential_named(names: &[&str], name: &str) -> Result<Pass> {
        let cs: Vec<_> = names.iter().map(|n| cstring(n)).collect::<Result<_>>()?;
        let ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
        let c = cstring(name)?;
        // SAFETY: arrays valid for the call.
        check_typed(unsafe { sys::tn_pass_sequential_named(ptrs.as_ptr(), ptrs.len() as i32, c.as_ptr()) })
    }

    /// A registered pass by name.
    pub fn lookup(name: &str) -> Result<Pass> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check_typed(unsafe { sys::tn_pass_get(c.as_ptr()) })
    }

    /// Names of every registered pass.
    pub fn list() -> Result<Vec<std::string::String>> {
        // SAFETY: transfer full.
        let a: Array = check_typed(unsafe { sys::tn_pass_list() })?;
        a.to_vec()
    }

    /// Register this pass under its name (`ValueError` if taken, unless
    /// `override_existing`).
    pub fn register(&self, override_existing: bool) -> Result<()> {
        // SAFETY: live pass.
        check(unsafe { sys::tn_pass_register(self.as_ptr(), override_existing as c_int) })
    }

    /// Remove a registered pass.
    pub fn unregister(name: &str) -> Result<()> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check(unsafe { sys::tn_pass_unregister(c.as_ptr()) })
    }

    /// Run on `module` under `ctx` (`None`: the current context). The module
    /// is never changed; a failing pass raises an error naming it, with the
    /// original as its cause.
    #[track_caller]
    pub fn run(&self, module: &Module, ctx: Option<&PassContext>) -> Result<Module> {
        // SAFETY: borrowed arguments.
        let p = unsafe { sys::tn_pass_run(self.as_ptr(), module.as_ptr(), opt_ptr(ctx)) };
        if p.is_null() {
            let err = take_raised();
            let loc = std::panic::Location::caller();
            err.append_frame(&format!(
                "Rust: Pass::run at {}:{}:{}",
                loc.file(),
                loc.line(),
                loc.column()
            ));
            return Err(err);
        }
        check_typed(p)
    }

    /// The pass's name.
    pub fn name(&self) -> Result<std::string::String> {
        let info = self.as_object().get("info")?;
        let info = info.as_object().ok_or_else(|| info.mismatch("ir.PassInfo"))?;
        info.get_as("name")
    }

    /// `InferType`.
    pub fn infer_type() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_infer_type() })
    }
    /// `SimplifyExpr`.
    pub fn simplify_expr() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_simplify_expr() })
    }
    /// `FoldConstant`.
    pub fn fold_constant() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_fold_constant() })
    }
    /// `DeadCodeElimination`.
    pub fn dead_code_elimination() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_dead_code_elimination() })
    }
    /// `FuseOps`.
    pub fn fuse_ops() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_fuse_ops() })
    }
    /// `ConvertKernelLayout`: one-group convolutions' constant weights in
    /// the layout the `ConvertKernelLayout.layout` option names.
    pub fn convert_kernel_layout() -> Result<Pass> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_convert_kernel_layout() })
    }
}

impl PassContext {
    /// A context: opt level, config (checked against registered options),
    /// required and disabled pass names, instruments.
    pub fn new(
        opt_level: i32,
        config: Option<&Map>,
        required: &[&str],
        disabled: &[&str],
        instruments: &[Object],
    ) -> Result<PassContext> {
        let req = name_array(required)?;
        let dis = name_array(disabled)?;
        let ins = if instruments.is_empty() {
            None
        } else {
            Some(Array::from_values(instruments.iter())?)
        };
        // SAFETY: borrowed arguments (NULL where absent).
        check_typed(unsafe {
            sys::tn_pass_context_new(
                opt_level,
                opt_ptr(config),
                opt_ptr(req.as_ref()),
                opt_ptr(dis.as_ref()),
                opt_ptr(ins.as_ref()),
            )
        })
    }

    /// The current context of this thread (or the default one).
    pub fn current() -> Result<PassContext> {
        // SAFETY: transfer full.
        check_typed(unsafe { sys::tn_pass_context_current() })
    }

    /// Make this the current context of the thread until the guard drops.
    pub fn enter(&self) -> Result<PassContextGuard> {
        // SAFETY: live context.
        check(unsafe { sys::tn_pass_context_enter(self.as_ptr()) })?;
        Ok(PassContextGuard {
            _not_send: std::marker::PhantomData,
        })
    }

    /// The opt level.
    pub fn opt_level(&self) -> Result<i64> {
        self.get_as("opt_level")
    }
}

/// Restores the previous pass context when dropped (contexts are per
/// thread, so the guard is not `Send`).
#[must_use = "the context is exited when the guard is dropped"]
pub struct PassContextGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for PassContextGuard {
    fn drop(&mut self) {
        // SAFETY: pairs with the enter that made the guard on this thread.
        if unsafe { sys::tn_pass_context_exit() } != 0 {
            drop(take_raised());
        }
    }
}
