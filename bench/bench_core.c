/*
 * bench_core.c: core object-system costs (allocation, reference counts, Any
 * boxing, containers). bench/peers/tvmffi_core.cc measures the same
 * operations on apache-tvm-ffi; bench/run.py puts them side by side.
 */
#include <tvmnode/tvmnode.h>

#include "bench_util.h"

static const char kText36[] = "abcdefghijklmnopqrstuvwxyz0123456789";
enum { kBatch = 1000 };

static void string_alloc_free(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) {
    TnObject *s = tn_string_new(kText36, 36);
    BENCH_KEEP(s);
    tn_object_release(s);
  }
}

static void retain_release(int64_t n, void *ctx) {
  TnObject *o = ctx;
  for (int64_t i = 0; i < n; i++) {
    tn_object_retain(o);
    BENCH_KEEP(o);
    tn_object_release(o);
  }
}

static void any_box_int(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) {
    TnAny src = tn_any_int(i), dst;
    tn_any_to_owned(&dst, &src);
    BENCH_KEEP(dst.v_int64);
    tn_any_clear(&dst);
  }
}

static void any_box_object(int64_t n, void *ctx) {
  TnAny src = tn_any_obj(ctx);
  for (int64_t i = 0; i < n; i++) {
    TnAny dst;
    tn_any_to_owned(&dst, &src);
    BENCH_KEEP(dst.v_obj);
    tn_any_clear(&dst);
  }
}

static void any_box_small_str(int64_t n, void *ctx) {
  (void)ctx;
  TnAny src = tn_any_cstr("relu");
  for (int64_t i = 0; i < n; i++) {
    TnAny dst;
    tn_any_to_owned(&dst, &src);
    BENCH_KEEP(dst.v_int64);
    tn_any_clear(&dst);
  }
}

static void list_append(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t r = 0; r < n; r++) {
    TnObject *l = tn_list_new(NULL, 0);
    for (int64_t i = 0; i < kBatch; i++) {
      TnAny v = tn_any_int(i);
      tn_list_append(l, &v);
    }
    tn_object_release(l);
  }
}

static void array_push(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t r = 0; r < n; r++) {
    TnObject *a = tn_array_new(NULL, 0);
    for (int64_t i = 0; i < kBatch; i++) {
      TnAny v = tn_any_int(i);
      tn_array_push(&a, &v);
    }
    tn_object_release(a);
  }
}

static void map_insert(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t r = 0; r < n; r++) {
    TnObject *m = tn_map_new(NULL, NULL, 0);
    for (int64_t i = 0; i < kBatch; i++) {
      TnAny k = tn_any_int(i * 7919), v = tn_any_int(i);
      tn_map_set(&m, &k, &v);
    }
    tn_object_release(m);
  }
}

static void dict_insert(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t r = 0; r < n; r++) {
    TnObject *d = tn_dict_new(NULL, NULL, 0);
    for (int64_t i = 0; i < kBatch; i++) {
      TnAny k = tn_any_int(i * 7919), v = tn_any_int(i);
      tn_dict_set(d, &k, &v);
    }
    tn_object_release(d);
  }
}

static void map_lookup_int(int64_t n, void *ctx) {
  TnObject *m = ctx;
  int64_t sum = 0;
  for (int64_t r = 0; r < n; r++) {
    TnAny k = tn_any_int((r % kBatch) * 7919);
    sum += tn_map_find(m, &k)->v_int64;
  }
  BENCH_KEEP(sum);
}

typedef struct {
  TnObject *map;
  TnObject *keys[kBatch];
} StrMap;

static void map_lookup_str(int64_t n, void *ctx) {
  StrMap *sm = ctx;
  int64_t sum = 0;
  for (int64_t r = 0; r < n; r++) {
    TnAny k = tn_any_obj(sm->keys[r % kBatch]);
    sum += tn_map_find(sm->map, &k)->v_int64;
  }
  BENCH_KEEP(sum);
}

int main(void) {
  int64_t live0 = tn_object_live_count();
  bench_run("core", "string_alloc_free_36B", string_alloc_free, NULL, 1);
  TnObject *obj = tn_string_from_cstr("x");
  bench_run("core", "retain_release", retain_release, obj, 1);
  bench_run("core", "any_box_int", any_box_int, NULL, 1);
  bench_run("core", "any_box_small_str", any_box_small_str, NULL, 1);
  bench_run("core", "any_box_object", any_box_object, obj, 1);
  tn_object_release(obj);
  bench_run("core", "list_append_int", list_append, NULL, kBatch);
  bench_run("core", "array_push_int", array_push, NULL, kBatch);
  bench_run("core", "map_insert_int", map_insert, NULL, kBatch);
  bench_run("core", "dict_insert_int", dict_insert, NULL, kBatch);

  TnObject *m = tn_map_new(NULL, NULL, 0);
  StrMap sm;
  sm.map = tn_map_new(NULL, NULL, 0);
  for (int64_t i = 0; i < kBatch; i++) {
    TnAny k = tn_any_int(i * 7919), v = tn_any_int(i);
    tn_map_set(&m, &k, &v);
    char buf[32];
    snprintf(buf, sizeof buf, "key_number_%lld", (long long)i);
    sm.keys[i] = tn_string_from_cstr(buf);
    TnAny ks = tn_any_obj(sm.keys[i]);
    tn_map_set(&sm.map, &ks, &v);
  }
  bench_run("core", "map_lookup_int", map_lookup_int, m, 1);
  bench_run("core", "map_lookup_str", map_lookup_str, &sm, 1);
  tn_object_release(m);
  tn_object_release(sm.map);
  for (int64_t i = 0; i < kBatch; i++) tn_object_release(sm.keys[i]);
  if (tn_object_live_count() != live0) {
    fprintf(stderr, "bench_core: %lld objects leaked\n",
            (long long)(tn_object_live_count() - live0));
    return 1;
  }
  return 0;
}
