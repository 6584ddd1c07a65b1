/*
 * tvmnode/executor.h: the host executor: run an IRModule's function on
 * tensors, through the crt kernels (tvmnode/kernel.h).
 *
 * The executor types the module (InferType) if it is not typed yet, lowers
 * the entry function once to a program, and runs it as often as asked; the
 * same module before and after the pass pipeline (FuseOps included) gives
 * the same outputs. Every language reaches it through the function
 * registry:
 *
 *   "runtime.Executor"(mod[, entry = "main"]) -> executor
 *   "runtime.ExecutorRun"(executor, tensor, ...) -> tn.Array of tensors
 *   "runtime.ExecutorInputs"(executor) / "runtime.ExecutorOutputs"(executor)
 *       -> tn.Array of tn.Map {"name", "shape", "dtype"}
 *   "runtime.ExecutorStats"(executor) -> tn.Map of tn_program_stats
 *
 * An executor may be used from any thread, one run at a time (a second
 * concurrent run is a RuntimeError).
 */
#ifndef TVMNODE_EXECUTOR_H_
#define TVMNODE_EXECUTOR_H_

#include <tvmnode/tvmnode.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An executor (a kernel.Program) for function `entry` of `mod` (both
 * borrowed). A module that does not type-check is a TypeError from
 * InferType; an operator with no kernel for its types a
 * NotImplementedError naming it. (transfer full) */
TN_API TnObject *tn_executor_new(TnObject *mod, const char *entry);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_EXECUTOR_H_ */
