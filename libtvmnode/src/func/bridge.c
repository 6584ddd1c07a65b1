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

#include "func/signature.h"

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
  int rc = tn_error_raise_in(TN_ERR_TYPE, "tn_func_call",
                             "'%s' takes %d argument%s (%s), got %d", b->name,
                             b->sig.nargs, b->sig.nargs == 1 ? "" : "s",
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
    const TnSigType *t = &b->sig.args[i];
    /* The commonest conversions inline; everything else out of line. */
    if (t->kind == TN_SIG_I64 && args[i].type_index == TN_TYPE_INT)
      values[i].i64 = args[i].v_int64;
    else if (t->kind == TN_SIG_F64 && args[i].type_index == TN_TYPE_FLOAT)
      values[i].f64 = args[i].v_float64;
    else if (tn__sig_arg_from_any(t, &args[i], &values[i], b->name, i))
      return -1;
    ptrs[i] = &values[i];
  }
  TnSigValue rv;
  rv.u64 = 0;
  ffi_call(&b->cif, FFI_FN(b->fnptr), &rv, ptrs);
  switch (b->sig.ret.kind) {
    case TN_SIG_I64: *ret = tn_any_int(rv.i64); return 0;
    case TN_SIG_F64: *ret = tn_any_float(rv.f64); return 0;
    case TN_SIG_VOID: return 0;
    default: return tn__sig_ret_to_any(&b->sig.ret, &rv, ret, b->name);
  }
}

/* ------------------------------------------------------------------------ */
/* The libffi-free fast path                                                  */
/* ------------------------------------------------------------------------ */

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

/* Arguments that are not exactly int (or float) go through the general
 * conversion (bool -> int, int -> float, errors) and then the same call. */
static __attribute__((noinline)) int fast_general(const Bridge *b,
                                                  const TnAny *args,
                                                  int32_t nargs, TnAny *ret) {
  if (nargs != b->sig.nargs) return arity_error(b, nargs);
  TnSigValue v[4];
  for (int32_t i = 0; i < nargs; i++)
    if (tn__sig_arg_from_any(&b->sig.args[i], &args[i], &v[i], b->name, i))
      return -1;
  if (b->sig.ret.kind == TN_SIG_I64) {
    int64_t r = 0;
    switch (nargs) {
      case 0: r = ((FnI0)b->fnptr)(); break;
      case 1: r = ((FnI1)b->fnptr)(v[0].i64); break;
      case 2: r = ((FnI2)b->fnptr)(v[0].i64, v[1].i64); break;
      case 3: r = ((FnI3)b->fnptr)(v[0].i64, v[1].i64, v[2].i64); break;
      default:
        r = ((FnI4)b->fnptr)(v[0].i64, v[1].i64, v[2].i64, v[3].i64);
        break;
    }
    *ret = tn_any_int(r);
  } else {
    double r = 0;
    switch (nargs) {
      case 0: r = ((FnF0)b->fnptr)(); break;
      case 1: r = ((FnF1)b->fnptr)(v[0].f64); break;
      case 2: r = ((FnF2)b->fnptr)(v[0].f64, v[1].f64); break;
      case 3: r = ((FnF3)b->fnptr)(v[0].f64, v[1].f64, v[2].f64); break;
      default:
        r = ((FnF4)b->fnptr)(v[0].f64, v[1].f64, v[2].f64, v[3].f64);
        break;
    }
    *ret = tn_any_float(r);
  }
  return 0;
}

#define I(k) (args[k].type_index == TN_TYPE_INT)
#define F(k) (args[k].type_index == TN_TYPE_FLOAT)
#define VI(k) args[k].v_int64
#define VF(k) args[k].v_float64
#define FAST(name, n, test, box, call)                                    \
  static int name(void *self, const TnAny *args, int32_t nargs,           \
                  TnAny *ret) {                                           \
    const Bridge *b = self;                                               \
    if (TN_LIKELY(nargs == n && (test))) {                                \
      *ret = box(call);                                                   \
      return 0;                                                           \
    }                                                                     \
    return fast_general(b, args, nargs, ret);                             \
  }

FAST(fast_i0, 0, 1, tn_any_int, ((FnI0)b->fnptr)())
FAST(fast_i1, 1, I(0), tn_any_int, ((FnI1)b->fnptr)(VI(0)))
FAST(fast_i2, 2, I(0) && I(1), tn_any_int, ((FnI2)b->fnptr)(VI(0), VI(1)))
FAST(fast_i3, 3, I(0) && I(1) && I(2), tn_any_int,
     ((FnI3)b->fnptr)(VI(0), VI(1), VI(2)))
FAST(fast_i4, 4, I(0) && I(1) && I(2) && I(3), tn_any_int,
     ((FnI4)b->fnptr)(VI(0), VI(1), VI(2), VI(3)))
FAST(fast_f0, 0, 1, tn_any_float, ((FnF0)b->fnptr)())
FAST(fast_f1, 1, F(0), tn_any_float, ((FnF1)b->fnptr)(VF(0)))
FAST(fast_f2, 2, F(0) && F(1), tn_any_float, ((FnF2)b->fnptr)(VF(0), VF(1)))
FAST(fast_f3, 3, F(0) && F(1) && F(2), tn_any_float,
     ((FnF3)b->fnptr)(VF(0), VF(1), VF(2)))
FAST(fast_f4, 4, F(0) && F(1) && F(2) && F(3), tn_any_float,
     ((FnF4)b->fnptr)(VF(0), VF(1), VF(2), VF(3)))
#undef I
#undef F
#undef VI
#undef VF
#undef FAST

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

TN_API TnObject *tn_func_c_signature(const TnObject *func) {
  if (func == NULL || func->type_index != TN_TYPE_FUNCTION) {
    if (tn__check_object(func, TN_TYPE_FUNCTION, "tn_func_c_signature",
                         "func"))
      return NULL;
  }
  /* A bridge is recognised by its packed implementation: the general
   * libffi call or one of the fast paths, whose `self` is a Bridge. */
  static const TnPackedFn bridges[] = {
      bridge_call, fast_i0, fast_i1, fast_i2, fast_i3, fast_i4,
      fast_f0,     fast_f1, fast_f2, fast_f3, fast_f4};
  const TnFunctionObj *f = (const TnFunctionObj *)func;
  const Bridge *b = NULL;
  for (size_t i = 0; i < sizeof bridges / sizeof bridges[0]; i++)
    if (f->fn == bridges[i]) b = f->self;
  if (b == NULL) return NULL;
  GString *sig = g_string_new(NULL);
  tn__sig_format(&b->sig, sig);
  TnObject *s = tn_string_new(sig->str, sig->len);
  g_string_free(sig, TRUE);
  return s;
}
