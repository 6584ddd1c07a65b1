/* test_printer.c: the text printer and Graphviz export. */
#include "test_nodes.h"

static char *repr_of(TnAny v) {
  TnObject *s = TN_NONNULL(tn_repr(&v));
  char *copy = strdup(((TnStringObj *)s)->data);
  tn_object_release(s);
  return copy;
}

#define EXPECT_REPR(value, text)          \
  do {                                    \
    char *r_ = repr_of(value);            \
    ck_assert_str_eq(r_, text);           \
    free(r_);                             \
  } while (0)

START_TEST(test_plain_and_containers) {
  EXPECT_REPR(tn_any_none(), "None");
  EXPECT_REPR(tn_any_bool(1), "True");
  EXPECT_REPR(I(-3), "-3");
  EXPECT_REPR(tn_any_float(2.5), "2.5");
  EXPECT_REPR(tn_any_float(1.0), "1.0");
  EXPECT_REPR(tn_any_cstr("a \"q\"\n"), "\"a \\\"q\\\"\\n\"");
  EXPECT_REPR(tn_any_dtype((DLDataType){kDLFloat, 16, 1}), "float16");
  TnAny items[] = {I(1), tn_any_cstr("a")};
  TnObject *arr = TN_NONNULL(tn_array_new(items, 2));
  EXPECT_REPR(O(arr), "[1, \"a\"]");
  TnAny k = tn_any_cstr("k");
  TnObject *m = TN_NONNULL(tn_map_new(&k, &items[0], 1));
  EXPECT_REPR(O(m), "{\"k\": 1}");
  int64_t dims[] = {2, 3};
  TnObject *sh = TN_NONNULL(tn_shape_new(dims, 2));
  EXPECT_REPR(O(sh), "Shape(2, 3)");
  TnObject *t = TN_NONNULL(tn_tensor_empty(dims, 2, (DLDataType){kDLFloat, 32, 1},
                                           (DLDevice){kDLCPU, 0}));
  EXPECT_REPR(O(t), "Tensor(shape=(2, 3), dtype=float32, device=cpu:0)");
  TnObject *err = TN_NONNULL(tn_error_new("KeyError", "no 'x'"));
  EXPECT_REPR(O(err), "KeyError(\"no 'x'\")");
  TnObject *objs[] = {arr, m, sh, t, err};
  for (int i = 0; i < 5; i++) tn_object_release(objs[i]);
}
END_TEST

START_TEST(test_nodes_and_sharing) {
  TnObject *leaf = mk_leaf(1);
  EXPECT_REPR(O(leaf), "test.Leaf(value=1)");
  TnObject *x = mk_var("x");
  EXPECT_REPR(O(x), "test.Var(name=\"x\", annotation=None)");
  /* A node reached twice is printed once and then referred to. */
  TnObject *twice = mk_add(O(leaf), O(leaf));
  EXPECT_REPR(O(twice), "test.Add(a=#1=test.Leaf(value=1), b=#1)");
  /* Shared only outside the graph: printed plainly. */
  TnObject *once = mk_add(O(leaf), I(2));
  EXPECT_REPR(O(once), "test.Add(a=test.Leaf(value=1), b=2)");
  TnObject *objs[] = {leaf, x, twice, once};
  for (int i = 0; i < 4; i++) tn_object_release(objs[i]);
}
END_TEST

START_TEST(test_deep_nesting_is_cut) {
  TnObject *cur = mk_leaf(0);
  for (int i = 0; i < 1000; i++) {
    TnObject *next = mk_add(O(cur), I(i));
    tn_object_release(cur);
    cur = next;
  }
  char *r = repr_of(O(cur));
  ck_assert_ptr_nonnull(strstr(r, "..."));
  ck_assert_ptr_null(strstr(r, "test.Leaf"));
  free(r);
  tn_object_release(cur);
}
END_TEST

/* A custom printer for test.Op, set as the "__repr__" type attribute. */
static int op_repr(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self, (void)nargs;
  TOp *op = (TOp *)args[0].v_obj;
  if (strcmp(((TnStringObj *)op->name)->data, "broken") == 0)
    return tn_error_raise("RuntimeError", "cannot print this one");
  char buf[64];
  snprintf(buf, sizeof buf, "Op(%s)", ((TnStringObj *)op->name)->data);
  TnAny raw = tn_any_cstr(buf);
  return tn_any_to_owned(ret, &raw);
}

/* Attribute values live until exit, so the printer is set before the
 * fixture takes its count. */
static void printer_setup(void) {
  test_nodes_register();
  if (tn_type_attr_get("__repr__", tt.op) == NULL) {
    TnObject *f = tn_func_new(op_repr, NULL, NULL);
    TnAny fv = tn_any_obj(f);
    tn_type_attr_set("__repr__", tt.op, &fv);
    tn_object_release(f);
  }
  tn_test_setup();
}

START_TEST(test_custom_repr) {
  const char *names[] = {"name"};
  TnAny n = tn_any_cstr("add");
  TnObject *op = TN_NONNULL(tn_node_new(tt.op, names, &n, 1));
  TnObject *call = mk_add(O(op), I(1));
  EXPECT_REPR(O(call), "test.Add(a=Op(add), b=1)");
  TnAny bn = tn_any_cstr("broken");
  TnObject *bad = TN_NONNULL(tn_node_new(tt.op, names, &bn, 1));
  EXPECT_REPR(O(bad), "<test.Op: __repr__ failed: cannot print this one>");
  ck_assert_ptr_null(tn_error_peek_raised());
  tn_object_release(bad);
  tn_object_release(call);
  tn_object_release(op);
}
END_TEST

START_TEST(test_dot) {
  TnObject *leaf = mk_leaf(1);
  TnObject *add = mk_add(O(leaf), O(leaf));
  TnAny v = O(add);
  TnObject *dot = TN_NONNULL(tn_to_dot(&v));
  const char *d = ((TnStringObj *)dot)->data;
  ck_assert_ptr_nonnull(strstr(d, "digraph tvmnode {"));
  ck_assert_ptr_nonnull(strstr(d, "n0 [label=\"test.Add\"]"));
  ck_assert_ptr_nonnull(strstr(d, "n0 -> n1 [label=\"a\"]"));
  ck_assert_ptr_nonnull(strstr(d, "n0 -> n1 [label=\"b\"]")); /* shared: n1 */
  ck_assert_ptr_nonnull(strstr(d, "n1 [label=\"test.Leaf\\nvalue=1\"]"));
  ck_assert_ptr_null(strstr(d, "n2"));
  tn_object_release(dot);
  TnAny s = tn_any_cstr("just a \"string\"");
  dot = TN_NONNULL(tn_to_dot(&s));
  /* The repr "just a \"string\"" escaped once more for DOT. */
  ck_assert_ptr_nonnull(strstr(((TnStringObj *)dot)->data,
                               "n0 [label=\"\\\"just a \\\\\\\"string"
                               "\\\\\\\"\\\"\"];"));
  tn_object_release(dot);
  tn_object_release(add);
  tn_object_release(leaf);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("printer");
  TCase *tc = tn_node_case(s, "printer");
  tcase_add_test(tc, test_plain_and_containers);
  tcase_add_test(tc, test_nodes_and_sharing);
  tcase_add_test(tc, test_deep_nesting_is_cut);
  tcase_add_test(tc, test_dot);
  tc = tcase_create("custom");
  tcase_add_checked_fixture(tc, printer_setup, tn_test_teardown);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_custom_repr);
  return s;
}

TN_TEST_MAIN(make_suite)
