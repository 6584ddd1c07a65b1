/* test_string.c: tn.String and tn.Bytes. */
#include "tn_test.h"

/* The hash of a known string, asserting the call succeeds. */
static uint64_t string_hash(TnObject *str) {
  uint64_t h = 0;
  TN_OK(tn_string_hash(str, &h));
  return h;
}

START_TEST(test_new_and_layout) {
  TnObject *s = TN_NONNULL(tn_string_new("ab\0cd", 5));
  TnStringObj *so = (TnStringObj *)s;
  ck_assert_int_eq(s->type_index, TN_TYPE_STRING);
  ck_assert_int_eq(so->size, 5);
  ck_assert_int_eq(memcmp(so->data, "ab\0cd", 5), 0);
  ck_assert_int_eq(so->data[5], '\0'); /* always NUL-terminated */
  ck_assert_uint_eq(so->hash, 0);      /* not computed yet */
  uint64_t h = string_hash(s);
  ck_assert_uint_ne(h, 0);
  ck_assert_uint_eq(so->hash, h); /* cached */
  ck_assert_uint_eq(string_hash(s), h);
  tn_object_release(s);

  TnObject *e = TN_NONNULL(tn_string_new(NULL, 0));
  ck_assert_int_eq(((TnStringObj *)e)->size, 0);
  ck_assert_str_eq(((TnStringObj *)e)->data, "");
  tn_object_release(e);
}
END_TEST

START_TEST(test_hash_matches_other_forms) {
  const char *text = "the hash of a string does not depend on its form";
  TnObject *s = TN_NONNULL(tn_string_from_cstr(text));
  TnAny raw = tn_any_cstr(text);
  ck_assert_uint_eq(string_hash(s), tn_any_hash(&raw));
  TnObject *t = TN_NONNULL(tn_string_from_cstr("the hash of a string does not depend on its forM"));
  ck_assert_uint_ne(string_hash(s), string_hash(t));
  tn_object_release(s);
  tn_object_release(t);
}
END_TEST

START_TEST(test_bytes) {
  TnObject *b = TN_NONNULL(tn_bytes_new("\xff\x00\x01", 3));
  ck_assert_int_eq(b->type_index, TN_TYPE_BYTES);
  ck_assert_int_eq(((TnStringObj *)b)->size, 3);
  ck_assert_uint_ne(string_hash(b), 0);
  tn_object_release(b);
}
END_TEST

START_TEST(test_bad_input) {
  ck_assert_ptr_null(tn_string_new(NULL, 3));
  TN_EXPECT_ERROR("ValueError", "tn_string_new", "'data' is NULL");
  ck_assert_ptr_null(tn_string_from_cstr(NULL));
  TN_EXPECT_ERROR("ValueError", "tn_string_from_cstr");
  ck_assert_ptr_null(tn_bytes_new(NULL, 1));
  TN_EXPECT_ERROR("ValueError", "tn_bytes_new");
  TnObject *a = TN_NONNULL(tn_array_new(NULL, 0));
  uint64_t h = 5;
  ck_assert_int_eq(tn_string_hash(a, &h), -1);
  ck_assert_uint_eq(h, 5); /* untouched on error */
  TN_EXPECT_ERROR("TypeError", "tn_string_hash", "tn.String or tn.Bytes",
                  "tn.Array");
  ck_assert_int_eq(tn_string_hash(NULL, &h), -1);
  TN_EXPECT_ERROR("ValueError", "tn_string_hash");
  tn_object_release(a);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("string");
  TCase *tc = tn_test_case(s, "string");
  tcase_add_test(tc, test_new_and_layout);
  tcase_add_test(tc, test_hash_matches_other_forms);
  tcase_add_test(tc, test_bytes);
  tcase_add_test(tc, test_bad_input);
  return s;
}

TN_TEST_MAIN(make_suite)
