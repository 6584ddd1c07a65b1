/*
 * testing.c: test-only helpers that need real C threads.
 *
 * _call_from_threads(func, nthreads, ncalls) starts `nthreads` POSIX
 * threads that Python never saw and has each call `func(thread, i)`
 * `ncalls` times through tn_func_call, the way a C runtime would call a
 * callback registered from Python. The calling thread waits with the GIL
 * released, so the callbacks must take it themselves (PyGILState_Ensure in
 * the trampoline). Returns (sum of the integer results, number of failed
 * calls, the first error's "Kind: message" or None).
 */
#include "tnpy.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  TnObject *func;
  int64_t thread, ncalls;
  int64_t sum, failures;
  char first_error[256];
} Job;

static void *run_job(void *arg) {
  Job *j = arg;
  for (int64_t i = 0; i < j->ncalls; i++) {
    TnAny args[2] = {tn_any_int(j->thread), tn_any_int(i)};
    TnAny ret = tn_any_none();
    if (tn_func_call(j->func, args, 2, &ret)) {
      TnObject *err = tn_error_take_raised();
      if (j->failures++ == 0 && err)
        snprintf(j->first_error, sizeof j->first_error, "%s: %s",
                 tn_error_kind(err), tn_error_message(err));
      tn_object_release(err);
      continue;
    }
    int64_t v = 0;
    if (tn_any_as_int(&ret, &v) == 0) j->sum += v;
    else tn_error_set_raised(NULL);
    tn_any_clear(&ret);
  }
  return NULL;
}

static PyObject *call_from_threads(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *func;
  int nthreads;
  long long ncalls;
  if (!PyArg_ParseTuple(args, "OiL:_call_from_threads", &func, &nthreads,
                        &ncalls))
    return NULL;
  if (nthreads < 1 || nthreads > 64)
    return PyErr_Format(PyExc_ValueError, "1 to 64 threads");
  TnObject *f = tnpy_func_from_callable(func);
  if (f == NULL) return NULL;
  Job jobs[64];
  pthread_t tids[64];
  int started = 0;
  for (int t = 0; t < nthreads; t++) {
    jobs[t] = (Job){f, t, ncalls, 0, 0, {0}};
  }
  Py_BEGIN_ALLOW_THREADS
  for (; started < nthreads; started++)
    if (pthread_create(&tids[started], NULL, run_job, &jobs[started])) break;
  for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
  Py_END_ALLOW_THREADS
  tn_object_release(f);
  if (started < nthreads)
    return PyErr_Format(PyExc_RuntimeError, "could only start %d threads",
                        started);
  long long sum = 0, failures = 0;
  const char *first = NULL;
  for (int t = 0; t < nthreads; t++) {
    sum += jobs[t].sum;
    failures += jobs[t].failures;
    if (first == NULL && jobs[t].failures) first = jobs[t].first_error;
  }
  if (first) return Py_BuildValue("(LLs)", sum, failures, first);
  return Py_BuildValue("(LLO)", sum, failures, Py_None);
}

/* _release_in_thread(obj): take the proxy's reference (the proxy is left
 * empty) and drop it on a new C thread, so that when it was the last one
 * the object dies, and a Python-backed deleter runs, on a thread Python
 * never saw. */
static void *release_job(void *arg) {
  tn_object_release(arg);
  return NULL;
}

static PyObject *release_in_thread(PyObject *m, PyObject *o) {
  (void)m;
  TnObject *h = tnpy_get_handle(o, "_release_in_thread");
  if (h == NULL) return NULL;
  ((TnPyObject *)o)->handle = NULL;
  pthread_t tid;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = pthread_create(&tid, NULL, release_job, h);
  if (rc == 0) pthread_join(tid, NULL);
  Py_END_ALLOW_THREADS
  if (rc) {
    ((TnPyObject *)o)->handle = h;
    return PyErr_Format(PyExc_RuntimeError, "pthread_create failed");
  }
  Py_RETURN_NONE;
}

/* _sleep_function(): a tn.Function sleeping for its argument in ms, in C,
 * for tests of long calls (it checks nothing and holds nothing). */
#include <time.h>

static int sleep_ms(void *self, const TnAny *args, int32_t nargs,
                    TnAny *ret) {
  (void)self;
  int64_t ms = 0;
  if (nargs != 1 || tn_any_as_int(&args[0], &ms)) {
    tn_error_raise_in(TN_ERR_TYPE, "sleep_ms", "expected one int");
    return -1;
  }
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
  *ret = tn_any_int(ms);
  return 0;
}

static PyObject *sleep_function(PyObject *m, PyObject *u) {
  (void)m, (void)u;
  TnObject *f = tn_func_new(sleep_ms, NULL, NULL);
  return f ? tnpy_wrap(f) : tnpy_raise_tn();
}

PyMethodDef tnpy_testing_methods[] = {
    {"_sleep_function", sleep_function, METH_NOARGS,
     "A Function that sleeps for its argument in milliseconds, in C."},
    {"_call_from_threads", call_from_threads, METH_VARARGS,
     "_call_from_threads(func, nthreads, ncalls) -> (sum, failures, "
     "first_error)"},
    {"_release_in_thread", release_in_thread, METH_O,
     "Move the proxy's reference to a new C thread and drop it there."},
    {NULL, NULL, 0, NULL}};
