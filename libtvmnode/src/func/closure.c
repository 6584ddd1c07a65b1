/*
 * closure.c: packed functions as real C function pointers (the libffi
 * bridge, packed -> typed), owned by a tn.CClosure handle.
 *
 * libffi hands out a writable closure and its executable address; the
 * handle keeps both, the prepared cif, and a reference to the function, and
 * frees the closure when it dies. A call converts each C argument into a
 * borrowed TnAny, calls the packed function and converts the result back.
 *
 * Errors cannot unwind through the C code that calls the pointer, so the
 * pointer returns a zero value and reports the error twice: in the calling
 * thread's raised slot (for a caller that checks right after its C call
 * returns) and in the handle (for callbacks that run on some other thread,
 * read with tn_cclosure_take_error).
 */
#include <stdlib.h>

#include "func/signature.h"

typedef struct {
  TnObject header;
  ffi_closure *closure; /* writable */
  void *code;           /* executable: what C calls */
  ffi_cif cif;
  ffi_type *types[TN__SIG_MAX_ARGS];
  TnSignature sig;
  TnObject *func;
  char *name;
  TnMutex lock; /* guards last_error */
  TnObject *last_error;
  _Atomic int64_t errors;
} CClosure;

static void cclosure_deleter(TnObject *self, int flags) {
  CClosure *c = (CClosure *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    if (c->closure) ffi_closure_free(c->closure);
    c->closure = NULL;
    tn_object_release(c->func);
    tn_object_release(c->last_error);
    c->func = c->last_error = NULL;
    tn__mutex_clear(&c->lock);
    g_free(c->name);
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static void record_error(CClosure *c) {
  TnObject *err = tn_error_peek_raised();
  if (err == NULL) return;
  tn__retain(err);
  tn__mutex_lock(&c->lock);
  TnObject *old = c->last_error;
  c->last_error = err;
  tn__mutex_unlock(&c->lock);
  atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
  tn_object_release(old);
}

static void handler(ffi_cif *cif, void *ret, void **args, void *user_data) {
  (void)cif;
  CClosure *c = user_data;
  TnAny packed[TN__SIG_MAX_ARGS];
  for (int32_t i = 0; i < c->sig.nargs; i++) {
    TnSigKind k = c->sig.args[i].kind;
    /* The commonest conversions inline; everything else out of line. */
    if (k == TN_SIG_I64) {
      packed[i] = tn_any_int(*(const int64_t *)args[i]);
    } else if (k == TN_SIG_F64) {
      packed[i] = tn_any_float(*(const double *)args[i]);
    } else if (tn__sig_arg_to_any(&c->sig.args[i], args[i], &packed[i],
                                  c->name, i)) {
      record_error(c);
      tn__sig_ret_zero(&c->sig.ret, ret);
      return;
    }
  }
  TnAny result = tn_any_none();
  TnFunctionObj *f = (TnFunctionObj *)c->func;
  if (TN_UNLIKELY(f->fn(f->self, packed, c->sig.nargs, &result) != 0)) {
    record_error(c);
    tn__sig_ret_zero(&c->sig.ret, ret);
  } else if (c->sig.ret.kind == TN_SIG_I64 &&
             result.type_index == TN_TYPE_INT) {
    *(ffi_sarg *)ret = (ffi_sarg)result.v_int64;
    return; /* an int holds nothing to release */
  } else if (tn__sig_ret_from_any(&c->sig.ret, &result, ret, c->name) != 0) {
    record_error(c);
    tn__sig_ret_zero(&c->sig.ret, ret);
  }
  tn__any_clear(&result);
}

/* All-i64 signatures with up to four arguments (the commonest callbacks):
 * no per-argument dispatch. */
static void handler_i64(ffi_cif *cif, void *ret, void **args,
                        void *user_data) {
  (void)cif;
  CClosure *c = user_data;
  TnAny packed[4];
  int32_t n = c->sig.nargs;
  for (int32_t i = 0; i < n; i++)
    packed[i] = tn_any_int(*(const int64_t *)args[i]);
  TnAny result = tn_any_none();
  TnFunctionObj *f = (TnFunctionObj *)c->func;
  if (TN_UNLIKELY(f->fn(f->self, packed, n, &result) != 0)) {
    record_error(c);
    *(ffi_sarg *)ret = 0;
  } else if (TN_LIKELY(result.type_index == TN_TYPE_INT)) {
    *(ffi_sarg *)ret = (ffi_sarg)result.v_int64;
    return;
  } else if (tn__sig_ret_from_any(&c->sig.ret, &result, ret, c->name) != 0) {
    record_error(c);
    *(ffi_sarg *)ret = 0;
  }
  tn__any_clear(&result);
}

static bool all_i64(const TnSignature *sig) {
  if (sig->ret.kind != TN_SIG_I64 || sig->nargs > 4) return false;
  for (int32_t i = 0; i < sig->nargs; i++)
    if (sig->args[i].kind != TN_SIG_I64) return false;
  return true;
}

TN_API TnObject *tn_func_to_c(TnObject *func, const char *signature,
                              void **out_fnptr) {
  const char *who = "tn_func_to_c";
  if (tn__check_object(func, TN_TYPE_FUNCTION, who, "func")) return NULL;
  if (out_fnptr == NULL) return tn__raise_null(who, "out_fnptr"), NULL;
  TnSignature sig;
  if (tn__sig_parse(signature, &sig, who)) return NULL;
  TnSigKind rk = sig.ret.kind;
  if (rk == TN_SIG_STR || rk == TN_SIG_OBJ || rk == TN_SIG_DLTENSOR) {
    tn_error_raise_in(TN_ERR_VALUE, who, "a C function pointer cannot return "
                      "'%s' (a borrowed pointer that nothing would keep "
                      "alive); return 'obj+' or 'any' instead",
                      tn__sig_kind_name(rk));
    return NULL;
  }
  for (int32_t i = 0; i < sig.nargs; i++) {
    if (sig.args[i].kind == TN_SIG_ANY_PTR) {
      tn_error_raise_in(TN_ERR_VALUE, who, "argument %d: 'any*' is not "
                        "supported for C function pointers; use 'any'", i);
      return NULL;
    }
  }
  CClosure *c = tn__object_malloc(sizeof *c, 0, TN_TYPE_CCLOSURE, who);
  if (c == NULL) return NULL;
  tn__object_zero_body(c, sizeof *c);
  tn__object_init(&c->header, TN_TYPE_CCLOSURE, cclosure_deleter);
  tn__mutex_init(&c->lock);
  c->sig = sig;
  GString *text = g_string_new(NULL);
  tn__sig_format(&sig, text);
  c->name = g_strdup_printf("closure %s", text->str);
  g_string_free(text, TRUE);
  tn__retain(func);
  c->func = func;
  if (tn__sig_prep_cif(&c->sig, &c->cif, c->types, who)) goto fail;
  c->closure = ffi_closure_alloc(sizeof(ffi_closure), &c->code);
  if (c->closure == NULL) {
    tn__raise_memory(who, sizeof(ffi_closure));
    goto fail;
  }
  ffi_status st = ffi_prep_closure_loc(
      c->closure, &c->cif, all_i64(&c->sig) ? handler_i64 : handler, c,
      c->code);
  if (st != FFI_OK) {
    tn_error_raise_in(TN_ERR_RUNTIME, who, "ffi_prep_closure_loc failed (%d)",
                      (int)st);
    goto fail;
  }
  *out_fnptr = c->code;
  return &c->header;
fail:
  tn__release(&c->header);
  return NULL;
}

TN_API TnObject *tn_cclosure_take_error(TnObject *closure) {
  if (tn__check_object(closure, TN_TYPE_CCLOSURE, "tn_cclosure_take_error",
                       "closure"))
    return NULL;
  CClosure *c = (CClosure *)closure;
  tn__mutex_lock(&c->lock);
  TnObject *err = c->last_error;
  c->last_error = NULL;
  tn__mutex_unlock(&c->lock);
  return err;
}

TN_API int64_t tn_cclosure_error_count(const TnObject *closure) {
  if (tn__check_object(closure, TN_TYPE_CCLOSURE, "tn_cclosure_error_count",
                       "closure"))
    return -1;
  return atomic_load_explicit(&((CClosure *)closure)->errors,
                              memory_order_relaxed);
}
