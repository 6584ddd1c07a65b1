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
 */
#include "reflect/reflect_internal.h"

#include <math.h>

typedef enum { C_NODE, C_SEQ, C_MAP } CKind;

/* How a frame was reached from its parent, for the mismatch path. */
typedef struct {
  const char *field; /* ".field" */
  int64_t index;     /* "[index]", or -1 */
  const TnAny *key;  /* "[key]" (map entries), or NULL */
} Via;

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

static bool tensor_equal(const DLTensor *a, const DLTensor *b) {
  if (a->ndim != b->ndim || memcmp(&a->dtype, &b->dtype, sizeof a->dtype) ||
      a->device.device_type != b->device.device_type ||
      a->device.device_id != b->device.device_id)
    return false;
  int64_t n = 1;
  for (int32_t i = 0; i < a->ndim; i++) {
    if (a->shape[i] != b->shape[i]) return false;
    n *= a->shape[i];
  }
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
  GArray *stack;
} EqCtx;

enum { NE = 0, EQ = 1, PUSHED = 2 };

static GHashTable *table(GHashTable **t) {
  if (*t == NULL) *t = g_hash_table_new(g_direct_hash, g_direct_equal);
  return *t;
}

static void push_eq(EqCtx *c, const TnAny *l, const TnAny *r, int32_t def,
                    CKind k, const TnNodeInfo *node, int64_t count, Via via) {
  EqFrame f = {*l, *r, def, k, node, 0, count, via};
  g_array_append_val(c->stack, f);
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
      return tensor_equal(&((TnTensorObj *)L)->dl, &((TnTensorObj *)R)->dl)
                 ? EQ
                 : NE;
    case TN_TYPE_ARRAY:
    case TN_TYPE_LIST: {
      const TnArrayObj *a = (const TnArrayObj *)L, *b = (const TnArrayObj *)R;
      if (a->size != b->size) return NE;
      push_eq(c, l, r, def, C_SEQ, NULL, a->size, via);
      return PUSHED;
    }
    case TN_TYPE_MAP:
    case TN_TYPE_DICT: {
      const TnMapObj *a = (const TnMapObj *)L, *b = (const TnMapObj *)R;
      if (a->size != b->size) return NE;
      push_eq(c, l, r, def, C_MAP, NULL, a->used, via);
      return PUSHED;
    }
    default:
      if (n == NULL) return L == R ? EQ : NE; /* functions, errors, ... */
      push_eq(c, l, r, def, C_NODE, n, n->nfields, via);
      return PUSHED;
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

static TnObject *mismatch_path(EqCtx *c, const Via *last) {
  GString *p = g_string_new("root");
  for (guint i = 1; i < c->stack->len; i++)
    append_via(p, &g_array_index(c->stack, EqFrame, i).via);
  if (last) append_via(p, last);
  TnObject *s = tn_string_new(p->str, p->len);
  g_string_free(p, TRUE);
  return s;
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

static int eq_run(EqCtx *c, const TnAny *lhs, const TnAny *rhs,
                  TnObject **path) {
  Via root = {NULL, -1, NULL};
  int rc = eq_start(c, lhs, rhs, 0, root);
  if (rc != PUSHED) {
    if (rc == NE && path) *path = mismatch_path(c, NULL);
    return rc;
  }
  while (c->stack->len > 0) {
    EqFrame *f = &g_array_index(c->stack, EqFrame, c->stack->len - 1);
    if (f->next >= f->count) {
      eq_finish(c, f);
      g_array_set_size(c->stack, c->stack->len - 1);
      continue;
    }
    int64_t i = f->next++;
    TnAny cl, cr;
    int32_t cdef = f->def;
    Via via = {NULL, -1, NULL};
    TnObject *L = f->l.v_obj, *R = f->r.v_obj;
    if (f->ckind == C_NODE) {
      const TnFieldInfo *fi = &f->node->fields[i];
      if (fi->desc.flags & TN_FIELD_NO_SEQ) continue;
      tn__field_view(L, fi, &cl);
      tn__field_view(R, fi, &cr);
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
        if (path) *path = mismatch_path(c, &via);
        return NE;
      }
      cl = e->value;
      cr = *other;
    }
    rc = eq_start(c, &cl, &cr, cdef, via);
    if (rc == NE) {
      if (path) *path = mismatch_path(c, &via);
      return NE;
    }
  }
  return EQ;
}

TN_API int tn_structural_equal_path(const TnAny *lhs, const TnAny *rhs,
                                    int map_free_vars, TnObject **path) {
  if (lhs == NULL) return tn__raise_null("tn_structural_equal", "lhs");
  if (rhs == NULL) return tn__raise_null("tn_structural_equal", "rhs");
  if (path) *path = NULL;
  EqCtx c = {map_free_vars != 0, NULL, NULL, NULL, 0,
             g_array_new(FALSE, FALSE, sizeof(EqFrame))};
  int rc = eq_run(&c, lhs, rhs, path);
  g_array_free(c.stack, TRUE);
  if (c.lmap) g_hash_table_destroy(c.lmap);
  if (c.rmap) g_hash_table_destroy(c.rmap);
  if (c.memo) g_hash_table_destroy(c.memo);
  return rc == EQ;
}

TN_API int tn_structural_equal(const TnAny *lhs, const TnAny *rhs,
                               int map_free_vars) {
  return tn_structural_equal_path(lhs, rhs, map_free_vars, NULL);
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
  GArray *stack;
} HashCtx;

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


/* Hash a value: either at once (returns true, *out set) or by pushing a
 * frame whose result arrives later. */
static bool h_start(HashCtx *c, const TnAny *v, int32_t def, uint64_t *out) {
  int32_t t = norm_type(v);
  if (t < TN_TYPE_STATIC_OBJECT_BEGIN || t == TN_TYPE_STRING ||
      t == TN_TYPE_BYTES) {
    *out = plain_hash(v, t);
    return true;
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
      return true;
    }
    if (!def && !c->map_free_vars) {
      *out = combine(UINT64_C(0xf4ee), (uint64_t)(uintptr_t)o);
      return true;
    }
    g_hash_table_insert(table(&c->var_index), o,
                        (gpointer)(uintptr_t)(++c->nvars));
    h0 = combine(UINT64_C(0x7a7), (uint64_t)c->nvars);
    shared = false; /* later sights hash by index, not by memo */
  } else if (shared && c->memo) {
    gpointer m;
    if (g_hash_table_lookup_extended(c->memo, o, NULL, &m)) {
      *out = (uint64_t)(uintptr_t)m;
      return true;
    }
  }
  HFrame f = {o, def, C_NODE, n, 0, 0, h0, 0, shared};
  switch (t) {
    case TN_TYPE_SHAPE: {
      const TnShapeObj *s = (const TnShapeObj *)o;
      uint64_t h = combine(t, (uint64_t)s->ndim);
      for (int64_t i = 0; i < s->ndim; i++) h = combine(h, (uint64_t)s->data[i]);
      *out = h;
      return true;
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
      if (dl->device.device_type == kDLCPU) {
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
      return true;
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
        return true;
      }
      f.count = n->nfields;
      break;
  }
  g_array_append_val(c->stack, f);
  return false;
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

static uint64_t h_run(HashCtx *c, const TnAny *root) {
  uint64_t out;
  if (h_start(c, root, 0, &out)) return out;
  for (;;) {
    HFrame *f = &g_array_index(c->stack, HFrame, c->stack->len - 1);
    if (f->next >= f->count) {
      uint64_t h = f->ckind == C_MAP ? combine(TN_TYPE_MAP, f->h)
                                     : combine(f->h, (uint64_t)f->count);
      if (f->memo) g_hash_table_insert(table(&c->memo), f->obj, (gpointer)h);
      g_array_set_size(c->stack, c->stack->len - 1);
      if (c->stack->len == 0) return h;
      h_absorb(&g_array_index(c->stack, HFrame, c->stack->len - 1), h);
      continue;
    }
    int64_t i = f->next++;
    TnAny child;
    int32_t cdef = f->def;
    if (f->ckind == C_NODE) {
      const TnFieldInfo *fi = &f->node->fields[i];
      if (fi->desc.flags & TN_FIELD_NO_SEQ) continue;
      tn__field_view(f->obj, fi, &child);
      cdef = (fi->desc.flags & TN_FIELD_DEF) != 0;
    } else if (f->ckind == C_SEQ) {
      child = ((const TnArrayObj *)f->obj)->data[i];
    } else {
      const TnMapEntry *e = &((const TnMapObj *)f->obj)->entries[i];
      if (e->key.type_index == TN__MAP_DELETED) continue;
      f->key_h = key_hash(c, &e->key);
      child = e->value;
    }
    if (h_start(c, &child, cdef, &out))
      h_absorb(&g_array_index(c->stack, HFrame, c->stack->len - 1), out);
  }
}

TN_API int tn_structural_hash(const TnAny *value, int map_free_vars,
                              uint64_t *out) {
  if (value == NULL) return tn__raise_null("tn_structural_hash", "value");
  if (out == NULL) return tn__raise_null("tn_structural_hash", "out");
  HashCtx c = {map_free_vars != 0, NULL, 0, NULL,
               g_array_new(FALSE, FALSE, sizeof(HFrame))};
  *out = h_run(&c, value);
  g_array_free(c.stack, TRUE);
  if (c.var_index) g_hash_table_destroy(c.var_index);
  if (c.memo) g_hash_table_destroy(c.memo);
  return 0;
}
