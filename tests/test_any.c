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

/* ---- invalid values ---------------------------------------------------- */

/* Values no constructor makes: an unassigned plain type index, a small
 * string or bytes longer than its 7 inline bytes or not NUL-terminated, a
 * NULL raw string. */
static TnAny with_index(int32_t type_index) {
  TnAny a = {type_index, 0, {0}};
  a.v_int64 = 0x0102030405060708;
  return a;
}
static TnAny small_of(int32_t type_index, uint32_t len, const char *bytes) {
  TnAny a = {type_index, len, {0}};
  memcpy(a.v_small, bytes, 8);
  return a;
}

typedef struct {
  TnAny value;
  const char *message;
} Invalid;

static int invalid_values(Invalid *out) {
  int n = 0;
  static const int32_t unassigned[] = {12, 13, 40, 63, -1, -5, INT32_MIN};
  static char text[7][64];
  for (size_t i = 0; i < sizeof unassigned / sizeof *unassigned; i++) {
    out[n].value = with_index(unassigned[i]);
    snprintf(text[i], sizeof text[i], "type index %d is not assigned",
             (int)unassigned[i]);
    out[n++].message = text[i];
  }
  out[n].value = small_of(TN_TYPE_SMALL_STR, 9, "abcdefgh");
  out[n++].message = "small string of length 9 (at most 7)";
  out[n].value = small_of(TN_TYPE_SMALL_STR, 4000000000u, "abcdefgh");
  out[n++].message = "small string of length 4000000000";
  out[n].value = small_of(TN_TYPE_SMALL_BYTES, 8, "abcdefgh");
  out[n++].message = "small bytes of length 8 (at most 7)";
  out[n].value = small_of(TN_TYPE_SMALL_STR, 3, "abcdefgh");
  out[n++].message = "not followed by a NUL";
  TnAny raw = {TN_TYPE_RAW_STR, 0, {0}};
  out[n].value = raw;
  out[n++].message = "const char* that is NULL";
  return n;
}

/* Everything that stores, prints or saves a value refuses an invalid one
 * with a TypeError naming itself; comparing and hashing stay safe. */
START_TEST(test_invalid_values_are_refused) {
  Invalid bad[16];
  int nbad = invalid_values(bad);
  TnObject *arr = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *list = TN_NONNULL(tn_list_new(NULL, 0));
  TnObject *map = TN_NONNULL(tn_map_new(NULL, NULL, 0));
  TnObject *dict = TN_NONNULL(tn_dict_new(NULL, NULL, 0));
  TnAny one = tn_any_int(1), out;
  TN_OK(tn_list_append(list, &one));
  TN_OK(tn_array_push(&arr, &one));
  for (int i = 0; i < nbad; i++) {
    const TnAny *v = &bad[i].value;
    const char *m = bad[i].message;
    ck_assert_ptr_null(tn_array_new(v, 1));
    TN_EXPECT_ERROR("TypeError", "tn_array_new: invalid value", m);
    ck_assert_ptr_null(tn_list_new(v, 1));
    TN_EXPECT_ERROR("TypeError", "tn_list_new: invalid value", m);
    ck_assert_int_eq(tn_array_push(&arr, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_array_push: invalid value", m);
    ck_assert_int_eq(tn_array_set(&arr, 0, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_array_set: invalid value", m);
    ck_assert_int_eq(tn_list_append(list, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_list_append: invalid value", m);
    ck_assert_int_eq(tn_list_set(list, 0, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_list_set: invalid value", m);
    ck_assert_int_eq(tn_list_insert(list, 0, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_list_insert: invalid value", m);
    ck_assert_ptr_null(tn_map_new(v, &one, 1));
    TN_EXPECT_ERROR("TypeError", "tn_map_new: invalid value", m);
    ck_assert_ptr_null(tn_map_new(&one, v, 1));
    TN_EXPECT_ERROR("TypeError", "tn_map_new: invalid value", m);
    ck_assert_ptr_null(tn_dict_new(&one, v, 1));
    TN_EXPECT_ERROR("TypeError", "tn_dict_new: invalid value", m);
    ck_assert_int_eq(tn_map_set(&map, v, &one), -1);
    TN_EXPECT_ERROR("TypeError", "tn_map_set: invalid value", m);
    ck_assert_int_eq(tn_map_set(&map, &one, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_map_set: invalid value", m);
    ck_assert_int_eq(tn_dict_set(dict, v, &one), -1);
    TN_EXPECT_ERROR("TypeError", "tn_dict_set: invalid value", m);
    ck_assert_int_eq(tn_dict_set(dict, &one, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_dict_set: invalid value", m);
    ck_assert_int_eq(tn_any_to_owned(&out, v), -1);
    TN_EXPECT_ERROR("TypeError", "tn_any_to_owned: invalid value", m);
    /* printing, structural comparison, saving */
    ck_assert_ptr_null(tn_repr(v));
    TN_EXPECT_ERROR("TypeError", "tn_repr: invalid value", m);
    ck_assert_ptr_null(tn_to_dot(v));
    TN_EXPECT_ERROR("TypeError", "tn_to_dot: invalid value", m);
    uint64_t h;
    ck_assert_int_eq(tn_structural_hash(v, 0, &h), -1);
    TN_EXPECT_ERROR("TypeError", "tn_structural_hash: invalid value", m);
    ck_assert_int_eq(tn_structural_equal(v, &one, 0), -1);
    TN_EXPECT_ERROR("TypeError", "tn_structural_equal: invalid value", m);
    ck_assert_int_eq(tn_structural_equal(&one, v, 0), -1);
    TN_EXPECT_ERROR("TypeError", "tn_structural_equal: invalid value", m);
    TnObject *path = NULL;
    ck_assert_int_eq(tn_structural_equal_path(v, v, 0, &path), -1);
    TN_EXPECT_ERROR("TypeError", "tn_structural_equal: invalid value", m);
    ck_assert_ptr_null(path);
    ck_assert_ptr_null(tn_json_save(v, 0));
    TN_EXPECT_ERROR("TypeError", "tn_json_save: invalid value", m);
    /* hash and equality: equal only to the same bits, never read past
     * the value (ASan checks) */
    TnAny copy = *v, differ = *v;
    differ.v_int64 ^= 1 << 8; /* (a NULL raw string: a bad pointer) */
    ck_assert(tn_any_equal(v, &copy));
    ck_assert_uint_eq(tn_any_hash(v), tn_any_hash(&copy));
    if (v->type_index != TN_TYPE_RAW_STR) ck_assert(!tn_any_equal(v, &differ));
    TnAny s = tn_any_cstr("abcdefgh"), s3 = tn_any_cstr("abc");
    ck_assert(!tn_any_equal(v, &s) && !tn_any_equal(&s, v));
    ck_assert(!tn_any_equal(v, &s3) && !tn_any_equal(&s3, v));
    ck_assert(!tn_any_equal(v, &one));
    /* a look-up finds nothing, and the container is unchanged */
    ck_assert_ptr_null(tn_map_find(map, v));
    ck_assert_int_eq(tn_error_peek_raised() == NULL, 1);
    const char *d;
    ck_assert_int_eq(tn_any_as_str(v, &d, NULL), -1);
    tn_error_set_raised(NULL);
  }
  ck_assert_int_eq(tn_array_size(arr), 1);
  ck_assert_int_eq(tn_array_size(list), 1);
  ck_assert_int_eq(tn_map_size(map), 0);
  ck_assert_int_eq(tn_map_size(dict), 0);
  /* a valid small string still goes in, with its unused bytes zeroed */
  TnAny ok = small_of(TN_TYPE_SMALL_STR, 2, "hi\0\0\0\0\0\0");
  TN_OK(tn_list_append(list, &ok));
  const char *d;
  size_t n;
  TN_OK(tn_any_as_str(tn_array_at(list, 1), &d, &n));
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(d, "hi");
  tn_object_release(arr);
  tn_object_release(list);
  tn_object_release(map);
  tn_object_release(dict);
}
END_TEST

/* A node field of kind any stores through the same check. */
typedef struct {
  TnObject header;
  TnAny value;
} Holder;

START_TEST(test_invalid_value_in_node_field) {
  static const TnFieldDesc fields[] = {
      TN_FIELD_ANY(Holder, value, TN_FIELD_OPTIONAL, "anything"),
  };
  static int32_t index = -1;
  if (index < 0) {
    TnNodeDesc desc = {"test_any.Holder", TN_TYPE_OBJECT, TN_NODE_TREE, 0,
                       (int64_t)sizeof(Holder), fields, 1, NULL, NULL};
    index = tn_node_register(&desc);
    ck_assert_msg(index > 0, "%s", tn_test_raised_text());
  }
  TnObject *h = TN_NONNULL(tn_node_new(index, NULL, NULL, 0));
  Invalid bad[16];
  int nbad = invalid_values(bad);
  for (int i = 0; i < nbad; i++) {
    ck_assert_int_eq(tn_node_set(h, "value", &bad[i].value), -1);
    TN_EXPECT_ERROR("TypeError", "tn_node_set", "invalid value",
                    bad[i].message);
    const char *names[] = {"value"};
    ck_assert_ptr_null(tn_node_new(index, names, &bad[i].value, 1));
    TN_EXPECT_ERROR("TypeError", "tn_node_new", "invalid value",
                    bad[i].message);
  }
  TnAny v = tn_any_int(3);
  TN_OK(tn_node_set(h, "value", &v));
  tn_object_release(h);
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
  tcase_add_test(tc, test_invalid_values_are_refused);
  tcase_add_test(tc, test_invalid_value_in_node_field);
  return s;
}

TN_TEST_MAIN(make_suite)
