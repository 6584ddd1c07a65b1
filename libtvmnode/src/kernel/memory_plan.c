/*
 * memory_plan.c: the static memory planner of tvmnode/kernel.h, which
 * places the buffers of the host executor's arena and of the generated
 * code's workspace pools (plan.c decides what the buffers are).
 *
 * Placing buffers with known lifetimes in the least memory is dynamic
 * storage allocation, which is NP-hard, so the planner works in tiers
 * whose results only ever improve on one another. A greedy pass decides
 * the pools and a first plan: buffers by size, largest first, each in the
 * smallest gap left by the buffers alive beside it (TensorFlow Lite
 * Micro's planner takes the lowest gap instead; its plan is kept as a
 * floor). A seeded local search then perturbs the placement order, and in
 * pools of few buffers a branch and bound proves the minimum. Both of
 * those place an order first fit (every buffer at the lowest offset free
 * beside it): any plan can be pushed down into one that some order
 * reproduces first fit, so searching orders loses no plan, and the order
 * of the greedy offsets already gives a plan no higher than the greedy
 * one. Everything is counted in aligned sizes, which keeps every offset
 * aligned for free, and the searches are bounded by budgets of work
 * rather than time, so that plans are deterministic, a model of a few
 * hundred buffers plans in milliseconds and thousands in a fraction of a
 * second.
 */
#include "core/core_internal.h"
#include "tvmnode/kernel.h"

#include <assert.h>
#include <inttypes.h>

#include <glib.h>

#define DEFAULT_ALIGNMENT 16
#define DEFAULT_EXACT_MAX 12 /* a full proof takes at most milliseconds */
#define EXACT_LIMIT 64 /* the exact solver keeps sets in 64-bit masks */
/* Buffers compared in one exact search, about 0.2 s: past it the search
 * stops with the best plan found, unproven but never worse than before. */
#define EXACT_WORK INT64_C(100000000)
#define DEFAULT_SEARCH_ITERS 2000
/* Neighbour visits one pool's default local search may spend: 0.1 to 0.2 s
 * on a current x86 core. */
#define SEARCH_WORK INT64_C(30000000)
/* Past this many adjacency entries (dense lifetimes over many buffers) the
 * neighbours are found by scanning instead of stored: at least 2^22, and
 * 128 a buffer on large models (a million buffers with a few dozen
 * neighbours each are stored, 0.5 GB at most; scanning them would be
 * 10^12 steps), whatever is denser is scanned, which is then no slower
 * than the pairs themselves. */
#define ADJ_MIN (INT64_C(1) << 22)
#define ADJ_PER_BUFFER 128
#define ADJ_CAP (INT64_C(1) << 27)
#define SEED 0x7e57a11cu

#define PLAN_ERROR(...) \
  tn_error_raise_in(TN_ERR_VALUE, "tn_memory_plan", __VA_ARGS__)
#define CHECK_ERROR(...) \
  tn_error_raise_in(TN_ERR_VALUE, "tn_memory_plan_validate", __VA_ARGS__)

typedef struct {
  int64_t off, end;
} Span;

/* One placement problem: all the buffers while pools are assigned, then
 * the buffers of one pool. Local ids index every array. */
typedef struct {
  int32_t m;
  int64_t *size; /* aligned */
  int32_t *first, *last, *gid;
  int64_t *adj_at; /* neighbours in time of b: adj[adj_at[b]..adj_at[b+1]) */
  int32_t *adj;    /* NULL: too many, scan instead */
  const int32_t *pool; /* while assigning: each buffer's pool, else NULL */
  int64_t *off;
  int32_t *order, *pos; /* the placement order and its inverse */
  int64_t *top;         /* top[p]: the highest end among order[0..p] */
  Span *spans; /* scratch for one buffer's neighbours, twice over */
  size_t nspans;
  int64_t lb;
  /* Re-placing an order only touches buffers whose earlier neighbours
   * moved: stamp[b] == epoch marks them (every buffer when all_dirty), and
   * the offsets changed are logged so that a rejected move can be undone. */
  int64_t *stamp, epoch;
  bool all_dirty;
  int32_t *log_b, nlog;
  int64_t *log_off;
  int64_t work; /* neighbours visited: the local search's budget */
} Sub;

typedef struct {
  int64_t t, d;
} Event;

static int cmp_event(const void *a, const void *b) {
  const Event *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->d > y->d) - (x->d < y->d); /* frees before allocations */
}

/* The most bytes alive at once; sorts and consumes `ev`. */
static int64_t peak(Event *ev, size_t k) {
  qsort(ev, k, sizeof *ev, cmp_event);
  int64_t cur = 0, best = 0;
  for (size_t i = 0; i < k; i++) {
    cur += ev[i].d;
    if (cur > best) best = cur;
  }
  return best;
}

static void add_life(Event *ev, size_t *k, int64_t first, int64_t last,
                     int64_t size) {
  ev[(*k)++] = (Event){first, size};
  ev[(*k)++] = (Event){last + 1, -size};
}

/* g_memdup2 is newer than the GLib the build accepts */
static int64_t *copy_i64(const int64_t *v, int32_t n) {
  int64_t *out = g_new(int64_t, (size_t)n + 1);
  memcpy(out, v, sizeof(int64_t) * (size_t)n);
  return out;
}

static int64_t align_up(int64_t n, int64_t a) { return (n + a - 1) & ~(a - 1); }

static uint32_t allowed_pools(uint32_t mask, int32_t npools) {
  uint32_t all = npools >= 32 ? UINT32_MAX : (UINT32_C(1) << npools) - 1;
  return mask ? mask & all : all;
}

static bool overlap_in_time(const Sub *s, int32_t a, int32_t b) {
  return s->first[a] <= s->last[b] && s->first[b] <= s->last[a];
}

/* ---- the problem ----------------------------------------------------------- */

/* A sort key: ascending by a, then b, then c (c distinct). Sorting keys
 * rather than ids keeps qsort free of a context argument. */
typedef struct {
  int64_t a, b;
  int32_t c, id;
} Key;

static int cmp_key(const void *p, const void *q) {
  const Key *x = p, *y = q;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  return (x->c > y->c) - (x->c < y->c);
}

/* Pairs alive at a common step, found by a sweep over first steps so that
 * the work is the number of pairs rather than m squared. */
static void build_adjacency(Sub *s) {
  int32_t m = s->m;
  Key *f = g_new(Key, (size_t)m + 1);
  for (int32_t i = 0; i < m; i++) f[i] = (Key){s->first[i], 0, i, i};
  qsort(f, (size_t)m, sizeof *f, cmp_key);
  s->adj_at = g_new0(int64_t, (size_t)m + 1);
  for (int32_t a = 0; a < m; a++)
    for (int32_t b = a + 1; b < m && f[b].a <= s->last[f[a].id]; b++)
      s->adj_at[f[a].id]++, s->adj_at[f[b].id]++;
  int64_t total = 0, maxdeg = 0;
  for (int32_t i = 0; i < m; i++) {
    int64_t d = s->adj_at[i];
    if (d > maxdeg) maxdeg = d;
    s->adj_at[i] = total;
    total += d;
  }
  s->adj_at[m] = total;
  int64_t limit = (int64_t)m * ADJ_PER_BUFFER;
  limit = limit < ADJ_MIN ? ADJ_MIN : limit > ADJ_CAP ? ADJ_CAP : limit;
  if (total > limit) {
    s->nspans = (size_t)m + 1;
    s->spans = g_new(Span, 2 * s->nspans);
    g_free(f);
    return;
  }
  s->adj = g_new(int32_t, (size_t)total + 1);
  int64_t *fill = copy_i64(s->adj_at, m);
  for (int32_t a = 0; a < m; a++)
    for (int32_t b = a + 1; b < m && f[b].a <= s->last[f[a].id]; b++) {
      s->adj[fill[f[a].id]++] = f[b].id;
      s->adj[fill[f[b].id]++] = f[a].id;
    }
  s->nspans = (size_t)maxdeg + 1;
  s->spans = g_new(Span, 2 * s->nspans);
  g_free(fill);
  g_free(f);
}

static void sub_init(Sub *s, const TnPlanBuffer *bufs, const int64_t *asize,
                     const int32_t *ids, int32_t m) {
  memset(s, 0, sizeof *s);
  s->m = m;
  s->size = g_new(int64_t, (size_t)m + 1);
  s->first = g_new(int32_t, (size_t)m + 1);
  s->last = g_new(int32_t, (size_t)m + 1);
  s->gid = g_new(int32_t, (size_t)m + 1);
  s->off = g_new0(int64_t, (size_t)m + 1);
  s->order = g_new(int32_t, (size_t)m + 1);
  s->pos = g_new(int32_t, (size_t)m + 1);
  s->top = g_new0(int64_t, (size_t)m + 1);
  s->stamp = g_new0(int64_t, (size_t)m + 1);
  s->log_b = g_new(int32_t, (size_t)m + 1);
  s->log_off = g_new(int64_t, (size_t)m + 1);
  Event *ev = g_new(Event, 2 * (size_t)m + 1);
  size_t k = 0;
  for (int32_t i = 0; i < m; i++) {
    const TnPlanBuffer *b = &bufs[ids[i]];
    s->gid[i] = ids[i];
    s->size[i] = asize[ids[i]];
    s->first[i] = b->first;
    s->last[i] = b->last;
    s->order[i] = s->pos[i] = i;
    add_life(ev, &k, b->first, b->last, s->size[i]);
  }
  s->lb = peak(ev, k);
  g_free(ev);
  build_adjacency(s);
}

static void sub_free(Sub *s) {
  g_free(s->size), g_free(s->first), g_free(s->last), g_free(s->gid);
  g_free(s->adj_at), g_free(s->adj), g_free(s->off), g_free(s->order);
  g_free(s->pos), g_free(s->top), g_free(s->spans), g_free(s->stamp);
  g_free(s->log_b), g_free(s->log_off);
}

/* ---- greedy placement ------------------------------------------------------ */

/* Spans by offset. This sort is most of the planner's time, hence no
 * qsort: insertion for the few neighbours of most buffers, and for the
 * hundreds of a dense problem a radix sort on as many bytes as the
 * offsets have. */
static void sort_spans(Span *v, Span *tmp, size_t k) {
  if (k <= 32) {
    for (size_t i = 1; i < k; i++) {
      Span x = v[i];
      size_t j = i;
      for (; j > 0 && v[j - 1].off > x.off; j--) v[j] = v[j - 1];
      v[j] = x;
    }
    return;
  }
  int64_t most = 0;
  for (size_t i = 0; i < k; i++) most |= v[i].off;
  for (int shift = 0; shift < 64 && (most >> shift); shift += 8) {
    size_t at[257] = {0};
    for (size_t i = 0; i < k; i++) at[((v[i].off >> shift) & 255) + 1]++;
    for (int d = 0; d < 256; d++) at[d + 1] += at[d];
    for (size_t i = 0; i < k; i++) tmp[at[(v[i].off >> shift) & 255]++] = v[i];
    memcpy(v, tmp, k * sizeof *v);
  }
}

/* The offset for `b` among the buffers placed before it that live beside
 * it (in `pool`, while pools are being assigned): first fit takes the
 * lowest gap that holds it, best fit the one it wastes least of; both fall
 * back on the top. */
static int64_t place_one(Sub *s, int32_t b, int32_t pool, bool best_fit) {
  int64_t lo = s->adj ? s->adj_at[b] : 0, hi = s->adj ? s->adj_at[b + 1] : s->m;
  size_t k = 0;
  s->work += hi - lo;
  for (int64_t e = lo; e < hi; e++) {
    int32_t y = s->adj ? s->adj[e] : (int32_t)e;
    if (s->pos[y] >= s->pos[b]) continue;
    if (!s->adj && !overlap_in_time(s, y, b)) continue;
    if (s->pool && s->pool[y] != pool) continue;
    s->spans[k++] = (Span){s->off[y], s->off[y] + s->size[y]};
  }
  sort_spans(s->spans, s->spans + s->nspans, k);
  int64_t at = 0, best = -1, waste = INT64_MAX, need = s->size[b];
  for (size_t i = 0; i < k; i++) {
    int64_t gap = s->spans[i].off - at;
    if (gap >= need) {
      if (!best_fit || gap == need) return at;
      if (gap - need < waste) waste = gap - need, best = at;
    }
    if (s->spans[i].end > at) at = s->spans[i].end;
  }
  return best >= 0 ? best : at;
}

/* Mark `b` and its neighbours for re-placing: the ones after it see it
 * differently once it has moved in the order or in memory. */
static void touch(Sub *s, int32_t b) {
  s->stamp[b] = s->epoch;
  if (!s->adj) {
    s->all_dirty = true;
    return;
  }
  s->work += s->adj_at[b + 1] - s->adj_at[b];
  for (int64_t e = s->adj_at[b]; e < s->adj_at[b + 1]; e++)
    s->stamp[s->adj[e]] = s->epoch;
}

/* Re-place the marked buffers of order[from..] first fit, in turn, and
 * return the height; stops as soon as the height passes `bound`, since the
 * caller throws such an attempt away (most rejected moves end here). */
static int64_t place_from(Sub *s, int32_t from, int64_t bound) {
  int64_t h = from > 0 ? s->top[from - 1] : 0;
  for (int32_t p = from; p < s->m; p++) {
    int32_t b = s->order[p];
    if (s->all_dirty || s->stamp[b] == s->epoch) {
      int64_t o = place_one(s, b, -1, false);
      if (o != s->off[b]) {
        s->log_b[s->nlog] = b;
        s->log_off[s->nlog++] = s->off[b];
        s->off[b] = o;
        touch(s, b);
      }
    }
    if (s->off[b] + s->size[b] > h) h = s->off[b] + s->size[b];
    s->top[p] = h;
    if (h > bound) return h;
  }
  return h;
}

static void begin_pass(Sub *s, bool all) {
  s->epoch++;
  s->all_dirty = all;
  s->nlog = 0;
}

static int64_t height(const Sub *s) {
  int64_t h = 0;
  for (int32_t i = 0; i < s->m; i++)
    if (s->off[i] + s->size[i] > h) h = s->off[i] + s->size[i];
  return h;
}

static void sort_order(Sub *s, Key *keys) {
  qsort(keys, (size_t)s->m, sizeof(Key), cmp_key);
  for (int32_t p = 0; p < s->m; p++) {
    s->order[p] = keys[p].id;
    s->pos[keys[p].id] = p;
  }
}

/* Re-place the current plan first fit in the order of its offsets: no
 * buffer moves up (the ones below it were placed no higher), so this is
 * the local search's start and never worse than the greedy plan. */
static int64_t settle(Sub *s) {
  Key *keys = g_new(Key, (size_t)s->m + 1);
  for (int32_t i = 0; i < s->m; i++) keys[i] = (Key){s->off[i], 0, i, i};
  sort_order(s, keys);
  g_free(keys);
  begin_pass(s, true);
  return place_from(s, 0, INT64_MAX);
}

/* ---- local search ---------------------------------------------------------- */

/* A move: take the buffer at position j and put it at position i (the
 * others shift), or swap the two. Half the moves take a buffer that ends
 * at the top, the only ones whose move can lower the plan at once, and put
 * it earlier; the rest are blind, to leave plateaus. Moves that keep the
 * height are kept too, for the same reason. */
static void pick_move(Sub *s, GRand *r, int64_t h, int32_t *i, int32_t *j,
                      bool *swap) {
  int32_t m = s->m;
  *swap = false;
  if (g_rand_boolean(r)) {
    int32_t start = g_rand_int_range(r, 0, m);
    for (int32_t k = 0; k < m; k++) {
      int32_t b = (start + k) % m;
      if (s->off[b] + s->size[b] == h && s->pos[b] > 0) {
        *j = s->pos[b];
        *i = g_rand_int_range(r, 0, *j);
        return;
      }
    }
  }
  *i = g_rand_int_range(r, 0, m);
  do *j = g_rand_int_range(r, 0, m);
  while (*j == *i);
  *swap = g_rand_boolean(r);
}

static void local_search(Sub *s, int64_t iters, int64_t budget,
                         uint32_t seed) {
  int32_t m = s->m;
  int64_t cur = s->top[m - 1];
  int32_t *save_order = g_new(int32_t, (size_t)m);
  int64_t *save_top = g_new(int64_t, (size_t)m);
  GRand *r = g_rand_new_with_seed(seed);
  budget = s->work + MIN(budget, INT64_MAX / 2);
  for (int64_t it = 0; it < iters && cur > s->lb && s->work < budget; it++) {
    int32_t i, j;
    bool swap;
    pick_move(s, r, cur, &i, &j, &swap);
    int32_t from = MIN(i, j), to = MAX(i, j);
    size_t len = (size_t)(to - from + 1), tail = (size_t)(m - from);
    memcpy(save_order, s->order + from, len * sizeof(int32_t));
    memcpy(save_top, s->top + from, tail * sizeof(int64_t));
    begin_pass(s, false);
    int32_t b = s->order[j];
    if (swap) {
      s->order[j] = s->order[i];
      s->order[i] = b;
      touch(s, s->order[j]);
    } else if (i < j) {
      memmove(s->order + i + 1, s->order + i, (size_t)(j - i) * sizeof(int32_t));
      s->order[i] = b;
    } else {
      memmove(s->order + j, s->order + j + 1, (size_t)(i - j) * sizeof(int32_t));
      s->order[i] = b;
    }
    touch(s, b);
    for (int32_t p = from; p <= to; p++) s->pos[s->order[p]] = p;
    int64_t h = place_from(s, from, cur);
    if (h <= cur) {
      cur = h;
      continue;
    }
    memcpy(s->order + from, save_order, len * sizeof(int32_t));
    memcpy(s->top + from, save_top, tail * sizeof(int64_t));
    for (int32_t p = from; p <= to; p++) s->pos[s->order[p]] = p;
    for (int32_t k = 0; k < s->nlog; k++) s->off[s->log_b[k]] = s->log_off[k];
  }
  g_rand_free(r);
  g_free(save_order), g_free(save_top);
}

/* ---- exact solver ---------------------------------------------------------- */

/*
 * A depth-first search over first-fit orders, cut down by three facts.
 * Some optimal plan is reproduced first fit by the order of its own
 * offsets (push every buffer down as far as it goes, repeat until nothing
 * moves), so only orders whose offsets never decrease need be tried, ties
 * by index. Identical buffers (same size and lifetime) can be taken in
 * index order. And the plan cannot end lower than any unplaced buffer's
 * lowest free offset now (placing more only raises it) plus its size, nor,
 * at any step, than the last offset plus what must still fit above it.
 */
typedef struct {
  Sub *s;
  uint64_t all, adj[EXACT_LIMIT], alive[EXACT_LIMIT];
  int32_t npts, twin[EXACT_LIMIT];
  int64_t off[EXACT_LIMIT], best_off[EXACT_LIMIT], best, work;
  bool stop;
  /* per depth, here rather than on the stack: threads may have small ones */
  int64_t ff[EXACT_LIMIT][EXACT_LIMIT];
  int32_t cand[EXACT_LIMIT][EXACT_LIMIT];
} Exact;

static int64_t lowest_free(Exact *x, uint64_t placed, int32_t r) {
  Span sp[EXACT_LIMIT];
  int k = 0;
  x->work += 1 + __builtin_popcountll(placed & x->adj[r]);
  for (uint64_t w = placed & x->adj[r]; w; w &= w - 1) {
    int y = __builtin_ctzll(w), i = k++;
    Span v = {x->off[y], x->off[y] + x->s->size[y]};
    for (; i > 0 && sp[i - 1].off > v.off; i--) sp[i] = sp[i - 1];
    sp[i] = v;
  }
  int64_t at = 0;
  for (int i = 0; i < k; i++) {
    if (sp[i].off - at >= x->s->size[r]) return at;
    if (sp[i].end > at) at = sp[i].end;
  }
  return at;
}

/* What must still fit above `last_off`, at the busiest step. */
static int64_t above_bound(Exact *x, uint64_t placed, int64_t last_off) {
  int64_t most = 0;
  for (int32_t t = 0; t < x->npts; t++) {
    int64_t need = last_off;
    x->work += 1 + __builtin_popcountll(x->alive[t]);
    for (uint64_t w = x->alive[t]; w; w &= w - 1) {
      int y = __builtin_ctzll(w);
      if (!(placed >> y & 1)) need += x->s->size[y];
      else if (x->off[y] + x->s->size[y] > last_off)
        need += x->off[y] + x->s->size[y] - last_off;
    }
    if (need > most) most = need;
  }
  return most;
}

static void dfs(Exact *x, uint64_t placed, int32_t last, int64_t last_off,
                int64_t h) {
  const Sub *s = x->s;
  if (x->work > EXACT_WORK) x->stop = true;
  if (x->stop) return;
  if (placed == x->all) {
    if (h < x->best) {
      x->best = h;
      memcpy(x->best_off, x->off, sizeof(int64_t) * (size_t)s->m);
      if (h == s->lb) x->stop = true;
    }
    return;
  }
  int depth = __builtin_popcountll(placed);
  int64_t *ff = x->ff[depth], bound = h;
  int32_t *cand = x->cand[depth], nc = 0;
  for (uint64_t w = x->all & ~placed; w; w &= w - 1) {
    int32_t r = __builtin_ctzll(w);
    ff[r] = lowest_free(x, placed, r);
    bound = MAX(bound, MAX(ff[r], last_off) + s->size[r]);
    if ((ff[r] > last_off || (ff[r] == last_off && r > last)) &&
        (x->twin[r] < 0 || (placed >> x->twin[r] & 1)))
      cand[nc++] = r;
  }
  if (nc == 0 || bound >= x->best ||
      above_bound(x, placed, last_off) >= x->best)
    return;
  /* low offsets first, then large buffers: the first descent is a good
   * first-fit plan, which tightens the bound early */
  for (int32_t i = 1; i < nc; i++) {
    int32_t r = cand[i], k = i;
    for (; k > 0; k--) {
      int32_t q = cand[k - 1];
      if (ff[q] < ff[r] || (ff[q] == ff[r] && s->size[q] >= s->size[r])) break;
      cand[k] = q;
    }
    cand[k] = r;
  }
  for (int32_t i = 0; i < nc && !x->stop; i++) {
    int32_t r = cand[i];
    x->off[r] = ff[r];
    dfs(x, placed | UINT64_C(1) << r, r, ff[r], MAX(h, ff[r] + s->size[r]));
  }
}

static void solve_exactly(Sub *s) {
  Exact *x = g_new0(Exact, 1);
  int32_t m = s->m;
  x->s = s;
  x->all = m == 64 ? UINT64_MAX : (UINT64_C(1) << m) - 1;
  for (int32_t a = 0; a < m; a++) {
    x->twin[a] = -1;
    for (int32_t b = 0; b < m; b++) {
      if (a != b && overlap_in_time(s, a, b)) x->adj[a] |= UINT64_C(1) << b;
      if (b < a && s->size[a] == s->size[b] && s->first[a] == s->first[b] &&
          s->last[a] == s->last[b])
        x->twin[a] = b;
    }
    /* the busiest steps are where some buffer starts */
    for (int32_t b = 0; b < m; b++)
      if (s->first[b] <= s->first[a] && s->first[a] <= s->last[b])
        x->alive[x->npts] |= UINT64_C(1) << b;
    x->npts++;
  }
  x->best = height(s);
  memcpy(x->best_off, s->off, sizeof(int64_t) * (size_t)m);
  dfs(x, 0, -1, 0, 0);
  memcpy(s->off, x->best_off, sizeof(int64_t) * (size_t)m);
  g_free(x);
}

/* ---- arguments ------------------------------------------------------------- */

static int check_buffer(const char *who, const TnPlanBuffer *b, int32_t i,
                        int32_t npools) {
  if (b->size < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "bufs[%d].size is %" PRId64 "; it must be >= 0",
                             i, b->size);
  if (b->first < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "bufs[%d].first is %d; it must be >= 0", i,
                             b->first);
  if (b->first > b->last)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "bufs[%d] has first %d > last %d", i, b->first,
                             b->last);
  if (!allowed_pools(b->pools, npools))
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "bufs[%d].pools is 0x%" PRIx32
                             ", which names none of the %d pools",
                             i, b->pools, npools);
  return 0;
}

static int check_common(const char *who, const TnPlanBuffer *bufs, int32_t n,
                        const TnPlanPool *pools, int32_t npools) {
  if (n < 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "n is %d; it must be >= 0", n);
  if (npools < 1 || npools > TN_PLAN_MAX_POOLS)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "npools is %d; it must be 1..%d", npools,
                             TN_PLAN_MAX_POOLS);
  if (!bufs && n > 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "bufs is NULL but n is %d", n);
  if (!pools)
    return tn_error_raise_in(TN_ERR_VALUE, who, "pools is NULL");
  for (int32_t p = 0; p < npools; p++)
    if (pools[p].limit < 0)
      return tn_error_raise_in(TN_ERR_VALUE, who,
                               "pools[%d].limit is %" PRId64
                               "; it must be >= 0 (0: no limit)",
                               p, pools[p].limit);
  for (int32_t i = 0; i < n; i++)
    if (check_buffer(who, &bufs[i], i, npools) < 0) return -1;
  return 0;
}

static int check_alignment(const char *who, const char *what, int64_t *a) {
  if (*a == 0) *a = DEFAULT_ALIGNMENT;
  if (*a < 0 || (*a & (*a - 1)))
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "%s is %" PRId64 "; it must be a power of two "
                             "(0: %d)",
                             what, *a, DEFAULT_ALIGNMENT);
  return 0;
}

/* "pool 1 'dram'", or "pool 1" for a pool without a name. */
static void describe_pool(GString *out, const TnPlanPool *pools, int32_t p) {
  g_string_append_printf(out, "pool %d", p);
  if (pools[p].name) g_string_append_printf(out, " '%s'", pools[p].name);
}

/* ---- pools ----------------------------------------------------------------- */

/* The least room `b` needs in `pool` beside the buffers already there: its
 * size on top of the most of them alive at one step of its life. */
static int64_t room_needed(const Sub *g, int32_t b, int32_t pool) {
  int64_t lo = g->adj ? g->adj_at[b] : 0, hi = g->adj ? g->adj_at[b + 1] : g->m;
  Event *ev = g_new(Event, 2 * (size_t)(hi - lo) + 1);
  size_t k = 0;
  for (int64_t e = lo; e < hi; e++) {
    int32_t y = g->adj ? g->adj[e] : (int32_t)e;
    if (g->pos[y] >= g->pos[b] || g->pool[y] != pool ||
        !overlap_in_time(g, y, b))
      continue;
    add_life(ev, &k, MAX(g->first[y], g->first[b]),
             MIN(g->last[y], g->last[b]), g->size[y]);
  }
  int64_t most = peak(ev, k);
  g_free(ev);
  return most + g->size[b];
}

static int no_room(const Sub *g, const TnPlanBuffer *bufs,
                   const TnPlanPool *pools, int32_t npools, int32_t b) {
  const TnPlanBuffer *x = &bufs[g->gid[b]];
  GString *msg = g_string_new(NULL);
  g_string_append_printf(msg,
                         "buffer %d (%" PRId64 " bytes, %" PRId64
                         " aligned, steps %d..%d) fits in no pool it may use:",
                         g->gid[b], x->size, g->size[b], x->first, x->last);
  const char *sep = " ";
  uint32_t mask = allowed_pools(x->pools, npools);
  for (int32_t p = 0; p < npools; p++) {
    if (!(mask >> p & 1)) continue;
    g_string_append(msg, sep);
    describe_pool(msg, pools, p);
    g_string_append_printf(msg,
                           " (limit %" PRId64 ") would need at least %" PRId64
                           " bytes",
                           pools[p].limit, room_needed(g, b, p));
    sep = "; ";
  }
  int rc = PLAN_ERROR("%s", msg->str);
  g_string_free(msg, TRUE);
  return rc;
}

/* Each buffer, in the greedy order, to the first pool it may use where the
 * greedy placement keeps it inside the limit; that placement is also each
 * pool's greedy plan, since it only ever looks at buffers of the pool. */
static int assign_pools(Sub *g, int32_t *pool_of, const TnPlanBuffer *bufs,
                        const TnPlanPool *pools, int32_t npools) {
  for (int32_t p = 0; p < g->m; p++) {
    int32_t b = g->order[p];
    uint32_t mask = allowed_pools(bufs[g->gid[b]].pools, npools);
    for (int32_t q = 0; q < npools && pool_of[b] < 0; q++) {
      if (!(mask >> q & 1)) continue;
      int64_t off = place_one(g, b, q, true);
      if (pools[q].limit && off + g->size[b] > pools[q].limit) continue;
      pool_of[b] = q;
      g->off[b] = off;
    }
    if (pool_of[b] < 0) return no_room(g, bufs, pools, npools, b);
  }
  return 0;
}

/* Improve one pool's greedy plan (in s->off, s->order the greedy order). */
static void improve(Sub *s, int64_t iters, int32_t exact_max, uint32_t seed) {
  if (s->m < 2) return;
  int64_t greedy = height(s);
  if (iters == -1) iters = 0;
  if (iters == 0 && exact_max < s->m) return;
  /* the default: also a budget of work, which keeps large or dense
   * problems (whose iterations cost more) fast */
  int64_t budget = iters == INT64_MIN ? SEARCH_WORK : INT64_MAX;
  if (iters == INT64_MIN) iters = DEFAULT_SEARCH_ITERS;
  if (iters > 0 && greedy > s->lb) {
    /* First fit in the same order (TensorFlow Lite Micro's plan) packs
     * some dense problems better than best fit, yet the search does better
     * from best fit on the whole; so it starts there and only keeps first
     * fit should the search, cut short by its budget, end above it. */
    size_t bytes = sizeof(int64_t) * (size_t)s->m;
    int64_t *best_fit = copy_i64(s->off, s->m);
    begin_pass(s, true);
    int64_t first_fit = place_from(s, 0, INT64_MAX);
    int64_t *ff = copy_i64(s->off, s->m);
    memcpy(s->off, best_fit, bytes);
    settle(s);
    local_search(s, iters, budget, seed);
    if (first_fit < height(s)) memcpy(s->off, ff, bytes);
    g_free(best_fit);
    g_free(ff);
  }
  if (s->m <= exact_max && height(s) > s->lb) solve_exactly(s);
  assert(height(s) <= greedy);
  (void)greedy;
}

TN_API int tn_memory_plan(TnPlanBuffer *bufs, int32_t n,
                          const TnPlanPool *pools, int32_t npools,
                          const TnPlanOptions *opt, TnPlanResult *res) {
  if (check_common("tn_memory_plan", bufs, n, pools, npools) < 0) return -1;
  if (!res) return PLAN_ERROR("res is NULL");
  TnPlanOptions o = opt ? *opt : (TnPlanOptions){0};
  if (check_alignment("tn_memory_plan", "opt->alignment", &o.alignment) < 0)
    return -1;
  if (o.exact_max < -1)
    return PLAN_ERROR("opt->exact_max is %d; it must be >= -1", o.exact_max);
  if (o.search_iters < -1)
    return PLAN_ERROR("opt->search_iters is %" PRId64 "; it must be >= -1",
                      o.search_iters);
  int32_t exact_max = o.exact_max == 0 ? DEFAULT_EXACT_MAX : o.exact_max;
  exact_max = MIN(exact_max, EXACT_LIMIT);
  int64_t iters = o.search_iters == 0 ? INT64_MIN : o.search_iters;

  /* Every offset the greedy or first-fit placement makes is at most the
   * sum of the sizes placed before, so one check of the sum rules out any
   * overflow later. */
  int64_t *asize = g_new(int64_t, (size_t)n + 1), sum = 0;
  int32_t *ids = g_new(int32_t, (size_t)n + 1), m = 0;
  Event *ev = g_new(Event, 2 * (size_t)n + 1);
  size_t k = 0;
  for (int32_t i = 0; i < n; i++) {
    if (bufs[i].size > INT64_MAX - (o.alignment - 1) ||
        tn__ckd_add(&sum, sum, align_up(bufs[i].size, o.alignment))) {
      g_free(asize), g_free(ids), g_free(ev);
      return PLAN_ERROR("bufs[%d].size %" PRId64 " overflows int64 when added "
                        "up with the sizes before it, aligned to %" PRId64,
                        i, bufs[i].size, o.alignment);
    }
    asize[i] = align_up(bufs[i].size, o.alignment);
    if (asize[i] > 0) ids[m++] = i;
    add_life(ev, &k, bufs[i].first, bufs[i].last, asize[i]);
  }
  int64_t lower_bound = peak(ev, k);
  g_free(ev);

  Sub g;
  sub_init(&g, bufs, asize, ids, m);
  int32_t *pool_of = g_new(int32_t, (size_t)m + 1);
  Key *keys = g_new(Key, (size_t)m + 1);
  for (int32_t i = 0; i < m; i++) {
    pool_of[i] = -1;
    keys[i] = (Key){-g.size[i], (int64_t)g.first[i] - g.last[i], g.gid[i], i};
  }
  sort_order(&g, keys); /* largest first, the longest-lived among equals */
  g_free(keys);
  g.pool = pool_of;
  int rc = assign_pools(&g, pool_of, bufs, pools, npools);

  int64_t *off = g_new0(int64_t, (size_t)n + 1);
  int32_t *local = g_new(int32_t, (size_t)m + 1);
  int64_t size[TN_PLAN_MAX_POOLS] = {0};
  for (int32_t q = 0; q < npools && rc == 0; q++) {
    int32_t mq = 0;
    for (int32_t p = 0; p < m; p++)
      if (pool_of[g.order[p]] == q) {
        local[mq] = g.order[p];
        ids[mq++] = g.gid[g.order[p]];
      }
    if (mq == 0) continue;
    /* one pool holding everything (the common case) goes on in place */
    Sub s, *sp = &g;
    if (mq < m) {
      sub_init(&s, bufs, asize, ids, mq); /* in the greedy order */
      for (int32_t i = 0; i < mq; i++) s.off[i] = g.off[local[i]];
      sp = &s;
    }
    g.pool = NULL;
    improve(sp, iters, exact_max, SEED + (uint32_t)q);
    for (int32_t i = 0; i < mq; i++) off[sp->gid[i]] = sp->off[i];
    size[q] = height(sp);
    if (sp == &s) sub_free(&s);
  }
  if (rc == 0) {
    for (int32_t p = 0; p < m; p++) bufs[g.gid[p]].pool = pool_of[p];
    res->total = 0;
    for (int32_t q = 0; q < TN_PLAN_MAX_POOLS; q++) {
      res->size[q] = size[q];
      res->total += size[q];
    }
    res->lower_bound = lower_bound;
    for (int32_t i = 0; i < n; i++) {
      if (asize[i] == 0) {
        /* takes no room: the first pool it may use, at 0 */
        bufs[i].pool = __builtin_ctz(allowed_pools(bufs[i].pools, npools));
        bufs[i].offset = 0;
      } else {
        bufs[i].offset = off[i];
      }
    }
  }
  g_free(off), g_free(local), g_free(pool_of), g_free(asize), g_free(ids);
  sub_free(&g);
  return rc;
}

/* ---- validation ------------------------------------------------------------ */

/* One buffer's own constraints; its end (aligned) in *end. */
static int check_placed(const TnPlanBuffer *b, int32_t i,
                        const TnPlanPool *pools, int32_t npools,
                        const int64_t *sizes, int64_t align, int64_t *end) {
  if (b->pool < 0 || b->pool >= npools)
    return CHECK_ERROR("bufs[%d].pool is %d; there are %d pools", i, b->pool,
                       npools);
  if (!(allowed_pools(b->pools, npools) >> b->pool & 1))
    return CHECK_ERROR("bufs[%d] is in pool %d, which its mask 0x%" PRIx32
                       " does not allow",
                       i, b->pool, b->pools);
  if (b->offset < 0 || b->offset % align)
    return CHECK_ERROR("bufs[%d].offset %" PRId64
                       " is not a non-negative multiple of the alignment "
                       "%" PRId64,
                       i, b->offset, align);
  if (b->size > INT64_MAX - (align - 1) ||
      tn__ckd_add(end, b->offset, align_up(b->size, align)))
    return CHECK_ERROR("bufs[%d] (offset %" PRId64 ", size %" PRId64
                       ") ends past INT64_MAX",
                       i, b->offset, b->size);
  int64_t limit = pools[b->pool].limit;
  GString *pool = g_string_new(NULL);
  describe_pool(pool, pools, b->pool);
  int rc = 0;
  if (limit && *end > limit)
    rc = CHECK_ERROR("bufs[%d] ends at byte %" PRId64 ", past the limit %"
                     PRId64 " of %s",
                     i, *end, limit, pool->str);
  else if (sizes && *end > sizes[b->pool])
    rc = CHECK_ERROR("bufs[%d] ends at byte %" PRId64 ", past the size %"
                     PRId64 " of %s (sizes[%d])",
                     i, *end, sizes[b->pool], pool->str, b->pool);
  g_string_free(pool, TRUE);
  return rc;
}

TN_API int tn_memory_plan_validate(const TnPlanBuffer *bufs, int32_t n,
                                   const TnPlanPool *pools, int32_t npools,
                                   const int64_t *sizes, int64_t alignment) {
  const char *who = "tn_memory_plan_validate";
  if (check_common(who, bufs, n, pools, npools) < 0 ||
      check_alignment(who, "alignment", &alignment) < 0)
    return -1;
  Key *v = g_new(Key, (size_t)n + 1);
  int32_t k = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t end;
    if (check_placed(&bufs[i], i, pools, npools, sizes, alignment, &end) < 0) {
      g_free(v);
      return -1;
    }
    if (bufs[i].size > 0) v[k++] = (Key){bufs[i].pool, bufs[i].first, i, i};
  }
  /* sorted by pool and first step, each buffer need only be compared with
   * those after it that start before it ends */
  qsort(v, (size_t)k, sizeof *v, cmp_key);
  int rc = 0;
  for (int32_t i = 0; i < k && rc == 0; i++) {
    const TnPlanBuffer *x = &bufs[v[i].id];
    for (int32_t j = i + 1; j < k && v[j].a == v[i].a && v[j].b <= x->last &&
                            rc == 0;
         j++) {
      const TnPlanBuffer *y = &bufs[v[j].id];
      if (y->offset >= x->offset + x->size || x->offset >= y->offset + y->size)
        continue;
      int32_t a = MIN(v[i].id, v[j].id), b = MAX(v[i].id, v[j].id);
      GString *pool = g_string_new(NULL);
      describe_pool(pool, pools, x->pool);
      rc = CHECK_ERROR("buffers %d and %d overlap in %s at step %d: bytes "
                       "[%" PRId64 ", %" PRId64 ") and [%" PRId64 ", %" PRId64
                       ")",
                       a, b, pool->str, y->first, bufs[a].offset,
                       bufs[a].offset + bufs[a].size, bufs[b].offset,
                       bufs[b].offset + bufs[b].size);
      g_string_free(pool, TRUE);
    }
  }
  g_free(v);
  return rc;
}
