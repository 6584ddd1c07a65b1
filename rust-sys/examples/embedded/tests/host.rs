//! The example on the host: every variant gives the C run's output, and
//! what cannot be ruled out by types comes back as an `Err`, never a fault.

use std::cell::Cell;

use tvmgen_embedded::{
    check_all, run_2p, run_cp, run_dev, run_io, run_plain, tvmgen_kws, tvmgen_kws_io, Npu,
    EXPECTED, INPUT,
};

fn input() -> [i8; 490] {
    INPUT.map(|b| b as i8)
}

fn expected() -> [i8; 12] {
    EXPECTED.map(|b| b as i8)
}

#[test]
fn every_check_passes() {
    assert_eq!(check_all(), Ok(7));
}

#[test]
fn every_variant_gives_the_c_output() {
    let x = input();
    let mut out = [0i8; 12];
    run_plain(&x, &mut out).unwrap();
    assert_eq!(out, expected(), "plain");
    run_io(&x, &mut out).unwrap();
    assert_eq!(out, expected(), "io in pool");
    run_cp(&x, &mut out).unwrap();
    assert_eq!(out, expected(), "constant pool");
    run_2p(&x, &mut out).unwrap();
    assert_eq!(out, expected(), "two pools");
    let npu = Npu {
        calls: Cell::new(0),
        fail_after: u32::MAX,
    };
    run_dev(&x, &mut out, &npu).unwrap();
    assert_eq!(out, expected(), "device");
    assert_eq!(npu.calls.get(), 9, "one hook call per convolution");
}

/// The RFC's first example, word for word but for the pool's type.
#[test]
fn the_rfc_example() -> Result<(), tvmgen_kws::Error> {
    let mut input = input();
    let mut output = [0i8; 12];
    let mut pool = tvmgen_kws::WorkspacePool::new();
    let mut inputs = tvmgen_kws::Inputs::new(&mut input);
    let mut outputs = tvmgen_kws::Outputs::new(&mut output);
    let mut pools = tvmgen_kws::WorkspacePools::new(&mut pool);
    tvmgen_kws::run(&mut inputs, &mut outputs, &mut pools)?;
    assert_eq!(output, expected());
    Ok(())
}

#[test]
fn sizes_are_the_headers() {
    assert_eq!(tvmgen_kws::INPUT_INPUT_1_SIZE, 490);
    assert_eq!(tvmgen_kws::INPUT_INPUT_1_LEN, 490);
    assert_eq!(tvmgen_kws::OUTPUT_IDENTITY_SIZE, 12);
    assert_eq!(tvmgen_kws::ALIGNMENT, 16);
    assert_eq!(std::mem::align_of::<tvmgen_kws::WorkspacePool>(), 16);
    assert_eq!(
        std::mem::size_of::<tvmgen_kws::WorkspacePool>(),
        tvmgen_kws::WORKSPACE_POOL_SIZE
    );
    assert_eq!(tvmgen_kws::MODEL_NAME, "kws");
}

#[test]
fn errors_say_what_went_wrong() {
    use tvmgen_kws::Error;
    assert_eq!(
        Error::PoolMisaligned.to_string(),
        "a memory pool is not aligned as the model needs (POOL_MISALIGNED, status 8)"
    );
    assert_eq!(
        Error::Unknown(77).to_string(),
        "unknown status (UNKNOWN, status 77)"
    );
    assert_eq!(format!("{:?}", Error::DeviceFailed), "DeviceFailed");
    assert_eq!(Error::from_status(12), Err(Error::DeviceFailed));
    let boxed: Box<dyn std::error::Error> = Box::new(Error::NullPointer);
    assert_eq!(
        boxed.to_string(),
        "a required pointer is NULL (NULL_POINTER, status 9)"
    );
}

#[test]
fn a_pool_that_is_not_aligned_is_an_error() {
    use tvmgen_kws::{Error, WORKSPACE_POOL_SIZE as N};
    let mut room = vec![0u8; N + 32];
    let skew = (16 - room.as_ptr() as usize % 16) % 16 + 3;
    let bytes: &mut [u8; N] = (&mut room[skew..skew + N]).try_into().unwrap();
    assert_eq!(
        tvmgen_kws::WorkspacePools::from_bytes(bytes).err(),
        Some(Error::PoolMisaligned)
    );
}

/// Views into the pool borrow it: while they are alive nothing else can
/// reach the pool, so the model cannot run under them (that is a compile
/// error, tested in python/tests/test_rust_iface.py).
#[test]
fn io_views_are_the_pools_bytes() {
    let mut pool = tvmgen_kws_io::WorkspacePool::new();
    let at = tvmgen_kws_io::INPUT_INPUT_1_OFFSET;
    {
        let mut pools = tvmgen_kws_io::WorkspacePools::new(&mut pool);
        pools.map_inputs().input_1[0] = 42;
        tvmgen_kws_io::map_inputs(&mut pools).input_1[489] = -7;
    }
    assert_eq!(pool.0[at], 42);
    assert_eq!(pool.0[at + 489] as i8, -7);
}
