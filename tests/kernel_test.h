/*
 * kernel_test.h: what the crt kernel suites share. They link the crt alone
 * (no libtvmnode: kernels create no objects, so there is nothing to leak
 * but memory, which ASan and valgrind watch), draw their cases from a
 * seeded generator so a failure names a case that can be replayed, and
 * compare against references written in the test files as plain loops.
 */
#ifndef TVMNODE_TESTS_KERNEL_TEST_H_
#define TVMNODE_TESTS_KERNEL_TEST_H_

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include <tvmnode/crt/kernels.h>

/* xorshift64*: fixed sequences from a seed, the same on every machine. */
typedef struct {
  uint64_t s;
} KtRng;

static inline KtRng kt_rng(uint64_t seed) {
  KtRng r = {seed * UINT64_C(0x9E3779B97F4A7C15) + 1};
  return r;
}
static inline uint64_t kt_next(KtRng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * UINT64_C(2685821657736338717);
}
/* Uniform in [lo, hi] (inclusive). */
static inline int32_t kt_int(KtRng *r, int32_t lo, int32_t hi) {
  return lo + (int32_t)(kt_next(r) % (uint64_t)((int64_t)hi - lo + 1));
}
/* Uniform in [lo, hi). */
static inline float kt_float(KtRng *r, float lo, float hi) {
  return lo + (hi - lo) * (float)((kt_next(r) >> 40) * (1.0 / 16777216.0));
}

#define KT_CHECK_OK(expr)                                                   \
  do {                                                                      \
    TnCrtStatus kt_st_ = (expr);                                            \
    ck_assert_msg(kt_st_ == TN_CRT_OK, "%s returned %s", #expr,             \
                  tn_crt_status_name(kt_st_));                              \
  } while (0)

/* Per-element checks must not go through ck_assert, which records a mark
 * point on every call; this fails only when the condition does. */
#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)
/* `expr` returns status `st`. */
#define EXPECT_ST(expr, st)                                                \
  do {                                                                     \
    TnCrtStatus st_ = (expr);                                              \
    ck_assert_msg(st_ == (st), "%s returned %s, expected %s", #expr,       \
                  tn_crt_status_name(st_), tn_crt_status_name(st));        \
  } while (0)

/* Zeroed memory for a test buffer (never NULL, even for 0 bytes). */
static inline void *xalloc(size_t n) {
  void *p = calloc(n ? n : 1, 1);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* main() for a suite built by `make_suite`. */
#define KT_MAIN(make_suite)                                                 \
  int main(void) {                                                          \
    SRunner *sr = srunner_create(make_suite());                             \
    srunner_run_all(sr, CK_NORMAL);                                         \
    int failed = srunner_ntests_failed(sr);                                 \
    srunner_free(sr);                                                       \
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                       \
  }

#endif /* TVMNODE_TESTS_KERNEL_TEST_H_ */
