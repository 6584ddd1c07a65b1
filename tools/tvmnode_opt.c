/*
 * tvmnode-opt: build or load a model, run a pass pipeline over it with the
 * timing instrument, print the module before and after, then run both on
 * one deterministic input through the host executor and compare them.
 *
 *   tvmnode-opt                       the AD autoencoder through the default
 *                                     pipeline (InferType, SimplifyExpr,
 *                                     FoldConstant, FuseOps)
 *   tvmnode-opt --model kws-int8      another MLPerf Tiny model
 *   tvmnode-opt --text model.tn       a module in the text format
 *   tvmnode-opt --passes InferType,FuseOps --print after --out fused.tn
 *   tvmnode-opt --no-run              transform only
 *
 * Exit status: 0 on success, 1 when a step fails (the error is printed),
 * 2 for bad usage.
 */
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <time.h>

#include <tvmnode/executor.h>
#include <tvmnode/tvmnode.h>

#include "models/mlperf_tiny.h"

static int fail(const char *what) {
  TnObject *e = tn_error_take_raised();
  fprintf(stderr, "tvmnode-opt: %s: %s: %s\n", what,
          e ? tn_error_kind(e) : "Error", e ? tn_error_message(e) : "failed");
  for (TnObject *c = e ? tn_error_cause(e) : NULL; c; c = tn_error_cause(c))
    fprintf(stderr, "  caused by %s: %s\n", tn_error_kind(c),
            tn_error_message(c));
  tn_object_release(e);
  return 1;
}

typedef struct {
  int64_t calls, primitive, constants, const_bytes;
} Stats;

static int count(void *ctx, TnObject *e) {
  Stats *s = ctx;
  const TnIrTypes *T = tn_ir_types();
  if (tn_object_is_instance(e, T->call) &&
      tn_object_is_instance(((TnIrCall *)e)->op, T->op))
    s->calls++;
  if (tn_object_is_instance(e, T->function) && ((TnIrFunction *)e)->attrs)
    s->primitive++;
  if (tn_object_is_instance(e, T->constant)) {
    s->constants++;
    s->const_bytes += tn_tensor_nbytes(((TnIrConstant *)e)->data);
  }
  return 0;
}

static int stats_of(TnObject *mod, Stats *s) {
  memset(s, 0, sizeof *s);
  TnObject *main_fn = tn_ir_module_get(mod, "main");
  if (main_fn == NULL) return -1;
  int rc = tn_ir_post_order_visit(main_fn, count, s);
  tn_object_release(main_fn);
  return rc;
}

static int print_module(const char *title, TnObject *mod, bool meta) {
  TnObject *text = tn_ir_astext(mod, meta);
  if (text == NULL) return -1;
  printf("==== %s ====\n%s\n", title, ((TnStringObj *)text)->data);
  tn_object_release(text);
  return 0;
}

static TnObject *load_text(const char *path) {
  gchar *data;
  gsize n;
  GError *err = NULL;
  if (!g_file_get_contents(path, &data, &n, &err)) {
    tn_error_raise("OSError", "cannot read %s: %s", path, err->message);
    g_error_free(err);
    return NULL;
  }
  TnObject *mod = tn_ir_parse(data, n);
  g_free(data);
  return mod;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Run `mod`'s main on `inputs` (NULL: make them, deterministic, from the
 * program's input types) `reps` times; the first output and the median
 * time per run. */
static int run_module(TnObject *mod, TnObject **inputs, int32_t *ninputs,
                      TnObject **out, double *us, TnProgramStats *st) {
  TnObject *prog = tn_executor_new(mod, "main");
  if (prog == NULL) return -1;
  int32_t n = tn_program_num_inputs(prog), nout = tn_program_num_outputs(prog);
  if (n > 8 || nout < 1 || nout > 8) {
    tn_object_release(prog);
    return tn_error_raise("ValueError", "main has %d inputs and %d outputs",
                          n, nout);
  }
  if (*ninputs < 0) {
    DLDevice cpu = {kDLCPU, 0};
    for (int32_t i = 0; i < n; i++) {
      const TnIrTensorType *t =
          (const TnIrTensorType *)tn_program_input_type(prog, i);
      const TnShapeObj *sh = (const TnShapeObj *)t->shape;
      inputs[i] = tn_tensor_empty(sh->data, (int32_t)sh->ndim, t->dtype, cpu);
      if (inputs[i] == NULL) return tn_object_release(prog), -1;
      uint8_t *d = tn_tensor_dltensor(inputs[i])->data;
      int64_t bytes = tn_tensor_nbytes(inputs[i]);
      if (t->dtype.code == kDLFloat && t->dtype.bits == 32) {
        for (int64_t k = 0; k < bytes / 4; k++)
          ((float *)d)[k] = (float)sin((double)k * 0.37);
      } else {
        for (int64_t k = 0; k < bytes; k++) d[k] = (uint8_t)(k * 37 + 11);
      }
    }
    *ninputs = n;
  }
  TnObject *outs[8] = {NULL};
  double times[5];
  int rc = 0;
  for (int r = 0; r < 5 && rc == 0; r++) {
    for (int32_t i = 0; i < nout; i++) tn_object_release(outs[i]), outs[i] = NULL;
    double t0 = now_us();
    rc = tn_program_run(prog, inputs, *ninputs, outs);
    times[r] = now_us() - t0;
  }
  if (rc == 0) {
    for (int i = 1; i < 5; i++) /* insertion sort: five samples */
      for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
        double x = times[j];
        times[j] = times[j - 1], times[j - 1] = x;
      }
    *us = times[2];
    tn_program_stats(prog, st);
    *out = outs[0];
    outs[0] = NULL;
  }
  for (int32_t i = 0; i < nout; i++) tn_object_release(outs[i]);
  tn_object_release(prog);
  return rc;
}

/* The largest absolute difference of two float32 (or int8) outputs. */
static double max_diff(TnObject *a, TnObject *b) {
  const DLTensor *x = tn_tensor_dltensor(a), *y = tn_tensor_dltensor(b);
  int64_t bytes = tn_tensor_nbytes(a);
  double m = 0;
  if (x->dtype.code == kDLFloat && x->dtype.bits == 32) {
    for (int64_t k = 0; k < bytes / 4; k++)
      m = fmax(m, fabs((double)((float *)x->data)[k] - ((float *)y->data)[k]));
  } else {
    for (int64_t k = 0; k < bytes; k++)
      m = fmax(m, fabs((double)((int8_t *)x->data)[k] - ((int8_t *)y->data)[k]));
  }
  return m;
}

static int run_both(TnObject *before, TnObject *after) {
  TnObject *inputs[8] = {NULL}, *y0 = NULL, *y1 = NULL;
  int32_t n = -1;
  double t0 = 0, t1 = 0;
  TnProgramStats s0, s1;
  int rc = run_module(before, inputs, &n, &y0, &t0, &s0);
  if (rc == 0) rc = run_module(after, inputs, &n, &y1, &t1, &s1);
  if (rc == 0) {
    printf("==== run (host executor) ====\n"
           "before: %d kernel calls, %.1f us per inference, arena %.1f KiB\n"
           "after:  %d kernel calls, %.1f us per inference, arena %.1f KiB,"
           " %.2f GMAC/s\n"
           "outputs before and after the pipeline: max |difference| %.3g\n",
           s0.steps, t0, (double)s0.arena_bytes / 1024, s1.steps, t1,
           (double)s1.arena_bytes / 1024,
           t1 > 0 ? (double)s1.macs / t1 / 1e3 : 0.0, max_diff(y0, y1));
    const DLTensor *o = tn_tensor_dltensor(y1);
    int64_t count = tn_tensor_nbytes(y1) / (o->dtype.bits / 8);
    printf("output:");
    for (int64_t k = 0; k < count && k < 8; k++) {
      if (o->dtype.code == kDLFloat) printf(" %.4f", ((float *)o->data)[k]);
      else printf(" %d", ((int8_t *)o->data)[k]);
    }
    printf("%s\n", count > 8 ? " ..." : "");
  }
  for (int i = 0; i < 8; i++) tn_object_release(inputs[i]);
  tn_object_release(y0);
  tn_object_release(y1);
  return rc;
}

static int usage(void) {
  fprintf(stderr,
          "usage: tvmnode-opt [--model NAME | --text FILE] [--passes P,Q,...]\n"
          "                   [--opt-level N] [--print both|before|after|none]\n"
          "                   [--show-meta] [--out FILE] [--no-run]\n"
          "models:");
  for (const char *const *n = tn_model_names(); *n; n++)
    fprintf(stderr, " %s", *n);
  fprintf(stderr, " synthetic:N\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *model = NULL, *text = NULL, *out_path = NULL;
  const char *passes = "InferType,SimplifyExpr,FoldConstant,FuseOps";
  const char *print = "both";
  int opt_level = 2;
  bool show_meta = false, run = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--model") == 0 && v) model = v, i++;
    else if (strcmp(a, "--text") == 0 && v) text = v, i++;
    else if (strcmp(a, "--passes") == 0 && v) passes = v, i++;
    else if (strcmp(a, "--print") == 0 && v) print = v, i++;
    else if (strcmp(a, "--opt-level") == 0 && v) opt_level = atoi(v), i++;
    else if (strcmp(a, "--out") == 0 && v) out_path = v, i++;
    else if (strcmp(a, "--show-meta") == 0) show_meta = true;
    else if (strcmp(a, "--no-run") == 0) run = false;
    else return usage();
  }
  if (model && text) return usage();
  if (!model && !text) model = "ad";
  bool before = !strcmp(print, "both") || !strcmp(print, "before");
  bool after = !strcmp(print, "both") || !strcmp(print, "after");
  if (!before && !after && strcmp(print, "none")) return usage();

  TnObject *mod = model ? tn_model_build(model) : load_text(text);
  if (mod == NULL) return fail(model ? model : text);
  Stats s0, s1;
  if (stats_of(mod, &s0)) {
    tn_object_release(mod);
    return fail("reading the module");
  }
  printf("model: %s: %" G_GINT64_FORMAT " operator calls, %" G_GINT64_FORMAT
         " constants (%.1f KiB)\n\n", model ? model : text, s0.calls,
         s0.constants, (double)s0.const_bytes / 1024.0);
  if (before && print_module("before", mod, show_meta)) {
    tn_object_release(mod);
    return fail("printing");
  }

  gchar **names = g_strsplit(passes, ",", -1);
  TnObject *seq = tn_pass_sequential_named((const char *const *)names,
                                           (int32_t)g_strv_length(names),
                                           "pipeline");
  g_strfreev(names);
  TnObject *timing = tn_pass_timing_instrument();
  TnObject *instruments =
      timing ? tn_array_new((TnAny[]){tn_any_obj(timing)}, 1) : NULL;
  TnObject *ctx = instruments ? tn_pass_context_new(opt_level, NULL, NULL,
                                                    NULL, instruments)
                              : NULL;
  tn_object_release(instruments);
  int rc = 0;
  TnObject *result = NULL;
  if (seq == NULL || ctx == NULL) {
    rc = fail("setting up the pipeline");
  } else if ((result = tn_pass_run(seq, mod, ctx)) == NULL) {
    rc = fail("running the pipeline");
  } else if (stats_of(result, &s1)) {
    rc = fail("reading the result");
  } else {
    if (after && print_module("after", result, show_meta)) rc = fail("printing");
    TnObject *report = tn_pass_timing_report(timing);
    if (report) {
      printf("==== pass timing ====\n%s\n", ((TnStringObj *)report)->data);
      tn_object_release(report);
    }
    printf("operator calls: %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
           "; primitive functions: %" G_GINT64_FORMAT "; constants: %"
           G_GINT64_FORMAT " -> %" G_GINT64_FORMAT " (%.1f KiB)\n",
           s0.calls, s1.calls, s1.primitive, s0.constants, s1.constants,
           (double)s1.const_bytes / 1024.0);
    if (run && rc == 0 && run_both(mod, result)) rc = fail("running");
    if (out_path && rc == 0) {
      TnObject *t = tn_ir_astext(result, 1);
      GError *err = NULL;
      if (t == NULL) {
        rc = fail("printing");
      } else if (!g_file_set_contents(out_path, ((TnStringObj *)t)->data,
                                      (gssize)((TnStringObj *)t)->size, &err)) {
        fprintf(stderr, "tvmnode-opt: cannot write %s: %s\n", out_path,
                err->message);
        g_error_free(err);
        rc = 1;
      }
      tn_object_release(t);
    }
  }
  tn_object_release(result);
  tn_object_release(ctx);
  tn_object_release(timing);
  tn_object_release(seq);
  tn_object_release(mod);
  return rc;
}
