/*
 * functor.c: ExprVisitor and ExprMutator, overridable from Python.
 *
 * The walk, the memo and every default visit_* live here in C, so a pass
 * pays Python only for the node kinds it overrides: a mutator that
 * overrides visit_call alone costs one Python call per call node, and the
 * variables, constants and operators in between cost a hash lookup each.
 *
 * Semantics are those of TVM's Python ExprVisitor / ExprMutator: visit(e)
 * dispatches on the node's type to visit_<kind>, results are memoised per
 * node (a shared sub-graph is visited once), and the default visit_<kind>
 * visits the children in order and (for the mutator) rebuilds the node only
 * when a child changed, so an unchanged graph comes back as the very same
 * object. One difference, as in Relay's MixedModeMutator: the children of
 * calls, tuples and tuple items are visited before the parent's visit_*
 * runs, by an explicit stack, so a chain of 100 000 calls needs no Python
 * recursion. An override still sees memoised children when it calls
 * super() or self.visit(arg); it only cannot keep a call's arguments from
 * being visited. Functions and lets are visited top-down, so an override of
 * visit_function can still skip a body.
 */
#include "tnpy.h"

#include <string.h>

enum {
  K_VAR,
  K_CONSTANT,
  K_OP,
  K_CALL,
  K_TUPLE,
  K_TGI,
  K_LET,
  K_FUNCTION,
  K_GLOBAL_VAR,
  K_COUNT
};

static const char *const k_method[K_COUNT] = {
    "visit_var",   "visit_constant",      "visit_op",
    "visit_call",  "visit_tuple",         "visit_tuple_getitem",
    "visit_let",   "visit_function",      "visit_global_var"};

/* pointer -> pointer hash map with open addressing; keys are retained */
typedef struct {
  TnObject *key;
  TnObject *val;
} Slot;

typedef struct {
  PyObject_HEAD
  PyObject *dict;
  int mutator;
  int resolved;                 /* overrides looked up */
  PyObject *override[K_COUNT];  /* the Python function, or NULL */
  Slot *slots;
  size_t cap, len;
} Functor;

static PyObject *g_method_names[K_COUNT];
static PyObject *g_base_methods[2][K_COUNT]; /* [mutator][kind] */

static size_t hash_ptr(const TnObject *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= (uintptr_t)0xed5ad4bbU;
  x ^= x >> 11;
  return (size_t)x;
}

static Slot *memo_find(Functor *f, const TnObject *k) {
  if (f->cap == 0) return NULL;
  size_t mask = f->cap - 1;
  for (size_t i = hash_ptr(k) & mask;; i = (i + 1) & mask) {
    if (f->slots[i].key == k) return &f->slots[i];
    if (f->slots[i].key == NULL) return NULL;
  }
}

/* Insert `k` (retained here) -> `v` (reference taken over). */
static int memo_put(Functor *f, TnObject *k, TnObject *v) {
  if ((f->len + 1) * 2 > f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 256;
    Slot *s = PyMem_Calloc(cap, sizeof(Slot));
    if (s == NULL) {
      tn_object_release(v);
      PyErr_NoMemory();
      return -1;
    }
    for (size_t i = 0; i < f->cap; i++) {
      if (f->slots[i].key == NULL) continue;
      size_t j = hash_ptr(f->slots[i].key) & (cap - 1);
      while (s[j].key) j = (j + 1) & (cap - 1);
      s[j] = f->slots[i];
    }
    PyMem_Free(f->slots);
    f->slots = s;
    f->cap = cap;
  }
  size_t mask = f->cap - 1, i = hash_ptr(k) & mask;
  while (f->slots[i].key) i = (i + 1) & mask;
  tn_object_retain(k);
  f->slots[i].key = k;
  f->slots[i].val = v;
  f->len++;
  return 0;
}

static void memo_clear(Functor *f) {
  for (size_t i = 0; i < f->cap; i++) {
    tn_object_release(f->slots[i].key);
    tn_object_release(f->slots[i].val);
  }
  PyMem_Free(f->slots);
  f->slots = NULL;
  f->cap = f->len = 0;
}

static int kind_of(const TnObject *e) {
  const TnIrTypes *T = tn_ir_types();
  int32_t t = e->type_index;
  if (t == T->call) return K_CALL;
  if (t == T->var) return K_VAR;
  if (t == T->constant) return K_CONSTANT;
  if (t == T->op) return K_OP;
  if (t == T->tuple) return K_TUPLE;
  if (t == T->tuple_get_item) return K_TGI;
  if (t == T->let) return K_LET;
  if (t == T->function) return K_FUNCTION;
  if (t == T->global_var) return K_GLOBAL_VAR;
  return -1;
}

static int resolve(Functor *f) {
  PyObject *type = (PyObject *)Py_TYPE(f);
  for (int k = 0; k < K_COUNT; k++) {
    PyObject *m = PyObject_GetAttr(type, g_method_names[k]);
    if (m == NULL) return -1;
    if (m == g_base_methods[f->mutator][k]) {
      Py_DECREF(m);
      m = NULL;
    }
    Py_XSETREF(f->override[k], m);
  }
  f->resolved = 1;
  return 0;
}

static TnObject *visit_node(Functor *f, TnObject *e);

/* ---- default visits ------------------------------------------------------ */

static TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

/* Visit each of `n` children; with a mutator, `out[i]` gets the result
 * (a reference) and the return tells whether any changed. -1 on error. */
static int visit_all(Functor *f, TnObject *const *kids, int64_t n,
                     TnObject **out) {
  int changed = 0;
  for (int64_t i = 0; i < n; i++) {
    TnObject *r = visit_node(f, kids[i]);
    if (r == NULL) {
      if (out)
        for (int64_t j = 0; j < i; j++) tn_object_release(out[j]);
      return -1;
    }
    if (out) {
      out[i] = r;
      changed |= r != kids[i];
    } else {
      tn_object_release(r);
    }
  }
  return changed;
}

static void release_all(TnObject **a, int64_t n) {
  for (int64_t i = 0; i < n; i++) tn_object_release(a[i]);
}

/* The elements of a tn.Array of objects, borrowed. */
static TnObject **array_objs(TnObject *arr, int64_t *n, TnObject **small,
                             int64_t cap) {
  *n = tn_array_size(arr);
  TnObject **v = *n <= cap ? small : PyMem_Malloc(sizeof(TnObject *) * (size_t)*n);
  if (v == NULL) return PyErr_NoMemory(), NULL;
  for (int64_t i = 0; i < *n; i++) v[i] = tn_array_at(arr, i)->v_obj;
  return v;
}

#define PROPAGATE_TN(x) ((x) ? (x) : (tnpy_raise_tn(), (TnObject *)NULL))

static TnObject *default_visit(Functor *f, int kind, TnObject *e) {
  const TnIrTypes *T = tn_ir_types();
  int mut = f->mutator;
  switch (kind) {
    case K_VAR:
    case K_CONSTANT:
    case K_OP:
    case K_GLOBAL_VAR:
      return retained(e);
    case K_CALL:
    case K_TUPLE: {
      TnObject *arr = kind == K_CALL ? ((TnIrCall *)e)->args
                                     : ((TnIrTuple *)e)->fields;
      int64_t n;
      TnObject *small[9], *rsmall[9], **kids, **res;
      /* slot 0 holds the call's op, the arguments follow */
      int off = kind == K_CALL;
      int64_t na;
      TnObject *asmall[8];
      TnObject **args = array_objs(arr, &na, asmall, 8);
      if (args == NULL) return NULL;
      n = na + off;
      kids = n <= 9 ? small : PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
      res = n <= 9 ? rsmall : PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
      TnObject *out = NULL;
      if (kids == NULL || res == NULL) {
        PyErr_NoMemory();
        goto call_out;
      }
      if (off) kids[0] = ((TnIrCall *)e)->op;
      memcpy(kids + off, args, sizeof(TnObject *) * (size_t)na);
      int changed = visit_all(f, kids, n, mut ? res : NULL);
      if (changed < 0) goto call_out;
      if (!mut || !changed) {
        if (mut) release_all(res, n);
        out = retained(e);
      } else {
        if (kind == K_CALL)
          out = tn_ir_call(res[0], res + 1, (int32_t)na, ((TnIrCall *)e)->attrs);
        else
          out = tn_ir_tuple(res, (int32_t)na);
        release_all(res, n);
        if (out == NULL) tnpy_raise_tn();
      }
    call_out:
      if (args != asmall) PyMem_Free(args);
      if (kids && kids != small) PyMem_Free(kids);
      if (res && res != rsmall) PyMem_Free(res);
      return out;
    }
    case K_TGI: {
      TnIrTupleGetItem *g = (TnIrTupleGetItem *)e;
      TnObject *t = visit_node(f, g->tuple);
      if (t == NULL) return NULL;
      if (!mut || t == g->tuple) {
        tn_object_release(t);
        return retained(e);
      }
      TnObject *out = tn_ir_tuple_get_item(t, g->index);
      tn_object_release(t);
      return PROPAGATE_TN(out);
    }
    case K_LET: {
      TnIrLet *l = (TnIrLet *)e;
      TnObject *kids[3] = {l->var, l->value, l->body}, *res[3];
      int changed = visit_all(f, kids, 3, mut ? res : NULL);
      if (changed < 0) return NULL;
      if (!mut || !changed) {
        if (mut) release_all(res, 3);
        return retained(e);
      }
      TnObject *var = tn_object_is_instance(res[0], T->var) ? res[0] : l->var;
      TnObject *out = tn_ir_let(var, res[1], res[2]);
      release_all(res, 3);
      return PROPAGATE_TN(out);
    }
    case K_FUNCTION: {
      TnIrFunction *fn = (TnIrFunction *)e;
      int64_t np;
      TnObject *psmall[8], *ksmall[9], *rsmall[9];
      TnObject **params = array_objs(fn->params, &np, psmall, 8);
      if (params == NULL) return NULL;
      int64_t n = np + 1;
      TnObject **kids = n <= 9 ? ksmall : PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
      TnObject **res = n <= 9 ? rsmall : PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
      TnObject *out = NULL;
      if (kids == NULL || res == NULL) {
        PyErr_NoMemory();
        goto fn_out;
      }
      memcpy(kids, params, sizeof(TnObject *) * (size_t)np);
      kids[np] = fn->body;
      int changed = visit_all(f, kids, n, mut ? res : NULL);
      if (changed < 0) goto fn_out;
      if (!mut || !changed) {
        if (mut) release_all(res, n);
        out = retained(e);
        goto fn_out;
      }
      /* a parameter replaced by a non-variable keeps its definition */
      for (int64_t i = 0; i < np; i++)
        if (!tn_object_is_instance(res[i], T->var)) {
          tn_object_release(res[i]);
          res[i] = retained(params[i]);
        }
      out = tn_ir_function(res, (int32_t)np, res[np], fn->ret_type, fn->attrs);
      release_all(res, n);
      if (out == NULL) tnpy_raise_tn();
    fn_out:
      if (params != psmall) PyMem_Free(params);
      if (kids && kids != ksmall) PyMem_Free(kids);
      if (res && res != rsmall) PyMem_Free(res);
      return out;
    }
  }
  PyErr_Format(PyExc_TypeError, "cannot visit a %s", tn_object_type_key(e));
  return NULL;
}

/* ---- dispatch --------------------------------------------------------------- */

/* Run visit_<kind> for `e` (a Python override or the default) and memoise
 * the result. Returns a new reference (the visitor returns `e` itself). */
static TnObject *dispatch(Functor *f, TnObject *e) {
  int kind = kind_of(e);
  if (kind < 0) {
    PyErr_Format(PyExc_TypeError, "%s.visit: expected an ir.Expr, got %s",
                 Py_TYPE(f)->tp_name, tn_object_type_key(e));
    return NULL;
  }
  if (!f->resolved && resolve(f)) return NULL;
  TnObject *out;
  if (Py_EnterRecursiveCall(" while visiting an expression")) return NULL;
  PyObject *fn = f->override[kind];
  if (fn == NULL) {
    out = default_visit(f, kind, e);
  } else {
    tn_object_retain(e);
    PyObject *proxy = tnpy_wrap(e);
    PyObject *r = NULL;
    if (proxy) {
      PyObject *args[2] = {(PyObject *)f, proxy};
      r = PyObject_Vectorcall(fn, args, 2, NULL);
      Py_DECREF(proxy);
    }
    out = NULL;
    if (r && f->mutator) {
      TnObject *h = tnpy_is_object(r) ? tnpy_handle(r) : NULL;
      if (h == NULL || !tn_object_is_instance(h, tn_ir_types()->expr)) {
        PyErr_Format(PyExc_TypeError, "%s.%s returned %s, expected an "
                     "ir.Expr", Py_TYPE(f)->tp_name, k_method[kind],
                     h ? tn_object_type_key(h) : Py_TYPE(r)->tp_name);
      } else {
        out = retained(h);
      }
    } else if (r) {
      out = retained(e);
    }
    Py_XDECREF(r);
  }
  Py_LeaveRecursiveCall();
  if (out == NULL) return NULL;
  tn_object_retain(out);
  if (memo_put(f, e, f->mutator ? out : (tn_object_release(out), (TnObject *)NULL))) {
    tn_object_release(out);
    return NULL;
  }
  return out;
}

static int is_dataflow(const TnObject *e) {
  const TnIrTypes *T = tn_ir_types();
  int32_t t = e->type_index;
  return t == T->call || t == T->tuple || t == T->tuple_get_item;
}

/* The children a dataflow node's default visit would visit, in order. */
static int64_t df_child_count(const TnObject *e) {
  const TnIrTypes *T = tn_ir_types();
  if (e->type_index == T->call) return 1 + tn_array_size(((TnIrCall *)e)->args);
  if (e->type_index == T->tuple) return tn_array_size(((TnIrTuple *)e)->fields);
  return 1;
}

static TnObject *df_child(const TnObject *e, int64_t i) {
  const TnIrTypes *T = tn_ir_types();
  if (e->type_index == T->call)
    return i == 0 ? ((TnIrCall *)e)->op
                  : tn_array_at(((TnIrCall *)e)->args, i - 1)->v_obj;
  if (e->type_index == T->tuple)
    return tn_array_at(((TnIrTuple *)e)->fields, i)->v_obj;
  return ((TnIrTupleGetItem *)e)->tuple;
}

typedef struct {
  TnObject *node;
  int64_t next, count;
} Frame;

/* Visit the dataflow nodes below `root` (and `root`) in post order with an
 * explicit stack; everything else is dispatched when its parent reaches
 * it. Returns the result for `root` (new reference). */
static TnObject *walk(Functor *f, TnObject *root) {
  Frame small[64], *stack = small;
  size_t cap = 64, len = 0;
  stack[len++] = (Frame){root, 0, df_child_count(root)};
  TnObject *result = NULL;
  while (len > 0) {
    Frame *top = &stack[len - 1];
    if (top->next < top->count) {
      TnObject *c = df_child(top->node, top->next++);
      if (memo_find(f, c)) continue;
      if (!is_dataflow(c)) {
        TnObject *r = dispatch(f, c);
        if (r == NULL) goto fail;
        tn_object_release(r);
        continue;
      }
      if (len == cap) {
        size_t ncap = cap * 2;
        Frame *s = PyMem_Malloc(sizeof(Frame) * ncap);
        if (s == NULL) {
          PyErr_NoMemory();
          goto fail;
        }
        memcpy(s, stack, sizeof(Frame) * len);
        if (stack != small) PyMem_Free(stack);
        stack = s;
        cap = ncap;
      }
      stack[len++] = (Frame){c, 0, df_child_count(c)};
      continue;
    }
    TnObject *node = top->node;
    len--;
    Slot *hit = memo_find(f, node);
    if (hit) {
      if (len == 0) result = retained(f->mutator ? hit->val : node);
      continue;
    }
    TnObject *r = dispatch(f, node);
    if (r == NULL) goto fail;
    if (len == 0) result = r;
    else tn_object_release(r);
  }
  if (stack != small) PyMem_Free(stack);
  return result;
fail:
  if (stack != small) PyMem_Free(stack);
  return NULL;
}

/* visit(e) on a handle: memo, then the walk or a dispatch. New reference
 * (the visitor returns `e`). */
static TnObject *visit_node(Functor *f, TnObject *e) {
  Slot *hit = memo_find(f, e);
  if (hit) return retained(f->mutator ? hit->val : e);
  if (is_dataflow(e)) return walk(f, e);
  return dispatch(f, e);
}

/* ---- the Python type -------------------------------------------------------- */

static TnObject *expr_arg(PyObject *self, PyObject *arg, const char *who) {
  TnObject *h = tnpy_is_object(arg) ? tnpy_handle(arg) : NULL;
  if (h == NULL || !tn_object_is_instance(h, tn_ir_types()->expr)) {
    PyErr_Format(PyExc_TypeError, "%s.%s: expected an ir.Expr, got %s",
                 Py_TYPE(self)->tp_name, who,
                 h ? tn_object_type_key(h) : Py_TYPE(arg)->tp_name);
    return NULL;
  }
  return h;
}

static PyObject *result(Functor *f, TnObject *r) {
  if (r == NULL) return NULL;
  if (!f->mutator) {
    tn_object_release(r);
    Py_RETURN_NONE;
  }
  return tnpy_wrap(r);
}

static PyObject *functor_visit(PyObject *self, PyObject *arg) {
  TnObject *e = expr_arg(self, arg, "visit");
  return e ? result((Functor *)self, visit_node((Functor *)self, e)) : NULL;
}

/* The default visit_<kind>, callable through super(). */
static PyObject *default_method(PyObject *self, PyObject *arg, int kind) {
  TnObject *e = expr_arg(self, arg, k_method[kind]);
  if (e == NULL) return NULL;
  if (kind_of(e) != kind)
    return PyErr_Format(PyExc_TypeError, "%s.%s: got a %s",
                        Py_TYPE(self)->tp_name, k_method[kind],
                        tn_object_type_key(e));
  Functor *f = (Functor *)self;
  if (!f->resolved && resolve(f)) return NULL;
  return result(f, default_visit(f, kind, e));
}

#define DEFAULT_METHOD(k, name)                            \
  static PyObject *name(PyObject *self, PyObject *arg) {   \
    return default_method(self, arg, k);                   \
  }
DEFAULT_METHOD(K_VAR, m_var)
DEFAULT_METHOD(K_CONSTANT, m_constant)
DEFAULT_METHOD(K_OP, m_op)
DEFAULT_METHOD(K_CALL, m_call)
DEFAULT_METHOD(K_TUPLE, m_tuple)
DEFAULT_METHOD(K_TGI, m_tgi)
DEFAULT_METHOD(K_LET, m_let)
DEFAULT_METHOD(K_FUNCTION, m_function)
DEFAULT_METHOD(K_GLOBAL_VAR, m_global_var)

static PyObject *functor_memo_size(PyObject *self, PyObject *u) {
  (void)u;
  return PyLong_FromSize_t(((Functor *)self)->len);
}

static PyObject *functor_reset(PyObject *self, PyObject *u) {
  (void)u;
  memo_clear((Functor *)self);
  ((Functor *)self)->resolved = 0;
  Py_RETURN_NONE;
}

static PyMethodDef functor_methods[] = {
    {"visit", functor_visit, METH_O,
     "Visit an expression (memoised): dispatches to visit_<kind>."},
    {"visit_var", m_var, METH_O, "Default: nothing to visit."},
    {"visit_constant", m_constant, METH_O, "Default: nothing to visit."},
    {"visit_op", m_op, METH_O, "Default: nothing to visit."},
    {"visit_call", m_call, METH_O, "Default: visit op and args."},
    {"visit_tuple", m_tuple, METH_O, "Default: visit the fields."},
    {"visit_tuple_getitem", m_tgi, METH_O, "Default: visit the tuple."},
    {"visit_let", m_let, METH_O, "Default: visit var, value, body."},
    {"visit_function", m_function, METH_O, "Default: visit params and body."},
    {"visit_global_var", m_global_var, METH_O, "Default: nothing to visit."},
    {"memo_size", functor_memo_size, METH_NOARGS, "Nodes memoised so far."},
    {"reset", functor_reset, METH_NOARGS, "Forget the memo."},
    {NULL, NULL, 0, NULL}};

static PyObject *functor_new(PyTypeObject *type, PyObject *args,
                             PyObject *kw) {
  (void)args, (void)kw;
  Functor *f = (Functor *)type->tp_alloc(type, 0);
  if (f == NULL) return NULL;
  f->mutator = PyType_IsSubtype(type, &TnPyFunctor_Type) &&
               PyObject_HasAttrString((PyObject *)type, "_tn_mutator");
  return (PyObject *)f;
}

static int functor_init(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self, (void)args, (void)kw;
  return 0;
}

static int functor_traverse(PyObject *self, visitproc visit, void *arg) {
  Functor *f = (Functor *)self;
  Py_VISIT(f->dict);
  for (int k = 0; k < K_COUNT; k++) Py_VISIT(f->override[k]);
  return 0;
}

static int functor_clear(PyObject *self) {
  Functor *f = (Functor *)self;
  Py_CLEAR(f->dict);
  for (int k = 0; k < K_COUNT; k++) Py_CLEAR(f->override[k]);
  f->resolved = 0;
  return 0;
}

static void functor_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  functor_clear(self);
  memo_clear((Functor *)self);
  Py_TYPE(self)->tp_free(self);
}

PyTypeObject TnPyFunctor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.ir.ExprFunctor",
    .tp_basicsize = sizeof(Functor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Base of ExprVisitor and ExprMutator.",
    .tp_dictoffset = offsetof(Functor, dict),
    .tp_new = functor_new,
    .tp_init = functor_init,
    .tp_traverse = functor_traverse,
    .tp_clear = functor_clear,
    .tp_dealloc = functor_dealloc,
    .tp_methods = functor_methods,
};

static PyTypeObject VisitorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.ir.ExprVisitor",
    .tp_basicsize = sizeof(Functor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Walks an expression graph; override visit_call, visit_var, "
              "... Each node is visited once.",
};

static PyTypeObject MutatorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.ir.ExprMutator",
    .tp_basicsize = sizeof(Functor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Rewrites an expression graph bottom-up; override visit_call, "
              "... and return the replacement. Each node is visited once; an "
              "unchanged graph comes back as the same object.",
};

int tnpy_functor_init(PyObject *module) {
  if (PyType_Ready(&TnPyFunctor_Type)) return -1;
  VisitorType.tp_base = &TnPyFunctor_Type;
  MutatorType.tp_base = &TnPyFunctor_Type;
  if (PyType_Ready(&VisitorType) || PyType_Ready(&MutatorType)) return -1;
  if (PyDict_SetItemString(MutatorType.tp_dict, "_tn_mutator", Py_True))
    return -1;
  PyType_Modified(&MutatorType);
  for (int k = 0; k < K_COUNT; k++) {
    g_method_names[k] = PyUnicode_InternFromString(k_method[k]);
    if (g_method_names[k] == NULL) return -1;
    for (int m = 0; m < 2; m++) {
      PyObject *t = (PyObject *)(m ? &MutatorType : &VisitorType);
      g_base_methods[m][k] = PyObject_GetAttr(t, g_method_names[k]);
      if (g_base_methods[m][k] == NULL) return -1;
    }
  }
  Py_INCREF(&VisitorType);
  Py_INCREF(&MutatorType);
  if (PyModule_AddObject(module, "ExprVisitor", (PyObject *)&VisitorType) ||
      PyModule_AddObject(module, "ExprMutator", (PyObject *)&MutatorType))
    return -1;
  return 0;
}
