/*
 * lower_movement.c: the third part of the lowering table (lower.c registers
 * it after lower_nn.c's): the reductions of ops_movement.c (sum, max, min,
 * argmax, argmin, qnn.sum) and take. Their kernels are in the crt's
 * reduce.c and gather.c; the int8 sum reuses the int8 mean's form with
 * TFLite's SUM multiplier (input_scale / output_scale, no 1/count).
 */
#include "kernel/lower_internal.h"

static const DLDataType kI64 = {kDLInt, 64, 1};

/* The [outer, n, inner] split of `t` around `axis` (in [0, ndim)). */
static void around(const TnIrTensorType *t, int64_t axis, int64_t *outer,
                   int64_t *n, int64_t *inner) {
  int64_t o = 1, in = 1;
  for (int64_t d = 0; d < axis; d++) o *= tn__ir_dims(t)[d];
  for (int64_t d = axis + 1; d < tn__ir_ndim(t); d++) in *= tn__ir_dims(t)[d];
  *outer = o, *n = tn__ir_dims(t)[axis], *inner = in;
}

/* ---- sum, max, min --------------------------------------------------------------- */

static int lower_sum(const TnKernArgs *a, TnKernCall *k) {
  DLDataType t = a->types[0]->dtype;
  if (!is(t, kF32) && !is(t, kI32))
    return no_kernel(a, "float32 and int32 (int8 is qnn.sum)");
  TnCrtReduce *p = is(t, kF32) ? KERNEL_USE(k, sum_f32, 0)
                               : KERNEL_USE(k, sum_i32, 0);
  int32_t count;
  if (tn__lower_reduce_geom(a, p, &count)) return -1;
  reads(k, 1);
  return 0;
}

static int lower_extreme(const TnKernArgs *a, TnKernCall *k, bool largest) {
  DLDataType t = a->types[0]->dtype;
  TnCrtReduce *p;
  if (is(t, kF32))
    p = largest ? KERNEL_USE(k, max_f32, 0) : KERNEL_USE(k, min_f32, 0);
  else if (is(t, kI8))
    p = largest ? KERNEL_USE(k, max_s8, 0) : KERNEL_USE(k, min_s8, 0);
  else if (is(t, kI32))
    p = largest ? KERNEL_USE(k, max_i32, 0) : KERNEL_USE(k, min_i32, 0);
  else
    return no_kernel(a, "float32, int8 and int32 only");
  int32_t count;
  if (tn__lower_reduce_geom(a, p, &count)) return -1;
  reads(k, 1);
  return 0;
}

static int lower_max(const TnKernArgs *a, TnKernCall *k) {
  return lower_extreme(a, k, true);
}

static int lower_min(const TnKernArgs *a, TnKernCall *k) {
  return lower_extreme(a, k, false);
}

/* TFLite's int8 SUM: the int8 mean's kernel with the multiplier of
 * input_scale / output_scale alone. */
static int lower_qnn_sum(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_mean_or_sum(a, k, true);
}

/* ---- argmax, argmin ----------------------------------------------------------------- */

static int lower_arg(const TnKernArgs *a, TnKernCall *k, bool smallest) {
  const TnIrTensorType *t = a->types[0];
  TnCrtCallArgReduce *p;
  if (is(t->dtype, kF32)) p = KERNEL_USE(k, arg_reduce_f32, 0);
  else if (is(t->dtype, kI8)) p = KERNEL_USE(k, arg_reduce_s8, 0);
  else if (is(t->dtype, kI32)) p = KERNEL_USE(k, arg_reduce_i32, 0);
  else return no_kernel(a, "float32, int8 and int32 only");
  const TnIrArgReduceAttrs *x =
      ATTRS(a->op, a->attrs, TnIrArgReduceAttrs, "ir.ArgReduceAttrs");
  if (x == NULL || check_size(a, numel(t))) return -1;
  int64_t nd = tn__ir_ndim(t), axis = x->axis < 0 ? x->axis + nd : x->axis;
  if (axis < 0 || axis >= nd)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "axis %" PRId64 " is out "
                             "of range for %" PRId64 " dimensions", x->axis,
                             nd);
  int64_t outer, n, inner;
  around(t, axis, &outer, &n, &inner);
  p->outer = (int32_t)outer, p->n = (int32_t)n, p->inner = (int32_t)inner;
  p->is_min = smallest;
  reads(k, 1);
  return 0;
}

static int lower_argmax(const TnKernArgs *a, TnKernCall *k) {
  return lower_arg(a, k, false);
}

static int lower_argmin(const TnKernArgs *a, TnKernCall *k) {
  return lower_arg(a, k, true);
}

/* ---- take --------------------------------------------------------------------------- */

static int lower_take(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0], *ix = a->types[1];
  if (is(ix->dtype, kI64)) return no_kernel(a, "int32 indices only");
  if (!is(ix->dtype, kI32)) return no_kernel(a, NULL);
  const TnIrTakeAttrs *x = ATTRS(a->op, a->attrs, TnIrTakeAttrs,
                                 "ir.TakeAttrs");
  if (x == NULL) return -1;
  int64_t nd = tn__ir_ndim(t), axis = x->axis < 0 ? x->axis + nd : x->axis;
  if (axis < 0 || axis >= nd)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "axis %" PRId64 " is out "
                             "of range for %" PRId64 " dimensions", x->axis,
                             nd);
  int64_t esz = (t->dtype.bits + 7) / 8 * t->dtype.lanes;
  int64_t outer, n, inner;
  around(t, axis, &outer, &n, &inner);
  if (check_size(a, numel(t) * esz) || check_size(a, numel(a->out) * esz))
    return -1;
  TnCrtCallGather *p = KERNEL_USE(k, gather, 0);
  p->outer = (int32_t)outer, p->n = (int32_t)n;
  p->inner = (int32_t)(inner * esz), p->count = (int32_t)numel(ix);
  reads(k, 2);
  return 0;
}

/* ---- the table ---------------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"sum", {lower_sum}},
    {"max", {lower_max}},
    {"min", {lower_min}},
    {"argmax", {lower_argmax}},
    {"argmin", {lower_argmin}},
    {"qnn.sum", {lower_qnn_sum}},
    {"take", {lower_take}},
};

const TnLowerRow *tn__lower_movement_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
