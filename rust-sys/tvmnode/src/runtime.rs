//! Running models: the host executor, which runs a function of an IR module
//! on tensors through the crt kernels, and [`Module`], a model compiled
//! ahead of time (see [`module`]).
//!
//! [`Executor`] is a thin handle on the C executor (a `kernel.Program`),
//! reached, as from Python and Go, only through the registered functions
//! `runtime.Executor`, `runtime.ExecutorRun`, `runtime.ExecutorInputs`,
//! `runtime.ExecutorOutputs`, `runtime.ExecutorStats` and
//! `runtime.ExecutorProfile`. Everything that decides something lives in C:
//! typing the module, lowering it once, checking the inputs (a wrong count,
//! shape or dtype is a `TypeError` naming the input and both types),
//! running the kernels. The Rust side only converts: slices to tensors and
//! back ([`Executor::run_slices`]), the description maps to [`TensorInfo`],
//! the statistics map to [`Stats`].
//!
//! A [`Module`] runs generated C with no IR, no lowering and no packed
//! calls on the way; it is `Send` but not `Sync`, and lends its outputs
//! without a copy (see [`module`]).
//!
//! # Threads
//!
//! An [`Executor`] is `Send` and `Sync`: share one between threads with an
//! `Arc`. The C program runs one call at a time (a second concurrent run is
//! a `RuntimeError` there, not a race). So the handle takes its own lock
//! around every call into the program: runs from several Rust threads take
//! turns instead of failing, and the statistics read after a run count it.
//! For runs in parallel, make one executor per thread (each lowers the
//! module again and has its own memory).

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};
use crate::ir::Module as IrModule;
use crate::{Any, Array, DataType, Element, Function, IntoAny, List, Map, Object, Shape, Tensor};

pub mod module;
pub use module::{IoElement, IoInfo, IoKey, Module};

/// What one input or output of an [`Executor`] is: its name (the
/// parameter's name for an input, `output<i>` for an output), shape and
/// element type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorInfo {
    /// The parameter's name (inputs), or `output0`, `output1`, ... (outputs).
    pub name: std::string::String,
    /// The dimensions.
    pub shape: Vec<i64>,
    /// The element type.
    pub dtype: DataType,
}

impl TensorInfo {
    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    fn from_map(m: &Map) -> Result<TensorInfo> {
        Ok(TensorInfo {
            name: m.get_as("name")?,
            shape: m.get_as::<Shape>("shape")?.as_slice().to_vec(),
            dtype: m.get_as::<std::string::String>("dtype")?.parse()?,
        })
    }
}

/// The executor's statistics (`runtime.ExecutorStats`). The first five
/// describe the program and do not change; the next three count runs while
/// profiling is on ([`Executor::set_profiling`]); the last two say how runs
/// are cut over threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Kernel calls per run.
    pub steps: i64,
    /// Bytes of the arena that holds the intermediates and kernel scratch
    /// (the plan's size: the generated code's workspace pool).
    pub arena_bytes: i64,
    /// The lower bound of that size: the largest total of intermediates
    /// alive at one step.
    pub arena_lower_bound: i64,
    /// The most scratch bytes one kernel call takes (inside the arena).
    pub scratch_bytes: i64,
    /// Multiply-accumulates per run (convolutions and dense layers).
    pub macs: i64,
    /// Runs timed since profiling was switched on.
    pub runs: i64,
    /// Their total time, in nanoseconds.
    pub run_ns: i64,
    /// Of that, the time spent inside kernel calls; the rest is the
    /// executor's own cost (input checks, output copies, dispatch).
    pub kernel_ns: i64,
    /// The threads a run takes (1: off; [`Executor::set_threads`]).
    pub threads: i64,
    /// The steps a run cuts over those threads.
    pub split_steps: i64,
}

/// Runs one function of an IR module (`main` unless told otherwise) on
/// tensors, through the crt kernels.
///
/// Making one types the module (InferType) if it is not typed yet and
/// lowers the function once: a module that does not type-check is a
/// `TypeError`, an operator with no kernel for its types a
/// `NotImplementedError` naming it. The same module before and after the
/// pass pipeline (FuseOps included) gives the same outputs. Each run returns
/// new tensors. See the [module docs](self#threads) for threads.
///
/// ```
/// use tvmnode::ir::Module;
/// use tvmnode::runtime::Executor;
///
/// # fn main() -> tvmnode::Result<()> {
/// let module = Module::parse(
///     "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(add(%x, %x)) }",
/// )?;
/// let exec = Executor::new(&module)?;
/// assert_eq!(exec.inputs()[0].name, "x");
/// assert_eq!(exec.inputs()[0].shape, [2, 3]);
///
/// let x = [-1.0f32, 0.5, 2.0, -3.0, 0.0, 1.5];
/// let y = exec.run_slices(&[&x])?;
/// assert_eq!(y[0], [0.0, 1.0, 4.0, 0.0, 0.0, 3.0]);
///
/// // A wrong input is an error naming it.
/// let e = exec.run_slices(&[&[1.0f32, 2.0]]).unwrap_err();
/// assert!(e.message().contains("input 0 ('x')"), "{e}");
/// # Ok(())
/// # }
/// ```
pub struct Executor {
    program: Object,
    run: Function,
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
    // Serializes the calls into the program (see the module docs).
    turn: Mutex<()>,
}

impl Executor {
    /// An executor for the module's function `main`.
    #[track_caller]
    pub fn new(module: &IrModule) -> Result<Executor> {
        Executor::make(module.into_any(), None)
    }

    /// An executor for the module's function `entry` (`KeyError` if there
    /// is none).
    #[track_caller]
    pub fn with_entry(module: &IrModule, entry: &str) -> Result<Executor> {
        Executor::make(module.into_any(), Some(entry))
    }

    #[track_caller]
    fn make(module: Any, entry: Option<&str>) -> Result<Executor> {
        let new = Function::get_global("runtime.Executor")?;
        let program: Object = match entry {
            None => new.call((module,))?,
            Some(entry) => new.call((module, entry))?,
        };
        let inputs = describe("runtime.ExecutorInputs", &program)?;
        let outputs = describe("runtime.ExecutorOutputs", &program)?;
        Ok(Executor {
            program,
            run: Function::get_global("runtime.ExecutorRun")?,
            inputs,
            outputs,
            turn: Mutex::new(()),
        })
    }

    /// The inputs, in the function's parameter order.
    pub fn inputs(&self) -> &[TensorInfo] {
        &self.inputs
    }

    /// The outputs, in order (a tuple result flattened).
    pub fn outputs(&self) -> &[TensorInfo] {
        &self.outputs
    }

    /// Run on `inputs` (compact CPU tensors of the input types, in order;
    /// anything else is a `TypeError` or `ValueError` naming the input).
    /// Returns one new tensor per output.
    #[track_caller]
    pub fn run(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let mut args = Vec::with_capacity(inputs.len() + 1);
        args.push((&self.program).into_any());
        args.extend(inputs.iter().map(|t| t.into_any()));
        let out = {
            let _turn = self.lock();
            self.run.call_packed(&args)?
        };
        out.into_object_of::<Array>()?.to_vec()
    }

    /// Run on slices of one element type: each slice is copied into a
    /// tensor of its input's shape, and each output is read back as a
    /// `Vec<T>` (row-major).
    ///
    /// A slice whose length is not its input's element count goes in as a
    /// one-dimensional tensor, so that the executor's own check names the
    /// input and both types; so does a slice of another element type. An
    /// output of another element type is a `TypeError` naming the output.
    /// For inputs or outputs of mixed element types use [`Executor::run`]
    /// with [`Tensor::from_slice`] and [`Tensor::as_slice`].
    #[track_caller]
    pub fn run_slices<T: Element>(&self, inputs: &[&[T]]) -> Result<Vec<Vec<T>>> {
        let tensors = inputs
            .iter()
            .enumerate()
            .map(|(i, data)| {
                let flat = [data.len() as i64];
                let shape = match self.inputs.get(i) {
                    Some(info) if info.numel() == data.len() as i64 => info.shape.as_slice(),
                    _ => &flat[..],
                };
                Tensor::from_slice(shape, data)
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = self.run(&tensors.iter().collect::<Vec<_>>())?;
        outputs
            .iter()
            .zip(&self.outputs)
            .enumerate()
            .map(|(i, (t, info))| {
                t.to_vec::<T>().map_err(|e| {
                    Error::new(e.kind(), format!("output {i} ('{}'): {}", info.name, e.message()))
                })
            })
            .collect()
    }

    /// The program's statistics.
    #[track_caller]
    pub fn stats(&self) -> Result<Stats> {
        let f = Function::get_global("runtime.ExecutorStats")?;
        let m: Map = {
            let _turn = self.lock();
            f.call((&self.program,))?
        };
        Ok(Stats {
            steps: m.get_as("steps")?,
            arena_bytes: m.get_as("arena_bytes")?,
            arena_lower_bound: m.get_as("arena_lower_bound")?,
            scratch_bytes: m.get_as("scratch_bytes")?,
            macs: m.get_as("macs")?,
            runs: m.get_as("runs")?,
            run_ns: m.get_as("run_ns")?,
            kernel_ns: m.get_as("kernel_ns")?,
            threads: m.get_as("threads")?,
            split_steps: m.get_as("split_steps")?,
        })
    }

    /// Time runs and kernel calls from now on (`true`) or stop (`false`);
    /// either resets the counters [`Executor::stats`] reports. Off by
    /// default: timing costs two clock reads per kernel call.
    #[track_caller]
    pub fn set_profiling(&self, on: bool) -> Result<()> {
        let f = Function::get_global("runtime.ExecutorProfile")?;
        let _turn = self.lock();
        f.call((&self.program, on))
    }

    /// Run the largest convolutions and dense layers over `n` threads from
    /// now on (bands of output rows, blocks of output features, over a pool
    /// made once); 1, the default, is off. int8
    /// outputs are the same bytes for any `n`; `n` outside 1..=64 is a
    /// `ValueError` naming the argument.
    #[track_caller]
    pub fn set_threads(&self, n: i64) -> Result<()> {
        let f = Function::get_global("runtime.ExecutorThreads")?;
        let _turn = self.lock();
        f.call::<_, i64>((&self.program, n)).map(|_| ())
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The lock guards no Rust data, so a panic while holding it leaves
        // nothing inconsistent.
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

/// The inputs or outputs of a program, through `runtime.ExecutorInputs` or
/// `runtime.ExecutorOutputs` (`who`).
#[track_caller]
fn describe(who: &str, program: &Object) -> Result<Vec<TensorInfo>> {
    let list: List = Function::get_global(who)?.call((program,))?;
    list.iter_as::<Map>().map(|m| TensorInfo::from_map(&m?)).collect()
}
