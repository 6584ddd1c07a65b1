//! Finds libtvmnode and tells cargo how to link it.
//!
//! Three ways, first match wins, so that an installed library is found with
//! no configuration while tests can point at a build tree:
//!
//! 1. `TVMNODE_BUILD_DIR`: an autotools build tree of this repository (the
//!    library is in `$TVMNODE_BUILD_DIR/libtvmnode/.libs`, the headers in the
//!    source tree that `abs_top_srcdir` in its Makefile names). An rpath is
//!    passed on to dependents so tests run without `LD_LIBRARY_PATH`.
//! 2. `TVMNODE_LIB_DIR` (and optionally `TVMNODE_INCLUDE_DIR`): a directory
//!    holding `libtvmnode.so` or `libtvmnode.a`. `TVMNODE_STATIC=1` links the
//!    static archive (its private dependencies then come from pkg-config).
//! 3. pkg-config, package `tvmnode`.
//!
//! Whichever way, the library and include directories are published to
//! dependents as `DEP_TVMNODE_LIB_DIR` / `DEP_TVMNODE_INCLUDE` (the `links`
//! metadata), and the include directory to this crate's own tests as the
//! compile-time variable `TVMNODE_INCLUDE_DIR` (the layout test needs it).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    for var in [
        "TVMNODE_BUILD_DIR",
        "TVMNODE_LIB_DIR",
        "TVMNODE_INCLUDE_DIR",
        "TVMNODE_STATIC",
        "PKG_CONFIG_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    // docs.rs and similar builders have no C library; declarations suffice.
    if env::var_os("DOCS_RS").is_some() {
        return;
    }
    // Nor has a bare-metal target (no operating system): the crate is
    // `no_std`, and there it is the declarations alone, checked to build.
    if env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "none") {
        println!("cargo:rustc-env=TVMNODE_INCLUDE_DIR=");
        return;
    }

    let (lib_dir, include_dir) = if let Some(build) = env::var_os("TVMNODE_BUILD_DIR") {
        from_build_tree(Path::new(&build))
    } else if let Some(lib) = env::var_os("TVMNODE_LIB_DIR") {
        let lib = PathBuf::from(lib);
        let inc = env::var_os("TVMNODE_INCLUDE_DIR").map(PathBuf::from);
        link_dir(&lib, env::var("TVMNODE_STATIC").is_ok_and(|v| v == "1"));
        (Some(lib), inc)
    } else {
        from_pkg_config()
    };

    if let Some(lib) = &lib_dir {
        println!("cargo:lib_dir={}", lib.display());
        // This crate's own tests link the library too.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
    if let Some(inc) = &include_dir {
        println!("cargo:include={}", inc.display());
        println!("cargo:rustc-env=TVMNODE_INCLUDE_DIR={}", inc.display());
    } else {
        println!("cargo:rustc-env=TVMNODE_INCLUDE_DIR=");
    }
}

fn link_dir(lib: &Path, statik: bool) {
    println!("cargo:rustc-link-search=native={}", lib.display());
    if statik {
        // Whole: runtime/host registers its functions (runtime.Executor, ...)
        // from a constructor that nothing references, which a plain archive
        // link would leave out (C links name it: -Wl,-u,tn__host_init).
        println!("cargo:rustc-link-lib=static:+whole-archive=tvmnode");
        // The archive's own dependencies (GLib, libffi, YAJL).
        for dep in ["glib-2.0", "libffi", "yajl"] {
            if pkg_config::Config::new().probe(dep).is_err() && dep != "yajl" {
                println!("cargo:warning=tvmnode-sys: pkg-config found no {dep}");
            }
        }
        if pkg_config::Config::new().probe("yajl").is_err() {
            println!("cargo:rustc-link-lib=yajl");
        }
        println!("cargo:rustc-link-lib=m");
    } else {
        println!("cargo:rustc-link-lib=dylib=tvmnode");
    }
}

fn from_build_tree(build: &Path) -> (Option<PathBuf>, Option<PathBuf>) {
    let build = build
        .canonicalize()
        .unwrap_or_else(|e| panic!("TVMNODE_BUILD_DIR={}: {e}", build.display()));
    let lib = build.join("libtvmnode").join(".libs");
    if !lib.join("libtvmnode.so").exists() && !lib.join("libtvmnode.a").exists() {
        panic!(
            "TVMNODE_BUILD_DIR={}: no libtvmnode in {} (run make there first)",
            build.display(),
            lib.display()
        );
    }
    println!("cargo:rerun-if-changed={}", lib.join("libtvmnode.so").display());
    link_dir(&lib, false);
    // The headers are in the source tree the build tree was configured from.
    let srcdir = fs::read_to_string(build.join("Makefile"))
        .ok()
        .and_then(|mk| {
            mk.lines()
                .find_map(|l| l.strip_prefix("abs_top_srcdir = ").map(str::to_owned))
        })
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    (Some(lib), Some(srcdir.join("libtvmnode").join("include")))
}

fn from_pkg_config() -> (Option<PathBuf>, Option<PathBuf>) {
    match pkg_config::Config::new().atleast_version("0.1").probe("tvmnode") {
        Ok(lib) => (
            lib.link_paths.first().cloned(),
            lib.include_paths.first().cloned(),
        ),
        Err(e) => panic!(
            "tvmnode-sys: libtvmnode not found.\n\
             Install it (make install) so that pkg-config finds tvmnode.pc, or set\n\
             TVMNODE_BUILD_DIR to a build tree, or TVMNODE_LIB_DIR (+ TVMNODE_INCLUDE_DIR).\n\
             pkg-config said: {e}"
        ),
    }
}
