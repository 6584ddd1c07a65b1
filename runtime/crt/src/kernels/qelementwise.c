/*
 * qelementwise.c: the int8 elementwise operators beyond ADD and MUL (which
 * are quant.c's): MAXIMUM and MINIMUM, SUB with broadcasting, and the
 * tables of the unary ones, LEAKY_RELU, ABS, RSQRT, HARD_SWISH and ELU.
 * Each reproduces TFLite Micro's reference kernel bit for bit
 * (maximum_minimum.cc, reference/sub.h, leaky_relu.h, elementwise.cc,
 * hard_swish.h, elu.cc) and the *_params / *_table functions what its Prepare computes from the tensors'
 * quantization, so a device sees only integers. A unary int8 operator has
 * 256 possible inputs: its table is filled on the host by running TFLM's
 * arithmetic once per value, and the device looks results up with
 * tn_crt_lut_s8 (quant.c), whatever the operator.
 */
#include <stddef.h>
#include <stdint.h>

#include "binary_walk.h"
#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

/* TFLite's int32 arithmetic on offsets, whose overflow C++ leaves
 * undefined: wrapping, as the hardware does. */
static int32_t wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int8_t sat8(int32_t v, int32_t lo, int32_t hi) {
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* A tensor's quantization as TFLite holds it: a positive finite float
 * scale and an int8 zero point. */
static int quant_ok(double scale, int32_t zp, float *s) {
  if (!(scale > 0.0) || scale - scale != 0.0) return 0;
  *s = (float)scale;
  return *s > 0.0f && *s - *s == 0.0f && zp >= -128 && zp <= 127;
}

/* ------------------------------------------------------------------------ */
/* MAXIMUM, MINIMUM                                                          */
/* ------------------------------------------------------------------------ */

/* ROW(name, EXPR): a row function computing EXPR of x = lhs, y = rhs
 * (int8, widened to int32) and q, the kernel's parameters. */
#define ROW(name, EXPR)                                                     \
  static void name(const void *p, const void *l, int32_t ls, const void *r, \
                   int32_t rs, int32_t n, void *out) {                      \
    const TnCrtQBinary *q = (const TnCrtQBinary *)p;                        \
    const int8_t *a = (const int8_t *)l, *b = (const int8_t *)r;            \
    int8_t *o = (int8_t *)out;                                              \
    (void)q;                                                                \
    for (int32_t i = 0; i < n; i++) {                                       \
      const int32_t x = a[(ptrdiff_t)i * ls], y = b[(ptrdiff_t)i * rs];     \
      o[i] = (int8_t)(EXPR);                                                \
    }                                                                       \
  }

ROW(max_row, x > y ? x : y)
ROW(min_row, x < y ? x : y)

TnCrtStatus tn_crt_minmax_s8(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                             const int8_t *lhs, const int8_t *rhs,
                             int8_t *out) {
  switch (op) {
    case TN_CRT_MAX:
      return tn__crt_binary_walk(b, 1, lhs, rhs, out, max_row, NULL);
    case TN_CRT_MIN:
      return tn__crt_binary_walk(b, 1, lhs, rhs, out, min_row, NULL);
    default: return TN_CRT_INVALID_ARGUMENT;
  }
}

/* ------------------------------------------------------------------------ */
/* SUB                                                                       */
/* ------------------------------------------------------------------------ */

/* QuantizeMultiplierSmallerThanOneExp: a multiplier below one, so with a
 * shift <= 0 (TFLite checks both). */
static TnCrtStatus below_one(double real, int32_t *m, int32_t *shift) {
  if (!(real < 1.0)) return TN_CRT_UNSUPPORTED;
  TnCrtStatus st = tn_crt_quantize_multiplier(real, m, shift);
  return st == TN_CRT_OK && *shift > 0 ? TN_CRT_UNSUPPORTED : st;
}

/* The three scales of a binary operator as floats, if they and the zero
 * points are valid and there is somewhere to put the parameters. */
static int binary_quant(double lhs_scale, int32_t lhs_zp, double rhs_scale,
                        int32_t rhs_zp, double out_scale, int32_t out_zp,
                        const TnCrtQBinary *out, float s[3]) {
  return out != NULL && quant_ok(lhs_scale, lhs_zp, &s[0]) &&
         quant_ok(rhs_scale, rhs_zp, &s[1]) && quant_ok(out_scale, out_zp, &s[2]);
}

/* The parameters of SUB or SQUARED_DIFFERENCE: the zero points, the left
 * shift, and multiplier and shift i of lhs (0), rhs (1) and output (2). */
static void fill(TnCrtQBinary *out, int32_t lhs_zp, int32_t rhs_zp,
                 int32_t out_zp, int32_t left_shift, const int32_t m[3],
                 const int32_t sh[3]) {
  const TnCrtQBinary q = {
      .lhs_offset = -lhs_zp, .rhs_offset = -rhs_zp, .output_offset = out_zp,
      .left_shift = left_shift, .lhs_multiplier = m[0], .lhs_shift = sh[0],
      .rhs_multiplier = m[1], .rhs_shift = sh[1], .output_multiplier = m[2],
      .output_shift = sh[2], .act_min = -128, .act_max = 127};
  *out = q;
}

TnCrtStatus tn_crt_qsub_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out) {
  float f[3];
  if (!binary_quant(lhs_scale, lhs_zp, rhs_scale, rhs_zp, out_scale, out_zp,
                    out, f))
    return TN_CRT_INVALID_ARGUMENT;
  const float sl = f[0], sr = f[1], so = f[2];
  /* CalculateOpDataSub for int8: ADD's scheme, but each ratio is a float
   * division widened to double afterwards; the output's (1 << 20) * s_out
   * is a float product too. */
  const int32_t left_shift = 20;
  const float twice_max = 2.0f * (sl > sr ? sl : sr);
  const double real[3] = {(double)(sl / twice_max), (double)(sr / twice_max),
                          (double)(twice_max /
                                   ((float)(1 << left_shift) * so))};
  int32_t m[3], s[3];
  TnCrtStatus st = TN_CRT_OK;
  for (int i = 0; i < 3 && st == TN_CRT_OK; i++)
    st = below_one(real[i], &m[i], &s[i]);
  if (st != TN_CRT_OK) return st;
  fill(out, lhs_zp, rhs_zp, out_zp, left_shift, m, s);
  return TN_CRT_OK;
}

/* (v + offset) << left_shift, rescaled: one operand of SUB. */
static int32_t rescaled(int32_t v, int32_t offset, int32_t left_shift,
                        int32_t m, int32_t shift) {
  const uint32_t x = (uint32_t)wrap_add(v, offset) << left_shift;
  return tn_crt_multiply_by_quantized_multiplier((int32_t)x, m, shift);
}

/* The difference of the rescaled operands (wrapping, as TFLite's int32
 * does in practice): SUB's result and SQUARED_DIFFERENCE's root. */
static uint32_t rescaled_diff(const TnCrtQBinary *p, int32_t x, int32_t y) {
  return (uint32_t)rescaled(x, p->lhs_offset, p->left_shift,
                            p->lhs_multiplier, p->lhs_shift) -
         (uint32_t)rescaled(y, p->rhs_offset, p->left_shift,
                            p->rhs_multiplier, p->rhs_shift);
}

/* reference_ops::SubElementwise for one element. */
static int8_t sub_one(const TnCrtQBinary *p, int32_t x, int32_t y) {
  const int32_t r = tn_crt_multiply_by_quantized_multiplier(
      (int32_t)rescaled_diff(p, x, y), p->output_multiplier, p->output_shift);
  return sat8(wrap_add(r, p->output_offset), p->act_min, p->act_max);
}

ROW(sub_row, sub_one(q, x, y))

/* ------------------------------------------------------------------------ */
/* SQUARED_DIFFERENCE, PRELU                                                 */
/* ------------------------------------------------------------------------ */

TnCrtStatus tn_crt_qsquared_difference_params(double lhs_scale, int32_t lhs_zp,
                                              double rhs_scale, int32_t rhs_zp,
                                              double out_scale, int32_t out_zp,
                                              TnCrtQBinary *out) {
  float f[3];
  if (!binary_quant(lhs_scale, lhs_zp, rhs_scale, rhs_zp, out_scale, out_zp,
                    out, f))
    return TN_CRT_INVALID_ARGUMENT;
  const float sl = f[0], sr = f[1], so = f[2];
  /* squared_difference.cc's PrepareQuantized: the inputs to 2 max(s) after
   * a left shift of 7 (ratios in double), the squared difference by
   * (2 max(s))^2 / (2^14 s_out), whose denominator is a float product */
  const int32_t left_shift = 7;
  const double tm = 2.0 * (double)(sl > sr ? sl : sr);
  int32_t m[3], sh[3];
  TnCrtStatus st = below_one((double)sl / tm, &m[0], &sh[0]);
  if (st == TN_CRT_OK) st = below_one((double)sr / tm, &m[1], &sh[1]);
  if (st == TN_CRT_OK)
    st = tn_crt_quantize_multiplier(
        tm * tm / (double)((float)(1 << (2 * left_shift)) * so), &m[2],
        &sh[2]);
  if (st != TN_CRT_OK) return st;
  fill(out, lhs_zp, rhs_zp, out_zp, left_shift, m, sh);
  return TN_CRT_OK;
}

static int8_t squared_difference_one(const TnCrtQBinary *p, int32_t x,
                                     int32_t y) {
  const uint32_t d = rescaled_diff(p, x, y);
  const int32_t r = tn_crt_multiply_by_quantized_multiplier(
      (int32_t)(d * d), p->output_multiplier, p->output_shift);
  return sat8(wrap_add(r, p->output_offset), p->act_min, p->act_max);
}
ROW(squared_difference_row, squared_difference_one(q, x, y))

TnCrtStatus tn_crt_qprelu_params(double in_scale, int32_t in_zp,
                                 double alpha_scale, int32_t alpha_zp,
                                 double out_scale, int32_t out_zp,
                                 TnCrtQBinary *out) {
  float f[3];
  if (!binary_quant(in_scale, in_zp, alpha_scale, alpha_zp, out_scale,
                    out_zp, out, f))
    return TN_CRT_INVALID_ARGUMENT;
  const float si = f[0], sa = f[1], so = f[2];
  /* CalculatePreluParams: s_in / s_out and s_in * s_alpha / s_out, in
   * double */
  int32_t m1, s1, m2, s2;
  TnCrtStatus st = tn_crt_quantize_multiplier((double)si / (double)so, &m1,
                                              &s1);
  if (st == TN_CRT_OK)
    st = tn_crt_quantize_multiplier((double)si * (double)sa / (double)so, &m2,
                                    &s2);
  if (st != TN_CRT_OK) return st;
  const TnCrtQBinary q = {
      .lhs_offset = -in_zp, .rhs_offset = -alpha_zp, .output_offset = out_zp,
      .lhs_multiplier = m1, .lhs_shift = s1, .rhs_multiplier = m2,
      .rhs_shift = s2, .act_min = -128, .act_max = 127};
  *out = q;
  return TN_CRT_OK;
}

static int8_t prelu_one(const TnCrtQBinary *p, int32_t x, int32_t alpha) {
  const int32_t v = x + p->lhs_offset;
  const int32_t r =
      v >= 0 ? tn_crt_multiply_by_quantized_multiplier(v, p->lhs_multiplier,
                                                       p->lhs_shift)
             : tn_crt_multiply_by_quantized_multiplier(
                   v * (alpha + p->rhs_offset), p->rhs_multiplier,
                   p->rhs_shift);
  return sat8(r + p->output_offset, p->act_min, p->act_max);
}
ROW(prelu_row, prelu_one(q, x, y))

/* The binary kernels' common checks, then the walk. */
static TnCrtStatus qbinary(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs, int8_t *out,
                           TnCrtBinaryRow row) {
  if (p == NULL || p->left_shift < 0 || p->left_shift > 30 ||
      p->act_min > p->act_max || p->act_min < -128 || p->act_max > 127)
    return TN_CRT_INVALID_ARGUMENT;
  return tn__crt_binary_walk(b, 1, lhs, rhs, out, row, p);
}

TnCrtStatus tn_crt_qsub_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs,
                           int8_t *out) {
  return qbinary(p, b, lhs, rhs, out, sub_row);
}
TnCrtStatus tn_crt_qsquared_difference_s8(const TnCrtQBinary *p,
                                          const TnCrtBroadcast *b,
                                          const int8_t *lhs,
                                          const int8_t *rhs, int8_t *out) {
  return qbinary(p, b, lhs, rhs, out, squared_difference_row);
}
TnCrtStatus tn_crt_qprelu_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                             const int8_t *data, const int8_t *alpha,
                             int8_t *out) {
  return qbinary(p, b, data, alpha, out, prelu_row);
}

/* ------------------------------------------------------------------------ */
/* The unary tables                                                          */
/* ------------------------------------------------------------------------ */

/* QuantizeMultiplier of a real multiplier of either sign: TFLite rounds
 * the fraction half away from zero, so a negative one is the positive
 * one's negation. */
static TnCrtStatus signed_multiplier(double m, int32_t *mult, int32_t *shift) {
  TnCrtStatus st = tn_crt_quantize_multiplier(m < 0 ? -m : m, mult, shift);
  if (st == TN_CRT_OK && m < 0) *mult = -*mult;
  return st;
}

/* Whether a table's input and output quantization are valid, and its
 * scales as floats. */
static int table_quant(double in_scale, int32_t in_zp, double out_scale,
                       int32_t out_zp, const TnCrtLut8 *out, float *si,
                       float *so) {
  return out != NULL && quant_ok(in_scale, in_zp, si) &&
         quant_ok(out_scale, out_zp, so);
}

TnCrtStatus tn_crt_leaky_relu_s8_table(double in_scale, int32_t in_zp,
                                       double alpha, double out_scale,
                                       int32_t out_zp, TnCrtLut8 *out) {
  float si, so;
  const float a = (float)alpha; /* TfLiteLeakyReluParams holds a float */
  if (!table_quant(in_scale, in_zp, out_scale, out_zp, out, &si, &so) ||
      a - a != 0.0f)
    return TN_CRT_INVALID_ARGUMENT;
  /* CalculateOpDataLeakyRelu: both ratios in float, then widened */
  int32_t ma, sa, mi, sh;
  TnCrtStatus st = signed_multiplier((double)(si * a / so), &ma, &sa);
  if (st == TN_CRT_OK)
    st = tn_crt_quantize_multiplier((double)(si / so), &mi, &sh);
  if (st != TN_CRT_OK) return st;
  /* QuantizeLeakyRelu multiplies by |alpha's multiplier| and negates */
  const int32_t ma_abs = ma < 0 ? -ma : ma;
  for (int32_t v = -128; v <= 127; v++) {
    const int32_t x = v - in_zp;
    int32_t y = out_zp;
    if (x >= 0) {
      y += tn_crt_multiply_by_quantized_multiplier(x, mi, sh);
    } else {
      const int32_t t = tn_crt_multiply_by_quantized_multiplier(x, ma_abs, sa);
      y += ma < 0 ? -t : t;
    }
    out->table[(uint8_t)(int8_t)v] = sat8(y, -128, 127);
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_abs_s8_table(double in_scale, int32_t in_zp,
                                double out_scale, int32_t out_zp,
                                TnCrtLut8 *out) {
  float si, so;
  if (!table_quant(in_scale, in_zp, out_scale, out_zp, out, &si, &so))
    return TN_CRT_INVALID_ARGUMENT;
  /* PrepareAbsRsqrt: a rescale only where the float scales differ */
  const int rescale = si != so;
  int32_t m = 0, sh = 0;
  if (rescale) {
    TnCrtStatus st = tn_crt_quantize_multiplier((double)(si / so), &m, &sh);
    if (st != TN_CRT_OK) return st;
  }
  for (int32_t v = -128; v <= 127; v++) {
    const int32_t x = v - in_zp, a = x < 0 ? -x : x;
    const int32_t y =
        rescale ? tn_crt_multiply_by_quantized_multiplier(a, m, sh) : a;
    out->table[(uint8_t)(int8_t)v] = sat8(y + out_zp, -128, 127);
  }
  return TN_CRT_OK;
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT<e> for e > 0. */
static int32_t sat_shl(int32_t x, int e) {
  const int32_t limit = (int32_t)((UINT32_C(1) << (31 - e)) - 1);
  if (x > limit) return INT32_MAX;
  if (x < -limit) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* TFLite's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1: 1 /
 * sqrt(x) as a Q31 multiplier and a (left) shift, by five Newton-Raphson
 * steps in gemmlowp's Q3.28 from a guess of one. */
static void inv_sqrt(int32_t x, int32_t *mult, int32_t *shift) {
  if (x <= 1) {
    *mult = INT32_MAX, *shift = 0;
    return;
  }
  int32_t s = 11;
  while (x >= (1 << 29)) x /= 4, s++;
  int clz = 0;
  while (clz < 32 && !((uint32_t)x & (UINT32_C(0x80000000) >> clz))) clz++;
  const int pairs = (clz - 1) / 2 - 1;
  s -= pairs;
  x = (int32_t)((uint32_t)x << (2 * pairs));
  /* F3 values: raw int32 with 28 fractional bits; a product of two has
   * 6 integer bits, of three 9, and Rescale<3> shifts them back. */
  const int32_t in = x >> 1;
  const int32_t half_in = tn_crt_rounding_divide_by_pot(in, 1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t r = 1 << 28;
  for (int i = 0; i < 5; i++) {
    const int32_t r3 = sat_shl(tn_crt_srdhm(tn_crt_srdhm(r, r), r), 6);
    const int32_t d = (int32_t)((uint32_t)tn_crt_srdhm(half_three, r) -
                                (uint32_t)tn_crt_srdhm(half_in, r3));
    r = sat_shl(d, 3);
  }
  r = tn_crt_srdhm(r, 1518500250); /* sqrt(2) / 2 in Q0.31 */
  if (s < 0) {
    r = (int32_t)((uint32_t)r << -s);
    s = 0;
  }
  *mult = r, *shift = -s;
}

TnCrtStatus tn_crt_rsqrt_s8_table(double in_scale, int32_t in_zp,
                                  double out_scale, int32_t out_zp,
                                  TnCrtLut8 *out) {
  float si, so;
  if (!table_quant(in_scale, in_zp, out_scale, out_zp, out, &si, &so))
    return TN_CRT_INVALID_ARGUMENT;
  /* SetRsqrtOutputMultiplier: 1 / (sqrtf(s_in) * s_out), the product in
   * float */
  int32_t m, sh;
  TnCrtStatus st = tn_crt_quantize_multiplier(
      1.0 / (double)(sqrtf(si) * so), &m, &sh);
  if (st != TN_CRT_OK) return st;
  const int32_t k_shift = 20; /* RsqrtEvalQuantized's kShift */
  for (int32_t v = -128; v <= 127; v++) {
    const int32_t x = v - in_zp;
    int32_t y = 127;
    if (x > 0) {
      int32_t im, is;
      inv_sqrt(x, &im, &is);
      const int32_t d =
          tn_crt_multiply_by_quantized_multiplier(1, im, is + k_shift);
      y = tn_crt_multiply_by_quantized_multiplier(d, m, sh - k_shift) + out_zp;
    }
    out->table[(uint8_t)(int8_t)v] = sat8(y, -128, 127);
  }
  return TN_CRT_OK;
}

/* gemmlowp's int16 SaturatingRoundingDoublingHighMul. */
static int32_t srdhm16(int32_t a, int32_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  const int32_t ab = a * b;
  return (ab + (ab >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15);
}

static int32_t sat16(int64_t v) {
  return (int32_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
}

/* TFLite's DownScaleInt32ToInt16Multiplier. */
static int32_t to_q15(int32_t m) {
  return m >= INT32_MAX - (1 << 15) ? INT16_MAX : (m + (1 << 15)) >> 16;
}

TnCrtStatus tn_crt_hard_swish_s8_table(double in_scale, int32_t in_zp,
                                       double out_scale, int32_t out_zp,
                                       TnCrtLut8 *out) {
  float si, so;
  if (!table_quant(in_scale, in_zp, out_scale, out_zp, out, &si, &so))
    return TN_CRT_INVALID_ARGUMENT;
  /* HardSwishPrepare: the input on a scale 128 times finer, the
   * "reluish" (relu6(x + 3) / 6) on 3 / 32768, both ratios in float */
  const float hires = (1.0f / 128.0f) * si;
  int32_t om, oe, rm, re;
  TnCrtStatus st = tn_crt_quantize_multiplier((double)(hires / so), &om, &oe);
  if (st == TN_CRT_OK)
    st = tn_crt_quantize_multiplier((double)(hires / (3.0f / 32768.0f)), &rm,
                                    &re);
  if (st != TN_CRT_OK) return st;
  if (oe > 0) return TN_CRT_UNSUPPORTED;
  const int32_t om16 = to_q15(om), rm16 = to_q15(rm);
  for (int32_t v = -128; v <= 127; v++) {
    /* the int16 values of reference_ops::HardSwish, held in int32 */
    const int32_t hi = (int32_t)(int16_t)((v - in_zp) * 128);
    const int32_t pre_out = srdhm16(hi, om16);
    int32_t r = hi;
    if (re > 0) r = sat16((int64_t)r * ((int64_t)1 << (re - 1)));
    r = srdhm16(r, rm16);
    if (re > 0) r = sat16((int64_t)r * 2);
    if (re < 0) r = tn_crt_rounding_divide_by_pot(r, -re);
    r = (r + (1 << 15)) >> 1;
    /* SaturatingDoublingHighMul: the int16 high half, truncated */
    const int32_t prod = (r == INT16_MIN && pre_out == INT16_MIN)
                             ? INT16_MAX
                             : (int32_t)(int16_t)((r * pre_out) / (1 << 15));
    const int32_t y = (int32_t)(int16_t)(
        tn_crt_rounding_divide_by_pot(prod, -oe) + out_zp);
    out->table[(uint8_t)(int8_t)v] = sat8(y, -128, 127);
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_elu_s8_table(double in_scale, int32_t in_zp,
                                double out_scale, int32_t out_zp,
                                TnCrtLut8 *out) {
  float si, so;
  if (!table_quant(in_scale, in_zp, out_scale, out_zp, out, &si, &so))
    return TN_CRT_INVALID_ARGUMENT;
  const float inv = 1.0f / so;
  for (int32_t v = -128; v <= 127; v++) {
    const float x = si * (float)(v - in_zp);
    const float y = x < 0.0f ? expf(x) - 1.0f : x;
    /* TfLiteRound (roundf), then the zero point added in float */
    const int32_t q = (int32_t)(roundf(y * inv) + (float)out_zp);
    out->table[(uint8_t)(int8_t)v] = sat8(q, -128, 127);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ----------------------------- */

TN_CRT_CALL(minmax_s8, TnCrtCallBinary) {
  return tn_crt_minmax_s8((TnCrtBinaryOp)p->op, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qsub_s8, TnCrtCallQBinary) {
  return tn_crt_qsub_s8(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qsquared_difference_s8, TnCrtCallQBinary) {
  return tn_crt_qsquared_difference_s8(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qprelu_s8, TnCrtCallQBinary) {
  return tn_crt_qprelu_s8(&p->q, &p->b, in[0], in[1], out);
}
