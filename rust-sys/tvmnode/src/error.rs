//! Errors: a `tn.Error` object seen from Rust.
//!
//! An error in tvmnode is an object (kind, message, frames, cause) that
//! travels unchanged through every language it crosses, gaining one frame per
//! layer. [`Error`] therefore wraps the object itself rather than copying its
//! text into a Rust struct: an error raised in C, returned through a Rust
//! closure and caught again in Python is the *same* object all the way, and
//! Python sees the Rust frames that were appended on the way through.
//!
//! The C side reports failure through a thread-local "raised" slot; the
//! helpers at the bottom of this file turn a C status into a [`Result`] by
//! taking the error out of that slot, so no error is ever left behind in it
//! by this crate.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_int;

use tvmnode_sys as sys;

use crate::object::{Object, ObjectType};

/// The result type of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error kinds: each variant and its code in the C library's kind table
/// (`TN_ERROR_KIND_MAP` in abi.h, where the names live). The enum,
/// [`ErrorKind::code`], [`ErrorKind::from_code`] and [`ErrorKind::ALL`] are
/// generated from this list; names and look-ups by name go through the C
/// table, so a kind is named in one place only.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $kind:ident = $code:ident,)*) => {
        /// The kind of an error: the Python-style class name the C library
        /// and every binding use, so that kinds map one to one onto Python
        /// exceptions.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $kind,)*
            /// A kind this enum does not name; see [`Error::kind_str`].
            Other,
        }

        impl ErrorKind {
            /// Every named kind (all but [`ErrorKind::Other`]), in table
            /// order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind,)*];

            /// The kind's code in the C table (`TN_ERR_OTHER` for `Other`).
            pub fn code(self) -> sys::TnErrorKind {
                match self {
                    $(ErrorKind::$kind => sys::$code,)*
                    ErrorKind::Other => sys::TN_ERR_OTHER,
                }
            }

            /// The kind a C code stands for; `Other` for codes this enum
            /// does not name.
            pub fn from_code(code: sys::TnErrorKind) -> ErrorKind {
                match code {
                    $(sys::$code => ErrorKind::$kind,)*
                    _ => ErrorKind::Other,
                }
            }
        }
    };
}

error_kinds! {
    /// A value of the wrong type (`TypeError`).
    TypeError = TN_ERR_TYPE,
    /// A value of the right type that is not acceptable (`ValueError`).
    ValueError = TN_ERR_VALUE,
    /// An index out of range (`IndexError`).
    IndexError = TN_ERR_INDEX,
    /// A missing key or name (`KeyError`).
    KeyError = TN_ERR_KEY,
    /// A missing field or method (`AttributeError`).
    AttributeError = TN_ERR_ATTRIBUTE,
    /// Any other failure at run time, including Rust panics (`RuntimeError`).
    RuntimeError = TN_ERR_RUNTIME,
    /// An allocation failed (`MemoryError`).
    MemoryError = TN_ERR_MEMORY,
    /// A number does not fit (`OverflowError`).
    OverflowError = TN_ERR_OVERFLOW,
    /// Not supported (`NotImplementedError`).
    NotImplementedError = TN_ERR_NOT_IMPLEMENTED,
}

impl ErrorKind {
    /// The kind's name as the C library spells it (`"TypeError"`).
    /// `Other` has no single name and gives `"RuntimeError"`.
    pub fn as_str(self) -> &'static str {
        let code = match self {
            ErrorKind::Other => sys::TN_ERR_RUNTIME,
            k => k.code(),
        };
        // SAFETY: the C table's names are static NUL-terminated strings;
        // every code of this enum is in it.
        let p = unsafe { sys::tn_error_kind_name(code) };
        if p.is_null() {
            return "RuntimeError";
        }
        unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("RuntimeError")
    }

    /// The kind a C kind name stands for; `Other` for names the table does
    /// not have.
    pub fn from_name(name: &str) -> ErrorKind {
        match CString::new(name) {
            // SAFETY: a NUL-terminated string that outlives the call.
            Ok(c) => ErrorKind::from_code(unsafe { sys::tn_error_kind_from_name(c.as_ptr()) }),
            Err(_) => ErrorKind::Other,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tvmnode error: kind, message, backtrace frames and an optional cause.
///
/// `Display` prints `Kind: message`; `Debug` (and [`Error::format`]) print
/// the whole chain with frames, the way Python prints a traceback.
#[derive(Clone)]
pub struct Error {
    obj: Object,
    // Kept so that `std::error::Error::source` can hand out a reference.
    cause: Option<Box<Error>>,
}

impl Error {
    /// A new error of a known kind. C frames of the caller are captured (see
    /// `TN_BACKTRACE` in the C docs).
    pub fn new(kind: ErrorKind, message: impl AsRef<str>) -> Error {
        Error::with_kind_name(kind.as_str(), message)
    }

    /// A new error with any kind name, e.g. a Python exception class name
    /// this crate has no variant for.
    pub fn with_kind_name(kind: &str, message: impl AsRef<str>) -> Error {
        let kind = cstring_lossy(kind);
        let msg = cstring_lossy(message.as_ref());
        // SAFETY: both strings are NUL-terminated and outlive the call.
        let p = unsafe { sys::tn_error_new(kind.as_ptr(), msg.as_ptr()) };
        match unsafe { Object::from_raw(p) } {
            Some(obj) => Error { obj, cause: None },
            None => panic!("tn_error_new failed: out of memory"),
        }
    }

    /// Wrap a `tn.Error` object. Returns the object back if it is not one.
    pub fn from_object(obj: Object) -> std::result::Result<Error, Object> {
        if !obj.is_instance_of(sys::TN_TYPE_ERROR) {
            return Err(obj);
        }
        // SAFETY: `obj` is a live tn.Error; the cause is borrowed from it.
        let cause = unsafe { Object::from_borrowed(sys::tn_error_cause(obj.as_ptr())) }
            .and_then(|c| Error::from_object(c).ok())
            .map(Box::new);
        Ok(Error { obj, cause })
    }

    /// The error object, to store or pass to C.
    pub fn as_object(&self) -> &Object {
        &self.obj
    }

    /// The error object, by value.
    pub fn into_object(self) -> Object {
        self.obj
    }

    /// The kind, as an enum.
    pub fn kind(&self) -> ErrorKind {
        // SAFETY: the object is a live tn.Error.
        ErrorKind::from_code(unsafe { sys::tn_error_kind_code(self.obj.as_ptr()) })
    }

    /// The kind's name exactly as stored (`"TypeError"`, or any other name).
    pub fn kind_str(&self) -> &str {
        // SAFETY: the string lives as long as the error object.
        unsafe { str_from_ptr(sys::tn_error_kind(self.obj.as_ptr())) }
    }

    /// The message.
    pub fn message(&self) -> &str {
        // SAFETY: as for kind_str.
        unsafe { str_from_ptr(sys::tn_error_message(self.obj.as_ptr())) }
    }

    /// The backtrace frames, innermost first: the C frames captured when the
    /// error was made, then one frame per language layer it crossed.
    pub fn frames(&self) -> Vec<std::string::String> {
        // SAFETY: the object is a live tn.Error.
        let n = unsafe { sys::tn_error_frame_count(self.obj.as_ptr()) };
        (0..n.max(0))
            .map(|i| unsafe { str_from_ptr(sys::tn_error_frame(self.obj.as_ptr(), i)) }.to_owned())
            .collect()
    }

    /// The error this one was raised from, if any.
    pub fn cause(&self) -> Option<&Error> {
        self.cause.as_deref()
    }

    /// Attach `cause` as the cause of this error.
    pub fn set_cause(&mut self, cause: Error) -> Result<()> {
        // SAFETY: both are live tn.Error objects; a reference is taken.
        check(unsafe { sys::tn_error_set_cause(self.obj.as_ptr(), cause.obj.as_ptr()) })?;
        self.cause = Some(Box::new(cause));
        Ok(())
    }

    /// Append a frame of text (what each language layer does as an error
    /// crosses it). Frames are shared by every holder of the error object.
    pub fn append_frame(&self, frame: &str) {
        let frame = cstring_lossy(frame);
        // SAFETY: live error, NUL-terminated frame. It only fails for a bad
        // argument, which cannot happen here.
        unsafe { sys::tn_error_append_frame(self.obj.as_ptr(), frame.as_ptr()) };
    }

    /// The whole error as text: frames, `Kind: message`, then the causes.
    pub fn format(&self) -> std::string::String {
        // SAFETY: live error; the result is a new tn.String.
        let s = unsafe { Object::from_raw(sys::tn_error_format(self.obj.as_ptr())) };
        s.and_then(|s| crate::String::try_from(s).ok())
            .map(|s| s.as_str_lossy().into_owned())
            .unwrap_or_else(|| self.to_string())
    }

    /// Put this error in the calling thread's raised slot (what a packed
    /// function does before returning -1).
    pub(crate) fn raise(self) {
        // SAFETY: transfer full of our reference.
        unsafe { sys::tn_error_set_raised(self.obj.into_raw()) };
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind_str(), self.message())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|e| e as _)
    }
}

impl From<std::ffi::NulError> for Error {
    fn from(e: std::ffi::NulError) -> Error {
        Error::new(ErrorKind::ValueError, format!("string contains a NUL byte: {e}"))
    }
}

impl From<std::str::Utf8Error> for Error {
    fn from(e: std::str::Utf8Error) -> Error {
        Error::new(ErrorKind::ValueError, format!("not valid UTF-8: {e}"))
    }
}

impl From<Error> for Object {
    fn from(e: Error) -> Object {
        e.obj
    }
}

impl TryFrom<Object> for Error {
    type Error = Error;
    fn try_from(obj: Object) -> Result<Error> {
        Error::from_object(obj).map_err(|o| crate::object::type_mismatch("tn.Error", o.type_key()))
    }
}

// ---------------------------------------------------------------------------
// From C status codes to Result.

/// The error the last failing C call on this thread left in the raised slot.
/// A C call that failed without raising (a library bug) still gives an error.
pub(crate) fn take_raised() -> Error {
    // SAFETY: transfer full out of the thread-local slot.
    let p = unsafe { sys::tn_error_take_raised() };
    match unsafe { Object::from_raw(p) }.map(Error::from_object) {
        Some(Ok(e)) => e,
        _ => Error::new(
            ErrorKind::RuntimeError,
            "a tvmnode call failed without raising an error",
        ),
    }
}

/// 0 is success; anything else takes the raised error.
#[inline]
pub(crate) fn check(rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(take_raised())
    }
}

/// A (transfer full) object pointer, or the raised error when it is NULL.
#[inline]
pub(crate) fn check_obj(p: *mut sys::TnObject) -> Result<Object> {
    // SAFETY: callers pass the result of a (transfer full) C function.
    unsafe { Object::from_raw(p) }.ok_or_else(take_raised)
}

/// Like `check_obj`, downcast to the handle type the C function documents.
#[inline]
pub(crate) fn check_typed<T: ObjectType>(p: *mut sys::TnObject) -> Result<T> {
    let obj = check_obj(p)?;
    obj.downcast::<T>()
        .map_err(|o| crate::object::type_mismatch(T::TYPE_KEY, o.type_key()))
}

/// A count or index, where a negative value means failure.
#[inline]
pub(crate) fn check_count(n: i64) -> Result<i64> {
    if n >= 0 {
        Ok(n)
    } else {
        Err(take_raised())
    }
}

/// A C string as a NUL-terminated copy; interior NULs become U+FFFD so that
/// messages are never lost.
pub(crate) fn cstring_lossy(s: &str) -> CString {
    match CString::new(s) {
        Ok(c) => c,
        Err(_) => CString::new(s.replace('\0', "\u{fffd}")).expect("no NUL left"),
    }
}

/// A checked NUL-terminated copy, for names and keys.
pub(crate) fn cstring(s: &str) -> Result<CString> {
    Ok(CString::new(s)?)
}

/// A borrowed C string as `&str` ("" for NULL, U+FFFD-free only if UTF-8:
/// invalid bytes give "<invalid UTF-8>").
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn str_from_ptr<'a>(p: *const std::os::raw::c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    CStr::from_ptr(p).to_str().unwrap_or("<invalid UTF-8>")
}
