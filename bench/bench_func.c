/*
 * bench_func.c: packed calls, global look-ups and the libffi bridge, with
 * the raw baselines (a direct call, a raw ffi_call with a cached cif, a raw
 * libffi closure) measured in the same program. bench/peers/tvmffi_func.cc
 * measures tvm-ffi's equivalents.
 */
#include <ffi.h>
#include <pthread.h>
#include <stdlib.h>

#include <tvmnode/tvmnode.h>

#include "bench_util.h"

static int64_t add2(int64_t a, int64_t b) { return a + b; }

/* ---- packed calls --------------------------------------------------- */

static void packed_call_add(int64_t n, void *ctx) {
  TnObject *f = ctx;
  TnAny args[2] = {tn_any_int(1), tn_any_int(2)}, ret;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    tn_func_call(f, args, 2, &ret);
    sum += ret.v_int64;
  }
  BENCH_KEEP(sum);
}

static void packed_call_nop(int64_t n, void *ctx) {
  TnObject *f = ctx;
  TnAny ret;
  for (int64_t i = 0; i < n; i++) tn_func_call(f, NULL, 0, &ret);
}

/* What a binding does: call through the public TnFunctionObj layout. */
static void packed_fnptr_add(int64_t n, void *ctx) {
  TnFunctionObj *f = ctx;
  TnAny args[2] = {tn_any_int(1), tn_any_int(2)}, ret;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    ret.type_index = TN_TYPE_NONE;
    f->fn(f->self, args, 2, &ret);
    sum += ret.v_int64;
  }
  BENCH_KEEP(sum);
}

/* ---- the registry --------------------------------------------------- */

static void global_lookup(int64_t n, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) {
    TnObject *f = tn_func_get("testing.add_i64");
    BENCH_KEEP(f);
    tn_object_release(f);
  }
}

static void *lookup_thread(void *arg) {
  global_lookup(*(int64_t *)arg, NULL);
  return NULL;
}

/* Two threads look up the same name at once; ns per look-up per thread.
 * Equal to the single-thread figure if look-ups do not serialise. */
static void global_lookup_2threads(int64_t n, void *ctx) {
  (void)ctx;
  pthread_t th;
  pthread_create(&th, NULL, lookup_thread, &n);
  global_lookup(n, NULL);
  pthread_join(th, NULL);
}

/* ---- typed -> packed ------------------------------------------------ */

static void direct_call_add(int64_t n, void *ctx) {
  int64_t (*volatile fp)(int64_t, int64_t) = ctx;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) sum += fp(i, 2);
  BENCH_KEEP(sum);
}

static ffi_cif g_cif;
static ffi_type *g_args[2] = {&ffi_type_sint64, &ffi_type_sint64};

static void raw_ffi_call_add(int64_t n, void *ctx) {
  (void)ctx;
  int64_t a = 1, b = 2, r, sum = 0;
  void *ptrs[2] = {&a, &b};
  for (int64_t i = 0; i < n; i++) {
    a = i;
    ffi_call(&g_cif, FFI_FN(add2), &r, ptrs);
    sum += r;
  }
  BENCH_KEEP(sum);
}

/* ---- packed -> typed ------------------------------------------------ */

static void raw_handler(ffi_cif *cif, void *ret, void **args, void *user) {
  (void)cif, (void)user;
  *(int64_t *)ret = *(int64_t *)args[0] + *(int64_t *)args[1];
}

static void closure_call_add(int64_t n, void *ctx) {
  int64_t (*fp)(int64_t, int64_t) = ctx;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) sum += fp(i, 2);
  BENCH_KEEP(sum);
}

int main(void) {
  int64_t live0 = tn_object_live_count();
  TnObject *add = tn_func_get("testing.add_i64");
  TnObject *nop = tn_func_get("testing.nop");
  bench_run("func", "packed_call_add", packed_call_add, add, 1);
  bench_run("func", "packed_call_nop", packed_call_nop, nop, 1);
  bench_run("func", "packed_fnptr_add", packed_fnptr_add, add, 1);
  bench_run("func", "global_lookup", global_lookup, NULL, 1);
  bench_run("func", "global_lookup_2threads", global_lookup_2threads, NULL, 1);

  bench_run("func", "direct_call_add", direct_call_add, (void *)add2, 1);
  ffi_prep_cif(&g_cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint64, g_args);
  bench_run("func", "raw_ffi_call_add", raw_ffi_call_add, NULL, 1);
  TnObject *fast = tn_func_from_c((void *)add2, "i64(i64,i64)", "add2");
  bench_run("func", "bridge_fast_add", packed_call_add, fast, 1);
  bench_run("func", "bridge_fast_fnptr_add", packed_fnptr_add, fast, 1);
  setenv("TN_FFI_NO_FAST_PATH", "1", 1);
  TnObject *slow = tn_func_from_c((void *)add2, "i64(i64,i64)", "add2");
  unsetenv("TN_FFI_NO_FAST_PATH");
  bench_run("func", "bridge_libffi_add", packed_call_add, slow, 1);

  void *code;
  ffi_closure *raw = ffi_closure_alloc(sizeof(ffi_closure), &code);
  ffi_prep_closure_loc(raw, &g_cif, raw_handler, NULL, code);
  bench_run("func", "raw_ffi_closure_add", closure_call_add, code, 1);
  void *fp;
  TnObject *handle = tn_func_to_c(add, "i64(i64,i64)", &fp);
  bench_run("func", "closure_call_add", closure_call_add, fp, 1);

  ffi_closure_free(raw);
  TnObject *all[] = {add, nop, fast, slow, handle};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    tn_object_release(all[i]);
  if (tn_object_live_count() != live0) {
    fprintf(stderr, "bench_func: %lld objects leaked\n",
            (long long)(tn_object_live_count() - live0));
    return 1;
  }
  return 0;
}
