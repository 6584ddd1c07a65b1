/*
 * tvmnode/module.h: compiled models as runtime objects (tn.Module).
 *
 * A Module is one instance of a model compiled ahead of time (docs/mlf.md):
 * its descriptor (tvmnode/crt/model.h), the workspace and constant pools it
 * runs in (allocated once per Module, or supplied by the caller) and the
 * input and output buffers. It is found either in a shared library built
 * from a Model Library Format archive (`tvmnode build out/ -o model.so`,
 * which exports the list `tvmnode_module_models`) and opened with dlopen,
 * or in the "system library": archives compiled with -DTVMGEN_SYSTEM_LIB
 * and linked into the program register their descriptor at start-up
 * (tn_module_register_system: a static list node, no allocation, no
 * constructor order to respect) and are found by model name.
 *
 * No compiler is needed: a Module runs the generated C only. Several
 * Modules of several models may run at once from several threads; one
 * Module is used by one thread at a time, and a second thread calling
 * set_input/run/get_output while a call is under way gets a RuntimeError,
 * never a race. A Module keeps its library loaded, and every output tensor
 * keeps its Module alive, so a library is unloaded only when nothing of it
 * is referenced any more.
 *
 * Errors are raised in the library's usual way (tn_error_*) and name the
 * function, the model, the input and what was expected: TypeError for a
 * wrong dtype, ValueError for a wrong shape or size (or a malformed
 * descriptor), KeyError for an unknown name, IndexError for an index out
 * of range, OSError for a library that cannot be opened or holds no model,
 * RuntimeError for a failed run (with the crt status name), an input or
 * device never set, or a Module in use by another thread.
 *
 * Every language reaches Modules through the registry:
 *
 *   "runtime.ModuleLoad"(path[, name]) / "runtime.ModuleSystem"(name) -> mod
 *   "runtime.ModuleDescribe"(mod) -> tn.Map (see tn_module_describe)
 *   "runtime.ModuleSetInput"(mod, index or name, tensor or bytes)
 *   "runtime.ModuleRun"(mod); "runtime.ModuleGetOutput"(mod, i) -> tensor
 *   "runtime.ModuleReset"(mod)   (a streaming model's states to their
 *       initial values)
 *   "runtime.ModuleInvoke"(mod, tensor...) -> tn.Array of output tensors
 *       (sets the first inputs, runs, returns every output: one call)
 *   "runtime.ModuleTime"(mod, number, repeat) -> tn.Array of ms per run
 *   "runtime.ModuleSetWorkspace"(mod, pool, tensor or None)
 *   "runtime.ModuleThreads"(mod[, n]) -> [threads, calls the last run ran
 *       in parts] (sets the threads when n is given; see below)
 *
 * Streaming models (tvmgen_<name>_reset; TnCrtStatefulModel) keep their
 * state in a state pool the Module owns: it is given its initial values
 * when the Module is made, each run reads and updates it, and
 * tn_module_reset gives it its initial values again. Every run, timing
 * runs included, advances the state.
 *
 * Inputs and outputs placed in a pool (io_in_pool archives): the plan may
 * reuse an input's place for later values once the input is read, so such
 * an input holds what the last run left there afterwards; set it again
 * before each run.
 */
#ifndef TVMNODE_MODULE_H_
#define TVMNODE_MODULE_H_

#include "tvmnode/tvmnode.h"
#include "tvmnode/crt/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called by generated code built with -DTVMGEN_SYSTEM_LIB, before main.
 * `entry` is static storage of the caller; registering one twice is a
 * no-op. Safe before any other call into the library. */
TN_API void tn_module_register_system(TnCrtModelEntry *entry);

/* A Module of the system library's model `name`; KeyError naming the
 * models there when there is none. (transfer full) */
TN_API TnObject *tn_module_system(const char *name);

/* A Module of model `name` in the shared library at `path` (`name` may be
 * NULL when the library holds exactly one model). The library stays
 * loaded while any Module or output tensor of it lives. A path without a
 * slash is a file in the current folder, never a library found on the
 * system's search path. (transfer full) */
TN_API TnObject *tn_module_load(const char *path, const char *name);

/* A Module over a descriptor the caller keeps alive (a model linked into
 * the program directly). (transfer full) */
TN_API TnObject *tn_module_from_model(const TnCrtModel *model);

/* The descriptor (valid while the Module lives). */
TN_API const TnCrtModel *tn_module_model(const TnObject *mod);

/* Inputs and outputs: counts, descriptions, look-up by name (-1 with a
 * KeyError naming the model's inputs when there is none). */
TN_API int32_t tn_module_num_inputs(const TnObject *mod);
TN_API int32_t tn_module_num_outputs(const TnObject *mod);
TN_API const TnCrtTensorInfo *tn_module_input_info(const TnObject *mod,
                                                   int32_t i);
TN_API const TnCrtTensorInfo *tn_module_output_info(const TnObject *mod,
                                                    int32_t i);
TN_API int32_t tn_module_input_index(const TnObject *mod, const char *name);
/* The DLPack dtype of a TnCrtDType (a TnCrtTensorInfo's `dtype`): 1, or 0
 * for a value that is none. */
TN_API int tn_module_dtype(int32_t crt_dtype, DLDataType *out);

/* The model's description as a tn.Map: "name", "version", "inputs" and
 * "outputs" (arrays of {name, shape, dtype, scale, zero_point}), "devices"
 * (names), "macs", "workspace_bytes", "constant_bytes", "workspace_pools",
 * "state_bytes" (the state pool of a streaming model, 0 for one without
 * state). (transfer full) */
TN_API TnObject *tn_module_describe(const TnObject *mod);

/*
 * Set input `i` from a tn.Tensor (checked: CPU, compact, the input's dtype
 * and shape). Zero copy when the tensor's data is aligned for its element
 * type, the input does not live in a pool and the data does not overlap
 * the Module's outputs or pools: the Module then reads the tensor's memory
 * at run() and keeps the tensor alive until the input is set again;
 * otherwise the data is copied once into the input's home (the Module's
 * buffer, or its place in the pool).
 */
TN_API int tn_module_set_input(TnObject *mod, int32_t i, TnObject *tensor);
/* Set input `i` from raw bytes (copied; `nbytes` must be the input's
 * size): what the Go and Rust bindings use for typed slices. */
TN_API int tn_module_set_input_bytes(TnObject *mod, int32_t i,
                                     const void *data, size_t nbytes);
/* One inference; RuntimeError naming the crt status on failure, or the
 * input or device that was never set. */
TN_API int tn_module_run(TnObject *mod);
/* Give a streaming model's states their initial values again, as when the
 * Module was made (nothing to do, and 0, for a model without state). */
TN_API int tn_module_reset(TnObject *mod);
/*
 * Set the first `n` inputs from caller memory and run once, under one
 * claim of the Module: what a binding's run(inputs) uses, for one crossing
 * per inference. data[i] holds nbytes[i] bytes, the input's size, of its
 * dtype (unchecked: the caller knows it). An input is read in place during
 * the call when its memory is aligned for its dtype, the input does not
 * live in a pool and the memory does not overlap what the run writes, and
 * copied into its home otherwise (as tn_module_set_input_bytes does). An
 * input read in place is unset again when the call returns: the Module
 * keeps no pointer into the caller's memory, so a later run needs that
 * input set again. Inputs after the first `n` stay as they were set.
 * `lent` (may be NULL) receives the mask of the inputs read in place (bit
 * i: input i), also when the run fails.
 */
TN_API int tn_module_run_with(TnObject *mod, int32_t n,
                              const void *const *data, const size_t *nbytes,
                              uint32_t *lent);
/*
 * Threads: optional, off by default (1). With n > 1 (up to
 * TN_PROGRAM_MAX_THREADS; anything else is a ValueError naming the
 * argument; a RuntimeError while another thread uses the Module) the
 * Module's runs cut each call its generated code hands to the crt's
 * parallel hook (a host archive's convolutions and dense layers of at
 * least 65,536 multiply-accumulates and batch 1: tn_crt_call_split) into
 * up to n parts, the executor's bands of output rows or blocks of output
 * features, run on a pool of n - 1 threads and the caller. The pool and
 * each worker's scratch are made here, once; runs allocate nothing. The
 * int8 outputs are the same bytes for any n. A library whose code has no
 * such call (or built before threads) starts no thread. Several Modules
 * with threads may run at once on several threads; each has its own pool.
 * tn_module_threads: n (1 when off), or -1 with a TypeError;
 * tn_module_split_calls: the calls the last run ran in parts.
 */
TN_API int tn_module_set_threads(TnObject *mod, int64_t n);
TN_API int32_t tn_module_threads(const TnObject *mod);
TN_API int64_t tn_module_split_calls(const TnObject *mod);

/* Output `i` of the last run as a tn.Tensor that views the Module's
 * output buffer (overwritten by the next run; copy it to keep it) and
 * keeps the Module alive. RuntimeError when there is no successful run
 * to show (none yet, the last one failed, or the workspace changed).
 * (transfer full) */
TN_API TnObject *tn_module_get_output(TnObject *mod, int32_t i);
/* The data of output `i` of the last run, in place (its size in
 * `*nbytes` when not NULL): valid until the next run on the Module, a
 * workspace change or the Module's end. The caller reads it outside the
 * Module's claim, so it must not run the Module meanwhile (the Rust
 * binding ties the slice to a borrow). NULL with a RuntimeError when there is no successful run. */
TN_API const void *tn_module_output_data(TnObject *mod, int32_t i,
                                         size_t *nbytes);
/* Copy output `i` into `out` (`nbytes` must be the output's size). */
TN_API int tn_module_copy_output(TnObject *mod, int32_t i, void *out,
                                 size_t nbytes);

/* Run `number` times per repeat, `repeat` times; `ms_per_run` (repeat
 * entries) receives each repeat's mean milliseconds per run. */
TN_API int tn_module_time(TnObject *mod, int32_t number, int32_t repeat,
                          double *ms_per_run);

/* Use the caller's memory for workspace pool `i` (at least the pool's
 * size, aligned as the descriptor says, overlapping neither the other
 * pools nor the Module's output buffers nor an input it reads in place:
 * ValueError) instead of the Module's own, or the Module's own again for
 * a NULL `base`; the caller keeps it alive while the Module lives and
 * while any output tensor taken from it does (outputs placed in the pool
 * view it). Inputs that live in that pool must be set again. */
TN_API int tn_module_set_workspace(TnObject *mod, int32_t i, void *base,
                                   size_t nbytes);
/* The same with a tn.Tensor (CPU, compact, writable, of any dtype: its
 * bytes are the pool) that the Module keeps alive until the pool is set again, and that
 * an output living in it keeps alive as long as the output's view: what
 * the Python and Go bindings use. NULL: the Module's own pool again. */
TN_API int tn_module_set_workspace_tensor(TnObject *mod, int32_t i,
                                          TnObject *tensor);

/* Hand device `i` (the handle the model's device hooks receive) to the
 * Module; a model with devices runs only once every device is set
 * (RuntimeError naming the missing one otherwise). */
TN_API int tn_module_set_device(TnObject *mod, int32_t i, void *device);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_MODULE_H_ */
