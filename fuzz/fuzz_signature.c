/*
 * fuzz_signature.c: libFuzzer target for the signature strings of the
 * libffi bridge ("i64(i64,f64)", "obj<ir.Var>(str,any*)", ...).
 *
 * The input, as a C string, goes to the three public entries that parse a
 * signature: tn_func_from_c, tn_func_register_c and tn_func_to_c. Each
 * either accepts it or fails with a ValueError or TypeError whose message
 * names the entry and quotes the signature. No C function is ever called:
 * a wrapped function is called with more arguments than a signature can
 * have, which every call path refuses before the call with a TypeError that
 * gives the signature as the bridge formats it; that text must parse again
 * and format to itself. Nothing may crash, leak an object or leave an
 * error raised.
 */
#include <glib.h>

#include "fuzz_util.h"

/* Never called (see above); its address is what the bridge wraps. */
static int64_t never_called(void) { abort(); }

static int packed(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  abort();
}

enum { kTooMany = 33 }; /* more than TN__SIG_MAX_ARGS */

/* `who` refused `sig`: with a ValueError or TypeError naming `who` and,
 * when `quoted`, quoting the signature. */
static void expect_refusal(const char *who, const char *sig, int quoted) {
  TnObject *e = tn_error_take_raised();
  const char *k = e ? tn_error_kind(e) : "";
  const char *m = e ? tn_error_message(e) : "";
  if (e == NULL ||
      (strcmp(k, "ValueError") != 0 && strcmp(k, "TypeError") != 0) ||
      strstr(m, who) == NULL || (quoted && strstr(m, sig) == NULL)) {
    fprintf(stderr, "%s('%s') failed with an unexpected error (it must be a "
            "ValueError or TypeError naming %s%s):\n", who, sig, who,
            quoted ? " and quoting the signature" : "");
    fz_print_error(e);
    abort();
  }
  tn_object_release(e);
}

/* The signature of a bridged function as the bridge formats it, from the
 * arity error of a call with too many arguments (g_free it). */
static char *formatted(TnObject *f) {
  TnAny args[kTooMany], ret = tn_any_none();
  for (int i = 0; i < kTooMany; i++) args[i] = tn_any_none();
  if (tn_func_call(f, args, kTooMany, &ret) == 0) {
    fprintf(stderr, "a call with %d arguments succeeded\n", kTooMany);
    abort();
  }
  TnObject *e = tn_error_take_raised();
  const char *m = e ? tn_error_message(e) : "";
  const char *open = strstr(m, " (");
  const char *close = strstr(m, "), got 33");
  if (e == NULL || strcmp(tn_error_kind(e), "TypeError") != 0 ||
      open == NULL || close == NULL || close < open) {
    fprintf(stderr, "the arity error does not give the signature:\n");
    fz_print_error(e);
    abort();
  }
  char *sig = g_strndup(open + 2, (gsize)(close - open - 2));
  tn_object_release(e);
  return sig;
}

/* 1 when `sig` parses. */
static int check_from_c(const char *sig) {
  TnObject *f = tn_func_from_c((void *)never_called, sig, "fuzzed");
  if (f == NULL) {
    expect_refusal("tn_func_from_c", sig, 1);
    if (tn_func_register_c("fuzz.sig", (void *)never_called, sig, 1) == 0) {
      fprintf(stderr, "tn_func_register_c accepts '%s', tn_func_from_c "
              "does not\n", sig);
      abort();
    }
    expect_refusal("tn_func_from_c", sig, 1);
    return 0;
  }
  /* Format, parse, format: the same text. */
  char *text = formatted(f);
  TnObject *g = tn_func_from_c((void *)never_called, text, "fuzzed");
  if (g == NULL) {
    fprintf(stderr, "'%s' formats as '%s', which does not parse:\n", sig,
            text);
    fz_print_error(tn_error_peek_raised());
    abort();
  }
  char *again = formatted(g);
  if (strcmp(text, again) != 0) {
    fprintf(stderr, "'%s' formats as '%s', which formats as '%s'\n", sig,
            text, again);
    abort();
  }
  g_free(again);
  g_free(text);
  tn_object_release(g);
  tn_object_release(f);
  /* Registration parses the same way; unregistering leaves nothing. */
  if (tn_func_register_c("fuzz.sig", (void *)never_called, sig, 1) != 0 ||
      tn_func_unregister("fuzz.sig") != 0) {
    fprintf(stderr, "registering '%s' failed:\n", sig);
    fz_print_error(tn_error_peek_raised());
    abort();
  }
  return 1;
}

/* tn_func_to_c refuses a signature that does not parse (quoting it) and
 * the ones a C function pointer cannot have (returning a borrowed 'str',
 * 'obj' or 'dltensor', taking 'any*'), naming itself. */
static void check_to_c(TnObject *func, const char *sig, int parses) {
  void *fnptr = NULL;
  TnObject *c = tn_func_to_c(func, sig, &fnptr);
  if (c == NULL) {
    expect_refusal("tn_func_to_c", sig, !parses);
    return;
  }
  if (fnptr == NULL) abort();
  tn_object_release(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static TnObject *func; /* lives as long as the process */
  if (func == NULL) {
    func = tn_func_new(packed, NULL, NULL);
    fz_must(func, "tn_func_new");
  }
  if (size > 4096 || memchr(data, 0, size) != NULL) return 0; /* C strings */
  char *sig = g_strndup((const char *)data, size);
  int64_t live = tn_object_live_count();
  check_to_c(func, sig, check_from_c(sig));
  g_free(sig);
  fz_check_leaks(live);
  return 0;
}
