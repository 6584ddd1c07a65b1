/*
 * lower.c: the lowering table. For every operator of the registry (and each
 * dtype it has a kernel for), how a typed call becomes one call of a crt
 * kernel: which kernel, its parameter struct built from the call's
 * attributes, types and constant arguments, and which arguments it reads at
 * run time. Each entry is the operator's TN_OP_ATTR_KERNEL attribute. A
 * lowering only chooses a kernel form (tvmnode/crt/calls.h) and fills its
 * parameter struct: the executor calls the form's entry with it, and the
 * code generator writes the same struct and the same call as C, so nothing
 * here is spelled twice. The table is kept in two files so that neither
 * grows past what one reads at once: this file has
 * the elementwise operators (broadcasting binary, unary, clip, cast) and
 * data movement, and registers both parts; lower_nn.c has the operators
 * built on convolution, pooling, reduction and quantization geometry, and
 * the fused forms. The helpers both use are in lower_internal.h.
 */
#include "kernel/lower_internal.h"

#include <math.h>

int tn__kernel_status(int32_t status, const char *who) {
  if (status == TN_CRT_OK) return 0;
  return tn_error_raise_in(status == TN_CRT_INVALID_ARGUMENT ||
                                   status == TN_CRT_SHAPE_MISMATCH
                               ? TN_ERR_VALUE
                               : TN_ERR_RUNTIME,
                           who, "kernel failed: %s (%s)",
                           tn_crt_status_name(status),
                           tn_crt_status_doc(status));
}

/* ---- helpers ---------------------------------------------------------------- */

int tn__kernel_crt_dtype(DLDataType t) {
  if (t.lanes != 1) return -1;
#define DTYPE(N, ID, DL, BITS, C, RS) \
  if (t.code == (DL) && t.bits == (BITS)) return N;
  TN_CRT_DTYPES(DTYPE)
#undef DTYPE
  return -1;
}

static int crt_dtype(DLDataType t, TnCrtDType *out) {
  int c = tn__kernel_crt_dtype(t);
  if (c < 0) return -1;
  *out = (TnCrtDType)c;
  return 0;
}

static int32_t elem_size(DLDataType t) { return (int32_t)((t.bits + 7) / 8); }

/* ---- broadcasting binary operators ------------------------------------------- */

/* The broadcast of a and b to out, with adjacent dims merged where both
 * operands are alike (both broadcast, or both dense) across the pair. */
int tn__lower_broadcast(const TnKernArgs *a, const TnIrTensorType *l,
                        const TnIrTensorType *r, const TnIrTensorType *o,
                        TnCrtBroadcast *b) {
  int64_t nd = tn__ir_ndim(o);
  if (check_size(a, numel(o))) return -1;
  int64_t dims[TN_IR_MAX_DIMS], ls[TN_IR_MAX_DIMS], rs[TN_IR_MAX_DIMS];
  int64_t lst = 1, rst = 1;
  for (int64_t d = nd - 1; d >= 0; d--) {
    int64_t ld = d - (nd - tn__ir_ndim(l)), rd = d - (nd - tn__ir_ndim(r));
    int64_t le = ld >= 0 ? tn__ir_dims(l)[ld] : 1;
    int64_t re = rd >= 0 ? tn__ir_dims(r)[rd] : 1;
    dims[d] = tn__ir_dims(o)[d];
    ls[d] = le == 1 ? 0 : lst;
    rs[d] = re == 1 ? 0 : rst;
    lst *= le, rst *= re;
  }
  /* merge dim d into d+1 when strides stay linear */
  int32_t n = 0;
  int64_t md[TN_IR_MAX_DIMS], ml[TN_IR_MAX_DIMS], mr[TN_IR_MAX_DIMS];
  for (int64_t d = 0; d < nd; d++) {
    if (dims[d] == 1) continue;
    if (n > 0 && ml[n - 1] == ls[d] * dims[d] && mr[n - 1] == rs[d] * dims[d]) {
      md[n - 1] *= dims[d];
      ml[n - 1] = ls[d], mr[n - 1] = rs[d];
      continue;
    }
    md[n] = dims[d], ml[n] = ls[d], mr[n] = rs[d];
    n++;
  }
  if (n == 0) md[0] = 1, ml[0] = mr[0] = 0, n = 1;
  if (n > TN_CRT_MAX_DIMS)
    return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, a->op, "a broadcast over "
                             "%d dimensions", n);
  memset(b, 0, sizeof *b);
  b->ndim = n;
  for (int32_t d = 0; d < n; d++) {
    b->dims[d] = (int32_t)md[d];
    b->lhs_strides[d] = (int32_t)ml[d];
    b->rhs_strides[d] = (int32_t)mr[d];
  }
  return 0;
}

static int lower_binary(const TnKernArgs *a, TnKernCall *k, TnCrtBinaryOp op) {
  DLDataType t = a->types[0]->dtype;
  if (is(t, kI8) && (op == TN_CRT_MAX || op == TN_CRT_MIN))
    return tn__lower_minmax_s8(a, k, op);
  if (!is(t, kF32) && !is(t, kI32)) return no_kernel(a, NULL);
  TnCrtCallBinary *p = is(t, kF32) ? KERNEL_USE(k, binary_f32, 0)
                                    : KERNEL_USE(k, binary_i32, 0);
  p->op = op;
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  reads(k, 2);
  return 0;
}

#define BINARY(name, OP)                                        \
  static int lower_##name(const TnKernArgs *a, TnKernCall *k) { \
    return lower_binary(a, k, OP);                              \
  }
BINARY(add, TN_CRT_ADD)
BINARY(subtract, TN_CRT_SUB)
BINARY(multiply, TN_CRT_MUL)
BINARY(divide, TN_CRT_DIV)
BINARY(maximum, TN_CRT_MAX)
BINARY(minimum, TN_CRT_MIN)

/* ---- unary, clip, cast -------------------------------------------------------- */

static int lower_unary(const TnKernArgs *a, TnKernCall *k, TnCrtUnaryOp op) {
  DLDataType t = a->types[0]->dtype;
  bool int_ok = op == TN_CRT_NEGATIVE || op == TN_CRT_RELU;
  if (!is(t, kF32) && !(int_ok && is(t, kI32))) return no_kernel(a, NULL);
  if (check_size(a, numel(a->out))) return -1;
  TnCrtCallUnary *p = is(t, kF32) ? KERNEL_USE(k, unary_f32, 0)
                                   : KERNEL_USE(k, unary_i32, 0);
  p->op = op, p->n = (int32_t)numel(a->out);
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

#define UNARY(name, OP)                                         \
  static int lower_##name(const TnKernArgs *a, TnKernCall *k) { \
    return lower_unary(a, k, OP);                               \
  }
UNARY(negative, TN_CRT_NEGATIVE)
UNARY(exp, TN_CRT_EXP)
UNARY(sigmoid, TN_CRT_SIGMOID)
UNARY(tanh, TN_CRT_TANH)
UNARY(relu, TN_CRT_RELU)

static int lower_clip(const TnKernArgs *a, TnKernCall *k) {
  DLDataType t = a->types[0]->dtype;
  if (check_size(a, numel(a->out))) return -1;
  const TnIrClipAttrs *c = ATTRS(a->op, a->attrs, TnIrClipAttrs, "ir.ClipAttrs");
  if (c == NULL) return -1;
  double lo = c->a_min, hi = c->a_max;
  int32_t n = (int32_t)numel(a->out);
  if (is(t, kF32)) {
    TnCrtCallClipF32 *p = KERNEL_USE(k, clip_f32, 0);
    p->n = n, p->lo = (float)lo, p->hi = (float)hi;
  } else if (t.code == kDLInt && t.bits == 16 && t.lanes == 1) {
    /* a 16x8 layer's activation (quant16.c) */
    TnCrtCallClip *p = KERNEL_USE(k, clip_s16, 0);
    p->n = n;
    p->lo = clamp_i32(ceil(lo), INT16_MIN, INT16_MAX);
    p->hi = clamp_i32(floor(hi), INT16_MIN, INT16_MAX);
  } else if (is(t, kI32) || is(t, kI8)) {
    bool i8 = is(t, kI8);
    TnCrtCallClip *p = i8 ? KERNEL_USE(k, clip_s8, 0)
                          : KERNEL_USE(k, clip_i32, 0);
    p->n = n;
    p->lo = clamp_i32(ceil(lo), i8 ? -128 : INT32_MIN, i8 ? 127 : INT32_MAX);
    p->hi = clamp_i32(floor(hi), i8 ? -128 : INT32_MIN, i8 ? 127 : INT32_MAX);
  } else {
    return no_kernel(a, NULL);
  }
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

static int lower_leaky_relu(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, NULL);
  const TnIrLeakyReluAttrs *x =
      ATTRS(a->op, a->attrs, TnIrLeakyReluAttrs, "ir.LeakyReluAttrs");
  if (x == NULL || check_size(a, numel(a->out))) return -1;
  TnCrtCallLeakyRelu *p = KERNEL_USE(k, leaky_relu_f32, 0);
  p->n = (int32_t)numel(a->out);
  p->alpha = (float)x->alpha;
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

static int lower_cast(const TnKernArgs *a, TnKernCall *k) {
  TnCrtDType from, to;
  if (crt_dtype(a->types[0]->dtype, &from) || crt_dtype(a->out->dtype, &to))
    return no_kernel(a, "no cast kernel between these dtypes");
  if (check_size(a, numel(a->out))) return -1;
  TnCrtCallCast *p = KERNEL_USE(k, cast, 0);
  p->from = from, p->to = to, p->n = (int32_t)numel(a->out);
  reads(k, 1);
  return 0;
}

/* ---- data movement ------------------------------------------------------------ */

static int lower_view(const TnKernArgs *a, TnKernCall *k) {
  (void)a;
  k->run = NULL; /* the output is input 0's storage */
  k->kernel = "view";
  reads(k, 1);
  return 0;
}

static int lower_transpose(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t), axes[TN_IR_MAX_DIMS];
  if (nd > TN_CRT_MAX_DIMS) return no_kernel(a, "too many dimensions");
  if (check_size(a, numel(t))) return -1;
  int32_t na = tn__ir_attr_ints(a->attrs, "axes", axes, TN_IR_MAX_DIMS, a->op);
  if (na < 0) return -1;
  TnCrtTranspose *p = KERNEL_USE(k, transpose, 0);
  p->ndim = (int32_t)(nd ? nd : 1);
  p->elem_size = elem_size(t->dtype);
  p->in_dims[0] = 1, p->perm[0] = 0;
  for (int64_t d = 0; d < nd; d++) {
    p->in_dims[d] = (int32_t)tn__ir_dims(t)[d];
    int64_t ax = na == 0 ? nd - 1 - d : axes[d];
    p->perm[d] = (int32_t)(ax < 0 ? ax + nd : ax);
  }
  reads(k, 1);
  return 0;
}

static int lower_concatenate(const TnKernArgs *a, TnKernCall *k) {
  const TnIrAxisAttrs *x =
      ATTRS(a->op, a->attrs, TnIrAxisAttrs, "ir.ConcatenateAttrs");
  if (x == NULL) return -1;
  int64_t nd = tn__ir_ndim(a->out), axis = x->axis;
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "axis out of range");
  if (check_size(a, numel(a->out) * elem_size(a->out->dtype))) return -1;
  TnCrtCallConcat *p = KERNEL_USE(k, concatenate, 0);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; d++) outer *= tn__ir_dims(a->out)[d];
  p->outer = (int32_t)outer;
  p->n = a->nargs;
  for (int32_t i = 0; i < a->nargs; i++) {
    int64_t bytes = elem_size(a->types[i]->dtype);
    for (int64_t d = axis; d < nd; d++) bytes *= tn__ir_dims(a->types[i])[d];
    p->sizes[i] = (int32_t)bytes;
  }
  reads(k, a->nargs);
  return 0;
}

static int lower_pad(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t);
  if (nd < 1 || nd > TN_CRT_MAX_DIMS) return no_kernel(a, "dimensions");
  const TnIrPadAttrs *x = ATTRS(a->op, a->attrs, TnIrPadAttrs, "ir.PadAttrs");
  if (x == NULL || check_size(a, numel(a->out))) return -1;
  TnCrtCallPad *p = KERNEL_USE(k, pad, 0);
  p->pad.ndim = (int32_t)nd;
  p->pad.elem_size = elem_size(t->dtype);
  for (int64_t d = 0; d < nd; d++) {
    p->pad.in_dims[d] = (int32_t)tn__ir_dims(t)[d];
    int64_t extra = tn__ir_dims(a->out)[d] - tn__ir_dims(t)[d];
    p->pad.before[d] = 0;
    p->pad.after[d] = (int32_t)extra;
  }
  /* pad_width: (before, after) per dim, nested or flat; type inference has
   * checked it, so the flat form is enough here. */
  int64_t w[2 * TN_IR_MAX_DIMS];
  const TnAny v = x->pad_width;
  int64_t m = 0;
  if (v.type_index == TN_TYPE_ARRAY || v.type_index == TN_TYPE_LIST) {
    for (int64_t i = 0; i < tn_array_size(v.v_obj) && m < 2 * nd; i++) {
      const TnAny *it = tn_array_at(v.v_obj, i);
      if (it->type_index == TN_TYPE_INT) {
        w[m++] = it->v_int64;
      } else if (tn_any_is_object(it) && (it->type_index == TN_TYPE_ARRAY ||
                                          it->type_index == TN_TYPE_SHAPE)) {
        int64_t pr[2];
        if (it->type_index == TN_TYPE_SHAPE) {
          const TnShapeObj *s = (const TnShapeObj *)it->v_obj;
          pr[0] = s->ndim > 0 ? s->data[0] : 0;
          pr[1] = s->ndim > 1 ? s->data[1] : 0;
        } else {
          pr[0] = pr[1] = 0;
          for (int64_t j = 0; j < 2 && j < tn_array_size(it->v_obj); j++)
            tn_any_as_int(tn_array_at(it->v_obj, j), &pr[j]);
        }
        w[m++] = pr[0], w[m++] = pr[1];
      }
    }
  } else if (v.type_index == TN_TYPE_SHAPE) {
    const TnShapeObj *s = (const TnShapeObj *)v.v_obj;
    for (int64_t i = 0; i < s->ndim && m < 2 * nd; i++) w[m++] = s->data[i];
  }
  if (m == 2 * nd)
    for (int64_t d = 0; d < nd; d++) {
      p->pad.before[d] = (int32_t)w[2 * d];
      p->pad.after[d] = (int32_t)w[2 * d + 1];
    }
  if (tn__ir_store_scalar(p->value, t->dtype, x->pad_value)) return -1;
  reads(k, 1);
  return 0;
}

/* numpy's slice resolved by the operator's own rules (ops_tensor.c), then
 * made small for the kernel: unit dims dropped, a step of 1 where one
 * index is taken, and a dim taken whole merged into the one before it
 * when that one steps by 1 (the pair is one contiguous run). */
static int lower_strided_slice(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  int32_t esz = elem_size(t->dtype);
  if (t->dtype.lanes != 1 || (esz != 1 && esz != 2 && esz != 4 && esz != 8))
    return no_kernel(a, "elements of 1, 2, 4 or 8 bytes only");
  int64_t begin[TN_IR_MAX_DIMS], stride[TN_IR_MAX_DIMS], out[TN_IR_MAX_DIMS];
  if (tn__ir_strided_slice_plan(a->op, (TnObject *)t, t, a->attrs, begin,
                                stride, out))
    return -1;
  if (check_size(a, numel(t))) return -1;
  TnCrtStridedSlice *p = KERNEL_USE(k, strided_slice, 0);
  p->elem_size = esz;
  int32_t nd = 0;
  bool empty = false;
  for (int64_t d = 0; d < tn__ir_ndim(t); d++) empty |= out[d] == 0;
  for (int64_t d = 0; !empty && d < tn__ir_ndim(t); d++) {
    int32_t n = (int32_t)tn__ir_dims(t)[d], o = (int32_t)out[d];
    int32_t b = (int32_t)begin[d], s = o == 1 ? 1 : (int32_t)stride[d];
    if (n == 1) continue;
    if (nd > 0 && b == 0 && s == 1 && o == n && p->strides[nd - 1] == 1) {
      p->in_dims[nd - 1] *= n, p->begin[nd - 1] *= n, p->out_dims[nd - 1] *= n;
      continue;
    }
    if (nd == TN_CRT_MAX_DIMS)
      return no_kernel(a, "more than 8 dimensions remain after merging");
    p->in_dims[nd] = n, p->begin[nd] = b, p->strides[nd] = s;
    p->out_dims[nd] = o;
    nd++;
  }
  if (nd == 0) { /* one element, or none */
    p->in_dims[0] = empty ? 0 : 1, p->out_dims[0] = empty ? 0 : 1;
    p->begin[0] = 0, p->strides[0] = 1;
    nd = 1;
  }
  p->ndim = nd;
  reads(k, 1);
  return 0;
}

/* ---- the table ---------------------------------------------------------------------- */

/* This file's rows; lower_nn.c's follow them (tn__lower_nn_table). */
static const TnLowerRow g_table[] = {
    {"add", {lower_add}},
    {"subtract", {lower_subtract}},
    {"multiply", {lower_multiply}},
    {"divide", {lower_divide}},
    {"maximum", {lower_maximum}},
    {"minimum", {lower_minimum}},
    {"negative", {lower_negative}},
    {"exp", {lower_exp}},
    {"sigmoid", {lower_sigmoid}},
    {"tanh", {lower_tanh}},
    {"nn.relu", {lower_relu}},
    {"clip", {lower_clip}},
    {"nn.leaky_relu", {lower_leaky_relu}},
    {"cast", {lower_cast}},
    {"reshape", {lower_view}},
    {"squeeze", {lower_view}},
    {"expand_dims", {lower_view}},
    {"transpose", {lower_transpose}},
    {"concatenate", {lower_concatenate}},
    {"nn.pad", {lower_pad}},
    {"strided_slice", {lower_strided_slice}},
};

static bool in_rows(const TnKernEntry *e, const TnLowerRow *rows, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (e == &rows[i].entry) return true;
  return false;
}

/* Each lowering file's rows; this file's come first. */
static const TnLowerRow *own_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}

static const TnLowerRow *(*const g_tables[])(size_t *) = {
    own_table,
    tn__lower_nn_table,
    tn__lower_spatial_table,
    tn__lower_movement_table,
    tn__lower_math_table,
    tn__lower_lstm_table,
    tn__lower_onnxq_table,
    tn__lower_s16mm_table,
};

bool tn__kernel_entry_known(const TnKernEntry *e) {
  for (size_t t = 0; t < G_N_ELEMENTS(g_tables); t++) {
    size_t n;
    const TnLowerRow *rows = g_tables[t](&n);
    if (in_rows(e, rows, n)) return true;
  }
  return false;
}

static void register_rows(const TnLowerRow *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    TnObject *op = tn_ir_op_get(rows[i].op);
    TN__INIT_CHECK(op != NULL);
    TnAny v = {TN_TYPE_OPAQUE_PTR, 0, {.v_ptr = (void *)&rows[i].entry}};
    TN__INIT_CHECK(tn_ir_op_set_attr(op, TN_OP_ATTR_KERNEL, &v, 0) == 0);
    tn_object_release(op);
  }
}

void tn__kernel_lower_init(void) {
  for (size_t t = 0; t < G_N_ELEMENTS(g_tables); t++) {
    size_t n;
    const TnLowerRow *rows = g_tables[t](&n);
    register_rows(rows, n);
  }
}
