/*
 * nodes.c: the IR's node types and the functions that build them.
 *
 * Builders check what they are given (an argument that is not an
 * expression, a call with the wrong number of arguments or attrs of the
 * wrong type) and, when the types of the parts are already known, give the
 * new expression its type at once through the operator's inference
 * function. A type error therefore surfaces where the bad call is written,
 * in whichever language, and InferType only has to fill in what could not
 * be known yet (through a global function, say).
 */
#include "ir/ir_internal.h"
#include "ir/ops_nn.h"
#include "ir/ops_image.h"
#include "ir/ops_lstm.h"

#include <inttypes.h>

static TnIrTypes g_types;

TN_API const TnIrTypes *tn_ir_types(void) { return &g_types; }

/* ------------------------------------------------------------------------ */
/* Registration                                                              */
/* ------------------------------------------------------------------------ */

#define F_RO TN_FIELD_READONLY

static const TnFieldDesc tensor_type_fields[] = {
    TN_FIELD_OBJ(TnIrTensorType, shape, "tn.Shape", F_RO, "dimensions"),
    TN_FIELD_DTYPE(TnIrTensorType, dtype, F_RO, "element type"),
};
static const TnFieldDesc tuple_type_fields[] = {
    TN_FIELD_OBJ(TnIrTupleType, fields, "tn.Array<ir.Type>", F_RO, "element types"),
};
static const TnFieldDesc func_type_fields[] = {
    TN_FIELD_OBJ(TnIrFuncType, arg_types, "tn.Array<ir.Type>", F_RO, NULL),
    TN_FIELD_OBJ(TnIrFuncType, ret_type, "ir.Type", F_RO, NULL),
};
static const TnFieldDesc expr_fields[] = {
    TN_FIELD_OBJ(TnIrExpr, checked_type, "ir.Type",
                 TN_FIELD_OPTIONAL | TN_FIELD_NO_SEQ,
                 "the type inference gave it"),
};
static const TnFieldDesc var_fields[] = {
    TN_FIELD_STR(TnIrVar, name_hint, F_RO | TN_FIELD_NO_SEQ,
                 "a name for printing; not its identity"),
    TN_FIELD_OBJ(TnIrVar, type_annotation, "ir.Type",
                 F_RO | TN_FIELD_OPTIONAL, NULL),
};
static const TnFieldDesc constant_fields[] = {
    TN_FIELD_OBJ(TnIrConstant, data, "tn.Tensor", F_RO, NULL),
};
/* An operator is saved by name: loading looks it up in the registry. */
#define F_REG (F_RO | TN_FIELD_NO_SEQ | TN_FIELD_NO_SAVE)
static const TnFieldDesc op_fields[] = {
    TN_FIELD_STR(TnIrOp, name, F_RO, NULL),
    TN_FIELD_INT(TnIrOp, num_inputs, F_REG, "-1: any"),
    TN_FIELD_STR(TnIrOp, attrs_type, F_REG | TN_FIELD_OPTIONAL,
                 "type key of its attrs"),
    TN_FIELD_OBJ(TnIrOp, attr_map, "tn.Map", F_REG | TN_FIELD_OPTIONAL,
                 "operator attributes (tn_ir_op_set_attr)"),
    TN_FIELD_OBJ(TnIrOp, attr_retired, "tn.List",
                 F_REG | TN_FIELD_OPTIONAL, "replaced attribute maps"),
};
static const TnFieldDesc call_fields[] = {
    TN_FIELD_OBJ(TnIrCall, op, "ir.Expr", F_RO, NULL),
    TN_FIELD_OBJ(TnIrCall, args, "tn.Array<ir.Expr>", F_RO, NULL),
    TN_FIELD_OBJ(TnIrCall, attrs, "ir.Attrs", F_RO | TN_FIELD_OPTIONAL, NULL),
};
static const TnFieldDesc tuple_fields[] = {
    TN_FIELD_OBJ(TnIrTuple, fields, "tn.Array<ir.Expr>", F_RO, NULL),
};
static const TnFieldDesc tgi_fields[] = {
    TN_FIELD_OBJ(TnIrTupleGetItem, tuple, "ir.Expr", F_RO, NULL),
    TN_FIELD_INT(TnIrTupleGetItem, index, F_RO, NULL),
};
static const TnFieldDesc let_fields[] = {
    TN_FIELD_OBJ(TnIrLet, var, "ir.Var", F_RO | TN_FIELD_DEF, NULL),
    TN_FIELD_OBJ(TnIrLet, value, "ir.Expr", F_RO, NULL),
    TN_FIELD_OBJ(TnIrLet, body, "ir.Expr", F_RO, NULL),
};
static const TnFieldDesc function_fields[] = {
    TN_FIELD_OBJ(TnIrFunction, params, "tn.Array<ir.Var>", F_RO | TN_FIELD_DEF, NULL),
    TN_FIELD_OBJ(TnIrFunction, body, "ir.Expr", F_RO, NULL),
    TN_FIELD_OBJ(TnIrFunction, ret_type, "ir.Type", F_RO | TN_FIELD_OPTIONAL,
                 NULL),
    TN_FIELD_OBJ(TnIrFunction, attrs, "tn.Map<tn.String, any>", F_RO | TN_FIELD_OPTIONAL, NULL),
};
static const TnFieldDesc global_var_fields[] = {
    TN_FIELD_STR(TnIrGlobalVar, name_hint, F_RO, NULL),
};
static const TnFieldDesc module_fields[] = {
    TN_FIELD_OBJ(TnIrModule, functions, "tn.Map<tn.String, ir.Function>", F_RO, "name -> function"),
    TN_FIELD_OBJ(TnIrModule, attrs, "tn.Map<tn.String, any>", F_RO | TN_FIELD_OPTIONAL, NULL),
};
static const TnFieldDesc no_fields[] = {
    {NULL, 0, 0, 0, NULL, {.type_index = TN_TYPE_NONE}, NULL},
};

/* ir.Op(name=...) from JSON or kw construction: the registered operator. */
static int make_op(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  TnAny key = tn_any_cstr("name");
  const TnAny *name = nargs == 1 ? tn_map_find(args[0].v_obj, &key) : NULL;
  const char *s;
  if (name == NULL || tn_any_as_str(name, &s, NULL))
    return tn_error_raise_in(TN_ERR_TYPE, "ir.Op", "only the name of a "
                             "registered operator makes an ir.Op");
  TnObject *op = tn_ir_op_get(s);
  if (op == NULL) return -1;
  *ret = tn_any_obj(op);
  return 0;
}

#define REG(var, S, key, parent, kind, flags, fields, n)                     \
  do {                                                                       \
    TnNodeDesc d = {key, parent, kind, flags, (int64_t)sizeof(S), fields, n, \
                    NULL, NULL};                                             \
    g_types.var = tn_node_register(&d);                                      \
    TN__INIT_CHECK(g_types.var > 0);                                               \
  } while (0)
#define N(a) ((int32_t)G_N_ELEMENTS(a))

static int module_with_attr_packed(void *self, const TnAny *args,
                                   int32_t nargs, TnAny *ret);

void tn__ir_nodes_init(void) {
  REG(attrs, TnObject, "ir.Attrs", TN_TYPE_OBJECT, TN_NODE_TREE,
      TN_NODE_NO_CREATE, no_fields, 0);
  REG(type, TnIrType, "ir.Type", TN_TYPE_OBJECT, TN_NODE_TREE,
      TN_NODE_NO_CREATE, no_fields, 0);
  REG(tensor_type, TnIrTensorType, "ir.TensorType", g_types.type,
      TN_NODE_TREE, 0, tensor_type_fields, N(tensor_type_fields));
  REG(tuple_type, TnIrTupleType, "ir.TupleType", g_types.type, TN_NODE_TREE,
      0, tuple_type_fields, N(tuple_type_fields));
  REG(func_type, TnIrFuncType, "ir.FuncType", g_types.type, TN_NODE_TREE, 0,
      func_type_fields, N(func_type_fields));
  REG(expr, TnIrExpr, "ir.Expr", TN_TYPE_OBJECT, TN_NODE_TREE,
      TN_NODE_NO_CREATE, expr_fields, N(expr_fields));
  REG(var, TnIrVar, "ir.Var", g_types.expr, TN_NODE_VAR, 0, var_fields,
      N(var_fields));
  REG(constant, TnIrConstant, "ir.Constant", g_types.expr, TN_NODE_TREE, 0,
      constant_fields, N(constant_fields));
  REG(op, TnIrOp, "ir.Op", g_types.expr, TN_NODE_UNIQUE, TN_NODE_NO_CREATE,
      op_fields, N(op_fields));
  REG(call, TnIrCall, "ir.Call", g_types.expr, TN_NODE_TREE, 0, call_fields,
      N(call_fields));
  REG(tuple, TnIrTuple, "ir.Tuple", g_types.expr, TN_NODE_TREE, 0,
      tuple_fields, N(tuple_fields));
  REG(tuple_get_item, TnIrTupleGetItem, "ir.TupleGetItem", g_types.expr,
      TN_NODE_TREE, 0, tgi_fields, N(tgi_fields));
  REG(let, TnIrLet, "ir.Let", g_types.expr, TN_NODE_TREE, 0, let_fields,
      N(let_fields));
  REG(function, TnIrFunction, "ir.Function", g_types.expr, TN_NODE_TREE, 0,
      function_fields, N(function_fields));
  REG(global_var, TnIrGlobalVar, "ir.GlobalVar", g_types.expr, TN_NODE_TREE,
      0, global_var_fields, N(global_var_fields));
  REG(module, TnIrModule, "ir.IRModule", TN_TYPE_OBJECT, TN_NODE_TREE, 0,
      module_fields, N(module_fields));
  TnObject *make = tn_func_new(make_op, NULL, NULL);
  TnAny mv = tn_any_obj(make);
  TN__INIT_CHECK(tn_type_attr_set("__make__", g_types.op, &mv) == 0);
  tn_object_release(make);
  TnObject *mwa = tn_func_new(module_with_attr_packed, NULL, NULL);
  TN__INIT_CHECK(mwa != NULL &&
                 tn_func_register("ir.ModuleWithAttr", mwa, 0) == 0);
  tn_object_release(mwa);
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

bool tn__ir_is(const TnObject *o, int32_t type_index) {
  return o && tn_object_is_instance(o, type_index);
}

static inline TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

TnObject *tn__ir_array(TnObject *const *items, int32_t n) {
  TnAny stack[16] = {{.type_index = TN_TYPE_NONE}};
  TnAny *tmp = n <= 16 ? stack : g_new(TnAny, n);
  for (int32_t i = 0; i < n; i++) tmp[i] = tn_any_obj(items[i]);
  TnObject *arr = tn_array_new(n ? tmp : NULL, n);
  if (tmp != stack) g_free(tmp);
  return arr;
}

static int check_expr(const TnObject *e, const char *who, const char *what,
                      int32_t index) {
  if (tn__ir_is(e, g_types.expr)) return 0;
  if (index >= 0)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "%s %d must be an ir.Expr, got %s", what, index,
                             tn_object_type_key(e));
  return tn_error_raise_in(TN_ERR_TYPE, who, "%s must be an ir.Expr, got %s",
                           what, tn_object_type_key(e));
}

static int check_type(const TnObject *t, const char *who, const char *what) {
  if (t == NULL || tn__ir_is(t, g_types.type)) return 0;
  return tn_error_raise_in(TN_ERR_TYPE, who, "%s must be an ir.Type, got %s",
                           what, tn_object_type_key(t));
}

TN_API TnObject *tn_ir_checked_type(const TnObject *expr) {
  return tn__ir_is(expr, g_types.expr) ? ((const TnIrExpr *)expr)->checked_type
                                       : NULL;
}

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

/* An array argument `name` with its count `count_name` = n: not negative,
 * not NULL when n > 0, and no NULL item. */
static int check_items(TnObject *const *items, int32_t n, const char *who,
                       const char *name, const char *count_name) {
  if (n < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s is negative (%d)",
                             count_name, n);
  if (n > 0 && items == NULL) return tn__raise_null(who, name);
  for (int32_t i = 0; i < n; i++)
    if (items[i] == NULL)
      return tn_error_raise_in(TN_ERR_VALUE, who, "argument '%s[%d]' is NULL",
                               name, i);
  return 0;
}

/* Each of `n` items is an ir.Type. */
static int check_types(TnObject *const *items, int32_t n, const char *who,
                       const char *name) {
  for (int32_t i = 0; i < n; i++) {
    char what[64];
    g_snprintf(what, sizeof what, "%s[%d]", name, i);
    if (check_type(items[i], who, what)) return -1;
  }
  return 0;
}

TN_API TnObject *tn_ir_tensor_type(const int64_t *shape, int32_t ndim,
                                   DLDataType dtype) {
  const char *who = "tn_ir_tensor_type";
  if (ndim < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "ndim is negative (%d)", ndim),
           NULL;
  if (ndim > 0 && shape == NULL) return tn__raise_null(who, "shape"), NULL;
  for (int32_t i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tn_error_raise_in(TN_ERR_VALUE, who, "shape[%d] is negative (%"
                               PRId64 ")", i, shape[i]), NULL;
  if (!tn__dtype_valid(dtype) || dtype.lanes == 0 ||
      (dtype.bits == 0 && dtype.code != kDLOpaqueHandle))
    return tn_error_raise_in(TN_ERR_VALUE, who, "dtype (code %u, %u bits, %u "
                             "lanes) is not a data type", dtype.code,
                             dtype.bits, dtype.lanes), NULL;
  TnObject *s = tn_shape_new(shape, ndim);
  if (s == NULL) return NULL;
  TnObject *t = tn_node_alloc(g_types.tensor_type);
  if (t == NULL) {
    tn_object_release(s);
    return NULL;
  }
  ((TnIrTensorType *)t)->shape = s;
  ((TnIrTensorType *)t)->dtype = dtype;
  return t;
}

TN_API TnObject *tn_ir_tuple_type(TnObject *const *fields, int32_t n) {
  const char *who = "tn_ir_tuple_type";
  if (check_items(fields, n, who, "fields", "n") ||
      check_types(fields, n, who, "fields"))
    return NULL;
  TnObject *arr = tn__ir_array(fields, n);
  TnObject *t = arr ? tn_node_alloc(g_types.tuple_type) : NULL;
  if (t == NULL) {
    tn_object_release(arr);
    return NULL;
  }
  ((TnIrTupleType *)t)->fields = arr;
  return t;
}

TN_API TnObject *tn_ir_func_type(TnObject *const *arg_types, int32_t n,
                                 TnObject *ret_type) {
  const char *who = "tn_ir_func_type";
  if (check_items(arg_types, n, who, "arg_types", "n") ||
      check_types(arg_types, n, who, "arg_types"))
    return NULL;
  if (ret_type == NULL)
    return tn__raise_null("tn_ir_func_type", "ret_type"), NULL;
  if (check_type(ret_type, "tn_ir_func_type", "ret_type")) return NULL;
  TnObject *arr = tn__ir_array(arg_types, n);
  TnObject *t = arr ? tn_node_alloc(g_types.func_type) : NULL;
  if (t == NULL) {
    tn_object_release(arr);
    return NULL;
  }
  ((TnIrFuncType *)t)->arg_types = arr;
  ((TnIrFuncType *)t)->ret_type = retained(ret_type);
  return t;
}

/* ------------------------------------------------------------------------ */
/* Leaves                                                                    */
/* ------------------------------------------------------------------------ */

TN_API TnObject *tn_ir_var(const char *name_hint, TnObject *type_annotation) {
  if (name_hint == NULL) return tn__raise_null("tn_ir_var", "name_hint"), NULL;
  if (check_type(type_annotation, "tn_ir_var", "type_annotation")) return NULL;
  TnObject *name = tn_string_from_cstr(name_hint);
  TnObject *v = name ? tn_node_alloc(g_types.var) : NULL;
  if (v == NULL) {
    tn_object_release(name);
    return NULL;
  }
  TnIrVar *var = (TnIrVar *)v;
  var->name_hint = name;
  var->type_annotation = retained(type_annotation);
  var->base.checked_type = retained(type_annotation);
  return v;
}

TnObject *tn__ir_type_of_tensor(TnObject *tensor) {
  const DLTensor *dl = tn_tensor_dltensor(tensor);
  return dl ? tn_ir_tensor_type(dl->shape, dl->ndim, dl->dtype) : NULL;
}

TN_API TnObject *tn_ir_constant(TnObject *tensor) {
  if (tn__check_object(tensor, TN_TYPE_TENSOR, "tn_ir_constant", "tensor"))
    return NULL;
  TnObject *type = tn__ir_type_of_tensor(tensor);
  TnObject *c = type ? tn_node_alloc(g_types.constant) : NULL;
  if (c == NULL) {
    tn_object_release(type);
    return NULL;
  }
  ((TnIrConstant *)c)->data = retained(tensor);
  ((TnIrConstant *)c)->base.checked_type = type;
  return c;
}

TN_API TnObject *tn_ir_scalar(double value, DLDataType dtype) {
  DLDevice cpu = {kDLCPU, 0};
  if (dtype.lanes != 1)
    return TN_RAISE(VALUE, "a scalar has one lane, got %u", dtype.lanes), NULL;
  TnObject *t = tn_tensor_empty(NULL, 0, dtype, cpu);
  if (t == NULL) return NULL;
  if (tn__ir_store_scalar(tn_tensor_dltensor(t)->data, dtype, value)) {
    tn_object_release(t);
    return NULL;
  }
  TnObject *c = tn_ir_constant(t);
  tn_object_release(t);
  return c;
}

bool tn__ir_global_name_ok(const char *s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (!(g_ascii_isalnum(s[i]) || s[i] == '_' || s[i] == '.')) return false;
  return true;
}

static int bad_global_name(const char *who, const char *name) {
  return tn_error_raise_in(TN_ERR_VALUE, who, "'%s' is not a global name "
                           "(letters, digits, '_' and '.')", name);
}

TN_API TnObject *tn_ir_global_var(const char *name) {
  if (name == NULL) return tn__raise_null("tn_ir_global_var", "name"), NULL;
  if (!tn__ir_global_name_ok(name, strlen(name)))
    return bad_global_name("tn_ir_global_var", name), NULL;
  TnObject *s = tn_string_from_cstr(name);
  TnObject *g = s ? tn_node_alloc(g_types.global_var) : NULL;
  if (g == NULL) {
    tn_object_release(s);
    return NULL;
  }
  ((TnIrGlobalVar *)g)->name_hint = s;
  return g;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

/* The types of the arguments as a tn.Array, or NULL (no error) when one is
 * still unknown. */
static TnObject *arg_types(TnObject *const *args, int32_t n) {
  TnObject *types[64];
  TnObject **t = n <= 64 ? types : g_new(TnObject *, n);
  TnObject *arr = NULL;
  int32_t i = 0;
  for (; i < n; i++) {
    t[i] = ((TnIrExpr *)args[i])->checked_type;
    if (t[i] == NULL) break;
  }
  if (i == n) arr = tn__ir_array(t, n);
  if (t != types) g_free(t);
  return arr;
}

TnObject *tn__ir_infer_call(TnObject *op, TnObject *types, TnObject *attrs) {
  TnIrOp *o = (TnIrOp *)op;
  const TnObject *infer = tn__ir_op_infer(op);
  if (infer == NULL) return NULL;
  TnAny a[2] = {tn_any_obj(types), tn_any_obj(attrs)}, ret = tn_any_none();
  if (tn_func_call((TnObject *)infer, a, 2, &ret)) return NULL;
  if (!tn_any_is_object(&ret) || !tn__ir_is(ret.v_obj, g_types.type)) {
    tn_error_raise_in(TN_ERR_TYPE, ((TnStringObj *)o->name)->data,
                      "type inference returned %s, not an ir.Type",
                      tn_any_type_key(&ret));
    tn_any_clear(&ret);
    return NULL;
  }
  return ret.v_obj;
}

/* The type of calling a function of known type with arguments of known
 * types; checks them. NULL with an error when they do not fit. */
static TnObject *infer_function_call(const TnIrFunction *f,
                                     TnObject *const *args, int32_t nargs) {
  const TnIrFuncType *ft = (const TnIrFuncType *)f->base.checked_type;
  int64_t n = tn_array_size(ft->arg_types);
  if (n != nargs) {
    tn_error_raise_in(TN_ERR_TYPE, NULL, "call of a function: it takes %" PRId64
                      " arguments, got %d", n, nargs);
    return NULL;
  }
  for (int32_t i = 0; i < nargs; i++) {
    TnObject *want = tn_array_at(ft->arg_types, i)->v_obj;
    TnObject *got = ((TnIrExpr *)args[i])->checked_type;
    if (!tn__ir_type_equal(want, got)) {
      tn__ir_type_mismatch("call of a function", i, want, got);
      return NULL;
    }
  }
  return retained(ft->ret_type);
}

TN_API TnObject *tn_ir_call(TnObject *op, TnObject *const *args, int32_t nargs,
                            TnObject *attrs) {
  const char *who = "tn_ir_call";
  if (op == NULL) return tn__raise_null(who, "op"), NULL;
  bool is_op = tn__ir_is(op, g_types.op);
  if (!is_op && !tn__ir_is(op, g_types.global_var) &&
      !tn__ir_is(op, g_types.function))
    return tn_error_raise_in(TN_ERR_TYPE, who, "op must be an ir.Op, "
                             "ir.GlobalVar or ir.Function, got %s",
                             tn_object_type_key(op)), NULL;
  if (check_items(args, nargs, who, "args", "nargs")) return NULL;
  const char *name = is_op ? ((TnStringObj *)((TnIrOp *)op)->name)->data : who;
  for (int32_t i = 0; i < nargs; i++)
    if (check_expr(args[i], name, "argument", i)) return NULL;
  TnObject *own_attrs = NULL;
  if (is_op) {
    TnIrOp *o = (TnIrOp *)op;
    if (o->num_inputs >= 0 && nargs != o->num_inputs)
      return tn_error_raise_in(TN_ERR_TYPE, NULL, "%s takes %" PRId64
                               " argument%s, got %d", name, o->num_inputs,
                               o->num_inputs == 1 ? "" : "s", nargs), NULL;
    int32_t at = o->attrs_index;
    if (at < 0 && attrs)
      return tn_error_raise_in(TN_ERR_TYPE, NULL,
                               "%s takes no attributes, got a %s", name,
                               tn_object_type_key(attrs)), NULL;
    if (at >= 0 && attrs && !tn_object_is_instance(attrs, at))
      return tn_error_raise_in(TN_ERR_TYPE, name,
                               "attrs must be a %s, got a %s",
                               tn__type_key_or(at, "?"),
                               tn_object_type_key(attrs)), NULL;
    if (at >= 0 && attrs == NULL) {
      own_attrs = tn_node_alloc(at); /* every attribute at its default */
      if (own_attrs == NULL) return NULL;
      attrs = own_attrs;
    }
  } else if (attrs) {
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "only operator calls take attrs"), NULL;
  }
  TnObject *arr = tn__ir_array(args, nargs);
  TnObject *call = arr ? tn_node_alloc(g_types.call) : NULL;
  if (call == NULL) {
    tn_object_release(arr);
    tn_object_release(own_attrs);
    return NULL;
  }
  TnIrCall *c = (TnIrCall *)call;
  c->op = retained(op);
  c->args = arr;
  c->attrs = own_attrs ? own_attrs : retained(attrs);
  /* Infer the type now when every part's type is known. */
  TnObject *type = NULL;
  if (is_op) {
    TnObject *stack[16];
    TnObject **ts = nargs <= 16 ? stack : g_new(TnObject *, nargs);
    int32_t known = 0;
    while (known < nargs && (ts[known] = ((TnIrExpr *)args[known])->checked_type))
      known++;
    bool handled = false;
    if (known == nargs) {
      type = tn__ir_infer_direct(op, ts, nargs, c->attrs, &handled);
      if (!handled) {
        TnObject *types = tn__ir_array(ts, nargs);
        type = types ? tn__ir_infer_call(op, types, c->attrs) : NULL;
        tn_object_release(types);
      }
    }
    if (ts != stack) g_free(ts);
    if (known == nargs && type == NULL) goto fail;
  } else if (tn__ir_is(op, g_types.function) &&
             ((TnIrExpr *)op)->checked_type) {
    TnObject *types = arg_types(args, nargs);
    if (types) {
      tn_object_release(types);
      type = infer_function_call((TnIrFunction *)op, args, nargs);
      if (type == NULL) goto fail;
    }
  }
  c->base.checked_type = type;
  return call;
fail:
  tn_object_release(call);
  return NULL;
}

bool tn__ir_type_equal(const TnObject *a, const TnObject *b) {
  if (a == b) return true;
  if (a == NULL || b == NULL || a->type_index != b->type_index) return false;
  if (a->type_index == g_types.tensor_type) {
    const TnIrTensorType *x = (const TnIrTensorType *)a;
    const TnIrTensorType *y = (const TnIrTensorType *)b;
    const TnShapeObj *sx = (const TnShapeObj *)x->shape;
    const TnShapeObj *sy = (const TnShapeObj *)y->shape;
    return x->dtype.code == y->dtype.code && x->dtype.bits == y->dtype.bits &&
           x->dtype.lanes == y->dtype.lanes && sx->ndim == sy->ndim &&
           memcmp(sx->data, sy->data, sizeof(int64_t) * (size_t)sx->ndim) == 0;
  }
  TnAny u = tn_any_obj((TnObject *)a), v = tn_any_obj((TnObject *)b);
  return tn_structural_equal(&u, &v, 0) == 1;
}

TnObject *tn__ir_call_like(const TnObject *orig, TnObject *op,
                           TnObject *const *args, int32_t nargs,
                           TnObject *attrs) {
  const TnIrCall *o = (const TnIrCall *)orig;
  TnObject *type = o->base.checked_type;
  bool same = type != NULL && op == o->op && attrs == o->attrs &&
              nargs == tn_array_size(o->args);
  for (int32_t i = 0; same && i < nargs; i++)
    same = tn__ir_is(args[i], g_types.expr) &&
           tn__ir_type_equal(((TnIrExpr *)args[i])->checked_type,
                             tn_ir_checked_type(tn_array_at(o->args, i)->v_obj));
  if (!same) return tn_ir_call(op, args, nargs, attrs);
  /* The same operator and attrs on arguments of the same types: the same
   * type, with no need to infer it again. */
  TnObject *arr = tn__ir_array(args, nargs);
  TnObject *call = arr ? tn_node_alloc(g_types.call) : NULL;
  if (call == NULL) {
    tn_object_release(arr);
    return NULL;
  }
  TnIrCall *c = (TnIrCall *)call;
  c->op = retained(op);
  c->args = arr;
  c->attrs = retained(attrs);
  c->base.checked_type = retained(type);
  return call;
}

TN_API TnObject *tn_ir_call_op(const char *op_name, TnObject *const *args,
                               int32_t nargs, const char *const *attr_names,
                               const TnAny *attr_values, int32_t nattrs) {
  const char *who = "tn_ir_call_op";
  if (op_name == NULL) return tn__raise_null(who, "op_name"), NULL;
  if (check_items(args, nargs, who, "args", "nargs")) return NULL;
  if (nattrs < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "nattrs is negative (%d)",
                             nattrs), NULL;
  if (nattrs > 0 && attr_names == NULL)
    return tn__raise_null(who, "attr_names"), NULL;
  if (nattrs > 0 && attr_values == NULL)
    return tn__raise_null(who, "attr_values"), NULL;
  for (int32_t i = 0; i < nattrs; i++) {
    if (attr_names[i] == NULL)
      return tn_error_raise_in(TN_ERR_VALUE, who, "argument 'attr_names[%d]' "
                               "is NULL", i), NULL;
    if (tn__any_check(&attr_values[i], who)) return NULL;
  }
  TnObject *op = tn_ir_op_get(op_name);
  if (op == NULL) return NULL;
  TnIrOp *o = (TnIrOp *)op;
  TnObject *attrs = NULL;
  if (nattrs > 0 && o->attrs_type == NULL) {
    tn_error_raise_in(TN_ERR_TYPE, NULL, "%s takes no attributes, got '%s'",
                      op_name, attr_names[0]);
    tn_object_release(op);
    return NULL;
  }
  if (o->attrs_type) {
    int32_t at = o->attrs_index;
    attrs = at >= 0 ? tn_node_new(at, attr_names, attr_values, nattrs) : NULL;
    if (attrs == NULL) {
      /* Name the operator in the message about its attributes. */
      TnObject *cause = tn_error_take_raised();
      tn_error_raise(
          cause ? tn_error_kind(cause) : tn_error_kind_name(TN_ERR_TYPE),
          "%s: %s", op_name, cause ? tn_error_message(cause) : "bad attrs");
      tn_object_release(cause);
      tn_object_release(op);
      return NULL;
    }
  }
  TnObject *call = tn_ir_call(op, args, nargs, attrs);
  tn_object_release(attrs);
  tn_object_release(op);
  return call;
}

/* ------------------------------------------------------------------------ */
/* Tuples, lets, functions                                                   */
/* ------------------------------------------------------------------------ */

TN_API TnObject *tn_ir_tuple(TnObject *const *fields, int32_t n) {
  if (check_items(fields, n, "tn_ir_tuple", "fields", "n")) return NULL;
  for (int32_t i = 0; i < n; i++)
    if (check_expr(fields[i], "tn_ir_tuple", "field", i)) return NULL;
  TnObject *arr = tn__ir_array(fields, n);
  TnObject *t = arr ? tn_node_alloc(g_types.tuple) : NULL;
  if (t == NULL) {
    tn_object_release(arr);
    return NULL;
  }
  ((TnIrTuple *)t)->fields = arr;
  TnObject *types = arg_types(fields, n);
  if (types) {
    TnObject *tt = tn_node_alloc(g_types.tuple_type);
    if (tt) ((TnIrTupleType *)tt)->fields = types;
    else tn_object_release(types);
    ((TnIrTuple *)t)->base.checked_type = tt;
  }
  return t;
}

TN_API TnObject *tn_ir_tuple_get_item(TnObject *tuple, int64_t index) {
  if (check_expr(tuple, "tn_ir_tuple_get_item", "tuple", -1)) return NULL;
  TnObject *type = NULL, *tt = ((TnIrExpr *)tuple)->checked_type;
  if (tt) {
    if (!tn__ir_is(tt, g_types.tuple_type))
      return TN_RAISE(TYPE, "the value has type %s, not a tuple type",
                      tn_object_type_key(tt)),
             NULL;
    TnObject *fields = ((TnIrTupleType *)tt)->fields;
    int64_t n = tn_array_size(fields);
    if (index < 0 || index >= n)
      return TN_RAISE(INDEX, "index %" PRId64
                      " is out of range for a tuple of %" PRId64, index,
                      n), NULL;
    type = retained(tn_array_at(fields, index)->v_obj);
  } else if (index < 0) {
    return TN_RAISE(INDEX, "index %" PRId64 " is negative", index), NULL;
  }
  TnObject *g = tn_node_alloc(g_types.tuple_get_item);
  if (g == NULL) {
    tn_object_release(type);
    return NULL;
  }
  TnIrTupleGetItem *t = (TnIrTupleGetItem *)g;
  t->tuple = retained(tuple);
  t->index = index;
  t->base.checked_type = type;
  return g;
}

TN_API TnObject *tn_ir_let(TnObject *var, TnObject *value, TnObject *body) {
  const char *who = "tn_ir_let";
  if (!tn__ir_is(var, g_types.var))
    return tn_error_raise_in(TN_ERR_TYPE, who, "var must be an ir.Var, got %s",
                             tn_object_type_key(var)), NULL;
  if (check_expr(value, who, "value", -1) || check_expr(body, who, "body", -1))
    return NULL;
  TnObject *vt = ((TnIrExpr *)var)->checked_type;
  TnObject *xt = ((TnIrExpr *)value)->checked_type;
  if (vt && xt && !tn__ir_type_equal(vt, xt)) {
    tn__ir_type_mismatch("let", 0, vt, xt);
    return NULL;
  }
  TnObject *l = tn_node_alloc(g_types.let);
  if (l == NULL) return NULL;
  TnIrLet *let = (TnIrLet *)l;
  let->var = retained(var);
  let->value = retained(value);
  let->body = retained(body);
  let->base.checked_type = retained(((TnIrExpr *)body)->checked_type);
  return l;
}

TN_API TnObject *tn_ir_function(TnObject *const *params, int32_t nparams,
                                TnObject *body, TnObject *ret_type,
                                TnObject *attrs) {
  const char *who = "tn_ir_function";
  if (check_items(params, nparams, who, "params", "nparams")) return NULL;
  for (int32_t i = 0; i < nparams; i++)
    if (!tn__ir_is(params[i], g_types.var))
      return tn_error_raise_in(TN_ERR_TYPE, who,
                               "parameter %d must be an ir.Var, got %s", i,
                               tn_object_type_key(params[i])),
             NULL;
  if (check_expr(body, who, "body", -1) || check_type(ret_type, who, "ret_type"))
    return NULL;
  if (attrs && tn__check_object2(attrs, TN_TYPE_MAP, TN_TYPE_DICT, who, "attrs"))
    return NULL;
  const TnAny *ak;
  for (int64_t i = attrs ? tn_map_next(attrs, 0, &ak, NULL) : -1; i >= 0;
       i = tn_map_next(attrs, i + 1, &ak, NULL)) {
    const char *s;
    size_t n;
    if (tn__any_text(ak, &s, &n) != TN_TEXT_STR)
      return tn_error_raise_in(TN_ERR_TYPE, who, "attrs: a key is a %s, not "
                               "a str (attributes are named)",
                               tn_any_type_key(ak)), NULL;
  }
  /* an empty map is no attributes (the text cannot tell them apart) */
  if (attrs && tn_map_size(attrs) == 0) attrs = NULL;
  TnObject *bt = ((TnIrExpr *)body)->checked_type;
  if (ret_type && bt && !tn__ir_type_equal(ret_type, bt)) {
    tn__ir_type_mismatch("function body", -1, ret_type, bt);
    return NULL;
  }
  TnObject *arr = tn__ir_array(params, nparams);
  TnObject *f = arr ? tn_node_alloc(g_types.function) : NULL;
  if (f == NULL) {
    tn_object_release(arr);
    return NULL;
  }
  TnIrFunction *fn = (TnIrFunction *)f;
  fn->params = arr;
  fn->body = retained(body);
  fn->ret_type = retained(ret_type);
  fn->attrs = retained(attrs);
  /* Its type when every parameter and the body are typed. */
  TnObject *types = arg_types(params, nparams);
  TnObject *rt = ret_type ? ret_type : bt;
  if (types && rt) {
    TnObject *ft = tn_node_alloc(g_types.func_type);
    if (ft) {
      ((TnIrFuncType *)ft)->arg_types = types;
      ((TnIrFuncType *)ft)->ret_type = retained(rt);
      types = NULL;
    }
    fn->base.checked_type = ft;
  }
  tn_object_release(types);
  return f;
}

/* ------------------------------------------------------------------------ */
/* Modules                                                                   */
/* ------------------------------------------------------------------------ */

TnObject *tn__ir_module_make(TnObject *functions, TnObject *attrs) {
  TnObject *m = tn_node_alloc(g_types.module);
  if (m == NULL) return NULL;
  ((TnIrModule *)m)->functions = retained(functions);
  ((TnIrModule *)m)->attrs = retained(attrs);
  return m;
}

TN_API TnObject *tn_ir_module_new(void) {
  TnObject *fns = tn_map_new(NULL, NULL, 0);
  TnObject *attrs = fns ? tn_map_new(NULL, NULL, 0) : NULL;
  TnObject *m = attrs ? tn__ir_module_make(fns, attrs) : NULL;
  tn_object_release(fns);
  tn_object_release(attrs);
  return m;
}

TN_API TnObject *tn_ir_module_with(const TnObject *mod, const char *name,
                                   TnObject *func) {
  const char *who = "tn_ir_module_with";
  if (tn__check_object(mod, g_types.module, who, "mod")) return NULL;
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  if (!tn__ir_global_name_ok(name, strlen(name)))
    return bad_global_name(who, name), NULL;
  if (!tn__ir_is(func, g_types.function))
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "'%s' must be an ir.Function, got %s", name,
                             tn_object_type_key(func)), NULL;
  const TnIrModule *m = (const TnIrModule *)mod;
  TnObject *fns = retained(m->functions);
  TnAny k = tn_any_cstr(name), v = tn_any_obj(func);
  if (tn_map_set(&fns, &k, &v)) { /* copies: the module keeps its map */
    tn_object_release(fns);
    return NULL;
  }
  TnObject *out = tn__ir_module_make(fns, m->attrs);
  tn_object_release(fns);
  return out;
}

TN_API TnObject *tn_ir_module_with_attr(const TnObject *mod, const char *key,
                                        const TnAny *value) {
  const char *who = "tn_ir_module_with_attr";
  if (tn__check_object(mod, g_types.module, who, "mod")) return NULL;
  if (key == NULL) return tn__raise_null(who, "key"), NULL;
  if (value == NULL) return tn__raise_null(who, "value"), NULL;
  const TnIrModule *m = (const TnIrModule *)mod;
  TnObject *attrs = m->attrs ? retained(m->attrs) : tn_map_new(NULL, NULL, 0);
  if (attrs == NULL) return NULL;
  TnAny k = tn_any_cstr(key);
  if (tn_map_set(&attrs, &k, value)) { /* copies: the module keeps its map */
    tn_object_release(attrs);
    return NULL;
  }
  TnObject *out = tn__ir_module_make(m->functions, attrs);
  tn_object_release(attrs);
  return out;
}

/* "ir.ModuleWithAttr"(mod, key, value) -> a new module. */
static int module_with_attr_packed(void *self, const TnAny *args,
                                   int32_t nargs, TnAny *ret) {
  (void)self;
  const char *key;
  if (nargs != 3 || !tn_any_is_object(&args[0]))
    return tn_error_raise_in(TN_ERR_TYPE, "ir.ModuleWithAttr",
                             "takes (mod, key, value), got %d arguments",
                             nargs);
  if (tn_any_as_str(&args[1], &key, NULL)) return -1;
  TnObject *out = tn_ir_module_with_attr(args[0].v_obj, key, &args[2]);
  if (out == NULL) return -1;
  *ret = tn_any_obj(out);
  return 0;
}

TN_API TnObject *tn_ir_module_get(const TnObject *mod, const char *name) {
  if (tn__check_object(mod, g_types.module, "tn_ir_module_get", "mod"))
    return NULL;
  if (name == NULL) return tn__raise_null("tn_ir_module_get", "name"), NULL;
  TnAny k = tn_any_cstr(name);
  const TnAny *f = tn_map_find(((const TnIrModule *)mod)->functions, &k);
  if (f == NULL)
    return TN_RAISE(KEY, "the module has no function '%s'", name), NULL;
  return retained(f->v_obj);
}

typedef struct {
  GHashTable *defined;
  GPtrArray *free;
  GHashTable *seen;
} FreeVars;

static int note_defs(void *ctx, TnObject *e) {
  FreeVars *fv = ctx;
  if (tn__ir_is(e, g_types.let)) {
    g_hash_table_add(fv->defined, ((TnIrLet *)e)->var);
  } else if (tn__ir_is(e, g_types.function)) {
    TnObject *ps = ((TnIrFunction *)e)->params;
    for (int64_t i = 0; i < tn_array_size(ps); i++)
      g_hash_table_add(fv->defined, tn_array_at(ps, i)->v_obj);
  }
  return 0;
}

static int note_uses(void *ctx, TnObject *e) {
  FreeVars *fv = ctx;
  if (tn__ir_is(e, g_types.var) && !g_hash_table_contains(fv->defined, e) &&
      !g_hash_table_contains(fv->seen, e)) {
    g_hash_table_add(fv->seen, e);
    g_ptr_array_add(fv->free, e);
  }
  return 0;
}

TnObject *tn__ir_free_vars(TnObject *expr) {
  FreeVars fv = {g_hash_table_new(g_direct_hash, g_direct_equal),
                 g_ptr_array_new(),
                 g_hash_table_new(g_direct_hash, g_direct_equal)};
  TnObject *arr = NULL;
  if (tn_ir_post_order_visit(expr, note_defs, &fv) == 0 &&
      tn_ir_post_order_visit(expr, note_uses, &fv) == 0)
    arr = tn__ir_array((TnObject *const *)fv.free->pdata, (int32_t)fv.free->len);
  g_hash_table_destroy(fv.defined);
  g_hash_table_destroy(fv.seen);
  g_ptr_array_free(fv.free, TRUE);
  return arr;
}

TN_API TnObject *tn_ir_module_from_expr(TnObject *expr) {
  if (check_expr(expr, "tn_ir_module_from_expr", "expr", -1)) return NULL;
  TnObject *func;
  if (tn__ir_is(expr, g_types.function)) {
    /* a global function is closed: nothing outside it binds its variables */
    TnObject *free = tn__ir_free_vars(expr);
    if (free == NULL) return NULL;
    int64_t nfree = tn_array_size(free);
    if (nfree > 0) {
      const TnIrVar *v = (const TnIrVar *)tn_array_at(free, 0)->v_obj;
      TN_RAISE(VALUE, "the function uses %%%s, which is neither its parameter "
               "nor bound inside it", ((TnStringObj *)v->name_hint)->data);
    }
    tn_object_release(free);
    if (nfree > 0) return NULL;
    func = retained(expr);
  } else {
    TnObject *params = tn__ir_free_vars(expr);
    if (params == NULL) return NULL;
    const TnArrayObj *a = (const TnArrayObj *)params;
    TnObject **ps = g_new(TnObject *, a->size ? a->size : 1);
    for (int64_t i = 0; i < a->size; i++) ps[i] = a->data[i].v_obj;
    func = tn_ir_function(ps, (int32_t)a->size, expr, NULL, NULL);
    g_free(ps);
    tn_object_release(params);
    if (func == NULL) return NULL;
  }
  TnObject *empty = tn_ir_module_new();
  TnObject *mod = empty ? tn_ir_module_with(empty, "main", func) : NULL;
  tn_object_release(empty);
  tn_object_release(func);
  return mod;
}

void tn__ir_init(void) {
  tn__ir_nodes_init();
  tn__ir_op_registry_init();
  tn__ir_ops_tensor_init();
  tn__ir_ops_movement_init();
  tn__ir_ops_nn_init();
  tn__ir_ops_qnn_init();
  tn__ir_ops_image_init();

  tn__ir_ops_math_init();
  tn__ir_ops_lstm_init();
  tn__ir_ops_onnxq_init();
  tn__ir_well_formed_init();
}
