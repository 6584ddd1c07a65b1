/*
 * runtime.c: the one-crossing path of tvmnode.runtime.Module.run(x, ...).
 *
 * _module_run(module, arrays) takes every input of the model at once, reads
 * each array through the buffer protocol and, when each is exactly what its
 * input needs (C-contiguous, the input's dtype and shape), hands them all
 * to tn_module_run_with with the GIL released: one C call that sets the
 * inputs, reading them in place when their memory allows it, and runs.
 * After a run it answers the inputs that may have been read in place (a
 * bit mask of those outside the pools: the C Module forgot them, and the
 * caller keeps them); None when an array is not of that kind (another
 * dtype, a list, a strided view, ...), without running: the caller then
 * takes the checked path, which converts what it can and names what it
 * cannot. Errors of the run itself are raised.
 *
 * The outputs are not built here: the Python layer keeps one view per
 * output of the Module's buffers and copies from them.
 */
#include "tnpy.h"

#include <tvmnode/module.h>

/* Whether the buffer is input `t` as it stands: its dtype, shape and size
 * (the buffer was asked for C-contiguous). */
static int buffer_fits(const Py_buffer *v, const TnCrtTensorInfo *t) {
  DLDataType want, got;
  if (!tn_module_dtype(t->dtype, &want) ||
      !tnpy_format_dtype(v->format, v->itemsize, &got) ||
      got.code != want.code || got.bits != want.bits || v->ndim != t->ndim ||
      v->len != (Py_ssize_t)t->nbytes)
    return 0;
  for (int d = 0; d < v->ndim; d++)
    if (v->shape[d] != t->shape[d]) return 0;
  return 1;
}

static PyObject *module_run(PyObject *self, PyObject *const *args,
                            Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "_module_run(module, arrays: tuple)");
    return NULL;
  }
  TnObject *mod = tnpy_get_handle(args[0], "_module_run");
  if (mod == NULL) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
  int32_t nin = tn_module_num_inputs(mod);
  if (nin < 0) return tnpy_raise_tn();
  if (n != nin || n > TN_CRT_MAX_IO) Py_RETURN_NONE;
  Py_buffer views[TN_CRT_MAX_IO];
  const void *data[TN_CRT_MAX_IO];
  size_t nbytes[TN_CRT_MAX_IO];
  Py_ssize_t held = 0;
  int fits = 1;
  while (held < n && fits) {
    PyObject *a = PyTuple_GET_ITEM(args[1], held);
    if (!PyObject_CheckBuffer(a) ||
        PyObject_GetBuffer(a, &views[held],
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
      PyErr_Clear();
      fits = 0;
      break;
    }
    data[held] = views[held].buf;
    nbytes[held] = (size_t)views[held].len;
    held++;
    fits = buffer_fits(&views[held - 1],
                       tn_module_input_info(mod, (int32_t)(held - 1)));
  }
  int rc = 0;
  unsigned long lent = 0;
  for (Py_ssize_t i = 0; fits && i < n; i++)
    if (tn_module_input_info(mod, (int32_t)i)->pool < 0) lent |= 1ul << i;
  if (fits) {
    /* the proxy in args keeps `mod` alive; this keeps it alive even if the
     * proxy's handle is replaced by another thread meanwhile */
    tn_object_retain(mod);
    tnpy_call_enter();
    Py_BEGIN_ALLOW_THREADS
    rc = tn_module_run_with(mod, (int32_t)n, data, nbytes);
    Py_END_ALLOW_THREADS
    tnpy_call_leave();
    tn_object_release(mod);
  }
  while (held > 0) PyBuffer_Release(&views[--held]);
  if (rc) return tnpy_raise_tn();
  if (!fits) Py_RETURN_NONE;
  return PyLong_FromUnsignedLong(lent);
}

PyMethodDef tnpy_runtime_methods[] = {
    {"_module_run", (PyCFunction)(void (*)(void))module_run, METH_FASTCALL,
     "_module_run(module, arrays) -> after a run on arrays that are exactly "
     "the model's inputs, the mask of those that may have been read in "
     "place; None (and no run) otherwise."},
    {NULL, NULL, 0, NULL}};
