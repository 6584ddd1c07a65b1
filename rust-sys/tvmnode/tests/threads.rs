//! Lists and dicts and threads: every safe path that yields a `List` or
//! `Dict` handle from a `Send` value (a downcast, an `Any`, an item, a map
//! value, a node field, a callback argument) gives a handle that refuses to
//! change a list someone else also holds, on this thread or another; a list
//! handed over whole can be changed wherever it went.

mod common;

use std::sync::mpsc;
use std::thread;

use tvmnode::prelude::*;
use tvmnode::{node, Array, Dict, Function, List, Map, Object};

node! {
    /// A node with one field of any type.
    pub struct Holder: "rust_test.threads.Holder" {
        /// Anything, a list here.
        value: Any,
    }
}

fn refused<T: std::fmt::Debug>(r: Result<T>) {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuntimeError, "{e}");
    assert!(e.message().contains("in place"), "{e}");
}

fn ints(l: &List) -> Vec<i64> {
    l.to_vec().unwrap()
}

#[test]
fn is_unique_counts_strong_and_weak_references() {
    let _leaks = common::leak_check();
    let a = Array::from_values([1i64]).unwrap();
    assert!(a.is_unique());
    let b = a.clone();
    assert!(!a.is_unique() && !b.is_unique());
    drop(b);
    assert!(a.is_unique());
    let w = a.downgrade();
    assert!(!a.is_unique(), "a weak reference can become a strong one");
    drop(w);
    assert!(a.is_unique());
}

#[test]
fn a_list_handed_over_whole_changes_on_another_thread() {
    let _leaks = common::leak_check();
    let mut list = List::new(&[]).unwrap();
    list.push(1i64).unwrap();
    // As an Object, by downcast.
    let whole: Object = list.into();
    let back = thread::spawn(move || {
        let mut list: List = whole.downcast().unwrap();
        list.push(2i64).unwrap();
        Object::from(list)
    })
    .join()
    .unwrap();
    // As an Any, by conversion.
    let whole = Any::from(back);
    let back = thread::spawn(move || {
        let mut list = whole.into_object_of::<List>().unwrap();
        list.push(3i64).unwrap();
        Any::from(list)
    })
    .join()
    .unwrap();
    let mut list = List::try_from(back).unwrap();
    list.push(4i64).unwrap();
    assert_eq!(ints(&list), [1, 2, 3, 4]);

    let mut dict = Dict::new([("a", 1i64)]).unwrap();
    let whole = Any::from(dict);
    dict = thread::spawn(move || {
        let mut dict = Dict::try_from(whole).unwrap();
        dict.insert("b", 2i64).unwrap();
        Object::from(dict)
    })
    .join()
    .unwrap()
    .try_into()
    .unwrap();
    dict.remove("a").unwrap();
    assert_eq!(dict.get_as::<i64>("b").unwrap(), 2);
}

#[test]
fn a_list_shared_with_another_thread_changes_nowhere() {
    let _leaks = common::leak_check();
    let mut list = List::new(&[Any::from(1i64)]).unwrap();
    let shared = Object::from(list.clone());
    let (to_main, from_thread) = mpsc::channel();
    let (to_thread, from_main) = mpsc::channel::<()>();
    let t = thread::spawn(move || {
        // The other thread downcasts its Object: a List handle of its own,
        // which may read but not change.
        let mut there: List = shared.downcast().unwrap();
        let r = there.push(2i64).map_err(|e| e.kind());
        to_main.send((r, there.len())).unwrap();
        from_main.recv().unwrap();
        drop(there);
    });
    let (r, len) = from_thread.recv().unwrap();
    assert_eq!(r, Err(ErrorKind::RuntimeError));
    assert_eq!(len, 1);
    // Nor may this thread change it while the other one holds it.
    refused(list.push(3i64));
    refused(list.set(0, 3i64));
    refused(list.insert(0, 3i64));
    refused(list.remove(0));
    refused(list.clear());
    to_thread.send(()).unwrap();
    t.join().unwrap();
    // Given back: this handle is the only one again.
    list.push(3i64).unwrap();
    assert_eq!(ints(&list), [1, 3]);

    let mut dict = Dict::new([("a", 1i64)]).unwrap();
    let shared = Any::from(&dict);
    let (to_main, from_thread) = mpsc::channel();
    let (to_thread, from_main) = mpsc::channel::<()>();
    let t = thread::spawn(move || {
        let mut there = shared.as_object_of::<Dict>().unwrap();
        to_main
            .send(there.insert("b", 2i64).map_err(|e| e.kind()))
            .unwrap();
        from_main.recv().unwrap();
        drop((there, shared));
    });
    assert_eq!(from_thread.recv().unwrap(), Err(ErrorKind::RuntimeError));
    refused(dict.insert("c", 3i64));
    refused(dict.remove("a"));
    refused(dict.clear());
    to_thread.send(()).unwrap();
    t.join().unwrap();
    dict.insert("c", 3i64).unwrap();
    assert_eq!(dict.len(), 2);
}

#[test]
fn lists_read_out_of_send_values_refuse_to_change() {
    let _leaks = common::leak_check();
    let list = List::new(&[Any::from(1i64)]).unwrap();

    // Any: by reference and by value, while `list` is held.
    let any = Any::from(&list);
    refused(any.as_object_of::<List>().unwrap().push(2i64));
    refused(any.to::<List>().unwrap().push(2i64));
    refused(List::try_from(any).unwrap().push(2i64));
    // Object downcasts.
    let obj = Object::from(list.clone());
    refused(obj.clone().downcast::<List>().unwrap().push(2i64));
    refused(List::try_from(obj).unwrap().push(2i64));
    // A weak reference counts.
    let mut again = list.clone();
    drop(list);
    let weak = again.downgrade();
    refused(again.push(2i64));
    drop(weak);
    again.push(2i64).unwrap();
    let list = again;

    // The only other holder is a container or a node: still shared.
    let array = Array::from_values([&list]).unwrap();
    let map = Map::new([("k", &list)]).unwrap();
    let holder = Holder::new(Any::from(&list)).unwrap();
    drop(list);
    refused(array.get_as::<List>(0).unwrap().push(3i64));
    for item in &array {
        refused(List::try_from(item).unwrap().push(3i64));
    }
    refused(map.get_as::<List>("k").unwrap().push(3i64));
    refused(map.get("k").unwrap().to::<List>().unwrap().push(3i64));
    refused(holder.get_as::<List>("value").unwrap().push(3i64));
    refused(holder.value().to::<List>().unwrap().push(3i64));
    // A list pushed into itself would be a second reference: refused, so no
    // cycle can be made this way.
    drop((array, map));
    let mut l = holder.get_as::<List>("value").unwrap();
    drop(holder);
    let me = l.clone();
    refused(l.push(me));
    l.push(3i64).unwrap();
    assert_eq!(ints(&l), [1, 2, 3]);

    // Dicts the same way.
    let dict = Dict::new([("a", 1i64)]).unwrap();
    let array = Array::from_values([&dict]).unwrap();
    refused(array.get_as::<Dict>(0).unwrap().insert("b", 2i64));
    refused(Any::from(&dict).to::<Dict>().unwrap().clear());
    let mut dict2 = dict.clone();
    drop(dict);
    refused(dict2.remove("a"));
    drop(array);
    dict2.remove("a").unwrap();
}

#[test]
fn a_callback_argument_is_shared_with_its_caller() {
    let _leaks = common::leak_check();
    // The caller still holds the list it passed, so a callback cannot change
    // it safely...
    let append = Function::from_fn(|mut l: List, x: i64| l.push(x));
    let call = Function::get_global("testing.call").unwrap();
    let list = List::new(&[]).unwrap();
    let e = append.call::<_, ()>((&list, 1i64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    let e = call.call::<_, ()>((&append, &list, 1i64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    assert!(list.is_empty());
    // ...only through the unsafe shared methods, whose contract the caller
    // here keeps: every holder is on this thread.
    let append_shared = Function::from_fn(|l: List, x: i64| {
        // SAFETY: this test calls it on its own thread only, and no other
        // thread holds the list.
        unsafe { l.push_shared(x) }
    });
    append_shared.call::<_, ()>((&list, 1i64)).unwrap();
    call.call::<_, ()>((&append_shared, &list, 2i64)).unwrap();
    assert_eq!(ints(&list), [1, 2]);
    // SAFETY: as above, and for the rest of the shared methods.
    unsafe {
        list.insert_shared(0, 0i64).unwrap();
        list.set_shared(2, 5i64).unwrap();
        assert_eq!(list.remove_shared(-1).unwrap().to::<i64>().unwrap(), 5);
        assert_eq!(ints(&list), [0, 1]);
        list.clear_shared().unwrap();
    }
    assert!(list.is_empty());

    let put = Function::from_fn(|d: Dict, k: std::string::String| {
        // SAFETY: as above.
        unsafe { d.insert_shared(k, 1i64) }
    });
    let dict = Dict::new(std::iter::empty::<(Any, Any)>()).unwrap();
    call.call::<_, ()>((&put, &dict, "k")).unwrap();
    assert_eq!(dict.get_as::<i64>("k").unwrap(), 1);
    // SAFETY: as above.
    unsafe {
        dict.remove_shared("k").unwrap();
        dict.insert_shared("j", 2i64).unwrap();
        dict.clear_shared().unwrap();
    }
    assert!(dict.is_empty());
}
