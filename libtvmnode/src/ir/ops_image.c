/*
 * ops_image.c: the spatial operators TFLite models bring that are neither
 * convolutions nor pooling: image.resize2d (RESIZE_BILINEAR and
 * RESIZE_NEAREST_NEIGHBOR, with TFLite's align_corners and
 * half_pixel_centers flags rather than Relay's coordinate-mode strings,
 * since the kernels are TFLite's; the output size is an attribute), and
 * BATCH_MATMUL as nn.batch_matmul (float32) and qnn.batch_matmul (int8 to
 * int32 sums, requantized after it as qnn.dense is): operands of rank 2 to
 * 5 whose batch dims broadcast, either one read transposed (adj_x, adj_y);
 * and TRANSPOSE_CONV as nn.conv2d_transpose and qnn.conv2d_transpose in
 * TFLite's layouts (NHWC data, OHWI weight), its output size an attribute
 * (TFLite's output_shape tensor), bias and requantization after it; and
 * the normalisations over the last axis, L2_NORMALIZATION and LOG_SOFTMAX
 * (nn.* in float32, qnn.* in int8 with TFLite's fixed output
 * quantizations: 1/128, 0 and 16/256, 127).
 */
#include "ir/ops_image.h"

#include <inttypes.h>

typedef TnIrResizeAttrs ResizeAttrs;

static const TnFieldDesc resize_fields[] = {
    TN_FIELD_ANY(ResizeAttrs, size, 0, "(out_h, out_w)"),
    TN_FIELD_STR_D(ResizeAttrs, method, "linear", 0,
                   "linear or nearest_neighbor"),
    TN_FIELD_BOOL_D(ResizeAttrs, align_corners, false, 0,
                    "scale by (in - 1) / (out - 1): the corner pixels "
                    "line up"),
    TN_FIELD_BOOL_D(ResizeAttrs, half_pixel_centers, false, 0,
                    "sample at pixel centres (not with align_corners)"),
    TN_FIELD_STR_D(ResizeAttrs, layout, "NHWC", 0, "NHWC only"),
};

static const char *text(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "";
}

static TnObject *infer_resize(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const ResizeAttrs *a = (const ResizeAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (strcmp(text(a->layout), "NHWC") != 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "layout '%s' is not supported "
                      "(NHWC only)", text(a->layout));
    return NULL;
  }
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(NHWC)"), NULL;
  const char *m = text(a->method);
  if (strcmp(m, "linear") != 0 && strcmp(m, "nearest_neighbor") != 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "method '%s' is not linear or "
                      "nearest_neighbor", m);
    return NULL;
  }
  if (a->align_corners && a->half_pixel_centers) {
    tn_error_raise_in(TN_ERR_VALUE, op, "align_corners and "
                      "half_pixel_centers cannot both be set");
    return NULL;
  }
  int64_t size[2];
  int32_t ns = tn__ir_attr_ints(attrs, "size", size, 2, op);
  if (ns < 0) return NULL;
  if (ns != 2 || size[0] < 1 || size[1] < 1 || size[0] > INT32_MAX ||
      size[1] > INT32_MAX) {
    tn_error_raise_in(TN_ERR_VALUE, op, "size must be two positive extents "
                      "(out_h, out_w), got %d values", ns);
    return NULL;
  }
  int64_t out[4];
  memcpy(out, tn__ir_dims(d), sizeof out);
  out[1] = size[0], out[2] = size[1];
  return tn_ir_tensor_type(out, 4, d->dtype);
}

/* ---- batch_matmul ---------------------------------------------------------------- */

typedef TnIrBatchMatmulAttrs BatchMatmulAttrs;

static const TnFieldDesc bmm_fields[] = {
    TN_FIELD_BOOL_D(BatchMatmulAttrs, adj_x, false, 0,
                    "a's last two axes are swapped: [.., K, M]"),
    TN_FIELD_BOOL_D(BatchMatmulAttrs, adj_y, false, 0,
                    "b's last two axes are swapped: [.., N, K]"),
};

int32_t tn__ir_batch_matmul_dims(const char *op, TnObject *const *types,
                                 const TnIrTensorType *a,
                                 const TnIrTensorType *b, bool adj_x,
                                 bool adj_y, int64_t out[5]) {
  int64_t na = tn__ir_ndim(a), nb = tn__ir_ndim(b);
  if (na < 2 || na > 5)
    return tn__ir_arg_error(op, 0, "tensor_a", types[0], "expected 2 to 5 "
                            "dimensions");
  if (nb < 2 || nb > 5)
    return tn__ir_arg_error(op, 1, "tensor_b", types[1], "expected 2 to 5 "
                            "dimensions");
  const int64_t *da = tn__ir_dims(a), *db = tn__ir_dims(b);
  int64_t m = adj_x ? da[na - 1] : da[na - 2];
  int64_t ka = adj_x ? da[na - 2] : da[na - 1];
  int64_t kb = adj_y ? db[nb - 1] : db[nb - 2];
  int64_t n = adj_y ? db[nb - 2] : db[nb - 1];
  if (ka != kb)
    return tn__ir_arg_error(op, 1, "tensor_b", types[1], "inner dimension %"
                            PRId64 " does not match tensor_a's %" PRId64, kb,
                            ka);
  int64_t no = na > nb ? na : nb;
  for (int64_t d = 0; d < no - 2; d++) {
    int64_t ia = d - (no - na), ib = d - (no - nb);
    int64_t ea = ia >= 0 ? da[ia] : 1, eb = ib >= 0 ? db[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      return tn__ir_arg_error(op, 1, "tensor_b", types[1], "batch dimension "
                              "%" PRId64 " does not broadcast with "
                              "tensor_a's %" PRId64, eb, ea);
    out[d] = ea == 1 ? eb : ea;
  }
  out[no - 2] = m, out[no - 1] = n;
  return (int32_t)no;
}

static TnObject *infer_batch_matmul(const char *op, TnObject *const *types,
                                    int32_t n, TnObject *attrs) {
  (void)n;
  const BatchMatmulAttrs *x = (const BatchMatmulAttrs *)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "tensor_a");
  const TnIrTensorType *b = a ? tn__ir_tensor_arg(op, types, 1, "tensor_b")
                              : NULL;
  if (b == NULL) return NULL;
  if (!tn__ir_dtype_eq(a->dtype, b->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  int64_t out[5];
  int32_t nd = tn__ir_batch_matmul_dims(op, types, a, b, x->adj_x, x->adj_y,
                                        out);
  if (nd < 0) return NULL;
  return tn_ir_tensor_type(out, nd, a->dtype);
}

/* int8 operands, each with a scalar zero point (int32) and scale
 * (float32); int32 sums out. Or TFLite's 16x8: int16 operands, int64 sums
 * out. */
static TnObject *infer_qnn_batch_matmul(const char *op, TnObject *const *types,
                                        int32_t n, TnObject *attrs) {
  (void)n;
  static const DLDataType i8 = {kDLInt, 8, 1}, i32 = {kDLInt, 32, 1},
                          f32 = {kDLFloat, 32, 1}, i16 = {kDLInt, 16, 1},
                          i64 = {kDLInt, 64, 1};
  const BatchMatmulAttrs *x = (const BatchMatmulAttrs *)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "tensor_a");
  const TnIrTensorType *b = a ? tn__ir_tensor_arg(op, types, 1, "tensor_b")
                              : NULL;
  if (b == NULL) return NULL;
  const bool wide = tn__ir_dtype_eq(a->dtype, i16);
  if (!wide && !tn__ir_dtype_eq(a->dtype, i8))
    return tn__ir_arg_error(op, 0, "tensor_a", types[0], "expected int8 or "
                            "int16"), NULL;
  if (!tn__ir_dtype_eq(b->dtype, wide ? i16 : i8))
    return tn__ir_arg_error(op, 1, "tensor_b", types[1], "expected %s (as "
                            "tensor_a)", wide ? "int16" : "int8"), NULL;
  static const char *roles[] = {"a_zero_point", "b_zero_point", "a_scale",
                                "b_scale"};
  for (int32_t i = 0; i < 4; i++) {
    const TnIrTensorType *q = tn__ir_tensor_arg(op, types, 2 + i, roles[i]);
    if (q == NULL) return NULL;
    if (!tn__ir_dtype_eq(q->dtype, i < 2 ? i32 : f32) || tn__ir_ndim(q) != 0)
      return tn__ir_arg_error(op, 2 + i, roles[i], types[2 + i],
                              "expected a scalar %s", i < 2 ? "int32"
                                                            : "float32"),
             NULL;
  }
  int64_t out[5];
  int32_t nd = tn__ir_batch_matmul_dims(op, types, a, b, x->adj_x, x->adj_y,
                                        out);
  if (nd < 0) return NULL;
  return tn_ir_tensor_type(out, nd, wide ? i64 : i32);
}

/* ---- conv2d_transpose ------------------------------------------------------------ */

typedef TnIrConvTransposeAttrs ConvTransposeAttrs;

static const TnFieldDesc tconv_fields[] = {
    TN_FIELD_ANY(ConvTransposeAttrs, strides, TN_FIELD_OPTIONAL,
                 "(sh, sw); None is (1, 1)"),
    TN_FIELD_ANY(ConvTransposeAttrs, padding, TN_FIELD_OPTIONAL,
                 "(top, left): output rows and columns cut off before the "
                 "first; None is (0, 0)"),
    TN_FIELD_ANY(ConvTransposeAttrs, output_size, 0, "(out_h, out_w)"),
};

/* The output type of a conv2d_transpose of data (NHWC) by weight (OHWI)
 * with element type `dt`. */
static TnObject *tconv_out(const char *op, TnObject *const *types,
                           const TnObject *attrs, DLDataType dt) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight")
                              : NULL;
  if (w == NULL) return NULL;
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(NHWC)"), NULL;
  if (tn__ir_ndim(w) != 4)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected 4 "
                            "dimensions (OHWI)"), NULL;
  if (tn__ir_dims(w)[3] != tn__ir_dims(d)[3])
    return tn__ir_arg_error(op, 1, "weight", types[1], "%" PRId64 " input "
                            "channels, the data has %" PRId64,
                            tn__ir_dims(w)[3], tn__ir_dims(d)[3]), NULL;
  int64_t st[2] = {1, 1}, pad[2] = {0, 0}, size[2];
  int32_t ns = tn__ir_attr_ints(attrs, "strides", st, 2, op);
  int32_t np = ns < 0 ? -1 : tn__ir_attr_ints(attrs, "padding", pad, 2, op);
  int32_t no = np < 0 ? -1 : tn__ir_attr_ints(attrs, "output_size", size, 2,
                                              op);
  if (no < 0) return NULL;
  if (ns == 1) st[1] = st[0];
  if (np == 1) pad[1] = pad[0];
  if (st[0] < 1 || st[1] < 1 || pad[0] < 0 || pad[1] < 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "strides must be positive and "
                      "padding not negative");
    return NULL;
  }
  if (tn__ir_attr_fits_i32(op, "strides", st, 2) ||
      tn__ir_attr_fits_i32(op, "padding", pad, 2))
    return NULL;
  if (no != 2 || size[0] < 1 || size[1] < 1 || size[0] > INT32_MAX ||
      size[1] > INT32_MAX) {
    tn_error_raise_in(TN_ERR_VALUE, op, "output_size must be two positive "
                      "extents (out_h, out_w)");
    return NULL;
  }
  int64_t out[4] = {tn__ir_dims(d)[0], size[0], size[1], tn__ir_dims(w)[0]};
  return tn_ir_tensor_type(out, 4, dt);
}

static TnObject *infer_tconv(const char *op, TnObject *const *types,
                             int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight")
                              : NULL;
  if (w == NULL) return NULL;
  if (!tn__ir_dtype_eq(d->dtype, w->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  return tconv_out(op, types, attrs, d->dtype);
}

/* int8 data and weight, int32 sums out (or TFLite's 16x8: int16 data,
 * int8 weight, int64 sums out); scalar input quantization, the weight's
 * per tensor or per output channel (its axis 0). */
static TnObject *infer_qnn_tconv(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n;
  static const DLDataType i8 = {kDLInt, 8, 1}, i32 = {kDLInt, 32, 1},
                          f32 = {kDLFloat, 32, 1}, i16 = {kDLInt, 16, 1},
                          i64 = {kDLInt, 64, 1};
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight")
                              : NULL;
  if (w == NULL) return NULL;
  const bool wide = tn__ir_dtype_eq(d->dtype, i16);
  if (!wide && !tn__ir_dtype_eq(d->dtype, i8))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8 or "
                            "int16"), NULL;
  if (!tn__ir_dtype_eq(w->dtype, i8))
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected int8"),
           NULL;
  TnObject *out = tconv_out(op, types, attrs, wide ? i64 : i32);
  if (out == NULL) return NULL;
  static const char *roles[] = {"input_zero_point", "kernel_zero_point",
                                "input_scale", "kernel_scale"};
  for (int32_t i = 0; i < 4; i++) {
    const TnIrTensorType *q = tn__ir_tensor_arg(op, types, 2 + i, roles[i]);
    bool per_channel_ok = i % 2 == 1;
    bool ok = q && tn__ir_dtype_eq(q->dtype, i < 2 ? i32 : f32) &&
              (tn__ir_ndim(q) == 0 ||
               (per_channel_ok && tn__ir_ndim(q) == 1 &&
                tn__ir_dims(q)[0] == tn__ir_dims(w)[0]));
    if (!ok) {
      if (q)
        tn__ir_arg_error(op, 2 + i, roles[i], types[2 + i],
                         "expected a scalar %s%s", i < 2 ? "int32" : "float32",
                         per_channel_ok ? " or one per output channel" : "");
      tn_object_release(out);
      return NULL;
    }
  }
  return out;
}

/* ---- l2_normalize, log_softmax -------------------------------------------------- */

typedef TnIrL2NormalizeAttrs L2NormalizeAttrs;

static const TnFieldDesc l2_fields[] = {
    TN_FIELD_FLOAT_D(L2NormalizeAttrs, eps, 1e-6, 0,
                     "the smallest norm divided by"),
    TN_FIELD_INT_D(L2NormalizeAttrs, axis, -1, 0,
                   "the axis to normalise (the last one: the kernel's)"),
};

/* The data of a normalisation along `axis`, which must be the last. */
static const TnIrTensorType *last_axis_data(const char *op,
                                            TnObject *const *types,
                                            int64_t axis) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  int64_t nd = tn__ir_ndim(d);
  if (nd < 1)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected at least one "
                            "dimension"), NULL;
  if (axis != -1 && axis != nd - 1) {
    tn_error_raise_in(TN_ERR_VALUE, op, "axis %" PRId64 ": only the last "
                      "axis is supported (TFLite's)", axis);
    return NULL;
  }
  return d;
}

static TnObject *infer_norm_f32(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  static const DLDataType f32 = {kDLFloat, 32, 1};
  bool l2 = tn_object_is_instance(attrs, tn_type_index("ir.L2NormalizeAttrs"));
  int64_t axis = l2 ? ((const L2NormalizeAttrs *)attrs)->axis
                    : ((const TnIrAxisAttrs *)attrs)->axis;
  const TnIrTensorType *d = last_axis_data(op, types, axis);
  if (d == NULL) return NULL;
  if (!tn__ir_dtype_eq(d->dtype, f32))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected float32"),
           NULL;
  if (l2 && !(((const L2NormalizeAttrs *)attrs)->eps >= 0)) {
    tn_error_raise_in(TN_ERR_VALUE, op, "eps must not be negative");
    return NULL;
  }
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), d->dtype);
}

/* int8 data, per-tensor (scale, zero point) in and out, the last axis. */
static TnObject *infer_norm_s8(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  static const DLDataType i8 = {kDLInt, 8, 1}, i32 = {kDLInt, 32, 1},
                          f32 = {kDLFloat, 32, 1};
  const TnIrTensorType *d = last_axis_data(op, types, -1);
  if (d == NULL) return NULL;
  if (!tn__ir_dtype_eq(d->dtype, i8))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected int8"), NULL;
  static const char *roles[] = {"input_scale", "input_zero_point",
                                "output_scale", "output_zero_point"};
  for (int32_t i = 0; i < 4; i++) {
    const TnIrTensorType *q = tn__ir_tensor_arg(op, types, 1 + i, roles[i]);
    if (q == NULL) return NULL;
    if (!tn__ir_dtype_eq(q->dtype, i % 2 ? i32 : f32) || tn__ir_ndim(q) != 0)
      return tn__ir_arg_error(op, 1 + i, roles[i], types[1 + i],
                              "expected a scalar %s", i % 2 ? "int32"
                                                            : "float32"),
             NULL;
  }
  return tn_ir_tensor_type(tn__ir_dims(d), (int32_t)tn__ir_ndim(d), d->dtype);
}

void tn__ir_ops_image_init(void) {
  TN__IR_ATTRS(ResizeAttrs, "ir.Resize2DAttrs", resize_fields);
  tn__ir_op_define("image.resize2d", "data", "ir.Resize2DAttrs",
                   TN_OP_INJECTIVE, infer_resize,
                   "resize the spatial axes of NHWC data to size, bilinear "
                   "or nearest neighbour, TFLite's arithmetic");
  TN__IR_ATTRS(BatchMatmulAttrs, "ir.BatchMatmulAttrs", bmm_fields);
  tn__ir_op_define("nn.batch_matmul", "tensor_a,tensor_b",
                   "ir.BatchMatmulAttrs", TN_OP_OUT_FUSABLE,
                   infer_batch_matmul,
                   "a [.., M, K] x b [.., K, N] -> [.., M, N], the batch "
                   "dims broadcast (float32)");
  tn__ir_op_define("qnn.batch_matmul",
                   "tensor_a,tensor_b,a_zero_point,b_zero_point,a_scale,"
                   "b_scale",
                   "ir.BatchMatmulAttrs", TN_OP_OUT_FUSABLE,
                   infer_qnn_batch_matmul,
                   "int8 batch_matmul with int32 sums of (a - a_zp) * "
                   "(b - b_zp); int16 operands give int64 sums");
  TN__IR_ATTRS(ConvTransposeAttrs, "ir.Conv2DTransposeAttrs", tconv_fields);
  tn__ir_op_define("nn.conv2d_transpose", "data,weight",
                   "ir.Conv2DTransposeAttrs", TN_OP_OUT_FUSABLE, infer_tconv,
                   "transposed 2-D convolution, NHWC data and OHWI weight "
                   "(TFLite's TRANSPOSE_CONV)");
  tn__ir_op_define("qnn.conv2d_transpose",
                   "data,weight,input_zero_point,kernel_zero_point,"
                   "input_scale,kernel_scale",
                   "ir.Conv2DTransposeAttrs", TN_OP_OUT_FUSABLE,
                   infer_qnn_tconv,
                   "int8 transposed 2-D convolution with int32 sums; "
                   "int16 data (int8 weight) gives int64 sums");
  TN__IR_ATTRS(L2NormalizeAttrs, "ir.L2NormalizeAttrs", l2_fields);
  tn__ir_op_define("nn.l2_normalize", "data", "ir.L2NormalizeAttrs",
                   TN_OP_OPAQUE, infer_norm_f32,
                   "data / max(sqrt(sum(data^2)), eps) along the last axis "
                   "(float32)");
  tn__ir_op_define("qnn.l2_normalize",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   NULL, TN_OP_OPAQUE, infer_norm_s8,
                   "int8 L2 normalisation along the last axis, TFLite's "
                   "(output scale 1/128, zero point 0)");
  tn__ir_op_define("nn.log_softmax", "data", "ir.SoftmaxAttrs", TN_OP_OPAQUE,
                   infer_norm_f32,
                   "x - max - log(sum(exp(x - max))) along the last axis "
                   "(float32)");
  tn__ir_op_define("qnn.log_softmax",
                   "data,input_scale,input_zero_point,output_scale,"
                   "output_zero_point",
                   NULL, TN_OP_OPAQUE, infer_norm_s8,
                   "int8 log-softmax along the last axis, TFLite's "
                   "fixed-point algorithm (output scale 16/256, zero point "
                   "127)");
}
