/* trampoline.c: the packed function that calls a Go function, and the
 * deleter that lets the Go side forget it. */
#include "helpers.h"
#include "_cgo_export.h"

static int trampoline(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  return tngoCall((uintptr_t)self, (TnAny *)args, nargs, ret);
}

static void forget(void *self) { tngoForget((uintptr_t)self); }

TnObject *tngo_func_new(uintptr_t handle) {
  return tn_func_new(trampoline, (void *)handle, forget);
}

static TnObject *rewrite(void *ctx, TnObject *orig, TnObject *rebuilt) {
  return tngoRewrite((uintptr_t)ctx, orig, rebuilt);
}

static int visit(void *ctx, TnObject *expr) { return tngoVisit((uintptr_t)ctx, expr); }

TnObject *tngo_mutate(TnObject *expr, uintptr_t handle) {
  return tn_ir_mutate(expr, rewrite, (void *)handle);
}

int tngo_visit(TnObject *expr, uintptr_t handle) {
  return tn_ir_post_order_visit(expr, visit, (void *)handle);
}
