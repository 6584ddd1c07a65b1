/*
 * make_seeds.c: the MLPerf Tiny models as seed inputs for the IR fuzz
 * targets.
 *
 *   make_seeds JSON_DIR TEXT_DIR [JSON_MAX TEXT_MAX]
 *
 * For every model of models/mlperf_tiny.c (float32 and int8, typed and
 * untyped) it writes the module's JSON (tn_json_save) into JSON_DIR and its
 * text with the metadata (tn_ir_astext(show_meta=1)) into TEXT_DIR, plus a
 * "lean" twin of each in which every constant of more than 16 elements is
 * a parameter of main instead (same graph, same types, a few KB instead of
 * up to megabytes of weights). A JSON seed longer than JSON_MAX bytes, or a
 * text seed longer than TEXT_MAX (default: no limit), is not written: the
 * fuzzer would cut it to its -max_len and keep only a broken prefix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

#include "models/mlperf_tiny.h"

static int fail(const char *what) {
  TnObject *e = tn_error_take_raised();
  fprintf(stderr, "make_seeds: %s: %s: %s\n", what,
          e ? tn_error_kind(e) : "Error", e ? tn_error_message(e) : "failed");
  tn_object_release(e);
  return -1;
}

/* Constants larger than this become parameters in the lean twin. */
enum { kLeanMaxElements = 16 };

static TnObject *lean_rewrite(void *ctx, TnObject *orig, TnObject *rebuilt) {
  int *n = ctx;
  const TnIrTypes *T = tn_ir_types();
  if (tn_object_is_instance(orig, T->constant)) {
    TnObject *data = ((const TnIrConstant *)orig)->data;
    const DLTensor *dl = tn_tensor_dltensor(data);
    int64_t numel = 1;
    for (int32_t i = 0; i < dl->ndim; i++) numel *= dl->shape[i];
    if (numel > kLeanMaxElements) {
      TnObject *type = tn_ir_tensor_type(dl->shape, dl->ndim, dl->dtype);
      if (type == NULL) return NULL;
      char name[32];
      snprintf(name, sizeof name, "w%d", (*n)++);
      TnObject *v = tn_ir_var(name, type);
      tn_object_release(type);
      return v;
    }
  }
  tn_object_retain(rebuilt);
  return rebuilt;
}

/* `mod` with its large constants turned into parameters of main. */
static TnObject *lean(TnObject *mod) {
  TnObject *main_fn = tn_ir_module_get(mod, "main");
  if (main_fn == NULL) return NULL;
  int n = 0;
  TnObject *body =
      tn_ir_mutate(((const TnIrFunction *)main_fn)->body, lean_rewrite, &n);
  tn_object_release(main_fn);
  if (body == NULL) return NULL;
  TnObject *out = tn_ir_module_from_expr(body);
  tn_object_release(body);
  return out;
}

static int write_file(const char *dir, const char *name, const char *ext,
                      const TnObject *text, long max_bytes) {
  const TnStringObj *s = (const TnStringObj *)text;
  if (max_bytes > 0 && s->size > max_bytes) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(s->data, 1, (size_t)s->size, f) != (size_t)s->size ||
      fclose(f) != 0) {
    perror(path);
    return -1;
  }
  return 0;
}

static int write_seeds(TnObject *mod, const char *name, const char *json_dir,
                       const char *text_dir, const long *max_bytes) {
  TnAny a = tn_any_obj(mod);
  TnObject *json = tn_json_save(&a, 0);
  if (json == NULL) return fail(name);
  TnObject *text = tn_ir_astext(mod, 1);
  int rc = text ? 0 : fail(name);
  if (rc == 0) rc = write_file(json_dir, name, ".json", json, max_bytes[0]);
  if (rc == 0) rc = write_file(text_dir, name, ".tn", text, max_bytes[1]);
  tn_object_release(text);
  tn_object_release(json);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: make_seeds JSON_DIR TEXT_DIR [JSON_MAX TEXT_MAX]\n");
    return 2;
  }
  long max_bytes[2] = {0, 0};
  if (argc == 5) {
    max_bytes[0] = strtol(argv[3], NULL, 10);
    max_bytes[1] = strtol(argv[4], NULL, 10);
  }
  int rc = 0;
  for (const char *const *m = tn_model_names(); *m && rc == 0; m++) {
    for (int untyped = 0; untyped < 2 && rc == 0; untyped++) {
      char name[64];
      snprintf(name, sizeof name, "%s%s", untyped ? "untyped:" : "", *m);
      TnObject *mod = tn_model_build(name);
      if (mod == NULL) return fail(name), 1;
      TnObject *thin = lean(mod);
      if (thin == NULL) rc = fail(name);
      char file[80];
      snprintf(file, sizeof file, "%s%s", untyped ? "untyped-" : "", *m);
      if (rc == 0) rc = write_seeds(mod, file, argv[1], argv[2], max_bytes);
      strcat(file, "-lean");
      if (rc == 0) rc = write_seeds(thin, file, argv[1], argv[2], max_bytes);
      tn_object_release(thin);
      tn_object_release(mod);
    }
  }
  return rc == 0 ? 0 : 1;
}
