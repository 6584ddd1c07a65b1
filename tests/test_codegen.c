/*
 * test_codegen.c: ahead-of-time C generation from C.
 *
 * Every model of models/ compiles after the pipeline, in every interface
 * variant; each plan is valid (the planner's validator and an independent
 * overlap check here), keyword spotting runs its separable blocks in place
 * and needs one activation buffer, the executor plans alike (the one
 * planner), and the files are there. Bad options
 * and models that cannot be compiled give errors naming what was wrong.
 * (Building and running the generated C is python/tests/test_codegen.py.)
 */
#include "ir_test.h"
#include "models/mlperf_tiny.h"

static TnObject *pipeline(TnObject *mod) {
  static const char *const passes[] = {"InferType", "SimplifyExpr",
                                       "FoldConstant", "FuseOps",
                                       "InferType"};
  for (size_t i = 0; i < G_N_ELEMENTS(passes); i++) {
    mod = tn_pass_run(K(tn_pass_get(passes[i])), mod, NULL);
    ck_assert_msg(mod != NULL, "%s: %s", passes[i], tn_test_raised_text());
    K(mod);
  }
  return mod;
}

static const TnAny *get(const TnObject *map, const char *key) {
  TnAny k = tn_any_cstr(key);
  const TnAny *v = tn_map_find(map, &k);
  ck_assert_msg(v != NULL, "no '%s'", key);
  return v;
}

static int64_t get_int(const TnObject *map, const char *key) {
  const TnAny *v = get(map, key);
  ck_assert_int_eq(v->type_index, TN_TYPE_INT);
  return v->v_int64;
}

/* Options from alternating key/value pairs: ints, or strings when the key
 * is "name"/"interface", bools for the *_in_pool keys. */
static TnObject *options(const char *name, bool io, bool consts,
                         int64_t align) {
  TnAny keys[4] = {tn_any_cstr("name"), tn_any_cstr("io_in_pool"),
                   tn_any_cstr("constants_in_pool"), tn_any_cstr("alignment")};
  TnAny vals[4] = {tn_any_cstr(name), tn_any_bool(io), tn_any_bool(consts),
                   tn_any_int(align)};
  return K(tn_map_new(keys, vals, 4));
}

/* The plan's buffers, rechecked here independently of the planner's own
 * validator: aligned, inside their pool, no two alive at a step overlap. */
static void check_plan(const TnObject *plan, int64_t align) {
  const TnObject *pools = get(plan, "pools")->v_obj;
  const TnObject *bufs = get(plan, "buffers")->v_obj;
  int64_t n = tn_array_size(bufs), total = 0;
  for (int64_t p = 0; p < tn_array_size(pools); p++)
    total += get_int(tn_array_at(pools, p)->v_obj, "size");
  ck_assert_int_ge(total, get_int(plan, "lower_bound"));
  for (int64_t i = 0; i < n; i++) {
    const TnObject *a = tn_array_at(bufs, i)->v_obj;
    int64_t pa = get_int(a, "pool"), oa = get_int(a, "offset");
    int64_t sa = get_int(a, "size");
    const TnObject *pool = tn_array_at(pools, pa)->v_obj;
    ck_assert_int_eq(oa % align, 0);
    ck_assert_int_le(oa + sa, get_int(pool, "size"));
    for (int64_t j = i + 1; j < n; j++) {
      const TnObject *b = tn_array_at(bufs, j)->v_obj;
      if (get_int(b, "pool") != pa || sa == 0 || get_int(b, "size") == 0)
        continue;
      bool live = get_int(a, "first") <= get_int(b, "last") &&
                  get_int(b, "first") <= get_int(a, "last");
      bool apart = oa + sa <= get_int(b, "offset") ||
                   get_int(b, "offset") + get_int(b, "size") <= oa;
      ck_assert_msg(!live || apart, "buffers %d and %d overlap", (int)i,
                    (int)j);
    }
  }
}

static const char *file_text(const TnObject *res, const char *path) {
  const TnAny *v = get(get(res, "files")->v_obj, path);
  const char *s = NULL;
  TN_OK(tn_any_as_str(v, &s, NULL));
  return s;
}

START_TEST(test_every_model_compiles_in_every_variant) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    if (strchr(*n, ':')) continue;
    TnObject *mod = pipeline(K(tn_model_build(*n)));
    for (int v = 0; v < 4; v++) {
      int64_t align = v == 3 ? 64 : 16;
      TnObject *res = K(tn_codegen_aot(
          mod, options("m", v == 1 || v == 3, v == 2 || v == 3, align)));
      check_plan(get(res, "plan")->v_obj, align);
      const char *h = file_text(res, "codegen/host/include/tvmgen_m.h");
      ck_assert_ptr_nonnull(strstr(h, "int32_t tvmgen_m_run("));
      ck_assert_ptr_nonnull(strstr(h, "extern TVMGEN_API const TnCrtModel "
                                      "tvmgen_m_model;"));
      ck_assert_int_eq(strstr(h, "map_inputs") != NULL, v == 1 || v == 3);
      ck_assert_int_eq(strstr(h, "CONSTANT_POOL_SIZE") != NULL,
                       v == 2 || v == 3);
      const char *lib0 = file_text(res, "codegen/host/src/m_lib0.c");
      ck_assert_ptr_nonnull(strstr(lib0, "tn_crt_"));
      ck_assert_ptr_null(strstr(lib0, "TnAny")); /* no boxed values */
      const char *meta = file_text(res, "metadata.json");
      ck_assert_ptr_nonnull(strstr(meta, "\"version\": 7"));
      ck_assert_ptr_nonnull(strstr(meta, "\"executors\": [\"aot\"]"));
      ck_assert_int_gt(tn_array_size(get(res, "runtime_sources")->v_obj), 5);
    }
  }
}
END_TEST

/* Depthwise and pointwise layers take over their input's buffer, so the
 * network needs one 25x5x64 activation plus small scratch, not two. */
START_TEST(test_keyword_spotting_runs_its_separable_blocks_in_place) {
  TnObject *mod = pipeline(K(tn_model_build("kws-int8")));
  TnObject *res = K(tn_codegen_aot(mod, options("kws", false, false, 16)));
  const TnObject *plan = get(res, "plan")->v_obj;
  const TnObject *pool = tn_array_at(get(plan, "pools")->v_obj, 0)->v_obj;
  ck_assert_int_le(get_int(pool, "size"), 16000 * 7 / 10);
  ck_assert_int_ge(get_int(pool, "size"), 8000);
  const char *lib0 = file_text(res, "codegen/host/src/kws_lib0.c");
  int in_place = 0;
  for (const char *p = lib0; (p = strstr(p, ", in place */")); p++) in_place++;
  ck_assert_int_eq(in_place, 8);
}
END_TEST

START_TEST(test_pools_with_limits_fill_in_order) {
  TnObject *mod = pipeline(K(tn_model_build("kws-int8")));
  TnObject *p1 = K(tn_map_new(
      (TnAny[]){tn_any_cstr("name"), tn_any_cstr("limit")},
      (TnAny[]){tn_any_cstr("sram"), tn_any_int(1024)}, 2));
  TnObject *p2 = K(tn_map_new((TnAny[]){tn_any_cstr("name")},
                              (TnAny[]){tn_any_cstr("dram")}, 1));
  TnObject *pools = K(tn_array_new((TnAny[]){tn_any_obj(p1), tn_any_obj(p2)},
                                   2));
  TnObject *opts = K(tn_map_new((TnAny[]){tn_any_cstr("name"),
                                          tn_any_cstr("pools")},
                                (TnAny[]){tn_any_cstr("kws"),
                                          tn_any_obj(pools)}, 2));
  TnObject *res = K(tn_codegen_aot(mod, opts));
  const TnObject *plan = get(res, "plan")->v_obj;
  check_plan(plan, 16);
  const TnObject *ps = get(plan, "pools")->v_obj;
  int64_t sram = get_int(tn_array_at(ps, 0)->v_obj, "size");
  ck_assert_int_gt(sram, 0);
  ck_assert_int_le(sram, 1024);
  const char *h = file_text(res, "codegen/host/include/tvmgen_kws.h");
  ck_assert_ptr_nonnull(strstr(h, "void *sram;"));
  ck_assert_ptr_nonnull(strstr(h, "void *dram;"));
  ck_assert_ptr_nonnull(strstr(h, "TVMGEN_KWS_SRAM_WORKSPACE_POOL_SIZE"));
  /* a limit nothing fits in */
  TnObject *tiny = K(tn_map_new(
      (TnAny[]){tn_any_cstr("name"), tn_any_cstr("limit")},
      (TnAny[]){tn_any_cstr("tiny"), tn_any_int(100)}, 2));
  TnObject *only = K(tn_array_new((TnAny[]){tn_any_obj(tiny)}, 1));
  TnObject *bad = K(tn_map_new((TnAny[]){tn_any_cstr("pools")},
                               (TnAny[]){tn_any_obj(only)}, 1));
  ck_assert_ptr_null(tn_codegen_aot(mod, bad));
  TN_EXPECT_ERROR("ValueError", "tiny");
}
END_TEST

START_TEST(test_bad_options_name_what_is_wrong) {
  TnObject *mod = pipeline(K(tn_model_build("ad-int8")));
  ck_assert_ptr_null(tn_codegen_aot(NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "mod", "NULL");
  ck_assert_ptr_null(tn_codegen_aot(K(tn_string_new("x", 1)), NULL));
  TN_EXPECT_ERROR("TypeError", "mod");
  ck_assert_ptr_null(tn_codegen_aot(mod, K(tn_array_new(NULL, 0))));
  TN_EXPECT_ERROR("TypeError", "options must be a map");
  struct {
    const char *key;
    TnAny value;
    const char *kind, *says;
  } cases[] = {
      {"bogus", tn_any_int(1), "ValueError", "unknown option 'bogus'"},
      {"name", tn_any_cstr("9lives"), "ValueError", "C identifier"},
      {"name", tn_any_int(3), "TypeError", "expects a str"},
      {"alignment", tn_any_int(12), "ValueError", "power of two"},
      {"alignment", tn_any_cstr("16"), "TypeError", "expects an int"},
      {"io_in_pool", tn_any_cstr("yes"), "TypeError", "expects a bool"},
      {"interface", tn_any_cstr("c,fortran"), "ValueError", "fortran"},
      {"pools", tn_any_int(1), "TypeError", "pools"},
      {"devices", tn_any_int(1), "TypeError", "devices"},
      {"isa", tn_any_cstr("avx9"), "ValueError",
       "option 'isa': expected 'portable' or 'arm_dsp', got 'avx9'"},
      {"isa", tn_any_int(1), "TypeError", "expects a str"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    TnAny k = tn_any_cstr(cases[i].key);
    TnObject *o = K(tn_map_new(&k, &cases[i].value, 1));
    ck_assert_msg(tn_codegen_aot(mod, o) == NULL, "%s accepted",
                  cases[i].key);
    TN_EXPECT_ERROR(cases[i].kind, cases[i].says);
  }
  /* one operator given to two devices */
  TnObject *ops = K(tn_array_new((TnAny[]){tn_any_cstr("qnn.dense")}, 1));
  TnObject *devs = K(tn_map_new(
      (TnAny[]){tn_any_cstr("a"), tn_any_cstr("b")},
      (TnAny[]){tn_any_obj(ops), tn_any_obj(ops)}, 2));
  TnObject *o = K(tn_map_new((TnAny[]){tn_any_cstr("devices")},
                             (TnAny[]){tn_any_obj(devs)}, 1));
  ck_assert_ptr_null(tn_codegen_aot(mod, o));
  TN_EXPECT_ERROR("ValueError", "two devices");
  /* a module without "main" */
  ck_assert_ptr_null(tn_codegen_aot(K(tn_ir_module_new()), NULL));
  ck_assert_ptr_nonnull(tn_error_peek_raised());
  tn_error_set_raised(NULL);
}
END_TEST

/* Written with the big value first, the program holds exp(x) and
 * negative(x) (16 KiB each) at once; run in the other order, one at a
 * time. The program is built in the order with the lower peak, so the
 * executor and the code generator both run it that way. */
START_TEST(test_branch_order_lowers_the_peak) {
  const char *text =
      "def @main(%x: Tensor[(64, 64), float32]) {\n"
      "  let %a = exp(%x);\n"
      "  let %b = negative(%x);\n"
      "  let %c = mean(%b, axis=[0, 1]);\n"
      "  add(mean(%a, axis=[0, 1]), %c)\n"
      "}\n";
  TnObject *mod = K(tn_pass_run(K(tn_pass_get("InferType")),
                                K(tn_ir_parse(text, strlen(text))), NULL));
  TnObject *res = K(tn_codegen_aot(mod, NULL));
  const TnObject *plan = get(res, "plan")->v_obj;
  check_plan(plan, 16);
  ck_assert_int_lt(get_int(plan, "lower_bound"), 2 * 16384);
  ck_assert_int_ge(get_int(plan, "lower_bound"), 16384);
  TnObject *prog = K(tn_program_new(mod, K(tn_ir_module_get(mod, "main"))));
  TnProgramStats st;
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.arena_lower_bound, get_int(plan, "lower_bound"));
  ck_assert_int_lt(st.arena_bytes, 2 * 16384);
}
END_TEST

static int half_compute(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self, (void)args, (void)nargs;
  *ret = tn_any_none();
  return 0;
}

/* An operator with only a host compute function runs in the executor but
 * has no C form. */
static int64_t pool_size(const TnObject *res, int64_t p) {
  const TnObject *pools = get(get(res, "plan")->v_obj, "pools")->v_obj;
  return get_int(tn_array_at(pools, p)->v_obj, "size");
}

/* One planner: the executor's arena is the generated code's workspace
 * pool, for every model, before and after the pipeline; and planning again
 * under options that change nothing (a pool with a limit it never reaches)
 * gives the same plan the executor made. */
START_TEST(test_executor_and_code_generator_plan_alike) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    if (strchr(*n, ':')) continue;
    TnObject *raw = K(tn_pass_run(K(tn_pass_get("InferType")),
                                  K(tn_model_build(*n)), NULL));
    TnObject *mods[2] = {raw, pipeline(K(tn_model_build(*n)))};
    for (int m = 0; m < 2; m++) {
      TnObject *prog = K(tn_program_new(mods[m],
                                        K(tn_ir_module_get(mods[m], "main"))));
      TnProgramStats st;
      TN_OK(tn_program_stats(prog, &st));
      TnObject *res = K(tn_codegen_aot(mods[m], NULL));
      ck_assert_msg(st.arena_bytes == pool_size(res, 0),
                    "%s: executor %lld, code %lld", *n,
                    (long long)st.arena_bytes, (long long)pool_size(res, 0));
      ck_assert_int_eq(st.arena_lower_bound,
                       get_int(get(res, "plan")->v_obj, "lower_bound"));
      TnObject *pool = K(tn_map_new(
          (TnAny[]){tn_any_cstr("name"), tn_any_cstr("limit")},
          (TnAny[]){tn_any_cstr("big"), tn_any_int(INT64_C(1) << 40)}, 2));
      TnAny item = tn_any_obj(pool);
      TnObject *list = K(tn_array_new(&item, 1));
      TnObject *o = K(tn_map_new((TnAny[]){tn_any_cstr("pools")},
                                 (TnAny[]){tn_any_obj(list)}, 1));
      TnObject *again = K(tn_codegen_aot(mods[m], o));
      ck_assert_int_eq(pool_size(again, 0), st.arena_bytes);
    }
  }
}
END_TEST

/* Keyword spotting: the executor runs the same eight steps in place as the
 * generated code and needs its 9,024 B, not the 16,000 B of two
 * activations. */
START_TEST(test_keyword_spotting_executor_arena) {
  TnObject *mod = pipeline(K(tn_model_build("kws-int8")));
  TnObject *prog = K(tn_program_new(mod, K(tn_ir_module_get(mod, "main"))));
  TnProgramStats st;
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.arena_bytes, 9024);
  TnObject *res = K(tn_codegen_aot(mod, NULL));
  ck_assert_int_eq(pool_size(res, 0), 9024);
}
END_TEST

START_TEST(test_an_operator_without_a_kernel_is_refused) {
  TnObject *infer = K(tn_func_new(ir_infer_same_type, NULL, NULL));
  TN_OK(tn_ir_op_register("test.codegen_half", 1, NULL, TN_OP_ELEMWISE, infer,
                          "a host compute function only", 0));
  TnObject *op = K(tn_ir_op_get("test.codegen_half"));
  TnObject *fn = K(tn_func_new(half_compute, NULL, NULL));
  TnAny fv = tn_any_obj(fn);
  TN_OK(tn_ir_op_set_attr(op, TN_OP_ATTR_COMPUTE, &fv, 0));
  const char *text = "def @main(%x: Tensor[(4,), float32]) {\n"
                     "  test.codegen_half(%x)\n}\n";
  TnObject *mod = K(tn_pass_run(K(tn_pass_get("InferType")),
                                K(tn_ir_parse(text, strlen(text))), NULL));
  ck_assert_ptr_null(tn_codegen_aot(mod, NULL));
  TN_EXPECT_ERROR("NotImplementedError", "host compute");
  TN_OK(tn_ir_op_unregister("test.codegen_half"));
}
END_TEST

/* Out of memory anywhere in the code generator, the metadata and file maps
 * included: each allocation in turn fails (tn_debug_set_alloc_fail), and
 * every failed compilation raises and leaves nothing alive (the fixture
 * checks the end too); valgrind and ASan check the memory that is not
 * objects. A small model with a constant and both interfaces, so that the
 * constants map and the Rust file are made too. */
START_TEST(test_out_of_memory_leaves_nothing_behind) {
  const char *text = "def @main(%x: Tensor[(2, 4), float32]) {\n"
                     "  nn.relu(add(%x, 1.5f))\n}\n";
  TnObject *mod = K(tn_pass_run(K(tn_pass_get("InferType")),
                                K(tn_ir_parse(text, strlen(text))), NULL));
  TnAny keys[2] = {tn_any_cstr("name"), tn_any_cstr("interface")};
  TnAny vals[2] = {tn_any_cstr("oom"), tn_any_cstr("c,rust")};
  TnObject *opts = K(tn_map_new(keys, vals, 2));
  if (tn_debug_set_alloc_fail(1) != 0) { /* a release build: nothing to do */
    TN_EXPECT_ERROR("NotImplementedError", "--enable-debug");
    return;
  }
  tn_debug_set_alloc_fail(0);
  /* A first compilation leaves what the module caches (it goes with it). */
  K(tn_codegen_aot(mod, opts));
  int64_t before = tn_object_live_count();
  int failures = 0;
  for (int64_t n = 1;; n++) {
    ck_assert_msg(n < 100000, "the code generator never succeeded");
    tn_debug_set_alloc_fail(n);
    TnObject *res = tn_codegen_aot(mod, opts);
    tn_debug_set_alloc_fail(0);
    if (res == NULL) {
      ck_assert_msg(tn_error_peek_raised() != NULL,
                    "allocation %lld failed, nothing was raised",
                    (long long)n);
      failures++;
    }
    /* An error may be left raised after a success too (one recovered
     * from): the slot is cleared either way before counting. */
    tn_error_set_raised(NULL);
    tn_object_release(res);
    ck_assert_msg(tn_object_live_count() == before,
                  "allocation %lld failed: %lld objects left alive",
                  (long long)n,
                  (long long)(tn_object_live_count() - before));
    if (res != NULL) break;
  }
  ck_assert_int_gt(failures, 0);
}
END_TEST

static Suite *codegen_suite(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = ir_case(s, "codegen");
  tcase_add_test(tc, test_every_model_compiles_in_every_variant);
  tcase_add_test(tc, test_keyword_spotting_runs_its_separable_blocks_in_place);
  tcase_add_test(tc, test_pools_with_limits_fill_in_order);
  tcase_add_test(tc, test_branch_order_lowers_the_peak);
  tcase_add_test(tc, test_bad_options_name_what_is_wrong);
  tcase_add_test(tc, test_an_operator_without_a_kernel_is_refused);
  tcase_add_test(tc, test_executor_and_code_generator_plan_alike);
  tcase_add_test(tc, test_keyword_spotting_executor_arena);
  tcase_add_test(tc, test_out_of_memory_leaves_nothing_behind);
  return s;
}

TN_TEST_MAIN(codegen_suite)
