/*
 * fuzz_util.h: what the IR fuzz targets share: the error kinds a bad input
 * may raise, the leak check, and the print -> parse -> compare round trip.
 * Every check that fails prints what it saw and aborts, so libFuzzer keeps
 * the input as a crash.
 */
#ifndef TVMNODE_FUZZ_UTIL_H_
#define TVMNODE_FUZZ_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

/* The kinds an error about bad input may have (RuntimeError, MemoryError,
 * NotImplementedError and unnamed kinds are bugs here). */
static inline int fz_expected_kind(const char *k) {
  return strcmp(k, "ValueError") == 0 || strcmp(k, "TypeError") == 0 ||
         strcmp(k, "KeyError") == 0 || strcmp(k, "AttributeError") == 0 ||
         strcmp(k, "IndexError") == 0;
}

static inline void fz_print_error(const TnObject *e) {
  fprintf(stderr, "  %s: %s\n", e ? tn_error_kind(e) : "(no error raised)",
          e ? tn_error_message(e) : "");
  for (TnObject *c = e ? tn_error_cause(e) : NULL; c; c = tn_error_cause(c))
    fprintf(stderr, "  caused by %s: %s\n", tn_error_kind(c),
            tn_error_message(c));
}

/* `what` failed: the raised error must be of an expected kind, with a
 * message that contains `must_name` (NULL: any non-empty message). Takes
 * the error. */
static inline void fz_expect_error(const char *what, const char *must_name) {
  TnObject *e = tn_error_take_raised();
  if (e == NULL || !fz_expected_kind(tn_error_kind(e)) ||
      tn_error_message(e)[0] == '\0' ||
      (must_name && strstr(tn_error_message(e), must_name) == NULL)) {
    fprintf(stderr, "%s failed with an unexpected error%s%s:\n", what,
            must_name ? " (it must name " : "", must_name ? must_name : "");
    if (must_name) fprintf(stderr, ")\n");
    fz_print_error(e);
    abort();
  }
  tn_object_release(e);
}

/* Abort when a step that must succeed failed. */
static inline void fz_must(const void *ok, const char *what) {
  if (ok != NULL) return;
  fprintf(stderr, "%s failed:\n", what);
  fz_print_error(tn_error_peek_raised());
  abort();
}

static inline void fz_check_leaks(int64_t live_before) {
  int64_t now = tn_object_live_count();
  if (now != live_before) {
    fprintf(stderr, "objects leaked: %lld\n", (long long)(now - live_before));
    abort();
  }
  if (tn_error_peek_raised() != NULL) {
    fprintf(stderr, "an error was left raised:\n");
    fz_print_error(tn_error_peek_raised());
    abort();
  }
}

static inline const char *fz_str(const TnObject *s) {
  return ((const TnStringObj *)s)->data;
}

/* Print `mod` with its metadata, parse the text and compare: the module
 * parsed must be structurally equal to `mod`. Returns the text (transfer
 * full); aborts on any failure, naming `what`. */
static inline TnObject *fz_round_trip(TnObject *mod, const char *what) {
  TnObject *text = tn_ir_astext(mod, 1);
  if (text == NULL) {
    fprintf(stderr, "%s: the module does not print:\n", what);
    fz_print_error(tn_error_peek_raised());
    abort();
  }
  const TnStringObj *s = (const TnStringObj *)text;
  TnObject *again = tn_ir_parse(s->data, (size_t)s->size);
  if (again == NULL) {
    fprintf(stderr, "%s: the printed module does not parse:\n", what);
    fz_print_error(tn_error_peek_raised());
    fprintf(stderr, "---- text ----\n%s\n", s->data);
    abort();
  }
  TnAny a = tn_any_obj(mod), b = tn_any_obj(again);
  TnObject *path = NULL;
  int eq = tn_structural_equal_path(&a, &b, 0, &path);
  if (eq != 1) {
    fprintf(stderr, "%s: the parsed module differs from the printed one at "
            "%s (%d)\n---- text ----\n%s\n", what,
            path ? fz_str(path) : "?", eq, s->data);
    if (eq < 0) fz_print_error(tn_error_peek_raised());
    abort();
  }
  tn_object_release(again);
  return text;
}

/* A pass result must be well formed: passes assume it of their input. */
static inline void fz_check_well_formed(TnObject *mod, const char *what) {
  if (tn_ir_well_formed(mod) == 0) return;
  fprintf(stderr, "%s: the result is not well formed:\n", what);
  fz_print_error(tn_error_peek_raised());
  TnObject *text = tn_ir_astext(mod, 0);
  if (text) fprintf(stderr, "---- text ----\n%s\n", fz_str(text));
  abort();
}

/* What to do with each successful pass result. */
typedef void (*FzResultFn)(TnObject *result, const char *what);

/* Run `pass` on `mod`: a failure must be an expected error that names the
 * pass; a result goes to `fn`. */
static inline void fz_run_one(TnObject *pass, TnObject *mod, const char *what,
                              FzResultFn fn) {
  fz_must(pass, what);
  TnObject *out = tn_pass_run(pass, mod, NULL);
  if (out == NULL) {
    fz_expect_error(what, "pass '");
  } else {
    fz_check_well_formed(out, what);
    fn(out, what);
    tn_object_release(out);
  }
}

/* The pipelines the IR targets run: the default one of tvmnode-opt (with
 * DeadCodeElimination at the end), and with `more`, the same backwards and
 * fusion over an already fused module. */
static const char *const fz_pipelines[][6] = {
    {"InferType", "SimplifyExpr", "FoldConstant", "FuseOps",
     "DeadCodeElimination", NULL},
    {"DeadCodeElimination", "FuseOps", "FoldConstant", "SimplifyExpr",
     "InferType", NULL},
    {"FuseOps", "FoldConstant", "FuseOps", "SimplifyExpr", NULL},
};

/* Every registered pass alone on `mod`, then the pipelines (only the first
 * unless `more`). */
static inline void fz_run_passes(TnObject *mod, FzResultFn fn, int more) {
  TnObject *names = tn_pass_list();
  fz_must(names, "tn_pass_list");
  char what[160];
  for (int64_t i = 0; i < tn_array_size(names); i++) {
    const char *name;
    if (tn_any_as_str(tn_array_at(names, i), &name, NULL)) abort();
    snprintf(what, sizeof what, "pass %s", name);
    TnObject *pass = tn_pass_get(name);
    fz_run_one(pass, mod, what, fn);
    tn_object_release(pass);
  }
  tn_object_release(names);
  size_t n = more ? sizeof fz_pipelines / sizeof fz_pipelines[0] : 1;
  for (size_t i = 0; i < n; i++) {
    int32_t len = 0;
    while (fz_pipelines[i][len]) len++;
    snprintf(what, sizeof what, "pipeline %zu (%s, ...)", i,
             fz_pipelines[i][0]);
    TnObject *seq = tn_pass_sequential_named(fz_pipelines[i], len, "fuzz");
    fz_run_one(seq, mod, what, fn);
    tn_object_release(seq);
  }
}

/* Objects that live as long as the library (interned names, caches) are
 * made by the first use: make them, through every pass, before a target
 * counts live objects. */
static inline void fz_warm_up(FzResultFn fn) {
  static const char text[] =
      "def @main(%x: Tensor[(1, 4), float32]) {\n"
      "  %0 = add(%x, 1f);\n"
      "  nn.relu(%0)\n"
      "}\n";
  TnObject *mod = tn_ir_parse(text, sizeof text - 1);
  fz_must(mod, "warm-up parse");
  fz_run_passes(mod, fn, 1);
  tn_object_release(mod);
}

#endif /* TVMNODE_FUZZ_UTIL_H_ */
