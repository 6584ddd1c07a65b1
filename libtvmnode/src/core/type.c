/*
 * type.c: the type registry, mapping type keys to indices and back.
 *
 * Reads must be cheap and lock-free because is_instance runs on every checked
 * cast: the table is a fixed array of atomic pointers indexed by type index,
 * written once per type (release) and read with acquire loads. Each entry
 * carries its depth and a copy of its ancestor chain, which makes
 * is_instance O(1). Writers (registration, from any language and thread)
 * serialise on one mutex; the key-to-index hash table is guarded by it too.
 * Entries are never removed, so a pointer read from the table stays valid.
 */
#include "core/glib_internal.h"

#include <stdlib.h>

_Atomic(TnTypeInfo *) tn__type_table[TN__MAX_TYPES];

static TnMutex g_type_lock;
static GHashTable *g_type_by_key; /* char* key -> TnTypeInfo*, under lock */
static int32_t g_next_dynamic = TN_TYPE_DYNAMIC_BEGIN; /* under lock */
static _Atomic int32_t g_type_count;

/* Build an entry; the caller holds the lock. Returns NULL on OOM. */
static TnTypeInfo *make_info(int32_t index, const char *key, int32_t parent,
                             bool is_object) {
  const TnTypeInfo *p = parent >= 0 ? tn__type_info(parent) : NULL;
  TnTypeInfo *info = calloc(1, sizeof *info);
  if (info == NULL) return NULL;
  info->index = index;
  info->parent = parent;
  info->is_object = is_object;
  info->depth = p ? p->depth + 1 : 0;
  info->key = strdup(key);
  info->ancestors = calloc((size_t)info->depth + 1, sizeof(int32_t));
  if (info->key == NULL || info->ancestors == NULL) {
    free(info->key);
    free(info->ancestors);
    free(info);
    return NULL;
  }
  if (p) {
    memcpy(info->ancestors, p->ancestors, sizeof(int32_t) * (size_t)p->depth);
    info->ancestors[p->depth] = parent;
  }
  return info;
}

static void publish(TnTypeInfo *info) {
  g_hash_table_insert(g_type_by_key, info->key, info);
  atomic_store_explicit(&tn__type_table[info->index], info,
                        memory_order_release);
  int32_t count = atomic_load_explicit(&g_type_count, memory_order_relaxed);
  if (info->index + 1 > count)
    atomic_store_explicit(&g_type_count, info->index + 1,
                          memory_order_release);
}

void tn__type_register_static(int32_t index, const char *key, int32_t parent,
                              bool is_object) {
  tn__mutex_lock(&g_type_lock);
  if (g_type_by_key == NULL)
    g_type_by_key = g_hash_table_new(g_str_hash, g_str_equal);
  TnTypeInfo *info = make_info(index, key, parent, is_object);
  TN__INIT_CHECK(info != NULL); /* start-up; nothing sensible to do without it */
  publish(info);
  tn__mutex_unlock(&g_type_lock);
}

TN_API int32_t tn_type_register(const char *type_key, int32_t parent_index) {
  if (type_key == NULL) return tn__raise_null("tn_type_register", "type_key");
  if (type_key[0] == '\0')
    return TN_RAISE(VALUE, "type_key is the empty string");
  const TnTypeInfo *parent = tn__type_info(parent_index);
  if (parent == NULL || !parent->is_object)
    return TN_RAISE(TYPE,
                    "parent index %d of '%s' is not a registered object type",
                    parent_index, type_key);
  int32_t result;
  tn__mutex_lock(&g_type_lock);
  TnTypeInfo *have = g_hash_table_lookup(g_type_by_key, type_key);
  if (have != NULL) {
    if (have->parent == parent_index) {
      result = have->index;
    } else {
      result = TN_RAISE(VALUE, "type key '%s' is already registered with "
                        "parent '%s' (index %d); cannot register it again with "
                        "parent '%s' (index %d)", type_key,
                        tn__type_key_or(have->parent, "?"), have->parent,
                        parent->key, parent_index);
    }
  } else if (g_next_dynamic >= TN__MAX_TYPES) {
    result = TN_RAISE(RUNTIME, "type table full (%d types) registering '%s'",
                      TN__MAX_TYPES, type_key);
  } else {
    TnTypeInfo *info = make_info(g_next_dynamic, type_key, parent_index, true);
    if (info == NULL) {
      result = tn__raise_memory("tn_type_register", sizeof(TnTypeInfo));
    } else {
      g_next_dynamic++;
      publish(info);
      result = info->index;
    }
  }
  tn__mutex_unlock(&g_type_lock);
  return result;
}

TN_API int32_t tn_type_index(const char *type_key) {
  if (type_key == NULL) return tn__raise_null("tn_type_index", "type_key");
  tn__mutex_lock(&g_type_lock);
  TnTypeInfo *info = g_hash_table_lookup(g_type_by_key, type_key);
  int32_t index = info ? info->index : -1;
  tn__mutex_unlock(&g_type_lock);
  if (index < 0)
    return TN_RAISE(KEY, "no type is registered with key '%s'", type_key);
  return index;
}

const char *tn__type_key_or(int32_t index, const char *fallback) {
  const TnTypeInfo *info = tn__type_info(index);
  return info ? info->key : fallback;
}

TN_API const char *tn_type_key(int32_t type_index) {
  const TnTypeInfo *info = tn__type_info(type_index);
  if (info == NULL) {
    TN_RAISE(KEY, "no type has index %d", type_index);
    return NULL;
  }
  return info->key;
}

TN_API int tn_type_parent(int32_t type_index, int32_t *parent) {
  const TnTypeInfo *info = tn__type_info(type_index);
  if (info == NULL)
    return TN_RAISE(KEY, "no type has index %d", type_index);
  if (parent == NULL) return tn__raise_null("tn_type_parent", "parent");
  *parent = info->parent;
  return 0;
}

TN_API int32_t tn_type_depth(int32_t type_index) {
  const TnTypeInfo *info = tn__type_info(type_index);
  if (info == NULL)
    return TN_RAISE(KEY, "no type has index %d", type_index);
  return info->depth;
}

TN_API int tn_type_is_subtype(int32_t child, int32_t parent) {
  return tn__is_instance_index(child, parent) && tn__type_info(child) != NULL;
}

TN_API int32_t tn_type_count(void) {
  return atomic_load_explicit(&g_type_count, memory_order_acquire);
}

void tn__types_init(void) {
  static const struct {
    int32_t index;
    const char *key;
  } plain[] = {
      {TN_TYPE_NONE, "None"},
      {TN_TYPE_INT, "int"},
      {TN_TYPE_BOOL, "bool"},
      {TN_TYPE_FLOAT, "float"},
      {TN_TYPE_OPAQUE_PTR, "void*"},
      {TN_TYPE_DATA_TYPE, "DataType"},
      {TN_TYPE_DEVICE, "Device"},
      {TN_TYPE_DLTENSOR_PTR, "DLTensor*"},
      {TN_TYPE_RAW_STR, "const char*"},
      {TN_TYPE_RAW_BYTES, "TnByteArray*"},
      {TN_TYPE_SMALL_STR, "tn.SmallStr"},
      {TN_TYPE_SMALL_BYTES, "tn.SmallBytes"},
  };
  static const struct {
    int32_t index;
    const char *key;
  } objects[] = {
      {TN_TYPE_STRING, "tn.String"},   {TN_TYPE_BYTES, "tn.Bytes"},
      {TN_TYPE_ERROR, "tn.Error"},     {TN_TYPE_FUNCTION, "tn.Function"},
      {TN_TYPE_SHAPE, "tn.Shape"},     {TN_TYPE_TENSOR, "tn.Tensor"},
      {TN_TYPE_ARRAY, "tn.Array"},     {TN_TYPE_LIST, "tn.List"},
      {TN_TYPE_MAP, "tn.Map"},         {TN_TYPE_DICT, "tn.Dict"},
      {TN_TYPE_MODULE, "tn.Module"},   {TN_TYPE_OPAQUE_OBJECT, "tn.OpaqueObject"},
      {TN_TYPE_CCLOSURE, "tn.CClosure"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(plain); i++)
    tn__type_register_static(plain[i].index, plain[i].key, -1, false);
  tn__type_register_static(TN_TYPE_OBJECT, "tn.Object", -1, true);
  for (size_t i = 0; i < G_N_ELEMENTS(objects); i++)
    tn__type_register_static(objects[i].index, objects[i].key, TN_TYPE_OBJECT,
                             true);
}
