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

VNNI static inline __attribute__((always_inline)) void vnni_rows(
    const Dense *d, const int8_t *x, const int8_t *w, uint32_t *s, int sat,
    uint32_t shift) {
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
    a0 = DP(a0, u, v0), c0 = _mm512_dpbusd_epi32(c0, one, v0);
    a1 = DP(a1, u, v1), c1 = _mm512_dpbusd_epi32(c1, one, v1);
    a2 = DP(a2, u, v2), c2 = _mm512_dpbusd_epi32(c2, one, v2);
    a3 = DP(a3, u, v3), c3 = _mm512_dpbusd_epi32(c3, one, v3);
  }
#undef DP
  const uint32_t corr = (uint32_t)d->io - shift;
  s[0] = (uint32_t)_mm512_reduce_add_epi32(a0) +
         corr * (uint32_t)_mm512_reduce_add_epi32(c0);
  s[1] = (uint32_t)_mm512_reduce_add_epi32(a1) +
         corr * (uint32_t)_mm512_reduce_add_epi32(c1);
  s[2] = (uint32_t)_mm512_reduce_add_epi32(a2) +
         corr * (uint32_t)_mm512_reduce_add_epi32(c2);
  s[3] = (uint32_t)_mm512_reduce_add_epi32(a3) +
         corr * (uint32_t)_mm512_reduce_add_epi32(c3);
}

VNNI __attribute__((noinline)) void tn__crt_dense_dot4_vnni(const Dense *d,
                                                            const int8_t *x,
                                                            const int8_t *w,
                                                            uint32_t *s) {
  switch (__atomic_load_n(&vnni_fault, __ATOMIC_RELAXED)) {
  case 1: /* the 128 * sum(w) correction left out */
    vnni_rows(d, x, w, s, 0, 0);
    break;
  case 2: /* the saturating vpdpbusds */
    vnni_rows(d, x, w, s, 1, 128);
    break;
  default:
    vnni_rows(d, x, w, s, 0, 128);
  }
}
#else
typedef int tn__crt_unused_x86_dense_s8; /* no AVX2 forms */
#endif
