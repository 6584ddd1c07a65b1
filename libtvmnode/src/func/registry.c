/*
 * registry.c: the global function registry, with look-ups that take no lock.
 *
 * Names live in slots that are never freed; a slot's function pointer is an
 * atomic that registration, override and removal swap under one writer
 * mutex. The slots are found through an open-addressing table of slot
 * pointers, published with a release store and replaced (never changed in
 * place, except to fill an empty position) when it grows; old tables are
 * kept, so a reader holding one is never left with freed memory.
 *
 * A reader takes its reference without a lock: it loads the function
 * pointer, increments the count only if the function is still alive, and
 * then checks that the slot still holds the same function (otherwise it
 * lets go and tries again). That increment may land on a function that
 * died a moment ago; it is safe because function objects are type-stable
 * (function.c): their headers stay readable with a zero count.
 */
#include "func/func_internal.h"

#include <stdlib.h>

typedef struct {
  char *name;
  size_t len;
  uint64_t hash;
  _Atomic(TnObject *) func; /* NULL when not registered */
} Slot;

typedef struct Table {
  uint64_t mask;
  size_t count;
  struct Table *retired; /* older tables, kept for readers */
  _Atomic(Slot *) slots[];
} Table;

static TnMutex g_lock; /* writers only */
static _Atomic(Table *) g_table;

static Table *table_new(uint64_t size) {
  Table *t = calloc(1, sizeof(Table) + size * sizeof(_Atomic(Slot *)));
  if (t) t->mask = size - 1;
  return t;
}

static Slot *table_find(Table *t, const char *name, size_t len, uint64_t h) {
  if (t == NULL) return NULL;
  for (uint64_t i = h & t->mask;; i = (i + 1) & t->mask) {
    Slot *s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
    if (s == NULL) return NULL;
    if (s->hash == h && s->len == len && memcmp(s->name, name, len) == 0)
      return s;
  }
}

static void table_place(Table *t, Slot *s) {
  uint64_t i = s->hash & t->mask;
  while (atomic_load_explicit(&t->slots[i], memory_order_relaxed))
    i = (i + 1) & t->mask;
  atomic_store_explicit(&t->slots[i], s, memory_order_release);
  t->count++;
}

/* A new slot for `name` in the current table, growing it if needed. The
 * caller holds the lock. NULL on out of memory. */
static Slot *slot_add(const char *name, size_t len, uint64_t h) {
  Table *t = atomic_load_explicit(&g_table, memory_order_relaxed);
  if (t == NULL || (t->count + 1) * 2 > t->mask + 1) {
    Table *bigger = table_new(t ? (t->mask + 1) * 2 : 64);
    if (bigger == NULL) return NULL;
    if (t) {
      for (uint64_t i = 0; i <= t->mask; i++) {
        Slot *s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (s) table_place(bigger, s);
      }
      bigger->retired = t;
    }
    atomic_store_explicit(&g_table, bigger, memory_order_release);
    t = bigger;
  }
  Slot *s = calloc(1, sizeof *s);
  char *copy = malloc(len + 1);
  if (s == NULL || copy == NULL) {
    free(s);
    free(copy);
    return NULL;
  }
  memcpy(copy, name, len + 1);
  s->name = copy;
  s->len = len;
  s->hash = h;
  table_place(t, s);
  return s;
}

TN_API int tn_func_register(const char *name, TnObject *func, int override) {
  if (name == NULL) return tn__raise_null("tn_func_register", "name");
  if (tn__check_object(func, TN_TYPE_FUNCTION, "tn_func_register", "func"))
    return -1;
  if (name[0] == '\0')
    return TN_RAISE(VALUE, "name is the empty string");
  size_t len = strlen(name);
  uint64_t h = tn__hash_bytes(name, len);
  int rc = 0;
  TnObject *old = NULL;
  tn__mutex_lock(&g_lock);
  Slot *s = table_find(atomic_load_explicit(&g_table, memory_order_relaxed),
                       name, len, h);
  if (s == NULL) s = slot_add(name, len, h);
  if (s == NULL) {
    rc = tn__raise_memory("tn_func_register", 0);
  } else if (atomic_load_explicit(&s->func, memory_order_relaxed) != NULL &&
             !override) {
    rc = TN_RAISE(VALUE, "a function named '%s' is already registered; pass "
                  "override=1 to replace it", name);
  } else {
    tn__retain(func);
    old = atomic_exchange_explicit(&s->func, func, memory_order_acq_rel);
  }
  tn__mutex_unlock(&g_lock);
  if (old) tn__release(old); /* outside the lock: it may run a finaliser */
  return rc;
}

/* A new reference to the function registered as `name`, or NULL. */
static TnObject *lookup(const char *name) {
  size_t len = strlen(name);
  uint64_t h = tn__hash_bytes(name, len);
  Slot *s = table_find(atomic_load_explicit(&g_table, memory_order_acquire),
                       name, len, h);
  if (s == NULL) return NULL;
  for (;;) {
    TnObject *f = atomic_load_explicit(&s->func, memory_order_acquire);
    if (f == NULL) return NULL;
    if (tn__try_retain(f)) {
      if (atomic_load_explicit(&s->func, memory_order_acquire) == f) return f;
      tn__release(f); /* replaced meanwhile: drop it and look again */
    }
  }
}

TN_API TnObject *tn_func_find_global(const char *name) {
  if (name == NULL) return tn__raise_null("tn_func_find_global", "name"), NULL;
  return lookup(name);
}

TN_API TnObject *tn_func_get_global(const char *name) {
  if (name == NULL) return tn__raise_null("tn_func_get_global", "name"), NULL;
  TnObject *f = lookup(name);
  if (f == NULL)
    TN_RAISE(KEY, "no global function is registered as '%s'", name);
  return f;
}

TN_API int tn_func_remove_global(const char *name) {
  if (name == NULL) return tn__raise_null("tn_func_remove_global", "name");
  size_t len = strlen(name);
  uint64_t h = tn__hash_bytes(name, len);
  tn__mutex_lock(&g_lock);
  Slot *s = table_find(atomic_load_explicit(&g_table, memory_order_relaxed),
                       name, len, h);
  TnObject *old =
      s ? atomic_exchange_explicit(&s->func, NULL, memory_order_acq_rel) : NULL;
  tn__mutex_unlock(&g_lock);
  if (old == NULL)
    return TN_RAISE(KEY, "no global function is registered as '%s'", name);
  tn__release(old);
  return 0;
}

TN_API TnObject *tn_func_list_global_names(void) {
  tn__mutex_lock(&g_lock);
  Table *t = atomic_load_explicit(&g_table, memory_order_relaxed);
  GPtrArray *names = g_ptr_array_new();
  for (uint64_t i = 0; t && i <= t->mask; i++) {
    Slot *s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
    if (s && atomic_load_explicit(&s->func, memory_order_relaxed))
      g_ptr_array_add(names, s->name); /* slot names are never freed */
  }
  tn__mutex_unlock(&g_lock);
  TnObject *arr = tn__sorted_string_array(names);
  g_ptr_array_free(names, TRUE);
  return arr;
}
