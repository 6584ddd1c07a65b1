/*
 * dense_f32.c: float32 dense (nn.dense, matmul) and batched matmul for the
 * crt. Both are a loop of row-times-matrix products, and the row kernel is
 * chosen by which dimension of the weight is contiguous, so the innermost
 * loop always walks contiguous memory:
 *  - w [N, K] (stride_k 1, nn.dense): each output is a dot product of two
 *    contiguous vectors, summed in 8 interleaved partial sums, because a
 *    compiler may not reorder a single float sum and so would not vectorise
 *    it; on x86-64 CPUs with AVX2 (found at run time, isa.h) four
 *    rows at a time take a second form (x86/dense_f32.c) whose registers hold exactly those
 *    partial sums, so the bits are the same and four rows' additions
 *    overlap (the anomaly detector's float model: 22.5 -> 13 us);
 *  - w [K, N] (stride_n 1, matmul): the output row is built 16 (8, 4)
 *    columns at a time in registers, each k adding a broadcast input value
 *    times a contiguous run of weights;
 *  - any other strides: plain strided loops.
 * Bias and the fused clamp are applied as each output is stored.
 *
 * The weight may also come packed (tn_crt_dense_f32_pack; the compiler's
 * PackDenseWeights pass does it for the host): blocks of 16 outputs, each
 * block input-major, so an input broadcast meets a row of 16 weights and a
 * block is one stream of memory. Each output is one chain over the inputs
 * in order, then the bias and the clamp. The portable C runs it block by
 * block; on x86 the AVX2 + FMA and AVX-512F forms (x86/dense_f32.c) fuse
 * the chain's multiply-adds, eight blocks' chains overlapping, and give
 * the same bits as each other.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "dense_f32.h"
#include "unroll.h"


/* sum_i a[i] * b[i] in eight interleaved partial sums. */
static float dot(const float *restrict a, const float *restrict b,
                 int32_t k) {
#define ZERO(i) float s##i = 0.0f;
#define LANE(i) s##i += a[i] * b[i];
  R8(ZERO)
  int32_t i = 0;
  for (; i + 8 <= k; i += 8, a += 8, b += 8) {
    R8(LANE)
  }
  float t = ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
  for (; i < k; i++, a++, b++) t += *a * *b;
  return t;
#undef ZERO
#undef LANE
}


/* acc[j] += sum_k x[k * xs] * w[k * ws + j] for one block of columns. */
#define LOAD_ACC(i) float a##i = acc[i];
#define STORE_ACC(i) acc[i] = a##i;
#define MAC(i) a##i += xv * w[i];
#define DEFINE_AXPY(NAME, R)                                                \
  static void NAME(const float *restrict x, ptrdiff_t xs,                   \
                   const float *restrict w, ptrdiff_t ws, int32_t n,        \
                   float *restrict acc) {                                   \
    R(LOAD_ACC)                                                             \
    for (int32_t k = 0; k < n; k++, x += xs, w += ws) {                     \
      const float xv = *x;                                                  \
      R(MAC)                                                                \
    }                                                                       \
    R(STORE_ACC)                                                            \
  }
DEFINE_AXPY(axpy16, R16)
DEFINE_AXPY(axpy8, R8)
DEFINE_AXPY(axpy4, R4)

static void axpy(const float *restrict x, ptrdiff_t xs,
                 const float *restrict w, ptrdiff_t ws, int32_t n, int32_t nb,
                 float *restrict acc) {
  switch (nb) {
    case 16: axpy16(x, xs, w, ws, n, acc); return;
    case 8: axpy8(x, xs, w, ws, n, acc); return;
    case 4: axpy4(x, xs, w, ws, n, acc); return;
    default:
      for (int32_t k = 0; k < n; k++, x += xs, w += ws)
        for (int32_t j = 0; j < nb; j++) acc[j] += *x * w[j];
  }
}

/* One output row: o[n] = clamp(sum_k x[k*xk] * w[n*sn + k*sk] + bias[n]). */
static void row(const TnCrtDense *p, const float *restrict x, ptrdiff_t xk,
                const float *restrict w, const float *restrict bias, float lo,
                float hi, float *restrict o) {
  const int32_t K = p->in_features, N = p->out_features;
  const ptrdiff_t sn = p->w_stride_n, sk = p->w_stride_k;
  if (sk == 1 && xk == 1) {
    int32_t n = 0;
#if TN_CRT_HAVE_AVX2
    if (tn__crt_avx2())
      for (; n + 4 <= N; n += 4) {
        float v[4];
        tn__crt_dot4_f32_avx2(x, w + n * sn, sn, K, v);
        for (int32_t j = 0; j < 4; j++)
          o[n + j] = clamp_f32(bias ? v[j] + bias[n + j] : v[j], lo, hi);
      }
#endif
    for (; n < N; n++) {
      float v = dot(x, w + n * sn, K);
      o[n] = clamp_f32(bias ? v + bias[n] : v, lo, hi);
    }
  } else if (sn == 1) {
    for (int32_t n0 = 0, nb; n0 < N; n0 += nb) {
      const int32_t rem = N - n0;
      nb = rem >= 16 ? 16 : rem >= 8 ? 8 : rem >= 4 ? 4 : rem;
      float acc[16];
      for (int32_t j = 0; j < nb; j++) acc[j] = bias ? bias[n0 + j] : 0.0f;
      axpy(x, xk, w + n0, sk, K, nb, acc);
      for (int32_t j = 0; j < nb; j++) o[n0 + j] = clamp_f32(acc[j], lo, hi);
    }
  } else {
    for (int32_t n = 0; n < N; n++) {
      const float *wn = w + n * sn;
      float v = bias ? bias[n] : 0.0f;
      for (int32_t k = 0; k < K; k++) v += x[k * xk] * wn[k * sk];
      o[n] = clamp_f32(v, lo, hi);
    }
  }
}

static TnCrtStatus check(const TnCrtDense *p) {
  if (p->batch <= 0 || p->in_features <= 0 || p->out_features <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)p->batch * p->out_features > INT32_MAX ||
      (int64_t)p->batch * p->in_features > INT32_MAX)
    return TN_CRT_OVERFLOW;
  return TN_CRT_OK;
}

/* tn_crt_dense_f32, or with packed its _packed form (below). */
static TnCrtStatus dense(const TnCrtDense *p, const float *in, const float *w,
                         const float *bias, float act_min, float act_max,
                         float *out, int packed);

TnCrtStatus tn_crt_dense_f32(const TnCrtDense *p, const float *in,
                             const float *w, const float *bias, float act_min,
                             float act_max, float *out) {
  return dense(p, in, w, bias, act_min, act_max, out, 0);
}

TnCrtStatus tn_crt_batch_matmul_f32(const TnCrtDense *p, int32_t batches,
                                    int32_t in_batch_stride,
                                    int32_t w_batch_stride,
                                    int32_t in_stride_m, int32_t in_stride_k,
                                    const float *in, const float *w,
                                    float *out) {
  if (!p || !in || !w || !out || batches <= 0) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  const int32_t M = p->batch, N = p->out_features;
  if ((int64_t)batches * M * N > INT32_MAX) return TN_CRT_OVERFLOW;
  for (int32_t b = 0; b < batches; b++) {
    const float *x = in + (ptrdiff_t)b * in_batch_stride;
    const float *wb = w + (ptrdiff_t)b * w_batch_stride;
    for (int32_t m = 0; m < M; m++, out += N)
      row(p, x + (ptrdiff_t)m * in_stride_m, in_stride_k, wb, NULL,
          -INFINITY, INFINITY, out);
  }
  return TN_CRT_OK;
}

/* ---- the packed layout ----------------------------------------------------- */

enum { BLK = 16 }; /* outputs per block of the packed layout */

TnCrtStatus tn_crt_dense_f32_pack(int32_t n, int32_t k, const float *w,
                                  float *packed) {
  if (w == NULL || packed == NULL || n <= 0 || k <= 0 ||
      (int64_t)n * k > INT32_MAX)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t j0 = 0; j0 < n; j0 += BLK) {
    const int32_t nb = n - j0 < BLK ? n - j0 : BLK;
    float *b = packed + (ptrdiff_t)j0 * k;
    for (int32_t i = 0; i < k; i++)
      for (int32_t j = 0; j < nb; j++)
        b[(ptrdiff_t)i * nb + j] = w[(ptrdiff_t)(j0 + j) * k + i];
  }
  return TN_CRT_OK;
}

/* One output row from the packed weight: per block, each output's chain
 * over the inputs in order (sixteen chains side by side), then the bias
 * and the clamp. */
static void packed_row(int32_t K, int32_t N, const float *restrict x,
                       const float *restrict w, const float *restrict bias,
                       float lo, float hi, float *restrict o) {
  for (int32_t j0 = 0; j0 < N; j0 += BLK) {
    const int32_t nb = N - j0 < BLK ? N - j0 : BLK;
    const float *wb = w + (ptrdiff_t)j0 * K;
    float acc[BLK] = {0};
    if (nb == BLK)
      axpy16(x, 1, wb, BLK, K, acc);
    else
      axpy(x, 1, wb, nb, K, nb, acc);
    for (int32_t j = 0; j < nb; j++)
      o[j0 + j] = clamp_f32(bias ? acc[j] + bias[j0 + j] : acc[j], lo, hi);
  }
}

static TnCrtStatus dense(const TnCrtDense *p, const float *in, const float *w,
                         const float *bias, float act_min, float act_max,
                         float *out, int packed) {
  if (!p || !in || !w || !out) return TN_CRT_INVALID_ARGUMENT;
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  const int32_t K = p->in_features, N = p->out_features;
  for (int32_t m = 0; m < p->batch; m++) {
    const float *x = in + (ptrdiff_t)m * K;
    float *o = out + (ptrdiff_t)m * N;
    if (!packed)
      row(p, x, 1, w, bias, act_min, act_max, o);
#if TN_CRT_HAVE_AVX2
    else if (tn__crt_avx2())
      tn__crt_dense_f32_packed_x86(K, N, x, w, bias, act_min, act_max, o);
#endif
    else
      packed_row(K, N, x, w, bias, act_min, act_max, o);
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_dense_f32_packed(const TnCrtDense *p, const float *in,
                                    const float *w, const float *bias,
                                    float act_min, float act_max, float *out) {
  return dense(p, in, w, bias, act_min, act_max, out, 1);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(dense_f32, TnCrtCallDenseF32) {
  return (p->packed ? tn_crt_dense_f32_packed : tn_crt_dense_f32)(
      &p->d, in[0], in[1], p->has_bias ? in[2] : NULL, p->act_min,
      p->act_max, out);
}
TN_CRT_CALL(batch_matmul_f32, TnCrtCallMatmul) {
  return tn_crt_batch_matmul_f32(&p->d, p->batches, p->in_batch_stride, 0,
                                 p->in_stride_m, p->in_stride_k, in[0], in[1],
                                 out);
}
