// tvmffi_func.cc: the packed-call and registry operations of
// bench/bench_func.c, measured on apache-tvm-ffi with the same harness.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/function.h>

#include <pthread.h>

extern "C" {
#include "../bench_util.h"
}

using namespace tvm::ffi;

static void packed_call_add(int64_t n, void* ctx) {
  TVMFFIObjectHandle f = ctx;
  TVMFFIAny args[2], ret;
  for (int k = 0; k < 2; k++) {
    args[k].type_index = kTVMFFIInt;
    args[k].zero_padding = 0;
    args[k].v_int64 = k + 1;
  }
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    args[0].v_int64 = i;
    ret.type_index = kTVMFFINone;
    ret.zero_padding = 0;
    ret.v_int64 = 0;
    TVMFFIFunctionCall(f, args, 2, &ret);
    sum += ret.v_int64;
  }
  BENCH_KEEP(sum);
}

static void packed_call_nop(int64_t n, void* ctx) {
  TVMFFIObjectHandle f = ctx;
  TVMFFIAny ret;
  for (int64_t i = 0; i < n; i++) {
    ret.type_index = kTVMFFINone;
    ret.zero_padding = 0;
    ret.v_int64 = 0;
    TVMFFIFunctionCall(f, nullptr, 0, &ret);
  }
}

static void cxx_typed_call_add(int64_t n, void* ctx) {
  const Function& f = *static_cast<Function*>(ctx);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) sum += f(i, 2).cast<int64_t>();
  BENCH_KEEP(sum);
}

static void global_lookup(int64_t n, void*) {
  for (int64_t i = 0; i < n; i++) {
    std::optional<Function> f = Function::GetGlobal("bench.add_i64");
    BENCH_KEEP(f->get());
  }
}

static void* lookup_thread(void* arg) {
  global_lookup(*static_cast<int64_t*>(arg), nullptr);
  return nullptr;
}

static void global_lookup_2threads(int64_t n, void*) {
  pthread_t th;
  pthread_create(&th, nullptr, lookup_thread, &n);
  global_lookup(n, nullptr);
  pthread_join(th, nullptr);
}

int main() {
  Function::SetGlobal("bench.add_i64",
                      Function::FromTyped([](int64_t a, int64_t b) { return a + b; }));
  Function::SetGlobal("bench.nop", Function::FromTyped([]() {}));
  Function add = *Function::GetGlobal("bench.add_i64");
  Function nop = *Function::GetGlobal("bench.nop");
  bench_run("func", "packed_call_add", packed_call_add, const_cast<void*>(static_cast<const void*>(add.get())), 1);
  bench_run("func", "packed_call_nop", packed_call_nop, const_cast<void*>(static_cast<const void*>(nop.get())), 1);
  bench_run("func", "cxx_typed_call_add", cxx_typed_call_add, &add, 1);
  bench_run("func", "global_lookup", global_lookup, nullptr, 1);
  bench_run("func", "global_lookup_2threads", global_lookup_2threads, nullptr, 1);
  return 0;
}
