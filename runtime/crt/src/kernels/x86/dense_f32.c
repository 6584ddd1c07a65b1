/*
 * x86/dense_f32.c: the AVX2 form of the float32 dense layer's dot product
 * (dense_f32.c), four rows at a time: each row's register holds exactly
 * the portable dot()'s eight partial sums, so the bits are the same and
 * four rows' additions overlap (the anomaly detector's float model: 22.5
 * -> 13 us). Compiled for AVX2 with a target attribute and taken where
 * tn__crt_avx2() says the CPU runs it; compiles to nothing where isa.h
 * says AVX2 forms are out (not x86-64, or -DTN_CRT_NO_AVX2).
 */
#include "dense_f32.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* dot()'s closing sum of its eight partial sums, lanes 0..7 of s:
 * ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)). */
AVX2 static inline float close8(__m256 s) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s),
                              _mm256_extractf128_ps(s, 1));
  const __m128 u = _mm_add_ps(t, _mm_shuffle_ps(t, t, 0xb1)); /* t0+t1, t2+t3 */
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_movehl_ps(u, u)));
}

/* dot() for four rows at once, bit for bit: lane i of row r's register is
 * dot()'s partial sum s_i (the same products, added in the same order;
 * no fused multiply-add), closed and finished the same way. The four
 * rows' sums are four independent chains of additions, where one row
 * alone waits on one. */
AVX2 __attribute__((noinline)) void tn__crt_dot4_f32_avx2(
    const float *restrict x, const float *restrict w, ptrdiff_t sn, int32_t k,
    float *v) {
  const float *w0 = w, *w1 = w + sn, *w2 = w + 2 * sn, *w3 = w + 3 * sn;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int32_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    a0 = _mm256_add_ps(a0, _mm256_mul_ps(xv, _mm256_loadu_ps(w0 + i)));
    a1 = _mm256_add_ps(a1, _mm256_mul_ps(xv, _mm256_loadu_ps(w1 + i)));
    a2 = _mm256_add_ps(a2, _mm256_mul_ps(xv, _mm256_loadu_ps(w2 + i)));
    a3 = _mm256_add_ps(a3, _mm256_mul_ps(xv, _mm256_loadu_ps(w3 + i)));
  }
  float t0 = close8(a0), t1 = close8(a1), t2 = close8(a2), t3 = close8(a3);
  for (; i < k; i++) {
    t0 += x[i] * w0[i];
    t1 += x[i] * w1[i];
    t2 += x[i] * w2[i];
    t3 += x[i] * w3[i];
  }
  v[0] = t0, v[1] = t1, v[2] = t2, v[3] = t3;
}
#else
typedef int tn__crt_unused_x86_dense_f32; /* no AVX2 forms */
#endif
