/*
 * x86/conv_avx2_s8.c: AVX2 forms of the int8 convolution (conv_s8.c) for
 * a CPU (or a cap, tn_crt_isa_limit) that stops at AVX2, where the
 * AVX-512 VNNI forms of x86/conv_s8.c and x86/conv_wide_s8.c do not run:
 * a whole depthwise layer (DW: multiplier 1, channels contiguous), 32
 * channels a pass, and the row form of the regular convolution (BCAST),
 * tiles of up to 6 pixels by 16 channels. Both keep the products exact
 * in int16: vpmaddwd adds two products of int16 into an int32 lane, and
 * |x + io| <= 255, |w| <= 128 keep the pair sums exact, the int32 sums
 * wrapping as the portable uint32 ones. Both requantize as TFLite does,
 * exactly, 8 lanes at a time (requant8: conv_s8.h's requant_exact for
 * M >= 0 and a shift in [-31, 0]; h = (|x| * M + 2^30 - [x < 0]) >> 31 in
 * 64 bits, vpmuludq on the even lanes, then the odd ones); DW first
 * estimates the 8 lanes in float and takes requant8 only for a vector
 * with a lane the estimate leaves in doubt (dw2_q8).
 *
 * DW: the block forms of x86/conv_s8.c took 16 channels a pass, two
 * pixels a call, set each block up again, and requantized in float with
 * the doubtful lanes redone one by one. Here one pixel at a time, every
 * pixel of the layer in one loop:
 *  - a tap's 16 channels are sign-extended to int16 (vpmovsxbw from
 *    memory), two taps' vectors interleaved by vpunpck[lh]wd (within
 *    128-bit lanes), and vpmaddwd adds each channel's two products.
 *    Accumulator 2b + h's lane j holds channel 16b + 4h + j (j < 4) or
 *    16b + 4h + j + 4 (j >= 4); the weights and the lanes' constants are
 *    packed in that order, and vpackssdw, vpacksswb and one vpermq put
 *    the channels back in order.
 *  - The input offset is folded out: the accumulators start from
 *    bias + io * sum(w), and a tap outside the input reads bytes of -io,
 *    which cancel its share, so border pixels take the same loop (an odd
 *    last tap pairs with zero weights).
 *  - A layer whose channels are not a multiple of 8 (the last pass reads
 *    8 or 16 bytes a tap) takes the other forms.
 * A pass of 8 channels holds them twice, and takes two pixels at once
 * where both windows are inside the input (one in the lanes of channels
 * 0-7, the other in those of 8-15).
 * In place (a ROWS layer: out is the input), each output row of a pass
 * waits in a ring on the stack until its input row has been read for the
 * last time, as conv_s8.c's ring does it. Set-up per pass: the weights of
 * up to 2 * DW2_PAIRS taps widened into pairs and each lane's constants.
 * Row form: see tn__crt_conv_avx2_rows below. Compiled with target
 * attributes, taken where tn__crt_avx2() says the CPU runs AVX2 (DW: and
 * tn__crt_conv_wide has not taken the layer); compiles to nothing where
 * isa.h says AVX2 forms are out.
 */
#include "conv_s8.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#include "crt_libc.h"
#include "x86/requant_lanes.h"

#define AVX2 __attribute__((target("avx2")))

/* Channels a pass; pairs of taps at most; bytes of the in-place ring. */
enum { DW2 = 32, DW2_PAIRS = 32, DW2_RING = 8192 };

typedef struct {
  int16_t w[DW2_PAIRS][4 * 16] __attribute__((aligned(32)));
  int32_t corr[DW2] __attribute__((aligned(32))); /* bias + io * sum(w) */
  uint32_t m[DW2] __attribute__((aligned(32)));
  uint32_t r[DW2] __attribute__((aligned(32)));
  /* dw2_q8's float constants: M / 2^(31 + r), and the distance from an
   * integer within which the float result is certain (-1: never) */
  float scale[DW2] __attribute__((aligned(32)));
  float tol[DW2] __attribute__((aligned(32)));
  int8_t pad[DW2]; /* -io */
  ptrdiff_t xo[2 * DW2_PAIRS];
  int32_t ky[2 * DW2_PAIRS], kx[2 * DW2_PAIRS];
  int32_t off, lo, hi, pairs, taps;
  int fast;       /* dw2_q8's float form applies: |off| <= 512 */
  float flo, fhi; /* lo - off, hi - off */
} Dw2;

static int dw2_fault; /* tn__crt_conv_avx2_fault */
void tn__crt_conv_avx2_fault(int how) {
  __atomic_store_n(&dw2_fault, how, __ATOMIC_RELAXED);
}

/* q's multipliers are all ones requant8 takes (M >= 0, a shift in
 * [-31, 0], no float scales): 0 if so. Eight channels a compare (a
 * layer's check ran on every call, one channel at a time, and cost the
 * wake word's depthwise layers a tenth of their time). */
AVX2 static int dw2_bad_multipliers(const TnCrtQuant *q, int32_t out_c) {
  if (q == NULL || q->scale != NULL || q->multiplier == NULL ||
      q->shift == NULL)
    return 1;
  const int32_t n = q->per_channel ? out_c : 1;
  const __m256i zero = _mm256_setzero_si256();
  const __m256i m31 = _mm256_set1_epi32(-31);
  __m256i bad = zero;
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i m = _mm256_loadu_si256((const __m256i *)(q->multiplier + j));
    const __m256i s = _mm256_loadu_si256((const __m256i *)(q->shift + j));
    /* sign bits: M < 0, a shift > 0 or < -31 */
    bad = _mm256_or_si256(
        bad, _mm256_or_si256(m, _mm256_or_si256(_mm256_cmpgt_epi32(s, zero),
                                                _mm256_cmpgt_epi32(m31, s))));
  }
  int32_t worse = _mm256_movemask_ps(_mm256_castsi256_ps(bad));
  for (; j < n; j++)
    worse |= q->multiplier[j] < 0 || 0u - (uint32_t)q->shift[j] > 31u;
  return worse != 0;
}

/* requant_exact of the 8 lanes of x (x86/requant_lanes.h). */
#define BLEND8(e, o) _mm256_blend_epi32(e, o, 0xaa)
AVX2 static inline __m256i requant8(__m256i x, __m256i m, __m256i r,
                                    __m256i off, __m256i lo, __m256i hi) {
  REQUANT_LANES(__m256i, _mm256_, si256, set1_epi64x, BLEND8);
}
#undef BLEND8

/* requant8 of the DW pass's lanes j0 .. j0 + 7. */
AVX2 static inline __m256i dw2_requant8(const Dw2 *k, int32_t j0, __m256i x) {
  return requant8(x, _mm256_load_si256((const __m256i *)(k->m + j0)),
                  _mm256_load_si256((const __m256i *)(k->r + j0)),
                  _mm256_set1_epi32(k->off), _mm256_set1_epi32(k->lo),
                  _mm256_set1_epi32(k->hi));
}

/* dw2_requant8's result, by the float estimate of x86/conv_s8.c's
 * requant_sse (see there: y = x * M / 2^(31+r) in float, clamped to
 * [lo - off, hi - off], rounded by adding 1.5 * 2^23; certain where it
 * lies within tol of that integer) for the 8 lanes at once, where
 * k->fast; if any lane is not certain (about 2^-r of them: for r = 7 one
 * vector in fifteen), the 8 lanes again by dw2_requant8, exactly. About
 * half the instructions of dw2_requant8. lanes: the bits of the lanes
 * whose results are stored (the others are not tested).
 * (tn__crt_conv_avx2_fault 6 keeps the float results of lanes that are
 * not certain: a broken form for the tests.) */
AVX2 static __attribute__((noinline)) __m256i
dw2_exact8(const Dw2 *k, int32_t j0, __m256i x) {
  return dw2_requant8(k, j0, x);
}

AVX2 static inline __attribute__((always_inline)) __m256i
dw2_q8(const Dw2 *k, int32_t j0, __m256i x, int lanes) {
  if (k->fast) {
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(x),
                             _mm256_load_ps(k->scale + j0));
    y = _mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(k->flo)),
                      _mm256_set1_ps(k->fhi));
    const __m256 t = _mm256_add_ps(y, magic);
    const __m256 d = _mm256_and_ps(
        _mm256_sub_ps(y, _mm256_sub_ps(t, magic)),
        _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX)));
    if ((_mm256_movemask_ps(_mm256_cmp_ps(d, _mm256_load_ps(k->tol + j0),
                                          _CMP_GT_OQ)) & lanes) == 0 ||
        __atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 6)
      return _mm256_sub_epi32(
          _mm256_castps_si256(t),
          _mm256_set1_epi32((int32_t)(0x4b400000u - (uint32_t)k->off)));
  }
  return dw2_exact8(k, j0, x);
}

/* The 16 (b16) or 8 bytes of a block at e, sign-extended to int16. */
AVX2 static inline __m256i dw2_load(const int8_t *e, int b16) {
  return _mm256_cvtepi8_epi16(b16 ? _mm_loadu_si128((const __m128i *)e)
                                  : _mm_loadl_epi64((const __m128i *)e));
}

/* Eight int32 of a pass's channels from v + j (one for all with !pc),
 * 0 past len: lanes 8h .. 8h + 7 of each block's two accumulators, in
 * their order (channels 16b + 4h + 0..3, then 16b + 8 + 4h + 0..3). */
AVX2 static inline void dw2_lanes(const int32_t *v, int pc, int32_t len,
                                  int32_t b, __m256i *lo, __m256i *hi) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i n0 = _mm256_set1_epi32(len - 16 * b);
  const __m256i m0 = _mm256_cmpgt_epi32(n0, iota);
  const __m256i m1 = _mm256_cmpgt_epi32(n0, _mm256_add_epi32(
                                                iota, _mm256_set1_epi32(8)));
  __m256i c0, c1;
  if (v == NULL) {
    c0 = c1 = _mm256_setzero_si256();
  } else if (pc) {
    c0 = _mm256_maskload_epi32(v + 16 * b, m0);
    c1 = _mm256_maskload_epi32(v + 16 * b + 8, m1);
  } else {
    c0 = _mm256_and_si256(_mm256_set1_epi32(v[0]), m0);
    c1 = _mm256_and_si256(_mm256_set1_epi32(v[0]), m1);
  }
  *lo = _mm256_permute2x128_si256(c0, c1, 0x20);
  *hi = _mm256_permute2x128_si256(c0, c1, 0x31);
}

/* dw2_q8's constants of lanes j .. j + 7 (multipliers m, right shifts
 * r in [0, 31]): as x86/conv_s8.c's sse_consts4, the same operations. */
AVX2 static inline void dw2_consts(Dw2 *k, int32_t j, __m256i m, __m256i r) {
  const __m256 pot = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127), r), 23));
  const __m256 half = _mm256_set1_ps(0.5f);
  _mm256_store_ps(
      k->scale + j,
      _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(m),
                                  _mm256_set1_ps(1.0f / 2147483648.0f)),
                    pot));
  const __m256 tol =
      _mm256_sub_ps(_mm256_sub_ps(half, _mm256_mul_ps(half, pot)),
                    _mm256_set1_ps(1.0f / 2048.0f));
  /* r = 0: never certain (a sum near the int32 range wraps with off);
   * M = 0 (the lanes past a pass's channels): always, y = 0 exactly */
  const __m256i zero = _mm256_setzero_si256();
  const __m256 t = _mm256_blendv_ps(
      _mm256_set1_ps(-1.0f), tol,
      _mm256_castsi256_ps(_mm256_cmpgt_epi32(r, zero)));
  _mm256_store_ps(k->tol + j,
                  _mm256_blendv_ps(t, _mm256_set1_ps(1.0f),
                                   _mm256_castsi256_ps(
                                       _mm256_cmpeq_epi32(m, zero))));
}

/* The pass of len channels at co0: pair i's weights as the pixels'
 * inputs are interleaved (the same loads and unpacks; 0 past len and
 * past the last tap), sum(w) per lane by vpmaddwd with ones, then the
 * lanes' constants. */
AVX2 static void dw2_pack(Dw2 *k, const Conv *c, const TnCrtQuant *q,
                          const int32_t *bias, int32_t co0, int32_t len) {
  const TnCrtConv2d *p = c->p;
  const int pc = q->per_channel != 0;
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  /* a pass of 8 channels holds them twice (lanes of channels 8-15 as
   * those of 0-7), so that dw2_pixel can take two pixels at once */
  const int dup = len == 8;
  __m256i sum[4] = {zero, zero, zero, zero};
  for (int32_t i = 0; i < k->pairs; i++) {
    __m256i *w = (__m256i *)k->w[i];
    for (int32_t b = 0; b < 2; b++) {
      const int32_t n = len - 16 * b; /* the block's channels: 16 or 8 */
      __m256i t[2] = {zero, zero};
      for (int32_t h = 0; h < 2 && n > 0; h++) {
        const int32_t tap = 2 * i + h;
        if (tap >= k->taps) continue;
        const int8_t *const wt = c->w + (ptrdiff_t)k->ky[tap] * p->w_strides[0] +
                                 (ptrdiff_t)k->kx[tap] * p->w_strides[1] + co0 +
                                 16 * b;
        if (dup) {
          const __m128i e = _mm_loadl_epi64((const __m128i *)wt);
          t[h] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(e, e));
        } else {
          t[h] = dw2_load(wt, n >= 16);
        }
      }
      const __m256i lo = _mm256_unpacklo_epi16(t[0], t[1]);
      const __m256i hi = _mm256_unpackhi_epi16(t[0], t[1]);
      _mm256_store_si256(w + 2 * b, lo);
      _mm256_store_si256(w + 2 * b + 1, hi);
      sum[2 * b] = _mm256_add_epi32(sum[2 * b], _mm256_madd_epi16(lo, ones));
      sum[2 * b + 1] =
          _mm256_add_epi32(sum[2 * b + 1], _mm256_madd_epi16(hi, ones));
    }
  }
  const __m256i io = _mm256_set1_epi32(c->io);
  const int32_t j = pc ? co0 : 0;
  for (int32_t b = 0; b < 2; b++) {
    __m256i b0, b1, m0, m1, s0, s1;
    dw2_lanes(bias ? bias + co0 : NULL, 1, len, b, &b0, &b1);
    dw2_lanes(q->multiplier + j, pc, len, b, &m0, &m1);
    dw2_lanes(q->shift + j, pc, len, b, &s0, &s1);
    if (dup) { /* lanes 4-7 of each: those of 0-3 */
#define DUP(v) v = _mm256_permute2x128_si256(v, v, 0x00)
      DUP(b0), DUP(b1), DUP(m0), DUP(m1), DUP(s0), DUP(s1);
#undef DUP
    }
    __m256i *const corr = (__m256i *)k->corr, *const m = (__m256i *)k->m;
    __m256i *const r = (__m256i *)k->r;
    _mm256_store_si256(corr + 2 * b, _mm256_add_epi32(
                                         b0, _mm256_mullo_epi32(io, sum[2 * b])));
    _mm256_store_si256(corr + 2 * b + 1,
                       _mm256_add_epi32(b1, _mm256_mullo_epi32(
                                                io, sum[2 * b + 1])));
    _mm256_store_si256(m + 2 * b, m0), _mm256_store_si256(m + 2 * b + 1, m1);
    _mm256_store_si256(r + 2 * b, _mm256_sub_epi32(zero, s0));
    _mm256_store_si256(r + 2 * b + 1, _mm256_sub_epi32(zero, s1));
    dw2_consts(k, 16 * b, m0, _mm256_sub_epi32(zero, s0));
    dw2_consts(k, 16 * b + 8, m1, _mm256_sub_epi32(zero, s1));
  }
  /* (how == 1 leaves io * sum(w) out of channel 31's accumulator: a
   * broken form for the tests) */
  if (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 1 && len == DW2)
    k->corr[31] = bias ? bias[co0 + 31] : 0; /* lane 31: channel 31 */
}

/* Pair i of a pixel's taps (inputs at p0 and p1) into its accumulators. */
#define DW2_PAIR(i, p0, p1)                                                  \
  do {                                                                       \
    const __m256i *w_ = (const __m256i *)k->w[i];                            \
    const __m256i x0_ =                                                      \
        two ? dw2_load2(p0, xq) : dw2_load(p0, nb == 2 || b16);              \
    const __m256i x1_ =                                                      \
        two ? dw2_load2(p1, xq) : dw2_load(p1, nb == 2 || b16);              \
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0_, x1_), \
                                                _mm256_load_si256(w_)));     \
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0_, x1_), \
                                                _mm256_load_si256(w_ + 1))); \
    if (nb == 2) {                                                           \
      const __m256i y0_ = dw2_load((p0) + 16, b16);                          \
      const __m256i y1_ = dw2_load((p1) + 16, b16);                          \
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(y0_, y1_), \
                                                  _mm256_load_si256(w_ + 2))); \
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(y0_, y1_), \
                                                  _mm256_load_si256(w_ + 3))); \
    }                                                                        \
  } while (0)

/* The 8 bytes at e and the 8 at e + xq, sign-extended to int16. */
AVX2 static inline __m256i dw2_load2(const int8_t *e, ptrdiff_t xq) {
  return _mm256_cvtepi8_epi16(
      _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)e),
                         _mm_loadl_epi64((const __m128i *)(e + xq))));
}

/* One pixel of a pass of nb blocks (1 or 2), the last one 16 (b16) or 8
 * channels: the taps' inputs at base + xo[t] for a window wholly inside
 * the input (full), else at tp[t], requantized into out. np: the pairs
 * of taps when the caller knows them (5, a 3x3 window: the loop
 * unrolled, no counter), else 0 (k->pairs). two (a pass of 8 channels,
 * dw2_pack's lanes twice; full windows): two pixels at once, the second
 * one's inputs xq bytes on and its output at out + ostep, in the lanes
 * of channels 8-15. */
AVX2 static inline __attribute__((always_inline)) void
dw2_pixel(const Dw2 *k, int nb, int b16, int np, int full,
          const int8_t *base, const int8_t *const *tp, int8_t *out,
          int two, ptrdiff_t xq, ptrdiff_t ostep) {
  __m256i a0 = _mm256_load_si256((const __m256i *)k->corr);
  __m256i a1 = _mm256_load_si256((const __m256i *)(k->corr + 8));
  __m256i a2 = _mm256_load_si256((const __m256i *)(k->corr + 16));
  __m256i a3 = _mm256_load_si256((const __m256i *)(k->corr + 24));
  if (np > 0) {
#pragma GCC unroll 8
    for (int32_t i = 0; i < np; i++)
      DW2_PAIR(i, full ? base + k->xo[2 * i] : tp[2 * i],
               full ? base + k->xo[2 * i + 1] : tp[2 * i + 1]);
  } else {
    for (int32_t i = 0; i < k->pairs; i++)
      DW2_PAIR(i, full ? base + k->xo[2 * i] : tp[2 * i],
               full ? base + k->xo[2 * i + 1] : tp[2 * i + 1]);
  }
  /* within [lo, hi] of int8: the saturating packs only narrow */
  /* the lanes stored: in a pass of 8 channels, one pixel's are 0-3 */
  const int ls = nb == 1 && !b16 && !two ? 0x0f : 0xff;
  const __m256i s0 =
      _mm256_packs_epi32(dw2_q8(k, 0, a0, ls), dw2_q8(k, 8, a1, ls));
  const __m256i s1 = nb == 2 ? _mm256_packs_epi32(dw2_q8(k, 16, a2, 0xff),
                                                  dw2_q8(k, 24, a3, 0xff))
                             : s0;
  const __m256i v = _mm256_permute4x64_epi64(_mm256_packs_epi16(s0, s1), 0xd8);
  if (nb == 2 && b16) {
    _mm256_storeu_si256((__m256i *)out, v);
  } else if (nb == 2 || b16) {
    _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(v));
    if (nb == 2)
      _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(v, 1));
  } else if (two) {
    const __m128i v2 = _mm256_castsi256_si128(v);
    _mm_storel_epi64((__m128i *)out, v2);
    _mm_storeh_pd((double *)(out + ostep), _mm_castsi128_pd(v2));
  } else {
    _mm_storel_epi64((__m128i *)out, _mm256_castsi256_si128(v));
  }
}
#undef DW2_PAIR

/* One output row of a pass: out_w pixels from the window origins of row
 * iy0 (kernel rows [ky0, ky1) inside the input), pixel ox at
 * orow + ox * ostep; x: the batch's input at the pass's channels; np as
 * dw2_pixel's. A window cut by the input's edges reads its taps outside
 * at k->pad: a kernel row inside takes the columns [kx0, kx1). */
AVX2 static inline __attribute__((always_inline)) void
dw2_row(const Dw2 *k, const TnCrtConv2d *p, int nb, int b16, int np,
        const int8_t *x, int32_t iy0, int32_t ky0, int32_t ky1, int8_t *orow,
        ptrdiff_t ostep) {
  const int rows_in = ky0 == 0 && ky1 == p->k_h;
  const ptrdiff_t o_row = (ptrdiff_t)iy0 * p->in_strides[1];
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int32_t kx0, kx1;
    taps(ix0, p->k_w, p->dilation_w, p->in_w, &kx0, &kx1);
    const ptrdiff_t o = o_row + (ptrdiff_t)ix0 * p->in_strides[2];
    int8_t *const po = orow + (ptrdiff_t)ox * ostep;
    if (rows_in && kx0 == 0 && kx1 == p->k_w) {
      /* a pass of 8 channels: with the next pixel, if its window is
       * inside too (how == 7 reads the first pixel's inputs for the
       * second: a broken form for the tests) */
      const ptrdiff_t xq = (ptrdiff_t)p->stride_w * p->in_strides[2];
      if (nb == 1 && !b16 && ox + 1 < p->out_w &&
          ix0 + p->stride_w + (p->k_w - 1) * p->dilation_w < p->in_w) {
        dw2_pixel(k, nb, b16, np, 1, x + o, NULL, po, 1,
                  __atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 7 ? 0 : xq,
                  ostep);
        ox++;
        continue;
      }
      dw2_pixel(k, nb, b16, np, 1, x + o, NULL, po, 0, 0, 0);
      continue;
    }
    const int8_t *tp[2 * DW2_PAIRS];
    const int8_t *const xt = x + o;
    int32_t t = 0;
    for (int32_t ky = 0; ky < p->k_h; ky++) {
      if ((uint32_t)(ky - ky0) >= (uint32_t)(ky1 - ky0)) {
        for (int32_t kx = 0; kx < p->k_w; kx++) tp[t++] = k->pad;
        continue;
      }
      for (int32_t kx = 0; kx < p->k_w; kx++, t++)
        tp[t] = (uint32_t)(kx - kx0) < (uint32_t)(kx1 - kx0) ? xt + k->xo[t]
                                                             : k->pad;
    }
    if (t < 2 * k->pairs) tp[t] = k->pad; /* an odd last tap's pair */
    dw2_pixel(k, nb, b16, np, 0, NULL, tp, po, 0, 0, 0);
  }
}

/* dw2_row for the pass's shape (len 32, 24, 16 or 8 channels; a 3x3
 * window's 5 pairs of taps, or any). */
AVX2 static void dw2_row_any(const Dw2 *k, const TnCrtConv2d *p, int32_t len,
                             const int8_t *x, int32_t iy0, int32_t ky0,
                             int32_t ky1, int8_t *orow, ptrdiff_t ostep) {
  const int nine = k->taps == 9;
  switch (len + nine) {
    case 33: dw2_row(k, p, 2, 1, 5, x, iy0, ky0, ky1, orow, ostep); return;
    case 32: dw2_row(k, p, 2, 1, 0, x, iy0, ky0, ky1, orow, ostep); return;
    case 25: dw2_row(k, p, 2, 0, 5, x, iy0, ky0, ky1, orow, ostep); return;
    case 24: dw2_row(k, p, 2, 0, 0, x, iy0, ky0, ky1, orow, ostep); return;
    case 17: dw2_row(k, p, 1, 1, 5, x, iy0, ky0, ky1, orow, ostep); return;
    case 16: dw2_row(k, p, 1, 1, 0, x, iy0, ky0, ky1, orow, ostep); return;
    case 9: dw2_row(k, p, 1, 0, 5, x, iy0, ky0, ky1, orow, ostep); return;
    default: dw2_row(k, p, 1, 0, 0, x, iy0, ky0, ky1, orow, ostep); return;
  }
}

/* Every output row of a pass (not in place: out_n, the batch's output at
 * the pass's channels), in one call: the rows' loop inside the form of
 * the pass's shape, so that a row costs no call and no switch (the wake
 * word's images are one pixel wide: a row is a pixel). (how == 5 gives
 * the last row the window of the row above: a broken form for the
 * tests.) */
AVX2 static inline __attribute__((always_inline)) void
dw2_rows(const Dw2 *k, const TnCrtConv2d *p, int nb, int b16, int np,
         const int8_t *x, int8_t *out_n) {
  const int32_t last =
      p->out_h - 1 - (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 5 &&
                      p->out_h > 1);
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy0 = (oy < last ? oy : last) * p->stride_h - p->pad_top;
    int32_t ky0, ky1;
    taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
    dw2_row(k, p, nb, b16, np, x, iy0, ky0, ky1,
            out_n + (ptrdiff_t)oy * p->out_strides[1], p->out_strides[2]);
  }
}

AVX2 static void dw2_rows_any(const Dw2 *k, const TnCrtConv2d *p,
                              int32_t len, const int8_t *x, int8_t *out_n) {
  const int nine = k->taps == 9;
  switch (len + nine) {
    case 33: dw2_rows(k, p, 2, 1, 5, x, out_n); return;
    case 32: dw2_rows(k, p, 2, 1, 0, x, out_n); return;
    case 25: dw2_rows(k, p, 2, 0, 5, x, out_n); return;
    case 24: dw2_rows(k, p, 2, 0, 0, x, out_n); return;
    case 17: dw2_rows(k, p, 1, 1, 5, x, out_n); return;
    case 16: dw2_rows(k, p, 1, 1, 0, x, out_n); return;
    case 9: dw2_rows(k, p, 1, 0, 5, x, out_n); return;
    default: dw2_rows(k, p, 1, 0, 0, x, out_n); return;
  }
}

/* In place: output row r of the pass (len channels at out_n), held in
 * slot r % rows of the ring (pixels DW2 apart), to its place: a pixel's
 * 32, 24, 16 or 8 bytes by one or two vector moves (memcpy of a length
 * not known to the compiler was a call a pixel). */
AVX2 static void dw2_flush(const TnCrtConv2d *p, const int8_t *ring,
                           int32_t rows, int32_t len, int32_t r,
                           int8_t *out_n) {
  const int8_t *src = ring + (ptrdiff_t)(r % rows) * p->out_w * DW2;
  int8_t *dst = out_n + (ptrdiff_t)r * p->out_strides[1];
  const ptrdiff_t os = p->out_strides[2];
  switch (len) {
    case 32:
      for (int32_t x = 0; x < p->out_w; x++, src += DW2, dst += os)
        _mm256_storeu_si256((__m256i *)dst,
                            _mm256_load_si256((const __m256i *)src));
      return;
    case 24:
      for (int32_t x = 0; x < p->out_w; x++, src += DW2, dst += os) {
        _mm_storeu_si128((__m128i *)dst, _mm_load_si128((const __m128i *)src));
        _mm_storel_epi64((__m128i *)(dst + 16),
                         _mm_loadl_epi64((const __m128i *)(src + 16)));
      }
      return;
    case 16:
      for (int32_t x = 0; x < p->out_w; x++, src += DW2, dst += os)
        _mm_storeu_si128((__m128i *)dst, _mm_load_si128((const __m128i *)src));
      return;
    default:
      for (int32_t x = 0; x < p->out_w; x++, src += DW2, dst += os)
        _mm_storel_epi64((__m128i *)dst,
                         _mm_loadl_epi64((const __m128i *)src));
      return;
  }
}

int tn__crt_conv_dw_avx2_layer(const Conv *c, const TnCrtQuant *q,
                               int32_t lo, int32_t hi, const int32_t *bias,
                               int8_t *out, int in_place) {
  const TnCrtConv2d *p = c->p;
  const int32_t ntaps = p->k_h * p->k_w;
  /* rows held back in place: pad_top + 1 (input row r is last read by
   * output row r + pad_top) */
  const int32_t rows = p->pad_top < p->out_h ? p->pad_top + 1 : p->out_h;
  if (!tn__crt_avx2() || c->mode != DW || p->out_strides[3] != 1 ||
      p->out_c % 8 != 0 || ntaps > 2 * DW2_PAIRS ||
      (in_place && (int64_t)rows * p->out_w * DW2 > DW2_RING) ||
      dw2_bad_multipliers(q, p->out_c) != 0)
    return 0;
  Dw2 k;
  int8_t ring[DW2_RING] __attribute__((aligned(32)));
  k.off = q->output_offset, k.lo = lo, k.hi = hi;
  k.fast = k.off >= -512 && k.off <= 512;
  k.flo = (float)(lo - k.off), k.fhi = (float)(hi - k.off);
  k.taps = ntaps, k.pairs = (ntaps + 1) / 2;
  memset(k.pad, -c->io, sizeof k.pad); /* io in [-127, 128] */
  for (int32_t t = 0; t < 2 * k.pairs; t++) {
    const int32_t ky = t < ntaps ? t / p->k_w : 0;
    const int32_t kx = t < ntaps ? t % p->k_w : 0;
    k.ky[t] = ky, k.kx[t] = kx;
    k.xo[t] = (ptrdiff_t)ky * p->dilation_h * p->in_strides[1] +
              (ptrdiff_t)kx * p->dilation_w * p->in_strides[2];
  }
  for (int32_t co0 = 0; co0 < p->out_c; co0 += DW2) {
    const int32_t len = p->out_c - co0 < DW2 ? p->out_c - co0 : DW2;
    dw2_pack(&k, c, q, bias, co0, len);
    for (int32_t n = 0; n < p->batch; n++) {
      const int8_t *x = c->in + (ptrdiff_t)n * p->in_strides[0] + co0;
      int8_t *const out_n = out + (ptrdiff_t)n * p->out_strides[0] + co0;
      if (!in_place) {
        dw2_rows_any(&k, p, len, x, out_n);
        continue;
      }
      /* in place: each row into the ring */
      for (int32_t oy = 0; oy < p->out_h; oy++) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        int32_t ky0, ky1;
        taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
        dw2_row_any(&k, p, len, x, iy0, ky0, ky1,
                    ring + (ptrdiff_t)(oy % rows) * p->out_w * DW2, DW2);
        /* input row oy - pad_top has had its last reader, and its output
         * row leaves the ring */
        if (oy >= p->pad_top)
          dw2_flush(p, ring, rows, len, oy - p->pad_top, out_n);
      }
      for (int32_t r = p->out_h - p->pad_top; r < p->out_h; r++)
        if (r >= 0) dw2_flush(p, ring, rows, len, r, out_n);
    }
  }
  return 1;
}

/* ---- the row form of BCAST ---------------------------------------------- */

/*
 * tn__crt_conv_avx2_rows: a whole output row of a block of 8 * u channels
 * from conv_s8.c's padded copy of its input rows (k->tmp, -io past the
 * input's edges; row r of pixel i's window at i * xp + xo[r]), the block
 * packed for AVX2 (conv_s8.h: per row, per pair of inputs, the 8 * u
 * channels' two int16 weights). The copy is widened once a row into
 * int16 x + io (16 KiB on the stack at most), so that each pixel's pair of
 * inputs is one 32-bit broadcast from memory (vpbroadcastd: a load, no
 * shuffle), where the four-pixel form widened, shuffled and broadcast
 * each pair in registers. Tiles of 6 pixels by 16 channels keep 12
 * accumulators, the two weight vectors and the broadcast in the 16 ymm
 * registers; each weight vector serves six vpmaddwd. A row's last 1 to
 * 5 pixels take a tile of their own size.
 */
enum { ROW_NP = 6 };

/* The int16 pair at e (two inputs + io), in every int32 lane. */
AVX2 static inline __m256i row_pair(const int16_t *e) {
  int32_t v;
  memcpy(&v, e, sizeof v);
  return _mm256_set1_epi32(v);
}

/* requant8 of the block's lanes j0 .. j0 + 7 (rq->vec). */
AVX2 static inline __m256i row_requant8(const Requant *rq, int32_t j0,
                                        __m256i x) {
  return requant8(
      x, _mm256_loadu_si256((const __m256i *)(rq->m + j0)),
      _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(rq->r + j0))),
      _mm256_set1_epi32(rq->off), _mm256_set1_epi32(rq->lo),
      _mm256_set1_epi32(rq->hi));
}

/* A pixel's sums (c0: the block's lanes 0-7; c1: 8-15 when u == 2)
 * requantized into o. */
AVX2 static inline __attribute__((always_inline)) void
row_store(const Requant *rq, int u, __m256i c0, __m256i c1, int8_t *o) {
  const __m256i q0 = row_requant8(rq, 0, c0);
  if (u == 2) {
    /* packs work within 128-bit halves: put the int16 back in order */
    const __m256i s = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(q0, row_requant8(rq, 8, c1)), 0xd8);
    _mm_storeu_si128((__m128i *)o,
                     _mm_packs_epi16(_mm256_castsi256_si128(s),
                                     _mm256_extracti128_si256(s, 1)));
  } else {
    const __m128i s = _mm_packs_epi32(_mm256_castsi256_si128(q0),
                                      _mm256_extracti128_si256(q0, 1));
    _mm_storel_epi64((__m128i *)o, _mm_packs_epi16(s, s));
  }
}

AVX2 static inline __attribute__((always_inline)) void
row_tile(const AvxBcast *k, int u, int np, const ptrdiff_t *xo,
         const int16_t *x, ptrdiff_t xp, const Requant *rq, int8_t *out,
         ptrdiff_t os) {
  const int32_t pairs = (k->run + 1) / 2;
  /* (how == 2 leaves out each window's last row: a broken form for the
   * tests) */
  const int32_t rows =
      k->rows - (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 2);
  const int16_t *w = k->w + k->cur;
  const __m256i b0 = _mm256_loadu_si256((const __m256i *)rq->bias);
  const __m256i b1 = _mm256_loadu_si256((const __m256i *)(rq->bias + 8));
  __m256i c0[ROW_NP], c1[ROW_NP];
#pragma GCC unroll 6
  for (int i = 0; i < np; i++) c0[i] = b0, c1[i] = b1;
  for (int32_t r = 0; r < rows; r++) {
    const int16_t *e = x + xo[r];
    for (int32_t g = 0; g < pairs; g++, e += 2, w += 16 * u) {
      const __m256i w0 = _mm256_load_si256((const __m256i *)w);
      const __m256i w1 =
          u == 2 ? _mm256_load_si256((const __m256i *)(w + 16)) : w0;
#pragma GCC unroll 6
      for (int i = 0; i < np; i++) {
        const __m256i v = row_pair(e + i * xp);
        c0[i] = _mm256_add_epi32(c0[i], _mm256_madd_epi16(w0, v));
        if (u == 2) c1[i] = _mm256_add_epi32(c1[i], _mm256_madd_epi16(w1, v));
      }
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < np; i++) row_store(rq, u, c0[i], c1[i], out + i * os);
}

AVX2 static inline __attribute__((always_inline)) void
row_run(const AvxBcast *k, int u, const ptrdiff_t *xo, const int16_t *x,
        ptrdiff_t xp, int32_t npx, const Requant *rq, int8_t *out,
        ptrdiff_t os) {
  int32_t i = 0;
  for (; i + ROW_NP <= npx; i += ROW_NP)
    row_tile(k, u, ROW_NP, xo, x + i * xp, xp, rq, out + i * os, os);
  x += i * xp, out += i * os;
  switch (npx - i) {
    case 5: row_tile(k, u, 5, xo, x, xp, rq, out, os); return;
    case 4: row_tile(k, u, 4, xo, x, xp, rq, out, os); return;
    case 3: row_tile(k, u, 3, xo, x, xp, rq, out, os); return;
    case 2: row_tile(k, u, 2, xo, x, xp, rq, out, os); return;
    case 1: row_tile(k, u, 1, xo, x, xp, rq, out, os); return;
    default: return;
  }
}

AVX2 void tn__crt_conv_avx2_rows(const AvxBcast *k, const ptrdiff_t *xo,
                                 int32_t io, const int8_t *x, int32_t n,
                                 ptrdiff_t xp, int32_t npx, const Requant *rq,
                                 int8_t *out, ptrdiff_t os) {
  int16_t xw[AVX_TMP + 16] __attribute__((aligned(32)));
  const __m256i iov = _mm256_set1_epi16((int16_t)io);
  int32_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm256_store_si256(
        (__m256i *)(xw + j),
        _mm256_add_epi16(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + j))),
            iov));
  for (; j < n; j++) xw[j] = (int16_t)(x[j] + io);
  /* the input an odd run's last pair reads past the copy (its weight is
   * 0) */
  xw[n] = 0;
  if (k->u == 2)
    row_run(k, 2, xo, xw, xp, npx, rq, out, os);
  else
    row_run(k, 1, xo, xw, xp, npx, rq, out, os);
}

/* ---- the 1x1 GEMM with AVX-VNNI ----------------------------------------- */

/*
 * tn__crt_conv_gemm_packed_avxvnni: the packed 1x1 GEMM (the layout of
 * tn__crt_conv_gemm_packed: per block of 16 channels, groups of four
 * inputs, 64 bytes, channel j's four weights at 4j) with VEX vpdpbusd on
 * ymm, for a CPU with AVX-VNNI but not AVX-512 (or a cap between them):
 * a group's 64 bytes are two ymm of 8 channels whose lanes are the
 * channels in order. The inputs are copied once a chunk as x ^ 0x80 (x +
 * 128 as uint8; the packed bias holds the rest of the offset, and the
 * products are exact, with no vpmaddubsw saturation), so that a pixel's
 * four inputs are one 32-bit broadcast from memory. Tiles of 6 pixels by
 * 16 channels keep 12 accumulators, the two weight vectors and the
 * broadcast in the 16 ymm registers; each weight vector serves six
 * vpdpbusd. Requantized exactly (row_store: rq->vec).
 */
enum { GEMM_NP = 6, GEMM_XB = 8192 }; /* GEMM_XB: bytes of the copy */

#define AVXVNNI __attribute__((target("avx2,avxvnni")))

/* acc + vpdpbusd(u, s) in acc's own register (as vnni_dp, x86/conv_s8.c:
 * gcc 12 otherwise moves the accumulators at every group) */
AVXVNNI static inline __m256i gemm_dp(__m256i acc, __m256i u, __m256i s) {
  __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "xm"(s));
  return acc;
}

AVXVNNI static inline __attribute__((always_inline)) void
gemm_vex_tile(const int8_t *w, int32_t rows, const ptrdiff_t *ro,
              int32_t full, int np, const uint8_t *x, ptrdiff_t xs,
              const Requant *rq, int8_t *out, ptrdiff_t os) {
  const __m256i b0 = _mm256_loadu_si256((const __m256i *)rq->bias);
  const __m256i b1 = _mm256_loadu_si256((const __m256i *)(rq->bias + 8));
  __m256i c0[GEMM_NP], c1[GEMM_NP];
#pragma GCC unroll 6
  for (int i = 0; i < np; i++) c0[i] = b0, c1[i] = b1;
  /* a window's rows (ro: their offsets from x; a 1x1 layer's one row of
   * K inputs), each of full groups */
  for (int32_t r = 0; r < rows; r++) {
    const uint8_t *e = x + ro[r];
    for (int32_t g = 0; g < full; g++, w += 64, e += 4) {
      const __m256i w0 = _mm256_loadu_si256((const __m256i *)w);
      const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + 32));
#pragma GCC unroll 6
      for (int i = 0; i < np; i++) {
        int32_t m;
        memcpy(&m, e + i * xs, 4);
        const __m256i v = _mm256_set1_epi32(m);
        c0[i] = gemm_dp(c0[i], v, w0);
        c1[i] = gemm_dp(c1[i], v, w1);
      }
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < np; i++) row_store(rq, 2, c0[i], c1[i], out + i * os);
}

/* nb blocks of 16 channels (kk weights a channel, from w) at n pixels
 * (x, the next xs on), tiles of GEMM_NP and a last one of 1 to 5. */
AVXVNNI static void gemm_vex_blocks(const int8_t *w, int32_t kk, int nb,
                                    int32_t rows, const ptrdiff_t *ro,
                                    int32_t full, const uint8_t *x,
                                    ptrdiff_t xs, int32_t n,
                                    const Requant *const *rq, int8_t *out,
                                    ptrdiff_t os) {
  for (int b = 0; b < nb; b++) {
    const int8_t *wb = w + (ptrdiff_t)16 * b * kk;
    int8_t *ob = out + 16 * b;
    int32_t i = 0;
    for (; i + GEMM_NP <= n; i += GEMM_NP)
      gemm_vex_tile(wb, rows, ro, full, GEMM_NP, x + i * xs, xs, rq[b],
                    ob + i * os, os);
    const uint8_t *xt = x + i * xs;
    int8_t *ot = ob + i * os;
#define TAIL(np) gemm_vex_tile(wb, rows, ro, full, np, xt, xs, rq[b], ot, os)
    switch (n - i) {
      case 5: TAIL(5); break;
      case 4: TAIL(4); break;
      case 3: TAIL(3); break;
      case 2: TAIL(2); break;
      case 1: TAIL(1); break;
      default: break;
    }
#undef TAIL
  }
}

AVXVNNI void tn__crt_conv_gemm_packed_avxvnni(const int8_t *w, int32_t kk,
                                              const int8_t *x, int32_t npx,
                                              const Requant *const *rq,
                                              int nb, int8_t *out,
                                              ptrdiff_t os) {
  /* (how == 3 drops the last group: a broken form for the tests) */
  const int32_t full =
      kk / 4 - (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 3);
  uint8_t xb[GEMM_XB] __attribute__((aligned(32)));
  const int32_t chunk = GEMM_XB / kk;
  const __m256i flip = _mm256_set1_epi8((char)0x80);
  for (int32_t p0 = 0; p0 < npx; p0 += chunk) {
    const int32_t n = npx - p0 < chunk ? npx - p0 : chunk;
    const size_t all = (size_t)n * (size_t)kk;
    const int8_t *xc = x + (ptrdiff_t)p0 * kk;
    size_t j = 0;
    for (; j + 32 <= all; j += 32)
      _mm256_store_si256(
          (__m256i *)(xb + j),
          _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(xc + j)),
                           flip));
    for (; j < all; j++) xb[j] = (uint8_t)(xc[j] ^ 0x80);
    static const ptrdiff_t one_row[1] = {0};
    gemm_vex_blocks(w, kk, nb, 1, one_row, full, xb, kk, n, rq,
                    out + (ptrdiff_t)p0 * os, os);
  }
}

/* The packed larger window with AVX-VNNI (conv_s8.h): the 1x1 GEMM's
 * tiles over the window's rows (k->po) of the copy x (x ^ 0x80), each
 * block of 16 channels read where it lies. (how == 4 leaves out each
 * window's last row: a broken form for the tests.) */
AVXVNNI void tn__crt_conv_row_packed_avxvnni(const AvxBcast *k,
                                             const int8_t *w, int32_t nblk,
                                             const uint8_t *x, ptrdiff_t xp,
                                             int32_t npx,
                                             const Requant *const *rq,
                                             int8_t *out, ptrdiff_t os) {
  const int32_t rows =
      k->rows - (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 4);
  gemm_vex_blocks(w, (int32_t)k->rows * k->run, nblk, rows, k->po,
                  k->run / 4, x, xp, npx, rq, out, os);
}
#else
typedef int tn__crt_unused_x86_conv_avx2_s8; /* no AVX2: nothing here */
#endif /* TN_CRT_HAVE_AVX2 */
