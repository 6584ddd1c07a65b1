//! `tn.Array` (immutable, copy-on-write) and `tn.List` (shared, mutable).
//!
//! Both share one C layout and one set of readers, so both handles get the
//! same read API here: `len`, `get`, `get_as`, `iter`, `iter_as`, and
//! `FromIterator`. Items are read as owned [`Any`] values (a clone of the
//! stored value) so that no borrow into the container outlives a change to
//! it.
//!
//! [`Array`]'s "mutators" take `&mut self` and follow the C semantics: the
//! array is changed in place only when this handle is its sole reference;
//! otherwise the handle is pointed at a changed copy, and every other holder
//! keeps seeing the old value. That is what makes arrays safe to share
//! between threads.
//!
//! [`List`] is the C list, changed in place for every holder. Its mutators
//! also take `&mut self` and need the sole reference, but refuse
//! (`RuntimeError`) rather than copy when the list is shared, since a copy
//! would silently break the sharing a list is for. Another reference may be
//! on another thread (an [`Object`], an [`Any`], C, Python), where reading
//! while this thread changes the list would be a data race, and nothing in
//! the types can rule that out; the count can. A list that is knowingly
//! shared within one thread (a callback's argument from Python) is changed
//! with the `unsafe` `*_shared` methods. The handle is neither `Send` nor
//! `Sync`. See [`object`](crate::object#threads) for the whole rule.
//!
//! ```
//! use tvmnode::{ErrorKind, List};
//!
//! let mut list = List::new(&[]).unwrap();
//! list.push(1i64).unwrap(); // the only reference
//! let alias = list.clone();
//! let e = list.push(2i64).unwrap_err(); // shared now
//! assert_eq!(e.kind(), ErrorKind::RuntimeError);
//! drop(alias);
//! list.push(2i64).unwrap();
//! assert_eq!(list.to_vec::<i64>().unwrap(), [1, 2]);
//! ```

use tvmnode_sys as sys;

use crate::error::{check, check_typed, Error, ErrorKind, Result};
use crate::object::ObjectType;
use crate::{object_handle, Any, FromAny, IntoAny, Object};

object_handle! {
    /// An immutable array of values (`tn.Array`), copy-on-write.
    pub struct Array: Object, key "tn.Array", index sys::TN_TYPE_ARRAY;
}

object_handle! {
    /// A mutable list (`tn.List`), changed in place only through its sole
    /// reference. Not `Send`/`Sync`: see the module docs.
    pub struct List: Object, key "tn.List", index sys::TN_TYPE_LIST, unsync;
}

fn as_raw_slice(items: &[Any]) -> (*const sys::TnAny, i64) {
    (items.as_ptr().cast(), items.len() as i64)
}

macro_rules! sequence_readers {
    ($t:ty) => {
        impl $t {
            /// Number of items.
            pub fn len(&self) -> usize {
                // SAFETY: live array or list.
                unsafe { sys::tn_array_size(self.as_ptr()) }.max(0) as usize
            }

            /// Whether there are no items.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Item `i` (negative counts from the end); `IndexError` when out
            /// of range.
            pub fn get(&self, i: i64) -> Result<Any> {
                let mut out = Any::none();
                // SAFETY: live sequence; `out` receives an owned copy.
                check(unsafe { sys::tn_array_get(self.as_ptr(), i, out.as_mut_raw()) })?;
                Ok(out)
            }

            /// Item `i` converted to `T`.
            pub fn get_as<T: FromAny>(&self, i: i64) -> Result<T> {
                T::from_any(&self.get(i)?)
            }

            /// The items, in order.
            pub fn iter(&self) -> Iter<'_> {
                Iter {
                    seq: self.as_object(),
                    pos: 0,
                    end: self.len(),
                }
            }

            /// The items converted to `T`, in order.
            pub fn iter_as<T: FromAny>(&self) -> impl Iterator<Item = Result<T>> + '_ {
                self.iter().map(|a| T::from_any(&a))
            }

            /// All items converted to `T`.
            pub fn to_vec<T: FromAny>(&self) -> Result<Vec<T>> {
                self.iter_as().collect()
            }
        }

        impl<'a> IntoIterator for &'a $t {
            type Item = Any;
            type IntoIter = Iter<'a>;
            fn into_iter(self) -> Iter<'a> {
                self.iter()
            }
        }
    };
}

sequence_readers!(Array);
sequence_readers!(List);

impl Array {
    /// A new array of `items` (raw strings are copied in).
    pub fn new(items: &[Any]) -> Result<Array> {
        let (p, n) = as_raw_slice(items);
        // SAFETY: `n` valid anys.
        check_typed(unsafe { sys::tn_array_new(p, n) })
    }

    /// A new empty array.
    pub fn empty() -> Result<Array> {
        Array::new(&[])
    }

    /// An array from Rust values.
    pub fn from_values<T: IntoAny>(values: impl IntoIterator<Item = T>) -> Result<Array> {
        let items: Vec<Any> = values.into_iter().map(IntoAny::into_any).collect();
        Array::new(&items)
    }

    fn raw_slot(&mut self) -> *mut *mut sys::TnObject {
        // SAFETY: Array is transparent over Object over NonNull<TnObject>;
        // the C mutators replace the pointer with another array they own
        // (transfer full), releasing ours, which is exactly a handle update.
        (self as *mut Array).cast::<*mut sys::TnObject>()
    }

    /// Append an item (copy-on-write).
    pub fn push(&mut self, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        // SAFETY: see raw_slot; on failure the pointer is left as it was.
        check(unsafe { sys::tn_array_push(self.raw_slot(), item.as_raw()) })
    }

    /// Replace item `i` (copy-on-write).
    pub fn set(&mut self, i: i64, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        // SAFETY: see raw_slot.
        check(unsafe { sys::tn_array_set(self.raw_slot(), i, item.as_raw()) })
    }

    /// Remove and return the last item (copy-on-write).
    pub fn pop(&mut self) -> Result<Any> {
        let mut out = Any::none();
        // SAFETY: see raw_slot.
        check(unsafe { sys::tn_array_pop(self.raw_slot(), out.as_mut_raw()) })?;
        Ok(out)
    }
}

impl List {
    /// A new list of `items`.
    pub fn new(items: &[Any]) -> Result<List> {
        let (p, n) = as_raw_slice(items);
        // SAFETY: `n` valid anys.
        check_typed(unsafe { sys::tn_list_new(p, n) })
    }

    /// Append an item. Refused (`RuntimeError`) unless this handle is the
    /// only reference: see the module docs.
    pub fn push(&mut self, item: impl Into<Any>) -> Result<()> {
        // Converted first: an item that is this very list is one more
        // reference, and is refused.
        let item = item.into();
        exclusive(self, "append to")?;
        // SAFETY: the only reference, borrowed mutably: no one else can see it.
        unsafe { self.push_shared(item) }
    }

    /// Replace item `i`. Refused unless this handle is the only reference.
    pub fn set(&mut self, i: i64, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        exclusive(self, "set an item of")?;
        // SAFETY: as for push.
        unsafe { self.set_shared(i, item) }
    }

    /// Insert before item `i`. Refused unless this handle is the only
    /// reference.
    pub fn insert(&mut self, i: i64, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        exclusive(self, "insert into")?;
        // SAFETY: as for push.
        unsafe { self.insert_shared(i, item) }
    }

    /// Remove and return item `i` (negative counts from the end). Refused
    /// unless this handle is the only reference.
    pub fn remove(&mut self, i: i64) -> Result<Any> {
        exclusive(self, "remove from")?;
        // SAFETY: as for push.
        unsafe { self.remove_shared(i) }
    }

    /// Remove every item. Refused unless this handle is the only reference.
    pub fn clear(&mut self) -> Result<()> {
        exclusive(self, "clear")?;
        // SAFETY: as for push.
        unsafe { self.clear_shared() }
    }

    /// Append an item to a possibly shared list; every holder sees it.
    ///
    /// # Safety
    /// No other thread may read or write this list during the call (C takes
    /// no lock for lists); the same holds for every `*_shared` method.
    pub unsafe fn push_shared(&self, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        check(sys::tn_list_append(self.as_ptr(), item.as_raw()))
    }

    /// Replace item `i` of a possibly shared list.
    ///
    /// # Safety
    /// As for [`List::push_shared`].
    pub unsafe fn set_shared(&self, i: i64, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        check(sys::tn_list_set(self.as_ptr(), i, item.as_raw()))
    }

    /// Insert before item `i` of a possibly shared list.
    ///
    /// # Safety
    /// As for [`List::push_shared`].
    pub unsafe fn insert_shared(&self, i: i64, item: impl Into<Any>) -> Result<()> {
        let item = item.into();
        check(sys::tn_list_insert(self.as_ptr(), i, item.as_raw()))
    }

    /// Remove and return item `i` of a possibly shared list.
    ///
    /// # Safety
    /// As for [`List::push_shared`].
    pub unsafe fn remove_shared(&self, i: i64) -> Result<Any> {
        let mut out = Any::none();
        check(sys::tn_list_pop(self.as_ptr(), i, out.as_mut_raw()))?;
        Ok(out)
    }

    /// Remove every item of a possibly shared list.
    ///
    /// # Safety
    /// As for [`List::push_shared`].
    pub unsafe fn clear_shared(&self) -> Result<()> {
        check(sys::tn_list_clear(self.as_ptr()))
    }
}

/// The check before a List or Dict changes in place: this handle must be the
/// only reference (the `&mut` borrow that leads here rules out borrows of it).
pub(crate) fn exclusive(obj: &Object, what: &str) -> Result<()> {
    if obj.is_unique() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::RuntimeError,
            format!(
                "cannot {what} a shared {} in place (it has other references; \
                 the *_shared methods are the unsafe way)",
                obj.type_key()
            ),
        ))
    }
}

/// Iterator over the items of an [`Array`] or [`List`], as owned values.
pub struct Iter<'a> {
    seq: &'a Object,
    pos: usize,
    end: usize,
}

impl Iterator for Iter<'_> {
    type Item = Any;
    fn next(&mut self) -> Option<Any> {
        if self.pos >= self.end {
            return None;
        }
        // SAFETY: live sequence; the pointer is borrowed and cloned at once
        // (a List may have shrunk since the iterator was made: NULL ends it).
        let p = unsafe { sys::tn_array_at(self.seq.as_ptr(), self.pos as i64) };
        if p.is_null() {
            // Clear the IndexError the C side raised.
            drop(crate::error::take_raised());
            self.pos = self.end;
            return None;
        }
        self.pos += 1;
        // SAFETY: an item stored in a container is an owned value.
        Some(unsafe { &*(p as *const Any) }.clone())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.pos;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Any> {
        if self.pos >= self.end {
            return None;
        }
        self.end -= 1;
        // SAFETY: as for next.
        let p = unsafe { sys::tn_array_at(self.seq.as_ptr(), self.end as i64) };
        if p.is_null() {
            drop(crate::error::take_raised());
            self.pos = self.end;
            return None;
        }
        // SAFETY: as for next.
        Some(unsafe { &*(p as *const Any) }.clone())
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Collects into a new array. Panics only if memory runs out.
impl<T: IntoAny> FromIterator<T> for Array {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Array {
        Array::from_values(iter).expect("tn_array_new failed")
    }
}
