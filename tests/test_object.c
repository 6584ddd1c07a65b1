/* test_object.c: reference counts, weak references, allocation, live counts. */
#include "config.h" /* TN_DEBUG */

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

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
  tc = tn_test_case(s, "threads");
  tcase_add_test(tc, test_refcount_race);
  tcase_add_test(tc, test_weak_upgrade_races_last_release);
  tcase_add_test(tc, test_live_count_across_threads);
  tcase_add_test(tc, test_live_count_by_type);
  return s;
}

TN_TEST_MAIN(make_suite)
