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

/*
 * Writing one kernel call as C, for the code generator. The call becomes
 * the body of a function whose parameters are `in0`..`inN` (const void *,
 * in the order of TnKernCall.in), `out` (void *) and `scratch` (void *,
 * `scratch_size` bytes). An emitter appends `static const` parameter
 * declarations to `decls` (every name it declares starts with `prefix`)
 * and the statement returning the kernel's status to `body`. The values
 * are the lowering's own parameters, so the generated call computes
 * exactly what the host executor computes.
 */
typedef struct {
  GString *decls;
  GString *body;
  const char *prefix;
  size_t scratch_size;
} TnKernEmit;
typedef void (*TnKernEmitFn)(const void *params, TnKernEmit *e);

/* One lowered call: the kernel, its parameters and which of the call's
 * arguments it reads at run time (the others, scales and zero points, are
 * folded into the parameters). */
typedef struct {
  const char *kernel; /* the crt function it calls */
  const char *base_op; /* a fused form: the operator it is built on */
  TnKernRun run;      /* NULL: a view of input 0 (reshape and friends) */
  void *params;       /* g_malloc'd, owned */
  size_t scratch;     /* scratch bytes it needs */
  int64_t macs;       /* multiply-accumulates per run (conv, dense), or 0 */
  int32_t nin;
  int32_t in[TN_KERN_MAX_IN]; /* argument indices (see TnKernArgs) */
  TnObject *compute;  /* a host compute function instead of run, or NULL */
  TnObject *attrs;    /* its attrs, for compute (borrowed from the call) */
  /* In place: 1 + the entry of `in` whose storage the output may take
   * (same address, when that input dies at this call), 0 when none; and
   * the scratch bytes the call needs then (>= scratch). */
  int32_t inplace;
  size_t inplace_scratch;
} TnKernCall;

/* The C form of a lowered call (the emitter of its `run`), or NULL for
 * views and host compute functions, which have none. */
TnKernEmitFn tn__kernel_emitter(TnKernRun run);

/* Helpers for emitters (emit.c). Each declares `static const` data named
 * prefix + name in e->decls. */
void tn__emit_i32s(TnKernEmit *e, const char *name, const int32_t *v,
                   int64_t n);
void tn__emit_f32s(TnKernEmit *e, const char *name, const float *v,
                   int64_t n);
void tn__emit_bytes(TnKernEmit *e, const char *name, const uint8_t *v,
                    int64_t n);
/* a float as a C literal that reads back exactly ("1.5f", "-TVMGEN_INF":
 * generated files define TVMGEN_INF and TVMGEN_NAN, so they need no
 * <math.h>) */
void tn__emit_f32(GString *s, float v);
void tn__emit_broadcast(TnKernEmit *e, const char *name,
                        const TnCrtBroadcast *b);
void tn__emit_conv2d(TnKernEmit *e, const char *name, const TnCrtConv2d *g);
void tn__emit_dense(TnKernEmit *e, const char *name, const TnCrtDense *d);
void tn__emit_pool2d(TnKernEmit *e, const char *name, const TnCrtPool2d *g);
void tn__emit_reduce(TnKernEmit *e, const char *name, const TnCrtReduce *r);
void tn__emit_transpose(TnKernEmit *e, const char *name,
                        const TnCrtTranspose *t);
void tn__emit_pad(TnKernEmit *e, const char *name, const TnCrtPad *p);
void tn__emit_strided_slice(TnKernEmit *e, const char *name,
                            const TnCrtStridedSlice *p);
/* a TnCrtQuant with its multiplier and shift arrays (`channels` each) */
void tn__emit_quant(TnKernEmit *e, const char *name, const TnCrtQuant *q,
                    int32_t channels);
void tn__emit_requant(TnKernEmit *e, const char *name, const TnCrtRequant *r,
                      int32_t channels);
void tn__emit_qbinary(TnKernEmit *e, const char *name, const TnCrtQBinary *q);
void tn__emit_qmean(TnKernEmit *e, const char *name, const TnCrtQMean *q);
void tn__emit_softmax_s8(TnKernEmit *e, const char *name,
                         const TnCrtSoftmaxS8 *s);
void tn__emit_lut8(TnKernEmit *e, const char *name, const TnCrtLut8 *t);
/* `body` gets "  return " + the formatted call + ";\n"; "$" in the format
 * stands for the prefix (so "&$g" names the declaration "g"). */
void tn__emit_return(TnKernEmit *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* C names of the crt's enum values */
const char *tn__emit_binary_op(TnCrtBinaryOp op);
const char *tn__emit_unary_op(TnCrtUnaryOp op);
const char *tn__emit_dtype(TnCrtDType t);

/* ---- programs, as the code generator reads them ---------------------------- */

typedef enum { TN_KV_INPUT, TN_KV_CONST, TN_KV_ARENA, TN_KV_VIEW } TnKernValueKind;

/* A tensor value of a program: a function input, a constant, an
 * intermediate (placed in the executor's arena at `offset`) or a view of
 * another value (`index` is the value viewed, never itself a view). */
typedef struct {
  TnKernValueKind kind;
  int32_t index; /* input index, constant index, or the viewed value */
  int64_t offset;
  int64_t nbytes;
  const TnIrTensorType *type; /* borrowed: the program keeps its IR alive */
  int32_t def, last; /* the steps that compute it and read it last */
} TnKernValue;

typedef struct {
  TnKernCall k;
  const char *op; /* for messages (borrowed from the operator's name) */
  int32_t in[TN_KERN_MAX_IN]; /* value ids */
  int32_t out;
} TnKernStep;

/* A read-only view of a program's parts (valid while the program lives). */
typedef struct {
  const GArray *values;   /* TnKernValue */
  const GArray *steps;    /* TnKernStep */
  const GPtrArray *consts; /* tn.Tensor */
  const GPtrArray *inputs; /* names (char *) */
  const GArray *outputs;  /* int32 value ids */
} TnKernProgramView;

/* Fill `out` from `prog`; -1 with a TypeError when it is not a program. */
int tn__program_view(const TnObject *prog, TnKernProgramView *out);

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
