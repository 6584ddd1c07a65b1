/* test_array.c: tn.Array (copy-on-write) and tn.List (mutable). */
#include "tn_test.h"

static int64_t int_at(const TnObject *seq, int64_t i) {
  const TnAny *a = tn_array_at(seq, i);
  ck_assert_msg(a != NULL, "item %lld: %s", (long long)i, tn_test_raised_text());
  int64_t v;
  TN_OK(tn_any_as_int(a, &v));
  return v;
}

static TnObject *range_array(int64_t n) {
  TnAny items[64];
  ck_assert_int_le(n, 64);
  for (int64_t i = 0; i < n; i++) items[i] = tn_any_int(i);
  return TN_NONNULL(tn_array_new(items, n));
}

START_TEST(test_new_and_read) {
  TnObject *a = range_array(5);
  ck_assert_int_eq(a->type_index, TN_TYPE_ARRAY);
  ck_assert_int_eq(tn_array_size(a), 5);
  ck_assert_int_eq(int_at(a, 0), 0);
  ck_assert_int_eq(int_at(a, 4), 4);
  ck_assert_int_eq(int_at(a, -1), 4);
  ck_assert_int_eq(int_at(a, -5), 0);
  TnAny v;
  TN_OK(tn_array_get(a, 2, &v));
  ck_assert_int_eq(v.v_int64, 2);
  tn_object_release(a);
  TnObject *empty = TN_NONNULL(tn_array_new(NULL, 0));
  ck_assert_int_eq(tn_array_size(empty), 0);
  tn_object_release(empty);
}
END_TEST

START_TEST(test_items_are_owned) {
  char buf[64] = "a long string that must be copied in";
  TnObject *obj = TN_NONNULL(tn_string_from_cstr("object item"));
  TnAny items[] = {tn_any_cstr(buf), tn_any_obj(obj), tn_any_cstr("tiny")};
  TnObject *a = TN_NONNULL(tn_array_new(items, 3));
  ck_assert_uint_eq(tn_object_strong_count(obj), 2);
  buf[0] = 'X'; /* the array must not see this */
  const char *s;
  TN_OK(tn_any_as_str(tn_array_at(a, 0), &s, NULL));
  ck_assert_str_eq(s, "a long string that must be copied in");
  ck_assert_int_eq(tn_array_at(a, 0)->type_index, TN_TYPE_STRING);
  ck_assert_int_eq(tn_array_at(a, 2)->type_index, TN_TYPE_SMALL_STR);
  tn_object_release(a);
  ck_assert_uint_eq(tn_object_strong_count(obj), 1);
  tn_object_release(obj);
}
END_TEST

START_TEST(test_index_errors) {
  TnObject *a = range_array(3);
  ck_assert_ptr_null(tn_array_at(a, 3));
  TN_EXPECT_ERROR("IndexError", "tn_array_at", "index 3", "tn.Array",
                  "size 3");
  ck_assert_ptr_null(tn_array_at(a, -4));
  TN_EXPECT_ERROR("IndexError", "index -4");
  TnAny v = tn_any_int(9);
  ck_assert_int_eq(tn_array_set(&a, 7, &v), -1);
  TN_EXPECT_ERROR("IndexError", "tn_array_set", "index 7");
  ck_assert_int_eq(int_at(a, 2), 2); /* unchanged */
  ck_assert_int_eq(tn_array_get(a, 10, &v), -1);
  TN_EXPECT_ERROR("IndexError", "tn_array_get");
  tn_object_release(a);
}
END_TEST

START_TEST(test_copy_on_write_unique_in_place) {
  TnObject *a = range_array(2);
  TnObject *orig = a;
  TnAny v = tn_any_int(100);
  for (int i = 0; i < 100; i++) TN_OK(tn_array_push(&a, &v));
  ck_assert_ptr_eq(a, orig); /* sole owner: changed in place */
  ck_assert_int_eq(tn_array_size(a), 102);
  TN_OK(tn_array_set(&a, 0, &v));
  ck_assert_ptr_eq(a, orig);
  TnAny out;
  TN_OK(tn_array_pop(&a, &out));
  ck_assert_int_eq(out.v_int64, 100);
  ck_assert_int_eq(tn_array_size(a), 101);
  tn_object_release(a);
}
END_TEST

START_TEST(test_copy_on_write_shared_copies) {
  TnObject *a = range_array(3);
  TnObject *b = a;
  tn_object_retain(b); /* b shares a */
  TnAny v = tn_any_int(42);
  TN_OK(tn_array_push(&a, &v));
  ck_assert_ptr_ne(a, b); /* a now has its own copy */
  ck_assert_int_eq(tn_array_size(a), 4);
  ck_assert_int_eq(tn_array_size(b), 3); /* b is unchanged */
  ck_assert_uint_eq(tn_object_strong_count(b), 1);
  TnObject *c = b;
  tn_object_retain(c);
  TN_OK(tn_array_set(&c, 1, &v));
  ck_assert_int_eq(int_at(c, 1), 42);
  ck_assert_int_eq(int_at(b, 1), 1);
  tn_object_release(a);
  tn_object_release(b);
  tn_object_release(c);
}
END_TEST

START_TEST(test_copy_on_write_weak_ref_blocks_in_place) {
  TnObject *a = range_array(3);
  TnObject *orig = a;
  tn_object_weak_retain(orig);
  TnAny v = tn_any_int(7);
  TN_OK(tn_array_push(&a, &v));
  ck_assert_ptr_ne(a, orig); /* a weak holder must not see the change */
  /* The old array died with its last strong reference; the weak ref
   * cannot revive it. */
  ck_assert_ptr_null(tn_object_weak_upgrade(orig));
  tn_object_weak_release(orig);
  tn_object_release(a);
}
END_TEST

START_TEST(test_pop_empty_and_type_errors) {
  TnObject *a = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *orig = a;
  ck_assert_int_eq(tn_array_pop(&a, NULL), -1);
  TN_EXPECT_ERROR("IndexError", "tn_array_pop", "empty");
  ck_assert_ptr_eq(a, orig);
  TnObject *l = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny v = tn_any_int(1);
  ck_assert_int_eq(tn_array_push(&l, &v), -1); /* a List is not an Array */
  TN_EXPECT_ERROR("TypeError", "tn_array_push", "expected tn.Array",
                  "got tn.List");
  ck_assert_int_eq(tn_list_append(a, &v), -1);
  TN_EXPECT_ERROR("TypeError", "tn_list_append", "expected tn.List",
                  "got tn.Array");
  ck_assert_int_eq(tn_array_push(NULL, &v), -1);
  TN_EXPECT_ERROR("ValueError", "'arr' is NULL");
  TnObject *nul = NULL;
  ck_assert_int_eq(tn_array_push(&nul, &v), -1);
  TN_EXPECT_ERROR("ValueError", "'*arr' is NULL");
  ck_assert_int_eq(tn_array_push(&a, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'item' is NULL");
  ck_assert_int_eq(tn_array_size(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_array_size");
  TnObject *s = TN_NONNULL(tn_string_from_cstr("s"));
  ck_assert_int_eq(tn_array_size(s), -1);
  TN_EXPECT_ERROR("TypeError", "tn.Array or tn.List", "tn.String");
  ck_assert_ptr_null(tn_array_new(NULL, 3));
  TN_EXPECT_ERROR("ValueError", "tn_array_new", "'items'");
  ck_assert_ptr_null(tn_array_new(NULL, -1));
  TN_EXPECT_ERROR("ValueError", "negative");
  /* A failed conversion while building leaks nothing. */
  TnAny bad[] = {tn_any_cstr("a string long enough to be an object"),
                 {TN_TYPE_DLTENSOR_PTR, 0, {0}}};
  ck_assert_ptr_null(tn_array_new(bad, 2));
  TN_EXPECT_ERROR("TypeError", "DLTensor*");
  tn_object_release(s);
  tn_object_release(a);
  tn_object_release(l);
}
END_TEST

START_TEST(test_list_mutation) {
  TnObject *l = TN_NONNULL(tn_list_new(NULL, 0));
  for (int i = 0; i < 1000; i++) {
    TnAny v = tn_any_int(i);
    TN_OK(tn_list_append(l, &v));
  }
  ck_assert_int_eq(tn_array_size(l), 1000);
  ck_assert_int_eq(int_at(l, 999), 999);
  TnAny v = tn_any_int(-1);
  TN_OK(tn_list_insert(l, 0, &v));
  TN_OK(tn_list_insert(l, 1001, &v)); /* at the end */
  TN_OK(tn_list_insert(l, -1, &v));   /* before the last */
  ck_assert_int_eq(tn_array_size(l), 1003);
  ck_assert_int_eq(int_at(l, 0), -1);
  ck_assert_int_eq(int_at(l, 1), 0);
  ck_assert_int_eq(int_at(l, -1), -1);
  ck_assert_int_eq(int_at(l, -2), -1);
  ck_assert_int_eq(int_at(l, -3), 999);
  TnAny out;
  TN_OK(tn_list_pop(l, 0, &out));
  ck_assert_int_eq(out.v_int64, -1);
  TN_OK(tn_list_pop(l, -1, NULL));
  TnAny w = tn_any_int(5);
  TN_OK(tn_list_set(l, 3, &w));
  ck_assert_int_eq(int_at(l, 3), 5);
  ck_assert_int_eq(tn_list_insert(l, 5000, &v), -1);
  TN_EXPECT_ERROR("IndexError", "tn_list_insert", "5000");
  ck_assert_int_eq(tn_list_set(l, 5000, &v), -1);
  TN_EXPECT_ERROR("IndexError", "tn_list_set");
  ck_assert_int_eq(tn_array_size(l), 1001); /* unchanged by failures */
  TN_OK(tn_list_reserve(l, 5000));
  ck_assert_int_eq(tn_list_reserve(l, -1), -1);
  TN_EXPECT_ERROR("ValueError", "tn_list_reserve", "negative");
  TN_OK(tn_list_clear(l));
  ck_assert_int_eq(tn_array_size(l), 0);
  ck_assert_int_eq(tn_list_pop(l, 0, NULL), -1);
  TN_EXPECT_ERROR("IndexError", "tn_list_pop", "empty");
  tn_object_release(l);
}
END_TEST

START_TEST(test_list_holds_objects) {
  TnObject *l = TN_NONNULL(tn_list_new(NULL, 0));
  for (int i = 0; i < 50; i++) {
    TnObject *inner = TN_NONNULL(tn_list_new(NULL, 0));
    TnAny v = tn_any_obj(inner);
    TN_OK(tn_list_append(l, &v));
    tn_object_release(inner); /* the list owns it now */
  }
  /* A list may hold itself; clearing breaks the cycle. */
  TnAny self = tn_any_obj(l);
  TN_OK(tn_list_append(l, &self));
  TN_OK(tn_list_clear(l));
  tn_object_release(l);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("array");
  TCase *tc = tn_test_case(s, "array");
  tcase_add_test(tc, test_new_and_read);
  tcase_add_test(tc, test_items_are_owned);
  tcase_add_test(tc, test_index_errors);
  tcase_add_test(tc, test_copy_on_write_unique_in_place);
  tcase_add_test(tc, test_copy_on_write_shared_copies);
  tcase_add_test(tc, test_copy_on_write_weak_ref_blocks_in_place);
  tcase_add_test(tc, test_pop_empty_and_type_errors);
  tc = tn_test_case(s, "list");
  tcase_add_test(tc, test_list_mutation);
  tcase_add_test(tc, test_list_holds_objects);
  return s;
}

TN_TEST_MAIN(make_suite)
