/* test_registry.c: the global function registry, alone and under threads. */
#include <pthread.h>
#include <stdatomic.h>

#include "tn_test.h"

static int const_fn(void *self, const TnAny *args, int32_t nargs,
                    TnAny *ret) {
  (void)args, (void)nargs;
  *ret = tn_any_int((int64_t)(intptr_t)self);
  return 0;
}

static TnObject *make_const(int64_t v) {
  return TN_NONNULL(tn_func_new(const_fn, (void *)(intptr_t)v, NULL));
}

static int64_t call_global(const char *name) {
  TnObject *f = tn_func_get(name);
  ck_assert_msg(f != NULL, "%s: %s", name, tn_test_raised_text());
  TnAny ret = tn_any_none();
  TN_OK(tn_func_call(f, NULL, 0, &ret));
  tn_object_release(f);
  return ret.v_int64;
}

START_TEST(test_register_get_remove) {
  TnObject *f = make_const(7);
  TN_OK(tn_func_register("test.seven", f, 0));
  ck_assert_uint_eq(tn_object_strong_count(f), 2); /* the registry's */
  ck_assert_int_eq(call_global("test.seven"), 7);
  TnObject *held = TN_NONNULL(tn_func_get("test.seven"));
  TN_OK(tn_func_unregister("test.seven"));
  /* A handle taken earlier keeps working: it owns its reference. */
  TnAny ret = tn_any_none();
  TN_OK(tn_func_call(held, NULL, 0, &ret));
  ck_assert_int_eq(ret.v_int64, 7);
  ck_assert_ptr_null(tn_func_get("test.seven"));
  TN_EXPECT_ERROR("KeyError", "tn_func_get", "'test.seven'");
  ck_assert_ptr_null(tn_func_find("test.seven"));
  ck_assert_ptr_null(tn_error_peek_raised()); /* find does not raise */
  ck_assert_int_eq(tn_func_unregister("test.seven"), -1);
  TN_EXPECT_ERROR("KeyError", "tn_func_unregister", "'test.seven'");
  /* The name can be registered again. */
  TN_OK(tn_func_register("test.seven", f, 0));
  ck_assert_int_eq(call_global("test.seven"), 7);
  TN_OK(tn_func_unregister("test.seven"));
  tn_object_release(held);
  tn_object_release(f);
}
END_TEST

START_TEST(test_override) {
  TnObject *a = make_const(1), *b = make_const(2);
  TN_OK(tn_func_register("test.over", a, 0));
  ck_assert_int_eq(tn_func_register("test.over", b, 0), -1);
  TN_EXPECT_ERROR("ValueError", "tn_func_register", "'test.over'",
                  "already registered", "override");
  ck_assert_int_eq(call_global("test.over"), 1); /* unchanged */
  ck_assert_uint_eq(tn_object_strong_count(b), 1); /* nothing kept */
  TN_OK(tn_func_register("test.over", b, 1));
  ck_assert_int_eq(call_global("test.over"), 2);
  ck_assert_uint_eq(tn_object_strong_count(a), 1); /* released */
  TN_OK(tn_func_unregister("test.over"));
  tn_object_release(a);
  tn_object_release(b);
}
END_TEST

START_TEST(test_list_and_growth) {
  char name[64];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "test.many.%04d", i);
    TnObject *f = make_const(i);
    TN_OK(tn_func_register(name, f, 0));
    tn_object_release(f);
  }
  for (int i = 0; i < 1000; i += 37) {
    snprintf(name, sizeof name, "test.many.%04d", i);
    ck_assert_int_eq(call_global(name), i);
  }
  TnObject *names = TN_NONNULL(tn_func_list());
  int64_t n = tn_array_size(names), seen = 0;
  const char *prev = "";
  for (int64_t i = 0; i < n; i++) {
    const char *s;
    TN_OK(tn_any_as_str(tn_array_at(names, i), &s, NULL));
    ck_assert_msg(strcmp(prev, s) < 0, "not sorted: %s, %s", prev, s);
    prev = s;
    if (strncmp(s, "test.many.", 10) == 0) seen++;
  }
  ck_assert_int_eq(seen, 1000);
  tn_object_release(names);
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "test.many.%04d", i);
    TN_OK(tn_func_unregister(name));
  }
  /* Removed names are not listed; built-ins are. */
  names = TN_NONNULL(tn_func_list());
  int found_nop = 0;
  for (int64_t i = 0; i < tn_array_size(names); i++) {
    const char *s;
    TN_OK(tn_any_as_str(tn_array_at(names, i), &s, NULL));
    ck_assert(strncmp(s, "test.many.", 10) != 0);
    found_nop |= strcmp(s, "testing.nop") == 0;
  }
  ck_assert(found_nop);
  tn_object_release(names);
}
END_TEST

START_TEST(test_bad_input) {
  TnObject *f = make_const(0);
  ck_assert_int_eq(tn_func_register(NULL, f, 0), -1);
  TN_EXPECT_ERROR("ValueError", "tn_func_register", "'name' is NULL");
  ck_assert_int_eq(tn_func_register("", f, 0), -1);
  TN_EXPECT_ERROR("ValueError", "empty");
  ck_assert_int_eq(tn_func_register("test.x", NULL, 0), -1);
  TN_EXPECT_ERROR("ValueError", "'func' is NULL");
  TnObject *s = TN_NONNULL(tn_string_from_cstr("not a function"));
  ck_assert_int_eq(tn_func_register("test.x", s, 0), -1);
  TN_EXPECT_ERROR("TypeError", "expected tn.Function", "got tn.String");
  ck_assert_ptr_null(tn_func_get(NULL));
  TN_EXPECT_ERROR("ValueError", "tn_func_get");
  ck_assert_ptr_null(tn_func_find(NULL));
  TN_EXPECT_ERROR("ValueError", "tn_func_find");
  ck_assert_int_eq(tn_func_unregister(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_func_unregister");
  ck_assert_ptr_null(tn_func_find("test.x"));
  tn_object_release(s);
  tn_object_release(f);
}
END_TEST

/* --- threads ------------------------------------------------------------ */

enum { kThreads = 8, kRounds = 300 };
static _Atomic int g_failures;

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  char own[64], shared[64];
  for (int r = 0; r < kRounds; r++) {
    snprintf(own, sizeof own, "test.thread.%d.%d", id, r % 16);
    snprintf(shared, sizeof shared, "test.shared.%d", r % 8);
    TnObject *f = tn_func_new(const_fn, (void *)(intptr_t)(id * 1000 + r), NULL);
    if (tn_func_register(own, f, 1) != 0) atomic_fetch_add(&g_failures, 1);
    /* Everyone overrides the shared names and reads them at once. */
    if (tn_func_register(shared, f, 1) != 0) atomic_fetch_add(&g_failures, 1);
    tn_object_release(f);
    TnObject *g = tn_func_find(shared);
    if (g) {
      TnAny ret = tn_any_none();
      if (tn_func_call(g, NULL, 0, &ret) != 0 || ret.v_int64 % 1000 >= kRounds)
        atomic_fetch_add(&g_failures, 1);
      tn_object_release(g);
    }
    TnObject *mine = tn_func_find(own);
    TnAny ret = tn_any_none();
    if (!mine || tn_func_call(mine, NULL, 0, &ret) != 0 ||
        ret.v_int64 != id * 1000 + r)
      atomic_fetch_add(&g_failures, 1);
    tn_object_release(mine);
    if (r % 5 == 0 && tn_func_unregister(own) != 0)
      atomic_fetch_add(&g_failures, 1);
    /* A global look-up of a built-in never fails under all this. */
    TnObject *nop = tn_func_get("testing.nop");
    if (!nop) atomic_fetch_add(&g_failures, 1);
    tn_object_release(nop);
  }
  return NULL;
}

START_TEST(test_eight_threads) {
  g_failures = 0;
  pthread_t th[kThreads];
  for (int i = 0; i < kThreads; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < kThreads; i++) pthread_join(th[i], NULL);
  ck_assert_int_eq(g_failures, 0);
  /* Clean up what the threads left registered. */
  char name[64];
  for (int i = 0; i < kThreads; i++)
    for (int k = 0; k < 16; k++) {
      snprintf(name, sizeof name, "test.thread.%d.%d", i, k);
      TnObject *f = tn_func_find(name);
      if (f) {
        tn_object_release(f);
        TN_OK(tn_func_unregister(name));
      }
    }
  for (int k = 0; k < 8; k++) {
    snprintf(name, sizeof name, "test.shared.%d", k);
    TN_OK(tn_func_unregister(name));
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("registry");
  TCase *tc = tn_test_case(s, "registry");
  tcase_add_test(tc, test_register_get_remove);
  tcase_add_test(tc, test_override);
  tcase_add_test(tc, test_list_and_growth);
  tcase_add_test(tc, test_bad_input);
  tc = tn_test_case(s, "threads");
  tcase_add_test(tc, test_eight_threads);
  return s;
}

TN_TEST_MAIN(make_suite)
