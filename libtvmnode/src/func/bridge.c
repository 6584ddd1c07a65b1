/*
 * bridge.c: typed C functions as packed functions (the libffi bridge,
 * typed -> packed).
 *
 * Each wrapped function owns one prepared ffi_cif, so a call only converts
 * its arguments (each with a type check that names the function, the
 * argument and both types) and runs ffi_call. Signatures made only of i64
 * or only of f64, with up to four arguments, skip libffi entirely and call
 * through a correctly typed function pointer: these are the kernels and
 * helpers most often registered, and the direct call costs a fraction of
 * ffi_call (see BENCHMARKS.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "signature.h"

typedef struct {
  ffi_cif cif;
  ffi_type *types[TN__SIG_MAX_ARGS];
  TnSignature sig;
  void *fnptr;
  char *name;
} Bridge;

static void bridge_free(void *self) {
  Bridge *b = self;
  g_free(b->name);
  g_free(b);
}

static int arity_error(const Bridge *b, int32_t nargs) {
  GString *sig = g_string_new(NULL);
  tn__sig_format(&b->sig, sig);
  int rc = tn_error_raise("TypeError",
                          "tn_func_call: '%s' takes %d argument%s (%s), got "
                          "%d",
                          b->name, b->sig.nargs, b->sig.nargs == 1 ? "" : "s",
                          sig->str, nargs);
  g_string_free(sig, TRUE);
  return rc;
}

static int bridge_call(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  Bridge *b = self;
  if (TN_UNLIKELY(nargs != b->sig.nargs)) return arity_error(b, nargs);
  TnSigValue values[TN__SIG_MAX_ARGS];
  void *ptrs[TN__SIG_MAX_ARGS];
  for (int32_t i = 0; i < nargs; i++) {
    if (tn__sig_arg_from_any(&b->sig.args[i], &args[i], &values[i], b->name, i))
      return -1;
    ptrs[i] = &values[i];
  }
  TnSigValue rv;
  rv.any = tn_any_none();
  ffi_call(&b->cif, FFI_FN(b->fnptr), &rv, ptrs);
  return tn__sig_ret_to_any(&b->sig.ret, &rv, ret, b->name);
}

/* ------------------------------------------------------------------------ */
/* The libffi-free fast path                                                  */
/* ------------------------------------------------------------------------ */

static inline int fast_int(const Bridge *b, const TnAny *a, int32_t i,
                           int64_t *out) {
  if (TN_LIKELY(a->type_index == TN_TYPE_INT ||
                a->type_index == TN_TYPE_BOOL)) {
    *out = a->v_int64;
    return 0;
  }
  TnSigValue v;
  return tn__sig_arg_from_any(&b->sig.args[i], a, &v, b->name, i);
}

static inline int fast_float(const Bridge *b, const TnAny *a, int32_t i,
                             double *out) {
  if (TN_LIKELY(a->type_index == TN_TYPE_FLOAT)) {
    *out = a->v_float64;
    return 0;
  }
  TnSigValue v;
  if (tn__sig_arg_from_any(&b->sig.args[i], a, &v, b->name, i)) return -1;
  *out = v.f64;
  return 0;
}

typedef int64_t (*FnI0)(void);
typedef int64_t (*FnI1)(int64_t);
typedef int64_t (*FnI2)(int64_t, int64_t);
typedef int64_t (*FnI3)(int64_t, int64_t, int64_t);
typedef int64_t (*FnI4)(int64_t, int64_t, int64_t, int64_t);
typedef double (*FnF0)(void);
typedef double (*FnF1)(double);
typedef double (*FnF2)(double, double);
typedef double (*FnF3)(double, double, double);
typedef double (*FnF4)(double, double, double, double);

#define FAST_BODY(T, conv, box, call)                                     \
  Bridge *b = self;                                                       \
  if (TN_UNLIKELY(nargs != b->sig.nargs)) return arity_error(b, nargs);   \
  T x[4] = {0, 0, 0, 0};                                                  \
  for (int32_t i = 0; i < nargs; i++)                                     \
    if (conv(b, &args[i], i, &x[i])) return -1;                           \
  *ret = box(call);                                                       \
  return 0;

static int fast_i0(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(int64_t, fast_int, tn_any_int, ((FnI0)b->fnptr)())
}
static int fast_i1(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(int64_t, fast_int, tn_any_int, ((FnI1)b->fnptr)(x[0]))
}
static int fast_i2(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(int64_t, fast_int, tn_any_int, ((FnI2)b->fnptr)(x[0], x[1]))
}
static int fast_i3(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(int64_t, fast_int, tn_any_int,
            ((FnI3)b->fnptr)(x[0], x[1], x[2]))
}
static int fast_i4(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(int64_t, fast_int, tn_any_int,
            ((FnI4)b->fnptr)(x[0], x[1], x[2], x[3]))
}
static int fast_f0(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(double, fast_float, tn_any_float, ((FnF0)b->fnptr)())
}
static int fast_f1(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(double, fast_float, tn_any_float, ((FnF1)b->fnptr)(x[0]))
}
static int fast_f2(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(double, fast_float, tn_any_float, ((FnF2)b->fnptr)(x[0], x[1]))
}
static int fast_f3(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(double, fast_float, tn_any_float,
            ((FnF3)b->fnptr)(x[0], x[1], x[2]))
}
static int fast_f4(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  FAST_BODY(double, fast_float, tn_any_float,
            ((FnF4)b->fnptr)(x[0], x[1], x[2], x[3]))
}

static TnPackedFn fast_path(const TnSignature *sig) {
  static const TnPackedFn ints[] = {fast_i0, fast_i1, fast_i2, fast_i3,
                                    fast_i4};
  static const TnPackedFn floats[] = {fast_f0, fast_f1, fast_f2, fast_f3,
                                      fast_f4};
  if (sig->nargs > 4) return NULL;
  TnSigKind k = sig->ret.kind;
  if (k != TN_SIG_I64 && k != TN_SIG_F64) return NULL;
  for (int32_t i = 0; i < sig->nargs; i++)
    if (sig->args[i].kind != k) return NULL;
  if (getenv("TN_FFI_NO_FAST_PATH")) return NULL; /* for benchmarks/tests */
  return k == TN_SIG_I64 ? ints[sig->nargs] : floats[sig->nargs];
}

TN_API TnObject *tn_func_from_c(void *fnptr, const char *signature,
                                const char *name) {
  const char *who = "tn_func_from_c";
  if (fnptr == NULL) return tn__raise_null(who, "fnptr"), NULL;
  Bridge *b = g_new0(Bridge, 1);
  if (tn__sig_parse(signature, &b->sig, who)) {
    g_free(b);
    return NULL;
  }
  b->fnptr = fnptr;
  if (name) {
    b->name = g_strdup(name);
  } else {
    GString *sig = g_string_new(NULL);
    tn__sig_format(&b->sig, sig);
    b->name = g_strdup_printf("C function %p %s", fnptr, sig->str);
    g_string_free(sig, TRUE);
  }
  TnPackedFn fn = fast_path(&b->sig);
  if (fn == NULL) {
    if (tn__sig_prep_cif(&b->sig, &b->cif, b->types, who)) {
      bridge_free(b);
      return NULL;
    }
    fn = bridge_call;
  }
  return tn_func_new(fn, b, bridge_free);
}

TN_API int tn_func_register_c(const char *name, void *fnptr,
                              const char *signature, int override) {
  if (name == NULL) return tn__raise_null("tn_func_register_c", "name");
  TnObject *f = tn_func_from_c(fnptr, signature, name);
  if (f == NULL) return -1;
  int rc = tn_func_register(name, f, override);
  tn__release(f);
  return rc;
}
