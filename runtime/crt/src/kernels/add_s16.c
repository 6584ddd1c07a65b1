/*
 * add_s16.c: int16 ADD and MUL with broadcasting (TFLite's 16x8 mode),
 * TFLite Micro's reference bit for bit (add_common.cc with
 * reference/add.h's general-scale path, mul_common.cc with integer_ops/
 * mul.h): the int8 arithmetic of quant.c on int16 elements, except that
 * ADD shifts its operands left by 15 instead of 20 before rescaling them
 * to twice the larger input scale. int16 tensors are quantized
 * symmetrically, so the parameter functions take zero points of 0 only;
 * the kernels still apply whatever offsets the parameters hold. The
 * broadcast walk is quant.c's odometer: a strided inner loop over the
 * last dimension, the others stepping each operand by its stride.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"

/* A tensor scale as TFLite holds it: a positive finite float. */
static int float_scale(double s, double *f) {
  const float v = (float)s;
  *f = (double)v;
  return s > 0.0 && v > 0.0f && v - v == 0.0f;
}

/* The three scales of an ADD or MUL as floats, and an output to fill. */
static int scales_ok(const double in[3], double f[3], const void *out) {
  return out != NULL && float_scale(in[0], &f[0]) &&
         float_scale(in[1], &f[1]) && float_scale(in[2], &f[2]);
}

TnCrtStatus tn_crt_qadd_s16_params(double lhs_scale, double rhs_scale,
                                   double out_scale, TnCrtQBinary *out) {
  const double given[3] = {lhs_scale, rhs_scale, out_scale};
  double f[3];
  if (!scales_ok(given, f, out)) return TN_CRT_INVALID_ARGUMENT;
  const double sl = f[0], sr = f[1], so = f[2];
  /* TFLite's CalculateOpDataAdd with left_shift 15 for int16 outputs; its
   * QuantizeMultiplierSmallerThanOneExp needs every multiplier below one */
  const int32_t left_shift = 15;
  const double twice_max = 2 * (sl > sr ? sl : sr);
  const double real[3] = {sl / twice_max, sr / twice_max,
                          twice_max / ((double)(1 << left_shift) * so)};
  int32_t m[3], s[3];
  for (int i = 0; i < 3; i++) {
    if (!(real[i] < 1.0)) return TN_CRT_UNSUPPORTED;
    TnCrtStatus st = tn_crt_quantize_multiplier(real[i], &m[i], &s[i]);
    if (st != TN_CRT_OK) return st;
    if (s[i] > 0) return TN_CRT_UNSUPPORTED;
  }
  out->lhs_offset = out->rhs_offset = out->output_offset = 0;
  out->left_shift = left_shift;
  out->lhs_multiplier = m[0], out->lhs_shift = s[0];
  out->rhs_multiplier = m[1], out->rhs_shift = s[1];
  out->output_multiplier = m[2], out->output_shift = s[2];
  out->act_min = INT16_MIN, out->act_max = INT16_MAX;
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_qmul_s16_params(double lhs_scale, double rhs_scale,
                                   double out_scale, TnCrtQBinary *out) {
  const double given[3] = {lhs_scale, rhs_scale, out_scale};
  double f[3];
  if (!scales_ok(given, f, out)) return TN_CRT_INVALID_ARGUMENT;
  /* TFLite's CalculateOpDataMul, as for int8: one multiplier for
   * s_lhs * s_rhs / s_out, the float scales multiplied in double */
  int32_t m, sh;
  TnCrtStatus st = tn_crt_quantize_multiplier(f[0] * f[1] / f[2], &m, &sh);
  if (st != TN_CRT_OK) return st;
  out->lhs_offset = out->rhs_offset = out->output_offset = 0;
  out->left_shift = 0;
  out->lhs_multiplier = out->lhs_shift = 0;
  out->rhs_multiplier = out->rhs_shift = 0;
  out->output_multiplier = m, out->output_shift = sh;
  out->act_min = INT16_MIN, out->act_max = INT16_MAX;
  return TN_CRT_OK;
}

static int32_t wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* TFLite's AddElementwise and MulElementwise on one pair; the int32
 * arithmetic wraps where C++ leaves overflow undefined. */
static int32_t add_pair(const TnCrtQBinary *p, int32_t x, int32_t y) {
  const int32_t a = (int32_t)((uint32_t)wrap_add(x, p->lhs_offset)
                              << p->left_shift);
  const int32_t b = (int32_t)((uint32_t)wrap_add(y, p->rhs_offset)
                              << p->left_shift);
  const int32_t sum = wrap_add(
      tn_crt_multiply_by_quantized_multiplier(a, p->lhs_multiplier,
                                              p->lhs_shift),
      tn_crt_multiply_by_quantized_multiplier(b, p->rhs_multiplier,
                                              p->rhs_shift));
  return wrap_add(tn_crt_multiply_by_quantized_multiplier(
                      sum, p->output_multiplier, p->output_shift),
                  p->output_offset);
}

static int32_t mul_pair(const TnCrtQBinary *p, int32_t x, int32_t y) {
  const int32_t prod = (int32_t)((uint32_t)wrap_add(x, p->lhs_offset) *
                                 (uint32_t)wrap_add(y, p->rhs_offset));
  return wrap_add(tn_crt_multiply_by_quantized_multiplier(
                      prod, p->output_multiplier, p->output_shift),
                  p->output_offset);
}

static TnCrtStatus walk(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                        const int16_t *lhs, const int16_t *rhs, int16_t *out,
                        int32_t (*pair)(const TnCrtQBinary *, int32_t,
                                        int32_t)) {
  if (p == NULL || b == NULL || lhs == NULL || rhs == NULL || out == NULL ||
      b->ndim < 1 || b->ndim > TN_CRT_MAX_DIMS || p->left_shift < 0 ||
      p->left_shift > 30 || p->act_min > p->act_max)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t d = 0; d < b->ndim; d++)
    if (b->dims[d] <= 0) return TN_CRT_INVALID_ARGUMENT;
  const int32_t lo = p->act_min < INT16_MIN ? INT16_MIN : p->act_min;
  const int32_t hi = p->act_max > INT16_MAX ? INT16_MAX : p->act_max;
  if (lo > hi) return TN_CRT_INVALID_ARGUMENT;
  const int32_t last = b->ndim - 1, n = b->dims[last];
  const int32_t ls = b->lhs_strides[last], rs = b->rhs_strides[last];
  int32_t idx[TN_CRT_MAX_DIMS] = {0};
  ptrdiff_t lo_at = 0, ro_at = 0;
  for (;;) {
    for (int32_t i = 0; i < n; i++) {
      const int32_t v = pair(p, lhs[lo_at + (ptrdiff_t)i * ls],
                             rhs[ro_at + (ptrdiff_t)i * rs]);
      out[i] = (int16_t)(v < lo ? lo : v > hi ? hi : v);
    }
    out += n;
    int32_t d = last - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < b->dims[d]) {
        lo_at += b->lhs_strides[d], ro_at += b->rhs_strides[d];
        break;
      }
      idx[d] = 0;
      lo_at -= (ptrdiff_t)b->lhs_strides[d] * (b->dims[d] - 1);
      ro_at -= (ptrdiff_t)b->rhs_strides[d] * (b->dims[d] - 1);
    }
    if (d < 0) return TN_CRT_OK;
  }
}

TnCrtStatus tn_crt_qadd_s16(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                            const int16_t *lhs, const int16_t *rhs,
                            int16_t *out) {
  return walk(p, b, lhs, rhs, out, add_pair);
}

TnCrtStatus tn_crt_qmul_s16(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                            const int16_t *lhs, const int16_t *rhs,
                            int16_t *out) {
  return walk(p, b, lhs, rhs, out, mul_pair);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(qadd_s16, TnCrtCallQBinary) {
  return tn_crt_qadd_s16(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qmul_s16, TnCrtCallQBinary) {
  return tn_crt_qmul_s16(&p->q, &p->b, in[0], in[1], out);
}
