/*
 * conv_s8.c: int8 2-D convolution (regular, grouped and depthwise), TFLite
 * Micro's ConvPerChannel / DepthwiseConvPerChannel reference arithmetic bit
 * for bit: acc = sum((x + input_offset) * (w + filter_offset)) over the taps
 * inside the input (padding contributes nothing), + bias, then
 * MultiplyByQuantizedMultiplier with the channel's (or the tensor's)
 * multiplier, + output offset, clamped. Integer sums do not depend on their
 * order, so the loops are free to be ordered for speed. Each output pixel
 * computes its range of in-bounds taps once, then fills the accumulators of
 * a block of up to BLK output channels (a small local array: registers once
 * vectorised, and a fixed trip count, which is what lets GCC vectorise at
 * -O2) tap by tap, and requantizes the block; no scratch is needed. The
 * loop nest inside a tap follows the strides:
 *  - depthwise with multiplier 1 and unit channel strides (NHWC, TFLite's
 *    [1, kh, kw, c] weights): one contiguous multiply-add per tap;
 *  - other depthwise and channel-multiplier cases: per input channel, its
 *    value times the run of weights of its output channels;
 *  - regular and grouped convolution with output-channel-contiguous weights
 *    (HWIO): per input channel, one broadcast input value times a
 *    contiguous row of BLK weights ("outer product");
 *  - otherwise (NHWC with OHWI, NCHW/OIHW and mixtures): per output
 *    channel, a dot product over the group's input channels.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"

/* Output channels per accumulator block: four SSE or two AVX registers. */
enum { BLK = 16 };

/* Inlined twice, once with the constant BLK, so that the full blocks get
 * fixed-length (unrollable, vectorisable) loops. */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#else
#define BLOCK_INLINE static inline
#endif

enum { DW_CONTIG, DW, OUTER, DOT };

typedef struct {
  const TnCrtConv2d *p;
  const int8_t *in, *w;
  int32_t io, fo;   /* input and filter offsets */
  int32_t cpg, fpg; /* input and output channels per group */
  int mode;
} Conv;

/* One output pixel: its batch's input and the in-bounds taps. */
typedef struct {
  const int8_t *x;
  int32_t iy0, ix0, ky0, ky1, kx0, kx1;
} Win;

static TnCrtStatus conv_init(Conv *c, const TnCrtConv2d *p, int32_t io,
                             int32_t fo, const int8_t *in, const int8_t *w,
                             const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->in_c <= 0 ||
      p->out_h <= 0 || p->out_w <= 0 || p->out_c <= 0 || p->k_h <= 0 ||
      p->k_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
      p->dilation_h <= 0 || p->dilation_w <= 0 || p->groups <= 0 ||
      p->pad_top < 0 || p->pad_left < 0 || p->in_c % p->groups != 0 ||
      p->out_c % p->groups != 0)
    return TN_CRT_INVALID_ARGUMENT;
  /* The window origins and extents must stay within int32. */
  if ((int64_t)(p->out_h - 1) * p->stride_h +
              (int64_t)(p->k_h - 1) * p->dilation_h > INT32_MAX ||
      (int64_t)(p->out_w - 1) * p->stride_w +
              (int64_t)(p->k_w - 1) * p->dilation_w > INT32_MAX)
    return TN_CRT_OVERFLOW;
  c->p = p, c->in = in, c->w = w, c->io = io, c->fo = fo;
  c->cpg = p->in_c / p->groups;
  c->fpg = p->out_c / p->groups;
  const int32_t sc = p->in_strides[3], wci = p->w_strides[2],
                wco = p->w_strides[3];
  if (c->cpg == 1)
    c->mode = c->fpg == 1 && sc == 1 && wco == 1 ? DW_CONTIG : DW;
  else
    c->mode = wco != 1 || (sc == 1 && wci == 1) ? DOT : OUTER;
  return TN_CRT_OK;
}

/* The taps [*k0, *k1) of a dilated window starting at input index `origin`
 * that land inside [0, size): the padding, hoisted out of the tap loops. */
static void taps(int32_t origin, int32_t k, int32_t dilation, int32_t size,
                 int32_t *k0, int32_t *k1) {
  *k0 = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
  *k1 = origin >= size ? 0 : (size - 1 - origin) / dilation + 1;
  if (*k1 > k) *k1 = k;
  if (*k1 < *k0) *k1 = *k0;
}

/* sum((x[i * xs] + io) * (w[i * ws] + fo)) over n input channels; the
 * contiguous case in fixed-length pieces, for the same reason as BLK. The
 * int32 sums are exact while a filter has fewer than 2^16 taps times input
 * channels, TFLite's bound (it accumulates in int32 as well). */
static int32_t dot(const int8_t *restrict x, int32_t xs,
                   const int8_t *restrict w, int32_t ws, int32_t n,
                   int32_t io, int32_t fo) {
  int32_t s = 0, i = 0;
  if (xs == 1 && ws == 1) {
    int32_t part[BLK] = {0};
    for (; i + BLK <= n; i += BLK)
      for (int32_t j = 0; j < BLK; j++)
        part[j] += (x[i + j] + io) * (w[i + j] + fo);
    for (int32_t j = 0; j < BLK; j++) s += part[j];
  }
  for (; i < n; i++) s += (x[i * xs] + io) * (w[i * ws] + fo);
  return s;
}

/* a[j] += xv * (w[j * ws] + fo) for j < len: one input value times a run
 * of weights. */
BLOCK_INLINE void madd(int32_t *restrict a, int32_t len, int32_t xv,
                       const int8_t *restrict w, int32_t ws, int32_t fo) {
  if (ws == 1 && fo == 0) {
    for (int32_t j = 0; j < len; j++) a[j] += xv * w[j];
  } else if (ws == 1) {
    for (int32_t j = 0; j < len; j++) a[j] += xv * (w[j] + fo);
  } else {
    for (int32_t j = 0; j < len; j++) a[j] += xv * (w[j * ws] + fo);
  }
}

/* The accumulators (without bias) of output channels [co0, co0 + len),
 * len <= BLK, at one output pixel. With more than one input channel per
 * group the block lies within one group. */
BLOCK_INLINE void block(const Conv *c, const Win *wn, int32_t co0,
                        int32_t len, int32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const int32_t *is = p->in_strides, *ws = p->w_strides;
  const int32_t sc = is[3], io = c->io, fo = c->fo;
  for (int32_t j = 0; j < len; j++) a[j] = 0;
  for (int32_t ky = wn->ky0; ky < wn->ky1; ky++) {
    const int32_t iy = wn->iy0 + ky * p->dilation_h;
    for (int32_t kx = wn->kx0; kx < wn->kx1; kx++) {
      const int32_t ix = wn->ix0 + kx * p->dilation_w;
      const int8_t *xp = wn->x + (ptrdiff_t)iy * is[1] + (ptrdiff_t)ix * is[2];
      const int8_t *wp = c->w + (ptrdiff_t)ky * ws[0] + (ptrdiff_t)kx * ws[1];
      switch (c->mode) {
        case DW_CONTIG: {
          const int8_t *restrict xr = xp + co0, *restrict wr = wp + co0;
          if (fo == 0) {
            for (int32_t j = 0; j < len; j++) a[j] += (xr[j] + io) * wr[j];
          } else {
            for (int32_t j = 0; j < len; j++)
              a[j] += (xr[j] + io) * (wr[j] + fo);
          }
          break;
        }
        case DW: {
          /* Output channel co reads input channel co / fpg; the weight's
           * input-channel axis has a single entry. */
          for (int32_t j = 0, co = co0; j < len;) {
            const int32_t ci = co / c->fpg;
            int32_t end = (ci + 1) * c->fpg - co0;
            if (end > len) end = len;
            madd(a + j, end - j, xp[(ptrdiff_t)ci * sc] + io,
                 wp + (ptrdiff_t)co * ws[3], ws[3], fo);
            co += end - j, j = end;
          }
          break;
        }
        case OUTER: {
          /* The hottest loop of all: kept free of branches so that the
           * block of accumulators can stay in registers across it. */
          const int8_t *xg = xp + (ptrdiff_t)(co0 / c->fpg) * c->cpg * sc;
          const int8_t *restrict wg = wp + co0;
          const int32_t wci = ws[2];
          if (fo == 0) {
            for (int32_t ci = 0; ci < c->cpg; ci++) {
              const int32_t xv = xg[(ptrdiff_t)ci * sc] + io;
              const int8_t *restrict wr = wg + (ptrdiff_t)ci * wci;
              for (int32_t j = 0; j < len; j++) a[j] += xv * wr[j];
            }
          } else {
            for (int32_t ci = 0; ci < c->cpg; ci++) {
              const int32_t xv = xg[(ptrdiff_t)ci * sc] + io;
              const int8_t *restrict wr = wg + (ptrdiff_t)ci * wci;
              for (int32_t j = 0; j < len; j++) a[j] += xv * (wr[j] + fo);
            }
          }
          break;
        }
        default: {
          const int8_t *xg = xp + (ptrdiff_t)(co0 / c->fpg) * c->cpg * sc;
          const int8_t *wg = wp + (ptrdiff_t)co0 * ws[3];
          for (int32_t j = 0; j < len; j++)
            a[j] += dot(xg, sc, wg + (ptrdiff_t)j * ws[3], ws[2], c->cpg, io,
                        fo);
          break;
        }
      }
    }
  }
}

static int32_t wadd(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* Every output pixel, block by block; the block is requantized into out8
 * (with q) or, plus the bias, stored into out32. */
static void conv_run(const Conv *c, const TnCrtQuant *q, int32_t lo,
                     int32_t hi, const int32_t *bias, int8_t *out8,
                     int32_t *out32) {
  const TnCrtConv2d *p = c->p;
  const int32_t *os = p->out_strides;
  const int32_t pc = q != NULL && q->per_channel != 0;
  Win wn;
  for (int32_t n = 0; n < p->batch; n++) {
    wn.x = c->in + (ptrdiff_t)n * p->in_strides[0];
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      wn.iy0 = oy * p->stride_h - p->pad_top;
      taps(wn.iy0, p->k_h, p->dilation_h, p->in_h, &wn.ky0, &wn.ky1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        wn.ix0 = ox * p->stride_w - p->pad_left;
        taps(wn.ix0, p->k_w, p->dilation_w, p->in_w, &wn.kx0, &wn.kx1);
        const ptrdiff_t ob = (ptrdiff_t)n * os[0] + (ptrdiff_t)oy * os[1] +
                             (ptrdiff_t)ox * os[2];
        for (int32_t co0 = 0, len; co0 < p->out_c; co0 += len) {
          /* The rest of the group, or of all channels when groups have one
           * input channel, at most BLK. */
          len = c->cpg == 1 ? p->out_c - co0 : c->fpg - co0 % c->fpg;
          if (len > BLK) len = BLK;
          int32_t a[BLK];
          if (len == BLK)
            block(c, &wn, co0, BLK, a);
          else
            block(c, &wn, co0, len, a);
          for (int32_t j = 0; j < len; j++) {
            const int32_t co = co0 + j;
            int32_t v = bias ? wadd(a[j], bias[co]) : a[j];
            if (out32) {
              out32[ob + (ptrdiff_t)co * os[3]] = v;
              continue;
            }
            v = tn_crt_multiply_by_quantized_multiplier(
                v, q->multiplier[pc ? co : 0], q->shift[pc ? co : 0]);
            v = wadd(v, q->output_offset);
            out8[ob + (ptrdiff_t)co * os[3]] =
                (int8_t)(v < lo ? lo : v > hi ? hi : v);
          }
        }
      }
    }
  }
}

size_t tn_crt_conv2d_s8_scratch_size(const TnCrtConv2d *p) {
  (void)p;
  return 0;
}

TnCrtStatus tn_crt_conv2d_s8(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int8_t *in, const int8_t *w,
                             const int32_t *bias, int8_t *out, void *scratch,
                             size_t scratch_size) {
  (void)scratch, (void)scratch_size;
  if (q == NULL || q->multiplier == NULL || q->shift == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  Conv c;
  TnCrtStatus st =
      conv_init(&c, p, q->input_offset, q->filter_offset, in, w, out);
  if (st != TN_CRT_OK) return st;
  /* The activation range narrowed to int8 (a wider one clamps no more). */
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  conv_run(&c, q, lo, hi, bias, out, NULL);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_conv2d_s8_s32(const TnCrtConv2d *p, int32_t input_offset,
                                 int32_t filter_offset, const int8_t *in,
                                 const int8_t *w, const int32_t *bias,
                                 int32_t *out) {
  Conv c;
  TnCrtStatus st = conv_init(&c, p, input_offset, filter_offset, in, w, out);
  if (st != TN_CRT_OK) return st;
  conv_run(&c, NULL, 0, 0, bias, NULL, out);
  return TN_CRT_OK;
}
