/*
 * aot_internal.h: what the ahead-of-time generator's files share: the
 * options, where each value lives (its home), the buffers the planner
 * places, the interface's inputs and outputs, and the generator's state.
 * aot.c parses options and assembles the files; aot_plan.c chooses the
 * execution order, homes and live ranges and calls the planner;
 * aot_emit.c writes the C and the header; mlf.c writes metadata.json and
 * the plan as data. Private to the library.
 */
#ifndef TVMNODE_AOT_INTERNAL_H_
#define TVMNODE_AOT_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "aot_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "codegen/codegen_internal.h"
#include "kernel/kernel_internal.h"

#include <inttypes.h>

#define TN_AOT_WHO "tn_codegen_aot"


typedef struct {
  char *name; /* a C identifier, lower case */
  int64_t align;
  bool io_in_pool, consts_in_pool, rust;
  GPtrArray *pool_names; /* char * */
  GArray *pool_limits;   /* int64 */
  GArray *pool_kinds;    /* uint32: bit k set when the pool takes BufKind k */
  GPtrArray *devices;    /* char *, device names */
  GHashTable *device_of; /* operator name -> device index + 1 */
} Opts;


typedef enum { H_INPUT, H_OUTPUT, H_CONST, H_POOL } HomeKind;

typedef struct {
  HomeKind kind;
  int32_t index; /* input, output, constant, or buffer */
} Home;

typedef enum { B_INTERMEDIATE, B_INPUT, B_OUTPUT, B_SCRATCH } BufKind;

typedef struct {
  BufKind kind;
  char *name;
  int64_t size;
  int32_t first, last;
  int32_t merged; /* -1, or the buffer it was merged into (in place) */
} Buf;

/* What a tensor of the interface is. */
typedef struct {
  char *name; /* C identifier */
  const TnIrTensorType *type;
  int64_t nbytes;
  double scale; /* 0: none */
  int64_t zero_point;
  int32_t buf; /* in a pool: its buffer; else -1 */
} Io;

typedef struct {
  Opts o;
  const TnObject *mod;
  TnObject *prog;
  TnKernProgramView v;
  int32_t nsteps, nvalues;
  /* the program's steps in the order chosen (see "execution order") and
   * its values with their steps renumbered to match */
  TnKernStep *steps;
  TnKernValue *vals;
  Home *home;      /* per value (views resolved to their base) */
  GArray *bufs;    /* Buf */
  int32_t *scratch; /* per step: its scratch buffer or -1 */
  GArray *ins, *outs; /* Io */
  bool *const_used;   /* per constant: read at run time (scales and zero
                         points folded into parameters are not) */
  int64_t *const_off; /* per constant, in the constant pool */
  int64_t const_bytes, const_pool;
  TnPlanBuffer *plan;
  TnPlanResult res;
  char **fn_names; /* per step */
  char *M;         /* upper-case name */
} Gen;

static inline const TnKernValue *value(const Gen *g, int32_t v) {
  return &g->vals[v];
}
static inline const TnKernStep *step(const Gen *g, int32_t s) {
  return &g->steps[s];
}
static inline Buf *buf(Gen *g, int32_t b) {
  while (g_array_index(g->bufs, Buf, b).merged >= 0)
    b = g_array_index(g->bufs, Buf, b).merged;
  return &g_array_index(g->bufs, Buf, b);
}
static inline int32_t buf_root(Gen *g, int32_t b) {
  while (g_array_index(g->bufs, Buf, b).merged >= 0)
    b = g_array_index(g->bufs, Buf, b).merged;
  return b;
}
static inline int32_t root(const Gen *g, int32_t v) {
  const TnKernValue *x = value(g, v);
  return x->kind == TN_KV_VIEW ? x->index : v;
}

static inline int32_t new_buf(Gen *g, BufKind kind, char *name, int64_t size,
                       int32_t first, int32_t last) {
  Buf b = {kind, name, size, first, last, -1};
  g_array_append_val(g->bufs, b);
  return (int32_t)g->bufs->len - 1;
}

/* aot.c */
char *tn__aot_c_ident(const char *s);
const TnAny *tn__aot_opt(const TnObject *o, const char *key);
int tn__aot_opt_str(const TnObject *o, const char *key, const char **out);
bool tn__aot_is_list(const TnAny *v);
bool tn__aot_is_map(const TnAny *v);
void tn__aot_io_info(const Gen *g, bool input, int32_t i, Io *io,
                     GHashTable *used);
void tn__aot_io_clear(gpointer p);

/* aot_plan.c */
void tn__aot_reorder(Gen *g);
int tn__aot_analyse(Gen *g);
int tn__aot_plan(Gen *g);
bool tn__aot_in_place(Gen *g, int32_t s);

/* aot_emit.c */
extern const char tn__aot_preamble[];
int tn__aot_crt_dtype(DLDataType t);
void tn__aot_dtype_str(DLDataType t, char *buf, size_t n);
int64_t tn__aot_macs(Gen *g);
char *tn__aot_step_name(const Gen *g, int32_t s);
void tn__aot_emit_constants(Gen *g, GString *c, bool decl);
int tn__aot_emit_operators(Gen *g, GString *c);
void tn__aot_emit_pool_data(Gen *g, GString *c);
void tn__aot_emit_run(Gen *g, GString *c);
void tn__aot_emit_descriptor(Gen *g, GString *c);
void tn__aot_header(Gen *g, GString *h);

/* mlf.c */
void tn__aot_metadata(Gen *g, GString *s, GPtrArray *sources);
GPtrArray *tn__aot_runtime_sources(Gen *g);
TnObject *tn__aot_plan_map(Gen *g);
int tn__aot_rust(Gen *g, GString *out);
int tn__aot_map_put(TnObject **m, const char *k, TnAny v);

#endif /* TVMNODE_AOT_INTERNAL_H_ */
