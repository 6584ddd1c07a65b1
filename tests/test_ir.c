/*
 * test_ir.c: the IR's nodes and builders (types, checks, eager type
 * inference), structural equality and JSON of IR, the visitor and the
 * memoising mutator, modules, and operators registered from outside.
 */
#include "ir_test.h"

#include "models/mlperf_tiny.h"

START_TEST(test_types_and_leaves) {
  const TnIrTypes *T = tn_ir_types();
  ck_assert_int_gt(T->call, 0);
  ck_assert_str_eq(tn_type_key(T->call), "ir.Call");
  ck_assert_str_eq(tn_type_key(T->module), "ir.IRModule");
  ck_assert(tn_type_is_subtype(T->call, T->expr));
  ck_assert(tn_type_is_subtype(T->tensor_type, T->type));
  TnObject *t = tt("int8", 3, 1, 2, 3);
  ck_assert_str_eq(astext(t, 0), "Tensor[(1, 2, 3), int8]");
  TnObject *s = tt("float32", 0);
  ck_assert_str_eq(astext(s, 0), "Tensor[(), float32]");
  TnObject *fields[] = {t, s};
  TnObject *tup = K(tn_ir_tuple_type(fields, 2));
  ck_assert_str_eq(astext(tup, 0),
                   "(Tensor[(1, 2, 3), int8], Tensor[(), float32])");
  TnObject *ft = K(tn_ir_func_type(fields, 2, t));
  ck_assert_str_eq(astext(ft, 0), "fn (Tensor[(1, 2, 3), int8], "
                                  "Tensor[(), float32]) -> "
                                  "Tensor[(1, 2, 3), int8]");
  /* leaves carry their types */
  ck_assert_type(var("x", t), "Tensor[(1, 2, 3), int8]");
  ck_assert_type(var("y", NULL), "?");
  ck_assert_type(fconst(NULL, 2, 2, 2), "Tensor[(2, 2), float32]");
  ck_assert_type(scalar(3, "int32"), "Tensor[(), int32]");
  /* a 0-d scalar stores the value */
  TnObject *c = scalar(-7, "int16");
  ck_assert_int_eq(*(int16_t *)tn_tensor_dltensor(((TnIrConstant *)c)->data)
                        ->data, -7);
  ck_assert_ptr_null(tn_ir_scalar(1, (DLDataType){kDLFloat, 32, 4}));
  TN_EXPECT_ERROR("ValueError", "tn_ir_scalar", "one lane");
  ck_assert_ptr_null(tn_ir_scalar(300, ir_dtype("int8")));
  TN_EXPECT_ERROR("ValueError", "300", "int8");
  /* bad parts */
  TnObject *str = K(tn_string_from_cstr("no"));
  ck_assert_ptr_null(tn_ir_var("x", str));
  TN_EXPECT_ERROR("TypeError", "tn_ir_var", "type_annotation", "tn.String");
  ck_assert_ptr_null(tn_ir_tuple_type(&str, 1));
  TN_EXPECT_ERROR("TypeError", "tn_ir_tuple_type", "tn.String");
  ck_assert_ptr_null(tn_ir_func_type(fields, 2, NULL));
  TN_EXPECT_ERROR("ValueError", "ret_type");
  ck_assert_ptr_null(tn_ir_constant(str));
  TN_EXPECT_ERROR("TypeError", "tn_ir_constant", "tensor", "tn.String");
  ck_assert_ptr_null(tn_ir_var(NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_var", "name_hint");
}
END_TEST

START_TEST(test_calls_type_eagerly_and_check_their_parts) {
  TnObject *t = tt("float32", 2, 2, 3);
  TnObject *x = var("x", t), *u = var("u", NULL);
  TnObject *c = CALL("add", 2, x, x);
  ck_assert_type(c, "Tensor[(2, 3), float32]");
  ck_assert_type(CALL("add", 2, x, u), "?"); /* not known yet: no error */
  /* the call's fields read like any node's */
  TnAny args;
  TN_OK(tn_node_get(c, "args", &args));
  ck_assert_int_eq(tn_array_size(args.v_obj), 2);
  tn_any_clear(&args);
  /* bad parts name the operator and the argument */
  TnObject *str = K(tn_string_from_cstr("no"));
  TnObject *op = K(tn_ir_op_get("add"));
  TnObject *bad_args[] = {x, str};
  ck_assert_ptr_null(tn_ir_call(op, bad_args, 2, NULL));
  TN_EXPECT_ERROR("TypeError", "add", "argument 1", "ir.Expr", "tn.String");
  ck_assert_ptr_null(tn_ir_call(str, &x, 1, NULL));
  TN_EXPECT_ERROR("TypeError", "op must be", "tn.String");
  ck_assert_ptr_null(tn_ir_call(NULL, &x, 1, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call", "op");
  ck_assert_ptr_null(tn_ir_call(op, &x, 1, NULL));
  TN_EXPECT_ERROR("TypeError", "add takes 2 arguments, got 1");
  ck_assert_ptr_null(tn_ir_op_get("nn.conv3d"));
  TN_EXPECT_ERROR("KeyError", "nn.conv3d");
  /* attrs: wrong node type, attrs for an op without, attrs on a non-op */
  TnObject *sm = CALL("nn.softmax", 1, x);
  TnObject *sm_attrs = ((TnIrCall *)sm)->attrs;
  TnObject *relu = K(tn_ir_op_get("nn.relu"));
  ck_assert_ptr_null(tn_ir_call(relu, &x, 1, sm_attrs));
  TN_EXPECT_ERROR("TypeError", "nn.relu takes no attributes");
  TnObject *dense = K(tn_ir_op_get("nn.dense"));
  TnObject *xx[] = {x, x};
  ck_assert_ptr_null(tn_ir_call(dense, xx, 2, sm_attrs));
  TN_EXPECT_ERROR("TypeError", "nn.dense", "attrs must be", "ir.DenseAttrs");
  TnObject *f = K(tn_ir_function(&x, 1, c, NULL, NULL));
  ck_assert_ptr_null(tn_ir_call(f, &x, 1, sm_attrs));
  TN_EXPECT_ERROR("TypeError", "only operator calls take attrs");
  /* calling a typed function checks its arguments */
  TnObject *y = var("y", tt("float32", 1, 3));
  ck_assert_type(K(tn_ir_call(f, &x, 1, NULL)), "Tensor[(2, 3), float32]");
  ck_assert_ptr_null(tn_ir_call(f, &y, 1, NULL));
  TN_EXPECT_ERROR("TypeError", "call of a function", "argument 0",
                  "Tensor[(3,), float32]", "Tensor[(2, 3), float32]");
}
END_TEST

START_TEST(test_tuples_lets_functions) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *x = var("x", t);
  TnObject *fields[] = {x, scalar(1, "int8")};
  TnObject *tup = K(tn_ir_tuple(fields, 2));
  ck_assert_type(tup, "(Tensor[(4,), float32], Tensor[(), int8])");
  ck_assert_type(K(tn_ir_tuple_get_item(tup, 1)), "Tensor[(), int8]");
  ck_assert_ptr_null(tn_ir_tuple_get_item(tup, 2));
  TN_EXPECT_ERROR("IndexError", "index 2", "tuple of 2");
  ck_assert_ptr_null(tn_ir_tuple_get_item(x, 0));
  TN_EXPECT_ERROR("TypeError", "not a tuple type");
  /* a let's annotation must match its value */
  TnObject *v = var("v", tt("int8", 1, 4));
  ck_assert_ptr_null(tn_ir_let(v, x, v));
  TN_EXPECT_ERROR("TypeError", "let", "Tensor[(4,), float32]",
                  "Tensor[(4,), int8]");
  TnObject *w = var("w", NULL);
  ck_assert_type(K(tn_ir_let(w, x, x)), "Tensor[(4,), float32]");
  ck_assert_ptr_null(tn_ir_let(x, x, NULL));
  TN_EXPECT_ERROR("TypeError", "tn_ir_let", "body");
  /* functions get fn types; ret_type must match the body */
  TnObject *f = K(tn_ir_function(&x, 1, CALL("exp", 1, x), NULL, NULL));
  ck_assert_type(f, "fn (Tensor[(4,), float32]) -> Tensor[(4,), float32]");
  ck_assert_ptr_null(tn_ir_function(&x, 1, x, tt("int8", 1, 4), NULL));
  TN_EXPECT_ERROR("TypeError", "function body", "Tensor[(4,), float32]",
                  "Tensor[(4,), int8]");
  ck_assert_ptr_null(tn_ir_function(&tup, 1, x, NULL, NULL));
  TN_EXPECT_ERROR("TypeError", "parameter 0", "ir.Var", "ir.Tuple");
  ck_assert_ptr_null(tn_ir_function(&x, 1, x, NULL, x));
  TN_EXPECT_ERROR("TypeError", "attrs");
}
END_TEST

START_TEST(test_structural_equality_of_ir) {
  TnObject *t = tt("float32", 1, 4);
  /* alpha-equivalent functions are equal; names are not identity */
  TnObject *a = var("a", t), *b = var("b", t);
  TnObject *fa = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *fb = K(tn_ir_function(&b, 1, CALL("exp", 1, b), NULL, NULL));
  ck_assert_sequal(fa, fb);
  TnObject *fc = K(tn_ir_function(&b, 1, CALL("tanh", 1, b), NULL, NULL));
  ck_assert_not_sequal(fa, fc);
  /* a free variable is not a bound one */
  TnObject *free_use = K(tn_ir_function(&a, 1, CALL("exp", 1, b), NULL, NULL));
  ck_assert_not_sequal(fa, free_use);
  /* checked types do not take part: an untyped twin is equal */
  TnObject *u = var("u", NULL);
  TnObject *x = var("x", t);
  TnObject *typed = CALL("exp", 1, x);
  TnObject *untyped_body = CALL("exp", 1, u);
  TnObject *f1 = K(tn_ir_function(&x, 1, typed, NULL, NULL));
  TnObject *f2 = K(tn_ir_function(&u, 1, untyped_body, NULL, NULL));
  ck_assert_not_sequal(f1, f2); /* the annotation differs */
  /* attribute values take part */
  TnObject *s1 = CALL("nn.softmax", 1, x, "axis", tn_any_int(0));
  TnObject *s2 = CALL("nn.softmax", 1, x, "axis", tn_any_int(-1));
  ck_assert_not_sequal(s1, s2);
  ck_assert_sequal(s2, CALL("nn.softmax", 1, x));
  /* hashes agree with equality */
  uint64_t h1, h2;
  TnAny x1 = tn_any_obj(fa), x2 = tn_any_obj(fb);
  TN_OK(tn_structural_hash(&x1, 0, &h1));
  TN_OK(tn_structural_hash(&x2, 0, &h2));
  ck_assert_uint_eq(h1, h2);
}
END_TEST

START_TEST(test_json_round_trip_of_models) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *mod = K(tn_model_build(*n));
    TnAny m = tn_any_obj(mod), back;
    TnObject *json = K(tn_json_save(&m, 0));
    TN_OK(tn_json_load(((TnStringObj *)json)->data,
                       (size_t)((TnStringObj *)json)->size, &back));
    K(back.v_obj);
    ck_assert_sequal(mod, back.v_obj);
  }
  /* an operator is saved by name and looked up when loaded */
  TnObject *x = var("x", tt("float32", 1, 2));
  TnAny e = tn_any_obj(CALL("nn.relu", 1, x));
  const char *text = ((TnStringObj *)K(tn_json_save(&e, 0)))->data;
  ck_assert_ptr_nonnull(strstr(text, "{\"type\": \"ir.Op\", \"fields\": "
                                     "{\"checked_type\": null, "
                                     "\"name\": \"nn.relu\"}}"));
  ck_assert_ptr_null(strstr(text, "infer"));
  char *bad = g_strdup(text);
  memcpy(strstr(bad, "nn.relu"), "nn.relx", 7);
  TnAny out;
  ck_assert_int_eq(tn_json_load(bad, strlen(bad), &out), -1);
  TN_EXPECT_ERROR("ValueError", "nodes[2]", "nn.relx");
  g_free(bad);
}
END_TEST

/* ---- visiting and rewriting ------------------------------------------------- */

static int record(void *ctx, TnObject *e) {
  g_ptr_array_add(ctx, e);
  return 0;
}

static int stop_at_exp(void *ctx, TnObject *e) {
  (void)ctx;
  const TnIrTypes *T = tn_ir_types();
  if (tn_object_is_instance(e, T->call) &&
      strcmp(((TnStringObj *)((TnIrOp *)((TnIrCall *)e)->op)->name)->data,
             "exp") == 0)
    return tn_error_raise("RuntimeError", "stop here");
  return 0;
}

START_TEST(test_post_order_visit) {
  TnObject *x = var("x", tt("float32", 1, 4));
  TnObject *e = CALL("exp", 1, x);
  TnObject *sum = CALL("add", 2, e, e); /* shared */
  GPtrArray *seen = g_ptr_array_new();
  TN_OK(tn_ir_post_order_visit(sum, record, seen));
  /* add's op, then exp's op, x, exp, then add: each once */
  ck_assert_int_eq(seen->len, 5);
  ck_assert_ptr_eq(g_ptr_array_index(seen, seen->len - 1), sum);
  guint ix = 0, ie = 0;
  for (guint i = 0; i < seen->len; i++) {
    if (g_ptr_array_index(seen, i) == x) ix = i;
    if (g_ptr_array_index(seen, i) == e) ie = i;
  }
  ck_assert_uint_lt(ix, ie);
  g_ptr_array_free(seen, TRUE);
  ck_assert_int_eq(tn_ir_post_order_visit(sum, stop_at_exp, NULL), -1);
  TN_EXPECT_ERROR("RuntimeError", "stop here");
  /* a long chain does not use the C stack */
  TnObject *chain = x;
  for (int i = 0; i < 100000; i++) chain = CALL("negative", 1, chain);
  seen = g_ptr_array_new();
  TN_OK(tn_ir_post_order_visit(chain, record, seen));
  ck_assert_int_eq(seen->len, 100002);
  g_ptr_array_free(seen, TRUE);
  TnObject *str = K(tn_string_from_cstr("s"));
  ck_assert_int_eq(tn_ir_post_order_visit(str, record, NULL), -1);
  TN_EXPECT_ERROR("TypeError", "ir.Expr", "tn.String");
}
END_TEST

typedef struct {
  TnObject *from, *to;
  int calls;
} Swap;

static TnObject *swap(void *ctx, TnObject *orig, TnObject *rebuilt) {
  Swap *s = ctx;
  s->calls++;
  TnObject *out = orig == s->from ? s->to : rebuilt;
  tn_object_retain(out);
  return out;
}

static TnObject *fail_on_var(void *ctx, TnObject *orig, TnObject *rebuilt) {
  (void)ctx, (void)orig;
  if (tn_object_is_instance(rebuilt, tn_ir_types()->var)) {
    tn_error_raise("ValueError", "no variables please");
    return NULL;
  }
  tn_object_retain(rebuilt);
  return rebuilt;
}

START_TEST(test_mutate) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *x = var("x", t), *y = var("y", t);
  TnObject *e = CALL("exp", 1, x);
  TnObject *sum = CALL("add", 2, e, e);
  /* nothing changes: the very same graph */
  Swap none = {NULL, NULL, 0};
  TnObject *same = K(tn_ir_mutate(sum, swap, &none));
  ck_assert_ptr_eq(same, sum);
  ck_assert_int_eq(none.calls, 5); /* each node once */
  /* replacing a leaf rebuilds its users once, sharing kept */
  Swap s = {x, y, 0};
  TnObject *out = K(tn_ir_mutate(sum, swap, &s));
  ck_assert_ptr_ne(out, sum);
  TnIrCall *c = (TnIrCall *)out;
  ck_assert_ptr_eq(tn_array_at(c->args, 0)->v_obj,
                   tn_array_at(c->args, 1)->v_obj);
  ck_assert_ptr_eq(tn_array_at(((TnIrCall *)tn_array_at(c->args, 0)->v_obj)->args,
                               0)->v_obj, y);
  ck_assert_type(out, "Tensor[(4,), float32]");
  /* replacing a variable by a value keeps where it is defined */
  TnObject *v = var("v", NULL);
  TnObject *let = K(tn_ir_let(v, x, CALL("exp", 1, v)));
  Swap sv = {v, scalar(1, "float32"), 0};
  TnIrLet *l2 = (TnIrLet *)K(tn_ir_mutate(let, swap, &sv));
  ck_assert_ptr_eq(l2->var, v);
  ck_assert(tn_object_is_instance(tn_array_at(((TnIrCall *)l2->body)->args, 0)
                                      ->v_obj,
                                  tn_ir_types()->constant));
  /* a rewrite that breaks typing fails where it happens */
  Swap bad = {x, var("z", tt("int8", 1, 4)), 0};
  TnObject *mixed = CALL("add", 2, x, y);
  ck_assert_ptr_null(tn_ir_mutate(mixed, swap, &bad));
  TN_EXPECT_ERROR("TypeError", "add");
  /* an error from the callback stops it, leaking nothing */
  ck_assert_ptr_null(tn_ir_mutate(sum, fail_on_var, NULL));
  TN_EXPECT_ERROR("ValueError", "no variables please");
}
END_TEST

/* ---- modules ----------------------------------------------------------------- */

START_TEST(test_modules) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *a = var("a", t), *b = var("b", t);
  TnObject *e = CALL("add", 2, CALL("exp", 1, b), a);
  TnObject *mod = module_of(e);
  TnIrFunction *f = (TnIrFunction *)main_of(mod);
  /* free variables become parameters in order of first use */
  ck_assert_ptr_eq(tn_array_at(f->params, 0)->v_obj, b);
  ck_assert_ptr_eq(tn_array_at(f->params, 1)->v_obj, a);
  /* with() is functional */
  TnObject *m2 = K(tn_ir_module_with(mod, "other", (TnObject *)f));
  ck_assert_int_eq(tn_map_size(((TnIrModule *)mod)->functions), 1);
  ck_assert_int_eq(tn_map_size(((TnIrModule *)m2)->functions), 2);
  ck_assert_ptr_null(tn_ir_module_get(mod, "other"));
  TN_EXPECT_ERROR("KeyError", "other");
  ck_assert_ptr_null(tn_ir_module_with(mod, "bad", a));
  TN_EXPECT_ERROR("TypeError", "'bad'", "ir.Function", "ir.Var");
  ck_assert_ptr_null(tn_ir_module_with(a, "x", (TnObject *)f));
  TN_EXPECT_ERROR("TypeError", "tn_ir_module_with", "mod");

  /* module attributes: functional too, and kept by tn_ir_module_with */
  TnAny src = tn_any_cstr("tflite:model.tflite"), n = tn_any_int(3);
  TnObject *m3 = K(tn_ir_module_with_attr(mod, "source", &src));
  TnObject *m4 = K(tn_ir_module_with_attr(m3, "version", &n));
  ck_assert_int_eq(tn_map_size(((TnIrModule *)mod)->attrs), 0);
  ck_assert_int_eq(tn_map_size(((TnIrModule *)m3)->attrs), 1);
  ck_assert_int_eq(tn_map_size(((TnIrModule *)m4)->attrs), 2);
  ck_assert_ptr_eq(((TnIrModule *)m4)->functions, ((TnIrModule *)mod)->functions);
  TnObject *m5 = K(tn_ir_module_with(m4, "main", (TnObject *)f));
  ck_assert_int_eq(tn_map_size(((TnIrModule *)m5)->attrs), 2);
  ck_assert_int_eq(tn_ir_well_formed(m5), 0);
  /* an IR node as an attribute value: built, then refused by the check */
  TnAny node = tn_any_obj(a);
  TnObject *m6 = K(tn_ir_module_with_attr(m4, "bad", &node));
  ck_assert_int_ne(tn_ir_well_formed(m6), 0);
  TN_EXPECT_ERROR("ValueError", "the module", "ir.Var");
  ck_assert_ptr_null(tn_ir_module_with_attr(m4, NULL, &n));
  TN_EXPECT_ERROR("ValueError", "tn_ir_module_with_attr", "key");
  ck_assert_ptr_null(tn_ir_module_with_attr(a, "k", &n));
  TN_EXPECT_ERROR("TypeError", "tn_ir_module_with_attr", "mod");
}
END_TEST

/* ---- operators from outside ---------------------------------------------------- */

/* infer(arg_types, attrs): the type of the first argument */
static int infer_first(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  (void)self;
  ck_assert_int_eq(nargs, 2);
  tn_any_copy(ret, tn_array_at(args[0].v_obj, 0));
  return 0;
}

static int infer_nothing(void *self, const TnAny *args, int32_t nargs,
                         TnAny *ret) {
  (void)self, (void)args, (void)nargs;
  *ret = tn_any_int(3);
  return 0;
}

START_TEST(test_operator_attributes) {
  TnObject *infer = K(tn_func_new(infer_first, NULL, NULL));
  TN_OK(tn_ir_op_register("test.attrs", 1, NULL, TN_OP_ELEMWISE, infer, NULL,
                          0));
  TnObject *op = K(tn_ir_op_get("test.attrs"));
  ck_assert_ptr_null(tn_ir_op_get_attr(op, "kernel"));
  ck_assert_ptr_null(tn_error_peek_raised()); /* absent is not an error */
  TnAny v = tn_any_int(7);
  TN_OK(tn_ir_op_set_attr(op, "kernel", &v, 0));
  const TnAny *got = tn_ir_op_get_attr(op, "kernel");
  ck_assert_ptr_nonnull(got);
  ck_assert_int_eq(got->v_int64, 7);
  /* a value that may be in use is never changed in place */
  TnAny s = tn_any_cstr("NHWC");
  TN_OK(tn_ir_op_set_attr(op, "layout", &s, 0));
  ck_assert_int_eq(got->v_int64, 7); /* still readable, still 7 */
  ck_assert_int_eq(tn_ir_op_get_attr(op, "kernel")->v_int64, 7);
  TnAny w = tn_any_int(8);
  ck_assert_int_eq(tn_ir_op_set_attr(op, "kernel", &w, 0), -1);
  TN_EXPECT_ERROR("ValueError", "tn_ir_op_set_attr", "test.attrs", "kernel",
                  "override");
  TN_OK(tn_ir_op_set_attr(op, "kernel", &w, 1));
  ck_assert_int_eq(tn_ir_op_get_attr(op, "kernel")->v_int64, 8);
  ck_assert_int_eq(got->v_int64, 7); /* the old map lives with the op */
  /* bad input */
  ck_assert_int_eq(tn_ir_op_set_attr(op, NULL, &w, 0), -1);
  TN_EXPECT_ERROR("ValueError", "tn_ir_op_set_attr", "attr");
  ck_assert_int_eq(tn_ir_op_set_attr(op, "", &w, 0), -1);
  TN_EXPECT_ERROR("ValueError", "empty");
  ck_assert_int_eq(tn_ir_op_set_attr(infer, "kernel", &w, 0), -1);
  TN_EXPECT_ERROR("TypeError", "tn_ir_op_set_attr", "op", "ir.Op");
  ck_assert_ptr_null(tn_ir_op_get_attr(infer, "kernel"));
  /* through the function registry, as bindings reach it */
  TnObject *set = K(tn_func_get("ir.OpSetAttr"));
  TnObject *get = K(tn_func_get("ir.OpGetAttr"));
  TnAny args[4] = {tn_any_cstr("test.attrs"), tn_any_cstr("scratch_bytes"),
                   tn_any_int(3), tn_any_int(0)};
  TnAny ret = tn_any_none();
  TN_OK(tn_func_call(set, args, 4, &ret));
  TN_OK(tn_func_call(get, args, 2, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_INT);
  ck_assert_int_eq(ret.v_int64, 3);
  args[1] = tn_any_cstr("missing");
  TN_OK(tn_func_call(get, args, 2, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_NONE);
  args[0] = tn_any_cstr("test.no_such_op");
  ck_assert_int_eq(tn_func_call(get, args, 2, &ret), -1);
  TN_EXPECT_ERROR("KeyError", "test.no_such_op");
  ck_assert_int_eq(tn_func_call(set, args, 2, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "ir.OpSetAttr", "2 arguments");
  TN_OK(tn_ir_op_unregister("test.attrs"));
}
END_TEST

/* The attributes the library reads: set by registration, checked when
 * set, and the only place type inference, pattern and doc live. */
START_TEST(test_operator_known_attributes) {
  TnObject *conv = K(tn_ir_op_get("nn.conv2d"));
  const TnAny *p = tn_ir_op_get_attr(conv, TN_OP_ATTR_PATTERN);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(p->v_int64, TN_OP_OUT_FUSABLE);
  const char *s;
  TN_OK(tn_any_as_str(tn_ir_op_get_attr(conv, TN_OP_ATTR_DOC), &s, NULL));
  ck_assert(strstr(s, "convolution") != NULL);
  const TnAny *names = tn_ir_op_get_attr(conv, TN_OP_ATTR_INPUT_NAMES);
  ck_assert_ptr_nonnull(names);
  ck_assert_int_eq(tn_array_size(names->v_obj), 2);
  TN_OK(tn_any_as_str(tn_array_at(names->v_obj, 1), &s, NULL));
  ck_assert_str_eq(s, "weight");
  ck_assert_int_eq(tn_ir_op_get_attr(conv, TN_OP_ATTR_INFER_TYPE)->type_index,
                   TN_TYPE_FUNCTION);
  /* every built-in operator names each of its inputs */
  TnObject *ops = K(tn_ir_op_list());
  for (int64_t i = 0; i < tn_array_size(ops); i++) {
    const char *name;
    TN_OK(tn_any_as_str(tn_array_at(ops, i), &name, NULL));
    TnObject *o = K(tn_ir_op_get(name));
    const TnAny *n = tn_ir_op_get_attr(o, TN_OP_ATTR_INPUT_NAMES);
    ck_assert_msg(n != NULL, "%s has no input names", name);
    ck_assert_int_eq(tn_array_size(n->v_obj), ((TnIrOp *)o)->num_inputs);
    ck_assert_msg(tn_ir_op_get_attr(o, TN_OP_ATTR_DOC) != NULL, "%s: no doc",
                  name);
  }

  TnObject *infer = K(tn_func_new(infer_first, NULL, NULL));
  TN_OK(tn_ir_op_register("test.known", 2, NULL, TN_OP_ELEMWISE, infer, NULL,
                          0));
  TnObject *op = K(tn_ir_op_get("test.known"));
  ck_assert_ptr_null(tn_ir_op_get_attr(op, TN_OP_ATTR_DOC));
  TnAny bad = tn_any_cstr("elemwise");
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_PATTERN, &bad, 1), -1);
  TN_EXPECT_ERROR("TypeError", "tn_ir_op_set_attr", "test.known", "pattern",
                  "int", "const char*");
  bad = tn_any_int(6);
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_PATTERN, &bad, 1), -1);
  TN_EXPECT_ERROR("ValueError", "unknown pattern 6");
  bad = tn_any_int(1);
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_INFER_TYPE, &bad, 1), -1);
  TN_EXPECT_ERROR("TypeError", "infer_type", "tn.Function", "int");
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_DOC, &bad, 0), -1);
  TN_EXPECT_ERROR("TypeError", "doc", "str", "int");
  TnAny one[] = {tn_any_cstr("x")}, mixed[] = {tn_any_cstr("x"), tn_any_int(2)};
  TnAny v = tn_any_obj(K(tn_array_new(one, 1)));
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_INPUT_NAMES, &v, 0), -1);
  TN_EXPECT_ERROR("ValueError", "input_names", "needs 2 names, got 1");
  v = tn_any_obj(K(tn_array_new(mixed, 2)));
  ck_assert_int_eq(tn_ir_op_set_attr(op, TN_OP_ATTR_INPUT_NAMES, &v, 0), -1);
  TN_EXPECT_ERROR("TypeError", "input_names", "item 1 is a int");
  ck_assert_ptr_null(tn_ir_op_get_attr(op, TN_OP_ATTR_INPUT_NAMES));
  /* a changed pattern is what FuseOps and everyone else read */
  TnAny pv = tn_any_int(TN_OP_OPAQUE);
  TN_OK(tn_ir_op_set_attr(op, TN_OP_ATTR_PATTERN, &pv, 1));
  ck_assert_int_eq(tn_ir_op_get_attr(op, TN_OP_ATTR_PATTERN)->v_int64,
                   TN_OP_OPAQUE);
  TN_OK(tn_ir_op_unregister("test.known"));
}
END_TEST

START_TEST(test_operators_registered_from_outside) {
  TnObject *infer = K(tn_func_new(infer_first, NULL, NULL));
  TN_OK(tn_ir_op_register("test.identity", 1, NULL, TN_OP_ELEMWISE, infer,
                          "returns its argument", 0));
  ck_assert_int_eq(tn_ir_op_register("test.identity", 1, NULL,
                                     TN_OP_ELEMWISE, infer, NULL, 0), -1);
  TN_EXPECT_ERROR("ValueError", "test.identity", "already", "override");
  /* override replaces the operator; a call built before keeps the old one */
  TnObject *before = K(tn_ir_op_get("test.identity"));
  TN_OK(tn_ir_op_register("test.identity", 1, NULL, TN_OP_ELEMWISE, infer,
                          "returns its argument", 1));
  TnObject *after = K(tn_ir_op_find("test.identity"));
  ck_assert_ptr_ne(before, after);
  ck_assert_ptr_null(tn_ir_op_find("test.no_such_op"));
  ck_assert_ptr_null(tn_error_peek_raised()); /* find raises nothing */
  TnObject *x = var("x", tt("float32", 2, 3, 3));
  TnObject *c = CALL("test.identity", 1, x);
  ck_assert_type(c, "Tensor[(3, 3), float32]");
  TnObject *names = K(tn_ir_op_list());
  bool found = false;
  for (int64_t i = 0; i < tn_array_size(names); i++) {
    const char *s;
    TN_OK(tn_any_as_str(tn_array_at(names, i), &s, NULL));
    found |= strcmp(s, "test.identity") == 0;
    if (i > 0) {
      const char *prev;
      TN_OK(tn_any_as_str(tn_array_at(names, i - 1), &prev, NULL));
      ck_assert_int_lt(strcmp(prev, s), 0);
    }
  }
  ck_assert(found);
  /* an inference function that returns something else */
  TnObject *odd = K(tn_func_new(infer_nothing, NULL, NULL));
  TN_OK(tn_ir_op_register("test.odd", -1, NULL, TN_OP_OPAQUE, odd, NULL, 0));
  ck_assert_ptr_null(TRY_CALL("test.odd", 2, x, x));
  TN_EXPECT_ERROR("TypeError", "test.odd", "returned int", "ir.Type");
  TN_OK(tn_ir_op_unregister("test.odd"));
  TN_OK(tn_ir_op_unregister("test.identity"));
  ck_assert_int_eq(tn_ir_op_unregister("test.identity"), -1);
  TN_EXPECT_ERROR("KeyError", "test.identity");
  ck_assert_type(c, "Tensor[(3, 3), float32]"); /* the call keeps its op */
  ck_assert_ptr_null(tn_ir_op_get("test.identity"));
  TN_EXPECT_ERROR("KeyError", "test.identity");
  /* bad registrations */
  ck_assert_int_eq(tn_ir_op_register("test.bad", 1, NULL, 5, infer, NULL, 0),
                   -1);
  TN_EXPECT_ERROR("ValueError", "test.bad", "pattern");
  ck_assert_int_eq(tn_ir_op_register("test.bad", 1, "no.SuchAttrs",
                                     TN_OP_ELEMWISE, infer, NULL, 0), -1);
  TN_EXPECT_ERROR("TypeError", "no.SuchAttrs", "ir.Attrs");
  ck_assert_int_eq(tn_ir_op_register("test.bad", 1, NULL, TN_OP_ELEMWISE,
                                     x, NULL, 0), -1);
  TN_EXPECT_ERROR("TypeError", "infer");
}
END_TEST

/* Every builder refuses NULL arrays, NULL items, items of the wrong kind
 * and negative counts with an error naming itself and the argument. */
START_TEST(test_builders_refuse_bad_arguments) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *x = var("x", t);
  TnObject *null_t[] = {t, NULL}, *null_e[] = {x, NULL}, *wrong[] = {t, x};
  int64_t dims[] = {2, -3};
  DLDataType f32 = ir_dtype("float32");
  /* tensor types */
  ck_assert_ptr_null(tn_ir_tensor_type(NULL, 2, f32));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tensor_type", "'shape'", "NULL");
  ck_assert_ptr_null(tn_ir_tensor_type(dims, -1, f32));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tensor_type", "ndim is negative (-1)");
  ck_assert_ptr_null(tn_ir_tensor_type(dims, 2, f32));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tensor_type", "shape[1] is negative (-3)");
  K(tn_ir_tensor_type(NULL, 0, f32));
  /* tuple and function types */
  ck_assert_ptr_null(tn_ir_tuple_type(NULL, 2));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple_type", "'fields'", "NULL");
  ck_assert_ptr_null(tn_ir_tuple_type(null_t, 2));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple_type", "'fields[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_tuple_type(&t, -1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple_type", "n is negative (-1)");
  ck_assert_ptr_null(tn_ir_tuple_type(wrong, 2));
  TN_EXPECT_ERROR("TypeError", "tn_ir_tuple_type", "fields[1]", "ir.Type",
                  "ir.Var");
  K(tn_ir_tuple_type(NULL, 0));
  ck_assert_ptr_null(tn_ir_func_type(NULL, 2, t));
  TN_EXPECT_ERROR("ValueError", "tn_ir_func_type", "'arg_types'", "NULL");
  ck_assert_ptr_null(tn_ir_func_type(null_t, 2, t));
  TN_EXPECT_ERROR("ValueError", "tn_ir_func_type", "'arg_types[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_func_type(&t, -1, t));
  TN_EXPECT_ERROR("ValueError", "tn_ir_func_type", "n is negative (-1)");
  ck_assert_ptr_null(tn_ir_func_type(wrong, 2, t));
  TN_EXPECT_ERROR("TypeError", "tn_ir_func_type", "arg_types[1]", "ir.Var");
  ck_assert_ptr_null(tn_ir_func_type(&t, 1, x));
  TN_EXPECT_ERROR("TypeError", "tn_ir_func_type", "ret_type", "ir.Var");
  K(tn_ir_func_type(NULL, 0, t));
  /* calls */
  TnObject *add = K(tn_ir_op_get("add"));
  ck_assert_ptr_null(tn_ir_call(add, NULL, 2, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call", "'args'", "NULL");
  ck_assert_ptr_null(tn_ir_call(add, null_e, 2, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call", "'args[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_call(add, &x, -1, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call", "nargs is negative (-1)");
  ck_assert_ptr_null(tn_ir_call_op("add", NULL, 2, NULL, NULL, 0));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'args'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("add", null_e, 2, NULL, NULL, 0));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'args[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("add", &x, -1, NULL, NULL, 0));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "nargs is negative (-1)");
  /* attributes by name: the names, the values and their count */
  TnAny one = tn_any_int(1), bad = {12, 0, {0}}, long_small = {TN_TYPE_SMALL_STR, 9, {0}};
  const char *names[] = {"axis"}, *null_names[] = {NULL};
  ck_assert_ptr_null(tn_ir_call_op("nn.relu", &x, 1, NULL, &one, 1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'attr_names'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, NULL, &one, 1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'attr_names'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, names, NULL, 1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'attr_values'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, null_names, &one, 1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "'attr_names[0]'", "NULL");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, names, &one, -1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_call_op", "nattrs is negative (-1)");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, names, &bad, 1));
  TN_EXPECT_ERROR("TypeError", "tn_ir_call_op", "type index 12 is not assigned");
  ck_assert_ptr_null(tn_ir_call_op("nn.softmax", &x, 1, names, &long_small, 1));
  TN_EXPECT_ERROR("TypeError", "tn_ir_call_op", "small string of length 9");
  TnAny zero = tn_any_int(0);
  K(tn_ir_call_op("nn.softmax", &x, 1, names, &zero, 1));
  /* tuples, lets, functions */
  ck_assert_ptr_null(tn_ir_tuple(NULL, 2));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple", "'fields'", "NULL");
  ck_assert_ptr_null(tn_ir_tuple(null_e, 2));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple", "'fields[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_tuple(&x, -1));
  TN_EXPECT_ERROR("ValueError", "tn_ir_tuple", "n is negative (-1)");
  ck_assert_ptr_null(tn_ir_tuple(wrong, 2));
  TN_EXPECT_ERROR("TypeError", "tn_ir_tuple", "field 0", "ir.TensorType");
  ck_assert_ptr_null(tn_ir_tuple_get_item(NULL, 0));
  TN_EXPECT_ERROR("TypeError", "tn_ir_tuple_get_item", "tuple", "NULL");
  ck_assert_ptr_null(tn_ir_let(NULL, x, x));
  TN_EXPECT_ERROR("TypeError", "tn_ir_let", "var", "NULL");
  ck_assert_ptr_null(tn_ir_let(x, NULL, x));
  TN_EXPECT_ERROR("TypeError", "tn_ir_let", "value", "NULL");
  ck_assert_ptr_null(tn_ir_function(NULL, 1, x, NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_function", "'params'", "NULL");
  ck_assert_ptr_null(tn_ir_function(null_e, 2, x, NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_function", "'params[1]'", "NULL");
  ck_assert_ptr_null(tn_ir_function(&x, -1, x, NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_ir_function", "nparams is negative (-1)");
  ck_assert_ptr_null(tn_ir_function(&x, 1, NULL, NULL, NULL));
  TN_EXPECT_ERROR("TypeError", "tn_ir_function", "body", "NULL");
  TnAny k7 = tn_any_int(7);
  ck_assert_ptr_null(tn_ir_function(&x, 1, x, NULL, K(tn_map_new(&k7, &one, 1))));
  TN_EXPECT_ERROR("TypeError", "tn_ir_function", "attrs", "int", "not a str");
  /* an empty attribute map is no attributes (as the text reads it back) */
  TnObject *f = K(tn_ir_function(&x, 1, x, NULL, K(tn_map_new(NULL, NULL, 0))));
  ck_assert_ptr_null(((TnIrFunction *)f)->attrs);
  /* operator attributes take valid values only */
  ck_assert_int_eq(tn_ir_op_set_attr(add, "test.bad", &bad, 0), -1);
  TN_EXPECT_ERROR("TypeError", "tn_ir_op_set_attr", "type index 12");
  ck_assert_ptr_null(tn_ir_op_get_attr(add, "test.bad"));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("ir");
  TCase *tc = ir_case(s, "nodes");
  tcase_add_test(tc, test_types_and_leaves);
  tcase_add_test(tc, test_calls_type_eagerly_and_check_their_parts);
  tcase_add_test(tc, test_tuples_lets_functions);
  tcase_add_test(tc, test_builders_refuse_bad_arguments);
  tcase_add_test(tc, test_structural_equality_of_ir);
  tcase_add_test(tc, test_json_round_trip_of_models);
  tc = ir_case(s, "visit");
  tcase_add_test(tc, test_post_order_visit);
  tcase_add_test(tc, test_mutate);
  tc = ir_case(s, "modules");
  tcase_add_test(tc, test_modules);
  tcase_add_test(tc, test_operators_registered_from_outside);
  tcase_add_test(tc, test_operator_attributes);
  tcase_add_test(tc, test_operator_known_attributes);
  return s;
}

TN_TEST_MAIN(make_suite)
