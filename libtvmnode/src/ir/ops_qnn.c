/*
 * ops_qnn.c: the int8 operators: qnn.quantize, qnn.dequantize,
 * qnn.requantize, qnn.conv2d, qnn.dense, qnn.add and qnn.mul, and the
 * int8 activations TFLite models need: qnn.softmax, qnn.sigmoid, qnn.tanh,
 * and qnn.mean (TFLite's int8 MEAN; its axes as mean's).
 *
 * Scales and zero points are arguments (so constant folding and the code
 * generator see them as constants): a scale is float32, a zero point int32,
 * each either a scalar (per-tensor) or a vector whose length is the data's
 * size along `axis` (per-channel). Convolutions and dense layers accumulate
 * in int32; requantize brings results back to int8.
 */
#include "ir/ops_nn.h"

#include <inttypes.h>

typedef TnIrQuantizeAttrs QuantizeAttrs;
typedef TnIrAxisAttrs DequantizeAttrs;
typedef TnIrRequantizeAttrs RequantizeAttrs;
typedef TnIrQSoftmaxAttrs QSoftmaxAttrs;

static const TnFieldDesc qsoftmax_fields[] = {
    TN_FIELD_INT_D(QSoftmaxAttrs, axis, -1, 0,
                   "the axis to normalise (the last one: the kernel's)"),
    TN_FIELD_FLOAT_D(QSoftmaxAttrs, beta, 1.0, 0,
                     "softmax(beta * x), as TFLite's SOFTMAX"),
    TN_FIELD_DTYPE_D(QSoftmaxAttrs, out_dtype, kDLInt, 8, 1, 0,
                     "int8, or int16 (TFLite's int8-in, int16-out form)"),
};

static const TnFieldDesc quantize_fields[] = {
    TN_FIELD_INT_D(QuantizeAttrs, axis, -1, 0, "the channel axis"),
    TN_FIELD_DTYPE_D(QuantizeAttrs, out_dtype, kDLInt, 8, 1, 0, NULL),
    TN_FIELD_STR_D(QuantizeAttrs, rounding, "AWAY", 0,
                   "AWAY: round(x / scale) half away from zero (TFLite's); "
                   "EVEN: half to even (ONNX's); the quotient in float32"),
};
static const TnFieldDesc dequantize_fields[] = {
    TN_FIELD_INT_D(DequantizeAttrs, axis, -1, 0, "the channel axis"),
};
static const TnFieldDesc requantize_fields[] = {
    TN_FIELD_INT_D(RequantizeAttrs, axis, -1, 0, "the channel axis"),
    TN_FIELD_STR_D(RequantizeAttrs, rounding, "UPWARD", 0,
                   "UPWARD or TONEAREST (fixed point), or ONNX: the "
                   "float32 scale input_scale / output_scale times the "
                   "value in float32, rounded half to even (ONNX "
                   "Runtime's)"),
    TN_FIELD_DTYPE_D(RequantizeAttrs, out_dtype, kDLInt, 8, 1, 0, NULL),
};

static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDataType kI32 = {kDLInt, 32, 1};
static const DLDataType kI64 = {kDLInt, 64, 1};

static bool is_q(DLDataType t) {
  return (t.code == kDLInt || t.code == kDLUInt) && t.lanes == 1 &&
         (t.bits == 8 || t.bits == 16 || t.bits == 32);
}

/* A scale (float32) or zero point (int32) for `data` along `axis` (-1 when
 * only per-tensor values make sense). */
static int check_qparam(const char *op, TnObject *const *types, int32_t i,
                        const char *role, DLDataType want,
                        const TnIrTensorType *data, int64_t axis) {
  const TnIrTensorType *p = tn__ir_tensor_arg(op, types, i, role);
  if (p == NULL) return -1;
  char buf[64];
  tn__dtype_text(want, buf, sizeof buf);
  if (!tn__ir_dtype_eq(p->dtype, want))
    return tn__ir_arg_error(op, i, role, types[i], "expected %s", buf);
  if (tn__ir_ndim(p) == 0) return 0;
  if (tn__ir_ndim(p) == 1 && data && axis >= 0) {
    int64_t c = tn__ir_dims(data)[axis];
    if (tn__ir_dims(p)[0] == c) return 0;
    return tn__ir_arg_error(op, i, role, types[i], "a per-channel %s needs "
                            "%" PRId64 " values (axis %" PRId64 " of the %s)",
                            role, c, axis,
                            strncmp(role, "kernel", 6) == 0 ? "weight"
                                                             : "data");
  }
  return tn__ir_arg_error(op, i, role, types[i], "expected a scalar %s%s",
                          buf, data && axis >= 0 ? " or one per channel" : "");
}

/* requantize's input scale may be float64 as well: an importer keeps
 * TFLite's double product input_scale * filter_scale exactly. */
static DLDataType scale_dtype(TnObject *type) {
  static const DLDataType f64 = {kDLFloat, 64, 1};
  const TnIrTensorType *t = tn__ir_is(type, TN_IR->tensor_type)
                                ? (const TnIrTensorType *)type
                                : NULL;
  return t && tn__ir_dtype_eq(t->dtype, f64) ? f64 : kF32;
}

/* The axis normalised against `data`, or -1 with an error. */
static int64_t norm_axis(const char *op, TnObject *type,
                         const TnIrTensorType *data, int64_t axis) {
  int64_t nd = tn__ir_ndim(data), a = axis < 0 ? axis + nd : axis;
  if (nd == 0) return -1; /* a scalar: per-tensor values only */
  if (a < 0 || a >= nd) {
    tn__ir_arg_error(op, 0, "data", type, "axis %" PRId64 " is out of range",
                     axis);
    return -2;
  }
  return a;
}

static TnObject *infer_quantize(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  const QuantizeAttrs *a = (const QuantizeAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (!tn__ir_dtype_eq(d->dtype, kF32))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected float32"), NULL;
  if (!is_q(a->out_dtype)) {
    tn_error_raise_in(TN_ERR_TYPE, op,
                      "out_dtype must be an 8, 16 or 32-bit integer type");
    return NULL;
  }
  const char *r = ((TnStringObj *)a->rounding)->data;
  if (strcmp(r, "AWAY") != 0 && strcmp(r, "EVEN") != 0) {
    tn_error_raise_in(TN_ERR_TYPE, op, "rounding '%s' is not AWAY or EVEN", r);
    return NULL;
  }
  int64_t axis = norm_axis(op, types[0], d, a->axis);
  if (axis < -1 ||
      check_qparam(op, types, 1, "output_scale", kF32, d, axis) ||
      check_qparam(op, types, 2, "output_zero_point", kI32, d, axis))
    return NULL;
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d),
                           a->out_dtype);
}

static TnObject *infer_dequantize(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (!is_q(d->dtype))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8, uint8, "
                            "int16 or int32"), NULL;
  int64_t axis = norm_axis(op, types[0], d, ((const DequantizeAttrs *)attrs)->axis);
  if (axis < -1 ||
      check_qparam(op, types, 1, "input_scale", kF32, d, axis) ||
      check_qparam(op, types, 2, "input_zero_point", kI32, d, axis))
    return NULL;
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), kF32);
}

static TnObject *infer_requantize(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n;
  const RequantizeAttrs *a = (const RequantizeAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  /* int64: the accumulators of a 16x8 convolution or dense layer */
  if (!is_q(d->dtype) && !tn__ir_dtype_eq(d->dtype, kI64))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected a quantized "
                            "integer tensor"), NULL;
  const char *r = ((TnStringObj *)a->rounding)->data;
  if (strcmp(r, "UPWARD") != 0 && strcmp(r, "TONEAREST") != 0 &&
      strcmp(r, "ONNX") != 0) {
    tn_error_raise_in(TN_ERR_TYPE, op,
                      "rounding '%s' is not UPWARD, TONEAREST or ONNX", r);
    return NULL;
  }
  if (!is_q(a->out_dtype)) {
    tn_error_raise_in(TN_ERR_TYPE, op,
                      "out_dtype must be a quantized integer type");
    return NULL;
  }
  int64_t axis = norm_axis(op, types[0], d, a->axis);
  if (axis < -1 ||
      check_qparam(op, types, 1, "input_scale", scale_dtype(types[1]), d,
                   axis) ||
      check_qparam(op, types, 2, "input_zero_point", kI32, d, axis) ||
      check_qparam(op, types, 3, "output_scale", kF32, d, -1) ||
      check_qparam(op, types, 4, "output_zero_point", kI32, d, -1))
    return NULL;
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d),
                           a->out_dtype);
}

/* qnn.conv2d and qnn.dense: int8 (or uint8) data and weight, scalar input
 * quantisation, per-tensor or per-output-channel weight quantisation. */
static TnObject *infer_qnn_linear(const char *op, TnObject *const *types,
                                  bool conv, TnObject *attrs) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight") : NULL;
  if (w == NULL) return NULL;
  /* int16 data with int8 weights is TFLite's 16x8 mode */
  if (!is_q(d->dtype) || (d->dtype.bits != 8 && d->dtype.code != kDLInt) ||
      d->dtype.bits > 16)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8, uint8 "
                            "or int16"), NULL;
  if (!is_q(w->dtype) || w->dtype.bits != 8)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected int8 or "
                            "uint8"), NULL;
  if (d->dtype.bits == 16 && w->dtype.code != kDLInt)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected int8 with "
                            "int16 data (16x8)"), NULL;
  DLDataType od = conv ? ((const TnIrConv2DAttrs *)attrs)->out_dtype
                       : ((const TnIrDenseAttrs *)attrs)->out_dtype;
  if (tn__ir_is_void(od)) od = kI32;
  TnObject *out = conv ? tn__ir_conv2d_out(op, types, attrs, od)
                       : tn__ir_dense_out(op, types, attrs, od);
  if (out == NULL) return NULL;
  /* Output channels: where conv2d's kernel layout keeps O, or dense's
   * weight rows. */
  int64_t oc_axis = 0;
  if (conv) {
    const char *kl = ((TnStringObj *)((const TnIrConv2DAttrs *)attrs)
                          ->kernel_layout)->data;
    oc_axis = strcmp(kl, "HWIO") == 0 ? 3 : 0; /* OIHW, OHWI: 0 */
  }
  if (check_qparam(op, types, 2, "input_zero_point", kI32, NULL, -1) ||
      check_qparam(op, types, 3, "kernel_zero_point", kI32, w, oc_axis) ||
      check_qparam(op, types, 4, "input_scale", kF32, NULL, -1) ||
      check_qparam(op, types, 5, "kernel_scale", kF32, w, oc_axis)) {
    tn_object_release(out);
    return NULL;
  }
  return out;
}

static TnObject *infer_qnn_conv2d(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n;
  return infer_qnn_linear(op, types, true, attrs);
}

static TnObject *infer_qnn_dense(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n;
  return infer_qnn_linear(op, types, false, attrs);
}

/* qnn.add and qnn.mul: two int8 operands, each with its own scale and
 * zero point, broadcast. */
TnObject *tn__ir_infer_qnn_binary(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "lhs");
  const TnIrTensorType *b = a ? tn__ir_tensor_arg(op, types, 1, "rhs") : NULL;
  if (b == NULL) return NULL;
  /* int16: TFLite's 16x8 mode */
  if (!is_q(a->dtype) || (a->dtype.bits != 8 && a->dtype.code != kDLInt) ||
      a->dtype.bits > 16)
    return tn__ir_arg_error(op, 0, "lhs", types[0], "expected int8, uint8 "
                            "or int16"), NULL;
  if (!tn__ir_dtype_eq(a->dtype, b->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  static const char *roles[] = {"lhs_scale", "lhs_zero_point", "rhs_scale",
                                "rhs_zero_point", "output_scale",
                                "output_zero_point"};
  for (int32_t i = 0; i < 6; i++)
    if (check_qparam(op, types, 2 + i, roles[i], i % 2 ? kI32 : kF32, NULL, -1))
      return NULL;
  int64_t dims[TN_IR_MAX_DIMS];
  int32_t nd;
  if (tn__ir_broadcast(op, a, b, dims, &nd)) return NULL;
  return tn_ir_tensor_type(dims, nd, a->dtype);
}

/* The data of a call (data, input_scale, input_zero_point, output_scale,
 * output_zero_point): 8-bit, with per-tensor scales and zero points; NULL
 * with an error naming the argument otherwise. */
static const TnIrTensorType *int8_data_per_tensor(const char *op,
                                                  TnObject *const *types) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  /* int16: TFLite's 16x8 mode (lowered for qnn.mean) */
  if (!is_q(d->dtype) || (d->dtype.bits != 8 && d->dtype.code != kDLInt) ||
      d->dtype.bits > 16)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8, uint8 "
                            "or int16"), NULL;
  static const char *roles[] = {"input_scale", "input_zero_point",
                                "output_scale", "output_zero_point"};
  for (int32_t i = 0; i < 4; i++)
    if (check_qparam(op, types, 1 + i, roles[i], i % 2 ? kI32 : kF32, NULL, -1))
      return NULL;
  return d;
}

/* qnn.softmax, qnn.sigmoid, qnn.tanh: int8 data with per-tensor input and
 * output quantization; the result has the data's type (softmax: its
 * out_dtype, int8 or int16). */
TnObject *tn__ir_infer_qnn_unary(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = int8_data_per_tensor(op, types);
  if (d == NULL) return NULL;
  if (attrs && tn_object_is_instance(attrs, tn_type_index("ir.QnnSoftmaxAttrs"))) {
    int64_t nd = tn__ir_ndim(d), axis = ((const QSoftmaxAttrs *)attrs)->axis;
    if (axis != -1 && axis != nd - 1) {
      tn_error_raise_in(TN_ERR_VALUE, op, "axis %" PRId64 ": only the last "
                        "axis is supported (TFLite's SOFTMAX)", axis);
      return NULL;
    }
    if (!(((const QSoftmaxAttrs *)attrs)->beta > 0)) {
      tn_error_raise_in(TN_ERR_VALUE, op, "beta must be positive, got %g",
                        ((const QSoftmaxAttrs *)attrs)->beta);
      return NULL;
    }
    DLDataType od = ((const QSoftmaxAttrs *)attrs)->out_dtype;
    if (od.code != kDLInt || od.lanes != 1 || (od.bits != 8 && od.bits != 16)) {
      tn_error_raise_in(TN_ERR_VALUE, op, "out_dtype must be int8 or int16, got "
                        "code %d, %d bits", (int)od.code, (int)od.bits);
      return NULL;
    }
    return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), od);
  }
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), d->dtype);
}

/* qnn.mean: int8 data, per-tensor input and output quantization, the
 * axes of mean (ir.ReduceAttrs). */
static TnObject *infer_qnn_mean(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = int8_data_per_tensor(op, types);
  if (d == NULL) return NULL;
  return tn__ir_reduce_out(op, types[0], d, attrs);
}

void tn__ir_ops_qnn_init(void) {
  TN__IR_ATTRS(QuantizeAttrs, "ir.QuantizeAttrs", quantize_fields);
  TN__IR_ATTRS(DequantizeAttrs, "ir.DequantizeAttrs", dequantize_fields);
  TN__IR_ATTRS(RequantizeAttrs, "ir.RequantizeAttrs", requantize_fields);
  tn__ir_op_define("qnn.quantize", "data,output_scale,output_zero_point",
                   "ir.QuantizeAttrs", TN_OP_ELEMWISE, infer_quantize,
                   "float32 -> int8: round(data / scale) + zero point, "
                   "saturated");
  tn__ir_op_define("qnn.dequantize", "data,input_scale,input_zero_point",
                   "ir.DequantizeAttrs", TN_OP_ELEMWISE, infer_dequantize,
                   "int8 -> float32: (data - zero point) * scale");
  tn__ir_op_define("qnn.requantize",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   "ir.RequantizeAttrs", TN_OP_ELEMWISE, infer_requantize,
                   "int32 -> int8 from one quantization to another");
  tn__ir_op_define("qnn.conv2d",
                   "data,kernel,input_zero_point,kernel_zero_point,"
                   "input_scale,kernel_scale",
                   "ir.Conv2DAttrs", TN_OP_OUT_FUSABLE, infer_qnn_conv2d,
                   "int8 2-D convolution with int32 accumulation");
  tn__ir_op_define("qnn.dense",
                   "data,weight,input_zero_point,kernel_zero_point,"
                   "input_scale,kernel_scale",
                   "ir.DenseAttrs", TN_OP_OUT_FUSABLE, infer_qnn_dense,
                   "int8 data [.., K] x weight [N, K] -> int32 [.., N]");
  tn__ir_op_define("qnn.add",
                   "lhs,rhs,lhs_scale,lhs_zero_point,rhs_scale,"
                   "rhs_zero_point,output_scale,output_zero_point",
                   NULL, TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 lhs + rhs, each in its own quantization");
  tn__ir_op_define("qnn.mul",
                   "lhs,rhs,lhs_scale,lhs_zero_point,rhs_scale,"
                   "rhs_zero_point,output_scale,output_zero_point",
                   NULL, TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 lhs * rhs, each in its own quantization");
  TN__IR_ATTRS(QSoftmaxAttrs, "ir.QnnSoftmaxAttrs", qsoftmax_fields);
  tn__ir_op_define("qnn.softmax",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   "ir.QnnSoftmaxAttrs", TN_OP_OPAQUE, tn__ir_infer_qnn_unary,
                   "int8 softmax over the last axis, TFLite's fixed-point "
                   "algorithm (output scale 1/256, zero point -128); int16 "
                   "in and out its 16x8 tables (1/32768, zero points 0)");
  tn__ir_op_define("qnn.sigmoid",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   NULL, TN_OP_ELEMWISE, tn__ir_infer_qnn_unary,
                   "int8 logistic, TFLite's (output scale 1/256, zero "
                   "point -128); int16 its 16x8 table (2^-15, zero points "
                   "0)");
  tn__ir_op_define("qnn.tanh",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   NULL, TN_OP_ELEMWISE, tn__ir_infer_qnn_unary,
                   "int8 tanh, TFLite's (output scale 1/128, zero point "
                   "0); int16 its 16x8 table (2^-15, zero points 0)");
  tn__ir_op_define("qnn.mean",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   "ir.ReduceAttrs", TN_OP_REDUCE, infer_qnn_mean,
                   "int8 mean over axis, TFLite's MEAN (requantized to the "
                   "output scale and zero point)");
}
