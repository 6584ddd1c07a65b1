/*
 * printer.c: a readable text form of any value, and Graphviz DOT for object
 * graphs, both driven by the reflection table.
 *
 * A type can print itself by setting the "__repr__" type attribute to a
 * function from the object to a string; otherwise a node prints as
 * `type.key(field=value, ...)`. A first pass counts how often each object is
 * reached, so that an object shared within the graph is printed once and
 * labelled (`#1=...`) and later mentioned as `#1`: a DAG with heavy sharing
 * prints in linear size instead of exponential. Nesting deeper than
 * MAX_DEPTH prints as "...", so a pathological chain cannot exhaust the
 * stack.
 */
#include "reflect/reflect_internal.h"

#include <inttypes.h>
#include <stdio.h>

#define MAX_DEPTH 256

typedef struct {
  GString *out;
  GHashTable *refs;   /* object -> times reached within the graph */
  GHashTable *labels; /* shared object -> label number, once printed */
  int next_label;
} Printer;

static bool is_container(const TnObject *o) {
  int32_t t = o->type_index;
  return t == TN_TYPE_ARRAY || t == TN_TYPE_LIST || t == TN_TYPE_MAP ||
         t == TN_TYPE_DICT || tn__node_info(t) != NULL;
}

/* Count how many times each object is reached (children of an object are
 * walked once, on its first visit). */
static void count_refs(Printer *p, const TnAny *root) {
  typedef struct {
    const TnObject *obj;
    int64_t pos;
  } F;
  if (!tn_any_is_object(root)) return;
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(F));
  g_hash_table_insert(p->refs, root->v_obj, GINT_TO_POINTER(1));
  F f0 = {root->v_obj, 0};
  if (is_container(root->v_obj)) g_array_append_val(stack, f0);
  while (stack->len > 0) {
    F *f = &g_array_index(stack, F, stack->len - 1);
    TnAny c;
    if (!tn__object_next_child(f->obj, &f->pos, &c)) {
      g_array_set_size(stack, stack->len - 1);
      continue;
    }
    if (!tn_any_is_object(&c)) continue;
    int n = GPOINTER_TO_INT(g_hash_table_lookup(p->refs, c.v_obj));
    g_hash_table_insert(p->refs, c.v_obj, GINT_TO_POINTER(n + 1));
    if (n == 0 && is_container(c.v_obj)) {
      F nf = {c.v_obj, 0};
      g_array_append_val(stack, nf);
    }
  }
  g_array_free(stack, TRUE);
}

static void print_text(GString *out, const char *d, size_t n, char quote) {
  g_string_append_c(out, quote);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)d[i];
    if (c == (unsigned char)quote || c == '\\') g_string_append_printf(out, "\\%c", c);
    else if (c == '\n') g_string_append(out, "\\n");
    else if (c == '\t') g_string_append(out, "\\t");
    else if (c < 0x20 || c == 0x7f) g_string_append_printf(out, "\\x%02x", c);
    else g_string_append_c(out, (char)c);
  }
  g_string_append_c(out, quote);
}

static void print_value(Printer *p, const TnAny *v, int depth);

/* A type's own printer, if it has one. True if it printed. */
static bool custom_repr(Printer *p, TnObject *o) {
  const TnAny *fn = tn_type_attr_find("__repr__", o->type_index);
  if (fn == NULL || fn->type_index != TN_TYPE_FUNCTION) return false;
  TnAny arg = tn_any_obj(o), ret = tn_any_none();
  const char *s;
  size_t n;
  if (tn_func_call(fn->v_obj, &arg, 1, &ret) == 0 &&
      tn_any_as_str(&ret, &s, &n) == 0) {
    g_string_append_len(p->out, s, (gssize)n);
  } else {
    TnObject *e = tn_error_take_raised();
    g_string_append_printf(p->out, "<%s: __repr__ failed: %s>",
                           tn_object_type_key(o),
                           e ? tn_error_message(e) : "no string returned");
    tn_object_release(e);
  }
  tn_any_clear(&ret);
  return true;
}

static void print_object(Printer *p, TnObject *o, int depth) {
  int32_t t = o->type_index;
  GString *out = p->out;
  char buf[64];
  if (t == TN_TYPE_SHAPE) {
    const TnShapeObj *s = (const TnShapeObj *)o;
    g_string_append(out, "Shape(");
    for (int64_t i = 0; i < s->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", s->data[i]);
    g_string_append_c(out, ')');
    return;
  }
  if (t == TN_TYPE_TENSOR) {
    const DLTensor *dl = &((TnTensorObj *)o)->dl;
    g_string_append(out, "Tensor(shape=(");
    for (int32_t i = 0; i < dl->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", dl->shape[i]);
    if (dl->ndim == 1) g_string_append_c(out, ',');
    g_string_append_printf(out, "), dtype=%s, device=",
                           tn__dtype_text(dl->dtype, buf, sizeof buf));
    g_string_append_printf(out, "%s)",
                           tn__device_text(dl->device, buf, sizeof buf));
    return;
  }
  if (t == TN_TYPE_ERROR) {
    g_string_append_printf(out, "%s(", tn_error_kind(o));
    const char *m = tn_error_message(o);
    print_text(out, m, strlen(m), '"');
    g_string_append_c(out, ')');
    return;
  }
  if (!is_container(o)) {
    g_string_append_printf(out, "<%s at %p>", tn_object_type_key(o), (void *)o);
    return;
  }
  if (depth >= MAX_DEPTH) {
    g_string_append(out, "...");
    return;
  }
  if (t == TN_TYPE_ARRAY || t == TN_TYPE_LIST) {
    const TnArrayObj *a = (const TnArrayObj *)o;
    g_string_append_c(out, '[');
    for (int64_t i = 0; i < a->size; i++) {
      if (i) g_string_append(out, ", ");
      print_value(p, &a->data[i], depth + 1);
    }
    g_string_append_c(out, ']');
    return;
  }
  if (t == TN_TYPE_MAP || t == TN_TYPE_DICT) {
    const TnMapObj *m = (const TnMapObj *)o;
    g_string_append_c(out, '{');
    bool first = true;
    for (int64_t i = 0; i < m->used; i++) {
      const TnMapEntry *e = &m->entries[i];
      if (e->key.type_index == TN__MAP_DELETED) continue;
      if (!first) g_string_append(out, ", ");
      first = false;
      print_value(p, &e->key, depth + 1);
      g_string_append(out, ": ");
      print_value(p, &e->value, depth + 1);
    }
    g_string_append_c(out, '}');
    return;
  }
  const TnNodeInfo *n = tn__node_info(t);
  g_string_append_printf(out, "%s(", tn_object_type_key(o));
  for (int32_t i = 0; i < n->nfields; i++) {
    TnAny v;
    tn__field_view(o, &n->fields[i], &v);
    g_string_append_printf(out, "%s%s=", i ? ", " : "", n->fields[i].desc.name);
    print_value(p, &v, depth + 1);
  }
  g_string_append_c(out, ')');
}

static void print_value(Printer *p, const TnAny *v, int depth) {
  GString *out = p->out;
  char buf[64];
  const char *d;
  size_t n;
  switch (v->type_index) {
    case TN_TYPE_NONE: g_string_append(out, "None"); return;
    case TN_TYPE_BOOL: g_string_append(out, v->v_int64 ? "True" : "False"); return;
    case TN_TYPE_INT: g_string_append_printf(out, "%" PRId64, v->v_int64); return;
    case TN_TYPE_FLOAT:
      g_ascii_dtostr(buf, sizeof buf, v->v_float64);
      g_string_append(out, buf);
      if (!strpbrk(buf, ".eEn")) g_string_append(out, ".0"); /* not "inf"/"nan" */
      return;
    case TN_TYPE_DATA_TYPE:
      g_string_append(out, tn__dtype_text(v->v_dtype, buf, sizeof buf));
      return;
    case TN_TYPE_DEVICE:
      g_string_append(out, tn__device_text(v->v_device, buf, sizeof buf));
      return;
    case TN_TYPE_OPAQUE_PTR:
    case TN_TYPE_DLTENSOR_PTR:
      g_string_append_printf(out, "<%s %p>", tn_any_type_key(v), v->v_ptr);
      return;
    default:
      break;
  }
  TnTextKind text = tn__any_text(v, &d, &n);
  if (text != TN_TEXT_NONE) {
    if (text == TN_TEXT_BYTES) g_string_append_c(out, 'b');
    print_text(out, d, n, '"');
    return;
  }
  if (!tn_any_is_object(v) || v->v_obj == NULL) { /* not reached: checked */
    g_string_append_printf(out, "<%s %p>", tn_any_type_key(v), v->v_ptr);
    return;
  }
  TnObject *o = v->v_obj;
  bool shared = GPOINTER_TO_INT(g_hash_table_lookup(p->refs, o)) > 1;
  if (shared) {
    gpointer label;
    if (g_hash_table_lookup_extended(p->labels, o, NULL, &label)) {
      g_string_append_printf(out, "#%d", GPOINTER_TO_INT(label));
      return;
    }
    int k = ++p->next_label;
    g_hash_table_insert(p->labels, o, GINT_TO_POINTER(k));
    g_string_append_printf(out, "#%d=", k);
  }
  if (!custom_repr(p, o)) print_object(p, o, depth);
}

TN_API TnObject *tn_repr(const TnAny *value) {
  if (value == NULL) return tn__raise_null("tn_repr", "value"), NULL;
  if (tn__any_check(value, "tn_repr")) return NULL;
  Printer p = {g_string_new(NULL),
               g_hash_table_new(g_direct_hash, g_direct_equal),
               g_hash_table_new(g_direct_hash, g_direct_equal), 0};
  count_refs(&p, value);
  print_value(&p, value, 0);
  TnObject *s = tn_string_new(p.out->str, p.out->len);
  g_string_free(p.out, TRUE);
  g_hash_table_destroy(p.refs);
  g_hash_table_destroy(p.labels);
  return s;
}

/* ------------------------------------------------------------------------ */
/* Graphviz                                                                  */
/* ------------------------------------------------------------------------ */

static void dot_escape(GString *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') g_string_append_c(out, '\\');
    if (*s == '\n') g_string_append(out, "\\n");
    else g_string_append_c(out, *s);
  }
}

/* A short label for a leaf value. */
static void leaf_label(GString *out, const TnAny *v) {
  TnAny copy = *v;
  TnObject *s = tn_repr(&copy);
  const char *text = s ? ((TnStringObj *)s)->data : "?";
  size_t n = strlen(text);
  char *cut = g_strndup(text, n > 40 ? 40 : n);
  dot_escape(out, cut);
  if (n > 40) g_string_append(out, "...");
  g_free(cut);
  tn_object_release(s);
}

TN_API TnObject *tn_to_dot(const TnAny *value) {
  if (value == NULL) return tn__raise_null("tn_to_dot", "value"), NULL;
  if (tn__any_check(value, "tn_to_dot")) return NULL;
  GString *out = g_string_new(
      "digraph tvmnode {\n  node [shape=box, fontname=\"monospace\"];\n");
  GHashTable *ids = g_hash_table_new(g_direct_hash, g_direct_equal);
  GPtrArray *todo = g_ptr_array_new();
  int next_id = 0;
  if (tn_any_is_object(value) && is_container(value->v_obj)) {
    g_hash_table_insert(ids, value->v_obj, GINT_TO_POINTER(next_id++));
    g_ptr_array_add(todo, value->v_obj);
  } else {
    g_string_append(out, "  n0 [label=\"");
    leaf_label(out, value);
    g_string_append(out, "\"];\n");
  }
  while (todo->len > 0) {
    TnObject *o = g_ptr_array_remove_index(todo, todo->len - 1);
    int id = GPOINTER_TO_INT(g_hash_table_lookup(ids, o));
    const TnNodeInfo *n = tn__node_info(o->type_index);
    GString *label = g_string_new(NULL);
    dot_escape(label, tn_object_type_key(o));
    GString *edges = g_string_new(NULL);
    int64_t pos = 0, k = 0;
    TnAny c;
    while (tn__object_next_child(o, &pos, &c)) {
      GString *name = g_string_new(NULL);
      if (n) {
        dot_escape(name, n->fields[k].desc.name);
      } else if (o->type_index == TN_TYPE_MAP || o->type_index == TN_TYPE_DICT) {
        g_string_append(name, k % 2 ? "value" : "key");
      } else {
        g_string_append_printf(name, "[%" PRId64 "]", k);
      }
      k++;
      if (tn_any_is_object(&c) && is_container(c.v_obj)) {
        gpointer cid;
        if (!g_hash_table_lookup_extended(ids, c.v_obj, NULL, &cid)) {
          cid = GINT_TO_POINTER(next_id++);
          g_hash_table_insert(ids, c.v_obj, cid);
          g_ptr_array_add(todo, c.v_obj);
        }
        g_string_append_printf(edges, "  n%d -> n%d [label=\"%s\"];\n", id,
                               GPOINTER_TO_INT(cid), name->str);
      } else {
        g_string_append_printf(label, "\\n%s=", name->str);
        leaf_label(label, &c);
      }
      g_string_free(name, TRUE);
    }
    g_string_append_printf(out, "  n%d [label=\"%s\"];\n%s", id, label->str,
                           edges->str);
    g_string_free(label, TRUE);
    g_string_free(edges, TRUE);
  }
  g_string_append(out, "}\n");
  TnObject *s = tn_string_new(out->str, out->len);
  g_string_free(out, TRUE);
  g_hash_table_destroy(ids);
  g_ptr_array_free(todo, TRUE);
  return s;
}
