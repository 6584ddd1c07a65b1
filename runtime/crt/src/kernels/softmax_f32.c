/*
 * softmax_f32.c: float32 softmax over the middle axis of [outer, n, inner]
 * for the crt, max-subtracted so that no exp overflows. With inner == 1
 * (the usual last-axis softmax) each row is three passes over contiguous
 * memory: max, exp and sum (the exponentials stored in the output), scale.
 * With inner > 1 the reduction runs across rows that are inner elements
 * apart, so it is done for up to 32 inner positions at a time with their
 * maxima and sums in small local arrays, keeping every inner loop
 * contiguous and the kernel free of caller scratch.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

#define CHUNK 32

static void softmax_row(int32_t n, const float *restrict x,
                        float *restrict y) {
  float m = x[0];
  for (int32_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  float s = 0.0f;
  for (int32_t i = 0; i < n; i++) {
    y[i] = expf(x[i] - m);
    s += y[i];
  }
  for (int32_t i = 0; i < n; i++) y[i] /= s;
}

/* Columns [j0, j0 + nb) of one [n, inner] block. */
static void softmax_cols(int32_t n, int32_t inner, int32_t nb,
                         const float *restrict x, float *restrict y) {
  float m[CHUNK], s[CHUNK];
  for (int32_t j = 0; j < nb; j++) m[j] = x[j], s[j] = 0.0f;
  for (int32_t i = 1; i < n; i++) {
    const float *r = x + (ptrdiff_t)i * inner;
    for (int32_t j = 0; j < nb; j++) m[j] = r[j] > m[j] ? r[j] : m[j];
  }
  for (int32_t i = 0; i < n; i++) {
    const float *r = x + (ptrdiff_t)i * inner;
    float *o = y + (ptrdiff_t)i * inner;
    for (int32_t j = 0; j < nb; j++) {
      o[j] = expf(r[j] - m[j]);
      s[j] += o[j];
    }
  }
  for (int32_t i = 0; i < n; i++) {
    float *o = y + (ptrdiff_t)i * inner;
    for (int32_t j = 0; j < nb; j++) o[j] /= s[j];
  }
}

TnCrtStatus tn_crt_softmax_f32(int32_t outer, int32_t n, int32_t inner,
                               const float *in, float *out) {
  if (outer <= 0 || n <= 0 || inner <= 0 || !in || !out)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)outer * n * inner > INT32_MAX) return TN_CRT_OVERFLOW;
  const ptrdiff_t block = (ptrdiff_t)n * inner;
  for (int32_t o = 0; o < outer; o++) {
    const float *x = in + o * block;
    float *y = out + o * block;
    if (inner == 1) {
      softmax_row(n, x, y);
      continue;
    }
    for (int32_t j0 = 0; j0 < inner; j0 += CHUNK)
      softmax_cols(n, inner, inner - j0 < CHUNK ? inner - j0 : CHUNK, x + j0,
                   y + j0);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entry (tvmnode/crt/calls.h) ------------------------------ */

TN_CRT_CALL(softmax_f32, TnCrtCallAxis) {
  return tn_crt_softmax_f32(p->outer, p->channels, p->inner, in[0], out);
}
