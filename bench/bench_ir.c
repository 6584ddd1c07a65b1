/*
 * bench_ir.c: the IR and its passes on synthetic graphs of 1k, 10k and 100k
 * operator calls and on the eight MLPerf Tiny models.
 *
 * Per graph: building it (the builders infer each call's type as it is
 * made), InferType from scratch (on the "untyped:" twin, where no call has
 * a type yet), InferType on a typed module (a check that changes nothing),
 * FoldConstant and FuseOps, printing to text and parsing it back. Pass
 * figures time the pass body alone (the pass's function, called as the
 * pass infrastructure calls it), not the InferType it requires. Every
 * figure is ns per node of the input's main function, so linear scaling
 * shows as a flat column. Memory: heap bytes per node held by the pass's
 * result beyond its input (glibc mallinfo2, measured with the result
 * alive), and the peak RSS of the whole run.
 */
#include <malloc.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>

#include <tvmnode/tvmnode.h>

#include "bench_util.h"
#include "models/mlperf_tiny.h"

static void die(const char *what) {
  TnObject *e = tn_error_peek_raised();
  fprintf(stderr, "bench_ir: %s: %s\n", what, e ? tn_error_message(e) : "?");
  exit(1);
}

static int count(void *ctx, TnObject *e) {
  (void)e;
  ++*(int64_t *)ctx;
  return 0;
}

static int64_t nodes_of(TnObject *mod) {
  TnObject *f = tn_ir_module_get(mod, "main");
  int64_t n = 0;
  if (f == NULL || tn_ir_post_order_visit(f, count, &n)) die("counting");
  tn_object_release(f);
  return n;
}

/* The body of a registered pass: its function, called as func(mod, ctx). */
static TnObject *pass_body(const char *name) {
  TnObject *p = tn_pass_get(name);
  TnAny f;
  if (p == NULL || tn_node_get(p, "func", &f)) die(name);
  tn_object_release(p);
  return f.v_obj;
}

static TnObject *call_body(TnObject *body, TnObject *mod) {
  TnAny args[2] = {tn_any_obj(mod), tn_any_none()}, ret = tn_any_none();
  if (tn_func_call(body, args, 2, &ret)) die("running a pass");
  return ret.v_obj;
}

typedef struct {
  const char *model;
  TnObject *mod;  /* typed */
  TnObject *raw;  /* untyped twin */
  TnObject *pass; /* the pass body for run_pass */
  TnObject *text; /* printed mod */
} Ctx;

static void run_build(int64_t iters, void *vctx) {
  Ctx *c = vctx;
  for (int64_t i = 0; i < iters; i++) {
    TnObject *m = tn_model_build(c->model);
    if (m == NULL) die("building");
    tn_object_release(m);
  }
}

static void run_pass_on_raw(int64_t iters, void *vctx) {
  Ctx *c = vctx;
  for (int64_t i = 0; i < iters; i++) tn_object_release(call_body(c->pass, c->raw));
}

static void run_pass(int64_t iters, void *vctx) {
  Ctx *c = vctx;
  for (int64_t i = 0; i < iters; i++) tn_object_release(call_body(c->pass, c->mod));
}

static void run_print(int64_t iters, void *vctx) {
  Ctx *c = vctx;
  for (int64_t i = 0; i < iters; i++) {
    TnObject *t = tn_ir_astext(c->mod, 1);
    if (t == NULL) die("printing");
    tn_object_release(t);
  }
}

static void run_parse(int64_t iters, void *vctx) {
  Ctx *c = vctx;
  const TnStringObj *s = (const TnStringObj *)c->text;
  for (int64_t i = 0; i < iters; i++) {
    TnObject *m = tn_ir_parse(s->data, (size_t)s->size);
    if (m == NULL) die("parsing");
    tn_object_release(m);
  }
}

/* Heap bytes per node that the result of `pass` on `mod` holds. */
static double bytes_per_node(TnObject *pass, TnObject *mod, int64_t nodes) {
  malloc_trim(0);
  size_t before = mallinfo2().uordblks;
  TnObject *out = call_body(pass, mod);
  size_t after = mallinfo2().uordblks;
  tn_object_release(out);
  return after > before ? (double)(after - before) / (double)nodes : 0.0;
}

static void bench_graph(const char *model, const char *label) {
  char name[128], raw_name[128];
  snprintf(raw_name, sizeof raw_name, "untyped:%s", model);
  Ctx c = {model, tn_model_build(model), tn_model_build(raw_name), NULL, NULL};
  if (c.mod == NULL || c.raw == NULL) die(model);
  TnObject *infer = pass_body("InferType");
  TnObject *typed = call_body(infer, c.mod);
  tn_object_release(c.mod);
  c.mod = typed;
  int64_t n = nodes_of(c.mod), unit = n;
  snprintf(name, sizeof name, "build_%s", label);
  bench_run("ir", name, run_build, &c, unit);

  c.pass = infer;
  snprintf(name, sizeof name, "infer_type_%s", label);
  bench_run("ir", name, run_pass_on_raw, &c, nodes_of(c.raw));
  snprintf(name, sizeof name, "infer_type_typed_%s", label);
  bench_run("ir", name, run_pass, &c, unit);

  static const struct { const char *pass, *key; } passes[] = {
      {"FoldConstant", "fold_constant"}, {"FuseOps", "fuse_ops"},
      {"SimplifyExpr", "simplify_expr"}};
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    c.pass = pass_body(passes[i].pass);
    snprintf(name, sizeof name, "%s_%s", passes[i].key, label);
    bench_run("ir", name, run_pass, &c, unit);
    if (i < 2) {
      snprintf(name, sizeof name, "%s_bytes_per_node_%s", passes[i].key, label);
      bench_report("ir", name, bytes_per_node(c.pass, c.mod, n), "bytes");
    }
    tn_object_release(c.pass);
  }
  c.text = tn_ir_astext(c.mod, 1);
  if (c.text == NULL) die("printing");
  snprintf(name, sizeof name, "astext_%s", label);
  bench_run("ir", name, run_print, &c, unit);
  snprintf(name, sizeof name, "parse_%s", label);
  bench_run("ir", name, run_parse, &c, unit);
  snprintf(name, sizeof name, "nodes_%s", label);
  bench_report("ir", name, (double)n, "nodes");
  tn_object_release(c.text);
  tn_object_release(infer);
  tn_object_release(c.mod);
  tn_object_release(c.raw);
}

int main(int argc, char **argv) {
  /* bench_ir [synthetic|models]: both by default */
  bool synth = argc < 2 || strcmp(argv[1], "synthetic") == 0;
  bool models = argc < 2 || strcmp(argv[1], "models") == 0;
  if (synth) {
    bench_graph("synthetic:1000", "synth_1k");
    bench_graph("synthetic:10000", "synth_10k");
    bench_graph("synthetic:100000", "synth_100k");
  }
  if (models)
    for (const char *const *m = tn_model_names(); *m; m++) bench_graph(*m, *m);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  bench_report("ir", "peak_rss_mb", (double)ru.ru_maxrss / 1024.0, "MB");
  return 0;
}
