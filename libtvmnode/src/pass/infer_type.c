/*
 * infer_type.c: the InferType pass: give every expression of every function
 * its type, and check that the types fit.
 *
 * The builders already type what they can when a node is made, so this pass
 * forces, bottom-up, the nodes whose type is still missing: calls whose
 * arguments were untyped when built, calls of global functions (typed on
 * demand, in dependency order; recursion is refused), and variables bound
 * by a let without an annotation, which take their value's type. A function
 * parameter without an annotation cannot be typed and is an error naming it.
 * Saved types are not trusted: one that is not what the node's parts give
 * it (a graph loaded from a file, a field set from a binding) is derived
 * again, so the pass's result is typed correctly whatever it was given.
 */
#include "pass/pass_internal.h"

typedef struct {
  const TnIrModule *mod;
  TnObject *functions;    /* tn.Map being built: name -> typed function */
  GHashTable *in_progress; /* names of functions being typed */
  const char *fn_name;     /* the function being typed, for messages */
  GHashTable *let_of;      /* let-bound var -> its let node */
  GHashTable *results;     /* node -> what this pass made of it */
} Ctx;

static TnObject *type_function(Ctx *c, const char *name);

static int note_lets(void *vctx, TnObject *e) {
  Ctx *c = vctx;
  if (tn_object_is_instance(e, TN_IR->let))
    g_hash_table_insert(c->let_of, ((TnIrLet *)e)->var, e);
  return 0;
}

static TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

static TnObject *type_global_call(Ctx *c, TnObject *call) {
  TnIrCall *k = (TnIrCall *)call;
  const char *callee = ((TnStringObj *)((TnIrGlobalVar *)k->op)->name_hint)->data;
  TnObject *f = type_function(c, callee);
  if (f == NULL) return NULL;
  const TnIrFuncType *ft = (const TnIrFuncType *)((TnIrExpr *)f)->checked_type;
  tn_object_release(f);
  if (ft == NULL) {
    tn_error_raise_in(TN_ERR_TYPE, "InferType", "@%s has no type", callee);
    return NULL;
  }
  int64_t n = tn_array_size(k->args);
  if (n != tn_array_size(ft->arg_types)) {
    tn_error_raise_in(TN_ERR_TYPE, "InferType", "@%s takes %" G_GINT64_FORMAT
                      " arguments, got %" G_GINT64_FORMAT " (in function '%s')",
                      callee, tn_array_size(ft->arg_types), n, c->fn_name);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    TnObject *want = tn_array_at(ft->arg_types, i)->v_obj;
    TnObject *got = tn_ir_checked_type(tn_array_at(k->args, i)->v_obj);
    if (got == NULL || !tn__ir_type_equal(want, got)) {
      char *who = g_strdup_printf("call of @%s", callee);
      tn__ir_type_mismatch(who, (int32_t)i, want, got);
      g_free(who);
      return NULL;
    }
  }
  /* A fresh call node of our own, so setting its type changes nobody's. */
  TnObject **args = g_new(TnObject *, n > 0 ? n : 1);
  for (int64_t i = 0; i < n; i++) args[i] = tn_array_at(k->args, i)->v_obj;
  TnObject *out = tn_ir_call(k->op, args, (int32_t)n, NULL);
  g_free(args);
  if (out) ((TnIrExpr *)out)->checked_type = retained(ft->ret_type);
  return out;
}

/* Rebuild a node through its builder, which types it now that its parts
 * are typed. */
static TnObject *force(Ctx *c, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    TnIrCall *k = (TnIrCall *)e;
    if (tn_object_is_instance(k->op, T->global_var)) return type_global_call(c, e);
    int64_t n = tn_array_size(k->args);
    TnObject **args = g_new(TnObject *, n > 0 ? n : 1);
    for (int64_t i = 0; i < n; i++) args[i] = tn_array_at(k->args, i)->v_obj;
    TnObject *out = tn_ir_call(k->op, args, (int32_t)n, k->attrs);
    g_free(args);
    return out;
  }
  if (t == T->tuple) {
    TnObject *f = ((TnIrTuple *)e)->fields;
    int64_t n = tn_array_size(f);
    TnObject **items = g_new(TnObject *, n > 0 ? n : 1);
    for (int64_t i = 0; i < n; i++) items[i] = tn_array_at(f, i)->v_obj;
    TnObject *out = tn_ir_tuple(items, (int32_t)n);
    g_free(items);
    return out;
  }
  if (t == T->constant) return tn_ir_constant(((TnIrConstant *)e)->data);
  if (t == T->tuple_get_item)
    return tn_ir_tuple_get_item(((TnIrTupleGetItem *)e)->tuple,
                                ((TnIrTupleGetItem *)e)->index);
  if (t == T->let)
    return tn_ir_let(((TnIrLet *)e)->var, ((TnIrLet *)e)->value,
                     ((TnIrLet *)e)->body);
  if (t == T->function) {
    TnIrFunction *f = (TnIrFunction *)e;
    int64_t n = tn_array_size(f->params);
    TnObject **ps = g_new(TnObject *, n > 0 ? n : 1);
    for (int64_t i = 0; i < n; i++) ps[i] = tn_array_at(f->params, i)->v_obj;
    TnObject *out = tn_ir_function(ps, (int32_t)n, f->body, f->ret_type, f->attrs);
    g_free(ps);
    return out;
  }
  return retained(e);
}

static bool is_global_call(const TnObject *e) {
  return tn_object_is_instance(e, TN_IR->call) &&
         tn_object_is_instance(((const TnIrCall *)e)->op, TN_IR->global_var);
}

/* Whether a typed call of a global function has the type its (typed)
 * callee returns for arguments of these types; -1 with an error if the
 * callee cannot be typed. */
static int global_call_agrees(Ctx *c, TnObject *call) {
  TnIrCall *k = (TnIrCall *)call;
  TnObject *f = type_function(
      c, ((TnStringObj *)((TnIrGlobalVar *)k->op)->name_hint)->data);
  if (f == NULL) return -1;
  const TnIrFuncType *ft = (const TnIrFuncType *)((TnIrExpr *)f)->checked_type;
  int64_t n = tn_array_size(k->args);
  bool ok = ft && tn__ir_type_equal(ft->ret_type, k->base.checked_type) &&
            n == tn_array_size(ft->arg_types);
  for (int64_t i = 0; ok && i < n; i++)
    ok = tn__ir_type_equal(tn_array_at(ft->arg_types, i)->v_obj,
                           tn_ir_checked_type(tn_array_at(k->args, i)->v_obj));
  tn_object_release(f);
  return ok;
}

static TnObject *infer_node(void *vctx, TnObject *orig, TnObject *rebuilt) {
  Ctx *c = vctx;
  TnObject *out = NULL;
  /* A saved type is kept only when it is the one the node's (already
   * checked) parts give it; anything else is derived again. */
  const char *why;
  bool is_var = tn_object_is_instance(rebuilt, TN_IR->var);
  bool unannotated = is_var && ((TnIrVar *)rebuilt)->type_annotation == NULL;
  int agrees = 0;
  if (tn_ir_checked_type(rebuilt) && is_global_call(rebuilt))
    agrees = global_call_agrees(c, rebuilt);
  else if (tn_ir_checked_type(rebuilt) && !unannotated)
    agrees = tn__ir_saved_type_agrees(rebuilt, &why);
  if (agrees < 0) return NULL;
  if (agrees) {
    out = retained(rebuilt);
  } else if (is_var && !unannotated) {
    /* A parameter whose saved type is not its annotation. */
    TnIrExpr *v = (TnIrExpr *)rebuilt;
    tn_object_release(v->checked_type);
    v->checked_type = retained(((TnIrVar *)rebuilt)->type_annotation);
    out = retained(rebuilt);
  } else if (is_var) {
    TnIrLet *let = g_hash_table_lookup(c->let_of, orig);
    TnObject *value = let ? g_hash_table_lookup(c->results, let->value) : NULL;
    TnObject *vt = value ? tn_ir_checked_type(value) : NULL;
    if (vt == NULL) {
      tn_error_raise_in(TN_ERR_TYPE, "InferType",
                        "variable %%%s in function '%s' has no type annotation",
                        ((TnStringObj *)((TnIrVar *)rebuilt)->name_hint)->data,
                        c->fn_name);
      return NULL;
    }
    /* A cache no comparison reads: every use of this variable sees it. */
    tn_object_release(((TnIrExpr *)rebuilt)->checked_type);
    ((TnIrExpr *)rebuilt)->checked_type = retained(vt);
    out = retained(rebuilt);
  } else if (tn_object_is_instance(rebuilt, TN_IR->op) ||
             tn_object_is_instance(rebuilt, TN_IR->global_var)) {
    out = retained(rebuilt); /* typed by their use */
  } else {
    out = force(c, rebuilt);
    if (out && tn_ir_checked_type(out) == NULL &&
        !tn_object_is_instance(out, TN_IR->function)) {
      tn_error_raise_in(TN_ERR_TYPE, "InferType",
                        "cannot infer the type of a %s in function '%s'",
                        tn_object_type_key(out), c->fn_name);
      tn_object_release(out);
      return NULL;
    }
  }
  if (out) g_hash_table_insert(c->results, orig, out);
  return out;
}

static TnObject *type_function(Ctx *c, const char *name) {
  TnAny key = tn_any_cstr(name);
  const TnAny *done = tn_map_find(c->functions, &key);
  if (done) return retained(done->v_obj);
  const TnAny *fv = tn_map_find(c->mod->functions, &key);
  if (fv == NULL) {
    tn_error_raise_in(TN_ERR_KEY, "InferType",
                      "a call refers to @%s, which the module does not have",
                      name);
    return NULL;
  }
  if (g_hash_table_contains(c->in_progress, name)) {
    tn_error_raise_in(TN_ERR_TYPE, "InferType",
                      "@%s calls itself; recursive functions are not supported",
                      name);
    return NULL;
  }
  g_hash_table_add(c->in_progress, (gpointer)name);
  const char *saved = c->fn_name;
  c->fn_name = name;
  TnObject *fn = fv->v_obj;
  TnIrFunction *f = (TnIrFunction *)fn;
  for (int64_t i = 0; i < tn_array_size(f->params); i++) {
    TnIrVar *p = (TnIrVar *)tn_array_at(f->params, i)->v_obj;
    if (p->base.checked_type == NULL) {
      tn_error_raise_in(TN_ERR_TYPE, "InferType", "parameter %%%s of function "
                        "'%s' has no type annotation",
                        ((TnStringObj *)p->name_hint)->data, name);
      g_hash_table_remove(c->in_progress, name);
      c->fn_name = saved;
      return NULL;
    }
  }
  /* Per function: `results` holds pointers the mutation owns. */
  GHashTable *saved_lets = c->let_of, *saved_results = c->results;
  c->let_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  c->results = g_hash_table_new(g_direct_hash, g_direct_equal);
  TnObject *out = NULL;
  if (tn_ir_post_order_visit(fn, note_lets, c) == 0)
    out = tn_ir_mutate(fn, infer_node, c);
  g_hash_table_destroy(c->let_of);
  g_hash_table_destroy(c->results);
  c->let_of = saved_lets;
  c->results = saved_results;
  g_hash_table_remove(c->in_progress, name);
  c->fn_name = saved;
  if (out == NULL) return NULL;
  TnAny v = tn_any_obj(out);
  if (tn_map_set(&c->functions, &key, &v)) {
    tn_object_release(out);
    return NULL;
  }
  return out;
}

TnObject *tn__infer_type_module(TnObject *mod, TnObject *ctx) {
  (void)ctx;
  Ctx c = {(const TnIrModule *)mod, tn_map_new(NULL, NULL, 0),
           g_hash_table_new(g_str_hash, g_str_equal), NULL, NULL, NULL};
  TnObject *result = NULL;
  const TnAny *k;
  bool ok = c.functions != NULL;
  for (int64_t p = tn_map_next(c.mod->functions, 0, &k, NULL); ok && p >= 0;
       p = tn_map_next(c.mod->functions, p + 1, &k, NULL)) {
    TnObject *f = type_function(&c, tn__ir_key(k));
    ok = f != NULL;
    tn_object_release(f);
  }
  if (ok) {
    /* Keep the module's own order of functions. */
    TnObject *ordered = tn_map_new(NULL, NULL, 0);
    for (int64_t p = tn_map_next(c.mod->functions, 0, &k, NULL);
         ordered && p >= 0; p = tn_map_next(c.mod->functions, p + 1, &k, NULL)) {
      if (tn_map_set(&ordered, k, tn_map_find(c.functions, k))) {
        tn_object_release(ordered);
        ordered = NULL;
      }
    }
    if (ordered) result = tn__ir_module_make(ordered, c.mod->attrs);
    tn_object_release(ordered);
  }
  tn_object_release(c.functions);
  g_hash_table_destroy(c.in_progress);
  return result;
}
