//! Compiled models as runtime Modules (`tvmnode/module.h`).
//!
//! A [`Module`] is one instance of a model compiled ahead of time: its
//! descriptor, the pools it runs in and its input and output buffers, all
//! owned by the C object (`tn.Module`). It comes from a shared library built
//! from a Model Library Format archive ([`Module::load`]), from the system
//! library of archives linked into the program ([`Module::system`]), or from
//! a descriptor ([`Module::from_model`]). Running needs no compiler: the
//! generated C runs.
//!
//! The C side decides everything it can: loading, a missing or foreign
//! library (`OSError`), an unknown model or input name (`KeyError`), an
//! index out of range (`IndexError`), a wrong size or shape (`ValueError`),
//! a tensor of the wrong dtype (`TypeError`), a failed run (`RuntimeError`
//! with the crt status), each naming the model and the input. What C cannot
//! see, the element type of a Rust slice, is checked here against the
//! input's or output's dtype, as a `TypeError` in the same words.
//!
//! # Borrowed outputs
//!
//! [`Module::output`] is a slice of the Module's own output buffer: no copy,
//! no allocation, no object made (the C side hands out the buffer's address,
//! `tn_module_output_data`). The next run overwrites that buffer, so the
//! slice borrows the Module, and [`Module::run`] and [`Module::run_with`]
//! (like every call that changes the Module) take `&mut self`: while an
//! output slice is alive the borrow checker refuses to run again. Copy what
//! must outlive the next run ([`Module::copy_output`], `to_vec()`,
//! [`Module::output_tensor`]).
//!
//! ```compile_fail
//! # fn demo(module: &mut tvmnode::runtime::Module) -> tvmnode::Result<()> {
//! module.run()?;
//! let first = module.output::<i8>(0)?;
//! module.run()?; // error[E0502]: `first` still borrows the Module
//! assert_eq!(first.len(), 640);
//! # Ok(())
//! # }
//! ```
//!
//! Nor can an output be fed back as an input of the next run in place:
//!
//! ```compile_fail
//! # fn demo(module: &mut tvmnode::runtime::Module) -> tvmnode::Result<()> {
//! module.run()?;
//! let y = module.output::<i8>(0)?;
//! module.run_with(&[y])?; // error[E0502]: `y` borrows the Module
//! # Ok(())
//! # }
//! ```
//!
//! # Threads
//!
//! A Module is `Send` but not `Sync`: it can move to another thread, and is
//! used by one thread at a time, as the C object requires (a second thread
//! entering it while a call is under way gets a `RuntimeError` there, which
//! safe Rust cannot even reach). For inference in parallel, load one Module
//! per thread: each has its own memory, and the library is shared. One
//! Module can also cut its own large layers over a pool of threads
//! ([`Module::set_threads`]); Modules with threads may run at once, each
//! on its own pool.
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<tvmnode::runtime::Module>();
//! ```

use std::cell::Cell;
use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::path::Path;
use std::time::Duration;

use tvmnode_sys as sys;

use crate::error::{check_typed, cstring, take_raised, Error, ErrorKind, Result};
use crate::{DataType, Device, Element, Map, Object, Tensor};

/// One input or output of a compiled model, as its descriptor gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct IoInfo {
    /// Its name in the model.
    pub name: std::string::String,
    /// The dimensions.
    pub shape: Vec<i64>,
    /// The element type.
    pub dtype: DataType,
    /// Size in bytes.
    pub nbytes: usize,
    /// Quantization scale (per tensor); 0 when not quantized.
    pub scale: f32,
    /// Quantization zero point.
    pub zero_point: i32,
}

impl IoInfo {
    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> usize {
        self.shape.iter().product::<i64>().max(0) as usize
    }

    /// Whether the tensor is quantized (a non-zero scale).
    pub fn is_quantized(&self) -> bool {
        self.scale != 0.0
    }

    /// # Safety
    /// `t` points to a valid descriptor entry.
    unsafe fn from_raw(t: &sys::TnCrtTensorInfo) -> IoInfo {
        let shape = if t.ndim <= 0 || t.shape.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(t.shape, t.ndim as usize)
                .iter()
                .map(|&d| i64::from(d))
                .collect()
        };
        IoInfo {
            name: c_str_owned(t.name),
            shape,
            dtype: crt_dtype(t.dtype),
            nbytes: t.nbytes as usize,
            scale: t.scale,
            zero_point: t.zero_point,
        }
    }
}

/// The DataType of a `TN_CRT_*` element type (`void` for one this crate
/// does not know; the C side refuses such a descriptor anyway).
fn crt_dtype(code: sys::TnCrtDType) -> DataType {
    match code {
        sys::TN_CRT_F32 => DataType::F32,
        sys::TN_CRT_F64 => DataType::F64,
        sys::TN_CRT_I8 => DataType::I8,
        sys::TN_CRT_I16 => <i16 as Element>::DTYPE,
        sys::TN_CRT_I32 => DataType::I32,
        sys::TN_CRT_I64 => DataType::I64,
        sys::TN_CRT_U8 => DataType::U8,
        sys::TN_CRT_BOOL => DataType::BOOL,
        _ => DataType::VOID,
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_str_owned(p: *const std::os::raw::c_char) -> std::string::String {
    if p.is_null() {
        std::string::String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type of a compiled model's inputs and outputs: `i8`, `u8`,
/// `i16`, `i32`, `i64`, `f32` and `f64` (what the crt kernels compute in).
/// Sealed: each is a plain number for which every bit pattern is a value,
/// which is what lets [`Module::output`] hand out the buffer as a slice.
pub trait IoElement: Element + sealed::Sealed {}

macro_rules! io_elements {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl IoElement for $t {}
    )*};
}
io_elements!(i8, u8, i16, i32, i64, f32, f64);

/// Names an input or output of a [`Module`]: its index (`usize`, or an
/// `i32` so that a literal `0` works) or its name (`&str`, `&String`).
pub trait IoKey: sealed::Sealed {
    /// The index this key names among `module`'s inputs (`output` false)
    /// or outputs: an `IndexError` or `KeyError` when there is none.
    #[doc(hidden)]
    fn resolve(&self, module: &Module, output: bool) -> Result<usize>;
}

impl sealed::Sealed for usize {}
impl IoKey for usize {
    fn resolve(&self, module: &Module, output: bool) -> Result<usize> {
        let n = if output { &module.outputs } else { &module.inputs }.len();
        if *self < n {
            return Ok(*self);
        }
        Err(index_error(
            module,
            output,
            i32::try_from(*self).unwrap_or(i32::MAX),
        ))
    }
}

impl IoKey for i32 {
    fn resolve(&self, module: &Module, output: bool) -> Result<usize> {
        match usize::try_from(*self) {
            Ok(i) => i.resolve(module, output),
            Err(_) => Err(index_error(module, output, *self)),
        }
    }
}

/// The C side's IndexError for index `i`, in its words.
#[cold]
fn index_error(module: &Module, output: bool, i: i32) -> Error {
    // SAFETY: a live Module; `i` is out of range, so the call raises.
    let info = unsafe {
        if output {
            sys::tn_module_output_info(module.obj.as_ptr(), i)
        } else {
            sys::tn_module_input_info(module.obj.as_ptr(), i)
        }
    };
    debug_assert!(info.is_null());
    take_raised()
}

impl sealed::Sealed for &str {}
impl IoKey for &str {
    fn resolve(&self, module: &Module, output: bool) -> Result<usize> {
        let list = if output { &module.outputs } else { &module.inputs };
        if let Some(i) = list.iter().position(|t| t.name == *self) {
            return Ok(i);
        }
        if output {
            // module.h has no look-up of outputs by name: the same words.
            let names: Vec<_> = list.iter().map(|t| format!("'{}'", t.name)).collect();
            return Err(Error::new(
                ErrorKind::KeyError,
                format!(
                    "model '{}' has no output '{self}' (its outputs: {})",
                    module.name,
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        }
        // The C side's KeyError, which names the model's inputs.
        let c = cstring(self)?;
        // SAFETY: a live Module and a NUL-terminated name.
        let i = unsafe { sys::tn_module_input_index(module.obj.as_ptr(), c.as_ptr()) };
        usize::try_from(i).map_err(|_| take_raised())
    }
}

impl sealed::Sealed for &std::string::String {}
impl IoKey for &std::string::String {
    fn resolve(&self, module: &Module, output: bool) -> Result<usize> {
        self.as_str().resolve(module, output)
    }
}

/// A compiled model, ready to run: set the inputs, [`run`](Module::run),
/// read the outputs.
///
/// Dropping the Module releases it (its memory, and the library once
/// nothing else of it is alive). See the [module docs](self) for borrowed
/// outputs and threads.
///
/// ```no_run
/// use tvmnode::runtime::Module;
///
/// # fn main() -> tvmnode::Result<()> {
/// // Built by `tvmnode compile ad01_int8.tflite --name ad -o out/ad --shared out/ad.so`.
/// let mut ad = Module::load("out/ad.so")?;
/// let input = &ad.inputs()[0];
/// println!("{} {:?} {} (scale {}, zero point {})",
///          input.name, input.shape, input.dtype, input.scale, input.zero_point);
///
/// let x = vec![0i8; input.numel()];
/// ad.set_input("input_1", &x)?;
/// ad.run()?;
/// let y: &[i8] = ad.output(0)?; // borrowed from the Module, no copy
/// println!("{:?}", &y[..4]);
///
/// // Errors say what is wrong, with a kind to match on.
/// use tvmnode::ErrorKind;
/// assert_eq!(ad.set_input("nothing", &x).unwrap_err().kind(), ErrorKind::KeyError);
/// assert_eq!(ad.set_input(0, &x[..3]).unwrap_err().kind(), ErrorKind::ValueError);
/// assert_eq!(ad.set_input(0, &[0.5f32; 640]).unwrap_err().kind(), ErrorKind::TypeError);
/// # Ok(())
/// # }
/// ```
pub struct Module {
    obj: Object,
    name: std::string::String,
    inputs: Vec<IoInfo>,
    outputs: Vec<IoInfo>,
    // Send, not Sync: one thread at a time (see the module docs).
    _one_thread: PhantomData<Cell<()>>,
}

impl Module {
    /// The model of the shared library at `path` (built from a Model
    /// Library Format archive), which must hold exactly one (`KeyError`
    /// naming them otherwise). A library that cannot be opened, or that
    /// holds no model, is an `OSError`
    /// ([`ErrorKind::Other`], [`Error::kind_str`] `"OSError"`). The library
    /// stays loaded while the Module lives. As with `dlopen`, a path with
    /// no `/` is looked for on the library search path.
    #[track_caller]
    pub fn load(path: impl AsRef<Path>) -> Result<Module> {
        let path = path_cstring(path.as_ref())?;
        // SAFETY: a NUL-terminated path; NULL name.
        let p = unsafe { sys::tn_module_load(path.as_ptr(), std::ptr::null()) };
        Module::wrap(p, "Module::load")
    }

    /// The model called `model` in the shared library at `path`.
    #[track_caller]
    pub fn load_named(path: impl AsRef<Path>, model: &str) -> Result<Module> {
        let path = path_cstring(path.as_ref())?;
        let model = cstring(model)?;
        // SAFETY: NUL-terminated strings.
        let p = unsafe { sys::tn_module_load(path.as_ptr(), model.as_ptr()) };
        Module::wrap(p, "Module::load_named")
    }

    /// The model called `model` in the system library: the archives built
    /// with `-DTVMGEN_SYSTEM_LIB` that are linked into (or loaded by) this
    /// program register themselves at start-up. `KeyError` naming the
    /// models there when there is none.
    #[track_caller]
    pub fn system(model: &str) -> Result<Module> {
        let model = cstring(model)?;
        // SAFETY: a NUL-terminated name.
        let p = unsafe { sys::tn_module_system(model.as_ptr()) };
        Module::wrap(p, "Module::system")
    }

    /// A Module over a descriptor linked into the program (a generated
    /// `tvmgen_<name>_model`). The C side checks its magic, ABI version and
    /// sizes (`ValueError`).
    ///
    /// # Safety
    /// `model` is a descriptor as the generator writes it: every pointer in
    /// it (names, shapes, pools, the entry point) valid for the life of the
    /// program.
    #[track_caller]
    pub unsafe fn from_model(model: &'static sys::TnCrtModel) -> Result<Module> {
        let p = sys::tn_module_from_model(model);
        Module::wrap(p, "Module::from_model")
    }

    #[track_caller]
    fn wrap(p: *mut sys::TnObject, who: &str) -> Result<Module> {
        if p.is_null() {
            return Err(failed(who, Location::caller()));
        }
        // SAFETY: (transfer full) from the C constructor.
        let obj = unsafe { Object::from_raw(p) }.expect("non-NULL");
        let raw = obj.as_ptr();
        // SAFETY: a live Module: its descriptor lives as long as it does,
        // and every index below is in range.
        unsafe {
            let model = &*sys::tn_module_model(raw);
            let io = |info: *const sys::TnCrtTensorInfo, n: i32| -> Vec<IoInfo> {
                (0..n.max(0) as usize)
                    .map(|i| IoInfo::from_raw(&*info.add(i)))
                    .collect()
            };
            Ok(Module {
                name: c_str_owned(model.name),
                inputs: io(model.inputs, model.num_inputs),
                outputs: io(model.outputs, model.num_outputs),
                obj,
                _one_thread: PhantomData,
            })
        }
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The inputs, in the model's order.
    pub fn inputs(&self) -> &[IoInfo] {
        &self.inputs
    }

    /// The outputs, in the model's order.
    pub fn outputs(&self) -> &[IoInfo] {
        &self.outputs
    }

    /// The index of an input (by name: `KeyError` naming the inputs when
    /// there is none; by index: `IndexError` when out of range).
    #[track_caller]
    pub fn input_index(&self, key: impl IoKey) -> Result<usize> {
        let caller = Location::caller();
        key.resolve(self, false)
            .map_err(|e| at_loc(e, "Module::input_index", caller))
    }

    /// The index of an output, like [`Module::input_index`].
    #[track_caller]
    pub fn output_index(&self, key: impl IoKey) -> Result<usize> {
        let caller = Location::caller();
        key.resolve(self, true)
            .map_err(|e| at_loc(e, "Module::output_index", caller))
    }

    /// Multiply-accumulates per inference.
    pub fn macs(&self) -> i64 {
        self.model().macs
    }

    /// The bytes of a streaming model's state pool (LSTM, SVDF, resource
    /// variables), which the Module owns and keeps across runs; 0 for a
    /// model whose runs are independent of each other.
    pub fn state_bytes(&self) -> usize {
        let model = self.model();
        if model.magic != sys::TN_CRT_MODEL_STATE_MAGIC {
            return 0;
        }
        // SAFETY: a descriptor with the state magic is the `base` of a
        // TnCrtStatefulModel (the C side checked it when the Module was made).
        let stateful = unsafe { &*(model as *const sys::TnCrtModel).cast::<sys::TnCrtStatefulModel>() };
        stateful.state_pool_size as usize
    }

    /// Give a streaming model's states their initial values again, as when
    /// the Module was made; every run advances them. Nothing to do for a
    /// model without state ([`Module::state_bytes`] is 0).
    #[track_caller]
    pub fn reset(&mut self) -> Result<()> {
        // SAFETY: a live Module.
        let rc = unsafe { sys::tn_module_reset(self.obj.as_ptr()) };
        done(rc, "Module::reset", Location::caller())
    }

    /// The model's descriptor.
    pub fn model(&self) -> &sys::TnCrtModel {
        // SAFETY: a live Module's descriptor lives as long as it does.
        unsafe { &*sys::tn_module_model(self.obj.as_ptr()) }
    }

    /// The description the C side gives every language (`"name"`,
    /// `"version"`, `"inputs"` and `"outputs"` as lists of maps with
    /// `"name"`, `"shape"`, `"dtype"`, `"scale"`, `"zero_point"`,
    /// `"devices"`, `"macs"`, `"workspace_bytes"`, `"constant_bytes"`,
    /// `"workspace_pools"`, a list of maps with `"name"`, `"size"`,
    /// `"alignment"`, and `"state_bytes"`).
    #[track_caller]
    pub fn describe(&self) -> Result<Map> {
        let caller = Location::caller();
        // SAFETY: a live Module; (transfer full).
        check_typed::<Map>(unsafe { sys::tn_module_describe(self.obj.as_ptr()) })
            .map_err(|e| at_loc(e, "Module::describe", caller))
    }

    /// Set an input from a slice of its element type, copied into the
    /// Module. `KeyError`/`IndexError` for an unknown input, `TypeError`
    /// when `T` is not the input's dtype, `ValueError` when the length is
    /// not the input's number of elements.
    #[track_caller]
    pub fn set_input<T: IoElement>(&mut self, key: impl IoKey, data: &[T]) -> Result<()> {
        let caller = Location::caller();
        let i = self.typed_index::<T>(&key, false, "Module::set_input", caller)?;
        // SAFETY: a live Module; `data` is valid for its size in bytes.
        let rc = unsafe {
            sys::tn_module_set_input_bytes(
                self.obj.as_ptr(),
                i as i32,
                data.as_ptr().cast::<c_void>(),
                std::mem::size_of_val(data),
            )
        };
        done(rc, "Module::set_input", caller)
    }

    /// Set an input from a tensor (CPU, compact, the input's dtype and
    /// shape: `TypeError`/`ValueError` otherwise). When its data is aligned
    /// for the element type the Module reads the tensor in place at each
    /// run and keeps it alive until the input is set again; otherwise it is
    /// copied once.
    #[track_caller]
    pub fn set_input_tensor(&mut self, key: impl IoKey, tensor: &Tensor) -> Result<()> {
        let caller = Location::caller();
        let i = key
            .resolve(self, false)
            .map_err(|e| at_loc(e, "Module::set_input_tensor", caller))?;
        // SAFETY: a live Module and a live tensor (retained by C if kept).
        let rc = unsafe { sys::tn_module_set_input(self.obj.as_ptr(), i as i32, tensor.as_ptr()) };
        done(rc, "Module::set_input_tensor", caller)
    }

    /// One inference on the inputs set so far (`RuntimeError` naming an
    /// input that is not set, or the crt status of a failed run).
    #[track_caller]
    #[inline]
    pub fn run(&mut self) -> Result<()> {
        // SAFETY: a live Module.
        let rc = unsafe { sys::tn_module_run(self.obj.as_ptr()) };
        done(rc, "Module::run", Location::caller())
    }

    /// Set the first `inputs.len()` inputs from slices of their element
    /// type and run once: one call into C per inference, where
    /// [`set_input`](Module::set_input) and [`run`](Module::run) make one
    /// each. The checks are theirs (`TypeError` when `T` is not an input's
    /// dtype, `ValueError` for a wrong length or more slices than inputs,
    /// `RuntimeError` for a failed run or an input left unset). Inputs
    /// after the first `inputs.len()` stay as they were set, so a model
    /// whose inputs differ in dtype sets the others with `set_input` first.
    ///
    /// The Module keeps nothing of the slices: a slice aligned for `T` is
    /// read in place during the call, and that input is unset again when
    /// it returns, so a later plain `run` needs it set again.
    #[track_caller]
    pub fn run_with<T: IoElement>(&mut self, inputs: &[&[T]]) -> Result<()> {
        let caller = Location::caller();
        let n = inputs.len();
        if n > self.inputs.len() {
            // The C side's ValueError, which names the model and both counts
            // (it refuses before reading anything).
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            // SAFETY: a live Module; `n` is above its number of inputs.
            let rc = unsafe {
                sys::tn_module_run_with(
                    self.obj.as_ptr(),
                    n,
                    std::ptr::null(),
                    std::ptr::null(),
                    std::ptr::null_mut(),
                )
            };
            debug_assert_eq!(rc, -1);
            return Err(failed("Module::run_with", caller));
        }
        // At most TN_CRT_MAX_IO inputs: no allocation.
        let mut data = [std::ptr::null::<c_void>(); sys::TN_CRT_MAX_IO as usize];
        let mut nbytes = [0usize; sys::TN_CRT_MAX_IO as usize];
        for (i, input) in inputs.iter().enumerate() {
            self.typed_index::<T>(&i, false, "Module::run_with", caller)?;
            data[i] = input.as_ptr().cast();
            nbytes[i] = std::mem::size_of_val(*input);
        }
        // SAFETY: a live Module; `data[i]` is valid for `nbytes[i]` bytes for
        // the call, and the Module keeps no pointer into it after.
        let rc = unsafe {
            sys::tn_module_run_with(
                self.obj.as_ptr(),
                n as i32,
                data.as_ptr(),
                nbytes.as_ptr(),
                std::ptr::null_mut(),
            )
        };
        done(rc, "Module::run_with", caller)
    }

    /// An output of the last run, borrowed from the Module's buffer (no
    /// copy, and no object made): `TypeError` when `T` is not its dtype,
    /// `RuntimeError` when there is no run to read (none yet, the last one
    /// failed, or the workspace changed since). The borrow keeps the Module
    /// from running again while the slice lives; see the
    /// [module docs](self#borrowed-outputs).
    #[track_caller]
    pub fn output<T: IoElement>(&self, key: impl IoKey) -> Result<&[T]> {
        let caller = Location::caller();
        let i = self.typed_index::<T>(&key, true, "Module::output", caller)?;
        let mut nbytes = 0usize;
        // SAFETY: a live Module; `i` is in range. The C side refuses (NULL)
        // when there is no run to read.
        let data = unsafe { sys::tn_module_output_data(self.obj.as_ptr(), i as i32, &mut nbytes) };
        if data.is_null() {
            return Err(failed("Module::output", caller));
        }
        let n = nbytes / std::mem::size_of::<T>();
        if n == 0 {
            return Ok(&[]);
        }
        if data.align_offset(std::mem::align_of::<T>()) != 0 {
            return Err(self.misaligned::<T>(i, caller));
        }
        // SAFETY: `n` elements of T (dtype checked; every bit pattern is a
        // T) in memory the Module owns (its output buffer or workspace
        // pool) and writes only in calls that take `&mut self` (run,
        // run_with, time, set_input, set_workspace, ...): valid, and
        // unchanged, for as long as `&self` is borrowed, which the returned
        // slice's lifetime ties it to.
        Ok(unsafe { std::slice::from_raw_parts(data.cast::<T>(), n) })
    }

    #[cold]
    #[inline(never)]
    fn misaligned<T: IoElement>(&self, i: usize, caller: &Location<'_>) -> Error {
        let e = Error::new(
            ErrorKind::ValueError,
            format!(
                "model '{}', output '{}': its buffer is not aligned for {}",
                self.name,
                self.outputs[i].name,
                T::DTYPE
            ),
        );
        at_loc(e, "Module::output", caller)
    }

    /// Copy an output of the last run into `out` (its dtype, and its
    /// number of elements: `TypeError`/`ValueError` otherwise).
    #[track_caller]
    pub fn copy_output<T: IoElement>(&self, key: impl IoKey, out: &mut [T]) -> Result<()> {
        let caller = Location::caller();
        let i = self.typed_index::<T>(&key, true, "Module::copy_output", caller)?;
        // SAFETY: a live Module; `out` is valid for its size in bytes.
        let rc = unsafe {
            sys::tn_module_copy_output(
                self.obj.as_ptr(),
                i as i32,
                out.as_mut_ptr().cast::<c_void>(),
                std::mem::size_of_val(out),
            )
        };
        done(rc, "Module::copy_output", caller)
    }

    /// A copy of an output of the last run as a new tensor of its shape and
    /// dtype (to keep, or to hand to other code).
    #[track_caller]
    pub fn output_tensor(&self, key: impl IoKey) -> Result<Tensor> {
        let caller = Location::caller();
        let i = key
            .resolve(self, true)
            .map_err(|e| at_loc(e, "Module::output_tensor", caller))?;
        let info = &self.outputs[i];
        let t = Tensor::empty(&info.shape, info.dtype, Device::cpu(0))?;
        let dl = t.dltensor();
        // SAFETY: a live Module; the tensor was just made (nobody else sees
        // it), compact, of the output's size.
        let rc = unsafe {
            let data = (dl.data as *mut u8).add(dl.byte_offset as usize);
            sys::tn_module_copy_output(self.obj.as_ptr(), i as i32, data.cast(), t.nbytes())
        };
        done(rc, "Module::output_tensor", caller)?;
        Ok(t)
    }

    /// Time the model: `number` runs per repeat, `repeat` times, on the
    /// inputs set; the mean time of one run in each repeat. (The loop is the
    /// C side's, so no binding overhead is measured.)
    #[track_caller]
    pub fn time(&mut self, number: u32, repeat: u32) -> Result<Vec<Duration>> {
        let caller = Location::caller();
        let (Ok(n), Ok(r)) = (i32::try_from(number), i32::try_from(repeat)) else {
            let e = Error::new(
                ErrorKind::ValueError,
                format!("number and repeat must be below 2^31, got {number} and {repeat}"),
            );
            return Err(at_loc(e, "Module::time", caller));
        };
        let mut ms = vec![0f64; repeat as usize];
        // SAFETY: a live Module; `ms` holds `repeat` entries.
        let rc = unsafe { sys::tn_module_time(self.obj.as_ptr(), n, r, ms.as_mut_ptr()) };
        done(rc, "Module::time", caller)?;
        Ok(ms
            .iter()
            .map(|m| Duration::from_secs_f64(m.max(0.0) / 1e3))
            .collect())
    }

    /// Run in the caller's memory for workspace pool `pool` instead of the
    /// Module's own (`base` NULL: back to the Module's own). It must be at
    /// least the pool's size (`model().workspace_pools`) and aligned as the
    /// descriptor says (`ValueError` otherwise). The outputs have no run to
    /// read until the next run, nor do inputs placed in that pool.
    ///
    /// # Safety
    /// `base` is NULL or valid for reads and writes of `nbytes` bytes,
    /// touched by nothing else while the Module lives (or until the pool is
    /// set again), output slices of later runs included.
    #[track_caller]
    pub unsafe fn set_workspace(&mut self, pool: usize, base: *mut u8, nbytes: usize) -> Result<()> {
        let pool = i32::try_from(pool).unwrap_or(i32::MAX);
        let rc = sys::tn_module_set_workspace(self.obj.as_ptr(), pool, base.cast(), nbytes);
        done(rc, "Module::set_workspace", Location::caller())
    }

    /// Hand device `i` (the handle the model's device hooks receive) to the
    /// Module; a model with devices runs only once every one is set.
    ///
    /// # Safety
    /// `device` is what the model's device hooks expect, valid while the
    /// Module lives.
    #[track_caller]
    pub unsafe fn set_device(&mut self, i: usize, device: *mut c_void) -> Result<()> {
        let i = i32::try_from(i).unwrap_or(i32::MAX);
        let rc = sys::tn_module_set_device(self.obj.as_ptr(), i, device);
        done(rc, "Module::set_device", Location::caller())
    }

    /// Run the model's large convolutions and dense layers over `n` threads
    /// from now on: the calls its generated code hands to the crt's
    /// parallel hook (a host library's layers of at least 65,536
    /// multiply-accumulates) are cut into up to `n` bands of output rows or
    /// blocks of output features, run on a pool of `n - 1` threads made
    /// here, once, and the calling thread. 1, the default, is off. The int8
    /// outputs are the same bytes for any `n`. A library with no such call
    /// (or built before threads) starts no thread.
    ///
    /// `n` outside 1..=64 is a `ValueError` naming `tn_module_set_threads`,
    /// the model, the argument and the count received, and changes nothing.
    #[track_caller]
    pub fn set_threads(&mut self, n: i64) -> Result<()> {
        // SAFETY: a live Module.
        let rc = unsafe { sys::tn_module_set_threads(self.obj.as_ptr(), n) };
        done(rc, "Module::set_threads", Location::caller())
    }

    /// The threads a run takes (1: off; [`Module::set_threads`]).
    pub fn threads(&self) -> usize {
        // SAFETY: a live Module; `&self` excludes a concurrent set_threads.
        unsafe { sys::tn_module_threads(self.obj.as_ptr()) }.max(1) as usize
    }

    /// How many calls the last run ran in parts over the threads (0 at one
    /// thread, or before a run).
    pub fn split_calls(&self) -> u64 {
        // SAFETY: a live Module; `&self` excludes a concurrent run.
        unsafe { sys::tn_module_split_calls(self.obj.as_ptr()) }.max(0) as u64
    }

    /// The `tn.Module` object, borrowed (for raw calls; the Module keeps
    /// ownership).
    pub fn as_ptr(&self) -> *mut sys::TnObject {
        self.obj.as_ptr()
    }

    /// The index `key` names among the inputs (`output` false) or outputs,
    /// with a `TypeError` unless `T` is its dtype; errors carry `who`'s
    /// frame.
    fn typed_index<T: IoElement>(
        &self,
        key: &impl IoKey,
        output: bool,
        who: &str,
        caller: &Location<'_>,
    ) -> Result<usize> {
        let i = key.resolve(self, output).map_err(|e| at_loc(e, who, caller))?;
        let info = if output { &self.outputs[i] } else { &self.inputs[i] };
        if info.dtype == T::DTYPE {
            return Ok(i);
        }
        let e = Error::new(
            ErrorKind::TypeError,
            format!(
                "model '{}', {} '{}' is {}, got {}",
                self.name,
                if output { "output" } else { "input" },
                info.name,
                info.dtype,
                T::DTYPE
            ),
        );
        Err(at_loc(e, who, caller))
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

fn path_cstring(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(CString::new(path.as_os_str().as_bytes())?)
    }
    #[cfg(not(unix))]
    {
        cstring(&path.to_string_lossy())
    }
}

/// A C status as a Result: the raised error, with the Rust frame that saw
/// it, when not 0.
#[inline]
fn done(rc: std::os::raw::c_int, who: &str, caller: &Location<'_>) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(failed(who, caller))
    }
}

/// The raised error of a failed C call, with the Rust frame that saw it.
#[cold]
#[inline(never)]
fn failed(who: &str, caller: &Location<'_>) -> Error {
    at_loc(take_raised(), who, caller)
}

fn at_loc(err: Error, who: &str, caller: &Location<'_>) -> Error {
    err.append_frame(&format!(
        "Rust: {who} at {}:{}:{}",
        caller.file(),
        caller.line(),
        caller.column()
    ));
    err
}
