/*
 * quant.c: the int8 kernels that are elementwise: quantize, dequantize and
 * requantize, ADD and MUL with broadcasting, clip, and the 256-entry tables
 * of logistic and tanh. Each reproduces TFLite Micro's reference kernel bit
 * for bit (reference/quantize.h, dequantize.h, requantize.h,
 * integer_ops/add.h, mul.h, logistic.h, tanh.h), and the *_params / *_table
 * functions reproduce what TFLite's Prepare computes from the tensors'
 * quantization, so a device only sees integers. TFLite stores scales as
 * float: the host functions round their double arguments to float first,
 * which is exact for scales read from a .tflite file and makes the derived
 * multipliers TFLite's. Logistic and tanh are table look-ups because an
 * int8 input has only 256 values: the table is filled by running TFLM's
 * fixed-point algorithm once per value, so the look-up gives its outputs.
 * ADD requantizes three times an element; with the parameters
 * tn_crt_qadd_params makes, that arithmetic is inlined (mbqm_right), which
 * halves its cost on a Cortex-M4 (residual networks add whole tensors).
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "fixed_point.h"
#include "quant.h"
#if TN_CRT_HAVE_ARM_MVE
#include "arm_mve/add_s8_mve.h" /* the ADD's MVE form (the M55) */
#endif

#if TN_CRT_HAVE_ARM_DSP
#include "arm_dsp/add_s8_dsp.h"
#endif

/* TFLite's int32 arithmetic on offsets and zero points, whose overflow C++
 * leaves undefined: wrapping, as the hardware does. */
static int32_t wadd(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static int32_t wsub(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}

static int8_t clamp8(int32_t v, int32_t lo, int32_t hi) {
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* An activation range narrowed to int8 (a wider one clamps nothing more). */
static TnCrtStatus act_range(int32_t act_min, int32_t act_max, int32_t *lo,
                             int32_t *hi) {
  if (act_min > act_max) return TN_CRT_INVALID_ARGUMENT;
  *lo = act_min < -128 ? -128 : act_min;
  *hi = act_max > 127 ? 127 : act_max;
  if (*lo > *hi) return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

static int is_int8(int32_t v) { return v >= -128 && v <= 127; }

/* A tensor scale as TFLite holds it: a positive finite float. */
static int tensor_scale(double s, float *f) {
  if (!(s > 0.0) || s - s != 0.0) return 0;
  *f = (float)s;
  return *f > 0.0f && *f - *f == 0.0f;
}

/* ------------------------------------------------------------------------ */
/* Quantize, dequantize, requantize, clip                                    */
/* ------------------------------------------------------------------------ */

static TnCrtStatus check_axis(int32_t outer, int32_t channels, int32_t inner,
                              const void *in, const void *out) {
  if (in == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (outer <= 0 || channels <= 0 || inner <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

/* round() to int32 without the undefined behaviour of converting an
 * out-of-range float: saturate (NaN becomes 0). TFLite converts directly,
 * so only values beyond +-2^31 quantization steps can differ. */
static int32_t round_to_i32(float v) {
  float r = roundf(v);
  if (r != r) return 0;
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r <= -2147483648.0f) return INT32_MIN;
  return (int32_t)r;
}

/* round_to_i32 with ties to even (ONNX's QuantizeLinear): a tie is
 * rounded as twice the rounded half, exact as the halving is. */
static int32_t round_even_to_i32(float v) {
  float r = roundf(v);
  if (r - v == 0.5f || v - r == 0.5f) r = 2.0f * roundf(v * 0.5f);
  return round_to_i32(r);
}

static TnCrtStatus quantize_s8(int32_t outer, int32_t channels, int32_t inner,
                               const float *in, const float *scale,
                               const int32_t *zero_point, int8_t *out,
                               int even) {
  TnCrtStatus st = check_axis(outer, channels, inner, in, out);
  if (st != TN_CRT_OK) return st;
  if (scale == NULL || zero_point == NULL) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t o = 0; o < outer; o++) {
    for (int32_t c = 0; c < channels; c++) {
      /* TFLite's AffineQuantize: the division in float, std::round (half
       * away from zero), then the zero point, then the int8 clamp. */
      const float s = scale[c];
      const int32_t zp = zero_point[c];
      const float *x = in + ((size_t)o * channels + c) * inner;
      int8_t *y = out + ((size_t)o * channels + c) * inner;
      for (int32_t i = 0; i < inner; i++) {
        int64_t v = (int64_t)(even ? round_even_to_i32(x[i] / s)
                                   : round_to_i32(x[i] / s)) + zp;
        y[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
      }
    }
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_quantize_f32_s8(int32_t outer, int32_t channels,
                                   int32_t inner, const float *in,
                                   const float *scale,
                                   const int32_t *zero_point, int8_t *out) {
  return quantize_s8(outer, channels, inner, in, scale, zero_point, out, 0);
}

TnCrtStatus tn_crt_quantize_f32_s8_even(int32_t outer, int32_t channels,
                                        int32_t inner, const float *in,
                                        const float *scale,
                                        const int32_t *zero_point,
                                        int8_t *out) {
  return quantize_s8(outer, channels, inner, in, scale, zero_point, out, 1);
}

TnCrtStatus tn_crt_dequantize_s8_f32(int32_t outer, int32_t channels,
                                     int32_t inner, const int8_t *in,
                                     const float *scale,
                                     const int32_t *zero_point, float *out) {
  TnCrtStatus st = check_axis(outer, channels, inner, in, out);
  if (st != TN_CRT_OK) return st;
  if (scale == NULL || zero_point == NULL) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t o = 0; o < outer; o++) {
    for (int32_t c = 0; c < channels; c++) {
      /* TFLite's Dequantize: the float scale widened to double, the
       * product in double, rounded once to float. */
      const double s = (double)scale[c];
      const int32_t zp = zero_point[c];
      const int8_t *x = in + ((size_t)o * channels + c) * inner;
      float *y = out + ((size_t)o * channels + c) * inner;
      for (int32_t i = 0; i < inner; i++)
        y[i] = (float)(s * (double)((int64_t)x[i] - zp));
    }
  }
  return TN_CRT_OK;
}

static TnCrtStatus check_requant(const TnCrtRequant *p, int32_t outer,
                                 int32_t channels, int32_t inner,
                                 const void *in, const void *out,
                                 int32_t *lo, int32_t *hi) {
  if (p == NULL || (p->scale == NULL && (p->multiplier == NULL ||
                                          p->shift == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check_axis(outer, channels, inner, in, out);
  if (st != TN_CRT_OK) return st;
  return act_range(p->act_min, p->act_max, lo, hi);
}

/* TFLite's Requantize (the QUANTIZE op between integer types):
 * MultiplyByQuantizedMultiplier(x - in_zp) + out_zp, clamped; with
 * p->scale, ONNX Runtime's float product rounded half to even. The int8 and
 * int32 inputs share the loop through this macro, which keeps the inner loop
 * free of a per-element type test. */
#define REQUANT_LOOP(T)                                                     \
  for (int32_t o = 0; o < outer; o++) {                                     \
    for (int32_t c = 0; c < channels; c++) {                                \
      const T *x = in + ((size_t)o * channels + c) * inner;                 \
      int8_t *y = out + ((size_t)o * channels + c) * inner;                 \
      if (p->scale) {                                                       \
        for (int32_t i = 0; i < inner; i++)                                 \
          y[i] = (int8_t)tn__crt_requant_float(                             \
              wsub(x[i], p->input_zero_point), p->scale[c],                 \
              p->output_zero_point, lo, hi);                                \
        continue;                                                           \
      }                                                                     \
      const int32_t m = p->multiplier[c], s = p->shift[c];                  \
      for (int32_t i = 0; i < inner; i++) {                                 \
        int32_t v = tn_crt_multiply_by_quantized_multiplier(                \
            wsub(x[i], p->input_zero_point), m, s);                         \
        y[i] = clamp8(wadd(v, p->output_zero_point), lo, hi);               \
      }                                                                     \
    }                                                                       \
  }

TnCrtStatus tn_crt_requantize_s32_s8(const TnCrtRequant *p, int32_t outer,
                                     int32_t channels, int32_t inner,
                                     const int32_t *in, int8_t *out) {
  int32_t lo, hi;
  TnCrtStatus st = check_requant(p, outer, channels, inner, in, out, &lo, &hi);
  if (st != TN_CRT_OK) return st;
  REQUANT_LOOP(int32_t)
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_requantize_s8_s8(const TnCrtRequant *p, int32_t outer,
                                    int32_t channels, int32_t inner,
                                    const int8_t *in, int8_t *out) {
  int32_t lo, hi;
  TnCrtStatus st = check_requant(p, outer, channels, inner, in, out, &lo, &hi);
  if (st != TN_CRT_OK) return st;
  REQUANT_LOOP(int8_t)
  return TN_CRT_OK;
}

#undef REQUANT_LOOP

TnCrtStatus tn_crt_clip_s8(int32_t n, const int8_t *in, int32_t lo,
                           int32_t hi, int8_t *out) {
  if (in == NULL || out == NULL || n <= 0) return TN_CRT_INVALID_ARGUMENT;
  /* min(max(x, lo), hi) with lo and hi narrowed to int8 first, which gives
   * the same result and lets the loop stay in 8 bits. */
  const int8_t l = (int8_t)(lo < -128 ? -128 : lo > 127 ? 127 : lo);
  const int8_t h = (int8_t)(hi < -128 ? -128 : hi > 127 ? 127 : hi);
  int32_t i = 0;
#if TN_CRT_HAVE_AVX2
  if (n >= 32 && tn__crt_avx2()) i = tn__crt_clip_s8_avx2(n, in, l, h, out);
#endif
  for (; i < n; i++) {
    int8_t v = in[i] < l ? l : in[i];
    out[i] = v > h ? h : v;
  }
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* ADD and MUL                                                               */
/* ------------------------------------------------------------------------ */

/* The scales of an int8 ADD or MUL as TFLite holds them (float), and
 * whether they and the zero points are valid. */
static int binary_quant(double lhs_scale, int32_t lhs_zp, double rhs_scale,
                        int32_t rhs_zp, double out_scale, int32_t out_zp,
                        float *sl, float *sr, float *so) {
  return tensor_scale(lhs_scale, sl) && tensor_scale(rhs_scale, sr) &&
         tensor_scale(out_scale, so) && is_int8(lhs_zp) && is_int8(rhs_zp) &&
         is_int8(out_zp);
}

TnCrtStatus tn_crt_qadd_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out) {
  float sl, sr, so;
  if (out == NULL || !binary_quant(lhs_scale, lhs_zp, rhs_scale, rhs_zp,
                                   out_scale, out_zp, &sl, &sr, &so))
    return TN_CRT_INVALID_ARGUMENT;
  /* TFLite's CalculateOpDataAdd for int8: both inputs scaled by
   * s_in / (2 * max s_in) after a left shift of 20, the sum by
   * 2 * max s_in / (2^20 s_out); every real multiplier must be below one
   * (QuantizeMultiplierSmallerThanOneExp), so the shifts are <= 0. */
  const int32_t left_shift = 20;
  const double twice_max = 2 * (double)(sl > sr ? sl : sr);
  const double real[3] = {
      (double)sl / twice_max, (double)sr / twice_max,
      twice_max / ((double)(1 << left_shift) * (double)so)};
  int32_t m[3], s[3];
  for (int i = 0; i < 3; i++) {
    if (!(real[i] < 1.0)) return TN_CRT_UNSUPPORTED;
    TnCrtStatus st = tn_crt_quantize_multiplier(real[i], &m[i], &s[i]);
    if (st != TN_CRT_OK) return st;
    if (s[i] > 0) return TN_CRT_UNSUPPORTED;
  }
  out->lhs_offset = -lhs_zp;
  out->rhs_offset = -rhs_zp;
  out->output_offset = out_zp;
  out->left_shift = left_shift;
  out->lhs_multiplier = m[0], out->lhs_shift = s[0];
  out->rhs_multiplier = m[1], out->rhs_shift = s[1];
  out->output_multiplier = m[2], out->output_shift = s[2];
  out->act_min = -128, out->act_max = 127;
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_qmul_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out) {
  float sl, sr, so;
  if (out == NULL || !binary_quant(lhs_scale, lhs_zp, rhs_scale, rhs_zp,
                                   out_scale, out_zp, &sl, &sr, &so))
    return TN_CRT_INVALID_ARGUMENT;
  /* TFLite's CalculateOpDataMul: one multiplier s_lhs * s_rhs / s_out,
   * products of the float scales taken in double. */
  int32_t m, s;
  TnCrtStatus st = tn_crt_quantize_multiplier(
      (double)sl * (double)sr / (double)so, &m, &s);
  if (st != TN_CRT_OK) return st;
  out->lhs_offset = -lhs_zp;
  out->rhs_offset = -rhs_zp;
  out->output_offset = out_zp;
  out->left_shift = 0;
  out->lhs_multiplier = 0, out->lhs_shift = 0;
  out->rhs_multiplier = 0, out->rhs_shift = 0;
  out->output_multiplier = m, out->output_shift = s;
  out->act_min = -128, out->act_max = 127;
  return TN_CRT_OK;
}

/* tn_crt_multiply_by_quantized_multiplier for a multiplier >= 0 and a
 * shift in [-31, 0] (what tn_crt_qadd_params gives), inline: ADD takes
 * three a element. For m >= 0 the saturating rounding doubling high
 * multiply cannot saturate, and its nudge-and-truncate is the floor of
 * (x * m + 2^30) / 2^31 for either sign; the rounding right shift is
 * TFLite's mask-and-threshold form. Shifts of negative values are written
 * as the floor of the two's complement (asr() in fixed_point.c). */
static inline int32_t mbqm_right(int32_t x, int32_t m, int32_t shift) {
  const int64_t v = (int64_t)x * m + (INT64_C(1) << 30);
  const int32_t h = (int32_t)(v >= 0 ? v >> 31 : ~(~v >> 31));
  const int32_t e = -shift;
  const int32_t mask = (int32_t)((UINT32_C(1) << e) - 1);
  const int32_t q = h >= 0 ? h >> e : ~(~h >> e);
  return q + ((h & mask) > (mask >> 1) + (h < 0) ? 1 : 0);
}

/* The multipliers take mbqm_right. */
static int add_is_fast(const TnCrtQBinary *p) {
  return p->lhs_multiplier >= 0 && p->rhs_multiplier >= 0 &&
         p->output_multiplier >= 0 && p->lhs_shift <= 0 &&
         p->lhs_shift >= -31 && p->rhs_shift <= 0 && p->rhs_shift >= -31 &&
         p->output_shift <= 0 && p->output_shift >= -31;
}

/* TFLite's AddFunc. Its MultiplyByQuantizedMultiplierSmallerThanOneExp is
 * MultiplyByQuantizedMultiplier restricted to shifts <= 0, where the two
 * compute the same thing. With int8 zero points nothing here overflows;
 * with others, the arithmetic wraps as TFLite's does in practice. */
static int8_t add_one(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                      int32_t x, int32_t y) {
  const int32_t a =
      (int32_t)((uint32_t)wadd(x, p->lhs_offset) << p->left_shift);
  const int32_t b =
      (int32_t)((uint32_t)wadd(y, p->rhs_offset) << p->left_shift);
  const int32_t sa = tn_crt_multiply_by_quantized_multiplier(
      a, p->lhs_multiplier, p->lhs_shift);
  const int32_t sb = tn_crt_multiply_by_quantized_multiplier(
      b, p->rhs_multiplier, p->rhs_shift);
  const int32_t r = tn_crt_multiply_by_quantized_multiplier(
      wadd(sa, sb), p->output_multiplier, p->output_shift);
  return clamp8(wadd(r, p->output_offset), lo, hi);
}

/* TFLite's MulElementwise. */
static int8_t mul_one(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                      int32_t x, int32_t y) {
  const int32_t prod = (int32_t)((uint32_t)wadd(x, p->lhs_offset) *
                                 (uint32_t)wadd(y, p->rhs_offset));
  const int32_t r = tn_crt_multiply_by_quantized_multiplier(
      prod, p->output_multiplier, p->output_shift);
  return clamp8(wadd(r, p->output_offset), lo, hi);
}

/* One run of the broadcast: out[i] = op(l[i * ls], r[i * rs]), i < n. */
typedef void (*BinaryRun)(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                          const int8_t *l, int32_t ls, const int8_t *r,
                          int32_t rs, int32_t n, int8_t *out);

static void add_run(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                    const int8_t *l, int32_t ls, const int8_t *r, int32_t rs,
                    int32_t n, int8_t *out) {
  for (int32_t i = 0; i < n; i++)
    out[i] = add_one(p, lo, hi, l[i * ls], r[i * rs]);
}

/* add_run when add_is_fast(p): add_one with mbqm_right, the parameters
 * in locals (the int8 stores could alias *p and force reloads). */
static void add_run_fast(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                         const int8_t *l, int32_t ls, const int8_t *r,
                         int32_t rs, int32_t n, int8_t *out) {
  const int32_t left = p->left_shift, loff = p->lhs_offset;
  const int32_t roff = p->rhs_offset, ooff = p->output_offset;
  const int32_t lm = p->lhs_multiplier, lsh = p->lhs_shift;
  const int32_t rm = p->rhs_multiplier, rsh = p->rhs_shift;
  const int32_t om = p->output_multiplier, osh = p->output_shift;
  int32_t i = 0;
#if TN_CRT_HAVE_AVX2
  if (ls == 1 && rs == 1 && n >= 8 && tn__crt_avx2()) {
    if (n >= 16 && (tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >=
                       TN_CRT_ISA_AVX512BW)
      i = tn__crt_qadd_avx512(p, lo, hi, l, r, n, out);
    if (n - i >= 8)
      i += tn__crt_qadd_avx2(p, lo, hi, l + i, r + i, n - i, out + i);
  }
#endif
#if TN_CRT_HAVE_ARM_MVE
  if (ls == 1 && rs == 1) i = mve_qadd(p, lo, hi, l, r, n, out);
#endif
  for (; i < n; i++) {
    const int32_t a = (int32_t)((uint32_t)wadd(l[i * ls], loff) << left);
    const int32_t b = (int32_t)((uint32_t)wadd(r[i * rs], roff) << left);
    const int32_t v = mbqm_right(
        wadd(mbqm_right(a, lm, lsh), mbqm_right(b, rm, rsh)), om, osh);
    out[i] = clamp8(wadd(v, ooff), lo, hi);
  }
}

/*
 * ADD through tables. Each operand's term, mbqm_right(((x + offset) <<
 * left), m, shift), depends on one int8, so it takes one of 256 values:
 * both tables are built once a call, in the caller's scratch (2 KB, planned
 * in the pool: tn_crt_qadd_s8_scratch_size_isa), and an element is
 * two look-ups, a sum and the output's requantization. The tables hold
 * twice the terms, so that s = 2 (a + b), and then (lut_out):
 *  - mbqm_right's high multiply of a + b by om >= 0, floor(((a + b) om +
 *    2^30) / 2^31), is floor((s om + 2^31) / 2^32) = h, and with c added
 *    to the high word that is SMMLAR's c + h (one instruction on a
 *    Cortex-M; a 64-bit product elsewhere);
 *  - the rounding right shift by e >= 1 is floor((h - [h < 0] + 2^(e-1))
 *    / 2^e) (TFLite's mask-and-threshold: ties away from zero). [h < 0]
 *    may be read as [s < 0]: h < 0 only if s < 0, and where s < 0 but
 *    h = 0 both give 0 (2^(e-1) - 1 < 2^e);
 *  - the output offset o enters as o 2^e inside the floor, exactly, so c
 *    = 2^(e-1) + o 2^e, and what is left is (c + h - [s < 0]) >> e.
 * add_lut_tables takes the form only where none of this overflows: |a| +
 * |b| < 2^30 over the tables (so s fits; then |h| <= (|a| + |b|)) and
 * (|a| + |b|) + |c| + 1 < 2^31; and e >= 1. The multipliers and shifts
 * are add_is_fast's. The clamp to int8 and the activation's range is
 * clamp8's (or SSAT and a byte min/max in arm_dsp/add_s8_dsp.h).
 */
typedef struct {
  TnCrtQBinary q; /* first: the run gets the tables through its p */
  int32_t *t;     /* 2 a for (uint8_t)x at t[x], 2 b at t[256 + y] */
  int32_t om, c, e;
} AddLut;
enum { ADD_LUT_BYTES = 512 * sizeof(int32_t) };

/* The AVX2 forms run here (x86/quant.c): they take the ADD instead. */
#if TN_CRT_HAVE_AVX2
#define add_avx2_here() tn__crt_avx2()
#else
#define add_avx2_here() 0
#endif

/* Below this many elements a call builds no tables: on a Cortex-M4 the
 * 512 terms cost about 18,000 estimated cycles, what some 250 elements
 * save (15 cycles an element against add_run_fast's 86). */
#define ADD_LUT_MIN 256


/* Fills t (its t set to 2 KB) for p; 0 where the form does not apply. */
static int add_lut_tables(const TnCrtQBinary *p, AddLut *t) {
  if (!add_is_fast(p) || p->output_shift > -1 || p->left_shift < 0 ||
      p->left_shift > 30)
    return 0;
  int64_t big = 0;
  for (int k = 0; k < 2; k++) {
    const int32_t off = k ? p->rhs_offset : p->lhs_offset;
    const int32_t m = k ? p->rhs_multiplier : p->lhs_multiplier;
    const int32_t sh = k ? p->rhs_shift : p->lhs_shift;
    /* (the fault hook, for the tests: 1 scales the lhs inputs past their
     * own, a broken table) */
    const int32_t bad = k == 0 && tn__crt_qadd_lut_broken() == 1;
    int64_t most = 0;
    for (int32_t u = 0; u < 256; u++) {
      const int32_t x = (int32_t)(int8_t)(uint8_t)u + bad;
      const int32_t v = mbqm_right(
          (int32_t)((uint32_t)wadd(x, off) << p->left_shift), m, sh);
      const int64_t a = v < 0 ? -(int64_t)v : v;
      most = a > most ? a : most;
      t->t[k * 256 + u] = v;
    }
    big += most;
  }
  const int32_t e = -p->output_shift;
  const int64_t c = ((int64_t)1 << (e - 1)) +
                    (int64_t)p->output_offset * ((int64_t)1 << e);
  if (big >= ((int64_t)1 << 30) ||
      big + (c < 0 ? -c : c) + 1 >= ((int64_t)1 << 31))
    return 0;
  for (int32_t i = 0; i < 512; i++) t->t[i] *= 2;
  t->q = *p;
  t->om = p->output_multiplier, t->c = (int32_t)c, t->e = e;
  return 1;
}

/* (c * 2^32 + s * om + 2^31) / 2^32 floored, less [s < 0], floored by 2^e
 * (the comment above), before the clamp. */
static inline int32_t lut_out(int32_t s, int32_t om, int32_t c, int32_t e) {
#if TN_CRT_HAVE_ARM_DSP
  const int32_t h = tn__crt_smmlar(s, om, c);
#else
  const int64_t v = (int64_t)s * om + (int64_t)c * INT64_C(4294967296) +
                    INT64_C(2147483648);
  const int32_t h = (int32_t)(v >= 0 ? v >> 32 : ~(~v >> 32));
#endif
  const int32_t d = h - (int32_t)((uint32_t)s >> 31);
  return d >= 0 ? d >> e : ~(~d >> e);
}

/* add_run_fast through the tables of p, an AddLut's q. */
static void add_lut_run(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                        const int8_t *l, int32_t ls, const int8_t *r,
                        int32_t rs, int32_t n, int8_t *out) {
  const AddLut *t = (const AddLut *)(const void *)p;
  const int32_t om = t->om, c = t->c, e = t->e;
  int32_t i = 0;
#if TN_CRT_HAVE_ARM_DSP
  if (ls == 1 && rs == 1)
    i = dsp_add_lut4(t->t, om, c, e, lo, hi, l, r, n, out);
#endif
  for (; i < n; i++) {
    const int32_t s =
        t->t[(uint8_t)l[i * ls]] + t->t[256 + (uint8_t)r[i * rs]];
    out[i] = clamp8(lut_out(s, om, c, e), lo, hi);
  }
}

static void mul_run(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                    const int8_t *l, int32_t ls, const int8_t *r, int32_t rs,
                    int32_t n, int8_t *out) {
  for (int32_t i = 0; i < n; i++)
    out[i] = mul_one(p, lo, hi, l[i * ls], r[i * rs]);
}

/* Walks the output densely: the last dim is a strided inner loop, the
 * others an odometer that steps each operand's offset by its stride (0
 * where it is broadcast) and rewinds it on wrap-around. */
static TnCrtStatus broadcast_run(const TnCrtQBinary *p,
                                 const TnCrtBroadcast *b, const int8_t *lhs,
                                 const int8_t *rhs, int8_t *out,
                                 BinaryRun run) {
  if (p == NULL || b == NULL || lhs == NULL || rhs == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (b->ndim < 1 || b->ndim > TN_CRT_MAX_DIMS) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t d = 0; d < b->ndim; d++)
    if (b->dims[d] <= 0) return TN_CRT_INVALID_ARGUMENT;
  if (p->left_shift < 0 || p->left_shift > 30) return TN_CRT_INVALID_ARGUMENT;
  int32_t lo, hi;
  TnCrtStatus st = act_range(p->act_min, p->act_max, &lo, &hi);
  if (st != TN_CRT_OK) return st;

  const int32_t last = b->ndim - 1, n = b->dims[last];
  const int32_t ls = b->lhs_strides[last], rs = b->rhs_strides[last];
  int32_t idx[TN_CRT_MAX_DIMS] = {0};
  int32_t lo_off = 0, ro_off = 0;
  for (;;) {
    run(p, lo, hi, lhs + lo_off, ls, rhs + ro_off, rs, n, out);
    out += n;
    int32_t d = last - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < b->dims[d]) {
        lo_off += b->lhs_strides[d];
        ro_off += b->rhs_strides[d];
        break;
      }
      idx[d] = 0;
      lo_off -= b->lhs_strides[d] * (b->dims[d] - 1);
      ro_off -= b->rhs_strides[d] * (b->dims[d] - 1);
    }
    if (d < 0) return TN_CRT_OK;
  }
}

TnCrtStatus tn_crt_qadd_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs,
                           int8_t *out) {
  return broadcast_run(p, b, lhs, rhs, out,
                       p != NULL && add_is_fast(p) ? add_run_fast : add_run);
}

TnCrtStatus tn_crt_qmul_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs,
                           int8_t *out) {
  return broadcast_run(p, b, lhs, rhs, out, mul_run);
}

/* ------------------------------------------------------------------------ */
/* Logistic and tanh tables                                                  */
/* ------------------------------------------------------------------------ */

/* TFLM's int8 LOGISTIC and TANH (logistic_common.cc, tanh.cc; integer_ops/
 * logistic.h, tanh.h), run for each of the 256 inputs. Prepare: the input
 * scale times 2^27 (a Q4.27 input) split by frexp into a Q31 multiplier and
 * a left shift, with no rounding fix-up (a float scale has 24 significant
 * bits, so q * 2^31 rounds to no more than 2^31 - 2^7), and the radius
 * beyond which the output saturates, CalculateInputRadius(4, shift). Eval:
 * saturate outside the radius, else the gemmlowp function on the rescaled
 * input and a rounding shift to the output scale (2^-8 for logistic with
 * zero point -128, 2^-7 for tanh). */
static TnCrtStatus unary_table(double in_scale, int32_t in_zp, int is_tanh,
                               TnCrtLut8 *out) {
  float s;
  if (!tensor_scale(in_scale, &s) || !is_int8(in_zp))
    return TN_CRT_INVALID_ARGUMENT;
  int shift = 0;
  const double q = frexp((double)s * (double)(1 << 27), &shift);
  const int32_t mult = (int32_t)round(q * 2147483648.0);
  /* TFLite computes the radius with 1LL << shift: a scale below 2^-28 would
   * make that shift negative (undefined), so such scales are refused. */
  if (shift < 0) return TN_CRT_UNSUPPORTED;
  double pow2 = 1.0;
  for (int i = 0; i < shift; i++) pow2 *= 2.0;
  const int32_t radius = (int32_t)floor(15.0 * (double)(1 << 27) / pow2);
  for (int32_t v = -128; v <= 127; v++) {
    const int32_t x = v - in_zp;
    int32_t y;
    if (x <= -radius) {
      y = -128;
    } else if (x >= radius) {
      y = 127;
    } else {
      const int32_t x_q4 = tn_crt_multiply_by_quantized_multiplier(x, mult,
                                                                   shift);
      if (is_tanh) {
        y = tn_crt_rounding_divide_by_pot(tn__crt_tanh(x_q4, 4), 31 - 7);
      } else {
        y = tn_crt_rounding_divide_by_pot(tn__crt_logistic(x_q4, 4), 31 - 8);
        y -= 128;
      }
      y = y < -128 ? -128 : y > 127 ? 127 : y;
    }
    out->table[(uint8_t)(int8_t)v] = (int8_t)y;
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_logistic_s8_table(double in_scale, int32_t in_zp,
                                     double out_scale, int32_t out_zp,
                                     TnCrtLut8 *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  /* TFLite's int8 logistic has one output quantization: 1/256, -128. */
  if (out_zp != -128 || (float)out_scale != 1.0f / 256)
    return TN_CRT_UNSUPPORTED;
  return unary_table(in_scale, in_zp, 0, out);
}

TnCrtStatus tn_crt_tanh_s8_table(double in_scale, int32_t in_zp,
                                 double out_scale, int32_t out_zp,
                                 TnCrtLut8 *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  /* And tanh one too: 1/128, 0. */
  if (out_zp != 0 || (float)out_scale != 1.0f / 128) return TN_CRT_UNSUPPORTED;
  return unary_table(in_scale, in_zp, 1, out);
}

TnCrtStatus tn_crt_lut_s8(const TnCrtLut8 *t, int32_t n, const int8_t *in,
                          int8_t *out) {
  if (t == NULL || in == NULL || out == NULL || n <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < n; i++) out[i] = t->table[(uint8_t)in[i]];
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(clip_s8, TnCrtCallClip) {
  return tn_crt_clip_s8(p->n, in[0], p->lo, p->hi, out);
}
TN_CRT_CALL(quantize_f32_s8, TnCrtCallAffine) {
  return quantize_s8(p->outer, p->channels, p->inner, in[0], p->scale,
                     p->zero_point, out, p->round_even);
}
TN_CRT_CALL(dequantize_s8_f32, TnCrtCallAffine) {
  return tn_crt_dequantize_s8_f32(p->outer, p->channels, p->inner, in[0],
                                  p->scale, p->zero_point, out);
}
TN_CRT_CALL(requantize_s32_s8, TnCrtCallRequant) {
  return tn_crt_requantize_s32_s8(&p->r, p->outer, p->channels, p->inner,
                                  in[0], out);
}
TN_CRT_CALL(requantize_s8_s8, TnCrtCallRequant) {
  return tn_crt_requantize_s8_s8(&p->r, p->outer, p->channels, p->inner,
                                 in[0], out);
}
/* The elements of b's output; 0 for a broadcast broadcast_run refuses. */
static int64_t add_elements(const TnCrtBroadcast *b) {
  if (b->ndim < 1 || b->ndim > TN_CRT_MAX_DIMS) return 0;
  int64_t n = 1;
  for (int32_t d = 0; d < b->ndim; d++) n *= b->dims[d] > 0 ? b->dims[d] : 0;
  return n;
}

size_t tn_crt_qadd_s8_scratch_size_isa(const TnCrtQBinary *p,
                                       const TnCrtBroadcast *b, int32_t isa) {
  if (p == NULL || b == NULL || isa != TN_CRT_ISA_ARM_DSP ||
      add_elements(b) < ADD_LUT_MIN)
    return 0;
  int32_t t[512];
  AddLut lut;
  lut.t = t;
  return add_lut_tables(p, &lut) ? ADD_LUT_BYTES : 0;
}

TN_CRT_CALL(qadd_s8, TnCrtCallQBinary) {
  /* the tables, given their scratch (where the AVX2 forms are not taken:
   * those have their own), for calls long enough to pay for them */
  int lut = scratch != NULL && scratch_size >= ADD_LUT_BYTES &&
            ((uintptr_t)scratch & 3) == 0 && !add_avx2_here() &&
            add_elements(&p->b) >= ADD_LUT_MIN;
#if TN_CRT_HAVE_ARM_MVE
  /* on a core with MVE, its form where it takes the call (contiguous runs
   * whose parameters it takes): fewer instructions an element */
  if (lut && add_is_fast(&p->q) &&
      p->b.lhs_strides[p->b.ndim - 1] == 1 &&
      p->b.rhs_strides[p->b.ndim - 1] == 1)
    lut = !mve_qadd_takes(&p->q);
#endif
  if (lut) {
    AddLut t;
    t.t = (int32_t *)scratch;
    if (add_lut_tables(&p->q, &t))
      return broadcast_run(&t.q, &p->b, in[0], in[1], out, add_lut_run);
  }
  return tn_crt_qadd_s8(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qmul_s8, TnCrtCallQBinary) {
  return tn_crt_qmul_s8(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(lut_s8, TnCrtCallLut) {
  return tn_crt_lut_s8(&p->t, p->n, in[0], out);
}
