/*
 * lower_nn.c: the second part of the lowering table (lower.c has the first
 * and registers both): the neural-network operators (bias_add, mean,
 * conv2d, dense, matmul, pooling, softmax), the quantized operators (qnn.*)
 * and the fused forms FuseOps produces that the kernels compute in one
 * call: conv2d/dense + bias + activation (float32), qnn.conv2d/
 * qnn.dense + bias + requantize + clip (int8, TFLite's fused convolution)
 * and qnn.add/qnn.mul + clip (int8, TFLite's fused activation of ADD/MUL).
 * They are one file because they lean on each other: the fused forms reuse
 * the convolution and dense geometry and the requantization multipliers,
 * qnn.mean the reductions' geometry, softmax the [outer, channels, inner]
 * split of bias_add. Requantization multipliers are computed here, on the
 * host, in double, as TFLite computes them.
 */
#include "kernel/lower_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ---- helpers ---------------------------------------------------------------- */

/* A string attribute into `buf` (empty when absent). */
/* Values of a constant argument: its elements as double. -1 with an error
 * naming the argument when it is not a constant. */
static int const_values(const TnKernArgs *a, int32_t i, const char *role,
                        double *out, int64_t cap, int64_t *n) {
  TnObject *t = i < a->nargs ? a->consts[i] : NULL;
  if (t == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) must be a "
                             "constant to lower this call", i, role);
  const DLTensor *dl = tn_tensor_dltensor(t);
  int64_t m = 1;
  for (int32_t d = 0; d < dl->ndim; d++) m *= dl->shape[d];
  if (m > cap || m < 1)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) has %"
                             PRId64 " values, expected 1 to %" PRId64, i, role,
                             m, cap);
  const char *p = (const char *)dl->data + dl->byte_offset;
  for (int64_t k = 0; k < m; k++) {
    if (is(dl->dtype, kF32)) out[k] = ((const float *)p)[k];
    else if (is(dl->dtype, kI32)) out[k] = ((const int32_t *)p)[k];
    else if (dl->dtype.code == kDLFloat && dl->dtype.bits == 64)
      out[k] = ((const double *)p)[k];
    else if (dl->dtype.code == kDLInt && dl->dtype.bits == 64)
      out[k] = (double)((const int64_t *)p)[k];
    else if (is(dl->dtype, kI8)) out[k] = ((const int8_t *)p)[k];
    else
      return tn_error_raise_in(TN_ERR_TYPE, a->op, "argument %d (%s) has an "
                               "unsupported dtype", i, role);
  }
  /* The kernels take zero points as int32 and negate them, and derive
   * fixed-point multipliers from scales: a zero point is a whole number
   * within +-INT32_MAX, a scale positive and finite. A value past these
   * used to be truncated into another model, or to be undefined. */
  const bool zp = strstr(role, "zero_point") != NULL,
             sc = !zp && strstr(role, "scale") != NULL;
  for (int64_t k = 0; k < m && (zp || sc); k++) {
    const double v = out[k];
    if (zp ? !(v == floor(v) && fabs(v) <= INT32_MAX)
           : !(isfinite(v) && v > 0))
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) holds "
                               "%.17g at %" PRId64 "; expected %s", i, role,
                               v, k, zp ? "a whole number within +-2147483647"
                                        : "a positive finite scale");
  }
  *n = m;
  return 0;
}

static int const_scalar(const TnKernArgs *a, int32_t i, const char *role,
                        double *out) {
  int64_t n;
  return const_values(a, i, role, out, 1, &n);
}

/* The [outer, channels, inner] split of a tensor around `axis`. */
static int split_axis(const TnKernArgs *a, const TnIrTensorType *t,
                      int64_t axis, int32_t *outer, int32_t *ch,
                      int32_t *inner) {
  int64_t nd = tn__ir_ndim(t);
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "axis %" PRId64 " is out of "
                             "range for %" PRId64 " dimensions", axis, nd);
  int64_t o = 1, in = 1;
  for (int64_t d = 0; d < axis; d++) o *= tn__ir_dims(t)[d];
  for (int64_t d = axis + 1; d < nd; d++) in *= tn__ir_dims(t)[d];
  if (check_size(a, numel(t))) return -1;
  *outer = (int32_t)o, *ch = (int32_t)tn__ir_dims(t)[axis];
  *inner = (int32_t)in;
  return 0;
}

/* ---- bias_add ------------------------------------------------------------------ */

static int lower_bias_add(const TnKernArgs *a, TnKernCall *k) {
  DLDataType t = a->types[0]->dtype;
  const DLDataType i64 = {kDLInt, 64, 1}; /* a 16x8 layer's sums */
  if (!is(t, kF32) && !is(t, kI32) && !is(t, i64)) return no_kernel(a, NULL);
  TnCrtCallAxis *p = is(t, kF32)   ? KERNEL_USE(k, bias_add_f32, 0)
                     : is(t, i64) ? KERNEL_USE(k, bias_add_i64, 0)
                                  : KERNEL_USE(k, bias_add_i32, 0);
  const TnIrAxisAttrs *x =
      ATTRS(a->op, a->attrs, TnIrAxisAttrs, "ir.BiasAddAttrs");
  if (x == NULL || split_axis(a, a->types[0], x->axis, &p->outer,
                              &p->channels, &p->inner))
    return -1;
  reads(k, 2);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

/* ---- reductions ------------------------------------------------------------------ */

/* The reduction of argument 0 as the kernels see it (unit dims dropped,
 * neighbours both reduced or both kept merged) and the elements each
 * output averages. An empty input becomes [outputs, 0] with the 0
 * reduced, so every output sees a count of 0. */
static int reduce_geom(const TnKernArgs *a, TnCrtReduce *r, int32_t *count) {
  const TnIrTensorType *t = a->types[0];
  bool red[TN_IR_MAX_DIMS];
  if (tn__ir_reduce_axes(a->op, (TnObject *)t, t, a->attrs, red)) return -1;
  int64_t total = numel(t), outputs = numel(a->out), cnt = 1;
  if (check_size(a, total) || check_size(a, outputs)) return -1;
  memset(r, 0, sizeof *r);
  if (total == 0) {
    r->ndim = 2, r->dims[0] = (int32_t)outputs, r->dims[1] = 0;
    r->reduce_mask = 2;
    *count = 0;
    return 0;
  }
  for (int64_t d = 0; d < tn__ir_ndim(t); d++) {
    int32_t e = (int32_t)tn__ir_dims(t)[d];
    if (red[d]) cnt *= e;
    if (e == 1) continue;
    int32_t nd = r->ndim;
    if (nd > 0 && (bool)((r->reduce_mask >> (nd - 1)) & 1) == red[d]) {
      r->dims[nd - 1] *= e;
      continue;
    }
    if (nd == TN_CRT_MAX_DIMS)
      return no_kernel(a, "more than 8 alternating runs of reduced and "
                       "kept dimensions");
    r->dims[nd] = e;
    if (red[d]) r->reduce_mask |= UINT32_C(1) << nd;
    r->ndim = nd + 1;
  }
  if (r->ndim == 0) r->ndim = 1, r->dims[0] = 1; /* one element */
  *count = (int32_t)cnt;
  return 0;
}

static int lower_mean(const TnKernArgs *a, TnKernCall *k) {
  bool f32 = is(a->types[0]->dtype, kF32);
  if (!f32 && !is(a->types[0]->dtype, kI32))
    return no_kernel(a, "float32 and int32 only");
  TnCrtReduce *p = f32 ? KERNEL_USE(k, mean_f32, 0)
                       : KERNEL_USE(k, mean_i32, 0);
  int32_t count;
  if (reduce_geom(a, p, &count)) return -1;
  reads(k, 1);
  return 0;
}

/* ---- convolution, dense, pooling ------------------------------------------------ */

/* Element strides of the logical axes of a compact 4-d tensor whose
 * positions of (a0, a1, a2, a3) are pos[]. */
static void strides4(const int64_t *dims, const int pos[4], int32_t out[4]) {
  int64_t st[4];
  st[3] = 1;
  for (int d = 2; d >= 0; d--) st[d] = st[d + 1] * dims[d + 1];
  for (int i = 0; i < 4; i++) out[i] = (int32_t)st[pos[i]];
}

/* Whether the weight_layout wl of a `layer` call is the packed one
 * ("N16K4") into *packed, which only the fused int8 layer reads (packed
 * not NULL); 0, -1 with the error. */
static int packed_layout(const TnKernArgs *a, const TnObject *wl,
                         const char *layer, int32_t *packed) {
  const bool p = strcmp(attr_text(wl), "N16K4") == 0;
  if (p && packed == NULL) {
    char why[160];
    snprintf(why, sizeof why, "a packed weight (weight_layout 'N16K4') is "
             "read only by the fused int8 layer: qnn.requantize of "
             "nn.bias_add of %s, int8 in and out", layer);
    return no_kernel(a, why);
  }
  if (packed) *packed = p;
  return 0;
}

/* The geometry of a conv2d call with data d, weight w and output o; the
 * weight packed (weight_layout "N16K4") into *packed, which only the
 * fused int8 layer reads (packed not NULL), of a 1x1 layer of stride 1,
 * unpadded, NHWC (tn_crt_conv2d_s8_packed's). */
static int conv_geom(const TnKernArgs *a, const TnIrTensorType *d,
                     const TnIrTensorType *w, const TnIrTensorType *o,
                     TnCrtConv2d *g, int32_t *packed) {
  const char *op = a->op;
  const TnObject *attrs = a->attrs;
  const TnIrConv2DAttrs *ca = ATTRS(op, attrs, TnIrConv2DAttrs,
                                    "ir.Conv2DAttrs");
  if (ca == NULL) return -1;
  int32_t pk = 0;
  if (packed_layout(a, ca->weight_layout, "qnn.conv2d", packed ? &pk : NULL))
    return -1;
  if (packed) *packed = pk;
  const char *dl = attr_text(ca->data_layout), *kl = attr_text(ca->kernel_layout);
  int n_, c_, h_, w_;
  if (!tn__ir_data_layout(op, "data_layout", dl[0] ? dl : "NCHW", &n_, &c_,
                          &h_, &w_))
    return -1;
  int ko, ki, kh, kw;
  if (!tn__ir_kernel_layout(op, kl[0] ? kl : "OIHW", &ko, &ki, &kh, &kw))
    return -1;
  int64_t stride[2], dil[2], pad[4];
  if (tn__ir_pair(op, attrs, "strides", 1, stride) ||
      tn__ir_pair(op, attrs, "dilation", 1, dil) ||
      tn__ir_padding4(op, attrs, pad))
    return -1;
  const int64_t *dd = tn__ir_dims(d), *wd = tn__ir_dims(w),
                *od = tn__ir_dims(o);
  int64_t big = numel(d) > numel(o) ? numel(d) : numel(o);
  if (big > INT32_MAX || numel(w) > INT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, op, "too large for the kernels");
  memset(g, 0, sizeof *g);
  g->batch = (int32_t)dd[n_];
  g->in_h = (int32_t)dd[h_], g->in_w = (int32_t)dd[w_];
  g->in_c = (int32_t)dd[c_];
  g->out_h = (int32_t)od[h_], g->out_w = (int32_t)od[w_];
  g->out_c = (int32_t)od[c_];
  g->k_h = (int32_t)wd[kh], g->k_w = (int32_t)wd[kw];
  g->stride_h = (int32_t)stride[0], g->stride_w = (int32_t)stride[1];
  g->dilation_h = (int32_t)dil[0], g->dilation_w = (int32_t)dil[1];
  g->pad_top = (int32_t)pad[0], g->pad_left = (int32_t)pad[1];
  g->groups = (int32_t)ca->groups;
  int dpos[4] = {n_, h_, w_, c_}, wpos[4] = {kh, kw, ki, ko};
  strides4(dd, dpos, g->in_strides);
  strides4(wd, wpos, g->w_strides);
  strides4(od, dpos, g->out_strides);
  /* (a larger window: one group, NHWC, any padding and stride) */
  const bool one = g->k_h == 1 && g->k_w == 1;
  if (pk && (g->groups != 1 || c_ != 3 ||
             (one && (g->stride_h != 1 || g->stride_w != 1 || pad[0] ||
                      pad[1] || pad[2] || pad[3])))) {
    char why[320];
    g_snprintf(why, sizeof why, "a packed weight (weight_layout 'N16K4') is "
               "read only by a layer of one group, NHWC, and if 1x1 of "
               "stride 1, unpadded; got kernel %dx%d, groups %d, strides "
               "%dx%d, padding %d,%d,%d,%d, data_layout '%s'", g->k_h,
               g->k_w, g->groups,
               g->stride_h, g->stride_w, (int)pad[0], (int)pad[1], (int)pad[2],
               (int)pad[3], dl[0] ? dl : "NCHW");
    return no_kernel(a, why);
  }
  return 0;
}

/* Multiply-accumulates of a convolution and of a dense layer: what the
 * executor's statistics and the benchmarks count. */
static int64_t conv_macs(const TnCrtConv2d *g) {
  return (int64_t)g->batch * g->out_h * g->out_w * g->out_c * g->k_h *
         g->k_w * (g->in_c / (g->groups > 0 ? g->groups : 1));
}
static int64_t dense_macs(const TnCrtDense *d) {
  return (int64_t)d->batch * d->in_features * d->out_features;
}

static int lower_conv2d(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32) || !is(a->out->dtype, kF32))
    return no_kernel(a, NULL);
  TnCrtCallConvF32 *p = KERNEL_USE(k, conv2d_f32, 0);
  if (conv_geom(a, a->types[0], a->types[1], a->out, &p->g, NULL))
    return -1;
  p->act_min = -INFINITY, p->act_max = INFINITY;
  k->macs = conv_macs(&p->g);
  reads(k, 2);
  return 0;
}

/* The packed dense weight layouts (PackDenseWeights) and the layers whose
 * kernels read them. */
static const struct {
  const char *layout, *reader;
} kPackedDense[] = {
    {"N16K4", "the fused int8 layer: qnn.requantize of nn.bias_add of "
              "qnn.dense, int8 in and out"},
    {"N4K4", "the fused int8 layer: qnn.requantize of nn.bias_add of "
             "qnn.dense, int8 in and out"},
    {"N16K1", "the float32 dense layer: nn.dense, float32 in and out"},
};

/* The packed layouts the fused int8 layer's kernel reads, in the order of
 * TN_CRT_DENSE_N16K4, TN_CRT_DENSE_N4K4; the float32 layer's. */
static const char *const kReadsS8[] = {"N16K4", "N4K4", NULL};
static const char *const kReadsF32[] = {"N16K1", NULL};

/* The dense call's weight layout: *packed 0 for [N, K], i + 1 when it is
 * reads[i] (the packed layouts the caller's kernel reads, NULL-ended;
 * NULL: none); 0, -1 with the error for another layout. */
static int dense_layout(const TnKernArgs *a, const char *const *reads,
                        int32_t *packed) {
  const TnIrDenseAttrs *da =
      ATTRS(a->op, a->attrs, TnIrDenseAttrs, "ir.DenseAttrs");
  if (da == NULL) return -1;
  const char *l = attr_text(da->weight_layout);
  int32_t p = 0;
  if (strcmp(l, "NK") != 0) {
    for (int32_t i = 0; reads && reads[i] && !p; i++)
      if (strcmp(l, reads[i]) == 0) p = i + 1;
    if (!p) {
      for (size_t i = 0; i < sizeof kPackedDense / sizeof *kPackedDense; i++)
        if (strcmp(l, kPackedDense[i].layout) == 0) {
          char why[160];
          g_snprintf(why, sizeof why, "a packed weight (weight_layout '%s') "
                     "is read only by %s", l, kPackedDense[i].reader);
          return no_kernel(a, why);
        }
      char why[160];
      g_snprintf(why, sizeof why, "an unknown weight_layout '%s'", l);
      return no_kernel(a, why);
    }
  }
  if (packed) *packed = p;
  return 0;
}

/* reads, packed: as dense_layout's. */
static int dense_geom(const TnKernArgs *a, const TnIrTensorType *d,
                      const TnIrTensorType *w, TnCrtDense *g,
                      const char *const *reads, int32_t *packed) {
  if (dense_layout(a, reads, packed)) return -1;
  int64_t k = tn__ir_dims(w)[1], n = tn__ir_dims(w)[0];
  if (check_size(a, numel(d)) || check_size(a, numel(w)) ||
      check_size(a, numel(a->out)))
    return -1;
  g->batch = (int32_t)(numel(d) / (k ? k : 1));
  g->in_features = (int32_t)k, g->out_features = (int32_t)n;
  g->w_stride_n = (int32_t)k, g->w_stride_k = 1;
  return 0;
}

static int lower_dense(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32) || !is(a->out->dtype, kF32))
    return no_kernel(a, NULL);
  TnCrtCallDenseF32 *p = KERNEL_USE(k, dense_f32, 0);
  if (dense_geom(a, a->types[0], a->types[1], &p->d, kReadsF32, &p->packed))
    return -1;
  p->act_min = -INFINITY, p->act_max = INFINITY;
  k->macs = dense_macs(&p->d);
  reads(k, 2);
  return 0;
}

static int lower_matmul(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, NULL);
  const TnIrTensorType *x = a->types[0], *w = a->types[1];
  if (check_size(a, numel(x)) || check_size(a, numel(a->out))) return -1;
  const TnIrMatmulAttrs *ma =
      ATTRS(a->op, a->attrs, TnIrMatmulAttrs, "ir.MatmulAttrs");
  if (ma == NULL) return -1;
  bool ta = ma->transpose_a, tb = ma->transpose_b;
  int64_t nd = tn__ir_ndim(x);
  int64_t r = tn__ir_dims(x)[nd - 2], c = tn__ir_dims(x)[nd - 1];
  TnCrtCallMatmul *p = KERNEL_USE(k, batch_matmul_f32, 0);
  p->d.batch = (int32_t)(ta ? c : r);
  p->d.in_features = (int32_t)(ta ? r : c);
  p->d.out_features = (int32_t)(tb ? tn__ir_dims(w)[0] : tn__ir_dims(w)[1]);
  if (tb) p->d.w_stride_k = 1, p->d.w_stride_n = (int32_t)tn__ir_dims(w)[1];
  else p->d.w_stride_k = (int32_t)tn__ir_dims(w)[1], p->d.w_stride_n = 1;
  p->batches = (int32_t)(numel(x) / (r * c != 0 ? r * c : 1));
  p->in_batch_stride = (int32_t)(r * c);
  p->in_stride_m = ta ? 1 : (int32_t)c;
  p->in_stride_k = ta ? (int32_t)c : 1;
  k->macs = dense_macs(&p->d) * p->batches;
  reads(k, 2);
  return 0;
}

static int lower_pool(const TnKernArgs *a, TnKernCall *k, bool max,
                      bool global) {
  DLDataType t = a->types[0]->dtype;
  const DLDataType i16 = {kDLInt, 16, 1}; /* pool_s16.c */
  if (!is(t, kF32) && !is(t, kI8) && !is(t, i16)) return no_kernel(a, NULL);
  if (check_size(a, numel(a->types[0]))) return -1;
  const TnIrPool2DAttrs *pa = NULL;
  const char *l;
  if (global) {
    const TnIrGlobalPool2DAttrs *ga = ATTRS(
        a->op, a->attrs, TnIrGlobalPool2DAttrs, "ir.GlobalPool2DAttrs");
    if (ga == NULL) return -1;
    l = attr_text(ga->layout);
  } else {
    pa = ATTRS(a->op, a->attrs, TnIrPool2DAttrs, "ir.Pool2DAttrs");
    if (pa == NULL) return -1;
    l = attr_text(pa->layout);
  }
  int n_, c_, h_, w_;
  if (!tn__ir_data_layout(a->op, "layout", l[0] ? l : "NCHW", &n_, &c_, &h_,
                          &w_))
    return -1;
  const int64_t *dd = tn__ir_dims(a->types[0]), *od = tn__ir_dims(a->out);
  TnCrtPool2d g_, *g = &g_;
  memset(g, 0, sizeof *g);
  g->batch = (int32_t)dd[n_], g->channels = (int32_t)dd[c_];
  g->in_h = (int32_t)dd[h_], g->in_w = (int32_t)dd[w_];
  g->out_h = (int32_t)od[h_], g->out_w = (int32_t)od[w_];
  if (global) {
    g->k_h = g->in_h, g->k_w = g->in_w, g->stride_h = g->stride_w = 1;
  } else {
    int64_t size[2] = {1, 1}, stride[2], pad[4];
    int32_t ns = tn__ir_attr_ints(a->attrs, "pool_size", size, 2, a->op);
    if (ns < 0) return -1;
    if (ns == 1) size[1] = size[0];
    if (tn__ir_pair(a->op, a->attrs, "strides", 1, stride) ||
        tn__ir_padding4(a->op, a->attrs, pad))
      return -1;
    g->k_h = (int32_t)size[0], g->k_w = (int32_t)size[1];
    g->stride_h = (int32_t)stride[0], g->stride_w = (int32_t)stride[1];
    g->pad_top = (int32_t)pad[0], g->pad_left = (int32_t)pad[1];
    g->count_include_pad = pa->count_include_pad;
  }
  int pos[4] = {n_, h_, w_, c_};
  strides4(dd, pos, g->in_strides);
  strides4(od, pos, g->out_strides);
  if (is(t, kF32)) {
    TnCrtCallPoolF32 *p = max ? KERNEL_USE(k, max_pool2d_f32, 0)
                              : KERNEL_USE(k, avg_pool2d_f32, 0);
    p->g = *g, p->act_min = -INFINITY, p->act_max = INFINITY;
  } else if (is(t, i16)) {
    TnCrtCallPoolS8 *p = max ? KERNEL_USE(k, max_pool2d_s16, 0)
                             : KERNEL_USE(k, avg_pool2d_s16, 0);
    p->g = *g, p->act_min = INT16_MIN, p->act_max = INT16_MAX;
  } else {
    TnCrtCallPoolS8 *p = max ? KERNEL_USE(k, max_pool2d_s8, 0)
                             : KERNEL_USE(k, avg_pool2d_s8, 0);
    p->g = *g, p->act_min = -128, p->act_max = 127;
  }
  reads(k, 1);
  return 0;
}

static int lower_max_pool(const TnKernArgs *a, TnKernCall *k) {
  return lower_pool(a, k, true, false);
}
static int lower_avg_pool(const TnKernArgs *a, TnKernCall *k) {
  return lower_pool(a, k, false, false);
}
static int lower_global_pool(const TnKernArgs *a, TnKernCall *k) {
  return lower_pool(a, k, false, true);
}

static int lower_softmax(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, NULL);
  TnCrtCallAxis *p = KERNEL_USE(k, softmax_f32, 0);
  const TnIrAxisAttrs *x =
      ATTRS(a->op, a->attrs, TnIrAxisAttrs, "ir.SoftmaxAttrs");
  if (x == NULL || split_axis(a, a->types[0], x->axis, &p->outer,
                              &p->channels, &p->inner))
    return -1;
  reads(k, 1);
  return 0;
}

/* ---- quantized operators --------------------------------------------------------- */

static const DLDataType kI16 = {kDLInt, 16, 1}, kU8 = {kDLUInt, 8, 1};

/* Per-tensor or per-channel (scale, zero point) args at 1 and 2. */
static int lower_affine(const TnKernArgs *a, TnKernCall *k, bool quantize) {
  const TnIrTensorType *t = a->types[0];
  /* the integer side: int8, and quant16.c's int16 (both ways) and uint8
   * (dequantize only, as TFLite Micro) */
  DLDataType qt = quantize ? a->out->dtype : t->dtype;
  bool s16 = is(qt, kI16), u8 = !quantize && is(qt, kU8);
  if (!is(quantize ? t->dtype : a->out->dtype, kF32) ||
      !(is(qt, kI8) || s16 || u8))
    return no_kernel(a, quantize ? "float32 to int8 or int16 only"
                                 : "int8, uint8 or int16 to float32 only");
  /* qnn.quantize's attrs start as qnn.dequantize's (the axis) */
  const TnIrAxisAttrs *x =
      quantize ? (const TnIrAxisAttrs *)ATTRS(a->op, a->attrs,
                                              TnIrQuantizeAttrs,
                                              "ir.QuantizeAttrs")
               : ATTRS(a->op, a->attrs, TnIrAxisAttrs, "ir.DequantizeAttrs");
  int32_t outer, ch, inner;
  if (x == NULL || split_axis(a, t, x->axis, &outer, &ch, &inner))
    return -1;
  int64_t ns, nz;
  double *sv = g_new(double, ch), *zv = g_new(double, ch);
  int rc = const_values(a, 1, "scale", sv, ch, &ns);
  if (rc == 0) rc = const_values(a, 2, "zero_point", zv, ch, &nz);
  if (rc == 0 && ns != 1 && ns != ch)
    rc = tn_error_raise_in(TN_ERR_VALUE, a->op, "%" PRId64 " scales for %d "
                           "channels", ns, ch);
  if (rc) {
    g_free(sv), g_free(zv);
    return -1;
  }
  int32_t m = ns == 1 && nz == 1 ? 1 : ch;
  size_t extra = (size_t)m * (sizeof(float) + 4);
  TnCrtCallAffine *p =
      quantize ? (s16 ? KERNEL_USE(k, quantize_f32_s16, extra)
                      : KERNEL_USE(k, quantize_f32_s8, extra))
      : s16    ? KERNEL_USE(k, dequantize_s16_f32, extra)
      : u8     ? KERNEL_USE(k, dequantize_u8_f32, extra)
               : KERNEL_USE(k, dequantize_s8_f32, extra);
  float *scale = (float *)(p + 1);
  int32_t *zp = (int32_t *)(scale + m);
  for (int32_t c = 0; c < m; c++) {
    scale[c] = (float)sv[ns == 1 ? 0 : c];
    zp[c] = (int32_t)zv[nz == 1 ? 0 : c];
  }
  p->scale = scale, p->zero_point = zp;
  g_free(sv), g_free(zv);
  p->outer = m == 1 ? 1 : outer;
  p->channels = m;
  p->inner = m == 1 ? (int32_t)numel(t) : inner;
  p->round_even = 0;
  if (quantize) {
    const TnIrQuantizeAttrs *q = (const TnIrQuantizeAttrs *)x;
    p->round_even = strcmp(((TnStringObj *)q->rounding)->data, "EVEN") == 0;
    if (p->round_even && s16)
      return no_kernel(a, "rounding EVEN into int16 (int8 only)");
  }
  reads(k, 1);
  return 0;
}

static int lower_quantize(const TnKernArgs *a, TnKernCall *k) {
  return lower_affine(a, k, true);
}
static int lower_dequantize(const TnKernArgs *a, TnKernCall *k) {
  return lower_affine(a, k, false);
}

/* A crt element type that quant16.c's requantize_int takes. */
static bool requant_int_type(int t) {
  return t == TN_CRT_I8 || t == TN_CRT_U8 || t == TN_CRT_I16 ||
         t == TN_CRT_I32;
}

/* Multipliers for real scales in[c] / out into arrays of `m` entries. */
static int multipliers(const char *op, const double *in, int64_t nin,
                       double out, int32_t m, int32_t *mult, int32_t *shift) {
  for (int32_t c = 0; c < m; c++) {
    double real = in[nin == 1 ? 0 : c] / out;
    if (!(real >= 0) || !isfinite(real) ||
        tn_crt_quantize_multiplier(real, &mult[c], &shift[c]) != TN_CRT_OK)
      return tn_error_raise_in(TN_ERR_VALUE, op, "scale ratio %g cannot be "
                               "represented as a quantized multiplier", real);
  }
  return 0;
}

/* ONNX Runtime's float32 scales in[c] / out, both as float32 and the
 * quotient in float32, into `m` entries. */
static int float_scales(const char *op, const double *in, int64_t nin,
                        double out, int32_t m, float *sc) {
  for (int32_t c = 0; c < m; c++) {
    const float num = (float)in[nin == 1 ? 0 : c], den = (float)out;
    const float v = num / den;
    if (!(v > 0) || !isfinite(v))
      return tn_error_raise_in(TN_ERR_VALUE, op, "scale ratio %g / %g is "
                               "not a positive finite float32",
                               (double)num, (double)den);
    sc[c] = v;
  }
  return 0;
}

/* Whether a qnn.requantize's rounding is ONNX Runtime's float one. */
static bool onnx_rounding(const TnIrRequantizeAttrs *x) {
  return x && x->rounding &&
         strcmp(((TnStringObj *)x->rounding)->data, "ONNX") == 0;
}

static int lower_requantize(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  bool s32 = is(t->dtype, kI32);
  /* int32 or int8 to int8 here; the other integer pairs in quant16.c */
  int from = tn__kernel_crt_dtype(t->dtype);
  int to = tn__kernel_crt_dtype(a->out->dtype);
  bool wide = !((s32 || is(t->dtype, kI8)) && is(a->out->dtype, kI8));
  if (wide && !((requant_int_type(from) || from == TN_CRT_I64) &&
                requant_int_type(to)))
    return no_kernel(a, "int8, uint8, int16, int32 (or int64 in) only");
  const TnIrRequantizeAttrs *x =
      ATTRS(a->op, a->attrs, TnIrRequantizeAttrs, "ir.RequantizeAttrs");
  int32_t outer, ch, inner;
  if (x == NULL || split_axis(a, t, x->axis, &outer, &ch, &inner))
    return -1;
  const bool fl = onnx_rounding(x);
  if (fl && wide)
    return no_kernel(a, "rounding ONNX: int32 or int8 to int8 only");
  double *isc = g_new(double, ch), izp, osc, ozp;
  int64_t ns;
  int rc = const_values(a, 1, "input_scale", isc, ch, &ns);
  if (rc == 0) rc = const_scalar(a, 2, "input_zero_point", &izp);
  if (rc == 0) rc = const_scalar(a, 3, "output_scale", &osc);
  if (rc == 0) rc = const_scalar(a, 4, "output_zero_point", &ozp);
  int32_t m = rc == 0 && ns == 1 ? 1 : ch;
  size_t extra = fl ? (size_t)m * sizeof(float) : 2 * (size_t)m * sizeof(int32_t);
  void *base = wide  ? (void *)KERNEL_USE(k, requantize_int, extra)
               : s32 ? (void *)KERNEL_USE(k, requantize_s32_s8, extra)
                     : (void *)KERNEL_USE(k, requantize_s8_s8, extra);
  TnCrtCallRequantInt *w = wide ? base : NULL;
  TnCrtCallRequant *p = wide ? NULL : base;
  TnCrtRequant *r = wide ? &w->r : &p->r;
  int32_t *mult = wide ? (int32_t *)(w + 1) : (int32_t *)(p + 1);
  int32_t *shift = mult + m;
  if (rc == 0 && fl) rc = float_scales(a->op, isc, ns, osc, m, (float *)mult);
  else if (rc == 0) rc = multipliers(a->op, isc, ns, osc, m, mult, shift);
  g_free(isc);
  if (rc) return -1;
  r->input_zero_point = (int32_t)izp;
  r->output_zero_point = (int32_t)ozp;
  r->act_min = -128, r->act_max = 127;
  r->channels = m;
  if (fl) r->scale = (float *)mult;
  else r->multiplier = mult, r->shift = shift;
  outer = m == 1 ? 1 : outer;
  inner = m == 1 ? (int32_t)numel(t) : inner;
  if (wide) {
    /* the output type's whole range (the kernel narrows it) */
    r->act_min = INT32_MIN, r->act_max = INT32_MAX;
    w->from = from, w->to = to;
    w->outer = outer, w->channels = m, w->inner = inner;
  } else {
    p->outer = outer, p->channels = m, p->inner = inner;
  }
  reads(k, 1);
  return 0;
}

static int offsets(const TnKernArgs *a, int32_t *in_off, int32_t *f_off) {
  double izp, kzp;
  if (const_scalar(a, 2, "input_zero_point", &izp) ||
      const_scalar(a, 3, "kernel_zero_point", &kzp))
    return -1;
  *in_off = -(int32_t)izp, *f_off = -(int32_t)kzp;
  return 0;
}

/* TFLite's 16x8 layers: int16 data, int8 weights, int64 sums
 * (conv_s16.c), with no input zero point. */
static bool is_16x8(const TnKernArgs *a) {
  const DLDataType i64 = {kDLInt, 64, 1};
  return is(a->types[0]->dtype, kI16) && is(a->types[1]->dtype, kI8) &&
         is(a->out->dtype, i64);
}

/* int16 data has no zero point in TFLite's 16x8 layers. */
static int check_16x8_offset(const TnKernArgs *a, int32_t input_offset) {
  if (input_offset == 0) return 0;
  return tn_error_raise_in(TN_ERR_VALUE, a->op, "int16 data must have input "
                           "zero point 0 (TFLite's 16x8), got %d",
                           -input_offset);
}

static int lower_qnn_conv2d(const TnKernArgs *a, TnKernCall *k) {
  bool s16 = is_16x8(a);
  if (!s16 && (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8) ||
               !is(a->out->dtype, kI32)))
    return no_kernel(a, "int8 data and weight to int32, or int16 data and "
                     "int8 weight to int64, only");
  TnCrtCallConvS32 *p = s16 ? KERNEL_USE(k, conv2d_s16_s64, 0)
                            : KERNEL_USE(k, conv2d_s8_s32, 0);
  if (conv_geom(a, a->types[0], a->types[1], a->out, &p->g, NULL) ||
      offsets(a, &p->input_offset, &p->filter_offset))
    return -1;
  if (s16 && check_16x8_offset(a, p->input_offset)) return -1;
  k->macs = conv_macs(&p->g);
  reads(k, 2);
  return 0;
}

static int lower_qnn_dense(const TnKernArgs *a, TnKernCall *k) {
  bool s16 = is_16x8(a);
  if (!s16 && (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8) ||
               !is(a->out->dtype, kI32)))
    return no_kernel(a, "int8 data and weight to int32, or int16 data and "
                     "int8 weight to int64, only");
  TnCrtCallDenseS32 *p = s16 ? KERNEL_USE(k, dense_s16_s64, 0)
                             : KERNEL_USE(k, dense_s8_s32, 0);
  if (dense_geom(a, a->types[0], a->types[1], &p->d, NULL, NULL) ||
      offsets(a, &p->input_offset, &p->filter_offset))
    return -1;
  if (s16 && check_16x8_offset(a, p->input_offset)) return -1;
  k->macs = dense_macs(&p->d);
  reads(k, 2);
  return 0;
}

/* qnn.add, qnn.mul and the int8 binary operators of lower_math.c: two
 * int8 operands and six constant scales and zero points (arguments 2 to
 * 7), TFLite's parameters computed here by `params` for `form` (whose
 * parameter type is TnCrtCallQBinary). qnn.add and qnn.mul (forms qadd_s8
 * and qmul_s8) also take two int16 operands, TFLite's 16-bit arithmetic
 * (add_s16.c). */
int tn__lower_qnn_binary(const TnKernArgs *a, TnKernCall *k,
                         TnKernFormId form, TnLowerQParams params) {
  bool wide_ok = form == TN_KF_qadd_s8 || form == TN_KF_qmul_s8;
  bool s16 = wide_ok && is(a->types[0]->dtype, kI16) &&
             is(a->types[1]->dtype, kI16);
  if (!s16 && (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8)))
    return no_kernel(a, wide_ok ? "int8 or int16 only" : "int8 only");
  double v[6];
  static const char *roles[] = {"lhs_scale", "lhs_zero_point", "rhs_scale",
                                "rhs_zero_point", "output_scale",
                                "output_zero_point"};
  for (int i = 0; i < 6; i++)
    if (const_scalar(a, 2 + i, roles[i], &v[i])) return -1;
  /* int16: symmetric, as TFLite quantizes it */
  if (s16 && (v[1] != 0 || v[3] != 0 || v[5] != 0))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "int16 operands and result "
                             "need zero point 0, got %g, %g and %g", v[1],
                             v[3], v[5]);
  bool mul = form == TN_KF_qmul_s8;
  if (s16) form = mul ? TN_KF_qmul_s16 : TN_KF_qadd_s16;
  TnCrtCallQBinary *p = (TnCrtCallQBinary *)tn__kernel_use(k, form, 0);
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  TnCrtStatus st =
      s16 ? (mul ? tn_crt_qmul_s16_params : tn_crt_qadd_s16_params)(
                v[0], v[2], v[4], &p->q)
          : params(v[0], (int32_t)v[1], v[2], (int32_t)v[3], v[4],
                   (int32_t)v[5], &p->q);
  if (st != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "scales %g, %g, %g with "
                             "zero points %g, %g, %g cannot be represented "
                             "(%s)", v[0], v[2], v[4], v[1], v[3], v[5],
                             tn_crt_status_doc(st));
  reads(k, 2);
  /* a Cortex-M DSP plan gives int8 ADD its tables' scratch */
  if (form == TN_KF_qadd_s8)
    k->scratch_dsp = k->inplace_scratch_dsp = tn_crt_qadd_s8_scratch_size_isa(
        &p->q, &p->b, TN_CRT_ISA_ARM_DSP);
  /* each output element is written right after the elements it reads, in
   * order, so it may overwrite an operand that is not broadcast */
  if (numel(a->types[0]) == numel(a->out)) k->inplace = 1;
  else if (numel(a->types[1]) == numel(a->out)) k->inplace = 2;
  return 0;
}

static int lower_qnn_add(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qadd_s8, tn_crt_qadd_params);
}
static int lower_qnn_mul(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qmul_s8, tn_crt_qmul_params);
}

/* The (input scale, input zero point, output scale, output zero point) of
 * qnn.softmax/sigmoid/tanh, arguments 1 to 4. */
static int unary_qparams(const TnKernArgs *a, double q[4]) {
  static const char *roles[] = {"input_scale", "input_zero_point",
                                "output_scale", "output_zero_point"};
  /* int16 is the MEAN's and the SUM's (pool_s16.c) */
  if (!is(a->types[0]->dtype, kI8) &&
      !(is(a->types[0]->dtype, kI16) && (strcmp(a->op, "qnn.mean") == 0 ||
                                         strcmp(a->op, "qnn.sum") == 0)))
    return no_kernel(a, "int8 only");
  for (int i = 0; i < 4; i++)
    if (const_scalar(a, 1 + i, roles[i], &q[i])) return -1;
  if (check_size(a, numel(a->out))) return -1;
  return 0;
}

static int lower_qnn_softmax(const TnKernArgs *a, TnKernCall *k) {
  if (a->types[0]->dtype.bits == 16) return tn__lower_softmax_s16(a, k);
  double q[4];
  if (unary_qparams(a, q)) return -1;
  /* TFLite's int8 softmax has one output quantization: 1/256, -128, and
   * its int16-out form 1/65536 (within a thousandth, as TFLite checks it:
   * converters write 1/65535), -32768 */
  const bool wide = is(a->out->dtype, kI16);
  if (wide && (fabs(q[2] - 1.0 / 65536) > 0.001 / 65536 || q[3] != -32768))
    return no_kernel(a, "the int16-out softmax needs output scale 1/65536 "
                     "and zero point -32768 (TFLite's)");
  if (!wide && ((float)q[2] != 1.0f / 256 || q[3] != -128))
    return no_kernel(a, "the int8 softmax needs output scale 1/256 and "
                     "zero point -128 (TFLite's)");
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t);
  int64_t n = nd ? tn__ir_dims(t)[nd - 1] : 1, total = numel(t);
  const TnIrQSoftmaxAttrs *x =
      ATTRS(a->op, a->attrs, TnIrQSoftmaxAttrs, "ir.QnnSoftmaxAttrs");
  if (x == NULL) return -1;
  TnCrtCallSoftmaxS8 *p = wide ? KERNEL_USE(k, softmax_s8_s16, 0)
                               : KERNEL_USE(k, softmax_s8, 0);
  p->n = (int32_t)n;
  p->outer = (int32_t)(n ? total / n : 0);
  if (tn_crt_softmax_s8_params(x->beta, q[0], &p->s) != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "beta %g with input scale "
                             "%g cannot be represented", x->beta, q[0]);
  reads(k, 1);
  return 0;
}

static int lower_qnn_lut(const TnKernArgs *a, TnKernCall *k, bool tanh_) {
  if (a->types[0]->dtype.bits == 16) return tn__lower_act_s16(a, k, tanh_);
  double q[4];
  if (unary_qparams(a, q)) return -1;
  TnCrtCallLut *p = KERNEL_USE(k, lut_s8, 0);
  p->n = (int32_t)numel(a->out);
  TnCrtStatus st =
      tanh_ ? tn_crt_tanh_s8_table(q[0], (int32_t)q[1], q[2], (int32_t)q[3],
                                   &p->t)
            : tn_crt_logistic_s8_table(q[0], (int32_t)q[1], q[2],
                                       (int32_t)q[3], &p->t);
  if (st != TN_CRT_OK)
    return no_kernel(a, tanh_ ? "the int8 tanh needs output scale 1/128 and "
                                "zero point 0 (TFLite's)"
                              : "the int8 sigmoid needs output scale 1/256 "
                                "and zero point -128 (TFLite's)");
  reads(k, 1);
  return 0;
}

static int lower_qnn_sigmoid(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_lut(a, k, false);
}
static int lower_qnn_tanh(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_lut(a, k, true);
}

/* TFLite's int8 MEAN: the multiplier of input_scale / output_scale with
 * 1/count folded in, on the host (tn_crt_mean_s8_params); its int8 SUM
 * (qnn.sum, lower_movement.c) is the same without the 1/count. */
int tn__lower_qnn_mean_or_sum(const TnKernArgs *a, TnKernCall *k, bool sum) {
  double q[4];
  if (unary_qparams(a, q)) return -1;
  TnCrtCallMeanS8 *p = is(a->types[0]->dtype, kI16)
                           ? KERNEL_USE(k, mean_s16, 0)
                           : KERNEL_USE(k, mean_s8, 0);
  int32_t count;
  if (reduce_geom(a, &p->r, &count)) return -1;
  if (q[1] < INT32_MIN || q[1] > INT32_MAX || q[3] < INT32_MIN ||
      q[3] > INT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "a zero point is out of "
                             "the int32 range");
  TnCrtStatus st = tn_crt_mean_s8_params(q[0], (int32_t)q[1], q[2],
                                         (int32_t)q[3], sum ? 0 : count,
                                         &p->q);
  if (st != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "input scale %g and output "
                             "scale %g: their ratio cannot be represented "
                             "as a quantized multiplier (%s)", q[0], q[2],
                             tn_crt_status_name(st));
  p->q.count = count; /* a count of 0 above leaves the multiplier whole */
  k->scratch = tn_crt_mean_s8_scratch_size(&p->r);
  reads(k, 1);
  return 0;
}

static int lower_qnn_mean(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_mean_or_sum(a, k, false);
}

/* ---- fused forms ------------------------------------------------------------------ */

static const TnIrTensorType *type_of(const TnObject *e) {
  const TnObject *t = ((const TnIrExpr *)e)->checked_type;
  return t && tn__ir_is(t, TN_IR->tensor_type) ? (const TnIrTensorType *)t
                                               : NULL;
}

/* `e` as a call of operator `name`, or NULL. */
static const TnIrCall *call_of(const TnObject *e, const char *name) {
  const char *n = tn__ir_call_op_name(e);
  return n && strcmp(n, name) == 0 ? (const TnIrCall *)e : NULL;
}

static const TnObject *arg(const TnIrCall *c, int64_t i) {
  return tn_array_at(c->args, i)->v_obj;
}

/* The quantization of a fused integer layer: the base call's zero points
 * and its requantize's scales (`ch` of them at most, *ns read; isc is
 * g_new'd, freed by the caller) and zero points. -1 with the error. */
typedef struct {
  double izp, kzp, rzp, ozp, osc, *isc;
  int64_t ns;
} FusedQuant;

static int fused_quant(const char *op, const TnIrCall *base,
                       const TnIrCall *rq, int32_t ch,
                       TnObject *(*const_of)(void *, const TnObject *),
                       void *ctx, FusedQuant *q) {
  TnKernArgs sa = {.op = op, .nargs = 4};
  for (int i = 2; i < 4; i++) sa.consts[i] = const_of(ctx, arg(base, i));
  TnKernArgs ra = {.op = "qnn.requantize", .nargs = 5};
  for (int i = 1; i < 5; i++) ra.consts[i] = const_of(ctx, arg(rq, i));
  q->isc = g_new(double, ch);
  int rc = const_scalar(&sa, 2, "input_zero_point", &q->izp);
  if (rc == 0) rc = const_scalar(&sa, 3, "kernel_zero_point", &q->kzp);
  if (rc == 0) rc = const_values(&ra, 1, "input_scale", q->isc, ch, &q->ns);
  if (rc == 0) rc = const_scalar(&ra, 2, "input_zero_point", &q->rzp);
  if (rc == 0) rc = const_scalar(&ra, 3, "output_scale", &q->osc);
  if (rc == 0) rc = const_scalar(&ra, 4, "output_zero_point", &q->ozp);
  return rc;
}

/* The fused 16x8 layer (conv2d_s16, dense_s16): int16 data, int8
 * weights, an int64 bias, requantized to int16 with the requantize's
 * multipliers (input_scale[c] / output_scale in double), as the unfused
 * chain computes them. 0 when the chain is not that layer. */
static int fused_16x8(const TnKernArgs *a, TnKernCall *k, bool dense,
                      const TnIrTensorType *d, const TnIrTensorType *w,
                      const TnIrTensorType *out, const TnIrTensorType *acc,
                      int64_t cax, const TnIrCall *bias, const TnIrCall *rq,
                      double lo, double hi,
                      TnObject *(*const_of)(void *, const TnObject *),
                      void *ctx, const TnIrCall *base) {
  const DLDataType kI16_ = {kDLInt, 16, 1}, kI64 = {kDLInt, 64, 1};
  if (!is(w->dtype, kI8) || !is(out->dtype, kI16_) || !is(acc->dtype, kI64))
    return 0;
  if (bias) {
    const TnIrTensorType *bt = type_of(arg(bias, 1));
    if (!bt || !is(bt->dtype, kI64)) return 0;
  }
  const TnIrRequantizeAttrs *rx = ATTRS("qnn.requantize", rq->attrs,
                                        TnIrRequantizeAttrs,
                                        "ir.RequantizeAttrs");
  if (rx == NULL) return -1;
  int64_t rax = rx->axis, rnd = tn__ir_ndim(acc);
  if (rax < 0) rax += rnd;
  if (rax != cax || onnx_rounding(rx)) return 0;
  int32_t ch = (int32_t)tn__ir_dims(out)[cax];
  FusedQuant fq;
  int rc = fused_quant(a->op, base, rq, ch, const_of, ctx, &fq);
  double *isc = fq.isc, kzp = fq.kzp, ozp = fq.ozp, osc = fq.osc;
  int64_t ns = fq.ns;
  if (rc == 0 && (fq.rzp != 0 || fq.izp != 0)) {
    g_free(isc);
    return 0; /* not TFLite's 16x8: the unfused forms say why */
  }
  int32_t m = rc == 0 && ns == 1 ? 1 : ch;
  size_t extra = 2 * (size_t)m * sizeof(int32_t);
  TnCrtRequant *r;
  int32_t *mult, *fo, *hb;
  TnCrtCallConvS16 *pc = NULL;
  TnCrtCallDenseS16 *pd = NULL;
  if (dense) {
    pd = KERNEL_USE(k, dense_s16, extra);
    r = &pd->r, mult = (int32_t *)(pd + 1), fo = &pd->filter_offset;
    hb = &pd->has_bias;
  } else {
    pc = KERNEL_USE(k, conv2d_s16, extra);
    r = &pc->r, mult = (int32_t *)(pc + 1), fo = &pc->filter_offset;
    hb = &pc->has_bias;
  }
  int32_t *shift = mult + m;
  if (rc == 0) rc = multipliers(a->op, isc, ns, osc, m, mult, shift);
  g_free(isc);
  if (rc) return -1;
  *fo = -(int32_t)kzp;
  *hb = bias != NULL;
  r->input_zero_point = 0;
  r->output_zero_point = (int32_t)ozp;
  r->act_min = clamp_i32(ceil(lo), INT16_MIN, INT16_MAX);
  r->act_max = clamp_i32(floor(hi), INT16_MIN, INT16_MAX);
  r->channels = m;
  r->multiplier = mult, r->shift = shift;
  if (dense) {
    if (dense_geom(a, d, w, &pd->d, NULL, NULL)) return -1;
    k->macs = dense_macs(&pd->d);
  } else {
    if (conv_geom(a, d, w, acc, &pc->g, NULL)) return -1;
    k->macs = conv_macs(&pc->g);
  }
  return 1;
}

/* clip(qnn.add(x, y, ...)) or clip(qnn.mul(...)), int8: the binary
 * kernel with its activation range narrowed to the clip's bounds. Its
 * int8 result clamped to [max(-128, ceil lo), min(127, floor hi)] is the
 * unfused clip_s8 of the clamped result whenever that range is not empty
 * (TFLite's fused RELU on ADD is this range); otherwise, or for bounds
 * that are NaN, the clip stays its own step (returns 0). */
static int fused_qbinary(const TnIrCall *base, double lo, double hi,
                         TnKernCall *k, const TnObject **leaves,
                         int32_t *nleaves,
                         TnObject *(*const_of)(void *ctx,
                                               const TnObject *expr),
                         void *ctx) {
  const bool mul = call_of((const TnObject *)base, "qnn.mul") != NULL;
  if (isnan(lo) || isnan(hi) || tn_array_size(base->args) != 8) return 0;
  const int32_t l = clamp_i32(ceil(lo), -128, 127);
  const int32_t h = clamp_i32(floor(hi), -128, 127);
  TnKernArgs a = {.op = mul ? "qnn.mul" : "qnn.add", .attrs = base->attrs,
                  .nargs = 8, .out = type_of((const TnObject *)base)};
  for (int i = 0; i < 8; i++) {
    a.types[i] = type_of(arg(base, i));
    if (a.types[i] == NULL) return 0;
    a.consts[i] = i < 2 ? NULL : const_of(ctx, arg(base, i));
  }
  if (l > h || a.out == NULL || !is(a.types[0]->dtype, kI8) ||
      !is(a.types[1]->dtype, kI8) || !is(a.out->dtype, kI8))
    return 0;
  if (tn__lower_qnn_binary(&a, k, mul ? TN_KF_qmul_s8 : TN_KF_qadd_s8,
                           mul ? tn_crt_qmul_params : tn_crt_qadd_params))
    return -1;
  TnCrtQBinary *q = &((TnCrtCallQBinary *)k->params)->q;
  if (l > q->act_min) q->act_min = l;
  if (h < q->act_max) q->act_max = h;
  leaves[0] = arg(base, 0), leaves[1] = arg(base, 1);
  *nleaves = 2;
  k->base_op = a.op;
  return 1;
}

int tn__kernel_lower_fused(const TnObject *body, TnKernCall *k,
                           const TnObject **leaves, int32_t *nleaves,
                           TnObject *(*const_of)(void *ctx,
                                                 const TnObject *expr),
                           void *ctx) {
  const TnObject *e = body;
  const TnIrCall *clip = call_of(e, "clip"), *relu = call_of(e, "nn.relu");
  double lo = -INFINITY, hi = INFINITY;
  if (clip) {
    const TnIrClipAttrs *ca =
        ATTRS("clip", clip->attrs, TnIrClipAttrs, "ir.ClipAttrs");
    if (ca == NULL) return -1;
    lo = ca->a_min, hi = ca->a_max;
    e = arg(clip, 0);
  } else if (relu) {
    lo = 0;
    e = arg(relu, 0);
  }
  if (clip && (call_of(e, "qnn.add") || call_of(e, "qnn.mul")))
    return fused_qbinary((const TnIrCall *)e, lo, hi, k, leaves, nleaves,
                         const_of, ctx);
  const TnIrCall *rq = call_of(e, "qnn.requantize");
  if (rq) e = arg(rq, 0);
  const TnIrCall *bias = call_of(e, "nn.bias_add");
  if (bias) e = arg(bias, 0);
  const TnIrCall *base = NULL;
  bool dense = false, q = false;
  if ((base = call_of(e, "nn.conv2d"))) dense = false;
  else if ((base = call_of(e, "nn.dense"))) dense = true;
  else if ((base = call_of(e, "qnn.conv2d"))) q = true;
  else if ((base = call_of(e, "qnn.dense"))) dense = q = true;
  if (base == NULL || (q && rq == NULL) || (!q && rq != NULL)) return 0;
  if (!clip && !relu && !rq && !bias) return 0; /* nothing to fuse */
  const TnIrTensorType *d = type_of(arg(base, 0)), *w = type_of(arg(base, 1));
  const TnIrTensorType *out = type_of(body), *acc = type_of((const TnObject *)base);
  if (!d || !w || !out || !acc) return 0;
  /* the output channel axis */
  int64_t cax = tn__ir_ndim(acc) - 1;
  if (!dense) {
    const TnIrConv2DAttrs *ca =
        ATTRS(tn__ir_call_op_name((const TnObject *)base), base->attrs,
              TnIrConv2DAttrs, "ir.Conv2DAttrs");
    if (ca == NULL) return -1;
    cax = strcmp(attr_text(ca->data_layout), "NHWC") == 0 ? 3 : 1;
  }
  if (bias) {
    /* the bias must lie on the output channel axis */
    const TnIrAxisAttrs *ba =
        ATTRS("nn.bias_add", bias->attrs, TnIrAxisAttrs, "ir.BiasAddAttrs");
    if (ba == NULL) return -1;
    const TnIrTensorType *bt = type_of(arg(bias, 1));
    int64_t ax = ba->axis, nd = tn__ir_ndim(acc);
    if (ax < 0) ax += nd;
    if (!bt || tn__ir_ndim(bt) != 1 || ax != cax) return 0;
  }
  TnKernArgs a = {.op = ((TnStringObj *)((TnIrOp *)base->op)->name)->data,
                  .attrs = base->attrs, .nargs = 2, .types = {d, w},
                  .out = acc};
  leaves[0] = arg(base, 0), leaves[1] = arg(base, 1);
  *nleaves = 2;
  k->base_op = a.op;
  if (bias) leaves[(*nleaves)++] = arg(bias, 1);
  k->nin = *nleaves;
  for (int32_t i = 0; i < k->nin; i++) k->in[i] = i;
  if (!q) {
    if (!is(d->dtype, kF32) || !is(out->dtype, kF32)) return 0;
    if (dense) {
      TnCrtCallDenseF32 *p = KERNEL_USE(k, dense_f32, 0);
      if (dense_geom(&a, d, w, &p->d, kReadsF32, &p->packed)) return -1;
      p->act_min = (float)lo, p->act_max = (float)hi;
      p->has_bias = bias != NULL;
      k->macs = dense_macs(&p->d);
    } else {
      TnCrtCallConvF32 *p = KERNEL_USE(k, conv2d_f32, 0);
      if (conv_geom(&a, d, w, acc, &p->g, NULL)) return -1;
      p->act_min = (float)lo, p->act_max = (float)hi;
      p->has_bias = bias != NULL;
      k->macs = conv_macs(&p->g);
    }
    return 1;
  }
  if (is(d->dtype, kI16)) return fused_16x8(&a, k, dense, d, w, out, acc,
                                             cax, bias, rq, lo, hi, const_of,
                                             ctx, base);
  /* int8: the multipliers are the requantize's, input_scale[c] /
   * output_scale in double, exactly as the unfused requantize computes
   * them (an importer that wants TFLite's double product stores the
   * input scale as float64). */
  if (!is(d->dtype, kI8) || !is(out->dtype, kI8)) return 0;
  int32_t ch = (int32_t)tn__ir_dims(out)[cax];
  const TnIrRequantizeAttrs *ra_ = ATTRS("qnn.requantize", rq->attrs,
                                         TnIrRequantizeAttrs,
                                         "ir.RequantizeAttrs");
  if (ra_ == NULL) return -1;
  int64_t rax = ra_->axis, rnd = tn__ir_ndim(acc);
  if (rax < 0) rax += rnd;
  if (rax != cax) return 0;
  FusedQuant fq;
  int rc = fused_quant(a.op, base, rq, ch, const_of, ctx, &fq);
  double *isc = fq.isc, izp = fq.izp, kzp = fq.kzp, ozp = fq.ozp, osc = fq.osc;
  int64_t ns = fq.ns;
  if (rc == 0 && fq.rzp != 0) {
    g_free(isc);
    return 0; /* the fused kernel has no accumulator offset */
  }
  int32_t m = rc == 0 && ns == 1 ? 1 : ch;
  const bool fl = onnx_rounding(ra_);
  size_t extra = fl ? (size_t)m * sizeof(float) : 2 * (size_t)m * sizeof(int32_t);
  TnCrtCallDenseS8 *pd = NULL;
  TnCrtCallConvS8 *pc = NULL;
  TnCrtQuant *qp;
  int32_t *mult;
  if (dense) {
    pd = KERNEL_USE(k, dense_s8, extra);
    qp = &pd->q, mult = (int32_t *)(pd + 1);
    pd->has_bias = bias != NULL;
  } else {
    pc = KERNEL_USE(k, conv2d_s8, extra);
    qp = &pc->q, mult = (int32_t *)(pc + 1);
    pc->has_bias = bias != NULL;
  }
  int32_t *shift = mult + m;
  if (rc == 0 && fl) rc = float_scales(a.op, isc, ns, osc, m, (float *)mult);
  else if (rc == 0) rc = multipliers(a.op, isc, ns, osc, m, mult, shift);
  g_free(isc);
  if (rc) return -1;
  qp->input_offset = -(int32_t)izp;
  qp->filter_offset = -(int32_t)kzp;
  qp->output_offset = (int32_t)ozp;
  qp->act_min = clamp_i32(ceil(lo), -128, 127);
  qp->act_max = clamp_i32(floor(hi), -128, 127);
  qp->per_channel = m > 1;
  qp->channels = m;
  if (fl) qp->scale = (float *)mult;
  else qp->multiplier = mult, qp->shift = shift;
  if (dense) {
    if (dense_geom(&a, d, w, &pd->d, kReadsS8, &pd->packed)) return -1;
    k->scratch = tn_crt_dense_s8_scratch_size(&pd->d);
    k->macs = dense_macs(&pd->d);
  } else {
    if (conv_geom(&a, d, w, acc, &pc->g, &pc->packed)) return -1;
    /* a packed larger window: its unpacking below AVX-512 VNNI (a packed
     * 1x1 layer out of place needs none; in place, its own below) */
    k->scratch = pc->packed && (pc->g.k_h != 1 || pc->g.k_w != 1)
                     ? tn_crt_conv2d_s8_packed_scratch_size(&pc->g)
                     : tn_crt_conv2d_s8_scratch_size(&pc->g);
    k->scratch_dsp =
        tn_crt_conv2d_s8_scratch_size_isa(&pc->g, qp, TN_CRT_ISA_ARM_DSP, 0);
    k->nless = tn_crt_conv2d_s8_scratch_less_isa(
        &pc->g, qp, TN_CRT_ISA_ARM_DSP, 0, k->scratch_dsp_less,
        k->scratch_dsp_less_pct);
    int32_t in_place = tn_crt_conv2d_s8_inplace_ok(&pc->g);
    /* packed: PIXELS only (a larger window: never in place) */
    if (pc->packed && (in_place == 3 || pc->g.k_h != 1 || pc->g.k_w != 1))
      in_place = 0;
    if (in_place) {
      k->inplace = 1;
      k->inplace_dsp_only = in_place >= 2;
      k->inplace_grow = in_place == 3;
      k->inplace_scratch = tn_crt_conv2d_s8_inplace_scratch_size(&pc->g);
      k->inplace_scratch_dsp = tn_crt_conv2d_s8_scratch_size_isa(
          &pc->g, qp, TN_CRT_ISA_ARM_DSP, 1);
      k->inplace_nless = tn_crt_conv2d_s8_scratch_less_isa(
          &pc->g, qp, TN_CRT_ISA_ARM_DSP, 1, k->inplace_scratch_dsp_less,
          k->inplace_scratch_dsp_less_pct);
    }
    k->macs = conv_macs(&pc->g);
  }
  return 1;
}

/* ---- the table ---------------------------------------------------------------------- */

/* The rows after lower.c's, in the table's order. */
static const TnLowerRow g_table[] = {
    {"mean", {lower_mean}},
    {"nn.bias_add", {lower_bias_add}},
    {"nn.dense", {lower_dense}},
    {"matmul", {lower_matmul}},
    {"nn.conv2d", {lower_conv2d}},
    {"nn.max_pool2d", {lower_max_pool}},
    {"nn.avg_pool2d", {lower_avg_pool}},
    {"nn.global_avg_pool2d", {lower_global_pool}},
    {"nn.softmax", {lower_softmax}},
    {"qnn.quantize", {lower_quantize}},
    {"qnn.dequantize", {lower_dequantize}},
    {"qnn.requantize", {lower_requantize}},
    {"qnn.conv2d", {lower_qnn_conv2d}},
    {"qnn.dense", {lower_qnn_dense}},
    {"qnn.add", {lower_qnn_add}},
    {"qnn.mul", {lower_qnn_mul}},
    {"qnn.softmax", {lower_qnn_softmax}},
    {"qnn.sigmoid", {lower_qnn_sigmoid}},
    {"qnn.tanh", {lower_qnn_tanh}},
    {"qnn.mean", {lower_qnn_mean}},
};

const TnLowerRow *tn__lower_nn_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}

/* ---- shared with lower_movement.c ---------------------------------------------------- */

int tn__lower_reduce_geom(const TnKernArgs *a, TnCrtReduce *r,
                          int32_t *count) {
  return reduce_geom(a, r, count);
}

int tn__lower_const_values(const TnKernArgs *a, int32_t i, const char *role,
                           double *out, int64_t cap, int64_t *n) {
  return const_values(a, i, role, out, cap, n);
}
