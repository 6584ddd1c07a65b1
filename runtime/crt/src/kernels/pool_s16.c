/*
 * pool_s16.c: int16 max and average pooling (TFLite's 16x8 mode), TFLite
 * Micro's reference (integer_ops/pooling.h, the int16 overloads): the
 * window cut to the input, the average over the elements it covers in
 * int32, rounded half away from zero, both clamped to the activation
 * range. One output element at a time through the layout's strides: the
 * int16 models these serve are small, and the int8 kernel's channel
 * blocking (pool_s8.c) is a speed-up, not a different arithmetic.
 * Also the int16 MEAN, pool_s8.c's on int16 elements.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "reduce_walk.h"

static int pool_ok(const TnCrtPool2d *p) {
  return p->batch > 0 && p->in_h > 0 && p->in_w > 0 && p->channels > 0 &&
         p->out_h > 0 && p->out_w > 0 && p->k_h > 0 && p->k_w > 0 &&
         p->stride_h > 0 && p->stride_w > 0 && p->pad_top >= 0 &&
         p->pad_left >= 0 &&
         (int64_t)(p->out_h - 1) * p->stride_h + p->k_h <= INT32_MAX &&
         (int64_t)(p->out_w - 1) * p->stride_w + p->k_w <= INT32_MAX &&
         (int64_t)p->k_h * p->k_w <= INT32_MAX;
}

/* [*a, *b): the taps of a window from `origin` of k taps inside [0, n). */
static void cut(int32_t origin, int32_t k, int32_t n, int32_t *a,
                int32_t *b) {
  *a = origin < 0 ? -origin : 0;
  *b = n - origin < k ? n - origin : k;
  if (*b < *a) *b = *a;
}

static TnCrtStatus pool16(const TnCrtPool2d *p, const int16_t *in,
                          int32_t act_min, int32_t act_max, int16_t *out,
                          int is_max) {
  if (p == NULL || in == NULL || out == NULL || !pool_ok(p) ||
      act_min > act_max)
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t lo = act_min < INT16_MIN ? INT16_MIN : act_min;
  const int32_t hi = act_max > INT16_MAX ? INT16_MAX : act_max;
  if (lo > hi) return TN_CRT_INVALID_ARGUMENT;
  const int32_t *is = p->in_strides, *os = p->out_strides;
  for (int32_t n = 0; n < p->batch; n++)
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy = oy * p->stride_h - p->pad_top;
      int32_t y0, y1;
      cut(iy, p->k_h, p->in_h, &y0, &y1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix = ox * p->stride_w - p->pad_left;
        int32_t x0, x1;
        cut(ix, p->k_w, p->in_w, &x0, &x1);
        const int32_t div = p->count_include_pad ? p->k_h * p->k_w
                                                 : (y1 - y0) * (x1 - x0);
        if (!is_max && div == 0) return TN_CRT_INVALID_ARGUMENT;
        for (int32_t c = 0; c < p->channels; c++) {
          int32_t acc = is_max ? INT16_MIN : 0;
          for (int32_t ky = y0; ky < y1; ky++)
            for (int32_t kx = x0; kx < x1; kx++) {
              const int32_t v =
                  in[(ptrdiff_t)n * is[0] + (ptrdiff_t)(iy + ky) * is[1] +
                     (ptrdiff_t)(ix + kx) * is[2] + (ptrdiff_t)c * is[3]];
              if (is_max) acc = v > acc ? v : acc;
              else acc += v;
            }
          if (!is_max)
            acc = acc > 0 ? (acc + div / 2) / div : (acc - div / 2) / div;
          acc = acc < lo ? lo : acc > hi ? hi : acc;
          out[(ptrdiff_t)n * os[0] + (ptrdiff_t)oy * os[1] +
              (ptrdiff_t)ox * os[2] + (ptrdiff_t)c * os[3]] = (int16_t)acc;
        }
      }
    }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_max_pool2d_s16(const TnCrtPool2d *p, const int16_t *in,
                                  int32_t act_min, int32_t act_max,
                                  int16_t *out) {
  return pool16(p, in, act_min, act_max, out, 1);
}

TnCrtStatus tn_crt_avg_pool2d_s16(const TnCrtPool2d *p, const int16_t *in,
                                  int32_t act_min, int32_t act_max,
                                  int16_t *out) {
  return pool16(p, in, act_min, act_max, out, 0);
}

/* ------------------------------------------------------------------------ */
/* Mean (TFLite's QuantizedMeanOrSum on int16)                               */
/* ------------------------------------------------------------------------ */

/* tn_crt_mean_s8's walk and arithmetic on int16: int32 sums that wrap,
 * minus zp * count, the multiplier with 1/count folded in
 * (tn_crt_mean_s8_params), the int16 clamp. */
TnCrtStatus tn_crt_mean_s16(const TnCrtReduce *p, const TnCrtQMean *q,
                            const int16_t *in, int16_t *out, void *scratch,
                            size_t scratch_size) {
  MeanWalk w;
  TnCrtStatus st = mean_walk(p, &w);
  if (st != TN_CRT_OK) return st;
  if (q == NULL || q->count != w.count || q->shift > 31 || q->shift < -31)
    return TN_CRT_INVALID_ARGUMENT;
  if (w.outputs == 0) return TN_CRT_OK;
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (w.count == 0) {
    for (int32_t i = 0; i < w.outputs; i++) out[i] = 0;
    return TN_CRT_OK;
  }
  if (in == NULL || scratch == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (scratch_size < (size_t)w.outputs * sizeof(int32_t))
    return TN_CRT_SCRATCH_TOO_SMALL;
  uint32_t *sum = scratch;
  for (int32_t i = 0; i < w.outputs; i++) sum[i] = 0;
  for (int32_t r = 0; r < w.rows; r++, in += w.row, mean_next(&w))
    for (int32_t j = 0; j < w.row; j++)
      sum[w.off + (w.inner_reduced ? 0 : j)] += (uint32_t)(int32_t)in[j];
  const uint32_t bias =
      (uint32_t)((int64_t)q->input_zero_point * (int64_t)w.count);
  for (int32_t i = 0; i < w.outputs; i++) {
    const int32_t v = tn_crt_multiply_by_quantized_multiplier(
                          (int32_t)(sum[i] - bias), q->multiplier, q->shift) +
                      q->output_zero_point;
    out[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(max_pool2d_s16, TnCrtCallPoolS8) {
  return tn_crt_max_pool2d_s16(&p->g, in[0], p->act_min, p->act_max, out);
}
TN_CRT_CALL(avg_pool2d_s16, TnCrtCallPoolS8) {
  return tn_crt_avg_pool2d_s16(&p->g, in[0], p->act_min, p->act_max, out);
}
TN_CRT_CALL(mean_s16, TnCrtCallMeanS8) {
  return tn_crt_mean_s16(&p->r, &p->q, in[0], out, scratch, scratch_size);
}
