//! Values, containers and handles, round-tripped through C.

mod common;

use tvmnode::prelude::*;
use tvmnode::{Array, Bytes, DataType, Device, Dict, Function, List, Map, Object, Shape, Tensor};

/// Send a value through C (`testing.echo` returns an owned copy).
fn echo(v: impl IntoAny) -> Any {
    let echo = Function::get_global("testing.echo").unwrap();
    echo.call((v,)).unwrap()
}

#[test]
fn plain_values_round_trip_through_c() {
    let _leaks = common::leak_check();
    assert_eq!(i64::try_from(echo(42i64)).unwrap(), 42);
    assert_eq!(i64::try_from(echo(i64::MIN)).unwrap(), i64::MIN);
    assert_eq!(i32::try_from(echo(-7i32)).unwrap(), -7);
    assert_eq!(u8::try_from(echo(255u8)).unwrap(), 255);
    assert_eq!(f64::try_from(echo(2.5f64)).unwrap(), 2.5);
    assert!(bool::try_from(echo(true)).unwrap());
    assert!(echo(()).is_none());
    assert!(echo(None::<i64>).is_none());
    assert_eq!(echo(Some(3i64)).to::<Option<i64>>().unwrap(), Some(3));
    assert_eq!(echo(1i64).type_key(), "int");
    assert_eq!(echo(1.0).type_key(), "float");
    // Ints convert to floats, not the other way round.
    assert_eq!(f64::try_from(echo(3i64)).unwrap(), 3.0);
    let e = i64::try_from(echo(3.5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(e.message().contains("expected int, got float"), "{e}");
    // Narrowing is checked.
    let e = u8::try_from(echo(300i64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OverflowError);
    assert!(Any::try_from(u64::MAX).is_err());
}

#[test]
fn strings_and_bytes_round_trip() {
    let _leaks = common::leak_check();
    // Short strings live inline, long ones are tn.String objects.
    let short = echo("hi");
    assert!(!short.is_object());
    assert_eq!(short.as_str().unwrap(), "hi");
    let long_text = "a string well over seven bytes, with ünïcödé";
    let long = echo(long_text);
    assert!(long.is_object());
    assert_eq!(long.type_key(), "tn.String");
    assert_eq!(std::string::String::try_from(long).unwrap(), long_text);
    let s = tvmnode::String::new("hello, world").unwrap();
    assert_eq!(s, "hello, world");
    assert_eq!(s.len(), 12);
    let back: tvmnode::String = echo(&s).try_into().unwrap();
    assert!(back.same_as(&s), "echo must return the same object");
    let b = Bytes::new(&[0, 1, 2, 255, 0, 7, 8, 9, 10]).unwrap();
    assert_eq!(b.as_bytes(), &[0, 1, 2, 255, 0, 7, 8, 9, 10]);
    let bytes: Vec<u8> = echo(&b"raw\0bytes"[..]).try_into().unwrap();
    assert_eq!(bytes, b"raw\0bytes");
    // A str with an interior NUL survives (it is a length, not a C string).
    assert_eq!(echo("a\0b").as_str().unwrap(), "a\0b");
}

#[test]
fn dtype_and_device() {
    let _leaks = common::leak_check();
    let f32: DataType = "float32".parse().unwrap();
    assert_eq!(f32, DataType::F32);
    assert_eq!(f32.to_string(), "float32");
    assert_eq!("uint8x4".parse::<DataType>().unwrap().lanes(), 4);
    assert_eq!(DataType::try_from(echo(DataType::I8)).unwrap(), DataType::I8);
    let e = "floaty".parse::<DataType>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    let dev: Device = "cpu:0".parse().unwrap();
    assert_eq!(dev, Device::cpu(0));
    assert_eq!(Device::try_from(echo(dev)).unwrap(), dev);
    assert!(dev.to_string().starts_with("cpu"));
}

#[test]
fn array_reads_iterates_and_copies_on_write() {
    let _leaks = common::leak_check();
    let a = Array::from_values([1i64, 2, 3]).unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(a.get_as::<i64>(-1).unwrap(), 3);
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![1, 2, 3]);
    let rev: Vec<i64> = a.iter().rev().map(|x| x.to().unwrap()).collect();
    assert_eq!(rev, vec![3, 2, 1]);
    let e = a.get(3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexError);

    // Copy-on-write: a shared array is copied, the other holder sees no
    // change; a unique one is changed in place.
    let mut b = a.clone();
    b.push("four").unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(b.len(), 4);
    assert!(!a.same_as(&b));
    let before = b.as_ptr();
    b.set(0, 10i64).unwrap();
    assert_eq!(b.as_ptr(), before, "a unique array changes in place");
    assert_eq!(b.pop().unwrap().as_str().unwrap(), "four");

    let mixed: Array = vec![Any::from(1i64), Any::from("x"), Any::from(2.5)]
        .into_iter()
        .collect();
    assert_eq!(mixed.get(1).unwrap().as_str().unwrap(), "x");
    // Through C and back, and as a nested value.
    let outer = Array::from_values([&mixed, &a]).unwrap();
    let back: Array = echo(&outer).try_into().unwrap();
    let inner: Array = back.get_as(0).unwrap();
    assert!(inner.same_as(&mixed));
}

#[test]
fn list_changes_in_place_through_its_sole_reference() {
    let _leaks = common::leak_check();
    let mut l = List::new(&[]).unwrap();
    let before = l.as_ptr();
    l.push(1i64).unwrap();
    l.push("two").unwrap();
    l.insert(0, 0i64).unwrap();
    assert_eq!(l.len(), 3);
    assert_eq!(l.as_ptr(), before, "changed in place, never copied");
    assert_eq!(l.remove(-1).unwrap().as_str().unwrap(), "two");
    l.set(1, 5i64).unwrap();
    assert_eq!(l.to_vec::<i64>().unwrap(), vec![0, 5]);
    // Another holder sees the list, and makes changing it an error rather
    // than a copy.
    let alias = l.clone();
    let e = l.push(6i64).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    assert!(e.message().contains("shared tn.List"), "{e}");
    assert_eq!(l.clear().unwrap_err().kind(), ErrorKind::RuntimeError);
    assert_eq!(alias.len(), 2, "a refused change changes nothing");
    drop(alias);
    l.clear().unwrap();
    assert!(l.is_empty());
    // A List is not an Array.
    let as_obj: Object = l.clone().into();
    assert!(as_obj.clone().downcast::<Array>().is_err());
    assert!(as_obj.downcast::<List>().is_ok());
}

#[test]
fn map_and_dict() {
    let _leaks = common::leak_check();
    let mut m = Map::new([("a", 1i64), ("b", 2i64)]).unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m.get_as::<i64>("a").unwrap(), 1);
    assert!(m.get("zzz").is_none());
    let e = m.get_as::<i64>("zzz").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::KeyError);
    let shared = m.clone();
    m.insert("c", 3i64).unwrap();
    assert_eq!(shared.len(), 2);
    assert_eq!(m.len(), 3);
    m.remove("a").unwrap();
    let keys: Vec<std::string::String> = m.keys().map(|k| k.to().unwrap()).collect();
    assert_eq!(keys, ["b", "c"], "insertion order");
    // Keys compare as in Python: 1 == 1.0 == true.
    let nums = Map::new([(1i64, "one")]).unwrap();
    assert_eq!(nums.get_as::<std::string::String>(1.0).unwrap(), "one");
    let back: Map = echo(&m).try_into().unwrap();
    assert!(back.same_as(&m));
    let collected: Map = [("k", 1i64)].into_iter().collect();
    assert_eq!(collected.len(), 1);

    let mut d = Dict::new([("x", 1i64)]).unwrap();
    d.insert("y", 2i64).unwrap();
    assert_eq!(d.len(), 2);
    d.remove("x").unwrap();
    assert_eq!(d.remove("x").unwrap_err().kind(), ErrorKind::KeyError);
    let alias = d.clone();
    assert!(!alias.contains_key("x"));
    for (k, v) in &alias {
        assert_eq!(k.as_str().unwrap(), "y");
        assert_eq!(v.to::<i64>().unwrap(), 2);
    }
    assert_eq!(d.insert("z", 3i64).unwrap_err().kind(), ErrorKind::RuntimeError);
    assert_eq!(d.clear().unwrap_err().kind(), ErrorKind::RuntimeError);
    drop(alias);
    d.clear().unwrap();
    assert!(d.is_empty());
}

#[test]
fn shape_and_tensor() {
    let _leaks = common::leak_check();
    let s = Shape::new(&[2, 3, 4]).unwrap();
    assert_eq!(s.as_slice(), &[2, 3, 4]);
    assert_eq!(s, [2, 3, 4]);
    assert_eq!(s[1], 3);
    assert_eq!(s.numel().unwrap(), 24);
    assert_eq!(Shape::new(&[-1]).unwrap_err().kind(), ErrorKind::ValueError);
    let back: Shape = echo(&s).try_into().unwrap();
    assert_eq!(back.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4]);

    let t = Tensor::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(t.shape(), &[2, 2]);
    assert_eq!(t.dtype(), DataType::F32);
    assert_eq!(t.nbytes(), 16);
    assert!(t.is_contiguous());
    assert_eq!(t.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(t.as_slice::<i32>().unwrap_err().kind(), ErrorKind::TypeError);
    let z = Tensor::empty(&[3], DataType::I64, Device::cpu(0)).unwrap();
    assert_eq!(z.to_vec::<i64>().unwrap(), vec![0, 0, 0]);
    assert!(Tensor::from_slice(&[3], &[1i8]).is_err());
}

#[test]
fn downcasts_are_checked() {
    let _leaks = common::leak_check();
    let a: Object = Array::empty().unwrap().into();
    assert!(a.is::<Array>());
    assert!(a.is::<Object>());
    assert!(!a.is::<Map>());
    assert!(a.downcast_ref::<Map>().is_none());
    assert_eq!(a.type_key(), "tn.Array");
    let e = Map::try_from(a.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    assert!(e.message().contains("expected tn.Map, got tn.Array"), "{e}");
    let e = Array::try_from(Any::from(1i64)).unwrap_err();
    assert!(e.message().contains("expected tn.Array, got int"), "{e}");
    let arr = a.downcast::<Array>().unwrap();
    assert_eq!(arr.len(), 0);
}

#[test]
fn clone_retains_drop_releases_weak_upgrades() {
    let _leaks = common::leak_check();
    let a = Array::from_values([1i64]).unwrap();
    assert_eq!(a.strong_count(), 1);
    let b = a.clone();
    assert_eq!(a.strong_count(), 2);
    drop(b);
    assert_eq!(a.strong_count(), 1);
    let w = a.downgrade();
    assert!(w.upgrade().is_some());
    drop(a);
    assert!(w.upgrade().is_none(), "the object died with its last strong ref");
}

#[test]
fn handles_cross_threads() {
    let _leaks = common::leak_check();
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Object>();
    assert_send_sync::<Array>();
    assert_send_sync::<Map>();
    assert_send_sync::<Function>();
    assert_send_sync::<Any>();
    assert_send_sync::<tvmnode::Error>();
    let a = Array::from_values(0..100i64).unwrap();
    let sums: Vec<i64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let a = a.clone();
                s.spawn(move || a.iter_as::<i64>().map(|x| x.unwrap()).sum::<i64>())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(sums.iter().all(|&s| s == 4950));
}

#[test]
fn display_uses_the_c_printer() {
    let _leaks = common::leak_check();
    let a = Array::from_values([1i64, 2]).unwrap();
    let text = a.to_string();
    assert!(text.contains('1') && text.contains('2'), "{text}");
    assert_eq!(format!("{}", Any::from(7i64)), "7");
}
