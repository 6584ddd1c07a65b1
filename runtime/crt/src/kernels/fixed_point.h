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

/* Which ISA forms are compiled in (TN_CRT_HAVE_*; TN__CRT_AVX2 and
 * TN__CRT_DSP, their older names, too). */
#include "isa.h"

#endif /* TVMNODE_CRT_FIXED_POINT_H_ */
