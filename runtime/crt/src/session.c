/*
 * session.c: a device session's requests answered on the device (see
 * tvmnode/crt/session.h), with nanopb's messages of
 * runtime/crt/proto/tvmnode_session.proto.
 */
#include "tvmnode/crt/session.h"

#include "crt_libc.h"
#include "session_pb.h"
#include "tvmnode_session.pb.h"
#include "../third_party/nanopb/pb_decode.h"
#include "../third_party/nanopb/pb_encode.h"

/* An error message being written: bounded, always 0-terminated. */
typedef struct {
  char *p;
  size_t len, cap;
} Msg;

static void put(Msg *m, const char *s) {
  while (s && *s && m->len + 1 < m->cap) m->p[m->len++] = *s++;
  m->p[m->len] = 0;
}

static void put_u(Msg *m, uint64_t v) {
  char d[24];
  size_t n = 0;
  do {
    d[n++] = (char)('0' + (int)(v % 10u));
    v /= 10u;
  } while (v);
  while (n && m->len + 1 < m->cap) m->p[m->len++] = d[--n];
  m->p[m->len] = 0;
}

/* What the decoding of a request found, beside the message itself. */
typedef struct {
  TnCrtSession *s;
  tvmnode_session_Request *req;
  TnCrtInstance *inst; /* the model the inputs are for, once named */
  int32_t looked_up;
  int32_t count;       /* inputs received */
  int32_t status;      /* the first thing wrong with them ... */
  Msg msg;             /* ... and what */
} Decoding;

static TnCrtInstance *find(TnCrtSession *s, const char *name) {
  for (int32_t i = 0; i < s->num_instances; i++) {
    TnCrtInstance *inst = s->instances[i];
    TnCrtReport r; /* through the API: an instance not initialised has none */
    if (tn_crt_report(inst, &r) != TN_CRT_OK || !r.model->name) continue;
    if (!name[0]) return inst;
    const char *a = r.model->name, *b = name;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return inst;
  }
  return NULL;
}

static void fail(Decoding *d, int32_t status, const char *what) {
  if (d->status != TN_CRT_OK) return;
  d->status = status;
  put(&d->msg, what);
}

/* One input's bytes: into the instance's buffer when the model is known
 * and the size is right, skipped otherwise (the error is kept for the
 * answer, so that the whole request is still read). */
static bool read_input(pb_istream_t *stream, const pb_field_t *field,
                       void **arg) {
  (void)field;
  Decoding *d = (Decoding *)*arg;
  int32_t i = d->count++;
  size_t n = stream->bytes_left;
  if (!d->looked_up) {
    d->looked_up = 1;
    d->inst = find(d->s, d->req->infer.model);
  }
  TnCrtTensor t = {0};
  if (d->inst && i < d->inst->model->num_inputs &&
      tn_crt_input(d->inst, i, &t) == TN_CRT_OK && t.data &&
      n == t.info->nbytes)
    return pb_read(stream, (pb_byte_t *)t.data, n);
  if (d->inst && i < d->inst->model->num_inputs && t.info &&
      n != t.info->nbytes && d->status == TN_CRT_OK) {
    d->status = TN_CRT_SHAPE_MISMATCH;
    put(&d->msg, "infer: input ");
    put_u(&d->msg, (uint64_t)i);
    put(&d->msg, " (");
    put(&d->msg, t.info->name);
    put(&d->msg, ") of model ");
    put(&d->msg, d->inst->model->name);
    put(&d->msg, ": expected ");
    put_u(&d->msg, t.info->nbytes);
    put(&d->msg, " bytes, received ");
    put_u(&d->msg, n);
  } else if (d->inst && t.info && !t.data) {
    fail(d, TN_CRT_NOT_BOUND, "infer: an input of the model has no buffer");
  }
  return pb_read(stream, NULL, n);
}

/* The outputs of the answer, from the instance's buffers. */
static bool write_outputs(pb_ostream_t *stream, const pb_field_t *field,
                          void *const *arg) {
  TnCrtInstance *inst = (TnCrtInstance *)*arg;
  for (int32_t i = 0; i < inst->model->num_outputs; i++) {
    TnCrtTensor t;
    if (tn_crt_output(inst, i, &t) != TN_CRT_OK || !t.data) return false;
    if (!pb_encode_tag_for_field(stream, field) ||
        !pb_encode_string(stream, (const pb_byte_t *)t.data, t.info->nbytes))
      return false;
  }
  return true;
}

static void copy_name(char *dst, size_t cap, const char *src) {
  size_t i = 0;
  while (src && src[i] && i + 1 < cap) dst[i] = src[i], i++;
  dst[i] = 0;
}

static int32_t unknown_model(Msg *m, const char *what, const char *name) {
  put(m, what);
  put(m, ": no model \"");
  put(m, name);
  put(m, "\" on the device");
  return TN_CRT_INVALID_ARGUMENT;
}

static void tensor_info(tvmnode_session_TensorInfo *o,
                        const TnCrtTensorInfo *t) {
  copy_name(o->name, sizeof o->name, t->name);
  o->dtype = t->dtype;
  o->shape_count = (pb_size_t)t->ndim;
  for (int32_t k = 0; k < t->ndim; k++) o->shape[k] = t->shape[k];
  o->nbytes = t->nbytes;
  o->scale = t->scale;
  o->zero_point = t->zero_point;
}

static int32_t metadata(TnCrtSession *s, const tvmnode_session_Request *req,
                        tvmnode_session_MetadataResponse *o, Msg *m) {
  TnCrtInstance *inst = find(s, req->metadata.model);
  if (!inst) return unknown_model(m, "metadata", req->metadata.model);
  const TnCrtModel *model = inst->model;
  if (model->num_inputs > TN_CRT_SESSION_MAX_IO ||
      model->num_outputs > TN_CRT_SESSION_MAX_IO) {
    put(m, "metadata: the session describes at most 8 inputs and outputs");
    return TN_CRT_UNSUPPORTED;
  }
  copy_name(o->model, sizeof o->model, model->name);
  for (int32_t i = 0; i < model->num_inputs + model->num_outputs; i++) {
    const TnCrtTensorInfo *t = i < model->num_inputs
                                   ? &model->inputs[i]
                                   : &model->outputs[i - model->num_inputs];
    if (t->ndim < 0 || t->ndim > 8) {
      put(m, "metadata: a tensor of more than 8 dimensions");
      return TN_CRT_UNSUPPORTED;
    }
  }
  o->inputs_count = (pb_size_t)model->num_inputs;
  for (int32_t i = 0; i < model->num_inputs; i++)
    tensor_info(&o->inputs[i], &model->inputs[i]);
  o->outputs_count = (pb_size_t)model->num_outputs;
  for (int32_t i = 0; i < model->num_outputs; i++)
    tensor_info(&o->outputs[i], &model->outputs[i]);
  o->macs = model->macs;
  o->ticks_per_second = s->ticks_per_second;
  o->instructions_per_tick = s->instructions_per_tick;
  return TN_CRT_OK;
}

static int32_t run_failed(Msg *m, const char *what, int32_t st) {
  put(m, what);
  put(m, ": the model's run returned ");
  put(m, tn_crt_status_name(st));
  return st;
}

static int32_t infer(TnCrtSession *s, Decoding *d,
                     tvmnode_session_InferResponse *o, Msg *m) {
  const tvmnode_session_InferRequest *in = &d->req->infer;
  TnCrtInstance *inst = find(s, in->model);
  if (!inst) return unknown_model(m, "infer", in->model);
  if (d->looked_up && d->inst != inst) {
    put(m, "infer: the model's name must come before its inputs");
    return TN_CRT_INVALID_ARGUMENT;
  }
  if (d->status != TN_CRT_OK) {
    put(m, d->msg.p);
    return d->status;
  }
  if (d->count != inst->model->num_inputs) {
    put(m, "infer: model ");
    put(m, inst->model->name);
    put(m, ": expected ");
    put_u(m, (uint64_t)inst->model->num_inputs);
    put(m, " inputs, received ");
    put_u(m, (uint64_t)d->count);
    return TN_CRT_SHAPE_MISMATCH;
  }
  if (in->repeat > TN_CRT_SESSION_MAX_REPEAT) {
    put(m, "infer: repeat: expected at most 32, received ");
    put_u(m, in->repeat);
    return TN_CRT_INVALID_ARGUMENT;
  }
  if (in->repeat && !s->clock) {
    put(m, "infer: repeat: this device has no clock to time runs with");
    return TN_CRT_UNSUPPORTED;
  }
  if (in->repeat) {
    for (int32_t i = 0; i < inst->model->num_inputs; i++) {
      if (inst->model->inputs[i].pool >= 0) {
        put(m, "infer: repeat: the inputs of model ");
        put(m, inst->model->name);
        put(m, " live in its workspace, which runs overwrite: not timed");
        return TN_CRT_UNSUPPORTED;
      }
    }
  }
  int32_t st = tn_crt_run(inst);
  if (st != TN_CRT_OK) return run_failed(m, "infer", st);
  uint32_t number = in->number ? in->number : 1u;
  for (uint32_t r = 0; r < in->repeat; r++) {
    uint64_t t0 = s->clock(s->clock_ctx);
    for (uint32_t k = 0; k < number && st == TN_CRT_OK; k++)
      st = tn_crt_run(inst);
    if (st != TN_CRT_OK) return run_failed(m, "infer: a timed run", st);
    o->ticks[r] = s->clock(s->clock_ctx) - t0;
  }
  o->ticks_count = (pb_size_t)in->repeat;
  o->number = in->repeat ? number : 0u;
  o->ticks_per_second = s->ticks_per_second;
  o->instructions_per_tick = s->instructions_per_tick;
  o->outputs.funcs.encode = write_outputs;
  o->outputs.arg = inst;
  return TN_CRT_OK;
}

int32_t tn_crt_session_init(TnCrtSession *s, TnCrtInstance *const *instances,
                            int32_t num_instances) {
  if (!s || !instances) return TN_CRT_NULL_POINTER;
  if (num_instances < 1) return TN_CRT_INVALID_ARGUMENT;
  memset(s, 0, sizeof *s);
  s->instances = instances;
  s->num_instances = num_instances;
  return TN_CRT_OK;
}

int32_t tn_crt_session_set_clock(TnCrtSession *s, TnCrtSessionClock clock,
                                 void *ctx, uint32_t ticks_per_second,
                                 uint32_t instructions_per_tick) {
  if (!s) return TN_CRT_NULL_POINTER;
  s->clock = clock;
  s->clock_ctx = ctx;
  s->ticks_per_second = ticks_per_second;
  s->instructions_per_tick = instructions_per_tick;
  return TN_CRT_OK;
}

int32_t tn_crt_session_answer(TnCrtSession *s, const uint8_t *req, size_t len,
                              uint8_t *out, size_t cap, size_t *out_len) {
  if (!s || !out || !out_len || (!req && len > 0)) return TN_CRT_NULL_POINTER;
  *out_len = 0;
  tvmnode_session_Request rq = tvmnode_session_Request_init_zero;
  tvmnode_session_Response rs = tvmnode_session_Response_init_zero;
  char decode_msg[TN_CRT_SESSION_MAX_MESSAGE + 1] = {0};
  Decoding d = {s, &rq, NULL, 0, 0, TN_CRT_OK,
                {decode_msg, 0, sizeof decode_msg}};
  Msg m = {rs.error.message, 0, sizeof rs.error.message};
  int32_t st = TN_CRT_OK;
  rq.infer.inputs.funcs.decode = read_input;
  rq.infer.inputs.arg = &d;
  pb_istream_t is = pb_istream_from_buffer(req ? req : (const uint8_t *)"", len);
  if (!pb_decode(&is, tvmnode_session_Request_fields, &rq)) {
    put(&m, "request: not a tvmnode.session.Request (");
    put(&m, PB_GET_ERROR(&is));
    put(&m, ")");
    st = TN_CRT_INVALID_ARGUMENT;
  } else if (rq.has_metadata == rq.has_infer) {
    put(&m, "request: expected one of metadata and infer, received ");
    put(&m, rq.has_metadata ? "both" : "neither");
    st = TN_CRT_INVALID_ARGUMENT;
  } else if (rq.has_metadata) {
    st = metadata(s, &rq, &rs.metadata, &m);
    rs.has_metadata = st == TN_CRT_OK;
  } else {
    st = infer(s, &d, &rs.infer, &m);
    rs.has_infer = st == TN_CRT_OK;
  }
  rs.id = rq.id;
  pb_ostream_t os = pb_ostream_from_buffer(out, cap);
  if (st == TN_CRT_OK &&
      !pb_encode(&os, tvmnode_session_Response_fields, &rs)) {
    rs.has_metadata = rs.has_infer = false;
    put(&m, "answer: more than the device's ");
    put_u(&m, cap);
    put(&m, " bytes of answer buffer");
    st = TN_CRT_SCRATCH_TOO_SMALL;
    os = pb_ostream_from_buffer(out, cap);
  }
  s->requests++;
  s->last_status = st;
  if (st != TN_CRT_OK) {
    s->errors++;
    rs.has_error = true;
    rs.error.status = st;
    /* the message shortened to what fits: the code always goes */
    size_t with = 0, bare = 0;
    (void)pb_get_encoded_size(&with, tvmnode_session_Response_fields, &rs);
    if (with > cap) {
      char keep = rs.error.message[0];
      rs.error.message[0] = 0;
      (void)pb_get_encoded_size(&bare, tvmnode_session_Response_fields, &rs);
      rs.error.message[0] = keep;
      /* the message's key and length bytes were not counted in bare */
      size_t fit = cap > bare + 2u ? cap - bare - 2u : 0u;
      if (fit < m.len) m.p[fit] = 0;
    }
    if (!pb_encode(&os, tvmnode_session_Response_fields, &rs))
      return TN_CRT_SCRATCH_TOO_SMALL;
  }
  *out_len = os.bytes_written;
  return TN_CRT_OK;
}
