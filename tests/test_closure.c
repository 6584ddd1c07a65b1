/* test_closure.c: packed functions called through real C function pointers. */
#include <pthread.h>
#include <stdbool.h>

#include "tn_test.h"

/* A packed comparator of two `const int *` (passed as ptr). */
static int compare_ints(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  int *calls = self;
  (*calls)++;
  void *pa, *pb;
  if (tn_any_as_ptr(&args[0], &pa) || tn_any_as_ptr(&args[1], &pb)) return -1;
  int a = *(const int *)pa, b = *(const int *)pb;
  *ret = tn_any_int((a > b) - (a < b));
  return 0;
}

START_TEST(test_qsort_with_packed_comparator) {
  int calls = 0;
  TnObject *f = TN_NONNULL(tn_func_new(compare_ints, &calls, NULL));
  int (*cmp)(const void *, const void *) = NULL;
  TnObject *h = TN_NONNULL(tn_func_to_c(f, "i32(ptr,ptr)", (void **)&cmp));
  ck_assert_int_eq(h->type_index, TN_TYPE_CCLOSURE);
  ck_assert_uint_eq(tn_object_strong_count(f), 2); /* the handle keeps it */
  int data[1000];
  for (int i = 0; i < 1000; i++) data[i] = (i * 7919) % 1000 - 500;
  qsort(data, 1000, sizeof(int), cmp);
  for (int i = 1; i < 1000; i++) ck_assert_int_le(data[i - 1], data[i]);
  ck_assert_int_gt(calls, 1000);
  ck_assert_int_eq(tn_cclosure_error_count(h), 0);
  tn_object_release(f);
  tn_object_release(h);
}
END_TEST

/* --- a C library that keeps a callback and calls it later ---------------- */

typedef int64_t (*Callback)(int64_t value, void *user);
static Callback g_cb;
static void *g_user;
static void lib_set_callback(Callback cb, void *user) {
  g_cb = cb;
  g_user = user;
}
static void *lib_fire(void *arg) {
  int64_t *out = arg;
  for (int i = 0; i < 100; i++) out[i] = g_cb(i, g_user);
  return NULL;
}

static int triple_plus_user(void *self, const TnAny *args, int32_t nargs,
                            TnAny *ret) {
  (void)self;
  int64_t v;
  void *user;
  if (nargs != 2 || tn_any_as_int(&args[0], &v) ||
      tn_any_as_ptr(&args[1], &user))
    return tn_error_raise("TypeError", "bad arguments");
  if (v == 13) return tn_error_raise("ValueError", "unlucky %lld", (long long)v);
  *ret = tn_any_int(3 * v + *(int64_t *)user);
  return 0;
}

START_TEST(test_callback_from_another_thread) {
  TnObject *f = TN_NONNULL(tn_func_new(triple_plus_user, NULL, NULL));
  Callback cb = NULL;
  TnObject *h = TN_NONNULL(tn_func_to_c(f, "i64(i64,ptr)", (void **)&cb));
  tn_object_release(f); /* the handle alone keeps it alive now */
  int64_t user = 1000;
  lib_set_callback(cb, &user);
  int64_t out[100];
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, lib_fire, out), 0);
  pthread_join(th, NULL);
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(out[i], i == 13 ? 0 : 3 * i + 1000);
  /* The failure on the other thread is recorded in the handle. */
  ck_assert_int_eq(tn_cclosure_error_count(h), 1);
  TnObject *err = TN_NONNULL(tn_cclosure_take_error(h));
  ck_assert_str_eq(tn_error_kind(err), "ValueError");
  ck_assert_str_eq(tn_error_message(err), "unlucky 13");
  tn_object_release(err);
  ck_assert_ptr_null(tn_cclosure_take_error(h)); /* taken */
  ck_assert_ptr_null(tn_error_peek_raised()); /* not in this thread's slot */
  tn_object_release(h);
}
END_TEST

START_TEST(test_error_channel_same_thread) {
  TnObject *f = TN_NONNULL(tn_func_new(triple_plus_user, NULL, NULL));
  Callback cb = NULL;
  TnObject *h = TN_NONNULL(tn_func_to_c(f, "i64(i64,ptr)", (void **)&cb));
  int64_t user = 0;
  ck_assert_int_eq(cb(13, &user), 0); /* zero result */
  TN_EXPECT_ERROR("ValueError", "unlucky 13"); /* and the slot is set */
  TnObject *err = TN_NONNULL(tn_cclosure_take_error(h));
  tn_object_release(err);
  ck_assert_int_eq(cb(2, &user), 6);
  tn_object_release(f);
  tn_object_release(h);
}
END_TEST

/* --- every type through a closure ---------------------------------------- */

static int echo_first(void *self, const TnAny *args, int32_t nargs,
                      TnAny *ret) {
  (void)self;
  return tn_any_to_owned(ret, &args[0]);
}

START_TEST(test_types_round_trip) {
  TnObject *f = TN_NONNULL(tn_func_new(echo_first, NULL, NULL));
  void *p;
  TnObject *h;
#define ROUND_TRIP(sig, ctype, value)                       \
  h = TN_NONNULL(tn_func_to_c(f, sig, &p));                 \
  ck_assert(((ctype(*)(ctype))p)(value) == (value));        \
  tn_object_release(h);
  ROUND_TRIP("i8(i8)", int8_t, -100);
  ROUND_TRIP("u8(u8)", uint8_t, 250);
  ROUND_TRIP("i16(i16)", int16_t, -30000);
  ROUND_TRIP("u16(u16)", uint16_t, 65000);
  ROUND_TRIP("i32(i32)", int32_t, -2000000000);
  ROUND_TRIP("u32(u32)", uint32_t, 4000000000u);
  ROUND_TRIP("i64(i64)", int64_t, INT64_MIN);
  ROUND_TRIP("u64(u64)", uint64_t, UINT64_C(1) << 62);
  ROUND_TRIP("f32(f32)", float, 0.5f);
  ROUND_TRIP("f64(f64)", double, -1e300);
  ROUND_TRIP("bool(bool)", bool, true);
#undef ROUND_TRIP
  h = TN_NONNULL(tn_func_to_c(f, "dtype(dtype)", &p));
  DLDataType t = {kDLInt, 8, 4};
  DLDataType t2 = ((DLDataType(*)(DLDataType))p)(t);
  ck_assert(t2.code == kDLInt && t2.bits == 8 && t2.lanes == 4);
  tn_object_release(h);
  h = TN_NONNULL(tn_func_to_c(f, "device(device)", &p));
  DLDevice d = {kDLCUDA, 3};
  DLDevice d2 = ((DLDevice(*)(DLDevice))p)(d);
  ck_assert(d2.device_type == kDLCUDA && d2.device_id == 3);
  tn_object_release(h);
  /* any by value: the C caller owns the returned any. */
  h = TN_NONNULL(tn_func_to_c(f, "any(any)", &p));
  TnObject *arr = TN_NONNULL(tn_array_new(NULL, 0));
  TnAny r = ((TnAny(*)(TnAny))p)(tn_any_obj(arr));
  ck_assert_ptr_eq(r.v_obj, arr);
  ck_assert_uint_eq(tn_object_strong_count(arr), 2);
  tn_any_clear(&r);
  tn_object_release(h);
  /* obj+ : a new reference for the C caller; str in is borrowed. */
  h = TN_NONNULL(tn_func_to_c(f, "obj+(obj)", &p));
  TnObject *o = ((TnObject * (*)(TnObject *)) p)(arr);
  ck_assert_ptr_eq(o, arr);
  tn_object_release(o);
  tn_object_release(h);
  h = TN_NONNULL(tn_func_to_c(f, "any(str)", &p));
  r = ((TnAny(*)(const char *))p)("copied into the result");
  const char *s;
  TN_OK(tn_any_as_str(&r, &s, NULL));
  ck_assert_str_eq(s, "copied into the result");
  tn_any_clear(&r);
  tn_object_release(h);
  tn_object_release(arr);
  tn_object_release(f);
}
END_TEST

static int return_string(void *self, const TnAny *args, int32_t nargs,
                         TnAny *ret) {
  (void)self, (void)args, (void)nargs;
  *ret = tn_any_cstr("x");
  return 0;
}

START_TEST(test_bad_input) {
  TnObject *f = TN_NONNULL(tn_func_new(return_string, NULL, NULL));
  void *p = NULL;
  ck_assert_ptr_null(tn_func_to_c(f, "str()", &p));
  TN_EXPECT_ERROR("ValueError", "tn_func_to_c", "cannot return 'str'");
  ck_assert_ptr_null(tn_func_to_c(f, "obj()", &p));
  TN_EXPECT_ERROR("ValueError", "cannot return 'obj'", "obj+");
  ck_assert_ptr_null(tn_func_to_c(f, "i64(any*)", &p));
  TN_EXPECT_ERROR("ValueError", "argument 0", "'any*'");
  ck_assert_ptr_null(tn_func_to_c(f, "i64(", &p));
  TN_EXPECT_ERROR("ValueError", "position 4");
  ck_assert_ptr_null(tn_func_to_c(f, "i64()", NULL));
  TN_EXPECT_ERROR("ValueError", "'out_fnptr' is NULL");
  ck_assert_ptr_null(tn_func_to_c(NULL, "i64()", &p));
  TN_EXPECT_ERROR("ValueError", "'func' is NULL");
  ck_assert_ptr_null(p);
  /* A result of the wrong type: zero, and the error says why. */
  TnObject *h = TN_NONNULL(tn_func_to_c(f, "f64()", &p));
  ck_assert(((double (*)(void))p)() == 0.0);
  TN_EXPECT_ERROR("TypeError", "returned const char*", "does not convert to f64");
  ck_assert_int_eq(tn_cclosure_error_count(h), 1);
  tn_object_release(h);
  h = TN_NONNULL(tn_func_to_c(f, "u8()", &p));
  ck_assert_int_eq(((uint8_t(*)(void))p)(), 0);
  TN_EXPECT_ERROR("TypeError", "u8");
  tn_object_release(h);
  ck_assert_ptr_null(tn_cclosure_take_error(f));
  TN_EXPECT_ERROR("TypeError", "tn_cclosure_take_error", "tn.CClosure");
  ck_assert_int_eq(tn_cclosure_error_count(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_cclosure_error_count");
  tn_object_release(f);
}
END_TEST

static int fail_on_negative(void *self, const TnAny *args, int32_t nargs,
                            TnAny *ret) {
  (void)self;
  if (args[0].v_int64 < 0)
    return tn_error_raise("ValueError", "negative: %lld",
                          (long long)args[0].v_int64);
  if (args[0].v_int64 == 7) { /* the wrong type of result */
    *ret = tn_any_float(7.5);
    return 0;
  }
  *ret = tn_any_int(args[0].v_int64 + (nargs > 1 ? args[1].v_int64 : 0));
  return 0;
}

/* The all-i64 signatures take a specialised path; its error handling must
 * match the general one. */
START_TEST(test_i64_fast_handler) {
  TnObject *f = TN_NONNULL(tn_func_new(fail_on_negative, NULL, NULL));
  int64_t (*fp)(int64_t, int64_t) = NULL;
  TnObject *h = TN_NONNULL(tn_func_to_c(f, "i64(i64,i64)", (void **)&fp));
  ck_assert_int_eq(fp(40, 2), 42);
  ck_assert_int_eq(fp(-1, 2), 0);
  TN_EXPECT_ERROR("ValueError", "negative: -1");
  ck_assert_int_eq(fp(7, 0), 0);
  TN_EXPECT_ERROR("TypeError", "returned float", "does not convert to i64");
  ck_assert_int_eq(tn_cclosure_error_count(h), 2);
  TnObject *err = TN_NONNULL(tn_cclosure_take_error(h));
  ck_assert_str_eq(tn_error_kind(err), "TypeError");
  tn_object_release(err);
  tn_object_release(h);
  tn_object_release(f);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("closure");
  TCase *tc = tn_test_case(s, "packed-to-typed");
  tcase_add_test(tc, test_qsort_with_packed_comparator);
  tcase_add_test(tc, test_callback_from_another_thread);
  tcase_add_test(tc, test_error_channel_same_thread);
  tcase_add_test(tc, test_types_round_trip);
  tcase_add_test(tc, test_i64_fast_handler);
  tcase_add_test(tc, test_bad_input);
  return s;
}

TN_TEST_MAIN(make_suite)
