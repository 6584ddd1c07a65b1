/*
 * shape.c: tn.Shape, an immutable list of non-negative dimensions stored
 * inline after the header. It is its own type rather than an Array of ints
 * because shapes are everywhere in IR and tensors, and a flat int64 array is
 * both smaller and what DLPack wants.
 */
#include "core/core_internal.h"

#include <inttypes.h>

static void shape_deleter(TnObject *self, int flags) {
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

TN_API TnObject *tn_shape_new(const int64_t *dims, int64_t ndim) {
  if (ndim < 0 || ndim > 1024)
    return TN_RAISE(VALUE, "ndim %" PRId64 " is out of range [0, 1024]", ndim),
           NULL;
  if (dims == NULL && ndim > 0) return tn__raise_null("tn_shape_new", "dims"), NULL;
  for (int64_t i = 0; i < ndim; i++)
    if (dims[i] < 0)
      return TN_RAISE(VALUE, "dimension %" PRId64 " is negative (%" PRId64 ")",
                      i, dims[i]),
             NULL;
  TnShapeObj *s = tn__object_malloc(
      sizeof(TnShapeObj) + (size_t)ndim * sizeof(int64_t), 0, TN_TYPE_SHAPE,
      "tn_shape_new");
  if (s == NULL) return NULL;
  tn__object_init(&s->header, TN_TYPE_SHAPE, shape_deleter);
  int64_t *data = (int64_t *)(s + 1);
  if (ndim) memcpy(data, dims, (size_t)ndim * sizeof(int64_t));
  s->data = data;
  s->ndim = ndim;
  return &s->header;
}

TN_API int64_t tn_shape_numel(const TnObject *shape) {
  if (tn__check_object(shape, TN_TYPE_SHAPE, "tn_shape_numel", "shape"))
    return -1;
  const TnShapeObj *s = (const TnShapeObj *)shape;
  int64_t n = 1;
  for (int64_t i = 0; i < s->ndim; i++) {
    if (__builtin_mul_overflow(n, s->data[i], &n))
      return TN_RAISE(OVERFLOW, "the element count of a shape with %" PRId64
                      " dimensions overflows int64", s->ndim);
  }
  return n;
}
