/*
 * x86/dense_f32.c: the x86 forms of the float32 dense layer (dense_f32.c).
 * For a weight [N, K]: the AVX2 form of its dot product, four rows at a
 * time: each row's register holds exactly the portable dot()'s eight
 * partial sums, so the bits are the same and four rows' additions overlap
 * (the anomaly detector's float model: 22.5 -> 13 us). For a weight packed
 * by tn_crt_dense_f32_pack (blocks of 16 outputs, input-major): an AVX2 +
 * FMA form (a block is two ymm) and an AVX-512F form (a block is one zmm),
 * each broadcasting an input against a row of four blocks' weights at once
 * (eight ymm or four zmm accumulators), each block one contiguous stream:
 * the layers' weights come from cache, not registers, and four streams
 * ran faster than eight (the anomaly detector's float model at AVX-512,
 * 12.0 against 12.8 us, one run each; with the streams prefetched, the
 * same on an Intel Xeon);
 * each output is one chain of fused multiply-adds over the inputs in
 * order, so the two forms give the same bits, and the bias and the clamp
 * are applied from the registers. Compiled with target attributes and
 * taken where tn__crt_isa() says the CPU runs them; compiles to nothing
 * where isa.h says AVX2 forms are out (not x86-64, or -DTN_CRT_NO_AVX2).
 */
#include "dense_f32.h"
#include "unroll.h"

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

/* ---- the packed layout (tn_crt_dense_f32_pack) ------------------------------ */

enum { BLK = 16 }; /* outputs per block */

/* Each block's stream is prefetched PF floats (8 inputs) ahead: the
 * weights stream from L2, and the four streams of a pass, K * 64 bytes
 * apart, outrun the hardware's prefetch (AD's dense chain, thread CPU
 * time on an Intel Xeon with AVX-512: 14.0 -> 11.5 us; 2 KB ahead 12.3).
 * A prefetch past the weights' end does not fault. */
#define PF 128

#define FMA __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f")))
#define R1(M) M(0)
#define R2(M) M(0) M(1)

/* Lanes below n set (n in 0..8), for maskload/maskstore. */
FMA static inline __m256i lanes8(int32_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* o[0..n) = clamp(v + bias), n in 1..8; max(lo, v) then min(hi, v), so a
 * NaN stays one, as in clamp_f32. */
FMA static inline void out8(__m256 v, const float *bias, __m256 lo,
                            __m256 hi, float *o, int32_t n) {
  if (n == 8) {
    if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
    _mm256_storeu_ps(o, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
  } else {
    const __m256i m = lanes8(n);
    if (bias) v = _mm256_add_ps(v, _mm256_maskload_ps(bias, m));
    _mm256_maskstore_ps(o, m, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
  }
}

/* B whole blocks at w (B * BLK outputs at o), each block's two halves
 * one accumulator each. */
#define Y_ZERO(b) __m256 l##b = _mm256_setzero_ps(), h##b = l##b;
#define Y_FMA(b)                                                        \
  l##b = _mm256_fmadd_ps(xv, _mm256_loadu_ps(q + (b) * bs), l##b);      \
  h##b = _mm256_fmadd_ps(xv, _mm256_loadu_ps(q + (b) * bs + 8), h##b);  \
  _mm_prefetch((const char *)(q + (b) * bs + PF), _MM_HINT_T0);
#define Y_OUT(b)                                                        \
  out8(l##b, bias ? bias + (b) * BLK : NULL, lo, hi, o + (b) * BLK, 8); \
  out8(h##b, bias ? bias + (b) * BLK + 8 : NULL, lo, hi,               \
       o + (b) * BLK + 8, 8);
#define DEFINE_BLOCKS_AVX2(NAME, R)                                        \
  FMA static void NAME(int32_t K, const float *restrict x,                 \
                       const float *restrict w, const float *restrict bias, \
                       __m256 lo, __m256 hi, float *restrict o) {          \
    const ptrdiff_t bs = (ptrdiff_t)K * BLK;                               \
    R(Y_ZERO)                                                              \
    const float *q = w;                                                    \
    for (int32_t k = 0; k < K; k++, q += BLK) {                            \
      const __m256 xv = _mm256_broadcast_ss(x + k);                        \
      R(Y_FMA)                                                             \
    }                                                                      \
    R(Y_OUT)                                                               \
  }
DEFINE_BLOCKS_AVX2(blocks4_avx2, R4)
DEFINE_BLOCKS_AVX2(blocks1_avx2, R1)

/* The last block, nb < BLK outputs, its rows nb apart. */
FMA static void tail_avx2(int32_t K, int32_t nb, const float *restrict x,
                          const float *restrict w, const float *restrict bias,
                          __m256 lo, __m256 hi, float *restrict o) {
  const int32_t nl = nb < 8 ? nb : 8, nh = nb - nl;
  const __m256i ml = lanes8(nl), mh = lanes8(nh);
  __m256 l = _mm256_setzero_ps(), h = l;
  const float *q = w;
  for (int32_t k = 0; k < K; k++, q += nb) {
    const __m256 xv = _mm256_broadcast_ss(x + k);
    l = _mm256_fmadd_ps(xv, _mm256_maskload_ps(q, ml), l);
    if (nh) h = _mm256_fmadd_ps(xv, _mm256_maskload_ps(q + 8, mh), h);
  }
  out8(l, bias, lo, hi, o, nl);
  if (nh) out8(h, bias ? bias + 8 : NULL, lo, hi, o + 8, nh);
}

FMA static void row_avx2(int32_t K, int32_t N, const float *x, const float *w,
                         const float *bias, float lo_, float hi_, float *o) {
  const __m256 lo = _mm256_set1_ps(lo_), hi = _mm256_set1_ps(hi_);
  int32_t j0 = 0;
  for (; j0 + 4 * BLK <= N; j0 += 4 * BLK)
    blocks4_avx2(K, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL, lo, hi,
                 o + j0);
  for (; j0 + BLK <= N; j0 += BLK)
    blocks1_avx2(K, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL, lo, hi,
                 o + j0);
  if (j0 < N)
    tail_avx2(K, N - j0, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL,
              lo, hi, o + j0);
}

/* o[lanes of m] = clamp(v + bias), as out8. */
AVX512 static inline void out16(__m512 v, const float *bias, __m512 lo,
                                __m512 hi, float *o, __mmask16 m) {
  if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias));
  _mm512_mask_storeu_ps(o, m, _mm512_min_ps(hi, _mm512_max_ps(lo, v)));
}

#define Z_ZERO(b) __m512 a##b = _mm512_setzero_ps();
#define Z_FMA(b)                                                       \
  a##b = _mm512_fmadd_ps(xv, _mm512_loadu_ps(q + (b) * bs), a##b);     \
  _mm_prefetch((const char *)(q + (b) * bs + PF), _MM_HINT_T0);
#define Z_OUT(b) \
  out16(a##b, bias ? bias + (b) * BLK : NULL, lo, hi, o + (b) * BLK, 0xffff);
#define DEFINE_BLOCKS_AVX512(NAME, R)                                      \
  AVX512 static void NAME(int32_t K, const float *restrict x,              \
                          const float *restrict w,                         \
                          const float *restrict bias, __m512 lo,           \
                          __m512 hi, float *restrict o) {                  \
    const ptrdiff_t bs = (ptrdiff_t)K * BLK;                               \
    R(Z_ZERO)                                                              \
    const float *q = w;                                                    \
    for (int32_t k = 0; k < K; k++, q += BLK) {                            \
      const __m512 xv = _mm512_set1_ps(x[k]);                              \
      R(Z_FMA)                                                             \
    }                                                                      \
    R(Z_OUT)                                                               \
  }
DEFINE_BLOCKS_AVX512(blocks4_avx512, R4)
DEFINE_BLOCKS_AVX512(blocks2_avx512, R2)
DEFINE_BLOCKS_AVX512(blocks1_avx512, R1)

AVX512 static void tail_avx512(int32_t K, int32_t nb, const float *restrict x,
                               const float *restrict w,
                               const float *restrict bias, __m512 lo,
                               __m512 hi, float *restrict o) {
  const __mmask16 m = (__mmask16)((1u << nb) - 1u);
  __m512 a = _mm512_setzero_ps();
  const float *q = w;
  for (int32_t k = 0; k < K; k++, q += nb)
    a = _mm512_fmadd_ps(_mm512_set1_ps(x[k]), _mm512_maskz_loadu_ps(m, q), a);
  out16(a, bias, lo, hi, o, m);
}

AVX512 static void row_avx512(int32_t K, int32_t N, const float *x,
                              const float *w, const float *bias, float lo_,
                              float hi_, float *o) {
  const __m512 lo = _mm512_set1_ps(lo_), hi = _mm512_set1_ps(hi_);
  int32_t j0 = 0;
  for (; j0 + 4 * BLK <= N; j0 += 4 * BLK)
    blocks4_avx512(K, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL, lo,
                   hi, o + j0);
  for (; j0 + 2 * BLK <= N; j0 += 2 * BLK)
    blocks2_avx512(K, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL, lo,
                   hi, o + j0);
  if (j0 + BLK <= N) {
    blocks1_avx512(K, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL, lo,
                   hi, o + j0);
    j0 += BLK;
  }
  if (j0 < N)
    tail_avx512(K, N - j0, x, w + (ptrdiff_t)j0 * K, bias ? bias + j0 : NULL,
                lo, hi, o + j0);
}

void tn__crt_dense_f32_packed_x86(int32_t K, int32_t N, const float *x,
                                  const float *w, const float *bias, float lo,
                                  float hi, float *o) {
  if ((tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512BW)
    row_avx512(K, N, x, w, bias, lo, hi, o);
  else
    row_avx2(K, N, x, w, bias, lo, hi, o);
}
#else
typedef int tn__crt_unused_x86_dense_f32; /* no AVX2 forms */
#endif
