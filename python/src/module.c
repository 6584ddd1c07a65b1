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

static PyMethodDef module_methods[] = {
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
      PyModule_AddFunctions(m, tnpy_testing_methods))
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
