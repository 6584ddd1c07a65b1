/*
 * normalize.c: TFLite's L2_NORMALIZATION and LOG_SOFTMAX over the last axis
 * of [outer, n], float32 and int8, as TFLite Micro's reference kernels
 * compute them. The float forms follow TFLite's order of operations (a
 * float sum of squares, its square root floored at epsilon, then a
 * division; max-subtracted exps summed in float, then x - max - log(sum)).
 * The int8 L2 norm is TFLite's fixed point throughout: the int32 sum of
 * squared differences from the zero point, its inverse square root by
 * gemmlowp-style Newton-Raphson in Q3.28 (GetInvSqrtQuantizedMultiplierExp)
 * as a multiplier and shift, and each difference scaled by it into the
 * fixed output quantization 1/128, 0.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "fixed_point.h"

static TnCrtStatus check_rows(int32_t outer, int32_t n, const void *in,
                              const void *out) {
  if (in == NULL || out == NULL || outer <= 0 || n <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)outer * n > INT32_MAX) return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}

/* ---- L2 normalisation -------------------------------------------------------------- */

TnCrtStatus tn_crt_l2_normalize_f32(int32_t outer, int32_t n, float eps,
                                    const float *in, float *out) {
  TnCrtStatus st = check_rows(outer, n, in, out);
  if (st != TN_CRT_OK) return st;
  for (int32_t i = 0; i < outer; i++, in += n, out += n) {
    float sq = 0.0f;
    for (int32_t c = 0; c < n; c++) sq += in[c] * in[c];
    float norm = sqrtf(sq);
    if (norm < eps) norm = eps;
    for (int32_t c = 0; c < n; c++) out[c] = in[c] / norm;
  }
  return TN_CRT_OK;
}

static int32_t leading_zeros(uint32_t x) {
  int32_t z = 0;
  while (z < 32 && !(x & 0x80000000u)) x <<= 1, z++;
  return z;
}

/* 1/sqrt(x) for an int32 x > 1 as a Q0.31 multiplier and a left shift
 * (TFLite's GetInvSqrtQuantizedMultiplierExp with a reverse shift of -1):
 * x is brought into [2^27, 2^29) by pairs of bits, Newton-Raphson runs
 * five times on y' = 3/2 y - x/2 y^3 in Q3.28, and the result is scaled
 * by sqrt(2)/2. */
static void inv_sqrt(int32_t x, int32_t *mult, int32_t *shift) {
  if (x <= 1) {
    *mult = INT32_MAX, *shift = 0;
    return;
  }
  int32_t s = 11;
  while (x >= (INT32_C(1) << 29)) x /= 4, s++;
  const int32_t pairs = (leading_zeros((uint32_t)x) - 1) / 2 - 1;
  s -= pairs;
  x = (int32_t)((uint32_t)x << (2 * pairs));
  const int32_t half_x = tn_crt_rounding_divide_by_pot(x >> 1, 1);
  const int32_t three_halves = (INT32_C(1) << 28) + (INT32_C(1) << 27);
  int32_t y = INT32_C(1) << 28; /* 1 in Q3.28 */
  for (int32_t i = 0; i < 5; i++) {
    /* y^3 in Q9.22, back to Q3.28; both products in Q6.25 */
    const int32_t y3 = tn__crt_saturating_mul_pot(
        tn_crt_srdhm(tn_crt_srdhm(y, y), y), 6);
    const uint32_t d = (uint32_t)tn_crt_srdhm(three_halves, y) -
                       (uint32_t)tn_crt_srdhm(half_x, y3);
    y = tn__crt_saturating_mul_pot((int32_t)d, 3);
  }
  y = tn_crt_srdhm(y, 1518500250); /* sqrt(2)/2 in Q0.31 */
  if (s < 0) {
    y = (int32_t)((uint32_t)y << -s);
    s = 0;
  }
  *mult = y, *shift = -s;
}

TnCrtStatus tn_crt_l2_normalize_s8(int32_t outer, int32_t n,
                                   int32_t input_zero_point, const int8_t *in,
                                   int8_t *out) {
  TnCrtStatus st = check_rows(outer, n, in, out);
  if (st != TN_CRT_OK) return st;
  for (int32_t i = 0; i < outer; i++, in += n, out += n) {
    uint32_t acc = 0; /* wraps, as TFLite's int32 sum would */
    for (int32_t c = 0; c < n; c++) {
      const int32_t d = (int32_t)in[c] - input_zero_point;
      acc += (uint32_t)(d * d);
    }
    int32_t mult, shift;
    inv_sqrt((int32_t)acc, &mult, &shift);
    for (int32_t c = 0; c < n; c++) {
      /* 7 more bits of left shift: the output's scale is 1/128 */
      int32_t v = tn_crt_multiply_by_quantized_multiplier(
          (int32_t)in[c] - input_zero_point, mult, shift + 7);
      out[c] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
  }
  return TN_CRT_OK;
}

/* ---- log-softmax ---------------------------------------------------------------------- */

TnCrtStatus tn_crt_log_softmax_f32(int32_t outer, int32_t n, const float *in,
                                   float *out) {
  TnCrtStatus st = check_rows(outer, n, in, out);
  if (st != TN_CRT_OK) return st;
  for (int32_t i = 0; i < outer; i++, in += n, out += n) {
    float m = in[0];
    for (int32_t c = 1; c < n; c++) m = in[c] > m ? in[c] : m;
    float sum = 0.0f;
    for (int32_t c = 0; c < n; c++) sum += expf(in[c] - m);
    const float log_sum = (float)log((double)sum);
    for (int32_t c = 0; c < n; c++) out[c] = in[c] - m - log_sum;
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(l2_normalize_f32, TnCrtCallRowsF32) {
  return tn_crt_l2_normalize_f32(p->outer, p->n, p->eps, in[0], out);
}
TN_CRT_CALL(l2_normalize_s8, TnCrtCallRowsS8) {
  return tn_crt_l2_normalize_s8(p->outer, p->n, p->input_zero_point, in[0],
                                out);
}
TN_CRT_CALL(log_softmax_f32, TnCrtCallRowsF32) {
  return tn_crt_log_softmax_f32(p->outer, p->n, in[0], out);
}
