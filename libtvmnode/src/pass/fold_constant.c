/*
 * fold_constant.c: the FoldConstant pass: evaluate at compile time what
 * depends only on constants.
 *
 * Bottom-up, a call of an operator whose arguments are all constants (for
 * concatenate: a tuple of constants) is replaced by a constant holding its
 * value, computed by the operator's kernel (tn_kernel_eval, the same
 * lowering the executor and the code generator use); an item of a literal
 * tuple is replaced by the field; a let whose value became a constant is
 * dropped and the constant used in its place. Calls with no kernel for their
 * types, calls whose kernel refuses the constants (an integer division by
 * zero: run time reports it), results larger than the
 * "FoldConstant.max_elements" option, and non-compact tensors are left
 * alone.
 */
#include "pass/pass_internal.h"

typedef struct {
  int64_t max_elements;
  GHashTable *let_of;  /* let-bound var -> its let */
  GHashTable *results; /* original node -> its replacement (borrowed) */
} Ctx;

static TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

static bool is_constant(const TnObject *e) {
  return tn_object_is_instance(e, TN_IR->constant) &&
         tn__tensor_contiguous(((const TnIrConstant *)e)->data);
}

/* The folded value of a call, NULL when it does not fold; *failed on error. */
static TnObject *fold_call(Ctx *c, TnObject *e, bool *failed) {
  const char *op = tn__ir_call_op_name(e);
  const TnIrCall *call = (const TnIrCall *)e;
  TnObject *type = tn_ir_checked_type(e);
  if (op == NULL || type == NULL ||
      !tn_object_is_instance(type, TN_IR->tensor_type))
    return NULL;
  const TnShapeObj *shape =
      (const TnShapeObj *)((const TnIrTensorType *)type)->shape;
  int64_t numel;
  if (tn__ckd_numel(&numel, shape->data, shape->ndim, NULL) ||
      numel > c->max_elements)
    return NULL;
  TnObject *args = call->args;
  if (tn_array_size(args) == 1 &&
      tn_object_is_instance(tn_array_at(args, 0)->v_obj, TN_IR->tuple))
    args = ((const TnIrTuple *)tn_array_at(args, 0)->v_obj)->fields;
  int64_t n = tn_array_size(args);
  if (n == 0) return NULL;
  for (int64_t i = 0; i < n; i++)
    if (!is_constant(tn_array_at(args, i)->v_obj)) return NULL;
  int supported;
  TnObject *value = tn_kernel_eval(e, &supported);
  if (value == NULL) {
    /* A kernel that refuses its constant inputs (ValueError: an integer
     * division by zero) leaves the call for run time to report. */
    if (supported &&
        tn_error_kind_code(tn_error_peek_raised()) == TN_ERR_VALUE) {
      tn_error_set_raised(NULL);
      supported = 0;
    }
    *failed = supported != 0;
    return NULL;
  }
  TnObject *out = tn_ir_constant(value);
  tn_object_release(value);
  *failed = out == NULL;
  return out;
}

static TnObject *rewrite(void *vctx, TnObject *orig, TnObject *rebuilt) {
  Ctx *c = vctx;
  const TnIrTypes *T = TN_IR;
  TnObject *out = NULL;
  bool failed = false;
  int32_t t = rebuilt->type_index;
  if (t == T->call) {
    out = fold_call(c, rebuilt, &failed);
  } else if (t == T->tuple_get_item) {
    const TnIrTupleGetItem *g = (const TnIrTupleGetItem *)rebuilt;
    if (tn_object_is_instance(g->tuple, T->tuple)) {
      TnObject *fields = ((const TnIrTuple *)g->tuple)->fields;
      if (g->index >= 0 && g->index < tn_array_size(fields))
        out = retained(tn_array_at(fields, g->index)->v_obj);
    }
  } else if (t == T->var) {
    TnIrLet *let = g_hash_table_lookup(c->let_of, orig);
    TnObject *value = let ? g_hash_table_lookup(c->results, let->value) : NULL;
    if (value && is_constant(value)) out = retained(value);
  } else if (t == T->let) {
    const TnIrLet *l = (const TnIrLet *)rebuilt;
    if (is_constant(l->value)) out = retained(l->body);
  }
  if (failed) return NULL;
  if (out == NULL) out = retained(rebuilt);
  g_hash_table_insert(c->results, orig, out);
  return out;
}

static int note_lets(void *vctx, TnObject *e) {
  Ctx *c = vctx;
  if (tn_object_is_instance(e, TN_IR->let))
    g_hash_table_insert(c->let_of, ((TnIrLet *)e)->var, e);
  return 0;
}

TnObject *tn__fold_constant_expr(TnObject *expr, int64_t max_elements) {
  Ctx c = {max_elements, g_hash_table_new(g_direct_hash, g_direct_equal),
           g_hash_table_new(g_direct_hash, g_direct_equal)};
  TnObject *out = NULL;
  if (tn_ir_post_order_visit(expr, note_lets, &c) == 0)
    out = tn_ir_mutate(expr, rewrite, &c);
  g_hash_table_destroy(c.let_of);
  g_hash_table_destroy(c.results);
  return out;
}

static TnObject *fold_function(void *ctx, const char *name, TnObject *f) {
  (void)name;
  return tn__fold_constant_expr(f, *(int64_t *)ctx);
}

TnObject *tn__fold_constant_module(TnObject *mod, TnObject *ctx) {
  int64_t max = tn__pass_config_int(ctx, "FoldConstant.max_elements",
                                    (int64_t)1 << 22);
  return tn__pass_map_functions(mod, fold_function, &max);
}
