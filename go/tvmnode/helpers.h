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

/* tn_ir_mutate / tn_ir_post_order_visit with a Go callback (trampoline.c). */
TnObject *tngo_mutate(TnObject *expr, uintptr_t handle);
int tngo_visit(TnObject *expr, uintptr_t handle);

/* Call through the public layout, as bindings may (the handle is live). */
static inline int tngo_call(TnObject *f, const TnAny *args, int32_t n, TnAny *ret) {
  TnFunctionObj *fo = (TnFunctionObj *)f;
  *ret = tn_any_none();
  return fo->fn(fo->self, args, n, ret);
}

/* A call with up to four int arguments passed by value and the result
 * returned by value, the function as an integer: with no pointer among
 * its arguments, cgo neither allocates the call's frame nor checks it. A
 * failing call's raised error is taken here, on the thread that raised it,
 * and returned in `err` (transfer full), so the Go side needs no thread
 * lock around the call (see callResult). */
typedef struct {
  int rc;
  TnAny ret;
  TnObject *err;
} TngoResult;
static inline TngoResult tngo_call_ints(uintptr_t f, int32_t n, int64_t a0,
                                        int64_t a1, int64_t a2, int64_t a3) {
  TnAny args[4] = {tn_any_int(a0), tn_any_int(a1), tn_any_int(a2), tn_any_int(a3)};
  TngoResult r;
  r.rc = tngo_call((TnObject *)f, args, n, &r.ret);
  r.err = r.rc ? tn_error_take_raised() : NULL;
  return r;
}

/* Up to four arguments of any kind, by value (objects in them borrowed). */
static inline TngoResult tngo_call4(uintptr_t f, int32_t n, TnAny a0, TnAny a1,
                                    TnAny a2, TnAny a3) {
  TnAny args[4] = {a0, a1, a2, a3};
  TngoResult r;
  r.rc = tngo_call((TnObject *)f, args, n, &r.ret);
  r.err = r.rc ? tn_error_take_raised() : NULL;
  return r;
}

#endif
