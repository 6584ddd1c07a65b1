/*
 * conv_f32.c: the float32 2-D convolution of the crt, in any layout (each
 * tensor addressed through element strides of its logical axes), with
 * groups, dilation, strides, explicit padding, optional bias and a fused
 * clamp. Everything is built on one primitive: a block of 16 (8, 4)
 * accumulators held in registers while a run of weights and inputs is
 * multiplied into it, one operand broadcast and the other contiguous. The
 * strides pick what the block spans:
 *  - channels-last (weight and output channels contiguous: NHWC/HWIO):
 *    a block of output channels of one pixel, over the in-bounds taps and
 *    the group's input channels (kw and ci fused into one run when both
 *    tensors allow it). The block loop is outermost, so its slice of the
 *    weights stays in cache while the pixels stream past;
 *  - depthwise channels-last with multiplier 1: a block of channels of one
 *    pixel, the taps of a kernel row in one run;
 *  - anything else (NCHW/OIHW and mixtures): one output row at a time
 *    (fixed batch, channel and row). With unit-stride columns and stride 1
 *    its interior columns, whose taps are all in bounds, are blocks of
 *    columns; the border columns, and every column otherwise, take each
 *    weight times the run of columns whose input is in bounds.
 * Padding is never materialised: the range of in-bounds taps (or columns)
 * is computed once per pixel or row, so no bounds test runs per
 * multiply-add. On x86 with AVX2 the channels-last and depthwise paths
 * go to their vector forms (x86/conv_f32.c, conv_f32.h): the same sums
 * in the same order, with the multiply-adds fused.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "conv_f32.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "unroll.h"

/* The widest register block (see below). */
#define BLK 16

static TnCrtStatus check(const TnCrtConv2d *p) {
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->in_c <= 0 ||
      p->out_h <= 0 || p->out_w <= 0 || p->out_c <= 0 || p->k_h <= 0 ||
      p->k_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
      p->dilation_h <= 0 || p->dilation_w <= 0 || p->pad_top < 0 ||
      p->pad_left < 0 || p->groups <= 0 || p->in_c % p->groups != 0 ||
      p->out_c % p->groups != 0)
    return TN_CRT_INVALID_ARGUMENT;
  /* The extent a window row or column sweeps, and the input plus its
   * leading pad, must stay within int32 so the loops can use it. */
  if ((int64_t)(p->out_h - 1) * p->stride_h +
              (int64_t)(p->k_h - 1) * p->dilation_h > INT32_MAX ||
      (int64_t)(p->out_w - 1) * p->stride_w +
              (int64_t)(p->k_w - 1) * p->dilation_w > INT32_MAX ||
      (int64_t)p->in_h + p->pad_top > INT32_MAX ||
      (int64_t)p->in_w + p->pad_left > INT32_MAX)
    return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}


/* ------------------------------------------------------------------------ */
/* Register blocks                                                            */
/* ------------------------------------------------------------------------ */

/* The accumulators of a block are named scalars (R4/R8/R16, unroll.h).
 * Blocks are 16, 8 or 4 wide so that the channel counts of small models
 * (8, 24, ...) get them too; only a tail of 1 to 3 channels takes the
 * plain loop. */
#define LOAD_ACC(i) float a##i = acc[i];
#define STORE_ACC(i) acc[i] = a##i;
#define MAC_BCAST(i) a##i += xv * w[i];
#define MAC_VEC(i) a##i += x[i] * w[i];

/* NAME_bcast: acc[j] += sum_k x[k * xs] * w[k * ws + j], a run of input
 * channels (taps) against contiguous output channels' weights.
 * NAME_vec: acc[j] += sum_k x[k * xs + j] * w[k * ws + j], a run of
 * depthwise taps over contiguous channels. */
#define DEFINE_MAC(NAME, R)                                                 \
  static void NAME##_bcast(const float *restrict x, ptrdiff_t xs,           \
                           const float *restrict w, ptrdiff_t ws,           \
                           int32_t n, float *restrict acc) {                \
    R(LOAD_ACC)                                                             \
    for (int32_t k = 0; k < n; k++, x += xs, w += ws) {                     \
      const float xv = *x;                                                  \
      R(MAC_BCAST)                                                          \
    }                                                                       \
    R(STORE_ACC)                                                            \
  }                                                                         \
  static void NAME##_vec(const float *restrict x, ptrdiff_t xs,             \
                         const float *restrict w, ptrdiff_t ws, int32_t n,  \
                         float *restrict acc) {                             \
    R(LOAD_ACC)                                                             \
    for (int32_t k = 0; k < n; k++, x += xs, w += ws) {                     \
      R(MAC_VEC)                                                            \
    }                                                                       \
    R(STORE_ACC)                                                            \
  }
DEFINE_MAC(mac16, R16)
DEFINE_MAC(mac8, R8)
DEFINE_MAC(mac4, R4)

static void mac_bcast(const float *restrict x, ptrdiff_t xs,
                      const float *restrict w, ptrdiff_t ws, int32_t n,
                      int32_t nb, float *restrict acc) {
  switch (nb) {
    case 16: mac16_bcast(x, xs, w, ws, n, acc); return;
    case 8: mac8_bcast(x, xs, w, ws, n, acc); return;
    case 4: mac4_bcast(x, xs, w, ws, n, acc); return;
    default:
      for (int32_t k = 0; k < n; k++, x += xs, w += ws)
        for (int32_t j = 0; j < nb; j++) acc[j] += *x * w[j];
  }
}

static void mac_vec(const float *restrict x, ptrdiff_t xs,
                    const float *restrict w, ptrdiff_t ws, int32_t n,
                    int32_t nb, float *restrict acc) {
  switch (nb) {
    case 16: mac16_vec(x, xs, w, ws, n, acc); return;
    case 8: mac8_vec(x, xs, w, ws, n, acc); return;
    case 4: mac4_vec(x, xs, w, ws, n, acc); return;
    default:
      for (int32_t k = 0; k < n; k++, x += xs, w += ws)
        for (int32_t j = 0; j < nb; j++) acc[j] += x[j] * w[j];
  }
}

static int32_t block_width(int32_t rem) {
  return rem >= 16 ? 16 : rem >= 8 ? 8 : rem >= 4 ? 4 : rem;
}

static void init_block(float *restrict acc, const float *restrict bias,
                       int32_t nb) {
  for (int32_t j = 0; j < nb; j++) acc[j] = bias ? bias[j] : 0.0f;
}
static void store_block(float *restrict o, const float *restrict acc,
                        int32_t nb, float lo, float hi) {
  for (int32_t j = 0; j < nb; j++) o[j] = clamp_f32(acc[j], lo, hi);
}

/* ------------------------------------------------------------------------ */
/* Channels-last, any groups                                                  */
/* ------------------------------------------------------------------------ */

static void conv_channels_last(const TnCrtConv2d *p, const float *restrict in,
                               const float *restrict w,
                               const float *restrict bias, float lo, float hi,
                               float *restrict out) {
  const int32_t cig = p->in_c / p->groups, cog = p->out_c / p->groups;
  const int32_t sh = p->stride_h, sw = p->stride_w;
  const int32_t dh = p->dilation_h, dw = p->dilation_w;
  const ptrdiff_t is0 = p->in_strides[0], is1 = p->in_strides[1],
                  is2 = p->in_strides[2], is3 = p->in_strides[3];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1],
                  ws2 = p->w_strides[2];
  const ptrdiff_t os0 = p->out_strides[0], os1 = p->out_strides[1],
                  os2 = p->out_strides[2];
  /* When a row of taps is one arithmetic progression in both the input
   * (undilated NHWC, all channels in the group) and the weights (HWIO), the
   * kw and ci loops are a single run: a 3x3 RGB convolution then makes runs
   * of 9 rather than of 3. */
  const int merge_kw = dw * is2 == cig * is3 && ws1 == cig * ws2;
  for (int32_t g = 0; g < p->groups; g++) {
    for (int32_t co0 = 0, nb; co0 < cog; co0 += nb) {
      nb = block_width(cog - co0);
      const int32_t cb = g * cog + co0; /* first output channel */
      const float *wb = w + cb;
      const float *bb = bias ? bias + cb : NULL;
      for (int32_t n = 0; n < p->batch; n++) {
        const float *xg = in + n * is0 + (ptrdiff_t)g * cig * is3;
        for (int32_t oh = 0; oh < p->out_h; oh++) {
          const int32_t bh = oh * sh - p->pad_top;
          int32_t kh0, kh1;
          conv_in_bounds(bh, dh, p->in_h, p->k_h, &kh0, &kh1);
          float *orow = out + n * os0 + oh * os1 + cb;
          for (int32_t ow = 0; ow < p->out_w; ow++) {
            const int32_t bw = ow * sw - p->pad_left;
            int32_t kw0, kw1;
            conv_in_bounds(bw, dw, p->in_w, p->k_w, &kw0, &kw1);
            float acc[BLK];
            init_block(acc, bb, nb);
            for (int32_t kh = kh0; kh < kh1 && kw0 < kw1; kh++) {
              const float *x = xg + (ptrdiff_t)(bh + kh * dh) * is1 +
                               (ptrdiff_t)(bw + kw0 * dw) * is2;
              const float *wk = wb + kh * ws0 + kw0 * ws1;
              if (merge_kw) {
                mac_bcast(x, is3, wk, ws2, (kw1 - kw0) * cig, nb, acc);
                continue;
              }
              for (int32_t kw = kw0; kw < kw1; kw++, x += dw * is2, wk += ws1)
                mac_bcast(x, is3, wk, ws2, cig, nb, acc);
            }
            store_block(orow + ow * os2, acc, nb, lo, hi);
          }
        }
      }
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Depthwise channels-last, multiplier 1                                      */
/* ------------------------------------------------------------------------ */

static void conv_depthwise(const TnCrtConv2d *p, const float *restrict in,
                           const float *restrict w, const float *restrict bias,
                           float lo, float hi, float *restrict out) {
  const int32_t ch = p->in_c;
  const int32_t sh = p->stride_h, sw = p->stride_w;
  const int32_t dh = p->dilation_h, dw = p->dilation_w;
  const ptrdiff_t is0 = p->in_strides[0], is1 = p->in_strides[1],
                  is2 = p->in_strides[2];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1];
  const ptrdiff_t os0 = p->out_strides[0], os1 = p->out_strides[1],
                  os2 = p->out_strides[2];
  for (int32_t n = 0; n < p->batch; n++) {
    for (int32_t oh = 0; oh < p->out_h; oh++) {
      const int32_t bh = oh * sh - p->pad_top;
      int32_t kh0, kh1;
      conv_in_bounds(bh, dh, p->in_h, p->k_h, &kh0, &kh1);
      for (int32_t ow = 0; ow < p->out_w; ow++) {
        const int32_t bw = ow * sw - p->pad_left;
        int32_t kw0, kw1;
        conv_in_bounds(bw, dw, p->in_w, p->k_w, &kw0, &kw1);
        float *o = out + n * os0 + oh * os1 + ow * os2;
        for (int32_t c0 = 0, nb; c0 < ch; c0 += nb) {
          nb = block_width(ch - c0);
          float acc[BLK];
          init_block(acc, bias ? bias + c0 : NULL, nb);
          /* one row of taps per call: kw runs inside */
          for (int32_t kh = kh0; kh < kh1 && kw0 < kw1; kh++) {
            const float *x = in + n * is0 + (ptrdiff_t)(bh + kh * dh) * is1 +
                             (ptrdiff_t)(bw + kw0 * dw) * is2 + c0;
            const float *wk = w + kh * ws0 + kw0 * ws1 + c0;
            mac_vec(x, dw * is2, wk, ws1, kw1 - kw0, nb, acc);
          }
          store_block(o + c0, acc, nb, lo, hi);
        }
      }
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Any layout                                                                 */
/* ------------------------------------------------------------------------ */

/* What the row functions share: one output row (batch, channel, row). */
typedef struct {
  const TnCrtConv2d *p;
  const float *x;  /* the input at this batch and the channel's group */
  const float *w;  /* the weights of this output channel */
  float *o;        /* the output row */
  float b;         /* its bias */
  int32_t bh;      /* input row of tap 0 */
  int32_t kh0, kh1; /* in-bounds kernel rows */
} Row;

/* Output columns [c0, c1) of a row, weight by weight: each weight scalar
 * times the run of columns whose input column is in bounds, through any
 * strides. */
static void row_strided(const Row *r, int32_t c0, int32_t c1, float lo,
                        float hi) {
  const TnCrtConv2d *p = r->p;
  const int32_t cig = p->in_c / p->groups, sw = p->stride_w;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2],
                  is3 = p->in_strides[3];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1],
                  ws2 = p->w_strides[2];
  const ptrdiff_t os2 = p->out_strides[2], xs = (ptrdiff_t)sw * is2;
  float *restrict orow = r->o;
  for (int32_t ow = c0; ow < c1; ow++) orow[ow * os2] = r->b;
  for (int32_t kh = r->kh0; kh < r->kh1; kh++) {
    const float *xr = r->x + (ptrdiff_t)(r->bh + kh * p->dilation_h) * is1;
    for (int32_t kw = 0; kw < p->k_w; kw++) {
      const int32_t c = kw * p->dilation_w - p->pad_left;
      int32_t a, e;
      conv_in_bounds(c, sw, p->in_w, c1, &a, &e);
      if (a < c0) a = c0;
      if (a >= e) continue;
      const float *wk = r->w + kh * ws0 + kw * ws1;
      for (int32_t ci = 0; ci < cig; ci++) {
        const float wv = wk[ci * ws2];
        const float *restrict x = xr + (ptrdiff_t)ci * is3 +
                                  (ptrdiff_t)(a * sw + c) * is2;
        float *restrict o = orow + a * os2;
        if (os2 == 1 && xs == 1) {
          for (int32_t i = 0; i < e - a; i++) o[i] += wv * x[i];
        } else {
          for (int32_t i = 0; i < e - a; i++) o[i * os2] += wv * x[i * xs];
        }
      }
    }
  }
  for (int32_t ow = c0; ow < c1; ow++)
    orow[ow * os2] = clamp_f32(orow[ow * os2], lo, hi);
}

/* Output columns [c0, c1), all of whose taps are in bounds, of a row whose
 * output and input columns are both unit-stride (NCHW, stride 1): blocks
 * of columns in registers, each weight broadcast against a contiguous run
 * of input. The run goes over input channels or over kernel columns,
 * whichever is longer (over channels for a 1x1). */
static void row_blocks(const Row *r, int32_t c0, int32_t c1, float lo,
                       float hi) {
  const TnCrtConv2d *p = r->p;
  const int32_t cig = p->in_c / p->groups, dw = p->dilation_w;
  const ptrdiff_t is1 = p->in_strides[1], is3 = p->in_strides[3];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1],
                  ws2 = p->w_strides[2];
  for (int32_t ow0 = c0, nb; ow0 < c1; ow0 += nb) {
    nb = block_width(c1 - ow0);
    float acc[BLK];
    for (int32_t j = 0; j < nb; j++) acc[j] = r->b;
    for (int32_t kh = r->kh0; kh < r->kh1; kh++) {
      const float *x = r->x + (ptrdiff_t)(r->bh + kh * p->dilation_h) * is1 +
                       (ow0 - p->pad_left);
      const float *wk = r->w + kh * ws0;
      if (cig >= p->k_w) {
        for (int32_t kw = 0; kw < p->k_w; kw++)
          mac_bcast(wk + kw * ws1, ws2, x + kw * dw, is3, cig, nb, acc);
      } else {
        for (int32_t ci = 0; ci < cig; ci++)
          mac_bcast(wk + ci * ws2, ws1, x + ci * is3, dw, p->k_w, nb, acc);
      }
    }
    store_block(r->o + ow0, acc, nb, lo, hi);
  }
}

static void conv_generic(const TnCrtConv2d *p, const float *restrict in,
                         const float *restrict w, const float *restrict bias,
                         float lo, float hi, float *restrict out) {
  const int32_t cig = p->in_c / p->groups, cog = p->out_c / p->groups;
  const ptrdiff_t is0 = p->in_strides[0], is3 = p->in_strides[3];
  const ptrdiff_t ws3 = p->w_strides[3];
  const ptrdiff_t os0 = p->out_strides[0], os1 = p->out_strides[1],
                  os3 = p->out_strides[3];
  /* Columns whose first and last taps are both in bounds (so all are). */
  int32_t ia = 0, ib = 0;
  if (p->out_strides[2] == 1 && p->in_strides[2] == 1 && p->stride_w == 1) {
    int32_t a0, e0, a1, e1;
    conv_in_bounds(-p->pad_left, 1, p->in_w, p->out_w, &a0, &e0);
    conv_in_bounds((p->k_w - 1) * p->dilation_w - p->pad_left, 1, p->in_w,
              p->out_w, &a1, &e1);
    ia = a0 > a1 ? a0 : a1, ib = e0 < e1 ? e0 : e1;
    if (ib < ia) ib = ia;
  }
  for (int32_t n = 0; n < p->batch; n++) {
    for (int32_t co = 0; co < p->out_c; co++) {
      Row r;
      r.p = p;
      r.x = in + n * is0 + (ptrdiff_t)(co / cog) * cig * is3;
      r.w = w + co * ws3;
      r.b = bias ? bias[co] : 0.0f;
      for (int32_t oh = 0; oh < p->out_h; oh++) {
        r.o = out + n * os0 + oh * os1 + co * os3;
        r.bh = oh * p->stride_h - p->pad_top;
        conv_in_bounds(r.bh, p->dilation_h, p->in_h, p->k_h, &r.kh0, &r.kh1);
        if (ia < ib) {
          row_strided(&r, 0, ia, lo, hi);
          row_blocks(&r, ia, ib, lo, hi);
          row_strided(&r, ib, p->out_w, lo, hi);
        } else {
          row_strided(&r, 0, p->out_w, lo, hi);
        }
      }
    }
  }
}

TnCrtStatus tn_crt_conv2d_f32(const TnCrtConv2d *p, const float *in,
                              const float *w, const float *bias,
                              float act_min, float act_max, float *out) {
  if (!p || !in || !w || !out) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  const int channels_last = p->w_strides[3] == 1 && p->out_strides[3] == 1;
  const int depthwise = channels_last && p->groups == p->in_c &&
                        p->groups == p->out_c && p->in_strides[3] == 1;
#if TN_CRT_HAVE_AVX2
  if (channels_last && tn__crt_avx2()) {
    tn__crt_conv_f32_x86(p, in, w, bias, act_min, act_max, out, depthwise);
    return TN_CRT_OK;
  }
#endif
  if (depthwise)
    conv_depthwise(p, in, w, bias, act_min, act_max, out);
  else if (channels_last)
    conv_channels_last(p, in, w, bias, act_min, act_max, out);
  else
    conv_generic(p, in, w, bias, act_min, act_max, out);
  return TN_CRT_OK;
}

/* ---- the uniform entry (tvmnode/crt/calls.h) ------------------------------ */

TN_CRT_CALL(conv2d_f32, TnCrtCallConvF32) {
  return tn_crt_conv2d_f32(&p->g, in[0], in[1], p->has_bias ? in[2] : NULL,
                           p->act_min, p->act_max, out);
}
