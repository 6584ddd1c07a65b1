/*
 * test_crt.c: the freestanding runtime's status table, as the host library
 * links it. (That the crt stays freestanding is tests/crt_freestanding.sh.)
 */
#include "tn_test.h"

#include <tvmnode/crt/status.h>

START_TEST(test_crt_status_names) {
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_OK), "OK");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_INVALID_ARGUMENT),
                   "INVALID_ARGUMENT");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_OVERFLOW), "OVERFLOW");
  ck_assert_str_eq(tn_crt_status_doc(TN_CRT_OK), "success");
  /* Every code of the table has its own name and a description. */
  const int32_t codes[] = {
#define CODE_(name, code, doc) code,
      TN_CRT_STATUS_MAP(CODE_)
#undef CODE_
  };
  size_t n = sizeof codes / sizeof codes[0];
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_ne(tn_crt_status_name(codes[i]), "UNKNOWN");
    ck_assert_str_ne(tn_crt_status_doc(codes[i]), "unknown status");
    for (size_t j = 0; j < i; j++) {
      ck_assert_int_ne(codes[i], codes[j]);
      ck_assert_str_ne(tn_crt_status_name(codes[i]),
                       tn_crt_status_name(codes[j]));
    }
  }
}
END_TEST

START_TEST(test_crt_status_unknown) {
  ck_assert_str_eq(tn_crt_status_name(-1), "UNKNOWN");
  ck_assert_str_eq(tn_crt_status_name(INT32_MAX), "UNKNOWN");
  ck_assert_str_eq(tn_crt_status_doc(1000), "unknown status");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("crt");
  TCase *tc = tn_test_case(s, "status");
  tcase_add_test(tc, test_crt_status_names);
  tcase_add_test(tc, test_crt_status_unknown);
  return s;
}

TN_TEST_MAIN(make_suite)
