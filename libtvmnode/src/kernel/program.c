/*
 * program.c: a typed function lowered to a flat sequence of kernel calls
 * over planned memory, and running it.
 *
 * Building walks the function's body once: lets bind, tuples are lists of
 * values, calls of global functions and of function literals are inlined,
 * and a fused primitive function becomes one fused kernel call when its
 * body has a form the kernels compute in one go (lower.c), or its calls one
 * by one otherwise. Every tensor value is an input, a constant, a view of
 * another value (reshape and friends) or an intermediate. The steps are
 * then put in the execution order with the lowest peak and planned once by
 * the planner the code generator uses (plan.c), so that the executor runs
 * in the arena the generated code would: intermediates and kernel scratch
 * in one arena, in-place steps writing over their dying input, outputs
 * computed straight into the new tensors a run returns. Inputs and
 * constants are only ever read.
 */
#include "kernel/plan_internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>

#define MAX_DEPTH 10000

#define V_INPUT TN_KV_INPUT
#define V_CONST TN_KV_CONST
#define V_ARENA TN_KV_ARENA
#define V_VIEW TN_KV_VIEW
typedef TnKernValue Value;
typedef TnKernStep Step;

typedef struct {
  TnObject header;
  TnObject *fn, *mod; /* kept alive: values borrow their types */
  GArray *values;     /* Value */
  GArray *steps;      /* Step */
  GPtrArray *consts;  /* tn.Tensor, owned */
  GPtrArray *inputs;  /* names, g_strdup'd */
  GArray *outputs;    /* int32 value ids */
  TnKernPlan plan;    /* where every value lives */
  int64_t arena_bytes, lower_bound, scratch_bytes, macs;
  /* atomics: stats may be read while another thread runs the program */
  atomic_int profiling;
  atomic_llong runs, run_ns, kernel_ns;
  char *arena_block, *arena;
  const void **ptrs; /* one per value, per run */
  atomic_int busy;
  /* tn_program_set_threads: the pool (NULL when off) and each step's
   * parts, `threads` slots a step, nparts[s] of them used (0: run whole);
   * the counts as atomics too, which stats may read during a change */
  int32_t threads;
  TnKernThreads *pool;
  TnKernPart *parts;
  int32_t *nparts;
  atomic_int threads_set, steps_cut;
} Program;

static int32_t g_program_type = -1;

static void threads_clear(Program *p) {
  tn__kernel_threads_free(p->pool);
  p->pool = NULL;
  if (p->nparts)
    for (guint s = 0; s < p->steps->len; s++)
      for (int32_t i = 0; i < p->nparts[s]; i++)
        g_free(p->parts[(size_t)s * p->threads + i].params);
  g_free(p->parts), g_free(p->nparts);
  p->parts = NULL, p->nparts = NULL;
  p->threads = 1;
  atomic_store(&p->threads_set, 1);
  atomic_store(&p->steps_cut, 0);
}

static void program_deleter(TnObject *obj, int flags) {
  Program *p = (Program *)obj;
  if (flags & TN_DELETER_DESTRUCT) {
    threads_clear(p);
    if (p->steps) {
      for (guint i = 0; i < p->steps->len; i++) {
        Step *s = &g_array_index(p->steps, Step, i);
        g_free(s->k.params);
        tn_object_release(s->k.compute);
      }
      g_array_free(p->steps, TRUE);
    }
    if (p->values) g_array_free(p->values, TRUE);
    if (p->consts) g_ptr_array_free(p->consts, TRUE);
    if (p->inputs) g_ptr_array_free(p->inputs, TRUE);
    if (p->outputs) g_array_free(p->outputs, TRUE);
    tn__kernel_plan_clear(&p->plan);
    g_free(p->arena_block);
    g_free(p->ptrs);
    tn_object_release(p->fn);
    tn_object_release(p->mod);
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(obj);
}

static const Program *as_program(const TnObject *o, const char *who) {
  if (o == NULL || o->type_index != g_program_type) {
    tn_error_raise_in(TN_ERR_TYPE, who, "expected a kernel.Program, got %s",
                      tn_object_type_key(o));
    return NULL;
  }
  return (const Program *)o;
}

/* ---- building ------------------------------------------------------------- */

typedef struct Scope {
  GHashTable *memo; /* expr -> ref, stored non-zero (see scope_bind) */
  struct Scope *parent;
} Scope;

typedef struct {
  Program *p;
  const TnObject *mod;
  GPtrArray *tuples; /* GArray of int32 refs */
  int depth;
  int in_primitive; /* lowering the body of a fused primitive function */
} Builder;

/* A ref is a value id (>= 0) or a tuple (-2 - its index); ERR is failure. */
#define ERR INT32_MIN
static bool is_tuple(int32_t r) { return r < -1 && r != ERR; }
static GArray *tuple_at(Builder *b, int32_t r) {
  return g_ptr_array_index(b->tuples, -2 - r);
}

/* Value ids (>= 0) are stored plus one and tuple refs (<= -2) as they
 * are, so no ref is stored as NULL, which the table reads as "absent". */
static void scope_bind(Scope *s, const TnObject *e, int32_t ref) {
  g_hash_table_insert(s->memo, (gpointer)e,
                      GINT_TO_POINTER(ref >= 0 ? ref + 1 : ref));
}
static bool scope_find(const Scope *s, const TnObject *e, bool up,
                       int32_t *ref) {
  for (; s; s = up ? s->parent : NULL) {
    gpointer v = g_hash_table_lookup(s->memo, e);
    if (v) {
      int32_t x = GPOINTER_TO_INT(v);
      *ref = x > 0 ? x - 1 : x;
      return true;
    }
  }
  return false;
}

static Value *val(Builder *b, int32_t id) {
  return &g_array_index(b->p->values, Value, id);
}

static const TnIrTensorType *tensor_type(const TnObject *e) {
  const TnObject *t = ((const TnIrExpr *)e)->checked_type;
  if (t == NULL && tn__ir_is(e, TN_IR->var))
    t = ((const TnIrVar *)e)->type_annotation;
  return t && tn__ir_is(t, TN_IR->tensor_type) ? (const TnIrTensorType *)t
                                               : NULL;
}

/* The bytes of a tensor of type `t`; -1 when that overflows (a type can
 * name a tensor no memory holds). */
static int64_t nbytes_of(const TnIrTensorType *t) {
  int64_t n;
  if (tn__ckd_numel(&n, tn__ir_dims(t), tn__ir_ndim(t), NULL) ||
      tn__ckd_mul(&n, n, ((int64_t)t->dtype.bits * t->dtype.lanes + 7) / 8))
    return -1;
  return n;
}

static int32_t add_value(Builder *b, TnKernValueKind kind, int32_t index,
                         const TnIrTensorType *t) {
  int64_t nbytes = nbytes_of(t);
  if (nbytes < 0) {
    GString *s = g_string_new(NULL);
    tn__ir_print_type(s, (const TnObject *)t);
    tn_error_raise_in(TN_ERR_VALUE, "tn_program_new", "a value of type %s "
                      "would not fit in memory", s->str);
    g_string_free(s, TRUE);
    return ERR;
  }
  Value v = {kind, index, 0, nbytes, t, -1, -1};
  g_array_append_val(b->p->values, v);
  return (int32_t)b->p->values->len - 1;
}

static int untyped(const TnObject *e, const char *what) {
  GString *s = g_string_new(NULL);
  const TnObject *t = ((const TnIrExpr *)e)->checked_type;
  if (t) tn__ir_print_type(s, t);
  tn_error_raise_in(TN_ERR_TYPE, "tn_program_new", "%s has %s%s; run "
                    "InferType first (only tensor values are supported)",
                    what, t ? "type " : "no type", s->str);
  g_string_free(s, TRUE);
  return ERR;
}

static int32_t lower_expr(Builder *b, Scope *s, const TnObject *e);

/* The constant tensor an expression stands for, or NULL. */
typedef struct {
  Builder *b;
  Scope *s;
} ConstCtx;

static TnObject *const_of(void *ctx, const TnObject *e) {
  ConstCtx *c = ctx;
  if (tn__ir_is(e, TN_IR->constant)) return ((const TnIrConstant *)e)->data;
  int32_t r;
  if (tn__ir_is(e, TN_IR->var) && scope_find(c->s, e, true, &r) && r >= 0 &&
      val(c->b, r)->kind == V_CONST)
    return g_ptr_array_index(c->b->p->consts, val(c->b, r)->index);
  return NULL;
}

static const TnKernEntry *kernel_entry(const TnObject *op);

/* Append a step for `k` reading values `ins` (k->in indexes them) and
 * producing a value of type `out`; returns the output ref. Takes `k`'s
 * params. */
static int32_t add_step(Builder *b, TnKernCall *k, const char *op,
                        const int32_t *ins, const TnIrTensorType *out) {
  Step st = {0};
  st.k = *k;
  st.op = op;
  for (int32_t i = 0; i < k->nin; i++) st.in[i] = ins[k->in[i]];
  int32_t id;
  if (k->run == NULL && k->compute == NULL) {
    int32_t src = st.in[0];
    Value *sv = val(b, src);
    int32_t root = sv->kind == V_VIEW ? sv->index : src;
    if (val(b, root)->nbytes != nbytes_of(out)) {
      g_free(k->params);
      return tn_error_raise_in(TN_ERR_VALUE, op, "a view changes the size "
                               "of its input"), ERR;
    }
    g_free(k->params);
    return add_value(b, V_VIEW, root, out);
  }
  id = add_value(b, V_ARENA, -1, out);
  if (id == ERR) {
    g_free(k->params);
    return ERR;
  }
  st.out = id;
  g_array_append_val(b->p->steps, st);
  return id;
}

/* The kernels count elements, and index every dimension and every row-
 * major stride, in int32: a tensor they see spans at most INT32_MAX
 * elements, an empty dimension counted as 1 (as tn__ckd_span_bytes). Then
 * no product the lowering forms of its dimensions overflows. -1 with a
 * ValueError naming the argument (`i` == nargs: the result) otherwise. */
static int too_large_for_kernels(const char *op, int32_t i, int32_t n,
                                 const TnIrTensorType *t) {
  int64_t span;
  if (!tn__ckd_span_bytes(&span, tn__ir_dims(t), tn__ir_ndim(t), 1, NULL) &&
      span <= INT32_MAX)
    return 0;
  GString *s = g_string_new(NULL);
  tn__ir_print_type(s, (const TnObject *)t);
  char what[32];
  if (i < n) g_snprintf(what, sizeof what, "argument %d", i);
  else g_strlcpy(what, "the result", sizeof what);
  tn_error_raise_in(TN_ERR_VALUE, op, "%s has type %s: more than %" PRId32
                    " elements (an empty dimension counted as 1), too large "
                    "for the kernels, which index in int32", what, s->str,
                    INT32_MAX);
  g_string_free(s, TRUE);
  return -1;
}

/* Lower a call of an operator whose arguments are the refs `args`. */
static int32_t lower_op_call(Builder *b, const TnIrCall *c,
                             const int32_t *args, int32_t nargs) {
  const TnIrOp *op = (const TnIrOp *)c->op;
  const char *name = ((const TnStringObj *)op->name)->data;
  const TnIrTensorType *out = tensor_type((const TnObject *)c);
  if (out == NULL) return untyped((const TnObject *)c, name);
  /* flatten tuple arguments (concatenate takes one) */
  int32_t flat[TN_KERN_MAX_IN], n = 0;
  for (int32_t i = 0; i < nargs; i++) {
    if (is_tuple(args[i])) {
      GArray *t = tuple_at(b, args[i]);
      for (guint j = 0; j < t->len; j++) {
        int32_t r = g_array_index(t, int32_t, j);
        if (is_tuple(r) || n == TN_KERN_MAX_IN)
          return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, name, "nested "
                                   "tuples or more than %d inputs",
                                   TN_KERN_MAX_IN), ERR;
        flat[n++] = r;
      }
    } else {
      if (n == TN_KERN_MAX_IN)
        return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, name, "more than %d "
                                 "inputs", TN_KERN_MAX_IN), ERR;
      flat[n++] = args[i];
    }
  }
  TnKernArgs a = {.op = name, .attrs = c->attrs, .nargs = n, .out = out};
  for (int32_t i = 0; i < n; i++) {
    Value *v = val(b, flat[i]);
    a.types[i] = v->type;
    a.consts[i] = v->kind == V_CONST
                      ? g_ptr_array_index(b->p->consts, v->index)
                      : NULL;
  }
  TnKernCall k = {0};
  const TnKernEntry *entry = kernel_entry(c->op);
  if (entry) {
    for (int32_t i = 0; i <= n; i++)
      if (too_large_for_kernels(name, i, n, i < n ? a.types[i] : out))
        return ERR;
    if (entry->lower(&a, &k)) {
      g_free(k.params);
      return ERR;
    }
  } else if (tn_error_peek_raised()) {
    return ERR;
  } else {
    const TnAny *f = tn_ir_op_get_attr(c->op, TN_OP_ATTR_COMPUTE);
    if (f == NULL || f->type_index != TN_TYPE_FUNCTION)
      return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, name, "the operator "
                               "has no kernel (attribute '%s') and no host "
                               "compute function (attribute '%s')",
                               TN_OP_ATTR_KERNEL, TN_OP_ATTR_COMPUTE), ERR;
    k.compute = f->v_obj;
    tn_object_retain(k.compute);
    k.attrs = c->attrs;
    k.kernel = "compute";
    k.nin = n;
    for (int32_t i = 0; i < n; i++) k.in[i] = i;
  }
  return add_step(b, &k, name, flat, out);
}

static bool is_primitive(const TnIrFunction *f) {
  if (f->attrs == NULL) return false;
  TnAny key = tn_any_cstr("Primitive");
  const TnAny *v = tn_map_find(f->attrs, &key);
  return v && v->type_index == TN_TYPE_INT && v->v_int64 != 0;
}

#define NO_MATCH (INT32_MIN + 1)

/* `e` (in a primitive's scope `s`) as one fused kernel call: its ref, ERR
 * on error, NO_MATCH when it has no fused form. */
static int32_t lower_fused(Builder *b, Scope *s, const TnObject *e) {
  TnKernCall k = {0};
  const TnObject *leaves[TN_KERN_MAX_IN];
  int32_t nleaves = 0;
  ConstCtx cc = {b, s};
  int m = tn__kernel_lower_fused(e, &k, leaves, &nleaves, const_of, &cc);
  if (m <= 0) {
    g_free(k.params);
    return m < 0 ? ERR : NO_MATCH;
  }
  int32_t ins[TN_KERN_MAX_IN];
  for (int32_t i = 0; i < nleaves; i++) {
    ins[i] = lower_expr(b, s, leaves[i]);
    if (ins[i] == ERR || is_tuple(ins[i])) {
      g_free(k.params);
      if (ins[i] != ERR)
        tn_error_raise_in(TN_ERR_TYPE, "tn_program_new", "a tuple where a "
                          "tensor is expected");
      return ERR;
    }
  }
  const TnIrTensorType *out = tensor_type(e);
  if (out == NULL) {
    g_free(k.params);
    return untyped(e, "a fused function");
  }
  return add_step(b, &k, k.base_op ? k.base_op : k.kernel, ins, out);
}

/* Inline a call of function `fn` with argument refs `args`. */
static int32_t inline_call(Builder *b, Scope *s, const TnIrFunction *fn,
                           const int32_t *args, int32_t nargs) {
  int64_t np = tn_array_size(fn->params);
  if (np != nargs)
    return tn_error_raise_in(TN_ERR_TYPE, "tn_program_new", "a function of "
                             "%" PRId64 " parameters called with %d "
                             "arguments", np, nargs), ERR;
  Scope inner = {g_hash_table_new(NULL, NULL), s};
  for (int32_t i = 0; i < nargs; i++)
    scope_bind(&inner, tn_array_at(fn->params, i)->v_obj, args[i]);
  /* A primitive's body becomes one fused kernel, or else runs op by op
   * with every part of it that has a fused form lowered as one (a residual
   * add fused after a convolution leaves conv + bias + requantize inside);
   * see lower_expr. */
  bool prim = is_primitive(fn);
  b->in_primitive += prim;
  int32_t r = lower_expr(b, &inner, fn->body);
  b->in_primitive -= prim;
  g_hash_table_destroy(inner.memo);
  return r;
}

static int32_t lower_call(Builder *b, Scope *s, const TnIrCall *c) {
  int64_t nargs = tn_array_size(c->args);
  if (nargs > TN_KERN_MAX_IN)
    return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, "tn_program_new",
                             "a call with %" PRId64 " arguments", nargs), ERR;
  int32_t args[TN_KERN_MAX_IN];
  for (int64_t i = 0; i < nargs; i++) {
    args[i] = lower_expr(b, s, tn_array_at(c->args, i)->v_obj);
    if (args[i] == ERR) return ERR;
  }
  const TnObject *op = c->op;
  if (tn__ir_is(op, TN_IR->op)) {
    for (int64_t i = 0; i < nargs; i++)
      if (is_tuple(args[i]) &&
          strcmp(tn__ir_call_op_name((const TnObject *)c), "concatenate"))
        return tn_error_raise_in(TN_ERR_TYPE, tn__ir_call_op_name(
                                     (const TnObject *)c),
                                 "argument %" PRId64 " is a tuple", i), ERR;
    return lower_op_call(b, c, args, (int32_t)nargs);
  }
  if (tn__ir_is(op, TN_IR->global_var)) {
    const char *name = ((const TnStringObj *)((const TnIrGlobalVar *)op)
                            ->name_hint)->data;
    TnObject *fn = b->mod ? tn_ir_module_get(b->mod, name) : NULL;
    if (fn == NULL) {
      if (!tn_error_peek_raised())
        tn_error_raise_in(TN_ERR_KEY, "tn_program_new", "no global function "
                          "'%s'", name);
      return ERR;
    }
    /* the module holds the function: the reference taken here can go */
    tn_object_release(fn);
    return inline_call(b, s, (const TnIrFunction *)fn, args, (int32_t)nargs);
  }
  if (tn__ir_is(op, TN_IR->function))
    return inline_call(b, s, (const TnIrFunction *)op, args, (int32_t)nargs);
  return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, "tn_program_new", "calling "
                           "a %s is not supported", tn_object_type_key(op)),
         ERR;
}

/* The operands of a call, tuple or tuple item that lower_expr reaches
 * (in `kids`, at most TN_KERN_MAX_IN of a call; a tuple's may be more:
 * `*n` is then the count and only the first `cap` are stored). */
static int32_t operands(const TnObject *e, const TnObject **kids,
                        int32_t cap) {
  const TnObject *arr = NULL;
  if (tn__ir_is(e, TN_IR->call)) arr = ((const TnIrCall *)e)->args;
  else if (tn__ir_is(e, TN_IR->tuple)) arr = ((const TnIrTuple *)e)->fields;
  else if (tn__ir_is(e, TN_IR->tuple_get_item)) {
    if (cap > 0) kids[0] = ((const TnIrTupleGetItem *)e)->tuple;
    return 1;
  } else
    return 0;
  int64_t n = tn_array_size(arr);
  for (int64_t i = 0; i < n && i < cap; i++)
    kids[i] = tn_array_at(arr, i)->v_obj;
  return (int32_t)(n < INT32_MAX ? n : INT32_MAX);
}

/*
 * Lower the operands under `e` bottom-up with an explicit stack, so that
 * lowering `e` itself finds each of them done (scope_find) and recurses
 * no deeper: a chain of a million calls nests a million deep, and the
 * recursion would need that much C stack. Calls, tuples and tuple items
 * are walked and constants lowered in the order the recursion takes;
 * what else they hold (variables, lets, functions) is lowered by
 * lower_expr as before. Not inside a primitive,
 * whose body is matched whole against the fused kernels.
 */
static int lower_operands_first(Builder *b, Scope *s, const TnObject *e) {
  typedef struct {
    const TnObject *e;
    bool expanded;
  } Item;
  const TnObject *kids[TN_KERN_MAX_IN];
  int32_t n = operands(e, kids, TN_KERN_MAX_IN), r, todo = 0;
  for (int32_t i = 0; i < n && i < TN_KERN_MAX_IN; i++)
    todo += operands(kids[i], NULL, 0) > 0 && !scope_find(s, kids[i], false, &r);
  if (todo == 0) return 0; /* the usual case: nothing deep below */
  /* pushed last to first, so that operands are lowered first to last, the
   * order the recursion takes (the program's own order of steps) */
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(Item));
  for (int32_t i = (n < TN_KERN_MAX_IN ? n : TN_KERN_MAX_IN) - 1; i >= 0; i--)
    g_array_append_val(stack, ((Item){kids[i], false}));
  int rc = 0;
  while (stack->len && rc == 0) {
    Item *top = &g_array_index(stack, Item, stack->len - 1);
    const TnObject *x = top->e;
    if (scope_find(s, x, false, &r) ||
        !(tn__ir_is(x, TN_IR->call) || tn__ir_is(x, TN_IR->tuple) ||
          tn__ir_is(x, TN_IR->tuple_get_item) ||
          tn__ir_is(x, TN_IR->constant))) {
      g_array_set_size(stack, stack->len - 1);
      continue;
    }
    /* a constant in its turn, so constants are numbered as before */
    if (top->expanded || tn__ir_is(x, TN_IR->constant)) {
      g_array_set_size(stack, stack->len - 1);
      if (lower_expr(b, s, x) == ERR) rc = -1;
      continue;
    }
    top->expanded = true;
    /* a tuple of more than TN_KERN_MAX_IN fields: its own lowering
     * recurses into the rest, which are rarely deep */
    n = operands(x, kids, TN_KERN_MAX_IN);
    for (int32_t i = (n < TN_KERN_MAX_IN ? n : TN_KERN_MAX_IN) - 1; i >= 0; i--)
      g_array_append_val(stack, ((Item){kids[i], false}));
  }
  g_array_free(stack, TRUE);
  return rc;
}

static int32_t lower_expr(Builder *b, Scope *s, const TnObject *e) {
  int32_t r;
  if (scope_find(s, e, tn__ir_is(e, TN_IR->var), &r)) return r;
  if (!b->in_primitive && lower_operands_first(b, s, e)) return ERR;
  if (tn__ir_is(e, TN_IR->var)) {
    const TnObject *n = ((const TnIrVar *)e)->name_hint;
    return tn_error_raise_in(TN_ERR_VALUE, "tn_program_new", "free variable "
                             "%%%s", n ? ((const TnStringObj *)n)->data : "?"),
           ERR;
  }
  if (++b->depth > MAX_DEPTH) {
    b->depth--;
    return tn_error_raise_in(TN_ERR_VALUE, "tn_program_new", "expressions "
                             "nest deeper than %d", MAX_DEPTH), ERR;
  }
  r = ERR;
  if (tn__ir_is(e, TN_IR->constant)) {
    const TnIrTensorType *t = tensor_type(e);
    TnObject *data = ((const TnIrConstant *)e)->data;
    int contiguous = 0;
    tn_tensor_is_contiguous(data, &contiguous);
    if (t == NULL) {
      r = untyped(e, "a constant");
    } else if (!contiguous ||
               tn_tensor_dltensor(data)->device.device_type != kDLCPU) {
      tn_error_raise_in(TN_ERR_VALUE, "tn_program_new", "a constant is not "
                        "a compact CPU tensor");
    } else {
      tn_object_retain(data);
      g_ptr_array_add(b->p->consts, data);
      r = add_value(b, V_CONST, (int32_t)b->p->consts->len - 1, t);
    }
  } else if (tn__ir_is(e, TN_IR->call)) {
    r = b->in_primitive ? lower_fused(b, s, e) : NO_MATCH;
    if (r == NO_MATCH) r = lower_call(b, s, (const TnIrCall *)e);
  } else if (tn__ir_is(e, TN_IR->tuple)) {
    const TnIrTuple *t = (const TnIrTuple *)e;
    GArray *refs = g_array_new(FALSE, FALSE, sizeof(int32_t));
    for (int64_t i = 0; i < tn_array_size(t->fields); i++) {
      int32_t f = lower_expr(b, s, tn_array_at(t->fields, i)->v_obj);
      if (f == ERR) {
        g_array_free(refs, TRUE);
        refs = NULL;
        break;
      }
      g_array_append_val(refs, f);
    }
    if (refs) {
      g_ptr_array_add(b->tuples, refs);
      r = -2 - (int32_t)(b->tuples->len - 1);
    }
  } else if (tn__ir_is(e, TN_IR->tuple_get_item)) {
    const TnIrTupleGetItem *g = (const TnIrTupleGetItem *)e;
    int32_t t = lower_expr(b, s, g->tuple);
    if (t != ERR) {
      if (!is_tuple(t) || g->index < 0 ||
          g->index >= (int64_t)tuple_at(b, t)->len)
        tn_error_raise_in(TN_ERR_INDEX, "tn_program_new", "tuple index %"
                          PRId64 " is out of range", g->index);
      else
        r = g_array_index(tuple_at(b, t), int32_t, g->index);
    }
  } else if (tn__ir_is(e, TN_IR->let)) {
    /* a chain of lets in a loop, not a recursion per let */
    const TnObject *x = e;
    int32_t v = 0;
    while (v != ERR && tn__ir_is(x, TN_IR->let)) {
      const TnIrLet *l = (const TnIrLet *)x;
      v = lower_expr(b, s, l->value);
      if (v != ERR) scope_bind(s, l->var, v);
      x = l->body;
    }
    if (v != ERR) r = lower_expr(b, s, x);
  } else {
    tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, "tn_program_new", "a %s as a "
                      "value is not supported (only tensors and tuples of "
                      "them)", tn_object_type_key(e));
  }
  b->depth--;
  if (r != ERR) scope_bind(s, e, r);
  return r;
}

static void flatten_outputs(Builder *b, int32_t r) {
  if (!is_tuple(r)) {
    g_array_append_val(b->p->outputs, r);
    return;
  }
  GArray *t = tuple_at(b, r);
  for (guint i = 0; i < t->len; i++)
    flatten_outputs(b, g_array_index(t, int32_t, i));
}

/* ---- planning ------------------------------------------------------------- */

static int32_t root_of(const Program *p, int32_t v) {
  const Value *x = &g_array_index(p->values, Value, v);
  return x->kind == V_VIEW ? x->index : v;
}

static void plan_input(const Program *p, TnKernPlanInput *in) {
  *in = (TnKernPlanInput){(const TnKernValue *)(void *)p->values->data,
                          (int32_t)p->values->len,
                          (const TnKernStep *)(void *)p->steps->data,
                          (int32_t)p->steps->len,
                          (const int32_t *)(void *)p->outputs->data,
                          (int32_t)p->outputs->len, (int32_t)p->inputs->len};
}

/* Each value's step: the one computing it, and the last reading it. */
static void def_last(Program *p) {
  int32_t nsteps = (int32_t)p->steps->len;
  for (guint v = 0; v < p->values->len; v++)
    g_array_index(p->values, Value, v).def =
        g_array_index(p->values, Value, v).last = -1;
  for (int32_t s = 0; s < nsteps; s++) {
    Step *st = &g_array_index(p->steps, Step, s);
    for (int32_t i = 0; i < st->k.nin; i++)
      g_array_index(p->values, Value, root_of(p, st->in[i])).last = s;
    g_array_index(p->values, Value, st->out).def = s;
  }
  for (guint i = 0; i < p->outputs->len; i++)
    g_array_index(p->values, Value,
                  root_of(p, g_array_index(p->outputs, int32_t, i)))
        .last = nsteps;
  for (guint v = 0; v < p->values->len; v++) {
    Value *x = &g_array_index(p->values, Value, v);
    if (x->kind == V_ARENA && x->last < x->def)
      x->last = x->def; /* computed, never read */
  }
}

/* Order the steps, then plan where every value lives, once. */
static int plan(Program *p) {
  int32_t nsteps = (int32_t)p->steps->len;
  TnKernPlanInput in;
  plan_input(p, &in);
  int32_t *order = g_new(int32_t, nsteps > 0 ? nsteps : 1);
  tn__kernel_schedule(&in, order);
  GArray *steps = g_array_sized_new(FALSE, FALSE, sizeof(Step),
                                    (guint)nsteps);
  for (int32_t k = 0; k < nsteps; k++)
    g_array_append_val(steps, g_array_index(p->steps, Step, order[k]));
  g_free(order);
  g_array_free(p->steps, TRUE);
  p->steps = steps;
  def_last(p);
  for (int32_t s = 0; s < nsteps; s++) {
    Step *st = &g_array_index(p->steps, Step, s);
    p->macs += st->k.macs;
  }
  plan_input(p, &in);
  TnKernPlanOptions o = {.who = "tn_program_new"};
  if (tn__kernel_plan(&in, &o, &p->plan)) return -1;
  p->arena_bytes = p->plan.res.size[0];
  p->lower_bound = p->plan.res.lower_bound;
  for (guint b = 0; b < p->plan.bufs->len; b++) {
    const TnKernBuf *x = &g_array_index(p->plan.bufs, TnKernBuf, b);
    if (x->kind == TN_KB_SCRATCH && x->size > p->scratch_bytes)
      p->scratch_bytes = x->size;
  }
  for (guint v = 0; v < p->values->len; v++) {
    Value *x = &g_array_index(p->values, Value, v);
    TnKernHome h = p->plan.home[v];
    if (x->kind == V_ARENA && h.kind == TN_KH_POOL)
      x->offset = p->plan.plan[h.index].offset;
  }
  return 0;
}

/* ---- public ---------------------------------------------------------------- */

TN_API TnObject *tn_program_new(const TnObject *mod, const TnObject *fn) {
  const char *who = "tn_program_new";
  if (tn__check_object(fn, TN_IR->function, who, "fn")) return NULL;
  if (mod && tn__check_object(mod, TN_IR->module, who, "mod")) return NULL;
  /* Sizes and kernels come from the saved types: they must be the truth. */
  if (tn_ir_well_formed(mod ? (TnObject *)mod : (TnObject *)fn)) return NULL;
  Program *p = tn__object_malloc(sizeof(Program), 0, g_program_type, who);
  if (p == NULL) return NULL;
  tn__object_init(&p->header, g_program_type, program_deleter);
  tn__object_zero_body(p, sizeof(Program));
  p->threads = 1;
  atomic_store(&p->threads_set, 1);
  tn_object_retain((TnObject *)fn);
  p->fn = (TnObject *)fn;
  if (mod) tn_object_retain((TnObject *)mod);
  p->mod = (TnObject *)mod;
  p->values = g_array_new(FALSE, FALSE, sizeof(Value));
  p->steps = g_array_new(FALSE, FALSE, sizeof(Step));
  p->consts = g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release);
  p->inputs = g_ptr_array_new_with_free_func(g_free);
  p->outputs = g_array_new(FALSE, FALSE, sizeof(int32_t));
  Builder b = {p, mod, g_ptr_array_new_with_free_func(
                           (GDestroyNotify)g_array_unref), 0};
  Scope top = {g_hash_table_new(NULL, NULL), NULL};
  const TnIrFunction *f = (const TnIrFunction *)fn;
  int32_t r = 0;
  for (int64_t i = 0; i < tn_array_size(f->params); i++) {
    const TnObject *v = tn_array_at(f->params, i)->v_obj;
    const TnIrTensorType *t = tensor_type(v);
    const TnObject *nm = ((const TnIrVar *)v)->name_hint;
    char *name = g_strdup(nm ? ((const TnStringObj *)nm)->data : "");
    g_ptr_array_add(p->inputs, name);
    if (t == NULL) {
      r = untyped(v, "parameter");
      break;
    }
    if ((r = add_value(&b, V_INPUT, (int32_t)i, t)) == ERR) break;
    scope_bind(&top, v, r);
  }
  if (r != ERR) r = lower_expr(&b, &top, f->body);
  if (r != ERR) flatten_outputs(&b, r);
  g_hash_table_destroy(top.memo);
  g_ptr_array_free(b.tuples, TRUE);
  if (r == ERR || plan(p)) {
    tn_object_release((TnObject *)p);
    return NULL;
  }
  return (TnObject *)p;
}

int tn__program_plan(const TnObject *prog, const TnKernPlan **plan,
                     TnKernPlanInput *in) {
  const Program *p = as_program(prog, "tn__program_plan");
  if (p == NULL) return -1;
  *plan = &p->plan;
  plan_input(p, in);
  return 0;
}

int tn__program_view(const TnObject *prog, TnKernProgramView *out) {
  const Program *p = as_program(prog, "tn__program_view");
  if (p == NULL) return -1;
  out->values = p->values, out->steps = p->steps, out->consts = p->consts;
  out->inputs = p->inputs, out->outputs = p->outputs;
  return 0;
}

TN_API int32_t tn_program_num_inputs(const TnObject *prog) {
  const Program *p = as_program(prog, "tn_program_num_inputs");
  return p ? (int32_t)p->inputs->len : -1;
}

TN_API int32_t tn_program_num_outputs(const TnObject *prog) {
  const Program *p = as_program(prog, "tn_program_num_outputs");
  return p ? (int32_t)p->outputs->len : -1;
}

static const Value *io_value(const TnObject *prog, int32_t i, bool input,
                             const char *who) {
  const Program *p = as_program(prog, who);
  if (p == NULL) return NULL;
  int32_t n = input ? (int32_t)p->inputs->len : (int32_t)p->outputs->len;
  if (i < 0 || i >= n) {
    tn_error_raise_in(TN_ERR_INDEX, who, "index %d out of range for %d %s", i,
                      n, input ? "inputs" : "outputs");
    return NULL;
  }
  int32_t v = input ? i : g_array_index(p->outputs, int32_t, i);
  return &g_array_index(p->values, Value, v);
}

TN_API const TnObject *tn_program_input_type(const TnObject *prog,
                                             int32_t i) {
  const Value *v = io_value(prog, i, true, "tn_program_input_type");
  return v ? (const TnObject *)v->type : NULL;
}

TN_API const TnObject *tn_program_output_type(const TnObject *prog,
                                              int32_t i) {
  const Value *v = io_value(prog, i, false, "tn_program_output_type");
  return v ? (const TnObject *)v->type : NULL;
}

TN_API const char *tn_program_input_name(const TnObject *prog, int32_t i) {
  if (io_value(prog, i, true, "tn_program_input_name") == NULL) return NULL;
  return g_ptr_array_index(((const Program *)prog)->inputs, i);
}

TN_API int tn_program_stats(const TnObject *prog, TnProgramStats *out) {
  const Program *p = as_program(prog, "tn_program_stats");
  if (p == NULL) return -1;
  if (out == NULL) return tn__raise_null("tn_program_stats", "out");
  out->steps = (int32_t)p->steps->len;
  out->arena_bytes = p->arena_bytes;
  out->arena_lower_bound = p->lower_bound;
  out->scratch_bytes = p->scratch_bytes;
  out->macs = p->macs;
  out->runs = atomic_load_explicit(&p->runs, memory_order_relaxed);
  out->run_ns = atomic_load_explicit(&p->run_ns, memory_order_relaxed);
  out->kernel_ns = atomic_load_explicit(&p->kernel_ns, memory_order_relaxed);
  return 0;
}

TN_API int tn_program_set_profiling(TnObject *prog, int on) {
  Program *p = (Program *)as_program(prog, "tn_program_set_profiling");
  if (p == NULL) return -1;
  atomic_store(&p->profiling, on != 0);
  atomic_store(&p->runs, 0);
  atomic_store(&p->run_ns, 0);
  atomic_store(&p->kernel_ns, 0);
  return 0;
}

TN_API int32_t tn_program_threads(const TnObject *prog) {
  const Program *p = as_program(prog, "tn_program_threads");
  return p ? atomic_load(&p->threads_set) : -1;
}

TN_API int32_t tn_program_split_steps(const TnObject *prog) {
  const Program *p = as_program(prog, "tn_program_split_steps");
  return p ? atomic_load(&p->steps_cut) : -1;
}

/* The value whose storage v uses (through views). */
static int32_t value_root(const Program *p, int32_t v) {
  while (g_array_index(p->values, Value, v).kind == V_VIEW)
    v = g_array_index(p->values, Value, v).index;
  return v;
}

/* Whether the plan gives a step's output its first input's storage (the
 * pool's bytes at the same offset): run_steps runs such a step whole. */
static bool step_in_place(const Program *p, const Step *st) {
  if (st->k.nin < 1) return false;
  TnKernHome a = p->plan.home[value_root(p, st->in[0])];
  TnKernHome b = p->plan.home[value_root(p, st->out)];
  return a.kind == TN_KH_POOL && b.kind == TN_KH_POOL &&
         p->plan.plan[a.index].offset == p->plan.plan[b.index].offset;
}

TN_API int tn_program_set_threads(TnObject *prog, int64_t n) {
  const char *who = "tn_program_set_threads";
  Program *p = (Program *)as_program(prog, who);
  if (p == NULL) return -1;
  if (n < 1 || n > TN_PROGRAM_MAX_THREADS)
    return tn_error_raise_in(TN_ERR_VALUE, who, "argument n (threads): "
                             "expected 1 to %d, got %" PRId64,
                             TN_PROGRAM_MAX_THREADS, n);
  int expected = 0;
  if (!atomic_compare_exchange_strong(&p->busy, &expected, 1))
    return tn_error_raise_in(TN_ERR_RUNTIME, who, "the program is running "
                             "in another thread");
  threads_clear(p);
  int rc = 0;
  if (n > 1) {
    guint ns = p->steps->len;
    TnKernPart *parts = g_new0(TnKernPart, (size_t)ns * (size_t)n);
    int32_t *nparts = g_new0(int32_t, ns);
    size_t scratch = 0;
    int32_t cut = 0;
    for (guint s = 0; s < ns; s++) {
      const Step *st = &g_array_index(p->steps, Step, s);
      /* a step the plan runs in place runs whole (run_steps): not cut */
      if (step_in_place(p, st)) continue;
      nparts[s] = tn__kernel_split(&st->k, (int32_t)n, &parts[(size_t)s * n]);
      if (nparts[s] < 2) continue;
      cut++;
      int32_t sb = p->plan.scratch[s];
      size_t size =
          sb >= 0 ? (size_t)g_array_index(p->plan.bufs, TnKernBuf, sb).size : 0;
      if (size > scratch) scratch = size;
    }
    p->threads = (int32_t)n, p->parts = parts, p->nparts = nparts;
    /* no step worth cutting: no thread started */
    p->pool = cut ? tn__kernel_threads_new((int32_t)n, scratch, who) : NULL;
    if (cut && p->pool == NULL) {
      threads_clear(p);
      rc = -1;
    } else {
      atomic_store(&p->threads_set, (int)n);
      atomic_store(&p->steps_cut, cut);
    }
  }
  atomic_store(&p->busy, 0);
  return rc;
}

/* ---- running --------------------------------------------------------------- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int check_input(const Program *p, int32_t i, TnObject *t) {
  const char *who = "tn_program_run";
  const char *name = g_ptr_array_index(p->inputs, i);
  const Value *v = &g_array_index(p->values, Value, i);
  if (t == NULL || !tn_object_is_instance(t, TN_TYPE_TENSOR))
    return tn_error_raise_in(TN_ERR_TYPE, who, "input %d ('%s'): expected a "
                             "tn.Tensor, got %s", i, name,
                             tn_object_type_key(t));
  const DLTensor *dl = tn_tensor_dltensor(t);
  bool same = dl->ndim == tn__ir_ndim(v->type) &&
              tn__ir_dtype_eq(dl->dtype, v->type->dtype);
  for (int32_t d = 0; same && d < dl->ndim; d++)
    same = dl->shape[d] == tn__ir_dims(v->type)[d];
  if (!same) {
    TnObject *got = tn__ir_type_of_tensor(t);
    GString *w = g_string_new(NULL), *g = g_string_new(NULL);
    tn__ir_print_type(w, (const TnObject *)v->type);
    tn__ir_print_type(g, got);
    tn_error_raise_in(TN_ERR_TYPE, who, "input %d ('%s'): expected %s, got "
                      "%s", i, name, w->str, g->str);
    g_string_free(w, TRUE), g_string_free(g, TRUE);
    tn_object_release(got);
    return -1;
  }
  int contiguous = 0;
  tn_tensor_is_contiguous(t, &contiguous);
  if (!contiguous || dl->device.device_type != kDLCPU)
    return tn_error_raise_in(TN_ERR_VALUE, who, "input %d ('%s') is not a "
                             "compact CPU tensor", i, name);
  return 0;
}

/* A host compute function's step: tensors in, a tensor out, copied. */
static int run_compute(Program *p, const Step *st, const void *const *in) {
  TnAny items[TN_KERN_MAX_IN];
  int32_t n = 0;
  int rc = -1;
  TnObject *out = NULL, *arr = NULL;
  DLDevice cpu = {kDLCPU, 0};
  for (; n < st->k.nin; n++) {
    const Value *v = &g_array_index(p->values, Value, st->in[n]);
    TnObject *t = tn_tensor_empty(tn__ir_dims(v->type),
                                  (int32_t)tn__ir_ndim(v->type),
                                  v->type->dtype, cpu);
    if (t == NULL) goto done;
    memcpy(tn_tensor_dltensor(t)->data, in[n], (size_t)v->nbytes);
    items[n] = tn_any_obj(t);
  }
  const Value *ov = &g_array_index(p->values, Value, st->out);
  out = tn_tensor_empty(tn__ir_dims(ov->type), (int32_t)tn__ir_ndim(ov->type),
                        ov->type->dtype, cpu);
  arr = out ? tn_array_new(items, n) : NULL;
  if (arr) {
    TnAny args[3] = {tn_any_obj(arr), tn_any_obj(out),
                     st->k.attrs ? tn_any_obj(st->k.attrs) : tn_any_none()};
    TnAny ret = tn_any_none();
    rc = tn_func_call(st->k.compute, args, 3, &ret);
    tn_any_clear(&ret);
    if (rc == 0)
      memcpy((void *)p->ptrs[st->out], tn_tensor_dltensor(out)->data,
             (size_t)ov->nbytes);
  }
done:
  for (int32_t i = 0; i < n; i++) tn_object_release(items[i].v_obj);
  tn_object_release(arr);
  tn_object_release(out);
  return rc;
}

static void *tensor_data(TnObject *t) {
  DLTensor *dl = tn_tensor_dltensor(t);
  return (char *)dl->data + dl->byte_offset;
}

/* Point every value at its storage for this run: the caller's inputs,
 * the constants, the arena at planned offsets, and the new output tensors
 * for outputs the plan computes in place of the caller's. */
static void bind_values(Program *p, TnObject *const *inputs,
                        TnObject *const *outputs) {
  if (p->ptrs == NULL) {
    p->ptrs = g_new0(const void *, p->values->len);
    p->arena_block = g_malloc((size_t)p->arena_bytes + TN_KERN_PLAN_ALIGN);
    uintptr_t a = ((uintptr_t)p->arena_block + TN_KERN_PLAN_ALIGN - 1) &
                  ~(uintptr_t)(TN_KERN_PLAN_ALIGN - 1);
    p->arena = (char *)a;
  }
  for (guint v = 0; v < p->values->len; v++) {
    const Value *x = &g_array_index(p->values, Value, v);
    TnKernHome h = p->plan.home[v];
    if (x->kind == V_VIEW) continue;
    switch (h.kind) {
      case TN_KH_INPUT: p->ptrs[v] = tensor_data(inputs[h.index]); break;
      case TN_KH_CONST:
        p->ptrs[v] = tensor_data(g_ptr_array_index(p->consts, h.index));
        break;
      case TN_KH_OUTPUT: p->ptrs[v] = tensor_data(outputs[h.index]); break;
      case TN_KH_POOL: p->ptrs[v] = p->arena + p->plan.plan[h.index].offset;
    }
  }
  for (guint v = 0; v < p->values->len; v++) {
    const Value *x = &g_array_index(p->values, Value, v);
    if (x->kind == V_VIEW) p->ptrs[v] = p->ptrs[x->index];
  }
}

/* Whether a value has no elements (a zero-size dimension): its step has
 * nothing to compute, and its storage may be no storage at all. */
static bool value_empty(const Program *p, int32_t v) {
  const Value *x = &g_array_index(p->values, Value, v);
  const int64_t *dims = tn__ir_dims(x->type);
  for (int32_t d = 0; d < tn__ir_ndim(x->type); d++)
    if (dims[d] == 0) return true;
  return false;
}

static int run_steps(Program *p, bool profiling) {
  for (guint s = 0; s < p->steps->len; s++) {
    const Step *st = &g_array_index(p->steps, Step, s);
    if (!st->k.compute && value_empty(p, st->out)) continue;
    const void *in[TN_KERN_MAX_IN];
    for (int32_t i = 0; i < st->k.nin; i++) in[i] = p->ptrs[st->in[i]];
    if (st->k.compute) {
      if (run_compute(p, st, in)) return -1;
      continue;
    }
    int32_t sb = p->plan.scratch[s];
    void *scratch = sb >= 0 ? p->arena + p->plan.plan[sb].offset : NULL;
    size_t scratch_size =
        sb >= 0 ? (size_t)g_array_index(p->plan.bufs, TnKernBuf, sb).size : 0;
    int64_t t0 = profiling ? now_ns() : 0;
    int32_t np = p->nparts ? p->nparts[s] : 0;
    void *out = (void *)p->ptrs[st->out];
    /* in place (the planner gave the output its dying input's storage):
     * one band would write over rows another still reads */
    int32_t status =
        np > 1 && in[0] != out
            ? tn__kernel_threads_run(p->pool, &st->k,
                                     &p->parts[(size_t)s * p->threads], np,
                                     in, out, scratch, scratch_size)
            : st->k.run(st->k.params, in, out, scratch, scratch_size);
    if (profiling)
      atomic_fetch_add_explicit(&p->kernel_ns, now_ns() - t0,
                                memory_order_relaxed);
    if (status != TN_CRT_OK) {
      char who[128];
      g_snprintf(who, sizeof who, "%s (%s)", st->op, st->k.kernel);
      return tn__kernel_status(status, who);
    }
  }
  return 0;
}

TN_API int tn_program_run(TnObject *prog, TnObject *const *inputs, int32_t n,
                          TnObject **outputs) {
  const char *who = "tn_program_run";
  Program *p = (Program *)as_program(prog, who);
  if (p == NULL) return -1;
  bool profiling = atomic_load_explicit(&p->profiling, memory_order_relaxed);
  int64_t t0 = profiling ? now_ns() : 0;
  if (outputs == NULL) return tn__raise_null(who, "outputs");
  if (n != (int32_t)p->inputs->len)
    return tn_error_raise_in(TN_ERR_TYPE, who, "expected %u inputs, got %d",
                             p->inputs->len, n);
  if (n > 0 && inputs == NULL) return tn__raise_null(who, "inputs");
  for (int32_t i = 0; i < n; i++)
    if (check_input(p, i, inputs[i])) return -1;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&p->busy, &expected, 1))
    return tn_error_raise_in(TN_ERR_RUNTIME, who, "the program is already "
                             "running in another thread; use one program "
                             "per thread");
  int rc = 0;
  guint no = p->outputs->len, i = 0;
  DLDevice cpu = {kDLCPU, 0};
  for (; i < no; i++) {
    int32_t v = g_array_index(p->outputs, int32_t, i);
    const Value *x = &g_array_index(p->values, Value, v);
    outputs[i] = tn_tensor_empty(tn__ir_dims(x->type),
                                 (int32_t)tn__ir_ndim(x->type), x->type->dtype,
                                 cpu);
    if (outputs[i] == NULL) {
      rc = -1;
      break;
    }
  }
  if (rc == 0) {
    bind_values(p, inputs, outputs);
    rc = run_steps(p, profiling);
  }
  /* outputs not computed in place of the caller's: copied */
  for (guint j = 0; rc == 0 && j < no; j++) {
    int32_t v = g_array_index(p->outputs, int32_t, j);
    TnKernHome h = p->plan.home[v];
    if (h.kind == TN_KH_OUTPUT && h.index == (int32_t)j) continue;
    memcpy(tensor_data(outputs[j]), p->ptrs[v],
           (size_t)g_array_index(p->values, Value, v).nbytes);
  }
  if (rc)
    for (guint j = 0; j < i; j++) {
      tn_object_release(outputs[j]);
      outputs[j] = NULL;
    }
  if (profiling && rc == 0) {
    atomic_fetch_add_explicit(&p->runs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->run_ns, now_ns() - t0, memory_order_relaxed);
  }
  atomic_store(&p->busy, 0);
  return rc;
}

TN_API TnObject *tn_kernel_eval(const TnObject *call, int *supported) {
  const char *who = "tn_kernel_eval";
  if (supported) *supported = 1;
  if (tn__check_object(call, TN_IR->call, who, "call")) return NULL;
  TnObject *fn = tn_ir_function(NULL, 0, (TnObject *)call, NULL, NULL);
  if (fn == NULL) return NULL;
  TnObject *prog = tn_program_new(NULL, fn);
  tn_object_release(fn);
  if (prog == NULL) {
    TnObject *e = tn_error_peek_raised();
    if (supported && e && tn_error_kind_code(e) == TN_ERR_NOT_IMPLEMENTED) {
      tn_error_set_raised(NULL);
      *supported = 0;
    }
    return NULL;
  }
  TnObject *out = NULL;
  int rc = tn_program_num_outputs(prog) == 1
               ? tn_program_run(prog, NULL, 0, &out)
               : tn_error_raise_in(TN_ERR_TYPE, who, "the call does not give "
                                   "one tensor");
  tn_object_release(prog);
  return rc ? NULL : out;
}

/* ---- the table's entries ----------------------------------------------------- */

static const TnKernEntry *kernel_entry(const TnObject *op) {
  const TnAny *k = tn_ir_op_get_attr(op, TN_OP_ATTR_KERNEL);
  if (k == NULL) return NULL;
  const TnKernEntry *e = k->type_index == TN_TYPE_OPAQUE_PTR ? k->v_ptr : NULL;
  if (e == NULL || !tn__kernel_entry_known(e)) {
    tn_error_raise_in(TN_ERR_TYPE, ((const TnStringObj *)((const TnIrOp *)op)
                                        ->name)->data,
                      "attribute '%s' was not set by the library's lowering "
                      "table", TN_OP_ATTR_KERNEL);
    return NULL;
  }
  return e;
}

void tn__kernel_program_init(void) {
  g_program_type = tn_type_register("kernel.Program", TN_TYPE_OBJECT);
  TN__INIT_CHECK(g_program_type > 0);
}
