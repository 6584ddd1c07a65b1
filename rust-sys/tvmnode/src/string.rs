//! `tn.String` and `tn.Bytes`: immutable byte strings with a public layout.
//!
//! Their bytes are read straight from the object (`TnStringObj`), so
//! [`String::as_bytes`] is a borrow with no copy and no call into C. A
//! `tn.String` is not required to hold UTF-8 (JSON can carry any bytes), so
//! [`String::as_str`] is checked and [`String::as_str_lossy`] never fails.

use std::borrow::Cow;

use tvmnode_sys as sys;

use crate::error::{check_typed, Result};
use crate::object::ObjectType;
use crate::{object_handle, Object};

object_handle! {
    /// An immutable string (`tn.String`). Named like `std`'s on purpose; refer
    /// to it as `tvmnode::String` where both are in scope.
    pub struct String: Object, key "tn.String", index sys::TN_TYPE_STRING;
}

object_handle! {
    /// Immutable bytes (`tn.Bytes`).
    pub struct Bytes: Object, key "tn.Bytes", index sys::TN_TYPE_BYTES;
}

fn raw_bytes(obj: &Object) -> &[u8] {
    // SAFETY: tn.String and tn.Bytes share the public TnStringObj layout;
    // the bytes live as long as the object, which `obj` keeps alive.
    unsafe {
        let s = &*(obj.as_ptr() as *const sys::TnStringObj);
        if s.size == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(s.data.cast::<u8>(), s.size as usize)
        }
    }
}

impl String {
    /// A new string holding a copy of `s`.
    pub fn new(s: &str) -> Result<String> {
        // SAFETY: `s` is valid for its length.
        check_typed(unsafe { sys::tn_string_new(s.as_ptr().cast(), s.len()) })
    }

    /// The bytes, borrowed from the object.
    pub fn as_bytes(&self) -> &[u8] {
        raw_bytes(self.as_object())
    }

    /// The text, if it is UTF-8.
    pub fn as_str(&self) -> Result<&str> {
        Ok(std::str::from_utf8(self.as_bytes())?)
    }

    /// The text, with invalid UTF-8 replaced.
    pub fn as_str_lossy(&self) -> Cow<'_, str> {
        crate::any::lossy(self.as_bytes())
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Bytes {
    /// New bytes holding a copy of `b`.
    pub fn new(b: &[u8]) -> Result<Bytes> {
        // SAFETY: `b` is valid for its length.
        check_typed(unsafe { sys::tn_bytes_new(b.as_ptr().cast(), b.len()) })
    }

    /// The bytes, borrowed from the object.
    pub fn as_bytes(&self) -> &[u8] {
        raw_bytes(self.as_object())
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq<str> for String {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for String {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl TryFrom<&str> for String {
    type Error = crate::Error;
    fn try_from(s: &str) -> Result<String> {
        String::new(s)
    }
}

impl AsRef<[u8]> for String {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}
