/*
 * transpose_conv.c: TFLite's TRANSPOSE_CONV (the gradient of a strided
 * convolution), NHWC data and an OHWI filter as TFLite lays them out. Like
 * TFLite Micro's reference kernels it scatters: the output starts at zero
 * and every input element adds its products with the filter into the
 * outputs it reaches, in the input's order, so each float output sums its
 * terms in TFLite's order and comes out identical. The int8 form writes the
 * int32 sums of (x - input zero point) * w (the buffer TFLite keeps as
 * scratch is this form's output); the bias and the per-channel
 * requantization follow as their own calls, as for an unfused qnn.conv2d.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

static TnCrtStatus check_tconv(const TnCrtConvTranspose *p, const void *in,
                               const void *w, const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->in_c <= 0 ||
      p->out_h <= 0 || p->out_w <= 0 || p->out_c <= 0 || p->k_h <= 0 ||
      p->k_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)p->batch * p->out_h * p->out_w * p->out_c > INT32_MAX)
    return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}

/* The scatter: every input element (of type T, read as type V by LOAD)
 * times each filter tap whose output lies in bounds, added to that output
 * (of type O) by ACC. */
#define TCONV_SCATTER(T, O, V, LOAD)                                           \
  do {                                                                       \
    const ptrdiff_t orow = (ptrdiff_t)p->out_w * p->out_c;                   \
    const ptrdiff_t wrow = (ptrdiff_t)p->k_w * p->in_c;                      \
    const ptrdiff_t wch = (ptrdiff_t)p->k_h * wrow;                          \
    for (int32_t b = 0; b < p->batch; b++) {                                 \
      O *ob = out + (ptrdiff_t)b * p->out_h * orow;                          \
      for (int32_t iy = 0; iy < p->in_h; iy++)                               \
        for (int32_t ix = 0; ix < p->in_w; ix++)                             \
          for (int32_t ic = 0; ic < p->in_c; ic++) {                         \
            const V v = LOAD(*in++);                               \
            for (int32_t fy = 0; fy < p->k_h; fy++) {                        \
              const int32_t oy = iy * p->stride_h - p->pad_top + fy;         \
              if (oy < 0 || oy >= p->out_h) continue;                        \
              for (int32_t fx = 0; fx < p->k_w; fx++) {                      \
                const int32_t ox = ix * p->stride_w - p->pad_left + fx;      \
                if (ox < 0 || ox >= p->out_w) continue;                      \
                O *o = ob + oy * orow + (ptrdiff_t)ox * p->out_c;            \
                const T *wp = w + fy * wrow + (ptrdiff_t)fx * p->in_c + ic;  \
                for (int32_t oc = 0; oc < p->out_c; oc++)                    \
                  o[oc] = ACC(o[oc], v, wp[oc * wch]);                       \
              }                                                              \
            }                                                                \
          }                                                                  \
    }                                                                        \
  } while (0)

#define LOAD_F32(x) (x)
TnCrtStatus tn_crt_conv2d_transpose_f32(const TnCrtConvTranspose *p,
                                        const float *in, const float *w,
                                        float *out) {
  TnCrtStatus st = check_tconv(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  const size_t n = (size_t)p->batch * p->out_h * p->out_w * p->out_c;
  for (size_t i = 0; i < n; i++) out[i] = 0.0f;
#define ACC(o, v, wv) ((o) + (v) * (wv))
  TCONV_SCATTER(float, float, float, LOAD_F32);
#undef ACC
  return TN_CRT_OK;
}

/* int32 sums that wrap, as TFLite's do in practice. */
#define LOAD_S8(x) ((int32_t)(x) + input_offset)
TnCrtStatus tn_crt_conv2d_transpose_s8_s32(const TnCrtConvTranspose *p,
                                           int32_t input_offset,
                                           const int8_t *in, const int8_t *w,
                                           int32_t *out) {
  TnCrtStatus st = check_tconv(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  memset(out, 0, (size_t)p->batch * p->out_h * p->out_w * p->out_c *
                     sizeof(int32_t));
#define ACC(o, v, wv) ((int32_t)((uint32_t)(o) + (uint32_t)((v) * (wv))))
  TCONV_SCATTER(int8_t, int32_t, int32_t, LOAD_S8);
#undef ACC
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(conv2d_transpose_f32, TnCrtConvTranspose) {
  return tn_crt_conv2d_transpose_f32(p, in[0], in[1], out);
}
TN_CRT_CALL(conv2d_transpose_s8_s32, TnCrtCallConvTransposeS32) {
  return tn_crt_conv2d_transpose_s8_s32(&p->g, p->input_offset, in[0], in[1],
                                        out);
}
