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
 * fixed output quantization 1/128, 0. The int8 log-softmax is TFLite's
 * LogSoftmaxQuantized: the max-subtracted differences rescaled into Q5.26
 * (the multiplier and diff_min of the int8 softmax), their gemmlowp exps
 * summed in Q12.19, the log of the sum by TFLite's fixed-point
 * log_x_for_x_greater_than_or_equal_to_1 (into Q5.26), and each
 * difference less that log brought to the fixed output 16/256, 127.
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

/* gemmlowp's raw FixedPoint add and subtract (wrapping), its saturating
 * add and subtract (TFLite's SaturatingAddNonGemmlowp / SaturatingSub), and
 * RoundingHalfSum. */
static int32_t wadd(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static int32_t wsub(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}
static int32_t sat(int64_t v) {
  return (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}
static int32_t half_sum(int32_t a, int32_t b) {
  int64_t s = (int64_t)a + (int64_t)b;
  return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

/* log(x) for x >= 1 given in Q12.19, into Q5.26: TFLite's
 * log_x_for_x_greater_than_or_equal_to_1<5>(FixedPoint<int32_t, 12>), a
 * normalisation to [sqrt(1/2), 1) by a power of two (tried two ways,
 * keeping the better) and a rational approximation of the rest, summed in
 * Q6.25. */
static int32_t log_q12_to_q5(int32_t x) {
  enum { IN_BITS = 12, OUT_BITS = 5, ACC_BITS = 6 };
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301,
                sqrt_half = 1518500250, one_quarter = 536870912;
  const int32_t alpha_n = 117049297, alpha_d = 127690142,
                alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t shifted_quarter = tn__crt_saturating_mul_pot(one_quarter,
                                                             -ACC_BITS);
  const int32_t za_headroom_plus_1 = leading_zeros((uint32_t)x);
  const int32_t ra_tmp = tn__crt_saturating_mul_pot(x, za_headroom_plus_1 - 1);
  const int32_t ra = tn__crt_saturating_mul_pot(tn_crt_srdhm(ra_tmp, sqrt_half),
                                                1);
  const int32_t za_pow2 = sat(
      (int64_t)tn__crt_saturating_mul_pot(IN_BITS - za_headroom_plus_1,
                                          31 - ACC_BITS) +
      shifted_quarter);
  const int32_t zb = tn_crt_srdhm(x, sqrt_half);
  const int32_t zb_headroom = leading_zeros((uint32_t)zb) - 1;
  const int32_t rb = tn__crt_saturating_mul_pot(x, zb_headroom);
  const int32_t zb_pow2 = sat(
      (int64_t)tn__crt_saturating_mul_pot(IN_BITS - zb_headroom,
                                          31 - ACC_BITS) -
      shifted_quarter);
  const int32_t r = ra < rb ? ra : rb;
  const int32_t z_pow2 = za_pow2 > zb_pow2 ? za_pow2 : zb_pow2;
  const int32_t p = half_sum(r, sqrt_sqrt_half);
  int32_t q = wsub(r, sqrt_sqrt_half);
  q = wadd(q, q);
  const int32_t sq = tn_crt_srdhm(q, q);
  const int32_t num = wadd(tn_crt_srdhm(q, r),
                           tn_crt_srdhm(tn_crt_srdhm(q, sq), alpha_n));
  const int32_t denom_minus_one = wadd(
      tn_crt_srdhm(p, wadd(wadd(alpha_i, q), tn_crt_srdhm(alpha_d, sq))),
      tn_crt_srdhm(alpha_f, q));
  const int32_t recip = tn__crt_one_over_one_plus_x(denom_minus_one);
  const int32_t num_scaled = tn__crt_saturating_mul_pot(num, -ACC_BITS);
  return tn__crt_saturating_mul_pot(
      wadd(tn_crt_srdhm(z_pow2, log_2), tn_crt_srdhm(num_scaled, recip)),
      ACC_BITS - OUT_BITS);
}

TnCrtStatus tn_crt_log_softmax_s8_params(double input_scale,
                                         TnCrtLogSoftmaxS8 *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  TnCrtSoftmaxS8 s;
  TnCrtStatus st = tn_crt_softmax_s8_params(1.0, input_scale, &s);
  if (st != TN_CRT_OK) return st;
  /* TFLite's PreprocessLogSoftmaxScalingExp: the inverse of the input
   * scaling, 2^(31 - left_shift) / multiplier, as a multiplier below one */
  const double reverse = (double)(INT64_C(1) << (31 - s.input_left_shift)) /
                         (double)s.input_multiplier;
  int32_t m, shift;
  st = tn_crt_quantize_multiplier(reverse, &m, &shift);
  if (st != TN_CRT_OK) return st;
  if (shift > 0) return TN_CRT_UNSUPPORTED;
  out->input_multiplier = s.input_multiplier;
  out->input_left_shift = s.input_left_shift;
  out->diff_min = s.diff_min;
  out->reverse_multiplier = m;
  out->reverse_shift = shift;
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_log_softmax_s8(const TnCrtLogSoftmaxS8 *p, int32_t outer,
                                  int32_t n, const int8_t *in, int8_t *out) {
  if (p == NULL) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check_rows(outer, n, in, out);
  if (st != TN_CRT_OK) return st;
  for (int32_t i = 0; i < outer; i++, in += n, out += n) {
    int32_t m = -128;
    for (int32_t c = 0; c < n; c++) m = in[c] > m ? in[c] : m;
    int32_t sum = 0; /* Q12.19 */
    for (int32_t c = 0; c < n; c++) {
      const int32_t diff = (int32_t)in[c] - m;
      if (diff < p->diff_min) continue;
      const int32_t d5 = tn_crt_multiply_by_quantized_multiplier(
          diff, p->input_multiplier, p->input_left_shift);
      sum = wadd(sum, tn__crt_saturating_mul_pot(
                          tn__crt_exp_on_negative_values(d5, 5), -12));
    }
    const int32_t log_sum = log_q12_to_q5(sum);
    const int32_t floor_diff = tn_crt_multiply_by_quantized_multiplier(
        wadd(log_sum, INT32_MIN), p->reverse_multiplier, p->reverse_shift);
    const int32_t lowest =
        p->diff_min - 1 > floor_diff ? p->diff_min - 1 : floor_diff;
    for (int32_t c = 0; c < n; c++) {
      const int32_t diff = (int32_t)in[c] - m;
      if (diff <= lowest) {
        out[c] = -128;
        continue;
      }
      const int32_t d5 = tn_crt_multiply_by_quantized_multiplier(
          diff, p->input_multiplier, p->input_left_shift);
      /* Q5.26 to the output's 16/256 (Q4.4 less 127) */
      int32_t v = tn_crt_rounding_divide_by_pot(wsub(d5, log_sum), 22) + 127;
      out[c] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
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
TN_CRT_CALL(log_softmax_s8, TnCrtCallLogSoftmaxS8) {
  return tn_crt_log_softmax_s8(&p->s, p->outer, p->n, in[0], out);
}
