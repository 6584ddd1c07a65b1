/*
 * dense_s8.c: int8 fully-connected layer and matmul, TFLite Micro's
 * FullyConnected / FullyConnectedPerChannel reference arithmetic bit for
 * bit: acc = sum_k((x + input_offset) * (w + filter_offset)) + bias, then
 * MultiplyByQuantizedMultiplier with the output feature's (or the
 * tensor's) multiplier, + output offset, clamped. The weight is read
 * through two strides, so nn.dense's [N, K] and matmul's [K, N] are both
 * native. With K contiguous ([N, K], TFLite's layout) each output is a dot
 * product over contiguous memory, summed in fixed-length pieces; otherwise
 * a block of up to BLK outputs is accumulated input by input ("outer
 * product": one input value times a run of weights) in a local array.
 * Fixed trip counts are what lets GCC vectorise these loops at -O2, and
 * the local block needs no scratch.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"

/* Accumulators per block and products per dot-product piece. */
enum { BLK = 16 };

/* Inlined twice, once with the constant BLK (see conv_s8.c). */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#else
#define BLOCK_INLINE static inline
#endif

static TnCrtStatus check_dense(const TnCrtDense *p, const void *in,
                               const void *w, const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_features <= 0 || p->out_features <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

static int32_t wadd(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* sum_k((x[k] + io) * (w[k] + fo)) over contiguous x and w. Exact in int32
 * while K < 2^16, TFLite's bound (it accumulates in int32 as well). */
static int32_t dot(const int8_t *restrict x, const int8_t *restrict w,
                   int32_t k, int32_t io, int32_t fo) {
  int32_t part[BLK] = {0}, s = 0, i = 0;
  for (; i + BLK <= k; i += BLK)
    for (int32_t j = 0; j < BLK; j++)
      part[j] += (x[i + j] + io) * (w[i + j] + fo);
  for (int32_t j = 0; j < BLK; j++) s += part[j];
  for (; i < k; i++) s += (x[i] + io) * (w[i] + fo);
  return s;
}

/* a[j] = the accumulator of output n0 + j, j < len <= BLK, for one input
 * row. */
BLOCK_INLINE void outer_block(const TnCrtDense *p, const int8_t *x,
                              const int8_t *w, int32_t io, int32_t fo,
                              int32_t n0, int32_t len, int32_t *restrict a) {
  const int32_t sn = p->w_stride_n, sk = p->w_stride_k;
  const int8_t *wb = w + (ptrdiff_t)n0 * sn;
  for (int32_t j = 0; j < len; j++) a[j] = 0;
  if (sn == 1 && fo == 0) {
    for (int32_t k = 0; k < p->in_features; k++) {
      const int32_t xv = x[k] + io;
      const int8_t *restrict wr = wb + (ptrdiff_t)k * sk;
      for (int32_t j = 0; j < len; j++) a[j] += xv * wr[j];
    }
  } else {
    for (int32_t k = 0; k < p->in_features; k++) {
      const int32_t xv = x[k] + io;
      const int8_t *restrict wr = wb + (ptrdiff_t)k * sk;
      for (int32_t j = 0; j < len; j++)
        a[j] += xv * (wr[(ptrdiff_t)j * sn] + fo);
    }
  }
}

/* Every output, block by block; the block is requantized into out8 (with
 * q) or, plus the bias, stored into out32. */
static void dense_run(const TnCrtDense *p, int32_t io, int32_t fo,
                      const TnCrtQuant *q, int32_t lo, int32_t hi,
                      const int8_t *in, const int8_t *w, const int32_t *bias,
                      int8_t *out8, int32_t *out32) {
  const int32_t nn = p->out_features, kk = p->in_features;
  const int32_t pc = q != NULL && q->per_channel != 0;
  const int dot_form = p->w_stride_k == 1;
  for (int32_t m = 0; m < p->batch; m++) {
    const int8_t *x = in + (ptrdiff_t)m * kk;
    for (int32_t n0 = 0; n0 < nn; n0 += BLK) {
      const int32_t len = nn - n0 < BLK ? nn - n0 : BLK;
      int32_t a[BLK];
      if (dot_form) {
        for (int32_t j = 0; j < len; j++)
          a[j] = dot(x, w + (ptrdiff_t)(n0 + j) * p->w_stride_n, kk, io, fo);
      } else if (len == BLK) {
        outer_block(p, x, w, io, fo, n0, BLK, a);
      } else {
        outer_block(p, x, w, io, fo, n0, len, a);
      }
      for (int32_t j = 0; j < len; j++) {
        const int32_t n = n0 + j;
        int32_t v = bias ? wadd(a[j], bias[n]) : a[j];
        if (out32) {
          out32[(ptrdiff_t)m * nn + n] = v;
          continue;
        }
        v = tn_crt_multiply_by_quantized_multiplier(v, q->multiplier[pc ? n : 0],
                                                    q->shift[pc ? n : 0]);
        v = wadd(v, q->output_offset);
        out8[(ptrdiff_t)m * nn + n] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
      }
    }
  }
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
  dense_run(p, q->input_offset, q->filter_offset, q, lo, hi, in, w, bias, out,
            NULL);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_dense_s8_s32(const TnCrtDense *p, int32_t input_offset,
                                int32_t filter_offset, const int8_t *in,
                                const int8_t *w, const int32_t *bias,
                                int32_t *out) {
  TnCrtStatus st = check_dense(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  dense_run(p, input_offset, filter_offset, NULL, 0, 0, in, w, bias, NULL,
            out);
  return TN_CRT_OK;
}
