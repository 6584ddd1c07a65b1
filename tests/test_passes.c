/*
 * test_passes.c: the built-in passes: InferType, SimplifyExpr, FoldConstant
 * (values checked element by element), DeadCodeElimination, FuseOps
 * (the groups it forms), ConvertKernelLayout (the weights moved element
 * by element) and PatchStages (bands computing the plain graph's floats
 * bit for bit), their failure paths, and for each of them on every
 * model: the input is left unchanged and re-inferring the result from
 * scratch gives the types the pass left (InferType after it agrees).
 */
#include "ir_test.h"

#include "models/mlperf_tiny.h"

#include <inttypes.h>

static TnObject *run(const char *pass, TnObject *mod) {
  TnObject *p = K(tn_pass_get(pass));
  TnObject *out = tn_pass_run(p, mod, NULL);
  ck_assert_msg(out != NULL, "%s failed: %s", pass, tn_test_raised_text());
  return K(out);
}

static TnObject *run_with(const char *pass, TnObject *mod, const char *key,
                          int64_t value) {
  TnAny k = tn_any_cstr(key), v = tn_any_int(value);
  TnObject *ctx = K(tn_pass_context_new(2, K(tn_map_new(&k, &v, 1)), NULL,
                                        NULL, NULL));
  return K(tn_pass_run(K(tn_pass_get(pass)), mod, ctx));
}

static TnObject *body_of(TnObject *mod) {
  return ((TnIrFunction *)main_of(mod))->body;
}

/* The result of `pass` on a module whose main is `expr`. */
static TnObject *apply(const char *pass, TnObject *expr) {
  return body_of(run(pass, run("InferType", module_of(expr))));
}

static const char *op_name(const TnObject *e) {
  if (!tn_object_is_instance(e, tn_ir_types()->call)) return "(not a call)";
  const TnObject *op = ((const TnIrCall *)e)->op;
  if (!tn_object_is_instance(op, tn_ir_types()->op)) return "(not an op)";
  return ((TnStringObj *)((TnIrOp *)op)->name)->data;
}

static TnObject *arg(const TnObject *call, int64_t i) {
  return tn_array_at(((const TnIrCall *)call)->args, i)->v_obj;
}

/* ---- types agree with a fresh inference ----------------------------------- */

static int collect(void *ctx, TnObject *e) {
  g_ptr_array_add(ctx, e);
  return 0;
}

/* Re-infer `mod` from scratch (print, parse: the builders type every node
 * again, then InferType) and compare every node's type with the one the
 * pass left. */
static void assert_types_agree(TnObject *mod) {
  const char *text = astext(mod, 1);
  TnObject *fresh = run("InferType", K(tn_ir_parse(text, strlen(text))));
  ck_assert_sequal(mod, fresh);
  const TnAny *k;
  const TnIrModule *m = (const TnIrModule *)mod;
  for (int64_t p = tn_map_next(m->functions, 0, &k, NULL); p >= 0;
       p = tn_map_next(m->functions, p + 1, &k, NULL)) {
    const char *name;
    TN_OK(tn_any_as_str(k, &name, NULL));
    TnObject *f1 = K(tn_ir_module_get(mod, name));
    TnObject *f2 = K(tn_ir_module_get(fresh, name));
    GPtrArray *a = g_ptr_array_new(), *b = g_ptr_array_new();
    TN_OK(tn_ir_post_order_visit(f1, collect, a));
    TN_OK(tn_ir_post_order_visit(f2, collect, b));
    ck_assert_int_eq(a->len, b->len);
    for (guint i = 0; i < a->len; i++) {
      TnObject *x = g_ptr_array_index(a, i), *y = g_ptr_array_index(b, i);
      if (tn_object_is_instance(x, tn_ir_types()->op)) continue;
      TnObject *tx = tn_ir_checked_type(x), *ty = tn_ir_checked_type(y);
      ck_assert_msg(tx != NULL, "@%s node %u (%s) has no type after the pass",
                    name, i, tn_object_type_key(x));
      ck_assert_msg(ty != NULL, "@%s node %u (%s) has no type re-inferred",
                    name, i, tn_object_type_key(y));
      TnAny ax = tn_any_obj(tx), ay = tn_any_obj(ty);
      ck_assert_msg(tn_structural_equal(&ax, &ay, 0) == 1,
                    "@%s node %u (%s): the pass left %s", name, i,
                    tn_object_type_key(x), type_text(x));
    }
    g_ptr_array_free(a, TRUE);
    g_ptr_array_free(b, TRUE);
  }
}

START_TEST(test_every_pass_on_every_model) {
  static const char *const passes[] = {"InferType", "SimplifyExpr",
                                       "FoldConstant", "DeadCodeElimination",
                                       "FuseOps", "ConvertKernelLayout",
                                       "FoldInputOffset", "PackDenseWeights"};
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *mod = run("InferType", K(tn_model_build(*n)));
    TnAny m = tn_any_obj(mod);
    TnObject *before = K(tn_json_save(&m, 0));
    for (size_t i = 0; i < G_N_ELEMENTS(passes); i++) {
      TnObject *out = run(passes[i], mod);
      assert_types_agree(out);
      TnObject *after = K(tn_json_save(&m, 0));
      ck_assert_msg(strcmp(((TnStringObj *)before)->data,
                           ((TnStringObj *)after)->data) == 0,
                    "%s changed its input (%s)", passes[i], *n);
    }
  }
}
END_TEST

/* ---- ConvertKernelLayout -------------------------------------------------- */

static TnObject *run_layout(TnObject *mod, const char *layout) {
  TnAny k = tn_any_cstr("ConvertKernelLayout.layout"), v = tn_any_cstr(layout);
  TnObject *ctx = K(tn_pass_context_new(2, K(tn_map_new(&k, &v, 1)), NULL,
                                        NULL, NULL));
  return tn_pass_run(K(tn_pass_get("ConvertKernelLayout")), mod, ctx);
}

static const char *layout_of(const TnObject *call) {
  TnAny v;
  ck_assert_int_eq(tn_node_get(((const TnIrCall *)call)->attrs,
                               "kernel_layout", &v), 0);
  K(v.v_obj);
  const char *s;
  ck_assert_int_eq(tn_any_as_str(&v, &s, NULL), 0);
  return s;
}

START_TEST(test_convert_kernel_layout) {
  /* HWIO (kh 2, kw 1, ci 2, co 3), w[h][0][i][o] = 100 h + 10 i + o */
  float w[12];
  for (int h = 0; h < 2; h++)
    for (int i = 0; i < 2; i++)
      for (int o = 0; o < 3; o++) w[(h * 2 + i) * 3 + o] = 100 * h + 10 * i + o;
  TnObject *x = var("x", tt("float32", 4, 1, 3, 3, 2));
  TnAny nhwc = tn_any_cstr("NHWC"), hwio = tn_any_cstr("HWIO");
  TnObject *mod = run("InferType", module_of(CALL(
      "nn.conv2d", 2, x, fconst(w, 4, 2, 1, 2, 3), "data_layout", nhwc,
      "kernel_layout", hwio, "padding", ints(2, 1, 0))));
  const char *type = type_text(body_of(mod));
  static const char *const to[] = {"OHWI", "OIHW"};
  for (int t = 0; t < 2; t++) {
    TnObject *out = K(run_layout(mod, to[t]));
    TnObject *call = body_of(run("InferType", out));
    ck_assert_str_eq(layout_of(call), to[t]);
    ck_assert_type(call, type);
    TnIrConstant *c = (TnIrConstant *)arg(call, 1);
    const DLTensor *d = tn_tensor_dltensor(c->data);
    const float *v = d->data;
    for (int o = 0; o < 3; o++)
      for (int h = 0; h < 2; h++)
        for (int i = 0; i < 2; i++) {
          /* OHWI [3, 2, 1, 2]; OIHW [3, 2, 2, 1] */
          const int at = t == 0 ? (o * 2 + h) * 2 + i : (o * 2 + i) * 2 + h;
          ck_assert_float_eq(v[at], 100 * h + 10 * i + o);
        }
    /* and back: the same weights as at first */
    TnObject *back = body_of(K(run_layout(out, "HWIO")));
    ck_assert_str_eq(layout_of(back), "HWIO");
    const float *b = tn_tensor_dltensor(((TnIrConstant *)arg(back, 1))->data)->data;
    for (int e = 0; e < 12; e++) ck_assert_float_eq(b[e], w[e]);
  }
  /* already there, grouped, or a parameter weight: nothing changes */
  ck_assert_ptr_eq(K(run_layout(mod, "HWIO")), mod);
  TnObject *x4 = var("x", tt("float32", 4, 1, 3, 3, 4));
  TnObject *grouped = run("InferType", module_of(CALL(
      "nn.conv2d", 2, x4, fconst(NULL, 4, 2, 1, 2, 4), "data_layout", nhwc,
      "kernel_layout", hwio, "groups", tn_any_int(2))));
  ck_assert_ptr_eq(K(run_layout(grouped, "OHWI")), grouped);
  TnObject *wv = var("w", tt("float32", 4, 2, 1, 2, 3));
  TnObject *params[] = {x, wv};
  TnObject *fn = K(tn_ir_function(params, 2, CALL("nn.conv2d", 2, x, wv,
                                                  "data_layout", nhwc,
                                                  "kernel_layout", hwio),
                                  NULL, NULL));
  TnObject *pmod = run("InferType", K(tn_ir_module_with(K(tn_ir_module_new()),
                                                         "main", fn)));
  ck_assert_ptr_eq(K(run_layout(pmod, "OHWI")), pmod);
  /* an unknown layout: a ValueError naming the option */
  ck_assert_ptr_null(run_layout(mod, "IOHW"));
  ck_assert_msg(strstr(tn_test_raised_text(), "ConvertKernelLayout.layout"),
                "%s", tn_test_raised_text());
}
END_TEST

/* ---- PatchStages ---------------------------------------------------------- */

static TnObject *run_patch(TnObject *mod, int64_t count, int64_t end) {
  TnAny k[2] = {tn_any_cstr("PatchStages.count"), tn_any_cstr("PatchStages.end")};
  TnAny v[2] = {tn_any_int(count), tn_any_int(end)};
  TnObject *ctx = K(tn_pass_context_new(2, K(tn_map_new(k, v, 2)), NULL,
                                        NULL, NULL));
  return tn_pass_run(K(tn_pass_get("PatchStages")), mod, ctx);
}

/* A float constant of the given 4-d shape with small values of both signs. */
static TnObject *weights(int a, int b, int c, int d) {
  float w[256];
  ck_assert_int_le(a * b * c * d, 256);
  for (int i = 0; i < a * b * c * d; i++) w[i] = (float)((i * 7) % 11 - 5) * 0.125f;
  return fconst(w, 4, a, b, c, d);
}

/* The output of main of `mod` on `x`. */
static TnObject *run_main(TnObject *mod, TnObject *x) {
  TnObject *prog = K(tn_program_new(mod, K(tn_ir_module_get(mod, "main"))));
  TnObject *out[2] = {NULL};
  ck_assert_msg(tn_program_run(prog, &x, 1, out) == 0, "run: %s",
                tn_test_raised_text());
  return K(out[0]);
}

START_TEST(test_patch_stages) {
  /* 3x3 same conv, clip, depthwise 3x3 stride 2 with padding on every side
   * (top 2, left 0, bottom 1, right 1), 1x1 conv, 3x3 max pool: five
   * possible stage ends, in this order */
  TnObject *x = var("x", tt("float32", 4, 1, 11, 7, 2));
  TnAny nhwc = tn_any_cstr("NHWC"), hwio = tn_any_cstr("HWIO");
  TnObject *c1 = CALL("nn.conv2d", 2, x, weights(3, 3, 2, 4), "data_layout", nhwc,
                      "kernel_layout", hwio, "padding", ints(4, 1, 1, 1, 1));
  TnObject *r = CALL("clip", 1, c1, "a_min", tn_any_float(-2.0), "a_max",
                     tn_any_float(3.0));
  TnObject *dw = CALL("nn.conv2d", 2, r, weights(3, 3, 1, 4), "data_layout", nhwc,
                      "kernel_layout", hwio, "groups", tn_any_int(4),
                      "strides", ints(2, 2, 2), "padding", ints(4, 2, 0, 1, 1));
  TnObject *pw = CALL("nn.conv2d", 2, dw, weights(1, 1, 4, 3), "data_layout", nhwc,
                      "kernel_layout", hwio);
  TnObject *mp = CALL("nn.max_pool2d", 1, pw, "pool_size", ints(2, 3, 3),
                      "padding", ints(4, 1, 1, 1, 1), "layout", nhwc);
  TnObject *mod = run("InferType", module_of(mp));
  ck_assert_type(body_of(mod), "Tensor[(1, 6, 3, 3), float32]");
  DLDevice cpu = {kDLCPU, 0};
  int64_t xd[] = {1, 11, 7, 2};
  TnObject *in = K(tn_tensor_empty(xd, 4, ir_dtype("float32"), cpu));
  float *xv = tn_tensor_dltensor(in)->data;
  for (int i = 0; i < 11 * 7 * 2; i++) xv[i] = (float)((i * 13) % 17 - 8) * 0.25f;
  DLTensor *want = tn_tensor_dltensor(run_main(mod, in));
  /* (bands, stage end): even and uneven bands, one row each, the stride-2
   * depthwise as the end */
  static const int64_t cases[][2] = {{3, 4}, {6, 4}, {4, 2}, {2, 0}, {5, 3}};
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    TnObject *out = run_patch(mod, cases[c][0], cases[c][1]);
    ck_assert_msg(out != NULL, "%s", tn_test_raised_text());
    out = run("InferType", K(out));
    TnObject *b = body_of(out);
    ck_assert_type(b, "Tensor[(1, 6, 3, 3), float32]");
    TnObject *cat = cases[c][1] == 4 ? b : NULL;
    if (cat == NULL) { /* the rest of the stage reads the concatenation */
      cat = b;
      while (strcmp(op_name(cat), "concatenate") != 0) cat = arg(cat, 0);
    }
    ck_assert_str_eq(op_name(cat), "concatenate");
    ck_assert_int_eq(tn_array_size(((TnIrTuple *)arg(cat, 0))->fields),
                     cases[c][0]);
    DLTensor *got = tn_tensor_dltensor(run_main(out, in));
    ck_assert_msg(memcmp(got->data, want->data, 6 * 3 * 3 * sizeof(float)) == 0,
                  "%" PRId64 " bands to end %" PRId64 " differ", cases[c][0],
                  cases[c][1]);
  }
  /* one band: the module unchanged */
  ck_assert_sequal(K(run_patch(mod, 1, -1)), mod);
  /* more bands than rows, an end that is not there, a bad count */
  ck_assert_ptr_null(run_patch(mod, 7, 4));
  ck_assert_msg(strstr(tn_test_raised_text(), "at most the 6 output rows"), "%s",
                tn_test_raised_text());
  ck_assert_ptr_null(run_patch(mod, 2, 5));
  ck_assert_msg(strstr(tn_test_raised_text(), "below the 5 possible stage ends"),
                "%s", tn_test_raised_text());
  ck_assert_ptr_null(run_patch(mod, -1, -1));
  ck_assert_msg(strstr(tn_test_raised_text(), "'PatchStages.count' must be 0"),
                "%s", tn_test_raised_text());
  /* no stage to split (a dense layer on a 2-d input): auto leaves it, a
   * count is refused */
  TnObject *v = var("v", tt("float32", 2, 1, 4));
  TnObject *dmod = run("InferType", module_of(CALL("nn.relu", 1, v)));
  ck_assert_sequal(K(run_patch(dmod, 0, -1)), dmod);
  ck_assert_ptr_null(run_patch(dmod, 2, -1));
  ck_assert_msg(strstr(tn_test_raised_text(), "no leading stage"), "%s",
                tn_test_raised_text());
}
END_TEST

/* ---- InferType ------------------------------------------------------------ */

START_TEST(test_infer_type_fills_what_builders_could_not) {
  TnObject *t = tt("float32", 2, 2, 4);
  /* a global function called from main: untyped until InferType */
  TnObject *a = var("a", t);
  TnObject *helper = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *x = var("x", t);
  TnObject *g = K(tn_ir_call(K(tn_ir_global_var("helper")), &x, 1, NULL));
  /* a let without annotation: uses of it are untyped until InferType */
  TnObject *v = var("v", NULL);
  TnObject *use = CALL("negative", 1, v);
  ck_assert_type(use, "?");
  TnObject *body = K(tn_ir_let(v, g, use));
  TnObject *mod = K(tn_ir_module_with(K(tn_ir_module_new()), "helper",
                                      helper));
  mod = K(tn_ir_module_with(mod, "main",
                            K(tn_ir_function(&x, 1, body, NULL, NULL))));
  TnObject *out = run("InferType", mod);
  TnIrLet *let = (TnIrLet *)body_of(out);
  ck_assert_type((TnObject *)let, "Tensor[(2, 4), float32]");
  ck_assert_type(let->value, "Tensor[(2, 4), float32]");
  ck_assert_type(let->body, "Tensor[(2, 4), float32]");
  ck_assert_type(main_of(out), "fn (Tensor[(2, 4), float32]) -> "
                               "Tensor[(2, 4), float32]");
  /* typed functions are kept as they are */
  TnObject *again = run("InferType", out);
  ck_assert_ptr_eq(main_of(again), main_of(out));
  ck_assert_ptr_eq(K(tn_ir_module_get(again, "helper")),
                   K(tn_ir_module_get(out, "helper")));
}
END_TEST

START_TEST(test_infer_type_errors) {
  TnObject *t = tt("float32", 1, 3);
  TnObject *infer = K(tn_pass_infer_type());
  /* a parameter without a type */
  TnObject *u = var("u", NULL);
  TnObject *mod = module_of(K(tn_ir_function(&u, 1, CALL("exp", 1, u), NULL,
                                             NULL)));
  ck_assert_ptr_null(tn_pass_run(infer, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "pass 'InferType' failed", "%u", "main",
                  "no type annotation");
  /* recursion */
  TnObject *x = var("x", t);
  TnObject *self = K(tn_ir_call(K(tn_ir_global_var("main")), &x, 1, NULL));
  mod = module_of(K(tn_ir_function(&x, 1, self, NULL, NULL)));
  ck_assert_ptr_null(tn_pass_run(infer, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "@main calls itself");
  /* a call of a function the module does not have */
  TnObject *ghost = K(tn_ir_call(K(tn_ir_global_var("ghost")), &x, 1, NULL));
  mod = module_of(K(tn_ir_function(&x, 1, ghost, NULL, NULL)));
  ck_assert_ptr_null(tn_pass_run(infer, mod, NULL));
  TN_EXPECT_ERROR("KeyError", "@ghost");
  /* a call of a global function with the wrong argument type */
  TnObject *a = var("a", tt("float32", 1, 4));
  TnObject *helper = K(tn_ir_function(&a, 1, CALL("exp", 1, a), NULL, NULL));
  TnObject *bad = K(tn_ir_call(K(tn_ir_global_var("helper")), &x, 1, NULL));
  mod = K(tn_ir_module_with(K(tn_ir_module_new()), "helper", helper));
  mod = K(tn_ir_module_with(mod, "main",
                            K(tn_ir_function(&x, 1, bad, NULL, NULL))));
  ck_assert_ptr_null(tn_pass_run(infer, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "call of @helper", "argument 0",
                  "Tensor[(3,), float32]", "Tensor[(4,), float32]");
  /* an untyped let whose use is a type error surfaces when typed */
  TnObject *v = var("v", NULL);
  TnObject *mm = CALL("nn.dense", 2, v, v);
  TnObject *body = K(tn_ir_let(v, CALL("exp", 1, x), mm));
  mod = module_of(K(tn_ir_function(&x, 1, body, NULL, NULL)));
  ck_assert_ptr_null(tn_pass_run(infer, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "nn.dense");
}
END_TEST

/* ---- SimplifyExpr ---------------------------------------------------------- */

START_TEST(test_simplify_identities) {
  TnObject *x = var("x", tt("float32", 2, 2, 3));
  TnObject *zero = scalar(0, "float32"), *one = scalar(1, "float32");
  TnObject *zeros = fconst((float[]){0, 0, 0}, 1, 3);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("add", 2, x, zero)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("add", 2, zeros, x)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("subtract", 2, x, zero)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("multiply", 2, x, one)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("multiply", 2, one, x)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("divide", 2, x, one)), x);
  ck_assert_ptr_eq(apply("SimplifyExpr",
                         CALL("cast", 1, x, "dtype", tn_any_cstr("float32"))),
                   x);
  ck_assert_ptr_eq(apply("SimplifyExpr", CALL("reshape", 1, x, "newshape",
                                              ints(2, 2, -1))),
                   x);
  /* chains collapse in one pass */
  TnObject *chain = CALL("multiply", 2, CALL("add", 2, x, zero), one);
  ck_assert_ptr_eq(apply("SimplifyExpr", chain), x);
  /* reshape of reshape (or of squeeze/expand_dims) is one reshape */
  TnObject *r1 = CALL("reshape", 1, x, "newshape", ints(1, 6));
  TnObject *r2 = CALL("expand_dims", 1, r1, "axis", tn_any_int(0));
  TnObject *r3 = CALL("reshape", 1, r2, "newshape", ints(2, 3, 2));
  TnObject *s = apply("SimplifyExpr", r3);
  ck_assert_str_eq(op_name(s), "reshape");
  ck_assert_ptr_eq(arg(s, 0), x);
  ck_assert_type(s, "Tensor[(3, 2), float32]");
  /* back to the original shape: gone entirely */
  TnObject *r4 = CALL("reshape", 1, r1, "newshape", ints(2, 2, 3));
  ck_assert_ptr_eq(apply("SimplifyExpr", r4), x);
}
END_TEST

START_TEST(test_simplify_keeps_what_is_not_an_identity) {
  TnObject *x = var("x", tt("float32", 1, 3));
  /* zeros that broadcast x to a larger shape */
  int64_t zshape[] = {2, 3};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *zeros = K(tn_ir_constant(
      K(tn_tensor_empty(zshape, 2, ir_dtype("float32"), cpu))));
  memset(tn_tensor_dltensor(((TnIrConstant *)zeros)->data)->data, 0, 24);
  TnObject *e = CALL("add", 2, x, zeros);
  ck_assert_str_eq(op_name(apply("SimplifyExpr", e)), "add");
  ck_assert_str_eq(op_name(apply("SimplifyExpr",
                                 CALL("subtract", 2, scalar(0, "float32"), x))),
                   "subtract");
  ck_assert_str_eq(op_name(apply("SimplifyExpr",
                                 CALL("multiply", 2, x, scalar(2, "float32")))),
                   "multiply");
  ck_assert_str_eq(op_name(apply("SimplifyExpr",
                                 CALL("cast", 1, x, "dtype",
                                      tn_any_cstr("int8")))),
                   "cast");
  /* the identities hold for integers too */
  TnObject *xi = var("xi", tt("int8", 1, 3));
  ck_assert_str_eq(op_name(apply("SimplifyExpr",
                                 CALL("divide", 2, xi, scalar(1, "int8")))),
                   "(not a call)");
  /* unchanged graph: the very same function back */
  TnObject *mod = run("InferType", module_of(CALL("exp", 1, x)));
  ck_assert_ptr_eq(main_of(run("SimplifyExpr", mod)), main_of(mod));
}
END_TEST

/* ---- FoldConstant ----------------------------------------------------------- */

static void assert_floats(TnObject *c, const float *want, int64_t n) {
  const float *got = const_data(c);
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])),
                  "element %lld: got %g, want %g", (long long)i, got[i],
                  want[i]);
}

START_TEST(test_fold_elementwise_and_broadcast) {
  TnObject *a = fconst((float[]){1, -2, 3, -4, 5, -6}, 2, 2, 3);
  TnObject *b = fconst((float[]){10, 20, 30}, 1, 3);
  assert_floats(apply("FoldConstant", CALL("add", 2, a, b)),
                (float[]){11, 18, 33, 6, 25, 24}, 6);
  assert_floats(apply("FoldConstant", CALL("subtract", 2, a, b)),
                (float[]){-9, -22, -27, -14, -15, -36}, 6);
  assert_floats(apply("FoldConstant", CALL("multiply", 2, a, b)),
                (float[]){10, -40, 90, -40, 100, -180}, 6);
  assert_floats(apply("FoldConstant", CALL("divide", 2, b, a)),
                (float[]){10, -10, 10, -2.5f, 4, -5}, 6);
  assert_floats(apply("FoldConstant", CALL("maximum", 2, a, scalar(0, "float32"))),
                (float[]){1, 0, 3, 0, 5, 0}, 6);
  assert_floats(apply("FoldConstant", CALL("minimum", 2, a, scalar(0, "float32"))),
                (float[]){0, -2, 0, -4, 0, -6}, 6);
  assert_floats(apply("FoldConstant", CALL("negative", 1, a)),
                (float[]){-1, 2, -3, 4, -5, 6}, 6);
  assert_floats(apply("FoldConstant", CALL("nn.relu", 1, a)),
                (float[]){1, 0, 3, 0, 5, 0}, 6);
  assert_floats(apply("FoldConstant", CALL("clip", 1, a, "a_min",
                                           tn_any_float(-3), "a_max",
                                           tn_any_float(2))),
                (float[]){1, -2, 2, -3, 2, -3}, 6);
  TnObject *s = fconst((float[]){0, 1, -1}, 1, 3);
  assert_floats(apply("FoldConstant", CALL("exp", 1, s)),
                (float[]){1, expf(1), expf(-1)}, 3);
  assert_floats(apply("FoldConstant", CALL("sigmoid", 1, s)),
                (float[]){0.5f, 1 / (1 + expf(-1)), 1 / (1 + expf(1))}, 3);
  assert_floats(apply("FoldConstant", CALL("tanh", 1, s)),
                (float[]){0, tanhf(1), tanhf(-1)}, 3);
  /* cast truncates toward zero and saturates */
  TnObject *f = fconst((float[]){2.7f, -2.7f, 300, -300}, 1, 4);
  TnObject *c = apply("FoldConstant", CALL("cast", 1, f, "dtype",
                                           tn_any_cstr("int8")));
  const int8_t *i8 = tn_tensor_dltensor(((TnIrConstant *)c)->data)->data;
  ck_assert_int_eq(i8[0], 2);
  ck_assert_int_eq(i8[1], -2);
  ck_assert_int_eq(i8[2], 127);
  ck_assert_int_eq(i8[3], -128);
  ck_assert_type(c, "Tensor[(4,), int8]");
}
END_TEST

START_TEST(test_fold_shape_operators) {
  TnObject *a = fconst(NULL, 2, 2, 3); /* 0 1 2 / 3 4 5 */
  TnObject *t = apply("FoldConstant", CALL("transpose", 1, a));
  ck_assert_type(t, "Tensor[(3, 2), float32]");
  assert_floats(t, (float[]){0, 3, 1, 4, 2, 5}, 6);
  TnObject *a3 = fconst(NULL, 3, 2, 3, 4);
  TnObject *t3 = apply("FoldConstant", CALL("transpose", 1, a3, "axes",
                                            ints(3, 1, 2, 0)));
  ck_assert_type(t3, "Tensor[(3, 4, 2), float32]");
  /* out[i][j][k] = in[k][i][j] */
  const float *d = const_data(t3);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 2; k++)
        ck_assert_float_eq(d[(i * 4 + j) * 2 + k], (float)(k * 12 + i * 4 + j));
  TnObject *r = apply("FoldConstant", CALL("reshape", 1, a, "newshape",
                                           ints(2, 3, -1)));
  ck_assert_type(r, "Tensor[(3, 2), float32]");
  assert_floats(r, (float[]){0, 1, 2, 3, 4, 5}, 6);
  ck_assert_type(apply("FoldConstant", CALL("expand_dims", 1, a, "axis",
                                            tn_any_int(1))),
                 "Tensor[(2, 1, 3), float32]");
  TnObject *one = fconst(NULL, 3, 1, 3, 1);
  ck_assert_type(apply("FoldConstant", CALL("squeeze", 1, one)),
                 "Tensor[(3,), float32]");
  TnObject *b = fconst((float[]){6, 7}, 2, 2, 1);
  TnObject *fields[] = {a, b};
  TnObject *cat = apply("FoldConstant", CALL("concatenate", 1,
                                             K(tn_ir_tuple(fields, 2)),
                                             "axis", tn_any_int(1)));
  ck_assert_type(cat, "Tensor[(2, 4), float32]");
  assert_floats(cat, (float[]){0, 1, 2, 6, 3, 4, 5, 7}, 8);
  TnObject *bias = fconst((float[]){100, 200}, 1, 2);
  TnObject *ba = apply("FoldConstant", CALL("nn.bias_add", 2, a, bias,
                                            "axis", tn_any_int(0)));
  assert_floats(ba, (float[]){100, 101, 102, 203, 204, 205}, 6);
  TnObject *pad = apply("FoldConstant", CALL("nn.pad", 1, b, "pad_width",
                                             ints(4, 1, 0, 0, 1),
                                             "pad_value", tn_any_float(-1)));
  ck_assert_type(pad, "Tensor[(3, 2), float32]");
  assert_floats(pad, (float[]){-1, -1, 6, -1, 7, -1}, 6);
}
END_TEST

START_TEST(test_fold_quantize_dequantize) {
  TnObject *x = fconst((float[]){0.25f, -0.625f, 1.0f, 1.75f}, 2, 2, 2);
  /* round half away from zero, per-channel along axis 1 */
  TnObject *scale = fconst((float[]){0.5f, 0.25f}, 1, 2);
  int64_t zshape[] = {2};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *zp = K(tn_ir_constant(
      K(tn_tensor_empty(zshape, 1, ir_dtype("int32"), cpu))));
  int32_t *z = tn_tensor_dltensor(((TnIrConstant *)zp)->data)->data;
  z[0] = 1, z[1] = -3;
  TnObject *q = apply("FoldConstant", CALL("qnn.quantize", 3, x, scale, zp,
                                           "axis", tn_any_int(1)));
  ck_assert_type(q, "Tensor[(2, 2), int8]");
  const int8_t *qd = tn_tensor_dltensor(((TnIrConstant *)q)->data)->data;
  ck_assert_int_eq(qd[0], 2);  /* round(0.5) + 1 */
  ck_assert_int_eq(qd[1], -6); /* round(-2.5) - 3 */
  ck_assert_int_eq(qd[2], 3);  /* round(2) + 1 */
  ck_assert_int_eq(qd[3], 4);  /* round(7) - 3 */
  TnObject *dq = apply("FoldConstant", CALL("qnn.dequantize", 3, q, scale, zp,
                                            "axis", tn_any_int(1)));
  assert_floats(dq, (float[]){0.5f, -0.75f, 1.0f, 1.75f}, 4);
}
END_TEST

START_TEST(test_fold_lets_tuples_and_limits) {
  TnObject *x = var("x", tt("float32", 1, 3));
  TnObject *c = fconst((float[]){1, 2, 3}, 1, 3);
  /* let %v = c * 2; x + v  ->  x + [2, 4, 6] */
  TnObject *v = var("v", NULL);
  TnObject *body = K(tn_ir_let(v, CALL("multiply", 2, c, scalar(2, "float32")),
                               CALL("add", 2, x, v)));
  TnObject *out = apply("FoldConstant", body);
  ck_assert_str_eq(op_name(out), "add");
  ck_assert_ptr_eq(arg(out, 0), x);
  assert_floats(arg(out, 1), (float[]){2, 4, 6}, 3);
  /* an item of a literal tuple is the field */
  TnObject *fields[] = {x, c};
  TnObject *item = K(tn_ir_tuple_get_item(K(tn_ir_tuple(fields, 2)), 0));
  ck_assert_ptr_eq(arg(apply("FoldConstant", CALL("exp", 1, item)), 0), x);
  /* every operator folds through its kernel, dense included:
   * [[1, 2, 3]] x [[1, 2, 3], [4, 5, 6]]^T = [[14, 32]] */
  TnObject *w = fconst((float[]){1, 2, 3, 4, 5, 6}, 2, 2, 3);
  TnObject *d = CALL("nn.dense", 2, fconst((float[]){1, 2, 3}, 2, 1, 3), w);
  assert_floats(apply("FoldConstant", d), (float[]){14, 32}, 2);
  TnObject *ci = K(tn_ir_scalar(7, ir_dtype("int32")));
  TnObject *q = apply("FoldConstant", CALL("divide", 2, ci, ci));
  ck_assert(tn_object_is_instance(q, tn_type_index("ir.Constant")));
  ck_assert_int_eq(*(int32_t *)tn_tensor_dltensor(
                       ((const TnIrConstant *)q)->data)->data, 1);
  /* a kernel that refuses its inputs (an integer division by zero) leaves
   * the call for run time; no kernel for the dtype (exp of float64) too */
  TnObject *zero = K(tn_ir_scalar(0, ir_dtype("int32")));
  ck_assert_str_eq(op_name(apply("FoldConstant",
                                 CALL("divide", 2, ci, zero))), "divide");
  TnObject *f64 = K(tn_ir_scalar(1.5, ir_dtype("float64")));
  ck_assert_str_eq(op_name(apply("FoldConstant", CALL("exp", 1, f64))),
                   "exp");
  /* results above FoldConstant.max_elements are not folded */
  TnObject *big = CALL("negative", 1, fconst(NULL, 2, 2, 3));
  TnObject *mod = run("InferType", module_of(big));
  ck_assert_str_eq(op_name(body_of(run_with("FoldConstant", mod,
                                            "FoldConstant.max_elements", 4))),
                   "negative");
  ck_assert_str_eq(op_name(body_of(run_with("FoldConstant", mod,
                                            "FoldConstant.max_elements", 6))),
                   "(not a call)");
}
END_TEST

START_TEST(test_fold_models) {
  /* every weight transpose of the models folds away */
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *mod = run("FoldConstant", run("InferType", K(tn_model_build(*n))));
    ck_assert_ptr_null(strstr(astext(mod, 0), "transpose("));
  }
}
END_TEST

/* ---- DeadCodeElimination ------------------------------------------------------ */

START_TEST(test_dce) {
  TnObject *t = tt("float32", 1, 3);
  TnObject *x = var("x", t);
  TnObject *a = var("a", NULL), *b = var("b", NULL), *c = var("c", NULL);
  /* let a = exp(x); let b = neg(a); let c = relu(x); c
   * b is unused; then a is; c stays */
  TnObject *inner = K(tn_ir_let(c, CALL("nn.relu", 1, x), CALL("tanh", 1, c)));
  TnObject *mid = K(tn_ir_let(b, CALL("negative", 1, a), inner));
  TnObject *outer = K(tn_ir_let(a, CALL("exp", 1, x), mid));
  TnObject *used = var("u", NULL);
  TnObject *live = K(tn_ir_let(used, CALL("sigmoid", 1, x),
                               K(tn_ir_call(K(tn_ir_global_var("helper")),
                                            &used, 1, NULL))));
  TnObject *fields[] = {outer, live};
  TnObject *tuple = K(tn_ir_tuple(fields, 2));
  TnObject *p = var("p", t);
  TnObject *helper = K(tn_ir_function(&p, 1, CALL("exp", 1, p), NULL, NULL));
  TnObject *q = var("q", t);
  TnObject *unused = K(tn_ir_function(&q, 1, CALL("exp", 1, q), NULL, NULL));
  TnObject *mod = K(tn_ir_module_new());
  mod = K(tn_ir_module_with(mod, "helper", helper));
  mod = K(tn_ir_module_with(mod, "unused", unused));
  mod = K(tn_ir_module_with(mod, "main",
                            K(tn_ir_function(&x, 1, tuple, NULL, NULL))));
  TnObject *out = run("DeadCodeElimination", mod);
  const char *text = astext(out, 0);
  ck_assert_ptr_null(strstr(text, "@unused"));
  ck_assert_ptr_nonnull(strstr(text, "def @helper"));
  ck_assert_ptr_null(strstr(text, "let %a"));
  ck_assert_ptr_null(strstr(text, "let %b"));
  ck_assert_ptr_nonnull(strstr(text, "let %c"));
  ck_assert_ptr_nonnull(strstr(text, "let %u"));
  ck_assert_int_eq(tn_map_size(((TnIrModule *)out)->functions), 2);
  /* without main every function may be an entry point */
  TnObject *no_main = K(tn_ir_module_with(K(tn_ir_module_new()), "unused",
                                          unused));
  ck_assert_int_eq(
      tn_map_size(((TnIrModule *)run("DeadCodeElimination", no_main))->functions),
      1);
}
END_TEST

/* ---- FuseOps --------------------------------------------------------------------- */

typedef struct {
  GString *groups; /* "conv2d+bias_add+relu | softmax | ..." */
} Groups;

static int note_group(void *ctx, TnObject *e) {
  Groups *g = ctx;
  const TnIrTypes *T = tn_ir_types();
  if (!tn_object_is_instance(e, T->call) ||
      !tn_object_is_instance(((TnIrCall *)e)->op, T->function))
    return 0;
  TnIrFunction *f = (TnIrFunction *)((TnIrCall *)e)->op;
  TnAny key = tn_any_cstr("Primitive");
  const TnAny *prim = f->attrs ? tn_map_find(f->attrs, &key) : NULL;
  ck_assert_msg(prim && prim->v_int64 == 1, "a fused function is not "
                                            "marked Primitive");
  GPtrArray *calls = g_ptr_array_new();
  TN_OK(tn_ir_post_order_visit(f->body, collect, calls));
  if (g->groups->len) g_string_append(g->groups, " | ");
  bool first = true;
  for (guint i = 0; i < calls->len; i++) {
    TnObject *c = g_ptr_array_index(calls, i);
    if (!tn_object_is_instance(c, T->call)) continue;
    g_string_append_printf(g->groups, "%s%s", first ? "" : "+", op_name(c));
    first = false;
  }
  g_ptr_array_free(calls, TRUE);
  return 0;
}

/* The groups FuseOps makes of `expr`, in order. (a static buffer) */
static const char *groups_of(TnObject *mod) {
  static char buf[4096];
  Groups g = {g_string_new(NULL)};
  TN_OK(tn_ir_post_order_visit(main_of(mod), note_group, &g));
  g_strlcpy(buf, g.groups->str, sizeof buf);
  g_string_free(g.groups, TRUE);
  return buf;
}

static const char *fused(TnObject *expr) {
  return groups_of(run("FuseOps", run("InferType", module_of(expr))));
}

START_TEST(test_fuse_epilogues_into_anchors) {
  TnObject *x = var("x", tt("float32", 4, 1, 8, 8, 3));
  TnObject *w = fconst(NULL, 4, 3, 3, 3, 16);
  TnObject *conv = CALL("nn.conv2d", 2, x, w, "padding", ints(1, 1),
                        "data_layout", tn_any_cstr("NHWC"), "kernel_layout",
                        tn_any_cstr("HWIO"));
  TnObject *ba = CALL("nn.bias_add", 2, conv, fconst(NULL, 1, 16), "axis",
                      tn_any_int(3));
  TnObject *relu = CALL("nn.relu", 1, ba);
  TnObject *pool = CALL("nn.avg_pool2d", 1, relu, "pool_size", ints(2, 8, 8),
                        "layout", tn_any_cstr("NHWC"));
  TnObject *flat = CALL("reshape", 1, pool, "newshape", ints(2, 1, 16));
  TnObject *dense = CALL("nn.dense", 2, flat, fconst(NULL, 2, 10, 16));
  TnObject *soft = CALL("nn.softmax", 1, CALL("add", 2, dense,
                                              fconst(NULL, 1, 10)));
  ck_assert_str_eq(fused(soft),
                   "nn.conv2d+nn.bias_add+nn.relu | nn.avg_pool2d | reshape | "
                   "nn.dense+add | nn.softmax");
}
END_TEST

START_TEST(test_fuse_chains_fanout_and_limits) {
  TnObject *x = var("x", tt("float32", 2, 4, 4));
  /* an elementwise/injective chain is one group */
  TnObject *e = CALL("exp", 1, x);
  e = CALL("negative", 1, e);
  e = CALL("transpose", 1, e);
  e = CALL("multiply", 2, e, scalar(2, "float32"));
  ck_assert_str_eq(fused(e), "exp+negative+transpose+multiply");
  /* a one-element constant stays inside the primitive function */
  TnObject *mod = run("FuseOps", run("InferType", module_of(e)));
  TnObject *outer = body_of(mod);
  ck_assert_int_eq(tn_array_size(((TnIrCall *)outer)->args), 1);
  /* a value used twice ends its group */
  TnObject *shared = CALL("exp", 1, x);
  TnObject *two = CALL("add", 2, CALL("nn.relu", 1, shared),
                       CALL("negative", 1, shared));
  ck_assert_str_eq(fused(two), "exp | nn.relu+negative+add");
  /* no producer fuses into an anchor's inputs; two anchors never share */
  TnObject *w = fconst(NULL, 2, 4, 4);
  TnObject *d1 = CALL("nn.dense", 2, CALL("exp", 1, x), w);
  TnObject *d2 = CALL("nn.dense", 2, d1, w);
  ck_assert_str_eq(fused(d2), "exp | nn.dense | nn.dense");
  /* a fused call takes at most 16 arguments (the kernels' limit): a sum
   * of 20 inputs is two groups, the first of 15 adds over 16 inputs */
  TnObject *sum = CALL("add", 2, var("s0", tt("float32", 2, 4, 4)),
                       var("s1", tt("float32", 2, 4, 4)));
  for (int i = 2; i < 20; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "s%d", i);
    sum = CALL("add", 2, sum, var(nm, tt("float32", 2, 4, 4)));
  }
  GString *want = g_string_new("add");
  for (int i = 1; i < 15; i++) g_string_append(want, "+add");
  g_string_append(want, " | add+add+add+add");
  ck_assert_str_eq(fused(sum), want->str);
  g_string_free(want, TRUE);
  /* FuseOps.max_depth bounds a group */
  TnObject *chain = x;
  for (int i = 0; i < 7; i++) chain = CALL("nn.relu", 1, chain);
  TnObject *m2 = run("InferType", module_of(chain));
  ck_assert_str_eq(groups_of(run_with("FuseOps", m2, "FuseOps.max_depth", 3)),
                   "nn.relu+nn.relu+nn.relu | nn.relu+nn.relu+nn.relu | "
                   "nn.relu");
}
END_TEST

START_TEST(test_fuse_is_idempotent_and_typed) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *once = run("FuseOps", run("InferType", K(tn_model_build(*n))));
    TnObject *twice = run("FuseOps", once);
    ck_assert_sequal(once, twice);
    assert_types_agree(once);
  }
  /* the AD autoencoder: ten dense layers, each with its bias and ReLU */
  TnObject *ad = run("FuseOps", run("InferType", K(tn_model_build("ad"))));
  ck_assert_str_eq(groups_of(ad),
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add+nn.relu | "
                   "transpose | nn.dense+nn.bias_add");
}
END_TEST

START_TEST(test_fuse_needs_types) {
  TnObject *x = var("x", tt("float32", 1, 4));
  TnObject *mod = module_of(CALL("exp", 1, x));
  /* FuseOps requires InferType, which the pass infrastructure runs */
  TnObject *out = run("FuseOps", mod);
  ck_assert_str_eq(groups_of(out), "exp");
  /* when that fails, the error names both passes */
  TnObject *u = var("u", NULL);
  TnObject *bad = module_of(K(tn_ir_function(&u, 1, CALL("exp", 1, u), NULL,
                                             NULL)));
  ck_assert_ptr_null(tn_pass_run(K(tn_pass_fuse_ops()), bad, NULL));
  TN_EXPECT_ERROR("TypeError", "pass 'FuseOps' failed", "pass 'InferType' "
                  "failed", "%u", "no type annotation");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("passes");
  TCase *tc = ir_case(s, "all");
  tcase_add_test(tc, test_every_pass_on_every_model);
  tc = ir_case(s, "infer_type");
  tcase_add_test(tc, test_convert_kernel_layout);
  tcase_add_test(tc, test_patch_stages);
  tcase_add_test(tc, test_infer_type_fills_what_builders_could_not);
  tcase_add_test(tc, test_infer_type_errors);
  tc = ir_case(s, "simplify");
  tcase_add_test(tc, test_simplify_identities);
  tcase_add_test(tc, test_simplify_keeps_what_is_not_an_identity);
  tc = ir_case(s, "fold_constant");
  tcase_add_test(tc, test_fold_elementwise_and_broadcast);
  tcase_add_test(tc, test_fold_shape_operators);
  tcase_add_test(tc, test_fold_quantize_dequantize);
  tcase_add_test(tc, test_fold_lets_tuples_and_limits);
  tcase_add_test(tc, test_fold_models);
  tc = ir_case(s, "dce");
  tcase_add_test(tc, test_dce);
  tc = ir_case(s, "fuse_ops");
  tcase_add_test(tc, test_fuse_epilogues_into_anchors);
  tcase_add_test(tc, test_fuse_chains_fanout_and_limits);
  tcase_add_test(tc, test_fuse_is_idempotent_and_typed);
  tcase_add_test(tc, test_fuse_needs_types);
  return s;
}

TN_TEST_MAIN(make_suite)
