/*
 * math.c: the float32 elementwise math of TFLite's ABS, SQRT, RSQRT, LOG
 * (TFLM's elementwise.cc), ELU and HARD_SWISH, one form, math_f32, whose `op` picks the
 * function once per call. Each loop is a plain loop over the elements: the
 * math library's call (or the square root instruction) dominates it, so
 * there is nothing for an unrolled form to gain. The functions are the
 * float ones TFLite calls (std::sqrt and std::log on a float are sqrtf and
 * logf), so results are TFLite's wherever the C library's are. PRELU's
 * float form, which broadcasts alpha, is here too. ELU is
 * the one exception: TFLite calls expm1f, which a freestanding target need
 * not have; expf(x) - 1 differs from it by less than one unit in the last
 * place of 1, far inside the tolerance float results are held to.
 */
#include <stddef.h>
#include <stdint.h>

#include "binary_walk.h"
#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

/* |x| by clearing the sign bit: a call to fabsf when freestanding, and
 * this is what it does. */
static float abs1(float x) {
  union {
    float f;
    uint32_t u;
  } v = {x};
  v.u &= UINT32_C(0x7fffffff);
  return v.f;
}

TnCrtStatus tn_crt_math_f32(TnCrtMathOp op, int32_t n, const float *in,
                            float *out) {
  if (n <= 0 || in == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  switch (op) {
    case TN_CRT_ABS:
      for (int32_t i = 0; i < n; i++) out[i] = abs1(in[i]);
      return TN_CRT_OK;
    case TN_CRT_SQRT:
      for (int32_t i = 0; i < n; i++) out[i] = sqrtf(in[i]);
      return TN_CRT_OK;
    case TN_CRT_RSQRT:
      for (int32_t i = 0; i < n; i++) out[i] = 1.0f / sqrtf(in[i]);
      return TN_CRT_OK;
    case TN_CRT_LOG:
      for (int32_t i = 0; i < n; i++) out[i] = logf(in[i]);
      return TN_CRT_OK;
    case TN_CRT_ELU:
      for (int32_t i = 0; i < n; i++)
        out[i] = in[i] < 0.0f ? expf(in[i]) - 1.0f : in[i];
      return TN_CRT_OK;
    case TN_CRT_HARD_SWISH:
      for (int32_t i = 0; i < n; i++) {
        const float x = in[i], r = x + 3.0f;
        out[i] = x * (r > 6.0f ? 6.0f : r < 0.0f ? 0.0f : r) / 6.0f;
      }
      return TN_CRT_OK;
  }
  return TN_CRT_INVALID_ARGUMENT;
}

/* One row of PRELU: TFLite's float kernel, x >= 0 ? x : x * alpha. */
static void prelu_row(const void *p, const void *l, int32_t ls,
                      const void *r, int32_t rs, int32_t n, void *out) {
  const float *x = (const float *)l, *a = (const float *)r;
  float *o = (float *)out;
  (void)p;
  for (int32_t i = 0; i < n; i++) {
    const float v = x[(ptrdiff_t)i * ls];
    o[i] = v >= 0.0f ? v : v * a[(ptrdiff_t)i * rs];
  }
}

TnCrtStatus tn_crt_prelu_f32(const TnCrtBroadcast *b, const float *data,
                             const float *alpha, float *out) {
  return tn__crt_binary_walk(b, sizeof(float), data, alpha, out, prelu_row,
                             NULL);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ----------------------------- */

TN_CRT_CALL(math_f32, TnCrtCallMath) {
  return tn_crt_math_f32((TnCrtMathOp)p->op, p->n, in[0], out);
}
TN_CRT_CALL(prelu_f32, TnCrtCallBinary) {
  return tn_crt_prelu_f32(&p->b, in[0], in[1], out);
}
