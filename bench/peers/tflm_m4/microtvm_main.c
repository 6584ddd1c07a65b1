/*
 * microtvm_main.c: the published microTVM + CMSIS-NN keyword-spotting
 * program (MLPerf Tiny v1.0, OctoML, NUCLEO-L4R5ZI: its generated C
 * model/codegen/host/src/default_lib*.c and the TVM crt's stack
 * allocator, from mlcommons/tiny_results_v1.0) on the emulated board,
 * measured like firmware/common/main.c, so that bench/peers/tflm_m4.py can
 * set the cycle estimate of that very program beside its published
 * latency.
 *
 * The workspace allocator is the crt's StackMemoryManager over a static
 * array of WORKSPACE_SIZE bytes (the submission's CMakeLists gives
 * 17,744), as the submission's src/tvmruntime.cpp sets it up; its logging
 * and abort paths, which a successful run never takes, are left out. The
 * input is fw_input (written by the script). Output lines as main.c's.
 */
#include <stdint.h>
#include <string.h>

#include <tvm/runtime/crt/stack_allocator.h>

#include "measure.h"
#include "semihost.h"
#include "tvmgen_default.h"

#ifndef WORKSPACE_SIZE
#define WORKSPACE_SIZE 17744
#endif
#define INPUT_SIZE 490
#define OUTPUT_SIZE 12

extern const uint8_t fw_input[INPUT_SIZE];

static uint8_t g_aot_memory[WORKSPACE_SIZE];
static tvm_workspace_t app_workspace;
static int8_t input[INPUT_SIZE] __attribute__((aligned(16)));
static int8_t output[OUTPUT_SIZE] __attribute__((aligned(16)));

void *TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint);
int TVMBackendFreeWorkspace(int device_type, int device_id, void *ptr);

void *TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  (void)device_type;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
  void *ptr = 0;
  if (StackMemoryManager_Allocate(&app_workspace, (int32_t)nbytes, &ptr) != kTvmErrorNoError)
    return 0;
  return ptr;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void *ptr) {
  (void)device_type;
  (void)device_id;
  return (int)StackMemoryManager_Free(&app_workspace, ptr);
}

static void line_status(const char *what, int32_t status) {
  fw_str(what);
  fw_str(" status ");
  fw_i64(status);
  fw_endl();
}

static int32_t infer(void) {
  struct tvmgen_default_inputs in = {.input_1 = input};
  struct tvmgen_default_outputs out = {.Identity = output};
  return tvmgen_default_run(&in, &out);
}

int main(void) {
  fw_str("model microtvm_kws");
  fw_endl();
  StackMemoryManager_Init(&app_workspace, g_aot_memory, WORKSPACE_SIZE);
  memcpy(input, fw_input, INPUT_SIZE);
  line_status("warmup", infer());

  memcpy(input, fw_input, INPUT_SIZE);
  fw_ticks_start();
  uintptr_t sp = fw_stack_pointer();
  fw_stack_paint();
  uint64_t t0 = fw_ticks();
  fw_profile_on();
  int32_t status = infer();
  fw_profile_off();
  uint64_t ticks = fw_ticks() - t0;
  uint32_t stack = fw_stack_used();
  line_status("run", status);
  fw_str("output output0 12 ");
  fw_hex(output, OUTPUT_SIZE);
  fw_endl();
  fw_str("instructions ");
  fw_u64(fw_instructions(ticks));
  fw_str(" ticks=");
  fw_u64(ticks);
  fw_endl();
  fw_str("stack ");
  fw_u64(stack);
  fw_str(" run=");
  fw_i64((int64_t)stack - (int64_t)(fw_stack_top() - sp));
  fw_str(" size=");
  fw_u64(fw_stack_size());
  fw_endl();
  fw_str("done ");
  fw_i64(status == 0 ? 0 : 1);
  fw_endl();
  return status == 0 ? 0 : 1;
}
