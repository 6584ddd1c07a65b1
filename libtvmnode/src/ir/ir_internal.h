/*
 * ir_internal.h: what the IR layer (nodes, operators, the evaluator, the text
 * format) shares with the pass layer above it. Private to the library.
 */
#ifndef TVMNODE_IR_INTERNAL_H_
#define TVMNODE_IR_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "ir_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "reflect/reflect_internal.h"
#include "tvmnode/ir.h"

#define TN_IR (tn_ir_types())

/* The text of a string map key (module function names): a small string
 * lives inside the TnAny, so read it through the any. */
static inline const char *tn__ir_key(const TnAny *k) {
  const char *s = "";
  size_t n;
  tn__any_text(k, &s, &n);
  return s;
}

bool tn__ir_is(const TnObject *o, int32_t type_index);
/* Whether a global function name is one the text format writes as @name:
 * letters, digits, '_' and '.', not empty. */
bool tn__ir_global_name_ok(const char *s, size_t n);
/* A tn.Array of the objects (borrowed). */
TnObject *tn__ir_array(TnObject *const *items, int32_t n);
TnObject *tn__ir_type_of_tensor(TnObject *tensor);
TnObject *tn__ir_module_make(TnObject *functions, TnObject *attrs);
/* Variables used but not defined under `expr`, in order of first use. */
TnObject *tn__ir_free_vars(TnObject *expr);
/* Type equality, fast for tensor types (the common case). */
bool tn__ir_type_equal(const TnObject *a, const TnObject *b);
/* A call of `op` like `orig` (a call): when the operator, the attrs and
 * the argument types are those of `orig`, its type is reused instead of
 * inferred again; otherwise the same as tn_ir_call. (transfer full) */
TnObject *tn__ir_call_like(const TnObject *orig, TnObject *op,
                           TnObject *const *args, int32_t nargs,
                           TnObject *attrs);
/* Run the inference of an operator defined in C directly on `types`
 * (checked, `attrs` of the op's type); `*handled` false when the op's
 * inference is not a C one (call tn__ir_infer_call then). */
TnObject *tn__ir_infer_direct(const TnObject *op, TnObject *const *types,
                              int32_t n, TnObject *attrs, bool *handled);
/* Call an operator's inference function; NULL with the error. */
TnObject *tn__ir_infer_call(TnObject *op, TnObject *arg_types,
                            TnObject *attrs);

/* Write `value` as one element of `dtype`; ValueError for kinds that have
 * no scalars. */
int tn__ir_store_scalar(void *dst, DLDataType dtype, double value);

/* ---- types in messages and checks ---------------------------------------- */

/* Append a type as the text format writes it: Tensor[(1, 10), float32]. */
void tn__ir_print_type(GString *out, const TnObject *type);
/* TypeError: "<who>: argument <i> has type <got>, expected <want>" (i < 0:
 * no argument). Returns -1. */
int tn__ir_type_mismatch(const char *who, int32_t index, const TnObject *want,
                         const TnObject *got);

/* ---- what operator inference functions use ------------------------------- */

/* A C inference function: the argument types and the attrs (may be NULL);
 * returns the result type (transfer full), or NULL with a TypeError that
 * names the operator and the argument. */
typedef TnObject *(*TnIrInferC)(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs);

/* Define a built-in operator (aborts on failure: start-up only). `inputs`
 * names its inputs, comma-separated ("data,weight"); their count is its
 * arity and they become its TN_OP_ATTR_INPUT_NAMES. */
void tn__ir_op_define(const char *name, const char *inputs,
                      const char *attrs_key, int32_t pattern, TnIrInferC infer,
                      const char *doc);
/* An operator's fusion pattern (TN_OP_OPAQUE when it has none). */
int32_t tn__ir_op_pattern(const TnObject *op);
/* Its type inference function, or NULL with a TypeError raised.
 * (transfer none) */
const TnObject *tn__ir_op_infer(const TnObject *op);

/* Register the attrs node type `key` (C layout S, a TnFieldDesc table). */
#define TN__IR_ATTRS(S, key, fields)                                          \
  do {                                                                        \
    TnNodeDesc desc_ = {key, TN_IR->attrs, TN_NODE_TREE, 0,                   \
                        (int64_t)sizeof(S), fields,                           \
                        (int32_t)G_N_ELEMENTS(fields), NULL, NULL};           \
    TN__INIT_CHECK(tn_node_register(&desc_) > 0);                                   \
  } while (0)

/* Argument `i` as a tensor type, or NULL with a TypeError naming it. */
const TnIrTensorType *tn__ir_tensor_arg(const char *op, TnObject *const *types,
                                        int32_t i, const char *role);
static inline int64_t tn__ir_ndim(const TnIrTensorType *t) {
  return ((const TnShapeObj *)t->shape)->ndim;
}
static inline const int64_t *tn__ir_dims(const TnIrTensorType *t) {
  return ((const TnShapeObj *)t->shape)->data;
}
static inline bool tn__ir_dtype_eq(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline bool tn__ir_is_float(DLDataType t) {
  return t.code == kDLFloat || t.code == kDLBfloat;
}
static inline bool tn__ir_is_void(DLDataType t) {
  return t.code == kDLOpaqueHandle && t.bits == 0;
}

/* TypeError: "<op>: argument <i> (<role>) has type <T>: <why>". */
int tn__ir_arg_error(const char *op, int32_t i, const char *role,
                     const TnObject *type, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);

/* Numpy broadcasting of two shapes into `out` (room for 16 dims); -1 with
 * a TypeError naming both argument types. */
int tn__ir_broadcast(const char *op, const TnIrTensorType *a,
                     const TnIrTensorType *b, int64_t *out, int32_t *ndim);

/* Read an attrs field of kind any/obj holding ints (tn.Array or tn.Shape
 * or None) into `out` (at most `cap`); returns the count or -1. */
int32_t tn__ir_attr_ints(const TnObject *attrs, const char *field,
                         int64_t *out, int32_t cap, const char *op);
/* 0 when each of the n values of attribute `field` fits int32 (what the
 * kernels take); -1 with a TypeError "<op>: attribute '<field>' = <v>:
 * ..." otherwise. */
int tn__ir_attr_fits_i32(const char *op, const char *field,
                         const int64_t *v, int n);

#define TN_IR_MAX_DIMS 16

/* Whether `expr` is a constant every element of which equals `value`. */
bool tn__ir_const_all(const TnObject *expr, double value);
/* The operator name of a call of an ir.Op, or NULL. */
const char *tn__ir_call_op_name(const TnObject *expr);

/* Start-up. */
void tn__ir_nodes_init(void);
void tn__ir_ops_tensor_init(void);
void tn__ir_ops_movement_init(void);
void tn__ir_ops_nn_init(void);
void tn__ir_ops_qnn_init(void);
void tn__ir_ops_math_init(void);
void tn__ir_ops_onnxq_init(void); /* ops_onnxq.c */
void tn__ir_well_formed_init(void);

/* Whether the saved type of `e` is the one its parts give it (its
 * children's saved types through its operator's inference, a constant's
 * tensor, a parameter's annotation): 1 if so or it has none, 0 if not
 * (`*why` says how, a static string), -1 with the inference error when
 * the parts do not type at all. Calls of global functions answer 1: their
 * callee's type is in the module (tn_ir_well_formed checks them). */
int tn__ir_saved_type_agrees(TnObject *e, const char **why);
/* Start-up of the IR layer: node types, the operator registry, then the
 * operators (init.c). */
void tn__ir_init(void);
void tn__ir_op_registry_init(void);

#endif /* TVMNODE_IR_INTERNAL_H_ */
