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
#include "tvmnode/crt/calls.h"
#include "tvmnode/kernel.h"

/* ---- kernel forms ---------------------------------------------------------------- */

/* Runs one kernel call: `in` the input pointers in the order the form
 * documents, `out` the output. Returns a TnCrtStatus. The crt's uniform
 * entries (tvmnode/crt/calls.h) have this type. */
typedef TnCrtCallFn TnKernRun;

#define TN_KERN_MAX_IN TN_CRT_MAX_INPUTS

/* A parameter struct, described from its field list (params.c). */
typedef enum {
  TN_PK_I32, TN_PK_U32, TN_PK_F32, TN_PK_I8, TN_PK_U8, TN_PK_I16
} TnParamKind;
typedef struct TnParamDesc TnParamDesc;
typedef struct {
  const char *name;
  size_t offset;
  char shape;                /* 'S' scalar, 'A' array, 'P' pointer, 'N' struct */
  TnParamKind kind;          /* of the elements ('N': unused) */
  int32_t count;             /* 'A': elements */
  const char *count_field;   /* 'P': the int32 scalar counting them */
  const TnParamDesc *nested; /* 'N' */
} TnParamField;
struct TnParamDesc {
  const char *type;
  size_t size;
  const TnParamField *fields;
  int32_t nfields;
};
#define TN__PARAM_DECL(T) extern const TnParamDesc tn__param_##T;
TN_CRT_PARAM_TYPES(TN__PARAM_DECL)
#undef TN__PARAM_DECL

/* A kernel form: one row of TN_CRT_CALLS. */
typedef struct {
  const char *form;   /* "conv2d_s8" */
  const char *kernel; /* the crt kernel it calls, "tn_crt_conv2d_s8" */
  const char *symbol; /* its uniform entry, "tn_crt_call_conv2d_s8" */
  TnKernRun run;      /* that entry */
  const TnParamDesc *params;
  const char *source; /* the crt source defining it */
} TnKernForm;

typedef enum {
#define TN__FORM_ID(form, T, file) TN_KF_##form,
  TN_CRT_CALLS(TN__FORM_ID)
#undef TN__FORM_ID
  TN_KF_COUNT
} TnKernFormId;
extern const TnKernForm tn__kernel_forms[TN_KF_COUNT];

/* TnKernP_<form> is the form's parameter type. */
#define TN__FORM_TYPE(form, T, file) typedef T TnKernP_##form;
TN_CRT_CALLS(TN__FORM_TYPE)
#undef TN__FORM_TYPE

/* One lowered call: the kernel, its parameters and which of the call's
 * arguments it reads at run time (the others, scales and zero points, are
 * folded into the parameters). */
typedef struct {
  const TnKernForm *form; /* NULL: a view, or a host compute function */
  const char *kernel;  /* the crt kernel it calls, for messages */
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
  /* in place only in a plan for the Cortex-M DSP build, where RAM is what
   * counts (a convolution in place by whole rows, a call per row:
   * tn_crt_conv2d_s8_inplace_ok's 2) */
  bool inplace_dsp_only;
  /* and the output may be larger than that input (its buffer grows to the
   * output's size: tn_crt_conv2d_s8_inplace_ok's 3) */
  bool inplace_grow;
  /* both for a Cortex-M core with the DSP extension (>= the above): the
   * plan of an archive for that ISA takes these */
  size_t scratch_dsp, inplace_scratch_dsp;
  /* and the smaller ones its DSP forms still run in, largest first
   * (tn_crt_conv2d_s8_scratch_less_isa): a plan may give the call one
   * where its scratch is at the pools' peak */
  size_t scratch_dsp_less[TN_CRT_SCRATCH_LESS_MAX];
  size_t inplace_scratch_dsp_less[TN_CRT_SCRATCH_LESS_MAX];
  uint16_t scratch_dsp_less_pct[TN_CRT_SCRATCH_LESS_MAX]; /* how much slower */
  uint16_t inplace_scratch_dsp_less_pct[TN_CRT_SCRATCH_LESS_MAX];
  int32_t nless, inplace_nless;
} TnKernCall;

/* Choose form `id` for `k`: its entry, and a zeroed parameter struct with
 * `extra` bytes after it (for the arrays its pointer fields point to),
 * owned by k. KERNEL_USE(k, form, extra) returns it typed. */
void *tn__kernel_use(TnKernCall *k, TnKernFormId id, size_t extra);
#define KERNEL_USE(k, form, extra) \
  ((TnKernP_##form *)tn__kernel_use((k), TN_KF_##form, (extra)))

/* The C of a parameter struct: the arrays its pointers point to, then
 * `static const <type> name = {...};`, appended to decls. */
void tn__emit_params(GString *decls, const char *name, const TnParamDesc *d,
                     const void *p);
/* a float as a C literal that reads back exactly ("1.5f", "-TVMGEN_INF":
 * generated files define TVMGEN_INF and TVMGEN_NAN, so they need no
 * <math.h>) */
void tn__emit_f32(GString *s, float v);

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

/* The crt's code of an element type (TN_CRT_DTYPES), or -1. */
int tn__kernel_crt_dtype(DLDataType t);

/* Turn a crt status into a raised error naming `who`; 0 for OK. */
int tn__kernel_status(int32_t status, const char *who);

/* Whether `e` is an entry of the library's lowering table (the kernel
 * attribute is an opaque pointer: never trust one from elsewhere). */
bool tn__kernel_entry_known(const TnKernEntry *e);

/* The executor's worker pool and a step's parts (threads.c). */
typedef TnThreadPool TnKernThreads; /* tvmnode/kernel.h's */
typedef struct {
  void *params; /* the part's own parameters (g_malloc'd) */
  ptrdiff_t in_off[TN_KERN_MAX_IN]; /* bytes into each input */
  ptrdiff_t out_off;                /* and into the output */
} TnKernPart;
/* n - 1 workers (2 <= n <= TN_PROGRAM_MAX_THREADS), each with
 * `scratch_size` bytes of scratch; NULL with the error raised in `who`. */
TnKernThreads *tn__kernel_threads_new(int32_t n, size_t scratch_size,
                                      const char *who);
void tn__kernel_threads_free(TnKernThreads *t);
/* Cut `k` into at most `n` parts whose outputs together are the call's
 * (parts[] has room for n); 0 when the step is not cut. */
int32_t tn__kernel_split(const TnKernCall *k, int32_t n, TnKernPart *parts);
/* The TN_CRT_SPLIT_* kind `k` is cut as when it has threads (a
 * convolution or dense layer of at least SPLIT_MIN_MACS, not a host
 * compute function), or 0: what the executor and the code generator both
 * ask. Whether it is cut then depends on its geometry
 * (tn_crt_split_count) and on its not running in place. */
int32_t tn__kernel_split_kind(const TnKernCall *k);
/* Run the parts on the pool, part 0 on the calling thread with `scratch`;
 * the first status that is not TN_CRT_OK, or TN_CRT_OK. */
int32_t tn__kernel_threads_run(TnKernThreads *t, const TnKernCall *k,
                               const TnKernPart *parts, int32_t nparts,
                               const void *const *in, void *out,
                               void *scratch, size_t scratch_size);

void tn__kernel_lower_init(void);
void tn__kernel_program_init(void);
void tn__kernel_params_init(void);
/* The kernel layer's start-up (after ir, before pass). */
static inline void tn__kernel_init(void) {
  tn__kernel_program_init();
  tn__kernel_lower_init();
  tn__kernel_params_init();
}

#endif /* TVMNODE_KERNEL_INTERNAL_H_ */
