/* test_shape.c: tn.Shape. */
#include "tn_test.h"

START_TEST(test_shape_basics) {
  int64_t dims[] = {1, 3, 224, 224};
  TnObject *s = TN_NONNULL(tn_shape_new(dims, 4));
  TnShapeObj *so = (TnShapeObj *)s;
  ck_assert_int_eq(so->ndim, 4);
  ck_assert_int_eq(so->data[2], 224);
  ck_assert_ptr_ne(so->data, dims); /* copied */
  ck_assert_int_eq(tn_shape_numel(s), 3 * 224 * 224);
  tn_object_release(s);
  TnObject *scalar = TN_NONNULL(tn_shape_new(NULL, 0));
  ck_assert_int_eq(tn_shape_numel(scalar), 1);
  tn_object_release(scalar);
  int64_t zero[] = {4, 0, 5};
  TnObject *z = TN_NONNULL(tn_shape_new(zero, 3));
  ck_assert_int_eq(tn_shape_numel(z), 0);
  tn_object_release(z);
}
END_TEST

START_TEST(test_shape_bad_input) {
  int64_t neg[] = {2, -1};
  ck_assert_ptr_null(tn_shape_new(neg, 2));
  TN_EXPECT_ERROR("ValueError", "tn_shape_new", "dimension 1", "-1");
  ck_assert_ptr_null(tn_shape_new(NULL, 2));
  TN_EXPECT_ERROR("ValueError", "'dims' is NULL");
  ck_assert_ptr_null(tn_shape_new(neg, -1));
  TN_EXPECT_ERROR("ValueError", "ndim -1");
  int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
  TnObject *h = TN_NONNULL(tn_shape_new(huge, 2));
  ck_assert_int_eq(tn_shape_numel(h), -1);
  TN_EXPECT_ERROR("OverflowError", "tn_shape_numel");
  tn_object_release(h);
  ck_assert_int_eq(tn_shape_numel(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_shape_numel");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("shape");
  TCase *tc = tn_test_case(s, "shape");
  tcase_add_test(tc, test_shape_basics);
  tcase_add_test(tc, test_shape_bad_input);
  return s;
}

TN_TEST_MAIN(make_suite)
