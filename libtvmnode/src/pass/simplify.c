/*
 * simplify.c: the SimplifyExpr pass: algebraic identities that need no
 * evaluation.
 *
 *   x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1  ->  x
 *   reshape(reshape(x)) (also of squeeze or expand_dims)  ->  reshape(x)
 *   reshape(x) to x's own shape, cast(x) to x's own dtype  ->  x
 *
 * An identity applies only when the call's type equals x's type, so a
 * constant that broadcasts x to a larger shape or another dtype is kept.
 * The rewrite is bottom-up, so chains collapse in one pass.
 */
#include "pass/pass_internal.h"

static bool same_type(const TnObject *a, const TnObject *b) {
  TnObject *ta = tn_ir_checked_type(a), *tb = tn_ir_checked_type(b);
  return ta != NULL && tb != NULL && tn__ir_type_equal(ta, tb);
}

static bool is_reshape_like(const char *name) {
  return name && (strcmp(name, "reshape") == 0 || strcmp(name, "squeeze") == 0 ||
                  strcmp(name, "expand_dims") == 0);
}

static TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

/* The simpler form of `e`; NULL when there is none. `*failed` tells an
 * error from "nothing to do". */
static TnObject *simplify_call(TnObject *e, bool *failed) {
  *failed = false;
  const char *op = tn__ir_call_op_name(e);
  if (op == NULL) return NULL;
  const TnIrCall *c = (const TnIrCall *)e;
  int64_t n = tn_array_size(c->args);
  TnObject *a0 = n > 0 ? tn_array_at(c->args, 0)->v_obj : NULL;
  TnObject *a1 = n > 1 ? tn_array_at(c->args, 1)->v_obj : NULL;
  if (n == 2) {
    bool add = strcmp(op, "add") == 0, mul = strcmp(op, "multiply") == 0;
    double unit = mul || strcmp(op, "divide") == 0 ? 1.0 : 0.0;
    bool right = add || mul || strcmp(op, "subtract") == 0 ||
                 strcmp(op, "divide") == 0;
    if (right && tn__ir_const_all(a1, unit) && same_type(e, a0))
      return retained(a0);
    if ((add || mul) && tn__ir_const_all(a0, unit) && same_type(e, a1))
      return retained(a1);
    return NULL;
  }
  if (n != 1) return NULL;
  if ((strcmp(op, "cast") == 0 || is_reshape_like(op)) && same_type(e, a0))
    return retained(a0);
  if (strcmp(op, "reshape") == 0 && is_reshape_like(tn__ir_call_op_name(a0))) {
    TnObject *inner = tn_array_at(((const TnIrCall *)a0)->args, 0)->v_obj;
    TnObject *out = tn_ir_call(c->op, &inner, 1, c->attrs);
    *failed = out == NULL;
    return out;
  }
  return NULL;
}

static TnObject *rewrite(void *ctx, TnObject *orig, TnObject *rebuilt) {
  (void)ctx, (void)orig;
  TnObject *cur = retained(rebuilt);
  /* A rewrite can expose another at the same node (reshape of a reshape to
   * the original shape): repeat until nothing applies. */
  for (;;) {
    bool failed;
    TnObject *next = simplify_call(cur, &failed);
    if (next == NULL) {
      if (failed) {
        tn_object_release(cur);
        return NULL;
      }
      return cur;
    }
    tn_object_release(cur);
    cur = next;
  }
}

TnObject *tn__simplify_expr(TnObject *expr) {
  return tn_ir_mutate(expr, rewrite, NULL);
}

static TnObject *simplify_function(void *ctx, const char *name, TnObject *f) {
  (void)ctx, (void)name;
  return tn__simplify_expr(f);
}

TnObject *tn__simplify_module(TnObject *mod, TnObject *ctx) {
  (void)ctx;
  return tn__pass_map_functions(mod, simplify_function, NULL);
}
