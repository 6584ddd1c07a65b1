/*
 * aot.c: ahead-of-time compilation of a typed, fused IRModule to C that
 * runs with no heap, no look-ups and no boxed values.
 *
 * The module's "main" is lowered to a kernel program exactly as the host
 * executor lowers it (kernel/program.c), so the generated code calls the
 * same crt kernels with the same parameters and computes the same bits.
 * Where every tensor lives is the kernel layer's one plan (kernel/plan.c,
 * the executor's too): each value gets a home (an input or output buffer
 * of the application, a constant array, or a buffer in a workspace pool),
 * views share their base's buffer and an operator that may run in place
 * takes over the buffer of an input that dies at it. With the default
 * options the executor's plan is taken as it is; other options (pools,
 * limits, alignment, I/O in the pool) plan again. The result is a set of
 * files (the Model Library Format's C part, its header and metadata) as a
 * tn.Map from path to text, so every binding can write an archive and
 * nothing here touches the file system.
 */
#include "codegen/aot_internal.h"

#include <math.h>


#define WHO TN_AOT_WHO
#define DEFAULT_POOL "global_workspace"


static void opts_clear(Opts *o) {
  g_free(o->name);
  g_free(o->const_section);
  g_free(o->ws_section);
  if (o->pool_names) g_ptr_array_free(o->pool_names, TRUE);
  if (o->pool_limits) g_array_free(o->pool_limits, TRUE);
  if (o->pool_kinds) g_array_free(o->pool_kinds, TRUE);
  if (o->devices) g_ptr_array_free(o->devices, TRUE);
  if (o->device_of) g_hash_table_destroy(o->device_of);
}

static bool is_ident(const char *s) {
  if (!s || !(g_ascii_isalpha(*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!(g_ascii_isalnum(*s) || *s == '_')) return false;
  return true;
}

/* A C identifier from any text: lower case, other characters as '_', a
 * leading digit prefixed. */
/* What a lower-case identifier may not be in the generated C: C11's
 * keywords, C23's new ones, and the macros and names of the headers a
 * firmware project includes beside it (<stdbool.h>, <errno.h>,
 * <assert.h>, <stdalign.h>, <stdnoreturn.h>, <threads.h>, <complex.h>,
 * <stddef.h>, <iso646.h>, <stdio.h>). Such a name gets a trailing '_'. */
static const char *const g_c_reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while",
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr",
    "static_assert", "thread_local", "true", "typeof", "typeof_unqual",
    "errno", "assert", "noreturn", "complex", "imaginary", "offsetof",
    "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or",
    "or_eq", "xor", "xor_eq", "stdin", "stdout", "stderr", "null", NULL};

char *tn__aot_c_ident(const char *s) {
  GString *o = g_string_new(NULL);
  /* a leading digit, and a leading "__" (reserved everywhere) */
  if (!s || !*s || g_ascii_isdigit(*s) || (s[0] == '_' && s[1] == '_'))
    g_string_append_c(o, 't');
  for (; s && *s; s++)
    g_string_append_c(o, g_ascii_isalnum(*s) ? g_ascii_tolower(*s) : '_');
  for (const char *const *k = g_c_reserved; *k; k++)
    if (strcmp(o->str, *k) == 0) {
      g_string_append_c(o, '_');
      break;
    }
  return g_string_free(o, FALSE);
}

const TnAny *tn__aot_opt(const TnObject *o, const char *key) {
  if (o == NULL) return NULL;
  TnAny k = tn_any_cstr(key);
  const TnAny *v = tn_map_find(o, &k);
  return v && v->type_index != TN_TYPE_NONE ? v : NULL;
}

static int opt_bool(const TnObject *o, const char *key, bool *out) {
  const TnAny *v = tn__aot_opt(o, key);
  int b = 0;
  if (v == NULL) return 0;
  if (v->type_index != TN_TYPE_BOOL && v->type_index != TN_TYPE_INT)
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option '%s' expects a bool, "
                             "got %s", key, tn_any_type_key(v));
  tn_any_as_bool(v, &b);
  *out = b != 0;
  return 0;
}

int tn__aot_opt_str(const TnObject *o, const char *key, const char **out) {
  const TnAny *v = tn__aot_opt(o, key);
  if (v == NULL) return 0;
  if (tn_any_as_str(v, out, NULL)) {
    tn_error_set_raised(NULL);
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option '%s' expects a str, "
                             "got %s", key, tn_any_type_key(v));
  }
  return 0;
}

static int opt_int(const TnObject *o, const char *key, int64_t *out) {
  const TnAny *v = tn__aot_opt(o, key);
  if (v == NULL) return 0;
  if (v->type_index != TN_TYPE_INT)
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option '%s' expects an int, "
                             "got %s", key, tn_any_type_key(v));
  *out = v->v_int64;
  return 0;
}

bool tn__aot_is_list(const TnAny *v) {
  return v && (v->type_index == TN_TYPE_ARRAY || v->type_index == TN_TYPE_LIST);
}
bool tn__aot_is_map(const TnAny *v) {
  return v && (v->type_index == TN_TYPE_MAP || v->type_index == TN_TYPE_DICT);
}

static const char *const g_known[] = {
    "name", "alignment", "interface", "io_in_pool", "constants_in_pool",
    "pools", "devices", "constants_section", "workspace_section",
    "constants_align", "isa", "shrink_scratch", "parallel", NULL};

/* A linker section name: letters, digits, '_', '.' and '$', not starting
 * with a digit, at most 64 characters (".ext_flash", "model_weights"). */
static bool is_section(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || g_ascii_isdigit(s[0])) return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.' && *p != '$')
      return false;
  return true;
}

/* A pool's "accepts": the kinds of buffer it may hold (all by default). */
static int pool_kinds(const TnObject *pool, const char *name, uint32_t *out) {
  static const char *const kinds[] = {"intermediate", "input", "output",
                                      "scratch"};
  const TnAny *acc = tn__aot_opt(pool, "accepts");
  *out = acc ? 0 : UINT32_MAX;
  if (acc && !tn__aot_is_list(acc))
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option 'pools': 'accepts' "
                             "of pool '%s' expects a list of kinds", name);
  for (int64_t i = 0; acc && i < tn_array_size(acc->v_obj); i++) {
    const char *k = NULL;
    int found = -1;
    if (tn_any_as_str(tn_array_at(acc->v_obj, i), &k, NULL) == 0)
      for (int j = 0; j < 4; j++)
        if (strcmp(k, kinds[j]) == 0) found = j;
    tn_error_set_raised(NULL);
    if (found < 0)
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'pools': pool '%s' "
                               "accepts '%s', expected intermediate, input, "
                               "output or scratch", name, k ? k : "?");
    *out |= UINT32_C(1) << found;
  }
  return 0;
}

static int parse_opts(const TnObject *o, Opts *out) {
  out->align = 16;
  out->pool_names = g_ptr_array_new_with_free_func(g_free);
  out->pool_limits = g_array_new(FALSE, FALSE, sizeof(int64_t));
  out->pool_kinds = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  out->devices = g_ptr_array_new_with_free_func(g_free);
  out->device_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                         NULL);
  if (o && !tn_object_is_instance(o, TN_TYPE_MAP) &&
      !tn_object_is_instance(o, TN_TYPE_DICT))
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "options must be a map, got "
                             "%s", tn_object_type_key(o));
  for (int64_t p = o ? tn_map_next(o, 0, NULL, NULL) : -1; p >= 0;
       p = tn_map_next(o, p + 1, NULL, NULL)) {
    const TnAny *k;
    tn_map_next(o, p, &k, NULL);
    const char *ks = NULL;
    if (tn_any_as_str(k, &ks, NULL)) {
      tn_error_set_raised(NULL);
      return tn_error_raise_in(TN_ERR_TYPE, WHO, "option keys must be str, "
                               "got %s", tn_any_type_key(k));
    }
    bool known = false;
    for (int i = 0; g_known[i]; i++) known |= strcmp(ks, g_known[i]) == 0;
    if (!known)
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "unknown option '%s'", ks);
  }
  const char *name = "default", *iface = "c";
  if (tn__aot_opt_str(o, "name", &name) || tn__aot_opt_str(o, "interface", &iface) ||
      opt_int(o, "alignment", &out->align) ||
      opt_bool(o, "io_in_pool", &out->io_in_pool) ||
      opt_bool(o, "constants_in_pool", &out->consts_in_pool))
    return -1;
  out->shrink_scratch = true;
  if (opt_bool(o, "shrink_scratch", &out->shrink_scratch) ||
      opt_bool(o, "parallel", &out->parallel))
    return -1;
  if (!is_ident(name) || strlen(name) > 64)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'name': '%s' is not "
                             "a C identifier of at most 64 characters", name);
  out->name = g_ascii_strdown(name, -1);
  if (out->align < 1 || out->align > 4096 ||
      (out->align & (out->align - 1)) != 0)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'alignment': %"
                             PRId64 " is not a power of two up to 4096",
                             out->align);
  const char *csec = NULL, *wsec = NULL;
  out->const_align = -1; /* absent: the alignment */
  if (tn__aot_opt_str(o, "constants_section", &csec) ||
      tn__aot_opt_str(o, "workspace_section", &wsec) ||
      opt_int(o, "constants_align", &out->const_align))
    return -1;
  if (csec && !is_section(csec))
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'constants_section': "
                             "'%s' is not a section name (letters, digits, "
                             "'_', '.', '$', not starting with a digit, at "
                             "most 64 characters)", csec);
  if (wsec && !is_section(wsec))
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'workspace_section': "
                             "'%s' is not a section name (letters, digits, "
                             "'_', '.', '$', not starting with a digit, at "
                             "most 64 characters)", wsec);
  if (out->const_align == -1) out->const_align = out->align;
  else if (out->const_align < 1 || out->const_align > 4096 ||
           (out->const_align & (out->const_align - 1)) != 0)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'constants_align': %"
                             PRId64 " is not a power of two up to 4096",
                             out->const_align);
  const char *isa = "portable";
  if (tn__aot_opt_str(o, "isa", &isa)) return -1;
  if (strcmp(isa, "portable") == 0) out->isa = TN_CRT_ISA_PORTABLE;
  else if (strcmp(isa, "arm_dsp") == 0) out->isa = TN_CRT_ISA_ARM_DSP;
  else
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'isa': expected "
                             "'portable' or 'arm_dsp', got '%s'", isa);
  out->const_section = csec ? g_strdup(csec) : NULL;
  out->ws_section = wsec ? g_strdup(wsec) : NULL;
  gchar **ifs = g_strsplit(iface, ",", -1);
  int rc = 0;
  for (gchar **i = ifs; *i && rc == 0; i++) {
    if (strcmp(*i, "rust") == 0) out->rust = true;
    else if (strcmp(*i, "c") != 0)
      rc = tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'interface': '%s' is "
                             "not one of c, rust", *i);
  }
  g_strfreev(ifs);
  if (rc) return -1;
  const TnAny *pools = tn__aot_opt(o, "pools");
  if (pools && !tn__aot_is_list(pools))
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option 'pools' expects a "
                             "list of {name, limit}, got %s",
                             tn_any_type_key(pools));
  for (int64_t i = 0; pools && i < tn_array_size(pools->v_obj); i++) {
    const TnAny *p = tn_array_at(pools->v_obj, i);
    const char *pn = NULL;
    int64_t limit = 0;
    if (!tn__aot_is_map(p) || tn__aot_opt_str(p->v_obj, "name", &pn) ||
        opt_int(p->v_obj, "limit", &limit) || !is_ident(pn) || limit < 0) {
      tn_error_set_raised(NULL);
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'pools': entry %"
                               PRId64 " must be {name: a C identifier, "
                               "limit: bytes >= 0}", i);
    }
    for (guint j = 0; j < out->pool_names->len; j++)
      if (g_ascii_strcasecmp(pn, g_ptr_array_index(out->pool_names, j)) == 0)
        return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'pools': pool "
                                 "'%s' is named twice", pn);
    uint32_t kinds = 0;
    if (pool_kinds(p->v_obj, pn, &kinds)) return -1;
    g_ptr_array_add(out->pool_names, g_ascii_strdown(pn, -1));
    g_array_append_val(out->pool_limits, limit);
    g_array_append_val(out->pool_kinds, kinds);
  }
  if (out->pool_names->len > TN_CRT_MAX_POOLS)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'pools': at most %d "
                             "pools", TN_CRT_MAX_POOLS);
  if (out->pool_names->len == 0) {
    int64_t zero = 0;
    uint32_t all = UINT32_MAX;
    g_ptr_array_add(out->pool_names, g_strdup(DEFAULT_POOL));
    g_array_append_val(out->pool_limits, zero);
    g_array_append_val(out->pool_kinds, all);
  }
  const TnAny *devs = tn__aot_opt(o, "devices");
  if (devs && !tn__aot_is_map(devs))
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "option 'devices' expects a "
                             "map of device name to operator names, got %s",
                             tn_any_type_key(devs));
  for (int64_t p = devs ? tn_map_next(devs->v_obj, 0, NULL, NULL) : -1;
       p >= 0; p = tn_map_next(devs->v_obj, p + 1, NULL, NULL)) {
    const TnAny *k, *v;
    tn_map_next(devs->v_obj, p, &k, &v);
    const char *dn = NULL;
    if (tn_any_as_str(k, &dn, NULL) || !is_ident(dn) || !tn__aot_is_list(v)) {
      tn_error_set_raised(NULL);
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'devices': each "
                               "entry maps a C identifier to a list of "
                               "operator names");
    }
    g_ptr_array_add(out->devices, g_ascii_strdown(dn, -1));
    for (int64_t i = 0; i < tn_array_size(v->v_obj); i++) {
      const char *op = NULL;
      if (tn_any_as_str(tn_array_at(v->v_obj, i), &op, NULL)) {
        tn_error_set_raised(NULL);
        return tn_error_raise_in(TN_ERR_TYPE, WHO, "option 'devices': "
                                 "device '%s' lists a non-string operator",
                                 dn);
      }
      TnObject *known = tn_ir_op_find(op);
      if (known == NULL)
        return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'devices': "
                                 "device '%s' lists '%s', which is not a "
                                 "registered operator", dn, op);
      tn_object_release(known);
      if (g_hash_table_contains(out->device_of, op))
        return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'devices': "
                                 "operator '%s' is given to two devices", op);
      g_hash_table_insert(out->device_of, g_strdup(op),
                          GINT_TO_POINTER(out->devices->len));
    }
  }
  if (out->devices->len > TN_CRT_MAX_POOLS)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "option 'devices': at most "
                             "%d devices", TN_CRT_MAX_POOLS);
  return 0;
}

void tn__aot_io_clear(gpointer p) { g_free(((Io *)p)->name); }

/* Names, scales and zero points of inputs and outputs from the module's
 * "inputs"/"outputs" attributes (what the importers record), else
 * input_<i> / output[<i>]. */
int tn__aot_io_info(const Gen *g, bool input, int32_t i, Io *io,
                   GHashTable *used) {
  const TnObject *attrs = ((const TnIrModule *)g->mod)->attrs;
  const TnAny *list = tn__aot_opt(attrs, input ? "inputs" : "outputs");
  const TnAny *it = tn__aot_is_list(list) && i < tn_array_size(list->v_obj)
                        ? tn_array_at(list->v_obj, i)
                        : NULL;
  const char *nm = NULL;
  if (tn__aot_is_map(it)) {
    tn__aot_opt_str(it->v_obj, "name", &nm);
    const TnAny *sc = tn__aot_opt(it->v_obj, "scale"), *zp = tn__aot_opt(it->v_obj,
                                                         "zero_point");
    if (tn__aot_is_list(sc) && tn_array_size(sc->v_obj) == 1 && tn__aot_is_list(zp) &&
        tn_array_size(zp->v_obj) == 1) {
      io->scale = NAN;
      io->zero_point = INT64_MIN;
      tn_any_as_float(tn_array_at(sc->v_obj, 0), &io->scale);
      tn_any_as_int(tn_array_at(zp->v_obj, 0), &io->zero_point);
      tn_error_set_raised(NULL);
      /* they reach metadata.json and the descriptor's int32 field: a
       * scale that JSON cannot spell or a zero point no kernel takes is
       * the attribute's fault, named here */
      if (!(isfinite(io->scale) && io->scale > 0) ||
          io->zero_point < -INT32_MAX || io->zero_point > INT32_MAX)
        return tn_error_raise_in(TN_ERR_VALUE, WHO, "module attribute '%s'[%d]"
                                 ": scale %.9g and zero point %" PRId64 "; "
                                 "expected a positive finite scale and a "
                                 "zero point within +-2147483647",
                                 input ? "inputs" : "outputs", i, io->scale,
                                 io->zero_point);
    }
    tn_error_set_raised(NULL);
  }
  if (nm == NULL && input) nm = g_ptr_array_index(g->v.inputs, i);
  char *base;
  if (nm && *nm) base = tn__aot_c_ident(nm);
  else if (input) base = g_strdup_printf("input_%d", i);
  else base = g->v.outputs->len - g->states->len == 1 ? g_strdup("output")
                                     : g_strdup_printf("output%d", i);
  char *name = g_strdup(base);
  for (int n = 1; g_hash_table_contains(used, name); n++) {
    g_free(name);
    name = g_strdup_printf("%s_%d", base, n);
  }
  g_free(base);
  g_hash_table_add(used, name);
  io->name = g_strdup(name);
  return 0;
}

/* ---- the plan ------------------------------------------------------------------- */

bool tn__aot_in_place(Gen *g, int32_t s) {
  return tn__kernel_plan_in_place(&g->pin, &g->kp, s);
}

/* Whether the options ask for the plan the executor made: one workspace
 * pool without a limit taking every buffer, the default alignment,
 * inputs and outputs in the application's own buffers, and the portable
 * kernels' scratch sizes (the executor's). */
static bool executor_plan_fits(const Gen *g) {
  return g->o.pool_names->len == 1 &&
         g_array_index(g->o.pool_limits, int64_t, 0) == 0 &&
         (g_array_index(g->o.pool_kinds, uint32_t, 0) & 15u) == 15u &&
         g->o.align == TN_KERN_PLAN_ALIGN && !g->o.io_in_pool &&
         g->o.isa == TN_CRT_ISA_PORTABLE && g->states->len == 0;
}

/* The interface's inputs and outputs, then the plan. */
static int analyse(Gen *g) {
  GHashTable *used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  /* a stateful model's states are its last parameters and results */
  for (guint i = 0; i < g->v.inputs->len - g->states->len; i++) {
    Io io = {0};
    io.buf = -1;
    if (tn__aot_io_info(g, true, (int32_t)i, &io, used)) {
      g_hash_table_destroy(used);
      return -1;
    }
    g_array_append_val(g->ins, io);
  }
  for (guint i = 0; i < g->v.outputs->len - g->states->len; i++) {
    Io io = {0};
    io.buf = -1;
    if (tn__aot_io_info(g, false, (int32_t)i, &io, used)) {
      g_hash_table_destroy(used);
      return -1;
    }
    g_array_append_val(g->outs, io);
  }
  g_hash_table_destroy(used);
  if (g->ins->len > TN_CRT_MAX_IO || g->outs->len > TN_CRT_MAX_IO)
    return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, WHO, "the model has %u "
                             "inputs and %u outputs; the firmware API holds "
                             "at most %d of each", g->ins->len, g->outs->len,
                             TN_CRT_MAX_IO);
  for (int32_t v = 0; v < g->nvalues; v++) {
    const TnKernValue *x = value(g, v);
    if (x->kind != TN_KV_INPUT || x->index >= (int32_t)g->ins->len) continue;
    Io *io = &g_array_index(g->ins, Io, x->index);
    io->type = x->type, io->nbytes = x->nbytes;
  }
  for (guint i = 0; i < g->outs->len; i++) {
    int32_t ov = g_array_index(g->v.outputs, int32_t, i);
    Io *io = &g_array_index(g->outs, Io, i);
    io->type = value(g, ov)->type, io->nbytes = value(g, ov)->nbytes;
  }
  const TnKernPlan *exec;
  TnKernPlanInput same;
  if (executor_plan_fits(g) && tn__program_plan(g->prog, &exec, &same) == 0) {
    tn__kernel_plan_copy(&g->kp, exec);
  } else {
    int32_t np = (int32_t)g->o.pool_names->len;
    TnPlanPool pools[TN_CRT_MAX_POOLS];
    for (int32_t p = 0; p < np; p++) {
      pools[p].name = g_ptr_array_index(g->o.pool_names, p);
      pools[p].limit = g_array_index(g->o.pool_limits, int64_t, p);
    }
    const char **in_names = g_new0(const char *, g->ins->len + 1);
    const char **out_names = g_new0(const char *, g->outs->len + 1);
    for (guint i = 0; i < g->ins->len; i++)
      in_names[i] = g_array_index(g->ins, Io, i).name;
    for (guint i = 0; i < g->outs->len; i++)
      out_names[i] = g_array_index(g->outs, Io, i).name;
    TnKernPlanOptions po = {
        .align = g->o.align, .io_in_pool = g->o.io_in_pool,
        .isa = g->o.isa, .less_scratch = g->o.shrink_scratch,
        .nstates = (int32_t)g->states->len, .npools = np,
        .pools = pools,
        .pool_kinds = (const uint32_t *)(void *)g->o.pool_kinds->data,
        .in_names = in_names, .out_names = out_names, .who = WHO,
        .accepts_hint = " (option 'pools', 'accepts')"};
    int rc = tn__kernel_plan(&g->pin, &po, &g->kp);
    g_free(in_names), g_free(out_names);
    if (rc) return -1;
  }
  g->home = g->kp.home, g->bufs = g->kp.bufs, g->scratch = g->kp.scratch;
  g->plan = g->kp.plan, g->res = g->kp.res;
  for (guint i = 0; i < g->ins->len; i++)
    g_array_index(g->ins, Io, i).buf = g->kp.in_buf[i];
  for (guint i = 0; i < g->outs->len; i++)
    g_array_index(g->outs, Io, i).buf = g->kp.out_buf[i];
  return 0;
}

/* The pools' sizes checked, and the constants laid out in one constant
 * pool when asked. */
static int layout(Gen *g) {
  for (guint p = 0; p < g->o.pool_names->len; p++)
    if (g->res.size[p] > UINT32_MAX)
      return tn_error_raise_in(TN_ERR_VALUE, WHO, "pool '%s' would need %"
                               PRId64 " bytes, more than 4 GiB",
                               (const char *)g_ptr_array_index(
                                   g->o.pool_names, p),
                               g->res.size[p]);
  g->const_off = g_new0(int64_t, g->v.consts->len + 1);
  g->const_used = g_new0(bool, g->v.consts->len + 1);
  for (int32_t s = 0; s < g->nsteps; s++)
    for (int32_t i = 0; i < step(g, s)->k.nin; i++) {
      const TnKernValue *x = value(g, root(g, step(g, s)->in[i]));
      if (x->kind == TN_KV_CONST) g->const_used[x->index] = true;
    }
  for (guint i = 0; i < g->v.outputs->len; i++) {
    const TnKernValue *x = value(g, root(g, g_array_index(g->v.outputs,
                                                         int32_t, i)));
    if (x->kind == TN_KV_CONST) g->const_used[x->index] = true;
  }
  for (guint c = 0; c < g->v.consts->len; c++) {
    if (!g->const_used[c]) continue;
    int64_t nb = tn_tensor_nbytes(g_ptr_array_index(g->v.consts, c));
    g->const_off[c] = g->const_pool;
    g->const_pool += (nb + g->o.align - 1) / g->o.align * g->o.align;
    g->const_bytes += nb;
  }
  return 0;
}

/* ---- entry ------------------------------------------------------------------- */

static void gen_clear(Gen *g) {
  opts_clear(&g->o);
  tn_object_release(g->prog);
  tn__kernel_plan_clear(&g->kp);
  tn__aot_states_clear(g);
  if (g->ins) g_array_free(g->ins, TRUE);
  if (g->outs) g_array_free(g->outs, TRUE);
  g_free(g->const_off);
  g_free(g->const_used);
  if (g->fn_names) g_strfreev(g->fn_names);
  g_free(g->M);
}

static int add_file(TnObject **files, const char *path, GString *text) {
  TnAny v = tn_any_obj(tn_string_new(text->str, text->len));
  TnAny k = tn_any_cstr(path);
  int rc = v.v_obj ? tn_map_set(files, &k, &v) : -1;
  tn_any_clear(&v);
  return rc;
}

TN_API TnObject *tn_codegen_aot(const TnObject *mod, const TnObject *options) {
  if (tn__check_object(mod, TN_IR->module, WHO, "mod")) return NULL;
  Gen g = {0};
  TnObject *result = NULL;
  g.mod = mod;
  g.ins = g_array_new(FALSE, FALSE, sizeof(Io));
  g.outs = g_array_new(FALSE, FALSE, sizeof(Io));
  g_array_set_clear_func(g.ins, tn__aot_io_clear);
  g_array_set_clear_func(g.outs, tn__aot_io_clear);
  if (parse_opts(options, &g.o)) goto done;
  g.M = g_ascii_strup(g.o.name, -1);
  TnObject *main_fn = tn_ir_module_get(mod, "main");
  if (main_fn == NULL) goto done;
  g.prog = tn_program_new(mod, main_fn);
  tn_object_release(main_fn);
  if (g.prog == NULL || tn__program_view(g.prog, &g.v)) goto done;
  g.nsteps = (int32_t)g.v.steps->len;
  g.nvalues = (int32_t)g.v.values->len;
  g.steps = (const TnKernStep *)(void *)g.v.steps->data;
  g.vals = (const TnKernValue *)(void *)g.v.values->data;
  if (tn__program_plan(g.prog, &(const TnKernPlan *){NULL}, &g.pin))
    goto done;
  for (int32_t s = 0; s < g.nsteps; s++)
    if (step(&g, s)->k.compute)
      (void)tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, step(&g, s)->op,
                              "the operator has only a host compute "
                              "function, so it cannot be compiled to C");
  if (tn_error_peek_raised()) goto done;
  if (tn__aot_states(&g) || analyse(&g) || tn__aot_states_plan(&g) ||
      layout(&g))
    goto done;
  g.fn_names = g_new0(char *, g.nsteps + 1);
  for (int32_t s = 0; s < g.nsteps; s++) g.fn_names[s] = tn__aot_step_name(&g, s);

  GString *lib0 = g_string_new(NULL), *lib1 = g_string_new(NULL),
          *hdr = g_string_new(NULL), *meta = g_string_new(NULL);
  g_string_append_printf(lib0, "/* %s_lib0.c: the constants and operators "
                         "of model '%s' (generated by tvmnode %s). */\n",
                         g.o.name, g.o.name, tn_version());
  g_string_append_printf(lib0, tn__aot_preamble, g.o.name);
  g_string_append_c(lib0, '\n');
  tn__aot_emit_constants(&g, lib0, false);
  int rc = tn__aot_emit_operators(&g, lib0);
  if (tn__aot_params(&g)) g.model_id = tn__aot_model_id(&g, lib0);
  g_string_append_printf(lib1, "/* %s_lib1.c: the entry point and descriptor "
                         "of model '%s' (generated by tvmnode %s). */\n",
                         g.o.name, g.o.name, tn_version());
  g_string_append_printf(lib1, tn__aot_preamble, g.o.name);
  g_string_append_c(lib1, '\n');
  tn__aot_emit_constants(&g, lib1, true);
  tn__aot_emit_pool_data(&g, lib1);
  tn__aot_emit_run(&g, lib1);
  tn__aot_emit_descriptor(&g, lib1);
  tn__aot_emit_params_layout(&g, lib1);
  tn__aot_header(&g, hdr);
  GPtrArray *sources = tn__aot_runtime_sources(&g);
  tn__aot_metadata(&g, meta, sources);
  TnObject *files = tn_map_new(NULL, NULL, 0), *srcs = tn_array_new(NULL, 0);
  char *p0 = g_strdup_printf("codegen/host/src/%s_lib0.c", g.o.name);
  char *p1 = g_strdup_printf("codegen/host/src/%s_lib1.c", g.o.name);
  char *ph = g_strdup_printf("codegen/host/include/tvmgen_%s.h", g.o.name);
  if (files == NULL || srcs == NULL) rc = -1; /* the MemoryError is raised */
  if (rc == 0)
    rc = add_file(&files, p0, lib0) || add_file(&files, p1, lib1) ||
         add_file(&files, ph, hdr) ||
         add_file(&files, "metadata.json", meta);
  if (rc == 0 && g.o.rust) {
    GString *rs = g_string_new(NULL);
    char *pr = g_strdup_printf("codegen/host/src/tvmgen_%s.rs", g.o.name);
    rc = tn__aot_rust(&g, rs) || add_file(&files, pr, rs);
    g_free(pr);
    g_string_free(rs, TRUE);
  }
  for (guint i = 0; rc == 0 && i < sources->len; i++) {
    const char *sp = g_ptr_array_index(sources, i);
    TnAny v = tn_any_obj(tn_string_new(sp, strlen(sp)));
    rc = tn_array_push(&srcs, &v);
    tn_any_clear(&v);
  }
  g_free(p0), g_free(p1), g_free(ph);
  g_ptr_array_free(sources, TRUE);
  g_string_free(lib0, TRUE), g_string_free(lib1, TRUE);
  g_string_free(hdr, TRUE), g_string_free(meta, TRUE);
  TnObject *pm = rc == 0 ? tn__aot_plan_map(&g) : NULL;
  TnObject *consts = pm ? tn_map_new(NULL, NULL, 0) : NULL;
  for (guint c = 0; consts && rc == 0 && c < g.v.consts->len; c++) {
    if (!g.const_used[c]) continue;
    char key[32];
    g_snprintf(key, sizeof key, "const%u", c);
    TnAny k = tn_any_cstr(key), v = tn_any_obj(g_ptr_array_index(g.v.consts, c));
    if (tn_map_set(&consts, &k, &v)) rc = -1;
  }
  /* Each part goes into the result or is released, exactly once, whichever
   * step failed (a file, the metadata, the plan, a constant or the result
   * itself): tn__aot_map_put takes its value even when it fails. */
  static const char *const keys[] = {"files", "runtime_sources", "plan",
                                     "constants"};
  TnObject *parts[] = {files, srcs, pm, consts};
  result = rc == 0 && pm && consts ? tn_map_new(NULL, NULL, 0) : NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++) {
    if (result == NULL) {
      tn_object_release(parts[i]);
    } else if (tn__aot_map_put(&result, keys[i], tn_any_obj(parts[i]))) {
      tn_object_release(result);
      result = NULL;
    }
  }
done:
  gen_clear(&g);
  return result;
}

/* "codegen.AOT"(mod, options) */
static int aot_packed(void *self, const TnAny *args, int32_t nargs,
                      TnAny *ret) {
  (void)self;
  if (nargs < 1 || nargs > 2 || !tn_any_is_object(&args[0]))
    return tn_error_raise_in(TN_ERR_TYPE, "codegen.AOT", "takes (mod, "
                             "options=None), got %d arguments", nargs);
  const TnObject *o = nargs > 1 && tn_any_is_object(&args[1]) ? args[1].v_obj
                                                              : NULL;
  if (nargs > 1 && args[1].type_index != TN_TYPE_NONE && o == NULL)
    return tn_error_raise_in(TN_ERR_TYPE, "codegen.AOT", "options must be a "
                             "map, got %s", tn_any_type_key(&args[1]));
  TnObject *r = tn_codegen_aot(args[0].v_obj, o);
  if (r == NULL) return -1;
  *ret = tn_any_obj(r);
  return 0;
}

void tn__codegen_init(void) {
  TnObject *f = tn_func_new(aot_packed, NULL, NULL);
  TN__INIT_CHECK(f != NULL && tn_func_register("codegen.AOT", f, 0) == 0);
  tn_object_release(f);
}

