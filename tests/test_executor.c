/*
 * test_executor.c: the host executor and the lowering table.
 *
 * Every model of models/ runs, and gives the same outputs before and after
 * the whole pass pipeline (float: within 1e-5 relative; int8 networks,
 * whose outputs are dequantized int8, bit for bit). Hand-written modules
 * cover lets, tuples and calls of global functions, and in-place steps of
 * the one memory plan that spare inputs and constants; bad inputs and
 * operators without a kernel give errors that name what was wrong.
 */
#include <math.h>

#include <tvmnode/executor.h>

#include "ir_test.h"
#include "models/mlperf_tiny.h"

static TnObject *run_pass(const char *pass, TnObject *mod) {
  TnObject *out = tn_pass_run(K(tn_pass_get(pass)), mod, NULL);
  ck_assert_msg(out != NULL, "%s failed: %s", pass, tn_test_raised_text());
  return K(out);
}

static TnObject *executor(TnObject *mod) {
  TnObject *e = tn_executor_new(mod, "main");
  ck_assert_msg(e != NULL, "executor: %s", tn_test_raised_text());
  return K(e);
}

/* A tensor of the program's input `i` filled with a fixed pseudo-random
 * sequence in [-1, 1). */
static TnObject *random_input(TnObject *prog, int32_t i, uint32_t seed) {
  const TnIrTensorType *t =
      (const TnIrTensorType *)tn_program_input_type(prog, i);
  const TnShapeObj *s = (const TnShapeObj *)t->shape;
  DLDevice cpu = {kDLCPU, 0};
  TnObject *x = K(tn_tensor_empty(s->data, (int32_t)s->ndim, t->dtype, cpu));
  float *d = tn_tensor_dltensor(x)->data;
  int64_t n = tn_tensor_nbytes(x) / 4;
  for (int64_t k = 0; k < n; k++) {
    seed = seed * 1664525u + 1013904223u;
    d[k] = (float)((seed >> 8) / 16777216.0 * 2.0 - 1.0);
  }
  return x;
}

static TnObject *run1(TnObject *prog, TnObject *x) {
  TnObject *out[4] = {NULL};
  int rc = tn_program_run(prog, &x, 1, out);
  ck_assert_msg(rc == 0, "run: %s", tn_test_raised_text());
  return K(out[0]);
}

START_TEST(test_models_before_and_after_the_pipeline) {
  static const char *const pipeline[] = {"InferType", "SimplifyExpr",
                                         "FoldConstant",
                                         "DeadCodeElimination", "FuseOps"};
  for (const char *const *n = tn_model_names(); *n; n++) {
    if (strchr(*n, ':')) continue; /* the synthetic and untyped variants */
    TnObject *mod = K(tn_model_build(*n));
    TnObject *before = executor(mod);
    TnObject *opt = mod;
    for (size_t i = 0; i < G_N_ELEMENTS(pipeline); i++)
      opt = run_pass(pipeline[i], opt);
    TnObject *after = executor(opt);
    TnProgramStats sb, sa;
    TN_OK(tn_program_stats(before, &sb));
    TN_OK(tn_program_stats(after, &sa));
    ck_assert_int_gt(sb.steps, 0);
    ck_assert_int_le(sa.steps, sb.steps); /* fused and folded */
    ck_assert_int_ge(sa.arena_bytes, sa.arena_lower_bound);
    bool q = strstr(*n, "int8") != NULL;
    for (uint32_t seed = 1; seed <= 3; seed++) {
      TnObject *x = random_input(before, 0, seed);
      TnObject *y0 = run1(before, x), *y1 = run1(after, x);
      ck_assert_int_eq(tn_tensor_nbytes(y0), tn_tensor_nbytes(y1));
      const float *a = tn_tensor_dltensor(y0)->data;
      const float *b = tn_tensor_dltensor(y1)->data;
      int64_t count = tn_tensor_nbytes(y0) / 4;
      double energy = 0;
      for (int64_t k = 0; k < count; k++) {
        ck_assert_msg(isfinite(a[k]), "%s: output %lld is not finite", *n,
                      (long long)k);
        energy += fabs(a[k]);
        if (q)
          ck_assert_msg(a[k] == b[k], "%s: output %lld differs after the "
                        "pipeline: %.9g vs %.9g", *n, (long long)k, a[k], b[k]);
        else
          ck_assert_msg(fabs(a[k] - b[k]) <= 1e-5 * fmax(1.0, fabs(a[k])),
                        "%s: output %lld: %.9g vs %.9g", *n, (long long)k,
                        a[k], b[k]);
      }
      ck_assert_msg(energy > 0, "%s: all outputs are zero", *n);
    }
  }
}
END_TEST

/* fn (%x: Tensor[(2, 3), float32]) with lets, a tuple and a global call. */
static const char *kProgram =
    "def @double(%a: Tensor[(2, 3), float32]) {\n"
    "  add(%a, %a)\n"
    "}\n"
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) {\n"
    "  let %t = (@double(%x), nn.relu(%y));\n"
    "  let %s = add(%t.0, %t.1);\n"
    "  (%s, reshape(%s, newshape=[3, 2]), %t.1)\n"
    "}\n";

START_TEST(test_lets_tuples_and_global_calls) {
  TnObject *mod = K(tn_ir_parse(kProgram, strlen(kProgram)));
  ck_assert_ptr_nonnull(mod);
  TnObject *prog = executor(mod);
  ck_assert_int_eq(tn_program_num_inputs(prog), 2);
  ck_assert_int_eq(tn_program_num_outputs(prog), 3);
  ck_assert_str_eq(tn_program_input_name(prog, 1), "y");
  DLDevice cpu = {kDLCPU, 0};
  int64_t s23[2] = {2, 3}, s3[1] = {3};
  DLDataType f32 = {kDLFloat, 32, 1};
  TnObject *x = K(tn_tensor_empty(s23, 2, f32, cpu));
  TnObject *y = K(tn_tensor_empty(s3, 1, f32, cpu));
  float *xd = tn_tensor_dltensor(x)->data, *yd = tn_tensor_dltensor(y)->data;
  for (int i = 0; i < 6; i++) xd[i] = (float)i - 2.5f;
  yd[0] = -1, yd[1] = 0.5f, yd[2] = 2;
  TnObject *in[2] = {x, y}, *out[3];
  TN_OK(tn_program_run(prog, in, 2, out));
  for (int i = 0; i < 3; i++) K(out[i]);
  const float *s = tn_tensor_dltensor(out[0])->data;
  const float *r = tn_tensor_dltensor(out[1])->data;
  const float *t1 = tn_tensor_dltensor(out[2])->data;
  for (int i = 0; i < 6; i++) {
    float want = 2 * xd[i] + fmaxf(yd[i % 3], 0);
    ck_assert_float_eq(s[i], want);
    ck_assert_float_eq(r[i], want); /* the reshape sees the same values */
  }
  ck_assert_int_eq(tn_tensor_dltensor(out[1])->shape[0], 3);
  ck_assert_float_eq(t1[0], 0);
  ck_assert_float_eq(t1[2], 2);
  /* outputs are new tensors: running again does not change them */
  xd[0] = 100;
  TnObject *again[3];
  TN_OK(tn_program_run(prog, in, 2, again));
  for (int i = 0; i < 3; i++) K(again[i]);
  ck_assert_float_eq(s[0], -5);
  ck_assert_float_eq(((float *)tn_tensor_dltensor(again[0])->data)[0], 200);
}
END_TEST

START_TEST(test_bad_inputs_name_what_is_wrong) {
  TnObject *mod = K(tn_ir_parse(kProgram, strlen(kProgram)));
  TnObject *prog = executor(mod);
  DLDevice cpu = {kDLCPU, 0};
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4};
  DLDataType f32 = {kDLFloat, 32, 1}, i32 = {kDLInt, 32, 1};
  TnObject *x = K(tn_tensor_empty(s23, 2, f32, cpu));
  TnObject *y = K(tn_tensor_empty(s3, 1, f32, cpu));
  TnObject *out[3];
  TnObject *one[1] = {x};
  ck_assert_int_eq(tn_program_run(prog, one, 1, out), -1);
  TN_EXPECT_ERROR("TypeError", "tn_program_run", "expected 2 inputs, got 1");
  TnObject *wrong_shape[2] = {x, K(tn_tensor_empty(s4, 1, f32, cpu))};
  ck_assert_int_eq(tn_program_run(prog, wrong_shape, 2, out), -1);
  TN_EXPECT_ERROR("TypeError", "input 1 ('y')", "Tensor[(3,), float32]",
                  "Tensor[(4,), float32]");
  TnObject *wrong_dtype[2] = {K(tn_tensor_empty(s23, 2, i32, cpu)), y};
  ck_assert_int_eq(tn_program_run(prog, wrong_dtype, 2, out), -1);
  TN_EXPECT_ERROR("TypeError", "input 0 ('x')", "int32");
  TnObject *not_tensor[2] = {mod, y};
  ck_assert_int_eq(tn_program_run(prog, not_tensor, 2, out), -1);
  TN_EXPECT_ERROR("TypeError", "input 0", "tn.Tensor", "ir.IRModule");
  ck_assert_int_eq(tn_program_run(mod, not_tensor, 2, out), -1);
  TN_EXPECT_ERROR("TypeError", "kernel.Program", "ir.IRModule");
  /* a module that does not type-check */
  const char *bad = "def @main(%x: Tensor[(2, 3), float32]) {\n"
                    "  add(%x, cast(%x, dtype=\"int32\"))\n}\n";
  TnObject *bm = tn_ir_parse(bad, strlen(bad));
  if (bm == NULL) {
    TN_EXPECT_ERROR("TypeError", "add");
  } else {
    K(bm);
    ck_assert_ptr_null(tn_executor_new(bm, "main"));
    TN_EXPECT_ERROR("TypeError", "add");
  }
  ck_assert_ptr_null(tn_executor_new(mod, "nothing"));
  TN_EXPECT_ERROR("KeyError", "nothing");
}
END_TEST

START_TEST(test_no_kernel_for_a_dtype) {
  const char *text = "def @main(%x: Tensor[(4,), float64]) {\n"
                     "  exp(%x)\n}\n";
  TnObject *mod = K(tn_ir_parse(text, strlen(text)));
  ck_assert_ptr_null(tn_executor_new(mod, "main"));
  TN_EXPECT_ERROR("NotImplementedError", "exp", "no kernel",
                  "Tensor[(4,), float64]");
}
END_TEST

START_TEST(test_fold_constant_folds_conv_and_dense) {
  /* every weight transpose and constant subexpression of the int8 and
   * float models folds: what is left are calls on the input's path */
  for (const char *const *n = tn_model_names(); *n; n++) {
    if (strchr(*n, ':')) continue;
    TnObject *mod = run_pass("FoldConstant", run_pass("InferType",
                                                      K(tn_model_build(*n))));
    TnObject *text = K(tn_ir_astext(mod, 0));
    ck_assert_msg(strstr(((TnStringObj *)text)->data, "transpose(meta") == NULL,
                  "%s: a transpose of a constant is left", *n);
  }
}
END_TEST


START_TEST(test_fold_constant_computes_a_conv2d) {
  /* a 3x3 image of 1..9 (NHWC, one channel) convolved with the 2x2 weight
   * [[1, 0], [0, -1]] (HWIO): x[i][j] - x[i+1][j+1] = -4 everywhere */
  const float xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv[4] = {1, 0, 0, -1};
  TnObject *conv = CALL("nn.conv2d", 2, fconst(xv, 4, 1, 3, 3, 1),
                        fconst(wv, 4, 2, 2, 1, 1), "data_layout",
                        tn_any_cstr("NHWC"), "kernel_layout",
                        tn_any_cstr("HWIO"));
  TnObject *fn = K(tn_ir_function(NULL, 0, conv, NULL, NULL));
  TnObject *mod = K(tn_ir_module_from_expr(fn));
  TnObject *folded = run_pass("FoldConstant", run_pass("InferType", mod));
  TnObject *main_fn = K(tn_ir_module_get(folded, "main"));
  const TnObject *body = ((const TnIrFunction *)main_fn)->body;
  ck_assert(tn_object_is_instance(body, tn_type_index("ir.Constant")));
  const DLTensor *dl = tn_tensor_dltensor(((const TnIrConstant *)body)->data);
  ck_assert_int_eq(dl->ndim, 4);
  ck_assert_int_eq(dl->shape[1], 2);
  ck_assert_int_eq(dl->shape[2], 2);
  for (int i = 0; i < 4; i++) ck_assert_float_eq(((float *)dl->data)[i], -4);
}
END_TEST

START_TEST(test_mean_and_strided_slice_fold_and_run) {
  /* FoldConstant reaches the new kernels through the lowering table:
   * x = [[0, 1, 2], [3, 4, 5]]; mean over axis 1 is [1, 4]; x[:, ::-2]
   * is [[2, 0], [5, 3]] */
  TnObject *x = fconst(NULL, 2, 2, 3);
  TnObject *m = CALL("mean", 1, x, "axis", ints(1, 1));
  TnObject *s = CALL("strided_slice", 1, x, "begin", ints(1, -1), "end",
                     ints(1, -100), "strides", ints(1, -2), "axes",
                     ints(1, 1));
  TnObject *t = K(tn_ir_tuple((TnObject *[]){m, s}, 2));
  TnObject *mod = K(tn_ir_module_from_expr(
      K(tn_ir_function(NULL, 0, t, NULL, NULL))));
  TnObject *folded = run_pass("FoldConstant", run_pass("InferType", mod));
  const TnObject *body =
      ((const TnIrFunction *)K(tn_ir_module_get(folded, "main")))->body;
  ck_assert(tn_object_is_instance(body, tn_type_index("ir.Tuple")));
  const TnObject *fields = ((const TnIrTuple *)body)->fields;
  const float *mv = const_data(tn_array_at(fields, 0)->v_obj);
  const float *sv = const_data(tn_array_at(fields, 1)->v_obj);
  ck_assert_float_eq(mv[0], 1);
  ck_assert_float_eq(mv[1], 4);
  const float want[4] = {2, 0, 5, 3};
  for (int i = 0; i < 4; i++) ck_assert_float_eq(sv[i], want[i]);

  /* qnn.mean, TFLite's rounding: (10 + 20 + 30 + 41) / 4 is 26 */
  int64_t dims[4] = {1, 2, 2, 1};
  TnObject *v = var("v", K(tn_ir_tensor_type(dims, 4, ir_dtype("int8"))));
  TnObject *q = CALL("qnn.mean", 5, v, scalar(0.5, "float32"),
                     scalar(0, "int32"), scalar(0.5, "float32"),
                     scalar(0, "int32"), "axis", ints(2, 1, 2));
  TnObject *prog = executor(K(tn_ir_module_from_expr(
      K(tn_ir_function((TnObject *[]){v}, 1, q, NULL, NULL)))));
  DLDevice cpu = {kDLCPU, 0};
  TnObject *in = K(tn_tensor_empty(dims, 4, ir_dtype("int8"), cpu));
  memcpy(tn_tensor_dltensor(in)->data, (int8_t[]){10, 20, 30, 41}, 4);
  TnObject *out = run1(prog, in);
  ck_assert_int_eq(tn_tensor_dltensor(out)->ndim, 2);
  ck_assert_int_eq(((int8_t *)tn_tensor_dltensor(out)->data)[0], 26);
  TnProgramStats st;
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_ge(st.scratch_bytes, 4); /* the int32 sum */

  /* float64 has no mean kernel */
  const char *text = "def @main(%x: Tensor[(4,), float64]) {\n"
                     "  mean(%x)\n}\n";
  ck_assert_ptr_null(tn_executor_new(K(tn_ir_parse(text, strlen(text))),
                                     "main"));
  TN_EXPECT_ERROR("NotImplementedError", "mean", "no kernel",
                  "float32 and int32 only");
}
END_TEST

START_TEST(test_kernel_errors_at_run_time_name_the_call) {
  const char *text = "def @main(%a: Tensor[(3,), int32], %b: Tensor[(3,), "
                     "int32]) {\n  divide(%a, %b)\n}\n";
  TnObject *prog = executor(K(tn_ir_parse(text, strlen(text))));
  DLDevice cpu = {kDLCPU, 0};
  int64_t s3[1] = {3};
  DLDataType i32 = {kDLInt, 32, 1};
  TnObject *a = K(tn_tensor_empty(s3, 1, i32, cpu));
  TnObject *b = K(tn_tensor_empty(s3, 1, i32, cpu));
  int32_t *ad = tn_tensor_dltensor(a)->data, *bd = tn_tensor_dltensor(b)->data;
  for (int i = 0; i < 3; i++) ad[i] = 7 * (i + 1), bd[i] = i + 1;
  TnObject *in[2] = {a, b}, *out[1] = {NULL};
  TN_OK(tn_program_run(prog, in, 2, out));
  const int32_t *q = tn_tensor_dltensor(K(out[0]))->data;
  for (int i = 0; i < 3; i++) ck_assert_int_eq(q[i], 7);
  bd[1] = 0;
  out[0] = NULL;
  ck_assert_int_eq(tn_program_run(prog, in, 2, out), -1);
  ck_assert_ptr_null(out[0]);
  TN_EXPECT_ERROR("ValueError", "divide (tn_crt_binary_i32)",
                  "INVALID_ARGUMENT");
  /* the program is usable again after a failed run */
  bd[1] = 2;
  TN_OK(tn_program_run(prog, in, 2, out));
  ck_assert_int_eq(((int32_t *)tn_tensor_dltensor(K(out[0]))->data)[1], 7);
}
END_TEST

START_TEST(test_stats_count_macs_and_profile_runs) {
  const char *text =
      "def @main(%x: Tensor[(2, 16), float32], %w: Tensor[(8, 16), "
      "float32]) {\n  nn.relu(nn.dense(%x, %w))\n}\n";
  TnObject *prog = executor(K(tn_ir_parse(text, strlen(text))));
  TnProgramStats st;
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.steps, 2);
  ck_assert_int_eq(st.macs, 2 * 16 * 8);
  ck_assert_int_eq(st.runs, 0);
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t sx[2] = {2, 16}, sw[2] = {8, 16};
  TnObject *in[2] = {K(tn_tensor_empty(sx, 2, f32, cpu)),
                     K(tn_tensor_empty(sw, 2, f32, cpu))};
  memset(tn_tensor_dltensor(in[0])->data, 0, 2 * 16 * 4);
  memset(tn_tensor_dltensor(in[1])->data, 0, 8 * 16 * 4);
  TnObject *out[1];
  TN_OK(tn_program_run(prog, in, 2, out)); /* not timed */
  K(out[0]);
  TN_OK(tn_program_set_profiling(prog, 1));
  for (int r = 0; r < 3; r++) {
    TN_OK(tn_program_run(prog, in, 2, out));
    K(out[0]);
  }
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.runs, 3);
  ck_assert_int_gt(st.kernel_ns, 0);
  ck_assert_int_ge(st.run_ns, st.kernel_ns);
  TN_OK(tn_program_set_profiling(prog, 0));
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.runs, 0);
  ck_assert_int_eq(tn_program_set_profiling(NULL, 1), -1);
  TN_EXPECT_ERROR("TypeError", "tn_program_set_profiling");
}
END_TEST

/* A host compute function that tries to run the program it is part of:
 * the second run must be refused while the first is in progress. */
typedef struct {
  TnObject *prog;
  int refused;
} Reenter;

static int reenter_compute(void *self, const TnAny *args, int32_t n,
                           TnAny *ret) {
  (void)n, (void)ret;
  Reenter *r = self;
  TnObject *in = tn_array_at(args[0].v_obj, 0)->v_obj, *out = NULL;
  if (tn_program_run(r->prog, &in, 1, &out) == -1 &&
      tn_error_kind_code(tn_error_peek_raised()) == TN_ERR_RUNTIME &&
      strstr(tn_error_message(tn_error_peek_raised()), "already running"))
    r->refused = 1;
  tn_error_set_raised(NULL);
  tn_object_release(out);
  const DLTensor *src = tn_tensor_dltensor(in);
  memcpy(tn_tensor_dltensor(args[1].v_obj)->data, src->data, 4 * 4);
  return 0;
}

START_TEST(test_a_second_run_while_running_is_refused) {
  Reenter r = {NULL, 0};
  TnObject *infer = K(tn_func_new(ir_infer_same_type, NULL, NULL));
  TN_OK(tn_ir_op_register("test.reenter", 1, NULL, TN_OP_ELEMWISE, infer,
                          "runs its own program again", 0));
  TnObject *op = K(tn_ir_op_get("test.reenter"));
  TnObject *compute = K(tn_func_new(reenter_compute, &r, NULL));
  TnAny cv = tn_any_obj(compute);
  TN_OK(tn_ir_op_set_attr(op, TN_OP_ATTR_COMPUTE, &cv, 0));
  const char *text = "def @main(%x: Tensor[(4,), float32]) {\n"
                     "  test.reenter(%x)\n}\n";
  r.prog = executor(K(tn_ir_parse(text, strlen(text))));
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t s4[1] = {4};
  TnObject *x = K(tn_tensor_empty(s4, 1, f32, cpu)), *out[1];
  for (int i = 0; i < 4; i++) ((float *)tn_tensor_dltensor(x)->data)[i] = i;
  TN_OK(tn_program_run(r.prog, &x, 1, out));
  ck_assert_int_eq(r.refused, 1);
  ck_assert_float_eq(((float *)tn_tensor_dltensor(K(out[0]))->data)[3], 3);
  TN_OK(tn_ir_op_unregister("test.reenter"));
}
END_TEST

static TnObject *run_all(TnObject *prog, TnObject *x, TnObject **out,
                         int32_t n) {
  ck_assert_int_eq(tn_program_num_outputs(prog), n);
  int rc = tn_program_run(prog, &x, 1, out);
  ck_assert_msg(rc == 0, "run: %s", tn_test_raised_text());
  for (int32_t i = 0; i < n; i++) K(out[i]);
  return out[0];
}

/* The one plan, as the executor runs it: a chain of elementwise steps runs
 * in place in one arena buffer, which never holds the caller's input or a
 * constant (both are only read), and outputs are computed straight into
 * the tensors a run returns, or copied when an output repeats or is an
 * input. Runs give the same bits every time. */
START_TEST(test_in_place_steps_spare_inputs_and_constants) {
  TnObject *x = var("x", tt("float32", 1, 64));
  TnObject *chain = CALL("exp", 1, CALL("negative", 1, CALL("exp", 1,
                         CALL("negative", 1, x))));
  TnObject *prog = executor(K(tn_ir_module_from_expr(
      K(tn_ir_function((TnObject *[]){x}, 1, chain, NULL, NULL)))));
  TnProgramStats st;
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_eq(st.steps, 4);
  ck_assert_int_eq(st.arena_bytes, 64 * 4); /* one buffer, three steps */
  TnObject *in = random_input(prog, 0, 7), *out[3];
  float x0[64];
  memcpy(x0, tn_tensor_dltensor(in)->data, sizeof x0);
  const float *y = tn_tensor_dltensor(run_all(prog, in, out, 1))->data;
  for (int i = 0; i < 64; i++)
    ck_assert_float_eq_tol(y[i], expf(-expf(-x0[i])), 1e-6);
  ck_assert_mem_eq(tn_tensor_dltensor(in)->data, x0, sizeof x0);

  /* a constant read by a step that may run in place, an output repeated
   * and an input returned */
  TnObject *k = fconst(NULL, 1, 64);
  TnObject *sum = CALL("add", 2, CALL("exp", 1, CALL("negative", 1, x)),
                       CALL("negative", 1, k));
  TnObject *tuple = K(tn_ir_tuple((TnObject *[]){sum, sum, x}, 3));
  prog = executor(K(tn_ir_module_from_expr(
      K(tn_ir_function((TnObject *[]){x}, 1, tuple, NULL, NULL)))));
  TN_OK(tn_program_stats(prog, &st));
  ck_assert_int_le(st.arena_bytes, 2 * 64 * 4);
  for (int run = 0; run < 2; run++) {
    run_all(prog, in, out, 3);
    const float *s0 = tn_tensor_dltensor(out[0])->data;
    ck_assert_mem_eq(s0, tn_tensor_dltensor(out[1])->data, sizeof x0);
    ck_assert_mem_eq(tn_tensor_dltensor(out[2])->data, x0, sizeof x0);
    ck_assert_ptr_ne(tn_tensor_dltensor(out[2])->data,
                     tn_tensor_dltensor(in)->data);
    for (int i = 0; i < 64; i++)
      ck_assert_float_eq_tol(s0[i], expf(-x0[i]) - (float)i, 1e-5);
  }
  ck_assert_mem_eq(tn_tensor_dltensor(in)->data, x0, sizeof x0);
  const float *kd = const_data(k);
  for (int i = 0; i < 64; i++) ck_assert_float_eq(kd[i], (float)i);
}
END_TEST

/* Threads: every model after the pipeline gives the same outputs with 2
 * and 3 threads as with 1 (the int8 ones, dequantized int8, bit for bit;
 * float within rounding), run after run; some steps of the convolutional
 * models are cut; bad counts are refused naming the argument, and the pool
 * ends with the program (the fixture counts objects; ASan, valgrind and
 * TSan see the threads). */
START_TEST(test_threads_give_the_one_thread_outputs) {
  static const char *const pipeline[] = {"InferType", "SimplifyExpr",
                                         "FoldConstant",
                                         "DeadCodeElimination", "FuseOps"};
  int32_t cut_models = 0;
  for (const char *const *n = tn_model_names(); *n; n++) {
    if (strchr(*n, ':')) continue;
    TnObject *mod = K(tn_model_build(*n));
    for (size_t i = 0; i < G_N_ELEMENTS(pipeline); i++)
      mod = run_pass(pipeline[i], mod);
    TnObject *one = executor(mod);
    ck_assert_int_eq(tn_program_threads(one), 1);
    ck_assert_int_eq(tn_program_split_steps(one), 0);
    bool q = strstr(*n, "int8") != NULL;
    for (int64_t threads = 2; threads <= 3; threads++) {
      TnObject *many = executor(mod);
      TN_OK(tn_program_set_threads(many, threads));
      ck_assert_int_eq(tn_program_threads(many), (int32_t)threads);
      int32_t cut = tn_program_split_steps(many);
      ck_assert_int_ge(cut, 0);
      cut_models += threads == 2 && cut > 0;
      for (uint32_t seed = 1; seed <= 3; seed++) {
        TnObject *x = random_input(one, 0, seed);
        TnObject *y0 = run1(one, x);
        for (int again = 0; again < 2; again++) {
          TnObject *y1 = run1(many, x);
          int64_t count = tn_tensor_nbytes(y0) / 4;
          ck_assert_int_eq(tn_tensor_nbytes(y1), tn_tensor_nbytes(y0));
          const float *a = tn_tensor_dltensor(y0)->data;
          const float *b = tn_tensor_dltensor(y1)->data;
          for (int64_t k = 0; k < count; k++) {
            if (q)
              ck_assert_msg(a[k] == b[k], "%s, %d threads: output %lld: "
                            "%.9g vs %.9g", *n, (int)threads, (long long)k,
                            a[k], b[k]);
            else
              ck_assert_msg(fabs(a[k] - b[k]) <= 1e-5 * fmax(1.0, fabs(a[k])),
                            "%s, %d threads: output %lld: %.9g vs %.9g", *n,
                            (int)threads, (long long)k, a[k], b[k]);
          }
        }
      }
      /* back to one thread, and the pool made again */
      TN_OK(tn_program_set_threads(many, 1));
      ck_assert_int_eq(tn_program_split_steps(many), 0);
      TN_OK(tn_program_set_threads(many, threads));
      ck_assert_int_eq(tn_program_split_steps(many), cut);
      run1(many, random_input(one, 0, 9));
    }
  }
  ck_assert_msg(cut_models >= 2, "only %d models had a step cut",
                (int)cut_models);

  TnObject *prog = executor(K(tn_model_build(tn_model_names()[0])));
  static const int64_t bad[] = {0, -1, 65, INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    char got[64];
    g_snprintf(got, sizeof got, "got %" G_GINT64_FORMAT, bad[i]);
    ck_assert_int_eq(tn_program_set_threads(prog, bad[i]), -1);
    TN_EXPECT_ERROR("ValueError", "tn_program_set_threads", "argument n",
                    "expected 1 to 64", got);
  }
  ck_assert_int_eq(tn_program_threads(prog), 1);
  ck_assert_int_eq(tn_program_set_threads(NULL, 2), -1);
  TN_EXPECT_ERROR("TypeError", "tn_program_set_threads");
  ck_assert_int_eq(tn_program_threads(NULL), -1);
  TN_EXPECT_ERROR("TypeError", "tn_program_threads");
  TN_OK(tn_program_set_threads(prog, 64)); /* the most; freed with prog */
}
END_TEST

static Suite *executor_suite(void) {
  Suite *s = suite_create("executor");
  TCase *tc = ir_case(s, "executor");
  tcase_add_test(tc, test_models_before_and_after_the_pipeline);
  tcase_add_test(tc, test_lets_tuples_and_global_calls);
  tcase_add_test(tc, test_bad_inputs_name_what_is_wrong);
  tcase_add_test(tc, test_in_place_steps_spare_inputs_and_constants);
  tcase_add_test(tc, test_no_kernel_for_a_dtype);
  tcase_add_test(tc, test_fold_constant_folds_conv_and_dense);
  tcase_add_test(tc, test_fold_constant_computes_a_conv2d);
  tcase_add_test(tc, test_mean_and_strided_slice_fold_and_run);
  tcase_add_test(tc, test_kernel_errors_at_run_time_name_the_call);
  tcase_add_test(tc, test_stats_count_macs_and_profile_runs);
  tcase_add_test(tc, test_a_second_run_while_running_is_refused);
  tcase_add_test(tc, test_threads_give_the_one_thread_outputs);
  return s;
}

TN_TEST_MAIN(executor_suite)
