/*
 * lower_s16mm.c: the part of the lowering table for qnn.divide (TFLite's
 * int8 DIV, the crt's qdiv_s8 form, lowered as qnn.subtract is), and the
 * int16 forms of qnn.batch_matmul and qnn.conv2d_transpose (TFLite's 16x8
 * products with int64 sums), which lower_spatial.c hands int16 calls to
 * once it has filled their geometry.
 */
#include "kernel/lower_internal.h"

static const DLDataType kI16 = {kDLInt, 16, 1};

static int lower_qnn_divide(const TnKernArgs *a, TnKernCall *k) {
  return tn__lower_qnn_binary(a, k, TN_KF_qdiv_s8, tn_crt_qdiv_params);
}

/* The checks of a 16x8 product: operand 1 of dtype `second` (else `what`
 * has no kernel), and zero points 0 in arguments 2 and 3 (TFLite quantizes
 * 16x8 activations symmetrically). */
static int s16_operands(const TnKernArgs *a, DLDataType second,
                        const char *what, const char *const roles[2]) {
  if (!is(a->types[1]->dtype, second)) return no_kernel(a, what);
  for (int32_t i = 0; i < 2; i++) {
    double v[1024];
    int64_t n = 0;
    if (tn__lower_const_values(a, 2 + i, roles[i], v, 1024, &n)) return -1;
    for (int64_t j = 0; j < n; j++)
      if (v[j] != 0)
        return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) "
                                 "is %g; int16 (16x8) operands need zero "
                                 "point 0", 2 + i, roles[i], v[j]);
  }
  return 0;
}

int tn__lower_bmm_s16(const TnKernArgs *a, TnKernCall *k,
                      const TnCrtBatchMatmul *g) {
  static const char *const roles[] = {"a_zero_point", "b_zero_point"};
  if (s16_operands(a, kI16, "int16 tensor_a needs int16 tensor_b", roles))
    return -1;
  TnCrtCallBmmS32 *p = KERNEL_USE(k, bmm_s16_s64, 0);
  p->g = *g;
  k->macs = numel(a->out) * g->k;
  reads(k, 2);
  return 0;
}

int tn__lower_tconv_s16(const TnKernArgs *a, TnKernCall *k,
                        const TnCrtConvTranspose *g) {
  static const char *const roles[] = {"input_zero_point", "kernel_zero_point"};
  if (s16_operands(a, kI8, "int16 data needs an int8 weight (TFLite's 16x8)",
                   roles))
    return -1;
  TnCrtCallConvTransposeS32 *p = KERNEL_USE(k, conv2d_transpose_s16_s64, 0);
  p->g = *g;
  k->macs = (int64_t)g->batch * g->in_h * g->in_w * g->in_c * g->k_h *
            g->k_w * g->out_c;
  reads(k, 2);
  return 0;
}

/* ---- the table ------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"qnn.divide", {lower_qnn_divide}},
};

const TnLowerRow *tn__lower_s16mm_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
