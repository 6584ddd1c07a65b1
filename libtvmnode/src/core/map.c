/*
 * map.c: tn.Map (immutable value, copy-on-write) and tn.Dict (shared,
 * mutable), insertion-ordered hash maps over TnAny keys.
 *
 * The layout is the compact one: entries are appended to a dense array in
 * insertion order (which is what iteration walks), and a separate power-of-
 * two index of int32 entry numbers is probed linearly. Removal leaves a
 * tombstone in both; the table is compacted when it is rebuilt. The index is
 * kept at most two-thirds full counting tombstones, so a probe always meets
 * an empty slot. Integer and identical-bits keys are compared inline before
 * falling back to tn_any_equal, which keeps the common look-ups short; the
 * one difference from tn_any_equal is that every NaN key is the same key.
 */
#include "core/glib_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define SLOT_EMPTY (-1)
#define SLOT_DELETED (-2)
#define MAX_ENTRIES (INT64_C(1) << 30)

static void table_free(TnMapObj *m) {
  free(m->entries); /* the index lives in the same block */
  m->entries = NULL;
  m->index = NULL;
}

static void map_deleter(TnObject *self, int flags) {
  TnMapObj *m = (TnMapObj *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    for (int64_t i = 0; i < m->used; i++) {
      if (m->entries[i].key.type_index == TN__MAP_DELETED) continue;
      tn__any_clear(&m->entries[i].key);
      tn__any_clear(&m->entries[i].value);
    }
    table_free(m);
    m->size = m->used = m->capacity = 0;
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static const char *kind_name(const TnObject *m) {
  return m->type_index == TN_TYPE_DICT ? "tn.Dict" : "tn.Map";
}

static uint64_t slots_for(int64_t capacity) {
  uint64_t s = 8;
  while (s < (uint64_t)capacity + (uint64_t)capacity / 2 + 1) s <<= 1;
  return s;
}

static inline bool is_nan_key(const TnAny *k) {
  return k->type_index == TN_TYPE_FLOAT && k->v_float64 != k->v_float64;
}

/* Every NaN is one key, whatever its sign and payload: a key must equal
 * itself or it can be stored but never found (IEEE NaN != NaN), and the
 * JSON form writes every NaN the same way, so distinct NaN keys could not
 * be read back. So NaN hashes as one value and equals any NaN here, unlike
 * tn_any_equal, which compares numbers as IEEE does. */
static inline uint64_t key_hash(const TnAny *k) {
  if (TN_LIKELY(k->type_index == TN_TYPE_INT))
    return tn__mix64((uint64_t)k->v_int64);
  if (TN_UNLIKELY(is_nan_key(k))) return tn__mix64(UINT64_C(0x7ff8000000000000));
  return tn_any_hash(k);
}

static inline bool key_equal(const TnAny *a, const TnAny *b) {
  if (tn__any_same_bits(a, b)) return true;
  if (TN_LIKELY(a->type_index == b->type_index &&
                a->type_index < TN_TYPE_RAW_STR &&
                a->type_index != TN_TYPE_FLOAT))
    return false; /* same simple plain type, different bits */
  if (TN_UNLIKELY(is_nan_key(a))) return is_nan_key(b);
  return tn_any_equal(a, b);
}

/* Entry number of `key`, or -1. */
static inline int64_t find(const TnMapObj *m, const TnAny *key, uint64_t h) {
  if (m->index == NULL) return -1;
  for (uint64_t i = h & m->mask;; i = (i + 1) & m->mask) {
    int32_t ix = m->index[i];
    if (ix == SLOT_EMPTY) return -1;
    if (ix >= 0 && m->entries[ix].hash == h &&
        key_equal(&m->entries[ix].key, key))
      return ix;
  }
}

/* Give `m` room for `capacity` entries, compacting away tombstones. The map
 * is unchanged on failure. */
static int rebuild(TnMapObj *m, int64_t capacity, const char *who) {
  if (capacity > MAX_ENTRIES)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%" PRId64
                             " entries is more than a %s can hold", capacity,
                             kind_name(&m->header));
  uint64_t slots = slots_for(capacity);
  size_t bytes = (size_t)capacity * sizeof(TnMapEntry) +
                 (size_t)slots * sizeof(int32_t);
  TnMapEntry *entries = tn__alloc_fails() ? NULL : malloc(bytes);
  if (entries == NULL) return tn__raise_memory(who, bytes);
  int32_t *index = (int32_t *)(entries + capacity);
  memset(index, 0xff, (size_t)slots * sizeof(int32_t)); /* SLOT_EMPTY */
  int64_t n = 0;
  uint64_t mask = slots - 1;
  for (int64_t i = 0; i < m->used; i++) {
    TnMapEntry *e = &m->entries[i];
    if (e->key.type_index == TN__MAP_DELETED) continue;
    entries[n] = *e;
    uint64_t s = e->hash & mask;
    while (index[s] != SLOT_EMPTY) s = (s + 1) & mask;
    index[s] = (int32_t)n++;
  }
  table_free(m);
  m->entries = entries;
  m->index = index;
  m->mask = mask;
  m->capacity = capacity;
  m->used = n;
  return 0;
}

/* Insert or replace; takes ownership of `k` and `v` only on success. One
 * probe finds either the key or the slot a new entry goes into (the first
 * tombstone passed, else the empty slot that ended the probe). */
static inline int insert_owned(TnMapObj *m, TnAny *k, TnAny *v,
                               const char *who) {
  uint64_t h = key_hash(k);
  uint64_t slot = UINT64_MAX;
  if (TN_LIKELY(m->index != NULL)) {
    uint64_t i = h & m->mask;
    for (;; i = (i + 1) & m->mask) {
      int32_t ix = m->index[i];
      if (ix == SLOT_EMPTY) break;
      if (ix == SLOT_DELETED) {
        if (slot == UINT64_MAX) slot = i;
        continue;
      }
      TnMapEntry *e = &m->entries[ix];
      if (e->hash == h && key_equal(&e->key, k)) {
        TnAny old = e->value;
        tn__any_move(&e->value, v);
        tn__any_clear(k); /* keep the first key, as Python does */
        tn__any_clear(&old);
        return 0;
      }
    }
    if (slot == UINT64_MAX) slot = i;
  }
  if (TN_UNLIKELY(m->used == m->capacity)) {
    int64_t want = m->size < 4 ? 8 : m->size * 2;
    if (rebuild(m, want, who)) return -1;
    slot = h & m->mask; /* fresh index: no tombstones */
    while (m->index[slot] != SLOT_EMPTY) slot = (slot + 1) & m->mask;
  }
  TnMapEntry *e = &m->entries[m->used];
  tn__any_move(&e->key, k);
  tn__any_move(&e->value, v);
  e->hash = h;
  m->index[slot] = (int32_t)m->used++;
  m->size++;
  return 0;
}

static int insert(TnMapObj *m, const TnAny *key, const TnAny *value,
                  const char *who) {
  TnAny k, v;
  if (tn__any_own_in(&k, key, who)) return -1;
  if (tn__any_own_in(&v, value, who)) {
    tn__any_clear(&k);
    return -1;
  }
  if (insert_owned(m, &k, &v, who)) {
    tn__any_clear(&k);
    tn__any_clear(&v);
    return -1;
  }
  return 0;
}

static int erase(TnMapObj *m, const TnAny *key, const char *who) {
  uint64_t h = key_hash(key);
  int64_t ix = find(m, key, h);
  if (ix < 0) {
    GString *r = g_string_new(NULL);
    tn__any_repr(r, key);
    tn_error_raise_in(TN_ERR_KEY, who, "key %s is not in the %s", r->str,
                      kind_name(&m->header));
    g_string_free(r, TRUE);
    return -1;
  }
  for (uint64_t s = h & m->mask;; s = (s + 1) & m->mask) {
    if (m->index[s] == ix) {
      m->index[s] = SLOT_DELETED;
      break;
    }
  }
  TnMapEntry *e = &m->entries[ix];
  TnAny k = e->key, v = e->value;
  e->key = tn_any_none();
  e->key.type_index = TN__MAP_DELETED;
  e->value = tn_any_none();
  m->size--;
  tn__any_clear(&k);
  tn__any_clear(&v);
  return 0;
}

static TnMapObj *map_alloc(int32_t type_index, int64_t capacity,
                           const char *who) {
  TnMapObj *m = tn__object_malloc(sizeof *m, 0, type_index, who);
  if (m == NULL) return NULL;
  tn__object_zero_body(m, sizeof *m);
  tn__object_init(&m->header, type_index, map_deleter);
  if (capacity > 0 && rebuild(m, capacity, who)) {
    tn__release(&m->header);
    return NULL;
  }
  return m;
}

static TnObject *map_new(int32_t type_index, const TnAny *keys,
                         const TnAny *values, int64_t n, const char *who) {
  if (n < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "n is negative (%" PRId64 ")",
                             n),
           NULL;
  if (n > 0 && keys == NULL) return tn__raise_null(who, "keys"), NULL;
  if (n > 0 && values == NULL) return tn__raise_null(who, "values"), NULL;
  TnMapObj *m = map_alloc(type_index, n, who);
  if (m == NULL) return NULL;
  for (int64_t i = 0; i < n; i++) {
    if (insert(m, &keys[i], &values[i], who)) {
      tn__release(&m->header);
      return NULL;
    }
  }
  return &m->header;
}

TN_API TnObject *tn_map_new(const TnAny *keys, const TnAny *values,
                            int64_t n) {
  return map_new(TN_TYPE_MAP, keys, values, n, "tn_map_new");
}

TN_API TnObject *tn_dict_new(const TnAny *keys, const TnAny *values,
                             int64_t n) {
  return map_new(TN_TYPE_DICT, keys, values, n, "tn_dict_new");
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                   */
/* ------------------------------------------------------------------------ */

#define READER_CHECK(map, who, fail)                                        \
  do {                                                                      \
    if (tn__check_object2(map, TN_TYPE_MAP, TN_TYPE_DICT, who, "map"))      \
      return fail;                                                          \
  } while (0)

TN_API int64_t tn_map_size(const TnObject *map) {
  READER_CHECK(map, "tn_map_size", -1);
  return ((const TnMapObj *)map)->size;
}

TN_API const TnAny *tn_map_find(const TnObject *map, const TnAny *key) {
  READER_CHECK(map, "tn_map_find", NULL);
  if (key == NULL) return tn__raise_null("tn_map_find", "key"), NULL;
  const TnMapObj *m = (const TnMapObj *)map;
  int64_t ix = find(m, key, key_hash(key));
  return ix < 0 ? NULL : &m->entries[ix].value;
}

TN_API int tn_map_get(const TnObject *map, const TnAny *key, TnAny *out) {
  READER_CHECK(map, "tn_map_get", -1);
  if (key == NULL) return tn__raise_null("tn_map_get", "key");
  if (out == NULL) return tn__raise_null("tn_map_get", "out");
  const TnMapObj *m = (const TnMapObj *)map;
  int64_t ix = find(m, key, key_hash(key));
  if (ix < 0) {
    GString *r = g_string_new(NULL);
    tn__any_repr(r, key);
    TN_RAISE(KEY, "key %s is not in the %s", r->str, kind_name(map));
    g_string_free(r, TRUE);
    return -1;
  }
  tn_any_copy(out, &m->entries[ix].value);
  return 0;
}

TN_API int64_t tn_map_next(const TnObject *map, int64_t pos,
                           const TnAny **key, const TnAny **value) {
  READER_CHECK(map, "tn_map_next", -1);
  const TnMapObj *m = (const TnMapObj *)map;
  for (int64_t i = pos < 0 ? 0 : pos; i < m->used; i++) {
    if (m->entries[i].key.type_index == TN__MAP_DELETED) continue;
    if (key) *key = &m->entries[i].key;
    if (value) *value = &m->entries[i].value;
    return i;
  }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Map: copy-on-write                                                        */
/* ------------------------------------------------------------------------ */

static TnMapObj *copy_for_write(TnObject **map, int64_t extra,
                                const char *who);

/* A tn.Map only the caller holds: `*map` if unique, else a compacted copy
 * replacing the caller's reference (with room for `extra` entries). */
static inline TnMapObj *make_unique(TnObject **map, int64_t extra,
                                    const char *who) {
  if (TN_LIKELY(tn__object_unique(*map))) return (TnMapObj *)*map;
  return copy_for_write(map, extra, who);
}

static TnMapObj *copy_for_write(TnObject **map, int64_t extra,
                                const char *who) {
  TnMapObj *m = (TnMapObj *)*map;
  TnMapObj *c = map_alloc(TN_TYPE_MAP, m->size + extra, who);
  if (c == NULL) return NULL;
  for (int64_t i = 0; i < m->used; i++) {
    const TnMapEntry *e = &m->entries[i];
    if (e->key.type_index == TN__MAP_DELETED) continue;
    TnAny k, v;
    tn_any_copy(&k, &e->key);
    tn_any_copy(&v, &e->value);
    if (insert_owned(c, &k, &v, who)) { /* cannot fail: room was made */
      tn__any_clear(&k);
      tn__any_clear(&v);
      tn__release(&c->header);
      return NULL;
    }
  }
  tn__release(*map);
  *map = &c->header;
  return c;
}

static int check_cow(TnObject **map, const char *who) {
  if (map == NULL) return tn__raise_null(who, "map");
  return tn__check_object(*map, TN_TYPE_MAP, who, "*map");
}

TN_API int tn_map_set(TnObject **map, const TnAny *key, const TnAny *value) {
  if (check_cow(map, "tn_map_set")) return -1;
  if (key == NULL) return tn__raise_null("tn_map_set", "key");
  if (value == NULL) return tn__raise_null("tn_map_set", "value");
  TnAny k, v;
  if (tn__any_own_in(&k, key, "tn_map_set")) return -1;
  if (tn__any_own_in(&v, value, "tn_map_set")) {
    tn__any_clear(&k);
    return -1;
  }
  TnMapObj *m = make_unique(map, 1, "tn_map_set");
  if (m == NULL || insert_owned(m, &k, &v, "tn_map_set")) {
    tn__any_clear(&k);
    tn__any_clear(&v);
    return -1;
  }
  return 0;
}

TN_API int tn_map_erase(TnObject **map, const TnAny *key) {
  if (check_cow(map, "tn_map_erase")) return -1;
  if (key == NULL) return tn__raise_null("tn_map_erase", "key");
  TnMapObj *m = (TnMapObj *)*map;
  if (find(m, key, key_hash(key)) < 0) return erase(m, key, "tn_map_erase");
  m = make_unique(map, 0, "tn_map_erase");
  return m ? erase(m, key, "tn_map_erase") : -1;
}

/* ------------------------------------------------------------------------ */
/* Dict: in place                                                            */
/* ------------------------------------------------------------------------ */

TN_API int tn_dict_set(TnObject *dict, const TnAny *key, const TnAny *value) {
  if (tn__check_object(dict, TN_TYPE_DICT, "tn_dict_set", "dict")) return -1;
  if (key == NULL) return tn__raise_null("tn_dict_set", "key");
  if (value == NULL) return tn__raise_null("tn_dict_set", "value");
  return insert((TnMapObj *)dict, key, value, "tn_dict_set");
}

TN_API int tn_dict_erase(TnObject *dict, const TnAny *key) {
  if (tn__check_object(dict, TN_TYPE_DICT, "tn_dict_erase", "dict"))
    return -1;
  if (key == NULL) return tn__raise_null("tn_dict_erase", "key");
  return erase((TnMapObj *)dict, key, "tn_dict_erase");
}

TN_API int tn_dict_clear(TnObject *dict) {
  if (tn__check_object(dict, TN_TYPE_DICT, "tn_dict_clear", "dict"))
    return -1;
  TnMapObj *m = (TnMapObj *)dict;
  /* Detach the table before releasing anything: a release may run code
   * that looks at this dict. */
  TnMapObj old = *m;
  m->entries = NULL;
  m->index = NULL;
  m->size = m->used = m->capacity = 0;
  m->mask = 0;
  for (int64_t i = 0; i < old.used; i++) {
    if (old.entries[i].key.type_index == TN__MAP_DELETED) continue;
    tn__any_clear(&old.entries[i].key);
    tn__any_clear(&old.entries[i].value);
  }
  free(old.entries);
  return 0;
}
