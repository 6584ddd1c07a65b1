//! Every struct size and field offset declared in Rust, checked against the
//! C headers.
//!
//! One table (the `layouts!` invocation below) produces both sides: a C
//! program that prints `sizeof`/`offsetof` for each entry, compiled with the
//! system C compiler (`$CC`, else `cc`) against the headers the build script
//! found, and the same figures from `size_of`/`offset_of!` in Rust. Any
//! difference, or a constant whose value differs, fails the test with the
//! name of the entry.

use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use tvmnode_sys::*;

/// `(c_expression, rust_value)` pairs for sizes, alignments and offsets.
macro_rules! layouts {
    ($($c:ident as $r:ty { $($cf:ident => $rf:ident),* $(,)? })*) => {{
        let mut v: Vec<(String, usize)> = Vec::new();
        $(
            v.push((format!("sizeof({})", stringify!($c)), size_of::<$r>()));
            v.push((format!("_Alignof({})", stringify!($c)), align_of::<$r>()));
            $( v.push((format!("offsetof({}, {})", stringify!($c), stringify!($cf)), offset_of!($r, $rf))); )*
        )*
        v
    }};
}

/// `(c_expression, rust_value)` pairs for integer constants.
macro_rules! constants {
    ($($name:ident),* $(,)?) => {
        vec![$( (stringify!($name).to_string(), $name as i64) ),*]
    };
}

fn rust_layouts() -> Vec<(String, usize)> {
    layouts! {
        TnObject as TnObject { ref_counter => ref_counter, type_index => type_index, flags => flags, deleter => deleter }
        TnByteArray as TnByteArray { data => data, size => size }
        TnAny as TnAny { type_index => type_index, small_len => small_len, v_int64 => v, v_small => v }
        TnStringObj as TnStringObj { header => header, data => data, size => size, hash => hash }
        TnFunctionObj as TnFunctionObj { header => header, fn => fn_, self => self_, self_deleter => self_deleter }
        TnShapeObj as TnShapeObj { header => header, data => data, ndim => ndim }
        TnTensorObj as TnTensorObj { header => header, dl => dl }
        TnFieldDesc as TnFieldDesc {
            name => name, offset => offset, kind => kind, flags => flags,
            type_key => type_key, default_value => default_value, doc => doc,
        }
        TnNodeDesc as TnNodeDesc {
            type_key => type_key, parent_index => parent_index, kind => kind, flags => flags,
            size => size, fields => fields, nfields => nfields, doc => doc, deleter => deleter,
        }
        TnIrType as TnIrType { header => header }
        TnIrTensorType as TnIrTensorType { base => base, shape => shape, dtype => dtype }
        TnIrTupleType as TnIrTupleType { base => base, fields => fields }
        TnIrFuncType as TnIrFuncType { base => base, arg_types => arg_types, ret_type => ret_type }
        TnIrExpr as TnIrExpr { header => header, checked_type => checked_type }
        TnIrVar as TnIrVar { base => base, name_hint => name_hint, type_annotation => type_annotation }
        TnIrConstant as TnIrConstant { base => base, data => data }
        TnIrOp as TnIrOp {
            base => base, name => name, num_inputs => num_inputs, attrs_type => attrs_type,
            attrs_index => attrs_index,
            attr_map => attr_map, attr_retired => attr_retired,
        }
        TnIrCall as TnIrCall { base => base, op => op, args => args, attrs => attrs }
        TnIrTuple as TnIrTuple { base => base, fields => fields }
        TnIrTupleGetItem as TnIrTupleGetItem { base => base, tuple => tuple, index => index }
        TnIrLet as TnIrLet { base => base, var => var, value => value, body => body }
        TnIrFunction as TnIrFunction { base => base, params => params, body => body, ret_type => ret_type, attrs => attrs }
        TnIrGlobalVar as TnIrGlobalVar { base => base, name_hint => name_hint }
        TnIrModule as TnIrModule { header => header, functions => functions, attrs => attrs }
        TnIrTypes as TnIrTypes {
            type => type_, tensor_type => tensor_type, tuple_type => tuple_type, func_type => func_type,
            expr => expr, var => var, constant => constant, op => op, call => call, tuple => tuple,
            tuple_get_item => tuple_get_item, let => let_, function => function,
            global_var => global_var, module => module, attrs => attrs,
        }
        DLPackVersion as DLPackVersion { major => major, minor => minor }
        DLDevice as DLDevice { device_type => device_type, device_id => device_id }
        DLDataType as DLDataType { code => code, bits => bits, lanes => lanes }
        DLTensor as DLTensor {
            data => data, device => device, ndim => ndim, dtype => dtype,
            shape => shape, strides => strides, byte_offset => byte_offset,
        }
        DLManagedTensor as DLManagedTensor { dl_tensor => dl_tensor, manager_ctx => manager_ctx, deleter => deleter }
        DLManagedTensorVersioned as DLManagedTensorVersioned {
            version => version, manager_ctx => manager_ctx, deleter => deleter,
            flags => flags, dl_tensor => dl_tensor,
        }
    }
}

fn rust_constants() -> Vec<(String, i64)> {
    let mut v = constants![
        TN_ABI_VERSION_MAJOR,
        TN_ABI_VERSION_MINOR,
        TN_ABI_VERSION,
        TN_TYPE_NONE,
        TN_TYPE_INT,
        TN_TYPE_BOOL,
        TN_TYPE_FLOAT,
        TN_TYPE_OPAQUE_PTR,
        TN_TYPE_DATA_TYPE,
        TN_TYPE_DEVICE,
        TN_TYPE_DLTENSOR_PTR,
        TN_TYPE_RAW_STR,
        TN_TYPE_RAW_BYTES,
        TN_TYPE_SMALL_STR,
        TN_TYPE_SMALL_BYTES,
        TN_TYPE_STATIC_OBJECT_BEGIN,
        TN_TYPE_OBJECT,
        TN_TYPE_STRING,
        TN_TYPE_BYTES,
        TN_TYPE_ERROR,
        TN_TYPE_FUNCTION,
        TN_TYPE_SHAPE,
        TN_TYPE_TENSOR,
        TN_TYPE_ARRAY,
        TN_TYPE_LIST,
        TN_TYPE_MAP,
        TN_TYPE_DICT,
        TN_TYPE_MODULE,
        TN_TYPE_OPAQUE_OBJECT,
        TN_TYPE_CCLOSURE,
        TN_TYPE_DYNAMIC_BEGIN,
        TN_SMALL_STR_MAX,
        TN_DELETER_DESTRUCT,
        TN_DELETER_FREE,
        TN_DELETER_BOTH,
        TN_ERR_OTHER,
        TN_ERR_RUNTIME,
        TN_ERR_TYPE,
        TN_ERR_VALUE,
        TN_ERR_INDEX,
        TN_ERR_KEY,
        TN_ERR_ATTRIBUTE,
        TN_ERR_MEMORY,
        TN_ERR_OVERFLOW,
        TN_ERR_NOT_IMPLEMENTED,
        TN_TENSOR_ALIGNMENT,
        TN_FIELD_ANY,
        TN_FIELD_OBJ,
        TN_FIELD_INT,
        TN_FIELD_FLOAT,
        TN_FIELD_BOOL,
        TN_FIELD_STR,
        TN_FIELD_DTYPE,
        TN_FIELD_DEVICE,
        TN_FIELD_READONLY,
        TN_FIELD_NO_SEQ,
        TN_FIELD_HAS_DEFAULT,
        TN_FIELD_OPTIONAL,
        TN_FIELD_DEF,
        TN_FIELD_NO_SAVE,
        TN_NODE_TREE,
        TN_NODE_DAG,
        TN_NODE_VAR,
        TN_NODE_UNIQUE,
        TN_NODE_NO_CREATE,
        TN_OP_ELEMWISE,
        TN_OP_BROADCAST,
        TN_OP_INJECTIVE,
        TN_OP_REDUCE,
        TN_OP_OUT_FUSABLE,
        TN_OP_OPAQUE,
        DLPACK_MAJOR_VERSION,
        DLPACK_MINOR_VERSION,
        DLPACK_FLAG_BITMASK_READ_ONLY,
        DLPACK_FLAG_BITMASK_IS_COPIED,
        kDLCPU,
        kDLCUDA,
        kDLCUDAHost,
        kDLOpenCL,
        kDLVulkan,
        kDLMetal,
        kDLVPI,
        kDLROCM,
        kDLROCMHost,
        kDLExtDev,
        kDLCUDAManaged,
        kDLOneAPI,
        kDLWebGPU,
        kDLHexagon,
        kDLMAIA,
        kDLInt,
        kDLUInt,
        kDLFloat,
        kDLOpaqueHandle,
        kDLBfloat,
        kDLComplex,
        kDLBool,
        kDLFloat8_e3m4,
        kDLFloat8_e4m3,
        kDLFloat8_e4m3b11fnuz,
        kDLFloat8_e4m3fn,
        kDLFloat8_e4m3fnuz,
        kDLFloat8_e5m2,
        kDLFloat8_e5m2fnuz,
        kDLFloat8_e8m0fnu,
        kDLFloat6_e2m3fn,
        kDLFloat6_e3m2fn,
        kDLFloat4_e2m1fn,
    ];
    // Types whose size is fixed by a C enum.
    v.push(("sizeof(DLDeviceType)".into(), size_of::<DLDeviceType>() as i64));
    v.push((
        "sizeof(DLDataTypeCode)".into(),
        size_of::<DLDataTypeCode>() as i64,
    ));
    v.push(("sizeof(TnDeleter)".into(), size_of::<TnDeleter>() as i64));
    v.push(("sizeof(TnPackedFn)".into(), size_of::<TnPackedFn>() as i64));
    v
}

fn include_dir() -> Option<PathBuf> {
    let dir = env!("TVMNODE_INCLUDE_DIR");
    if !dir.is_empty() {
        return Some(PathBuf::from(dir));
    }
    // Fall back to the source tree this crate lives in.
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../libtvmnode/include");
    here.exists().then_some(here)
}

/// Where `tvmnode/crt/model.h` is: beside the library's headers once
/// installed, `runtime/crt/include` in the source tree.
fn crt_include_dir() -> Option<PathBuf> {
    let inc = include_dir()?;
    if inc.join("tvmnode/crt/model.h").exists() {
        return Some(inc);
    }
    let src = inc.join("../../runtime/crt/include");
    src.join("tvmnode/crt/model.h").exists().then_some(src)
}

fn c_values(name: &str, exprs: &[String]) -> BTreeMap<String, i64> {
    c_values_with(name, exprs, &["tvmnode/tvmnode.h"], &[])
}

/// Compile and run a C program that prints each expression of `exprs`,
/// with `headers` included (the include directory the build script found,
/// and `extra_include`, on the path).
fn c_values_with(
    name: &str,
    exprs: &[String],
    headers: &[&str],
    extra_include: &[PathBuf],
) -> BTreeMap<String, i64> {
    let inc = include_dir().expect("no include directory: set TVMNODE_INCLUDE_DIR");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = out.join(format!("{name}.c"));
    let exe = out.join(name);
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n");
    for h in headers {
        c.push_str(&format!("#include <{h}>\n"));
    }
    c.push_str("int main(void) {\n");
    for e in exprs {
        c.push_str(&format!("  printf(\"%s=%lld\\n\", \"{e}\", (long long)({e}));\n"));
    }
    c.push_str("  return 0;\n}\n");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(&inc);
    for dir in extra_include {
        cmd.arg("-I").arg(dir);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
    assert!(status.success(), "the layout probe did not compile");
    let output = Command::new(&exe).output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn struct_sizes_and_offsets_match_the_c_headers() {
    let rust = rust_layouts();
    let exprs: Vec<String> = rust.iter().map(|(e, _)| e.clone()).collect();
    let c = c_values("layout_probe", &exprs);
    let mut bad = Vec::new();
    for (e, r) in &rust {
        let cv = c[e];
        if cv != *r as i64 {
            bad.push(format!("{e}: C {cv}, Rust {r}"));
        }
    }
    assert!(bad.is_empty(), "layout mismatches:\n{}", bad.join("\n"));
    assert!(
        rust.len() > 150,
        "the table covers every struct ({} entries)",
        rust.len()
    );
}

#[test]
fn constants_match_the_c_headers() {
    let rust = rust_constants();
    let exprs: Vec<String> = rust.iter().map(|(e, _)| e.clone()).collect();
    let c = c_values("constant_probe", &exprs);
    assert_same("constant", &rust, &c);
}

/// Fail naming every entry whose Rust value differs from C's.
fn assert_same(what: &str, rust: &[(String, i64)], c: &BTreeMap<String, i64>) {
    let bad: Vec<String> = rust
        .iter()
        .filter(|(e, r)| c[e] != *r)
        .map(|(e, r)| format!("{e}: C {}, Rust {r}", c[e]))
        .collect();
    assert!(bad.is_empty(), "{what} mismatches:\n{}", bad.join("\n"));
}

#[test]
fn linked_library_speaks_this_abi() {
    // SAFETY: no arguments.
    let v = unsafe { tn_abi_version() };
    assert_eq!(v / 1000, TN_ABI_VERSION_MAJOR);
}

#[test]
fn raw_packed_call() {
    // The raw API end to end: look up, call through the public layout,
    // release, and nothing left alive.
    unsafe {
        let before = tn_object_live_count();
        let f = tn_func_get(c"testing.add_i64".as_ptr());
        assert!(!f.is_null());
        let args = [
            TnAny {
                type_index: TN_TYPE_INT,
                small_len: 0,
                v: TnAnyValue { v_int64: 40 },
            },
            TnAny {
                type_index: TN_TYPE_INT,
                small_len: 0,
                v: TnAnyValue { v_int64: 2 },
            },
        ];
        let mut ret = TnAny {
            type_index: TN_TYPE_NONE,
            small_len: 0,
            v: TnAnyValue { v_int64: 0 },
        };
        let fo = &*(f as *const TnFunctionObj);
        assert_eq!((fo.fn_.unwrap())(fo.self_, args.as_ptr(), 2, &mut ret), 0);
        assert_eq!(ret.type_index, TN_TYPE_INT);
        assert_eq!(ret.v.v_int64, 42);
        tn_object_release(f);
        assert_eq!(tn_object_live_count(), before);
    }
}

#[test]
fn model_descriptor_matches_crt_model_h() {
    // The descriptor structs and constants of tvmnode/crt/model.h (and the
    // element types of kernels.h), which tvmnode.h does not include.
    let crt = crt_include_dir().expect("tvmnode/crt/model.h not found beside the library's headers");
    let mut rust: Vec<(String, i64)> = layouts! {
        TnCrtTensorInfo as TnCrtTensorInfo {
            name => name, dtype => dtype, ndim => ndim, shape => shape, nbytes => nbytes,
            scale => scale, zero_point => zero_point, pool => pool, offset => offset,
        }
        TnCrtPoolInfo as TnCrtPoolInfo { name => name, size => size, alignment => alignment }
        TnCrtModel as TnCrtModel {
            magic => magic, abi_version => abi_version, name => name, version => version,
            num_inputs => num_inputs, num_outputs => num_outputs, inputs => inputs,
            outputs => outputs, num_workspace_pools => num_workspace_pools,
            workspace_pools => workspace_pools, num_constant_pools => num_constant_pools,
            constant_pools => constant_pools, constant_pool_data => constant_pool_data,
            num_devices => num_devices, devices => devices, macs => macs,
            constant_bytes => constant_bytes, run => run,
        }
        TnCrtModelEntry as TnCrtModelEntry { model => model, next => next }
        TnCrtStatefulModel as TnCrtStatefulModel {
            base => base, state_pool_size => state_pool_size,
            state_pool_alignment => state_pool_alignment, run_with_state => run_with_state,
            reset => reset,
        }
    }
    .into_iter()
    .map(|(e, v)| (e, v as i64))
    .collect();
    rust.extend(constants![
        TN_CRT_MODEL_MAGIC,
        TN_CRT_MODEL_STATE_MAGIC,
        TN_CRT_MODEL_ABI_VERSION,
        TN_CRT_MAX_IO,
        TN_CRT_MAX_POOLS,
        TN_CRT_F32,
        TN_CRT_I32,
        TN_CRT_I8,
        TN_CRT_U8,
        TN_CRT_I64,
        TN_CRT_F64,
        TN_CRT_I16,
        TN_CRT_BOOL,
    ]);
    rust.push(("sizeof(TnCrtModelRun)".into(), size_of::<TnCrtModelRun>() as i64));
    let exprs: Vec<String> = rust.iter().map(|(e, _)| e.clone()).collect();
    let c = c_values_with(
        "model_probe",
        &exprs,
        &["tvmnode/crt/model.h", "tvmnode/crt/kernels.h"],
        &[crt],
    );
    assert_same("model descriptor", &rust, &c);
}
