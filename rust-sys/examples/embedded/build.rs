//! Builds the C half of the example with the `cc` crate: every model's
//! generated code (`codegen/host/src/*.c`) and the crt sources the archives
//! carry (`runtime/src`, compiled once: the archives of one tvmnode hold the
//! same files), and for a Cortex-M4 also the firmware harness of
//! `firmware/common` (its vector table and reset code, semihosting output
//! and instruction counter) with the board's linker script,
//! `firmware/m4/mps2_an386.ld` (which includes `common/sections.ld`). It
//! also writes `$OUT_DIR/models.rs`, which `src/lib.rs` includes: one
//! `#[path = ".../tvmgen_<name>.rs"] pub mod tvmgen_<name>;` per model, the
//! RFC's way of using the generated module, with the path made absolute.
//!
//! Inputs, from the environment:
//!
//! * `TVMGEN_ARCHIVES` (required): a directory holding one exported archive
//!   per model below (`kws/`, `kws_io/`, ...), each compiled with
//!   `--interface c,rust`, and `input.bin` / `expected.bin`: the model's
//!   input and the C run's output. python/tests/test_rust_iface.py writes
//!   it; docs/embedded-rust.md shows the commands.
//! * `TVMGEN_FIRMWARE_DIR`: the firmware folder (`common/` and `m4/`), by
//!   default `firmware` of this repository.
//!
//! For `thumbv7em-none-eabihf` the C compiler is cc's default for the
//! target, `arm-none-eabi-gcc` (`CC_thumbv7em_none_eabihf` overrides it);
//! for `wasm32-unknown-unknown` it is `clang` (`CC_wasm32_unknown_unknown`),
//! with `llvm-ar` as the archiver.

use std::collections::BTreeMap;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// The models this example runs: one archive per interface variant.
const MODELS: &[&str] = &["kws", "kws_io", "kws_cp", "kws_2p", "kws_dev"];

/// The harness files the firmware links (its own main.c is replaced by the
/// Rust `main` of src/main.rs).
const HARNESS: &[&str] = &["startup.c", "semihost.c", "measure.c"];

/// Stack for the firmware: the pools live on it (64 KiB is the harness's
/// default; the constant-pool variant alone needs 24 KiB of pool).
const FW_STACK_SIZE: u32 = 256 * 1024;

fn main() {
    for var in ["TVMGEN_ARCHIVES", "TVMGEN_FIRMWARE_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    let dir = match env::var_os("TVMGEN_ARCHIVES") {
        Some(d) => PathBuf::from(d),
        None => panic!(
            "set TVMGEN_ARCHIVES to a directory of archives compiled with --interface c,rust \
             (kws/, kws_io/, kws_cp/, kws_2p/, kws_dev/ and input.bin, expected.bin); \
             see docs/embedded-rust.md"
        ),
    };
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("TVMGEN_ARCHIVES={}: {e}", dir.display()));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let m4 = target.starts_with("thumbv7em");
    let wasm = target.starts_with("wasm32");

    let mut build = cc::Build::new();
    build
        .flag("-std=c11")
        .flag("-ffp-contract=off")
        .warnings_into_errors(true);
    if m4 {
        build.flag("-mcpu=cortex-m4").flag("-mthumb");
        build.flag("-mfloat-abi=hard").flag("-mfpu=fpv4-sp-d16");
    }
    if wasm {
        // no C library at all: the crt declares what it needs (crt_libc.h)
        // and Rust's compiler_builtins defines it
        build.flag("-ffreestanding");
        if env::var_os("AR_wasm32_unknown_unknown").is_none() {
            build.archiver("llvm-ar");
        }
    }
    let mut mods = String::from("// Written by build.rs: the generated modules.\n");
    let mut runtime: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for name in MODELS {
        let arch = dir.join(name);
        let rs = arch.join(format!("codegen/host/src/tvmgen_{name}.rs"));
        if !rs.is_file() {
            panic!(
                "{}: missing (compile the model with --name {name} --interface c,rust)",
                rs.display()
            );
        }
        println!("cargo:rerun-if-changed={}", rs.display());
        let rs = rs.to_str().expect("a UTF-8 path");
        mods += &format!("#[path = {rs:?}]\npub mod tvmgen_{name};\n");
        for c in files(&arch.join("codegen/host/src"), "c") {
            println!("cargo:rerun-if-changed={}", c.display());
            build.file(c);
        }
        build.include(arch.join("codegen/host/include"));
        let rt = arch.join("runtime/src");
        for c in files(&rt, "c") {
            let rel = c
                .strip_prefix(&rt)
                .expect("below runtime/src")
                .to_path_buf();
            runtime.entry(rel).or_insert(c);
        }
    }
    build.include(dir.join(MODELS[0]).join("runtime/include"));
    for c in runtime.values() {
        println!("cargo:rerun-if-changed={}", c.display());
        build.file(c);
    }
    build.compile("tvmgen_models");
    fs::write(out.join("models.rs"), mods).expect("write models.rs");

    for (var, file) in [
        ("TVMGEN_INPUT", "input.bin"),
        ("TVMGEN_EXPECTED", "expected.bin"),
    ] {
        let p = dir.join(file);
        if !p.is_file() {
            panic!("{}: missing", p.display());
        }
        println!("cargo:rerun-if-changed={}", p.display());
        println!("cargo:rustc-env={var}={}", p.display());
    }

    if m4 {
        harness(&out);
    }
}

/// Compiles firmware/common's startup, semihosting and measuring code and
/// links the firmware with the M4 board's linker script. The archive is linked whole:
/// nothing in Rust names the vector table or the reset handler.
fn harness(out: &Path) {
    let fw = env::var_os("TVMGEN_FIRMWARE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../firmware"));
    let common = fw.join("common");
    let ld = fw.join("m4").join("mps2_an386.ld");
    if !ld.is_file() {
        panic!(
            "{}: the firmware harness is missing (set TVMGEN_FIRMWARE_DIR)",
            ld.display()
        );
    }
    let mut build = cc::Build::new();
    build
        .flag("-std=c11")
        .flag("-mcpu=cortex-m4")
        .flag("-mthumb")
        .flag("-mfloat-abi=hard")
        .flag("-mfpu=fpv4-sp-d16")
        .include(&common)
        .cargo_metadata(false);
    for f in HARNESS {
        let p = common.join(f);
        println!("cargo:rerun-if-changed={}", p.display());
        build.file(p);
    }
    build.compile("fw_harness");
    // only the firmware binary links the harness and the board's memory
    // map (the arguments are rust-lld's, the target's linker)
    let lib = out.join("libfw_harness.a");
    println!("cargo:rustc-link-arg-bins=--whole-archive");
    println!("cargo:rustc-link-arg-bins={}", lib.display());
    println!("cargo:rustc-link-arg-bins=--no-whole-archive");
    println!("cargo:rerun-if-changed={}", ld.display());
    println!("cargo:rerun-if-changed={}", common.join("sections.ld").display());
    // the board's script includes sections.ld, found on the search path
    println!("cargo:rustc-link-arg-bins=-L{}", common.display());
    println!("cargo:rustc-link-arg-bins=-T{}", ld.display());
    println!("cargo:rustc-link-arg-bins=--defsym=FW_STACK_SIZE={FW_STACK_SIZE}");
}

/// The files of `dir` and below with extension `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
