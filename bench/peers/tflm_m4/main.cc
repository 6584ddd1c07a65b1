/*
 * main.cc: one TFLite Micro model on the bare-metal board, measured the way
 * firmware/common/main.c measures a tvmnode model.
 *
 * bench/peers/tflm_m4.py writes tflm_config.h (the model's operators as an
 * X-macro list of MicroMutableOpResolver's Add* methods, each with its
 * parenthesised arguments: () for the default registration, or an int8-only
 * one; their count and the arena's size), tflm_model.cc (the .tflite flatbuffer as a constant
 * array, in flash) and tflm_input.cc (the input bytes), and compiles this
 * file with firmware/common's startup.c, semihost.c and measure.c.
 *
 * The resolver and the interpreter live in static storage (placement new,
 * so no constructor runs before main and nothing is allocated); the tensor
 * arena is a static array of TFLM_ARENA_SIZE bytes. The model runs once to
 * warm up and once timed, between fw_profile_on and fw_profile_off, with
 * the stack painted before it. Built with TFLM_ARENA_SEARCH=1 it first
 * finds the smallest arena that AllocateTensors accepts and prints it
 * (`arena_min`). Output, one fact a line (main.c's lines, plus the arena):
 *
 *   model kws
 *   allocate status 0
 *   arena used=21632 size=21632
 *   warmup status 0
 *   run status 0
 *   output output0 12 <hex bytes>
 *   instructions 123440 ticks=3086 (...)
 *   stack 1880 run=1320 size=65536 (...)
 *   done 0
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <new>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"
#include "tflm_config.h"

extern "C" {
#include "measure.h"
#include "semihost.h"
}

extern const unsigned char tflm_model[];
extern const unsigned char tflm_input[];
extern const size_t tflm_input_size;

/* Nothing is ever deleted: the deleting destructors of TFLM's classes only
 * need these to link (no allocator is linked; run.py checks). */
void operator delete(void *) noexcept {}
void operator delete(void *, size_t) noexcept {}
extern "C" void __cxa_pure_virtual(void) { fw_exit(4); }

namespace {

using Resolver = tflite::MicroMutableOpResolver<TFLM_NUM_OPS>;

alignas(16) uint8_t arena[TFLM_ARENA_SIZE];
alignas(Resolver) uint8_t resolver_storage[sizeof(Resolver)];
alignas(tflite::MicroInterpreter) uint8_t interpreter_storage[sizeof(tflite::MicroInterpreter)];

void line_status(const char *what, int status) {
  fw_str(what);
  fw_str(" status ");
  fw_i64(status);
  fw_endl();
}

int load_input(tflite::MicroInterpreter *interp) {
  TfLiteTensor *in = interp->input(0);
  if (in == nullptr || in->bytes != tflm_input_size) return 1;
  memcpy(in->data.raw, tflm_input, tflm_input_size);
  return 0;
}

}  // namespace

int main(void) {
  fw_str("model " TFLM_MODEL_NAME);
  fw_endl();
  Resolver *resolver = new (resolver_storage) Resolver();
#define TFLM_ADD_OP(method, registration)       \
  if (resolver->method registration != kTfLiteOk) { \
    line_status("resolver " #method, 1);            \
    return 1;                                       \
  }
  TFLM_OPS(TFLM_ADD_OP)

  const tflite::Model *model = tflite::GetModel(tflm_model);
#if TFLM_ARENA_SEARCH
  /* The smallest arena AllocateTensors accepts, by bisection (it can need
   * more than arena_used_bytes() while it plans); nothing is freed, so
   * each try builds a new interpreter in the same storage. */
  size_t lo = 0, hi = sizeof arena;
  while (hi - lo > 16) {
    size_t mid = (lo + hi) / 2 / 16 * 16;
    tflite::MicroInterpreter *probe = new (interpreter_storage)
        tflite::MicroInterpreter(model, *resolver, arena, mid);
    if (probe->AllocateTensors() == kTfLiteOk) hi = mid; else lo = mid;
  }
  fw_str("arena_min ");
  fw_u64(hi);
  fw_endl();
#endif
  tflite::MicroInterpreter *interp = new (interpreter_storage)
      tflite::MicroInterpreter(model, *resolver, arena, sizeof arena);
  int status = interp->AllocateTensors();
  line_status("allocate", status);
  if (status != kTfLiteOk) return 1;
  fw_str("arena used=");
  fw_u64(interp->arena_used_bytes());
  fw_str(" size=");
  fw_u64(sizeof arena);
  fw_endl();
  if (load_input(interp) != 0) {
    line_status("input", 1);
    return 1;
  }

  status = interp->Invoke();
  line_status("warmup", status);

  load_input(interp);
  fw_ticks_start();
  uintptr_t sp = fw_stack_pointer();
  fw_stack_paint();
  uint64_t t0 = fw_ticks();
  fw_profile_on();
  status = interp->Invoke();
  fw_profile_off();
  uint64_t ticks = fw_ticks() - t0;
  uint32_t stack = fw_stack_used();
  line_status("run", status);

  for (size_t k = 0; k < interp->outputs_size(); k++) {
    TfLiteTensor *out = interp->output(k);
    fw_str("output output");
    fw_u64(k);
    fw_str(" ");
    fw_u64(out->bytes);
    fw_str(" ");
    fw_hex(out->data.raw, out->bytes);
    fw_endl();
  }
  fw_str("instructions ");
  fw_u64(fw_instructions(ticks));
  fw_str(" ticks=");
  fw_u64(ticks);
  fw_str(" (SysTick ticks x ");
  fw_u64(FW_INSTRUCTIONS_PER_TICK);
  fw_str(" under -icount shift=0, +-1 tick)");
  fw_endl();
  fw_str("stack ");
  fw_u64(stack);
  fw_str(" run=");
  fw_i64((int64_t)stack - (int64_t)(fw_stack_top() - sp));
  fw_str(" size=");
  fw_u64(fw_stack_size());
  fw_str(" (bytes, high-water mark of the painted stack)");
  fw_endl();
  int code = status == kTfLiteOk ? 0 : 1;
  fw_str("done ");
  fw_i64(code);
  fw_endl();
  return code;
}
