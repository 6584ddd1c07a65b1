/*
 * svdf.c: TFLite's SVDF, in the two halves the IR gives it (see kernels.h):
 * the state's update, a move of every row by one element with the new
 * feature at its end, which runs in place when the output is the state;
 * and the time filter, each filter's dot product with its time weights
 * summed over the unit's filters. The integer forms accumulate in int32
 * as TFLite Micro's reference SVDF does; bias, rescale and activation are
 * operators of their own.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

TnCrtStatus tn_crt_svdf_state(const TnCrtSvdfState *p, const void *state,
                              const void *feature, void *out) {
  if (!p || !state || !feature || !out) return TN_CRT_NULL_POINTER;
  if (p->rows < 0 || p->memory < 1 ||
      (p->elem_bytes != 1 && p->elem_bytes != 2 && p->elem_bytes != 4))
    return TN_CRT_INVALID_ARGUMENT;
  const size_t e = (size_t)p->elem_bytes, m = (size_t)p->memory;
  const uint8_t *s = state, *f = feature;
  uint8_t *o = out;
  /* row r reads only row r, so rows in order are safe in place */
  for (size_t r = 0; r < (size_t)p->rows; r++) {
    uint8_t *row = o + r * m * e;
    if (m > 1) memmove(row, s + (r * m + 1) * e, (m - 1) * e);
    memcpy(row + (m - 1) * e, f + r * e, e);
  }
  return TN_CRT_OK;
}

static TnCrtStatus time_check(const TnCrtSvdfTime *p, const void *state,
                              const void *w, const void *out) {
  if (!p || !state || !w || !out) return TN_CRT_NULL_POINTER;
  if (p->batch < 0 || p->filters < 1 || p->memory < 1 || p->rank < 1 ||
      p->filters % p->rank)
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

/* One form per element type: T the state's, U the sum's (the integer
 * sums wrap as TFLite Micro's int32 ones do, without undefined behaviour),
 * A the output's; PROD(x, w) one product, ZP the zero point. */
#define SVDF_TIME(name, T, U, A, PROD)                                       \
  TnCrtStatus name(const TnCrtSvdfTime *p, const T *state,                   \
                   const T *weights_time, A *out) {                          \
    TnCrtStatus st = time_check(p, state, weights_time, out);                \
    if (st != TN_CRT_OK) return st;                                          \
    const int32_t m = p->memory, units = p->filters / p->rank;               \
    const int64_t zp = p->zero_point;                                        \
    (void)zp;                                                                \
    for (int32_t b = 0; b < p->batch; b++)                                   \
      for (int32_t u = 0; u < units; u++) {                                  \
        U sum = 0;                                                           \
        for (int32_t r = 0; r < p->rank; r++) {                              \
          const int32_t f = u * p->rank + r;                                 \
          const T *row = state + ((size_t)b * p->filters + f) * m;           \
          const T *w = weights_time + (size_t)f * m;                         \
          U dot = 0;                                                         \
          for (int32_t j = 0; j < m; j++) dot += PROD(row[j], w[j]);         \
          sum += dot;                                                        \
        }                                                                    \
        out[(size_t)b * units + u] = (A)sum;                                 \
      }                                                                      \
    return TN_CRT_OK;                                                        \
  }
#define PROD_F32(x, w) ((x) * (w))
#define PROD_INT(x, w) ((uint32_t)(((int64_t)(x) - zp) * (int64_t)(w)))

SVDF_TIME(tn_crt_svdf_time_f32, float, float, float, PROD_F32)
SVDF_TIME(tn_crt_svdf_time_s16, int16_t, uint32_t, int32_t, PROD_INT)
SVDF_TIME(tn_crt_svdf_time_s8, int8_t, uint32_t, int32_t, PROD_INT)

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(svdf_state, TnCrtSvdfState) {
  return tn_crt_svdf_state(p, in[0], in[1], out);
}
TN_CRT_CALL(svdf_time_f32, TnCrtSvdfTime) {
  return tn_crt_svdf_time_f32(p, in[0], in[1], out);
}
TN_CRT_CALL(svdf_time_s16, TnCrtSvdfTime) {
  return tn_crt_svdf_time_s16(p, in[0], in[1], out);
}
TN_CRT_CALL(svdf_time_s8, TnCrtSvdfTime) {
  return tn_crt_svdf_time_s8(p, in[0], in[1], out);
}
