/*
 * params.c: the crt's kernel forms and their parameter structs, described
 * from tvmnode/crt/calls.h's lists, and the one writer that turns a filled
 * parameter struct into C. Each struct's description comes from the same
 * field list as the struct (TN_CRT_FIELDS_<Type>), so the `static const`
 * initialiser the code generator writes holds every field the kernel reads,
 * with the very values the host executor passes: there is no second
 * spelling of a struct to forget a field in. Designated initialisers keep
 * generated code readable; floats are printed so that they read back to
 * the same bits, and zero fields are left to the initialiser's zeroing.
 */
#include "kernel/kernel_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>

/* ---- the descriptions ----------------------------------------------------------- */

#define KIND(x)                                                        \
  _Generic((x), int32_t: TN_PK_I32, uint32_t: TN_PK_U32, float: TN_PK_F32, \
           int8_t: TN_PK_I8, uint8_t: TN_PK_U8, int16_t: TN_PK_I16)

#define FIELD(T, shape, ...) FIELD_##shape(T, __VA_ARGS__)
#define FIELD_S(T, type, name) \
  {#name, offsetof(T, name), 'S', KIND(((T *)0)->name), 1, NULL, NULL},
#define FIELD_A(T, type, name, n)                                       \
  {#name, offsetof(T, name), 'A', KIND(((T *)0)->name[0]), (n), NULL,   \
   NULL},
#define FIELD_P(T, type, name, count)                                   \
  {#name, offsetof(T, name), 'P', KIND(((T *)0)->name[0]), 0, #count,   \
   NULL},
#define FIELD_N(T, type, name) \
  {#name, offsetof(T, name), 'N', TN_PK_I32, 1, NULL, &tn__param_##type},

#define DESCRIBE(T)                                                      \
  static const TnParamField fields_##T[] = {TN_CRT_FIELDS_##T(FIELD, T)}; \
  const TnParamDesc tn__param_##T = {                                    \
      #T, sizeof(T), fields_##T,                                         \
      (int32_t)(sizeof fields_##T / sizeof fields_##T[0])};
TN_CRT_PARAM_TYPES(DESCRIBE)
#undef DESCRIBE

#define FORM(form, T, file)                                              \
  {#form, "tn_crt_" #form, "tn_crt_call_" #form, tn_crt_call_##form,     \
   &tn__param_##T, file},
const TnKernForm tn__kernel_forms[TN_KF_COUNT] = {TN_CRT_CALLS(FORM)};
#undef FORM

void *tn__kernel_use(TnKernCall *k, TnKernFormId id, size_t extra) {
  const TnKernForm *f = &tn__kernel_forms[id];
  k->form = f;
  k->run = f->run;
  k->kernel = f->kernel;
  g_free(k->params);
  k->params = g_malloc0(f->params->size + extra);
  return k->params;
}

/* ---- reading fields ------------------------------------------------------------- */

static size_t kind_size(TnParamKind k) {
  return k == TN_PK_I8 || k == TN_PK_U8 ? 1 : k == TN_PK_I16 ? 2 : 4;
}

/* Element i of kind k at base, as int64 (floats are written apart). */
static int64_t int_at(const void *base, TnParamKind k, int64_t i) {
  const char *p = (const char *)base + (size_t)i * kind_size(k);
  int32_t s;
  uint32_t u;
  switch (k) {
  case TN_PK_I8: return *(const int8_t *)p;
  case TN_PK_U8: return *(const uint8_t *)p;
  case TN_PK_I16: {
    int16_t h;
    memcpy(&h, p, 2);
    return h;
  }
  case TN_PK_U32: memcpy(&u, p, 4); return u;
  default: memcpy(&s, p, 4); return s;
  }
}

/* The int32 scalar field `name` of a struct described by d. */
static int32_t count_of(const TnParamDesc *d, const void *p, const char *name) {
  for (int32_t i = 0; i < d->nfields; i++)
    if (strcmp(d->fields[i].name, name) == 0)
      return (int32_t)int_at((const char *)p + d->fields[i].offset, TN_PK_I32,
                             0);
  g_assert_not_reached(); /* calls.h names a field of the same struct */
  return 0;
}

/* ---- writing C ---------------------------------------------------------------------- */

void tn__emit_f32(GString *s, float v) {
  if (isinf(v)) {
    g_string_append(s, v < 0 ? "-TVMGEN_INF" : "TVMGEN_INF");
    return;
  }
  if (isnan(v)) {
    g_string_append(s, "TVMGEN_NAN");
    return;
  }
  char buf[48];
  g_snprintf(buf, sizeof buf, "%.9g", (double)v);
  g_string_append(s, buf);
  if (!strpbrk(buf, ".e")) g_string_append(s, ".0");
  g_string_append_c(s, 'f');
}

static void value(GString *s, const void *base, TnParamKind k, int64_t i) {
  if (k == TN_PK_F32) {
    float f;
    memcpy(&f, (const char *)base + 4 * i, 4);
    tn__emit_f32(s, f);
    return;
  }
  int64_t x = int_at(base, k, i);
  if (k == TN_PK_U32) g_string_append_printf(s, "%" PRId64 "u", x);
  else if (x == INT32_MIN) g_string_append(s, "(-2147483647 - 1)");
  else g_string_append_printf(s, "%" PRId64, x);
}

static bool is_zero(const void *base, TnParamKind k, int64_t i) {
  if (k == TN_PK_F32) {
    float f;
    memcpy(&f, (const char *)base + 4 * i, 4);
    return f == 0 && !signbit(f);
  }
  return int_at(base, k, i) == 0;
}

/* "{a, b, ...}" of n elements, at least one ("{0}" for none). */
static void list(GString *s, const void *base, TnParamKind k, int64_t n) {
  g_string_append_c(s, '{');
  for (int64_t i = 0; i < n; i++) {
    if (i) g_string_append(s, i % 16 ? ", " : ",\n    ");
    value(s, base, k, i);
  }
  if (n == 0) g_string_append_c(s, '0');
  g_string_append_c(s, '}');
}

static const char *c_type(TnParamKind k) {
  static const char *names[] = {"int32_t", "uint32_t", "float", "int8_t",
                                "uint8_t", "int16_t"};
  return names[k];
}

/* First the arrays that pointer fields point to (named name_path_field),
 * depth first, so that the struct's initialiser can name them. */
static void pointees(GString *decls, const char *name, const TnParamDesc *d,
                     const void *p) {
  for (int32_t i = 0; i < d->nfields; i++) {
    const TnParamField *f = &d->fields[i];
    const char *at = (const char *)p + f->offset;
    char *sub = g_strdup_printf("%s_%s", name, f->name);
    if (f->shape == 'N') {
      pointees(decls, sub, f->nested, at);
    } else if (f->shape == 'P') {
      const void *v;
      memcpy(&v, at, sizeof v);
      int32_t n = count_of(d, p, f->count_field);
      if (v != NULL && n > 0) {
        g_string_append_printf(decls, "static const %s %s[%d] = ",
                               c_type(f->kind), sub, n);
        list(decls, v, f->kind, n);
        g_string_append(decls, ";\n");
      }
    }
    g_free(sub);
  }
}

static void initialiser(GString *s, const char *name, const TnParamDesc *d,
                        const void *p, int depth) {
  bool any = false;
  g_string_append_c(s, '{');
  for (int32_t i = 0; i < d->nfields; i++) {
    const TnParamField *f = &d->fields[i];
    const char *at = (const char *)p + f->offset;
    int64_t n = f->shape == 'A' ? f->count : 1;
    if (f->shape == 'A') /* trailing zeros are the initialiser's */
      while (n > 0 && is_zero(at, f->kind, n - 1)) n--;
    if (f->shape == 'P') {
      const void *v;
      memcpy(&v, at, sizeof v);
      n = v != NULL && count_of(d, p, f->count_field) > 0;
    } else if (f->shape == 'S') {
      n = !is_zero(at, f->kind, 0);
    }
    if (n == 0) continue;
    g_string_append_printf(s, "\n%*s.%s = ", 4 * (depth + 1), "", f->name);
    char *sub = g_strdup_printf("%s_%s", name, f->name);
    if (f->shape == 'N') initialiser(s, sub, f->nested, at, depth + 1);
    else if (f->shape == 'P') g_string_append(s, sub);
    else if (f->shape == 'A') list(s, at, f->kind, n);
    else value(s, at, f->kind, 0);
    g_string_append_c(s, ',');
    g_free(sub);
    any = true;
  }
  if (any) g_string_append_printf(s, "\n%*s}", 4 * depth, "");
  else g_string_append_c(s, '0'), g_string_append_c(s, '}');
}

void tn__emit_params(GString *decls, const char *name, const TnParamDesc *d,
                     const void *p) {
  pointees(decls, name, d, p);
  g_string_append_printf(decls, "static const %s %s = ", d->type, name);
  initialiser(decls, name, d, p, 0);
  g_string_append(decls, ";\n");
}

/* ---- kernel.Forms ------------------------------------------------------------------ */

/* kernel.Forms(): every form, as maps {form, kernel, symbol, source}: what
 * the tests check the generated code of each operator against. */
static int forms_packed(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self, (void)args;
  if (nargs != 0)
    return tn_error_raise_in(TN_ERR_TYPE, "kernel.Forms", "takes no "
                             "arguments, got %d", nargs);
  TnObject *list = tn_array_new(NULL, 0);
  int rc = list ? 0 : -1;
  for (int i = 0; rc == 0 && i < TN_KF_COUNT; i++) {
    const TnKernForm *f = &tn__kernel_forms[i];
    const char *kv[][2] = {{"form", f->form}, {"kernel", f->kernel},
                           {"symbol", f->symbol}, {"source", f->source}};
    TnObject *m = tn_map_new(NULL, NULL, 0);
    rc = m ? 0 : -1;
    for (size_t j = 0; rc == 0 && j < G_N_ELEMENTS(kv); j++) {
      TnAny k = tn_any_cstr(kv[j][0]);
      TnObject *s = tn_string_new(kv[j][1], strlen(kv[j][1]));
      TnAny v = s ? tn_any_obj(s) : tn_any_none();
      rc = s ? tn_map_set(&m, &k, &v) : -1;
      tn_any_clear(&k), tn_any_clear(&v);
    }
    if (rc == 0) {
      TnAny v = tn_any_obj(m);
      rc = tn_array_push(&list, &v);
      tn_any_clear(&v);
    } else if (m) {
      tn_object_release(m);
    }
  }
  if (rc) {
    if (list) tn_object_release(list);
    return -1;
  }
  *ret = tn_any_obj(list);
  return 0;
}

void tn__kernel_params_init(void) {
  TnObject *f = tn_func_new(forms_packed, NULL, NULL);
  TN__INIT_CHECK(f != NULL && tn_func_register("kernel.Forms", f, 0) == 0);
  tn_object_release(f);
}
