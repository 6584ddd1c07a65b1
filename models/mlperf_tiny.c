/*
 * mlperf_tiny.c: the MLPerf Tiny reference models as tvmnode IR (see
 * mlperf_tiny.h for what each one is).
 *
 * Builders share one state: every object made goes into a pool released at
 * the end, and once a step fails every later step returns NULL at once, so
 * the graph code reads like the network description and still stops at the
 * first error, leaking nothing.
 */
#include "mlperf_tiny.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  GPtrArray *pool;
  uint64_t rng;
  bool failed;
  int64_t calls; /* operator calls made */
} B;

static const DLDataType F32 = {kDLFloat, 32, 1};
static const DLDataType I8 = {kDLInt, 8, 1};
static const DLDataType I32 = {kDLInt, 32, 1};

static TnObject *own(B *b, TnObject *o) {
  if (o == NULL) {
    b->failed = true;
    return NULL;
  }
  g_ptr_array_add(b->pool, o);
  return o;
}

/* xorshift64*: reproducible weights on every platform */
static double uniform(B *b) {
  b->rng ^= b->rng >> 12;
  b->rng ^= b->rng << 25;
  b->rng ^= b->rng >> 27;
  return (double)((b->rng * UINT64_C(2685821657736338717)) >> 11) /
         (double)(UINT64_C(1) << 53);
}

/* A constant of random values in [lo, hi). */
static TnObject *rand_const(B *b, const int64_t *shape, int32_t nd,
                            DLDataType dt, double lo, double hi) {
  if (b->failed) return NULL;
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = own(b, tn_tensor_empty(shape, nd, dt, cpu));
  if (t == NULL) return NULL;
  DLTensor *dl = tn_tensor_dltensor(t);
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) n *= shape[i];
  for (int64_t i = 0; i < n; i++) {
    double v = lo + (hi - lo) * uniform(b);
    if (dt.code == kDLFloat) ((float *)dl->data)[i] = (float)v;
    else if (dt.bits == 8) ((int8_t *)dl->data)[i] = (int8_t)v;
    else ((int32_t *)dl->data)[i] = (int32_t)v;
  }
  return own(b, tn_ir_constant(t));
}

static TnObject *vec(B *b, int64_t n, DLDataType dt, double lo, double hi) {
  return rand_const(b, &n, 1, dt, lo, hi);
}

static TnObject *fscalar(B *b, double v) {
  return b->failed ? NULL : own(b, tn_ir_scalar(v, F32));
}

static TnObject *iscalar(B *b, int32_t v) {
  return b->failed ? NULL : own(b, tn_ir_scalar(v, I32));
}

static TnObject *ints(B *b, int32_t n, const int64_t *v) {
  if (b->failed) return NULL;
  TnAny items[8];
  for (int32_t i = 0; i < n; i++) items[i] = tn_any_int(v[i]);
  return own(b, tn_array_new(items, n));
}

/* Call `name` on `args` with attributes (names[i] = values[i]). */
static TnObject *call(B *b, const char *name, TnObject *const *args, int32_t n,
                      const char *const *names, const TnAny *values,
                      int32_t nattrs) {
  if (b->failed) return NULL;
  for (int32_t i = 0; i < n; i++)
    if (args[i] == NULL) return NULL;
  b->calls++;
  return own(b, tn_ir_call_op(name, args, n, names, values, nattrs));
}

static TnObject *call1(B *b, const char *name, TnObject *x) {
  return call(b, name, &x, 1, NULL, NULL, 0);
}

static TnObject *call2(B *b, const char *name, TnObject *x, TnObject *y) {
  TnObject *args[2] = {x, y};
  return call(b, name, args, 2, NULL, NULL, 0);
}

static TnObject *transpose(B *b, TnObject *x, int32_t nd, const int64_t *axes) {
  const char *names[] = {"axes"};
  TnObject *a = ints(b, nd, axes);
  if (a == NULL) return NULL;
  TnAny v = tn_any_obj(a);
  return call(b, "transpose", &x, 1, names, &v, 1);
}

static TnObject *clip(B *b, TnObject *x, double lo, double hi) {
  const char *names[] = {"a_min", "a_max"};
  TnAny v[] = {tn_any_float(lo), tn_any_float(hi)};
  return call(b, "clip", &x, 1, names, v, 2);
}

static TnObject *bias_add(B *b, TnObject *x, TnObject *bias, int64_t axis) {
  const char *names[] = {"axis"};
  TnAny v = tn_any_int(axis);
  TnObject *args[2] = {x, bias};
  return call(b, "nn.bias_add", args, 2, names, &v, 1);
}

/* ---- quantization bookkeeping ------------------------------------------------ */

/* An activation: the expression and, for int8, its scale and zero point. */
typedef struct {
  TnObject *e;
  double scale;
  int32_t zp;
} Act;

static Act quantize(B *b, TnObject *x, double scale, int32_t zp) {
  const char *names[] = {"out_dtype"};
  TnAny v = tn_any_cstr("int8");
  TnObject *args[3] = {x, fscalar(b, scale), iscalar(b, zp)};
  return (Act){call(b, "qnn.quantize", args, 3, names, &v, 1), scale, zp};
}

static TnObject *dequantize(B *b, Act a) {
  TnObject *args[3] = {a.e, fscalar(b, a.scale), iscalar(b, a.zp)};
  return call(b, "qnn.dequantize", args, 3, NULL, NULL, 0);
}

/* int32 accumulators (input scale x per-channel kernel scale) back to int8;
 * with `relu` the result is clipped at the zero point. */
static Act requantize(B *b, TnObject *acc, double in_scale, TnObject *kscale,
                      int64_t channels, int64_t axis, bool relu) {
  if (b->failed) return (Act){NULL, 0, 0};
  /* the accumulator's per-channel scale: in_scale * kernel_scale[c] */
  const float *ks = tn_tensor_dltensor(((TnIrConstant *)kscale)->data)->data;
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = own(b, tn_tensor_empty(&channels, 1, F32, cpu));
  if (t == NULL) return (Act){NULL, 0, 0};
  for (int64_t c = 0; c < channels; c++)
    ((float *)tn_tensor_dltensor(t)->data)[c] = (float)(in_scale * ks[c]);
  TnObject *acc_scale = own(b, tn_ir_constant(t));
  double out_scale = 0.02 + 0.06 * uniform(b);
  int32_t zp = relu ? -128 : 0;
  const char *names[] = {"axis", "out_dtype"};
  TnAny v[] = {tn_any_int(axis), tn_any_cstr("int8")};
  TnObject *args[5] = {acc, acc_scale, iscalar(b, 0), fscalar(b, out_scale),
                       iscalar(b, zp)};
  TnObject *y = call(b, "qnn.requantize", args, 5, names, v, 2);
  if (relu) y = clip(b, y, zp, 127);
  return (Act){y, out_scale, zp};
}

/* ---- layers ------------------------------------------------------------------ */

enum { ACT_NONE, ACT_RELU, ACT_RELU6 };

typedef struct {
  int64_t cout, kh, kw, stride;
  int64_t pad[4]; /* top, left, bottom, right */
  bool depthwise;
  int act;
} Conv;

/* TF "same" padding for a square input of `size` (bottom/right heavy). */
static void same_pad(int64_t size, int64_t k, int64_t stride, int64_t pad[4]) {
  int64_t out = (size + stride - 1) / stride;
  int64_t total = (out - 1) * stride + k - size;
  if (total < 0) total = 0;
  pad[0] = pad[1] = total / 2;
  pad[2] = pad[3] = total - total / 2;
}

static TnObject *conv_weight(B *b, int64_t cin, const Conv *c, DLDataType dt,
                             double lo, double hi) {
  /* stored as TFLite stores it (OHWI, or 1HWC for depthwise), then
   * transposed to HWIO */
  int64_t shape[4] = {c->depthwise ? 1 : c->cout, c->kh, c->kw,
                      c->depthwise ? cin : cin};
  static const int64_t ohwi_to_hwio[] = {1, 2, 3, 0};
  static const int64_t dw_to_hwio[] = {1, 2, 0, 3};
  TnObject *w = rand_const(b, shape, 4, dt, lo, hi);
  return transpose(b, w, 4, c->depthwise ? dw_to_hwio : ohwi_to_hwio);
}

static int32_t conv_attrs(B *b, int64_t cin, const Conv *c, const char **names,
                          TnAny *v) {
  int64_t s[2] = {c->stride, c->stride};
  TnObject *strides = ints(b, 2, s), *padding = ints(b, 4, c->pad);
  names[0] = "strides", v[0] = tn_any_obj(strides);
  names[1] = "padding", v[1] = tn_any_obj(padding);
  names[2] = "groups", v[2] = tn_any_int(c->depthwise ? cin : 1);
  names[3] = "data_layout", v[3] = tn_any_cstr("NHWC");
  names[4] = "kernel_layout", v[4] = tn_any_cstr("HWIO");
  return 5;
}

static TnObject *conv_f32(B *b, TnObject *x, int64_t cin, const Conv *c) {
  const char *names[5];
  TnAny v[5];
  int32_t na = conv_attrs(b, cin, c, names, v);
  double r = 1.0 / (double)(c->kh * c->kw * (c->depthwise ? 1 : cin));
  TnObject *args[2] = {x, conv_weight(b, cin, c, F32, -r, r)};
  TnObject *y = call(b, "nn.conv2d", args, 2, names, v, na);
  y = bias_add(b, y, vec(b, c->cout, F32, -0.1, 0.1), 3);
  if (c->act == ACT_RELU) y = call1(b, "nn.relu", y);
  if (c->act == ACT_RELU6) y = clip(b, y, 0, 6);
  return y;
}

static Act conv_i8(B *b, Act x, int64_t cin, const Conv *c) {
  const char *names[5];
  TnAny v[5];
  int32_t na = conv_attrs(b, cin, c, names, v);
  TnObject *kscale = vec(b, c->cout, F32, 0.002, 0.02);
  TnObject *args[6] = {x.e, conv_weight(b, cin, c, I8, -127, 128),
                       iscalar(b, x.zp), iscalar(b, 0), fscalar(b, x.scale),
                       kscale};
  TnObject *acc = call(b, "qnn.conv2d", args, 6, names, v, na);
  acc = bias_add(b, acc, vec(b, c->cout, I32, -2000, 2000), 3);
  return requantize(b, acc, x.scale, kscale, c->cout, 3, c->act != ACT_NONE);
}

static TnObject *dense_f32(B *b, TnObject *x, int64_t in, int64_t out,
                           bool relu) {
  int64_t shape[2] = {in, out};
  static const int64_t swap[] = {1, 0};
  double r = 1.0 / (double)in;
  TnObject *w = transpose(b, rand_const(b, shape, 2, F32, -r, r), 2, swap);
  const char *names[] = {"units"};
  TnAny v = tn_any_int(out);
  TnObject *args[2] = {x, w};
  TnObject *y = call(b, "nn.dense", args, 2, names, &v, 1);
  y = bias_add(b, y, vec(b, out, F32, -0.1, 0.1), 1);
  return relu ? call1(b, "nn.relu", y) : y;
}

static Act dense_i8(B *b, Act x, int64_t in, int64_t out, bool relu) {
  int64_t shape[2] = {in, out};
  static const int64_t swap[] = {1, 0};
  TnObject *w = transpose(b, rand_const(b, shape, 2, I8, -127, 128), 2, swap);
  TnObject *kscale = vec(b, out, F32, 0.002, 0.02);
  const char *names[] = {"units"};
  TnAny v = tn_any_int(out);
  TnObject *args[6] = {x.e, w, iscalar(b, x.zp), iscalar(b, 0),
                       fscalar(b, x.scale), kscale};
  TnObject *acc = call(b, "qnn.dense", args, 6, names, &v, 1);
  acc = bias_add(b, acc, vec(b, out, I32, -2000, 2000), 1);
  return requantize(b, acc, x.scale, kscale, out, 1, relu);
}

static TnObject *avg_pool(B *b, TnObject *x, int64_t k) {
  int64_t ks[2] = {k, k};
  const char *names[] = {"pool_size", "layout"};
  TnAny v[] = {tn_any_obj(ints(b, 2, ks)), tn_any_cstr("NHWC")};
  return call(b, "nn.avg_pool2d", &x, 1, names, v, 2);
}

static TnObject *avg_pool_hw(B *b, TnObject *x, int64_t kh, int64_t kw) {
  int64_t ks[2] = {kh, kw};
  const char *names[] = {"pool_size", "layout"};
  TnAny v[] = {tn_any_obj(ints(b, 2, ks)), tn_any_cstr("NHWC")};
  return call(b, "nn.avg_pool2d", &x, 1, names, v, 2);
}

static TnObject *flatten(B *b, TnObject *x, int64_t n) {
  int64_t s[2] = {1, n};
  const char *names[] = {"newshape"};
  TnAny v = tn_any_obj(ints(b, 2, s));
  return call(b, "reshape", &x, 1, names, &v, 1);
}

static TnObject *softmax(B *b, TnObject *x) {
  return call1(b, "nn.softmax", x);
}

/* ---- the networks -------------------------------------------------------------- */

static TnObject *input(B *b, const int64_t *shape, int32_t nd) {
  TnObject *t = own(b, tn_ir_tensor_type(shape, nd, F32));
  return t ? own(b, tn_ir_var("input", t)) : NULL;
}

/* Either form of a network: a float32 activation or an int8 one. */
typedef struct {
  bool q;
  TnObject *f;
  Act a;
} X;

static X start(B *b, TnObject *in, bool q) {
  X x = {q, in, {NULL, 0, 0}};
  if (q) x.a = quantize(b, in, 0.02, 0);
  return x;
}

static X conv(B *b, X x, int64_t cin, Conv c) {
  if (x.q) x.a = conv_i8(b, x.a, cin, &c);
  else x.f = conv_f32(b, x.f, cin, &c);
  return x;
}

static X dense(B *b, X x, int64_t in, int64_t out, bool relu) {
  if (x.q) x.a = dense_i8(b, x.a, in, out, relu);
  else x.f = dense_f32(b, x.f, in, out, relu);
  return x;
}

static X map1(B *b, X x, TnObject *(*fn)(B *, TnObject *, int64_t), int64_t k) {
  if (x.q) x.a.e = fn(b, x.a.e, k);
  else x.f = fn(b, x.f, k);
  return x;
}

/* The float32 result: dequantized for int8, then softmax when asked. */
static TnObject *finish(B *b, X x, bool with_softmax) {
  TnObject *y = x.q ? dequantize(b, x.a) : x.f;
  return with_softmax ? softmax(b, y) : y;
}

static TnObject *ad(B *b, bool q) {
  static const int64_t dims[] = {640, 128, 128, 128, 128, 8,
                                 128, 128, 128, 128, 640};
  int64_t shape[2] = {1, 640};
  TnObject *in = input(b, shape, 2);
  X x = start(b, in, q);
  for (size_t i = 0; i + 1 < G_N_ELEMENTS(dims); i++)
    x = dense(b, x, dims[i], dims[i + 1], i + 2 < G_N_ELEMENTS(dims));
  return finish(b, x, false);
}

static TnObject *kws(B *b, bool q) {
  int64_t shape[4] = {1, 49, 10, 1};
  X x = start(b, input(b, shape, 4), q);
  x = conv(b, x, 1, (Conv){64, 10, 4, 2, {4, 1, 5, 1}, false, ACT_RELU});
  for (int i = 0; i < 4; i++) {
    x = conv(b, x, 64, (Conv){64, 3, 3, 1, {1, 1, 1, 1}, true, ACT_RELU});
    x = conv(b, x, 64, (Conv){64, 1, 1, 1, {0, 0, 0, 0}, false, ACT_RELU});
  }
  if (x.q) x.a.e = avg_pool_hw(b, x.a.e, 25, 5);
  else x.f = avg_pool_hw(b, x.f, 25, 5);
  x = map1(b, x, flatten, 64);
  x = dense(b, x, 64, 12, false);
  return finish(b, x, true);
}

static TnObject *vww(B *b, bool q) {
  static const struct { int64_t filters, stride; } blocks[] = {
      {16, 1}, {32, 2}, {32, 1}, {64, 2}, {64, 1}, {128, 2}, {128, 1},
      {128, 1}, {128, 1}, {128, 1}, {128, 1}, {256, 2}, {256, 1}};
  int64_t shape[4] = {1, 96, 96, 3};
  X x = start(b, input(b, shape, 4), q);
  Conv c0 = {8, 3, 3, 2, {0}, false, ACT_RELU6};
  same_pad(96, 3, 2, c0.pad);
  x = conv(b, x, 3, c0);
  int64_t size = 48, ch = 8;
  for (size_t i = 0; i < G_N_ELEMENTS(blocks); i++) {
    Conv dw = {ch, 3, 3, blocks[i].stride, {0}, true, ACT_RELU6};
    same_pad(size, 3, blocks[i].stride, dw.pad);
    x = conv(b, x, ch, dw);
    size = (size + blocks[i].stride - 1) / blocks[i].stride;
    x = conv(b, x, ch, (Conv){blocks[i].filters, 1, 1, 1, {0}, false, ACT_RELU6});
    ch = blocks[i].filters;
  }
  x = map1(b, x, avg_pool, size);
  x = map1(b, x, flatten, ch);
  x = dense(b, x, ch, 2, false);
  return finish(b, x, true);
}

/* relu(skip + y), in either form */
static X residual(B *b, X skip, X y) {
  if (!y.q) {
    y.f = call1(b, "nn.relu", call2(b, "add", skip.f, y.f));
    return y;
  }
  double out_scale = 0.02 + 0.06 * uniform(b);
  TnObject *args[8] = {skip.a.e, y.a.e, fscalar(b, skip.a.scale),
                       iscalar(b, skip.a.zp), fscalar(b, y.a.scale),
                       iscalar(b, y.a.zp), fscalar(b, out_scale),
                       iscalar(b, -128)};
  TnObject *sum = call(b, "qnn.add", args, 8, NULL, NULL, 0);
  y.a = (Act){clip(b, sum, -128, 127), out_scale, -128};
  return y;
}

static TnObject *ic(B *b, bool q) {
  int64_t shape[4] = {1, 32, 32, 3};
  X x = start(b, input(b, shape, 4), q);
  x = conv(b, x, 3, (Conv){16, 3, 3, 1, {1, 1, 1, 1}, false, ACT_RELU});
  int64_t ch = 16, size = 32;
  static const int64_t stages[] = {16, 32, 64};
  for (size_t s = 0; s < G_N_ELEMENTS(stages); s++) {
    int64_t out = stages[s], stride = s == 0 ? 1 : 2;
    Conv c1 = {out, 3, 3, stride, {1, 1, 1, 1}, false, ACT_RELU};
    if (stride == 2) same_pad(size, 3, 2, c1.pad);
    X y = conv(b, x, ch, c1);
    y = conv(b, y, out, (Conv){out, 3, 3, 1, {1, 1, 1, 1}, false, ACT_NONE});
    X skip = x;
    if (stride == 2)
      skip = conv(b, x, ch, (Conv){out, 1, 1, 2, {0}, false, ACT_NONE});
    x = residual(b, skip, y);
    size = (size + stride - 1) / stride;
    ch = out;
  }
  x = map1(b, x, avg_pool, size);
  x = map1(b, x, flatten, ch);
  x = dense(b, x, ch, 10, false);
  return finish(b, x, true);
}

/* About `n` operator calls: residual elementwise blocks over 1x64 values,
 * a dense layer in every fourth block, a constant product in each. */
static TnObject *synthetic(B *b, int64_t n) {
  int64_t shape[2] = {1, 64};
  TnObject *in = input(b, shape, 2), *x = in;
  static const int64_t swap[] = {1, 0};
  for (int64_t k = 0; !b->failed && b->calls < n; k++) {
    TnObject *c = call2(b, "multiply", vec(b, 64, F32, -1, 1),
                        vec(b, 64, F32, 0.5, 1.5));
    TnObject *y = call1(b, "nn.relu", call2(b, "add", x, c));
    y = call2(b, "multiply", y, vec(b, 64, F32, 0.5, 1.0));
    if (k % 4 == 3) {
      int64_t ws[2] = {64, 64};
      TnObject *w = transpose(b, rand_const(b, ws, 2, F32, -0.1, 0.1), 2, swap);
      const char *names[] = {"units"};
      TnAny v = tn_any_int(64);
      TnObject *args[2] = {y, w};
      y = call(b, "nn.dense", args, 2, names, &v, 1);
    }
    x = call2(b, "add", y, x);
  }
  return x;
}

/* ---- an untyped twin ----------------------------------------------------------- */

typedef struct {
  TnObject *from, *to;
} Swap;

static TnObject *swap_var(void *ctx, TnObject *orig, TnObject *rebuilt) {
  Swap *s = ctx;
  TnObject *out = orig == s->from ? s->to : rebuilt;
  tn_object_retain(out);
  return out;
}

/* fn (%input: T) { let %x = %input; <body over %x> }: %x has no annotation,
 * so nothing below it can be typed until InferType runs. */
static TnObject *untyped(TnObject *mod) {
  TnObject *main_fn = tn_ir_module_get(mod, "main");
  if (main_fn == NULL) return NULL;
  TnIrFunction *f = (TnIrFunction *)main_fn;
  TnObject *in = tn_array_at(f->params, 0)->v_obj;
  Swap s = {in, tn_ir_var("x", NULL)};
  TnObject *body = s.to ? tn_ir_mutate(f->body, swap_var, &s) : NULL;
  TnObject *let = body ? tn_ir_let(s.to, in, body) : NULL;
  TnObject *fn = let ? tn_ir_function(&in, 1, let, NULL, NULL) : NULL;
  TnObject *out = fn ? tn_ir_module_with(mod, "main", fn) : NULL;
  tn_object_release(fn);
  tn_object_release(let);
  tn_object_release(body);
  tn_object_release(s.to);
  tn_object_release(main_fn);
  return out;
}

/* ---- entry points ---------------------------------------------------------------- */

static const char *const g_names[] = {"ad", "ad-int8", "kws", "kws-int8",
                                      "vww", "vww-int8", "ic", "ic-int8",
                                      NULL};

const char *const *tn_model_names(void) { return g_names; }

TnObject *tn_model_build(const char *name) {
  if (name == NULL) {
    tn_error_raise("TypeError", "tn_model_build: name is NULL");
    return NULL;
  }
  if (strncmp(name, "untyped:", 8) == 0) {
    TnObject *typed = tn_model_build(name + 8);
    TnObject *out = typed ? untyped(typed) : NULL;
    tn_object_release(typed);
    return out;
  }
  B b = {g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release),
         UINT64_C(0x9E3779B97F4A7C15), false, 0};
  size_t len = strlen(name);
  bool q = len > 5 && strcmp(name + len - 5, "-int8") == 0;
  char *base = g_strndup(name, q ? len - 5 : len);
  TnObject *body = NULL;
  if (strcmp(base, "ad") == 0) body = ad(&b, q);
  else if (strcmp(base, "kws") == 0) body = kws(&b, q);
  else if (strcmp(base, "vww") == 0) body = vww(&b, q);
  else if (strcmp(base, "ic") == 0) body = ic(&b, q);
  else if (!q && strncmp(base, "synthetic:", 10) == 0) {
    char *end;
    long long n = strtoll(base + 10, &end, 10);
    if (*end || n < 1 || n > 100000000) {
      tn_error_raise("ValueError", "tn_model_build: '%s': expected "
                     "synthetic:N with N a positive count of calls", name);
      b.failed = true;
    } else {
      body = synthetic(&b, n);
    }
  } else {
    GString *known = g_string_new(NULL);
    for (int i = 0; g_names[i]; i++)
      g_string_append_printf(known, "%s%s", i ? ", " : "", g_names[i]);
    tn_error_raise("KeyError", "tn_model_build: no model is called '%s' "
                   "(known: %s, synthetic:N)", name, known->str);
    g_string_free(known, TRUE);
    b.failed = true;
  }
  g_free(base);
  TnObject *mod = body && !b.failed ? tn_ir_module_from_expr(body) : NULL;
  g_ptr_array_free(b.pool, TRUE);
  return mod;
}
