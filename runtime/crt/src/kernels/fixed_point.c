/*
 * fixed_point.c: the fixed-point arithmetic every int8 kernel is built on,
 * reproducing TensorFlow Lite's (tensorflow/lite/kernels/internal/
 * quantization_util.cc and common.cc, and gemmlowp's fixedpoint.h, which
 * TFLite Micro uses) in the default "double rounding" configuration
 * (TFLITE_SINGLE_ROUNDING unset). A real multiplier is turned once, on the
 * host, into a Q31 integer and a power-of-two shift; the device then only
 * multiplies with a saturating rounding doubling high multiply and shifts
 * right with rounding. The second half is gemmlowp's fixed-point exp,
 * 1/(1+x), logistic and tanh, which TFLite's int8 softmax, logistic and tanh
 * run; gemmlowp writes them as templates over the number of integer bits,
 * here that number is a run-time argument. Bit exactness with TFLite is the
 * whole point, so each function follows TFLite's formulation step by step,
 * including its corner cases; only what TFLite leaves to C++ undefined
 * behaviour (signed overflow, shifts of 32 bits or more) is pinned down
 * here, to what two's-complement hardware does in practice.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "fixed_point.h"

/* An arithmetic right shift written so that it does not depend on the
 * implementation-defined meaning of >> on negative values (every compiler
 * turns it into one arithmetic shift instruction). */
static int32_t asr(int32_t x, int32_t n) {
  return x < 0 ? ~(~x >> n) : x >> n;
}

TnCrtStatus tn_crt_quantize_multiplier(double m, int32_t *multiplier,
                                       int32_t *shift) {
  if (multiplier == NULL || shift == NULL) return TN_CRT_INVALID_ARGUMENT;
  /* Negative, NaN and infinite multipliers have no meaning as a scale
   * ratio (m - m is NaN only for infinities). */
  if (!(m >= 0.0) || m - m != 0.0) return TN_CRT_INVALID_ARGUMENT;
  if (m == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return TN_CRT_OK;
  }
  /* TFLite: q in [0.5, 1) from frexp, q * 2^31 rounded half away from zero
   * (std::round); rounding can reach 2^31 exactly, which does not fit, so
   * it becomes 2^30 with the exponent one higher. */
  int e = 0;
  double q = frexp(m, &e);
  int64_t q_fixed = (int64_t)round(q * 2147483648.0);
  if (q_fixed == INT64_C(2147483648)) {
    q_fixed /= 2;
    e++;
  }
  /* Shifts below -31 would shift every bit out: TFLite flushes those tiny
   * multipliers to zero rather than produce a shift the device cannot do. */
  if (e < -31) {
    e = 0;
    q_fixed = 0;
  }
  /* TFLite (double rounding) keeps larger exponents, but m >= 2^31 scales
   * every non-zero int32 out of range, and MultiplyByQuantizedMultiplier's
   * left shift by more than 31 is undefined there: refuse. */
  if (e > 31) return TN_CRT_UNSUPPORTED;
  *multiplier = (int32_t)q_fixed;
  *shift = (int32_t)e;
  return TN_CRT_OK;
}

int32_t tn_crt_srdhm(int32_t a, int32_t b) {
  /* gemmlowp's SaturatingRoundingDoublingHighMul (ARM's VQRDMULH): the one
   * product that does not fit, INT32_MIN squared, saturates; otherwise the
   * 64-bit product is nudged by 2^30 (by 1 - 2^30 when negative) and
   * divided by 2^31 truncating toward zero, which rounds to nearest with
   * ties upward: 0.5 becomes 1 but -0.5 becomes 0. */
  if (a == b && a == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (1 - (INT64_C(1) << 30));
  return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

int32_t tn_crt_rounding_divide_by_pot(int32_t x, int32_t exponent) {
  /* gemmlowp's RoundingDivideByPOT, in its mask/threshold form: add one to
   * the floor when the discarded bits exceed half (or, for negative x, at
   * least half), which rounds ties away from zero. TFLite asserts the
   * exponent is in [0, 31]; outside it, 0 keeps x and above 31 everything
   * is shifted out. */
  if (exponent <= 0) return x;
  if (exponent > 31) return 0;
  int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return asr(x, exponent) + (remainder > threshold ? 1 : 0);
}

int32_t tn_crt_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                int32_t shift) {
  /* TFLite's double-rounding MultiplyByQuantizedMultiplier: a positive
   * shift is applied to x before the high multiply (TFLite's x * (1 <<
   * shift), which wraps on overflow in practice; done here in unsigned
   * arithmetic, where wrapping is defined), a negative one as a rounding
   * right shift after it. */
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift > 0 ? 0 : -shift;
  uint32_t shifted = left > 31 ? 0u : (uint32_t)x << left;
  return tn_crt_rounding_divide_by_pot(tn_crt_srdhm((int32_t)shifted,
                                                    multiplier),
                                       right);
}

/* ------------------------------------------------------------------------ */
/* gemmlowp's fixed-point transcendental functions                          */
/* ------------------------------------------------------------------------ */

/* gemmlowp's Add/Sub/Neg on raw values: plain int32 arithmetic whose
 * overflow gemmlowp leaves undefined; wrapping, as the hardware does. */
static int32_t wadd(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static int32_t wsub(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT<e>: a left shift saturating
 * against +-(2^(31-e) - 1) (its thresholds, so -2^31 itself is reached only
 * by saturation), or a rounding right shift. */
static int32_t sat_mul_pot(int32_t x, int32_t e) {
  if (e == 0) return x;
  if (e < 0) return tn_crt_rounding_divide_by_pot(x, -e);
  int32_t threshold = (int32_t)((INT64_C(1) << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* gemmlowp's RoundingHalfSum: (a + b) / 2 rounded away from zero. */
static int32_t rounding_half_sum(int32_t a, int32_t b) {
  int64_t sum = (int64_t)a + (int64_t)b;
  return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out: gemmlowp's Taylor expansion
 * around -1/8, with its constants exp(-1/8) and 1/3 in Q0.31. */
static int32_t exp_on_interval(int32_t a) {
  const int32_t exp_minus_one_eighth = 1895147668;
  const int32_t one_third = 715827883;
  int32_t x = wadd(a, INT32_C(1) << 28);
  int32_t x2 = tn_crt_srdhm(x, x);
  int32_t x3 = tn_crt_srdhm(x2, x);
  int32_t x4 = tn_crt_srdhm(x2, x2);
  int32_t x4_over_4 = tn_crt_rounding_divide_by_pot(x4, 2);
  int32_t poly = tn_crt_rounding_divide_by_pot(
      wadd(tn_crt_srdhm(wadd(x4_over_4, x3), one_third), x2), 1);
  return wadd(exp_minus_one_eighth,
              tn_crt_srdhm(exp_minus_one_eighth, wadd(x, poly)));
}

int32_t tn__crt_exp_on_negative_values(int32_t a, int32_t integer_bits) {
  /* exp(-2^k) in Q0.31 for k = -2 .. 4, gemmlowp's barrel-shifter table. */
  static const int32_t exp_neg_pot[7] = {1672461947, 1302514674, 790015084,
                                         290630308,  39332535,   720401,
                                         242};
  const int32_t frac_bits = 31 - integer_bits;
  const int32_t quarter = INT32_C(1) << (frac_bits - 2);
  /* Split a into a multiple of 1/4 and a remainder in [-1/4, 0): exp of
   * the remainder by the polynomial, then one multiply by exp(-2^k) for
   * each bit k set in the multiple (only the bits the format can hold). */
  int32_t a_mod = wsub(a & (quarter - 1), quarter);
  int32_t result = exp_on_interval(sat_mul_pot(a_mod, integer_bits));
  int32_t remainder = wsub(a_mod, a);
  for (int32_t k = -2; k <= 4; k++) {
    if (integer_bits > k && (remainder & (INT32_C(1) << (frac_bits + k))))
      result = tn_crt_srdhm(result, exp_neg_pot[k + 2]);
  }
  /* Formats that can hold values below -32 flush those to zero. */
  if (integer_bits > 5 && a < -(INT32_C(1) << (36 - integer_bits))) result = 0;
  return a == 0 ? INT32_MAX : result;
}

/* Newton-Raphson on 1/(1 + x) for x in (0, 1), gemmlowp's: the reciprocal
 * of the half denominator in Q2.29, starting from 48/17 - 32/17 * d, three
 * iterations. Returns the Q2.29 estimate of 1 / half_denominator. */
static int32_t reciprocal_q2(int32_t half_denominator) {
  const int32_t c48_over_17 = 1515870810;
  const int32_t c_neg32_over_17 = -1010580540;
  const int32_t one_q2 = INT32_C(1) << 29;
  int32_t x = wadd(c48_over_17, tn_crt_srdhm(half_denominator,
                                             c_neg32_over_17));
  for (int i = 0; i < 3; i++) {
    int32_t hd_x = tn_crt_srdhm(half_denominator, x);
    int32_t one_minus_hd_x = wsub(one_q2, hd_x);
    x = wadd(x, sat_mul_pot(tn_crt_srdhm(x, one_minus_hd_x), 2));
  }
  return x;
}

int32_t tn__crt_one_over_one_plus_x(int32_t a) {
  /* 1/(1+a) = (1/half_denominator) / 2: Q2 halved is Q1, rescaled to Q0. */
  return sat_mul_pot(reciprocal_q2(rounding_half_sum(a, INT32_MAX)), 1);
}

/* (1 - a) / (1 + a) for a in (0, 1): 2/(1+a) - 1, from Q2 to Q0. */
static int32_t one_minus_x_over_one_plus_x(int32_t a) {
  int32_t x = reciprocal_q2(rounding_half_sum(a, INT32_MAX));
  return sat_mul_pot(wsub(x, INT32_C(1) << 29), 2);
}

int32_t tn__crt_logistic(int32_t a, int32_t integer_bits) {
  /* gemmlowp's logistic: 1/(1 + exp(-|a|)) for |a|, reflected for negative
   * a as 1 - that, and exactly 1/2 at zero. */
  int32_t abs_a = a > 0 ? a : wsub(0, a);
  int32_t pos = tn__crt_one_over_one_plus_x(
      tn__crt_exp_on_negative_values(wsub(0, abs_a), integer_bits));
  if (a == 0) return INT32_C(1) << 30;
  return a > 0 ? pos : INT32_MAX - pos;
}

int32_t tn__crt_tanh(int32_t a, int32_t integer_bits) {
  /* gemmlowp's tanh: (1 - exp(-2|a|)) / (1 + exp(-2|a|)); doubling the
   * value is reading the same raw bits with one more integer bit. */
  int32_t neg_abs = a < 0 ? a : wsub(0, a);
  int32_t t = one_minus_x_over_one_plus_x(
      tn__crt_exp_on_negative_values(neg_abs, integer_bits + 1));
  if (a == 0) return 0;
  return a < 0 ? wsub(0, t) : t;
}

int32_t tn__crt_saturating_mul_pot(int32_t x, int32_t exponent) {
  return sat_mul_pot(x, exponent);
}

/* ---- TFLite's int16 logistic and tanh ------------------------------------- */

/* TFLite's sigmoid table (kernels/internal/common.h): 65536 * sigmoid(k /
 * 24) for k = 0..255 as TFLite rounds it; not a plain rounding of the
 * function (some entries differ from it by one), so the values are kept
 * as they are, the only way to match TFLite's results. */
static const uint16_t k_sigmoid_q16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841,
    39498, 40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102,
    45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464,
    50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755,
    55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007,
    58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036,
    62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968,
    64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494,
    64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337,
    65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404,
    65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479,
    65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511,
    65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520,
    65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
    65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531,
    65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65535};

/* The input on the table's scale: (x * mul + half) >> shift, rounded as
 * TFLite rounds it (mul 0: TFLite's power-of-two case, x * (3 << shift)). */
static int32_t sigmoid_input(int16_t x, int32_t mul, int32_t shift) {
  if (mul == 0) mul = 3 << shift, shift = 0;
  const int32_t half = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  return asr((int32_t)x * mul + half, shift);
}

/* The table at |v| with `bits` fraction bits per entry, interpolated on
 * them; `top` past its last interval. */
static uint32_t sigmoid_at(int32_t v, int32_t bits, uint32_t top) {
  const uint32_t mag = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
  const uint32_t k = mag >> bits;
  if (k >= 255) return top;
  const uint32_t a = k_sigmoid_q16[k], b = k_sigmoid_q16[k + 1];
  return (a << bits) + (mag & ((1u << bits) - 1u)) * (b - a);
}

int16_t tn__crt_logistic_s16(int16_t x, int32_t mul, int32_t shift) {
  const int32_t v = sigmoid_input(x, mul, shift);
  /* 9 fraction bits: 2^7 steps per table entry from the 1/(3 * 4096)
   * scale, times 4 for the 3/4 the table's 1/24 spacing adds */
  uint32_t r = sigmoid_at(v, 9, (uint32_t)0x7FFF << 10);
  /* sigmoid(-x) = 1 - sigmoid(x), each rounded to Q0.15 */
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
  return (int16_t)(int32_t)(r >> 10);
}

int16_t tn__crt_tanh_s16(int16_t x, int32_t mul, int32_t shift) {
  const int32_t v = sigmoid_input(x, mul, shift);
  /* tanh(x) = 2 * sigmoid(2x) - 1: one bit fewer of fraction */
  int32_t r = (int32_t)sigmoid_at(v, 8, (uint32_t)0xFFFF << 8);
  r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)asr(r, 8);
}

/* x >> s for s in [0, 63], rounding toward minus infinity for negative x
 * as the arithmetic shift TFLite relies on does (C leaves it to the
 * implementation). */
static int64_t asr64(int64_t x, int32_t s) {
  return x >= 0 ? x >> s : ~(~x >> s);
}

/* TFLite's MultiplyByQuantizedMultiplier for an int64 x (the 16x8 layers'
 * accumulators): the multiplier rounded to 16 bits, one rounding shift by
 * 15 - shift, the result truncated to int32. Shifts it never makes (the
 * total outside [1, 62]) saturate the total to that range. */
int32_t tn__crt_mbqm64(int64_t x, int32_t m, int32_t shift) {
  const int64_t reduced = m < 0x7FFF0000 ? ((int64_t)m + (1 << 15)) >> 16
                                         : 0x7FFF;
  int32_t total = 15 - shift;
  total = total < 1 ? 1 : total > 62 ? 62 : total;
  const int64_t v = (int64_t)((uint64_t)x * (uint64_t)reduced +
                              (UINT64_C(1) << (total - 1)));
  return (int32_t)(uint32_t)(uint64_t)asr64(v, total);
}
