/*
 * visit.c: walking and rewriting expression graphs.
 *
 * Both walk iteratively (a long chain of calls needs no C stack) and visit
 * each node once however often it is shared. Rewriting is bottom-up: a node
 * is rebuilt over its rewritten children through the same builders that
 * check and type new nodes (so a rewrite that breaks typing fails where it
 * happens), and a node none of whose children changed is kept as it is, so
 * an unchanged graph comes back as the very same object.
 */
#include "ir/ir_internal.h"

/* The expression children of `e`, in evaluation order. */
static int32_t children(TnObject *e, TnObject **out, int32_t cap,
                        GPtrArray **big) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index, n = 0;
#define ADD(x)                                     \
  do {                                             \
    TnObject *x_ = (x);                            \
    if (n < cap) {                                 \
      out[n] = x_;                                 \
    } else {                                       \
      if (*big == NULL) *big = g_ptr_array_new();  \
      g_ptr_array_add(*big, x_);                   \
    }                                              \
    n++;                                           \
  } while (0)
  if (t == T->call) {
    TnIrCall *c = (TnIrCall *)e;
    ADD(c->op);
    for (int64_t i = 0; i < tn_array_size(c->args); i++)
      ADD(tn_array_at(c->args, i)->v_obj);
  } else if (t == T->tuple) {
    TnObject *f = ((TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++) ADD(tn_array_at(f, i)->v_obj);
  } else if (t == T->tuple_get_item) {
    ADD(((TnIrTupleGetItem *)e)->tuple);
  } else if (t == T->let) {
    /* The value first: it is evaluated before the variable is bound, and
     * type inference gives an unannotated variable its value's type. */
    TnIrLet *l = (TnIrLet *)e;
    ADD(l->value);
    ADD(l->var);
    ADD(l->body);
  } else if (t == T->function) {
    TnIrFunction *f = (TnIrFunction *)e;
    for (int64_t i = 0; i < tn_array_size(f->params); i++)
      ADD(tn_array_at(f->params, i)->v_obj);
    ADD(f->body);
  }
#undef ADD
  return n;
}

typedef struct {
  TnObject *node;
  int32_t next, count;
  TnObject *small[8];
  GPtrArray *big; /* children beyond the first 8, made when needed */
} Frame;

static TnObject *child_at(Frame *f, int32_t i) {
  return i < 8 ? f->small[i] : g_ptr_array_index(f->big, i - 8);
}

static void push(GArray *stack, TnObject *node) {
  Frame f = {node, 0, 0, {0}, NULL};
  f.count = children(node, f.small, 8, &f.big);
  g_array_append_val(stack, f);
}

static void pop(GArray *stack) {
  Frame *f = &g_array_index(stack, Frame, stack->len - 1);
  if (f->big) g_ptr_array_free(f->big, TRUE);
  g_array_set_size(stack, stack->len - 1);
}

TN_API int tn_ir_post_order_visit(TnObject *expr, TnIrVisitFn fn, void *ctx) {
  if (!tn__ir_is(expr, TN_IR->expr))
    return TN_RAISE(TYPE, "expected an ir.Expr, got %s",
                    tn_object_type_key(expr));
  if (fn == NULL) return tn__raise_null("tn_ir_post_order_visit", "fn");
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(Frame));
  int rc = 0;
  g_hash_table_add(seen, expr);
  push(stack, expr);
  while (stack->len > 0 && rc == 0) {
    Frame *f = &g_array_index(stack, Frame, stack->len - 1);
    if (f->next < f->count) {
      TnObject *c = child_at(f, f->next++);
      if (!g_hash_table_contains(seen, c)) {
        g_hash_table_add(seen, c);
        push(stack, c);
      }
      continue;
    }
    TnObject *node = f->node;
    pop(stack);
    rc = fn(ctx, node);
  }
  while (stack->len > 0) pop(stack);
  g_array_free(stack, TRUE);
  g_hash_table_destroy(seen);
  return rc;
}

/* ---- rewriting ----------------------------------------------------------- */

/* Rebuild `e` over new children (in the order children() gives them). */
static TnObject *rebuild(TnObject *e, TnObject **kids, int32_t n) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call)
    return tn__ir_call_like(e, kids[0], kids + 1, n - 1, ((TnIrCall *)e)->attrs);
  if (t == T->tuple) return tn_ir_tuple(kids, n);
  if (t == T->tuple_get_item)
    return tn_ir_tuple_get_item(kids[0], ((TnIrTupleGetItem *)e)->index);
  /* A variable's replacement stands for its uses: where it is defined (a
   * let, a parameter) a replacement that is not a variable leaves the
   * original definition in place. */
  if (t == T->let) {
    TnObject *var = kids[1];
    if (!tn_object_is_instance(var, T->var)) var = ((TnIrLet *)e)->var;
    return tn_ir_let(var, kids[0], kids[2]);
  }
  if (t == T->function) {
    TnIrFunction *f = (TnIrFunction *)e;
    for (int32_t i = 0; i < n - 1; i++)
      if (!tn_object_is_instance(kids[i], T->var))
        kids[i] = tn_array_at(f->params, i)->v_obj;
    return tn_ir_function(kids, n - 1, kids[n - 1], f->ret_type, f->attrs);
  }
  tn_object_retain(e);
  return e;
}

TN_API TnObject *tn_ir_mutate(TnObject *expr, TnIrRewriteFn fn, void *ctx) {
  if (!tn__ir_is(expr, TN_IR->expr))
    return TN_RAISE(TYPE, "expected an ir.Expr, got %s",
                    tn_object_type_key(expr)), NULL;
  if (fn == NULL) return tn__raise_null("tn_ir_mutate", "fn"), NULL;
  /* old node -> its replacement (one reference each) */
  GHashTable *done = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)tn_object_release);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(Frame));
  TnObject *result = NULL;
  bool failed = false;
  push(stack, expr);
  while (stack->len > 0 && !failed) {
    Frame *f = &g_array_index(stack, Frame, stack->len - 1);
    if (f->next < f->count) {
      TnObject *c = child_at(f, f->next++);
      if (!g_hash_table_contains(done, c)) push(stack, c);
      continue;
    }
    TnObject *node = f->node;
    if (g_hash_table_contains(done, node)) { /* reached twice on the stack */
      pop(stack);
      continue;
    }
    TnObject *small[8], **kids = small;
    if (f->count > 8) kids = g_new(TnObject *, f->count);
    bool changed = false;
    for (int32_t i = 0; i < f->count; i++) {
      TnObject *c = child_at(f, i);
      kids[i] = g_hash_table_lookup(done, c);
      changed |= kids[i] != c;
    }
    int32_t count = f->count;
    pop(stack);
    TnObject *rebuilt = node;
    if (changed) rebuilt = rebuild(node, kids, count);
    else tn_object_retain(rebuilt);
    if (kids != small) g_free(kids);
    TnObject *out = rebuilt ? fn(ctx, node, rebuilt) : NULL;
    tn_object_release(rebuilt);
    if (out == NULL) {
      failed = true;
      break;
    }
    g_hash_table_insert(done, node, out);
  }
  if (!failed) {
    result = g_hash_table_lookup(done, expr);
    tn_object_retain(result);
  }
  while (stack->len > 0) pop(stack);
  g_array_free(stack, TRUE);
  g_hash_table_destroy(done);
  return result;
}
