/*
 * x86/conv_s8.c: the SSE2 form of the int8 convolution (conv_s8.c): BCAST,
 * DW and the requantization in GNU C vectors and six SSE2 builtins, about
 * twice as fast as the portable C on x86, bit for bit the same integers;
 * and an AVX2 form of BCAST with its requantization (at the end).
 * conv_s8.c calls it wherever isa.h says SSE2 is there (__SSE2__ with GNU
 * C: every x86-64); elsewhere this file compiles to nothing, so that an
 * archive can always carry it.
 */
#include "conv_s8.h"

#if TN_CRT_HAVE_SSE2
#include "crt_libc.h"

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
 * the portable form. The taps' offsets are the same for every block, so
 * a call sets them up once (tn__crt_conv_dw_taps) and each block only its
 * weights and corrections (tn__crt_conv_dw_init): a streaming layer of a
 * few pixels spent as long setting a block up as computing it.
 */

int tn__crt_conv_dw_taps(DwWin *d, const Conv *c) {
  const TnCrtConv2d *p = c->p;
  const int32_t taps = p->k_h * p->k_w;
  if (taps > 2 * DW_PAIRS) return 0;
  d->taps = taps, d->pairs = (taps + 1) / 2;
  for (int32_t t = 0; t < 2 * d->pairs; t++) {
    const int32_t ky = t < taps ? t / p->k_w : 0;
    const int32_t kx = t < taps ? t % p->k_w : 0;
    d->ky[t] = ky, d->kx[t] = kx;
    d->xo[t] = (ptrdiff_t)ky * p->dilation_h * p->in_strides[1] +
               (ptrdiff_t)kx * p->dilation_w * p->in_strides[2];
  }
  memset(d->pad, -c->io, sizeof d->pad); /* io in [-127, 128] */
  return 1;
}

void tn__crt_conv_dw_init(DwWin *d, const Conv *c, int32_t co0, int u,
                          const uint32_t *bias) {
  static const int8_t zero[16] = {0};
  const TnCrtConv2d *p = c->p;
  const v8i16 ones = {1, 1, 1, 1, 1, 1, 1, 1};
  /* sum(w) per channel: pmaddwd of each pair of widened taps with ones
   * (an odd last tap's pair has a zero weight), mod 2^32 as any sum */
  v4u32 sum[4] = {{0}, {0}, {0}, {0}};
  for (int32_t i = 0; i < d->pairs; i++) {
    const int32_t t = 2 * i;
    const int8_t *w0 = c->w + (ptrdiff_t)d->ky[t] * p->w_strides[0] +
                       (ptrdiff_t)d->kx[t] * p->w_strides[1] + co0;
    const int8_t *w1 =
        t + 1 < d->taps ? c->w + (ptrdiff_t)d->ky[t + 1] * p->w_strides[0] +
                              (ptrdiff_t)d->kx[t + 1] * p->w_strides[1] + co0
                        : zero;
    zip_widen(d->w[i], u, w0, w1);
    sum[0] += (v4u32)madd(d->w[i][0], ones);
    sum[1] += (v4u32)madd(d->w[i][1], ones);
    if (u == 2) {
      sum[2] += (v4u32)madd(d->w[i][2], ones);
      sum[3] += (v4u32)madd(d->w[i][3], ones);
    }
  }
  const uint32_t io = (uint32_t)c->io;
  for (int q = 0; q < 4; q++) {
    v4u32 b;
    memcpy(&b, bias + 4 * q, sizeof b);
    d->corr[q] = sum[q] * io + b;
  }
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

void tn__crt_conv_dw(const DwWin *d, const Win *wn, int32_t len, int npx,
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

void tn__crt_conv_sse_bcast(const Conv *c, const Win *wn, int32_t co0, int u,
                            int npx, const int8_t *xr, const int8_t *wr,
                            const uint32_t *bias, uint32_t *restrict a) {
  if (u == 2 && npx == 2)
    sse_bcast(c, wn, co0, 2, 2, xr, wr, bias, a);
  else if (u == 2)
    sse_bcast(c, wn, co0, 2, 1, xr, wr, bias, a);
  else if (npx == 2)
    sse_bcast(c, wn, co0, 1, 2, xr, wr, bias, a);
  else
    sse_bcast(c, wn, co0, 1, 1, xr, wr, bias, a);
}

void tn__crt_conv_requant_sse(const Requant *restrict rq,
                              const uint32_t *restrict a, int32_t n,
                              int8_t *restrict res) {
  if (n == 8)
    requant_sse(rq, a, 8, res);
  else
    requant_sse(rq, a, 16, res);
}

/* requant_sse's constants of lanes [i, i + 4) from their multipliers m
 * and right shifts r. 2^-31 and 2^-r are exact in float: scale =
 * float(M) * 2^-(31+r). 2^-r is built from its exponent bits, and M
 * (< 2^31) converted as an int32: no division and no unsigned
 * conversion, which cost a 1x1 layer run in place (set up once per
 * chunk) a tenth of its time. The same operations, in the same order, as
 * one lane at a time: the same floats. */
static inline void sse_consts4(Requant *restrict rq, int32_t i, v4i32 m,
                               v4i32 r) {
  const v4f32 c31 = {1.0f / 2147483648.0f, 1.0f / 2147483648.0f,
                     1.0f / 2147483648.0f, 1.0f / 2147483648.0f};
  const v4f32 half = {0.5f, 0.5f, 0.5f, 0.5f};
  const v4f32 eps = {1.0f / 2048.0f, 1.0f / 2048.0f, 1.0f / 2048.0f,
                     1.0f / 2048.0f};
  const v4i32 minus1 = (v4i32)(v4f32){-1.0f, -1.0f, -1.0f, -1.0f};
  const v4i32 c127 = {127, 127, 127, 127};
  const v4f32 pot = (v4f32)((c127 - r) << 23);
  const v4f32 scale = __builtin_convertvector(m, v4f32) * c31 * pot;
  const v4i32 pos = r > 0;
  const v4i32 tol = (v4i32)(half - half * pot - eps);
  memcpy(rq->scale + i, &scale, sizeof scale);
  /* r = 0: never certain; M = 0 (the lanes past a block's channels, which
   * are not stored): always, y = 0 exactly. Unsure lanes past the
   * channels sent a last block of 8 to requant_exact at every pixel. */
  const v4i32 one = (v4i32)(v4f32){1.0f, 1.0f, 1.0f, 1.0f};
  const v4i32 zm = m == 0;
  const v4i32 t = (pos & tol) | (~pos & ((zm & one) | (~zm & minus1)));
  memcpy(rq->tol + i, &t, sizeof t);
}

/* requant_sse's constants of the block rq (its multipliers and shifts set
 * by requant_init), four lanes at a time. */
void tn__crt_conv_requant_init_sse2(Requant *rq) {
  for (int32_t i = 0; i < BLK; i += 4) {
    const v4i32 r = {rq->r[i], rq->r[i + 1], rq->r[i + 2], rq->r[i + 3]};
    v4i32 m;
    memcpy(&m, rq->m + i, sizeof m);
    sse_consts4(rq, i, m, r);
  }
  rq->fast = rq->vec && rq->off >= -512 && rq->off <= 512;
}

/* requant_init's usual block (16 channels, per-channel multipliers, a
 * bias) with requant_sse's constants, in one pass four lanes at a time:
 * the same values as requant_init's scalar loop and
 * tn__crt_conv_requant_init_sse2 (the same operations on the same
 * lanes), without their stores and reloads of each lane; every block of
 * every call sets it up, and the wake word's layers of a few pixels spent
 * a tenth of their time in the two. */
void tn__crt_conv_requant_block_sse2(Requant *restrict rq, const int32_t *mk,
                                     const int32_t *sk, const int32_t *bk) {
  const v4u32 c31u = {31, 31, 31, 31};
  v4i32 worse = {0, 0, 0, 0}, r4[4];
  for (int i = 0; i < 4; i++) {
    v4i32 m, sh, b;
    memcpy(&m, mk + 4 * i, sizeof m);
    memcpy(&sh, sk + 4 * i, sizeof sh);
    memcpy(&b, bk + 4 * i, sizeof b);
    const v4i32 wide = (v4i32)((v4u32)sh + c31u > c31u); /* s > 0, s < -31 */
    const v4i32 neg = m < 0;
    worse |= wide | neg;
    m &= ~neg;
    const v4i32 r = -sh & ~wide;
    r4[i] = r;
    memcpy(rq->m + 4 * i, &m, sizeof m);
    memcpy(rq->bias + 4 * i, &b, sizeof b);
    sse_consts4(rq, 4 * i, m, r);
  }
  /* r in [0, 31]: the saturating packs only narrow */
  const v16i8 rb = (v16i8)__builtin_ia32_packsswb128(
      __builtin_ia32_packssdw128(r4[0], r4[1]),
      __builtin_ia32_packssdw128(r4[2], r4[3]));
  memcpy(rq->r, &rb, sizeof rb);
  const v4i32 any = worse | __builtin_shufflevector(worse, worse, 2, 3, 0, 1);
  rq->vec = (any[0] | any[1]) == 0;
  rq->fast = rq->vec && rq->off >= -512 && rq->off <= 512;
}

#if TN_CRT_HAVE_AVX2
/*
 * The AVX2 form of BCAST (conv_s8.h, AvxBcast): sixteen channels in two
 * registers of eight int32, four pixels at once, so that each pair of
 * packed weight registers serves eight vpmaddwd. A pixel's pair of inputs
 * (x + io, two int16) is broadcast to every lane; its products with the
 * int8 weights are below 2^15 in magnitude (|x + io| <= 255, BCAST's
 * condition), so vpmaddwd's pair sums are exact, and the wrapping int32
 * sums equal the portable uint32 ones. The accumulators are requantized
 * in registers, eight lanes at a time, as requant_sse does it (its
 * doubtful lanes redone by requant_exact). Compiled for AVX2 with a target
 * attribute and taken where tn__crt_avx2() says the CPU runs it.
 */
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* A whole block of 16 channels in tn_crt_dense_s8_pack's layout (wb, kk
 * inputs: a group of four inputs is 16 channels by 4 bytes) as rows of
 * HWIO: input k's 16 channels at wu + k * ws, for the groups of four
 * (kk / 4 of them; the caller does a shorter last group), and each
 * channel's weight sum over them added to sums[0..15]. A group's four
 * registers of four channels are regrouped by input (vpshufb) and
 * transposed as 4x4 dwords; the sums are vpmaddubsw by ones (pairs), then
 * vpmaddwd by ones (the four). */
AVX2 void tn__crt_conv_unpack16(const int8_t *wb, int32_t kk, int8_t *wu,
                                ptrdiff_t ws, int32_t *sums) {
  const __m128i by_k = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10,
                                     14, 3, 7, 11, 15);
  const __m128i one8 = _mm_set1_epi8(1), one16 = _mm_set1_epi16(1);
  __m128i s[4], a[4], b[4];
  for (int i = 0; i < 4; i++) s[i] = _mm_setzero_si128();
  for (int32_t k0 = 0; k0 + 4 <= kk; k0 += 4) {
    const int8_t *g = wb + (ptrdiff_t)k0 * 16;
    for (int i = 0; i < 4; i++) {
      a[i] = _mm_loadu_si128((const __m128i *)(const void *)(g + 16 * i));
      s[i] = _mm_add_epi32(
          s[i], _mm_madd_epi16(_mm_maddubs_epi16(one8, a[i]), one16));
      b[i] = _mm_shuffle_epi8(a[i], by_k); /* dword t: input k0 + t */
    }
    const __m128i t0 = _mm_unpacklo_epi32(b[0], b[1]);
    const __m128i t1 = _mm_unpacklo_epi32(b[2], b[3]);
    const __m128i t2 = _mm_unpackhi_epi32(b[0], b[1]);
    const __m128i t3 = _mm_unpackhi_epi32(b[2], b[3]);
    int8_t *r = wu + (ptrdiff_t)k0 * ws;
    _mm_storeu_si128((__m128i *)(void *)r, _mm_unpacklo_epi64(t0, t1));
    _mm_storeu_si128((__m128i *)(void *)(r + ws), _mm_unpackhi_epi64(t0, t1));
    _mm_storeu_si128((__m128i *)(void *)(r + 2 * ws),
                     _mm_unpacklo_epi64(t2, t3));
    _mm_storeu_si128((__m128i *)(void *)(r + 3 * ws),
                     _mm_unpackhi_epi64(t2, t3));
  }
  for (int i = 0; i < 4; i++) {
    __m128i *sp = (__m128i *)(void *)(sums + 4 * i);
    _mm_storeu_si128(sp, _mm_add_epi32(_mm_loadu_si128(sp), s[i]));
  }
}

/* The block's weights as AvxBcast describes them, into out: per pair of
 * a row's inputs, the 8 * u channels of both interleaved (vpunpck[lh]bw)
 * and widened (vpmovsxbw). */
AVX2 static void avx_pack_rows(const AvxBcast *k, const Conv *c, int32_t co0,
                               int u, int16_t *out) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t ws2 = p->w_strides[2];
  const __m128i zero = _mm_setzero_si128();
  for (int32_t r = 0; r < k->rows; r++) {
    const int32_t kx = c->merge ? 0 : r % p->k_w;
    /* BCAST: output channels contiguous in the weights */
    const int8_t *w = c->w + (ptrdiff_t)k->ky[r] * p->w_strides[0] +
                      (ptrdiff_t)kx * p->w_strides[1] + co0;
    for (int32_t e = 0; e < k->run; e += 2, out += 16 * u) {
      const int8_t *w0 = w + e * ws2, *w1 = w0 + ws2;
      const int two = e + 1 < k->run;
      if (u == 2) {
        const __m128i a = _mm_loadu_si128((const __m128i *)w0);
        const __m128i b = two ? _mm_loadu_si128((const __m128i *)w1) : zero;
        _mm256_store_si256((__m256i *)out,
                           _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
        _mm256_store_si256((__m256i *)(out + 16),
                           _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b)));
      } else {
        const __m128i a = _mm_loadl_epi64((const __m128i *)w0);
        const __m128i b = two ? _mm_loadl_epi64((const __m128i *)w1) : zero;
        _mm256_store_si256((__m256i *)out,
                           _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
      }
    }
  }
}

static int conv_vnni_fault; /* tn__crt_conv_vnni_fault */
void tn__crt_conv_vnni_fault(int how) {
  __atomic_store_n(&conv_vnni_fault, how, __ATOMIC_RELAXED);
}

/* A whole block of 16 channels in tn_crt_dense_s8_pack's layout (wb, kk
 * inputs, a multiple of 4) as the AVX2 row form reads a block of 16
 * channels (AvxBcast, not VNNI: per pair of inputs the 16 channels' two
 * weights as int16), into k->w from 0, which k then describes (its cache
 * emptied). A group's four quarters of 4 channels by 4 inputs are split
 * into each channel's first and second pair (vpshufb), the quarters'
 * halves joined by channel (vpunpck[lh]qdq) and widened (vpmovsxbw). */
AVX2 void tn__crt_conv_pairs16(AvxBcast *k, const int8_t *wb, int32_t kk) {
  const __m128i by_pair = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6,
                                        7, 10, 11, 14, 15);
  /* (how == 8 swaps each group's two pairs: a broken form for the
   * tests) */
  const int swap = __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 8;
  int16_t *o = k->w;
  for (int32_t k0 = 0; k0 < kk; k0 += 4, wb += 64, o += 64) {
    __m128i q[4];
    for (int i = 0; i < 4; i++)
      q[i] = _mm_shuffle_epi8(
          _mm_loadu_si128((const __m128i *)(const void *)(wb + 16 * i)),
          by_pair);
    int16_t *const o0 = o + (swap ? 32 : 0), *const o1 = o + (swap ? 0 : 32);
    _mm256_store_si256((__m256i *)(void *)o0,
                       _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(q[0], q[1])));
    _mm256_store_si256((__m256i *)(void *)(o0 + 16),
                       _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(q[2], q[3])));
    _mm256_store_si256((__m256i *)(void *)o1,
                       _mm256_cvtepi8_epi16(_mm_unpackhi_epi64(q[0], q[1])));
    _mm256_store_si256((__m256i *)(void *)(o1 + 16),
                       _mm256_cvtepi8_epi16(_mm_unpackhi_epi64(q[2], q[3])));
  }
  k->cur = 0, k->u = 2, k->vnni = 0, k->blocks = 0, k->used = 0;
}

/* The block's weights as the VNNI form reads them (conv_s8.h), then the
 * per-channel corrections: per group of four inputs, their four rows of
 * 16 channels (the lanes of one zmm) transposed to 16 channels of four
 * bytes: vpermd gathers into lane L the four rows' dword L (channels 4L
 * to 4L + 3), vpshufb transposes each lane's 4x4 bytes (two shuffles for
 * the twelve unpacks and inserts of the 128-bit form, the wake word's
 * tenth of its time spent packing); sum(w) per channel with vpdpbusd on
 * bytes of 1. A block of 8 channels (u == 1) reads 8 bytes a row and
 * leaves lanes 8 to 15 zero (weights and corrections): half of each
 * vpdpbusd wasted, and still faster than the AVX2 form it replaces (the
 * large ResNet's 40-channel layers, 16 + 16 + 8: 0.90x the model's
 * time, BENCHMARKS.md). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void
vnni_pack_rows(const AvxBcast *k, const Conv *c, int32_t co0, int8_t *out) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t ws2 = p->w_strides[2];
  const __m128i zero = _mm_setzero_si128();
  __m512i wsum = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi8(1);
  const __m512i gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6,
                                           10, 14, 3, 7, 11, 15);
  const __m512i transpose = _mm512_broadcast_i32x4(_mm_setr_epi8(
      0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  for (int32_t r = 0; r < k->rows; r++) {
    const int32_t kx = c->merge ? 0 : r % p->k_w;
    const int8_t *w = c->w + (ptrdiff_t)k->ky[r] * p->w_strides[0] +
                      (ptrdiff_t)kx * p->w_strides[1] + co0;
    for (int32_t e = 0; e < k->run; e += 4, out += 64) {
      /* the rows past the run (its last group's) zero, loaded otherwise
       * straight into the lanes (an array of them would go through the
       * stack) */
      const int32_t n = k->run - e;
      const int8_t *we = w + e * ws2;
#define ROW(t)                                                     \
  (n <= (t)     ? zero                                             \
   : k->u == 2 ? _mm_loadu_si128((const __m128i *)(we + (t) * ws2)) \
               : _mm_loadl_epi64((const __m128i *)(we + (t) * ws2)))
      const __m512i rows = _mm512_inserti32x4(
          _mm512_inserti32x4(
              _mm512_inserti32x4(_mm512_castsi128_si512(ROW(0)), ROW(1), 1),
              ROW(2), 2),
          ROW(3), 3);
#undef ROW
      const __m512i q = _mm512_shuffle_epi8(
          _mm512_permutexvar_epi32(gather, rows), transpose);
      _mm512_storeu_si512(out, q);
      wsum = _mm512_dpbusd_epi32(wsum, one, q);
    }
  }
  const uint32_t m = (uint32_t)c->io -
                     (__atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 1
                          ? 0u
                          : 128u);
  _mm512_storeu_si512(out, _mm512_mullo_epi32(wsum, _mm512_set1_epi32((int32_t)m)));
}

/* k's window rows (rows, run, ky, xo, pad) for c's blocks of 8 * u
 * channels, packed for VNNI or not; 0 if the window is too large (or its
 * packed block, of size int16). */
static int window_rows(AvxBcast *k, const Conv *c, int u, int vnni) {
  const TnCrtConv2d *p = c->p;
  const int32_t rows = c->merge ? p->k_h : p->k_h * p->k_w;
  const int32_t run = c->merge ? p->k_w * c->cpg : c->cpg;
  /* in int16: VNNI's 64 bytes a group of four and 64 of corrections */
  const int64_t size = vnni ? (int64_t)rows * ((run + 3) / 4) * 32 + 32
                            : (int64_t)rows * ((run + 1) / 2) * 16 * u;
  if (rows > AVX_ROWS || run > AVX_PAD || size > AVX_PACK) return 0;
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * p->in_strides[2];
  k->rows = rows, k->run = run, k->u = u, k->vnni = vnni;
  for (int32_t r = 0; r < rows; r++) {
    k->ky[r] = c->merge ? r : r / p->k_w;
    k->xo[r] = k->ky[r] * dy + (c->merge ? 0 : r % p->k_w) * dx;
  }
  memset(k->pad, -c->io, (size_t)run); /* io in [-127, 128] */
  return (int)size;
}

int tn__crt_conv_rows_packed(AvxBcast *k, const Conv *c) {
  return window_rows(k, c, 2, 1) && k->run % 4 == 0;
}

int tn__crt_conv_avx2_pack(AvxBcast *k, const Conv *c, int32_t co0, int u) {
  const int vnni = tn__crt_avx512vnni();
  const int64_t size = window_rows(k, c, u, vnni);
  if (size == 0) return 0;
  const int32_t key = vnni ? 4 + u : u; /* the kind of packing */
  for (int32_t b = 0; b < k->blocks; b++)
    if (k->co0[b] == co0 && k->bu[b] == key) {
      k->cur = k->off[b];
      return 1;
    }
  if (k->used + size > AVX_PACK || k->blocks == AVX_BLOCKS)
    k->used = 0, k->blocks = 0; /* full: start over */
  k->co0[k->blocks] = co0, k->bu[k->blocks] = key;
  k->off[k->blocks] = k->used;
  k->blocks++;
  k->cur = k->used;
  k->used += (int32_t)size;
  if (vnni)
    vnni_pack_rows(k, c, co0, (int8_t *)(k->w + k->cur));
  else
    avx_pack_rows(k, c, co0, u, k->w + k->cur);
  return 1;
}

/* The pair (e[0] + io, e[s] + io) in every int32 lane; (e[0] + io, io)
 * for the last input of an odd run (its weight is 0). */
AVX2 static inline __m256i avx_pair(const int8_t *e, ptrdiff_t s, int odd,
                                    __m128i io) {
  const int v = odd ? (uint8_t)e[0] : (uint8_t)e[0] | (uint8_t)e[s] << 8;
  return _mm256_broadcastd_epi32(
      _mm_add_epi16(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(v)), io));
}

/* One pair of inputs at the four pixels against the packed weights w
 * (accumulators a<pixel><register>, named so that they stay in
 * registers). */
#define AVX_STEP(odd)                                                    \
  do {                                                                   \
    const __m256i w0 = _mm256_load_si256((const __m256i *)w);            \
    const __m256i w1 =                                                   \
        u == 2 ? _mm256_load_si256((const __m256i *)(w + 16)) : w0;      \
    __m256i v = avx_pair(e0, s, odd, iov);                               \
    a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(w0, v));               \
    if (u == 2) a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(w1, v));   \
    v = avx_pair(e1, s, odd, iov);                                       \
    a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(w0, v));               \
    if (u == 2) a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(w1, v));   \
    v = avx_pair(e2, s, odd, iov);                                       \
    a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(w0, v));               \
    if (u == 2) a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(w1, v));   \
    v = avx_pair(e3, s, odd, iov);                                       \
    a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(w0, v));               \
    if (u == 2) a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(w1, v));   \
    w += 16 * u;                                                         \
  } while (0)

/* Eight int8 at e widened to int16 with io added: four pairs. */
AVX2 static inline __m128i avx_widen8(const int8_t *e, __m128i io) {
  return _mm_add_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)e)),
                       io);
}

/* The pair picked by the vpshufd immediate sel (0x00, 0x55, 0xaa, 0xff:
 * pair 0 to 3) of each pixel's x0 .. x3 against the next packed weights. */
#define AVX_QUAD(sel)                                                      \
  do {                                                                     \
    const __m256i w0 = _mm256_load_si256((const __m256i *)w);              \
    const __m256i w1 =                                                     \
        u == 2 ? _mm256_load_si256((const __m256i *)(w + 16)) : w0;        \
    __m256i v = _mm256_broadcastd_epi32(_mm_shuffle_epi32(x0, sel));       \
    a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(w0, v));                 \
    if (u == 2) a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(w1, v));     \
    v = _mm256_broadcastd_epi32(_mm_shuffle_epi32(x1, sel));               \
    a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(w0, v));                 \
    if (u == 2) a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(w1, v));     \
    v = _mm256_broadcastd_epi32(_mm_shuffle_epi32(x2, sel));               \
    a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(w0, v));                 \
    if (u == 2) a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(w1, v));     \
    v = _mm256_broadcastd_epi32(_mm_shuffle_epi32(x3, sel));               \
    a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(w0, v));                 \
    if (u == 2) a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(w1, v));     \
    w += 16 * u;                                                           \
  } while (0)

/* Eight lanes of requant_sse (lanes j0 .. j0 + 7 of the block): the
 * results with the output offset added, and a bit per doubtful lane. */
AVX2 static inline int avx_requant8(__m256i x, const Requant *rq, int j0,
                                    __m256 lo, __m256 hi, __m256i magic_off,
                                    __m256i *q) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 scale = _mm256_loadu_ps(rq->scale + j0);
  const __m256 tol = _mm256_loadu_ps(rq->tol + j0);
  __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(x), scale);
  y = _mm256_min_ps(_mm256_max_ps(y, lo), hi);
  const __m256 t = _mm256_add_ps(y, magic);
  *q = _mm256_sub_epi32(_mm256_castps_si256(t), magic_off);
  const __m256 d = _mm256_and_ps(
      _mm256_sub_ps(y, _mm256_sub_ps(t, magic)),
      _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX)));
  return _mm256_movemask_ps(_mm256_cmp_ps(d, tol, _CMP_GT_OQ));
}

/* Pixel i's accumulators (c0: lanes 0-7, c1: 8-15 when u == 2)
 * requantized into out. */
AVX2 static inline __attribute__((always_inline)) void
avx_requant_store(const Requant *rq, int u,
                  __m256i c0, __m256i c1,
                  int8_t *out) {
  const __m256i magic_off =
      _mm256_set1_epi32((int32_t)(0x4b400000u - (uint32_t)rq->off));
  const __m256 lo = _mm256_set1_ps((float)(rq->lo - rq->off));
  const __m256 hi = _mm256_set1_ps((float)(rq->hi - rq->off));
  __m256i q0, q1;
  int unsure = avx_requant8(c0, rq, 0, lo, hi, magic_off, &q0);
  if (u == 2) {
    unsure |= avx_requant8(c1, rq, 8, lo, hi, magic_off, &q1) << 8;
    /* packs work within 128-bit halves: put the int16 back in order */
    const __m256i s = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1),
                                               0xd8);
    _mm_storeu_si128((__m128i *)out,
                     _mm_packs_epi16(_mm256_castsi256_si128(s),
                                     _mm256_extracti128_si256(s, 1)));
  } else {
    const __m128i s = _mm_packs_epi32(_mm256_castsi256_si128(q0),
                                      _mm256_extracti128_si256(q0, 1));
    _mm_storel_epi64((__m128i *)out, _mm_packs_epi16(s, s));
  }
  if (unsure == 0) return;
  uint32_t a[16];
  _mm256_storeu_si256((__m256i *)a, c0);
  if (u == 2) _mm256_storeu_si256((__m256i *)(a + 8), c1);
  for (; unsure != 0; unsure &= unsure - 1) {
    const int j = __builtin_ctz((unsigned)unsure);
    out[j] = (int8_t)requant_exact(rq, j, a[j]);
  }
}

AVX2 static inline __attribute__((always_inline)) void
avx_bcast(const AvxBcast *k, int u, ptrdiff_t s, const int8_t *const *row,
          int32_t io, const Requant *rq, uint32_t *a, int8_t *const *out) {
  const __m128i iov = _mm_set1_epi16((int16_t)io);
  const __m256i b0 = _mm256_loadu_si256((const __m256i *)rq->bias);
  const __m256i b1 = _mm256_loadu_si256((const __m256i *)(rq->bias + 8));
  __m256i a00 = b0, a10 = b0, a20 = b0, a30 = b0;
  __m256i a01 = b1, a11 = b1, a21 = b1, a31 = b1;
  const int16_t *w = k->w + k->cur;
  const int32_t full = k->run / 2;
  for (int32_t r = 0; r < k->rows; r++, row += 4) {
    const int8_t *e0 = row[0], *e1 = row[1], *e2 = row[2], *e3 = row[3];
    int32_t i = 0;
    if (s == 1) /* four pairs a load: eight bytes widened at once */
      for (; i + 4 <= full; i += 4) {
        const __m128i x0 = avx_widen8(e0, iov), x1 = avx_widen8(e1, iov);
        const __m128i x2 = avx_widen8(e2, iov), x3 = avx_widen8(e3, iov);
        AVX_QUAD(0x00);
        AVX_QUAD(0x55);
        AVX_QUAD(0xaa);
        AVX_QUAD(0xff);
        e0 += 8, e1 += 8, e2 += 8, e3 += 8;
      }
    for (; i < full; i++) {
      AVX_STEP(0);
      e0 += 2 * s, e1 += 2 * s, e2 += 2 * s, e3 += 2 * s;
    }
    if (k->run % 2) AVX_STEP(1);
  }
  if (out) {
    avx_requant_store(rq, u, a00, a01, out[0]);
    avx_requant_store(rq, u, a10, a11, out[1]);
    avx_requant_store(rq, u, a20, a21, out[2]);
    avx_requant_store(rq, u, a30, a31, out[3]);
    return;
  }
  const int n = 8 * u;
  _mm256_storeu_si256((__m256i *)a, a00);
  _mm256_storeu_si256((__m256i *)(a + n), a10);
  _mm256_storeu_si256((__m256i *)(a + 2 * n), a20);
  _mm256_storeu_si256((__m256i *)(a + 3 * n), a30);
  if (u == 2) {
    _mm256_storeu_si256((__m256i *)(a + 8), a01);
    _mm256_storeu_si256((__m256i *)(a + 24), a11);
    _mm256_storeu_si256((__m256i *)(a + 40), a21);
    _mm256_storeu_si256((__m256i *)(a + 56), a31);
  }
}
#undef AVX_STEP
#undef AVX_QUAD

/*
 * The AVX2 form of DW for blocks of 16 channels: dw_pixels with the
 * sixteen channels of a pair of taps in two registers of eight int16
 * pairs (DwWin's widened weights, read 32 bytes at a time: its four SSE
 * vectors are channels 0-3, 4-7, 8-11 and 12-15 in that order), the
 * inputs interleaved with vpunpcklbw/vpunpckhbw and widened with
 * vpmovsxbw, and the requantization in registers (avx_requant_store).
 */
AVX2 static inline __m256i avx_zip_lo(const int8_t *a, const int8_t *b) {
  return _mm256_cvtepi8_epi16(
      _mm_unpacklo_epi8(_mm_loadu_si128((const __m128i *)a),
                        _mm_loadu_si128((const __m128i *)b)));
}
AVX2 static inline __m256i avx_zip_hi(const int8_t *a, const int8_t *b) {
  return _mm256_cvtepi8_epi16(
      _mm_unpackhi_epi8(_mm_loadu_si128((const __m128i *)a),
                        _mm_loadu_si128((const __m128i *)b)));
}

AVX2 static inline __attribute__((always_inline)) void
avx_dw(const DwWin *d, const Win *wn, int npx, int full, const int8_t *x,
       ptrdiff_t o, ptrdiff_t xp, const Requant *rq, int8_t *out,
       ptrdiff_t os2) {
  __m256i c0 = _mm256_loadu_si256((const __m256i *)&d->corr[0]);
  __m256i c1 = _mm256_loadu_si256((const __m256i *)&d->corr[2]);
  __m256i a0 = c0, a1 = c1, b0 = c0, b1 = c1;
  for (int32_t i = 0; i < d->pairs; i++) {
    const int32_t t = 2 * i;
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)&d->w[i][0]);
    const __m256i w1 = _mm256_loadu_si256((const __m256i *)&d->w[i][2]);
    const int8_t *p0 = dw_tap(d, wn, wn->kx0, wn->kx1, full, t, x, o);
    const int8_t *p1 = dw_tap(d, wn, wn->kx0, wn->kx1, full, t + 1, x, o);
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(w0, avx_zip_lo(p0, p1)));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(w1, avx_zip_hi(p0, p1)));
    if (npx == 2) {
      const int8_t *q0 =
          dw_tap(d, wn, wn->nx0, wn->nx1, full, t, x, o + xp);
      const int8_t *q1 =
          dw_tap(d, wn, wn->nx0, wn->nx1, full, t + 1, x, o + xp);
      b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(w0, avx_zip_lo(q0, q1)));
      b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(w1, avx_zip_hi(q0, q1)));
    }
  }
  avx_requant_store(rq, 2, a0, a1, out);
  if (npx == 2) avx_requant_store(rq, 2, b0, b1, out + os2);
}

AVX2 void tn__crt_conv_dw_avx2(const DwWin *d, const Win *wn, int npx,
                               int full, const int8_t *x, ptrdiff_t o,
                               ptrdiff_t xp, const Requant *rq, int8_t *out,
                               ptrdiff_t os2) {
  switch ((npx == 2) * 2 + full) {
    case 0: avx_dw(d, wn, 1, 0, x, o, xp, rq, out, os2); return;
    case 1: avx_dw(d, wn, 1, 1, x, o, xp, rq, out, os2); return;
    case 2: avx_dw(d, wn, 2, 0, x, o, xp, rq, out, os2); return;
    default: avx_dw(d, wn, 2, 1, x, o, xp, rq, out, os2); return;
  }
}

/*
 * The AVX-512 VNNI form of BCAST for blocks of 16 channels (or 8, lanes 8
 * to 15 computed on zero weights and never stored): one register
 * of 16 int32 a pixel, four pixels. Per group of four inputs of a row,
 * each pixel's four bytes are broadcast as the unsigned x ^ 0x80 = x + 128
 * and vpdpbusd adds their four products with each channel's four packed
 * weights; the accumulators start from bias + (io - 128) * sum(w), so
 * they end at bias + sum((x + io) * w), mod 2^32 as the portable sums:
 * vpdpbusd wraps (vpdpbusds, which saturates, would not). Rows of -io
 * (outside the input) become -io + 128 and, with the correction, add 0
 * as in the AVX2 form. Requantized as the AVX2 form does, in two halves.
 */
#define VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
/* The lanes of a block of 8 * u channels (the rest: zero weights) */
#define VNNI_LANES(u) ((__mmask16)((u) == 2 ? 0xffff : 0xff))

/* Four inputs at e, s apart, as x + 128 in every lane: the first n
 * (1 to 4), the rest 0 (their weights are 0). */
VNNI static inline __m512i vnni_quad(const int8_t *e, ptrdiff_t s, int n) {
  uint32_t v;
  if (s == 1 && n == 4) {
    int32_t m;
    memcpy(&m, e, 4);
    return _mm512_xor_si512(_mm512_set1_epi32(m),
                            _mm512_set1_epi32((int32_t)0x80808080u));
  } else {
    v = 0;
    for (int t = 0; t < n; t++) v |= (uint32_t)(uint8_t)e[t * s] << (8 * t);
  }
  return _mm512_set1_epi32((int32_t)(v ^ (0x80808080u & (0xffffffffu >>
                                                          (32 - 8 * n)))));
}

VNNI static inline __attribute__((always_inline)) void
vnni_bcast(const AvxBcast *k, ptrdiff_t s, const int8_t *const *row,
           const Requant *rq, uint32_t *a, int8_t *const *out) {
  const int8_t *w = (const int8_t *)(k->w + k->cur);
  const int32_t groups = (k->run + 3) / 4, full = k->run / 4;
  const int tail = k->run % 4;
  const __m512i b = _mm512_add_epi32(
      _mm512_maskz_loadu_epi32(VNNI_LANES(k->u), rq->bias),
      _mm512_loadu_si512(w + (ptrdiff_t)k->rows * groups * 64));
  __m512i a0 = b, a1 = b, a2 = b, a3 = b;
  for (int32_t r = 0; r < k->rows; r++, row += 4) {
    const int8_t *e0 = row[0], *e1 = row[1], *e2 = row[2], *e3 = row[3];
    for (int32_t g = 0; g < full; g++, w += 64) {
      const __m512i wv = _mm512_loadu_si512(w);
      a0 = _mm512_dpbusd_epi32(a0, vnni_quad(e0, s, 4), wv);
      a1 = _mm512_dpbusd_epi32(a1, vnni_quad(e1, s, 4), wv);
      a2 = _mm512_dpbusd_epi32(a2, vnni_quad(e2, s, 4), wv);
      a3 = _mm512_dpbusd_epi32(a3, vnni_quad(e3, s, 4), wv);
      e0 += 4 * s, e1 += 4 * s, e2 += 4 * s, e3 += 4 * s;
    }
    if (tail) {
      const __m512i wv = _mm512_loadu_si512(w);
      a0 = _mm512_dpbusd_epi32(a0, vnni_quad(e0, s, tail), wv);
      a1 = _mm512_dpbusd_epi32(a1, vnni_quad(e1, s, tail), wv);
      a2 = _mm512_dpbusd_epi32(a2, vnni_quad(e2, s, tail), wv);
      a3 = _mm512_dpbusd_epi32(a3, vnni_quad(e3, s, tail), wv);
      w += 64;
    }
  }
  const int u = k->u; /* lanes 8 to 15 of a block of 8 are not its own */
  if (out) {
    avx_requant_store(rq, u, _mm512_castsi512_si256(a0),
                      _mm512_extracti64x4_epi64(a0, 1), out[0]);
    avx_requant_store(rq, u, _mm512_castsi512_si256(a1),
                      _mm512_extracti64x4_epi64(a1, 1), out[1]);
    avx_requant_store(rq, u, _mm512_castsi512_si256(a2),
                      _mm512_extracti64x4_epi64(a2, 1), out[2]);
    avx_requant_store(rq, u, _mm512_castsi512_si256(a3),
                      _mm512_extracti64x4_epi64(a3, 1), out[3]);
    return;
  }
  _mm512_mask_storeu_epi32(a, VNNI_LANES(u), a0);
  _mm512_mask_storeu_epi32(a + 8 * u, VNNI_LANES(u), a1);
  _mm512_mask_storeu_epi32(a + 16 * u, VNNI_LANES(u), a2);
  _mm512_mask_storeu_epi32(a + 24 * u, VNNI_LANES(u), a3);
}

VNNI static void vnni_bcast_any(const AvxBcast *k, ptrdiff_t s,
                                const int8_t *const *row, const Requant *rq,
                                uint32_t *restrict a, int8_t *const *out) {
  if (s == 1)
    vnni_bcast(k, 1, row, rq, a, out);
  else
    vnni_bcast(k, s, row, rq, a, out);
}

/*
 * The VNNI row form: a run of neighbouring output pixels of one row whose
 * windows lie wholly inside the input, the inputs channels-last. Pixel i
 * of a tile reads its rows at x + i * xp + xo[r]: no table of row
 * pointers to fill per tile, and tiles of 12 and 8 pixels (as many
 * accumulators, so that each 64-byte weight vector serves twelve
 * vpdpbusd and the chains of dependent vpdpbusd are twelve apart; the
 * four-pixel form has four), then 4 at the end of a run; a run that is
 * not a multiple of 4 ends with a tile that overlaps the one before it
 * (the same values written twice), and runs of fewer than 4 take single
 * pixels (conv_s8.c gives this form runs of a multiple of 4). Requantized
 * in zmm registers, sixteen lanes at once, with requant_sse's operations
 * lane by lane (the same bytes as the AVX2 form's two halves).
 */
typedef struct {
  __m512i magic_off; /* the layer's constants, broadcast */
  __m512 lo, hi;
} VnniRq;
/* rq's broadcast constants, for a tile's stores to take in registers:
 * read through rq after a store of the tile's int8 outputs (which may
 * alias rq for all the compiler knows), they were loaded, converted and
 * broadcast again for every pixel, three more operations on the ports
 * of the vpdpbusd. */
VNNI static inline __attribute__((always_inline)) VnniRq
vnni_rq(const Requant *rq) {
  VnniRq k;
  k.magic_off = _mm512_set1_epi32((int32_t)(0x4b400000u - (uint32_t)rq->off));
  k.lo = _mm512_set1_ps((float)(rq->lo - rq->off));
  k.hi = _mm512_set1_ps((float)(rq->hi - rq->off));
  return k;
}
VNNI static inline __attribute__((always_inline)) void
vnni_requant_store(const Requant *rq, const VnniRq *k, int u, __m512i x,
                   int8_t *out) {
  const __mmask16 lanes = VNNI_LANES(u);
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512i magic_off = k->magic_off;
  const __m512 lo = k->lo, hi = k->hi;
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x),
                           _mm512_maskz_loadu_ps(lanes, rq->scale));
  y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
  const __m512 t = _mm512_add_ps(y, magic);
  const __m512i q = _mm512_sub_epi32(_mm512_castps_si512(t), magic_off);
  const __m512i d = _mm512_and_si512(
      _mm512_castps_si512(_mm512_sub_ps(y, _mm512_sub_ps(t, magic))),
      _mm512_set1_epi32(INT32_MAX));
  uint32_t unsure = _mm512_mask_cmp_ps_mask(
      lanes, _mm512_castsi512_ps(d), _mm512_maskz_loadu_ps(lanes, rq->tol),
      _CMP_GT_OQ);
  /* q lies in [lo, hi] (rq->fast): the saturating narrowing only narrows */
  _mm_mask_storeu_epi8(out, lanes, _mm512_cvtsepi32_epi8(q));
  if (unsure == 0) return;
  uint32_t a[16];
  _mm512_storeu_si512(a, x);
  for (; unsure != 0; unsure &= unsure - 1) {
    const int j = __builtin_ctz(unsure);
    out[j] = (int8_t)requant_exact(rq, j, a[j]);
  }
}

/* acc + vpdpbusd(u, s) in acc's own register: with the builtin, gcc 12
 * copies each of eight accumulators to another register and back at
 * every turn of the loop (sixteen moves for eight vpdpbusd). */
VNNI static inline __m512i vnni_dp(__m512i acc, __m512i u, __m512i s) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "vm"(s));
  return acc;
}

/* Four inputs at e as vpdpbusd's unsigned operand: x ^ 0x80, the first
 * n (vnni_quad); or, where the copy holds them so already (pre), the four
 * bytes as they are (past a run's last input, bytes whose weights are
 * 0). */
VNNI static inline __m512i row_quad(const int8_t *e, int n, int pre) {
  if (pre) {
    int32_t m;
    memcpy(&m, e, 4);
    return _mm512_set1_epi32(m);
  }
  return vnni_quad(e, 1, n);
}
/* Pixel i's four inputs against the weights: block 0's accumulator
 * c<i>, and with nb == 2 block 1's d<i> from the same broadcast. */
#define ROW_DP(i, cv, dv, q)                                             \
  do {                                                                   \
    if (np > (i)) {                                                      \
      const __m512i e_ = row_quad(e + (i) * xp, q, pre);                 \
      cv = vnni_dp(cv, e_, wv);                                          \
      if (nb == 2) dv = vnni_dp(dv, e_, wv1);                            \
    }                                                                    \
  } while (0)
#define ROW_ALL(q)                                                       \
  do {                                                                   \
    ROW_DP(0, c0, d0, q); ROW_DP(1, c1, d1, q); ROW_DP(2, c2, d2, q);    \
    ROW_DP(3, c3, d3, q); ROW_DP(4, c4, d4, q); ROW_DP(5, c5, d5, q);    \
    ROW_DP(6, c6, d6, q); ROW_DP(7, c7, d7, q); ROW_DP(8, c8, d8, q);    \
    ROW_DP(9, c9, d9, q); ROW_DP(10, c10, d10, q);                       \
    ROW_DP(11, c11, d11, q);                                             \
  } while (0)
#define ROW_STORE(i, cv, dv)                                             \
  do {                                                                   \
    if (np > (i)) {                                                      \
      vnni_requant_store(rq[0], &rk, u, cv, out + (i) * os);             \
      if (nb == 2)                                                       \
        vnni_requant_store(rq[1], &rk, 2, dv, out + (i) * os + 16);      \
    }                                                                    \
  } while (0)

/* A group's weights: 64 bytes (16 channels), or gs == 32 the 8 of a
 * block of 8 packed at compile time (tn_crt_dense_s8_pack's last block),
 * lanes 8 to 15 zero. */
VNNI static inline __m512i vnni_wload(const int8_t *w, int gs) {
  return gs == 64 ? _mm512_loadu_si512(w)
                  : _mm512_zextsi256_si512(
                        _mm256_loadu_si256((const __m256i *)w));
}

/* A tile of np pixels by one block (nb == 1, of 8 * u channels, weights
 * at w0) or two of 16 (nb == 2, weights at w0 and w1, the second's
 * outputs 16 channels on): each broadcast of a pixel's four inputs
 * serves both blocks' vpdpbusd, each weight vector the np pixels. */
VNNI static inline __attribute__((always_inline)) void
vnni_row_tile(const int8_t *w0, const int8_t *w1, int nb, int32_t run,
              const ptrdiff_t *xo, int pre, int u, int gs, int np,
              int32_t rows,
              const int8_t *x, ptrdiff_t xp, __m512i b, __m512i b1,
              const Requant *const *rq, int8_t *out, ptrdiff_t os) {
  const int8_t *w = w0;
  const ptrdiff_t dw = w1 - w0; /* block 1's weights, this far on */
  const int32_t full = run / 4;
  const int tail = run % 4;
  __m512i c0 = b, c1 = b, c2 = b, c3 = b, c4 = b, c5 = b, c6 = b, c7 = b;
  __m512i c8 = b, c9 = b, c10 = b, c11 = b;
  __m512i d0 = b1, d1 = b1, d2 = b1, d3 = b1, d4 = b1, d5 = b1, d6 = b1;
  __m512i d7 = b1, d8 = b1, d9 = b1, d10 = b1, d11 = b1;
  for (int32_t r = 0; r < rows; r++) {
    const int8_t *e = x + xo[r];
    for (int32_t g = 0; g < full; g++, w += gs, e += 4) {
      const __m512i wv = vnni_wload(w, gs);
      const __m512i wv1 = nb == 2 ? _mm512_loadu_si512(w + dw) : wv;
      ROW_ALL(4);
    }
    if (tail) {
      const __m512i wv = vnni_wload(w, gs);
      const __m512i wv1 = nb == 2 ? _mm512_loadu_si512(w + dw) : wv;
      ROW_ALL(tail);
      w += gs;
    }
  }
  /* (both blocks are the layer's: one offset and range) */
  const VnniRq rk = vnni_rq(rq[0]);
  ROW_STORE(0, c0, d0); ROW_STORE(1, c1, d1); ROW_STORE(2, c2, d2);
  ROW_STORE(3, c3, d3); ROW_STORE(4, c4, d4); ROW_STORE(5, c5, d5);
  ROW_STORE(6, c6, d6); ROW_STORE(7, c7, d7); ROW_STORE(8, c8, d8);
  ROW_STORE(9, c9, d9); ROW_STORE(10, c10, d10); ROW_STORE(11, c11, d11);
}
#undef ROW_STORE
#undef ROW_ALL
#undef ROW_DP

/* The tiles over a run of npx pixels: of 12 and 8 pixels for one block,
 * of 8 (16 accumulators) for two, then 4 (see above). */
VNNI static inline __attribute__((always_inline)) void
vnni_row_run(const int8_t *w0, const int8_t *w1, int nb, int32_t run,
             int32_t krows, const ptrdiff_t *xo, int pre, int u,
             const int8_t *x, ptrdiff_t xp, int32_t npx,
             const Requant *const *rq, int8_t *out, ptrdiff_t os,
             int folded, int gs) {
  const ptrdiff_t corr = (ptrdiff_t)krows * ((run + 3) / 4) * 64;
  /* the accumulators start from bias + (io - 128) * sum(w): the packed
   * block's correction after its rows, or (folded) the bias holds it */
  const __m512i zero = _mm512_setzero_si512();
  const __m512i b = _mm512_add_epi32(
      _mm512_maskz_loadu_epi32(VNNI_LANES(u), rq[0]->bias),
      folded ? zero : _mm512_loadu_si512(w0 + corr));
  const __m512i b1 =
      nb == 2 ? _mm512_add_epi32(_mm512_loadu_si512(rq[1]->bias),
                                 folded ? zero : _mm512_loadu_si512(w1 + corr))
              : b;
  /* (how == 3 leaves out each window's last row: a broken form for the
   * tests) */
  const int32_t rows =
      krows - (__atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 3);
#define TILE(np, i)                                                     \
  vnni_row_tile(w0, w1, nb, run, xo, pre, u, gs, np, rows, x + (i) * xp, xp, \
                b, b1, rq, out + (i) * os, os)
  int32_t i = 0;
  if (npx >= 8) {
    if (nb == 1)
      for (; i + 12 <= npx; i += 12) TILE(12, i);
    for (; i + 8 <= npx; i += 8) TILE(8, i);
    if (i + 4 <= npx) {
      TILE(4, i);
      i += 4;
    }
    if (i < npx) TILE(4, npx - 4); /* the last 4, some of them again */
    return;
  }
  if (npx >= 4) {
    TILE(4, 0);
    if (npx > 4) TILE(4, npx - 4);
    return;
  }
  for (; i < npx; i++) TILE(1, i);
#undef TILE
}

VNNI void tn__crt_conv_vnni_row(const AvxBcast *k, const ptrdiff_t *xo,
                                int pre, const int8_t *x, ptrdiff_t xp,
                                int32_t npx, const Requant *rq, int8_t *out,
                                ptrdiff_t os) {
  const int8_t *w = (const int8_t *)(k->w + k->cur);
  const Requant *const r1[1] = {rq};
  if (pre && k->u == 2)
    vnni_row_run(w, w, 1, k->run, k->rows, xo, 1, 2, x, xp, npx, r1, out, os,
                 0, 64);
  else if (pre)
    vnni_row_run(w, w, 1, k->run, k->rows, xo, 1, 1, x, xp, npx, r1, out, os,
                 0, 64);
  else if (k->u == 2)
    vnni_row_run(w, w, 1, k->run, k->rows, xo, 0, 2, x, xp, npx, r1, out, os,
                 0, 64);
  else
    vnni_row_run(w, w, 1, k->run, k->rows, xo, 0, 1, x, xp, npx, r1, out, os,
                 0, 64);
}

VNNI void tn__crt_conv_vnni_row2(const AvxBcast *k, const int32_t *off,
                                 const ptrdiff_t *xo, const int8_t *x,
                                 ptrdiff_t xp, int32_t npx,
                                 const Requant *const *rq, int8_t *out,
                                 ptrdiff_t os) {
  vnni_row_run((const int8_t *)(k->w + off[0]),
               (const int8_t *)(k->w + off[1]), 2, k->run, k->rows, xo, 1, 2,
               x, xp, npx, rq, out, os, 0, 64);
}

VNNI void tn__crt_conv_vnni_row_packed(const AvxBcast *k, const int8_t *w,
                                       int nb, const int8_t *x, ptrdiff_t xp,
                                       int32_t npx, const Requant *const *rq,
                                       int8_t *out, ptrdiff_t os) {
  /* block 1's weights follow block 0's: 16 channels of the whole window */
  const int broken = __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 7;
  const int8_t *w1 = w + (ptrdiff_t)16 * k->rows * k->run - (broken ? 64 : 0);
  if (nb == 2)
    vnni_row_run(w, w1, 2, k->run, k->rows, k->po, 1, 2, x, xp, npx, rq, out,
                 os, 1, 64);
  else if (nb == 1)
    vnni_row_run(w, w, 1, k->run, k->rows, k->po, 1, 2, x, xp, npx, rq, out,
                 os, 1, 64);
  else /* a last block of 8 channels (broken: one group early) */
    vnni_row_run(w - (broken ? 32 : 0), w, 1, k->run, k->rows, k->po, 1, 1, x,
                 xp, npx, rq, out, os, 1, 32);
}

/* dst[i] = src[i] ^ 0x80 for i < n, 64 bytes at a time (the VNNI forms'
 * copies of their input as vpdpbusd's unsigned operand) */
VNNI static inline void xor80(uint8_t *dst, const uint8_t *src, int64_t n) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(dst + i,
                        _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
  if (i < n) {
    const __mmask64 m = ~(__mmask64)0 >> (64 - (n - i));
    _mm512_mask_storeu_epi8(
        dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), flip));
  }
}

/* (16 bytes at a time, the portable vectors' width, it was a twentieth
 * of IC's 3x3 layers' time; with fault 6 the last byte is left as it
 * is, a broken form for the tests) */
VNNI void tn__crt_conv_xor80(uint8_t *dst, const uint8_t *src, int64_t n) {
  if (__atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 6 && n > 0) {
    n--;
    dst[n] = src[n];
  }
  xor80(dst, src, n);
}

/* Sixteen lanes of requant_sse (vnni_requant_store's operations) on the
 * constants of a block given in registers, stored at out: a bit per
 * doubtful lane, for requant_exact. */
VNNI static inline __attribute__((always_inline)) uint32_t
gemm_requant(__m512i x, __m512 scale, __m512 tol, __m512 lo, __m512 hi,
             __m512i magic_off, int8_t *out) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), scale);
  y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
  const __m512 t = _mm512_add_ps(y, magic);
  const __m512i q = _mm512_sub_epi32(_mm512_castps_si512(t), magic_off);
  const __m512 d = _mm512_abs_ps(_mm512_sub_ps(y, _mm512_sub_ps(t, magic)));
  /* q lies in [lo, hi] (rq->fast): the saturating narrowing only narrows */
  _mm_storeu_si128((__m128i *)out, _mm512_cvtsepi32_epi8(q));
  return _mm512_cmp_ps_mask(d, tol, _CMP_GT_OQ);
}

/*
 * The 1x1 GEMM form (conv_s8.h), VNNI: npx pixels xs apart, each a
 * contiguous run of K input channels, times nb (1, 2 or 4) VNNI-packed
 * blocks of 16 channels, block b's groups of 64 bytes at w[b]. Tiles of
 * np pixels by 16 * nb channels (8 by 16 or 32, 4 by 64), np * nb <= 16
 * accumulators in zmm registers: each group of four input bytes of a
 * pixel is broadcast once for nb vpdpbusd, and each 64-byte weight vector
 * serves the tile's pixels. Four pixels by 64 channels (KWS's and the
 * wake word's layers of 64 and 128) broadcast each pixel's group for four
 * vpdpbusd where eight by 32 did for two: half the broadcasts for the
 * same products. pre: x holds x ^ 0x80 already (gemm_packed's copy), so
 * that a broadcast is a load alone; else each is XORed (vnni_quad), a
 * vector operation beside every nb vpdpbusd on the ports they share
 * (0.80x the products' rate at 8 by 32). No row pointers: pixel i of a
 * tile is x + i * xs. The products by vnni_dp (with the builtin, gcc 12
 * moved the sixteen accumulators between registers and the stack at
 * every group of inputs: a third of the form's time in perf at KWS's
 * tile of 8 pixels by 32 channels). Requantized sixteen lanes at once in
 * zmm (gemm_requant, one vpmovsdb a block of a pixel), where two halves
 * of eight lanes, each packed and permuted, took as long as the products
 * at KWS's 64 inputs; a pixel's doubtful lanes of all blocks redone in
 * one pass (how == 5 skips it: a broken form for the tests).
 */
VNNI static inline __attribute__((always_inline)) void
gemm_tile(const int8_t *const *w, int nb, int np, int pre, int32_t full,
          int tail, const int8_t *x, ptrdiff_t xs, const __m512i *bias,
          const Requant *const *rq, int8_t *out, ptrdiff_t os) {
  __m512i c[16];
#pragma GCC unroll 16
  for (int j = 0; j < np * nb; j++) c[j] = bias[j % nb];
  for (int32_t g = 0; g < full; g++, x += 4) {
    __m512i v[4];
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++)
      v[b] = _mm512_loadu_si512(w[b] + (ptrdiff_t)g * 64);
#pragma GCC unroll 8
    for (int i = 0; i < np; i++) {
      const __m512i e = row_quad(x + i * xs, 4, pre);
#pragma GCC unroll 4
      for (int b = 0; b < nb; b++) c[i * nb + b] = vnni_dp(c[i * nb + b], e, v[b]);
    }
  }
  if (tail) {
#pragma GCC unroll 8
    for (int i = 0; i < np; i++) {
      const __m512i e = vnni_quad(x + i * xs, 1, tail);
#pragma GCC unroll 4
      for (int b = 0; b < nb; b++)
        c[i * nb + b] = _mm512_dpbusd_epi32(
            c[i * nb + b], e, _mm512_loadu_si512(w[b] + (ptrdiff_t)full * 64));
    }
  }
  /* the blocks' constants once a tile, in registers (the tile's int8
   * stores may alias them for all the compiler knows: read through rq,
   * they were loaded again for every pixel) */
  const __m512i magic_off =
      _mm512_set1_epi32((int32_t)(0x4b400000u - (uint32_t)rq[0]->off));
  const __m512 lo = _mm512_set1_ps((float)(rq[0]->lo - rq[0]->off));
  const __m512 hi = _mm512_set1_ps((float)(rq[0]->hi - rq[0]->off));
  __m512 sc[4], tl[4];
#pragma GCC unroll 4
  for (int b = 0; b < nb; b++)
    sc[b] = _mm512_loadu_ps(rq[b]->scale), tl[b] = _mm512_loadu_ps(rq[b]->tol);
#pragma GCC unroll 8
  for (int i = 0; i < np; i++) {
    int8_t *o = out + i * os;
    uint64_t u = 0;
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++)
      u |= (uint64_t)gemm_requant(c[i * nb + b], sc[b], tl[b], lo, hi,
                                  magic_off, o + 16 * b)
           << (16 * b);
    if (__builtin_expect(u != 0, 0) &&
        __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) != 5) {
      uint32_t a[64];
#pragma GCC unroll 4
      for (int b = 0; b < nb; b++) _mm512_storeu_si512(a + 16 * b, c[i * nb + b]);
      for (; u != 0; u &= u - 1) {
        const int j = __builtin_ctzll(u);
        o[j] = (int8_t)requant_exact(rq[j >> 4], j & 15, a[j]);
      }
    }
  }
}

/* The tiles over npx pixels, block b's weights at w[b] (each a run of
 * groups of 64 bytes), its accumulators starting from bias[b]. */
VNNI static inline __attribute__((always_inline)) void
gemm_rows(const int8_t *const *w, int nb, int pre, int32_t full, int tail,
          const __m512i *bias, const int8_t *x, ptrdiff_t xs, int32_t npx,
          const Requant *const *rq, int8_t *out, ptrdiff_t os) {
#define TILE(np)                                                          \
  gemm_tile(w, nb, np, pre, full, tail, x + i * xs, xs, bias, rq,         \
            out + i * os, os)
  int32_t i = 0;
  if (nb == 4) {
    for (; i + 4 <= npx; i += 4) TILE(4);
  } else {
    for (; i + 8 <= npx; i += 8) TILE(8);
    if (i + 4 <= npx) TILE(4), i += 4;
  }
  if (i + 2 <= npx) TILE(2), i += 2;
  if (i < npx) TILE(1);
#undef TILE
}

VNNI static void gemm_vnni(const AvxBcast *k, const int32_t *off, int nb,
                           const int8_t *x, ptrdiff_t xs, int32_t npx,
                           const Requant *const *rq, int8_t *out,
                           ptrdiff_t os) {
  const int8_t *const w[2] = {(const int8_t *)(k->w + off[0]),
                              (const int8_t *)(k->w + off[nb - 1])};
  const int32_t full = k->run / 4, groups = (k->run + 3) / 4;
  /* (how == 2 drops the tail: a broken form for the tests) */
  const int tail = __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 2
                       ? 0
                       : k->run % 4;
  /* the accumulators start from bias + (io - 128) * sum(w) */
  __m512i b[2];
  for (int i = 0; i < nb; i++)
    b[i] = _mm512_add_epi32(_mm512_loadu_si512(rq[i]->bias),
                            _mm512_loadu_si512(w[i] + groups * 64));
  if (nb == 2)
    gemm_rows(w, 2, 0, full, tail, b, x, xs, npx, rq, out, os);
  else
    gemm_rows(w, 1, 0, full, tail, b, x, xs, npx, rq, out, os);
}

/* gemm_rows for nb known at compile time (no tail: kk % 4 == 0). */
VNNI static void gemm_rows_packed(const int8_t *const *w, int nb, int pre,
                                  int32_t full, const __m512i *bias,
                                  const int8_t *x, ptrdiff_t xs, int32_t npx,
                                  const Requant *const *rq, int8_t *out,
                                  ptrdiff_t os) {
  if (nb == 4 && pre)
    gemm_rows(w, 4, 1, full, 0, bias, x, xs, npx, rq, out, os);
  else if (nb == 2 && pre)
    gemm_rows(w, 2, 1, full, 0, bias, x, xs, npx, rq, out, os);
  else if (pre)
    gemm_rows(w, 1, 1, full, 0, bias, x, xs, npx, rq, out, os);
  else if (nb == 4)
    gemm_rows(w, 4, 0, full, 0, bias, x, xs, npx, rq, out, os);
  else if (nb == 2)
    gemm_rows(w, 2, 0, full, 0, bias, x, xs, npx, rq, out, os);
  else
    gemm_rows(w, 1, 0, full, 0, bias, x, xs, npx, rq, out, os);
}

/* The GEMM form on a weight packed at compile time (conv_s8.h): its
 * blocks of 16 channels are the runs of groups gemm_tile reads, where
 * they lie, and the input offset is 128 already (the bias holds the
 * rest): the accumulators start from the bias alone. The pixels are
 * copied as x ^ 0x80 (vpdpbusd's unsigned operand) GEMM_XU bytes at a
 * time, on the stack, for tiles that broadcast them with no XOR. */
VNNI void tn__crt_conv_gemm_packed(const int8_t *w, int32_t kk, int nb,
                                   const int8_t *x, ptrdiff_t xs,
                                   int32_t npx, const Requant *const *rq,
                                   int8_t *out, ptrdiff_t os) {
  /* (how == 4 drops the last group: a broken form for the tests) */
  const int32_t full =
      kk / 4 - (__atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 4);
  const int8_t *wb[4];
  __m512i b[4];
  for (int i = 0; i < nb; i++)
    wb[i] = w + (ptrdiff_t)16 * i * kk, b[i] = _mm512_loadu_si512(rq[i]->bias);
  /* whole tiles of 8 pixels a chunk */
  const int32_t chunk = (GEMM_XU / kk) & ~7;
  if (xs != kk || chunk == 0) {
    gemm_rows_packed(wb, nb, 0, full, b, x, xs, npx, rq, out, os);
    return;
  }
  int8_t xu[GEMM_XU] __attribute__((aligned(64)));
  for (int32_t p0 = 0; p0 < npx; p0 += chunk) {
    const int32_t n = npx - p0 < chunk ? npx - p0 : chunk;
    const int8_t *const xp = x + (ptrdiff_t)p0 * kk;
    const int32_t bytes = n * kk;
    xor80((uint8_t *)xu, (const uint8_t *)xp, bytes);
    gemm_rows_packed(wb, nb, 1, full, b, xu, kk, n, rq,
                     out + (ptrdiff_t)p0 * os, os);
  }
}

/* The packed GEMM form with AVX2 (vpmaddwd on int16: exact, where
 * vpmaddubsw would saturate): tiles of three pixels by a block of 16
 * channels. A group's 64 bytes are four quarters of 4 channels by 4
 * inputs, each sign-extended to int16 once (vpmovsxbw) for the tile's
 * pixels; a pixel's 4 inputs + 128 (int16, copied so once a call into
 * xq, and broadcast to both 64-bit halves of each 128) times a quarter
 * gives each channel's two pair sums in lanes 2j and 2j + 1, which
 * accumulate apart and are added once at the end (vphaddd), as the packed
 * dense layer's AVX2 form does; then the bias, and the BCAST form's
 * requantization in registers. The twelve accumulators, the quarter and
 * a product fill 14 of the 16 ymm registers only if each pixel's
 * broadcast is loaded again for each quarter (a load, no ALU work): with
 * the broadcasts held in three registers as well, gcc 12 kept nine
 * accumulators on the stack, a load and a store each a group, and it
 * still did with the broadcasts reloaded (copying the accumulators to and
 * fro, as it did in the VNNI dense loop). So the broadcast, the product
 * and its sum are one asm, the accumulator a "+x" operand. */
AVX2 static inline __m256i bcast_madd(__m256i acc, const int16_t *p,
                                      __m256i q) {
  __m256i t;
  __asm__("vpbroadcastq %2, %1\n\t"
          "vpmaddwd %3, %1, %1\n\t"
          "vpaddd %1, %0, %0"
          : "+x"(acc), "=&x"(t)
          : "m"(*(const int64_t *)p), "x"(q));
  return acc;
}

AVX2 static inline __attribute__((always_inline)) void
packed_avx2_tile(const int8_t *w, int32_t full, int np, const int16_t *xq,
                 ptrdiff_t xs, ptrdiff_t x2, const Requant *rq, int8_t *out,
                 ptrdiff_t os) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  __m256i c0 = a0, c1 = a0, c2 = a0, c3 = a0;
#define W16(i) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + (i))))
#define MADD(acc, o, v) acc = bcast_madd(acc, xq + (o), v)
  /* quarter i of the group into the pixels' accumulators A, B and C */
#define QUARTER(i, A, B, C)        \
  do {                             \
    const __m256i q = W16(16 * i); \
    MADD(A, 0, q);                 \
    if (np > 1) MADD(B, xs, q);    \
    if (np > 2) MADD(C, x2, q);    \
  } while (0)
  for (int32_t g = 0; g < full; g++, w += 64, xq += 4) {
    QUARTER(0, a0, b0, c0);
    QUARTER(1, a1, b1, c1);
    QUARTER(2, a2, b2, c2);
    QUARTER(3, a3, b3, c3);
  }
#undef QUARTER
#undef W16
#undef MADD
  /* hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; the quarters (0, 2, 1, 3) */
#define PAIRS(p, q) _mm256_permute4x64_epi64(_mm256_hadd_epi32(p, q), 0xd8)
  const __m256i bl = _mm256_loadu_si256((const __m256i *)rq->bias);
  const __m256i bh = _mm256_loadu_si256((const __m256i *)(rq->bias + 8));
  avx_requant_store(rq, 2, _mm256_add_epi32(PAIRS(a0, a1), bl),
                    _mm256_add_epi32(PAIRS(a2, a3), bh), out);
  if (np > 1)
    avx_requant_store(rq, 2, _mm256_add_epi32(PAIRS(b0, b1), bl),
                      _mm256_add_epi32(PAIRS(b2, b3), bh), out + os);
  if (np > 2)
    avx_requant_store(rq, 2, _mm256_add_epi32(PAIRS(c0, c1), bl),
                      _mm256_add_epi32(PAIRS(c2, c3), bh), out + 2 * os);
#undef PAIRS
}

/* xq[i * kk + t] = x[i * kk + t] + 128 for the n pixels at x. */
AVX2 static void widen_inputs(const int8_t *x, int32_t kk, int32_t n,
                              int16_t *xq) {
  const size_t all = (size_t)kk * (size_t)n;
  size_t i = 0;
  for (; i + 16 <= all; i += 16)
    _mm256_storeu_si256(
        (__m256i *)(xq + i),
        _mm256_add_epi16(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + i))),
            _mm256_set1_epi16(128)));
  for (; i < all; i++) xq[i] = (int16_t)(x[i] + 128);
}

/* The packed GEMM form with AVX2 on rows of at most PAIRS_K inputs: each
 * block's weights turned once a call into int16 pairs (wq; per pair of
 * inputs, the channels' two weights, channel order), so that a pixel's
 * pair of inputs + 128 (one vpbroadcastd from xq) times a vector of 8
 * channels (a vpmaddwd from memory) adds both products into the channel's
 * own lane: no widening of the weights per tile and no vphaddd. Tiles of
 * 3 pixels by 32 channels (two blocks, 12 accumulators), a layer's odd
 * last block of 16 in tiles of 6 pixels; the accumulators start from the
 * bias. The broadcast, the product and its sum are asm, each accumulator
 * a "+x" operand (as bcast_madd, for gcc 12's register allocation). */
enum { PAIRS_K = PACKED_PAIRS_K }; /* inputs a row at most: wq is 16 KiB */

/* acc[0 .. nv) += vpmaddwd(the pair at p, w[0 .. nv)), nv 2 or 4 */
#define PAIRS_MADD2(a0, a1, p, w)                                          \
  do {                                                                     \
    __m256i v_, t_;                                                        \
    __asm__("vpbroadcastd %4, %2\n\t"                                      \
            "vpmaddwd %5, %2, %3\n\t"                                      \
            "vpaddd %3, %0, %0\n\t"                                        \
            "vpmaddwd %6, %2, %3\n\t"                                      \
            "vpaddd %3, %1, %1"                                            \
            : "+x"(a0), "+x"(a1), "=&x"(v_), "=&x"(t_)                     \
            : "m"(*(const int32_t *)(p)), "m"(*(const __m256i *)(w)),      \
              "m"(*(const __m256i *)((w) + 16)));                          \
  } while (0)
#define PAIRS_MADD4(a0, a1, a2, a3, p, w)                                  \
  do {                                                                     \
    __m256i v_, t_;                                                        \
    __asm__("vpbroadcastd %6, %4\n\t"                                      \
            "vpmaddwd %7, %4, %5\n\t"                                      \
            "vpaddd %5, %0, %0\n\t"                                        \
            "vpmaddwd %8, %4, %5\n\t"                                      \
            "vpaddd %5, %1, %1\n\t"                                        \
            "vpmaddwd %9, %4, %5\n\t"                                      \
            "vpaddd %5, %2, %2\n\t"                                        \
            "vpmaddwd %10, %4, %5\n\t"                                     \
            "vpaddd %5, %3, %3"                                            \
            : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "=&x"(v_), "=&x"(t_) \
            : "m"(*(const int32_t *)(p)), "m"(*(const __m256i *)(w)),      \
              "m"(*(const __m256i *)((w) + 16)),                           \
              "m"(*(const __m256i *)((w) + 32)),                           \
              "m"(*(const __m256i *)((w) + 48)));                          \
  } while (0)

/* nbk (1 or 2) blocks of 16 channels of the packed layout at w (kk
 * inputs, groups of four, channel j's four weights at 4j) into wq: per
 * pair of inputs, 16 * nbk int32 lanes, channel j's two weights in lane
 * j. (how == 9 swaps each group's two pairs: a broken form for the
 * tests.) */
AVX2 static void widen_pairs(const int8_t *w, int32_t kk, int nbk,
                             int16_t *wq) {
  const int swap = __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 9;
  const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const ptrdiff_t sp = 32 * nbk; /* int16 a pair */
  /* where a group's first and second pair go */
  const ptrdiff_t o0 = swap ? sp : 0, o1 = swap ? 0 : sp;
  for (int b = 0; b < nbk; b++) {
    const int8_t *wb = w + (ptrdiff_t)16 * b * kk;
    int16_t *d = wq + 32 * b;
    for (int32_t g = 0; g < kk / 4; g++, wb += 64, d += 2 * sp) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; h++) {
        /* channels 8h .. 8h + 3 and 8h + 4 .. 8h + 7: their two pairs */
        const __m256i a = _mm256_permutevar8x32_epi32(
            _mm256_cvtepi8_epi16(
                _mm_loadu_si128((const __m128i *)(wb + 32 * h))),
            idx);
        const __m256i c = _mm256_permutevar8x32_epi32(
            _mm256_cvtepi8_epi16(
                _mm_loadu_si128((const __m128i *)(wb + 32 * h + 16))),
            idx);
        const __m256i p0 = _mm256_permute2x128_si256(a, c, 0x20);
        const __m256i p1 = _mm256_permute2x128_si256(a, c, 0x31);
        _mm256_store_si256((__m256i *)(d + o0 + 16 * h), p0);
        _mm256_store_si256((__m256i *)(d + o1 + 16 * h), p1);
      }
    }
  }
}

/* np (1 to 3) pixels (xq, the next xs and x2 on) by 32 channels (wq: two
 * blocks, rq0 and rq1), full groups of four inputs. */
AVX2 static inline __attribute__((always_inline)) void
pairs_tile32(const int16_t *wq, int32_t full, int np, const int16_t *xq,
             ptrdiff_t xs, ptrdiff_t x2, const Requant *rq0,
             const Requant *rq1, int8_t *out, ptrdiff_t os) {
  __m256i a0 = _mm256_loadu_si256((const __m256i *)rq0->bias);
  __m256i a1 = _mm256_loadu_si256((const __m256i *)(rq0->bias + 8));
  __m256i a2 = _mm256_loadu_si256((const __m256i *)rq1->bias);
  __m256i a3 = _mm256_loadu_si256((const __m256i *)(rq1->bias + 8));
  __m256i b0 = a0, b1 = a1, b2 = a2, b3 = a3;
  __m256i c0 = a0, c1 = a1, c2 = a2, c3 = a3;
  for (int32_t g = 0; g < full; g++, wq += 128, xq += 4) {
    PAIRS_MADD4(a0, a1, a2, a3, xq, wq);
    if (np > 1) PAIRS_MADD4(b0, b1, b2, b3, xq + xs, wq);
    if (np > 2) PAIRS_MADD4(c0, c1, c2, c3, xq + x2, wq);
    PAIRS_MADD4(a0, a1, a2, a3, xq + 2, wq + 64);
    if (np > 1) PAIRS_MADD4(b0, b1, b2, b3, xq + xs + 2, wq + 64);
    if (np > 2) PAIRS_MADD4(c0, c1, c2, c3, xq + x2 + 2, wq + 64);
  }
  avx_requant_store(rq0, 2, a0, a1, out);
  avx_requant_store(rq1, 2, a2, a3, out + 16);
  if (np > 1) {
    avx_requant_store(rq0, 2, b0, b1, out + os);
    avx_requant_store(rq1, 2, b2, b3, out + os + 16);
  }
  if (np > 2) {
    avx_requant_store(rq0, 2, c0, c1, out + 2 * os);
    avx_requant_store(rq1, 2, c2, c3, out + 2 * os + 16);
  }
}

/* np (1 to 6) pixels (xq, xs apart; the third at x2) by 16 channels (wq:
 * one block, rq), full groups of four inputs. */
AVX2 static inline __attribute__((always_inline)) void
pairs_tile16(const int16_t *wq, int32_t full, int np, const int16_t *xq,
             ptrdiff_t xs, ptrdiff_t x2, const Requant *rq, int8_t *out,
             ptrdiff_t os) {
  const __m256i bl = _mm256_loadu_si256((const __m256i *)rq->bias);
  const __m256i bh = _mm256_loadu_si256((const __m256i *)(rq->bias + 8));
  __m256i c0[6], c1[6];
  const ptrdiff_t o[6] = {0, xs, x2, 3 * xs, 4 * xs, 5 * xs};
#pragma GCC unroll 6
  for (int i = 0; i < np; i++) c0[i] = bl, c1[i] = bh;
  for (int32_t g = 0; g < full; g++, wq += 64, xq += 4) {
#pragma GCC unroll 6
    for (int i = 0; i < np; i++) PAIRS_MADD2(c0[i], c1[i], xq + o[i], wq);
#pragma GCC unroll 6
    for (int i = 0; i < np; i++)
      PAIRS_MADD2(c0[i], c1[i], xq + o[i] + 2, wq + 32);
  }
#pragma GCC unroll 6
  for (int i = 0; i < np; i++)
    avx_requant_store(rq, 2, c0[i], c1[i], out + i * os);
}

/* tn__crt_conv_gemm_packed_avx2 for kk <= PAIRS_K (full groups; x2: the
 * third pixel's offset; xq: the caller's PACKED_XQ int16 for the inputs). */
AVX2 static void gemm_pairs_avx2(const int8_t *w, int32_t kk, int32_t full,
                                 ptrdiff_t x2, const int8_t *x, int32_t npx,
                                 const Requant *const *rq, int nb,
                                 int8_t *out, ptrdiff_t os, int16_t *xq) {
  int16_t wq[32 * PAIRS_K] __attribute__((aligned(32)));
  const int32_t chunk = PACKED_XQ / kk;
  /* the inputs widened once for all, before any output is written (in
   * place, x is out); how == 10 widens them again for each pair of
   * blocks, reading outputs in place: a broken form for the tests */
  const int once = npx <= chunk;
  const int again =
      __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED) == 10 && once;
  if (once) widen_inputs(x, kk, npx, xq);
  for (int b = 0; b < nb; b += 2) {
    const int two = nb - b >= 2;
    widen_pairs(w + (ptrdiff_t)16 * b * kk, kk, two ? 2 : 1, wq);
    if (again && b > 0) widen_inputs(x, kk, npx, xq);
    for (int32_t p0 = 0; p0 < npx; p0 += chunk) {
      const int32_t n = npx - p0 < chunk ? npx - p0 : chunk;
      if (!once) widen_inputs(x + (ptrdiff_t)p0 * kk, kk, n, xq);
      int8_t *ob = out + (ptrdiff_t)p0 * os + 16 * b;
      int32_t i = 0;
      if (two) {
        for (; i + 3 <= n; i += 3)
          pairs_tile32(wq, full, 3, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                       rq[b + 1], ob + i * os, os);
        if (n - i == 2)
          pairs_tile32(wq, full, 2, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                       rq[b + 1], ob + i * os, os);
        else if (n - i == 1)
          pairs_tile32(wq, full, 1, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                       rq[b + 1], ob + i * os, os);
        continue;
      }
      for (; i + 6 <= n; i += 6)
        pairs_tile16(wq, full, 6, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                     ob + i * os, os);
      const int16_t *xt = xq + (ptrdiff_t)i * kk;
      int8_t *ot = ob + i * os;
      switch (n - i) {
        case 5: pairs_tile16(wq, full, 5, xt, kk, x2, rq[b], ot, os); break;
        case 4: pairs_tile16(wq, full, 4, xt, kk, x2, rq[b], ot, os); break;
        case 3: pairs_tile16(wq, full, 3, xt, kk, x2, rq[b], ot, os); break;
        case 2: pairs_tile16(wq, full, 2, xt, kk, x2, rq[b], ot, os); break;
        case 1: pairs_tile16(wq, full, 1, xt, kk, x2, rq[b], ot, os); break;
        default: break;
      }
    }
  }
}

AVX2 void tn__crt_conv_gemm_packed_avx2(const int8_t *w, int32_t kk,
                                        const int8_t *x, int32_t npx,
                                        const Requant *const *rq, int nb,
                                        int8_t *out, ptrdiff_t os) {
  /* (how == 4 drops the last group: a broken form for the tests) */
  const int how = __atomic_load_n(&conv_vnni_fault, __ATOMIC_RELAXED);
  const int32_t full = kk / 4 - (how == 4);
  /* the third pixel's inputs (how == 6 reads the second's: a broken form
   * for the tests) */
  const ptrdiff_t x2 = how == 6 ? kk : 2 * (ptrdiff_t)kk;
  int16_t xq[PACKED_XQ];
  if (kk <= PAIRS_K) {
    gemm_pairs_avx2(w, kk, full, x2, x, npx, rq, nb, out, os, xq);
    return;
  }
  const int32_t chunk = PACKED_XQ / kk;
  for (int32_t p0 = 0; p0 < npx; p0 += chunk) {
    const int32_t n = npx - p0 < chunk ? npx - p0 : chunk;
    widen_inputs(x + (ptrdiff_t)p0 * kk, kk, n, xq);
    for (int b = 0; b < nb; b++) {
      const int8_t *wb = w + (ptrdiff_t)16 * b * kk;
      int8_t *ob = out + (ptrdiff_t)p0 * os + 16 * b;
      int32_t i = 0;
      for (; i + 3 <= n; i += 3)
        packed_avx2_tile(wb, full, 3, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                         ob + i * os, os);
      if (n - i == 2)
        packed_avx2_tile(wb, full, 2, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                         ob + i * os, os);
      else if (n - i == 1)
        packed_avx2_tile(wb, full, 1, xq + (ptrdiff_t)i * kk, kk, x2, rq[b],
                         ob + i * os, os);
    }
  }
}

/* The AVX2 form: the BCAST form's four-pixel tile of 16 channels on one
 * row of K inputs, with the pointers of the tile's pixels (the last one
 * repeated past npx) as its rows. */
AVX2 static void gemm_avx2(const AvxBcast *k, int32_t io, const int8_t *x,
                           ptrdiff_t xs, int32_t npx, const Requant *rq,
                           int8_t *out, ptrdiff_t os) {
  for (int32_t i = 0; i < npx; i += 4) {
    const int8_t *row[4];
    int8_t *o[4];
    for (int t = 0; t < 4; t++) {
      const int32_t j = i + t < npx ? i + t : npx - 1;
      row[t] = x + j * xs, o[t] = out + j * os;
    }
    avx_bcast(k, 2, 1, row, io, rq, NULL, o);
  }
}

void tn__crt_conv_gemm(AvxBcast *k, const Conv *c, const int32_t *off,
                       int nb, const int8_t *x, ptrdiff_t xs, int32_t npx,
                       const Requant *const *rq, int8_t *out,
                       ptrdiff_t os) {
  if (k->vnni) {
    gemm_vnni(k, off, nb, x, xs, npx, rq, out, os);
    return;
  }
  k->cur = off[0];
  gemm_avx2(k, c->io, x, xs, npx, rq[0], out, os);
}

int tn__crt_conv_gemm_pack(AvxBcast *k, const Conv *c, int32_t co0, int nb,
                           int32_t *off) {
  const TnCrtConv2d *p = c->p;
  const int vnni = tn__crt_avx512vnni();
  /* in int16, as tn__crt_conv_avx2_pack counts a block of 16 (a 1x1
   * layer: one row of cpg) */
  const int64_t rows = c->merge ? p->k_h : (int64_t)p->k_h * p->k_w;
  const int64_t run = c->merge ? (int64_t)p->k_w * c->cpg : c->cpg;
  const int64_t size = vnni ? rows * ((run + 3) / 4) * 32 + 32
                            : rows * ((run + 1) / 2) * 32;
  if ((nb == 2 && !vnni) || run > AVX_PAD || nb * size > AVX_PACK)
    return 0;
  /* room for every block of the tile, so that packing the second does
   * not start the cache over under the first */
  if (k->used + nb * size > AVX_PACK || k->blocks + nb > AVX_BLOCKS)
    tn__crt_conv_avx2_reset(k);
  for (int b = 0; b < nb; b++) {
    if (!tn__crt_conv_avx2_pack(k, c, co0 + 16 * b, 2) || k->vnni != vnni)
      return 0;
    off[b] = k->cur;
  }
  return 1;
}

AVX2 static void avx_bcast_any(const AvxBcast *k, const Conv *c,
                               const int8_t *const *row, const Requant *rq,
                               uint32_t *restrict a, int8_t *const *out) {
  const ptrdiff_t s = c->p->in_strides[3];
  if (!rq->fast) out = NULL;
  if (k->vnni) {
    vnni_bcast_any(k, s, row, rq, a, out);
    return;
  }
  if (k->u == 2 && s == 1)
    avx_bcast(k, 2, 1, row, c->io, rq, a, out);
  else if (k->u == 2)
    avx_bcast(k, 2, s, row, c->io, rq, a, out);
  else if (s == 1)
    avx_bcast(k, 1, 1, row, c->io, rq, a, out);
  else
    avx_bcast(k, 1, s, row, c->io, rq, a, out);
}

void tn__crt_conv_avx2_pixels(AvxBcast *k, const Conv *c, const int8_t *x,
                              int32_t iy0, int32_t ky0, int32_t ky1,
                              const int32_t *px, const Requant *rq,
                              uint32_t *restrict a, int8_t *const *out) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is2 = p->in_strides[2];
  const int8_t *row[4 * AVX_ROWS];
  int8_t *tmp = k->tmp;
  /* The usual case: four neighbours with whole windows, each row four
   * steps of the stride apart. */
  const int32_t first = px[0] * p->stride_w - p->pad_left;
  const int64_t right = (int64_t)(px[0] + 3) * p->stride_w - p->pad_left +
                        (int64_t)(p->k_w - 1) * p->dilation_w;
  if (px[3] == px[0] + 3 && first >= 0 && right < p->in_w && ky0 == 0 &&
      ky1 == p->k_h) {
    const ptrdiff_t xp = (ptrdiff_t)p->stride_w * is2;
    const int8_t *x0 = x + (ptrdiff_t)iy0 * p->in_strides[1] +
                       (ptrdiff_t)first * is2;
    for (int32_t r = 0; r < k->rows; r++) {
      const int8_t *e = x0 + k->xo[r];
      row[4 * r] = e, row[4 * r + 1] = e + xp;
      row[4 * r + 2] = e + 2 * xp, row[4 * r + 3] = e + 3 * xp;
    }
    avx_bcast_any(k, c, row, rq, a, out);
    return;
  }
  for (int i = 0; i < 4; i++) {
    const int32_t ix0 = px[i] * p->stride_w - p->pad_left;
    int32_t kx0, kx1;
    taps(ix0, p->k_w, p->dilation_w, p->in_w, &kx0, &kx1);
    const int whole = kx0 == 0 && kx1 == p->k_w;
    for (int32_t r = 0; r < k->rows; r++) {
      const int32_t ky = k->ky[r];
      const int32_t kx = c->merge ? 0 : r % p->k_w;
      const int8_t **rp = &row[4 * r + i];
      if (ky < ky0 || ky >= ky1 || (!c->merge && (kx < kx0 || kx >= kx1))) {
        *rp = k->pad;
        continue;
      }
      /* the row's (or tap's) first input, at kernel column kx */
      const ptrdiff_t o = (ptrdiff_t)iy0 * p->in_strides[1] +
                          (ptrdiff_t)ix0 * is2 + k->xo[r];
      if (whole || !c->merge) {
        *rp = x + o;
      } else { /* merged, partly outside: columns [kx0, kx1) are there */
        memset(tmp, -c->io, (size_t)k->run);
        if (kx1 > kx0)
          memcpy(tmp + kx0 * c->cpg,
                 x + o + (ptrdiff_t)kx0 * p->dilation_w * is2,
                 (size_t)(kx1 - kx0) * (size_t)c->cpg);
        *rp = tmp;
        tmp += k->run;
      }
    }
  }
  avx_bcast_any(k, c, row, rq, a, out);
}
#endif /* TN_CRT_HAVE_AVX2 */
#else
typedef int tn__crt_unused_x86_conv_s8; /* no SSE2: nothing here */
#endif
