/*
 * ops_movement.c: the reductions besides mean and the gathering operators,
 * with their attribute node types and type inference: sum, max, min (over
 * axes, ir.ReduceAttrs as mean's), argmax and argmin (along one axis, int32
 * indices), qnn.sum (TFLite's int8 SUM, requantized to the output's scale
 * and zero point) and take (numpy's take along one axis, int32 indices).
 *
 * TFLite's other data-movement operators (SPLIT, PACK, TILE, SLICE,
 * SPACE_TO_DEPTH, MIRROR_PAD, ...) are built at import from strided_slice,
 * concatenate, reshape and transpose, whose kernels move elements of any
 * size; only what those cannot express is here.
 */
#include "ir/ops_nn.h"

#include <inttypes.h>

/* ---- attribute node types ------------------------------------------------- */

typedef TnIrArgReduceAttrs ArgReduceAttrs;
typedef TnIrTakeAttrs TakeAttrs;

static const TnFieldDesc arg_reduce_fields[] = {
    TN_FIELD_INT_D(ArgReduceAttrs, axis, 0, 0, "the axis searched"),
    TN_FIELD_BOOL_D(ArgReduceAttrs, keepdims, false, 0,
                    "keep the searched axis, with extent 1"),
};
static const TnFieldDesc take_fields[] = {
    TN_FIELD_INT_D(TakeAttrs, axis, 0, 0,
                   "the axis the indices select along"),
};

/* ---- helpers ---------------------------------------------------------------- */

static bool numeric(DLDataType t) {
  return t.lanes == 1 &&
         (tn__ir_is_float(t) || t.code == kDLInt || t.code == kDLUInt);
}

static const TnIrTensorType *numeric_data(const char *op,
                                          TnObject *const *types) {
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  if (!numeric(a->dtype))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected a float or "
                            "integer tensor"), NULL;
  return a;
}

/* An axis in [-ndim, ndim) as [0, ndim); -1 with a TypeError. */
static int64_t one_axis(const char *op, int64_t axis, TnObject *type,
                        int64_t nd) {
  int64_t a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd) {
    tn__ir_arg_error(op, 0, "data", type, "axis %" PRId64 " is out of range "
                     "for %" PRId64 " dimensions", axis, nd);
    return -1;
  }
  return a;
}

/* ---- reductions ------------------------------------------------------------------ */

static TnObject *infer_reduce(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = numeric_data(op, types);
  return a ? tn__ir_reduce_out(op, types[0], a, attrs) : NULL;
}

static TnObject *infer_arg_reduce(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = numeric_data(op, types);
  if (a == NULL) return NULL;
  const ArgReduceAttrs *x = (const ArgReduceAttrs *)attrs;
  int64_t nd = tn__ir_ndim(a), out[TN_IR_MAX_DIMS];
  int64_t axis = one_axis(op, x->axis, types[0], nd);
  if (axis < 0) return NULL;
  int32_t k = 0;
  for (int64_t d = 0; d < nd; d++) {
    if (d != axis) out[k++] = tn__ir_dims(a)[d];
    else if (x->keepdims) out[k++] = 1;
  }
  static const DLDataType i32 = {kDLInt, 32, 1};
  return tn_ir_tensor_type(out, k, i32);
}

/* A scalar quantization parameter of dtype `want`. */
static int qparam(const char *op, TnObject *const *types, int32_t i,
                  const char *role, DLDataType want, const char *want_text) {
  const TnIrTensorType *p = tn__ir_tensor_arg(op, types, i, role);
  if (p == NULL) return -1;
  if (!tn__ir_dtype_eq(p->dtype, want) || tn__ir_ndim(p) != 0)
    return tn__ir_arg_error(op, i, role, types[i], "expected a scalar %s",
                            want_text);
  return 0;
}

static TnObject *infer_qnn_sum(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n;
  static const DLDataType f32 = {kDLFloat, 32, 1}, i32 = {kDLInt, 32, 1},
                          i8 = {kDLInt, 8, 1}, i16 = {kDLInt, 16, 1};
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  /* int16: TFLite's 16x8 mode, the same arithmetic */
  if (!tn__ir_dtype_eq(d->dtype, i8) && !tn__ir_dtype_eq(d->dtype, i16))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8 or "
                            "int16"), NULL;
  if (qparam(op, types, 1, "input_scale", f32, "float32") ||
      qparam(op, types, 2, "input_zero_point", i32, "int32") ||
      qparam(op, types, 3, "output_scale", f32, "float32") ||
      qparam(op, types, 4, "output_zero_point", i32, "int32"))
    return NULL;
  return tn__ir_reduce_out(op, types[0], d, attrs);
}

/* ---- take ------------------------------------------------------------------------ */

static TnObject *infer_take(const char *op, TnObject *const *types,
                            int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  const TnIrTensorType *ix = tn__ir_tensor_arg(op, types, 1, "indices");
  if (ix == NULL) return NULL;
  if (ix->dtype.code != kDLInt || ix->dtype.lanes != 1 ||
      (ix->dtype.bits != 32 && ix->dtype.bits != 64))
    return tn__ir_arg_error(op, 1, "indices", types[1], "expected int32 or "
                            "int64 indices"), NULL;
  int64_t nd = tn__ir_ndim(a), ni = tn__ir_ndim(ix);
  int64_t axis = one_axis(op, ((const TakeAttrs *)attrs)->axis, types[0], nd);
  if (axis < 0) return NULL;
  if (nd - 1 + ni > TN_IR_MAX_DIMS)
    return tn__ir_arg_error(op, 1, "indices", types[1], "the result would "
                            "have %" PRId64 " dimensions, more than %d",
                            nd - 1 + ni, TN_IR_MAX_DIMS), NULL;
  int64_t out[TN_IR_MAX_DIMS];
  int32_t k = 0;
  for (int64_t d = 0; d < axis; d++) out[k++] = tn__ir_dims(a)[d];
  for (int64_t d = 0; d < ni; d++) out[k++] = tn__ir_dims(ix)[d];
  for (int64_t d = axis + 1; d < nd; d++) out[k++] = tn__ir_dims(a)[d];
  return tn_ir_tensor_type(out, k, a->dtype);
}

void tn__ir_ops_movement_init(void) {
  TN__IR_ATTRS(ArgReduceAttrs, "ir.ArgReduceAttrs", arg_reduce_fields);
  TN__IR_ATTRS(TakeAttrs, "ir.TakeAttrs", take_fields);
  tn__ir_op_define("sum", "data", "ir.ReduceAttrs", TN_OP_REDUCE,
                   infer_reduce, "the sum over axis (every axis by default)");
  tn__ir_op_define("max", "data", "ir.ReduceAttrs", TN_OP_REDUCE,
                   infer_reduce,
                   "the largest element over axis (every axis by default)");
  tn__ir_op_define("min", "data", "ir.ReduceAttrs", TN_OP_REDUCE,
                   infer_reduce,
                   "the smallest element over axis (every axis by default)");
  tn__ir_op_define("argmax", "data", "ir.ArgReduceAttrs", TN_OP_OPAQUE,
                   infer_arg_reduce,
                   "the first index of the largest element along axis "
                   "(int32)");
  tn__ir_op_define("argmin", "data", "ir.ArgReduceAttrs", TN_OP_OPAQUE,
                   infer_arg_reduce,
                   "the first index of the smallest element along axis "
                   "(int32)");
  tn__ir_op_define("qnn.sum",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   "ir.ReduceAttrs", TN_OP_OPAQUE, infer_qnn_sum,
                   "int8 or int16 sum over axis, TFLite's SUM (requantized "
                   "to the output scale and zero point)");
  tn__ir_op_define("take", "data,indices", "ir.TakeAttrs", TN_OP_OPAQUE,
                   infer_take,
                   "the slices of data along axis that indices name "
                   "(numpy's take: a negative index counts from the end; "
                   "one out of range is an error)");
}
