// tvmffi_core.cc: the operations of bench/bench_core.c, measured on
// apache-tvm-ffi (installed from PyPI) with the same harness, so that
// bench/run.py can report the two side by side from one run.
#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
// List and Dict arrived after tvm-ffi 0.1.0.
#if __has_include(<tvm/ffi/container/list.h>)
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#define HAVE_LIST_DICT 1
#endif
#include <tvm/ffi/string.h>

#include <string>
#include <vector>

extern "C" {
#include "../bench_util.h"
}

using namespace tvm::ffi;

static const char kText36[] = "abcdefghijklmnopqrstuvwxyz0123456789";
static const int64_t kBatch = 1000;

static void string_alloc_free(int64_t n, void*) {
  for (int64_t i = 0; i < n; i++) {
    String s(kText36, 36);
    BENCH_KEEP(s.data());
  }
}

static void retain_release(int64_t n, void* ctx) {
  TVMFFIObjectHandle h = ctx;
  for (int64_t i = 0; i < n; i++) {
    TVMFFIObjectIncRef(h);
    BENCH_KEEP(h);
    TVMFFIObjectDecRef(h);
  }
}

static void any_box_int(int64_t n, void*) {
  for (int64_t i = 0; i < n; i++) {
    Any a(i);
    BENCH_KEEP(&a);
  }
}

static void any_box_small_str(int64_t n, void*) {
  for (int64_t i = 0; i < n; i++) {
    Any a(String("relu"));
    BENCH_KEEP(&a);
  }
}

static void any_box_object(int64_t n, void* ctx) {
  const ObjectRef& o = *static_cast<ObjectRef*>(ctx);
  for (int64_t i = 0; i < n; i++) {
    Any a(o);
    BENCH_KEEP(&a);
  }
}

#ifdef HAVE_LIST_DICT
static void list_append(int64_t n, void*) {
  for (int64_t r = 0; r < n; r++) {
    List<int64_t> l;
    for (int64_t i = 0; i < kBatch; i++) l.push_back(i);
    BENCH_KEEP(l.get());
  }
}

#endif

static void array_push(int64_t n, void*) {
  for (int64_t r = 0; r < n; r++) {
    Array<int64_t> a;
    for (int64_t i = 0; i < kBatch; i++) a.push_back(i);
    BENCH_KEEP(a.get());
  }
}

static void map_insert(int64_t n, void*) {
  for (int64_t r = 0; r < n; r++) {
    Map<int64_t, int64_t> m;
    for (int64_t i = 0; i < kBatch; i++) m.Set(i * 7919, i);
    BENCH_KEEP(m.get());
  }
}

#ifdef HAVE_LIST_DICT
static void dict_insert(int64_t n, void*) {
  for (int64_t r = 0; r < n; r++) {
    Dict<int64_t, int64_t> d;
    for (int64_t i = 0; i < kBatch; i++) d.Set(i * 7919, i);
    BENCH_KEEP(d.get());
  }
}

#endif

static void map_lookup_int(int64_t n, void* ctx) {
  const auto& m = *static_cast<Map<int64_t, int64_t>*>(ctx);
  int64_t sum = 0;
  for (int64_t r = 0; r < n; r++) sum += m.at((r % kBatch) * 7919);
  BENCH_KEEP(sum);
}

struct StrMap {
  Map<String, int64_t> map;
  std::vector<String> keys;
};

static void map_lookup_str(int64_t n, void* ctx) {
  auto* sm = static_cast<StrMap*>(ctx);
  int64_t sum = 0;
  for (int64_t r = 0; r < n; r++) sum += sm->map.at(sm->keys[r % kBatch]);
  BENCH_KEEP(sum);
}

int main() {
  bench_run("core", "string_alloc_free_36B", string_alloc_free, nullptr, 1);
  Array<int64_t> obj{1, 2, 3};
  ObjectRef ref = obj;
  bench_run("core", "retain_release", retain_release,
            const_cast<Object*>(ref.get()), 1);
  bench_run("core", "any_box_int", any_box_int, nullptr, 1);
  bench_run("core", "any_box_small_str", any_box_small_str, nullptr, 1);
  bench_run("core", "any_box_object", any_box_object, &ref, 1);
#ifdef HAVE_LIST_DICT
  bench_run("core", "list_append_int", list_append, nullptr, kBatch);
#endif
  bench_run("core", "array_push_int", array_push, nullptr, kBatch);
  bench_run("core", "map_insert_int", map_insert, nullptr, kBatch);
#ifdef HAVE_LIST_DICT
  bench_run("core", "dict_insert_int", dict_insert, nullptr, kBatch);
#endif
  Map<int64_t, int64_t> m;
  StrMap sm;
  for (int64_t i = 0; i < kBatch; i++) {
    m.Set(i * 7919, i);
    String k("key_number_" + std::to_string(i));
    sm.keys.push_back(k);
    sm.map.Set(k, i);
  }
  bench_run("core", "map_lookup_int", map_lookup_int, &m, 1);
  bench_run("core", "map_lookup_str", map_lookup_str, &sm, 1);
  return 0;
}
