/*
 * tensor.c: tn.Tensor, a DLTensor inside an object, and its DLPack exchange.
 *
 * A tensor either owns aligned CPU storage (allocated in the same block as
 * the object, so a tensor is one allocation), is a view that keeps another
 * tensor alive, or wraps a DLPack producer's tensor and calls the producer's
 * deleter when it dies. Every tensor records the byte range of storage it may
 * reach; views are checked against it when made, so no view can point
 * outside memory that is kept alive. Shape and strides are always stored
 * explicitly (compact tensors get row-major strides) because several DLPack
 * consumers mishandle NULL strides.
 */
#include "core/core_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define MAX_NDIM 1024

typedef enum {
  STORAGE_OWNED,
  STORAGE_VIEW,
  STORAGE_DLPACK,
  STORAGE_DLPACK_LEGACY
} StorageKind;

typedef struct {
  TnTensorObj t;
  int32_t kind;
  uint32_t dlpack_flags; /* DLPACK_FLAG_BITMASK_* carried through */
  void *owner;           /* base tensor, or the producer's managed tensor */
  char *range_begin;     /* storage this tensor may reach */
  char *range_end;
  int64_t dims[]; /* shape[ndim] then strides[ndim] */
} TensorImpl;

static void tensor_deleter(TnObject *self, int flags) {
  TensorImpl *t = (TensorImpl *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    switch (t->kind) {
      case STORAGE_VIEW:
        tn_object_release(t->owner);
        break;
      case STORAGE_DLPACK: {
        DLManagedTensorVersioned *m = t->owner;
        if (m->deleter) m->deleter(m);
        break;
      }
      case STORAGE_DLPACK_LEGACY: {
        DLManagedTensor *m = t->owner;
        if (m->deleter) m->deleter(m);
        break;
      }
      default:
        break;
    }
    t->owner = NULL;
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static int64_t elem_bytes(DLDataType d) {
  return ((int64_t)d.bits * d.lanes + 7) / 8;
}

static int check_dtype(DLDataType d, const char *who) {
  if (d.bits == 0 || d.lanes == 0)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "dtype with %u bits and %u lanes has no size",
                             d.bits, d.lanes);
  return 0;
}

/*
 * DLPack packs elements narrower than a byte (int4, float4_e2m1fn, uint1,
 * int4x3: bits * lanes not a multiple of 8) little-bit-endian, several to a
 * byte; a tvmnode tensor keeps each element in whole bytes of its own, as
 * ml_dtypes does. The two layouts differ, so such tensors do not cross
 * DLPack either way (an element of whole bytes, int4x2 or float4_e2m1fnx2,
 * is the same in both).
 */
static int check_dlpack_dtype(DLDataType d, const char *who) {
  if ((d.bits * (uint32_t)d.lanes) % 8 == 0) return 0;
  char dt[32];
  const char *name = tn__dtype_text(d, dt, sizeof dt);
  return tn_error_raise_in(TN_ERR_VALUE, who,
                           "dtype %s: an element of %u bits is packed with "
                           "others in DLPack, and a tvmnode tensor keeps "
                           "one element a byte (use a whole-byte dtype such "
                           "as uint8 to exchange the bytes)",
                           name, d.bits * (uint32_t)d.lanes);
}

static int check_shape(const int64_t *shape, int32_t ndim, const char *who) {
  if (ndim < 0 || ndim > MAX_NDIM)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "ndim %d is out of range [0, %d]", ndim, MAX_NDIM);
  if (shape == NULL && ndim > 0) return tn__raise_null(who, "shape");
  for (int32_t i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tn_error_raise_in(TN_ERR_VALUE, who, "dimension %d is negative (%"
                               PRId64 ")", i, shape[i]);
  return 0;
}

/*
 * Numpy's rule, which every tensor keeps: the product of the dimensions (a
 * 0 counted as 1) times the element size fits int64. An empty shape needs
 * it too: its row-major strides are those partial products. Then the
 * element count, the byte size and the compact strides of the shape never
 * overflow. OverflowError naming the dimension that breaks it.
 */
static int check_size(const int64_t *shape, int32_t ndim, DLDataType dtype,
                      const char *who) {
  int64_t bytes, at;
  if (!tn__ckd_span_bytes(&bytes, shape, ndim, elem_bytes(dtype), &at))
    return 0;
  char dt[32];
  tn_dtype_print(dtype, dt, sizeof dt);
  if (at >= 0)
    return tn_error_raise_in(TN_ERR_OVERFLOW, who, "shape: dimension %"
                             PRId64 " (%" PRId64 ") takes the size of the "
                             "%s tensor past int64 bytes (a 0 dimension "
                             "counted as 1)", at, shape[at], dt);
  return tn_error_raise_in(TN_ERR_OVERFLOW, who, "shape: the size of the %s "
                           "tensor is more than int64 bytes", dt);
}

/* Number of elements, -1 with an OverflowError. */
static int64_t numel(const int64_t *shape, int32_t ndim, const char *who) {
  int64_t n;
  if (tn__ckd_numel(&n, shape, ndim, NULL))
    return tn_error_raise_in(TN_ERR_OVERFLOW, who,
                             "the element count overflows int64");
  return n;
}

/* (check_size holds for the shape, so these products fit) */
static void compact_strides(const int64_t *shape, int32_t ndim,
                            int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = ndim; i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

/*
 * The byte range [lo, hi) relative to the data pointer plus byte offset that
 * a strided tensor can touch; an empty tensor touches nothing (lo == hi).
 * Returns -1 with an OverflowError.
 */
static int reach(const int64_t *shape, const int64_t *strides, int32_t ndim,
                 DLDataType dtype, int64_t *lo, int64_t *hi, const char *who) {
  int64_t eb = elem_bytes(dtype), min = 0, max = 0;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] == 0) {
      *lo = *hi = 0;
      return 0;
    }
  }
  for (int32_t i = 0; i < ndim; i++) {
    int64_t step;
    if (__builtin_mul_overflow(strides[i], shape[i] - 1, &step) ||
        __builtin_mul_overflow(step, eb, &step) ||
        __builtin_add_overflow(step < 0 ? min : max, step,
                               step < 0 ? &min : &max))
      return tn_error_raise_in(TN_ERR_OVERFLOW, who,
                               "the strides reach beyond int64 bytes");
  }
  *lo = min;
  if (__builtin_add_overflow(max, eb, hi))
    return tn_error_raise_in(TN_ERR_OVERFLOW, who,
                             "the strides reach beyond int64 bytes");
  return 0;
}

static TensorImpl *impl_alloc(int32_t ndim, size_t extra, size_t align,
                              size_t *header_bytes, const char *who) {
  size_t head = sizeof(TensorImpl) + 2 * (size_t)ndim * sizeof(int64_t);
  if (align) head = (head + align - 1) / align * align;
  if (extra > SIZE_MAX - head) {
    tn__raise_memory(who, SIZE_MAX);
    return NULL;
  }
  TensorImpl *t =
      tn__object_malloc(head + extra, align, TN_TYPE_TENSOR, who);
  if (t == NULL) return NULL;
  tn__object_zero_body(t, sizeof(TensorImpl));
  tn__object_init(&t->t.header, TN_TYPE_TENSOR, tensor_deleter);
  t->t.dl.ndim = ndim;
  t->t.dl.shape = t->dims;
  t->t.dl.strides = t->dims + ndim;
  if (header_bytes) *header_bytes = head;
  return t;
}

TN_API TnObject *tn_tensor_empty(const int64_t *shape, int32_t ndim,
                                 DLDataType dtype, DLDevice device) {
  const char *who = "tn_tensor_empty";
  if (device.device_type != kDLCPU)
    return tn_error_raise_in(TN_ERR_VALUE, who, "only CPU storage can be "
                             "allocated here, got device type %d",
                             (int)device.device_type),
           NULL;
  if (check_shape(shape, ndim, who) || check_dtype(dtype, who) ||
      check_size(shape, ndim, dtype, who))
    return NULL;
  int64_t n = numel(shape, ndim, who), nbytes;
  if (n < 0) return NULL;
  if (__builtin_mul_overflow(n, elem_bytes(dtype), &nbytes))
    return tn_error_raise_in(TN_ERR_OVERFLOW, who, "the byte size overflows"),
           NULL;
  size_t head;
  TensorImpl *t =
      impl_alloc(ndim, (size_t)nbytes, TN_TENSOR_ALIGNMENT, &head, who);
  if (t == NULL) return NULL;
  char *data = (char *)t + head;
  memset(data, 0, (size_t)nbytes);
  if (ndim) memcpy(t->dims, shape, (size_t)ndim * sizeof(int64_t));
  compact_strides(shape, ndim, t->dims + ndim);
  t->kind = STORAGE_OWNED;
  t->t.dl.data = data;
  t->t.dl.device = device;
  t->t.dl.dtype = dtype;
  t->t.dl.byte_offset = 0;
  t->range_begin = data;
  t->range_end = data + nbytes;
  return &t->t.header;
}

TN_API TnObject *tn_tensor_view(TnObject *base, const int64_t *shape,
                                const int64_t *strides, int32_t ndim,
                                DLDataType dtype, uint64_t byte_offset) {
  const char *who = "tn_tensor_view";
  if (tn__check_object(base, TN_TYPE_TENSOR, who, "base")) return NULL;
  if (check_shape(shape, ndim, who) || check_dtype(dtype, who) ||
      check_size(shape, ndim, dtype, who))
    return NULL;
  TensorImpl *b = (TensorImpl *)base;
  TensorImpl *t = impl_alloc(ndim, 0, 0, NULL, who);
  if (t == NULL) return NULL;
  if (ndim) memcpy(t->dims, shape, (size_t)ndim * sizeof(int64_t));
  if (strides) {
    if (ndim) memcpy(t->dims + ndim, strides, (size_t)ndim * sizeof(int64_t));
  } else {
    compact_strides(shape, ndim, t->dims + ndim);
  }
  int64_t lo, hi;
  if (reach(t->dims, t->dims + ndim, ndim, dtype, &lo, &hi, who)) goto fail;
  intptr_t start, first, last;
  if (byte_offset > (uint64_t)INT64_MAX ||
      __builtin_add_overflow((intptr_t)b->t.dl.data, (intptr_t)byte_offset,
                             &start) ||
      __builtin_add_overflow(start, (intptr_t)lo, &first) ||
      __builtin_add_overflow(start, (intptr_t)hi, &last) ||
      (hi > lo && (first < (intptr_t)b->range_begin ||
                   last > (intptr_t)b->range_end))) {
    tn_error_raise_in(TN_ERR_VALUE, who, "a view with byte_offset %" PRIu64
                      " reaches bytes [%" PRId64 ", %" PRId64 ") past the "
                      "base's data pointer, outside the %td bytes of storage "
                      "the base can reach", byte_offset,
                      (int64_t)byte_offset + lo, (int64_t)byte_offset + hi,
                      b->range_end - b->range_begin);
    goto fail;
  }
  t->kind = STORAGE_VIEW;
  tn__retain(base);
  t->owner = base;
  t->dlpack_flags = b->dlpack_flags;
  t->t.dl.data = b->t.dl.data;
  t->t.dl.device = b->t.dl.device;
  t->t.dl.dtype = dtype;
  t->t.dl.byte_offset = byte_offset;
  t->range_begin = b->range_begin;
  t->range_end = b->range_end;
  return &t->t.header;
fail:
  tn__release(&t->t.header);
  return NULL;
}

TN_API DLTensor *tn_tensor_dltensor(TnObject *tensor) {
  if (tn__check_object(tensor, TN_TYPE_TENSOR, "tn_tensor_dltensor",
                       "tensor"))
    return NULL;
  return &((TnTensorObj *)tensor)->dl;
}

TN_API int64_t tn_tensor_nbytes(const TnObject *tensor) {
  if (tn__check_object(tensor, TN_TYPE_TENSOR, "tn_tensor_nbytes", "tensor"))
    return -1;
  const DLTensor *dl = &((const TnTensorObj *)tensor)->dl;
  int64_t n = numel(dl->shape, dl->ndim, "tn_tensor_nbytes"), bytes;
  if (n < 0) return -1;
  if (__builtin_mul_overflow(n, elem_bytes(dl->dtype), &bytes))
    return TN_RAISE(OVERFLOW, "the byte size overflows int64");
  return bytes;
}

static bool dl_is_contiguous(const DLTensor *dl) {
  if (dl->strides == NULL) return true;
  /* no elements: any strides will do (exporters give such tensors strides
   * of 0) */
  for (int32_t i = 0; i < dl->ndim; i++)
    if (dl->shape[i] == 0) return true;
  int64_t expect = 1;
  for (int32_t i = dl->ndim; i-- > 0;) {
    if (dl->shape[i] == 1) continue;
    if (dl->strides[i] != expect) return false;
    expect *= dl->shape[i];
  }
  return true;
}

bool tn__tensor_contiguous(const TnObject *tensor) {
  return dl_is_contiguous(&((const TnTensorObj *)tensor)->dl);
}

TN_API int tn_tensor_is_contiguous(const TnObject *tensor, int *contiguous) {
  if (tn__check_object(tensor, TN_TYPE_TENSOR, "tn_tensor_is_contiguous",
                       "tensor"))
    return -1;
  if (contiguous == NULL)
    return tn__raise_null("tn_tensor_is_contiguous", "contiguous");
  *contiguous = tn__tensor_contiguous(tensor);
  return 0;
}

TN_API int tn_tensor_is_readonly(const TnObject *tensor, int *readonly) {
  if (tn__check_object(tensor, TN_TYPE_TENSOR, "tn_tensor_is_readonly",
                       "tensor"))
    return -1;
  if (readonly == NULL) return tn__raise_null("tn_tensor_is_readonly", "readonly");
  const TensorImpl *t = (const TensorImpl *)tensor;
  *readonly = (t->dlpack_flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* DLPack import                                                             */
/* ------------------------------------------------------------------------ */

static TnObject *wrap_dltensor(const DLTensor *src, int kind, void *owner,
                               uint64_t flags, const char *who) {
  if (check_shape(src->shape, src->ndim, who) ||
      check_dtype(src->dtype, who) || check_dlpack_dtype(src->dtype, who) ||
      check_size(src->shape, src->ndim, src->dtype, who))
    return NULL;
  TensorImpl *t = impl_alloc(src->ndim, 0, 0, NULL, who);
  if (t == NULL) return NULL;
  int32_t ndim = src->ndim;
  if (ndim) memcpy(t->dims, src->shape, (size_t)ndim * sizeof(int64_t));
  if (src->strides) {
    if (ndim)
      memcpy(t->dims + ndim, src->strides, (size_t)ndim * sizeof(int64_t));
  } else {
    compact_strides(src->shape, ndim, t->dims + ndim);
  }
  int64_t lo, hi;
  if (reach(t->dims, t->dims + ndim, ndim, src->dtype, &lo, &hi, who)) {
    tn__release(&t->t.header);
    return NULL;
  }
  t->t.dl.data = src->data;
  t->t.dl.device = src->device;
  t->t.dl.dtype = src->dtype;
  t->t.dl.byte_offset = src->byte_offset;
  char *origin = (char *)src->data + src->byte_offset;
  t->range_begin = origin + lo;
  t->range_end = origin + hi;
  t->kind = kind;
  t->owner = owner;
  t->dlpack_flags = (uint32_t)flags;
  return &t->t.header;
}

TN_API TnObject *tn_tensor_from_dlpack(DLManagedTensorVersioned *managed) {
  const char *who = "tn_tensor_from_dlpack";
  if (managed == NULL) return tn__raise_null(who, "managed"), NULL;
  TnObject *t = NULL;
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    tn_error_raise_in(TN_ERR_VALUE, who, "DLPack major version %u is not "
                      "supported (this library speaks %d.%d)",
                      managed->version.major, DLPACK_MAJOR_VERSION,
                      DLPACK_MINOR_VERSION);
  } else {
    t = wrap_dltensor(&managed->dl_tensor, STORAGE_DLPACK, managed,
                      managed->flags, who);
  }
  if (t == NULL && managed->deleter) managed->deleter(managed);
  return t;
}

TN_API TnObject *tn_tensor_from_dlpack_legacy(DLManagedTensor *managed) {
  const char *who = "tn_tensor_from_dlpack_legacy";
  if (managed == NULL) return tn__raise_null(who, "managed"), NULL;
  TnObject *t = wrap_dltensor(&managed->dl_tensor, STORAGE_DLPACK_LEGACY,
                              managed, 0, who);
  if (t == NULL && managed->deleter) managed->deleter(managed);
  return t;
}

/* ------------------------------------------------------------------------ */
/* DLPack export                                                             */
/* ------------------------------------------------------------------------ */

static void export_deleter(DLManagedTensorVersioned *m) {
  tn_object_release(m->manager_ctx);
  free(m);
}

static void export_deleter_legacy(DLManagedTensor *m) {
  tn_object_release(m->manager_ctx);
  free(m);
}

TN_API DLManagedTensorVersioned *tn_tensor_to_dlpack(TnObject *tensor) {
  const char *who = "tn_tensor_to_dlpack";
  if (tn__check_object(tensor, TN_TYPE_TENSOR, who, "tensor") ||
      check_dlpack_dtype(((TnTensorObj *)tensor)->dl.dtype, who))
    return NULL;
  DLManagedTensorVersioned *m = malloc(sizeof *m);
  if (m == NULL) return tn__raise_memory(who, sizeof *m), NULL;
  TensorImpl *t = (TensorImpl *)tensor;
  tn__retain(tensor);
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = tensor;
  m->deleter = export_deleter;
  m->flags = t->dlpack_flags & DLPACK_FLAG_BITMASK_READ_ONLY;
  m->dl_tensor = t->t.dl;
  return m;
}

TN_API DLManagedTensor *tn_tensor_to_dlpack_legacy(TnObject *tensor) {
  const char *who = "tn_tensor_to_dlpack_legacy";
  if (tn__check_object(tensor, TN_TYPE_TENSOR, who, "tensor") ||
      check_dlpack_dtype(((TnTensorObj *)tensor)->dl.dtype, who))
    return NULL;
  DLManagedTensor *m = malloc(sizeof *m);
  if (m == NULL) return tn__raise_memory(who, sizeof *m), NULL;
  tn__retain(tensor);
  m->manager_ctx = tensor;
  m->deleter = export_deleter_legacy;
  m->dl_tensor = ((TnTensorObj *)tensor)->dl;
  return m;
}

/* ------------------------------------------------------------------------ */
/* Element bytes, for structural equality, hashing and serialisation          */
/* ------------------------------------------------------------------------ */

/* Call `fn` on each element's bytes in row-major order; stops early when it
 * returns non-zero and returns that. CPU tensors only. */
int tn__tensor_walk(const DLTensor *t,
                    int (*fn)(const char *elem, size_t size, void *ctx),
                    void *ctx) {
  size_t eb = (size_t)elem_bytes(t->dtype);
  int64_t n; /* (cannot overflow for a tensor: check_size) */
  if (tn__ckd_numel(&n, t->shape, t->ndim, NULL) || n == 0) return 0;
  const char *base = (const char *)t->data + t->byte_offset;
  int64_t idx[MAX_NDIM] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = k;
    if (t->strides) {
      off = 0;
      for (int32_t i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    }
    int rc = fn(base + off * (int64_t)eb, eb, ctx);
    if (rc) return rc;
    for (int32_t i = t->ndim; i-- > 0;) {
      if (++idx[i] < t->shape[i]) break;
      idx[i] = 0;
    }
  }
  return 0;
}

static int copy_elem(const char *elem, size_t size, void *ctx) {
  char **dst = ctx;
  memcpy(*dst, elem, size);
  *dst += size;
  return 0;
}

/* Copy the elements, compact and row-major, into `dst` (nbytes long). */
void tn__tensor_copy_compact(const DLTensor *t, void *dst) {
  if (dl_is_contiguous(t)) {
    int64_t n;
    if (tn__ckd_numel(&n, t->shape, t->ndim, NULL)) return;
    memcpy(dst, (const char *)t->data + t->byte_offset,
           (size_t)(n * elem_bytes(t->dtype)));
    return;
  }
  char *p = dst;
  tn__tensor_walk(t, copy_elem, &p);
}
