/*
 * builtin.c: C passes as ordinary passes, and the registry of the built-in
 * ones (InferType, SimplifyExpr, FoldConstant, DeadCodeElimination,
 * FuseOps, ConvertKernelLayout, FoldInputOffset, PackDenseWeights,
 * PatchStages), also reachable as global functions "transform.<Name>" so every
 * binding can get them by name.
 */
#include "pass/pass_internal.h"

bool tn__pass_is_primitive(const TnObject *func) {
  const TnObject *attrs = ((const TnIrFunction *)func)->attrs;
  if (attrs == NULL) return false;
  TnAny key = tn_any_cstr("Primitive");
  const TnAny *v = tn_map_find(attrs, &key);
  return v && (v->type_index == TN_TYPE_INT || v->type_index == TN_TYPE_BOOL) &&
         v->v_int64 != 0;
}

static int c_pass_call(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  TnModulePassC fn = (TnModulePassC)self;
  if (nargs != 2 || !tn_any_is_object(&args[0]))
    return tn_error_raise_in(TN_ERR_TYPE, NULL,
                             "a module pass takes (mod, ctx)");
  TnObject *ctx = tn_any_is_object(&args[1]) ? args[1].v_obj : NULL;
  TnObject *out = fn(args[0].v_obj, ctx);
  if (out == NULL) return -1;
  *ret = tn_any_obj(out);
  return 0;
}

TnObject *tn__pass_from_c(const char *name, int32_t opt_level,
                          const char *const *required, int32_t nrequired,
                          TnModulePassC fn) {
  TnObject *f = tn_func_new(c_pass_call, (void *)fn, NULL);
  TnAny *req = g_new(TnAny, nrequired > 0 ? nrequired : 1);
  for (int32_t i = 0; i < nrequired; i++) req[i] = tn_any_cstr(required[i]);
  TnObject *arr = tn_array_new(nrequired ? req : NULL, nrequired);
  g_free(req);
  TnObject *p = f && arr ? tn_pass_module(name, opt_level, arr, f) : NULL;
  tn_object_release(arr);
  tn_object_release(f);
  return p;
}

/* Built-in passes are made once and handed out by reference. */
static TnObject *get(const char *name) {
  return tn_pass_get(name); /* a KeyError if someone unregistered it */
}

TN_API TnObject *tn_pass_infer_type(void) { return get("InferType"); }
TN_API TnObject *tn_pass_simplify_expr(void) { return get("SimplifyExpr"); }
TN_API TnObject *tn_pass_fold_constant(void) { return get("FoldConstant"); }
TN_API TnObject *tn_pass_dead_code_elimination(void) {
  return get("DeadCodeElimination");
}
TN_API TnObject *tn_pass_fuse_ops(void) { return get("FuseOps"); }
TN_API TnObject *tn_pass_convert_kernel_layout(void) {
  return get("ConvertKernelLayout");
}

/* "transform.<Name>": () -> the pass, for the bindings. */
static int pass_getter(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  (void)args, (void)nargs;
  TnObject *p = tn_pass_get(self);
  if (p == NULL) return -1;
  *ret = tn_any_obj(p);
  return 0;
}


TnObject *tn__pass_attrs_with(const TnObject *attrs, const char *field,
                              const TnAny *value) {
  const int32_t t = attrs->type_index, n = tn_type_field_count(t);
  if (n < 0) return NULL;
  const char **names = g_new0(const char *, n > 0 ? n : 1);
  TnAny *values = g_new0(TnAny, n > 0 ? n : 1);
  int32_t got = 0;
  TnObject *out = NULL;
  for (; got < n; got++) {
    names[got] = tn_type_field_at(t, got)->name;
    if (strcmp(names[got], field) == 0)
      tn_any_copy(&values[got], value);
    else if (tn_node_get_at(attrs, got, &values[got]))
      goto done;
  }
  out = tn_node_new(t, names, values, n);
done:
  for (int32_t i = 0; i < got; i++) tn_any_clear(&values[i]);
  g_free(values);
  g_free(names);
  return out;
}

TnObject *tn__pass_map_functions(TnObject *mod, TnFunctionRewriteC fn,
                                 void *ctx) {
  const TnIrModule *m = (const TnIrModule *)mod;
  TnObject *fns = tn_map_new(NULL, NULL, 0);
  bool changed = false;
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(m->functions, 0, &k, &v); fns && p >= 0;
       p = tn_map_next(m->functions, p + 1, &k, &v)) {
    TnObject *f = v->v_obj;
    TnObject *out = tn__pass_is_primitive(f)
                        ? (tn_object_retain(f), f)
                        : fn(ctx, tn__ir_key(k), f);
    if (out == NULL) {
      tn_object_release(fns);
      return NULL;
    }
    changed |= out != f;
    TnAny ov = tn_any_obj(out);
    int rc = tn_map_set(&fns, k, &ov);
    tn_object_release(out);
    if (rc) {
      tn_object_release(fns);
      return NULL;
    }
  }
  if (fns == NULL) return NULL;
  TnObject *res = changed ? tn__ir_module_make(fns, m->attrs) : mod;
  if (!changed) tn_object_retain(mod);
  tn_object_release(fns);
  return res;
}

typedef struct {
  TnNodeRewriteC fn;
  void *ctx;
} NodeRewrite;

static TnObject *node_rewrite(void *ctx, TnObject *orig, TnObject *rebuilt) {
  const NodeRewrite *nr = ctx;
  bool failed = false;
  TnObject *out = nr->fn(nr->ctx, orig, rebuilt, &failed);
  if (out || failed) return out;
  tn_object_retain(rebuilt);
  return rebuilt;
}

static TnObject *node_rewrite_function(void *ctx, const char *name,
                                       TnObject *f) {
  (void)name;
  return tn_ir_mutate(f, node_rewrite, ctx);
}

TnObject *tn__pass_rewrite_nodes(TnObject *mod, TnNodeRewriteC fn, void *ctx) {
  NodeRewrite nr = {fn, ctx};
  return tn__pass_map_functions(mod, node_rewrite_function, &nr);
}

void tn__pass_init(void) {
  tn__pass_types_init();
  tn__passes_builtin_init();
}

void tn__passes_builtin_init(void) {
  static const char *const infer[] = {"InferType"};
  static const struct {
    const char *name;
    int32_t opt_level;
    bool needs_types;
    TnModulePassC fn;
  } table[] = {
      {"InferType", 0, false, tn__infer_type_module},
      {"SimplifyExpr", 2, true, tn__simplify_module},
      {"FoldConstant", 2, true, tn__fold_constant_module},
      {"DeadCodeElimination", 1, false, tn__dce_module},
      {"FuseOps", 1, true, tn__fuse_ops_module},
      {"ConvertKernelLayout", 1, false, tn__kernel_layout_module},
      {"FoldInputOffset", 1, true, tn__fold_input_offset_module},
      {"PackDenseWeights", 1, true, tn__pack_dense_weights_module},
      {"PatchStages", 1, true, tn__patch_stages_module},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    TnObject *p = tn__pass_from_c(table[i].name, table[i].opt_level, infer,
                                  table[i].needs_types ? 1 : 0, table[i].fn);
    TN__INIT_CHECK(p && tn_pass_register(p, 0) == 0);
    tn_object_release(p);
    char *gname = g_strdup_printf("transform.%s", table[i].name);
    TnObject *f = tn_func_new(pass_getter, (void *)table[i].name, NULL);
    TN__INIT_CHECK(f && tn_func_register(gname, f, 0) == 0);
    tn_object_release(f);
    g_free(gname);
  }
  TN__INIT_CHECK(tn_pass_config_register("FuseOps.max_depth", TN_TYPE_INT) == 0);
  TN__INIT_CHECK(tn_pass_config_register("FoldConstant.max_elements", TN_TYPE_INT) ==
           0);
  TN__INIT_CHECK(tn_pass_config_register("ConvertKernelLayout.layout",
                                         TN_TYPE_STRING) == 0);
  TN__INIT_CHECK(tn_pass_config_register("PackDenseWeights.conv", TN_TYPE_INT) ==
                 0);
  TN__INIT_CHECK(tn_pass_config_register("PackDenseWeights.layout",
                                         TN_TYPE_STRING) == 0);
  TN__INIT_CHECK(tn_pass_config_register("PatchStages.count", TN_TYPE_INT) == 0);
  TN__INIT_CHECK(tn_pass_config_register("PatchStages.end", TN_TYPE_INT) == 0);
  TN__INIT_CHECK(tn_pass_config_register("PatchStages.isa", TN_TYPE_STRING) ==
                 0);
  TN__INIT_CHECK(tn_pass_config_register("PatchStages.shrink_scratch",
                                         TN_TYPE_INT) == 0);
}
