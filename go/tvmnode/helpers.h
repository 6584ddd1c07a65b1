/* helpers.h: what the Go side needs in C: probes that clear their own
 * errors, calls that pass values by value, and the declarations of the
 * trampolines that call back into Go (trampoline.c). Definitions here are
 * static inline, so the header may appear in several cgo preambles. (TnAny
 * values themselves are made and read in Go: value.go.) */
#ifndef TVMNODE_GO_HELPERS_H_
#define TVMNODE_GO_HELPERS_H_

#include <stdint.h>
#include <stdlib.h>
#include <tvmnode/tvmnode.h>

/* Probes that fail quietly: the error they raise is cleared in the same C
 * call, on the same thread (a goroutine may move between threads between
 * two cgo calls, and the raised slot is thread-local). */
#define TNGO_QUIET(call) \
  do {                   \
    if (call) {          \
      tn_error_set_raised(NULL); \
      return -1;         \
    }                    \
    return 0;            \
  } while (0)
static inline int tngo_as_str(const TnAny *a, const char **d, size_t *n) { TNGO_QUIET(tn_any_as_str(a, d, n)); }
static inline int tngo_as_bytes(const TnAny *a, const char **d, size_t *n) { TNGO_QUIET(tn_any_as_bytes(a, d, n)); }
static inline int tngo_as_int(const TnAny *a, int64_t *out) { TNGO_QUIET(tn_any_as_int(a, out)); }
static inline int tngo_as_float(const TnAny *a, double *out) { TNGO_QUIET(tn_any_as_float(a, out)); }
static inline int tngo_as_bool(const TnAny *a, int *out) { TNGO_QUIET(tn_any_as_bool(a, out)); }
static inline int32_t tngo_type_index(const char *key) {
  int32_t t = tn_type_index(key);
  if (t < 0) tn_error_set_raised(NULL);
  return t;
}
static inline const char *tngo_type_key(int32_t index) {
  const char *k = tn_type_key(index);
  if (k == NULL) tn_error_set_raised(NULL);
  return k;
}
static inline int32_t tngo_field_count(int32_t t) {
  int32_t n = tn_type_field_count(t);
  if (n < 0) tn_error_set_raised(NULL);
  return n;
}
static inline int tngo_dtype_print(DLDataType d, char *buf, size_t n) { TNGO_QUIET(tn_dtype_print(d, buf, n) < 0); }
static inline int tngo_device_print(DLDevice d, char *buf, size_t n) { TNGO_QUIET(tn_device_print(d, buf, n) < 0); }

/* A tn.Function whose context is a cgo.Handle (defined in trampoline.c). */
TnObject *tngo_func_new(uintptr_t handle);
/* The cgo.Handle of a function tngo_func_new made, or 0 for any other. */
uintptr_t tngo_func_handle(TnObject *f);

/* tn_ir_mutate / tn_ir_post_order_visit with a Go callback (trampoline.c). */
TnObject *tngo_mutate(TnObject *expr, uintptr_t handle);
int tngo_visit(TnObject *expr, uintptr_t handle);

/* A tn.Tensor over `data` (pinned Go memory, see TensorView) whose DLPack
 * deleter unpins it through `handle` (trampoline.c); the deleter also runs
 * when this fails. */
TnObject *tngo_tensor_view(void *data, const int64_t *shape, int32_t ndim,
                           DLDataType dtype, uintptr_t handle);

static inline void tngo_dlpack_delete(DLManagedTensorVersioned *m) {
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

/* Call through the public layout, as bindings may (the handle is live). */
static inline int tngo_call(TnObject *f, const TnAny *args, int32_t n, TnAny *ret) {
  TnFunctionObj *fo = (TnFunctionObj *)f;
  *ret = tn_any_none();
  return fo->fn(fo->self, args, n, ret);
}

/*
 * The hot calls (Function.CallInt64, Function.Call) pass their arguments
 * by value and get the result by value, the function as an integer: with
 * no pointer among the arguments cgo neither allocates the call's frame
 * nor checks it. The result is one TnAny, 16 bytes, handed back as two
 * 8-byte words (TngoAny): the callee wrote it with 8-byte stores, and
 * copying it as one 16-byte value loads across both stores, which the CPU
 * cannot forward (a stall that cost a third of a plain cgo call; see
 * BENCHMARKS.md). A result plus an error would be a larger struct, which
 * the C ABI returns through memory, so a failing call returns an Any of
 * type index TNGO_FAILED whose object is the raised error (transfer full),
 * taken here, on the thread that raised it: the Go side needs no thread
 * lock around the call (callResult in error.go).
 */
#define TNGO_FAILED (-1)

typedef struct {
  uint64_t lo; /* type_index, then small_len */
  uint64_t hi; /* the value */
} TngoAny;

static inline TngoAny tngo_result(int rc, TnAny *ret) {
  if (rc) {
    tn_any_clear(ret);
    ret->type_index = TNGO_FAILED;
    ret->small_len = 0;
    ret->v_obj = tn_error_take_raised();
  }
  /* field by field, so that the compiler does not fuse the loads */
  TngoAny w = {(uint64_t)(uint32_t)ret->type_index | (uint64_t)ret->small_len << 32,
               (uint64_t)ret->v_int64};
  return w;
}

/* Two int arguments (the commonest call, and the benchmark's). */
static inline TngoAny tngo_call_i2(uintptr_t f, int64_t a0, int64_t a1) {
  TnAny args[2] = {tn_any_int(a0), tn_any_int(a1)}, ret;
  int rc = tngo_call((TnObject *)f, args, 2, &ret);
  return tngo_result(rc, &ret);
}

/* Up to four int arguments. */
static inline TngoAny tngo_call_ints(uintptr_t f, int32_t n, int64_t a0,
                                   int64_t a1, int64_t a2, int64_t a3) {
  TnAny args[4] = {tn_any_int(a0), tn_any_int(a1), tn_any_int(a2), tn_any_int(a3)}, ret;
  int rc = tngo_call((TnObject *)f, args, n, &ret);
  return tngo_result(rc, &ret);
}

/* Up to two, and up to four, arguments of any kind (objects in them
 * borrowed). */
static inline TngoAny tngo_call2(uintptr_t f, int32_t n, TnAny a0, TnAny a1) {
  TnAny args[2] = {a0, a1}, ret;
  int rc = tngo_call((TnObject *)f, args, n, &ret);
  return tngo_result(rc, &ret);
}

static inline TngoAny tngo_call4(uintptr_t f, int32_t n, TnAny a0, TnAny a1,
                               TnAny a2, TnAny a3) {
  TnAny args[4] = {a0, a1, a2, a3}, ret;
  int rc = tngo_call((TnObject *)f, args, n, &ret);
  return tngo_result(rc, &ret);
}

#endif
