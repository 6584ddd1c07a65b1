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

/* A list/tuple as a new tn.Array (items owned by the array). */
static TnObject *array_from_seq(PyObject *seq) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject **items = PySequence_Fast_ITEMS(seq);
  TnAny small[16] = {{0}}, *vals = small;
  if (n > 16) {
    vals = PyMem_Malloc(sizeof(TnAny) * (size_t)n);
    if (vals == NULL) return PyErr_NoMemory(), NULL;
  }
  Py_ssize_t done = 0;
  TnObject *arr = NULL;
  for (; done < n; done++) {
    if (tnpy_any_from_py(items[done], &vals[done])) {
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      PyErr_NormalizeException(&t, &v, &tb);
      PyObject *msg = v ? PyObject_Str(v) : NULL;
      PyErr_Format(t, "item %zd: %U", done, msg ? msg : Py_None);
      Py_XDECREF(msg);
      Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
      goto out;
    }
  }
  arr = tn_array_new(vals, n);
  if (arr == NULL) tnpy_raise_tn();
out:
  for (Py_ssize_t i = 0; i < done; i++) tn_any_clear(&vals[i]);
  if (vals != small) PyMem_Free(vals);
  return arr;
}

static TnObject *map_from_dict(PyObject *d) {
  Py_ssize_t n = PyDict_GET_SIZE(d), pos = 0, done = 0;
  TnAny *keys = PyMem_Malloc(sizeof(TnAny) * (size_t)(n ? n : 1));
  TnAny *vals = PyMem_Malloc(sizeof(TnAny) * (size_t)(n ? n : 1));
  TnObject *map = NULL;
  PyObject *k, *v;
  if (keys == NULL || vals == NULL) {
    PyErr_NoMemory();
    goto out;
  }
  while (PyDict_Next(d, &pos, &k, &v)) {
    if (tnpy_any_from_py(k, &keys[done])) goto out;
    if (tnpy_any_from_py(v, &vals[done])) {
      tn_any_clear(&keys[done]);
      goto out;
    }
    done++;
  }
  map = tn_map_new(keys, vals, n);
  if (map == NULL) tnpy_raise_tn();
out:
  for (Py_ssize_t i = 0; i < done; i++) {
    tn_any_clear(&keys[i]);
    tn_any_clear(&vals[i]);
  }
  PyMem_Free(keys);
  PyMem_Free(vals);
  return map;
}

/* DataType is a str subclass in the Python layer: parse its text. */
static int dtype_arg(PyObject *o, TnAny *out) {
  const char *s = PyUnicode_AsUTF8(o);
  if (s == NULL) return -1;
  DLDataType dt;
  if (tn_dtype_parse(s, &dt)) return tnpy_raise_tn(), -1;
  *out = tn_any_dtype(dt);
  return 0;
}

static int device_arg(PyObject *o, TnAny *out) {
  PyObject *t = PyObject_GetAttrString(o, "device_type");
  PyObject *i = t ? PyObject_GetAttrString(o, "device_id") : NULL;
  long tv = t ? PyLong_AsLong(t) : -1, iv = i ? PyLong_AsLong(i) : -1;
  Py_XDECREF(t);
  Py_XDECREF(i);
  if (PyErr_Occurred()) return -1;
  DLDevice d = {(DLDeviceType)tv, (int32_t)iv};
  *out = tn_any_device(d);
  return 0;
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
  if (PyList_Check(o) || PyTuple_Check(o)) {
    PyObject *seq = PySequence_Fast(o, "expected a sequence");
    if (seq == NULL) return -1;
    TnObject *arr = array_from_seq(seq);
    Py_DECREF(seq);
    if (arr == NULL) return -1;
    *temp = arr;
    *out = tn_any_obj(arr);
    return 0;
  }
  if (PyDict_Check(o)) {
    TnObject *map = map_from_dict(o);
    if (map == NULL) return -1;
    *temp = map;
    *out = tn_any_obj(map);
    return 0;
  }
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
  /* numpy scalars and other number-likes */
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
  PyErr_Format(PyExc_TypeError, "cannot convert %s to a tvmnode value",
               Py_TYPE(o)->tp_name);
  return -1;
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
    if (obj->type_index == TN_TYPE_STRING || obj->type_index == TN_TYPE_BYTES) {
      PyObject *r = tnpy_obj_to_py(obj);
      tn_object_release(obj);
      return r;
    }
    return tnpy_wrap(obj);
  }
  return tnpy_any_to_py(a); /* plain values own nothing */
}

void tnpy_blame_arg(const char *func, Py_ssize_t index) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  PyObject *msg = v ? PyObject_Str(v) : NULL;
  if (msg == NULL) PyErr_Clear();
  PyErr_Format(t ? t : PyExc_TypeError, "%s: argument %zd: %U", func, index,
               msg ? msg : Py_None);
  Py_XDECREF(msg);
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
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
