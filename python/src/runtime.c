/*
 * runtime.c: the one-crossing path of tvmnode.runtime.Module.run(x, ...).
 *
 * _module_run(module, arrays) takes every input of the model at once, reads
 * each array through the buffer protocol and, when each is exactly what its
 * input needs (C-contiguous, the input's dtype and shape), hands them all
 * to tn_module_run_with with the GIL released: one C call that sets the
 * inputs, reading them in place when their memory allows it, and runs.
 * It answers True after a run, and puts into box[0] the mask of the inputs
 * read in place (the C Module forgot them; the caller keeps them), also
 * when the run failed; None when an array is not of that kind (another
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

/* Read array `a` as input `i`'s buffer into `view`: 1 when it is one, 0
 * when it is not (no exception), -1 with an exception that is not about
 * the buffer (raised by a __buffer__ method, or KeyboardInterrupt). */
static int take_buffer(PyObject *a, Py_buffer *view) {
  if (!PyObject_CheckBuffer(a)) return 0;
  if (PyObject_GetBuffer(a, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0)
    return 1;
  if (!PyErr_ExceptionMatches(PyExc_BufferError) &&
      !PyErr_ExceptionMatches(PyExc_TypeError) &&
      !PyErr_ExceptionMatches(PyExc_ValueError))
    return -1;
  PyErr_Clear();
  return 0;
}

static PyObject *module_run(PyObject *self, PyObject *const *args,
                            Py_ssize_t nargs) {
  (void)self;
  if (nargs != 3 || !PyTuple_Check(args[1]) || !PyList_Check(args[2]) ||
      PyList_GET_SIZE(args[2]) != 1) {
    PyErr_SetString(PyExc_TypeError,
                    "_module_run(module, arrays: tuple, mask: [None])");
    return NULL;
  }
  TnObject *mod = tnpy_get_handle(args[0], "_module_run");
  if (mod == NULL) return NULL;
  /* Ours from here: reading a buffer may run Python code (a __buffer__
   * method) that replaces the proxy's handle, and the run releases the
   * GIL. */
  tn_object_retain(mod);
  tnpy_call_enter();
  PyObject *result = NULL;
  Py_buffer views[TN_CRT_MAX_IO];
  const void *data[TN_CRT_MAX_IO];
  size_t nbytes[TN_CRT_MAX_IO];
  Py_ssize_t held = 0, n = PyTuple_GET_SIZE(args[1]);
  int32_t nin = tn_module_num_inputs(mod);
  int fits = nin >= 0 && n == nin && n <= TN_CRT_MAX_IO;
  if (nin < 0) {
    tnpy_raise_tn();
    goto done;
  }
  while (held < n && fits) {
    int got = take_buffer(PyTuple_GET_ITEM(args[1], held), &views[held]);
    if (got < 0) goto done;
    if (got == 0) {
      fits = 0;
      break;
    }
    data[held] = views[held].buf;
    nbytes[held] = (size_t)views[held].len;
    held++;
    fits = buffer_fits(&views[held - 1],
                       tn_module_input_info(mod, (int32_t)(held - 1)));
  }
  if (!fits) {
    result = Py_NewRef(Py_None);
    goto done;
  }
  uint32_t lent = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = tn_module_run_with(mod, (int32_t)n, data, nbytes, &lent);
  Py_END_ALLOW_THREADS
  /* what was read in place, for the caller to keep, whether or not the run
   * succeeded (those inputs are unset either way) */
  PyObject *mask = PyLong_FromUnsignedLong(lent);
  if (mask == NULL) goto done;
  PyList_SetItem(args[2], 0, mask); /* steals `mask` */
  if (rc)
    tnpy_raise_tn();
  else
    result = Py_NewRef(Py_True);
done:
  while (held > 0) PyBuffer_Release(&views[--held]);
  tnpy_call_leave();
  tn_object_release(mod);
  return result;
}

PyMethodDef tnpy_runtime_methods[] = {
    {"_module_run", (PyCFunction)(void (*)(void))module_run, METH_FASTCALL,
     "_module_run(module, arrays, box) -> True after a run on arrays that "
     "are exactly the model's inputs, None (and no run) otherwise; box[0] "
     "gets the mask of the inputs read in place once a run was tried."},
    {NULL, NULL, 0, NULL}};
