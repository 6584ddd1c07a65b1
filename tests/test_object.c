/* test_object.c: reference counts, weak references, allocation, live counts. */
#include "config.h" /* TN_DEBUG */

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tn_test.h"

/* A type declared the way another language would: tn_object_alloc plus a
 * deleter that records what it was asked to do. */
typedef struct {
  TnObject header;
  int64_t payload;
} Probe;

static _Atomic int g_destructs, g_frees, g_both;

static void probe_deleter(TnObject *self, int flags) {
  if (flags == TN_DELETER_BOTH) atomic_fetch_add(&g_both, 1);
  if (flags & TN_DELETER_DESTRUCT) atomic_fetch_add(&g_destructs, 1);
  if (flags & TN_DELETER_FREE) {
    atomic_fetch_add(&g_frees, 1);
    tn_object_free(self);
  }
}

static int32_t probe_type(void) {
  int32_t t = tn_type_register("test.Probe", TN_TYPE_OBJECT);
  ck_assert_int_ge(t, TN_TYPE_DYNAMIC_BEGIN);
  return t;
}

static TnObject *probe_new(void) {
  g_destructs = g_frees = g_both = 0;
  return TN_NONNULL(tn_object_alloc(probe_type(), sizeof(Probe), probe_deleter));
}

START_TEST(test_retain_release_counts) {
  int64_t before = tn_object_live_count();
  TnObject *s = TN_NONNULL(tn_string_from_cstr("hello"));
  ck_assert_int_eq(tn_object_live_count(), before + 1);
  ck_assert_uint_eq(tn_object_strong_count(s), 1);
  ck_assert_uint_eq(tn_object_weak_count(s), 1);
  tn_object_retain(s);
  ck_assert_uint_eq(tn_object_strong_count(s), 2);
  tn_object_release(s);
  ck_assert_uint_eq(tn_object_strong_count(s), 1);
  tn_object_release(s);
  ck_assert_int_eq(tn_object_live_count(), before);
}
END_TEST

START_TEST(test_deleter_called_once_with_both) {
  TnObject *p = probe_new();
  Probe *pp = (Probe *)p;
  ck_assert_int_eq(pp->payload, 0); /* tn_object_alloc zeroes the body */
  tn_object_release(p);
  ck_assert_int_eq(g_both, 1);
  ck_assert_int_eq(g_destructs, 1);
  ck_assert_int_eq(g_frees, 1);
}
END_TEST

START_TEST(test_weak_reference_lifecycle) {
  int64_t before = tn_object_live_count();
  TnObject *p = probe_new();
  tn_object_weak_retain(p);
  ck_assert_uint_eq(tn_object_weak_count(p), 2);

  TnObject *up = tn_object_weak_upgrade(p);
  ck_assert_ptr_eq(up, p);
  ck_assert_uint_eq(tn_object_strong_count(p), 2);
  tn_object_release(up);

  tn_object_release(p); /* last strong: destruct, memory kept for the weak */
  ck_assert_int_eq(g_destructs, 1);
  ck_assert_int_eq(g_frees, 0);
  ck_assert_int_eq(g_both, 0);
  ck_assert_ptr_null(tn_object_weak_upgrade(p));
  ck_assert_int_eq(tn_object_live_count(), before + 1);

  tn_object_weak_release(p); /* last weak: free */
  ck_assert_int_eq(g_frees, 1);
  ck_assert_int_eq(tn_object_live_count(), before);
}
END_TEST

START_TEST(test_weak_upgrade_null_and_static) {
  ck_assert_ptr_null(tn_object_weak_upgrade(NULL));
  /* A NULL deleter marks static storage: counts move, nothing is freed. */
  static TnObject stat = {UINT64_C(0x100000001), TN_TYPE_OBJECT, 0, NULL};
  tn_object_retain(&stat);
  tn_object_release(&stat);
  tn_object_release(&stat);
  ck_assert_uint_eq(tn_object_strong_count(&stat), 0);
  tn_object_retain(&stat);
  ck_assert_uint_eq(tn_object_strong_count(&stat), 1);
}
END_TEST

START_TEST(test_null_handles_are_harmless) {
  tn_object_retain(NULL);
  tn_object_release(NULL);
  tn_object_weak_retain(NULL);
  tn_object_weak_release(NULL);
  ck_assert_uint_eq(tn_object_strong_count(NULL), 0);
  ck_assert_uint_eq(tn_object_weak_count(NULL), 0);
  ck_assert_int_eq(tn_object_is_instance(NULL, TN_TYPE_OBJECT), 0);
  ck_assert_str_eq(tn_object_type_key(NULL), "NULL");
  tn_object_free(NULL);
  ck_assert_ptr_null(tn_error_peek_raised());
}
END_TEST

START_TEST(test_alloc_bad_input) {
  ck_assert_ptr_null(tn_object_alloc(TN_TYPE_INT, 64, probe_deleter));
  TN_EXPECT_ERROR("TypeError", "tn_object_alloc", "type index 1");
  ck_assert_ptr_null(tn_object_alloc(99999, 64, probe_deleter));
  TN_EXPECT_ERROR("TypeError", "tn_object_alloc", "99999");
  ck_assert_ptr_null(tn_object_alloc(-5, 64, probe_deleter));
  TN_EXPECT_ERROR("TypeError", "tn_object_alloc", "-5");
  ck_assert_ptr_null(tn_object_alloc(probe_type(), 8, probe_deleter));
  TN_EXPECT_ERROR("ValueError", "tn_object_alloc", "size 8");
}
END_TEST

START_TEST(test_is_instance_and_type_key) {
  TnObject *p = probe_new();
  ck_assert(tn_object_is_instance(p, TN_TYPE_OBJECT));
  ck_assert(tn_object_is_instance(p, probe_type()));
  ck_assert(!tn_object_is_instance(p, TN_TYPE_STRING));
  ck_assert(!tn_object_is_instance(p, 123456));
  ck_assert_str_eq(tn_object_type_key(p), "test.Probe");
  tn_object_release(p);
}
END_TEST

/* --- threads ------------------------------------------------------------ */

enum { kThreads = 8, kIters = 100000 };

static void *hammer_refcount(void *arg) {
  TnObject *o = arg;
  for (int i = 0; i < kIters; i++) {
    tn_object_retain(o);
    tn_object_weak_retain(o);
    TnObject *u = tn_object_weak_upgrade(o);
    tn_object_release(u);
    tn_object_weak_release(o);
    tn_object_release(o);
  }
  return NULL;
}

START_TEST(test_refcount_race) {
  TnObject *p = probe_new();
  pthread_t th[kThreads];
  for (int i = 0; i < kThreads; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, hammer_refcount, p), 0);
  for (int i = 0; i < kThreads; i++) pthread_join(th[i], NULL);
  ck_assert_uint_eq(tn_object_strong_count(p), 1);
  ck_assert_uint_eq(tn_object_weak_count(p), 1);
  ck_assert_int_eq(g_destructs, 0);
  tn_object_release(p);
  ck_assert_int_eq(g_destructs, 1);
  ck_assert_int_eq(g_frees, 1);
}
END_TEST

typedef struct {
  TnObject *obj;
  _Atomic int go;
  int upgraded;
} RaceArg;

static void *upgrade_racer(void *arg) {
  RaceArg *r = arg;
  while (!atomic_load(&r->go)) {
  }
  TnObject *u = tn_object_weak_upgrade(r->obj);
  if (u) {
    r->upgraded = 1;
    /* A successful upgrade must see a live, undestroyed object. */
    ck_assert_int_eq(atomic_load(&g_destructs), 0);
    tn_object_release(u);
  }
  tn_object_weak_release(r->obj);
  return NULL;
}

/* The last strong release races a weak upgrade: exactly one destruct and
 * one free, whoever wins. */
START_TEST(test_weak_upgrade_races_last_release) {
  for (int round = 0; round < 2000; round++) {
    RaceArg r = {probe_new(), 0, 0};
    tn_object_weak_retain(r.obj);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, upgrade_racer, &r), 0);
    atomic_store(&r.go, 1);
    tn_object_release(r.obj);
    pthread_join(th, NULL);
    ck_assert_int_eq(g_destructs, 1);
    ck_assert_int_eq(g_frees, 1);
  }
}
END_TEST

static void *alloc_and_exit(void *arg) {
  TnObject **out = arg;
  out[0] = tn_string_from_cstr("made in another thread");
  TnObject *tmp = tn_string_from_cstr("freed here");
  tn_object_release(tmp);
  tn_error_raise("RuntimeError", "left in the slot at thread exit");
  return NULL;
}

/* Counts follow objects across threads, and a thread's raised error is
 * released when the thread exits. */
START_TEST(test_live_count_across_threads) {
  int64_t before = tn_object_live_count();
  TnObject *made = NULL;
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, alloc_and_exit, &made), 0);
  pthread_join(th, NULL);
  ck_assert_ptr_nonnull(made);
  ck_assert_int_eq(tn_object_live_count(), before + 1);
  tn_object_release(made);
  ck_assert_int_eq(tn_object_live_count(), before);
}
END_TEST

START_TEST(test_live_count_by_type) {
  int64_t n = tn_object_live_count_by_type(TN_TYPE_STRING);
#ifdef TN_TEST_DEBUG_BUILD
  TnObject *s = tn_string_from_cstr("x");
  ck_assert_int_eq(tn_object_live_count_by_type(TN_TYPE_STRING), n + 1);
  tn_object_release(s);
#else
  if (n < 0) {
    TN_EXPECT_ERROR("RuntimeError", "--enable-debug");
  } else {
    TnObject *s = tn_string_from_cstr("x");
    ck_assert_int_eq(tn_object_live_count_by_type(TN_TYPE_STRING), n + 1);
    tn_object_release(s);
  }
#endif
}
END_TEST

START_TEST(test_version) {
  ck_assert_int_eq(tn_abi_version(), TN_ABI_VERSION);
  ck_assert_ptr_nonnull(strchr(tn_version(), '.'));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Out of memory, through tn_debug_set_alloc_fail                            */
/* ------------------------------------------------------------------------ */

/* Arm the n-th allocation to fail; false (nothing to test) in a release
 * build, which refuses with a NotImplementedError. */
static bool fail_alloc(int64_t n) {
  if (tn_debug_set_alloc_fail(n) == 0) return true;
  TN_EXPECT_ERROR("NotImplementedError", "tn_debug_set_alloc_fail",
                  "--enable-debug");
  return false;
}

/* The raised error is a MemoryError naming `func`, and nothing is alive
 * that was not alive at `before` (the error itself is taken first). */
static void expect_oom(const char *func, int64_t before) {
  ck_assert_int_eq(tn_error_kind_code(tn_error_peek_raised()), TN_ERR_MEMORY);
  TN_EXPECT_ERROR("MemoryError", func, "out of memory");
  ck_assert_int_eq(tn_object_live_count(), before);
  tn_debug_set_alloc_fail(0);
}

static int noop_fn(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  return 0;
}

static void count_self_delete(void *self) { (*(int *)self)++; }

START_TEST(test_oom_entry_points) {
  int64_t before = tn_object_live_count();
  if (!fail_alloc(1)) return;

  ck_assert_ptr_null(tn_string_from_cstr("a string that never was"));
  expect_oom("tn_string_from_cstr", before);

  TnAny items[3] = {tn_any_int(1), tn_any_int(2), tn_any_int(3)};
  fail_alloc(1);
  ck_assert_ptr_null(tn_array_new(items, 3));
  expect_oom("tn_array_new", before);

  TnAny keys[2] = {tn_any_int(1), tn_any_int(2)};
  fail_alloc(1);
  ck_assert_ptr_null(tn_map_new(keys, items, 2));
  expect_oom("tn_map_new", before);

  int64_t shape[2] = {64, 64};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  fail_alloc(1);
  ck_assert_ptr_null(tn_tensor_empty(shape, 2, f32, cpu));
  expect_oom("tn_tensor_empty", before);

  /* A function that cannot be made still releases its context. */
  int deleted = 0;
  fail_alloc(1);
  ck_assert_ptr_null(tn_func_new(noop_fn, &deleted, count_self_delete));
  expect_oom("tn_func_new", before);
  ck_assert_int_eq(deleted, 1);

  /* Disarmed: the same calls succeed. */
  TnObject *s = TN_NONNULL(tn_string_from_cstr("fine"));
  tn_object_release(s);
  ck_assert_int_eq(tn_object_live_count(), before);
}
END_TEST

START_TEST(test_oom_growing_containers) {
  int64_t before = tn_object_live_count();
  if (!fail_alloc(1)) return;
  tn_debug_set_alloc_fail(0);
  /* A list's buffer outgrows its inline items: the growth fails, the list is
   * left as it was. */
  TnObject *list = TN_NONNULL(tn_list_new(NULL, 0));
  int64_t n = 0;
  TnAny v = tn_any_int(7);
  TN_OK(tn_debug_set_alloc_fail(1));
  while (tn_list_append(list, &v) == 0) n++;
  ck_assert_int_ge(n, 1);
  ck_assert_int_eq(tn_array_size(list), n);
  TN_EXPECT_ERROR("MemoryError", "tn_list_append");
  TN_OK(tn_list_append(list, &v));
  ck_assert_int_eq(tn_array_size(list), n + 1);
  tn_object_release(list);
  /* A map's table must grow; the failed insertion leaves the map intact. */
  TnObject *map = TN_NONNULL(tn_map_new(NULL, NULL, 0));
  TN_OK(tn_debug_set_alloc_fail(1));
  int64_t k = 0;
  for (;; k++) {
    TnAny key = tn_any_int(k);
    if (tn_map_set(&map, &key, &v)) break;
  }
  TN_EXPECT_ERROR("MemoryError", "tn_map_set");
  ck_assert_int_eq(tn_map_size(map), k);
  tn_object_release(map);
  ck_assert_int_eq(tn_object_live_count(), before);
}
END_TEST

/* Fail each allocation of a compound operation in turn: every run either
 * succeeds or raises a MemoryError, and none leaks. */
START_TEST(test_oom_sweep) {
  int64_t before = tn_object_live_count();
  if (!fail_alloc(1)) return;
  tn_debug_set_alloc_fail(0);
  bool succeeded = false;
  for (int64_t n = 1; n < 200 && !succeeded; n++) {
    TN_OK(tn_debug_set_alloc_fail(n));
    TnObject *map = tn_map_new(NULL, NULL, 0);
    int rc = map ? 0 : -1;
    for (int i = 0; rc == 0 && i < 12; i++) {
      char name[32];
      snprintf(name, sizeof name, "key-%d-long", i);
      TnObject *key = tn_string_from_cstr(name);
      TnObject *val = key ? tn_list_new(NULL, 0) : NULL;
      if (key == NULL || val == NULL) {
        rc = -1;
      } else {
        TnAny ka = tn_any_obj(key), va = tn_any_obj(val);
        rc = tn_map_set(&map, &ka, &va);
      }
      tn_object_release(key);
      tn_object_release(val);
    }
    tn_object_release(map);
    if (rc == 0) {
      succeeded = true;
    } else {
      ck_assert_int_eq(tn_error_kind_code(tn_error_peek_raised()),
                       TN_ERR_MEMORY);
      tn_error_set_raised(NULL);
    }
    ck_assert_int_eq(tn_object_live_count(), before);
  }
  tn_debug_set_alloc_fail(0);
  ck_assert(succeeded);
}
END_TEST

START_TEST(test_alloc_fail_bad_input) {
  if (!fail_alloc(0)) return;
  ck_assert_int_eq(tn_debug_set_alloc_fail(-1), -1);
  TN_EXPECT_ERROR("ValueError", "tn_debug_set_alloc_fail", "negative");
}
END_TEST

#ifdef TN_DEBUG
/* Debug builds abort on a release that finds the strong count at 0. A weak
 * reference keeps the memory, so the second release reads a live header
 * (and ASan has nothing to say before the abort). */
START_TEST(test_double_release_aborts) {
  TnObject *s = TN_NONNULL(tn_string_from_cstr("released twice"));
  tn_object_weak_retain(s);
  tn_object_release(s);
  ck_assert_uint_eq(tn_object_strong_count(s), 0);
  tn_object_release(s); /* aborts */
}
END_TEST
#endif

static Suite *make_suite(void) {
  Suite *s = suite_create("object");
  TCase *tc = tn_test_case(s, "lifecycle");
  tcase_add_test(tc, test_retain_release_counts);
  tcase_add_test(tc, test_deleter_called_once_with_both);
  tcase_add_test(tc, test_weak_reference_lifecycle);
  tcase_add_test(tc, test_weak_upgrade_null_and_static);
  tcase_add_test(tc, test_null_handles_are_harmless);
  tcase_add_test(tc, test_alloc_bad_input);
  tcase_add_test(tc, test_is_instance_and_type_key);
  tcase_add_test(tc, test_version);
#ifdef TN_DEBUG
  /* Only in a forked child (CK_FORK=no, as under valgrind, would abort the
   * whole suite). */
  const char *fork = getenv("CK_FORK");
  if (fork == NULL || strcmp(fork, "no") != 0)
    tcase_add_test_raise_signal(tc, test_double_release_aborts, SIGABRT);
#endif
  tc = tn_test_case(s, "out of memory");
  tcase_add_test(tc, test_oom_entry_points);
  tcase_add_test(tc, test_oom_growing_containers);
  tcase_add_test(tc, test_oom_sweep);
  tcase_add_test(tc, test_alloc_fail_bad_input);
  tc = tn_test_case(s, "threads");
  tcase_add_test(tc, test_refcount_race);
  tcase_add_test(tc, test_weak_upgrade_races_last_release);
  tcase_add_test(tc, test_live_count_across_threads);
  tcase_add_test(tc, test_live_count_by_type);
  return s;
}

TN_TEST_MAIN(make_suite)
