/* test_function.c: tn.Function objects and packed calls. */
#include "tn_test.h"

typedef struct {
  int64_t base;
  int *freed;
} Ctx;

static int add_base(void *self, const TnAny *args, int32_t nargs,
                    TnAny *ret) {
  Ctx *c = self;
  int64_t x;
  if (nargs != 1)
    return tn_error_raise("TypeError", "add_base takes 1 argument, got %d",
                          nargs);
  if (tn_any_as_int(&args[0], &x)) return -1;
  *ret = tn_any_int(c->base + x);
  return 0;
}

static void ctx_free(void *self) {
  Ctx *c = self;
  (*c->freed)++;
  free(c);
}

static TnObject *make_adder(int64_t base, int *freed) {
  Ctx *c = malloc(sizeof *c);
  c->base = base;
  c->freed = freed;
  return TN_NONNULL(tn_func_new(add_base, c, ctx_free));
}

START_TEST(test_call_and_self_lifetime) {
  int freed = 0;
  TnObject *f = make_adder(40, &freed);
  ck_assert_int_eq(f->type_index, TN_TYPE_FUNCTION);
  TnAny arg = tn_any_int(2), ret = tn_any_none();
  TN_OK(tn_func_call(f, &arg, 1, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_INT);
  ck_assert_int_eq(ret.v_int64, 42);
  /* Bindings may call through the public layout directly. */
  TnFunctionObj *fo = (TnFunctionObj *)f;
  TnAny r2 = tn_any_none();
  ck_assert_int_eq(fo->fn(fo->self, &arg, 1, &r2), 0);
  ck_assert_int_eq(r2.v_int64, 42);
  ck_assert_int_eq(freed, 0);
  tn_object_release(f);
  ck_assert_int_eq(freed, 1); /* self_deleter ran exactly once */
}
END_TEST

START_TEST(test_errors_propagate) {
  int freed = 0;
  TnObject *f = make_adder(1, &freed);
  TnAny arg = tn_any_cstr("not a number"), ret = tn_any_none();
  ck_assert_int_eq(tn_func_call(f, &arg, 1, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "expected int", "const char*");
  ck_assert_int_eq(ret.type_index, TN_TYPE_NONE);
  ck_assert_int_eq(tn_func_call(f, NULL, 0, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "add_base takes 1 argument, got 0");
  tn_object_release(f);
}
END_TEST

START_TEST(test_bad_input) {
  TnAny ret = tn_any_none();
  ck_assert_int_eq(tn_func_call(NULL, NULL, 0, &ret), -1);
  TN_EXPECT_ERROR("ValueError", "tn_func_call", "'func' is NULL");
  TnObject *s = TN_NONNULL(tn_string_from_cstr("f"));
  ck_assert_int_eq(tn_func_call(s, NULL, 0, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "tn_func_call", "expected tn.Function",
                  "got tn.String");
  tn_object_release(s);
  int freed = 0;
  TnObject *f = make_adder(0, &freed);
  ck_assert_int_eq(tn_func_call(f, NULL, 2, &ret), -1);
  TN_EXPECT_ERROR("ValueError", "2 arguments");
  ck_assert_int_eq(tn_func_call(f, NULL, -1, &ret), -1);
  TN_EXPECT_ERROR("ValueError", "-1 arguments");
  ck_assert_int_eq(tn_func_call(f, NULL, 0, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'ret' is NULL");
  tn_object_release(f);
  /* A NULL implementation is refused, and the context is still released. */
  Ctx *c = malloc(sizeof *c);
  c->freed = &freed;
  ck_assert_ptr_null(tn_func_new(NULL, c, ctx_free));
  TN_EXPECT_ERROR("ValueError", "tn_func_new", "'fn' is NULL");
  ck_assert_int_eq(freed, 2);
}
END_TEST

/* A stale handle whose memory is still held (a weak reference) reports an
 * error instead of running freed code. */
START_TEST(test_call_after_free) {
  int freed = 0;
  TnObject *f = make_adder(0, &freed);
  tn_object_weak_retain(f);
  tn_object_release(f);
  ck_assert_int_eq(freed, 1);
  TnAny arg = tn_any_int(1), ret = tn_any_none();
  ck_assert_int_eq(tn_func_call(f, &arg, 1, &ret), -1);
  TN_EXPECT_ERROR("RuntimeError", "called after it was freed");
  tn_object_weak_release(f);
}
END_TEST

START_TEST(test_builtins) {
  TnObject *echo = TN_NONNULL(tn_func_get("testing.echo"));
  TnAny arg = tn_any_cstr("a string long enough to be copied"), ret = tn_any_none();
  TN_OK(tn_func_call(echo, &arg, 1, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_STRING); /* owned copy */
  tn_any_clear(&ret);
  TnObject *add = TN_NONNULL(tn_func_get("testing.add_i64"));
  TnAny two[] = {tn_any_int(INT64_MAX), tn_any_int(1)};
  TN_OK(tn_func_call(add, two, 2, &ret));
  ck_assert_int_eq(ret.v_int64, INT64_MIN); /* wraps like the C add */
  two[1] = tn_any_float(1.0);
  ck_assert_int_eq(tn_func_call(add, two, 2, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "testing.add_i64", "argument 1", "got float");
  TnObject *raise = TN_NONNULL(tn_func_get("testing.raise"));
  TnAny ka[] = {tn_any_cstr("IndexError"), tn_any_cstr("from testing.raise")};
  ck_assert_int_eq(tn_func_call(raise, ka, 2, &ret), -1);
  TN_EXPECT_ERROR("IndexError", "from testing.raise");
  TnObject *call = TN_NONNULL(tn_func_get("testing.call"));
  TnAny ca[] = {tn_any_obj(add), tn_any_int(2), tn_any_int(3)};
  TN_OK(tn_func_call(call, ca, 3, &ret));
  ck_assert_int_eq(ret.v_int64, 5);
  TnObject *info = TN_NONNULL(tn_func_get("tn.type_info"));
  TnAny key = tn_any_cstr("tn.Array");
  TN_OK(tn_func_call(info, &key, 1, &ret));
  TnAny field = tn_any_cstr("type_index");
  ck_assert_int_eq(tn_map_find(ret.v_obj, &field)->v_int64, TN_TYPE_ARRAY);
  tn_any_clear(&ret);
  TnAny bad = tn_any_cstr("no.such.Type");
  ck_assert_int_eq(tn_func_call(info, &bad, 1, &ret), -1);
  TN_EXPECT_ERROR("KeyError", "no.such.Type");
  TnObject *i2k = TN_NONNULL(tn_func_get("tn.type_index_to_key"));
  TnAny idx = tn_any_int(TN_TYPE_MAP);
  TN_OK(tn_func_call(i2k, &idx, 1, &ret));
  const char *k;
  TN_OK(tn_any_as_str(&ret, &k, NULL));
  ck_assert_str_eq(k, "tn.Map");
  tn_any_clear(&ret);
  TnObject *all[] = {echo, add, raise, call, info, i2k};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("function");
  TCase *tc = tn_test_case(s, "function");
  tcase_add_test(tc, test_call_and_self_lifetime);
  tcase_add_test(tc, test_errors_propagate);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_call_after_free);
  tcase_add_test(tc, test_builtins);
  return s;
}

TN_TEST_MAIN(make_suite)
