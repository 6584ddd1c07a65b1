/*
 * lower.c: the lowering table. For every operator of the registry (and each
 * dtype it has a kernel for), how a typed call becomes one call of a crt
 * kernel: which kernel, its parameter struct built from the call's
 * attributes, types and constant arguments, and which arguments it reads at
 * run time. Each entry is the operator's TN_OP_ATTR_KERNEL attribute. The
 * table is kept in two files so that neither grows past what one reads at
 * once, each with its lowerings, their C forms (an emitter beside the run
 * function and parameter struct it writes out) and its rows: this file has
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

static int crt_dtype(DLDataType t, TnCrtDType *out) {
  if (t.lanes != 1) return -1;
  if (t.code == kDLFloat && t.bits == 32) *out = TN_CRT_F32;
  else if (t.code == kDLFloat && t.bits == 64) *out = TN_CRT_F64;
  else if (t.code == kDLInt && t.bits == 32) *out = TN_CRT_I32;
  else if (t.code == kDLInt && t.bits == 8) *out = TN_CRT_I8;
  else if (t.code == kDLInt && t.bits == 16) *out = TN_CRT_I16;
  else if (t.code == kDLInt && t.bits == 64) *out = TN_CRT_I64;
  else if (t.code == kDLUInt && t.bits == 8) *out = TN_CRT_U8;
  else if (t.code == kDLBool && t.bits == 8) *out = TN_CRT_BOOL;
  else return -1;
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

typedef struct {
  TnCrtBinaryOp op;
  TnCrtBroadcast b;
} BinaryP;

static int32_t run_binary_f32(const void *p, const void *const *in, void *out,
                              void *s, size_t n) {
  (void)s, (void)n;
  const BinaryP *b = p;
  return tn_crt_binary_f32(b->op, &b->b, in[0], in[1], out);
}
static int32_t run_binary_i32(const void *p, const void *const *in, void *out,
                              void *s, size_t n) {
  (void)s, (void)n;
  const BinaryP *b = p;
  return tn_crt_binary_i32(b->op, &b->b, in[0], in[1], out);
}

static int lower_binary(const TnKernArgs *a, TnKernCall *k, TnCrtBinaryOp op) {
  DLDataType t = a->types[0]->dtype;
  if (!is(t, kF32) && !is(t, kI32)) return no_kernel(a, NULL);
  BinaryP *p = params_new(k, sizeof *p);
  p->op = op;
  if (tn__lower_broadcast(a, a->types[0], a->types[1], a->out, &p->b))
    return -1;
  k->run = is(t, kF32) ? run_binary_f32 : run_binary_i32;
  k->kernel = is(t, kF32) ? "tn_crt_binary_f32" : "tn_crt_binary_i32";
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

typedef struct {
  TnCrtUnaryOp op;
  int32_t n;
} UnaryP;

static int32_t run_unary_f32(const void *p, const void *const *in, void *out,
                             void *s, size_t n) {
  (void)s, (void)n;
  const UnaryP *u = p;
  return tn_crt_unary_f32(u->op, u->n, in[0], out);
}
static int32_t run_unary_i32(const void *p, const void *const *in, void *out,
                             void *s, size_t n) {
  (void)s, (void)n;
  const UnaryP *u = p;
  return tn_crt_unary_i32(u->op, u->n, in[0], out);
}

static int lower_unary(const TnKernArgs *a, TnKernCall *k, TnCrtUnaryOp op) {
  DLDataType t = a->types[0]->dtype;
  bool int_ok = op == TN_CRT_NEGATIVE || op == TN_CRT_RELU;
  if (!is(t, kF32) && !(int_ok && is(t, kI32))) return no_kernel(a, NULL);
  if (check_size(a, numel(a->out))) return -1;
  UnaryP *p = params_new(k, sizeof *p);
  p->op = op, p->n = (int32_t)numel(a->out);
  k->run = is(t, kF32) ? run_unary_f32 : run_unary_i32;
  k->kernel = is(t, kF32) ? "tn_crt_unary_f32" : "tn_crt_unary_i32";
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

typedef struct {
  int32_t n;
  float flo, fhi;
  int32_t ilo, ihi;
} ClipP;

static int32_t run_clip_f32(const void *p, const void *const *in, void *out,
                            void *s, size_t n) {
  (void)s, (void)n;
  const ClipP *c = p;
  return tn_crt_clip_f32(c->n, in[0], c->flo, c->fhi, out);
}
static int32_t run_clip_i32(const void *p, const void *const *in, void *out,
                            void *s, size_t n) {
  (void)s, (void)n;
  const ClipP *c = p;
  return tn_crt_clip_i32(c->n, in[0], c->ilo, c->ihi, out);
}
static int32_t run_clip_s8(const void *p, const void *const *in, void *out,
                           void *s, size_t n) {
  (void)s, (void)n;
  const ClipP *c = p;
  return tn_crt_clip_s8(c->n, in[0], c->ilo, c->ihi, out);
}

static int lower_clip(const TnKernArgs *a, TnKernCall *k) {
  DLDataType t = a->types[0]->dtype;
  if (check_size(a, numel(a->out))) return -1;
  double lo = attr_float(a->attrs, "a_min", -INFINITY);
  double hi = attr_float(a->attrs, "a_max", INFINITY);
  ClipP *p = params_new(k, sizeof *p);
  p->n = (int32_t)numel(a->out);
  p->flo = (float)lo, p->fhi = (float)hi;
  if (is(t, kF32)) {
    k->run = run_clip_f32, k->kernel = "tn_crt_clip_f32";
  } else if (is(t, kI32)) {
    p->ilo = clamp_i32(ceil(lo), INT32_MIN, INT32_MAX);
    p->ihi = clamp_i32(floor(hi), INT32_MIN, INT32_MAX);
    k->run = run_clip_i32, k->kernel = "tn_crt_clip_i32";
  } else if (is(t, kI8)) {
    p->ilo = clamp_i32(ceil(lo), -128, 127);
    p->ihi = clamp_i32(floor(hi), -128, 127);
    k->run = run_clip_s8, k->kernel = "tn_crt_clip_s8";
  } else {
    return no_kernel(a, NULL);
  }
  reads(k, 1);
  k->inplace = 1; /* "out may be in" */
  return 0;
}

typedef struct {
  TnCrtDType from, to;
  int32_t n;
} CastP;

static int32_t run_cast(const void *p, const void *const *in, void *out,
                        void *s, size_t n) {
  (void)s, (void)n;
  const CastP *c = p;
  return tn_crt_cast(c->from, c->to, c->n, in[0], out);
}

static int lower_cast(const TnKernArgs *a, TnKernCall *k) {
  TnCrtDType from, to;
  if (crt_dtype(a->types[0]->dtype, &from) || crt_dtype(a->out->dtype, &to))
    return no_kernel(a, "no cast kernel between these dtypes");
  if (check_size(a, numel(a->out))) return -1;
  CastP *p = params_new(k, sizeof *p);
  p->from = from, p->to = to, p->n = (int32_t)numel(a->out);
  k->run = run_cast, k->kernel = "tn_crt_cast";
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

static int32_t run_transpose(const void *p, const void *const *in, void *out,
                             void *s, size_t n) {
  (void)s, (void)n;
  return tn_crt_transpose(p, in[0], out);
}

static int lower_transpose(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t), axes[TN_IR_MAX_DIMS];
  if (nd > TN_CRT_MAX_DIMS) return no_kernel(a, "too many dimensions");
  if (check_size(a, numel(t))) return -1;
  int32_t na = tn__ir_attr_ints(a->attrs, "axes", axes, TN_IR_MAX_DIMS, a->op);
  if (na < 0) return -1;
  TnCrtTranspose *p = params_new(k, sizeof *p);
  p->ndim = (int32_t)(nd ? nd : 1);
  p->elem_size = elem_size(t->dtype);
  p->in_dims[0] = 1, p->perm[0] = 0;
  for (int64_t d = 0; d < nd; d++) {
    p->in_dims[d] = (int32_t)tn__ir_dims(t)[d];
    int64_t ax = na == 0 ? nd - 1 - d : axes[d];
    p->perm[d] = (int32_t)(ax < 0 ? ax + nd : ax);
  }
  k->run = run_transpose, k->kernel = "tn_crt_transpose";
  reads(k, 1);
  return 0;
}

typedef struct {
  int32_t n, outer;
  int32_t sizes[TN_KERN_MAX_IN];
} ConcatP;

static int32_t run_concat(const void *p, const void *const *in, void *out,
                          void *s, size_t n) {
  (void)s, (void)n;
  const ConcatP *c = p;
  return tn_crt_concatenate(c->n, in, c->sizes, c->outer, out);
}

static int lower_concatenate(const TnKernArgs *a, TnKernCall *k) {
  int64_t nd = tn__ir_ndim(a->out), axis = attr_int(a->attrs, "axis", 0);
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "axis out of range");
  if (check_size(a, numel(a->out) * elem_size(a->out->dtype))) return -1;
  ConcatP *p = params_new(k, sizeof *p);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; d++) outer *= tn__ir_dims(a->out)[d];
  p->outer = (int32_t)outer;
  p->n = a->nargs;
  for (int32_t i = 0; i < a->nargs; i++) {
    int64_t bytes = elem_size(a->types[i]->dtype);
    for (int64_t d = axis; d < nd; d++) bytes *= tn__ir_dims(a->types[i])[d];
    p->sizes[i] = (int32_t)bytes;
  }
  k->run = run_concat, k->kernel = "tn_crt_concatenate";
  reads(k, a->nargs);
  return 0;
}

typedef struct {
  TnCrtPad pad;
  uint8_t value[8];
} PadP;

static int32_t run_pad(const void *p, const void *const *in, void *out,
                       void *s, size_t n) {
  (void)s, (void)n;
  const PadP *x = p;
  return tn_crt_pad(&x->pad, in[0], x->value, out);
}

static int lower_pad(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t);
  if (nd < 1 || nd > TN_CRT_MAX_DIMS) return no_kernel(a, "dimensions");
  if (check_size(a, numel(a->out))) return -1;
  PadP *p = params_new(k, sizeof *p);
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
  TnAny v;
  if (tn_node_get(a->attrs, "pad_width", &v)) return -1;
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
  tn_any_clear(&v);
  if (m == 2 * nd)
    for (int64_t d = 0; d < nd; d++) {
      p->pad.before[d] = (int32_t)w[2 * d];
      p->pad.after[d] = (int32_t)w[2 * d + 1];
    }
  double pv = attr_float(a->attrs, "pad_value", 0.0);
  if (tn__ir_store_scalar(p->value, t->dtype, pv)) return -1;
  k->run = run_pad, k->kernel = "tn_crt_pad";
  reads(k, 1);
  return 0;
}

static int32_t run_strided_slice(const void *p, const void *const *in,
                                 void *out, void *s, size_t n) {
  (void)s, (void)n;
  return tn_crt_strided_slice(p, in[0], out);
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
  TnCrtStridedSlice *p = params_new(k, sizeof *p);
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
  k->run = run_strided_slice, k->kernel = "tn_crt_strided_slice";
  reads(k, 1);
  return 0;
}

/* ---- C forms -------------------------------------------------------------------- */

/* Each run function's call written as C (see TnKernEmit): the same kernel
 * with the same parameters, as static const data. */

static void emit_binary(const void *p, TnKernEmit *e, const char *kernel) {
  const BinaryP *b = p;
  tn__emit_broadcast(e, "b", &b->b);
  tn__emit_return(e, "%s(%s, &$b, in0, in1, out)", kernel,
                  tn__emit_binary_op(b->op));
}
static void emit_binary_f32(const void *p, TnKernEmit *e) {
  emit_binary(p, e, "tn_crt_binary_f32");
}
static void emit_binary_i32(const void *p, TnKernEmit *e) {
  emit_binary(p, e, "tn_crt_binary_i32");
}

static void emit_unary_f32(const void *p, TnKernEmit *e) {
  const UnaryP *u = p;
  tn__emit_return(e, "tn_crt_unary_f32(%s, %d, in0, out)",
                  tn__emit_unary_op(u->op), u->n);
}
static void emit_unary_i32(const void *p, TnKernEmit *e) {
  const UnaryP *u = p;
  tn__emit_return(e, "tn_crt_unary_i32(%s, %d, in0, out)",
                  tn__emit_unary_op(u->op), u->n);
}

static void emit_clip_f32(const void *p, TnKernEmit *e) {
  const ClipP *c = p;
  GString *lo = g_string_new(NULL), *hi = g_string_new(NULL);
  tn__emit_f32(lo, c->flo), tn__emit_f32(hi, c->fhi);
  tn__emit_return(e, "tn_crt_clip_f32(%d, in0, %s, %s, out)", c->n, lo->str,
                  hi->str);
  g_string_free(lo, TRUE), g_string_free(hi, TRUE);
}
static void emit_clip_i32(const void *p, TnKernEmit *e) {
  const ClipP *c = p;
  tn__emit_return(e, "tn_crt_clip_i32(%d, in0, %d, %d, out)", c->n, c->ilo,
                  c->ihi);
}
static void emit_clip_s8(const void *p, TnKernEmit *e) {
  const ClipP *c = p;
  tn__emit_return(e, "tn_crt_clip_s8(%d, in0, %d, %d, out)", c->n, c->ilo,
                  c->ihi);
}

static void emit_cast(const void *p, TnKernEmit *e) {
  const CastP *c = p;
  tn__emit_return(e, "tn_crt_cast(%s, %s, %d, in0, out)",
                  tn__emit_dtype(c->from), tn__emit_dtype(c->to), c->n);
}

static void emit_transpose(const void *p, TnKernEmit *e) {
  tn__emit_transpose(e, "t", p);
  tn__emit_return(e, "tn_crt_transpose(&$t, in0, out)");
}

static void emit_concat(const void *p, TnKernEmit *e) {
  const ConcatP *c = p;
  tn__emit_i32s(e, "sizes", c->sizes, c->n);
  g_string_append(e->body, "  const void *const ins[] = {");
  for (int32_t i = 0; i < c->n; i++)
    g_string_append_printf(e->body, "%sin%d", i ? ", " : "", i);
  g_string_append(e->body, "};\n");
  tn__emit_return(e, "tn_crt_concatenate(%d, ins, $sizes, %d, out)", c->n,
                  c->outer);
}

static void emit_pad(const void *p, TnKernEmit *e) {
  const PadP *x = p;
  tn__emit_pad(e, "pad", &x->pad);
  tn__emit_bytes(e, "value", x->value, x->pad.elem_size);
  tn__emit_return(e, "tn_crt_pad(&$pad, in0, $value, out)");
}

static void emit_strided_slice(const void *p, TnKernEmit *e) {
  tn__emit_strided_slice(e, "s", p);
  tn__emit_return(e, "tn_crt_strided_slice(&$s, in0, out)");
}

static const struct {
  TnKernRun run;
  TnKernEmitFn emit;
} g_emitters[] = {
    {run_binary_f32, emit_binary_f32},   {run_binary_i32, emit_binary_i32},
    {run_unary_f32, emit_unary_f32},     {run_unary_i32, emit_unary_i32},
    {run_clip_f32, emit_clip_f32},       {run_clip_i32, emit_clip_i32},
    {run_clip_s8, emit_clip_s8},         {run_cast, emit_cast},
    {run_transpose, emit_transpose},     {run_concat, emit_concat},
    {run_pad, emit_pad},
    {run_strided_slice, emit_strided_slice},
};

/* This file's run functions, then lower_nn.c's. */
TnKernEmitFn tn__kernel_emitter(TnKernRun run) {
  for (size_t i = 0; run && i < G_N_ELEMENTS(g_emitters); i++)
    if (g_emitters[i].run == run) return g_emitters[i].emit;
  return run ? tn__lower_nn_emitter(run) : NULL;
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

bool tn__kernel_entry_known(const TnKernEntry *e) {
  size_t n;
  const TnLowerRow *nn = tn__lower_nn_table(&n);
  return in_rows(e, g_table, G_N_ELEMENTS(g_table)) || in_rows(e, nn, n);
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
  size_t n;
  const TnLowerRow *nn = tn__lower_nn_table(&n);
  register_rows(g_table, G_N_ELEMENTS(g_table));
  register_rows(nn, n);
}
