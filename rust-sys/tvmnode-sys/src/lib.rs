//! Raw declarations of libtvmnode's stable C ABI: `c_api.h`, `ir.h` and the
//! DLPack structs of `dlpack.h`.
//!
//! This crate is the `-sys` half of the Rust binding: it declares, and does
//! nothing else. Every function is `unsafe` and follows the C contract
//! written at its prototype in the headers (ownership is marked there as
//! `(transfer full)` or `(transfer none)`; status-returning functions give 0
//! or -1 with the error in the thread-local raised slot). The safe API is the
//! `tvmnode` crate.
//!
//! * [`types`](crate#types) (hand-written, `src/types.rs`): the structs, the
//!   `TnAny` union, callback types and every `TN_*` constant, with C enum
//!   values as `i32` like the fields they are compared with.
//! * functions (`src/functions.rs`): generated once by `regen.sh` with
//!   bindgen and checked in, so building needs only cargo and the C library.
//! * [compiled models](crate#compiled-models) (below, by hand): the
//!   descriptor structs of `tvmnode/crt/model.h` and the `tn_module_*`
//!   functions of `tvmnode/module.h` (the runtime Module), which live outside
//!   `tvmnode.h` and so outside what `regen.sh` reads.
//!
//! `tests/layout.rs` compiles a C program against the real headers and checks
//! every size and field offset declared here against it (the model
//! descriptor's too, when `tvmnode/crt/model.h` is found beside them).
//!
//! The C header's `static inline` helpers (`tn_any_int`, ...) have no symbol
//! to link; build a [`TnAny`] literal instead.
//!
//! # Compiled models
//!
//! `tvmnode/crt/model.h` (the constant descriptor every generated model
//! defines, `tvmgen_<name>_model`: [`TnCrtModel`], [`TnCrtTensorInfo`]) and
//! `tvmnode/module.h` (a compiled model as a runtime object, `tn.Module`:
//! loaded from a shared library with dlopen, [`tn_module_load`], found in
//! the system library, [`tn_module_system`], or made over a descriptor).
//! Written by hand in `lib.rs`, and checked by `tests/layout.rs` like the
//! rest.
//!
//! # Linking
//!
//! `build.rs` finds the library with pkg-config (package `tvmnode`), or from
//! `TVMNODE_BUILD_DIR` (an autotools build tree) or `TVMNODE_LIB_DIR`
//! (+ `TVMNODE_INCLUDE_DIR`, `TVMNODE_STATIC=1`).
#![no_std]
#![allow(non_upper_case_globals)]
#![warn(missing_docs)]

mod types;
pub use types::*;

mod functions;
pub use functions::*;

pub use module::*;

// Compiled models: see the crate docs.
mod module {
    use core::ffi::{c_char, c_int, c_void};

    use crate::TnObject;

    /// `TN_CRT_MODEL_MAGIC`: `"TNMD"`, the first field of every descriptor.
    pub const TN_CRT_MODEL_MAGIC: u32 = 0x544e_4d44;
    /// `TN_CRT_MODEL_STATE_MAGIC`: `"TNMS"`, the magic of a streaming
    /// model's descriptor ([`TnCrtStatefulModel`]).
    pub const TN_CRT_MODEL_STATE_MAGIC: u32 = 0x544e_4d53;
    /// `TN_CRT_MODEL_ABI_VERSION`: the descriptor layout declared here.
    pub const TN_CRT_MODEL_ABI_VERSION: u32 = 1;
    /// `TN_CRT_MAX_IO`: most inputs (and outputs) of one model.
    pub const TN_CRT_MAX_IO: i32 = 16;
    /// `TN_CRT_MAX_POOLS`: most pools (and devices) of one model.
    pub const TN_CRT_MAX_POOLS: i32 = 8;

    /// `TnCrtDType` (`tvmnode/crt/kernels.h`): the element type of a model's
    /// input or output ([`TnCrtTensorInfo::dtype`]).
    pub type TnCrtDType = i32;
    /// float32.
    pub const TN_CRT_F32: TnCrtDType = 0;
    /// int32.
    pub const TN_CRT_I32: TnCrtDType = 1;
    /// int8.
    pub const TN_CRT_I8: TnCrtDType = 2;
    /// uint8.
    pub const TN_CRT_U8: TnCrtDType = 3;
    /// int64.
    pub const TN_CRT_I64: TnCrtDType = 4;
    /// float64.
    pub const TN_CRT_F64: TnCrtDType = 5;
    /// int16.
    pub const TN_CRT_I16: TnCrtDType = 6;
    /// bool (one byte, 0 or 1).
    pub const TN_CRT_BOOL: TnCrtDType = 7;

    /// One input or output of a model.
    #[repr(C)]
    #[derive(Debug, Clone, Copy)]
    pub struct TnCrtTensorInfo {
        /// Its name (static storage of the model).
        pub name: *const c_char,
        /// A `TN_CRT_*` element type.
        pub dtype: TnCrtDType,
        /// Number of dimensions.
        pub ndim: i32,
        /// `ndim` dimensions.
        pub shape: *const i32,
        /// Size in bytes.
        pub nbytes: u32,
        /// Quantization scale (per tensor); 0 when not quantized.
        pub scale: f32,
        /// Quantization zero point.
        pub zero_point: i32,
        /// -1: the application binds a buffer; else the workspace pool it
        /// lives in ...
        pub pool: i32,
        /// ... at this offset.
        pub offset: u32,
    }

    /// One memory pool a model needs.
    #[repr(C)]
    #[derive(Debug, Clone, Copy)]
    pub struct TnCrtPoolInfo {
        /// Its name.
        pub name: *const c_char,
        /// Bytes the model needs.
        pub size: u32,
        /// Of the pool's base address.
        pub alignment: u32,
    }

    /// The generated entry point behind a descriptor: arrays of buffers in
    /// descriptor order.
    pub type TnCrtModelRun = Option<
        unsafe extern "C" fn(
            inputs: *const *mut c_void,
            outputs: *const *mut c_void,
            workspace_pools: *const *mut c_void,
            constant_pools: *const *mut c_void,
            devices: *const *mut c_void,
        ) -> i32,
    >;

    /// [`TnCrtModelRun`] with a streaming model's state pool last.
    pub type TnCrtModelRunState = Option<
        unsafe extern "C" fn(
            *const *mut c_void,
            *const *mut c_void,
            *const *mut c_void,
            *const *mut c_void,
            *const *mut c_void,
            *mut c_void,
        ) -> i32,
    >;

    /// A model's constant descriptor (`tvmgen_<name>_model`).
    #[repr(C)]
    #[derive(Debug, Clone, Copy)]
    pub struct TnCrtModel {
        /// [`TN_CRT_MODEL_MAGIC`].
        pub magic: u32,
        /// [`TN_CRT_MODEL_ABI_VERSION`].
        pub abi_version: u32,
        /// The model's name.
        pub name: *const c_char,
        /// Of the generator.
        pub version: *const c_char,
        /// Number of inputs.
        pub num_inputs: i32,
        /// Number of outputs.
        pub num_outputs: i32,
        /// `num_inputs` entries.
        pub inputs: *const TnCrtTensorInfo,
        /// `num_outputs` entries.
        pub outputs: *const TnCrtTensorInfo,
        /// Number of workspace pools.
        pub num_workspace_pools: i32,
        /// `num_workspace_pools` entries.
        pub workspace_pools: *const TnCrtPoolInfo,
        /// Number of constant pools (0: constants are const arrays).
        pub num_constant_pools: i32,
        /// `num_constant_pools` entries.
        pub constant_pools: *const TnCrtPoolInfo,
        /// Initial contents of each constant pool (NULL: the application's).
        pub constant_pool_data: *const *const u8,
        /// Number of external devices.
        pub num_devices: i32,
        /// Their names.
        pub devices: *const *const c_char,
        /// Multiply-accumulates per inference.
        pub macs: i64,
        /// Weights, biases, tables.
        pub constant_bytes: u32,
        /// The entry point.
        pub run: TnCrtModelRun,
    }

    /// The descriptor of a streaming model, which keeps state between runs
    /// in a state pool (its `base.magic` is [`TN_CRT_MODEL_STATE_MAGIC`]).
    #[repr(C)]
    #[derive(Debug, Clone, Copy)]
    pub struct TnCrtStatefulModel {
        /// The descriptor every model has.
        pub base: TnCrtModel,
        /// Bytes of the state pool.
        pub state_pool_size: u32,
        /// Of the state pool's base address.
        pub state_pool_alignment: u32,
        /// The entry point with the state pool as its last argument.
        pub run_with_state: TnCrtModelRunState,
        /// Give the states in a pool their initial values.
        pub reset: Option<unsafe extern "C" fn(state_pool: *mut c_void) -> i32>,
    }

    /// A node of the system library's list of descriptors (static storage).
    #[repr(C)]
    #[derive(Debug)]
    pub struct TnCrtModelEntry {
        /// The descriptor.
        pub model: *const TnCrtModel,
        /// The next node (the library's).
        pub next: *mut TnCrtModelEntry,
    }

    unsafe extern "C" {
        /// Register a system-library descriptor (`entry` is static storage).
        pub fn tn_module_register_system(entry: *mut TnCrtModelEntry);
        /// A Module of the system library's model `name`. (transfer full)
        pub fn tn_module_system(name: *const c_char) -> *mut TnObject;
        /// A Module of model `name` (NULL: the only one) in the shared
        /// library at `path`. (transfer full)
        pub fn tn_module_load(path: *const c_char, name: *const c_char) -> *mut TnObject;
        /// A Module over a descriptor the caller keeps alive. (transfer full)
        pub fn tn_module_from_model(model: *const TnCrtModel) -> *mut TnObject;
        /// The descriptor (valid while the Module lives).
        pub fn tn_module_model(module: *const TnObject) -> *const TnCrtModel;
        /// Number of inputs (-1 on error).
        pub fn tn_module_num_inputs(module: *const TnObject) -> i32;
        /// Number of outputs (-1 on error).
        pub fn tn_module_num_outputs(module: *const TnObject) -> i32;
        /// Input `i`'s description (NULL on error).
        pub fn tn_module_input_info(module: *const TnObject, i: i32) -> *const TnCrtTensorInfo;
        /// Output `i`'s description (NULL on error).
        pub fn tn_module_output_info(module: *const TnObject, i: i32) -> *const TnCrtTensorInfo;
        /// The input named `name` (-1 and a KeyError when none).
        pub fn tn_module_input_index(module: *const TnObject, name: *const c_char) -> i32;
        /// The model's description as a tn.Map. (transfer full)
        pub fn tn_module_describe(module: *const TnObject) -> *mut TnObject;
        /// Set input `i` from a tn.Tensor (checked; zero copy when it can).
        pub fn tn_module_set_input(module: *mut TnObject, i: i32, tensor: *mut TnObject) -> c_int;
        /// Set input `i` from `nbytes` raw bytes (copied).
        pub fn tn_module_set_input_bytes(
            module: *mut TnObject,
            i: i32,
            data: *const c_void,
            nbytes: usize,
        ) -> c_int;
        /// One inference.
        pub fn tn_module_run(module: *mut TnObject) -> c_int;
        /// A streaming model's states to their initial values (nothing for
        /// a model without state).
        pub fn tn_module_reset(module: *mut TnObject) -> c_int;
        /// Set the first `n` inputs from caller memory (`data[i]` holds
        /// `nbytes[i]` bytes, the input's size, of its dtype: unchecked) and
        /// run once. An input read in place is unset again on return; `lent`
        /// (may be NULL) receives the mask of those inputs.
        pub fn tn_module_run_with(
            module: *mut TnObject,
            n: i32,
            data: *const *const c_void,
            nbytes: *const usize,
            lent: *mut u32,
        ) -> c_int;
        /// Output `i` of the last run, a tensor viewing the Module's buffer.
        /// (transfer full)
        pub fn tn_module_get_output(module: *mut TnObject, i: i32) -> *mut TnObject;
        /// The data of output `i` of the last run, in place (its size in
        /// `*nbytes` when not NULL): valid until the next run, a workspace
        /// change or the Module's end. NULL on error.
        pub fn tn_module_output_data(module: *mut TnObject, i: i32, nbytes: *mut usize) -> *const c_void;
        /// Copy output `i` into `out` (`nbytes`: the output's size).
        pub fn tn_module_copy_output(module: *mut TnObject, i: i32, out: *mut c_void, nbytes: usize)
            -> c_int;
        /// Run `number` times per repeat, `repeat` times; `ms_per_run`
        /// (`repeat` entries) receives each repeat's mean milliseconds.
        pub fn tn_module_time(module: *mut TnObject, number: i32, repeat: i32, ms_per_run: *mut f64)
            -> c_int;
        /// Use the caller's memory for workspace pool `i`.
        pub fn tn_module_set_workspace(
            module: *mut TnObject,
            i: i32,
            base: *mut c_void,
            nbytes: usize,
        ) -> c_int;
        /// Hand device `i` (the handle the model's device hooks receive) to
        /// the Module.
        pub fn tn_module_set_device(module: *mut TnObject, i: i32, device: *mut c_void) -> c_int;
        /// Run the calls the model's code hands to the crt's parallel hook
        /// over `n` threads (1: off; a ValueError outside 1 to 64).
        pub fn tn_module_set_threads(module: *mut TnObject, n: i64) -> c_int;
        /// The threads a run takes (1: off; -1 on error).
        pub fn tn_module_threads(module: *const TnObject) -> i32;
        /// The calls the last run ran in parts (-1 on error).
        pub fn tn_module_split_calls(module: *const TnObject) -> i64;
    }
}
