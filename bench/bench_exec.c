/*
 * bench_exec.c: the host executor on the MLPerf Tiny models, and the crt
 * kernels on the models' layer shapes.
 *
 * Rows (bench_util.h's JSON lines; bench/run.py suite "exec"):
 *   <model>            ns per inference through tn_program_run, after the
 *                      pass pipeline (InferType, SimplifyExpr, FoldConstant,
 *                      DeadCodeElimination, FuseOps), input checks and the
 *                      output copy included
 *   <model>_gmacs      GMAC/s of that run (the program's own MAC count)
 *   <model>_outside    percent of a run spent outside kernel calls,
 *                      measured by the program's profiling counters
 *   k_<layer>_<dtype>  ns per call of the kernel alone on that layer's shape
 *                      (and k_..._gmacs), inputs filled with fixed values;
 *                      float32 also with the crt's ISA forms capped at AVX2
 *                      and at the portable C (k_<layer>_f32@avx2_...,
 *                      k_<layer>_f32@portable_...)
 * numpy's time for the AD autoencoder (a dense chain) is the peer
 * (bench/peers/numpy_exec.py); the embedded peers come with the importer.
 */
#include <math.h>
#include <stdbool.h>

#include <tvmnode/crt/kernels.h>
#include <tvmnode/executor.h>

#include "bench_util.h"
#include "models/mlperf_tiny.h"

static void die(const char *what) {
  TnObject *e = tn_error_peek_raised();
  fprintf(stderr, "bench_exec: %s: %s\n", what,
          e ? tn_error_message(e) : "(no error)");
  exit(1);
}

static TnObject *pipeline(TnObject *mod) {
  static const char *const passes[] = {"InferType", "SimplifyExpr",
                                       "FoldConstant", "DeadCodeElimination",
                                       "FuseOps"};
  tn_object_retain(mod);
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    TnObject *p = tn_pass_get(passes[i]);
    TnObject *out = p ? tn_pass_run(p, mod, NULL) : NULL;
    tn_object_release(p);
    tn_object_release(mod);
    if (out == NULL) die(passes[i]);
    mod = out;
  }
  return mod;
}

typedef struct {
  TnObject *prog, *input;
} RunCtx;

static void run_body(int64_t iters, void *vctx) {
  RunCtx *c = vctx;
  for (int64_t i = 0; i < iters; i++) {
    TnObject *out = NULL;
    if (tn_program_run(c->prog, &c->input, 1, &out)) die("run");
    tn_object_release(out);
  }
}

static void bench_model(const char *name) {
  TnObject *mod = tn_model_build(name);
  if (mod == NULL) die(name);
  TnObject *opt = pipeline(mod);
  TnObject *prog = tn_executor_new(opt, "main");
  if (prog == NULL) die(name);
  const TnIrTensorType *t =
      (const TnIrTensorType *)tn_program_input_type(prog, 0);
  const TnShapeObj *s = (const TnShapeObj *)t->shape;
  DLDevice cpu = {kDLCPU, 0};
  TnObject *x = tn_tensor_empty(s->data, (int32_t)s->ndim, t->dtype, cpu);
  float *d = tn_tensor_dltensor(x)->data;
  for (int64_t k = 0; k < tn_tensor_nbytes(x) / 4; k++)
    d[k] = (float)sin((double)k * 0.37);
  RunCtx c = {prog, x};
  double ns = bench_run("exec", name, run_body, &c, 1);
  TnProgramStats st;
  tn_program_stats(prog, &st);
  char row[64];
  snprintf(row, sizeof row, "%s_gmacs", name);
  bench_report("exec", row, (double)st.macs / ns, "GMAC/s");
  /* the share outside kernels over as many runs as about 0.2 s takes */
  tn_program_set_profiling(prog, 1);
  int64_t n = (int64_t)(2e8 / ns) + 1;
  run_body(n, &c);
  tn_program_stats(prog, &st);
  snprintf(row, sizeof row, "%s_outside", name);
  bench_report("exec", row,
               100.0 * (double)(st.run_ns - st.kernel_ns) / (double)st.run_ns,
               "%");
  tn_object_release(x);
  tn_object_release(prog);
  tn_object_release(opt);
  tn_object_release(mod);
}

/* ---- kernels alone on the models' layer shapes ---------------------------- */

typedef struct {
  const char *name;
  int32_t h, w, ci, co, kh, kw, stride, groups; /* NHWC / HWIO, "same" pad */
} Layer;

/* DS-CNN (kws), MobileNetV1-0.25 (vww), ResNet-8 (ic) layers. */
static const Layer kLayers[] = {
    {"kws_conv1", 49, 10, 1, 64, 10, 4, 2, 1},
    {"kws_dw", 25, 5, 64, 64, 3, 3, 1, 64},
    {"kws_pw", 25, 5, 64, 64, 1, 1, 1, 1},
    {"vww_conv1", 96, 96, 3, 8, 3, 3, 2, 1},
    {"vww_dw", 48, 48, 8, 8, 3, 3, 1, 8},
    {"vww_pw", 48, 48, 8, 16, 1, 1, 1, 1},
    {"ic_conv", 32, 32, 16, 16, 3, 3, 1, 1},
    {"ic_conv_s2", 32, 32, 16, 32, 3, 3, 2, 1},
    {"ic_conv32", 16, 16, 32, 32, 3, 3, 1, 1},
    {"ic_conv64", 8, 8, 64, 64, 3, 3, 1, 1},
    {"ic_skip64", 16, 16, 32, 64, 1, 1, 2, 1},
};

typedef struct {
  TnCrtConv2d g;
  TnCrtQuant q;
  int32_t mult[64], shift[64];
  void *in, *w, *bias, *out, *scratch;
  size_t scratch_size;
  bool s8;
} ConvCtx;

static void conv_body(int64_t iters, void *vctx) {
  ConvCtx *c = vctx;
  for (int64_t i = 0; i < iters; i++) {
    TnCrtStatus st =
        c->s8 ? tn_crt_conv2d_s8(&c->g, &c->q, c->in, c->w, c->bias, c->out,
                                 c->scratch, c->scratch_size)
              : tn_crt_conv2d_f32(&c->g, c->in, c->w, c->bias, -INFINITY,
                                  INFINITY, c->out);
    if (st != TN_CRT_OK) {
      fprintf(stderr, "bench_exec: kernel: %s\n", tn_crt_status_name(st));
      exit(1);
    }
    BENCH_KEEP(c->out);
  }
}

static void fill(void *p, size_t n, bool s8) {
  for (size_t k = 0; k < n; k++) {
    if (s8) ((int8_t *)p)[k] = (int8_t)((k * 37 + 11) % 255 - 127);
    else ((float *)p)[k] = (float)sin((double)k * 0.11);
  }
}

/* isa: the suffix of a capped run ("" uncapped) */
static void bench_layer(const Layer *l, bool s8, const char *isa) {
  ConvCtx c = {0};
  TnCrtConv2d *g = &c.g;
  g->batch = 1, g->in_h = l->h, g->in_w = l->w, g->in_c = l->ci;
  g->out_h = (l->h + l->stride - 1) / l->stride;
  g->out_w = (l->w + l->stride - 1) / l->stride;
  g->out_c = l->co, g->k_h = l->kh, g->k_w = l->kw;
  g->stride_h = g->stride_w = l->stride;
  g->dilation_h = g->dilation_w = 1;
  int32_t ph = ((g->out_h - 1) * l->stride + l->kh - l->h),
          pw = ((g->out_w - 1) * l->stride + l->kw - l->w);
  g->pad_top = ph > 0 ? ph / 2 : 0, g->pad_left = pw > 0 ? pw / 2 : 0;
  g->groups = l->groups;
  int32_t cig = l->ci / l->groups;
  int32_t is[4] = {l->h * l->w * l->ci, l->w * l->ci, l->ci, 1};
  int32_t ws[4] = {l->kw * cig * l->co, cig * l->co, l->co, 1};
  int32_t os[4] = {g->out_h * g->out_w * l->co, g->out_w * l->co, l->co, 1};
  memcpy(g->in_strides, is, sizeof is);
  memcpy(g->w_strides, ws, sizeof ws);
  memcpy(g->out_strides, os, sizeof os);
  size_t esz = s8 ? 1 : 4;
  size_t nin = (size_t)l->h * l->w * l->ci, nw = (size_t)l->kh * l->kw * cig * l->co;
  size_t nout = (size_t)g->out_h * g->out_w * l->co;
  c.in = malloc(nin * esz), c.w = malloc(nw * esz), c.out = malloc(nout * esz);
  c.bias = calloc((size_t)l->co, 4);
  fill(c.in, nin, s8), fill(c.w, nw, s8);
  c.s8 = s8;
  if (s8) {
    for (int32_t k = 0; k < l->co; k++) {
      tn_crt_quantize_multiplier(0.0037 + 0.0001 * k, &c.mult[k], &c.shift[k]);
    }
    c.q = (TnCrtQuant){.input_offset = 5, .filter_offset = 0,
                       .output_offset = -3, .act_min = -128, .act_max = 127,
                       .per_channel = 1, .multiplier = c.mult,
                       .shift = c.shift};
    c.scratch_size = tn_crt_conv2d_s8_scratch_size(g);
    c.scratch = malloc(c.scratch_size ? c.scratch_size : 1);
  }
  char row[96];
  snprintf(row, sizeof row, "k_%s_%s%s", l->name, s8 ? "s8" : "f32", isa);
  double ns = bench_run("exec", row, conv_body, &c, 1);
  double macs = (double)nout * l->kh * l->kw * cig;
  snprintf(row, sizeof row, "k_%s_%s%s_gmacs", l->name, s8 ? "s8" : "f32",
           isa);
  bench_report("exec", row, macs / ns, "GMAC/s");
  free(c.in), free(c.w), free(c.out), free(c.bias), free(c.scratch);
}

typedef struct {
  TnCrtDense d;
  TnCrtQuant q;
  int32_t mult, shift;
  void *in, *w, *out, *scratch;
  size_t scratch_size;
  bool s8;
} DenseCtx;

static void dense_body(int64_t iters, void *vctx) {
  DenseCtx *c = vctx;
  for (int64_t i = 0; i < iters; i++) {
    TnCrtStatus st =
        c->s8 ? tn_crt_dense_s8(&c->d, &c->q, c->in, c->w, NULL, c->out,
                                c->scratch, c->scratch_size)
              : tn_crt_dense_f32(&c->d, c->in, c->w, NULL, -INFINITY,
                                 INFINITY, c->out);
    if (st != TN_CRT_OK) {
      fprintf(stderr, "bench_exec: kernel: %s\n", tn_crt_status_name(st));
      exit(1);
    }
    BENCH_KEEP(c->out);
  }
}

static void bench_dense(int32_t k, int32_t n, bool s8) {
  DenseCtx c = {0};
  c.d = (TnCrtDense){1, k, n, k, 1};
  size_t esz = s8 ? 1 : 4;
  c.in = malloc((size_t)k * esz), c.w = malloc((size_t)k * n * esz);
  c.out = malloc((size_t)n * esz);
  fill(c.in, (size_t)k, s8), fill(c.w, (size_t)k * n, s8);
  c.s8 = s8;
  if (s8) {
    tn_crt_quantize_multiplier(0.0041, &c.mult, &c.shift);
    c.q = (TnCrtQuant){.input_offset = 7, .output_offset = 2, .act_min = -128,
                       .act_max = 127, .multiplier = &c.mult,
                       .shift = &c.shift};
    c.scratch_size = tn_crt_dense_s8_scratch_size(&c.d);
    c.scratch = malloc(c.scratch_size ? c.scratch_size : 1);
  }
  char row[96];
  snprintf(row, sizeof row, "k_ad_dense_%dx%d_%s", k, n, s8 ? "s8" : "f32");
  double ns = bench_run("exec", row, dense_body, &c, 1);
  snprintf(row, sizeof row, "k_ad_dense_%dx%d_%s_gmacs", k, n,
           s8 ? "s8" : "f32");
  bench_report("exec", row, (double)k * n / ns, "GMAC/s");
  free(c.in), free(c.w), free(c.out), free(c.scratch);
}

int main(int argc, char **argv) {
  bool models = argc < 2 || strcmp(argv[1], "kernels") != 0;
  bool kernels = argc < 2 || strcmp(argv[1], "models") != 0;
  if (models)
    for (const char *const *n = tn_model_names(); *n; n++)
      if (!strchr(*n, ':')) bench_model(*n);
  if (kernels) {
    for (size_t i = 0; i < sizeof kLayers / sizeof kLayers[0]; i++) {
      bench_layer(&kLayers[i], false, "");
      tn_crt_isa_limit(TN_CRT_ISA_AVX2);
      bench_layer(&kLayers[i], false, "@avx2");
      tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
      bench_layer(&kLayers[i], false, "@portable");
      tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
      bench_layer(&kLayers[i], true, "");
    }
    bench_dense(640, 128, false);
    bench_dense(640, 128, true);
  }
  return 0;
}
