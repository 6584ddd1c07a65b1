/*
 * error.c: errors crossing between Python and C, both ways.
 *
 * C -> Python: a tn.Error becomes an exception of the class its kind names
 * (a builtin such as TypeError, else a tvmnode.TVMNodeError subclass the
 * Python layer makes for the kind), its cause becomes __cause__, and its
 * frames become traceback entries, so a Python traceback shows the C frames
 * between the Python caller and the failure.
 *
 * Python -> C: an exception leaving a callback becomes a tn.Error with the
 * class name as its kind, str(exc) as its message and the Python frames
 * appended as text, so C code (and tn_error_format) sees both languages.
 * The error also remembers the exception object itself: a tn.Error has no
 * slot for a foreign payload, so a table here maps the error (held by a
 * weak reference, which keeps its address from being reused) to the
 * exception. When that error, or an error caused by it, comes back to
 * Python, the original exception object is raised again: same type, same
 * attributes, its Python frames intact, the C frames added in between.
 * Entries whose error died without coming back are swept.
 */
#include "tnpy.h"

#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030D0000
/* Moved to an internal header in 3.13; the symbol is still exported. */
PyAPI_FUNC(void) _PyTraceback_Add(const char *, const char *, int);
#endif

PyObject *tnpy_error_hook;

typedef struct {
  TnObject *err; /* weak reference */
  PyObject *exc; /* strong */
} Kept;

static Kept *g_kept;
static size_t g_nkept, g_capkept;

void tnpy_error_sweep(void) {
  size_t j = 0;
  for (size_t i = 0; i < g_nkept; i++) {
    if (tn_object_strong_count(g_kept[i].err) == 0) {
      tn_object_weak_release(g_kept[i].err);
      Py_DECREF(g_kept[i].exc);
    } else {
      g_kept[j++] = g_kept[i];
    }
  }
  g_nkept = j;
}

static void keep(TnObject *err, PyObject *exc) {
  if (g_nkept >= 64) tnpy_error_sweep();
  if (g_nkept == g_capkept) {
    size_t cap = g_capkept ? g_capkept * 2 : 16;
    Kept *k = PyMem_Realloc(g_kept, cap * sizeof *k);
    if (k == NULL) return; /* only the identity is lost, not the error */
    g_kept = k;
    g_capkept = cap;
  }
  tn_object_weak_retain(err);
  Py_INCREF(exc);
  g_kept[g_nkept].err = err;
  g_kept[g_nkept].exc = exc;
  g_nkept++;
}

/* The exception kept for `err` (new reference), or NULL. The entry stays:
 * the same error may come back more than once. */
static PyObject *kept_for(const TnObject *err) {
  for (size_t i = g_nkept; i-- > 0;)
    if (g_kept[i].err == err) {
      Py_INCREF(g_kept[i].exc);
      return g_kept[i].exc;
    }
  return NULL;
}

/* ---- frames ------------------------------------------------------------- */

/* Add one traceback entry for a frame's text to the current exception.
 * C frames read "sym+0x1f (libtvmnode.so.0) [C]" or "obj+0x1f [C]";
 * frames appended by Python read 'File "f.py", line 3, in g'. */
static void add_frame(const char *text) {
  char file[512], func[256];
  int line = 0;
  if (sscanf(text, "File \"%511[^\"]\", line %d, in %255[^\n]", file, &line,
             func) == 3) {
    _PyTraceback_Add(func, file, line);
    return;
  }
  const char *open = strrchr(text, '(');
  const char *close = open ? strchr(open, ')') : NULL;
  if (open && close && close > open + 1) {
    size_t fl = (size_t)(close - open - 1), nl = (size_t)(open - text);
    if (fl >= sizeof file) fl = sizeof file - 1;
    if (nl >= sizeof func) nl = sizeof func - 1;
    memcpy(file, open + 1, fl);
    file[fl] = 0;
    memcpy(func, text, nl);
    while (nl > 0 && func[nl - 1] == ' ') nl--;
    func[nl] = 0;
  } else {
    const char *plus = strchr(text, '+');
    size_t fl = plus ? (size_t)(plus - text) : strlen(text);
    if (fl >= sizeof file) fl = sizeof file - 1;
    memcpy(file, text, fl);
    file[fl] = 0;
    snprintf(func, sizeof func, "%s", text);
    char *c = strstr(func, " [C]");
    if (c) *c = 0;
  }
  _PyTraceback_Add(func, file, 0);
}

static int is_c_frame(const char *text) {
  size_t n = strlen(text);
  return n >= 4 && strcmp(text + n - 4, " [C]") == 0;
}

/* A C frame inside the Python interpreter: where the C part of the story
 * ends and the Python caller's frames (which Python shows itself) begin. */
static int is_interpreter_frame(const char *text) {
  const char *open = strrchr(text, '(');
  const char *obj = open ? open + 1 : text;
  return strncmp(obj, "python", 6) == 0 || strncmp(obj, "libpython", 9) == 0;
}

/* Put the frames of `err` on the current exception's traceback, outermost
 * last (PyTraceBack_Here prepends). With `c_only`, frames appended as text
 * by language layers are skipped (the exception already has them). */
static void add_frames(const TnObject *err, int c_only) {
  int64_t n = tn_error_frame_count(err);
  if (n < 0) {
    tn_error_set_raised(NULL);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    const char *f = tn_error_frame(err, i);
    if (f == NULL) {
      tn_error_set_raised(NULL);
      break;
    }
    int c = is_c_frame(f);
    if (c && is_interpreter_frame(f)) {
      /* skip the interpreter's own frames up to the next appended one */
      while (i + 1 < n && (f = tn_error_frame(err, i + 1)) && is_c_frame(f))
        i++;
      continue;
    }
    if (c_only && !c) continue;
    /* the error machinery itself is noise in a traceback */
    if (c && (strncmp(f, "tn_error_", 9) == 0 ||
              strncmp(f, "tnpy_error_", 11) == 0))
      continue;
    add_frame(f);
  }
}

/* Set `exc`'s traceback to its own plus the frames of `err`. */
static void attach_frames(PyObject *exc, const TnObject *err, int c_only) {
  PyObject *tb = PyException_GetTraceback(exc);
  PyErr_Restore((PyObject *)Py_TYPE(exc), exc, tb); /* steals all three */
  Py_INCREF(Py_TYPE(exc));
  Py_INCREF(exc);
  add_frames(err, c_only);
  PyObject *t, *v;
  PyErr_Fetch(&t, &v, &tb);
  if (v == exc && tb) PyException_SetTraceback(exc, tb);
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
}

/* ---- C -> Python ---------------------------------------------------------- */

static PyObject *class_for_kind(const char *kind) {
  if (tnpy_error_hook) {
    PyObject *c = PyObject_CallFunction(tnpy_error_hook, "s", kind);
    if (c) return c;
    PyErr_Clear();
  }
  Py_INCREF(PyExc_RuntimeError);
  return PyExc_RuntimeError;
}

/* The exception for `err` and its causes (new reference), or NULL with no
 * exception set. */
static PyObject *exception_for(const TnObject *err, int depth) {
  PyObject *orig = kept_for(err);
  if (orig) {
    attach_frames(orig, err, 1);
    return orig;
  }
  const char *kind = tn_error_kind(err), *msg = tn_error_message(err);
  const TnObject *cause = tn_error_cause(err);
  PyObject *cexc = cause && depth < 64 ? exception_for(cause, depth + 1) : NULL;
  PyObject *cls = NULL, *exc = NULL;
  /* A wrapped Python exception (a pass that raised, say) keeps its class
   * when the wrapper kept its kind. */
  if (cexc && strcmp(Py_TYPE(cexc)->tp_name, kind) == 0) {
    cls = (PyObject *)Py_TYPE(cexc);
    Py_INCREF(cls);
  } else if (cexc) {
    const char *dot = strrchr(Py_TYPE(cexc)->tp_name, '.');
    if (dot && strcmp(dot + 1, kind) == 0) {
      cls = (PyObject *)Py_TYPE(cexc);
      Py_INCREF(cls);
    }
  }
  if (cls == NULL) cls = class_for_kind(kind ? kind : "RuntimeError");
  PyObject *m = PyUnicode_DecodeUTF8(msg ? msg : "", (Py_ssize_t)strlen(msg ? msg : ""),
                                     "replace");
  if (m) exc = PyObject_CallOneArg(cls, m);
  if (exc == NULL || !PyExceptionInstance_Check(exc)) {
    PyErr_Clear();
    Py_XDECREF(exc);
    Py_DECREF(cls);
    cls = class_for_kind("RuntimeError");
    exc = m ? PyObject_CallOneArg(cls, m) : NULL;
    if (exc == NULL) PyErr_Clear();
  }
  Py_XDECREF(m);
  Py_DECREF(cls);
  if (exc == NULL) {
    Py_XDECREF(cexc);
    return NULL;
  }
  if (cexc) PyException_SetCause(exc, cexc); /* steals */
  attach_frames(exc, err, 0);
  return exc;
}

PyObject *tnpy_raise_error(TnObject *err) {
  PyObject *exc = exception_for(err, 0);
  tn_object_release(err);
  if (exc == NULL) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "tvmnode: an error could not be "
                      "converted");
    return NULL;
  }
  PyObject *tb = PyException_GetTraceback(exc);
  PyObject *type = (PyObject *)Py_TYPE(exc);
  Py_INCREF(type);
  PyErr_Restore(type, exc, tb);
  return NULL;
}

PyObject *tnpy_raise_tn(void) {
  TnObject *err = tn_error_take_raised();
  if (err == NULL) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "tvmnode: a call failed without "
                      "raising an error");
    return NULL;
  }
  return tnpy_raise_error(err);
}

/* ---- Python -> C ---------------------------------------------------------- */

static const char *kind_of(PyObject *exc) {
  PyObject *k = PyObject_GetAttrString((PyObject *)Py_TYPE(exc), "_tn_kind");
  if (k && PyUnicode_Check(k)) {
    const char *s = PyUnicode_AsUTF8(k);
    Py_DECREF(k); /* the class keeps it alive */
    if (s) return s;
  }
  Py_XDECREF(k);
  PyErr_Clear();
  const char *name = Py_TYPE(exc)->tp_name, *dot = strrchr(name, '.');
  return dot ? dot + 1 : name;
}

int tnpy_error_from_py(void) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  if (v == NULL) {
    Py_XDECREF(t);
    Py_XDECREF(tb);
    return tn_error_raise("RuntimeError", "a Python call failed without an "
                          "exception");
  }
  if (tb) PyException_SetTraceback(v, tb);
  PyObject *s = PyObject_Str(v);
  const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
  if (msg == NULL) {
    PyErr_Clear();
    msg = "<exception str() failed>";
  }
  TnObject *err = tn_error_new(kind_of(v), msg);
  Py_XDECREF(s);
  if (err) {
    /* Python frames, innermost first as tn.Error orders them. */
    PyObject *frames = PyList_New(0);
    for (PyObject *cur = tb; frames && cur && cur != Py_None;
         cur = (PyObject *)((PyTracebackObject *)cur)->tb_next) {
      PyTracebackObject *tbo = (PyTracebackObject *)cur;
      PyCodeObject *code = PyFrame_GetCode(tbo->tb_frame);
      PyObject *line = PyUnicode_FromFormat(
          "File \"%U\", line %d, in %U", code->co_filename, tbo->tb_lineno,
          code->co_name);
      Py_DECREF(code);
      if (line == NULL || PyList_Append(frames, line)) {
        PyErr_Clear();
        Py_XDECREF(line);
        break;
      }
      Py_DECREF(line);
    }
    for (Py_ssize_t i = frames ? PyList_GET_SIZE(frames) : 0; i-- > 0;) {
      const char *f = PyUnicode_AsUTF8(PyList_GET_ITEM(frames, i));
      if (f) tn_error_append_frame(err, f);
    }
    Py_XDECREF(frames);
    PyErr_Clear();
    keep(err, v);
    tn_error_set_raised(err);
  }
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
  return -1;
}

/* ---- module functions ------------------------------------------------------ */

static PyObject *set_error_hook(PyObject *mod, PyObject *hook) {
  (void)mod;
  Py_INCREF(hook);
  Py_XSETREF(tnpy_error_hook, hook);
  Py_RETURN_NONE;
}

/* _raise_error(kind, message): make a C error and raise it, for tests of
 * the C -> Python mapping. */
static PyObject *raise_error(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *kind, *msg;
  if (!PyArg_ParseTuple(args, "ss:_raise_error", &kind, &msg)) return NULL;
  tn_error_raise(kind, "%s", msg);
  return tnpy_raise_tn();
}

/* _error_roundtrip(callable, *args): call a Python callable through C and
 * return the tn.Error text it produced (kind, message, frames). */
static PyObject *format_python_error(PyObject *mod, PyObject *callable) {
  (void)mod;
  TnObject *f = tnpy_func_from_callable(callable);
  if (f == NULL) return NULL;
  TnAny ret = tn_any_none();
  int rc = tn_func_call(f, NULL, 0, &ret);
  tn_any_clear(&ret);
  tn_object_release(f);
  if (rc == 0) Py_RETURN_NONE;
  TnObject *err = tn_error_take_raised();
  TnObject *s = err ? tn_error_format(err) : NULL;
  tn_object_release(err);
  if (s == NULL) return tnpy_raise_tn();
  PyObject *r = tnpy_obj_to_py(s);
  tn_object_release(s);
  return r;
}

static PyObject *kept_count(PyObject *mod, PyObject *u) {
  (void)mod, (void)u;
  tnpy_error_sweep();
  return PyLong_FromSize_t(g_nkept);
}

static PyMethodDef error_methods[] = {
    {"_set_error_hook", set_error_hook, METH_O,
     "The Python function mapping an error kind to an exception class."},
    {"_raise_error", raise_error, METH_VARARGS,
     "Raise a C error of the given kind (tests)."},
    {"_format_python_error", format_python_error, METH_O,
     "Call a callable through C; return tn_error_format of its error."},
    {"_kept_error_count", kept_count, METH_NOARGS,
     "Python exceptions still remembered by live C errors."},
    {NULL, NULL, 0, NULL}};

int tnpy_error_init(PyObject *module) {
  return PyModule_AddFunctions(module, error_methods);
}
