/*
 * aot_plan.c: where every value of a compiled model lives. The execution
 * order is chosen first (independent branches in the order with the lower
 * peak), then every value gets a home (an application buffer, a constant,
 * or a workspace buffer), buffers get live ranges, an operator that may
 * run in place takes over its dying input's buffer, and the memory planner
 * places what is left. Nothing here writes code.
 */
#include "codegen/aot_internal.h"


#define WHO TN_AOT_WHO

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

static int32_t root_of(const Gen *g, int32_t v) {
  const TnKernValue *x = &g_array_index(g->v.values, TnKernValue, v);
  return x->kind == TN_KV_VIEW ? x->index : v;
}

static int64_t arena_bytes(const Gen *g, int32_t r) {
  const TnKernValue *x = &g_array_index(g->v.values, TnKernValue, r);
  return x->kind == TN_KV_ARENA ? x->nbytes : 0;
}

static int32_t *copy_counts(const int32_t *c, int32_t n) {
  int32_t *out = g_new(int32_t, n);
  memcpy(out, c, sizeof(int32_t) * (size_t)n);
  return out;
}

/* The peak of live intermediate bytes when running steps in `order`. */
static int64_t peak(const Gen *g, const Deps *d, const int32_t *order) {
  int32_t V = g->nvalues;
  int32_t *left = copy_counts(d->readers, V + 1);
  int64_t live = 0, top = 0;
  for (int32_t k = 0; k < g->nsteps; k++) {
    const TnKernStep *st = &g_array_index(g->v.steps, TnKernStep, order[k]);
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
  const Gen *g;
  const Deps *d;
  int64_t *need;  /* per step: estimated peak to compute it, or -1 */
  bool *emitted;
  int32_t *order, n;
} Su;

/* The producers of step s's inputs, distinct, in `kids`; returns count. */
static int32_t kids_of(const Su *u, int32_t s, int32_t *kids) {
  const TnKernStep *st = &g_array_index(u->g->v.steps, TnKernStep, s);
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
  return arena_bytes(u->g, g_array_index(u->g->v.steps, TnKernStep, s).out);
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

static void su_order(const Gen *g, const Deps *d, int32_t *order) {
  int32_t S = g->nsteps;
  Su u = {g, d, g_new(int64_t, S), g_new0(bool, S), order, 0};
  su_need(&u);
  for (guint i = 0; i < g->v.outputs->len; i++) {
    int32_t p = d->producer[root_of(g, g_array_index(g->v.outputs, int32_t,
                                                     i))];
    if (p >= 0) su_emit(&u, p);
  }
  for (int32_t s = 0; s < S; s++) /* steps no output needs, in order */
    if (!u.emitted[s]) su_emit(&u, s);
  g_free(u.need), g_free(u.emitted);
}

static void choose_order(Gen *g, int32_t *order) {
  int32_t S = g->nsteps, V = g->nvalues;
  Deps d = {g_new(int32_t, V + 1), g_new0(int32_t, V + 1)};
  for (int32_t v = 0; v < V; v++) d.producer[v] = -1;
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = &g_array_index(g->v.steps, TnKernStep, s);
    d.producer[st->out] = s;
    for (int32_t i = 0; i < st->k.nin; i++) d.readers[root_of(g, st->in[i])]++;
  }
  for (guint i = 0; i < g->v.outputs->len; i++)
    d.readers[root_of(g, g_array_index(g->v.outputs, int32_t, i))]++;
  /* the greedy schedule */
  int32_t *greedy = g_new(int32_t, S > 0 ? S : 1);
  int32_t *left = copy_counts(d.readers, V + 1);
  bool *done = g_new0(bool, S > 0 ? S : 1);
  for (int32_t k = 0; k < S; k++) {
    int32_t best = -1;
    int64_t best_gain = INT64_MIN;
    for (int32_t s = 0; s < S; s++) {
      if (done[s]) continue;
      const TnKernStep *st = &g_array_index(g->v.steps, TnKernStep, s);
      bool ready = true;
      int64_t gain = -arena_bytes(g, st->out);
      for (int32_t i = 0; i < st->k.nin && ready; i++) {
        int32_t r = root_of(g, st->in[i]), p = d.producer[r], uses = 0;
        ready = p < 0 || done[p];
        bool first = true; /* count each value once, at its first read */
        for (int32_t j = 0; j < st->k.nin; j++) {
          if (root_of(g, st->in[j]) != r) continue;
          first &= j >= i;
          uses++;
        }
        if (first && left[r] == uses) gain += arena_bytes(g, r);
      }
      if (ready && gain > best_gain) best = s, best_gain = gain;
    }
    done[best] = true;
    greedy[k] = best;
    const TnKernStep *st = &g_array_index(g->v.steps, TnKernStep, best);
    for (int32_t i = 0; i < st->k.nin; i++) left[root_of(g, st->in[i])]--;
  }
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
  g_free(greedy), g_free(left), g_free(done), g_free(su);
  g_free(d.producer), g_free(d.readers);
}

/* Copy the program's steps in the chosen order and renumber the steps
 * its values refer to. */
void tn__aot_reorder(Gen *g) {
  int32_t S = g->nsteps, V = g->nvalues;
  int32_t *order = g_new(int32_t, S > 0 ? S : 1), *pos = g_new(int32_t,
                                                               S > 0 ? S : 1);
  choose_order(g, order);
  g->steps = g_new0(TnKernStep, S > 0 ? S : 1);
  for (int32_t k = 0; k < S; k++) {
    g->steps[k] = g_array_index(g->v.steps, TnKernStep, order[k]);
    pos[order[k]] = k;
  }
  g->vals = g_new0(TnKernValue, V > 0 ? V : 1);
  for (int32_t v = 0; v < V; v++) {
    g->vals[v] = g_array_index(g->v.values, TnKernValue, v);
    if (g->vals[v].def >= 0 && g->vals[v].def < S)
      g->vals[v].def = pos[g->vals[v].def];
  }
  g_free(order), g_free(pos);
}

/* Homes, buffers and live ranges; then in-place merges. */
int tn__aot_analyse(Gen *g) {
  int32_t S = g->nsteps, V = g->nvalues;
  g->home = g_new0(Home, V);
  g->scratch = g_new(int32_t, S > 0 ? S : 1);
  GHashTable *used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  for (guint i = 0; i < g->v.inputs->len; i++) {
    Io io = {0};
    io.buf = -1;
    tn__aot_io_info(g, true, (int32_t)i, &io, used);
    g_array_append_val(g->ins, io);
  }
  for (guint i = 0; i < g->v.outputs->len; i++) {
    Io io = {0};
    io.buf = -1;
    tn__aot_io_info(g, false, (int32_t)i, &io, used);
    g_array_append_val(g->outs, io);
  }
  g_hash_table_destroy(used);
  if (g->ins->len > TN_CRT_MAX_IO || g->outs->len > TN_CRT_MAX_IO)
    return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, WHO, "the model has %u "
                             "inputs and %u outputs; the firmware API holds "
                             "at most %d of each", g->ins->len, g->outs->len,
                             TN_CRT_MAX_IO);
  /* homes of base values */
  for (int32_t v = 0; v < V; v++) {
    const TnKernValue *x = value(g, v);
    Io *io = x->kind == TN_KV_INPUT ? &g_array_index(g->ins, Io, x->index)
                                     : NULL;
    if (io) io->type = x->type, io->nbytes = x->nbytes;
    if (x->kind == TN_KV_INPUT && !g->o.io_in_pool) {
      g->home[v] = (Home){H_INPUT, x->index};
    } else if (x->kind == TN_KV_INPUT) {
      io->buf = new_buf(g, B_INPUT, g_strdup(io->name), x->nbytes, 0, 0);
      g->home[v] = (Home){H_POOL, io->buf};
    } else if (x->kind == TN_KV_CONST) {
      g->home[v] = (Home){H_CONST, x->index};
    } else if (x->kind == TN_KV_ARENA) {
      g->home[v] = (Home){H_POOL, -1}; /* below */
    }
  }
  /* an output computed by a step is computed straight into the
   * application's buffer (or its own pool buffer), once */
  for (guint i = 0; i < g->outs->len; i++) {
    int32_t ov = g_array_index(g->v.outputs, int32_t, i), r = root(g, ov);
    Io *io = &g_array_index(g->outs, Io, i);
    io->type = value(g, ov)->type, io->nbytes = value(g, ov)->nbytes;
    bool claimed = value(g, r)->kind == TN_KV_ARENA && g->home[r].index < 0 &&
                   g->home[r].kind == H_POOL;
    if (claimed && !g->o.io_in_pool) {
      g->home[r] = (Home){H_OUTPUT, (int32_t)i};
    } else if (claimed) {
      io->buf = new_buf(g, B_OUTPUT, g_strdup(io->name), value(g, r)->nbytes,
                        value(g, r)->def, S);
      g->home[r] = (Home){H_POOL, io->buf};
    } else if (g->o.io_in_pool) { /* copied in at the end */
      io->buf = new_buf(g, B_OUTPUT, g_strdup(io->name), io->nbytes, S, S);
    }
  }
  for (int32_t v = 0; v < V; v++) {
    const TnKernValue *x = value(g, v);
    if (x->kind == TN_KV_ARENA && g->home[v].kind == H_POOL &&
        g->home[v].index < 0)
      g->home[v].index = new_buf(g, B_INTERMEDIATE,
                                 g_strdup_printf("t%d", v), x->nbytes,
                                 x->def, x->def);
  }
  /* live ranges: a buffer lives from its first write to its last read */
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = step(g, s);
    for (int32_t i = 0; i < st->k.nin; i++) {
      Home h = g->home[root(g, st->in[i])];
      if (h.kind == H_POOL && buf(g, h.index)->last < s)
        buf(g, h.index)->last = s;
    }
  }
  for (guint i = 0; i < g->outs->len; i++) { /* copies at the end */
    int32_t r = root(g, g_array_index(g->v.outputs, int32_t, i));
    Home h = g->home[r];
    if (h.kind == H_POOL) buf(g, h.index)->last = S;
  }
  /* in place: the output takes the buffer of an input dying here */
  for (int32_t s = 0; s < S; s++) {
    const TnKernStep *st = step(g, s);
    g->scratch[s] = -1;
    size_t scratch = st->k.scratch;
    int32_t e = st->k.inplace - 1;
    Home ho = g->home[st->out];
    if (e >= 0 && ho.kind == H_POOL &&
        buf(g, ho.index)->kind == B_INTERMEDIATE) {
      Home hi = g->home[root(g, st->in[e])];
      bool ok = hi.kind == H_POOL && buf(g, hi.index)->last == s &&
                buf(g, hi.index)->kind == B_INTERMEDIATE &&
                buf_root(g, hi.index) != buf_root(g, ho.index) &&
                value(g, root(g, st->in[e]))->nbytes >= value(g, st->out)->nbytes;
      if (ok) {
        Buf *bi = buf(g, hi.index), *bo = buf(g, ho.index);
        bi->last = bo->last;
        if (bo->size > bi->size) bi->size = bo->size;
        bo->merged = buf_root(g, hi.index);
        scratch = st->k.inplace_scratch;
      }
    }
    if (scratch > 0)
      g->scratch[s] = new_buf(g, B_SCRATCH, g_strdup_printf("scratch%d", s),
                              (int64_t)scratch, s, s);
  }
  return 0;
}

/* Whether step `s` runs in place (its output shares an input's buffer). */
bool tn__aot_in_place(Gen *g, int32_t s) {
  const TnKernStep *st = step(g, s);
  int32_t e = st->k.inplace - 1;
  if (e < 0) return false;
  Home ho = g->home[st->out], hi = g->home[root(g, st->in[e])];
  return ho.kind == H_POOL && hi.kind == H_POOL &&
         buf_root(g, ho.index) == buf_root(g, hi.index);
}

int tn__aot_plan(Gen *g) {
  int32_t n = (int32_t)g->bufs->len;
  g->plan = g_new0(TnPlanBuffer, n > 0 ? n : 1);
  for (int32_t b = 0; b < n; b++) {
    const Buf *x = &g_array_index(g->bufs, Buf, b);
    g->plan[b].size = x->merged >= 0 ? 0 : x->size;
    g->plan[b].first = x->first;
    g->plan[b].last = x->last < x->first ? x->first : x->last;
  }
  int32_t np = (int32_t)g->o.pool_names->len;
  /* which pools may hold each kind of buffer */
  static const char *const kinds[] = {"intermediate", "input", "output",
                                      "scratch"};
  for (int32_t b = 0; b < n; b++) {
    BufKind k = g_array_index(g->bufs, Buf, b).kind;
    uint32_t mask = 0;
    for (int32_t p = 0; p < np; p++)
      if (g_array_index(g->o.pool_kinds, uint32_t, p) & (UINT32_C(1) << k))
        mask |= UINT32_C(1) << p;
    if (mask == 0)
      return tn_error_raise_in(TN_ERR_VALUE, TN_AOT_WHO, "no pool accepts "
                               "%s buffers (option 'pools', 'accepts')",
                               kinds[k]);
    g->plan[b].pools = mask;
  }
  TnPlanPool pools[TN_CRT_MAX_POOLS];
  for (int32_t p = 0; p < np; p++) {
    pools[p].name = g_ptr_array_index(g->o.pool_names, p);
    pools[p].limit = g_array_index(g->o.pool_limits, int64_t, p);
  }
  TnPlanOptions po = {.alignment = g->o.align};
  if (tn_memory_plan(g->plan, n, pools, np, &po, &g->res) ||
      tn_memory_plan_validate(g->plan, n, pools, np, g->res.size,
                              g->o.align))
    return -1;
  for (int32_t b = 0; b < n; b++) { /* merged buffers sit on their host */
    int32_t r = buf_root(g, b);
    g->plan[b].pool = g->plan[r].pool, g->plan[b].offset = g->plan[r].offset;
  }
  for (int32_t p = 0; p < np; p++)
    if (g->res.size[p] > UINT32_MAX)
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "pool '%s' would need %"
                               PRId64 " bytes, more than 4 GiB",
                               pools[p].name, g->res.size[p]);
  /* constants laid out in one constant pool when asked */
  g->const_off = g_new0(int64_t, g->v.consts->len + 1);
  g->const_used = g_new0(bool, g->v.consts->len + 1);
  for (int32_t s = 0; s < g->nsteps; s++)
    for (int32_t i = 0; i < step(g, s)->k.nin; i++) {
      const TnKernValue *x = value(g, root(g, step(g, s)->in[i]));
      if (x->kind == TN_KV_CONST) g->const_used[x->index] = true;
    }
  for (guint i = 0; i < g->v.outputs->len; i++) {
    const TnKernValue *x = value(g, root(g, g_array_index(g->v.outputs,
                                                         int32_t, i)));
    if (x->kind == TN_KV_CONST) g->const_used[x->index] = true;
  }
  for (guint c = 0; c < g->v.consts->len; c++) {
    if (!g->const_used[c]) continue;
    int64_t nb = tn_tensor_nbytes(g_ptr_array_index(g->v.consts, c));
    g->const_off[c] = g->const_pool;
    g->const_pool += (nb + g->o.align - 1) / g->o.align * g->o.align;
    g->const_bytes += nb;
  }
  return 0;
}

