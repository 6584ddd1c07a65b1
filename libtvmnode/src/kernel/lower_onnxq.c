/*
 * lower_onnxq.c: the part of the lowering table for the operators of
 * ir/ops_onnxq.c (lower.c registers it after the others). qnn.lut is the
 * crt's lut_s8 form with the table copied from its constant argument: the
 * importer computed it, so the lowering only checks that it is one.
 * qnn.qlinear_add and qnn.qlinear_mul are the qlinear_*_ort forms, which
 * take the model's scales and zero points as they are, and
 * qnn.qlinear_avg_pool2d the qlinear_avg_pool_ort form (NCHW);
 * qnn.qlinear_softmax copies its table, as qnn.lut does.
 */
#include "kernel/lower_internal.h"

static int lower_qnn_lut(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  TnObject *t = a->nargs > 1 ? a->consts[1] : NULL;
  if (t == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument 1 (table) must "
                             "be a constant to lower this call");
  const DLTensor *dl = tn_tensor_dltensor(t);
  if (dl->ndim != 1 || dl->shape[0] != 256 || !is(dl->dtype, kI8))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument 1 (table) must "
                             "be int8 of shape [256]");
  if (check_size(a, numel(a->out))) return -1;
  TnCrtCallLut *p = KERNEL_USE(k, lut_s8, 0);
  memcpy(p->t.table, (const char *)dl->data + dl->byte_offset, 256);
  p->n = (int32_t)numel(a->out);
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

/* Arguments first.. first + n - 1, scalar constants, as doubles; -1 with
 * an error naming the argument when one is not. */
static int scalars(const TnKernArgs *a, int32_t first,
                   const char *const *roles, int n, double *v) {
  for (int i = 0; i < n; i++) {
    int64_t m = 0;
    if (tn__lower_const_values(a, first + i, roles[i], &v[i], 1, &m))
      return -1;
    if (m != 1)
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) has %"
                               PRId64 " values, expected 1", first + i,
                               roles[i], m);
  }
  return 0;
}

/* qnn.qlinear_add, qnn.qlinear_mul: the scalars copied as they are (the
 * kernel computes onnxruntime's ratios from them, in float32). */
static int lower_qlinear(const TnKernArgs *a, TnKernCall *k, TnKernFormId form) {
  if (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8))
    return no_kernel(a, "int8 only");
  static const char *const roles[] = {
      "lhs_scale",    "lhs_zero_point",    "rhs_scale",   "rhs_zero_point",
      "output_scale", "output_zero_point", "uint8_offset"};
  double v[7];
  if (scalars(a, 2, roles, 7, v)) return -1;
  int32_t lo = v[6] == 128 ? 0 : -128, hi = lo + 255;
  if (v[6] != 0 && v[6] != 128)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "uint8_offset must be 0 or "
                             "128, got %g", v[6]);
  for (int i = 0; i < 3; i++) {
    double s = v[2 * i], z = v[2 * i + 1];
    if (!(s > 0) || !isfinite(s))
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "%s must be positive and "
                               "finite, got %g", roles[2 * i], s);
    if (z != floor(z) || z < lo || z > hi)
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "%s %g is out of range "
                               "[%d, %d]", roles[2 * i + 1], z, lo, hi);
  }
  TnCrtCallQLinearOrt *p = (TnCrtCallQLinearOrt *)tn__kernel_use(k, form, 0);
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  p->q.lhs_scale = (float)v[0], p->q.lhs_zp = (int32_t)v[1];
  p->q.rhs_scale = (float)v[2], p->q.rhs_zp = (int32_t)v[3];
  p->q.out_scale = (float)v[4], p->q.out_zp = (int32_t)v[5];
  p->q.offset = (int32_t)v[6];
  p->q.scalar = numel(a->types[0]) == 1   ? 1
                : numel(a->types[1]) == 1 ? 2
                                          : 0;
  reads(k, 2);
  /* each output element is written right after the elements it reads */
  if (numel(a->types[0]) == numel(a->out)) k->inplace = 1;
  else if (numel(a->types[1]) == numel(a->out)) k->inplace = 2;
  return 0;
}

static int lower_qlinear_add(const TnKernArgs *a, TnKernCall *k) {
  return lower_qlinear(a, k, TN_KF_qlinear_add_ort);
}
static int lower_qlinear_mul(const TnKernArgs *a, TnKernCall *k) {
  return lower_qlinear(a, k, TN_KF_qlinear_mul_ort);
}

/* qnn.qlinear_avg_pool2d: NCHW geometry, onnxruntime's windows. */
static int lower_qlinear_pool(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  if (check_size(a, numel(a->types[0]))) return -1;
  const TnIrPool2DAttrs *pa =
      ATTRS(a->op, a->attrs, TnIrPool2DAttrs, "ir.Pool2DAttrs");
  if (pa == NULL) return -1;
  const char *l = attr_text(pa->layout);
  if (l[0] && strcmp(l, "NCHW") != 0)
    return no_kernel(a, "NCHW only");
  if (pa->ceil_mode) return no_kernel(a, "ceil_mode false only");
  static const char *const roles[] = {"input_scale", "input_zero_point",
                                      "output_scale", "output_zero_point",
                                      "uint8_offset"};
  double v[5];
  if (scalars(a, 1, roles, 5, v)) return -1;
  if ((v[4] != 0 && v[4] != 128) || !(v[0] > 0) || !(v[2] > 0))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "scales %g and %g must be "
                             "positive and uint8_offset 0 or 128 (got %g)",
                             v[0], v[2], v[4]);
  int64_t size[2] = {1, 1}, stride[2], pad[4];
  int32_t ns = tn__ir_attr_ints(a->attrs, "pool_size", size, 2, a->op);
  if (ns < 0 || tn__ir_pair(a->op, a->attrs, "strides", 1, stride) ||
      tn__ir_padding4(a->op, a->attrs, pad))
    return -1;
  size[1] = ns == 1 ? size[0] : size[1];
  const int64_t *d = tn__ir_dims(a->types[0]), *o = tn__ir_dims(a->out);
  TnCrtCallQLinearPoolOrt *p = KERNEL_USE(k, qlinear_avg_pool_ort, 0);
  TnCrtPool2d *g = &p->g;
  g->batch = (int32_t)d[0], g->channels = (int32_t)d[1];
  g->in_h = (int32_t)d[2], g->in_w = (int32_t)d[3];
  g->out_h = (int32_t)o[2], g->out_w = (int32_t)o[3];
  g->k_h = (int32_t)size[0], g->k_w = (int32_t)size[1];
  g->stride_h = (int32_t)stride[0], g->stride_w = (int32_t)stride[1];
  g->pad_top = (int32_t)pad[0], g->pad_left = (int32_t)pad[1];
  g->count_include_pad = pa->count_include_pad;
  /* strides of n, h, w, c */
  g->in_strides[0] = (int32_t)(d[1] * d[2] * d[3]);
  g->in_strides[1] = (int32_t)d[3], g->in_strides[2] = 1;
  g->in_strides[3] = (int32_t)(d[2] * d[3]);
  g->out_strides[0] = (int32_t)(o[1] * o[2] * o[3]);
  g->out_strides[1] = (int32_t)o[3], g->out_strides[2] = 1;
  g->out_strides[3] = (int32_t)(o[2] * o[3]);
  p->global = size[0] == d[2] && size[1] == d[3] && !pad[0] && !pad[1] &&
              !pad[2] && !pad[3];
  p->q.lhs_scale = (float)v[0], p->q.lhs_zp = (int32_t)v[1];
  p->q.rhs_scale = 1.0f;
  p->q.out_scale = (float)v[2], p->q.out_zp = (int32_t)v[3];
  p->q.offset = (int32_t)v[4];
  reads(k, 1);
  return 0;
}

/* qnn.qlinear_softmax: the table copied from its constant. */
static int lower_qlinear_softmax(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  if (check_size(a, numel(a->out))) return -1;
  TnObject *t = a->nargs > 1 ? a->consts[1] : NULL;
  const DLTensor *dl = t ? tn_tensor_dltensor(t) : NULL;
  if (dl == NULL || dl->ndim != 1 || dl->shape[0] != 256 || !is(dl->dtype, kF32))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument 1 (table) must "
                             "be a float32 constant of shape [256]");
  static const char *const roles[] = {"output_scale", "output_zero_point",
                                      "uint8_offset"};
  double v[3];
  if (scalars(a, 2, roles, 3, v)) return -1;
  if (!(v[0] > 0) || (v[2] != 0 && v[2] != 128))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "output_scale %g must be "
                             "positive and uint8_offset 0 or 128 (got %g)",
                             v[0], v[2]);
  TnCrtQSoftmaxOrt *p = KERNEL_USE(k, qlinear_softmax_ort, 0);
  memcpy(p->table, (const char *)dl->data + dl->byte_offset, sizeof p->table);
  p->out_scale = (float)v[0], p->out_zp = (int32_t)v[1];
  p->offset = (int32_t)v[2];
  const int64_t *d = tn__ir_dims(a->types[0]);
  p->outer = (int32_t)d[0], p->n = (int32_t)d[1], p->inner = (int32_t)d[2];
  reads(k, 1);
  return 0;
}

/* ---- the table ------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"qnn.lut", {lower_qnn_lut}},
    {"qnn.qlinear_add", {lower_qlinear_add}},
    {"qnn.qlinear_mul", {lower_qlinear_mul}},
    {"qnn.qlinear_avg_pool2d", {lower_qlinear_pool}},
    {"qnn.qlinear_softmax", {lower_qlinear_softmax}},
};

const TnLowerRow *tn__lower_onnxq_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
