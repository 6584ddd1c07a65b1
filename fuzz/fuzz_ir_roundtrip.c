/*
 * fuzz_ir_roundtrip.c: structure-aware libFuzzer target for the text
 * format: the input bytes are a stream of decisions that build a module
 * with the C builders, which must print, parse back to a structurally
 * equal module, and print again to the same text, byte for byte.
 *
 * The generator makes what the builders accept, not what type inference
 * accepts: parameters and let variables may be untyped, so a call of any
 * registered operator with any attribute values of the right kinds is a
 * valid call. It draws attribute values, function attributes and module
 * attributes from tables of awkward values (extreme integers, -0.0, inf,
 * nan, 1e300, denormals, 1-tuples and empty tuples, strings with quotes,
 * backslashes, control bytes, NULs and UTF-8, raw DLDataType bits) or
 * straight from the bytes. A builder may refuse a step (with an error of
 * an expected kind); the step is then skipped.
 *
 * TN_FUZZ_RT_OFF=feature,... turns generator features off, to look past a
 * known finding: odd_names (function names and attribute keys that are not
 * identifiers), tuple1 (1-element arrays and tuples), extreme (extreme
 * integers and dims), special_floats (inf, nan, -0.0, 1e300, denormals),
 * odd_strings (string values other than plain words), raw_dtypes (dtypes
 * from raw bits), empty_attrs (a function's attributes an empty map rather
 * than none), shared_fns (a nested function, or an expression holding one,
 * used in more than one place: the printer prints it once per scope, so
 * the parsed module has two functions, each binding its own parameters).
 */
#include <float.h>
#include <glib.h>
#include <math.h>

#include "fuzz_util.h"

enum {
  F_ODD_NAMES = 1,
  F_TUPLE1 = 2,
  F_EXTREME = 4,
  F_SPECIAL_FLOATS = 8,
  F_ODD_STRINGS = 16,
  F_RAW_DTYPES = 32,
  F_EMPTY_ATTRS = 64,
  F_SHARED_FNS = 128,
};
static unsigned g_features = ~0u;

typedef struct {
  const uint8_t *d;
  size_t n, i;
  GPtrArray *pool;  /* every object made, released at the end */
  GPtrArray *scope; /* expressions usable at this point (borrowed) */
  GHashTable *once; /* without shared_fns: expressions holding a function */
  GHashTable *used; /* the ones of them used already */
  int took_once;    /* any_expr handed out one of them in this step */
  TnObject *ops;    /* names of the registered operators */
  int steps;        /* left for the whole module */
} G;

/* The current function: its parameters (grown on demand) and lets. */
typedef struct {
  GPtrArray *params;
  GPtrArray *let_vars, *let_values;
  size_t scope_mark;
} Fn;

/* ---- the decision stream ------------------------------------------------ */

static unsigned u8(G *g) { return g->i < g->n ? g->d[g->i++] : 0; }
static unsigned pick(G *g, unsigned n) { return n ? u8(g) % n : 0; }
static int more(const G *g) { return g->i < g->n; }
static uint64_t u64(G *g) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++) v = v << 8 | u8(g);
  return v;
}
static int on(unsigned feature) { return (g_features & feature) != 0; }

/* A builder refused: the error must be an expected one. */
static TnObject *own(G *g, TnObject *o, const char *what) {
  if (o == NULL) {
    fz_expect_error(what, NULL);
    return NULL;
  }
  g_ptr_array_add(g->pool, o);
  return o;
}

/* ---- values ------------------------------------------------------------- */

static int64_t gen_int(G *g) {
  static const int64_t plain[] = {0, 1, 2, 3, -1, 4, 16, 255, -128, 7};
  static const int64_t extreme[] = {
      INT64_MIN, INT64_MAX, INT64_MIN + 1, INT32_MIN, INT32_MAX,
      (int64_t)INT32_MAX + 1, (int64_t)1 << 53, ((int64_t)1 << 53) + 1,
      INT64_MIN / 3, UINT32_MAX};
  switch (pick(g, 4)) {
    case 0: return (int64_t)u64(g);
    case 1:
      if (on(F_EXTREME)) return extreme[pick(g, G_N_ELEMENTS(extreme))];
      /* fall through */
    default: return plain[pick(g, G_N_ELEMENTS(plain))];
  }
}

static double gen_float(G *g) {
  static const double plain[] = {0.0, 1.0, -1.5, 0.5, 2.25, 0.1, 1.0 / 3, 100.0};
  const double special[] = {-0.0, INFINITY, -INFINITY, NAN, -NAN, 1e300,
                            -1e300, DBL_MAX, DBL_MIN, 5e-324, FLT_MAX,
                            (double)FLT_MAX * 2, 1e-310, 123456789012345678.0};
  switch (pick(g, 4)) {
    case 0:
      if (on(F_SPECIAL_FLOATS)) {
        uint64_t bits = u64(g);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
      }
      return (double)(int8_t)u8(g) / 8;
    case 1:
      if (on(F_SPECIAL_FLOATS)) return special[pick(g, G_N_ELEMENTS(special))];
      /* fall through */
    default: return plain[pick(g, G_N_ELEMENTS(plain))];
  }
}

/* A string value (raw bytes allowed: a tn.String has a length). */
static TnObject *gen_string(G *g) {
  static const char *const plain[] = {"", "NCHW", "NHWC", "OIHW", "HWIO",
                                      "UPWARD", "TONEAREST", "c", "x_1"};
  static const char *const odd[] = {
      "a\"b", "\\", "\\n", "\n\t", "\x01\x7f", "\xff\xfe", "\xc3\xa9t\xc3\xa9",
      "}", "%x", "meta[0]", "#[metadata]", "// c", "a b", "\"", "'", "\r",
      "def @main() {", "\xe2\x80\xae", "1", "-", "None", "true", "inf"};
  if (on(F_ODD_STRINGS)) {
    switch (pick(g, 4)) {
      case 0: {
        char buf[12];
        size_t n = pick(g, sizeof buf + 1);
        for (size_t i = 0; i < n; i++) buf[i] = (char)u8(g);
        return own(g, tn_string_new(buf, n), "tn_string_new");
      }
      case 1: return own(g, tn_string_from_cstr(odd[pick(g, G_N_ELEMENTS(odd))]),
                         "tn_string_from_cstr");
      default: break;
    }
  }
  return own(g, tn_string_from_cstr(plain[pick(g, G_N_ELEMENTS(plain))]),
             "tn_string_from_cstr");
}

static DLDataType gen_dtype(G *g) {
  static const char *const names[] = {
      "float32", "float16", "float64", "bfloat16", "int8",  "int16",
      "int32",   "int64",   "uint8",   "uint32",   "bool",  "int4",
      "uint1",   "float32x4", "int8x16", "handle", "float8_e4m3fn"};
  DLDataType t = {kDLFloat, 32, 1};
  if (on(F_RAW_DTYPES) && pick(g, 6) == 5) {
    t.code = (uint8_t)u8(g);
    t.bits = (uint8_t)u8(g);
    t.lanes = (uint16_t)(u8(g) | u8(g) << 8);
    return t;
  }
  DLDataType parsed;
  if (tn_dtype_parse(names[pick(g, G_N_ELEMENTS(names))], &parsed) == 0)
    return parsed;
  tn_error_set_raised(NULL); /* a name this build does not know */
  return t;
}

/* How many items in an array, tuple or shape: 1 often. */
static unsigned gen_count(G *g, unsigned max) {
  unsigned n = pick(g, max + 2);
  if (n > max) n = 1;
  if (n == 1 && !on(F_TUPLE1)) n = 2;
  return n;
}

static int gen_value(G *g, int depth, int optional, TnAny *out);

static TnObject *gen_map(G *g, int depth) {
  TnAny keys[4], vals[4];
  unsigned n = pick(g, 4);
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    TnObject *key;
    if (on(F_ODD_NAMES) && pick(g, 2)) {
      key = gen_string(g);
    } else {
      static const char *const plain[] = {"Primitive", "Compiler", "version",
                                          "global_symbol", "k", "a_b"};
      key = own(g, tn_string_from_cstr(plain[pick(g, G_N_ELEMENTS(plain))]),
                "tn_string_from_cstr");
    }
    if (key == NULL || gen_value(g, depth - 1, 1, &vals[k]) != 0) continue;
    keys[k++] = tn_any_obj(key);
  }
  return own(g, tn_map_new(keys, vals, k), "tn_map_new");
}

/* A value for an attribute, an array item or a map value; -1 when a
 * builder refused (the error taken). Objects are in the pool. */
static int gen_value(G *g, int depth, int optional, TnAny *out) {
  switch (pick(g, depth > 0 ? 11 : 7)) {
    case 0: *out = tn_any_int(gen_int(g)); return 0;
    case 1: *out = tn_any_float(gen_float(g)); return 0;
    case 2: *out = tn_any_bool((int)pick(g, 2)); return 0;
    case 3: {
      TnObject *s = gen_string(g);
      *out = tn_any_obj(s);
      return s ? 0 : -1;
    }
    case 4: *out = tn_any_dtype(gen_dtype(g)); return 0;
    case 5:
      if (optional) {
        *out = tn_any_none();
        return 0;
      }
      *out = tn_any_int((int64_t)pick(g, 4));
      return 0;
    case 6: /* ints, the commonest array attribute */
    case 7: {
      TnAny items[5];
      unsigned n = gen_count(g, 4), k = 0;
      for (unsigned i = 0; i < n; i++) {
        if (pick(g, 4) == 0 && depth > 0) {
          if (gen_value(g, depth - 1, 1, &items[k]) == 0) k++;
        } else {
          items[k++] = tn_any_int(gen_int(g));
        }
      }
      TnObject *a = own(g, tn_array_new(items, k), "tn_array_new");
      *out = tn_any_obj(a);
      return a ? 0 : -1;
    }
    case 8: {
      int64_t dims[5];
      unsigned n = gen_count(g, 4);
      for (unsigned i = 0; i < n; i++) dims[i] = gen_int(g);
      TnObject *s = own(g, tn_shape_new(dims, n), "tn_shape_new");
      *out = tn_any_obj(s);
      return s ? 0 : -1;
    }
    case 9:
    default: {
      TnObject *m = gen_map(g, depth);
      *out = tn_any_obj(m);
      return m ? 0 : -1;
    }
  }
}

/* ---- types and variables ------------------------------------------------ */

static TnObject *gen_type(G *g, int depth) {
  unsigned what = pick(g, depth > 0 ? 8 : 6);
  if (what < 6) {
    static const int64_t plain[] = {1, 2, 3, 4, 8, 10, 16, 0, 32, 96};
    static const int64_t extreme[] = {INT32_MAX, INT64_MAX, (int64_t)1 << 40,
                                      -1, INT64_MIN};
    int64_t dims[4];
    int32_t nd = (int32_t)pick(g, 5);
    for (int32_t i = 0; i < nd; i++)
      dims[i] = on(F_EXTREME) && pick(g, 8) == 0
                    ? extreme[pick(g, G_N_ELEMENTS(extreme))]
                    : plain[pick(g, G_N_ELEMENTS(plain))];
    return own(g, tn_ir_tensor_type(dims, nd, gen_dtype(g)),
               "tn_ir_tensor_type");
  }
  if (what == 6) {
    TnObject *fields[4];
    unsigned n = gen_count(g, 3), k = 0;
    for (unsigned i = 0; i < n; i++)
      if ((fields[k] = gen_type(g, depth - 1)) != NULL) k++;
    return own(g, tn_ir_tuple_type(fields, (int32_t)k), "tn_ir_tuple_type");
  }
  TnObject *args[2];
  unsigned n = pick(g, 3), k = 0;
  for (unsigned i = 0; i < n; i++)
    if ((args[k] = gen_type(g, depth - 1)) != NULL) k++;
  TnObject *ret = gen_type(g, depth - 1);
  return ret ? own(g, tn_ir_func_type(args, (int32_t)k, ret), "tn_ir_func_type")
             : NULL;
}

static TnObject *gen_var(G *g) {
  static const char *const names[] = {"x", "y", "data", "w", "x1", "_", "p0",
                                      "", "1x", "a b", "%x", "\xc3\xa9",
                                      "meta", "fn", "let", "v_1"};
  char raw[6];
  const char *name = names[pick(g, G_N_ELEMENTS(names))];
  if (pick(g, 8) == 0) { /* raw bytes: the printer makes a name of them */
    size_t n = pick(g, sizeof raw);
    for (size_t i = 0; i < n; i++) raw[i] = (char)(u8(g) | 1);
    raw[n] = '\0';
    name = raw;
  }
  TnObject *type = pick(g, 3) ? gen_type(g, 1) : NULL;
  return own(g, tn_ir_var(name, type), "tn_ir_var");
}

/* ---- expressions -------------------------------------------------------- */

static TnObject *new_param(G *g, Fn *f) {
  TnObject *v = gen_var(g);
  if (v == NULL) return NULL;
  g_ptr_array_add(f->params, v);
  g_ptr_array_add(g->scope, v);
  return v;
}

/* An expression in scope (a new parameter when there is none). */
static TnObject *any_expr(G *g, Fn *f) {
  size_t n = g->scope->len;
  if (n == 0 || pick(g, 16) == 0) return new_param(g, f);
  /* the recent ones more often: deeper graphs */
  size_t i = pick(g, 2) ? n - 1 - pick(g, n < 4 ? (unsigned)n : 4)
                        : pick(g, (unsigned)n);
  TnObject *e = g_ptr_array_index(g->scope, i);
  if (g_hash_table_contains(g->once, e)) {
    if (g_hash_table_contains(g->used, e)) return new_param(g, f);
    g_hash_table_add(g->used, e);
    g->took_once = 1;
  }
  return e;
}

static TnObject *gen_constant(G *g) {
  DLDataType t = gen_dtype(g);
  if (pick(g, 2)) {
    /* a 0-d constant: a literal ("1.5f", "3i8") where the printer can */
    if (t.lanes != 1 || t.bits == 0 || t.bits > 64 || t.bits % 8) {
      t.code = kDLFloat, t.bits = 32, t.lanes = 1;
    }
    double v = t.code == kDLFloat ? gen_float(g) : (double)gen_int(g);
    if (t.code != kDLFloat) v = fmod(v, 100.0);
    return own(g, tn_ir_scalar(v, t), "tn_ir_scalar");
  }
  /* a small tensor of raw bytes: printed as meta[i] */
  static const DLDataType kinds[] = {{kDLFloat, 32, 1}, {kDLInt, 8, 1},
                                     {kDLInt, 32, 1}, {kDLFloat, 64, 1},
                                     {kDLUInt, 8, 1}, {kDLFloat, 16, 1}};
  t = kinds[pick(g, G_N_ELEMENTS(kinds))];
  int64_t dims[3];
  int32_t nd = (int32_t)pick(g, 4);
  for (int32_t i = 0; i < nd; i++) dims[i] = pick(g, 4);
  DLDevice cpu = {kDLCPU, 0};
  TnObject *tensor = own(g, tn_tensor_empty(dims, nd, t, cpu), "tn_tensor_empty");
  if (tensor == NULL) return NULL;
  uint8_t *p = tn_tensor_dltensor(tensor)->data;
  int64_t bytes = tn_tensor_nbytes(tensor);
  for (int64_t i = 0; i < bytes; i++) p[i] = (uint8_t)u8(g);
  return own(g, tn_ir_constant(tensor), "tn_ir_constant");
}

static TnObject *call_op(G *g, Fn *f) {
  int64_t nops = tn_array_size(g->ops);
  const char *name;
  unsigned k = u8(g) | u8(g) << 8;
  if (nops <= 0 ||
      tn_any_as_str(tn_array_at(g->ops, (int64_t)k % nops), &name, NULL))
    abort();
  TnObject *op = tn_ir_op_get(name);
  fz_must(op, name);
  const TnIrOp *o = (const TnIrOp *)op;
  int32_t nargs = o->num_inputs >= 0 ? (int32_t)o->num_inputs : (int32_t)pick(g, 4);
  int32_t attrs_index = o->attrs_index;
  tn_object_release(op);
  if (nargs > 8) return NULL;
  TnObject *args[8];
  for (int32_t i = 0; i < nargs; i++)
    if ((args[i] = any_expr(g, f)) == NULL) return NULL;
  const char *names[16];
  TnAny values[16];
  int32_t na = 0;
  int32_t nfields = attrs_index >= 0 ? tn_type_field_count(attrs_index) : 0;
  for (int32_t i = 0; i < nfields && na < 16; i++) {
    const TnFieldDesc *fd = tn_type_field_at(attrs_index, i);
    if (pick(g, 3) == 0) continue; /* the default */
    TnAny v;
    switch (fd->kind) {
      case TN_FIELD_INT: v = tn_any_int(gen_int(g)); break;
      case TN_FIELD_FLOAT: v = tn_any_float(gen_float(g)); break;
      case TN_FIELD_BOOL: v = tn_any_bool((int)pick(g, 2)); break;
      case TN_FIELD_DTYPE: v = tn_any_dtype(gen_dtype(g)); break;
      case TN_FIELD_STR: {
        TnObject *s = gen_string(g);
        if (s == NULL) continue;
        v = tn_any_obj(s);
        break;
      }
      case TN_FIELD_ANY:
        if (gen_value(g, 2, (fd->flags & TN_FIELD_OPTIONAL) != 0, &v)) continue;
        break;
      default: continue;
    }
    names[na] = fd->name;
    values[na++] = v;
  }
  return own(g, tn_ir_call_op(name, args, nargs, names, values, na),
             "tn_ir_call_op");
}

static TnObject *gen_function(G *g, int depth, const TnObject *helper,
                              const char *helper_name);

/* One step in the body of `f`: a new expression in scope, or nothing. */
static void gen_step(G *g, Fn *f, int depth, const TnObject *helper,
                     const char *helper_name) {
  TnObject *e = NULL;
  int fn_made = 0;
  g->took_once = 0;
  switch (pick(g, 16)) {
    case 0: case 1: case 2: case 3: case 4: e = call_op(g, f); break;
    case 5: case 6: {
      TnObject *fields[4];
      unsigned n = gen_count(g, 3);
      for (unsigned i = 0; i < n; i++)
        if ((fields[i] = any_expr(g, f)) == NULL) return;
      e = own(g, tn_ir_tuple(fields, (int32_t)n), "tn_ir_tuple");
      break;
    }
    case 7: {
      TnObject *t = any_expr(g, f);
      int64_t i = pick(g, 8) ? (int64_t)pick(g, 4) : gen_int(g);
      e = t ? own(g, tn_ir_tuple_get_item(t, i), "tn_ir_tuple_get_item") : NULL;
      break;
    }
    case 8: case 9: { /* let %v = value; the rest of the body */
      TnObject *value = any_expr(g, f);
      TnObject *v = value ? gen_var(g) : NULL;
      if (v == NULL) return;
      g_ptr_array_add(f->let_vars, v);
      g_ptr_array_add(f->let_values, value);
      e = v;
      break;
    }
    case 10: case 11: e = gen_constant(g); break;
    case 12:
      if (depth < 2) {
        TnObject *fn = gen_function(g, depth + 1, helper, helper_name);
        fn_made = 1;
        if (fn == NULL || pick(g, 3) == 0) {
          e = fn;
          break;
        }
        TnObject *args[64];
        int32_t n = (int32_t)tn_array_size(((TnIrFunction *)fn)->params);
        if (n > 64) return;
        for (int32_t i = 0; i < n; i++)
          if ((args[i] = any_expr(g, f)) == NULL) return;
        e = own(g, tn_ir_call(fn, args, n, NULL), "tn_ir_call");
      }
      break;
    case 13:
      if (helper) {
        TnObject *gv = own(g, tn_ir_global_var(helper_name), "tn_ir_global_var");
        TnObject *args[64];
        int32_t n = (int32_t)tn_array_size(((TnIrFunction *)helper)->params);
        if (n > 64) return;
        for (int32_t i = 0; i < n; i++)
          if ((args[i] = any_expr(g, f)) == NULL) return;
        e = gv ? own(g, tn_ir_call(gv, args, n, NULL), "tn_ir_call") : NULL;
      }
      break;
    default: e = new_param(g, f); return;
  }
  if (e == NULL) return;
  /* a let variable stands for its value: it may be used anywhere */
  if (!on(F_SHARED_FNS) && (fn_made || g->took_once) &&
      !g_ptr_array_find(f->let_vars, e, NULL))
    g_hash_table_add(g->once, e);
  g_ptr_array_add(g->scope, e);
}

/* A function over the current scope (empty for a global one). */
static TnObject *gen_function(G *g, int depth, const TnObject *helper,
                              const char *helper_name) {
  Fn f = {g_ptr_array_new(), g_ptr_array_new(), g_ptr_array_new(),
          g->scope->len};
  unsigned nparams = pick(g, depth ? 3 : 4);
  for (unsigned i = 0; i < nparams; i++) new_param(g, &f);
  int n = 1 + (int)pick(g, depth ? 6 : 24);
  for (int i = 0; i < n && g->steps > 0 && more(g); i++, g->steps--)
    gen_step(g, &f, depth, helper, helper_name);
  /* the body: one of the last two expressions made in this function */
  guint made = g->scope->len - (guint)f.scope_mark;
  TnObject *body = made ? g_ptr_array_index(g->scope, g->scope->len - 1 -
                                                          pick(g, 2) % made)
                        : NULL;
  if (body && g_hash_table_contains(g->once, body) &&
      !g_hash_table_add(g->used, body))
    body = NULL; /* used up */
  if (body == NULL) body = gen_constant(g);
  /* the lets around the body, innermost last */
  for (guint i = f.let_vars->len; i-- > 0 && body;)
    body = own(g, tn_ir_let(g_ptr_array_index(f.let_vars, i),
                            g_ptr_array_index(f.let_values, i), body),
               "tn_ir_let");
  TnObject *fn = NULL;
  if (body) {
    TnObject *ret = pick(g, 4) == 0 ? gen_type(g, 1) : NULL;
    TnObject *attrs = pick(g, 3) == 0 ? gen_map(g, 2) : NULL;
    if (attrs && tn_map_size(attrs) == 0 && !on(F_EMPTY_ATTRS)) attrs = NULL;
    fn = own(g, tn_ir_function((TnObject **)f.params->pdata,
                               (int32_t)f.params->len, body, ret, attrs),
             "tn_ir_function");
  }
  g_ptr_array_set_size(g->scope, (gint)f.scope_mark);
  g_ptr_array_free(f.params, TRUE);
  g_ptr_array_free(f.let_vars, TRUE);
  g_ptr_array_free(f.let_values, TRUE);
  return fn;
}

static const char *gen_global_name(G *g, char *buf, size_t size) {
  static const char *const plain[] = {"helper", "f", "g_1", "conv"};
  static const char *const odd[] = {"a b", "1f", "", "f-g", "\xc3\xa9",
                                    "main2\n", "x\"y", "@h", "f(x)"};
  if (on(F_ODD_NAMES) && pick(g, 4) == 0)
    snprintf(buf, size, "%s", odd[pick(g, G_N_ELEMENTS(odd))]);
  else
    snprintf(buf, size, "%s", plain[pick(g, G_N_ELEMENTS(plain))]);
  return buf;
}

/* The module the bytes describe, or NULL when a builder refused a part
 * that cannot be skipped. */
static TnObject *gen_module(G *g) {
  char helper_name[32];
  TnObject *helper = NULL;
  if (pick(g, 2)) {
    gen_global_name(g, helper_name, sizeof helper_name);
    helper = gen_function(g, 0, NULL, NULL);
  }
  TnObject *main_fn = gen_function(g, 0, helper, helper_name);
  if (main_fn == NULL) return NULL;
  TnAny keys[2] = {tn_any_cstr("main"), tn_any_cstr(helper_name)};
  TnAny fns[2] = {tn_any_obj(main_fn), tn_any_obj(helper)};
  int32_t nfns = helper && strcmp(helper_name, "main") != 0 ? 2 : 1;
  TnObject *functions = own(g, tn_map_new(keys, fns, nfns), "tn_map_new");
  TnObject *attrs = pick(g, 2) ? gen_map(g, 2) : own(g, tn_map_new(NULL, NULL, 0), "tn_map_new");
  if (functions == NULL || attrs == NULL) return NULL;
  const char *names[2] = {"functions", "attrs"};
  TnAny values[2] = {tn_any_obj(functions), tn_any_obj(attrs)};
  return own(g, tn_node_new(tn_ir_types()->module, names, values, 2),
             "tn_node_new(ir.IRModule)");
}

static void read_features(void) {
  const char *off = getenv("TN_FUZZ_RT_OFF");
  if (off == NULL) return;
  static const struct {
    const char *name;
    unsigned bit;
  } table[] = {{"odd_names", F_ODD_NAMES},     {"tuple1", F_TUPLE1},
               {"extreme", F_EXTREME},         {"special_floats", F_SPECIAL_FLOATS},
               {"odd_strings", F_ODD_STRINGS}, {"raw_dtypes", F_RAW_DTYPES},
               {"empty_attrs", F_EMPTY_ATTRS}, {"shared_fns", F_SHARED_FNS}};
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
    if (strstr(off, table[i].name)) g_features &= ~table[i].bit;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static TnObject *ops; /* lives as long as the process */
  if (ops == NULL) {
    read_features();
    ops = tn_ir_op_list();
    fz_must(ops, "tn_ir_op_list");
  }
  int64_t live = tn_object_live_count();
  G g = {data, size, 0,
         g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release),
         g_ptr_array_new(), g_hash_table_new(NULL, NULL),
         g_hash_table_new(NULL, NULL), 0, ops, 64};
  TnObject *mod = gen_module(&g);
  /* The property is for well-formed IR: the builders are not all of the
   * checks (the generator also assembles modules field by field). */
  if (mod && tn_ir_well_formed(mod) != 0) {
    fz_expect_error("the well-formedness check", "tn_ir_well_formed");
    mod = NULL;
  }
  if (mod) {
    TnObject *text = fz_round_trip(mod, "the generated module");
    TnObject *again = tn_ir_parse(fz_str(text), (size_t)((TnStringObj *)text)->size);
    fz_must(again, "parsing the printed module");
    TnObject *text2 = tn_ir_astext(again, 1);
    fz_must(text2, "printing the parsed module");
    const TnStringObj *a = (const TnStringObj *)text;
    const TnStringObj *b = (const TnStringObj *)text2;
    if (a->size != b->size || memcmp(a->data, b->data, (size_t)a->size) != 0) {
      fprintf(stderr, "printing the parsed module gives other text:\n"
              "---- first ----\n%s\n---- second ----\n%s\n",
              fz_str(text), fz_str(text2));
      abort();
    }
    tn_object_release(text2);
    tn_object_release(again);
    tn_object_release(text);
  }
  g_ptr_array_free(g.scope, TRUE);
  g_hash_table_destroy(g.once);
  g_hash_table_destroy(g.used);
  g_ptr_array_free(g.pool, TRUE);
  fz_check_leaks(live);
  return 0;
}
