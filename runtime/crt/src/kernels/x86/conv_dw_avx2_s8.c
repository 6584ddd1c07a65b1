/*
 * x86/conv_dw_avx2_s8.c: the AVX2 form of a whole depthwise layer of the
 * int8 convolution (conv_s8.c; DW: multiplier 1, channels contiguous),
 * 32 channels a pass, one output pixel at a time, every pixel of the
 * layer in one loop: what x86/conv_wide_s8.c's DW form does with AVX-512
 * VNNI, for a CPU (or a cap, tn_crt_isa_limit) that stops at AVX2. The
 * block forms of x86/conv_s8.c took 16 channels a pass, two pixels a
 * call, set each block up again, and requantized in float with the
 * doubtful lanes redone one by one. Here:
 *  - Exact products in int16: a tap's 16 channels are sign-extended to
 *    int16 (vpmovsxbw from memory), two taps' vectors interleaved by
 *    vpunpck[lh]wd (within 128-bit lanes), and vpmaddwd adds each
 *    channel's two products into an int32 lane: |x * w| <= 2^14, so the
 *    pair sums are exact and the int32 sums wrap as the portable uint32
 *    ones. Accumulator 2b + h's lane j holds channel 16b + 4h + j (j < 4)
 *    or 16b + 4h + j + 4 (j >= 4); the weights and the lanes' constants
 *    are packed in that order, and vpackssdw, vpacksswb and one vpermq
 *    put the channels back in order.
 *  - The input offset is folded out: the accumulators start from
 *    bias + io * sum(w), and a tap outside the input reads bytes of -io,
 *    which cancel its share, so border pixels take the same loop (an odd
 *    last tap pairs with zero weights).
 *  - The requantization is TFLite's, exactly, 8 lanes at a time (as
 *    conv_s8.h's requant_exact for M >= 0 and a shift in [-31, 0]): h =
 *    (|x| * M + 2^30 - [x < 0]) >> 31 in 64 bits (vpmuludq on the even
 *    lanes, then the odd ones), +-((h + 2^(r-1)) >> r), the offset added,
 *    clamped. No lane is redone.
 *  - A layer whose channels are not a multiple of 8 (the last pass reads
 *    8 or 16 bytes a tap) takes the other forms.
 * In place (a ROWS layer: out is the input), each output row of a pass
 * waits in a ring on the stack until its input row has been read for the
 * last time, as conv_s8.c's ring does it. Set-up per pass: the weights of
 * up to 2 * DW2_PAIRS taps widened into pairs and each lane's constants.
 * Compiled with a target attribute, taken where tn__crt_avx2() says the
 * CPU runs AVX2 and tn__crt_conv_wide has not taken the layer; compiles to
 * nothing where isa.h says AVX2 forms are out.
 */
#include "conv_s8.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#include "crt_libc.h"

#define AVX2 __attribute__((target("avx2")))

/* Channels a pass; pairs of taps at most; bytes of the in-place ring. */
enum { DW2 = 32, DW2_PAIRS = 32, DW2_RING = 8192 };

typedef struct {
  int16_t w[DW2_PAIRS][4 * 16] __attribute__((aligned(32)));
  int32_t corr[DW2] __attribute__((aligned(32))); /* bias + io * sum(w) */
  uint32_t m[DW2] __attribute__((aligned(32)));
  uint32_t r[DW2] __attribute__((aligned(32)));
  uint32_t half[DW2] __attribute__((aligned(32)));
  int8_t pad[DW2]; /* -io */
  ptrdiff_t xo[2 * DW2_PAIRS];
  int32_t ky[2 * DW2_PAIRS], kx[2 * DW2_PAIRS];
  int32_t off, lo, hi, pairs, taps;
} Dw2;

static int dw2_fault; /* tn__crt_conv_dw_avx2_fault */
void tn__crt_conv_dw_avx2_fault(int how) {
  __atomic_store_n(&dw2_fault, how, __ATOMIC_RELAXED);
}

/* The channel of accumulator lane l (0 .. 31), see the opening comment. */
static inline int32_t lane_channel(int32_t l) {
  const int32_t k = l / 8, j = l % 8;
  return 16 * (k / 2) + 4 * (k % 2) + (j < 4 ? j : j + 4);
}

/* The pass of len channels at co0: pair i's weights of lane l at
 * w[i][2l], w[i][2l + 1] (0 past len and past the last tap), then the
 * lanes' constants. */
static void dw2_pack(Dw2 *k, const Conv *c, const TnCrtQuant *q,
                     const int32_t *bias, int32_t co0, int32_t len) {
  const TnCrtConv2d *p = c->p;
  const int pc = q->per_channel != 0;
  for (int32_t l = 0; l < DW2; l++) {
    const int32_t ch = lane_channel(l);
    const int in = ch < len;
    int32_t sum = 0; /* |sum| <= 128 * 2 * DW2_PAIRS */
    for (int32_t i = 0; i < k->pairs; i++)
      for (int32_t h = 0; h < 2; h++) {
        const int32_t t = 2 * i + h;
        const int8_t wv =
            in && t < k->taps
                ? c->w[(ptrdiff_t)k->ky[t] * p->w_strides[0] +
                       (ptrdiff_t)k->kx[t] * p->w_strides[1] + co0 + ch]
                : 0;
        k->w[i][2 * l + h] = wv;
        sum += wv;
      }
    const int32_t j = pc ? co0 + ch : 0;
    const uint32_t r = in ? (uint32_t)-q->shift[j] : 0;
    k->corr[l] = (int32_t)((in && bias ? (uint32_t)bias[co0 + ch] : 0u) +
                           (uint32_t)sum * (uint32_t)c->io);
    k->m[l] = in ? (uint32_t)q->multiplier[j] : 0;
    k->r[l] = r;
    k->half[l] = r > 0 ? UINT32_C(1) << (r - 1) : 0;
  }
  /* (how == 1 drops channel 31's rounding step: a broken form for the
   * tests) */
  if (__atomic_load_n(&dw2_fault, __ATOMIC_RELAXED) == 1) k->half[31] = 0;
}

/* requant_exact of the 8 lanes of x at lanes j0 .. j0 + 7. */
AVX2 static inline __m256i dw2_requant8(const Dw2 *k, int32_t j0, __m256i x) {
  const __m256i m = _mm256_load_si256((const __m256i *)(k->m + j0));
  const __m256i s = _mm256_srai_epi32(x, 31); /* all ones where x < 0 */
  const __m256i ax = _mm256_abs_epi32(x);     /* |x| (2^31 for INT32_MIN) */
  const __m256i rnd = _mm256_add_epi32(_mm256_set1_epi32(1 << 30), s);
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  /* even lanes: h in the low half of each 64 bits */
  const __m256i he = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(ax, m), _mm256_and_si256(rnd, low)),
      31);
  /* odd lanes: (sum << 1) has h in its high half */
  const __m256i ho = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(ax, 32),
                                        _mm256_srli_epi64(m, 32)),
                       _mm256_srli_epi64(rnd, 32)),
      1);
  const __m256i h = _mm256_blend_epi32(he, ho, 0xaa);
  const __m256i mg = _mm256_srlv_epi32(
      _mm256_add_epi32(h, _mm256_load_si256((const __m256i *)(k->half + j0))),
      _mm256_load_si256((const __m256i *)(k->r + j0)));
  __m256i v = _mm256_sub_epi32(_mm256_xor_si256(mg, s), s);
  v = _mm256_add_epi32(v, _mm256_set1_epi32(k->off));
  v = _mm256_max_epi32(v, _mm256_set1_epi32(k->lo));
  return _mm256_min_epi32(v, _mm256_set1_epi32(k->hi));
}

/* The 16 (b16) or 8 bytes of a block at e, sign-extended to int16. */
AVX2 static inline __m256i dw2_load(const int8_t *e, int b16) {
  return _mm256_cvtepi8_epi16(b16 ? _mm_loadu_si128((const __m128i *)e)
                                  : _mm_loadl_epi64((const __m128i *)e));
}

/* One pixel of a pass of nb blocks (1 or 2), the last one 16 (b16) or 8
 * channels: the taps' inputs at base + xo[t] for a window wholly inside
 * the input (full), else at tp[t], requantized into out. */
AVX2 static inline __attribute__((always_inline)) void
dw2_pixel(const Dw2 *k, int nb, int b16, int full, const int8_t *base,
          const int8_t *const *tp, int8_t *out) {
  __m256i a0 = _mm256_load_si256((const __m256i *)k->corr);
  __m256i a1 = _mm256_load_si256((const __m256i *)(k->corr + 8));
  __m256i a2 = _mm256_load_si256((const __m256i *)(k->corr + 16));
  __m256i a3 = _mm256_load_si256((const __m256i *)(k->corr + 24));
  for (int32_t i = 0; i < k->pairs; i++) {
    const int8_t *p0 = full ? base + k->xo[2 * i] : tp[2 * i];
    const int8_t *p1 = full ? base + k->xo[2 * i + 1] : tp[2 * i + 1];
    const __m256i *w = (const __m256i *)k->w[i];
    const __m256i x0 = dw2_load(p0, nb == 2 || b16);
    const __m256i x1 = dw2_load(p1, nb == 2 || b16);
    a0 = _mm256_add_epi32(
        a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1),
                              _mm256_load_si256(w)));
    a1 = _mm256_add_epi32(
        a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1),
                              _mm256_load_si256(w + 1)));
    if (nb == 2) {
      const __m256i y0 = dw2_load(p0 + 16, b16), y1 = dw2_load(p1 + 16, b16);
      a2 = _mm256_add_epi32(
          a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(y0, y1),
                                _mm256_load_si256(w + 2)));
      a3 = _mm256_add_epi32(
          a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(y0, y1),
                                _mm256_load_si256(w + 3)));
    }
  }
  /* within [lo, hi] of int8: the saturating packs only narrow */
  const __m256i s0 = _mm256_packs_epi32(dw2_requant8(k, 0, a0),
                                        dw2_requant8(k, 8, a1));
  const __m256i s1 = nb == 2 ? _mm256_packs_epi32(dw2_requant8(k, 16, a2),
                                                  dw2_requant8(k, 24, a3))
                             : s0;
  const __m256i v = _mm256_permute4x64_epi64(_mm256_packs_epi16(s0, s1), 0xd8);
  if (nb == 2 && b16) {
    _mm256_storeu_si256((__m256i *)out, v);
  } else if (nb == 2 || b16) {
    _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(v));
    if (nb == 2)
      _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(v, 1));
  } else {
    _mm_storel_epi64((__m128i *)out, _mm256_castsi256_si128(v));
  }
}

/* One output row of a pass: out_w pixels from the window origins of row
 * iy0 (kernel rows [ky0, ky1) inside the input), pixel ox at
 * orow + ox * ostep; x: the batch's input at the pass's channels. */
AVX2 static inline __attribute__((always_inline)) void
dw2_row(const Dw2 *k, const TnCrtConv2d *p, int nb, int b16, const int8_t *x,
        int32_t iy0, int32_t ky0, int32_t ky1, int8_t *orow,
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
      dw2_pixel(k, nb, b16, 1, x + o, NULL, po);
      continue;
    }
    const int8_t *tp[2 * DW2_PAIRS];
    for (int32_t t = 0; t < 2 * k->pairs; t++) {
      const int in = t < k->taps &&
                     (uint32_t)(k->ky[t] - ky0) < (uint32_t)(ky1 - ky0) &&
                     (uint32_t)(k->kx[t] - kx0) < (uint32_t)(kx1 - kx0);
      tp[t] = in ? x + (o + k->xo[t]) : k->pad;
    }
    dw2_pixel(k, nb, b16, 0, NULL, tp, po);
  }
}

/* dw2_row for the pass's shape (len 32, 24, 16 or 8 channels). */
AVX2 static void dw2_row_any(const Dw2 *k, const TnCrtConv2d *p, int32_t len,
                             const int8_t *x, int32_t iy0, int32_t ky0,
                             int32_t ky1, int8_t *orow, ptrdiff_t ostep) {
  switch (len) {
    case 32: dw2_row(k, p, 2, 1, x, iy0, ky0, ky1, orow, ostep); return;
    case 24: dw2_row(k, p, 2, 0, x, iy0, ky0, ky1, orow, ostep); return;
    case 16: dw2_row(k, p, 1, 1, x, iy0, ky0, ky1, orow, ostep); return;
    default: dw2_row(k, p, 1, 0, x, iy0, ky0, ky1, orow, ostep); return;
  }
}

/* Ring slot src's row of len channels (pixels DW2 apart) to its place. */
static void dw2_flush(const TnCrtConv2d *p, const int8_t *src, int32_t len,
                      int8_t *out) {
  for (int32_t x = 0; x < p->out_w; x++)
    memcpy(out + (ptrdiff_t)x * p->out_strides[2], src + (ptrdiff_t)x * DW2,
           (size_t)len);
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
      !tn__crt_conv_wide_requant_ok(q, p->out_c))
    return 0;
  Dw2 k;
  int8_t ring[DW2_RING];
  k.off = q->output_offset, k.lo = lo, k.hi = hi;
  k.taps = ntaps, k.pairs = (ntaps + 1) / 2;
  memset(k.pad, -c->io, sizeof k.pad); /* io in [-127, 128] */
  for (int32_t t = 0; t < 2 * k.pairs; t++) {
    const int32_t ky = t < ntaps ? t / p->k_w : 0;
    const int32_t kx = t < ntaps ? t % p->k_w : 0;
    k.ky[t] = ky, k.kx[t] = kx;
    k.xo[t] = (ptrdiff_t)ky * p->dilation_h * p->in_strides[1] +
              (ptrdiff_t)kx * p->dilation_w * p->in_strides[2];
  }
  const ptrdiff_t slot = (ptrdiff_t)p->out_w * DW2;
  for (int32_t co0 = 0; co0 < p->out_c; co0 += DW2) {
    const int32_t len = p->out_c - co0 < DW2 ? p->out_c - co0 : DW2;
    dw2_pack(&k, c, q, bias, co0, len);
    for (int32_t n = 0; n < p->batch; n++) {
      const int8_t *x = c->in + (ptrdiff_t)n * p->in_strides[0] + co0;
      int8_t *const out_n = out + (ptrdiff_t)n * p->out_strides[0] + co0;
      for (int32_t oy = 0, s = 0; oy < p->out_h; oy++) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        int32_t ky0, ky1;
        taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
        if (!in_place) {
          dw2_row_any(&k, p, len, x, iy0, ky0, ky1,
                      out_n + (ptrdiff_t)oy * p->out_strides[1],
                      p->out_strides[2]);
          continue;
        }
        dw2_row_any(&k, p, len, x, iy0, ky0, ky1, ring + s * slot, DW2);
        s = s + 1 == rows ? 0 : s + 1;
        /* input row oy - pad_top has had its last reader; its output
         * row waits in the next slot */
        if (oy >= p->pad_top)
          dw2_flush(p, ring + s * slot, len,
                    out_n + (ptrdiff_t)(oy - p->pad_top) * p->out_strides[1]);
      }
      if (in_place)
        for (int32_t r = p->out_h > p->pad_top ? p->out_h - p->pad_top : 0;
             r < p->out_h; r++)
          dw2_flush(p, ring + (r % rows) * slot, len,
                    out_n + (ptrdiff_t)r * p->out_strides[1]);
    }
  }
  return 1;
}
#else
typedef int tn__crt_unused_x86_conv_dw_avx2_s8; /* no AVX2: nothing here */
#endif /* TN_CRT_HAVE_AVX2 */
