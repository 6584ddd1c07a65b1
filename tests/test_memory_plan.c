/*
 * test_memory_plan.c: the static memory planner (tvmnode/codegen.h).
 *
 * Small plans are checked by hand, down to the offsets; random plans are
 * checked by the validator, against the lower bound, and, when small,
 * against the optimum found here by trying every order (placed first fit,
 * by code written apart from the planner's). Pools, masks and limits,
 * every malformed argument and every fault the validator must catch give
 * errors that name what was wrong.
 */
#include <glib.h>
#include <limits.h>
#include <stdbool.h>

#include <tvmnode/codegen.h>

#include "tn_test.h"

#define MAX_N 64

static TnPlanBuffer buf(int64_t size, int32_t first, int32_t last) {
  return (TnPlanBuffer){size, first, last, 0, -1, -1};
}

static const TnPlanPool arena[] = {{"arena", 0}};

/* Plan, assert the plan valid against the sizes it reports, and return
 * the total. */
static int64_t plan(TnPlanBuffer *b, int32_t n, const TnPlanPool *pools,
                    int32_t npools, const TnPlanOptions *opt,
                    TnPlanResult *res) {
  TN_OK(tn_memory_plan(b, n, pools, npools, opt, res));
  int64_t align = opt && opt->alignment ? opt->alignment : 16;
  TN_OK(tn_memory_plan_validate(b, n, pools, npools, res->size, align));
  int64_t total = 0;
  for (int32_t q = 0; q < TN_PLAN_MAX_POOLS; q++) {
    ck_assert_int_ge(res->size[q], 0);
    ck_assert_int_eq(res->size[q] % align, 0);
    if (q >= npools) ck_assert_int_eq(res->size[q], 0);
    total += res->size[q];
  }
  ck_assert_int_eq(res->total, total);
  if (npools == 1) ck_assert_int_ge(res->size[0], res->lower_bound);
  return res->total;
}

static int64_t plan1(TnPlanBuffer *b, int32_t n, const TnPlanOptions *opt) {
  TnPlanResult res;
  return plan(b, n, arena, 1, opt, &res);
}

static const TnPlanOptions greedy_only = {0, -1, -1};
static const TnPlanOptions exact_only = {0, 0, -1};

/* ---- the optimum, by brute force ----------------------------------------- */

static int64_t up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

/* The lowest offset where `b` overlaps none of the `k` buffers placed
 * (in `placed`, with offsets in `off`) that share a step with it: 0 or
 * the end of one of them, whichever is lowest and free. */
static int64_t lowest_free(const TnPlanBuffer *v, const int32_t *placed,
                           int32_t k, const int64_t *off, int32_t b,
                           int64_t a) {
  int64_t best = INT64_MAX;
  for (int32_t c = -1; c < k; c++) {
    int64_t at = c < 0 ? 0 : off[placed[c]] + up(v[placed[c]].size, a);
    if (at >= best) continue;
    bool clear = true;
    for (int32_t d = 0; d < k && clear; d++) {
      const TnPlanBuffer *y = &v[placed[d]];
      clear = !(y->first <= v[b].last && v[b].first <= y->last &&
               off[placed[d]] < at + up(v[b].size, a) &&
               at < off[placed[d]] + up(y->size, a));
    }
    if (clear) best = at;
  }
  return best;
}

/* Every order of the buffers, each placed first fit: some order gives an
 * optimal plan. */
static int64_t brute_force(const TnPlanBuffer *v, int32_t n, int64_t a) {
  int32_t perm[MAX_N], c[MAX_N] = {0};
  int64_t off[MAX_N], best = INT64_MAX;
  for (int32_t i = 0; i < n; i++) perm[i] = i;
  for (int32_t i = 0;;) { /* Heap's algorithm */
    int64_t h = 0;
    for (int32_t k = 0; k < n && h < best; k++) {
      off[perm[k]] = lowest_free(v, perm, k, off, perm[k], a);
      h = MAX(h, off[perm[k]] + up(v[perm[k]].size, a));
    }
    best = MIN(best, h);
    while (i < n && c[i] >= i) c[i++] = 0;
    if (i >= n) break;
    int32_t j = i % 2 ? c[i] : 0, t = perm[j];
    perm[j] = perm[i];
    perm[i] = t;
    c[i]++;
    i = 0;
  }
  return n ? best : 0;
}

/* n buffers over `steps` steps, sizes 1..max_size */
static void random_buffers(GRand *r, TnPlanBuffer *v, int32_t n,
                           int32_t steps, int32_t max_size) {
  for (int32_t i = 0; i < n; i++) {
    int32_t f = g_rand_int_range(r, 0, steps);
    int32_t l = MIN(steps - 1, f + g_rand_int_range(r, 0, steps / 2 + 1));
    v[i] = buf(g_rand_int_range(r, 1, max_size + 1), f, l);
  }
}

/* ---- small plans ----------------------------------------------------------- */

START_TEST(test_empty) {
  TnPlanResult res;
  memset(&res, 0x55, sizeof res);
  TN_OK(tn_memory_plan(NULL, 0, arena, 1, NULL, &res));
  ck_assert_int_eq(res.total, 0);
  ck_assert_int_eq(res.lower_bound, 0);
  for (int32_t q = 0; q < TN_PLAN_MAX_POOLS; q++)
    ck_assert_int_eq(res.size[q], 0);
  TN_OK(tn_memory_plan_validate(NULL, 0, arena, 1, res.size, 0));
}
END_TEST

START_TEST(test_one_buffer) {
  TnPlanBuffer b[] = {buf(100, 3, 7)};
  TnPlanResult res;
  ck_assert_int_eq(plan(b, 1, arena, 1, NULL, &res), 112);
  ck_assert_int_eq(b[0].pool, 0);
  ck_assert_int_eq(b[0].offset, 0);
  ck_assert_int_eq(res.size[0], 112);
  ck_assert_int_eq(res.lower_bound, 112);
}
END_TEST

/* A feeds B feeds C: A is dead when C is made, so they share. */
START_TEST(test_chain) {
  TnPlanBuffer b[] = {buf(64, 0, 1), buf(64, 1, 2), buf(64, 2, 3)};
  TnPlanResult res;
  ck_assert_int_eq(plan(b, 3, arena, 1, NULL, &res), 128);
  ck_assert_int_eq(res.lower_bound, 128);
  ck_assert_int_eq(b[0].offset, b[2].offset);
  ck_assert_int_ne(b[0].offset, b[1].offset);
}
END_TEST

START_TEST(test_zero_size) {
  static const TnPlanPool two[] = {{"fast", 0}, {"slow", 0}};
  TnPlanBuffer b[] = {buf(0, 0, 5), buf(32, 0, 5), buf(0, 1, 2)};
  b[2].pools = 0x2;
  TnPlanResult res;
  ck_assert_int_eq(plan(b, 3, two, 2, NULL, &res), 32);
  ck_assert_int_eq(b[0].pool, 0);
  ck_assert_int_eq(b[0].offset, 0);
  ck_assert_int_eq(b[2].pool, 1);
  ck_assert_int_eq(b[2].offset, 0);
  ck_assert_int_eq(res.size[1], 0);
  ck_assert_int_eq(res.lower_bound, 32);
}
END_TEST

/*
 * Greedy by size goes wrong here (in units of 64 bytes):
 *   A 2 units, steps 0..1     B 2, steps 1..2
 *   C 2 units, steps 3..4     D 1, steps 2..4
 * A, B and C tie on size and lifetime, so they go first: A at 0, B on A
 * at 2, C at 0 (it meets neither). D then meets B (at 2..4) and C (at
 * 0..2), so it goes on top, at 4: 5 units. The optimum is the bound, 4:
 * D at 0 and C on it at 1, where A was.
 */
START_TEST(test_exact_beats_greedy) {
  TnPlanBuffer b[] = {buf(128, 0, 1), buf(128, 1, 2), buf(128, 3, 4),
                      buf(64, 2, 4)};
  ck_assert_int_eq(plan1(b, 4, &greedy_only), 5 * 64);
  ck_assert_int_eq(b[3].offset, 4 * 64);
  TnPlanResult res;
  ck_assert_int_eq(plan(b, 4, arena, 1, &exact_only, &res), 4 * 64);
  ck_assert_int_eq(res.lower_bound, 4 * 64);
  ck_assert_int_eq(plan1(b, 4, NULL), 4 * 64); /* the default finds it too */
}
END_TEST

START_TEST(test_alignment) {
  static const int64_t aligns[] = {1, 16, 64};
  for (size_t k = 0; k < G_N_ELEMENTS(aligns); k++) {
    int64_t a = aligns[k];
    TnPlanBuffer b[] = {buf(1, 0, 2), buf(17, 1, 3), buf(100, 2, 4),
                        buf(3, 0, 4)};
    TnPlanOptions opt = {a, 0, 0};
    TnPlanResult res;
    int64_t total = plan(b, 4, arena, 1, &opt, &res);
    int64_t bound = up(1, a) + up(17, a) + up(100, a) + up(3, a);
    ck_assert_int_eq(res.lower_bound, bound); /* all alive at step 2 */
    ck_assert_int_eq(total, bound);
    for (int32_t i = 0; i < 4; i++) ck_assert_int_eq(b[i].offset % a, 0);
  }
  TnPlanBuffer b[] = {buf(10, 0, 0)};
  TnPlanOptions big = {4096, 0, 0};
  ck_assert_int_eq(plan1(b, 1, &big), 4096);
}
END_TEST

START_TEST(test_deterministic) {
  GRand *r = g_rand_new_with_seed(7);
  TnPlanBuffer a[MAX_N], b[MAX_N];
  random_buffers(r, a, MAX_N, 40, 5000);
  memcpy(b, a, sizeof a);
  int64_t ta = plan1(a, MAX_N, NULL), tb = plan1(b, MAX_N, NULL);
  ck_assert_int_eq(ta, tb);
  ck_assert(memcmp(a, b, sizeof a) == 0);
  g_rand_free(r);
}
END_TEST

/* ---- random plans ---------------------------------------------------------- */

START_TEST(test_random_against_brute_force) {
  static const int64_t aligns[] = {1, 16, 64};
  GRand *r = g_rand_new_with_seed(2024);
  for (int32_t trial = 0; trial < 300; trial++) {
    int32_t n = g_rand_int_range(r, 1, 8);
    int64_t a = aligns[trial % 3];
    TnPlanBuffer v[MAX_N];
    random_buffers(r, v, n, 8, 200);
    TnPlanOptions opt = {a, 0, trial % 2 ? -1 : 0};
    TnPlanResult res;
    int64_t got = plan(v, n, arena, 1, &opt, &res);
    int64_t best = brute_force(v, n, a);
    ck_assert_msg(got == best, "trial %d: planned %lld, optimum %lld", trial,
                  (long long)got, (long long)best);
    TnPlanOptions g = {a, -1, -1};
    ck_assert_int_le(got, plan1(v, n, &g));
  }
  g_rand_free(r);
}
END_TEST

START_TEST(test_random_valid) {
  GRand *r = g_rand_new_with_seed(99);
  for (int32_t trial = 0; trial < 300; trial++) {
    int32_t n = g_rand_int_range(r, 1, MAX_N + 1);
    TnPlanBuffer v[MAX_N];
    random_buffers(r, v, n, g_rand_int_range(r, 1, 60), 4096);
    TnPlanBuffer w[MAX_N];
    memcpy(w, v, sizeof v);
    int64_t greedy = plan1(w, n, &greedy_only);
    TnPlanOptions opt = {0, trial % 3 ? 0 : -1, trial % 2 ? 0 : 50};
    int64_t best = plan1(v, n, &opt);
    ck_assert_int_le(best, greedy);
  }
  g_rand_free(r);
}
END_TEST

/* Many buffers, up to thousands alive at once: planning must stay quick
 * (timed in the benchmarks, not here) and right. */
START_TEST(test_large) {
  enum { N = 2000 };
  GRand *r = g_rand_new_with_seed(5);
  TnPlanBuffer *v = g_new(TnPlanBuffer, N);
  random_buffers(r, v, N, 300, 1 << 16);
  TnPlanResult res;
  plan(v, N, arena, 1, NULL, &res);
  ck_assert_int_le(res.total, res.lower_bound * 2);
  g_free(v);
  g_rand_free(r);
}
END_TEST

/* So many buffers alive together that the planner stops keeping who meets
 * whom (more than 4M pairs) and scans for it instead. */
START_TEST(test_dense) {
  enum { N = 3000 };
  GRand *r = g_rand_new_with_seed(11);
  TnPlanBuffer *v = g_new(TnPlanBuffer, N), *w = g_new(TnPlanBuffer, N);
  for (int32_t i = 0; i < N; i++) {
    int32_t f = g_rand_int_range(r, 0, 8);
    v[i] = buf(g_rand_int_range(r, 1, 1000), f, f + g_rand_int_range(r, 3, 7));
  }
  memcpy(w, v, sizeof *v * N);
  TnPlanOptions few = {0, 0, 3};
  int64_t greedy = plan1(w, N, &greedy_only), best = plan1(v, N, &few);
  ck_assert_int_le(best, greedy);
  g_free(v);
  g_free(w);
  g_rand_free(r);
}
END_TEST

/* ---- pools ----------------------------------------------------------------- */

/* Largest first into the small fast pool while it fits, the rest spill. */
START_TEST(test_pool_overflow) {
  static const TnPlanPool pools[] = {{"sram", 288}, {"dram", 0}};
  TnPlanBuffer b[] = {buf(200, 0, 3), buf(100, 0, 3), buf(50, 0, 3),
                      buf(8, 4, 5)};
  TnPlanResult res;
  plan(b, 4, pools, 2, NULL, &res);
  ck_assert_int_eq(b[0].pool, 0);
  ck_assert_int_eq(b[1].pool, 1);
  ck_assert_int_eq(b[2].pool, 0);
  ck_assert_int_eq(b[3].pool, 0); /* alone at its steps */
  ck_assert_int_eq(res.size[0], 208 + 64);
  ck_assert_int_eq(res.size[1], 112);
  ck_assert_int_eq(res.total, 208 + 64 + 112);
  ck_assert_int_eq(b[3].offset, 0);
  ck_assert_int_eq(res.lower_bound, 208 + 112 + 64);
}
END_TEST

START_TEST(test_pool_masks) {
  TnPlanPool pools[TN_PLAN_MAX_POOLS];
  for (int32_t q = 0; q < TN_PLAN_MAX_POOLS; q++)
    pools[q] = (TnPlanPool){NULL, q == 0 ? 64 : 0};
  TnPlanBuffer b[] = {buf(16, 0, 1), buf(16, 0, 1), buf(64, 0, 1),
                      buf(16, 0, 1)};
  b[1].pools = 0x2;        /* only pool 1, though pool 0 has room */
  b[3].pools = 0x80000000; /* only the last pool */
  TnPlanResult res;
  plan(b, 4, pools, TN_PLAN_MAX_POOLS, NULL, &res);
  ck_assert_int_eq(b[2].pool, 0); /* largest, placed first: fills pool 0 */
  ck_assert_int_eq(b[0].pool, 1); /* the next pool */
  ck_assert_int_eq(b[1].pool, 1);
  ck_assert_int_eq(b[3].pool, 31);
  ck_assert_int_eq(res.size[0], 64);
  ck_assert_int_eq(res.size[1], 32);
  ck_assert_int_eq(res.size[2], 0);
  ck_assert_int_eq(res.size[31], 16);
}
END_TEST

START_TEST(test_pool_too_small) {
  static const TnPlanPool small[] = {{"tcm", 64}};
  TnPlanBuffer b[] = {buf(16, 0, 0), buf(100, 0, 0)};
  TnPlanResult res;
  ck_assert_int_eq(tn_memory_plan(b, 2, small, 1, NULL, &res), -1);
  TN_EXPECT_ERROR("ValueError", "tn_memory_plan", "buffer 1", "100 bytes",
                  "pool 0 'tcm'", "limit 64", "at least 112");
  /* each fits alone, not together */
  static const TnPlanPool two[] = {{"a", 64}, {"b", 80}};
  TnPlanBuffer c[] = {buf(48, 0, 1), buf(48, 1, 2), buf(48, 1, 1)};
  ck_assert_int_eq(tn_memory_plan(c, 3, two, 2, NULL, &res), -1);
  TN_EXPECT_ERROR("ValueError", "buffer 2", "48 bytes", "steps 1..1",
                  "pool 0 'a' (limit 64) would need at least 96",
                  "pool 1 'b' (limit 80) would need at least 96");
  /* the other buffers keep their inputs */
  ck_assert_int_eq(c[0].offset, -1);
}
END_TEST

/* ---- validation ------------------------------------------------------------ */

START_TEST(test_validate_catches) {
  static const TnPlanPool pools[] = {{"sram", 128}, {NULL, 0}};
  TnPlanBuffer b[] = {buf(64, 0, 2), buf(64, 2, 3), buf(32, 4, 4)};
  b[0].pool = b[1].pool = b[2].pool = 0;
  b[0].offset = 0, b[1].offset = 64, b[2].offset = 0;
  TN_OK(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16));

  b[1].offset = 32;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "tn_memory_plan_validate", "buffers 0 and 1",
                  "pool 0 'sram'", "step 2", "[0, 64)", "[32, 96)");
  b[1].pool = 1; /* apart in another pool: fine */
  TN_OK(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16));
  b[1].pool = 0, b[1].offset = 64;

  b[2].offset = 8;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[2].offset 8", "alignment 16");
  TN_OK(tn_memory_plan_validate(b, 3, pools, 2, NULL, 8));
  b[2].offset = 0;

  b[2].pools = 0x2;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[2] is in pool 0", "mask 0x2");
  b[2].pools = 0;

  b[2].offset = 112;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[2] ends at byte 144", "limit 128",
                  "pool 0 'sram'");
  b[2].offset = 0;

  int64_t sizes[2] = {64, 0};
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, sizes, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[1] ends at byte 128", "size 64",
                  "sizes[0]");

  b[0].pool = 2;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[0].pool is 2", "2 pools");
  b[0].pool = 0;

  b[0].offset = INT64_MAX - 15;
  ck_assert_int_eq(tn_memory_plan_validate(b, 3, pools, 2, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[0]", "past INT64_MAX");
}
END_TEST

/* ---- bad arguments --------------------------------------------------------- */

static void expect_bad(TnPlanBuffer *b, int32_t n, const TnPlanPool *pools,
                       int32_t npools, const TnPlanOptions *opt,
                       const char *what, const char *what2) {
  TnPlanResult res;
  ck_assert_int_eq(tn_memory_plan(b, n, pools, npools, opt, &res), -1);
  TN_EXPECT_ERROR("ValueError", "tn_memory_plan", what, what2);
}

START_TEST(test_bad_arguments) {
  TnPlanBuffer b[] = {buf(16, 0, 1), buf(16, 1, 2)};
  TnPlanResult res;
  expect_bad(b, -1, arena, 1, NULL, "n is -1", ">= 0");
  expect_bad(b, 2, arena, 0, NULL, "npools is 0", "1..32");
  expect_bad(b, 2, arena, 33, NULL, "npools is 33", "1..32");
  expect_bad(NULL, 2, arena, 1, NULL, "bufs is NULL", "n is 2");
  expect_bad(b, 2, NULL, 1, NULL, "pools is NULL", "pools");
  ck_assert_int_eq(tn_memory_plan(b, 2, arena, 1, NULL, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "res is NULL");

  static const TnPlanPool negative[] = {{"x", -5}};
  expect_bad(b, 2, negative, 1, NULL, "pools[0].limit is -5", ">= 0");

  TnPlanOptions opt = {24, 0, 0};
  expect_bad(b, 2, arena, 1, &opt, "opt->alignment is 24", "power of two");
  opt.alignment = -16;
  expect_bad(b, 2, arena, 1, &opt, "opt->alignment is -16", "power of two");
  opt = (TnPlanOptions){0, -2, 0};
  expect_bad(b, 2, arena, 1, &opt, "opt->exact_max is -2", ">= -1");
  opt = (TnPlanOptions){0, 0, -3};
  expect_bad(b, 2, arena, 1, &opt, "opt->search_iters is -3", ">= -1");

  b[1].size = -1;
  expect_bad(b, 2, arena, 1, NULL, "bufs[1].size is -1", ">= 0");
  b[1].size = 16, b[1].first = -1;
  expect_bad(b, 2, arena, 1, NULL, "bufs[1].first is -1", ">= 0");
  b[1].first = 3;
  expect_bad(b, 2, arena, 1, NULL, "bufs[1]", "first 3 > last 2");
  b[1].first = 1, b[1].pools = 0x4;
  expect_bad(b, 2, arena, 1, NULL, "bufs[1].pools is 0x4", "none of the 1");
  b[1].pools = 0;

  /* sizes whose sum, or whose rounding, overflows */
  b[0].size = INT64_MAX;
  expect_bad(b, 2, arena, 1, NULL, "bufs[0].size", "overflows");
  b[0].size = INT64_MAX / 2, b[1].size = INT64_MAX / 2 + 10;
  expect_bad(b, 2, arena, 1, NULL, "bufs[1].size", "overflows");

  /* the validator checks the same */
  b[0].size = 16, b[1].size = 16;
  ck_assert_int_eq(tn_memory_plan_validate(b, -1, arena, 1, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "tn_memory_plan_validate", "n is -1");
  ck_assert_int_eq(tn_memory_plan_validate(b, 2, arena, 1, NULL, 12), -1);
  TN_EXPECT_ERROR("ValueError", "alignment is 12", "power of two");
  ck_assert_int_eq(tn_memory_plan_validate(NULL, 2, arena, 1, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs is NULL");
  ck_assert_int_eq(tn_memory_plan_validate(b, 2, arena, 40, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "npools is 40");
  b[0].first = 5;
  ck_assert_int_eq(tn_memory_plan_validate(b, 2, arena, 1, NULL, 16), -1);
  TN_EXPECT_ERROR("ValueError", "bufs[0]", "first 5 > last 1");
  (void)res;
}
END_TEST

static Suite *memory_plan_suite(void) {
  Suite *s = suite_create("memory_plan");
  TCase *tc = tn_test_case(s, "small");
  tcase_add_test(tc, test_empty);
  tcase_add_test(tc, test_one_buffer);
  tcase_add_test(tc, test_chain);
  tcase_add_test(tc, test_zero_size);
  tcase_add_test(tc, test_exact_beats_greedy);
  tcase_add_test(tc, test_alignment);
  tcase_add_test(tc, test_deterministic);
  tc = tn_test_case(s, "random");
  tcase_add_test(tc, test_random_against_brute_force);
  tcase_add_test(tc, test_random_valid);
  tcase_add_test(tc, test_large);
  tcase_add_test(tc, test_dense);
  tc = tn_test_case(s, "pools");
  tcase_add_test(tc, test_pool_overflow);
  tcase_add_test(tc, test_pool_masks);
  tcase_add_test(tc, test_pool_too_small);
  tc = tn_test_case(s, "errors");
  tcase_add_test(tc, test_validate_catches);
  tcase_add_test(tc, test_bad_arguments);
  return s;
}

TN_TEST_MAIN(memory_plan_suite)
