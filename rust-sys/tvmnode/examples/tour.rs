//! The common path through the binding: call C, register a Rust function
//! that C calls, declare a node type, and run a pipeline that mixes the
//! built-in C passes with a pass written in Rust.
//!
//! Run from `rust-sys/` with `TVMNODE_BUILD_DIR=../build cargo run --example
//! tour` (or with libtvmnode installed where pkg-config finds it).

use tvmnode::ir::{self, Call, Constant, Module, Pass, TensorType, Var};
use tvmnode::prelude::*;
use tvmnode::{register_global, Array, DataType, Function, Tensor};

tvmnode::node! {
    /// A measurement with a unit, declared in Rust and visible to C.
    pub struct Reading: "tour.Reading" {
        /// The value.
        value: f64,
        /// Its unit.
        unit: tvmnode::String,
    }
}

fn main() -> Result<()> {
    println!("tvmnode {}", tvmnode::version());

    // 1. A C function from the global registry, called with Rust values.
    let add = Function::get_global("testing.add_i64")?;
    let sum: i64 = add.call((40, 2))?;
    println!("testing.add_i64(40, 2) = {sum}");

    // 2. A Rust closure registered by name; C calls it (testing.call is a C
    //    function that calls its first argument).
    register_global("tour.hypot", |a: f64, b: f64| a.hypot(b))?;
    let hypot = Function::get_global("tour.hypot")?;
    let call = Function::get_global("testing.call")?;
    let h: f64 = call.call((&hypot, 3.0, 4.0))?;
    println!("C called tour.hypot(3, 4) = {h}");

    // 3. Errors keep their kind across both crossings.
    match call.call::<_, f64>((&hypot, "three", 4.0)) {
        Err(e) => println!("as expected: {e}"),
        Ok(v) => println!("unexpected success: {v}"),
    }

    // 4. A node type declared in Rust, saved as JSON by C.
    let r = Reading::new(21.5, tvmnode::String::new("celsius")?)?;
    println!("{r}  ->  {}", tvmnode::to_json(&Any::from(&r), 0)?);

    // 5. IR: build dense(x, w) + b, relu, then run C passes and a Rust pass.
    let ty = TensorType::new(&[1, 4], DataType::F32)?;
    let x = Var::new("x", Some(&ty))?;
    let w = Constant::new(&Tensor::from_slice(&[2, 4], &[0.5f32; 8])?)?;
    let b = Constant::new(&Tensor::from_slice(&[2], &[1.0f32, -1.0])?)?;
    let dense = Call::op("nn.dense", &[&x, &w], &[("units", 2.into())])?;
    let biased = Call::op("add", &[&dense, &b], &[])?;
    let relu = Call::op("nn.relu", &[&biased], &[])?;
    let module = Module::from_expr(&relu)?;

    let count_calls = Pass::module("TourCountCalls", 0, &[], |m: Module, _ctx| {
        let mut n = 0;
        let main = m.function("main")?;
        ir::post_order_visit(&main, |e| {
            n += e.is::<Call>() as usize;
            Ok(())
        })?;
        println!("TourCountCalls: {n} calls in main");
        Ok(m)
    })?;
    count_calls.register(true)?;
    let pipeline = Pass::sequential_named(&["InferType", "TourCountCalls", "FuseOps"], "tour")?;
    let out = pipeline.run(&module, None)?;
    println!("{}", out.astext(false)?);

    Pass::unregister("TourCountCalls")?;
    Function::remove_global("tour.hypot")?;
    let names: Array = Function::get_global("tn.list_global_func_names")?.call(())?;
    println!("{} global functions registered", names.len());
    Ok(())
}
