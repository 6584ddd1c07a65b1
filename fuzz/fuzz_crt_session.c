/*
 * fuzz_crt_session.c: libFuzzer target for the crt's device session
 * (tvmnode/crt/session.h): nanopb's decoding of a Request and the answer,
 * what a device does with the body of every REQUEST frame it receives.
 *
 * The first input byte sizes the answer buffer (0 to 255 bytes, or 1024
 * when 0), the rest is the request, copied into a block of exactly its
 * size (so ASan sees any read past it). Two made-up models serve: "inc"
 * (eight int8 in, eight out, y = x + 1 wrapping) and "pair" (two inputs of
 * 3 and 5 bytes, one output of their 8 bytes concatenated), with a clock.
 * Every request must be answered (or be refused with SCRATCH_TOO_SMALL
 * when not even an Error fits), the answer must fit the buffer and decode
 * as a Response with exactly one of metadata, infer and error, an error
 * with the code the session recorded; an answered infer of "inc" carries
 * its output, which must be the input plus one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/crt/kernels.h> /* TnCrtDType */
#include <tvmnode/crt/session.h>

#include "../runtime/crt/src/tvmnode_session.pb.h"
#include "../runtime/crt/third_party/nanopb/pb_decode.h"

static int32_t inc_run(void *const *inputs, void *const *outputs,
                       void *const *workspace, void *const *constants,
                       void *const *devices) {
  (void)workspace, (void)constants, (void)devices;
  const uint8_t *x = inputs[0];
  uint8_t *y = outputs[0];
  for (int i = 0; i < 8; i++) y[i] = (uint8_t)(x[i] + 1u);
  return TN_CRT_OK;
}

static int32_t pair_run(void *const *inputs, void *const *outputs,
                        void *const *workspace, void *const *constants,
                        void *const *devices) {
  (void)workspace, (void)constants, (void)devices;
  memcpy(outputs[0], inputs[0], 3);
  memcpy((uint8_t *)outputs[0] + 3, inputs[1], 5);
  return TN_CRT_OK;
}

static const int32_t shape8[] = {8}, shape3[] = {3}, shape5[] = {1, 5};
static const TnCrtTensorInfo inc_in[] = {
    {"x", TN_CRT_I8, 1, shape8, 8, 0.25f, 1, -1, 0}};
static const TnCrtTensorInfo inc_out[] = {
    {"y", TN_CRT_I8, 1, shape8, 8, 0.25f, 2, -1, 0}};
static const TnCrtModel inc = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "inc", "fuzz",
    1, 1, inc_in, inc_out, 0, NULL, 0, NULL, NULL, 0, NULL, 8, 0, inc_run};
static const TnCrtTensorInfo pair_in[] = {
    {"a", TN_CRT_U8, 1, shape3, 3, 0.0f, 0, -1, 0},
    {"b", TN_CRT_U8, 2, shape5, 5, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo pair_out[] = {
    {"ab", TN_CRT_U8, 1, shape8, 8, 0.0f, 0, -1, 0}};
static const TnCrtModel pair = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "pair", "fuzz",
    2, 1, pair_in, pair_out, 0, NULL, 0, NULL, NULL, 0, NULL, 0, 0, pair_run};

static void fail(const char *what) {
  fprintf(stderr, "fuzz_crt_session: %s\n", what);
  abort();
}

static uint64_t ticks;
static uint64_t clock_fn(void *ctx) {
  (void)ctx;
  return ticks += 3;
}

typedef struct {
  uint8_t out[8];
  int n;
} Outputs;

static bool read_output(pb_istream_t *stream, const pb_field_t *field,
                        void **arg) {
  (void)field;
  Outputs *o = *arg;
  if (o->n++ > 0 || stream->bytes_left != 8) return false;
  return pb_read(stream, o->out, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t cap = data[0] ? data[0] : 1024u;
  static uint8_t x[8], y[8], a[3], b[5], ab[8];
  static TnCrtInstance i_inc, i_pair;
  TnCrtInstance *list[] = {&i_inc, &i_pair};
  if (tn_crt_instance_init(&i_inc, &inc, NULL, 0, NULL, 0) != TN_CRT_OK ||
      tn_crt_bind_input(&i_inc, 0, x, 8) != TN_CRT_OK ||
      tn_crt_bind_output(&i_inc, 0, y, 8) != TN_CRT_OK ||
      tn_crt_instance_init(&i_pair, &pair, NULL, 0, NULL, 0) != TN_CRT_OK ||
      tn_crt_bind_input(&i_pair, 0, a, 3) != TN_CRT_OK ||
      tn_crt_bind_input(&i_pair, 1, b, 5) != TN_CRT_OK ||
      tn_crt_bind_output(&i_pair, 0, ab, 8) != TN_CRT_OK)
    fail("setting the models up");
  TnCrtSession s;
  if (tn_crt_session_init(&s, list, 2) != TN_CRT_OK ||
      tn_crt_session_set_clock(&s, clock_fn, NULL, 1000u, 0u) != TN_CRT_OK)
    fail("setting the session up");
  size_t len = size - 1;
  uint8_t *req = malloc(len ? len : 1);
  uint8_t *out = malloc(cap);
  if (!req || !out) abort();
  memcpy(req, data + 1, len);
  size_t n = 12345;
  int32_t st = tn_crt_session_answer(&s, req, len, out, cap, &n);
  if (st == TN_CRT_SCRATCH_TOO_SMALL) {
    if (n != 0) fail("no answer, but a length");
  } else if (st != TN_CRT_OK) {
    fail("a request was neither answered nor refused for the buffer");
  } else {
    if (n == 0 || n > cap) fail("an answer's length out of its buffer");
    tvmnode_session_Response r = tvmnode_session_Response_init_zero;
    Outputs o = {{0}, 0};
    r.infer.outputs.funcs.decode = read_output;
    r.infer.outputs.arg = &o;
    pb_istream_t is = pb_istream_from_buffer(out, n);
    if (!pb_decode(&is, tvmnode_session_Response_fields, &r))
      fail("the answer does not decode");
    if (r.has_metadata + r.has_infer + r.has_error != 1)
      fail("an answer without exactly one kind");
    if (r.has_error != (s.last_status != TN_CRT_OK) ||
        (r.has_error && r.error.status != s.last_status))
      fail("the error answered is not the status recorded");
    if (r.has_infer && r.infer.ticks_count > TN_CRT_SESSION_MAX_REPEAT)
      fail("more timed repeats than the bound");
    if (r.has_infer && o.n == 1 && memcmp(o.out, y, 8) == 0) {
      for (int i = 0; i < 8; i++)
        if ((uint8_t)(x[i] + 1u) != o.out[i]) fail("inc answered wrong");
    }
  }
  free(req);
  free(out);
  return 0;
}
