/*
 * test_module.c: runtime Modules (tvmnode/module.h) and the parameter file
 * (tvmnode/params.h).
 *
 * The suite cannot run the compiler, so its models are descriptors written
 * here by hand, as generated code would define them, and registered in the
 * system library the way a -DTVMGEN_SYSTEM_LIB archive registers itself.
 * "inc" (y = x + 1 over int32, OVERFLOW on INT32_MAX) has a bound input and
 * output and can be held inside its entry point, so that a second thread
 * meets the Module mid-run; "pooled" keeps its int8 input and int32 output
 * in the workspace pool, reads a constant pool and calls a device. Python
 * tests (python/tests/test_module.py) run real compiled models and
 * libraries. Every fixture checks that no object is left alive.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <glib.h>
#include <stdatomic.h>

#include <tvmnode/crt/calls.h>   /* tn_crt_call_split */
#include <tvmnode/crt/kernels.h> /* TnCrtDType */
#include <tvmnode/module.h>
#include <tvmnode/params.h>

#include "host_functions.h"
#include "tn_test.h"

/* ------------------------------------------------------------------------ */
/* The models                                                                */
/* ------------------------------------------------------------------------ */

static atomic_int g_hold;   /* inc's entry point waits while this is set */
static atomic_int g_inside; /* ... and says so here */

static int32_t inc_run(void *const *inputs, void *const *outputs,
                       void *const *workspace, void *const *constants,
                       void *const *devices) {
  (void)constants, (void)devices;
  const int32_t *x = inputs[0];
  int32_t *y = outputs[0], *tmp = workspace[0];
  atomic_store(&g_inside, 1);
  while (atomic_load(&g_hold)) g_usleep(100);
  atomic_store(&g_inside, 0);
  for (int i = 0; i < 4; i++) {
    if (x[i] == INT32_MAX) return TN_CRT_OVERFLOW;
    tmp[i] = x[i] + 1;
  }
  memcpy(y, tmp, sizeof tmp[0] * 4);
  return TN_CRT_OK;
}

static const int32_t dims_1x4[] = {1, 4}, dims_2x4[] = {2, 4}, dims_2[] = {2};
static const TnCrtTensorInfo inc_in[] = {
    {"x", TN_CRT_I32, 2, dims_1x4, 16, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo inc_out[] = {
    {"y", TN_CRT_I32, 2, dims_1x4, 16, 0.0f, 0, -1, 0}};
static const TnCrtPoolInfo inc_ws[] = {{"scratch", 16, 128}};
static const TnCrtModel inc_model = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "inc", "test",
    1, 1, inc_in, inc_out, 1, inc_ws, 0, NULL, NULL, 0, NULL,
    4, 0, inc_run};

/* pooled: out[r] = sum_c q[r][c] * w[r][c], q in the pool at 0, out at 16;
 * the device counts its calls. */
static int32_t pooled_run(void *const *inputs, void *const *outputs,
                          void *const *workspace, void *const *constants,
                          void *const *devices) {
  (void)inputs, (void)outputs;
  const int8_t *q = workspace[0], *w = constants[0];
  int32_t *out = (int32_t *)((uint8_t *)workspace[0] + 16);
  int *calls = devices[0];
  ++*calls;
  for (int r = 0; r < 2; r++) {
    out[r] = 0;
    for (int c = 0; c < 4; c++) out[r] += q[4 * r + c] * w[4 * r + c];
  }
  return TN_CRT_OK;
}

static const TnCrtTensorInfo pooled_in[] = {
    {"q", TN_CRT_I8, 2, dims_2x4, 8, 0.25f, 3, 0, 0}};
static const TnCrtTensorInfo pooled_out[] = {
    {"sums", TN_CRT_I32, 1, dims_2, 8, 0.0f, 0, 0, 16}};
static const TnCrtPoolInfo pooled_ws[] = {{"arena", 32, 32}};
static const TnCrtPoolInfo pooled_cp[] = {{"weights", 8, 8}};
static const uint8_t pooled_weights[] = {1, 1, 2, 2, 0xff, 0xff, 3, 0};
static const uint8_t *const pooled_cdata[] = {pooled_weights};
static const char *const pooled_devs[] = {"counter"};
static const TnCrtModel pooled_model = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "pooled", "test",
    1, 1, pooled_in, pooled_out, 1, pooled_ws, 1, pooled_cp, pooled_cdata,
    1, pooled_devs, 8, 8, pooled_run};

/* acc: a streaming model, y = acc += x, acc (int32 x 4) in the state pool
 * starting at 10. */
static int32_t acc_run_state(void *const *inputs, void *const *outputs,
                             void *const *workspace, void *const *constants,
                             void *const *devices, void *state) {
  (void)workspace, (void)constants, (void)devices;
  const int32_t *x = inputs[0];
  int32_t *y = outputs[0], *acc = state;
  for (int i = 0; i < 4; i++) y[i] = acc[i] += x[i];
  return TN_CRT_OK;
}

static int32_t acc_reset(void *state) {
  int32_t *acc = state;
  for (int i = 0; i < 4; i++) acc[i] = 10;
  return TN_CRT_OK;
}

static int32_t never_run_stateless(void *const *inputs, void *const *outputs,
                                   void *const *workspace,
                                   void *const *constants,
                                   void *const *devices) {
  (void)inputs, (void)outputs, (void)workspace, (void)constants,
      (void)devices;
  return TN_CRT_NOT_BOUND;
}

static const TnCrtStatefulModel acc_model = {
    {TN_CRT_MODEL_STATE_MAGIC, TN_CRT_MODEL_ABI_VERSION, "acc", "test", 1, 1,
     inc_in, inc_out, 1, inc_ws, 0, NULL, NULL, 0, NULL, 4, 0,
     never_run_stateless},
    16, 64, acc_run_state, acc_reset};

static TnCrtModelEntry inc_entry = {&inc_model, NULL};
static TnCrtModelEntry pooled_entry = {&pooled_model, NULL};

/* As generated code does before main (and once more: a no-op). */
static void split_params(void);
__attribute__((constructor)) static void register_models(void) {
  split_params();
  tn_module_register_system(&inc_entry);
  tn_module_register_system(&pooled_entry);
  tn_module_register_system(&inc_entry);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const DLDevice kCpu = {kDLCPU, 0};

static TnObject *tensor_of(const int64_t *shape, int32_t ndim, uint8_t code,
                           uint8_t bits, const void *data) {
  DLDataType dt = {code, bits, 1};
  TnObject *t = TN_NONNULL(tn_tensor_empty(shape, ndim, dt, kCpu));
  if (data) memcpy(tn_tensor_dltensor(t)->data, data, (size_t)tn_tensor_nbytes(t));
  return t;
}

static TnObject *x_tensor(const int32_t *values) {
  static const int64_t shape[] = {1, 4};
  return tensor_of(shape, 2, kDLInt, 32, values);
}

static void *data_of(TnObject *t) {
  DLTensor *dl = tn_tensor_dltensor(t);
  return (uint8_t *)dl->data + dl->byte_offset;
}

/* ------------------------------------------------------------------------ */
/* Modules: the system library, inputs, outputs                             */
/* ------------------------------------------------------------------------ */

START_TEST(test_system_library_finds_models_by_name) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  ck_assert_int_eq(mod->type_index, TN_TYPE_MODULE);
  ck_assert_str_eq(tn_object_type_key(mod), "tn.Module");
  ck_assert_ptr_eq(tn_module_model(mod), &inc_model);
  ck_assert_int_eq(tn_module_num_inputs(mod), 1);
  ck_assert_int_eq(tn_module_num_outputs(mod), 1);
  ck_assert_str_eq(tn_module_input_info(mod, 0)->name, "x");
  ck_assert_str_eq(tn_module_output_info(mod, 0)->name, "y");
  ck_assert_int_eq(tn_module_input_index(mod, "x"), 0);
  tn_object_release(mod);

  ck_assert_ptr_null(tn_module_system("kws"));
  TN_EXPECT_ERROR("KeyError", "no model 'kws'", "'inc', 'pooled'");
  ck_assert_ptr_null(tn_module_system(NULL));
  TN_EXPECT_ERROR("ValueError", "NULL");
  /* registering with no model is ignored */
  tn_module_register_system(NULL);
}
END_TEST

START_TEST(test_zero_copy_and_copied_inputs) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  int32_t xs[4] = {1, 2, 3, 4};
  TnObject *x = x_tensor(xs);
  uint32_t refs = tn_object_strong_count(x);
  TN_OK(tn_module_set_input(mod, 0, x));
  /* aligned: the Module reads the tensor itself and keeps it alive */
  ck_assert_uint_eq(tn_object_strong_count(x), refs + 1);
  ((int32_t *)data_of(x))[0] = 100;
  TN_OK(tn_module_run(mod));
  TnObject *y = TN_NONNULL(tn_module_get_output(mod, 0));
  const int32_t *yv = data_of(y);
  ck_assert_int_eq(yv[0], 101);
  ck_assert_int_eq(yv[3], 5);

  /* misaligned for int32: copied once, the tensor not kept */
  static const int64_t bytes17[] = {17};
  TnObject *raw = tensor_of(bytes17, 1, kDLUInt, 8, NULL);
  DLDataType i32 = {kDLInt, 32, 1};
  static const int64_t shape[] = {1, 4};
  TnObject *odd = TN_NONNULL(tn_tensor_view(raw, shape, NULL, 2, i32, 1));
  ck_assert_uint_ne((uintptr_t)data_of(odd) % 4, 0);
  int32_t vals[4] = {-10, 20, -30, 40};
  memcpy(data_of(odd), vals, sizeof vals);
  refs = tn_object_strong_count(odd);
  TN_OK(tn_module_set_input(mod, 0, odd));
  ck_assert_uint_eq(tn_object_strong_count(odd), refs);
  ck_assert_uint_eq(tn_object_strong_count(x), 1); /* let go of */
  memset(data_of(odd), 0, sizeof vals); /* too late to matter */
  TN_OK(tn_module_run(mod));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(yv[i], vals[i] + 1);

  /* an output fed back in is copied: the run writes where it reads */
  TN_OK(tn_module_set_input(mod, 0, y));
  ck_assert_uint_eq(tn_object_strong_count(y), 1);
  TN_OK(tn_module_run(mod));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(yv[i], vals[i] + 2);

  /* raw bytes are copied */
  int32_t more[4] = {7, 7, 7, 7};
  TN_OK(tn_module_set_input_bytes(mod, 0, more, sizeof more));
  TN_OK(tn_module_run(mod));
  int32_t got[4];
  TN_OK(tn_module_copy_output(mod, 0, got, sizeof got));
  ck_assert_int_eq(got[2], 8);
  ck_assert_int_eq(tn_module_copy_output(mod, 0, got, 8), -1);
  TN_EXPECT_ERROR("ValueError", "output 'y' has 16 bytes, got a buffer of 8");
  ck_assert_int_eq(tn_module_set_input_bytes(mod, 0, more, 3), -1);
  TN_EXPECT_ERROR("ValueError", "input 'x' takes 16 bytes, got 3");

  tn_object_release(odd);
  tn_object_release(raw);
  tn_object_release(x);
  tn_object_release(y);
  tn_object_release(mod);
}
END_TEST

START_TEST(test_outputs_keep_the_module_alive) {
  int64_t live = tn_object_live_count();
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  int32_t xs[4] = {5, 6, 7, 8};
  TN_OK(tn_module_set_input_bytes(mod, 0, xs, sizeof xs));
  TN_OK(tn_module_run(mod));
  TnObject *y = TN_NONNULL(tn_module_get_output(mod, 0));
  TnObject *y2 = TN_NONNULL(tn_module_get_output(mod, 0));
  ck_assert_ptr_eq(data_of(y), data_of(y2)); /* views of one buffer */
  ck_assert_uint_eq(tn_object_strong_count(mod), 3);
  tn_object_release(mod);
  tn_object_release(y2);
  /* the Module is gone for its user, its buffer lives on under y */
  ck_assert_int_eq(((int32_t *)data_of(y))[3], 9);
  DLTensor *dl = tn_tensor_dltensor(y);
  ck_assert_int_eq(dl->ndim, 2);
  ck_assert_int_eq(dl->shape[1], 4);
  ck_assert_int_eq(dl->dtype.code, kDLInt);
  ck_assert_int_eq(tn_object_live_count(), live + 2); /* y and the Module */
  tn_object_release(y);
  ck_assert_int_eq(tn_object_live_count(), live);
}
END_TEST

START_TEST(test_input_errors_name_the_model_and_input) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  static const int64_t s14[] = {1, 4}, s4[] = {4}, s18[] = {1, 8};
  TnObject *f32 = tensor_of(s14, 2, kDLFloat, 32, NULL);
  ck_assert_int_eq(tn_module_set_input(mod, 0, f32), -1);
  TN_EXPECT_ERROR("TypeError", "model 'inc', input 'x' is int32, got float32");
  TnObject *flat = tensor_of(s4, 1, kDLInt, 32, NULL);
  ck_assert_int_eq(tn_module_set_input(mod, 0, flat), -1);
  TN_EXPECT_ERROR("ValueError", "input 'x' has shape [1, 4], got [4]");
  TnObject *wide = tensor_of(s18, 2, kDLInt, 32, NULL);
  static const int64_t every_other[] = {8, 2};
  DLDataType i32 = {kDLInt, 32, 1};
  TnObject *t = TN_NONNULL(tn_tensor_view(wide, s14, every_other, 2, i32, 0));
  ck_assert_int_eq(tn_module_set_input(mod, 0, t), -1);
  TN_EXPECT_ERROR("ValueError", "not compact");
  ck_assert_int_eq(tn_module_set_input(mod, 1, flat), -1);
  TN_EXPECT_ERROR("IndexError", "model 'inc' has 1 inputs, no input 1");
  ck_assert_int_eq(tn_module_set_input(mod, 0, mod), -1);
  TN_EXPECT_ERROR("TypeError", "expected a tn.Tensor, got tn.Module");
  ck_assert_int_eq(tn_module_input_index(mod, "input_1"), -1);
  TN_EXPECT_ERROR("KeyError", "model 'inc' has no input 'input_1'", "'x'");
  ck_assert_int_eq(tn_module_set_input(f32, 0, flat), -1);
  TN_EXPECT_ERROR("TypeError", "expected a tn.Module, got tn.Tensor");
  ck_assert_int_eq(tn_module_num_inputs(NULL), -1);
  TN_EXPECT_ERROR("TypeError", "got NULL");
  ck_assert_ptr_null(tn_module_output_info(mod, 3));
  TN_EXPECT_ERROR("IndexError", "no output 3");
  /* nothing set yet: no run, no outputs */
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "model 'inc': input 'x' (0) is not set");
  ck_assert_ptr_null(tn_module_get_output(mod, 0));
  TN_EXPECT_ERROR("RuntimeError", "has no outputs to give: it has not run");
  tn_object_release(t);
  tn_object_release(wide);
  tn_object_release(flat);
  tn_object_release(f32);
  tn_object_release(mod);
}
END_TEST

START_TEST(test_a_failed_run_names_the_crt_status) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  int32_t bad[4] = {0, INT32_MAX, 0, 0};
  TN_OK(tn_module_set_input_bytes(mod, 0, bad, sizeof bad));
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "model 'inc': run failed: OVERFLOW (",
                  "overflow)");
  ck_assert_ptr_null(tn_module_get_output(mod, 0));
  TN_EXPECT_ERROR("RuntimeError", "the last run failed");
  bad[1] = 1;
  TN_OK(tn_module_set_input_bytes(mod, 0, bad, sizeof bad));
  TN_OK(tn_module_run(mod));
  double ms[3] = {-1, -1, -1};
  TN_OK(tn_module_time(mod, 4, 3, ms));
  for (int i = 0; i < 3; i++) ck_assert(ms[i] >= 0 && ms[i] < 1000);
  ck_assert_int_eq(tn_module_time(mod, 0, 3, ms), -1);
  TN_EXPECT_ERROR("ValueError", "at least 1");
  tn_object_release(mod);
}
END_TEST

START_TEST(test_run_with_reads_inputs_for_one_call) {
  int64_t live = tn_object_live_count();
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  _Alignas(8) int32_t xs[5] = {10, 20, 30, 40, 50};
  const void *data[] = {xs};
  size_t nbytes[] = {16};
  /* the first run reads xs in place, and the Module forgets it after */
  uint32_t lent = 7;
  TN_OK(tn_module_run_with(mod, 1, data, nbytes, &lent));
  ck_assert_uint_eq(lent, 1);
  size_t n = 0;
  const int32_t *y = tn_module_output_data(mod, 0, &n);
  ck_assert_ptr_nonnull(y);
  ck_assert_uint_eq(n, 16);
  ck_assert_int_eq(y[0], 11);
  ck_assert_int_eq(y[3], 41);
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "input 'x' (0) is not set");
  /* misaligned memory is copied, and so stays set */
  const void *odd[] = {(const uint8_t *)xs + 2};
  TN_OK(tn_module_run_with(mod, 1, odd, nbytes, &lent));
  ck_assert_uint_eq(lent, 0);
  int32_t first;
  memcpy(&first, (const uint8_t *)xs + 2, sizeof first);
  ck_assert_int_eq(((const int32_t *)tn_module_output_data(mod, 0, NULL))[0],
                   first + 1);
  TN_OK(tn_module_run(mod));
  /* none given: the inputs as set; a zero-copy tensor stays set */
  TnObject *x = x_tensor(xs + 1);
  TN_OK(tn_module_set_input(mod, 0, x));
  ck_assert_uint_eq(tn_object_strong_count(x), 2);
  TN_OK(tn_module_run_with(mod, 0, NULL, NULL, NULL));
  ck_assert_int_eq(((const int32_t *)tn_module_output_data(mod, 0, NULL))[0], 21);
  /* giving it in place replaces it: the tensor is let go */
  TN_OK(tn_module_run_with(mod, 1, data, nbytes, NULL));
  ck_assert_uint_eq(tn_object_strong_count(x), 1);
  /* errors name the model, the input and the sizes */
  size_t short_[] = {12};
  ck_assert_int_eq(tn_module_run_with(mod, 1, data, short_, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "model 'inc', input 'x' takes 16 bytes, got 12");
  const void *none[] = {NULL};
  ck_assert_int_eq(tn_module_run_with(mod, 1, none, nbytes, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "got 16 (NULL)");
  ck_assert_int_eq(tn_module_run_with(mod, 2, data, nbytes, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "model 'inc' has 1 inputs, got 2");
  ck_assert_int_eq(tn_module_run_with(mod, 1, NULL, nbytes, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "NULL data");
  ck_assert_int_eq(tn_module_run_with(x, 0, NULL, NULL, NULL), -1);
  TN_EXPECT_ERROR("TypeError", "expected a tn.Module, got tn.Tensor");
  /* a failed run leaves no output to read */
  int32_t bad[4] = {0, INT32_MAX, 0, 0};
  const void *bdata[] = {bad};
  ck_assert_int_eq(tn_module_run_with(mod, 1, bdata, nbytes, &lent), -1);
  ck_assert_uint_eq(lent, 1); /* read in place, and unset, though it failed */
  TN_EXPECT_ERROR("RuntimeError", "run failed: OVERFLOW");
  ck_assert_ptr_null(tn_module_output_data(mod, 0, &n));
  TN_EXPECT_ERROR("RuntimeError", "the last run failed");
  ck_assert_ptr_null(tn_module_output_data(mod, 1, &n));
  TN_EXPECT_ERROR("IndexError", "no output 1");
  tn_object_release(x);
  tn_object_release(mod);
  ck_assert_int_eq(tn_object_live_count(), live);
  DLDataType dt = {0, 0, 0};
  ck_assert_int_eq(tn_module_dtype(TN_CRT_I8, &dt), 1);
  ck_assert(dt.code == kDLInt && dt.bits == 8 && dt.lanes == 1);
  ck_assert_int_eq(tn_module_dtype(TN_CRT_BOOL + 1, &dt), 0);
  ck_assert_int_eq(tn_module_dtype(-1, &dt), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Threads                                                                   */
/* ------------------------------------------------------------------------ */

static gpointer run_in_thread(gpointer mod) {
  int rc = tn_module_run(mod);
  tn_error_set_raised(NULL);
  return GINT_TO_POINTER(rc == 0 ? 1 : 2);
}

START_TEST(test_a_second_thread_gets_an_error_not_a_race) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  int32_t xs[4] = {1, 1, 1, 1};
  TN_OK(tn_module_set_input_bytes(mod, 0, xs, sizeof xs));
  atomic_store(&g_hold, 1);
  GThread *th = g_thread_new("runner", run_in_thread, mod);
  while (!atomic_load(&g_inside)) g_usleep(100);
  /* the runner is inside the model: every use from here is refused */
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "model 'inc': the Module is in use by "
                  "another thread");
  ck_assert_int_eq(tn_module_set_input_bytes(mod, 0, xs, sizeof xs), -1);
  TN_EXPECT_ERROR("RuntimeError", "in use by another thread");
  ck_assert_ptr_null(tn_module_get_output(mod, 0));
  TN_EXPECT_ERROR("RuntimeError", "in use by another thread");
  atomic_store(&g_hold, 0);
  ck_assert_int_eq(GPOINTER_TO_INT(g_thread_join(th)), 1);
  TnObject *y = TN_NONNULL(tn_module_get_output(mod, 0));
  ck_assert_int_eq(((int32_t *)data_of(y))[0], 2);
  tn_object_release(y);
  tn_object_release(mod);
}
END_TEST

/* Modules of one model on many threads at once, each its own. */
static gpointer own_module(gpointer seed) {
  int ok = 1;
  TnObject *mod = tn_module_system("inc");
  for (int32_t k = 0; mod && k < 200 && ok; k++) {
    int32_t xs[4] = {k, GPOINTER_TO_INT(seed), -k, 0}, ys[4];
    ok = tn_module_set_input_bytes(mod, 0, xs, sizeof xs) == 0 &&
         tn_module_run(mod) == 0 &&
         tn_module_copy_output(mod, 0, ys, sizeof ys) == 0 &&
         ys[0] == k + 1 && ys[1] == GPOINTER_TO_INT(seed) + 1;
  }
  tn_object_release(mod);
  tn_error_set_raised(NULL);
  return GINT_TO_POINTER(ok && mod);
}

START_TEST(test_modules_on_many_threads) {
  GThread *th[4];
  for (int i = 0; i < 4; i++)
    th[i] = g_thread_new("own", own_module, GINT_TO_POINTER(i * 1000));
  for (int i = 0; i < 4; i++) ck_assert(GPOINTER_TO_INT(g_thread_join(th[i])));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Threads: calls run in parts                                               */
/* ------------------------------------------------------------------------ */

/* "split": what a host archive's code is, by hand: an int8 3x3 convolution
 * (SAME, [1, 20, 20, 8] -> [1, 20, 20, 16], per-channel requantization)
 * and a dense layer over the first 512 of its outputs (48 features: three
 * blocks of 16), each called through tn_crt_call_split, so that the
 * parallel hook a Module with threads sets in libtvmnode's crt (the one
 * this program calls) runs them in parts. Weights, biases and multipliers
 * are random, made once. */
enum { SH = 20, SW = 20, SCI = 8, SCO = 16, SK = 512, SN = 48 };
static int8_t s_w[3 * 3 * SCI * SCO], s_dw[SN * SK];
static int32_t s_bias[SCO], s_mult[SCO], s_shift[SCO], s_dbias[SN],
    s_dmult[SN], s_dshift[SN];
static TnCrtCallConvS8 s_conv;
static TnCrtPoolInfo split_ws[] = {{"scratch", 0, 64}};
static TnCrtCallDenseS8 s_dense;
static size_t s_conv_scratch, s_dense_scratch;

static void split_params(void) {
  GRand *r = g_rand_new_with_seed(29);
  for (size_t i = 0; i < sizeof s_w; i++) s_w[i] = (int8_t)g_rand_int_range(r, -127, 128);
  for (size_t i = 0; i < sizeof s_dw; i++) s_dw[i] = (int8_t)g_rand_int_range(r, -127, 128);
  for (int i = 0; i < SCO; i++) {
    s_bias[i] = g_rand_int_range(r, -2000, 2000);
    s_mult[i] = g_rand_int_range(r, 1 << 30, INT32_MAX);
    s_shift[i] = -g_rand_int_range(r, 6, 9);
  }
  for (int i = 0; i < SN; i++) {
    s_dbias[i] = g_rand_int_range(r, -2000, 2000);
    s_dmult[i] = g_rand_int_range(r, 1 << 30, INT32_MAX);
    s_dshift[i] = -g_rand_int_range(r, 8, 11);
  }
  g_rand_free(r);
  TnCrtConv2d *g = &s_conv.g;
  *g = (TnCrtConv2d){.batch = 1, .in_h = SH, .in_w = SW, .in_c = SCI,
                     .out_h = SH, .out_w = SW, .out_c = SCO, .k_h = 3,
                     .k_w = 3, .stride_h = 1, .stride_w = 1,
                     .dilation_h = 1, .dilation_w = 1, .pad_top = 1,
                     .pad_left = 1, .groups = 1,
                     .in_strides = {SH * SW * SCI, SW * SCI, SCI, 1},
                     .w_strides = {3 * SCI * SCO, SCI * SCO, SCO, 1},
                     .out_strides = {SH * SW * SCO, SW * SCO, SCO, 1}};
  s_conv.q = (TnCrtQuant){.input_offset = 3, .output_offset = -5,
                          .act_min = -128, .act_max = 127, .per_channel = 1,
                          .channels = SCO, .multiplier = s_mult,
                          .shift = s_shift};
  s_conv.has_bias = 1;
  s_dense.d = (TnCrtDense){.batch = 1, .in_features = SK, .out_features = SN,
                           .w_stride_n = SK, .w_stride_k = 1};
  s_dense.q = (TnCrtQuant){.input_offset = -7, .output_offset = 2,
                           .act_min = -128, .act_max = 127, .per_channel = 1,
                           .channels = SN, .multiplier = s_dmult,
                           .shift = s_dshift};
  s_dense.has_bias = 1;
  s_conv_scratch = tn_crt_conv2d_s8_scratch_size(g);
  s_dense_scratch = tn_crt_dense_s8_scratch_size(&s_dense.d);
  split_ws[0].size = (uint32_t)MAX(s_conv_scratch, s_dense_scratch) + 64;
}

static int32_t split_run(void *const *inputs, void *const *outputs,
                         void *const *workspace, void *const *constants,
                         void *const *devices) {
  (void)constants, (void)devices;
  const void *cin[3] = {inputs[0], s_w, s_bias};
  int32_t st = tn_crt_call_split(TN_CRT_SPLIT_CONV2D_S8, tn_crt_call_conv2d_s8,
                                 &s_conv, 3, cin, outputs[0], workspace[0],
                                 s_conv_scratch);
  if (st != TN_CRT_OK) return st;
  const void *din[3] = {outputs[0], s_dw, s_dbias};
  return tn_crt_call_split(TN_CRT_SPLIT_DENSE_S8, tn_crt_call_dense_s8,
                           &s_dense, 3, din, outputs[1], workspace[0],
                           s_dense_scratch);
}

static const int32_t split_in_dims[] = {1, SH, SW, SCI},
                     split_out_dims[] = {1, SH, SW, SCO},
                     split_d_dims[] = {1, SN};
static const TnCrtTensorInfo split_in[] = {
    {"x", TN_CRT_I8, 4, split_in_dims, SH * SW * SCI, 0.5f, -3, -1, 0}};
static const TnCrtTensorInfo split_out[] = {
    {"conv", TN_CRT_I8, 4, split_out_dims, SH * SW * SCO, 0.25f, -5, -1, 0},
    {"dense", TN_CRT_I8, 2, split_d_dims, SN, 0.25f, 2, -1, 0}};
static const TnCrtModel split_model = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "split", "test",
    1, 2, split_in, split_out, 1, split_ws, 0, NULL, NULL, 0, NULL,
    (int64_t)SH * SW * SCO * 9 * SCI + SN * SK, 0, split_run};

/* The two layers called whole, as the reference. */
static void split_reference(const int8_t *x, int8_t *conv, int8_t *dense) {
  size_t ss = MAX(s_conv_scratch, s_dense_scratch);
  void *scratch = g_malloc0(ss + 1);
  const void *cin[3] = {x, s_w, s_bias};
  ck_assert_int_eq(tn_crt_call_conv2d_s8(&s_conv, cin, conv, scratch,
                                         s_conv_scratch), TN_CRT_OK);
  const void *din[3] = {conv, s_dw, s_dbias};
  ck_assert_int_eq(tn_crt_call_dense_s8(&s_dense, din, dense, scratch,
                                        s_dense_scratch), TN_CRT_OK);
  g_free(scratch);
}

START_TEST(test_threads_run_the_calls_in_parts_to_the_same_bytes) {
  int8_t x[SH * SW * SCI], other[SH * SW * SCI], want_c[SH * SW * SCO],
      want_d[SN], got_c[SH * SW * SCO], got_d[SN];
  GRand *r = g_rand_new_with_seed(3);
  TnObject *mod = TN_NONNULL(tn_module_from_model(&split_model));
  ck_assert_int_eq(tn_module_threads(mod), 1);
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < sizeof x; i++) {
      x[i] = (int8_t)g_rand_int_range(r, -128, 128);
      other[i] = (int8_t)(-1 - x[i]);
    }
    split_reference(x, want_c, want_d);
    for (int64_t threads = 1; threads <= 4; threads++) {
      TN_OK(tn_module_set_threads(mod, threads));
      ck_assert_int_eq(tn_module_threads(mod), (int32_t)threads);
      for (int again = 0; again < 2; again++) {
        /* another input first, run whole, so that an output part a run
         * in parts left out would hold that run's values */
        TN_OK(tn_module_set_threads(mod, 1));
        TN_OK(tn_module_set_input_bytes(mod, 0, other, sizeof other));
        TN_OK(tn_module_run(mod));
        TN_OK(tn_module_set_threads(mod, threads));
        TN_OK(tn_module_set_input_bytes(mod, 0, x, sizeof x));
        TN_OK(tn_module_run(mod));
        /* both calls cut, or neither */
        ck_assert_int_eq(tn_module_split_calls(mod), threads > 1 ? 2 : 0);
        TN_OK(tn_module_copy_output(mod, 0, got_c, sizeof got_c));
        TN_OK(tn_module_copy_output(mod, 1, got_d, sizeof got_d));
        ck_assert_msg(memcmp(got_c, want_c, sizeof got_c) == 0,
                      "conv, %d threads, round %d", (int)threads, round);
        ck_assert_msg(memcmp(got_d, want_d, sizeof got_d) == 0,
                      "dense, %d threads, round %d", (int)threads, round);
      }
    }
  }
  TN_OK(tn_module_set_threads(mod, 1));
  g_rand_free(r);
  tn_object_release(mod);
}
END_TEST

/* The comparison above sees a part that did not run: the parts of the
 * convolution but the last one, into a cleared output, differ from the
 * whole call (the broken-on-purpose check of the test). */
START_TEST(test_a_part_left_out_is_seen) {
  int8_t x[SH * SW * SCI], want_c[SH * SW * SCO], want_d[SN],
      got[SH * SW * SCO];
  for (size_t i = 0; i < sizeof x; i++) x[i] = (int8_t)(i * 37 + 11);
  split_reference(x, want_c, want_d);
  int32_t n = tn_crt_split_count(TN_CRT_SPLIT_CONV2D_S8, &s_conv, 3);
  ck_assert_int_eq(n, 3);
  const void *cin[3] = {x, s_w, s_bias};
  TnCrtSplit c = {TN_CRT_SPLIT_CONV2D_S8, 3, tn_crt_call_conv2d_s8, &s_conv,
                  cin, got, s_conv_scratch, tn_crt_split_count,
                  tn_crt_split_run};
  void *scratch = g_malloc0(s_conv_scratch + 1);
  for (int32_t skip = -1; skip < n; skip++) {
    memset(got, 0, sizeof got);
    for (int32_t i = 0; i < n; i++)
      if (i != skip)
        ck_assert_int_eq(tn_crt_split_run(&c, i, n, scratch, s_conv_scratch),
                         TN_CRT_OK);
    ck_assert_int_eq(memcmp(got, want_c, sizeof got) == 0, skip < 0);
  }
  g_free(scratch);
  /* what is not cut: batch 2, one row, an unknown kind, fewer than 2 */
  TnCrtCallConvS8 two = s_conv;
  two.g.batch = 2;
  ck_assert_int_eq(tn_crt_split_count(TN_CRT_SPLIT_CONV2D_S8, &two, 2), 0);
  two = s_conv;
  two.g.out_h = 1;
  ck_assert_int_eq(tn_crt_split_count(TN_CRT_SPLIT_CONV2D_S8, &two, 2), 0);
  ck_assert_int_eq(tn_crt_split_count(99, &s_conv, 2), 0);
  ck_assert_int_eq(tn_crt_split_count(TN_CRT_SPLIT_CONV2D_S8, &s_conv, 1), 0);
  /* at most as many parts as rows or blocks of 16 */
  ck_assert_int_eq(tn_crt_split_count(TN_CRT_SPLIT_CONV2D_S8, &s_conv, 64), SH);
  ck_assert_int_eq(tn_crt_split_count(TN_CRT_SPLIT_DENSE_S8, &s_dense, 64), 3);
}
END_TEST

START_TEST(test_bad_thread_counts_are_named) {
  TnObject *mod = TN_NONNULL(tn_module_from_model(&split_model));
  const int64_t bad[] = {0, -1, 65, INT64_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_int_eq(tn_module_set_threads(mod, bad[i]), -1);
    TN_EXPECT_ERROR("ValueError", "tn_module_set_threads: model 'split': "
                    "argument n (threads): expected 1 to 64");
  }
  ck_assert_int_eq(tn_module_threads(mod), 1);
  ck_assert_int_eq(tn_module_set_threads(NULL, 2), -1);
  TN_EXPECT_ERROR("TypeError", "tn_module_set_threads");
  ck_assert_int_eq(tn_module_threads(NULL), -1);
  TN_EXPECT_ERROR("TypeError", "tn_module_threads");
  TN_OK(tn_module_set_threads(mod, 64)); /* the most; freed with mod */
  tn_object_release(mod);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Pools, constants, devices                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(test_inputs_and_outputs_in_the_pool) {
  TnObject *mod = TN_NONNULL(tn_module_system("pooled"));
  static const int64_t s24[] = {2, 4};
  const int8_t q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  TnObject *qt = tensor_of(s24, 2, kDLInt, 8, q);
  TN_OK(tn_module_set_input(mod, 0, qt));
  ck_assert_uint_eq(tn_object_strong_count(qt), 1); /* copied into the pool */
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "device 'counter' (0) is not set");
  int calls = 0;
  TN_OK(tn_module_set_device(mod, 0, &calls));
  TN_OK(tn_module_run(mod));
  ck_assert_int_eq(calls, 1);
  TnObject *y = TN_NONNULL(tn_module_get_output(mod, 0));
  const int32_t *sums = data_of(y);
  ck_assert_int_eq(sums[0], 1 + 2 + 6 + 8);     /* weights 1 1 2 2 */
  ck_assert_int_eq(sums[1], -5 - 6 + 21);       /* weights -1 -1 3 0 */
  ck_assert_uint_eq((uintptr_t)sums % 32, 16);  /* pool base (32) + 16 */

  /* the caller's workspace: checked, then used */
  _Alignas(64) uint8_t mine[64] = {0};
  ck_assert_int_eq(tn_module_set_workspace(mod, 0, mine, 16), -1);
  TN_EXPECT_ERROR("ValueError", "pool 'arena' needs 32 bytes, got 16");
  ck_assert_int_eq(tn_module_set_workspace(mod, 0, mine + 8, 48), -1);
  TN_EXPECT_ERROR("ValueError", "aligned to 32 bytes");
  ck_assert_int_eq(tn_module_set_workspace(mod, 1, mine, 64), -1);
  TN_EXPECT_ERROR("IndexError", "no pool 1");
  TN_OK(tn_module_set_workspace(mod, 0, mine, sizeof mine));
  /* the input lived in the old pool */
  ck_assert_int_eq(tn_module_run(mod), -1);
  TN_EXPECT_ERROR("RuntimeError", "input 'q' (0) is not set");
  ck_assert_ptr_null(tn_module_get_output(mod, 0));
  TN_EXPECT_ERROR("RuntimeError", "workspace changed");
  TN_OK(tn_module_set_input_bytes(mod, 0, q, sizeof q));
  ck_assert_mem_eq(mine, q, sizeof q);
  TN_OK(tn_module_run(mod)); /* the device survived the rebinding */
  ck_assert_int_eq(calls, 2);
  ck_assert_int_eq(((int32_t *)(mine + 16))[0], 17);
  /* the old view still reads the Module's own pool, kept to the end */
  ck_assert_int_eq(sums[0], 17);
  TN_OK(tn_module_set_workspace(mod, 0, NULL, 0)); /* back to its own */
  ck_assert_int_eq(tn_module_set_device(mod, 0, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "device 0 is NULL");
  tn_object_release(y);
  tn_object_release(qt);
  tn_object_release(mod);
}
END_TEST

START_TEST(test_a_workspace_given_as_a_tensor) {
  int64_t live = tn_object_live_count();
  TnObject *mod = TN_NONNULL(tn_module_system("pooled"));
  int calls = 0;
  TN_OK(tn_module_set_device(mod, 0, &calls));
  static const int64_t s64[] = {64}, s8[] = {8}, s24[] = {2, 4};
  TnObject *pool = tensor_of(s64, 1, kDLUInt, 8, NULL);
  ck_assert_uint_eq((uintptr_t)data_of(pool) % 32, 0);
  TN_OK(tn_module_set_workspace_tensor(mod, 0, pool));
  ck_assert_uint_eq(tn_object_strong_count(pool), 2); /* the Module's */
  const int8_t q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  TN_OK(tn_module_set_input_bytes(mod, 0, q, sizeof q));
  ck_assert_mem_eq(data_of(pool), q, sizeof q); /* the input lives there */
  TN_OK(tn_module_run(mod));
  TnObject *y = TN_NONNULL(tn_module_get_output(mod, 0));
  ck_assert_ptr_eq(data_of(y), (uint8_t *)data_of(pool) + 16);
  ck_assert_uint_eq(tn_object_strong_count(pool), 3); /* and the view's */
  /* back to the Module's own pool: the view still reads the tensor */
  TN_OK(tn_module_set_workspace_tensor(mod, 0, NULL));
  ck_assert_uint_eq(tn_object_strong_count(pool), 2);
  ck_assert_int_eq(((int32_t *)data_of(y))[0], 17);
  tn_object_release(y);
  ck_assert_uint_eq(tn_object_strong_count(pool), 1);
  /* checked: size, alignment, kind, index */
  TnObject *small = tensor_of(s8, 1, kDLUInt, 8, NULL);
  ck_assert_int_eq(tn_module_set_workspace_tensor(mod, 0, small), -1);
  TN_EXPECT_ERROR("ValueError", "pool 'arena' needs 32 bytes, got 8");
  ck_assert_int_eq(tn_module_set_workspace_tensor(mod, 0, mod), -1);
  TN_EXPECT_ERROR("TypeError", "expected a tn.Tensor, got tn.Module");
  ck_assert_int_eq(tn_module_set_workspace_tensor(mod, 1, pool), -1);
  TN_EXPECT_ERROR("IndexError", "no pool 1");
  static const int64_t every_other[] = {8, 2};
  DLDataType i8 = {kDLInt, 8, 1};
  TnObject *wide = tensor_of(s64, 1, kDLInt, 8, NULL);
  TnObject *strided = TN_NONNULL(tn_tensor_view(wide, s24, every_other, 2, i8, 0));
  ck_assert_int_eq(tn_module_set_workspace_tensor(mod, 0, strided), -1);
  TN_EXPECT_ERROR("ValueError", "must be compact");
  /* the pool tensor lives on while the Module does, and no longer */
  TN_OK(tn_module_set_workspace_tensor(mod, 0, pool));
  tn_object_release(pool);
  TN_OK(tn_module_set_input_bytes(mod, 0, q, sizeof q));
  TN_OK(tn_module_run(mod));
  ck_assert_int_eq(calls, 2);
  tn_object_release(strided);
  tn_object_release(wide);
  tn_object_release(small);
  tn_object_release(mod);
  ck_assert_int_eq(tn_object_live_count(), live);
}
END_TEST

START_TEST(test_a_pool_may_not_overlap_what_a_run_reads) {
  TnObject *mod = TN_NONNULL(tn_module_system("inc"));
  static const int64_t s512[] = {512}, s14[] = {1, 4};
  TnObject *big = tensor_of(s512, 1, kDLUInt, 8, NULL);
  uint8_t *base = data_of(big);
  uint64_t off = (uint64_t)(-(uintptr_t)base % 128); /* the pool's alignment */
  DLDataType i32 = {kDLInt, 32, 1};
  TnObject *x = TN_NONNULL(tn_tensor_view(big, s14, NULL, 2, i32, off));
  TN_OK(tn_module_set_input(mod, 0, x)); /* read in place */
  ck_assert_int_eq(tn_module_set_workspace(mod, 0, base + off, 16), -1);
  TN_EXPECT_ERROR("ValueError", "model 'inc': pool 'scratch' overlaps an "
                  "input the Module reads in place");
  /* copied instead, the input no longer ties the memory */
  const int32_t xs[4] = {1, 2, 3, 4};
  TN_OK(tn_module_set_input_bytes(mod, 0, xs, sizeof xs));
  TN_OK(tn_module_set_workspace(mod, 0, base + off, 16));
  TN_OK(tn_module_run(mod));
  int32_t ys[4];
  TN_OK(tn_module_copy_output(mod, 0, ys, sizeof ys));
  ck_assert_int_eq(ys[3], 5);
  TN_OK(tn_module_set_workspace(mod, 0, NULL, 0));
  tn_object_release(x);
  tn_object_release(big);
  tn_object_release(mod);
}
END_TEST

START_TEST(test_describe) {
  TnObject *mod = TN_NONNULL(tn_module_system("pooled"));
  TnObject *d = TN_NONNULL(tn_module_describe(mod));
  TnAny v;
  TnAny key = tn_any_cstr("name");
  TN_OK(tn_map_get(d, &key, &v));
  const char *s;
  TN_OK(tn_any_as_str(&v, &s, NULL));
  ck_assert_str_eq(s, "pooled");
  tn_any_clear(&v);
  key = tn_any_cstr("workspace_bytes");
  TN_OK(tn_map_get(d, &key, &v));
  ck_assert_int_eq(v.v_int64, 32);
  key = tn_any_cstr("inputs");
  TN_OK(tn_map_get(d, &key, &v));
  const TnAny *in0 = tn_array_at(v.v_obj, 0);
  TnAny field, got;
  field = tn_any_cstr("dtype");
  TN_OK(tn_map_get(in0->v_obj, &field, &got));
  TN_OK(tn_any_as_str(&got, &s, NULL));
  ck_assert_str_eq(s, "int8");
  tn_any_clear(&got);
  field = tn_any_cstr("scale");
  TN_OK(tn_map_get(in0->v_obj, &field, &got));
  ck_assert_double_eq(got.v_float64, 0.25);
  field = tn_any_cstr("zero_point");
  TN_OK(tn_map_get(in0->v_obj, &field, &got));
  ck_assert_int_eq(got.v_int64, 3);
  field = tn_any_cstr("shape");
  TN_OK(tn_map_get(in0->v_obj, &field, &got));
  ck_assert_int_eq(((TnShapeObj *)got.v_obj)->data[1], 4);
  tn_any_clear(&got);
  tn_any_clear(&v);
  tn_object_release(d);
  tn_object_release(mod);
}
END_TEST

/* Descriptors this runtime must refuse before touching their memory. */
static int32_t never_run(void *const *a, void *const *b, void *const *c,
                         void *const *d, void *const *e) {
  (void)a, (void)b, (void)c, (void)d, (void)e;
  return TN_CRT_UNSUPPORTED;
}

START_TEST(test_a_streaming_model_keeps_its_state) {
  TnObject *mod = TN_NONNULL(tn_module_from_model(&acc_model.base));
  TnObject *d = TN_NONNULL(tn_module_describe(mod));
  TnAny key = tn_any_cstr("state_bytes");
  const TnAny *sb = tn_map_find(d, &key);
  ck_assert_ptr_nonnull(sb);
  ck_assert_int_eq(sb->v_int64, 16);
  tn_object_release(d);
  const int32_t x[4] = {1, 2, 3, 4};
  TN_OK(tn_module_set_input_bytes(mod, 0, x, sizeof x));
  /* the state starts at its initial values (10), each run adds x */
  int32_t want[4] = {10, 10, 10, 10};
  for (int r = 1; r <= 3; r++) {
    TN_OK(tn_module_run(mod));
    int32_t y[4];
    TN_OK(tn_module_copy_output(mod, 0, y, sizeof y));
    for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], want[i] + r * x[i]);
  }
  TN_OK(tn_module_reset(mod));
  TN_OK(tn_module_run(mod));
  int32_t y[4];
  TN_OK(tn_module_copy_output(mod, 0, y, sizeof y));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], 10 + x[i]);
  /* a new workspace keeps the state */
  void *ws = NULL;
  ck_assert_int_eq(posix_memalign(&ws, 128, 16), 0);
  TN_OK(tn_module_set_workspace(mod, 0, ws, 16));
  TN_OK(tn_module_set_input_bytes(mod, 0, x, sizeof x));
  TN_OK(tn_module_run(mod));
  TN_OK(tn_module_copy_output(mod, 0, y, sizeof y));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], 10 + 2 * x[i]);
  TN_OK(tn_module_set_workspace(mod, 0, NULL, 0));
  free(ws);
  tn_object_release(mod);
  /* a stateless model: reset does nothing */
  TnObject *inc = TN_NONNULL(tn_module_from_model(&inc_model));
  TN_OK(tn_module_reset(inc));
  tn_object_release(inc);
  ck_assert_int_eq(tn_module_reset(NULL), -1);
  TN_EXPECT_ERROR("TypeError", "tn_module_reset", "expected a tn.Module");
  /* a stateful descriptor without its functions is refused */
  TnCrtStatefulModel bad = acc_model;
  bad.reset = NULL;
  ck_assert_ptr_null(tn_module_from_model(&bad.base));
  TN_EXPECT_ERROR("ValueError", "stateful descriptor of model 'acc' is "
                  "malformed");
  bad = acc_model;
  bad.state_pool_alignment = 48;
  ck_assert_ptr_null(tn_module_from_model(&bad.base));
  TN_EXPECT_ERROR("ValueError", "alignment of 48");
}
END_TEST

START_TEST(test_malformed_descriptors_are_refused) {
  TnCrtModel m = inc_model;
  m.run = never_run;
  TnObject *ok = TN_NONNULL(tn_module_from_model(&m));
  int32_t xs[4] = {0};
  TN_OK(tn_module_set_input_bytes(ok, 0, xs, sizeof xs));
  ck_assert_int_eq(tn_module_run(ok), -1);
  TN_EXPECT_ERROR("RuntimeError", "run failed: UNSUPPORTED");
  tn_object_release(ok);

  m.magic = 0;
  ck_assert_ptr_null(tn_module_from_model(&m));
  TN_EXPECT_ERROR("ValueError", "not a model descriptor", "magic 0x00000000");
  m = inc_model;
  m.abi_version = 9;
  ck_assert_ptr_null(tn_module_from_model(&m));
  TN_EXPECT_ERROR("ValueError", "ABI version 9");
  TnCrtTensorInfo bad_in = inc_in[0];
  bad_in.nbytes = 15; /* disagrees with int32 [1, 4] */
  m = inc_model;
  m.inputs = &bad_in;
  ck_assert_ptr_null(tn_module_from_model(&m));
  TN_EXPECT_ERROR("ValueError", "model 'inc' is malformed");
  bad_in = inc_in[0];
  bad_in.dtype = 42;
  ck_assert_ptr_null(tn_module_from_model(&m));
  TN_EXPECT_ERROR("ValueError", "malformed");
  m = inc_model;
  m.num_inputs = TN_CRT_MAX_IO + 1;
  ck_assert_ptr_null(tn_module_from_model(&m));
  TN_EXPECT_ERROR("ValueError", "malformed");
  ck_assert_ptr_null(tn_module_from_model(NULL));
  TN_EXPECT_ERROR("ValueError", "NULL");
}
END_TEST

START_TEST(test_loading_what_is_not_a_model_library) {
  ck_assert_ptr_null(tn_module_load("/nonexistent/model.so", NULL));
  TN_EXPECT_ERROR("OSError", "cannot load '/nonexistent/model.so'");
  /* a library that is no model library: this one */
  Dl_info self;
  ck_assert(dladdr((void *)tn_module_load, &self) && self.dli_fname);
  ck_assert_ptr_null(tn_module_load(self.dli_fname, NULL));
  TN_EXPECT_ERROR("OSError", "holds no model", "tvmnode_module_models");
  /* a name without a slash is a file here, never one found on the
   * system's library path (whose constructors dlopen would run) */
  ck_assert_ptr_null(tn_module_load("libm.so.6", NULL));
  TN_EXPECT_ERROR("OSError", "cannot load 'libm.so.6': ./libm.so.6");
  ck_assert_ptr_null(tn_module_load(NULL, NULL));
  TN_EXPECT_ERROR("ValueError", "path is NULL");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The registry's view                                                       */
/* ------------------------------------------------------------------------ */

static int call(const char *name, const TnAny *args, int32_t n, TnAny *ret) {
  TnObject *f = TN_NONNULL(tn_func_get(name));
  *ret = tn_any_none();
  int rc = tn_func_call(f, args, n, ret);
  tn_object_release(f);
  return rc;
}

/* The host runtime registers itself at start-up (runtime/host/init.c):
 * every one of its functions is there before main, though nothing here
 * has called into it yet. tests/host_registers.sh checks the same from a
 * statically linked program. */
START_TEST(test_the_runtime_registers_itself) {
  size_t n = sizeof tn_test_host_functions / sizeof tn_test_host_functions[0];
  for (size_t i = 0; i < n; i++) {
    TnObject *f = tn_func_find(tn_test_host_functions[i]);
    ck_assert_msg(f != NULL, "%s is not registered", tn_test_host_functions[i]);
    tn_object_release(f);
  }
}
END_TEST

START_TEST(test_global_functions) {
  TnAny ret, args[3];
  args[0] = tn_any_cstr("inc");
  TN_OK(call("runtime.ModuleSystem", args, 1, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_MODULE);
  TnObject *mod = ret.v_obj;
  int32_t xs[4] = {3, 2, 1, 0};
  TnObject *x = x_tensor(xs);
  args[0] = tn_any_obj(mod);
  args[1] = tn_any_obj(x);
  TN_OK(call("runtime.ModuleInvoke", args, 2, &ret));
  ck_assert_int_eq(tn_array_size(ret.v_obj), 1);
  const TnAny *y = tn_array_at(ret.v_obj, 0);
  ck_assert_int_eq(((int32_t *)data_of(y->v_obj))[0], 4);
  tn_any_clear(&ret);

  args[1] = tn_any_cstr("x");
  args[2] = tn_any_obj(x);
  TN_OK(call("runtime.ModuleSetInput", args, 3, &ret));
  args[1] = tn_any_cstr("nope");
  ck_assert_int_eq(call("runtime.ModuleSetInput", args, 3, &ret), -1);
  TN_EXPECT_ERROR("KeyError", "no input 'nope'");
  args[1] = tn_any_int(0);
  args[2] = tn_any_float(1.0);
  ck_assert_int_eq(call("runtime.ModuleSetInput", args, 3, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "input 'x': expected a tn.Tensor or bytes, "
                  "got float");
  args[1] = tn_any_int(5);
  ck_assert_int_eq(call("runtime.ModuleSetInput", args, 3, &ret), -1);
  TN_EXPECT_ERROR("IndexError", "no input 5");
  TN_OK(call("runtime.ModuleRun", args, 1, &ret));
  args[1] = tn_any_int(0);
  TN_OK(call("runtime.ModuleGetOutput", args, 2, &ret));
  ck_assert_int_eq(((int32_t *)data_of(ret.v_obj))[1], 3);
  tn_any_clear(&ret);
  args[1] = tn_any_int(2);
  args[2] = tn_any_int(3);
  TN_OK(call("runtime.ModuleTime", args, 3, &ret));
  ck_assert_int_eq(tn_array_size(ret.v_obj), 3);
  ck_assert_int_eq(tn_array_at(ret.v_obj, 0)->type_index, TN_TYPE_FLOAT);
  tn_any_clear(&ret);
  TN_OK(call("runtime.ModuleDescribe", args, 1, &ret));
  ck_assert_int_eq(ret.type_index, TN_TYPE_MAP);
  tn_any_clear(&ret);
  args[0] = tn_any_obj(x);
  ck_assert_int_eq(call("runtime.ModuleRun", args, 1, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "must be a tn.Module, got tn.Tensor");
  args[0] = tn_any_cstr("/nonexistent.so");
  ck_assert_int_eq(call("runtime.ModuleLoad", args, 1, &ret), -1);
  TN_EXPECT_ERROR("OSError", "cannot load");
  tn_object_release(x);
  tn_object_release(mod);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameter files                                                           */
/* ------------------------------------------------------------------------ */

/* {"w": int8 [2, 3], "b": float32 [], "empty": int64 [0, 5], "m": bool [3],
 *  "t": float64 [2, 2] transposed (strided)} */
static TnObject *sample_params(void) {
  static const int64_t s23[] = {2, 3}, s05[] = {0, 5}, s3[] = {3}, s22[] = {2, 2};
  const int8_t w[6] = {-128, -1, 0, 1, 2, 127};
  const float b = 3.5f;
  const uint8_t mask[3] = {1, 0, 1};
  const double sq[4] = {1.0, 2.0, 3.0, 4.0};
  TnObject *base = tensor_of(s22, 2, kDLFloat, 64, sq);
  static const int64_t tstrides[] = {1, 2};
  DLDataType f64 = {kDLFloat, 64, 1};
  TnObject *vals[5] = {tensor_of(s23, 2, kDLInt, 8, w),
                       tensor_of(NULL, 0, kDLFloat, 32, &b),
                       tensor_of(s05, 2, kDLInt, 64, NULL),
                       tensor_of(s3, 1, kDLBool, 8, mask),
                       TN_NONNULL(tn_tensor_view(base, s22, tstrides, 2, f64, 0))};
  TnAny keys[5] = {tn_any_cstr("w"), tn_any_cstr("b"), tn_any_cstr("empty"),
                   tn_any_cstr("m"), tn_any_cstr("t")};
  TnAny va[5];
  for (int i = 0; i < 5; i++) va[i] = tn_any_obj(vals[i]);
  TnObject *map = TN_NONNULL(tn_map_new(keys, va, 5));
  for (int i = 0; i < 5; i++) tn_object_release(vals[i]);
  tn_object_release(base);
  return map;
}

static TnObject *saved(TnObject *map) { return TN_NONNULL(tn_params_save(map)); }

#define BYTES(b) ((uint8_t *)((TnStringObj *)(b))->data)
#define SIZE(b) ((size_t)((TnStringObj *)(b))->size)

START_TEST(test_params_round_trip) {
  ck_assert_uint_eq(tn_params_crc32(0, "123456789", 9), 0xCBF43926u);
  TnObject *map = sample_params(), *file = saved(map);
  ck_assert_mem_eq(BYTES(file), "TNPARAMS\1\0\0\0\5\0\0\0", 16);
  TnObject *back = TN_NONNULL(tn_params_load(BYTES(file), SIZE(file)));
  ck_assert_int_eq(tn_map_size(back), 5);
  const TnAny *k, *v;
  int64_t pos = tn_map_next(back, 0, &k, &v);
  const char *name;
  TN_OK(tn_any_as_str(k, &name, NULL));
  ck_assert_str_eq(name, "w"); /* file order */
  ck_assert_int_eq(((int8_t *)data_of(v->v_obj))[0], -128);
  pos = tn_map_next(back, pos + 1, &k, &v);
  ck_assert_float_eq(*(float *)data_of(v->v_obj), 3.5f);
  ck_assert_int_eq(tn_tensor_dltensor(v->v_obj)->ndim, 0);
  pos = tn_map_next(back, pos + 1, &k, &v);
  ck_assert_int_eq(tn_tensor_dltensor(v->v_obj)->shape[1], 5);
  pos = tn_map_next(back, pos + 1, &k, &v);
  ck_assert_int_eq(tn_tensor_dltensor(v->v_obj)->dtype.code, kDLBool);
  pos = tn_map_next(back, pos + 1, &k, &v);
  const double *t = data_of(v->v_obj); /* the transpose, in C order */
  ck_assert(t[0] == 1.0 && t[1] == 3.0 && t[2] == 2.0 && t[3] == 4.0);
  /* and again: the same bytes */
  TnObject *again = saved(back);
  ck_assert_uint_eq(SIZE(again), SIZE(file));
  ck_assert_mem_eq(BYTES(again), BYTES(file), SIZE(file));
  /* through the registry */
  TnAny arg = tn_any_obj(map), ret;
  TN_OK(call("runtime.SaveParams", &arg, 1, &ret));
  ck_assert_mem_eq(BYTES(ret.v_obj), BYTES(file), SIZE(file));
  arg = ret;
  TnAny ret2;
  TN_OK(call("runtime.LoadParams", &arg, 1, &ret2));
  ck_assert_int_eq(tn_map_size(ret2.v_obj), 5);
  tn_any_clear(&ret2);
  tn_any_clear(&ret);
  /* an empty map */
  TnObject *none = TN_NONNULL(tn_map_new(NULL, NULL, 0)), *ef = saved(none);
  ck_assert_uint_eq(SIZE(ef), 20);
  TnObject *eb = TN_NONNULL(tn_params_load(BYTES(ef), SIZE(ef)));
  ck_assert_int_eq(tn_map_size(eb), 0);
  tn_object_release(eb);
  tn_object_release(ef);
  tn_object_release(none);
  tn_object_release(again);
  tn_object_release(back);
  tn_object_release(file);
  tn_object_release(map);
}
END_TEST

START_TEST(test_params_reject_every_truncation_and_bit_flip) {
  TnObject *map = sample_params(), *file = saved(map);
  size_t n = SIZE(file);
  uint8_t *buf = malloc(n);
  memcpy(buf, BYTES(file), n);
  for (size_t len = 0; len < n; len++) {
    ck_assert_ptr_null(tn_params_load(buf, len));
    TN_EXPECT_ERROR("ValueError", "tn_params_load: ");
  }
  for (size_t i = 0; i < n; i++)
    for (int bit = 0; bit < 8; bit++) {
      buf[i] ^= (uint8_t)(1 << bit);
      ck_assert_ptr_null(tn_params_load(buf, n));
      TN_EXPECT_ERROR("ValueError", i < 8 ? "bad magic" : "checksum mismatch");
      buf[i] ^= (uint8_t)(1 << bit);
    }
  free(buf);
  tn_object_release(file);
  tn_object_release(map);
}
END_TEST

/* A file of one entry with fields set by the caller, its CRC correct. */
typedef struct {
  uint8_t bytes[256];
  size_t n;
} File;

static void put(File *f, const void *p, size_t n) {
  memcpy(f->bytes + f->n, p, n);
  f->n += n;
}

static void put_u(File *f, uint64_t v, int width) {
  for (int k = 0; k < width; k++) f->bytes[f->n++] = (uint8_t)(v >> 8 * k);
}

static void seal(File *f) { put_u(f, tn_params_crc32(0, f->bytes, f->n), 4); }

static void header(File *f, uint32_t version, uint32_t count) {
  f->n = 0;
  put(f, "TNPARAMS", 8);
  put_u(f, version, 4);
  put_u(f, count, 4);
}

/* name "p", dtype (code, bits, lanes), shape, data bytes given and written */
static void entry(File *f, const char *name, int code, int bits, int lanes,
                  int ndim, const int64_t *shape, uint64_t nbytes,
                  size_t written) {
  put_u(f, strlen(name), 4);
  put(f, name, strlen(name));
  put_u(f, (uint64_t)code, 1);
  put_u(f, (uint64_t)bits, 1);
  put_u(f, (uint64_t)lanes, 2);
  put_u(f, (uint64_t)ndim, 4);
  for (int d = 0; d < ndim; d++) put_u(f, (uint64_t)shape[d], 8);
  put_u(f, nbytes, 8);
  for (size_t k = 0; k < written; k++) put_u(f, k, 1);
}

static void expect_load_error(File *f, const char *what) {
  ck_assert_ptr_null(tn_params_load(f->bytes, f->n));
  TN_EXPECT_ERROR("ValueError", what);
}

START_TEST(test_params_name_what_is_wrong) {
  File f;
  static const int64_t s2[] = {2}, neg[] = {-1}, huge[] = {INT64_MAX / 2, 4};
  static const int64_t empty_but_huge[] = {0, INT64_MAX / 2, 4}; /* tn.Tensor's rule */
  /* files of one entry "p": (dtype, shape, data size, bytes written, bytes
   * after it) and what loading must say (NULL: it loads) */
  static const struct {
    int code, bits, lanes, ndim;
    const int64_t *shape;
    uint64_t nbytes;
    size_t written, after;
    const char *error;
  } cases[] = {
      {kDLInt, 8, 1, 1, s2, 2, 2, 0, NULL},
      {kDLUInt, 16, 1, 1, s2, 4, 4, 0,
       "entry 0 ('p'): unsupported dtype (type code 1, 16 bits, 1 lanes)"},
      {kDLInt, 8, 4, 1, s2, 8, 8, 0, "4 lanes"},
      {kDLInt, 8, 1, 1, neg, 0, 0, 0, "dimension 0 is negative (-1)"},
      {kDLFloat, 32, 1, 2, huge, 0, 0, 0, "entry 0 ('p'): the shape overflows"},
      {kDLInt, 16, 1, 3, empty_but_huge, 0, 0, 0, "the shape overflows"},
      {kDLInt, 8, 1, 1, s2, 3, 3, 0,
       "3 data bytes, but its shape and dtype need 2"},
      {kDLInt, 8, 1, 1, s2, 2, 2, 1, "1 trailing bytes after 1 tensors"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    header(&f, 1, 1);
    entry(&f, "p", cases[k].code, cases[k].bits, cases[k].lanes,
          cases[k].ndim, cases[k].shape, cases[k].nbytes, cases[k].written);
    put_u(&f, 0, (int)cases[k].after);
    seal(&f);
    if (cases[k].error) {
      expect_load_error(&f, cases[k].error);
    } else {
      tn_object_release(TN_NONNULL(tn_params_load(f.bytes, f.n)));
    }
  }
  header(&f, 2, 1);
  entry(&f, "p", kDLInt, 8, 1, 1, s2, 2, 2);
  seal(&f);
  expect_load_error(&f, "version 2, expected 1");
  header(&f, 1, 1000);
  seal(&f);
  expect_load_error(&f, "1000 tensors, but 0 bytes hold at most 0");
  header(&f, 1, 2);
  entry(&f, "p", kDLInt, 8, 1, 1, s2, 2, 2);
  put_u(&f, 0, 4); /* a second entry, unnamed, int8, cut after its ndim */
  put_u(&f, kDLInt, 1);
  put_u(&f, 8, 1);
  put_u(&f, 1, 2);
  put_u(&f, 0, 4);
  seal(&f);
  expect_load_error(&f, "entry 1 (''): truncated (the data size needs 8 bytes");
  header(&f, 1, 1);
  entry(&f, "\xff", kDLInt, 8, 1, 1, s2, 2, 2);
  seal(&f);
  expect_load_error(&f, "entry 0: the name (1 bytes) is not UTF-8");
  header(&f, 1, 1);
  put_u(&f, 5000, 4); /* a name longer than the file */
  put_u(&f, 0, 8);
  put_u(&f, 0, 8);
  seal(&f);
  expect_load_error(&f, "entry 0: truncated (the name needs 5000 bytes");
  header(&f, 1, 1);
  put_u(&f, 0, 4);
  put_u(&f, kDLInt, 1);
  put_u(&f, 8, 1);
  put_u(&f, 1, 2);
  put_u(&f, 5000, 4);
  put_u(&f, 0, 8);
  seal(&f);
  expect_load_error(&f, "ndim 5000 is more than 1024");
  ck_assert_ptr_null(tn_params_load("TNPARAM", 7));
  TN_EXPECT_ERROR("ValueError", "bad magic");
  ck_assert_ptr_null(tn_params_load("TNPARAMS\1\0\0\0", 12));
  TN_EXPECT_ERROR("ValueError", "truncated: 12 bytes");
  ck_assert_ptr_null(tn_params_load(NULL, 3));
  TN_EXPECT_ERROR("ValueError", "NULL");
}
END_TEST

START_TEST(test_params_save_checks_its_input) {
  static const int64_t s2[] = {2};
  TnObject *u16 = tensor_of(s2, 1, kDLUInt, 16, NULL);
  TnAny key = tn_any_cstr("h"), val = tn_any_obj(u16);
  TnObject *m = TN_NONNULL(tn_map_new(&key, &val, 1));
  ck_assert_ptr_null(tn_params_save(m));
  TN_EXPECT_ERROR("TypeError", "'h' has dtype uint16");
  tn_object_release(m);
  key = tn_any_int(1);
  m = TN_NONNULL(tn_map_new(&key, &val, 1));
  ck_assert_ptr_null(tn_params_save(m));
  TN_EXPECT_ERROR("TypeError", "keys must be strings, got int");
  tn_object_release(m);
  key = tn_any_cstr("n");
  val = tn_any_int(3);
  m = TN_NONNULL(tn_map_new(&key, &val, 1));
  ck_assert_ptr_null(tn_params_save(m));
  TN_EXPECT_ERROR("TypeError", "'n': expected a tn.Tensor, got int");
  tn_object_release(m);
  ck_assert_ptr_null(tn_params_save(u16));
  TN_EXPECT_ERROR("TypeError", "");
  tn_object_release(u16);
}
END_TEST

static Suite *module_suite(void) {
  Suite *s = suite_create("module");
  TCase *tc = tn_test_case(s, "module");
  tcase_add_test(tc, test_system_library_finds_models_by_name);
  tcase_add_test(tc, test_zero_copy_and_copied_inputs);
  tcase_add_test(tc, test_outputs_keep_the_module_alive);
  tcase_add_test(tc, test_input_errors_name_the_model_and_input);
  tcase_add_test(tc, test_a_failed_run_names_the_crt_status);
  tcase_add_test(tc, test_run_with_reads_inputs_for_one_call);
  tcase_add_test(tc, test_inputs_and_outputs_in_the_pool);
  tcase_add_test(tc, test_a_workspace_given_as_a_tensor);
  tcase_add_test(tc, test_a_pool_may_not_overlap_what_a_run_reads);
  tcase_add_test(tc, test_describe);
  tcase_add_test(tc, test_malformed_descriptors_are_refused);
  tcase_add_test(tc, test_loading_what_is_not_a_model_library);
  tcase_add_test(tc, test_the_runtime_registers_itself);
  tcase_add_test(tc, test_global_functions);
  tc = tn_test_case(s, "threads");
  tcase_add_test(tc, test_a_second_thread_gets_an_error_not_a_race);
  tcase_add_test(tc, test_modules_on_many_threads);
  tcase_add_test(tc, test_threads_run_the_calls_in_parts_to_the_same_bytes);
  tcase_add_test(tc, test_a_part_left_out_is_seen);
  tcase_add_test(tc, test_bad_thread_counts_are_named);
  tc = tn_test_case(s, "params");
  tcase_add_test(tc, test_a_streaming_model_keeps_its_state);
  tcase_add_test(tc, test_params_round_trip);
  tcase_add_test(tc, test_params_reject_every_truncation_and_bit_flip);
  tcase_add_test(tc, test_params_name_what_is_wrong);
  tcase_add_test(tc, test_params_save_checks_its_input);
  return s;
}

TN_TEST_MAIN(module_suite)
