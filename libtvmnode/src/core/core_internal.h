/*
 * core_internal.h: what the core layer shares with every layer above it,
 * and nobody outside the library sees.
 *
 * It holds the pieces that are hot enough to be inlined everywhere (the
 * atomic reference count, the per-thread state behind the live-object count
 * and the raised-error slot, the lock-free type table look-up) and the layouts
 * of the container objects, which several modules walk directly. It uses no
 * GLib (glib_internal.h adds the GLib-typed helpers), and it refuses to be
 * included from outside the build so that nothing here leaks into the ABI.
 * Each layer has one header like it: func/func_internal.h,
 * reflect/reflect_internal.h, ir/ir_internal.h, pass/pass_internal.h, each
 * including the one below.
 */
#ifndef TVMNODE_CORE_INTERNAL_H_
#define TVMNODE_CORE_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "core_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tvmnode/abi.h"
#include "tvmnode/containers.h"
#include "tvmnode/function.h"
#include "tvmnode/object.h"
#include "tvmnode/reflect.h"

#include "core/checked.h"

#define TN_LIKELY(x) __builtin_expect(!!(x), 1)
#define TN_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Initial-exec TLS: one %fs-relative load instead of a __tls_get_addr call.
 * The library keeps its static TLS to a few words (the thread state, the
 * pass-context stack, the JSON loader's error position), well inside the
 * surplus glibc reserves for libraries that are dlopen'ed (a Python
 * extension). */
#define TN_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* ------------------------------------------------------------------------ */
/* Reference counts                                                          */
/* ------------------------------------------------------------------------ */

#define TN__RC_STRONG_ONE UINT64_C(1)
#define TN__RC_WEAK_ONE (UINT64_C(1) << 32)
#define TN__RC_INIT (TN__RC_STRONG_ONE | TN__RC_WEAK_ONE)

_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t),
               "atomic counter has the plain layout");
_Static_assert(_Alignof(_Atomic uint64_t) == _Alignof(uint64_t),
               "atomic counter has the plain alignment");

static inline _Atomic uint64_t *tn__rc(TnObject *obj) {
  return (_Atomic uint64_t *)&obj->ref_counter;
}

static inline void tn__retain(TnObject *obj) {
  atomic_fetch_add_explicit(tn__rc(obj), TN__RC_STRONG_ONE,
                            memory_order_relaxed);
}

void tn__object_weak_drop(TnObject *obj);

/* The last strong reference is gone: destroy (and, when `both`, free) the
 * object. Out of line, and iterative past a nesting limit (see object.c). */
void tn__object_destroy(TnObject *obj, bool both);

#ifdef TN_DEBUG
/* Debug builds only: a release found the strong count already 0 (the object
 * was released once too often). Prints the type key and aborts. */
_Noreturn void tn__release_underflow(TnObject *obj);
#endif

static inline void tn__release(TnObject *obj) {
  /* Sole reference and no weak ones: nobody else can touch the count, so
   * skip the locked decrement (most temporaries die this way). Functions are
   * the exception: the registry's lock-free look-up may increment a
   * function's count speculatively (see core/registry.c). */
  if (atomic_load_explicit(tn__rc(obj), memory_order_acquire) ==
          TN__RC_INIT &&
      obj->deleter != NULL && obj->type_index != TN_TYPE_FUNCTION) {
#ifdef TN_DEBUG
    /* Leave the count at strong 0, so that releasing the dead block again
     * (it usually sits intact in the per-thread cache) is caught below
     * instead of destroying it a second time. */
    atomic_store_explicit(tn__rc(obj), TN__RC_WEAK_ONE, memory_order_relaxed);
#endif
    tn__object_destroy(obj, true);
    return;
  }
  /* acq_rel: the thread that drops the last reference must see every write
   * the others made before dropping theirs. */
  uint64_t old = atomic_fetch_sub_explicit(tn__rc(obj), TN__RC_STRONG_ONE,
                                           memory_order_acq_rel);
#ifdef TN_DEBUG
  if (TN_UNLIKELY((uint32_t)old == 0)) tn__release_underflow(obj);
#endif
  if ((uint32_t)old != 1 || obj->deleter == NULL) return;
  /* No weak reference exists when the count was exactly one and one. */
  tn__object_destroy(obj, old == TN__RC_INIT);
}

/* The caller's reference is the only one, strong or weak: a copy-on-write
 * container may then change in place. */
static inline bool tn__object_unique(TnObject *obj) {
  return atomic_load_explicit(tn__rc(obj), memory_order_acquire) ==
         TN__RC_INIT;
}

/* Set up a header. `flags` is left alone: tn__object_malloc put the
 * allocation class there. */
static inline void tn__object_init(TnObject *obj, int32_t type_index,
                                   TnDeleter deleter) {
  obj->ref_counter = TN__RC_INIT;
  obj->type_index = type_index;
  obj->deleter = deleter;
}

/* Zero an object's body (everything after the header). */
static inline void tn__object_zero_body(void *obj, size_t size) {
  memset((char *)obj + sizeof(TnObject), 0, size - sizeof(TnObject));
}

/* ------------------------------------------------------------------------ */
/* Per-thread state: live-object count and the raised-error slot             */
/* ------------------------------------------------------------------------ */

/*
 * Small object blocks are recycled through a per-thread cache: class c holds
 * free blocks of c * 16 bytes (up to 256), at most TN__CACHE_LIMIT each. A
 * cached block is a plain malloc block, so it may be freed by any thread or
 * put in any thread's cache. The class of a block lives in the low bits of
 * its header's `flags` word (0: not from the cache's classes). Cached blocks
 * are poisoned for ASan and marked inaccessible for valgrind, so a use after
 * free is still caught.
 */
#define TN__CACHE_CLASSES 17
#define TN__CACHE_MAX_BYTES 256
#define TN__CACHE_LIMIT 64
#define TN__FLAG_ALLOC_CLASS 0x1fu

typedef struct TnThreadState {
  /* Objects allocated minus objects freed by this thread. Only this thread
   * writes it (relaxed load + store, no locked instruction); any thread may
   * read it to sum the global count. */
  _Atomic int64_t live;
  TnObject *raised;
  struct TnThreadState *prev, *next;
  /* Nested object destructions in progress, and those put off until the
   * outermost one finishes (tagged pointers: low bit set = "both"). */
  int32_t destroying;
  uintptr_t *pending;
  size_t npending, cap_pending;
  /* Free blocks by class, in arrays here rather than linked through the
   * blocks, so leak checkers see them as reachable while they are poisoned. */
  uint32_t cached[TN__CACHE_CLASSES];
  void *cache[TN__CACHE_CLASSES][TN__CACHE_LIMIT];
#ifdef TN_DEBUG
  /* tn_debug_set_alloc_fail: the object or buffer allocation that brings
   * this to 0 fails; 0 when disarmed. */
  int64_t alloc_countdown;
#endif
} TnThreadState;

extern TN_TLS TnThreadState *tn__tls_state;
TnThreadState *tn__thread_state_slow(void);

static inline TnThreadState *tn__thread_state(void) {
  TnThreadState *s = tn__tls_state;
  return TN_LIKELY(s != NULL) ? s : tn__thread_state_slow();
}

#ifdef TN_DEBUG
void tn__live_by_type_add(int32_t type_index, int64_t delta);
#endif

static inline void tn__live_add_to(TnThreadState *s, int32_t type_index,
                                   int64_t delta) {
  int64_t v = atomic_load_explicit(&s->live, memory_order_relaxed);
  atomic_store_explicit(&s->live, v + delta, memory_order_relaxed);
#ifdef TN_DEBUG
  tn__live_by_type_add(type_index, delta);
#else
  (void)type_index;
#endif
}

static inline void tn__live_add(int32_t type_index, int64_t delta) {
  tn__live_add_to(tn__thread_state(), type_index, delta);
}

/*
 * Failure injection for tests (tn_debug_set_alloc_fail): every allocation
 * that is reported as a MemoryError (object memory, container buffers)
 * asks tn__alloc_fails() first, and fails as if malloc had returned NULL
 * when it says so. Release builds compile it to `false`.
 */
#ifdef TN_DEBUG
bool tn__alloc_fail_tick(TnThreadState *s);
static inline bool tn__alloc_fails(void) {
  TnThreadState *s = tn__thread_state();
  return TN_UNLIKELY(s->alloc_countdown != 0) && tn__alloc_fail_tick(s);
}
#else
#define tn__alloc_fails() false
#endif

#if defined(__SANITIZE_ADDRESS__)
#define TN_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN_HAVE_ASAN 1
#endif
#endif
#ifdef TN_HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#endif

/* A block going into the cache: nothing may touch it until it comes out. */
static inline void tn__cache_poison(void *p, size_t n) {
#ifdef TN_HAVE_ASAN
  __asan_poison_memory_region(p, n);
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
  VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
  (void)p, (void)n;
}

/* A block coming out: usable, and uninitialised. */
static inline void tn__cache_unpoison(void *p, size_t n) {
#ifdef TN_HAVE_ASAN
  __asan_unpoison_memory_region(p, n);
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
  VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
  (void)p, (void)n;
}

/* Raise "func: argument 'arg' is NULL" (ValueError) / "func: out of memory
 * allocating N bytes" (MemoryError); both return -1. */
int tn__raise_null(const char *func, const char *arg);
int tn__raise_memory(const char *func, size_t bytes);

void *tn__object_malloc_slow(size_t size, size_t align, int32_t type_index,
                             const char *who);

/* Allocate an object's memory and count it alive; the header's `flags` is
 * set, the rest is uninitialised. Raises a MemoryError naming `who` on
 * failure. The FREE step of the deleter gives it back with
 * tn__object_mfree. `align` of 0 means malloc's own alignment. */
static inline void *tn__object_malloc(size_t size, size_t align,
                                      int32_t type_index, const char *who) {
  if (tn__alloc_fails()) {
    tn__raise_memory(who, size);
    return NULL;
  }
  if (TN_LIKELY(align == 0 && size <= TN__CACHE_MAX_BYTES)) {
    uint32_t c = (uint32_t)((size + 15) >> 4);
    TnThreadState *s = tn__thread_state();
    void *p;
    uint32_t n = s->cached[c];
    if (TN_LIKELY(n != 0)) {
      p = s->cache[c][n - 1];
      s->cached[c] = n - 1;
      tn__cache_unpoison(p, (size_t)c << 4);
    } else {
      p = malloc((size_t)c << 4);
    }
    if (TN_LIKELY(p != NULL)) {
      ((TnObject *)p)->flags = c;
      tn__live_add_to(s, type_index, 1);
      return p;
    }
  }
  return tn__object_malloc_slow(size, align, type_index, who);
}

static inline void tn__object_mfree(TnObject *obj) {
  TnThreadState *s = tn__thread_state();
  uint32_t c = obj->flags & TN__FLAG_ALLOC_CLASS;
  tn__live_add_to(s, obj->type_index, -1);
  if (c != 0 && c < TN__CACHE_CLASSES && s->cached[c] < TN__CACHE_LIMIT) {
    tn__cache_poison(obj, (size_t)c << 4);
    s->cache[c][s->cached[c]++] = obj;
    return;
  }
  free(obj);
}

/* ------------------------------------------------------------------------ */
/* Type table                                                                */
/* ------------------------------------------------------------------------ */

#define TN__MAX_TYPES (1 << 16)

/* A reflected field: the public description plus what is resolved once. */
typedef struct {
  TnFieldDesc desc;  /* strings and default owned by the library */
  int32_t obj_type;  /* TN_FIELD_OBJ: required type index (TN_TYPE_OBJECT) */
  /* A typed container ("tn.Array<ir.Var>", "tn.Map<tn.String, ir.Function>"):
   * the element (value) and key type indices; TN_TYPE_NONE when unchecked. */
  int32_t elem_type;
  int32_t key_type;
} TnFieldInfo;

/* What tn_node_register adds to a type; immutable once published. */
typedef struct TnNodeInfo {
  int32_t kind;  /* TN_NODE_TREE ... */
  int32_t flags; /* TN_NODE_NO_CREATE */
  int64_t size;
  int32_t nfields; /* inherited first */
  TnFieldInfo *fields;
  TnDeleter deleter;
  char *doc;
  uint64_t key_hash; /* of the type key: stable across processes */
} TnNodeInfo;

typedef struct TnTypeInfo {
  int32_t index;
  int32_t parent; /* -1 for roots and plain values */
  int32_t depth;  /* 0 for roots */
  bool is_object;
  char *key;
  /* ancestors[d] is this type's ancestor at depth d, for d < depth. */
  int32_t *ancestors;
  /* Set once by tn_node_register, with release order. */
  _Atomic(TnNodeInfo *) node;
} TnTypeInfo;

extern _Atomic(TnTypeInfo *) tn__type_table[TN__MAX_TYPES];

static inline const TnTypeInfo *tn__type_info(int32_t index) {
  if (TN_UNLIKELY(index < 0 || index >= TN__MAX_TYPES)) return NULL;
  return atomic_load_explicit(&tn__type_table[index], memory_order_acquire);
}

static inline bool tn__is_instance_index(int32_t have, int32_t want) {
  if (have == want) return true;
  const TnTypeInfo *h = tn__type_info(have);
  const TnTypeInfo *w = tn__type_info(want);
  if (h == NULL || w == NULL) return false;
  return w->depth < h->depth && h->ancestors[w->depth] == want;
}

static inline bool tn__is_instance(const TnObject *obj, int32_t want) {
  return obj != NULL && tn__is_instance_index(obj->type_index, want);
}

static inline const TnNodeInfo *tn__node_info(int32_t index) {
  const TnTypeInfo *t = tn__type_info(index);
  return t ? atomic_load_explicit(&((TnTypeInfo *)t)->node,
                                  memory_order_acquire)
           : NULL;
}

/* Size in bytes of a field of `kind`. */
static inline size_t tn__field_size(int32_t kind) {
  switch (kind) {
    case TN_FIELD_ANY: return sizeof(TnAny);
    case TN_FIELD_BOOL: return 1;
    case TN_FIELD_DTYPE: return sizeof(DLDataType);
    case TN_FIELD_DEVICE: return sizeof(DLDevice);
    default: return 8;
  }
}


/* A dtype's name, or "DataType(code, bits, lanes)" when it has none; never
 * raises. Returns buf. */
const char *tn__dtype_text(DLDataType t, char *buf, size_t size);
/* The same for a device: "cpu:0", or "Device(type, id)". */
const char *tn__device_text(DLDevice d, char *buf, size_t size);
/* Whether the text forms name `t` and read it back unchanged (void too). */
bool tn__dtype_valid(DLDataType t);

/* Register a type at a fixed index (built-ins, at start-up). */
void tn__type_register_static(int32_t index, const char *key, int32_t parent,
                              bool is_object);
const char *tn__type_key_or(int32_t index, const char *fallback);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

int tn__check_object_fail(const TnObject *obj, int32_t type_index,
                          const char *func, const char *arg);
int tn__check_object2_fail(const TnObject *obj, int32_t t1, int32_t t2,
                           const char *func, const char *arg);

/* Check an object argument of a public function: NULL is a ValueError, the
 * wrong type a TypeError, both naming the function and the argument. The
 * exact-type test is inline; subtypes and failures go out of line. */
static inline int tn__check_object(const TnObject *obj, int32_t type_index,
                                   const char *func, const char *arg) {
  if (TN_LIKELY(obj != NULL && obj->type_index == type_index)) return 0;
  return tn__check_object_fail(obj, type_index, func, arg);
}

/* Same, accepting either of two types (Array/List, Map/Dict). */
static inline int tn__check_object2(const TnObject *obj, int32_t t1,
                                    int32_t t2, const char *func,
                                    const char *arg) {
  if (TN_LIKELY(obj != NULL &&
                (obj->type_index == t1 || obj->type_index == t2)))
    return 0;
  return tn__check_object2_fail(obj, t1, t2, func, arg);
}

/* ------------------------------------------------------------------------ */
/* Any ownership, inline for the plain and object cases                      */
/* ------------------------------------------------------------------------ */

int tn__any_to_owned_slow(TnAny *dst, const TnAny *src, const char *who);

/* 0 if `a` is a value the library can store, print and hash; otherwise -1
 * with a TypeError "who: invalid value: ..." (a plain type index that is
 * not assigned, a small string or bytes longer than 7, a NULL pointer in a
 * raw string, raw bytes or object value). Objects are trusted beyond that.
 * Values that come from outside are checked where they are stored (the
 * slow path of tn__any_own) or printed. */
int tn__any_check(const TnAny *a, const char *who);

/*
 * Copy an any as two 8-byte words. Callers usually build a TnAny on the stack
 * just before a call (an 8-byte tag store and an 8-byte value store); one
 * 16-byte load of it cannot be forwarded from those stores and stalls for
 * several nanoseconds. The empty asm keeps the compiler from merging the two
 * halves back into one vector move.
 */
static inline void tn__any_move(TnAny *dst, const TnAny *src) {
  uint64_t lo, hi;
  memcpy(&lo, src, 8);
  memcpy(&hi, (const char *)src + 8, 8);
  __asm__("" : "+r"(lo), "+r"(hi));
  memcpy(dst, &lo, 8);
  memcpy((char *)dst + 8, &hi, 8);
}

/* Bytewise equality of two anys, word by word for the same reason. */
static inline bool tn__any_same_bits(const TnAny *a, const TnAny *b) {
  uint64_t a0, a1, b0, b1;
  memcpy(&a0, a, 8);
  memcpy(&a1, (const char *)a + 8, 8);
  memcpy(&b0, b, 8);
  memcpy(&b1, (const char *)b + 8, 8);
  __asm__("" : "+r"(a0), "+r"(a1), "+r"(b0), "+r"(b1));
  return a0 == b0 && a1 == b1;
}

/* tn_any_to_owned without argument checks: objects and the plain values
 * 0..6 are copied inline; everything else (raw strings/bytes, borrowed
 * DLTensor pointers, small strings/bytes, whose length is checked, and
 * invalid type indices, refused) takes the slow path. `who` names the
 * caller in its errors. */
static inline int tn__any_own_in(TnAny *dst, const TnAny *src,
                                 const char *who) {
  int32_t t = src->type_index;
  if (TN_LIKELY(t >= TN_TYPE_STATIC_OBJECT_BEGIN ||
                (uint32_t)t < TN_TYPE_DLTENSOR_PTR)) {
    tn__any_move(dst, src);
    if (t >= TN_TYPE_STATIC_OBJECT_BEGIN) tn__retain(dst->v_obj);
    return 0;
  }
  return tn__any_to_owned_slow(dst, src, who);
}

static inline int tn__any_own(TnAny *dst, const TnAny *src) {
  return tn__any_own_in(dst, src, "tn_any_to_owned");
}

static inline void tn__any_clear(TnAny *a) {
  if (a->type_index >= TN_TYPE_STATIC_OBJECT_BEGIN) tn__release(a->v_obj);
  a->type_index = TN_TYPE_NONE;
  a->small_len = 0;
  a->v_int64 = 0;
}

/* The bytes of a string or bytes value in any of its forms, without
 * raising: use this to ask "is it text?", not the raising casts. */
typedef enum { TN_TEXT_NONE, TN_TEXT_STR, TN_TEXT_BYTES } TnTextKind;
TnTextKind tn__any_text(const TnAny *a, const char **data, size_t *size);


/* ------------------------------------------------------------------------ */
/* Hashing                                                                   */
/* ------------------------------------------------------------------------ */

static inline uint64_t tn__mix64(uint64_t x) {
  /* A 64-bit finaliser: every input bit reaches every output bit. */
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

uint64_t tn__hash_bytes(const char *data, size_t size);
/* tn_string_hash of a known tn.String or tn.Bytes (cached in the object). */
uint64_t tn__string_hash(TnObject *str);

/* ------------------------------------------------------------------------ */
/* Container layouts                                                         */
/* ------------------------------------------------------------------------ */

/* tn.String / tn.Bytes are TnStringObj (public) with the bytes inline. */
TnObject *tn__string_new(int32_t type_index, const char *data, size_t size,
                         const char *who);

/* tn.Array and tn.List share one layout: items start inline after the
 * header and move to a heap buffer if they outgrow it. */
typedef struct {
  TnObject header;
  int64_t size;
  int64_t capacity;
  TnAny *data;
} TnArrayObj;

static inline TnAny *tn__array_inline(TnArrayObj *a) {
  return (TnAny *)(a + 1);
}


/* The children of an object graph node (items of an array or list, keys
 * and values of a map or dict, reflected fields of a node), one per call
 * from position *pos; false when there are no more. */
bool tn__object_next_child(const TnObject *o, int64_t *pos, TnAny *child);

/* A TN_NODE_NO_CREATE type may have a "__make__" type attribute, a
 * function from a tn.Map of field values to the object (how ir.Op finds the
 * registered operator by name). NULL with an error if the type has none or
 * it fails. (transfer full) */
TnObject *tn__node_make(int32_t type_index, const char *const *names,
                        const TnAny *values, int32_t n, const char *who);

/* tn.Map and tn.Dict: an insertion-ordered table of entries plus an open-
 * addressing index of entry numbers (the compact layout CPython's dict uses). */
typedef struct {
  TnAny key; /* type_index TN__MAP_DELETED marks a removed entry */
  TnAny value;
  uint64_t hash;
} TnMapEntry;

#define TN__MAP_DELETED (-1)

typedef struct {
  TnObject header;
  int64_t size;     /* live entries */
  int64_t used;     /* entries[0, used) are live or deleted */
  int64_t capacity; /* room in entries[] */
  uint64_t mask;    /* index slots - 1 */
  TnMapEntry *entries;
  int32_t *index; /* -1 empty, -2 deleted, else an entry number */
} TnMapObj;

/* Take a strong reference only if the object is still alive (strong > 0).
 * Used on type-stable memory, where a dead object's header stays readable. */
static inline bool tn__try_retain(TnObject *obj) {
  uint64_t cur = atomic_load_explicit(tn__rc(obj), memory_order_relaxed);
  do {
    if ((uint32_t)cur == 0) return false;
  } while (!atomic_compare_exchange_weak_explicit(
      tn__rc(obj), &cur, cur + TN__RC_STRONG_ONE, memory_order_acquire,
      memory_order_relaxed));
  return true;
}

/* Tensor elements (CPU): walk them in row-major order, or copy them out
 * compactly. */
int tn__tensor_walk(const DLTensor *t,
                    int (*fn)(const char *elem, size_t size, void *ctx),
                    void *ctx);
void tn__tensor_copy_compact(const DLTensor *t, void *dst);
/* tn_tensor_is_contiguous of a known tn.Tensor. */
bool tn__tensor_contiguous(const TnObject *tensor);

/* Start-up of the core layer: threads, then the built-in types (init.c). */
void tn__core_init(void);
void tn__threads_init(void);
void tn__types_init(void);

/* Registrations at start-up must succeed: a failure there is a broken build,
 * not bad input. Unlike assert, the expression is always evaluated (the
 * registration happens under G_DISABLE_ASSERT and NDEBUG too); a failure
 * aborts, naming the expression and the raised error. */
#define TN__INIT_CHECK(expr) \
  ((expr) ? (void)0 : tn__init_failed(#expr, __FILE__, __LINE__))
_Noreturn void tn__init_failed(const char *what, const char *file, int line);

#endif /* TVMNODE_CORE_INTERNAL_H_ */
