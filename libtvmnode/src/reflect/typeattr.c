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
 * them), so they sit in per-type hash tables under one mutex.
 */
#include "reflect/reflect_internal.h"

#include <stdlib.h>

/* ---- methods ---------------------------------------------------------- */

static TnMutex g_method_lock;
static GHashTable *g_methods; /* type index -> GHashTable(name -> TnObject*) */

static void release_func(gpointer p) { tn_object_release(p); }

TN_API int tn_type_register_method(int32_t type_index, const char *name,
                                   TnObject *func, int override) {
  const char *who = "tn_type_register_method";
  if (name == NULL) return tn__raise_null(who, "name");
  if (tn__check_object(func, TN_TYPE_FUNCTION, who, "func")) return -1;
  const TnTypeInfo *t = tn__type_info(type_index);
  if (t == NULL || !t->is_object)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "type index %d is not an object type", type_index);
  int rc = 0;
  tn__mutex_lock(&g_method_lock);
  if (g_methods == NULL)
    g_methods = g_hash_table_new_full(
        g_direct_hash, g_direct_equal, NULL,
        (GDestroyNotify)g_hash_table_unref);
  GHashTable *table =
      g_hash_table_lookup(g_methods, GINT_TO_POINTER(type_index));
  if (table == NULL) {
    table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                  release_func);
    g_hash_table_insert(g_methods, GINT_TO_POINTER(type_index), table);
  }
  if (!override && g_hash_table_contains(table, name)) {
    rc = tn_error_raise_in(TN_ERR_VALUE, who, "%s already has a method '%s'; "
                           "pass override=1 to replace it", t->key, name);
  } else {
    tn__retain(func);
    g_hash_table_replace(table, g_strdup(name), func);
  }
  tn__mutex_unlock(&g_method_lock);
  return rc;
}

TN_API TnObject *tn_type_get_method(int32_t type_index, const char *name) {
  const char *who = "tn_type_get_method";
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  const TnTypeInfo *t = tn__type_info(type_index);
  if (t == NULL) {
    tn_error_raise_in(TN_ERR_KEY, who, "no type has index %d", type_index);
    return NULL;
  }
  TnObject *found = NULL;
  tn__mutex_lock(&g_method_lock);
  for (int32_t cur = type_index; cur >= 0 && !found;
       cur = tn__type_info(cur)->parent) {
    GHashTable *table =
        g_methods ? g_hash_table_lookup(g_methods, GINT_TO_POINTER(cur)) : NULL;
    found = table ? g_hash_table_lookup(table, name) : NULL;
  }
  if (found) tn__retain(found);
  tn__mutex_unlock(&g_method_lock);
  if (found == NULL)
    tn_error_raise_in(TN_ERR_ATTRIBUTE, who, "%s has no method '%s'", t->key,
                      name);
  return found;
}

TN_API int tn_type_remove_method(int32_t type_index, const char *name) {
  if (name == NULL) return tn__raise_null("tn_type_remove_method", "name");
  tn__mutex_lock(&g_method_lock);
  GHashTable *table =
      g_methods ? g_hash_table_lookup(g_methods, GINT_TO_POINTER(type_index))
                : NULL;
  gpointer key = NULL, func = NULL;
  bool found = table && g_hash_table_steal_extended(table, name, &key, &func);
  tn__mutex_unlock(&g_method_lock);
  if (!found)
    return TN_RAISE(ATTRIBUTE, "%s has no method '%s' of its own",
                    tn__type_key_or(type_index, "?"), name);
  g_free(key);
  tn_object_release(func); /* outside the lock: it may run a finaliser */
  return 0;
}

TN_API TnObject *tn_type_list_methods(int32_t type_index) {
  if (tn__type_info(type_index) == NULL) {
    TN_RAISE(KEY, "no type has index %d", type_index);
    return NULL;
  }
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  tn__mutex_lock(&g_method_lock);
  GHashTable *table =
      g_methods ? g_hash_table_lookup(g_methods, GINT_TO_POINTER(type_index))
                : NULL;
  if (table) {
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, table);
    while (g_hash_table_iter_next(&it, &k, NULL))
      g_ptr_array_add(names, g_strdup(k));
  }
  tn__mutex_unlock(&g_method_lock);
  TnObject *arr = tn__sorted_string_array(names);
  g_ptr_array_free(names, TRUE);
  return arr;
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
