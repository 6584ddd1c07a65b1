/*
 * binary_walk.h: how the broadcasting binary kernels of math.c and
 * qelementwise.c walk their operands. The output is dense in b->dims; the
 * last dim is a row the kernel's row function computes with each
 * operand's element stride (0 where it is broadcast), and the other dims
 * are an odometer that moves each operand by its stride and rewinds it on
 * wrap-around, so multi-index arithmetic is paid once a row. Offsets are
 * in elements of `esize` bytes, the same for both operands and the
 * output. Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_KERNELS_BINARY_WALK_H_
#define TVMNODE_CRT_KERNELS_BINARY_WALK_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"

/* out[i] = f(l[i * ls], r[i * rs]) for i < n; `p` is the kernel's
 * parameters. */
typedef void (*TnCrtBinaryRow)(const void *p, const void *l, int32_t ls,
                               const void *r, int32_t rs, int32_t n,
                               void *out);

static inline TnCrtStatus tn__crt_binary_walk(const TnCrtBroadcast *b,
                                              size_t esize, const void *lhs,
                                              const void *rhs, void *out,
                                              TnCrtBinaryRow row,
                                              const void *p) {
  if (b == NULL || lhs == NULL || rhs == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (b->ndim < 1 || b->ndim > TN_CRT_MAX_DIMS) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t d = 0; d < b->ndim; d++)
    if (b->dims[d] <= 0) return TN_CRT_INVALID_ARGUMENT;
  const int32_t last = b->ndim - 1, n = b->dims[last];
  const char *l = (const char *)lhs, *r = (const char *)rhs;
  char *o = (char *)out;
  int32_t idx[TN_CRT_MAX_DIMS] = {0};
  ptrdiff_t lo = 0, ro = 0;
  for (;;) {
    row(p, l + lo * (ptrdiff_t)esize, b->lhs_strides[last],
        r + ro * (ptrdiff_t)esize, b->rhs_strides[last], n, o);
    o += (ptrdiff_t)n * (ptrdiff_t)esize;
    int32_t d = last - 1;
    while (d >= 0 && ++idx[d] == b->dims[d]) {
      lo -= (ptrdiff_t)b->lhs_strides[d] * (b->dims[d] - 1);
      ro -= (ptrdiff_t)b->rhs_strides[d] * (b->dims[d] - 1);
      idx[d--] = 0;
    }
    if (d < 0) return TN_CRT_OK;
    lo += b->lhs_strides[d], ro += b->rhs_strides[d];
  }
}

#endif /* TVMNODE_CRT_KERNELS_BINARY_WALK_H_ */
