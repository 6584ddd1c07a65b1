/*
 * plan_internal.h: the one memory planner of lowered programs, shared by
 * the host executor (program.c) and the code generator (codegen/aot*.c).
 * A program's steps are put in the execution order with the lowest peak
 * (tn__kernel_schedule) when the program is built; a plan then gives every
 * value a home (a caller's input or output, a constant, or a buffer of a
 * pool), merges an in-place step's output into its dying input's buffer,
 * gives each step needing scratch a scratch buffer and places the buffers
 * (memory_plan.c). The executor plans once, with the defaults below, and
 * the code generator plans with its options; with the same options both
 * get the same plan. Private to the library.
 */
#ifndef TVMNODE_KERNEL_PLAN_INTERNAL_H_
#define TVMNODE_KERNEL_PLAN_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "plan_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "kernel/kernel_internal.h"

/* The alignment of every planned offset, unless asked otherwise. */
#define TN_KERN_PLAN_ALIGN 16

typedef enum {
  TN_KH_INPUT,  /* the caller's input tensor `index` (read only) */
  TN_KH_OUTPUT, /* computed straight into the caller's output `index` */
  TN_KH_CONST,  /* constant `index` */
  TN_KH_POOL    /* buffer `index` */
} TnKernHomeKind;

typedef struct {
  TnKernHomeKind kind;
  int32_t index;
} TnKernHome;

typedef enum {
  TN_KB_INTERMEDIATE,
  TN_KB_INPUT,
  TN_KB_OUTPUT,
  TN_KB_SCRATCH
} TnKernBufKind;

typedef struct {
  TnKernBufKind kind;
  char *name; /* owned */
  int64_t size;
  int32_t first, last;
  int32_t merged; /* -1, or the buffer it was merged into (in place) */
} TnKernBuf;

typedef struct {
  int64_t align; /* a power of two; 0: TN_KERN_PLAN_ALIGN */
  /* inputs and outputs in pool buffers (else the caller's tensors: an
   * input is never written, an output computed by a step is computed
   * straight into the caller's output) */
  bool io_in_pool;
  /* the last `nstates` inputs and outputs are a streaming model's states:
   * a state's current value is read in place where the caller keeps it
   * (its input stays the caller's, io_in_pool or not), and its new value
   * is computed into a pool buffer (an intermediate) that lives to the
   * end of the run, when the caller copies it over the current one; or,
   * when no step reads the current value after the one computing the new
   * value (which reads it at most as its in-place input), straight over
   * the current value, its home then the state's input */
  int32_t nstates;
  int32_t npools; /* 0: one pool, no limit, taking every kind of buffer */
  const TnPlanPool *pools;
  const uint32_t *pool_kinds; /* per pool: bit k set when it takes
                                 TnKernBufKind k */
  /* the names of the input and output buffers (io_in_pool), or NULL */
  const char *const *in_names, *const *out_names;
  /* TN_CRT_ISA_ARM_DSP: steps' scratch sized for that ISA's kernels
   * (TnKernCall's scratch_dsp), else the portable sizes */
  int32_t isa;
  /* with that ISA: give a step one of its smaller scratches
   * (TnKernCall's scratch_dsp_less) where that makes the pools smaller,
   * or lets them fit their limits; the same integers, a little slower */
  bool less_scratch;
  const char *who;          /* for messages */
  const char *accepts_hint; /* appended to "no pool accepts ..." */
} TnKernPlanOptions;

typedef struct {
  int32_t nsteps, nvalues, ninputs, noutputs;
  TnKernHome *home;  /* per value; a view's is its base's */
  GArray *bufs;      /* TnKernBuf */
  int32_t *scratch;  /* per step: its scratch buffer, or -1 */
  int32_t *in_buf, *out_buf; /* per input, output: its pool buffer or -1 */
  TnPlanBuffer *plan; /* per buffer; merged ones sit on their host */
  TnPlanResult res;
} TnKernPlan;

/* The steps of a program as the planner reads them: in execution order,
 * values' `def` naming the step computing them. */
typedef struct {
  const TnKernValue *vals;
  int32_t nvalues;
  const TnKernStep *steps;
  int32_t nsteps;
  const int32_t *outputs; /* value ids */
  int32_t noutputs;
  int32_t ninputs;
} TnKernPlanInput;

/* The execution order with the lowest peak of live intermediate bytes
 * among the program's own order and two others (see plan.c): order[k] is
 * the k-th step to run. */
void tn__kernel_schedule(const TnKernPlanInput *in, int32_t *order);

/* Plan `in` with options `o` (NULL: the defaults) into `out`, which
 * tn__kernel_plan_clear frees (also after a failure). -1 with a
 * ValueError when no pool can take a buffer. */
int tn__kernel_plan(const TnKernPlanInput *in, const TnKernPlanOptions *o,
                    TnKernPlan *out);
void tn__kernel_plan_clear(TnKernPlan *p);
/* A copy of `p` (its names and arrays duplicated). */
void tn__kernel_plan_copy(TnKernPlan *dst, const TnKernPlan *src);

/* The buffer `b` was merged into, transitively (itself when none). */
static inline int32_t tn__kernel_buf_root(const GArray *bufs, int32_t b) {
  while (g_array_index(bufs, TnKernBuf, b).merged >= 0)
    b = g_array_index(bufs, TnKernBuf, b).merged;
  return b;
}

/* Whether step `s` runs in place (its output shares an input's buffer). */
bool tn__kernel_plan_in_place(const TnKernPlanInput *in, const TnKernPlan *p,
                              int32_t s);

/* The executor's plan of a program (valid while it lives), and its steps
 * and values as the planner read them; -1 with a TypeError when `prog` is
 * not a program. */
int tn__program_plan(const TnObject *prog, const TnKernPlan **plan,
                     TnKernPlanInput *in);

#endif /* TVMNODE_KERNEL_PLAN_INTERNAL_H_ */
