/*
 * op.c: the operator registry, and the helpers operator definitions share
 * (checking argument types, broadcasting, reading attributes, and writing
 * type errors that name the operator, the argument and both types).
 *
 * An operator is a unique ir.Op node, so calls share it and compare it by
 * identity; the registry (core/registry.c) holds one reference to each, and
 * calls built before an operator is replaced or removed keep theirs.
 * Everything beyond its identity is an operator attribute (a copy-on-write
 * tn.Map read without locks): inference is the attribute "infer_type", a
 * packed function infer(arg_types, attrs) -> type, so an operator can be
 * added from any language; operators defined here wrap a C function in one.
 */
#include "ir/ir_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

static TnRegistry *g_ops;

/* ---- operator attributes --------------------------------------------------- */

static TnMutex g_attr_lock; /* writers only */

static _Atomic(TnObject *) *attr_map_slot(const TnObject *op) {
  return (_Atomic(TnObject *) *)&((TnIrOp *)op)->attr_map;
}

TN_API const TnAny *tn_ir_op_get_attr(const TnObject *op, const char *attr) {
  if (op == NULL || attr == NULL || !tn__ir_is(op, TN_IR->op)) return NULL;
  TnObject *m = atomic_load_explicit(attr_map_slot(op), memory_order_acquire);
  if (m == NULL) return NULL;
  TnAny key = tn_any_cstr(attr);
  return tn_map_find(m, &key);
}

static bool valid_pattern(int64_t p) {
  return p == TN_OP_ELEMWISE || p == TN_OP_BROADCAST || p == TN_OP_INJECTIVE ||
         p == TN_OP_REDUCE || p == TN_OP_OUT_FUSABLE || p == TN_OP_OPAQUE;
}

static bool is_str(const TnAny *a) {
  const char *d;
  size_t n;
  return tn__any_text(a, &d, &n) == TN_TEXT_STR;
}

/* The attributes the library reads must hold what it expects. */
static int check_known_attr(const TnIrOp *o, const char *attr,
                            const TnAny *value) {
  const char *who = "tn_ir_op_set_attr", *name = ((TnStringObj *)o->name)->data;
  if (strcmp(attr, TN_OP_ATTR_INFER_TYPE) == 0) {
    if (value->type_index != TN_TYPE_FUNCTION)
      return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attribute '%s' takes "
                               "a tn.Function, got %s", name, attr,
                               tn_any_type_key(value));
  } else if (strcmp(attr, TN_OP_ATTR_PATTERN) == 0) {
    if (value->type_index != TN_TYPE_INT)
      return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attribute '%s' takes "
                               "an int, got %s", name, attr,
                               tn_any_type_key(value));
    if (!valid_pattern(value->v_int64))
      return tn_error_raise_in(TN_ERR_VALUE, who, "'%s': unknown pattern %"
                               PRId64, name, value->v_int64);
  } else if (strcmp(attr, TN_OP_ATTR_DOC) == 0) {
    if (!is_str(value))
      return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attribute '%s' takes "
                               "a str, got %s", name, attr,
                               tn_any_type_key(value));
  } else if (strcmp(attr, TN_OP_ATTR_INPUT_NAMES) == 0) {
    const TnArrayObj *a = value->type_index == TN_TYPE_ARRAY
                              ? (const TnArrayObj *)value->v_obj
                              : NULL;
    if (a == NULL)
      return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attribute '%s' takes "
                               "a tn.Array of str, got %s", name, attr,
                               tn_any_type_key(value));
    if (o->num_inputs >= 0 && a->size != o->num_inputs)
      return tn_error_raise_in(TN_ERR_VALUE, who, "'%s': attribute '%s' needs "
                               "%" PRId64 " names, got %" PRId64, name, attr,
                               o->num_inputs, a->size);
    for (int64_t i = 0; i < a->size; i++)
      if (!is_str(&a->data[i]))
        return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attribute '%s': "
                                 "item %" PRId64 " is a %s, not a str", name,
                                 attr, i, tn_any_type_key(&a->data[i]));
  }
  return 0;
}

TN_API int tn_ir_op_set_attr(TnObject *op, const char *attr,
                             const TnAny *value, int override) {
  const char *who = "tn_ir_op_set_attr";
  if (tn__check_object(op, TN_IR->op, who, "op")) return -1;
  if (attr == NULL) return tn__raise_null(who, "attr");
  if (value == NULL) return tn__raise_null(who, "value");
  if (tn__any_check(value, who)) return -1;
  if (attr[0] == '\0')
    return tn_error_raise_in(TN_ERR_VALUE, who, "attr is the empty string");
  TnIrOp *o = (TnIrOp *)op;
  if (check_known_attr(o, attr, value)) return -1;
  TnAny key = tn_any_cstr(attr);
  int rc = 0;
  tn__mutex_lock(&g_attr_lock);
  TnObject *old = atomic_load_explicit(attr_map_slot(op), memory_order_relaxed);
  if (old && !override && tn_map_find(old, &key)) {
    rc = tn_error_raise_in(TN_ERR_VALUE, who, "operator '%s' already has "
                           "attribute '%s'; pass override=1 to replace it",
                           ((TnStringObj *)o->name)->data, attr);
  } else if (old == NULL) {
    TnObject *m = tn_map_new(&key, value, 1);
    if (m == NULL) rc = -1;
    else atomic_store_explicit(attr_map_slot(op), m, memory_order_release);
  } else {
    /* Readers may be inside `old`: change a copy (the extra reference makes
     * tn_map_set copy), publish it, and keep `old` until the op dies. */
    TnObject *m = old;
    tn_object_retain(m);
    if (tn_map_set(&m, &key, value) != 0) {
      rc = -1; /* m is still `old`, with our extra reference */
      tn_object_release(m);
    } else if (o->attr_retired == NULL &&
               (o->attr_retired = tn_list_new(NULL, 0)) == NULL) {
      rc = -1;
      tn_object_release(m);
    } else {
      TnAny a = tn_any_obj(old);
      if (tn_list_append(o->attr_retired, &a) != 0) {
        rc = -1;
        tn_object_release(m);
      } else {
        atomic_store_explicit(attr_map_slot(op), m, memory_order_release);
        tn_object_release(old); /* the retired list holds it now */
      }
    }
  }
  tn__mutex_unlock(&g_attr_lock);
  return rc;
}

/* "ir.OpSetAttr"(op_name, attr, value, override): the attribute API for
 * bindings that reach the library through the function registry. */
static int op_set_attr_packed(void *self, const TnAny *args, int32_t nargs,
                              TnAny *ret) {
  (void)self, (void)ret;
  const char *name, *attr;
  int64_t override = 0;
  if (nargs < 3 || nargs > 4)
    return tn_error_raise_in(TN_ERR_TYPE, "ir.OpSetAttr", "takes (op_name, "
                             "attr, value[, override]), got %d arguments",
                             nargs);
  if (tn_any_as_str(&args[0], &name, NULL) ||
      tn_any_as_str(&args[1], &attr, NULL) ||
      (nargs == 4 && tn_any_as_int(&args[3], &override)))
    return -1;
  TnObject *op = tn_ir_op_get(name);
  if (op == NULL) return -1;
  int rc = tn_ir_op_set_attr(op, attr, &args[2], override != 0);
  tn_object_release(op);
  return rc;
}

/* "ir.OpGetAttr"(op_name, attr) -> the value, or None. */
static int op_get_attr_packed(void *self, const TnAny *args, int32_t nargs,
                              TnAny *ret) {
  (void)self;
  const char *name, *attr;
  if (nargs != 2)
    return tn_error_raise_in(TN_ERR_TYPE, "ir.OpGetAttr",
                             "takes (op_name, attr), got %d arguments", nargs);
  if (tn_any_as_str(&args[0], &name, NULL) ||
      tn_any_as_str(&args[1], &attr, NULL))
    return -1;
  TnObject *op = tn_ir_op_get(name);
  if (op == NULL) return -1;
  const TnAny *v = tn_ir_op_get_attr(op, attr);
  int rc = v ? tn_any_to_owned(ret, v) : 0;
  tn_object_release(op);
  return rc;
}

void tn__ir_op_registry_init(void) {
  g_ops = tn__registry_new("operator", false);
  static const struct {
    const char *name;
    TnPackedFn fn;
  } fns[] = {{"ir.OpSetAttr", op_set_attr_packed},
             {"ir.OpGetAttr", op_get_attr_packed}};
  for (size_t i = 0; i < G_N_ELEMENTS(fns); i++) {
    TnObject *f = tn_func_new(fns[i].fn, NULL, NULL);
    TN__INIT_CHECK(f != NULL && tn_func_register(fns[i].name, f, 0) == 0);
    tn_object_release(f);
  }
}

TN_API TnObject *tn_ir_op_get(const char *name) {
  return tn__registry_get(g_ops, name, "tn_ir_op_get");
}

TN_API TnObject *tn_ir_op_find(const char *name) {
  if (name == NULL) return tn__raise_null("tn_ir_op_find", "name"), NULL;
  return tn__registry_find(g_ops, name);
}

TN_API int tn_ir_op_register(const char *name, int32_t num_inputs,
                             const char *attrs_type_key, int32_t pattern,
                             TnObject *infer, const char *doc, int override) {
  const char *who = "tn_ir_op_register";
  if (name == NULL) return tn__raise_null(who, "name");
  if (tn__check_object(infer, TN_TYPE_FUNCTION, who, "infer")) return -1;
  if (num_inputs < -1)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "'%s': num_inputs %d is invalid", name,
                             num_inputs);
  if (!valid_pattern(pattern))
    return tn_error_raise_in(TN_ERR_VALUE, who, "'%s': unknown pattern %d",
                             name, pattern);
  if (attrs_type_key) {
    int32_t at = tn_type_index(attrs_type_key);
    if (at < 0 || !tn_type_is_subtype(at, TN_IR->attrs)) {
      tn_error_set_raised(NULL);
      return tn_error_raise_in(TN_ERR_TYPE, who, "'%s': attrs type '%s' is not "
                               "a registered ir.Attrs node type", name,
                               attrs_type_key);
    }
  }
  TnObject *op = tn_node_alloc(TN_IR->op);
  if (op == NULL) return -1;
  TnIrOp *o = (TnIrOp *)op;
  o->name = tn_string_from_cstr(name);
  o->num_inputs = num_inputs;
  o->attrs_type = attrs_type_key ? tn_string_from_cstr(attrs_type_key) : NULL;
  o->attrs_index = attrs_type_key ? tn_type_index(attrs_type_key) : -1;
  /* The attributes are in place before anyone can find the operator. */
  TnAny fv = tn_any_obj(infer), pv = tn_any_int(pattern);
  int rc = tn_ir_op_set_attr(op, TN_OP_ATTR_INFER_TYPE, &fv, 0);
  if (rc == 0) rc = tn_ir_op_set_attr(op, TN_OP_ATTR_PATTERN, &pv, 0);
  if (rc == 0 && doc) {
    TnAny dv = tn_any_cstr(doc);
    rc = tn_ir_op_set_attr(op, TN_OP_ATTR_DOC, &dv, 0);
  }
  if (rc == 0) rc = tn__registry_register(g_ops, name, op, override, who);
  tn_object_release(op);
  return rc;
}

int32_t tn__ir_op_pattern(const TnObject *op) {
  const TnAny *p = tn_ir_op_get_attr(op, TN_OP_ATTR_PATTERN);
  return p ? (int32_t)p->v_int64 : TN_OP_OPAQUE;
}

const TnObject *tn__ir_op_infer(const TnObject *op) {
  const TnAny *f = tn_ir_op_get_attr(op, TN_OP_ATTR_INFER_TYPE);
  if (f == NULL)
    tn_error_raise_in(TN_ERR_TYPE, ((TnStringObj *)((const TnIrOp *)op)->name)
                                       ->data,
                      "the operator has no type inference (attribute '%s')",
                      TN_OP_ATTR_INFER_TYPE);
  return f ? f->v_obj : NULL;
}

TN_API int tn_ir_op_unregister(const char *name) {
  /* calls that use the operator keep their own references */
  return tn__registry_unregister(g_ops, name, "tn_ir_op_unregister");
}

TN_API TnObject *tn_ir_op_list(void) {
  return tn__registry_list(g_ops, NULL);
}

/* ---- C inference functions as packed functions ---------------------------- */

typedef struct {
  TnIrInferC fn;
  char *name;
  int32_t attrs_type; /* -1: the operator takes none */
  int32_t num_inputs; /* -1: any number */
} CInfer;

static void c_infer_free(void *self) {
  CInfer *c = self;
  g_free(c->name);
  g_free(c);
}

static int c_infer_call(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  CInfer *c = self;
  if (nargs != 2 || !tn_any_is_object(&args[0]) ||
      (args[0].type_index != TN_TYPE_ARRAY && args[0].type_index != TN_TYPE_LIST))
    return tn_error_raise_in(TN_ERR_TYPE, c->name, "type inference takes "
                             "(arg_types: tn.Array, attrs)");
  const TnArrayObj *types = (const TnArrayObj *)args[0].v_obj;
  if (c->num_inputs >= 0 && types->size != c->num_inputs)
    return tn_error_raise_in(TN_ERR_TYPE, c->name,
                             "type inference takes %d argument types, got %"
                             PRId64, c->num_inputs, types->size);
  TnObject *stack[32];
  TnObject **t = types->size <= 32 ? stack : g_new(TnObject *, types->size);
  for (int64_t i = 0; i < types->size; i++) {
    if (!tn_any_is_object(&types->data[i]) ||
        !tn__ir_is(types->data[i].v_obj, TN_IR->type)) {
      if (t != stack) g_free(t);
      return tn_error_raise_in(TN_ERR_TYPE, c->name, "argument %" PRId64
                               " has no type (got %s)", i,
                               tn_any_type_key(&types->data[i]));
    }
    t[i] = types->data[i].v_obj;
  }
  TnObject *attrs = tn_any_is_object(&args[1]) ? args[1].v_obj : NULL;
  /* Called directly (not through tn_ir_call), the attrs are unchecked. */
  if (c->attrs_type >= 0 &&
      (attrs == NULL || !tn_object_is_instance(attrs, c->attrs_type))) {
    if (t != stack) g_free(t);
    return tn_error_raise_in(TN_ERR_TYPE, c->name,
                             "type inference needs attrs of type %s, got %s",
                             tn__type_key_or(c->attrs_type, "?"),
                             tn_any_type_key(&args[1]));
  }
  TnObject *r = c->fn(c->name, t, (int32_t)types->size, attrs);
  if (t != stack) g_free(t);
  if (r == NULL) return -1;
  *ret = tn_any_obj(r);
  return 0;
}

void tn__ir_op_define(const char *name, const char *inputs,
                      const char *attrs_key, int32_t pattern, TnIrInferC infer,
                      const char *doc) {
  gchar **names = g_strsplit(inputs, ",", -1);
  int32_t num_inputs = (int32_t)g_strv_length(names);
  CInfer *c = g_new0(CInfer, 1);
  c->fn = infer;
  c->name = g_strdup(name);
  c->attrs_type = attrs_key ? tn_type_index(attrs_key) : -1;
  c->num_inputs = num_inputs;
  TN__INIT_CHECK(attrs_key == NULL || c->attrs_type >= 0);
  TnObject *f = tn_func_new(c_infer_call, c, c_infer_free);
  TN__INIT_CHECK(f != NULL);
  TN__INIT_CHECK(
      tn_ir_op_register(name, num_inputs, attrs_key, pattern, f, doc, 0) == 0);
  tn_object_release(f);
  TnAny items[16];
  TN__INIT_CHECK(num_inputs <= 16);
  for (int32_t i = 0; i < num_inputs; i++) items[i] = tn_any_cstr(names[i]);
  TnObject *arr = tn_array_new(items, num_inputs);
  TnObject *op = tn_ir_op_get(name);
  TnAny av = tn_any_obj(arr);
  TN__INIT_CHECK(arr && op &&
                 tn_ir_op_set_attr(op, TN_OP_ATTR_INPUT_NAMES, &av, 0) == 0);
  tn_object_release(op);
  tn_object_release(arr);
  g_strfreev(names);
}

TnObject *tn__ir_infer_direct(const TnObject *op, TnObject *const *types,
                              int32_t n, TnObject *attrs, bool *handled) {
  const TnAny *fa = tn_ir_op_get_attr(op, TN_OP_ATTR_INFER_TYPE);
  const TnFunctionObj *f = fa ? (const TnFunctionObj *)fa->v_obj : NULL;
  *handled = f && f->fn == c_infer_call;
  if (!*handled) return NULL;
  /* A C inference function, with arguments tn_ir_call has checked: call it
   * without packing the types into an array. */
  const CInfer *c = f->self;
  for (int32_t i = 0; i < n; i++)
    if (!tn__ir_is(types[i], TN_IR->type)) {
      *handled = false;
      return NULL;
    }
  TnObject *out = c->fn(c->name, types, n, attrs);
  if (out && !tn__ir_is(out, TN_IR->type)) {
    tn_error_raise_in(TN_ERR_TYPE, c->name, "type inference returned a %s",
                      tn_object_type_key(out));
    tn_object_release(out);
    return NULL;
  }
  return out;
}

/* ---- messages -------------------------------------------------------------- */

void tn__ir_print_type(GString *out, const TnObject *type) {
  char buf[64];
  if (type == NULL) {
    g_string_append(out, "?");
  } else if (tn__ir_is(type, TN_IR->tensor_type)) {
    const TnIrTensorType *t = (const TnIrTensorType *)type;
    const TnShapeObj *s = (const TnShapeObj *)t->shape;
    g_string_append(out, "Tensor[(");
    for (int64_t i = 0; i < s->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", s->data[i]);
    if (s->ndim == 1) g_string_append_c(out, ',');
    g_string_append_printf(out, "), %s]",
                           tn__dtype_text(t->dtype, buf, sizeof buf));
  } else if (tn__ir_is(type, TN_IR->tuple_type)) {
    const TnObject *f = ((const TnIrTupleType *)type)->fields;
    g_string_append_c(out, '(');
    for (int64_t i = 0; i < tn_array_size(f); i++) {
      if (i) g_string_append(out, ", ");
      tn__ir_print_type(out, tn_array_at(f, i)->v_obj);
    }
    if (tn_array_size(f) == 1) g_string_append_c(out, ',');
    g_string_append_c(out, ')');
  } else if (tn__ir_is(type, TN_IR->func_type)) {
    const TnIrFuncType *f = (const TnIrFuncType *)type;
    g_string_append(out, "fn (");
    for (int64_t i = 0; i < tn_array_size(f->arg_types); i++) {
      if (i) g_string_append(out, ", ");
      tn__ir_print_type(out, tn_array_at(f->arg_types, i)->v_obj);
    }
    g_string_append(out, ") -> ");
    tn__ir_print_type(out, f->ret_type);
  } else {
    g_string_append(out, tn_object_type_key(type));
  }
}

int tn__ir_type_mismatch(const char *who, int32_t index, const TnObject *want,
                         const TnObject *got) {
  GString *w = g_string_new(NULL), *g = g_string_new(NULL);
  tn__ir_print_type(w, want);
  tn__ir_print_type(g, got);
  if (index >= 0)
    tn_error_raise_in(TN_ERR_TYPE, who, "argument %d has type %s, expected %s",
                      index, g->str, w->str);
  else
    tn_error_raise_in(TN_ERR_TYPE, who, "got type %s, expected %s", g->str,
                      w->str);
  g_string_free(w, TRUE);
  g_string_free(g, TRUE);
  return -1;
}

int tn__ir_arg_error(const char *op, int32_t i, const char *role,
                     const TnObject *type, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  GString *t = g_string_new(NULL);
  tn__ir_print_type(t, type);
  tn_error_raise_in(TN_ERR_TYPE, op, "argument %d (%s) has type %s: %s", i,
                    role, t->str, why);
  g_string_free(t, TRUE);
  g_free(why);
  return -1;
}

const TnIrTensorType *tn__ir_tensor_arg(const char *op, TnObject *const *types,
                                        int32_t i, const char *role) {
  if (tn__ir_is(types[i], TN_IR->tensor_type)) {
    const TnIrTensorType *t = (const TnIrTensorType *)types[i];
    if (tn__ir_ndim(t) <= TN_IR_MAX_DIMS) return t;
    tn__ir_arg_error(op, i, role, types[i], "%" PRId64 " dimensions is more "
                     "than the %d operators support", tn__ir_ndim(t),
                     TN_IR_MAX_DIMS);
    return NULL;
  }
  tn__ir_arg_error(op, i, role, types[i], "expected a tensor");
  return NULL;
}

int tn__ir_broadcast(const char *op, const TnIrTensorType *a,
                     const TnIrTensorType *b, int64_t *out, int32_t *ndim) {
  int64_t na = tn__ir_ndim(a), nb = tn__ir_ndim(b);
  int64_t n = na > nb ? na : nb;
  if (n > TN_IR_MAX_DIMS)
    return tn_error_raise_in(TN_ERR_TYPE, op, "%" PRId64
                             " dimensions is more than %d", n, TN_IR_MAX_DIMS);
  const int64_t *da = tn__ir_dims(a), *db = tn__ir_dims(b);
  for (int64_t i = 0; i < n; i++) {
    int64_t x = i < n - na ? 1 : da[i - (n - na)];
    int64_t y = i < n - nb ? 1 : db[i - (n - nb)];
    if (x != y && x != 1 && y != 1) {
      GString *ta = g_string_new(NULL), *tb = g_string_new(NULL);
      tn__ir_print_type(ta, (const TnObject *)a);
      tn__ir_print_type(tb, (const TnObject *)b);
      tn_error_raise_in(TN_ERR_TYPE, op, "argument 0 has type %s and argument "
                        "1 has type %s: shapes do not broadcast (dimension %"
                        PRId64 ": %" PRId64 " vs %" PRId64 ")", ta->str,
                        tb->str, i, x, y);
      g_string_free(ta, TRUE);
      g_string_free(tb, TRUE);
      return -1;
    }
    out[i] = x == 1 ? y : x;
  }
  *ndim = (int32_t)n;
  return 0;
}

int32_t tn__ir_attr_ints(const TnObject *attrs, const char *field,
                         int64_t *out, int32_t cap, const char *op) {
  TnAny v;
  if (attrs == NULL || tn_node_get(attrs, field, &v)) return -1;
  int32_t n = -1;
  if (v.type_index == TN_TYPE_NONE) {
    n = 0;
  } else if (v.type_index == TN_TYPE_SHAPE) {
    const TnShapeObj *s = (const TnShapeObj *)v.v_obj;
    if (s->ndim <= cap) {
      memcpy(out, s->data, sizeof(int64_t) * (size_t)s->ndim);
      n = (int32_t)s->ndim;
    }
  } else if (v.type_index == TN_TYPE_ARRAY || v.type_index == TN_TYPE_LIST) {
    int64_t size = tn_array_size(v.v_obj);
    if (size <= cap) {
      n = (int32_t)size;
      for (int32_t i = 0; i < n; i++)
        if (tn_any_as_int(tn_array_at(v.v_obj, i), &out[i])) {
          tn_error_set_raised(NULL);
          n = -2;
          break;
        }
    }
  } else if (v.type_index == TN_TYPE_INT) {
    out[0] = v.v_int64;
    n = 1;
  }
  if (n < 0) {
    tn_error_raise_in(TN_ERR_TYPE, op, "attribute '%s' must be a list of at "
                      "most %d integers, got %s", field, cap,
                      tn_any_type_key(&v));
    n = -1;
  }
  tn_any_clear(&v);
  return n;
}

int tn__ir_attr_fits_i32(const char *op, const char *field,
                         const int64_t *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] > INT32_MAX || v[i] < INT32_MIN)
      return tn__ckd_attr_error(op, field, v[i], "the kernels take it as "
                                "int32 (%" PRId32 "..%" PRId32 ")",
                                INT32_MIN, INT32_MAX);
  return 0;
}

int tn__ir_store_scalar(void *dst, DLDataType t, double v) {
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 32) *(float *)dst = (float)v;
      else if (t.bits == 64) *(double *)dst = v;
      else break;
      return 0;
    case kDLInt:
      if (v != floor(v) || t.bits > 64 || t.bits == 0 ||
          v < -ldexp(1.0, t.bits - 1) || v >= ldexp(1.0, t.bits - 1))
        break;
      switch (t.bits) {
        case 8: *(int8_t *)dst = (int8_t)v; return 0;
        case 16: *(int16_t *)dst = (int16_t)v; return 0;
        case 32: *(int32_t *)dst = (int32_t)v; return 0;
        case 64: *(int64_t *)dst = (int64_t)v; return 0;
      }
      break;
    case kDLUInt:
      if (v != floor(v) || v < 0 || t.bits > 64 || t.bits == 0 ||
          v >= ldexp(1.0, t.bits))
        break;
      switch (t.bits) {
        case 8: *(uint8_t *)dst = (uint8_t)v; return 0;
        case 16: *(uint16_t *)dst = (uint16_t)v; return 0;
        case 32: *(uint32_t *)dst = (uint32_t)v; return 0;
        case 64: *(uint64_t *)dst = (uint64_t)v; return 0;
      }
      break;
    case kDLBool:
      *(uint8_t *)dst = v != 0;
      return 0;
  }
  char buf[64];
  return tn_error_raise_in(TN_ERR_VALUE, NULL,
                           "cannot store %g as a scalar of type %s", v,
                           tn__dtype_text(t, buf, sizeof buf));
}

/* Element i of compact data of type t as a double (exact for integers up
 * to 2^53 and for float32/64); false for a type it cannot read. */
static bool load_scalar(const void *data, DLDataType t, int64_t i,
                        double *out) {
  if (t.lanes != 1) return false;
  switch (t.code * 100 + t.bits) {
    case kDLFloat * 100 + 32: *out = ((const float *)data)[i]; return true;
    case kDLFloat * 100 + 64: *out = ((const double *)data)[i]; return true;
    case kDLInt * 100 + 8: *out = ((const int8_t *)data)[i]; return true;
    case kDLInt * 100 + 16: *out = ((const int16_t *)data)[i]; return true;
    case kDLInt * 100 + 32: *out = ((const int32_t *)data)[i]; return true;
    case kDLInt * 100 + 64: *out = (double)((const int64_t *)data)[i]; return true;
    case kDLUInt * 100 + 8:
    case kDLBool * 100 + 8: *out = ((const uint8_t *)data)[i]; return true;
    case kDLUInt * 100 + 16: *out = ((const uint16_t *)data)[i]; return true;
    case kDLUInt * 100 + 32: *out = ((const uint32_t *)data)[i]; return true;
    case kDLUInt * 100 + 64: *out = (double)((const uint64_t *)data)[i]; return true;
  }
  return false;
}

bool tn__ir_const_all(const TnObject *expr, double value) {
  if (!tn__ir_is(expr, TN_IR->constant)) return false;
  TnObject *data = ((const TnIrConstant *)expr)->data;
  if (!tn__tensor_contiguous(data)) return false;
  const DLTensor *dl = tn_tensor_dltensor(data);
  int64_t n = 1;
  for (int32_t d = 0; d < dl->ndim; d++) n *= dl->shape[d];
  if (n == 0) return false;
  const char *p = (const char *)dl->data + dl->byte_offset;
  for (int64_t i = 0; i < n; i++) {
    double x;
    if (!load_scalar(p, dl->dtype, i, &x) || x != value) return false;
  }
  return true;
}

const char *tn__ir_call_op_name(const TnObject *expr) {
  if (!tn__ir_is(expr, TN_IR->call)) return NULL;
  const TnObject *op = ((const TnIrCall *)expr)->op;
  if (!tn__ir_is(op, TN_IR->op)) return NULL;
  return ((const TnStringObj *)((const TnIrOp *)op)->name)->data;
}
