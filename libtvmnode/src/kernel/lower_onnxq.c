/*
 * lower_onnxq.c: the part of the lowering table for the operators of
 * ir/ops_onnxq.c (lower.c registers it after the others). qnn.lut is the
 * crt's lut_s8 form with the table copied from its constant argument: the
 * importer computed it, so the lowering only checks that it is one.
 * qnn.qlinear_add and qnn.qlinear_mul are the qlinear_*_ort forms, which
 * take the model's scales and zero points as they are.
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

/* qnn.qlinear_add, qnn.qlinear_mul: the scalars copied as they are (the
 * kernel computes onnxruntime's ratios from them, in float32). */
static int lower_qlinear(const TnKernArgs *a, TnKernCall *k, TnKernFormId form) {
  if (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8))
    return no_kernel(a, "int8 only");
  static const char *const roles[] = {
      "lhs_scale",    "lhs_zero_point",    "rhs_scale",   "rhs_zero_point",
      "output_scale", "output_zero_point", "uint8_offset"};
  double v[7];
  for (int i = 0; i < 7; i++) {
    int64_t n = 0;
    if (tn__lower_const_values(a, 2 + i, roles[i], &v[i], 1, &n)) return -1;
    if (n != 1)
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) has %"
                               PRId64 " values, expected 1", 2 + i, roles[i],
                               n);
  }
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

/* ---- the table ------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"qnn.lut", {lower_qnn_lut}},
    {"qnn.qlinear_add", {lower_qlinear_add}},
    {"qnn.qlinear_mul", {lower_qlinear_mul}},
};

const TnLowerRow *tn__lower_onnxq_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
