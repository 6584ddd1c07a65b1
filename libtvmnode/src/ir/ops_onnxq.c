/*
 * ops_onnxq.c: the operators onnxruntime's quantized operators
 * (com.microsoft QLinearSigmoid, QLinearLeakyRelu, QLinearConcat,
 * QLinearAdd, QLinearMul) need beyond the qnn ones: qnn.qlinear_add and
 * qnn.qlinear_mul, onnxruntime's float32 arithmetic for each element
 * (TFLite's fixed point differs in the last bit); and qnn.lut, an int8
 * tensor mapped through a 256-entry
 * int8 table that the importer computes once, in onnxruntime's own float
 * arithmetic, from the quantization parameters. Keeping the table an
 * argument (a constant) rather than recomputing it in the lowering lets
 * the importer match whichever runtime defined the operator, with one
 * kernel (the crt's lut_s8 form) for all of them.
 */
#include "ir/ops_nn.h"

/* Argument i as an int8 tensor type, or NULL with a TypeError. */
static const TnIrTensorType *int8_arg(const char *op, TnObject *const *types,
                                      int32_t i, const char *role) {
  const TnIrTensorType *t = tn__ir_tensor_arg(op, types, i, role);
  const DLDataType i8 = {kDLInt, 8, 1};
  if (t != NULL && !tn__ir_dtype_eq(t->dtype, i8))
    return tn__ir_arg_error(op, i, role, types[i], "expected int8"), NULL;
  return t;
}

/* qnn.lut: int8 data and an int8 table of 256 entries. */
static TnObject *infer_lut(const char *op, TnObject *const *types, int32_t n,
                           TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *d = int8_arg(op, types, 0, "data");
  const TnIrTensorType *t = d ? int8_arg(op, types, 1, "table") : NULL;
  if (t == NULL) return NULL;
  if (tn__ir_ndim(t) != 1 || tn__ir_dims(t)[0] != 256)
    return tn__ir_arg_error(op, 1, "table", types[1],
                            "expected int8 of shape [256]"), NULL;
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), d->dtype);
}

/* qnn.qlinear_add, qnn.qlinear_mul: int8 operands (broadcast), scalar
 * quantization parameters (checked by the lowering, which reads them). */
static TnObject *infer_qlinear_binary(const char *op, TnObject *const *types,
                                      int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *l = int8_arg(op, types, 0, "lhs");
  const TnIrTensorType *r = l ? int8_arg(op, types, 1, "rhs") : NULL;
  if (r == NULL) return NULL;
  int64_t dims[TN_IR_MAX_DIMS];
  int32_t nd;
  if (tn__ir_broadcast(op, l, r, dims, &nd)) return NULL;
  return tn_ir_tensor_type(dims, nd, l->dtype);
}

/* qnn.qlinear_avg_pool2d: int8 NCHW data, nn.avg_pool2d's attributes. */
static TnObject *infer_qlinear_pool(const char *op, TnObject *const *types,
                                    int32_t n, TnObject *attrs) {
  if (int8_arg(op, types, 0, "data") == NULL) return NULL;
  return tn__ir_infer_pool2d(op, types, n, attrs);
}

/* qnn.qlinear_softmax: int8 [outer, n, inner] and a float32 table of 256. */
static TnObject *infer_qlinear_softmax(const char *op, TnObject *const *types,
                                       int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *d = int8_arg(op, types, 0, "data");
  const TnIrTensorType *t = d ? tn__ir_tensor_arg(op, types, 1, "table") : NULL;
  if (t == NULL) return NULL;
  if (tn__ir_ndim(d) != 3)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 3 dimensions "
                            "(outer, axis, inner)"), NULL;
  const DLDataType f32 = {kDLFloat, 32, 1};
  if (!tn__ir_dtype_eq(t->dtype, f32) || tn__ir_ndim(t) != 1 ||
      tn__ir_dims(t)[0] != 256)
    return tn__ir_arg_error(op, 1, "table", types[1],
                            "expected float32 of shape [256]"), NULL;
  return tn_ir_tensor_type(tn__ir_dims(d), 3, d->dtype);
}

#define QLINEAR_ARGS                                                     \
  "lhs,rhs,lhs_scale,lhs_zero_point,rhs_scale,rhs_zero_point,"          \
  "output_scale,output_zero_point,uint8_offset"

void tn__ir_ops_onnxq_init(void) {
  tn__ir_op_define("qnn.qlinear_add", QLINEAR_ARGS, NULL, TN_OP_BROADCAST,
                   infer_qlinear_binary,
                   "lhs + rhs, each in its own quantization, in "
                   "onnxruntime's float arithmetic (com.microsoft "
                   "QLinearAdd); uint8_offset 128 for uint8 values stored "
                   "as int8 less 128 (the zero points stay uint8's), else 0");
  tn__ir_op_define("qnn.qlinear_mul", QLINEAR_ARGS, NULL, TN_OP_BROADCAST,
                   infer_qlinear_binary,
                   "lhs * rhs, each in its own quantization, in "
                   "onnxruntime's float arithmetic (com.microsoft "
                   "QLinearMul); uint8_offset as for qnn.qlinear_add");
  tn__ir_op_define("qnn.qlinear_avg_pool2d",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point,uint8_offset",
                   "ir.Pool2DAttrs", TN_OP_OUT_FUSABLE, infer_qlinear_pool,
                   "int8 NCHW average pooling in onnxruntime's arithmetic "
                   "(com.microsoft QLinearAveragePool: float32 sums; a "
                   "window of the whole image without padding takes "
                   "QLinearGlobalAveragePool's integer sum); uint8_offset "
                   "as for qnn.qlinear_add");
  tn__ir_op_define("qnn.qlinear_softmax",
                   "data,table,output_scale,output_zero_point,uint8_offset",
                   NULL, TN_OP_OPAQUE, infer_qlinear_softmax,
                   "softmax of int8 [outer, n, inner] over axis 1 in "
                   "onnxruntime's arithmetic (com.microsoft QLinearSoftmax): "
                   "table (float32, 256 values, a constant) holds the "
                   "exponential of an input d steps below the maximum; "
                   "uint8_offset as for qnn.qlinear_add");
  tn__ir_op_define("qnn.lut", "data,table", NULL, TN_OP_ELEMWISE, infer_lut,
                   "int8 data mapped through a 256-entry int8 table (a "
                   "constant), indexed by the input's byte: table[(uint8)x]");
}
