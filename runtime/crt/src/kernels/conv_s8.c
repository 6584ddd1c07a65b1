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
 * (pmaddwd, packssdw, packsswb, minps, maxps, movmskps; see "SSE2"
 * below), about twice as fast: pmaddwd on interleaved pairs of inputs,
 * two neighbouring pixels sharing the widened weights, and a float
 * requantization whose doubtful lanes are redone exactly. On a Cortex-M
 * with the DSP extension (__ARM_FEATURE_DSP with GNU C: the M4, M7, M33)
 * gcc vectorises none of it, and BCAST, DW, DOT and the requantization
 * have a third form ("Cortex-M DSP" below, about three times as fast as
 * the portable C there): SXTB16/SXTAB16 unpack int8 into int16 pairs,
 * SMLAD does two multiply-adds; BCAST and DW blocks have their weights
 * unpacked into pairs once, on the stack (TN_CRT_DSP_PACK_BYTES), so that
 * each pixel's inner loop only loads them; the requantization is TFLite's
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
#include "fixed_point.h"

#if defined(__SSE2__) && defined(__GNUC__)
#define CONV_SSE2 1
#else
#define CONV_SSE2 0
#endif
#define CONV_DSP TN__CRT_DSP /* fixed_point.h */

/* Output channels per block (four SSE registers of int32 accumulators),
 * and accumulators per block: the SSE2 path does two pixels at once. */
enum { BLK = 16, ACC = CONV_SSE2 ? 2 * BLK : BLK };

/* Inlined with constant arguments, so that each copy gets fixed-length
 * (vectorisable) loops and constant array indices. */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define BLOCK_INLINE static inline
#define NOINLINE
#endif

/* ------------------------------------------------------------------------ */
/* Geometry                                                                   */
/* ------------------------------------------------------------------------ */

enum { BCAST, DW, DOT };

typedef struct {
  const TnCrtConv2d *p;
  const int8_t *in, *w;
  int32_t io, fo;   /* input and filter offsets */
  int32_t cpg, fpg; /* input and output channels per group */
  int mode;
  int narrow; /* x + io and w + fo fit an int16 (DOT's pmaddwd form) */
  int merge;  /* a row of taps and their channels is one run in both the
                 input and the weights (undilated channels-last, HWIO or
                 OHWI, whole groups) */
} Conv;

/* One output pixel: its batch's input and the in-bounds taps; with a
 * second pixel (the next one in the row), that one's kernel columns. */
typedef struct {
  const int8_t *x;
  int32_t iy0, ix0, ky0, ky1, kx0, kx1, nx0, nx1;
} Win;

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

/* The taps [*k0, *k1) of a dilated window starting at input index `origin`
 * that land inside [0, size): the padding, hoisted out of the tap loops.
 * size - origin and -origin + dilation - 1 can exceed int32 (with a pad
 * near INT32_MAX) but not uint32, where the divisions are done. */
static inline void taps(int32_t origin, int32_t k, int32_t dilation,
                        int32_t size, int32_t *k0, int32_t *k1) {
  const int64_t room = (int64_t)size - origin; /* input left at origin */
  uint32_t end = 0;
  if (room > 0)
    end = dilation == 1 /* the usual case; a division costs tens of cycles */
              ? (uint32_t)room
              : ((uint32_t)room - 1) / (uint32_t)dilation + 1;
  if (origin >= 0)
    *k0 = 0;
  else if (dilation == 1)
    *k0 = -origin;
  else
    *k0 = (int32_t)((0u - (uint32_t)origin + (uint32_t)dilation - 1) /
                    (uint32_t)dilation);
  if (end > (uint32_t)k) end = (uint32_t)k;
  *k1 = (int32_t)end < *k0 ? *k0 : (int32_t)end;
}

/* The widths the loops are specialised for (see conv_f32.c): a block is
 * 16, 8 or 4 wide, and only a tail of 1 to 3 takes the plain loop. */
static int32_t block_width(int32_t rem) {
  return rem >= 16 ? 16 : rem >= 8 ? 8 : rem >= 4 ? 4 : rem;
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
typedef struct {
  uint32_t bias[BLK], m[BLK];
  uint8_t r[BLK];
#if CONV_SSE2
  float scale[BLK], tol[BLK]; /* see requant_sse */
  int fast;                   /* requant_sse applies */
#endif
#if CONV_DSP
  int32_t round[BLK]; /* 2^(r-1) + the output offset * 2^r */
  int dsp;            /* requant_dsp applies */
#endif
  const TnCrtQuant *q;
  int32_t co0, len, off, lo, hi;
  int vec; /* every channel has M >= 0 and r in [0, 31] */
} Requant;

static void requant_init(Requant *rq, const TnCrtQuant *q, int32_t lo,
                         int32_t hi, const int32_t *bias, int32_t co0,
                         int32_t len) {
  rq->q = q, rq->co0 = co0, rq->len = len, rq->lo = lo, rq->hi = hi;
  rq->off = q ? q->output_offset : 0, rq->vec = 1;
  for (int32_t j = 0; j < BLK; j++) {
    const int32_t ch = len <= 8 ? j % 8 : j;
    int32_t m = 0, s = 0; /* lanes past the block compute a harmless 0 */
    if (ch < len && q) {
      const int32_t k = q->per_channel ? co0 + ch : 0;
      m = q->multiplier[k], s = q->shift[k];
    }
    rq->bias[j] = ch < len && bias ? (uint32_t)bias[co0 + ch] : 0;
    if (m < 0 || s > 0 || s < -31) rq->vec = 0;
    const int32_t r = s > 0 || s < -31 ? 0 : -s;
    rq->m[j] = m < 0 ? 0 : (uint32_t)m;
    rq->r[j] = (uint8_t)r;
#if CONV_SSE2
    /* 2^-31 and 2^-r are exact in float: scale = float(M) * 2^-(31+r). */
    const float pot = 1.0f / (float)(UINT32_C(1) << r);
    rq->scale[j] = (float)rq->m[j] * (1.0f / 2147483648.0f) * pot;
    rq->tol[j] = r > 0 ? 0.5f - 0.5f * pot - 1.0f / 2048.0f : -1.0f;
#endif
  }
#if CONV_SSE2
  rq->fast = rq->vec && rq->off >= -512 && rq->off <= 512;
#endif
#if CONV_DSP
  /* tn__crt_requant_s8's conditions: a multiplier of 0 or at least 2^30
   * (what tn_crt_quantize_multiplier gives), a right shift in [1, 20], an
   * output offset in [-128, 127]. */
  rq->dsp = rq->vec && rq->off >= -128 && rq->off <= 127;
  for (int32_t j = 0; j < BLK; j++) {
    const uint32_t r = rq->r[j];
    rq->round[j] = (int32_t)(((UINT32_C(1) << r) >> 1) +
                             ((uint32_t)rq->off << r));
    if ((len <= 8 ? j % 8 : j) < len &&
        ((rq->m[j] != 0 && rq->m[j] < UINT32_C(1) << 30) || r < 1 || r > 20))
      rq->dsp = 0;
  }
#endif
}

/* Lane j for the accumulator x, by tn_crt_multiply_by_quantized_multiplier
 * itself. */
static int8_t requant_lane(const Requant *rq, int32_t j, uint32_t x) {
  const int32_t ch = rq->len <= 8 ? j % 8 : j;
  const int32_t k = rq->q->per_channel ? rq->co0 + ch : 0;
  int32_t v = tn_crt_multiply_by_quantized_multiplier(
      (int32_t)x, rq->q->multiplier[k], rq->q->shift[k]);
  v = (int32_t)((uint32_t)v + (uint32_t)rq->off);
  return (int8_t)(v < rq->lo ? rq->lo : v > rq->hi ? rq->hi : v);
}

/* Lane j for the accumulator x when rq->vec. */
static inline int32_t requant_exact(const Requant *rq, int32_t j,
                                    uint32_t x) {
  const uint32_t r = rq->r[j];
  const uint32_t half = r > 0 ? UINT32_C(1) << (r - 1) : 0;
  const uint32_t neg = x >> 31, s = 0u - neg; /* s: all ones if x < 0 */
  const uint32_t ax = (x ^ s) - s;            /* |x| */
  const uint32_t h = (uint32_t)(
      ((uint64_t)ax * rq->m[j] + (UINT64_C(1) << 30) - neg) >> 31);
  const uint32_t mg = (h + half) >> r;
  const int32_t o = (int32_t)(((mg ^ s) - s) + (uint32_t)rq->off);
  return o < rq->lo ? rq->lo : o > rq->hi ? rq->hi : o;
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
#if CONV_DSP
static uint32_t dsp_dot(const int8_t *x, const int8_t *w, int32_t n,
                        int32_t io, int32_t fo);
#endif
static uint32_t dot(const int8_t *x, ptrdiff_t xs, const int8_t *w,
                    ptrdiff_t ws, int32_t n, int32_t io, int32_t fo,
                    int narrow) {
#if CONV_DSP
  if (narrow && xs == 1 && ws == 1) return dsp_dot(x, w, n, io, fo);
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
/* SSE2                                                                       */
/* ------------------------------------------------------------------------ */

#if CONV_SSE2
/*
 * pmaddwd multiplies eight int16 pairs and adds each pair into an int32:
 * fed with two inputs (input channels, or taps) and the matching two
 * weights per output channel, it does two multiply-adds per lane with no
 * widening of the products. The byte operands are interleaved (zip) and
 * sign-extended to int16 (widen). Lanes keep their channel order, so the
 * accumulators come out as a plain array. Arrays of vectors stay in
 * registers only when every index is a constant, hence the code written
 * out per width (u: 8 * u channels, 1 or 2) and pixel count (npx: 1, or 2
 * neighbouring pixels with the same taps sharing the widened weights).
 */
typedef int8_t v16i8 __attribute__((vector_size(16)));
typedef int16_t v8i16 __attribute__((vector_size(16)));
typedef int32_t v4i32 __attribute__((vector_size(16)));
typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef uint64_t v2u64 __attribute__((vector_size(16)));
typedef float v4f32 __attribute__((vector_size(16)));

static inline v16i8 load16(const int8_t *p) {
  v16i8 v;
  memcpy(&v, p, 16);
  return v;
}
static inline v16i8 load8(const int8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return (v16i8)(v2u64){v, 0};
}
/* Bytes 0-7 (lo) or 8-15 (hi) of a and b, interleaved. */
static inline v16i8 zip_lo(v16i8 a, v16i8 b) {
  return __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5,
                                 21, 6, 22, 7, 23);
}
static inline v16i8 zip_hi(v16i8 a, v16i8 b) {
  return __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28,
                                 13, 29, 14, 30, 15, 31);
}
/* Bytes 0-7 (lo) or 8-15 (hi), sign-extended to int16. */
static inline v8i16 widen_lo(v16i8 t) {
  return (v8i16)__builtin_shufflevector(t, t, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5,
                                        5, 6, 6, 7, 7) >> 8;
}
static inline v8i16 widen_hi(v16i8 t) {
  return (v8i16)__builtin_shufflevector(t, t, 8, 8, 9, 9, 10, 10, 11, 11, 12,
                                        12, 13, 13, 14, 14, 15, 15) >> 8;
}
static inline v4i32 madd(v8i16 a, v8i16 b) {
  return __builtin_ia32_pmaddwd128(a, b);
}
/* The pair (x0, x1) in every two int16 lanes. */
static inline v8i16 pair(int32_t x0, int32_t x1) {
  const uint32_t v = (uint16_t)x0 | (uint32_t)(uint16_t)x1 << 16;
  return (v8i16)(v4u32){v, v, v, v};
}

/* q = the rows a and b for 8 * u channels, interleaved and widened:
 * q[i] covers channels 4i .. 4i + 3. */
BLOCK_INLINE void zip_widen(v8i16 *q, int u, const int8_t *a,
                            const int8_t *b) {
  if (u == 2) {
    const v16i8 va = load16(a), vb = load16(b);
    const v16i8 l = zip_lo(va, vb), h = zip_hi(va, vb);
    q[0] = widen_lo(l), q[1] = widen_hi(l);
    q[2] = widen_lo(h), q[3] = widen_hi(h);
  } else {
    const v16i8 l = zip_lo(load8(a), load8(b));
    q[0] = widen_lo(l), q[1] = widen_hi(l);
  }
}

/* acc[0 .. 8) = c[0 .. 4) twice (two pixels). */
static inline void acc_init(v4u32 *acc, const v4u32 *c) {
  acc[0] = acc[4] = c[0], acc[1] = acc[5] = c[1];
  acc[2] = acc[6] = c[2], acc[3] = acc[7] = c[3];
}

/* acc[i] += pmaddwd(q[i], x[i]) for the 2u vectors of a pixel; x[i] all
 * the same for BCAST (a broadcast pair of inputs). */
BLOCK_INLINE void madd_block(v4u32 *acc, int u, const v8i16 *q,
                             const v8i16 *x) {
  acc[0] += (v4u32)madd(q[0], x[0]), acc[1] += (v4u32)madd(q[1], x[1]);
  if (u == 2)
    acc[2] += (v4u32)madd(q[2], x[2]), acc[3] += (v4u32)madd(q[3], x[3]);
}

/* The accumulators of npx pixels into a, pixel i at a + 8 * u * i
 * (memcpys of constant size are plain stores). */
BLOCK_INLINE void store_acc(uint32_t *a, const v4u32 *acc, int u, int npx) {
  memcpy(a, acc, 8 * (size_t)u * sizeof *a);
  if (npx == 2) memcpy(a + 8 * u, acc + 4, 8 * (size_t)u * sizeof *a);
}

/* BCAST: acc += sum over k < n of (x[k * xs] + io) * w[k * ws + j], two
 * input channels per step, for npx pixels (the second xp further on, its
 * accumulators at acc + 4). */
BLOCK_INLINE void sse_bcast_run(v4u32 *acc, int u, int npx, const int8_t *x,
                                ptrdiff_t xs, ptrdiff_t xp, const int8_t *w,
                                ptrdiff_t ws, int32_t n, int32_t io) {
  v8i16 q[4], x0[4], x1[4];
  int32_t k = 0;
  for (; k + 2 <= n; k += 2, x += 2 * xs, w += 2 * ws) {
    zip_widen(q, u, w, w + ws);
    x0[0] = x0[1] = x0[2] = x0[3] = pair(x[0] + io, x[xs] + io);
    madd_block(acc, u, q, x0);
    if (npx == 2) {
      x1[0] = x1[1] = x1[2] = x1[3] = pair(x[xp] + io, x[xp + xs] + io);
      madd_block(acc + 4, u, q, x1);
    }
  }
  if (k < n) { /* an odd channel out: paired with 0 */
    zip_widen(q, u, w, w);
    x0[0] = x0[1] = x0[2] = x0[3] = pair(x[0] + io, 0);
    madd_block(acc, u, q, x0);
    if (npx == 2) {
      x1[0] = x1[1] = x1[2] = x1[3] = pair(x[xp] + io, 0);
      madd_block(acc + 4, u, q, x1);
    }
  }
}

/* BCAST: the block of 8 * u channels at co0 for npx pixels into a, as
 * store_acc leaves it. xr, wr: the first in-bounds tap. */
BLOCK_INLINE void sse_bcast(const Conv *c, const Win *wn, int32_t co0, int u,
                            int npx, const int8_t *xr, const int8_t *wr,
                            const uint32_t *bias, uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is2 = p->in_strides[2], is3 = p->in_strides[3];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1],
                  ws2 = p->w_strides[2];
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * is2;
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const ptrdiff_t xp = (ptrdiff_t)p->stride_w * is2; /* the next pixel */
  const int32_t nkx = wn->kx1 - wn->kx0, nky = wn->ky1 - wn->ky0;
  const int32_t run = c->merge ? nkx * c->cpg : c->cpg;
  const int32_t runs = c->merge ? 1 : nkx;
  v4u32 acc[8], init[4];
  memcpy(init, bias, sizeof init);
  acc_init(acc, init);
  xr += (ptrdiff_t)(co0 / c->fpg) * c->cpg * is3;
  wr += (ptrdiff_t)co0 * p->w_strides[3];
  for (int32_t ky = 0; ky < nky; ky++, xr += dy, wr += ws0)
    for (int32_t r = 0; r < runs; r++)
      sse_bcast_run(acc, u, npx, xr + r * dx, is3, xp, wr + r * ws1, ws2, run,
                    c->io);
  store_acc(a, acc, u, npx);
}

/*
 * DW: the window's weights are interleaved and widened once per block, two
 * taps per pmaddwd operand (an odd last tap pairs with zero weights), and
 * the input offset is folded out: sum((x + io) * w) = sum(x * w) +
 * io * sum(w), the second term a constant of the block that the
 * accumulators start from. A tap outside the input reads a row of -io
 * instead, which cancels its share of that constant, so border pixels take
 * the same path. Windows of up to 2 * DW_PAIRS taps (5x5); larger ones take
 * the portable form.
 */
enum { DW_PAIRS = 13 };
typedef struct {
  v8i16 w[DW_PAIRS][4];
  ptrdiff_t xo[2 * DW_PAIRS]; /* each tap's input offset in the window */
  int32_t ky[2 * DW_PAIRS], kx[2 * DW_PAIRS];
  v4u32 corr[4]; /* bias + io * sum(w) per channel */
  int8_t pad[16];
  int32_t pairs;
} DwWin;

/* Sets d up for the block of 8 * u channels at co0 with the given bias; 0
 * if the window is too large. */
static int dw_init(DwWin *d, const Conv *c, int32_t co0, int u,
                   const uint32_t *bias) {
  static const int8_t zero[16] = {0};
  const TnCrtConv2d *p = c->p;
  const int32_t taps = p->k_h * p->k_w;
  if (taps > 2 * DW_PAIRS) return 0;
  uint32_t sum[BLK] = {0};
  const int8_t *w[2];
  d->pairs = (taps + 1) / 2;
  for (int32_t t = 0; t < 2 * d->pairs; t++) {
    const int32_t ky = t < taps ? t / p->k_w : 0;
    const int32_t kx = t < taps ? t % p->k_w : 0;
    d->ky[t] = ky, d->kx[t] = kx;
    d->xo[t] = (ptrdiff_t)ky * p->dilation_h * p->in_strides[1] +
               (ptrdiff_t)kx * p->dilation_w * p->in_strides[2];
    w[t % 2] = zero;
    if (t < taps) {
      w[t % 2] = c->w + (ptrdiff_t)ky * p->w_strides[0] +
                 (ptrdiff_t)kx * p->w_strides[1] + co0;
      for (int32_t j = 0; j < 8 * u; j++) sum[j] += (uint32_t)w[t % 2][j];
    }
    if (t % 2) zip_widen(d->w[t / 2], u, w[0], w[1]);
  }
  for (int32_t j = 0; j < BLK; j++) sum[j] = sum[j] * (uint32_t)c->io + bias[j];
  memcpy(d->corr, sum, sizeof d->corr);
  memset(d->pad, -c->io, sizeof d->pad); /* io in [-127, 128] */
  return 1;
}

/* The input of tap t for the window at offset o from x whose kernel
 * columns [kx0, kx1) are in bounds: the row of -io if the tap is outside
 * the input (never, when both windows are wholly inside: full). Written as
 * two selects (no branch on the tap, no pointer formed outside the
 * input). */
BLOCK_INLINE const int8_t *dw_tap(const DwWin *d, const Win *wn, int32_t kx0,
                                  int32_t kx1, int full, int32_t t,
                                  const int8_t *x, ptrdiff_t o) {
  const int in =
      full || ((uint32_t)(d->ky[t] - wn->ky0) < (uint32_t)(wn->ky1 - wn->ky0) &&
               (uint32_t)(d->kx[t] - kx0) < (uint32_t)(kx1 - kx0));
  const int8_t *xt = x + (in ? o + d->xo[t] : 0);
  return in ? xt : d->pad;
}

/* DW: the block for npx pixels into a, as store_acc leaves it; the first
 * window at offset o from x, the second xp further on. */
BLOCK_INLINE void dw_pixels(const DwWin *d, const Win *wn, int u, int npx,
                            int full, const int8_t *x, ptrdiff_t o,
                            ptrdiff_t xp, uint32_t *a) {
  v4u32 acc[8];
  v8i16 r[4];
  acc_init(acc, d->corr);
  for (int32_t i = 0; i < d->pairs; i++) {
    const int32_t t = 2 * i;
    zip_widen(r, u, dw_tap(d, wn, wn->kx0, wn->kx1, full, t, x, o),
              dw_tap(d, wn, wn->kx0, wn->kx1, full, t + 1, x, o));
    madd_block(acc, u, d->w[i], r);
    if (npx == 2) {
      zip_widen(r, u, dw_tap(d, wn, wn->nx0, wn->nx1, full, t, x, o + xp),
                dw_tap(d, wn, wn->nx0, wn->nx1, full, t + 1, x, o + xp));
      madd_block(acc + 4, u, d->w[i], r);
    }
  }
  store_acc(a, acc, u, npx);
}

static void dw(const DwWin *d, const Win *wn, int32_t len, int npx,
               int full, const int8_t *x, ptrdiff_t o, ptrdiff_t xp,
               uint32_t *a) {
  switch ((len == 16) * 4 + (npx == 2) * 2 + full) {
    case 0: dw_pixels(d, wn, 1, 1, 0, x, o, xp, a); return;
    case 1: dw_pixels(d, wn, 1, 1, 1, x, o, xp, a); return;
    case 2: dw_pixels(d, wn, 1, 2, 0, x, o, xp, a); return;
    case 3: dw_pixels(d, wn, 1, 2, 1, x, o, xp, a); return;
    case 4: dw_pixels(d, wn, 2, 1, 0, x, o, xp, a); return;
    case 5: dw_pixels(d, wn, 2, 1, 1, x, o, xp, a); return;
    case 6: dw_pixels(d, wn, 2, 2, 0, x, o, xp, a); return;
    default: dw_pixels(d, wn, 2, 2, 1, x, o, xp, a); return;
  }
}

/*
 * The requantization in float, checked. Let y = x * M / 2^(31+r), the
 * exact quotient. SaturatingRoundingDoublingHighMul rounds x * M / 2^31 to
 * within 1/2, so the value RoundingDivideByPOT rounds lies within
 * 2^-(r+1) of y (is y itself for r = 0): whenever y is farther than that
 * from a half-integer, both roundings agree with y's nearest integer. The
 * float estimate yf = float(x) * float(M / 2^(31+r)) has three roundings
 * of at most 2^-23 relative (in any rounding mode), so it is within 2^-11
 * of y while |y| < 2^10. yf is clamped to the output range [lo - off,
 * hi - off] first (within +-640, as |off| <= 512): a y beyond a bound
 * rounds and clamps to that bound either way. If then yf lies within
 * tol = 1/2 - 2^-(r+1) - 2^-11 of an integer, that integer is the exact
 * result; the rare lanes that fail the test (about 2^-r of them) are
 * recomputed by requant_exact. The rest costs a few float operations
 * where the exact integer form takes two 64-bit multiplies per lane. For
 * r = 0, where a product within |off| of the int32 range wraps around
 * when the offset is added (TFLite's int32 addition, as two's complement
 * does it), no lane is certain (tol < 0).
 */
static inline v4f32 loadf(const float *p) {
  v4f32 v;
  memcpy(&v, p, 16);
  return v;
}

/* Four lanes: the results in *q (output offset added), and a bit per lane
 * whose result is not certain. */
static inline int sse_requant4(v4i32 x, v4f32 scale, v4f32 tol, v4f32 lo,
                               v4f32 hi, v4u32 magic_off, v4i32 *q) {
  /* Adding 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer,
   * which is then the low bits of the sum; the test on |y - integer|
   * accepts it only if it is the nearest one, whatever the rounding
   * mode. */
  const v4f32 magic = {12582912.0f, 12582912.0f, 12582912.0f, 12582912.0f};
  const v4i32 abs_mask = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
  v4f32 y = __builtin_convertvector(x, v4f32) * scale;
  y = __builtin_ia32_minps(__builtin_ia32_maxps(y, lo), hi);
  const v4f32 t = y + magic;
  *q = (v4i32)((v4u32)t - magic_off);
  const v4f32 d = (v4f32)((v4i32)(y - (t - magic)) & abs_mask);
  return __builtin_ia32_movmskps((v4f32)(d > tol));
}

/* requant_c's results for n = 8 or 16 lanes when rq->fast (the clamped
 * results fit int8, so the saturating packs only narrow). */
BLOCK_INLINE void requant_sse(const Requant *restrict rq,
                              const uint32_t *restrict a, int32_t n,
                              int8_t *restrict res) {
  /* magic's bit pattern, less the output offset */
  const uint32_t mo = 0x4b400000u - (uint32_t)rq->off;
  const v4u32 magic_off = {mo, mo, mo, mo};
  const float l = (float)(rq->lo - rq->off), h = (float)(rq->hi - rq->off);
  const v4f32 lo = {l, l, l, l}, hi = {h, h, h, h};
  v4i32 v[4];
  int unsure = 0;
  for (int i = 0; i < n / 4; i++) {
    v4i32 x;
    memcpy(&x, a + 4 * i, 16);
    unsure |= sse_requant4(x, loadf(rq->scale + 4 * i),
                           loadf(rq->tol + 4 * i), lo, hi, magic_off, &v[i])
              << 4 * i;
  }
  const v8i16 s0 = __builtin_ia32_packssdw128(v[0], v[1]);
  const v8i16 s1 = n == 16 ? __builtin_ia32_packssdw128(v[2], v[3]) : s0;
  const v16i8 r = (v16i8)__builtin_ia32_packsswb128(s0, s1);
  memcpy(res, &r, (size_t)n);
  for (; unsure != 0; unsure &= unsure - 1) {
    const int j = __builtin_ctz((unsigned)unsure);
    res[j] = (int8_t)requant_exact(rq, j, a[j]);
  }
}
#endif /* CONV_SSE2 */

/* ------------------------------------------------------------------------ */
/* Cortex-M DSP                                                               */
/* ------------------------------------------------------------------------ */

#if CONV_DSP
/*
 * SMLAD does two multiply-adds of int16 pairs; SXTB16/SXTAB16 unpack a
 * word of four int8 into the pairs (k, k + 2) and (k + 1, k + 3), adding
 * the input offset on the way (fixed_point.h). A block's channels go four
 * at a time, their sums named scalars (registers); a tail of 1 to 3
 * channels takes the portable C. For BCAST a word of weights is four
 * output channels of one input channel, and a sum pairs input channels k
 * and k + 2: PKHBT/PKHTB join the halfwords of rows k and k + 2 into
 * (w[k][j], w[k][j+1], w[k+2][j], w[k+2][j+1]), so that SXTB16 gives
 * channel j's pair, and with the rotation channel j + 1's (bcast_pairs).
 * Four input by four output channels then take 5 loads, 4 packs, 10
 * unpacks and 8 SMLADs for 16 multiply-adds (the portable C: about 8
 * instructions for one); dsp_packed below does that unpacking once a
 * block. DOT unpacks both operands, the filter offset added by SXTAB16.
 */
typedef struct {
  int32_t s[4];
} Acc4;

#define acc4_load(c, a) memcpy((c)->s, (a), sizeof(c)->s)
#define acc4_store(a, c) memcpy((a), (c)->s, sizeof(c)->s)

/* u[j] = (w0[j], w1[j]) for the four channels of the weight words w0 and
 * w1 (two rows of BCAST weights). */
BLOCK_INLINE void bcast_pairs(int32_t *u, uint32_t w0, uint32_t w1) {
  const uint32_t lo = tn__crt_pack_lo(w0, w1), hi = tn__crt_pack_hi(w0, w1);
  u[0] = __sxtb16((int32_t)lo), u[1] = tn__crt_sxtb16_ror8(lo);
  u[2] = __sxtb16((int32_t)hi), u[3] = tn__crt_sxtb16_ror8(hi);
}

/* c[j] += u[j] . x for four pairs u and a pair of inputs x. */
BLOCK_INLINE void smlad4(Acc4 *c, const int32_t *u, int32_t x) {
  c->s[0] = __smlad(u[0], x, c->s[0]), c->s[1] = __smlad(u[1], x, c->s[1]);
  c->s[2] = __smlad(u[2], x, c->s[2]), c->s[3] = __smlad(u[3], x, c->s[3]);
}

/* c[j] += w0[j] * x.lo + w1[j] * x.hi, x a pair of inputs. */
BLOCK_INLINE void bcast_quad(Acc4 *c, uint32_t w0, uint32_t w1, int32_t x) {
  int32_t u[4];
  bcast_pairs(u, w0, w1), smlad4(c, u, x);
}

/* BCAST with contiguous inputs, for the window from its first in-bounds
 * tap as accumulate walks it: a[j] += (x[k] + io) * w[k * ws2 + j] over
 * rows (x dy, w ws0 apart) of runs (dx, ws1 apart) of n inputs, j < len. */
static void dsp_bcast(uint32_t *restrict a, int32_t len, const int8_t *x,
                      const int8_t *w, const Conv *c, const Win *wn) {
  const TnCrtConv2d *p = c->p;
  const int32_t nkx = wn->kx1 - wn->kx0, rows = wn->ky1 - wn->ky0;
  const int32_t runs = c->merge ? 1 : nkx, n = c->merge ? nkx * c->cpg
                                                        : c->cpg;
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * p->in_strides[2];
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1];
  const ptrdiff_t ws = p->w_strides[2];
  const int32_t io = c->io, io2 = tn__crt_pair(io, io);
  int32_t j = 0;
  for (; j + 4 <= len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    const int8_t *xr = x, *wr = w + j;
    for (int32_t ky = 0; ky < rows; ky++, xr += dy, wr += ws0)
      for (int32_t i = 0; i < runs; i++) {
        const int8_t *xk = xr + i * dx, *wk = wr + i * ws1;
        int32_t k = n;
        for (; k >= 4; k -= 4, xk += 4) {
          const uint32_t xv = tn__crt_load4(xk);
          const uint32_t w0 = tn__crt_load4(wk), w1 = tn__crt_load4(wk + ws);
          wk += 2 * ws;
          const uint32_t w2 = tn__crt_load4(wk), w3 = tn__crt_load4(wk + ws);
          wk += 2 * ws;
          bcast_quad(&s, w0, w2, __sxtab16(io2, (int32_t)xv));
          bcast_quad(&s, w1, w3, tn__crt_sxtab16_ror8(io2, xv));
        }
        if (k >= 2) {
          bcast_quad(&s, tn__crt_load4(wk), tn__crt_load4(wk + ws),
                     tn__crt_pair(xk[0] + io, xk[1] + io));
          k -= 2, xk += 2, wk += 2 * ws;
        }
        if (k == 1) {
          const uint32_t wv = tn__crt_load4(wk);
          bcast_quad(&s, wv, wv, tn__crt_pair(xk[0] + io, 0));
        }
      }
    acc4_store(a + j, &s);
  }
  for (int32_t ky = 0; j < len && ky < rows; ky++)
    for (int32_t i = 0; i < runs; i++)
      bcast(a + j, len - j, x + ky * dy + i * dx, 1, w + j + ky * ws0 + i * ws1,
            ws, n, (int16_t)io);
}

/*
 * dsp_bcast spends 12 of its 27 instructions a quad making pairs of
 * weights, again at every pixel. So a BCAST block has them made once
 * (pack_block), in the order the sums take them: per group of four
 * channels, per run of the window, per quad of input channels k .. k + 3,
 * the pairs (k, k + 2) of the four channels, then (k + 1, k + 3) (zero
 * past the run); a quad then costs two unpacks, four LDRDs and eight
 * SMLADs. dsp_bcast is left to blocks too large, and to pixels whose runs
 * start inside a quad. The pairs live in a variable-length array on
 * conv_run's stack, what the layer's widest block needs (16, 8 or 4
 * channels, the widest that fits; 2 KiB for a 64-channel pointwise layer)
 * and at most TN_CRT_DSP_PACK_BYTES (a 3x3 layer of 64 input channels in
 * blocks of 4 by default; a firmware short of stack can lower it, trading
 * speed; 0 packs nothing).
 */
#ifndef TN_CRT_DSP_PACK_BYTES
#define TN_CRT_DSP_PACK_BYTES 4608
#endif
enum { PACK_WORDS = TN_CRT_DSP_PACK_BYTES / 4, DW_TAPS = 32 };
typedef struct {
  int32_t *w;             /* the pairs */
  int32_t runs, n, quads; /* BCAST: the window's runs of n inputs */
  int32_t taps;           /* DW: the window's taps, in pairs */
  ptrdiff_t xo[DW_TAPS];  /* DW: each tap's input offset in the window */
  uint32_t corr[BLK];     /* DW: bias + io * the sum of the weights */
  int8_t pad[16];         /* DW: -io, the input outside the image */
} Pack;

static void pack_geometry(const Conv *c, Pack *pk) {
  pk->runs = c->merge ? c->p->k_h : c->p->k_h * c->p->k_w;
  pk->n = c->merge ? c->p->k_w * c->cpg : c->cpg;
  pk->quads = (pk->n + 3) / 4;
}

/* The widest block (16, 8 or 4) whose pairs fit, or 0: no packing; and
 * the words of pairs the layer's widest block takes. */
static int32_t pack_width(const Conv *c, int32_t *words) {
  Pack pk;
  const int32_t taps = c->p->k_h * c->p->k_w;
  int32_t w = 0;
  *words = 1;
  if (c->mode == DW && taps <= DW_TAPS) {
    w = block_width(c->p->out_c < BLK ? c->p->out_c : BLK);
    *words = w * ((taps + 1) / 2); /* 4 per group and tap pair */
  } else if (c->mode == BCAST && c->p->in_strides[3] == 1) {
    pack_geometry(c, &pk);
    const int64_t group = (int64_t)pk.runs * pk.quads * 8;
    w = block_width(c->fpg < BLK ? c->fpg : BLK);
    while (w >= 4 && group * (w / 4) > PACK_WORDS) w /= 2;
    *words = (int32_t)group * (w / 4);
  }
  if (w < 4 || *words > PACK_WORDS) return *words = 1, 0;
  return w;
}

/* The pairs of the len (4, 8 or 16) channels at co0. Within a run, input
 * channel k's weights are k * ws2 on (merge: ws1 == cpg * ws2). */
static void pack_block(Pack *pk, const Conv *c, int32_t co0, int32_t len) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t ws2 = p->w_strides[2];
  int32_t *o = pk->w;
  pack_geometry(c, pk);
  for (int32_t j = 0; j < len; j += 4)
    for (int32_t r = 0; r < pk->runs; r++) {
      const int32_t ky = c->merge ? r : r / p->k_w;
      const int32_t kx = c->merge ? 0 : r % p->k_w;
      const int8_t *w = c->w + (ptrdiff_t)ky * p->w_strides[0] +
                        (ptrdiff_t)kx * p->w_strides[1] +
                        (ptrdiff_t)(co0 + j) * p->w_strides[3];
      for (int32_t k = 0; k < pk->n; k += 4, o += 8) {
        uint32_t v[4];
        for (int32_t i = 0; i < 4; i++)
          v[i] = k + i < pk->n ? tn__crt_load4(w + (k + i) * ws2) : 0;
        bcast_pairs(o, v[0], v[2]);
        bcast_pairs(o + 4, v[1], v[3]);
      }
    }
}

/* The accumulators (from the bias) of the block at the pixel of wn from
 * the pairs of pk; 0 (a left untouched) when the pixel's runs do not start
 * a quad (a left border, input channels not a multiple of 4). */
static int dsp_packed(const Conv *c, const Pack *pk, const Win *wn,
                      int32_t co0, int32_t len, const uint32_t *bias,
                      uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const int32_t nkx = wn->kx1 - wn->kx0, nky = wn->ky1 - wn->ky0;
  const int32_t k0 = c->merge ? wn->kx0 * c->cpg : 0;
  if (k0 % 4 != 0) return 0;
  for (int32_t j = 0; j < BLK; j++) a[j] = bias[j];
  if (nkx <= 0 || nky <= 0) return 1;
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * p->in_strides[2];
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const int8_t *x = wn->x + (ptrdiff_t)wn->iy0 * p->in_strides[1] +
                    wn->ky0 * dy +
                    (ptrdiff_t)(wn->ix0 + wn->kx0 * p->dilation_w) *
                        p->in_strides[2] +
                    (ptrdiff_t)(co0 / c->fpg) * c->cpg;
  /* Runs of a row, their first one, and runs from a row to the next. */
  const int32_t runs = c->merge ? 1 : nkx, n = c->merge ? nkx * c->cpg
                                                        : c->cpg;
  const int32_t r0 = c->merge ? wn->ky0 : wn->ky0 * p->k_w + wn->kx0;
  const int32_t rstep = c->merge ? 1 : p->k_w;
  const int32_t io = c->io, io2 = tn__crt_pair(io, io);
  for (int32_t j = 0; j < len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    const int32_t *wg = pk->w + (ptrdiff_t)(j / 4) * pk->runs * pk->quads * 8;
    for (int32_t ky = 0; ky < nky; ky++)
      for (int32_t i = 0; i < runs; i++) {
        const int8_t *xk = x + ky * dy + i * dx;
        const int32_t *wp =
            wg + ((ptrdiff_t)(r0 + ky * rstep + i) * pk->quads + k0 / 4) * 8;
        int32_t k = n;
        for (; k >= 4; k -= 4, xk += 4, wp += 8) {
          const uint32_t xv = tn__crt_load4(xk);
          tn__crt_smlad8(s.s, wp, __sxtab16(io2, (int32_t)xv),
                         tn__crt_sxtab16_ror8(io2, xv));
        }
        if (k > 0) { /* the pairs past the run are zero: any input does */
          smlad4(&s, wp, tn__crt_pair(xk[0] + io, k > 2 ? xk[2] + io : 0));
          if (k > 1) smlad4(&s, wp + 4, tn__crt_pair(xk[1] + io, 0));
        }
      }
    acc4_store(a + j, &s);
  }
  return 1;
}

/*
 * DW sums pair taps t and t + 1 (the last of an odd count with zero), the
 * weights' pairs made once a block (pack_dw). As in the SSE2 form, the
 * input offset is folded out (sum((x + io) * w) = sum(x * w) + io *
 * sum(w), a constant the sums start from) and every pixel takes the whole
 * window, a tap outside the input reading pk->pad, bytes of -io that
 * cancel their share of the constant, so that the pairs never shift. The
 * inputs of a tap pair are paired as bcast_pairs pairs weights.
 */
static void pack_dw(Pack *pk, const Conv *c, int32_t co0, int32_t len,
                    const uint32_t *bias) {
  const TnCrtConv2d *p = c->p;
  pk->taps = p->k_h * p->k_w;
  memset(pk->pad, -c->io, sizeof pk->pad); /* io in [-127, 128] */
  for (int32_t t = 0; t < pk->taps; t++)
    pk->xo[t] = (ptrdiff_t)(t / p->k_w) * p->dilation_h * p->in_strides[1] +
                (ptrdiff_t)(t % p->k_w) * p->dilation_w * p->in_strides[2];
  int32_t *o = pk->w;
  for (int32_t j = 0; j < BLK; j++) pk->corr[j] = bias[j];
  for (int32_t j = 0; j < len; j += 4)
    for (int32_t t = 0; t < pk->taps; t += 2, o += 4) {
      uint32_t v[2] = {0, 0};
      for (int32_t i = 0; i < 2 && t + i < pk->taps; i++) {
        const int8_t *w = c->w + co0 + j +
                          (ptrdiff_t)((t + i) / p->k_w) * p->w_strides[0] +
                          (ptrdiff_t)((t + i) % p->k_w) * p->w_strides[1];
        v[i] = tn__crt_load4(w);
        for (int32_t k = 0; k < 4; k++)
          pk->corr[j + k] += (uint32_t)c->io * (uint32_t)w[k];
      }
      bcast_pairs(o, v[0], v[1]);
    }
}

static void dsp_dw_packed(const Conv *c, const Pack *pk, const Win *wn,
                          int32_t co0, int32_t len, uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const int8_t *tap[DW_TAPS + 1];
  /* The window's origin (outside the input for a border pixel: only
   * offsets of taps inside make pointers). */
  const ptrdiff_t o = (ptrdiff_t)wn->iy0 * p->in_strides[1] +
                      (ptrdiff_t)wn->ix0 * p->in_strides[2] + co0;
  int32_t t = 0;
  if (wn->ky0 == 0 && wn->ky1 == p->k_h && wn->kx0 == 0 && wn->kx1 == p->k_w)
    for (; t < pk->taps; t++) tap[t] = wn->x + (o + pk->xo[t]);
  else
    for (int32_t ky = 0; ky < p->k_h; ky++) {
      const int in = ky >= wn->ky0 && ky < wn->ky1;
      for (int32_t kx = 0; kx < p->k_w; kx++, t++)
        tap[t] = in && kx >= wn->kx0 && kx < wn->kx1 ? wn->x + (o + pk->xo[t])
                                                     : pk->pad;
    }
  tap[t] = pk->pad;
  const int32_t taps = pk->taps;
  const int32_t *w = pk->w;
  for (int32_t j = 0; j < BLK; j++) a[j] = pk->corr[j];
  for (int32_t j = 0; j < len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    for (t = 0; t < taps; t += 2, w += 4) {
      const uint32_t x0 = tn__crt_load4(tap[t] + j);
      const uint32_t x1 = tn__crt_load4(tap[t + 1] + j);
      tn__crt_smlad4_bytes(s.s, tn__crt_pack_lo(x0, x1),
                           tn__crt_pack_hi(x0, x1), w);
    }
    acc4_store(a + j, &s);
  }
}

/* dot for contiguous operands whose offset sums fit an int16. */
static uint32_t dsp_dot(const int8_t *x, const int8_t *w, int32_t n,
                        int32_t io, int32_t fo) {
  const int32_t io2 = tn__crt_pair(io, io), fo2 = tn__crt_pair(fo, fo);
  int32_t s0 = 0, s1 = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t xv = tn__crt_load4(x + i), wv = tn__crt_load4(w + i);
    s0 = __smlad(__sxtab16(io2, (int32_t)xv), __sxtab16(fo2, (int32_t)wv),
                 s0);
    s1 = __smlad(tn__crt_sxtab16_ror8(io2, xv),
                 tn__crt_sxtab16_ror8(fo2, wv), s1);
  }
  uint32_t s = (uint32_t)s0 + (uint32_t)s1;
  for (; i < n; i++) s += (uint32_t)((x[i] + io) * (w[i] + fo));
  return s;
}

/* requant_exact for every lane when rq->dsp (tn__crt_requant_s8). */
static void requant_dsp(const Requant *restrict rq,
                        const uint32_t *restrict a, int32_t n,
                        int8_t *restrict res) {
  const int32_t lo = rq->lo, hi = rq->hi;
  for (int32_t j = 0; j < n; j++)
    res[j] = (int8_t)tn__crt_requant_s8((int32_t)a[j], (int32_t)rq->m[j],
                                        rq->round[j], rq->r[j]);
  if (lo != -128 || hi != 127)
    for (int32_t j = 0; j < n; j++)
      res[j] = (int8_t)(res[j] < lo ? lo : res[j] > hi ? hi : res[j]);
}
#endif /* CONV_DSP */

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
#if CONV_SSE2
  if (c->mode == BCAST && (len == 16 || len == 8)) {
    if (len == 16 && npx == 2)
      sse_bcast(c, wn, co0, 2, 2, xr, wr, bias, a);
    else if (len == 16)
      sse_bcast(c, wn, co0, 2, 1, xr, wr, bias, a);
    else if (npx == 2)
      sse_bcast(c, wn, co0, 1, 2, xr, wr, bias, a);
    else
      sse_bcast(c, wn, co0, 1, 1, xr, wr, bias, a);
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
#if CONV_DSP
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
#if CONV_SSE2
    if (rq->fast) {
      if (lanes == 8)
        requant_sse(rq, ai, 8, ri);
      else
        requant_sse(rq, ai, 16, ri);
      continue;
    }
#endif
#if CONV_DSP
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

/* Every output pixel, block by block; the block's accumulators (which
 * start from the bias) are requantized into out8 (with q) or stored into
 * out32. On the SSE2 path neighbouring pixels go in pairs, sharing the
 * widened weights: BCAST pixels with the same taps, any two for DW. With a
 * ring (in-place depthwise, out8 == the input), each output row of a block
 * goes to the ring first and reaches out8 once no later row reads the input
 * it replaces. On the DSP path, pack_buf holds the pairs (see Pack). */
static NOINLINE void conv_blocks(const Conv *c, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, const int32_t *bias,
                                 int8_t *out8, int32_t *out32, int8_t *ring,
                                 int32_t *pack_buf) {
  const TnCrtConv2d *p = c->p;
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
  Requant rq;
#if CONV_DSP
  Pack pk;
  int32_t pack_words;
  const int32_t pack_w = pack_width(c, &pack_words);
  pk.w = pack_buf;
#else
  (void)pack_buf;
#endif
  for (int32_t co0 = 0, len; co0 < p->out_c; co0 += len) {
    /* The rest of the group for BCAST, of all channels otherwise. */
    int32_t rem = c->mode == BCAST ? c->fpg - co0 % c->fpg : p->out_c - co0;
#if CONV_DSP
    if (pack_w && rem > pack_w) rem = pack_w;
#endif
    len = block_width(rem);
    requant_init(&rq, q, lo, hi, bias, co0, len);
#if CONV_DSP
    const int packed = pack_w && len % 4 == 0;
    if (packed && c->mode == DW)
      pack_dw(&pk, c, co0, len, rq.bias);
    else if (packed)
      pack_block(&pk, c, co0, len);
#endif
#if CONV_SSE2
    /* The SSE2 forms: BCAST and DW blocks of 8 or 16 channels, the latter
     * with windows dw_init takes; they do pixels in pairs. */
    const int sse = len == 8 || len == 16;
    DwWin dwin;
    const int fast_dw =
        sse && c->mode == DW && dw_init(&dwin, c, co0, len / 8, rq.bias);
    const int pairs = fast_dw || (sse && c->mode == BCAST);
#else
    const int pairs = 0, fast_dw = 0;
#endif
    /* Where the output pixels of a row go: ps2 apart, channels ps3. */
    const ptrdiff_t ps2 = ring ? len : os2, ps3 = ring ? 1 : os3;
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
        wn.iy0 = oy * p->stride_h - p->pad_top;
        taps(wn.iy0, p->k_h, p->dilation_h, p->in_h, &wn.ky0, &wn.ky1);
        for (int32_t ox = 0, npx; ox < p->out_w; ox += npx) {
          wn.ix0 = ox * p->stride_w - p->pad_left;
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
#if CONV_SSE2
          if (fast_dw) {
            const int full = wn.ky0 == 0 && wn.ky1 == p->k_h &&
                             wn.kx0 == 0 && wn.kx1 == p->k_w &&
                             (npx == 1 || (wn.nx0 == 0 && wn.nx1 == p->k_w));
            dw(&dwin, &wn, len, npx, full, wn.x,
               (ptrdiff_t)wn.iy0 * p->in_strides[1] +
                   (ptrdiff_t)wn.ix0 * p->in_strides[2] + co0,
               (ptrdiff_t)p->stride_w * p->in_strides[2], a);
          } else
#endif
#if CONV_DSP
          if (packed && c->mode == DW)
            dsp_dw_packed(c, &pk, &wn, co0, len, a);
          else if (!packed || !dsp_packed(c, &pk, &wn, co0, len, rq.bias, a))
#endif
            accumulate(c, &wn, co0, len, npx, rq.bias, a);
          if (row32)
            store32(&rq, a, npx, row32 + (ptrdiff_t)ox * os2, os2, os3);
          else
            requant_store(&rq, a, npx, row8 + (ptrdiff_t)ox * ps2, ps2, ps3);
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

/* conv_blocks with, on the DSP path, a variable-length array for the pairs:
 * here, so that conv_blocks keeps the frame pointer's register. */
static void conv_run(const Conv *c, const TnCrtQuant *q, int32_t lo,
                     int32_t hi, const int32_t *bias, int8_t *out8,
                     int32_t *out32, int8_t *ring) {
#if CONV_DSP
  int32_t words;
  (void)pack_width(c, &words);
  int32_t pack_buf[words];
  conv_blocks(c, q, lo, hi, bias, out8, out32, ring, pack_buf);
#else
  conv_blocks(c, q, lo, hi, bias, out8, out32, ring, NULL);
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
 * Both need the same byte layout for input and output (dense NHWC strides,
 * out_h == in_h and out_w == in_w), so that an output element's address is
 * that of an input element already read (or about to be).
 */
enum { NOT_IN_PLACE, ROWS, PIXELS };
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
      p->pad_top == 0 && p->pad_left == 0 && p->out_c <= p->in_c)
    return PIXELS;
  return NOT_IN_PLACE;
}

/* Pixels per PIXELS chunk: PIXEL_CHUNK bytes of input (at least one
 * pixel), no more than there are. */
static int32_t chunk_pixels(const TnCrtConv2d *p) {
  const int64_t all = (int64_t)p->batch * p->in_h * p->in_w;
  const int32_t n = p->in_c < PIXEL_CHUNK ? PIXEL_CHUNK / p->in_c : 1;
  return all < n ? (int32_t)all : n;
}

/* PIXELS: buf holds the input and receives the output. */
static void conv_pixels(const TnCrtConv2d *p, const TnCrtQuant *q, int32_t lo,
                        int32_t hi, const int8_t *w, const int32_t *bias,
                        int8_t *buf, int8_t *scratch) {
  const int64_t all = (int64_t)p->batch * p->in_h * p->in_w;
  const int32_t chunk = chunk_pixels(p);
  TnCrtConv2d g = *p;
  g.batch = 1, g.in_h = g.out_h = 1;
  for (int64_t p0 = 0; p0 < all; p0 += g.in_w) {
    g.in_w = g.out_w = all - p0 < chunk ? (int32_t)(all - p0) : chunk;
    g.in_strides[0] = g.in_strides[1] = g.in_w * p->in_c;
    g.out_strides[0] = g.out_strides[1] = g.out_w * p->out_c;
    memcpy(scratch, buf + p0 * p->in_c, (size_t)g.in_w * (size_t)p->in_c);
    Conv c;
    int8_t *out = buf + p0 * p->out_c;
    /* A part of a valid geometry: conv_init succeeds. */
    (void)conv_init(&c, &g, q->input_offset, q->filter_offset, scratch, w,
                    out);
    conv_run(&c, q, lo, hi, bias, out, NULL, NULL);
  }
}

int32_t tn_crt_conv2d_s8_inplace_ok(const TnCrtConv2d *p) {
  return in_place_kind(p) != NOT_IN_PLACE;
}

size_t tn_crt_conv2d_s8_inplace_scratch_size(const TnCrtConv2d *p) {
  uint64_t n;
  switch (in_place_kind(p)) {
    case ROWS:
      n = (uint64_t)ring_rows(p) * (uint64_t)p->out_w *
          (uint64_t)(p->out_c < BLK ? p->out_c : BLK);
      break;
    case PIXELS:
      n = (uint64_t)chunk_pixels(p) * (uint64_t)p->in_c;
      break;
    default:
      return 0;
  }
  return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                               */
/* ------------------------------------------------------------------------ */

size_t tn_crt_conv2d_s8_scratch_size(const TnCrtConv2d *p) {
  (void)p;
  return 0;
}

TnCrtStatus tn_crt_conv2d_s8(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int8_t *in, const int8_t *w,
                             const int32_t *bias, int8_t *out, void *scratch,
                             size_t scratch_size) {
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
  if ((const void *)in != (const void *)out) {
    conv_run(&c, q, lo, hi, bias, out, NULL, NULL);
    return TN_CRT_OK;
  }
  const int kind = in_place_kind(p);
  if (kind == NOT_IN_PLACE) return TN_CRT_INVALID_ARGUMENT;
  if (scratch_size < tn_crt_conv2d_s8_inplace_scratch_size(p))
    return TN_CRT_SCRATCH_TOO_SMALL;
  if (scratch == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (kind == ROWS)
    conv_run(&c, q, lo, hi, bias, out, NULL, scratch);
  else
    conv_pixels(p, q, lo, hi, w, bias, out, scratch);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_conv2d_s8_s32(const TnCrtConv2d *p, int32_t input_offset,
                                 int32_t filter_offset, const int8_t *in,
                                 const int8_t *w, const int32_t *bias,
                                 int32_t *out) {
  Conv c;
  TnCrtStatus st = conv_init(&c, p, input_offset, filter_offset, in, w, out);
  if (st != TN_CRT_OK) return st;
  conv_run(&c, NULL, 0, 0, bias, NULL, out, NULL);
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(conv2d_s8, TnCrtCallConvS8) {
  return tn_crt_conv2d_s8(&p->g, &p->q, in[0], in[1],
                          p->has_bias ? in[2] : NULL, out, scratch,
                          scratch_size);
}
TN_CRT_CALL(conv2d_s8_s32, TnCrtCallConvS32) {
  return tn_crt_conv2d_s8_s32(&p->g, p->input_offset, p->filter_offset,
                              in[0], in[1], NULL, out);
}
