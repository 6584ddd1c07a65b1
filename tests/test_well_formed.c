/*
 * test_well_formed.c: typed containers in reflection, the well-formedness
 * check (tn_ir_well_formed), the JSON loader running it on every IRModule,
 * and InferType deriving types again instead of trusting saved ones.
 *
 * The hostile graphs are written by hand as JSON: each is a small module
 * that the loader accepted before these checks and that then corrupted
 * memory or gave wrong answers further down.
 */
#include "ir_test.h"

#include "models/mlperf_tiny.h"

/* A JSON graph document around `nodes` whose root is the last node. */
static char *doc(const char *nodes, int root) {
  return g_strdup_printf("{\"tvmnode.json\": 1, \"root\": {\"$node\": %d}, "
                         "\"nodes\": [%s]}", root, nodes);
}

/* Load `nodes` (root: node `root`); expect a failure whose message has
 * every one of the NULL-terminated parts. */
static void expect_rejected(const char *nodes, int root, const char *kind,
                            ...) {
  char *text = doc(nodes, root);
  TnAny out;
  int rc = tn_json_load(text, strlen(text), &out);
  g_free(text);
  if (rc == 0) tn_any_clear(&out);
  ck_assert_msg(rc == -1, "a hostile graph loaded");
  TnObject *e = tn_error_take_raised();
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(tn_error_kind(e), kind);
  va_list ap;
  va_start(ap, kind);
  for (const char *p = va_arg(ap, const char *); p; p = va_arg(ap, const char *))
    ck_assert_msg(strstr(tn_error_message(e), p), "'%s' not in '%s'", p,
                  tn_error_message(e));
  va_end(ap);
  tn_object_release(e);
}

static TnObject *run_pass(const char *name, TnObject *mod) {
  TnObject *out = tn_pass_run(K(tn_pass_get(name)), mod, NULL);
  ck_assert_msg(out != NULL, "%s failed: %s", name, tn_test_raised_text());
  return K(out);
}

static TnObject *load(const char *nodes, int root) {
  char *text = doc(nodes, root);
  TnAny out;
  int rc = tn_json_load(text, strlen(text), &out);
  g_free(text);
  ck_assert_msg(rc == 0, "load failed: %s", tn_test_raised_text());
  return K(out.v_obj);
}

/* fn (%x: Tensor[(1,), float32]) { nn.relu(%x) }: nodes 0..9, with the
 * pieces a test replaces as printf arguments. */
#define SHAPE1 "{\"type\": \"tn.Shape\", \"dims\": [1]}"
#define TYPE1(shape) \
  "{\"type\": \"ir.TensorType\", \"fields\": {\"shape\": {\"$node\": " shape \
  "}, \"dtype\": {\"$dtype\": \"float32\"}}}"
#define VARX                                                           \
  "{\"type\": \"ir.Var\", \"fields\": {\"name_hint\": \"x\", "          \
  "\"type_annotation\": {\"$node\": 1}, \"checked_type\": {\"$node\": 1}}}"
#define ARR(items) "{\"type\": \"tn.Array\", \"items\": [" items "]}"
#define OP(name) "{\"type\": \"ir.Op\", \"fields\": {\"name\": \"" name "\"}}"
static const char *relu_module =
    SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}") "," OP("nn.relu")
    ",{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
    "{\"$node\": 3}, \"checked_type\": {\"$node\": 1}}},"
    "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 3}, "
    "\"body\": {\"$node\": 5}}},"
    "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 6}]]},"
    "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 7}}}";

START_TEST(test_hand_written_module_loads) {
  TnObject *mod = load(relu_module, 8);
  ck_assert_int_eq(tn_ir_well_formed(mod), 0);
  ck_assert_str_eq(astext(mod, 0),
                   "def @main(%x: Tensor[(1,), float32]) {\n"
                   "  nn.relu(%x) /* ty=Tensor[(1,), float32] */\n}\n");
}
END_TEST

/* ---- typed containers ------------------------------------------------------ */

START_TEST(test_params_array_of_integers) {
  /* finding 2: ir.Function.params holding an integer */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("7") ","
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 3}, "
      "\"body\": {\"$node\": 2}}}",
      4, "ValueError", "params", "field 'params' of "
      "ir.Function expects tn.Array<ir.Var>: element 0 is int", NULL);
  /* the same through the generic constructor and setter */
  TnAny items[1] = {tn_any_int(7)};
  TnObject *arr = K(tn_array_new(items, 1));
  const char *names[] = {"params", "body"};
  TnAny values[] = {tn_any_obj(arr),
                    tn_any_obj(var("x", tt("float32", 1, 1)))};
  ck_assert_ptr_null(tn_node_new(tn_ir_types()->function, names, values, 2));
  TN_EXPECT_ERROR("TypeError", "params", "tn.Array<ir.Var>", "element 0 is "
                  "int");
}
END_TEST

START_TEST(test_call_arguments_of_the_wrong_kind) {
  /* a call whose argument is a type, not an expression */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 1}") ","
      OP("nn.relu") ",{\"type\": \"ir.Call\", \"fields\": {\"op\": "
      "{\"$node\": 4}, \"args\": {\"$node\": 3}}}",
      5, "ValueError", "field 'args' of ir.Call expects tn.Array<ir.Expr>: "
      "element 0 is ir.TensorType", NULL);
  /* module functions must be functions, keyed by name */
  expect_rejected(SHAPE1 "," TYPE1("0") "," VARX ","
                  "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 2}]]},"
                  "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": "
                  "{\"$node\": 3}}}",
                  4, "ValueError", "tn.Map<tn.String, ir.Function>",
                  "entry 0 has a value ir.Var", NULL);
  expect_rejected("{\"type\": \"tn.Map\", \"items\": [[3, null]]},"
                  "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": "
                  "{\"$node\": 0}}}",
                  1, "ValueError", "entry 0 has a key int", NULL);
}
END_TEST

START_TEST(test_typed_field_declarations) {
  /* registration parses and checks the element types */
  typedef struct {
    TnObject header;
    TnObject *items;
  } Holder;
  const char *bad[] = {"tn.Array<no.SuchType>", "tn.Array<ir.Var",
                       "tn.List<ir.Var>",        "tn.Map<ir.Var>",
                       "tn.Array<ir.Var, ir.Var>", "tn.Shape<int>",
                       "tn.Array<tn.Array<ir.Var>>"};
  const char *why[] = {"unknown type 'no.SuchType'", "does not end with '>'",
                       "only tn.Array<T> and tn.Map<K, V>", "needs 2 element",
                       "needs 1 element", "only tn.Array<T>",
                       "unknown type"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    TnFieldDesc f[] = {TN_FIELD_OBJ(Holder, items, bad[i], 0, NULL)};
    char key[32];
    g_snprintf(key, sizeof key, "test.Holder%zu", i);
    TnNodeDesc d = {key, TN_TYPE_OBJECT, TN_NODE_TREE, 0, sizeof(Holder), f,
                    1, NULL, NULL};
    ck_assert_int_eq(tn_node_register(&d), -1);
    TN_EXPECT_ERROR("ValueError", "tn_node_register", why[i]);
    ck_assert_int_lt(tn_type_index(key), 0);
    tn_error_set_raised(NULL);
  }
  /* element kinds: ints, floats (ints too) and strings in either form */
  TnFieldDesc f[] = {TN_FIELD_OBJ(Holder, items, "tn.Map<tn.String, float>",
                                  TN_FIELD_OPTIONAL, NULL)};
  TnNodeDesc d = {"test.FloatHolder", TN_TYPE_OBJECT, TN_NODE_TREE, 0,
                  sizeof(Holder), f, 1, NULL, NULL};
  int32_t t = tn_node_register(&d);
  ck_assert_int_gt(t, 0);
  TnObject *h = K(tn_node_alloc(t));
  TnAny keys[] = {tn_any_cstr("a"), tn_any_cstr("a long key")};
  TnAny vals[] = {tn_any_int(1), tn_any_float(2.5)};
  TnAny m = tn_any_obj(K(tn_map_new(keys, vals, 2)));
  TN_OK(tn_node_set(h, "items", &m));
  vals[1] = tn_any_cstr("text");
  TnAny m2 = tn_any_obj(K(tn_map_new(keys, vals, 2)));
  ck_assert_int_eq(tn_node_set(h, "items", &m2), -1);
  TN_EXPECT_ERROR("TypeError", "expects tn.Map<tn.String, float>: entry 1 "
                  "has a value");
  /* unchanged on failure */
  TnAny got;
  TN_OK(tn_node_get(h, "items", &got));
  ck_assert_ptr_eq(got.v_obj, m.v_obj);
  tn_any_clear(&got);
  /* the declared type is what reflection reports */
  ck_assert_str_eq(tn_type_field_at(tn_ir_types()->function, 1)->type_key,
                   "tn.Array<ir.Var>");
}
END_TEST

/* ---- the well-formedness check -------------------------------------------- */

START_TEST(test_saved_type_that_lies_about_a_constant) {
  /* finding 2: a constant of 2 float32 whose saved type says 8; FoldConstant
   * used to trust it and write 32 bytes into the 8-byte tensor */
  expect_rejected(
      "{\"type\": \"tn.Shape\", \"dims\": [8]}," TYPE1("0") ","
      "{\"type\": \"tn.Tensor\", \"dtype\": \"float32\", \"shape\": [2], "
      "\"data\": \"AACAPwAAgD8=\"},"
      "{\"type\": \"ir.Constant\", \"fields\": {\"data\": {\"$node\": 2}, "
      "\"checked_type\": {\"$node\": 1}}}," OP("exp") "," ARR("{\"$node\": 3}")
      ",{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
      "{\"$node\": 5}, \"checked_type\": {\"$node\": 1}}},"
      "{\"type\": \"tn.Array\", \"items\": []},"
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 7}, "
      "\"body\": {\"$node\": 6}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 8}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 9}}}",
      10, "ValueError", "@main", "saved type Tensor[(8,), float32] of a "
      "constant is wrong: inference gives Tensor[(2,), float32]", NULL);
  /* a dtype lie on a parameter's use: the call's saved type is int8 */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}") ","
      OP("nn.relu") ",{\"type\": \"ir.TensorType\", \"fields\": {\"shape\": "
      "{\"$node\": 0}, \"dtype\": {\"$dtype\": \"int8\"}}},"
      "{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
      "{\"$node\": 3}, \"checked_type\": {\"$node\": 5}}},"
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 3}, "
      "\"body\": {\"$node\": 6}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 7}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 8}}}",
      9, "ValueError", "saved type Tensor[(1,), int8] of a call of nn.relu is "
      "wrong", NULL);
}
END_TEST

START_TEST(test_attrs_missing_or_of_the_wrong_type) {
  /* finding 2: nn.bias_add with its attrs left out */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}, {\"$node\": 2}")
      "," OP("nn.bias_add") ",{\"type\": \"ir.Call\", \"fields\": {\"op\": "
      "{\"$node\": 4}, \"args\": {\"$node\": 3}}}," ARR("{\"$node\": 2}") ","
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 6}, "
      "\"body\": {\"$node\": 5}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 7}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 8}}}",
      9, "ValueError", "@main", "nn.bias_add needs attrs of type "
      "ir.BiasAddAttrs, the call has none", NULL);
  /* attrs of another operator's type */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}") ","
      OP("nn.relu") ",{\"type\": \"ir.SoftmaxAttrs\", \"fields\": {}},"
      "{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
      "{\"$node\": 3}, \"attrs\": {\"$node\": 5}}},"
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 3}, "
      "\"body\": {\"$node\": 6}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 7}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 8}}}",
      9, "ValueError", "nn.relu takes no attributes", NULL);
}
END_TEST

START_TEST(test_arity_and_untyped_parts) {
  /* nn.relu with two arguments */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}, {\"$node\": 2}")
      "," OP("nn.relu") ",{\"type\": \"ir.Call\", \"fields\": {\"op\": "
      "{\"$node\": 4}, \"args\": {\"$node\": 3}}}," ARR("{\"$node\": 2}") ","
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 6}, "
      "\"body\": {\"$node\": 5}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 7}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 8}}}",
      9, "ValueError", "nn.relu takes 1 argument, the call has 2", NULL);
  /* finding 2: a squeeze whose type is missing under a typed call; the
   * saved type of the exp is node %d: () is the truth, (1,) a lie */
  const char *squeeze =
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}") ","
      OP("squeeze") ",{\"type\": \"ir.SqueezeAttrs\", \"fields\": {}},"
      "{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
      "{\"$node\": 3}, \"attrs\": {\"$node\": 5}}}," ARR("{\"$node\": 6}") ","
      OP("exp") ",{\"type\": \"tn.Shape\", \"dims\": []},"
      "{\"type\": \"ir.TensorType\", \"fields\": {\"shape\": {\"$node\": 9}, "
      "\"dtype\": {\"$dtype\": \"float32\"}}},"
      "{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 8}, \"args\": "
      "{\"$node\": 7}, \"checked_type\": {\"$node\": %d}}},"
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 3}, "
      "\"body\": {\"$node\": 11}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 12}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 13}}}";
  char *lie = g_strdup_printf(squeeze, 1);
  expect_rejected(lie, 14, "ValueError", "the saved type Tensor[(1,), float32] "
                  "of a call of exp is wrong: inference gives Tensor[(), "
                  "float32]", NULL);
  g_free(lie);
  /* the truth loads (the check derives the squeeze's type), and every
   * pass takes it */
  char *truth = g_strdup_printf(squeeze, 10);
  TnObject *mod = load(truth, 14);
  g_free(truth);
  const char *passes[] = {"InferType", "SimplifyExpr", "FoldConstant",
                          "FuseOps", "DeadCodeElimination"};
  for (size_t i = 0; i < G_N_ELEMENTS(passes); i++)
    TN_OK(tn_ir_well_formed(run_pass(passes[i], mod)));
  TnObject *typed = run_pass("InferType", mod);
  TnIrCall *e = (TnIrCall *)((TnIrFunction *)main_of(typed))->body;
  ck_assert_type(tn_array_at(e->args, 0)->v_obj, "Tensor[(), float32]");
  /* an ill-typed call under untyped parents: the text could not even
   * write it, so the check refuses it */
  expect_rejected(
      SHAPE1 "," TYPE1("0") "," VARX "," ARR("{\"$node\": 2}, {\"$node\": 2}")
      "," OP("nn.dense") ",{\"type\": \"ir.DenseAttrs\", \"fields\": {}},"
      "{\"type\": \"ir.Call\", \"fields\": {\"op\": {\"$node\": 4}, \"args\": "
      "{\"$node\": 3}, \"attrs\": {\"$node\": 5}}}," ARR("{\"$node\": 2}") ","
      "{\"type\": \"ir.Function\", \"fields\": {\"params\": {\"$node\": 7}, "
      "\"body\": {\"$node\": 6}}},"
      "{\"type\": \"tn.Map\", \"items\": [[\"main\", {\"$node\": 8}]]},"
      "{\"type\": \"ir.IRModule\", \"fields\": {\"functions\": {\"$node\": 9}}}",
      10, "ValueError", "@main: a call of nn.dense does not type", NULL);
}
END_TEST

START_TEST(test_scoping) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *x = var("x", t), *y = var("y", t), *v = var("v", t);
  /* a free variable in a module function */
  TnObject *f = K(tn_ir_function(&x, 1, CALL("add", 2, x, y), NULL, NULL));
  TnObject *mod = K(tn_ir_module_with(K(tn_ir_module_new()), "main", f));
  ck_assert_int_eq(tn_ir_well_formed(mod), -1);
  TN_EXPECT_ERROR("ValueError", "@main", "%y is used where it is not defined");
  /* ... but an open expression may have free variables */
  TN_OK(tn_ir_well_formed(CALL("add", 2, x, y)));
  /* a let whose value uses its own variable */
  TnObject *l = K(tn_ir_let(v, CALL("exp", 1, v), v));
  f = K(tn_ir_function(&x, 1, l, NULL, NULL));
  ck_assert_int_eq(tn_ir_well_formed(f), -1);
  TN_EXPECT_ERROR("ValueError", "%v is used in its own definition");
  /* a variable bound twice */
  l = K(tn_ir_let(x, CALL("exp", 1, y), x));
  TnObject *ps[] = {x, y};
  f = K(tn_ir_function(ps, 2, l, NULL, NULL));
  ck_assert_int_eq(tn_ir_well_formed(f), -1);
  TN_EXPECT_ERROR("ValueError", "%x is bound twice");
  /* used outside the let that binds it */
  l = K(tn_ir_let(v, CALL("exp", 1, x), v));
  f = K(tn_ir_function(&x, 1, CALL("add", 2, l, v), NULL, NULL));
  ck_assert_int_eq(tn_ir_well_formed(f), -1);
  TN_EXPECT_ERROR("ValueError", "%v is used where it is not defined");
  /* a well-formed let chain */
  l = K(tn_ir_let(v, CALL("exp", 1, x), CALL("add", 2, v, v)));
  TN_OK(tn_ir_well_formed(K(tn_ir_function(&x, 1, l, NULL, NULL))));
  /* not IR at all */
  ck_assert_int_eq(tn_ir_well_formed(t), -1);
  TN_EXPECT_ERROR("TypeError", "tn_ir_well_formed", "ir.TensorType");
  ck_assert_int_eq(tn_ir_well_formed(NULL), -1);
  tn_error_set_raised(NULL);
}
END_TEST

START_TEST(test_calls_of_global_functions) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *a = var("a", t), *x = var("x", t), *z = var("z", t);
  TnObject *helper = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *gv = K(tn_ir_global_var("helper"));
  TnObject *args[] = {x, z};
  TnObject *two = K(tn_ir_call(gv, args, 2, NULL));
  TnObject *ps[] = {x, z};
  TnObject *mod = K(tn_ir_module_with(K(tn_ir_module_new()), "helper", helper));
  TnObject *bad = K(tn_ir_module_with(
      mod, "main", K(tn_ir_function(ps, 2, two, NULL, NULL))));
  ck_assert_int_eq(tn_ir_well_formed(bad), -1);
  TN_EXPECT_ERROR("ValueError", "@main", "@helper takes 1 arguments, the "
                  "call has 2");
  TnObject *missing = K(tn_ir_call(K(tn_ir_global_var("nowhere")), &x, 1, NULL));
  bad = K(tn_ir_module_with(mod, "main",
                            K(tn_ir_function(&x, 1, missing, NULL, NULL))));
  ck_assert_int_eq(tn_ir_well_formed(bad), -1);
  TN_EXPECT_ERROR("ValueError", "a call of @nowhere, which the module does "
                  "not have");
  TnObject *good = K(tn_ir_module_with(
      mod, "main", K(tn_ir_function(&x, 1, K(tn_ir_call(gv, &x, 1, NULL)),
                                    NULL, NULL))));
  TN_OK(tn_ir_well_formed(good));
  TN_OK(tn_ir_well_formed(run_pass("InferType", good)));
}
END_TEST

START_TEST(test_tuple_items_of_values_that_are_not_tuples) {
  /* found by fuzz_ir_pipeline: item 0 of a global function passed the
   * check (a global has no type of its own) and printed as "@helper.0",
   * which reads back as a global named "helper.0" */
  TnObject *t = tt("float32", 1, 4);
  TnObject *a = var("a", t), *x = var("x", t);
  TnObject *helper = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *mod = K(tn_ir_module_with(K(tn_ir_module_new()), "helper", helper));
  TnObject *item = K(tn_ir_tuple_get_item(K(tn_ir_global_var("helper")), 0));
  TnObject *pair[] = {x, item};
  TnObject *body = K(tn_ir_tuple(pair, 2));
  TnObject *bad = K(tn_ir_module_with(
      mod, "main", K(tn_ir_function(&x, 1, body, NULL, NULL))));
  ck_assert_int_eq(tn_ir_well_formed(bad), -1);
  TN_EXPECT_ERROR("ValueError", "@main", "item 0 of a global function, which "
                  "is not a tuple");
  /* a function literal, even one without types */
  TnObject *u = var("u", NULL);
  TnObject *untyped = K(tn_ir_function(&u, 1, u, NULL, NULL));
  pair[1] = K(tn_ir_tuple_get_item(untyped, 1));
  ck_assert_int_eq(
      tn_ir_well_formed(K(tn_ir_function(&x, 1, K(tn_ir_tuple(pair, 2)), NULL,
                                         NULL))),
      -1);
  TN_EXPECT_ERROR("ValueError", "item 1 of a function, which is not a tuple");
}
END_TEST

START_TEST(test_function_code_is_not_shared_between_module_functions) {
  /* found by fuzz_ir_pipeline: @f also used as a nested function of @main
   * prints as two functions, which read back as two */
  TnObject *t = tt("float32", 1, 4);
  TnObject *a = var("a", t), *x = var("x", t);
  TnObject *f = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *call = K(tn_ir_call(f, &x, 1, NULL));
  TnObject *mod = K(tn_ir_module_with(K(tn_ir_module_new()), "f", f));
  TnObject *bad = K(tn_ir_module_with(
      mod, "main", K(tn_ir_function(&x, 1, call, NULL, NULL))));
  ck_assert_int_eq(tn_ir_well_formed(bad), -1);
  TN_EXPECT_ERROR("ValueError", "@main", "%a is bound in @f too");
  /* one function under two names */
  ck_assert_int_eq(tn_ir_well_formed(K(tn_ir_module_with(mod, "g", f))), -1);
  TN_EXPECT_ERROR("ValueError", "@g", "%a is bound in @f too");
  /* calling it by name is the way */
  TnObject *by_name = K(tn_ir_call(K(tn_ir_global_var("f")), &x, 1, NULL));
  TN_OK(tn_ir_well_formed(K(tn_ir_module_with(
      mod, "main", K(tn_ir_function(&x, 1, by_name, NULL, NULL))))));
}
END_TEST

START_TEST(test_every_model_is_well_formed) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *mod = K(tn_model_build(*n));
    ck_assert_msg(tn_ir_well_formed(mod) == 0, "%s: %s", *n,
                  tn_test_raised_text());
    const char *passes[] = {"InferType", "SimplifyExpr", "FoldConstant",
                            "FuseOps", "DeadCodeElimination"};
    TnObject *cur = mod;
    for (size_t i = 0; i < G_N_ELEMENTS(passes); i++) {
      cur = run_pass(passes[i], cur);
      ck_assert_msg(tn_ir_well_formed(cur) == 0, "%s after %s: %s", *n,
                    passes[i], tn_test_raised_text());
    }
    /* and through JSON, which runs the check on load */
    TnAny m = tn_any_obj(cur), back;
    TnObject *text = K(tn_json_save(&m, 0));
    TN_OK(tn_json_load(((TnStringObj *)text)->data,
                       (size_t)((TnStringObj *)text)->size, &back));
    ck_assert_sequal(cur, back.v_obj);
    tn_any_clear(&back);
  }
}
END_TEST

/* ---- InferType does not trust saved types ----------------------------------- */

START_TEST(test_infer_type_derives_saved_types_again) {
  TnObject *t = tt("float32", 2, 2, 4), *wrong = tt("int8", 1, 8);
  TnObject *x = var("x", t);
  TnObject *call = CALL("exp", 1, x);
  TnObject *mod = module_of(call);
  /* a binding sets a lying type on the call and on a constant */
  TnAny w = tn_any_obj(wrong);
  TN_OK(tn_node_set(call, "checked_type", &w));
  TnObject *out = run_pass("InferType", mod);
  ck_assert_type(((TnIrFunction *)main_of(out))->body,
                 "Tensor[(2, 4), float32]");
  ck_assert_type(main_of(out), "fn (Tensor[(2, 4), float32]) -> "
                               "Tensor[(2, 4), float32]");
  TN_OK(tn_ir_well_formed(out));
  /* the lie is still on the input, and the check names it */
  ck_assert_int_eq(tn_ir_well_formed(mod), -1);
  TN_EXPECT_ERROR("ValueError", "saved type Tensor[(8,), int8] of a call of "
                  "exp is wrong");

  TnObject *c = K(tn_ir_scalar(1.0, ir_dtype("float32")));
  TnObject *sum = CALL("add", 2, x, c);
  TN_OK(tn_node_set(c, "checked_type", &w));
  out = run_pass("InferType", module_of(sum));
  ck_assert_type(((TnIrFunction *)main_of(out))->body,
                 "Tensor[(2, 4), float32]");
  TN_OK(tn_ir_well_formed(out));
  /* a parameter whose type is not its annotation */
  TnObject *p = var("p", t);
  TnObject *use = CALL("exp", 1, p);
  TN_OK(tn_node_set(p, "checked_type", &w));
  out = run_pass("InferType", module_of(use));
  ck_assert_type(((TnIrFunction *)main_of(out))->body,
                 "Tensor[(2, 4), float32]");
}
END_TEST

START_TEST(test_kernels_never_trust_a_lying_type) {
  /* finding 2 from a binding: a constant of 2 floats told it holds 8, after
   * the call over it was built; FoldConstant and the executor must not
   * size buffers from the lie */
  float two[] = {1.0f, 2.0f};
  TnObject *c = fconst(two, 1, 2);
  TnObject *e = CALL("exp", 1, c);
  TnAny w = tn_any_obj(tt("float32", 1, 8));
  TN_OK(tn_node_set(c, "checked_type", &w));
  TnObject *mod = module_of(e);
  /* FoldConstant requires InferType, which derives the type again */
  TnObject *folded = run_pass("FoldConstant", mod);
  TnObject *body = ((TnIrFunction *)main_of(folded))->body;
  ck_assert(tn_object_is_instance(body, tn_ir_types()->constant));
  ck_assert_type(body, "Tensor[(2,), float32]");
  ck_assert_float_eq_tol(const_data(body)[1], expf(2.0f), 1e-5);
  /* the executor's programs check before they size anything */
  ck_assert_ptr_null(tn_program_new(mod, main_of(mod)));
  TN_EXPECT_ERROR("ValueError", "tn_ir_well_formed", "saved type "
                  "Tensor[(8,), float32] of a constant is wrong");
  /* a kernel evaluation of the lying call is refused the same way */
  int supported;
  ck_assert_ptr_null(tn_kernel_eval(e, &supported));
  TN_EXPECT_ERROR("ValueError", "inference gives Tensor[(2,), float32]");
}
END_TEST

START_TEST(test_program_refuses_types_no_memory_holds) {
  /* a legal type whose byte size overflows: the executor sizes buffers
   * from types, so it refuses before computing one */
  int64_t dims[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  TnObject *x = var("x", K(tn_ir_tensor_type(dims, 2, ir_dtype("float32"))));
  TnObject *mod = module_of(CALL("exp", 1, x));
  ck_assert_ptr_null(tn_program_new(mod, main_of(mod)));
  TN_EXPECT_ERROR("ValueError", "tn_program_new", "Tensor[(1099511627776, "
                  "1099511627776), float32] would not fit in memory");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("well_formed");
  TCase *tc = ir_case(s, "containers");
  tcase_add_test(tc, test_hand_written_module_loads);
  tcase_add_test(tc, test_params_array_of_integers);
  tcase_add_test(tc, test_call_arguments_of_the_wrong_kind);
  tcase_add_test(tc, test_typed_field_declarations);
  tc = ir_case(s, "check");
  tcase_add_test(tc, test_saved_type_that_lies_about_a_constant);
  tcase_add_test(tc, test_attrs_missing_or_of_the_wrong_type);
  tcase_add_test(tc, test_arity_and_untyped_parts);
  tcase_add_test(tc, test_scoping);
  tcase_add_test(tc, test_calls_of_global_functions);
  tcase_add_test(tc, test_function_code_is_not_shared_between_module_functions);
  tcase_add_test(tc, test_tuple_items_of_values_that_are_not_tuples);
  tcase_add_test(tc, test_every_model_is_well_formed);
  tc = ir_case(s, "infer_type");
  tcase_add_test(tc, test_infer_type_derives_saved_types_again);
  tcase_add_test(tc, test_kernels_never_trust_a_lying_type);
  tcase_add_test(tc, test_program_refuses_types_no_memory_holds);
  return s;
}

TN_TEST_MAIN(make_suite)
