/*
 * typeattr.c: methods (named functions attached to a type) and type
 * attributes (named columns of values indexed by type index).
 *
 * Attribute reads happen per node in generic algorithms (a printer looks up
 * "__repr__" for every object it prints), so they take no lock: a column is
 * an array of atomic pointers to value cells, indexed by type. A cell, once
 * published, is never freed; replacing a value publishes a new cell and
 * keeps the old one (and what it holds) alive until exit, because a reader
 * may still be looking at it. Attributes are meant to be set at start-up.
 * Columns themselves are found by name in an append-only array, also
 * without a lock. Methods are looked up far less often (a binding caches
 * them), so they sit in one named registry (core/registry.c) keyed by type
 * index and name.
 */
#include "reflect/reflect_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- methods ---------------------------------------------------------- */

/* One registry for all types, keyed "<type index>:<name>" so that a type's
 * own methods list by prefix. Made on first use under a once guard, since
 * types register methods from the core layer's start-up on. */
static TnRegistry *methods(void) {
  static TnRegistry *r;
  static gsize once;
  if (g_once_init_enter(&once)) {
    r = tn__registry_new("type method", false);
    g_once_init_leave(&once, 1);
  }
  return r;
}

#define METHOD_KEY_MAX 256

/* The registry key of a method, or NULL with a ValueError naming `who`. */
static const char *method_key(char *buf, int32_t type_index, const char *name,
                              const char *who) {
  int n = snprintf(buf, METHOD_KEY_MAX, "%d:%s", type_index, name);
  if (n < 0 || n >= METHOD_KEY_MAX) {
    tn_error_raise_in(TN_ERR_VALUE, who,
                      "method name '%.40s...' is longer than %d bytes", name,
                      METHOD_KEY_MAX - 16);
    return NULL;
  }
  return buf;
}

TN_API int tn_type_method_register(int32_t type_index, const char *name,
                                   TnObject *func, int override) {
  const char *who = "tn_type_method_register";
  if (name == NULL) return tn__raise_null(who, "name");
  if (tn__check_object(func, TN_TYPE_FUNCTION, who, "func")) return -1;
  const TnTypeInfo *t = tn__type_info(type_index);
  if (t == NULL || !t->is_object)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "type index %d is not an object type", type_index);
  char buf[METHOD_KEY_MAX];
  const char *key = method_key(buf, type_index, name, who);
  if (key == NULL) return -1;
  if (!override) {
    TnObject *old = tn__registry_find(methods(), key);
    if (old != NULL) {
      tn_object_release(old);
      return tn_error_raise_in(TN_ERR_VALUE, who, "%s already has a method "
                               "'%s'; pass override=1 to replace it", t->key,
                               name);
    }
  }
  return tn__registry_register(methods(), key, func, override, who);
}

/* The method `name` of `type_index` or its nearest ancestor, or NULL
 * without raising. (transfer full) */
static TnObject *method_lookup(int32_t type_index, const char *name,
                               const char *who) {
  char buf[METHOD_KEY_MAX];
  for (int32_t cur = type_index; cur >= 0; cur = tn__type_info(cur)->parent) {
    const char *key = method_key(buf, cur, name, who);
    if (key == NULL) return NULL;
    TnObject *f = tn__registry_find(methods(), key);
    if (f) return f;
  }
  return NULL;
}

TN_API TnObject *tn_type_method_find(int32_t type_index, const char *name) {
  const char *who = "tn_type_method_find";
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  if (tn__type_info(type_index) == NULL) return NULL;
  return method_lookup(type_index, name, who);
}

TN_API TnObject *tn_type_method_get(int32_t type_index, const char *name) {
  const char *who = "tn_type_method_get";
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  const TnTypeInfo *t = tn__type_info(type_index);
  if (t == NULL) {
    tn_error_raise_in(TN_ERR_KEY, who, "no type has index %d", type_index);
    return NULL;
  }
  TnObject *found = method_lookup(type_index, name, who);
  if (found == NULL && tn_error_peek_raised() == NULL)
    tn_error_raise_in(TN_ERR_ATTRIBUTE, who, "%s has no method '%s'", t->key,
                      name);
  return found;
}

TN_API int tn_type_method_unregister(int32_t type_index, const char *name) {
  const char *who = "tn_type_method_unregister";
  if (name == NULL) return tn__raise_null(who, "name");
  char buf[METHOD_KEY_MAX];
  const char *key = method_key(buf, type_index, name, who);
  if (key == NULL) return -1;
  if (tn__registry_unregister(methods(), key, who) == 0) return 0;
  tn_error_set_raised(NULL); /* say it in terms of types, not keys */
  return tn_error_raise_in(TN_ERR_ATTRIBUTE, who,
                           "%s has no method '%s' of its own",
                           tn__type_key_or(type_index, "?"), name);
}

TN_API TnObject *tn_type_method_list(int32_t type_index) {
  if (tn__type_info(type_index) == NULL) {
    TN_RAISE(KEY, "no type has index %d", type_index);
    return NULL;
  }
  char prefix[32];
  snprintf(prefix, sizeof prefix, "%d:", type_index);
  return tn__registry_list(methods(), prefix);
}

/* ---- type attributes --------------------------------------------------- */

typedef struct {
  char *name;
  _Atomic(TnAny *) cells[TN__MAX_TYPES];
} Column;

/* Columns are few: an append-only array, published one entry at a time, is
 * scanned by name without a lock. */
#define MAX_COLUMNS 1024
static TnMutex g_attr_lock; /* writers only */
static _Atomic(Column *) g_columns[MAX_COLUMNS];
static _Atomic int32_t g_ncolumns;

static Column *find_column(const char *attr) {
  int32_t n = atomic_load_explicit(&g_ncolumns, memory_order_acquire);
  for (int32_t i = 0; i < n; i++) {
    Column *c = atomic_load_explicit(&g_columns[i], memory_order_acquire);
    if (strcmp(c->name, attr) == 0) return c;
  }
  return NULL;
}

static Column *column(const char *attr, bool create) {
  Column *c = find_column(attr);
  if (c || !create) return c;
  tn__mutex_lock(&g_attr_lock);
  c = find_column(attr);
  int32_t n = atomic_load_explicit(&g_ncolumns, memory_order_relaxed);
  if (c == NULL && n < MAX_COLUMNS) {
    c = calloc(1, sizeof *c); /* large and zero: mapped lazily */
    if (c) {
      c->name = g_strdup(attr);
      atomic_store_explicit(&g_columns[n], c, memory_order_release);
      atomic_store_explicit(&g_ncolumns, n + 1, memory_order_release);
    }
  }
  tn__mutex_unlock(&g_attr_lock);
  return c;
}

TN_API int tn_type_attr_set(const char *attr, int32_t type_index,
                            const TnAny *value) {
  const char *who = "tn_type_attr_set";
  if (attr == NULL) return tn__raise_null(who, "attr");
  if (value == NULL) return tn__raise_null(who, "value");
  if (tn__type_info(type_index) == NULL)
    return tn_error_raise_in(TN_ERR_KEY, who, "no type has index %d",
                             type_index);
  Column *c = column(attr, true);
  if (c == NULL)
    return tn_error_raise_in(TN_ERR_RUNTIME, who, "cannot add attribute '%s' "
                             "(out of memory, or more than %d attributes)",
                             attr, MAX_COLUMNS);
  TnAny *cell = malloc(sizeof *cell);
  if (cell == NULL) return tn__raise_memory(who, sizeof *cell);
  if (tn_any_to_owned(cell, value)) {
    free(cell);
    return -1;
  }
  /* The old cell, if any, stays: a reader may hold a pointer into it. */
  atomic_store_explicit(&c->cells[type_index], cell, memory_order_release);
  return 0;
}

TN_API const TnAny *tn_type_attr_get(const char *attr, int32_t type_index) {
  if (attr == NULL || type_index < 0 || type_index >= TN__MAX_TYPES)
    return NULL;
  Column *c = column(attr, false);
  return c ? atomic_load_explicit(&c->cells[type_index], memory_order_acquire)
           : NULL;
}

TN_API const TnAny *tn_type_attr_find(const char *attr, int32_t type_index) {
  if (attr == NULL) return NULL;
  Column *c = column(attr, false);
  if (c == NULL) return NULL;
  for (int32_t t = type_index; t >= 0;) {
    const TnTypeInfo *info = tn__type_info(t);
    if (info == NULL) return NULL;
    TnAny *v = atomic_load_explicit(&c->cells[t], memory_order_acquire);
    if (v) return v;
    t = info->parent;
  }
  return NULL;
}
