/*
 * patch_stages.c: the PatchStages pass, patch-based execution of a model's
 * first stages. The leading operators of "main" that compute each output
 * pixel from a window of input rows (2-D convolutions, depthwise ones,
 * pooling, and the per-element operators between them: bias, requantize,
 * clip, add of two such values) are rewritten into N bands of output rows of
 * the stage's last value. Each band slices the rows of the input it needs,
 * halo included, and computes every operator of the stage on the rows its
 * consumers in that band read, with the window operators' top and bottom
 * padding kept only where the band touches the true image border (a cut
 * side reads real halo rows instead); the bands are then concatenated along
 * H. Every output row is computed by the same arithmetic over the same
 * inputs as before, so the result is bit-exact, int8 and float.
 *
 * The gain is memory: while one band runs, only that band's activations of
 * the high-resolution stage are alive, so the planner's peak moves past the
 * stage end, where activations are small. The price is the halo rows
 * computed twice, and the bands and their concatenation both alive at the
 * concatenation (the planner has no in-place concatenation). Which stage
 * end and how many bands are worth it depends on the rest of the graph, so
 * with "PatchStages.count" 0 (auto) the pass tries every stage end whose
 * output is small enough to gain, and 2, 3, 4, 6 and 8 bands, plans each
 * candidate as the code generator would (FuseOps, then the planner that
 * the executor and the generated code share; at most MAX_PLANS of them,
 * earliest ends first), and keeps the smallest workspace, fewer MACs on
 * ties; when nothing is below the plain plan the
 * module is left as it was. A count N >= 1 fixes the bands (1 changes
 * nothing); "PatchStages.end" >= 0 fixes the stage end (the index among
 * the possible ends, in evaluation order), -1 lets the plan choose it.
 * "PatchStages.isa" ("portable", the default, or "arm_dsp") is the ISA
 * the plans size the kernels' scratch for, as the code generator's option
 * "isa" does: for a Cortex-M archive the DSP convolutions' buffers, which
 * the planner may shrink at the peak ("PatchStages.shrink_scratch" 1, the
 * default; 0 as the code generator's option "shrink_scratch" false), so
 * that the candidate kept is the smallest archive.
 * The choice is recorded in the module attribute "patch_stages".
 */
#include "ir/ops_nn.h"
#include "kernel/plan_internal.h"
#include "pass/pass_internal.h"

#include <inttypes.h>

#define WHO "PatchStages"
#define MAX_ARGS 16
#define MAX_DEPTH 10000
/* Band counts auto tries: past 8 the halo costs more than the bands save
 * on the bundled models, and every candidate is a plan. */
static const int64_t AUTO_BANDS[] = {2, 3, 4, 6, 8};
/* Candidates planned at most, the earliest stage ends first (where the
 * high-resolution activations are): VWW plans 334 in 1.5-3.5 s on a
 * loaded 2-core VM, ResNet-8 40; a longer backbone stays bounded. */
#define MAX_PLANS 400

typedef enum { K_POINT, K_WINDOW } Kind;

typedef struct {
  TnObject *e;       /* the expression (borrowed from the function) */
  bool region;       /* a stage operator (or the input) */
  Kind kind;         /* for a region call */
  int64_t h;         /* output rows (region) */
  int64_t k, s, pad[4]; /* window: effective extent, stride, padding */
  int64_t hin;       /* window: input rows */
  int32_t nargs;
  int32_t arg[MAX_ARGS]; /* node index of each argument, -1 for a constant */
} Node;

typedef struct {
  GArray *nodes;    /* Node, in post-order */
  GHashTable *index; /* expression -> index + 1 */
  TnObject *params; /* the function's (tn.Array) */
  bool unsupported; /* lets or other forms: the pass leaves the function */
  int32_t depth;    /* of visit's recursion */
} Graph;

static Node *node(Graph *g, int32_t i) {
  return &g_array_index(g->nodes, Node, i);
}

static bool is_var(Graph *g, int32_t i) {
  return tn_object_is_instance(node(g, i)->e, TN_IR->var);
}

static const TnIrTensorType *tensor_type(const TnObject *e) {
  const TnObject *t = ((const TnIrExpr *)e)->checked_type;
  return t && tn_object_is_instance(t, TN_IR->tensor_type)
             ? (const TnIrTensorType *)t
             : NULL;
}

/* The shape of a 4-d tensor expression, or false. */
static bool dims4(const TnObject *e, int64_t d[4]) {
  const TnIrTensorType *t = tensor_type(e);
  if (t == NULL) return false;
  const TnShapeObj *s = (const TnShapeObj *)t->shape;
  if (s == NULL || s->ndim != 4) return false;
  for (int i = 0; i < 4; i++) d[i] = s->data[i];
  return true;
}

static const char *layout_str(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "";
}

static bool is_op(const char *op, const char *const *names) {
  for (; *names; names++)
    if (strcmp(op, *names) == 0) return true;
  return false;
}

static const char *const WINDOW_OPS[] = {"nn.conv2d", "qnn.conv2d", "nn.max_pool2d",
                                         "nn.avg_pool2d", NULL};
static const char *const POINT_OPS[] = {
    "clip",     "qnn.requantize", "nn.bias_add", "add", "qnn.add", "multiply",
    "qnn.mul",  "subtract",       "nn.relu",     "cast", NULL};

/* A constant operand of a per-element operator that is the same on every
 * row: rank below 3 (it broadcasts from the channels), or H of extent 1. */
static bool row_invariant(const TnObject *e) {
  if (!tn_object_is_instance(e, TN_IR->constant)) return false;
  DLTensor *t = tn_tensor_dltensor(((const TnIrConstant *)e)->data);
  if (t == NULL) return tn_error_set_raised(NULL), false;
  if (t->ndim < 3) return true;
  return t->ndim == 4 && t->shape[1] == 1;
}

/* Fill in the window of a conv or pool call `c` (NHWC only); false when it
 * is not one the pass splits. */
static bool window_of(const TnIrCall *c, const char *op, Node *n) {
  int64_t in[4], st[2], dil[2] = {1, 1}, ks[2];
  if (!dims4(tn_array_at(c->args, 0)->v_obj, in)) return false;
  if (strncmp(op, "nn.max", 6) == 0 || strncmp(op, "nn.avg", 6) == 0) {
    const TnIrPool2DAttrs *a = (const TnIrPool2DAttrs *)c->attrs;
    if (strcmp(layout_str(a->layout), "NHWC") != 0 || a->ceil_mode) return false;
    if (tn__ir_pair(op, c->attrs, "pool_size", 1, ks)) goto err;
  } else {
    const TnIrConv2DAttrs *a = (const TnIrConv2DAttrs *)c->attrs;
    int o, i, kh, kw;
    const TnObject *w = tn_array_at(c->args, 1)->v_obj;
    int64_t wd[4];
    if (strcmp(layout_str(a->data_layout), "NHWC") != 0 || !dims4(w, wd) ||
        !tn__ir_kernel_layout(op, layout_str(a->kernel_layout), &o, &i, &kh, &kw))
      goto err;
    if (tn__ir_pair(op, c->attrs, "dilation", 1, dil)) goto err;
    ks[0] = wd[kh];
    ks[1] = wd[kw];
  }
  if (tn__ir_pair(op, c->attrs, "strides", 1, st) ||
      tn__ir_padding4(op, c->attrs, n->pad))
    goto err;
  n->kind = K_WINDOW;
  n->k = dil[0] * (ks[0] - 1) + 1;
  n->s = st[0];
  n->hin = in[1];
  return true;
err:
  tn_error_set_raised(NULL);
  return false;
}

/* Classify call `e` once its arguments are nodes. */
static void classify(Graph *g, Node *n) {
  const TnIrCall *c = (const TnIrCall *)n->e;
  const char *op = tn__ir_call_op_name(n->e);
  int64_t d[4];
  if (op == NULL || !dims4(n->e, d) || d[0] != 1) return;
  const bool window = is_op(op, WINDOW_OPS);
  if (!window && !is_op(op, POINT_OPS)) return;
  /* the attrs read below through their structs must be of the op's type */
  const int32_t at = ((const TnIrOp *)c->op)->attrs_index;
  if (at >= 0 && (c->attrs == NULL || c->attrs->type_index != at)) return;
  int32_t data = 0;
  for (int32_t i = 0; i < n->nargs; i++) {
    if (n->arg[i] >= 0 && node(g, n->arg[i])->region) {
      int64_t ad[4];
      if ((window && i != 0) || !dims4(node(g, n->arg[i])->e, ad) ||
          (!window && ad[1] != d[1]))
        return;
      data++;
    } else if (window ? i == 0 : !row_invariant(tn_array_at(c->args, i)->v_obj)) {
      return;
    } else if (n->arg[i] >= 0) {
      return; /* a computed operand outside the stage */
    }
  }
  if (data == 0) return;
  if (op[0] == 'n' && strcmp(op, "nn.bias_add") == 0) {
    const TnIrAxisAttrs *a = (const TnIrAxisAttrs *)c->attrs;
    if (a->axis != 3 && a->axis != -1) return;
  }
  if (strcmp(op, "qnn.requantize") == 0) {
    const TnIrRequantizeAttrs *a = (const TnIrRequantizeAttrs *)c->attrs;
    if (a->axis == 1 || a->axis == -3) return;
  }
  if (window ? !window_of(c, op, n) : (n->kind = K_POINT, false)) return;
  n->region = true;
  n->h = d[1];
}

static int32_t visit(Graph *g, TnObject *e);

/* Operands are visited recursively: past MAX_DEPTH nested operands (the
 * depth the executor takes too) the function is left alone. */
static int32_t visit_node(Graph *g, TnObject *e) {
  gpointer hit = g_hash_table_lookup(g->index, e);
  if (hit) return GPOINTER_TO_INT(hit) - 1;
  Node n = {.e = e, .nargs = 0};
  const TnObject *list = NULL; /* the operands of a call or tuple */
  if (tn_object_is_instance(e, TN_IR->call)) {
    const TnIrCall *c = (const TnIrCall *)e;
    if (!tn_object_is_instance(c->op, TN_IR->op)) return g->unsupported = true, -1;
    list = c->args;
  } else if (tn_object_is_instance(e, TN_IR->tuple)) {
    list = ((const TnIrTuple *)e)->fields;
  }
  if (list) {
    const int64_t na = tn_array_size(list);
    if (na > MAX_ARGS) return g->unsupported = true, -1;
    n.nargs = (int32_t)na;
    for (int64_t i = 0; i < na; i++) {
      TnObject *a = tn_array_at(list, i)->v_obj;
      n.arg[i] = tn_object_is_instance(a, TN_IR->constant) ? -1 : visit(g, a);
      if (g->unsupported) return -1;
    }
  } else if (tn_object_is_instance(e, TN_IR->tuple_get_item)) {
    n.nargs = 1;
    n.arg[0] = visit(g, ((const TnIrTupleGetItem *)e)->tuple);
    if (g->unsupported) return -1;
  } else if (tn_object_is_instance(e, TN_IR->var)) {
    int64_t d[4];
    bool param = false;
    for (int64_t i = 0; i < tn_array_size(g->params); i++)
      param |= tn_array_at(g->params, i)->v_obj == e;
    n.region = param && dims4(e, d) && d[0] == 1;
    if (n.region) n.h = d[1];
  } else {
    g->unsupported = true; /* lets, functions, ... */
    return -1;
  }
  const int32_t ix = (int32_t)g->nodes->len;
  g_array_append_val(g->nodes, n);
  if (n.nargs && tn_object_is_instance(e, TN_IR->call)) classify(g, node(g, ix));
  g_hash_table_insert(g->index, e, GINT_TO_POINTER(ix + 1));
  return ix;
}

static int32_t visit(Graph *g, TnObject *e) {
  if (g->depth >= MAX_DEPTH) return g->unsupported = true, -1;
  g->depth++;
  const int32_t ix = visit_node(g, e);
  g->depth--;
  return ix;
}

/* The stage ending at node `end`: its region ancestors in `in` (the end
 * included). True when nothing outside reads a value of it but the end. */
static bool stage_of(Graph *g, int32_t end, bool *in) {
  const int32_t n = (int32_t)g->nodes->len;
  memset(in, 0, sizeof(bool) * (size_t)n);
  in[end] = true;
  for (int32_t i = end; i >= 0; i--) {
    if (!in[i]) continue;
    Node *x = node(g, i);
    for (int32_t a = 0; a < x->nargs; a++)
      if (x->arg[a] >= 0 && !is_var(g, x->arg[a])) in[x->arg[a]] = true;
  }
  for (int32_t i = 0; i < n; i++) {
    if (in[i] && !node(g, i)->region) return false;
    if (in[i]) continue;
    Node *x = node(g, i);
    for (int32_t a = 0; a < x->nargs; a++)
      if (x->arg[a] >= 0 && in[x->arg[a]] && x->arg[a] != end) return false;
  }
  return true;
}

/* The input rows a region node needs to compute its rows [a, b) from its
 * data argument. */
static void rows_in(const Node *x, int64_t a, int64_t b, int64_t *ia, int64_t *ib) {
  if (x->kind == K_POINT) {
    *ia = a, *ib = b;
    return;
  }
  const int64_t lo = a * x->s - x->pad[0], hi = (b - 1) * x->s - x->pad[0] + x->k;
  *ia = lo < 0 ? 0 : lo;
  *ib = hi > x->hin ? x->hin : hi;
}

/* strided_slice(e, rows [a, b) of axis 1). (transfer full) */
static TnObject *slice_rows(TnObject *e, int64_t a, int64_t b) {
  TnAny ba = tn_any_int(a), ea = tn_any_int(b), ax = tn_any_int(1);
  TnObject *begin = tn_array_new(&ba, 1), *end = tn_array_new(&ea, 1),
           *axes = tn_array_new(&ax, 1);
  TnObject *out = NULL;
  if (begin && end && axes) {
    const char *names[] = {"begin", "end", "axes"};
    TnAny vals[] = {tn_any_obj(begin), tn_any_obj(end), tn_any_obj(axes)};
    out = tn_ir_call_op("strided_slice", &e, 1, names, vals, 3);
  }
  tn_object_release(begin);
  tn_object_release(end);
  tn_object_release(axes);
  return out;
}

/* `attrs` with padding (top, left, bottom, right) = pad. (transfer full) */
static TnObject *with_padding(const TnObject *attrs, const int64_t pad[4]) {
  TnAny pv[4];
  for (int i = 0; i < 4; i++) pv[i] = tn_any_int(pad[i]);
  TnObject *parr = tn_array_new(pv, 4);
  if (parr == NULL) return NULL;
  const TnAny v = tn_any_obj(parr);
  TnObject *out = tn__pass_attrs_with(attrs, "padding", &v);
  tn_object_release(parr);
  return out;
}

/* One band: rows [a, b) of the stage's end. (transfer full) */
static TnObject *emit_band(Graph *g, const bool *in, int32_t end, int64_t a,
                           int64_t b) {
  const int32_t n = (int32_t)g->nodes->len;
  int64_t *lo = g_new(int64_t, n), *hi = g_new(int64_t, n);
  TnObject **made = g_new0(TnObject *, n);
  for (int32_t i = 0; i < n; i++) lo[i] = INT64_MAX, hi[i] = -1;
  lo[end] = a, hi[end] = b;
  for (int32_t i = end; i >= 0; i--) {
    if (!in[i]) continue;
    Node *x = node(g, i);
    int64_t ia, ib;
    rows_in(x, lo[i], hi[i], &ia, &ib);
    for (int32_t j = 0; j < x->nargs; j++) {
      int32_t v = x->arg[j];
      if (v < 0) continue;
      if (ia < lo[v]) lo[v] = ia;
      if (ib > hi[v]) hi[v] = ib;
    }
  }
  TnObject *result = NULL;
  for (int32_t p = 0; p <= end; p++) {
    if (!is_var(g, p) || hi[p] < 0) continue;
    TnObject *v = node(g, p)->e;
    made[p] = lo[p] == 0 && hi[p] == node(g, p)->h
                  ? (tn_object_retain(v), v)
                  : slice_rows(v, lo[p], hi[p]);
    if (made[p] == NULL) goto done;
  }
  for (int32_t i = 0; i <= end; i++) {
    if (!in[i]) continue;
    Node *x = node(g, i);
    const TnIrCall *c = (const TnIrCall *)x->e;
    int64_t ia, ib;
    rows_in(x, lo[i], hi[i], &ia, &ib);
    TnObject *args[MAX_ARGS] = {0};
    bool ok = true;
    for (int32_t j = 0; j < x->nargs && ok; j++) {
      int32_t v = x->arg[j];
      if (v < 0) {
        args[j] = tn_array_at(c->args, j)->v_obj;
        tn_object_retain(args[j]);
      } else if (ia == lo[v] && ib == hi[v]) {
        args[j] = made[v];
        tn_object_retain(args[j]);
      } else {
        args[j] = slice_rows(made[v], ia - lo[v], ib - lo[v]);
        ok = args[j] != NULL;
      }
    }
    TnObject *attrs = NULL;
    if (ok && x->kind == K_WINDOW) {
      int64_t pad[4] = {x->pad[0], x->pad[1], x->pad[2], x->pad[3]};
      const int64_t want_lo = lo[i] * x->s - x->pad[0],
                    want_hi = (hi[i] - 1) * x->s - x->pad[0] + x->k;
      pad[0] = ia - want_lo;
      pad[2] = want_hi - ib;
      attrs = with_padding(c->attrs, pad);
      ok = attrs != NULL;
    } else if (ok) {
      attrs = c->attrs;
      if (attrs) tn_object_retain(attrs);
    }
    if (ok) made[i] = tn_ir_call(c->op, args, x->nargs, attrs);
    tn_object_release(attrs);
    for (int32_t j = 0; j < x->nargs; j++) tn_object_release(args[j]);
    if (!ok || made[i] == NULL) goto done;
  }
  result = made[end];
  made[end] = NULL;
done:
  for (int32_t i = 0; i < n; i++) tn_object_release(made[i]);
  g_free(made);
  g_free(lo);
  g_free(hi);
  return result;
}

typedef struct {
  TnObject *end; /* the stage's last expression */
  TnObject *with; /* its replacement */
} Swap;

static TnObject *swap_rewrite(void *ctx, TnObject *orig, TnObject *rebuilt) {
  const Swap *s = ctx;
  TnObject *out = orig == s->end ? s->with : rebuilt;
  tn_object_retain(out);
  return out;
}

/* `fn` with the stage ending at `end` split into `bands`. (transfer full) */
static TnObject *split(Graph *g, TnObject *fn, const bool *in, int32_t end,
                       int64_t bands) {
  const int64_t h = node(g, end)->h;
  TnObject **parts = g_new0(TnObject *, bands);
  TnObject *out = NULL, *tuple = NULL, *cat = NULL;
  for (int64_t b = 0; b < bands; b++) {
    parts[b] = emit_band(g, in, end, b * h / bands, (b + 1) * h / bands);
    if (parts[b] == NULL) goto done;
  }
  tuple = tn_ir_tuple(parts, (int32_t)bands);
  if (tuple == NULL) goto done;
  const char *names[] = {"axis"};
  TnAny ax = tn_any_int(1);
  cat = tn_ir_call_op("concatenate", &tuple, 1, names, &ax, 1);
  if (cat == NULL) goto done;
  Swap s = {node(g, end)->e, cat};
  out = tn_ir_mutate(fn, swap_rewrite, &s);
done:
  for (int64_t b = 0; b < bands; b++) tn_object_release(parts[b]);
  g_free(parts);
  tn_object_release(tuple);
  tn_object_release(cat);
  return out;
}

/* The planned workspace and MACs of `mod` with "main" = fn, as the code
 * generator plans it (FuseOps first) for `isa` (TN_CRT_ISA_ARM_DSP: the
 * DSP forms' scratch, shrunk where the pool peaks, as an archive for a
 * Cortex-M core is planned). 0, or -1 with the error. */
static int plan_of(TnObject *mod, TnObject *fn, int32_t isa, bool shrink,
                   TnProgramStats *st) {
  TnObject *m1 = tn_ir_module_with(mod, "main", fn);
  TnObject *m2 = m1 ? tn__infer_type_module(m1, NULL) : NULL;
  TnObject *m3 = m2 ? tn__fuse_ops_module(m2, NULL) : NULL;
  TnObject *m4 = m3 ? tn__infer_type_module(m3, NULL) : NULL;
  TnObject *main = m4 ? tn_ir_module_get(m4, "main") : NULL;
  TnObject *prog = main ? tn_program_new(m4, main) : NULL;
  int rc = prog ? tn_program_stats(prog, st) : -1;
  const TnKernPlan *exec;
  TnKernPlanInput in;
  if (rc == 0 && isa == TN_CRT_ISA_ARM_DSP &&
      (rc = tn__program_plan(prog, &exec, &in)) == 0) {
    TnKernPlanOptions o = {.isa = isa, .less_scratch = shrink, .who = WHO};
    TnKernPlan kp;
    rc = tn__kernel_plan(&in, &o, &kp);
    if (rc == 0) st->arena_bytes = kp.res.size[0];
    tn__kernel_plan_clear(&kp);
  }
  tn_object_release(prog);
  tn_object_release(main);
  tn_object_release(m4);
  tn_object_release(m3);
  tn_object_release(m2);
  tn_object_release(m1);
  return rc;
}

typedef struct {
  int64_t count, end_choice;
  int32_t isa; /* TN_CRT_ISA_*: the kernels' scratch the plans take */
  bool shrink; /* and the smaller ones at the peak, for that ISA */
  TnObject *mod;
  /* what was chosen, for the module attribute */
  int64_t bands, end_index, plain_bytes, bytes;
  const char *end_op;
} Ctx;

static TnObject *patch_main(Ctx *cx, TnObject *fn) {
  const TnIrFunction *f = (const TnIrFunction *)fn;
  if (cx->count == 1) {
    tn_object_retain(fn);
    return fn;
  }
  Graph g = {g_array_new(false, true, sizeof(Node)),
             g_hash_table_new(g_direct_hash, g_direct_equal),
             f->params, false, 0};
  visit(&g, f->body);
  TnObject *best = NULL;
  const int32_t n = (int32_t)g.nodes->len;
  bool *in = g_new(bool, n > 0 ? n : 1);
  int32_t *ends = g_new(int32_t, n > 0 ? n : 1);
  int32_t nends = 0;
  for (int32_t i = 0; !g.unsupported && i < n; i++)
    if (node(&g, i)->region && !is_var(&g, i) && node(&g, i)->h >= 2 &&
        stage_of(&g, i, in))
      ends[nends++] = i;
  if (g.unsupported || nends == 0) {
    if (cx->count > 1)
      tn_error_raise_in(TN_ERR_VALUE, WHO, "'main' has no leading stage of "
                        "row-local operators (NHWC convolutions, pooling, "
                        "per-element operators) on a 4-d input to split");
    else
      best = (tn_object_retain(fn), fn);
    goto done;
  }
  if (cx->end_choice >= nends) {
    tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.end' must be "
                      "below the %" PRId32 " possible stage ends, got %" PRId64,
                      nends, cx->end_choice);
    goto done;
  }
  if (cx->count > 1 && cx->end_choice >= 0 &&
      cx->count > node(&g, ends[cx->end_choice])->h) {
    tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.count' must be "
                      "at most the %" PRId64 " output rows of the stage's end "
                      "(%s), got %" PRId64, node(&g, ends[cx->end_choice])->h,
                      tn__ir_call_op_name(node(&g, ends[cx->end_choice])->e),
                      cx->count);
    goto done;
  }
  TnProgramStats plain;
  if (plan_of(cx->mod, fn, cx->isa, cx->shrink, &plain)) goto done;
  cx->plain_bytes = plain.arena_bytes;
  int64_t best_bytes = plain.arena_bytes, best_macs = plain.macs;
  const bool fixed = cx->count > 1 && cx->end_choice >= 0;
  int32_t plans = 0;
  for (int32_t e = 0; e < nends && plans < MAX_PLANS; e++) {
    if (cx->end_choice >= 0 && e != cx->end_choice) continue;
    const int32_t end = ends[e];
    const Node *x = node(&g, end);
    const TnIrTensorType *t = tensor_type(x->e);
    int64_t d[4];
    dims4(x->e, d);
    const int64_t out_bytes = d[1] * d[2] * d[3] * ((t->dtype.bits + 7) / 8);
    /* the bands and their concatenation are alive together: a stage whose
     * output twice over fills the plain plan cannot gain */
    if (!fixed && 2 * out_bytes >= plain.arena_bytes) continue;
    stage_of(&g, end, in);
    const int64_t *counts = cx->count > 1 ? &cx->count : AUTO_BANDS;
    const size_t ncounts = cx->count > 1 ? 1 : G_N_ELEMENTS(AUTO_BANDS);
    for (size_t c = 0; c < ncounts; c++) {
      if (counts[c] > x->h) continue;
      plans++;
      TnObject *cand = split(&g, fn, in, end, counts[c]);
      TnProgramStats st;
      if (cand == NULL || plan_of(cx->mod, cand, cx->isa, cx->shrink, &st)) {
        tn_object_release(cand);
        goto done_err;
      }
      if (fixed || st.arena_bytes < best_bytes ||
          (st.arena_bytes == best_bytes && best && st.macs < best_macs)) {
        tn_object_release(best);
        best = cand;
        best_bytes = st.arena_bytes;
        best_macs = st.macs;
        cx->bands = counts[c];
        cx->end_index = e;
        cx->end_op = tn__ir_call_op_name(x->e);
        cx->bytes = st.arena_bytes;
      } else {
        tn_object_release(cand);
      }
    }
  }
  if (best == NULL && cx->count > 1) {
    /* a fixed count whose every stage end is worse than the plain plan:
     * the largest-gaining end was not found, so take the last one that
     * holds that many rows */
    for (int32_t e = nends - 1; e >= 0 && best == NULL; e--) {
      if (cx->end_choice >= 0 && e != cx->end_choice) continue;
      if (node(&g, ends[e])->h < cx->count) continue;
      stage_of(&g, ends[e], in);
      best = split(&g, fn, in, ends[e], cx->count);
      if (best == NULL) goto done_err;
      TnProgramStats st;
      if (plan_of(cx->mod, best, cx->isa, cx->shrink, &st)) goto done_err;
      cx->bands = cx->count;
      cx->end_index = e;
      cx->end_op = tn__ir_call_op_name(node(&g, ends[e])->e);
      cx->bytes = st.arena_bytes;
    }
    if (best == NULL)
      tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.count' must "
                        "be at most the output rows of a stage's end, got %"
                        PRId64, cx->count);
    goto done;
  }
  if (best == NULL) best = (tn_object_retain(fn), fn);
  goto done;
done_err:
  tn_object_release(best);
  best = NULL;
done:
  g_free(in);
  g_free(ends);
  g_array_free(g.nodes, true);
  g_hash_table_destroy(g.index);
  return best;
}

TnObject *tn__patch_stages_module(TnObject *mod, TnObject *ctx) {
  Ctx cx = {tn__pass_config_int(ctx, "PatchStages.count", 0),
            tn__pass_config_int(ctx, "PatchStages.end", -1),
            TN_CRT_ISA_PORTABLE,
            tn__pass_config_int(ctx, "PatchStages.shrink_scratch", 1) != 0,
            mod, 1, -1, -1, -1, NULL};
  const char *isa = tn__pass_config_str(ctx, "PatchStages.isa", "portable");
  if (strcmp(isa, "arm_dsp") == 0)
    cx.isa = TN_CRT_ISA_ARM_DSP;
  else if (strcmp(isa, "portable") != 0)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.isa' "
                             "must be 'portable' or 'arm_dsp', got '%s'",
                             isa), NULL;
  if (cx.count < 0)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.count' "
                             "must be 0 (auto) or a number of bands >= 1, got %"
                             PRId64, cx.count), NULL;
  if (cx.end_choice < -1)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'PatchStages.end' must "
                             "be -1 (auto) or a stage end's index >= 0, got %"
                             PRId64, cx.end_choice), NULL;
  TnObject *fn = tn_ir_module_get(mod, "main");
  if (fn == NULL) {
    tn_error_set_raised(NULL);
    tn_object_retain(mod);
    return mod;
  }
  TnObject *nf = tn__pass_is_primitive(fn) ? (tn_object_retain(fn), fn)
                                          : patch_main(&cx, fn);
  TnObject *out = NULL;
  if (nf == NULL) goto done;
  if (nf == fn && cx.bands <= 1) {
    out = mod;
    tn_object_retain(mod);
  } else {
    out = tn_ir_module_with(mod, "main", nf);
  }
  if (out && cx.bands > 1) {
    const char *keys[] = {"bands", "end_index", "end_op", "plain_bytes",
                          "bytes"};
    TnAny k[5], v[5] = {tn_any_int(cx.bands), tn_any_int(cx.end_index),
                        tn_any_cstr(cx.end_op), tn_any_int(cx.plain_bytes),
                        tn_any_int(cx.bytes)};
    for (int i = 0; i < 5; i++) k[i] = tn_any_cstr(keys[i]);
    TnObject *info = tn_map_new(k, v, 5);
    TnAny iv = tn_any_obj(info);
    TnObject *o2 = info ? tn_ir_module_with_attr(out, "patch_stages", &iv) : NULL;
    tn_object_release(info);
    tn_object_release(out);
    out = o2;
  }
done:
  tn_object_release(nf);
  tn_object_release(fn);
  return out;
}
