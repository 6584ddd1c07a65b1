/*
 * ops_nn.c: neural-network operators: nn.dense, matmul, nn.conv2d (NCHW
 * and NHWC, groups and depthwise, strides, padding, dilation),
 * nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.softmax,
 * nn.bias_add and nn.pad, with their attribute types and type inference.
 * The shared layout arithmetic (tn__ir_conv2d_out, tn__ir_pool2d_out) is
 * also what the quantized operators use.
 */
#include "ir/ops_nn.h"

#include <inttypes.h>

static const TnFieldDesc dense_fields[] = {
    TN_FIELD_INT_D(TnIrDenseAttrs, units, 0, 0,
                   "output units; 0 takes them from the weight"),
    TN_FIELD_DTYPE_D(TnIrDenseAttrs, out_dtype, kDLOpaqueHandle, 0, 0, 0,
                     "void: the input's type (int32 for qnn.dense)"),
    TN_FIELD_STR_D(TnIrDenseAttrs, weight_layout, "NK", 0,
                   "NK ([units, in]), or N16K4 / N16K1 / N4K4: the same "
                   "values packed for the x86 forms (a fused int8 layer's / "
                   "a float32 one's) or the Cortex-M DSP forms (a fused "
                   "int8 layer's) (PackDenseWeights)"),
};
static const TnFieldDesc matmul_fields[] = {
    TN_FIELD_BOOL_D(TnIrMatmulAttrs, transpose_a, false, 0, NULL),
    TN_FIELD_BOOL_D(TnIrMatmulAttrs, transpose_b, false, 0, NULL),
};
static const TnFieldDesc conv_fields[] = {
    TN_FIELD_ANY(TnIrConv2DAttrs, strides, TN_FIELD_OPTIONAL,
                 "(sh, sw); None is (1, 1)"),
    TN_FIELD_ANY(TnIrConv2DAttrs, padding, TN_FIELD_OPTIONAL,
                 "(p), (ph, pw) or (top, left, bottom, right); None is 0"),
    TN_FIELD_ANY(TnIrConv2DAttrs, dilation, TN_FIELD_OPTIONAL,
                 "(dh, dw); None is (1, 1)"),
    TN_FIELD_INT_D(TnIrConv2DAttrs, groups, 1, 0,
                   "input channels / groups per output; depthwise: groups = C"),
    TN_FIELD_INT_D(TnIrConv2DAttrs, channels, 0, 0,
                   "output channels; 0 takes them from the weight"),
    TN_FIELD_ANY(TnIrConv2DAttrs, kernel_size, TN_FIELD_OPTIONAL,
                 "(kh, kw), checked against the weight when given"),
    TN_FIELD_STR_D(TnIrConv2DAttrs, data_layout, "NCHW", 0, "NCHW or NHWC"),
    TN_FIELD_STR_D(TnIrConv2DAttrs, kernel_layout, "OIHW", 0,
                   "OIHW, HWIO or OHWI"),
    TN_FIELD_DTYPE_D(TnIrConv2DAttrs, out_dtype, kDLOpaqueHandle, 0, 0, 0,
                     "void: the input's type (int32 for qnn.conv2d)"),
    TN_FIELD_STR_D(TnIrConv2DAttrs, weight_layout, "", 0,
                   "'' (kernel_layout's), or N16K4: a 1x1 layer's weight "
                   "packed for the x86 forms (PackDenseWeights; a fused "
                   "int8 layer's)"),
};
static const TnFieldDesc pool_fields[] = {
    TN_FIELD_ANY(TnIrPool2DAttrs, pool_size, 0, "(kh, kw)"),
    TN_FIELD_ANY(TnIrPool2DAttrs, strides, TN_FIELD_OPTIONAL,
                 "(sh, sw); None is (1, 1)"),
    TN_FIELD_ANY(TnIrPool2DAttrs, padding, TN_FIELD_OPTIONAL,
                 "as for conv2d; None is 0"),
    TN_FIELD_STR_D(TnIrPool2DAttrs, layout, "NCHW", 0, "NCHW or NHWC"),
    TN_FIELD_BOOL_D(TnIrPool2DAttrs, ceil_mode, false, 0, NULL),
    TN_FIELD_BOOL_D(TnIrPool2DAttrs, count_include_pad, false, 0,
                    "avg_pool2d: divide by the full window"),
};
static const TnFieldDesc global_pool_fields[] = {
    TN_FIELD_STR_D(TnIrGlobalPool2DAttrs, layout, "NCHW", 0, "NCHW or NHWC"),
};
static const TnFieldDesc softmax_fields[] = {
    TN_FIELD_INT_D(TnIrAxisAttrs, axis, -1, 0, NULL),
};
static const TnFieldDesc bias_add_fields[] = {
    TN_FIELD_INT_D(TnIrAxisAttrs, axis, 1, 0, "the channel axis"),
};
static const TnFieldDesc pad_fields[] = {
    TN_FIELD_ANY(TnIrPadAttrs, pad_width, 0,
                 "per dimension (before, after), nested or flat"),
    TN_FIELD_FLOAT_D(TnIrPadAttrs, pad_value, 0.0, 0, NULL),
};

/* ---- layouts ---------------------------------------------------------------- */

static const char *str_of(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "";
}

/* The axes of a data layout attribute (`field`); false with a TypeError
 * naming it unless it is NCHW or NHWC. */
bool tn__ir_data_layout(const char *op, const char *field, const char *l,
                        int *n, int *c, int *h, int *w) {
  if (strcmp(l, "NCHW") == 0) *n = 0, *c = 1, *h = 2, *w = 3;
  else if (strcmp(l, "NHWC") == 0) *n = 0, *h = 1, *w = 2, *c = 3;
  else {
    tn_error_raise_in(TN_ERR_TYPE, op, "%s '%s' is not NCHW or NHWC", field, l);
    return false;
  }
  return true;
}

bool tn__ir_kernel_layout(const char *op, const char *l, int *o, int *i,
                          int *h, int *w) {
  if (strcmp(l, "OIHW") == 0) *o = 0, *i = 1, *h = 2, *w = 3;
  else if (strcmp(l, "HWIO") == 0) *h = 0, *w = 1, *i = 2, *o = 3;
  else if (strcmp(l, "OHWI") == 0) *o = 0, *h = 1, *w = 2, *i = 3;
  else {
    tn_error_raise_in(TN_ERR_TYPE, op,
                      "kernel_layout '%s' is not OIHW, HWIO or OHWI", l);
    return false;
  }
  return true;
}

/* (top, left, bottom, right) from 0, 1, 2 or 4 values. */
int tn__ir_padding4(const char *op, const TnObject *attrs, int64_t pad[4]) {
  int64_t p[4];
  int32_t n = tn__ir_attr_ints(attrs, "padding", p, 4, op);
  if (n < 0) return -1;
  switch (n) {
    case 0: pad[0] = pad[1] = pad[2] = pad[3] = 0; break;
    case 1: pad[0] = pad[1] = pad[2] = pad[3] = p[0]; break;
    case 2: pad[0] = pad[2] = p[0], pad[1] = pad[3] = p[1]; break;
    case 4: memcpy(pad, p, sizeof p); break;
    default:
      return tn_error_raise_in(TN_ERR_TYPE, op,
                               "padding has %d values; give 1, 2 or 4", n);
  }
  for (int i = 0; i < 4; i++)
    if (pad[i] < 0)
      return tn_error_raise_in(TN_ERR_TYPE, op, "padding is negative");
  return tn__ir_attr_fits_i32(op, "padding", pad, 4);
}

/* A pair attribute with a default; -1 with an error. */
int tn__ir_pair(const char *op, const TnObject *attrs, const char *field,
                int64_t dflt, int64_t out[2]) {
  int64_t p[2];
  int32_t n = tn__ir_attr_ints(attrs, field, p, 2, op);
  if (n < 0) return -1;
  if (n == 0) out[0] = out[1] = dflt;
  else if (n == 1) out[0] = out[1] = p[0];
  else out[0] = p[0], out[1] = p[1];
  if (out[0] < 1 || out[1] < 1)
    return tn_error_raise_in(TN_ERR_TYPE, op, "%s must be positive", field);
  return tn__ir_attr_fits_i32(op, field, out, 2);
}

/*
 * The room a window leaves in the padded input along one axis:
 * in + pad_lo + pad_hi - extent, where extent = dilation * (k - 1) + 1 is
 * what a dilated kernel covers. Negative when the window does not fit.
 * Every step is checked (attributes and input dimensions come from
 * files): -1 with a TypeError naming the attribute whose value overflowed
 * int64. A pool window is a kernel of pool_size (>= 1) with dilation 1,
 * whose extent cannot overflow.
 *
 * The kernels index in int32, so the padded input and the kernel's extent
 * must also fit int32 (a TypeError naming padding or dilation otherwise):
 * then every window origin and tap the kernels compute does too, save the
 * last window of ceil_mode, which window_count checks.
 */
static int window_room(const char *op, int64_t in, const int64_t pad[2],
                       int64_t dil, int64_t k, int64_t *room) {
  int64_t padded, extent;
  for (int i = 0; i < 2; i++) {
    if (tn__ckd_add(&padded, i ? padded : in, pad[i]))
      return tn__ckd_attr_error(op, "padding", pad[i], "the input of %"
                                PRId64 " padded by (%" PRId64 ", %" PRId64
                                ") is more than int64 holds", in, pad[0],
                                pad[1]);
  }
  if (padded > INT32_MAX)
    return tn__ckd_attr_error(op, "padding", pad[0] > pad[1] ? pad[0] : pad[1],
                              "the input of %" PRId64 " padded by (%" PRId64
                              ", %" PRId64 ") spans more than int32 holds "
                              "(the kernels' index type)", in, pad[0], pad[1]);
  /* dims are >= 0 (tn_shape_new), so k - 1 >= -1 */
  if (tn__ckd_mul(&extent, dil, k - 1) || tn__ckd_add(&extent, extent, 1) ||
      extent > INT32_MAX)
    return tn__ckd_attr_error(op, "dilation", dil, "a kernel of %" PRId64
                              " dilated by it spans more than int32 holds "
                              "(the kernels' index type)", k);
  *room = padded - extent;
  return 0;
}

/* Output positions along one axis: room / stride + 1, rounding the
 * division up with ceil_mode (room >= 0, 1 <= stride <= INT32_MAX), for
 * windows of `extent` taps. With ceil_mode the last window may start past
 * room; its end must still fit int32 (a TypeError naming strides). */
static int window_count(const char *op, int64_t room, int64_t stride,
                        int64_t extent, bool ceil_mode, int64_t *out) {
  int64_t q = room / stride + (ceil_mode && room % stride != 0);
  /* room, extent <= INT32_MAX and q * stride < room + stride: no int64
   * overflow */
  if (q * stride + extent > INT32_MAX)
    return tn__ckd_attr_error(op, "strides", stride, "with ceil_mode the "
                              "last window ends at %" PRId64 ", more than "
                              "int32 holds (the kernels' index type)",
                              q * stride + extent);
  *out = q + 1;
  return 0;
}

TnObject *tn__ir_conv2d_out(const char *op, TnObject *const *types,
                            const TnObject *attrs, DLDataType out_dtype) {
  const TnIrConv2DAttrs *a = (const TnIrConv2DAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *k = d ? tn__ir_tensor_arg(op, types, 1, "weight") : NULL;
  if (k == NULL) return NULL;
  int n_, c_, h_, w_;
  const char *dl = str_of(a->data_layout), *kl = str_of(a->kernel_layout);
  if (!tn__ir_data_layout(op, "data_layout", dl, &n_, &c_, &h_, &w_)) return NULL;
  int ko, ki, kh, kw;
  if (!tn__ir_kernel_layout(op, kl, &ko, &ki, &kh, &kw)) return NULL;
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(%s)", dl), NULL;
  if (tn__ir_ndim(k) != 4)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected 4 "
                            "dimensions (%s)", kl), NULL;
  const int64_t *dd = tn__ir_dims(d), *kd = tn__ir_dims(k);
  int64_t groups = a->groups, cin = dd[c_], cout = kd[ko];
  if (groups < 1 || cin % groups != 0 || cout % groups != 0)
    return tn__ir_arg_error(op, 1, "weight", types[1], "groups = %" PRId64
                            " does not divide %" PRId64 " input and %" PRId64
                            " output channels", groups, cin, cout), NULL;
  if (kd[ki] != cin / groups)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected %" PRId64
                            " input channels per group to match data of "
                            "%" PRId64 " channels in %" PRId64 " groups",
                            cin / groups, cin, groups), NULL;
  const char *wl = str_of(a->weight_layout);
  if (wl[0] && strcmp(wl, "N16K4") != 0)
    return tn__ir_arg_error(op, 1, "weight", types[1], "weight_layout must "
                            "be '' or 'N16K4', got '%s'", wl), NULL;
  if (wl[0] && groups != 1)
    return tn__ir_arg_error(op, 1, "weight", types[1], "weight_layout "
                            "'N16K4' is a layer's of one group, got "
                            "a %" PRId64 "x%" PRId64 " kernel in %" PRId64
                            " groups", kd[kh], kd[kw], groups), NULL;
  if (a->channels && a->channels != cout)
    return tn__ir_arg_error(op, 1, "weight", types[1], "channels = %" PRId64
                            " but the weight has %" PRId64, a->channels,
                            cout), NULL;
  int64_t ks[2];
  int32_t nks = tn__ir_attr_ints(attrs, "kernel_size", ks, 2, op);
  if (nks < 0) return NULL;
  if (nks == 1) ks[1] = ks[0];
  if (nks >= 1 && (ks[0] != kd[kh] || ks[1] != kd[kw]))
    return tn__ir_arg_error(op, 1, "weight", types[1], "kernel_size is (%"
                            PRId64 ", %" PRId64 ")", ks[0], ks[1]), NULL;
  int64_t stride[2], dil[2], pad[4];
  if (tn__ir_pair(op, attrs, "strides", 1, stride) || tn__ir_pair(op, attrs, "dilation", 1, dil) ||
      tn__ir_padding4(op, attrs, pad))
    return NULL;
  /* the room the dilated kernel leaves in the padded input; negative when
   * it does not fit (checked before dividing: C rounds toward zero) */
  int64_t hroom, wroom, oh = 0, ow = 0;
  if (window_room(op, dd[h_], (int64_t[]){pad[0], pad[2]}, dil[0], kd[kh],
                  &hroom) ||
      window_room(op, dd[w_], (int64_t[]){pad[1], pad[3]}, dil[1], kd[kw],
                  &wroom))
    return NULL;
  if (hroom < 0 || wroom < 0)
    return tn__ir_arg_error(op, 1, "weight", types[1], "the kernel does not "
                            "fit the padded %" PRId64 "x%" PRId64 " input "
                            "(dilation (%" PRId64 ", %" PRId64 "), padding "
                            "(%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                            "))", dd[h_], dd[w_], dil[0], dil[1], pad[0],
                            pad[1], pad[2], pad[3]), NULL;
  if (window_count(op, hroom, stride[0], dil[0] * (kd[kh] - 1) + 1, false,
                   &oh) ||
      window_count(op, wroom, stride[1], dil[1] * (kd[kw] - 1) + 1, false,
                   &ow))
    return NULL;
  int64_t out[4];
  out[n_] = dd[n_], out[c_] = cout, out[h_] = oh, out[w_] = ow;
  return tn_ir_tensor_type(out, 4, out_dtype);
}

/* The data of a float (data, weight) pair, which must share a dtype; NULL
 * with the error otherwise. */
static const TnIrTensorType *same_dtype_pair(const char *op,
                                             TnObject *const *types) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight") : NULL;
  if (w == NULL) return NULL;
  if (!tn__ir_dtype_eq(d->dtype, w->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  return d;
}

static TnObject *infer_conv2d(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = same_dtype_pair(op, types);
  if (d == NULL) return NULL;
  DLDataType od = ((const TnIrConv2DAttrs *)attrs)->out_dtype;
  return tn__ir_conv2d_out(op, types, attrs, tn__ir_is_void(od) ? d->dtype : od);
}

TnObject *tn__ir_dense_out(const char *op, TnObject *const *types,
                           const TnObject *attrs, DLDataType out_dtype) {
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *w = d ? tn__ir_tensor_arg(op, types, 1, "weight") : NULL;
  if (w == NULL) return NULL;
  int64_t nd = tn__ir_ndim(d);
  if (nd < 1)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected at least 1 "
                            "dimension"), NULL;
  if (tn__ir_ndim(w) != 2)
    return tn__ir_arg_error(op, 1, "weight", types[1], "expected 2 "
                            "dimensions (units, in)"), NULL;
  int64_t in = tn__ir_dims(d)[nd - 1], units = tn__ir_dims(w)[0];
  if (tn__ir_dims(w)[1] != in) {
    GString *dt = g_string_new(NULL);
    tn__ir_print_type(dt, types[0]);
    tn__ir_arg_error(op, 1, "weight", types[1], "expected inner dimension %"
                     PRId64 " to match data of type %s", in, dt->str);
    g_string_free(dt, TRUE);
    return NULL;
  }
  const TnObject *wl = ((const TnIrDenseAttrs *)attrs)->weight_layout;
  const char *wls = wl ? ((const TnStringObj *)wl)->data : "NK";
  if (strcmp(wls, "NK") != 0 && strcmp(wls, "N16K4") != 0 &&
      strcmp(wls, "N16K1") != 0 && strcmp(wls, "N4K4") != 0)
    return tn__ir_arg_error(op, 1, "weight", types[1], "weight_layout must "
                            "be 'NK', 'N16K4', 'N16K1' or 'N4K4', got '%s'",
                            wls),
           NULL;
  int64_t u = ((const TnIrDenseAttrs *)attrs)->units;
  if (u && u != units)
    return tn__ir_arg_error(op, 1, "weight", types[1], "units = %" PRId64
                            " but the weight has %" PRId64, u, units), NULL;
  int64_t out[TN_IR_MAX_DIMS];
  memcpy(out, tn__ir_dims(d), sizeof(int64_t) * (size_t)nd);
  out[nd - 1] = units;
  return tn_ir_tensor_type(out, (int32_t)nd, out_dtype);
}

static TnObject *infer_dense(const char *op, TnObject *const *types, int32_t n,
                             TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = same_dtype_pair(op, types);
  if (d == NULL) return NULL;
  DLDataType od = ((const TnIrDenseAttrs *)attrs)->out_dtype;
  return tn__ir_dense_out(op, types, attrs, tn__ir_is_void(od) ? d->dtype : od);
}

static TnObject *infer_matmul(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrMatmulAttrs *m = (const TnIrMatmulAttrs *)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "a");
  const TnIrTensorType *b = a ? tn__ir_tensor_arg(op, types, 1, "b") : NULL;
  if (b == NULL) return NULL;
  if (!tn__ir_dtype_eq(a->dtype, b->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  int64_t na = tn__ir_ndim(a);
  if (na < 2)
    return tn__ir_arg_error(op, 0, "a", types[0], "expected at least 2 "
                            "dimensions"), NULL;
  if (tn__ir_ndim(b) != 2)
    return tn__ir_arg_error(op, 1, "b", types[1], "expected 2 dimensions"),
           NULL;
  const int64_t *da = tn__ir_dims(a), *db = tn__ir_dims(b);
  int64_t mm = m->transpose_a ? da[na - 1] : da[na - 2];
  int64_t ka = m->transpose_a ? da[na - 2] : da[na - 1];
  int64_t kb = m->transpose_b ? db[1] : db[0];
  int64_t nn = m->transpose_b ? db[0] : db[1];
  if (ka != kb)
    return tn__ir_arg_error(op, 1, "b", types[1], "inner dimension %" PRId64
                            " does not match a's %" PRId64, kb, ka), NULL;
  int64_t out[TN_IR_MAX_DIMS];
  memcpy(out, da, sizeof(int64_t) * (size_t)na);
  out[na - 2] = mm;
  out[na - 1] = nn;
  return tn_ir_tensor_type(out, (int32_t)na, a->dtype);
}

static TnObject *infer_pool2d(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrPool2DAttrs *p = (const TnIrPool2DAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  int n_, c_, h_, w_;
  const char *l = str_of(p->layout);
  if (!tn__ir_data_layout(op, "layout", l, &n_, &c_, &h_, &w_)) return NULL;
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(%s)", l), NULL;
  int64_t size[2], stride[2], pad[4];
  int32_t ns = tn__ir_attr_ints(attrs, "pool_size", size, 2, op);
  if (ns < 0) return NULL;
  if (ns == 1) size[1] = size[0];
  else if (ns != 2) {
    tn_error_raise_in(TN_ERR_TYPE, op, "pool_size must be (kh, kw)");
    return NULL;
  }
  if (tn__ir_pair(op, attrs, "strides", 1, stride) || tn__ir_padding4(op, attrs, pad))
    return NULL;
  const int64_t *dd = tn__ir_dims(d);
  int64_t hin, win, oh = 0, ow = 0;
  if (size[0] < 1 || size[1] < 1)
    return tn__ir_arg_error(op, 0, "data", types[0], "a %" PRId64 "x%" PRId64
                            " window does not fit (pool_size must be "
                            "positive)", size[0], size[1]), NULL;
  if (tn__ir_attr_fits_i32(op, "pool_size", size, 2)) return NULL;
  if (window_room(op, dd[h_], (int64_t[]){pad[0], pad[2]}, 1, size[0],
                  &hin) ||
      window_room(op, dd[w_], (int64_t[]){pad[1], pad[3]}, 1, size[1], &win))
    return NULL;
  if (hin < 0 || win < 0)
    return tn__ir_arg_error(op, 0, "data", types[0], "a %" PRId64 "x%" PRId64
                            " window does not fit (pool_size, with padding "
                            "(%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                            "))", size[0], size[1], pad[0], pad[1], pad[2],
                            pad[3]), NULL;
  if (window_count(op, hin, stride[0], size[0], p->ceil_mode, &oh) ||
      window_count(op, win, stride[1], size[1], p->ceil_mode, &ow))
    return NULL;
  int64_t out[4];
  out[n_] = dd[n_], out[c_] = dd[c_], out[h_] = oh, out[w_] = ow;
  return tn_ir_tensor_type(out, 4, d->dtype);
}

static TnObject *infer_global_pool(const char *op, TnObject *const *types,
                                   int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  int n_, c_, h_, w_;
  const char *l = str_of(((const TnIrGlobalPool2DAttrs *)attrs)->layout);
  if (!tn__ir_data_layout(op, "layout", l, &n_, &c_, &h_, &w_)) return NULL;
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(%s)", l), NULL;
  int64_t out[4];
  memcpy(out, tn__ir_dims(d), sizeof out);
  out[h_] = out[w_] = 1;
  return tn_ir_tensor_type(out, 4, d->dtype);
}

static TnObject *infer_softmax(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (!tn__ir_is_float(d->dtype))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected a "
                            "floating-point tensor"), NULL;
  int64_t axis = ((const TnIrAxisAttrs *)attrs)->axis, nd = tn__ir_ndim(d);
  if (axis < -nd || axis >= nd)
    return tn__ir_arg_error(op, 0, "data", types[0], "axis %" PRId64 " is out "
                            "of range", axis), NULL;
  tn_object_retain(types[0]);
  return types[0];
}

static TnObject *infer_bias_add(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *b = d ? tn__ir_tensor_arg(op, types, 1, "bias") : NULL;
  if (b == NULL) return NULL;
  int64_t nd = tn__ir_ndim(d), axis = ((const TnIrAxisAttrs *)attrs)->axis;
  int64_t ax = axis < 0 ? axis + nd : axis;
  if (ax < 0 || ax >= nd)
    return tn__ir_arg_error(op, 0, "data", types[0], "axis %" PRId64 " is out "
                            "of range", axis), NULL;
  if (!tn__ir_dtype_eq(d->dtype, b->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  if (tn__ir_ndim(b) != 1 || tn__ir_dims(b)[0] != tn__ir_dims(d)[ax])
    return tn__ir_arg_error(op, 1, "bias", types[1], "expected one dimension "
                            "of %" PRId64 " (the data's axis %" PRId64 ")",
                            tn__ir_dims(d)[ax], ax), NULL;
  tn_object_retain(types[0]);
  return types[0];
}

/* pad_width as nested pairs or a flat list of 2 * ndim integers. */
static int pad_width(const char *op, const TnObject *attrs, int64_t nd,
                     int64_t *before, int64_t *after) {
  TnAny v;
  if (tn_node_get(attrs, "pad_width", &v)) return -1;
  int rc = -1;
  if (v.type_index == TN_TYPE_ARRAY || v.type_index == TN_TYPE_LIST) {
    int64_t n = tn_array_size(v.v_obj);
    bool nested = n > 0 && tn_any_is_object(tn_array_at(v.v_obj, 0));
    if (nested && n == nd) {
      rc = 0;
      for (int64_t i = 0; i < nd && rc == 0; i++) {
        const TnAny *p = tn_array_at(v.v_obj, i);
        if (!tn_any_is_object(p) || tn_array_size(p->v_obj) != 2 ||
            tn_any_as_int(tn_array_at(p->v_obj, 0), &before[i]) ||
            tn_any_as_int(tn_array_at(p->v_obj, 1), &after[i]))
          rc = -1;
      }
    } else if (!nested && n == 2 * nd) {
      rc = 0;
      for (int64_t i = 0; i < nd && rc == 0; i++)
        if (tn_any_as_int(tn_array_at(v.v_obj, 2 * i), &before[i]) ||
            tn_any_as_int(tn_array_at(v.v_obj, 2 * i + 1), &after[i]))
          rc = -1;
    }
  }
  tn_any_clear(&v);
  for (int64_t i = 0; rc == 0 && i < nd; i++)
    if (before[i] < 0 || after[i] < 0) rc = -1;
  if (rc) {
    tn_error_set_raised(NULL);
    return tn_error_raise_in(TN_ERR_TYPE, op, "pad_width must give (before, "
                             "after) >= 0 for each of the %" PRId64
                             " dimensions", nd);
  }
  return 0;
}

static TnObject *infer_pad(const char *op, TnObject *const *types, int32_t n,
                           TnObject *attrs) {
  (void)n;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  int64_t nd = tn__ir_ndim(d), before[TN_IR_MAX_DIMS], after[TN_IR_MAX_DIMS];
  if (pad_width(op, attrs, nd, before, after)) return NULL;
  int64_t out[TN_IR_MAX_DIMS];
  for (int64_t i = 0; i < nd; i++) {
    int64_t in = tn__ir_dims(d)[i];
    if (tn__ckd_add(&out[i], in, before[i]) ||
        tn__ckd_add(&out[i], out[i], after[i]))
      return tn__ckd_attr_error(op, "pad_width", before[i] > after[i] ?
                                before[i] : after[i], "dimension %" PRId64
                                " of %" PRId64 " padded by (%" PRId64 ", %"
                                PRId64 ") is more than int64 holds", i, in,
                                before[i], after[i]), NULL;
  }
  return tn_ir_tensor_type(out, (int32_t)nd, d->dtype);
}

void tn__ir_ops_nn_init(void) {
  TN__IR_ATTRS(TnIrDenseAttrs, "ir.DenseAttrs", dense_fields);
  TN__IR_ATTRS(TnIrMatmulAttrs, "ir.MatmulAttrs", matmul_fields);
  TN__IR_ATTRS(TnIrConv2DAttrs, "ir.Conv2DAttrs", conv_fields);
  TN__IR_ATTRS(TnIrPool2DAttrs, "ir.Pool2DAttrs", pool_fields);
  TN__IR_ATTRS(TnIrGlobalPool2DAttrs, "ir.GlobalPool2DAttrs", global_pool_fields);
  TN__IR_ATTRS(TnIrAxisAttrs, "ir.SoftmaxAttrs", softmax_fields);
  TN__IR_ATTRS(TnIrAxisAttrs, "ir.BiasAddAttrs", bias_add_fields);
  TN__IR_ATTRS(TnIrPadAttrs, "ir.PadAttrs", pad_fields);
  tn__ir_op_define("nn.dense", "data,weight", "ir.DenseAttrs",
                   TN_OP_OUT_FUSABLE, infer_dense,
                   "data [.., K] x weight [N, K] -> [.., N]");
  tn__ir_op_define("matmul", "tensor_a,tensor_b", "ir.MatmulAttrs",
                   TN_OP_OUT_FUSABLE, infer_matmul,
                   "a [.., M, K] x b [K, N] -> [.., M, N]");
  tn__ir_op_define("nn.conv2d", "data,weight", "ir.Conv2DAttrs",
                   TN_OP_OUT_FUSABLE, infer_conv2d,
                   "2-D convolution (NCHW or NHWC, grouped, dilated)");
  tn__ir_op_define("nn.max_pool2d", "data", "ir.Pool2DAttrs",
                   TN_OP_OUT_FUSABLE, infer_pool2d,
                   "the maximum of each pool_size window");
  tn__ir_op_define("nn.avg_pool2d", "data", "ir.Pool2DAttrs",
                   TN_OP_OUT_FUSABLE, infer_pool2d,
                   "the mean of each pool_size window");
  tn__ir_op_define("nn.global_avg_pool2d", "data", "ir.GlobalPool2DAttrs",
                   TN_OP_OUT_FUSABLE, infer_global_pool,
                   "the mean over the spatial axes");
  tn__ir_op_define("nn.softmax", "data", "ir.SoftmaxAttrs", TN_OP_OPAQUE,
                   infer_softmax, "exp(x) / sum(exp(x)) along axis");
  tn__ir_op_define("nn.bias_add", "data,bias", "ir.BiasAddAttrs",
                   TN_OP_BROADCAST, infer_bias_add,
                   "add a per-channel bias on axis");
  tn__ir_op_define("nn.pad", "data", "ir.PadAttrs", TN_OP_INJECTIVE, infer_pad,
                   "pad each axis by (before, after) with pad_value");
}

/* infer_pool2d for the other operator files (ops_onnxq.c's pool). */
TnObject *tn__ir_infer_pool2d(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  return infer_pool2d(op, types, n, attrs);
}
