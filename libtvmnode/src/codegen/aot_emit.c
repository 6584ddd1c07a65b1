/*
 * aot_emit.c: the C of a compiled model. <name>_lib0.c holds the constants
 * and one function per kernel call (its form's parameter struct as static
 * const data, and a call of the form's uniform entry: the struct and the
 * entry the host executor uses); <name>_lib1.c the entry point
 * tvmgen_<name>_run, which checks its arguments and calls them in order
 * over pool bases plus planned offsets, and the model descriptor for the
 * crt's firmware API; tvmgen_<name>.h the interface. Only <stdint.h> and
 * the crt's headers are included, so a bare toolchain builds them.
 */
#include "codegen/aot_internal.h"



/* ---- C text ----------------------------------------------------------------- */

static const char *ctype(DLDataType t) {
  if (t.lanes != 1) return NULL;
  if (t.code == kDLFloat && t.bits == 32) return "float";
  if (t.code == kDLInt) {
    switch (t.bits) {
      case 8: return "int8_t";
      case 16: return "int16_t";
      case 32: return "int32_t";
      case 64: return "int64_t";
    }
  }
  if (t.code == kDLUInt && t.bits == 8) return "uint8_t";
  return NULL;
}

void tn__aot_dtype_str(DLDataType t, char *buf, size_t n) {
  if (tn_dtype_print(t, buf, n) < 0) g_strlcpy(buf, "?", n);
}

/* The C expression of where value `v` lives (a void pointer). */
static void where(Gen *g, GString *s, int32_t v) {
  const TnKernValue *x = value(g, root(g, v));
  Home h = g->home[root(g, v)];
  if (tn__aot_state_where(g, s, h)) return;
  switch (h.kind) {
    case H_INPUT:
      g_string_append_printf(s, "inputs->%s",
                             g_array_index(g->ins, Io, h.index).name);
      break;
    case H_OUTPUT:
      g_string_append_printf(s, "outputs->%s",
                             g_array_index(g->outs, Io, h.index).name);
      break;
    case H_CONST:
      if (g->o.consts_in_pool)
        g_string_append_printf(s, "(cp + %" PRId64 ")",
                               g->const_off[x->index]);
      else
        g_string_append_printf(s, "tvmgen_%s_const%d", g->o.name, x->index);
      break;
    case H_POOL: {
      const TnPlanBuffer *p = &g->plan[h.index];
      g_string_append_printf(s, "(ws%d + %" PRId64 ")", p->pool, p->offset);
      break;
    }
  }
}

void tn__aot_where(Gen *g, GString *s, int32_t v) { where(g, s, v); }

/* The constant arrays (definitions in lib0, declarations for lib1). */
void tn__aot_emit_constants(Gen *g, GString *c, bool decl) {
  if (g->o.consts_in_pool) return;
  for (guint i = 0; i < g->v.consts->len; i++) {
    if (!g->const_used[i]) continue;
    TnObject *t = g_ptr_array_index(g->v.consts, i);
    const DLTensor *dl = tn_tensor_dltensor(t);
    int64_t nb = tn_tensor_nbytes(t), n = nb;
    const char *ty = ctype(dl->dtype);
    if (ty == NULL) ty = "uint8_t";
    else n = nb / ((dl->dtype.bits + 7) / 8);
    if (decl) {
      g_string_append_printf(c, "extern TVMGEN_INTERNAL const %s tvmgen_%s_"
                             "const%u[%" PRId64 "];\n", ty, g->o.name, i,
                             n > 0 ? n : 1);
      continue;
    }
    g_string_append_printf(c, "TVMGEN_INTERNAL const %s tvmgen_%s_const%u[%"
                           PRId64 "] TVMGEN_ALIGNED(%" PRId64 ")%s%s%s = {",
                           ty, g->o.name, i, n > 0 ? n : 1, g->o.const_align,
                           g->o.const_section ? " TVMGEN_" : "",
                           g->o.const_section ? g->M : "",
                           g->o.const_section ? "_CONSTANTS_SECTION" : "");
    const uint8_t *base = (const uint8_t *)dl->data + dl->byte_offset;
    for (int64_t k = 0; k < n; k++) {
      g_string_append(c, k == 0 ? "" : (k % 16 ? ", " : ",\n    "));
      if (strcmp(ty, "float") == 0) {
        float f;
        memcpy(&f, base + 4 * k, 4);
        tn__emit_f32(c, f);
      } else if (strcmp(ty, "int8_t") == 0) {
        g_string_append_printf(c, "%d", (int)((const int8_t *)base)[k]);
      } else if (strcmp(ty, "int16_t") == 0) {
        int16_t x;
        memcpy(&x, base + 2 * k, 2);
        g_string_append_printf(c, "%d", (int)x);
      } else if (strcmp(ty, "int32_t") == 0) {
        int32_t x;
        memcpy(&x, base + 4 * k, 4);
        if (x == INT32_MIN) g_string_append(c, "(-2147483647 - 1)");
        else g_string_append_printf(c, "%" PRId32, x);
      } else if (strcmp(ty, "int64_t") == 0) {
        int64_t x;
        memcpy(&x, base + 8 * k, 8);
        if (x == INT64_MIN) g_string_append(c, "(-INT64_C(9223372036854775807) - 1)");
        else g_string_append_printf(c, "INT64_C(%" PRId64 ")", x);
      } else {
        g_string_append_printf(c, "%u", (unsigned)base[k]);
      }
    }
    if (n == 0) g_string_append_c(c, '0');
    g_string_append(c, "};\n");
  }
}

char *tn__aot_step_name(const Gen *g, int32_t s) {
  const TnKernStep *st = step(g, s);
  const char *k = st->k.kernel;
  if (g_str_has_prefix(k, "tn_crt_")) k += 7;
  char *id = tn__aot_c_ident(k);
  char *n = g_strdup_printf("tvmgen_%s_op%d_%s", g->o.name, s, id);
  g_free(id);
  return n;
}

/* The check that fails a model's build where the crt leaves out forms f
 * of step s (TN_CRT_<KIND>_S8_FORMS, metadata.json's <kind>_s8_forms). */
static void forms_check(const Gen *g, GString *c, int32_t s, int32_t f,
                        const char *what, const char *kind) {
  char *lower = g_ascii_strdown(kind, -1);
  g_string_append_printf(c, "#if defined(TN_CRT_%s_S8_FORMS) && "
                         "((TN_CRT_%s_S8_FORMS) & 0x%02x) != 0x%02x\n"
                         "#error \"%s (%s) takes the %s forms 0x%02x "
                         "(TN_CRT_%s_FORM_*), which TN_CRT_%s_S8_FORMS leaves "
                         "out of the crt: build the crt with the model's "
                         "(metadata.json, %s_s8_forms), or without it\"\n"
                         "#endif\n",
                         kind, kind, (unsigned)f, (unsigned)f, g->fn_names[s],
                         step(g, s)->op, what, (unsigned)f, kind, kind, lower);
  g_free(lower);
}

/* The DSP forms step s's convolution takes with its scratch, added to
 * g->conv_forms, and a check that fails the model's build where the crt
 * it is built with leaves one of them out (TN_CRT_CONV_S8_FORMS), so that
 * no layer runs a slower form than planned without a word. */
static void conv_forms(Gen *g, GString *c, int32_t s, size_t scratch,
                       bool s32) {
  int32_t f = TN_CRT_CONV_FORM_BLOCKS; /* the int32 form's (s32) */
  if (!s32) {
    const TnCrtCallConvS8 *p = step(g, s)->k.params;
    f = tn_crt_conv2d_s8_forms_isa(&p->g, &p->q, TN_CRT_ISA_ARM_DSP,
                                   tn__aot_in_place(g, s), scratch);
  }
  if (f == 0) return;
  g->conv_forms |= f;
  forms_check(g, c, s, f, "convolution", "CONV");
}

/* The same for the int8 dense layer's forms (TN_CRT_DENSE_S8_FORMS): those
 * step s takes, added to g->dense_forms, and the check. A packed 1x1
 * convolution runs the packed dense loop. */
static void dense_forms(Gen *g, GString *c, int32_t s, const char *sym) {
  int32_t f;
  if (strcmp(sym, "tn_crt_call_dense_s8") == 0) {
    const TnCrtCallDenseS8 *p = step(g, s)->k.params;
    f = tn_crt_dense_s8_forms_isa(&p->d, &p->q, p->packed,
                                  TN_CRT_ISA_ARM_DSP);
  } else if (strcmp(sym, "tn_crt_call_dense_s8_s32") == 0) {
    f = TN_CRT_DENSE_FORM_NK;
  } else if (strcmp(sym, "tn_crt_call_conv2d_s8") == 0 &&
             ((const TnCrtCallConvS8 *)step(g, s)->k.params)->packed) {
    f = TN_CRT_DENSE_FORM_PACKED;
  } else {
    return;
  }
  if (f == 0) return;
  g->dense_forms |= f;
  forms_check(g, c, s, f, "dense", "DENSE");
}

/* With the option "parallel": the TN_CRT_SPLIT_* name step s is cut as
 * (the executor's threads would cut it: tn__kernel_split_kind, a geometry
 * tn_crt_split_count cuts, not in place, not a device's), or NULL. */
static const char *split_kind(Gen *g, int32_t s) {
  static const char *const names[] = {
      NULL, "TN_CRT_SPLIT_CONV2D_S8", "TN_CRT_SPLIT_CONV2D_F32",
      "TN_CRT_SPLIT_DENSE_S8", "TN_CRT_SPLIT_DENSE_F32"};
  const TnKernStep *st = step(g, s);
  if (!g->o.parallel || tn__aot_in_place(g, s) ||
      g_hash_table_lookup(g->o.device_of, st->op))
    return NULL;
  int32_t kind = tn__kernel_split_kind(&st->k);
  if (kind <= 0 || kind >= (int32_t)G_N_ELEMENTS(names) ||
      st->k.nin > 3 || tn_crt_split_count(kind, st->k.params, 2) < 2)
    return NULL;
  return names[kind];
}

int tn__aot_emit_operators(Gen *g, GString *c) {
  GString *decls = g_string_new(NULL);
  for (int32_t s = 0; s < g->nsteps; s++) {
    const TnKernStep *st = step(g, s);
    const TnKernForm *f = st->k.form;
    if (f == NULL) {
      g_string_free(decls, TRUE);
      return tn_error_raise_in(TN_ERR_NOT_IMPLEMENTED, st->op, "the operator "
                               "has no crt kernel (%s), so it cannot be "
                               "compiled to C", st->k.kernel);
    }
    size_t scratch = g->scratch[s] >= 0
                         ? (size_t)g_array_index(g->bufs, Buf,
                                                 g->scratch[s]).size
                         : 0;
    /* named apart from the functions (tvmgen_<m>_op<k>_<kernel>) */
    char *params = g_strdup_printf("tvmgen_%s_params%d", g->o.name, s);
    g_string_truncate(decls, 0);
    tn__emit_params(decls, params, f->params, st->k.params);
    g_string_append_printf(c, "\n/* %s: %s%s */\n%s", st->op, st->k.kernel,
                           tn__aot_in_place(g, s) ? ", in place" : "",
                           decls->str);
    if (g->o.isa == TN_CRT_ISA_ARM_DSP &&
        (strcmp(f->symbol, "tn_crt_call_conv2d_s8") == 0 ||
         strcmp(f->symbol, "tn_crt_call_conv2d_s8_s32") == 0))
      conv_forms(g, c, s, scratch,
                 strcmp(f->symbol, "tn_crt_call_conv2d_s8_s32") == 0);
    if (g->o.isa == TN_CRT_ISA_ARM_DSP) dense_forms(g, c, s, f->symbol);
    const char *split = split_kind(g, s);
    if (split) {
      /* the host's threads may run it in parts (tvmnode/crt/calls.h) */
      g->split_steps++;
      g_string_append_printf(c, "TVMGEN_INTERNAL int32_t %s(const void *const "
                             "*in, void *out, void *scratch) {\n  return "
                             "tn_crt_call_split(%s, %s, &%s, %d, in, out, "
                             "scratch, %zu);\n}\n",
                             g->fn_names[s], split, f->symbol, params,
                             st->k.nin, scratch);
    } else {
      g_string_append_printf(c, "TVMGEN_INTERNAL int32_t %s(const void *const "
                             "*in, void *out, void *scratch) {\n  return "
                             "%s(&%s, in, out, scratch, %zu);\n}\n",
                             g->fn_names[s], f->symbol, params, scratch);
    }
    g_free(params);
  }
  g_string_free(decls, TRUE);
  return 0;
}

/* ---- the interface ---------------------------------------------------------- */

static bool has_ws(const Gen *g) {
  for (guint p = 0; p < g->o.pool_names->len; p++)
    if (g->res.size[p] > 0) return true;
  return false;
}

/* The parameter list of tvmgen_<m>_run. */
static void run_params(Gen *g, GString *s) {
  const char *m = g->o.name;
  GPtrArray *ps = g_ptr_array_new_with_free_func(g_free);
  if (!g->o.io_in_pool) {
    g_ptr_array_add(ps, g_strdup_printf("struct tvmgen_%s_inputs *inputs", m));
    g_ptr_array_add(ps, g_strdup_printf("struct tvmgen_%s_outputs *outputs",
                                        m));
  }
  if (has_ws(g) || g->o.io_in_pool)
    g_ptr_array_add(ps, g_strdup_printf("struct tvmgen_%s_workspace_pools "
                                        "*workspace_pools", m));
  if (g->o.consts_in_pool && g->const_pool > 0)
    g_ptr_array_add(ps, g_strdup_printf("struct tvmgen_%s_constant_pools "
                                        "*constant_pools", m));
  if (g->o.devices->len)
    g_ptr_array_add(ps, g_strdup_printf("struct tvmgen_%s_devices *devices",
                                        m));
  if (g->states->len) g_ptr_array_add(ps, g_strdup("void *state_pool"));
  if (ps->len == 0) g_string_append(s, "void");
  for (guint i = 0; i < ps->len; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(ps, i));
  g_ptr_array_free(ps, TRUE);
}

void tn__aot_header(Gen *g, GString *h) {
  const char *m = g->o.name, *M = g->M;
  g_string_append_printf(h,
      "/*\n * tvmgen_%s.h: the C interface of model '%s', generated by "
      "tvmnode %s.\n *\n * Call tvmgen_%s_run with the application's "
      "buffers; it allocates nothing\n * and returns 0 or a TnCrtStatus code "
      "(tvmnode/crt/status.h).\n */\n#ifndef TVMGEN_%s_H_\n#define "
      "TVMGEN_%s_H_\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      "#include \"tvmnode/crt/model.h\"\n%s\n#ifndef TVMGEN_API\n#if defined("
      "__GNUC__) || defined(__clang__)\n#define TVMGEN_API __attribute__(("
      "visibility(\"default\")))\n#else\n#define TVMGEN_API\n#endif\n#endif"
      "\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", m, m, tn_version(),
      m, M, M,
      tn__aot_params(g) ? "#include \"tvmnode/crt/params.h\"\n" : "");
  for (int pass = 0; pass < 2; pass++) {
    GArray *ios = pass ? g->outs : g->ins;
    for (guint i = 0; i < ios->len; i++) {
      const Io *io = &g_array_index(ios, Io, i);
      char *up = g_ascii_strup(io->name, -1);
      g_string_append_printf(h, "#define TVMGEN_%s_%s_SIZE %" PRId64 "\n",
                             M, up, io->nbytes);
      g_free(up);
    }
  }
  for (guint p = 0; p < g->o.pool_names->len; p++) {
    if (g->res.size[p] == 0 && !(p == 0 && g->o.io_in_pool)) continue;
    char *up = g_ascii_strup(g_ptr_array_index(g->o.pool_names, p), -1);
    g_string_append_printf(h, "#define TVMGEN_%s_%s_WORKSPACE_POOL_SIZE %"
                           PRId64 "\n", M, up, g->res.size[p]);
    g_free(up);
  }
  if (g->o.consts_in_pool && g->const_pool > 0)
    g_string_append_printf(h, "#define TVMGEN_%s_CONSTANT_POOL_SIZE %" PRId64
                           "\n", M, g->const_pool);
  if (tn__aot_params(g))
    g_string_append_printf(h, "/* The id a parameter blob for this model "
                           "carries (tvmnode/crt/params.h). */\n#define "
                           "TVMGEN_%s_MODEL_ID UINT64_C(0x%016" PRIx64 ")\n",
                           M, g->model_id);
  tn__aot_header_state(g, h);
  g_string_append_printf(h, "#define TVMGEN_%s_ALIGNMENT %" PRId64 "\n\n", M,
                         g->o.align);
  /* --constants-section, --workspace-section: the section names, and an
   * attribute that puts a definition there (the generated constants take
   * theirs; the application declares its pools with the other) */
  for (int k = 0; k < 2; k++) {
    const char *sec = k ? g->o.ws_section : g->o.const_section;
    const char *what = k ? "WORKSPACE" : "CONSTANTS";
    if (sec == NULL) continue;
    if (k)
      g_string_append_printf(h, "/* The section the workspace pools belong "
                             "in: declare each with TVMGEN_%s_WORKSPACE_"
                             "SECTION. */\n", M);
    else
      g_string_append(h, "/* The section of the constants. */\n");
    g_string_append_printf(
        h, "#define TVMGEN_%s_%s_SECTION_NAME \"%s\"\n#if defined(__GNUC__) "
        "|| defined(__clang__)\n#define TVMGEN_%s_%s_SECTION __attribute__(("
        "section(\"%s\")))\n#else\n#define TVMGEN_%s_%s_SECTION\n#endif\n\n",
        M, what, sec, M, what, sec, M, what);
  }
  g_string_append_printf(h, "struct tvmgen_%s_inputs {\n", m);
  for (guint i = 0; i < g->ins->len; i++)
    g_string_append_printf(h, "  void *%s;\n",
                           g_array_index(g->ins, Io, i).name);
  if (g->ins->len == 0) g_string_append(h, "  void *unused;\n");
  g_string_append_printf(h, "};\n\nstruct tvmgen_%s_outputs {\n", m);
  for (guint i = 0; i < g->outs->len; i++)
    g_string_append_printf(h, "  void *%s;\n",
                           g_array_index(g->outs, Io, i).name);
  g_string_append(h, "};\n\n");
  if (has_ws(g) || g->o.io_in_pool) {
    g_string_append_printf(h, "struct tvmgen_%s_workspace_pools {\n", m);
    for (guint p = 0; p < g->o.pool_names->len; p++)
      if (g->res.size[p] > 0 || (p == 0 && g->o.io_in_pool))
        g_string_append_printf(h, "  void *%s;\n",
                               (char *)g_ptr_array_index(g->o.pool_names, p));
    g_string_append(h, "};\n\n");
  }
  if (g->o.consts_in_pool && g->const_pool > 0) {
    g_string_append_printf(h, "struct tvmgen_%s_constant_pools {\n  void "
                           "*constants;\n};\n\n/* The initial contents of "
                           "the constant pool: copy them in before the "
                           "first run. */\nextern TVMGEN_API const uint8_t "
                           "tvmgen_%s_constant_pool_data[%" PRId64 "];\n"
                           "#define TVMGEN_%s_CONSTANT_POOL_DATA "
                           "tvmgen_%s_constant_pool_data\n\n", m, m,
                           g->const_pool, M, m);
    g_string_append_printf(h, "/* What tn_crt_params_verify checks a "
                           "parameter blob against (weights\n * supplied "
                           "at run time, tvmnode/crt/params.h). */\nextern "
                           "TVMGEN_API const TnCrtParamsLayout tvmgen_%s_"
                           "params_layout;\n\n", m);
  }
  if (g->o.devices->len) {
    g_string_append_printf(h, "struct tvmgen_%s_devices {\n", m);
    for (guint d = 0; d < g->o.devices->len; d++)
      g_string_append_printf(h, "  void *%s;\n",
                             (char *)g_ptr_array_index(g->o.devices, d));
    g_string_append(h, "};\n\n");
    for (guint d = 0; d < g->o.devices->len; d++)
      g_string_append_printf(h, "/* Provided by the application: compute "
                             "`call` on device '%s'\n * (`device` is the "
                             "handle from struct tvmgen_%s_devices). */\n"
                             "int32_t tvmgen_%s_%s_compute(void *device, "
                             "const TnCrtDeviceCall *call);\n\n",
                             (char *)g_ptr_array_index(g->o.devices, d), m,
                             m, (char *)g_ptr_array_index(g->o.devices, d));
  }
  if (g->o.io_in_pool) {
    g_string_append_printf(h, "/* Where the inputs and outputs live in the "
                           "workspace pool. */\nTVMGEN_API struct tvmgen_%s_"
                           "inputs tvmgen_%s_map_inputs(struct tvmgen_%s_"
                           "workspace_pools *workspace_pools);\nTVMGEN_API "
                           "struct tvmgen_%s_outputs tvmgen_%s_map_outputs(struct tvmgen_%s_"
                           "workspace_pools *workspace_pools);\n\n", m, m, m,
                           m, m, m);
  }
  g_string_append_printf(h, "/* One inference. */\nTVMGEN_API int32_t "
                         "tvmgen_%s_run(", m);
  run_params(g, h);
  g_string_append(h, ");\n\n");
  tn__aot_header_state_fn(g, h);
  if (g->states->len)
    g_string_append_printf(h, "/* The model's descriptor, for the generic "
                           "firmware API (tvmnode/crt/model.h):\n * "
                           "tvmgen_%s_model is its base. */\nextern TVMGEN_API "
                           "const TnCrtStatefulModel tvmgen_%s_stateful_model;"
                           "\n#define tvmgen_%s_model (tvmgen_%s_stateful_model"
                           ".base)\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif "
                           "/* TVMGEN_%s_H_ */\n", m, m, m, m, M);
  else
    g_string_append_printf(h, "/* The model's descriptor, for the generic "
                           "firmware API (tvmnode/crt/model.h). */\nextern "
                           "TVMGEN_API const TnCrtModel tvmgen_%s_model;\n\n#ifdef "
                           "__cplusplus\n}\n#endif\n\n#endif /* TVMGEN_%s_H_ */"
                           "\n", m, M);
}

/* The checks at the top of run: NULL and alignment. */
static void run_checks(Gen *g, GString *c) {
  if (!g->o.io_in_pool) {
    g_string_append(c, "  if (!inputs || !outputs) return TN_CRT_NULL_POINTER;\n");
    for (int pass = 0; pass < 2; pass++) {
      GArray *ios = pass ? g->outs : g->ins;
      for (guint i = 0; i < ios->len; i++)
        g_string_append_printf(c, "  if (!%s->%s) return TN_CRT_NULL_POINTER;"
                               "\n", pass ? "outputs" : "inputs",
                               g_array_index(ios, Io, i).name);
    }
  }
  if (has_ws(g) || g->o.io_in_pool) {
    g_string_append(c, "  if (!workspace_pools) return TN_CRT_NULL_POINTER;\n");
    for (guint p = 0; p < g->o.pool_names->len; p++) {
      if (g->res.size[p] == 0 && !(p == 0 && g->o.io_in_pool)) continue;
      const char *pn = g_ptr_array_index(g->o.pool_names, p);
      g_string_append_printf(c, "  uint8_t *ws%u = (uint8_t *)workspace_pools"
                             "->%s;\n  if (!ws%u) return TN_CRT_NULL_POINTER;"
                             "\n  if ((uintptr_t)ws%u %% %" PRId64 " != 0) "
                             "return TN_CRT_POOL_MISALIGNED;\n", p, pn, p, p,
                             g->o.align);
    }
  }
  if (g->o.consts_in_pool && g->const_pool > 0)
    g_string_append_printf(c, "  if (!constant_pools || !constant_pools->"
                           "constants) return TN_CRT_NULL_POINTER;\n  const "
                           "uint8_t *cp = (const uint8_t *)constant_pools->"
                           "constants;\n  if ((uintptr_t)cp %% %" PRId64
                           " != 0) return TN_CRT_POOL_MISALIGNED;\n",
                           g->o.align);
  if (g->states->len)
    g_string_append_printf(c, "  uint8_t *sp = (uint8_t *)state_pool;\n  if "
                           "(!sp) return TN_CRT_NULL_POINTER;\n  if ((uintptr_t)"
                           "sp %% %" PRId64 " != 0) return TN_CRT_POOL_MISALIGNED;"
                           "\n", g->o.align);
  if (g->o.devices->len) {
    g_string_append(c, "  if (!devices) return TN_CRT_NULL_POINTER;\n");
    for (guint d = 0; d < g->o.devices->len; d++)
      g_string_append_printf(c, "  if (!devices->%s) return "
                             "TN_CRT_NULL_POINTER;\n",
                             (char *)g_ptr_array_index(g->o.devices, d));
  }
}

/* io in the pool: the inputs and outputs structs point into it */
static void io_locals(Gen *g, GString *c) {
  if (!g->o.io_in_pool) return;
  g_string_append_printf(c, "  struct tvmgen_%s_inputs in_ = tvmgen_%s_map_"
                         "inputs(workspace_pools), *inputs = &in_;\n  struct "
                         "tvmgen_%s_outputs out_ = tvmgen_%s_map_outputs("
                         "workspace_pools), *outputs = &out_;\n  (void)inputs, (void)outputs;"
                         "\n", g->o.name, g->o.name, g->o.name, g->o.name);
}

void tn__aot_emit_run(Gen *g, GString *c) {
  const char *m = g->o.name;
  for (int32_t s = 0; s < g->nsteps; s++)
    g_string_append_printf(c, "TVMGEN_INTERNAL int32_t %s(const void *const "
                           "*in, void *out, void *scratch);\n",
                           g->fn_names[s]);
  if (g->o.io_in_pool) {
    for (int pass = 0; pass < 2; pass++) {
      GArray *ios = pass ? g->outs : g->ins;
      const char *what = pass ? "outputs" : "inputs";
      g_string_append_printf(c, "\nstruct tvmgen_%s_%s tvmgen_%s_map_%s("
                             "struct tvmgen_%s_workspace_pools *workspace_"
                             "pools) {\n  struct tvmgen_%s_%s r;\n  uint8_t "
                             "*ws0 = workspace_pools ? (uint8_t *)workspace_"
                             "pools->%s : 0;\n", m, what, m, what, m, m, what,
                             (char *)g_ptr_array_index(g->o.pool_names, 0));
      for (guint p = 1; p < g->o.pool_names->len; p++)
        if (g->res.size[p] > 0)
          g_string_append_printf(c, "  uint8_t *ws%u = workspace_pools ? "
                                 "(uint8_t *)workspace_pools->%s : 0;\n", p,
                                 (char *)g_ptr_array_index(g->o.pool_names,
                                                           p));
      if (ios->len == 0) g_string_append(c, "  r.unused = 0;\n");
      for (guint i = 0; i < ios->len; i++) {
        const Io *io = &g_array_index(ios, Io, i);
        const TnPlanBuffer *p = &g->plan[io->buf];
        g_string_append_printf(c, "  r.%s = ws%d ? ws%d + %" PRId64 " : 0;\n",
                               io->name, p->pool, p->pool, p->offset);
      }
      for (guint p = 0; p < g->o.pool_names->len; p++)
        if (p == 0 || g->res.size[p] > 0)
          g_string_append_printf(c, "  (void)ws%u;\n", p);
      g_string_append(c, "  return r;\n}\n");
    }
  }
  g_string_append_printf(c, "\nint32_t tvmgen_%s_run(", m);
  run_params(g, c);
  g_string_append(c, ") {\n");
  run_checks(g, c);
  io_locals(g, c);
  g_string_append(c, "  int32_t st;\n");
  GString *w = g_string_new(NULL);
  for (int32_t s = 0; s < g->nsteps; s++) {
    const TnKernStep *st = step(g, s);
    g_string_append_printf(c, "  {\n    const void *in[%d] = {",
                           st->k.nin > 0 ? st->k.nin : 1);
    for (int32_t i = 0; i < st->k.nin; i++) {
      g_string_truncate(w, 0);
      where(g, w, st->in[i]);
      g_string_append_printf(c, "%s%s", i ? ", " : "", w->str);
    }
    if (st->k.nin == 0) g_string_append_c(c, '0');
    g_string_truncate(w, 0);
    where(g, w, st->out);
    g_string_append_printf(c, "};\n    void *out = %s;\n", w->str);
    if (g->scratch[s] >= 0) {
      const TnPlanBuffer *p = &g->plan[g->scratch[s]];
      g_string_append_printf(c, "    void *scratch = ws%d + %" PRId64 ";\n",
                             p->pool, p->offset);
    } else {
      g_string_append(c, "    void *scratch = 0;\n");
    }
    const char *op = st->op;
    gpointer dev = g_hash_table_lookup(g->o.device_of, op);
    if (dev) {
      const char *dn = g_ptr_array_index(g->o.devices,
                                         GPOINTER_TO_INT(dev) - 1);
      size_t ss = g->scratch[s] >= 0
                      ? (size_t)g_array_index(g->bufs, Buf, g->scratch[s]).size
                      : 0;
      g_string_append_printf(c, "    const TnCrtDeviceCall call = {\"%s\", "
                             "\"%s\", %d, in, out, scratch, %zuu, %s};\n    "
                             "st = tvmgen_%s_%s_compute(devices->%s, &call);"
                             "\n    if (st != 0) return TN_CRT_DEVICE_FAILED;"
                             "\n  }\n", op, st->k.kernel, st->k.nin, ss,
                             g->fn_names[s], m, dn, dn);
    } else {
      g_string_append_printf(c, "    st = %s(in, out, scratch);\n    if (st "
                             "!= 0) return st;\n  }\n", g->fn_names[s]);
    }
  }
  /* outputs not computed in place: copied */
  for (guint i = 0; i < g->outs->len; i++) {
    int32_t r = root(g, g_array_index(g->v.outputs, int32_t, i));
    const Io *io = &g_array_index(g->outs, Io, i);
    Home h = g->home[r];
    bool direct = g->o.io_in_pool
                      ? (h.kind == H_POOL && buf_root(g, h.index) ==
                                                 buf_root(g, io->buf))
                      : (h.kind == H_OUTPUT && h.index == (int32_t)i);
    if (direct) continue;
    g_string_truncate(w, 0);
    where(g, w, r);
    g_string_append_printf(c, "  TVMGEN_MEMCPY(outputs->%s, %s, %" PRId64
                           ");\n",
                           io->name, w->str, io->nbytes);
  }
  g_string_free(w, TRUE);
  tn__aot_emit_state_end(g, c);
  g_string_append(c, "  (void)st;\n  return 0;\n}\n");
  tn__aot_emit_state_reset(g, c);
}

static void tensor_infos(Gen *g, GString *c, bool outputs) {
  GArray *ios = outputs ? g->outs : g->ins;
  const char *m = g->o.name, *what = outputs ? "outputs" : "inputs";
  for (guint i = 0; i < ios->len; i++) {
    const Io *io = &g_array_index(ios, Io, i);
    int32_t nd = (int32_t)tn__ir_ndim(io->type);
    GString *dims = g_string_new(NULL);
    for (int32_t d = 0; d < nd; d++)
      g_string_append_printf(dims, "%s%" PRId64, d ? ", " : "",
                             tn__ir_dims(io->type)[d]);
    g_string_append_printf(c, "static const int32_t tvmgen_%s_%s%u_shape[%d]"
                           " = {%s};\n", m, what, i, nd ? nd : 1,
                           nd ? dims->str : "1");
    g_string_free(dims, TRUE);
  }
  g_string_append_printf(c, "static const TnCrtTensorInfo tvmgen_%s_%s[%u] = "
                         "{\n", m, what, ios->len ? ios->len : 1);
  for (guint i = 0; i < ios->len; i++) {
    const Io *io = &g_array_index(ios, Io, i);
    GString *sc = g_string_new(NULL);
    tn__emit_f32(sc, (float)io->scale);
    const TnPlanBuffer *p = io->buf >= 0 ? &g->plan[io->buf] : NULL;
    g_string_append_printf(c, "    {\"%s\", %d, %d, tvmgen_%s_%s%u_shape, %"
                           PRId64 "u, %s, %" PRId64 ", %d, %" PRId64 "u},\n",
                           io->name, tn__kernel_crt_dtype(io->type->dtype),
                           (int)tn__ir_ndim(io->type), m, what, i, io->nbytes,
                           sc->str, io->zero_point, p ? p->pool : -1,
                           p ? p->offset : 0);
    g_string_free(sc, TRUE);
  }
  if (ios->len == 0) g_string_append(c, "    {0, 0, 0, 0, 0, 0, 0, -1, 0},\n");
  g_string_append(c, "};\n");
}

int64_t tn__aot_macs(Gen *g) {
  int64_t n = 0;
  for (int32_t s = 0; s < g->nsteps; s++) n += step(g, s)->k.macs;
  return n;
}

void tn__aot_emit_descriptor(Gen *g, GString *c) {
  const char *m = g->o.name;
  guint np = g->o.pool_names->len;
  tensor_infos(g, c, false);
  tensor_infos(g, c, true);
  /* the pools the run function takes, in its struct's order */
  GArray *used = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint p = 0; p < np; p++)
    if (g->res.size[p] > 0 || (p == 0 && g->o.io_in_pool))
      g_array_append_val(used, p);
  g_string_append_printf(c, "static const TnCrtPoolInfo tvmgen_%s_workspace"
                         "_pool_info[%u] = {\n", m, used->len ? used->len : 1);
  for (guint i = 0; i < used->len; i++) {
    guint p = g_array_index(used, guint, i);
    g_string_append_printf(c, "    {\"%s\", %" PRId64 "u, %" PRId64 "u},\n",
                           (char *)g_ptr_array_index(g->o.pool_names, p),
                           g->res.size[p], g->o.align);
  }
  if (used->len == 0) g_string_append(c, "    {0, 0, 0},\n");
  g_string_append(c, "};\n");
  bool cp = g->o.consts_in_pool && g->const_pool > 0;
  if (cp)
    g_string_append_printf(c, "static const TnCrtPoolInfo tvmgen_%s_constant"
                           "_pool_info[1] = {{\"constants\", %" PRId64 "u, %"
                           PRId64 "u}};\nstatic const uint8_t *const "
                           "tvmgen_%s_constant_pool_init[1] = {tvmgen_%s_"
                           "constant_pool_data};\n", m, g->const_pool,
                           g->o.align, m, m);
  if (g->o.devices->len) {
    g_string_append_printf(c, "static const char *const tvmgen_%s_device_"
                           "names[%u] = {", m, g->o.devices->len);
    for (guint d = 0; d < g->o.devices->len; d++)
      g_string_append_printf(c, "%s\"%s\"", d ? ", " : "",
                             (char *)g_ptr_array_index(g->o.devices, d));
    g_string_append(c, "};\n");
  }
  /* the array form of run */
  bool sp = g->states->len > 0;
  g_string_append_printf(c, "\nstatic int32_t tvmgen_%s_run_ptrs%s(void *const "
                         "*inputs, void *const *outputs, void *const *ws, "
                         "void *const *cps, void *const *devices%s) {\n", m,
                         sp ? "_state" : "", sp ? ", void *state_pool" : "");
  GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
  if (!g->o.io_in_pool) {
    g_string_append_printf(c, "  struct tvmgen_%s_inputs in;\n  struct "
                           "tvmgen_%s_outputs out;\n", m, m);
    for (guint i = 0; i < g->ins->len; i++)
      g_string_append_printf(c, "  in.%s = inputs[%u];\n",
                             g_array_index(g->ins, Io, i).name, i);
    if (g->ins->len == 0) g_string_append(c, "  in.unused = 0;\n");
    for (guint i = 0; i < g->outs->len; i++)
      g_string_append_printf(c, "  out.%s = outputs[%u];\n",
                             g_array_index(g->outs, Io, i).name, i);
    g_ptr_array_add(args, g_strdup("&in"));
    g_ptr_array_add(args, g_strdup("&out"));
  }
  if (used->len) {
    g_string_append_printf(c, "  struct tvmgen_%s_workspace_pools w;\n", m);
    for (guint i = 0; i < used->len; i++)
      g_string_append_printf(c, "  w.%s = ws[%u];\n",
                             (char *)g_ptr_array_index(
                                 g->o.pool_names, g_array_index(used, guint,
                                                                i)), i);
    g_ptr_array_add(args, g_strdup("&w"));
  }
  if (cp) {
    g_string_append_printf(c, "  struct tvmgen_%s_constant_pools k;\n  "
                           "k.constants = cps[0];\n", m);
    g_ptr_array_add(args, g_strdup("&k"));
  }
  if (g->o.devices->len) {
    g_string_append_printf(c, "  struct tvmgen_%s_devices d;\n", m);
    for (guint d = 0; d < g->o.devices->len; d++)
      g_string_append_printf(c, "  d.%s = devices[%u];\n",
                             (char *)g_ptr_array_index(g->o.devices, d), d);
    g_ptr_array_add(args, g_strdup("&d"));
  }
  if (sp) g_ptr_array_add(args, g_strdup("state_pool"));
  g_string_append(c, "  (void)inputs, (void)outputs, (void)ws, (void)cps, "
                  "(void)devices;\n");
  g_string_append_printf(c, "  return tvmgen_%s_run(", m);
  for (guint i = 0; i < args->len; i++)
    g_string_append_printf(c, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(args, i));
  g_string_append(c, ");\n}\n\n");
  g_ptr_array_free(args, TRUE);
  tn__aot_emit_state_descriptor(g, c);
  if (sp)
    g_string_append_printf(c, "const TnCrtStatefulModel tvmgen_%s_stateful_"
                           "model = {{\n    TN_CRT_MODEL_STATE_MAGIC,\n    "
                           "TN_CRT_MODEL_ABI_VERSION,\n    \"%s\",\n    \"%s\","
                           "\n    %u, %u,\n    tvmgen_%s_inputs, tvmgen_%s_"
                           "outputs,\n    %u, tvmgen_%s_workspace_pool_info,\n",
                           m, m, tn_version(), g->ins->len, g->outs->len, m,
                           m, used->len, m);
  else
    g_string_append_printf(
        c, "const TnCrtModel tvmgen_%s_model = {\n    TN_CRT_MODEL_MAGIC,\n    "
        "TN_CRT_MODEL_ABI_VERSION,\n    \"%s\",\n    \"%s\",\n    %u, %u,\n    "
        "tvmgen_%s_inputs, tvmgen_%s_outputs,\n    %u, tvmgen_%s_workspace_"
        "pool_info,\n", m, m, tn_version(), g->ins->len, g->outs->len, m, m,
        used->len, m);
  if (cp)
    g_string_append_printf(c, "    1, tvmgen_%s_constant_pool_info, "
                           "tvmgen_%s_constant_pool_init,\n", m, m);
  else
    g_string_append(c, "    0, 0, 0,\n");
  if (g->o.devices->len)
    g_string_append_printf(c, "    %u, tvmgen_%s_device_names,\n",
                           g->o.devices->len, m);
  else
    g_string_append(c, "    0, 0,\n");
  g_string_append_printf(c, "    INT64_C(%" PRId64 "),\n    %" PRId64 "u,\n    "
                         "tvmgen_%s_run_ptrs,\n", tn__aot_macs(g), g->const_bytes,
                         m);
  if (sp)
    g_string_append_printf(c, "}, %" PRId64 "u, %" PRId64 "u, tvmgen_%s_run_"
                           "ptrs_state, tvmgen_%s_reset};\n", g->state_pool,
                           g->o.align, m, m);
  else
    g_string_append(c, "};\n");
  /* Built into a host program with -DTVMGEN_SYSTEM_LIB, the model adds
   * itself to the system library at start-up: a static list node, so no
   * allocation, and a list head that needs no initialisation, so no
   * constructor order to respect (tvmnode/module.h). */
  g_string_append_printf(c, "\n#ifdef TVMGEN_SYSTEM_LIB\nvoid tn_module_register_"
                         "system(TnCrtModelEntry *entry);\nstatic TnCrtModelEntry "
                         "tvmgen_%s_entry = {&tvmgen_%s_model, 0};\n__attribute__(("
                         "constructor)) static void tvmgen_%s_register(void) {\n  "
                         "tn_module_register_system(&tvmgen_%s_entry);\n}\n#endif\n",
                         m, m, m, m);
  g_array_free(used, TRUE);
}

bool tn__aot_params(const Gen *g) {
  return g->o.consts_in_pool && g->const_pool > 0;
}

/* FNV-1a, 64 bits */
static void fnv(uint64_t *h, const void *data, size_t n) {
  const uint8_t *p = data;
  for (size_t i = 0; i < n; i++) *h = (*h ^ p[i]) * UINT64_C(0x100000001b3);
}

uint64_t tn__aot_model_id(const Gen *g, const GString *lib0) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  fnv(&h, lib0->str, lib0->len);
  GString *l = g_string_new(NULL);
  g_string_append_printf(l, "pool %" PRId64 " align %" PRId64 "\n",
                         g->const_pool, g->o.align);
  for (guint i = 0; i < g->v.consts->len; i++) {
    if (!g->const_used[i]) continue;
    const DLTensor *dl = tn_tensor_dltensor(g_ptr_array_index(g->v.consts, i));
    char dt[32];
    tn__aot_dtype_str(dl->dtype, dt, sizeof dt);
    g_string_append_printf(l, "const%u %s @%" PRId64 " [", i, dt,
                           g->const_off[i]);
    for (int32_t d = 0; d < dl->ndim; d++)
      g_string_append_printf(l, " %" PRId64, dl->shape[d]);
    g_string_append(l, " ]\n");
  }
  fnv(&h, l->str, l->len);
  g_string_free(l, TRUE);
  return h;
}

void tn__aot_emit_params_layout(Gen *g, GString *c) {
  if (!tn__aot_params(g)) return;
  g_string_append_printf(c, "\nconst TnCrtParamsLayout tvmgen_%s_params_layout"
                         " = {\n    TN_CRT_PARAMS_LAYOUT_MAGIC, TN_CRT_PARAMS_"
                         "VERSION, TVMGEN_%s_MODEL_ID,\n    &tvmgen_%s_model};"
                         "\n", g->o.name, g->M, g->o.name);
}

void tn__aot_emit_pool_data(Gen *g, GString *c) {
  if (!g->o.consts_in_pool || g->const_pool == 0) return;
  g_string_append_printf(c, "const uint8_t tvmgen_%s_constant_pool_data[%"
                         PRId64 "] TVMGEN_ALIGNED(%" PRId64 ")%s%s%s = {",
                         g->o.name, g->const_pool, g->o.align,
                         g->o.const_section ? " TVMGEN_" : "",
                         g->o.const_section ? g->M : "",
                         g->o.const_section ? "_CONSTANTS_SECTION" : "");
  int64_t at = 0;
  for (guint i = 0; i < g->v.consts->len; i++) {
    if (!g->const_used[i]) continue;
    TnObject *t = g_ptr_array_index(g->v.consts, i);
    const DLTensor *dl = tn_tensor_dltensor(t);
    const uint8_t *b = (const uint8_t *)dl->data + dl->byte_offset;
    int64_t nb = tn_tensor_nbytes(t);
    for (; at < g->const_off[i]; at++)
      g_string_append(c, at ? (at % 24 ? ", 0" : ",\n    0") : "0");
    for (int64_t k = 0; k < nb; k++, at++)
      g_string_append_printf(c, at ? (at % 24 ? ", %u" : ",\n    %u") : "%u",
                             (unsigned)b[k]);
  }
  for (; at < g->const_pool; at++)
    g_string_append(c, at ? (at % 24 ? ", 0" : ",\n    0") : "0");
  g_string_append(c, "};\n");
}

/* Generated files include only <stdint.h> and the crt's headers: a bare
 * toolchain (no C library headers) builds them. */
const char tn__aot_preamble[] =
    "#include <stdint.h>\n\n#include \"tvmnode/crt/calls.h\"\n#include "
    "\"tvmnode/crt/model.h\"\n#include \"tvmgen_%s.h\"\n\n#if "
    "defined(__GNUC__) || defined(__clang__)\n#define TVMGEN_ALIGNED(n) "
    "__attribute__((aligned(n)))\n#define TVMGEN_INTERNAL __attribute__(("
    "visibility(\"hidden\")))\n#define TVMGEN_INF (__builtin_inff())\n"
    "#define TVMGEN_NAN (__builtin_nanf(\"\"))\n#define TVMGEN_MEMCPY(d, s, n) "
    "__builtin_memcpy((d), (s), (n))\n#else\n#include <math.h>\n#include "
    "<string.h>\n#define TVMGEN_ALIGNED(n)\n#define TVMGEN_INTERNAL\n#define TVMGEN_INF INFINITY\n"
    "#define TVMGEN_NAN NAN\n#define TVMGEN_MEMCPY memcpy\n#endif\n";

