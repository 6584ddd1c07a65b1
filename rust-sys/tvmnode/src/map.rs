//! `tn.Map` (immutable, copy-on-write) and `tn.Dict` (shared, mutable):
//! insertion-ordered hash maps whose keys compare as `tn_any_equal` says
//! (strings by content, numbers by value, objects by identity).
//!
//! As with arrays, [`Map`] changes take `&mut self` and copy when the map is
//! shared, so map handles are `Send`/`Sync`. [`Dict`] changes in place for
//! every holder, so, like [`List`](crate::List), its changes take `&mut self`
//! and are refused unless the handle is the only reference (the `unsafe`
//! `*_shared` methods change a dict knowingly shared within one thread), and
//! its handle is neither `Send` nor `Sync`; see
//! [`object`](crate::object#threads). Lookups take any key that converts into an
//! [`Any`], so `map.get("name")` works without building a `tn.String`.

use tvmnode_sys as sys;

use crate::array::exclusive;
use crate::error::{check, check_typed, Result};
use crate::object::ObjectType;
use crate::{object_handle, Any, FromAny, IntoAny, Object};

object_handle! {
    /// An immutable insertion-ordered map (`tn.Map`), copy-on-write.
    pub struct Map: Object, key "tn.Map", index sys::TN_TYPE_MAP;
}

object_handle! {
    /// A mutable insertion-ordered map (`tn.Dict`), changed in place only
    /// through its sole reference. Not `Send`/`Sync`.
    pub struct Dict: Object, key "tn.Dict", index sys::TN_TYPE_DICT, unsync;
}

/// Keys and values of `pairs`, converted, as two arrays for C.
fn split<K: IntoAny, V: IntoAny>(pairs: impl IntoIterator<Item = (K, V)>) -> (Vec<Any>, Vec<Any>) {
    pairs
        .into_iter()
        .map(|(k, v)| (k.into_any(), v.into_any()))
        .unzip()
}

macro_rules! map_readers {
    ($t:ty) => {
        impl $t {
            /// Number of entries.
            pub fn len(&self) -> usize {
                // SAFETY: live map or dict.
                unsafe { sys::tn_map_size(self.as_ptr()) }.max(0) as usize
            }

            /// Whether there are no entries.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The value for `key`, or `None` when absent.
            pub fn get(&self, key: impl IntoAny) -> Option<Any> {
                let key = key.into_any();
                // SAFETY: live map; the borrowed value is cloned at once.
                let p = unsafe { sys::tn_map_find(self.as_ptr(), key.as_raw()) };
                if p.is_null() {
                    None
                } else {
                    // SAFETY: stored values are owned anys.
                    Some(unsafe { &*(p as *const Any) }.clone())
                }
            }

            /// The value for `key`, converted; `KeyError` naming the key when
            /// absent.
            pub fn get_as<T: FromAny>(&self, key: impl IntoAny) -> Result<T> {
                let key = key.into_any();
                let mut out = Any::none();
                // SAFETY: live map; `out` receives an owned copy.
                check(unsafe { sys::tn_map_get(self.as_ptr(), key.as_raw(), out.as_mut_raw()) })?;
                T::from_any(&out)
            }

            /// Whether `key` is present.
            pub fn contains_key(&self, key: impl IntoAny) -> bool {
                let key = key.into_any();
                // SAFETY: live map.
                !unsafe { sys::tn_map_find(self.as_ptr(), key.as_raw()) }.is_null()
            }

            /// The entries in insertion order.
            pub fn iter(&self) -> Iter<'_> {
                Iter {
                    map: self.as_object(),
                    pos: 0,
                }
            }

            /// The keys in insertion order.
            pub fn keys(&self) -> impl Iterator<Item = Any> + '_ {
                self.iter().map(|(k, _)| k)
            }

            /// The values in insertion order.
            pub fn values(&self) -> impl Iterator<Item = Any> + '_ {
                self.iter().map(|(_, v)| v)
            }
        }

        impl<'a> IntoIterator for &'a $t {
            type Item = (Any, Any);
            type IntoIter = Iter<'a>;
            fn into_iter(self) -> Iter<'a> {
                self.iter()
            }
        }
    };
}

map_readers!(Map);
map_readers!(Dict);

impl Map {
    /// A new map from pairs (later duplicates win).
    pub fn new<K: IntoAny, V: IntoAny>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Map> {
        let (keys, values) = split(pairs);
        // SAFETY: two arrays of `n` valid anys.
        check_typed(unsafe {
            sys::tn_map_new(keys.as_ptr().cast(), values.as_ptr().cast(), keys.len() as i64)
        })
    }

    /// A new empty map.
    pub fn empty() -> Result<Map> {
        Map::new(std::iter::empty::<(Any, Any)>())
    }

    fn raw_slot(&mut self) -> *mut *mut sys::TnObject {
        // SAFETY: as Array::raw_slot.
        (self as *mut Map).cast::<*mut sys::TnObject>()
    }

    /// Set `key` to `value` (copy-on-write).
    pub fn insert(&mut self, key: impl IntoAny, value: impl IntoAny) -> Result<()> {
        let (k, v) = (key.into_any(), value.into_any());
        // SAFETY: see Array::raw_slot.
        check(unsafe { sys::tn_map_set(self.raw_slot(), k.as_raw(), v.as_raw()) })
    }

    /// Remove `key` (copy-on-write); `KeyError` if absent.
    pub fn remove(&mut self, key: impl IntoAny) -> Result<()> {
        let k = key.into_any();
        // SAFETY: see Array::raw_slot.
        check(unsafe { sys::tn_map_erase(self.raw_slot(), k.as_raw()) })
    }
}

impl Dict {
    /// A new dict from pairs.
    pub fn new<K: IntoAny, V: IntoAny>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Dict> {
        let (keys, values) = split(pairs);
        // SAFETY: two arrays of `n` valid anys.
        check_typed(unsafe {
            sys::tn_dict_new(keys.as_ptr().cast(), values.as_ptr().cast(), keys.len() as i64)
        })
    }

    /// Set `key` to `value`. Refused (`RuntimeError`) unless this handle is
    /// the only reference: see the module docs.
    pub fn insert(&mut self, key: impl IntoAny, value: impl IntoAny) -> Result<()> {
        // Converted first: a key or value that is this very dict is one more
        // reference, and is refused.
        let (k, v) = (key.into_any(), value.into_any());
        exclusive(self, "insert into")?;
        // SAFETY: the only reference, borrowed mutably: no one else can see it.
        unsafe { self.insert_shared(k, v) }
    }

    /// Remove `key`; `KeyError` if absent. Refused unless this handle is the
    /// only reference.
    pub fn remove(&mut self, key: impl IntoAny) -> Result<()> {
        let k = key.into_any();
        exclusive(self, "remove from")?;
        // SAFETY: as for insert.
        unsafe { self.remove_shared(k) }
    }

    /// Remove every entry. Refused unless this handle is the only reference.
    pub fn clear(&mut self) -> Result<()> {
        exclusive(self, "clear")?;
        // SAFETY: as for insert.
        unsafe { self.clear_shared() }
    }

    /// Set `key` to `value` in a possibly shared dict; every holder sees it.
    ///
    /// # Safety
    /// No other thread may read or write this dict during the call (C takes
    /// no lock for dicts); the same holds for every `*_shared` method.
    pub unsafe fn insert_shared(&self, key: impl IntoAny, value: impl IntoAny) -> Result<()> {
        let (k, v) = (key.into_any(), value.into_any());
        check(sys::tn_dict_set(self.as_ptr(), k.as_raw(), v.as_raw()))
    }

    /// Remove `key` from a possibly shared dict; `KeyError` if absent.
    ///
    /// # Safety
    /// As for [`Dict::insert_shared`].
    pub unsafe fn remove_shared(&self, key: impl IntoAny) -> Result<()> {
        let k = key.into_any();
        check(sys::tn_dict_erase(self.as_ptr(), k.as_raw()))
    }

    /// Remove every entry of a possibly shared dict.
    ///
    /// # Safety
    /// As for [`Dict::insert_shared`].
    pub unsafe fn clear_shared(&self) -> Result<()> {
        check(sys::tn_dict_clear(self.as_ptr()))
    }
}

/// Iterator over the entries of a [`Map`] or [`Dict`], as owned pairs.
pub struct Iter<'a> {
    map: &'a Object,
    pos: i64,
}

impl Iterator for Iter<'_> {
    type Item = (Any, Any);
    fn next(&mut self) -> Option<(Any, Any)> {
        let mut k: *const sys::TnAny = std::ptr::null();
        let mut v: *const sys::TnAny = std::ptr::null();
        // SAFETY: live map; the borrowed entries are cloned at once.
        let at = unsafe { sys::tn_map_next(self.map.as_ptr(), self.pos, &mut k, &mut v) };
        if at < 0 {
            return None;
        }
        self.pos = at + 1;
        // SAFETY: stored keys and values are owned anys.
        unsafe { Some(((*(k as *const Any)).clone(), (*(v as *const Any)).clone())) }
    }
}

/// Collects into a new map. Panics only if memory runs out.
impl<K: IntoAny, V: IntoAny> FromIterator<(K, V)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Map {
        Map::new(iter).expect("tn_map_new failed")
    }
}
