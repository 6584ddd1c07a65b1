/*
 * conv_s8.c: int8 2-D convolution (regular, grouped and depthwise), TFLite
 * Micro's ConvPerChannel / DepthwiseConvPerChannel reference arithmetic bit
 * for bit: acc = sum((x + input_offset) * (w + filter_offset)) over the taps
 * inside the input (padding contributes nothing), + bias, then
 * MultiplyByQuantizedMultiplier with the channel's (or the tensor's)
 * multiplier, + output offset, clamped.
 *
 * Integer sums do not depend on their order, and TFLite's int32 accumulator
 * wraps like any sum mod 2^32, so the kernel accumulates in uint32 (no
 * signed overflow anywhere) in whatever order is fastest. The output
 * channels are cut into blocks of up to BLK; the block loop is outermost,
 * so a block's weights stay in cache while the pixels stream past, and its
 * requantization constants are set up once. At each output pixel the range
 * of in-bounds taps is computed once (padding is never materialised), the
 * block's accumulators are filled starting from the bias, and the block is
 * requantized in one vectorised pass. They are filled according to the
 * strides:
 *  - BCAST, output channels contiguous in the weights (HWIO; depthwise
 *    with a channel multiplier): per input channel (and tap) one input
 *    value broadcast against a contiguous row of weights; a row of taps of
 *    undilated channels-last data is a single run;
 *  - DW, depthwise with multiplier 1 and channels contiguous in input and
 *    weights (NHWC, TFLite's [1, kh, kw, c]): per tap, a run of inputs
 *    times a run of weights;
 *  - DOT, anything else (OHWI, NCHW/OIHW, unusual offsets): per output
 *    channel a dot product over the group's input channels, over
 *    contiguous runs when both tensors have them.
 * BCAST and DW need TFLite's offsets (filter_offset 0 and input_offset in
 * [-127, 128], so that |x + input_offset| <= 255 and every product fits an
 * int16); DOT takes any offsets.
 *
 * All of it is portable C shaped for gcc -O2's vectoriser: fixed trip
 * counts over a block (a small local array), int16 products widened into
 * int32 sums, DOT's contiguous dot products of int16 operands (the pattern
 * gcc turns into pmaddwd), a branch-free requantization. That is as fast
 * as float32 at best on x86: SSE2 has no 8-bit multiply, gcc emits its
 * two-products-per-lane pmaddwd only for a reduction, which BCAST and DW
 * are not, and TFLite's requantization takes two 64-bit multiplies per
 * lane. So on x86 (__SSE2__ with GNU C) BCAST, DW and the requantization
 * have a second form in GNU vector extensions with six SSE2 builtins
 * (pmaddwd, packssdw, packsswb, minps, maxps, movmskps; x86/conv_s8.c,
 * conv_s8.h), about twice as fast: pmaddwd on interleaved pairs of inputs,
 * two neighbouring pixels sharing the widened weights, and a float
 * requantization whose doubtful lanes are redone exactly. Where the CPU
 * runs AVX2 (tn__crt_avx2()), BCAST blocks of 8 and 16 channels take a
 * fourth form, four pixels at a time (x86/conv_s8.c; AvxBcast in
 * conv_s8.h): weights packed once per block and call, rows read through
 * row pointers, the requantization in registers; unpadded 1x1 layers
 * with channels-last input and output take a GEMM form instead (each
 * pixel's channels are a contiguous run of the input: no row pointers,
 * tiles of up to 8 pixels by 32 channels with AVX-512 VNNI, 4 by 16 with
 * AVX2; a 1x1 layer whose weight the compiler packed reads it where it
 * lies: tn_crt_conv2d_s8_packed, "The packed 1x1 layer" below); with
 * AVX-512 VNNI, runs of a row's pixels whose windows lie
 * wholly inside the input take a row form (tiles of up to 12 pixels, the
 * pixel's rows at fixed offsets: no row pointers), the border pixels the
 * four-pixel one, and depthwise layers and layers of few input channels
 * and a large kernel run whole in x86/conv_wide_s8.c, 64 channels a pass
 * (conv_run asks it first); at AVX2 the row form's tiles and whole
 * depthwise layers are x86/conv_avx2_s8.c's. On a Cortex-M
 * with the DSP extension (__ARM_FEATURE_DSP with GNU C: the M4, M7, M33)
 * gcc vectorises none of it, and BCAST, DW, DOT and the requantization
 * have a third form (arm_dsp/conv_s8_dsp.h, about three times as fast as
 * the portable C there; a one-group layer with OHWI or OIHW weights, as
 * codegen.compile gives them for a Cortex-M target, is a matrix product
 * of im2col columns by the weights' rows there, two pixels by two
 * channels at a time; a depthwise 3x3 layer with multiplier 1 and
 * stride 1 or 2 has a form of its own, arm_dsp/dw3x3_s8_dsp.h, four
 * channels a pixel, nothing packed):
 * SXTB16/SXTAB16 unpack int8 into int16 pairs,
 * SMLAD does two multiply-adds; BCAST and DW blocks have their weights
 * unpacked into pairs once, into the call's scratch (see
 * tn_crt_conv2d_s8_scratch_size_isa), so that each pixel's inner loop only
 * loads them; the requantization is TFLite's
 * in seven instructions (SMMULR, QADD, SSAT). All forms compute the same
 * integers; other targets (wasm, cores without DSP) compile the portable C
 * alone.
 *
 * With out == in, the layers of small keyword-spotting CNNs (depthwise
 * stride-1 SAME, and pointwise 1x1) run in place, so that a memory planner
 * can give such a network about one activation buffer instead of two:
 * the same loops and arithmetic, with a few output rows held back in
 * scratch (depthwise) or a chunk of input pixels copied to scratch first
 * (1x1); see "In place" below.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "conv_s8.h"
#include "dense_s8.h"
#include "fixed_point.h"
/* The DSP form: static functions, so that gcc inlines them into this
 * file's loops (see its opening comment); its buffers' geometry is
 * compiled everywhere (tn_crt_conv2d_s8_scratch_size_isa), as is whether
 * a depthwise 3x3 layer needs more than its fast rows (dw3_fast_only). */
#include "arm_dsp/conv_s8_dsp.h"
#include "arm_dsp/dw3x3_s8_dsp.h"
/* The MVE form of the matrix product (the M55): static functions too. */
#include "arm_mve/conv_s8_mve.h"
#if TN_CRT_HAVE_ARM_MVE
#include "arm_mve/dw3x3_s8_mve.h" /* and of the depthwise 3x3 */
#include "arm_mve/dw_s8_mve.h"    /* and of the other depthwise layers */
#endif

/* AVX_DECL(k): k, the packed blocks of the AVX2 form of BCAST for one
 * kernel call (on the stack: 111 KiB, on x86-64 alone), or NULL where the
 * form is out or the CPU does not run it. */
#if TN_CRT_HAVE_AVX2
#define AVX_DECL(k)                                                      \
  AvxBcast k##_buf;                                                      \
  void *const k = tn__crt_avx2() ? (tn__crt_conv_avx2_reset(&k##_buf),   \
                                    (void *)&k##_buf)                    \
                                 : NULL
#else
#define AVX_DECL(k) void *const k = NULL
#endif



/* ------------------------------------------------------------------------ */
/* Geometry                                                                   */
/* ------------------------------------------------------------------------ */


/* The checks of a geometry that do not involve the data. */
static TnCrtStatus geom_check(const TnCrtConv2d *p) {
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
  return TN_CRT_OK;
}

static TnCrtStatus conv_init(Conv *c, const TnCrtConv2d *p, int32_t io,
                             int32_t fo, const int8_t *in, const int8_t *w,
                             const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  const TnCrtStatus st = geom_check(p);
  if (st != TN_CRT_OK) return st;
  c->p = p, c->in = in, c->w = w, c->io = io, c->fo = fo;
  c->cpg = p->in_c / p->groups;
  c->fpg = p->out_c / p->groups;
  const int32_t sc = p->in_strides[3], wci = p->w_strides[2],
                wco = p->w_strides[3];
  /* x is in [-128, 127], so x + io fits an int16 for io in
   * [-32640, 32640]; likewise w + fo. */
  c->narrow = io >= -32640 && io <= 32640 && fo >= -32640 && fo <= 32640;
  c->merge = (int64_t)p->dilation_w * p->in_strides[2] ==
                 (int64_t)c->cpg * sc &&
             (int64_t)p->w_strides[1] == (int64_t)c->cpg * wci;
  const int small = fo == 0 && io >= -127 && io <= 128;
  if (small && c->cpg == 1 && c->fpg == 1 && sc == 1 && wco == 1)
    c->mode = DW;
  else if (small && wco == 1 && c->fpg >= 4 && !(sc == 1 && wci == 1))
    c->mode = BCAST;
  else
    c->mode = DOT;
  return TN_CRT_OK;
}



/* ------------------------------------------------------------------------ */
/* Requantization of a block                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Each channel of a block has its multiplier M and shift; the block sets
 * them up once, and each pixel's block is requantized in one pass (on
 * SSE2, see requant_sse). For M >= 0 and a shift -r <= 0 (every real
 * multiplier below 1), TFLite's two roundings are, on the magnitude |x| and
 * the sign of x:
 *   SaturatingRoundingDoublingHighMul: x * M / 2^31 to nearest, ties up:
 *     +-h with h = (|x| * M + 2^30 - [x < 0]) >> 31 (its one saturating
 *     case, x = M = INT32_MIN, needs M < 0);
 *   RoundingDivideByPOT: +-h / 2^r to nearest, ties away from zero, which
 *     is symmetric in the sign: +-((h + half) >> r), half = 2^(r-1) (0 for
 *     r = 0; h + half < 2^32).
 * This is requant_exact, branch-free. A block with another multiplier or
 * shift (M < 0, or the left shift of a multiplier >= 1) calls
 * tn_crt_multiply_by_quantized_multiplier itself. A block of up to 8
 * channels holds them twice (lanes j and j + 8), for two pixels at once.
 */

static void requant_init(Requant *restrict rq, const TnCrtQuant *q,
                         int32_t lo, int32_t hi, const int32_t *bias,
                         int32_t co0, int32_t len) {
  rq->q = q, rq->co0 = co0, rq->len = len, rq->lo = lo, rq->hi = hi;
  rq->off = q ? q->output_offset : 0;
  /* Set up on every call for every block, so kept short: q's fields read
   * once (rq, restrict, cannot change them), and a block of up to 8
   * channels sets its 8 lanes and copies them. */
  const int32_t *const mul = q && !q->scale ? q->multiplier : NULL;
  const int32_t *const sh = q ? q->shift : NULL;
  const int32_t pc = q ? q->per_channel : 0;
  const int32_t n = len <= 8 ? 8 : BLK;
  int bad = q && q->scale;
  if (mul && pc && bias && len == BLK) { /* the usual block: no branch */
#if TN_CRT_HAVE_SSE2
    /* with requant_sse's constants, in vectors (x86/conv_s8.c) */
    tn__crt_conv_requant_block_sse2(rq, mul + co0, sh + co0, bias + co0);
    return;
#else
    const int32_t *const mk = mul + co0, *const sk = sh + co0,
                         *const bk = bias + co0;
    uint32_t worse = 0;
    for (int32_t j = 0; j < BLK; j++) {
      const int32_t m = mk[j], s = sk[j];
      const uint32_t wide = (uint32_t)s + 31u > 31u; /* s > 0 || s < -31 */
      worse |= (uint32_t)m >> 31 | wide;
      rq->m[j] = m < 0 ? 0 : (uint32_t)m;
      rq->r[j] = (uint8_t)(wide ? 0 : -s);
      rq->bias[j] = (uint32_t)bk[j];
    }
    bad = worse != 0;
#endif
  } else {
    for (int32_t j = 0; j < n; j++) {
      int32_t m = 0, s = 0; /* lanes past the block compute a harmless 0 */
      if (j < len && mul) {
        const int32_t k = pc ? co0 + j : 0;
        m = mul[k], s = sh[k];
      }
      rq->bias[j] = j < len && bias ? (uint32_t)bias[co0 + j] : 0;
      const int wide = s > 0 || s < -31;
      bad |= m < 0 || wide;
      rq->m[j] = m < 0 ? 0 : (uint32_t)m;
      rq->r[j] = (uint8_t)(wide ? 0 : -s);
    }
  }
  if (n == 8) { /* lanes j + 8 as lanes j: two pixels at once */
    memcpy(rq->bias + 8, rq->bias, 8 * sizeof rq->bias[0]);
    memcpy(rq->m + 8, rq->m, 8 * sizeof rq->m[0]);
    memcpy(rq->r + 8, rq->r, 8 * sizeof rq->r[0]);
  }
  rq->vec = !bad;
#if TN_CRT_HAVE_SSE2
  tn__crt_conv_requant_init_sse2(rq);
#endif
#if TN_CRT_HAVE_ARM_DSP
  requant_init_dsp(rq);
#endif
}

/* Lane j for the accumulator x, by tn_crt_multiply_by_quantized_multiplier
 * itself. */
static int8_t requant_lane(const Requant *rq, int32_t j, uint32_t x) {
  const int32_t ch = rq->len <= 8 ? j % 8 : j;
  const int32_t k = rq->q->per_channel ? rq->co0 + ch : 0;
  if (rq->q->scale)
    return (int8_t)tn__crt_requant_float((int32_t)x, rq->q->scale[k], rq->off,
                                         rq->lo, rq->hi);
  int32_t v = tn_crt_multiply_by_quantized_multiplier(
      (int32_t)x, rq->q->multiplier[k], rq->q->shift[k]);
  v = (int32_t)((uint32_t)v + (uint32_t)rq->off);
  return (int8_t)(v < rq->lo ? rq->lo : v > rq->hi ? rq->hi : v);
}


/* res[j] = the requantized a[j] for j < n when rq->vec. */
static void requant_c(const Requant *rq, const uint32_t *a, int32_t n,
                      int8_t *res) {
  for (int32_t j = 0; j < n; j++) res[j] = (int8_t)requant_exact(rq, j, a[j]);
}

/* ------------------------------------------------------------------------ */
/* Accumulation, portable C                                                   */
/* ------------------------------------------------------------------------ */

/* a[j] += (x[k * xs] + io) * w[k * ws + j] for k < n, j < len: one input
 * value (|x + io| <= 255) broadcast against a row of weights, products in
 * 16 bits. */
BLOCK_INLINE void mac_bcast(uint32_t *restrict a, int32_t len,
                            const int8_t *x, ptrdiff_t xs,
                            const int8_t *restrict w, ptrdiff_t ws, int32_t n,
                            int16_t io) {
  for (int32_t k = 0; k < n; k++, x += xs, w += ws) {
    const int16_t xv = (int16_t)(*x + io);
    for (int32_t j = 0; j < len; j++)
      a[j] += (uint32_t)(int16_t)(xv * w[j]);
  }
}

/* a[j] += (x[k * xs + j] + io) * w[k * ws + j] for k < n, j < len: runs of
 * depthwise taps over contiguous channels. */
BLOCK_INLINE void mac_vec(uint32_t *restrict a, int32_t len,
                          const int8_t *restrict x, ptrdiff_t xs,
                          const int8_t *restrict w, ptrdiff_t ws, int32_t n,
                          int16_t io) {
  for (int32_t k = 0; k < n; k++, x += xs, w += ws)
    for (int32_t j = 0; j < len; j++)
      a[j] += (uint32_t)(int16_t)((int16_t)(x[j] + io) * w[j]);
}

static void bcast(uint32_t *restrict a, int32_t len, const int8_t *x,
                  ptrdiff_t xs, const int8_t *w, ptrdiff_t ws, int32_t n,
                  int16_t io) {
  switch (len) {
    case 16: mac_bcast(a, 16, x, xs, w, ws, n, io); return;
    case 8: mac_bcast(a, 8, x, xs, w, ws, n, io); return;
    case 4: mac_bcast(a, 4, x, xs, w, ws, n, io); return;
    default: mac_bcast(a, len, x, xs, w, ws, n, io); return;
  }
}

static void vec(uint32_t *restrict a, int32_t len, const int8_t *x,
                ptrdiff_t xs, const int8_t *w, ptrdiff_t ws, int32_t n,
                int16_t io) {
  switch (len) {
    case 16: mac_vec(a, 16, x, xs, w, ws, n, io); return;
    case 8: mac_vec(a, 8, x, xs, w, ws, n, io); return;
    case 4: mac_vec(a, 4, x, xs, w, ws, n, io); return;
    default: mac_vec(a, len, x, xs, w, ws, n, io); return;
  }
}

/* sum((x[i * xs] + io) * (w[i * ws] + fo)) over i < n, mod 2^32. The
 * contiguous narrow case multiplies int16s into the sum, in a multiple of
 * 16 iterations (gcc -O2 vectorises only loops that need no scalar
 * epilogue); the rest is plain uint32 arithmetic. */
static uint32_t dot(const int8_t *x, ptrdiff_t xs, const int8_t *w,
                    ptrdiff_t ws, int32_t n, int32_t io, int32_t fo,
                    int narrow) {
#if TN_CRT_HAVE_ARM_DSP
  if (narrow && xs == 1 && ws == 1)
    return dsp_dot(x, w, n, io, fo);
#endif
  uint32_t s = 0;
  int32_t i = 0;
  if (narrow && xs == 1 && ws == 1) {
    const int16_t io16 = (int16_t)io, fo16 = (int16_t)fo;
    const int32_t m = n & ~15;
    for (; i < m; i++)
      s += (uint32_t)((int16_t)(x[i] + io16) * (int16_t)(w[i] + fo16));
  }
  for (; i < n; i++)
    s += ((uint32_t)x[i * xs] + (uint32_t)io) *
         ((uint32_t)w[i * ws] + (uint32_t)fo);
  return s;
}


/* ------------------------------------------------------------------------ */
/* One block at one or two pixels                                            */
/* ------------------------------------------------------------------------ */

/* The accumulators (with the bias) of output channels [co0, co0 + len) at
 * npx output pixels (1, or 2 with the same taps on the SSE2 path) into a,
 * pixel i at a + i * len. BCAST blocks lie within one group. */
static void accumulate(const Conv *c, const Win *wn, int32_t co0, int32_t len,
                       int npx, const uint32_t *bias, uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2],
                  is3 = p->in_strides[3];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1],
                  ws2 = p->w_strides[2], ws3 = p->w_strides[3];
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * is2;
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * is1;
  const int32_t nkx = wn->kx1 - wn->kx0, nky = wn->ky1 - wn->ky0;
  (void)npx; /* 1, but on the SSE2 path */
  if (nkx <= 0 || nky <= 0) {
    for (int32_t j = 0; j < ACC; j++) a[j] = bias[j % BLK];
    return;
  }
  /* The first in-bounds tap. */
  const int8_t *xr = wn->x + (ptrdiff_t)wn->iy0 * is1 + wn->ky0 * dy +
                     (ptrdiff_t)(wn->ix0 + wn->kx0 * p->dilation_w) * is2;
  const int8_t *wr = c->w + wn->ky0 * ws0 + (ptrdiff_t)wn->kx0 * ws1;
#if TN_CRT_HAVE_SSE2
  if (c->mode == BCAST && (len == 16 || len == 8)) {
    tn__crt_conv_sse_bcast(c, wn, co0, len / 8, npx, xr, wr, bias, a);
    return;
  }
#endif
  for (int32_t j = 0; j < BLK; j++) a[j] = bias[j];
  switch (c->mode) {
    case DW: /* on the DSP path, what dsp_dw_packed does not take */
      xr += co0, wr += co0;
      for (int32_t ky = 0; ky < nky; ky++, xr += dy, wr += ws0)
        vec(a, len, xr, dx, wr, ws1, nkx, (int16_t)c->io);
      return;
    case BCAST: {
      const int32_t run = c->merge ? nkx * c->cpg : c->cpg;
      const int32_t runs = c->merge ? 1 : nkx;
      xr += (ptrdiff_t)(co0 / c->fpg) * c->cpg * is3;
      wr += (ptrdiff_t)co0 * ws3;
#if TN_CRT_HAVE_ARM_DSP
      if (is3 == 1) {
        dsp_bcast(a, len, xr, wr, c, wn);
        return;
      }
#endif
      for (int32_t ky = 0; ky < nky; ky++, xr += dy, wr += ws0)
        for (int32_t r = 0; r < runs; r++)
          bcast(a, len, xr + r * dx, is3, wr + r * ws1, ws2, run,
                (int16_t)c->io);
      return;
    }
    default:
      for (int32_t j = 0; j < len; j++) {
        const int32_t co = co0 + j;
        const int8_t *xg = xr + (ptrdiff_t)(co / c->fpg) * c->cpg * is3;
        const int8_t *wg = wr + (ptrdiff_t)co * ws3;
        uint32_t s = 0;
        for (int32_t ky = 0; ky < nky; ky++, xg += dy, wg += ws0) {
          if (c->merge) {
            s += dot(xg, is3, wg, ws2, nkx * c->cpg, c->io, c->fo, c->narrow);
            continue;
          }
          for (int32_t kx = 0; kx < nkx; kx++)
            s += dot(xg + kx * dx, is3, wg + kx * ws1, ws2, c->cpg, c->io,
                     c->fo, c->narrow);
        }
        a[j] += s;
      }
      return;
  }
}

/* Requantizes the block at npx pixels (as accumulate leaves it) into out,
 * the pixels os2 apart and the channels os3. */
static void requant_store(const Requant *rq, const uint32_t *a, int npx,
                          int8_t *out, ptrdiff_t os2, ptrdiff_t os3) {
  /* Up to 8 channels: both pixels in one pass of 16 lanes (or 8). */
  const int32_t len = rq->len, step = len <= 8 ? 8 : BLK;
  const int32_t lanes = len <= 8 ? 8 * npx : BLK;
  int8_t res[ACC];
  for (int32_t i = 0; i * lanes < npx * step; i++) {
    const uint32_t *ai = a + i * lanes;
    int8_t *ri = res + i * lanes;
#if TN_CRT_HAVE_SSE2
    if (rq->fast) {
      tn__crt_conv_requant_sse(rq, ai, lanes, ri);
      continue;
    }
#endif
#if TN_CRT_HAVE_ARM_DSP
    if (rq->dsp) {
      requant_dsp(rq, ai, lanes, ri);
      continue;
    }
#endif
    if (rq->vec)
      requant_c(rq, ai, lanes, ri);
    else
      for (int32_t j = 0; j < lanes; j++)
        if ((len <= 8 ? j % 8 : j) < len) ri[j] = requant_lane(rq, j, ai[j]);
  }
  for (int i = 0; i < npx; i++, out += os2) {
    const int8_t *r = res + step * i;
    if (os3 == 1 && len == 16)
      memcpy(out, r, 16);
    else if (os3 == 1 && len == 8)
      memcpy(out, r, 8);
    else
      for (int32_t j = 0; j < len; j++) out[j * os3] = r[j];
  }
}

/* out = a, the int32 accumulators, laid out as in requant_store. */
static void store32(const Requant *rq, const uint32_t *a, int npx,
                    int32_t *out, ptrdiff_t os2, ptrdiff_t os3) {
  for (int i = 0; i < npx; i++, out += os2, a += rq->len)
    for (int32_t j = 0; j < rq->len; j++)
      out[j * os3] = (int32_t)a[j];
}

/* Rows of output held back by an in-place depthwise convolution (see "In
 * place" below): pad_top + 1, but no more than there are. */
static int32_t ring_rows(const TnCrtConv2d *p) {
  return p->pad_top < p->out_h ? p->pad_top + 1 : p->out_h;
}

/* A row of a block of len channels from its slot src of the ring (pixels
 * len apart) to its place in out (pixels os2 apart, channels
 * contiguous). */
static void ring_flush(const TnCrtConv2d *p, const int8_t *src, int32_t len,
                       int8_t *out) {
  const int32_t w = p->out_w;
  const ptrdiff_t os2 = p->out_strides[2];
  if (os2 == len) { /* the block is every channel: one run */
    memcpy(out, src, (size_t)w * (size_t)len);
    return;
  }
  for (int32_t x = 0; x < w; x++, out += os2, src += len) {
    if (len == 16)
      memcpy(out, src, 16);
    else if (len == 8)
      memcpy(out, src, 8);
    else
      memcpy(out, src, (size_t)len);
  }
}

/* conv_blocks' state: a block's requantization constants and (DSP) the
 * description of its packed pairs; in the DSP forms' scratch when it has
 * room (DSP_STATE_BYTES), else on the stack (conv_blocks_stack). */
typedef struct {
  Requant rq;
  Pack pk;
} BlockState;
#if TN_CRT_HAVE_ARM_DSP
_Static_assert(sizeof(BlockState) <= DSP_STATE_BYTES &&
                   offsetof(BlockState, pk.xo) <= DSP_STATE_PLAIN_BYTES &&
                   DSP_STATE_PLAIN_BYTES % 4 == 0 &&
                   _Alignof(BlockState) <= 4,
               "conv_blocks' state fits DSP_STATE_BYTES of 4-aligned scratch "
               "(DSP_STATE_PLAIN_BYTES without the depthwise fields)");
#endif

#if TN_CRT_HAVE_AVX2
/* The requantization constants of the 16 channels at co0 for the GEMM
 * form: from k's cache, else set up into it (k has room). */
static const Requant *gemm_requant(AvxBcast *k, const TnCrtQuant *q,
                                   int32_t lo, int32_t hi,
                                   const int32_t *bias, int32_t co0) {
  for (int32_t i = 0; i < k->rq_n; i++)
    if (k->rq_co0[i] == co0) return &k->rq[i];
  Requant *const rq = &k->rq[k->rq_n];
  requant_init(rq, q, lo, hi, bias, co0, 16);
  k->rq_co0[k->rq_n++] = co0;
  return rq;
}
#endif

#if TN_CRT_HAVE_AVX2
/*
 * The VNNI row form over whole output rows: the k_h input rows that a row
 * of windows reads, each completed with -io left and right of the input
 * (wholly -io above or below it), copied into k->tmp one after another,
 * so that every window of the row lies inside the copy and the border
 * pixels take the row form's tiles too (a four-pixel tile at each end of
 * a row of 32 was a quarter of the pixels, of 8 all of them). For the
 * VNNI form (pre) the copy holds x ^ 0x80 (x + 128, vpdpbusd's unsigned
 * operand), so that the row form broadcasts each four inputs with no XOR
 * of its own: one vector operation a vpdpbusd less; the AVX2 form reads
 * its inputs as they are, through row pointers into the copy (none of
 * the border pixels' search for the rows inside the input, nor their
 * copies one at a time). The bytes of a slot (one row: the
 * columns from -pad_left to the last window's last), with the rows'
 * offsets in the copy in k->po; 0 where the layer is not dense
 * channels-last of one group or the copy (and the 3 bytes the last
 * group of a run may read past it) does not fit.
 */
/* The rows of the image from -pad_top that the windows read. */
static int64_t pad_rows(const TnCrtConv2d *p) {
  return (int64_t)(p->out_h - 1) * p->stride_h +
         (int64_t)(p->k_h - 1) * p->dilation_h + 1;
}

static int32_t pad_slot(AvxBcast *k, const Conv *c, int img) {
  const TnCrtConv2d *p = c->p;
  if (p->groups != 1 || p->in_strides[3] != 1 ||
      p->in_strides[2] != p->in_c)
    return 0;
  const int64_t cols = (int64_t)(p->out_w - 1) * p->stride_w +
                       (int64_t)(p->k_w - 1) * p->dilation_w + 1;
  const int64_t slot = cols * p->in_c;
  /* the copy's rows: a window's k_h, or with img every row of the image
   * that some window reads (pad_rows) */
  const int64_t n = img ? pad_rows(p) : p->k_h;
  if (slot * n + 3 > (img ? AVX_IMG : AVX_TMP)) return 0;
  const int64_t dy = img ? p->dilation_h : 1;
  for (int32_t r = 0; r < k->rows; r++)
    k->po[r] = (ptrdiff_t)(k->ky[r] * dy * slot) +
               (c->merge ? 0
                         : (ptrdiff_t)(r % p->k_w) * p->dilation_w * p->in_c);
  return (int32_t)slot;
}

/* The copy pad_slot describes into d: n rows, row j input row iy0 + j *
 * dy of the image at x. */
static void pad_fill(int8_t *d0, const Conv *c, const int8_t *x, int64_t iy0,
                     int64_t n_rows, int64_t dy, int32_t slot, int pre) {
  const TnCrtConv2d *p = c->p;
  /* -io (io in [-127, 128]), and with pre each input and it ^ 0x80 */
  const int fill = (uint8_t)(-c->io) ^ (pre ? 0x80 : 0);
  const int64_t cin = p->in_c, cols = slot / cin;
  const int64_t c0 = p->pad_left < cols ? p->pad_left : cols;
  const int64_t end = (int64_t)p->pad_left + p->in_w;
  const int64_t c1 = end < cols ? end : cols; /* input columns [c0, c1) */
  for (int64_t j = 0; j < n_rows; j++) {
    int8_t *const d = d0 + (ptrdiff_t)j * slot;
    const int64_t iy = iy0 + j * dy;
    if (iy < 0 || iy >= p->in_h || c1 <= c0) {
      memset(d, fill, (size_t)slot);
      continue;
    }
    memset(d, fill, (size_t)(c0 * cin));
    const uint8_t *src = (const uint8_t *)x +
                         (ptrdiff_t)iy * p->in_strides[1] +
                         (c0 - p->pad_left) * cin;
    uint8_t *dst = (uint8_t *)d + c0 * cin;
    const int64_t n = (c1 - c0) * cin;
    if (!pre) {
      memcpy(dst, src, (size_t)n);
      memset(d + c1 * cin, fill, (size_t)(slot - c1 * cin));
      continue;
    }
    /* (pre only for the VNNI forms: the CPU has AVX-512) */
    tn__crt_conv_xor80(dst, src, n);
    memset(d + c1 * cin, fill, (size_t)(slot - c1 * cin));
  }
  /* the bytes the last row's last group may read past the copy (their
   * weights are 0), set all the same */
  if (pre) memset(d0 + (ptrdiff_t)n_rows * slot, 0, 3);
}

/* The rows of the image's copy that an output row's windows span. */
static int32_t avx_img_rows(const TnCrtConv2d *p) {
  return (p->k_h - 1) * p->dilation_h + 1;
}

/* pad_slot for the copy of the whole image (k->img), or 0 where it does
 * not fit: for the VNNI forms (vnni) where the image fits, for the AVX2
 * row form also where a row's window rows fit its int16 widening
 * (tn__crt_conv_avx2_rows: AVX_TMP inputs at most). */
static int32_t pad_avx_img(AvxBcast *k, const Conv *c, int vnni) {
  const int32_t slot = pad_slot(k, c, 1);
  if (slot && !vnni &&
      (int64_t)avx_img_rows(c->p) * slot + 3 > AVX_TMP)
    return 0;
  return slot;
}
#endif

/* Every output pixel, block by block; the block's accumulators (which
 * start from the bias) are requantized into out8 (with q) or stored into
 * out32. On the SSE2 path neighbouring pixels go in pairs, sharing the
 * widened weights: BCAST pixels with the same taps, any two for DW. With a
 * ring (in-place depthwise, out8 == the input), each output row of a block
 * goes to the ring first and reaches out8 once no later row reads the input
 * it replaces. On the DSP path, the pairs (see Pack) go to pack_buf when
 * its pack_bytes hold them. */
#if TN_CRT_HAVE_SSE2
/* Whether some output pixel's window lies wholly in the padding: its
 * first row or column at or past the input's end, or its last before the
 * input's start. */
static int window_in_padding(const TnCrtConv2d *p) {
  const int64_t eh = (int64_t)(p->k_h - 1) * p->dilation_h + 1;
  const int64_t ew = (int64_t)(p->k_w - 1) * p->dilation_w + 1;
  return p->pad_top >= eh || p->pad_left >= ew ||
         (int64_t)(p->out_h - 1) * p->stride_h - p->pad_top >= p->in_h ||
         (int64_t)(p->out_w - 1) * p->stride_w - p->pad_left >= p->in_w;
}
#endif

static NOINLINE void conv_blocks(const Conv *c, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, const int32_t *bias,
                                 int8_t *out8, int32_t *out32, int8_t *ring,
                                 int32_t *pack_buf, size_t pack_bytes,
                                 void *avx_k, BlockState *restrict st) {
  const TnCrtConv2d *p = c->p;
#if TN_CRT_HAVE_AVX2
  AvxBcast *const avx_buf = avx_k;
#else
  (void)avx_k;
#endif
  const ptrdiff_t os0 = p->out_strides[0], os1 = p->out_strides[1],
                  os2 = p->out_strides[2], os3 = p->out_strides[3];
  /* Output columns [fx0, fx1) have all their kernel columns inside. */
  const int64_t last = (int64_t)(p->k_w - 1) * p->dilation_w;
  const int64_t fx0 = ((int64_t)p->pad_left + p->stride_w - 1) / p->stride_w;
  const int64_t fxn = (int64_t)p->in_w - 1 + p->pad_left - last;
  const int64_t fx1 = fxn < 0 ? 0 : fxn / p->stride_w + 1;
  const int32_t rows = ring ? ring_rows(p) : 1;
  const ptrdiff_t slot_size =
      ring ? (ptrdiff_t)p->out_w * (p->out_c < BLK ? p->out_c : BLK) : 0;
#if TN_CRT_HAVE_ARM_DSP
  Requant *const rq = &st->rq;
  Pack *const pk = &st->pk;
  int32_t pack_words;
  int32_t pack_w =
      pack_width(c, pack_buf ? (int64_t)(pack_bytes / 4) : 0, &pack_words);
  pk->w = pack_buf;
#else
  /* elsewhere a local, which no store through out8 can reach */
  Requant rq_own, *const rq = &rq_own;
  (void)pack_buf, (void)pack_bytes, (void)st;
#endif
#if TN_CRT_HAVE_AVX2
  /* 1x1, unpadded, one group, channels-last in and out: the GEMM form
   * (conv_s8.h) over the pixels of each output row, or of each image
   * where the stride is 1 and the rows are contiguous in both. */
  const int gemm = avx_buf && out8 && !ring && c->mode == BCAST &&
                   p->groups == 1 && p->k_h == 1 && p->k_w == 1 &&
                   p->pad_top == 0 && p->pad_left == 0 &&
                   (int64_t)(p->out_h - 1) * p->stride_h < p->in_h &&
                   (int64_t)(p->out_w - 1) * p->stride_w < p->in_w &&
                   p->in_strides[3] == 1 && os3 == 1;
  const int32_t gemm_rows =
      p->stride_h == 1 && p->stride_w == 1 && p->out_w == p->in_w &&
              (ptrdiff_t)p->in_strides[1] ==
                  (ptrdiff_t)p->in_w * p->in_strides[2] &&
              os1 == (ptrdiff_t)p->out_w * os2 &&
              (int64_t)p->out_h * p->out_w <= INT32_MAX
          ? p->out_h
          : 1;
#endif
#if TN_CRT_HAVE_SSE2
  /* The SSE2 and AVX2 forms of DW: the window's taps, once a call */
  DwWin dwin;
  /* (not where some window lies wholly in the padding, which only an
   * odd geometry has: padding of a kernel's extent or more; the SSE2 and
   * AVX2 DW forms assume every window meets the input) */
  const int dw_taps = c->mode == DW && !window_in_padding(p) &&
                      tn__crt_conv_dw_taps(&dwin, c);
#endif
#if TN_CRT_HAVE_AVX2
  /* the VNNI row form's copy of the whole image: the batch's image it
   * holds (-1 none yet; only that form writes it) */
  int32_t img_n = -1;
  const int row2 = avx_buf && out8 && !ring && c->mode == BCAST &&
                   p->groups == 1 && os3 == 1 && tn__crt_avx512vnni();
#endif
  for (int32_t co0 = 0, len; co0 < p->out_c; co0 += len) {
    /* The rest of the group for BCAST, of all channels otherwise. */
    int32_t rem = c->mode == BCAST ? c->fpg - co0 % c->fpg : p->out_c - co0;
#if TN_CRT_HAVE_AVX2
    /* The 1x1 GEMM form: 32 channels with VNNI (or a last 16), else 16. */
    if (gemm && rem >= 16) {
      const Requant *grq[2];
      int32_t off[2];
      const int nb = rem >= 32 && tn__crt_avx512vnni() ? 2 : 1;
      if (avx_buf->rq_n + nb > AVX_RQ) avx_buf->rq_n = 0; /* room for both */
      for (int b = 0; b < nb; b++)
        grq[b] = gemm_requant(avx_buf, q, lo, hi, bias, co0 + 16 * b);
      if (grq[0]->fast && grq[nb - 1]->fast &&
          tn__crt_conv_gemm_pack(avx_buf, c, co0, nb, off)) {
        len = 16 * nb;
        for (int32_t n = 0; n < p->batch; n++)
          for (int32_t oy = 0; oy < p->out_h; oy += gemm_rows)
            tn__crt_conv_gemm(
                avx_buf, c, off, nb,
                c->in + (ptrdiff_t)n * p->in_strides[0] +
                    (ptrdiff_t)oy * p->stride_h * p->in_strides[1],
                (ptrdiff_t)p->stride_w * p->in_strides[2],
                gemm_rows * p->out_w, grq,
                out8 + (ptrdiff_t)n * os0 + (ptrdiff_t)oy * os1 + co0, os2);
        continue;
      }
    }
    /* The VNNI row form two blocks of 16 channels a pass, over the copy
     * of the whole image: each broadcast of four inputs serves 32
     * channels' vpdpbusd. */
    if (row2 && rem >= 32) {
      const Requant *rrq[2];
      int32_t off[2], slot = 0;
      if (avx_buf->rq_n + 2 > AVX_RQ) avx_buf->rq_n = 0; /* room for both */
      for (int b = 0; b < 2; b++)
        rrq[b] = gemm_requant(avx_buf, q, lo, hi, bias, co0 + 16 * b);
      if (rrq[0]->fast && rrq[1]->fast &&
          tn__crt_conv_gemm_pack(avx_buf, c, co0, 2, off) && avx_buf->vnni)
        slot = pad_slot(avx_buf, c, 1);
      if (slot) {
        len = 32;
        for (int32_t n = 0; n < p->batch; n++) {
          const int8_t *const xn = c->in + (ptrdiff_t)n * p->in_strides[0];
          if (img_n != n) {
            pad_fill(avx_buf->img, c, xn, -(int64_t)p->pad_top, pad_rows(p),
                     1, slot, 1);
            img_n = n;
          }
          for (int32_t oy = 0; oy < p->out_h; oy++)
            tn__crt_conv_vnni_row2(
                avx_buf, off, avx_buf->po,
                avx_buf->img + (ptrdiff_t)oy * p->stride_h * slot,
                (ptrdiff_t)p->stride_w * p->in_c, p->out_w, rrq,
                out8 + (ptrdiff_t)n * os0 + (ptrdiff_t)oy * os1 + co0, os2);
        }
        continue;
      }
    }
#endif
#if TN_CRT_HAVE_ARM_DSP
    if (pack_w && rem > pack_w) rem = pack_w;
#endif
    len = block_width(rem);
    requant_init(rq, q, lo, hi, bias, co0, len);
#if TN_CRT_HAVE_ARM_DSP
    const int packed = pack_w && len % 4 == 0;
    if (packed && c->mode == DW)
      pack_dw(pk, c, co0, len, rq->bias);
    else if (packed)
      pack_block(pk, c, co0, len);
#endif
#if TN_CRT_HAVE_SSE2
    /* The SSE2 forms: BCAST and DW blocks of 8 or 16 channels, the latter
     * with windows dw_init takes; they do pixels in pairs. */
    const int sse = len == 8 || len == 16;
    const int fast_dw = sse && dw_taps;
    if (fast_dw) tn__crt_conv_dw_init(&dwin, c, co0, len / 8, rq->bias);
    const int pairs = fast_dw || (sse && c->mode == BCAST);
#else
    const int pairs = 0, fast_dw = 0;
#endif
#if TN_CRT_HAVE_AVX2
    /* The AVX2 form of BCAST: four pixels at once, their rows through
     * row pointers; with is3 == 1 any four (rows outside the input read
     * avx_buf->pad, rows partly outside a completed copy), else four with
     * whole windows. */
    const int avx = avx_buf && c->mode == BCAST && (len == 8 || len == 16) &&
                    tn__crt_conv_avx2_pack(avx_buf, c, co0, len / 8);
    const int avx_any =
        avx && p->in_strides[3] == 1 &&
        (!c->merge || (int64_t)avx_buf->rows * avx_buf->run <= AVX_TMP / 4);
    /* and of DW, for blocks of 16 channels */
    const int avx_dw = fast_dw && len == 16 && rq->fast && tn__crt_avx2();
    const ptrdiff_t avx_x = (ptrdiff_t)(co0 / c->fpg) * c->cpg *
                            p->in_strides[3];
#endif
    /* Where the output pixels of a row go: ps2 apart, channels ps3. */
    const ptrdiff_t ps2 = ring ? len : os2, ps3 = ring ? 1 : os3;
#if TN_CRT_HAVE_AVX2
    /* the VNNI row form of the AVX2 form's blocks: runs of pixels with
     * whole windows, requantized in registers */
    const int avx_row = avx && avx_buf->vnni && p->in_strides[3] == 1 &&
                        out8 && !ring && ps3 == 1 && rq->fast;
    /* it, or the AVX2 form's tiles, over whole rows, through a copy of
     * the whole image where it fits, made once for all the blocks
     * (img_n), else a padded copy of each row's input rows */
    const int avx_whole = avx && out8 && !ring && ps3 == 1 && rq->fast;
    const int32_t avx_img =
        avx_whole ? pad_avx_img(avx_buf, c, avx_buf->vnni) : 0;
    const int32_t avx_slot =
        avx_img ? avx_img : avx_whole ? pad_slot(avx_buf, c, 0) : 0;
#endif
    Win wn;
    for (int32_t n = 0; n < p->batch; n++) {
      wn.x = c->in + (ptrdiff_t)n * p->in_strides[0];
      int8_t *const out_n = out8 ? out8 + (ptrdiff_t)n * os0 + co0 : NULL;
      for (int32_t oy = 0, slot = 0; oy < p->out_h; oy++) {
        /* The row's first output (in place: in slot oy % rows). */
        const ptrdiff_t ro =
            (ptrdiff_t)n * os0 + (ptrdiff_t)oy * os1 + (ptrdiff_t)co0 * os3;
        int8_t *const row8 = ring ? ring + slot * slot_size
                                  : out8 ? out8 + ro : NULL;
        int32_t *const row32 = out32 ? out32 + ro : NULL;
#if TN_CRT_HAVE_AVX2
        if (avx_img) {
          if (img_n != n) {
            pad_fill(avx_buf->img, c, wn.x, -(int64_t)p->pad_top,
                     pad_rows(p), 1, avx_img, avx_buf->vnni);
            img_n = n;
          }
          const int8_t *const xi =
              avx_buf->img + (ptrdiff_t)oy * p->stride_h * avx_img;
          const ptrdiff_t xp = (ptrdiff_t)p->stride_w * p->in_c;
          if (avx_buf->vnni)
            tn__crt_conv_vnni_row(avx_buf, avx_buf->po, 1, xi, xp, p->out_w,
                                  rq, row8, ps2);
          else
            tn__crt_conv_avx2_rows(avx_buf, avx_buf->po, c->io, xi,
                                   avx_img_rows(p) * avx_img, xp, p->out_w,
                                   rq, row8, ps2);
          continue; /* (no ring) */
        }
        if (avx_slot) {
          const ptrdiff_t xp = (ptrdiff_t)p->stride_w * p->in_c;
          pad_fill(avx_buf->tmp, c, wn.x,
                   (int64_t)oy * p->stride_h - p->pad_top, p->k_h,
                   p->dilation_h, avx_slot, avx_buf->vnni);
          if (avx_buf->vnni)
            tn__crt_conv_vnni_row(avx_buf, avx_buf->po, 1, avx_buf->tmp, xp,
                                  p->out_w, rq, row8, ps2);
          else
            tn__crt_conv_avx2_rows(avx_buf, avx_buf->po, c->io, avx_buf->tmp,
                                   p->k_h * avx_slot, xp, p->out_w, rq, row8,
                                   ps2);
          continue; /* (no ring) */
        }
#endif
        wn.iy0 = oy * p->stride_h - p->pad_top;
        taps(wn.iy0, p->k_h, p->dilation_h, p->in_h, &wn.ky0, &wn.ky1);
        for (int32_t ox = 0, npx; ox < p->out_w; ox += npx) {
          wn.ix0 = ox * p->stride_w - p->pad_left;
#if TN_CRT_HAVE_AVX2
          /* The VNNI row form: from ox, whole windows, as many pixels as
           * make whole tiles of 4 (the rest, and the last four of the row,
           * in four-pixel tiles that compute nothing twice). */
          const int64_t row_end =
              avx_any && p->out_w - 4 < fx1 ? p->out_w - 4 : fx1;
          npx = (int32_t)(row_end - ox) & ~3;
          if (avx_row && ox >= fx0 && npx > 0 && wn.ky0 == 0 &&
              wn.ky1 == p->k_h) {
            tn__crt_conv_vnni_row(
                avx_buf, avx_buf->xo, 0,
                wn.x + avx_x + (ptrdiff_t)wn.iy0 * p->in_strides[1] +
                    (ptrdiff_t)wn.ix0 * p->in_strides[2],
                (ptrdiff_t)p->stride_w * p->in_strides[2], npx, rq,
                row8 + (ptrdiff_t)ox * ps2, ps2);
            continue;
          }
          if (avx_any || (avx && fx1 - fx0 >= 4 && ox >= fx0 && ox < fx1 &&
                          wn.ky0 == 0 && wn.ky1 == p->k_h)) {
            /* Four pixels from ox, or the last four of the row (or of the
             * run with whole windows) if fewer are left, those before ox
             * again (the same values); a row of fewer than four repeats
             * its last pixel. */
            const int32_t end = avx_any ? p->out_w : (int32_t)fx1;
            const int32_t o4 = ox + 4 <= end ? ox : end >= 4 ? end - 4 : ox;
            int32_t px[4];
            int8_t *o8[4];
            for (int i = 0; i < 4; i++) {
              px[i] = o4 + i < end ? o4 + i : end - 1;
              o8[i] = row8 ? row8 + (ptrdiff_t)px[i] * ps2 : NULL;
            }
            uint32_t a4[4 * BLK];
            const int fused = row8 && ps3 == 1 && rq->fast;
            tn__crt_conv_avx2_pixels(avx_buf, c, wn.x + avx_x, wn.iy0,
                                     wn.ky0, wn.ky1, px, rq, a4,
                                     fused ? o8 : NULL);
            if (!fused)
              for (int i = 0; i < 4; i++) {
                if (row32)
                  store32(rq, a4 + i * len, 1,
                          row32 + (ptrdiff_t)px[i] * os2, os2, os3);
                else
                  requant_store(rq, a4 + i * len, 1, o8[i], ps2, ps3);
              }
            npx = px[3] + 1 - ox;
            continue;
          }
#endif
          npx = 1;
          if (pairs && ox >= fx0 && ox + 1 < fx1) { /* the usual case */
            wn.kx0 = wn.nx0 = 0, wn.kx1 = wn.nx1 = p->k_w, npx = 2;
          } else {
            taps(wn.ix0, p->k_w, p->dilation_w, p->in_w, &wn.kx0, &wn.kx1);
            if (pairs && ox + 1 < p->out_w) {
              /* DW pairs any two; BCAST pixels with the same taps. */
              taps(wn.ix0 + p->stride_w, p->k_w, p->dilation_w, p->in_w,
                   &wn.nx0, &wn.nx1);
              if (fast_dw || (wn.nx0 == wn.kx0 && wn.nx1 == wn.kx1)) npx = 2;
            }
          }
          uint32_t a[ACC];
#if TN_CRT_HAVE_SSE2
          if (fast_dw) {
            const int full = wn.ky0 == 0 && wn.ky1 == p->k_h &&
                             wn.kx0 == 0 && wn.kx1 == p->k_w &&
                             (npx == 1 || (wn.nx0 == 0 && wn.nx1 == p->k_w));
#if TN_CRT_HAVE_AVX2
            if (avx_dw && row8 && ps3 == 1) {
              tn__crt_conv_dw_avx2(
                  &dwin, &wn, npx, full, wn.x,
                  (ptrdiff_t)wn.iy0 * p->in_strides[1] +
                      (ptrdiff_t)wn.ix0 * p->in_strides[2] + co0,
                  (ptrdiff_t)p->stride_w * p->in_strides[2], rq,
                  row8 + (ptrdiff_t)ox * ps2, ps2);
              continue;
            }
#endif
            tn__crt_conv_dw(&dwin, &wn, len, npx, full, wn.x,
               (ptrdiff_t)wn.iy0 * p->in_strides[1] +
                   (ptrdiff_t)wn.ix0 * p->in_strides[2] + co0,
               (ptrdiff_t)p->stride_w * p->in_strides[2], a);
          } else
#endif
#if TN_CRT_HAVE_ARM_DSP
          if (packed && c->mode == DW)
            dsp_dw_packed(c, pk, &wn, co0, len, a);
          else if (!packed ||
                   !dsp_packed(c, pk, &wn, co0, len, rq->bias, a))
#endif
            accumulate(c, &wn, co0, len, npx, rq->bias, a);
          if (row32)
            store32(rq, a, npx, row32 + (ptrdiff_t)ox * os2, os2, os3);
          else
            requant_store(rq, a, npx, row8 + (ptrdiff_t)ox * ps2, ps2, ps3);
        }
        if (!ring) continue;
        slot = slot + 1 == rows ? 0 : slot + 1;
        /* Input row oy - pad_top has had its last reader. Then rows is
         * pad_top + 1, so that row's slot is the next one. */
        if (oy >= p->pad_top)
          ring_flush(p, ring + slot * slot_size, len,
                     out_n + (ptrdiff_t)(oy - p->pad_top) * os1);
      }
      /* The rows still in the ring: from out_h - pad_top on. */
      if (ring)
        for (int32_t r = p->out_h > p->pad_top ? p->out_h - p->pad_top : 0;
             r < p->out_h; r++)
          ring_flush(p, ring + (r % rows) * slot_size, len,
                     out_n + (ptrdiff_t)r * os1);
    }
  }
}

#if TN_CRT_HAVE_ARM_DSP
/* conv_blocks with its state on the stack (and no pairs packed): apart,
 * so that the stack holds it only on this path. */
static NOINLINE void conv_blocks_stack(const Conv *c, const TnCrtQuant *q,
                                       int32_t lo, int32_t hi,
                                       const int32_t *bias, int8_t *out8,
                                       int32_t *out32, int8_t *ring,
                                       void *avx) {
  BlockState st;
  conv_blocks(c, q, lo, hi, bias, out8, out32, ring, NULL, 0, avx, &st);
}
#endif

/* The DSP forms' part of a scratch: from byte `from` on, 4-aligned;
 * *n its bytes (0, and NULL, when there are none). */
static void *dsp_area(void *scratch, size_t size, size_t from, size_t *n) {
  *n = 0;
  if (scratch == NULL || size < from + 3) return NULL;
  uint8_t *const b = (uint8_t *)scratch + from;
  const size_t skip = (size_t)(-(uintptr_t)b & 3u);
  *n = size - from - skip;
  return b + skip;
}

#if TN_CRT_HAVE_ARM_DSP
/* dsp_pointwise's mode for the layer (pw_mode) plus 1 where it runs the
 * layer with dsp_n bytes at dsp: it takes it, and TN_CRT_CONV_S8_FORMS
 * keeps that mode's loop or the any-mode one (pw_run); else 0. */
static int pw_taken(const Conv *c, const TnCrtQuant *q, const void *dsp,
                    size_t dsp_n) {
  if (!dsp_pw_ok(c, q) || dsp == NULL || dsp_n < pw_scratch_bytes(c->p))
    return 0;
  const int mode = pw_mode(c, q);
  const int kept = mode == PW_FAST ? TN__CONV_FORM(TN_CRT_CONV_FORM_PW_FAST)
                   : mode == PW_WIDE
                       ? TN__CONV_FORM(TN_CRT_CONV_FORM_PW_WIDE)
                       : 0;
  return kept || TN__CONV_FORM(TN_CRT_CONV_FORM_PW_ANY) ? mode + 1 : 0;
}
#endif

/* dsp_pointwise, where the layer takes it and dsp's dsp_n bytes hold its
 * buffers, else conv_blocks (dsp for the pairs); TN_CRT_UNSUPPORTED where
 * that is the blocks and TN_CRT_CONV_S8_FORMS leaves them out. */
static TnCrtStatus conv_run(const Conv *c, const TnCrtQuant *q, int32_t lo,
                            int32_t hi, const int32_t *bias, int8_t *out8,
                            int32_t *out32, int8_t *ring, void *avx,
                            void *dsp, size_t dsp_n) {
#if TN_CRT_HAVE_ARM_DSP
  const int pw = out8 && !ring ? pw_taken(c, q, dsp, dsp_n) : 0;
  if (pw) {
#if TN_CRT_HAVE_ARM_MVE
    mve_pointwise(c, q, lo, hi, bias, out8, dsp, pw - 1);
#else
    dsp_pointwise(c, q, lo, hi, bias, out8, dsp, pw - 1);
#endif
    return TN_CRT_OK;
  }
  if (TN__CONV_FORM(TN_CRT_CONV_FORM_DW3) && out8 && dsp_dw3_ok(c, q) &&
      (TN__CONV_FORM(TN_CRT_CONV_FORM_DW3_ANY) ||
       dw3_fast_only(c, q, lo, hi))) { /* depthwise 3x3, in place or not */
#if TN_CRT_HAVE_ARM_MVE
    if (!mve_dw3(c, q, lo, hi, bias, out8, ring))
#endif
      dsp_dw3(c, q, lo, hi, bias, out8, ring);
    return TN_CRT_OK;
  }
  if (!TN__CONV_FORM(TN_CRT_CONV_FORM_BLOCKS)) return TN_CRT_UNSUPPORTED;
#if TN_CRT_HAVE_ARM_MVE
  if (out8 && mve_dw(c, q, lo, hi, bias, out8, ring)) return TN_CRT_OK;
#endif
  /* the whole state and the pairs after it, or the state without the
   * fields of packed depthwise blocks and no pairs */
  const size_t state = dsp_state_bytes(c, 1);
  if (dsp != NULL && dsp_n >= dsp_state_bytes(c, 0)) {
    const int pairs = dsp_n >= state;
    conv_blocks(c, q, lo, hi, bias, out8, out32, ring,
                pairs ? (int32_t *)(void *)((uint8_t *)dsp + state) : NULL,
                pairs ? dsp_n - state : 0, avx, dsp);
    return TN_CRT_OK;
  }
  conv_blocks_stack(c, q, lo, hi, bias, out8, out32, ring, avx);
  return TN_CRT_OK;
#else
  (void)dsp, (void)dsp_n;
#if TN_CRT_HAVE_AVX2
  if (out8 && tn__crt_conv_wide(c, q, lo, hi, bias, out8, ring != NULL))
    return TN_CRT_OK;
#endif
  conv_blocks(c, q, lo, hi, bias, out8, out32, ring, NULL, 0, avx, NULL);
  return TN_CRT_OK;
#endif
}

/* ------------------------------------------------------------------------ */
/* In place                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * out == in for two geometries, each of which writes an output element only
 * where the input it replaces has been read for the last time, through a
 * small scratch buffer:
 *  - ROWS, depthwise with multiplier 1 and stride_h 1 (output channel c
 *    reads input channel c alone; output row oy reads input rows
 *    oy - pad_top + ky * dilation_h, so input row r is last read by output
 *    row r + pad_top): the block loop stays outermost and the input is read
 *    where it is, as out of place; a block's output rows go to a ring of
 *    ring_rows() rows of that block's channels in scratch, and row r is
 *    copied to its place once row r + pad_top is done (the last rows at
 *    the end of each batch). The horizontal geometry does not matter: whole
 *    rows wait in the ring.
 *  - PIXELS, 1x1, stride 1, no padding, out_c <= in_c, both dense NHWC: an
 *    output pixel reads its own input pixel alone. The N*H*W pixels are cut
 *    into chunks of chunk_pixels(); a chunk's input is copied to scratch
 *    and the chunk convolved from there (as a 1 x chunk image). Output
 *    pixel p ends at byte (p + 1) * out_c <= (p + 1) * in_c, so a chunk's
 *    output overwrites only inputs of this chunk or earlier ones, never one
 *    still to be copied; batches are consecutive pixels like any others.
 *    Chunks of PIXEL_CHUNK bytes make the once-per-block setup, repeated
 *    per chunk, a small part of a chunk's work.
 *  - LINES, any other layer of stride_h 1 and out_c <= in_c (a regular 3x3
 *    convolution at SAME padding, say): every output row reads all the
 *    channels of rows oy - pad_top on, so input row r is last read by
 *    output row r + pad_top, as in ROWS, but across all the channels. Each
 *    output row is computed by itself, out of place, into a ring of
 *    ring_rows() whole rows in scratch, from the rows of the buffer it
 *    reads (a one-row image, its padding above worked out afresh), and row
 *    r goes to its place once row r + pad_top is done. Output row r's
 *    bytes end at (r + 1) * out_w * out_c <= (r + 1) * in_w * in_c, within
 *    input rows already read. A call per row costs its setup per row (the
 *    matrix product's per-channel starting sums, a few per cent of a 3x3
 *    layer's cycles), so tn_crt_conv2d_s8_inplace_ok answers 2 for it and
 *    the planner takes it only where RAM is what counts (the Cortex-M).
 *  - GROW, PIXELS' layers with out_c > in_c (a pointwise layer that widens
 *    the channels): the buffer is the output's size, the input in its
 *    first batch * in_h * in_w * in_c bytes, and the chunks go from the
 *    last one back. A chunk from pixel p0 writes bytes from p0 * out_c on,
 *    over inputs of pixels p0 * out_c / in_c >= p0 and on: this chunk's,
 *    copied to scratch first, or later ones, done. The matrix product
 *    then runs chunk by chunk, never over the whole layer at once; a plan
 *    takes it where RAM counts, as LINES (tn_crt_conv2d_s8_inplace_ok 3).
 * All need the same byte layout for input and output (dense NHWC strides,
 * out_h == in_h and out_w == in_w), so that an output element's address is
 * that of an input element already read (or about to be).
 */
enum { NOT_IN_PLACE, ROWS, PIXELS, LINES, GROW };
enum { PIXEL_CHUNK = 1024 };

/* Strides {h*w*c, w*c, c, 1}. */
static int dense_nhwc(const int32_t s[4], int32_t h, int32_t w, int32_t c) {
  return s[3] == 1 && s[2] == c && (int64_t)s[1] == (int64_t)w * c &&
         (int64_t)s[0] == (int64_t)s[1] * h;
}

static int in_place_kind(const TnCrtConv2d *p) {
  if (p == NULL || geom_check(p) != TN_CRT_OK || p->out_h != p->in_h ||
      p->out_w != p->in_w ||
      !dense_nhwc(p->in_strides, p->in_h, p->in_w, p->in_c) ||
      !dense_nhwc(p->out_strides, p->out_h, p->out_w, p->out_c))
    return NOT_IN_PLACE;
  if (p->groups == p->in_c && p->out_c == p->in_c && p->stride_h == 1)
    return ROWS;
  if (p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 &&
      p->pad_top == 0 && p->pad_left == 0)
    return p->out_c <= p->in_c ? PIXELS : GROW;
  if (p->stride_h == 1 && p->out_c <= p->in_c) return LINES;
  return NOT_IN_PLACE;
}

/* Pixels per PIXELS chunk: PIXEL_CHUNK bytes of input (at least one
 * pixel), no more than there are. */
static int32_t chunk_pixels(const TnCrtConv2d *p) {
  const int64_t all = (int64_t)p->batch * p->in_h * p->in_w;
  const int32_t n = p->in_c < PIXEL_CHUNK ? PIXEL_CHUNK / p->in_c : 1;
  return all < n ? (int32_t)all : n;
}

/* PIXELS (GROW: up, the chunks from the last one back): buf holds the
 * input and receives the output. */
static NOINLINE TnCrtStatus conv_pixels(const TnCrtConv2d *p, const TnCrtQuant *q, int32_t lo,
                        int32_t hi, const int8_t *w, const int32_t *bias,
                        int8_t *buf, int8_t *scratch, void *dsp,
                        size_t dsp_n, int up) {
  const int64_t all = (int64_t)p->batch * p->in_h * p->in_w;
  const int32_t chunk = chunk_pixels(p);
  int64_t last = 0; /* the last chunk's first pixel (no 64-bit division,
                       * which a Cortex-M links a libgcc routine for) */
  while (up && last + chunk < all) last += chunk;
  TnCrtConv2d g = *p;
  AVX_DECL(avx); /* packed once for every chunk */
  g.batch = 1, g.in_h = g.out_h = 1;
  for (int64_t p0 = up ? last : 0; p0 >= 0 && p0 < all;
       p0 += up ? -(int64_t)chunk : chunk) {
    g.in_w = g.out_w = all - p0 < chunk ? (int32_t)(all - p0) : chunk;
    g.in_strides[0] = g.in_strides[1] = g.in_w * p->in_c;
    g.out_strides[0] = g.out_strides[1] = g.out_w * p->out_c;
    memcpy(scratch, buf + p0 * p->in_c, (size_t)g.in_w * (size_t)p->in_c);
    Conv c;
    int8_t *out = buf + p0 * p->out_c;
    /* A part of a valid geometry: conv_init succeeds (checked all the
     * same, which also tells gcc at -O3 that c is set). */
    const TnCrtStatus st = conv_init(&c, &g, q->input_offset,
                                     q->filter_offset, scratch, w, out);
    if (st != TN_CRT_OK) return st;
    const TnCrtStatus rs =
        conv_run(&c, q, lo, hi, bias, out, NULL, NULL, avx, dsp, dsp_n);
    if (rs != TN_CRT_OK) return rs;
  }
  return TN_CRT_OK;
}

/* LINES: buf holds the input and receives the output; ring holds
 * ring_rows() output rows (see "In place" above). */
static NOINLINE TnCrtStatus conv_lines(const TnCrtConv2d *p,
                                       const TnCrtQuant *q, int32_t lo,
                                       int32_t hi, const int8_t *w,
                                       const int32_t *bias, int8_t *buf,
                                       int8_t *ring, void *dsp,
                                       size_t dsp_n) {
  const int32_t rows = ring_rows(p);
  const ptrdiff_t row = (ptrdiff_t)p->out_w * p->out_c;
  TnCrtConv2d g = *p;
  AVX_DECL(avx); /* packed once for every row */
  g.batch = 1, g.out_h = 1;
  g.out_strides[0] = g.out_strides[1] = row;
  for (int32_t b = 0; b < p->batch; b++) {
    int8_t *const img = buf + (ptrdiff_t)b * p->in_strides[0];
    int8_t *const oimg = buf + (ptrdiff_t)b * p->out_strides[0];
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      /* the rows from the first one the window reaches, or from row 0,
       * to the end: oy - pad_top < in_h as out_h == in_h */
      const int32_t r0 = oy - p->pad_top, s = r0 > 0 ? r0 : 0;
      g.in_h = p->in_h - s, g.pad_top = s - r0;
      int8_t *const slot = ring + (ptrdiff_t)(oy % rows) * row;
      Conv c;
      const int8_t *const in = img + (ptrdiff_t)s * p->in_strides[1];
      /* a part of a valid geometry: conv_init succeeds (checked all the
       * same, as in conv_pixels) */
      TnCrtStatus st =
          conv_init(&c, &g, q->input_offset, q->filter_offset, in, w, slot);
      if (st == TN_CRT_OK)
        st = conv_run(&c, q, lo, hi, bias, slot, NULL, NULL, avx, dsp, dsp_n);
      if (st != TN_CRT_OK) return st;
      if (r0 >= 0) /* row r0 is read no more */
        memcpy(oimg + (ptrdiff_t)r0 * row,
               ring + (ptrdiff_t)(r0 % rows) * row, (size_t)row);
    }
    for (int32_t r = p->out_h - p->pad_top > 0 ? p->out_h - p->pad_top : 0;
         r < p->out_h; r++) /* the rows still in the ring */
      memcpy(oimg + (ptrdiff_t)r * row, ring + (ptrdiff_t)(r % rows) * row,
             (size_t)row);
  }
  return TN_CRT_OK;
}

int32_t tn_crt_conv2d_s8_inplace_ok(const TnCrtConv2d *p) {
  const int kind = in_place_kind(p);
  return kind == NOT_IN_PLACE ? 0 : kind == LINES ? 2 : kind == GROW ? 3 : 1;
}

size_t tn_crt_conv2d_s8_inplace_scratch_size(const TnCrtConv2d *p) {
  uint64_t n;
  switch (in_place_kind(p)) {
    case ROWS:
      n = (uint64_t)ring_rows(p) * (uint64_t)p->out_w *
          (uint64_t)(p->out_c < BLK ? p->out_c : BLK);
      break;
    case PIXELS:
    case GROW:
      n = (uint64_t)chunk_pixels(p) * (uint64_t)p->in_c;
      break;
    case LINES:
      n = (uint64_t)ring_rows(p) * (uint64_t)p->out_w * (uint64_t)p->out_c;
      break;
    default:
      return 0;
  }
  return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* ------------------------------------------------------------------------ */
/* The packed 1x1 layer                                                       */
/* ------------------------------------------------------------------------ */

/*
 * tn_crt_conv2d_s8_packed: a 1x1 layer of one group, stride 1, unpadded,
 * dense NHWC, is a dense layer whose rows are the pixels (K = in_c, N =
 * out_c), and its weight comes as the packed dense layer's (the compiler
 * packed it once), so the dense layer runs it (dense_s8.c: the portable
 * C, the AVX2 and VNNI forms of the layout). Where K is a multiple of 4
 * and the offsets are PackDenseWeights' (input 128, filter 0), whole
 * blocks of 16 channels take tiles of several pixels that read the packed
 * blocks where they lie instead (each weight row serving every pixel of
 * the tile, where the dense form reads it for one): with AVX-512 VNNI the
 * 1x1 GEMM form's tiles of up to 8 pixels by 32 channels, with AVX2 tiles
 * of 3 pixels by 16 (x86/conv_s8.c); no packing per call, and no -128 *
 * sum(w) correction, the bias holding it. In place, PIXELS' chunks, as
 * tn_crt_conv2d_s8.
 */

/* q for the channels from co0 on. */
static TnCrtQuant quant_from(const TnCrtQuant *q, int32_t co0) {
  TnCrtQuant qs = *q;
  if (q->per_channel) {
    if (qs.multiplier) qs.multiplier += co0, qs.shift += co0;
    if (qs.scale) qs.scale += co0;
    qs.channels -= co0;
  }
  return qs;
}

/* The channels [co0, out_c) of npx pixels at x (in_c apart) into out
 * (out_c apart), each pixel a row of the packed dense layer. */
static void packed_dense(const TnCrtConv2d *p, const TnCrtQuant *q,
                         const int8_t *x, int32_t npx, const int8_t *w,
                         const int32_t *bias, int32_t co0, int8_t *out) {
  const int32_t kk = p->in_c, nn = p->out_c;
  TnCrtDense d = {.batch = npx, .in_features = kk, .out_features = nn,
                  .w_stride_n = kk, .w_stride_k = 1};
  if (co0 == 0) { /* the pixels are the rows of one dense call */
    (void)tn__crt_dense_s8_rows(&d, q, x, w, bias, out, 1);
    return;
  }
  /* the blocks from co0 (a multiple of 16) on lie as a packed weight of
   * out_c - co0 rows; a pixel's outputs are a row of it */
  const TnCrtQuant qs = quant_from(q, co0);
  d.batch = 1, d.out_features = nn - co0;
  for (int32_t i = 0; i < npx; i++)
    (void)tn__crt_dense_s8_rows(&d, &qs, x + (ptrdiff_t)i * kk,
                                w + (ptrdiff_t)co0 * kk,
                                bias ? bias + co0 : NULL,
                                out + (ptrdiff_t)i * nn + co0, 1);
}

/* npx pixels at x into out, the weight packed: the VNNI or AVX2 tiles
 * over the blocks of 16 channels they take, the dense layer the rest. */
static void packed_rows(const TnCrtConv2d *p, const TnCrtQuant *q,
                        int32_t lo, int32_t hi, const int8_t *x,
                        int32_t npx, const int8_t *w, const int32_t *bias,
                        int8_t *out) {
  int32_t co0 = 0;
#if TN_CRT_HAVE_AVX2
  const int32_t kk = p->in_c, nn = p->out_c;
  const int vnni = tn__crt_avx512vnni();
  const int vex = !vnni && tn__crt_avxvnni();
  if (kk % 4 == 0 && q->input_offset == 128 && q->filter_offset == 0 &&
      q->scale == NULL && tn__crt_avx2() && (vnni || kk <= PACKED_XQ)) {
    Requant rq[4];
    const Requant *grq[4] = {&rq[0], &rq[1], &rq[2], &rq[3]};
    while (nn - co0 >= 16) {
      /* VNNI: four blocks a pass, else two or one; AVX2 and AVX-VNNI: up
       * to four (one copy of the inputs for them) */
      const int32_t left = (nn - co0) / 16;
      const int nb = vnni ? (left >= 4 ? 4 : left >= 2 ? 2 : 1)
                          : (left >= 4 ? 4 : left);
      int fast = 1;
      for (int b = 0; b < nb; b++) {
        requant_init(&rq[b], q, lo, hi, bias, co0 + 16 * b, 16);
        fast &= vex ? rq[b].vec : rq[b].fast; /* AVX-VNNI: exact */
      }
      if (!fast) break;
      if (vnni)
        tn__crt_conv_gemm_packed(w + (ptrdiff_t)co0 * kk, kk, nb, x, kk,
                                 npx, grq, out + co0, nn);
      else if (vex)
        tn__crt_conv_gemm_packed_avxvnni(w + (ptrdiff_t)co0 * kk, kk, x,
                                         npx, grq, nb, out + co0, nn);
      else
        tn__crt_conv_gemm_packed_avx2(w + (ptrdiff_t)co0 * kk, kk, x, npx,
                                      grq, nb, out + co0, nn);
      co0 += 16 * nb;
    }
  }
#else
  (void)lo, (void)hi;
#endif
  if (co0 < p->out_c) packed_dense(p, q, x, npx, w, bias, co0, out);
}

/*
 * A packed layer of another geometry (kernels.h): with AVX-512 VNNI, the
 * row form over a padded copy of the input (pad_fill: x ^ 0x80, -io ^ 0x80
 * outside), the packed blocks of 16 channels read where they lie, two a
 * pass, the bias as it is (it holds the correction the per-call packing
 * computes: nothing is packed per call); the rest of the channels, and
 * every channel elsewhere, unpacked a chunk of channels at a time (the
 * weights as HWIO, the correction taken out of the bias) into a buffer
 * on the stack, or where one channel's window is larger than that, all
 * of them into scratch, for tn_crt_conv2d_s8. Only host archives pack
 * larger windows (codegen.PACK_WINDOW_WEIGHTS), so no firmware stack
 * holds the buffer.
 */
static int32_t kxk_k(const TnCrtConv2d *p) {
  return p->k_h * p->k_w * p->in_c;
}

size_t tn_crt_conv2d_s8_packed_scratch_size(const TnCrtConv2d *p) {
  if (p == NULL || geom_check(p) != TN_CRT_OK ||
      (p->k_h == 1 && p->k_w == 1))
    return tn_crt_conv2d_s8_inplace_scratch_size(p);
  if (kxk_k(p) <= TN_CRT_CONV_PACKED_STACK) return 0; /* the stack's */
  /* the int32 bias (4-aligned within), then the int8 weights */
  return 3 + (size_t)p->out_c * (4 + (size_t)kxk_k(p));
}

/* Channels [j0, j1) of a block of len channels in tn_crt_dense_s8_pack's
 * layout (wb, kk inputs: a group of four inputs is len channels by kb
 * bytes) as HWIO rows (input k's channels at wu + k * ws), read in the
 * block's order; each channel's weight sum into sums[0 .. j1 - j0). */
static void unpack_block(const int8_t *wb, int32_t kk, int32_t len,
                         int32_t j0, int32_t j1, int8_t *wu, ptrdiff_t ws,
                         int32_t *sums) {
  int32_t k_done = 0;
  for (int32_t j = j0; j < j1; j++) sums[j - j0] = 0;
#if TN_CRT_HAVE_AVX2
  if (len == 16 && j0 == 0 && j1 == 16 && tn__crt_avx2()) {
    tn__crt_conv_unpack16(wb, kk, wu, ws, sums);
    k_done = kk / 4 * 4;
  }
#endif
  for (int32_t k0 = k_done; k0 < kk; k0 += 4) {
    const int32_t kb = kk - k0 < 4 ? kk - k0 : 4;
    const int8_t *const grp = wb + (ptrdiff_t)k0 * len;
    for (int32_t j = j0; j < j1; j++) {
      int32_t s = 0;
      for (int32_t t = 0; t < kb; t++) {
        const int8_t v = grp[j * kb + t];
        wu[(ptrdiff_t)(k0 + t) * ws + (j - j0)] = v; /* HWIO */
        s += v;
      }
      sums[j - j0] += s;
    }
  }
}

/* Channels [c0, c1) of the packed layer by tn_crt_conv2d_s8 on their
 * weights unpacked (wu, HWIO) and sums (b), the bias taken from b. */
static TnCrtStatus kxk_chunk(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int8_t *in, const int8_t *wu, int32_t *b,
                             const int32_t *bias, int8_t *out, int32_t c0,
                             int32_t c1) {
  const int32_t n = c1 - c0;
  const uint32_t m = (uint32_t)q->input_offset - 128u;
  for (int32_t j = 0; j < n; j++)
    b[j] = (int32_t)((bias ? (uint32_t)bias[c0 + j] : 0u) - m * (uint32_t)b[j]);
  /* HWIO: the output channels contiguous, as BCAST's forms read them */
  TnCrtConv2d g = *p;
  g.out_c = n;
  g.w_strides[0] = p->k_w * p->in_c * n, g.w_strides[1] = p->in_c * n;
  g.w_strides[2] = n, g.w_strides[3] = 1;
  const TnCrtQuant qs = quant_from(q, c0);
  return tn_crt_conv2d_s8(&g, &qs, in, wu, b,
                          out + (ptrdiff_t)c0 * p->out_strides[3], NULL, 0);
}

/* Channels [co0, out_c) of the packed layer, unpacked: into the stack a
 * chunk of up to 16 channels (a block's, or fewer where a block's window
 * is too large for the buffer), else all of them into scratch. */
static TnCrtStatus kxk_unpacked(const TnCrtConv2d *p, const TnCrtQuant *q,
                                const int8_t *in, const int8_t *w,
                                const int32_t *bias, int8_t *out,
                                int32_t co0, void *scratch,
                                size_t scratch_size) {
  const int32_t kk = kxk_k(p), nn = p->out_c;
  if (kk > TN_CRT_CONV_PACKED_STACK) {
    if (scratch == NULL ||
        scratch_size < tn_crt_conv2d_s8_packed_scratch_size(p))
      return scratch == NULL ? TN_CRT_INVALID_ARGUMENT
                             : TN_CRT_SCRATCH_TOO_SMALL;
    const int32_t rem = nn - co0;
    int32_t *const b = (int32_t *)(((uintptr_t)scratch + 3) & ~(uintptr_t)3);
    int8_t *const wu = (int8_t *)(b + rem);
    for (int32_t n0 = co0 / 16 * 16; n0 < nn; n0 += 16) {
      const int32_t len = nn - n0 < 16 ? nn - n0 : 16;
      const int32_t o0 = n0 > co0 ? n0 : co0; /* the block's first kept */
      unpack_block(w + (ptrdiff_t)n0 * kk, kk, len, o0 - n0, len,
                   wu + (o0 - co0), rem, b + (o0 - co0));
    }
    return kxk_chunk(p, q, in, wu, b, bias, out, co0, nn);
  }
  int8_t wu[TN_CRT_CONV_PACKED_STACK] __attribute__((aligned(32)));
  int32_t b[16];
  const int32_t per = kk * 16 <= TN_CRT_CONV_PACKED_STACK
                          ? 16 : TN_CRT_CONV_PACKED_STACK / kk;
  for (int32_t c0 = co0; c0 < nn;) {
    const int32_t n0 = c0 / 16 * 16, len = nn - n0 < 16 ? nn - n0 : 16;
    const int32_t c1 = n0 + len < c0 + per ? n0 + len : c0 + per;
    unpack_block(w + (ptrdiff_t)n0 * kk, kk, len, c0 - n0, c1 - n0, wu,
                 c1 - c0, b);
    const TnCrtStatus st = kxk_chunk(p, q, in, wu, b, bias, out, c0, c1);
    if (st != TN_CRT_OK) return st;
    c0 = c1;
  }
  return TN_CRT_OK;
}

#if TN_CRT_HAVE_AVX2
/* With AVX-VNNI, the k_h (dilated) input rows of an output row's windows
 * from the padded copy x (as it is, -io outside the input), n bytes from
 * x, into k->w as x ^ 0x80 (x + 128: the packed bias holds the rest of
 * the input offset). */
static void kxk_flip(AvxBcast *k, const int8_t *x, int64_t n) {
  uint8_t *const d = (uint8_t *)k->w;
  for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(x[i] ^ 0x80);
}

/* With AVX2 alone, the blocks of 16 channels below `whole` one at a time:
 * each turned into the AVX2 row form's pairs once (tn__crt_conv_pairs16),
 * then every output row through tn__crt_conv_avx2_rows over its window
 * rows, with 128 for the input offset (x + 128; the bias holds the rest),
 * as the unpacked layer runs at AVX2. The window rows are those of the
 * copy of the whole image (img: its slot) where it fits, made once a
 * batch, else a padded copy of each output row's own (slot). */
static void kxk_avx2(AvxBcast *k, const Conv *c, const TnCrtQuant *q,
                     int32_t lo, int32_t hi, const int32_t *bias,
                     int8_t *out, int32_t whole, int32_t slot, int img) {
  const TnCrtConv2d *p = c->p;
  const int32_t kk = kxk_k(p);
  const ptrdiff_t xp = (ptrdiff_t)p->stride_w * p->in_c;
  const int32_t ext = img ? avx_img_rows(p) * slot : p->k_h * slot;
  int32_t filled = -1; /* the batch whose image k->img holds */
  for (int32_t co0 = 0; co0 < whole; co0 += 16) {
    tn__crt_conv_pairs16(k, c->w + (ptrdiff_t)co0 * kk, kk);
    if (k->rq_n == AVX_RQ) k->rq_n = 0;
    const Requant *const rq = gemm_requant(k, q, lo, hi, bias, co0);
    for (int32_t b = 0; b < p->batch; b++) {
      const int8_t *const xn = c->in + (ptrdiff_t)b * p->in_strides[0];
      if (img && filled != b) {
        pad_fill(k->img, c, xn, -(int64_t)p->pad_top, pad_rows(p), 1, slot,
                 0);
        filled = b;
      }
      for (int32_t oy = 0; oy < p->out_h; oy++) {
        const int8_t *x = k->tmp;
        if (img)
          x = k->img + (ptrdiff_t)oy * p->stride_h * slot;
        else
          pad_fill(k->tmp, c, xn, (int64_t)oy * p->stride_h - p->pad_top,
                   p->k_h, p->dilation_h, slot, 0);
        tn__crt_conv_avx2_rows(k, k->po, 128, x, ext, xp, p->out_w, rq,
                               out + (ptrdiff_t)b * p->out_strides[0] +
                                   (ptrdiff_t)oy * p->out_strides[1] + co0,
                               p->out_strides[2]);
      }
    }
  }
}

/* The blocks of 16 channels the row forms take from 0 on, run on the
 * packed weight (where it lies with AVX-512 VNNI and AVX-VNNI; with AVX2
 * alone, kxk_avx2); how many channels that is (0: none). (Not inlined:
 * its AvxBcast leaves the stack before tn_crt_conv2d_s8 puts its own.) */
static NOINLINE int32_t kxk_rows(const Conv *c, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, const int32_t *bias,
                                 int8_t *out) {
  const TnCrtConv2d *p = c->p;
  const int32_t kk = kxk_k(p), nn = p->out_c;
  if (nn < 16 || p->out_strides[3] != 1) return 0;
  AVX_DECL(avx);
  AvxBcast *const k = avx;
  if (k == NULL || !tn__crt_conv_rows_packed(k, c)) return 0;
  const int vnni = tn__crt_avx512vnni(), vex = !vnni && tn__crt_avxvnni();
  /* the whole image's copy where it fits, else a window's rows a row;
   * below VNNI the copy as it is (tn__crt_conv_xor80 is AVX-512's), a
   * row's window rows then prepared into k->w (n bytes of the copy) */
  const int32_t img = pad_avx_img(k, c, vnni || vex);
  const int32_t slot = img ? img : pad_slot(k, c, 0);
  if (slot == 0) return 0;
  const int64_t n =
      (int64_t)k->po[k->rows - 1] + (int64_t)(p->out_w - 1) * p->stride_w *
      p->in_c + k->run;
  /* AVX-VNNI: the flipped rows in k->w; AVX2: a block's pairs there */
  if (vex ? n > 2 * (int64_t)AVX_PACK
          : !vnni && 16 * (int64_t)kk > AVX_PACK)
    return 0;
  /* the channels whose requantization takes the fast form, from 0: the
   * blocks of 16, and with VNNI a last block of 8 (tn_crt_dense_s8_pack's
   * 8 rows of 4 bytes a group) in rq8; below it, exactly */
  int32_t done = 0;
  Requant rq8;
  while (nn - done >= 16) {
    requant_init(&rq8, q, lo, hi, bias, done, 16);
    if (!(vnni ? rq8.fast : rq8.vec)) break;
    done += 16;
  }
  const int32_t whole = done;
  if (vnni && nn - done == 8) {
    requant_init(&rq8, q, lo, hi, bias, done, 8);
    if (rq8.fast) done += 8;
  }
  if (done == 0) return 0;
  if (!vnni && !vex) {
    kxk_avx2(k, c, q, lo, hi, bias, out, whole, slot, img != 0);
    return whole;
  }
  const ptrdiff_t xp = (ptrdiff_t)p->stride_w * p->in_c;
  for (int32_t b = 0; b < p->batch; b++) {
    const int8_t *const xn = c->in + (ptrdiff_t)b * p->in_strides[0];
    if (img)
      pad_fill(k->img, c, xn, -(int64_t)p->pad_top, pad_rows(p), 1, img,
               vnni);
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int8_t *x;
      if (img) {
        x = k->img + (ptrdiff_t)oy * p->stride_h * img;
      } else {
        pad_fill(k->tmp, c, xn, (int64_t)oy * p->stride_h - p->pad_top,
                 p->k_h, p->dilation_h, slot, vnni);
        x = k->tmp;
      }
      int8_t *const row = out + (ptrdiff_t)b * p->out_strides[0] +
                          (ptrdiff_t)oy * p->out_strides[1];
      if (vex) {
        /* every block of 16 a pass (the copy flipped once a row) */
        const Requant *rrq[AVX_RQ];
        kxk_flip(k, x, n);
        for (int32_t co0 = 0; co0 < whole;) {
          const int32_t nb = (whole - co0) / 16 < AVX_RQ
                                 ? (whole - co0) / 16 : AVX_RQ;
          if (k->rq_n + nb > AVX_RQ) k->rq_n = 0;
          for (int32_t i = 0; i < nb; i++)
            rrq[i] = gemm_requant(k, q, lo, hi, bias, co0 + 16 * i);
          tn__crt_conv_row_packed_avxvnni(
              k, c->w + (ptrdiff_t)co0 * kk, nb, (const uint8_t *)k->w, xp,
              p->out_w, rrq, row + co0, p->out_strides[2]);
          co0 += 16 * nb;
        }
        continue;
      }
      if (done > whole) {
        const Requant *r8 = &rq8;
        tn__crt_conv_vnni_row_packed(k, c->w + (ptrdiff_t)whole * kk, 0, x,
                                     xp, p->out_w, &r8, row + whole,
                                     p->out_strides[2]);
      }
      for (int32_t co0 = 0; co0 < whole;) {
        const int nb = whole - co0 >= 32 ? 2 : 1;
        if (k->rq_n + nb > AVX_RQ) k->rq_n = 0; /* room for both */
        const Requant *rrq[2];
        for (int i = 0; i < nb; i++)
          rrq[i] = gemm_requant(k, q, lo, hi, bias, co0 + 16 * i);
        tn__crt_conv_vnni_row_packed(k, c->w + (ptrdiff_t)co0 * kk, nb, x, xp,
                                     p->out_w, rrq, row + co0,
                                     p->out_strides[2]);
        co0 += 16 * nb;
      }
    }
  }
  return done;
}
#endif

static TnCrtStatus kxk_packed(const TnCrtConv2d *p, const TnCrtQuant *q,
                              const int8_t *in, const int8_t *w,
                              const int32_t *bias, int8_t *out, void *scratch,
                              size_t scratch_size) {
  if (p->groups != 1 || q->filter_offset != 0 ||
      q->input_offset < -127 || q->input_offset > 128 ||
      (const void *)in == (const void *)out ||
      !dense_nhwc(p->in_strides, p->in_h, p->in_w, p->in_c) ||
      !dense_nhwc(p->out_strides, p->out_h, p->out_w, p->out_c))
    return TN_CRT_INVALID_ARGUMENT;
  int32_t co0 = 0;
#if TN_CRT_HAVE_AVX2
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  /* the window's rows as the weight's: one run of k_w * in_c, OHWI */
  TnCrtConv2d g = *p;
  g.w_strides[0] = p->k_w * p->in_c, g.w_strides[1] = p->in_c;
  g.w_strides[2] = 1, g.w_strides[3] = kxk_k(p);
  Conv c;
  TnCrtStatus st = conv_init(&c, &g, q->input_offset, 0, in, w, out);
  if (st != TN_CRT_OK) return st;
  if (tn__crt_avx2()) co0 = kxk_rows(&c, q, lo, hi, bias, out);
#endif
  return co0 == p->out_c ? TN_CRT_OK
                         : kxk_unpacked(p, q, in, w, bias, out, co0, scratch,
                                        scratch_size);
}

#if TN_CRT_HAVE_AVX2
/* In place with AVX2 alone (not the AVX-512 VNNI or AVX-VNNI forms): a
 * layer whose channels are whole blocks of 16, all fast, and whose every
 * input fits the AVX2 GEMM's int16 copy (npx * in_c <= PACKED_XQ, in_c <=
 * PACKED_PAIRS_K) in one call of tn__crt_conv_gemm_packed_avx2 on all the
 * blocks: that call widens every input before it writes any output, so
 * no copy to scratch and no chunks are needed, and each block's weights
 * are made int16 pairs, and its constants set up, once a layer instead of
 * once a chunk (the wake word's in-place layers took three chunks and
 * two). 1 if done. */
static int packed_whole_in_place(const TnCrtConv2d *p, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, int8_t *x,
                                 int32_t npx, const int8_t *w,
                                 const int32_t *bias) {
  enum { MAX_NB = PACKED_PAIRS_K / 16 };
  const int32_t kk = p->in_c, nn = p->out_c;
  if (kk % 4 != 0 || nn % 16 != 0 || nn > kk || kk > PACKED_PAIRS_K ||
      (int64_t)npx * kk > PACKED_XQ || q->input_offset != 128 ||
      q->filter_offset != 0 || q->scale != NULL || !tn__crt_avx2() ||
      tn__crt_avx512vnni() || tn__crt_avxvnni())
    return 0;
  const int nb = (int)(nn / 16);
  Requant rq[MAX_NB];
  const Requant *grq[MAX_NB];
  for (int b = 0; b < nb; b++) {
    requant_init(&rq[b], q, lo, hi, bias, 16 * b, 16);
    if (!rq[b].fast) return 0; /* nothing written yet */
    grq[b] = &rq[b];
  }
  tn__crt_conv_gemm_packed_avx2(w, kk, x, npx, grq, nb, x, nn);
  return 1;
}
#endif

TnCrtStatus tn_crt_conv2d_s8_packed(const TnCrtConv2d *p, const TnCrtQuant *q,
                                    const int8_t *in, const int8_t *w,
                                    const int32_t *bias, int8_t *out,
                                    void *scratch, size_t scratch_size) {
  if (p == NULL || q == NULL || in == NULL || w == NULL || out == NULL ||
      (q->scale == NULL && (q->multiplier == NULL || q->shift == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = geom_check(p);
  if (st != TN_CRT_OK) return st;
  if (p->k_h != 1 || p->k_w != 1)
    return kxk_packed(p, q, in, w, bias, out, scratch, scratch_size);
  if (p->groups != 1 || p->k_h != 1 || p->k_w != 1 || p->stride_h != 1 ||
      p->stride_w != 1 || p->pad_top != 0 || p->pad_left != 0 ||
      p->out_h != p->in_h || p->out_w != p->in_w ||
      !dense_nhwc(p->in_strides, p->in_h, p->in_w, p->in_c) ||
      !dense_nhwc(p->out_strides, p->out_h, p->out_w, p->out_c))
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  const int64_t all = (int64_t)p->batch * p->in_h * p->in_w;
  if (all > INT32_MAX) return TN_CRT_OVERFLOW;
  if ((const void *)in != (const void *)out) {
    packed_rows(p, q, lo, hi, in, (int32_t)all, w, bias, out);
    return TN_CRT_OK;
  }
  /* PIXELS (or ROWS, for one channel in and out) */
  if (in_place_kind(p) == NOT_IN_PLACE || p->out_c > p->in_c)
    return TN_CRT_INVALID_ARGUMENT;
  if (scratch_size < tn_crt_conv2d_s8_inplace_scratch_size(p))
    return TN_CRT_SCRATCH_TOO_SMALL;
  if (scratch == NULL) return TN_CRT_INVALID_ARGUMENT;
#if TN_CRT_HAVE_AVX2
  if (packed_whole_in_place(p, q, lo, hi, out, (int32_t)all, w, bias))
    return TN_CRT_OK;
#endif
  /* PIXELS' chunks, as many as the scratch holds: a chunk's output
   * overwrites only inputs read */
  const size_t fit = scratch_size / (size_t)p->in_c;
  const int32_t chunk =
      fit < (size_t)chunk_pixels(p) ? (int32_t)fit : chunk_pixels(p);
  for (int64_t p0 = 0; p0 < all; p0 += chunk) {
    const int32_t n = all - p0 < chunk ? (int32_t)(all - p0) : chunk;
    memcpy(scratch, out + p0 * p->in_c, (size_t)n * (size_t)p->in_c);
    packed_rows(p, q, lo, hi, scratch, n, w, bias, out + p0 * p->out_c);
  }
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                               */
/* ------------------------------------------------------------------------ */

size_t tn_crt_conv2d_s8_scratch_size(const TnCrtConv2d *p) {
  (void)p;
  return 0;
}

/* What both scratch sizings for the DSP forms start from: the portable
 * scratch (*base), and the DSP forms' own bytes (0 when there are none,
 * for another ISA, or a geometry conv_init refuses), with the layer in *c
 * and whether it runs in place by rows in *ring. -1: not in-place-able. */
static int64_t dsp_bytes(const TnCrtConv2d *p, const TnCrtQuant *q,
                         int32_t isa, int32_t in_place, size_t *base, Conv *c,
                         int *ring) {
  const int kind = in_place_kind(p);
  if (in_place && kind == NOT_IN_PLACE) return -1;
  *base = in_place ? tn_crt_conv2d_s8_inplace_scratch_size(p)
                   : tn_crt_conv2d_s8_scratch_size(p);
  *ring = in_place && kind == ROWS;
  static const int8_t any = 0; /* conv_init wants pointers; none is read */
  if (isa != TN_CRT_ISA_ARM_DSP || q == NULL ||
      conv_init(c, p, q->input_offset, q->filter_offset, &any, &any, &any) !=
          TN_CRT_OK)
    return 0;
  return (int64_t)dsp_scratch_bytes(c, q, *ring);
}

size_t tn_crt_conv2d_s8_scratch_size_isa(const TnCrtConv2d *p,
                                         const TnCrtQuant *q, int32_t isa,
                                         int32_t in_place) {
  size_t base;
  Conv c;
  int ring;
  const int64_t d = dsp_bytes(p, q, isa, in_place, &base, &c, &ring);
  if (d < 0) return 0;
  return d ? base + 3 + (size_t)d : base; /* 3: dsp_area's alignment */
}

int32_t tn_crt_conv2d_s8_scratch_less_isa(const TnCrtConv2d *p,
                                          const TnCrtQuant *q, int32_t isa,
                                          int32_t in_place, size_t *out,
                                          uint16_t *slower_pct) {
  size_t base, less[TN_CRT_SCRATCH_LESS_MAX];
  uint16_t pct[TN_CRT_SCRATCH_LESS_MAX];
  Conv c;
  int ring;
  const int64_t d = out ? dsp_bytes(p, q, isa, in_place, &base, &c, &ring) : 0;
  const int32_t n = d > 0 ? dsp_scratch_less(&c, q, ring, (size_t)d, less, pct)
                          : 0;
  for (int32_t i = 0; i < n; i++) {
    out[i] = base + 3 + less[i];
    if (slower_pct) slower_pct[i] = pct[i];
  }
  return n;
}

/* conv_run's and tn_crt_conv2d_s8's choices, made on the host: the DSP
 * part of the scratch is at least scratch_size - base - 3 bytes wherever
 * the scratch starts (dsp_area), and every size the forms compare it with
 * is a multiple of 4, as the planned sizes less base + 3 are. */
int32_t tn_crt_conv2d_s8_forms_isa(const TnCrtConv2d *p, const TnCrtQuant *q,
                                   int32_t isa, int32_t in_place,
                                   size_t scratch_size) {
  size_t base;
  Conv c;
  int ring;
  static const int8_t any = 0; /* as in dsp_bytes */
  if (isa != TN_CRT_ISA_ARM_DSP || q == NULL ||
      (q->scale == NULL && (q->multiplier == NULL || q->shift == NULL)) ||
      dsp_bytes(p, q, isa, in_place, &base, &c, &ring) < 0 ||
      conv_init(&c, p, q->input_offset, q->filter_offset, &any, &any,
                &any) != TN_CRT_OK)
    return 0;
  const size_t dsp_n = scratch_size >= base + 3 ? scratch_size - base - 3 : 0;
  /* in place by rows or by chunks: those loops around the forms below */
  const int kind = in_place ? in_place_kind(p) : NOT_IN_PLACE;
  const int32_t around = kind == LINES ? TN_CRT_CONV_FORM_LINES
                         : kind == GROW ? TN_CRT_CONV_FORM_CHUNKS
                                        : 0;
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (!ring && dsp_pw_ok(&c, q) && scratch_size >= base + 3 &&
      dsp_n >= pw_scratch_bytes(p)) {
    const int mode = pw_mode(&c, q);
    int32_t f = mode == PW_FAST   ? TN_CRT_CONV_FORM_PW_FAST
                : mode == PW_WIDE ? TN_CRT_CONV_FORM_PW_WIDE
                                  : TN_CRT_CONV_FORM_PW_ANY;
    if (pw_pairs_max(p) > 0)
      f |= mode != PW_ANY && lo == -128 && hi == 127 && q->per_channel
               ? TN_CRT_CONV_FORM_PW_FUSED
               : TN_CRT_CONV_FORM_PW_PAIRS;
    return f | around;
  }
  if (kind == PIXELS) /* without the product: chunk by chunk */
    return TN_CRT_CONV_FORM_CHUNKS | TN_CRT_CONV_FORM_BLOCKS;
  if (!dsp_dw3_ok(&c, q)) return around | TN_CRT_CONV_FORM_BLOCKS;
  return around | TN_CRT_CONV_FORM_DW3 |
         (dw3_fast_only(&c, q, lo, hi) ? 0 : TN_CRT_CONV_FORM_DW3_ANY);
}

TnCrtStatus tn_crt_conv2d_s8(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int8_t *in, const int8_t *w,
                             const int32_t *bias, int8_t *out, void *scratch,
                             size_t scratch_size) {
  if (q == NULL || (q->scale == NULL && (q->multiplier == NULL ||
                                          q->shift == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  Conv c;
  TnCrtStatus st =
      conv_init(&c, p, q->input_offset, q->filter_offset, in, w, out);
  if (st != TN_CRT_OK) return st;
  /* The activation range narrowed to int8 (a wider one clamps no more). */
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  size_t dsp_n;
  if ((const void *)in != (const void *)out) {
    AVX_DECL(avx);
    void *const dsp = dsp_area(scratch, scratch_size, 0, &dsp_n);
    return conv_run(&c, q, lo, hi, bias, out, NULL, NULL, avx, dsp, dsp_n);
  }
  const int kind = in_place_kind(p);
  if (kind == NOT_IN_PLACE) return TN_CRT_INVALID_ARGUMENT;
  const size_t need = tn_crt_conv2d_s8_inplace_scratch_size(p);
#if TN_CRT_HAVE_ARM_DSP
  int pw;
#endif
  if (scratch_size < need) return TN_CRT_SCRATCH_TOO_SMALL;
  if (scratch == NULL) return TN_CRT_INVALID_ARGUMENT;
  /* the DSP forms' buffers after the ring or the chunk */
  void *const dsp = dsp_area(scratch, scratch_size, need, &dsp_n);
  if (kind == ROWS)
    return conv_run(&c, q, lo, hi, bias, out, NULL, scratch, NULL, dsp,
                    dsp_n);
  if (kind == LINES)
    return TN__CONV_FORM(TN_CRT_CONV_FORM_LINES)
               ? conv_lines(p, q, lo, hi, w, bias, out, scratch, dsp, dsp_n)
               : TN_CRT_UNSUPPORTED;
#if TN_CRT_HAVE_ARM_DSP
  else if (kind == PIXELS && (pw = pw_taken(&c, q, dsp, dsp_n)) != 0)
#if TN_CRT_HAVE_ARM_MVE
    mve_pointwise(&c, q, lo, hi, bias, out, dsp, pw - 1);
#else
    dsp_pointwise(&c, q, lo, hi, bias, out, dsp, pw - 1);
#endif
#endif
  else if (!TN__CONV_FORM(TN_CRT_CONV_FORM_CHUNKS))
    return TN_CRT_UNSUPPORTED;
  else
    return conv_pixels(p, q, lo, hi, w, bias, out, scratch, dsp, dsp_n,
                       kind == GROW);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_conv2d_s8_s32(const TnCrtConv2d *p, int32_t input_offset,
                                 int32_t filter_offset, const int8_t *in,
                                 const int8_t *w, const int32_t *bias,
                                 int32_t *out) {
  Conv c;
  TnCrtStatus st = conv_init(&c, p, input_offset, filter_offset, in, w, out);
  if (st != TN_CRT_OK) return st;
  AVX_DECL(avx);
  return conv_run(&c, NULL, 0, 0, bias, NULL, out, NULL, avx, NULL, 0);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(conv2d_s8, TnCrtCallConvS8) {
  /* (a packed layer runs the packed dense loop: TN_CRT_DENSE_S8_FORMS) */
  if (p->packed && !TN__DENSE_FORM(TN_CRT_DENSE_FORM_PACKED))
    return TN_CRT_UNSUPPORTED;
  return (p->packed ? tn_crt_conv2d_s8_packed : tn_crt_conv2d_s8)(
      &p->g, &p->q, in[0], in[1], p->has_bias ? in[2] : NULL, out, scratch,
      scratch_size);
}
TN_CRT_CALL(conv2d_s8_s32, TnCrtCallConvS32) {
  return tn_crt_conv2d_s8_s32(&p->g, p->input_offset, p->filter_offset,
                              in[0], in[1], NULL, out);
}
