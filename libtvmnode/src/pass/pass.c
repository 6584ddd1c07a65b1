/*
 * pass.c: the pass infrastructure: Pass and PassInfo, PassContext (opt
 * level, checked config, required and disabled passes, instruments), the
 * current-context stack, Sequential, the pass registry, and the timing
 * instrument.
 *
 * A pass is a node holding a tn.Function, so passes written in any language
 * run side by side. Modules are never changed in place: a pass returns a new
 * module, and when it fails the error names the pass (the original error is
 * its cause) and the caller still has the module it started with.
 */
#include "pass/pass_internal.h"

#include <inttypes.h>

typedef struct {
  TnObject header;
  TnObject *name; /* tn.String */
  int64_t opt_level;
  TnObject *required; /* tn.Array of tn.String */
} PassInfo;

enum { KIND_MODULE = 0, KIND_FUNCTION = 1, KIND_SEQUENTIAL = 2 };

typedef struct {
  TnObject header;
  TnObject *info;   /* ir.PassInfo */
  int64_t kind;
  TnObject *func;   /* tn.Function, module and function passes */
  TnObject *passes; /* tn.Array of ir.Pass, sequentials */
} Pass;

typedef struct {
  TnObject header;
  int64_t opt_level;
  TnObject *config, *required, *disabled, *instruments;
} PassContext;

typedef struct {
  TnObject header;
  TnObject *name;
  TnObject *before, *after; /* tn.Function or NULL */
} Instrument;

static int32_t g_info_t, g_pass_t, g_ctx_t, g_instr_t;

static const TnFieldDesc info_fields[] = {
    TN_FIELD_STR(PassInfo, name, TN_FIELD_READONLY, NULL),
    TN_FIELD_INT(PassInfo, opt_level, TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(PassInfo, required, "tn.Array<tn.String>", TN_FIELD_READONLY,
                 "passes that must run first"),
};
static const TnFieldDesc pass_fields[] = {
    TN_FIELD_OBJ(Pass, info, "ir.PassInfo", TN_FIELD_READONLY, NULL),
    TN_FIELD_INT(Pass, kind, TN_FIELD_READONLY,
                 "0 module, 1 function, 2 sequential"),
    TN_FIELD_OBJ(Pass, func, "tn.Function", TN_FIELD_READONLY | TN_FIELD_OPTIONAL,
                 NULL),
    TN_FIELD_OBJ(Pass, passes, "tn.Array", TN_FIELD_READONLY | TN_FIELD_OPTIONAL,
                 NULL),
};
static const TnFieldDesc ctx_fields[] = {
    TN_FIELD_INT_D(PassContext, opt_level, 2, TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(PassContext, config, "tn.Map<tn.String, any>", TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(PassContext, required, "tn.Array<tn.String>", TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(PassContext, disabled, "tn.Array<tn.String>", TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(PassContext, instruments, "tn.Array<ir.PassInstrument>", TN_FIELD_READONLY, NULL),
};
static const TnFieldDesc instr_fields[] = {
    TN_FIELD_STR(Instrument, name, TN_FIELD_READONLY, NULL),
    TN_FIELD_OBJ(Instrument, before, "tn.Function",
                 TN_FIELD_READONLY | TN_FIELD_OPTIONAL, "before(mod, info)"),
    TN_FIELD_OBJ(Instrument, after, "tn.Function",
                 TN_FIELD_READONLY | TN_FIELD_OPTIONAL, "after(mod, info)"),
};

static const char *str(const TnObject *s) {
  return ((const TnStringObj *)s)->data;
}

static TnObject *retained(TnObject *o) {
  tn_object_retain(o);
  return o;
}

static TnObject *empty_array(void) { return tn_array_new(NULL, 0); }

/* A tn.Array of strings from `names` (an Array/List of strings, or NULL). */
static TnObject *string_array(TnObject *names, const char *who,
                              const char *what) {
  if (names == NULL) return empty_array();
  if (tn__check_object2(names, TN_TYPE_ARRAY, TN_TYPE_LIST, who, what))
    return NULL;
  for (int64_t i = 0; i < tn_array_size(names); i++) {
    const char *s;
    if (tn_any_as_str(tn_array_at(names, i), &s, NULL)) {
      tn_error_set_raised(NULL);
      tn_error_raise_in(TN_ERR_TYPE, who, "%s[%" PRId64
                        "] must be a pass name, got %s", what, i,
                        tn_any_type_key(tn_array_at(names, i)));
      return NULL;
    }
  }
  return retained(names);
}

static bool name_in(const TnObject *names, const char *name) {
  for (int64_t i = 0; names && i < tn_array_size(names); i++) {
    const char *s;
    if (tn_any_as_str(tn_array_at(names, i), &s, NULL) == 0 &&
        strcmp(s, name) == 0)
      return true;
  }
  return false;
}

/* ---- making passes --------------------------------------------------------- */

static TnObject *make_pass(const char *name, int32_t opt_level,
                           TnObject *required, int64_t kind, TnObject *func,
                           TnObject *passes, const char *who) {
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  if (func && tn__check_object(func, TN_TYPE_FUNCTION, who, "func"))
    return NULL;
  TnObject *req = string_array(required, who, "required");
  if (req == NULL) return NULL;
  TnObject *info = tn_node_alloc(g_info_t);
  TnObject *pass = info ? tn_node_alloc(g_pass_t) : NULL;
  if (pass == NULL) {
    tn_object_release(info);
    tn_object_release(req);
    return NULL;
  }
  PassInfo *pi = (PassInfo *)info;
  pi->name = tn_string_from_cstr(name);
  pi->opt_level = opt_level;
  pi->required = req;
  Pass *p = (Pass *)pass;
  p->info = info;
  p->kind = kind;
  p->func = retained(func);
  p->passes = retained(passes);
  return pass;
}

TN_API TnObject *tn_pass_module(const char *name, int32_t opt_level,
                                TnObject *required, TnObject *func) {
  if (func == NULL) return tn__raise_null("tn_pass_module", "func"), NULL;
  return make_pass(name, opt_level, required, KIND_MODULE, func, NULL,
                   "tn_pass_module");
}

TN_API TnObject *tn_pass_function(const char *name, int32_t opt_level,
                                  TnObject *required, TnObject *func) {
  if (func == NULL) return tn__raise_null("tn_pass_function", "func"), NULL;
  return make_pass(name, opt_level, required, KIND_FUNCTION, func, NULL,
                   "tn_pass_function");
}

TN_API TnObject *tn_pass_sequential(TnObject *const *passes, int32_t n,
                                    const char *name, int32_t opt_level) {
  const char *who = "tn_pass_sequential";
  if (n < 0 || (n > 0 && passes == NULL)) return tn__raise_null(who, "passes"), NULL;
  for (int32_t i = 0; i < n; i++)
    if (!tn_object_is_instance(passes[i], g_pass_t))
      return tn_error_raise_in(TN_ERR_TYPE, who,
                               "passes[%d] must be an ir.Pass, got %s", i,
                               tn_object_type_key(passes[i])),
             NULL;
  TnObject *arr = tn__ir_array(passes, n);
  if (arr == NULL) return NULL;
  TnObject *p = make_pass(name ? name : "Sequential", opt_level, NULL,
                          KIND_SEQUENTIAL, NULL, arr, who);
  tn_object_release(arr);
  return p;
}

TN_API TnObject *tn_pass_sequential_named(const char *const *names,
                                          int32_t n, const char *name) {
  if (n < 0 || (n > 0 && names == NULL))
    return tn__raise_null("tn_pass_sequential_named", "names"), NULL;
  TnObject **ps = g_new0(TnObject *, n > 0 ? n : 1);
  TnObject *seq = NULL;
  int32_t i = 0;
  for (; i < n; i++)
    if ((ps[i] = tn_pass_get(names[i])) == NULL) break;
  if (i == n) seq = tn_pass_sequential(ps, n, name, 0);
  for (int32_t k = 0; k < i; k++) tn_object_release(ps[k]);
  g_free(ps);
  return seq;
}

/* ---- the registry ----------------------------------------------------------- */

static TnRegistry *g_passes;

TN_API int tn_pass_register(TnObject *pass, int override) {
  if (tn__check_object(pass, g_pass_t, "tn_pass_register", "pass")) return -1;
  const char *name = str(((PassInfo *)((Pass *)pass)->info)->name);
  return tn__registry_register(g_passes, name, pass, override,
                               "tn_pass_register");
}

TN_API int tn_pass_unregister(const char *name) {
  return tn__registry_unregister(g_passes, name, "tn_pass_unregister");
}

TN_API TnObject *tn_pass_get(const char *name) {
  return tn__registry_get(g_passes, name, "tn_pass_get");
}

TN_API TnObject *tn_pass_find(const char *name) {
  if (name == NULL) return tn__raise_null("tn_pass_find", "name"), NULL;
  return tn__registry_find(g_passes, name);
}

TN_API TnObject *tn_pass_list(void) {
  return tn__registry_list(g_passes, NULL);
}

/* ---- config options --------------------------------------------------------- */

static TnMutex g_opt_lock;
static GHashTable *g_options; /* key -> type index */

TN_API int tn_pass_config_register(const char *key, int32_t type_index) {
  if (key == NULL) return tn__raise_null("tn_pass_config_register", "key");
  if (tn_type_key(type_index) == NULL) return -1;
  tn__mutex_lock(&g_opt_lock);
  if (g_options == NULL)
    g_options = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_insert(g_options, g_strdup(key), GINT_TO_POINTER(type_index));
  tn__mutex_unlock(&g_opt_lock);
  return 0;
}

static int check_config(TnObject *config) {
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(config, 0, &k, &v); p >= 0;
       p = tn_map_next(config, p + 1, &k, &v)) {
    const char *key;
    if (tn_any_as_str(k, &key, NULL)) {
      tn_error_set_raised(NULL);
      return tn_error_raise_in(TN_ERR_TYPE, "tn_pass_context_new",
                               "config keys are option names, got %s",
                               tn_any_type_key(k));
    }
    tn__mutex_lock(&g_opt_lock);
    gpointer t;
    bool known = g_options &&
                 g_hash_table_lookup_extended(g_options, key, NULL, &t);
    tn__mutex_unlock(&g_opt_lock);
    if (!known)
      return tn_error_raise_in(TN_ERR_VALUE, "tn_pass_context_new",
                               "unknown config option '%s' (register it with "
                               "tn_pass_config_register)", key);
    int32_t want = GPOINTER_TO_INT(t);
    int32_t got = v->type_index == TN_TYPE_SMALL_STR ||
                          v->type_index == TN_TYPE_RAW_STR
                      ? TN_TYPE_STRING
                      : v->type_index;
    bool ok = got == want || (want == TN_TYPE_FLOAT && got == TN_TYPE_INT) ||
              (got >= TN_TYPE_STATIC_OBJECT_BEGIN && tn_type_is_subtype(got, want));
    if (!ok)
      return tn_error_raise_in(TN_ERR_TYPE, "tn_pass_context_new",
                               "config option '%s' expects %s, got %s", key,
                               tn__type_key_or(want, "?"),
                               tn__type_key_or(got, "?"));
  }
  return 0;
}

/* ---- contexts ---------------------------------------------------------------- */

TN_API TnObject *tn_pass_context_new(int32_t opt_level, TnObject *config,
                                     TnObject *required, TnObject *disabled,
                                     TnObject *instruments) {
  const char *who = "tn_pass_context_new";
  if (config && tn__check_object2(config, TN_TYPE_MAP, TN_TYPE_DICT, who, "config"))
    return NULL;
  if (config && check_config(config)) return NULL;
  if (instruments &&
      tn__check_object2(instruments, TN_TYPE_ARRAY, TN_TYPE_LIST, who,
                        "instruments"))
    return NULL;
  for (int64_t i = 0; instruments && i < tn_array_size(instruments); i++) {
    const TnAny *a = tn_array_at(instruments, i);
    if (!tn_any_is_object(a) || !tn_object_is_instance(a->v_obj, g_instr_t))
      return tn_error_raise_in(TN_ERR_TYPE, who, "instruments[%" PRId64
                               "] must be an ir.PassInstrument, got %s", i,
                               tn_any_type_key(a)), NULL;
  }
  TnObject *req = string_array(required, who, "required");
  TnObject *dis = req ? string_array(disabled, who, "disabled") : NULL;
  TnObject *cfg = dis ? (config ? retained(config) : tn_map_new(NULL, NULL, 0))
                      : NULL;
  TnObject *ins = cfg ? (instruments ? retained(instruments) : empty_array())
                      : NULL;
  TnObject *c = ins ? tn_node_alloc(g_ctx_t) : NULL;
  if (c == NULL) {
    tn_object_release(req);
    tn_object_release(dis);
    tn_object_release(cfg);
    tn_object_release(ins);
    return NULL;
  }
  PassContext *pc = (PassContext *)c;
  pc->opt_level = opt_level;
  pc->config = cfg;
  pc->required = req;
  pc->disabled = dis;
  pc->instruments = ins;
  return c;
}

static TN_TLS GPtrArray *tl_contexts; /* this thread's entered contexts */

TN_API int tn_pass_context_enter(TnObject *ctx) {
  if (tn__check_object(ctx, g_ctx_t, "tn_pass_context_enter", "ctx")) return -1;
  if (tl_contexts == NULL) tl_contexts = g_ptr_array_new();
  g_ptr_array_add(tl_contexts, retained(ctx));
  return 0;
}

TN_API int tn_pass_context_exit(void) {
  if (tl_contexts == NULL || tl_contexts->len == 0)
    return TN_RAISE(RUNTIME, "no pass context was entered on this thread");
  TnObject *c = g_ptr_array_remove_index(tl_contexts, tl_contexts->len - 1);
  if (tl_contexts->len == 0) {
    g_ptr_array_free(tl_contexts, TRUE);
    tl_contexts = NULL;
  }
  tn_object_release(c);
  return 0;
}

TN_API TnObject *tn_pass_context_current(void) {
  if (tl_contexts && tl_contexts->len)
    return retained(g_ptr_array_index(tl_contexts, tl_contexts->len - 1));
  return tn_pass_context_new(2, NULL, NULL, NULL, NULL);
}

/* ---- instruments ------------------------------------------------------------- */

TN_API TnObject *tn_pass_instrument(const char *name, TnObject *before,
                                    TnObject *after) {
  const char *who = "tn_pass_instrument";
  if (name == NULL) return tn__raise_null(who, "name"), NULL;
  if ((before && tn__check_object(before, TN_TYPE_FUNCTION, who, "before")) ||
      (after && tn__check_object(after, TN_TYPE_FUNCTION, who, "after")))
    return NULL;
  TnObject *i = tn_node_alloc(g_instr_t);
  if (i == NULL) return NULL;
  Instrument *in = (Instrument *)i;
  in->name = tn_string_from_cstr(name);
  in->before = retained(before);
  in->after = retained(after);
  return i;
}

static int call_hooks(const PassContext *c, bool before, TnObject *mod,
                      TnObject *info) {
  for (int64_t i = 0; i < tn_array_size(c->instruments); i++) {
    Instrument *in = (Instrument *)tn_array_at(c->instruments, i)->v_obj;
    TnObject *hook = before ? in->before : in->after;
    if (hook == NULL) continue;
    TnAny args[2] = {tn_any_obj(mod), tn_any_obj(info)}, ret = tn_any_none();
    int rc = tn_func_call(hook, args, 2, &ret);
    tn_any_clear(&ret);
    if (rc) {
      TnObject *cause = tn_error_take_raised();
      tn_error_raise(
          cause ? tn_error_kind(cause) : tn_error_kind_name(TN_ERR_RUNTIME),
          "instrument '%s' failed %s pass '%s': %s", str(in->name),
          before ? "before" : "after", str(((PassInfo *)info)->name),
          cause ? tn_error_message(cause) : "");
      tn_error_set_cause(tn_error_peek_raised(), cause);
      tn_object_release(cause);
      return -1;
    }
  }
  return 0;
}

/* ---- running ----------------------------------------------------------------- */

static bool should_run(const PassContext *c, const PassInfo *info) {
  const char *name = str(info->name);
  if (name_in(c->required, name)) return true;
  if (name_in(c->disabled, name)) return false;
  return info->opt_level <= c->opt_level;
}

/* Wrap the raised error so it names the pass (the original is the cause). */
static void blame(const char *pass) {
  TnObject *cause = tn_error_take_raised();
  tn_error_raise(
      cause ? tn_error_kind(cause) : tn_error_kind_name(TN_ERR_RUNTIME),
      "pass '%s' failed: %s", pass,
      cause ? tn_error_message(cause) : "no error was raised");
  tn_error_set_cause(tn_error_peek_raised(), cause);
  tn_object_release(cause);
}

static TnObject *run(TnObject *pass, TnObject *mod, PassContext *ctx,
                     int depth);

static TnObject *run_function_pass(Pass *p, TnObject *mod, PassContext *ctx) {
  const TnIrModule *m = (const TnIrModule *)mod;
  TnObject *fns = retained(m->functions);
  const TnAny *k, *v;
  for (int64_t pos = tn_map_next(m->functions, 0, &k, &v); pos >= 0;
       pos = tn_map_next(m->functions, pos + 1, &k, &v)) {
    if (tn__pass_is_primitive(v->v_obj)) continue;
    TnAny args[3] = {*v, tn_any_obj(mod), tn_any_obj((TnObject *)ctx)};
    TnAny ret = tn_any_none();
    if (tn_func_call(p->func, args, 3, &ret)) goto fail;
    if (!tn_any_is_object(&ret) ||
        !tn_object_is_instance(ret.v_obj, TN_IR->function)) {
      tn_error_raise_in(TN_ERR_TYPE, NULL, "the pass returned %s for function "
                        "%s, not an ir.Function", tn_any_type_key(&ret),
                        tn__ir_key(k));
      tn_any_clear(&ret);
      goto fail;
    }
    int rc = ret.v_obj == v->v_obj ? 0 : tn_map_set(&fns, k, &ret);
    tn_any_clear(&ret);
    if (rc) goto fail;
  }
  if (fns == m->functions) {
    tn_object_release(fns);
    return retained(mod);
  }
  TnObject *out = tn__ir_module_make(fns, m->attrs);
  tn_object_release(fns);
  return out;
fail:
  tn_object_release(fns);
  return NULL;
}

static TnObject *run(TnObject *pass, TnObject *mod, PassContext *ctx,
                     int depth) {
  Pass *p = (Pass *)pass;
  PassInfo *info = (PassInfo *)p->info;
  const char *name = str(info->name);
  if (depth > 64) {
    tn_error_raise_in(TN_ERR_RUNTIME, NULL, "pass '%s': required passes nest "
                      "more than 64 deep (a cycle?)", name);
    return NULL;
  }
  if (p->kind != KIND_SEQUENTIAL && !should_run(ctx, info)) return retained(mod);
  TnObject *cur = retained(mod);
  for (int64_t i = 0; i < tn_array_size(info->required); i++) {
    const char *rn;
    tn_any_as_str(tn_array_at(info->required, i), &rn, NULL);
    TnObject *rp = tn_pass_get(rn);
    TnObject *next = rp ? run(rp, cur, ctx, depth + 1) : NULL;
    tn_object_release(rp);
    tn_object_release(cur);
    if (next == NULL) {
      blame(name);
      return NULL;
    }
    cur = next;
  }
  if (p->kind == KIND_SEQUENTIAL) {
    for (int64_t i = 0; i < tn_array_size(p->passes); i++) {
      TnObject *next = run(tn_array_at(p->passes, i)->v_obj, cur, ctx, depth + 1);
      tn_object_release(cur);
      if (next == NULL) return NULL; /* the inner pass named itself */
      cur = next;
    }
    return cur;
  }
  if (call_hooks(ctx, true, cur, p->info)) {
    tn_object_release(cur);
    return NULL;
  }
  TnObject *out = NULL;
  if (p->kind == KIND_MODULE) {
    TnAny args[2] = {tn_any_obj(cur), tn_any_obj((TnObject *)ctx)};
    TnAny ret = tn_any_none();
    if (tn_func_call(p->func, args, 2, &ret) == 0) {
      if (tn_any_is_object(&ret) &&
          tn_object_is_instance(ret.v_obj, TN_IR->module)) {
        out = ret.v_obj;
      } else {
        tn_error_raise_in(TN_ERR_TYPE, NULL,
                          "the pass returned %s, not an ir.IRModule",
                          tn_any_type_key(&ret));
        tn_any_clear(&ret);
      }
    }
  } else {
    out = run_function_pass(p, cur, ctx);
  }
  if (out == NULL) {
    tn_object_release(cur);
    blame(name);
    return NULL;
  }
  tn_object_release(cur);
  if (call_hooks(ctx, false, out, p->info)) {
    tn_object_release(out);
    return NULL;
  }
  return out;
}

TN_API TnObject *tn_pass_run(TnObject *pass, TnObject *mod, TnObject *ctx) {
  const char *who = "tn_pass_run";
  if (tn__check_object(pass, g_pass_t, who, "pass") ||
      tn__check_object(mod, TN_IR->module, who, "mod") ||
      (ctx && tn__check_object(ctx, g_ctx_t, who, "ctx")))
    return NULL;
  TnObject *c = ctx ? retained(ctx) : tn_pass_context_current();
  if (c == NULL) return NULL;
  TnObject *out = run(pass, mod, (PassContext *)c, 0);
  tn_object_release(c);
  return out;
}

/* ---- start-up ------------------------------------------------------------------ */

#define REG(var, S, key, fields)                                              \
  do {                                                                        \
    TnNodeDesc d = {key, TN_TYPE_OBJECT, TN_NODE_UNIQUE, TN_NODE_NO_CREATE,   \
                    (int64_t)sizeof(S), fields,                               \
                    (int32_t)G_N_ELEMENTS(fields), NULL, NULL};               \
    var = tn_node_register(&d);                                               \
    TN__INIT_CHECK(var > 0);                                                        \
  } while (0)

int32_t tn__pass_type(void) { return g_pass_t; }
int32_t tn__pass_context_type(void) { return g_ctx_t; }
int32_t tn__pass_instrument_type(void) { return g_instr_t; }

void tn__pass_types_init(void) {
  g_passes = tn__registry_new("pass", false);
  REG(g_info_t, PassInfo, "ir.PassInfo", info_fields);
  REG(g_pass_t, Pass, "ir.Pass", pass_fields);
  REG(g_instr_t, Instrument, "ir.PassInstrument", instr_fields);
  REG(g_ctx_t, PassContext, "ir.PassContext", ctx_fields);
}

/* ---- helpers for C passes ------------------------------------------------------ */

int64_t tn__pass_config_int(const TnObject *ctx, const char *key,
                            int64_t fallback) {
  if (ctx == NULL || !tn_object_is_instance(ctx, g_ctx_t)) return fallback;
  const PassContext *c = (const PassContext *)ctx;
  if (c->config == NULL) return fallback;
  TnAny k = tn_any_cstr(key);
  const TnAny *v = tn_map_find(c->config, &k);
  return v && v->type_index == TN_TYPE_INT ? v->v_int64 : fallback;
}

const char *tn__pass_config_str(const TnObject *ctx, const char *key,
                                const char *fallback) {
  if (ctx == NULL || !tn_object_is_instance(ctx, g_ctx_t)) return fallback;
  const PassContext *c = (const PassContext *)ctx;
  if (c->config == NULL) return fallback;
  TnAny k = tn_any_cstr(key);
  const TnAny *v = tn_map_find(c->config, &k);
  const char *s;
  if (v == NULL || tn_any_as_str(v, &s, NULL)) {
    tn_error_set_raised(NULL);
    return fallback;
  }
  return s;
}
