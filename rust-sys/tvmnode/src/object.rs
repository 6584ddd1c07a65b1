//! Object handles: `Clone` takes a strong reference, `Drop` releases it.
//!
//! Every tvmnode object starts with the same 24-byte header (refcount, type
//! index, deleter), so one handle type, [`Object`], can own any of them. Each
//! concrete type ([`Array`](crate::Array), [`ir::Call`](crate::ir::Call),
//! ...) is a `#[repr(transparent)]` newtype around its *parent's* handle:
//! `Call(Expr)`, `Expr(Object)`. That gives, with no unsafe code per type,
//!
//! * `Deref` to the parent, so a `Call` can be used wherever an `&Expr` or
//!   `&Object` is wanted and every method of the parent is available;
//! * `Clone` and `Drop` from [`Object`], i.e. exactly one retain or release;
//! * checked downcasts ([`Object::downcast`], `TryFrom<Object>`) that ask the
//!   C type registry whether the object is an instance of the type *or of a
//!   subtype* (an O(1) check in C), so a Rust handle can never be attached to
//!   an object of another layout.
//!
//! # Threads
//!
//! The C library updates reference counts atomically, its type registry and
//! function registry are safe to use from any thread, and objects that are
//! immutable once built (strings, arrays, maps, shapes, functions, errors, IR
//! nodes) may be read from many threads at once. Handles to those are `Send`
//! and `Sync`, and so are [`Object`] and [`Any`], which may hold anything.
//!
//! `tn.List` and `tn.Dict` are the exception: they are changed in place, for
//! every holder, with no lock of their own. Rust's types cannot keep them on
//! one thread, because they cannot see who else holds one: an [`Object`] or
//! [`Any`] may hold a list, and so may an array item, a map value, a node
//! field, a callback argument or a reference kept by C or Python, all of
//! which cross threads freely and can be *read* there (printed, hashed,
//! iterated by C) while another thread changes the list. Closing every such
//! path in the types would mean that no `Send` value could ever contain a
//! list. So the rule is about the change, not the handle:
//!
//! > **A list or dict is changed in place only through `&mut` on a handle
//! > that is the only reference to it, strong or weak**
//! > ([`Object::is_unique`]); otherwise the change is refused with a
//! > `RuntimeError`.
//!
//! The reference count says no other handle, Rust, C or Python, exists on
//! any thread, and `&mut` says no borrow of this one does (not even a
//! `&Object` lent to a scoped thread through `Deref`); no one can take a new
//! reference without already having one. This is the rule [`Object::set`]
//! follows for node fields and the one copy-on-write [`Array`](crate::Array)
//! and [`Map`](crate::Map) follow (which copy instead of refusing). It holds
//! whatever path produced the handle, so every path that yields a
//! [`List`](crate::List) or [`Dict`](crate::Dict) stays safe as it is:
//! downcasting an [`Object`], converting an [`Any`], reading a field or an
//! item, a callback argument. A list received from elsewhere (a callback
//! argument from Python, a value read out of a node) has other references,
//! so changing it is `unsafe` (`List::push_shared` and its siblings, like
//! [`Object::set_shared`]): the caller promises the C rule, that no other
//! thread reads or writes it meanwhile.
//!
//! On top of that, [`List`](crate::List) and [`Dict`](crate::Dict) handles
//! are neither `Send` nor `Sync`, like `Rc`. Soundness does not rest on it
//! (the rule above would make `Send` sound: a handle moved while unique is
//! still unique, and clones sent to two threads make neither unique), but
//! it keeps a mutable container, and every clone of its handle, on the
//! thread that holds it, so the `unsafe` shared changes only have to reason
//! about holders outside Rust's handles; moving one to another thread is an
//! explicit conversion to [`Object`] or [`Any`] and a downcast back, and the
//! list is changeable there only if it was handed over whole.
//!
//! ```compile_fail,E0277
//! let list = tvmnode::List::new(&[]).unwrap();
//! std::thread::spawn(move || list.len()); // List is not Send
//! ```
//!
//! ```compile_fail,E0277
//! let list = tvmnode::List::new(&[]).unwrap();
//! std::thread::scope(|s| {
//!     s.spawn(|| list.len()); // List is not Sync
//! });
//! ```
//!
//! ```compile_fail,E0277
//! let dict = tvmnode::Dict::new([("k", 1i64)]).unwrap();
//! std::thread::spawn(move || dict.len()); // Dict is not Send
//! ```
//!
//! ```compile_fail,E0277
//! let dict = tvmnode::Dict::new([("k", 1i64)]).unwrap();
//! std::thread::scope(|s| {
//!     s.spawn(|| dict.len()); // Dict is not Sync
//! });
//! ```
//!
//! ```compile_fail,E0596
//! let list = tvmnode::List::new(&[]).unwrap();
//! list.push(1i64).unwrap(); // changing needs `&mut`
//! ```
//!
//! The same moves with an [`Array`](crate::Array), and a list handed over
//! whole through an [`Object`], compile and run:
//!
//! ```
//! use tvmnode::{Array, List, Object};
//!
//! let array: Array = (1..=3).collect();
//! let sum = std::thread::spawn(move || array.to_vec::<i64>().unwrap().iter().sum::<i64>());
//! assert_eq!(sum.join().unwrap(), 6);
//!
//! let mut list = List::new(&[]).unwrap();
//! list.push(1i64).unwrap();
//! let whole: Object = list.into();
//! let back = std::thread::spawn(move || {
//!     let mut list: List = whole.try_into().unwrap();
//!     list.push(2i64).unwrap(); // the only reference: allowed
//!     Object::from(list)
//! });
//! let list: List = back.join().unwrap().try_into().unwrap();
//! assert_eq!(list.to_vec::<i64>().unwrap(), [1, 2]);
//! ```

use std::fmt;
use std::ptr::NonNull;

use tvmnode_sys as sys;

use crate::error::{check, cstring, str_from_ptr, Error, ErrorKind, Result};
use crate::Any;

/// An owned strong reference to a tvmnode object of any type.
#[repr(transparent)]
pub struct Object {
    ptr: NonNull<sys::TnObject>,
}

// SAFETY: see the module docs: counts are atomic, objects other than lists
// and dicts are immutable once shared, and lists and dicts are changed in
// place only through a unique handle borrowed mutably.
unsafe impl Send for Object {}
unsafe impl Sync for Object {}

impl Object {
    /// Take over a (transfer full) reference; `None` for NULL.
    ///
    /// # Safety
    /// `p` is NULL or a live object whose strong reference the caller owns and
    /// gives away.
    #[inline]
    pub unsafe fn from_raw(p: *mut sys::TnObject) -> Option<Object> {
        NonNull::new(p).map(|ptr| Object { ptr })
    }

    /// Take a new reference to a borrowed (transfer none) object; `None` for
    /// NULL.
    ///
    /// # Safety
    /// `p` is NULL or a live object.
    #[inline]
    pub unsafe fn from_borrowed(p: *mut sys::TnObject) -> Option<Object> {
        let ptr = NonNull::new(p)?;
        sys::tn_object_retain(p);
        Some(Object { ptr })
    }

    /// Give up the handle without releasing: the caller now owns the
    /// reference (transfer full to C).
    #[inline]
    pub fn into_raw(self) -> *mut sys::TnObject {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The object pointer, borrowed (transfer none) for as long as `self`.
    #[inline]
    pub fn as_ptr(&self) -> *mut sys::TnObject {
        self.ptr.as_ptr()
    }

    /// The object's type index.
    #[inline]
    pub fn type_index(&self) -> i32 {
        // SAFETY: the header is readable while we hold a reference.
        unsafe { (*self.ptr.as_ptr()).type_index }
    }

    /// The object's type key (`"tn.Array"`, `"ir.Call"`, ...).
    pub fn type_key(&self) -> &'static str {
        // SAFETY: type keys live as long as the process.
        unsafe { str_from_ptr(sys::tn_object_type_key(self.as_ptr())) }
    }

    /// Whether the object is an instance of `T` or of a subtype of `T`.
    #[inline]
    pub fn is<T: ObjectType>(&self) -> bool {
        self.is_instance_of(T::type_index())
    }

    /// Whether the object is an instance of the type with this index.
    #[inline]
    pub fn is_instance_of(&self, type_index: i32) -> bool {
        // SAFETY: live object.
        unsafe { sys::tn_object_is_instance(self.as_ptr(), type_index) != 0 }
    }

    /// Checked downcast; gives the object back when it is not a `T`.
    pub fn downcast<T: ObjectType>(self) -> std::result::Result<T, Object> {
        if self.is::<T>() {
            // SAFETY: checked against the type registry just now.
            Ok(unsafe { T::from_object_unchecked(self) })
        } else {
            Err(self)
        }
    }

    /// Checked downcast of a borrowed handle.
    pub fn downcast_ref<T: ObjectType>(&self) -> Option<&T> {
        if self.is::<T>() {
            // SAFETY: every handle is repr(transparent) over Object, and the
            // type was checked.
            Some(unsafe { &*(self as *const Object as *const T) })
        } else {
            None
        }
    }

    /// Current strong count (for tests and debugging).
    pub fn strong_count(&self) -> u32 {
        // SAFETY: live object.
        unsafe { sys::tn_object_strong_count(self.as_ptr()) }
    }

    /// Whether this handle is the only reference of any kind, strong or
    /// weak, so the object may be changed in place without anyone else
    /// seeing it. The C library reads both counts in one atomic load
    /// (`tn_object_is_unique`), so the answer is never a mix of two moments.
    pub fn is_unique(&self) -> bool {
        // SAFETY: live object.
        unsafe { sys::tn_object_is_unique(self.as_ptr()) != 0 }
    }

    /// Whether two handles refer to the very same object.
    #[inline]
    pub fn same_as(&self, other: &Object) -> bool {
        self.ptr == other.ptr
    }

    /// A weak reference, which keeps the memory but not the object alive.
    pub fn downgrade(&self) -> WeakObject {
        // SAFETY: live object.
        unsafe { sys::tn_object_weak_retain(self.as_ptr()) };
        WeakObject { ptr: self.ptr }
    }

    /// Read a reflected field by name (`node.attr` in Python).
    pub fn get(&self, field: &str) -> Result<Any> {
        let name = cstring(field)?;
        let mut out = Any::none();
        // SAFETY: live object, NUL-terminated name, `out` receives an owned
        // value.
        check(unsafe { sys::tn_node_get(self.as_ptr(), name.as_ptr(), out.as_mut_raw()) })?;
        Ok(out)
    }

    /// Read a reflected field and convert it.
    pub fn get_as<T: crate::FromAny>(&self, field: &str) -> Result<T> {
        T::from_any(&self.get(field)?)
    }

    /// Write a reflected field, checked by the C side against the field's
    /// kind and type. Refused with a `RuntimeError` unless this handle is the
    /// only reference (nodes are shared and read without locks; build a new
    /// node instead, or see [`Object::set_shared`]).
    pub fn set(&mut self, field: &str, value: impl Into<Any>) -> Result<()> {
        if !self.is_unique() {
            return Err(Error::new(
                ErrorKind::RuntimeError,
                format!(
                    "cannot set field '{field}' of a shared {} (it has other references)",
                    self.type_key()
                ),
            ));
        }
        // SAFETY: unique, so no other reader exists.
        unsafe { self.set_shared(field, value) }
    }

    /// Write a reflected field of a possibly shared object.
    ///
    /// # Safety
    /// No other thread may read or write this object's fields during the
    /// call (the C library takes no lock for fields).
    pub unsafe fn set_shared(&self, field: &str, value: impl Into<Any>) -> Result<()> {
        let name = cstring(field)?;
        let value = value.into();
        check(sys::tn_node_set(self.as_ptr(), name.as_ptr(), value.as_raw()))
    }
}

impl Clone for Object {
    #[inline]
    fn clone(&self) -> Object {
        // SAFETY: live object.
        unsafe { sys::tn_object_retain(self.as_ptr()) };
        Object { ptr: self.ptr }
    }
}

impl Drop for Object {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: we own one strong reference.
        unsafe { sys::tn_object_release(self.ptr.as_ptr()) }
    }
}

impl PartialEq for Object {
    /// Identity, as Map keys compare objects. Use
    /// [`structural_equal`](crate::structural_equal) for content.
    fn eq(&self, other: &Object) -> bool {
        self.same_as(other)
    }
}
impl Eq for Object {}

impl std::hash::Hash for Object {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ptr.hash(state)
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Object {
    /// The C printer's text (`tn_repr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::repr(&Any::from(self)) {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "<{} at {:p}>", self.type_key(), self.ptr),
        }
    }
}

/// A weak reference to an object: [`WeakObject::upgrade`] gives a strong
/// handle while the object is alive.
pub struct WeakObject {
    ptr: NonNull<sys::TnObject>,
}

// SAFETY: weak counts are atomic too.
unsafe impl Send for WeakObject {}
unsafe impl Sync for WeakObject {}

impl WeakObject {
    /// A strong handle, or `None` once the object has died.
    pub fn upgrade(&self) -> Option<Object> {
        // SAFETY: the weak reference keeps the header readable.
        unsafe { Object::from_raw(sys::tn_object_weak_upgrade(self.ptr.as_ptr())) }
    }
}

impl Clone for WeakObject {
    fn clone(&self) -> WeakObject {
        // SAFETY: we hold a weak reference.
        unsafe { sys::tn_object_weak_retain(self.ptr.as_ptr()) };
        WeakObject { ptr: self.ptr }
    }
}

impl Drop for WeakObject {
    fn drop(&mut self) {
        // SAFETY: we own one weak reference.
        unsafe { sys::tn_object_weak_release(self.ptr.as_ptr()) }
    }
}

impl fmt::Debug for WeakObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WeakObject({:p})", self.ptr)
    }
}

/// A handle type for one object type of the registry.
///
/// # Safety
/// Implementors must be `#[repr(transparent)]` over [`Object`] (directly or
/// through their parent's handle), and `type_index` must be the index of an
/// object type whose instances have the layout the implementor's methods
/// assume. The [`object_handle!`](crate::object_handle) macro does this.
pub unsafe trait ObjectType: Sized + Clone {
    /// The type key in the registry (`"tn.Array"`).
    const TYPE_KEY: &'static str;

    /// The type index (registering the type on first use if it is declared
    /// in Rust).
    fn type_index() -> i32;

    /// Wrap an object without checking its type.
    ///
    /// # Safety
    /// `obj` must be an instance of `Self::type_index()` or of a subtype.
    unsafe fn from_object_unchecked(obj: Object) -> Self;

    /// The handle as a plain [`Object`].
    fn as_object(&self) -> &Object;

    /// The handle as a plain [`Object`], by value.
    fn into_object(self) -> Object;
}

// SAFETY: Object is itself, and every object is an instance of tn.Object.
unsafe impl ObjectType for Object {
    const TYPE_KEY: &'static str = "tn.Object";
    #[inline]
    fn type_index() -> i32 {
        sys::TN_TYPE_OBJECT
    }
    #[inline]
    unsafe fn from_object_unchecked(obj: Object) -> Object {
        obj
    }
    #[inline]
    fn as_object(&self) -> &Object {
        self
    }
    #[inline]
    fn into_object(self) -> Object {
        self
    }
}

pub(crate) fn type_mismatch(expected: &str, got: &str) -> Error {
    Error::new(ErrorKind::TypeError, format!("expected {expected}, got {got}"))
}

/// Declare a handle type for an object type of the registry.
///
/// ```
/// # use tvmnode::{object_handle, Object};
/// object_handle! {
///     /// A handle to `tn.Module` objects.
///     pub struct MyModule: Object, key "tn.Module", index tvmnode::sys::TN_TYPE_MODULE;
/// }
/// ```
///
/// `index` is an expression giving the type index (append `, unsync` for a
/// handle that is neither `Send` nor `Sync`); use
/// `lookup` instead of `index EXPR` to find it by key in the registry (once,
/// then cached), for types that C code registers at load time. The handle
/// derefs to its parent, converts into [`Object`] and [`Any`](crate::Any),
/// and converts from them with a checked downcast.
#[macro_export]
macro_rules! object_handle {
    ($(#[$meta:meta])* $vis:vis struct $name:ident : $parent:ty, key $key:literal, lookup;) => {
        $crate::object_handle! {
            $(#[$meta])* $vis struct $name: $parent, key $key, index {
                static INDEX: ::std::sync::OnceLock<i32> = ::std::sync::OnceLock::new();
                *INDEX.get_or_init(|| $crate::type_index_of($key).unwrap_or_else(|e| {
                    panic!("type {} is not registered: {}", $key, e)
                }))
            };
        }
    };
    ($(#[$meta:meta])* $vis:vis struct $name:ident : $parent:ty, key $key:literal, index $index:expr;) => {
        $crate::object_handle! {
            @impl [()] $(#[$meta])* $vis struct $name: $parent, key $key, index $index;
        }
    };
    ($(#[$meta:meta])* $vis:vis struct $name:ident : $parent:ty, key $key:literal, index $index:expr, unsync;) => {
        $crate::object_handle! {
            @impl [::std::marker::PhantomData<*const ()>]
            $(#[$meta])* $vis struct $name: $parent, key $key, index $index;
        }
    };
    (@impl [$marker:ty] $(#[$meta:meta])* $vis:vis struct $name:ident : $parent:ty, key $key:literal, index $index:expr;) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, PartialEq, Eq, Hash)]
        $vis struct $name($parent, $marker);

        // SAFETY: repr(transparent) over the parent handle, which is itself
        // transparent over Object; the index is the registry's.
        unsafe impl $crate::ObjectType for $name {
            const TYPE_KEY: &'static str = $key;
            #[inline]
            fn type_index() -> i32 {
                $index
            }
            #[inline]
            unsafe fn from_object_unchecked(obj: $crate::Object) -> Self {
                // SAFETY: forwarded from the caller.
                $name(unsafe { <$parent as $crate::ObjectType>::from_object_unchecked(obj) }, Default::default())
            }
            #[inline]
            fn as_object(&self) -> &$crate::Object {
                <$parent as $crate::ObjectType>::as_object(&self.0)
            }
            #[inline]
            fn into_object(self) -> $crate::Object {
                <$parent as $crate::ObjectType>::into_object(self.0)
            }
        }

        impl ::std::ops::Deref for $name {
            type Target = $parent;
            #[inline]
            fn deref(&self) -> &$parent {
                &self.0
            }
        }

        impl ::std::convert::From<$name> for $crate::Object {
            #[inline]
            fn from(x: $name) -> $crate::Object {
                $crate::ObjectType::into_object(x)
            }
        }

        impl ::std::convert::TryFrom<$crate::Object> for $name {
            type Error = $crate::Error;
            fn try_from(obj: $crate::Object) -> $crate::Result<$name> {
                $crate::downcast_or_error(obj)
            }
        }

        impl $crate::IntoAny for $name {
            #[inline]
            fn into_any(self) -> $crate::Any {
                $crate::Any::from_object($crate::ObjectType::into_object(self))
            }
        }

        impl $crate::IntoAny for &$name {
            #[inline]
            fn into_any(self) -> $crate::Any {
                $crate::Any::from_object($crate::ObjectType::as_object(self).clone())
            }
        }

        impl ::std::convert::From<$name> for $crate::Any {
            #[inline]
            fn from(x: $name) -> $crate::Any {
                $crate::IntoAny::into_any(x)
            }
        }

        impl ::std::convert::From<&$name> for $crate::Any {
            #[inline]
            fn from(x: &$name) -> $crate::Any {
                $crate::IntoAny::into_any(x)
            }
        }

        impl $crate::FromAny for $name {
            #[inline]
            fn from_any(a: &$crate::Any) -> $crate::Result<$name> {
                a.as_object_of::<$name>()
            }
        }

        impl ::std::convert::TryFrom<$crate::Any> for $name {
            type Error = $crate::Error;
            #[inline]
            fn try_from(a: $crate::Any) -> $crate::Result<$name> {
                a.into_object_of::<$name>()
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt($crate::ObjectType::as_object(self), f)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt($crate::ObjectType::as_object(self), f)
            }
        }
    };
}

/// A checked downcast with a `TypeError` naming both types.
#[doc(hidden)]
pub fn downcast_or_error<T: ObjectType>(obj: Object) -> Result<T> {
    obj.downcast::<T>()
        .map_err(|o| type_mismatch(T::TYPE_KEY, o.type_key()))
}
