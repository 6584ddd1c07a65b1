/*
 * conv_s16.c: the accumulating halves of TFLite's 16x8 convolution and
 * fully-connected layer (int16 activations, int8 weights, int64 bias;
 * reference/integer_ops/conv.h, depthwise_conv.h and fully_connected.h
 * with an int64 AccumScalar), and the int64 bias add that follows them.
 * The accumulators are int64, so the order of the sums cannot change a
 * result: the loops are the plain ones, one output at a time, reading
 * every tensor through the strides of its logical axes as the int8 and
 * float kernels do. int16 activations are symmetric (zero point 0), so
 * there is no input offset; the weight offset is kept for the per-tensor
 * layers TFLite still gives one. QUANTIZE's requantize_int (quant16.c)
 * brings the int64 results to int16 with TFLite's 64-bit multiply; the
 * fused forms (conv2d_s16, dense_s16: FuseOps' layer of sum, bias,
 * requantize and activation) do all of it per output, with no int64
 * tensor in between.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "fixed_point.h"

static int conv_ok(const TnCrtConv2d *p) {
  return p->batch > 0 && p->in_h > 0 && p->in_w > 0 && p->in_c > 0 &&
         p->out_h > 0 && p->out_w > 0 && p->out_c > 0 && p->k_h > 0 &&
         p->k_w > 0 && p->stride_h > 0 && p->stride_w > 0 &&
         p->dilation_h > 0 && p->dilation_w > 0 && p->pad_top >= 0 &&
         p->pad_left >= 0 && p->groups > 0 && p->in_c % p->groups == 0 &&
         p->out_c % p->groups == 0;
}

/* One output's int64 sum. */
static int64_t conv_acc(const TnCrtConv2d *p, int32_t filter_offset,
                        const int16_t *in, const int8_t *w, int32_t n,
                        int32_t oh, int32_t ow, int32_t oc) {
  const int32_t *is = p->in_strides, *ws = p->w_strides;
  const int32_t cig = p->in_c / p->groups, cog = p->out_c / p->groups;
  const int32_t c0 = (oc / cog) * cig;
  int64_t acc = 0;
  for (int32_t kh = 0; kh < p->k_h; kh++) {
    const int64_t ih = (int64_t)oh * p->stride_h - p->pad_top +
                       (int64_t)kh * p->dilation_h;
    if (ih < 0 || ih >= p->in_h) continue;
    for (int32_t kw = 0; kw < p->k_w; kw++) {
      const int64_t iw = (int64_t)ow * p->stride_w - p->pad_left +
                         (int64_t)kw * p->dilation_w;
      if (iw < 0 || iw >= p->in_w) continue;
      const int16_t *x = in + (ptrdiff_t)n * is[0] + (ptrdiff_t)ih * is[1] +
                         (ptrdiff_t)iw * is[2] + (ptrdiff_t)c0 * is[3];
      const int8_t *f = w + (ptrdiff_t)kh * ws[0] + (ptrdiff_t)kw * ws[1] +
                        (ptrdiff_t)oc * ws[3];
      for (int32_t ci = 0; ci < cig; ci++)
        acc += (int64_t)((int32_t)f[(ptrdiff_t)ci * ws[2]] + filter_offset) *
               x[(ptrdiff_t)ci * is[3]];
    }
  }
  return acc;
}

static int64_t dense_acc(const TnCrtDense *p, int32_t filter_offset,
                         const int16_t *x, const int8_t *w, int32_t j) {
  const int8_t *f = w + (ptrdiff_t)j * p->w_stride_n;
  int64_t acc = 0;
  for (int32_t i = 0; i < p->in_features; i++)
    acc += (int64_t)((int32_t)f[(ptrdiff_t)i * p->w_stride_k] +
                     filter_offset) * x[i];
  return acc;
}

static int dense_ok(const TnCrtDense *p) {
  return p->batch > 0 && p->in_features > 0 && p->out_features > 0;
}

/* The fused layers' end, TFLite's: the sum plus the bias (wrapping as
 * the separate int64 bias add does), the 64-bit multiply of channel c's
 * multiplier, the output zero point, clamped to the activation range
 * within int16. */
static int requant_ok(const TnCrtRequant *r, int32_t channels) {
  return r != NULL && r->multiplier != NULL && r->shift != NULL &&
         (r->channels == 1 || r->channels == channels) &&
         r->input_zero_point == 0 && r->act_min <= r->act_max;
}

static int16_t requant16(const TnCrtRequant *r, const int64_t *bias,
                         int32_t c, int64_t acc) {
  if (bias) acc = (int64_t)((uint64_t)acc + (uint64_t)bias[c]);
  const int32_t k = r->channels == 1 ? 0 : c;
  const int32_t lo = r->act_min < INT16_MIN ? INT16_MIN : r->act_min;
  const int32_t hi = r->act_max > INT16_MAX ? INT16_MAX : r->act_max;
  const int32_t v = (int32_t)((uint32_t)tn__crt_mbqm64(acc, r->multiplier[k],
                                                       r->shift[k]) +
                              (uint32_t)r->output_zero_point);
  return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}

/* Both forms' loops: the int64 sums into out64, or (r set) the fused
 * layer's int16 results into out16. */
static TnCrtStatus conv_run(const TnCrtConv2d *p, int32_t filter_offset,
                            const TnCrtRequant *r, const int16_t *in,
                            const int8_t *w, const int64_t *bias,
                            int64_t *out64, int16_t *out16) {
  if (p == NULL || in == NULL || w == NULL || (out64 == NULL && out16 == NULL) ||
      !conv_ok(p) || (r != NULL && !requant_ok(r, p->out_c)))
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t *os = p->out_strides;
  for (int32_t n = 0; n < p->batch; n++)
    for (int32_t oh = 0; oh < p->out_h; oh++)
      for (int32_t ow = 0; ow < p->out_w; ow++)
        for (int32_t oc = 0; oc < p->out_c; oc++) {
          const ptrdiff_t at = (ptrdiff_t)n * os[0] + (ptrdiff_t)oh * os[1] +
                               (ptrdiff_t)ow * os[2] + (ptrdiff_t)oc * os[3];
          const int64_t acc = conv_acc(p, filter_offset, in, w, n, oh, ow, oc);
          if (r) out16[at] = requant16(r, bias, oc, acc);
          else out64[at] = acc;
        }
  return TN_CRT_OK;
}

static TnCrtStatus dense_run(const TnCrtDense *p, int32_t filter_offset,
                             const TnCrtRequant *r, const int16_t *in,
                             const int8_t *w, const int64_t *bias,
                             int64_t *out64, int16_t *out16) {
  if (p == NULL || in == NULL || w == NULL || (out64 == NULL && out16 == NULL) ||
      !dense_ok(p) || (r != NULL && !requant_ok(r, p->out_features)))
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t k_n = p->in_features, n_n = p->out_features;
  for (int32_t m = 0; m < p->batch; m++)
    for (int32_t j = 0; j < n_n; j++) {
      const ptrdiff_t at = (ptrdiff_t)m * n_n + j;
      const int64_t acc = dense_acc(p, filter_offset, in + (ptrdiff_t)m * k_n, w, j);
      if (r) out16[at] = requant16(r, bias, j, acc);
      else out64[at] = acc;
    }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_conv2d_s16_s64(const TnCrtConv2d *p, int32_t filter_offset,
                                  const int16_t *in, const int8_t *w,
                                  int64_t *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  return conv_run(p, filter_offset, NULL, in, w, NULL, out, NULL);
}

TnCrtStatus tn_crt_dense_s16_s64(const TnCrtDense *p, int32_t filter_offset,
                                 const int16_t *in, const int8_t *w,
                                 int64_t *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  return dense_run(p, filter_offset, NULL, in, w, NULL, out, NULL);
}

TnCrtStatus tn_crt_conv2d_s16(const TnCrtConv2d *p, int32_t filter_offset,
                              const TnCrtRequant *r, const int16_t *in,
                              const int8_t *w, const int64_t *bias,
                              int16_t *out) {
  if (r == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  return conv_run(p, filter_offset, r, in, w, bias, NULL, out);
}

TnCrtStatus tn_crt_dense_s16(const TnCrtDense *p, int32_t filter_offset,
                             const TnCrtRequant *r, const int16_t *in,
                             const int8_t *w, const int64_t *bias,
                             int16_t *out) {
  if (r == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  return dense_run(p, filter_offset, r, in, w, bias, NULL, out);
}

TnCrtStatus tn_crt_bias_add_i64(int32_t outer, int32_t channels,
                                int32_t inner, const int64_t *in,
                                const int64_t *bias, int64_t *out) {
  if (in == NULL || bias == NULL || out == NULL || outer <= 0 ||
      channels <= 0 || inner <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  size_t at = 0;
  for (int32_t o = 0; o < outer; o++)
    for (int32_t c = 0; c < channels; c++)
      for (int32_t i = 0; i < inner; i++, at++)
        /* TFLite adds in int64 and its sums stay far inside the range;
         * wrapping keeps an adversarial bias defined */
        out[at] = (int64_t)((uint64_t)in[at] + (uint64_t)bias[c]);
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(conv2d_s16_s64, TnCrtCallConvS32) {
  if (p->input_offset != 0) return TN_CRT_UNSUPPORTED;
  return tn_crt_conv2d_s16_s64(&p->g, p->filter_offset, in[0], in[1], out);
}
TN_CRT_CALL(dense_s16_s64, TnCrtCallDenseS32) {
  if (p->input_offset != 0) return TN_CRT_UNSUPPORTED;
  return tn_crt_dense_s16_s64(&p->d, p->filter_offset, in[0], in[1], out);
}
TN_CRT_CALL(conv2d_s16, TnCrtCallConvS16) {
  return tn_crt_conv2d_s16(&p->g, p->filter_offset, &p->r, in[0], in[1],
                           p->has_bias ? in[2] : NULL, out);
}
TN_CRT_CALL(dense_s16, TnCrtCallDenseS16) {
  return tn_crt_dense_s16(&p->d, p->filter_offset, &p->r, in[0], in[1],
                          p->has_bias ? in[2] : NULL, out);
}
TN_CRT_CALL(bias_add_i64, TnCrtCallAxis) {
  return tn_crt_bias_add_i64(p->outer, p->channels, p->inner, in[0], in[1],
                             out);
}
