/*
 * test_pass.c: the pass infrastructure: passes built from any tn.Function
 * (module and function level), PassInfo, opt levels, required and disabled
 * passes, config validated against registered options, instruments and the
 * timing instrument, Sequential, the registry, contexts, and failures that
 * name the pass and leave the input module as it was.
 */
#include "ir_test.h"

#include "models/mlperf_tiny.h"

/* ---- passes written as plain callbacks (as a binding would) -------------- */

/* A module pass that adds a function "extra" (a copy of main). Counts its
 * runs in *self. */
static int add_extra(void *self, const TnAny *args, int32_t nargs,
                     TnAny *ret) {
  ck_assert_int_eq(nargs, 2);
  (*(int *)self)++;
  TnObject *mod = args[0].v_obj;
  TnObject *f = tn_ir_module_get(mod, "main");
  if (f == NULL) return -1;
  TnObject *out = tn_ir_module_with(mod, "extra", f);
  tn_object_release(f);
  if (out == NULL) return -1;
  *ret = tn_any_obj(out);
  return 0;
}

/* A function pass that wraps each body in nn.relu; counts functions. */
static int relu_body(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  ck_assert_int_eq(nargs, 3);
  (*(int *)self)++;
  TnIrFunction *f = (TnIrFunction *)args[0].v_obj;
  TnObject *body = tn_ir_call_op("nn.relu", &f->body, 1, NULL, NULL, 0);
  if (body == NULL) return -1;
  int64_t n = tn_array_size(f->params);
  TnObject *ps[8];
  for (int64_t i = 0; i < n; i++) ps[i] = tn_array_at(f->params, i)->v_obj;
  TnObject *out = tn_ir_function(ps, (int32_t)n, body, NULL, f->attrs);
  tn_object_release(body);
  if (out == NULL) return -1;
  *ret = tn_any_obj(out);
  return 0;
}

static int always_fails(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  return tn_error_raise("ValueError", "the pass body gave up");
}

static int returns_int(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  (void)self, (void)args, (void)nargs;
  *ret = tn_any_int(7);
  return 0;
}

/* Appends "<when>:<pass name> " to a log. */
typedef struct {
  GString *log;
  const char *when;
} Recorder;

static int record(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)nargs, (void)ret;
  Recorder *r = self;
  TnAny name;
  TN_OK(tn_node_get(args[1].v_obj, "name", &name));
  const char *s;
  TN_OK(tn_any_as_str(&name, &s, NULL));
  g_string_append_printf(r->log, "%s:%s ", r->when, s);
  tn_any_clear(&name);
  return 0;
}

static TnObject *func(TnPackedFn fn, void *self) {
  return K(tn_func_new(fn, self, NULL));
}

static TnObject *strs(int32_t n, ...) {
  TnAny items[8];
  va_list ap;
  va_start(ap, n);
  for (int32_t i = 0; i < n; i++) items[i] = tn_any_cstr(va_arg(ap, const char *));
  va_end(ap);
  return K(tn_array_new(items, n));
}

static TnObject *small_module(void) {
  TnObject *x = var("x", tt("float32", 2, 1, 4));
  return module_of(CALL("negative", 1, x));
}

static int64_t nfunctions(TnObject *mod) {
  return tn_map_size(((TnIrModule *)mod)->functions);
}

START_TEST(test_module_pass_from_a_function) {
  int runs = 0;
  TnObject *p = K(tn_pass_module("test.AddExtra", 1, NULL,
                                 func(add_extra, &runs)));
  TnObject *mod = small_module();
  TnObject *out = K(tn_pass_run(p, mod, NULL));
  ck_assert_int_eq(runs, 1);
  ck_assert_int_eq(nfunctions(out), 2);
  ck_assert_int_eq(nfunctions(mod), 1); /* the input is untouched */
  /* PassInfo reads like any node */
  TnAny info, name, level;
  TN_OK(tn_node_get(p, "info", &info));
  TN_OK(tn_node_get(info.v_obj, "name", &name));
  TN_OK(tn_node_get(info.v_obj, "opt_level", &level));
  const char *s;
  TN_OK(tn_any_as_str(&name, &s, NULL));
  ck_assert_str_eq(s, "test.AddExtra");
  ck_assert_int_eq(level.v_int64, 1);
  tn_any_clear(&name);
  tn_any_clear(&info);
}
END_TEST

START_TEST(test_function_pass_visits_non_primitive_functions) {
  int runs = 0;
  TnObject *p = K(tn_pass_function("test.Relu", 0, NULL,
                                   func(relu_body, &runs)));
  /* main plus a primitive function: only main is visited */
  TnObject *mod = small_module();
  TnObject *x = var("p", tt("float32", 2, 1, 4));
  TnAny k = tn_any_cstr("Primitive"), v = tn_any_int(1);
  TnObject *prim = K(tn_ir_function(&x, 1, CALL("exp", 1, x), NULL,
                                    K(tn_map_new(&k, &v, 1))));
  mod = K(tn_ir_module_with(mod, "kernel", prim));
  TnObject *out = K(tn_pass_run(p, mod, NULL));
  ck_assert_int_eq(runs, 1);
  TnObject *main_fn = K(tn_ir_module_get(out, "main"));
  ck_assert_ptr_nonnull(strstr(astext(main_fn, 0), "nn.relu"));
  ck_assert_ptr_eq(K(tn_ir_module_get(out, "kernel")), prim);
}
END_TEST

START_TEST(test_opt_level_disabled_required) {
  int runs = 0;
  TnObject *p = K(tn_pass_module("test.Level3", 3, NULL,
                                 func(add_extra, &runs)));
  TnObject *mod = small_module();
  /* default context: opt level 2, so a level-3 pass is skipped */
  TnObject *out = K(tn_pass_run(p, mod, NULL));
  ck_assert_ptr_eq(out, mod);
  ck_assert_int_eq(runs, 0);
  TnObject *ctx3 = K(tn_pass_context_new(3, NULL, NULL, NULL, NULL));
  K(tn_pass_run(p, mod, ctx3));
  ck_assert_int_eq(runs, 1);
  /* disabled by name, even at a high enough level */
  TnObject *off = K(tn_pass_context_new(3, NULL, NULL,
                                        strs(1, "test.Level3"), NULL));
  ck_assert_ptr_eq(K(tn_pass_run(p, mod, off)), mod);
  ck_assert_int_eq(runs, 1);
  /* required by the context: runs below its level */
  TnObject *req = K(tn_pass_context_new(0, NULL, strs(1, "test.Level3"),
                                        NULL, NULL));
  K(tn_pass_run(p, mod, req));
  ck_assert_int_eq(runs, 2);
  /* the entered context is the default for tn_pass_run */
  TN_OK(tn_pass_context_enter(ctx3));
  TnObject *cur = K(tn_pass_context_current());
  ck_assert_ptr_eq(cur, ctx3);
  K(tn_pass_run(p, mod, NULL));
  ck_assert_int_eq(runs, 3);
  TN_OK(tn_pass_context_exit());
  ck_assert_int_eq(tn_pass_context_exit(), -1);
  TN_EXPECT_ERROR("RuntimeError", "tn_pass_context_exit", "no pass context");
}
END_TEST

/* Sees the module typed: InferType ran first. */
static int needs_types(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  (void)nargs;
  TnObject *f = tn_ir_module_get(args[0].v_obj, "main");
  *(bool *)self = tn_ir_checked_type(((TnIrFunction *)f)->body) != NULL;
  tn_object_release(f);
  tn_any_copy(ret, &args[0]);
  return 0;
}

START_TEST(test_required_passes_run_first) {
  bool typed = false;
  TnObject *p = K(tn_pass_module("test.NeedsTypes", 0, strs(1, "InferType"),
                                 func(needs_types, &typed)));
  /* a call whose argument was untyped when built */
  TnObject *x = var("x", NULL);
  TnObject *body = CALL("negative", 1, x);
  ck_assert_type(body, "?");
  TnObject *y = var("y", tt("float32", 1, 3));
  TnObject *f = K(tn_ir_function(&y, 1, CALL("exp", 1, y), NULL, NULL));
  TnObject *mod = module_of(f);
  (void)body;
  K(tn_pass_run(p, mod, NULL));
  ck_assert(typed);
  /* a required pass that does not exist is an error naming both */
  TnObject *bad = K(tn_pass_module("test.NeedsGhost", 0, strs(1, "Ghost"),
                                   func(needs_types, &typed)));
  ck_assert_ptr_null(tn_pass_run(bad, mod, NULL));
  TN_EXPECT_ERROR("KeyError", "test.NeedsGhost", "Ghost");
}
END_TEST

START_TEST(test_config_is_checked) {
  TnAny k = tn_any_cstr("FuseOps.max_depth"), v = tn_any_int(4);
  TnObject *good = K(tn_map_new(&k, &v, 1));
  K(tn_pass_context_new(2, good, NULL, NULL, NULL));
  TnAny bad_v = tn_any_cstr("deep");
  TnObject *bad_type = K(tn_map_new(&k, &bad_v, 1));
  ck_assert_ptr_null(tn_pass_context_new(2, bad_type, NULL, NULL, NULL));
  TN_EXPECT_ERROR("TypeError", "FuseOps.max_depth", "expects int", "String");
  TnAny uk = tn_any_cstr("FuseOps.max_dept");
  TnObject *unknown = K(tn_map_new(&uk, &v, 1));
  ck_assert_ptr_null(tn_pass_context_new(2, unknown, NULL, NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "unknown config option", "FuseOps.max_dept");
  /* an option registered from outside is accepted */
  TN_OK(tn_pass_config_register("test.threshold", TN_TYPE_FLOAT));
  TnAny tk = tn_any_cstr("test.threshold"), tv = tn_any_int(3);
  K(tn_pass_context_new(2, K(tn_map_new(&tk, &tv, 1)), NULL, NULL, NULL));
  /* bad lists */
  TnObject *not_names = K(tn_array_new((TnAny[]){tn_any_int(1)}, 1));
  ck_assert_ptr_null(tn_pass_context_new(2, NULL, not_names, NULL, NULL));
  TN_EXPECT_ERROR("TypeError", "required[0]", "pass name", "int");
  ck_assert_ptr_null(tn_pass_context_new(2, NULL, NULL, NULL, not_names));
  TN_EXPECT_ERROR("TypeError", "instruments[0]", "ir.PassInstrument");
}
END_TEST

START_TEST(test_instruments_and_timing) {
  GString *log = g_string_new(NULL);
  Recorder before = {log, "before"}, after = {log, "after"};
  TnObject *rec = K(tn_pass_instrument("rec", func(record, &before),
                                       func(record, &after)));
  TnObject *timing = K(tn_pass_timing_instrument());
  TnAny items[] = {tn_any_obj(rec), tn_any_obj(timing)};
  TnObject *ctx = K(tn_pass_context_new(2, NULL, NULL, NULL,
                                        K(tn_array_new(items, 2))));
  const char *names[] = {"InferType", "FoldConstant", "FuseOps"};
  TnObject *seq = K(tn_pass_sequential_named(names, 3, "pipe"));
  TnObject *mod = K(tn_model_build("ad"));
  K(tn_pass_run(seq, mod, ctx));
  /* the passes in order, each required InferType before the pass itself */
  ck_assert_str_eq(log->str,
                   "before:InferType after:InferType "
                   "before:InferType after:InferType "
                   "before:FoldConstant after:FoldConstant "
                   "before:InferType after:InferType "
                   "before:FuseOps after:FuseOps ");
  g_string_free(log, TRUE);
  const char *report = ((TnStringObj *)K(tn_pass_timing_report(timing)))->data;
  ck_assert_ptr_nonnull(strstr(report, "FoldConstant"));
  ck_assert_ptr_nonnull(strstr(report, "FuseOps"));
  ck_assert_ptr_nonnull(strstr(report, "total"));
  ck_assert_ptr_null(tn_pass_timing_report(rec));
  TN_EXPECT_ERROR("TypeError", "not a timing instrument");
}
END_TEST

START_TEST(test_failing_instrument_is_named) {
  TnObject *bad = K(tn_pass_instrument("grumpy", func(always_fails, NULL),
                                       NULL));
  TnAny item = tn_any_obj(bad);
  TnObject *ctx = K(tn_pass_context_new(2, NULL, NULL, NULL,
                                        K(tn_array_new(&item, 1))));
  ck_assert_ptr_null(tn_pass_run(K(tn_pass_infer_type()), small_module(), ctx));
  TN_EXPECT_ERROR("ValueError", "instrument 'grumpy'", "before pass",
                  "InferType", "gave up");
}
END_TEST

START_TEST(test_failing_pass_names_itself_and_keeps_the_module) {
  TnObject *mod = K(tn_model_build("kws"));
  TnAny m = tn_any_obj(mod);
  TnObject *json_before = K(tn_json_save(&m, 0));
  TnObject *fail = K(tn_pass_module("test.Fails", 0, NULL,
                                    func(always_fails, NULL)));
  TnObject *passes[] = {K(tn_pass_infer_type()), fail};
  TnObject *seq = K(tn_pass_sequential(passes, 2, "p", 0));
  ck_assert_ptr_null(tn_pass_run(seq, mod, NULL));
  TnObject *err = tn_error_take_raised();
  ck_assert_ptr_nonnull(err);
  ck_assert_str_eq(tn_error_kind(err), "ValueError");
  ck_assert_ptr_nonnull(strstr(tn_error_message(err), "pass 'test.Fails' "
                                                      "failed"));
  ck_assert_ptr_nonnull(strstr(tn_error_message(err), "gave up"));
  TnObject *cause = tn_error_cause(err);
  ck_assert_ptr_nonnull(cause);
  ck_assert_str_eq(tn_error_message(cause), "the pass body gave up");
  tn_object_release(err);
  TnObject *json_after = K(tn_json_save(&m, 0));
  ck_assert_str_eq(((TnStringObj *)json_before)->data,
                   ((TnStringObj *)json_after)->data);
  /* a pass that returns something else than a module */
  TnObject *odd = K(tn_pass_module("test.Odd", 0, NULL,
                                   func(returns_int, NULL)));
  ck_assert_ptr_null(tn_pass_run(odd, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "test.Odd", "returned int", "ir.IRModule");
  TnObject *odd_fn = K(tn_pass_function("test.OddFn", 0, NULL,
                                        func(returns_int, NULL)));
  ck_assert_ptr_null(tn_pass_run(odd_fn, mod, NULL));
  TN_EXPECT_ERROR("TypeError", "test.OddFn", "returned int", "ir.Function",
                  "main");
}
END_TEST

START_TEST(test_registry_and_composition_by_name) {
  TnObject *names = K(tn_pass_list());
  static const char *const builtin[] = {"InferType", "SimplifyExpr",
                                        "FoldConstant", "DeadCodeElimination",
                                        "FuseOps"};
  for (size_t i = 0; i < G_N_ELEMENTS(builtin); i++) {
    bool found = false;
    for (int64_t k = 0; k < tn_array_size(names); k++) {
      const char *s;
      TN_OK(tn_any_as_str(tn_array_at(names, k), &s, NULL));
      found |= strcmp(s, builtin[i]) == 0;
    }
    ck_assert_msg(found, "%s is not registered", builtin[i]);
  }
  int runs = 0;
  TnObject *p = K(tn_pass_module("test.Registered", 0, NULL,
                                 func(add_extra, &runs)));
  TN_OK(tn_pass_register(p, 0));
  ck_assert_int_eq(tn_pass_register(p, 0), -1);
  TN_EXPECT_ERROR("ValueError", "test.Registered", "already registered");
  TN_OK(tn_pass_register(p, 1));
  const char *seq_names[] = {"InferType", "test.Registered"};
  TnObject *seq = K(tn_pass_sequential_named(seq_names, 2, NULL));
  TnObject *out = K(tn_pass_run(seq, small_module(), NULL));
  ck_assert_int_eq(runs, 1);
  ck_assert_int_eq(nfunctions(out), 2);
  TnObject *found = K(tn_pass_find("test.Registered"));
  ck_assert_ptr_eq(found, p);
  TN_OK(tn_pass_unregister("test.Registered"));
  ck_assert_int_eq(tn_pass_unregister("test.Registered"), -1);
  TN_EXPECT_ERROR("KeyError", "tn_pass_unregister", "no pass is registered",
                  "test.Registered");
  ck_assert_ptr_null(tn_pass_find("test.Registered"));
  ck_assert_ptr_null(tn_error_peek_raised()); /* find raises nothing */
  ck_assert_ptr_null(tn_pass_get("test.Registered"));
  TN_EXPECT_ERROR("KeyError", "tn_pass_get", "test.Registered");
  const char *bad[] = {"InferType", "NoSuchPass"};
  ck_assert_ptr_null(tn_pass_sequential_named(bad, 2, NULL));
  TN_EXPECT_ERROR("KeyError", "NoSuchPass");
  /* the built-ins are also global functions, for the bindings */
  TnObject *getter = K(tn_func_get("transform.FuseOps"));
  TnAny r = tn_any_none();
  TN_OK(tn_func_call(getter, NULL, 0, &r));
  ck_assert_ptr_eq(r.v_obj, K(tn_pass_fuse_ops()));
  tn_any_clear(&r);
  /* bad arguments */
  ck_assert_ptr_null(tn_pass_run(NULL, small_module(), NULL));
  TN_EXPECT_ERROR("ValueError", "tn_pass_run", "pass");
  ck_assert_ptr_null(tn_pass_run(p, p, NULL));
  TN_EXPECT_ERROR("TypeError", "tn_pass_run", "mod", "ir.Pass");
  ck_assert_ptr_null(tn_pass_sequential((TnObject *[]){small_module()}, 1,
                                        NULL, 0));
  TN_EXPECT_ERROR("TypeError", "passes[0]", "ir.IRModule");
  ck_assert_ptr_null(tn_pass_module("x", 0, NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "tn_pass_module", "func");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("pass");
  TCase *tc = ir_case(s, "infrastructure");
  tcase_add_test(tc, test_module_pass_from_a_function);
  tcase_add_test(tc, test_function_pass_visits_non_primitive_functions);
  tcase_add_test(tc, test_opt_level_disabled_required);
  tcase_add_test(tc, test_required_passes_run_first);
  tcase_add_test(tc, test_config_is_checked);
  tcase_add_test(tc, test_instruments_and_timing);
  tcase_add_test(tc, test_failing_instrument_is_named);
  tcase_add_test(tc, test_failing_pass_names_itself_and_keeps_the_module);
  tcase_add_test(tc, test_registry_and_composition_by_name);
  return s;
}

TN_TEST_MAIN(make_suite)
