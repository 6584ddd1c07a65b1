//! `Any`: the 16-byte tagged value every argument, return and container
//! element is made of.
//!
//! [`Any`] is `#[repr(transparent)]` over the C `TnAny`, so a slice of them
//! *is* the argument array of a packed call, with no conversion either way:
//! a Rust closure called from C receives C's arguments as `&[Any]`, and a
//! call from Rust hands C a pointer into a Rust array.
//!
//! An owned `Any` never holds a borrowed C form (a raw `const char *`, raw
//! bytes): those are turned into owned values (an inline small string of up
//! to 7 bytes, or a `tn.String`) when an `Any` is made or cloned. Only the
//! borrowed arguments a packed function receives may hold raw forms, and they
//! are only ever seen as `&Any`, for the duration of the call.
//!
//! Conversions go through two traits rather than bare `From`/`TryFrom`, so
//! that one generic bound covers every argument and return type of a typed
//! function: [`IntoAny`] (Rust value → `Any`) and [`FromAny`] (`&Any` → Rust
//! value, checked). `From`/`TryFrom` impls are provided on top of them for
//! every supported type.

use std::borrow::Cow;
use std::fmt;
use std::os::raw::c_char;

use tvmnode_sys as sys;

use crate::error::{check, check_obj, Error, ErrorKind, Result};
use crate::object::{type_mismatch, Object, ObjectType};
use crate::{DataType, Device};

/// An owned tagged value: None, bool, int, float, DataType, Device, an opaque
/// pointer, a string or bytes, or a reference to an object.
#[repr(transparent)]
pub struct Any(sys::TnAny);

// SAFETY: an owned Any holds plain values, inline bytes or an object
// reference; see object.rs for objects. An opaque pointer is only an address.
unsafe impl Send for Any {}
unsafe impl Sync for Any {}

impl Any {
    /// None.
    #[inline]
    pub const fn none() -> Any {
        Any(sys::TnAny {
            type_index: sys::TN_TYPE_NONE,
            small_len: 0,
            v: sys::TnAnyValue { v_int64: 0 },
        })
    }

    #[inline]
    fn plain(type_index: i32, v: sys::TnAnyValue) -> Any {
        Any(sys::TnAny {
            type_index,
            small_len: 0,
            v,
        })
    }

    /// An int.
    #[inline]
    pub fn from_i64(v: i64) -> Any {
        Any::plain(sys::TN_TYPE_INT, sys::TnAnyValue { v_int64: v })
    }

    /// A float.
    #[inline]
    pub fn from_f64(v: f64) -> Any {
        Any::plain(sys::TN_TYPE_FLOAT, sys::TnAnyValue { v_float64: v })
    }

    /// A bool.
    #[inline]
    pub fn from_bool(v: bool) -> Any {
        Any::plain(sys::TN_TYPE_BOOL, sys::TnAnyValue { v_int64: v as i64 })
    }

    /// An opaque pointer (None for NULL). The pointer is not owned.
    pub fn from_ptr(p: *mut std::ffi::c_void) -> Any {
        if p.is_null() {
            Any::none()
        } else {
            Any::plain(sys::TN_TYPE_OPAQUE_PTR, sys::TnAnyValue { v_ptr: p })
        }
    }

    /// A string: inline up to 7 bytes, otherwise a new `tn.String`.
    pub fn from_text(s: &str) -> Any {
        Any::from_bytes_kind(s.as_bytes(), false)
    }

    /// Bytes: inline up to 7 bytes, otherwise a new `tn.Bytes`.
    pub fn from_bytes(b: &[u8]) -> Any {
        Any::from_bytes_kind(b, true)
    }

    fn from_bytes_kind(b: &[u8], bytes: bool) -> Any {
        if b.len() <= sys::TN_SMALL_STR_MAX as usize {
            let mut small = [0 as c_char; 8];
            for (d, s) in small.iter_mut().zip(b) {
                *d = *s as c_char;
            }
            return Any(sys::TnAny {
                type_index: if bytes {
                    sys::TN_TYPE_SMALL_BYTES
                } else {
                    sys::TN_TYPE_SMALL_STR
                },
                small_len: b.len() as u32,
                v: sys::TnAnyValue { v_small: small },
            });
        }
        // SAFETY: `b` is valid for its length; the result is transfer full.
        let p = unsafe {
            if bytes {
                sys::tn_bytes_new(b.as_ptr().cast(), b.len())
            } else {
                sys::tn_string_new(b.as_ptr().cast(), b.len())
            }
        };
        Any::from_object(check_obj(p).expect("out of memory making a string"))
    }

    /// A reference to an object (taking over the handle's reference).
    #[inline]
    pub fn from_object(obj: Object) -> Any {
        let ti = obj.type_index();
        Any::plain(
            ti,
            sys::TnAnyValue {
                v_obj: obj.into_raw(),
            },
        )
    }

    /// Take over a C value (transfer full).
    ///
    /// # Safety
    /// `raw` must be owned by the caller and hold no borrowed form (raw
    /// string, raw bytes).
    #[inline]
    pub unsafe fn from_raw(raw: sys::TnAny) -> Any {
        Any(raw)
    }

    /// Give the value to C (transfer full).
    #[inline]
    pub fn into_raw(self) -> sys::TnAny {
        let raw = sys::TnAny { ..self.0 };
        std::mem::forget(self);
        raw
    }

    /// Borrow as a C value (transfer none).
    #[inline]
    pub fn as_raw(&self) -> &sys::TnAny {
        &self.0
    }

    /// Borrow mutably as a C out-parameter. Whatever it held must be released
    /// first: use on a None value.
    #[inline]
    pub(crate) fn as_mut_raw(&mut self) -> *mut sys::TnAny {
        &mut self.0
    }

    /// View C's borrowed argument array as `&[Any]`.
    ///
    /// # Safety
    /// `args` points at `n` valid values that outlive `'a`.
    #[inline]
    pub unsafe fn slice_from_raw<'a>(args: *const sys::TnAny, n: usize) -> &'a [Any] {
        if n == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(args.cast::<Any>(), n)
        }
    }

    /// The type index of the value (`sys::TN_TYPE_INT`, an object's type...).
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    /// The type key of the value: `"int"`, `"float"`, `"tn.Array"`, ...
    pub fn type_key(&self) -> &'static str {
        // SAFETY: type keys live as long as the process.
        unsafe { crate::error::str_from_ptr(sys::tn_any_type_key(&self.0)) }
    }

    /// Whether the value is None.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.0.type_index == sys::TN_TYPE_NONE
    }

    /// Whether the value holds an object.
    #[inline]
    pub fn is_object(&self) -> bool {
        self.0.type_index >= sys::TN_TYPE_STATIC_OBJECT_BEGIN
    }

    /// The int (a bool counts as 0 or 1).
    #[inline]
    pub fn as_i64(&self) -> Result<i64> {
        let t = self.0.type_index;
        if t == sys::TN_TYPE_INT || t == sys::TN_TYPE_BOOL {
            // SAFETY: the tag says v_int64 is active.
            Ok(unsafe { self.0.v.v_int64 })
        } else {
            Err(self.mismatch("int"))
        }
    }

    /// The float (ints and bools convert).
    #[inline]
    pub fn as_f64(&self) -> Result<f64> {
        let t = self.0.type_index;
        // SAFETY: each arm reads the member its tag says is active.
        unsafe {
            if t == sys::TN_TYPE_FLOAT {
                Ok(self.0.v.v_float64)
            } else if t == sys::TN_TYPE_INT || t == sys::TN_TYPE_BOOL {
                Ok(self.0.v.v_int64 as f64)
            } else {
                Err(self.mismatch("float"))
            }
        }
    }

    /// The bool (ints convert: non-zero is true).
    pub fn as_bool(&self) -> Result<bool> {
        let mut out = 0;
        // SAFETY: valid any and out-pointer.
        check(unsafe { sys::tn_any_as_bool(&self.0, &mut out) }).map_err(|_| self.mismatch("bool"))?;
        Ok(out != 0)
    }

    /// The DataType (strings such as `"float32"` parse).
    pub fn as_dtype(&self) -> Result<DataType> {
        let mut out = DataType::VOID.0;
        // SAFETY: valid any and out-pointer.
        check(unsafe { sys::tn_any_as_dtype(&self.0, &mut out) })?;
        Ok(DataType(out))
    }

    /// The Device.
    pub fn as_device(&self) -> Result<Device> {
        let mut out = Device::cpu(0).0;
        // SAFETY: valid any and out-pointer.
        check(unsafe { sys::tn_any_as_device(&self.0, &mut out) }).map_err(|_| self.mismatch("Device"))?;
        Ok(Device(out))
    }

    /// The opaque pointer (None gives NULL).
    pub fn as_ptr(&self) -> Result<*mut std::ffi::c_void> {
        let mut out = std::ptr::null_mut();
        // SAFETY: valid any and out-pointer.
        check(unsafe { sys::tn_any_as_ptr(&self.0, &mut out) }).map_err(|_| self.mismatch("void*"))?;
        Ok(out)
    }

    /// A string's bytes, from any string form (raw, inline or `tn.String`),
    /// borrowed from the value.
    pub fn as_str_bytes(&self) -> Result<&[u8]> {
        let mut data: *const c_char = std::ptr::null();
        let mut size = 0usize;
        // SAFETY: valid any; the bytes are borrowed from it.
        check(unsafe { sys::tn_any_as_str(&self.0, &mut data, &mut size) })
            .map_err(|_| self.mismatch("str"))?;
        // SAFETY: the C side gave `size` bytes at `data`, alive with `self`.
        Ok(unsafe { bytes_from_raw(data, size) })
    }

    /// A string, borrowed; a `ValueError` if it is not UTF-8.
    pub fn as_str(&self) -> Result<&str> {
        Ok(std::str::from_utf8(self.as_str_bytes()?)?)
    }

    /// Bytes from any bytes or string form, borrowed.
    pub fn as_bytes(&self) -> Result<&[u8]> {
        let mut data: *const c_char = std::ptr::null();
        let mut size = 0usize;
        // SAFETY: as for as_str_bytes.
        check(unsafe { sys::tn_any_as_bytes(&self.0, &mut data, &mut size) })
            .map_err(|_| self.mismatch("bytes"))?;
        // SAFETY: as for as_str_bytes.
        Ok(unsafe { bytes_from_raw(data, size) })
    }

    /// The object, borrowed (None for plain values).
    #[inline]
    pub fn as_object(&self) -> Option<&Object> {
        if self.is_object() {
            // SAFETY: Object is repr(transparent) over a non-null pointer,
            // and an object-tagged any holds a non-null object pointer in the
            // same place.
            Some(unsafe { &*(std::ptr::addr_of!(self.0.v.v_obj) as *const Object) })
        } else {
            None
        }
    }

    /// The object as a checked handle of type `T` (a new reference).
    pub fn as_object_of<T: ObjectType>(&self) -> Result<T> {
        match self.as_object() {
            Some(o) if o.is::<T>() => {
                // SAFETY: type checked.
                Ok(unsafe { T::from_object_unchecked(o.clone()) })
            }
            _ => Err(self.mismatch(T::TYPE_KEY)),
        }
    }

    /// Like [`Any::as_object_of`], consuming the value (no extra reference).
    pub fn into_object_of<T: ObjectType>(self) -> Result<T> {
        match self.into_object() {
            Ok(o) => o
                .downcast::<T>()
                .map_err(|o| type_mismatch(T::TYPE_KEY, o.type_key())),
            Err(a) => Err(a.mismatch(T::TYPE_KEY)),
        }
    }

    /// The object, by value; the value back if it is not an object.
    pub fn into_object(self) -> std::result::Result<Object, Any> {
        if self.is_object() {
            let raw = self.into_raw();
            // SAFETY: an object any owns one reference to a non-null object.
            Ok(unsafe { Object::from_raw(raw.v.v_obj) }.expect("object any with NULL"))
        } else {
            Err(self)
        }
    }

    /// Convert to a Rust value (checked).
    pub fn to<T: FromAny>(&self) -> Result<T> {
        T::from_any(self)
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn mismatch(&self, expected: &str) -> Error {
        type_mismatch(expected, self.type_key())
    }
}

/// # Safety
/// `data` is NULL with `size == 0`, or points at `size` bytes alive for `'a`.
unsafe fn bytes_from_raw<'a>(data: *const c_char, size: usize) -> &'a [u8] {
    if size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(data.cast::<u8>(), size)
    }
}

impl Default for Any {
    fn default() -> Any {
        Any::none()
    }
}

impl Clone for Any {
    #[inline]
    fn clone(&self) -> Any {
        if let Some(o) = self.as_object() {
            return Any::from_object(o.clone());
        }
        let t = self.0.type_index;
        if t == sys::TN_TYPE_RAW_STR || t == sys::TN_TYPE_RAW_BYTES {
            // A borrowed argument: the copy must own its bytes.
            let mut out = Any::none();
            // SAFETY: valid any; `out` is None.
            check(unsafe { sys::tn_any_to_owned(out.as_mut_raw(), &self.0) })
                .expect("out of memory copying a string");
            return out;
        }
        Any(sys::TnAny { ..self.0 })
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if self.is_object() {
            // SAFETY: an owned object any holds one reference.
            unsafe { sys::tn_object_release(self.0.v.v_obj) }
        }
    }
}

impl PartialEq for Any {
    /// Equality as Map keys use it: strings by content, numbers by value
    /// (`1 == 1.0 == true`), objects by identity.
    fn eq(&self, other: &Any) -> bool {
        // SAFETY: valid anys.
        unsafe { sys::tn_any_equal(&self.0, &other.0) != 0 }
    }
}

impl std::hash::Hash for Any {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // SAFETY: valid any.
        state.write_u64(unsafe { sys::tn_any_hash(&self.0) })
    }
}

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Any {
    /// The C printer's text (`tn_repr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::repr(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "<{}>", self.type_key()),
        }
    }
}

// ---------------------------------------------------------------------------
// Conversion traits.

/// A Rust value that can become an [`Any`]: the argument and return types of
/// typed functions.
pub trait IntoAny {
    /// Convert.
    fn into_any(self) -> Any;
}

/// A Rust value that can be read out of an [`Any`], with a `TypeError` (or
/// `OverflowError`) when it does not fit.
pub trait FromAny: Sized {
    /// Convert from a borrowed value.
    fn from_any(a: &Any) -> Result<Self>;
}

impl IntoAny for Any {
    #[inline]
    fn into_any(self) -> Any {
        self
    }
}
impl IntoAny for &Any {
    #[inline]
    fn into_any(self) -> Any {
        self.clone()
    }
}
impl FromAny for Any {
    #[inline]
    fn from_any(a: &Any) -> Result<Any> {
        Ok(a.clone())
    }
}

impl IntoAny for Object {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_object(self)
    }
}
impl IntoAny for &Object {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_object(self.clone())
    }
}
impl From<Object> for Any {
    #[inline]
    fn from(o: Object) -> Any {
        Any::from_object(o)
    }
}
impl From<&Object> for Any {
    #[inline]
    fn from(o: &Object) -> Any {
        Any::from_object(o.clone())
    }
}
impl FromAny for Object {
    fn from_any(a: &Any) -> Result<Object> {
        a.as_object().cloned().ok_or_else(|| a.mismatch("object"))
    }
}
impl TryFrom<Any> for Object {
    type Error = Error;
    fn try_from(a: Any) -> Result<Object> {
        a.into_object().map_err(|a| a.mismatch("object"))
    }
}

/// `From`, `TryFrom<Any>` and `TryFrom<&Any>` from the two traits.
macro_rules! conversions {
    ($($t:ty),*) => {$(
        impl From<$t> for Any {
            #[inline]
            fn from(v: $t) -> Any {
                v.into_any()
            }
        }
        impl TryFrom<Any> for $t {
            type Error = Error;
            #[inline]
            fn try_from(a: Any) -> Result<$t> {
                <$t as FromAny>::from_any(&a)
            }
        }
        impl TryFrom<&Any> for $t {
            type Error = Error;
            #[inline]
            fn try_from(a: &Any) -> Result<$t> {
                <$t as FromAny>::from_any(a)
            }
        }
    )*};
}

macro_rules! int_conversions {
    ($($t:ty),*) => {$(
        impl IntoAny for $t {
            #[inline]
            fn into_any(self) -> Any {
                Any::from_i64(self as i64)
            }
        }
        impl FromAny for $t {
            #[inline]
            fn from_any(a: &Any) -> Result<$t> {
                let v = a.as_i64()?;
                <$t>::try_from(v).map_err(|_| Error::new(
                    ErrorKind::OverflowError,
                    format!("{} does not fit in {}", v, stringify!($t)),
                ))
            }
        }
        conversions!($t);
    )*};
}
int_conversions!(i8, i16, i32, u8, u16, u32, isize);

impl IntoAny for i64 {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_i64(self)
    }
}
impl FromAny for i64 {
    #[inline]
    fn from_any(a: &Any) -> Result<i64> {
        a.as_i64()
    }
}
impl FromAny for u64 {
    fn from_any(a: &Any) -> Result<u64> {
        let v = a.as_i64()?;
        u64::try_from(v).map_err(|_| Error::new(ErrorKind::OverflowError, format!("{v} does not fit in u64")))
    }
}
impl FromAny for usize {
    fn from_any(a: &Any) -> Result<usize> {
        let v = a.as_i64()?;
        usize::try_from(v)
            .map_err(|_| Error::new(ErrorKind::OverflowError, format!("{v} does not fit in usize")))
    }
}
conversions!(i64);

/// Values above `i64::MAX` do not fit an int: use `TryFrom`.
impl TryFrom<u64> for Any {
    type Error = Error;
    fn try_from(v: u64) -> Result<Any> {
        i64::try_from(v)
            .map(Any::from_i64)
            .map_err(|_| Error::new(ErrorKind::OverflowError, format!("{v} does not fit in an int")))
    }
}
impl TryFrom<Any> for u64 {
    type Error = Error;
    fn try_from(a: Any) -> Result<u64> {
        u64::from_any(&a)
    }
}

impl IntoAny for f64 {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_f64(self)
    }
}
impl FromAny for f64 {
    #[inline]
    fn from_any(a: &Any) -> Result<f64> {
        a.as_f64()
    }
}
impl IntoAny for f32 {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_f64(self as f64)
    }
}
impl FromAny for f32 {
    #[inline]
    fn from_any(a: &Any) -> Result<f32> {
        a.as_f64().map(|v| v as f32)
    }
}
impl IntoAny for bool {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_bool(self)
    }
}
impl FromAny for bool {
    fn from_any(a: &Any) -> Result<bool> {
        a.as_bool()
    }
}
conversions!(f64, f32, bool);

impl IntoAny for () {
    #[inline]
    fn into_any(self) -> Any {
        Any::none()
    }
}
impl FromAny for () {
    fn from_any(a: &Any) -> Result<()> {
        if a.is_none() {
            Ok(())
        } else {
            Err(a.mismatch("None"))
        }
    }
}

impl IntoAny for &str {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_text(self)
    }
}
impl From<&str> for Any {
    #[inline]
    fn from(s: &str) -> Any {
        Any::from_text(s)
    }
}
impl IntoAny for std::string::String {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_text(&self)
    }
}
impl IntoAny for &std::string::String {
    #[inline]
    fn into_any(self) -> Any {
        Any::from_text(self)
    }
}
impl From<&std::string::String> for Any {
    #[inline]
    fn from(s: &std::string::String) -> Any {
        Any::from_text(s)
    }
}
impl FromAny for std::string::String {
    fn from_any(a: &Any) -> Result<std::string::String> {
        Ok(a.as_str()?.to_owned())
    }
}
conversions!(std::string::String);

impl IntoAny for &[u8] {
    fn into_any(self) -> Any {
        Any::from_bytes(self)
    }
}
impl From<&[u8]> for Any {
    fn from(b: &[u8]) -> Any {
        Any::from_bytes(b)
    }
}
impl IntoAny for Vec<u8> {
    fn into_any(self) -> Any {
        Any::from_bytes(&self)
    }
}
impl FromAny for Vec<u8> {
    fn from_any(a: &Any) -> Result<Vec<u8>> {
        Ok(a.as_bytes()?.to_vec())
    }
}
conversions!(Vec<u8>);

impl IntoAny for DataType {
    #[inline]
    fn into_any(self) -> Any {
        Any::plain(sys::TN_TYPE_DATA_TYPE, sys::TnAnyValue { v_dtype: self.0 })
    }
}
impl FromAny for DataType {
    fn from_any(a: &Any) -> Result<DataType> {
        a.as_dtype()
    }
}
impl IntoAny for Device {
    #[inline]
    fn into_any(self) -> Any {
        Any::plain(sys::TN_TYPE_DEVICE, sys::TnAnyValue { v_device: self.0 })
    }
}
impl FromAny for Device {
    fn from_any(a: &Any) -> Result<Device> {
        a.as_device()
    }
}
conversions!(DataType, Device);

/// `None` is None; `Some(v)` is `v`.
impl<T: IntoAny> IntoAny for Option<T> {
    fn into_any(self) -> Any {
        match self {
            Some(v) => v.into_any(),
            None => Any::none(),
        }
    }
}
impl<T: IntoAny> From<Option<T>> for Any {
    fn from(v: Option<T>) -> Any {
        v.into_any()
    }
}
/// None gives `None`; anything else must convert to `T`.
impl<T: FromAny> FromAny for Option<T> {
    fn from_any(a: &Any) -> Result<Option<T>> {
        if a.is_none() {
            Ok(None)
        } else {
            T::from_any(a).map(Some)
        }
    }
}

/// A string's text, borrowed when it is UTF-8.
pub(crate) fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    std::string::String::from_utf8_lossy(bytes)
}
