/*
 * reduce_walk.h: how the mean kernels (pool_f32.c, pool_s8.c) walk a
 * reduction. Freestanding, header-only (static inline).
 */
#ifndef TN_CRT_REDUCE_WALK_H
#define TN_CRT_REDUCE_WALK_H

#include <stdint.h>

#include "tvmnode/crt/kernels.h"

/* A reduction seen as input rows: the innermost dim is one row, walked
 * contiguously; an odometer over the outer dims keeps the output offset of
 * the current row (output strides are 0 on reduced dims). A row either
 * folds into one output (innermost dim reduced) or adds element by element
 * into a run of outputs (innermost dim kept), so every output receives its
 * elements in the input's order, and both inner loops are plain streams a
 * compiler vectorises. */
typedef struct {
  int32_t n, row, rows, outputs, count, inner_reduced;
  int32_t dims[TN_CRT_MAX_DIMS], ostr[TN_CRT_MAX_DIMS], idx[TN_CRT_MAX_DIMS];
  int32_t off;
} MeanWalk;

static inline TnCrtStatus mean_walk(const TnCrtReduce *p, MeanWalk *w) {
  if (p == NULL || p->ndim < 1 || p->ndim > TN_CRT_MAX_DIMS ||
      (p->reduce_mask >> p->ndim) != 0)
    return TN_CRT_INVALID_ARGUMENT;
  int64_t total = 1, outputs = 1, count = 1;
  for (int32_t d = p->ndim - 1; d >= 0; d--) {
    int32_t e = p->dims[d];
    if (e < 0) return TN_CRT_INVALID_ARGUMENT;
    total *= e;
    if (total > INT32_MAX) return TN_CRT_OVERFLOW;
    if (d < p->ndim - 1) {
      w->dims[d] = e, w->idx[d] = 0;
      w->ostr[d] = (p->reduce_mask >> d) & 1 ? 0 : (int32_t)outputs;
    }
    if ((p->reduce_mask >> d) & 1) count *= e;
    else outputs *= e;
  }
  w->n = p->ndim - 1;
  w->row = p->dims[p->ndim - 1];
  w->rows = w->row ? (int32_t)(total / w->row) : 0;
  w->outputs = (int32_t)outputs, w->count = (int32_t)count;
  w->inner_reduced = (int32_t)((p->reduce_mask >> w->n) & 1);
  w->off = 0;
  return TN_CRT_OK;
}

static inline void mean_next(MeanWalk *w) {
  for (int32_t d = w->n - 1; d >= 0; d--) {
    w->off += w->ostr[d];
    if (++w->idx[d] < w->dims[d]) return;
    w->off -= w->ostr[d] * w->dims[d];
    w->idx[d] = 0;
  }
}

#endif
