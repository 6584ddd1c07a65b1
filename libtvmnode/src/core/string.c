/*
 * string.c: tn.String and tn.Bytes, immutable byte strings with the bytes
 * stored inline after the header (one allocation) and a NUL after them so a
 * String's data is also a C string. The content hash is computed on first
 * use and cached in the object: the cache is written with a relaxed store,
 * which is safe because every thread would compute the same value.
 */
#include "core/core_internal.h"

#include <stdlib.h>

/* A word-at-a-time multiplicative hash: one multiply and shift per 8 bytes,
 * the tail read with overlapping fixed-size loads (no memcpy call), and one
 * full mix at the end. The length seeds it, so overlapping tail reads of
 * different lengths differ. Used for strings, bytes and registry names. */
uint64_t tn__hash_bytes(const char *data, size_t size) {
  const uint64_t k = UINT64_C(0x9e3779b97f4a7c15);
  uint64_t h = (uint64_t)size * k ^ UINT64_C(0x6a09e667f3bcc909);
  const char *p = data;
  size_t n = size;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * k;
    h ^= h >> 32;
  }
  if (n > 0) {
    uint64_t w;
    if (n >= 4) {
      uint32_t a, b;
      memcpy(&a, p, 4);
      memcpy(&b, p + n - 4, 4);
      w = a | (uint64_t)b << 32;
    } else {
      w = (uint64_t)(uint8_t)p[0] | (uint64_t)(uint8_t)p[n / 2] << 8 |
          (uint64_t)(uint8_t)p[n - 1] << 16;
    }
    h = (h ^ w) * k;
    h ^= h >> 32;
  }
  return tn__mix64(h);
}

static void string_deleter(TnObject *self, int flags) {
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static inline TnObject *string_new(int32_t type_index, const char *data,
                                   size_t size, const char *who) {
  if (TN_UNLIKELY(size > (size_t)INT64_MAX - sizeof(TnStringObj) - 1)) {
    tn_error_raise_in(TN_ERR_VALUE, who, "size %zu is too large", size);
    return NULL;
  }
  TnStringObj *s =
      tn__object_malloc(sizeof(TnStringObj) + size + 1, 0, type_index, who);
  if (s == NULL) return NULL;
  tn__object_init(&s->header, type_index, string_deleter);
  char *buf = (char *)(s + 1);
  if (size) memcpy(buf, data, size);
  buf[size] = '\0';
  s->data = buf;
  s->size = (int64_t)size;
  s->hash = 0;
  return &s->header;
}

TnObject *tn__string_new(int32_t type_index, const char *data, size_t size,
                         const char *who) {
  return string_new(type_index, data, size, who);
}

TN_API TnObject *tn_string_new(const char *data, size_t size) {
  if (data == NULL && size != 0) {
    tn__raise_null("tn_string_new", "data");
    return NULL;
  }
  return string_new(TN_TYPE_STRING, data, size, "tn_string_new");
}

TN_API TnObject *tn_string_from_cstr(const char *cstr) {
  if (cstr == NULL) {
    tn__raise_null("tn_string_from_cstr", "cstr");
    return NULL;
  }
  return string_new(TN_TYPE_STRING, cstr, strlen(cstr), "tn_string_from_cstr");
}

TN_API TnObject *tn_bytes_new(const char *data, size_t size) {
  if (data == NULL && size != 0) {
    tn__raise_null("tn_bytes_new", "data");
    return NULL;
  }
  return string_new(TN_TYPE_BYTES, data, size, "tn_bytes_new");
}

TN_API int tn_string_hash(TnObject *str, uint64_t *hash) {
  if (tn__check_object2(str, TN_TYPE_STRING, TN_TYPE_BYTES, "tn_string_hash",
                        "str"))
    return -1;
  if (hash == NULL) return tn__raise_null("tn_string_hash", "hash");
  *hash = tn__string_hash(str);
  return 0;
}

uint64_t tn__string_hash(TnObject *str) {
  TnStringObj *s = (TnStringObj *)str;
  uint64_t h = __atomic_load_n(&s->hash, __ATOMIC_RELAXED);
  if (h == 0) {
    h = tn__hash_bytes(s->data, (size_t)s->size);
    if (h == 0) h = 1; /* 0 means "not computed yet" */
    __atomic_store_n(&s->hash, h, __ATOMIC_RELAXED);
  }
  return h;
}
