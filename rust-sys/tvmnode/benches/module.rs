//! What `runtime::Module` adds to a compiled model's calls, on ad01_int8
//! (the anomaly-detection autoencoder, int8 640 -> 640), against the same
//! C functions called through the raw declarations of `tvmnode-sys`.
//!
//! Pairs compared, in nanoseconds per call (the timing harness of
//! `timing/mod.rs`: medians over 15 round-robin samples of about 20 ms):
//! * `module_run` (`Module::run`, `Result` checked) vs `ffi_run`
//!   (`tn_module_run` on the same model): the target is `module_run <=
//!   1.2 x ffi_run + ffi_call`, where `ffi_call` is one plain FFI call
//!   (`tn_module_num_inputs`).
//! * `module_set_input` (`set_input(0, &[i8])`: index, dtype and length
//!   checked) and `module_set_input_by_name` vs `ffi_set_input_bytes`.
//! * `module_output` (`output::<i8>(0)`, the borrowed slice) vs
//!   `ffi_output_data` (`tn_module_output_data`, what it calls); and
//!   `ffi_get_output` (`tn_module_get_output` and the release of the view,
//!   a tensor per call) for reference.
//! * `module_inference` (set_input, run, output) vs `ffi_inference` (the
//!   same three C calls).
//! * `module_run_with` (`run_with(&[&x])` and `output`, one call in and
//!   one out per inference) vs `ffi_run_with` (`tn_module_run_with` and
//!   `tn_module_output_data`).
//!
//! The model library is built with the Python tooling, as the tests build
//! it (`tests/model_lib`); without the tooling the bench says why and exits.
//! Usage: `cargo bench --bench module [-- --json FILE]`.

#[path = "../tests/model_lib/mod.rs"]
mod model_lib;
mod timing;

use std::hint::black_box;

use timing::Bench;
use tvmnode::runtime::Module;
use tvmnode::sys;

fn main() {
    let json_out = timing::json_arg();
    if let Err(why) = model_lib::tooling() {
        println!("module bench skipped: {why}");
        return;
    }
    let live0 = tvmnode::live_object_count();
    let b = model_lib::built("ad01_int8");
    let x = b.input.as_i8();
    let load = || {
        let mut m = Module::load(&b.lib).unwrap();
        m.set_input(0, &x).unwrap();
        m.run().unwrap();
        m
    };
    // One Module per Rust loop (each takes `&mut`), one for the raw loops.
    let (mut run_m, mut set_m, mut name_m, out_m, mut inf_m) = (load(), load(), load(), load(), load());
    let mut with_m = load();
    let raw_m = load();
    let raw = raw_m.as_ptr();
    // run_with leaves its input unset (read in place): a Module of its own.
    let raw_with_m = load();
    let raw_with = raw_with_m.as_ptr();

    // SAFETY (the raw loops): `raw` and `raw_with` are live Modules of
    // ad01_int8, used by this thread only; the buffers are valid for their
    // sizes.
    let mut benches: Vec<Bench<'_>> = vec![
        (
            "ffi_call",
            Box::new(|n| {
                for _ in 0..n {
                    black_box(unsafe { sys::tn_module_num_inputs(black_box(raw)) });
                }
            }),
        ),
        (
            "ffi_run",
            Box::new(|n| {
                for _ in 0..n {
                    assert_eq!(unsafe { sys::tn_module_run(raw) }, 0);
                }
            }),
        ),
        (
            "module_run",
            Box::new(|n| {
                for _ in 0..n {
                    run_m.run().unwrap();
                }
            }),
        ),
        (
            "ffi_set_input_bytes",
            Box::new(|n| {
                for _ in 0..n {
                    let rc = unsafe { sys::tn_module_set_input_bytes(raw, 0, x.as_ptr().cast(), x.len()) };
                    assert_eq!(rc, 0);
                }
            }),
        ),
        (
            "module_set_input",
            Box::new(|n| {
                for _ in 0..n {
                    set_m.set_input(0, black_box(&x)).unwrap();
                }
            }),
        ),
        (
            "module_set_input_by_name",
            Box::new(|n| {
                for _ in 0..n {
                    name_m.set_input("input_1", black_box(&x)).unwrap();
                }
            }),
        ),
        (
            "ffi_get_output",
            Box::new(|n| {
                for _ in 0..n {
                    unsafe {
                        let t = sys::tn_module_get_output(raw, 0);
                        assert!(!t.is_null());
                        black_box((*(t as *const sys::TnTensorObj)).dl.data);
                        sys::tn_object_release(t);
                    }
                }
            }),
        ),
        (
            "ffi_output_data",
            Box::new(|n| {
                for _ in 0..n {
                    let mut nbytes = 0usize;
                    let p = unsafe { sys::tn_module_output_data(raw, 0, &mut nbytes) };
                    assert!(!p.is_null());
                    black_box((p, nbytes));
                }
            }),
        ),
        (
            "module_output",
            Box::new(|n| {
                for _ in 0..n {
                    black_box(out_m.output::<i8>(0).unwrap().as_ptr());
                }
            }),
        ),
        (
            "ffi_inference",
            Box::new(|n| {
                let mut sum = 0i64;
                for _ in 0..n {
                    unsafe {
                        assert_eq!(
                            sys::tn_module_set_input_bytes(raw, 0, x.as_ptr().cast(), x.len()),
                            0
                        );
                        assert_eq!(sys::tn_module_run(raw), 0);
                        let t = sys::tn_module_get_output(raw, 0);
                        assert!(!t.is_null());
                        sum += *((*(t as *const sys::TnTensorObj)).dl.data as *const i8) as i64;
                        sys::tn_object_release(t);
                    }
                }
                black_box(sum);
            }),
        ),
        (
            "module_inference",
            Box::new(|n| {
                let mut sum = 0i64;
                for _ in 0..n {
                    inf_m.set_input(0, &x).unwrap();
                    inf_m.run().unwrap();
                    sum += inf_m.output::<i8>(0).unwrap()[0] as i64;
                }
                black_box(sum);
            }),
        ),
        (
            "ffi_run_with",
            Box::new(|n| {
                let mut sum = 0i64;
                let (data, nbytes) = ([x.as_ptr().cast::<std::ffi::c_void>()], [x.len()]);
                for _ in 0..n {
                    unsafe {
                        assert_eq!(
                            sys::tn_module_run_with(
                                raw_with,
                                1,
                                data.as_ptr(),
                                nbytes.as_ptr(),
                                std::ptr::null_mut()
                            ),
                            0
                        );
                        let p = sys::tn_module_output_data(raw_with, 0, std::ptr::null_mut());
                        assert!(!p.is_null());
                        sum += *(p as *const i8) as i64;
                    }
                }
                black_box(sum);
            }),
        ),
        (
            "module_run_with",
            Box::new(|n| {
                let mut sum = 0i64;
                for _ in 0..n {
                    with_m.run_with(&[&x]).unwrap();
                    sum += with_m.output::<i8>(0).unwrap()[0] as i64;
                }
                black_box(sum);
            }),
        ),
    ];
    let results = timing::run(&mut benches);
    drop(benches);

    let ratios = [
        ("module_run / ffi_run", results.ratio("module_run", "ffi_run")),
        (
            "module_set_input / ffi_set_input_bytes",
            results.ratio("module_set_input", "ffi_set_input_bytes"),
        ),
        (
            "module_set_input_by_name / ffi_set_input_bytes",
            results.ratio("module_set_input_by_name", "ffi_set_input_bytes"),
        ),
        (
            "module_output / ffi_output_data",
            results.ratio("module_output", "ffi_output_data"),
        ),
        (
            "module_inference / ffi_inference",
            results.ratio("module_inference", "ffi_inference"),
        ),
        (
            "module_run_with / ffi_run_with",
            results.ratio("module_run_with", "ffi_run_with"),
        ),
    ];
    results.print_table();
    for (name, r) in &ratios {
        println!("{name:<48} {r:>6.3}x");
    }
    let (run, ffi_run, call) = (
        results.median("module_run"),
        results.median("ffi_run"),
        results.median("ffi_call"),
    );
    let bound = 1.2 * ffi_run + call;
    println!(
        "\nModule::run {run:.1} ns, bound 1.2 x {ffi_run:.1} + {call:.1} = {bound:.1} ns: {}",
        if run <= bound { "meets" } else { "MISSES" }
    );
    if let Some(path) = json_out {
        results.write_json(&path, &ratios);
    }

    drop((run_m, set_m, name_m, out_m, inf_m, with_m, raw_m, raw_with_m));
    let leaked = tvmnode::live_object_count() - live0;
    assert_eq!(leaked, 0, "the benchmark leaked {leaked} objects");
}
