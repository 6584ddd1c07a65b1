/* test_structural.c: structural equality and hashing. */
#include <math.h>

#include "test_nodes.h"

static void expect_equal(TnAny a, TnAny b, int map_free) {
  TnObject *path = NULL;
  int eq = tn_structural_equal_path(&a, &b, map_free, &path);
  ck_assert_msg(eq == 1, "expected equal, differs at %s",
                path ? ((TnStringObj *)path)->data : "?");
  uint64_t ha, hb;
  TN_OK(tn_structural_hash(&a, map_free, &ha));
  TN_OK(tn_structural_hash(&b, map_free, &hb));
  ck_assert_msg(ha == hb, "equal values must hash alike");
}

/* Not equal, and the first difference is at `where`. */
static void expect_differ(TnAny a, TnAny b, int map_free, const char *where) {
  TnObject *path = NULL;
  ck_assert_int_eq(tn_structural_equal_path(&a, &b, map_free, &path), 0);
  ck_assert_ptr_nonnull(path);
  ck_assert_str_eq(((TnStringObj *)path)->data, where);
  tn_object_release(path);
  ck_assert_int_eq(tn_structural_equal(&b, &a, map_free), 0); /* symmetric */
}

START_TEST(test_plain_values_and_containers) {
  expect_equal(I(3), I(3), 0);
  expect_differ(I(3), I(4), 0, "root");
  expect_differ(I(1), tn_any_float(1.0), 0, "root"); /* not by key value */
  expect_differ(I(1), tn_any_bool(1), 0, "root");
  expect_equal(tn_any_float(NAN), tn_any_float(NAN), 0);
  expect_equal(tn_any_float(0.0), tn_any_float(-0.0), 0);
  TnObject *s = TN_NONNULL(tn_string_from_cstr("same text here"));
  expect_equal(tn_any_cstr("same text here"), O(s), 0);
  TnAny a3[] = {I(1), tn_any_cstr("x"), O(s)};
  TnAny b3[] = {I(1), tn_any_cstr("x"), tn_any_cstr("same text here")};
  TnObject *a = TN_NONNULL(tn_array_new(a3, 3));
  TnObject *b = TN_NONNULL(tn_list_new(b3, 3));
  expect_differ(O(a), O(b), 0, "root"); /* Array is not List */
  TnObject *b2 = TN_NONNULL(tn_array_new(b3, 3));
  expect_equal(O(a), O(b2), 0);
  b3[1] = tn_any_cstr("y");
  TnObject *b4 = TN_NONNULL(tn_array_new(b3, 3));
  expect_differ(O(a), O(b4), 0, "root[1]");
  /* Maps: entry order does not matter, values do. */
  TnAny k[] = {tn_any_cstr("p"), tn_any_cstr("q")}, v[] = {I(1), I(2)};
  TnAny kr[] = {tn_any_cstr("q"), tn_any_cstr("p")}, vr[] = {I(2), I(1)};
  TnObject *m1 = TN_NONNULL(tn_map_new(k, v, 2));
  TnObject *m2 = TN_NONNULL(tn_map_new(kr, vr, 2));
  expect_equal(O(m1), O(m2), 0);
  vr[0] = I(3);
  TnObject *m3 = TN_NONNULL(tn_map_new(kr, vr, 2));
  expect_differ(O(m1), O(m3), 0, "root['q']");
  int64_t dims[] = {2, 3}, dims2[] = {2, 4};
  TnObject *sh1 = TN_NONNULL(tn_shape_new(dims, 2));
  TnObject *sh2 = TN_NONNULL(tn_shape_new(dims, 2));
  TnObject *sh3 = TN_NONNULL(tn_shape_new(dims2, 2));
  expect_equal(O(sh1), O(sh2), 0);
  expect_differ(O(sh1), O(sh3), 0, "root");
  TnObject *all[] = {s, a, b, b2, b4, m1, m2, m3, sh1, sh2, sh3};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_tensors_by_content) {
  int64_t shape[] = {2, 3};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t1 = TN_NONNULL(tn_tensor_empty(shape, 2, f32, cpu));
  TnObject *t2 = TN_NONNULL(tn_tensor_empty(shape, 2, f32, cpu));
  float *d1 = tn_tensor_dltensor(t1)->data, *d2 = tn_tensor_dltensor(t2)->data;
  for (int i = 0; i < 6; i++) d1[i] = d2[i] = (float)i;
  expect_equal(O(t1), O(t2), 0);
  d2[4] = 9;
  expect_differ(O(t1), O(t2), 0, "root");
  /* A transposed view equals a compact tensor with the transposed data. */
  int64_t tshape[] = {3, 2}, tstr[] = {1, 3};
  TnObject *view = TN_NONNULL(tn_tensor_view(t1, tshape, tstr, 2, f32, 0));
  TnObject *t3 = TN_NONNULL(tn_tensor_empty(tshape, 2, f32, cpu));
  float *d3 = tn_tensor_dltensor(t3)->data;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 2; c++) d3[r * 2 + c] = d1[c * 3 + r];
  expect_equal(O(view), O(t3), 0);
  TnObject *all[] = {t1, t2, view, t3};
  for (int i = 0; i < 4; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_tree_nodes_and_paths) {
  TnObject *l1 = mk_leaf(1), *l2 = mk_leaf(2), *l1b = mk_leaf(1);
  TnObject *a = mk_add(O(l1), O(l2));
  TnObject *b = mk_add(O(l1b), O(l2));
  expect_equal(O(a), O(b), 0);
  TnObject *c = mk_add(O(l1), O(l1));
  expect_differ(O(a), O(c), 0, "root.b.value");
  /* Tree nodes: sharing does not matter (l1 twice vs two equal leaves). */
  TnObject *shared = mk_add(O(l1), O(l1));
  TnObject *copies = mk_add(O(l1), O(l1b));
  expect_equal(O(shared), O(copies), 0);
  /* A NO_SEQ field does not count; other fields do. */
  TnObject *x = TN_NONNULL(tn_node_alloc(tt.all));
  TnObject *y = TN_NONNULL(tn_node_alloc(tt.all));
  ((TAll *)y)->scratch = 99;
  expect_equal(O(x), O(y), 0);
  ((TAll *)y)->f = 0.25;
  expect_differ(O(x), O(y), 0, "root.f");
  /* Different types never compare equal. */
  TnObject *d = TN_NONNULL(tn_node_alloc(tt.derived));
  TnObject *l0 = mk_leaf(0);
  expect_differ(O(d), O(l0), 0, "root");
  TnObject *all[] = {l1, l2, l1b, a, b, c, shared, copies, x, y, d, l0};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_dag_sharing_must_match) {
  TnObject *x = mk_leaf(1), *y = mk_leaf(1), *z = mk_leaf(1);
  TnObject *p = mk_pair(O(x), I(0)), *q = mk_pair(O(y), I(0));
  TnObject *p2 = mk_pair(O(z), I(0));
  /* (p, p) shares one DAG node; (q, p2) uses two distinct but equal ones. */
  TnObject *lhs = mk_pair(O(p), O(p));
  TnObject *rhs_shared = mk_pair(O(q), O(q));
  TnObject *rhs_distinct = mk_pair(O(q), O(p2));
  expect_equal(O(lhs), O(rhs_shared), 0);
  expect_differ(O(lhs), O(rhs_distinct), 0, "root.second");
  TnObject *all[] = {x, y, z, p, q, p2, lhs, rhs_shared, rhs_distinct};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_alpha_equivalence) {
  TnObject *x = mk_var("x"), *y = mk_var("y"), *z = mk_var("z");
  TnObject *bx = mk_add(O(x), I(1)), *by = mk_add(O(y), I(1));
  TnObject *bz = mk_add(O(z), I(1));
  TnObject *fx = mk_lambda(&x, 1, O(bx));
  TnObject *fy = mk_lambda(&y, 1, O(by));
  expect_equal(O(fx), O(fy), 0); /* names differ: alpha-equivalent */
  /* lambda y: z + 1, with z free: not the same function. */
  TnObject *fyz = mk_lambda(&y, 1, O(bz));
  expect_differ(O(fx), O(fyz), 0, "root.body.a");
  /* Free variables compare by identity... */
  expect_differ(O(bx), O(by), 0, "root.a");
  expect_equal(O(bx), O(bx), 0);
  /* ...unless free variables are mapped. */
  expect_equal(O(bx), O(by), 1);
  /* Mapping is one-to-one: x + x is not y + z. */
  TnObject *xx = mk_add(O(x), O(x)), *yz = mk_add(O(y), O(z));
  expect_differ(O(xx), O(yz), 1, "root.b");
  /* Parameters in different roles: lambda x, y: x vs lambda x, y: y. */
  TnObject *xy[] = {x, y};
  TnObject *first = mk_lambda(xy, 2, O(x));
  TnObject *second = mk_lambda(xy, 2, O(y));
  expect_differ(O(first), O(second), 0, "root.body");
  /* Lets bind too: let x = 1 in x + 1  ~  let y = 1 in y + 1. */
  TnObject *lx = mk_let(x, I(1), O(bx)), *ly = mk_let(y, I(1), O(by));
  expect_equal(O(lx), O(ly), 0);
  TnObject *all[] = {x, y, z, bx, by, bz, fx, fy, fyz, xx, yz, first, second,
                     lx, ly};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_unique_instances) {
  const char *names[] = {"name"};
  TnAny n = tn_any_cstr("add");
  TnObject *op1 = TN_NONNULL(tn_node_new(tt.op, names, &n, 1));
  TnObject *op2 = TN_NONNULL(tn_node_new(tt.op, names, &n, 1));
  expect_equal(O(op1), O(op1), 0);
  expect_differ(O(op1), O(op2), 0, "root"); /* same fields, not the same op */
  uint64_t h1, h2;
  TN_OK(tn_structural_hash(&(TnAny){0}, 0, &h1)); /* None hashes fine */
  TnAny a1 = O(op1), a2 = O(op2);
  TN_OK(tn_structural_hash(&a1, 0, &h1));
  TN_OK(tn_structural_hash(&a2, 0, &h2));
  ck_assert_uint_eq(h1, h2); /* hashed by fields: stable across processes */
  tn_object_release(op1);
  tn_object_release(op2);
}
END_TEST

/* Each level adds the previous one to itself: 2^depth paths, depth nodes. */
static TnObject *doubling_dag(int depth, int64_t seed) {
  TnObject *cur = mk_leaf(seed);
  for (int i = 0; i < depth; i++) {
    TnObject *next = mk_add(O(cur), O(cur));
    tn_object_release(cur);
    cur = next;
  }
  return cur;
}

START_TEST(test_linear_on_heavy_sharing) {
  TnObject *a = doubling_dag(80, 1), *b = doubling_dag(80, 1);
  TnObject *c = doubling_dag(80, 2);
  expect_equal(O(a), O(b), 0); /* 2^80 paths: finishes only if memoised */
  TnObject *path = NULL;
  TnAny aa = O(a), cc = O(c);
  ck_assert_int_eq(tn_structural_equal_path(&aa, &cc, 0, &path), 0);
  ck_assert_ptr_nonnull(strstr(((TnStringObj *)path)->data, ".value"));
  tn_object_release(path);
  uint64_t ha, hc;
  TN_OK(tn_structural_hash(&aa, 0, &ha));
  TN_OK(tn_structural_hash(&cc, 0, &hc));
  ck_assert_uint_ne(ha, hc);
  tn_object_release(a);
  tn_object_release(b);
  tn_object_release(c);
}
END_TEST

START_TEST(test_deep_chain_no_stack_overflow) {
  enum { DEPTH = 200000 };
  TnObject *a = mk_leaf(0), *b = mk_leaf(0);
  for (int i = 0; i < DEPTH; i++) {
    TnObject *na = mk_add(O(a), I(i)), *nb = mk_add(O(b), I(i));
    tn_object_release(a);
    tn_object_release(b);
    a = na;
    b = nb;
  }
  expect_equal(O(a), O(b), 0);
  /* Change the innermost leaf: the path is 200000 ".a" long. */
  TnObject *inner = b;
  for (int i = 0; i < DEPTH; i++) inner = ((TAdd *)inner)->a.v_obj;
  ((TLeaf *)inner)->value = 5;
  TnObject *path = NULL;
  TnAny aa = O(a), bb = O(b);
  ck_assert_int_eq(tn_structural_equal_path(&aa, &bb, 0, &path), 0);
  ck_assert_int_eq(((TnStringObj *)path)->size, 4 + 2 * DEPTH + 6);
  tn_object_release(path);
  /* Release iteratively as well: unwinding a 200k chain by recursion in the
   * deleters would be the next stack overflow. */
  tn_object_release(a);
  tn_object_release(b);
}
END_TEST

START_TEST(test_hash_agrees_with_equality) {
  /* Random small expressions over two variables: whenever two are equal
   * (with free variables mapped), their hashes must agree. */
  TnObject *vars[4] = {mk_var("a"), mk_var("b"), mk_var("c"), mk_var("d")};
  TnObject *exprs[64];
  uint32_t seed = 12345;
  for (int i = 0; i < 64; i++) {
    seed = seed * 1103515245 + 12345;
    int v1 = (seed >> 8) % 4, v2 = (seed >> 12) % 4, c = (seed >> 16) % 2;
    TnObject *inner = mk_add(O(vars[v1]), I(c));
    exprs[i] = mk_add(O(inner), O(vars[v2]));
    tn_object_release(inner);
  }
  int equal_pairs = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      TnAny a = O(exprs[i]), b = O(exprs[j]);
      if (tn_structural_equal(&a, &b, 1)) {
        equal_pairs++;
        uint64_t ha, hb;
        TN_OK(tn_structural_hash(&a, 1, &ha));
        TN_OK(tn_structural_hash(&b, 1, &hb));
        ck_assert_uint_eq(ha, hb);
      }
    }
  ck_assert_int_gt(equal_pairs, 64); /* more than the diagonal */
  for (int i = 0; i < 64; i++) tn_object_release(exprs[i]);
  for (int i = 0; i < 4; i++) tn_object_release(vars[i]);
}
END_TEST

START_TEST(test_bad_input) {
  TnAny x = I(1);
  ck_assert_int_eq(tn_structural_equal(NULL, &x, 0), -1);
  TN_EXPECT_ERROR("ValueError", "'lhs' is NULL");
  ck_assert_int_eq(tn_structural_hash(&x, 0, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'out' is NULL");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("structural");
  TCase *tc = tn_node_case(s, "structural");
  tcase_add_test(tc, test_plain_values_and_containers);
  tcase_add_test(tc, test_tensors_by_content);
  tcase_add_test(tc, test_tree_nodes_and_paths);
  tcase_add_test(tc, test_dag_sharing_must_match);
  tcase_add_test(tc, test_alpha_equivalence);
  tcase_add_test(tc, test_unique_instances);
  tcase_add_test(tc, test_linear_on_heavy_sharing);
  tcase_add_test(tc, test_deep_chain_no_stack_overflow);
  tcase_add_test(tc, test_hash_agrees_with_equality);
  tcase_add_test(tc, test_bad_input);
  return s;
}

TN_TEST_MAIN(make_suite)
