//! Compiled models as runtime Modules: every bundled model, compiled ahead
//! of time by the Python tooling (see `model_lib`), loads, describes itself
//! and gives the host executor's outputs to the bit; wrong names, indices,
//! lengths, shapes and dtypes are errors of distinct kinds; missing and
//! foreign libraries are `OSError`s; the system library finds models linked
//! in; outputs are borrowed without a copy; a Module moves between threads;
//! nothing is left alive. The tests that need compiled models skip, saying
//! why, when the tooling is missing.

mod common;
mod model_lib;

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};

use tvmnode::prelude::*;
use tvmnode::runtime::{IoInfo, Module};
use tvmnode::{DataType, Device, Map, Shape, Tensor};

use model_lib::{built, or_skip, Built};

fn expect_err<T: std::fmt::Debug>(r: Result<T>, kind: ErrorKind, parts: &[&str]) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    for p in parts {
        assert!(e.message().contains(p), "{p:?} not in {e}");
    }
    e
}

/// The tooling and a leak check, for a test that needs compiled models; or
/// `None` when the tooling is missing, and the test skips, saying why.
fn start(test: &str) -> Option<(&'static model_lib::Tooling, common::LeakCheck)> {
    let t = or_skip(test)?;
    Some((t, common::leak_check()))
}

/// ad01_int8 loaded, its reference input set.
fn ad01_with_input() -> (&'static Built, Module) {
    let b = built("ad01_int8");
    let mut m = Module::load(&b.lib).unwrap();
    m.set_input(0, &b.input.as_i8()).unwrap();
    (b, m)
}

fn libtvmnode() -> PathBuf {
    Path::new(env!("TVMNODE_LIB_DIR")).join("libtvmnode.so")
}

/// Set the built model's reference input, run, and compare the output with
/// the executor's, byte for byte.
fn run_and_compare(m: &mut Module, b: &Built) {
    let input = &m.inputs()[0];
    let want = &b.expected;
    assert_eq!(
        m.outputs()[0]
            .shape
            .iter()
            .map(|&d| d as usize)
            .collect::<Vec<_>>(),
        want.shape,
        "{}",
        b.stem
    );
    let got: Vec<u8> = match input.dtype {
        d if d == DataType::I8 => {
            m.set_input(0, &b.input.as_i8()).unwrap();
            m.run().unwrap();
            m.output::<i8>(0).unwrap().iter().map(|&v| v as u8).collect()
        }
        d if d == DataType::F32 => {
            m.set_input(0, &b.input.as_f32()).unwrap();
            m.run().unwrap();
            m.output::<f32>(0)
                .unwrap()
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect()
        }
        d => panic!("{}: no test for inputs of {d}", b.stem),
    };
    assert_eq!(got.len(), want.data.len(), "{}", b.stem);
    let diff = got.iter().zip(&want.data).filter(|(a, b)| a != b).count();
    assert_eq!(
        diff, 0,
        "{}: {diff} bytes differ from the executor's output",
        b.stem
    );
}

#[test]
fn every_bundled_model_gives_the_executors_outputs() {
    let Some((_, _leaks)) = start("every_bundled_model_gives_the_executors_outputs") else {
        return;
    };
    for &(stem, name) in model_lib::MODELS {
        let b = built(stem);
        let mut m = Module::load(&b.lib).unwrap();
        assert_eq!(m.name(), name);
        assert_eq!((m.inputs().len(), m.outputs().len()), (1, 1), "{stem}");
        let input = &m.inputs()[0];
        assert_eq!(
            input.shape.iter().map(|&d| d as usize).collect::<Vec<_>>(),
            b.input.shape,
            "{stem}"
        );
        assert_eq!(input.nbytes, b.input.data.len(), "{stem}");
        // The quantized models say so, the float ones do not.
        let quantized = input.dtype == DataType::I8;
        assert_eq!(input.is_quantized(), quantized, "{stem}: {input:?}");
        assert_eq!(m.outputs()[0].is_quantized(), quantized, "{stem}");
        assert!(m.macs() > 0, "{stem}");
        run_and_compare(&mut m, b);
        // Again on the same Module: the same outputs.
        run_and_compare(&mut m, b);
    }
}

#[test]
fn describes_inputs_and_outputs_as_the_c_side_does() {
    let Some((_, _leaks)) = start("describes_inputs_and_outputs_as_the_c_side_does") else {
        return;
    };
    let m = Module::load(&built("ad01_int8").lib).unwrap();
    let input = &m.inputs()[0];
    assert_eq!(input.name, "input_1");
    assert_eq!(input.shape, [1, 640]);
    assert_eq!(input.dtype, DataType::I8);
    assert_eq!((input.nbytes, input.numel()), (640, 640));
    assert!(input.scale > 0.0);
    let output = &m.outputs()[0];
    assert_eq!(
        (output.shape.as_slice(), output.dtype),
        (&[1i64, 640][..], DataType::I8)
    );
    assert_eq!(m.input_index("input_1").unwrap(), 0);
    assert_eq!(m.output_index(&output.name.clone()).unwrap(), 0);
    assert_eq!(m.output_index(0usize).unwrap(), 0);

    // The C description, item by item.
    let d = m.describe().unwrap();
    assert_eq!(d.get_as::<std::string::String>("name").unwrap(), "ad");
    assert_eq!(d.get_as::<i64>("macs").unwrap(), m.macs());
    assert!(d.get_as::<i64>("workspace_bytes").unwrap() > 0);
    let check = |list: tvmnode::Array, infos: &[IoInfo]| {
        assert_eq!(list.len(), infos.len());
        for (item, info) in list.iter_as::<Map>().zip(infos) {
            let item = item.unwrap();
            assert_eq!(item.get_as::<std::string::String>("name").unwrap(), info.name);
            assert_eq!(item.get_as::<Shape>("shape").unwrap().as_slice(), info.shape);
            assert_eq!(
                item.get_as::<std::string::String>("dtype").unwrap(),
                info.dtype.to_string()
            );
            assert_eq!(item.get_as::<f64>("scale").unwrap() as f32, info.scale);
            assert_eq!(item.get_as::<i64>("zero_point").unwrap(), info.zero_point as i64);
        }
    };
    check(d.get_as("inputs").unwrap(), m.inputs());
    check(d.get_as("outputs").unwrap(), m.outputs());
    // The raw descriptor agrees.
    assert_eq!(m.model().num_inputs, 1);
    assert_eq!(m.model().magic, tvmnode::sys::TN_CRT_MODEL_MAGIC);
    assert!(format!("{m:?}").contains("input_1"));
}

#[test]
fn wrong_names_indices_lengths_shapes_and_dtypes_are_distinct_kinds() {
    let Some((_, _leaks)) = start("wrong_names_indices_lengths_shapes_and_dtypes_are_distinct_kinds") else {
        return;
    };
    let mut m = Module::load(&built("ad01_int8").lib).unwrap();
    let x = vec![1i8; 640];

    // Nothing to read before a run, nor to run before the input is set.
    expect_err(m.output::<i8>(0), ErrorKind::RuntimeError, &["'ad'", "not run"]);
    expect_err(
        m.run(),
        ErrorKind::RuntimeError,
        &["'ad'", "'input_1'", "not set"],
    );

    // Name: KeyError naming the inputs; index: IndexError.
    expect_err(
        m.set_input("image", &x),
        ErrorKind::KeyError,
        &["'ad'", "'image'", "'input_1'"],
    );
    expect_err(m.set_input(3, &x), ErrorKind::IndexError, &["'ad'", "3"]);
    expect_err(m.set_input(-1, &x), ErrorKind::IndexError, &["'ad'"]);
    expect_err(m.input_index("image"), ErrorKind::KeyError, &["'image'"]);
    // Length: ValueError naming the input and both sizes.
    expect_err(
        m.set_input(0, &x[..639]),
        ErrorKind::ValueError,
        &["'input_1'", "640", "639"],
    );
    expect_err(
        m.set_input("input_1", &[0i8; 0]),
        ErrorKind::ValueError,
        &["'input_1'"],
    );
    // Element type: TypeError naming both dtypes, whatever the length.
    expect_err(
        m.set_input(0, &[0u8; 640]),
        ErrorKind::TypeError,
        &["'input_1'", "int8", "uint8"],
    );
    expect_err(
        m.set_input(0, &[0f32; 160]),
        ErrorKind::TypeError,
        &["int8", "float32"],
    );
    // Tensors: the C side checks dtype and shape.
    let t = Tensor::from_slice(&[640, 1], &x).unwrap();
    expect_err(
        m.set_input_tensor(0, &t),
        ErrorKind::ValueError,
        &["'input_1'", "[1, 640]", "[640, 1]"],
    );
    let t = Tensor::from_slice(&[1, 640], &[0i32; 640]).unwrap();
    expect_err(
        m.set_input_tensor("input_1", &t),
        ErrorKind::TypeError,
        &["int8", "int32"],
    );
    drop(t);

    m.set_input(0, &x).unwrap();
    m.run().unwrap();
    // Outputs: the same kinds.
    expect_err(
        m.output::<f32>(0),
        ErrorKind::TypeError,
        &["'identity'", "int8", "float32"],
    );
    expect_err(
        m.output::<i8>(1),
        ErrorKind::IndexError,
        &["1 outputs", "output 1"],
    );
    expect_err(
        m.output::<i8>("nothing"),
        ErrorKind::KeyError,
        &["'nothing'", "'identity'"],
    );
    let mut small = [0i8; 10];
    expect_err(
        m.copy_output(0, &mut small),
        ErrorKind::ValueError,
        &["'identity'", "640"],
    );
    let mut wrong = [0u8; 640];
    expect_err(m.copy_output(0, &mut wrong), ErrorKind::TypeError, &["uint8"]);
    expect_err(m.time(0, 1), ErrorKind::ValueError, &["at least 1"]);

    // The errors say where Rust saw them.
    let e = m.set_input("image", &x).unwrap_err();
    assert!(
        e.frames()
            .iter()
            .any(|f| f.contains("Module::set_input") && f.contains("module.rs")),
        "{:?}",
        e.frames()
    );
    // None of this broke the Module.
    m.run().unwrap();
    assert_eq!(m.output::<i8>(0).unwrap().len(), 640);
}

#[test]
fn outputs_are_borrowed_without_a_copy() {
    let Some((_, _leaks)) = start("outputs_are_borrowed_without_a_copy") else {
        return;
    };
    let (b, mut m) = ad01_with_input();
    m.run().unwrap();
    let (p1, first) = {
        let y = m.output::<i8>(0).unwrap();
        (y.as_ptr(), y.to_vec())
    };
    assert_eq!(first, b.expected.as_i8());
    // The same buffer every time, and what copy_output copies.
    let y = m.output::<i8>("identity").unwrap();
    assert_eq!(y.as_ptr(), p1);
    let mut copy = vec![0i8; 640];
    m.copy_output(0, &mut copy).unwrap();
    assert_eq!(copy, first);
    // A tensor copy outlives the Module and its next runs.
    let kept = m.output_tensor(0).unwrap();
    assert_eq!(kept.shape(), [1, 640]);
    assert_eq!(kept.dtype(), DataType::I8);
    assert_ne!(kept.as_slice::<i8>().unwrap().as_ptr(), p1);

    // Another input: the buffer is overwritten in place.
    let other = model_lib::input_for("int8", &[1, 640], 7).as_i8();
    m.set_input(0, &other).unwrap();
    m.run().unwrap();
    let y2 = m.output::<i8>(0).unwrap();
    assert_eq!(y2.as_ptr(), p1);
    assert_ne!(y2, first.as_slice());
    drop(m);
    assert_eq!(kept.as_slice::<i8>().unwrap(), first.as_slice());
}

#[test]
fn outputs_are_read_in_place_and_checked_before_they_are_read() {
    let Some((_, leaks)) = start("outputs_are_read_in_place_and_checked_before_they_are_read") else {
        return;
    };
    let b = built("ad01_int8");
    let mut m = Module::load(&b.lib).unwrap();
    // Before any run: nothing to read, whatever the key.
    let e = expect_err(m.output::<i8>(0), ErrorKind::RuntimeError, &["'ad'", "not run"]);
    assert!(
        e.frames()
            .iter()
            .any(|f| f.contains("Module::output") && f.contains("module.rs")),
        "{:?}",
        e.frames()
    );
    drop(e);
    expect_err(m.output::<i8>("identity"), ErrorKind::RuntimeError, &["not run"]);
    // The key and the element type are checked first.
    expect_err(m.output::<i8>(1), ErrorKind::IndexError, &["'ad'", "output 1"]);
    expect_err(
        m.output::<f32>(0),
        ErrorKind::TypeError,
        &["'ad'", "'identity'", "int8", "float32"],
    );

    m.set_input(0, &b.input.as_i8()).unwrap();
    m.run().unwrap();
    let want = b.expected.as_i8();
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    assert_eq!(m.output::<i8>("identity").unwrap(), want.as_slice());
    // The slice is the buffer the C side reads out of.
    let mut nbytes = 0usize;
    // SAFETY: a live Module of this thread, with a run to read.
    let p = unsafe { tvmnode::sys::tn_module_output_data(m.as_ptr(), 0, &mut nbytes) };
    assert_eq!(m.output::<i8>(0).unwrap().as_ptr().cast(), p);
    assert_eq!(nbytes, m.outputs()[0].nbytes);

    // Wrong element types name both dtypes; every width is refused.
    for (r, got) in [
        (m.output::<u8>(0).map(|_| ()), "uint8"),
        (m.output::<i16>(0).map(|_| ()), "int16"),
        (m.output::<i32>(0).map(|_| ()), "int32"),
        (m.output::<i64>(0).map(|_| ()), "int64"),
        (m.output::<f32>(0).map(|_| ()), "float32"),
        (m.output::<f64>("identity").map(|_| ()), "float64"),
    ] {
        expect_err(r, ErrorKind::TypeError, &["output 'identity' is int8", got]);
    }
    // Indices out of range, however given.
    expect_err(
        m.output::<i8>(1),
        ErrorKind::IndexError,
        &["1 outputs", "output 1"],
    );
    expect_err(m.output::<i8>(-1), ErrorKind::IndexError, &["'ad'"]);
    expect_err(m.output::<i8>(usize::MAX), ErrorKind::IndexError, &["'ad'"]);
    expect_err(
        m.output::<i8>("nothing"),
        ErrorKind::KeyError,
        &["'nothing'", "'identity'"],
    );
    // None of that disturbed the run's output, and no object was made.
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    assert_eq!(leaks.leaked(), 1, "the Module alone");
}

#[test]
fn run_with_sets_the_inputs_and_runs_in_one_call() {
    let Some((_, leaks)) = start("run_with_sets_the_inputs_and_runs_in_one_call") else {
        return;
    };
    let b = built("ad01_int8");
    let x = b.input.as_i8();
    let want = b.expected.as_i8();
    let mut m = Module::load(&b.lib).unwrap();
    m.run_with(&[&x]).unwrap();
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    // The same again, from an array, a slice, by another input.
    let other = model_lib::input_for("int8", &[1, 640], 7).as_i8();
    m.run_with(&[other.as_slice()]).unwrap();
    assert_ne!(m.output::<i8>(0).unwrap(), want.as_slice());
    m.run_with(&[&x[..]]).unwrap();
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());

    // The Module kept nothing of `x`: the input, outside the pools, was
    // read in place and is unset again.
    // SAFETY: the descriptor of a live Module, which has one input.
    assert!(unsafe { (*m.model().inputs).pool } < 0);
    expect_err(m.run(), ErrorKind::RuntimeError, &["'input_1'", "not set"]);
    // No slice: the inputs as set.
    m.set_input(0, &other).unwrap();
    m.run_with::<i8>(&[]).unwrap();
    let with_other = m.output::<i8>(0).unwrap().to_vec();
    m.run().unwrap();
    assert_eq!(m.output::<i8>(0).unwrap(), with_other.as_slice());

    // Errors of the same kinds and words as set_input's, before any run.
    expect_err(
        m.run_with(&[&[0f32; 160]]),
        ErrorKind::TypeError,
        &["'ad'", "input 'input_1' is int8, got float32"],
    );
    expect_err(m.run_with(&[&[0u8; 640]]), ErrorKind::TypeError, &["uint8"]);
    let e = expect_err(
        m.run_with(&[&x[..639]]),
        ErrorKind::ValueError,
        &["'ad'", "'input_1'", "640", "639"],
    );
    assert!(
        e.frames()
            .iter()
            .any(|f| f.contains("Module::run_with") && f.contains("module.rs")),
        "{:?}",
        e.frames()
    );
    drop(e);
    expect_err(
        m.run_with(&[&x, &x]),
        ErrorKind::ValueError,
        &["'ad'", "1 inputs, got 2"],
    );
    // A float model too.
    let bf = built("ad01_fp32");
    let mut mf = Module::load(&bf.lib).unwrap();
    mf.run_with(&[&bf.input.as_f32()]).unwrap();
    let got: Vec<u8> = mf
        .output::<f32>(0)
        .unwrap()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(got, bf.expected.data);
    expect_err(mf.run_with(&[&x]), ErrorKind::TypeError, &["float32, got int8"]);
    drop(mf);

    // A zero-copy tensor input is let go once run_with replaces it.
    assert_eq!(leaks.leaked(), 1);
    let t = Tensor::from_slice(&[1, 640], &other).unwrap();
    m.set_input_tensor(0, &t).unwrap();
    drop(t);
    assert_eq!(leaks.leaked(), 2, "the Module keeps its zero-copy input");
    m.run_with(&[&x]).unwrap();
    assert_eq!(leaks.leaked(), 1, "and lets it go when run_with gives another");
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
}

#[test]
fn tensor_inputs_give_the_same_outputs() {
    let Some((_, _leaks)) = start("tensor_inputs_give_the_same_outputs") else {
        return;
    };
    let b = built("kws_ref_model");
    let shape: Vec<i64> = b.input.shape.iter().map(|&d| d as i64).collect();
    let mut m = Module::load(&b.lib).unwrap();
    let t = Tensor::from_slice(&shape, &b.input.as_i8()).unwrap();
    m.set_input_tensor(0, &t).unwrap();
    // The Module keeps the tensor alive (zero copy) until the input is set
    // again.
    drop(t);
    m.run().unwrap();
    let want = b.expected.as_i8();
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    m.set_input(0, &b.input.as_i8()).unwrap();
    m.run().unwrap();
    assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    // A float model from a tensor too.
    let b = built("ad01_fp32");
    let mut m = Module::load(&b.lib).unwrap();
    let shape: Vec<i64> = b.input.shape.iter().map(|&d| d as i64).collect();
    m.set_input_tensor("input_1", &Tensor::from_slice(&shape, &b.input.as_f32()).unwrap())
        .unwrap();
    m.run().unwrap();
    let got: Vec<u8> = m
        .output::<f32>(0)
        .unwrap()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(got, b.expected.data);
}

#[test]
fn missing_and_foreign_libraries_are_os_errors() {
    let _leaks = common::leak_check();
    let e = Module::load("/nonexistent/model.so").unwrap_err();
    assert_eq!((e.kind(), e.kind_str()), (ErrorKind::Other, "OSError"), "{e}");
    assert!(e.message().contains("/nonexistent/model.so"), "{e}");
    // A library that holds no model: libtvmnode itself.
    let lib = libtvmnode();
    let e = Module::load(&lib).unwrap_err();
    assert_eq!(e.kind_str(), "OSError", "{e}");
    assert!(e.message().contains("holds no model"), "{e}");
    // A file that is not a library at all.
    let e = Module::load(file!()).unwrap_err();
    assert_eq!(e.kind_str(), "OSError", "{e}");
    // A path with a NUL byte never reaches C.
    assert_eq!(Module::load("a\0b").unwrap_err().kind(), ErrorKind::ValueError);
}

#[test]
fn models_are_found_by_name() {
    let _leaks = common::leak_check();
    // The system library has no model of that name (whatever it holds).
    expect_err(
        Module::system("no_such_model"),
        ErrorKind::KeyError,
        &["'no_such_model'"],
    );
    let Some(_) = or_skip("models_are_found_by_name") else {
        return;
    };
    let b = built("ad01_int8");
    let m = Module::load_named(&b.lib, "ad").unwrap();
    assert_eq!(m.name(), "ad");
    expect_err(
        Module::load_named(&b.lib, "kws"),
        ErrorKind::KeyError,
        &["'kws'", "'ad'"],
    );
}

#[link(name = "dl")]
extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlerror() -> *const c_char;
}

#[test]
fn the_system_library_finds_models_linked_in() {
    let Some((t, _leaks)) = start("the_system_library_finds_models_linked_in") else {
        return;
    };
    // The ad01 archive built as a system library (registering itself from a
    // constructor, no tvmnode_module_models) and loaded into the process,
    // as if linked in.
    let b = built("ad01_int8");
    let dir = t.out.join("system");
    std::fs::create_dir_all(&dir).unwrap();
    let (model, arch, lib) = (t.model("ad01_int8"), dir.join("ad_sys"), dir.join("libad_sys.so"));
    let args = [
        "compile",
        model.to_str().unwrap(),
        "--name",
        "ad_sys",
        "-o",
        arch.to_str().unwrap(),
    ];
    t.tvmnode(&args).unwrap();
    t.build_library(&arch, &lib, &["-DTVMGEN_SYSTEM_LIB"]).unwrap();
    let c = CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: a library built above; its constructor registers a static
    // descriptor with libtvmnode, which keeps it mapped.
    let h = unsafe {
        dlopen(c.as_ptr(), 2 /* RTLD_NOW */)
    };
    assert!(!h.is_null(), "{:?}", unsafe {
        std::ffi::CStr::from_ptr(dlerror())
    });
    let mut m = Module::system("ad_sys").unwrap();
    assert_eq!(m.name(), "ad_sys");
    m.set_input("input_1", &b.input.as_i8()).unwrap();
    m.run().unwrap();
    assert_eq!(m.output::<i8>(0).unwrap(), b.expected.as_i8().as_slice());
    // Not found: the error names what is there.
    expect_err(
        Module::system("no_such_model"),
        ErrorKind::KeyError,
        &["'ad_sys'"],
    );

    // A Module over the same descriptor, which lives as long as the
    // process (the library stays mapped).
    let model: &'static tvmnode::sys::TnCrtModel = unsafe { &*(m.model() as *const _) };
    // SAFETY: a generated descriptor in a library that is never unloaded.
    let mut again = unsafe { Module::from_model(model) }.unwrap();
    again.set_input(0, &b.input.as_i8()).unwrap();
    again.run().unwrap();
    assert_eq!(again.output::<i8>(0).unwrap(), m.output::<i8>(0).unwrap());
}

#[test]
fn a_module_moves_to_another_thread_and_modules_run_in_parallel() {
    let Some((_, _leaks)) = start("a_module_moves_to_another_thread_and_modules_run_in_parallel") else {
        return;
    };
    let b = built("ad01_int8");
    let want = b.expected.as_i8();
    let x = b.input.as_i8();
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let mut m = Module::load(&b.lib).unwrap();
            let x = x.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    m.set_input(0, &x).unwrap();
                    m.run().unwrap();
                }
                let out = m.output::<i8>(0).unwrap().to_vec();
                (m, out)
            })
        })
        .collect();
    for h in handles {
        let (m, out) = h.join().unwrap();
        assert_eq!(out, want);
        // Back on this thread, still usable.
        assert_eq!(m.output::<i8>(0).unwrap(), want.as_slice());
    }
}

#[test]
fn timing_runs_in_c() {
    let Some((_, _leaks)) = start("timing_runs_in_c") else {
        return;
    };
    let (b, mut m) = ad01_with_input();
    let times = m.time(5, 3).unwrap();
    assert_eq!(times.len(), 3);
    assert!(times.iter().all(|t| !t.is_zero()), "{times:?}");
    // The runs were real: the output is there.
    assert_eq!(m.output::<i8>(0).unwrap(), b.expected.as_i8().as_slice());
}

#[test]
fn a_module_and_its_outputs_keep_nothing_alive() {
    let Some((_, leaks)) = start("a_module_and_its_outputs_keep_nothing_alive") else {
        return;
    };
    let b = built("ad01_int8");
    let mut m = Module::load(&b.lib).unwrap();
    assert_eq!(leaks.leaked(), 1, "the Module is one object");
    m.set_input(0, &b.input.as_i8()).unwrap();
    m.run().unwrap();
    for _ in 0..3 {
        let _ = m.output::<i8>(0).unwrap();
    }
    assert_eq!(leaks.leaked(), 1, "borrowed outputs hold no object");
    let t = m.output_tensor(0).unwrap();
    let shape = t.shape().to_vec();
    assert_eq!(leaks.leaked(), 2, "a copied output is one tensor");
    let zeros = Tensor::empty(&shape, DataType::I8, Device::cpu(0)).unwrap();
    m.set_input_tensor(0, &zeros).unwrap();
    drop(zeros);
    assert_eq!(leaks.leaked(), 3, "the Module keeps its zero-copy input");
    m.set_input(0, &b.input.as_i8()).unwrap();
    assert_eq!(leaks.leaked(), 2, "and lets it go when the input is set again");
    drop((m, t));
    assert_eq!(leaks.leaked(), 0);
}

#[test]
fn a_streaming_model_keeps_its_state_in_the_module() {
    let Some((tool, leaks)) = start("a_streaming_model_keeps_its_state_in_the_module") else {
        return;
    };
    let dir = tool.out.join("streaming");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = tool.streaming(&dir).unwrap();
    let xs = std::fs::read(dir.join("inputs.bin")).unwrap();
    let want = std::fs::read(dir.join("want.bin")).unwrap();
    let mut m = Module::load(&lib).unwrap();
    assert!(m.state_bytes() > 0, "the model keeps state");
    for k in 0..model_lib::STREAM_STEPS {
        if k == model_lib::STREAM_RESET_AT {
            m.reset().unwrap();
        }
        let x: Vec<i8> = xs[8 * k..8 * k + 8].iter().map(|&b| b as i8).collect();
        m.run_with(&[&x]).unwrap();
        for o in 0..2 {
            let got: Vec<u8> = m.output::<i8>(o).unwrap().iter().map(|&v| v as u8).collect();
            let at = 16 * k + 8 * o;
            assert_eq!(got, &want[at..at + 8], "step {k}, output {o}");
        }
    }
    // a model without state: nothing to reset
    let (_, mut plain) = ad01_with_input();
    assert_eq!(plain.state_bytes(), 0);
    plain.reset().unwrap();
    drop((m, plain));
    assert_eq!(leaks.leaked(), 0);
}

/// The calls the compiled archive of `b` hands to the crt's parallel hook.
fn cut_calls(b: &Built) -> u64 {
    let src = b
        .lib
        .with_extension("")
        .join(format!("codegen/host/src/{}_lib0.c", b.name));
    let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    text.matches("tn_crt_call_split(").count() as u64
}

#[test]
fn threads_give_the_one_thread_bytes_and_cut_every_handed_call() {
    let Some((_, leaks)) = start("threads_give_the_one_thread_bytes_and_cut_every_handed_call") else {
        return;
    };
    let b = built("kws_ref_model");
    let cut = cut_calls(b);
    assert!(cut > 0, "the host archive hands no call to the parallel hook");
    let inputs: Vec<Vec<i8>> = (0..3)
        .map(|seed| model_lib::input_for("int8", &[1, 49, 10, 1], 20 + seed).as_i8())
        .collect();
    let mut one = Module::load(&b.lib).unwrap();
    assert_eq!((one.threads(), one.split_calls()), (1, 0));
    run_and_compare(&mut one, b);
    let want: Vec<Vec<i8>> = inputs
        .iter()
        .map(|x| {
            one.run_with(&[x]).unwrap();
            one.output::<i8>(0).unwrap().to_vec()
        })
        .collect();
    assert_eq!(one.split_calls(), 0);
    for threads in [2, 3] {
        let mut m = Module::load(&b.lib).unwrap();
        m.set_threads(threads).unwrap();
        assert_eq!(m.threads(), threads as usize);
        assert_eq!(leaks.leaked(), 2, "threads make no object");
        for _ in 0..2 {
            for (x, w) in inputs.iter().zip(&want) {
                m.run_with(&[x]).unwrap();
                assert_eq!(m.output::<i8>(0).unwrap(), w.as_slice(), "{threads} threads");
                assert_eq!(m.split_calls(), cut, "{threads} threads");
            }
        }
        run_and_compare(&mut m, b);
        m.set_threads(1).unwrap();
        m.run().unwrap();
        assert_eq!((m.threads(), m.split_calls()), (1, 0));
    }
}

#[test]
fn bad_thread_counts_are_named_and_change_nothing() {
    let Some((_, _leaks)) = start("bad_thread_counts_are_named_and_change_nothing") else {
        return;
    };
    let b = built("kws_ref_model");
    let mut m = Module::load(&b.lib).unwrap();
    m.set_threads(2).unwrap();
    for bad in [0, -1, 65, i64::MAX] {
        let got = format!("got {bad}");
        let e = expect_err(
            m.set_threads(bad),
            ErrorKind::ValueError,
            &[
                "tn_module_set_threads",
                "model 'kws'",
                "argument n (threads)",
                "expected 1 to 64",
                &got,
            ],
        );
        assert!(
            e.frames().iter().any(|f| f.contains("Rust: Module::set_threads")),
            "{e:?}"
        );
        assert_eq!(m.threads(), 2, "after set_threads({bad})");
    }
    m.set_threads(64).unwrap(); // the most: 63 workers, ended by the next call
    assert_eq!(m.threads(), 64);
    m.set_threads(1).unwrap();
}

/// Modules with threads run at once on several threads, each on its own
/// pool, one of them moved to its thread after its threads were set: every
/// run gives the one-thread bytes.
#[test]
fn modules_with_threads_run_at_once_on_several_threads() {
    let Some((_, _leaks)) = start("modules_with_threads_run_at_once_on_several_threads") else {
        return;
    };
    let b = built("kws_ref_model");
    let want = b.expected.as_i8();
    let x = b.input.as_i8();
    let handles: Vec<_> = (1..=3)
        .map(|threads| {
            let mut m = Module::load(&b.lib).unwrap();
            m.set_threads(threads).unwrap();
            let x = x.clone();
            std::thread::spawn(move || {
                let mut outs = Vec::new();
                for k in 0..20 {
                    if k == 10 {
                        // switch on this thread, between runs
                        m.set_threads(4 - threads).unwrap();
                    }
                    m.run_with(&[&x]).unwrap();
                    outs.push(m.output::<i8>(0).unwrap().to_vec());
                }
                (m, outs)
            })
        })
        .collect();
    for h in handles {
        let (m, outs) = h.join().unwrap();
        assert!(outs.iter().all(|o| *o == want), "{} threads", m.threads());
    }
}
