// Package cthreads calls tvmnode functions from C, for tests and
// benchmarks: from a C loop on the calling thread, and from POSIX threads
// that Go never saw.
package cthreads

/*
#cgo pkg-config: tvmnode
#cgo LDFLAGS: -lpthread
#include <pthread.h>
#include <stdlib.h>
#include <tvmnode/tvmnode.h>

typedef struct {
  TnObject *f;
  int64_t id, calls, failures, sum;
} Job;

static void *run(void *p) {
  Job *j = p;
  for (int64_t i = 0; i < j->calls; i++) {
    TnAny a[2] = {tn_any_int(j->id), tn_any_int(i)}, r = tn_any_none();
    if (tn_func_call(j->f, a, 2, &r)) {
      j->failures++;
      tn_error_set_raised(NULL);
    } else {
      if (r.type_index == TN_TYPE_INT) j->sum += r.v_int64;
      tn_any_clear(&r);
    }
  }
  return NULL;
}

// Each thread calls f(thread, i) for i < calls; returns the sum of the int
// results, and the failed calls in *failures (-1: a thread did not start).
static int64_t call_from_threads(void *f, int n, int64_t calls, int64_t *failures) {
  Job *jobs = calloc((size_t)n, sizeof(Job));
  pthread_t *ts = calloc((size_t)n, sizeof(pthread_t));
  int64_t sum = 0;
  *failures = 0;
  for (int i = 0; i < n; i++) {
    jobs[i] = (Job){(TnObject *)f, i, calls, 0, 0};
    if (pthread_create(&ts[i], NULL, run, &jobs[i]) != 0) {
      n = i;
      *failures = -1;
      break;
    }
  }
  for (int i = 0; i < n; i++) {
    pthread_join(ts[i], NULL);
    sum += jobs[i].sum;
    if (*failures >= 0) *failures += jobs[i].failures;
  }
  free(jobs);
  free(ts);
  return sum;
}

// f(i, 2) for i < n from one C loop (tn_func_call); the sum of the
// results, *failed set when a call failed (its error cleared).
static int64_t call_loop(void *f, int64_t n, int *failed) {
  TnAny args[2] = {tn_any_int(0), tn_any_int(2)}, ret;
  int64_t sum = 0;
  *failed = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    ret = tn_any_none();
    if (tn_func_call((TnObject *)f, args, 2, &ret)) {
      tn_error_set_raised(NULL);
      *failed = 1;
      return 0;
    }
    if (tn_any_is_object(&ret)) tn_any_clear(&ret);
    else sum += ret.v_int64;
  }
  return sum;
}

static void release_on_thread_run(void *o) { tn_object_release((TnObject *)o); }
static void *release_main(void *o) { release_on_thread_run(o); return NULL; }
// Drop one reference to o on a new thread.
static int release_on_thread(void *o) {
  pthread_t t;
  if (pthread_create(&t, NULL, release_main, o) != 0) return -1;
  return pthread_join(t, NULL);
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// CallLoop calls f(i, 2) for i < n from one C loop on this thread (f is a
// tn.Function, borrowed) and returns the sum of the int results.
func CallLoop(f unsafe.Pointer, n int64) (int64, error) {
	var failed C.int
	s := C.call_loop(f, C.int64_t(n), &failed)
	if failed != 0 {
		return 0, errors.New("cthreads.CallLoop: a call failed")
	}
	return int64(s), nil
}

// CallFromThreads has n new C threads each call f(thread, i) for i < calls
// (f is a tn.Function, borrowed). It returns the sum of the int results
// and the number of failed calls.
func CallFromThreads(f unsafe.Pointer, n int, calls int64) (sum, failures int64) {
	var fail C.int64_t
	s := C.call_from_threads(f, C.int(n), C.int64_t(calls), &fail)
	return int64(s), int64(fail)
}

// ReleaseOnThread drops one reference to o on a new C thread.
func ReleaseOnThread(o unsafe.Pointer) bool { return C.release_on_thread(o) == 0 }
