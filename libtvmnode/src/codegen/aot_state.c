/*
 * aot_state.c: the state of streaming models in generated C.
 *
 * The IR stays functional: a stateful module's "main" takes each state's
 * current value as one of its last parameters and returns the new value
 * as one of its last results, and the module attribute "states" says which
 * (the TFLite importer writes it for resource variables). The generated
 * interface hides them: the application owns one state pool, separate from
 * the workspace and kept across runs, that tvmgen_<name>_run takes as its
 * last argument and tvmgen_<name>_reset fills with the initial values. The
 * pool holds one copy of the states, which steps read in place; the new
 * values are planned in the workspace like any other value (the planner
 * keeps them to the end of the run), and once every step has run they are
 * copied over the current ones, so no step ever reads a state that this
 * run already replaced. A stateless model emits
 * nothing here, and its code is exactly what it was before states existed.
 */
#include "codegen/aot_internal.h"

#define WHO TN_AOT_WHO

static void state_clear(gpointer p) {
  StateIo *s = p;
  g_free(s->name);
  g_free(s->init);
}

void tn__aot_states_clear(Gen *g) {
  if (g->states) g_array_free(g->states, TRUE);
  g->states = NULL;
}

/* Store number `v` as one element of type `t` at `dst`. */
static int put_elem(uint8_t *dst, DLDataType t, const TnAny *v) {
  if (t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) {
    double d;
    if (tn_any_as_float(v, &d)) return -1;
    if (t.bits == 32) {
      float f = (float)d;
      memcpy(dst, &f, 4);
    } else {
      memcpy(dst, &d, 8);
    }
    return 0;
  }
  if ((t.code == kDLInt || t.code == kDLUInt || t.code == kDLBool) &&
      (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    int64_t i;
    if (tn_any_as_int(v, &i)) return -1;
    uint64_t u = (uint64_t)i;
    for (int b = 0; b < t.bits / 8; b++) dst[b] = (uint8_t)(u >> (8 * b));
    return 0;
  }
  return -1;
}

static int state_error(int32_t i, const char *what) {
  return tn_error_raise_in(TN_ERR_VALUE, WHO, "module attribute 'states': "
                           "entry %d %s", i, what);
}

int tn__aot_states(Gen *g) {
  g->states = g_array_new(FALSE, TRUE, sizeof(StateIo));
  g_array_set_clear_func(g->states, state_clear);
  const TnObject *attrs = ((const TnIrModule *)g->mod)->attrs;
  const TnAny *list = tn__aot_opt(attrs, "states");
  if (list == NULL) return 0;
  if (!tn__aot_is_list(list))
    return tn_error_raise_in(TN_ERR_TYPE, WHO, "module attribute 'states' "
                             "expects a list, got %s", tn_any_type_key(list));
  int32_t n = (int32_t)tn_array_size(list->v_obj);
  int32_t nin = (int32_t)g->v.inputs->len, nout = (int32_t)g->v.outputs->len;
  if (n == 0) return 0;
  if (n > nin || n > nout)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "module attribute 'states' "
                             "lists %d states; main has %d parameters and %d "
                             "results", n, nin, nout);
  GHashTable *used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  int rc = 0;
  for (int32_t i = 0; i < n && rc == 0; i++) {
    const TnAny *it = tn_array_at(list->v_obj, i);
    int64_t param = -1, result = -1;
    const char *nm = NULL;
    const TnAny *init = NULL;
    if (tn__aot_is_map(it)) {
      const TnAny *p = tn__aot_opt(it->v_obj, "param"),
                  *r = tn__aot_opt(it->v_obj, "result");
      if (p) tn_any_as_int(p, &param);
      if (r) tn_any_as_int(r, &result);
      tn__aot_opt_str(it->v_obj, "name", &nm);
      init = tn__aot_opt(it->v_obj, "init");
      tn_error_set_raised(NULL);
    }
    if (param != nin - n + i || result != nout - n + i) {
      rc = state_error(i, "must be main's parameter and result after the "
                          "model's inputs and outputs, in order");
      break;
    }
    int32_t rv = g_array_index(g->v.outputs, int32_t, result);
    StateIo s = {0};
    s.type = value(g, rv)->type;
    s.nbytes = value(g, rv)->nbytes;
    char *base = tn__aot_c_ident(nm && *nm ? nm : "state");
    s.name = g_strdup(base);
    for (int k = 1; g_hash_table_contains(used, s.name); k++) {
      g_free(s.name);
      s.name = g_strdup_printf("%s_%d", base, k);
    }
    g_free(base);
    g_hash_table_add(used, g_strdup(s.name));
    int64_t numel = 1;
    for (int64_t d = 0; d < tn__ir_ndim(s.type); d++)
      numel *= tn__ir_dims(s.type)[d];
    int64_t esize = numel ? s.nbytes / numel : 0;
    s.init = g_malloc0((gsize)s.nbytes + 1);
    if (init && (!tn__aot_is_list(init) ||
                 tn_array_size(init->v_obj) != numel)) {
      rc = state_error(i, "has an 'init' that is not a list of one number "
                          "per element");
    }
    for (int64_t e = 0; init && rc == 0 && e < numel; e++)
      if (put_elem(s.init + e * esize, s.type->dtype,
                   tn_array_at(init->v_obj, e))) {
        tn_error_set_raised(NULL);
        rc = state_error(i, "has an initial value that is not a number of "
                            "its element type");
      }
    /* packed: each state aligned to its words (8 for 64-bit elements,
     * else 4), at most to the pool's alignment, as TFLite Micro packs its
     * variable tensors */
    int64_t a = esize > 4 ? 8 : 4;
    if (a > g->o.align) a = g->o.align;
    s.offset = (g->state_bytes + a - 1) / a * a;
    g->state_bytes = s.offset + s.nbytes;
    g_array_append_val(g->states, s);
  }
  g_hash_table_destroy(used);
  return rc;
}

/* A state's current value (a parameter): its slot in the state pool. */
bool tn__aot_state_where(const Gen *g, GString *s, Home h) {
  if (g->states->len == 0) return false;
  if (h.kind == H_INPUT && h.index >= (int32_t)g->ins->len) {
    const StateIo *st = &g_array_index(g->states, StateIo,
                                       h.index - (int32_t)g->ins->len);
    g_string_append_printf(s, "(sp + %" PRId64 ")", st->offset);
    return true;
  }
  return false;
}

/*
 * The copies at the end of a run, each new value over its state's slot,
 * in an order that overwrites a slot only once no copy still to come
 * reads it (a new value may be another state's current value: a delay
 * line). A cycle of such copies (two states swapping) is broken by saving
 * one slot's value in the room after the states (`state_bytes` on) first.
 * With `c` NULL nothing is emitted; returns the bytes of that room.
 */
static int64_t state_copies(const Gen *g, GString *c) {
  int32_t n = (int32_t)g->states->len, nin = (int32_t)g->ins->len;
  int32_t *reads = g_new(int32_t, n); /* the slot copy i reads, or -1 */
  bool *pending = g_new0(bool, n), *from_room = g_new0(bool, n);
  int64_t room = 0;
  GString *w = g_string_new(NULL);
  int32_t left = 0;
  for (int32_t i = 0; i < n; i++) {
    Home h = g->home[root(g, g_array_index(g->v.outputs, int32_t,
                                           (int32_t)g->outs->len + i))];
    reads[i] = h.kind == H_INPUT && h.index >= nin ? h.index - nin : -1;
    pending[i] = reads[i] != i; /* an unchanged state needs no copy */
    left += pending[i];
  }
  while (left > 0) {
    int32_t pick = -1;
    for (int32_t i = 0; i < n && pick < 0; i++) {
      bool read = false;
      for (int32_t k = 0; k < n && pending[i] && !read; k++)
        read = k != i && pending[k] && reads[k] == i;
      if (pending[i] && !read) pick = i;
    }
    if (pick < 0) { /* a cycle: save one slot, its readers read the copy */
      for (pick = 0; !pending[pick]; pick++) {
      }
      const StateIo *st = &g_array_index(g->states, StateIo, pick);
      if (st->nbytes > room) room = st->nbytes;
      if (c)
        g_string_append_printf(c, "  TVMGEN_MEMCPY(sp + %" PRId64 ", sp + %"
                               PRId64 ", %" PRId64 ");\n", g->state_bytes,
                               st->offset, st->nbytes);
      for (int32_t k = 0; k < n; k++)
        if (pending[k] && reads[k] == pick) reads[k] = -1, from_room[k] = true;
      continue;
    }
    const StateIo *st = &g_array_index(g->states, StateIo, pick);
    if (c) {
      g_string_truncate(w, 0);
      if (from_room[pick])
        g_string_append_printf(w, "sp + %" PRId64, g->state_bytes);
      else
        tn__aot_where((Gen *)g, w, root(g, g_array_index(
                                              g->v.outputs, int32_t,
                                              (int32_t)g->outs->len + pick)));
      g_string_append_printf(c, "  TVMGEN_MEMCPY(sp + %" PRId64 ", %s, %"
                             PRId64 ");\n", st->offset, w->str, st->nbytes);
    }
    pending[pick] = false;
    left--;
  }
  g_string_free(w, TRUE);
  g_free(reads), g_free(pending), g_free(from_room);
  return room;
}

int tn__aot_states_plan(Gen *g) {
  if (g->states->len == 0) return 0;
  g->state_bytes = (g->state_bytes + 3) / 4 * 4; /* the room's words */
  int64_t room = state_copies(g, NULL);
  g->state_pool = g->state_bytes + (room + 3) / 4 * 4;
  if (g->state_pool > UINT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, WHO, "the state pool would need %"
                             PRId64 " bytes, more than 4 GiB", g->state_pool);
  return 0;
}

/* The end of run: every step has read the states; the new values become
 * the current ones. */
void tn__aot_emit_state_end(Gen *g, GString *c) {
  if (g->states->len == 0) return;
  g_string_append(c, "  /* every step has read the states: the new values "
                     "become the current ones */\n");
  state_copies(g, c);
}

void tn__aot_emit_state_reset(Gen *g, GString *c) {
  if (g->states->len == 0) return;
  const char *m = g->o.name;
  g_string_append_printf(c, "\nstatic const uint8_t tvmgen_%s_state_init[%"
                         PRId64 "] TVMGEN_ALIGNED(%" PRId64 ") = {", m,
                         g->state_bytes, g->o.align);
  int64_t at = 0;
  for (guint i = 0; i < g->states->len; i++) {
    const StateIo *st = &g_array_index(g->states, StateIo, i);
    for (; at < st->offset; at++)
      g_string_append(c, at ? (at % 24 ? ", 0" : ",\n    0") : "0");
    for (int64_t k = 0; k < st->nbytes; k++, at++)
      g_string_append_printf(c, at ? (at % 24 ? ", %u" : ",\n    %u") : "%u",
                             (unsigned)st->init[k]);
  }
  for (; at < g->state_bytes; at++)
    g_string_append(c, at ? (at % 24 ? ", 0" : ",\n    0") : "0");
  g_string_append_printf(c, "};\n\nint32_t tvmgen_%s_reset(void *state_pool) "
                         "{\n  if (!state_pool) return TN_CRT_NULL_POINTER;\n"
                         "  if ((uintptr_t)state_pool %% %" PRId64 " != 0) "
                         "return TN_CRT_POOL_MISALIGNED;\n  TVMGEN_MEMCPY("
                         "state_pool, tvmgen_%s_state_init, %" PRId64 ");\n"
                         "  return 0;\n}\n", m, g->o.align, m, g->state_bytes);
}

/* The descriptor's plain entry point cannot reach the state. */
void tn__aot_emit_state_descriptor(Gen *g, GString *c) {
  if (g->states->len == 0) return;
  g_string_append_printf(c, "static int32_t tvmgen_%s_run_ptrs(void *const "
                         "*inputs, void *const *outputs, void *const *ws, "
                         "void *const *cps, void *const *devices) {\n  (void)"
                         "inputs, (void)outputs, (void)ws, (void)cps, (void)"
                         "devices;\n  return TN_CRT_NOT_BOUND; /* the state "
                         "pool: run_with_state */\n}\n\n", g->o.name);
}

void tn__aot_header_state(Gen *g, GString *h) {
  if (g->states->len == 0) return;
  g_string_append_printf(h, "#define TVMGEN_%s_STATE_POOL_SIZE %" PRId64 "\n",
                         g->M, g->state_pool);
}

void tn__aot_header_state_fn(Gen *g, GString *h) {
  if (g->states->len == 0) return;
  g_string_append_printf(h, "/* The model keeps state between runs in "
                         "`state_pool` (TVMGEN_%s_STATE_POOL_SIZE\n * bytes, "
                         "aligned to TVMGEN_%s_ALIGNMENT, owned by the "
                         "application and\n * kept across runs; not part of "
                         "the workspace). Reset gives the states\n * their "
                         "initial values: call it before the first run and "
                         "to start a new\n * stream. */\nTVMGEN_API int32_t "
                         "tvmgen_%s_reset(void *state_pool);\n\n", g->M,
                         g->M, g->o.name);
}
