/*
 * x86/quant.c: the AVX2 form of the int8 ADD's contiguous runs (quant.c,
 * add_run_fast): eight elements at a time, TFLite's three
 * requantizations (mbqm_right) bit for bit. Compiled for AVX2 with a
 * target attribute and taken where tn__crt_avx2() says the CPU runs it;
 * compiles to nothing where isa.h says AVX2 forms are out (not x86-64, or
 * -DTN_CRT_NO_AVX2).
 */
#include "quant.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/*
 * mbqm_right on eight int32 lanes, for m >= 0 and e = -shift in [0, 31]:
 * h = floor((x * m + 2^30) / 2^31), whose low 32 bits are bits 31 to 62 of
 * the 64-bit sum (a logical shift gives the same low bits as an
 * arithmetic one, and h fits an int32); then the rounding right shift,
 * floor(h / 2^e) + 1 where the remainder h & mask exceeds
 * (mask >> 1) + (h < 0). vpmuldq multiplies the even lanes; the odd ones
 * are shifted down first and their results shifted back up.
 */
AVX2 static inline __m256i mbqm8(__m256i x, __m256i m, __m128i e,
                                 __m256i mask, __m256i half) {
  const __m256i nudge = _mm256_set1_epi64x(INT64_C(1) << 30);
  const __m256i ev = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(x, m), nudge), 31);
  const __m256i od = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m), nudge),
      31);
  const __m256i h = _mm256_blend_epi32(ev, _mm256_slli_epi64(od, 32), 0xaa);
  const __m256i q = _mm256_sra_epi32(h, e);
  const __m256i thr = _mm256_add_epi32(half, _mm256_srli_epi32(h, 31));
  /* q - (-1) where the remainder is above the threshold */
  return _mm256_sub_epi32(
      q, _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), thr));
}

AVX2 static inline __m256i load8(const int8_t *p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

AVX2 int32_t tn__crt_qadd_avx2(const TnCrtQBinary *p, int32_t lo,
                               int32_t hi, const int8_t *l, const int8_t *r,
                               int32_t n, int8_t *out) {
  const __m128i left = _mm_cvtsi32_si128(p->left_shift);
  const __m256i loff = _mm256_set1_epi32(p->lhs_offset);
  const __m256i roff = _mm256_set1_epi32(p->rhs_offset);
  const __m256i ooff = _mm256_set1_epi32(p->output_offset);
  const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  const __m256i lm = _mm256_set1_epi32(p->lhs_multiplier);
  const __m256i rm = _mm256_set1_epi32(p->rhs_multiplier);
  const __m256i om = _mm256_set1_epi32(p->output_multiplier);
  __m128i e[3];
  __m256i mask[3], half[3];
  const int32_t shifts[3] = {p->lhs_shift, p->rhs_shift, p->output_shift};
  for (int k = 0; k < 3; k++) {
    const uint32_t mk = (UINT32_C(1) << -shifts[k]) - 1;
    e[k] = _mm_cvtsi32_si128(-shifts[k]);
    mask[k] = _mm256_set1_epi32((int32_t)mk);
    half[k] = _mm256_set1_epi32((int32_t)(mk >> 1));
  }
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_sll_epi32(_mm256_add_epi32(load8(l + i), loff),
                                       left);
    const __m256i b = _mm256_sll_epi32(_mm256_add_epi32(load8(r + i), roff),
                                       left);
    const __m256i s =
        _mm256_add_epi32(mbqm8(a, lm, e[0], mask[0], half[0]),
                         mbqm8(b, rm, e[1], mask[1], half[1]));
    __m256i v = _mm256_add_epi32(mbqm8(s, om, e[2], mask[2], half[2]), ooff);
    v = _mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v),
                                      _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(out + i), _mm_packs_epi16(w, w));
  }
  return i;
}
#else
typedef int tn__crt_unused_x86_quant; /* no AVX2 forms */
#endif
