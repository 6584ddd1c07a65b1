/* test_any.c: TnAny layout, ownership, checked casts, key equality. */
#include <math.h>

#include "tn_test.h"

START_TEST(test_layout_and_constructors) {
  TnAny a = tn_any_int(-7);
  ck_assert_int_eq(a.type_index, TN_TYPE_INT);
  ck_assert_int_eq(a.v_int64, -7);
  ck_assert_uint_eq(a.small_len, 0);
  TnAny b = tn_any_bool(5);
  ck_assert_int_eq(b.v_int64, 1);
  /* Unused bytes are zero: two equal dtypes are bytewise equal. */
  DLDataType f32 = {kDLFloat, 32, 1};
  TnAny d1 = tn_any_dtype(f32), d2 = tn_any_dtype(f32);
  ck_assert_int_eq(memcmp(&d1, &d2, sizeof(TnAny)), 0);
  ck_assert_int_eq(tn_any_ptr(NULL).type_index, TN_TYPE_NONE);
  ck_assert_int_eq(tn_any_cstr(NULL).type_index, TN_TYPE_NONE);
  ck_assert_int_eq(tn_any_obj(NULL).type_index, TN_TYPE_NONE);
  ck_assert_str_eq(tn_any_type_key(&a), "int");
  TnAny f = tn_any_float(1.5);
  ck_assert_str_eq(tn_any_type_key(&f), "float");
  TnAny n = tn_any_none();
  ck_assert_str_eq(tn_any_type_key(&n), "None");
  ck_assert_str_eq(tn_any_type_key(NULL), "NULL");
}
END_TEST

START_TEST(test_checked_casts) {
  int64_t i;
  double d;
  int b;
  void *p;
  TnAny vi = tn_any_int(3), vb = tn_any_bool(1), vf = tn_any_float(2.5);
  TN_OK(tn_any_as_int(&vi, &i));
  ck_assert_int_eq(i, 3);
  TN_OK(tn_any_as_int(&vb, &i)); /* bool -> int */
  ck_assert_int_eq(i, 1);
  TN_OK(tn_any_as_float(&vi, &d)); /* int -> float */
  ck_assert(d == 3.0);
  TN_OK(tn_any_as_bool(&vi, &b));
  ck_assert_int_eq(b, 1);
  TnAny none = tn_any_none();
  TN_OK(tn_any_as_ptr(&none, &p));
  ck_assert_ptr_null(p);

  ck_assert_int_eq(tn_any_as_int(&vf, &i), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_int", "expected int", "got float");
  TnAny s = tn_any_cstr("hello");
  ck_assert_int_eq(tn_any_as_float(&s, &d), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_float", "got const char*");
  ck_assert_int_eq(tn_any_as_bool(&vf, &b), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_bool");
  ck_assert_int_eq(tn_any_as_ptr(&vi, &p), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_ptr", "void*");
  DLDevice dev;
  ck_assert_int_eq(tn_any_as_device(&vi, &dev), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_device", "Device");
  ck_assert_int_eq(tn_any_as_int(NULL, &i), -1);
  TN_EXPECT_ERROR("ValueError", "tn_any_as_int", "'a' is NULL");
  ck_assert_int_eq(tn_any_as_int(&vi, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'out' is NULL");
}
END_TEST

START_TEST(test_dtype_cast_from_string) {
  DLDataType t;
  TnAny s = tn_any_cstr("int8x4");
  TN_OK(tn_any_as_dtype(&s, &t));
  ck_assert_uint_eq(t.code, kDLInt);
  ck_assert_uint_eq(t.bits, 8);
  ck_assert_uint_eq(t.lanes, 4);
  TnAny bad = tn_any_cstr("notatype");
  ck_assert_int_eq(tn_any_as_dtype(&bad, &t), -1);
  TnObject *e = tn_error_take_raised();
  ck_assert_str_eq(tn_error_kind(e), "TypeError");
  ck_assert_ptr_nonnull(strstr(tn_error_message(e), "'notatype'"));
  ck_assert_ptr_nonnull(tn_error_cause(e)); /* the parser's ValueError */
  ck_assert_str_eq(tn_error_kind(tn_error_cause(e)), "ValueError");
  tn_object_release(e);
}
END_TEST

START_TEST(test_strings_in_three_forms) {
  const char *data;
  size_t n;
  TnAny raw = tn_any_cstr("abc");
  TN_OK(tn_any_as_str(&raw, &data, &n));
  ck_assert_uint_eq(n, 3);

  TnAny small;
  TN_OK(tn_any_to_owned(&small, &raw));
  ck_assert_int_eq(small.type_index, TN_TYPE_SMALL_STR);
  ck_assert_uint_eq(small.small_len, 3);
  TN_OK(tn_any_as_str(&small, &data, &n));
  ck_assert_str_eq(data, "abc");

  int64_t before = tn_object_live_count();
  TnAny longraw = tn_any_cstr("a string longer than seven bytes"), owned;
  TN_OK(tn_any_to_owned(&owned, &longraw));
  ck_assert_int_eq(owned.type_index, TN_TYPE_STRING);
  ck_assert_int_eq(tn_object_live_count(), before + 1);
  TN_OK(tn_any_as_str(&owned, &data, &n));
  ck_assert_str_eq(data, "a string longer than seven bytes");
  ck_assert_ptr_ne(data, longraw.v_c_str); /* copied */
  tn_any_clear(&owned);
  ck_assert_int_eq(owned.type_index, TN_TYPE_NONE);
  ck_assert_int_eq(tn_object_live_count(), before);

  /* Exactly seven bytes still fits inline; eight does not. */
  TnAny seven = tn_any_cstr("1234567"), eight = tn_any_cstr("12345678"), o;
  TN_OK(tn_any_to_owned(&o, &seven));
  ck_assert_int_eq(o.type_index, TN_TYPE_SMALL_STR);
  TN_OK(tn_any_to_owned(&o, &eight));
  ck_assert_int_eq(o.type_index, TN_TYPE_STRING);
  tn_any_clear(&o);

  TnByteArray ba = {"\0\1\2", 3};
  TnAny rb = {TN_TYPE_RAW_BYTES, 0, {0}};
  rb.v_bytes_ptr = &ba;
  TN_OK(tn_any_to_owned(&o, &rb));
  ck_assert_int_eq(o.type_index, TN_TYPE_SMALL_BYTES);
  TN_OK(tn_any_as_bytes(&o, &data, &n));
  ck_assert_uint_eq(n, 3);
  ck_assert_int_eq(memcmp(data, "\0\1\2", 3), 0);
  ck_assert_int_eq(tn_any_as_str(&o, &data, &n), -1); /* bytes are not str */
  TN_EXPECT_ERROR("TypeError", "tn_any_as_str", "tn.SmallBytes");
  TnAny i = tn_any_int(1);
  ck_assert_int_eq(tn_any_as_bytes(&i, &data, &n), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_bytes", "got int");
}
END_TEST

START_TEST(test_objects_copy_clear) {
  TnObject *s = TN_NONNULL(tn_string_from_cstr("shared"));
  TnAny a = tn_any_obj(s), b;
  ck_assert_int_eq(a.type_index, TN_TYPE_STRING);
  tn_any_copy(&b, &a);
  ck_assert_uint_eq(tn_object_strong_count(s), 2);
  tn_any_clear(&b);
  ck_assert_uint_eq(tn_object_strong_count(s), 1);
  TnObject *out;
  TN_OK(tn_any_as_object(&a, TN_TYPE_STRING, &out));
  ck_assert_ptr_eq(out, s);
  TN_OK(tn_any_as_object(&a, TN_TYPE_OBJECT, &out));
  ck_assert_int_eq(tn_any_as_object(&a, TN_TYPE_ARRAY, &out), -1);
  TN_EXPECT_ERROR("TypeError", "tn_any_as_object", "expected tn.Array",
                  "got tn.String");
  TnAny none = tn_any_none();
  ck_assert_int_eq(tn_any_as_object(&none, TN_TYPE_OBJECT, &out), -1);
  TN_EXPECT_ERROR("TypeError", "got None");
  TnAny dlt = {TN_TYPE_DLTENSOR_PTR, 0, {0}};
  ck_assert_int_eq(tn_any_to_owned(&b, &dlt), -1);
  TN_EXPECT_ERROR("TypeError", "DLTensor*");
  tn_object_release(s);
}
END_TEST

START_TEST(test_key_equality_and_hash) {
  TnAny i1 = tn_any_int(1), f1 = tn_any_float(1.0), t = tn_any_bool(1);
  TnAny f15 = tn_any_float(1.5), i2 = tn_any_int(2);
  ck_assert(tn_any_equal(&i1, &f1));
  ck_assert(tn_any_equal(&i1, &t));
  ck_assert(tn_any_equal(&t, &f1));
  ck_assert_uint_eq(tn_any_hash(&i1), tn_any_hash(&f1));
  ck_assert_uint_eq(tn_any_hash(&i1), tn_any_hash(&t));
  ck_assert(!tn_any_equal(&i1, &f15));
  ck_assert(!tn_any_equal(&i1, &i2));
  /* 2^53 + 1 is not equal to the double 2^53. */
  TnAny big = tn_any_int((INT64_C(1) << 53) + 1);
  TnAny bigf = tn_any_float(9007199254740992.0);
  ck_assert(!tn_any_equal(&big, &bigf));
  TnAny nan = tn_any_float(NAN);
  ck_assert(!tn_any_equal(&nan, &nan));
  TnAny z = tn_any_float(0.0), nz = tn_any_float(-0.0), zi = tn_any_int(0);
  ck_assert(tn_any_equal(&z, &nz));
  ck_assert_uint_eq(tn_any_hash(&z), tn_any_hash(&nz));
  ck_assert_uint_eq(tn_any_hash(&zi), tn_any_hash(&nz));
  /* Floats with no int64 value hash without a cast (UB): past 2^63, huge,
   * infinite, NaN. A whole number in range hashes as the int. */
  const double odd[] = {1e300, -1e300, 9223372036854775808.0, INFINITY,
                        -INFINITY, NAN, 2.77778e+25};
  for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
    TnAny f = tn_any_float(odd[k]);
    (void)tn_any_hash(&f);
  }
  TnAny p62 = tn_any_float(4611686018427387904.0);
  TnAny i62 = tn_any_int(INT64_C(1) << 62);
  ck_assert_uint_eq(tn_any_hash(&p62), tn_any_hash(&i62));
  TnAny m63 = tn_any_float(-9223372036854775808.0), i63 = tn_any_int(INT64_MIN);
  ck_assert_uint_eq(tn_any_hash(&m63), tn_any_hash(&i63));

  /* Strings by content across forms; str is not bytes. */
  TnObject *so = TN_NONNULL(tn_string_from_cstr("content"));
  TnAny raw = tn_any_cstr("content"), obj = tn_any_obj(so), small;
  TN_OK(tn_any_to_owned(&small, &raw)); /* 7 bytes: inline */
  ck_assert_int_eq(small.type_index, TN_TYPE_SMALL_STR);
  ck_assert(tn_any_equal(&raw, &obj));
  ck_assert(tn_any_equal(&small, &obj));
  ck_assert_uint_eq(tn_any_hash(&raw), tn_any_hash(&obj));
  ck_assert_uint_eq(tn_any_hash(&small), tn_any_hash(&obj));
  TnObject *bo = TN_NONNULL(tn_bytes_new("content", 7));
  TnAny bytes = tn_any_obj(bo);
  ck_assert(!tn_any_equal(&bytes, &obj));
  TnAny other = tn_any_cstr("contenu");
  ck_assert(!tn_any_equal(&other, &raw));

  /* Objects by identity. */
  TnObject *so2 = TN_NONNULL(tn_string_from_cstr("content"));
  TnObject *arr1 = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *arr2 = TN_NONNULL(tn_array_new(NULL, 0));
  TnAny a1 = tn_any_obj(arr1), a2 = tn_any_obj(arr2), a1b = tn_any_obj(arr1);
  ck_assert(!tn_any_equal(&a1, &a2));
  ck_assert(tn_any_equal(&a1, &a1b));
  TnAny o2 = tn_any_obj(so2);
  ck_assert(tn_any_equal(&obj, &o2)); /* strings are by content, though */
  ck_assert(!tn_any_equal(&a1, &i1));
  ck_assert(!tn_any_equal(NULL, &i1));
  tn_object_release(so);
  tn_object_release(so2);
  tn_object_release(bo);
  tn_object_release(arr1);
  tn_object_release(arr2);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("any");
  TCase *tc = tn_test_case(s, "any");
  tcase_add_test(tc, test_layout_and_constructors);
  tcase_add_test(tc, test_checked_casts);
  tcase_add_test(tc, test_dtype_cast_from_string);
  tcase_add_test(tc, test_strings_in_three_forms);
  tcase_add_test(tc, test_objects_copy_clear);
  tcase_add_test(tc, test_key_equality_and_hash);
  return s;
}

TN_TEST_MAIN(make_suite)
