/*
 * object.c: the object life cycle (strong and weak counts, allocation) and the
 * per-thread state that backs the live-object count and the raised slot.
 *
 * The live count is kept per thread with plain (relaxed) stores rather than
 * one shared atomic, because every allocation and free passes through it: a
 * locked add on a shared cache line would cost more than the allocation
 * itself. Reading the global figure walks the list of thread states under a
 * mutex, which only tests and diagnostics do. When a thread exits, its count
 * is folded into a retired total and its raised error is released.
 */
#include "core/glib_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

TN_TLS TnThreadState *tn__tls_state;

static TnMutex g_threads_lock;
static TnThreadState *g_threads;   /* doubly linked, guarded by the lock */
static int64_t g_retired_live;     /* counts of exited threads */
static pthread_key_t g_thread_key; /* runs thread_state_free at exit */

#ifdef TN_DEBUG
static _Atomic int64_t g_live_by_type[TN__MAX_TYPES];
void tn__live_by_type_add(int32_t type_index, int64_t delta) {
  if (type_index >= 0 && type_index < TN__MAX_TYPES)
    atomic_fetch_add_explicit(&g_live_by_type[type_index], delta,
                              memory_order_relaxed);
}
#endif

static void thread_state_free(void *p) {
  TnThreadState *s = p;
  /* Releasing the raised error may free objects and so touch the state. */
  TnObject *raised = s->raised;
  s->raised = NULL;
  if (raised) tn__release(raised);
  free(s->pending);
  s->pending = NULL;
  s->npending = s->cap_pending = 0;
  for (int c = 0; c < TN__CACHE_CLASSES; c++) {
    while (s->cached[c] > 0) {
      void *block = s->cache[c][--s->cached[c]];
      tn__cache_unpoison(block, (size_t)c << 4);
      free(block);
    }
  }
  tn__mutex_lock(&g_threads_lock);
  g_retired_live += atomic_load_explicit(&s->live, memory_order_relaxed);
  if (s->prev) s->prev->next = s->next;
  else g_threads = s->next;
  if (s->next) s->next->prev = s->prev;
  tn__mutex_unlock(&g_threads_lock);
  if (tn__tls_state == s) tn__tls_state = NULL;
  free(s);
}

/* Called once by the library constructor, before any other thread can
 * exist in the library. */
void tn__threads_init(void) {
  if (pthread_key_create(&g_thread_key, thread_state_free) != 0) abort();
}

TnThreadState *tn__thread_state_slow(void) {
  static TnThreadState fallback; /* if even this tiny malloc fails */
  TnThreadState *s = calloc(1, sizeof *s);
  if (s == NULL) return &fallback;
  tn__mutex_lock(&g_threads_lock);
  s->next = g_threads;
  if (g_threads) g_threads->prev = s;
  g_threads = s;
  tn__mutex_unlock(&g_threads_lock);
  pthread_setspecific(g_thread_key, s);
  tn__tls_state = s;
  return s;
}

TN_API int64_t tn_object_live_count(void) {
  tn__mutex_lock(&g_threads_lock);
  int64_t total = g_retired_live;
  for (TnThreadState *s = g_threads; s; s = s->next)
    total += atomic_load_explicit(&s->live, memory_order_relaxed);
  tn__mutex_unlock(&g_threads_lock);
  return total;
}

TN_API int64_t tn_object_live_count_by_type(int32_t type_index) {
#ifdef TN_DEBUG
  if (type_index < 0 || type_index >= TN__MAX_TYPES)
    return TN_RAISE(INDEX, "type index %d is out of range [0, %d)", type_index,
                    TN__MAX_TYPES);
  return atomic_load_explicit(&g_live_by_type[type_index],
                              memory_order_relaxed);
#else
  (void)type_index;
  return TN_RAISE(RUNTIME, "per-type counts need a build configured with "
                  "--enable-debug");
#endif
}

#ifdef TN_DEBUG
bool tn__alloc_fail_tick(TnThreadState *s) {
  return --s->alloc_countdown == 0;
}
#endif

TN_API int tn_debug_set_alloc_fail(int64_t countdown) {
#ifdef TN_DEBUG
  if (countdown < 0)
    return TN_RAISE(VALUE, "countdown is negative (%" PRId64 ")", countdown);
  tn__thread_state()->alloc_countdown = countdown;
  return 0;
#else
  (void)countdown;
  return TN_RAISE(NOT_IMPLEMENTED, "allocation failure injection needs a "
                  "build configured with --enable-debug");
#endif
}

/* ------------------------------------------------------------------------ */

void *tn__object_malloc_slow(size_t size, size_t align, int32_t type_index,
                             const char *who) {
  void *p = NULL;
  if (align == 0) {
    p = malloc(size); /* the inline path failed once; try again */
  } else if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
                            size) != 0) {
    p = NULL;
  }
  if (TN_UNLIKELY(p == NULL)) {
    tn__raise_memory(who, size);
    return NULL;
  }
  ((TnObject *)p)->flags = 0; /* not a cache class: free() it */
  tn__live_add(type_index, 1);
  return p;
}

/*
 * Destroying an object releases what it holds, which may destroy those, and
 * so on: a long chain would recurse once per link and overflow the stack.
 * Past DESTROY_DEPTH nested destructions on a thread, further ones are
 * queued on the thread and run by the outermost destruction as it
 * finishes, so the stack stays bounded whatever the graph's depth.
 */
#define DESTROY_DEPTH 64

static void destroy_now(TnObject *obj, bool both) {
  if (both) {
    obj->deleter(obj, TN_DELETER_BOTH);
  } else {
    obj->deleter(obj, TN_DELETER_DESTRUCT);
    tn__object_weak_drop(obj);
  }
}

void tn__object_destroy(TnObject *obj, bool both) {
  TnThreadState *s = tn__thread_state();
  if (s->destroying >= DESTROY_DEPTH) {
    if (s->npending == s->cap_pending) {
      size_t cap = s->cap_pending ? s->cap_pending * 2 : 256;
      uintptr_t *p = realloc(s->pending, cap * sizeof *p);
      if (p == NULL) { /* no room to put it off: recurse after all */
        destroy_now(obj, both);
        return;
      }
      s->pending = p;
      s->cap_pending = cap;
    }
    s->pending[s->npending++] = (uintptr_t)obj | (both ? 1u : 0u);
    return;
  }
  s->destroying++;
  destroy_now(obj, both);
  if (s->destroying == 1) {
    while (s->npending > 0) {
      uintptr_t tagged = s->pending[--s->npending];
      destroy_now((TnObject *)(tagged & ~(uintptr_t)1), tagged & 1);
    }
  }
  s->destroying--;
}

void tn__object_weak_drop(TnObject *obj) {
  uint64_t old = atomic_fetch_sub_explicit(tn__rc(obj), TN__RC_WEAK_ONE,
                                           memory_order_acq_rel);
  if ((old >> 32) == 1 && obj->deleter) obj->deleter(obj, TN_DELETER_FREE);
}

#ifdef TN_DEBUG
_Noreturn void tn__release_underflow(TnObject *obj) {
  fprintf(stderr,
          "tvmnode: reference count underflow: a %s (%p) was released with "
          "a strong count of 0 (released once too often)\n",
          tn__type_key_or(obj->type_index, "?"), (void *)obj);
  abort();
}
#endif

TN_API void tn_object_retain(TnObject *obj) {
  if (obj) tn__retain(obj);
}

TN_API void tn_object_release(TnObject *obj) {
  if (obj) tn__release(obj);
}

TN_API void tn_object_weak_retain(TnObject *obj) {
  if (obj)
    atomic_fetch_add_explicit(tn__rc(obj), TN__RC_WEAK_ONE,
                              memory_order_relaxed);
}

TN_API void tn_object_weak_release(TnObject *obj) {
  if (obj) tn__object_weak_drop(obj);
}

TN_API TnObject *tn_object_weak_upgrade(TnObject *obj) {
  return obj && tn__try_retain(obj) ? obj : NULL;
}

TN_API uint32_t tn_object_strong_count(const TnObject *obj) {
  if (obj == NULL) return 0;
  return (uint32_t)atomic_load_explicit(tn__rc((TnObject *)obj),
                                        memory_order_acquire);
}

TN_API uint32_t tn_object_weak_count(const TnObject *obj) {
  if (obj == NULL) return 0;
  return (uint32_t)(atomic_load_explicit(tn__rc((TnObject *)obj),
                                         memory_order_acquire) >>
                    32);
}

TN_API int tn_object_is_unique(const TnObject *obj) {
  return obj != NULL && tn__object_unique((TnObject *)obj);
}

TN_API TnObject *tn_object_alloc(int32_t type_index, size_t size,
                                 TnDeleter deleter) {
  const TnTypeInfo *info = tn__type_info(type_index);
  if (info == NULL || !info->is_object) {
    TN_RAISE(TYPE, "type index %d is not a registered object type", type_index);
    return NULL;
  }
  if (size < sizeof(TnObject)) {
    TN_RAISE(VALUE, "size %zu is smaller than the %zu-byte object header", size,
             sizeof(TnObject));
    return NULL;
  }
  TnObject *obj = tn__object_malloc(size, 0, type_index, "tn_object_alloc");
  if (obj == NULL) return NULL;
  tn__object_zero_body(obj, size);
  tn__object_init(obj, type_index, deleter);
  return obj;
}

TN_API void tn_object_free(TnObject *obj) {
  if (obj) tn__object_mfree(obj);
}

TN_API int tn_object_is_instance(const TnObject *obj, int32_t type_index) {
  return tn__is_instance(obj, type_index);
}

TN_API const char *tn_object_type_key(const TnObject *obj) {
  if (obj == NULL) return "NULL";
  return tn__type_key_or(obj->type_index, "<unregistered type>");
}

void tn__core_init(void) {
  tn__threads_init();
  tn__types_init();
}

/* The library constructor lives in init.c. This reference from the file
 * every program that uses the library links keeps a static link from
 * leaving init.o (and so the constructor) out. */
extern void tn__library_init(void);
__attribute__((used)) static void (*const keep_init)(void) = tn__library_init;

TN_API int32_t tn_abi_version(void) { return TN_ABI_VERSION; }

TN_API const char *tn_version(void) { return PACKAGE_VERSION; }
