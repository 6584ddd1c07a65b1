/*
 * tensor.c: tn.Tensor in Python, and zero-copy exchange with DLPack.
 *
 * A numpy array (or any DLPack producer) passed to a function becomes a
 * tn.Tensor that views the same memory. This runs for every array argument
 * of every call, and asking numpy for a DLPack capsule (a Python method
 * call, two allocations and a capsule) or a buffer (numpy formats a dtype
 * string each time) costs more than the rest of the call. So for numpy
 * arrays the DLPack managed tensor is filled in here from the leading
 * fields of numpy's array struct (data, nd, dimensions, strides, descr,
 * flags), which numpy keeps in place for every compiled extension that
 * reads them through its macros; the layout is checked once against
 * __array_interface__ by the Python layer before it is trusted, and
 * anything unusual (a non-native byte order, a dtype DLPack lacks) falls
 * back to the buffer protocol or __dlpack__. The tensor holds a reference
 * to the array until its DLPack deleter runs, which takes the GIL to drop
 * it. Other producers go through __dlpack__, versioned first, then legacy.
 *
 * The other way, tvmnode.Tensor offers __dlpack__ (versioned and legacy
 * capsules), __dlpack_device__ and the buffer protocol, so
 * numpy.from_dlpack(t) and numpy.asarray(t) view it without copying.
 */
#include "tnpy.h"

#include <stdio.h>
#include <string.h>

PyObject *tnpy_ndarray_type;

/* ---- import: numpy arrays, read directly ----------------------------------- */

/* numpy's PyArrayObject_fields and PyArray_Descr, as far as we read them. */
typedef struct {
  PyObject_HEAD
  char *data;
  int nd;
  Py_ssize_t *dimensions;
  Py_ssize_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
} NpArray;

typedef struct {
  PyObject_HEAD
  PyTypeObject *typeobj;
  char kind, type, byteorder, former_flags;
  int type_num;
} NpDescr;

#define NP_ARRAY_WRITEABLE 0x0400

static int g_np_layout = -1; /* -1 unchecked, 0 not trusted, 1 trusted */
PyObject *tnpy_numpy_check;  /* Python: () -> bool, set by the Python layer */
/* Python: (obj) -> Tensor or None, set by the Python layer: what a
 * producer whose __dlpack__ raised BufferError may still give (a numpy
 * array of an ml_dtypes type). Tried only after that refusal. */
static PyObject *g_dlpack_fallback;
static TnObject *tensor_from_fallback(PyObject *o);

static int np_dtype(int type_num, DLDataType *dt) {
  static const struct {
    uint8_t code, bits;
  } table[24] = {
      [0] = {kDLBool, 8},    [1] = {kDLInt, 8},     [2] = {kDLUInt, 8},
      [3] = {kDLInt, 16},    [4] = {kDLUInt, 16},   [5] = {kDLInt, 32},
      [6] = {kDLUInt, 32},   [7] = {kDLInt, 8 * sizeof(long)},
      [8] = {kDLUInt, 8 * sizeof(long)},            [9] = {kDLInt, 64},
      [10] = {kDLUInt, 64},  [11] = {kDLFloat, 32}, [12] = {kDLFloat, 64},
      [14] = {kDLComplex, 64}, [15] = {kDLComplex, 128},
      [23] = {kDLFloat, 16}};
  if (type_num < 0 || type_num >= 24 || table[type_num].bits == 0) return 0;
  dt->code = table[type_num].code;
  dt->bits = table[type_num].bits;
  dt->lanes = 1;
  return 1;
}

typedef struct {
  DLManagedTensorVersioned managed;
  PyObject *array;
  int64_t dims[]; /* shape, then strides */
} NpTensor;

static void np_tensor_delete(DLManagedTensorVersioned *m) {
  NpTensor *t = (NpTensor *)m;
  if (Py_IsInitialized()) {
    PyGILState_STATE st = PyGILState_Ensure();
    Py_DECREF(t->array);
    PyGILState_Release(st);
  }
  PyMem_RawFree(t);
}

/* NULL without an exception: not handled here, try the next way. */
static TnObject *tensor_from_ndarray(PyObject *o) {
  if (g_np_layout < 0) {
    g_np_layout = 0;
    if (tnpy_numpy_check) {
      PyObject *r = PyObject_CallNoArgs(tnpy_numpy_check);
      g_np_layout = r && PyObject_IsTrue(r) == 1;
      Py_XDECREF(r);
      PyErr_Clear();
    }
  }
  if (!g_np_layout) return NULL;
  const NpArray *a = (const NpArray *)o;
  const NpDescr *d = (const NpDescr *)a->descr;
  DLDataType dt;
  if (a->nd < 0 || a->nd > 64 || d == NULL || !np_dtype(d->type_num, &dt))
    return NULL;
  if (d->byteorder != '=' && d->byteorder != '|' &&
      d->byteorder != (PY_BIG_ENDIAN ? '>' : '<'))
    return NULL;
  Py_ssize_t itemsize = dt.bits / 8;
  for (int i = 0; i < a->nd; i++)
    if (a->strides[i] % itemsize != 0) return NULL;
  NpTensor *t = PyMem_RawMalloc(sizeof *t + sizeof(int64_t) * 2 * (size_t)a->nd);
  if (t == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  for (int i = 0; i < a->nd; i++) {
    t->dims[i] = a->dimensions[i];
    t->dims[a->nd + i] = a->strides[i] / itemsize;
  }
  Py_INCREF(o);
  t->array = o;
  DLManagedTensorVersioned *m = &t->managed;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = NULL;
  m->deleter = np_tensor_delete;
  m->flags = (a->flags & NP_ARRAY_WRITEABLE) ? 0 : DLPACK_FLAG_BITMASK_READ_ONLY;
  m->dl_tensor.data = a->data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = a->nd;
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = t->dims;
  m->dl_tensor.strides = t->dims + a->nd;
  m->dl_tensor.byte_offset = 0;
  TnObject *tensor = tn_tensor_from_dlpack(m); /* deletes m on failure */
  if (tensor == NULL) tnpy_raise_tn();
  return tensor;
}

/* _numpy_probe(array) -> what the fast path reads: (data, nd, shape,
 * strides in bytes, dtype code, bits, byteorder, writeable). The Python
 * layer compares it with numpy's own view before trusting the layout. */
static PyObject *numpy_probe(PyObject *mod, PyObject *o) {
  (void)mod;
  if (tnpy_ndarray_type == NULL &&
      strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0) {
    tnpy_ndarray_type = (PyObject *)Py_TYPE(o);
    Py_INCREF(tnpy_ndarray_type);
  }
  if (tnpy_ndarray_type == NULL || !PyObject_TypeCheck(o, (PyTypeObject *)tnpy_ndarray_type))
    return PyErr_Format(PyExc_TypeError, "_numpy_probe: expected a numpy array");
  const NpArray *a = (const NpArray *)o;
  const NpDescr *d = (const NpDescr *)a->descr;
  if (a->nd < 0 || a->nd > 64)
    return PyErr_Format(PyExc_ValueError, "_numpy_probe: nd %d", a->nd);
  PyObject *shape = PyTuple_New(a->nd), *strides = PyTuple_New(a->nd);
  for (int i = 0; shape && strides && i < a->nd; i++) {
    PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(a->dimensions[i]));
    PyTuple_SET_ITEM(strides, i, PyLong_FromSsize_t(a->strides[i]));
  }
  DLDataType dt = {0, 0, 0};
  int known = np_dtype(d->type_num, &dt);
  PyObject *r = Py_BuildValue("(NiNNiiCi)", PyLong_FromVoidPtr(a->data), a->nd,
                              shape, strides, known ? dt.code : -1,
                              known ? dt.bits : -1, (int)d->byteorder,
                              (a->flags & NP_ARRAY_WRITEABLE) != 0);
  return r;
}

static PyObject *set_numpy_check(PyObject *mod, PyObject *f) {
  (void)mod;
  Py_INCREF(f);
  Py_XSETREF(tnpy_numpy_check, f);
  g_np_layout = -1;
  Py_RETURN_NONE;
}

static PyObject *set_dlpack_fallback(PyObject *mod, PyObject *f) {
  (void)mod;
  Py_INCREF(f);
  Py_XSETREF(g_dlpack_fallback, f);
  Py_RETURN_NONE;
}

/* ---- import: the buffer protocol path ------------------------------------ */

typedef struct {
  DLManagedTensorVersioned managed;
  Py_buffer view;
  int64_t dims[]; /* shape, then strides */
} BufferTensor;

static void buffer_tensor_delete(DLManagedTensorVersioned *m) {
  BufferTensor *b = (BufferTensor *)m;
  if (Py_IsInitialized()) {
    PyGILState_STATE st = PyGILState_Ensure();
    PyBuffer_Release(&b->view);
    PyGILState_Release(st);
  }
  PyMem_RawFree(b);
}

/* DLDataType for a struct-module format string; 0 when not representable. */
int tnpy_format_dtype(const char *fmt, Py_ssize_t itemsize, DLDataType *dt) {
  if (fmt == NULL) fmt = "B";
  /* native or little-endian only (DLPack data is in native order) */
  if (*fmt == '@' || *fmt == '=' || (!PY_BIG_ENDIAN && *fmt == '<')) fmt++;
  if (*fmt == '<' || *fmt == '>' || *fmt == '!') return 0;
  uint8_t code;
  switch (fmt[0]) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
      code = kDLInt;
      break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
      code = kDLUInt;
      break;
    case 'e': case 'f': case 'd':
      code = kDLFloat;
      break;
    case '?':
      code = kDLBool;
      break;
    case 'Z':
      if (fmt[1] != 'f' && fmt[1] != 'd') return 0;
      code = kDLComplex;
      if (fmt[2] != 0) return 0;
      goto done;
    default:
      return 0;
  }
  if (fmt[1] != 0) return 0;
done:
  dt->code = code;
  dt->bits = (uint8_t)(itemsize * 8);
  dt->lanes = 1;
  return 1;
}

/* NULL without an exception when the buffer does not fit DLPack (then the
 * caller falls back to __dlpack__). */
static TnObject *tensor_from_buffer(PyObject *o) {
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear();
    return NULL;
  }
  DLDataType dt;
  int ok = tnpy_format_dtype(view.format, view.itemsize, &dt) && view.ndim <= 64;
  for (int i = 0; ok && i < view.ndim; i++)
    ok = view.strides[i] % view.itemsize == 0;
  if (!ok) {
    PyBuffer_Release(&view);
    return NULL;
  }
  BufferTensor *b = PyMem_RawMalloc(sizeof *b + sizeof(int64_t) * 2 *
                                                    (size_t)view.ndim);
  if (b == NULL) {
    PyBuffer_Release(&view);
    PyErr_NoMemory();
    return NULL;
  }
  b->view = view;
  for (int i = 0; i < view.ndim; i++) {
    b->dims[i] = view.shape[i];
    b->dims[view.ndim + i] = view.strides[i] / view.itemsize;
  }
  DLManagedTensorVersioned *m = &b->managed;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = NULL;
  m->deleter = buffer_tensor_delete;
  m->flags = view.readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  m->dl_tensor.data = view.buf;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = view.ndim;
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = b->dims;
  m->dl_tensor.strides = b->dims + view.ndim;
  m->dl_tensor.byte_offset = 0;
  TnObject *t = tn_tensor_from_dlpack(m); /* calls the deleter on failure */
  if (t == NULL) tnpy_raise_tn();
  return t;
}

/* ---- import: capsules -------------------------------------------------------- */

static TnObject *tensor_from_capsule(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m =
        PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m == NULL) return NULL;
    if (m->version.major != DLPACK_MAJOR_VERSION) {
      PyErr_Format(PyExc_BufferError, "DLPack version %u.%u is not "
                   "supported", m->version.major, m->version.minor);
      return NULL;
    }
    /* consumed: the capsule must not call the deleter any more */
    if (PyCapsule_SetName(cap, "used_dltensor_versioned")) return NULL;
    TnObject *t = tn_tensor_from_dlpack(m);
    if (t == NULL) tnpy_raise_tn();
    return t;
  }
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m == NULL) return NULL;
    if (PyCapsule_SetName(cap, "used_dltensor")) return NULL;
    TnObject *t = tn_tensor_from_dlpack_legacy(m);
    if (t == NULL) tnpy_raise_tn();
    return t;
  }
  PyErr_SetString(PyExc_ValueError, "expected an unconsumed DLPack capsule");
  return NULL;
}

static TnObject *tensor_from_dlpack_method(PyObject *o, PyObject *method) {
  PyObject *cap = NULL;
  PyObject *kw = Py_BuildValue("{s:(ii)}", "max_version", DLPACK_MAJOR_VERSION,
                               DLPACK_MINOR_VERSION);
  PyObject *empty = PyTuple_New(0);
  if (kw && empty) cap = PyObject_Call(method, empty, kw);
  Py_XDECREF(kw);
  Py_XDECREF(empty);
  if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear(); /* a producer without max_version: legacy */
    cap = PyObject_CallNoArgs(method);
  }
  if (cap == NULL) return NULL;
  TnObject *t = tensor_from_capsule(cap);
  Py_DECREF(cap);
  (void)o;
  return t;
}

TnObject *tnpy_tensor_from_py(PyObject *o, int *not_tensor) {
  *not_tensor = 0;
  if (tnpy_ndarray_type == NULL &&
      strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0) {
    tnpy_ndarray_type = (PyObject *)Py_TYPE(o);
    Py_INCREF(tnpy_ndarray_type);
  }
  if (tnpy_ndarray_type &&
      PyObject_TypeCheck(o, (PyTypeObject *)tnpy_ndarray_type)) {
    TnObject *t = tensor_from_ndarray(o);
    if (t || PyErr_Occurred()) return t;
    t = tensor_from_buffer(o);
    if (t || PyErr_Occurred()) return t;
  }
  if (PyCapsule_CheckExact(o)) return tensor_from_capsule(o);
  /* HasAttr looks up without raising (and so without making) an
   * AttributeError for the common case, which would cost a microsecond
   * for every non-tensor value that gets this far (callables, say). */
  static PyObject *name;
  if (name == NULL && (name = PyUnicode_InternFromString("__dlpack__")) == NULL)
    return NULL;
  PyObject *method = PyObject_HasAttr(o, name) ? PyObject_GetAttr(o, name) : NULL;
  if (method == NULL) {
    PyErr_Clear();
    *not_tensor = 1;
    return NULL;
  }
  TnObject *t = tensor_from_dlpack_method(o, method);
  Py_DECREF(method);
  if (t == NULL && g_dlpack_fallback && PyErr_ExceptionMatches(PyExc_BufferError))
    t = tensor_from_fallback(o);
  return t;
}

/* ---- tvmnode.Tensor ------------------------------------------------------------ */

static DLTensor *dl_of(PyObject *self) {
  TnObject *h = tnpy_get_handle(self, "Tensor");
  return h ? &((TnTensorObj *)h)->dl : NULL;
}

/* A dtype's name for an error message, even one tn_dtype_print refuses. */
static void dtype_name(DLDataType t, char *name, size_t n) {
  if (tn_dtype_print(t, name, n) < 0) {
    tn_error_set_raised(NULL);
    snprintf(name, n, "(code %u, bits %u, lanes %u)", t.code, t.bits, t.lanes);
  }
}

/* PyErr_Fetch is deprecated from 3.12 on; its replacement is new there. */
#if PY_VERSION_HEX >= 0x030C0000
#define SAVE_ERROR() PyObject *saved_ = PyErr_GetRaisedException()
#define RESTORE_ERROR() PyErr_SetRaisedException(saved_)
#define DISCARD_ERROR() Py_XDECREF(saved_)
#else
#define SAVE_ERROR()                       \
  PyObject *st_, *sv_, *stb_;               \
  PyErr_Fetch(&st_, &sv_, &stb_)
#define RESTORE_ERROR() PyErr_Restore(st_, sv_, stb_)
#define DISCARD_ERROR() \
  (Py_XDECREF(st_), Py_XDECREF(sv_), Py_XDECREF(stb_))
#endif

/* After `o`'s __dlpack__ raised BufferError: the fallback's Tensor, or
 * NULL with that BufferError still raised when it has none. */
static TnObject *tensor_from_fallback(PyObject *o) {
  SAVE_ERROR();
  PyObject *r = PyObject_CallOneArg(g_dlpack_fallback, o);
  if (r == NULL) { /* the fallback's own error wins: it says more */
    DISCARD_ERROR();
    return NULL;
  }
  TnObject *t = NULL;
  if (r != Py_None && PyObject_TypeCheck(r, &TnPyTensor_Type)) {
    t = tnpy_get_handle(r, "Tensor");
    if (t) tn_object_retain(t);
  }
  Py_DECREF(r);
  if (t) {
    DISCARD_ERROR();
    return t;
  }
  if (!PyErr_Occurred()) RESTORE_ERROR();
  else DISCARD_ERROR();
  return NULL;
}

/* A capsule nobody consumed frees its tensor. This often runs while the
 * consumer's own error is being raised (numpy refusing a dtype drops the
 * capsule on its way out), so that error is kept: clearing it would turn
 * it into "SystemError: error return without exception set". */
static void capsule_versioned_destructor(PyObject *cap) {
  SAVE_ERROR();
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m =
        PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Clear();
  RESTORE_ERROR();
}

static void capsule_legacy_destructor(PyObject *cap) {
  SAVE_ERROR();
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Clear();
  RESTORE_ERROR();
}

static PyObject *tensor_dlpack(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
           *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist,
                                   &stream, &max_version, &dl_device, &copy))
    return NULL;
  TnObject *h = tnpy_get_handle(self, "__dlpack__");
  if (h == NULL) return NULL;
  if (copy == Py_True)
    return PyErr_Format(PyExc_BufferError, "Tensor.__dlpack__: copy=True is "
                        "not supported (the export is always zero-copy)");
  /* Vector lanes and sub-byte widths are DLPack types, but the Python
   * exchange protocol (the array API's __dlpack__) has no consumer for
   * them: numpy would take the capsule and fail with a RuntimeError. The
   * protocol's answer for a dtype that cannot be exported is BufferError,
   * raised here before any capsule exists. */
  DLDataType dt = ((TnTensorObj *)h)->dl.dtype;
  if (dt.lanes != 1 || dt.bits % 8 != 0) {
    char name[64];
    dtype_name(dt, name, sizeof name);
    return PyErr_Format(PyExc_BufferError, "a tvmnode.Tensor of dtype %s "
                        "cannot be exported through __dlpack__: DLPack "
                        "consumers take one lane of whole bytes", name);
  }
  int major = 0;
  if (max_version != Py_None) {
    PyObject *m0 = PySequence_GetItem(max_version, 0);
    if (m0 == NULL) return NULL;
    major = (int)PyLong_AsLong(m0);
    Py_DECREF(m0);
    if (PyErr_Occurred()) return NULL;
  }
  if (major >= 1) {
    DLManagedTensorVersioned *m = tn_tensor_to_dlpack(h);
    if (m == NULL) return tnpy_raise_tn();
    PyObject *cap = PyCapsule_New(m, "dltensor_versioned",
                                  capsule_versioned_destructor);
    if (cap == NULL) m->deleter(m);
    return cap;
  }
  DLManagedTensor *m = tn_tensor_to_dlpack_legacy(h);
  if (m == NULL) return tnpy_raise_tn();
  PyObject *cap = PyCapsule_New(m, "dltensor", capsule_legacy_destructor);
  if (cap == NULL) m->deleter(m);
  return cap;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *u) {
  (void)u;
  DLTensor *dl = dl_of(self);
  if (dl == NULL) return NULL;
  return Py_BuildValue("(ii)", (int)dl->device.device_type,
                       (int)dl->device.device_id);
}

static PyObject *tensor_shape(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  if (dl == NULL) return NULL;
  PyObject *t = PyTuple_New(dl->ndim);
  for (int i = 0; t && i < dl->ndim; i++) {
    PyObject *v = PyLong_FromLongLong(dl->shape[i]);
    if (v == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *tensor_strides(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  if (dl == NULL) return NULL;
  if (dl->strides == NULL) Py_RETURN_NONE;
  PyObject *t = PyTuple_New(dl->ndim);
  for (int i = 0; t && i < dl->ndim; i++) {
    PyObject *v = PyLong_FromLongLong(dl->strides[i]);
    if (v == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *tensor_dtype(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  return dl ? tnpy_dtype_to_py(dl->dtype) : NULL;
}

static PyObject *tensor_device(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  return dl ? tnpy_device_to_py(dl->device) : NULL;
}

static PyObject *tensor_ndim(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  return dl ? PyLong_FromLong(dl->ndim) : NULL;
}

static PyObject *tensor_data_ptr(PyObject *self, void *c) {
  (void)c;
  DLTensor *dl = dl_of(self);
  return dl ? PyLong_FromVoidPtr((char *)dl->data + dl->byte_offset) : NULL;
}

/* The buffer protocol: numpy.asarray(t) and memoryview(t) without a copy,
 * for CPU tensors whose dtype has a struct format (bool, int and uint of 8
 * to 64 bits, float16/32/64, complex64/128, one lane). */
static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  DLTensor *dl = dl_of(self);
  if (dl == NULL) return -1;
  if (dl->device.device_type != kDLCPU) {
    PyErr_SetString(PyExc_BufferError, "only CPU tensors export a buffer");
    return -1;
  }
  static const char *ints[] = {"b", "h", "i", "q"}, *uints[] = {"B", "H", "I",
                                                                "Q"};
  const char *fmt = NULL;
  int bits = dl->dtype.bits, lg = bits == 8 ? 0 : bits == 16 ? 1 :
                                  bits == 32 ? 2 : bits == 64 ? 3 : -1;
  if (dl->dtype.lanes == 1 && lg >= 0) {
    if (dl->dtype.code == kDLInt) fmt = ints[lg];
    else if (dl->dtype.code == kDLUInt) fmt = uints[lg];
    else if (dl->dtype.code == kDLFloat && lg > 0) fmt = lg == 1 ? "e" :
                                                      lg == 2 ? "f" : "d";
    else if (dl->dtype.code == kDLBool && lg == 0) fmt = "?";
  }
  if (dl->dtype.lanes == 1 && dl->dtype.code == kDLComplex &&
      (bits == 64 || bits == 128))
    fmt = bits == 64 ? "Zf" : "Zd"; /* a pair of float32 / float64 */
  if (fmt == NULL) {
    /* vector lanes, sub-byte widths, bfloat16, float8, handles: no struct
     * format says what these are, and a consumer must not guess */
    char name[64];
    dtype_name(dl->dtype, name, sizeof name);
    PyErr_Format(PyExc_BufferError, "a tvmnode.Tensor of dtype %s cannot be "
                 "exported as a buffer: the buffer protocol has no format "
                 "for it", name);
    return -1;
  }
  Py_ssize_t itemsize = bits / 8;
  Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 *
                                  (size_t)(dl->ndim ? dl->ndim : 1));
  if (dims == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t len = itemsize, stride = itemsize;
  for (int i = dl->ndim; i-- > 0;) {
    dims[i] = (Py_ssize_t)dl->shape[i];
    dims[dl->ndim + i] =
        dl->strides ? (Py_ssize_t)dl->strides[i] * itemsize : stride;
    stride *= dims[i];
    len *= dims[i];
  }
  view->buf = (char *)dl->data + dl->byte_offset;
  view->obj = self;
  Py_INCREF(self);
  view->len = len;
  view->readonly = 0;
  view->itemsize = itemsize;
  view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
  view->ndim = dl->ndim;
  view->shape = dims;
  view->strides = dims + dl->ndim;
  view->suboffsets = NULL;
  view->internal = dims;
  return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  PyMem_Free(view->internal);
}

static PyBufferProcs tensor_as_buffer = {tensor_getbuffer,
                                         tensor_releasebuffer};

static PyMethodDef tensor_type_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, "
     "copy=None): a DLPack capsule (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_shape, NULL, "dimensions, as a tuple", NULL},
    {"strides", tensor_strides, NULL, "strides in elements, or None", NULL},
    {"dtype", tensor_dtype, NULL, "element type", NULL},
    {"device", tensor_device, NULL, "where the data lives", NULL},
    {"ndim", tensor_ndim, NULL, "number of dimensions", NULL},
    {"data_ptr", tensor_data_ptr, NULL, "address of the first element", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject TnPyTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tvmnode.Tensor",
    .tp_basicsize = sizeof(TnPyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "tn.Tensor: an n-dimensional array; exchanges memory with "
              "numpy and other DLPack users without copying.",
    .tp_as_buffer = &tensor_as_buffer,
    .tp_methods = tensor_type_methods,
    .tp_getset = tensor_getset,
};

/* ---- module functions --------------------------------------------------------- */

static PyObject *from_dlpack(PyObject *mod, PyObject *o) {
  (void)mod;
  if (PyObject_TypeCheck(o, &TnPyTensor_Type)) {
    Py_INCREF(o);
    return o;
  }
  int not_tensor;
  TnObject *t = tnpy_tensor_from_py(o, &not_tensor);
  if (t == NULL) {
    if (not_tensor)
      PyErr_Format(PyExc_TypeError, "from_dlpack: %s is not a DLPack "
                   "producer", Py_TYPE(o)->tp_name);
    return NULL;
  }
  return tnpy_wrap(t);
}

/* _tensor_reinterpret(tensor, dtype): a view of the same memory whose
 * elements are read as `dtype`, which must take the same bytes an element
 * (a float8_e4m3fn tensor as uint8, a uint16 one as bfloat16). This is how
 * dtypes numpy knows only through ml_dtypes cross to numpy and back. */
static PyObject *tensor_reinterpret(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o;
  const char *dtype;
  if (!PyArg_ParseTuple(args, "Os:_tensor_reinterpret", &o, &dtype))
    return NULL;
  if (!PyObject_TypeCheck(o, &TnPyTensor_Type))
    return PyErr_Format(PyExc_TypeError, "_tensor_reinterpret: argument "
                        "'tensor' must be a tvmnode.Tensor, not %s",
                        Py_TYPE(o)->tp_name);
  TnObject *h = tnpy_get_handle(o, "_tensor_reinterpret");
  if (h == NULL) return NULL;
  DLDataType dt;
  if (tn_dtype_parse(dtype, &dt)) return tnpy_raise_tn();
  const DLTensor *dl = &((TnTensorObj *)h)->dl;
  unsigned have = ((unsigned)dl->dtype.bits * dl->dtype.lanes + 7) / 8,
           want = ((unsigned)dt.bits * dt.lanes + 7) / 8;
  if (have != want || want == 0) {
    char name[64];
    dtype_name(dl->dtype, name, sizeof name);
    return PyErr_Format(PyExc_ValueError, "_tensor_reinterpret: a %s "
                        "element is %u bytes and a %s one %u", name, have,
                        dtype, want);
  }
  TnObject *v = tn_tensor_view(h, dl->shape, dl->strides, dl->ndim, dt,
                               dl->byte_offset);
  if (v == NULL) return tnpy_raise_tn();
  return tnpy_wrap(v);
}

static PyObject *tensor_empty(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *shape;
  const char *dtype = "float32";
  if (!PyArg_ParseTuple(args, "O|s:empty", &shape, &dtype)) return NULL;
  PyObject *seq = PySequence_Fast(shape, "empty: shape must be a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int64_t dims[64];
  if (n > 64) {
    Py_DECREF(seq);
    return PyErr_Format(PyExc_ValueError, "empty: too many dimensions");
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (PyErr_Occurred()) {
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  DLDataType dt;
  if (tn_dtype_parse(dtype, &dt)) return tnpy_raise_tn();
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = tn_tensor_empty(dims, (int32_t)n, dt, cpu);
  if (t == NULL) return tnpy_raise_tn();
  return tnpy_wrap(t);
}

PyMethodDef tnpy_tensor_methods[] = {
    {"from_dlpack", from_dlpack, METH_O,
     "A Tensor viewing any DLPack producer (numpy array, capsule, ...) "
     "without copying."},
    {"_numpy_probe", numpy_probe, METH_O,
     "What the numpy fast path reads from an array (layout check)."},
    {"_set_dlpack_fallback", set_dlpack_fallback, METH_O,
     "_set_dlpack_fallback(f): f(obj) -> Tensor or None, tried when "
     "obj.__dlpack__ raises BufferError."},
    {"_set_numpy_check", set_numpy_check, METH_O,
     "The Python function that checks numpy's layout once."},
    {"_tensor_reinterpret", tensor_reinterpret, METH_VARARGS,
     "_tensor_reinterpret(tensor, dtype): the same memory read as another "
     "dtype of the same element size."},
    {"empty", tensor_empty, METH_VARARGS,
     "empty(shape, dtype='float32'): a new zeroed CPU tensor."},
    {NULL, NULL, 0, NULL}};

int tnpy_tensor_init(PyObject *module) {
  TnPyTensor_Type.tp_base = &TnPyObject_Type;
  if (PyType_Ready(&TnPyTensor_Type)) return -1;
  Py_INCREF(&TnPyTensor_Type);
  if (PyModule_AddObject(module, "Tensor", (PyObject *)&TnPyTensor_Type))
    return -1;
  return PyModule_AddFunctions(module, tnpy_tensor_methods);
}
