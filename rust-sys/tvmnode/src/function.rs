//! Packed functions: calling C from Rust and Rust from C.
//!
//! A [`Function`] is a `tn.Function` object: a packed implementation
//! `fn(self, args, nargs, ret) -> status` plus its `self`. Both directions
//! are built so that the common case costs what the same thing costs in C:
//!
//! * **Rust → C.** [`Function::call`] takes a tuple of Rust values, turns it
//!   into an array of [`Any`] on the stack (the same bytes C would build) and
//!   calls the implementation through the public `TnFunctionObj` layout, as
//!   the C ABI allows bindings to do; the result comes back through
//!   [`FromAny`]. No allocation for plain values.
//! * **C → Rust.** [`Function::from_fn`] (typed closures, `|a: i64, b: i64|
//!   a + b`) and [`Function::from_packed`] (`|args: &[Any]| ...`) box the
//!   closure once and make a `tn.Function` whose implementation is a
//!   trampoline monomorphised for that closure type: C's argument array is
//!   viewed as `&[Any]` in place, and the result is written straight into
//!   C's return slot.
//!
//! Every trampoline runs the closure inside `catch_unwind`. A panic never
//! unwinds into C; it becomes a `RuntimeError` whose message carries the
//! panic's text. An `Err` returned by a closure is raised as is (kind and
//! message kept) with one frame appended naming the Rust function, and errors
//! coming back from C into Rust get a frame naming the Rust call site, so a
//! traceback shows every crossing.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe, Location};

use tvmnode_sys as sys;

use crate::error::{check, check_obj, check_typed, cstring, take_raised, Error, ErrorKind, Result};
use crate::{object_handle, Any, Array, FromAny, IntoAny, Object};

object_handle! {
    /// A packed function (`tn.Function`), callable from every language.
    pub struct Function: Object, key "tn.Function", index sys::TN_TYPE_FUNCTION;
}

impl Function {
    /// The function registered as `name`; `KeyError` naming it if there is
    /// none. The handle keeps working after the name is removed.
    pub fn get_global(name: &str) -> Result<Function> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name; transfer full.
        check_typed(unsafe { sys::tn_func_get(c.as_ptr()) })
    }

    /// Like [`Function::get_global`], but `None` when the name is free.
    pub fn find_global(name: &str) -> Option<Function> {
        let c = cstring(name).ok()?;
        // SAFETY: NUL-terminated name; transfer full (NULL without error).
        let p = unsafe { sys::tn_func_find(c.as_ptr()) };
        unsafe { Object::from_raw(p) }.and_then(|o| o.downcast().ok())
    }

    /// Register this function as `name`. A taken name is a `ValueError`
    /// unless `override_existing`.
    pub fn register(&self, name: &str, override_existing: bool) -> Result<()> {
        let c = cstring(name)?;
        // SAFETY: live function (borrowed: a reference is taken).
        check(unsafe { sys::tn_func_register(c.as_ptr(), self.as_ptr(), override_existing as c_int) })
    }

    /// Unregister `name`; `KeyError` if it is not registered.
    pub fn remove_global(name: &str) -> Result<()> {
        let c = cstring(name)?;
        // SAFETY: NUL-terminated name.
        check(unsafe { sys::tn_func_unregister(c.as_ptr()) })
    }

    /// The registered names, sorted.
    pub fn list_global_names() -> Result<Vec<std::string::String>> {
        // SAFETY: transfer full.
        let names: Array = check_typed(unsafe { sys::tn_func_list() })?;
        names.to_vec()
    }

    /// A function from a closure over the raw argument array. The closure
    /// sees C's arguments in place (borrowed for the call).
    pub fn from_packed<F>(f: F) -> Function
    where
        F: Fn(&[Any]) -> Result<Any> + Send + Sync + 'static,
    {
        Function::from_packed_named(None, f)
    }

    fn from_packed_named<F>(name: Option<&str>, f: F) -> Function
    where
        F: Fn(&[Any]) -> Result<Any> + Send + Sync + 'static,
    {
        let state = Box::new(Closure {
            name: name.map(Box::from),
            f,
        });
        let this = Box::into_raw(state).cast::<c_void>();
        // SAFETY: `this` is a Box<Closure<F>> that `drop_closure::<F>` frees
        // exactly once (tn_func_new calls it even when it fails).
        let p = unsafe { sys::tn_func_new(Some(trampoline::<F>), this, Some(drop_closure::<F>)) };
        check_typed(p).expect("tn_func_new failed: out of memory")
    }

    /// A function from a typed closure: `Function::from_fn(|a: i64, b: i64|
    /// a + b)`. Arguments convert with [`FromAny`] (a wrong type or count is
    /// a `TypeError` naming the argument); the result is any [`IntoAny`]
    /// value or a `Result` of one.
    pub fn from_fn<M, F: IntoFunction<M>>(f: F) -> Function {
        f.into_function(None)
    }

    /// Like [`Function::from_fn`], with a name used in error messages and
    /// frames.
    pub fn from_fn_named<M, F: IntoFunction<M>>(name: &str, f: F) -> Function {
        f.into_function(Some(name))
    }

    /// Call with a borrowed argument slice; the raw form of [`Function::call`].
    #[track_caller]
    pub fn call_packed(&self, args: &[Any]) -> Result<Any> {
        let mut ret = Any::none();
        // SAFETY: live function, valid argument array, `ret` is None.
        let rc = unsafe { self.invoke(args.as_ptr().cast(), args.len() as i32, ret.as_mut_raw()) };
        if rc == 0 {
            Ok(ret)
        } else {
            Err(crossing_into_rust(Location::caller()))
        }
    }

    /// Call with a tuple of Rust values and convert the result:
    /// `let sum: i64 = add.call((1, 2))?`.
    #[track_caller]
    #[inline(always)]
    pub fn call<A: IntoArgs, R: FromAny>(&self, args: A) -> Result<R> {
        let caller = Location::caller();
        args.with_args(|raw| {
            let mut ret = Any::none();
            // SAFETY: live function, valid argument array, `ret` is None.
            let rc = unsafe { self.invoke(raw.as_ptr().cast(), raw.len() as i32, ret.as_mut_raw()) };
            if rc != 0 {
                return Err(crossing_into_rust(caller));
            }
            // Convert in place: moving the 16-byte value first would read it
            // back as one wide load right after the callee's two narrow
            // stores, which stalls store-to-load forwarding.
            R::from_any(&ret)
        })
    }

    /// # Safety
    /// `args` points at `nargs` valid anys; `ret` at a None any.
    #[inline(always)]
    unsafe fn invoke(&self, args: *const sys::TnAny, nargs: i32, ret: *mut sys::TnAny) -> c_int {
        // The ABI lets bindings call `fn(self, ...)` through the public
        // layout; a live handle means a live function.
        let f = &*(self.as_ptr() as *const sys::TnFunctionObj);
        match f.fn_ {
            Some(fp) => fp(f.self_, args, nargs, ret),
            None => sys::tn_func_call(self.as_ptr(), args, nargs, ret),
        }
    }

    /// Wrap an existing C function as a packed function through the libffi
    /// bridge, given its signature (`"i64(i64,i64)"`, see `c_api.h`).
    ///
    /// # Safety
    /// `fnptr` must be a C function whose real signature is `signature`.
    pub unsafe fn from_c(fnptr: *const c_void, signature: &str, name: Option<&str>) -> Result<Function> {
        let sig = cstring(signature)?;
        let name = name.map(cstring).transpose()?;
        check_typed(sys::tn_func_from_c(
            fnptr as *mut c_void,
            sig.as_ptr(),
            name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
        ))
    }

    /// A real C function pointer of the given signature that calls this
    /// function (the libffi bridge, packed to typed). The pointer is valid
    /// while the returned [`CClosure`] lives.
    pub fn to_c(&self, signature: &str) -> Result<CClosure> {
        let sig = cstring(signature)?;
        let mut fnptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: live function; transfer full.
        let handle = check_obj(unsafe { sys::tn_func_to_c(self.as_ptr(), sig.as_ptr(), &mut fnptr) })?;
        Ok(CClosure { handle, fnptr })
    }
}

/// A C function pointer made from a [`Function`] by [`Function::to_c`].
///
/// The pointer is valid while this handle lives. Errors cannot unwind
/// through the C code that calls it: a failing call returns zero and records
/// the error, which [`CClosure::take_error`] returns.
#[derive(Clone, Debug)]
pub struct CClosure {
    handle: Object,
    fnptr: *mut c_void,
}

// SAFETY: the handle is an object (atomic count; the error record is locked
// in C) and the pointer is code.
unsafe impl Send for CClosure {}
unsafe impl Sync for CClosure {}

impl CClosure {
    /// The function pointer; transmute it to the `extern "C" fn` type its
    /// signature describes.
    pub fn as_ptr(&self) -> *const c_void {
        self.fnptr
    }

    /// The most recent error raised through the pointer, if any since the
    /// last take.
    pub fn take_error(&self) -> Option<Error> {
        // SAFETY: live closure handle; transfer full.
        let p = unsafe { sys::tn_cclosure_take_error(self.handle.as_ptr()) };
        unsafe { Object::from_raw(p) }.and_then(|o| Error::from_object(o).ok())
    }

    /// Number of failed calls so far.
    pub fn error_count(&self) -> i64 {
        // SAFETY: live closure handle.
        unsafe { sys::tn_cclosure_error_count(self.handle.as_ptr()) }
    }

    /// The `tn.CClosure` object.
    pub fn as_object(&self) -> &Object {
        &self.handle
    }
}

/// Register a closure as a global function (refused if the name is taken);
/// returns the function.
///
/// ```no_run
/// let f = tvmnode::register_global("demo.add", |a: i64, b: i64| a + b)?;
/// let three: i64 = f.call((1, 2))?;
/// # Ok::<(), tvmnode::Error>(())
/// ```
pub fn register_global<M, F: IntoFunction<M>>(name: &str, f: F) -> Result<Function> {
    let func = f.into_function(Some(name));
    func.register(name, false)?;
    Ok(func)
}

// ---------------------------------------------------------------------------
// C -> Rust: the trampoline.

struct Closure<F> {
    name: Option<Box<str>>,
    f: F,
}

unsafe extern "C" fn trampoline<F>(
    this: *mut c_void,
    args: *const sys::TnAny,
    nargs: i32,
    ret: *mut sys::TnAny,
) -> c_int
where
    F: Fn(&[Any]) -> Result<Any> + Send + Sync + 'static,
{
    // SAFETY: `this` is the Box<Closure<F>> made in from_packed_named; C
    // keeps it alive for the call and passes `nargs` borrowed arguments.
    let state = unsafe { &*(this as *const Closure<F>) };
    // SAFETY: C passes `nargs` valid borrowed arguments.
    let args = unsafe { Any::slice_from_raw(args, nargs.max(0) as usize) };
    match catch_unwind(AssertUnwindSafe(|| (state.f)(args))) {
        Ok(Ok(value)) => {
            // SAFETY: `*ret` is None, owned by the caller: overwrite it
            // without releasing.
            unsafe { std::ptr::write(ret, value.into_raw()) };
            0
        }
        // Out of line, so the hot path above needs few registers.
        failure => raise_failure(state.name.as_deref(), failure.map(|r| r.map(|_| ()))),
    }
}

/// Turn a closure's error or panic into the raised error; returns -1.
#[cold]
#[inline(never)]
fn raise_failure(name: Option<&str>, failure: std::thread::Result<Result<()>>) -> c_int {
    let err = match failure {
        Ok(Ok(())) => return 0,
        Ok(Err(err)) => err,
        Err(payload) => {
            let msg = panic_message(&*payload);
            let what = name.unwrap_or("<anonymous>");
            let err = Error::new(
                ErrorKind::RuntimeError,
                format!("Rust function '{what}' panicked: {msg}"),
            );
            // The payload's own Drop could panic too; never let it escape.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            err
        }
    };
    err.append_frame(&rust_frame(name));
    err.raise();
    -1
}

unsafe extern "C" fn drop_closure<F>(this: *mut c_void) {
    // SAFETY: called once by the C side with the pointer from Box::into_raw.
    let state = Box::from_raw(this as *mut Closure<F>);
    // A panicking destructor must not unwind into C.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(state)));
}

fn rust_frame(name: Option<&str>) -> std::string::String {
    match name {
        Some(n) => format!("Rust: in function '{n}'"),
        None => "Rust: in an anonymous function".to_owned(),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<std::string::String>() {
        s
    } else {
        "(non-string panic payload)"
    }
}

/// Take the raised error of a failed call and record where Rust saw it.
#[cold]
#[inline(never)]
fn crossing_into_rust(caller: &Location<'_>) -> Error {
    let err = take_raised();
    err.append_frame(&format!(
        "Rust: called at {}:{}:{}",
        caller.file(),
        caller.line(),
        caller.column()
    ));
    err
}

// ---------------------------------------------------------------------------
// Typed arguments and closures.

/// A tuple of Rust values usable as the arguments of [`Function::call`].
/// Implemented for tuples of up to 8 [`IntoAny`] values, `()`, and `&[Any]`.
pub trait IntoArgs {
    /// Build the argument array and run `f` on it.
    fn with_args<R>(self, f: impl FnOnce(&[Any]) -> R) -> R;
}

impl IntoArgs for &[Any] {
    #[inline]
    fn with_args<R>(self, f: impl FnOnce(&[Any]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> IntoArgs for [Any; N] {
    #[inline]
    fn with_args<R>(self, f: impl FnOnce(&[Any]) -> R) -> R {
        f(&self)
    }
}

impl IntoArgs for () {
    #[inline]
    fn with_args<R>(self, f: impl FnOnce(&[Any]) -> R) -> R {
        f(&[])
    }
}

/// A closure's return value: any [`IntoAny`] value, or a `Result` of one.
pub trait IntoReturn {
    /// Convert.
    fn into_return(self) -> Result<Any>;
}

impl<T: IntoAny> IntoReturn for T {
    #[inline]
    fn into_return(self) -> Result<Any> {
        Ok(self.into_any())
    }
}

impl<T: IntoAny> IntoReturn for Result<T> {
    #[inline]
    fn into_return(self) -> Result<Any> {
        self.map(IntoAny::into_any)
    }
}

/// A closure that can become a [`Function`]; implemented for
/// `Fn(A0, A1, ...) -> R` with up to 8 [`FromAny`] arguments and an
/// [`IntoReturn`] result. `M` is an inference marker; never name it.
pub trait IntoFunction<M>: Send + Sync + 'static {
    /// Make the function (`name` is used in messages and frames).
    fn into_function(self, name: Option<&str>) -> Function;
}

#[cold]
fn arity_error(name: Option<&str>, want: usize, got: usize) -> Error {
    Error::new(
        ErrorKind::TypeError,
        format!(
            "{} takes {want} argument{}, got {got}",
            name.unwrap_or("function"),
            if want == 1 { "" } else { "s" }
        ),
    )
}

#[cold]
fn argument_error(name: Option<&str>, index: usize, err: Error) -> Error {
    Error::with_kind_name(
        err.kind_str(),
        format!(
            "{}: argument {index}: {}",
            name.unwrap_or("function"),
            err.message()
        ),
    )
}

macro_rules! tuples {
    ($n:literal; $($a:ident $i:tt),*) => {
        impl<$($a: IntoAny),*> IntoArgs for ($($a,)*) {
            #[inline]
            fn with_args<R>(self, f: impl FnOnce(&[Any]) -> R) -> R {
                let args: [Any; $n] = [$(self.$i.into_any()),*];
                f(&args)
            }
        }

        impl<Func, Ret, $($a),*> IntoFunction<fn($($a),*) -> Ret> for Func
        where
            Func: Fn($($a),*) -> Ret + Send + Sync + 'static,
            Ret: IntoReturn,
            $($a: FromAny,)*
        {
            fn into_function(self, name: Option<&str>) -> Function {
                let fname: Option<Box<str>> = name.map(Box::from);
                Function::from_packed_named(name, move |args: &[Any]| {
                    if args.len() != $n {
                        return Err(arity_error(fname.as_deref(), $n, args.len()));
                    }
                    (self)($(
                        $a::from_any(&args[$i])
                            .map_err(|e| argument_error(fname.as_deref(), $i, e))?
                    ),*)
                    .into_return()
                })
            }
        }
    };
}

impl<Func, Ret> IntoFunction<fn() -> Ret> for Func
where
    Func: Fn() -> Ret + Send + Sync + 'static,
    Ret: IntoReturn,
{
    fn into_function(self, name: Option<&str>) -> Function {
        let fname: Option<Box<str>> = name.map(Box::from);
        Function::from_packed_named(name, move |args: &[Any]| {
            if !args.is_empty() {
                return Err(arity_error(fname.as_deref(), 0, args.len()));
            }
            (self)().into_return()
        })
    }
}

tuples!(1; A0 0);
tuples!(2; A0 0, A1 1);
tuples!(3; A0 0, A1 1, A2 2);
tuples!(4; A0 0, A1 1, A2 2, A3 3);
tuples!(5; A0 0, A1 1, A2 2, A3 3, A4 4);
tuples!(6; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5);
tuples!(7; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6);
tuples!(8; A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7);
