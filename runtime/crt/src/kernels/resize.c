/*
 * resize.c: 2-D resizing of NHWC tensors, TFLite Micro's RESIZE_BILINEAR
 * and RESIZE_NEAREST_NEIGHBOR bit for bit. Nearest neighbour copies whole
 * pixels (every channel at once) by element size, so one kernel serves
 * every dtype; the source pixel is found with the same float arithmetic
 * TFLite uses (a float scale, floor or round-half-away), which the
 * lowering cannot precompute without tables as large as the output.
 * Bilinear has two forms, as TFLite has: float32 weights in float, and the
 * int8 form in 10-bit fixed point (the coordinates scaled by 1024, the four
 * products summed in int64 and divided by 2^20, rounding half away from
 * zero), which uses no float at all.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

static TnCrtStatus check_resize(const TnCrtResize *p, const void *in,
                                const void *out) {
  if (p == NULL || in == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->channels <= 0 ||
      p->out_h <= 0 || p->out_w <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  /* TFLite refuses both at once */
  if (p->align_corners && p->half_pixel_centers)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)p->batch * p->out_h * p->out_w * p->channels > INT32_MAX ||
      (int64_t)p->batch * p->in_h * p->in_w * p->channels > INT32_MAX)
    return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}

/* The float ratio of input to output extent along one axis. */
static float axis_scale(int32_t in, int32_t out, int32_t align) {
  if (align && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}

/* ---- nearest neighbour ----------------------------------------------------- */

static int32_t nearest(int32_t v, int32_t in, float scale, int32_t align,
                       int32_t half) {
  const float x = ((float)v + (half ? 0.5f : 0.0f)) * scale;
  int32_t i = align ? (int32_t)roundf(x) : (int32_t)floorf(x);
  if (i > in - 1) i = in - 1;
  if (half && i < 0) i = 0;
  return i;
}

TnCrtStatus tn_crt_resize_nearest(const TnCrtResize *p, const void *in,
                                  void *out) {
  TnCrtStatus st = check_resize(p, in, out);
  if (st != TN_CRT_OK) return st;
  const int32_t es = p->elem_size;
  if (es != 1 && es != 2 && es != 4 && es != 8) return TN_CRT_INVALID_ARGUMENT;
  const float sy = axis_scale(p->in_h, p->out_h, p->align_corners);
  const float sx = axis_scale(p->in_w, p->out_w, p->align_corners);
  const size_t pixel = (size_t)p->channels * (size_t)es;
  const size_t row = pixel * (size_t)p->in_w;
  const unsigned char *src = (const unsigned char *)in;
  unsigned char *dst = (unsigned char *)out;
  for (int32_t b = 0; b < p->batch; b++) {
    const unsigned char *img = src + (size_t)b * row * (size_t)p->in_h;
    for (int32_t y = 0; y < p->out_h; y++) {
      const int32_t iy =
          nearest(y, p->in_h, sy, p->align_corners, p->half_pixel_centers);
      const unsigned char *r = img + (size_t)iy * row;
      for (int32_t x = 0; x < p->out_w; x++) {
        const int32_t ix =
            nearest(x, p->in_w, sx, p->align_corners, p->half_pixel_centers);
        memcpy(dst, r + (size_t)ix * pixel, pixel);
        dst += pixel;
      }
    }
  }
  return TN_CRT_OK;
}

/* ---- bilinear, float32 ------------------------------------------------------- */

/* The source coordinate of output index v and its two neighbours. */
static void source_f32(int32_t v, float scale, int32_t half, int32_t in,
                       float *pos, int32_t *lo, int32_t *hi) {
  const float s = half ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
  const float fl = floorf(s), ce = -floorf(-s);
  *pos = s;
  *lo = (int32_t)fl > 0 ? (int32_t)fl : 0;
  *hi = (int32_t)ce < in - 1 ? (int32_t)ce : in - 1;
}

TnCrtStatus tn_crt_resize_bilinear_f32(const TnCrtResize *p, const float *in,
                                       float *out) {
  TnCrtStatus st = check_resize(p, in, out);
  if (st != TN_CRT_OK) return st;
  const float sy = axis_scale(p->in_h, p->out_h, p->align_corners);
  const float sx = axis_scale(p->in_w, p->out_w, p->align_corners);
  const int32_t c = p->channels;
  const ptrdiff_t row = (ptrdiff_t)p->in_w * c;
  for (int32_t b = 0; b < p->batch; b++) {
    const float *img = in + (ptrdiff_t)b * row * p->in_h;
    for (int32_t y = 0; y < p->out_h; y++) {
      float fy;
      int32_t y0, y1;
      source_f32(y, sy, p->half_pixel_centers, p->in_h, &fy, &y0, &y1);
      const float dy = fy - (float)y0;
      for (int32_t x = 0; x < p->out_w; x++) {
        float fx;
        int32_t x0, x1;
        source_f32(x, sx, p->half_pixel_centers, p->in_w, &fx, &x0, &x1);
        const float dx = fx - (float)x0;
        const float *a = img + y0 * row + (ptrdiff_t)x0 * c;
        const float *bb = img + y1 * row + (ptrdiff_t)x0 * c;
        const float *cc = img + y0 * row + (ptrdiff_t)x1 * c;
        const float *d = img + y1 * row + (ptrdiff_t)x1 * c;
        /* the products in TFLite's order, so the float sums agree */
        for (int32_t k = 0; k < c; k++)
          *out++ = a[k] * (1 - dy) * (1 - dx) + bb[k] * dy * (1 - dx) +
                   cc[k] * (1 - dy) * dx + d[k] * dy * dx;
      }
    }
  }
  return TN_CRT_OK;
}

/* ---- bilinear, int8 (10-bit fixed point) --------------------------------------- */

/* (1024 * num + den / 2) / den: a ratio with 10 fraction bits. */
static int32_t scale_q10(int32_t num, int32_t den) {
  return (int32_t)(((int64_t)num * 1024 + den / 2) / den);
}

static void source_q10(int32_t v, int32_t scale, int32_t half, int32_t in,
                       int32_t *pos, int32_t *lo, int32_t *hi) {
  const int32_t s = half ? v * scale + scale / 2 - 512 : v * scale;
  const int32_t l = s / 1024, h = (s + 1023) / 1024;
  *pos = s;
  *lo = l > 0 ? l : 0;
  *hi = h < in - 1 ? h : in - 1;
}

TnCrtStatus tn_crt_resize_bilinear_s8(const TnCrtResize *p, const int8_t *in,
                                      int8_t *out) {
  TnCrtStatus st = check_resize(p, in, out);
  if (st != TN_CRT_OK) return st;
  int32_t sy = scale_q10(p->in_h, p->out_h), sx = scale_q10(p->in_w, p->out_w);
  if (p->align_corners && p->out_h > 1) sy = scale_q10(p->in_h - 1, p->out_h - 1);
  if (p->align_corners && p->out_w > 1) sx = scale_q10(p->in_w - 1, p->out_w - 1);
  const int32_t c = p->channels;
  const ptrdiff_t row = (ptrdiff_t)p->in_w * c;
  for (int32_t b = 0; b < p->batch; b++) {
    const int8_t *img = in + (ptrdiff_t)b * row * p->in_h;
    for (int32_t y = 0; y < p->out_h; y++) {
      int32_t fy, y0, y1;
      source_q10(y, sy, p->half_pixel_centers, p->in_h, &fy, &y0, &y1);
      const int64_t wy1 = fy - 1024 * y0, wy0 = 1024 - wy1;
      for (int32_t x = 0; x < p->out_w; x++) {
        int32_t fx, x0, x1;
        source_q10(x, sx, p->half_pixel_centers, p->in_w, &fx, &x0, &x1);
        const int64_t wx1 = fx - 1024 * x0, wx0 = 1024 - wx1;
        const int8_t *a = img + y0 * row + (ptrdiff_t)x0 * c;
        const int8_t *bb = img + y1 * row + (ptrdiff_t)x0 * c;
        const int8_t *cc = img + y0 * row + (ptrdiff_t)x1 * c;
        const int8_t *d = img + y1 * row + (ptrdiff_t)x1 * c;
        for (int32_t k = 0; k < c; k++) {
          const int64_t v = a[k] * wy0 * wx0 + bb[k] * wy1 * wx0 +
                            cc[k] * wy0 * wx1 + d[k] * wy1 * wx1;
          const int64_t r = v > 0 ? (1 << 19) : -(1 << 19);
          *out++ = (int8_t)((v + r) / (1 << 20));
        }
      }
    }
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(resize_nearest, TnCrtResize) {
  return tn_crt_resize_nearest(p, in[0], out);
}
TN_CRT_CALL(resize_bilinear_f32, TnCrtResize) {
  return tn_crt_resize_bilinear_f32(p, in[0], out);
}
TN_CRT_CALL(resize_bilinear_s8, TnCrtResize) {
  return tn_crt_resize_bilinear_s8(p, in[0], out);
}
