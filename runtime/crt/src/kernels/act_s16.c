/*
 * act_s16.c: the int16 activations of TFLite's 16x8 mode, bit for bit with
 * TFLite Micro's reference kernels.
 *
 * LOGISTIC and TANH (integer_ops/logistic.h and tanh.h, int16): the input
 * is first brought to a fixed scale of 1/(3 * 4096) per step (the host
 * chooses the multiplier and shift, TnCrtActS16); its magnitude then
 * indexes TFLite's 256-entry table of the sigmoid on [0, 32/3), linearly
 * interpolated on the low bits, and the sign folds the result around 1/2
 * (logistic) or 0 (tanh, as 2 * sigmoid(2x) - 1). The output is Q0.15;
 * the element functions are fixed_point.c's, which the LSTM shares.
 *
 * SOFTMAX with int16 input (reference/softmax.h, SoftmaxInt16): each
 * difference from the row's maximum is rescaled so that [-65535, 0] spans
 * [-10, 0], looked up in a 513-entry exp table with interpolation, summed,
 * and the reciprocal of the normalised sum read from a second table of
 * 1 / (1 + x); both tables are built on the host as TFLite builds them at
 * prepare (lower_s16act.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "fixed_point.h"

/* x / 2^s rounded toward -infinity (an arithmetic right shift, spelled so
 * that a negative x is defined C). */
static int32_t floor_shift(int32_t x, int32_t s) {
  return x >= 0 ? x >> s : -(int32_t)((~(uint32_t)x) >> s) - 1;
}

/* Each element through fixed_point.c's logistic or (tanh_) tanh; chosen
 * per element, not through a function pointer, which would need a GOT
 * entry in position-independent code. */
static TnCrtStatus act_s16(const TnCrtActS16 *p, int32_t n, const int16_t *in,
                           int16_t *out, int tanh_) {
  if (p == NULL || in == NULL || out == NULL || n < 0 ||
      p->input_multiplier <= 0 || p->input_multiplier > 32767 ||
      p->input_left_shift < 0 || p->input_left_shift > 31)
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t m = p->input_multiplier, s = p->input_left_shift;
  for (int32_t i = 0; i < n; i++)
    out[i] = tanh_ ? tn__crt_tanh_s16(in[i], m, s)
                   : tn__crt_logistic_s16(in[i], m, s);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_logistic_s16(const TnCrtActS16 *p, int32_t n,
                                const int16_t *in, int16_t *out) {
  return act_s16(p, n, in, out, 0);
}

TnCrtStatus tn_crt_tanh_s16(const TnCrtActS16 *p, int32_t n,
                            const int16_t *in, int16_t *out) {
  return act_s16(p, n, in, out, 1);
}

/* TFLite's int16 table lookup: 512 segments of 128 input steps, each
 * linearly interpolated between its two ends, rounded. */
static int16_t lut16(const int16_t *lut, int32_t v) {
  const int32_t u = v + 32768; /* in [0, 65535] */
  const int32_t index = u >> 7, offset = u & 0x7F;
  const int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
  return (int16_t)(lut[index] + floor_shift(slope * offset + 64, 7));
}

static int32_t sat16(int32_t x) {
  return x < -32768 ? -32768 : x > 32767 ? 32767 : x;
}

/* Leading zero bits of a nonzero x. */
static int32_t clz32(uint32_t x) {
  int32_t z = 0;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    z++;
  }
  return z;
}

TnCrtStatus tn_crt_softmax_s16(const TnCrtSoftmaxS16 *p,
                               const int16_t *in, int16_t *out) {
  if (p == NULL || in == NULL || out == NULL || p->outer < 0 || p->n <= 0 ||
      p->n > 65536 || p->input_multiplier < 0 || p->input_left_shift > 31 ||
      p->input_left_shift < -31)
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t n = p->n;
  for (int32_t row = 0; row < p->outer; row++) {
    const int16_t *x = in + (size_t)row * n;
    int16_t *y = out + (size_t)row * n;
    int32_t max = -32768;
    for (int32_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    /* the exps, Q0.15, kept in the output until the sum is known; the
     * sum (at most 65536 of them) fits 31 bits */
    uint32_t sum = 0;
    for (int32_t i = 0; i < n; i++) {
      const int32_t scaled = tn_crt_multiply_by_quantized_multiplier(
          x[i] - max, p->input_multiplier, p->input_left_shift);
      const int16_t e = lut16(p->exp_lut, sat16(scaled + 32767));
      y[i] = e;
      sum += (uint32_t)(int32_t)e;
    }
    if (sum == 0 || sum > 0x7FFFFFFFu) return TN_CRT_INVALID_ARGUMENT;
    /* the sum normalised to [1, 2) in Q1.16 (rounded from its top bits),
     * then 1 / sum = 1 / (1 + (sum - 1)), the table's argument recentred
     * from [0, 65535] to the int16 range */
    const int32_t headroom = clz32(sum); /* at least 1 */
    const int32_t shifted = (int32_t)(
        ((int64_t)sum * ((int64_t)1 << (headroom - 1)) + (1 << 13)) >> 14);
    const int16_t recip =
        lut16(p->recip_lut, sat16(shifted - ((1 << 15) + (1 << 16))));
    const int32_t right = 31 - headroom;
    const int64_t half = right > 0 ? (int64_t)1 << (right - 1) : 0;
    for (int32_t i = 0; i < n; i++) {
      const int64_t r = ((int64_t)y[i] * recip + half) >> right;
      y[i] = (int16_t)(r < 0 ? 0 : r > 32767 ? 32767 : r);
    }
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ----------------------------- */

TN_CRT_CALL(sigmoid_s16, TnCrtActS16) {
  return tn_crt_logistic_s16(p, p->n, in[0], out);
}

TN_CRT_CALL(tanh_s16, TnCrtActS16) {
  return tn_crt_tanh_s16(p, p->n, in[0], out);
}

TN_CRT_CALL(softmax_s16, TnCrtSoftmaxS16) {
  return tn_crt_softmax_s16(p, in[0], out);
}
