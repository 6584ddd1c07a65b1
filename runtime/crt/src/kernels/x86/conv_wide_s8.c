/*
 * x86/conv_wide_s8.c: two AVX-512 VNNI forms of the int8 convolution
 * (conv_s8.c) that take up to 64 output channels a pass, one output pixel
 * at a time, every pixel of the layer in one loop: the depthwise layer
 * (DW: multiplier 1, channels contiguous), and a direct form for a layer
 * of few input channels and a large kernel (a keyword spotter's first
 * layer, 10x4 taps of one channel). The block forms of x86/conv_s8.c take
 * 16 channels a pass, so a 64-channel layer walked its pixels four times
 * and set each pixel's window up four times; the first layer's windows,
 * cut at the input's edges in every output row, went through copies of
 * four bytes. Here:
 *  - vpdpbusd adds four u8 x s8 products to each int32 lane. The input x
 *    is read as x ^ 0x80 = x + 128 and the accumulators start from
 *    bias + (io - 128) * sum(w), so they end at bias + sum((x + io) * w)
 *    mod 2^32, the portable sums (vpdpbusd wraps). A tap outside the
 *    input reads bytes of -io, which add (128 - io) * w and cancel their
 *    share of the correction, so border pixels take the same loop.
 *  - DW: per group of four taps, the four taps' 64 channels are loaded
 *    (masked past the chunk's channels) and interleaved into each
 *    channel's four bytes by two rounds of vpunpck (within 128-bit
 *    lanes), so accumulator k's lane 4L + j holds channel 16L + 4k + j;
 *    the weights, the corrections and the requantization constants are
 *    packed in that order, and the two rounds of vpacks that narrow the
 *    results put the channels back in order. Taps past the window (to a
 *    multiple of four) have zero weights. A window of 3 or 4 rows (and a
 *    layer that does not fill the lanes with neighbouring pixels) groups
 *    its taps by kernel column instead, so that an input column's
 *    interleaved rows serve every pixel whose window covers it (KWS's
 *    3x3 layers: a third of the unpacks, 0.96x the model's time).
 *  - direct: a kernel row's taps and channels are one run of R = k_w *
 *    cpg bytes of the input (undilated channels-last); its groups of four
 *    bytes are each broadcast against four vectors of weights, the last
 *    group of a row completed with zero weights. A row above or below the
 *    input reads bytes of -io, a row cut at the left or right edge a copy
 *    completed with -io (R bytes).
 *  - The requantization is TFLite's, exactly, 16 lanes at a time, as
 *    conv_s8.h's requant_exact does it for M >= 0 and a shift in
 *    [-31, 0]: h = (|x| * M + 2^30 - [x < 0]) >> 31 in 64 bits (vpmuludq
 *    on the even lanes, then the odd ones), +-((h + 2^(r-1)) >> r), the
 *    output offset added, clamped; a layer with another multiplier takes
 *    the other forms.
 * Set-up per call (there is no storage across calls): per chunk of 64
 * channels the weights rearranged (DW 3x3: 768 bytes; the 10x4 first
 * layer: 2,560 bytes) and sum(w) with each lane's constants. Compiled
 * with target attributes, taken where tn__crt_avx512vnni() says the CPU
 * runs it; compiles to nothing where isa.h says these forms are out.
 */
#include "conv_s8.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#include "crt_libc.h"

#define VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* Channels a pass; groups of four taps (DW) or bytes (direct) at most;
 * rows x pixels x WIDE bytes of an in-place ring on the stack at most. */
enum { WIDE = 64, WIDE_GROUPS = 32, WIDE_RING = 8192, WIDE_ROW = 16 };
/* Input columns of one pass of the DW column form (8 KiB of stack). */
enum { WIDE_COLS = 32 };

typedef struct {
  int8_t w[WIDE_GROUPS][4 * WIDE] __attribute__((aligned(64)));
  int32_t corr[WIDE] __attribute__((aligned(64))); /* bias + (io-128)Σw */
  uint32_t m[WIDE] __attribute__((aligned(64)));
  uint32_t r[WIDE] __attribute__((aligned(64)));
  uint32_t half[WIDE] __attribute__((aligned(64)));
  float scale[WIDE] __attribute__((aligned(64))); /* wide_guess's */
  float tol[WIDE] __attribute__((aligned(64)));
  int8_t pad[2 * WIDE] __attribute__((aligned(64))); /* -io */
  int8_t tmp[WIDE_GROUPS][WIDE_ROW];             /* direct: cut rows */
  ptrdiff_t xo[4 * WIDE_GROUPS], wo[4 * WIDE_GROUPS]; /* DW: per tap */
  int32_t ky[4 * WIDE_GROUPS], kx[4 * WIDE_GROUPS];
  int32_t off, lo, hi, groups;
  int guess; /* wide_guess16 applies (|off| <= 512) */
  int keep;  /* tn__crt_conv_wide_fault 2: unsure lanes kept, wrongly */
} Wide;

/* Every channel's multiplier is one requant_exact takes (M >= 0, shift in
 * [-31, 0]), and q has no float scales. */
static int wide_requant_ok(const TnCrtQuant *q, int32_t out_c) {
  if (q == NULL || q->scale != NULL || q->multiplier == NULL ||
      q->shift == NULL)
    return 0;
  const int32_t n = q->per_channel ? out_c : 1;
  for (int32_t k = 0; k < n; k++)
    if (q->multiplier[k] < 0 || q->shift[k] > 0 || q->shift[k] < -31)
      return 0;
  return 1;
}

/* requant_exact of the 16 lanes of x at lanes j0 .. j0 + 15. */
VNNI static inline __m512i wide_requant16(const Wide *k, int32_t j0,
                                          __m512i x) {
  const __m512i m = _mm512_load_si512(k->m + j0);
  const __m512i s = _mm512_srai_epi32(x, 31); /* all ones where x < 0 */
  const __m512i ax = _mm512_abs_epi32(x);     /* |x| (2^31 for INT32_MIN) */
  const __m512i rnd = _mm512_add_epi32(_mm512_set1_epi32(1 << 30), s);
  const __m512i low = _mm512_set1_epi64(0xffffffff);
  /* even lanes: h in the low half of each 64 bits */
  const __m512i he = _mm512_srli_epi64(
      _mm512_add_epi64(_mm512_mul_epu32(ax, m), _mm512_and_si512(rnd, low)),
      31);
  /* odd lanes: (sum << 1) has h in its high half */
  const __m512i ho = _mm512_slli_epi64(
      _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(ax, 32),
                                        _mm512_srli_epi64(m, 32)),
                       _mm512_srli_epi64(rnd, 32)),
      1);
  const __m512i h = _mm512_mask_blend_epi32(0xaaaa, he, ho);
  const __m512i mg = _mm512_srlv_epi32(
      _mm512_add_epi32(h, _mm512_load_si512(k->half + j0)),
      _mm512_load_si512(k->r + j0));
  __m512i v = _mm512_sub_epi32(_mm512_xor_si512(mg, s), s);
  v = _mm512_add_epi32(v, _mm512_set1_epi32(k->off));
  v = _mm512_max_epi32(v, _mm512_set1_epi32(k->lo));
  return _mm512_min_epi32(v, _mm512_set1_epi32(k->hi));
}

/* requant_exact of the 16 lanes at j0 in float where that is certain,
 * as x86/conv_s8.c's requant_sse does it (its comment has the bounds):
 * y = float(x) * float(M / 2^(31+r)) clamped to [lo - off, hi - off] and
 * rounded by adding 1.5 * 2^23; a lane whose y lies farther than tol from
 * the integer taken (every lane where r = 0: tol < 0) is recomputed by
 * wide_requant16. Some ten operations a lane where the exact form takes
 * twenty. */
VNNI static inline __m512i wide_guess16(const Wide *k, int32_t j0,
                                        __m512i x) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), _mm512_load_ps(k->scale + j0));
  y = _mm512_min_ps(_mm512_max_ps(y, _mm512_set1_ps((float)(k->lo - k->off))),
                    _mm512_set1_ps((float)(k->hi - k->off)));
  const __m512 t = _mm512_add_ps(y, magic);
  const __m512 d = _mm512_abs_ps(_mm512_sub_ps(y, _mm512_sub_ps(t, magic)));
  const __mmask16 unsure =
      _mm512_cmp_ps_mask(d, _mm512_load_ps(k->tol + j0), _CMP_GT_OQ);
  /* t's bits less magic's are the integer; the output offset added */
  const __m512i v = _mm512_sub_epi32(
      _mm512_castps_si512(t), _mm512_set1_epi32(0x4b400000 - k->off));
  return unsure && !k->keep
             ? _mm512_mask_blend_epi32(unsure, v, wide_requant16(k, j0, x))
             : v;
}

/* The four accumulators requantized into out, the channels in order (see
 * the opening comment), the chunk's len channels alone (mask mk). */
VNNI static inline void wide_store(const Wide *k, __m512i a0, __m512i a1,
                                   __m512i a2, __m512i a3, __mmask64 mk,
                                   int8_t *out) {
  __m512i r0, r1, r2, r3;
  if (k->guess) {
    r0 = wide_guess16(k, 0, a0), r1 = wide_guess16(k, 16, a1);
    r2 = wide_guess16(k, 32, a2), r3 = wide_guess16(k, 48, a3);
  } else {
    r0 = wide_requant16(k, 0, a0), r1 = wide_requant16(k, 16, a1);
    r2 = wide_requant16(k, 32, a2), r3 = wide_requant16(k, 48, a3);
  }
  /* within [lo, hi] of int8: the saturating packs only narrow */
  const __m512i v = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1),
                                       _mm512_packs_epi32(r2, r3));
  _mm512_mask_storeu_epi8(out, mk, v);
}

static inline __mmask64 len_mask(int32_t len) {
  return len >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << len) - 1;
}

/* Four rows of 64 channels' bytes interleaved per channel: q[k]'s lane
 * 4L + j holds channel 16L + 4k + j's four bytes, in row order. */
VNNI static inline void interleave4(__m512i t0, __m512i t1, __m512i t2,
                                    __m512i t3, __m512i *q) {
  const __m512i l01 = _mm512_unpacklo_epi8(t0, t1);
  const __m512i h01 = _mm512_unpackhi_epi8(t0, t1);
  const __m512i l23 = _mm512_unpacklo_epi8(t2, t3);
  const __m512i h23 = _mm512_unpackhi_epi8(t2, t3);
  q[0] = _mm512_unpacklo_epi16(l01, l23), q[1] = _mm512_unpackhi_epi16(l01, l23);
  q[2] = _mm512_unpacklo_epi16(h01, h23), q[3] = _mm512_unpackhi_epi16(h01, h23);
}

/* Group g of the chunk's weights from four rows of its channels (r[i]
 * NULL: a row of zeros), interleaved as the accumulators' lanes, each
 * lane's four weights added to sum[k] (vpdpbusd with bytes of 1). */
VNNI static inline void pack_group(Wide *k, int32_t g,
                                   const int8_t *const *r, __mmask64 mk,
                                   __m512i *sum) {
  __m512i t[4], q[4];
  for (int i = 0; i < 4; i++)
    t[i] = r[i] ? _mm512_maskz_loadu_epi8(mk, r[i]) : _mm512_setzero_si512();
  interleave4(t[0], t[1], t[2], t[3], q);
  const __m512i ones = _mm512_set1_epi8(1);
  for (int i = 0; i < 4; i++) {
    _mm512_store_si512(k->w[g] + 64 * i, q[i]);
    sum[i] = _mm512_dpbusd_epi32(sum[i], ones, q[i]);
  }
}

/* len int32 from v (channels in order; one for all with !pc), 0 past
 * them, into the accumulators' lane order: out[k] holds 128-bit lane k
 * of each 16 channels, a 4x4 transpose of 128-bit lanes. */
VNNI static inline void lane_order(const int32_t *v, int pc, int32_t len,
                                   __m512i *out) {
  __m512i c[4];
  for (int i = 0; i < 4; i++) {
    const int32_t n = len - 16 * i;
    const __mmask16 m =
        n >= 16 ? (__mmask16)0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
    c[i] = !v   ? _mm512_setzero_si512()
           : pc ? _mm512_maskz_loadu_epi32(m, v + 16 * i)
                : _mm512_maskz_set1_epi32(m, v[0]);
  }
  const __m512i t0 = _mm512_shuffle_i32x4(c[0], c[1], 0x44);
  const __m512i t1 = _mm512_shuffle_i32x4(c[0], c[1], 0xee);
  const __m512i t2 = _mm512_shuffle_i32x4(c[2], c[3], 0x44);
  const __m512i t3 = _mm512_shuffle_i32x4(c[2], c[3], 0xee);
  out[0] = _mm512_shuffle_i32x4(t0, t2, 0x88);
  out[1] = _mm512_shuffle_i32x4(t0, t2, 0xdd);
  out[2] = _mm512_shuffle_i32x4(t1, t3, 0x88);
  out[3] = _mm512_shuffle_i32x4(t1, t3, 0xdd);
}

/* The chunk of len channels at co0: each lane's constants, the
 * corrections bias + (io - 128) * sum(w) from sum (the lanes' sums of
 * weights); lanes past len all 0. */
VNNI static inline void pack_consts(Wide *k, const Conv *c,
                                    const TnCrtQuant *q, const int32_t *bias,
                                    int32_t co0, int32_t len,
                                    const __m512i *sum) {
  const int pc = q->per_channel != 0;
  __m512i b[4], m[4], s[4];
  lane_order(bias ? bias + co0 : NULL, 1, len, b);
  lane_order(q->multiplier + (pc ? co0 : 0), pc, len, m);
  lane_order(q->shift + (pc ? co0 : 0), pc, len, s);
  const __m512i io128 = _mm512_set1_epi32(c->io - 128);
  const __m512i one = _mm512_set1_epi32(1);
  for (int i = 0; i < 4; i++) {
    const __m512i r = _mm512_sub_epi32(_mm512_setzero_si512(), s[i]);
    _mm512_store_si512(k->corr + 16 * i,
                       _mm512_add_epi32(b[i], _mm512_mullo_epi32(io128, sum[i])));
    _mm512_store_si512(k->m + 16 * i, m[i]);
    _mm512_store_si512(k->r + 16 * i, r);
    /* 2^(r-1), 0 for r = 0 (a count of 2^32 - 1 shifts everything out) */
    _mm512_store_si512(k->half + 16 * i,
                       _mm512_sllv_epi32(one, _mm512_sub_epi32(r, one)));
    /* wide_guess16's: M / 2^(31+r) (2^-r from its exponent bits), and
     * tol = 1/2 - 2^-(r+1) - 2^-11, -1 for r = 0 (every value unsure),
     * 1 for M = 0 (y = 0 exactly): the lanes past len, which are not
     * stored, are never unsure (one unsure lane sent all sixteen to
     * wide_requant16 at every pixel, as in the large ResNet's
     * 40-channel first layer) */
    const __m512 pot = _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127), r), 23));
    _mm512_store_ps(k->scale + 16 * i,
                    _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(m[i]),
                                                _mm512_set1_ps(0x1p-31f)),
                                  pot));
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 tol = _mm512_sub_ps(
        _mm512_sub_ps(half, _mm512_mul_ps(half, pot)), _mm512_set1_ps(0x1p-11f));
    const __m512 t = _mm512_mask_blend_ps(
        _mm512_cmpgt_epi32_mask(r, _mm512_setzero_si512()),
        _mm512_set1_ps(-1.0f), tol);
    _mm512_store_ps(k->tol + 16 * i,
                    _mm512_mask_blend_ps(
                        _mm512_cmpeq_epi32_mask(m[i], _mm512_setzero_si512()),
                        t, _mm512_set1_ps(1.0f)));
  }
}


/* ---- DW by columns ----------------------------------------------------- */

/* The column form of DW, for windows of 3 or 4 rows: a group is one
 * kernel column's rows (the fourth, past a 3-row window, with zero
 * weights), so the interleaved inputs of one input column under the
 * window's rows serve every output pixel whose window covers that
 * column: k_w pixels at stride 1, where the tap groups of dw_pixel
 * interleave each pixel's inputs anew (the same vpdpbusd count for 3x3,
 * a third of the vpunpck). An input column left or right of the input
 * and a kernel row above or below it read k->pad, whose share of the
 * correction cancels, so border pixels take the same loop. */

static int wide_fault; /* tn__crt_conv_wide_fault */
void tn__crt_conv_wide_fault(int how) {
  __atomic_store_n(&wide_fault, how, __ATOMIC_RELAXED);
}

/* The chunk of len channels at co0: kernel column kx's rows, as the
 * columns' inputs are interleaved, at w[kx], then the lanes' constants. */
VNNI static void dw_cols_pack(Wide *k, const Conv *c, const TnCrtQuant *q,
                              const int32_t *bias, int32_t co0,
                              int32_t len) {
  const TnCrtConv2d *p = c->p;
  __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512(), _mm512_setzero_si512()};
  for (int32_t kx = 0; kx < p->k_w; kx++) {
    const int8_t *r[4];
    for (int32_t i = 0; i < 4; i++)
      r[i] = i < p->k_h ? c->w + (ptrdiff_t)i * p->w_strides[0] +
                              (ptrdiff_t)kx * p->w_strides[1] + co0
                        : NULL;
    pack_group(k, kx, r, len_mask(len), sum);
  }
  pack_consts(k, c, q, bias, co0, len, sum);
}

/* v[j]: input column ic0 + j under the window's rows (row[i] NULL: above
 * or below the input, or past the window), the len channels loaded and
 * interleaved as the weights. */
VNNI static void dw_cols_in(const Wide *k, const int8_t *const *row,
                            ptrdiff_t is2, int32_t in_w, int32_t ic0,
                            int32_t n, __mmask64 mk, int8_t (*v)[4 * WIDE]) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  for (int32_t j = 0; j < n; j++) {
    const int32_t ic = ic0 + j;
    const int in = (uint32_t)ic < (uint32_t)in_w;
    __m512i t[4], q[4];
    for (int i = 0; i < 4; i++)
      t[i] = _mm512_xor_si512(
          _mm512_maskz_loadu_epi8(mk, in && row[i] ? row[i] + ic * is2 : k->pad),
          flip);
    interleave4(t[0], t[1], t[2], t[3], q);
    for (int i = 0; i < 4; i++) _mm512_store_si512(v[j] + 64 * i, q[i]);
  }
}

/* One pixel from its kw columns' inputs, at v, v + vs, ... */
VNNI static inline __attribute__((always_inline)) void
dw_cols_pixel(const Wide *k, int32_t kw, const int8_t *v, ptrdiff_t vs,
              __mmask64 mk, int8_t *out) {
  __m512i a0 = _mm512_load_si512(k->corr), a1 = _mm512_load_si512(k->corr + 16);
  __m512i a2 = _mm512_load_si512(k->corr + 32);
  __m512i a3 = _mm512_load_si512(k->corr + 48);
  for (int32_t kx = 0; kx < kw; kx++, v += vs) {
    const int8_t *w = k->w[kx];
    a0 = _mm512_dpbusd_epi32(a0, _mm512_load_si512(v), _mm512_load_si512(w));
    a1 = _mm512_dpbusd_epi32(a1, _mm512_load_si512(v + 64),
                             _mm512_load_si512(w + 64));
    a2 = _mm512_dpbusd_epi32(a2, _mm512_load_si512(v + 128),
                             _mm512_load_si512(w + 128));
    a3 = _mm512_dpbusd_epi32(a3, _mm512_load_si512(v + 192),
                             _mm512_load_si512(w + 192));
  }
  wide_store(k, a0, a1, a2, a3, mk, out);
}

/* Output row oy's pixels of the chunk (len channels from x) into orow,
 * ostep apart: passes of up to `span` pixels, each setting up the input
 * columns its windows cover. */
VNNI static void dw_cols_row(const Wide *k, const TnCrtConv2d *p,
                             const int8_t *x, int32_t oy, int32_t len,
                             int8_t *orow, ptrdiff_t ostep) {
  int8_t v[WIDE_COLS][4 * WIDE] __attribute__((aligned(64)));
  const __mmask64 mk = len_mask(len);
  const int32_t iy0 = oy * p->stride_h - p->pad_top, sw = p->stride_w;
  const int32_t dw = p->dilation_w, kw = p->k_w;
  const int32_t span = (WIDE_COLS - 1 - (kw - 1) * dw) / sw + 1;
  const int32_t kwf =
      kw - (__atomic_load_n(&wide_fault, __ATOMIC_RELAXED) == 1);
  const int8_t *row[4];
  for (int32_t i = 0; i < 4; i++) {
    const int32_t iy = iy0 + i * p->dilation_h;
    row[i] = i < p->k_h && (uint32_t)iy < (uint32_t)p->in_h
                 ? x + (ptrdiff_t)iy * p->in_strides[1]
                 : NULL;
  }
  for (int32_t ox0 = 0; ox0 < p->out_w; ox0 += span) {
    const int32_t n = p->out_w - ox0 < span ? p->out_w - ox0 : span;
    const int32_t ic0 = ox0 * sw - p->pad_left;
    dw_cols_in(k, row, p->in_strides[2], p->in_w, ic0,
               (n - 1) * sw + (kw - 1) * dw + 1, mk, v);
    const ptrdiff_t vs = (ptrdiff_t)dw * 4 * WIDE;
    for (int32_t i = 0; i < n; i++) {
      const int8_t *vi = v[i * sw];
      int8_t *const po = orow + (ptrdiff_t)(ox0 + i) * ostep;
      if (kwf == 3)
        dw_cols_pixel(k, 3, vi, vs, mk, po);
      else
        dw_cols_pixel(k, kwf, vi, vs, mk, po);
    }
  }
}


/* ---- DW ------------------------------------------------------------------ */

/* Each tap's input and weight offsets (the taps past the window: 0). */
static void dw_taps(Wide *k, const TnCrtConv2d *p) {
  const int32_t taps = p->k_h * p->k_w;
  for (int32_t t = 0, ky = 0, kx = 0; t < 4 * k->groups; t++) {
    const int in = t < taps;
    k->ky[t] = ky, k->kx[t] = kx;
    k->xo[t] = in ? (ptrdiff_t)ky * p->dilation_h * p->in_strides[1] +
                        (ptrdiff_t)kx * p->dilation_w * p->in_strides[2]
                  : 0;
    k->wo[t] = in ? (ptrdiff_t)ky * p->w_strides[0] +
                        (ptrdiff_t)kx * p->w_strides[1]
                  : 0;
    if (++kx == p->k_w) kx = 0, ky++;
  }
}

/* The chunk of len channels at co0: group g's four taps of lane l at
 * w[g][4l ..] (the taps' rows of channels interleaved as the inputs
 * are), then the lanes' constants. With rep (a layer of len channels,
 * len dividing 64), lane j holds channel j % len: 64 / len neighbouring
 * pixels a pass (dw_layer), and lanes 0 .. len - 1 as without (the
 * repeated rows and constants: 1 KiB more of stack). */
VNNI static void dw_pack(Wide *k, const Conv *c, const TnCrtQuant *q,
                         const int32_t *bias, int32_t co0, int32_t len,
                         int rep) {
  const int32_t taps = c->p->k_h * c->p->k_w;
  const __mmask64 mk = len_mask(rep ? WIDE : len);
  __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512(), _mm512_setzero_si512()};
  int8_t wr[4][WIDE];
  for (int32_t g = 0; g < k->groups; g++) {
    const int8_t *r[4];
    for (int32_t i = 0; i < 4; i++) {
      const int32_t t = 4 * g + i;
      r[i] = t < taps ? c->w + k->wo[t] + co0 : NULL;
      if (rep && r[i]) { /* len divides WIDE: whole copies, no division */
        for (int32_t j = 0; j < WIDE; j += len) memcpy(wr[i] + j, r[i], (size_t)len);
        r[i] = wr[i];
      }
    }
    pack_group(k, g, r, mk, sum);
  }
  if (!rep) {
    pack_consts(k, c, q, bias, co0, len, sum);
    return;
  }
  int32_t b[WIDE], m[WIDE], sh[WIDE];
  const int pc = q->per_channel != 0;
  for (int32_t j0 = 0; j0 < WIDE; j0 += len)
    for (int32_t j = 0; j < len; j++) {
      b[j0 + j] = bias ? bias[co0 + j] : 0;
      m[j0 + j] = q->multiplier[pc ? co0 + j : 0];
      sh[j0 + j] = q->shift[pc ? co0 + j : 0];
    }
  TnCrtQuant qr = *q;
  qr.per_channel = 1, qr.multiplier = m, qr.shift = sh;
  pack_consts(k, c, &qr, b, 0, WIDE, sum);
}

/* One pixel: the taps' 64 channels at base + xo[t] for a window wholly
 * inside the input (full), else at tp[t] (mk: the lanes loaded and
 * stored), requantized into out. With s2, up to 64 / C pixels of a
 * layer of C channels (C a multiple of 8 dividing 64) at stride_w 2,
 * their windows whole across (tp[t]: k->pad for a kernel row above or
 * below the input): a tap's inputs for those pixels are every other run
 * of C bytes of the 128 from there (ma, mb: the runs of the pixels taken
 * in each half, so nothing past the last pixel's run is read), gathered
 * into one vector in pixel order by a permute of quadwords (idx). */
VNNI static inline __attribute__((always_inline)) void
dw_pixel(const Wide *k, int full, int s2, const int8_t *base,
         const int8_t *const *tp, __m512i idx, __mmask64 ma, __mmask64 mb,
         __mmask64 mk, int8_t *out) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  __m512i a0 = _mm512_load_si512(k->corr), a1 = _mm512_load_si512(k->corr + 16);
  __m512i a2 = _mm512_load_si512(k->corr + 32);
  __m512i a3 = _mm512_load_si512(k->corr + 48);
  for (int32_t g = 0; g < k->groups; g++) {
    const int32_t t = 4 * g;
#define DW_AT(i) (full ? base + k->xo[t + i] : tp[t + i])
#define DW_TAP(i)                                                         \
  _mm512_xor_si512(                                                       \
      s2 ? _mm512_permutex2var_epi64(                                     \
               _mm512_maskz_loadu_epi8(ma, DW_AT(i)), idx,                \
               _mm512_maskz_loadu_epi8(mb, DW_AT(i) + WIDE))              \
         : _mm512_maskz_loadu_epi8(mk, DW_AT(i)),                         \
      flip)
    const __m512i t0 = DW_TAP(0), t1 = DW_TAP(1);
    const __m512i t2 = DW_TAP(2), t3 = DW_TAP(3);
#undef DW_TAP
#undef DW_AT
    __m512i v[4];
    interleave4(t0, t1, t2, t3, v);
    const int8_t *w = k->w[g];
    a0 = _mm512_dpbusd_epi32(a0, v[0], _mm512_load_si512(w));
    a1 = _mm512_dpbusd_epi32(a1, v[1], _mm512_load_si512(w + 64));
    a2 = _mm512_dpbusd_epi32(a2, v[2], _mm512_load_si512(w + 128));
    a3 = _mm512_dpbusd_epi32(a3, v[3], _mm512_load_si512(w + 192));
  }
  wide_store(k, a0, a1, a2, a3, mk, out);
}

/* The bytes of n pixels' runs of c at stride 2c within 128 bytes: *ma
 * those in the first 64, *mb those in the second. */
static inline void runs2_masks(int32_t c, int32_t n, __mmask64 *ma,
                               __mmask64 *mb) {
  __mmask64 a = 0, b = 0;
  const __mmask64 run = len_mask(c);
  for (int32_t i = 0, at = 0; i < n; i++, at += 2 * c)
    if (at < WIDE)
      a |= run << at;
    else
      b |= run << (at - WIDE);
  *ma = a, *mb = b;
}

/* A row of len channels from the ring (pixels step apart) to out. */
static void ring_out(const TnCrtConv2d *p, const int8_t *src, ptrdiff_t step,
                     int32_t len, int8_t *out) {
  for (int32_t x = 0; x < p->out_w; x++)
    memcpy(out + (ptrdiff_t)x * p->out_strides[2], src + (ptrdiff_t)x * step,
           (size_t)len);
}

/* The layer, chunk by chunk; with ring (in place, stride_h 1), each
 * output row of a chunk waits there until its input row has been read
 * for the last time, as conv_s8.c's ring does it. A layer of fewer than
 * 64 channels, a divisor of 64 (VWW's 8, 16 and 32), at stride_w 1, or
 * at stride_w 2 with a multiple of 8 channels, with its pixels' channels
 * contiguous in and out, fills the lanes with pix = 64 / out_c
 * neighbouring pixels whose windows lie inside the input's columns
 * (their inputs at a tap are one run of 64 bytes, or every other run of
 * out_c bytes of 128 at stride_w 2; a kernel row above or below the
 * input reads k->pad for all of them; the weights and constants
 * repeated per pixel by dw_pack), one pixel a pass elsewhere; its ring
 * keeps the pixels out_c apart. */
VNNI static void dw_layer(Wide *k, const Conv *c, const TnCrtQuant *q,
                          const int32_t *bias, int8_t *out, int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  const int32_t ntaps = p->k_h * p->k_w;
  const int32_t rows = p->pad_top < p->out_h ? p->pad_top + 1 : p->out_h;
  const int32_t sw = p->stride_w;
  const int rep = p->out_c < WIDE && WIDE % p->out_c == 0 &&
                  (sw == 1 || (sw == 2 && p->out_c % 8 == 0)) &&
                  p->in_strides[2] == p->out_c &&
                  (ring || p->out_strides[2] == p->out_c);
  /* windows of 3 or 4 rows: the column form (dw_cols_row) */
  const int cols = !rep && (p->k_h == 3 || p->k_h == 4) &&
                   p->k_w <= WIDE_GROUPS &&
                   (int64_t)(p->k_w - 1) * p->dilation_w + 1 <= WIDE_COLS;
  const int32_t pix = rep ? WIDE / p->out_c : 1;
  const ptrdiff_t rstep = rep ? p->out_c : WIDE; /* the ring's pixels */
  const ptrdiff_t slot = (ptrdiff_t)p->out_w * rstep;
  /* the output columns [fx0, fx1) whose windows are whole across */
  const int64_t last = (int64_t)p->in_w - 1 + p->pad_left -
                       (int64_t)(p->k_w - 1) * p->dilation_w;
  const int64_t fx0 = ((int64_t)p->pad_left + sw - 1) / sw,
                fx_end = last < 0 ? 0 : last / sw + 1,
                fx1 = fx_end < p->out_w ? fx_end : p->out_w;
  /* stride_w 2: output quadword j is pixel j / (C / 8)'s quadword j %
   * (C / 8), at quadword 2 * C / 8 * pixel + j % (C / 8) of the 128
   * bytes read */
  int64_t qi[8] = {0};
  __mmask64 ma = 0, mb = 0;
  if (rep && sw == 2) {
    const int32_t qc = p->out_c / 8;
    for (int32_t j = 0; j < 8; j++) qi[j] = 2 * qc * (j / qc) + j % qc;
    runs2_masks(p->out_c, pix, &ma, &mb);
  }
  const __m512i idx = _mm512_loadu_si512(qi);
  dw_taps(k, p);
  for (int32_t co0 = 0; co0 < p->out_c; co0 += WIDE) {
    const int32_t len = p->out_c - co0 < WIDE ? p->out_c - co0 : WIDE;
    const __mmask64 mk = len_mask(len);
    if (cols)
      dw_cols_pack(k, c, q, bias, co0, len);
    else
      dw_pack(k, c, q, bias, co0, len, rep);
    for (int32_t n = 0; n < p->batch; n++) {
      const int8_t *x = c->in + (ptrdiff_t)n * p->in_strides[0] + co0;
      int8_t *const out_n = out + (ptrdiff_t)n * p->out_strides[0] + co0;
      for (int32_t oy = 0, s = 0; oy < p->out_h; oy++) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        int32_t ky0, ky1;
        taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
        int8_t *const orow =
            ring ? ring + s * slot : out_n + (ptrdiff_t)oy * p->out_strides[1];
        const ptrdiff_t ostep = ring ? rstep : p->out_strides[2];
        if (cols) dw_cols_row(k, p, x, oy, len, orow, ostep);
        for (int32_t ox = 0, npx; !cols && ox < p->out_w; ox += npx) {
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          int32_t kx0, kx1;
          taps(ix0, p->k_w, p->dilation_w, p->in_w, &kx0, &kx1);
          const ptrdiff_t o = (ptrdiff_t)iy0 * p->in_strides[1] +
                              (ptrdiff_t)ix0 * p->in_strides[2];
          int8_t *const po = orow + (ptrdiff_t)ox * ostep;
          npx = 1;
          const int whole = ky0 == 0 && ky1 == p->k_h;
          const int8_t *tp[4 * WIDE_GROUPS];
          if (rep && ox >= fx0 && ox < fx1) {
            /* up to pix pixels with windows whole across; a kernel row
             * above or below the input reads k->pad for all of them */
            npx = fx1 - ox < pix ? (int32_t)(fx1 - ox) : pix;
            if (!whole)
              for (int32_t t = 0; t < 4 * k->groups; t++)
                tp[t] = t < ntaps && (uint32_t)(k->ky[t] - ky0) <
                                         (uint32_t)(ky1 - ky0)
                            ? x + (o + k->xo[t])
                            : k->pad;
            __mmask64 na = ma, nb = mb;
            if (sw == 2 && npx < pix) runs2_masks(len, npx, &na, &nb);
            const __mmask64 no = len_mask(npx * len);
            if (sw == 1 && whole)
              dw_pixel(k, 1, 0, x + o, NULL, idx, 0, 0, no, po);
            else if (sw == 1)
              dw_pixel(k, 0, 0, NULL, tp, idx, 0, 0, no, po);
            else if (whole)
              dw_pixel(k, 1, 1, x + o, NULL, idx, na, nb, no, po);
            else
              dw_pixel(k, 0, 1, NULL, tp, idx, na, nb, no, po);
            continue;
          }
          if (whole && kx0 == 0 && kx1 == p->k_w) {
            dw_pixel(k, 1, 0, x + o, NULL, idx, 0, 0, mk, po);
            continue;
          }
          for (int32_t t = 0; t < 4 * k->groups; t++) {
            const int in = t < ntaps &&
                           (uint32_t)(k->ky[t] - ky0) < (uint32_t)(ky1 - ky0) &&
                           (uint32_t)(k->kx[t] - kx0) < (uint32_t)(kx1 - kx0);
            tp[t] = in ? x + (o + k->xo[t]) : k->pad;
          }
          dw_pixel(k, 0, 0, NULL, tp, idx, 0, 0, mk, po);
        }
        if (!ring) continue;
        s = s + 1 == rows ? 0 : s + 1;
        /* input row oy - pad_top has had its last reader; rows is then
         * pad_top + 1, so that row's slot is the next one */
        if (oy >= p->pad_top)
          ring_out(p, ring + s * slot, rstep, len,
                   out_n + (ptrdiff_t)(oy - p->pad_top) * p->out_strides[1]);
      }
      if (ring)
        for (int32_t r = p->out_h > p->pad_top ? p->out_h - p->pad_top : 0;
             r < p->out_h; r++)
          ring_out(p, ring + (r % rows) * slot, rstep, len,
                   out_n + (ptrdiff_t)r * p->out_strides[1]);
    }
  }
}

/* ---- direct -------------------------------------------------------------- */

/* The chunk of len channels at co0: kernel row ky's group g (bytes
 * 4g .. 4g + 3 of its run of R, the rest 0) of lane l at
 * w[ky * gr + g][4l ..] (BCAST: each byte's weights are a row of
 * contiguous channels), then the lanes' constants. */
VNNI static void direct_pack(Wide *k, const Conv *c, const TnCrtQuant *q,
                             const int32_t *bias, int32_t co0, int32_t len,
                             int32_t run, int32_t gr) {
  const TnCrtConv2d *p = c->p;
  const __mmask64 mk = len_mask(len);
  __m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512(), _mm512_setzero_si512()};
  for (int32_t ky = 0; ky < p->k_h; ky++)
    for (int32_t g = 0; g < gr; g++) {
      const int8_t *r[4];
      for (int32_t i = 0; i < 4; i++) {
        const int32_t e = 4 * g + i; /* tap e / cpg, channel e % cpg */
        r[i] = e < run ? c->w + (ptrdiff_t)ky * p->w_strides[0] +
                             (ptrdiff_t)(e / c->cpg) * p->w_strides[1] +
                             (ptrdiff_t)(e % c->cpg) * p->w_strides[2] + co0
                       : NULL;
      }
      pack_group(k, ky * gr + g, r, mk, sum);
    }
  pack_consts(k, c, q, bias, co0, len, sum);
}

/* Bytes e[0 .. n) (n 1 to 4) as x + 128 in every lane. */
VNNI static inline __m512i direct_quad(const int8_t *e, int32_t n) {
  uint32_t v = 0;
  if (n == 4)
    memcpy(&v, e, 4);
  else
    for (int32_t b = 0; b < n; b++) v |= (uint32_t)(uint8_t)e[b] << (8 * b);
  return _mm512_set1_epi32((int32_t)(v ^ 0x80808080u));
}

/* One pixel: kernel row ky's run of `run` bytes at rp[ky], requantized
 * into out. */
VNNI static inline __attribute__((always_inline)) void
direct_pixel(const Wide *k, const int8_t *const *rp, int32_t kh, int32_t run,
             __mmask64 mk, int8_t *out) {
  __m512i a0 = _mm512_load_si512(k->corr), a1 = _mm512_load_si512(k->corr + 16);
  __m512i a2 = _mm512_load_si512(k->corr + 32);
  __m512i a3 = _mm512_load_si512(k->corr + 48);
  const int8_t *w = k->w[0];
  for (int32_t ky = 0; ky < kh; ky++) {
    const int8_t *e = rp[ky];
    for (int32_t b = 0; b < run; b += 4, w += 4 * WIDE) {
      const __m512i v = direct_quad(e + b, run - b < 4 ? run - b : 4);
      a0 = _mm512_dpbusd_epi32(a0, v, _mm512_load_si512(w));
      a1 = _mm512_dpbusd_epi32(a1, v, _mm512_load_si512(w + 64));
      a2 = _mm512_dpbusd_epi32(a2, v, _mm512_load_si512(w + 128));
      a3 = _mm512_dpbusd_epi32(a3, v, _mm512_load_si512(w + 192));
    }
  }
  wide_store(k, a0, a1, a2, a3, mk, out);
}

VNNI static void direct_layer(Wide *k, const Conv *c, const TnCrtQuant *q,
                              const int32_t *bias, int8_t *out) {
  const TnCrtConv2d *p = c->p;
  const int32_t run = p->k_w * c->cpg, gr = (run + 3) / 4;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];
  for (int32_t co0 = 0; co0 < p->out_c; co0 += WIDE) {
    const int32_t len = p->out_c - co0 < WIDE ? p->out_c - co0 : WIDE;
    const __mmask64 mk = len_mask(len);
    direct_pack(k, c, q, bias, co0, len, run, gr);
    for (int32_t n = 0; n < p->batch; n++) {
      const int8_t *x = c->in + (ptrdiff_t)n * p->in_strides[0];
      int8_t *const out_n = out + (ptrdiff_t)n * p->out_strides[0] + co0;
      for (int32_t oy = 0; oy < p->out_h; oy++) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        int32_t ky0, ky1;
        taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
        int8_t *const orow = out_n + (ptrdiff_t)oy * p->out_strides[1];
        for (int32_t ox = 0; ox < p->out_w; ox++) {
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          int32_t kx0, kx1;
          taps(ix0, p->k_w, 1, p->in_w, &kx0, &kx1);
          const int whole = kx0 == 0 && kx1 == p->k_w;
          const int8_t *rp[WIDE_GROUPS];
          for (int32_t ky = 0; ky < p->k_h; ky++) {
            if (ky < ky0 || ky >= ky1) {
              rp[ky] = k->pad;
              continue;
            }
            /* the row's first byte (at kernel column kx0 if cut) */
            const ptrdiff_t o =
                (ptrdiff_t)(iy0 + ky * p->dilation_h) * is1 +
                (ptrdiff_t)(ix0 + (whole ? 0 : kx0)) * is2;
            if (whole) {
              rp[ky] = x + o;
              continue;
            }
            int8_t *const t = k->tmp[ky];
            memset(t, -c->io, (size_t)run);
            if (kx1 > kx0)
              memcpy(t + kx0 * c->cpg, x + o,
                     (size_t)(kx1 - kx0) * (size_t)c->cpg);
            rp[ky] = t;
          }
          direct_pixel(k, rp, p->k_h, run, mk,
                       orow + (ptrdiff_t)ox * p->out_strides[2]);
        }
      }
    }
  }
}

/* ---- the entry ----------------------------------------------------------- */

int tn__crt_conv_wide(const Conv *c, const TnCrtQuant *q, int32_t lo,
                      int32_t hi, const int32_t *bias, int8_t *out,
                      int in_place) {
  const TnCrtConv2d *p = c->p;
  if (!tn__crt_avx512vnni()) /* AVX2 alone: its depthwise form */
    return tn__crt_conv_dw_avx2_layer(c, q, lo, hi, bias, out, in_place);
  if (p->out_strides[3] != 1) return 0;
  const int32_t taps = p->k_h * p->k_w, run = p->k_w * c->cpg;
  const int32_t rows = p->pad_top < p->out_h ? p->pad_top + 1 : p->out_h;
  const int dw = c->mode == DW && taps <= 4 * WIDE_GROUPS &&
                 (!in_place || (int64_t)rows * p->out_w * WIDE <= WIDE_RING);
  /* few input channels, a kernel row of up to WIDE_ROW bytes (undilated
   * channels-last), at least two taps, 32 channels or more */
  const int direct = !in_place && c->mode == BCAST && p->groups == 1 &&
                     c->merge && p->in_strides[3] == 1 && p->dilation_w == 1 &&
                     p->in_strides[2] == c->cpg && c->cpg <= 4 &&
                     taps >= 2 && run <= WIDE_ROW && p->out_c >= 32 &&
                     (int64_t)p->k_h * ((run + 3) / 4) <= WIDE_GROUPS;
  if (!(dw || direct) || !wide_requant_ok(q, p->out_c)) return 0;
  Wide k;
  k.off = q->output_offset, k.lo = lo, k.hi = hi;
  k.guess = k.off >= -512 && k.off <= 512;
  k.keep = __atomic_load_n(&wide_fault, __ATOMIC_RELAXED) == 2;
  memset(k.pad, -c->io, sizeof k.pad); /* io in [-127, 128] */
  if (dw) {
    int8_t ring[WIDE_RING];
    k.groups = (taps + 3) / 4;
    dw_layer(&k, c, q, bias, out, in_place ? ring : NULL);
  } else {
    direct_layer(&k, c, q, bias, out);
  }
  return 1;
}
#else
typedef int tn__crt_unused_x86_conv_wide_s8; /* no AVX2: nothing here */
#endif /* TN_CRT_HAVE_AVX2 */
