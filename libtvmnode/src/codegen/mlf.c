/*
 * mlf.c: what a compiled model says about itself: metadata.json in the
 * Model Library Format (version 7), the list of crt sources the code
 * needs, the memory plan as data (for `tvmnode plan` and tests), and the
 * interface description the Rust writer works from.
 */
#include "codegen/aot_internal.h"


#define WHO TN_AOT_WHO
#define MLF_VERSION 7

/* ---- metadata --------------------------------------------------------------- */

static void json_str(GString *s, const char *v) {
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p == '"' || *p == '\\') g_string_append_printf(s, "\\%c", *p);
    else if (*p < 0x20) g_string_append_printf(s, "\\u%04x", *p);
    else g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, '"');
}

static void json_io(Gen *g, GString *s, bool outputs) {
  GArray *ios = outputs ? g->outs : g->ins;
  g_string_append(s, outputs ? ",\n      \"outputs\": [" : ",\n      \"inputs\": [");
  for (guint i = 0; i < ios->len; i++) {
    const Io *io = &g_array_index(ios, Io, i);
    char dt[32];
    tn__aot_dtype_str(io->type->dtype, dt, sizeof dt);
    g_string_append(s, i ? ",\n        {\"name\": " : "\n        {\"name\": ");
    json_str(s, io->name);
    g_string_append(s, ", \"shape\": [");
    for (int64_t d = 0; d < tn__ir_ndim(io->type); d++)
      g_string_append_printf(s, "%s%" PRId64, d ? ", " : "",
                             tn__ir_dims(io->type)[d]);
    g_string_append_printf(s, "], \"dtype\": \"%s\", \"size_bytes\": %" PRId64,
                           dt, io->nbytes);
    if (io->scale > 0)
      g_string_append_printf(s, ", \"scale\": %.9g, \"zero_point\": %" PRId64,
                             io->scale, io->zero_point);
    if (io->buf >= 0)
      g_string_append_printf(s, ", \"pool\": \"%s\", \"offset\": %" PRId64,
                             (char *)g_ptr_array_index(g->o.pool_names,
                                                       g->plan[io->buf].pool),
                             g->plan[io->buf].offset);
    g_string_append_c(s, '}');
  }
  g_string_append(s, "]");
}

static int64_t io_bytes(Gen *g) {
  int64_t n = 0;
  if (g->o.io_in_pool) return 0;
  for (guint i = 0; i < g->ins->len; i++) n += g_array_index(g->ins, Io, i).nbytes;
  for (guint i = 0; i < g->outs->len; i++)
    n += g_array_index(g->outs, Io, i).nbytes;
  return n;
}

void tn__aot_metadata(Gen *g, GString *s, GPtrArray *sources) {
  const char *m = g->o.name;
  g_string_append_printf(s, "{\n  \"version\": %d,\n  \"generator\": "
                         "\"tvmnode %s\",\n  \"modules\": {\n    ",
                         MLF_VERSION, tn_version());
  json_str(s, m);
  g_string_append(s, ": {\n      \"model_name\": ");
  json_str(s, m);
  g_string_append_printf(s, ",\n      \"executors\": [\"aot\"],\n      "
                         "\"style\": \"full-model\",\n      \"target\": "
                         "{\"kind\": \"c\", \"keys\": [\"cpu\"]},\n      "
                         "\"interface\": {\"api\": [\"c\"%s], \"header\": "
                         "\"codegen/host/include/tvmgen_%s.h\", "
                         "\"io_in_pool\": %s, \"constants_in_pool\": %s, "
                         "\"alignment\": %" PRId64 ", \"scratch_isa\": "
                         "\"%s\", \"devices\": [",
                         g->o.rust ? ", \"rust\"" : "", m,
                         g->o.io_in_pool ? "true" : "false",
                         g->o.consts_in_pool ? "true" : "false", g->o.align,
                         g->o.isa == TN_CRT_ISA_ARM_DSP ? "arm_dsp"
                                                        : "portable");
  for (guint d = 0; d < g->o.devices->len; d++) {
    if (d) g_string_append(s, ", ");
    json_str(s, g_ptr_array_index(g->o.devices, d));
  }
  g_string_append(s, "], ");
  if (g->o.isa == TN_CRT_ISA_ARM_DSP) /* TN_CRT_CONV_S8_FORMS, kernels.h */
    g_string_append_printf(s, "\"conv_s8_forms\": %d, \"dense_s8_forms\": "
                           "%d, ", (int)g->conv_forms, (int)g->dense_forms);
  g_string_append_printf(s, "\"constants_align\": %" PRId64
                         ", \"constants_section\": ", g->o.const_align);
  if (g->o.const_section) json_str(s, g->o.const_section);
  else g_string_append(s, "null");
  g_string_append(s, ", \"workspace_section\": ");
  if (g->o.ws_section) json_str(s, g->o.ws_section);
  else g_string_append(s, "null");
  int64_t ws = 0;
  for (guint p = 0; p < g->o.pool_names->len; p++) ws += g->res.size[p];
  g_string_append_printf(s, "},\n      \"memory\": {\n        \"functions\": "
                         "{\n          \"main\": [{\"device\": 1, "
                         "\"workspace_size_bytes\": %" PRId64 ", "
                         "\"constants_size_bytes\": %" PRId64 ", "
                         "\"io_size_bytes\": %" PRId64 "}],\n          "
                         "\"operator_functions\": {", ws, g->const_bytes,
                         io_bytes(g));
  for (int32_t i = 0; i < g->nsteps; i++) {
    int64_t sc = g->scratch[i] >= 0
                     ? g_array_index(g->bufs, Buf, g->scratch[i]).size
                     : 0;
    g_string_append_printf(s, "%s\n            \"%s\": [{\"device\": 1, "
                           "\"workspace_size_bytes\": %" PRId64 ", "
                           "\"operator\": ", i ? "," : "", g->fn_names[i],
                           sc);
    json_str(s, step(g, i)->op);
    g_string_append_printf(s, ", \"kernel\": \"%s\", \"macs\": %" PRId64
                           ", \"in_place\": %s}]", step(g, i)->k.kernel,
                           step(g, i)->k.macs,
                           tn__aot_in_place(g, i) ? "true" : "false");
  }
  g_string_append(s, "}\n        },\n        \"pools\": [");
  for (guint p = 0; p < g->o.pool_names->len; p++) {
    g_string_append_printf(s, "%s\n          {\"name\": \"%s\", \"kind\": "
                           "\"workspace\", \"size_bytes\": %" PRId64 ", "
                           "\"limit_bytes\": %" PRId64 ", \"alignment\": %"
                           PRId64 "}", p ? "," : "",
                           (char *)g_ptr_array_index(g->o.pool_names, p),
                           g->res.size[p],
                           g_array_index(g->o.pool_limits, int64_t, p),
                           g->o.align);
  }
  if (g->o.consts_in_pool && g->const_pool > 0)
    g_string_append_printf(s, ",\n          {\"name\": \"constants\", "
                           "\"kind\": \"constant\", \"size_bytes\": %" PRId64
                           ", \"limit_bytes\": 0, \"alignment\": %" PRId64 "}",
                           g->const_pool, g->o.align);
  if (g->states->len)
    g_string_append_printf(s, ",\n          {\"name\": \"state\", \"kind\": "
                           "\"state\", \"size_bytes\": %" PRId64 ", "
                           "\"limit_bytes\": 0, \"alignment\": %" PRId64 "}",
                           g->state_pool, g->o.align);
  g_string_append_printf(s, "\n        ],\n        \"workspace_lower_bound_"
                         "bytes\": %" PRId64 ",\n        \"constants_in_flash"
                         "_bytes\": %" PRId64 "\n      }", g->res.lower_bound,
                         g->o.consts_in_pool ? 0 : g->const_bytes);
  json_io(g, s, false);
  json_io(g, s, true);
  if (tn__aot_params(g)) {
    /* what tvmnode.codegen.params_blob lays a second set of weights out by */
    g_string_append_printf(s, ",\n      \"params\": {\"model_id\": \"0x%016"
                           PRIx64 "\", \"version\": 1, \"pool\": "
                           "\"constants\", \"size_bytes\": %" PRId64 ", "
                           "\"alignment\": %" PRId64 ", \"constants\": [",
                           g->model_id, g->const_pool, g->o.align);
    bool first = true;
    for (guint i = 0; i < g->v.consts->len; i++) {
      if (!g->const_used[i]) continue;
      const DLTensor *dl =
          tn_tensor_dltensor(g_ptr_array_index(g->v.consts, i));
      char dt[32];
      tn__aot_dtype_str(dl->dtype, dt, sizeof dt);
      g_string_append_printf(s, "%s\n        {\"name\": \"const%u\", "
                             "\"dtype\": \"%s\", \"shape\": [",
                             first ? "" : ",", i, dt);
      for (int32_t d = 0; d < dl->ndim; d++)
        g_string_append_printf(s, "%s%" PRId64, d ? ", " : "", dl->shape[d]);
      g_string_append_printf(s, "], \"offset\": %" PRId64 ", \"size_bytes\""
                             ": %" PRId64 "}", g->const_off[i],
                             tn_tensor_nbytes(g_ptr_array_index(g->v.consts,
                                                                i)));
      first = false;
    }
    g_string_append(s, "]}");
  }
  g_string_append_printf(s, ",\n      \"macs\": %" PRId64 ",\n      "
                         "\"runtime_sources\": [", tn__aot_macs(g));
  for (guint i = 0; i < sources->len; i++) {
    if (i) g_string_append(s, ", ");
    json_str(s, g_ptr_array_index(sources, i));
  }
  g_string_append(s, "]\n    }\n  }\n}\n");
}

/* ---- the runtime sources a model needs ----------------------------------------- */

/* Every source and header the generated code needs, relative to the crt's
 * folder: what every model needs (TN_CRT_COMMON_SOURCES: the headers, the
 * status table, the firmware API, the helpers the kernels share), then the
 * source of each kernel form it calls, as TN_CRT_CALLS names it, with what
 * that source brings (TN_CRT_SOURCE_COMPANIONS). */
GPtrArray *tn__aot_runtime_sources(Gen *g) {
  static const char *always[] = {TN_CRT_COMMON_SOURCES};
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  /* each file once: several forms share a source, and several sources a
   * companion (or name another form's source as theirs) */
#define ADD_ONCE(path)                                     \
  do {                                                     \
    if (!g_hash_table_contains(seen, (path))) {            \
      g_hash_table_add(seen, (gpointer)(path));            \
      g_ptr_array_add(out, g_strdup(path));                \
    }                                                      \
  } while (0)
  for (size_t i = 0; i < G_N_ELEMENTS(always); i++) ADD_ONCE(always[i]);
  /* params.h is among the headers every archive carries (one project may
   * build several archives against one archive's crt headers); its source
   * only where a constant pool may be filled from a blob */
  if (tn__aot_params(g)) {
    ADD_ONCE("src/params.c");
    ADD_ONCE("src/crc32.c");
  }
  static const char *companions[][2] = {
#define COMPANION(src, other) {src, other},
      TN_CRT_SOURCE_COMPANIONS(COMPANION)
#undef COMPANION
  };
  if (g->split_steps > 0) ADD_ONCE("src/kernels/split.c");
  for (int32_t s = 0; s < g->nsteps; s++) {
    const TnKernForm *f = step(g, s)->k.form;
    if (f == NULL || g_hash_table_contains(seen, f->source)) continue;
    ADD_ONCE(f->source);
    for (size_t i = 0; i < G_N_ELEMENTS(companions); i++)
      if (strcmp(companions[i][0], f->source) == 0) ADD_ONCE(companions[i][1]);
  }
#undef ADD_ONCE
  g_hash_table_destroy(seen);
  return out;
}

/* ---- the plan, as data (for `tvmnode plan` and tests) ----------------------------- */


int tn__aot_map_put(TnObject **m, const char *k, TnAny v) {
  TnAny key = tn_any_cstr(k);
  int rc = tn_map_set(m, &key, &v);
  tn_any_clear(&v);
  return rc;
}

TnObject *tn__aot_plan_map(Gen *g) {
  TnObject *m = tn_map_new(NULL, NULL, 0), *pools = tn_array_new(NULL, 0),
           *bufs = tn_array_new(NULL, 0), *names = tn_array_new(NULL, 0);
  static const char *kinds[] = {"intermediate", "input", "output", "scratch"};
  int rc = 0;
  for (guint p = 0; p < g->o.pool_names->len && rc == 0; p++) {
    TnObject *pm = tn_map_new(NULL, NULL, 0);
    const char *pn = g_ptr_array_index(g->o.pool_names, p);
    rc |= tn__aot_map_put(&pm, "name", tn_any_obj(tn_string_new(pn, strlen(pn))));
    rc |= tn__aot_map_put(&pm, "size", tn_any_int(g->res.size[p]));
    rc |= tn__aot_map_put(&pm, "limit",
                  tn_any_int(g_array_index(g->o.pool_limits, int64_t, p)));
    TnAny v = tn_any_obj(pm);
    rc |= tn_array_push(&pools, &v);
    tn_any_clear(&v);
  }
  for (guint b = 0; b < g->bufs->len && rc == 0; b++) {
    const Buf *x = &g_array_index(g->bufs, Buf, b);
    if (x->merged >= 0) continue; /* drawn as its host */
    TnObject *bm = tn_map_new(NULL, NULL, 0);
    rc |= tn__aot_map_put(&bm, "name", tn_any_obj(tn_string_new(x->name, strlen(x->name))));
    rc |= tn__aot_map_put(&bm, "kind", tn_any_cstr(kinds[x->kind]));
    rc |= tn__aot_map_put(&bm, "pool", tn_any_int(g->plan[b].pool));
    rc |= tn__aot_map_put(&bm, "offset", tn_any_int(g->plan[b].offset));
    rc |= tn__aot_map_put(&bm, "size", tn_any_int(x->size));
    rc |= tn__aot_map_put(&bm, "first", tn_any_int(g->plan[b].first));
    rc |= tn__aot_map_put(&bm, "last", tn_any_int(g->plan[b].last));
    TnAny v = tn_any_obj(bm);
    rc |= tn_array_push(&bufs, &v);
    tn_any_clear(&v);
  }
  for (int32_t s = 0; s < g->nsteps && rc == 0; s++) {
    const char *op = step(g, s)->op;
    TnAny v = tn_any_obj(tn_string_new(op, strlen(op)));
    rc |= tn_array_push(&names, &v);
    tn_any_clear(&v);
  }
  rc |= tn__aot_map_put(&m, "model", tn_any_obj(tn_string_new(g->o.name,
                                                strlen(g->o.name))));
  rc |= tn__aot_map_put(&m, "steps", tn_any_int(g->nsteps + 1));
  rc |= tn__aot_map_put(&m, "lower_bound", tn_any_int(g->res.lower_bound));
  rc |= tn__aot_map_put(&m, "pools", tn_any_obj(pools));
  rc |= tn__aot_map_put(&m, "buffers", tn_any_obj(bufs));
  rc |= tn__aot_map_put(&m, "step_names", tn_any_obj(names));
  if (rc) {
    tn_object_release(m);
    return NULL;
  }
  return m;
}

/* ---- the interface, for the Rust writer ----------------------------------------- */

static void fill_tensors(Gen *g, GArray *ios, TnAotTensor *out) {
  for (guint i = 0; i < ios->len; i++) {
    const Io *io = &g_array_index(ios, Io, i);
    const TnPlanBuffer *p = io->buf >= 0 ? &g->plan[io->buf] : NULL;
    int64_t n = 1;
    for (int64_t d = 0; d < tn__ir_ndim(io->type); d++)
      n *= tn__ir_dims(io->type)[d];
    out[i] = (TnAotTensor){io->name, tn__kernel_crt_dtype(io->type->dtype), n,
                           io->nbytes, p ? p->pool : -1, p ? p->offset : 0};
  }
}

/* The Rust twin of the header, or -1 with an error when it cannot be
 * written. */
int tn__aot_rust(Gen *g, GString *out) {
  TnAotTensor *ins = g_new0(TnAotTensor, g->ins->len + 1);
  TnAotTensor *outs = g_new0(TnAotTensor, g->outs->len + 1);
  TnAotPool pools[TN_CRT_MAX_POOLS];
  int32_t np = 0;
  fill_tensors(g, g->ins, ins);
  fill_tensors(g, g->outs, outs);
  for (guint p = 0; p < g->o.pool_names->len; p++)
    if (g->res.size[p] > 0 || (p == 0 && g->o.io_in_pool))
      pools[np++] = (TnAotPool){g_ptr_array_index(g->o.pool_names, p),
                                g->res.size[p]};
  /* an io tensor's pool is an index among all pools; the Rust side sees
   * only the pools run takes */
  for (int pass = 0; pass < 2; pass++) {
    TnAotTensor *t = pass ? outs : ins;
    guint n = pass ? g->outs->len : g->ins->len;
    for (guint i = 0; i < n; i++)
      for (int32_t k = 0; t[i].pool >= 0 && k < np; k++)
        if (strcmp(pools[k].name, g_ptr_array_index(g->o.pool_names,
                                                    t[i].pool)) == 0) {
          t[i].pool = k;
          break;
        }
  }
  TnAotInterface iface = {
      g->o.name, g->o.align, g->o.io_in_pool, (int32_t)g->ins->len,
      (int32_t)g->outs->len, ins, outs, np, pools,
      g->o.consts_in_pool ? g->const_pool : 0, (int32_t)g->o.devices->len,
      (const char *const *)g->o.devices->pdata};
  iface.state_pool_size = g->state_pool;
  tn__codegen_rust(&iface, out);
  g_free(ins), g_free(outs);
  if (out->len == 0)
    return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, WHO, "the Rust "
                             "interface cannot be written yet");
  return 0;
}

