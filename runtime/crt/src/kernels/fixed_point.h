/*
 * fixed_point.h: the int8 kernels' shared arithmetic. gemmlowp's
 * fixed-point functions, as TFLite's int8 softmax, logistic and tanh use
 * them (defined in fixed_point.c; used by softmax_s8.c and by quant.c,
 * which fills the logistic/tanh tables). The Cortex-M DSP extension's
 * operations that the ISA forms are written with are arm_dsp/dsp.h's.
 * Private to runtime/crt.
 *
 * `a` is a raw fixed-point value with `integer_bits` integer bits
 * (gemmlowp's FixedPoint<int32_t, integer_bits>); results are Q0.31.
 */
#ifndef TVMNODE_CRT_FIXED_POINT_H_
#define TVMNODE_CRT_FIXED_POINT_H_

#include <stdint.h>

int32_t tn__crt_exp_on_negative_values(int32_t a, int32_t integer_bits);
int32_t tn__crt_one_over_one_plus_x(int32_t a);
int32_t tn__crt_logistic(int32_t a, int32_t integer_bits);
int32_t tn__crt_tanh(int32_t a, int32_t integer_bits);
/* gemmlowp's SaturatingRoundingMultiplyByPOT: x * 2^exponent, saturated
 * (a left shift) or rounded half away from zero (a right shift). */
int32_t tn__crt_saturating_mul_pot(int32_t x, int32_t exponent);
/* TFLite's int16 logistic and tanh (integer_ops/logistic.h, tanh.h) of
 * one value to Q0.15: x on the table's scale as (x * mul + 2^(shift - 1))
 * >> shift (mul 0: x * (3 << shift), TFLite's power-of-two case), then
 * its 256-entry sigmoid table interpolated. */
int16_t tn__crt_logistic_s16(int16_t x, int32_t mul, int32_t shift);
int16_t tn__crt_tanh_s16(int16_t x, int32_t mul, int32_t shift);

/* TFLite's MultiplyByQuantizedMultiplier for an int64 x (the 16x8 layers'
 * accumulators; requantize_int and the fused 16x8 layers). */
int32_t tn__crt_mbqm64(int64_t x, int32_t m, int32_t shift);

/* ONNX Runtime's requantization of an int32 accumulator: the float product
 * acc * scale, clamped to [lo - zp, hi - zp], rounded to nearest with ties
 * to even, plus zp. The clamp comes first, so the rounding sees |v| < 2^23
 * and needs no libm. */
static inline int32_t tn__crt_requant_float(int32_t acc, float scale,
                                            int32_t zp, int32_t lo,
                                            int32_t hi) {
  float v = (float)acc * scale;
  const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
  v = v < flo ? flo : v > fhi ? fhi : v;
  int32_t t = (int32_t)v; /* toward zero */
  const float f = v - (float)t; /* exact: |f| < 1 */
  if (f > 0.5f || (f == 0.5f && (t & 1))) t++;
  else if (f < -0.5f || (f == -0.5f && (t & 1))) t--;
  return t + zp;
}

/* Which ISA forms are compiled in (TN_CRT_HAVE_*; TN__CRT_AVX2 and
 * TN__CRT_DSP, their older names, too). */
#include "isa.h"

#endif /* TVMNODE_CRT_FIXED_POINT_H_ */
