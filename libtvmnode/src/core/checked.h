/*
 * checked.h: overflow-checked int64 arithmetic for shapes, the one place
 * the library does it.
 *
 * Dimensions and operator attributes come from files and other languages,
 * so any sum or product of them may overflow int64 (undefined behaviour in
 * C, and a wrong shape when it wraps). Tensor allocation and views
 * (core/tensor.c) and every operator's type inference (ir/ops_*.c) compute
 * with these instead of + and *. Each returns true when the exact result
 * does not fit, as C23's ckd_add(&r, a, b); *r is then unspecified.
 * Private to the library (included by core_internal.h).
 */
#ifndef TVMNODE_CORE_CHECKED_H_
#define TVMNODE_CORE_CHECKED_H_

#ifndef TN_BUILDING_LIBRARY
#error "checked.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tvmnode/abi.h"

static inline bool tn__ckd_add(int64_t *r, int64_t a, int64_t b) {
  return __builtin_add_overflow(a, b, r);
}

static inline bool tn__ckd_sub(int64_t *r, int64_t a, int64_t b) {
  return __builtin_sub_overflow(a, b, r);
}

static inline bool tn__ckd_mul(int64_t *r, int64_t a, int64_t b) {
  return __builtin_mul_overflow(a, b, r);
}

/*
 * The bytes a compact tensor of this shape spans: the product of its
 * dimensions, a 0 counted as 1, times `elem_bytes`. Numpy's rule: a shape
 * is only valid when this fits, even when a 0 makes it empty, because its
 * row-major strides are these partial products. True when it overflows or
 * a dimension is negative (such a shape has no size); `*at` (may be NULL)
 * is then the dimension that broke it, -1 for the element size.
 */
static inline bool tn__ckd_span_bytes(int64_t *r, const int64_t *dims,
                                      int64_t ndim, int64_t elem_bytes,
                                      int64_t *at) {
  int64_t p = 1;
  for (int64_t i = 0; i < ndim; i++) {
    if (dims[i] < 0 || tn__ckd_mul(&p, p, dims[i] ? dims[i] : 1)) {
      if (at) *at = i;
      return true;
    }
  }
  if (at) *at = -1;
  return tn__ckd_mul(r, p, elem_bytes);
}

/*
 * The element count of a shape: the product of its dimensions, 0 when one
 * of them is 0 (whatever the others), so an empty shape never overflows.
 * True when the product overflows or a dimension is negative; `*at` (may
 * be NULL) is then that dimension.
 */
static inline bool tn__ckd_numel(int64_t *r, const int64_t *dims, int64_t ndim,
                                 int64_t *at) {
  int64_t p = 1;
  bool zero = false;
  for (int64_t i = 0; i < ndim; i++) {
    if (dims[i] < 0 || (dims[i] > 0 && tn__ckd_mul(&p, p, dims[i]))) {
      if (at) *at = i;
      return true;
    }
    zero |= dims[i] == 0;
  }
  *r = zero ? 0 : p;
  return false;
}

/*
 * Raise "<op>: attribute '<attr>' = <value>: <why>" as a TypeError (what
 * type inference raises: the call has no type) and return -1: the message
 * for an attribute whose value takes a shape out of int64 or out of the
 * operators' 16 dimensions.
 */
static inline int tn__ckd_attr_error(const char *op, const char *attr,
                                     int64_t value, const char *fmt, ...)
    TN_PRINTF(4, 5);
static inline int tn__ckd_attr_error(const char *op, const char *attr,
                                     int64_t value, const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return tn_error_raise_in(TN_ERR_TYPE, op, "attribute '%s' = %" PRId64 ": %s",
                           attr, value, why);
}

#endif /* TVMNODE_CORE_CHECKED_H_ */
