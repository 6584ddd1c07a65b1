/*
 * structural.c: structural equality and hashing, written once over the
 * reflection table.
 *
 * Both walk the two graphs (or the one) depth first, left to right, with an
 * explicit stack, so a million-deep chain needs no C stack. Left to right
 * matters: a function's parameters come before its body, so a variable is
 * met where it is defined (a TN_FIELD_DEF field, or a container inside one)
 * before it is used. Equality keeps two maps, lhs -> rhs and rhs -> lhs, of
 * variables and DAG nodes that have been matched; a later occurrence must
 * match the same partner. Tree nodes that are shared (their count is above
 * one) remember the partner they were proven equal to, so a shared
 * sub-graph is compared once and the walk stays linear in distinct nodes.
 * The hash gives a defined variable its definition order, so
 * alpha-equivalent graphs hash alike, and memoises shared nodes too. Maps
 * compare and hash without regard to entry order.
 *
 * A List, a Dict or a node with a writable object field can be made to
 * contain itself; walking it would descend for ever. Both walks watch for
 * that (Watch below) and raise a ValueError naming the path where the value
 * recurs. Equality still reports a difference met before the cycle, and
 * an object compared with itself is equal without being walked (as
 * `l == l` is in Python), unless free variables are mapped.
 */
#include "reflect/reflect_internal.h"

#include <math.h>

typedef enum { C_NODE, C_SEQ, C_MAP } CKind;

/* How a frame was reached from its parent, for the mismatch path. */
typedef struct {
  const char *field; /* ".field" */
  int64_t index;     /* "[index]", or -1 */
  const TnAny *key;  /* "[key]" (map entries), or NULL */
  int missing;       /* the item is absent: 1 from the rhs, 2 the lhs */
} Via;

/* An optional field holding an empty map reads as None: "no attributes"
 * has one meaning whether it is an empty map or left out (a module built
 * in C has {}, one loaded from JSON may have null, and the text format
 * writes neither). */
static inline void empty_map_as_none(const TnFieldInfo *fi, TnAny *v) {
  if ((fi->desc.flags & TN_FIELD_OPTIONAL) &&
      (v->type_index == TN_TYPE_MAP || v->type_index == TN_TYPE_DICT) &&
      tn_map_size(v->v_obj) == 0)
    *v = tn_any_none();
}

static int32_t norm_type(const TnAny *a) {
  switch (a->type_index) {
    case TN_TYPE_RAW_STR:
    case TN_TYPE_SMALL_STR:
      return TN_TYPE_STRING;
    case TN_TYPE_RAW_BYTES:
    case TN_TYPE_SMALL_BYTES:
      return TN_TYPE_BYTES;
    default:
      return a->type_index;
  }
}

static bool plain_equal(const TnAny *l, const TnAny *r, int32_t t) {
  switch (t) {
    case TN_TYPE_NONE: return true;
    case TN_TYPE_FLOAT:
      return l->v_float64 == r->v_float64 ||
             (isnan(l->v_float64) && isnan(r->v_float64));
    case TN_TYPE_STRING:
    case TN_TYPE_BYTES: {
      const char *a, *b;
      size_t na, nb;
      tn__any_text(l, &a, &na);
      tn__any_text(r, &b, &nb);
      return na == nb && memcmp(a, b, na) == 0;
    }
    default:
      return l->v_int64 == r->v_int64;
  }
}

static int elem_cmp(const char *a, size_t n, void *ctx) {
  const char **b = ctx;
  int rc = memcmp(a, *b, n) != 0;
  *b += n;
  return rc;
}

static bool tensor_equal(const DLTensor *a, const DLTensor *b,
                         bool skip_content) {
  if (a->ndim != b->ndim || memcmp(&a->dtype, &b->dtype, sizeof a->dtype) ||
      a->device.device_type != b->device.device_type ||
      a->device.device_id != b->device.device_id)
    return false;
  int64_t n = 1;
  for (int32_t i = 0; i < a->ndim; i++) {
    if (a->shape[i] != b->shape[i]) return false;
    n *= a->shape[i];
  }
  if (skip_content) return true;
  if (a->device.device_type != kDLCPU) return a == b;
  size_t bytes = (size_t)n * (((size_t)a->dtype.bits * a->dtype.lanes + 7) / 8);
  char *tmp = g_malloc(bytes ? bytes : 1);
  tn__tensor_copy_compact(b, tmp);
  const char *cursor = tmp;
  bool eq = tn__tensor_walk(a, elem_cmp, &cursor) == 0;
  g_free(tmp);
  return eq;
}

/* ======================================================================== */
/* Cycles                                                                    */
/* ======================================================================== */

/*
 * Brent's cycle finding on the walk's stack. Marking every object on the
 * current path would cost a table insert and removal per object; instead
 * the walk remembers the object of one frame (the lhs, for equality) and
 * compares each new frame's with it. The remembered frame moves to the top
 * of the stack when the stack has grown `span` past it, and `span` doubles,
 * so this costs a comparison per frame. A walk that never ends descends
 * through a sequence of frames that is eventually periodic (the graphs are
 * finite, and the memo tables stop changing), so the remembered object
 * comes round again within one `span` once `span` exceeds the period. Only
 * then is the stack searched for its first repeat (on either side), which
 * names the path in the error.
 */
typedef struct {
  const TnObject *obj; /* the remembered frame's object */
  int64_t at, next, span;
} Watch;

#define WATCH_INIT {NULL, -1, 0, 1}

/* Returns true when the frame about to go at `depth` repeats the remembered
 * one, which `on_stack` says is still on the stack (it may have been popped
 * since: then the remembered frame becomes this one); otherwise moves the
 * remembered frame up if it is time. */
static bool watch_step(Watch *w, int64_t depth, const TnObject *o,
                       bool on_stack) {
  if (o == w->obj) {
    if (on_stack) return true;
  } else if (depth >= w->next) {
    w->next = depth + w->span;
    w->span *= 2;
  } else {
    return false;
  }
  w->obj = o;
  w->at = depth;
  return false;
}

/* The walks keep their stacks in plain arrays, pushed and popped inline
 * (GArray's calls cost more per frame than the rest of the walk's work).
 * One comparison per push, of the length against `limit` (the capacity, or
 * the depth where the watch moves if that comes first), sends the push to
 * the slow side, which grows the array and moves the watch. */
#define STACK_FIRST_CAP 64

/* The first of `n` objects that is an earlier one (`*earlier`), or -1. */
static int64_t first_repeat(const TnObject *const *objs, int64_t n,
                            int64_t *earlier) {
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  int64_t at = -1;
  for (int64_t i = 0; i < n && at < 0; i++) {
    gpointer e;
    if (g_hash_table_lookup_extended(seen, objs[i], NULL, &e)) {
      at = i;
      *earlier = (int64_t)(intptr_t)e;
    } else {
      g_hash_table_insert(seen, (gpointer)objs[i], (gpointer)(intptr_t)i);
    }
  }
  g_hash_table_destroy(seen);
  return at;
}

static int raise_cycle(const char *who, const char *what, const char *path,
                       const TnObject *o, const char *earlier) {
  return tn_error_raise_in(TN_ERR_VALUE, who,
                           "%s contains itself at %s (the %s at %s)", what,
                           path, tn_object_type_key(o), earlier);
}

/* ======================================================================== */
/* Equality                                                                  */
/* ======================================================================== */

typedef struct {
  TnAny l, r; /* borrowed */
  int32_t def;
  CKind ckind;
  const TnNodeInfo *node;
  int64_t next, count;
  Via via;
} EqFrame;

typedef struct {
  bool map_free_vars;
  GHashTable *lmap, *rmap; /* matched variables and DAG nodes */
  GHashTable *memo;        /* shared tree nodes proven equal: lhs -> rhs */
  int64_t nvars;           /* variables bound so far */
  EqFrame *stack;
  int64_t len, cap, limit;
  Watch watch;
  bool steps; /* the mismatch path as steps (tn_structural_mismatch) */
  bool skip_tensor_content;
} EqCtx;

enum { ERR = -1, NE = 0, EQ = 1, PUSHED = 2 };

static GHashTable *table(GHashTable **t) {
  if (*t == NULL) *t = g_hash_table_new(g_direct_hash, g_direct_equal);
  return *t;
}

static int eq_cycle(EqCtx *c, const TnAny *l, const TnAny *r, const Via *via);

/* The slow side of a push: ERR when (l, r) makes a cycle (raised), else
 * room is made for it. */
static __attribute__((noinline)) int eq_room(EqCtx *c, const TnAny *l,
                                             const TnAny *r, const Via *via) {
  const Watch *w = &c->watch;
  bool on_stack = w->at >= 0 && w->at < c->len &&
                  c->stack[w->at].l.v_obj == l->v_obj;
  if (watch_step(&c->watch, c->len, l->v_obj, on_stack))
    return eq_cycle(c, l, r, via);
  if (c->len == c->cap) {
    c->cap = c->cap ? 2 * c->cap : STACK_FIRST_CAP;
    c->stack = g_renew(EqFrame, c->stack, c->cap);
  }
  c->limit = MIN(c->cap, w->next);
  return PUSHED;
}

static inline int push_eq(EqCtx *c, const TnAny *l, const TnAny *r,
                          int32_t def, CKind k, const TnNodeInfo *node,
                          int64_t count, Via via) {
  if (TN_UNLIKELY(l->v_obj == c->watch.obj || c->len >= c->limit) &&
      eq_room(c, l, r, &via) == ERR)
    return ERR;
  c->stack[c->len++] = (EqFrame){*l, *r, def, k, node, 0, count, via};
  return PUSHED;
}

static int eq_start(EqCtx *c, const TnAny *l, const TnAny *r, int32_t def,
                    Via via) {
  int32_t tl = norm_type(l);
  if (tl != norm_type(r)) return NE;
  if (tl < TN_TYPE_STATIC_OBJECT_BEGIN || tl == TN_TYPE_STRING ||
      tl == TN_TYPE_BYTES)
    return plain_equal(l, r, tl) ? EQ : NE;
  TnObject *L = l->v_obj, *R = r->v_obj;
  const TnNodeInfo *n = tn__node_info(tl);
  int32_t kind = n ? n->kind : TN_NODE_TREE;
  if (n && (kind == TN_NODE_VAR || kind == TN_NODE_DAG)) {
    gpointer m;
    if (c->lmap && g_hash_table_lookup_extended(c->lmap, L, NULL, &m))
      return m == R ? EQ : NE;
    if (c->rmap && g_hash_table_contains(c->rmap, R)) return NE;
    if (kind == TN_NODE_VAR && !def && !c->map_free_vars)
      return L == R ? EQ : NE;
  }
  if (n && kind == TN_NODE_UNIQUE) return L == R ? EQ : NE;
  /* The same object on both sides is equal to itself, unless a renaming of
   * variables is in effect that might apply inside it. */
  if (L == R && c->nvars == 0 && !c->map_free_vars && kind != TN_NODE_VAR)
    return EQ;
  if (c->memo && (tn_object_strong_count(L) > 1) &&
      g_hash_table_lookup(c->memo, L) == R)
    return EQ;
  switch (tl) {
    case TN_TYPE_SHAPE: {
      const TnShapeObj *a = (const TnShapeObj *)L, *b = (const TnShapeObj *)R;
      return a->ndim == b->ndim &&
                     memcmp(a->data, b->data, sizeof(int64_t) * a->ndim) == 0
                 ? EQ
                 : NE;
    }
    case TN_TYPE_TENSOR:
      return tensor_equal(&((TnTensorObj *)L)->dl, &((TnTensorObj *)R)->dl,
                          c->skip_tensor_content)
                 ? EQ
                 : NE;
    case TN_TYPE_ARRAY:
    case TN_TYPE_LIST: {
      const TnArrayObj *a = (const TnArrayObj *)L, *b = (const TnArrayObj *)R;
      /* steps name the first missing item: compare the common part first
       * (eq_lengths reports the rest) */
      if (a->size != b->size && !c->steps) return NE;
      return push_eq(c, l, r, def, C_SEQ, NULL, MIN(a->size, b->size), via);
    }
    case TN_TYPE_MAP:
    case TN_TYPE_DICT: {
      const TnMapObj *a = (const TnMapObj *)L, *b = (const TnMapObj *)R;
      if (a->size != b->size && !c->steps) return NE;
      return push_eq(c, l, r, def, C_MAP, NULL, a->used, via);
    }
    default:
      if (n == NULL) return L == R ? EQ : NE; /* functions, errors, ... */
      return push_eq(c, l, r, def, C_NODE, n, n->nfields, via);
  }
}

static void eq_finish(EqCtx *c, const EqFrame *f) {
  TnObject *L = f->l.v_obj, *R = f->r.v_obj;
  int32_t kind = f->node ? f->node->kind : TN_NODE_TREE;
  if (kind == TN_NODE_VAR || kind == TN_NODE_DAG) {
    g_hash_table_insert(table(&c->lmap), L, R);
    g_hash_table_insert(table(&c->rmap), R, L);
    if (kind == TN_NODE_VAR) c->nvars++;
  } else if (tn_object_strong_count(L) > 1) {
    g_hash_table_insert(table(&c->memo), L, R);
  }
}

static void append_via(GString *out, const Via *v) {
  if (v->field) {
    g_string_append_printf(out, ".%s", v->field);
  } else if (v->index >= 0) {
    g_string_append_printf(out, "[%" G_GINT64_FORMAT "]", v->index);
  } else if (v->key) {
    g_string_append_c(out, '[');
    tn__any_repr(out, v->key);
    g_string_append_c(out, ']');
  }
}

/* The path to frame `depth`; `last` is how the frame at the stack's
 * length (not pushed yet) is reached. */
static GString *eq_path(EqCtx *c, int64_t depth, const Via *last) {
  GString *p = g_string_new("root");
  for (int64_t i = 1; i <= depth; i++)
    append_via(p, i < c->len ? &c->stack[i].via : last);
  return p;
}

/* One step as the tn.Array [lhs kind, rhs kind, key] (TN_ACCESS_*), NULL
 * raised. */
static TnObject *via_step(const Via *v) {
  TnAny kv[3];
  TnObject *name = NULL;
  int kind, absent;
  if (v->field) {
    name = tn_string_new(v->field, strlen(v->field));
    if (name == NULL) return NULL;
    kind = absent = TN_ACCESS_ATTR;
    kv[2] = tn_any_obj(name);
  } else if (v->index >= 0) {
    kind = TN_ACCESS_ARRAY_ITEM, absent = TN_ACCESS_ARRAY_ITEM_MISSING;
    kv[2] = tn_any_int(v->index);
  } else {
    kind = TN_ACCESS_MAP_ITEM, absent = TN_ACCESS_MAP_ITEM_MISSING;
    kv[2] = v->key ? *v->key : tn_any_none();
  }
  kv[0] = tn_any_int(v->missing == 2 ? absent : kind);
  kv[1] = tn_any_int(v->missing == 1 ? absent : kind);
  TnObject *step = tn_array_new(kv, 3);
  tn_object_release(name);
  return step;
}

static TnObject *mismatch_steps(EqCtx *c, const Via *last) {
  int64_t depth = c->len - (last ? 0 : 1);
  TnAny *items = g_new(TnAny, depth > 0 ? depth : 1);
  int64_t n = 0;
  TnObject *out = NULL;
  for (int64_t i = 1; i <= depth; i++) {
    TnObject *s = via_step(i < c->len ? &c->stack[i].via : last);
    if (s == NULL) goto done;
    items[n++] = tn_any_obj(s);
  }
  out = tn_array_new(items, n);
done:
  for (int64_t i = 0; i < n; i++) tn_object_release(items[i].v_obj);
  g_free(items);
  return out;
}

static TnObject *mismatch_path(EqCtx *c, const Via *last) {
  if (c->steps) return mismatch_steps(c, last);
  GString *p = eq_path(c, c->len - (last ? 0 : 1), last);
  TnObject *s = tn_string_new(p->str, p->len);
  g_string_free(p, TRUE);
  return s;
}

/* The pair (l, r) about to be pushed repeats a frame on the stack (its lhs
 * does): raise naming the first repeat there, on either side. */
static int eq_cycle(EqCtx *c, const TnAny *l, const TnAny *r, const Via *via) {
  int64_t n = c->len + 1, at[2], earlier[2] = {0, 0};
  const TnObject **objs = g_new(const TnObject *, n);
  for (int side = 0; side < 2; side++) {
    for (int64_t i = 0; i + 1 < n; i++) {
      const EqFrame *f = &c->stack[i];
      objs[i] = side ? f->r.v_obj : f->l.v_obj;
    }
    objs[n - 1] = side ? r->v_obj : l->v_obj;
    at[side] = first_repeat(objs, n, &earlier[side]);
  }
  g_free(objs);
  int side = at[1] >= 0 && at[1] < at[0]; /* at[0] >= 0: l repeats */
  GString *p = eq_path(c, at[side], via), *q = eq_path(c, earlier[side], via);
  const TnAny *o = at[side] + 1 < n
                       ? (side ? &c->stack[at[side]].r : &c->stack[at[side]].l)
                       : (side ? r : l);
  raise_cycle("tn_structural_equal", side ? "rhs" : "lhs", p->str, o->v_obj,
              q->str);
  g_string_free(p, TRUE);
  g_string_free(q, TRUE);
  return ERR;
}

/* The map value in `R` for a key of `L`, following matched objects. */
static const TnAny *map_partner(EqCtx *c, const TnObject *R, const TnAny *k) {
  if (tn_any_is_object(k) && c->lmap) {
    gpointer m;
    if (g_hash_table_lookup_extended(c->lmap, k->v_obj, NULL, &m)) {
      TnAny mk = tn_any_obj(m);
      return tn_map_find(R, &mk);
    }
  }
  return tn_map_find(R, k);
}

/* After the common part of two sequences or the lhs entries of two maps
 * matched: true when they still differ in length, with `*miss` the first
 * item one side lacks (the rhs side's key, for maps, is looked for in the
 * lhs as map_partner does the other way). */
static bool eq_lengths(EqCtx *c, const EqFrame *f, Via *miss) {
  const TnObject *L = f->l.v_obj, *R = f->r.v_obj;
  if (f->ckind == C_SEQ) {
    int64_t nl = ((const TnArrayObj *)L)->size, nr = ((const TnArrayObj *)R)->size;
    if (nl == nr) return false;
    miss->index = MIN(nl, nr);
    miss->missing = nl > nr ? 1 : 2;
    return true;
  }
  if (((const TnMapObj *)L)->size == ((const TnMapObj *)R)->size) return false;
  const TnMapObj *rm = (const TnMapObj *)R;
  for (int64_t i = 0; i < rm->used; i++) {
    const TnMapEntry *e = &rm->entries[i];
    if (e->key.type_index == TN__MAP_DELETED) continue;
    const TnAny *k = &e->key;
    TnAny mk;
    gpointer m;
    if (tn_any_is_object(k) && c->rmap &&
        g_hash_table_lookup_extended(c->rmap, k->v_obj, NULL, &m)) {
      mk = tn_any_obj(m);
      k = &mk;
    }
    if (tn_map_find(L, k) == NULL) {
      miss->key = &e->key;
      miss->missing = 2;
      return true;
    }
  }
  return true; /* (sizes differ, so some key is missing: not reached) */
}

static int eq_run(EqCtx *c, const TnAny *lhs, const TnAny *rhs,
                  TnObject **path) {
  Via root = {NULL, -1, NULL, 0};
  int rc = eq_start(c, lhs, rhs, 0, root);
  if (rc != PUSHED) {
    if (rc == NE && path) *path = mismatch_path(c, NULL);
    return rc;
  }
  while (c->len > 0) {
    EqFrame *f = &c->stack[c->len - 1];
    if (f->next >= f->count) {
      if (TN_UNLIKELY(c->steps) && f->ckind != C_NODE) {
        Via miss = {NULL, -1, NULL, 0};
        if (eq_lengths(c, f, &miss)) {
          if (path) *path = mismatch_path(c, &miss);
          return NE;
        }
      }
      eq_finish(c, f);
      c->len--;
      continue;
    }
    int64_t i = f->next++;
    TnAny cl, cr;
    int32_t cdef = f->def;
    Via via = {NULL, -1, NULL, 0};
    TnObject *L = f->l.v_obj, *R = f->r.v_obj;
    if (f->ckind == C_NODE) {
      const TnFieldInfo *fi = &f->node->fields[i];
      if (fi->desc.flags & TN_FIELD_NO_SEQ) continue;
      tn__field_view(L, fi, &cl);
      tn__field_view(R, fi, &cr);
      empty_map_as_none(fi, &cl);
      empty_map_as_none(fi, &cr);
      cdef = (fi->desc.flags & TN_FIELD_DEF) != 0;
      via.field = fi->desc.name;
    } else if (f->ckind == C_SEQ) {
      cl = ((const TnArrayObj *)L)->data[i];
      cr = ((const TnArrayObj *)R)->data[i];
      via.index = i;
    } else {
      const TnMapEntry *e = &((const TnMapObj *)L)->entries[i];
      if (e->key.type_index == TN__MAP_DELETED) continue;
      via.key = &e->key;
      const TnAny *other = map_partner(c, R, &e->key);
      if (other == NULL) {
        via.missing = 1;
        if (path) *path = mismatch_path(c, &via);
        return NE;
      }
      cl = e->value;
      cr = *other;
    }
    rc = eq_start(c, &cl, &cr, cdef, via);
    if (rc <= NE) {
      if (rc == NE && path) *path = mismatch_path(c, &via);
      return rc;
    }
  }
  return EQ;
}

TN_API int tn_structural_equal_path(const TnAny *lhs, const TnAny *rhs,
                                    int flags, TnObject **path) {
  if (lhs == NULL) return tn__raise_null("tn_structural_equal", "lhs");
  if (rhs == NULL) return tn__raise_null("tn_structural_equal", "rhs");
  if (tn__any_check(lhs, "tn_structural_equal") ||
      tn__any_check(rhs, "tn_structural_equal")) return -1;
  if (path) *path = NULL;
  EqCtx c = {(flags & TN_STRUCTURAL_MAP_FREE_VARS) != 0, NULL, NULL, NULL, 0,
             NULL, 0, 0, 0, WATCH_INIT, false,
             (flags & TN_STRUCTURAL_SKIP_TENSOR_CONTENT) != 0};
  int rc = eq_run(&c, lhs, rhs, path);
  g_free(c.stack);
  if (c.lmap) g_hash_table_destroy(c.lmap);
  if (c.rmap) g_hash_table_destroy(c.rmap);
  if (c.memo) g_hash_table_destroy(c.memo);
  return rc == ERR ? -1 : rc == EQ;
}

TN_API int tn_structural_equal(const TnAny *lhs, const TnAny *rhs,
                               int flags) {
  return tn_structural_equal_path(lhs, rhs, flags, NULL);
}

TN_API int tn_structural_mismatch(const TnAny *lhs, const TnAny *rhs,
                                  int flags, TnObject **steps) {
  if (lhs == NULL) return tn__raise_null("tn_structural_mismatch", "lhs");
  if (rhs == NULL) return tn__raise_null("tn_structural_mismatch", "rhs");
  if (steps == NULL) return tn__raise_null("tn_structural_mismatch", "steps");
  if (tn__any_check(lhs, "tn_structural_mismatch") ||
      tn__any_check(rhs, "tn_structural_mismatch")) return -1;
  *steps = NULL;
  EqCtx c = {(flags & TN_STRUCTURAL_MAP_FREE_VARS) != 0, NULL, NULL, NULL, 0,
             NULL, 0, 0, 0, WATCH_INIT, true,
             (flags & TN_STRUCTURAL_SKIP_TENSOR_CONTENT) != 0};
  int rc = eq_run(&c, lhs, rhs, steps);
  g_free(c.stack);
  if (c.lmap) g_hash_table_destroy(c.lmap);
  if (c.rmap) g_hash_table_destroy(c.rmap);
  if (c.memo) g_hash_table_destroy(c.memo);
  if (rc == NE && *steps == NULL) return -1; /* the steps could not be made */
  return rc == ERR ? -1 : rc == EQ;
}

/* ======================================================================== */
/* Hashing                                                                   */
/* ======================================================================== */

typedef struct {
  TnObject *obj;
  int32_t def;
  CKind ckind;
  const TnNodeInfo *node;
  int64_t next, count;
  uint64_t h;
  uint64_t key_h; /* C_MAP: hash of the key whose value is pending */
  bool memo;      /* remember this object's hash when done */
} HFrame;

typedef struct {
  bool map_free_vars;
  GHashTable *var_index; /* variable -> its definition order + 1 */
  int64_t nvars;
  GHashTable *memo; /* shared object -> hash */
  HFrame *stack;
  int64_t len, cap, limit;
  Watch watch;
  bool skip_tensor_content;
} HashCtx;

enum { H_ERR = -1, H_PUSHED = 0, H_DONE = 1 };

#define K_MUL UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t combine(uint64_t h, uint64_t v) {
  return tn__mix64(h ^ (v + K_MUL + (h << 6) + (h >> 2)));
}

static uint64_t plain_hash(const TnAny *a, int32_t t) {
  switch (t) {
    case TN_TYPE_NONE: return UINT64_C(0x51ed27);
    case TN_TYPE_FLOAT: {
      double d = a->v_float64;
      if (d == 0) d = 0; /* -0.0 */
      if (isnan(d)) return combine(TN_TYPE_FLOAT, 0x7ff8);
      uint64_t bits;
      memcpy(&bits, &d, 8);
      return combine(TN_TYPE_FLOAT, bits);
    }
    case TN_TYPE_STRING:
    case TN_TYPE_BYTES: {
      const char *d;
      size_t n;
      tn__any_text(a, &d, &n);
      return combine((uint64_t)t, tn__hash_bytes(d, n));
    }
    default:
      return combine((uint64_t)t, (uint64_t)a->v_int64);
  }
}

/* How the frame above `parent` was reached from it. */
static void h_append_via(GString *p, const HFrame *parent) {
  int64_t i = parent->next - 1;
  if (parent->ckind == C_NODE) {
    g_string_append_printf(p, ".%s", parent->node->fields[i].desc.name);
  } else if (parent->ckind == C_SEQ) {
    g_string_append_printf(p, "[%" G_GINT64_FORMAT "]", i);
  } else {
    g_string_append_c(p, '[');
    tn__any_repr(p, &((const TnMapObj *)parent->obj)->entries[i].key);
    g_string_append_c(p, ']');
  }
}

static GString *h_path(HashCtx *c, int64_t depth) {
  GString *p = g_string_new("root");
  for (int64_t i = 1; i <= depth; i++)
    h_append_via(p, &c->stack[i - 1]);
  return p;
}

/* `o`, about to be pushed, is on the stack: raise naming the first repeat
 * there. */
static void h_cycle(HashCtx *c, TnObject *o) {
  int64_t n = c->len + 1, earlier = 0;
  const TnObject **objs = g_new(const TnObject *, n);
  for (int64_t i = 0; i + 1 < n; i++) objs[i] = c->stack[i].obj;
  objs[n - 1] = o;
  int64_t at = first_repeat(objs, n, &earlier); /* >= 0: o repeats */
  GString *p = h_path(c, at), *q = h_path(c, earlier);
  raise_cycle("tn_structural_hash", "value", p->str, objs[at], q->str);
  g_string_free(p, TRUE);
  g_string_free(q, TRUE);
  g_free(objs);
}

/* The slow side of a push: true when `o` makes a cycle (raised), else
 * room is made for it. */
static __attribute__((noinline)) bool h_room(HashCtx *c, TnObject *o) {
  const Watch *w = &c->watch;
  bool on_stack = w->at >= 0 && w->at < c->len && c->stack[w->at].obj == o;
  if (watch_step(&c->watch, c->len, o, on_stack)) {
    h_cycle(c, o);
    return true;
  }
  if (c->len == c->cap) {
    c->cap = c->cap ? 2 * c->cap : STACK_FIRST_CAP;
    c->stack = g_renew(HFrame, c->stack, c->cap);
  }
  c->limit = MIN(c->cap, w->next);
  return false;
}

/* Hash a value: either at once (H_DONE, *out set) or by pushing a frame
 * whose result arrives later (H_PUSHED); H_ERR on a cycle. */
static int h_start(HashCtx *c, const TnAny *v, int32_t def, uint64_t *out) {
  int32_t t = norm_type(v);
  if (t < TN_TYPE_STATIC_OBJECT_BEGIN || t == TN_TYPE_STRING ||
      t == TN_TYPE_BYTES) {
    *out = plain_hash(v, t);
    return H_DONE;
  }
  TnObject *o = v->v_obj;
  const TnNodeInfo *n = tn__node_info(t);
  int32_t kind = n ? n->kind : TN_NODE_TREE;
  bool shared = tn_object_strong_count(o) > 1;
  uint64_t h0 = n ? n->key_hash : (uint64_t)t;
  if (n && kind == TN_NODE_VAR) {
    gpointer idx;
    if (c->var_index &&
        g_hash_table_lookup_extended(c->var_index, o, NULL, &idx)) {
      *out = combine(UINT64_C(0x7a7), (uint64_t)(uintptr_t)idx);
      return H_DONE;
    }
    if (!def && !c->map_free_vars) {
      *out = combine(UINT64_C(0xf4ee), (uint64_t)(uintptr_t)o);
      return H_DONE;
    }
    g_hash_table_insert(table(&c->var_index), o,
                        (gpointer)(uintptr_t)(++c->nvars));
    h0 = combine(UINT64_C(0x7a7), (uint64_t)c->nvars);
    shared = false; /* later sights hash by index, not by memo */
  } else if (shared && c->memo) {
    gpointer m;
    if (g_hash_table_lookup_extended(c->memo, o, NULL, &m)) {
      *out = (uint64_t)(uintptr_t)m;
      return H_DONE;
    }
  }
  HFrame f = {o, def, C_NODE, n, 0, 0, h0, 0, shared};
  switch (t) {
    case TN_TYPE_SHAPE: {
      const TnShapeObj *s = (const TnShapeObj *)o;
      uint64_t h = combine(t, (uint64_t)s->ndim);
      for (int64_t i = 0; i < s->ndim; i++) h = combine(h, (uint64_t)s->data[i]);
      *out = h;
      return H_DONE;
    }
    case TN_TYPE_TENSOR: {
      const DLTensor *dl = &((TnTensorObj *)o)->dl;
      uint64_t h = combine(t, (uint64_t)dl->ndim);
      uint32_t dt;
      memcpy(&dt, &dl->dtype, 4);
      h = combine(h, dt);
      int64_t n_el = 1;
      for (int32_t i = 0; i < dl->ndim; i++) {
        h = combine(h, (uint64_t)dl->shape[i]);
        n_el *= dl->shape[i];
      }
      if (c->skip_tensor_content) {
        /* metadata only, as equality compares it */
        h = combine(h, (uint64_t)dl->device.device_type);
        h = combine(h, (uint64_t)dl->device.device_id);
      } else if (dl->device.device_type == kDLCPU) {
        size_t bytes =
            (size_t)n_el * (((size_t)dl->dtype.bits * dl->dtype.lanes + 7) / 8);
        char *tmp = g_malloc(bytes ? bytes : 1);
        tn__tensor_copy_compact(dl, tmp);
        h = combine(h, tn__hash_bytes(tmp, bytes));
        g_free(tmp);
      } else {
        h = combine(h, (uint64_t)(uintptr_t)o);
      }
      *out = h;
      return H_DONE;
    }
    case TN_TYPE_ARRAY:
    case TN_TYPE_LIST:
      f.ckind = C_SEQ;
      f.count = ((const TnArrayObj *)o)->size;
      f.h = combine(TN_TYPE_ARRAY, (uint64_t)f.count);
      break;
    case TN_TYPE_MAP:
    case TN_TYPE_DICT:
      f.ckind = C_MAP;
      f.count = ((const TnMapObj *)o)->used;
      f.h = 0; /* entries are summed: order does not matter */
      break;
    default:
      if (n == NULL) {
        *out = combine((uint64_t)t, (uint64_t)(uintptr_t)o);
        return H_DONE;
      }
      f.count = n->nfields;
      break;
  }
  if (TN_UNLIKELY(o == c->watch.obj || c->len >= c->limit) && h_room(c, o))
    return H_ERR;
  c->stack[c->len++] = f;
  return H_PUSHED;
}

/* A child's hash arrives at its parent frame. */
static void h_absorb(HFrame *f, uint64_t child) {
  if (f->ckind == C_MAP) f->h += combine(f->key_h, child);
  else f->h = combine(f->h, child);
}

/* Map keys match as the map itself matches them (numbers by value, strings
 * by content), so they hash as it hashes them. */
static uint64_t key_hash(HashCtx *c, const TnAny *k) {
  int32_t t = norm_type(k);
  if (t < TN_TYPE_STATIC_OBJECT_BEGIN || t == TN_TYPE_STRING ||
      t == TN_TYPE_BYTES)
    return tn_any_hash(k);
  gpointer idx;
  if (c->var_index &&
      g_hash_table_lookup_extended(c->var_index, k->v_obj, NULL, &idx))
    return combine(UINT64_C(0x7a7), (uint64_t)(uintptr_t)idx);
  return combine(UINT64_C(0xf4ee), (uint64_t)(uintptr_t)k->v_obj);
}

static int h_run(HashCtx *c, const TnAny *root, uint64_t *result) {
  uint64_t out;
  int rc = h_start(c, root, 0, &out);
  if (rc == H_DONE) *result = out;
  if (rc != H_PUSHED) return rc;
  for (;;) {
    HFrame *f = &c->stack[c->len - 1];
    if (f->next >= f->count) {
      uint64_t h = f->ckind == C_MAP ? combine(TN_TYPE_MAP, f->h)
                                     : combine(f->h, (uint64_t)f->count);
      if (f->memo) g_hash_table_insert(table(&c->memo), f->obj, (gpointer)h);
      if (--c->len == 0) {
        *result = h;
        return H_DONE;
      }
      h_absorb(&c->stack[c->len - 1], h);
      continue;
    }
    int64_t i = f->next++;
    TnAny child;
    int32_t cdef = f->def;
    if (f->ckind == C_NODE) {
      const TnFieldInfo *fi = &f->node->fields[i];
      if (fi->desc.flags & TN_FIELD_NO_SEQ) continue;
      tn__field_view(f->obj, fi, &child);
      empty_map_as_none(fi, &child);
      cdef = (fi->desc.flags & TN_FIELD_DEF) != 0;
    } else if (f->ckind == C_SEQ) {
      child = ((const TnArrayObj *)f->obj)->data[i];
    } else {
      const TnMapEntry *e = &((const TnMapObj *)f->obj)->entries[i];
      if (e->key.type_index == TN__MAP_DELETED) continue;
      f->key_h = key_hash(c, &e->key);
      child = e->value;
    }
    rc = h_start(c, &child, cdef, &out);
    if (rc == H_DONE)
      h_absorb(&c->stack[c->len - 1], out);
    else if (rc == H_ERR)
      return H_ERR;
  }
}

TN_API int tn_structural_hash(const TnAny *value, int flags, uint64_t *out) {
  if (value == NULL) return tn__raise_null("tn_structural_hash", "value");
  if (out == NULL) return tn__raise_null("tn_structural_hash", "out");
  if (tn__any_check(value, "tn_structural_hash")) return -1;
  HashCtx c = {(flags & TN_STRUCTURAL_MAP_FREE_VARS) != 0, NULL, 0, NULL, NULL,
               0, 0, 0, WATCH_INIT,
               (flags & TN_STRUCTURAL_SKIP_TENSOR_CONTENT) != 0};
  int rc = h_run(&c, value, out);
  g_free(c.stack);
  if (c.var_index) g_hash_table_destroy(c.var_index);
  if (c.memo) g_hash_table_destroy(c.memo);
  return rc == H_ERR ? -1 : 0;
}
