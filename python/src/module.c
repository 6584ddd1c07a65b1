/*
 * module.c: the tvmnode._ffi extension module: set-up and the hooks the
 * pure-Python layer installs.
 *
 * The Python layer (tvmnode/__init__.py and friends) owns everything that
 * is policy rather than mechanism: which class stands for a type key, how
 * an error kind maps to an exception class, what DataType and Device look
 * like. It hands those to this module once at import through _set_hooks,
 * and the C code calls back only when it meets something new (a type index
 * without a class, an error kind not seen before).
 */
#include "tnpy.h"

static PyObject *set_hooks(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"class_factory", "error_hook", "dtype_class",
                           "device_class", "opaque_class", NULL};
  PyObject *cf = NULL, *eh = NULL, *dc = NULL, *dev = NULL, *op = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO:_set_hooks", kwlist, &cf,
                                   &eh, &dc, &dev, &op))
    return NULL;
  PyObject **slots[] = {&tnpy_class_factory, &tnpy_error_hook,
                        &tnpy_dtype_class, &tnpy_device_class,
                        &tnpy_opaque_class};
  PyObject *vals[] = {cf, eh, dc, dev, op};
  for (int i = 0; i < 5; i++) {
    if (vals[i] == NULL) continue;
    Py_INCREF(vals[i]);
    Py_XSETREF(*slots[i], vals[i]);
  }
  Py_RETURN_NONE;
}

static PyObject *abi_version(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return PyLong_FromLong(tn_abi_version());
}

static PyObject *lib_version(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  return PyUnicode_FromString(tn_version());
}

/* (text, code, bits, lanes) of a DLDataType the C library names; the text
 * is the one tn_dtype_print writes (the canonical spelling). */
static PyObject *dtype_tuple(DLDataType dt) {
  char buf[64];
  int n = tn_dtype_print(dt, buf, sizeof buf);
  if (n < 0) return tnpy_raise_tn();
  if ((size_t)n >= sizeof buf)
    return PyErr_Format(PyExc_ValueError, "data type name too long");
  return Py_BuildValue("(siii)", buf, (int)dt.code, (int)dt.bits,
                       (int)dt.lanes);
}

/* _dtype_parse(text): ValueError naming the text when the C parser, the
 * one every dtype string in tvmnode goes through, rejects it. */
static PyObject *dtype_parse(PyObject *m, PyObject *o) {
  (void)m;
  const char *s = tnpy_name_utf8(o, "a data type");
  if (s == NULL) return NULL;
  DLDataType dt;
  if (tn_dtype_parse(s, &dt)) return tnpy_raise_tn();
  return dtype_tuple(dt);
}

/* _dtype_from_parts(code, bits, lanes): only what prints and reads back as
 * itself (the rule the C library applies to values from outside). */
static PyObject *dtype_from_parts(PyObject *m, PyObject *args) {
  (void)m;
  long code, bits, lanes;
  if (!PyArg_ParseTuple(args, "lll:_dtype_from_parts", &code, &bits, &lanes))
    return NULL;
  if (code >= 0 && code <= 255 && bits >= 0 && bits <= 255 && lanes >= 0 &&
      lanes <= 65535) {
    DLDataType dt = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes}, back;
    char buf[64];
    int n = tn_dtype_print(dt, buf, sizeof buf);
    if (n > 0 && (size_t)n < sizeof buf && tn_dtype_parse(buf, &back) == 0 &&
        back.code == dt.code && back.bits == dt.bits && back.lanes == dt.lanes)
      return dtype_tuple(dt);
    tn_error_set_raised(NULL);
  }
  return PyErr_Format(PyExc_ValueError, "(code %ld, bits %ld, lanes %ld) is "
                      "not a data type tvmnode can name", code, bits, lanes);
}

static PyMethodDef module_methods[] = {
    {"_dtype_parse", dtype_parse, METH_O,
     "_dtype_parse(text) -> (canonical text, code, bits, lanes)"},
    {"_dtype_from_parts", dtype_from_parts, METH_VARARGS,
     "_dtype_from_parts(code, bits, lanes) -> (canonical text, code, bits, "
     "lanes)"},
    {"_set_hooks", (PyCFunction)(void (*)(void))set_hooks,
     METH_VARARGS | METH_KEYWORDS,
     "Install the Python layer's class factory, error hook and value "
     "classes."},
    {"abi_version", abi_version, METH_NOARGS,
     "TN_ABI_VERSION of the loaded library."},
    {"library_version", lib_version, METH_NOARGS,
     "Release version of the loaded library."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tvmnode._ffi",
    "The CPython binding of the tvmnode C library (internal: use the "
    "tvmnode package).",
    -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ffi(void) {
  if (tn_abi_version() / 1000 != TN_ABI_VERSION_MAJOR) {
    PyErr_Format(PyExc_ImportError, "tvmnode: the library has ABI %d, this "
                 "binding was built for %d", (int)tn_abi_version(),
                 TN_ABI_VERSION);
    return NULL;
  }
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  if (tnpy_object_init_types(m) || tnpy_function_init(m) ||
      tnpy_tensor_init(m) || tnpy_error_init(m) || tnpy_functor_init(m) ||
      PyModule_AddFunctions(m, tnpy_ir_methods) ||
      PyModule_AddFunctions(m, tnpy_testing_methods) ||
      PyModule_AddFunctions(m, tnpy_runtime_methods))
    goto fail;
  /* Functions and tensors have C classes of their own. */
  PyObject *r1 = PyObject_CallMethod(m, "_register_class", "iO",
                                     TN_TYPE_FUNCTION, &TnPyFunction_Type);
  PyObject *r2 = r1 ? PyObject_CallMethod(m, "_register_class", "iO",
                                          TN_TYPE_TENSOR, &TnPyTensor_Type)
                    : NULL;
  Py_XDECREF(r1);
  if (r2 == NULL) goto fail;
  Py_DECREF(r2);
  struct {
    const char *name;
    long value;
  } ints[] = {{"ABI_VERSION", TN_ABI_VERSION},
              {"TYPE_OBJECT", TN_TYPE_OBJECT},
              {"TYPE_STRING", TN_TYPE_STRING},
              {"TYPE_FUNCTION", TN_TYPE_FUNCTION},
              {"TYPE_TENSOR", TN_TYPE_TENSOR},
              {"TYPE_ARRAY", TN_TYPE_ARRAY},
              {"TYPE_MAP", TN_TYPE_MAP},
              {"TYPE_INT", TN_TYPE_INT},
              {"TYPE_FLOAT", TN_TYPE_FLOAT},
              {"TYPE_BOOL", TN_TYPE_BOOL},
              {"FIELD_READONLY", TN_FIELD_READONLY},
              {"FIELD_NO_SEQ", TN_FIELD_NO_SEQ},
              {"FIELD_HAS_DEFAULT", TN_FIELD_HAS_DEFAULT},
              {"FIELD_OPTIONAL", TN_FIELD_OPTIONAL},
              {"FIELD_DEF", TN_FIELD_DEF},
              {"NODE_TREE", TN_NODE_TREE},
              {"NODE_DAG", TN_NODE_DAG},
              {"NODE_VAR", TN_NODE_VAR},
              {"NODE_UNIQUE", TN_NODE_UNIQUE}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (PyModule_AddIntConstant(m, ints[i].name, ints[i].value)) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
