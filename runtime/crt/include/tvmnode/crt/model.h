/*
 * tvmnode/crt/model.h: the model descriptor and the firmware API.
 *
 * Every generated model defines one constant descriptor, `tvmgen_<name>_model`
 * (a TnCrtModel), reached by symbol: what the model's inputs and outputs are
 * (names, shapes, element types, quantization), which pools it needs (sizes
 * and alignment), how much it computes and its entry point. The functions
 * below are a small generic API over any descriptor, in the style of
 * firmware inference APIs: the application owns every byte (the instance
 * struct and every pool), initialising an instance checks the pools against
 * the descriptor, and every failure is a TnCrtStatus code; nothing here
 * allocates, prints or aborts.
 *
 * The model's own C interface (tvmgen_<name>.h, with typed structs) needs
 * none of this; this API is for code that handles models generically (a
 * firmware shell, a test harness, a model switcher).
 *
 * Like all of the crt, this header needs only <stdint.h> and <stddef.h>.
 */
#ifndef TVMNODE_CRT_MODEL_H_
#define TVMNODE_CRT_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TN_CRT_MODEL_MAGIC 0x544e4d44u /* "TNMD" */
#define TN_CRT_MODEL_ABI_VERSION 1
/* An instance holds at most TN_CRT_MAX_IO inputs and as many outputs, and
 * TN_CRT_MAX_POOLS workspace pools, constant pools and devices (the generator
 * refuses a model that has more; tn_crt_instance_init returns
 * TN_CRT_INVALID_ARGUMENT for such a descriptor). */
#define TN_CRT_MAX_IO 16
#define TN_CRT_MAX_POOLS 8

/* One input or output. */
typedef struct {
  const char *name;
  int32_t dtype;        /* a TnCrtDType */
  int32_t ndim;
  const int32_t *shape; /* ndim entries */
  uint32_t nbytes;
  float scale;          /* quantization (per tensor); 0 when not quantized */
  int32_t zero_point;
  int32_t pool;         /* -1: the application binds a buffer; else the
                           workspace pool it lives in (inputs and outputs
                           placed in the pools) ... */
  uint32_t offset;      /* ... at this offset */
} TnCrtTensorInfo;

typedef struct {
  const char *name;
  uint32_t size;      /* bytes the model needs */
  uint32_t alignment; /* of the pool's base address */
} TnCrtPoolInfo;

/* The generated entry point behind a descriptor: arrays of the buffers in
 * descriptor order (entries of inputs/outputs in a pool are ignored). */
typedef int32_t (*TnCrtModelRun)(void *const *inputs, void *const *outputs,
                                 void *const *workspace_pools,
                                 void *const *constant_pools,
                                 void *const *devices);

/* The same with the model's state pool (stateful models). */
typedef int32_t (*TnCrtModelRunState)(void *const *inputs,
                                      void *const *outputs,
                                      void *const *workspace_pools,
                                      void *const *constant_pools,
                                      void *const *devices, void *state_pool);

typedef struct {
  uint32_t magic;       /* TN_CRT_MODEL_MAGIC */
  uint32_t abi_version; /* TN_CRT_MODEL_ABI_VERSION */
  const char *name;
  const char *version;  /* of the generator */
  int32_t num_inputs, num_outputs;
  const TnCrtTensorInfo *inputs, *outputs;
  int32_t num_workspace_pools;
  const TnCrtPoolInfo *workspace_pools;
  int32_t num_constant_pools; /* 0: constants are const arrays (flash) */
  const TnCrtPoolInfo *constant_pools;
  /* initial contents of each constant pool (size bytes each), copied in by
   * tn_crt_instance_init; a NULL array or entry: the application fills
   * that pool itself */
  const uint8_t *const *constant_pool_data;
  int32_t num_devices;
  const char *const *devices; /* names */
  int64_t macs;               /* multiply-accumulates per inference */
  uint32_t constant_bytes;    /* weights, biases, tables */
  TnCrtModelRun run; /* a stateful model's returns TN_CRT_NOT_BOUND: it
                        needs its state pool (TnCrtStatefulModel) */
} TnCrtModel;

/* The descriptor of a streaming model, which keeps state between runs in a
 * state pool the application owns (separate from the workspace, kept
 * across runs, given its initial values by `reset`). Its `base` carries
 * TN_CRT_MODEL_STATE_MAGIC, so the API below, given &base, knows that the
 * rest follows; tvmgen_<name>_model names `base`. */
#define TN_CRT_MODEL_STATE_MAGIC 0x544e4d53u /* "TNMS" */
typedef struct {
  TnCrtModel base;
  uint32_t state_pool_size;
  uint32_t state_pool_alignment;
  TnCrtModelRunState run_with_state;
  int32_t (*reset)(void *state_pool);
} TnCrtStatefulModel;

/* The stateful descriptor behind `model`, or NULL for a stateless one. */
static inline const TnCrtStatefulModel *tn_crt_model_state(
    const TnCrtModel *model) {
  return model && model->magic == TN_CRT_MODEL_STATE_MAGIC
             ? (const TnCrtStatefulModel *)(const void *)model
             : (const TnCrtStatefulModel *)0;
}

/* What generated code hands to an application's device hook
 * (tvmgen_<name>_<device>_compute) for an operator the model gives to an
 * external device: the operator and the crt kernel that would compute it,
 * its buffers, and `reference`, a function computing it with that kernel
 * and the model's parameters (for a device that falls back, and for
 * tests). */
typedef struct {
  const char *op;
  const char *kernel;
  int32_t num_inputs;
  const void *const *inputs;
  void *output;
  void *scratch;
  uint32_t scratch_size;
  int32_t (*reference)(const void *const *inputs, void *output,
                       void *scratch);
} TnCrtDeviceCall;

/* A node of a list of descriptors: how generated code built as a host
 * "system library" announces itself (static storage, never allocated). */
typedef struct TnCrtModelEntry {
  const TnCrtModel *model;
  struct TnCrtModelEntry *next;
} TnCrtModelEntry;

/* A memory pool the application supplies. */
typedef struct {
  void *base;
  uint32_t size;
} TnCrtPool;

/* An instance of a model over the application's memory. Treat the fields
 * as private; the struct is public only so it can live anywhere. It is
 * sealed to its own address, its descriptor and the buffers bound to it
 * (the two seals, which every call checks before it follows a pointer):
 * an instance changed behind the API's back (its model pointer swapped, a
 * pool pointer edited, half overwritten), copied to another address, or
 * never initialised is TN_CRT_MODEL_MISMATCH, not a write out of bounds.
 * Initialise each instance where it lives; do not copy one. */
typedef struct {
  const TnCrtModel *model;
  void *inputs[TN_CRT_MAX_IO];
  void *outputs[TN_CRT_MAX_IO];
  void *workspace[TN_CRT_MAX_POOLS];
  void *constants[TN_CRT_MAX_POOLS];
  void *devices[TN_CRT_MAX_POOLS];
  int32_t last_error;
  uint32_t runs;
  void *state; /* a stateful model's state pool (tn_crt_set_state) */
  uint32_t seal;       /* over this address and the pointers above */
  uint32_t model_seal; /* over what `run` trusts of the descriptor */
} TnCrtInstance;

/* A tensor of an instance: its buffer (NULL while unbound) and its info. */
typedef struct {
  void *data;
  const TnCrtTensorInfo *info;
} TnCrtTensor;

/* What an instance uses, for a report. */
typedef struct {
  const TnCrtModel *model;
  uint32_t workspace_bytes; /* sum of the model's workspace pool sizes */
  uint32_t constant_bytes;  /* in constant pools (RAM) or flash */
  uint32_t io_bytes;        /* inputs and outputs outside the pools */
  uint32_t runs;            /* successful runs so far */
  int32_t last_error;
} TnCrtReport;

/*
 * Every call below that takes an instance first checks it: NULL is
 * TN_CRT_NULL_POINTER, and an instance whose seals do not match (a
 * zeroed, failed, uninitialised, copied or edited struct) or whose model
 * pointer does not lead to a descriptor this runtime reads is
 * TN_CRT_MODEL_MISMATCH. A call that takes a mutable instance
 * records its failure code as the instance's last error; the const
 * queries (tn_crt_input/output, tn_crt_report) record nothing.
 *
 * Initialise `inst` for `model` over the application's pools, in
 * descriptor order. The instance is zeroed first. Checks: no NULL instance,
 * model, pool array or pool base (TN_CRT_NULL_POINTER), the descriptor's
 * magic, ABI version and entry point (TN_CRT_MODEL_MISMATCH), the pool
 * counts against the descriptor's and every count against the limits above
 * (TN_CRT_INVALID_ARGUMENT), each pool's size (TN_CRT_POOL_TOO_SMALL) and
 * alignment (TN_CRT_POOL_MISALIGNED), and that every in-pool input and
 * output lies inside its pool (TN_CRT_MODEL_MISMATCH otherwise). Only then
 * copies each constant pool's initial contents into it. Inputs and outputs
 * that live in a workspace pool are bound at once (pool base + offset); the
 * others, and the devices, start unbound. On failure no pool is written and
 * the instance is unusable, its last error the code.
 */
int32_t tn_crt_instance_init(TnCrtInstance *inst, const TnCrtModel *model,
                             const TnCrtPool *workspace_pools,
                             int32_t num_workspace_pools,
                             const TnCrtPool *constant_pools,
                             int32_t num_constant_pools);
/* Bind the application's buffer of `size` bytes to input / output `i`
 * (TN_CRT_INVALID_ARGUMENT for an index out of range, or an input or output
 * in a pool, which cannot be rebound; TN_CRT_NULL_POINTER for a NULL
 * buffer; TN_CRT_POOL_TOO_SMALL when smaller than the tensor;
 * TN_CRT_POOL_MISALIGNED when not aligned to the tensor's element size, as
 * generated code loads elements whole). A later bind replaces the buffer. */
int32_t tn_crt_bind_input(TnCrtInstance *inst, int32_t i, void *data,
                          uint32_t size);
int32_t tn_crt_bind_output(TnCrtInstance *inst, int32_t i, void *data,
                           uint32_t size);
/* Forget the buffer bound to input / output `i` (the instance then no
 * longer refers to the application's memory; a run is TN_CRT_NOT_BOUND
 * until another bind). TN_CRT_INVALID_ARGUMENT for an index out of range
 * or an input or output in a pool. */
int32_t tn_crt_unbind_input(TnCrtInstance *inst, int32_t i);
int32_t tn_crt_unbind_output(TnCrtInstance *inst, int32_t i);
/* Hand device `i` (an accelerator handle) to the instance
 * (TN_CRT_INVALID_ARGUMENT for an index out of range, TN_CRT_NULL_POINTER
 * for a NULL handle). Every device of the descriptor must be set before a
 * run: tn_crt_run returns TN_CRT_NOT_BOUND while one is missing. */
int32_t tn_crt_set_device(TnCrtInstance *inst, int32_t i, void *device);
/* Hand a stateful model's state pool to the instance: `size` bytes (at
 * least the descriptor's state_pool_size, TN_CRT_POOL_TOO_SMALL otherwise)
 * aligned to its state_pool_alignment (TN_CRT_POOL_MISALIGNED). The pool
 * keeps the state across runs and is not written here: call tn_crt_reset
 * before the first run (or set a pool saved from an earlier stream).
 * TN_CRT_INVALID_ARGUMENT for a model without state. tn_crt_run returns
 * TN_CRT_NOT_BOUND for a stateful model until a pool is set. */
int32_t tn_crt_set_state(TnCrtInstance *inst, void *pool, uint32_t size);
/* Give the instance's states their initial values (TN_CRT_NOT_BOUND when
 * no state pool is set; TN_CRT_OK and nothing done for a stateless
 * model). */
int32_t tn_crt_reset(TnCrtInstance *inst);
/* Input / output `i`: its buffer (NULL while unbound) and description
 * (TN_CRT_INVALID_ARGUMENT for an index out of range; `*out` is cleared
 * on failure). */
int32_t tn_crt_input(const TnCrtInstance *inst, int32_t i, TnCrtTensor *out);
int32_t tn_crt_output(const TnCrtInstance *inst, int32_t i, TnCrtTensor *out);
/* Run one inference: the descriptor's entry point with the instance's
 * buffers in descriptor order (TN_CRT_NOT_BOUND when an input, output or
 * device is missing; the entry point's own code, such as a kernel's, when
 * it fails). The code, TN_CRT_OK included, is kept as the last error; a
 * successful run counts in the report's `runs`. */
int32_t tn_crt_run(TnCrtInstance *inst);
/* The code of the last failed call on `inst`, or of the last run (TN_CRT_OK
 * if none). Also answers for an instance whose init failed (its code) and
 * for a zeroed or foreign one (TN_CRT_MODEL_MISMATCH). */
int32_t tn_crt_last_error(const TnCrtInstance *inst);
/* Fill `*out` (cleared on failure). */
int32_t tn_crt_report(const TnCrtInstance *inst, TnCrtReport *out);
/* Find input / output by name (a linear scan over the descriptor, for
 * shells and tests; generated code never looks anything up). -1 if none,
 * and for a NULL name or a NULL or foreign descriptor. */
int32_t tn_crt_input_index(const TnCrtModel *model, const char *name);
int32_t tn_crt_output_index(const TnCrtModel *model, const char *name);

/* For tn_crt_params_* (tvmnode/crt/params.h), not for applications:
 * tn_crt_instance_init that binds the constant pools as given without
 * filling them from the descriptor, and the rebinding of constant pool `k`
 * of an initialised instance (TN_CRT_INVALID_ARGUMENT for an index out of
 * range or a NULL base; the caller has checked its size and alignment). */
int32_t tn__crt_instance_init_bound(TnCrtInstance *inst,
                                    const TnCrtModel *model,
                                    const TnCrtPool *workspace_pools,
                                    int32_t num_workspace_pools,
                                    const TnCrtPool *constant_pools,
                                    int32_t num_constant_pools);
int32_t tn__crt_set_constants(TnCrtInstance *inst, int32_t k, void *base);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_MODEL_H_ */
