/*
 * function.c: tn.Function, a packed implementation plus its context.
 *
 * Function objects live in type-stable memory: their blocks are recycled
 * through a pool of function blocks and never handed back to malloc. That is
 * what lets the global registry hand out references without a lock (see
 * core/registry.c): a reader may touch the header of a function that has just
 * died, and must find a count of zero there rather than someone else's
 * bytes. A dead function's `fn` is replaced by a stub that raises, so a call
 * through a stale handle reports an error instead of running freed code.
 */
#include "func/func_internal.h"

#include <stdlib.h>

static TnMutex g_pool_lock;
static TnFunctionObj *g_pool; /* free blocks, linked through `self` */

static int dead_fn(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  return tn_error_raise_in(TN_ERR_RUNTIME, "tn_func_call",
                           "the function was called after it was freed");
}

static void func_deleter(TnObject *obj, int flags) {
  TnFunctionObj *f = (TnFunctionObj *)obj;
  if (flags & TN_DELETER_DESTRUCT) {
    void *self = f->self;
    void (*del)(void *) = f->self_deleter;
    f->fn = dead_fn;
    f->self = NULL;
    f->self_deleter = NULL;
    if (del) del(self);
  }
  if (flags & TN_DELETER_FREE) {
    tn__live_add(TN_TYPE_FUNCTION, -1);
    tn__mutex_lock(&g_pool_lock);
    f->self = g_pool; /* the header (and its zero count) stays as it is */
    g_pool = f;
    tn__mutex_unlock(&g_pool_lock);
  }
}

TN_API TnObject *tn_func_new(TnPackedFn fn, void *self,
                             void (*self_deleter)(void *self)) {
  if (fn == NULL) {
    if (self_deleter) self_deleter(self);
    tn__raise_null("tn_func_new", "fn");
    return NULL;
  }
  /* Failure injection counts the pool as an allocation too, so that tests
   * need not know whether a pooled block is free. */
  bool fail = tn__alloc_fails();
  TnFunctionObj *f = NULL;
  if (!fail) {
    tn__mutex_lock(&g_pool_lock);
    f = g_pool;
    if (f) g_pool = f->self;
    tn__mutex_unlock(&g_pool_lock);
  }
  if (f == NULL) {
    f = fail ? NULL : malloc(sizeof *f);
    if (f == NULL) {
      if (self_deleter) self_deleter(self);
      tn__raise_memory("tn_func_new", sizeof *f);
      return NULL;
    }
    f->header.type_index = TN_TYPE_FUNCTION;
    atomic_store_explicit(tn__rc(&f->header), 0, memory_order_relaxed);
  }
  f->header.flags = 0;
  f->header.deleter = func_deleter;
  f->fn = fn;
  f->self = self;
  f->self_deleter = self_deleter;
  tn__live_add(TN_TYPE_FUNCTION, 1);
  /* Last, and with release order: a speculative reader that sees the count
   * become non-zero also sees the fields above. */
  atomic_store_explicit(tn__rc(&f->header), TN__RC_INIT,
                        memory_order_release);
  return &f->header;
}

TN_API int tn_func_call(TnObject *func, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  if (TN_UNLIKELY(func == NULL || func->type_index != TN_TYPE_FUNCTION)) {
    if (tn__check_object(func, TN_TYPE_FUNCTION, "tn_func_call", "func"))
      return -1;
  }
  if (TN_UNLIKELY(ret == NULL)) return tn__raise_null("tn_func_call", "ret");
  if (TN_UNLIKELY(nargs < 0 || (nargs > 0 && args == NULL)))
    return TN_RAISE(VALUE, "%d arguments given with args = %p", nargs,
                    (const void *)args);
  TnFunctionObj *f = (TnFunctionObj *)func;
  ret->type_index = TN_TYPE_NONE;
  ret->small_len = 0;
  ret->v_int64 = 0;
  return f->fn(f->self, args, nargs, ret);
}
