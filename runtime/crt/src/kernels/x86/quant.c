/*
 * x86/quant.c: the AVX2 and AVX-512 forms of the int8 ADD's contiguous
 * runs (quant.c, add_run_fast): eight or sixteen elements at a time,
 * TFLite's three requantizations (mbqm_right) bit for bit; and of the
 * int8 clip (quant.c, tn_crt_clip_s8), 32 bytes at a time by signed byte
 * min and max. Compiled for their ISA with target attributes and taken
 * where tn__crt_isa() says the CPU runs them; compiles to nothing where
 * isa.h says AVX2 forms are out (not x86-64, or -DTN_CRT_NO_AVX2).
 */
#include "quant.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f,avx512bw")))

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

/* mbqm8 on sixteen lanes: the odd lanes' results merged under a mask,
 * the rounding step added under the comparison's mask. */
AVX512 static inline __m512i mbqm16(__m512i x, __m512i m, __m128i e,
                                   __m512i mask, __m512i half) {
  const __m512i nudge = _mm512_set1_epi64(INT64_C(1) << 30);
  const __m512i ev = _mm512_srli_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(x, m), nudge), 31);
  const __m512i od = _mm512_add_epi64(
      _mm512_mul_epi32(_mm512_srli_epi64(x, 32), m), nudge);
  /* od's bits 31 to 62 moved to bits 32 to 63: one left shift of the
   * sum, whose top bit falls off */
  const __m512i h =
      _mm512_mask_blend_epi32(0xaaaa, ev, _mm512_slli_epi64(od, 1));
  const __m512i q = _mm512_sra_epi32(h, e);
  const __m512i thr = _mm512_add_epi32(half, _mm512_srli_epi32(h, 31));
  const __mmask16 up =
      _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, mask), thr);
  return _mm512_mask_add_epi32(q, up, q, _mm512_set1_epi32(1));
}

AVX512 int32_t tn__crt_qadd_avx512(const TnCrtQBinary *p, int32_t lo,
                                   int32_t hi, const int8_t *l,
                                   const int8_t *r, int32_t n, int8_t *out) {
  const __m128i left = _mm_cvtsi32_si128(p->left_shift);
  const __m512i loff = _mm512_set1_epi32(p->lhs_offset);
  const __m512i roff = _mm512_set1_epi32(p->rhs_offset);
  const __m512i ooff = _mm512_set1_epi32(p->output_offset);
  const __m512i vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
  const __m512i lm = _mm512_set1_epi32(p->lhs_multiplier);
  const __m512i rm = _mm512_set1_epi32(p->rhs_multiplier);
  const __m512i om = _mm512_set1_epi32(p->output_multiplier);
  __m128i e[3];
  __m512i mask[3], half[3];
  const int32_t shifts[3] = {p->lhs_shift, p->rhs_shift, p->output_shift};
  for (int k = 0; k < 3; k++) {
    const uint32_t mk = (UINT32_C(1) << -shifts[k]) - 1;
    e[k] = _mm_cvtsi32_si128(-shifts[k]);
    mask[k] = _mm512_set1_epi32((int32_t)mk);
    half[k] = _mm512_set1_epi32((int32_t)(mk >> 1));
  }
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i a = _mm512_sll_epi32(
        _mm512_add_epi32(
            _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(l + i))),
            loff),
        left);
    const __m512i b = _mm512_sll_epi32(
        _mm512_add_epi32(
            _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(r + i))),
            roff),
        left);
    const __m512i s =
        _mm512_add_epi32(mbqm16(a, lm, e[0], mask[0], half[0]),
                         mbqm16(b, rm, e[1], mask[1], half[1]));
    __m512i v = _mm512_add_epi32(mbqm16(s, om, e[2], mask[2], half[2]), ooff);
    v = _mm512_min_epi32(_mm512_max_epi32(v, vlo), vhi);
    /* within int8 after the clamp: vpmovdb truncates nothing */
    _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi32_epi8(v));
  }
  return i;
}

AVX2 int32_t tn__crt_clip_s8_avx2(int32_t n, const int8_t *in, int8_t lo,
                                  int8_t hi, int8_t *out) {
  const __m256i vlo = _mm256_set1_epi8(lo), vhi = _mm256_set1_epi8(hi);
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(in + i));
    _mm256_storeu_si256((__m256i *)(out + i),
                        _mm256_min_epi8(_mm256_max_epi8(v, vlo), vhi));
  }
  return i;
}
#else
typedef int tn__crt_unused_x86_quant; /* no AVX2 or AVX-512 forms */
#endif
