/*
 * lower_internal.h: what the two halves of the lowering table share. lower.c
 * (the elementwise and data-movement operators, and the table itself) and
 * lower_nn.c (the neural-network and quantized operators, and the fused
 * forms) build their calls from the same small helpers, so those are here as
 * static inline functions under the names both files have always used; the
 * one larger shared piece (the broadcast geometry) and what lower.c needs of
 * lower_nn.c (its part of the table and of the run-to-emitter map) are
 * declared here as tn__lower_* functions defined once. Private to the
 * library.
 */
#ifndef TVMNODE_KERNEL_LOWER_INTERNAL_H_
#define TVMNODE_KERNEL_LOWER_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "lower_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "kernel/kernel_internal.h"

#include <inttypes.h>
#include <math.h>

static const DLDataType kF32 = {kDLFloat, 32, 1}, kI32 = {kDLInt, 32, 1},
                        kI8 = {kDLInt, 8, 1};

/* ---- helpers ---------------------------------------------------------------- */

static inline bool is(DLDataType t, DLDataType u) {
  return tn__ir_dtype_eq(t, u);
}

static inline int64_t numel(const TnIrTensorType *t) {
  int64_t n = 1;
  for (int64_t i = 0; i < tn__ir_ndim(t); i++) n *= tn__ir_dims(t)[i];
  return n;
}

static inline int no_kernel(const TnKernArgs *a, const char *why) {
  GString *s = g_string_new(NULL);
  for (int32_t i = 0; i < a->nargs; i++) {
    if (i) g_string_append(s, ", ");
    tn__ir_print_type(s, (const TnObject *)a->types[i]);
  }
  tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, a->op, "no kernel for (%s)%s%s",
                    s->str, why ? ": " : "", why ? why : "");
  g_string_free(s, TRUE);
  return -1;
}

/* Sizes handed to the crt are int32. */
static inline int check_size(const TnKernArgs *a, int64_t n) {
  if (n > INT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "a tensor of %" PRId64
                             " elements is too large for the kernels", n);
  return 0;
}

/* The call's attributes as the struct of their node type `key` (the
 * layouts are in ir/ops_nn.h), or NULL with a TypeError naming the
 * operator and both types. The lowering reads attributes only this way: a
 * misspelled field does not compile, and attributes of another type are an
 * error, never defaults. */
static inline const void *attrs_as(const char *op, const TnObject *attrs,
                                   const char *key) {
  int32_t t = tn_type_index(key);
  if (attrs != NULL && t >= 0 && tn_object_is_instance(attrs, t))
    return attrs;
  tn_error_raise_in(TN_ERR_TYPE, op, "expected attributes of type %s, got %s",
                    key, attrs ? tn_object_type_key(attrs) : "none");
  return NULL;
}
#define ATTRS(op, attrs, T, key) ((const T *)attrs_as((op), (attrs), (key)))

/* A string attribute's text ("" for none). */
static inline const char *attr_text(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "";
}

static inline void reads(TnKernCall *k, int32_t n) {
  k->nin = n;
  for (int32_t i = 0; i < n; i++) k->in[i] = i;
}

static inline int32_t clamp_i32(double x, double lo, double hi) {
  if (isnan(x)) return 0;
  return (int32_t)(x < lo ? lo : x > hi ? hi : x);
}

/* The broadcast geometry of a binary call (lower.c, where its merging of
 * dims is described); the float and the int8 binary operators share it. */
int tn__lower_broadcast(const TnKernArgs *a, const TnIrTensorType *l,
                        const TnIrTensorType *r, const TnIrTensorType *o,
                        TnCrtBroadcast *b);

/* ---- the table's two parts ---------------------------------------------------- */

/* One row of the lowering table: an operator and its TN_OP_ATTR_KERNEL
 * entry (whose address is what the attribute holds). */
typedef struct {
  const char *op;
  TnKernEntry entry;
} TnLowerRow;

/* lower_nn.c's rows of the table (`*n` of them), which lower.c registers
 * and recognises along with its own. */
const TnLowerRow *tn__lower_nn_table(size_t *n);
/* lower_spatial.c's rows (resizing and normalisation), likewise. */
const TnLowerRow *tn__lower_spatial_table(size_t *n);
/* lower_movement.c's rows, registered after lower_nn.c's. */
const TnLowerRow *tn__lower_movement_table(size_t *n);

/* From lower_nn.c, for lower_movement.c: a reduction's kernel geometry
 * (unit dims dropped, like neighbours merged) and the elements per output;
 * the lowering of qnn.mean, or with `sum` of qnn.sum (TFLite's SUM: no
 * 1/count in the multiplier). -1 with the error. */
int tn__lower_reduce_geom(const TnKernArgs *a, TnCrtReduce *r,
                          int32_t *count);
int tn__lower_qnn_mean_or_sum(const TnKernArgs *a, TnKernCall *k, bool sum);

/* lower_math.c's rows, registered after lower_nn.c's, and its int8
 * maximum/minimum, which lower.c's binary lowering hands int8 calls to. */
const TnLowerRow *tn__lower_math_table(size_t *n);
int tn__lower_minmax_s8(const TnKernArgs *a, TnKernCall *k, TnCrtBinaryOp op);
/* lower_nn.c's lowering of qnn.add and qnn.mul, which lower_math.c's int8
 * binary operators share: the form (a TnCrtCallQBinary one) and the crt
 * function that computes its TFLite parameters. */
typedef TnCrtStatus (*TnLowerQParams)(double, int32_t, double, int32_t,
                                      double, int32_t, TnCrtQBinary *);
int tn__lower_qnn_binary(const TnKernArgs *a, TnKernCall *k,
                         TnKernFormId form, TnLowerQParams params);

/* lower_lstm.c's rows (nn.lstm, qnn.lstm), registered after the others. */
const TnLowerRow *tn__lower_lstm_table(size_t *n);
/* lower_nn.c's reader of a constant argument's values (at most `cap`, as
 * doubles; `*n` of them), for the other parts of the table. */
int tn__lower_const_values(const TnKernArgs *a, int32_t i, const char *role,
                           double *out, int64_t cap, int64_t *n);

/* lower_onnxq.c's rows (the operators of onnxruntime's quantized
 * arithmetic), registered after the others. */
const TnLowerRow *tn__lower_onnxq_table(size_t *n);

/* lower_s16mm.c's rows (qnn.divide), registered after the others, and the
 * int16 (16x8) forms of qnn.batch_matmul and qnn.conv2d_transpose, which
 * lower_spatial.c's lowerings hand int16 data to with its geometry. */
const TnLowerRow *tn__lower_s16mm_table(size_t *n);
int tn__lower_bmm_s16(const TnKernArgs *a, TnKernCall *k,
                      const TnCrtBatchMatmul *g);
int tn__lower_tconv_s16(const TnKernArgs *a, TnKernCall *k,
                        const TnCrtConvTranspose *g);
/* lower_s16act.c's int16 forms of qnn.sigmoid and qnn.tanh (`tanh_`) and
 * of qnn.softmax, which lower_nn.c's lowering hands int16 calls to. */
int tn__lower_act_s16(const TnKernArgs *a, TnKernCall *k, bool tanh_);
int tn__lower_softmax_s16(const TnKernArgs *a, TnKernCall *k);

#endif /* TVMNODE_KERNEL_LOWER_INTERNAL_H_ */
