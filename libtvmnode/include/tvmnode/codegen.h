/*
 * tvmnode/codegen.h: ahead-of-time compilation to C, and the static memory
 * planner it uses.
 *
 * The planner is a plain interval-packing problem, kept apart from the IR so
 * it can be tested, fuzzed and reused on its own: every buffer has a size and
 * the steps over which it is alive; the planner gives each one a pool and an
 * offset so that no two buffers alive at the same step overlap in the same
 * pool, every offset is aligned, and each pool stays within its limit. The
 * code generator decides beforehand what a buffer is (views share their
 * base's buffer, an in-place operator's output shares its input's), so the
 * planner never needs to know about operators.
 */
#ifndef TVMNODE_CODEGEN_H_
#define TVMNODE_CODEGEN_H_

#include "tvmnode/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/*
 * Compile the "main" function of a typed, fused IRModule to C (the C part
 * of a Model Library Format archive). `options` (a tn.Map, or NULL for the
 * defaults) may hold:
 *   "name": str          the model name, a C identifier ("default")
 *   "alignment": int     of every buffer and pool (16)
 *   "interface": str     "c" or "c,rust"
 *   "io_in_pool": bool   inputs and outputs inside the workspace pool
 *   "constants_in_pool": bool  constants in a pool the application
 *                        supplies instead of const arrays
 *   "pools": [{"name": str, "limit": int, "accepts": [kinds]}]
 *                        workspace pools in order of preference, each
 *                        with a byte limit (0: none) and the kinds of
 *                        buffer it may hold ("intermediate", "input",
 *                        "output", "scratch"; all when absent)
 *                        ([{"name": "global_workspace"}])
 *   "devices": {name: [operator names]}  operators handed to devices
 * Returns a tn.Map: "files" (path -> text: codegen/host/src/<name>_lib0.c,
 * <name>_lib1.c, codegen/host/include/tvmgen_<name>.h, metadata.json),
 * "runtime_sources" (the crt files the code needs, relative to
 * runtime/crt), "plan" (pools, buffers with their live steps and offsets,
 * the lower bound) and "constants" (the constant tensors the code reads,
 * by the names of their arrays: "const<i>").
 * (transfer full)
 */
TN_API TnObject *tn_codegen_aot(const TnObject *mod, const TnObject *options);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CODEGEN_H_ */
