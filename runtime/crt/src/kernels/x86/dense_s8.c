/*
 * x86/dense_s8.c: the AVX2 form of the int8 dense layer's contiguous dot
 * products, four rows at a time (dense_s8.c): sixteen products per
 * vpmaddwd, about 1.4x as fast as the portable C (which gcc vectorises
 * for SSE2) on the anomaly detector's layers, bit for bit the same sums.
 * Compiled for AVX2 with a target attribute and taken where tn__crt_avx2()
 * says the CPU runs it; compiles to nothing where isa.h says AVX2 forms
 * are out (not x86-64, or -DTN_CRT_NO_AVX2).
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
#else
typedef int tn__crt_unused_x86_dense_s8; /* no AVX2 forms */
#endif
