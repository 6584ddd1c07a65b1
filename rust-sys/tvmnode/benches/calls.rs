//! Rust ↔ C call overhead, against the same calls made from C, measured in
//! one process by one harness.
//!
//! The C loops live in `benches/harness.c`, compiled here at `-O2` with the
//! system C compiler and loaded with `dlopen`, so they run against the very
//! library the Rust side uses, in the same process, timed by the same code.
//! Each figure is the median over 15 samples of about 20 ms, taken round
//! robin across the benchmarks (the machines here are noisy: medians, not
//! means, and ratios within a round), in nanoseconds per call.
//!
//! Pairs compared (target: Rust within 1.1x of C):
//! * `rust_to_c_call`: Rust calls `testing.add_i64` with `Function::call`
//!   (typed tuple in, `i64` out, `Result` checked) vs `c_to_c_call`, a C
//!   loop doing `tn_func_call` on it, and `c_to_c_fnptr`, a C loop calling
//!   through the public `TnFunctionObj` layout (what the Rust side does).
//! * `c_to_rust_closure`: a C loop calls a Rust closure `|a: i64, b: i64|
//!   a.wrapping_add(b)` made by `Function::from_fn` vs `c_to_c_call`, the
//!   same loop calling the C function.
//!
//! Usage: `cargo bench --bench calls [-- --json FILE]`.

mod timing;

use std::ffi::{c_char, c_int, c_void, CString};
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;

use timing::Bench;
use tvmnode::{sys, Function};

type LoopFn = unsafe extern "C" fn(*mut sys::TnObject, i64);

#[link(name = "dl")]
extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
}

struct Harness {
    call_loop: LoopFn,
    fnptr_loop: LoopFn,
}

fn load_harness() -> Harness {
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-harness");
    std::fs::create_dir_all(&out).unwrap();
    let so = out.join("libtvmnode_bench_harness.so");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/harness.c");
    let mut inc = PathBuf::from(env!("TVMNODE_INCLUDE_DIR"));
    if inc.as_os_str().is_empty() {
        inc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../libtvmnode/include");
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-O2", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .arg("-I")
        .arg(&inc);
    let lib = env!("TVMNODE_LIB_DIR");
    if !lib.is_empty() {
        cmd.arg(format!("-L{lib}")).arg(format!("-Wl,-rpath,{lib}"));
    }
    cmd.arg("-ltvmnode");
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(status.success(), "the C harness did not compile");
    let path = CString::new(so.to_str().unwrap()).unwrap();
    // SAFETY: plain dlopen/dlsym of a library we just built; the symbols
    // have the LoopFn signature (see harness.c).
    unsafe {
        let h = dlopen(path.as_ptr(), 2 /* RTLD_NOW */);
        if h.is_null() {
            panic!("dlopen: {:?}", std::ffi::CStr::from_ptr(dlerror()));
        }
        let sym = |name: &std::ffi::CStr| -> LoopFn {
            let p = dlsym(h, name.as_ptr());
            assert!(!p.is_null(), "missing {name:?}");
            std::mem::transmute::<*mut c_void, LoopFn>(p)
        };
        Harness {
            call_loop: sym(c"harness_call_loop"),
            fnptr_loop: sym(c"harness_fnptr_loop"),
        }
    }
}

fn main() {
    let json_out = timing::json_arg();
    let live0 = tvmnode::live_object_count();
    let harness = load_harness();
    let add = Function::get_global("testing.add_i64").unwrap();
    let rust_add = Function::from_fn(|a: i64, b: i64| a.wrapping_add(b));

    // SAFETY (the C loops): live functions taking two ints.
    let mut benches: Vec<Bench<'_>> = vec![
        (
            "c_to_c_call",
            Box::new(|n| unsafe { (harness.call_loop)(add.as_ptr(), n) }),
        ),
        (
            "c_to_c_fnptr",
            Box::new(|n| unsafe { (harness.fnptr_loop)(add.as_ptr(), n) }),
        ),
        (
            "rust_to_c_call",
            Box::new(|n| {
                let mut sum = 0i64;
                for i in 0..n {
                    sum = sum.wrapping_add(add.call::<_, i64>((black_box(i), 2i64)).unwrap());
                }
                black_box(sum);
            }),
        ),
        (
            "c_to_rust_closure",
            Box::new(|n| unsafe { (harness.call_loop)(rust_add.as_ptr(), n) }),
        ),
        (
            "c_to_rust_closure_fnptr",
            Box::new(|n| unsafe { (harness.fnptr_loop)(rust_add.as_ptr(), n) }),
        ),
        (
            "rust_to_rust_closure",
            Box::new(|n| {
                let mut sum = 0i64;
                for i in 0..n {
                    sum = sum.wrapping_add(rust_add.call::<_, i64>((black_box(i), 2i64)).unwrap());
                }
                black_box(sum);
            }),
        ),
    ];
    let results = timing::run(&mut benches);
    drop(benches);
    let ratio = |a: &str, b: &str| results.ratio(a, b);
    let ratios = [
        (
            "rust_to_c_call / c_to_c_call",
            ratio("rust_to_c_call", "c_to_c_call"),
        ),
        (
            "rust_to_c_call / c_to_c_fnptr",
            ratio("rust_to_c_call", "c_to_c_fnptr"),
        ),
        (
            "c_to_rust_closure / c_to_c_call",
            ratio("c_to_rust_closure", "c_to_c_call"),
        ),
        (
            "c_to_rust_closure_fnptr / c_to_c_fnptr",
            ratio("c_to_rust_closure_fnptr", "c_to_c_fnptr"),
        ),
    ];

    results.print_table();
    for (name, r) in &ratios {
        let verdict = if *r <= 1.1 { "meets <= 1.1x" } else { "MISSES 1.1x" };
        println!("{name:<40} {r:>6.3}x  {verdict}");
    }

    if let Some(path) = json_out {
        results.write_json(&path, &ratios);
    }

    drop((add, rust_add));
    let leaked = tvmnode::live_object_count() - live0;
    assert_eq!(leaked, 0, "the benchmark leaked {leaked} objects");
}
