/*
 * tvmnode/kernel.h: lowering IR to the crt's kernels, and running it.
 *
 * Every operator's kernel is its operator attribute TN_OP_ATTR_KERNEL: the
 * one lowering table that the host executor, FoldConstant and the code
 * generator read, so nothing computes an operator a second way. An operator
 * registered from another language brings a host compute function instead
 * (TN_OP_ATTR_COMPUTE), which the executor and FoldConstant call.
 *
 * A program is a typed function lowered once: a sequence of kernel calls
 * over planned memory (intermediates share one arena, placed by liveness;
 * reshapes are views). Running it checks the inputs, runs the kernels and
 * returns the outputs as new tensors. A program may be run from any thread,
 * one run at a time: a second concurrent run is a RuntimeError, not a race.
 */
#ifndef TVMNODE_KERNEL_H_
#define TVMNODE_KERNEL_H_

#include "tvmnode/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operator attribute holding a C operator's lowering (an opaque
 * pointer to the library's table entry; set by the library only). */
#define TN_OP_ATTR_KERNEL "kernel"
/*
 * The operator attribute holding a host compute function for operators
 * that have no crt kernel: a tn.Function compute(inputs, out, attrs) that
 * fills `out` (a tn.Tensor of the call's type) from `inputs` (a tn.Array
 * of tn.Tensor) and returns None. The code generator cannot use it.
 */
#define TN_OP_ATTR_COMPUTE "compute"

/*
 * Lower `fn` (a typed ir.Function; calls of global functions are resolved
 * in `mod`, which may be NULL when there are none) to a program. Fused
 * primitive functions become one fused kernel where the kernels have that
 * form (conv2d/dense + bias + requantize + activation) and otherwise run
 * operator by operator. A call with no kernel for its dtypes, an untyped
 * expression or a first-class function value is an error naming it. Both
 * arguments are borrowed. (transfer full)
 */
TN_API TnObject *tn_program_new(const TnObject *mod, const TnObject *fn);

/* Number of inputs (the function's parameters) and outputs (the result,
 * tuples flattened in order). -1 with a TypeError if `prog` is not a
 * program (borrowed). */
TN_API int32_t tn_program_num_inputs(const TnObject *prog);
TN_API int32_t tn_program_num_outputs(const TnObject *prog);
/* The ir.TensorType of input / output `i`, or NULL with an IndexError.
 * (transfer none: valid while `prog` lives) */
TN_API const TnObject *tn_program_input_type(const TnObject *prog, int32_t i);
/* (transfer none: valid while `prog` lives) */
TN_API const TnObject *tn_program_output_type(const TnObject *prog,
                                              int32_t i);
/* The name of input `i` (its parameter's name hint), or NULL with an
 * IndexError. (transfer none) */
TN_API const char *tn_program_input_name(const TnObject *prog, int32_t i);

/* Statistics: kernel calls per run, bytes of the intermediate arena (the
 * plan's size) and its lower bound (the largest total of intermediates
 * alive at one step), kernel scratch bytes, multiply-accumulates per run
 * (convolutions and dense layers). With profiling on, also the runs timed
 * and their total time, of which the time inside kernel calls: the rest is
 * the executor's own cost (input checks, output copies, dispatch). */
typedef struct {
  int32_t steps;
  int64_t arena_bytes;
  int64_t arena_lower_bound;
  int64_t scratch_bytes;
  int64_t macs;
  int64_t runs;
  int64_t run_ns;
  int64_t kernel_ns;
} TnProgramStats;
TN_API int tn_program_stats(const TnObject *prog, TnProgramStats *out);
/* Switch timing of runs and kernel calls on (1) or off (0); either resets
 * the counters. Off by default: timing costs two clock reads per step. */
TN_API int tn_program_set_profiling(TnObject *prog, int on);

/*
 * Run: `inputs` are `n` tn.Tensor (borrowed) on the CPU, compact, of the
 * input types (a wrong count, shape or dtype is a TypeError/ValueError
 * naming the input and both types). On success `outputs` (an array of
 * tn_program_num_outputs slots) receives new tensors (transfer full).
 */
TN_API int tn_program_run(TnObject *prog, TnObject *const *inputs, int32_t n,
                          TnObject **outputs);

/*
 * Evaluate one call whose arguments are all constants through its kernel
 * (what FoldConstant does). `call` is a typed ir.Call (borrowed). Returns
 * the result tensor (transfer full), or NULL: with `*supported` set to 0
 * and no error when there is no kernel for it (the call is then left as it
 * is), or with an error raised when running it failed.
 */
TN_API TnObject *tn_kernel_eval(const TnObject *call, int *supported);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_KERNEL_H_ */
