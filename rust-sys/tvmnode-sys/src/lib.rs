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
//!
//! `tests/layout.rs` compiles a C program against the real headers and checks
//! every size and field offset declared here against it.
//!
//! The C header's `static inline` helpers (`tn_any_int`, ...) have no symbol
//! to link; build a [`TnAny`] literal instead.
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
