/*
 * kernel_internal.h: the lowering table's types, shared by lower.c (one
 * lowering per operator) and program.c (building, planning and running
 * programs). Private to the library.
 */
#ifndef TVMNODE_KERNEL_INTERNAL_H_
#define TVMNODE_KERNEL_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "kernel_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "ir/ops_nn.h"
#include "tvmnode/crt/kernels.h"
#include "tvmnode/kernel.h"

/* Runs one kernel call: `in` the input pointers in the order the lowering
 * chose, `out` the output. Returns a TnCrtStatus. */
typedef int32_t (*TnKernRun)(const void *params, const void *const *in,
                             void *out, void *scratch, size_t scratch_size);

#define TN_KERN_MAX_IN 16

/* One lowered call: the kernel, its parameters and which of the call's
 * arguments it reads at run time (the others, scales and zero points, are
 * folded into the parameters). */
typedef struct {
  const char *kernel; /* the crt function it calls */
  TnKernRun run;      /* NULL: a view of input 0 (reshape and friends) */
  void *params;       /* g_malloc'd, owned */
  size_t scratch;     /* scratch bytes it needs */
  int64_t macs;       /* multiply-accumulates per run (conv, dense), or 0 */
  int32_t nin;
  int32_t in[TN_KERN_MAX_IN]; /* argument indices (see TnKernArgs) */
  TnObject *compute;  /* a host compute function instead of run, or NULL */
  TnObject *attrs;    /* its attrs, for compute (borrowed from the call) */
} TnKernCall;

/* What a lowering sees of a call: its arguments flattened (a tuple
 * argument contributes its fields), their types, and the constant tensor
 * of each argument that is one (NULL otherwise). */
typedef struct {
  const char *op;
  const TnObject *attrs;
  int32_t nargs;
  const TnIrTensorType *types[TN_KERN_MAX_IN];
  TnObject *consts[TN_KERN_MAX_IN];
  const TnIrTensorType *out;
} TnKernArgs;

/* A lowering: fills `k` (its params g_malloc'd) from the call; -1 with an
 * error naming the operator when it cannot (a dtype with no kernel is a
 * NotImplementedError). */
typedef int (*TnKernLower)(const TnKernArgs *a, TnKernCall *k);

typedef struct {
  TnKernLower lower;
} TnKernEntry;

/* The fused forms: the primitive function's body matched against the
 * patterns the kernels have. Returns 1 and fills `k` (argument indices
 * refer to `leaves`, filled with the body's leaf expressions) on a match,
 * 0 when the body has another form, -1 on error. */
int tn__kernel_lower_fused(const TnObject *body, TnKernCall *k,
                           const TnObject **leaves, int32_t *nleaves,
                           TnObject *(*const_of)(void *ctx,
                                                 const TnObject *expr),
                           void *ctx);

/* Turn a crt status into a raised error naming `who`; 0 for OK. */
int tn__kernel_status(int32_t status, const char *who);

/* Whether `e` is an entry of the library's lowering table (the kernel
 * attribute is an opaque pointer: never trust one from elsewhere). */
bool tn__kernel_entry_known(const TnKernEntry *e);

void tn__kernel_lower_init(void);
void tn__kernel_program_init(void);
/* The kernel layer's start-up (after ir, before pass). */
static inline void tn__kernel_init(void) {
  tn__kernel_program_init();
  tn__kernel_lower_init();
}

#endif /* TVMNODE_KERNEL_INTERNAL_H_ */
