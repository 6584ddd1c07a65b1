/*
 * main.c: runs one compiled model on the board, through its generated C
 * interface, and prints what happened.
 *
 * Everything model-specific comes from fw_model.h, which run.py writes
 * into its build folder: it includes tvmgen_<name>.h and names the run
 * function, the structs, and X-macro lists of the inputs, outputs and pools
 * with the header's size macros. The buffers are static arrays of those
 * sizes, aligned as the header's TVMGEN_<NAME>_ALIGNMENT asks; the input
 * bytes are a constant array (fw_input.c, also written by run.py) copied
 * in before each run. For an io_in_pool model (FW_IO_IN_POOL) there are no
 * input or output buffers: the inputs are copied to, and the outputs read
 * from, the places in the first pool that tvmgen_<name>_map_inputs/outputs
 * give, and the run takes the pools only.
 * The model runs once to warm up and once timed. Output, one fact a line:
 *
 *   model kws
 *   warmup status 0
 *   run status 0
 *   output identity 12 <hex bytes>
 *   instructions 123440 ticks=3086 (SysTick ticks x 40 under -icount shift=0, +-1 tick)
 *   stack 1880 run=1320 size=65536 (bytes, high-water mark of the painted stack)
 *   done 0
 *
 * Built with FW_BAD_CALLS=1 it first makes the calls an application gets
 * wrong (a NULL input buffer, a NULL input struct, but for io_in_pool,
 * whose run takes neither; a misaligned pool; and
 * through the firmware API, tvmnode/crt/model.h, a pool too small and a
 * descriptor that is not one this runtime reads) and prints
 * `bad <what> status <got> expected <code>`: the generated code and the
 * crt must return their error codes on the device, not fault. Exit code: 0 when
 * every status is as it should be, 1 when the run failed, 2 when a bad call
 * returned the wrong code (3 is a fault, from startup.c).
 */
#include <string.h>

#include "fw_model.h"
#include "measure.h"
#include "semihost.h"

#define FW_ALIGNED __attribute__((aligned(FW_ALIGNMENT)))

#if FW_IO_IN_POOL
/* The inputs and outputs live in the first workspace pool, at the offsets
 * the generated tvmgen_<name>_map_inputs/outputs give: no buffers here. */
#define DECLARE_INPUT(name, size) extern const uint8_t fw_input_##name[size];
FW_INPUTS(DECLARE_INPUT)
#else
#define DECLARE_INPUT(name, size)                  \
  extern const uint8_t fw_input_##name[size];      \
  static uint8_t in_##name[size] FW_ALIGNED;
FW_INPUTS(DECLARE_INPUT)
#define DECLARE_OUTPUT(name, size) static uint8_t out_##name[size] FW_ALIGNED;
FW_OUTPUTS(DECLARE_OUTPUT)
#endif

static FW_INPUTS_STRUCT inputs;
static FW_OUTPUTS_STRUCT outputs;

#if FW_HAS_POOLS
/* The section the pools belong in (--workspace-section), if any. */
#ifndef FW_POOL_SECTION
#define FW_POOL_SECTION
#endif
/* FW_ALIGNMENT spare bytes: room for a misaligned base in the bad calls. */
#define DECLARE_POOL(name, size) \
  static uint8_t pool_##name[(size) + FW_ALIGNMENT] FW_ALIGNED FW_POOL_SECTION;
FW_POOLS(DECLARE_POOL)
static FW_POOLS_STRUCT pools;
#define POOLS_ARG , &pools
#else
#define POOLS_ARG
#endif

#if FW_HAS_CONSTANT_POOL
static uint8_t constant_pool[FW_CONSTANT_POOL_SIZE] FW_ALIGNED;
static FW_CONSTANT_POOLS_STRUCT constant_pools;
#define CONSTANT_POOLS_ARG , &constant_pools
#else
#define CONSTANT_POOLS_ARG
#endif

static void bind(void) {
#if FW_HAS_POOLS
#define BIND_POOL(name, size) pools.name = pool_##name;
  FW_POOLS(BIND_POOL)
#endif
#if FW_IO_IN_POOL
  inputs = FW_MAP_INPUTS(&pools);
  outputs = FW_MAP_OUTPUTS(&pools);
#else
#define BIND_INPUT(name, size) inputs.name = in_##name;
  FW_INPUTS(BIND_INPUT)
#define BIND_OUTPUT(name, size) outputs.name = out_##name;
  FW_OUTPUTS(BIND_OUTPUT)
#endif
#if FW_HAS_CONSTANT_POOL
  memcpy(constant_pool, FW_CONSTANT_POOL_DATA, sizeof constant_pool);
  constant_pools.constants = constant_pool;
#endif
}

/* Each input is written where the run reads it: its own buffer, or its
 * place in the pool (which the previous run used as scratch). */
static void load_inputs(void) {
#define LOAD_INPUT(name, size) memcpy((void *)inputs.name, fw_input_##name, size);
  FW_INPUTS(LOAD_INPUT)
}

#if FW_IO_IN_POOL
/* The run takes the pools only; `in` is unused (kept for one call shape). */
static int32_t run_model(FW_INPUTS_STRUCT *in) {
  (void)in;
  return FW_RUN(&pools CONSTANT_POOLS_ARG);
}
#else
static int32_t run_model(FW_INPUTS_STRUCT *in) {
  return FW_RUN(in, &outputs POOLS_ARG CONSTANT_POOLS_ARG);
}
#endif

static void line_status(const char *what, int32_t status) {
  fw_str(what);
  fw_str(" status ");
  fw_i64(status);
  fw_endl();
}

#if FW_BAD_CALLS
/* One call made wrong on purpose; true when it returned `expected`. */
static int bad_call(const char *what, int32_t got, int32_t expected) {
  fw_str("bad ");
  fw_str(what);
  fw_str(" status ");
  fw_i64(got);
  fw_str(" expected ");
  fw_i64(expected);
  fw_endl();
  return got == expected;
}

static int bad_calls(void) {
  int ok = 1;
#if defined(FW_FIRST_INPUT) && !FW_IO_IN_POOL
  void *input = inputs.FW_FIRST_INPUT;
  inputs.FW_FIRST_INPUT = 0;
  ok &= bad_call("null_input", run_model(&inputs),
                 TN_CRT_NULL_POINTER);
  inputs.FW_FIRST_INPUT = input;
#endif
#if !FW_IO_IN_POOL
  ok &= bad_call("null_inputs_struct", run_model(0),
                 TN_CRT_NULL_POINTER);
#endif
#if defined(FW_FIRST_POOL) && FW_ALIGNMENT > 1
  void *pool = pools.FW_FIRST_POOL;
  pools.FW_FIRST_POOL = (uint8_t *)pool + 1;
  ok &= bad_call("misaligned_pool", run_model(&inputs),
                 TN_CRT_POOL_MISALIGNED);
  pools.FW_FIRST_POOL = pool;
#endif
#if FW_HAS_POOLS && !FW_HAS_CONSTANT_POOL
  /* the generic API: the same pools, the first one a byte short ... */
  static TnCrtInstance inst;
  TnCrtPool given[] = {
#define GIVE_POOL(name, size) {pool_##name, size},
      FW_POOLS(GIVE_POOL)};
  const int32_t n_given = (int32_t)(sizeof given / sizeof given[0]);
  given[0].size -= 1;
  ok &= bad_call("pool_too_small",
                 tn_crt_instance_init(&inst, &FW_MODEL, given, n_given, 0, 0),
                 TN_CRT_POOL_TOO_SMALL);
  given[0].size += 1;
  /* ... and a descriptor of another ABI version (or not a descriptor) */
  TnCrtModel other = FW_MODEL;
  other.abi_version += 1;
  ok &= bad_call("foreign_descriptor",
                 tn_crt_instance_init(&inst, &other, given, n_given, 0, 0),
                 TN_CRT_MODEL_MISMATCH);
  /* instances changed behind the API's back: each run is refused before
   * it follows a pointer. Never initialised (stack garbage's stand-in) */
  static TnCrtInstance bad;
  for (size_t k = 0; k < sizeof bad; k++)
    ((uint8_t *)&bad)[k] = (uint8_t)(0xa5u + 37u * k);
  ok &= bad_call("garbage_instance", tn_crt_run(&bad), TN_CRT_MODEL_MISMATCH);
  /* a good instance, its descriptor swapped for one with larger pools */
  ok &= bad_call("good_instance",
                 tn_crt_instance_init(&inst, &FW_MODEL, given, n_given, 0, 0),
                 TN_CRT_OK);
  static TnCrtModel bigger;
  static TnCrtPoolInfo bigger_pools[TN_CRT_MAX_POOLS];
  bigger = FW_MODEL;
  for (int32_t k = 0; k < bigger.num_workspace_pools; k++) {
    bigger_pools[k] = FW_MODEL.workspace_pools[k];
    bigger_pools[k].size *= 2;
  }
  bigger.workspace_pools = bigger_pools;
  inst.model = &bigger;
  ok &= bad_call("swapped_descriptor", tn_crt_run(&inst),
                 TN_CRT_MODEL_MISMATCH);
  inst.model = &FW_MODEL;
  /* a copy at another address, and half of the garbage over the original */
  memcpy(&bad, &inst, sizeof bad);
  ok &= bad_call("copied_instance", tn_crt_run(&bad), TN_CRT_MODEL_MISMATCH);
  for (size_t k = sizeof inst / 2; k < sizeof inst; k++)
    ((uint8_t *)&inst)[k] = (uint8_t)(0x5au + 11u * k);
  ok &= bad_call("torn_instance", tn_crt_run(&inst), TN_CRT_MODEL_MISMATCH);
#endif
  return ok;
}
#endif

static void print_output(const char *name, const uint8_t *bytes, size_t n) {
  fw_str("output ");
  fw_str(name);
  fw_str(" ");
  fw_u64(n);
  fw_str(" ");
  fw_hex(bytes, n);
  fw_endl();
}

int main(void) {
  int code = 0;
  fw_str("model " FW_MODEL_NAME);
  fw_endl();
  bind();
#if FW_BAD_CALLS
  if (!bad_calls()) code = 2;
#endif

  load_inputs();
  int32_t status = run_model(&inputs);
  line_status("warmup", status);

  load_inputs();
  fw_ticks_start();
  uintptr_t sp = fw_stack_pointer();
  fw_stack_paint();
  uint64_t t0 = fw_ticks();
  fw_profile_on();
  status = run_model(&inputs);
  fw_profile_off();
  uint64_t ticks = fw_ticks() - t0;
  uint32_t stack = fw_stack_used();
  line_status("run", status);
  if (status != 0 && code == 0) code = 1;

#define PRINT_OUTPUT(name, size) \
  print_output(#name, (const uint8_t *)outputs.name, size);
  FW_OUTPUTS(PRINT_OUTPUT)
  fw_str("instructions ");
  fw_u64(fw_instructions(ticks));
  fw_str(" ticks=");
  fw_u64(ticks);
  fw_str(" (SysTick ticks x ");
  fw_u64(FW_INSTRUCTIONS_PER_TICK);
  if (FW_INSTRUCTIONS_PER_TICK_DEN != 1u) {
    fw_str("/");
    fw_u64(FW_INSTRUCTIONS_PER_TICK_DEN);
  }
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
  fw_str("done ");
  fw_i64(code);
  fw_endl();
  return code;
}
