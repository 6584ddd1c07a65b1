/* trampoline.c: the packed function that calls a Go function, the
 * deleter that lets the Go side forget it, and the other C functions that
 * call back into Go (walkers, the DLPack deleter of pinned Go memory). */
#include "helpers.h"
#include "_cgo_export.h"

#include <string.h>

static int trampoline(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  return tngoCall((uintptr_t)self, (TnAny *)args, nargs, ret);
}

static void forget(void *self) { tngoForget((uintptr_t)self); }

TnObject *tngo_func_new(uintptr_t handle) {
  return tn_func_new(trampoline, (void *)handle, forget);
}

uintptr_t tngo_func_handle(TnObject *f) {
  TnFunctionObj *fo = (TnFunctionObj *)f;
  return fo->fn == trampoline ? (uintptr_t)fo->self : 0;
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

/* The managed tensor of a Go slice viewed in place, with its shape. */
typedef struct {
  DLManagedTensorVersioned managed;
  int64_t shape[];
} View;

static void view_delete(DLManagedTensorVersioned *m) {
  uintptr_t h = (uintptr_t)m->manager_ctx;
  free(m);
  tngoUnpin(h);
}

TnObject *tngo_tensor_view(void *data, const int64_t *shape, int32_t ndim,
                           DLDataType dtype, uintptr_t handle) {
  View *v = malloc(sizeof(View) + (size_t)ndim * sizeof(int64_t));
  if (v == NULL) {
    tngoUnpin(handle);
    tn_error_raise("MemoryError", "TensorView: out of memory");
    return NULL;
  }
  if (ndim > 0) memcpy(v->shape, shape, (size_t)ndim * sizeof(int64_t));
  v->managed = (DLManagedTensorVersioned){
      .version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
      .manager_ctx = (void *)handle,
      .deleter = view_delete,
      .flags = 0,
      .dl_tensor = {.data = data,
                    .device = {kDLCPU, 0},
                    .ndim = ndim,
                    .dtype = dtype,
                    .shape = v->shape,
                    .strides = NULL,
                    .byte_offset = 0}};
  return tn_tensor_from_dlpack(&v->managed);
}
