/*
 * pool_s8.c: int8 max and average pooling, TFLite Micro's reference
 * (integer_ops/pooling.h) bit for bit: the window is cut to the input (the
 * padding contributes nothing), the average divides by the number of input
 * elements it covered and rounds half away from zero, and both clamp to the
 * activation range. The geometry is read through element strides, so any
 * layout works; for the fast one (NHWC, unit channel stride) the loops run
 * over contiguous channels in the innermost position. The per-channel
 * accumulators live in a fixed block on the stack (the pooling API has no
 * scratch buffer), so channels are processed in chunks of that size, and
 * the window bounds are computed once per output pixel, never per element.
 * The loop is written once and inlined into each of the two entries with
 * is_max a constant, so each keeps only its own branches, and a firmware
 * that calls one of them (-ffunction-sections, --gc-sections) links no code
 * of the other: the Cortex-M4 KWS firmware at -Os was 0.4 KB larger with
 * one loop for both.
 *
 * Also TFLite's int8 MEAN (reference_ops::QuantizedMeanOrSum), global
 * average pooling's generalisation to any set of axes: int32 sums in a
 * scratch buffer, then one requantization per output.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "isa.h"
#include "tvmnode/crt/kernels.h"
#include "reduce_walk.h"

/* Channels per chunk: 256 bytes of int32 accumulators on the stack. */
enum { CHUNK = 64 };

/* Whether the average's sums take a loop of their own for whole chunks:
 * where the ISA forms are (the host), not on a firmware, whose flash the
 * second loop would cost and whose compiler does not vectorise it. */
#define POOL_WHOLE_CHUNKS TN_CRT_HAVE_SSE2

static TnCrtStatus check_pool(const TnCrtPool2d *p, const int8_t *in,
                              const int8_t *out, int32_t act_min,
                              int32_t act_max, int32_t *lo, int32_t *hi) {
  if (p == NULL || in == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->channels <= 0 ||
      p->out_h <= 0 || p->out_w <= 0 || p->k_h <= 0 || p->k_w <= 0 ||
      p->stride_h <= 0 || p->stride_w <= 0 || p->pad_top < 0 ||
      p->pad_left < 0)
    return TN_CRT_INVALID_ARGUMENT;
  /* the window origins, ends and sizes stay within int32 */
  if ((int64_t)(p->out_h - 1) * p->stride_h + p->k_h > INT32_MAX ||
      (int64_t)(p->out_w - 1) * p->stride_w + p->k_w > INT32_MAX ||
      (int64_t)p->k_h * p->k_w > INT32_MAX)
    return TN_CRT_OVERFLOW;
  if (act_min > act_max) return TN_CRT_INVALID_ARGUMENT;
  *lo = act_min < -128 ? -128 : act_min;
  *hi = act_max > 127 ? 127 : act_max;
  if (*lo > *hi) return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

/* The part [*k0, *k1) of a window of k taps starting at input index
 * `origin` that lies inside [0, size) (TFLite's filter_*_start/end). */
static void window(int32_t origin, int32_t k, int32_t size, int32_t *k0,
                   int32_t *k1) {
  *k0 = origin < 0 ? -origin : 0;
  *k1 = size - origin < k ? size - origin : k;
  if (*k1 < *k0) *k1 = *k0;
}

static inline __attribute__((always_inline)) TnCrtStatus
pool(const TnCrtPool2d *p, const int8_t *in, int32_t act_min,
     int32_t act_max, int8_t *out, int is_max) {
  int32_t lo, hi;
  TnCrtStatus st = check_pool(p, in, out, act_min, act_max, &lo, &hi);
  if (st != TN_CRT_OK) return st;
  const int32_t *is = p->in_strides, *os = p->out_strides;
  const int32_t cs = is[3];
  int32_t acc[CHUNK];
  for (int32_t n = 0; n < p->batch; n++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy = oy * p->stride_h - p->pad_top;
      int32_t ky0, ky1;
      window(iy, p->k_h, p->in_h, &ky0, &ky1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix = ox * p->stride_w - p->pad_left;
        int32_t kx0, kx1;
        window(ix, p->k_w, p->in_w, &kx0, &kx1);
        const int32_t count = (ky1 - ky0) * (kx1 - kx0);
        /* TFLite fails an average over no input element; Relay's
         * count_include_pad divides by the whole window instead. */
        const int32_t div = p->count_include_pad ? p->k_h * p->k_w : count;
        if (!is_max && div == 0) return TN_CRT_INVALID_ARGUMENT;
        int8_t *dst = out + (ptrdiff_t)n * os[0] + (ptrdiff_t)oy * os[1] +
                      (ptrdiff_t)ox * os[2];
        for (int32_t c0 = 0; c0 < p->channels; c0 += CHUNK) {
          const int32_t len =
              p->channels - c0 < CHUNK ? p->channels - c0 : CHUNK;
          for (int32_t c = 0; c < len; c++) acc[c] = is_max ? -128 : 0;
          for (int32_t ky = ky0; ky < ky1; ky++) {
            const int8_t *row = in + (ptrdiff_t)n * is[0] +
                                (ptrdiff_t)(iy + ky) * is[1] +
                                (ptrdiff_t)c0 * cs;
            for (int32_t kx = kx0; kx < kx1; kx++) {
              const int8_t *px = row + (ptrdiff_t)(ix + kx) * is[2];
              if (is_max && cs == 1) {
                for (int32_t c = 0; c < len; c++)
                  acc[c] = px[c] > acc[c] ? px[c] : acc[c];
              } else if (is_max) {
                for (int32_t c = 0; c < len; c++)
                  acc[c] = px[c * cs] > acc[c] ? px[c * cs] : acc[c];
              } else if (cs == 1 && POOL_WHOLE_CHUNKS && len == CHUNK) {
                /* a whole chunk: a constant count, which the compiler
                 * vectorises at -O2 */
                for (int32_t c = 0; c < CHUNK; c++) acc[c] += px[c];
              } else if (cs == 1) {
                for (int32_t c = 0; c < len; c++) acc[c] += px[c];
              } else {
                for (int32_t c = 0; c < len; c++) acc[c] += px[c * cs];
              }
            }
          }
          for (int32_t c = 0; c < len; c++) {
            int32_t v = acc[c];
            /* TFLite's rounding: half away from zero, C's truncating
             * division doing the rest. */
            if (!is_max) v = v > 0 ? (v + div / 2) / div : (v - div / 2) / div;
            v = v < lo ? lo : v > hi ? hi : v;
            dst[(ptrdiff_t)(c0 + c) * os[3]] = (int8_t)v;
          }
        }
      }
    }
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_max_pool2d_s8(const TnCrtPool2d *p, const int8_t *in,
                                 int32_t act_min, int32_t act_max,
                                 int8_t *out) {
  return pool(p, in, act_min, act_max, out, 1);
}

TnCrtStatus tn_crt_avg_pool2d_s8(const TnCrtPool2d *p, const int8_t *in,
                                 int32_t act_min, int32_t act_max,
                                 int8_t *out) {
  return pool(p, in, act_min, act_max, out, 0);
}

/* ------------------------------------------------------------------------ */
/* Mean (TFLite's int8 MEAN)                                                 */
/* ------------------------------------------------------------------------ */

TnCrtStatus tn_crt_mean_s8_params(double input_scale, int32_t input_zp,
                                  double output_scale, int32_t output_zp,
                                  int32_t count, TnCrtQMean *out) {
  if (out == NULL || count < 0) return TN_CRT_INVALID_ARGUMENT;
  /* TFLite holds scales as float and divides them in double */
  double si = (double)(float)input_scale, so = (double)(float)output_scale;
  if (!(si > 0) || !(so > 0) || si - si != 0 || so - so != 0)
    return TN_CRT_INVALID_ARGUMENT;
  int32_t m, shift;
  TnCrtStatus st = tn_crt_quantize_multiplier(si / so, &m, &shift);
  if (st != TN_CRT_OK) return st;
  /* QuantizedMeanOrSum folds 1/count into the multiplier: scaled up by
   * 2^s first, s = floor(log2(count)) (so the quotient keeps 31 bits),
   * at most 32 and at most 31 + shift (the result's right shift stays
   * within 31); the quotient then fits in 31 bits. */
  if (count > 0) {
    int32_t s = 0;
    while (s < 32 && (INT64_C(1) << (s + 1)) <= count) s++;
    if (s > 31 + shift) s = 31 + shift;
    m = (int32_t)(((int64_t)m << s) / count);
    shift -= s;
  }
  out->input_zero_point = input_zp, out->output_zero_point = output_zp;
  out->count = count, out->multiplier = m, out->shift = shift;
  return TN_CRT_OK;
}

size_t tn_crt_mean_s8_scratch_size(const TnCrtReduce *p) {
  MeanWalk w;
  if (mean_walk(p, &w) != TN_CRT_OK) return 0;
  return (size_t)w.outputs * sizeof(int32_t);
}

TnCrtStatus tn_crt_mean_s8(const TnCrtReduce *p, const TnCrtQMean *q,
                           const int8_t *in, int8_t *out, void *scratch,
                           size_t scratch_size) {
  MeanWalk w;
  TnCrtStatus st = mean_walk(p, &w);
  if (st != TN_CRT_OK) return st;
  if (q == NULL || q->count != w.count || q->shift > 31 || q->shift < -31)
    return TN_CRT_INVALID_ARGUMENT;
  if (w.outputs == 0) return TN_CRT_OK;
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (w.count == 0) { /* TFLite returns before writing anything but 0 */
    for (int32_t i = 0; i < w.outputs; i++) out[i] = 0;
    return TN_CRT_OK;
  }
  if (in == NULL || scratch == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (scratch_size < (size_t)w.outputs * sizeof(int32_t))
    return TN_CRT_SCRATCH_TOO_SMALL;
  /* int32 sums that wrap as TFLite's (AddTensorValuesWithExpectedOverflow) */
  uint32_t *acc = scratch;
  for (int32_t i = 0; i < w.outputs; i++) acc[i] = 0;
  const int32_t n = w.row;
  for (int32_t r = 0; r < w.rows; r++, in += n, mean_next(&w)) {
    uint32_t *o = acc + w.off;
    if (w.inner_reduced) {
      uint32_t s = *o;
      for (int32_t j = 0; j < n; j++) s += (uint32_t)(int32_t)in[j];
      *o = s;
    } else {
      for (int32_t j = 0; j < n; j++) o[j] += (uint32_t)(int32_t)in[j];
    }
  }
  /* sum - zp * count in int64, then cast to int32 (wrapping) as TFLite */
  const uint32_t zp_count =
      (uint32_t)((int64_t)q->input_zero_point * (int64_t)w.count);
  for (int32_t i = 0; i < w.outputs; i++) {
    int32_t shifted = (int32_t)(acc[i] - zp_count);
    int32_t v = tn_crt_multiply_by_quantized_multiplier(
                    shifted, q->multiplier, q->shift) +
                q->output_zero_point;
    out[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(mean_s8, TnCrtCallMeanS8) {
  return tn_crt_mean_s8(&p->r, &p->q, in[0], out, scratch, scratch_size);
}
TN_CRT_CALL(max_pool2d_s8, TnCrtCallPoolS8) {
  return tn_crt_max_pool2d_s8(&p->g, in[0], p->act_min, p->act_max, out);
}
TN_CRT_CALL(avg_pool2d_s8, TnCrtCallPoolS8) {
  return tn_crt_avg_pool2d_s8(&p->g, in[0], p->act_min, p->act_max, out);
}
