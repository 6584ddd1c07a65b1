/* test_map.c: tn.Map (copy-on-write) and tn.Dict (mutable). */
#include "tn_test.h"

#include <math.h>

static int64_t get_int(const TnObject *m, TnAny key) {
  const TnAny *v = tn_map_find(m, &key);
  ck_assert_msg(v != NULL, "key missing: %s", tn_test_raised_text());
  int64_t out;
  TN_OK(tn_any_as_int(v, &out));
  return out;
}

START_TEST(test_new_find_get) {
  TnAny keys[] = {tn_any_cstr("a"), tn_any_int(2), tn_any_cstr("a")};
  TnAny vals[] = {tn_any_int(1), tn_any_int(20), tn_any_int(3)};
  TnObject *m = TN_NONNULL(tn_map_new(keys, vals, 3));
  ck_assert_int_eq(tn_map_size(m), 2); /* the later "a" wins */
  ck_assert_int_eq(get_int(m, tn_any_cstr("a")), 3);
  ck_assert_int_eq(get_int(m, tn_any_int(2)), 20);
  ck_assert_int_eq(get_int(m, tn_any_float(2.0)), 20); /* by value */
  TnAny missing = tn_any_cstr("zzz"), out;
  ck_assert_ptr_null(tn_map_find(m, &missing));
  ck_assert_ptr_null(tn_error_peek_raised()); /* find does not raise */
  ck_assert_int_eq(tn_map_get(m, &missing, &out), -1);
  TN_EXPECT_ERROR("KeyError", "tn_map_get", "'zzz'", "tn.Map");
  TnAny k = tn_any_int(2);
  TN_OK(tn_map_get(m, &k, &out));
  ck_assert_int_eq(out.v_int64, 20);
  tn_object_release(m);
}
END_TEST

START_TEST(test_string_forms_are_one_key) {
  TnObject *d = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  TnObject *obj = TN_NONNULL(tn_string_from_cstr("a key longer than seven"));
  TnAny k1 = tn_any_cstr("a key longer than seven"), k2 = tn_any_obj(obj);
  TnAny v1 = tn_any_int(1), v2 = tn_any_int(2);
  TN_OK(tn_dict_set(d, &k1, &v1));
  TN_OK(tn_dict_set(d, &k2, &v2));
  ck_assert_int_eq(tn_map_size(d), 1);
  ck_assert_int_eq(get_int(d, k1), 2);
  TnAny s1 = tn_any_cstr("short"), t = tn_any_bool(1), one = tn_any_float(1.0);
  TN_OK(tn_dict_set(d, &s1, &v1));
  TN_OK(tn_dict_set(d, &t, &v1));
  TN_OK(tn_dict_set(d, &one, &v2)); /* 1.0 == True: same key */
  ck_assert_int_eq(tn_map_size(d), 3);
  /* Bytes are not strings. */
  TnObject *b = TN_NONNULL(tn_bytes_new("short", 5));
  TnAny kb = tn_any_obj(b);
  ck_assert_ptr_null(tn_map_find(d, &kb));
  tn_object_release(b);
  tn_object_release(obj);
  tn_object_release(d);
}
END_TEST

START_TEST(test_objects_by_identity) {
  TnObject *a1 = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *a2 = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *d = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  TnAny k1 = tn_any_obj(a1), k2 = tn_any_obj(a2), v = tn_any_int(0);
  TN_OK(tn_dict_set(d, &k1, &v));
  ck_assert_ptr_null(tn_map_find(d, &k2));
  ck_assert_ptr_nonnull(tn_map_find(d, &k1));
  ck_assert_uint_eq(tn_object_strong_count(a1), 2); /* the key is owned */
  tn_object_release(d);
  ck_assert_uint_eq(tn_object_strong_count(a1), 1);
  tn_object_release(a1);
  tn_object_release(a2);
}
END_TEST

START_TEST(test_insertion_order_and_rehash) {
  enum { N = 10000 };
  TnObject *d = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  for (int64_t i = 0; i < N; i++) {
    TnAny k = tn_any_int(i * 7919 % 100003), v = tn_any_int(i);
    TN_OK(tn_dict_set(d, &k, &v));
  }
  ck_assert_int_eq(tn_map_size(d), N);
  /* Remove the even insertions, update a few odd ones. */
  for (int64_t i = 0; i < N; i += 2) {
    TnAny k = tn_any_int(i * 7919 % 100003);
    TN_OK(tn_dict_erase(d, &k));
  }
  for (int64_t i = 1; i < 100; i += 2) {
    TnAny k = tn_any_int(i * 7919 % 100003), v = tn_any_int(-i);
    TN_OK(tn_dict_set(d, &k, &v));
  }
  ck_assert_int_eq(tn_map_size(d), N / 2);
  /* Iteration is in first-insertion order, updates keep their place. */
  int64_t expect = 1, seen = 0;
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(d, 0, &k, &v); p >= 0;
       p = tn_map_next(d, p + 1, &k, &v)) {
    ck_assert_int_eq(k->v_int64, expect * 7919 % 100003);
    ck_assert_int_eq(v->v_int64, expect < 100 ? -expect : expect);
    expect += 2;
    seen++;
  }
  ck_assert_int_eq(seen, N / 2);
  /* Insert after deletes: tombstones are reused or compacted away. */
  for (int64_t i = 0; i < N; i += 2) {
    TnAny kk = tn_any_int(i * 7919 % 100003), vv = tn_any_int(i);
    TN_OK(tn_dict_set(d, &kk, &vv));
  }
  ck_assert_int_eq(tn_map_size(d), N);
  for (int64_t i = 0; i < N; i++)
    ck_assert_int_eq(get_int(d, tn_any_int(i * 7919 % 100003)),
                     (i % 2 == 0 || i >= 100) ? i : -i);
  TN_OK(tn_dict_clear(d));
  ck_assert_int_eq(tn_map_size(d), 0);
  ck_assert_int_eq(tn_map_next(d, 0, NULL, NULL), -1);
  tn_object_release(d);
}
END_TEST

START_TEST(test_map_copy_on_write) {
  TnAny k = tn_any_cstr("k"), v1 = tn_any_int(1), v2 = tn_any_int(2);
  TnObject *m = TN_NONNULL(tn_map_new(&k, &v1, 1));
  TnObject *orig = m;
  TnAny k2 = tn_any_cstr("k2");
  TN_OK(tn_map_set(&m, &k2, &v2));
  ck_assert_ptr_eq(m, orig); /* unique: in place */
  TnObject *shared = m;
  tn_object_retain(shared);
  TN_OK(tn_map_set(&m, &k, &v2));
  ck_assert_ptr_ne(m, shared);
  ck_assert_int_eq(get_int(m, k), 2);
  ck_assert_int_eq(get_int(shared, k), 1); /* the other holder sees no change */
  TnObject *before = m;
  tn_object_retain(before);
  TN_OK(tn_map_erase(&m, &k));
  ck_assert_int_eq(tn_map_size(m), 1);
  ck_assert_int_eq(tn_map_size(before), 2);
  /* Erasing a missing key: KeyError, and no copy was made. */
  TnObject *keep = m;
  tn_object_retain(keep);
  ck_assert_int_eq(tn_map_erase(&m, &k), -1);
  TN_EXPECT_ERROR("KeyError", "tn_map_erase", "'k'");
  ck_assert_ptr_eq(m, keep);
  tn_object_release(keep);
  tn_object_release(before);
  tn_object_release(shared);
  tn_object_release(m);
}
END_TEST

START_TEST(test_bad_input) {
  TnObject *m = TN_NONNULL(tn_map_new(NULL, NULL, 0));
  TnObject *d = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  TnAny k = tn_any_int(1), v = tn_any_int(1);
  ck_assert_int_eq(tn_dict_set(m, &k, &v), -1);
  TN_EXPECT_ERROR("TypeError", "tn_dict_set", "expected tn.Dict",
                  "got tn.Map");
  ck_assert_int_eq(tn_map_set(&d, &k, &v), -1);
  TN_EXPECT_ERROR("TypeError", "tn_map_set", "expected tn.Map");
  ck_assert_int_eq(tn_dict_erase(d, &k), -1);
  TN_EXPECT_ERROR("KeyError", "tn_dict_erase", "1", "tn.Dict");
  ck_assert_int_eq(tn_map_size(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_map_size");
  ck_assert_ptr_null(tn_map_find(d, NULL));
  TN_EXPECT_ERROR("ValueError", "'key' is NULL");
  ck_assert_ptr_null(tn_map_new(NULL, NULL, 2));
  TN_EXPECT_ERROR("ValueError", "'keys' is NULL");
  TnAny bad = {TN_TYPE_DLTENSOR_PTR, 0, {0}};
  TN_OK(tn_dict_set(d, &k, &v));
  ck_assert_int_eq(tn_dict_set(d, &bad, &v), -1);
  TN_EXPECT_ERROR("TypeError", "DLTensor*");
  TnAny k2 = tn_any_cstr("a long key that becomes an object");
  ck_assert_int_eq(tn_dict_set(d, &k2, &bad), -1);
  TN_EXPECT_ERROR("TypeError", "DLTensor*");
  ck_assert_int_eq(tn_map_size(d), 1); /* unchanged, nothing leaked */
  ck_assert_int_eq(get_int(d, k), 1);
  TnObject *s = TN_NONNULL(tn_string_from_cstr("x"));
  ck_assert_int_eq(tn_map_next(s, 0, NULL, NULL), -1);
  TN_EXPECT_ERROR("TypeError", "tn_map_next", "tn.Map or tn.Dict");
  tn_object_release(s);
  tn_object_release(m);
  tn_object_release(d);
}
END_TEST

/* A key must find itself, so every NaN is one key (sign and payload
 * aside); tn_any_equal itself keeps IEEE NaN != NaN. */
START_TEST(test_nan_is_one_key) {
  double neg_nan = -NAN, payload;
  uint64_t bits = UINT64_C(0x7ff8000000000123);
  memcpy(&payload, &bits, 8);
  TnAny nan = tn_any_float(NAN), other = tn_any_float(neg_nan),
        odd = tn_any_float(payload), one = tn_any_float(1.0);
  TnAny v1 = tn_any_int(1), v2 = tn_any_int(2), v3 = tn_any_int(3);
  TnObject *d = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  TN_OK(tn_dict_set(d, &nan, &v1));
  ck_assert_int_eq(get_int(d, nan), 1);
  ck_assert_int_eq(get_int(d, other), 1);
  ck_assert_int_eq(get_int(d, odd), 1);
  TN_OK(tn_dict_set(d, &odd, &v2)); /* replaces */
  ck_assert_int_eq(tn_map_size(d), 1);
  ck_assert_int_eq(get_int(d, nan), 2);
  TN_OK(tn_dict_set(d, &one, &v3));
  TN_OK(tn_dict_erase(d, &other));
  ck_assert_int_eq(tn_map_size(d), 1);
  ck_assert_ptr_null(tn_map_find(d, &nan));
  ck_assert_int_eq(get_int(d, one), 3);
  ck_assert(!tn_any_equal(&nan, &nan));
  TnAny keys[] = {nan, odd}, vals[] = {v1, v2};
  TnObject *m = TN_NONNULL(tn_map_new(keys, vals, 2));
  ck_assert_int_eq(tn_map_size(m), 1); /* later duplicates win */
  ck_assert_int_eq(get_int(m, other), 2);
  tn_object_release(m);
  tn_object_release(d);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("map");
  TCase *tc = tn_test_case(s, "map");
  tcase_add_test(tc, test_new_find_get);
  tcase_add_test(tc, test_string_forms_are_one_key);
  tcase_add_test(tc, test_objects_by_identity);
  tcase_add_test(tc, test_insertion_order_and_rehash);
  tcase_add_test(tc, test_map_copy_on_write);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_nan_is_one_key);
  return s;
}

TN_TEST_MAIN(make_suite)
