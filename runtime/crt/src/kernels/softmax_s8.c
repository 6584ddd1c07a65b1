/*
 * softmax_s8.c: int8 softmax, TFLite Micro's int8-in/int8-out reference path
 * (reference/softmax.h, with the parameters of softmax_common.cc), bit for
 * bit. The host turns beta times the input scale into a Q31 multiplier and
 * a left shift that put a max-subtracted input difference into Q5.26
 * (PreprocessSoftmaxScaling with 5 integer bits), and the most negative
 * difference that still matters (CalculateInputRadius); the device computes
 * gemmlowp's fixed-point exp of each difference, sums them in Q12.19,
 * takes gemmlowp's reciprocal of the sum and scales each exp by it to the
 * fixed output quantization, 1/256 with zero point -128. Like TFLite, each
 * exp is computed twice (for the sum, then for the output): keeping them
 * would need a buffer of n words the API does not have. The rows' loop is
 * inlined into the int8 and the int16 entries, so that a firmware calling
 * one links none of the other's branches.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "fixed_point.h"

/* TFLite's kScaledDiffIntegerBits and kAccumulationIntegerBits. */
enum { DIFF_INTEGER_BITS = 5, ACCUM_INTEGER_BITS = 12 };

TnCrtStatus tn_crt_softmax_s8_params(double beta, double input_scale,
                                     TnCrtSoftmaxS8 *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (!(beta > 0.0) || beta - beta != 0.0 || !(input_scale > 0.0) ||
      input_scale - input_scale != 0.0)
    return TN_CRT_INVALID_ARGUMENT;
  /* TFLite holds beta and the scale as float and widens both to double. */
  const float b = (float)beta, s = (float)input_scale;
  if (!(b > 0.0f) || !(s > 0.0f)) return TN_CRT_INVALID_ARGUMENT;
  /* PreprocessSoftmaxScaling: beta * scale * 2^(31 - 5), capped at
   * 2^31 - 1 (a larger one only makes every non-maximal exp round to 0),
   * then QuantizeMultiplierGreaterThanOne, which insists on more than 1. */
  double real = (double)b * (double)s * (double)(1 << (31 - DIFF_INTEGER_BITS));
  if (real > 2147483647.0) real = 2147483647.0;
  if (!(real > 1.0)) return TN_CRT_UNSUPPORTED;
  int32_t m, shift;
  TnCrtStatus st = tn_crt_quantize_multiplier(real, &m, &shift);
  if (st != TN_CRT_OK) return st;
  /* CalculateInputRadius(5, shift): the largest difference whose rescaled
   * value still fits Q5.26, floored, so that the left shift cannot
   * overflow; smaller differences are left out of the sum. */
  const double radius = floor(
      (double)((1 << DIFF_INTEGER_BITS) - 1) *
      (double)(INT64_C(1) << (31 - DIFF_INTEGER_BITS)) /
      (double)(INT64_C(1) << shift));
  out->input_multiplier = m;
  out->input_left_shift = shift;
  out->diff_min = -(int32_t)radius;
  return TN_CRT_OK;
}

/* TFLite's GetReciprocal: x (with `integer_bits` integer bits) is
 * normalised to 1 + f with f in [0, 1), whose reciprocal gemmlowp computes;
 * *bits_over_unit says how far x was shifted. */
static int32_t reciprocal(int32_t x, int32_t integer_bits,
                          int32_t *bits_over_unit) {
  int32_t headroom_plus_one = 0;
  uint32_t u = (uint32_t)x;
  while (headroom_plus_one < 32 && !(u & 0x80000000u)) {
    u <<= 1;
    headroom_plus_one++;
  }
  *bits_over_unit = integer_bits - headroom_plus_one;
  return tn__crt_one_over_one_plus_x((int32_t)(u - 0x80000000u));
}

/* The exp of one input difference (<= 0, >= diff_min) in Q0.31: the
 * difference rescaled into Q5.26 with MultiplyByQuantizedMultiplier-
 * GreaterThanOne (left shift, then the high multiply). */
static int32_t diff_exp(const TnCrtSoftmaxS8 *p, int32_t diff) {
  const int32_t scaled = tn_crt_srdhm(
      (int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
  return tn__crt_exp_on_negative_values(scaled, DIFF_INTEGER_BITS);
}

/* The rows of [outer, n] into int8 (out8, 1/256 with zero point -128) or
 * int16 (out16, 1/65536 with zero point -32768): the same fixed-point
 * algorithm, the output's width only setting the final shift and offset. */
static inline __attribute__((always_inline)) TnCrtStatus
softmax_rows(const TnCrtSoftmaxS8 *p, int32_t outer, int32_t n,
             const int8_t *in, int8_t *out8, int16_t *out16) {
  if (p == NULL || in == NULL || (out8 == NULL && out16 == NULL) ||
      outer <= 0 || n <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->input_left_shift < 0 || p->input_left_shift > 31)
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t diff_min = p->diff_min;
  const int32_t bits = out16 != NULL ? 16 : 8;
  const int32_t lo = out16 != NULL ? -32768 : -128;
  const int32_t hi = out16 != NULL ? 32767 : 127;
  for (int32_t row = 0; row < outer; row++) {
    const int8_t *x = in + (size_t)row * n;
    int32_t max = -128;
    for (int32_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;

    /* Sum in Q12.19 (each exp rounded from Q0.31). TFLite's sum would
     * overflow past 4096 and its int8 exponent check below aborts from 512
     * on; saturating keeps the result right: such rows are all -128. */
    int32_t sum = 0;
    for (int32_t i = 0; i < n; i++) {
      const int32_t diff = x[i] - max;
      if (diff < diff_min) continue;
      const int32_t e =
          tn_crt_rounding_divide_by_pot(diff_exp(p, diff), ACCUM_INTEGER_BITS);
      sum = sum > INT32_MAX - e ? INT32_MAX : sum + e;
    }

    int32_t bits_over_unit;
    const int32_t inv = reciprocal(sum, ACCUM_INTEGER_BITS, &bits_over_unit);
    /* Output in units of 2^-bits: exp * (1/sum) is Q0.31 with the sum's
     * normalisation undone by the shift. TFLite checks the exponent is at
     * most 31; beyond it every output rounds to 0. */
    const int32_t exponent = bits_over_unit + 31 - bits;
    for (int32_t i = 0; i < n; i++) {
      const int32_t diff = x[i] - max;
      int32_t v = lo;
      if (diff >= diff_min) {
        const int32_t unsat = tn_crt_rounding_divide_by_pot(
            tn_crt_srdhm(inv, diff_exp(p, diff)), exponent);
        v = unsat + lo;
        v = v > hi ? hi : v < lo ? lo : v;
      }
      if (out16 != NULL)
        out16[(size_t)row * n + i] = (int16_t)v;
      else
        out8[(size_t)row * n + i] = (int8_t)v;
    }
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_softmax_s8(const TnCrtSoftmaxS8 *p, int32_t outer,
                              int32_t n, const int8_t *in, int8_t *out) {
  return softmax_rows(p, outer, n, in, out, NULL);
}

TnCrtStatus tn_crt_softmax_s8_s16(const TnCrtSoftmaxS8 *p, int32_t outer,
                                  int32_t n, const int8_t *in, int16_t *out) {
  return softmax_rows(p, outer, n, in, NULL, out);
}

/* ---- the uniform entry (tvmnode/crt/calls.h) ------------------------------ */

TN_CRT_CALL(softmax_s8, TnCrtCallSoftmaxS8) {
  return tn_crt_softmax_s8(&p->s, p->outer, p->n, in[0], out);
}

TN_CRT_CALL(softmax_s8_s16, TnCrtCallSoftmaxS8) {
  return tn_crt_softmax_s8_s16(&p->s, p->outer, p->n, in[0], out);
}
