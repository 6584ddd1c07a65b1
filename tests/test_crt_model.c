/*
 * test_crt_model.c: the firmware API (tvmnode/crt/model.h) over two
 * descriptors written here by hand, as the code generator would emit them,
 * with entry points small enough to check by eye. "add_one" (y = x + 1
 * through a workspace intermediate, failing with OVERFLOW on INT32_MAX) has
 * one bound input, one bound output and one pool; "mix" has two inputs, its
 * output inside the workspace pool, a constant pool whose initial contents
 * its entry point reads, and a device that counts calls and can be told to
 * fail. Every status the API can return is provoked and read back as the
 * last error; instances of one model over separate pools, and of the two
 * models over one pool, are run side by side. The suite links the crt
 * alone, as a firmware would.
 */
#include <stdlib.h>
#include <string.h>

#include <tvmnode/crt/model.h>

#include "kernel_test.h"

/* ------------------------------------------------------------------------ */
/* The descriptors                                                           */
/* ------------------------------------------------------------------------ */

static int32_t add_one_run(void *const *inputs, void *const *outputs,
                           void *const *workspace, void *const *constants,
                           void *const *devices) {
  (void)constants;
  (void)devices;
  const int32_t *x = inputs[0];
  int32_t *y = outputs[0], *tmp = workspace[0];
  for (int i = 0; i < 4; i++) {
    if (x[i] == INT32_MAX) return TN_CRT_OVERFLOW;
    tmp[i] = x[i] + 1;
  }
  for (int i = 0; i < 4; i++) y[i] = tmp[i];
  return TN_CRT_OK;
}

static const int32_t shape4[] = {4}, shape2[] = {2}, shape8[] = {8};
static const TnCrtTensorInfo add_one_inputs[] = {
    {"x", TN_CRT_I32, 1, shape4, 16, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo add_one_outputs[] = {
    {"y", TN_CRT_I32, 1, shape4, 16, 0.0f, 0, -1, 0}};
static const TnCrtPoolInfo add_one_pools[] = {{"ws", 16, 8}};
static const TnCrtModel add_one = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "add_one", "test",
    1, 1, add_one_inputs, add_one_outputs,
    1, add_one_pools,
    0, NULL, NULL,
    0, NULL,
    4, 0, add_one_run};

/* The device of "mix". */
typedef struct {
  int calls;
  int fail;
} Accel;

/* out[j] = sum_k a[4j+k] * w[4j+k] + (int32)b[j], the sums kept in the
 * pool's first bytes, the output in the pool at offset 32. */
static int32_t mix_run(void *const *inputs, void *const *outputs,
                       void *const *workspace, void *const *constants,
                       void *const *devices) {
  (void)outputs; /* in the pool: addressed from the pool base */
  const int8_t *a = inputs[0], *w = constants[0];
  const float *b = inputs[1];
  int32_t *acc = workspace[0];
  int32_t *out = (int32_t *)((uint8_t *)workspace[0] + 32);
  Accel *dev = devices[0];
  dev->calls++;
  if (dev->fail) return TN_CRT_DEVICE_FAILED;
  for (int j = 0; j < 2; j++) {
    acc[j] = 0;
    for (int k = 0; k < 4; k++) acc[j] += a[4 * j + k] * w[4 * j + k];
  }
  for (int j = 0; j < 2; j++) out[j] = acc[j] + (int32_t)b[j];
  return TN_CRT_OK;
}

static const TnCrtTensorInfo mix_inputs[] = {
    {"a", TN_CRT_I8, 1, shape8, 8, 0.5f, -3, -1, 0},
    {"b", TN_CRT_F32, 1, shape2, 8, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo mix_outputs[] = {
    {"out", TN_CRT_I32, 1, shape2, 8, 0.0f, 0, 0, 32}};
static const TnCrtPoolInfo mix_pools[] = {{"ws", 48, 16}};
static const TnCrtPoolInfo mix_const_pools[] = {{"weights", 8, 4}};
static const uint8_t mix_weights[] = {1, 2, 3, 4, 0xff, 0xfe, 0xfd, 0xfc};
static const uint8_t *const mix_const_data[] = {mix_weights};
static const char *const mix_devices[] = {"accel"};
static const TnCrtModel mix = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "mix", "test",
    2, 1, mix_inputs, mix_outputs,
    1, mix_pools,
    1, mix_const_pools, mix_const_data,
    1, mix_devices,
    8, 8, mix_run};

/* The expected output of "mix" for a and b (weights 1..4, -1..-4). */
static void mix_expect(const int8_t *a, const float *b, int32_t *out) {
  for (int j = 0; j < 2; j++) {
    int32_t s = 0;
    for (int k = 0; k < 4; k++) s += a[4 * j + k] * (j ? -(k + 1) : k + 1);
    out[j] = s + (int32_t)b[j];
  }
}

#define ST EXPECT_ST
/* `expr` fails with `st`, which is then `inst`'s last error. */
#define ST_LAST(inst, expr, st)                 \
  do {                                          \
    ST(expr, st);                               \
    ST(tn_crt_last_error(inst), st);            \
  } while (0)

/* Buffers a test needs, aligned beyond any descriptor's demand. */
typedef struct {
  _Alignas(16) uint8_t ws[48];
  _Alignas(16) uint8_t cp[8];
  _Alignas(16) int8_t a[8];
  _Alignas(16) float b[2];
  Accel dev;
} MixMem;

/* An instance of "mix" over `m`, everything bound. */
static void mix_ready(TnCrtInstance *inst, MixMem *m) {
  TnCrtPool ws = {m->ws, sizeof m->ws}, cp = {m->cp, sizeof m->cp};
  KT_CHECK_OK(tn_crt_instance_init(inst, &mix, &ws, 1, &cp, 1));
  KT_CHECK_OK(tn_crt_bind_input(inst, 0, m->a, sizeof m->a));
  KT_CHECK_OK(tn_crt_bind_input(inst, 1, m->b, sizeof m->b));
  KT_CHECK_OK(tn_crt_set_device(inst, 0, &m->dev));
}

static const int32_t *mix_out(const TnCrtInstance *inst) {
  TnCrtTensor t;
  KT_CHECK_OK(tn_crt_output(inst, 0, &t));
  return t.data;
}

/* ------------------------------------------------------------------------ */
/* Success paths                                                             */
/* ------------------------------------------------------------------------ */

START_TEST(test_add_one_runs) {
  _Alignas(8) uint8_t ws[16];
  int32_t x[4] = {-5, 0, 7, 41}, y[4] = {0};
  TnCrtPool pool = {ws, sizeof ws};
  TnCrtInstance inst;
  /* No constant pools: a NULL array is fine. */
  KT_CHECK_OK(tn_crt_instance_init(&inst, &add_one, &pool, 1, NULL, 0));
  ST(tn_crt_last_error(&inst), TN_CRT_OK);
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, x, sizeof x));
  KT_CHECK_OK(tn_crt_bind_output(&inst, 0, y, sizeof y));
  KT_CHECK_OK(tn_crt_run(&inst));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], x[i] + 1);
  /* Rebinding replaces the buffer. */
  int32_t x2[4] = {100, 200, 300, 400};
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, x2, sizeof x2));
  KT_CHECK_OK(tn_crt_run(&inst));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], x2[i] + 1);

  TnCrtTensor t;
  KT_CHECK_OK(tn_crt_input(&inst, 0, &t));
  ck_assert_ptr_eq(t.data, x2);
  ck_assert_ptr_eq(t.info, &add_one_inputs[0]);
  KT_CHECK_OK(tn_crt_output(&inst, 0, &t));
  ck_assert_ptr_eq(t.data, y);
  ck_assert_str_eq(t.info->name, "y");

  TnCrtReport r;
  KT_CHECK_OK(tn_crt_report(&inst, &r));
  ck_assert_ptr_eq(r.model, &add_one);
  ck_assert_uint_eq(r.workspace_bytes, 16);
  ck_assert_uint_eq(r.constant_bytes, 0);
  ck_assert_uint_eq(r.io_bytes, 32);
  ck_assert_uint_eq(r.runs, 2);
  ck_assert_int_eq(r.last_error, TN_CRT_OK);
}
END_TEST

START_TEST(test_mix_runs) {
  MixMem m = {.a = {1, 2, 3, 4, 5, 6, 7, 8}, .b = {10.0f, -20.0f}};
  memset(m.cp, 0xAA, sizeof m.cp);
  TnCrtInstance inst;
  mix_ready(&inst, &m);
  /* The constant pool holds the descriptor's initial contents. */
  ck_assert_mem_eq(m.cp, mix_weights, sizeof mix_weights);
  /* The in-pool output is bound at init: pool base + offset. */
  TnCrtTensor t;
  KT_CHECK_OK(tn_crt_output(&inst, 0, &t));
  ck_assert_ptr_eq(t.data, m.ws + 32);
  /* Bound inputs are the application's buffers. */
  KT_CHECK_OK(tn_crt_input(&inst, 1, &t));
  ck_assert_ptr_eq(t.data, m.b);
  ck_assert_int_eq(t.info->dtype, TN_CRT_F32);

  KT_CHECK_OK(tn_crt_run(&inst));
  int32_t want[2];
  mix_expect(m.a, m.b, want);
  ck_assert_int_eq(mix_out(&inst)[0], want[0]);
  ck_assert_int_eq(mix_out(&inst)[1], want[1]);
  ck_assert_int_eq(m.dev.calls, 1);

  TnCrtReport r;
  KT_CHECK_OK(tn_crt_report(&inst, &r));
  ck_assert_uint_eq(r.workspace_bytes, 48);
  ck_assert_uint_eq(r.constant_bytes, 8);
  ck_assert_uint_eq(r.io_bytes, 16); /* the output is in the pool */
  ck_assert_uint_eq(r.runs, 1);
}
END_TEST

START_TEST(test_constant_pool_filled_by_application) {
  /* No initial contents in the descriptor: the pool is left as it is. */
  TnCrtModel d = mix;
  d.constant_pool_data = NULL;
  MixMem m = {0};
  memset(m.cp, 0x5A, sizeof m.cp);
  TnCrtPool ws = {m.ws, sizeof m.ws}, cp = {m.cp, sizeof m.cp};
  TnCrtInstance inst;
  KT_CHECK_OK(tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1));
  for (size_t i = 0; i < sizeof m.cp; i++) ck_assert_uint_eq(m.cp[i], 0x5A);
}
END_TEST

START_TEST(test_lookup_by_name) {
  ck_assert_int_eq(tn_crt_input_index(&mix, "a"), 0);
  ck_assert_int_eq(tn_crt_input_index(&mix, "b"), 1);
  ck_assert_int_eq(tn_crt_output_index(&mix, "out"), 0);
  ck_assert_int_eq(tn_crt_input_index(&add_one, "x"), 0);
  ck_assert_int_eq(tn_crt_output_index(&add_one, "y"), 0);
  /* No prefixes, no extensions, inputs are not outputs. */
  ck_assert_int_eq(tn_crt_input_index(&mix, "ab"), -1);
  ck_assert_int_eq(tn_crt_output_index(&mix, "ou"), -1);
  ck_assert_int_eq(tn_crt_output_index(&mix, "outs"), -1);
  ck_assert_int_eq(tn_crt_output_index(&mix, "a"), -1);
  ck_assert_int_eq(tn_crt_input_index(&mix, ""), -1);
  ck_assert_int_eq(tn_crt_input_index(&mix, NULL), -1);
  ck_assert_int_eq(tn_crt_input_index(NULL, "a"), -1);
  TnCrtModel bad = mix;
  bad.magic = 0;
  ck_assert_int_eq(tn_crt_input_index(&bad, "a"), -1);
  /* A nameless tensor is skipped, not dereferenced. */
  TnCrtTensorInfo ins[2] = {mix_inputs[0], mix_inputs[1]};
  ins[0].name = NULL;
  bad = mix;
  bad.inputs = ins;
  ck_assert_int_eq(tn_crt_input_index(&bad, "b"), 1);
  ck_assert_int_eq(tn_crt_input_index(&bad, "a"), -1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Instances side by side                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(test_two_instances_one_model) {
  MixMem m1 = {.a = {1, 1, 1, 1, 1, 1, 1, 1}, .b = {0.0f, 0.0f}};
  MixMem m2 = {.a = {-8, 7, -6, 5, 4, -3, 2, -1}, .b = {3.0f, 99.0f}};
  TnCrtInstance i1, i2;
  mix_ready(&i1, &m1);
  mix_ready(&i2, &m2);
  KT_CHECK_OK(tn_crt_run(&i1));
  KT_CHECK_OK(tn_crt_run(&i2));
  KT_CHECK_OK(tn_crt_run(&i2));
  int32_t w1[2], w2[2];
  mix_expect(m1.a, m1.b, w1);
  mix_expect(m2.a, m2.b, w2);
  ck_assert_ptr_eq(mix_out(&i1), (void *)(m1.ws + 32));
  ck_assert_ptr_eq(mix_out(&i2), (void *)(m2.ws + 32));
  for (int j = 0; j < 2; j++) {
    ck_assert_int_eq(mix_out(&i1)[j], w1[j]);
    ck_assert_int_eq(mix_out(&i2)[j], w2[j]);
  }
  ck_assert_int_eq(m1.dev.calls, 1);
  ck_assert_int_eq(m2.dev.calls, 2);
  /* A failure in one is not the other's. */
  m2.dev.fail = 1;
  ST_LAST(&i2, tn_crt_run(&i2), TN_CRT_DEVICE_FAILED);
  ST(tn_crt_last_error(&i1), TN_CRT_OK);
  TnCrtReport r1, r2;
  KT_CHECK_OK(tn_crt_report(&i1, &r1));
  KT_CHECK_OK(tn_crt_report(&i2, &r2));
  ck_assert_uint_eq(r1.runs, 1);
  ck_assert_uint_eq(r2.runs, 2);
  ck_assert_int_eq(r2.last_error, TN_CRT_DEVICE_FAILED);
}
END_TEST

START_TEST(test_two_models_one_pool) {
  /* One pool, as large and as aligned as the larger demand. */
  MixMem m = {.a = {2, 0, 0, 1, 0, 3, 0, 0}, .b = {0.5f, 4.0f}};
  TnCrtPool shared = {m.ws, sizeof m.ws}, cp = {m.cp, sizeof m.cp};
  TnCrtInstance ia, im;
  KT_CHECK_OK(tn_crt_instance_init(&ia, &add_one, &shared, 1, NULL, 0));
  KT_CHECK_OK(tn_crt_instance_init(&im, &mix, &shared, 1, &cp, 1));
  int32_t x[4], y[4];
  KT_CHECK_OK(tn_crt_bind_input(&ia, 0, x, sizeof x));
  KT_CHECK_OK(tn_crt_bind_output(&ia, 0, y, sizeof y));
  KT_CHECK_OK(tn_crt_bind_input(&im, 0, m.a, sizeof m.a));
  KT_CHECK_OK(tn_crt_bind_input(&im, 1, m.b, sizeof m.b));
  KT_CHECK_OK(tn_crt_set_device(&im, 0, &m.dev));
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 4; i++) x[i] = round * 10 + i;
    KT_CHECK_OK(tn_crt_run(&ia));
    for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], x[i] + 1);
    m.a[0] = (int8_t)(round - 5);
    m.b[1] = (float)round;
    KT_CHECK_OK(tn_crt_run(&im));
    int32_t want[2];
    mix_expect(m.a, m.b, want);
    ck_assert_int_eq(mix_out(&im)[0], want[0]);
    ck_assert_int_eq(mix_out(&im)[1], want[1]);
  }
  ck_assert_int_eq(m.dev.calls, 3);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Failures                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(test_init_failures) {
  MixMem m = {0};
  TnCrtPool ws = {m.ws, sizeof m.ws}, cp = {m.cp, sizeof m.cp};
  TnCrtInstance inst;
  ST(tn_crt_instance_init(NULL, &mix, &ws, 1, &cp, 1), TN_CRT_NULL_POINTER);
  ST_LAST(&inst, tn_crt_instance_init(&inst, NULL, &ws, 1, &cp, 1),
          TN_CRT_NULL_POINTER);
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, NULL, 1, &cp, 1),
          TN_CRT_NULL_POINTER);
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 1, NULL, 1),
          TN_CRT_NULL_POINTER);
  TnCrtPool nobase = {NULL, 48};
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &nobase, 1, &cp, 1),
          TN_CRT_NULL_POINTER);

  TnCrtModel d = mix;
  d.magic = TN_CRT_MODEL_MAGIC + 1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  d = mix;
  d.abi_version = TN_CRT_MODEL_ABI_VERSION + 1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  d = mix;
  d.run = NULL;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);

  /* Counts: against the descriptor's, and the descriptor's against the
   * instance's capacity. */
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 0, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 2, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 1, &cp, 0),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, -1, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  d = mix;
  d.num_inputs = TN_CRT_MAX_IO + 1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  d = mix;
  d.num_outputs = -1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  d = mix;
  d.num_devices = TN_CRT_MAX_POOLS + 1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);
  TnCrtPool many[TN_CRT_MAX_POOLS + 1] = {{0}};
  d = mix;
  d.num_workspace_pools = TN_CRT_MAX_POOLS + 1;
  ST_LAST(&inst,
          tn_crt_instance_init(&inst, &d, many, TN_CRT_MAX_POOLS + 1, &cp, 1),
          TN_CRT_INVALID_ARGUMENT);

  /* Size and alignment of each pool. */
  TnCrtPool small = {m.ws, 47};
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &small, 1, &cp, 1),
          TN_CRT_POOL_TOO_SMALL);
  TnCrtPool csmall = {m.cp, 7};
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 1, &csmall, 1),
          TN_CRT_POOL_TOO_SMALL);
  static _Alignas(16) uint8_t big[64];
  TnCrtPool off8 = {big + 8, 48}; /* 8-aligned, 16 wanted */
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &off8, 1, &cp, 1),
          TN_CRT_POOL_MISALIGNED);
  TnCrtPool coff = {big + 2, 8}; /* 2-aligned, 4 wanted */
  ST_LAST(&inst, tn_crt_instance_init(&inst, &mix, &ws, 1, &coff, 1),
          TN_CRT_POOL_MISALIGNED);
  /* 8-aligned is all add_one asks for. */
  KT_CHECK_OK(tn_crt_instance_init(&inst, &add_one, &off8, 1, NULL, 0));
}
END_TEST

START_TEST(test_init_inconsistent_descriptor) {
  /* An in-pool tensor outside its pool, or in a pool that does not exist,
   * is refused before anything is written (here: the constant pool). */
  MixMem m = {0};
  memset(m.cp, 0x33, sizeof m.cp);
  TnCrtPool ws = {m.ws, sizeof m.ws}, cp = {m.cp, sizeof m.cp};
  TnCrtInstance inst;
  TnCrtTensorInfo outs[1] = {mix_outputs[0]};
  TnCrtModel d = mix;
  d.outputs = outs;
  outs[0].offset = 41;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  outs[0].offset = UINT32_MAX - 4; /* offset + nbytes wraps in 32 bits */
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  outs[0].offset = 32;
  outs[0].pool = 1;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  outs[0].pool = -2;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  d = mix;
  d.inputs = NULL;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  d = mix;
  d.workspace_pools = NULL;
  ST_LAST(&inst, tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1),
          TN_CRT_MODEL_MISMATCH);
  for (size_t i = 0; i < sizeof m.cp; i++) ck_assert_uint_eq(m.cp[i], 0x33);
  /* At the very end of the pool is inside it. */
  outs[0].pool = 0;
  outs[0].offset = 40;
  d = mix;
  d.outputs = outs;
  KT_CHECK_OK(tn_crt_instance_init(&inst, &d, &ws, 1, &cp, 1));
}
END_TEST

START_TEST(test_unusable_instances) {
  /* After a failed init, zeroed, or pointing at something that is not a
   * descriptor: every call refuses, none crashes. */
  TnCrtInstance failed, zero, foreign;
  memset(&zero, 0, sizeof zero);
  ST(tn_crt_instance_init(&failed, &mix, NULL, 1, NULL, 1),
     TN_CRT_NULL_POINTER);
  TnCrtModel not_a_model;
  memset(&not_a_model, 0, sizeof not_a_model);
  _Alignas(8) uint8_t ws[16];
  TnCrtPool pool = {ws, sizeof ws};
  KT_CHECK_OK(tn_crt_instance_init(&foreign, &add_one, &pool, 1, NULL, 0));
  foreign.model = &not_a_model;

  /* The failed init's code is still there to read. */
  ST(tn_crt_last_error(&failed), TN_CRT_NULL_POINTER);
  ST(tn_crt_last_error(&zero), TN_CRT_MODEL_MISMATCH);
  ST(tn_crt_last_error(&foreign), TN_CRT_MODEL_MISMATCH);
  TnCrtInstance *all[] = {&failed, &zero, &foreign};
  int32_t buf[4];
  for (size_t k = 0; k < 3; k++) {
    TnCrtInstance *inst = all[k];
    ST_LAST(inst, tn_crt_bind_input(inst, 0, buf, sizeof buf),
            TN_CRT_MODEL_MISMATCH);
    ST_LAST(inst, tn_crt_bind_output(inst, 0, buf, sizeof buf),
            TN_CRT_MODEL_MISMATCH);
    ST_LAST(inst, tn_crt_set_device(inst, 0, buf), TN_CRT_MODEL_MISMATCH);
    ST_LAST(inst, tn_crt_run(inst), TN_CRT_MODEL_MISMATCH);
    TnCrtTensor t = {buf, &mix_inputs[0]};
    ST(tn_crt_input(inst, 0, &t), TN_CRT_MODEL_MISMATCH);
    ck_assert_ptr_null(t.data);
    ck_assert_ptr_null(t.info);
    ST(tn_crt_output(inst, 0, &t), TN_CRT_MODEL_MISMATCH);
    TnCrtReport r;
    ST(tn_crt_report(inst, &r), TN_CRT_MODEL_MISMATCH);
    ck_assert_ptr_null(r.model);
  }
  /* A NULL instance. */
  TnCrtTensor t;
  TnCrtReport r;
  ST(tn_crt_bind_input(NULL, 0, buf, sizeof buf), TN_CRT_NULL_POINTER);
  ST(tn_crt_bind_output(NULL, 0, buf, sizeof buf), TN_CRT_NULL_POINTER);
  ST(tn_crt_set_device(NULL, 0, buf), TN_CRT_NULL_POINTER);
  ST(tn_crt_run(NULL), TN_CRT_NULL_POINTER);
  ST(tn_crt_input(NULL, 0, &t), TN_CRT_NULL_POINTER);
  ST(tn_crt_output(NULL, 0, &t), TN_CRT_NULL_POINTER);
  ST(tn_crt_report(NULL, &r), TN_CRT_NULL_POINTER);
  ST(tn_crt_last_error(NULL), TN_CRT_NULL_POINTER);
}
END_TEST

/* Instances changed behind the API's back (issue 32): the model pointer
 * swapped to a descriptor whose pools are larger, a pool pointer edited,
 * a copy at another address, half of another instance written over it,
 * uninitialised garbage, a descriptor in RAM changed after init. Each is
 * TN_CRT_MODEL_MISMATCH from every call, and nothing is read or written
 * out of bounds (the pools are heap blocks of their exact size, so ASan
 * and valgrind see any overrun). */
static int32_t add_one_big_run(void *const *inputs, void *const *outputs,
                               void *const *workspace, void *const *constants,
                               void *const *devices) {
  (void)inputs, (void)outputs, (void)constants, (void)devices;
  memset(workspace[0], 0x5a, 64); /* its own pool is 64 bytes */
  return TN_CRT_OK;
}
static const TnCrtPoolInfo add_one_big_pools[] = {{"ws", 64, 8}};

static void expect_refused(TnCrtInstance *inst) {
  int32_t buf[4];
  ST_LAST(inst, tn_crt_run(inst), TN_CRT_MODEL_MISMATCH);
  ST_LAST(inst, tn_crt_bind_input(inst, 0, buf, sizeof buf),
          TN_CRT_MODEL_MISMATCH);
  ST_LAST(inst, tn_crt_unbind_output(inst, 0), TN_CRT_MODEL_MISMATCH);
  ST_LAST(inst, tn_crt_set_device(inst, 0, buf), TN_CRT_MODEL_MISMATCH);
  ST_LAST(inst, tn_crt_set_state(inst, buf, sizeof buf),
          TN_CRT_MODEL_MISMATCH);
  ST_LAST(inst, tn_crt_reset(inst), TN_CRT_MODEL_MISMATCH);
  TnCrtTensor t;
  ST(tn_crt_input(inst, 0, &t), TN_CRT_MODEL_MISMATCH);
  ck_assert_ptr_null(t.data);
  TnCrtReport r;
  ST(tn_crt_report(inst, &r), TN_CRT_MODEL_MISMATCH);
}

/* A heap instance of add_one over a heap pool of exactly 16 bytes. */
static TnCrtInstance *add_one_ready(void **pool, int32_t *x, int32_t *y) {
  *pool = malloc(16);
  TnCrtPool p = {*pool, 16};
  TnCrtInstance *inst = malloc(sizeof *inst);
  KT_CHECK_OK(tn_crt_instance_init(inst, &add_one, &p, 1, NULL, 0));
  KT_CHECK_OK(tn_crt_bind_input(inst, 0, x, 16));
  KT_CHECK_OK(tn_crt_bind_output(inst, 0, y, 16));
  KT_CHECK_OK(tn_crt_run(inst));
  return inst;
}

START_TEST(test_tampered_instances) {
  int32_t x[4] = {1, 2, 3, 4}, y[4];
  void *pool;
  TnCrtInstance *inst = add_one_ready(&pool, x, y);

  /* swapped: the descriptor of a model with a 64-byte pool */
  TnCrtModel add_one_big = add_one;
  add_one_big.workspace_pools = add_one_big_pools;
  add_one_big.run = add_one_big_run;
  inst->model = &add_one_big;
  expect_refused(inst);
  inst->model = &add_one; /* put back: usable again */
  inst->last_error = TN_CRT_OK;
  KT_CHECK_OK(tn_crt_run(inst));
  ck_assert_int_eq(y[3], 5);

  /* a pool pointer edited */
  void *saved = inst->workspace[0];
  inst->workspace[0] = (uint8_t *)saved + 8;
  expect_refused(inst);
  inst->workspace[0] = saved;
  KT_CHECK_OK(tn_crt_run(inst));

  /* copied to another address: the copy is refused, the original runs */
  TnCrtInstance *copy = malloc(sizeof *copy);
  memcpy(copy, inst, sizeof *copy);
  expect_refused(copy);
  KT_CHECK_OK(tn_crt_run(inst));

  /* torn: the first half of another model's instance written over it */
  MixMem m = {.a = {1}, .b = {0.0f}};
  TnCrtInstance other;
  mix_ready(&other, &m);
  memcpy(inst, &other, sizeof *inst / 2);
  expect_refused(inst);
  /* and the other way round: only the second half */
  TnCrtInstance *inst2 = add_one_ready(&saved, x, y);
  memcpy((uint8_t *)inst2 + sizeof *inst2 / 2,
         (uint8_t *)&other + sizeof other / 2, sizeof other - sizeof other / 2);
  expect_refused(inst2);
  KT_CHECK_OK(tn_crt_run(&other)); /* the source is untouched */

  /* never initialised: garbage of several kinds, none of it followed */
  for (unsigned seed = 0; seed < 64; seed++) {
    uint32_t r = seed * 2654435761u + 1u; /* an LCG's bytes */
    for (size_t k = 0; k < sizeof *copy; k++) {
      r = r * 1664525u + 1013904223u;
      ((uint8_t *)copy)[k] = seed == 0 ? 0xa5 : (uint8_t)(r >> 24);
    }
    expect_refused(copy);
  }
  memset(copy, 0xff, sizeof *copy);
  expect_refused(copy);

  free(copy);
  free(inst);
  free(inst2);
  free(pool);
  free(saved);
}
END_TEST

/* A descriptor in RAM (a model loaded at run time) changed after init:
 * its pool grown past the application's pool, or a tensor moved. */
START_TEST(test_descriptor_changed_after_init) {
  TnCrtPoolInfo pools[1] = {{"ws", 16, 8}};
  TnCrtTensorInfo outs[1] = {add_one_outputs[0]};
  TnCrtModel d = add_one;
  d.workspace_pools = pools;
  d.outputs = outs;
  int32_t x[4] = {0}, y[4];
  void *pool = malloc(16);
  TnCrtPool p = {pool, 16};
  TnCrtInstance inst;
  KT_CHECK_OK(tn_crt_instance_init(&inst, &d, &p, 1, NULL, 0));
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, x, sizeof x));
  KT_CHECK_OK(tn_crt_bind_output(&inst, 0, y, sizeof y));
  KT_CHECK_OK(tn_crt_run(&inst));
  pools[0].size = 64;
  expect_refused(&inst);
  pools[0].size = 16;
  inst.last_error = TN_CRT_OK;
  KT_CHECK_OK(tn_crt_run(&inst));
  outs[0].nbytes = 64;
  expect_refused(&inst);
  outs[0].nbytes = 16;
  d.run = add_one_big_run;
  expect_refused(&inst);
  free(pool);
}
END_TEST

START_TEST(test_unbind) {
  int32_t x[4] = {1, 2, 3, 4}, y[4];
  void *pool;
  TnCrtInstance *inst = add_one_ready(&pool, x, y);
  KT_CHECK_OK(tn_crt_unbind_input(inst, 0));
  TnCrtTensor t;
  KT_CHECK_OK(tn_crt_input(inst, 0, &t));
  ck_assert_ptr_null(t.data);
  ST_LAST(inst, tn_crt_run(inst), TN_CRT_NOT_BOUND);
  KT_CHECK_OK(tn_crt_bind_input(inst, 0, x, sizeof x));
  KT_CHECK_OK(tn_crt_run(inst));
  ST_LAST(inst, tn_crt_unbind_input(inst, 1), TN_CRT_INVALID_ARGUMENT);
  ST_LAST(inst, tn_crt_unbind_output(inst, -1), TN_CRT_INVALID_ARGUMENT);
  ST(tn_crt_unbind_input(NULL, 0), TN_CRT_NULL_POINTER);
  /* an output in a pool cannot be unbound */
  MixMem m = {.a = {1}, .b = {0.0f}};
  TnCrtInstance other;
  mix_ready(&other, &m);
  ST_LAST(&other, tn_crt_unbind_output(&other, 0), TN_CRT_INVALID_ARGUMENT);
  free(inst);
  free(pool);
}
END_TEST

START_TEST(test_bind_failures) {
  MixMem m = {0};
  TnCrtInstance inst;
  mix_ready(&inst, &m);
  _Alignas(16) uint8_t buf[32] = {0};
  ST_LAST(&inst, tn_crt_bind_input(&inst, 2, buf, 8), TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_bind_input(&inst, -1, buf, 8),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_bind_output(&inst, 1, buf, 8),
          TN_CRT_INVALID_ARGUMENT);
  /* The output lives in the pool: it cannot be rebound. */
  ST_LAST(&inst, tn_crt_bind_output(&inst, 0, buf, 8),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_bind_input(&inst, 0, NULL, 8), TN_CRT_NULL_POINTER);
  ST_LAST(&inst, tn_crt_bind_input(&inst, 0, buf, 7), TN_CRT_POOL_TOO_SMALL);
  /* A float input must be float-aligned; int8 may sit anywhere. */
  ST_LAST(&inst, tn_crt_bind_input(&inst, 1, buf + 2, 8),
          TN_CRT_POOL_MISALIGNED);
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, buf + 1, 8));
  /* Failed binds left the earlier binding alone. */
  TnCrtTensor t;
  KT_CHECK_OK(tn_crt_input(&inst, 1, &t));
  ck_assert_ptr_eq(t.data, m.b);
  KT_CHECK_OK(tn_crt_output(&inst, 0, &t));
  ck_assert_ptr_eq(t.data, m.ws + 32);
  /* Queries: index and NULL out. */
  ST(tn_crt_input(&inst, 2, &t), TN_CRT_INVALID_ARGUMENT);
  ck_assert_ptr_null(t.info);
  ST(tn_crt_output(&inst, -1, &t), TN_CRT_INVALID_ARGUMENT);
  ST(tn_crt_input(&inst, 0, NULL), TN_CRT_NULL_POINTER);
  ST(tn_crt_output(&inst, 0, NULL), TN_CRT_NULL_POINTER);
  ST(tn_crt_report(&inst, NULL), TN_CRT_NULL_POINTER);
  /* Queries record nothing: the last error is still the last bind's. */
  ST(tn_crt_last_error(&inst), TN_CRT_POOL_MISALIGNED);
  /* The last error is the last failure's, until a run. */
  KT_CHECK_OK(tn_crt_run(&inst));
  ST(tn_crt_last_error(&inst), TN_CRT_OK);
}
END_TEST

START_TEST(test_device_failures) {
  MixMem m = {0};
  TnCrtPool ws = {m.ws, sizeof m.ws}, cp = {m.cp, sizeof m.cp};
  TnCrtInstance inst;
  KT_CHECK_OK(tn_crt_instance_init(&inst, &mix, &ws, 1, &cp, 1));
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, m.a, sizeof m.a));
  KT_CHECK_OK(tn_crt_bind_input(&inst, 1, m.b, sizeof m.b));
  /* Every input and output bound, but no device. */
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_NOT_BOUND);
  ck_assert_int_eq(m.dev.calls, 0);
  ST_LAST(&inst, tn_crt_set_device(&inst, 1, &m.dev),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_set_device(&inst, -1, &m.dev),
          TN_CRT_INVALID_ARGUMENT);
  ST_LAST(&inst, tn_crt_set_device(&inst, 0, NULL), TN_CRT_NULL_POINTER);
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_NOT_BOUND);
  KT_CHECK_OK(tn_crt_set_device(&inst, 0, &m.dev));
  KT_CHECK_OK(tn_crt_run(&inst));
  ck_assert_int_eq(m.dev.calls, 1);
  /* A model without devices has none to set. */
  _Alignas(8) uint8_t ws1[16];
  TnCrtPool p1 = {ws1, sizeof ws1};
  KT_CHECK_OK(tn_crt_instance_init(&inst, &add_one, &p1, 1, NULL, 0));
  ST_LAST(&inst, tn_crt_set_device(&inst, 0, &m.dev),
          TN_CRT_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_run_failures) {
  _Alignas(8) uint8_t ws[16];
  int32_t x[4] = {1, 2, 3, 4}, y[4] = {0};
  TnCrtPool pool = {ws, sizeof ws};
  TnCrtInstance inst;
  KT_CHECK_OK(tn_crt_instance_init(&inst, &add_one, &pool, 1, NULL, 0));
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_NOT_BOUND);
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, x, sizeof x));
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_NOT_BOUND); /* output missing */
  KT_CHECK_OK(tn_crt_bind_output(&inst, 0, y, sizeof y));
  KT_CHECK_OK(tn_crt_run(&inst));
  /* The entry point's own code comes back, is kept, and is not a run. */
  x[2] = INT32_MAX;
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_OVERFLOW);
  TnCrtReport r;
  KT_CHECK_OK(tn_crt_report(&inst, &r));
  ck_assert_uint_eq(r.runs, 1);
  ck_assert_int_eq(r.last_error, TN_CRT_OVERFLOW);
  x[2] = 3;
  KT_CHECK_OK(tn_crt_run(&inst));
  ST(tn_crt_last_error(&inst), TN_CRT_OK);
  /* An instance corrupted after init is refused at run, not followed. */
  TnCrtModel copy = add_one;
  inst.model = &copy;
  copy.run = NULL;
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_MODEL_MISMATCH);
  copy.run = add_one_run;
  copy.abi_version = 0;
  ST_LAST(&inst, tn_crt_run(&inst), TN_CRT_MODEL_MISMATCH);
}
END_TEST

/* Every status of the table has a name of its own, the new ones too. */
START_TEST(test_status_names_distinct) {
  static const struct {
    int32_t code;
    const char *name;
  } table[] = {
#define ENTRY_(name, code, doc) {code, #name},
      TN_CRT_STATUS_MAP(ENTRY_)
#undef ENTRY_
  };
  size_t n = sizeof table / sizeof table[0];
  ck_assert_uint_ge(n, 13);
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(tn_crt_status_name(table[i].code), table[i].name);
    ck_assert_str_ne(tn_crt_status_doc(table[i].code), "unknown status");
    for (size_t j = 0; j < i; j++) {
      ck_assert_int_ne(table[i].code, table[j].code);
      ck_assert_str_ne(table[i].name, table[j].name);
    }
  }
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_NOT_BOUND), "NOT_BOUND");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_MODEL_MISMATCH),
                   "MODEL_MISMATCH");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_POOL_MISALIGNED),
                   "POOL_MISALIGNED");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_NULL_POINTER), "NULL_POINTER");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_DEVICE_FAILED),
                   "DEVICE_FAILED");
}
END_TEST

/* "acc": a streaming model, y = x + s and then s = y, its state s (4
 * int32, initially 10, 20, 30, 40) in a state pool of 32 bytes (current
 * values, then new ones, as generated code lays it out). */
static const int32_t acc_init[4] = {10, 20, 30, 40};

static int32_t acc_reset(void *state) {
  if (!state) return TN_CRT_NULL_POINTER;
  memcpy(state, acc_init, sizeof acc_init);
  return TN_CRT_OK;
}

static int32_t acc_run_state(void *const *inputs, void *const *outputs,
                             void *const *workspace, void *const *constants,
                             void *const *devices, void *state) {
  (void)workspace, (void)constants, (void)devices;
  const int32_t *x = inputs[0];
  int32_t *y = outputs[0], *s = state;
  for (int i = 0; i < 4; i++) s[4 + i] = y[i] = x[i] + s[i];
  memcpy(s, s + 4, 16);
  return TN_CRT_OK;
}

static int32_t acc_run(void *const *inputs, void *const *outputs,
                       void *const *workspace, void *const *constants,
                       void *const *devices) {
  (void)inputs, (void)outputs, (void)workspace, (void)constants;
  (void)devices;
  return TN_CRT_NOT_BOUND;
}

static const TnCrtStatefulModel acc = {
    {TN_CRT_MODEL_STATE_MAGIC, TN_CRT_MODEL_ABI_VERSION, "acc", "test",
     1, 1, add_one_inputs, add_one_outputs,
     0, NULL,
     0, NULL, NULL,
     0, NULL,
     4, 0, acc_run},
    32, 8, acc_run_state, acc_reset};

START_TEST(test_stateful_model) {
  _Alignas(8) int32_t state[12] = {0};
  int32_t x[4] = {1, 2, 3, 4}, y[4] = {0};
  TnCrtInstance inst;
  ck_assert_ptr_eq(tn_crt_model_state(&acc.base), &acc);
  ck_assert_ptr_null(tn_crt_model_state(&add_one));
  KT_CHECK_OK(tn_crt_instance_init(&inst, &acc.base, NULL, 0, NULL, 0));
  KT_CHECK_OK(tn_crt_bind_input(&inst, 0, x, sizeof x));
  KT_CHECK_OK(tn_crt_bind_output(&inst, 0, y, sizeof y));
  /* no state pool yet */
  ST(tn_crt_run(&inst), TN_CRT_NOT_BOUND);
  ST(tn_crt_reset(&inst), TN_CRT_NOT_BOUND);
  ST(tn_crt_set_state(&inst, NULL, 32), TN_CRT_NULL_POINTER);
  ST(tn_crt_set_state(&inst, state, 16), TN_CRT_POOL_TOO_SMALL);
  ST(tn_crt_set_state(&inst, (uint8_t *)state + 4, 32), TN_CRT_POOL_MISALIGNED);
  KT_CHECK_OK(tn_crt_set_state(&inst, state, sizeof state));
  KT_CHECK_OK(tn_crt_reset(&inst));
  /* the state persists across runs */
  for (int step = 1; step <= 3; step++) {
    KT_CHECK_OK(tn_crt_run(&inst));
    for (int i = 0; i < 4; i++)
      ck_assert_int_eq(y[i], acc_init[i] + step * x[i]);
  }
  KT_CHECK_OK(tn_crt_reset(&inst));
  KT_CHECK_OK(tn_crt_run(&inst));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], acc_init[i] + x[i]);
  /* a stateless model takes no state pool; its reset does nothing */
  _Alignas(8) uint8_t ws[16];
  TnCrtPool pool = {ws, sizeof ws};
  TnCrtInstance plain;
  KT_CHECK_OK(tn_crt_instance_init(&plain, &add_one, &pool, 1, NULL, 0));
  ST(tn_crt_set_state(&plain, state, sizeof state), TN_CRT_INVALID_ARGUMENT);
  KT_CHECK_OK(tn_crt_reset(&plain));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("crt_model");
  TCase *tc = tcase_create("crt_model");
  tcase_add_test(tc, test_add_one_runs);
  tcase_add_test(tc, test_mix_runs);
  tcase_add_test(tc, test_constant_pool_filled_by_application);
  tcase_add_test(tc, test_lookup_by_name);
  tcase_add_test(tc, test_two_instances_one_model);
  tcase_add_test(tc, test_two_models_one_pool);
  tcase_add_test(tc, test_init_failures);
  tcase_add_test(tc, test_init_inconsistent_descriptor);
  tcase_add_test(tc, test_unusable_instances);
  tcase_add_test(tc, test_tampered_instances);
  tcase_add_test(tc, test_descriptor_changed_after_init);
  tcase_add_test(tc, test_unbind);
  tcase_add_test(tc, test_bind_failures);
  tcase_add_test(tc, test_device_failures);
  tcase_add_test(tc, test_run_failures);
  tcase_add_test(tc, test_status_names_distinct);
  tcase_add_test(tc, test_stateful_model);
  suite_add_tcase(s, tc);
  return s;
}

KT_MAIN(make_suite)
