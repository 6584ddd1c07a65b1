/*
 * reduce.c: the reductions besides mean: sum (float32, int32), max and min
 * (float32, int8, int32) over any set of axes, and argmax / argmin along
 * one axis (float32, int8, int32 data, int32 indices). The int8 sum is
 * TFLite's requantized SUM and shares the int8 mean's kernel (pool_s8.c)
 * with the count left out of its multiplier.
 *
 * Sums and extremes walk their input as reduce_walk.h describes (rows of
 * the innermost dim, each folded into one output or added across a run of
 * outputs), so every output meets its elements in the input's order: the
 * float sums are TFLite's ReduceGeneric's, which adds in that order from
 * 0. An output with no elements keeps the start value (0 for a sum, the
 * type's lowest value for max and highest for min), as TFLite's.
 *
 * argmax / argmin see the data as [outer, n, inner] and keep the first
 * index of the extreme value (a strict comparison), TFLite's ArgMinMax.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "reduce_walk.h"

/* ---- sum, max, min ---------------------------------------------------------- */

/* One typed reduction: every output starts at START and folds in each of
 * its elements x as acc = STEP(acc, x), in the input's order. */
#define FOLD(name, T, START, STEP)                                             \
  static TnCrtStatus name(const TnCrtReduce *p, const T *in, T *out) {         \
    MeanWalk w;                                                                \
    TnCrtStatus st = mean_walk(p, &w);                                         \
    if (st != TN_CRT_OK) return st;                                            \
    if (w.outputs > 0 && (out == NULL || (w.rows > 0 && in == NULL)))          \
      return TN_CRT_INVALID_ARGUMENT;                                          \
    for (int32_t i = 0; i < w.outputs; i++) out[i] = (START);                  \
    const int32_t n = w.row;                                                   \
    for (int32_t r = 0; r < w.rows; r++, in += n, mean_next(&w)) {             \
      T *o = out + w.off;                                                      \
      if (w.inner_reduced) {                                                   \
        T acc = *o;                                                            \
        for (int32_t j = 0; j < n; j++) acc = STEP(acc, in[j]);                \
        *o = acc;                                                              \
      } else {                                                                 \
        for (int32_t j = 0; j < n; j++) o[j] = STEP(o[j], in[j]);              \
      }                                                                        \
    }                                                                          \
    return TN_CRT_OK;                                                          \
  }

/* ReduceGeneric's float sum adds each element to the running sum */
#define ADD_F32(acc, x) ((x) + (acc))
/* int32 sums wrap, as int32 addition does in TVM */
#define ADD_I32(acc, x) ((int32_t)((uint32_t)(acc) + (uint32_t)(x)))
/* a strict comparison, as TFLite's: an equal element leaves acc */
#define LARGER(acc, x) ((x) > (acc) ? (x) : (acc))
#define SMALLER(acc, x) ((x) < (acc) ? (x) : (acc))

FOLD(sum_f32, float, 0.0f, ADD_F32)
FOLD(sum_i32, int32_t, 0, ADD_I32)
FOLD(max_f32, float, -3.40282347e+38f, LARGER)
FOLD(min_f32, float, 3.40282347e+38f, SMALLER)
FOLD(max_s8, int8_t, INT8_MIN, LARGER)
FOLD(min_s8, int8_t, INT8_MAX, SMALLER)
FOLD(max_i32, int32_t, INT32_MIN, LARGER)
FOLD(min_i32, int32_t, INT32_MAX, SMALLER)

/* ---- argmax and argmin -------------------------------------------------------- */

#define ARG_REDUCE(name, T)                                                    \
  static TnCrtStatus name(const TnCrtCallArgReduce *p, const T *in,            \
                          int32_t *out) {                                      \
    if (p->outer < 0 || p->n < 0 || p->inner < 0)                              \
      return TN_CRT_INVALID_ARGUMENT;                                          \
    if ((int64_t)p->outer * p->inner == 0) return TN_CRT_OK;                   \
    if (out == NULL || (p->n > 0 && in == NULL))                               \
      return TN_CRT_INVALID_ARGUMENT;                                          \
    for (int32_t o = 0; o < p->outer; o++) {                                   \
      const T *row = in + (int64_t)o * p->n * p->inner;                        \
      int32_t *dst = out + (int64_t)o * p->inner;                              \
      for (int32_t i = 0; i < p->inner; i++) {                                 \
        int32_t best = 0;                                                      \
        if (p->n > 0) {                                                        \
          T v = row[i];                                                        \
          for (int32_t j = 1; j < p->n; j++) {                                 \
            T x = row[(int64_t)j * p->inner + i];                              \
            if (p->is_min ? x < v : x > v) v = x, best = j;                    \
          }                                                                    \
        }                                                                      \
        dst[i] = best;                                                         \
      }                                                                        \
    }                                                                          \
    return TN_CRT_OK;                                                          \
  }

ARG_REDUCE(arg_reduce_f32, float)
ARG_REDUCE(arg_reduce_s8, int8_t)
ARG_REDUCE(arg_reduce_i32, int32_t)

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(sum_f32, TnCrtReduce) { return sum_f32(p, in[0], out); }
TN_CRT_CALL(sum_i32, TnCrtReduce) { return sum_i32(p, in[0], out); }
TN_CRT_CALL(max_f32, TnCrtReduce) { return max_f32(p, in[0], out); }
TN_CRT_CALL(min_f32, TnCrtReduce) { return min_f32(p, in[0], out); }
TN_CRT_CALL(max_s8, TnCrtReduce) { return max_s8(p, in[0], out); }
TN_CRT_CALL(min_s8, TnCrtReduce) { return min_s8(p, in[0], out); }
TN_CRT_CALL(max_i32, TnCrtReduce) { return max_i32(p, in[0], out); }
TN_CRT_CALL(min_i32, TnCrtReduce) { return min_i32(p, in[0], out); }
TN_CRT_CALL(arg_reduce_f32, TnCrtCallArgReduce) {
  return arg_reduce_f32(p, in[0], out);
}
TN_CRT_CALL(arg_reduce_s8, TnCrtCallArgReduce) {
  return arg_reduce_s8(p, in[0], out);
}
TN_CRT_CALL(arg_reduce_i32, TnCrtCallArgReduce) {
  return arg_reduce_i32(p, in[0], out);
}
