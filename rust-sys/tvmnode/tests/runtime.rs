//! The host executor from Rust: modules parsed or built here run through
//! the C kernels and agree with values computed in Rust; bad inputs are
//! errors naming the input; an operator without a kernel is an error when
//! the executor is made; one executor shared between threads takes turns.

mod common;

use std::sync::Arc;
use std::thread;

use tvmnode::ir::{self, Call, Module, Pass, TensorType, Var};
use tvmnode::prelude::*;
use tvmnode::runtime::{Executor, TensorInfo};
use tvmnode::{DataType, Tensor};

const RELU_ADD: &str = "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(add(%x, %x)) }";

/// Deterministic values in [-2, 2).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 4000) as f32 / 1000.0 - 2.0
        })
        .collect()
}

fn close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: got {g}, want {w}"
        );
    }
}

fn expect_err<T: std::fmt::Debug>(r: Result<T>, kind: ErrorKind, parts: &[&str]) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    for p in parts {
        assert!(e.message().contains(p), "{p:?} not in {e}");
    }
    e
}

#[test]
fn describes_inputs_and_outputs() {
    let _leaks = common::leak_check();
    let m = Module::parse(
        "def @main(%image: Tensor[(1, 4), float32], %n: Tensor[(3,), int32]) { (nn.relu(%image), %n) }",
    )
    .unwrap();
    let ex = Executor::new(&m).unwrap();
    assert_eq!(
        ex.inputs(),
        [
            TensorInfo {
                name: "image".into(),
                shape: vec![1, 4],
                dtype: DataType::F32
            },
            TensorInfo {
                name: "n".into(),
                shape: vec![3],
                dtype: DataType::I32
            },
        ]
    );
    assert_eq!(ex.outputs().len(), 2);
    assert_eq!(ex.outputs()[0].name, "output0");
    assert_eq!(ex.outputs()[0].shape, [1, 4]);
    assert_eq!(ex.outputs()[1].dtype, DataType::I32);
    assert_eq!(ex.inputs()[0].numel(), 4);
    let stats = ex.stats().unwrap();
    assert!(stats.steps >= 1, "{stats:?}");
    assert_eq!((stats.runs, stats.run_ns), (0, 0));
    assert!(format!("{ex:?}").contains("image"));
}

#[test]
fn runs_a_parsed_module() {
    let _leaks = common::leak_check();
    let ex = Executor::new(&Module::parse(RELU_ADD).unwrap()).unwrap();
    let x = values(6, 1);
    let want: Vec<f32> = x.iter().map(|v| (v + v).max(0.0)).collect();
    // Slices in, vectors out.
    let out = ex.run_slices(&[&x]).unwrap();
    assert_eq!(out, std::slice::from_ref(&want));
    // Tensors in, tensors out: new tensors each run, of the output's type.
    let t = Tensor::from_slice(&[2, 3], &x).unwrap();
    let a = ex.run(&[&t]).unwrap();
    let b = ex.run(&[&t]).unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].shape(), [2, 3]);
    assert_eq!(a[0].dtype(), DataType::F32);
    assert_eq!(a[0].as_slice::<f32>().unwrap(), want.as_slice());
    assert!(!a[0].same_as(&b[0]));
    assert_eq!(ex.stats().unwrap().steps, 2, "add and nn.relu, unfused");
}

#[test]
fn runs_an_entry_other_than_main_with_tuples_and_lets() {
    let _leaks = common::leak_check();
    let m = Module::parse(
        "def @double(%a: Tensor[(2, 3), float32]) {\n  add(%a, %a)\n}\n\
         def @net(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) {\n\
           let %t = (@double(%x), nn.relu(%y));\n\
           let %s = add(%t.0, %t.1);\n\
           (%s, reshape(%s, newshape=[3, 2]))\n}\n",
    )
    .unwrap();
    assert_eq!(Executor::new(&m).unwrap_err().kind(), ErrorKind::KeyError);
    let e = Executor::with_entry(&m, "nothing").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::KeyError);
    assert!(e.message().contains("nothing"), "{e}");
    let ex = Executor::with_entry(&m, "net").unwrap();
    assert_eq!(
        ex.inputs().iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
        ["x", "y"]
    );
    assert_eq!(ex.outputs()[1].shape, [3, 2]);
    let (x, y) = (values(6, 2), values(3, 3));
    let want: Vec<f32> = (0..6).map(|i| 2.0 * x[i] + y[i % 3].max(0.0)).collect();
    let out = ex.run_slices(&[&x, &y]).unwrap();
    assert_eq!(out.len(), 2);
    close(&out[0], &want, 1e-6);
    close(&out[1], &want, 1e-6);
}

/// NHWC x HWIO convolution with padding 1, stride 1, in f64.
fn conv_ref(x: &[f32], w: &[f32], (h, wd, ci, co): (usize, usize, usize, usize)) -> Vec<f32> {
    let mut out = vec![0.0f64; h * wd * co];
    for oy in 0..h {
        for ox in 0..wd {
            for ky in 0..3 {
                for kx in 0..3 {
                    let (iy, ix) = (oy as isize + ky as isize - 1, ox as isize + kx as isize - 1);
                    if iy < 0 || ix < 0 || iy >= h as isize || ix >= wd as isize {
                        continue;
                    }
                    for c in 0..ci {
                        let xv = x[(iy as usize * wd + ix as usize) * ci + c] as f64;
                        for o in 0..co {
                            out[(oy * wd + ox) * co + o] += xv * w[((ky * 3 + kx) * ci + c) * co + o] as f64;
                        }
                    }
                }
            }
        }
    }
    out.into_iter().map(|v| v as f32).collect()
}

#[test]
fn runs_conv_and_dense_before_and_after_fusion() {
    let _leaks = common::leak_check();
    let text = "def @main(%x: Tensor[(1, 5, 4, 3), float32], %w: Tensor[(3, 3, 3, 2), float32],\n\
                          %b: Tensor[(2,), float32], %d: Tensor[(6, 40), float32]) {\n\
                  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\");\n\
                  %1 = nn.bias_add(%0, %b, axis=3);\n\
                  %2 = clip(%1, a_min=0.0, a_max=6.0);\n\
                  %3 = reshape(%2, newshape=[1, 40]);\n\
                  nn.dense(%3, %d)\n}\n";
    let m = Module::parse(text).unwrap();
    let (x, w, b, d) = (values(60, 4), values(54, 5), values(2, 6), values(240, 7));
    let conv = conv_ref(&x, &w, (5, 4, 3, 2));
    let act: Vec<f32> = conv
        .iter()
        .enumerate()
        .map(|(i, v)| (v + b[i % 2]).clamp(0.0, 6.0))
        .collect();
    let want: Vec<f32> = (0..6)
        .map(|u| (0..40).map(|k| act[k] as f64 * d[u * 40 + k] as f64).sum::<f64>() as f32)
        .collect();

    let plain = Executor::new(&m).unwrap();
    let out = plain.run_slices(&[&x, &w, &b, &d]).unwrap();
    assert_eq!(plain.outputs()[0].shape, [1, 6]);
    close(&out[0], &want, 1e-4);
    let stats = plain.stats().unwrap();
    assert_eq!(stats.macs, 5 * 4 * 2 * 27 + 6 * 40, "{stats:?}");

    let pipeline = Pass::sequential_named(&["InferType", "FuseOps"], "fuse").unwrap();
    let fused = Executor::new(&pipeline.run(&m, None).unwrap()).unwrap();
    let again = fused.run_slices(&[&x, &w, &b, &d]).unwrap();
    close(&again[0], &out[0], 1e-6);
    assert!(fused.stats().unwrap().steps < stats.steps);
}

/// A 3x3 convolution of 138,240 MACs (large enough to be cut over
/// threads) and its two inputs.
fn conv_case() -> (Module, Vec<f32>, Vec<f32>) {
    let text = "def @main(%x: Tensor[(1, 12, 10, 8), float32], %w: Tensor[(3, 3, 8, 16), float32]) {\n\
                  nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")\n}\n";
    let m = Module::parse(text).unwrap();
    let (x, w) = (values(12 * 10 * 8, 11), values(3 * 3 * 8 * 16, 12));
    (m, x, w)
}

#[test]
fn threads_give_the_one_thread_outputs() {
    let _leaks = common::leak_check();
    let (m, x, w) = conv_case();
    let one = Executor::new(&m).unwrap();
    let want = one.run_slices(&[&x, &w]).unwrap();
    close(&want[0], &conv_ref(&x, &w, (12, 10, 8, 16)), 1e-4);
    let st = one.stats().unwrap();
    assert_eq!((st.threads, st.split_steps), (1, 0), "{st:?}");
    let many = Executor::new(&m).unwrap();
    many.set_threads(3).unwrap();
    // the convolution (138,240 MACs) is cut over the three threads
    let st = many.stats().unwrap();
    assert_eq!((st.threads, st.split_steps), (3, 1), "{st:?}");
    for _ in 0..3 {
        close(&many.run_slices(&[&x, &w]).unwrap()[0], &want[0], 1e-6);
    }
    expect_err(
        many.set_threads(0),
        ErrorKind::ValueError,
        &["tn_program_set_threads", "expected 1 to 64", "got 0"],
    );
    many.set_threads(1).unwrap();
}

/// Two threads run one shared executor while a third switches its threads
/// between 1, 2 and 3: the handle's lock makes them take turns, so every
/// run finishes with the one-thread outputs and every switch holds.
#[test]
fn threads_set_while_other_threads_run() {
    let _leaks = common::leak_check();
    let (m, x, w) = conv_case();
    let ex = Arc::new(Executor::new(&m).unwrap());
    let want = ex.run_slices(&[&x, &w]).unwrap().remove(0);
    let runners: Vec<_> = (0..2)
        .map(|_| {
            let (ex, x, w, want) = (Arc::clone(&ex), x.clone(), w.clone(), want.clone());
            thread::spawn(move || {
                for _ in 0..30 {
                    close(&ex.run_slices(&[&x, &w]).unwrap()[0], &want, 1e-6);
                }
            })
        })
        .collect();
    let setter = {
        let ex = Arc::clone(&ex);
        thread::spawn(move || {
            for k in 0..30 {
                let n = 1 + k % 3;
                ex.set_threads(n).unwrap();
                let st = ex.stats().unwrap();
                assert_eq!(st.threads, n, "{st:?}");
            }
        })
    };
    for h in runners.into_iter().chain([setter]) {
        h.join().unwrap();
    }
    // the last switch (k = 29) left three threads, which cut the convolution
    let st = ex.stats().unwrap();
    assert_eq!((st.threads, st.split_steps), (3, 1), "{st:?}");
    close(&ex.run_slices(&[&x, &w]).unwrap()[0], &want, 1e-6);
}

#[test]
fn runs_a_module_built_with_the_ir_builders() {
    let _leaks = common::leak_check();
    let ty = |shape: &[i64], dt| TensorType::new(shape, dt).unwrap();
    let a = Var::new("a", Some(&ty(&[4], DataType::I32))).unwrap();
    let b = Var::new("b", Some(&ty(&[2, 4], DataType::I32))).unwrap();
    let body = Call::op("maximum", &[&a, &b], &[]).unwrap();
    let f = ir::Function::new(&[&a, &b], &body, None, None).unwrap();
    let ex = Executor::new(&Module::from_expr(&f).unwrap()).unwrap();
    let av = [3i32, -7, 0, 12];
    let bv = [1i32, 2, 3, 4, -5, -6, 70, 8];
    let want: Vec<i32> = (0..8).map(|i| av[i % 4].max(bv[i])).collect();
    assert_eq!(ex.run_slices(&[&av[..], &bv[..]]).unwrap(), [want]);
}

#[test]
fn bad_inputs_are_errors_naming_the_input() {
    let _leaks = common::leak_check();
    let m =
        Module::parse("def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) { add(%x, %y) }")
            .unwrap();
    let ex = Executor::new(&m).unwrap();
    let x = Tensor::from_slice(&[2, 3], &[0.0f32; 6]).unwrap();
    let y = Tensor::from_slice(&[3], &[0.0f32; 3]).unwrap();
    // Count.
    expect_err(ex.run(&[&x]), ErrorKind::TypeError, &["expected 2 inputs, got 1"]);
    expect_err(
        ex.run(&[&x, &y, &y]),
        ErrorKind::TypeError,
        &["expected 2 inputs, got 3"],
    );
    // Shape.
    let y4 = Tensor::from_slice(&[4], &[0.0f32; 4]).unwrap();
    expect_err(
        ex.run(&[&x, &y4]),
        ErrorKind::TypeError,
        &["input 1 ('y')", "Tensor[(3,), float32]", "Tensor[(4,), float32]"],
    );
    // Dtype.
    let xi = Tensor::from_slice(&[2, 3], &[0i32; 6]).unwrap();
    expect_err(
        ex.run(&[&xi, &y]),
        ErrorKind::TypeError,
        &["input 0 ('x')", "int32"],
    );
    // The same through slices: a length that is not the input's, a dtype
    // that is not, too few.
    expect_err(
        ex.run_slices(&[&[0.0f32; 6][..], &[0.0f32; 5][..]]),
        ErrorKind::TypeError,
        &["input 1 ('y')", "Tensor[(5,), float32]"],
    );
    expect_err(
        ex.run_slices(&[&[0i8; 6][..], &[0i8; 3][..]]),
        ErrorKind::TypeError,
        &["input 0 ('x')", "int8"],
    );
    expect_err(
        ex.run_slices::<f32>(&[]),
        ErrorKind::TypeError,
        &["expected 2 inputs, got 0"],
    );
    // The error carries a frame naming this file.
    let e = ex.run(&[&x]).unwrap_err();
    assert!(
        e.frames().iter().any(|f| f.contains("tests/runtime.rs")),
        "{:?}",
        e.frames()
    );
}

#[test]
fn outputs_of_another_dtype_name_the_output() {
    let _leaks = common::leak_check();
    let m = Module::parse("def @main(%x: Tensor[(4,), float32]) { cast(%x, dtype=\"int32\") }").unwrap();
    let ex = Executor::new(&m).unwrap();
    // An input of the right type but an output of another: only run() fits.
    let t = Tensor::from_slice(&[4], &[1.5f32, -2.5, 3.0, 0.25]).unwrap();
    let out = ex.run(&[&t]).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [1, -2, 3, 0]);
    expect_err(
        ex.run_slices(&[&[1.0f32, 2.0, 3.0, 4.0][..]]),
        ErrorKind::TypeError,
        &["output 0 ('output0')", "int32"],
    );
}

#[test]
fn modules_that_cannot_run_fail_when_the_executor_is_made() {
    let _leaks = common::leak_check();
    let m = Module::parse("def @main(%d: Tensor[(4,), float64]) { exp(%d) }").unwrap();
    expect_err(
        Executor::new(&m),
        ErrorKind::NotImplementedError,
        &["exp", "no kernel", "Tensor[(4,), float64]"],
    );
    // A module that does not type-check: the parser already refuses it
    // (it types calls as it builds them), and InferType would.
    let bad = Module::parse("def @main(%x: Tensor[(2, 3), float32]) { add(%x, cast(%x, dtype=\"int32\")) }");
    expect_err(bad, ErrorKind::TypeError, &["add", "Tensor[(2, 3), int32]"]);
    // One InferType cannot type: a parameter without a type.
    let x = Var::new("x", None).unwrap();
    let f = ir::Function::new(&[&x], &Call::op("nn.relu", &[&x], &[]).unwrap(), None, None).unwrap();
    expect_err(
        Executor::new(&Module::from_expr(&f).unwrap()),
        ErrorKind::TypeError,
        &["InferType", "%x", "no type annotation"],
    );
}

#[test]
fn one_executor_shared_between_threads_takes_turns() {
    let _leaks = common::leak_check();
    let ex = Arc::new(Executor::new(&Module::parse(RELU_ADD).unwrap()).unwrap());
    ex.set_profiling(true).unwrap();
    let workers: Vec<_> = (0..4u32)
        .map(|k| {
            let ex = Arc::clone(&ex);
            thread::spawn(move || {
                for round in 0..50 {
                    let x = values(6, k * 100 + round);
                    let want: Vec<f32> = x.iter().map(|v| (v + v).max(0.0)).collect();
                    assert_eq!(ex.run_slices(&[&x]).unwrap(), [want]);
                    if round % 10 == 0 {
                        ex.stats().unwrap();
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let stats = ex.stats().unwrap();
    assert_eq!(stats.runs, 200);
    assert!(
        stats.run_ns >= stats.kernel_ns && stats.kernel_ns > 0,
        "{stats:?}"
    );
    ex.set_profiling(false).unwrap();
    assert_eq!(ex.stats().unwrap().runs, 0);
}

#[test]
fn executor_is_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Executor>();
    shareable::<TensorInfo>();
}
