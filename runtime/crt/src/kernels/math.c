/*
 * math.c: the float32 elementwise math of TFLite's ABS, SQRT, RSQRT and LOG
 * (TFLM's elementwise.cc), one form, math_f32, whose `op` picks the
 * function once per call. Each loop is a plain loop over the elements: the
 * math library's call (or the square root instruction) dominates it, so
 * there is nothing for an unrolled form to gain. The functions are the
 * float ones TFLite calls (std::sqrt and std::log on a float are sqrtf and
 * logf), so results are TFLite's wherever the C library's are.
 */
#include <stddef.h>
#include <stdint.h>

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
  }
  return TN_CRT_INVALID_ARGUMENT;
}

/* ---- the uniform entry (tvmnode/crt/calls.h) ------------------------------- */

TN_CRT_CALL(math_f32, TnCrtCallMath) {
  return tn_crt_math_f32((TnCrtMathOp)p->op, p->n, in[0], out);
}
