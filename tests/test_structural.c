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
  /* skipping content: equal (and hashed alike) by dtype, shape, device */
  expect_equal(O(t1), O(t2), TN_STRUCTURAL_SKIP_TENSOR_CONTENT);
  expect_equal(O(t1), O(t2),
               TN_STRUCTURAL_SKIP_TENSOR_CONTENT | TN_STRUCTURAL_MAP_FREE_VARS);
  int64_t other[] = {3, 2};
  TnObject *t4 = TN_NONNULL(tn_tensor_empty(other, 2, f32, cpu));
  expect_differ(O(t1), O(t4), TN_STRUCTURAL_SKIP_TENSOR_CONTENT, "root");
  tn_object_release(t4);
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

/* ------------------------------------------------------------------------ */
/* Values that contain themselves                                            */
/* ------------------------------------------------------------------------ */

/* Hashing fails with a ValueError whose message has `where`. */
static void expect_hash_cycle(TnAny v, const char *where) {
  uint64_t h = 0;
  ck_assert_int_eq(tn_structural_hash(&v, 0, &h), -1);
  TN_EXPECT_ERROR("ValueError", "tn_structural_hash: ", where);
}

/* Comparing fails likewise, with and without a path asked for. */
static void expect_equal_cycle(TnAny a, TnAny b, int map_free,
                               const char *where) {
  TnObject *path = NULL;
  ck_assert_int_eq(tn_structural_equal_path(&a, &b, map_free, &path), -1);
  ck_assert_ptr_null(path);
  TN_EXPECT_ERROR("ValueError", "tn_structural_equal: ", where);
  ck_assert_int_eq(tn_structural_equal(&a, &b, map_free), -1);
  TN_EXPECT_ERROR("ValueError", "tn_structural_equal: ", where);
}

/* A new tn.List [first, itself]. */
static TnObject *self_list(int64_t first) {
  TnAny v = I(first);
  TnObject *l = TN_NONNULL(tn_list_new(&v, 1));
  TnAny self = O(l);
  TN_OK(tn_list_append(l, &self));
  return l;
}

START_TEST(test_list_contains_itself) {
  TnObject *l = self_list(1), *m = self_list(1), *n = self_list(2);
  expect_hash_cycle(O(l), "value contains itself at root[1] (the tn.List "
                          "at root)");
  expect_equal_cycle(O(l), O(m), 0, "lhs contains itself at root[1] (the "
                                    "tn.List at root)");
  /* The same object is equal to itself without a walk (as l == l is in
   * Python); mapping free variables makes it walk, and meet the cycle. */
  TnAny la = O(l);
  ck_assert_int_eq(tn_structural_equal(&la, &la, 0), 1);
  expect_equal_cycle(O(l), O(l), 1, "lhs contains itself at root[1]");
  /* A difference met before the cycle is still a difference. */
  expect_differ(O(l), O(n), 0, "root[0]");
  /* Nothing was broken: once the cycles are gone all works as before. */
  TN_OK(tn_list_pop(l, 1, NULL));
  TN_OK(tn_list_pop(m, -1, NULL));
  TN_OK(tn_list_pop(n, 1, NULL));
  expect_equal(O(l), O(m), 0);
  expect_differ(O(l), O(n), 0, "root[0]");
  TnAny two = I(2);
  TN_OK(tn_list_append(l, &two));
  ck_assert_int_eq(tn_array_size(l), 2);
  tn_object_release(l);
  tn_object_release(m);
  tn_object_release(n);
}
END_TEST

START_TEST(test_dict_contains_itself) {
  TnObject *d[3];
  for (int i = 0; i < 3; i++) {
    TnAny k = tn_any_cstr("a"), v = I(i == 2 ? 5 : 1);
    d[i] = TN_NONNULL(tn_dict_new(&k, &v, 1));
    TnAny self_key = tn_any_cstr("self"), self = O(d[i]);
    TN_OK(tn_dict_set(d[i], &self_key, &self));
  }
  expect_hash_cycle(O(d[0]), "value contains itself at root['self'] (the "
                             "tn.Dict at root)");
  expect_equal_cycle(O(d[0]), O(d[1]), 0, "lhs contains itself at "
                                          "root['self'] (the tn.Dict at root)");
  expect_differ(O(d[0]), O(d[2]), 0, "root['a']");
  for (int i = 0; i < 3; i++) {
    TnAny self_key = tn_any_cstr("self");
    TN_OK(tn_dict_erase(d[i], &self_key));
  }
  expect_equal(O(d[0]), O(d[1]), 0);
  TnAny k = tn_any_cstr("b"), v = I(2);
  TN_OK(tn_dict_set(d[0], &k, &v));
  ck_assert_int_eq(tn_map_size(d[0]), 2);
  for (int i = 0; i < 3; i++) tn_object_release(d[i]);
}
END_TEST

START_TEST(test_cycle_through_two_containers) {
  /* a = [b], b = {"back": a} */
  TnObject *a = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny key = tn_any_cstr("back"), av = O(a);
  TnObject *b = TN_NONNULL(tn_dict_new(&key, &av, 1));
  TnAny bv = O(b);
  TN_OK(tn_list_append(a, &bv));
  expect_hash_cycle(O(a), "value contains itself at root[0]['back'] (the "
                          "tn.List at root)");
  expect_hash_cycle(O(b), "value contains itself at root['back'][0] (the "
                          "tn.Dict at root)");
  /* Inside an immutable array, the repeat is named from the array. */
  TnAny items[] = {I(0), O(a)};
  TnObject *outer = TN_NONNULL(tn_array_new(items, 2));
  expect_hash_cycle(O(outer), "value contains itself at root[1][0]['back'] "
                              "(the tn.List at root[1])");
  /* Cycles of different lengths on the two sides: l = [l] against
   * r = [r1], r1 = [r]; whichever side repeats first is named. */
  TnObject *l = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny lv = O(l);
  TN_OK(tn_list_append(l, &lv));
  TnObject *r = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny rv = O(r);
  TnObject *r1 = TN_NONNULL(tn_list_new(&rv, 1));
  TnAny r1v = O(r1);
  TN_OK(tn_list_append(r, &r1v));
  expect_equal_cycle(O(l), O(r), 0, "lhs contains itself at root[0] (the "
                                    "tn.List at root)");
  expect_equal_cycle(O(r), O(l), 0, "rhs contains itself at root[0] (the "
                                    "tn.List at root)");
  /* l and [l] unfold alike: the walk meets l on both sides and stops. */
  TnObject *wrap = TN_NONNULL(tn_list_new(&lv, 1));
  TnAny wv = O(wrap);
  ck_assert_int_eq(tn_structural_equal(&lv, &wv, 0), 1);
  TN_OK(tn_dict_erase(b, &key));
  TN_OK(tn_list_clear(l));
  TN_OK(tn_list_clear(r1));
  uint64_t h;
  TnAny ov = O(outer);
  TN_OK(tn_structural_hash(&ov, 0, &h));
  TnObject *all[] = {a, b, outer, l, r, r1, wrap};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

START_TEST(test_cycle_through_node_fields) {
  /* A node whose ANY field holds the node itself... */
  TnObject *x = mk_add(I(1), I(2)), *x2 = mk_add(I(1), I(2));
  TnAny xv = O(x), x2v = O(x2);
  TN_OK(tn_node_set(x, "b", &xv));
  TN_OK(tn_node_set(x2, "b", &x2v));
  expect_hash_cycle(O(x), "value contains itself at root.b (the test.Add at "
                          "root)");
  expect_equal_cycle(O(x), O(x2), 0, "lhs contains itself at root.b");
  /* ...or a list that holds the node. */
  TnObject *y = mk_add(I(1), I(2));
  TnAny yv = O(y);
  TnObject *l = TN_NONNULL(tn_list_new(&yv, 1));
  TnAny lv = O(l);
  TN_OK(tn_node_set(y, "b", &lv));
  expect_hash_cycle(O(y), "value contains itself at root.b[0] (the test.Add "
                          "at root)");
  expect_hash_cycle(O(l), "value contains itself at root[0].b (the tn.List "
                          "at root)");
  /* DAG nodes are matched once proven equal, which a cycle never is. */
  TnObject *p = mk_pair(I(0), I(0)), *q = mk_pair(I(0), I(0));
  TnAny pv = O(p), qv = O(q);
  TN_OK(tn_node_set(p, "second", &pv));
  TN_OK(tn_node_set(q, "second", &qv));
  expect_equal_cycle(O(p), O(q), 0, "lhs contains itself at root.second "
                                    "(the test.Pair at root)");
  expect_hash_cycle(O(p), "value contains itself at root.second");
  TnAny zero = I(0);
  TN_OK(tn_node_set(x, "b", &zero));
  TN_OK(tn_node_set(x2, "b", &zero));
  TN_OK(tn_node_set(y, "b", &zero));
  TN_OK(tn_node_set(p, "second", &zero));
  TN_OK(tn_node_set(q, "second", &zero));
  expect_equal(O(x), O(y), 0);
  expect_equal(O(p), O(q), 0);
  TnObject *all[] = {x, x2, y, l, p, q};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

/* A list nested `depth` deep: [[[...[inner]...]]], where the innermost
 * list holds `n` copies of 7 and is lent out in `*inner`. */
static TnObject *nested_lists(int depth, int n, TnObject **inner) {
  TnAny sevens[] = {I(7), I(7)};
  TnObject *cur = TN_NONNULL(tn_list_new(sevens, n));
  *inner = cur;
  for (int i = 0; i < depth; i++) {
    TnAny v = O(cur);
    TnObject *next = TN_NONNULL(tn_list_new(&v, 1));
    tn_object_release(cur);
    cur = next;
  }
  return cur;
}

/* How many times `what` occurs in `s`. */
static int count_of(const char *s, const char *what) {
  int n = 0;
  for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

START_TEST(test_deep_nesting_and_deep_cycles) {
  enum { DEPTH = 100000 };
  TnObject *ia, *ib, *ic;
  TnObject *a = nested_lists(DEPTH, 1, &ia), *b = nested_lists(DEPTH, 1, &ib);
  TnObject *c = nested_lists(DEPTH, 2, &ic);
  expect_equal(O(a), O(b), 0); /* an explicit stack: no C recursion */
  TnObject *path = NULL;
  TnAny av = O(a), cv = O(c);
  ck_assert_int_eq(tn_structural_equal_path(&av, &cv, 0, &path), 0);
  ck_assert_int_eq(((TnStringObj *)path)->size, 4 + 3 * DEPTH);
  tn_object_release(path);
  uint64_t ha, hc;
  TN_OK(tn_structural_hash(&av, 0, &ha));
  TN_OK(tn_structural_hash(&cv, 0, &hc));
  ck_assert_uint_ne(ha, hc);
  /* Close a cycle at the bottom: a is met again at root[0]...[0][1]. */
  TN_OK(tn_list_append(ia, &av));
  TnAny bv = O(b);
  TN_OK(tn_list_append(ib, &bv));
  TnObject *e = NULL;
  ck_assert_int_eq(tn_structural_hash(&av, 0, &ha), -1);
  e = tn_error_take_raised();
  ck_assert_str_eq(tn_error_kind(e), "ValueError");
  ck_assert_int_eq(count_of(tn_error_message(e), "[0]"), DEPTH);
  ck_assert_ptr_nonnull(
      strstr(tn_error_message(e), "[0][1] (the tn.List at root)"));
  tn_object_release(e);
  ck_assert_int_eq(tn_structural_equal(&av, &bv, 0), -1);
  e = tn_error_take_raised();
  ck_assert_int_eq(count_of(tn_error_message(e), "[0]"), DEPTH);
  ck_assert_ptr_nonnull(strstr(tn_error_message(e), "lhs contains itself"));
  ck_assert_ptr_nonnull(
      strstr(tn_error_message(e), "[0][1] (the tn.List at root)"));
  tn_object_release(e);
  /* A cycle met after a deep acyclic part has been walked and left. */
  TnObject *self = self_list(3);
  TnAny items[] = {cv, O(self)};
  TnObject *top = TN_NONNULL(tn_list_new(items, 2));
  expect_hash_cycle(O(top), "value contains itself at root[1][1] (the tn.List "
                            "at root[1])");
  TN_OK(tn_list_pop(ia, -1, NULL));
  TN_OK(tn_list_pop(ib, -1, NULL));
  TN_OK(tn_list_pop(self, -1, NULL));
  expect_equal(O(a), O(b), 0);
  tn_object_release(a);
  tn_object_release(b);
  tn_object_release(c);
  tn_object_release(self);
  tn_object_release(top);
}
END_TEST

/* Each level holds the previous one twice: 2^depth paths, depth lists. */
static TnObject *doubling_lists(int depth, int64_t seed) {
  TnAny v = I(seed);
  TnObject *cur = TN_NONNULL(tn_list_new(&v, 1));
  for (int i = 0; i < depth; i++) {
    TnAny two[] = {O(cur), O(cur)};
    TnObject *next = TN_NONNULL(tn_list_new(two, 2));
    tn_object_release(cur);
    cur = next;
  }
  return cur;
}

START_TEST(test_shared_lists_are_not_cycles) {
  TnObject *a = doubling_lists(80, 1), *b = doubling_lists(80, 1);
  TnObject *c = doubling_lists(80, 2);
  expect_equal(O(a), O(b), 0); /* 2^80 paths: shared, memoised, no cycle */
  TnAny av = O(a), cv = O(c);
  ck_assert_int_eq(tn_structural_equal(&av, &cv, 0), 0);
  uint64_t ha, hc;
  TN_OK(tn_structural_hash(&av, 0, &ha));
  TN_OK(tn_structural_hash(&cv, 0, &hc));
  ck_assert_uint_ne(ha, hc);
  /* One list at many places, at many depths, is not a cycle either. */
  TnObject *x = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny xv = O(x);
  TnObject *nest = TN_NONNULL(tn_list_new(&xv, 1));
  for (int i = 0; i < 40; i++) {
    TnAny two[] = {xv, O(nest)};
    TnObject *next = TN_NONNULL(tn_list_new(two, 2));
    tn_object_release(nest);
    nest = next;
  }
  expect_equal(O(nest), O(nest), 1);
  tn_object_release(a);
  tn_object_release(b);
  tn_object_release(c);
  tn_object_release(x);
  tn_object_release(nest);
}
END_TEST

/* Step `i` of `steps` is (lhs kind, rhs kind, key). */
static void expect_step2(TnObject *steps, int64_t i, int lkind, int rkind,
                         TnAny key) {
  const TnAny *st = tn_array_at(steps, i);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->type_index, TN_TYPE_ARRAY);
  ck_assert_int_eq(tn_array_size(st->v_obj), 3);
  ck_assert_int_eq(tn_array_at(st->v_obj, 0)->v_int64, lkind);
  ck_assert_int_eq(tn_array_at(st->v_obj, 1)->v_int64, rkind);
  ck_assert_int_eq(tn_structural_equal(tn_array_at(st->v_obj, 2), &key, 0), 1);
}

static void expect_step(TnObject *steps, int64_t i, int kind, TnAny key) {
  expect_step2(steps, i, kind, kind, key);
}

START_TEST(test_mismatch_steps) {
  TnObject *l1 = mk_leaf(1), *l2 = mk_leaf(2);
  TnObject *a = mk_add(O(l1), O(l2)), *c = mk_add(O(l1), O(l1));
  TnAny av = O(a), cv = O(c);
  TnObject *steps = (TnObject *)1;
  /* equal: 1 and no steps */
  ck_assert_int_eq(tn_structural_mismatch(&av, &av, 0, &steps), 1);
  ck_assert_ptr_null(steps);
  /* fields: root.b.value */
  ck_assert_int_eq(tn_structural_mismatch(&av, &cv, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 2);
  expect_step(steps, 0, TN_ACCESS_ATTR, tn_any_cstr("b"));
  expect_step(steps, 1, TN_ACCESS_ATTR, tn_any_cstr("value"));
  tn_object_release(steps);
  /* an array item inside a map value: root['k'][1] */
  TnAny x3[] = {I(1), I(2), I(3)}, y3[] = {I(1), I(5), I(3)};
  TnObject *xa = TN_NONNULL(tn_array_new(x3, 3));
  TnObject *ya = TN_NONNULL(tn_array_new(y3, 3));
  TnAny k = tn_any_cstr("k"), xv = O(xa), yv = O(ya);
  TnObject *xm = TN_NONNULL(tn_map_new(&k, &xv, 1));
  TnObject *ym = TN_NONNULL(tn_map_new(&k, &yv, 1));
  TnAny xmv = O(xm), ymv = O(ym);
  ck_assert_int_eq(tn_structural_mismatch(&xmv, &ymv, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 2);
  expect_step(steps, 0, TN_ACCESS_MAP_ITEM, k);
  expect_step(steps, 1, TN_ACCESS_ARRAY_ITEM, I(1));
  tn_object_release(steps);
  /* a key the rhs lacks: the last step says so */
  TnAny k2[] = {tn_any_cstr("p"), tn_any_cstr("q")}, v2[] = {I(1), I(2)};
  TnObject *pm = TN_NONNULL(tn_map_new(k2, v2, 2));
  k2[1] = tn_any_cstr("r");
  TnObject *rm = TN_NONNULL(tn_map_new(k2, v2, 2));
  TnAny pmv = O(pm), rmv = O(rm);
  ck_assert_int_eq(tn_structural_mismatch(&pmv, &rmv, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 1);
  expect_step2(steps, 0, TN_ACCESS_MAP_ITEM, TN_ACCESS_MAP_ITEM_MISSING,
               tn_any_cstr("q"));
  tn_object_release(steps);
  /* a key the lhs lacks, maps of different sizes */
  TnObject *pm1 = TN_NONNULL(tn_map_new(k2, v2, 1));
  TnAny pm1v = O(pm1);
  ck_assert_int_eq(tn_structural_mismatch(&pm1v, &rmv, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 1);
  expect_step2(steps, 0, TN_ACCESS_MAP_ITEM_MISSING, TN_ACCESS_MAP_ITEM,
               tn_any_cstr("r"));
  tn_object_release(steps);
  ck_assert_int_eq(tn_structural_mismatch(&rmv, &pm1v, 0, &steps), 0);
  expect_step2(steps, 0, TN_ACCESS_MAP_ITEM, TN_ACCESS_MAP_ITEM_MISSING,
               tn_any_cstr("r"));
  tn_object_release(steps);
  /* sequences of different lengths: the common part first, then the
   * first item one side lacks */
  TnObject *x2 = TN_NONNULL(tn_array_new(x3, 2));
  TnAny x2v = O(x2);
  ck_assert_int_eq(tn_structural_mismatch(&x2v, &xv, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 1);
  expect_step2(steps, 0, TN_ACCESS_ARRAY_ITEM_MISSING, TN_ACCESS_ARRAY_ITEM,
               I(2));
  tn_object_release(steps);
  ck_assert_int_eq(tn_structural_mismatch(&yv, &x2v, 0, &steps), 0);
  expect_step(steps, 0, TN_ACCESS_ARRAY_ITEM, I(1)); /* 5 vs 2 comes first */
  tn_object_release(steps);
  ck_assert_int_eq(tn_structural_mismatch(&xv, &x2v, 0, &steps), 0);
  expect_step2(steps, 0, TN_ACCESS_ARRAY_ITEM, TN_ACCESS_ARRAY_ITEM_MISSING,
               I(2));
  tn_object_release(steps);
  /* the text path and plain equality are unchanged */
  ck_assert_int_eq(tn_structural_equal(&x2v, &xv, 0), 0);
  TnObject *text = NULL;
  ck_assert_int_eq(tn_structural_equal_path(&x2v, &xv, 0, &text), 0);
  ck_assert_str_eq(((TnStringObj *)text)->data, "root");
  tn_object_release(text);
  /* different at the root: no steps */
  TnAny one = I(1), two = I(2);
  ck_assert_int_eq(tn_structural_mismatch(&one, &two, 0, &steps), 0);
  ck_assert_int_eq(tn_array_size(steps), 0);
  tn_object_release(steps);
  /* bad input */
  ck_assert_int_eq(tn_structural_mismatch(NULL, &two, 0, &steps), -1);
  ck_assert_int_eq(tn_structural_mismatch(&one, &two, 0, NULL), -1);
  tn_error_set_raised(NULL);
  TnObject *all[] = {l1, l2, a, c, xa, ya, xm, ym, pm, rm, pm1, x2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tn_object_release(all[i]);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("structural");
  TCase *tc = tn_node_case(s, "structural");
  tcase_add_test(tc, test_plain_values_and_containers);
  tcase_add_test(tc, test_tensors_by_content);
  tcase_add_test(tc, test_tree_nodes_and_paths);
  tcase_add_test(tc, test_mismatch_steps);
  tcase_add_test(tc, test_dag_sharing_must_match);
  tcase_add_test(tc, test_alpha_equivalence);
  tcase_add_test(tc, test_unique_instances);
  tcase_add_test(tc, test_linear_on_heavy_sharing);
  tcase_add_test(tc, test_deep_chain_no_stack_overflow);
  tcase_add_test(tc, test_hash_agrees_with_equality);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_list_contains_itself);
  tcase_add_test(tc, test_dict_contains_itself);
  tcase_add_test(tc, test_cycle_through_two_containers);
  tcase_add_test(tc, test_cycle_through_node_fields);
  tcase_add_test(tc, test_deep_nesting_and_deep_cycles);
  tcase_add_test(tc, test_shared_lists_are_not_cycles);
  return s;
}

TN_TEST_MAIN(make_suite)
