/*
 * fuse_ops.c: the FuseOps pass: group operator calls into primitive
 * functions, each of which a code generator turns into one kernel.
 *
 * Grouping is greedy over the dataflow graph, producers first. A call
 * joins the group of an argument that is an operator call used only by it
 * (so every group is a tree whose intermediate values never escape) when
 * the patterns allow:
 *   - elementwise, broadcast and injective ops chain together;
 *   - elementwise and broadcast ops fuse after one "anchor" (conv2d, dense,
 *     pooling: TN_OP_OUT_FUSABLE; a reduction), which then heads the group;
 *   - injective ops fuse into a reduction's input;
 *   - nothing fuses into an anchor's inputs, two anchors never share a
 *     group, and opaque ops stay alone.
 * A group holds at most "FuseOps.max_depth" calls (default 256), and takes
 * at most 16 arguments from outside (the kernels' limit).
 *
 * Every group, even a lone call, becomes a function with attrs
 * {"Primitive": 1} whose parameters are the group's inputs (one-element
 * constants stay inside), called where the group's last call was. Calls
 * already inside primitive functions are left alone, so the pass is
 * idempotent.
 */
#include "pass/pass_internal.h"

#include <stdio.h>

/* The most arguments a fused call may take: the kernels' (the crt's
 * TN_CRT_MAX_INPUTS). */
#define FUSE_MAX_INPUTS 16

typedef struct {
  int32_t parent;  /* union-find */
  int32_t pattern; /* the group's pattern (at the representative) */
  int32_t size;    /* calls in the group */
  int32_t inputs;  /* arguments from outside the group, small constants
                      aside (at most: one used twice counts twice) */
  TnObject *root;  /* the call whose value leaves the group */
} Group;

typedef struct {
  int64_t max_depth;
  GHashTable *uses;   /* node -> number of edges into it */
  GHashTable *frozen; /* nodes inside primitive functions */
  GPtrArray *order;   /* nodes, producers first */
  GHashTable *group_of; /* call -> group index + 1 */
  GArray *groups;       /* Group */
  TnObject *prim_attrs; /* {"Primitive": 1} */
} Fuse;

static int32_t find(Fuse *f, int32_t g) {
  Group *gs = (Group *)f->groups->data;
  while (gs[g].parent != g) {
    gs[g].parent = gs[gs[g].parent].parent;
    g = gs[g].parent;
  }
  return g;
}

static int32_t group_of(Fuse *f, const TnObject *call) {
  gpointer v = g_hash_table_lookup(f->group_of, call);
  return v ? find(f, GPOINTER_TO_INT(v) - 1) : -1;
}

static int32_t op_pattern(const TnObject *call) {
  return tn__ir_op_pattern(((const TnIrCall *)call)->op);
}

/* ---- analysis ---------------------------------------------------------------- */

static void add_use(Fuse *f, TnObject *child) {
  gpointer n = g_hash_table_lookup(f->uses, child);
  g_hash_table_insert(f->uses, child, GINT_TO_POINTER(GPOINTER_TO_INT(n) + 1));
}

static int mark_frozen(void *vctx, TnObject *e) {
  g_hash_table_add(((Fuse *)vctx)->frozen, e);
  return 0;
}

static int analyse(void *vctx, TnObject *e) {
  Fuse *f = vctx;
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    const TnIrCall *c = (const TnIrCall *)e;
    for (int64_t i = 0; i < tn_array_size(c->args); i++)
      add_use(f, tn_array_at(c->args, i)->v_obj);
  } else if (t == T->tuple) {
    TnObject *fs = ((const TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(fs); i++)
      add_use(f, tn_array_at(fs, i)->v_obj);
  } else if (t == T->tuple_get_item) {
    add_use(f, ((const TnIrTupleGetItem *)e)->tuple);
  } else if (t == T->let) {
    add_use(f, ((const TnIrLet *)e)->value);
    add_use(f, ((const TnIrLet *)e)->body);
  } else if (t == T->function) {
    add_use(f, ((const TnIrFunction *)e)->body);
    if (tn__pass_is_primitive(e) &&
        tn_ir_post_order_visit(((const TnIrFunction *)e)->body, mark_frozen, f))
      return -1;
  }
  g_ptr_array_add(f->order, e);
  return 0;
}

static bool is_fusable_call(Fuse *f, const TnObject *e) {
  return tn__ir_call_op_name(e) != NULL && !g_hash_table_contains(f->frozen, e);
}

/* Whether the group of producer `a` may join the group `gc` of `call`. */
static bool can_merge(Fuse *f, const TnObject *call, int32_t gc, int32_t ga,
                      int32_t *merged) {
  const Group *gs = (const Group *)f->groups->data;
  int32_t pc = gs[gc].pattern, pa = gs[ga].pattern, own = op_pattern(call);
  if (gs[gc].size + gs[ga].size > f->max_depth) return false;
  /* a fused call's arguments: the producer's value becomes internal */
  if (gs[gc].inputs + gs[ga].inputs - 1 > FUSE_MAX_INPUTS) return false;
  if (pc == TN_OP_OPAQUE || pa == TN_OP_OPAQUE) return false;
  bool anchor_c = pc >= TN_OP_REDUCE, anchor_a = pa >= TN_OP_REDUCE;
  if (anchor_c && anchor_a) return false;
  if (anchor_a) { /* an epilogue after conv2d/dense/pool or a reduction */
    if (pc > TN_OP_BROADCAST) return false;
    *merged = pa;
    return true;
  }
  if (anchor_c) {
    if (own == TN_OP_OUT_FUSABLE) return false; /* not into its inputs */
    if (own == TN_OP_REDUCE) { /* injective inputs of a reduction */
      *merged = pc;
      return pa <= TN_OP_INJECTIVE;
    }
    *merged = pc; /* another input of an anchored epilogue */
    return pa <= TN_OP_BROADCAST;
  }
  *merged = pc > pa ? pc : pa;
  return true;
}

/* A constant of at most 8 bytes: it stays inside the primitive function
 * rather than becoming one of its parameters. */
static bool is_small_constant(const TnObject *e) {
  if (!tn_object_is_instance(e, TN_IR->constant)) return false;
  return tn_tensor_nbytes(((const TnIrConstant *)e)->data) <= 8;
}

/* The arguments of `call` that would be parameters of its group. */
static int32_t outside_args(const TnObject *call) {
  const TnIrCall *c = (const TnIrCall *)call;
  int32_t n = 0;
  for (int64_t k = 0; k < tn_array_size(c->args); k++)
    n += !is_small_constant(tn_array_at(c->args, k)->v_obj);
  return n;
}

static void build_groups(Fuse *f) {
  for (guint i = 0; i < f->order->len; i++) {
    TnObject *e = g_ptr_array_index(f->order, i);
    if (!is_fusable_call(f, e)) continue;
    Group g = {(int32_t)f->groups->len, op_pattern(e), 1, outside_args(e), e};
    g_array_append_val(f->groups, g);
    g_hash_table_insert(f->group_of, e, GINT_TO_POINTER(g.parent + 1));
    int32_t gc = g.parent;
    const TnIrCall *c = (const TnIrCall *)e;
    for (int64_t k = 0; k < tn_array_size(c->args); k++) {
      TnObject *a = tn_array_at(c->args, k)->v_obj;
      if (!is_fusable_call(f, a) ||
          GPOINTER_TO_INT(g_hash_table_lookup(f->uses, a)) != 1)
        continue;
      int32_t ga = group_of(f, a), merged;
      if (ga < 0 || ga == gc || !can_merge(f, e, gc, ga, &merged)) continue;
      Group *gs = (Group *)f->groups->data;
      gs[ga].parent = gc;
      gs[gc].size += gs[ga].size;
      gs[gc].inputs += gs[ga].inputs - 1;
      gs[gc].pattern = merged;
    }
  }
}

/* ---- rewriting --------------------------------------------------------------- */

typedef struct {
  Fuse *f;
  int32_t group;
  GPtrArray *params;      /* new ir.Var (owned) */
  GPtrArray *inputs;      /* the outer expressions they stand for */
  GHashTable *param_of;   /* outer expression -> its param */
} Build;

/* The group's body over (orig, rebuilt) node pairs; NULL with an error. */
static TnObject *clone_group(Build *b, TnObject *orig, TnObject *rebuilt) {
  if (group_of(b->f, orig) == b->group && tn__ir_call_op_name(orig)) {
    const TnIrCall *oc = (const TnIrCall *)orig, *rc = (const TnIrCall *)rebuilt;
    int64_t n = tn_array_size(oc->args);
    TnObject *small[8], **args = n <= 8 ? small : g_new(TnObject *, n);
    int64_t made = 0;
    TnObject *out = NULL;
    for (; made < n; made++) {
      args[made] = clone_group(b, tn_array_at(oc->args, made)->v_obj,
                         tn_array_at(rc->args, made)->v_obj);
      if (args[made] == NULL) break;
    }
    if (made == n) out = tn__ir_call_like(orig, rc->op, args, (int32_t)n,
                                          rc->attrs);
    for (int64_t i = 0; i < made; i++) tn_object_release(args[i]);
    if (args != small) g_free(args);
    return out;
  }
  if (is_small_constant(rebuilt)) {
    tn_object_retain(rebuilt);
    return rebuilt;
  }
  TnObject *p = g_hash_table_lookup(b->param_of, rebuilt);
  if (p == NULL) {
    TnObject *type = tn_ir_checked_type(rebuilt);
    if (type == NULL) {
      tn_error_raise_in(TN_ERR_TYPE, "FuseOps", "an input of a fused group (a "
                        "%s) has no type; run InferType first",
                        tn_object_type_key(rebuilt));
      return NULL;
    }
    char name[24];
    snprintf(name, sizeof name, "p%u", b->params->len);
    p = tn_ir_var(name, type);
    if (p == NULL) return NULL;
    g_ptr_array_add(b->params, p);
    g_ptr_array_add(b->inputs, rebuilt);
    g_hash_table_insert(b->param_of, rebuilt, p);
  }
  tn_object_retain(p);
  return p;
}

static TnObject *make_group(Fuse *f, TnObject *orig, TnObject *rebuilt) {
  Build b = {f, group_of(f, orig),
             g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release),
             g_ptr_array_new(), g_hash_table_new(g_direct_hash, g_direct_equal)};
  TnObject *out = NULL, *body = clone_group(&b, orig, rebuilt);
  if (body) {
    TnObject *fn = tn_ir_function((TnObject *const *)b.params->pdata,
                                  (int32_t)b.params->len, body, NULL,
                                  f->prim_attrs);
    if (fn)
      out = tn_ir_call(fn, (TnObject *const *)b.inputs->pdata,
                       (int32_t)b.inputs->len, NULL);
    tn_object_release(fn);
    tn_object_release(body);
  }
  g_ptr_array_free(b.params, TRUE);
  g_ptr_array_free(b.inputs, TRUE);
  g_hash_table_destroy(b.param_of);
  return out;
}

static TnObject *rewrite(void *vctx, TnObject *orig, TnObject *rebuilt) {
  Fuse *f = vctx;
  int32_t g = group_of(f, orig);
  if (g >= 0 && g_array_index(f->groups, Group, g).root == orig)
    return make_group(f, orig, rebuilt);
  tn_object_retain(rebuilt);
  return rebuilt;
}

static TnObject *fuse_function(void *vctx, const char *name, TnObject *fn) {
  (void)name;
  Fuse *f = vctx;
  f->uses = g_hash_table_new(g_direct_hash, g_direct_equal);
  f->frozen = g_hash_table_new(g_direct_hash, g_direct_equal);
  f->order = g_ptr_array_new();
  f->group_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  f->groups = g_array_new(FALSE, FALSE, sizeof(Group));
  TnObject *out = NULL;
  if (tn_ir_post_order_visit(fn, analyse, f) == 0) {
    build_groups(f);
    out = tn_ir_mutate(fn, rewrite, f);
  }
  g_hash_table_destroy(f->uses);
  g_hash_table_destroy(f->frozen);
  g_ptr_array_free(f->order, TRUE);
  g_hash_table_destroy(f->group_of);
  g_array_free(f->groups, TRUE);
  return out;
}

TnObject *tn__fuse_ops_module(TnObject *mod, TnObject *ctx) {
  Fuse f = {0};
  f.max_depth = tn__pass_config_int(ctx, "FuseOps.max_depth", 256);
  if (f.max_depth < 1) f.max_depth = 1;
  TnAny k = tn_any_cstr("Primitive"), v = tn_any_int(1);
  f.prim_attrs = tn_map_new(&k, &v, 1);
  if (f.prim_attrs == NULL) return NULL;
  TnObject *out = tn__pass_map_functions(mod, fuse_function, &f);
  tn_object_release(f.prim_attrs);
  return out;
}
