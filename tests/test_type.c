/* test_type.c: the type registry: keys, indices, inheritance, threads. */
#include <pthread.h>

#include "tn_test.h"

/* The parent of a known type, asserting the call succeeds. */
static int32_t type_parent(int32_t type_index) {
  int32_t parent = -99;
  TN_OK(tn_type_parent(type_index, &parent));
  return parent;
}

START_TEST(test_builtin_types) {
  ck_assert_int_eq(tn_type_index("tn.Object"), TN_TYPE_OBJECT);
  ck_assert_int_eq(tn_type_index("tn.Array"), TN_TYPE_ARRAY);
  ck_assert_int_eq(tn_type_index("tn.Map"), TN_TYPE_MAP);
  ck_assert_int_eq(tn_type_index("int"), TN_TYPE_INT);
  ck_assert_str_eq(tn_type_key(TN_TYPE_STRING), "tn.String");
  ck_assert_str_eq(tn_type_key(TN_TYPE_TENSOR), "tn.Tensor");
  ck_assert_str_eq(tn_type_key(TN_TYPE_SMALL_STR), "tn.SmallStr");
  ck_assert_int_eq(type_parent(TN_TYPE_STRING), TN_TYPE_OBJECT);
  ck_assert_int_eq(type_parent(TN_TYPE_OBJECT), -1);
  ck_assert_int_eq(type_parent(TN_TYPE_INT), -1);
  ck_assert_int_eq(tn_type_depth(TN_TYPE_OBJECT), 0);
  ck_assert_int_eq(tn_type_depth(TN_TYPE_DICT), 1);
  ck_assert(tn_type_is_subtype(TN_TYPE_LIST, TN_TYPE_OBJECT));
  ck_assert(!tn_type_is_subtype(TN_TYPE_LIST, TN_TYPE_ARRAY));
  ck_assert_int_ge(tn_type_count(), TN_TYPE_STATIC_OBJECT_BEGIN + 13);
}
END_TEST

START_TEST(test_register_hierarchy) {
  int32_t base = tn_type_register("test.Base", TN_TYPE_OBJECT);
  int32_t mid = tn_type_register("test.Mid", base);
  int32_t leaf = tn_type_register("test.Leaf", mid);
  int32_t other = tn_type_register("test.Other", base);
  ck_assert_int_ge(base, TN_TYPE_DYNAMIC_BEGIN);
  ck_assert_int_ne(base, mid);
  ck_assert_int_eq(tn_type_depth(leaf), 3);
  ck_assert_int_eq(type_parent(leaf), mid);
  ck_assert(tn_type_is_subtype(leaf, base));
  ck_assert(tn_type_is_subtype(leaf, TN_TYPE_OBJECT));
  ck_assert(tn_type_is_subtype(leaf, leaf));
  ck_assert(!tn_type_is_subtype(leaf, other));
  ck_assert(!tn_type_is_subtype(base, leaf));
  ck_assert(!tn_type_is_subtype(999999, base));

  /* Objects of a run-time type answer is_instance through the chain. */
  TnObject *o = TN_NONNULL(tn_object_alloc(leaf, sizeof(TnObject), NULL));
  ck_assert(tn_object_is_instance(o, mid));
  ck_assert(tn_object_is_instance(o, base));
  ck_assert(!tn_object_is_instance(o, other));
  ck_assert_str_eq(tn_object_type_key(o), "test.Leaf");
  /* A NULL deleter is static storage; give the memory back by hand. */
  tn_object_free(o);

  ck_assert_int_eq(tn_type_index("test.Leaf"), leaf);
  ck_assert_str_eq(tn_type_key(leaf), "test.Leaf");
}
END_TEST

START_TEST(test_register_twice) {
  int32_t a = tn_type_register("test.Twice", TN_TYPE_OBJECT);
  ck_assert_int_eq(tn_type_register("test.Twice", TN_TYPE_OBJECT), a);
  ck_assert_ptr_null(tn_error_peek_raised());
  int32_t count = tn_type_count();
  ck_assert_int_eq(tn_type_register("test.Twice", TN_TYPE_ARRAY), -1);
  TN_EXPECT_ERROR("ValueError", "tn_type_register", "'test.Twice'",
                  "tn.Object", "tn.Array");
  ck_assert_int_eq(tn_type_count(), count); /* nothing was added */
  ck_assert_int_eq(type_parent(a), TN_TYPE_OBJECT); /* nor changed */
  /* A plain-value key cannot be re-registered as an object type. */
  ck_assert_int_eq(tn_type_register("int", TN_TYPE_OBJECT), -1);
  TN_EXPECT_ERROR("ValueError", "'int'");
}
END_TEST

START_TEST(test_bad_input) {
  ck_assert_int_eq(tn_type_index("no.such.Type"), -1);
  TN_EXPECT_ERROR("KeyError", "tn_type_index", "'no.such.Type'");
  ck_assert_ptr_null(tn_type_key(77777));
  TN_EXPECT_ERROR("KeyError", "tn_type_key", "77777");
  ck_assert_ptr_null(tn_type_key(-3));
  TN_EXPECT_ERROR("KeyError", "-3");
  int32_t parent = 7;
  ck_assert_int_eq(tn_type_parent(55555, &parent), -1);
  ck_assert_int_eq(parent, 7); /* untouched on error */
  TN_EXPECT_ERROR("KeyError", "tn_type_parent", "55555");
  ck_assert_int_eq(tn_type_depth(55555), -1);
  TN_EXPECT_ERROR("KeyError", "tn_type_depth");
  ck_assert_int_eq(tn_type_index(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "tn_type_index", "type_key");
  ck_assert_int_eq(tn_type_register(NULL, TN_TYPE_OBJECT), -1);
  TN_EXPECT_ERROR("ValueError", "tn_type_register", "type_key");
  ck_assert_int_eq(tn_type_register("", TN_TYPE_OBJECT), -1);
  TN_EXPECT_ERROR("ValueError", "empty");
  ck_assert_int_eq(tn_type_register("test.BadParent", TN_TYPE_INT), -1);
  TN_EXPECT_ERROR("TypeError", "parent index 1", "'test.BadParent'");
  ck_assert_int_eq(tn_type_register("test.BadParent", 40000), -1);
  TN_EXPECT_ERROR("TypeError", "40000");
  ck_assert_int_eq(tn_type_index("test.BadParent"), -1);
  TN_EXPECT_ERROR("KeyError", "test.BadParent");
}
END_TEST

/* Eight threads register the same keys and their own keys at once: every
 * thread must see one index per key. */
enum { kThreads = 8, kKeys = 200 };
static int32_t g_seen[kThreads][kKeys];
static int32_t g_own[kThreads][kKeys];

static void *register_many(void *arg) {
  int id = (int)(intptr_t)arg;
  char key[64];
  for (int i = 0; i < kKeys; i++) {
    snprintf(key, sizeof key, "test.shared.%d", i);
    g_seen[id][i] = tn_type_register(key, TN_TYPE_OBJECT);
    snprintf(key, sizeof key, "test.own.%d.%d", id, i);
    g_own[id][i] = tn_type_register(key, TN_TYPE_OBJECT);
  }
  return NULL;
}

START_TEST(test_concurrent_registration) {
  pthread_t th[kThreads];
  for (int i = 0; i < kThreads; i++)
    pthread_create(&th[i], NULL, register_many, (void *)(intptr_t)i);
  for (int i = 0; i < kThreads; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < kKeys; i++) {
    ck_assert_int_ge(g_seen[0][i], TN_TYPE_DYNAMIC_BEGIN);
    for (int t = 1; t < kThreads; t++)
      ck_assert_int_eq(g_seen[t][i], g_seen[0][i]);
  }
  /* Own keys are all distinct and distinct from shared ones. */
  int32_t total = tn_type_count();
  char *used = calloc((size_t)total, 1);
  for (int i = 0; i < kKeys; i++) used[g_seen[0][i]]++;
  for (int t = 0; t < kThreads; t++)
    for (int i = 0; i < kKeys; i++) {
      ck_assert_int_ge(g_own[t][i], TN_TYPE_DYNAMIC_BEGIN);
      ck_assert_int_eq(used[g_own[t][i]]++, 0);
    }
  free(used);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("type");
  TCase *tc = tn_test_case(s, "registry");
  tcase_add_test(tc, test_builtin_types);
  tcase_add_test(tc, test_register_hierarchy);
  tcase_add_test(tc, test_register_twice);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_concurrent_registration);
  return s;
}

TN_TEST_MAIN(make_suite)
