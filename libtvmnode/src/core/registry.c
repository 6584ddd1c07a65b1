/*
 * registry.c: one named registry of objects, behind every "register by name"
 * table of the library (global functions, passes, operators, type methods)
 * and those to come, so each has the same verbs (register with an override
 * flag, unregister, get, find, list) and the same messages.
 *
 * Names live in slots that are never freed; a slot's value is an atomic that
 * registration, override and removal swap under one writer mutex. Slots are
 * found through an open-addressing table of slot pointers, published with a
 * release store and replaced (never changed in place, except to fill an empty
 * position) when it grows; old tables are kept, so a reader holding one is
 * never left with freed memory. Finding a slot takes no lock.
 *
 * Taking a reference to the value is lock-free only for registries whose
 * values live in type-stable memory (functions: see func/function.c): the
 * reader increments the count only if the object is still alive, then checks
 * that the slot still holds it. That increment may land on an object that
 * died a moment ago, which is safe only when its header stays readable. For
 * other values the reader retains under the writer mutex.
 */
#include "core/glib_internal.h"

#include <stdlib.h>

typedef struct {
  char *name;
  size_t len;
  uint64_t hash;
  _Atomic(TnObject *) value; /* NULL when not registered */
} Slot;

typedef struct Table {
  uint64_t mask;
  size_t count;
  struct Table *retired; /* older tables, kept for readers */
  _Atomic(Slot *) slots[];
} Table;

struct TnRegistry {
  const char *noun; /* "global function", "pass", ... for messages */
  bool lock_free;   /* values are type-stable: retain without the lock */
  TnMutex lock;     /* writers (and readers unless lock_free) */
  _Atomic(Table *) table;
};

TnRegistry *tn__registry_new(const char *noun, bool lock_free_reads) {
  TnRegistry *r = calloc(1, sizeof *r);
  TN__INIT_CHECK(r != NULL);
  r->noun = noun;
  r->lock_free = lock_free_reads;
  tn__mutex_init(&r->lock);
  return r;
}

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
static Slot *slot_add(TnRegistry *r, const char *name, size_t len,
                      uint64_t h) {
  Table *t = atomic_load_explicit(&r->table, memory_order_relaxed);
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
    atomic_store_explicit(&r->table, bigger, memory_order_release);
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

static Slot *slot_of(TnRegistry *r, const char *name, memory_order order) {
  size_t len = strlen(name);
  return table_find(atomic_load_explicit(&r->table, order), name, len,
                    tn__hash_bytes(name, len));
}

int tn__registry_register(TnRegistry *r, const char *name, TnObject *value,
                          int override, const char *who) {
  if (name == NULL) return tn__raise_null(who, "name");
  if (name[0] == '\0')
    return tn_error_raise_in(TN_ERR_VALUE, who, "name is the empty string");
  size_t len = strlen(name);
  uint64_t h = tn__hash_bytes(name, len);
  int rc = 0;
  TnObject *old = NULL;
  tn__mutex_lock(&r->lock);
  Slot *s = table_find(atomic_load_explicit(&r->table, memory_order_relaxed),
                       name, len, h);
  if (s == NULL) s = slot_add(r, name, len, h);
  if (s == NULL) {
    rc = tn__raise_memory(who, len);
  } else if (atomic_load_explicit(&s->value, memory_order_relaxed) != NULL &&
             !override) {
    rc = tn_error_raise_in(TN_ERR_VALUE, who, "a %s named '%s' is already "
                           "registered; pass override=1 to replace it", r->noun,
                           name);
  } else {
    tn__retain(value);
    old = atomic_exchange_explicit(&s->value, value, memory_order_acq_rel);
  }
  tn__mutex_unlock(&r->lock);
  if (old) tn__release(old); /* outside the lock: it may run a finaliser */
  return rc;
}

TnObject *tn__registry_find(TnRegistry *r, const char *name) {
  Slot *s = slot_of(r, name, memory_order_acquire);
  if (s == NULL) return NULL;
  if (!r->lock_free) {
    tn__mutex_lock(&r->lock);
    TnObject *v = atomic_load_explicit(&s->value, memory_order_relaxed);
    if (v) tn__retain(v);
    tn__mutex_unlock(&r->lock);
    return v;
  }
  for (;;) {
    TnObject *v = atomic_load_explicit(&s->value, memory_order_acquire);
    if (v == NULL) return NULL;
    if (tn__try_retain(v)) {
      if (atomic_load_explicit(&s->value, memory_order_acquire) == v) return v;
      tn__release(v); /* replaced meanwhile: drop it and look again */
    }
  }
}

TnObject *tn__registry_get(TnRegistry *r, const char *name, const char *who) {
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  TnObject *v = tn__registry_find(r, name);
  if (v == NULL)
    tn_error_raise_in(TN_ERR_KEY, who, "no %s is registered as '%s'", r->noun,
                      name);
  return v;
}

int tn__registry_unregister(TnRegistry *r, const char *name,
                            const char *who) {
  if (name == NULL) return tn__raise_null(who, "name");
  tn__mutex_lock(&r->lock);
  Slot *s = slot_of(r, name, memory_order_relaxed);
  TnObject *old =
      s ? atomic_exchange_explicit(&s->value, NULL, memory_order_acq_rel)
        : NULL;
  tn__mutex_unlock(&r->lock);
  if (old == NULL)
    return tn_error_raise_in(TN_ERR_KEY, who, "no %s is registered as '%s'",
                             r->noun, name);
  tn__release(old); /* outside the lock: it may run a finaliser */
  return 0;
}

TnObject *tn__registry_list(TnRegistry *r, const char *prefix) {
  size_t plen = prefix ? strlen(prefix) : 0;
  tn__mutex_lock(&r->lock);
  Table *t = atomic_load_explicit(&r->table, memory_order_relaxed);
  GPtrArray *names = g_ptr_array_new();
  for (uint64_t i = 0; t && i <= t->mask; i++) {
    Slot *s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
    if (s && atomic_load_explicit(&s->value, memory_order_relaxed) &&
        (plen == 0 || strncmp(s->name, prefix, plen) == 0))
      g_ptr_array_add(names, s->name + plen); /* slot names are never freed */
  }
  tn__mutex_unlock(&r->lock);
  TnObject *arr = tn__sorted_string_array(names);
  g_ptr_array_free(names, TRUE);
  return arr;
}
