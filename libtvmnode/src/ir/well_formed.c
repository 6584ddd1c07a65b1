/*
 * well_formed.c: the well-formedness check, and the local type check
 * InferType uses (tn__ir_saved_type_agrees).
 *
 * IR that comes from a file (JSON graphs, the text format, the importers)
 * or from a binding that sets fields directly is untrusted: its arrays may
 * hold the wrong kind of node, a call may have the wrong arity or attrs,
 * a variable may be used where it is not defined, and a saved checked_type
 * may lie about the tensor it describes. Everything downstream (passes, the
 * evaluator, the code generator) trusts these, so they are checked once,
 * here, in one walk that visits each node once.
 *
 * Types: the walk derives a type for every node it can, bottom-up, from
 * the derived types of its parts (a constant's tensor, a parameter's
 * annotation, the operator's inference), and every saved type must equal
 * it; a call whose arguments are typed must type even when nothing was
 * saved on it. InferType, which rebuilds as it goes, needs only the local
 * form: a node's saved type against its (already checked) children's.
 *
 * Scoping is checked through free-variable sets, computed bottom-up: a let
 * removes its variable from its body's set and must not find it in its
 * value's; a function removes its parameters; a top-level function must end
 * with an empty set. The sets are sorted pointer arrays, almost always of
 * one or two variables (a model's input).
 */
#include "ir/ir_internal.h"

#include <inttypes.h>

static const char *name_of(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "?";
}

static const char *op_name(const TnIrCall *c) {
  if (tn__ir_is(c->op, TN_IR->op)) return name_of(((TnIrOp *)c->op)->name);
  if (tn__ir_is(c->op, TN_IR->global_var))
    return name_of(((TnIrGlobalVar *)c->op)->name_hint);
  return "a function";
}

/* ------------------------------------------------------------------------ */
/* Local type agreement                                                      */
/* ------------------------------------------------------------------------ */

static TnObject *type_of(const TnObject *e) {
  return ((const TnIrExpr *)e)->checked_type;
}

static bool tensor_type_is(const TnObject *type, const DLTensor *t) {
  if (!tn__ir_is(type, TN_IR->tensor_type)) return false;
  const TnIrTensorType *tt = (const TnIrTensorType *)type;
  const TnShapeObj *s = (const TnShapeObj *)tt->shape;
  return tt->dtype.code == t->dtype.code && tt->dtype.bits == t->dtype.bits &&
         tt->dtype.lanes == t->dtype.lanes && s->ndim == t->ndim &&
         (t->ndim == 0 ||
          memcmp(s->data, t->shape, sizeof(int64_t) * (size_t)t->ndim) == 0);
}

/* The type a call of an operator gets from its arguments' types; NULL with
 * the inference error. (transfer full) */
static TnObject *infer_op_call(const TnIrCall *c) {
  int64_t n = tn_array_size(c->args);
  TnObject *stack[16];
  TnObject **ts = n <= 16 ? stack : g_new(TnObject *, n);
  for (int64_t i = 0; i < n; i++) ts[i] = type_of(tn_array_at(c->args, i)->v_obj);
  bool handled = false;
  TnObject *out = tn__ir_infer_direct(c->op, ts, (int32_t)n, c->attrs, &handled);
  if (!handled) {
    TnObject *arr = tn__ir_array(ts, (int32_t)n);
    out = arr ? tn__ir_infer_call(c->op, arr, c->attrs) : NULL;
    tn_object_release(arr);
  }
  if (ts != stack) g_free(ts);
  return out;
}

static bool func_type_fits(const TnObject *ft, const TnObject *args,
                           const TnObject *ret) {
  if (!tn__ir_is(ft, TN_IR->func_type)) return false;
  const TnIrFuncType *f = (const TnIrFuncType *)ft;
  int64_t n = tn_array_size(args);
  if (n != tn_array_size(f->arg_types) || !tn__ir_type_equal(f->ret_type, ret))
    return false;
  for (int64_t i = 0; i < n; i++)
    if (!tn__ir_type_equal(tn_array_at(f->arg_types, i)->v_obj,
                           type_of(tn_array_at(args, i)->v_obj)))
      return false;
  return true;
}

/* Whether the expressions in a tn.Array all have types. */
static bool all_typed(const TnObject *arr) {
  for (int64_t i = 0; i < tn_array_size(arr); i++)
    if (type_of(tn_array_at(arr, i)->v_obj) == NULL) return false;
  return true;
}

/*
 * Whether the saved type of `e` is the one its parts give it: 1 if so (or
 * it has none), 0 if not (with `*why` a static description), -1 when the
 * parts cannot be typed together at all (the inference error raised).
 * Calls of global functions are checked by the caller, who has the module.
 */
int tn__ir_saved_type_agrees(TnObject *e, const char **why) {
  const TnIrTypes *T = TN_IR;
  TnObject *saved = type_of(e);
  int32_t t = e->type_index;
  *why = "it differs from the inferred type";
  if (t == T->var) {
    const TnIrVar *v = (const TnIrVar *)e;
    if (v->type_annotation == NULL) return 1; /* checked where it is bound */
    *why = "it differs from the variable's annotation";
    return tn__ir_type_equal(saved, v->type_annotation);
  }
  if (saved == NULL) return 1;
  if (t == T->constant) {
    *why = "it does not describe the constant's tensor";
    const DLTensor *dl = tn_tensor_dltensor(((TnIrConstant *)e)->data);
    return dl && tensor_type_is(saved, dl);
  }
  if (t == T->call) {
    TnIrCall *c = (TnIrCall *)e;
    if (!all_typed(c->args)) {
      *why = "an argument has no type";
      return 0;
    }
    if (tn__ir_is(c->op, T->op)) {
      TnObject *want = infer_op_call(c);
      if (want == NULL) return -1;
      bool ok = tn__ir_type_equal(saved, want);
      tn_object_release(want);
      return ok;
    }
    if (tn__ir_is(c->op, T->function)) {
      *why = "it does not fit the called function's type";
      return func_type_fits(type_of(c->op), c->args, saved);
    }
    return 1; /* a global function: see well_formed_call */
  }
  if (t == T->tuple) {
    TnObject *fields = ((TnIrTuple *)e)->fields;
    if (!tn__ir_is(saved, T->tuple_type)) return 0;
    TnObject *tf = ((TnIrTupleType *)saved)->fields;
    int64_t n = tn_array_size(fields);
    if (n != tn_array_size(tf)) return 0;
    for (int64_t i = 0; i < n; i++)
      if (!tn__ir_type_equal(tn_array_at(tf, i)->v_obj,
                             type_of(tn_array_at(fields, i)->v_obj)))
        return 0;
    return 1;
  }
  if (t == T->tuple_get_item) {
    const TnIrTupleGetItem *g = (const TnIrTupleGetItem *)e;
    TnObject *tt = type_of(g->tuple);
    if (!tn__ir_is(tt, T->tuple_type)) {
      *why = "the indexed value has no tuple type";
      return 0;
    }
    TnObject *tf = ((TnIrTupleType *)tt)->fields;
    if (g->index < 0 || g->index >= tn_array_size(tf)) {
      *why = "the index is out of range";
      return 0;
    }
    return tn__ir_type_equal(saved, tn_array_at(tf, g->index)->v_obj);
  }
  if (t == T->let) {
    const TnIrLet *l = (const TnIrLet *)e;
    return tn__ir_type_equal(saved, type_of(l->body));
  }
  if (t == T->function) {
    const TnIrFunction *f = (const TnIrFunction *)e;
    TnObject *ret = f->ret_type ? f->ret_type : type_of(f->body);
    if (f->ret_type && type_of(f->body) &&
        !tn__ir_type_equal(f->ret_type, type_of(f->body))) {
      *why = "the body's type differs from the declared return type";
      return 0;
    }
    *why = "it does not match the parameters and the body";
    return func_type_fits(saved, f->params, ret);
  }
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Free-variable sets                                                        */
/* ------------------------------------------------------------------------ */

/* A sorted set of pointers; NULL is the empty set. */
typedef GPtrArray VarSet;

static gint cmp_ptr(gconstpointer a, gconstpointer b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

static bool set_has(const VarSet *s, const void *v) {
  if (s == NULL) return false;
  guint lo = 0, hi = s->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    uintptr_t m = (uintptr_t)g_ptr_array_index(s, mid);
    if (m == (uintptr_t)v) return true;
    if (m < (uintptr_t)v) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/* acc ∪ s, leaving out the variables in `minus` (sorted afterwards). */
static VarSet *set_add(VarSet *acc, const VarSet *s, const VarSet *minus) {
  if (s == NULL) return acc;
  for (guint i = 0; i < s->len; i++) {
    void *v = g_ptr_array_index(s, i);
    if (set_has(minus, v) || set_has(acc, v)) continue;
    if (acc == NULL) acc = g_ptr_array_new();
    g_ptr_array_add(acc, v);
    g_ptr_array_sort(acc, cmp_ptr);
  }
  return acc;
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
  TnObject *site; /* the let or function that binds a variable */
  const char *fn; /* in which module function (NULL: a lone expression) */
} Binder;

typedef struct {
  const TnIrModule *mod; /* NULL when checking a lone expression */
  const char *fn;        /* the function being checked, for messages */
  GHashTable *free;      /* expr -> VarSet* (absent: empty) */
  GHashTable *binders;   /* var -> Binder: where it is bound */
  GHashTable *singles;   /* var -> VarSet* {var} */
  GHashTable *derived;   /* expr -> the type inference gives it (owned) */
  GHashTable *let_of;    /* let-bound var -> its let */
} Check;

static int fail(const Check *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int fail(const Check *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (c->fn) tn_error_raise_in(TN_ERR_VALUE, "tn_ir_well_formed", "@%s: %s",
                               c->fn, why);
  else tn_error_raise_in(TN_ERR_VALUE, "tn_ir_well_formed", "%s", why);
  g_free(why);
  return -1;
}

static const char *what(const TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  return t == T->call ? "call" : t == T->var ? "variable" : t == T->constant
       ? "constant" : t == T->tuple ? "tuple" : t == T->tuple_get_item
       ? "tuple index" : t == T->let ? "let" : t == T->function ? "function"
       : t == T->global_var ? "global function" : tn_object_type_key(e);
}

static const VarSet *free_of(Check *c, TnObject *e) {
  if (e->type_index == TN_IR->var) {
    VarSet *s = g_hash_table_lookup(c->singles, e);
    if (s == NULL) {
      s = g_ptr_array_new();
      g_ptr_array_add(s, e);
      g_hash_table_insert(c->singles, e, s);
    }
    return s;
  }
  return g_hash_table_lookup(c->free, e);
}

static int bind(Check *c, TnObject *var, TnObject *site) {
  if (!tn__ir_is(var, TN_IR->var))
    return fail(c, "a %s binds a %s, not an ir.Var", what(site),
                tn_object_type_key(var));
  Binder *prev = g_hash_table_lookup(c->binders, var);
  if (prev && prev->fn != c->fn)
    /* one function's code reached from another (a module function used
     * as a nested one, two names for one function): the text gives each
     * place its own copy, so it could not be read back as one */
    return fail(c, "%%%s is bound in @%s too: a %s is shared between "
                "module functions; give each its own copy or call it by "
                "name", name_of(((TnIrVar *)var)->name_hint),
                prev->fn ? prev->fn : "?", what(site));
  if (prev)
    return fail(c, "%%%s is bound twice (by a %s and a %s)",
                name_of(((TnIrVar *)var)->name_hint), what(prev->site),
                what(site));
  Binder *b = g_new(Binder, 1);
  b->site = site;
  b->fn = c->fn;
  g_hash_table_insert(c->binders, var, b);
  return 0;
}

static int check_type_node(Check *c, const TnObject *type, const char *where);

/* A type that can be trusted by shape arithmetic: dims >= 0. */
static int check_type_node(Check *c, const TnObject *type, const char *where) {
  const TnIrTypes *T = TN_IR;
  if (type == NULL) return 0;
  if (tn__ir_is(type, T->tensor_type)) {
    const TnIrTensorType *tt = (const TnIrTensorType *)type;
    const TnShapeObj *s = (const TnShapeObj *)tt->shape;
    if (s == NULL) return fail(c, "%s: a tensor type has no shape", where);
    for (int64_t i = 0; i < s->ndim; i++)
      if (s->data[i] < 0)
        return fail(c, "%s: dimension %" PRId64 " of a tensor type is %" PRId64,
                    where, i, s->data[i]);
    if (tt->dtype.lanes == 0 || tt->dtype.bits == 0 ||
        !tn__dtype_valid(tt->dtype))
      return fail(c, "%s: a tensor type's dtype (code %u, %u bits, %u lanes) "
                  "is not a data type", where, tt->dtype.code, tt->dtype.bits,
                  tt->dtype.lanes);
    return 0;
  }
  if (tn__ir_is(type, T->tuple_type)) {
    const TnObject *f = ((const TnIrTupleType *)type)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      if (check_type_node(c, tn_array_at(f, i)->v_obj, where)) return -1;
    return 0;
  }
  if (tn__ir_is(type, T->func_type)) {
    const TnIrFuncType *f = (const TnIrFuncType *)type;
    for (int64_t i = 0; i < tn_array_size(f->arg_types); i++)
      if (check_type_node(c, tn_array_at(f->arg_types, i)->v_obj, where))
        return -1;
    return check_type_node(c, f->ret_type, where);
  }
  return 0;
}

static int check_call(Check *c, TnIrCall *k) {
  const TnIrTypes *T = TN_IR;
  int64_t nargs = tn_array_size(k->args);
  if (tn__ir_is(k->op, T->op)) {
    TnIrOp *o = (TnIrOp *)k->op;
    const char *name = name_of(o->name);
    TnObject *reg = tn_ir_op_find(name);
    tn_object_release(reg);
    if (reg != k->op)
      return fail(c, "a call of operator '%s', which is not registered", name);
    if (o->num_inputs >= 0 && nargs != o->num_inputs)
      return fail(c, "%s takes %" PRId64 " argument%s, the call has %" PRId64,
                  name, o->num_inputs, o->num_inputs == 1 ? "" : "s", nargs);
    if (o->attrs_index >= 0 &&
        (k->attrs == NULL || !tn_object_is_instance(k->attrs, o->attrs_index)))
      return fail(c, "%s needs attrs of type %s, the call has %s", name,
                  tn__type_key_or(o->attrs_index, "?"),
                  k->attrs ? tn_object_type_key(k->attrs) : "none");
    if (o->attrs_type == NULL && k->attrs)
      return fail(c, "%s takes no attributes, the call has a %s", name,
                  tn_object_type_key(k->attrs));
    return 0;
  }
  if (k->attrs)
    return fail(c, "a call of %s has attrs; only operator calls take them",
                op_name(k));
  if (tn__ir_is(k->op, T->function)) {
    int64_t np = tn_array_size(((TnIrFunction *)k->op)->params);
    if (np != nargs)
      return fail(c, "a call of a function of %" PRId64 " parameters has %"
                  PRId64 " arguments", np, nargs);
    return 0;
  }
  if (tn__ir_is(k->op, T->global_var)) {
    const char *callee = op_name(k);
    if (c->mod == NULL) return 0; /* a lone expression: nothing to look up */
    TnAny key = tn_any_cstr(callee);
    const TnAny *f = tn_map_find(c->mod->functions, &key);
    if (f == NULL)
      return fail(c, "a call of @%s, which the module does not have", callee);
    const TnIrFunction *fn = (const TnIrFunction *)f->v_obj;
    if (tn_array_size(fn->params) != nargs)
      return fail(c, "@%s takes %" PRId64 " arguments, the call has %" PRId64,
                  callee, tn_array_size(fn->params), nargs);
    TnObject *saved = type_of((TnObject *)k);
    if (saved && !func_type_fits(fn->base.checked_type, k->args, saved))
      return fail(c, "the saved type of a call of @%s does not fit @%s's "
                  "type", callee, callee);
    return 0;
  }
  return fail(c, "a call's callee is a %s, not an ir.Op, ir.GlobalVar or "
              "ir.Function", tn_object_type_key(k->op));
}

/* Operators are only ever called: one used as a value (a tuple field, an
 * argument) has no value to print or compute. */
static int value_child(Check *c, const TnObject *child, const TnObject *parent) {
  if (!tn__ir_is(child, TN_IR->op)) return 0;
  return fail(c, "operator %s is used as a value in a %s; operators can "
              "only be called", name_of(((const TnIrOp *)child)->name),
              what(parent));
}

/* Attribute values are plain data: numbers, strings, dtypes, devices and
 * arrays, maps and shapes of them. An IR node or a tensor inside one would
 * escape every check and every pass. */
static int plain_value(Check *c, const TnAny *v, const char *where, int depth) {
  if (!tn_any_is_object(v)) return 0;
  int32_t t = v->type_index;
  if (t == TN_TYPE_STRING || t == TN_TYPE_BYTES || t == TN_TYPE_SHAPE) return 0;
  if (depth > 32)
    return fail(c, "%s: an attribute value nests deeper than 32 levels", where);
  if (t == TN_TYPE_ARRAY) {
    for (int64_t i = 0; i < tn_array_size(v->v_obj); i++)
      if (plain_value(c, tn_array_at(v->v_obj, i), where, depth + 1)) return -1;
    return 0;
  }
  if (t == TN_TYPE_MAP) {
    const TnAny *k, *x;
    for (int64_t p = tn_map_next(v->v_obj, 0, &k, &x); p >= 0;
         p = tn_map_next(v->v_obj, p + 1, &k, &x))
      if (plain_value(c, k, where, depth + 1) ||
          plain_value(c, x, where, depth + 1))
        return -1;
    return 0;
  }
  return fail(c, "%s: an attribute value holds a %s; attributes are plain "
              "data (numbers, strings, dtypes, arrays and maps of them)",
              where, tn_any_type_key(v));
}

static int plain_map(Check *c, const TnObject *map, const char *where) {
  if (map == NULL) return 0;
  TnAny m = tn_any_obj((TnObject *)map);
  return plain_value(c, &m, where, 0);
}

static int plain_attrs(Check *c, const TnIrCall *k) {
  if (k->attrs == NULL) return 0;
  int32_t n = tn_type_field_count(k->attrs->type_index);
  char where[160];
  for (int32_t i = 0; i < n; i++) {
    TnAny v;
    if (tn_node_get_at(k->attrs, i, &v)) return -1;
    snprintf(where, sizeof where, "%s attribute '%s'", op_name(k),
             tn_type_field_at(k->attrs->type_index, i)->name);
    int rc = plain_value(c, &v, where, 0);
    tn_any_clear(&v);
    if (rc) return -1;
  }
  return 0;
}

static TnObject *derived(Check *c, const TnObject *e) {
  return g_hash_table_lookup(c->derived, e);
}

/* All the derived types of an array of expressions, or false. */
static bool derived_all(Check *c, const TnObject *arr, TnObject **out) {
  for (int64_t i = 0; i < tn_array_size(arr); i++)
    if ((out[i] = derived(c, tn_array_at(arr, i)->v_obj)) == NULL) return false;
  return true;
}

static TnObject *node_with(int32_t type, size_t offset, TnObject *arr) {
  TnObject *t = arr ? tn_node_alloc(type) : NULL;
  if (t) memcpy((char *)t + offset, &arr, sizeof arr);
  else tn_object_release(arr);
  return t;
}

/* A call's type from its callee and its arguments' derived types: NULL
 * and no error when something is unknown, NULL with the error when they
 * do not type. (transfer full) */
static TnObject *derive_call(Check *c, const TnIrCall *k, TnObject **ts,
                             int64_t n) {
  const TnIrTypes *T = TN_IR;
  if (!derived_all(c, k->args, ts)) return NULL;
  if (tn__ir_is(k->op, T->op)) {
    bool handled = false;
    TnObject *out = tn__ir_infer_direct(k->op, ts, (int32_t)n, k->attrs,
                                        &handled);
    if (!handled) {
      TnObject *arr = tn__ir_array(ts, (int32_t)n);
      out = arr ? tn__ir_infer_call(k->op, arr, k->attrs) : NULL;
      tn_object_release(arr);
    }
    return out;
  }
  const TnObject *ft = NULL;
  if (tn__ir_is(k->op, T->function)) {
    ft = derived(c, k->op);
  } else if (c->mod) { /* a global function: its (checked) saved type */
    TnAny key = tn_any_cstr(op_name(k));
    const TnAny *f = tn_map_find(c->mod->functions, &key);
    ft = f ? type_of(f->v_obj) : NULL;
  } else { /* a lone expression: nothing to check a global call against */
    TnObject *saved = type_of((const TnObject *)k);
    tn_object_retain(saved);
    return saved;
  }
  if (!tn__ir_is(ft, T->func_type)) return NULL;
  const TnIrFuncType *f = (const TnIrFuncType *)ft;
  if (tn_array_size(f->arg_types) != n) return NULL; /* arity: check_call */
  for (int64_t i = 0; i < n; i++)
    if (!tn__ir_type_equal(tn_array_at(f->arg_types, i)->v_obj, ts[i])) {
      tn__ir_type_mismatch(op_name(k), (int32_t)i,
                           tn_array_at(f->arg_types, i)->v_obj, ts[i]);
      return NULL;
    }
  tn_object_retain(f->ret_type);
  return f->ret_type;
}

/* The type inference gives `e`, from its parts' derived types: NULL with
 * no error when it depends on something untyped, NULL with the error when
 * the parts do not type. (transfer full) */
static TnObject *derive(Check *c, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->var) {
    TnObject *ann = ((TnIrVar *)e)->type_annotation;
    TnIrLet *l = ann ? NULL : g_hash_table_lookup(c->let_of, e);
    TnObject *r = ann ? ann : l ? derived(c, l->value) : NULL;
    tn_object_retain(r);
    return r;
  }
  if (t == T->constant) return tn__ir_type_of_tensor(((TnIrConstant *)e)->data);
  if (t == T->call) {
    TnIrCall *k = (TnIrCall *)e;
    int64_t n = tn_array_size(k->args);
    TnObject *stack[16];
    TnObject **ts = n <= 16 ? stack : g_new(TnObject *, n);
    TnObject *r = derive_call(c, k, ts, n);
    if (ts != stack) g_free(ts);
    return r;
  }
  if (t == T->tuple) {
    TnObject *f = ((TnIrTuple *)e)->fields;
    int64_t n = tn_array_size(f);
    TnObject *stack[16];
    TnObject **ts = n <= 16 ? stack : g_new(TnObject *, n);
    TnObject *r = NULL;
    if (derived_all(c, f, ts))
      r = node_with(T->tuple_type, offsetof(TnIrTupleType, fields),
                    tn__ir_array(ts, (int32_t)n));
    if (ts != stack) g_free(ts);
    return r;
  }
  if (t == T->tuple_get_item) {
    const TnIrTupleGetItem *g = (const TnIrTupleGetItem *)e;
    TnObject *tt = derived(c, g->tuple);
    if (tt == NULL) return NULL;
    if (!tn__ir_is(tt, T->tuple_type) ||
        g->index >= tn_array_size(((TnIrTupleType *)tt)->fields)) {
      tn_error_raise_in(TN_ERR_TYPE, NULL, "item %" PRId64 " of a value of "
                        "type %s", g->index, tn_object_type_key(tt));
      return NULL;
    }
    TnObject *r = tn_array_at(((TnIrTupleType *)tt)->fields, g->index)->v_obj;
    tn_object_retain(r);
    return r;
  }
  if (t == T->let) {
    const TnIrLet *l = (const TnIrLet *)e;
    TnObject *ann = ((TnIrVar *)l->var)->type_annotation;
    TnObject *vt = derived(c, l->value);
    if (ann && vt && !tn__ir_type_equal(ann, vt)) {
      tn__ir_type_mismatch("let", -1, ann, vt);
      return NULL;
    }
    TnObject *r = derived(c, l->body);
    tn_object_retain(r);
    return r;
  }
  if (t == T->function) {
    const TnIrFunction *f = (const TnIrFunction *)e;
    TnObject *bt = derived(c, f->body);
    if (f->ret_type && bt && !tn__ir_type_equal(f->ret_type, bt)) {
      tn__ir_type_mismatch("function body", -1, f->ret_type, bt);
      return NULL;
    }
    TnObject *rt = f->ret_type ? f->ret_type : bt;
    int64_t n = tn_array_size(f->params);
    TnObject *stack[16];
    TnObject **ts = n <= 16 ? stack : g_new(TnObject *, n);
    TnObject *r = NULL;
    if (rt && derived_all(c, f->params, ts)) {
      r = node_with(T->func_type, offsetof(TnIrFuncType, arg_types),
                    tn__ir_array(ts, (int32_t)n));
      if (r) {
        tn_object_retain(rt);
        ((TnIrFuncType *)r)->ret_type = rt;
      }
    }
    if (ts != stack) g_free(ts);
    return r;
  }
  return NULL; /* operators and global variables: typed by their calls */
}

static int note_let(void *vctx, TnObject *e) {
  Check *c = vctx;
  if (tn_object_is_instance(e, TN_IR->let))
    g_hash_table_insert(c->let_of, ((TnIrLet *)e)->var, e);
  return 0;
}

static const char *of_what(const TnObject *e, char *buf, size_t n) {
  if (e->type_index == TN_IR->call)
    snprintf(buf, n, "a call of %s", op_name((const TnIrCall *)e));
  else if (e->type_index == TN_IR->var)
    snprintf(buf, n, "%%%s", name_of(((const TnIrVar *)e)->name_hint));
  else
    snprintf(buf, n, "a %s", what(e));
  return buf;
}

/* Derive `e`'s type and hold its saved type to it. */
static int check_types(Check *c, TnObject *e) {
  char buf[160];
  TnObject *want = derive(c, e);
  if (want == NULL && tn_error_peek_raised()) {
    TnObject *cause = tn_error_take_raised();
    fail(c, "%s does not type: %s", of_what(e, buf, sizeof buf),
         cause ? tn_error_message(cause) : "?");
    tn_object_release(cause);
    return -1;
  }
  TnObject *saved = type_of(e);
  int rc = 0;
  if (saved && e->type_index != TN_IR->op &&
      e->type_index != TN_IR->global_var &&
      (want == NULL || !tn__ir_type_equal(saved, want))) {
    GString *s = g_string_new(NULL), *w = g_string_new(NULL);
    tn__ir_print_type(s, saved);
    tn__ir_print_type(w, want);
    rc = fail(c, "the saved type %s of %s is wrong: %s%s", s->str,
              of_what(e, buf, sizeof buf),
              want ? "inference gives " : "its parts have no types",
              want ? w->str : "");
    g_string_free(s, TRUE);
    g_string_free(w, TRUE);
  }
  if (want) g_hash_table_insert(c->derived, e, want);
  return rc;
}

static int visit(void *vctx, TnObject *e) {
  Check *c = vctx;
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  VarSet *fv = NULL;
  if (t == T->call) {
    TnIrCall *k = (TnIrCall *)e;
    if (check_call(c, k) || plain_attrs(c, k)) return -1;
    for (int64_t i = 0; i < tn_array_size(k->args); i++)
      if (value_child(c, tn_array_at(k->args, i)->v_obj, e)) return -1;
    fv = set_add(fv, free_of(c, k->op), NULL);
    for (int64_t i = 0; i < tn_array_size(k->args); i++)
      fv = set_add(fv, free_of(c, tn_array_at(k->args, i)->v_obj), NULL);
  } else if (t == T->tuple) {
    TnObject *f = ((TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      if (value_child(c, tn_array_at(f, i)->v_obj, e)) return -1;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      fv = set_add(fv, free_of(c, tn_array_at(f, i)->v_obj), NULL);
  } else if (t == T->tuple_get_item) {
    TnIrTupleGetItem *g = (TnIrTupleGetItem *)e;
    if (g->index < 0)
      return fail(c, "a tuple index is negative (%" PRId64 ")", g->index);
    /* a global function, a function literal and a constant are never
     * tuples, typed or not (and "@f.0" would read back as the global
     * named "f.0") */
    if (tn__ir_is(g->tuple, T->global_var) || tn__ir_is(g->tuple, T->function) ||
        tn__ir_is(g->tuple, T->constant))
      return fail(c, "item %" PRId64 " of a %s, which is not a tuple",
                  g->index, what(g->tuple));
    if (value_child(c, g->tuple, e)) return -1;
    fv = set_add(fv, free_of(c, g->tuple), NULL);
  } else if (t == T->let) {
    TnIrLet *l = (TnIrLet *)e;
    if (bind(c, l->var, e) || value_child(c, l->value, e) ||
        value_child(c, l->body, e))
      return -1;
    const VarSet *vs = free_of(c, l->value);
    if (set_has(vs, l->var))
      return fail(c, "%%%s is used in its own definition",
                  name_of(((TnIrVar *)l->var)->name_hint));
    VarSet one = {.pdata = (gpointer *)&l->var, .len = 1};
    fv = set_add(set_add(fv, vs, NULL), free_of(c, l->body), &one);
  } else if (t == T->function) {
    TnIrFunction *f = (TnIrFunction *)e;
    if (value_child(c, f->body, e) || plain_map(c, f->attrs, "a function"))
      return -1;
    int64_t n = tn_array_size(f->params);
    VarSet params = {.pdata = NULL, .len = 0};
    VarSet *ps = g_ptr_array_new();
    for (int64_t i = 0; i < n; i++) {
      TnObject *p = tn_array_at(f->params, i)->v_obj;
      if (bind(c, p, e)) {
        g_ptr_array_free(ps, TRUE);
        return -1;
      }
      g_ptr_array_add(ps, p);
      TnIrVar *v = (TnIrVar *)p;
      if (!tn__ir_type_equal(v->base.checked_type, v->type_annotation)) {
        g_ptr_array_free(ps, TRUE);
        return fail(c, "parameter %%%s has a saved type that is not its "
                    "annotation", name_of(v->name_hint));
      }
    }
    g_ptr_array_sort(ps, cmp_ptr);
    params = *ps;
    fv = set_add(fv, free_of(c, f->body), &params);
    g_ptr_array_free(ps, TRUE);
    if (check_type_node(c, f->ret_type, "a function's return type")) {
      if (fv) g_ptr_array_free(fv, TRUE);
      return -1;
    }
  } else if (t == T->var) {
    if (check_type_node(c, ((TnIrVar *)e)->type_annotation,
                        "a variable's annotation"))
      return -1;
  } else if (t == T->global_var) {
    const TnObject *nm = ((TnIrGlobalVar *)e)->name_hint;
    const char *d = name_of(nm);
    size_t n = nm ? (size_t)((const TnStringObj *)nm)->size : 0;
    if (!tn__ir_global_name_ok(d, n) || strlen(d) != n)
      return fail(c, "a global variable is named \"%s\", which is not a "
                  "global name (letters, digits, '_' and '.')", d);
  } else if (t != T->constant && t != T->op) {
    return fail(c, "a %s is not an expression the IR knows",
                tn_object_type_key(e));
  }
  if (fv) g_hash_table_insert(c->free, e, fv);
  if (check_type_node(c, type_of(e), "a saved type")) return -1;
  return check_types(c, e);
}

static void free_set(gpointer p) { g_ptr_array_free(p, TRUE); }

static int check_expr(Check *c, TnObject *e, bool closed) {
  c->free = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_set);
  c->derived = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                     (GDestroyNotify)tn_object_release);
  c->let_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  int rc = tn_ir_post_order_visit(e, note_let, c);
  if (rc == 0) rc = tn_ir_post_order_visit(e, visit, c);
  if (rc == 0 && closed) {
    const VarSet *fv = free_of(c, e);
    if (fv && fv->len)
      rc = fail(c, "%%%s is used where it is not defined",
                name_of(((TnIrVar *)g_ptr_array_index(fv, 0))->name_hint));
  }
  g_hash_table_destroy(c->free);
  g_hash_table_destroy(c->derived);
  g_hash_table_destroy(c->let_of);
  c->free = c->derived = c->let_of = NULL;
  return rc;
}

TN_API int tn_ir_well_formed(TnObject *node) {
  const char *who = "tn_ir_well_formed";
  if (node == NULL) return tn__raise_null(who, "node");
  const TnIrTypes *T = TN_IR;
  Check c = {NULL, NULL, NULL,
             g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
             g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                   free_set),
             NULL, NULL};
  int rc = 0;
  if (tn__ir_is(node, T->module)) {
    c.mod = (const TnIrModule *)node;
    rc = plain_map(&c, c.mod->attrs, "the module");
    const TnAny *k, *v;
    for (int64_t p = tn_map_next(c.mod->functions, 0, &k, &v); rc == 0 && p >= 0;
         p = tn_map_next(c.mod->functions, p + 1, &k, &v)) {
      c.fn = tn__ir_key(k);
      const char *kd;
      size_t kn;
      tn__any_text(k, &kd, &kn);
      if (!tn__ir_global_name_ok(kd, kn) || strlen(kd) != kn) {
        c.fn = NULL;
        rc = fail(&c, "the module has a function named \"%s\", which is not a "
                  "global name (letters, digits, '_' and '.')", kd);
      } else if (!tn__ir_is(v->v_obj, T->function))
        rc = fail(&c, "is a %s, not an ir.Function", tn_any_type_key(v));
      else
        rc = check_expr(&c, v->v_obj, true);
    }
  } else if (tn__ir_is(node, T->function)) {
    rc = check_expr(&c, node, true);
  } else if (tn__ir_is(node, T->expr)) {
    rc = check_expr(&c, node, false);
  } else {
    rc = tn_error_raise_in(TN_ERR_TYPE, who, "node must be an ir.IRModule, "
                           "ir.Function or ir.Expr, got %s",
                           tn_object_type_key(node));
  }
  g_hash_table_destroy(c.binders);
  g_hash_table_destroy(c.singles);
  return rc;
}

/* JSON loading calls an IRModule's "__check__": the module must be well
 * formed before anything trusts it. */
static int check_packed(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self;
  *ret = tn_any_none();
  if (nargs != 1 || !tn_any_is_object(&args[0]))
    return tn_error_raise_in(TN_ERR_TYPE, "ir.WellFormed",
                             "takes one IR node");
  return tn_ir_well_formed(args[0].v_obj);
}

void tn__ir_well_formed_init(void) {
  TnObject *f = tn_func_new(check_packed, NULL, NULL);
  TN__INIT_CHECK(f != NULL);
  TnAny v = tn_any_obj(f);
  TN__INIT_CHECK(tn_type_attr_set("__check__", TN_IR->module, &v) == 0);
  TN__INIT_CHECK(tn_func_register("ir.WellFormed", f, 0) == 0);
  tn_object_release(f);
}
