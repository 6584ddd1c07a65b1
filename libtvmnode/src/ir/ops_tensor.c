/*
 * ops_tensor.c: elementwise, broadcasting and shape operators, with their
 * attribute node types and type inference: add, subtract, multiply,
 * divide, maximum, minimum, negative, exp, sigmoid, tanh, clip, cast,
 * reshape, transpose, concatenate, squeeze, expand_dims, strided_slice,
 * and the reduction mean (whose axis rules qnn.mean shares).
 *
 * Each inference function checks every argument it reads and names the
 * operator, the argument and its type in the error; shapes are static.
 */
#include "ir/ops_nn.h"

#include <inttypes.h>

/* ---- attribute node types ------------------------------------------------- */

typedef TnIrClipAttrs ClipAttrs;
typedef TnIrLeakyReluAttrs LeakyReluAttrs;

typedef struct {
  TnObject header;
  DLDataType dtype;
} CastAttrs;

typedef struct {
  TnObject header;
  TnAny newshape;
} ReshapeAttrs;

typedef struct {
  TnObject header;
  TnAny axes;
} TransposeAttrs;

typedef TnIrAxisAttrs AxisAttrs;

typedef struct {
  TnObject header;
  TnAny axis;
} SqueezeAttrs;

typedef struct {
  TnObject header;
  int64_t axis, num_newaxis;
} ExpandDimsAttrs;

typedef struct {
  TnObject header;
  TnAny begin, end, strides, axes;
} StridedSliceAttrs;

static const TnFieldDesc leaky_relu_fields[] = {
    TN_FIELD_FLOAT_D(LeakyReluAttrs, alpha, 0.01, 0,
                     "the slope below zero"),
};
static const TnFieldDesc clip_fields[] = {
    TN_FIELD_FLOAT(ClipAttrs, a_min, 0, "lower bound"),
    TN_FIELD_FLOAT(ClipAttrs, a_max, 0, "upper bound"),
};
static const TnFieldDesc cast_fields[] = {
    TN_FIELD_DTYPE(CastAttrs, dtype, 0, "the target type"),
};
static const TnFieldDesc reshape_fields[] = {
    TN_FIELD_ANY(ReshapeAttrs, newshape, 0,
                 "the new dimensions; -1 is inferred, 0 copies the input's"),
};
static const TnFieldDesc transpose_fields[] = {
    TN_FIELD_ANY(TransposeAttrs, axes, TN_FIELD_OPTIONAL,
                 "the permutation; None reverses the axes"),
};
static const TnFieldDesc concat_fields[] = {
    TN_FIELD_INT_D(AxisAttrs, axis, 0, 0, NULL),
};
static const TnFieldDesc squeeze_fields[] = {
    TN_FIELD_ANY(SqueezeAttrs, axis, TN_FIELD_OPTIONAL,
                 "the axes to drop (each of size 1); None drops every 1"),
};
static const TnFieldDesc expand_fields[] = {
    TN_FIELD_INT(ExpandDimsAttrs, axis, 0, NULL),
    TN_FIELD_INT_D(ExpandDimsAttrs, num_newaxis, 1, 0, NULL),
};

static const TnFieldDesc reduce_fields[] = {
    TN_FIELD_ANY(TnIrReduceAttrs, axis, TN_FIELD_OPTIONAL,
                 "the axes to reduce; None (or empty) reduces every axis"),
    TN_FIELD_BOOL_D(TnIrReduceAttrs, keepdims, false, 0,
                    "keep each reduced axis, with extent 1"),
    TN_FIELD_BOOL_D(TnIrReduceAttrs, exclude, false, 0,
                    "reduce the axes not listed in axis instead"),
};
static const TnFieldDesc strided_slice_fields[] = {
    TN_FIELD_ANY(StridedSliceAttrs, begin, 0,
                 "first index per sliced axis; negative counts from the end"),
    TN_FIELD_ANY(StridedSliceAttrs, end, 0,
                 "stop per sliced axis (excluded), as numpy's; clamped"),
    TN_FIELD_ANY(StridedSliceAttrs, strides, TN_FIELD_OPTIONAL,
                 "step per sliced axis, non-zero, may be negative; None is 1"),
    TN_FIELD_ANY(StridedSliceAttrs, axes, TN_FIELD_OPTIONAL,
                 "the axes begin/end/strides apply to; None: the first "
                 "len(begin)"),
};

/* ---- helpers -------------------------------------------------------------- */

static TnObject *tensor(const int64_t *dims, int32_t ndim, DLDataType dtype) {
  return tn_ir_tensor_type(dims, ndim, dtype);
}

static TnObject *same_type(const TnIrTensorType *t) {
  tn_object_retain((TnObject *)t);
  return (TnObject *)t;
}

/* Normalise an axis in [-ndim, ndim) to [0, ndim); -1 with a TypeError. */
static int64_t axis_of(const char *op, int64_t axis, int64_t ndim,
                       TnObject *type, int32_t arg) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    tn__ir_arg_error(op, arg, "data", type, "axis %" PRId64 " is out of "
                     "range for %" PRId64 " dimensions", axis, ndim);
    return -1;
  }
  return a;
}

/* ---- elementwise and broadcasting ----------------------------------------- */

static TnObject *infer_broadcast(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "lhs");
  const TnIrTensorType *b = a ? tn__ir_tensor_arg(op, types, 1, "rhs") : NULL;
  if (b == NULL) return NULL;
  if (!tn__ir_dtype_eq(a->dtype, b->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  int64_t dims[TN_IR_MAX_DIMS];
  int32_t nd;
  if (tn__ir_broadcast(op, a, b, dims, &nd)) return NULL;
  /* Most often the result is one of the operands' types: share it. */
  for (int i = 0; i < 2; i++) {
    const TnIrTensorType *t = i ? b : a;
    if (tn__ir_ndim(t) == nd &&
        memcmp(tn__ir_dims(t), dims, sizeof(int64_t) * (size_t)nd) == 0)
      return same_type(t);
  }
  return tensor(dims, nd, a->dtype);
}

static TnObject *infer_unary(const char *op, TnObject *const *types,
                             int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  return a ? same_type(a) : NULL;
}

TnObject *tn__ir_infer_unary_float(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  if (!tn__ir_is_float(a->dtype))
    return tn__ir_arg_error(op, 0, "data", types[0],
                            "expected a floating-point tensor"), NULL;
  return same_type(a);
}

static TnObject *infer_clip(const char *op, TnObject *const *types, int32_t n,
                            TnObject *attrs) {
  const ClipAttrs *c = (const ClipAttrs *)attrs;
  if (c->a_min > c->a_max) {
    tn_error_raise_in(TN_ERR_TYPE, op, "a_min %g is above a_max %g", c->a_min,
                      c->a_max);
    return NULL;
  }
  return infer_unary(op, types, n, attrs);
}

static TnObject *infer_cast(const char *op, TnObject *const *types, int32_t n,
                            TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  DLDataType to = ((const CastAttrs *)attrs)->dtype;
  if (tn__ir_is_void(to) || to.bits == 0) {
    tn_error_raise_in(TN_ERR_TYPE, op,
                      "attribute 'dtype' must be a value type");
    return NULL;
  }
  return tensor(tn__ir_dims(a), (int32_t)tn__ir_ndim(a), to);
}

/* ---- shapes --------------------------------------------------------------- */

static TnObject *infer_reshape(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  int64_t want[TN_IR_MAX_DIMS];
  int32_t nd = tn__ir_attr_ints(attrs, "newshape", want, TN_IR_MAX_DIMS, op);
  if (nd < 0) return NULL;
  /* Element counts are checked products (dimensions and attributes come
   * from files); `known` counts a 0 as 1 until the end, so a shape whose
   * other dimensions overflow is refused even when it is empty (it could
   * not have row-major strides, see tn__ckd_span_bytes). */
  int64_t in_n, known = 1, infer_at = -1, bad, next;
  bool empty = false;
  if (tn__ckd_numel(&in_n, tn__ir_dims(a), tn__ir_ndim(a), &bad))
    return tn__ir_arg_error(op, 0, "data", types[0], "its element count "
                            "overflows int64 (at dimension %" PRId64 ")",
                            bad), NULL;
  for (int32_t i = 0; i < nd; i++) {
    if (want[i] == 0) {
      if (i >= tn__ir_ndim(a))
        return tn__ir_arg_error(op, 0, "data", types[0], "newshape[%d] = 0 "
                                "copies a dimension the input does not have",
                                i), NULL;
      want[i] = tn__ir_dims(a)[i];
    }
    if (want[i] == -1) {
      if (infer_at >= 0) {
        tn_error_raise_in(TN_ERR_TYPE, op, "newshape has more than one -1");
        return NULL;
      }
      infer_at = i;
    } else if (want[i] < 0) {
      tn_error_raise_in(TN_ERR_TYPE, op, "newshape[%d] = %" PRId64
                        " is invalid", i, want[i]);
      return NULL;
    } else if (want[i] == 0) {
      empty = true;
    } else if (tn__ckd_mul(&next, known, want[i])) {
      char attr[32];
      snprintf(attr, sizeof attr, "newshape[%d]", i);
      tn__ckd_attr_error(op, attr, want[i], "times the %" PRId64
                         " elements before it is more than int64 holds",
                         known);
      return NULL;
    } else {
      known = next;
    }
  }
  if (empty) known = 0;
  if (infer_at >= 0) {
    if (known == 0 || in_n % known != 0)
      return tn__ir_arg_error(op, 0, "data", types[0], "%" PRId64 " elements "
                              "do not reshape with -1 into a multiple of %"
                              PRId64, in_n, known), NULL;
    want[infer_at] = in_n / known;
    known = in_n;
  }
  if (known != in_n)
    return tn__ir_arg_error(op, 0, "data", types[0], "%" PRId64 " elements "
                            "cannot reshape to %" PRId64 " (the product of "
                            "newshape)", in_n, known), NULL;
  return tensor(want, nd, a->dtype);
}

static TnObject *infer_transpose(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  int64_t nd = tn__ir_ndim(a), axes[TN_IR_MAX_DIMS], out[TN_IR_MAX_DIMS];
  int32_t na = tn__ir_attr_ints(attrs, "axes", axes, TN_IR_MAX_DIMS, op);
  if (na < 0) return NULL;
  if (na == 0) {
    for (int64_t i = 0; i < nd; i++) axes[i] = nd - 1 - i;
    na = (int32_t)nd;
  }
  if (na != nd)
    return tn__ir_arg_error(op, 0, "data", types[0], "axes has %d entries for "
                            "%" PRId64 " dimensions", na, nd), NULL;
  bool seen[TN_IR_MAX_DIMS] = {0};
  for (int32_t i = 0; i < na; i++) {
    int64_t ax = axis_of(op, axes[i], nd, types[0], 0);
    if (ax < 0) return NULL;
    if (seen[ax]) {
      tn_error_raise_in(TN_ERR_TYPE, op, "axes is not a permutation (axis %"
                        PRId64 " twice)", ax);
      return NULL;
    }
    seen[ax] = true;
    out[i] = tn__ir_dims(a)[ax];
  }
  return tensor(out, na, a->dtype);
}

static TnObject *infer_concatenate(const char *op, TnObject *const *types,
                                   int32_t n, TnObject *attrs) {
  (void)n;
  if (!tn__ir_is(types[0], TN_IR->tuple_type))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected a tuple of "
                            "tensors"), NULL;
  const TnObject *fields = ((const TnIrTupleType *)types[0])->fields;
  int64_t count = tn_array_size(fields);
  if (count == 0)
    return tn__ir_arg_error(op, 0, "data", types[0], "nothing to "
                            "concatenate"), NULL;
  TnObject *first = tn_array_at(fields, 0)->v_obj;
  if (!tn__ir_is(first, TN_IR->tensor_type))
    return tn__ir_arg_error(op, 0, "data", types[0], "element 0 is not a "
                            "tensor"), NULL;
  const TnIrTensorType *t0 = (const TnIrTensorType *)first;
  int64_t nd = tn__ir_ndim(t0);
  if (nd > TN_IR_MAX_DIMS)
    return tn__ir_arg_error(op, 0, "data", types[0], "%" PRId64 " dimensions "
                            "is more than the %d operators support", nd,
                            TN_IR_MAX_DIMS), NULL;
  int64_t axis = axis_of(op, ((const AxisAttrs *)attrs)->axis, nd, types[0], 0);
  if (axis < 0) return NULL;
  int64_t out[TN_IR_MAX_DIMS];
  memcpy(out, tn__ir_dims(t0), sizeof(int64_t) * (size_t)nd);
  for (int64_t k = 1; k < count; k++) {
    TnObject *fk = tn_array_at(fields, k)->v_obj;
    const TnIrTensorType *tk = (const TnIrTensorType *)fk;
    if (!tn__ir_is(fk, TN_IR->tensor_type) || tn__ir_ndim(tk) != nd ||
        !tn__ir_dtype_eq(tk->dtype, t0->dtype))
      return tn__ir_arg_error(op, 0, "data", types[0], "element %" PRId64
                              " does not match element 0 in rank and dtype",
                              k), NULL;
    for (int64_t d = 0; d < nd; d++) {
      if (d == axis) continue;
      if (tn__ir_dims(tk)[d] != out[d])
        return tn__ir_arg_error(op, 0, "data", types[0], "element %" PRId64
                                " has dimension %" PRId64 " = %" PRId64
                                ", element 0 has %" PRId64, k, d,
                                tn__ir_dims(tk)[d], out[d]), NULL;
    }
    if (tn__ckd_add(&out[axis], out[axis], tn__ir_dims(tk)[axis]))
      return tn__ir_arg_error(op, 0, "data", types[0], "the sizes along axis "
                              "%" PRId64 " overflow int64 at element %"
                              PRId64, axis, k), NULL;
  }
  return tensor(out, (int32_t)nd, t0->dtype);
}

static TnObject *infer_squeeze(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  int64_t nd = tn__ir_ndim(a), axes[TN_IR_MAX_DIMS], out[TN_IR_MAX_DIMS];
  int32_t na = tn__ir_attr_ints(attrs, "axis", axes, TN_IR_MAX_DIMS, op);
  if (na < 0) return NULL;
  bool drop[TN_IR_MAX_DIMS] = {0};
  if (na == 0) {
    for (int64_t i = 0; i < nd; i++) drop[i] = tn__ir_dims(a)[i] == 1;
  }
  for (int32_t i = 0; i < na; i++) {
    int64_t ax = axis_of(op, axes[i], nd, types[0], 0);
    if (ax < 0) return NULL;
    if (tn__ir_dims(a)[ax] != 1)
      return tn__ir_arg_error(op, 0, "data", types[0], "axis %" PRId64
                              " has size %" PRId64 ", not 1", ax,
                              tn__ir_dims(a)[ax]), NULL;
    drop[ax] = true;
  }
  int32_t k = 0;
  for (int64_t i = 0; i < nd; i++)
    if (!drop[i]) out[k++] = tn__ir_dims(a)[i];
  return tensor(out, k, a->dtype);
}

static TnObject *infer_expand_dims(const char *op, TnObject *const *types,
                                   int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  const ExpandDimsAttrs *e = (const ExpandDimsAttrs *)attrs;
  int64_t nd = tn__ir_ndim(a), out[TN_IR_MAX_DIMS];
  /* Compared with the room left (nd <= 16 here): nd + num_newaxis
   * overflows for a huge value, and the loop below writes num_newaxis
   * entries into out. */
  if (e->num_newaxis < 0 || e->num_newaxis > TN_IR_MAX_DIMS - nd) {
    tn_error_raise_in(TN_ERR_TYPE, op, "num_newaxis %" PRId64 " is out of "
                      "range [0, %" PRId64 "]: the data has %" PRId64
                      " of the %d dimensions operators take",
                      e->num_newaxis, TN_IR_MAX_DIMS - nd, nd,
                      TN_IR_MAX_DIMS);
    return NULL;
  }
  /* The axis counts in the output's dimensions, as numpy does. */
  int64_t axis = e->axis < 0 ? e->axis + nd + 1 : e->axis;
  if (axis < 0 || axis > nd)
    return tn__ir_arg_error(op, 0, "data", types[0], "axis %" PRId64 " is out "
                            "of range", e->axis), NULL;
  int32_t k = 0;
  for (int64_t i = 0; i < axis; i++) out[k++] = tn__ir_dims(a)[i];
  for (int64_t i = 0; i < e->num_newaxis; i++) out[k++] = 1;
  for (int64_t i = axis; i < nd; i++) out[k++] = tn__ir_dims(a)[i];
  return tensor(out, k, a->dtype);
}

/* ---- reductions ------------------------------------------------------------ */

int tn__ir_reduce_axes(const char *op, TnObject *type,
                       const TnIrTensorType *d, const TnObject *attrs,
                       bool reduce[TN_IR_MAX_DIMS]) {
  const TnIrReduceAttrs *r = (const TnIrReduceAttrs *)attrs;
  int64_t nd = tn__ir_ndim(d), axes[TN_IR_MAX_DIMS];
  int32_t na = tn__ir_attr_ints(attrs, "axis", axes, TN_IR_MAX_DIMS, op);
  if (na < 0) return -1;
  bool listed[TN_IR_MAX_DIMS] = {0};
  for (int32_t i = 0; i < na; i++) {
    int64_t ax = axis_of(op, axes[i], nd, type, 0);
    if (ax < 0) return -1;
    if (listed[ax])
      return tn_error_raise_in(TN_ERR_TYPE, op, "attribute 'axis' lists "
                               "axis %" PRId64 " twice (as %" PRId64 ")", ax,
                               axes[i]);
    listed[ax] = true;
  }
  for (int64_t i = 0; i < nd; i++)
    reduce[i] = na == 0 || listed[i] != r->exclude;
  return 0;
}

TnObject *tn__ir_reduce_out(const char *op, TnObject *type,
                            const TnIrTensorType *d, const TnObject *attrs) {
  bool reduce[TN_IR_MAX_DIMS];
  if (tn__ir_reduce_axes(op, type, d, attrs, reduce)) return NULL;
  bool keep = ((const TnIrReduceAttrs *)attrs)->keepdims;
  int64_t out[TN_IR_MAX_DIMS];
  int32_t k = 0;
  for (int64_t i = 0; i < tn__ir_ndim(d); i++) {
    if (!reduce[i]) out[k++] = tn__ir_dims(d)[i];
    else if (keep) out[k++] = 1;
  }
  return tensor(out, k, d->dtype);
}

static TnObject *infer_mean(const char *op, TnObject *const *types, int32_t n,
                            TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  DLDataType t = a->dtype;
  if (t.lanes != 1 || !(tn__ir_is_float(t) || t.code == kDLInt ||
                        t.code == kDLUInt))
    return tn__ir_arg_error(op, 0, "data", types[0], "expected a float or "
                            "integer tensor"), NULL;
  return tn__ir_reduce_out(op, types[0], a, attrs);
}

/* ---- strided_slice --------------------------------------------------------- */

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

int tn__ir_strided_slice_plan(const char *op, TnObject *type,
                              const TnIrTensorType *d, const TnObject *attrs,
                              int64_t *begin, int64_t *stride, int64_t *out) {
  int64_t nd = tn__ir_ndim(d), b[TN_IR_MAX_DIMS], e[TN_IR_MAX_DIMS];
  int64_t s[TN_IR_MAX_DIMS], ax[TN_IR_MAX_DIMS];
  int32_t nb = tn__ir_attr_ints(attrs, "begin", b, TN_IR_MAX_DIMS, op);
  if (nb < 0) return -1;
  int32_t ne = tn__ir_attr_ints(attrs, "end", e, TN_IR_MAX_DIMS, op);
  if (ne < 0) return -1;
  int32_t ns = tn__ir_attr_ints(attrs, "strides", s, TN_IR_MAX_DIMS, op);
  if (ns < 0) return -1;
  int32_t na = tn__ir_attr_ints(attrs, "axes", ax, TN_IR_MAX_DIMS, op);
  if (na < 0) return -1;
  if (ne != nb)
    return tn_error_raise_in(TN_ERR_TYPE, op, "begin has %d values but end "
                             "has %d", nb, ne);
  if (ns != 0 && ns != nb)
    return tn_error_raise_in(TN_ERR_TYPE, op, "strides has %d values for "
                             "the %d of begin (give one per sliced axis, or "
                             "None)", ns, nb);
  bool seen[TN_IR_MAX_DIMS] = {0};
  if (na == 0) {
    if (nb > nd)
      return tn__ir_arg_error(op, 0, "data", type, "begin has %d values for "
                              "%" PRId64 " dimensions", nb, nd);
    for (int32_t i = 0; i < nb; i++) ax[i] = i;
  } else if (na != nb) {
    return tn_error_raise_in(TN_ERR_TYPE, op, "axes has %d values for the %d "
                             "of begin", na, nb);
  } else {
    for (int32_t i = 0; i < na; i++) {
      int64_t a = axis_of(op, ax[i], nd, type, 0);
      if (a < 0) return -1;
      if (seen[a])
        return tn_error_raise_in(TN_ERR_TYPE, op, "attribute 'axes' lists "
                                 "axis %" PRId64 " twice (as %" PRId64 ")",
                                 a, ax[i]);
      seen[a] = true;
      ax[i] = a;
    }
  }
  for (int64_t i = 0; i < nd; i++)
    begin[i] = 0, stride[i] = 1, out[i] = tn__ir_dims(d)[i];
  /* numpy's slice.indices: a negative index has the extent added (which
   * cannot overflow), then both ends clamp to the indices a step in that
   * direction can start from; the lengths below are then at most n + 1
   * and the divisions cannot overflow either, even for INT64_MIN steps. */
  for (int32_t i = 0; i < nb; i++) {
    int64_t a = ax[i], n = tn__ir_dims(d)[a], st = ns ? s[i] : 1, len;
    if (st == 0) {
      char attr[32];
      snprintf(attr, sizeof attr, "strides[%d]", i);
      return tn__ckd_attr_error(op, attr, 0, "a slice cannot step by 0");
    }
    int64_t bb = b[i] < 0 ? b[i] + n : b[i], ee = e[i] < 0 ? e[i] + n : e[i];
    if (st > 0) {
      bb = clamp64(bb, 0, n), ee = clamp64(ee, 0, n);
      len = ee > bb ? (ee - bb - 1) / st + 1 : 0;
    } else {
      bb = clamp64(bb, -1, n - 1), ee = clamp64(ee, -1, n - 1);
      int64_t m = st == INT64_MIN ? INT64_MAX : -st;
      len = bb > ee ? (bb - ee - 1) / m + 1 : 0;
    }
    begin[a] = len ? bb : 0, stride[a] = st, out[a] = len;
  }
  return 0;
}

static TnObject *infer_strided_slice(const char *op, TnObject *const *types,
                                     int32_t n, TnObject *attrs) {
  (void)n;
  const TnIrTensorType *a = tn__ir_tensor_arg(op, types, 0, "data");
  if (a == NULL) return NULL;
  int64_t begin[TN_IR_MAX_DIMS], stride[TN_IR_MAX_DIMS], out[TN_IR_MAX_DIMS];
  if (tn__ir_strided_slice_plan(op, types[0], a, attrs, begin, stride, out))
    return NULL;
  int64_t nd = tn__ir_ndim(a);
  if (memcmp(out, tn__ir_dims(a), sizeof(int64_t) * (size_t)nd) == 0)
    return same_type(a);
  return tensor(out, (int32_t)nd, a->dtype);
}

void tn__ir_ops_tensor_init(void) {
  TN__IR_ATTRS(ClipAttrs, "ir.ClipAttrs", clip_fields);
  TN__IR_ATTRS(LeakyReluAttrs, "ir.LeakyReluAttrs", leaky_relu_fields);
  TN__IR_ATTRS(CastAttrs, "ir.CastAttrs", cast_fields);
  TN__IR_ATTRS(ReshapeAttrs, "ir.ReshapeAttrs", reshape_fields);
  TN__IR_ATTRS(TransposeAttrs, "ir.TransposeAttrs", transpose_fields);
  TN__IR_ATTRS(AxisAttrs, "ir.ConcatenateAttrs", concat_fields);
  TN__IR_ATTRS(SqueezeAttrs, "ir.SqueezeAttrs", squeeze_fields);
  TN__IR_ATTRS(ExpandDimsAttrs, "ir.ExpandDimsAttrs", expand_fields);
  TN__IR_ATTRS(TnIrReduceAttrs, "ir.ReduceAttrs", reduce_fields);
  TN__IR_ATTRS(StridedSliceAttrs, "ir.StridedSliceAttrs",
               strided_slice_fields);

  static const struct {
    const char *name, *doc;
  } binary[] = {{"add", "lhs + rhs, elementwise with numpy broadcasting"},
                {"subtract", "lhs - rhs, elementwise with numpy broadcasting"},
                {"multiply", "lhs * rhs, elementwise with numpy broadcasting"},
                {"divide", "lhs / rhs, elementwise with numpy broadcasting"},
                {"maximum", "the larger of lhs and rhs, with broadcasting"},
                {"minimum", "the smaller of lhs and rhs, with broadcasting"}};
  for (size_t i = 0; i < G_N_ELEMENTS(binary); i++)
    tn__ir_op_define(binary[i].name, "lhs,rhs", NULL, TN_OP_BROADCAST,
                     infer_broadcast, binary[i].doc);
  tn__ir_op_define("negative", "data", NULL, TN_OP_ELEMWISE, infer_unary,
                   "-data, elementwise");
  tn__ir_op_define("exp", "data", NULL, TN_OP_ELEMWISE, tn__ir_infer_unary_float,
                   "e to the power data, elementwise (float)");
  tn__ir_op_define("sigmoid", "data", NULL, TN_OP_ELEMWISE, tn__ir_infer_unary_float,
                   "1 / (1 + exp(-data)), elementwise (float)");
  tn__ir_op_define("tanh", "data", NULL, TN_OP_ELEMWISE, tn__ir_infer_unary_float,
                   "hyperbolic tangent, elementwise (float)");
  tn__ir_op_define("nn.relu", "data", NULL, TN_OP_ELEMWISE, infer_unary,
                   "max(data, 0), elementwise");
  tn__ir_op_define("nn.leaky_relu", "data", "ir.LeakyReluAttrs",
                   TN_OP_ELEMWISE, tn__ir_infer_unary_float,
                   "data where above 0, else alpha * data (float)");
  tn__ir_op_define("clip", "a", "ir.ClipAttrs", TN_OP_ELEMWISE, infer_clip,
                   "clamp to [a_min, a_max]");
  tn__ir_op_define("cast", "data", "ir.CastAttrs", TN_OP_ELEMWISE, infer_cast,
                   "convert to another dtype, elementwise");
  tn__ir_op_define("reshape", "data", "ir.ReshapeAttrs", TN_OP_INJECTIVE,
                   infer_reshape,
                   "the same elements in a new shape (0 copies, -1 infers)");
  tn__ir_op_define("transpose", "data", "ir.TransposeAttrs", TN_OP_INJECTIVE,
                   infer_transpose, "permute the axes (reverse them by default)");
  tn__ir_op_define("concatenate", "data", "ir.ConcatenateAttrs",
                   TN_OP_INJECTIVE, infer_concatenate,
                   "join a tuple of tensors along axis");
  tn__ir_op_define("squeeze", "data", "ir.SqueezeAttrs", TN_OP_INJECTIVE,
                   infer_squeeze, "drop axes of extent 1 (all by default)");
  tn__ir_op_define("expand_dims", "data", "ir.ExpandDimsAttrs",
                   TN_OP_INJECTIVE, infer_expand_dims,
                   "insert num_newaxis axes of extent 1 at axis");
  tn__ir_op_define("strided_slice", "data", "ir.StridedSliceAttrs",
                   TN_OP_INJECTIVE, infer_strided_slice,
                   "data[begin:end:strides] on axes, numpy's slicing");
  tn__ir_op_define("mean", "data", "ir.ReduceAttrs", TN_OP_REDUCE, infer_mean,
                   "the mean over axis (every axis by default)");
}
