/*
 * test_crt_session.c: a device session's requests answered by the crt
 * (tvmnode/crt/session.h). The requests are written here byte by byte
 * from tvmnode_session.proto's field numbers (not with nanopb's encoder,
 * so the wire format is checked, not assumed); the answers are read with
 * the generated decoder. Two small models with a workspace pool: add_one
 * (y = x + 1, four int32) and swap (two inputs, two outputs exchanged).
 */
#include <string.h>

#include <tvmnode/crt/session.h>

#include "../runtime/crt/src/tvmnode_session.pb.h"
#include "../runtime/crt/third_party/nanopb/pb_decode.h"
#include "kernel_test.h"

static int runs;

static int32_t add_one_run(void *const *inputs, void *const *outputs,
                           void *const *workspace, void *const *constants,
                           void *const *devices) {
  (void)constants;
  (void)devices;
  const int32_t *x = inputs[0];
  int32_t *y = outputs[0], *tmp = workspace[0];
  runs++;
  for (int i = 0; i < 4; i++) {
    if (x[i] == INT32_MAX) return TN_CRT_OVERFLOW;
    tmp[i] = x[i] + 1;
  }
  for (int i = 0; i < 4; i++) y[i] = tmp[i];
  return TN_CRT_OK;
}

static int32_t swap_run(void *const *inputs, void *const *outputs,
                        void *const *workspace, void *const *constants,
                        void *const *devices) {
  (void)workspace;
  (void)constants;
  (void)devices;
  memcpy(outputs[0], inputs[1], 3);
  memcpy(outputs[1], inputs[0], 2);
  return TN_CRT_OK;
}

static const int32_t shape4[] = {4}, shape_a[] = {1, 2}, shape_b[] = {3};
static const TnCrtTensorInfo add_one_inputs[] = {
    {"x", TN_CRT_I32, 1, shape4, 16, 0.5f, -3, -1, 0}};
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
static const TnCrtTensorInfo swap_inputs[] = {
    {"a", TN_CRT_I8, 2, shape_a, 2, 0.0f, 0, -1, 0},
    {"b", TN_CRT_U8, 1, shape_b, 3, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo swap_outputs[] = {
    {"b_out", TN_CRT_U8, 1, shape_b, 3, 0.0f, 0, -1, 0},
    {"a_out", TN_CRT_I8, 2, shape_a, 2, 0.0f, 0, -1, 0}};
static const TnCrtModel swap = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "swap", "test",
    2, 2, swap_inputs, swap_outputs,
    0, NULL,
    0, NULL, NULL,
    0, NULL,
    0, 0, swap_run};

/* The application's side: instances with their buffers. */
typedef struct {
  TnCrtInstance add_one, swap;
  TnCrtInstance *list[2];
  uint64_t ws[2];
  int32_t x[4], y[4];
  uint8_t a[2], b[3], a_out[2], b_out[3];
  TnCrtSession s;
} App;

static uint64_t runs_clock(void *ctx) {
  (void)ctx;
  return (uint64_t)runs * 10u; /* ten ticks a run */
}

static void app_init(App *app) {
  memset(app, 0, sizeof *app);
  TnCrtPool ws = {app->ws, sizeof app->ws};
  KT_CHECK_OK(tn_crt_instance_init(&app->add_one, &add_one, &ws, 1, NULL, 0));
  KT_CHECK_OK(tn_crt_bind_input(&app->add_one, 0, app->x, sizeof app->x));
  KT_CHECK_OK(tn_crt_bind_output(&app->add_one, 0, app->y, sizeof app->y));
  KT_CHECK_OK(tn_crt_instance_init(&app->swap, &swap, NULL, 0, NULL, 0));
  KT_CHECK_OK(tn_crt_bind_input(&app->swap, 0, app->a, 2));
  KT_CHECK_OK(tn_crt_bind_input(&app->swap, 1, app->b, 3));
  KT_CHECK_OK(tn_crt_bind_output(&app->swap, 0, app->b_out, 3));
  KT_CHECK_OK(tn_crt_bind_output(&app->swap, 1, app->a_out, 2));
  app->list[0] = &app->add_one;
  app->list[1] = &app->swap;
  KT_CHECK_OK(tn_crt_session_init(&app->s, app->list, 2));
  KT_CHECK_OK(tn_crt_session_set_clock(&app->s, runs_clock, NULL, 25000000u,
                                       40u));
  runs = 0;
}

/* ---- requests, written by hand ---- */
typedef struct {
  uint8_t b[512];
  size_t n;
} Buf;

static void varint(Buf *o, uint64_t v) {
  do {
    uint8_t byte = (uint8_t)(v & 0x7fu);
    v >>= 7;
    o->b[o->n++] = (uint8_t)(byte | (v ? 0x80u : 0u));
  } while (v);
}
static void key(Buf *o, uint32_t field, uint32_t wire) {
  varint(o, (uint64_t)(field << 3 | wire));
}
static void bytes_field(Buf *o, uint32_t field, const void *p, size_t n) {
  key(o, field, 2);
  varint(o, n);
  memcpy(o->b + o->n, p, n);
  o->n += n;
}
static void sub(Buf *o, uint32_t field, const Buf *inner) {
  bytes_field(o, field, inner->b, inner->n);
}

static Buf metadata_request(uint32_t id, const char *model) {
  Buf m = {0}, r = {0};
  if (model[0]) bytes_field(&m, 1, model, strlen(model));
  key(&r, 1, 0);
  varint(&r, id);
  sub(&r, 2, &m);
  return r;
}

/* an infer request for `model` with the inputs ins[0 .. n) of sizes
 * sizes[...], repeat and number */
static Buf infer_request(uint32_t id, const char *model, int n,
                         const void *const *ins, const size_t *sizes,
                         uint32_t repeat, uint32_t number) {
  Buf m = {0}, r = {0};
  bytes_field(&m, 1, model, strlen(model));
  for (int i = 0; i < n; i++) bytes_field(&m, 2, ins[i], sizes[i]);
  if (repeat) key(&m, 3, 0), varint(&m, repeat);
  if (number) key(&m, 4, 0), varint(&m, number);
  key(&r, 1, 0);
  varint(&r, id);
  sub(&r, 3, &m);
  return r;
}

/* ---- answers, read with the generated decoder ---- */
typedef struct {
  tvmnode_session_Response r;
  uint8_t out[4][32];
  size_t out_len[4];
  int outputs;
} Answer;

static bool read_output(pb_istream_t *stream, const pb_field_t *field,
                        void **arg) {
  (void)field;
  Answer *a = *arg;
  if (a->outputs >= 4 || stream->bytes_left > 32) return false;
  a->out_len[a->outputs] = stream->bytes_left;
  return pb_read(stream, a->out[a->outputs++], stream->bytes_left);
}

static Answer ask(App *app, const Buf *req) {
  uint8_t out[1024];
  size_t n = 0;
  KT_CHECK_OK(tn_crt_session_answer(&app->s, req->b, req->n, out, sizeof out,
                                    &n));
  ck_assert_uint_gt(n, 0);
  Answer a;
  memset(&a, 0, sizeof a);
  a.r.infer.outputs.funcs.decode = read_output;
  a.r.infer.outputs.arg = &a;
  pb_istream_t is = pb_istream_from_buffer(out, n);
  ck_assert_msg(pb_decode(&is, tvmnode_session_Response_fields, &a.r),
                "the answer does not decode: %s", PB_GET_ERROR(&is));
  return a;
}

/* an Error answer with `status` whose message contains `what` */
static void expect_error(App *app, const Buf *req, int32_t status,
                         const char *what) {
  uint32_t errors = app->s.errors;
  Answer a = ask(app, req);
  ck_assert_msg(a.r.has_error && !a.r.has_infer && !a.r.has_metadata,
                "expected an Error answer");
  ck_assert_str_eq(tn_crt_status_name(a.r.error.status),
                   tn_crt_status_name(status));
  ck_assert_int_eq(app->s.last_status, status);
  ck_assert_uint_eq(app->s.errors, errors + 1);
  ck_assert_msg(strstr(a.r.error.message, what) != NULL,
                "message \"%s\" lacks \"%s\"", a.r.error.message, what);
}

START_TEST(test_metadata) {
  App app;
  app_init(&app);
  Buf req = metadata_request(7, "add_one");
  Answer a = ask(&app, &req);
  ck_assert(a.r.has_metadata && !a.r.has_error);
  ck_assert_uint_eq(a.r.id, 7);
  tvmnode_session_MetadataResponse *m = &a.r.metadata;
  ck_assert_str_eq(m->model, "add_one");
  ck_assert_uint_eq(m->inputs_count, 1);
  ck_assert_uint_eq(m->outputs_count, 1);
  ck_assert_str_eq(m->inputs[0].name, "x");
  ck_assert_int_eq(m->inputs[0].dtype, TN_CRT_I32);
  ck_assert_uint_eq(m->inputs[0].shape_count, 1);
  ck_assert_int_eq(m->inputs[0].shape[0], 4);
  ck_assert_uint_eq(m->inputs[0].nbytes, 16);
  ck_assert(m->inputs[0].scale == 0.5f);
  ck_assert_int_eq(m->inputs[0].zero_point, -3);
  ck_assert_str_eq(m->outputs[0].name, "y");
  ck_assert_int_eq(m->macs, 4);
  ck_assert_uint_eq(m->ticks_per_second, 25000000u);
  ck_assert_uint_eq(m->instructions_per_tick, 40u);
  /* the other model by name, and an empty name: the first */
  req = metadata_request(8, "swap");
  a = ask(&app, &req);
  ck_assert_str_eq(a.r.metadata.model, "swap");
  ck_assert_uint_eq(a.r.metadata.inputs_count, 2);
  ck_assert_uint_eq(a.r.metadata.inputs[0].shape_count, 2);
  ck_assert_int_eq(a.r.metadata.inputs[0].shape[1], 2);
  ck_assert_str_eq(a.r.metadata.outputs[1].name, "a_out");
  req = metadata_request(9, "");
  a = ask(&app, &req);
  ck_assert_str_eq(a.r.metadata.model, "add_one");
  ck_assert_uint_eq(app.s.requests, 3);
  ck_assert_uint_eq(app.s.errors, 0);
  ck_assert_int_eq(runs, 0);
}
END_TEST

START_TEST(test_infer) {
  App app;
  app_init(&app);
  int32_t x[4] = {1, -2, 300000, -7};
  const void *ins[] = {x};
  size_t sizes[] = {16};
  Buf req = infer_request(42, "add_one", 1, ins, sizes, 0, 0);
  Answer a = ask(&app, &req);
  ck_assert(a.r.has_infer && !a.r.has_error);
  ck_assert_uint_eq(a.r.id, 42);
  ck_assert_int_eq(a.outputs, 1);
  ck_assert_uint_eq(a.out_len[0], 16);
  int32_t y[4];
  memcpy(y, a.out[0], 16);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(y[i], x[i] + 1);
  ck_assert_uint_eq(a.r.infer.ticks_count, 0);
  ck_assert_int_eq(runs, 1);
  /* two inputs and two outputs, in order */
  uint8_t ia[2] = {0x80, 0x7f}, ib[3] = {0, 1, 0xff};
  const void *ins2[] = {ia, ib};
  size_t sizes2[] = {2, 3};
  req = infer_request(43, "swap", 2, ins2, sizes2, 0, 0);
  a = ask(&app, &req);
  ck_assert(a.r.has_infer);
  ck_assert_int_eq(a.outputs, 2);
  ck_assert_uint_eq(a.out_len[0], 3);
  ck_assert_uint_eq(a.out_len[1], 2);
  ck_assert(memcmp(a.out[0], ib, 3) == 0 && memcmp(a.out[1], ia, 2) == 0);
}
END_TEST

START_TEST(test_infer_timed) {
  App app;
  app_init(&app);
  int32_t x[4] = {5, 6, 7, 8};
  const void *ins[] = {x};
  size_t sizes[] = {16};
  Buf req = infer_request(1, "add_one", 1, ins, sizes, 3, 2);
  Answer a = ask(&app, &req);
  ck_assert(a.r.has_infer);
  ck_assert_int_eq(runs, 1 + 3 * 2); /* one untimed, then 3 repeats of 2 */
  ck_assert_uint_eq(a.r.infer.ticks_count, 3);
  for (int r = 0; r < 3; r++) ck_assert_uint_eq(a.r.infer.ticks[r], 20);
  ck_assert_uint_eq(a.r.infer.number, 2);
  ck_assert_uint_eq(a.r.infer.ticks_per_second, 25000000u);
  ck_assert_uint_eq(a.r.infer.instructions_per_tick, 40u);
  int32_t y[4];
  memcpy(y, a.out[0], 16);
  ck_assert_int_eq(y[3], 9);
  /* number 0 is one run a repeat */
  runs = 0;
  req = infer_request(2, "add_one", 1, ins, sizes, 32, 0);
  a = ask(&app, &req);
  ck_assert_uint_eq(a.r.infer.ticks_count, 32);
  ck_assert_uint_eq(a.r.infer.ticks[31], 10);
  ck_assert_int_eq(runs, 33);
  req = infer_request(3, "add_one", 1, ins, sizes, 33, 1);
  expect_error(&app, &req, TN_CRT_INVALID_ARGUMENT,
               "repeat: expected at most 32, received 33");
  KT_CHECK_OK(tn_crt_session_set_clock(&app.s, NULL, NULL, 0, 0));
  req = infer_request(4, "add_one", 1, ins, sizes, 1, 1);
  expect_error(&app, &req, TN_CRT_UNSUPPORTED, "no clock");
}
END_TEST

START_TEST(test_errors) {
  App app;
  app_init(&app);
  int32_t x[4] = {0};
  const void *ins[] = {x, x};
  size_t sizes[] = {16, 16};
  Buf req = metadata_request(1, "kws");
  expect_error(&app, &req, TN_CRT_INVALID_ARGUMENT,
               "metadata: no model \"kws\" on the device");
  req = infer_request(2, "kws", 1, ins, sizes, 0, 0);
  expect_error(&app, &req, TN_CRT_INVALID_ARGUMENT, "infer: no model \"kws\"");
  size_t short_size[] = {3};
  req = infer_request(3, "add_one", 1, ins, short_size, 0, 0);
  expect_error(&app, &req, TN_CRT_SHAPE_MISMATCH,
               "input 0 (x) of model add_one: expected 16 bytes, received 3");
  req = infer_request(4, "add_one", 0, ins, sizes, 0, 0);
  expect_error(&app, &req, TN_CRT_SHAPE_MISMATCH,
               "expected 1 inputs, received 0");
  req = infer_request(5, "add_one", 2, ins, sizes, 0, 0);
  expect_error(&app, &req, TN_CRT_SHAPE_MISMATCH,
               "expected 1 inputs, received 2");
  ck_assert_int_eq(runs, 0);
  /* a failed run is answered with its code */
  int32_t big[4] = {1, INT32_MAX, 0, 0};
  const void *bins[] = {big};
  req = infer_request(6, "add_one", 1, bins, sizes, 0, 0);
  expect_error(&app, &req, TN_CRT_OVERFLOW, "the model's run returned OVERFLOW");
  /* not a Request, neither, both */
  Buf junk = {{0xff, 0xff, 0xff}, 3};
  expect_error(&app, &junk, TN_CRT_INVALID_ARGUMENT,
               "not a tvmnode.session.Request");
  Buf empty = {{0}, 0};
  expect_error(&app, &empty, TN_CRT_INVALID_ARGUMENT, "received neither");
  Buf both = metadata_request(7, "");
  Buf m = {0};
  sub(&both, 3, &m);
  expect_error(&app, &both, TN_CRT_INVALID_ARGUMENT, "received both");
  /* the model named after its inputs */
  Buf inner = {0}, late = {0};
  bytes_field(&inner, 2, x, 16);
  bytes_field(&inner, 1, "swap", 4);
  sub(&late, 3, &inner);
  expect_error(&app, &late, TN_CRT_INVALID_ARGUMENT,
               "name must come before its inputs");
  /* the session still answers */
  req = infer_request(8, "add_one", 1, ins, sizes, 0, 0);
  Answer a = ask(&app, &req);
  ck_assert(a.r.has_infer);
  ck_assert_uint_eq(a.r.id, 8);
}
END_TEST

START_TEST(test_small_answer_buffer) {
  App app;
  app_init(&app);
  int32_t x[4] = {0};
  const void *ins[] = {x};
  size_t sizes[] = {16};
  Buf req = infer_request(1, "add_one", 1, ins, sizes, 0, 0);
  uint8_t out[1024];
  size_t n = 99;
  /* outputs do not fit 20 bytes: an Error answer that does */
  KT_CHECK_OK(tn_crt_session_answer(&app.s, req.b, req.n, out, 20, &n));
  ck_assert_int_eq(app.s.last_status, TN_CRT_SCRATCH_TOO_SMALL);
  ck_assert_uint_le(n, 20);
  tvmnode_session_Response r = tvmnode_session_Response_init_zero;
  pb_istream_t is = pb_istream_from_buffer(out, n);
  ck_assert(pb_decode(&is, tvmnode_session_Response_fields, &r));
  ck_assert(r.has_error && r.error.status == TN_CRT_SCRATCH_TOO_SMALL);
  ck_assert_msg(strncmp(r.error.message, "answer: more", strlen(r.error.message)) == 0,
                "a shortened message: \"%s\"", r.error.message);
  ck_assert_uint_gt(strlen(r.error.message), 0);
  /* not even the Error fits */
  n = 99;
  EXPECT_ST(tn_crt_session_answer(&app.s, req.b, req.n, out, 3, &n),
            TN_CRT_SCRATCH_TOO_SMALL);
  ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_every_truncation) {
  App app;
  app_init(&app);
  int32_t x[4] = {1, 2, 3, 4};
  const void *ins[] = {x};
  size_t sizes[] = {16};
  Buf req = infer_request(1, "add_one", 1, ins, sizes, 2, 1);
  uint8_t out[1024];
  for (size_t len = 0; len < req.n; len++) {
    uint8_t *copy = xalloc(len + 1); /* ASan sees past len */
    memcpy(copy, req.b, len);
    size_t n = 0;
    KT_CHECK_OK(tn_crt_session_answer(&app.s, copy, len, out, sizeof out, &n));
    ck_assert_uint_gt(n, 0);
    ck_assert_int_ne(app.s.last_status, TN_CRT_OK);
    free(copy);
  }
  size_t n = 0;
  KT_CHECK_OK(tn_crt_session_answer(&app.s, req.b, req.n, out, sizeof out, &n));
  ck_assert_int_eq(app.s.last_status, TN_CRT_OK);
}
END_TEST

START_TEST(test_bad_calls) {
  App app;
  app_init(&app);
  uint8_t out[64];
  size_t n = 0;
  EXPECT_ST(tn_crt_session_init(NULL, app.list, 1), TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_init(&app.s, NULL, 1), TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_init(&app.s, app.list, 0), TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_session_set_clock(NULL, runs_clock, NULL, 1, 1),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_answer(NULL, out, 0, out, sizeof out, &n),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_answer(&app.s, NULL, 1, out, sizeof out, &n),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_answer(&app.s, out, 0, NULL, sizeof out, &n),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_session_answer(&app.s, out, 0, out, sizeof out, NULL),
            TN_CRT_NULL_POINTER);
  /* an instance that is not initialised is no model of the session */
  TnCrtInstance zero;
  memset(&zero, 0, sizeof zero);
  TnCrtInstance *list[] = {&zero};
  KT_CHECK_OK(tn_crt_session_init(&app.s, list, 1));
  Buf req = metadata_request(1, "");
  expect_error(&app, &req, TN_CRT_INVALID_ARGUMENT, "no model \"\"");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("crt_session");
  TCase *tc = tcase_create("crt_session");
  tcase_add_test(tc, test_metadata);
  tcase_add_test(tc, test_infer);
  tcase_add_test(tc, test_infer_timed);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_small_answer_buffer);
  tcase_add_test(tc, test_every_truncation);
  tcase_add_test(tc, test_bad_calls);
  suite_add_tcase(s, tc);
  return s;
}

KT_MAIN(make_suite)
