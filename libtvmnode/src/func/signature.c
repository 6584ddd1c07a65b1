/*
 * signature.c: the signature grammar of the libffi bridge and the
 * conversions between C values and TnAny, for both directions (a C function
 * called through a packed call, and a packed function called through a C
 * function pointer). Keeping both directions here means a type means the
 * same thing wherever it appears. The grammar is documented in function.h.
 */
#include "func/signature.h"

#include <inttypes.h>
#include <stdio.h>

static const struct {
  const char *name;
  TnSigKind kind;
} kNames[] = {
    {"void", TN_SIG_VOID},     {"bool", TN_SIG_BOOL},
    {"i8", TN_SIG_I8},         {"i16", TN_SIG_I16},
    {"i32", TN_SIG_I32},       {"i64", TN_SIG_I64},
    {"u8", TN_SIG_U8},         {"u16", TN_SIG_U16},
    {"u32", TN_SIG_U32},       {"u64", TN_SIG_U64},
    {"f32", TN_SIG_F32},       {"f64", TN_SIG_F64},
    {"ptr", TN_SIG_PTR},       {"str", TN_SIG_STR},
    {"obj+", TN_SIG_OBJ_NEW},  {"obj", TN_SIG_OBJ},
    {"any*", TN_SIG_ANY_PTR},  {"any", TN_SIG_ANY},
    {"dltensor", TN_SIG_DLTENSOR}, {"dtype", TN_SIG_DTYPE},
    {"device", TN_SIG_DEVICE},
};

const char *tn__sig_kind_name(TnSigKind kind) {
  for (size_t i = 0; i < G_N_ELEMENTS(kNames); i++)
    if (kNames[i].kind == kind) return kNames[i].name;
  return "?";
}

/* libffi descriptions of the by-value structs. Sizes and alignments are
 * filled in here so that libffi never writes to these shared objects. */
static ffi_type *g_any_elems[] = {&ffi_type_sint32, &ffi_type_uint32,
                                  &ffi_type_uint64, NULL};
static ffi_type g_any_type = {sizeof(TnAny), _Alignof(TnAny),
                              FFI_TYPE_STRUCT, g_any_elems};
static ffi_type *g_dtype_elems[] = {&ffi_type_uint8, &ffi_type_uint8,
                                    &ffi_type_uint16, NULL};
static ffi_type g_dtype_type = {sizeof(DLDataType), _Alignof(DLDataType),
                                FFI_TYPE_STRUCT, g_dtype_elems};
static ffi_type *g_device_elems[] = {&ffi_type_sint32, &ffi_type_sint32, NULL};
static ffi_type g_device_type = {sizeof(DLDevice), _Alignof(DLDevice),
                                 FFI_TYPE_STRUCT, g_device_elems};

ffi_type *tn__sig_ffi_type(TnSigKind kind) {
  switch (kind) {
    case TN_SIG_VOID: return &ffi_type_void;
    case TN_SIG_BOOL: return &ffi_type_uint8;
    case TN_SIG_I8: return &ffi_type_sint8;
    case TN_SIG_I16: return &ffi_type_sint16;
    case TN_SIG_I32: return &ffi_type_sint32;
    case TN_SIG_I64: return &ffi_type_sint64;
    case TN_SIG_U8: return &ffi_type_uint8;
    case TN_SIG_U16: return &ffi_type_uint16;
    case TN_SIG_U32: return &ffi_type_uint32;
    case TN_SIG_U64: return &ffi_type_uint64;
    case TN_SIG_F32: return &ffi_type_float;
    case TN_SIG_F64: return &ffi_type_double;
    case TN_SIG_ANY: return &g_any_type;
    case TN_SIG_DTYPE: return &g_dtype_type;
    case TN_SIG_DEVICE: return &g_device_type;
    default: return &ffi_type_pointer;
  }
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *text;
  const char *p;
  const char *who;
} Parser;

static int parse_error(Parser *ps, const char *what) {
  return tn_error_raise_in(TN_ERR_VALUE, ps->who,
                           "cannot parse signature '%s' at position %td: %s",
                           ps->text, ps->p - ps->text, what);
}

static void skip_space(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ps->p++;
}

static int parse_type(Parser *ps, TnSigType *out) {
  skip_space(ps);
  const char *start = ps->p;
  while ((*ps->p >= 'a' && *ps->p <= 'z') || (*ps->p >= '0' && *ps->p <= '9'))
    ps->p++;
  if (*ps->p == '+' || *ps->p == '*') ps->p++;
  size_t n = (size_t)(ps->p - start);
  if (n == 0) return parse_error(ps, "expected a type");
  for (size_t i = 0; i < G_N_ELEMENTS(kNames); i++) {
    if (strlen(kNames[i].name) != n || strncmp(start, kNames[i].name, n))
      continue;
    out->kind = kNames[i].kind;
    out->obj_type = TN_TYPE_OBJECT;
    if (out->kind == TN_SIG_OBJ && *ps->p == '<') {
      const char *key = ++ps->p;
      while (*ps->p && *ps->p != '>' && *ps->p != ',' && *ps->p != ')')
        ps->p++;
      if (*ps->p != '>') return parse_error(ps, "expected '>' after a type key");
      char *k = g_strndup(key, (gsize)(ps->p - key));
      int32_t t = tn_type_index(k);
      g_free(k);
      if (t < 0) {
        tn_error_set_raised(NULL);
        ps->p = key;
        return parse_error(ps, "unknown type key in obj<...>");
      }
      out->obj_type = t;
      ps->p++;
    }
    return 0;
  }
  ps->p = start;
  return parse_error(ps, "unknown type (expected void, bool, i8..i64, "
                         "u8..u64, f32, f64, ptr, str, obj, obj+, any, any*, "
                         "dltensor, dtype or device)");
}

int tn__sig_parse(const char *text, TnSignature *out, const char *who) {
  Parser ps = {text, text, who};
  if (text == NULL) return tn__raise_null(who, "signature");
  if (parse_type(&ps, &out->ret)) return -1;
  if (out->ret.kind == TN_SIG_ANY_PTR) {
    ps.p = text;
    return parse_error(&ps, "'any*' cannot be a return type");
  }
  skip_space(&ps);
  if (*ps.p != '(') return parse_error(&ps, "expected '('");
  ps.p++;
  out->nargs = 0;
  skip_space(&ps);
  if (*ps.p == ')') {
    ps.p++;
  } else {
    for (;;) {
      if (out->nargs == TN__SIG_MAX_ARGS)
        return parse_error(&ps, "more than 32 arguments");
      const char *at = ps.p;
      TnSigType *t = &out->args[out->nargs];
      if (parse_type(&ps, t)) return -1;
      if (t->kind == TN_SIG_VOID || t->kind == TN_SIG_OBJ_NEW) {
        ps.p = at;
        skip_space(&ps);
        return parse_error(&ps, t->kind == TN_SIG_VOID
                                    ? "'void' cannot be an argument type"
                                    : "'obj+' is for return types only");
      }
      out->nargs++;
      skip_space(&ps);
      if (*ps.p == ',') {
        ps.p++;
        continue;
      }
      if (*ps.p == ')') {
        ps.p++;
        break;
      }
      return parse_error(&ps, "expected ',' or ')'");
    }
  }
  skip_space(&ps);
  if (*ps.p != '\0') return parse_error(&ps, "unexpected text after ')'");
  return 0;
}

static void format_type(const TnSigType *t, GString *out) {
  g_string_append(out, tn__sig_kind_name(t->kind));
  if (t->kind == TN_SIG_OBJ && t->obj_type != TN_TYPE_OBJECT)
    g_string_append_printf(out, "<%s>", tn__type_key_or(t->obj_type, "?"));
}

void tn__sig_format(const TnSignature *sig, GString *out) {
  format_type(&sig->ret, out);
  g_string_append_c(out, '(');
  for (int32_t i = 0; i < sig->nargs; i++) {
    if (i) g_string_append_c(out, ',');
    format_type(&sig->args[i], out);
  }
  g_string_append_c(out, ')');
}

int tn__sig_prep_cif(const TnSignature *sig, ffi_cif *cif, ffi_type **types,
                     const char *who) {
  for (int32_t i = 0; i < sig->nargs; i++)
    types[i] = tn__sig_ffi_type(sig->args[i].kind);
  ffi_status st = ffi_prep_cif(cif, FFI_DEFAULT_ABI, (unsigned)sig->nargs,
                               tn__sig_ffi_type(sig->ret.kind), types);
  if (st != FFI_OK)
    return tn_error_raise_in(TN_ERR_RUNTIME, who, "ffi_prep_cif failed (%d)",
                             (int)st);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Packed argument -> C value                                                */
/* ------------------------------------------------------------------------ */

static const char *name_or_anon(const char *fname) {
  return fname ? fname : "<anonymous>";
}

static int arg_type_error(const TnSigType *t, const TnAny *a,
                          const char *fname, int32_t index) {
  GString *want = g_string_new(NULL);
  format_type(t, want);
  int rc = tn_error_raise_in(TN_ERR_TYPE, "tn_func_call",
                             "'%s' argument %d: expected %s, got %s",
                             name_or_anon(fname), index, want->str,
                             tn_any_type_key(a));
  g_string_free(want, TRUE);
  return rc;
}

static int range_error(const char *fname, int32_t index, int64_t v,
                       TnSigKind k) {
  return tn_error_raise_in(TN_ERR_OVERFLOW, "tn_func_call",
                           "'%s' argument %d: %" PRId64 " does not fit in %s",
                           name_or_anon(fname), index, v, tn__sig_kind_name(k));
}

/* A float, int or bool as a double; false for anything else. */
static bool number_as_double(const TnAny *a, double *d) {
  if (a->type_index == TN_TYPE_FLOAT) *d = a->v_float64;
  else if (a->type_index == TN_TYPE_INT || a->type_index == TN_TYPE_BOOL)
    *d = (double)a->v_int64;
  else return false;
  return true;
}

static bool int_fits(TnSigKind k, int64_t v) {
  switch (k) {
    case TN_SIG_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case TN_SIG_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case TN_SIG_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case TN_SIG_U8: return v >= 0 && v <= UINT8_MAX;
    case TN_SIG_U16: return v >= 0 && v <= UINT16_MAX;
    case TN_SIG_U32: return v >= 0 && v <= UINT32_MAX;
    case TN_SIG_U64: return v >= 0;
    default: return true;
  }
}

int tn__sig_arg_from_any(const TnSigType *t, const TnAny *a, TnSigValue *out,
                         const char *fname, int32_t index) {
  int32_t ti = a->type_index;
  switch (t->kind) {
    case TN_SIG_BOOL:
      if (ti != TN_TYPE_BOOL && ti != TN_TYPE_INT) break;
      out->b = a->v_int64 != 0;
      return 0;
    case TN_SIG_I8: case TN_SIG_I16: case TN_SIG_I32: case TN_SIG_I64:
    case TN_SIG_U8: case TN_SIG_U16: case TN_SIG_U32: case TN_SIG_U64: {
      if (ti != TN_TYPE_INT && ti != TN_TYPE_BOOL) break;
      int64_t v = a->v_int64;
      if (!int_fits(t->kind, v)) return range_error(fname, index, v, t->kind);
      switch (t->kind) {
        case TN_SIG_I8: out->i8 = (int8_t)v; break;
        case TN_SIG_I16: out->i16 = (int16_t)v; break;
        case TN_SIG_I32: out->i32 = (int32_t)v; break;
        case TN_SIG_U8: out->u8 = (uint8_t)v; break;
        case TN_SIG_U16: out->u16 = (uint16_t)v; break;
        case TN_SIG_U32: out->u32 = (uint32_t)v; break;
        default: out->i64 = v; break;
      }
      return 0;
    }
    case TN_SIG_F32: case TN_SIG_F64: {
      double d;
      if (!number_as_double(a, &d)) break;
      if (t->kind == TN_SIG_F32) out->f32 = (float)d;
      else out->f64 = d;
      return 0;
    }
    case TN_SIG_PTR:
      if (ti == TN_TYPE_NONE) out->ptr = NULL;
      else if (ti == TN_TYPE_OPAQUE_PTR || ti == TN_TYPE_DLTENSOR_PTR)
        out->ptr = a->v_ptr;
      else break;
      return 0;
    case TN_SIG_STR: {
      if (ti == TN_TYPE_NONE) {
        out->str = NULL;
        return 0;
      }
      if (ti != TN_TYPE_RAW_STR && ti != TN_TYPE_SMALL_STR &&
          ti != TN_TYPE_STRING)
        break;
      return tn_any_as_str(a, &out->str, NULL);
    }
    case TN_SIG_OBJ:
      if (ti == TN_TYPE_NONE) {
        out->obj = NULL;
        return 0;
      }
      if (!tn_any_is_object(a) || !tn__is_instance(a->v_obj, t->obj_type))
        break;
      out->obj = a->v_obj;
      return 0;
    case TN_SIG_ANY:
      tn__any_move(&out->any, a); /* borrowed: no reference taken */
      return 0;
    case TN_SIG_ANY_PTR:
      out->any_ptr = a;
      return 0;
    case TN_SIG_DLTENSOR:
      if (ti == TN_TYPE_TENSOR) out->dltensor = &((TnTensorObj *)a->v_obj)->dl;
      else if (ti == TN_TYPE_DLTENSOR_PTR) out->dltensor = a->v_dltensor;
      else if (ti == TN_TYPE_NONE) out->dltensor = NULL;
      else break;
      return 0;
    case TN_SIG_DTYPE:
      if (ti == TN_TYPE_DATA_TYPE) {
        out->dtype = a->v_dtype;
        return 0;
      }
      if (ti == TN_TYPE_RAW_STR || ti == TN_TYPE_SMALL_STR ||
          ti == TN_TYPE_STRING)
        return tn_any_as_dtype(a, &out->dtype);
      break;
    case TN_SIG_DEVICE:
      if (ti != TN_TYPE_DEVICE) break;
      out->device = a->v_device;
      return 0;
    default:
      break;
  }
  return arg_type_error(t, a, fname, index);
}

/* ------------------------------------------------------------------------ */
/* C return value -> packed result                                           */
/* ------------------------------------------------------------------------ */

int tn__sig_ret_to_any(const TnSigType *t, const TnSigValue *v, TnAny *out,
                       const char *fname) {
  switch (t->kind) {
    case TN_SIG_VOID: *out = tn_any_none(); return 0;
    case TN_SIG_BOOL: *out = tn_any_bool((uint8_t)v->arg != 0); return 0;
    case TN_SIG_I8: *out = tn_any_int((int8_t)v->arg); return 0;
    case TN_SIG_I16: *out = tn_any_int((int16_t)v->arg); return 0;
    case TN_SIG_I32: *out = tn_any_int((int32_t)v->arg); return 0;
    case TN_SIG_I64: *out = tn_any_int(v->i64); return 0;
    case TN_SIG_U8: *out = tn_any_int((uint8_t)v->arg); return 0;
    case TN_SIG_U16: *out = tn_any_int((uint16_t)v->arg); return 0;
    case TN_SIG_U32: *out = tn_any_int((uint32_t)v->arg); return 0;
    case TN_SIG_U64:
      if (v->u64 > (uint64_t)INT64_MAX)
        return tn_error_raise_in(TN_ERR_OVERFLOW, "tn_func_call",
                                 "'%s' returned %" PRIu64
                                 ", which does not fit in int64",
                                 name_or_anon(fname), v->u64);
      *out = tn_any_int((int64_t)v->u64);
      return 0;
    case TN_SIG_F32: *out = tn_any_float(v->f32); return 0;
    case TN_SIG_F64: *out = tn_any_float(v->f64); return 0;
    case TN_SIG_PTR: *out = tn_any_ptr(v->ptr); return 0;
    case TN_SIG_DLTENSOR:
      *out = tn_any_none();
      if (v->dltensor) {
        out->type_index = TN_TYPE_DLTENSOR_PTR;
        out->v_dltensor = v->dltensor;
      }
      return 0;
    case TN_SIG_STR: {
      if (v->str == NULL) {
        *out = tn_any_none();
        return 0;
      }
      TnAny raw = tn_any_cstr(v->str);
      return tn__any_own(out, &raw); /* copied */
    }
    case TN_SIG_OBJ:
      *out = tn_any_obj(v->obj);
      if (v->obj) tn__retain(v->obj);
      return 0;
    case TN_SIG_OBJ_NEW:
      *out = tn_any_obj(v->obj); /* the reference is the result's now */
      return 0;
    case TN_SIG_ANY: {
      int32_t ti = v->any.type_index;
      if (ti == TN_TYPE_RAW_STR || ti == TN_TYPE_RAW_BYTES)
        return tn__any_own(out, &v->any); /* borrowed text: copy it */
      tn__any_move(out, &v->any); /* an object in it is ours now */
      return 0;
    }
    case TN_SIG_DTYPE: *out = tn_any_dtype(v->dtype); return 0;
    case TN_SIG_DEVICE: *out = tn_any_device(v->device); return 0;
    default:
      return tn_error_raise_in(TN_ERR_TYPE, "tn_func_call", "'%s' has return "
                               "type %s, which cannot be returned",
                               name_or_anon(fname), tn__sig_kind_name(t->kind));
  }
}

/* ------------------------------------------------------------------------ */
/* Closures: C argument -> borrowed packed argument, result -> C return      */
/* ------------------------------------------------------------------------ */

int tn__sig_arg_to_any(const TnSigType *t, const void *v, TnAny *out,
                       const char *fname, int32_t index) {
  switch (t->kind) {
    case TN_SIG_BOOL: *out = tn_any_bool(*(const bool *)v); return 0;
    case TN_SIG_I8: *out = tn_any_int(*(const int8_t *)v); return 0;
    case TN_SIG_I16: *out = tn_any_int(*(const int16_t *)v); return 0;
    case TN_SIG_I32: *out = tn_any_int(*(const int32_t *)v); return 0;
    case TN_SIG_I64: *out = tn_any_int(*(const int64_t *)v); return 0;
    case TN_SIG_U8: *out = tn_any_int(*(const uint8_t *)v); return 0;
    case TN_SIG_U16: *out = tn_any_int(*(const uint16_t *)v); return 0;
    case TN_SIG_U32: *out = tn_any_int(*(const uint32_t *)v); return 0;
    case TN_SIG_U64: {
      uint64_t u = *(const uint64_t *)v;
      if (u > (uint64_t)INT64_MAX)
        return tn_error_raise_in(TN_ERR_OVERFLOW, NULL,
                                 "C call of '%s': argument %d is %" PRIu64
                                 ", which does not fit in int64",
                                 name_or_anon(fname), index, u);
      *out = tn_any_int((int64_t)u);
      return 0;
    }
    case TN_SIG_F32: *out = tn_any_float(*(const float *)v); return 0;
    case TN_SIG_F64: *out = tn_any_float(*(const double *)v); return 0;
    case TN_SIG_PTR: *out = tn_any_ptr(*(void *const *)v); return 0;
    case TN_SIG_STR: *out = tn_any_cstr(*(const char *const *)v); return 0;
    case TN_SIG_OBJ: {
      TnObject *o = *(TnObject *const *)v;
      if (o && !tn__is_instance(o, t->obj_type))
        return tn_error_raise_in(TN_ERR_TYPE, NULL, "C call of '%s': argument "
                                 "%d: expected %s, got %s", name_or_anon(fname),
                                 index, tn__type_key_or(t->obj_type, "?"),
                                 tn_object_type_key(o));
      *out = tn_any_obj(o);
      return 0;
    }
    case TN_SIG_ANY: tn__any_move(out, (const TnAny *)v); return 0;
    case TN_SIG_DLTENSOR: {
      DLTensor *d = *(DLTensor *const *)v;
      *out = tn_any_none();
      if (d) {
        out->type_index = TN_TYPE_DLTENSOR_PTR;
        out->v_dltensor = d;
      }
      return 0;
    }
    case TN_SIG_DTYPE: *out = tn_any_dtype(*(const DLDataType *)v); return 0;
    case TN_SIG_DEVICE: *out = tn_any_device(*(const DLDevice *)v); return 0;
    default:
      return tn_error_raise_in(TN_ERR_TYPE, NULL, "C call of '%s': argument "
                               "type %s is not supported here",
                               name_or_anon(fname), tn__sig_kind_name(t->kind));
  }
}

static int ret_type_error(const TnSigType *t, const TnAny *a,
                          const char *fname) {
  return tn_error_raise_in(TN_ERR_TYPE, NULL, "C call of '%s': the function "
                           "returned %s, which does not convert to %s",
                           name_or_anon(fname), tn_any_type_key(a),
                           tn__sig_kind_name(t->kind));
}

void tn__sig_ret_zero(const TnSigType *t, void *ret) {
  size_t n = tn__sig_ffi_type(t->kind)->size;
  if (n < sizeof(ffi_arg)) n = sizeof(ffi_arg);
  if (t->kind != TN_SIG_VOID) memset(ret, 0, n);
}

int tn__sig_ret_from_any(const TnSigType *t, const TnAny *a, void *ret,
                         const char *fname) {
  int32_t ti = a->type_index;
  switch (t->kind) {
    case TN_SIG_VOID:
      return 0;
    case TN_SIG_BOOL:
      if (ti != TN_TYPE_BOOL && ti != TN_TYPE_INT) break;
      *(ffi_arg *)ret = a->v_int64 != 0;
      return 0;
    case TN_SIG_I8: case TN_SIG_I16: case TN_SIG_I32: case TN_SIG_I64:
    case TN_SIG_U8: case TN_SIG_U16: case TN_SIG_U32: case TN_SIG_U64: {
      if (ti != TN_TYPE_INT && ti != TN_TYPE_BOOL) break;
      int64_t v = a->v_int64;
      if (!int_fits(t->kind, v))
        return tn_error_raise_in(TN_ERR_OVERFLOW, NULL,
                                 "C call of '%s': the result %" PRId64
                                 " does not fit in %s", name_or_anon(fname), v,
                                 tn__sig_kind_name(t->kind));
      /* libffi wants narrow integers widened to a full ffi_arg. */
      if (t->kind == TN_SIG_I8 || t->kind == TN_SIG_I16 ||
          t->kind == TN_SIG_I32 || t->kind == TN_SIG_I64)
        *(ffi_sarg *)ret = (ffi_sarg)v;
      else
        *(ffi_arg *)ret = (ffi_arg)v;
      return 0;
    }
    case TN_SIG_F32: case TN_SIG_F64: {
      double d;
      if (!number_as_double(a, &d)) break;
      if (t->kind == TN_SIG_F32) *(float *)ret = (float)d;
      else *(double *)ret = d;
      return 0;
    }
    case TN_SIG_PTR:
      if (ti == TN_TYPE_NONE) *(void **)ret = NULL;
      else if (ti == TN_TYPE_OPAQUE_PTR) *(void **)ret = a->v_ptr;
      else break;
      return 0;
    case TN_SIG_OBJ_NEW:
      if (ti == TN_TYPE_NONE) {
        *(TnObject **)ret = NULL;
        return 0;
      }
      if (!tn_any_is_object(a)) break;
      tn__retain(a->v_obj); /* the C caller owns this reference */
      *(TnObject **)ret = a->v_obj;
      return 0;
    case TN_SIG_ANY:
      /* The C caller owns the returned any. */
      return tn__any_own((TnAny *)ret, a);
    case TN_SIG_DTYPE:
      if (ti == TN_TYPE_DATA_TYPE) {
        *(DLDataType *)ret = a->v_dtype;
        return 0;
      }
      if (tn_any_as_dtype(a, (DLDataType *)ret) == 0) return 0;
      tn_error_set_raised(NULL);
      break;
    case TN_SIG_DEVICE:
      if (ti != TN_TYPE_DEVICE) break;
      *(DLDevice *)ret = a->v_device;
      return 0;
    default:
      break;
  }
  return ret_type_error(t, a, fname);
}
