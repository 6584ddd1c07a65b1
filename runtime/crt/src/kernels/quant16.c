/*
 * quant16.c: TFLite Micro's QUANTIZE and DEQUANTIZE between the types
 * beyond int8 (quantize_common.cc, dequantize_common.cc; reference/
 * quantize.h, dequantize.h, requantize.h): float32 -> int16, int16 and
 * uint8 -> float32, and the integer-to-integer QUANTIZE between any two of
 * int8, uint8, int16 and int32 (the converter's uint8 input and output
 * adapters, and the int8 <-> int16 steps of its 16x8 mode), which also
 * brings a 16x8 layer's int64 sums to int16 (conv_s16.c). The integer
 * pairs share one form whose element types are parameters: each pair's
 * loop is instantiated from one macro, and the entry picks it once per
 * call, so the inner loop has no type test. The float paths are the int8
 * ones of quant.c with another element type: the division in float and
 * round half away from zero for QUANTIZE, the product in double rounded
 * once to float for DEQUANTIZE.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "fixed_point.h"
#include "crt_libc.h"

static int check_shape(int32_t outer, int32_t channels, int32_t inner,
                       const void *in, const void *out) {
  return in != NULL && out != NULL && outer > 0 && channels > 0 && inner > 0;
}

/* roundf to int64, saturating (NaN is 0): values beyond the int32 range,
 * where TFLite's conversion is undefined, saturate as in quant.c, and the
 * zero point is then added without overflow. */
static int64_t round_wide(float v) {
  float r = roundf(v);
  if (r != r) return 0;
  if (r >= 9.2e18f) return INT64_C(9200000000000000000);
  if (r <= -9.2e18f) return -INT64_C(9200000000000000000);
  return (int64_t)r;
}

TnCrtStatus tn_crt_quantize_f32_s16(int32_t outer, int32_t channels,
                                    int32_t inner, const float *in,
                                    const float *scale,
                                    const int32_t *zero_point, int16_t *out) {
  if (!check_shape(outer, channels, inner, in, out) || scale == NULL ||
      zero_point == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  size_t at = 0;
  for (int32_t o = 0; o < outer; o++) {
    for (int32_t c = 0; c < channels; c++) {
      const float s = scale[c];
      const int64_t zp = zero_point[c];
      for (int32_t i = 0; i < inner; i++, at++) {
        int64_t v = round_wide(in[at] / s) + zp;
        out[at] = (int16_t)(v < INT16_MIN ? INT16_MIN
                            : v > INT16_MAX ? INT16_MAX : v);
      }
    }
  }
  return TN_CRT_OK;
}

/* DEQUANTIZE of one integer type: out = (float)((double)scale * (x - zp)). */
#define DEQUANT_LOOP(T)                                                     \
  if (!check_shape(outer, channels, inner, in, out) || scale == NULL ||     \
      zero_point == NULL)                                                   \
    return TN_CRT_INVALID_ARGUMENT;                                         \
  size_t at = 0;                                                            \
  for (int32_t o = 0; o < outer; o++) {                                     \
    for (int32_t c = 0; c < channels; c++) {                                \
      const double s = (double)scale[c];                                    \
      const int64_t zp = zero_point[c];                                     \
      for (int32_t i = 0; i < inner; i++, at++)                             \
        out[at] = (float)(s * (double)((int64_t)((const T *)in)[at] - zp)); \
    }                                                                       \
  }                                                                         \
  return TN_CRT_OK;

TnCrtStatus tn_crt_dequantize_s16_f32(int32_t outer, int32_t channels,
                                      int32_t inner, const int16_t *in,
                                      const float *scale,
                                      const int32_t *zero_point, float *out) {
  DEQUANT_LOOP(int16_t)
}

TnCrtStatus tn_crt_dequantize_u8_f32(int32_t outer, int32_t channels,
                                     int32_t inner, const uint8_t *in,
                                     const float *scale,
                                     const int32_t *zero_point, float *out) {
  DEQUANT_LOOP(uint8_t)
}

#undef DEQUANT_LOOP

/* ------------------------------------------------------------------------ */
/* Integer to integer                                                        */
/* ------------------------------------------------------------------------ */

typedef void (*RequantRun)(const TnCrtRequant *p, int32_t outer,
                           int32_t channels, int32_t inner, int32_t lo,
                           int32_t hi, const void *in, void *out);

/* x - in_zp multiplied for each source type: int32 arithmetic that wraps
 * (TFLite's Requantize; undefined in C++, wrapping on every target TFLite
 * runs on), and the 64-bit multiply for int64 sums. */
static int32_t mul32(int64_t x, uint32_t izp, int32_t m, int32_t s) {
  const int32_t d = (int32_t)((uint32_t)(int32_t)x - izp);
  return tn_crt_multiply_by_quantized_multiplier(d, m, s);
}
static int32_t mul64(int64_t x, uint32_t izp, int32_t m, int32_t s) {
  return tn__crt_mbqm64((int64_t)((uint64_t)x - (uint64_t)(int32_t)izp), m, s);
}

/* TFLite's Requantize: MultiplyByQuantizedMultiplier(x - in_zp) + out_zp,
 * clamped, the addition wrapping as int32. */
#define REQUANT_RUN(name, TI, TO, MUL)                                        \
  static void name(const TnCrtRequant *p, int32_t outer, int32_t channels,    \
                   int32_t inner, int32_t lo, int32_t hi, const void *in,     \
                   void *out) {                                               \
    const TI *x = (const TI *)in;                                             \
    TO *y = (TO *)out;                                                        \
    const uint32_t izp = (uint32_t)p->input_zero_point;                       \
    const uint32_t ozp = (uint32_t)p->output_zero_point;                      \
    size_t at = 0;                                                            \
    for (int32_t o = 0; o < outer; o++) {                                     \
      for (int32_t c = 0; c < channels; c++) {                                \
        const int32_t m = p->multiplier[c], s = p->shift[c];                  \
        for (int32_t i = 0; i < inner; i++, at++) {                           \
          const int32_t v =                                                   \
              (int32_t)((uint32_t)MUL((int64_t)x[at], izp, m, s) + ozp);      \
          y[at] = (TO)(v < lo ? lo : v > hi ? hi : v);                        \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

/* X(from type name, C type, multiply) for the types a requantize takes. */
#define REQUANT_TYPES(X)                                              \
  X(I8, int8_t, mul32) X(U8, uint8_t, mul32) X(I16, int16_t, mul32)   \
  X(I32, int32_t, mul32) X(I64, int64_t, mul64)

#define REQUANT_TO(FN, FC, MUL)                           \
  REQUANT_RUN(run_##FN##_I8, FC, int8_t, MUL)             \
  REQUANT_RUN(run_##FN##_U8, FC, uint8_t, MUL)            \
  REQUANT_RUN(run_##FN##_I16, FC, int16_t, MUL)           \
  REQUANT_RUN(run_##FN##_I32, FC, int32_t, MUL)
REQUANT_TYPES(REQUANT_TO)
#undef REQUANT_TO
#undef REQUANT_RUN

/* Index of a requantize element type in REQUANT_TYPES' order, or -1
 * (int64 is a source only: the last row). */
static int type_slot(int32_t t) {
  switch (t) {
    case TN_CRT_I8: return 0;
    case TN_CRT_U8: return 1;
    case TN_CRT_I16: return 2;
    case TN_CRT_I32: return 3;
    case TN_CRT_I64: return 4;
    default: return -1;
  }
}

static const RequantRun g_runs[5][4] = {
#define REQUANT_ROW(FN, FC, MUL) \
  {run_##FN##_I8, run_##FN##_U8, run_##FN##_I16, run_##FN##_I32},
    REQUANT_TYPES(REQUANT_ROW)
#undef REQUANT_ROW
};

static const int32_t g_lo[4] = {INT8_MIN, 0, INT16_MIN, INT32_MIN};
static const int32_t g_hi[4] = {INT8_MAX, UINT8_MAX, INT16_MAX, INT32_MAX};

TnCrtStatus tn_crt_requantize_int(const TnCrtRequant *p, TnCrtDType from,
                                  TnCrtDType to, int32_t outer,
                                  int32_t channels, int32_t inner,
                                  const void *in, void *out) {
  const int f = type_slot(from), t = type_slot(to);
  if (p == NULL || p->multiplier == NULL || p->shift == NULL || f < 0 ||
      t < 0 || t > 3 || !check_shape(outer, channels, inner, in, out))
    return TN_CRT_INVALID_ARGUMENT;
  if (p->act_min > p->act_max) return TN_CRT_INVALID_ARGUMENT;
  const int32_t lo = p->act_min < g_lo[t] ? g_lo[t] : p->act_min;
  const int32_t hi = p->act_max > g_hi[t] ? g_hi[t] : p->act_max;
  if (lo > hi) return TN_CRT_INVALID_ARGUMENT;
  g_runs[f][t](p, outer, channels, inner, lo, hi, in, out);
  return TN_CRT_OK;
}

#undef REQUANT_TYPES

TnCrtStatus tn_crt_clip_s16(int32_t n, const int16_t *in, int32_t lo,
                            int32_t hi, int16_t *out) {
  if (in == NULL || out == NULL || n <= 0) return TN_CRT_INVALID_ARGUMENT;
  const int32_t l = lo < INT16_MIN ? INT16_MIN : lo > INT16_MAX ? INT16_MAX : lo;
  const int32_t h = hi < INT16_MIN ? INT16_MIN : hi > INT16_MAX ? INT16_MAX : hi;
  for (int32_t i = 0; i < n; i++) {
    const int32_t v = in[i] < l ? l : in[i];
    out[i] = (int16_t)(v > h ? h : v);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(quantize_f32_s16, TnCrtCallAffine) {
  return tn_crt_quantize_f32_s16(p->outer, p->channels, p->inner, in[0],
                                 p->scale, p->zero_point, out);
}
TN_CRT_CALL(dequantize_s16_f32, TnCrtCallAffine) {
  return tn_crt_dequantize_s16_f32(p->outer, p->channels, p->inner, in[0],
                                   p->scale, p->zero_point, out);
}
TN_CRT_CALL(dequantize_u8_f32, TnCrtCallAffine) {
  return tn_crt_dequantize_u8_f32(p->outer, p->channels, p->inner, in[0],
                                  p->scale, p->zero_point, out);
}
TN_CRT_CALL(requantize_int, TnCrtCallRequantInt) {
  return tn_crt_requantize_int(&p->r, (TnCrtDType)p->from, (TnCrtDType)p->to,
                               p->outer, p->channels, p->inner, in[0], out);
}
TN_CRT_CALL(clip_s16, TnCrtCallClip) {
  return tn_crt_clip_s16(p->n, in[0], p->lo, p->hi, out);
}
