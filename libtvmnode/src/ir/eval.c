/*
 * eval.c: evaluating operators on constant tensors, for FoldConstant.
 *
 * A reference evaluator, written for clarity rather than speed: elements
 * are read and written through double (exact for every integer type up to
 * 32 bits and for float32/64), output positions are mapped to input
 * positions one multi-index at a time. It covers the elementwise,
 * broadcasting and shape operators and the quantize/dequantize pair, which
 * is what folding needs (weights transposed, reshaped, scaled, quantized
 * once at compile time). Anything else is reported as not foldable, and the
 * call is left as it is.
 */
#include "ir/ops_nn.h"

#include <math.h>

typedef struct {
  const char *data; /* compact */
  DLDataType dtype;
  int32_t ndim;
  int64_t dims[TN_IR_MAX_DIMS];
  int64_t numel;
  size_t elem;
} View;

static void view_of(TnObject *tensor, View *v) {
  const DLTensor *dl = tn_tensor_dltensor(tensor);
  v->data = (const char *)dl->data + dl->byte_offset;
  v->dtype = dl->dtype;
  v->ndim = dl->ndim;
  v->numel = 1;
  for (int32_t i = 0; i < dl->ndim; i++) {
    v->dims[i] = dl->shape[i];
    v->numel *= dl->shape[i];
  }
  v->elem = ((size_t)dl->dtype.bits * dl->dtype.lanes + 7) / 8;
}

static bool readable(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLFloat: return t.bits == 32 || t.bits == 64;
    case kDLInt: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLUInt: return t.bits == 8 || t.bits == 16 || t.bits == 32;
    case kDLBool: return t.bits == 8;
    default: return false;
  }
}

static double get(const View *v, int64_t i) {
  const char *p = v->data + (size_t)i * v->elem;
  DLDataType t = v->dtype;
  switch (t.code) {
    case kDLFloat: return t.bits == 32 ? *(const float *)p : *(const double *)p;
    case kDLInt:
      switch (t.bits) {
        case 8: return *(const int8_t *)p;
        case 16: return *(const int16_t *)p;
        case 32: return *(const int32_t *)p;
        default: return (double)*(const int64_t *)p;
      }
    case kDLUInt:
      switch (t.bits) {
        case 8: return *(const uint8_t *)p;
        case 16: return *(const uint16_t *)p;
        default: return *(const uint32_t *)p;
      }
    default: return *(const uint8_t *)p != 0;
  }
}

/* Write with C's conversion for floats and saturation for integers. */
static void put(char *base, DLDataType t, int64_t i, double x) {
  char *p = base + (size_t)i * ((t.bits * t.lanes + 7u) / 8u);
  if (t.code == kDLFloat) {
    if (t.bits == 32) *(float *)p = (float)x;
    else *(double *)p = x;
    return;
  }
  if (t.code == kDLBool) {
    *(uint8_t *)p = x != 0;
    return;
  }
  double lo = t.code == kDLUInt ? 0 : -ldexp(1.0, t.bits - 1);
  double hi = t.code == kDLUInt ? ldexp(1.0, t.bits) - 1 : ldexp(1.0, t.bits - 1) - 1;
  if (isnan(x)) x = 0;
  x = x < lo ? lo : x > hi ? hi : x;
  int64_t v = (int64_t)x; /* truncation toward zero, as a C cast */
  switch (t.bits) {
    case 8: *(int8_t *)p = (int8_t)v; break;
    case 16: *(int16_t *)p = (int16_t)v; break;
    case 32: *(int32_t *)p = (int32_t)v; break;
    default: *(int64_t *)p = v; break;
  }
}

/* Flat index into `in` (broadcast against the output's dims) of the output
 * element whose multi-index is `idx` (over `nd` dims). */
static int64_t broadcast_index(const View *in, const int64_t *idx, int32_t nd) {
  int64_t flat = 0;
  int32_t off = nd - in->ndim;
  for (int32_t d = 0; d < in->ndim; d++) {
    int64_t i = in->dims[d] == 1 ? 0 : idx[d + off];
    flat = flat * in->dims[d] + i;
  }
  return flat;
}

static void unflatten(int64_t k, const int64_t *dims, int32_t nd, int64_t *idx) {
  for (int32_t d = nd; d-- > 0;) {
    idx[d] = dims[d] ? k % dims[d] : 0;
    k = dims[d] ? k / dims[d] : 0;
  }
}

/* The binary operators, by their index in `binary` below. */
static double apply2(int op, double a, double b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}

static double apply1(const char *op, double x, const TnObject *attrs) {
  if (strcmp(op, "negative") == 0) return -x;
  if (strcmp(op, "exp") == 0) return exp(x);
  if (strcmp(op, "sigmoid") == 0) return 1.0 / (1.0 + exp(-x));
  if (strcmp(op, "tanh") == 0) return tanh(x);
  if (strcmp(op, "nn.relu") == 0) return x > 0 ? x : 0;
  if (strcmp(op, "clip") == 0) {
    double lo, hi;
    TnAny a, b;
    tn_node_get(attrs, "a_min", &a);
    tn_node_get(attrs, "a_max", &b);
    lo = a.v_float64, hi = b.v_float64;
    return x < lo ? lo : x > hi ? hi : x;
  }
  return x; /* cast */
}

static bool is_one_of(const char *op, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(op, names[i]) == 0) return true;
  return false;
}

static int index_of(const char *op, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(op, names[i]) == 0) return (int)i;
  return -1;
}

/* The value of a scale or zero point for channel `c` (per-tensor: ignored). */
static double qparam(const View *p, int64_t c) {
  return p->numel == 1 ? get(p, 0) : get(p, c);
}

TnObject *tn__ir_eval(const char *op, TnObject *const *inputs, int32_t n,
                      const TnObject *attrs, const TnObject *out_type,
                      bool *supported) {
  static const char *const binary[] = {"add", "subtract", "multiply",
                                       "divide", "maximum", "minimum"};
  static const char *const unary[] = {"negative", "exp", "sigmoid", "tanh",
                                      "nn.relu", "clip", "cast"};
  static const char *const same_data[] = {"reshape", "squeeze", "expand_dims"};
  *supported = true;
  if (!tn_object_is_instance(out_type, TN_IR->tensor_type)) {
    *supported = false;
    return NULL;
  }
  View in[8];
  for (int32_t i = 0; i < n && i < 8; i++) {
    view_of(inputs[i], &in[i]);
    if (!readable(in[i].dtype)) {
      *supported = false;
      return NULL;
    }
  }
  const TnIrTensorType *ot = (const TnIrTensorType *)out_type;
  const TnShapeObj *os = (const TnShapeObj *)ot->shape;
  if (!readable(ot->dtype)) {
    *supported = false;
    return NULL;
  }
  DLDevice cpu = {kDLCPU, 0};
  TnObject *out = tn_tensor_empty(os->data, (int32_t)os->ndim, ot->dtype, cpu);
  if (out == NULL) return NULL;
  char *dst = tn_tensor_dltensor(out)->data;
  int64_t total = tn_tensor_nbytes(out) / (int64_t)((ot->dtype.bits + 7) / 8);
  int32_t nd = (int32_t)os->ndim;
  int64_t idx[TN_IR_MAX_DIMS];
  bool is_int_math = ot->dtype.code != kDLFloat;

  if (is_one_of(op, binary, G_N_ELEMENTS(binary))) {
    if (is_int_math && strcmp(op, "divide") == 0) goto unsupported;
    int which = index_of(op, binary, G_N_ELEMENTS(binary));
    if (in[0].numel == total && in[1].numel == total) { /* no broadcasting */
      for (int64_t k = 0; k < total; k++)
        put(dst, ot->dtype, k, apply2(which, get(&in[0], k), get(&in[1], k)));
    } else {
      for (int64_t k = 0; k < total; k++) {
        unflatten(k, os->data, nd, idx);
        double a = get(&in[0], broadcast_index(&in[0], idx, nd));
        double b = get(&in[1], broadcast_index(&in[1], idx, nd));
        put(dst, ot->dtype, k, apply2(which, a, b));
      }
    }
  } else if (is_one_of(op, unary, G_N_ELEMENTS(unary))) {
    for (int64_t k = 0; k < total; k++)
      put(dst, ot->dtype, k, apply1(op, get(&in[0], k), attrs));
  } else if (is_one_of(op, same_data, G_N_ELEMENTS(same_data))) {
    memcpy(dst, in[0].data, (size_t)(total * (int64_t)in[0].elem));
  } else if (strcmp(op, "transpose") == 0) {
    int64_t axes[TN_IR_MAX_DIMS];
    int32_t na = tn__ir_attr_ints(attrs, "axes", axes, TN_IR_MAX_DIMS, op);
    if (na < 0) goto fail;
    if (na == 0)
      for (int32_t i = 0; i < nd; i++) axes[i] = nd - 1 - i;
    for (int32_t i = 0; i < nd; i++)
      if (axes[i] < 0) axes[i] += nd;
    /* Walk the output in order with an odometer over its index, keeping
     * the input offset up to date: output dim i steps the input by the
     * stride of input dim axes[i]. */
    int64_t in_stride[TN_IR_MAX_DIMS], step[TN_IR_MAX_DIMS];
    int64_t stride = 1;
    for (int32_t d = nd; d-- > 0;) {
      in_stride[d] = stride;
      stride *= in[0].dims[d];
    }
    for (int32_t i = 0; i < nd; i++) {
      step[i] = in_stride[axes[i]];
      idx[i] = 0;
    }
    size_t es = in[0].elem;
    int64_t src = 0;
    for (int64_t k = 0; k < total; k++) {
      memcpy(dst + (size_t)k * es, in[0].data + (size_t)src * es, es);
      for (int32_t i = nd; i-- > 0;) {
        src += step[i];
        if (++idx[i] < os->data[i]) break;
        src -= step[i] * os->data[i];
        idx[i] = 0;
      }
    }
  } else if (strcmp(op, "concatenate") == 0) {
    int64_t axis = ((const TnIrAxisAttrs *)attrs)->axis;
    if (axis < 0) axis += nd;
    for (int64_t k = 0; k < total; k++) {
      unflatten(k, os->data, nd, idx);
      int32_t which = 0;
      while (idx[axis] >= in[which].dims[axis]) idx[axis] -= in[which++].dims[axis];
      int64_t flat = 0;
      for (int32_t d = 0; d < nd; d++) flat = flat * in[which].dims[d] + idx[d];
      memcpy(dst + k * (int64_t)in[0].elem,
             in[which].data + flat * (int64_t)in[which].elem, in[0].elem);
    }
  } else if (strcmp(op, "nn.bias_add") == 0) {
    int64_t axis = ((const TnIrAxisAttrs *)attrs)->axis;
    if (axis < 0) axis += nd;
    for (int64_t k = 0; k < total; k++) {
      unflatten(k, os->data, nd, idx);
      put(dst, ot->dtype, k, get(&in[0], k) + get(&in[1], idx[axis]));
    }
  } else if (strcmp(op, "nn.pad") == 0) {
    const TnIrPadAttrs *p = (const TnIrPadAttrs *)attrs;
    int64_t before[TN_IR_MAX_DIMS];
    for (int32_t d = 0; d < nd; d++) {
      /* The inferred output told us the totals; recover `before` from the
       * attribute (nested or flat). */
      const TnObject *pw = p->pad_width.v_obj;
      const TnAny *e = tn_array_at(pw, tn_array_size(pw) == nd ? d : 2 * d);
      if (tn_any_is_object(e)) e = tn_array_at(e->v_obj, 0);
      before[d] = e->v_int64;
    }
    for (int64_t k = 0; k < total; k++) {
      unflatten(k, os->data, nd, idx);
      bool inside = true;
      int64_t flat = 0;
      for (int32_t d = 0; d < nd && inside; d++) {
        int64_t i = idx[d] - before[d];
        inside = i >= 0 && i < in[0].dims[d];
        flat = flat * in[0].dims[d] + i;
      }
      put(dst, ot->dtype, k, inside ? get(&in[0], flat) : p->pad_value);
    }
  } else if (strcmp(op, "qnn.quantize") == 0 ||
             strcmp(op, "qnn.dequantize") == 0) {
    TnAny ax;
    tn_node_get(attrs, "axis", &ax);
    int64_t axis = ax.v_int64 < 0 ? ax.v_int64 + in[0].ndim : ax.v_int64;
    bool quant = op[4] == 'q';
    for (int64_t k = 0; k < total; k++) {
      int64_t c = 0;
      if (in[0].ndim > 0) {
        unflatten(k, in[0].dims, in[0].ndim, idx);
        c = idx[axis];
      }
      double scale = qparam(&in[1], c), zp = qparam(&in[2], c);
      double x = get(&in[0], k);
      put(dst, ot->dtype, k,
          quant ? round(x / scale) + zp : (x - zp) * scale);
    }
  } else {
    goto unsupported;
  }
  return out;
unsupported:
  *supported = false;
fail:
  tn_object_release(out);
  return NULL;
}

bool tn__ir_const_all(const TnObject *expr, double value) {
  if (!tn__ir_is(expr, TN_IR->constant)) return false;
  TnObject *data = ((const TnIrConstant *)expr)->data;
  if (!tn__tensor_contiguous(data)) return false;
  View v;
  view_of(data, &v);
  if (!readable(v.dtype) || v.numel == 0) return false;
  for (int64_t i = 0; i < v.numel; i++)
    if (get(&v, i) != value) return false;
  return true;
}

const char *tn__ir_call_op_name(const TnObject *expr) {
  if (!tn__ir_is(expr, TN_IR->call)) return NULL;
  const TnObject *op = ((const TnIrCall *)expr)->op;
  if (!tn__ir_is(op, TN_IR->op)) return NULL;
  return ((const TnStringObj *)((const TnIrOp *)op)->name)->data;
}
