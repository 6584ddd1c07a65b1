/*
 * op.c: the operator registry, and the helpers operator definitions share
 * (checking argument types, broadcasting, reading attributes, and writing
 * type errors that name the operator, the argument and both types).
 *
 * An operator is a unique ir.Op node, so calls share it and compare it by
 * identity; the registry keeps every operator for the life of the process.
 * Inference is a packed function infer(arg_types, attrs) -> type, so an
 * operator can be added from any language; operators defined here wrap a
 * C function in one.
 */
#include "ir/ir_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

static TnMutex g_ops_lock;
static GHashTable *g_ops; /* name -> ir.Op (one reference each) */

TN_API TnObject *tn_ir_op(const char *name) {
  if (name == NULL) return tn__raise_null("tn_ir_op", "name"), NULL;
  tn__mutex_lock(&g_ops_lock);
  TnObject *op = g_ops ? g_hash_table_lookup(g_ops, name) : NULL;
  if (op) tn_object_retain(op);
  tn__mutex_unlock(&g_ops_lock);
  if (op == NULL)
    TN_RAISE(KEY, "no operator is registered as '%s'", name);
  return op;
}

TN_API int tn_ir_op_register(const char *name, int32_t num_inputs,
                             const char *attrs_type_key, int32_t pattern,
                             TnObject *infer, const char *doc) {
  const char *who = "tn_ir_op_register";
  if (name == NULL) return tn__raise_null(who, "name");
  if (tn__check_object(infer, TN_TYPE_FUNCTION, who, "infer")) return -1;
  if (num_inputs < -1)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "'%s': num_inputs %d is invalid", name,
                             num_inputs);
  if (pattern != TN_OP_ELEMWISE && pattern != TN_OP_BROADCAST &&
      pattern != TN_OP_INJECTIVE && pattern != TN_OP_REDUCE &&
      pattern != TN_OP_OUT_FUSABLE && pattern != TN_OP_OPAQUE)
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
  o->pattern = pattern;
  tn_object_retain(infer);
  o->infer = infer;
  o->doc = doc ? tn_string_from_cstr(doc) : NULL;
  int rc = 0;
  tn__mutex_lock(&g_ops_lock);
  if (g_ops == NULL) g_ops = g_hash_table_new(g_str_hash, g_str_equal);
  if (g_hash_table_contains(g_ops, name)) {
    rc = tn_error_raise_in(TN_ERR_VALUE, who,
                           "an operator named '%s' is already registered",
                           name);
  } else {
    g_hash_table_insert(g_ops, (gpointer)((TnStringObj *)o->name)->data, op);
    op = NULL; /* the registry's now */
  }
  tn__mutex_unlock(&g_ops_lock);
  tn_object_release(op);
  return rc;
}

TN_API int tn_ir_op_unregister(const char *name) {
  if (name == NULL) return tn__raise_null("tn_ir_op_unregister", "name");
  tn__mutex_lock(&g_ops_lock);
  TnObject *op = g_ops ? g_hash_table_lookup(g_ops, name) : NULL;
  if (op) g_hash_table_remove(g_ops, name);
  tn__mutex_unlock(&g_ops_lock);
  if (op == NULL)
    return TN_RAISE(KEY, "no operator is registered as '%s'", name);
  tn_object_release(op); /* calls that use it keep their own references */
  return 0;
}

TN_API TnObject *tn_ir_op_list(void) {
  GPtrArray *names = g_ptr_array_new();
  tn__mutex_lock(&g_ops_lock);
  if (g_ops) {
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, g_ops);
    while (g_hash_table_iter_next(&it, &k, NULL)) g_ptr_array_add(names, k);
  }
  tn__mutex_unlock(&g_ops_lock);
  TnObject *arr = tn__sorted_string_array(names);
  g_ptr_array_free(names, TRUE);
  return arr;
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

void tn__ir_op_define(const char *name, int32_t num_inputs,
                      const char *attrs_key, int32_t pattern, TnIrInferC infer,
                      const char *doc) {
  CInfer *c = g_new0(CInfer, 1);
  c->fn = infer;
  c->name = g_strdup(name);
  c->attrs_type = attrs_key ? tn_type_index(attrs_key) : -1;
  c->num_inputs = num_inputs;
  TN__INIT_CHECK(attrs_key == NULL || c->attrs_type >= 0);
  TnObject *f = tn_func_new(c_infer_call, c, c_infer_free);
  TN__INIT_CHECK(f != NULL);
  TN__INIT_CHECK(
      tn_ir_op_register(name, num_inputs, attrs_key, pattern, f, doc) == 0);
  tn_object_release(f);
}

TnObject *tn__ir_infer_direct(const TnObject *op, TnObject *const *types,
                              int32_t n, TnObject *attrs, bool *handled) {
  const TnFunctionObj *f = (const TnFunctionObj *)((const TnIrOp *)op)->infer;
  *handled = f->fn == c_infer_call;
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
    tn_dtype_print(t->dtype, buf, sizeof buf);
    g_string_append_printf(out, "), %s]", buf);
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
  tn_dtype_print(t, buf, sizeof buf);
  return tn_error_raise_in(TN_ERR_VALUE, NULL,
                           "cannot store %g as a scalar of type %s", v, buf);
}
