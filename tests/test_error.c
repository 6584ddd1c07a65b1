/* test_error.c: the Error object, the raised slot, frames and causes. */
#include <pthread.h>

#include "tn_test.h"

static int fails_deep(int depth) {
  if (depth == 0)
    return tn_error_raise("ValueError", "bad value %d for '%s'", 42, "x");
  return fails_deep(depth - 1) + 0;
}

START_TEST(test_raise_peek_take) {
  ck_assert_ptr_null(tn_error_peek_raised());
  ck_assert_int_eq(fails_deep(3), -1);
  TnObject *e = tn_error_peek_raised();
  ck_assert_ptr_nonnull(e);
  ck_assert(tn_object_is_instance(e, TN_TYPE_ERROR));
  ck_assert_str_eq(tn_error_kind(e), "ValueError");
  ck_assert_str_eq(tn_error_message(e), "bad value 42 for 'x'");
  ck_assert_ptr_null(tn_error_cause(e));
  TnObject *taken = tn_error_take_raised();
  ck_assert_ptr_eq(taken, e);
  ck_assert_ptr_null(tn_error_peek_raised());
  tn_object_release(taken);
}
END_TEST

START_TEST(test_set_raised_replaces) {
  int64_t before = tn_object_live_count();
  tn_error_raise("KeyError", "first");
  tn_error_raise("IndexError", "second");
  ck_assert_str_eq(tn_error_kind(tn_error_peek_raised()), "IndexError");
  tn_error_set_raised(NULL);
  ck_assert_ptr_null(tn_error_peek_raised());
  ck_assert_int_eq(tn_object_live_count(), before);

  TnObject *e = TN_NONNULL(tn_error_new("TypeError", "made, not raised"));
  ck_assert_ptr_null(tn_error_peek_raised());
  tn_error_set_raised(e); /* transfer full */
  TN_EXPECT_ERROR("TypeError", "made, not raised");
}
END_TEST

START_TEST(test_c_frames_captured) {
  fails_deep(2);
  TnObject *e = tn_error_take_raised();
  int64_t n = tn_error_frame_count(e);
  ck_assert_int_gt(n, 2);
  const char *f0 = TN_NONNULL(tn_error_frame(e, 0));
  ck_assert_ptr_nonnull(strstr(f0, "[C]"));
  ck_assert_ptr_null(tn_error_frame(e, n));
  TN_EXPECT_ERROR("IndexError", "tn_error_frame", "out of range");
  tn_object_release(e);
}
END_TEST

START_TEST(test_append_frames_and_format) {
  TnObject *e = TN_NONNULL(tn_error_new("RuntimeError", "boom"));
  int64_t n = tn_error_frame_count(e);
  TN_OK(tn_error_append_frame(e, "File \"pass.py\", line 7, in visit_call"));
  TN_OK(tn_error_append_frame(e, "in tn_func_call [tvmnode]"));
  ck_assert_int_eq(tn_error_frame_count(e), n + 2);
  ck_assert_str_eq(tn_error_frame(e, n), "File \"pass.py\", line 7, in visit_call");
  TnObject *text = TN_NONNULL(tn_error_format(e));
  const char *t = ((TnStringObj *)text)->data;
  ck_assert_ptr_nonnull(strstr(t, "Traceback (most recent call last):"));
  ck_assert_ptr_nonnull(strstr(t, "pass.py"));
  /* The outermost frame prints first, the message last. */
  ck_assert(strstr(t, "tn_func_call") < strstr(t, "pass.py"));
  ck_assert_ptr_nonnull(strstr(t, "RuntimeError: boom"));
  tn_object_release(text);
  tn_object_release(e);
}
END_TEST

START_TEST(test_cause_chain) {
  TnObject *root = TN_NONNULL(tn_error_new("KeyError", "missing 'w'"));
  TnObject *top = TN_NONNULL(tn_error_new("RuntimeError", "pass failed"));
  TN_OK(tn_error_set_cause(top, root));
  ck_assert_ptr_eq(tn_error_cause(top), root);
  TnObject *text = TN_NONNULL(tn_error_format(top));
  const char *t = ((TnStringObj *)text)->data;
  const char *a = strstr(t, "KeyError: missing 'w'");
  const char *b = strstr(t, "direct cause");
  const char *c = strstr(t, "RuntimeError: pass failed");
  ck_assert(a && b && c && a < b && b < c);
  tn_object_release(text);
  /* A loop is refused and the chain is left as it was. */
  ck_assert_int_eq(tn_error_set_cause(root, top), -1);
  TN_EXPECT_ERROR("ValueError", "tn_error_set_cause", "loop");
  ck_assert_ptr_null(tn_error_cause(root));
  ck_assert_int_eq(tn_error_set_cause(top, top), -1);
  TN_EXPECT_ERROR("ValueError", "loop");
  /* Clearing the cause. */
  TN_OK(tn_error_set_cause(top, NULL));
  ck_assert_ptr_null(tn_error_cause(top));
  tn_object_release(root);
  tn_object_release(top);
}
END_TEST

START_TEST(test_bad_input) {
  TnObject *s = TN_NONNULL(tn_string_from_cstr("not an error"));
  ck_assert_ptr_null(tn_error_kind(s));
  ck_assert_ptr_null(tn_error_message(NULL));
  ck_assert_int_eq(tn_error_append_frame(s, "x"), -1);
  TN_EXPECT_ERROR("TypeError", "tn_error_append_frame", "tn.Error",
                  "tn.String");
  ck_assert_int_eq(tn_error_append_frame(NULL, "x"), -1);
  TN_EXPECT_ERROR("ValueError", "'err' is NULL");
  TnObject *e = TN_NONNULL(tn_error_new(NULL, NULL));
  ck_assert_str_eq(tn_error_kind(e), "RuntimeError");
  ck_assert_str_eq(tn_error_message(e), "");
  ck_assert_int_eq(tn_error_append_frame(e, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'frame' is NULL");
  ck_assert_int_eq(tn_error_set_cause(e, s), -1);
  TN_EXPECT_ERROR("TypeError", "cause");
  ck_assert_int_eq(tn_error_frame_count(s), -1);
  TN_EXPECT_ERROR("TypeError", "tn_error_frame_count");
  ck_assert_ptr_null(tn_error_format(s));
  TN_EXPECT_ERROR("TypeError", "tn_error_format");
  tn_object_release(e);
  tn_object_release(s);
}
END_TEST

START_TEST(test_kind_table) {
  /* Codes are ABI: these values never change. */
  ck_assert_int_eq(TN_ERR_RUNTIME, 0);
  ck_assert_int_eq(TN_ERR_TYPE, 1);
  ck_assert_int_eq(TN_ERR_VALUE, 2);
  ck_assert_int_eq(TN_ERR_INDEX, 3);
  ck_assert_int_eq(TN_ERR_KEY, 4);
  ck_assert_int_eq(TN_ERR_ATTRIBUTE, 5);
  ck_assert_int_eq(TN_ERR_MEMORY, 6);
  ck_assert_int_eq(TN_ERR_OVERFLOW, 7);
  ck_assert_int_eq(TN_ERR_NOT_IMPLEMENTED, 8);
  ck_assert_int_eq(TN_ERR_OTHER, -1);
  int n = 0;
#define CHECK_KIND(name, code, str)                                    \
  ck_assert_str_eq(tn_error_kind_name(TN_ERR_##name), str);            \
  ck_assert_int_eq(tn_error_kind_from_name(str), code);                \
  n++;
  TN_ERROR_KIND_MAP(CHECK_KIND)
#undef CHECK_KIND
  ck_assert_int_eq(n, 9);
  ck_assert_str_eq(tn_error_kind_name(TN_ERR_NOT_IMPLEMENTED),
                   "NotImplementedError");
  ck_assert_ptr_null(tn_error_kind_name(TN_ERR_OTHER));
  ck_assert_ptr_null(tn_error_kind_name((TnErrorKind)n));
  ck_assert_ptr_null(tn_error_kind_name((TnErrorKind)-7));
  ck_assert_int_eq(tn_error_kind_from_name("ZeroDivisionError"), TN_ERR_OTHER);
  ck_assert_int_eq(tn_error_kind_from_name("typeerror"), TN_ERR_OTHER);
  ck_assert_int_eq(tn_error_kind_from_name(""), TN_ERR_OTHER);
  ck_assert_int_eq(tn_error_kind_from_name(NULL), TN_ERR_OTHER);
}
END_TEST

START_TEST(test_kind_code) {
  TnObject *e = TN_NONNULL(tn_error_new("KeyError", "k"));
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_KEY);
  tn_object_release(e);
  /* A kind the table does not have stays a free string. */
  e = TN_NONNULL(tn_error_new("ZeroDivisionError", "from Python"));
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_OTHER);
  ck_assert_str_eq(tn_error_kind(e), "ZeroDivisionError");
  tn_object_release(e);
  e = TN_NONNULL(tn_error_new(NULL, "no kind"));
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_RUNTIME);
  tn_object_release(e);
  tn_error_raise("OverflowError", "by name");
  ck_assert_int_eq(tn_error_kind_code(tn_error_peek_raised()),
                   TN_ERR_OVERFLOW);
  TN_EXPECT_ERROR("OverflowError", "by name");
  /* NULL and objects that are not errors. */
  ck_assert_int_eq(tn_error_kind_code(NULL), TN_ERR_OTHER);
  TnObject *s = TN_NONNULL(tn_string_from_cstr("TypeError"));
  ck_assert_int_eq(tn_error_kind_code(s), TN_ERR_OTHER);
  tn_object_release(s);
  ck_assert_ptr_null(tn_error_peek_raised());
}
END_TEST

static int raising_helper(int x) {
  return TN_RAISE(VALUE, "argument 'x' is %d", x);
}

START_TEST(test_raise_in) {
  ck_assert_int_eq(raising_helper(3), -1);
  TnObject *e = tn_error_peek_raised();
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_VALUE);
  ck_assert_str_eq(tn_error_kind(e), "ValueError");
  ck_assert_str_eq(tn_error_message(e), "raising_helper: argument 'x' is 3");
  ck_assert_int_eq(tn_error_raise_in(TN_ERR_INDEX, "tn_thing_get",
                                     "index %d out of range", 9),
                   -1);
  e = tn_error_peek_raised();
  ck_assert_str_eq(tn_error_kind(e), "IndexError");
  ck_assert_str_eq(tn_error_message(e), "tn_thing_get: index 9 out of range");
  /* No function: the message is just the formatted text. */
  tn_error_raise_in(TN_ERR_KEY, NULL, "no key '%s'", "w");
  ck_assert_str_eq(tn_error_message(tn_error_peek_raised()), "no key 'w'");
  /* A code outside the table raises a RuntimeError. */
  tn_error_raise_in(TN_ERR_OTHER, "f", "odd kind");
  e = tn_error_peek_raised();
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_RUNTIME);
  ck_assert_str_eq(tn_error_message(e), "f: odd kind");
  tn_error_raise_in((TnErrorKind)1000, NULL, NULL);
  e = tn_error_peek_raised();
  ck_assert_str_eq(tn_error_kind(e), "RuntimeError");
  ck_assert_str_eq(tn_error_message(e), "");
  /* The library's own argument checks name the public function. */
  ck_assert_int_eq(tn_error_append_frame(NULL, "x"), -1);
  e = tn_error_peek_raised();
  ck_assert_int_eq(tn_error_kind_code(e), TN_ERR_VALUE);
  ck_assert_str_eq(tn_error_message(e),
                   "tn_error_append_frame: argument 'err' is NULL");
  tn_error_set_raised(NULL);
}
END_TEST

static void *raise_in_thread(void *arg) {
  (void)arg;
  /* Each thread has its own slot: the main thread's error is not here. */
  if (tn_error_peek_raised() != NULL) return (void *)1;
  tn_error_raise("RuntimeError", "thread-local");
  return NULL; /* left raised: released when the thread exits */
}

START_TEST(test_slot_is_thread_local) {
  tn_error_raise("ValueError", "main thread");
  pthread_t th;
  void *ret = (void *)2;
  pthread_create(&th, NULL, raise_in_thread, NULL);
  pthread_join(th, &ret);
  ck_assert_ptr_null(ret);
  TN_EXPECT_ERROR("ValueError", "main thread");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("error");
  TCase *tc = tn_test_case(s, "error");
  tcase_add_test(tc, test_raise_peek_take);
  tcase_add_test(tc, test_set_raised_replaces);
  tcase_add_test(tc, test_c_frames_captured);
  tcase_add_test(tc, test_append_frames_and_format);
  tcase_add_test(tc, test_cause_chain);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_slot_is_thread_local);
  tcase_add_test(tc, test_kind_table);
  tcase_add_test(tc, test_kind_code);
  tcase_add_test(tc, test_raise_in);
  return s;
}

TN_TEST_MAIN(make_suite)
