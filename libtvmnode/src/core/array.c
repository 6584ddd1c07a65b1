/*
 * array.c: tn.Array (immutable value, copy-on-write) and tn.List (shared,
 * mutable), which share one layout.
 *
 * Items start inline after the header, so building an array is one
 * allocation; when a list or a uniquely held array outgrows that room its
 * items move to a heap buffer that doubles. Copy-on-write works on the
 * caller's reference: if it is the only reference of any kind the change is
 * made in place, otherwise the caller's reference is swapped for a changed
 * copy. Every change converts and allocates before it touches the container,
 * so a failure leaves the container exactly as it was.
 */
#include "core/glib_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define MAX_ITEMS (INT64_C(1) << 40)

static void array_deleter(TnObject *self, int flags) {
  TnArrayObj *a = (TnArrayObj *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    for (int64_t i = 0; i < a->size; i++) tn__any_clear(&a->data[i]);
    if (a->data != tn__array_inline(a)) free(a->data);
    a->data = tn__array_inline(a);
    a->size = a->capacity = 0;
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static const char *kind_name(const TnObject *seq) {
  return seq->type_index == TN_TYPE_LIST ? "tn.List" : "tn.Array";
}

static TnArrayObj *array_alloc(int32_t type_index, int64_t capacity,
                               const char *who) {
  if (capacity < 0 || capacity > MAX_ITEMS) {
    tn_error_raise_in(TN_ERR_VALUE, who, "size %" PRId64 " is out of range",
                      capacity);
    return NULL;
  }
  TnArrayObj *a = tn__object_malloc(
      sizeof(TnArrayObj) + (size_t)capacity * sizeof(TnAny), 0, type_index,
      who);
  if (a == NULL) return NULL;
  tn__object_init(&a->header, type_index, array_deleter);
  a->size = 0;
  a->capacity = capacity;
  a->data = tn__array_inline(a);
  return a;
}

/* Append owned conversions of `items` to a fresh `a` with room for them. */
static int array_fill(TnArrayObj *a, const TnAny *items, int64_t n,
                      const char *who) {
  for (int64_t i = 0; i < n; i++) {
    if (tn__any_own_in(&a->data[i], &items[i], who) != 0) return -1;
    a->size = i + 1;
  }
  return 0;
}

static TnObject *seq_new(int32_t type_index, const TnAny *items, int64_t n,
                         const char *who) {
  if (n < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "n is negative (%" PRId64 ")",
                             n),
           NULL;
  if (items == NULL && n > 0) return tn__raise_null(who, "items"), NULL;
  /* A list gets a little slack so the first appends do not reallocate. */
  int64_t cap = type_index == TN_TYPE_LIST && n < 4 ? 4 : n;
  TnArrayObj *a = array_alloc(type_index, cap, who);
  if (a == NULL) return NULL;
  if (array_fill(a, items, n, who) != 0) {
    tn__release(&a->header);
    return NULL;
  }
  return &a->header;
}

TN_API TnObject *tn_array_new(const TnAny *items, int64_t n) {
  return seq_new(TN_TYPE_ARRAY, items, n, "tn_array_new");
}

TN_API TnObject *tn_list_new(const TnAny *items, int64_t n) {
  return seq_new(TN_TYPE_LIST, items, n, "tn_list_new");
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                   */
/* ------------------------------------------------------------------------ */

TN_API int64_t tn_array_size(const TnObject *seq) {
  if (tn__check_object2(seq, TN_TYPE_ARRAY, TN_TYPE_LIST, "tn_array_size",
                        "seq"))
    return -1;
  return ((const TnArrayObj *)seq)->size;
}

/* Normalise a possibly negative index into [0, size); -1 with IndexError. */
static int64_t norm_index(const TnObject *seq, int64_t size, int64_t i,
                          const char *who) {
  int64_t j = i < 0 ? i + size : i;
  if (TN_LIKELY(j >= 0 && j < size)) return j;
  return tn_error_raise_in(TN_ERR_INDEX, who, "index %" PRId64
                           " is out of range for a %s of size %" PRId64, i,
                           kind_name(seq), size);
}

TN_API const TnAny *tn_array_at(const TnObject *seq, int64_t i) {
  if (tn__check_object2(seq, TN_TYPE_ARRAY, TN_TYPE_LIST, "tn_array_at",
                        "seq"))
    return NULL;
  const TnArrayObj *a = (const TnArrayObj *)seq;
  int64_t j = norm_index(seq, a->size, i, "tn_array_at");
  return j < 0 ? NULL : &a->data[j];
}

TN_API int tn_array_get(const TnObject *seq, int64_t i, TnAny *out) {
  if (out == NULL) return tn__raise_null("tn_array_get", "out");
  if (tn__check_object2(seq, TN_TYPE_ARRAY, TN_TYPE_LIST, "tn_array_get",
                        "seq"))
    return -1;
  const TnArrayObj *a = (const TnArrayObj *)seq;
  int64_t j = norm_index(seq, a->size, i, "tn_array_get");
  if (j < 0) return -1;
  tn_any_copy(out, &a->data[j]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Growth and copy-on-write                                                  */
/* ------------------------------------------------------------------------ */

/* Make room for `need` items in total; the container is untouched on
 * failure. */
static int grow(TnArrayObj *a, int64_t need, const char *who) {
  if (need > MAX_ITEMS)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%" PRId64
                             " items is more than a %s can hold", need,
                             kind_name(&a->header));
  int64_t cap = a->capacity < 4 ? 4 : a->capacity;
  while (cap < need) cap *= 2;
  size_t bytes = (size_t)cap * sizeof(TnAny);
  TnAny *buf;
  if (a->data == tn__array_inline(a)) {
    buf = tn__alloc_fails() ? NULL : malloc(bytes);
    if (buf) memcpy(buf, a->data, (size_t)a->size * sizeof(TnAny));
  } else {
    /* realloc often grows in place */
    buf = tn__alloc_fails() ? NULL : realloc(a->data, bytes);
  }
  if (buf == NULL) return tn__raise_memory(who, bytes);
  a->data = buf;
  a->capacity = cap;
  return 0;
}

static inline int reserve(TnArrayObj *a, int64_t need, const char *who) {
  return TN_LIKELY(need <= a->capacity) ? 0 : grow(a, need, who);
}

static TnArrayObj *copy_for_write(TnObject **arr, int64_t extra,
                                  const char *who);

/* Return a tn.Array that only the caller holds, with room for `extra` more
 * items: `*arr` itself if it is unique, else a copy that replaces the
 * caller's reference. NULL (and `*arr` unchanged) on failure. */
static inline TnArrayObj *make_unique(TnObject **arr, int64_t extra,
                                      const char *who) {
  TnArrayObj *a = (TnArrayObj *)*arr;
  if (TN_LIKELY(tn__object_unique(*arr)))
    return reserve(a, a->size + extra, who) == 0 ? a : NULL;
  return copy_for_write(arr, extra, who);
}

static TnArrayObj *copy_for_write(TnObject **arr, int64_t extra,
                                  const char *who) {
  TnArrayObj *a = (TnArrayObj *)*arr;
  int64_t cap = a->size + extra;
  if (extra > 0 && cap < 2 * a->size) cap = 2 * a->size; /* amortise pushes */
  TnArrayObj *b = array_alloc(TN_TYPE_ARRAY, cap, who);
  if (b == NULL) return NULL;
  for (int64_t i = 0; i < a->size; i++) tn_any_copy(&b->data[i], &a->data[i]);
  b->size = a->size;
  tn__release(*arr);
  *arr = &b->header;
  return b;
}

static int check_cow_args(TnObject **arr, const char *who) {
  if (arr == NULL) return tn__raise_null(who, "arr");
  return tn__check_object(*arr, TN_TYPE_ARRAY, who, "*arr");
}

TN_API int tn_array_push(TnObject **arr, const TnAny *item) {
  if (check_cow_args(arr, "tn_array_push")) return -1;
  if (item == NULL) return tn__raise_null("tn_array_push", "item");
  TnAny v;
  if (tn__any_own_in(&v, item, "tn_array_push")) return -1;
  TnArrayObj *a = make_unique(arr, 1, "tn_array_push");
  if (a == NULL) {
    tn__any_clear(&v);
    return -1;
  }
  a->data[a->size++] = v;
  return 0;
}

TN_API int tn_array_set(TnObject **arr, int64_t i, const TnAny *item) {
  if (check_cow_args(arr, "tn_array_set")) return -1;
  if (item == NULL) return tn__raise_null("tn_array_set", "item");
  int64_t j = norm_index(*arr, ((TnArrayObj *)*arr)->size, i, "tn_array_set");
  if (j < 0) return -1;
  TnAny v;
  if (tn__any_own_in(&v, item, "tn_array_set")) return -1;
  TnArrayObj *a = make_unique(arr, 0, "tn_array_set");
  if (a == NULL) {
    tn__any_clear(&v);
    return -1;
  }
  TnAny old = a->data[j];
  a->data[j] = v;
  tn__any_clear(&old);
  return 0;
}

TN_API int tn_array_pop(TnObject **arr, TnAny *out) {
  if (check_cow_args(arr, "tn_array_pop")) return -1;
  if (((TnArrayObj *)*arr)->size == 0)
    return TN_RAISE(INDEX, "pop from an empty tn.Array");
  TnArrayObj *a = make_unique(arr, 0, "tn_array_pop");
  if (a == NULL) return -1;
  TnAny last = a->data[--a->size];
  if (out) *out = last;
  else tn__any_clear(&last);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* List                                                                      */
/* ------------------------------------------------------------------------ */

#define LIST_OR_FAIL(list, who)                                 \
  do {                                                          \
    if (tn__check_object(list, TN_TYPE_LIST, who, "list")) return -1; \
  } while (0)

TN_API int tn_list_append(TnObject *list, const TnAny *item) {
  LIST_OR_FAIL(list, "tn_list_append");
  if (item == NULL) return tn__raise_null("tn_list_append", "item");
  TnArrayObj *a = (TnArrayObj *)list;
  TnAny v;
  if (tn__any_own_in(&v, item, "tn_list_append")) return -1;
  if (reserve(a, a->size + 1, "tn_list_append")) {
    tn__any_clear(&v);
    return -1;
  }
  a->data[a->size++] = v;
  return 0;
}

TN_API int tn_list_set(TnObject *list, int64_t i, const TnAny *item) {
  LIST_OR_FAIL(list, "tn_list_set");
  if (item == NULL) return tn__raise_null("tn_list_set", "item");
  TnArrayObj *a = (TnArrayObj *)list;
  int64_t j = norm_index(list, a->size, i, "tn_list_set");
  if (j < 0) return -1;
  TnAny v;
  if (tn__any_own_in(&v, item, "tn_list_set")) return -1;
  TnAny old = a->data[j];
  a->data[j] = v;
  tn__any_clear(&old);
  return 0;
}

TN_API int tn_list_insert(TnObject *list, int64_t i, const TnAny *item) {
  LIST_OR_FAIL(list, "tn_list_insert");
  if (item == NULL) return tn__raise_null("tn_list_insert", "item");
  TnArrayObj *a = (TnArrayObj *)list;
  int64_t j = i < 0 ? i + a->size : i;
  if (j < 0 || j > a->size)
    return TN_RAISE(INDEX, "index %" PRId64
                    " is out of range for inserting into a tn.List of size %"
                    PRId64, i, a->size);
  TnAny v;
  if (tn__any_own_in(&v, item, "tn_list_insert")) return -1;
  if (reserve(a, a->size + 1, "tn_list_insert")) {
    tn__any_clear(&v);
    return -1;
  }
  memmove(&a->data[j + 1], &a->data[j],
          (size_t)(a->size - j) * sizeof(TnAny));
  a->data[j] = v;
  a->size++;
  return 0;
}

TN_API int tn_list_pop(TnObject *list, int64_t i, TnAny *out) {
  LIST_OR_FAIL(list, "tn_list_pop");
  TnArrayObj *a = (TnArrayObj *)list;
  if (a->size == 0)
    return TN_RAISE(INDEX, "pop from an empty tn.List");
  int64_t j = norm_index(list, a->size, i, "tn_list_pop");
  if (j < 0) return -1;
  TnAny v = a->data[j];
  memmove(&a->data[j], &a->data[j + 1],
          (size_t)(a->size - j - 1) * sizeof(TnAny));
  a->size--;
  if (out) *out = v;
  else tn__any_clear(&v);
  return 0;
}

TN_API int tn_list_clear(TnObject *list) {
  LIST_OR_FAIL(list, "tn_list_clear");
  TnArrayObj *a = (TnArrayObj *)list;
  /* Move the items out first: releasing one may run code (a finaliser in
   * another language) that looks at or appends to this very list. */
  int64_t n = a->size;
  if (n == 0) return 0;
  size_t bytes = (size_t)n * sizeof(TnAny);
  TnAny *items = tn__alloc_fails() ? NULL : malloc(bytes);
  if (items == NULL) return tn__raise_memory("tn_list_clear", bytes);
  memcpy(items, a->data, (size_t)n * sizeof(TnAny));
  a->size = 0;
  for (int64_t i = 0; i < n; i++) tn__any_clear(&items[i]);
  free(items);
  return 0;
}

TN_API int tn_list_reserve(TnObject *list, int64_t capacity) {
  LIST_OR_FAIL(list, "tn_list_reserve");
  if (capacity < 0)
    return TN_RAISE(VALUE, "capacity is negative (%" PRId64 ")", capacity);
  return reserve((TnArrayObj *)list, capacity, "tn_list_reserve");
}

/* ------------------------------------------------------------------------ */

static int compare_cstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

TnObject *tn__sorted_string_array(GPtrArray *names) {
  if (names->len > 1)
    qsort(names->pdata, names->len, sizeof(char *), compare_cstr);
  TnArrayObj *a = array_alloc(TN_TYPE_ARRAY, names->len, "list of names");
  if (a == NULL) return NULL;
  for (guint i = 0; i < names->len; i++) {
    TnAny raw = tn_any_cstr(g_ptr_array_index(names, i));
    if (tn__any_own(&a->data[i], &raw)) {
      tn__release(&a->header);
      return NULL;
    }
    a->size = i + 1;
  }
  return &a->header;
}
