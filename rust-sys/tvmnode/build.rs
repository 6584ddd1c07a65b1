//! Pass the C library's directory on as an rpath, so that this crate's
//! tests, examples and benches run from a build tree without
//! `LD_LIBRARY_PATH` (tvmnode-sys publishes it as `DEP_TVMNODE_LIB_DIR`),
//! and tell the benches where the library and headers are (they compile a
//! small C harness to measure the C side in the same process).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TVMNODE_LIB_DIR");
    println!("cargo:rerun-if-env-changed=DEP_TVMNODE_INCLUDE");
    let lib = std::env::var("DEP_TVMNODE_LIB_DIR").unwrap_or_default();
    if !lib.is_empty() {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
    println!("cargo:rustc-env=TVMNODE_LIB_DIR={lib}");
    let inc = std::env::var("DEP_TVMNODE_INCLUDE").unwrap_or_default();
    println!("cargo:rustc-env=TVMNODE_INCLUDE_DIR={inc}");
}
