/*
 * tvmnode/kernel.h: lowering IR to the crt's kernels, and running it.
 *
 * Every operator's kernel is its operator attribute TN_OP_ATTR_KERNEL: the
 * one lowering table that the host executor, FoldConstant and the code
 * generator read, so nothing computes an operator a second way. An operator
 * registered from another language brings a host compute function instead
 * (TN_OP_ATTR_COMPUTE), which the executor and FoldConstant call.
 *
 * A program is a typed function lowered once: a sequence of kernel calls in
 * the execution order with the lowest peak, over memory planned once by the
 * planner below, exactly as the code generator plans its workspace pool
 * (intermediates and kernel scratch share one arena; an operator that may
 * run in place writes over an input that dies at it; reshapes are views;
 * inputs are only read, outputs are computed straight into new tensors).
 * Running it checks the inputs, runs the kernels and returns the outputs. A program may be run from any thread,
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
 *
 * Size: chains of calls and of lets of any length are lowered without
 * recursion, and scheduling is O(N log N), so the executor and the code
 * generator take models of a million operators (BENCHMARKS.md, compile
 * time). One limit remains, the same for both: a let's value, a tuple's
 * fields past the 16th, a function body or a fused primitive nested inside
 * another more than 10,000 deep is a ValueError ("expressions nest deeper
 * than 10000"), as that part recurses on the C stack.
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

/* Statistics: kernel calls per run, bytes of the arena (the plan's size,
 * intermediates and kernel scratch: the code generator's workspace pool
 * for the same function with default options) and its lower bound (the
 * largest total of aligned buffers alive at one step), the most scratch
 * bytes one kernel call takes (inside the arena), multiply-accumulates per run
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
 * Threads: run the largest steps (convolutions and dense layers of at
 * least 65,536 multiply-accumulates, batch 1, not in place) over `n`
 * threads, each taking a band of a convolution's output rows or a block of
 * a dense layer's output features; the rest run on the caller's thread.
 * 1 (the default) is off: no thread is started. The pool (n - 1 threads)
 * and every part's parameters and scratch are made here, once; a run
 * allocates nothing more. The int8 outputs are the same bytes for any n;
 * float ones within rounding (a band may take another ISA form). n out of
 * 1..TN_PROGRAM_MAX_THREADS is a ValueError; a RuntimeError while the
 * program runs. The pool ends with the program (or the next call).
 */
#define TN_PROGRAM_MAX_THREADS 64
TN_API int tn_program_set_threads(TnObject *prog, int64_t n);
/* The threads set (1 when off), or -1 with a TypeError. */
TN_API int32_t tn_program_threads(const TnObject *prog);
/* How many steps a run cuts over the threads (0 when off), or -1 with a
 * TypeError. */
TN_API int32_t tn_program_split_steps(const TnObject *prog);

/*
 * Worker pools: the executor's threads, for whatever else runs parts of
 * work side by side (the compiled Modules run the crt's parts of a call,
 * tvmnode/crt/calls.h, on one). A pool is n - 1 pthreads plus the calling
 * thread, each worker with `scratch_size` bytes of scratch of its own
 * (64-byte aligned), made once by tn_thread_pool_new (NULL with a
 * ValueError for n out of 2..TN_PROGRAM_MAX_THREADS, a RuntimeError when a
 * thread cannot start). tn_thread_pool_run runs fn(ctx, i, scratch, size)
 * for every part i in [0, nparts), each once, on any thread (the caller's
 * with the `scratch` it passes, a worker's with its own), claimed from one
 * atomic word so a worker not yet scheduled holds nothing up; it returns
 * when all are done, with the first nonzero status of a part (by part
 * order) or 0; TN_CRT_INVALID_ARGUMENT (5) for a NULL pool or fn or
 * nparts out of 1..TN_THREAD_POOL_MAX_PARTS. It allocates nothing. One
 * run at a time per pool; fn must not run the same pool.
 */
#define TN_THREAD_POOL_MAX_PARTS TN_PROGRAM_MAX_THREADS
typedef struct TnThreadPool TnThreadPool;
typedef int32_t (*TnPartFn)(void *ctx, int32_t part, void *scratch,
                            size_t scratch_size);
TN_API TnThreadPool *tn_thread_pool_new(int64_t n, size_t scratch_size);
TN_API void tn_thread_pool_free(TnThreadPool *pool); /* NULL: nothing */
/* n (0 for NULL), and each worker's scratch bytes. */
TN_API int32_t tn_thread_pool_size(const TnThreadPool *pool);
TN_API size_t tn_thread_pool_scratch_size(const TnThreadPool *pool);
TN_API int32_t tn_thread_pool_run(TnThreadPool *pool, TnPartFn fn, void *ctx,
                                  int32_t nparts, void *scratch,
                                  size_t scratch_size);

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

/*
 * The static memory planner, one for the host executor and the code
 * generator. It is a plain interval-packing problem, kept apart from the IR
 * so it can be tested, fuzzed and reused on its own: every buffer has a size
 * and the steps over which it is alive; the planner gives each one a pool
 * and an offset so that no two buffers alive at the same step overlap in
 * the same pool, every offset is aligned, and each pool stays within its
 * limit. Its callers decide beforehand what a buffer is (views share their
 * base's buffer, an in-place operator's output shares its input's), so the
 * planner never needs to know about operators.
 */

/* At most this many pools in one plan (a pool mask is 32 bits). */
#define TN_PLAN_MAX_POOLS 32

typedef struct {
  int64_t size;        /* bytes, >= 0, rounded up to the alignment; a
                          buffer of size 0 takes no room (offset 0 in the
                          first pool it may use) */
  int32_t first, last; /* alive at steps first..last inclusive,
                          0 <= first <= last */
  uint32_t pools;      /* bit p set: may be placed in pool p; 0: any pool;
                          bits of pools past npools are ignored */
  /* outputs */
  int32_t pool;   /* the pool it was placed in */
  int64_t offset; /* its byte offset there, a multiple of the alignment */
} TnPlanBuffer;

typedef struct {
  const char *name; /* for messages */
  int64_t limit;    /* bytes, >= 0; 0: no limit. A buffer's end counts
                       with its size rounded up to the alignment */
} TnPlanPool;

/* The planner places greedily (largest first, each in the smallest gap),
 * then improves each pool by a seeded local search over placement orders,
 * then, in pools of few buffers, by a branch and bound that proves the
 * minimum. Each stage keeps the best plan so far; the same input always
 * gives the same plan. */
typedef struct {
  int64_t alignment;   /* a power of two; 0 means 16 */
  int32_t exact_max;   /* solve exactly when a pool holds at most this many
                          buffers (more than 64 counts as 64); 0 means 12,
                          whose proofs take milliseconds, -1 never. A search
                          that runs long (about 0.2 s of work) stops with
                          the best plan found */
  int64_t search_iters; /* local-search moves per pool; 0 the default (2000,
                           fewer where moves are costly, so as to take
                           at most 0.1 to 0.2 s a pool), -1 none */
} TnPlanOptions;

typedef struct {
  int64_t size[TN_PLAN_MAX_POOLS]; /* bytes used per pool (the highest end
                                      of a buffer in it, aligned) */
  int64_t lower_bound; /* the largest total of (aligned) bytes alive at one
                          step, over all buffers: no plan in one pool can be
                          smaller */
  int64_t total;       /* the sum of size[] */
} TnPlanResult;

/*
 * Place `n` buffers in `npools` pools (1..TN_PLAN_MAX_POOLS; the order is
 * the order of preference: a buffer, largest first, goes to the first pool
 * that may hold it where the greedy placement keeps it within the limit).
 * Fills each buffer's pool and offset and `res` (size[] is 0 past npools).
 * `opt` may be NULL. -1 with a ValueError, and nothing written, when no
 * pool can take a buffer (naming it, its size, each pool it may use with
 * its limit and the least room it would need there) or an input is
 * malformed (naming the argument and the buffer: negative size, first < 0
 * or > last, a mask naming no pool, alignment not a power of two, sizes
 * adding up past INT64_MAX).
 */
TN_API int tn_memory_plan(TnPlanBuffer *bufs, int32_t n,
                          const TnPlanPool *pools, int32_t npools,
                          const TnPlanOptions *opt, TnPlanResult *res);

/*
 * Check a plan: every buffer in a pool its mask allows, aligned to
 * `alignment` (0 means 16), inside its pool's limit (when it has one) and
 * `sizes` (when not NULL), and no two buffers alive at a common step
 * overlapping in the same pool. 0, or -1 with a ValueError naming the two
 * buffers (by index), the pool, the first step at which they collide and
 * their byte ranges, or the buffer and the rule it breaks; malformed input
 * is refused as by tn_memory_plan.
 */
TN_API int tn_memory_plan_validate(const TnPlanBuffer *bufs, int32_t n,
                                   const TnPlanPool *pools, int32_t npools,
                                   const int64_t *sizes, int64_t alignment);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_KERNEL_H_ */
