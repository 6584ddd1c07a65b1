//! Object types declared in Rust, seen and used by C; reflection, structural
//! equality, JSON.

mod common;

use tvmnode::prelude::*;
use tvmnode::{node, Array, DataType, Function, Map, Object, TypeInfo};

node! {
    /// A leaf with a value, declared in Rust.
    pub struct Leaf: "rust_test.Leaf" {
        /// The value.
        value: i64,
    }
}

node! {
    /// A node with one field of every kind.
    pub struct Everything: "rust_test.Everything" kind dag {
        /// An int.
        count: i64,
        /// A float.
        scale: f64,
        /// A bool.
        flag: bool,
        /// A string.
        name: tvmnode::String,
        /// A data type.
        dtype: DataType,
        /// Any value.
        extra: Any,
        /// A child node of a Rust-declared type.
        child: Leaf,
        /// An optional array.
        items: Option<Array>,
    }
}

fn everything(count: i64, child: &Leaf) -> Everything {
    Everything::new(
        count,
        0.5,
        true,
        tvmnode::String::new("a name").unwrap(),
        DataType::F32,
        Any::from("extra"),
        child.clone(),
        None,
    )
    .unwrap()
}

#[test]
fn rust_node_type_is_in_the_c_type_table() {
    let _leaks = common::leak_check();
    let t = Everything::register().unwrap();
    assert!(t >= tvmnode::sys::TN_TYPE_DYNAMIC_BEGIN);
    assert_eq!(Everything::register().unwrap(), t, "idempotent");
    assert_eq!(tvmnode::type_index_of("rust_test.Everything").unwrap(), t);
    // What C knows, through C's own introspection function.
    let info: Map = Function::get_global("tn.type_info")
        .unwrap()
        .call(("rust_test.Everything",))
        .unwrap();
    assert_eq!(info.get_as::<std::string::String>("node_kind").unwrap(), "dag");
    let fields: Array = info.get_as("fields").unwrap();
    let names: Vec<std::string::String> = fields
        .iter_as::<Map>()
        .map(|m| m.unwrap().get_as("name").unwrap())
        .collect();
    assert_eq!(
        names,
        ["count", "scale", "flag", "name", "dtype", "extra", "child", "items"]
    );
    let ti = TypeInfo::of::<Everything>().unwrap();
    assert_eq!(ti.fields[6].type_key, Some("rust_test.Leaf"));
    assert_eq!(ti.fields[0].doc, "An int.");
}

#[test]
fn rust_node_read_by_rust_and_by_c() {
    let _leaks = common::leak_check();
    let leaf = Leaf::new(7).unwrap();
    let e = everything(3, &leaf);
    // Typed getters read the struct directly.
    assert_eq!(e.count(), 3);
    assert_eq!(e.scale(), 0.5);
    assert!(e.flag());
    assert_eq!(e.name(), "a name");
    assert_eq!(e.dtype(), DataType::F32);
    assert_eq!(e.extra().as_str().unwrap(), "extra");
    assert!(e.child().same_as(&leaf));
    assert!(e.items().is_none());
    // Reflection goes through the C table (what Python's node.attr does).
    assert_eq!(e.get_as::<i64>("count").unwrap(), 3);
    assert_eq!(e.get_as::<std::string::String>("name").unwrap(), "a name");
    assert_eq!(e.get("nope").unwrap_err().kind(), ErrorKind::AttributeError);
}

#[test]
fn c_builds_a_rust_declared_node() {
    let _leaks = common::leak_check();
    let t = Leaf::register().unwrap();
    // Generic kw-style construction in C (tn_node_new), as JSON loading or
    // Python would do it.
    let obj = tvmnode::node::node_new(t, &[("value", Any::from(41i64))]).unwrap();
    let leaf: Leaf = obj.try_into().unwrap();
    assert_eq!(leaf.value(), 41);
    // C checks field types, including those of Rust-declared types.
    let e = tvmnode::node::node_new(t, &[("value", Any::from("x"))]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeError);
    let e = tvmnode::node::node_new(t, &[]).unwrap_err();
    assert!(e.message().contains("value"), "{e}");
    let t2 = Everything::register().unwrap();
    let e = tvmnode::node::node_new(t2, &[("child", Any::from(Array::empty().unwrap()))]).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::TypeError,
        "an object field is checked against its type key"
    );
}

#[test]
fn set_requires_a_unique_handle() {
    let _leaks = common::leak_check();
    let leaf = Leaf::new(1).unwrap();
    let mut obj: Object = leaf.clone().into();
    let e = obj.set("value", 2i64).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RuntimeError);
    drop(leaf);
    obj.set("value", 2i64).unwrap();
    assert_eq!(obj.set("value", 2.5).unwrap_err().kind(), ErrorKind::TypeError);
    let leaf: Leaf = obj.try_into().unwrap();
    assert_eq!(leaf.value(), 2);
}

#[test]
fn structural_equality_hash_json_and_repr() {
    let _leaks = common::leak_check();
    let a = everything(1, &Leaf::new(7).unwrap());
    let b = everything(1, &Leaf::new(7).unwrap());
    let c = everything(1, &Leaf::new(8).unwrap());
    let (aa, ba, ca) = (Any::from(&a), Any::from(&b), Any::from(&c));
    assert!(tvmnode::structural_equal(&aa, &ba, false).unwrap());
    assert!(!tvmnode::structural_equal(&aa, &ca, false).unwrap());
    assert_eq!(
        tvmnode::structural_hash(&aa, false).unwrap(),
        tvmnode::structural_hash(&ba, false).unwrap()
    );
    let path = tvmnode::structural_diff(&aa, &ca, false).unwrap().unwrap();
    assert!(path.contains("child.value"), "{path}");
    // JSON round trip of a Rust-declared node graph, loaded by C.
    let json = tvmnode::to_json(&aa, 0).unwrap();
    assert!(json.contains("rust_test.Everything"));
    let back = tvmnode::from_json(&json).unwrap();
    let back: Everything = back.try_into().unwrap();
    assert!(tvmnode::structural_equal(&aa, &Any::from(&back), false).unwrap());
    assert_eq!(back.child().value(), 7);
    let text = a.to_string();
    assert!(
        text.contains("rust_test.Everything") && text.contains("count=1"),
        "{text}"
    );
    assert!(tvmnode::to_dot(&aa).unwrap().contains("digraph"));
    // Rust-declared nodes in containers and through C functions.
    let arr = Array::from_values([&a, &b]).unwrap();
    let echoed: Array = Function::get_global("testing.echo")
        .unwrap()
        .call((&arr,))
        .unwrap();
    let first: Everything = echoed.get_as(0).unwrap();
    assert!(first.same_as(&a));
}

#[test]
fn bad_json_is_a_value_error() {
    let _leaks = common::leak_check();
    let e = tvmnode::from_json("{\"tvmnode.json\": 1, \"root\": 1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    assert!(e.message().contains("line"), "{e}");
}
