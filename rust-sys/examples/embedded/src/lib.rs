//! An Embedded Rust application of tvmnode's generated interface: the
//! keyword-spotting model (kws, int8) compiled in five interface variants,
//! each used through its `tvmgen_<name>.rs` exactly as an application would,
//! and checked against the output of the generated C run.
//!
//! * `kws`: inputs, outputs and one workspace pool (the RFC's first
//!   example), also over plain byte arrays (`WorkspacePools::from_bytes`);
//! * `kws_io`: inputs and outputs in the pool (`map_inputs`/`map_outputs`);
//! * `kws_cp`: constants in a pool (`ConstantPools`, `constant_pool_data!`);
//! * `kws_2p`: two workspace pools (`sram` limited to 4 KiB, `dram`);
//! * `kws_dev`: convolutions handed to a device hook (`Devices`), here a
//!   "device" that computes each call with its reference kernel.
//!
//! [`check_all`] runs every check and is what each target runs: `cargo
//! test` on the host, the firmware (src/main.rs) on a Cortex-M4 under qemu,
//! and `tvmgen_check` in wasm32 under node. It is `no_std` and allocates
//! nothing; the pools are local arrays (on the stack).
#![no_std]

use core::cell::Cell;
use core::ffi::c_void;

include!(concat!(env!("OUT_DIR"), "/models.rs"));

/// The model's input (the archive generator's `input.bin`).
pub const INPUT: &[u8; 490] = include_bytes!(env!("TVMGEN_INPUT"));
/// What the generated C run computes from it (`expected.bin`).
pub const EXPECTED: &[u8; 12] = include_bytes!(env!("TVMGEN_EXPECTED"));

/// A check that failed: its name and the crt status it got (0 when it ran
/// but its outputs were not the C run's; -1 when a call that must fail did
/// not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The check.
    pub check: &'static str,
    /// The status.
    pub status: i32,
}

fn input() -> [i8; 490] {
    INPUT.map(|b| b as i8)
}

fn expect(check: &'static str, output: &[i8; 12]) -> Result<(), Failure> {
    if output.map(|b| b as u8) == *EXPECTED {
        Ok(())
    } else {
        Err(Failure { check, status: 0 })
    }
}

/// Runs a variant on the input: a failure of `check` unless it gives the
/// C run's output.
fn check_run<E>(
    check: &'static str,
    code: fn(E) -> i32,
    run: impl FnOnce(&[i8; 490], &mut [i8; 12]) -> Result<(), E>,
) -> Result<(), Failure> {
    let mut output = [0i8; 12];
    run(&input(), &mut output).map_err(|e| Failure {
        check,
        status: code(e),
    })?;
    expect(check, &output)
}

/// `Ok` when `got` is the error `want`, a failure of `check` otherwise.
fn expect_err<E: Copy + PartialEq>(
    check: &'static str,
    got: Result<(), E>,
    want: E,
    code: fn(E) -> i32,
) -> Result<(), Failure> {
    match got {
        Err(e) if e == want => Ok(()),
        Err(e) => Err(Failure {
            check,
            status: code(e),
        }),
        Ok(()) => Err(Failure { check, status: -1 }),
    }
}

/// The RFC's first example: inputs, outputs, one workspace pool.
pub fn run_plain(input: &[i8; 490], output: &mut [i8; 12]) -> Result<(), tvmgen_kws::Error> {
    let mut input = *input;
    let mut pool = tvmgen_kws::WorkspacePool::new();
    let mut inputs = tvmgen_kws::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws::Outputs::new(output);
    let mut pools = tvmgen_kws::WorkspacePools::new(&mut pool);
    tvmgen_kws::run(&mut inputs, &mut outputs, &mut pools)
}

fn check_plain() -> Result<(), Failure> {
    let code = tvmgen_kws::Error::code;
    check_run("plain", code, run_plain)?;
    // again: the model keeps no state between runs
    check_run("plain, second run", code, run_plain)
}

/// The pool as the RFC writes it, a plain byte array: accepted when its
/// address is aligned, `Err(PoolMisaligned)` when not, never a fault.
fn check_plain_bytes() -> Result<(), Failure> {
    use tvmgen_kws::{Error, WORKSPACE_POOL_SIZE as N};
    let mut room = tvmgen_kws::Pool::<{ N + 16 }>::new();
    let (_, tail) = room.0.split_at_mut(1);
    let skewed: &mut [u8; N] = (&mut tail[..N]).try_into().expect("N bytes");
    let got = tvmgen_kws::WorkspacePools::from_bytes(skewed).map(|_| ());
    expect_err(
        "misaligned byte pool",
        got,
        Error::PoolMisaligned,
        Error::code,
    )?;

    check_run("byte pool", Error::code, |input, output| {
        let (_, tail) = room.0.split_at_mut(16);
        let bytes: &mut [u8; N] = (&mut tail[..N]).try_into().expect("N bytes");
        let mut pools = tvmgen_kws::WorkspacePools::from_bytes(bytes)?;
        let mut input = *input;
        let mut inputs = tvmgen_kws::Inputs::new(&mut input);
        let mut outputs = tvmgen_kws::Outputs::new(output);
        tvmgen_kws::run(&mut inputs, &mut outputs, &mut pools)
    })
}

/// Inputs and outputs in the pool: typed views borrowed from the pools.
pub fn run_io(input: &[i8; 490], output: &mut [i8; 12]) -> Result<(), tvmgen_kws_io::Error> {
    let mut pool = tvmgen_kws_io::WorkspacePool::new();
    let mut pools = tvmgen_kws_io::WorkspacePools::new(&mut pool);
    *pools.map_inputs().input_1 = *input;
    tvmgen_kws_io::run(&mut pools)?;
    *output = *tvmgen_kws_io::map_outputs(&mut pools).identity;
    Ok(())
}

fn check_io() -> Result<(), Failure> {
    check_run("io in pool", tvmgen_kws_io::Error::code, run_io)?;
    // the typed views are where the C code's map functions say
    let mut pool = tvmgen_kws_io::WorkspacePool::new();
    let mut pools = tvmgen_kws_io::WorkspacePools::new(&mut pool);
    let input_at = pools.map_inputs().input_1.as_ptr() as usize;
    let output_at = pools.map_outputs().identity.as_ptr() as usize;
    // SAFETY: the pools struct is valid; the functions only add offsets.
    let (ins, outs) = unsafe {
        (
            tvmgen_kws_io::ffi::tvmgen_kws_io_map_inputs(&mut pools),
            tvmgen_kws_io::ffi::tvmgen_kws_io_map_outputs(&mut pools),
        )
    };
    if ins.input_1 as usize != input_at || outs.identity as usize != output_at {
        return Err(Failure {
            check: "io views",
            status: 0,
        });
    }
    Ok(())
}

/// Constants in a pool the application owns, filled from the model's data.
pub fn run_cp(input: &[i8; 490], output: &mut [i8; 12]) -> Result<(), tvmgen_kws_cp::Error> {
    let mut input = *input;
    let mut pool = tvmgen_kws_cp::WorkspacePool::new();
    let mut constants = tvmgen_kws_cp::ConstantPool::new();
    let mut inputs = tvmgen_kws_cp::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws_cp::Outputs::new(output);
    let mut pools = tvmgen_kws_cp::WorkspacePools::new(&mut pool);
    let mut constant_pools = tvmgen_kws_cp::ConstantPools::new(&mut constants);
    tvmgen_kws_cp::run(&mut inputs, &mut outputs, &mut pools, &mut constant_pools)
}

fn check_cp() -> Result<(), Failure> {
    use tvmgen_kws_cp::{Error, CONSTANT_POOL_SIZE};
    check_run("constant pool", Error::code, run_cp)?;
    // the RFC's way: memory the application fills from constant_pool_data!()
    check_run("constant pool from bytes", Error::code, |input, output| {
        let data: &'static [u8; CONSTANT_POOL_SIZE] = tvmgen_kws_cp::constant_pool_data!();
        let mut constants = tvmgen_kws_cp::ConstantPool::new();
        constants.0 = *data;
        let mut pool = tvmgen_kws_cp::WorkspacePool::new();
        let mut input = *input;
        let mut inputs = tvmgen_kws_cp::Inputs::new(&mut input);
        let mut outputs = tvmgen_kws_cp::Outputs::new(output);
        let mut pools = tvmgen_kws_cp::WorkspacePools::new(&mut pool);
        let mut cps = tvmgen_kws_cp::ConstantPools::from_bytes(&mut constants.0)?;
        tvmgen_kws_cp::run(&mut inputs, &mut outputs, &mut pools, &mut cps)
    })
}

/// Two workspace pools: `sram` (at most 4 KiB) and `dram`.
pub fn run_2p(input: &[i8; 490], output: &mut [i8; 12]) -> Result<(), tvmgen_kws_2p::Error> {
    let mut input = *input;
    let mut sram = tvmgen_kws_2p::SramWorkspacePool::new();
    let mut dram = tvmgen_kws_2p::DramWorkspacePool::new();
    let mut inputs = tvmgen_kws_2p::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws_2p::Outputs::new(output);
    let mut pools = tvmgen_kws_2p::WorkspacePools::new(&mut sram, &mut dram);
    tvmgen_kws_2p::run(&mut inputs, &mut outputs, &mut pools)
}

fn check_2p() -> Result<(), Failure> {
    check_run("two pools", tvmgen_kws_2p::Error::code, run_2p)
}

/// The application's "device": computes every call it gets with the call's
/// reference kernel, counting them; it refuses calls once `fail_after`
/// have been made.
pub struct Npu {
    /// Calls so far.
    pub calls: Cell<u32>,
    /// Refuse every call after this many.
    pub fail_after: u32,
}

/// The device hook the generated C code calls for each convolution of
/// `kws_dev` (the header's `tvmgen_kws_dev_npu_compute`).
///
/// # Safety
///
/// Called by the generated code only: `device` is the handle given to
/// `Devices::new` (an `Npu`), `call` valid for the call.
#[no_mangle]
pub unsafe extern "C" fn tvmgen_kws_dev_npu_compute(
    device: *mut c_void,
    call: *const tvmgen_kws_dev::DeviceCall,
) -> i32 {
    // SAFETY: as the caller promises.
    let (npu, call) = unsafe { (&*(device as *const Npu), &*call) };
    if npu.calls.get() >= npu.fail_after {
        return 1;
    }
    npu.calls.set(npu.calls.get() + 1);
    if call.op() != "qnn.conv2d" || call.kernel() != "tn_crt_conv2d_s8" || call.inputs().len() != 3
    {
        return 2;
    }
    match call.reference() {
        Ok(()) => 0,
        Err(e) => e.code(),
    }
}

/// Runs `kws_dev` with `npu` as its device.
pub fn run_dev(
    input: &[i8; 490],
    output: &mut [i8; 12],
    npu: &Npu,
) -> Result<(), tvmgen_kws_dev::Error> {
    let mut input = *input;
    let mut pool = tvmgen_kws_dev::WorkspacePool::new();
    let mut inputs = tvmgen_kws_dev::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws_dev::Outputs::new(output);
    let mut pools = tvmgen_kws_dev::WorkspacePools::new(&mut pool);
    // SAFETY: the hook above expects an Npu, which outlives the run.
    let mut devices = unsafe { tvmgen_kws_dev::Devices::new(npu as *const Npu as *mut c_void) };
    tvmgen_kws_dev::run(&mut inputs, &mut outputs, &mut pools, &mut devices)
}

fn check_dev() -> Result<(), Failure> {
    use tvmgen_kws_dev::Error;
    let npu = Npu {
        calls: Cell::new(0),
        fail_after: u32::MAX,
    };
    check_run("device", Error::code, |input, output| {
        run_dev(input, output, &npu)
    })?;
    if npu.calls.get() != 9 {
        return Err(Failure {
            check: "device calls",
            status: npu.calls.get() as i32,
        });
    }
    // a device that fails: an error, not a fault
    let broken = Npu {
        calls: Cell::new(0),
        fail_after: 3,
    };
    let mut output = [0i8; 12];
    let got = run_dev(&input(), &mut output, &broken);
    expect_err("failing device", got, Error::DeviceFailed, Error::code)?;
    // a null handle: caught by the C code's checks
    let mut input = input();
    let mut pool = tvmgen_kws_dev::WorkspacePool::new();
    let mut inputs = tvmgen_kws_dev::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws_dev::Outputs::new(&mut output);
    let mut pools = tvmgen_kws_dev::WorkspacePools::new(&mut pool);
    // SAFETY: a null handle never reaches the hook.
    let mut devices = unsafe { tvmgen_kws_dev::Devices::new(core::ptr::null_mut()) };
    let got = tvmgen_kws_dev::run(&mut inputs, &mut outputs, &mut pools, &mut devices);
    expect_err("null device", got, Error::NullPointer, Error::code)
}

/// The status codes map both ways.
fn check_errors() -> Result<(), Failure> {
    use tvmgen_kws::Error;
    let fail = Failure {
        check: "status codes",
        status: 0,
    };
    for code in 1..=12 {
        match Error::from_status(code) {
            Err(e) if e.code() == code && !matches!(e, Error::Unknown(_)) => {}
            _ => return Err(fail),
        }
    }
    let ok = Error::from_status(0) == Ok(())
        && Error::from_status(8) == Err(Error::PoolMisaligned)
        && Error::from_status(99) == Err(Error::Unknown(99))
        && Error::PoolMisaligned.name() == "POOL_MISALIGNED";
    if ok {
        Ok(())
    } else {
        Err(fail)
    }
}

/// Every check, in order; the number of checks that passed, or the first
/// failure.
pub fn check_all() -> Result<u32, Failure> {
    let checks: [fn() -> Result<(), Failure>; 7] = [
        check_plain,
        check_plain_bytes,
        check_io,
        check_cp,
        check_2p,
        check_dev,
        check_errors,
    ];
    for c in checks {
        c()?;
    }
    Ok(checks.len() as u32)
}

/// wasm32: what node's runner (run_wasm.mjs) calls and reads.
#[cfg(target_arch = "wasm32")]
pub mod wasm {
    use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering::Relaxed};

    static FAILED_STATUS: AtomicI32 = AtomicI32::new(0);
    static FAILED_NAME: AtomicUsize = AtomicUsize::new(0);
    static FAILED_LEN: AtomicUsize = AtomicUsize::new(0);

    /// Runs every check: the number that passed, or -1 when one failed
    /// (then the functions below say which and how).
    #[no_mangle]
    pub extern "C" fn tvmgen_check() -> i32 {
        match super::check_all() {
            Ok(n) => n as i32,
            Err(f) => {
                FAILED_STATUS.store(f.status, Relaxed);
                FAILED_NAME.store(f.check.as_ptr() as usize, Relaxed);
                FAILED_LEN.store(f.check.len(), Relaxed);
                -1
            }
        }
    }

    /// The failed check's status.
    #[no_mangle]
    pub extern "C" fn tvmgen_failed_status() -> i32 {
        FAILED_STATUS.load(Relaxed)
    }

    /// Where the failed check's name is in memory (UTF-8)...
    #[no_mangle]
    pub extern "C" fn tvmgen_failed_name() -> usize {
        FAILED_NAME.load(Relaxed)
    }

    /// ... and its length in bytes.
    #[no_mangle]
    pub extern "C" fn tvmgen_failed_name_len() -> usize {
        FAILED_LEN.load(Relaxed)
    }
}

/// wasm32 has no panic handler of its own; a panic traps.
#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
