/*
 * x86/dense_s8.c: the AVX2 and AVX-512 VNNI forms of the int8 dense
 * layer's contiguous dot products, four rows at a time (dense_s8.c): AVX2
 * sixteen products per vpmaddwd, about 1.4x as fast as the portable C
 * (which gcc vectorises for SSE2) on the anomaly detector's layers; VNNI
 * sixty-four per vpdpbusd; bit for bit the same sums. Compiled with
 * target attributes and taken where tn__crt_isa() says the CPU runs them;
 * compiles to nothing where isa.h says these forms are out (not x86-64,
 * or -DTN_CRT_NO_AVX2).
 */
#include "dense_s8.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#include "crt_libc.h"

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline uint32_t hsum8(__m256i a) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a),
                            _mm256_extracti128_si256(a, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

/* dot_rows for four rows with AVX2: sixteen int8 of x and of each row
 * widened to int16 with the offsets added (vpmovsxbw, vpaddw), multiplied
 * and summed in pairs into eight int32 (vpmaddwd: both products and their
 * sum are exact while x + io and w + fo fit an int16, which `narrow`
 * says), accumulated with wrapping adds; the tail as dot_rows does it. */
AVX2 static inline __m256i widen16(const int8_t *p, __m256i offset) {
  return _mm256_add_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)), offset);
}

/* The tail of a row past the last 16 (plain int32 products, as dot_rows). */
static uint32_t dot_tail(const Dense *d, const int8_t *x, const int8_t *w,
                         int32_t k, uint32_t s) {
  for (; k < d->p->in_features; k++)
    s += (uint32_t)((x[k] + d->io) * (w[k] + d->fo));
  return s;
}

AVX2 __attribute__((noinline)) void tn__crt_dense_dot4_avx2(const Dense *d,
                                                            const int8_t *x,
                                                            const int8_t *w,
                                                            uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int8_t *w0 = w, *w1 = w + sn, *w2 = w + 2 * sn, *w3 = w + 3 * sn;
  const __m256i io = _mm256_set1_epi16((int16_t)d->io);
  const __m256i fo = _mm256_set1_epi16((int16_t)d->fo);
  /* four accumulators in registers (named, not an array: gcc -O2 would
   * keep an array in memory) */
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  int32_t k = 0;
  for (; k + 16 <= kk; k += 16) {
    const __m256i xv = widen16(x + k, io);
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(xv, widen16(w0 + k, fo)));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(xv, widen16(w1 + k, fo)));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(xv, widen16(w2 + k, fo)));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(xv, widen16(w3 + k, fo)));
  }
  s[0] = dot_tail(d, x, w0, k, hsum8(a0));
  s[1] = dot_tail(d, x, w1, k, hsum8(a1));
  s[2] = dot_tail(d, x, w2, k, hsum8(a2));
  s[3] = dot_tail(d, x, w3, k, hsum8(a3));
}

/* ---- the requantization of a block -----------------------------------------
 * TFLite's MultiplyByQuantizedMultiplier for eight lanes at once, exactly
 * as conv_s8.h's requant_exact does it for a multiplier M >= 0 and a
 * shift -r in [-31, 0] (every real multiplier below 1): on |x| and the
 * sign, h = (|x| * M + 2^30 - [x < 0]) >> 31 in 64 bits (vpmuludq on the
 * even lanes, then on the odd ones), then +-((h + 2^(r-1)) >> r), the
 * output offset added with a wrapping add, clamped. Per lane the same
 * integers as the scalar call; eight lanes in about as many instructions
 * as one scalar call takes, which was a quarter of the anomaly detector's
 * time (its layers have 128 outputs for 128 inputs). */
AVX2 static inline __m256i requant8(__m256i x, __m256i m, __m256i r,
                                    __m256i off, __m256i lo, __m256i hi) {
  const __m256i s = _mm256_srai_epi32(x, 31); /* all ones where x < 0 */
  const __m256i ax = _mm256_sub_epi32(_mm256_xor_si256(x, s), s);
  const __m256i neg = _mm256_srli_epi32(x, 31);
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  const __m256i r30 = _mm256_set1_epi64x(INT64_C(1) << 30);
  const __m256i he = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(ax, m),
                       _mm256_sub_epi64(r30, _mm256_and_si256(neg, low))),
      31);
  const __m256i ho = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(ax, 32),
                                        _mm256_srli_epi64(m, 32)),
                       _mm256_sub_epi64(r30, _mm256_srli_epi64(neg, 32))),
      31);
  const __m256i h = _mm256_blend_epi32(he, _mm256_slli_epi64(ho, 32), 0xaa);
  const __m256i half =
      _mm256_srli_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), r), 1);
  const __m256i mg = _mm256_srlv_epi32(_mm256_add_epi32(h, half), r);
  const __m256i o =
      _mm256_add_epi32(_mm256_sub_epi32(_mm256_xor_si256(mg, s), s), off);
  return _mm256_min_epi32(_mm256_max_epi32(o, lo), hi);
}

AVX2 __attribute__((noinline)) int tn__crt_dense_requant_avx2(
    const uint32_t *a, const int32_t *bias, const int32_t *mult,
    const int32_t *shift, int pc, int32_t len, int32_t off, int32_t lo,
    int32_t hi, int8_t *out) {
  /* Read in place, the lanes past len masked to 0 (x 0, M 0, r 0). a's
   * 16 lanes in halves of four: the row sums were stored four at a time,
   * and a load spanning two stores would wait for both to retire. */
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i zero = _mm256_setzero_si256();
  __m256i v[2] = {zero, zero};
  unsigned bad = 0;
  for (int i = 0; i < 2 && 8 * i < len; i++) {
    const __m256i in =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(len - 8 * i), iota);
    __m256i x = _mm256_and_si256(
        _mm256_inserti128_si256(
            _mm256_castsi128_si256(
                _mm_loadu_si128((const __m128i *)(a + 8 * i))),
            _mm_loadu_si128((const __m128i *)(a + 8 * i + 4)), 1),
        in);
    if (bias)
      x = _mm256_add_epi32(x, _mm256_maskload_epi32(bias + 8 * i, in));
    const __m256i m = pc ? _mm256_maskload_epi32(mult + 8 * i, in)
                         : _mm256_and_si256(_mm256_set1_epi32(mult[0]), in);
    const __m256i sh = pc ? _mm256_maskload_epi32(shift + 8 * i, in)
                          : _mm256_and_si256(_mm256_set1_epi32(shift[0]), in);
    /* M < 0, or a shift > 0 or < -31: the scalar call's */
    bad |= (unsigned)_mm256_movemask_epi8(_mm256_or_si256(
        _mm256_or_si256(m, _mm256_cmpgt_epi32(sh, zero)),
        _mm256_cmpgt_epi32(_mm256_set1_epi32(-31), sh)));
    v[i] = requant8(x, m, _mm256_sub_epi32(zero, sh), _mm256_set1_epi32(off),
                    _mm256_set1_epi32(lo), _mm256_set1_epi32(hi));
  }
  /* sign bits only: M < 0 sets bit 31, and each compare all 32 bits */
  if (bad & 0x88888888u) return 0;
  /* within [lo, hi] of int8: the saturating packs only narrow */
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[0], v[1]),
                                             0xd8);
  const __m128i r = _mm_packs_epi16(_mm256_castsi256_si128(p),
                                    _mm256_extracti128_si256(p, 1));
  if (len == 16) {
    _mm_storeu_si128((__m128i *)out, r);
  } else {
    int8_t res[16];
    _mm_storeu_si128((__m128i *)res, r);
    memcpy(out, res, (size_t)len);
  }
  return 1;
}

/* ---- AVX-512 VNNI ----------------------------------------------------------
 * vpdpbusd multiplies unsigned by signed bytes, four to a 32-bit lane, and
 * adds the four products to the lane, wrapping (vpdpbusds would saturate
 * there, and the sums would no longer be the portable sums mod 2^32). x
 * is signed: x ^ 0x80 is the unsigned x + 128, so with fo == 0
 *   sum((x + io) * w) = sum((x + 128) * w) + (io - 128) * sum(w)  (mod 2^32)
 * and sum(w) comes from a second vpdpbusd with bytes of 1. Sixty-four
 * bytes of K per instruction; the tail with masked loads (the masked
 * weights are zero, so the lanes add nothing). */
#define VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

static int vnni_fault; /* tn__crt_dense_vnni_fault */
void tn__crt_dense_vnni_fault(int how) {
  __atomic_store_n(&vnni_fault, how, __ATOMIC_RELAXED);
}

/* The four rows' sums of 16 lanes each, as s[0 .. 3]: each folded to
 * four lanes, then the four added across (vphaddd twice); a fifth of the
 * instructions of four _mm512_reduce_add_epi32, which a short row (the
 * anomaly detector's K = 128: two vpdpbusd a row) spent more time in
 * than in its products. */
VNNI static inline __attribute__((always_inline)) __m128i sum4(__m512i a0,
                                                               __m512i a1,
                                                               __m512i a2,
                                                               __m512i a3) {
#define FOLD(a)                                                           \
  _mm_add_epi32(                                                          \
      _mm256_castsi256_si128(_mm256_add_epi32(                            \
          _mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1))),   \
      _mm256_extracti128_si256(                                           \
          _mm256_add_epi32(_mm512_castsi512_si256(a),                     \
                           _mm512_extracti64x4_epi64(a, 1)),              \
          1))
  const __m128i f0 = FOLD(a0), f1 = FOLD(a1), f2 = FOLD(a2), f3 = FOLD(a3);
#undef FOLD
  return _mm_hadd_epi32(_mm_hadd_epi32(f0, f1), _mm_hadd_epi32(f2, f3));
}

/* The four rows with the correction (io - shift) * sum(w), which needs
 * sum(w) per row (corr: a second vpdpbusd per row with bytes of 1), or
 * without it where it is 0 (!corr: io = 128, an input zero point of
 * -128, as after a ReLU: half the vpdpbusd). */
VNNI static inline __attribute__((always_inline)) void vnni_rows(
    const Dense *d, const int8_t *x, const int8_t *w, uint32_t *s, int sat,
    uint32_t shift, int corr) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int8_t *w0 = w, *w1 = w + sn, *w2 = w + 2 * sn, *w3 = w + 3 * sn;
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const __m512i one = _mm512_set1_epi8(1);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  __m512i c0 = a0, c1 = a0, c2 = a0, c3 = a0;
#define DP(acc, u, v) \
  (sat ? _mm512_dpbusds_epi32(acc, u, v) : _mm512_dpbusd_epi32(acc, u, v))
  for (int32_t k = 0; k < kk; k += 64) {
    const __mmask64 m =
        kk - k >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (kk - k)) - 1;
    const __m512i u =
        _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + k), flip);
    const __m512i v0 = _mm512_maskz_loadu_epi8(m, w0 + k);
    const __m512i v1 = _mm512_maskz_loadu_epi8(m, w1 + k);
    const __m512i v2 = _mm512_maskz_loadu_epi8(m, w2 + k);
    const __m512i v3 = _mm512_maskz_loadu_epi8(m, w3 + k);
    a0 = DP(a0, u, v0), a1 = DP(a1, u, v1);
    a2 = DP(a2, u, v2), a3 = DP(a3, u, v3);
    if (corr) {
      c0 = _mm512_dpbusd_epi32(c0, one, v0);
      c1 = _mm512_dpbusd_epi32(c1, one, v1);
      c2 = _mm512_dpbusd_epi32(c2, one, v2);
      c3 = _mm512_dpbusd_epi32(c3, one, v3);
    }
  }
#undef DP
  __m128i r = sum4(a0, a1, a2, a3);
  if (corr)
    r = _mm_add_epi32(r, _mm_mullo_epi32(sum4(c0, c1, c2, c3),
                                         _mm_set1_epi32((int32_t)(
                                             (uint32_t)d->io - shift))));
  _mm_storeu_si128((__m128i *)s, r);
}

VNNI __attribute__((noinline)) void tn__crt_dense_dot4_vnni(const Dense *d,
                                                            const int8_t *x,
                                                            const int8_t *w,
                                                            uint32_t *s) {
  switch (__atomic_load_n(&vnni_fault, __ATOMIC_RELAXED)) {
  case 1: /* the 128 * sum(w) correction left out */
    vnni_rows(d, x, w, s, 0, 0, 1);
    break;
  case 2: /* the saturating vpdpbusds */
    vnni_rows(d, x, w, s, 1, 128, d->io != 128);
    break;
  default:
    if (d->io == 128)
      vnni_rows(d, x, w, s, 0, 128, 0);
    else
      vnni_rows(d, x, w, s, 0, 128, 1);
  }
}
#else
typedef int tn__crt_unused_x86_dense_s8; /* no AVX2 forms */
#endif
