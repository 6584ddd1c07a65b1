/*
 * dce.c: the DeadCodeElimination pass.
 *
 * Within functions: a let whose variable is never used is replaced by its
 * body (every operator is pure), repeated until none is left, since
 * dropping one let can leave another's variable unused. In the module: when
 * there is a "main", functions that main cannot reach through calls of
 * global functions are removed. (A module without "main" keeps all its
 * functions: any of them may be an entry point.)
 */
#include "pass/pass_internal.h"

typedef struct {
  GHashTable *used; /* variables that occur other than where defined */
  GHashTable *globals; /* names of global functions referred to */
} Uses;

static void note_child(Uses *u, TnObject *child) {
  if (tn_object_is_instance(child, TN_IR->var))
    g_hash_table_add(u->used, child);
  else if (tn_object_is_instance(child, TN_IR->global_var))
    g_hash_table_add(u->globals,
                     (char *)((TnStringObj *)((TnIrGlobalVar *)child)->name_hint)->data);
}

static int note_uses(void *vctx, TnObject *e) {
  Uses *u = vctx;
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    const TnIrCall *c = (const TnIrCall *)e;
    note_child(u, c->op);
    for (int64_t i = 0; i < tn_array_size(c->args); i++)
      note_child(u, tn_array_at(c->args, i)->v_obj);
  } else if (t == T->tuple) {
    TnObject *f = ((const TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      note_child(u, tn_array_at(f, i)->v_obj);
  } else if (t == T->tuple_get_item) {
    note_child(u, ((const TnIrTupleGetItem *)e)->tuple);
  } else if (t == T->let) {
    note_child(u, ((const TnIrLet *)e)->value);
    note_child(u, ((const TnIrLet *)e)->body);
  } else if (t == T->function) {
    note_child(u, ((const TnIrFunction *)e)->body);
  }
  return 0;
}

static TnObject *drop_unused(void *vctx, TnObject *orig, TnObject *rebuilt) {
  Uses *u = vctx;
  (void)orig;
  if (tn_object_is_instance(rebuilt, TN_IR->let)) {
    const TnIrLet *l = (const TnIrLet *)rebuilt;
    if (!g_hash_table_contains(u->used, l->var)) {
      tn_object_retain(l->body);
      return l->body;
    }
  }
  tn_object_retain(rebuilt);
  return rebuilt;
}

static TnObject *dce_function(void *ctx, const char *name, TnObject *f) {
  (void)ctx, (void)name;
  TnObject *cur = f;
  tn_object_retain(cur);
  for (;;) {
    Uses u = {g_hash_table_new(g_direct_hash, g_direct_equal),
              g_hash_table_new(g_str_hash, g_str_equal)};
    TnObject *next = NULL;
    if (tn_ir_post_order_visit(cur, note_uses, &u) == 0)
      next = tn_ir_mutate(cur, drop_unused, &u);
    g_hash_table_destroy(u.used);
    g_hash_table_destroy(u.globals);
    if (next == NULL) {
      tn_object_release(cur);
      return NULL;
    }
    bool same = next == cur;
    tn_object_release(cur);
    cur = next;
    if (same) return cur;
  }
}

/* Names reachable from "main", or NULL when there is no main. */
static GHashTable *reachable(const TnIrModule *m, bool *failed) {
  *failed = false;
  TnAny key = tn_any_cstr("main");
  if (tn_map_find(m->functions, &key) == NULL) return NULL;
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *todo = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(todo, g_strdup("main"));
  g_hash_table_add(seen, g_strdup("main"));
  while (todo->len > 0 && !*failed) {
    char *name = g_ptr_array_steal_index(todo, todo->len - 1);
    TnAny k = tn_any_cstr(name);
    const TnAny *f = tn_map_find(m->functions, &k);
    g_free(name);
    if (f == NULL) continue; /* InferType reports dangling references */
    Uses u = {g_hash_table_new(g_direct_hash, g_direct_equal),
              g_hash_table_new(g_str_hash, g_str_equal)};
    if (tn_ir_post_order_visit(f->v_obj, note_uses, &u)) {
      *failed = true;
    } else {
      GHashTableIter it;
      gpointer g;
      g_hash_table_iter_init(&it, u.globals);
      while (g_hash_table_iter_next(&it, &g, NULL)) {
        if (g_hash_table_contains(seen, g)) continue;
        g_hash_table_add(seen, g_strdup(g));
        g_ptr_array_add(todo, g_strdup(g));
      }
    }
    g_hash_table_destroy(u.used);
    g_hash_table_destroy(u.globals);
  }
  g_ptr_array_free(todo, TRUE);
  if (*failed) {
    g_hash_table_destroy(seen);
    return NULL;
  }
  return seen;
}

TnObject *tn__dce_module(TnObject *mod, TnObject *ctx) {
  (void)ctx;
  TnObject *cleaned = tn__pass_map_functions(mod, dce_function, NULL);
  if (cleaned == NULL) return NULL;
  const TnIrModule *m = (const TnIrModule *)cleaned;
  bool failed;
  GHashTable *live = reachable(m, &failed);
  if (failed) {
    tn_object_release(cleaned);
    return NULL;
  }
  if (live == NULL || (int64_t)g_hash_table_size(live) ==
                          tn_map_size(m->functions))
    goto done;
  TnObject *fns = tn_map_new(NULL, NULL, 0);
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(m->functions, 0, &k, &v); fns && p >= 0;
       p = tn_map_next(m->functions, p + 1, &k, &v)) {
    if (!g_hash_table_contains(live, tn__ir_key(k))) continue;
    if (tn_map_set(&fns, k, v)) {
      tn_object_release(fns);
      fns = NULL;
    }
  }
  TnObject *out = fns ? tn__ir_module_make(fns, m->attrs) : NULL;
  tn_object_release(fns);
  tn_object_release(cleaned);
  cleaned = out;
done:
  if (live) g_hash_table_destroy(live);
  return cleaned;
}
