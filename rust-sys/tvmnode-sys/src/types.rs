//! The C ABI's types and constants, written by hand.
//!
//! Written rather than generated so that the names read well from Rust (the
//! `TnAny` union is the named field `v` of type [`TnAnyValue`]; every type
//! index and flag is an `i32` like the C fields it is compared with, where a
//! generator would pick `c_uint` for C enums). The layout test in
//! `tests/layout.rs` compiles the C headers and checks every size and offset
//! given here against them.

use core::ffi::{c_char, c_int, c_void};

// ---------------------------------------------------------------------------
// Versions

/// `TN_ABI_VERSION_MAJOR`: these declarations were written for it.
pub const TN_ABI_VERSION_MAJOR: i32 = 2;
/// `TN_ABI_VERSION_MINOR`.
pub const TN_ABI_VERSION_MINOR: i32 = 0;
/// `TN_ABI_VERSION`: `major * 1000 + minor` (compare with `tn_abi_version()`).
pub const TN_ABI_VERSION: i32 = TN_ABI_VERSION_MAJOR * 1000 + TN_ABI_VERSION_MINOR;

// ---------------------------------------------------------------------------
// Type indices

/// None.
pub const TN_TYPE_NONE: i32 = 0;
/// int (int64).
pub const TN_TYPE_INT: i32 = 1;
/// bool.
pub const TN_TYPE_BOOL: i32 = 2;
/// float (double).
pub const TN_TYPE_FLOAT: i32 = 3;
/// void*.
pub const TN_TYPE_OPAQUE_PTR: i32 = 4;
/// DLDataType.
pub const TN_TYPE_DATA_TYPE: i32 = 5;
/// DLDevice.
pub const TN_TYPE_DEVICE: i32 = 6;
/// DLTensor* (borrowed).
pub const TN_TYPE_DLTENSOR_PTR: i32 = 7;
/// Borrowed `const char *`, NUL-terminated.
pub const TN_TYPE_RAW_STR: i32 = 8;
/// Borrowed `const TnByteArray *`.
pub const TN_TYPE_RAW_BYTES: i32 = 9;
/// Up to 7 bytes inline, length in `small_len`.
pub const TN_TYPE_SMALL_STR: i32 = 10;
/// Up to 7 bytes inline, length in `small_len`.
pub const TN_TYPE_SMALL_BYTES: i32 = 11;
/// First object type index.
pub const TN_TYPE_STATIC_OBJECT_BEGIN: i32 = 64;
/// tn.Object.
pub const TN_TYPE_OBJECT: i32 = 64;
/// tn.String.
pub const TN_TYPE_STRING: i32 = 65;
/// tn.Bytes.
pub const TN_TYPE_BYTES: i32 = 66;
/// tn.Error.
pub const TN_TYPE_ERROR: i32 = 67;
/// tn.Function.
pub const TN_TYPE_FUNCTION: i32 = 68;
/// tn.Shape.
pub const TN_TYPE_SHAPE: i32 = 69;
/// tn.Tensor.
pub const TN_TYPE_TENSOR: i32 = 70;
/// tn.Array.
pub const TN_TYPE_ARRAY: i32 = 71;
/// tn.List.
pub const TN_TYPE_LIST: i32 = 72;
/// tn.Map.
pub const TN_TYPE_MAP: i32 = 73;
/// tn.Dict.
pub const TN_TYPE_DICT: i32 = 74;
/// tn.Module.
pub const TN_TYPE_MODULE: i32 = 75;
/// tn.OpaqueObject: wraps a foreign handle with a release hook.
pub const TN_TYPE_OPAQUE_OBJECT: i32 = 76;
/// tn.CClosure: owns a C function pointer made from a function.
pub const TN_TYPE_CCLOSURE: i32 = 77;
/// First index handed out at run time.
pub const TN_TYPE_DYNAMIC_BEGIN: i32 = 128;

/// Largest inline small string or bytes value, in bytes.
pub const TN_SMALL_STR_MAX: i32 = 7;

// ---------------------------------------------------------------------------
// Error kinds (`TN_ERROR_KIND_MAP` in abi.h; codes are stable, appended only)

/// `TnErrorKind`: the code of an error kind.
pub type TnErrorKind = i32;
/// A kind that is not in the table (any other name).
pub const TN_ERR_OTHER: TnErrorKind = -1;
/// `RuntimeError`.
pub const TN_ERR_RUNTIME: TnErrorKind = 0;
/// `TypeError`.
pub const TN_ERR_TYPE: TnErrorKind = 1;
/// `ValueError`.
pub const TN_ERR_VALUE: TnErrorKind = 2;
/// `IndexError`.
pub const TN_ERR_INDEX: TnErrorKind = 3;
/// `KeyError`.
pub const TN_ERR_KEY: TnErrorKind = 4;
/// `AttributeError`.
pub const TN_ERR_ATTRIBUTE: TnErrorKind = 5;
/// `MemoryError`.
pub const TN_ERR_MEMORY: TnErrorKind = 6;
/// `OverflowError`.
pub const TN_ERR_OVERFLOW: TnErrorKind = 7;
/// `NotImplementedError`.
pub const TN_ERR_NOT_IMPLEMENTED: TnErrorKind = 8;

// ---------------------------------------------------------------------------
// Objects

/// Deleter flag: release what the object holds.
pub const TN_DELETER_DESTRUCT: c_int = 1;
/// Deleter flag: give back the object's own memory.
pub const TN_DELETER_FREE: c_int = 2;
/// Both deleter steps at once.
pub const TN_DELETER_BOTH: c_int = 3;

/// An object's deleter, called with `TN_DELETER_*` flags.
pub type TnDeleter = Option<unsafe extern "C" fn(self_: *mut TnObject, flags: c_int)>;

/// The 24-byte header at the start of every object. Touch `ref_counter`
/// only through `tn_object_retain`/`release` and friends.
#[repr(C)]
#[derive(Debug)]
pub struct TnObject {
    /// Strong count (low 32 bits) and weak count (high 32 bits).
    pub ref_counter: u64,
    /// Index in the type registry.
    pub type_index: i32,
    /// Owned by the library; leave alone.
    pub flags: u32,
    /// Called when the counts drop to zero; NULL for static storage.
    pub deleter: TnDeleter,
}

// ---------------------------------------------------------------------------
// Any

/// A borrowed byte range, carried by pointer in a `TN_TYPE_RAW_BYTES` any.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TnByteArray {
    /// First byte.
    pub data: *const c_char,
    /// Length in bytes.
    pub size: usize,
}

/// The 8-byte payload of a [`TnAny`]; `type_index` says which member is
/// active.
#[repr(C)]
#[derive(Clone, Copy)]
pub union TnAnyValue {
    /// int and bool.
    pub v_int64: i64,
    /// float.
    pub v_float64: f64,
    /// Opaque pointer.
    pub v_ptr: *mut c_void,
    /// Object.
    pub v_obj: *mut TnObject,
    /// Raw string (borrowed).
    pub v_c_str: *const c_char,
    /// Raw bytes (borrowed).
    pub v_bytes_ptr: *const TnByteArray,
    /// DLTensor pointer (borrowed).
    pub v_dltensor: *mut DLTensor,
    /// DataType.
    pub v_dtype: DLDataType,
    /// Device.
    pub v_device: DLDevice,
    /// Inline small string or bytes (NUL-terminated).
    pub v_small: [c_char; 8],
}

/// A 16-byte tagged value: the universal argument, return and element type.
/// Unused bytes are zero.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TnAny {
    /// What the value is (`TN_TYPE_*` or an object's type index).
    pub type_index: i32,
    /// Length of an inline small string/bytes, else 0.
    pub small_len: u32,
    /// The payload.
    pub v: TnAnyValue,
}

impl core::fmt::Debug for TnAny {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: every member is 8 plain bytes or fewer; reading the int view
        // of any of them is defined (the union is fully initialised).
        let bits = unsafe { self.v.v_int64 };
        write!(
            f,
            "TnAny {{ type_index: {}, small_len: {}, bits: {:#x} }}",
            self.type_index, self.small_len, bits
        )
    }
}

/// The packed calling convention: `args` borrowed, `*ret` owned by the
/// caller (set to None before the call); 0, or -1 with the error raised.
pub type TnPackedFn = Option<
    unsafe extern "C" fn(self_: *mut c_void, args: *const TnAny, nargs: i32, ret: *mut TnAny) -> c_int,
>;

// ---------------------------------------------------------------------------
// Built-in object layouts

/// tn.String and tn.Bytes: `data` points at `size` bytes followed by a NUL.
#[repr(C)]
#[derive(Debug)]
pub struct TnStringObj {
    /// Object header.
    pub header: TnObject,
    /// The bytes.
    pub data: *const c_char,
    /// Number of bytes.
    pub size: i64,
    /// Cached content hash; 0 until computed.
    pub hash: u64,
}

/// tn.Function: a packed function and its context.
#[repr(C)]
#[derive(Debug)]
pub struct TnFunctionObj {
    /// Object header.
    pub header: TnObject,
    /// The implementation.
    pub fn_: TnPackedFn,
    /// Its context.
    pub self_: *mut c_void,
    /// Runs once on `self_` when the function dies.
    pub self_deleter: Option<unsafe extern "C" fn(self_: *mut c_void)>,
}

/// tn.Shape: an immutable list of dimensions.
#[repr(C)]
#[derive(Debug)]
pub struct TnShapeObj {
    /// Object header.
    pub header: TnObject,
    /// The dimensions.
    pub data: *const i64,
    /// Number of dimensions.
    pub ndim: i64,
}

/// tn.Tensor: a DLTensor right after the header.
#[repr(C)]
#[derive(Debug)]
pub struct TnTensorObj {
    /// Object header.
    pub header: TnObject,
    /// The tensor.
    pub dl: DLTensor,
}

/// Byte alignment of tensor storage allocated by tvmnode.
pub const TN_TENSOR_ALIGNMENT: usize = 64;

// ---------------------------------------------------------------------------
// Reflection

/// Field kind: `TnAny` (16 bytes).
pub const TN_FIELD_ANY: i32 = 0;
/// Field kind: `TnObject *`, of `type_key` if given.
pub const TN_FIELD_OBJ: i32 = 1;
/// Field kind: `int64_t`.
pub const TN_FIELD_INT: i32 = 2;
/// Field kind: `double`.
pub const TN_FIELD_FLOAT: i32 = 3;
/// Field kind: `bool` (1 byte).
pub const TN_FIELD_BOOL: i32 = 4;
/// Field kind: `TnObject *` holding a tn.String.
pub const TN_FIELD_STR: i32 = 5;
/// Field kind: `DLDataType`.
pub const TN_FIELD_DTYPE: i32 = 6;
/// Field kind: `DLDevice`.
pub const TN_FIELD_DEVICE: i32 = 7;

/// Field flag: set only when the object is made.
pub const TN_FIELD_READONLY: i32 = 1;
/// Field flag: left out of structural equality and hashing.
pub const TN_FIELD_NO_SEQ: i32 = 2;
/// Field flag: `default_value` is used when not given.
pub const TN_FIELD_HAS_DEFAULT: i32 = 4;
/// Field flag: OBJ/STR may be NULL; ANY may be None.
pub const TN_FIELD_OPTIONAL: i32 = 8;
/// Field flag: variables met here are defined by structural equality.
pub const TN_FIELD_DEF: i32 = 16;
/// Field flag: left out of JSON.
pub const TN_FIELD_NO_SAVE: i32 = 32;

/// Node kind: compared by content.
pub const TN_NODE_TREE: i32 = 0;
/// Node kind: by content, and sharing must match.
pub const TN_NODE_DAG: i32 = 1;
/// Node kind: a variable.
pub const TN_NODE_VAR: i32 = 2;
/// Node kind: by identity only.
pub const TN_NODE_UNIQUE: i32 = 3;

/// Node flag: generic construction is not allowed.
pub const TN_NODE_NO_CREATE: i32 = 1;

/// One field of a node type.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TnFieldDesc {
    /// Field name.
    pub name: *const c_char,
    /// Byte offset in the object.
    pub offset: i64,
    /// `TN_FIELD_ANY` ...
    pub kind: i32,
    /// `TN_FIELD_READONLY | ...`
    pub flags: i32,
    /// Required type key for `TN_FIELD_OBJ` (NULL: any object).
    pub type_key: *const c_char,
    /// With `TN_FIELD_HAS_DEFAULT`.
    pub default_value: TnAny,
    /// Documentation.
    pub doc: *const c_char,
}

/// A node type declaration for `tn_node_register`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TnNodeDesc {
    /// Type key.
    pub type_key: *const c_char,
    /// `TN_TYPE_OBJECT` or another node type.
    pub parent_index: i32,
    /// `TN_NODE_TREE` ...
    pub kind: i32,
    /// `TN_NODE_NO_CREATE`.
    pub flags: i32,
    /// Object size in bytes, at least the parent's.
    pub size: i64,
    /// This type's own fields.
    pub fields: *const TnFieldDesc,
    /// Number of own fields.
    pub nfields: i32,
    /// Documentation.
    pub doc: *const c_char,
    /// NULL: the generic deleter.
    pub deleter: TnDeleter,
}

// ---------------------------------------------------------------------------
// ir.h

/// ir.Type.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrType {
    /// Object header.
    pub header: TnObject,
}

/// ir.TensorType.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrTensorType {
    /// Parent.
    pub base: TnIrType,
    /// tn.Shape.
    pub shape: *mut TnObject,
    /// Element type.
    pub dtype: DLDataType,
}

/// ir.TupleType.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrTupleType {
    /// Parent.
    pub base: TnIrType,
    /// tn.Array of ir.Type.
    pub fields: *mut TnObject,
}

/// ir.FuncType.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrFuncType {
    /// Parent.
    pub base: TnIrType,
    /// tn.Array of ir.Type.
    pub arg_types: *mut TnObject,
    /// ir.Type.
    pub ret_type: *mut TnObject,
}

/// ir.Expr.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrExpr {
    /// Object header.
    pub header: TnObject,
    /// ir.Type, or NULL before type inference.
    pub checked_type: *mut TnObject,
}

/// ir.Var.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrVar {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.String.
    pub name_hint: *mut TnObject,
    /// ir.Type or NULL.
    pub type_annotation: *mut TnObject,
}

/// ir.Constant.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrConstant {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.Tensor.
    pub data: *mut TnObject,
}

/// ir.Op.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrOp {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.String.
    pub name: *mut TnObject,
    /// -1: any number.
    pub num_inputs: i64,
    /// tn.String type key of its attrs node, or NULL.
    pub attrs_type: *mut TnObject,
    /// Type index of the attrs type, or -1 (a cache, not a reflected field).
    pub attrs_index: i32,
    /// tn.Map of operator attributes, or NULL (`tn_ir_op_set_attr`).
    pub attr_map: *mut TnObject,
    /// tn.List of replaced attribute maps, or NULL.
    pub attr_retired: *mut TnObject,
}

/// ir.Call.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrCall {
    /// Parent.
    pub base: TnIrExpr,
    /// ir.Op, ir.GlobalVar or ir.Function.
    pub op: *mut TnObject,
    /// tn.Array of ir.Expr.
    pub args: *mut TnObject,
    /// The op's attrs node, or NULL.
    pub attrs: *mut TnObject,
}

/// ir.Tuple.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrTuple {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.Array of ir.Expr.
    pub fields: *mut TnObject,
}

/// ir.TupleGetItem.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrTupleGetItem {
    /// Parent.
    pub base: TnIrExpr,
    /// The tuple.
    pub tuple: *mut TnObject,
    /// The index.
    pub index: i64,
}

/// ir.Let.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrLet {
    /// Parent.
    pub base: TnIrExpr,
    /// ir.Var, defined here.
    pub var: *mut TnObject,
    /// Bound value.
    pub value: *mut TnObject,
    /// Body.
    pub body: *mut TnObject,
}

/// ir.Function.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrFunction {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.Array of ir.Var, defined here.
    pub params: *mut TnObject,
    /// ir.Expr.
    pub body: *mut TnObject,
    /// ir.Type or NULL.
    pub ret_type: *mut TnObject,
    /// tn.Map or NULL.
    pub attrs: *mut TnObject,
}

/// ir.GlobalVar.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrGlobalVar {
    /// Parent.
    pub base: TnIrExpr,
    /// tn.String.
    pub name_hint: *mut TnObject,
}

/// ir.IRModule.
#[repr(C)]
#[derive(Debug)]
pub struct TnIrModule {
    /// Object header.
    pub header: TnObject,
    /// tn.Map: name -> ir.Function.
    pub functions: *mut TnObject,
    /// tn.Map.
    pub attrs: *mut TnObject,
}

/// The type indices of the IR node types.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub struct TnIrTypes {
    pub type_: i32,
    pub tensor_type: i32,
    pub tuple_type: i32,
    pub func_type: i32,
    pub expr: i32,
    pub var: i32,
    pub constant: i32,
    pub op: i32,
    pub call: i32,
    pub tuple: i32,
    pub tuple_get_item: i32,
    pub let_: i32,
    pub function: i32,
    pub global_var: i32,
    pub module: i32,
    pub attrs: i32,
}

/// Fusion pattern: elementwise.
pub const TN_OP_ELEMWISE: i32 = 0;
/// Fusion pattern: broadcast.
pub const TN_OP_BROADCAST: i32 = 1;
/// Fusion pattern: injective.
pub const TN_OP_INJECTIVE: i32 = 2;
/// Fusion pattern: reduction.
pub const TN_OP_REDUCE: i32 = 3;
/// Fusion pattern: conv2d, dense (elementwise ops fuse after them).
pub const TN_OP_OUT_FUSABLE: i32 = 4;
/// Fusion pattern: fuses with nothing.
pub const TN_OP_OPAQUE: i32 = 8;

/// Operator attribute: its type inference, a tn.Function.
pub const TN_OP_ATTR_INFER_TYPE: &core::ffi::CStr = c"infer_type";
/// Operator attribute: its fusion pattern (`TN_OP_*`), an int.
pub const TN_OP_ATTR_PATTERN: &core::ffi::CStr = c"pattern";
/// Operator attribute: one line on what it computes, a str.
pub const TN_OP_ATTR_DOC: &core::ffi::CStr = c"doc";
/// Operator attribute: the names of its inputs, a tn.Array of str.
pub const TN_OP_ATTR_INPUT_NAMES: &core::ffi::CStr = c"input_names";

/// `tn_ir_post_order_visit` callback.
pub type TnIrVisitFn = Option<unsafe extern "C" fn(ctx: *mut c_void, expr: *mut TnObject) -> c_int>;
/// `tn_ir_mutate` callback: returns the replacement (transfer full) or NULL.
pub type TnIrRewriteFn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, orig: *mut TnObject, rebuilt: *mut TnObject) -> *mut TnObject,
>;

// ---------------------------------------------------------------------------
// dlpack.h

/// `DLPACK_MAJOR_VERSION`.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// `DLPACK_MINOR_VERSION`.
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// Managed tensor flag: read only.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// Managed tensor flag: the data was copied.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 2;

/// DLPack ABI version of a versioned managed tensor.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

/// Kind of device (a C enum, `int`-sized).
pub type DLDeviceType = i32;
/// CPU.
pub const kDLCPU: DLDeviceType = 1;
/// CUDA.
pub const kDLCUDA: DLDeviceType = 2;
/// Pinned CUDA host memory.
pub const kDLCUDAHost: DLDeviceType = 3;
/// OpenCL.
pub const kDLOpenCL: DLDeviceType = 4;
/// Vulkan.
pub const kDLVulkan: DLDeviceType = 7;
/// Metal.
pub const kDLMetal: DLDeviceType = 8;
/// Verilog simulator.
pub const kDLVPI: DLDeviceType = 9;
/// ROCm.
pub const kDLROCM: DLDeviceType = 10;
/// Pinned ROCm host memory.
pub const kDLROCMHost: DLDeviceType = 11;
/// Reserved extension device.
pub const kDLExtDev: DLDeviceType = 12;
/// CUDA managed memory.
pub const kDLCUDAManaged: DLDeviceType = 13;
/// oneAPI.
pub const kDLOneAPI: DLDeviceType = 14;
/// WebGPU.
pub const kDLWebGPU: DLDeviceType = 15;
/// Hexagon.
pub const kDLHexagon: DLDeviceType = 16;
/// MAIA.
pub const kDLMAIA: DLDeviceType = 17;

/// A device: type and ordinal.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// `kDLCPU` ...
    pub device_type: DLDeviceType,
    /// Ordinal.
    pub device_id: i32,
}

/// Element kind codes (a C enum).
pub type DLDataTypeCode = u32;
/// Signed integer.
pub const kDLInt: DLDataTypeCode = 0;
/// Unsigned integer.
pub const kDLUInt: DLDataTypeCode = 1;
/// IEEE float.
pub const kDLFloat: DLDataTypeCode = 2;
/// Opaque handle.
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
/// bfloat16.
pub const kDLBfloat: DLDataTypeCode = 4;
/// Complex.
pub const kDLComplex: DLDataTypeCode = 5;
/// Bool.
pub const kDLBool: DLDataTypeCode = 6;
/// float8 e3m4 (DLPack 1.1).
pub const kDLFloat8_e3m4: DLDataTypeCode = 7;
/// float8 e4m3.
pub const kDLFloat8_e4m3: DLDataTypeCode = 8;
/// float8 e4m3b11fnuz.
pub const kDLFloat8_e4m3b11fnuz: DLDataTypeCode = 9;
/// float8 e4m3fn.
pub const kDLFloat8_e4m3fn: DLDataTypeCode = 10;
/// float8 e4m3fnuz.
pub const kDLFloat8_e4m3fnuz: DLDataTypeCode = 11;
/// float8 e5m2.
pub const kDLFloat8_e5m2: DLDataTypeCode = 12;
/// float8 e5m2fnuz.
pub const kDLFloat8_e5m2fnuz: DLDataTypeCode = 13;
/// float8 e8m0fnu.
pub const kDLFloat8_e8m0fnu: DLDataTypeCode = 14;
/// float6 e2m3fn.
pub const kDLFloat6_e2m3fn: DLDataTypeCode = 15;
/// float6 e3m2fn.
pub const kDLFloat6_e3m2fn: DLDataTypeCode = 16;
/// float4 e2m1fn.
pub const kDLFloat4_e2m1fn: DLDataTypeCode = 17;

/// An element type: `{kDLFloat, 32, 1}` is float32.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// `kDLInt` ...
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes.
    pub lanes: u16,
}

/// A strided view of memory.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    /// Base pointer.
    pub data: *mut c_void,
    /// Device.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// Shape (`ndim` entries).
    pub shape: *mut i64,
    /// Strides in elements, or NULL for compact row-major.
    pub strides: *mut i64,
    /// Added to `data` before indexing.
    pub byte_offset: u64,
}

/// Pre-1.0 managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// Producer's context.
    pub manager_ctx: *mut c_void,
    /// Called by the consumer when done.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// DLPack 1.0 managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// DLPack version.
    pub version: DLPackVersion,
    /// Producer's context.
    pub manager_ctx: *mut c_void,
    /// Called by the consumer when done.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}
