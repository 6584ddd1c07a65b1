/*
 * batch_matmul.c: TFLite's BATCH_MATMUL, float32 and int8 (int32
 * accumulators; the requantization to int8 is the requantize kernel's, as
 * for an unfused dense layer). Each operand is addressed through element
 * strides: its batch dims (0 where it is broadcast) and its two matrix axes,
 * so adj_x / adj_y and numpy-style broadcasting of the batch dims need no
 * transposed copies (TFLite Micro makes them; the sums are the same, taken
 * over k in the same ascending order, so float results agree too).
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"

static TnCrtStatus check_bmm(const TnCrtBatchMatmul *p, const void *a,
                             const void *b, const void *out) {
  if (p == NULL || a == NULL || b == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->ndim < 1 || p->ndim > 4 || p->m <= 0 || p->n <= 0 || p->k <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t d = 0; d < p->ndim; d++)
    if (p->dims[d] <= 0) return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

/* The element offsets into a and b of flat batch index `i`. */
static void batch_offsets(const TnCrtBatchMatmul *p, int32_t i, ptrdiff_t *oa,
                          ptrdiff_t *ob) {
  ptrdiff_t a = 0, b = 0;
  for (int32_t d = p->ndim - 1; d >= 0; d--) {
    const int32_t j = i % p->dims[d];
    i /= p->dims[d];
    a += (ptrdiff_t)j * p->a_strides[d];
    b += (ptrdiff_t)j * p->b_strides[d];
  }
  *oa = a, *ob = b;
}

static int32_t batches(const TnCrtBatchMatmul *p) {
  int32_t n = 1;
  for (int32_t d = 0; d < p->ndim; d++) n *= p->dims[d];
  return n;
}

/* Walks every output element in order: `ar` and `bc` point at row r of a
 * and column c of b, and DOT (an expression over them) is stored. */
#define BMM_WALK(T, O, DOT)                                               \
  do {                                                                    \
    const int32_t nb = batches(p);                                        \
    for (int32_t i = 0; i < nb; i++) {                                    \
      ptrdiff_t oa, ob;                                                   \
      batch_offsets(p, i, &oa, &ob);                                      \
      for (int32_t r = 0; r < p->m; r++) {                                \
        const T *ar = a + oa + (ptrdiff_t)r * p->a_stride_m;              \
        for (int32_t c = 0; c < p->n; c++) {                              \
          const T *bc = b + ob + (ptrdiff_t)c * p->b_stride_n;            \
          *out++ = (O)(DOT);                                              \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  } while (0)

static float dot_f32(const TnCrtBatchMatmul *p, const float *ar,
                     const float *bc) {
  float s = 0.0f;
  for (int32_t k = 0; k < p->k; k++)
    s += ar[(ptrdiff_t)k * p->a_stride_k] * bc[(ptrdiff_t)k * p->b_stride_k];
  return s;
}

/* int32 sums that wrap, as TFLite's do in practice. */
static uint32_t dot_s8(const TnCrtBatchMatmul *p, int32_t a_offset,
                       int32_t b_offset, const int8_t *ar, const int8_t *bc) {
  uint32_t s = 0;
  for (int32_t k = 0; k < p->k; k++)
    s += (uint32_t)(((int32_t)ar[(ptrdiff_t)k * p->a_stride_k] + a_offset) *
                    ((int32_t)bc[(ptrdiff_t)k * p->b_stride_k] + b_offset));
  return s;
}

TnCrtStatus tn_crt_bmm_f32(const TnCrtBatchMatmul *p, const float *a,
                           const float *b, float *out) {
  TnCrtStatus st = check_bmm(p, a, b, out);
  if (st != TN_CRT_OK) return st;
  BMM_WALK(float, float, dot_f32(p, ar, bc));
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_bmm_s8_s32(const TnCrtBatchMatmul *p, int32_t a_offset,
                              int32_t b_offset, const int8_t *a,
                              const int8_t *b, int32_t *out) {
  TnCrtStatus st = check_bmm(p, a, b, out);
  if (st != TN_CRT_OK) return st;
  BMM_WALK(int8_t, int32_t, dot_s8(p, a_offset, b_offset, ar, bc));
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(bmm_f32, TnCrtBatchMatmul) {
  return tn_crt_bmm_f32(p, in[0], in[1], out);
}
TN_CRT_CALL(bmm_s8_s32, TnCrtCallBmmS32) {
  return tn_crt_bmm_s8_s32(&p->g, p->a_offset, p->b_offset, in[0], in[1], out);
}
