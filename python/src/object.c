/*
 * object.c: proxies of tvmnode objects, their classes, and field access.
 *
 * One Python class stands for each registered type key. The classes are
 * made by the Python layer (which knows about register_object and the
 * metaclass-free class layout) the first time an object of that type is
 * seen, and kept here in a table indexed by type index, so wrapping an
 * object is an array load and one small allocation. Fields are descriptors
 * built from the reflection table: a read goes straight to the field's
 * offset in the C object and converts what it finds, with no name lookup in
 * C. Containers (Array, Map, Shape) are C types so `call.args[0]` costs one
 * indexed read.
 */
#include "tnpy.h"

#include <string.h>

/* ---- the class table --------------------------------------------------- */

static PyObject **g_classes; /* type index -> class (strong refs) */
static int32_t g_nclasses;

static int table_reserve(int32_t t) {
  if (t < g_nclasses) return 0;
  int32_t n = g_nclasses ? g_nclasses : 256;
  while (n <= t) n *= 2;
  PyObject **c = PyMem_Realloc(g_classes, sizeof(PyObject *) * (size_t)n);
  if (c == NULL) return PyErr_NoMemory(), -1;
  memset(c + g_nclasses, 0, sizeof(PyObject *) * (size_t)(n - g_nclasses));
  g_classes = c;
  g_nclasses = n;
  return 0;
}

PyTypeObject *tnpy_class_for(int32_t t) {
  if (TNPY_LIKELY(t >= 0 && t < g_nclasses && g_classes[t]))
    return (PyTypeObject *)g_classes[t];
  if (tnpy_class_factory == NULL) return &TnPyObject_Type;
  PyObject *cls = PyObject_CallFunction(tnpy_class_factory, "i", (int)t);
  if (cls == NULL) return NULL;
  Py_DECREF(cls); /* the factory registered it: the table holds it */
  if (t < g_nclasses && g_classes[t]) return (PyTypeObject *)g_classes[t];
  PyErr_Format(PyExc_RuntimeError, "the class factory did not register a "
               "class for type index %d", (int)t);
  return NULL;
}

/*
 * Heap classes made by `class` statements and type() are always GC types in
 * CPython, although a proxy holds no Python references and can never be
 * part of a cycle. A GC allocation costs a header, tracking and
 * untracking, about a third of a field read that returns a proxy. So a
 * class that adds nothing to the proxy layout (no __dict__, no
 * __weakref__, no slots, no finalizer) is turned into a plain type when it
 * is registered, before it has instances, with a dealloc that frees through
 * the instance's own type (so a GC subclass deriving from it still frees
 * correctly).
 */
static void fast_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  TnObject *h = ((TnPyObject *)self)->handle;
  tp->tp_free(self);
  tn_object_release(h);
  if (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) Py_DECREF(tp);
}

static void make_plain(PyTypeObject *cls) {
  if (!(cls->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
      !(cls->tp_flags & Py_TPFLAGS_HAVE_GC) ||
      cls->tp_basicsize != sizeof(TnPyObject) || cls->tp_itemsize != 0 ||
      cls->tp_dictoffset != 0 || cls->tp_weaklistoffset != 0 ||
      cls->tp_finalize != NULL || cls->tp_del != NULL)
    return;
  for (PyTypeObject *b = cls->tp_base; b && b != &TnPyObject_Type;
       b = b->tp_base)
    if (b->tp_flags & Py_TPFLAGS_HAVE_GC) return;
  cls->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
  cls->tp_free = PyObject_Free;
  cls->tp_dealloc = fast_dealloc;
  cls->tp_traverse = NULL;
  cls->tp_clear = NULL;
  PyType_Modified(cls);
}

/* _register_class(type_index, cls): make `cls` the class of that type.
 * Generated classes of subtypes are forgotten so that they are made again
 * on top of the new class. */
static PyObject *register_class(PyObject *mod, PyObject *args) {
  (void)mod;
  int t;
  PyObject *cls;
  if (!PyArg_ParseTuple(args, "iO!:_register_class", &t, &PyType_Type, &cls))
    return NULL;
  if (!PyType_IsSubtype((PyTypeObject *)cls, &TnPyObject_Type))
    return PyErr_Format(PyExc_TypeError, "_register_class: %R is not a "
                        "subclass of tvmnode.Object", cls);
  if (t < 0 || table_reserve(t)) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_ValueError, "bad type index %d", t);
    return NULL;
  }
  for (int32_t i = 0; i < g_nclasses; i++) {
    if (i == t || g_classes[i] == NULL || !tn_type_is_subtype(i, t)) continue;
    if (PyDict_GetItemString(((PyTypeObject *)g_classes[i])->tp_dict,
                             "_tn_generated"))
      Py_CLEAR(g_classes[i]);
  }
  make_plain((PyTypeObject *)cls);
  Py_INCREF(cls);
  Py_XSETREF(g_classes[t], cls);
  Py_RETURN_NONE;
}

static PyObject *registered_class(PyObject *mod, PyObject *arg) {
  (void)mod;
  long t = PyLong_AsLong(arg);
  if (t == -1 && PyErr_Occurred()) return NULL;
  if (t >= 0 && t < g_nclasses && g_classes[t]) {
    Py_INCREF(g_classes[t]);
    return g_classes[t];
  }
  Py_RETURN_NONE;
}

static PyObject *class_for(PyObject *mod, PyObject *arg) {
  (void)mod;
  long t = PyLong_AsLong(arg);
  if (t == -1 && PyErr_Occurred()) return NULL;
  PyTypeObject *c = tnpy_class_for((int32_t)t);
  Py_XINCREF(c);
  return (PyObject *)c;
}

/* ---- wrapping ------------------------------------------------------------ */

static void init_function(TnPyFunction *f);

PyObject *tnpy_wrap(TnObject *obj) {
  PyTypeObject *cls = tnpy_class_for(obj->type_index);
  if (TNPY_UNLIKELY(cls == NULL)) {
    tn_object_release(obj);
    return NULL;
  }
  TnPyObject *p;
  if (TNPY_LIKELY(cls->tp_basicsize == sizeof(TnPyObject) &&
                  !(cls->tp_flags & Py_TPFLAGS_HAVE_GC))) {
    /* what tp_alloc would do, without the memset and the checks */
    p = PyObject_Malloc(sizeof(TnPyObject));
    if (p == NULL) {
      tn_object_release(obj);
      return PyErr_NoMemory();
    }
    PyObject_Init((PyObject *)p, cls);
  } else {
    p = (TnPyObject *)cls->tp_alloc(cls, 0);
    if (p == NULL) {
      tn_object_release(obj);
      return NULL;
    }
    if (PyType_IsSubtype(cls, &TnPyFunction_Type))
      init_function((TnPyFunction *)p);
  }
  p->handle = obj;
  return (PyObject *)p;
}

TnObject *tnpy_get_handle(PyObject *o, const char *who) {
  if (!PyObject_TypeCheck(o, &TnPyObject_Type)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a tvmnode object, got %s",
                 who, Py_TYPE(o)->tp_name);
    return NULL;
  }
  TnObject *h = ((TnPyObject *)o)->handle;
  if (h == NULL)
    PyErr_Format(PyExc_ValueError, "%s: the %s object has no handle", who,
                 Py_TYPE(o)->tp_name);
  return h;
}

/* ---- Object ---------------------------------------------------------------- */

static PyObject *object_new(PyTypeObject *type, PyObject *args,
                            PyObject *kw) {
  (void)args, (void)kw;
  TnPyObject *p = (TnPyObject *)type->tp_alloc(type, 0);
  if (p) p->handle = NULL;
  return (PyObject *)p;
}

/* Subclasses define __init__; the base accepts and ignores anything, so a
 * proxy class without a constructor can still be instantiated empty and
 * filled with _move_handle_from. */
static int object_init(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self, (void)args, (void)kw;
  return 0;
}

static void object_dealloc(PyObject *self) {
  TnObject *h = ((TnPyObject *)self)->handle;
  ((TnPyObject *)self)->handle = NULL;
  Py_TYPE(self)->tp_free(self);
  tn_object_release(h);
}

static PyObject *object_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !tnpy_is_object(b))
    Py_RETURN_NOTIMPLEMENTED;
  int same = tnpy_handle(a) == tnpy_handle(b);
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t object_hash(PyObject *self) {
  uintptr_t p = (uintptr_t)tnpy_handle(self);
  Py_hash_t h = (Py_hash_t)((p >> 4) | (p << (8 * sizeof(void *) - 4)));
  return h == -1 ? -2 : h;
}

static PyObject *object_repr(PyObject *self) {
  TnObject *h = tnpy_handle(self);
  if (h == NULL)
    return PyUnicode_FromFormat("<%s without a handle>", Py_TYPE(self)->tp_name);
  TnAny a = tn_any_obj(h);
  TnObject *s = tn_repr(&a);
  if (s == NULL) return tnpy_raise_tn();
  PyObject *r = tnpy_obj_to_py(s);
  tn_object_release(s);
  return r;
}

static PyObject *object_same_as(PyObject *self, PyObject *other) {
  return PyBool_FromLong(tnpy_is_object(other) &&
                         tnpy_handle(self) == tnpy_handle(other));
}

/* _move_handle_from(other): take `other`'s handle (TVM's
 * __init_handle_by_constructor__): how a constructor written in Python
 * fills `self` with what a builder returned. */
static PyObject *object_move_handle(PyObject *self, PyObject *other) {
  TnObject *h = tnpy_get_handle(other, "_move_handle_from");
  if (h == NULL) return NULL;
  PyObject *ti = PyObject_GetAttrString((PyObject *)Py_TYPE(self),
                                        "_tn_type_index");
  if (ti == NULL) return NULL;
  long want = PyLong_AsLong(ti);
  Py_DECREF(ti);
  if (want == -1 && PyErr_Occurred()) return NULL;
  if (!tn_object_is_instance(h, (int32_t)want))
    return PyErr_Format(PyExc_TypeError, "%s: the constructor made a %s",
                        Py_TYPE(self)->tp_name, tn_object_type_key(h));
  tn_object_retain(h);
  TnObject *old = ((TnPyObject *)self)->handle;
  ((TnPyObject *)self)->handle = h;
  if (tnpy_calls_in_flight > 0) tnpy_release_later(old);
  else tn_object_release(old);
  Py_RETURN_NONE;
}

Py_ssize_t tnpy_calls_in_flight, tnpy_deferred_count;
static TnObject **g_deferred;
static Py_ssize_t g_deferred_cap;

void tnpy_release_later(TnObject *h) {
  if (h == NULL) return;
  if (tnpy_deferred_count == g_deferred_cap) {
    Py_ssize_t cap = g_deferred_cap ? 2 * g_deferred_cap : 16;
    TnObject **p = PyMem_Realloc(g_deferred, (size_t)cap * sizeof *p);
    if (p == NULL) return; /* out of memory: kept alive (never freed early) */
    g_deferred = p, g_deferred_cap = cap;
  }
  g_deferred[tnpy_deferred_count++] = h;
}

void tnpy_release_deferred(void) {
  /* one at a time, the count updated first: a deleter may run Python that
   * calls into C again and drains the rest */
  while (tnpy_deferred_count > 0) {
    TnObject *h = g_deferred[--tnpy_deferred_count];
    tn_object_release(h);
  }
}

static PyObject *object_type_index(PyObject *self, void *c) {
  (void)c;
  TnObject *h = tnpy_get_handle(self, "_type_index");
  return h ? PyLong_FromLong(h->type_index) : NULL;
}

static PyObject *object_type_key(PyObject *self, void *c) {
  (void)c;
  TnObject *h = tnpy_get_handle(self, "_type_key");
  return h ? PyUnicode_FromString(tn_object_type_key(h)) : NULL;
}

static PyObject *object_handle_addr(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(tnpy_handle(self));
}

static PyObject *object_use_count(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(tn_object_strong_count(tnpy_handle(self)));
}

/* Pickling goes through the JSON graph format: (load_json, (text,)). */
static PyObject *object_reduce(PyObject *self, PyObject *u) {
  (void)u;
  TnObject *h = tnpy_get_handle(self, "__reduce__");
  if (h == NULL) return NULL;
  TnAny a = tn_any_obj(h);
  TnObject *s;
  TNPY_READ_NOGIL(s = tn_json_save(&a, 0));
  if (s == NULL) return tnpy_raise_tn();
  PyObject *text = tnpy_obj_to_py(s);
  tn_object_release(s);
  PyObject *mod = text ? PyImport_ImportModule("tvmnode._ffi") : NULL;
  PyObject *load = mod ? PyObject_GetAttrString(mod, "load_json") : NULL;
  PyObject *r = load ? Py_BuildValue("(O(O))", load, text) : NULL;
  Py_XDECREF(mod);
  Py_XDECREF(load);
  Py_XDECREF(text);
  return r;
}

static PyMethodDef object_methods[] = {
    {"__reduce__", object_reduce, METH_NOARGS,
     "Pickle through the JSON graph format."},
    {"same_as", object_same_as, METH_O,
     "Whether both proxies stand for the same C object."},
    {"_move_handle_from", object_move_handle, METH_O,
     "Take the handle of another proxy (constructors use this)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef object_getset[] = {
    {"_type_index", object_type_index, NULL, "the C type index", NULL},
    {"_type_key", object_type_key, NULL, "the C type key", NULL},
    {"_handle", object_handle_addr, NULL, "address of the C object", NULL},
    {"_use_count", object_use_count, NULL, "strong references to the C "
     "object", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject TnPyObject_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Object",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Base of every proxy of a tvmnode object. `==` is identity of "
              "the C object; structural comparison is "
              "tvmnode.ir.structural_equal.",
    .tp_new = object_new,
    .tp_init = object_init,
    .tp_dealloc = object_dealloc,
    .tp_richcompare = object_richcompare,
    .tp_hash = object_hash,
    .tp_repr = object_repr,
    .tp_methods = object_methods,
    .tp_getset = object_getset,
};

/* ---- fields ------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  const TnFieldDesc *desc;
  int32_t type_index; /* the type that declares the field */
  int32_t index;      /* in tn_type_field_at order */
  PyTypeObject *checked; /* last instance type seen to be a proxy */
  int32_t last_index;    /* last handle type seen to have the field */
} FieldDescr;

PyObject *tnpy_field_read(const TnObject *obj, const TnFieldDesc *d) {
  const char *at = (const char *)obj + d->offset;
  switch (d->kind) {
    case TN_FIELD_OBJ:
    case TN_FIELD_STR: {
      TnObject *v = *(TnObject *const *)at;
      if (v == NULL) Py_RETURN_NONE;
      return tnpy_obj_to_py(v);
    }
    case TN_FIELD_ANY:
      return tnpy_any_to_py((const TnAny *)at);
    case TN_FIELD_INT:
      return PyLong_FromLongLong(*(const int64_t *)at);
    case TN_FIELD_FLOAT:
      return PyFloat_FromDouble(*(const double *)at);
    case TN_FIELD_BOOL:
      return PyBool_FromLong(*(const unsigned char *)at != 0);
    case TN_FIELD_DTYPE:
      return tnpy_dtype_to_py(*(const DLDataType *)at);
    case TN_FIELD_DEVICE:
      return tnpy_device_to_py(*(const DLDevice *)at);
    default:
      return PyErr_Format(PyExc_RuntimeError, "field '%s' has unknown kind %d",
                          d->name, (int)d->kind);
  }
}

static PyObject *field_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  FieldDescr *f = (FieldDescr *)self;
  if (obj == NULL || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  if (TNPY_UNLIKELY(Py_TYPE(obj) != f->checked)) {
    if (!PyObject_TypeCheck(obj, &TnPyObject_Type))
      return PyErr_Format(PyExc_TypeError, "field '%s' read from a %s",
                          f->desc->name, Py_TYPE(obj)->tp_name);
    f->checked = Py_TYPE(obj);
  }
  TnObject *h = ((TnPyObject *)obj)->handle;
  if (TNPY_UNLIKELY(h == NULL))
    return PyErr_Format(PyExc_ValueError, "%s object has no handle",
                        Py_TYPE(obj)->tp_name);
  /* A proxy's class stands for its handle's type (wrapping picks the class
   * by type index, _move_handle_from checks), so the field is there; the
   * check is kept for hand-made descriptors on unrelated classes. */
  if (TNPY_UNLIKELY(h->type_index != f->last_index)) {
    if (!tn_object_is_instance(h, f->type_index))
      return PyErr_Format(PyExc_TypeError, "field '%s' of %s read from a %s",
                          f->desc->name, tn_type_key(f->type_index),
                          tn_object_type_key(h));
    f->last_index = h->type_index;
  }
  return tnpy_field_read(h, f->desc);
}

static int field_set(PyObject *self, PyObject *obj, PyObject *value) {
  FieldDescr *f = (FieldDescr *)self;
  TnObject *h = tnpy_get_handle(obj, f->desc->name);
  if (h == NULL) return -1;
  if (value == NULL) {
    PyErr_Format(PyExc_AttributeError, "field '%s' of %s cannot be deleted",
                 f->desc->name, tn_object_type_key(h));
    return -1;
  }
  if (f->desc->flags & TN_FIELD_READONLY) {
    PyErr_Format(PyExc_AttributeError, "field '%s' of %s is read-only",
                 f->desc->name, tn_object_type_key(h));
    return -1;
  }
  TnAny a;
  TnObject *temp;
  if (tnpy_arg_from_py(value, &a, &temp)) {
    tnpy_blame_arg(f->desc->name, 0);
    return -1;
  }
  int rc = tn_node_set_at(h, f->index, &a);
  tn_object_release(temp);
  if (rc) {
    tnpy_raise_tn();
    return -1;
  }
  return 0;
}

/* Field.set(obj, value): the escape hatch past a read-only field, for a
 * type's own constructing code (tvm-ffi's `type(obj).name.set(obj, v)`):
 * the value is checked as any store is. */
static PyObject *field_set_method(PyObject *self, PyObject *const *args,
                                  Py_ssize_t nargs) {
  FieldDescr *f = (FieldDescr *)self;
  if (nargs != 2)
    return PyErr_Format(PyExc_TypeError,
                        "Field.set(obj, value) takes 2 arguments, %zd given",
                        nargs);
  if (!PyObject_TypeCheck(args[0], &TnPyObject_Type))
    return PyErr_Format(PyExc_TypeError,
                        "Field.set: argument 'obj' expects a tvmnode object "
                        "with field '%s', got %s",
                        f->desc->name, Py_TYPE(args[0])->tp_name);
  TnObject *h = tnpy_get_handle(args[0], "Field.set");
  if (h == NULL) return NULL;
  if (!tn_object_is_instance(h, f->type_index))
    return PyErr_Format(PyExc_TypeError,
                        "Field.set: field '%s' of %s written to a %s",
                        f->desc->name, tn_type_key(f->type_index),
                        tn_object_type_key(h));
  /* the escape hatch is for fields declared from Python: a read-only field
   * of a type declared in C may hold what its own code relies on */
  int py = tnpy_is_py_declared(f->type_index);
  if (py < 0) return NULL;
  if (!py && (f->desc->flags & TN_FIELD_READONLY))
    return PyErr_Format(PyExc_AttributeError,
                        "Field.set: field '%s' of %s is read-only (declared "
                        "in C, only its own code writes it)",
                        f->desc->name, tn_type_key(f->type_index));
  TnAny a;
  TnObject *temp;
  if (tnpy_arg_from_py(args[1], &a, &temp)) {
    tnpy_blame_arg(f->desc->name, 0);
    return NULL;
  }
  int rc = tn_node_init_at(h, f->index, &a);
  tn_object_release(temp);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyMethodDef field_methods[] = {
    {"set", (PyCFunction)(void (*)(void))field_set_method, METH_FASTCALL,
     "set(obj, value): write the field, read-only or not (for the type's "
     "own constructing code)."},
    {NULL, NULL, 0, NULL}};

static PyObject *field_repr(PyObject *self) {
  FieldDescr *f = (FieldDescr *)self;
  return PyUnicode_FromFormat("<field '%s' of %s>", f->desc->name,
                              tn_type_key(f->type_index));
}

static PyObject *field_name(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(((FieldDescr *)self)->desc->name);
}

static PyObject *field_doc(PyObject *self, void *c) {
  (void)c;
  const char *d = ((FieldDescr *)self)->desc->doc;
  if (d == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(d);
}

static PyObject *field_kind(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((FieldDescr *)self)->desc->kind);
}

static PyObject *field_flags(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((FieldDescr *)self)->desc->flags);
}

static PyObject *field_type_key(PyObject *self, void *c) {
  (void)c;
  const char *k = ((FieldDescr *)self)->desc->type_key;
  if (k == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(k);
}

static PyObject *field_default(PyObject *self, void *c) {
  (void)c;
  const TnFieldDesc *d = ((FieldDescr *)self)->desc;
  if (!(d->flags & TN_FIELD_HAS_DEFAULT)) Py_RETURN_NONE;
  return tnpy_any_to_py(&d->default_value);
}

static PyObject *field_has_default(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(
      (((FieldDescr *)self)->desc->flags & TN_FIELD_HAS_DEFAULT) != 0);
}

static PyObject *field_index(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((FieldDescr *)self)->index);
}

/* fget / fset as a property's: fget(obj) reads, fset(obj, value) writes as
 * `obj.name = value` does; fset is None for a read-only field, as
 * apache-tvm-ffi's frozen fields (Field.set stays the way past it). */
static PyObject *field_fget_call(PyObject *self, PyObject *obj) {
  return field_get(self, obj, NULL);
}

static PyObject *field_fset_call(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs) {
  if (nargs != 2)
    return PyErr_Format(PyExc_TypeError, "Field.fset(obj, value) takes 2 "
                        "arguments, %zd given", nargs);
  if (field_set(self, args[0], args[1])) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef g_fget_def = {"fget", (PyCFunction)field_fget_call, METH_O,
                                 "fget(obj): the field's value."};
static PyMethodDef g_fset_def = {"fset", (PyCFunction)(void (*)(void))field_fset_call,
                                 METH_FASTCALL, "fset(obj, value): write the field."};

static PyObject *field_fget(PyObject *self, void *c) {
  (void)c;
  return PyCFunction_New(&g_fget_def, self);
}

static PyObject *field_fset(PyObject *self, void *c) {
  (void)c;
  if (((FieldDescr *)self)->desc->flags & TN_FIELD_READONLY) Py_RETURN_NONE;
  return PyCFunction_New(&g_fset_def, self);
}

static PyGetSetDef field_getset[] = {
    {"name", field_name, NULL, NULL, NULL},
    {"fget", field_fget, NULL, NULL, NULL},
    {"fset", field_fset, NULL, NULL, NULL},
    {"__doc__", field_doc, NULL, NULL, NULL},
    {"kind", field_kind, NULL, NULL, NULL},
    {"flags", field_flags, NULL, NULL, NULL},
    {"type_key", field_type_key, NULL, NULL, NULL},
    {"default", field_default, NULL, NULL, NULL},
    {"has_default", field_has_default, NULL, NULL, NULL},
    {"index", field_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject TnPyFieldDescr_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode._ffi.Field",
    .tp_basicsize = sizeof(FieldDescr),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A reflected field: reads and writes the C object directly.",
    .tp_descr_get = field_get,
    .tp_descr_set = field_set,
    .tp_repr = field_repr,
    .tp_getset = field_getset,
    .tp_methods = field_methods,
};

/* _type_fields(type_index) -> list of Field descriptors, inherited first;
 * each reports the type that declares it through .index ordering. */
static PyObject *type_fields(PyObject *mod, PyObject *arg) {
  (void)mod;
  long t = PyLong_AsLong(arg);
  if (t == -1 && PyErr_Occurred()) return NULL;
  int32_t n = tn_type_field_count((int32_t)t);
  if (n < 0) {
    tn_error_set_raised(NULL);
    return PyList_New(0);
  }
  int32_t parent = -1;
  if (tn_type_parent((int32_t)t, &parent) != 0) return tnpy_raise_tn();
  PyObject *out = PyList_New(n);
  if (out == NULL) return NULL;
  for (int32_t i = 0; i < n; i++) {
    FieldDescr *f = PyObject_New(FieldDescr, &TnPyFieldDescr_Type);
    if (f == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    f->desc = tn_type_field_at((int32_t)t, i);
    /* the declaring type: walk up while the ancestor still has field i */
    int32_t decl = (int32_t)t;
    for (int32_t p = parent; p >= 0 && tn_type_field_count(p) > i;) {
      decl = p;
      if (tn_type_parent(p, &p) != 0) break;
    }
    tn_error_set_raised(NULL);
    f->type_index = decl;
    f->index = i;
    f->checked = NULL;
    f->last_index = -1;
    PyList_SET_ITEM(out, i, (PyObject *)f);
  }
  return out;
}

/* ---- readers and writers of tn.List / tn.Dict (see tnpy.h) ------------------ */

#include <stdatomic.h>
#include <time.h>

static atomic_long g_readers;     /* readers running without the GIL */
static long g_writers_waiting;    /* changed with the GIL held */
static _Thread_local int tl_reading;

int tnpy_reader_begin(void) {
  if (g_writers_waiting > 0) return 0;
  atomic_fetch_add(&g_readers, 1);
  tl_reading++;
  return 1;
}

void tnpy_reader_end(void) {
  tl_reading--;
  atomic_fetch_sub(&g_readers, 1);
}

int tnpy_writer_wait(void) {
  if (TNPY_LIKELY(atomic_load(&g_readers) == 0)) return 0;
  if (tl_reading) {
    PyErr_SetString(PyExc_RuntimeError, "cannot change a tn.List or tn.Dict "
                    "while this thread reads it (structural hash, equality "
                    "or JSON in progress)");
    return -1;
  }
  g_writers_waiting++;
  int rc = 0;
  while (atomic_load(&g_readers) > 0) {
    struct timespec ts = {0, 100000}; /* 0.1 ms */
    Py_BEGIN_ALLOW_THREADS
    nanosleep(&ts, NULL);
    Py_END_ALLOW_THREADS
    if (PyErr_CheckSignals()) {
      rc = -1;
      break;
    }
  }
  g_writers_waiting--;
  return rc;
}

/* ---- Array ------------------------------------------------------------------- */

static Py_ssize_t array_len(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "len");
  if (h == NULL) return -1;
  int64_t n = tn_array_size(h);
  if (n < 0) tnpy_raise_tn();
  return (Py_ssize_t)n;
}

static PyObject *array_item(PyObject *self, Py_ssize_t i) {
  TnObject *h = ((TnPyObject *)self)->handle;
  if (h == NULL) return tnpy_get_handle(self, "getitem"), NULL;
  int64_t n = tn_array_size(h);
  if (i < 0 || i >= n)
    return PyErr_Format(PyExc_IndexError, "array index %zd out of range for "
                        "an array of %lld", i, (long long)n);
  return tnpy_any_to_py(tn_array_at(h, i));
}

static PyObject *array_subscript(PyObject *self, PyObject *key) {
  if (PyIndex_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) i += array_len(self);
    return array_item(self, i);
  }
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step, len = array_len(self);
    if (len < 0 || PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t n = PySlice_AdjustIndices(len, &start, &stop, step);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t k = 0; out && k < n; k++) {
      PyObject *v = array_item(self, start + k * step);
      if (v == NULL) Py_CLEAR(out);
      else PyList_SET_ITEM(out, k, v);
    }
    return out;
  }
  return PyErr_Format(PyExc_TypeError, "array indices must be integers or "
                      "slices, not %s", Py_TYPE(key)->tp_name);
}

static int array_ass_item(PyObject *self, Py_ssize_t i, PyObject *v) {
  TnObject *h = tnpy_get_handle(self, "setitem");
  if (h == NULL) return -1;
  if (h->type_index != TN_TYPE_LIST) {
    PyErr_SetString(PyExc_TypeError, "tn.Array is immutable (use a tn.List, "
                    "or build a new array)");
    return -1;
  }
  int rc;
  if (v == NULL) {
    if (tnpy_writer_wait()) return -1;
    rc = tn_list_pop(h, i, NULL);
  } else {
    TnAny a;
    TnObject *temp;
    if (tnpy_arg_from_py(v, &a, &temp)) return -1;
    rc = tnpy_writer_wait() ? -2 : tn_list_set(h, i, &a);
    tn_object_release(temp);
    if (rc == -2) return -1;
  }
  if (rc) tnpy_raise_tn();
  return rc;
}

static PyObject *array_append(PyObject *self, PyObject *v) {
  TnObject *h = tnpy_get_handle(self, "append");
  if (h == NULL) return NULL;
  if (h->type_index != TN_TYPE_LIST)
    return PyErr_Format(PyExc_TypeError, "tn.Array is immutable: append "
                        "needs a tn.List");
  TnAny a;
  TnObject *temp;
  if (tnpy_arg_from_py(v, &a, &temp)) return NULL;
  if (tnpy_writer_wait()) {
    tn_object_release(temp);
    return NULL;
  }
  int rc = tn_list_append(h, &a);
  tn_object_release(temp);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static TnObject *list_handle(PyObject *self, const char *who) {
  TnObject *h = tnpy_get_handle(self, who);
  if (h && h->type_index != TN_TYPE_LIST)
    return PyErr_Format(PyExc_TypeError, "tn.Array is immutable: %s needs a "
                        "tn.List", who), NULL;
  return h;
}

static PyObject *list_insert(PyObject *self, PyObject *const *args,
                             Py_ssize_t n) {
  TnObject *h = list_handle(self, "insert");
  if (h == NULL) return NULL;
  if (n != 2)
    return PyErr_Format(PyExc_TypeError, "insert expected 2 arguments, got "
                        "%zd", n);
  Py_ssize_t i = PyNumber_AsSsize_t(args[0], PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  TnAny a;
  TnObject *temp;
  if (tnpy_arg_from_py(args[1], &a, &temp)) return NULL;
  int rc = -1;
  if (tnpy_writer_wait() == 0) {
    /* Python's clamping: insert(-100, x) on a short list goes first */
    int64_t size = tn_array_size(h);
    if (i < 0) i = i + size < 0 ? 0 : i + size;
    if (i > size) i = size;
    rc = tn_list_insert(h, i, &a);
    if (rc) tnpy_raise_tn();
  }
  tn_object_release(temp);
  if (rc) return NULL;
  Py_RETURN_NONE;
}

static PyObject *list_pop(PyObject *self, PyObject *const *args,
                          Py_ssize_t n) {
  TnObject *h = list_handle(self, "pop");
  if (h == NULL) return NULL;
  if (n > 1)
    return PyErr_Format(PyExc_TypeError, "pop expected at most 1 argument, "
                        "got %zd", n);
  Py_ssize_t i = -1;
  if (n == 1) {
    i = PyNumber_AsSsize_t(args[0], PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
  }
  if (tnpy_writer_wait()) return NULL;
  TnAny out = tn_any_none();
  if (tn_list_pop(h, i, &out)) return tnpy_raise_tn();
  return tnpy_any_to_py_steal(&out);
}

static PyObject *list_clear(PyObject *self, PyObject *u) {
  (void)u;
  TnObject *h = list_handle(self, "clear");
  if (h == NULL || tnpy_writer_wait()) return NULL;
  if (tn_list_clear(h)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *list_extend(PyObject *self, PyObject *it) {
  TnObject *h = list_handle(self, "extend");
  if (h == NULL) return NULL;
  /* convert everything first, so a failure changes nothing */
  PyObject *t = PySequence_Tuple(it);
  if (t == NULL) return NULL;
  TnObject *arr = tnpy_container_from_py(t, 0);
  Py_DECREF(t);
  if (arr == NULL) return NULL;
  int rc = tnpy_writer_wait();
  for (int64_t i = 0, n = tn_array_size(arr); rc == 0 && i < n; i++)
    if ((rc = tn_list_append(h, tn_array_at(arr, i))) != 0) tnpy_raise_tn();
  tn_object_release(arr);
  if (rc) return NULL;
  Py_RETURN_NONE;
}

static PySequenceMethods array_as_sequence = {
    .sq_length = array_len,
    .sq_item = array_item,
    .sq_ass_item = array_ass_item,
};
static int list_ass_subscript(PyObject *self, PyObject *key, PyObject *v);
static PyObject *seq_index(PyObject *self, PyObject *const *args,
                           Py_ssize_t n);
static PyObject *seq_count(PyObject *self, PyObject *value);
/* (a tn.Array refuses assignment there, naming tn.List) */
static PyMappingMethods array_as_mapping = {
    .mp_length = array_len,
    .mp_subscript = array_subscript,
    .mp_ass_subscript = list_ass_subscript,
};
static PyMethodDef array_methods[] = {
    {"append", array_append, METH_O, "Append to a tn.List."},
    {"index", (PyCFunction)(void (*)(void))seq_index, METH_FASTCALL,
     "index(value, start=0, stop=len): the first index whose item == value."},
    {"count", seq_count, METH_O, "How many items == value."},
    {NULL, NULL, 0, NULL}};

/* A new proxy of `type` holding `h` (transfer full). */
static PyObject *new_proxy(PyTypeObject *type, TnObject *h) {
  if (h == NULL) return NULL;
  TnPyObject *p = (TnPyObject *)type->tp_alloc(type, 0);
  if (p == NULL) {
    tn_object_release(h);
    return NULL;
  }
  p->handle = h;
  return (PyObject *)p;
}

/* Array(iterable=()) / List(iterable=()): built at once from the items. */
static PyObject *seq_new(PyTypeObject *type, PyObject *args, PyObject *kw,
                         int mutable_) {
  PyObject *src = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, mutable_ ? "|O:List" : "|O:Array",
                                   (char *[]){"items", NULL}, &src))
    return NULL;
  PyObject *t = src ? PySequence_Tuple(src) : PyTuple_New(0);
  if (t == NULL) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s() takes an iterable, not %s",
                   mutable_ ? "List" : "Array", Py_TYPE(src)->tp_name);
    }
    return NULL;
  }
  TnObject *h = tnpy_container_from_py(t, mutable_);
  Py_DECREF(t);
  return new_proxy(type, h);
}

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  return seq_new(type, args, kw, 0);
}

static PyObject *list_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  return seq_new(type, args, kw, 1);
}

/* Array + Array (or list / tuple, either side): a new sequence of the
 * left operand's kind (tn.Array unless it is a tn.List). */
static PyObject *array_add(PyObject *a, PyObject *b) {
  PyObject *parts[2] = {a, b};
  TnObject *hs[2] = {NULL, NULL};
  int mutable_ = 0;
  PyObject *res = NULL;
  for (int k = 0; k < 2; k++) {
    PyObject *o = parts[k];
    if (PyObject_TypeCheck(o, &TnPyArray_Type)) {
      hs[k] = tnpy_get_handle(o, "+");
      if (hs[k] == NULL) goto out;
      tn_object_retain(hs[k]);
      if (k == 0) mutable_ = hs[k]->type_index == TN_TYPE_LIST;
    } else if (PyList_Check(o) || PyTuple_Check(o)) {
      if ((hs[k] = tnpy_container_from_py(o, 0)) == NULL) goto out;
    } else {
      Py_INCREF(Py_NotImplemented);
      res = Py_NotImplemented;
      goto out;
    }
  }
  int64_t n0 = tn_array_size(hs[0]), n1 = tn_array_size(hs[1]);
  TnAny *items = PyMem_Malloc(sizeof(TnAny) * (size_t)(n0 + n1 + 1));
  if (items == NULL) {
    PyErr_NoMemory();
    goto out;
  }
  for (int64_t i = 0; i < n0; i++) items[i] = *tn_array_at(hs[0], i);
  for (int64_t i = 0; i < n1; i++) items[n0 + i] = *tn_array_at(hs[1], i);
  TnObject *r = mutable_ ? tn_list_new(items, n0 + n1)
                         : tn_array_new(items, n0 + n1);
  PyMem_Free(items);
  if (r == NULL) {
    tnpy_raise_tn();
    goto out;
  }
  res = tnpy_wrap(r);
out:
  tn_object_release(hs[0]);
  tn_object_release(hs[1]);
  return res;
}

/* ---- structural == and hash of containers -------------------------------- */

/*
 * Array, List, Map and Dict compare and hash by content, through C's
 * structural equality and hash (as apache-tvm-ffi's containers do, mutable
 * ones included): `Array([1, 2]) == Array([1, 2])`, and an Array or a List
 * equals a Python list or tuple with the same items. The walk uses no C
 * stack, so depth is no danger; a List or Dict that contains itself is a
 * ValueError naming the path (equal to itself without a walk). Other nodes
 * keep identity (`same_as`); tvmnode.structural_equal compares them.
 */
static PyObject *structural_compare(TnObject *x, TnObject *y, int op) {
  TnAny a = tn_any_obj(x), b = tn_any_obj(y);
  int r;
  TNPY_READ_NOGIL(r = tn_structural_equal(&a, &b, 0));
  if (r < 0) return tnpy_raise_tn();
  return PyBool_FromLong(op == Py_EQ ? r : !r);
}

/* The items of sequence `h` as a new tn.Array or tn.List (transfer full). */
static TnObject *seq_copy_as(TnObject *h, int mutable_) {
  int64_t n = tn_array_size(h);
  if (n < 0) return tnpy_raise_tn(), NULL;
  TnAny *items = PyMem_Malloc(sizeof(TnAny) * (size_t)(n ? n : 1));
  if (items == NULL) return PyErr_NoMemory(), NULL;
  for (int64_t i = 0; i < n; i++) items[i] = *tn_array_at(h, i);
  TnObject *r = mutable_ ? tn_list_new(items, n) : tn_array_new(items, n);
  PyMem_Free(items);
  if (r == NULL) tnpy_raise_tn();
  return r;
}

static PyObject *seq_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  TnObject *ha = tnpy_get_handle(a, "==");
  if (ha == NULL) return NULL;
  int mutable_ = ha->type_index == TN_TYPE_LIST;
  TnObject *other;
  if (PyObject_TypeCheck(b, &TnPyArray_Type)) {
    TnObject *hb = tnpy_get_handle(b, "==");
    if (hb == NULL) return NULL;
    if (hb->type_index == ha->type_index)
      return structural_compare(ha, hb, op);
    /* an Array and a List with the same items are equal */
    other = seq_copy_as(hb, mutable_);
  } else if (PyList_Check(b) || PyTuple_Check(b)) {
    other = tnpy_container_from_py(b, mutable_);
    if (other == NULL && (PyErr_ExceptionMatches(PyExc_TypeError) ||
                          PyErr_ExceptionMatches(PyExc_ValueError))) {
      PyErr_Clear(); /* items that cannot be tvmnode values: not equal */
      return PyBool_FromLong(op == Py_NE);
    }
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (other == NULL) return NULL;
  PyObject *r = structural_compare(ha, other, op);
  tn_object_release(other);
  return r;
}

static PyObject *map_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &TnPyMap_Type))
    Py_RETURN_NOTIMPLEMENTED;
  TnObject *ha = tnpy_get_handle(a, "=="), *hb = NULL;
  if (ha == NULL || (hb = tnpy_get_handle(b, "==")) == NULL) return NULL;
  return structural_compare(ha, hb, op);
}

static Py_hash_t container_hash(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "hash");
  if (h == NULL) return -1;
  TnAny a = tn_any_obj(h);
  uint64_t v = 0;
  int r;
  TNPY_READ_NOGIL(r = tn_structural_hash(&a, 0, &v));
  if (r) {
    tnpy_raise_tn();
    return -1;
  }
  Py_hash_t ph = (Py_hash_t)v;
  return ph == -1 ? -2 : ph;
}

/* ---- List: slices, reverse, index, count, remove ----------------------------- */

/* Make list `h` hold exactly `items[0..n)` (borrowed). The caller has
 * waited for readers, and holds its own references to the items. */
static int list_refill(TnObject *h, const TnAny *items, int64_t n) {
  if (tn_list_clear(h) || tn_list_reserve(h, n)) return tnpy_raise_tn(), -1;
  for (int64_t i = 0; i < n; i++)
    if (tn_list_append(h, &items[i])) return tnpy_raise_tn(), -1;
  return 0;
}

/* l[slice] = iterable, del l[slice]: the new items are converted first
 * (so `l[1:3] = l` reads l as it was, and a failure changes nothing); the
 * slice is resolved against the list as it is once writing may start. */
static int list_ass_slice(PyObject *self, TnObject *h, PyObject *key,
                          PyObject *v) {
  TnObject *repl = NULL, *snap = NULL;
  TnAny *out = NULL;
  int rc = -1;
  if (v != NULL) {
    PyObject *t = PySequence_Tuple(v);
    if (t == NULL) {
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "List slice assignment: expected an "
                     "iterable, got %s", Py_TYPE(v)->tp_name);
      }
      return -1;
    }
    repl = tnpy_container_from_py(t, 0);
    Py_DECREF(t);
    if (repl == NULL) return -1;
  }
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0 || tnpy_writer_wait())
    goto done;
  (void)self;
  int64_t len = tn_array_size(h), nr = repl ? tn_array_size(repl) : 0;
  Py_ssize_t cnt = PySlice_AdjustIndices((Py_ssize_t)len, &start, &stop, step);
  if (step != 1 && v != NULL && nr != cnt) {
    PyErr_Format(PyExc_ValueError, "attempt to assign sequence of size %lld "
                 "to extended slice of size %zd", (long long)nr, cnt);
    goto done;
  }
  if (step != 1 && v != NULL) { /* same length: item by item */
    for (Py_ssize_t k = 0; k < cnt; k++)
      if (tn_list_set(h, start + k * step, tn_array_at(repl, k))) {
        tnpy_raise_tn();
        goto done;
      }
    rc = 0;
    goto done;
  }
  /* keep the old items alive while the list is rebuilt */
  if ((snap = seq_copy_as(h, 0)) == NULL) goto done;
  out = PyMem_Malloc(sizeof(TnAny) * (size_t)(len + nr + 1));
  if (out == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  int64_t m = 0;
  if (step == 1) {
    if (stop < start) stop = start;
    for (int64_t i = 0; i < start; i++) out[m++] = *tn_array_at(snap, i);
    for (int64_t i = 0; i < nr; i++) out[m++] = *tn_array_at(repl, i);
    for (int64_t i = stop; i < len; i++) out[m++] = *tn_array_at(snap, i);
  } else { /* del l[a:b:step] */
    char *drop = PyMem_Calloc((size_t)(len ? len : 1), 1);
    if (drop == NULL) {
      PyErr_NoMemory();
      goto done;
    }
    for (Py_ssize_t k = 0; k < cnt; k++) drop[start + k * step] = 1;
    for (int64_t i = 0; i < len; i++)
      if (!drop[i]) out[m++] = *tn_array_at(snap, i);
    PyMem_Free(drop);
  }
  rc = list_refill(h, out, m);
done:
  PyMem_Free(out);
  tn_object_release(snap);
  tn_object_release(repl);
  return rc;
}

static int list_ass_subscript(PyObject *self, PyObject *key, PyObject *v) {
  TnObject *h = list_handle(self, v ? "setitem" : "delitem");
  if (h == NULL) return -1;
  if (PySlice_Check(key)) return list_ass_slice(self, h, key, v);
  if (!PyIndex_Check(key)) {
    PyErr_Format(PyExc_TypeError, "List indices must be integers or slices, "
                 "not %s", Py_TYPE(key)->tp_name);
    return -1;
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return -1;
  int64_t n = tn_array_size(h);
  if (i < 0) i += (Py_ssize_t)n;
  if (i < 0 || i >= n) {
    PyErr_Format(PyExc_IndexError, "List %s index out of range",
                 v ? "assignment" : "deletion");
    return -1;
  }
  return array_ass_item(self, i, v);
}

static PyObject *list_reverse(PyObject *self, PyObject *u) {
  (void)u;
  TnObject *h = list_handle(self, "reverse");
  if (h == NULL || tnpy_writer_wait()) return NULL;
  for (int64_t i = 0, j = tn_array_size(h) - 1; i < j; i++, j--) {
    TnAny a, b;
    tn_any_copy(&a, tn_array_at(h, i));
    tn_any_copy(&b, tn_array_at(h, j));
    int rc = tn_list_set(h, i, &b) || tn_list_set(h, j, &a);
    tn_any_clear(&a);
    tn_any_clear(&b);
    if (rc) return tnpy_raise_tn();
  }
  Py_RETURN_NONE;
}

/* The first index in [start, stop) whose item == value, -1 when none, -2
 * raised. The size is read again at each step: == may run Python code that
 * changes the list. */
static Py_ssize_t seq_find(PyObject *self, PyObject *value, Py_ssize_t start,
                           Py_ssize_t stop, Py_ssize_t *count) {
  TnObject *h = tnpy_get_handle(self, "index");
  if (h == NULL) return -2;
  if (count) *count = 0;
  for (Py_ssize_t i = start; i < stop && i < tn_array_size(h); i++) {
    PyObject *item = array_item(self, i);
    if (item == NULL) return -2;
    int eq = PyObject_RichCompareBool(item, value, Py_EQ);
    Py_DECREF(item);
    if (eq < 0) return -2;
    if (eq && count == NULL) return i;
    if (eq) ++*count;
  }
  return -1;
}

static Py_ssize_t index_arg(PyObject *o, const char *what) {
  if (!PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "index: %s must be an int, not %s", what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  return PyNumber_AsSsize_t(o, NULL); /* clamped, as list.index does */
}

static PyObject *seq_index(PyObject *self, PyObject *const *args,
                           Py_ssize_t n) {
  if (n < 1 || n > 3)
    return PyErr_Format(PyExc_TypeError, "index expected 1 to 3 arguments, "
                        "got %zd", n);
  Py_ssize_t len = array_len(self), start = 0, stop = PY_SSIZE_T_MAX;
  if (len < 0) return NULL;
  if (n > 1 && (start = index_arg(args[1], "start")) == -1 && PyErr_Occurred())
    return NULL;
  if (n > 2 && (stop = index_arg(args[2], "stop")) == -1 && PyErr_Occurred())
    return NULL;
  if (start < 0 && (start += len) < 0) start = 0;
  if (stop < 0 && (stop += len) < 0) stop = 0;
  Py_ssize_t i = seq_find(self, args[0], start, stop, NULL);
  if (i == -2) return NULL;
  if (i < 0)
    return PyErr_Format(PyExc_ValueError, "%R is not in the %s", args[0],
                        Py_TYPE(self)->tp_name);
  return PyLong_FromSsize_t(i);
}

static PyObject *seq_count(PyObject *self, PyObject *value) {
  Py_ssize_t c = 0;
  if (seq_find(self, value, 0, PY_SSIZE_T_MAX, &c) == -2) return NULL;
  return PyLong_FromSsize_t(c);
}

static PyObject *list_remove(PyObject *self, PyObject *value) {
  TnObject *h = list_handle(self, "remove");
  if (h == NULL) return NULL;
  Py_ssize_t i = seq_find(self, value, 0, PY_SSIZE_T_MAX, NULL);
  if (i == -2) return NULL;
  if (i < 0)
    return PyErr_Format(PyExc_ValueError, "List.remove(x): %R is not in the "
                        "list", value);
  if (tnpy_writer_wait()) return NULL;
  if (i >= tn_array_size(h)) /* changed while comparing */
    return PyErr_Format(PyExc_RuntimeError, "List.remove: the list changed "
                        "during the search");
  if (tn_list_pop(h, i, NULL)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}


/* l += iterable extends a tn.List in place (as list does); a tn.Array
 * falls back to + and rebinds. */
static PyObject *seq_inplace_add(PyObject *a, PyObject *b) {
  TnObject *h = tnpy_get_handle(a, "+=");
  if (h == NULL) return NULL;
  if (h->type_index != TN_TYPE_LIST) Py_RETURN_NOTIMPLEMENTED;
  PyObject *r = list_extend(a, b);
  if (r == NULL) return NULL;
  Py_DECREF(r);
  Py_INCREF(a);
  return a;
}

static PyNumberMethods array_as_number = {.nb_add = array_add,
                                          .nb_inplace_add = seq_inplace_add};

PyTypeObject TnPyArray_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Array",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.Array: an immutable sequence. Array(iterable) builds one "
              "(nested lists become Arrays, dicts Maps); a + b concatenates.",
    .tp_as_number = &array_as_number,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &array_as_mapping,
    .tp_richcompare = seq_richcompare,
    .tp_hash = container_hash,
    .tp_methods = array_methods,
    .tp_new = array_new,
};

static PyMethodDef list_methods[] = {
    {"insert", (PyCFunction)(void (*)(void))list_insert, METH_FASTCALL,
     "insert(index, value)"},
    {"pop", (PyCFunction)(void (*)(void))list_pop, METH_FASTCALL,
     "pop(index=-1): remove and return an item."},
    {"clear", list_clear, METH_NOARGS, "Remove every item."},
    {"extend", list_extend, METH_O, "Append every item of an iterable."},
    {"reverse", list_reverse, METH_NOARGS, "Reverse the items in place."},
    {"remove", list_remove, METH_O, "Remove the first item == value."},
    {NULL, NULL, 0, NULL}};

static PyMappingMethods list_as_mapping = {
    .mp_length = array_len,
    .mp_subscript = array_subscript,
    .mp_ass_subscript = list_ass_subscript,
};

PyTypeObject TnPyList_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.List",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.List: a mutable sequence shared by reference. "
              "List(iterable=()) builds one.",
    .tp_as_mapping = &list_as_mapping,
    .tp_methods = list_methods,
    .tp_new = list_new,
};

/* ---- Map --------------------------------------------------------------------- */

static Py_ssize_t map_len(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "len");
  if (h == NULL) return -1;
  int64_t n = tn_map_size(h);
  if (n < 0) tnpy_raise_tn();
  return (Py_ssize_t)n;
}

/*
 * Array keys compare by value from Python. A tuple key becomes a new
 * tn.Array each time it is converted, and the C map compares objects by
 * identity (tn_any_equal), so m[(1, 2)] would never find the (1, 2) the map
 * was built with. So when an Array key misses the hashed look-up, it is
 * compared item by item with the map's Array keys: a linear scan, paid only
 * by such a miss (str, int and other keys take the hashed path alone).
 * Items compare as map keys do (the same bits are equal, so a NaN finds
 * itself; then tn_any_equal), nested Arrays again by value. No Python code
 * runs during the scan, so a tn.Dict cannot change under it.
 */
static int key_items_equal(const TnAny *a, const TnAny *b);

static int arrays_equal(const TnObject *x, const TnObject *y) {
  if (x == y) return 1;
  int64_t n = tn_array_size(x);
  if (n < 0 || n != tn_array_size(y)) {
    tn_error_set_raised(NULL);
    return 0;
  }
  if (Py_EnterRecursiveCall(" while comparing tn.Array map keys")) return -1;
  int r = 1;
  for (int64_t i = 0; r == 1 && i < n; i++)
    r = key_items_equal(tn_array_at(x, i), tn_array_at(y, i));
  Py_LeaveRecursiveCall();
  return r;
}

static int key_items_equal(const TnAny *a, const TnAny *b) {
  if (a == NULL || b == NULL) return 0;
  if (memcmp(a, b, sizeof *a) == 0) return 1;
  if (a->type_index == TN_TYPE_ARRAY && b->type_index == TN_TYPE_ARRAY)
    return arrays_equal(a->v_obj, b->v_obj);
  return tn_any_equal(a, b);
}

/* The entry of map `h` whose key equals `k`: found by hash, or for an Array
 * `k` by value. NULL when absent (with an exception only on error);
 * `*key_out` (may be NULL) is pointed at the map's own key. */
static const TnAny *map_entry(TnObject *h, const TnAny *k,
                              const TnAny **key_out) {
  const TnAny *v = tn_map_find(h, k);
  if (v || k->type_index != TN_TYPE_ARRAY) {
    if (key_out) *key_out = k;
    return v;
  }
  const TnAny *ek, *ev;
  for (int64_t pos = tn_map_next(h, 0, &ek, &ev); pos >= 0;
       pos = tn_map_next(h, pos + 1, &ek, &ev)) {
    if (ek->type_index != TN_TYPE_ARRAY) continue;
    int r = arrays_equal(ek->v_obj, k->v_obj);
    if (r < 0) return NULL;
    if (r) {
      if (key_out) *key_out = ek;
      return ev;
    }
  }
  return NULL;
}

/* The value for `key` (borrowed), NULL without an exception if absent. */
static const TnAny *map_find(PyObject *self, PyObject *key) {
  TnObject *h = tnpy_get_handle(self, "map lookup");
  if (h == NULL) return NULL;
  TnAny k;
  TnObject *temp;
  if (tnpy_arg_from_py(key, &k, &temp)) return NULL;
  const TnAny *v = map_entry(h, &k, NULL);
  tn_object_release(temp);
  return v;
}

/* `*k` replaced by an owned copy of the key of `h` it equals by value, when
 * it is an Array that the map holds under another object (so a tn.Dict
 * update or removal hits the entry the look-up finds). 0, or -1 with an
 * exception. The caller releases `*held` (NULL when nothing was copied). */
static int map_own_key(TnObject *h, TnAny *k, TnObject **held) {
  *held = NULL;
  const TnAny *mk = NULL;
  if (map_entry(h, k, &mk) == NULL) return PyErr_Occurred() ? -1 : 0;
  if (mk != k && tn_any_is_object(mk)) {
    *held = mk->v_obj;
    tn_object_retain(*held);
    *k = *mk;
  }
  return 0;
}

static PyObject *map_subscript(PyObject *self, PyObject *key) {
  const TnAny *v = map_find(self, key);
  if (v) return tnpy_any_to_py(v);
  if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
  return NULL;
}

static int map_contains(PyObject *self, PyObject *key) {
  const TnAny *v = map_find(self, key);
  if (v) return 1;
  return PyErr_Occurred() ? -1 : 0;
}

static int map_ass_subscript(PyObject *self, PyObject *key, PyObject *v) {
  TnObject *h = tnpy_get_handle(self, "setitem");
  if (h == NULL) return -1;
  if (h->type_index != TN_TYPE_DICT) {
    PyErr_SetString(PyExc_TypeError, "tn.Map is immutable (use a tn.Dict)");
    return -1;
  }
  TnAny k, a;
  TnObject *kt, *vt = NULL;
  if (tnpy_arg_from_py(key, &k, &kt)) return -1;
  int rc;
  if (v != NULL && tnpy_arg_from_py(v, &a, &vt)) {
    tn_object_release(kt);
    return -1;
  }
  TnObject *held = NULL;
  if (tnpy_writer_wait()) {
    rc = -2;
  } else if (map_own_key(h, &k, &held)) {
    rc = -2;
  } else if (v == NULL) {
    rc = tn_dict_erase(h, &k);
  } else {
    rc = tn_dict_set(h, &k, &a);
  }
  tn_object_release(held);
  tn_object_release(kt);
  tn_object_release(vt);
  if (rc == -2) return -1;
  if (rc) tnpy_raise_tn();
  return rc;
}

static TnObject *dict_handle(PyObject *self, const char *who) {
  TnObject *h = tnpy_get_handle(self, who);
  if (h && h->type_index != TN_TYPE_DICT)
    return PyErr_Format(PyExc_TypeError, "tn.Map is immutable: %s needs a "
                        "tn.Dict", who), NULL;
  return h;
}

static PyObject *dict_pop(PyObject *self, PyObject *const *args,
                          Py_ssize_t n) {
  TnObject *h = dict_handle(self, "pop");
  if (h == NULL) return NULL;
  if (n < 1 || n > 2)
    return PyErr_Format(PyExc_TypeError, "pop expected 1 or 2 arguments, got "
                        "%zd", n);
  TnAny k;
  TnObject *kt;
  if (tnpy_arg_from_py(args[0], &k, &kt)) return NULL;
  PyObject *res = NULL;
  TnAny v;
  TnObject *held = NULL;
  if (tnpy_writer_wait() == 0 && map_own_key(h, &k, &held) == 0) {
    if (tn_map_get(h, &k, &v) == 0) {
      res = tnpy_any_to_py_steal(&v);
      if (res && tn_dict_erase(h, &k)) {
        Py_CLEAR(res);
        tnpy_raise_tn();
      }
    } else {
      tn_error_set_raised(NULL);
      if (n == 2) {
        res = args[1];
        Py_INCREF(res);
      } else {
        PyErr_SetObject(PyExc_KeyError, args[0]);
      }
    }
  }
  tn_object_release(held);
  tn_object_release(kt);
  return res;
}

static PyObject *dict_clear(PyObject *self, PyObject *u) {
  (void)u;
  TnObject *h = dict_handle(self, "clear");
  if (h == NULL || tnpy_writer_wait()) return NULL;
  if (tn_dict_clear(h)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

/* which: 0 keys, 1 values, 2 items */
static PyObject *map_list(PyObject *self, int which) {
  TnObject *h = tnpy_get_handle(self, "map");
  if (h == NULL) return NULL;
  PyObject *out = PyList_New(0);
  const TnAny *k, *v;
  for (int64_t pos = tn_map_next(h, 0, &k, &v); out && pos >= 0;
       pos = tn_map_next(h, pos + 1, &k, &v)) {
    PyObject *item;
    /* converting may run Python code that changes a tn.Dict: hold copies */
    TnAny kc, vc;
    tn_any_copy(&kc, k);
    tn_any_copy(&vc, v);
    if (which == 0) {
      item = tnpy_any_to_py(&kc);
    } else if (which == 1) {
      item = tnpy_any_to_py(&vc);
    } else {
      PyObject *pk = tnpy_any_to_py(&kc), *pv = pk ? tnpy_any_to_py(&vc) : NULL;
      item = pv ? PyTuple_Pack(2, pk, pv) : NULL;
      Py_XDECREF(pk);
      Py_XDECREF(pv);
    }
    tn_any_clear(&kc);
    tn_any_clear(&vc);
    if (item == NULL || PyList_Append(out, item)) Py_CLEAR(out);
    Py_XDECREF(item);
  }
  return out;
}

/* keys()/values()/items(): views, as a dict's and tvm-ffi's are: the
 * collections.abc view classes over the map itself (len, iteration,
 * `in`, set operations on keys and items), so they follow later changes
 * of a Dict. */
static PyObject *map_view(PyObject *self, const char *kind) {
  PyObject *abc = PyImport_ImportModule("collections.abc");
  if (abc == NULL) return NULL;
  PyObject *cls = PyObject_GetAttrString(abc, kind);
  Py_DECREF(abc);
  if (cls == NULL) return NULL;
  PyObject *view = PyObject_CallOneArg(cls, self);
  Py_DECREF(cls);
  return view;
}
static PyObject *map_keys(PyObject *self, PyObject *u) {
  (void)u;
  return map_view(self, "KeysView");
}
static PyObject *map_values(PyObject *self, PyObject *u) {
  (void)u;
  return map_view(self, "ValuesView");
}
static PyObject *map_items(PyObject *self, PyObject *u) {
  (void)u;
  return map_view(self, "ItemsView");
}
static PyObject *map_iter(PyObject *self) {
  PyObject *keys = map_list(self, 0);
  if (keys == NULL) return NULL;
  PyObject *it = PyObject_GetIter(keys);
  Py_DECREF(keys);
  return it;
}

static PyObject *map_get(PyObject *self, PyObject *const *args,
                         Py_ssize_t n) {
  if (n < 1 || n > 2)
    return PyErr_Format(PyExc_TypeError, "get expected 1 or 2 arguments, "
                        "got %zd", n);
  const TnAny *v = map_find(self, args[0]);
  if (v) return tnpy_any_to_py(v);
  if (PyErr_Occurred()) return NULL;
  PyObject *d = n == 2 ? args[1] : Py_None;
  Py_INCREF(d);
  return d;
}

static PySequenceMethods map_as_sequence = {.sq_contains = map_contains};
static PyMappingMethods map_as_mapping = {
    .mp_length = map_len,
    .mp_subscript = map_subscript,
    .mp_ass_subscript = map_ass_subscript,
};
static PyMethodDef map_methods[] = {
    {"keys", map_keys, METH_NOARGS, "A view of the keys, in insertion order."},
    {"values", map_values, METH_NOARGS,
     "A view of the values, in insertion order."},
    {"items", map_items, METH_NOARGS, "A view of the (key, value) pairs."},
    {"get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL,
     "get(key, default=None)"},
    {NULL, NULL, 0, NULL}};

/* Map(mapping=(), **kw) / Dict(...): as dict(...) would take them. */
/* dict(mapping_or_pairs=(), **kw) as Python's dict() reads its arguments:
 * a new Python dict, or NULL raised naming `who` ("Map()", "Dict.update()")
 * when the positional argument is neither. */
static PyObject *dict_of_args(PyObject *args, PyObject *kw, const char *who) {
  PyObject *src = NULL;
  if (!PyArg_UnpackTuple(args, who, 0, 1, &src)) return NULL;
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  int rc = 0;
  if (src != NULL) {
    if (PyDict_Check(src) || PyObject_HasAttrString(src, "keys")) {
      rc = PyDict_Merge(d, src, 1);
    } else {
      rc = PyDict_MergeFromSeq2(d, src, 1);
      if (rc && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s takes a mapping or an iterable of "
                     "pairs, not %s", who, Py_TYPE(src)->tp_name);
      }
    }
  }
  if (rc == 0 && kw) rc = PyDict_Merge(d, kw, 1);
  if (rc) Py_CLEAR(d);
  return d;
}

static PyObject *mapping_new(PyTypeObject *type, PyObject *args, PyObject *kw,
                             int mutable_) {
  PyObject *d = dict_of_args(args, kw, mutable_ ? "Dict()" : "Map()");
  if (d == NULL) return NULL;
  TnObject *h = tnpy_container_from_py(d, mutable_);
  Py_DECREF(d);
  return new_proxy(type, h);
}

static PyObject *map_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  return mapping_new(type, args, kw, 0);
}

static PyObject *dict_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  return mapping_new(type, args, kw, 1);
}

PyTypeObject TnPyMap_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Map",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.Map: an immutable mapping in insertion order. "
              "Map(mapping_or_pairs=(), **kw) builds one.",
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &map_as_mapping,
    .tp_richcompare = map_richcompare,
    .tp_hash = container_hash,
    .tp_iter = map_iter,
    .tp_methods = map_methods,
    .tp_new = map_new,
};

/* update(mapping_or_pairs=(), **kw): everything is converted before the
 * first entry is written, so a bad value changes nothing. */
static PyObject *dict_update(PyObject *self, PyObject *args, PyObject *kw) {
  TnObject *h = dict_handle(self, "update");
  if (h == NULL) return NULL;
  PyObject *d = dict_of_args(args, kw, "Dict.update()");
  if (d == NULL) return NULL;
  TnObject *m = tnpy_container_from_py(d, 0);
  Py_DECREF(d);
  if (m == NULL) return NULL;
  int rc = tnpy_writer_wait();
  const TnAny *k, *v;
  for (int64_t pos = tn_map_next(m, 0, &k, &v); rc == 0 && pos >= 0;
       pos = tn_map_next(m, pos + 1, &k, &v)) {
    TnAny key = *k;
    TnObject *held = NULL;
    rc = map_own_key(h, &key, &held);
    if (rc == 0 && (rc = tn_dict_set(h, &key, v)) != 0) tnpy_raise_tn();
    tn_object_release(held);
  }
  tn_object_release(m);
  if (rc) return NULL;
  Py_RETURN_NONE;
}

static PyObject *dict_setdefault(PyObject *self, PyObject *const *args,
                                 Py_ssize_t n) {
  TnObject *h = dict_handle(self, "setdefault");
  if (h == NULL) return NULL;
  if (n < 1 || n > 2)
    return PyErr_Format(PyExc_TypeError, "setdefault expected 1 or 2 "
                        "arguments, got %zd", n);
  const TnAny *v = map_find(self, args[0]);
  if (v) return tnpy_any_to_py(v);
  if (PyErr_Occurred()) return NULL;
  PyObject *d = n == 2 ? args[1] : Py_None;
  if (map_ass_subscript(self, args[0], d)) return NULL;
  /* what the dict now holds (a list default is stored as a tn.Array) */
  if ((v = map_find(self, args[0])) != NULL) return tnpy_any_to_py(v);
  if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, args[0]);
  return NULL;
}

/* popitem(): remove and return the last (key, value) inserted. */
static PyObject *dict_popitem(PyObject *self, PyObject *u) {
  (void)u;
  TnObject *h = dict_handle(self, "popitem");
  if (h == NULL || tnpy_writer_wait()) return NULL;
  const TnAny *k, *v, *lk = NULL, *lv = NULL;
  for (int64_t pos = tn_map_next(h, 0, &k, &v); pos >= 0;
       pos = tn_map_next(h, pos + 1, &k, &v))
    lk = k, lv = v;
  if (lk == NULL)
    return PyErr_Format(PyExc_KeyError, "popitem(): the Dict is empty");
  TnAny kc, vc;
  tn_any_copy(&kc, lk);
  tn_any_copy(&vc, lv);
  PyObject *res = NULL;
  if (tn_dict_erase(h, &kc)) {
    tnpy_raise_tn();
  } else {
    PyObject *pk = tnpy_any_to_py(&kc), *pv = pk ? tnpy_any_to_py(&vc) : NULL;
    res = pv ? PyTuple_Pack(2, pk, pv) : NULL;
    Py_XDECREF(pk);
    Py_XDECREF(pv);
  }
  tn_any_clear(&kc);
  tn_any_clear(&vc);
  return res;
}

static PyMethodDef dict_methods[] = {
    {"pop", (PyCFunction)(void (*)(void))dict_pop, METH_FASTCALL,
     "pop(key[, default]): remove a key and return its value."},
    {"clear", dict_clear, METH_NOARGS, "Remove every entry."},
    {"update", (PyCFunction)(void (*)(void))dict_update,
     METH_VARARGS | METH_KEYWORDS,
     "update(mapping_or_pairs=(), **kw): set every entry given."},
    {"popitem", dict_popitem, METH_NOARGS,
     "popitem(): remove and return the last (key, value) inserted."},
    {"setdefault", (PyCFunction)(void (*)(void))dict_setdefault,
     METH_FASTCALL, "setdefault(key, default=None): the value for key, set "
     "to default first when absent."},
    {NULL, NULL, 0, NULL}};

PyTypeObject TnPyDict_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Dict",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.Dict: a mutable mapping shared by reference. "
              "Dict(mapping_or_pairs=(), **kw) builds one.",
    .tp_methods = dict_methods,
    .tp_new = dict_new,
};

/* ---- Shape ------------------------------------------------------------------ */

static Py_ssize_t shape_len(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "len");
  return h ? (Py_ssize_t)((TnShapeObj *)h)->ndim : -1;
}

static PyObject *shape_item(PyObject *self, Py_ssize_t i) {
  TnObject *h = tnpy_get_handle(self, "getitem");
  if (h == NULL) return NULL;
  const TnShapeObj *s = (const TnShapeObj *)h;
  if (i < 0 || i >= s->ndim)
    return PyErr_Format(PyExc_IndexError, "shape index %zd out of range", i);
  return PyLong_FromLongLong(s->data[i]);
}

static PyObject *shape_tuple(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "shape");
  if (h == NULL) return NULL;
  const TnShapeObj *s = (const TnShapeObj *)h;
  PyObject *t = PyTuple_New((Py_ssize_t)s->ndim);
  for (int64_t i = 0; t && i < s->ndim; i++) {
    PyObject *v = PyLong_FromLongLong(s->data[i]);
    if (v == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
  }
  return t;
}

/* Shapes compare by value with other shapes, tuples and lists: that is
 * how tests and passes read them (`ty.shape == (1, 640)`). */
static PyObject *shape_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  PyObject *ta = shape_tuple(a), *tb = NULL;
  if (ta == NULL) return NULL;
  if (PyObject_TypeCheck(b, &TnPyShape_Type)) {
    tb = shape_tuple(b);
  } else if (PyTuple_Check(b) || PyList_Check(b)) {
    tb = PySequence_Tuple(b);
  } else {
    Py_DECREF(ta);
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject *r = tb ? PyObject_RichCompare(ta, tb, op) : NULL;
  Py_DECREF(ta);
  Py_XDECREF(tb);
  return r;
}

static Py_hash_t shape_hash(PyObject *self) {
  PyObject *t = shape_tuple(self);
  if (t == NULL) return -1;
  Py_hash_t h = PyObject_Hash(t);
  Py_DECREF(t);
  return h;
}

static PyObject *shape_repr(PyObject *self) {
  PyObject *t = shape_tuple(self);
  if (t == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("Shape(%R)", t);
  Py_DECREF(t);
  return r;
}

/* Shape(dims): built at once from integers. */
static PyObject *shape_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *src = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Shape",
                                   (char *[]){"dims", NULL}, &src))
    return NULL;
  if (src && PyIndex_Check(src))
    return PyErr_Format(PyExc_TypeError, "Shape() takes an iterable of "
                        "ints, not %s", Py_TYPE(src)->tp_name);
  PyObject *t = src ? PySequence_Tuple(src) : PyTuple_New(0);
  if (t == NULL) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  int64_t *dims = PyMem_Malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (dims == NULL) {
    Py_DECREF(t);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyTuple_GET_ITEM(t, i);
    int overflow = 0;
    long long v = -1;
    if (!PyIndex_Check(o) || PyBool_Check(o)) {
      PyErr_Format(PyExc_TypeError, "Shape: dimension %zd is %s, not an int",
                   i, Py_TYPE(o)->tp_name);
    } else {
      PyObject *iv = PyNumber_Index(o);
      if (iv) v = PyLong_AsLongLongAndOverflow(iv, &overflow);
      Py_XDECREF(iv);
      if (overflow)
        PyErr_Format(PyExc_OverflowError, "Shape: dimension %zd does not fit "
                     "in 64 bits", i);
    }
    if (PyErr_Occurred()) {
      PyMem_Free(dims);
      Py_DECREF(t);
      return NULL;
    }
    dims[i] = v;
  }
  Py_DECREF(t);
  TnObject *h = tn_shape_new(dims, n);
  PyMem_Free(dims);
  if (h == NULL) return tnpy_raise_tn();
  return new_proxy(type, h);
}

static PySequenceMethods shape_as_sequence = {
    .sq_length = shape_len,
    .sq_item = shape_item,
};

PyTypeObject TnPyShape_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Shape",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.Shape: immutable dimensions; compares by value with "
              "tuples and lists.",
    .tp_as_sequence = &shape_as_sequence,
    .tp_richcompare = shape_richcompare,
    .tp_hash = shape_hash,
    .tp_repr = shape_repr,
    .tp_new = shape_new,
};

/* ---- module hooks -------------------------------------------------------- */

static PyMethodDef object_module_methods[] = {
    {"_register_class", register_class, METH_VARARGS,
     "_register_class(type_index, cls): the class for a type index."},
    {"_registered_class", registered_class, METH_O,
     "The class registered for a type index, or None."},
    {"class_for", class_for, METH_O,
     "The class for a type index, made if needed."},
    {"_type_fields", type_fields, METH_O,
     "Field descriptors of a node type, inherited first."},
    {NULL, NULL, 0, NULL}};

static void init_function(TnPyFunction *f) {
  f->vectorcall = tnpy_function_vectorcall;
  f->name = NULL;
  f->release_gil = 0;
}

int tnpy_object_init_types(PyObject *module) {
  TnPyArray_Type.tp_base = &TnPyObject_Type;
  TnPyMap_Type.tp_base = &TnPyObject_Type;
  TnPyShape_Type.tp_base = &TnPyObject_Type;
  TnPyList_Type.tp_base = &TnPyArray_Type;
  TnPyDict_Type.tp_base = &TnPyMap_Type;
  PyTypeObject *types[] = {&TnPyObject_Type, &TnPyArray_Type, &TnPyMap_Type,
                           &TnPyShape_Type, &TnPyFieldDescr_Type,
                           &TnPyList_Type, &TnPyDict_Type};
  const char *names[] = {"Object", "Array", "Map", "Shape", "Field", "List",
                         "Dict"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    if (PyType_Ready(types[i])) return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(module, names[i], (PyObject *)types[i])) return -1;
  }
  if (PyModule_AddFunctions(module, object_module_methods)) return -1;
  /* Built-in container types have fixed classes. */
  if (table_reserve(TN_TYPE_DYNAMIC_BEGIN)) return -1;
  struct {
    int32_t t;
    PyTypeObject *c;
  } fixed[] = {{TN_TYPE_OBJECT, &TnPyObject_Type},
               {TN_TYPE_ARRAY, &TnPyArray_Type},
               {TN_TYPE_LIST, &TnPyList_Type},
               {TN_TYPE_MAP, &TnPyMap_Type},
               {TN_TYPE_DICT, &TnPyDict_Type},
               {TN_TYPE_SHAPE, &TnPyShape_Type}};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    Py_INCREF(fixed[i].c);
    Py_XSETREF(g_classes[fixed[i].t], (PyObject *)fixed[i].c);
  }
  return 0;
}
