/*
 * ir.c: the IR builders, passes, reflection queries and node algorithms
 * (structural equality, JSON, printing) as module functions.
 *
 * These are thin: each checks its Python arguments (naming the function and
 * the argument on a mismatch, as the C library does), calls one entry point
 * of the C API, and wraps the result. The pure-Python layer (tvmnode.ir,
 * tvmnode.transform) builds the TVM-style API on top. Calls that may run
 * long or call back into Python from another thread (running passes,
 * parsing, printing, whole-graph algorithms) release the GIL.
 */
#include "tnpy.h"

#include <string.h>

/* ---- argument helpers --------------------------------------------------- */

static int type_name_error(PyObject *o, int32_t type, const char *who,
                           const char *arg) {
  const char *got = tnpy_is_object(o) && tnpy_handle(o)
                        ? tn_object_type_key(tnpy_handle(o))
                        : Py_TYPE(o)->tp_name;
  const char *want = type == TN_TYPE_OBJECT ? "a tvmnode object" : tn_type_key(type);
  if (want == NULL) {
    tn_error_set_raised(NULL);
    want = "?";
  }
  PyErr_Format(PyExc_TypeError, "%s: argument '%s': expected %s, got %s", who,
               arg, want, got);
  return -1;
}

/* A borrowed handle of type `type` from a proxy; None gives NULL when
 * `optional`. */
static int get_obj(PyObject *o, int32_t type, int optional, const char *who,
                   const char *arg, TnObject **out) {
  if (o == Py_None && optional) {
    *out = NULL;
    return 0;
  }
  if (!tnpy_is_object(o) || tnpy_handle(o) == NULL ||
      !tn_object_is_instance(tnpy_handle(o), type))
    return type_name_error(o, type, who, arg);
  *out = tnpy_handle(o);
  return 0;
}

/* A sequence of proxies as a borrowed array of handles. */
typedef struct {
  PyObject *seq;
  TnObject **items;
  Py_ssize_t n;
  TnObject *small[8];
} ObjVec;

static int objvec(ObjVec *v, PyObject *o, int32_t type, const char *who,
                  const char *arg) {
  v->items = v->small;
  v->n = 0;
  v->seq = PySequence_Fast(o, "expected a sequence");
  if (v->seq == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: argument '%s': expected a sequence, "
                 "got %s", who, arg, Py_TYPE(o)->tp_name);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(v->seq);
  if (n > 8) {
    v->items = PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
    if (v->items == NULL) {
      Py_CLEAR(v->seq);
      PyErr_NoMemory();
      return -1;
    }
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(v->seq, i);
    if (!tnpy_is_object(it) || tnpy_handle(it) == NULL ||
        !tn_object_is_instance(tnpy_handle(it), type)) {
      char name[64];
      snprintf(name, sizeof name, "%s[%zd]", arg, i);
      type_name_error(it, type, who, name);
      if (v->items != v->small) PyMem_Free(v->items);
      Py_CLEAR(v->seq);
      return -1;
    }
    v->items[i] = tnpy_handle(it);
  }
  v->n = n;
  return 0;
}

static void objvec_clear(ObjVec *v) {
  if (v->items != v->small) PyMem_Free(v->items);
  Py_CLEAR(v->seq);
}

static PyObject *wrap_or_raise(TnObject *o) {
  return o ? tnpy_wrap(o) : tnpy_raise_tn();
}

static PyObject *str_or_raise(TnObject *s) {
  if (s == NULL) return tnpy_raise_tn();
  PyObject *r = tnpy_obj_to_py(s);
  tn_object_release(s);
  return r;
}

#define IR (tn_ir_types())

/* ---- builders -------------------------------------------------------------- */

static PyObject *ir_tensor_type(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *shape;
  const char *dtype = "float32";
  if (!PyArg_ParseTuple(args, "O|s:tensor_type", &shape, &dtype)) return NULL;
  PyObject *seq = PySequence_Fast(shape, "tensor_type: shape must be a "
                                         "sequence of ints");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int64_t dims[32];
  if (n > 32) {
    Py_DECREF(seq);
    return PyErr_Format(PyExc_ValueError, "tensor_type: %zd dimensions (at "
                        "most 32)", n);
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (dims[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      tnpy_blame_arg("tensor_type shape", i);
      return NULL;
    }
  }
  Py_DECREF(seq);
  DLDataType dt;
  if (tn_dtype_parse(dtype, &dt)) return tnpy_raise_tn();
  return wrap_or_raise(tn_ir_tensor_type(dims, (int32_t)n, dt));
}

static PyObject *ir_tuple_type(PyObject *m, PyObject *fields) {
  (void)m;
  ObjVec v;
  if (objvec(&v, fields, IR->type, "TupleType", "fields")) return NULL;
  TnObject *r = tn_ir_tuple_type(v.items, (int32_t)v.n);
  objvec_clear(&v);
  return wrap_or_raise(r);
}

static PyObject *ir_func_type(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *argt, *ret;
  if (!PyArg_ParseTuple(args, "OO:FuncType", &argt, &ret)) return NULL;
  ObjVec v;
  TnObject *r;
  if (get_obj(ret, IR->type, 0, "FuncType", "ret_type", &r)) return NULL;
  if (objvec(&v, argt, IR->type, "FuncType", "arg_types")) return NULL;
  TnObject *f = tn_ir_func_type(v.items, (int32_t)v.n, r);
  objvec_clear(&v);
  return wrap_or_raise(f);
}

static PyObject *ir_var(PyObject *m, PyObject *args) {
  (void)m;
  const char *name;
  PyObject *ann = Py_None;
  TnObject *a;
  if (!PyArg_ParseTuple(args, "s|O:var", &name, &ann)) return NULL;
  if (get_obj(ann, IR->type, 1, "var", "type_annotation", &a)) return NULL;
  return wrap_or_raise(tn_ir_var(name, a));
}

static PyObject *ir_constant(PyObject *m, PyObject *data) {
  (void)m;
  TnObject *t = NULL;
  if (tnpy_is_object(data)) {
    if (get_obj(data, TN_TYPE_TENSOR, 0, "const", "data", &t)) return NULL;
    tn_object_retain(t);
  } else {
    int not_tensor;
    t = tnpy_tensor_from_py(data, &not_tensor);
    if (t == NULL) {
      if (not_tensor) type_name_error(data, TN_TYPE_TENSOR, "const", "data");
      return NULL;
    }
  }
  TnObject *c = tn_ir_constant(t);
  tn_object_release(t);
  return wrap_or_raise(c);
}

static PyObject *ir_scalar(PyObject *m, PyObject *args) {
  (void)m;
  double v;
  const char *dtype;
  if (!PyArg_ParseTuple(args, "ds:scalar", &v, &dtype)) return NULL;
  DLDataType dt;
  if (tn_dtype_parse(dtype, &dt)) return tnpy_raise_tn();
  return wrap_or_raise(tn_ir_scalar(v, dt));
}

static PyObject *ir_op(PyObject *m, PyObject *name) {
  (void)m;
  const char *s = tnpy_name_utf8(name, "a name");
  return s ? wrap_or_raise(tn_ir_op_get(s)) : NULL;
}

static PyObject *ir_call(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *op, *cargs, *attrs = Py_None;
  if (!PyArg_ParseTuple(args, "OO|O:Call", &op, &cargs, &attrs)) return NULL;
  TnObject *o, *a;
  if (get_obj(op, IR->expr, 0, "Call", "op", &o) ||
      get_obj(attrs, IR->attrs, 1, "Call", "attrs", &a))
    return NULL;
  ObjVec v;
  if (objvec(&v, cargs, IR->expr, "Call", "args")) return NULL;
  TnObject *c = tn_ir_call(o, v.items, (int32_t)v.n, a);
  objvec_clear(&v);
  return wrap_or_raise(c);
}

/* _call_op(name, args, attr_names, attr_values): what every generated
 * operator function calls. Arguments are checked to be expressions here so
 * the error names the operator and the argument index. */
static PyObject *ir_call_op(PyObject *m, PyObject *const *args, Py_ssize_t n) {
  (void)m;
  if (n != 4)
    return PyErr_Format(PyExc_TypeError, "_call_op takes 4 arguments");
  const char *name = tnpy_name_utf8(args[0], "a name");
  if (name == NULL) return NULL;
  if (!PyTuple_Check(args[1]) || !PyTuple_Check(args[2]) ||
      !PyTuple_Check(args[3]) ||
      PyTuple_GET_SIZE(args[2]) != PyTuple_GET_SIZE(args[3]))
    return PyErr_Format(PyExc_TypeError, "_call_op: bad argument tuples");
  Py_ssize_t nargs = PyTuple_GET_SIZE(args[1]);
  Py_ssize_t nattrs = PyTuple_GET_SIZE(args[2]);
  TnObject *small[8], **ops = small;
  const char *snames[16], **names = snames;
  TnAny svals[16], *vals = svals;
  TnObject *stemps[16], **temps = stemps;
  PyObject *res = NULL;
  Py_ssize_t made = 0;
  if (nargs > 8) ops = PyMem_Malloc(sizeof(TnObject *) * (size_t)nargs);
  if (nattrs > 16) {
    names = PyMem_Malloc(sizeof(char *) * (size_t)nattrs);
    vals = PyMem_Malloc(sizeof(TnAny) * (size_t)nattrs);
    temps = PyMem_Malloc(sizeof(TnObject *) * (size_t)nattrs);
  }
  if (!ops || !names || !vals || !temps) {
    PyErr_NoMemory();
    goto out;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) {
    PyObject *a = PyTuple_GET_ITEM(args[1], i);
    if (!tnpy_is_object(a) || tnpy_handle(a) == NULL ||
        !tn_object_is_instance(tnpy_handle(a), IR->expr)) {
      const char *got = tnpy_is_object(a) && tnpy_handle(a)
                            ? tn_object_type_key(tnpy_handle(a))
                            : Py_TYPE(a)->tp_name;
      PyErr_Format(PyExc_TypeError, "%s: argument %zd: expected ir.Expr, got "
                   "%s", name, i, got);
      goto out;
    }
    ops[i] = tnpy_handle(a);
  }
  for (; made < nattrs; made++) {
    names[made] = tnpy_name_utf8(PyTuple_GET_ITEM(args[2], made), "an attribute name");
    if (names[made] == NULL) goto out;
    if (tnpy_arg_from_py(PyTuple_GET_ITEM(args[3], made), &vals[made],
                         &temps[made])) {
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      PyErr_NormalizeException(&t, &v, &tb);
      PyObject *msg = v ? PyObject_Str(v) : NULL;
      PyErr_Format(t, "%s: attribute '%s': %U", name, names[made],
                   msg ? msg : Py_None);
      Py_XDECREF(msg), Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
      goto out;
    }
  }
  res = wrap_or_raise(tn_ir_call_op(name, ops, (int32_t)nargs, names, vals,
                                    (int32_t)nattrs));
out:
  for (Py_ssize_t i = 0; i < made; i++) tn_object_release(temps[i]);
  if (ops && ops != small) PyMem_Free(ops);
  if (names != snames) {
    PyMem_Free(names);
    PyMem_Free(vals);
    PyMem_Free(temps);
  }
  return res;
}

static PyObject *ir_tuple(PyObject *m, PyObject *fields) {
  (void)m;
  ObjVec v;
  if (objvec(&v, fields, IR->expr, "Tuple", "fields")) return NULL;
  TnObject *r = tn_ir_tuple(v.items, (int32_t)v.n);
  objvec_clear(&v);
  return wrap_or_raise(r);
}

static PyObject *ir_tuple_get_item(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *t;
  long long i;
  TnObject *h;
  if (!PyArg_ParseTuple(args, "OL:TupleGetItem", &t, &i)) return NULL;
  if (get_obj(t, IR->expr, 0, "TupleGetItem", "tuple", &h)) return NULL;
  return wrap_or_raise(tn_ir_tuple_get_item(h, i));
}

static PyObject *ir_let(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *var, *value, *body;
  TnObject *a, *b, *c;
  if (!PyArg_ParseTuple(args, "OOO:Let", &var, &value, &body)) return NULL;
  if (get_obj(var, IR->var, 0, "Let", "var", &a) ||
      get_obj(value, IR->expr, 0, "Let", "value", &b) ||
      get_obj(body, IR->expr, 0, "Let", "body", &c))
    return NULL;
  return wrap_or_raise(tn_ir_let(a, b, c));
}

static PyObject *ir_function(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *params, *body, *ret = Py_None, *attrs = Py_None;
  if (!PyArg_ParseTuple(args, "OO|OO:Function", &params, &body, &ret, &attrs))
    return NULL;
  TnObject *b, *r, *a = NULL;
  if (get_obj(body, IR->expr, 0, "Function", "body", &b) ||
      get_obj(ret, IR->type, 1, "Function", "ret_type", &r))
    return NULL;
  TnAny av;
  TnObject *temp = NULL;
  if (attrs != Py_None) {
    if (tnpy_arg_from_py(attrs, &av, &temp)) return NULL;
    if (!tn_any_is_object(&av) ||
        (av.v_obj->type_index != TN_TYPE_MAP &&
         av.v_obj->type_index != TN_TYPE_DICT)) {
      tn_object_release(temp);
      return PyErr_Format(PyExc_TypeError, "Function: argument 'attrs': "
                          "expected a dict, got %s", Py_TYPE(attrs)->tp_name);
    }
    a = av.v_obj;
  }
  ObjVec v;
  if (objvec(&v, params, IR->var, "Function", "params")) {
    tn_object_release(temp);
    return NULL;
  }
  TnObject *f = tn_ir_function(v.items, (int32_t)v.n, b, r, a);
  objvec_clear(&v);
  tn_object_release(temp);
  return wrap_or_raise(f);
}

static PyObject *ir_global_var(PyObject *m, PyObject *name) {
  (void)m;
  const char *s = tnpy_name_utf8(name, "a name");
  return s ? wrap_or_raise(tn_ir_global_var(s)) : NULL;
}

static PyObject *module_new(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return wrap_or_raise(tn_ir_module_new());
}

static PyObject *module_with(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *mod, *func;
  const char *name;
  TnObject *a, *f;
  if (!PyArg_ParseTuple(args, "OsO:IRModule.with", &mod, &name, &func))
    return NULL;
  if (get_obj(mod, IR->module, 0, "IRModule", "mod", &a) ||
      get_obj(func, IR->function, 0, "IRModule", "func", &f))
    return NULL;
  return wrap_or_raise(tn_ir_module_with(a, name, f));
}

static PyObject *module_from_expr(PyObject *m, PyObject *expr) {
  (void)m;
  TnObject *e;
  if (get_obj(expr, IR->expr, 0, "IRModule.from_expr", "expr", &e))
    return NULL;
  return wrap_or_raise(tn_ir_module_from_expr(e));
}

static PyObject *module_get(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *mod;
  const char *name;
  TnObject *a;
  if (!PyArg_ParseTuple(args, "Os:IRModule.get", &mod, &name)) return NULL;
  if (get_obj(mod, IR->module, 0, "IRModule", "mod", &a)) return NULL;
  return wrap_or_raise(tn_ir_module_get(a, name));
}

static PyObject *op_list(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return tnpy_list_from_array(tn_ir_op_list());
}

/* op_register(name, num_inputs, attrs_type_key or None, pattern, infer,
 * doc): infer is any callable (or tvmnode.Function) taking (arg_types,
 * attrs) and returning a type. */
static PyObject *op_register(PyObject *m, PyObject *args) {
  (void)m;
  const char *name, *attrs_key = NULL, *doc = NULL;
  int num_inputs, pattern;
  PyObject *infer;
  if (!PyArg_ParseTuple(args, "siziO|z:op_register", &name, &num_inputs,
                        &attrs_key, &pattern, &infer, &doc))
    return NULL;
  TnObject *f = tnpy_func_from_callable(infer);
  if (f == NULL) return NULL;
  int rc = tn_ir_op_register(name, num_inputs, attrs_key, pattern, f, doc, 0);
  tn_object_release(f);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

/* op_get_attr(op, attr) -> the attribute's value, or None. */
static PyObject *op_get_attr(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *op;
  const char *attr;
  TnObject *o;
  if (!PyArg_ParseTuple(args, "Os:Op.get_attr", &op, &attr) ||
      get_obj(op, IR->op, 0, "Op.get_attr", "self", &o))
    return NULL;
  const TnAny *v = tn_ir_op_get_attr(o, attr);
  if (v == NULL) Py_RETURN_NONE;
  return tnpy_any_to_py(v);
}

/* op_set_attr(op, attr, value, override) */
static PyObject *op_set_attr(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *op, *value;
  const char *attr;
  int override = 0;
  TnObject *o;
  if (!PyArg_ParseTuple(args, "OsO|p:Op.set_attr", &op, &attr, &value,
                        &override) ||
      get_obj(op, IR->op, 0, "Op.set_attr", "self", &o))
    return NULL;
  TnAny v;
  TnObject *temp = NULL;
  if (tnpy_arg_from_py(value, &v, &temp)) {
    tnpy_blame_arg("Op.set_attr", 2);
    return NULL;
  }
  int rc = tn_ir_op_set_attr(o, attr, &v, override);
  if (temp) tn_object_release(temp);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *op_unregister(PyObject *m, PyObject *arg) {
  (void)m;
  const char *name = tnpy_name_utf8(arg, "a name");
  if (name == NULL) return NULL;
  if (tn_ir_op_unregister(name)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *astext(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *node;
  int show_meta = 0;
  TnObject *h, *s;
  if (!PyArg_ParseTuple(args, "O|p:astext", &node, &show_meta)) return NULL;
  if (get_obj(node, TN_TYPE_OBJECT, 0, "astext", "node", &h)) return NULL;
  TNPY_NOGIL(s = tn_ir_astext(h, show_meta));
  return str_or_raise(s);
}

static PyObject *parse(PyObject *m, PyObject *text) {
  (void)m;
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(text, &n);
  if (s == NULL) return NULL;
  TnObject *mod;
  TNPY_NOGIL(mod = tn_ir_parse(s, (size_t)n));
  return wrap_or_raise(mod);
}

/* The two values a structural comparison takes, as TnAny (each holding
 * what the conversion made in *tx / *ty): 0, or -1 raised with nothing
 * held. */
static int two_args(PyObject *a, PyObject *b, TnAny *x, TnAny *y,
                    TnObject **tx, TnObject **ty) {
  if (tnpy_arg_from_py(a, x, tx)) return -1;
  if (tnpy_arg_from_py(b, y, ty)) {
    tn_object_release(*tx);
    return -1;
  }
  return 0;
}

/* ---- node algorithms ------------------------------------------------------- */

static PyObject *structural_equal(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *a, *b;
  int map_free = 0, with_path = 0, skip = 0;
  if (!PyArg_ParseTuple(args, "OO|ppp:structural_equal", &a, &b, &map_free,
                        &with_path, &skip))
    return NULL;
  int flags = (map_free ? TN_STRUCTURAL_MAP_FREE_VARS : 0) |
              (skip ? TN_STRUCTURAL_SKIP_TENSOR_CONTENT : 0);
  TnAny x, y;
  TnObject *tx, *ty;
  if (two_args(a, b, &x, &y, &tx, &ty)) return NULL;
  int r;
  TnObject *path = NULL;
  if (with_path)
    TNPY_READ_NOGIL(r = tn_structural_equal_path(&x, &y, flags, &path));
  else
    TNPY_READ_NOGIL(r = tn_structural_equal(&x, &y, flags));
  tn_object_release(tx);
  tn_object_release(ty);
  if (r < 0) return tnpy_raise_tn();
  if (!with_path) return PyBool_FromLong(r);
  if (path == NULL) Py_RETURN_NONE;
  return str_or_raise(path);
}

/* _structural_mismatch(a, b, map_free_vars=False): None when equal, else
 * the steps to the first difference as a list of (lhs kind, rhs kind, key)
 * (tn_structural_mismatch's TnAccessKind codes). */
static PyObject *structural_mismatch(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *a, *b;
  int map_free = 0, skip = 0;
  if (!PyArg_ParseTuple(args, "OO|pp:get_first_structural_mismatch", &a, &b,
                        &map_free, &skip))
    return NULL;
  int flags = (map_free ? TN_STRUCTURAL_MAP_FREE_VARS : 0) |
              (skip ? TN_STRUCTURAL_SKIP_TENSOR_CONTENT : 0);
  TnAny x, y;
  TnObject *tx, *ty;
  if (two_args(a, b, &x, &y, &tx, &ty)) return NULL;
  int r;
  TnObject *steps = NULL;
  TNPY_READ_NOGIL(r = tn_structural_mismatch(&x, &y, flags, &steps));
  tn_object_release(tx);
  tn_object_release(ty);
  if (r < 0) return tnpy_raise_tn();
  if (steps == NULL) Py_RETURN_NONE;
  int64_t n = tn_array_size(steps);
  PyObject *out = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; out && i < n; i++) {
    const TnObject *st = tn_array_at(steps, i)->v_obj;
    PyObject *lk = tnpy_any_to_py(tn_array_at(st, 0));
    PyObject *rk = lk ? tnpy_any_to_py(tn_array_at(st, 1)) : NULL;
    PyObject *key = rk ? tnpy_any_to_py(tn_array_at(st, 2)) : NULL;
    PyObject *step = key ? PyTuple_Pack(3, lk, rk, key) : NULL;
    Py_XDECREF(lk);
    Py_XDECREF(rk);
    Py_XDECREF(key);
    if (step == NULL) Py_CLEAR(out);
    else PyList_SET_ITEM(out, (Py_ssize_t)i, step);
  }
  tn_object_release(steps);
  return out;
}

static PyObject *structural_hash(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *a;
  int map_free = 0, skip = 0;
  if (!PyArg_ParseTuple(args, "O|pp:structural_hash", &a, &map_free, &skip))
    return NULL;
  int flags = (map_free ? TN_STRUCTURAL_MAP_FREE_VARS : 0) |
              (skip ? TN_STRUCTURAL_SKIP_TENSOR_CONTENT : 0);
  TnAny x;
  TnObject *t;
  if (tnpy_arg_from_py(a, &x, &t)) return NULL;
  uint64_t h = 0;
  int r;
  TNPY_READ_NOGIL(r = tn_structural_hash(&x, flags, &h));
  tn_object_release(t);
  if (r) return tnpy_raise_tn();
  return PyLong_FromUnsignedLongLong(h);
}

static PyObject *json_save(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *a;
  int indent = 0;
  if (!PyArg_ParseTuple(args, "O|i:save_json", &a, &indent)) return NULL;
  TnAny x;
  TnObject *t, *s;
  if (tnpy_arg_from_py(a, &x, &t)) return NULL;
  TNPY_READ_NOGIL(s = tn_json_save(&x, indent));
  tn_object_release(t);
  return str_or_raise(s);
}

static PyObject *json_load(PyObject *m, PyObject *text) {
  (void)m;
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(text, &n);
  if (s == NULL) return NULL;
  TnAny out = tn_any_none();
  int r;
  TNPY_NOGIL(r = tn_json_load(s, (size_t)n, &out));
  if (r) return tnpy_raise_tn();
  return tnpy_any_to_py_steal(&out);
}

static PyObject *repr_value(PyObject *m, PyObject *a) {
  (void)m;
  TnAny x;
  TnObject *t;
  if (tnpy_arg_from_py(a, &x, &t)) return NULL;
  TnObject *s = tn_repr(&x);
  tn_object_release(t);
  return str_or_raise(s);
}

static PyObject *to_dot(PyObject *m, PyObject *a) {
  (void)m;
  TnAny x;
  TnObject *t;
  if (tnpy_arg_from_py(a, &x, &t)) return NULL;
  TnObject *s = tn_to_dot(&x);
  tn_object_release(t);
  return str_or_raise(s);
}

/* ---- passes ------------------------------------------------------------------ */

/* A sequence of names (or None) as a tn.Array of strings (new), for the
 * `required` / `disabled` arguments. */
static int names_array(PyObject *o, const char *who, const char *arg,
                       TnObject **out) {
  *out = NULL;
  if (o == Py_None) return 0;
  TnAny a;
  TnObject *t;
  if (tnpy_arg_from_py(o, &a, &t)) return -1;
  if (t == NULL || t->type_index != TN_TYPE_ARRAY) {
    tn_object_release(t);
    PyErr_Format(PyExc_TypeError, "%s: argument '%s': expected a list of "
                 "names, got %s", who, arg, Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = t;
  return 0;
}

static PyObject *make_pass(PyObject *args, int function_pass) {
  const char *who = function_pass ? "function_pass" : "module_pass";
  const char *name;
  int opt_level;
  PyObject *required, *func;
  if (!PyArg_ParseTuple(args, "siOO", &name, &opt_level, &required, &func))
    return NULL;
  TnObject *req, *f = tnpy_func_from_callable(func);
  if (f == NULL) return NULL;
  if (names_array(required, who, "required", &req)) {
    tn_object_release(f);
    return NULL;
  }
  TnObject *p = function_pass ? tn_pass_function(name, opt_level, req, f)
                              : tn_pass_module(name, opt_level, req, f);
  tn_object_release(req);
  tn_object_release(f);
  return wrap_or_raise(p);
}

static PyObject *pass_module(PyObject *m, PyObject *args) {
  (void)m;
  return make_pass(args, 0);
}

static PyObject *pass_function(PyObject *m, PyObject *args) {
  (void)m;
  return make_pass(args, 1);
}

static int32_t pass_type(void) {
  static int32_t t = -1;
  if (t < 0) t = tn_type_index("ir.Pass");
  return t;
}

static int32_t ctx_type(void) {
  static int32_t t = -1;
  if (t < 0) t = tn_type_index("ir.PassContext");
  return t;
}

static PyObject *pass_sequential(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *passes;
  const char *name = "sequential";
  int opt_level = 0;
  if (!PyArg_ParseTuple(args, "O|si:Sequential", &passes, &name, &opt_level))
    return NULL;
  ObjVec v;
  if (objvec(&v, passes, pass_type(), "Sequential", "passes")) return NULL;
  TnObject *p = tn_pass_sequential(v.items, (int32_t)v.n, name, opt_level);
  objvec_clear(&v);
  return wrap_or_raise(p);
}

static PyObject *pass_run(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *pass, *mod, *ctx = Py_None;
  TnObject *p, *md, *c, *out;
  if (!PyArg_ParseTuple(args, "OO|O:run_pass", &pass, &mod, &ctx)) return NULL;
  if (get_obj(pass, pass_type(), 0, "Pass.__call__", "pass", &p) ||
      get_obj(mod, IR->module, 0, "Pass.__call__", "mod", &md) ||
      get_obj(ctx, ctx_type(), 1, "Pass.__call__", "ctx", &c))
    return NULL;
  tnpy_call_enter();
  TNPY_NOGIL(out = tn_pass_run(p, md, c));
  tnpy_call_leave();
  return wrap_or_raise(out);
}

static PyObject *pass_register(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *pass;
  int override = 0;
  TnObject *p;
  if (!PyArg_ParseTuple(args, "O|p:register_pass", &pass, &override))
    return NULL;
  if (get_obj(pass, pass_type(), 0, "register_pass", "pass", &p)) return NULL;
  if (tn_pass_register(p, override)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *pass_unregister(PyObject *m, PyObject *name) {
  (void)m;
  const char *s = tnpy_name_utf8(name, "a name");
  if (s == NULL) return NULL;
  if (tn_pass_unregister(s)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *pass_get(PyObject *m, PyObject *name) {
  (void)m;
  const char *s = tnpy_name_utf8(name, "a name");
  return s ? wrap_or_raise(tn_pass_get(s)) : NULL;
}

static PyObject *pass_list(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return tnpy_list_from_array(tn_pass_list());
}

static PyObject *pass_config_register(PyObject *m, PyObject *args) {
  (void)m;
  const char *key;
  int t;
  if (!PyArg_ParseTuple(args, "si:register_config", &key, &t)) return NULL;
  if (tn_pass_config_register(key, t)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *pass_context_new(PyObject *m, PyObject *args) {
  (void)m;
  int opt_level = 2;
  PyObject *config = Py_None, *required = Py_None, *disabled = Py_None,
           *instruments = Py_None;
  if (!PyArg_ParseTuple(args, "|iOOOO:PassContext", &opt_level, &config,
                        &required, &disabled, &instruments))
    return NULL;
  TnObject *cfg = NULL, *req = NULL, *dis = NULL, *ins = NULL, *ctx = NULL;
  TnAny a;
  if (config != Py_None) {
    if (!PyDict_Check(config)) {
      PyErr_Format(PyExc_TypeError, "PassContext: argument 'config': "
                   "expected a dict, got %s", Py_TYPE(config)->tp_name);
      goto out;
    }
    if (tnpy_arg_from_py(config, &a, &cfg)) goto out;
  }
  if (names_array(required, "PassContext", "required_pass", &req) ||
      names_array(disabled, "PassContext", "disabled_pass", &dis))
    goto out;
  if (instruments != Py_None) {
    ObjVec v;
    int32_t it = tn_type_index("ir.PassInstrument");
    if (objvec(&v, instruments, it, "PassContext", "instruments")) goto out;
    TnAny items[64];
    if (v.n > 64) {
      objvec_clear(&v);
      PyErr_SetString(PyExc_ValueError, "PassContext: at most 64 "
                      "instruments");
      goto out;
    }
    for (Py_ssize_t i = 0; i < v.n; i++) items[i] = tn_any_obj(v.items[i]);
    ins = tn_array_new(items, v.n);
    objvec_clear(&v);
    if (ins == NULL) {
      tnpy_raise_tn();
      goto out;
    }
  }
  ctx = tn_pass_context_new(opt_level, cfg, req, dis, ins);
  if (ctx == NULL) tnpy_raise_tn();
out:
  tn_object_release(cfg);
  tn_object_release(req);
  tn_object_release(dis);
  tn_object_release(ins);
  return ctx ? tnpy_wrap(ctx) : NULL;
}

static PyObject *pass_context_enter(PyObject *m, PyObject *ctx) {
  (void)m;
  TnObject *c;
  if (get_obj(ctx, ctx_type(), 0, "PassContext.__enter__", "ctx", &c))
    return NULL;
  if (tn_pass_context_enter(c)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *pass_context_exit(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  if (tn_pass_context_exit()) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *pass_context_current(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return wrap_or_raise(tn_pass_context_current());
}

static PyObject *pass_instrument(PyObject *m, PyObject *args) {
  (void)m;
  const char *name;
  PyObject *before, *after;
  if (!PyArg_ParseTuple(args, "sOO:PassInstrument", &name, &before, &after))
    return NULL;
  TnObject *b = NULL, *a = NULL, *r = NULL;
  if (before != Py_None && (b = tnpy_func_from_callable(before)) == NULL)
    return NULL;
  if (after != Py_None && (a = tnpy_func_from_callable(after)) == NULL)
    goto out;
  r = tn_pass_instrument(name, b, a);
  if (r == NULL) tnpy_raise_tn();
out:
  tn_object_release(b);
  tn_object_release(a);
  return r ? tnpy_wrap(r) : NULL;
}

static PyObject *pass_timing_instrument(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return wrap_or_raise(tn_pass_timing_instrument());
}

static PyObject *pass_timing_report(PyObject *m, PyObject *t) {
  (void)m;
  TnObject *h = tnpy_get_handle(t, "timing report");
  if (h == NULL) return NULL;
  return str_or_raise(tn_pass_timing_report(h));
}

/* ---- the type table ---------------------------------------------------------- */

static PyObject *type_index(PyObject *m, PyObject *key) {
  (void)m;
  const char *s = tnpy_name_utf8(key, "a type key");
  if (s == NULL) return NULL;
  int32_t t = tn_type_index(s);
  return t < 0 ? tnpy_raise_tn() : PyLong_FromLong(t);
}

static PyObject *type_key(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  const char *k = tn_type_key((int32_t)t);
  return k ? PyUnicode_FromString(k) : tnpy_raise_tn();
}

static PyObject *type_parent(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  int32_t p;
  if (tn_type_parent((int32_t)t, &p) != 0) return tnpy_raise_tn();
  return PyLong_FromLong(p);
}

static PyObject *type_is_node(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  int32_t n = tn_type_field_count((int32_t)t);
  if (n < 0) tn_error_set_raised(NULL);
  return PyBool_FromLong(n >= 0);
}

static PyObject *type_node_kind(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  int32_t k = tn_type_node_kind((int32_t)t);
  return k < 0 ? tnpy_raise_tn() : PyLong_FromLong(k);
}

static PyObject *type_register(PyObject *m, PyObject *args) {
  (void)m;
  const char *key;
  int parent;
  if (!PyArg_ParseTuple(args, "si:type_register", &key, &parent)) return NULL;
  int32_t t = tn_type_register(key, parent);
  return t < 0 ? tnpy_raise_tn() : PyLong_FromLong(t);
}

/* node_register(key, parent_index, kind, field_names) -> type index */
static PyObject *node_register(PyObject *m, PyObject *args) {
  (void)m;
  const char *key;
  int parent, kind;
  PyObject *names;
  if (!PyArg_ParseTuple(args, "siiO:node_register", &key, &parent, &kind,
                        &names))
    return NULL;
  PyObject *seq = PySequence_Fast(names, "field names must be a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **cn = PyMem_Malloc(sizeof(char *) * (size_t)(n ? n : 1));
  if (cn == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    cn[i] = tnpy_name_utf8(PySequence_Fast_GET_ITEM(seq, i), "a field name");
    if (cn[i] == NULL) {
      PyMem_Free(cn);
      Py_DECREF(seq);
      return NULL;
    }
  }
  int32_t t = tn_node_register_any_slots(key, parent, kind, cn, (int32_t)n);
  PyMem_Free(cn);
  Py_DECREF(seq);
  return t < 0 ? tnpy_raise_tn() : PyLong_FromLong(t);
}

/*
 * node_register_fields(key, parent, kind, fields) -> type index: a node
 * type with typed fields (py_class). Each field is (name, kind, flags,
 * type_key or None, default, doc or None); the default is read only with
 * TN_FIELD_HAS_DEFAULT. Every field gets an 8-aligned slot after the
 * parent's object (tn_type_node_size), so a C parent's hidden trailing
 * members are never overlaid.
 */
/* The node types declared here (py_class): the only ones node_alloc makes
 * blank, since C code may rely on its own types' required fields. */
static PyObject *g_py_declared;

int tnpy_is_py_declared(int32_t type_index) {
  if (g_py_declared == NULL) return 0;
  PyObject *k = PyLong_FromLong(type_index);
  if (k == NULL) return -1;
  int r = PySet_Contains(g_py_declared, k);
  Py_DECREF(k);
  return r;
}

static int note_py_declared(PyObject *ti) {
  if (g_py_declared == NULL && (g_py_declared = PySet_New(NULL)) == NULL)
    return -1;
  return PySet_Add(g_py_declared, ti);
}

static PyObject *node_register_fields(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *keyobj, *fields;
  int parent, kind, no_create = 0;
  if (!PyArg_ParseTuple(args, "OiiO!|p:node_register_fields", &keyobj, &parent,
                        &kind, &PyList_Type, &fields, &no_create))
    return NULL;
  const char *key = tnpy_name_utf8(keyobj, "a type key");
  if (key == NULL) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(fields);
  int64_t base = (int64_t)sizeof(TnObject);
  if (parent != TN_TYPE_OBJECT) {
    base = tn_type_node_size(parent);
    if (base < 0) return tnpy_raise_tn();
  }
  base = (base + 7) / 8 * 8;
  TnFieldDesc *fd = PyMem_Calloc((size_t)(n ? n : 1), sizeof(TnFieldDesc));
  if (fd == NULL) return PyErr_NoMemory();
  PyObject *res = NULL;
  Py_ssize_t made = 0;
  int64_t off = base;
  for (; made < n; made++) {
    PyObject *t = PyList_GET_ITEM(fields, made), *name, *tk, *def, *doc;
    int fkind, flags;
    if (!PyArg_ParseTuple(t, "OiiOOO:node_register_fields", &name, &fkind,
                          &flags, &tk, &def, &doc))
      goto out;
    TnFieldDesc *d = &fd[made];
    if ((d->name = tnpy_name_utf8(name, "a field name")) == NULL) goto out;
    if (tk != Py_None &&
        (d->type_key = tnpy_name_utf8(tk, "a field type key")) == NULL)
      goto out;
    if (doc != Py_None && (d->doc = tnpy_name_utf8(doc, "a doc")) == NULL)
      goto out;
    d->kind = fkind;
    d->flags = flags;
    d->offset = off;
    off += fkind == TN_FIELD_ANY ? 16 : 8;
    d->default_value = tn_any_none();
    if ((flags & TN_FIELD_HAS_DEFAULT) &&
        tnpy_any_from_py(def, &d->default_value))
      goto out;
  }
  TnNodeDesc desc = {key, parent, kind, no_create ? TN_NODE_NO_CREATE : 0,
                     off, fd, (int32_t)n, NULL, NULL};
  int32_t ti = tn_node_register(&desc);
  res = ti < 0 ? tnpy_raise_tn() : PyLong_FromLong(ti);
  if (res != NULL && note_py_declared(res) != 0) Py_CLEAR(res);
out:
  for (Py_ssize_t i = 0; i < made; i++) tn_any_clear(&fd[i].default_value);
  PyMem_Free(fd);
  return res;
}

/* node_new(type_index, names, values) -> object */
static PyObject *node_new(PyObject *m, PyObject *args) {
  (void)m;
  int t;
  PyObject *names, *values;
  if (!PyArg_ParseTuple(args, "iO!O!:node_new", &t, &PyTuple_Type, &names,
                        &PyTuple_Type, &values))
    return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(names);
  if (PyTuple_GET_SIZE(values) != n)
    return PyErr_Format(PyExc_ValueError, "node_new: names and values "
                        "differ in length");
  const char **cn = PyMem_Malloc(sizeof(char *) * (size_t)(n ? n : 1));
  TnAny *cv = PyMem_Malloc(sizeof(TnAny) * (size_t)(n ? n : 1));
  TnObject **temps = PyMem_Calloc((size_t)(n ? n : 1), sizeof(TnObject *));
  PyObject *res = NULL;
  Py_ssize_t made = 0;
  const char *key = tn_type_key(t);
  if (key == NULL) {
    tnpy_raise_tn();
    goto out;
  }
  if (!cn || !cv || !temps) {
    PyErr_NoMemory();
    goto out;
  }
  for (; made < n; made++) {
    cn[made] = tnpy_name_utf8(PyTuple_GET_ITEM(names, made), "a field name");
    if (cn[made] == NULL) goto out;
    if (tnpy_arg_from_py(PyTuple_GET_ITEM(values, made), &cv[made],
                         &temps[made])) {
      PyObject *et, *ev, *etb;
      PyErr_Fetch(&et, &ev, &etb);
      PyErr_NormalizeException(&et, &ev, &etb);
      PyObject *msg = ev ? PyObject_Str(ev) : NULL;
      PyErr_Format(et, "%s: field '%s': %U", key, cn[made], msg ? msg : Py_None);
      Py_XDECREF(msg), Py_XDECREF(et), Py_XDECREF(ev), Py_XDECREF(etb);
      goto out;
    }
  }
  res = wrap_or_raise(tn_node_new(t, cn, cv, (int32_t)n));
out:
  for (Py_ssize_t i = 0; temps && i < made; i++) tn_object_release(temps[i]);
  PyMem_Free(cn);
  PyMem_Free(cv);
  PyMem_Free(temps);
  return res;
}

/* node_alloc(type_index) -> object with every field zero (None) except
 * the defaults: what a Python-declared type's own __init__ fills in. A
 * type only its own code may make (TN_NODE_NO_CREATE) is refused. */
static PyObject *node_alloc(PyObject *m, PyObject *arg) {
  (void)m;
  if (!PyLong_Check(arg))
    return PyErr_Format(PyExc_TypeError, "node_alloc: argument 'type_index' "
                        "expects an int, got %s", Py_TYPE(arg)->tp_name);
  int has = g_py_declared ? PySet_Contains(g_py_declared, arg) : 0;
  if (has < 0) return NULL;
  if (!has)
    return PyErr_Format(PyExc_TypeError, "node_alloc: type index %R is not a "
                        "node type declared from Python", arg);
  return wrap_or_raise(tn_node_alloc((int32_t)PyLong_AsLong(arg)));
}

/* node_set_make(type_index, func): the "__make__" hook of a node type
 * declared from Python with no_create: what generic construction and JSON
 * loading call with the field values (a tn.Map) for the object to use (an
 * enum type answers with its existing member). */
static PyObject *node_set_make(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *ti, *func;
  if (!PyArg_ParseTuple(args, "O!O:node_set_make", &PyLong_Type, &ti, &func))
    return NULL;
  int has = g_py_declared ? PySet_Contains(g_py_declared, ti) : 0;
  if (has < 0) return NULL;
  if (!has)
    return PyErr_Format(PyExc_TypeError, "node_set_make: type index %R is not "
                        "a node type declared from Python", ti);
  if (!PyCallable_Check(func))
    return PyErr_Format(PyExc_TypeError, "node_set_make: argument 'func' "
                        "expects a callable, got %s", Py_TYPE(func)->tp_name);
  TnObject *f = tnpy_func_from_callable(func);
  if (f == NULL) return NULL;
  TnAny a = tn_any_obj(f);
  int rc = tn_type_attr_set("__make__", (int32_t)PyLong_AsLong(ti), &a);
  tn_object_release(f);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *type_methods(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  return tnpy_list_from_array(tn_type_method_list((int32_t)t));
}

static PyObject *type_get_method(PyObject *m, PyObject *args) {
  (void)m;
  int t;
  const char *name;
  if (!PyArg_ParseTuple(args, "is:type_get_method", &t, &name)) return NULL;
  return wrap_or_raise(tn_type_method_get(t, name));
}

static PyObject *type_register_method(PyObject *m, PyObject *args) {
  (void)m;
  int t, override = 0;
  const char *name;
  PyObject *func;
  if (!PyArg_ParseTuple(args, "isO|p:type_register_method", &t, &name, &func,
                        &override))
    return NULL;
  TnObject *f = tnpy_func_from_callable(func);
  if (f == NULL) return NULL;
  int rc = tn_type_method_register(t, name, f, override);
  tn_object_release(f);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *live_count(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  tnpy_error_sweep();
  return PyLong_FromLongLong(tn_object_live_count());
}

static PyObject *live_count_by_type(PyObject *m, PyObject *idx) {
  (void)m;
  long t = PyLong_AsLong(idx);
  if (t == -1 && PyErr_Occurred()) return NULL;
  tnpy_error_sweep();
  int64_t n = tn_object_live_count_by_type((int32_t)t);
  return n < 0 ? tnpy_raise_tn() : PyLong_FromLongLong(n);
}

#define FN(name, f, flags, doc) \
  {name, (PyCFunction)(void (*)(void))(f), flags, doc}

PyMethodDef tnpy_ir_methods[] = {
    FN("ir_tensor_type", ir_tensor_type, METH_VARARGS, "TensorType(shape, dtype)"),
    FN("ir_tuple_type", ir_tuple_type, METH_O, "TupleType(fields)"),
    FN("ir_func_type", ir_func_type, METH_VARARGS, "FuncType(args, ret)"),
    FN("ir_var", ir_var, METH_VARARGS, "var(name, type_annotation=None)"),
    FN("ir_constant", ir_constant, METH_O, "Constant(tensor)"),
    FN("ir_scalar", ir_scalar, METH_VARARGS, "scalar(value, dtype)"),
    FN("ir_op", ir_op, METH_O, "the registered operator"),
    FN("ir_call", ir_call, METH_VARARGS, "Call(op, args, attrs=None)"),
    FN("ir_call_op", ir_call_op, METH_FASTCALL,
       "_call_op(name, args, attr_names, attr_values)"),
    FN("ir_tuple", ir_tuple, METH_O, "Tuple(fields)"),
    FN("ir_tuple_get_item", ir_tuple_get_item, METH_VARARGS,
       "TupleGetItem(tuple, index)"),
    FN("ir_let", ir_let, METH_VARARGS, "Let(var, value, body)"),
    FN("ir_function", ir_function, METH_VARARGS,
       "Function(params, body, ret_type=None, attrs=None)"),
    FN("ir_global_var", ir_global_var, METH_O, "GlobalVar(name)"),
    FN("module_new", module_new, METH_NOARGS, "an empty IRModule"),
    FN("module_with", module_with, METH_VARARGS, "a module with one more "
       "function"),
    FN("module_from_expr", module_from_expr, METH_O, "IRModule.from_expr"),
    FN("module_get", module_get, METH_VARARGS, "a function by name"),
    FN("op_list", op_list, METH_NOARGS, "registered operator names"),
    FN("op_get_attr", op_get_attr, METH_VARARGS, "an operator attribute"),
    FN("op_set_attr", op_set_attr, METH_VARARGS, "set an operator attribute"),
    FN("op_register", op_register, METH_VARARGS,
       "register an operator: (name, num_inputs, attrs_type_key, pattern, "
       "infer, doc)"),
    FN("op_unregister", op_unregister, METH_O, "remove an operator"),
    FN("astext", astext, METH_VARARGS, "astext(node, show_meta=False)"),
    FN("parse", parse, METH_O, "parse(text) -> IRModule"),
    FN("structural_equal", structural_equal, METH_VARARGS,
       "structural_equal(a, b, map_free_vars=False, with_path=False, "
       "skip_tensor_content=False)"),
    FN("_structural_mismatch", structural_mismatch, METH_VARARGS,
       "_structural_mismatch(a, b, map_free_vars=False, "
       "skip_tensor_content=False): None, or the "
       "(lhs kind, rhs kind, key) steps to the first difference."),
    FN("structural_hash", structural_hash, METH_VARARGS,
       "structural_hash(value, map_free_vars=False, "
       "skip_tensor_content=False)"),
    FN("save_json", json_save, METH_VARARGS, "save_json(value, indent=0)"),
    FN("load_json", json_load, METH_O, "load_json(text)"),
    FN("repr", repr_value, METH_O, "the reflection printer's text"),
    FN("to_dot", to_dot, METH_O, "Graphviz DOT of an object graph"),
    FN("pass_module", pass_module, METH_VARARGS,
       "pass_module(name, opt_level, required, func)"),
    FN("pass_function", pass_function, METH_VARARGS,
       "pass_function(name, opt_level, required, func)"),
    FN("pass_sequential", pass_sequential, METH_VARARGS,
       "pass_sequential(passes, name='sequential', opt_level=0)"),
    FN("pass_run", pass_run, METH_VARARGS, "pass_run(pass, mod, ctx=None)"),
    FN("pass_register", pass_register, METH_VARARGS, "register a pass"),
    FN("pass_unregister", pass_unregister, METH_O, "unregister a pass"),
    FN("pass_get", pass_get, METH_O, "a registered pass"),
    FN("pass_list", pass_list, METH_NOARGS, "registered pass names"),
    FN("pass_config_register", pass_config_register, METH_VARARGS,
       "register a PassContext config option"),
    FN("pass_context_new", pass_context_new, METH_VARARGS,
       "pass_context_new(opt_level, config, required, disabled, instruments)"),
    FN("pass_context_enter", pass_context_enter, METH_O, "enter a context"),
    FN("pass_context_exit", pass_context_exit, METH_NOARGS, "exit a context"),
    FN("pass_context_current", pass_context_current, METH_NOARGS,
       "the current PassContext"),
    FN("pass_instrument", pass_instrument, METH_VARARGS,
       "pass_instrument(name, before, after)"),
    FN("pass_timing_instrument", pass_timing_instrument, METH_NOARGS,
       "a timing instrument"),
    FN("pass_timing_report", pass_timing_report, METH_O,
       "the timing instrument's table"),
    FN("type_index", type_index, METH_O, "index of a type key"),
    FN("type_key", type_key, METH_O, "key of a type index"),
    FN("type_parent", type_parent, METH_O, "parent index (-1 for roots)"),
    FN("type_is_node", type_is_node, METH_O, "whether the type has fields"),
    FN("type_node_kind", type_node_kind, METH_O, "TN_NODE_* kind"),
    FN("type_register", type_register, METH_VARARGS, "register a type key"),
    FN("node_register", node_register, METH_VARARGS,
       "node_register(key, parent, kind, names): a node type with Any slots"),
    FN("node_register_fields", node_register_fields, METH_VARARGS,
       "node_register_fields(key, parent, kind, fields): a typed node type"),
    FN("node_new", node_new, METH_VARARGS, "node_new(type_index, names, values)"),
    FN("node_alloc", node_alloc, METH_O, "node_alloc(type_index)"),
    FN("node_set_make", node_set_make, METH_VARARGS,
       "node_set_make(type_index, func)"),
    FN("type_methods", type_methods, METH_O, "a type's own method names"),
    FN("type_get_method", type_get_method, METH_VARARGS,
       "a method of a type or its ancestors"),
    FN("type_register_method", type_register_method, METH_VARARGS,
       "attach a method to a type"),
    FN("live_object_count", live_count, METH_NOARGS,
       "tvmnode objects alive now (tn_object_live_count)"),
    FN("live_object_count_by_type", live_count_by_type, METH_O,
       "alive objects of one type (debug builds)"),
    {NULL, NULL, 0, NULL}};
