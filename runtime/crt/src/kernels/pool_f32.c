/*
 * pool_f32.c: float32 2-D max and average pooling for the crt, in any layout
 * (strides per logical axis, as for convolution), with explicit padding
 * that is never materialised: the range of in-bounds window taps is
 * computed once per output row and column, so out-of-bounds positions are
 * simply not visited (padding never wins a max; an average divides by the
 * in-bounds count as TFLite does, or by k_h * k_w with count_include_pad).
 * A window with no in-bounds tap at all gives -INFINITY (max) or 0
 * (average) before the clamp. When channels are contiguous (NHWC) each
 * output pixel is built as a vector over channels, tap by tap, which a
 * compiler vectorises; other layouts walk each window with strides.
 *
 * Also mean, global average pooling's generalisation to any set of axes
 * (float32 and int32; the int8 MEAN is in pool_s8.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "reduce_walk.h"
#include "unroll.h"

/* As in conv_f32.c: t in [*lo, *hi) (<= limit) with base + t in [0, size). */
static void in_bounds(int32_t base, int32_t size, int32_t limit, int32_t *lo,
                      int32_t *hi) {
  int32_t l = base >= 0 ? 0 : -base;
  int32_t h = size - base < 0 ? 0 : size - base;
  if (h > limit) h = limit;
  if (l > h) l = h;
  *lo = l, *hi = h;
}

static TnCrtStatus check(const TnCrtPool2d *p) {
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->channels <= 0 ||
      p->out_h <= 0 || p->out_w <= 0 || p->k_h <= 0 || p->k_w <= 0 ||
      p->stride_h <= 0 || p->stride_w <= 0 || p->pad_top < 0 ||
      p->pad_left < 0)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)(p->out_h - 1) * p->stride_h + p->k_h > INT32_MAX ||
      (int64_t)(p->out_w - 1) * p->stride_w + p->k_w > INT32_MAX ||
      (int64_t)p->in_h + p->pad_top > INT32_MAX ||
      (int64_t)p->in_w + p->pad_left > INT32_MAX ||
      (int64_t)p->k_h * p->k_w > INT32_MAX)
    return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}

static inline float clamp(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* The channels-last steps: a tap folded into the output pixel, and the
 * pixel finished (divided by its count when count > 0, then clamped). */
static void tap_max(int32_t n, const float *restrict x, float *restrict o) {
  EACH(n, c, o[c] = x[c] > o[c] ? x[c] : o[c]);
}
static void tap_add(int32_t n, const float *restrict x, float *restrict o) {
  EACH(n, c, o[c] += x[c]);
}
static void finish(int32_t n, float count, float lo, float hi,
                   float *restrict o) {
  if (count > 0.0f) EACH(n, c, o[c] /= count);
  EACH(n, c, o[c] = clamp(o[c], lo, hi));
}

/* The one loop nest of both pools; on the channels-last path the test of
 * is_max is per tap, outside the vector loop over channels. */
static void pool(const TnCrtPool2d *p, int is_max, const float *restrict in,
                 float lo, float hi, float *restrict out) {
  const int32_t C = p->channels;
  const ptrdiff_t is0 = p->in_strides[0], is1 = p->in_strides[1],
                  is2 = p->in_strides[2], is3 = p->in_strides[3];
  const ptrdiff_t os0 = p->out_strides[0], os1 = p->out_strides[1],
                  os2 = p->out_strides[2], os3 = p->out_strides[3];
  const float init = is_max ? -INFINITY : 0.0f;
  const int channels_last = is3 == 1 && os3 == 1;
  for (int32_t n = 0; n < p->batch; n++) {
    const float *xn = in + n * is0;
    for (int32_t oh = 0; oh < p->out_h; oh++) {
      const int32_t bh = oh * p->stride_h - p->pad_top;
      int32_t kh0, kh1;
      in_bounds(bh, p->in_h, p->k_h, &kh0, &kh1);
      for (int32_t ow = 0; ow < p->out_w; ow++) {
        const int32_t bw = ow * p->stride_w - p->pad_left;
        int32_t kw0, kw1;
        in_bounds(bw, p->in_w, p->k_w, &kw0, &kw1);
        const int32_t taps = (kh1 - kh0) * (kw1 - kw0);
        const float count = (float)(p->count_include_pad ? p->k_h * p->k_w
                                                          : taps);
        float *o = out + n * os0 + oh * os1 + ow * os2;
        if (channels_last) {
          EACH(C, c, o[c] = init);
          for (int32_t kh = kh0; kh < kh1; kh++)
            for (int32_t kw = kw0; kw < kw1; kw++) {
              const float *x = xn + (bh + kh) * is1 + (bw + kw) * is2;
              if (is_max)
                tap_max(C, x, o);
              else
                tap_add(C, x, o);
            }
          finish(C, is_max || taps == 0 ? 0.0f : count, lo, hi, o);
          continue;
        }
        for (int32_t c = 0; c < C; c++) {
          const float *xc = xn + c * is3;
          float v = init;
          for (int32_t kh = kh0; kh < kh1; kh++) {
            const float *x = xc + (bh + kh) * is1;
            for (int32_t kw = kw0; kw < kw1; kw++) {
              const float t = x[(bw + kw) * is2];
              if (is_max)
                v = t > v ? t : v;
              else
                v += t;
            }
          }
          if (!is_max && taps > 0) v /= count;
          o[c * os3] = clamp(v, lo, hi);
        }
      }
    }
  }
}

TnCrtStatus tn_crt_max_pool2d_f32(const TnCrtPool2d *p, const float *in,
                                  float act_min, float act_max, float *out) {
  if (!p || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  pool(p, 1, in, act_min, act_max, out);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_avg_pool2d_f32(const TnCrtPool2d *p, const float *in,
                                  float act_min, float act_max, float *out) {
  if (!p || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  pool(p, 0, in, act_min, act_max, out);
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Mean (float32, int32)                                                     */
/* ------------------------------------------------------------------------ */

TnCrtStatus tn_crt_mean_f32(const TnCrtReduce *p, const float *in,
                            float *out) {
  MeanWalk w;
  TnCrtStatus st = mean_walk(p, &w);
  if (st != TN_CRT_OK) return st;
  if (w.outputs > 0 && (out == NULL || (w.rows > 0 && in == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < w.outputs; i++) out[i] = 0.0f;
  const int32_t n = w.row;
  for (int32_t r = 0; r < w.rows; r++, in += n, mean_next(&w)) {
    float *o = out + w.off;
    if (w.inner_reduced) {
      float s = *o;
      for (int32_t j = 0; j < n; j++) s += in[j];
      *o = s;
    } else {
      EACH(n, j, o[j] += in[j]);
    }
  }
  /* TFLite divides by the count converted to float (exact below 2^24) */
  const float c = (float)w.count;
  for (int32_t i = 0; i < w.outputs; i++) out[i] = out[i] / c;
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_mean_i32(const TnCrtReduce *p, const int32_t *in,
                            int32_t *out) {
  MeanWalk w;
  TnCrtStatus st = mean_walk(p, &w);
  if (st != TN_CRT_OK) return st;
  if (w.outputs > 0 && (out == NULL || (w.rows > 0 && in == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  /* sums wrap (unsigned arithmetic), as int32 addition does in TVM */
  uint32_t *acc = (uint32_t *)(void *)out;
  for (int32_t i = 0; i < w.outputs; i++) acc[i] = 0;
  const int32_t n = w.row;
  for (int32_t r = 0; r < w.rows; r++, in += n, mean_next(&w)) {
    uint32_t *o = acc + w.off;
    if (w.inner_reduced) {
      uint32_t s = *o;
      for (int32_t j = 0; j < n; j++) s += (uint32_t)in[j];
      *o = s;
    } else {
      EACH(n, j, o[j] += (uint32_t)in[j]);
    }
  }
  for (int32_t i = 0; i < w.outputs; i++)
    out[i] = w.count ? (int32_t)acc[i] / w.count : 0;
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(mean_f32, TnCrtReduce) { return tn_crt_mean_f32(p, in[0], out); }
TN_CRT_CALL(mean_i32, TnCrtReduce) { return tn_crt_mean_i32(p, in[0], out); }
TN_CRT_CALL(max_pool2d_f32, TnCrtCallPoolF32) {
  return tn_crt_max_pool2d_f32(&p->g, in[0], p->act_min, p->act_max, out);
}
TN_CRT_CALL(avg_pool2d_f32, TnCrtCallPoolF32) {
  return tn_crt_avg_pool2d_f32(&p->g, in[0], p->act_min, p->act_max, out);
}
