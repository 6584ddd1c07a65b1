//! Packed functions across the boundary, both ways, with errors and panics.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tvmnode::prelude::*;
use tvmnode::{register_global, Array, Function};

#[test]
fn c_function_called_from_rust() {
    let _leaks = common::leak_check();
    let add = Function::get_global("testing.add_i64").unwrap();
    let sum: i64 = add.call((40i64, 2i64)).unwrap();
    assert_eq!(sum, 42);
    // Untyped form.
    let r = add.call_packed(&[Any::from(1i64), Any::from(2i64)]).unwrap();
    assert_eq!(r.as_i64().unwrap(), 3);
    // A C type error comes back as an Error with the C message and kind, and
    // a Rust frame naming this file.
    let e = add.call::<_, i64>((1i64, "x")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(
        e.message()
            .contains("testing.add_i64: argument 1: expected int, got"),
        "{e}"
    );
    let frames = e.frames();
    assert!(
        frames
            .iter()
            .any(|f| f.contains("Rust: called at") && f.contains("functions.rs")),
        "{frames:?}"
    );
    let e = add.call::<_, i64>((1i64,)).unwrap_err();
    assert!(e.message().contains("takes 2 arguments, got 1"), "{e}");
}

#[test]
fn missing_global_is_a_key_error() {
    let _leaks = common::leak_check();
    let e = Function::get_global("no.such.function").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::KeyError);
    assert!(e.message().contains("no.such.function"));
    assert!(Function::find_global("no.such.function").is_none());
    assert!(Function::list_global_names()
        .unwrap()
        .iter()
        .any(|n| n == "testing.echo"));
}

#[test]
fn rust_closure_called_from_c() {
    let _leaks = common::leak_check();
    let twice = Function::from_fn(|x: i64| x * 2);
    // C calls it: testing.call(f, *args) is a C function calling its first
    // argument.
    let call = Function::get_global("testing.call").unwrap();
    let r: i64 = call.call((&twice, 21i64)).unwrap();
    assert_eq!(r, 42);
    // Rust -> C -> Rust -> C: the closure itself calls a C function.
    let add = Function::get_global("testing.add_i64").unwrap();
    let via_c = Function::from_fn(move |a: i64, b: i64| -> Result<i64> { add.call((a, b)) });
    let r: i64 = call.call((&via_c, 2i64, 3i64)).unwrap();
    assert_eq!(r, 5);
    // Strings, objects and None in and out.
    let greet =
        Function::from_fn(|name: std::string::String, n: Option<i64>| format!("{name}:{}", n.unwrap_or(-1)));
    let s: std::string::String = call.call((&greet, "a fairly long name", ())).unwrap();
    assert_eq!(s, "a fairly long name:-1");
    let len = Function::from_fn(|a: Array| a.len() as i64);
    let arr = Array::from_values([1i64, 2, 3]).unwrap();
    assert_eq!(call.call::<_, i64>((&len, &arr)).unwrap(), 3);
    // A packed closure sees C's arguments in place.
    let count = Function::from_packed(|args: &[Any]| Ok(Any::from(args.len() as i64)));
    assert_eq!(call.call::<_, i64>((&count, 1i64, "two", 3.0)).unwrap(), 3);
    // Unit return is None.
    let nothing = Function::from_fn(|| {});
    assert!(call.call::<_, Any>((&nothing,)).unwrap().is_none());
}

#[test]
fn registered_closure_is_visible_to_c_by_name() {
    let _leaks = common::leak_check();
    let f = register_global("rust_test.mul", |a: f64, b: f64| a * b).unwrap();
    // Found by C's registry from a fresh lookup.
    let g = Function::get_global("rust_test.mul").unwrap();
    assert!(g.same_as(&f));
    assert_eq!(g.call::<_, f64>((1.5, 4i64)).unwrap(), 6.0);
    // The name is taken now, unless overriding.
    let e = register_global("rust_test.mul", |a: f64| a).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    Function::from_fn(|a: f64| a)
        .register("rust_test.mul", true)
        .unwrap();
    assert_eq!(
        Function::get_global("rust_test.mul")
            .unwrap()
            .call::<_, f64>((2.0,))
            .unwrap(),
        2.0
    );
    // The old handle keeps working.
    assert_eq!(f.call::<_, f64>((2.0, 2.0)).unwrap(), 4.0);
    Function::remove_global("rust_test.mul").unwrap();
    assert_eq!(
        Function::remove_global("rust_test.mul").unwrap_err().kind(),
        ErrorKind::KeyError
    );
}

#[test]
fn closure_state_is_dropped_with_the_function() {
    let _leaks = common::leak_check();
    let drops = Arc::new(AtomicUsize::new(0));
    struct Probe(Arc<AtomicUsize>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let probe = Probe(drops.clone());
    let f = Function::from_fn(move || {
        let _keep = &probe;
        1i64
    });
    let g = f.clone();
    drop(f);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(g.call::<_, i64>(()).unwrap(), 1);
    drop(g);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn rust_error_crosses_into_c_and_back() {
    let _leaks = common::leak_check();
    let failing = Function::from_fn_named("rust_test.fail", |x: i64| -> Result<i64> {
        if x < 0 {
            Err(Error::new(ErrorKind::ValueError, format!("negative: {x}")))
        } else {
            Ok(x)
        }
    });
    let call = Function::get_global("testing.call").unwrap();
    assert_eq!(call.call::<_, i64>((&failing, 5i64)).unwrap(), 5);
    let e = call.call::<_, i64>((&failing, -1i64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    assert_eq!(e.message(), "negative: -1");
    let frames = e.frames();
    // Rust appended a frame when the error left the closure, and another
    // when it came back out of C.
    let out = frames
        .iter()
        .position(|f| f.contains("in function 'rust_test.fail'"));
    let back = frames.iter().position(|f| f.contains("Rust: called at"));
    assert!(out.is_some() && back.is_some() && out < back, "{frames:?}");
    assert!(e.format().contains("ValueError: negative: -1"));
    // Wrong argument types are reported by the Rust side, naming the
    // function and the argument.
    let e = call.call::<_, i64>((&failing, "x")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(
        e.message()
            .contains("rust_test.fail: argument 0: expected int, got"),
        "{e}"
    );
    let e = call.call::<_, i64>((&failing,)).unwrap_err();
    assert!(e.message().contains("takes 1 argument, got 0"), "{e}");
}

#[test]
fn c_error_crosses_rust_and_back_into_c() {
    let _leaks = common::leak_check();
    // C raises inside a Rust closure called by C: the error object is the
    // same all the way, kind and message intact.
    let raise = Function::get_global("testing.raise").unwrap();
    let middle = Function::from_fn_named(
        "rust_test.middle",
        move |kind: std::string::String| -> Result<()> { raise.call((kind, "from C")) },
    );
    let call = Function::get_global("testing.call").unwrap();
    let e = call.call::<_, Any>((&middle, "KeyError")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::KeyError);
    assert_eq!(e.message(), "from C");
    let n = e.frames().iter().filter(|f| f.starts_with("Rust:")).count();
    assert!(
        n >= 3,
        "called at (inner), in function, called at (outer): {:?}",
        e.frames()
    );
    // Unknown kinds keep their name.
    let e = call.call::<_, Any>((&middle, "MyCustomError")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Other);
    assert_eq!(e.kind_str(), "MyCustomError");
}

#[test]
fn panic_becomes_an_error_not_an_unwind() {
    let _leaks = common::leak_check();
    let bad = Function::from_fn_named("rust_test.panics", |x: i64| -> i64 {
        if x == 0 {
            panic!("division by zero requested");
        }
        10 / x
    });
    let call = Function::get_global("testing.call").unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // keep the test output quiet
    let e = call.call::<_, i64>((&bad, 0i64)).unwrap_err();
    let direct = bad.call::<_, i64>((0i64,)).unwrap_err();
    std::panic::set_hook(prev);
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    assert!(
        e.message()
            .contains("'rust_test.panics' panicked: division by zero requested"),
        "{e}"
    );
    assert_eq!(direct.kind(), ErrorKind::RuntimeError);
    // The function still works afterwards.
    assert_eq!(call.call::<_, i64>((&bad, 5i64)).unwrap(), 2);
}

extern "C" fn c_abi_scale(x: f64, k: i32) -> f64 {
    x * k as f64
}

#[test]
fn libffi_bridge_both_ways() {
    let _leaks = common::leak_check();
    // Typed -> packed: an extern "C" fn wrapped from its signature.
    // SAFETY: the signature matches c_abi_scale.
    let scale = unsafe { Function::from_c(c_abi_scale as *const _, "f64(f64,i32)", Some("scale")) }.unwrap();
    assert_eq!(scale.call::<_, f64>((1.5, 4i64)).unwrap(), 6.0);
    let e = scale.call::<_, f64>((1.5, 1i64 << 40)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OverflowError);
    let e = unsafe { Function::from_c(c_abi_scale as *const _, "f64(f64,,i32)", None) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);

    // Packed -> typed: a Rust closure as a real C function pointer.
    let sub = Function::from_fn(|a: i64, b: i64| -> Result<i64> {
        a.checked_sub(b)
            .ok_or_else(|| Error::new(ErrorKind::OverflowError, "underflow"))
    });
    let closure = sub.to_c("i64(i64,i64)").unwrap();
    // SAFETY: the closure was made with this signature and lives below.
    let fp: extern "C" fn(i64, i64) -> i64 = unsafe { std::mem::transmute(closure.as_ptr()) };
    assert_eq!(fp(10, 3), 7);
    assert_eq!(fp(i64::MIN, 1), 0, "errors return zero");
    assert_eq!(closure.error_count(), 1);
    let e = closure.take_error().unwrap();
    assert_eq!(e.kind(), ErrorKind::OverflowError);
    assert!(closure.take_error().is_none());
    // The error was also left in this thread's raised slot (C's channel for
    // callers that check right after); clear it so it is not leaked.
    drop(unsafe { tvmnode::Object::from_raw(tvmnode::sys::tn_error_take_raised()) });
}

#[test]
fn functions_are_called_from_other_threads() {
    let _leaks = common::leak_check();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let f = Function::from_fn(move |x: i64| {
        h.fetch_add(1, Ordering::Relaxed);
        x + 1
    });
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let f = f.clone();
            s.spawn(move || {
                for i in 0..1000 {
                    assert_eq!(f.call::<_, i64>((i + t,)).unwrap(), i + t + 1);
                }
            });
        }
    });
    assert_eq!(hits.load(Ordering::Relaxed), 4000);
}

#[test]
fn error_kinds_map_one_to_one_onto_names() {
    let _leaks = common::leak_check();
    assert_eq!(ErrorKind::ALL.len(), 9);
    for &kind in ErrorKind::ALL {
        assert_eq!(ErrorKind::from_name(kind.as_str()), kind);
        assert_eq!(kind.to_string(), kind.as_str());
        // Through the C error object and back.
        let e = Error::new(kind, "m");
        assert_eq!(e.kind_str(), kind.as_str());
        assert_eq!(e.kind(), kind);
        // The codes are the C table's.
        assert!(kind.code() >= 0);
        assert_eq!(ErrorKind::from_code(kind.code()), kind);
    }
    assert_eq!(ErrorKind::TypeError.code(), tvmnode_sys::TN_ERR_TYPE);
    assert_eq!(ErrorKind::Other.code(), tvmnode_sys::TN_ERR_OTHER);
    assert_eq!(ErrorKind::from_code(1000), ErrorKind::Other);
    let e = Error::with_kind_name("ZeroDivisionError", "m");
    assert_eq!(e.kind(), ErrorKind::Other);
    assert_eq!(e.kind_str(), "ZeroDivisionError");
    assert_eq!(ErrorKind::from_name("MyCustomError"), ErrorKind::Other);
    assert_eq!(ErrorKind::from_name("Type\0Error"), ErrorKind::Other);
    assert_eq!(ErrorKind::Other.as_str(), "RuntimeError");
    assert!(!ErrorKind::ALL.contains(&ErrorKind::Other));
}
