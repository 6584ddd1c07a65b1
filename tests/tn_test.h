/*
 * tn_test.h: what every Check suite shares.
 *
 * The fixture records the live-object count before each test and asserts at
 * teardown that it came back, after clearing the raised slot (a raised error
 * is itself a live object). Error assertions take the raised error, check its
 * kind and that its message names what it should, and release it.
 */
#ifndef TVMNODE_TESTS_TN_TEST_H_
#define TVMNODE_TESTS_TN_TEST_H_

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

static int64_t tn_test_baseline;

static inline void tn_test_setup(void) {
  tn_error_set_raised(NULL);
  tn_test_baseline = tn_object_live_count();
}

static inline void tn_test_teardown(void) {
  tn_error_set_raised(NULL);
  int64_t now = tn_object_live_count();
  ck_assert_msg(now == tn_test_baseline,
                "objects left alive: %lld at start, %lld at end",
                (long long)tn_test_baseline, (long long)now);
}

/* Print the raised error (if any) to make a failed assertion readable. */
static inline const char *tn_test_raised_text(void) {
  static char buf[1024];
  TnObject *e = tn_error_peek_raised();
  snprintf(buf, sizeof buf, "%s: %s", e ? tn_error_kind(e) : "(none)",
           e ? tn_error_message(e) : "(no error raised)");
  return buf;
}

/* Assert a status call succeeded. */
#define TN_OK(expr)                                                        \
  do {                                                                     \
    int tn_ok_rc_ = (expr);                                                \
    ck_assert_msg(tn_ok_rc_ == 0, "%s failed: %s", #expr,                  \
                  tn_test_raised_text());                                  \
  } while (0)

/* Assert a pointer-returning call succeeded. */
#define TN_NONNULL(expr)                                                   \
  ({                                                                       \
    __typeof__(expr) tn_nn_v_ = (expr);                                    \
    ck_assert_msg(tn_nn_v_ != NULL, "%s returned NULL: %s", #expr,         \
                  tn_test_raised_text());                                  \
    tn_nn_v_;                                                              \
  })

/* Assert that an error of `kind` is raised and that its message contains
 * each of the NULL-terminated substrings; clears it. */
static inline void tn_test_expect_error_(const char *file, int line,
                                         const char *kind, ...) {
  TnObject *e = tn_error_take_raised();
  ck_assert_msg(e != NULL, "%s:%d: expected a %s, but nothing was raised",
                file, line, kind);
  ck_assert_msg(strcmp(tn_error_kind(e), kind) == 0,
                "%s:%d: expected a %s, got %s: %s", file, line, kind,
                tn_error_kind(e), tn_error_message(e));
  va_list ap;
  va_start(ap, kind);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *)) {
    ck_assert_msg(strstr(tn_error_message(e), s) != NULL,
                  "%s:%d: message \"%s\" does not mention \"%s\"", file, line,
                  tn_error_message(e), s);
  }
  va_end(ap);
  tn_object_release(e);
}
#define TN_EXPECT_ERROR(kind, ...) \
  tn_test_expect_error_(__FILE__, __LINE__, kind, __VA_ARGS__, NULL)

/* A suite with one test case per group, each with the live-count fixture. */
static inline TCase *tn_test_case(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, tn_test_setup, tn_test_teardown);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return tc;
}

#define TN_TEST_MAIN(make_suite)                                  \
  int main(void) {                                                \
    SRunner *sr = srunner_create(make_suite());                   \
    srunner_run_all(sr, CK_NORMAL);                               \
    int failed = srunner_ntests_failed(sr);                       \
    srunner_free(sr);                                             \
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;             \
  }

#endif /* TVMNODE_TESTS_TN_TEST_H_ */
