/*
 * function.c: calling tn.Function from Python and Python from C.
 *
 * Python -> C: a Function proxy is called through vectorcall. Arguments
 * are converted straight from the vector into TnAny values on the C stack
 * (ints inline, strings and objects borrowed) and the packed implementation
 * is called directly through the public TnFunctionObj layout, skipping
 * tn_func_call's checks that a live proxy already guarantees. The GIL is
 * kept for the call unless the function is marked release_gil: taking and
 * dropping it costs several times the cheapest calls, and a callback on
 * the calling thread takes it back cheaply (PyGILState_Ensure sees it is
 * held). A C function that runs long, or waits for other threads that call
 * back into Python, must be marked release_gil = True.
 *
 * C -> Python: a Python callable becomes a tn.Function whose `self` is the
 * callable. The trampoline takes the GIL with PyGILState_Ensure (a no-op
 * when this thread already holds it, a new thread state for threads Python
 * never saw), converts the arguments to Python, and turns a Python
 * exception into a tn.Error that remembers it (error.c).
 */
#include "tnpy.h"

#include <dlfcn.h>
#include <string.h>

/* ---- C -> Python ---------------------------------------------------------- */

/* Exported (not static) so C frames in tracebacks can name it. */
int tnpy_callback_trampoline(void *self, const TnAny *args, int32_t nargs,
                         TnAny *ret) {
  PyGILState_STATE st = PyGILState_Ensure();
  PyObject *small[8], **pargs = small;
  int rc = -1;
  int32_t made = 0;
  if (nargs > 8) {
    pargs = PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
    if (pargs == NULL) {
      PyErr_NoMemory();
      goto done;
    }
  }
  for (; made < nargs; made++) {
    pargs[made] = tnpy_any_to_py(&args[made]);
    if (pargs[made] == NULL) goto done;
  }
  PyObject *r = PyObject_Vectorcall((PyObject *)self, pargs, (size_t)nargs,
                                    NULL);
  if (r == NULL) goto done;
  rc = tnpy_any_from_py(r, ret);
  if (rc) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *msg = v ? PyObject_Str(v) : NULL;
    if (msg == NULL) PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "the Python function %R returned a value "
                 "tvmnode cannot hold: %U", (PyObject *)self,
                 msg ? msg : Py_None);
    Py_XDECREF(msg);
    Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
  }
  Py_DECREF(r);
done:
  for (int32_t i = 0; i < made; i++) Py_DECREF(pargs[i]);
  if (pargs != small) PyMem_Free(pargs);
  if (rc) tnpy_error_from_py();
  PyGILState_Release(st);
  return rc;
}

/* Runs when the tn.Function dies, on whatever thread drops the last
 * reference. After interpreter shutdown the callable is left alone: the
 * registry may outlive Python. */
static void py_release(void *self) {
  if (!tnpy_interpreter_alive()) return;
  PyGILState_STATE st = PyGILState_Ensure();
  Py_DECREF((PyObject *)self);
  PyGILState_Release(st);
}

TnObject *tnpy_func_from_callable(PyObject *callable) {
  if (PyObject_TypeCheck(callable, &TnPyFunction_Type)) {
    TnObject *h = tnpy_get_handle(callable, "convert");
    if (h) tn_object_retain(h);
    return h;
  }
  if (!PyCallable_Check(callable))
    return PyErr_Format(PyExc_TypeError, "expected a callable, got %s",
                        Py_TYPE(callable)->tp_name), NULL;
  Py_INCREF(callable);
  TnObject *f = tn_func_new(tnpy_callback_trampoline, callable, py_release);
  if (f == NULL) tnpy_raise_tn(); /* tn_func_new released the callable */
  return f;
}

/* ---- Python -> C ------------------------------------------------------------ */

static const char *func_name(TnPyFunction *f) {
  if (f->name) {
    const char *s = PyUnicode_AsUTF8(f->name);
    if (s) return s;
    PyErr_Clear();
  }
  TnFunctionObj *fo = (TnFunctionObj *)f->base.handle;
  if (fo && fo->fn == tnpy_callback_trampoline) {
    PyObject *q = PyObject_GetAttrString((PyObject *)fo->self, "__qualname__");
    if (q && PyUnicode_Check(q)) {
      f->name = q;
      return PyUnicode_AsUTF8(q);
    }
    Py_XDECREF(q);
    PyErr_Clear();
  }
  return "tvmnode.Function";
}

/* ---- interruptible calls ----------------------------------------------------
 *
 * A C call cannot be unwound, so a Function marked `interruptible` runs on a
 * helper thread while the calling thread waits with the GIL released and
 * looks for signals every 20 ms. On Ctrl-C (on the main thread) the caller
 * raises KeyboardInterrupt at once and abandons the call: the helper owns
 * copies of the arguments and drops the result when the call ends. The
 * function runs on another thread, so C thread-local state (the current
 * PassContext, for one) is that thread's: hence opt-in, not the default.
 */

#include <pthread.h>
#include <time.h>

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done, abandoned;
  TnObject *func;
  TnAny *args;
  int32_t nargs;
  TnAny ret;
  int rc;
  TnObject *err;
} Job;

static void job_free(Job *j) {
  for (int32_t i = 0; i < j->nargs; i++) tn_any_clear(&j->args[i]);
  free(j->args);
  tn_any_clear(&j->ret);
  tn_object_release(j->err);
  tn_object_release(j->func);
  pthread_mutex_destroy(&j->mu);
  pthread_cond_destroy(&j->cv);
  free(j);
}

static void *job_run(void *p) {
  Job *j = p;
  TnFunctionObj *fo = (TnFunctionObj *)j->func;
  j->rc = fo->fn(fo->self, j->args, j->nargs, &j->ret);
  if (j->rc) j->err = tn_error_take_raised();
  pthread_mutex_lock(&j->mu);
  j->done = 1;
  int abandoned = j->abandoned;
  pthread_cond_signal(&j->cv);
  pthread_mutex_unlock(&j->mu);
  if (abandoned) job_free(j); /* the caller gave up: nobody wants it */
  return NULL;
}

/* 0 or -1 as the packed call (error raised in tvmnode), or -2 with a Python
 * exception (interrupted). */
static int call_interruptible(TnFunctionObj *fo, const TnAny *args,
                              int32_t n, TnAny *ret) {
  Job *j = calloc(1, sizeof *j);
  if (j == NULL || (n && (j->args = calloc((size_t)n, sizeof(TnAny))) == NULL)) {
    free(j);
    PyErr_NoMemory();
    return -2;
  }
  for (; j->nargs < n; j->nargs++)
    if (tn_any_to_owned(&j->args[j->nargs], &args[j->nargs])) {
      job_free(j);
      return -1;
    }
  j->ret = tn_any_none();
  j->func = &fo->header;
  tn_object_retain(j->func);
  pthread_mutex_init(&j->mu, NULL);
  pthread_cond_init(&j->cv, NULL);
  pthread_attr_t attr;
  pthread_t tid;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int started = pthread_create(&tid, &attr, job_run, j) == 0;
  pthread_attr_destroy(&attr);
  if (!started) { /* no thread: call here, not interruptible */
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fo->fn(fo->self, j->args, j->nargs, ret);
    Py_END_ALLOW_THREADS
    job_free(j);
    return rc;
  }
  for (;;) {
    int done;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&j->mu);
    if (!j->done) {
      struct timespec dl;
      clock_gettime(CLOCK_REALTIME, &dl);
      dl.tv_nsec += 20 * 1000000L;
      if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&j->cv, &j->mu, &dl);
    }
    done = j->done;
    pthread_mutex_unlock(&j->mu);
    Py_END_ALLOW_THREADS
    if (done) break;
    if (PyErr_CheckSignals()) {
      pthread_mutex_lock(&j->mu);
      done = j->done;
      j->abandoned = !done;
      pthread_mutex_unlock(&j->mu);
      if (done) job_free(j);
      return -2;
    }
  }
  int rc = j->rc;
  *ret = j->ret;
  j->ret = tn_any_none();
  if (rc) {
    tn_error_set_raised(j->err);
    j->err = NULL;
  }
  job_free(j);
  return rc;
}

static PyObject *call_failed(TnPyFunction *f) {
  TnObject *err = tn_error_take_raised();
  if (err == NULL)
    return PyErr_Format(PyExc_RuntimeError, "%s failed without raising an "
                        "error", func_name(f));
  return tnpy_raise_error(err);
}

PyObject *tnpy_function_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames) {
  TnPyFunction *f = (TnPyFunction *)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (TNPY_UNLIKELY(kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0))
    return PyErr_Format(PyExc_TypeError, "%s takes no keyword arguments",
                        func_name(f));
  TnFunctionObj *fo = (TnFunctionObj *)f->base.handle;
  if (TNPY_UNLIKELY(fo == NULL))
    return PyErr_Format(PyExc_ValueError, "the Function has no handle");
  if (TNPY_UNLIKELY(n > INT32_MAX))
    return PyErr_Format(PyExc_OverflowError, "too many arguments");
  TnAny small[TNPY_SMALL_ARGS], *a = small;
  TnObject *tsmall[TNPY_SMALL_ARGS], **temps = tsmall;
  if (n > TNPY_SMALL_ARGS) {
    a = PyMem_Malloc(sizeof(TnAny) * (size_t)n);
    temps = PyMem_Malloc(sizeof(TnObject *) * (size_t)n);
    if (a == NULL || temps == NULL) {
      PyMem_Free(a);
      PyMem_Free(temps);
      return PyErr_NoMemory();
    }
  }
  int release = f->release_gil, ntemps = 0;
  Py_ssize_t i = 0;
  tnpy_call_enter();
  for (; i < n; i++) {
    PyObject *o = args[i];
    temps[i] = NULL;
    if (TNPY_LIKELY(Py_IS_TYPE(o, &PyLong_Type))) {
      int overflow;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (TNPY_LIKELY(!overflow)) {
        a[i] = tn_any_int(v);
        continue;
      }
    }
    if (tnpy_arg_from_py(o, &a[i], &temps[i])) goto fail;
    ntemps += temps[i] != NULL;
  }
  TnAny ret = {TN_TYPE_NONE, 0, {0}};
  int rc;
  if (release) {
    if (TNPY_UNLIKELY(release == 2)) {
      rc = call_interruptible(fo, a, (int32_t)n, &ret);
    } else {
      Py_BEGIN_ALLOW_THREADS
      rc = fo->fn(fo->self, a, (int32_t)n, &ret);
      Py_END_ALLOW_THREADS
    }
  } else {
    rc = fo->fn(fo->self, a, (int32_t)n, &ret);
  }
  if (ntemps)
    for (Py_ssize_t k = 0; k < n; k++) tn_object_release(temps[k]);
  if (a != small) {
    PyMem_Free(a);
    PyMem_Free(temps);
  }
  tnpy_call_leave();
  if (TNPY_UNLIKELY(rc)) return rc == -2 ? NULL : call_failed(f);
  return tnpy_any_to_py_steal(&ret);
fail:
  for (Py_ssize_t k = 0; k < i; k++) tn_object_release(temps[k]);
  if (a != small) {
    PyMem_Free(a);
    PyMem_Free(temps);
  }
  tnpy_call_leave();
  if (!PyErr_Occurred())
    PyErr_Format(PyExc_OverflowError,
                 "int does not fit in a 64-bit signed integer");
  tnpy_blame_arg(func_name(f), i);
  return NULL;
}

static PyObject *function_new(PyTypeObject *type, PyObject *args,
                              PyObject *kw) {
  PyObject *callable;
  static char *kwlist[] = {"func", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Function", kwlist, &callable))
    return NULL;
  TnObject *h = tnpy_func_from_callable(callable);
  if (h == NULL) return NULL;
  TnPyFunction *f = (TnPyFunction *)type->tp_alloc(type, 0);
  if (f == NULL) {
    tn_object_release(h);
    return NULL;
  }
  f->base.handle = h;
  f->vectorcall = tnpy_function_vectorcall;
  f->name = NULL;
  f->release_gil = 0;
  return (PyObject *)f;
}

static void function_dealloc(PyObject *self) {
  TnPyFunction *f = (TnPyFunction *)self;
  Py_CLEAR(f->name);
  TnObject *h = f->base.handle;
  f->base.handle = NULL;
  Py_TYPE(self)->tp_free(self);
  tn_object_release(h);
}

static PyObject *function_get_name(PyObject *self, void *c) {
  (void)c;
  const char *n = func_name((TnPyFunction *)self);
  return PyUnicode_FromString(n);
}

static int function_set_name(PyObject *self, PyObject *v, void *c) {
  (void)c;
  if (v == NULL || !PyUnicode_Check(v)) {
    PyErr_SetString(PyExc_TypeError, "name must be a str");
    return -1;
  }
  Py_INCREF(v);
  Py_XSETREF(((TnPyFunction *)self)->name, v);
  return 0;
}

/* release_gil holds 0, 1 (release) or 2 (release and interruptible), so
 * the call path tests one field. */
static PyObject *function_get_release(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((TnPyFunction *)self)->release_gil != 0);
}

static int function_set_release(PyObject *self, PyObject *v, void *c) {
  (void)c;
  int b = v ? PyObject_IsTrue(v) : 0;
  if (b < 0) return -1;
  ((TnPyFunction *)self)->release_gil = b;
  return 0;
}

static PyObject *function_get_interruptible(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((TnPyFunction *)self)->release_gil == 2);
}

static int function_set_interruptible(PyObject *self, PyObject *v, void *c) {
  (void)c;
  int b = v ? PyObject_IsTrue(v) : 0;
  if (b < 0) return -1;
  TnPyFunction *f = (TnPyFunction *)self;
  f->release_gil = b ? 2 : f->release_gil != 0;
  return 0;
}

static PyObject *function_is_python(PyObject *self, void *c) {
  (void)c;
  TnFunctionObj *fo = (TnFunctionObj *)tnpy_handle(self);
  return PyBool_FromLong(fo && fo->fn == tnpy_callback_trampoline);
}

static PyGetSetDef function_getset[] = {
    {"name", function_get_name, function_set_name,
     "the name used in error messages", NULL},
    {"release_gil", function_get_release, function_set_release,
     "drop the GIL around every call (for long-running C functions)", NULL},
    {"interruptible", function_get_interruptible, function_set_interruptible,
     "run each call on a helper thread so that Ctrl-C interrupts the wait "
     "(implies release_gil; C thread-locals are the helper's)", NULL},
    {"is_python", function_is_python, NULL,
     "whether the function is implemented by a Python callable", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject TnPyFunction_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Function",
    .tp_basicsize = sizeof(TnPyFunction),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "tn.Function: a packed function, callable from Python. "
              "Function(callable) wraps a Python callable.",
    .tp_vectorcall_offset = offsetof(TnPyFunction, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = function_new,
    .tp_dealloc = function_dealloc,
    .tp_getset = function_getset,
};

/* ---- the registry ---------------------------------------------------------- */

static PyObject *wrap_named(TnObject *h, PyObject *name) {
  PyObject *p = tnpy_wrap(h);
  if (p && PyObject_TypeCheck(p, &TnPyFunction_Type)) {
    Py_INCREF(name);
    Py_XSETREF(((TnPyFunction *)p)->name, name);
  }
  return p;
}

static PyObject *get_global_func(PyObject *mod, PyObject *args,
                                 PyObject *kw) {
  (void)mod;
  PyObject *name;
  int allow_missing = 0;
  static char *kwlist[] = {"name", "allow_missing", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U|p:get_global_func", kwlist,
                                   &name, &allow_missing))
    return NULL;
  const char *s = tnpy_name_utf8(name, "a function name");
  if (s == NULL) return NULL;
  TnObject *h = tn_func_find(s);
  if (h == NULL) {
    if (tn_error_peek_raised()) return tnpy_raise_tn();
    if (allow_missing) Py_RETURN_NONE;
    return PyErr_Format(PyExc_ValueError, "cannot find global function "
                        "'%s'", s);
  }
  return wrap_named(h, name);
}

static PyObject *register_global(PyObject *mod, PyObject *args,
                                 PyObject *kw) {
  (void)mod;
  PyObject *name, *func;
  int override = 0;
  static char *kwlist[] = {"name", "func", "override", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UO|p:_register_func", kwlist,
                                   &name, &func, &override))
    return NULL;
  const char *s = tnpy_name_utf8(name, "a function name");
  if (s == NULL) return NULL;
  TnObject *h = tnpy_func_from_callable(func);
  if (h == NULL) return NULL;
  int rc = tn_func_register(s, h, override);
  tn_object_release(h);
  if (rc) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *remove_global(PyObject *mod, PyObject *name) {
  (void)mod;
  const char *s = tnpy_name_utf8(name, "a function name");
  if (s == NULL) return NULL;
  if (tn_func_unregister(s)) return tnpy_raise_tn();
  Py_RETURN_NONE;
}

static PyObject *list_global(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  return tnpy_list_from_array(tn_func_list());
}

/* _func_c_signature(func): the C signature a function was registered
 * with by the libffi bridge ("i64(i64,i64)"), or None when only its packed
 * form is known (Python callables, packed C functions). */
static PyObject *func_c_signature(PyObject *mod, PyObject *func) {
  (void)mod;
  if (!PyObject_TypeCheck(func, &TnPyFunction_Type))
    return PyErr_Format(PyExc_TypeError, "_func_c_signature: argument 'func' "
                        "expected a tvmnode.Function, got %s",
                        Py_TYPE(func)->tp_name);
  TnObject *h = tnpy_get_handle(func, "_func_c_signature");
  if (h == NULL) return NULL;
  TnObject *sig = tn_func_c_signature(h);
  if (sig == NULL) {
    if (tn_error_peek_raised()) return tnpy_raise_tn();
    Py_RETURN_NONE;
  }
  const TnStringObj *so = (const TnStringObj *)sig;
  PyObject *r = PyUnicode_FromStringAndSize(so->data, (Py_ssize_t)so->size);
  tn_object_release(sig);
  return r;
}

/* _func_from_c(address, signature, name): the C function at `address` (an
 * int, as ctypes gives it) as a Function through the libffi bridge. The
 * caller keeps the code at `address` loaded for as long as the Function
 * lives. */
static PyObject *func_from_c(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *addr, *sig, *name;
  if (!PyArg_ParseTuple(args, "OUU:_func_from_c", &addr, &sig, &name))
    return NULL;
  if (!PyLong_Check(addr))
    return PyErr_Format(PyExc_TypeError, "_func_from_c: argument 'address' "
                        "expected an int, got %s", Py_TYPE(addr)->tp_name);
  void *p = PyLong_AsVoidPtr(addr);
  if (p == NULL && PyErr_Occurred()) return NULL;
  const char *s = tnpy_name_utf8(sig, "a signature");
  if (s == NULL) return NULL;
  const char *n = tnpy_name_utf8(name, "a function name");
  if (n == NULL) return NULL;
  TnObject *f = tn_func_from_c(p, s, n);
  if (f == NULL) return tnpy_raise_tn();
  return wrap_named(f, name);
}

/* _func_from_packed(address, name): the packed C function at `address`
 * (int fn(void *self, const TnAny *args, int32_t nargs, TnAny *ret), self
 * NULL) as a Function; the caller keeps its code loaded. */
static PyObject *func_from_packed(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *addr, *name;
  if (!PyArg_ParseTuple(args, "OU:_func_from_packed", &addr, &name))
    return NULL;
  if (!PyLong_Check(addr))
    return PyErr_Format(PyExc_TypeError, "_func_from_packed: argument "
                        "'address' expected an int, got %s",
                        Py_TYPE(addr)->tp_name);
  void *p = PyLong_AsVoidPtr(addr);
  if (p == NULL) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "_func_from_packed: argument "
                      "'address' is NULL");
    return NULL;
  }
  TnPackedFn fn;
  memcpy(&fn, &p, sizeof fn);
  TnObject *f = tn_func_new(fn, NULL, NULL);
  if (f == NULL) return tnpy_raise_tn();
  return wrap_named(f, name);
}

/* _library_path(): the file of the libtvmnode this extension runs on, so
 * that code compiled at run time links the very same library (one type
 * table, one registry). */
static PyObject *library_path(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  Dl_info info;
  if (dladdr((void *)tn_func_new, &info) == 0 || info.dli_fname == NULL)
    return PyErr_Format(PyExc_OSError, "_library_path: dladdr cannot place "
                        "libtvmnode");
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

/* convert(value): any Python value as tvmnode sees it (owned), back as
 * Python: lists become Arrays, callables Functions, arrays Tensors. */
static PyObject *convert(PyObject *mod, PyObject *v) {
  (void)mod;
  TnAny a;
  if (tnpy_any_from_py(v, &a)) return NULL;
  return tnpy_any_to_py_steal(&a);
}

PyMethodDef tnpy_function_methods[] = {
    {"get_global_func", (PyCFunction)(void (*)(void))get_global_func,
     METH_VARARGS | METH_KEYWORDS,
     "get_global_func(name, allow_missing=False) -> Function or None"},
    {"_register_func", (PyCFunction)(void (*)(void))register_global,
     METH_VARARGS | METH_KEYWORDS,
     "_register_func(name, func, override=False)"},
    {"remove_global_func", remove_global, METH_O,
     "Unregister a global function (KeyError if absent)."},
    {"list_global_func_names", list_global, METH_NOARGS,
     "The registered names, sorted."},
    {"convert", convert, METH_O, "A Python value as a tvmnode value."},
    {"_func_c_signature", func_c_signature, METH_O,
     "_func_c_signature(func) -> the C signature it was registered with, "
     "or None"},
    {"_func_from_c", func_from_c, METH_VARARGS,
     "_func_from_c(address, signature, name) -> Function (libffi bridge)"},
    {"_func_from_packed", func_from_packed, METH_VARARGS,
     "_func_from_packed(address, name) -> Function (a packed C function)"},
    {"_library_path", library_path, METH_NOARGS,
     "The file of the loaded libtvmnode."},
    {NULL, NULL, 0, NULL}};

int tnpy_function_init(PyObject *module) {
  TnPyFunction_Type.tp_base = &TnPyObject_Type;
  if (PyType_Ready(&TnPyFunction_Type)) return -1;
  Py_INCREF(&TnPyFunction_Type);
  if (PyModule_AddObject(module, "Function", (PyObject *)&TnPyFunction_Type))
    return -1;
  return PyModule_AddFunctions(module, tnpy_function_methods);
}
