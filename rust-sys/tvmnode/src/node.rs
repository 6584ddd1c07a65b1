//! The node system from Rust: reflection, generic algorithms, and object
//! types declared in Rust.
//!
//! A binding never hard-codes a field list: [`TypeInfo`] reads the C type
//! table, [`Object::get`](crate::Object::get) and
//! [`Object::set`](crate::Object::set) go through it, and structural equality,
//! hashing, JSON and printing are the C implementations, so they agree with
//! every other language bit for bit.
//!
//! Types declared with [`node!`](macro@crate::node) are ordinary C node types: the
//! macro lays out a `#[repr(C)]` struct (the object header, then one C field
//! per Rust field, each in the storage its [`Field`] kind prescribes) and
//! registers it with `tn_node_register`, with offsets taken by `offset_of!`
//! so they cannot drift from the struct. C code can then get and set the
//! fields by name, build the type with `tn_node_new`, save and load it as
//! JSON, and compare it structurally; Python sees it as a class. Getters
//! read the fields straight out of the struct, with no C call.

use std::ffi::CStr;
use std::os::raw::c_char;

use tvmnode_sys as sys;

use crate::error::{check, check_obj, cstring, str_from_ptr, take_raised, Result};
use crate::object::ObjectType;
use crate::{Any, DataType, Device, Object};

/// The index of a registered type key; `KeyError` if there is none.
pub fn type_index_of(type_key: &str) -> Result<i32> {
    let c = cstring(type_key)?;
    // SAFETY: NUL-terminated key.
    let t = unsafe { sys::tn_type_index(c.as_ptr()) };
    if t < 0 {
        Err(take_raised())
    } else {
        Ok(t)
    }
}

/// How a field is stored and what it holds (`TN_FIELD_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Any value (`TnAny`).
    Any,
    /// An object, of `type_key` if given (`TnObject *`).
    Object,
    /// int64.
    Int,
    /// double.
    Float,
    /// bool (1 byte).
    Bool,
    /// A `tn.String` (`TnObject *`).
    Str,
    /// DataType.
    DataType,
    /// Device.
    Device,
}

impl FieldKind {
    fn from_raw(k: i32) -> FieldKind {
        match k {
            sys::TN_FIELD_OBJ => FieldKind::Object,
            sys::TN_FIELD_INT => FieldKind::Int,
            sys::TN_FIELD_FLOAT => FieldKind::Float,
            sys::TN_FIELD_BOOL => FieldKind::Bool,
            sys::TN_FIELD_STR => FieldKind::Str,
            sys::TN_FIELD_DTYPE => FieldKind::DataType,
            sys::TN_FIELD_DEVICE => FieldKind::Device,
            _ => FieldKind::Any,
        }
    }
}

/// One reflected field of a node type.
#[derive(Clone, Debug)]
pub struct FieldInfo {
    /// Name.
    pub name: &'static str,
    /// Storage kind.
    pub kind: FieldKind,
    /// `sys::TN_FIELD_READONLY | ...`.
    pub flags: i32,
    /// Required type key of an object field.
    pub type_key: Option<&'static str>,
    /// Byte offset in the object.
    pub offset: i64,
    /// Documentation.
    pub doc: &'static str,
}

/// What the type registry knows about a type.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    /// Index.
    pub index: i32,
    /// Key.
    pub key: &'static str,
    /// Parent index, `None` for roots and plain values.
    pub parent: Option<i32>,
    /// Fields, inherited first (empty for types that are not nodes).
    pub fields: Vec<FieldInfo>,
}

impl TypeInfo {
    /// Look a type up by index.
    pub fn of_index(index: i32) -> Result<TypeInfo> {
        // SAFETY: keys and field descriptors live as long as the process.
        unsafe {
            let key = sys::tn_type_key(index);
            if key.is_null() {
                return Err(take_raised());
            }
            let mut parent = -1;
            if sys::tn_type_parent(index, &mut parent) != 0 {
                return Err(take_raised());
            }
            let n = sys::tn_type_field_count(index);
            if n < 0 {
                // Not a node type: no fields (clear the error).
                drop(take_raised());
            }
            let fields = (0..n.max(0))
                .filter_map(|i| sys::tn_type_field_at(index, i).as_ref())
                .map(|d| FieldInfo {
                    name: str_from_ptr(d.name),
                    kind: FieldKind::from_raw(d.kind),
                    flags: d.flags,
                    type_key: (!d.type_key.is_null()).then(|| str_from_ptr(d.type_key)),
                    offset: d.offset,
                    doc: str_from_ptr(d.doc),
                })
                .collect();
            Ok(TypeInfo {
                index,
                key: str_from_ptr(key),
                parent: (parent >= 0).then_some(parent),
                fields,
            })
        }
    }

    /// Look a type up by key.
    pub fn of_key(key: &str) -> Result<TypeInfo> {
        TypeInfo::of_index(type_index_of(key)?)
    }

    /// The type of `T`.
    pub fn of<T: ObjectType>() -> Result<TypeInfo> {
        TypeInfo::of_index(T::type_index())
    }
}

/// Build a node of a registered type from named field values (kw-style);
/// defaults fill the rest, and a missing required field is a `TypeError`.
pub fn node_new(type_index: i32, fields: &[(&str, Any)]) -> Result<Object> {
    let names: Vec<_> = fields.iter().map(|(n, _)| cstring(n)).collect::<Result<_>>()?;
    let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let values: Vec<&sys::TnAny> = fields.iter().map(|(_, v)| v.as_raw()).collect();
    // The values must be contiguous TnAny: copy the borrowed bytes (no
    // ownership changes hands; `fields` keeps owning them).
    let raw: Vec<sys::TnAny> = values.into_iter().copied().collect();
    // SAFETY: `n` names and values, valid for the call.
    check_obj(unsafe { sys::tn_node_new(type_index, name_ptrs.as_ptr(), raw.as_ptr(), raw.len() as i32) })
}

// ---------------------------------------------------------------------------
// Generic algorithms.

/// A readable text form of any value (`tn_repr`).
pub fn repr(value: &Any) -> Result<std::string::String> {
    // SAFETY: valid any; transfer full of a tn.String.
    let s = check_obj(unsafe { sys::tn_repr(value.as_raw()) })?;
    let s: crate::String = s.try_into()?;
    Ok(s.as_str_lossy().into_owned())
}

/// Graphviz DOT for the object graph under `value`.
pub fn to_dot(value: &Any) -> Result<std::string::String> {
    // SAFETY: as for repr.
    let s = check_obj(unsafe { sys::tn_to_dot(value.as_raw()) })?;
    let s: crate::String = s.try_into()?;
    Ok(s.as_str_lossy().into_owned())
}

/// Structural equality (alpha-equivalence for variables defined in the
/// graph; free variables by identity unless `map_free_vars`).
pub fn structural_equal(lhs: &Any, rhs: &Any, map_free_vars: bool) -> Result<bool> {
    // SAFETY: valid anys.
    let r = unsafe { sys::tn_structural_equal(lhs.as_raw(), rhs.as_raw(), map_free_vars as i32) };
    if r < 0 {
        Err(take_raised())
    } else {
        Ok(r == 1)
    }
}

/// Like [`structural_equal`], giving the path of the first difference
/// (`"root.body.args[1].value"`) when they differ.
pub fn structural_diff(lhs: &Any, rhs: &Any, map_free_vars: bool) -> Result<Option<std::string::String>> {
    let mut path: *mut sys::TnObject = std::ptr::null_mut();
    // SAFETY: valid anys; `path` receives a new tn.String or NULL.
    let r =
        unsafe { sys::tn_structural_equal_path(lhs.as_raw(), rhs.as_raw(), map_free_vars as i32, &mut path) };
    if r < 0 {
        return Err(take_raised());
    }
    // SAFETY: transfer full.
    let path = unsafe { Object::from_raw(path) };
    Ok(match path {
        Some(p) if r == 0 => Some(crate::String::try_from(p)?.as_str_lossy().into_owned()),
        _ => None,
    })
}

/// A hash consistent with [`structural_equal`].
pub fn structural_hash(value: &Any, map_free_vars: bool) -> Result<u64> {
    let mut out = 0u64;
    // SAFETY: valid any and out-pointer.
    check(unsafe { sys::tn_structural_hash(value.as_raw(), map_free_vars as i32, &mut out) })?;
    Ok(out)
}

/// Save a whole object graph as JSON (sharing kept; `indent` 0 for one
/// line).
pub fn to_json(value: &Any, indent: i32) -> Result<std::string::String> {
    // SAFETY: valid any; transfer full of a tn.String.
    let s = check_obj(unsafe { sys::tn_json_save(value.as_raw(), indent) })?;
    let s: crate::String = s.try_into()?;
    Ok(s.as_str_lossy().into_owned())
}

/// Load a graph saved by [`to_json`] (or by any other language).
pub fn from_json(text: &str) -> Result<Any> {
    let mut out = Any::none();
    // SAFETY: `text` valid for its length; `out` receives an owned value.
    check(unsafe { sys::tn_json_load(text.as_ptr().cast(), text.len(), out.as_mut_raw()) })?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Rust-declared node types.

/// A Rust type that can be a field of a [`node!`](macro@crate::node) type: it
/// names the C field kind and the storage that kind uses in the object.
///
/// # Safety
/// `Storage` must be exactly the C storage of `KIND` (see `c_api.h`), and
/// `read` must only be called on storage the C side initialised.
pub unsafe trait Field: Sized {
    /// The C storage type (`i64`, `*mut TnObject`, `TnAny`, ...).
    type Storage;
    /// `sys::TN_FIELD_*`.
    const KIND: i32;
    /// Extra flags (`TN_FIELD_OPTIONAL` for `Option<T>`).
    const FLAGS: i32 = 0;
    /// Required type key of an object field.
    fn type_key() -> Option<&'static CStr> {
        None
    }
    /// Read the field out of the object.
    ///
    /// # Safety
    /// `storage` is a field of this kind in a live node.
    unsafe fn read(storage: &Self::Storage) -> Self;
}

unsafe impl Field for i64 {
    type Storage = i64;
    const KIND: i32 = sys::TN_FIELD_INT;
    unsafe fn read(s: &i64) -> i64 {
        *s
    }
}
unsafe impl Field for f64 {
    type Storage = f64;
    const KIND: i32 = sys::TN_FIELD_FLOAT;
    unsafe fn read(s: &f64) -> f64 {
        *s
    }
}
unsafe impl Field for bool {
    type Storage = bool;
    const KIND: i32 = sys::TN_FIELD_BOOL;
    unsafe fn read(s: &bool) -> bool {
        *s
    }
}
unsafe impl Field for DataType {
    type Storage = sys::DLDataType;
    const KIND: i32 = sys::TN_FIELD_DTYPE;
    unsafe fn read(s: &sys::DLDataType) -> DataType {
        DataType(*s)
    }
}
unsafe impl Field for Device {
    type Storage = sys::DLDevice;
    const KIND: i32 = sys::TN_FIELD_DEVICE;
    unsafe fn read(s: &sys::DLDevice) -> Device {
        Device(*s)
    }
}
unsafe impl Field for Any {
    type Storage = sys::TnAny;
    const KIND: i32 = sys::TN_FIELD_ANY;
    const FLAGS: i32 = sys::TN_FIELD_OPTIONAL;
    unsafe fn read(s: &sys::TnAny) -> Any {
        (*(s as *const sys::TnAny as *const Any)).clone()
    }
}
unsafe impl Field for crate::String {
    type Storage = *mut sys::TnObject;
    const KIND: i32 = sys::TN_FIELD_STR;
    unsafe fn read(s: &*mut sys::TnObject) -> crate::String {
        let o = Object::from_borrowed(*s).expect("required string field is NULL");
        crate::String::from_object_unchecked(o)
    }
}

macro_rules! object_fields {
    ($($t:ty),*) => {$(
        impl ObjectField for $t {
            fn type_key_cstr() -> &'static CStr {
                static_cstr(<$t as ObjectType>::TYPE_KEY)
            }
        }
    )*};
}
object_fields!(
    Object,
    crate::Bytes,
    crate::Array,
    crate::Map,
    crate::Shape,
    crate::Tensor,
    crate::Function,
    crate::ir::Type,
    crate::ir::TensorType,
    crate::ir::Expr,
    crate::ir::Var,
    crate::ir::Call,
    crate::ir::Function,
    crate::ir::Module
);
/// An object field of a handle type, checked against its type key by C.
/// Implemented for every handle made with
/// [`object_handle!`](crate::object_handle) or [`node!`](macro@crate::node) via
/// [`ObjectField`].
unsafe impl<T: ObjectField> Field for T {
    type Storage = *mut sys::TnObject;
    const KIND: i32 = sys::TN_FIELD_OBJ;
    fn type_key() -> Option<&'static CStr> {
        Some(T::type_key_cstr())
    }
    unsafe fn read(s: &*mut sys::TnObject) -> T {
        let o = Object::from_borrowed(*s).expect("required object field is NULL");
        T::from_object_unchecked(o)
    }
}

/// An optional object field (None is NULL).
unsafe impl<T: ObjectField> Field for Option<T> {
    type Storage = *mut sys::TnObject;
    const KIND: i32 = sys::TN_FIELD_OBJ;
    const FLAGS: i32 = sys::TN_FIELD_OPTIONAL;
    fn type_key() -> Option<&'static CStr> {
        Some(T::type_key_cstr())
    }
    unsafe fn read(s: &*mut sys::TnObject) -> Option<T> {
        Object::from_borrowed(*s).map(|o| T::from_object_unchecked(o))
    }
}

/// Handle types usable as object fields of Rust-declared nodes: those
/// whose type key is known as a C string.
pub trait ObjectField: ObjectType {
    /// `TYPE_KEY` with a NUL.
    fn type_key_cstr() -> &'static CStr;
}

/// Leak a NUL-terminated copy of a key, once per key (type keys live as long
/// as the process anyway).
#[doc(hidden)]
pub fn static_cstr(s: &'static str) -> &'static CStr {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static KEYS: Mutex<Option<HashMap<&'static str, &'static CStr>>> = Mutex::new(None);
    let mut g = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    let map = g.get_or_insert_with(HashMap::new);
    map.entry(s)
        .or_insert_with(|| Box::leak(cstring(s).expect("type key with NUL").into_boxed_c_str()))
}

/// One field as the [`node!`](macro@crate::node) macro describes it: name,
/// offset, kind, flags, type key, doc. Not for direct use.
#[doc(hidden)]
pub type FieldSpec = (&'static str, usize, i32, i32, Option<&'static CStr>, &'static str);

/// Register a node type whose layout a [`node!`](macro@crate::node) macro
/// computed. Not for direct use.
#[doc(hidden)]
pub fn register_node(
    type_key: &'static str,
    doc: &'static str,
    kind: i32,
    size: usize,
    fields: &[FieldSpec],
) -> Result<i32> {
    let docs: Vec<_> = fields.iter().map(|f| crate::error::cstring_lossy(f.5)).collect();
    let names: Vec<_> = fields.iter().map(|f| cstring(f.0)).collect::<Result<_>>()?;
    let descs: Vec<sys::TnFieldDesc> = fields
        .iter()
        .zip(names.iter().zip(&docs))
        .map(|(f, (name, doc))| sys::TnFieldDesc {
            name: name.as_ptr(),
            offset: f.1 as i64,
            kind: f.2,
            flags: f.3,
            type_key: f.4.map_or(std::ptr::null(), CStr::as_ptr),
            default_value: *Any::none().as_raw(),
            doc: doc.as_ptr(),
        })
        .collect();
    let key = static_cstr(type_key);
    let doc = crate::error::cstring_lossy(doc);
    let desc = sys::TnNodeDesc {
        type_key: key.as_ptr(),
        parent_index: sys::TN_TYPE_OBJECT,
        kind,
        flags: 0,
        size: size as i64,
        fields: descs.as_ptr(),
        nfields: descs.len() as i32,
        doc: doc.as_ptr(),
        deleter: None,
    };
    // SAFETY: the descriptor and everything it points at are valid for the
    // call; the C side copies names, keys and docs.
    let t = unsafe { sys::tn_node_register(&desc) };
    if t < 0 {
        let e = take_raised();
        // Declared already (by an earlier call of ours that lost a race, or
        // by another language with the same key): accept an identical type.
        if let Ok(existing) = type_index_of(type_key) {
            if let Ok(info) = TypeInfo::of_index(existing) {
                if info.fields.len() == fields.len()
                    && info
                        .fields
                        .iter()
                        .zip(fields)
                        .all(|(a, b)| a.name == b.0 && a.offset == b.1 as i64)
                {
                    return Ok(existing);
                }
            }
        }
        return Err(e);
    }
    Ok(t)
}

/// Declare an object type with fields in Rust and register it with the C
/// type table, so that C, Python and JSON see it like any other node type.
///
/// ```
/// tvmnode::node! {
///     /// A labelled point.
///     pub struct Point: "demo.Point" {
///         /// Horizontal position.
///         x: i64,
///         /// Vertical position.
///         y: f64,
///         /// A name for printing.
///         label: tvmnode::String,
///     }
/// }
///
/// let label = tvmnode::String::new("origin")?;
/// let p = Point::new(0, 0.5, label)?;
/// assert_eq!(p.x(), 0);
/// assert_eq!(p.label().as_str()?, "origin");
/// // Generic access by name goes through the C type table:
/// assert_eq!(p.get_as::<f64>("y")?, 0.5);
/// # Ok::<(), tvmnode::Error>(())
/// ```
///
/// Field types: `i64`, `f64`, `bool`, [`DataType`], [`Device`],
/// [`Any`], [`String`](crate::String), any object handle `T`, and
/// `Option<T>` of a handle (optional). The macro generates the handle type
/// (`Point`), a constructor `new` taking every field in order, a getter per
/// field, and `register()` (registration otherwise happens on first use).
/// An optional `kind tree|dag|var|unique` after the key picks how structural
/// equality treats the type (default `tree`).
#[macro_export]
macro_rules! node {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident : $key:literal $(kind $kind:ident)? {
            $( $(#[doc = $fdoc:literal])* $field:ident : $fty:ty ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[repr(transparent)]
        #[derive(Clone, PartialEq, Eq, Hash)]
        $vis struct $name($crate::Object);

        const _: () = {
            #[repr(C)]
            #[allow(dead_code)]
            struct Layout {
                header: $crate::sys::TnObject,
                $( $field: <$fty as $crate::Field>::Storage, )*
            }

            impl $name {
                /// Register the type with the C type table (idempotent);
                /// returns its type index.
                pub fn register() -> $crate::Result<i32> {
                    static INDEX: ::std::sync::OnceLock<i32> = ::std::sync::OnceLock::new();
                    if let Some(t) = INDEX.get() {
                        return Ok(*t);
                    }
                    let fields = [
                        $( (
                            stringify!($field),
                            ::core::mem::offset_of!(Layout, $field),
                            <$fty as $crate::Field>::KIND,
                            <$fty as $crate::Field>::FLAGS,
                            <$fty as $crate::Field>::type_key(),
                            concat!("" $(, $fdoc)*).trim(),
                        ), )*
                    ];
                    let doc = concat!("" $(, $doc)*).trim();
                    let t = $crate::node::register_node(
                        $key,
                        doc,
                        $crate::__node_kind!($($kind)?),
                        ::core::mem::size_of::<Layout>(),
                        &fields,
                    )?;
                    Ok(*INDEX.get_or_init(|| t))
                }

                /// A new node from every field, in declaration order.
                #[allow(clippy::too_many_arguments)]
                pub fn new($( $field: $fty ),*) -> $crate::Result<$name> {
                    let t = Self::register()?;
                    let obj = $crate::node::node_new(t, &[
                        $( (stringify!($field), $crate::IntoAny::into_any($field)), )*
                    ])?;
                    // SAFETY: made as this very type just now.
                    Ok(unsafe { <$name as $crate::ObjectType>::from_object_unchecked(obj) })
                }

                fn layout(&self) -> &Layout {
                    // SAFETY: instances of the type (or subtypes, which start
                    // with this layout) have this layout.
                    unsafe { &*($crate::ObjectType::as_object(self).as_ptr() as *const Layout) }
                }

                $(
                    $(#[doc = $fdoc])*
                    pub fn $field(&self) -> $fty {
                        // SAFETY: the field was initialised by the C side as
                        // this kind (required fields are never left NULL).
                        unsafe { <$fty as $crate::Field>::read(&self.layout().$field) }
                    }
                )*
            }
        };

        // SAFETY: repr(transparent) over Object; the index is this type's.
        unsafe impl $crate::ObjectType for $name {
            const TYPE_KEY: &'static str = $key;
            fn type_index() -> i32 {
                $name::register().unwrap_or_else(|e| panic!("registering {}: {}", $key, e))
            }
            unsafe fn from_object_unchecked(obj: $crate::Object) -> Self {
                $name(obj)
            }
            fn as_object(&self) -> &$crate::Object {
                &self.0
            }
            fn into_object(self) -> $crate::Object {
                self.0
            }
        }

        impl $crate::ObjectField for $name {
            fn type_key_cstr() -> &'static ::std::ffi::CStr {
                $crate::node::static_cstr($key)
            }
        }

        impl ::std::ops::Deref for $name {
            type Target = $crate::Object;
            fn deref(&self) -> &$crate::Object {
                &self.0
            }
        }

        impl ::std::convert::From<$name> for $crate::Object {
            fn from(x: $name) -> $crate::Object {
                x.0
            }
        }
        impl ::std::convert::TryFrom<$crate::Object> for $name {
            type Error = $crate::Error;
            fn try_from(obj: $crate::Object) -> $crate::Result<$name> {
                $crate::downcast_or_error(obj)
            }
        }
        impl $crate::IntoAny for $name {
            fn into_any(self) -> $crate::Any {
                $crate::Any::from_object(self.0)
            }
        }
        impl $crate::IntoAny for &$name {
            fn into_any(self) -> $crate::Any {
                $crate::Any::from_object(self.0.clone())
            }
        }
        impl ::std::convert::From<$name> for $crate::Any {
            fn from(x: $name) -> $crate::Any {
                $crate::Any::from_object(x.0)
            }
        }
        impl ::std::convert::From<&$name> for $crate::Any {
            fn from(x: &$name) -> $crate::Any {
                $crate::Any::from_object(x.0.clone())
            }
        }
        impl $crate::FromAny for $name {
            fn from_any(a: &$crate::Any) -> $crate::Result<$name> {
                a.as_object_of::<$name>()
            }
        }
        impl ::std::convert::TryFrom<$crate::Any> for $name {
            type Error = $crate::Error;
            fn try_from(a: $crate::Any) -> $crate::Result<$name> {
                a.into_object_of::<$name>()
            }
        }
        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __node_kind {
    () => {
        $crate::sys::TN_NODE_TREE
    };
    (tree) => {
        $crate::sys::TN_NODE_TREE
    };
    (dag) => {
        $crate::sys::TN_NODE_DAG
    };
    (var) => {
        $crate::sys::TN_NODE_VAR
    };
    (unique) => {
        $crate::sys::TN_NODE_UNIQUE
    };
}
