//! The tensor IR from Rust: reading fields, building calls, visiting and
//! rewriting, and a Rust pass registered by name in a mixed pipeline.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tvmnode::ir::{self, Call, Constant, Expr, Module, Op, Pass, PassContext, TensorType, Var};
use tvmnode::prelude::*;
use tvmnode::{Array, DataType, Tensor};

fn tensor_var(name: &str, shape: &[i64]) -> Var {
    let ty = TensorType::new(shape, DataType::F32).unwrap();
    Var::new(name, Some(&ty)).unwrap()
}

/// `relu(x + c) * 1`, with x: [2, 3] and c a constant.
fn small_graph() -> (Var, Call) {
    let x = tensor_var("x", &[2, 3]);
    let c = Constant::new(&Tensor::from_slice(&[2, 3], &[1.0f32; 6]).unwrap()).unwrap();
    let add = Call::op("add", &[&x, &c], &[]).unwrap();
    let relu = Call::op("nn.relu", &[&add], &[]).unwrap();
    let one = Constant::scalar(1.0, DataType::F32).unwrap();
    let mul = Call::op("multiply", &[&relu, &one], &[]).unwrap();
    (x, mul)
}

#[test]
fn build_and_read_ir() {
    let _leaks = common::leak_check();
    let (x, mul) = small_graph();
    assert_eq!(x.name_hint(), "x");
    let ann: TensorType = x.type_annotation().unwrap().into_object().downcast().unwrap();
    assert_eq!(ann.shape().as_slice(), &[2, 3]);
    assert_eq!(ann.dtype(), DataType::F32);
    // Calls of typed arguments are typed as they are built.
    let ty: TensorType = mul.checked_type().unwrap().into_object().downcast().unwrap();
    assert_eq!(ty.shape().as_slice(), &[2, 3]);
    let op = mul.callee_op().unwrap();
    assert_eq!(op.name(), "multiply");
    assert_eq!(op.num_inputs(), 2);
    let args = mul.args().unwrap();
    assert_eq!(args.len(), 2);
    let relu: Call = args[0].clone().into_object().downcast().unwrap();
    assert_eq!(relu.callee_op().unwrap().name(), "nn.relu");
    // Generic reflection on IR nodes works too.
    let args_by_name: Array = mul.get_as("args").unwrap();
    assert_eq!(args_by_name.len(), 2);
    assert!(Op::list().unwrap().iter().any(|n| n == "nn.conv2d"));
    assert_eq!(Op::lookup("no.such.op").unwrap_err().kind(), ErrorKind::KeyError);
}

#[test]
fn builders_check_types_at_once() {
    let _leaks = common::leak_check();
    let a = tensor_var("a", &[2, 3]);
    let b = tensor_var("b", &[4, 3]);
    let e = Call::op("add", &[&a, &b], &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(e.message().contains("do not broadcast"), "{e}");
    let e = Call::op("nn.relu", &[&a, &b], &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    // Attributes by name, checked.
    let r = Call::op(
        "reshape",
        &[&a],
        &[("newshape", Array::from_values([3i64, 2]).unwrap().into())],
    )
    .unwrap();
    let ty: TensorType = r.checked_type().unwrap().into_object().downcast().unwrap();
    assert_eq!(ty.shape().as_slice(), &[3, 2]);
    assert!(r.attrs().is_some());
    let e = Call::op("reshape", &[&a], &[("no_such_attr", 1i64.into())]).unwrap_err();
    assert!(e.message().contains("no_such_attr"), "{e}");
}

#[test]
fn functions_modules_and_text() {
    let _leaks = common::leak_check();
    let (x, mul) = small_graph();
    let f = ir::Function::new(&[&x], &mul, None, None).unwrap();
    assert_eq!(f.params().unwrap().len(), 1);
    assert!(f.body().same_as(&mul));
    let m = Module::new().unwrap().with("main", &f).unwrap();
    assert!(m.function("main").unwrap().same_as(&f));
    assert_eq!(m.function("other").unwrap_err().kind(), ErrorKind::KeyError);
    let text = m.astext(true).unwrap();
    assert!(text.contains("def @main") && text.contains("nn.relu"), "{text}");
    let parsed = Module::parse(&text).unwrap();
    assert!(tvmnode::structural_equal(&Any::from(&parsed), &Any::from(&m), false).unwrap());
    let e = Module::parse("def @main(%x: Tensor[(2), float32]) { nn.relu(%x, }").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    assert!(e.message().contains("line 1"), "{e}");
    let from_expr = Module::from_expr(&mul).unwrap();
    assert_eq!(from_expr.function("main").unwrap().params().unwrap().len(), 1);
    assert_eq!(m.functions().len(), 1);
}

#[test]
fn visit_and_mutate() {
    let _leaks = common::leak_check();
    let (_x, mul) = small_graph();
    let mut kinds = Vec::new();
    ir::post_order_visit(&mul, |e| {
        kinds.push(e.type_key());
        Ok(())
    })
    .unwrap();
    assert_eq!(kinds.last(), Some(&"ir.Call"), "parents after children");
    assert!(kinds.contains(&"ir.Var") && kinds.contains(&"ir.Constant"));
    // An error stops the walk and comes back as is.
    let e = ir::post_order_visit(&mul, |_| Err(Error::new(ErrorKind::ValueError, "stop"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    // Identity rewrite gives back the very same graph.
    let same = ir::mutate(&mul, |_, rebuilt| Ok(rebuilt.clone())).unwrap();
    assert!(same.same_as(&mul));
    // Replace nn.relu with sigmoid.
    let out = ir::mutate(&mul, |_, rebuilt| {
        if let Some(call) = rebuilt.downcast_ref::<Call>() {
            if call.callee_op().map(|o| o.name()) == Some("nn.relu".into()) {
                return Ok(
                    Call::op("sigmoid", &call.args()?.iter().collect::<Vec<_>>(), &[])?
                        .into_object()
                        .downcast::<Expr>()
                        .unwrap(),
                );
            }
        }
        Ok(rebuilt.clone())
    })
    .unwrap();
    assert!(out.astext().unwrap().contains("sigmoid"));
    assert!(!out.astext().unwrap().contains("nn.relu"));
}

/// A function pass written in Rust: replace every `nn.relu` by `sigmoid`.
fn relu_to_sigmoid(runs: Arc<AtomicUsize>) -> Pass {
    Pass::function("RustReluToSigmoid", 1, &["InferType"], move |f, _module, _ctx| {
        runs.fetch_add(1, Ordering::SeqCst);
        let body = ir::mutate(&f.body(), |_, rebuilt| {
            if let Some(call) = rebuilt.downcast_ref::<Call>() {
                if call.callee_op().is_some_and(|o| o.name() == "nn.relu") {
                    let sig = Call::op("sigmoid", &call.args()?.iter().collect::<Vec<_>>(), &[])?;
                    return Ok((*sig).clone());
                }
            }
            Ok(rebuilt.clone())
        })?;
        ir::Function::new(
            &f.params()?.iter().collect::<Vec<_>>(),
            &body,
            f.ret_type().as_ref(),
            f.attrs().as_ref(),
        )
    })
    .unwrap()
}

#[test]
fn rust_pass_in_a_mixed_named_pipeline() {
    let _leaks = common::leak_check();
    let runs = Arc::new(AtomicUsize::new(0));
    let pass = relu_to_sigmoid(runs.clone());
    assert_eq!(pass.name().unwrap(), "RustReluToSigmoid");
    pass.register(false).unwrap();
    assert!(Pass::list().unwrap().iter().any(|n| n == "RustReluToSigmoid"));
    assert!(Pass::lookup("RustReluToSigmoid").unwrap().same_as(&pass));

    let (_x, mul) = small_graph();
    let m = Module::from_expr(&mul).unwrap();
    // C passes and the Rust pass, looked up by name by the C pipeline.
    let seq = Pass::sequential_named(
        &[
            "InferType",
            "SimplifyExpr",
            "RustReluToSigmoid",
            "FoldConstant",
            "FuseOps",
        ],
        "mixed",
    )
    .unwrap();
    let out = seq.run(&m, None).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let text = out.astext(false).unwrap();
    assert!(text.contains("sigmoid"), "{text}");
    assert!(!text.contains("nn.relu"), "{text}");
    assert!(!text.contains("multiply"), "SimplifyExpr removed x*1: {text}");
    assert!(text.contains("Primitive"), "FuseOps grouped the calls: {text}");
    // The input module is unchanged.
    assert!(m.astext(false).unwrap().contains("nn.relu"));

    // Opt level: a context at level 0 skips the level-1 Rust pass.
    let ctx = PassContext::new(0, None, &[], &[], &[]).unwrap();
    let skipped = Pass::sequential_named(&["RustReluToSigmoid"], "only_rust")
        .unwrap()
        .run(&m, Some(&ctx))
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(skipped.astext(false).unwrap().contains("nn.relu"));
    {
        let _guard = PassContext::new(3, None, &[], &["RustReluToSigmoid"], &[])
            .unwrap()
            .enter()
            .unwrap();
        assert_eq!(PassContext::current().unwrap().opt_level().unwrap(), 3);
        let out = Pass::sequential_named(&["RustReluToSigmoid"], "disabled")
            .unwrap()
            .run(&m, None)
            .unwrap();
        assert!(out.astext(false).unwrap().contains("nn.relu"));
    }
    assert_eq!(PassContext::current().unwrap().opt_level().unwrap(), 2);

    Pass::unregister("RustReluToSigmoid").unwrap();
    assert!(Pass::lookup("RustReluToSigmoid").is_err());
}

#[test]
fn rust_module_pass_errors_and_panics_name_the_pass() {
    let _leaks = common::leak_check();
    let (_x, mul) = small_graph();
    let m = Module::from_expr(&mul).unwrap();
    let failing = Pass::module("RustFailing", 0, &[], |_m, _ctx| -> Result<Module> {
        Err(Error::new(ErrorKind::ValueError, "not today"))
    })
    .unwrap();
    let e = failing.run(&m, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    assert!(e.message().contains("pass 'RustFailing' failed"), "{e}");
    assert_eq!(e.cause().unwrap().message(), "not today");

    let panicking = Pass::module("RustPanicking", 0, &[], |_m, _ctx| -> Result<Module> {
        panic!("pass exploded")
    })
    .unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let e = panicking.run(&m, None).unwrap_err();
    std::panic::set_hook(prev);
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    assert!(e.message().contains("RustPanicking"), "{e}");
    assert!(e.format().contains("pass exploded"), "{}", e.format());

    // A module pass that adds a function, in a sequential with C passes.
    let add_fn = Pass::module("RustAddCopy", 0, &[], |m: Module, _ctx| {
        let main = m.function("main")?;
        m.with("copy", &main)
    })
    .unwrap();
    let seq = Pass::sequential(&[&Pass::infer_type().unwrap(), &add_fn], "seq", 2).unwrap();
    let out = seq.run(&m, None).unwrap();
    assert_eq!(out.functions().len(), 2);
}

#[test]
fn operator_with_rust_inference() {
    let _leaks = common::leak_check();
    Op::register(
        "rusttest.double",
        1,
        tvmnode_sys::TN_OP_ELEMWISE,
        None,
        Some("x * 2"),
        |types: &[ir::Type], attrs| {
            assert!(attrs.is_none());
            let t: TensorType = types[0].clone().into_object().downcast().map_err(|_| {
                tvmnode::Error::new(tvmnode::ErrorKind::TypeError, "rusttest.double takes a tensor")
            })?;
            if t.dtype() != DataType::F32 {
                return Err(tvmnode::Error::new(
                    tvmnode::ErrorKind::TypeError,
                    format!("rusttest.double takes float32, got {}", t.dtype()),
                ));
            }
            Ok(types[0].clone())
        },
    )
    .unwrap();
    let x = tensor_var("x", &[2, 3]);
    let d = Call::op("rusttest.double", &[&x], &[]).unwrap();
    let ty: TensorType = d.checked_type().unwrap().into_object().downcast().unwrap();
    assert_eq!(ty.shape().as_slice(), &[2, 3]);
    // The closure's error is raised where the call is built.
    let q = Var::new("q", Some(&TensorType::new(&[2], DataType::I8).unwrap())).unwrap();
    let err = Call::op("rusttest.double", &[&q], &[]).unwrap_err();
    assert_eq!(err.kind_str(), "TypeError");
    assert!(
        err.message().contains("rusttest.double takes float32, got int8"),
        "{}",
        err.message()
    );
    // Printed and parsed by name; FuseOps groups it with relu.
    let relu = Call::op("nn.relu", &[&d], &[]).unwrap();
    let f = ir::Function::new(&[&x], &relu, None, None).unwrap();
    let m = Module::from_expr(&f).unwrap();
    let text = m.astext(false).unwrap();
    assert!(text.contains("rusttest.double(%x)"), "{text}");
    let parsed = Module::parse(&text).unwrap();
    assert!(tvmnode::structural_equal(&Any::from(&parsed), &Any::from(&m), false).unwrap());
    let fused = Pass::fuse_ops().unwrap().run(&m, None).unwrap();
    assert_eq!(fused.astext(false).unwrap().matches("Primitive=1").count(), 1);
    // Taken names and unknown attrs types are refused; the name stays ours.
    let same = |t: &[ir::Type], _: Option<&tvmnode::Object>| Ok(t[0].clone());
    let err = Op::register("rusttest.double", 1, tvmnode_sys::TN_OP_OPAQUE, None, None, same).unwrap_err();
    assert_eq!(err.kind_str(), "ValueError");
    let err = Op::register(
        "rusttest.other",
        1,
        tvmnode_sys::TN_OP_OPAQUE,
        Some("no.Such"),
        None,
        same,
    )
    .unwrap_err();
    assert_eq!(err.kind_str(), "TypeError");
    drop((d, relu, f, m, parsed, fused));
    Op::unregister("rusttest.double").unwrap();
    assert_eq!(
        Op::unregister("rusttest.double").unwrap_err().kind_str(),
        "KeyError"
    );
    assert!(Op::lookup("rusttest.double").is_err());
}

#[test]
fn builtin_passes_by_name() {
    let _leaks = common::leak_check();
    let passes = [
        (Pass::infer_type().unwrap(), "InferType"),
        (Pass::simplify_expr().unwrap(), "SimplifyExpr"),
        (Pass::fold_constant().unwrap(), "FoldConstant"),
        (Pass::dead_code_elimination().unwrap(), "DeadCodeElimination"),
        (Pass::fuse_ops().unwrap(), "FuseOps"),
        (Pass::convert_kernel_layout().unwrap(), "ConvertKernelLayout"),
    ];
    for (p, name) in &passes {
        assert_eq!(p.name().unwrap(), *name);
    }
}

#[test]
fn operator_inference_panic_becomes_an_error() {
    let _leaks = common::leak_check();
    Op::register(
        "rusttest.panics",
        1,
        tvmnode_sys::TN_OP_OPAQUE,
        None,
        None,
        |_, _| panic!("inference blew up"),
    )
    .unwrap();
    let x = tensor_var("x", &[1]);
    let err = Call::op("rusttest.panics", &[&x], &[]).unwrap_err();
    assert!(err.message().contains("inference blew up"), "{}", err.message());
    Op::unregister("rusttest.panics").unwrap();
}

#[test]
fn operator_attributes_are_shared_with_c() {
    let _leaks = common::leak_check();
    let conv = Op::lookup("nn.conv2d").unwrap();
    assert_eq!(conv.input_names(), vec!["data", "weight"]);
    assert_eq!(conv.pattern(), tvmnode_sys::TN_OP_OUT_FUSABLE as i64);
    assert!(conv.doc().unwrap().contains("convolution"));
    assert!(conv.attr("no_such_attribute").unwrap().is_none());

    let same = |t: &[ir::Type], _: Option<&tvmnode::Object>| Ok(t[0].clone());
    let op = Op::register("rusttest.attrs", 2, tvmnode_sys::TN_OP_ELEMWISE, None, None, same).unwrap();
    assert!(op.input_names().is_empty());
    let names: tvmnode::Array = ["base", "overlay"].into_iter().collect();
    op.set_attr("input_names", names, false).unwrap();
    assert_eq!(op.input_names(), vec!["base", "overlay"]);
    op.set_attr("layout", "NHWC", false).unwrap();
    let err = op.set_attr("layout", "NCHW", false).unwrap_err();
    assert_eq!(err.kind_str(), "ValueError");
    op.set_attr("layout", "NCHW", true).unwrap();
    let got: String = tvmnode::FromAny::from_any(&op.attr("layout").unwrap().unwrap()).unwrap();
    assert_eq!(got, "NCHW");
    // The attributes the library reads are checked.
    let err = op.set_attr("pattern", "opaque", true).unwrap_err();
    assert_eq!(err.kind_str(), "TypeError");
    op.set_attr("pattern", tvmnode_sys::TN_OP_OPAQUE as i64, true)
        .unwrap();
    assert_eq!(op.pattern(), tvmnode_sys::TN_OP_OPAQUE as i64);
    // What Rust set, C reads through the function registry.
    let get = tvmnode::Function::get_global("ir.OpGetAttr").unwrap();
    let got: String = get.call(("rusttest.attrs", "layout")).unwrap();
    assert_eq!(got, "NCHW");
    drop((op, get));
    Op::unregister("rusttest.attrs").unwrap();
}

#[test]
fn typed_ir_fields_are_checked_from_rust() {
    let _leaks = common::leak_check();
    let x = tensor_var("x", &[4]);
    let t = tvmnode::node::type_index_of("ir.Function").unwrap();
    // ir.Function.params is declared tn.Array<ir.Var>: an int is refused
    let ints = Array::new(&[Any::from(3i64)]).unwrap();
    let e = tvmnode::node::node_new(
        t,
        &[
            ("params", Any::from(ints.as_object())),
            ("body", Any::from(x.as_object())),
        ],
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(e.message().contains("tn.Array<ir.Var>: element 0 is int"), "{e}");
    let vars = Array::new(&[Any::from(x.as_object())]).unwrap();
    let f = tvmnode::node::node_new(
        t,
        &[
            ("params", Any::from(vars.as_object())),
            ("body", Any::from(x.as_object())),
        ],
    );
    assert!(f.is_ok());
}
