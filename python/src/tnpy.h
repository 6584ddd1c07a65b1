/*
 * tnpy.h: what the files of the _ffi extension share.
 *
 * The extension is one CPython module split by concept (objects, functions,
 * errors, tensors, IR, visitors) so each file stays small; they meet here.
 * Every Python proxy of a tvmnode object is a TnPyObject: the Python header
 * and one strong reference to the C object, nothing else, so making a proxy
 * is one small allocation and reading a field goes straight to the C layout
 * that the reflection table describes. Conversions never build intermediate
 * Python objects on the way into C: arguments become TnAny values on the C
 * stack, borrowing from the Python objects while the call runs.
 */
#ifndef TVMNODE_PY_TNPY_H_
#define TVMNODE_PY_TNPY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <tvmnode/tvmnode.h>

#if defined(__GNUC__) || defined(__clang__)
#define TNPY_LIKELY(x) __builtin_expect(!!(x), 1)
#define TNPY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TNPY_LIKELY(x) (x)
#define TNPY_UNLIKELY(x) (x)
#endif

/* Every proxy: a Python object holding one strong reference. `handle` is
 * NULL only between Object.__new__ and a constructor that fills it. */
typedef struct {
  PyObject_HEAD
  TnObject *handle;
} TnPyObject;

/* A tn.Function proxy: callable through vectorcall. */
typedef struct {
  TnPyObject base;
  vectorcallfunc vectorcall;
  PyObject *name;  /* str used in error messages, or NULL */
  int release_gil; /* drop the GIL around every call */
} TnPyFunction;

extern PyTypeObject TnPyObject_Type;
extern PyTypeObject TnPyFunction_Type;
extern PyTypeObject TnPyArray_Type;
extern PyTypeObject TnPyMap_Type;
extern PyTypeObject TnPyList_Type;
extern PyTypeObject TnPyDict_Type;
extern PyTypeObject TnPyShape_Type;
extern PyTypeObject TnPyTensor_Type;
extern PyTypeObject TnPyFieldDescr_Type;
extern PyTypeObject TnPyFunctor_Type;

static inline int tnpy_is_object(PyObject *o) {
  return PyObject_TypeCheck(o, &TnPyObject_Type);
}
static inline TnObject *tnpy_handle(PyObject *o) {
  return ((TnPyObject *)o)->handle;
}

/* ---- object.c ------------------------------------------------------------ */

/* The Python class for a type index (borrowed), made on first use by the
 * Python layer's factory; NULL with an exception set. */
PyTypeObject *tnpy_class_for(int32_t type_index);
/* A proxy for `obj`, taking over the caller's reference (transfer full);
 * NULL (with `obj` released) on failure. */
PyObject *tnpy_wrap(TnObject *obj);
/* The handle of a proxy, or NULL with a TypeError / ValueError. */
TnObject *tnpy_get_handle(PyObject *o, const char *who);
/* Whether a node type was declared from Python (py_class): its read-only
 * fields may be written by Field.set; -1 with an exception. */
int tnpy_is_py_declared(int32_t type_index);
int tnpy_object_init_types(PyObject *module);
/* A field read straight from the C layout described by `d`. */
PyObject *tnpy_field_read(const TnObject *obj, const TnFieldDesc *d);

/* ---- convert.c ----------------------------------------------------------- */

/* Python -> TnAny for one call argument. The result may borrow from `o`
 * (strings, proxies) for as long as `o` lives; a new object made for it is
 * stored in `*temp` for the caller to release after the call. Returns 0, or
 * -1 with a Python exception that does not name the argument. */
int tnpy_arg_from_py(PyObject *o, TnAny *out, TnObject **temp);
/* Python -> an owned TnAny (for containers and callback results). */
int tnpy_any_from_py(PyObject *o, TnAny *out);
/* A list, tuple or dict as a new tn.Array / tn.Map, or tn.List / tn.Dict
 * when `mutable_` (transfer full); NULL with a Python exception. Nesting
 * depth is bounded by memory only; a container that contains itself is a
 * ValueError. */
TnObject *tnpy_container_from_py(PyObject *o, int mutable_);
/* A str's UTF-8 for use as a C string (a function, type, field or key
 * name): TypeError if not a str, ValueError if it holds a NUL (C would see
 * it cut short), UnicodeEncodeError if it cannot be encoded. */
const char *tnpy_name_utf8(PyObject *o, const char *what);
/* TnAny -> Python. The _steal form consumes an owned any. */
PyObject *tnpy_any_to_py(const TnAny *a);
PyObject *tnpy_any_to_py_steal(TnAny *a);
/* A Python list of a tn.Array's items (takes the array: transfer full; NULL
 * raises the pending tvmnode error). */
PyObject *tnpy_list_from_array(TnObject *a);
/* An object handle as Python: strings and bytes as str / bytes, everything
 * else as a proxy (a new reference is taken). */
PyObject *tnpy_obj_to_py(TnObject *obj);
/* Raise the pending exception again with `prefix` before its message (same
 * type, the original as __cause__); exceptions that cannot be rebuilt from a
 * message (UnicodeError, BaseException that are not Exception) pass
 * unchanged, with the prefix as a note. */
void tnpy_reraise_prefixed(PyObject *prefix);
/* Turn a conversion error into one that names the function and argument. */
void tnpy_blame_arg(const char *func, Py_ssize_t index);
/* A DLDataType as tvmnode.DataType, a DLDevice as tvmnode.Device. */
PyObject *tnpy_dtype_to_py(DLDataType dt);
PyObject *tnpy_device_to_py(DLDevice dev);
/* Hooks set by the Python layer. */
extern PyObject *tnpy_dtype_class, *tnpy_device_class, *tnpy_class_factory,
    *tnpy_opaque_class;

/* Argument packs: up to TNPY_SMALL_ARGS on the C stack. */
#define TNPY_SMALL_ARGS 8
typedef struct {
  TnAny *args;
  TnObject **temps;
  Py_ssize_t n;
  TnAny small_args[TNPY_SMALL_ARGS];
  TnObject *small_temps[TNPY_SMALL_ARGS];
} TnPyArgPack;
/* Convert `n` Python arguments; on failure the error names `func` and the
 * index, and the pack is already cleared. */
int tnpy_pack_args(TnPyArgPack *p, PyObject *const *args, Py_ssize_t n,
                   const char *func);
void tnpy_pack_clear(TnPyArgPack *p);

/* ---- error.c ------------------------------------------------------------- */

/* Take the raised tn.Error and raise it as a Python exception; returns NULL
 * for `return tnpy_raise_tn();`. */
PyObject *tnpy_raise_tn(void);
/* Same with a given error (transfer full). */
PyObject *tnpy_raise_error(TnObject *err);
/* The current Python exception as a tn.Error in the raised slot (the Python
 * error is cleared); returns -1. */
int tnpy_error_from_py(void);
int tnpy_error_init(PyObject *module);
/* Release errors whose Python exceptions we kept and that have died. */
void tnpy_error_sweep(void);
extern PyObject *tnpy_error_hook; /* Python: kind -> exception class */

/* ---- function.c ---------------------------------------------------------- */

/* The vectorcall of Function proxies. */
PyObject *tnpy_function_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames);
/* The packed implementation of functions made from Python callables. */
int tnpy_callback_trampoline(void *self, const TnAny *args, int32_t nargs,
                             TnAny *ret);
/* A tn.Function calling a Python callable (transfer full). */
TnObject *tnpy_func_from_callable(PyObject *callable);
int tnpy_function_init(PyObject *module);
extern PyMethodDef tnpy_function_methods[];

/* ---- tensor.c ------------------------------------------------------------ */

/* A tn.Tensor viewing a Python object without copying: the buffer protocol
 * for numpy arrays, __dlpack__ for any other producer. (transfer full) NULL
 * with a Python exception; *not_tensor set when `o` offers neither. */
TnObject *tnpy_tensor_from_py(PyObject *o, int *not_tensor);
/* The DLDataType of a struct-module format string (native or little-endian
 * order); 0 when it has none. */
int tnpy_format_dtype(const char *fmt, Py_ssize_t itemsize, DLDataType *dt);
int tnpy_tensor_init(PyObject *module);
extern PyMethodDef tnpy_tensor_methods[];
extern PyObject *tnpy_ndarray_type; /* numpy.ndarray once numpy is seen */

/* ---- ir.c, functor.c, testing.c -------------------------------------------- */

extern PyMethodDef tnpy_ir_methods[];
extern PyMethodDef tnpy_testing_methods[];
extern PyMethodDef tnpy_runtime_methods[];
int tnpy_functor_init(PyObject *module);

/* ---- readers and writers of mutable containers (object.c) ---------------
 *
 * tn.List and tn.Dict have no lock of their own. Python changes them with
 * the GIL held; the few long C algorithms that read whole graphs with the
 * GIL released (structural hash and equality, JSON) count themselves as
 * readers, and a change from Python waits (GIL released, Ctrl-C honoured)
 * until no reader runs. A reader that finds a writer waiting keeps the GIL
 * instead, so writers are not starved. A change made from the thread of a
 * running reader (a callback of it) is a RuntimeError, not a deadlock. */
int tnpy_reader_begin(void); /* 1: release the GIL (call _end after) */
void tnpy_reader_end(void);
int tnpy_writer_wait(void);  /* before changing a List/Dict; -1 raised */

/* Run `stmt` as a reader: GIL released unless a writer waits. */
#define TNPY_READ_NOGIL(stmt)          \
  do {                                 \
    if (tnpy_reader_begin()) {         \
      Py_BEGIN_ALLOW_THREADS stmt;     \
      Py_END_ALLOW_THREADS             \
      tnpy_reader_end();               \
    } else {                           \
      stmt;                            \
    }                                  \
  } while (0)

/* Run `stmt` with the GIL released. */
#define TNPY_NOGIL(stmt)         \
  do {                           \
    Py_BEGIN_ALLOW_THREADS stmt; \
    Py_END_ALLOW_THREADS         \
  } while (0)

/* Python -> C calls in flight, counted with the GIL held. C code borrows
 * the handles of proxies passed to it, so a proxy whose handle is replaced
 * (_move_handle_from, IRModule.__setitem__) while a call is in flight may
 * have lent the old one to code that still runs: the old handle is then
 * released when the last call returns. */
#if defined(__GNUC__)
__attribute__((visibility("hidden")))
#endif
extern Py_ssize_t tnpy_calls_in_flight, tnpy_deferred_count;
void tnpy_release_later(TnObject *h);
void tnpy_release_deferred(void);
static inline void tnpy_call_enter(void) { tnpy_calls_in_flight++; }
static inline void tnpy_call_leave(void) {
  if (--tnpy_calls_in_flight == 0 && TNPY_UNLIKELY(tnpy_deferred_count))
    tnpy_release_deferred();
}

/* Whether Python objects may still be touched: false once the interpreter
 * is finalizing (a C registry may outlive Python). */
static inline int tnpy_interpreter_alive(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

#endif /* TVMNODE_PY_TNPY_H_ */
