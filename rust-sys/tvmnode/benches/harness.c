/*
 * harness.c: the C side of the Rust call benchmarks. The loops here are the
 * same calls a C program makes, compiled at -O2 and loaded into the bench
 * process, so both languages are timed by one harness in one run.
 */
#include <stdint.h>

#include <tvmnode/tvmnode.h>

#define KEEP(x) __asm__ __volatile__("" : : "g"(x) : "memory")

/* n packed calls f(i, 2) through tn_func_call, as bench_func.c does. */
void harness_call_loop(TnObject *f, int64_t n) {
  TnAny args[2] = {tn_any_int(1), tn_any_int(2)}, ret;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    ret = tn_any_none();
    tn_func_call(f, args, 2, &ret);
    sum += ret.v_int64;
  }
  KEEP(sum);
}

/* The same through the public TnFunctionObj layout (what bindings do). */
void harness_fnptr_loop(TnObject *obj, int64_t n) {
  TnFunctionObj *f = (TnFunctionObj *)obj;
  TnAny args[2] = {tn_any_int(1), tn_any_int(2)}, ret;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    ret.type_index = TN_TYPE_NONE;
    f->fn(f->self, args, 2, &ret);
    sum += ret.v_int64;
  }
  KEEP(sum);
}
