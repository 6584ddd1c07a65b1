/*
 * lower_math.c: the third part of the lowering table (lower.c registers
 * it with its own and lower_nn.c's): the operators of ir/ops_math.c, and
 * the int8 forms of maximum and minimum. The float math is one form,
 * math_f32; the int8 unary operators are a 256-entry table built here, on
 * the host, by the crt's *_s8_table functions (TFLite's arithmetic run
 * once per input value) and looked up by the lut_s8 form; qnn.subtract,
 * qnn.squared_difference and qnn.prelu are lowered as qnn.add
 * is (lower_nn.c), each to its own form.
 */
#include "kernel/lower_internal.h"

/* Argument i, a scalar constant, as a double; -1 with an error naming the
 * argument when it is not one. */
static int scalar_arg(const TnKernArgs *a, int32_t i, const char *role,
                      double *out) {
  TnObject *t = i < a->nargs ? a->consts[i] : NULL;
  if (t == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) must be "
                             "a constant to lower this call", i, role);
  const DLTensor *dl = tn_tensor_dltensor(t);
  const char *p = (const char *)dl->data + dl->byte_offset;
  int64_t m = 1;
  for (int32_t d = 0; d < dl->ndim; d++) m *= dl->shape[d];
  if (m != 1)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) has %"
                             PRId64 " values, expected 1", i, role, m);
  if (is(dl->dtype, kF32)) *out = *(const float *)p;
  else if (is(dl->dtype, kI32)) *out = *(const int32_t *)p;
  else
    return tn_error_raise_in(TN_ERR_TYPE, a->op, "argument %d (%s) must be "
                             "float32 or int32", i, role);
  return 0;
}

/* `n` scalars from argument `first` on, named by roles. */
static int scalars(const TnKernArgs *a, int32_t first,
                   const char *const *roles, int n, double *v) {
  for (int i = 0; i < n; i++)
    if (scalar_arg(a, first + i, roles[i], &v[i])) return -1;
  return 0;
}

/* ---- float math ------------------------------------------------------------ */

static int lower_math(const TnKernArgs *a, TnKernCall *k, TnCrtMathOp op) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, "float32 only");
  if (check_size(a, numel(a->out))) return -1;
  TnCrtCallMath *p = KERNEL_USE(k, math_f32, 0);
  p->op = op, p->n = (int32_t)numel(a->out);
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

#define MATH(name, OP)                                          \
  static int lower_##name(const TnKernArgs *a, TnKernCall *k) { \
    return lower_math(a, k, OP);                                \
  }
MATH(abs, TN_CRT_ABS)
MATH(sqrt, TN_CRT_SQRT)
MATH(rsqrt, TN_CRT_RSQRT)
MATH(log, TN_CRT_LOG)
MATH(elu, TN_CRT_ELU)
MATH(hard_swish, TN_CRT_HARD_SWISH)

/* ---- int8 maximum and minimum ------------------------------------------------ */

int tn__lower_minmax_s8(const TnKernArgs *a, TnKernCall *k,
                        TnCrtBinaryOp op) {
  TnCrtCallBinary *p = KERNEL_USE(k, minmax_s8, 0);
  p->op = op;
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  reads(k, 2);
  return 0;
}

/* ---- qnn.subtract, qnn.squared_difference, qnn.prelu ---------------------- */

static int lower_qnn_subtract(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qsub_s8, tn_crt_qsub_params);
}
static int lower_qnn_squared_difference(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qsquared_difference_s8,
                              tn_crt_qsquared_difference_params);
}
static int lower_qnn_prelu(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qprelu_s8, tn_crt_qprelu_params);
}

/* ---- nn.prelu ----------------------------------------------------------------- */

static int lower_prelu(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32) || !is(a->types[1]->dtype, kF32))
    return no_kernel(a, "float32 only");
  TnCrtCallBinary *p = KERNEL_USE(k, prelu_f32, 0);
  p->op = 0;
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  reads(k, 2);
  return 0;
}

/* ---- int8 unary operators by table ------------------------------------------ */

typedef enum { Q_LEAKY_RELU, Q_ABS, Q_RSQRT, Q_ELU, Q_HARD_SWISH } QUnary;

static int lower_qnn_table(const TnKernArgs *a, TnKernCall *k, QUnary which) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  static const char *const roles[] = {"input_scale", "input_zero_point",
                                      "output_scale", "output_zero_point"};
  double q[4], alpha = 0;
  if (scalars(a, 1, roles, 4, q) || check_size(a, numel(a->out))) return -1;
  if (which == Q_LEAKY_RELU) {
    const TnIrLeakyReluAttrs *x =
        ATTRS(a->op, a->attrs, TnIrLeakyReluAttrs, "ir.LeakyReluAttrs");
    if (x == NULL) return -1;
    alpha = x->alpha;
  }
  TnCrtCallLut *p = KERNEL_USE(k, lut_s8, 0);
  p->n = (int32_t)numel(a->out);
  int32_t izp = (int32_t)q[1], ozp = (int32_t)q[3];
  TnCrtStatus (*table)(double, int32_t, double, int32_t, TnCrtLut8 *) =
      which == Q_ABS     ? tn_crt_abs_s8_table
      : which == Q_RSQRT ? tn_crt_rsqrt_s8_table
      : which == Q_ELU   ? tn_crt_elu_s8_table
                         : tn_crt_hard_swish_s8_table;
  TnCrtStatus st =
      which == Q_LEAKY_RELU
          ? tn_crt_leaky_relu_s8_table(q[0], izp, alpha, q[2], ozp, &p->t)
          : table(q[0], izp, q[2], ozp, &p->t);
  if (st != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "input scale %g, zero "
                             "point %d and output scale %g, zero point %d "
                             "cannot be represented (%s)", q[0], izp, q[2],
                             ozp, tn_crt_status_doc(st));
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

static int lower_qnn_leaky_relu(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_table(a, k, Q_LEAKY_RELU);
}
static int lower_qnn_abs(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_table(a, k, Q_ABS);
}
static int lower_qnn_rsqrt(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_table(a, k, Q_RSQRT);
}
static int lower_qnn_elu(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_table(a, k, Q_ELU);
}
static int lower_qnn_hard_swish(const TnKernArgs *a, TnKernCall *k) {
  return lower_qnn_table(a, k, Q_HARD_SWISH);
}

/* ---- the table ---------------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"abs", {lower_abs}},
    {"sqrt", {lower_sqrt}},
    {"rsqrt", {lower_rsqrt}},
    {"log", {lower_log}},
    {"qnn.subtract", {lower_qnn_subtract}},
    {"qnn.leaky_relu", {lower_qnn_leaky_relu}},
    {"qnn.abs", {lower_qnn_abs}},
    {"qnn.rsqrt", {lower_qnn_rsqrt}},
    {"nn.elu", {lower_elu}},
    {"nn.hard_swish", {lower_hard_swish}},
    {"qnn.elu", {lower_qnn_elu}},
    {"qnn.hard_swish", {lower_qnn_hard_swish}},
    {"qnn.squared_difference", {lower_qnn_squared_difference}},
    {"qnn.prelu", {lower_qnn_prelu}},
    {"nn.prelu", {lower_prelu}},
};

const TnLowerRow *tn__lower_math_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
