/*
 * convert.c: values between Python and TnAny.
 *
 * Into C, a call argument becomes a TnAny on the caller's stack that borrows
 * from the Python object whenever it can: an int or a float is copied, a
 * short string is copied inline (up to 7 bytes), a longer one is lent as a
 * `const char *` into the str's cached UTF-8, and a proxy lends its handle.
 * Only values with no C counterpart yet (lists, dicts, callables, arrays)
 * make a new object, which the caller releases after the call. The owned
 * form, used for values that outlive the call (container items, results of
 * Python callbacks), is the same conversion followed by taking ownership.
 *
 * Out of C, strings come back as str and bytes as bytes (TVM users expect
 * that), plain values as the Python scalar, and every other object as a
 * proxy of the class registered for its type index.
 *
 * Values of other classes cross by protocol, looked up on the type only
 * after every built-in kind has been tried (so ints, floats, strings and
 * proxies never pay for it): __tvmnode_object__() gives the object to pass,
 * __tvmnode_int__() / __tvmnode_float__() a number, __tvmnode_value__() any
 * convertible value. Whatever is left (no protocol, not a number, not
 * callable, not a set or a complex) crosses as a tn.OpaquePyObject that
 * holds a reference to it, and comes back out of C as the same object.
 */
#include "tnpy.h"

#include <string.h>

PyObject *tnpy_dtype_class, *tnpy_device_class, *tnpy_class_factory,
    *tnpy_opaque_class;

/* dtype code -> tvmnode.DataType instance: reading a TensorType's dtype is
 * common and the instances are immutable, so they are made once. */
static PyObject *g_dtype_cache;

static int str_arg(PyObject *o, TnAny *out, TnObject **temp) {
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(o, &n);
  if (s == NULL) return -1;
  if (n <= TN_SMALL_STR_MAX) {
    TnAny a = {TN_TYPE_SMALL_STR, (uint32_t)n, {0}};
    memcpy(a.v_small, s, (size_t)n);
    *out = a;
  } else if (memchr(s, 0, (size_t)n) == NULL) {
    /* Borrowed from the str's cached UTF-8: valid while `o` lives. */
    *out = tn_any_cstr(s);
  } else {
    TnObject *str = tn_string_new(s, (size_t)n);
    if (str == NULL) return tnpy_raise_tn(), -1;
    *temp = str;
    *out = tn_any_obj(str);
  }
  return 0;
}

static int bytes_arg(const char *s, Py_ssize_t n, TnAny *out,
                     TnObject **temp) {
  if (n <= TN_SMALL_STR_MAX) {
    TnAny a = {TN_TYPE_SMALL_BYTES, (uint32_t)n, {0}};
    memcpy(a.v_small, s, (size_t)n);
    *out = a;
    return 0;
  }
  TnObject *b = tn_bytes_new(s, (size_t)n);
  if (b == NULL) return tnpy_raise_tn(), -1;
  *temp = b;
  *out = tn_any_obj(b);
  return 0;
}

static int int_arg(PyObject *o, TnAny *out) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    PyErr_SetString(PyExc_OverflowError,
                    "int does not fit in a 64-bit signed integer");
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = tn_any_int(v);
  return 0;
}

/* ---- containers ------------------------------------------------------------
 *
 * Lists, tuples and dicts are converted with an explicit stack rather than
 * by recursion, so nesting is limited by memory, not by the C stack. Each
 * frame holds a strong reference to what it reads: the items of a dict, and
 * of a list whose items may run Python code when converted, are first
 * copied into a tuple, so code run by an item (__index__, __float__,
 * __dlpack__, a Device attribute, a finalizer) can empty or grow the
 * container without leaving us with freed items or a short buffer. A list
 * of plain items (exact int, float, str, bool, None, bytes, proxies) runs no
 * Python code while converting and is read in place. The containers on the
 * current path are remembered, so one that contains itself is reported
 * (ValueError naming the path) instead of recursing for ever. A long
 * conversion checks for signals now and then, so Ctrl-C comes through.
 */

#define FRAME_SMALL 8
#define PATH_SET_FROM 32 /* path depth from which a hash set is used */
#define SIGNAL_EVERY 4096

typedef struct {
  PyObject *src;   /* the container (strong) */
  PyObject *items; /* list or tuple read (strong): items, or k0, v0, k1, ... */
  Py_ssize_t n;    /* entries in `items` */
  Py_ssize_t i;    /* next entry to convert */
  TnAny *vals;     /* the converted entries, owned up to i */
  TnAny small[FRAME_SMALL];
  int is_dict;
  int mutable_;    /* build a tn.List / tn.Dict (outermost only) */
} Frame;

/* Pointers of the containers on the path, as an open-addressing set with
 * linear probing (deletion shifts back, so no tombstones). */
typedef struct {
  PyObject **slots;
  size_t mask, count;
} PathSet;

static size_t ptr_hash(PyObject *p) {
  uintptr_t v = (uintptr_t)p >> 4;
  v *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(v ^ (v >> 29));
}

static int pathset_add(PathSet *s, PyObject *p) {
  if ((s->count + 1) * 2 > s->mask + 1 || s->slots == NULL) {
    size_t cap = s->slots ? (s->mask + 1) * 2 : 128;
    PyObject **ns = PyMem_Calloc(cap, sizeof(PyObject *));
    if (ns == NULL) return PyErr_NoMemory(), -1;
    for (size_t i = 0; s->slots && i <= s->mask; i++) {
      if (s->slots[i] == NULL) continue;
      size_t j = ptr_hash(s->slots[i]) & (cap - 1);
      while (ns[j]) j = (j + 1) & (cap - 1);
      ns[j] = s->slots[i];
    }
    PyMem_Free(s->slots);
    s->slots = ns;
    s->mask = cap - 1;
  }
  size_t j = ptr_hash(p) & s->mask;
  while (s->slots[j]) j = (j + 1) & s->mask;
  s->slots[j] = p;
  s->count++;
  return 0;
}

static int pathset_has(const PathSet *s, PyObject *p) {
  for (size_t j = ptr_hash(p) & s->mask; s->slots[j]; j = (j + 1) & s->mask)
    if (s->slots[j] == p) return 1;
  return 0;
}

static void pathset_remove(PathSet *s, PyObject *p) {
  size_t j = ptr_hash(p) & s->mask;
  while (s->slots[j] != p) {
    if (s->slots[j] == NULL) return;
    j = (j + 1) & s->mask;
  }
  s->slots[j] = NULL;
  s->count--;
  /* shift back the entries of the run that follows */
  for (size_t k = (j + 1) & s->mask; s->slots[k]; k = (k + 1) & s->mask) {
    size_t home = ptr_hash(s->slots[k]) & s->mask;
    /* move k to j when home is not cyclically in (j, k] */
    if ((k > j && (home <= j || home > k)) ||
        (k < j && (home <= j && home > k))) {
      s->slots[j] = s->slots[k];
      s->slots[k] = NULL;
      j = k;
    }
  }
}

typedef struct {
  Frame *frames;
  Py_ssize_t depth, cap;
  PathSet path; /* used from PATH_SET_FROM frames on */
  int use_set;
  unsigned steps;
  Frame small[4];
} Conv;

/* Items that convert without running Python code (see arg_slow). */
static inline int plain_item(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  return t == &PyLong_Type || t == &PyFloat_Type || t == &PyUnicode_Type ||
         o == Py_None || t == &PyBool_Type || t == &PyBytes_Type ||
         PyObject_TypeCheck(o, &TnPyObject_Type);
}

static inline int is_container(PyObject *o) {
  return PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o);
}

static void frame_clear(Frame *f) {
  for (Py_ssize_t k = 0; k < f->i; k++) tn_any_clear(&f->vals[k]);
  if (f->vals != f->small) PyMem_Free(f->vals);
  f->vals = NULL;
  f->i = 0;
  Py_CLEAR(f->items);
  Py_CLEAR(f->src);
}

/* The path to the current entry, as "item 1: key 'a': " (outermost first;
 * long paths keep their two ends). */
static PyObject *conv_path(Conv *c) {
  PyObject *parts = PyList_New(0);
  if (parts == NULL) return NULL;
  for (Py_ssize_t d = 0; d < c->depth; d++) {
    PyObject *s;
    Frame *f = &c->frames[d];
    if (c->depth > 24 && d == 10) {
      s = PyUnicode_FromFormat("(%zd levels): ", c->depth - 20);
      d = c->depth - 11;
    } else if (!f->is_dict) {
      s = PyUnicode_FromFormat("item %zd: ", f->i);
    } else if (f->i % 2 == 0) {
      s = PyUnicode_FromFormat("key #%zd: ", f->i / 2);
    } else {
      s = PyUnicode_FromFormat("key %.200R: ",
                               PyTuple_GET_ITEM(f->items, f->i - 1));
    }
    if (s == NULL || PyList_Append(parts, s)) {
      Py_XDECREF(s);
      Py_DECREF(parts);
      return NULL;
    }
    Py_DECREF(s);
  }
  PyObject *empty = PyUnicode_FromString("");
  PyObject *r = empty ? PyUnicode_Join(empty, parts) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(parts);
  return r;
}

/* Prefix the pending exception's message with the path (same type). */
static void conv_blame(Conv *c) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  if (t == NULL) return;
  /* An interrupt or a recursion error is passed on as it is. */
  if (!PyErr_GivenExceptionMatches(t, PyExc_Exception) ||
      PyErr_GivenExceptionMatches(t, PyExc_MemoryError)) {
    PyErr_Restore(t, v, tb);
    return;
  }
  PyObject *path = conv_path(c);
  if (path == NULL) {
    PyErr_Clear();
    PyErr_Restore(t, v, tb);
    return;
  }
  PyErr_Restore(t, v, tb);
  tnpy_reraise_prefixed(path);
  Py_DECREF(path);
}

static int conv_on_path(Conv *c, PyObject *o) {
  if (c->use_set) return pathset_has(&c->path, o);
  for (Py_ssize_t d = 0; d < c->depth; d++)
    if (c->frames[d].src == o) return 1;
  return 0;
}

/* Push a frame for container `o`; -1 with an exception (not yet blamed). */
static int conv_push(Conv *c, PyObject *o, int mutable_) {
  if (conv_on_path(c, o)) {
    PyErr_Format(PyExc_ValueError, "cannot convert a %s that contains "
                 "itself", Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *items;
  int is_dict = PyDict_Check(o);
  if (is_dict) {
    Py_ssize_t n = PyDict_GET_SIZE(o), pos = 0, k = 0;
    PyObject *key, *val;
    items = PyTuple_New(2 * n);
    if (items == NULL) return -1;
    /* PyDict_Next runs no Python code; the tuple holds what it saw */
    while (k < n && PyDict_Next(o, &pos, &key, &val)) {
      Py_INCREF(key);
      Py_INCREF(val);
      PyTuple_SET_ITEM(items, 2 * k, key);
      PyTuple_SET_ITEM(items, 2 * k + 1, val);
      k++;
    }
    if (k != n && _PyTuple_Resize(&items, 2 * k)) return -1;
  } else if (PyTuple_Check(o)) {
    Py_INCREF(o);
    items = o;
  } else {
    /* a list: read in place only when its items run no Python code */
    Py_ssize_t n = PyList_GET_SIZE(o), k = 0;
    while (k < n && plain_item(PyList_GET_ITEM(o, k))) k++;
    if (k == n) {
      Py_INCREF(o);
      items = o;
    } else {
      items = PyList_AsTuple(o);
      if (items == NULL) return -1;
    }
  }
  if (c->depth == c->cap) {
    Py_ssize_t cap = c->cap * 2;
    Frame *nf = PyMem_Malloc(sizeof(Frame) * (size_t)cap);
    if (nf == NULL) {
      Py_DECREF(items);
      PyErr_NoMemory();
      return -1;
    }
    memcpy(nf, c->frames, sizeof(Frame) * (size_t)c->depth);
    /* frames hold pointers to their own `small` buffers */
    for (Py_ssize_t d = 0; d < c->depth; d++)
      if (c->frames[d].vals == c->frames[d].small) nf[d].vals = nf[d].small;
    if (c->frames != c->small) PyMem_Free(c->frames);
    c->frames = nf;
    c->cap = cap;
  }
  Frame *f = &c->frames[c->depth];
  f->n = PyList_Check(items) ? PyList_GET_SIZE(items) : PyTuple_GET_SIZE(items);
  f->vals = f->small;
  if (f->n > FRAME_SMALL) {
    f->vals = PyMem_Malloc(sizeof(TnAny) * (size_t)f->n);
    if (f->vals == NULL) {
      Py_DECREF(items);
      PyErr_NoMemory();
      return -1;
    }
  }
  Py_INCREF(o);
  f->src = o;
  f->items = items;
  f->i = 0;
  f->is_dict = is_dict;
  f->mutable_ = mutable_;
  if (!c->use_set && c->depth + 1 >= PATH_SET_FROM) {
    for (Py_ssize_t d = 0; d < c->depth; d++)
      if (pathset_add(&c->path, c->frames[d].src)) goto fail;
    c->use_set = 1;
  }
  if (c->use_set && pathset_add(&c->path, o)) goto fail;
  c->depth++;
  return 0;
fail:
  frame_clear(f);
  return -1;
}

static void conv_pop(Conv *c) {
  Frame *f = &c->frames[--c->depth];
  if (c->use_set) pathset_remove(&c->path, f->src);
  frame_clear(f);
}

/* The object for the finished top frame (transfer full), or NULL with an
 * exception. */
static TnObject *conv_build(Frame *f) {
  TnObject *r;
  if (f->is_dict) {
    if (PyDict_GET_SIZE(f->src) * 2 != f->n) {
      PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during "
                      "conversion");
      return NULL;
    }
    Py_ssize_t n = f->n / 2;
    TnAny kb[FRAME_SMALL / 2], vb[FRAME_SMALL / 2], *ks = kb, *vs = vb;
    if (n > FRAME_SMALL / 2) {
      ks = PyMem_Malloc(sizeof(TnAny) * (size_t)n);
      vs = PyMem_Malloc(sizeof(TnAny) * (size_t)n);
      if (ks == NULL || vs == NULL) {
        PyMem_Free(ks), PyMem_Free(vs);
        PyErr_NoMemory();
        return NULL;
      }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
      ks[k] = f->vals[2 * k];
      vs[k] = f->vals[2 * k + 1];
    }
    r = f->mutable_ ? tn_dict_new(ks, vs, n) : tn_map_new(ks, vs, n);
    if (ks != kb) PyMem_Free(ks), PyMem_Free(vs);
  } else {
    r = f->mutable_ ? tn_list_new(f->vals, f->n) : tn_array_new(f->vals, f->n);
  }
  if (r == NULL) tnpy_raise_tn();
  return r;
}

/* A list, tuple or dict as a new tn.Array / tn.Map (tn.List / tn.Dict when
 * `mutable_`; nested containers are always immutable). */
static TnObject *container_from_py(PyObject *o, int mutable_) {
  Conv c;
  c.frames = c.small;
  c.cap = (Py_ssize_t)(sizeof c.small / sizeof c.small[0]);
  c.depth = 0;
  c.path.slots = NULL;
  c.path.mask = c.path.count = 0;
  c.use_set = 0;
  c.steps = 0;
  TnObject *result = NULL;
  if (conv_push(&c, o, mutable_)) goto out;
  for (;;) {
    Frame *f = &c.frames[c.depth - 1];
    if (f->i == f->n) {
      TnObject *r = conv_build(f);
      if (r == NULL) {
        if (c.depth > 1) { /* blame the parent's entry */
          conv_pop(&c);
          conv_blame(&c);
        }
        goto out;
      }
      conv_pop(&c);
      if (c.depth == 0) {
        result = r;
        goto out;
      }
      Frame *p = &c.frames[c.depth - 1];
      p->vals[p->i++] = tn_any_obj(r);
      continue;
    }
    if (TNPY_UNLIKELY(++c.steps % SIGNAL_EVERY == 0) && PyErr_CheckSignals())
      goto out;
    PyObject *item;
    if (PyTuple_Check(f->items)) {
      item = PyTuple_GET_ITEM(f->items, f->i);
    } else {
      /* read in place: only a signal handler can have changed it */
      if (TNPY_UNLIKELY(f->i >= PyList_GET_SIZE(f->items)) ||
          TNPY_UNLIKELY(!plain_item(item = PyList_GET_ITEM(f->items, f->i)))) {
        PyErr_SetString(PyExc_RuntimeError, "list changed during conversion");
        conv_blame(&c);
        goto out;
      }
    }
    if (TNPY_UNLIKELY(is_container(item))) {
      if (conv_push(&c, item, 0)) {
        conv_blame(&c);
        goto out;
      }
      continue;
    }
    /* a snapshot tuple, or a list of plain items, keeps `item` alive */
    if (tnpy_any_from_py(item, &f->vals[f->i])) {
      conv_blame(&c);
      goto out;
    }
    f->i++;
  }
out:
  while (c.depth > 0) conv_pop(&c);
  if (c.frames != c.small) PyMem_Free(c.frames);
  PyMem_Free(c.path.slots);
  return result;
}

TnObject *tnpy_container_from_py(PyObject *o, int mutable_) {
  if (!is_container(o))
    return PyErr_Format(PyExc_TypeError, "expected a list, tuple or dict, "
                        "got %s", Py_TYPE(o)->tp_name), NULL;
  return container_from_py(o, mutable_);
}

const char *tnpy_name_utf8(PyObject *o, const char *what) {
  if (!PyUnicode_Check(o))
    return PyErr_Format(PyExc_TypeError, "%s must be a str, not %s", what,
                        Py_TYPE(o)->tp_name), NULL;
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(o, &n);
  if (s && memchr(s, 0, (size_t)n))
    return PyErr_Format(PyExc_ValueError, "%s must not contain a NUL "
                        "character: %R", what, o), NULL;
  return s;
}

/* DataType is a str subclass in the Python layer: parse its text. */
static int dtype_arg(PyObject *o, TnAny *out) {
  const char *s = tnpy_name_utf8(o, "a data type");
  if (s == NULL) return -1;
  DLDataType dt;
  if (tn_dtype_parse(s, &dt)) return tnpy_raise_tn(), -1;
  *out = tn_any_dtype(dt);
  return 0;
}

static int device_arg(PyObject *o, TnAny *out) {
  PyObject *t = PyObject_GetAttrString(o, "device_type");
  PyObject *i = t ? PyObject_GetAttrString(o, "device_id") : NULL;
  long long tv = t ? PyLong_AsLongLong(t) : -1, iv = i ? PyLong_AsLongLong(i) : -1;
  Py_XDECREF(t);
  Py_XDECREF(i);
  if (PyErr_Occurred()) return -1;
  if (tv < 0 || tv > INT32_MAX || iv < 0 || iv > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "device (%lld, %lld) out of range (type "
                 "and id are 0 to 2**31-1)", tv, iv);
    return -1;
  }
  DLDevice d = {(DLDeviceType)tv, (int32_t)iv};
  *out = tn_any_device(d);
  return 0;
}

/* ---- opaque Python objects ------------------------------------------------ */

typedef struct {
  TnObject header;
  PyObject *obj; /* strong */
} OpaquePy;

static int32_t g_opaque_type = -1;

/* Runs on whatever thread drops the last reference: the GIL is taken for
 * the decref (a no-op when held). After interpreter shutdown the Python
 * object is left alone: a C registry may outlive Python. */
static void opaque_deleter(TnObject *self, int flags) {
  if (flags & TN_DELETER_DESTRUCT) {
    PyObject *o = ((OpaquePy *)self)->obj;
    ((OpaquePy *)self)->obj = NULL;
    if (o && tnpy_interpreter_alive()) {
      PyGILState_STATE st = PyGILState_Ensure();
      Py_DECREF(o);
      PyGILState_Release(st);
    }
  }
  if (flags & TN_DELETER_FREE) tn_object_free(self);
}

static int32_t opaque_type_index(void) {
  if (g_opaque_type < 0) {
    int32_t t = tn_type_register("tn.OpaquePyObject", TN_TYPE_OBJECT);
    if (t < 0) return tnpy_raise_tn(), -1;
    g_opaque_type = t;
  }
  return g_opaque_type;
}

/* A tn.OpaquePyObject holding `o` (transfer full), or NULL raised. */
static TnObject *opaque_new(PyObject *o) {
  int32_t t = opaque_type_index();
  if (t < 0) return NULL;
  OpaquePy *p = (OpaquePy *)tn_object_alloc(t, sizeof(OpaquePy),
                                            opaque_deleter);
  if (p == NULL) return tnpy_raise_tn(), NULL;
  Py_INCREF(o);
  p->obj = o;
  return &p->header;
}

/* ---- conversion protocols --------------------------------------------------- */

/* Each protocol under this binding's name and under apache-tvm-ffi's, so
 * classes written for either convert alike (ours first when a class has
 * both). __tvm_ffi_opaque_ptr__() gives an address passed as a pointer. */
#define NPROTO 9
static PyObject *g_proto_names[NPROTO];
enum { PROTO_OBJECT, PROTO_INT, PROTO_FLOAT, PROTO_VALUE, PROTO_PTR };
static const char *const g_proto_spelled[NPROTO] = {
    "__tvmnode_object__", "__tvm_ffi_object__", "__tvmnode_int__",
    "__tvm_ffi_int__",    "__tvmnode_float__",  "__tvm_ffi_float__",
    "__tvmnode_value__",  "__tvm_ffi_value__",  "__tvm_ffi_opaque_ptr__"};
static const int g_proto_kind[NPROTO] = {
    PROTO_OBJECT, PROTO_OBJECT, PROTO_INT,   PROTO_INT, PROTO_FLOAT,
    PROTO_FLOAT,  PROTO_VALUE,  PROTO_VALUE, PROTO_PTR};

static int proto_names_init(void) {
  for (int i = 0; i < NPROTO; i++)
    if (g_proto_names[i] == NULL &&
        (g_proto_names[i] = PyUnicode_InternFromString(g_proto_spelled[i])) ==
            NULL)
      return -1;
  return 0;
}

/* 1 when `o`'s type has a protocol and `out` / `temp` are set, 0 when it
 * has none, -1 raised. */
/* Types found to have none of the protocols, with their version tag:
 * CPython clears a type's tag when the type or a base is modified, and
 * never gives a tag out twice, so a class given a protocol later is looked
 * up again. Arrays, callables and other values passed over and over skip
 * the NPROTO lookups. The GIL guards it. */
enum { NO_PROTO_CACHE = 4 };
static struct {
  PyTypeObject *type;
  unsigned int tag;
} g_no_proto[NO_PROTO_CACHE];
static unsigned g_no_proto_next;

static int known_without_protocol(PyTypeObject *tp) {
  if (!PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
  for (int i = 0; i < NO_PROTO_CACHE; i++)
    if (g_no_proto[i].type == tp && g_no_proto[i].tag == tp->tp_version_tag)
      return 1;
  return 0;
}

static void remember_without_protocol(PyTypeObject *tp) {
  if (!PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)) return;
  unsigned i = g_no_proto_next++ % NO_PROTO_CACHE;
  g_no_proto[i].type = tp;
  g_no_proto[i].tag = tp->tp_version_tag;
}

static int protocol_arg(PyObject *o, TnAny *out, TnObject **temp) {
  PyTypeObject *tp = Py_TYPE(o);
  if (known_without_protocol(tp)) return 0;
  if (g_proto_names[NPROTO - 1] == NULL && proto_names_init()) return -1;
  int found = -1;
  for (int i = 0; i < NPROTO && found < 0; i++)
    if (_PyType_Lookup(tp, g_proto_names[i])) found = i;
  if (found < 0) {
    remember_without_protocol(tp);
    return 0;
  }
  int which = g_proto_kind[found];
  const char *pname = g_proto_spelled[found];
  PyObject *r = PyObject_CallMethodNoArgs(o, g_proto_names[found]);
  if (r == NULL) return -1;
  int rc = -1;
  switch (which) {
    case PROTO_OBJECT:
      if (!tnpy_is_object(r)) {
        PyErr_Format(PyExc_TypeError, "%s.%s() returned %s, not a tvmnode "
                     "object", tp->tp_name, pname, Py_TYPE(r)->tp_name);
      } else if (tnpy_handle(r) == NULL) {
        PyErr_Format(PyExc_ValueError, "%s.%s() returned an object without "
                     "a handle", tp->tp_name, pname);
      } else {
        /* `r` dies here: the call holds the handle itself */
        *temp = tnpy_handle(r);
        tn_object_retain(*temp);
        *out = tn_any_obj(*temp);
        rc = 1;
      }
      break;
    case PROTO_INT: {
      PyObject *i = PyNumber_Index(r);
      if (i) {
        rc = int_arg(i, out) ? -1 : 1;
        Py_DECREF(i);
      }
      break;
    }
    case PROTO_FLOAT: {
      double d = PyFloat_AsDouble(r);
      if (!(d == -1.0 && PyErr_Occurred())) {
        *out = tn_any_float(d);
        rc = 1;
      }
      break;
    }
    case PROTO_PTR:
      if (r == Py_None) {
        *out = tn_any_ptr(NULL);
        rc = 1;
      } else if (!PyLong_Check(r)) {
        PyErr_Format(PyExc_TypeError, "%s.%s() returned %s, not an int "
                     "address", tp->tp_name, pname, Py_TYPE(r)->tp_name);
      } else {
        void *p = PyLong_AsVoidPtr(r);
        if (!(p == NULL && PyErr_Occurred())) {
          *out = tn_any_ptr(p);
          rc = 1;
        }
      }
      break;
    default: /* PROTO_VALUE: converted as if passed itself (another object
              * of the same class too, as tvm-ffi; the recursion limit ends
              * a chain that never does) */
      if (Py_EnterRecursiveCall(" converting a __tvmnode_value__() result"))
        break;
      if (r == o) {
        PyErr_Format(PyExc_TypeError, "%s.%s() returned the object itself",
                     tp->tp_name, pname);
      } else if (tnpy_any_from_py(r, out) == 0) {
        /* owned: the call releases it through *temp when it is an object;
         * a string is made an object so it outlives `r` */
        if (tn_any_is_object(out)) *temp = out->v_obj;
        rc = 1;
      }
      Py_LeaveRecursiveCall();
      break;
  }
  Py_DECREF(r);
  return rc;
}

/* DLPack's own protocols for a data type and a device, as apache-tvm-ffi
 * reads them: __dlpack_data_type__() gives (code, bits, lanes),
 * __dlpack_device__() (device type, id); and a numpy dtype (ml_dtypes'
 * too) is a DataType. Tried last, where an object would otherwise pass as
 * an opaque handle: every DLPack producer also has __dlpack_device__ and
 * stays a tensor, and values that converted before never pay for the
 * look-ups. 1 converted, 0 none, -1 raised. */
static PyObject *g_dlpack_dtype_name, *g_dlpack_device_name;

static int is_numpy_dtype(PyTypeObject *tp) {
  for (; tp != NULL; tp = tp->tp_base)
    if (strcmp(tp->tp_name, "numpy.dtype") == 0) return 1;
  return 0;
}

static int dlpack_meta_arg(PyObject *o, TnAny *out) {
  PyTypeObject *tp = Py_TYPE(o);
  if (is_numpy_dtype(tp)) {
    PyObject *d = tnpy_dtype_class ? PyObject_CallOneArg(tnpy_dtype_class, o) : NULL;
    if (d == NULL) return tnpy_dtype_class ? -1 : 0;
    int rc = dtype_arg(d, out);
    Py_DECREF(d);
    return rc < 0 ? -1 : 1;
  }
  if (g_dlpack_dtype_name == NULL &&
      (g_dlpack_dtype_name = PyUnicode_InternFromString("__dlpack_data_type__")) == NULL)
    return -1;
  if (g_dlpack_device_name == NULL &&
      (g_dlpack_device_name = PyUnicode_InternFromString("__dlpack_device__")) == NULL)
    return -1;
  int is_dtype = _PyType_Lookup(tp, g_dlpack_dtype_name) != NULL;
  if (!is_dtype && _PyType_Lookup(tp, g_dlpack_device_name) == NULL) return 0;
  const char *pname = is_dtype ? "__dlpack_data_type__" : "__dlpack_device__";
  PyObject *r = PyObject_CallMethodNoArgs(
      o, is_dtype ? g_dlpack_dtype_name : g_dlpack_device_name);
  if (r == NULL) return -1;
  long long v[3] = {0, 0, 0};
  Py_ssize_t n = is_dtype ? 3 : 2;
  int ok = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == n;
  for (Py_ssize_t i = 0; ok && i < n; i++) {
    PyObject *x = PyTuple_GET_ITEM(r, i);
    ok = PyLong_Check(x);
    if (ok) v[i] = PyLong_AsLongLong(x);
  }
  Py_DECREF(r);
  if (!ok || PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s.%s() must return a tuple of %d ints",
                 tp->tp_name, pname, (int)n);
    return -1;
  }
  if (!is_dtype) {
    if (v[0] < 0 || v[0] > INT32_MAX || v[1] < 0 || v[1] > INT32_MAX) {
      PyErr_Format(PyExc_ValueError, "%s.__dlpack_device__() returned (%lld, "
                   "%lld): type and id are 0 to 2**31-1", tp->tp_name, v[0], v[1]);
      return -1;
    }
    DLDevice d = {(DLDeviceType)v[0], (int32_t)v[1]};
    *out = tn_any_device(d);
    return 1;
  }
  char name[64];
  DLDataType dt = {(uint8_t)v[0], (uint8_t)v[1], (uint16_t)v[2]};
  if (v[0] < 0 || v[0] > UINT8_MAX || v[1] < 0 || v[1] > UINT8_MAX ||
      v[2] < 0 || v[2] > UINT16_MAX || tn_dtype_print(dt, name, sizeof name) < 0) {
    tn_error_set_raised(NULL);
    PyErr_Format(PyExc_ValueError, "%s.__dlpack_data_type__() returned (%lld, "
                 "%lld, %lld), which is not a data type tvmnode knows",
                 tp->tp_name, v[0], v[1], v[2]);
    return -1;
  }
  *out = tn_any_dtype(dt);
  return 1;
}

static int arg_slow(PyObject *o, TnAny *out, TnObject **temp) {
  if (PyBytes_Check(o))
    return bytes_arg(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o), out, temp);
  if (PyByteArray_Check(o))
    return bytes_arg(PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o), out,
                     temp);
  if (tnpy_dtype_class && PyObject_TypeCheck(o, (PyTypeObject *)tnpy_dtype_class))
    return dtype_arg(o, out);
  if (PyUnicode_Check(o)) return str_arg(o, out, temp);
  if (PyLong_Check(o)) return int_arg(o, out);
  if (PyFloat_Check(o)) {
    *out = tn_any_float(PyFloat_AS_DOUBLE(o));
    return 0;
  }
  if (tnpy_device_class &&
      PyObject_TypeCheck(o, (PyTypeObject *)tnpy_device_class))
    return device_arg(o, out);
  if (is_container(o)) {
    TnObject *c = container_from_py(o, 0);
    if (c == NULL) return -1;
    *temp = c;
    *out = tn_any_obj(c);
    return 0;
  }
  int proto = protocol_arg(o, out, temp);
  if (proto) return proto < 0 ? -1 : 0;
  if (tnpy_opaque_class &&
      PyObject_TypeCheck(o, (PyTypeObject *)tnpy_opaque_class)) {
    PyObject *v = PyObject_GetAttrString(o, "value");
    if (v == NULL) return -1;
    void *p = v == Py_None ? NULL : PyLong_AsVoidPtr(v);
    Py_DECREF(v);
    if (PyErr_Occurred()) return -1;
    *out = tn_any_ptr(p);
    return 0;
  }
  int not_tensor = 0;
  TnObject *t = tnpy_tensor_from_py(o, &not_tensor);
  if (t) {
    *temp = t;
    *out = tn_any_obj(t);
    return 0;
  }
  if (!not_tensor) return -1;
  /* numpy scalars and other number-likes; numpy.bool_ is a bool (it has
   * __float__, and __index__ only on old numpy), a complex is refused
   * rather than losing its imaginary part */
  const char *tp = Py_TYPE(o)->tp_name;
  if (strcmp(tp, "numpy.bool") == 0 || strcmp(tp, "numpy.bool_") == 0) {
    int b = PyObject_IsTrue(o);
    if (b < 0) return -1;
    *out = tn_any_bool(b);
    return 0;
  }
  if (PyComplex_Check(o) || strncmp(tp, "numpy.complex", 13) == 0) {
    PyErr_Format(PyExc_TypeError, "cannot convert %s to a tvmnode value (no "
                 "complex numbers)", tp);
    return -1;
  }
  if (PyIndex_Check(o)) {
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) return -1;
    int rc = int_arg(i, out);
    Py_DECREF(i);
    return rc;
  }
  if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *out = tn_any_float(d);
    return 0;
  }
  if (PyCallable_Check(o)) {
    TnObject *f = tnpy_func_from_callable(o);
    if (f == NULL) return -1;
    *temp = f;
    *out = tn_any_obj(f);
    return 0;
  }
  /* A set has a natural reading (a collection) that tvmnode does not
   * have: refusing it beats an opaque handle the caller did not mean. */
  if (PyAnySet_Check(o)) {
    PyErr_Format(PyExc_TypeError, "cannot convert %s to a tvmnode value "
                 "(convert it to a list or tuple)", Py_TYPE(o)->tp_name);
    return -1;
  }
  int meta = dlpack_meta_arg(o, out);
  if (meta) return meta < 0 ? -1 : 0;
  TnObject *h = opaque_new(o);
  if (h == NULL) return -1;
  *temp = h;
  *out = tn_any_obj(h);
  return 0;
}

int tnpy_arg_from_py(PyObject *o, TnAny *out, TnObject **temp) {
  PyTypeObject *t = Py_TYPE(o);
  *temp = NULL;
  if (t == &PyLong_Type) return int_arg(o, out);
  if (t == &PyFloat_Type) {
    *out = tn_any_float(PyFloat_AS_DOUBLE(o));
    return 0;
  }
  if (o == Py_None) {
    *out = tn_any_none();
    return 0;
  }
  if (t == &PyBool_Type) {
    *out = tn_any_bool(o == Py_True);
    return 0;
  }
  if (t == &PyUnicode_Type) return str_arg(o, out, temp);
  if (PyObject_TypeCheck(o, &TnPyObject_Type)) {
    TnObject *h = ((TnPyObject *)o)->handle;
    if (TNPY_UNLIKELY(h == NULL)) {
      PyErr_Format(PyExc_ValueError, "%s object has no handle (was its "
                   "constructor called?)", t->tp_name);
      return -1;
    }
    *out = tn_any_obj(h);
    return 0;
  }
  return arg_slow(o, out, temp);
}

int tnpy_any_from_py(PyObject *o, TnAny *out) {
  TnObject *temp;
  TnAny a;
  if (tnpy_arg_from_py(o, &a, &temp)) return -1;
  if (temp) { /* the new object's reference becomes the result's */
    *out = a;
    return 0;
  }
  if (a.type_index == TN_TYPE_RAW_STR) {
    if (tn_any_to_owned(out, &a)) return tnpy_raise_tn(), -1;
    return 0;
  }
  if (tn_any_is_object(&a)) tn_object_retain(a.v_obj);
  *out = a;
  return 0;
}

PyObject *tnpy_dtype_to_py(DLDataType dt) {
  uint32_t code = (uint32_t)dt.code | ((uint32_t)dt.bits << 8) |
                  ((uint32_t)dt.lanes << 16);
  PyObject *key = PyLong_FromUnsignedLong(code);
  if (key == NULL) return NULL;
  if (g_dtype_cache == NULL && (g_dtype_cache = PyDict_New()) == NULL) {
    Py_DECREF(key);
    return NULL;
  }
  PyObject *hit = PyDict_GetItemWithError(g_dtype_cache, key);
  if (hit) {
    Py_DECREF(key);
    Py_INCREF(hit);
    return hit;
  }
  char buf[64];
  if (tn_dtype_print(dt, buf, sizeof buf) < 0) {
    Py_DECREF(key);
    return tnpy_raise_tn();
  }
  PyObject *s = PyUnicode_FromString(buf);
  if (s && tnpy_dtype_class) {
    PyObject *d = PyObject_CallOneArg(tnpy_dtype_class, s);
    Py_DECREF(s);
    s = d;
  }
  if (s && PyDict_SetItem(g_dtype_cache, key, s)) Py_CLEAR(s);
  Py_DECREF(key);
  return s;
}

PyObject *tnpy_device_to_py(DLDevice dev) {
  if (tnpy_device_class == NULL)
    return Py_BuildValue("(ii)", (int)dev.device_type, (int)dev.device_id);
  return PyObject_CallFunction(tnpy_device_class, "ii", (int)dev.device_type,
                               (int)dev.device_id);
}

static PyObject *ptr_to_py(void *p) {
  if (p == NULL) Py_RETURN_NONE;
  PyObject *v = PyLong_FromVoidPtr(p);
  if (v == NULL || tnpy_opaque_class == NULL) return v;
  PyObject *r = PyObject_CallOneArg(tnpy_opaque_class, v);
  Py_DECREF(v);
  return r;
}

static PyObject *decode(const char *s, Py_ssize_t n) {
  return PyUnicode_DecodeUTF8(s, n, "surrogateescape");
}

PyObject *tnpy_obj_to_py(TnObject *obj) {
  int32_t t = obj->type_index;
  if (t == TN_TYPE_STRING) {
    const TnStringObj *s = (const TnStringObj *)obj;
    return decode(s->data, (Py_ssize_t)s->size);
  }
  if (t == TN_TYPE_BYTES) {
    const TnStringObj *s = (const TnStringObj *)obj;
    return PyBytes_FromStringAndSize(s->data, (Py_ssize_t)s->size);
  }
  if (TNPY_UNLIKELY(t == g_opaque_type)) {
    PyObject *o = ((OpaquePy *)obj)->obj;
    Py_INCREF(o);
    return o;
  }
  tn_object_retain(obj);
  return tnpy_wrap(obj);
}

PyObject *tnpy_any_to_py(const TnAny *a) {
  switch (a->type_index) {
    case TN_TYPE_NONE:
      Py_RETURN_NONE;
    case TN_TYPE_INT:
      return PyLong_FromLongLong(a->v_int64);
    case TN_TYPE_BOOL:
      return PyBool_FromLong(a->v_int64 != 0);
    case TN_TYPE_FLOAT:
      return PyFloat_FromDouble(a->v_float64);
    case TN_TYPE_SMALL_STR:
      return decode(a->v_small, (Py_ssize_t)a->small_len);
    case TN_TYPE_SMALL_BYTES:
      return PyBytes_FromStringAndSize(a->v_small, (Py_ssize_t)a->small_len);
    case TN_TYPE_RAW_STR:
      return decode(a->v_c_str, (Py_ssize_t)strlen(a->v_c_str));
    case TN_TYPE_RAW_BYTES:
      return PyBytes_FromStringAndSize(a->v_bytes_ptr->data,
                                       (Py_ssize_t)a->v_bytes_ptr->size);
    case TN_TYPE_DATA_TYPE:
      return tnpy_dtype_to_py(a->v_dtype);
    case TN_TYPE_DEVICE:
      return tnpy_device_to_py(a->v_device);
    case TN_TYPE_OPAQUE_PTR:
      return ptr_to_py(a->v_ptr);
    case TN_TYPE_DLTENSOR_PTR:
      return ptr_to_py(a->v_dltensor);
    default:
      if (tn_any_is_object(a) && a->v_obj) return tnpy_obj_to_py(a->v_obj);
      PyErr_Format(PyExc_TypeError, "cannot convert a tvmnode %s to Python",
                   tn_any_type_key(a));
      return NULL;
  }
}

PyObject *tnpy_any_to_py_steal(TnAny *a) {
  if (tn_any_is_object(a)) {
    TnObject *obj = a->v_obj;
    *a = tn_any_none();
    if (obj->type_index == TN_TYPE_STRING || obj->type_index == TN_TYPE_BYTES ||
        TNPY_UNLIKELY(obj->type_index == g_opaque_type)) {
      PyObject *r = tnpy_obj_to_py(obj);
      tn_object_release(obj);
      return r;
    }
    return tnpy_wrap(obj);
  }
  return tnpy_any_to_py(a); /* plain values own nothing */
}

void tnpy_reraise_prefixed(PyObject *prefix) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  if (t == NULL) return;
  /* Interrupts, exits and memory errors pass unchanged. Exceptions whose
   * constructor does not take one message (UnicodeEncodeError, say) are
   * kept as they are, with the prefix as a note where notes exist. */
  PyObject *nv = NULL, *msg = NULL;
  if (PyErr_GivenExceptionMatches(t, PyExc_Exception) &&
      !PyErr_GivenExceptionMatches(t, PyExc_MemoryError) &&
      !PyErr_GivenExceptionMatches(t, PyExc_UnicodeError) &&
      (msg = v ? PyObject_Str(v) : NULL) != NULL) {
    PyObject *full = PyUnicode_Concat(prefix, msg);
    nv = full ? PyObject_CallOneArg(t, full) : NULL;
    Py_XDECREF(full);
    if (nv && !PyExceptionInstance_Check(nv)) Py_CLEAR(nv);
  }
  Py_XDECREF(msg);
  if (nv == NULL) {
    PyErr_Clear();
#if PY_VERSION_HEX >= 0x030B0000
    if (v && PyUnicode_GET_LENGTH(prefix) > 2) {
      PyObject *note = PyUnicode_Substring(prefix, 0,
                                           PyUnicode_GET_LENGTH(prefix) - 2);
      PyObject *r = note ? PyObject_CallMethod(v, "add_note", "O", note) : NULL;
      Py_XDECREF(note);
      Py_XDECREF(r);
      PyErr_Clear();
    }
#endif
    PyErr_Restore(t, v, tb);
    return;
  }
  if (tb) PyException_SetTraceback(nv, tb);
  PyException_SetCause(nv, v); /* steals v */
  PyException_SetContext(nv, NULL);
  ((PyBaseExceptionObject *)nv)->suppress_context = 1;
  PyErr_SetObject(t, nv);
  Py_DECREF(nv);
  Py_DECREF(t);
  Py_XDECREF(tb);
}

void tnpy_blame_arg(const char *func, Py_ssize_t index) {
  PyObject *prefix = PyUnicode_FromFormat("%s: argument %zd: ", func, index);
  if (prefix == NULL) return;
  tnpy_reraise_prefixed(prefix);
  Py_DECREF(prefix);
}

int tnpy_pack_args(TnPyArgPack *p, PyObject *const *args, Py_ssize_t n,
                   const char *func) {
  p->n = 0;
  p->args = p->small_args;
  p->temps = p->small_temps;
  if (n > TNPY_SMALL_ARGS) {
    p->args = PyMem_Malloc(sizeof(TnAny) * (size_t)n);
    p->temps = PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
    if (p->args == NULL || p->temps == NULL) {
      tnpy_pack_clear(p);
      PyErr_NoMemory();
      return -1;
    }
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (tnpy_arg_from_py(args[i], &p->args[i], &p->temps[i])) {
      tnpy_pack_clear(p);
      tnpy_blame_arg(func, i);
      return -1;
    }
    p->n = i + 1;
  }
  return 0;
}

void tnpy_pack_clear(TnPyArgPack *p) {
  for (Py_ssize_t i = 0; i < p->n; i++) tn_object_release(p->temps[i]);
  if (p->args != p->small_args) PyMem_Free(p->args);
  if (p->temps != p->small_temps) PyMem_Free(p->temps);
  p->args = p->small_args;
  p->temps = p->small_temps;
  p->n = 0;
}

PyObject *tnpy_list_from_array(TnObject *a) {
  if (a == NULL) return tnpy_raise_tn();
  int64_t n = tn_array_size(a);
  PyObject *out = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; out && i < n; i++) {
    PyObject *s = tnpy_any_to_py(tn_array_at(a, i));
    if (s == NULL) Py_CLEAR(out);
    else PyList_SET_ITEM(out, (Py_ssize_t)i, s);
  }
  tn_object_release(a);
  return out;
}
