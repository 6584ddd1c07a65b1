/*
 * dense_s8.c: int8 fully-connected layer and matmul, TFLite Micro's
 * FullyConnected / FullyConnectedPerChannel reference arithmetic bit for
 * bit: acc = sum_k((x + input_offset) * (w + filter_offset)) + bias, then
 * MultiplyByQuantizedMultiplier with the output feature's (or the
 * tensor's) multiplier, + output offset, clamped. The weight is read
 * through two strides, so nn.dense's [N, K] and matmul's [K, N] are both
 * native.
 *
 * TFLite's int32 accumulator wraps like any sum mod 2^32, so the sums are
 * uint32 (no signed overflow anywhere) taken in whatever order is fastest:
 *  - K contiguous ([N, K], TFLite's layout): four outputs at a time, each a
 *    dot product over contiguous memory sharing the loads of x. With
 *    offsets that keep x + input_offset and w + filter_offset within int16
 *    (any TFLite zero point) the operands are int16 and the loop has a
 *    fixed multiple of 16 iterations, the form gcc -O2 vectorises into
 *    SSE2's pmaddwd (eight int16 products, summed in pairs into int32s,
 *    per instruction); on x86-64 CPUs with AVX2 (found at run time,
 *    fixed_point.h) four rows take a second form in AVX2 intrinsics,
 *    sixteen products per vpmaddwd, about 1.4x as fast on the anomaly
 *    detector's layers;
 *  - N contiguous ([K, N]): a block of up to BLK outputs accumulated input
 *    by input, one input value broadcast against a run of weights, in a
 *    local array with a fixed trip count; with TFLite's offsets
 *    (filter_offset 0, |x + input_offset| <= 255) the products fit int16;
 *  - anything else, and other offsets: plain uint32 arithmetic.
 * The requantization is per output; dense layers have many inputs per
 * output, so its cost hardly shows. On a Cortex-M with the DSP extension
 * gcc vectorises none of this, and the contiguous case has a second form
 * ("Cortex-M DSP" below): SXTAB16 unpacks four int8 of the input and of
 * each row into int16 pairs, offsets added, and SMLAD multiplies and adds
 * two pairs, about four times as fast as the portable C there.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "fixed_point.h"

/* Outputs per broadcast block. */
enum { BLK = 16 };

/* Inlined with constant arguments, so that each copy gets fixed-length
 * (vectorisable) loops; or kept out of line: gcc 12 does not vectorise the
 * dot products once they are inlined into the loop over outputs. */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#define OUT_OF_LINE static __attribute__((noinline))
#else
#define BLOCK_INLINE static inline
#define OUT_OF_LINE static
#endif

static TnCrtStatus check_dense(const TnCrtDense *p, const void *in,
                               const void *w, const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_features <= 0 || p->out_features <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

typedef struct {
  const TnCrtDense *p;
  const int8_t *w;
  int32_t io, fo;
  int narrow; /* x + io and w + fo fit an int16 */
  int small;  /* fo == 0 and |x + io| <= 255: products fit an int16 */
  int avx2;   /* the AVX2 form runs here (asked once per call) */
} Dense;

/* s[r] = sum_k((x[k] + io) * (w[r * sn + k] + fo)) for r < rows (1 or 4, a
 * constant) over contiguous x and weight rows. The vectorised loop runs a
 * multiple of 16 iterations (gcc -O2 vectorises only loops that need no
 * scalar epilogue). */
BLOCK_INLINE void dot_rows(const Dense *d, const int8_t *restrict x,
                           const int8_t *restrict w, int rows, uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int16_t io = (int16_t)d->io, fo = (int16_t)d->fo;
  /* Rows past the first only when there are four (no pointer past the
   * weights). */
  const int8_t *w0 = w, *w1 = rows == 4 ? w + sn : w;
  const int8_t *w2 = rows == 4 ? w + 2 * sn : w;
  const int8_t *w3 = rows == 4 ? w + 3 * sn : w;
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int32_t m = kk & ~15;
  for (int32_t k = 0; k < m; k++) {
    const int16_t xv = (int16_t)(x[k] + io);
    s0 += (uint32_t)(xv * (int16_t)(w0[k] + fo));
    if (rows == 4) {
      s1 += (uint32_t)(xv * (int16_t)(w1[k] + fo));
      s2 += (uint32_t)(xv * (int16_t)(w2[k] + fo));
      s3 += (uint32_t)(xv * (int16_t)(w3[k] + fo));
    }
  }
  for (int32_t k = m; k < kk; k++) {
    const int32_t xv = x[k] + io;
    s0 += (uint32_t)(xv * (w0[k] + fo));
    if (rows == 4) {
      s1 += (uint32_t)(xv * (w1[k] + fo));
      s2 += (uint32_t)(xv * (w2[k] + fo));
      s3 += (uint32_t)(xv * (w3[k] + fo));
    }
  }
  s[0] = s0;
  if (rows == 4) s[1] = s1, s[2] = s2, s[3] = s3;
}

/* ------------------------------------------------------------------------ */
/* Cortex-M DSP                                                               */
/* ------------------------------------------------------------------------ */

#if TN__CRT_DSP
/* One word of each of four rows (w, w + sn, w + 2 sn, w + 3 sn; filter
 * offset 0) against the input pairs xa (k, k + 2) and xb (k + 1, k + 3):
 * s_r += both products' sums; w steps a word. In assembly because gcc,
 * left to itself, spills this loop's thirteen live values (35 instructions
 * for 16 multiply-adds instead of 27); at -O0 it cannot allocate them at
 * all, and the C below does the work. */
#if defined(__OPTIMIZE__)
#define DENSE_ROWS4_ASM 1
BLOCK_INLINE void rows4(int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3,
                       const int8_t **w, ptrdiff_t sn, int32_t xa,
                       int32_t xb) {
  int32_t t0, t1;
  __asm__("ldr %[t0], [%[w]]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s0], %[xa], %[t1], %[s0]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s0], %[xb], %[t0], %[s0]\n\t"
          "ldr %[t0], [%[w], %[sn]]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s1], %[xa], %[t1], %[s1]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s1], %[xb], %[t0], %[s1]\n\t"
          "ldr %[t0], [%[w], %[sn], lsl #1]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s2], %[xa], %[t1], %[s2]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s2], %[xb], %[t0], %[s2]\n\t"
          "add %[t1], %[w], %[sn]\n\t"
          "ldr %[t0], [%[t1], %[sn], lsl #1]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s3], %[xa], %[t1], %[s3]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s3], %[xb], %[t0], %[s3]\n\t"
          "add %[w], %[w], #4"
          : [s0] "+r"(*s0), [s1] "+r"(*s1), [s2] "+r"(*s2), [s3] "+r"(*s3),
            [w] "+r"(*w), [t0] "=&r"(t0), [t1] "=&r"(t1)
          : [sn] "r"(sn), [xa] "r"(xa), [xb] "r"(xb)
          : "memory");
}
#else
#define DENSE_ROWS4_ASM 0
#endif

/* dot_rows with the Cortex-M DSP extension (fixed_point.h): a word of four
 * inputs and a word of each row unpack into int16 pairs (k, k + 2) and
 * (k + 1, k + 3), the offsets added by SXTAB16, and SMLAD multiplies and
 * adds two pairs; the inputs' pairs serve the four rows. */
BLOCK_INLINE void dsp_rows(const Dense *d, const int8_t *restrict x,
                           const int8_t *restrict w, int rows, uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int32_t io = d->io, fo = d->fo;
  const int32_t io2 = tn__crt_pair(io, io), fo2 = tn__crt_pair(fo, fo);
  const int8_t *w0 = w, *w1 = rows == 4 ? w + sn : w;
  const int8_t *w2 = rows == 4 ? w + 2 * sn : w;
  const int8_t *w3 = rows == 4 ? w + 3 * sn : w;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, k = 0;
#if DENSE_ROWS4_ASM
  if (rows == 4 && fo == 0) {
    const int8_t *wk = w, *xk = x, *const xe = x + (kk & ~3);
    for (; xk != xe; xk += 4) {
      const uint32_t xv = tn__crt_load4(xk);
      rows4(&s0, &s1, &s2, &s3, &wk, sn, __sxtab16(io2, (int32_t)xv),
            tn__crt_sxtab16_ror8(io2, xv));
    }
    k = kk & ~3;
  }
#endif
  for (; k + 4 <= kk; k += 4) {
    const uint32_t xv = tn__crt_load4(x + k);
    const int32_t xa = __sxtab16(io2, (int32_t)xv);
    const int32_t xb = tn__crt_sxtab16_ror8(io2, xv);
    uint32_t v = tn__crt_load4(w0 + k);
    s0 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s0);
    s0 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s0);
    if (rows == 4) {
      v = tn__crt_load4(w1 + k);
      s1 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s1);
      s1 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s1);
      v = tn__crt_load4(w2 + k);
      s2 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s2);
      s2 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s2);
      v = tn__crt_load4(w3 + k);
      s3 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s3);
      s3 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s3);
    }
  }
  uint32_t u[4] = {(uint32_t)s0, (uint32_t)s1, (uint32_t)s2, (uint32_t)s3};
  for (; k < kk; k++) { /* each product fits an int32 (narrow) */
    const int32_t xv = x[k] + io;
    u[0] += (uint32_t)(xv * (w0[k] + fo));
    if (rows == 4) {
      u[1] += (uint32_t)(xv * (w1[k] + fo));
      u[2] += (uint32_t)(xv * (w2[k] + fo));
      u[3] += (uint32_t)(xv * (w3[k] + fo));
    }
  }
  s[0] = u[0];
  if (rows == 4) s[1] = u[1], s[2] = u[2], s[3] = u[3];
}
#endif /* TN__CRT_DSP */

#if TN__CRT_AVX2
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

AVX2 __attribute__((noinline)) static void dot4_avx2(const Dense *d,
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
#endif /* TN__CRT_AVX2 */

OUT_OF_LINE void dot4(const Dense *d, const int8_t *x, const int8_t *w,
                      uint32_t *s) {
#if TN__CRT_DSP
  dsp_rows(d, x, w, 4, s);
#else
#if TN__CRT_AVX2
  if (d->avx2) {
    dot4_avx2(d, x, w, s);
    return;
  }
#endif
  dot_rows(d, x, w, 4, s);
#endif
}
OUT_OF_LINE void dot1(const Dense *d, const int8_t *x, const int8_t *w,
                      uint32_t *s) {
#if TN__CRT_DSP
  dsp_rows(d, x, w, 1, s);
#else
  dot_rows(d, x, w, 1, s);
#endif
}

/* a[j] += (x[k] + io) * w[k * sk + j] for j < len (a constant, or the
 * tail), k < K: products in 16 bits. */
BLOCK_INLINE void bcast_block(const Dense *d, const int8_t *x,
                              const int8_t *restrict w, int32_t len,
                              uint32_t *restrict a) {
  const ptrdiff_t sk = d->p->w_stride_k;
  const int16_t io = (int16_t)d->io;
  for (int32_t k = 0; k < d->p->in_features; k++, w += sk) {
    const int16_t xv = (int16_t)(x[k] + io);
    for (int32_t j = 0; j < len; j++) a[j] += (uint32_t)(int16_t)(xv * w[j]);
  }
}

/* Outputs [n0, n0 + len) of input row x into a (zeroed by the caller). */
static void accumulate(const Dense *d, const int8_t *x, int32_t n0,
                       int32_t len, uint32_t *restrict a) {
  const TnCrtDense *p = d->p;
  const ptrdiff_t sn = p->w_stride_n, sk = p->w_stride_k;
  const int8_t *w = d->w + (ptrdiff_t)n0 * sn;
  if (sk == 1 && d->narrow) {
    int32_t j = 0;
    for (; j + 4 <= len; j += 4) dot4(d, x, w + j * sn, a + j);
    for (; j < len; j++) dot1(d, x, w + j * sn, a + j);
  } else if (sn == 1 && d->small) {
    if (len == BLK)
      bcast_block(d, x, w, BLK, a);
    else
      bcast_block(d, x, w, len, a);
  } else {
    const uint32_t io = (uint32_t)d->io, fo = (uint32_t)d->fo;
    for (int32_t j = 0; j < len; j++)
      for (int32_t k = 0; k < p->in_features; k++)
        a[j] += ((uint32_t)x[k] + io) *
                ((uint32_t)w[(ptrdiff_t)j * sn + (ptrdiff_t)k * sk] + fo);
  }
}

/* Every output, block by block; the block is requantized into out8 (with
 * q) or, plus the bias, stored into out32. */
static void dense_run(const Dense *d, const TnCrtQuant *q, int32_t lo,
                      int32_t hi, const int8_t *in, const int32_t *bias,
                      int8_t *out8, int32_t *out32) {
  const TnCrtDense *p = d->p;
  const int32_t nn = p->out_features, kk = p->in_features;
  const int32_t pc = q != NULL && q->per_channel != 0;
  for (int32_t m = 0; m < p->batch; m++) {
    const int8_t *x = in + (ptrdiff_t)m * kk;
    for (int32_t n0 = 0; n0 < nn; n0 += BLK) {
      const int32_t len = nn - n0 < BLK ? nn - n0 : BLK;
      uint32_t a[BLK] = {0};
      accumulate(d, x, n0, len, a);
      for (int32_t j = 0; j < len; j++) {
        const int32_t n = n0 + j;
        const int32_t v = (int32_t)(bias ? a[j] + (uint32_t)bias[n] : a[j]);
        if (out32) {
          out32[(ptrdiff_t)m * nn + n] = v;
          continue;
        }
        const int32_t r = (int32_t)(
            (uint32_t)tn_crt_multiply_by_quantized_multiplier(
                v, q->multiplier[pc ? n : 0], q->shift[pc ? n : 0]) +
            (uint32_t)q->output_offset);
        out8[(ptrdiff_t)m * nn + n] = (int8_t)(r < lo ? lo : r > hi ? hi : r);
      }
    }
  }
}

static void dense_init(Dense *d, const TnCrtDense *p, const int8_t *w,
                       int32_t io, int32_t fo) {
  d->p = p, d->w = w, d->io = io, d->fo = fo;
  /* x in [-128, 127]: x + io fits an int16 for io in [-32640, 32640]. */
  d->narrow = io >= -32640 && io <= 32640 && fo >= -32640 && fo <= 32640;
  d->small = fo == 0 && io >= -127 && io <= 128;
#if TN__CRT_AVX2
  d->avx2 = tn__crt_avx2();
#else
  d->avx2 = 0;
#endif
}

size_t tn_crt_dense_s8_scratch_size(const TnCrtDense *p) {
  (void)p;
  return 0;
}

TnCrtStatus tn_crt_dense_s8(const TnCrtDense *p, const TnCrtQuant *q,
                            const int8_t *in, const int8_t *w,
                            const int32_t *bias, int8_t *out, void *scratch,
                            size_t scratch_size) {
  (void)scratch, (void)scratch_size;
  TnCrtStatus st = check_dense(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  if (q == NULL || q->multiplier == NULL || q->shift == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  /* The activation range narrowed to int8 (a wider one clamps no more). */
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  Dense d;
  dense_init(&d, p, w, q->input_offset, q->filter_offset);
  dense_run(&d, q, lo, hi, in, bias, out, NULL);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_dense_s8_s32(const TnCrtDense *p, int32_t input_offset,
                                int32_t filter_offset, const int8_t *in,
                                const int8_t *w, const int32_t *bias,
                                int32_t *out) {
  TnCrtStatus st = check_dense(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  Dense d;
  dense_init(&d, p, w, input_offset, filter_offset);
  dense_run(&d, NULL, 0, 0, in, bias, NULL, out);
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(dense_s8, TnCrtCallDenseS8) {
  return tn_crt_dense_s8(&p->d, &p->q, in[0], in[1],
                         p->has_bias ? in[2] : NULL, out, scratch,
                         scratch_size);
}
TN_CRT_CALL(dense_s8_s32, TnCrtCallDenseS32) {
  return tn_crt_dense_s8_s32(&p->d, p->input_offset, p->filter_offset, in[0],
                             in[1], NULL, out);
}
