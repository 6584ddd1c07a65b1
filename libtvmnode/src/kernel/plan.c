/*
 * plan.c: where every value of a lowered program lives, for the host
 * executor and the code generator alike. The execution order is chosen
 * first, when the program is built (independent branches in the order
 * with the lower peak); a plan then gives every value a home (a caller's
 * input or output, a constant, or a pool buffer), gives buffers live
 * ranges, lets an operator that may run in place take over its dying
 * input's buffer, gives each step that needs it a scratch buffer of its
 * own, and has the memory planner (memory_plan.c) place what is left.
 * Scratch is planned like any buffer rather than kept aside, so that the
 * executor's arena and the generated code's workspace pool are one plan
 * of one size. Nothing here runs or writes code.
 */
#include "kernel/plan_internal.h"

#include <inttypes.h>

typedef TnKernPlanInput Prog;

static const TnKernValue *value(const Prog *g, int32_t v) {
  return &g->vals[v];
}
static const TnKernStep *step(const Prog *g, int32_t s) {
  return &g->steps[s];
}
static int32_t root_of(const Prog *g, int32_t v) {
  const TnKernValue *x = value(g, v);
  return x->kind == TN_KV_VIEW ? x->index : v;
}

/* ---- execution order ----------------------------------------------------------- */

/*
 * The program lists its steps in the order the expression was walked.
 * Independent branches (a residual block's shortcut and main path) may run
 * in either order, and the peak of live bytes depends on it. Two other
 * schedules are tried beside the program's own, and the one with the
 * lowest peak is kept (ties: the program's):
 *  - a greedy list schedule that picks, among the steps whose inputs are
 *    ready, the one that frees the most bytes net of what it allocates;
 *  - a depth-first one from the outputs that computes, at every step with
 *    several inputs, first the input whose computation needs the most
 *    memory beyond its result (Sethi and Ullman's order, on the DAG seen
 *    as a tree).
 */
typedef struct {
  int32_t *producer; /* per value: the step computing its root, or -1 */
  int32_t *readers;  /* per root value: steps reading it (+1 for an output) */
} Deps;

static int64_t arena_bytes(const Prog *g, int32_t r) {
  const TnKernValue *x = value(g, r);
  return x->kind == TN_KV_ARENA ? x->nbytes : 0;
}

static int32_t *copy_counts(const int32_t *c, int32_t n) {
  int32_t *out = g_new(int32_t, n);
  memcpy(out, c, sizeof(int32_t) * (size_t)n);
  return out;
}

/* The peak of live intermediate bytes when running steps in `order`. */
static int64_t peak(const Prog *g, const Deps *d, const int32_t *order) {
  int32_t V = g->nvalues;
  int32_t *left = copy_counts(d->readers, V + 1);
  int64_t live = 0, top = 0;
  for (int32_t k = 0; k < g->nsteps; k++) {
    const TnKernStep *st = step(g, order[k]);
    live += arena_bytes(g, st->out);
    if (live > top) top = live;
    for (int32_t i = 0; i < st->k.nin; i++) {
      int32_t r = root_of(g, st->in[i]);
      if (--left[r] == 0) live -= arena_bytes(g, r);
    }
  }
  g_free(left);
  return top;
}

typedef struct {
  const Prog *g;
  const Deps *d;
  int64_t *need;  /* per step: estimated peak to compute it, or -1 */
  bool *emitted;
  int32_t *order, n;
} Su;

/* The producers of step s's inputs, distinct, in `kids`; returns count. */
static int32_t kids_of(const Su *u, int32_t s, int32_t *kids) {
  const TnKernStep *st = step(u->g, s);
  int32_t n = 0;
  for (int32_t i = 0; i < st->k.nin; i++) {
    int32_t p = u->d->producer[root_of(u->g, st->in[i])];
    bool dup = p < 0;
    for (int32_t j = 0; j < n && !dup; j++) dup = kids[j] == p;
    if (!dup) kids[n++] = p;
  }
  return n;
}

static int64_t out_bytes(const Su *u, int32_t s) {
  return arena_bytes(u->g, step(u->g, s)->out);
}

/* Sort kids by need - result size, largest first (insertion sort: few). */
static void sort_kids(const Su *u, int32_t *kids, int32_t n) {
  for (int32_t i = 1; i < n; i++)
    for (int32_t j = i; j > 0; j--) {
      int64_t a = u->need[kids[j - 1]] - out_bytes(u, kids[j - 1]);
      int64_t b = u->need[kids[j]] - out_bytes(u, kids[j]);
      if (a >= b) break;
      int32_t t = kids[j];
      kids[j] = kids[j - 1], kids[j - 1] = t;
    }
}

/* need[s], the steps in program order (a producer comes before its
 * readers), so each kid's need is known. */
static void su_need(Su *u) {
  int32_t kids[TN_KERN_MAX_IN];
  for (int32_t s = 0; s < u->g->nsteps; s++) {
    int32_t n = kids_of(u, s, kids);
    sort_kids(u, kids, n);
    int64_t held = 0, top = 0;
    for (int32_t i = 0; i < n; i++) {
      if (held + u->need[kids[i]] > top) top = held + u->need[kids[i]];
      held += out_bytes(u, kids[i]);
    }
    if (held + out_bytes(u, s) > top) top = held + out_bytes(u, s);
    u->need[s] = top;
  }
}

/* Emit s after its inputs, the neediest first; an explicit stack, since
 * chains may be thousands of steps long. */
static void su_emit(Su *u, int32_t root) {
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(int32_t));
  g_array_append_val(stack, root);
  while (stack->len) {
    int32_t s = g_array_index(stack, int32_t, stack->len - 1);
    if (u->emitted[s]) {
      g_array_set_size(stack, stack->len - 1);
      continue;
    }
    int32_t kids[TN_KERN_MAX_IN], n = kids_of(u, s, kids), pending = 0;
    sort_kids(u, kids, n);
    for (int32_t i = n - 1; i >= 0; i--) /* the first kid on top */
      if (!u->emitted[kids[i]]) {
        g_array_append_val(stack, kids[i]);
        pending++;
      }
    if (pending) continue;
    u->emitted[s] = true;
    u->order[u->n++] = s;
    g_array_set_size(stack, stack->len - 1);
  }
  g_array_free(stack, TRUE);
}

static void su_order(const Prog *g, const Deps *d, int32_t *order) {
  int32_t S = g->nsteps;
  Su u = {g, d, g_new(int64_t, S), g_new0(bool, S), order, 0};
  su_need(&u);
  for (int32_t i = 0; i < g->noutputs; i++) {
    int32_t p = d->producer[root_of(g, g->outputs[i])];
    if (p >= 0) su_emit(&u, p);
  }
  for (int32_t s = 0; s < S; s++) /* steps no output needs, in order */
    if (!u.emitted[s]) su_emit(&u, s);
  g_free(u.need), g_free(u.emitted);
}

/*
 * The greedy list schedule: among the ready steps, the one that frees the
 * most bytes net of what it allocates (ties: the first in program order).
 * A step's gain counts an input value when it is that value's last reader
 * (and the value is no output); gains only grow, when another reader of
 * one of its inputs runs. So the ready steps sit in a max-heap by (gain,
 * -index) with lazy updates: a step is pushed again when its gain grows,
 * and a popped entry whose gain is no longer the step's is dropped. Each
 * value's readers are visited only while at most TN_KERN_MAX_IN reads of
 * it are left, so the whole is O(S log S) in practice, not O(S^2).
 */
typedef struct {
  int64_t gain;
  int32_t s;
} Ready;

static bool ready_before(const Ready *a, const Ready *b) {
  return a->gain != b->gain ? a->gain > b->gain : a->s < b->s;
}

static void heap_push(GArray *h, Ready r) {
  g_array_append_val(h, r);
  Ready *a = (Ready *)(void *)h->data;
  for (guint i = h->len - 1; i > 0;) {
    guint up = (i - 1) / 2;
    if (!ready_before(&a[i], &a[up])) break;
    Ready t = a[i];
    a[i] = a[up], a[up] = t;
    i = up;
  }
}

static Ready heap_pop(GArray *h) {
  Ready *a = (Ready *)(void *)h->data, top = a[0];
  a[0] = a[h->len - 1];
  g_array_set_size(h, h->len - 1);
  for (guint i = 0, n = h->len;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && ready_before(&a[l], &a[m])) m = l;
    if (r < n && ready_before(&a[r], &a[m])) m = r;
    if (m == i) break;
    Ready t = a[i];
    a[i] = a[m], a[m] = t;
    i = m;
  }
  return top;
}

/* Step s's gain with `left` reads of each value outstanding. */
static int64_t gain_of(const Prog *g, const int32_t *left, int32_t s) {
  const TnKernStep *st = step(g, s);
  int64_t gain = -arena_bytes(g, st->out);
  for (int32_t i = 0; i < st->k.nin; i++) {
    int32_t r = root_of(g, st->in[i]), uses = 0;
    bool first = true; /* count each value once, at its first read */
    for (int32_t j = 0; j < st->k.nin; j++) {
      if (root_of(g, st->in[j]) != r) continue;
      first &= j >= i;
      uses++;
    }
    if (first && left[r] == uses) gain += arena_bytes(g, r);
  }
  return gain;
}

static void greedy_order(const Prog *g, const Deps *d, int32_t *order) {
  int32_t S = g->nsteps, V = g->nvalues;
  int32_t *left = copy_counts(d->readers, V + 1);
  /* per root value, the steps reading it (each once): CSR */
  int32_t *start = g_new0(int32_t, V + 2), *at = NULL, *who = NULL;
  int32_t *waiting = g_new0(int32_t, S > 0 ? S : 1); /* unfinished producers */
  bool *done = g_new0(bool, S > 0 ? S : 1);
  for (int32_t pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (int32_t r = 0; r < V; r++) start[r + 1] += start[r];
      at = copy_counts(start, V + 1);
      who = g_new(int32_t, start[V] > 0 ? start[V] : 1);
    }
    for (int32_t s = 0; s < S; s++) {
      const TnKernStep *st = step(g, s);
      for (int32_t i = 0; i < st->k.nin; i++) {
        int32_t r = root_of(g, st->in[i]), j = 0;
        while (j < i && root_of(g, st->in[j]) != r) j++;
        if (j < i) continue; /* read before by this step */
        if (pass == 0) {
          start[r + 1]++;
          if (d->producer[r] >= 0) waiting[s]++;
        } else {
          who[at[r]++] = s;
        }
      }
    }
  }
  GArray *heap = g_array_new(FALSE, FALSE, sizeof(Ready));
  for (int32_t s = 0; s < S; s++)
    if (waiting[s] == 0) heap_push(heap, (Ready){gain_of(g, left, s), s});
  for (int32_t k = 0; k < S; k++) {
    Ready top = heap_pop(heap);
    if (done[top.s] || top.gain != gain_of(g, left, top.s)) {
      k--; /* stale */
      continue;
    }
    int32_t best = top.s;
    done[best] = true;
    order[k] = best;
    const TnKernStep *st = step(g, best);
    for (int32_t i = 0; i < st->k.nin; i++) left[root_of(g, st->in[i])]--;
    /* a reader of one of these values may now be its last reader */
    for (int32_t i = 0; i < st->k.nin; i++) {
      int32_t r = root_of(g, st->in[i]);
      if (left[r] <= 0 || left[r] > TN_KERN_MAX_IN) continue;
      for (int32_t j = start[r]; j < start[r + 1]; j++)
        if (!done[who[j]] && waiting[who[j]] == 0)
          heap_push(heap, (Ready){gain_of(g, left, who[j]), who[j]});
    }
    /* its result's readers may now be ready */
    int32_t r = st->out;
    for (int32_t j = start[r]; j < start[r + 1]; j++)
      if (--waiting[who[j]] == 0)
        heap_push(heap, (Ready){gain_of(g, left, who[j]), who[j]});
  }
  g_array_free(heap, TRUE);
  g_free(left), g_free(start), g_free(at), g_free(who), g_free(waiting),
      g_free(done);
}

void tn__kernel_schedule(const TnKernPlanInput *g, int32_t *order) {
  int32_t S = g->nsteps, V = g->nvalues;
  Deps d = {g_new(int32_t, V + 1), g_new0(int32_t, V + 1)};
  for (int32_t v = 0; v < V; v++) d.producer[v] = -1;
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = step(g, s);
    d.producer[st->out] = s;
    for (int32_t i = 0; i < st->k.nin; i++) d.readers[root_of(g, st->in[i])]++;
  }
  for (int32_t i = 0; i < g->noutputs; i++)
    d.readers[root_of(g, g->outputs[i])]++;
  int32_t *greedy = g_new(int32_t, S > 0 ? S : 1);
  greedy_order(g, &d, greedy);
  int32_t *su = g_new(int32_t, S > 0 ? S : 1);
  if (S > 0) su_order(g, &d, su);
  for (int32_t s = 0; s < S; s++) order[s] = s;
  int64_t best = S > 0 ? peak(g, &d, order) : 0;
  const int32_t *cands[2] = {greedy, su};
  for (int c = 0; c < 2 && S > 0; c++) {
    int64_t pk = peak(g, &d, cands[c]);
    if (pk < best) {
      best = pk;
      memcpy(order, cands[c], sizeof(int32_t) * (size_t)S);
    }
  }
  g_free(greedy), g_free(su);
  g_free(d.producer), g_free(d.readers);
}

/* ---- homes, buffers and live ranges ---------------------------------------------- */

static TnKernBuf *buf(TnKernPlan *p, int32_t b) {
  return &g_array_index(p->bufs, TnKernBuf, tn__kernel_buf_root(p->bufs, b));
}

static int32_t new_buf(TnKernPlan *p, TnKernBufKind kind, char *name,
                       int64_t size, int32_t first, int32_t last) {
  TnKernBuf b = {kind, name, size, first, last, -1};
  g_array_append_val(p->bufs, b);
  return (int32_t)p->bufs->len - 1;
}

static char *io_name(const char *const *names, const char *what, int32_t i) {
  return names && names[i] ? g_strdup(names[i])
                           : g_strdup_printf("%s%d", what, i);
}

/* Whether state `si`'s new value (output `oi`, root `r`) can be computed
 * straight over the state's current value (input value `sv`), where the
 * caller keeps it: it is made by a crt kernel's step P after which nothing
 * reads the current value, P reads the current value at most as the one
 * input its kernel may overwrite, and neither value is any other result. */
static bool state_in_place(const Prog *g, int32_t oi, int32_t r, int32_t sv,
                           int32_t isa) {
  const TnKernValue *x = value(g, r);
  if (x->kind != TN_KV_ARENA || x->nbytes != value(g, sv)->nbytes ||
      x->def < 0 || x->def >= g->nsteps)
    return false;
  for (int32_t i = 0; i < g->noutputs; i++) {
    int32_t ro = root_of(g, g->outputs[i]);
    if (ro == sv || (ro == r && i != oi)) return false;
  }
  const TnKernStep *pst = step(g, x->def);
  if (!pst->k.run || pst->k.compute ||
      (pst->k.inplace_dsp_only && isa != TN_CRT_ISA_ARM_DSP))
    return false;
  for (int32_t s = 0; s < g->nsteps; s++) {
    const TnKernStep *st = step(g, s);
    for (int32_t j = 0; j < st->k.nin; j++) {
      if (root_of(g, st->in[j]) != sv) continue;
      if (s > x->def || (s == x->def && j != st->k.inplace - 1)) return false;
    }
  }
  return true;
}

/* Homes of base values, buffers for inputs, outputs and intermediates. */
static void homes(const Prog *g, const TnKernPlanOptions *o, TnKernPlan *p) {
  int32_t S = g->nsteps, V = g->nvalues;
  int32_t first_state_in = g->ninputs - o->nstates,
          first_state_out = g->noutputs - o->nstates;
  for (int32_t v = 0; v < V; v++) {
    const TnKernValue *x = value(g, v);
    if (x->kind == TN_KV_INPUT &&
        (!o->io_in_pool || x->index >= first_state_in)) {
      p->home[v] = (TnKernHome){TN_KH_INPUT, x->index};
    } else if (x->kind == TN_KV_INPUT) {
      p->in_buf[x->index] = new_buf(p, TN_KB_INPUT,
                                    io_name(o->in_names, "input", x->index),
                                    x->nbytes, 0, 0);
      p->home[v] = (TnKernHome){TN_KH_POOL, p->in_buf[x->index]};
    } else if (x->kind == TN_KV_CONST) {
      p->home[v] = (TnKernHome){TN_KH_CONST, x->index};
    } else if (x->kind == TN_KV_ARENA) {
      p->home[v] = (TnKernHome){TN_KH_POOL, -1}; /* below */
    }
  }
  /* an output computed by a step is computed straight into the caller's
   * buffer (or its own pool buffer), once */
  for (int32_t i = 0; i < g->noutputs; i++) {
    int32_t ov = g->outputs[i], r = root_of(g, ov);
    bool claimed = value(g, r)->kind == TN_KV_ARENA &&
                   p->home[r].kind == TN_KH_POOL && p->home[r].index < 0;
    if (i >= first_state_out) {
      int32_t si = first_state_in + (i - first_state_out), sv = -1;
      for (int32_t v = 0; v < V && sv < 0; v++)
        if (value(g, v)->kind == TN_KV_INPUT && value(g, v)->index == si)
          sv = v;
      if (claimed && sv >= 0 && state_in_place(g, i, r, sv, o->isa)) {
        /* computed over the current value: nothing to copy */
        p->home[r] = (TnKernHome){TN_KH_INPUT, si};
      } else if (claimed) /* a state's new value: copied at the end */
        p->home[r] = (TnKernHome){
            TN_KH_POOL, new_buf(p, TN_KB_INTERMEDIATE,
                                g_strdup_printf("state%d", i - first_state_out),
                                value(g, r)->nbytes, value(g, r)->def, S)};
    } else if (claimed && !o->io_in_pool) {
      p->home[r] = (TnKernHome){TN_KH_OUTPUT, i};
    } else if (claimed) {
      p->out_buf[i] = new_buf(p, TN_KB_OUTPUT,
                              io_name(o->out_names, "output", i),
                              value(g, r)->nbytes, value(g, r)->def, S);
      p->home[r] = (TnKernHome){TN_KH_POOL, p->out_buf[i]};
    } else if (o->io_in_pool) { /* copied in at the end */
      p->out_buf[i] = new_buf(p, TN_KB_OUTPUT,
                              io_name(o->out_names, "output", i),
                              value(g, ov)->nbytes, S, S);
    }
  }
  for (int32_t v = 0; v < V; v++) {
    const TnKernValue *x = value(g, v);
    if (x->kind == TN_KV_ARENA && p->home[v].kind == TN_KH_POOL &&
        p->home[v].index < 0)
      p->home[v].index = new_buf(p, TN_KB_INTERMEDIATE,
                                 g_strdup_printf("t%d", v), x->nbytes,
                                 x->def, x->def);
  }
  for (int32_t v = 0; v < V; v++) /* views live where their base does */
    if (value(g, v)->kind == TN_KV_VIEW) p->home[v] = p->home[root_of(g, v)];
}

/* Live ranges (a buffer lives from its first write to its last read),
 * then in-place merges and scratch buffers. A merged buffer keeps the
 * larger size for the whole of both lives, so a merge into a smaller
 * output (a 1x1 convolution that halves the channels) saves memory at its
 * step but may cost it later: with `shrink` false those merges are not
 * made (the plan is made both ways and the smaller kept). */
/* A step's scratch: the portable size, or for the DSP the larger, or at
 * `level` > 0 the level-th of the smaller ones (the last when fewer). */
static size_t pick(bool dsp, size_t portable, size_t for_dsp,
                   const size_t *less, int32_t nless, int32_t level) {
  if (dsp && level > 0 && nless > 0)
    for_dsp = less[(level < nless ? level : nless) - 1];
  return dsp && for_dsp > portable ? for_dsp : portable;
}

/* A level's bit for "not in place where only the DSP plan may be"
 * (drop_dsp_merges). */
enum { NO_DSP_MERGE = 0x80 };

static void lives(const Prog *g, TnKernPlan *p, bool shrink, int32_t isa,
                  const uint8_t *level) {
  int32_t S = g->nsteps;
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = step(g, s);
    for (int32_t i = 0; i < st->k.nin; i++) {
      TnKernHome h = p->home[root_of(g, st->in[i])];
      if (h.kind == TN_KH_POOL && buf(p, h.index)->last < s)
        buf(p, h.index)->last = s;
    }
  }
  for (int32_t i = 0; i < g->noutputs; i++) { /* copies at the end */
    TnKernHome h = p->home[root_of(g, g->outputs[i])];
    if (h.kind == TN_KH_POOL) buf(p, h.index)->last = S;
  }
  /* in place: the output takes the buffer of an input dying here (never
   * for a host compute function, which is not a crt kernel) */
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = step(g, s);
    p->scratch[s] = -1;
    const bool dsp = isa == TN_CRT_ISA_ARM_DSP;
    const int32_t lv = level ? level[s] & ~NO_DSP_MERGE : 0;
    size_t scratch = pick(dsp, st->k.scratch, st->k.scratch_dsp,
                          st->k.scratch_dsp_less, st->k.nless, lv);
    const bool dsp_merge =
        dsp && !(level && (level[s] & NO_DSP_MERGE) != 0);
    int32_t e = st->k.run && !st->k.compute &&
                        (dsp_merge || !st->k.inplace_dsp_only)
                    ? st->k.inplace - 1
                    : -1;
    TnKernHome ho = p->home[st->out];
    if (e >= 0 && ho.kind == TN_KH_INPUT) { /* over a state, in place */
      TnKernHome hi = p->home[root_of(g, st->in[e])];
      if (hi.kind == TN_KH_INPUT && hi.index == ho.index)
        scratch = pick(dsp, st->k.inplace_scratch,
                       st->k.inplace_scratch_dsp,
                       st->k.inplace_scratch_dsp_less, st->k.inplace_nless,
                       lv);
    } else if (e >= 0 && ho.kind == TN_KH_POOL &&
        buf(p, ho.index)->kind == TN_KB_INTERMEDIATE) {
      TnKernHome hi = p->home[root_of(g, st->in[e])];
      /* no other input of the step may read the buffer it overwrites */
      bool alone = true;
      for (int32_t j = 0; j < st->k.nin; j++)
        alone &= j == e || root_of(g, st->in[j]) != root_of(g, st->in[e]);
      bool ok = alone && hi.kind == TN_KH_POOL && buf(p, hi.index)->last == s &&
                buf(p, hi.index)->kind == TN_KB_INTERMEDIATE &&
                tn__kernel_buf_root(p->bufs, hi.index) !=
                    tn__kernel_buf_root(p->bufs, ho.index) &&
                (st->k.inplace_grow ||
                 value(g, root_of(g, st->in[e]))->nbytes >=
                     value(g, st->out)->nbytes) &&
                (shrink || value(g, root_of(g, st->in[e]))->nbytes ==
                               value(g, st->out)->nbytes);
      if (ok) {
        TnKernBuf *bi = buf(p, hi.index), *bo = buf(p, ho.index);
        bi->last = bo->last;
        if (bo->size > bi->size) bi->size = bo->size;
        bo->merged = tn__kernel_buf_root(p->bufs, hi.index);
        scratch = pick(dsp, st->k.inplace_scratch,
                       st->k.inplace_scratch_dsp,
                       st->k.inplace_scratch_dsp_less, st->k.inplace_nless,
                       lv);
      }
    }
    if (scratch > 0)
      p->scratch[s] = new_buf(p, TN_KB_SCRATCH,
                              g_strdup_printf("scratch%d", s),
                              (int64_t)scratch, s, s);
  }
}

bool tn__kernel_plan_in_place(const TnKernPlanInput *g, const TnKernPlan *p,
                              int32_t s) {
  const TnKernStep *st = step(g, s);
  int32_t e = st->k.inplace - 1;
  if (e < 0) return false;
  TnKernHome ho = p->home[st->out], hi = p->home[root_of(g, st->in[e])];
  if (ho.kind == TN_KH_INPUT) /* a state updated in place */
    return hi.kind == TN_KH_INPUT && hi.index == ho.index;
  return ho.kind == TN_KH_POOL && hi.kind == TN_KH_POOL &&
         tn__kernel_buf_root(p->bufs, ho.index) ==
             tn__kernel_buf_root(p->bufs, hi.index);
}

/* ---- placement --------------------------------------------------------------------- */

static int place(const TnKernPlanOptions *o, TnKernPlan *p) {
  int32_t n = (int32_t)p->bufs->len;
  p->plan = g_new0(TnPlanBuffer, n > 0 ? n : 1);
  for (int32_t b = 0; b < n; b++) {
    const TnKernBuf *x = &g_array_index(p->bufs, TnKernBuf, b);
    p->plan[b].size = x->merged >= 0 ? 0 : x->size;
    p->plan[b].first = x->first;
    p->plan[b].last = x->last < x->first ? x->first : x->last;
  }
  TnPlanPool one = {"arena", 0};
  int32_t np = o->npools > 0 ? o->npools : 1;
  const TnPlanPool *pools = o->npools > 0 ? o->pools : &one;
  /* which pools may hold each kind of buffer */
  static const char *const kinds[] = {"intermediate", "input", "output",
                                      "scratch"};
  for (int32_t b = 0; b < n && o->npools > 0; b++) {
    TnKernBufKind k = g_array_index(p->bufs, TnKernBuf, b).kind;
    uint32_t mask = 0;
    for (int32_t q = 0; q < np; q++)
      if (o->pool_kinds[q] & (UINT32_C(1) << k)) mask |= UINT32_C(1) << q;
    if (mask == 0)
      return tn_error_raise_in(TN_ERR_VALUE, o->who, "no pool accepts %s "
                               "buffers%s", kinds[k],
                               o->accepts_hint ? o->accepts_hint : "");
    p->plan[b].pools = mask;
  }
  TnPlanOptions po = {.alignment = o->align};
  if (tn_memory_plan(p->plan, n, pools, np, &po, &p->res) ||
      tn_memory_plan_validate(p->plan, n, pools, np, p->res.size, o->align))
    return -1;
  for (int32_t b = 0; b < n; b++) { /* merged buffers sit on their host */
    int32_t r = tn__kernel_buf_root(p->bufs, b);
    p->plan[b].pool = p->plan[r].pool, p->plan[b].offset = p->plan[r].offset;
  }
  return 0;
}

static int plan_once(const TnKernPlanInput *g, const TnKernPlanOptions *o,
                     TnKernPlan *p, bool shrink, const uint8_t *level) {
  memset(p, 0, sizeof *p);
  p->nsteps = g->nsteps, p->nvalues = g->nvalues;
  p->ninputs = g->ninputs, p->noutputs = g->noutputs;
  p->home = g_new0(TnKernHome, g->nvalues > 0 ? g->nvalues : 1);
  p->bufs = g_array_new(FALSE, FALSE, sizeof(TnKernBuf));
  p->scratch = g_new(int32_t, g->nsteps > 0 ? g->nsteps : 1);
  p->in_buf = g_new(int32_t, g->ninputs > 0 ? g->ninputs : 1);
  p->out_buf = g_new(int32_t, g->noutputs > 0 ? g->noutputs : 1);
  for (int32_t i = 0; i < g->ninputs; i++) p->in_buf[i] = -1;
  for (int32_t i = 0; i < g->noutputs; i++) p->out_buf[i] = -1;
  homes(g, o, p);
  lives(g, p, shrink, o->isa, level);
  return place(o, p);
}

/* With every in-place merge, then without those into a smaller output:
 * the smaller plan (the first when they tie; the one that fits when only
 * one fits the pools' limits). */
static int plan_both(const TnKernPlanInput *g, const TnKernPlanOptions *o,
                     TnKernPlan *p, const uint8_t *level) {
  int rc = plan_once(g, o, p, true, level);
  TnKernPlan q;
  TnObject *first = rc ? tn_error_take_raised() : NULL;
  if (plan_once(g, o, &q, false, level) == 0 &&
      (rc != 0 || q.res.total < p->res.total)) {
    tn__kernel_plan_clear(p);
    *p = q;
    rc = 0;
  } else {
    tn__kernel_plan_clear(&q);
    tn_error_set_raised(NULL);
  }
  if (rc != 0) tn_error_set_raised(first); /* the first plan's error */
  else if (first) tn_object_release(first);
  return rc;
}

/* The smaller scratches a step may take (the larger count of its two). */
static int32_t less_levels(const TnKernStep *st) {
  return st->k.nless > st->k.inplace_nless ? st->k.nless
                                           : st->k.inplace_nless;
}

/* How much slower step `st` is estimated to run with its level-th smaller
 * scratch, in percent (0 at level 0); the larger of its two lists'. */
static double slower_pct(const TnKernStep *st, int32_t lv) {
  double a = 0, b = 0;
  if (lv > 0 && st->k.nless > 0)
    a = st->k.scratch_dsp_less_pct[(lv < st->k.nless ? lv : st->k.nless) - 1];
  if (lv > 0 && st->k.inplace_nless > 0)
    b = st->k.inplace_scratch_dsp_less_pct
            [(lv < st->k.inplace_nless ? lv : st->k.inplace_nless) - 1];
  return a > b ? a : b;
}

/* The estimated time of the steps at `level`, in MACs at their fastest
 * forms' speed. */
static double est_time(const TnKernPlanInput *g, const uint8_t *level) {
  double t = 0;
  for (int32_t s = 0; s < g->nsteps; s++) {
    const TnKernStep *st = step(g, s);
    t += (double)st->k.macs * (1.0 + slower_pct(st, level[s]) / 100.0);
  }
  return t;
}

/* Whether plan `q` is worth taking over `p`, whose steps' estimated time
 * is t0, when it adds dt: smaller, and by at least the share of time it
 * adds (2% fewer bytes for at most 2% more time). */
static bool worth(const TnKernPlan *p, const TnKernPlan *q, double t0,
                  double dt) {
  if (q->res.total >= p->res.total) return false;
  if (t0 <= 0 || dt <= 0) return true;
  return (double)(p->res.total - q->res.total) / (double)p->res.total >=
         dt / t0;
}

/* Whether two steps take the same scratches. */
static bool same_scratch(const TnKernStep *a, const TnKernStep *b) {
  return a->k.scratch_dsp == b->k.scratch_dsp &&
         a->k.inplace_scratch_dsp == b->k.inplace_scratch_dsp &&
         a->k.nless == b->k.nless && a->k.inplace_nless == b->k.inplace_nless &&
         memcmp(a->k.scratch_dsp_less, b->k.scratch_dsp_less,
                sizeof a->k.scratch_dsp_less) == 0 &&
         memcmp(a->k.inplace_scratch_dsp_less, b->k.inplace_scratch_dsp_less,
                sizeof a->k.inplace_scratch_dsp_less) == 0;
}

/* Each step of `p` back to its fastest scratch that keeps the pools
 * within `p`'s bytes: a smaller scratch away from the peak is time spent
 * for nothing. */
static void relax(const TnKernPlanInput *g, const TnKernPlanOptions *o,
                  TnKernPlan *p, uint8_t *level) {
  for (int32_t s = 0; s < g->nsteps; s++) {
    const uint8_t was = level[s];
    for (uint8_t lv = 0; lv < was; lv++) {
      TnKernPlan q;
      level[s] = lv;
      if (plan_both(g, o, &q, level) == 0 && q.res.total <= p->res.total) {
        tn__kernel_plan_clear(p);
        *p = q;
        break;
      }
      tn__kernel_plan_clear(&q);
      tn_error_set_raised(NULL);
      level[s] = was;
    }
  }
}

/* The in-place merges only the DSP plan takes (a convolution by rows, a
 * call per row, some per cent slower) each dropped again where the pools
 * keep their bytes without it: a plan takes them only for RAM. */
static void drop_dsp_merges(const TnKernPlanInput *g,
                            const TnKernPlanOptions *o, TnKernPlan *p,
                            uint8_t *level) {
  for (int32_t s = 0; s < g->nsteps; s++) {
    if (!step(g, s)->k.inplace_dsp_only || !tn__kernel_plan_in_place(g, p, s))
      continue;
    TnKernPlan q;
    level[s] |= NO_DSP_MERGE;
    if (plan_both(g, o, &q, level) == 0 && q.res.total <= p->res.total) {
      tn__kernel_plan_clear(p);
      *p = q;
      continue;
    }
    tn__kernel_plan_clear(&q);
    tn_error_set_raised(NULL);
    level[s] &= (uint8_t)~NO_DSP_MERGE;
  }
}

int tn__kernel_plan(const TnKernPlanInput *g, const TnKernPlanOptions *opt,
                    TnKernPlan *p) {
  TnKernPlanOptions o = opt ? *opt : (TnKernPlanOptions){0};
  if (o.align == 0) o.align = TN_KERN_PLAN_ALIGN;
  if (o.who == NULL) o.who = "tn_memory_plan";
  if (o.nstates < 0 || o.nstates > g->ninputs || o.nstates > g->noutputs)
    o.nstates = 0;
  int rc = plan_both(g, &o, p, NULL);
  if (rc == 0 && !o.less_scratch && o.isa == TN_CRT_ISA_ARM_DSP) {
    uint8_t *level = g_new0(uint8_t, g->nsteps > 0 ? g->nsteps : 1);
    drop_dsp_merges(g, &o, p, level);
    g_free(level);
  }
  if (!o.less_scratch || o.isa != TN_CRT_ISA_ARM_DSP) return rc;
  /* Smaller scratches, first for all the steps of one scratch size
   * together, then step by step, each kept when the pools shrink by at
   * least the share of time it is estimated to add (worth); when the
   * fastest plan does not fit the pools' limits, from the smallest
   * scratches everywhere. Then every step back to its fastest scratch
   * that keeps the pools' bytes (relax). */
  uint8_t *level = g_new0(uint8_t, g->nsteps > 0 ? g->nsteps : 1);
  bool any = false;
  for (int32_t s = 0; s < g->nsteps; s++)
    any |= less_levels(step(g, s)) > 0;
  if (any && rc != 0) {
    for (int32_t s = 0; s < g->nsteps; s++)
      level[s] = (uint8_t)less_levels(step(g, s));
    TnObject *err = tn_error_take_raised();
    tn__kernel_plan_clear(p);
    if (plan_both(g, &o, p, level) == 0) {
      rc = 0;
      tn_object_release(err);
    } else {
      tn_error_set_raised(err);
    }
  }
  /* steps of one scratch size together first (a model's patches repeat
   * their layers, and peak alike), then each step alone */
  for (int32_t s = 0; any && rc == 0 && s < g->nsteps; s++) {
    const TnKernStep *a = step(g, s);
    const int32_t n = less_levels(a);
    bool first = true;
    for (int32_t t = 0; t < s; t++)
      first &= !same_scratch(step(g, t), a);
    if (n == 0 || !first) continue;
    uint8_t *trial = g_new(uint8_t, g->nsteps > 0 ? g->nsteps : 1);
    memcpy(trial, level, (size_t)g->nsteps);
    for (int32_t lv = 1; lv <= n; lv++) {
      TnKernPlan q;
      for (int32_t t = s; t < g->nsteps; t++)
        if (same_scratch(step(g, t), a) && trial[t] < lv)
          trial[t] = (uint8_t)lv;
      if (plan_both(g, &o, &q, trial) == 0 &&
          worth(p, &q, est_time(g, level),
                est_time(g, trial) - est_time(g, level))) {
        tn__kernel_plan_clear(p);
        *p = q;
        memcpy(level, trial, (size_t)g->nsteps);
      } else {
        tn__kernel_plan_clear(&q);
        tn_error_set_raised(NULL);
      }
    }
    g_free(trial);
  }
  for (int32_t s = 0; any && rc == 0 && s < g->nsteps; s++) {
    const int32_t n = less_levels(step(g, s));
    uint8_t best = level[s];
    for (int32_t lv = best + 1; lv <= n; lv++) {
      TnKernPlan q;
      level[s] = best;
      const double t0 = est_time(g, level);
      const double dt = (double)step(g, s)->k.macs *
                        (slower_pct(step(g, s), lv) -
                         slower_pct(step(g, s), best)) / 100.0;
      level[s] = (uint8_t)lv;
      if (plan_both(g, &o, &q, level) == 0 && worth(p, &q, t0, dt)) {
        tn__kernel_plan_clear(p);
        *p = q;
        best = (uint8_t)lv;
      } else {
        tn__kernel_plan_clear(&q);
        tn_error_set_raised(NULL);
      }
    }
    level[s] = best;
  }
  if (any && rc == 0) relax(g, &o, p, level);
  if (rc == 0) drop_dsp_merges(g, &o, p, level);
  g_free(level);
  return rc;
}

void tn__kernel_plan_clear(TnKernPlan *p) {
  g_free(p->home);
  if (p->bufs) {
    for (guint b = 0; b < p->bufs->len; b++)
      g_free(g_array_index(p->bufs, TnKernBuf, b).name);
    g_array_free(p->bufs, TRUE);
  }
  g_free(p->scratch), g_free(p->in_buf), g_free(p->out_buf), g_free(p->plan);
  memset(p, 0, sizeof *p);
}

static void *dup_n(const void *src, size_t n, size_t size) {
  void *out = g_malloc(n > 0 ? n * size : size);
  if (n > 0) memcpy(out, src, n * size);
  return out;
}

void tn__kernel_plan_copy(TnKernPlan *dst, const TnKernPlan *src) {
  *dst = *src;
  dst->home = dup_n(src->home, (size_t)src->nvalues, sizeof(TnKernHome));
  dst->scratch = dup_n(src->scratch, (size_t)src->nsteps, sizeof(int32_t));
  dst->in_buf = dup_n(src->in_buf, (size_t)src->ninputs, sizeof(int32_t));
  dst->out_buf = dup_n(src->out_buf, (size_t)src->noutputs, sizeof(int32_t));
  dst->plan = dup_n(src->plan, src->bufs->len, sizeof(TnPlanBuffer));
  dst->bufs = g_array_sized_new(FALSE, FALSE, sizeof(TnKernBuf),
                                src->bufs->len);
  for (guint b = 0; b < src->bufs->len; b++) {
    TnKernBuf x = g_array_index(src->bufs, TnKernBuf, b);
    x.name = g_strdup(x.name);
    g_array_append_val(dst->bufs, x);
  }
}
