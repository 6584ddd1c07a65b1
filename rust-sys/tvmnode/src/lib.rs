//! Safe Rust binding of tvmnode: refcounted objects, packed functions, a
//! global function registry, reflected node types, the tensor IR and passes,
//! shared with C, Python and Go in one process.
//!
//! # Shape of the API
//!
//! * **Handles.** Every object is held by a handle that owns one strong
//!   reference: `Clone` retains, `Drop` releases ([`Object`], and typed
//!   handles such as [`Array`], [`Function`], [`ir::Call`]). Typed handles
//!   deref to their parent type and downcast with a check against the C type
//!   registry (see [`object`]).
//! * **Values.** [`Any`] is the C `TnAny` itself, so argument arrays cross
//!   the boundary without conversion; [`IntoAny`]/[`FromAny`] (and the
//!   `From`/`TryFrom` impls built on them) convert Rust values.
//! * **Errors.** Every fallible call returns [`Result`]; [`Error`] wraps the
//!   C error object (kind, message, frames, cause), so an error keeps its
//!   identity across languages, and gains a Rust frame at each crossing.
//! * **Functions.** [`Function::call`] calls anything in the registry with a
//!   tuple of Rust values; [`register_global`] and [`Function::from_fn`] make
//!   Rust closures callable from C, every call wrapped in `catch_unwind`.
//! * **Nodes.** [`node!`](macro@node) declares a node type with fields in Rust that C
//!   and Python see; reflection, structural equality, JSON and printing are
//!   the C implementations ([`node`](mod@node)).
//! * **IR.** [`ir`] reads and builds IR nodes and writes passes in Rust.
//!
//! ```no_run
//! use tvmnode::{Array, Function, Result};
//!
//! fn main() -> Result<()> {
//!     // C function, called from Rust.
//!     let add = Function::get_global("testing.add_i64")?;
//!     let three: i64 = add.call((1, 2))?;
//!     // Rust closure, registered so C can call it.
//!     tvmnode::register_global("demo.twice", |x: i64| x * 2)?;
//!     let twice = Function::get_global("demo.twice")?;
//!     assert_eq!(twice.call::<_, i64>((three,))?, 6);
//!     // Containers.
//!     let a: Array = (1..=3).collect();
//!     assert_eq!(a.to_vec::<i64>()?, vec![1, 2, 3]);
//!     Ok(())
//! }
//! ```
//!
//! # Threads
//!
//! Handles to immutable objects are `Send + Sync` (counts are atomic in C),
//! and so are [`Object`] and [`Any`]. The mutable containers [`List`] and
//! [`Dict`] are neither `Send` nor `Sync`, but since a generic handle may
//! still hold one on another thread, what makes them sound is one rule: a
//! list or dict is changed in place only through `&mut` on a handle that is
//! its only reference ([`Object::is_unique`]), and is refused otherwise;
//! changing a shared one is `unsafe`. See [`object`](object#threads) for the
//! reasoning and the compile-fail examples.
#![warn(missing_docs)]

pub use tvmnode_sys as sys;

pub mod any;
pub mod array;
pub mod dtype;
pub mod error;
pub mod function;
pub mod ir;
pub mod map;
pub mod node;
pub mod object;
pub mod runtime;
pub mod string;
pub mod tensor;

pub use any::{Any, FromAny, IntoAny};
pub use array::{Array, List};
pub use dtype::{DataType, Device};
pub use error::{Error, ErrorKind, Result};
pub use function::{register_global, CClosure, Function, IntoArgs, IntoFunction, IntoReturn};
pub use map::{Dict, Map};
pub use node::{
    from_json, repr, structural_diff, structural_equal, structural_hash, to_dot, to_json, type_index_of,
    Field, FieldInfo, FieldKind, ObjectField, TypeInfo,
};
#[doc(hidden)]
pub use object::downcast_or_error;
pub use object::{Object, ObjectType, WeakObject};
pub use string::{Bytes, String};
pub use tensor::{Element, Shape, Tensor};

/// Number of objects alive in the process, over all threads and types (what
/// tests compare before and after).
pub fn live_object_count() -> i64 {
    // SAFETY: no arguments.
    unsafe { sys::tn_object_live_count() }
}

/// Alive objects of one exact type; an error unless the C library was built
/// with `--enable-debug`.
pub fn live_object_count_by_type(type_index: i32) -> Result<i64> {
    // SAFETY: plain argument.
    let n = unsafe { sys::tn_object_live_count_by_type(type_index) };
    if n < 0 {
        Err(error::take_raised())
    } else {
        Ok(n)
    }
}

/// The C library's version (`"MAJOR.MINOR.PATCH"`).
pub fn version() -> &'static str {
    // SAFETY: a static string.
    unsafe { error::str_from_ptr(sys::tn_version()) }
}

/// Whether the loaded library speaks the ABI major version these bindings
/// were written for.
pub fn abi_compatible() -> bool {
    // SAFETY: no arguments.
    unsafe { sys::tn_abi_version() / 1000 == sys::TN_ABI_VERSION_MAJOR }
}

/// The usual imports: traits needed for method syntax and conversions.
pub mod prelude {
    pub use crate::{Any, Error, ErrorKind, FromAny, IntoAny, ObjectType, Result};
}
