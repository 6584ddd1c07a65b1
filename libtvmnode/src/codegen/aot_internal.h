/*
 * aot_internal.h: what the ahead-of-time generator's files share: the
 * options, the interface's inputs and outputs, and the generator's state,
 * which holds the plan of the kernel layer's one planner (where each value
 * lives, its home, and the buffers placed in the pools:
 * kernel/plan_internal.h). aot.c parses options, plans and assembles the
 * files; aot_emit.c writes the C and the header; mlf.c writes
 * metadata.json and the plan as data. Private to the library.
 */
#ifndef TVMNODE_AOT_INTERNAL_H_
#define TVMNODE_AOT_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "aot_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "codegen/codegen_internal.h"
#include "kernel/plan_internal.h"

#include <inttypes.h>

#define TN_AOT_WHO "tn_codegen_aot"


typedef struct {
  char *name; /* a C identifier, lower case */
  int64_t align;
  int64_t const_align;   /* the constant arrays' alignment */
  char *const_section;   /* NULL, or the section of the constants */
  char *ws_section;      /* NULL, or the section the pools belong in */
  bool io_in_pool, consts_in_pool, rust;
  int32_t isa;           /* TN_CRT_ISA_*: the kernels' scratch sized for */
  bool shrink_scratch;   /* a smaller scratch for that ISA at the peak */
  bool parallel;         /* the large convolutions and dense layers called
                            through tn_crt_call_split (a host's threads) */
  GPtrArray *pool_names; /* char * */
  GArray *pool_limits;   /* int64 */
  GArray *pool_kinds;    /* uint32: bit k set when the pool takes BufKind k */
  GPtrArray *devices;    /* char *, device names */
  GHashTable *device_of; /* operator name -> device index + 1 */
} Opts;


/* the planner's homes and buffers, by the names the generator uses */
typedef TnKernHomeKind HomeKind;
typedef TnKernHome Home;
#define H_INPUT TN_KH_INPUT
#define H_OUTPUT TN_KH_OUTPUT
#define H_CONST TN_KH_CONST
#define H_POOL TN_KH_POOL
typedef TnKernBufKind BufKind;
typedef TnKernBuf Buf;
#define B_INTERMEDIATE TN_KB_INTERMEDIATE
#define B_INPUT TN_KB_INPUT
#define B_OUTPUT TN_KB_OUTPUT
#define B_SCRATCH TN_KB_SCRATCH

/* What a tensor of the interface is. */
typedef struct {
  char *name; /* C identifier */
  const TnIrTensorType *type;
  int64_t nbytes;
  double scale; /* 0: none */
  int64_t zero_point;
  int32_t buf; /* in a pool: its buffer; else -1 */
} Io;

/* A state of a streaming model (module attribute "states"): main's
 * parameter `nin + i` and result `nout + i`. The state pool holds every
 * state's current value at `offset`, which steps read in place; a run
 * computes the new values in the workspace (planned like any value, living
 * to the end of the run) and copies them over the current ones once its
 * steps are done, so no step reads a state already overwritten. */
typedef struct {
  char *name; /* C identifier */
  const TnIrTensorType *type;
  int64_t nbytes, offset;
  uint8_t *init; /* nbytes: the initial value */
} StateIo;

typedef struct {
  Opts o;
  const TnObject *mod;
  TnObject *prog;
  TnKernProgramView v;
  int32_t nsteps, nvalues;
  /* the program's steps (in execution order) and values, borrowed */
  const TnKernStep *steps;
  const TnKernValue *vals;
  TnKernPlanInput pin; /* the same, as the planner reads them */
  TnKernPlan kp;       /* the plan; the next four alias its parts */
  Home *home;      /* per value (a view's is its base's) */
  GArray *bufs;    /* Buf */
  int32_t *scratch; /* per step: its scratch buffer or -1 */
  GArray *ins, *outs; /* Io */
  bool *const_used;   /* per constant: read at run time (scales and zero
                         points folded into parameters are not) */
  int64_t *const_off; /* per constant, in the constant pool */
  int64_t const_bytes, const_pool;
  uint64_t model_id; /* with a constant pool: tn__aot_model_id */
  TnPlanBuffer *plan;
  TnPlanResult res;
  char **fn_names; /* per step */
  char *M;         /* upper-case name */
  GArray *states;  /* StateIo; none for a stateless model */
  int64_t state_bytes; /* the states, packed */
  int64_t state_pool;  /* the pool: the states, and room for one state when
                          the copies at the end of a run form a cycle */
  int32_t conv_forms;  /* for arm_dsp: the TN_CRT_CONV_FORM_* its int8
                          convolutions take (tn__aot_emit_operators) */
  int32_t dense_forms; /* for arm_dsp: the TN_CRT_DENSE_FORM_* its int8
                          dense layers take (tn__aot_emit_operators) */
  int32_t split_steps; /* with o.parallel: the steps called through
                          tn_crt_call_split (tn__aot_emit_operators) */
} Gen;

static inline const TnKernValue *value(const Gen *g, int32_t v) {
  return &g->vals[v];
}
static inline const TnKernStep *step(const Gen *g, int32_t s) {
  return &g->steps[s];
}
static inline int32_t buf_root(Gen *g, int32_t b) {
  return tn__kernel_buf_root(g->bufs, b);
}
static inline int32_t root(const Gen *g, int32_t v) {
  const TnKernValue *x = value(g, v);
  return x->kind == TN_KV_VIEW ? x->index : v;
}

/* aot.c */
char *tn__aot_c_ident(const char *s);
const TnAny *tn__aot_opt(const TnObject *o, const char *key);
int tn__aot_opt_str(const TnObject *o, const char *key, const char **out);
bool tn__aot_is_list(const TnAny *v);
bool tn__aot_is_map(const TnAny *v);
int tn__aot_io_info(const Gen *g, bool input, int32_t i, Io *io,
                    GHashTable *used);
void tn__aot_io_clear(gpointer p);

/* aot_state.c: the states from the module's "states" attribute (after
 * the program is viewed, before analyse); their parts of run, reset, the
 * header and the descriptor */
int tn__aot_states(Gen *g);
void tn__aot_states_clear(Gen *g);
bool tn__aot_state_where(const Gen *g, GString *s, Home h);
void tn__aot_emit_state_end(Gen *g, GString *c);
/* After the plan: the state pool's size (the copies' order known). */
int tn__aot_states_plan(Gen *g);
void tn__aot_emit_state_reset(Gen *g, GString *c);
void tn__aot_emit_state_descriptor(Gen *g, GString *c);
void tn__aot_header_state(Gen *g, GString *h);
void tn__aot_header_state_fn(Gen *g, GString *h);

/* aot.c: whether step `s` runs in place */
bool tn__aot_in_place(Gen *g, int32_t s);

/* aot_emit.c */
extern const char tn__aot_preamble[];
void tn__aot_dtype_str(DLDataType t, char *buf, size_t n);
int64_t tn__aot_macs(Gen *g);
char *tn__aot_step_name(const Gen *g, int32_t s);
void tn__aot_emit_constants(Gen *g, GString *c, bool decl);
int tn__aot_emit_operators(Gen *g, GString *c);
void tn__aot_emit_pool_data(Gen *g, GString *c);
void tn__aot_emit_run(Gen *g, GString *c);
void tn__aot_emit_descriptor(Gen *g, GString *c);
void tn__aot_header(Gen *g, GString *h);
/* Whether the model takes its weights from a parameter blob (a constant
 * pool), and its id for the blob's check: a hash of `lib0` (every kernel
 * call, its parameters and its constants' offsets, and no constant value)
 * and of the constants' layout. */
bool tn__aot_params(const Gen *g);
uint64_t tn__aot_model_id(const Gen *g, const GString *lib0);
void tn__aot_emit_params_layout(Gen *g, GString *c);
void tn__aot_where(Gen *g, GString *s, int32_t v); /* where value v lives */

/* mlf.c */
void tn__aot_metadata(Gen *g, GString *s, GPtrArray *sources);
GPtrArray *tn__aot_runtime_sources(Gen *g);
TnObject *tn__aot_plan_map(Gen *g);
int tn__aot_rust(Gen *g, GString *out);
int tn__aot_map_put(TnObject **m, const char *k, TnAny v);

#endif /* TVMNODE_AOT_INTERNAL_H_ */
