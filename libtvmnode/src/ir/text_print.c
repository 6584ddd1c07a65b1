/*
 * text_print.c: the text format, printing side (the grammar is in
 * docs/ir.md; text_parse.c reads it back).
 *
 * Expressions print in A-normal form: every call, tuple and tuple item gets
 * a binding "%N = ...;" at its first use, later uses refer to %N, and the
 * result of a block is written inline. A let prints as "let %x = value;"
 * followed by its body in the same block; a let or function that is not in
 * tail position is bound like any other expression. Bindings made inside a
 * function or nested block are forgotten when it closes, so every name
 * refers to something in scope.
 *
 * The graph is walked with an explicit stack: only nesting of functions and
 * blocks recurses, never the length of a chain of calls.
 */
#include "ir/ir_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

typedef struct {
  GString *out;
  GHashTable *uses;     /* node -> number of edges into it */
  GHashTable *names;    /* node -> its name (owned string) */
  GHashTable *taken;    /* variable names in use (owned strings) */
  GPtrArray *bound;     /* nodes bound so far, innermost scope last */
  GPtrArray *meta;      /* objects printed as meta[i] */
  GHashTable *meta_idx; /* object -> i + 1 */
  int next_id;
  int indent;
  bool strict;      /* show_meta: the text must read back, or fail */
  TnObject *error;  /* why it cannot, raised at the end */
} P;

static void newline(P *p) {
  g_string_append_c(p->out, '\n');
  for (int i = 0; i < p->indent; i++) g_string_append(p->out, "  ");
}

/* ---- use counts ----------------------------------------------------------- */

static void add_use(P *p, TnObject *child) {
  gpointer n = g_hash_table_lookup(p->uses, child);
  g_hash_table_insert(p->uses, child, GINT_TO_POINTER(GPOINTER_TO_INT(n) + 1));
}

static int count_uses(void *vctx, TnObject *e) {
  P *p = vctx;
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    const TnIrCall *c = (const TnIrCall *)e;
    add_use(p, c->op);
    for (int64_t i = 0; i < tn_array_size(c->args); i++)
      add_use(p, tn_array_at(c->args, i)->v_obj);
  } else if (t == T->tuple) {
    TnObject *f = ((const TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      add_use(p, tn_array_at(f, i)->v_obj);
  } else if (t == T->tuple_get_item) {
    add_use(p, ((const TnIrTupleGetItem *)e)->tuple);
  } else if (t == T->let) {
    add_use(p, ((const TnIrLet *)e)->value);
    add_use(p, ((const TnIrLet *)e)->body);
  } else if (t == T->function) {
    add_use(p, ((const TnIrFunction *)e)->body);
  }
  return 0;
}

static int uses(P *p, const TnObject *e) {
  return GPOINTER_TO_INT(g_hash_table_lookup(p->uses, e));
}

/* ---- values ----------------------------------------------------------------- */

static int meta_index(P *p, TnObject *o) {
  gpointer i = g_hash_table_lookup(p->meta_idx, o);
  if (i) return GPOINTER_TO_INT(i) - 1;
  tn_object_retain(o);
  g_ptr_array_add(p->meta, o);
  g_hash_table_insert(p->meta_idx, o, GINT_TO_POINTER((int)p->meta->len));
  return (int)p->meta->len - 1;
}

static void text_float(GString *out, double v, int digits) {
  if (isnan(v)) {
    g_string_append(out, "nan");
    return;
  }
  if (isinf(v)) {
    g_string_append(out, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  char fmt[8];
  snprintf(fmt, sizeof fmt, "%%.%dg", digits);
  g_ascii_formatd(buf, sizeof buf, fmt, v);
  g_string_append(out, buf);
  if (!strpbrk(buf, ".eE")) g_string_append(out, ".0");
}

/* A string literal. Valid UTF-8 is kept as it is; other bytes above 0x7f
 * and control characters are escaped, so the text is always UTF-8 and the
 * parser reads back the same bytes. */
/* The escapes strings and bytes share: quote, backslash, newline, tab and
 * the other control characters. False when `c` needs none of them. */
static bool escape_control(GString *out, unsigned char c) {
  if (c == '"' || c == '\\') {
    g_string_append_c(out, '\\');
    g_string_append_c(out, (char)c);
  } else if (c == '\n') {
    g_string_append(out, "\\n");
  } else if (c == '\t') {
    g_string_append(out, "\\t");
  } else if (c < 0x20 || c == 0x7f) {
    g_string_append_printf(out, "\\x%02x", c);
  } else {
    return false;
  }
  return true;
}

static void text_string(GString *out, const char *s, size_t n) {
  g_string_append_c(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    size_t k = (size_t)g_utf8_skip[c];
    if (escape_control(out, c)) continue;
    if (c < 0x80) {
      g_string_append_c(out, (char)c);
    } else if (k > 1 && k <= n - i && g_utf8_validate(s + i, (gssize)k, NULL)) {
      g_string_append_len(out, s + i, (gssize)k);
      i += k - 1;
    } else {
      g_string_append_printf(out, "\\x%02x", c);
    }
  }
  g_string_append_c(out, '"');
}

/* A bytes literal b"...": printable ASCII as it is, the rest escaped. */
static void text_bytes(GString *out, const char *s, size_t n) {
  g_string_append(out, "b\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (escape_control(out, c)) continue;
    if (c >= 0x80) g_string_append_printf(out, "\\x%02x", c);
    else g_string_append_c(out, (char)c);
  }
  g_string_append_c(out, '"');
}

/* Drop the error a failed probe (tn_dtype_print, tn_dtype_parse) raised. */
static void drop_error(void) { tn_object_release(tn_error_take_raised()); }

/* DataType("float32"), or DataType(code, bits, lanes) when no name reads
 * back as the same dtype. `as_str`: a field of kind DataType, which takes
 * the name as a string ("float32"), as TVM prints it. */
static void dtype_text(GString *out, DLDataType d, bool as_str) {
  char buf[64];
  DLDataType back = {0, 0, 0};
  int n = tn_dtype_print(d, buf, sizeof buf);
  bool named = n > 0 && (size_t)n < sizeof buf;
  if (n < 0) drop_error();
  if (named && tn_dtype_parse(buf, &back) != 0) {
    drop_error();
    named = false;
  }
  named = named && back.code == d.code && back.bits == d.bits &&
          back.lanes == d.lanes;
  if (named && as_str) {
    text_string(out, buf, strlen(buf));
  } else if (named) {
    g_string_append(out, "DataType(");
    text_string(out, buf, strlen(buf));
    g_string_append_c(out, ')');
  } else {
    g_string_append_printf(out, "DataType(%u, %u, %u)", (unsigned)d.code,
                           (unsigned)d.bits, (unsigned)d.lanes);
  }
}

/* Device("cuda:1"), or Device(type, id) when no name reads back. */
static void device_text(GString *out, DLDevice d) {
  char buf[64];
  DLDevice back = {kDLCPU, 0};
  int n = tn_device_print(d, buf, sizeof buf);
  bool named = n > 0 && (size_t)n < sizeof buf;
  if (n < 0) drop_error();
  if (named && tn_device_parse(buf, &back) != 0) {
    drop_error();
    named = false;
  }
  if (named && back.device_type == d.device_type &&
      back.device_id == d.device_id) {
    g_string_append(out, "Device(");
    text_string(out, buf, strlen(buf));
    g_string_append_c(out, ')');
  } else {
    g_string_append_printf(out, "Device(%d, %d)", (int)d.device_type,
                           (int)d.device_id);
  }
}

static bool is_ident(const char *s, size_t n) {
  if (n == 0 || (!g_ascii_isalpha(s[0]) && s[0] != '_')) return false;
  for (size_t i = 0; i < n; i++)
    if (!g_ascii_isalnum(s[i]) && s[i] != '_') return false;
  return true;
}

/* An attribute value; the parser reads each form back as the same value.
 * `dtype_as_str`: the value of a DataType field (see dtype_text). */
static void value_text(P *p, const TnAny *v, bool dtype_as_str) {
  GString *out = p->out;
  const char *s;
  size_t n;
  switch (v->type_index) {
    case TN_TYPE_NONE: g_string_append(out, "None"); return;
    case TN_TYPE_BOOL: g_string_append(out, v->v_int64 ? "true" : "false"); return;
    case TN_TYPE_INT: g_string_append_printf(out, "%" PRId64, v->v_int64); return;
    case TN_TYPE_FLOAT: text_float(out, v->v_float64, 17); return;
    case TN_TYPE_DATA_TYPE: dtype_text(out, v->v_dtype, dtype_as_str); return;
    case TN_TYPE_DEVICE: device_text(out, v->v_device); return;
    default: break;
  }
  TnTextKind text = tn__any_text(v, &s, &n);
  if (text == TN_TEXT_STR) {
    text_string(out, s, n);
  } else if (text == TN_TEXT_BYTES) {
    text_bytes(out, s, n);
  } else if (v->type_index == TN_TYPE_ARRAY) {
    g_string_append_c(out, '[');
    for (int64_t i = 0; i < tn_array_size(v->v_obj); i++) {
      if (i) g_string_append(out, ", ");
      value_text(p, tn_array_at(v->v_obj, i), false);
    }
    g_string_append_c(out, ']');
  } else if (v->type_index == TN_TYPE_SHAPE) {
    const TnShapeObj *sh = (const TnShapeObj *)v->v_obj;
    g_string_append_c(out, '(');
    for (int64_t i = 0; i < sh->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", sh->data[i]);
    if (sh->ndim == 1) g_string_append_c(out, ',');
    g_string_append_c(out, ')');
  } else if (v->type_index == TN_TYPE_MAP) {
    const TnAny *k, *x;
    bool first = true;
    g_string_append_c(out, '{');
    for (int64_t i = tn_map_next(v->v_obj, 0, &k, &x); i >= 0;
         i = tn_map_next(v->v_obj, i + 1, &k, &x)) {
      if (!first) g_string_append(out, ", ");
      first = false;
      value_text(p, k, false);
      g_string_append(out, ": ");
      value_text(p, x, false);
    }
    g_string_append_c(out, '}');
  } else if (tn_any_is_object(v)) {
    g_string_append_printf(out, "meta[%d]", meta_index(p, v->v_obj));
  } else {
    /* a pointer has no text form: text that must read back fails; text
     * for reading shows the pointer */
    if (p->strict && p->error == NULL) {
      tn_error_raise_in(TN_ERR_TYPE, "tn_ir_astext", "an attribute holds a "
                        "%s, which has no text form (print without "
                        "show_meta to see it)", tn_any_type_key(v));
      p->error = tn_error_take_raised();
    }
    g_string_append_printf(out, "<%s %p>", tn_any_type_key(v), v->v_ptr);
  }
}

/* "name=value" for each field of an attrs node that is not at its default. */
static void attrs_text(P *p, const TnObject *attrs, bool *first) {
  if (attrs == NULL) return;
  int32_t n = tn_type_field_count(attrs->type_index);
  for (int32_t i = 0; i < n; i++) {
    const TnFieldDesc *f = tn_type_field_at(attrs->type_index, i);
    TnAny v;
    if (tn_node_get_at(attrs, i, &v)) {
      tn_error_set_raised(NULL);
      continue;
    }
    bool dflt = false;
    if (f->flags & TN_FIELD_HAS_DEFAULT)
      dflt = tn_structural_equal(&v, &f->default_value, 0) == 1;
    else if (f->flags & TN_FIELD_OPTIONAL)
      dflt = v.type_index == TN_TYPE_NONE;
    if (!dflt) {
      if (!*first) g_string_append(p->out, ", ");
      *first = false;
      g_string_append_printf(p->out, "%s=", f->name);
      value_text(p, &v, f->kind == TN_FIELD_DTYPE);
    }
    tn_any_clear(&v);
  }
}

static void map_attrs_text(P *p, const TnObject *map, bool *first) {
  if (map == NULL) return;
  const TnAny *k, *v;
  for (int64_t i = tn_map_next(map, 0, &k, &v); i >= 0;
       i = tn_map_next(map, i + 1, &k, &v)) {
    if (!*first) g_string_append(p->out, ", ");
    *first = false;
    const char *s;
    size_t n;
    TnTextKind text = tn__any_text(k, &s, &n);
    if (text == TN_TEXT_STR && is_ident(s, n)) {
      g_string_append_len(p->out, s, (gssize)n);
    } else {
      /* attribute names are strings (a non-string key is refused when
       * the text must read back) */
      if (text != TN_TEXT_STR && p->strict && p->error == NULL) {
        tn_error_raise_in(TN_ERR_TYPE, "tn_ir_astext", "an attribute name "
                          "is a %s, not a str", tn_any_type_key(k));
        p->error = tn_error_take_raised();
      }
      value_text(p, k, false);
    }
    g_string_append_c(p->out, '=');
    value_text(p, v, false);
  }
}

/* ---- names ------------------------------------------------------------------- */

static const char *var_name(P *p, TnObject *var) {
  const char *have = g_hash_table_lookup(p->names, var);
  if (have) return have;
  const char *hint = ((TnStringObj *)((TnIrVar *)var)->name_hint)->data;
  GString *base = g_string_new(NULL);
  if (!g_ascii_isalpha(hint[0]) && hint[0] != '_') g_string_append_c(base, 'v');
  for (const char *c = hint; *c; c++)
    g_string_append_c(base, g_ascii_isalnum(*c) || *c == '_' ? *c : '_');
  char *name = g_strdup(base->str);
  for (int k = 1; g_hash_table_contains(p->taken, name); k++) {
    g_free(name);
    name = g_strdup_printf("%s_%d", base->str, k);
  }
  g_string_free(base, TRUE);
  g_hash_table_add(p->taken, name);
  char *full = g_strdup_printf("%%%s", name);
  g_hash_table_insert(p->names, var, full);
  g_ptr_array_add(p->bound, var); /* its name is free again after its scope */
  return full;
}

/* Forget what was bound since `mark` (the scope being closed). */
static void close_scope(P *p, guint mark) {
  while (p->bound->len > mark) {
    TnObject *o = g_ptr_array_index(p->bound, p->bound->len - 1);
    if (tn_object_is_instance(o, TN_IR->var)) {
      const char *full = g_hash_table_lookup(p->names, o);
      if (full) g_hash_table_remove(p->taken, full + 1);
    }
    g_hash_table_remove(p->names, o);
    g_ptr_array_set_size(p->bound, p->bound->len - 1);
  }
}

static bool is_leaf(const TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  return t == T->var || t == T->global_var || t == T->op || t == T->constant;
}

/* A scalar constant as a literal; false when it needs meta. */
static bool scalar_literal(GString *out, const TnObject *tensor) {
  const DLTensor *dl = tn_tensor_dltensor((TnObject *)tensor);
  if (dl->ndim != 0 || dl->dtype.lanes != 1 ||
      !tn__tensor_contiguous(tensor) || dl->device.device_type != kDLCPU)
    return false;
  const char *d = (const char *)dl->data + dl->byte_offset;
  DLDataType t = dl->dtype;
  char sfx = t.code == kDLInt ? 'i' : t.code == kDLUInt ? 'u' : 0;
  if (t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) {
    double v = t.bits == 32 ? *(const float *)d : *(const double *)d;
    if (!isfinite(v)) return false;
    text_float(out, v, t.bits == 32 ? 9 : 17);
    g_string_append(out, t.bits == 32 ? "f" : "f64");
    return true;
  }
  if (t.code == kDLBool && t.bits == 8) {
    uint8_t b = *(const uint8_t *)d;
    if (b > 1) return false; /* a byte true/false would not read back */
    g_string_append(out, b ? "true" : "false");
    return true;
  }
  if (sfx == 0) return false;
  switch (t.bits) {
    case 8: g_string_append_printf(out, "%" PRId64, sfx == 'i' ? (int64_t)*(const int8_t *)d : (int64_t)*(const uint8_t *)d); break;
    case 16: g_string_append_printf(out, "%" PRId64, sfx == 'i' ? (int64_t)*(const int16_t *)d : (int64_t)*(const uint16_t *)d); break;
    case 32: g_string_append_printf(out, "%" PRId64, sfx == 'i' ? (int64_t)*(const int32_t *)d : (int64_t)*(const uint32_t *)d); break;
    case 64:
      if (sfx == 'i') g_string_append_printf(out, "%" PRId64, *(const int64_t *)d);
      else g_string_append_printf(out, "%" PRIu64, *(const uint64_t *)d);
      break;
    default: return false;
  }
  g_string_append_printf(out, "%c%d", sfx, t.bits);
  return true;
}

/* The reference to a leaf or an already bound node. */
static void atom(P *p, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->var) {
    g_string_append(p->out, var_name(p, e));
  } else if (t == T->global_var) {
    g_string_append_printf(p->out, "@%s",
                           ((TnStringObj *)((TnIrGlobalVar *)e)->name_hint)->data);
  } else if (t == T->op) {
    g_string_append(p->out, ((TnStringObj *)((TnIrOp *)e)->name)->data);
  } else if (t == T->constant) {
    TnObject *data = ((TnIrConstant *)e)->data;
    if (!scalar_literal(p->out, data))
      g_string_append_printf(p->out, "meta[%d]", meta_index(p, data));
  } else {
    const char *name = g_hash_table_lookup(p->names, e);
    g_string_append(p->out, name ? name : "<?>");
  }
}

static void type_comment(P *p, const TnObject *e) {
  TnObject *t = tn_ir_checked_type(e);
  if (t == NULL || tn_object_is_instance(e, TN_IR->function)) return;
  g_string_append(p->out, " /* ty=");
  tn__ir_print_type(p->out, t);
  g_string_append(p->out, " */");
}

/* ---- expressions ------------------------------------------------------------- */

static void print_function(P *p, TnObject *fn, const char *def_name);
static void print_block(P *p, TnObject *e);
static void ensure_bound(P *p, TnObject *e);
static void hoist_shared(P *p, TnObject *fn);

/* Bind children of `e` that need it, so that inline() can refer to them. */
static void ensure_children(P *p, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    const TnIrCall *c = (const TnIrCall *)e;
    for (int64_t i = 0; i < tn_array_size(c->args); i++)
      ensure_bound(p, tn_array_at(c->args, i)->v_obj);
    ensure_bound(p, c->op);
  } else if (t == T->tuple) {
    TnObject *f = ((const TnIrTuple *)e)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      ensure_bound(p, tn_array_at(f, i)->v_obj);
  } else if (t == T->tuple_get_item) {
    ensure_bound(p, ((const TnIrTupleGetItem *)e)->tuple);
  } else if (t == T->function) {
    hoist_shared(p, e);
  }
}

/* Write `e` (its children bound) in place. */
static void inline_expr(P *p, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) {
    const TnIrCall *c = (const TnIrCall *)e;
    atom(p, c->op);
    g_string_append_c(p->out, '(');
    bool first = true;
    for (int64_t i = 0; i < tn_array_size(c->args); i++) {
      if (!first) g_string_append(p->out, ", ");
      first = false;
      atom(p, tn_array_at(c->args, i)->v_obj);
    }
    attrs_text(p, c->attrs, &first);
    g_string_append_c(p->out, ')');
  } else if (t == T->tuple) {
    TnObject *f = ((const TnIrTuple *)e)->fields;
    int64_t n = tn_array_size(f);
    g_string_append_c(p->out, '(');
    for (int64_t i = 0; i < n; i++) {
      if (i) g_string_append(p->out, ", ");
      atom(p, tn_array_at(f, i)->v_obj);
    }
    if (n == 1) g_string_append_c(p->out, ',');
    g_string_append_c(p->out, ')');
  } else if (t == T->tuple_get_item) {
    const TnIrTupleGetItem *g = (const TnIrTupleGetItem *)e;
    atom(p, g->tuple);
    g_string_append_printf(p->out, ".%" PRId64, g->index);
  } else if (t == T->function) {
    print_function(p, e, NULL);
  } else if (t == T->let) {
    /* a let in the middle of an expression: a block of its own */
    guint mark = p->bound->len;
    g_string_append_c(p->out, '{');
    p->indent++;
    print_block(p, e);
    p->indent--;
    newline(p);
    g_string_append_c(p->out, '}');
    close_scope(p, mark);
  } else {
    atom(p, e);
  }
}


static int collect_node(void *ctx, TnObject *e) {
  g_ptr_array_add(ctx, e);
  return 0;
}

/* Nodes inside a nested function that are also used outside it are bound
 * before it, in the enclosing scope. Bound inside, they would be forgotten
 * when the function's scope closes and printed again outside, and the text
 * would read back as two nodes (printing differently the second time). In
 * well-formed IR such a node uses nothing the function binds. */
static void hoist_shared(P *p, TnObject *fn) {
  P local = {0};
  local.uses = g_hash_table_new(NULL, NULL);
  GPtrArray *order = g_ptr_array_new();
  if (tn_ir_post_order_visit(fn, count_uses, &local) == 0 &&
      tn_ir_post_order_visit(fn, collect_node, order) == 0) {
    for (guint i = 0; i < order->len; i++) {
      TnObject *n = g_ptr_array_index(order, i);
      if (n != fn && !is_leaf(n) && !g_hash_table_contains(p->names, n) &&
          !tn_object_is_instance(n, TN_IR->let) && uses(p, n) > uses(&local, n))
        ensure_bound(p, n);
    }
  }
  tn_error_set_raised(NULL); /* the walks cannot fail on IR already walked */
  g_ptr_array_free(order, TRUE);
  g_hash_table_destroy(local.uses);
}

static void bind(P *p, TnObject *e) {
  if (tn_object_is_instance(e, TN_IR->function)) hoist_shared(p, e);
  char *name = g_strdup_printf("%%%d", p->next_id++);
  newline(p);
  g_string_append_printf(p->out, "%s = ", name);
  inline_expr(p, e);
  type_comment(p, e);
  g_string_append_c(p->out, ';');
  g_hash_table_insert(p->names, e, name);
  g_ptr_array_add(p->bound, e);
}

typedef struct {
  TnObject *node;
  int64_t next;
} Frame;

/* The i-th child that bindings care about, or NULL past the end. */
static TnObject *child(TnObject *e, int64_t i) {
  const TnIrTypes *T = TN_IR;
  int32_t t = e->type_index;
  if (t == T->call) { /* the arguments, then the callee: a function is
                         * printed right before its call */
    const TnIrCall *c = (const TnIrCall *)e;
    int64_t n = tn_array_size(c->args);
    return i < n ? tn_array_at(c->args, i)->v_obj : i == n ? c->op : NULL;
  }
  if (t == T->tuple) {
    TnObject *f = ((const TnIrTuple *)e)->fields;
    return i < tn_array_size(f) ? tn_array_at(f, i)->v_obj : NULL;
  }
  if (t == T->tuple_get_item)
    return i == 0 ? ((const TnIrTupleGetItem *)e)->tuple : NULL;
  return NULL; /* functions and lets print their insides themselves */
}

static void ensure_bound(P *p, TnObject *e) {
  if (is_leaf(e) || g_hash_table_contains(p->names, e)) return;
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(Frame));
  Frame f0 = {e, 0};
  g_array_append_val(stack, f0);
  while (stack->len > 0) {
    Frame *f = &g_array_index(stack, Frame, stack->len - 1);
    TnObject *c = child(f->node, f->next);
    if (c) {
      f->next++;
      if (!is_leaf(c) && !g_hash_table_contains(p->names, c)) {
        Frame nf = {c, 0};
        g_array_append_val(stack, nf);
      }
      continue;
    }
    TnObject *node = f->node;
    g_array_set_size(stack, stack->len - 1);
    if (!g_hash_table_contains(p->names, node)) bind(p, node);
  }
  g_array_free(stack, TRUE);
}

/* A block: its lets, then its result inline. */
static void print_block(P *p, TnObject *e) {
  const TnIrTypes *T = TN_IR;
  while (tn_object_is_instance(e, T->let) && !g_hash_table_contains(p->names, e)) {
    const TnIrLet *l = (const TnIrLet *)e;
    bool inl = !is_leaf(l->value) && uses(p, l->value) == 1 &&
               !g_hash_table_contains(p->names, l->value);
    if (inl) ensure_children(p, l->value);
    else ensure_bound(p, l->value);
    newline(p);
    g_string_append_printf(p->out, "let %s", var_name(p, l->var));
    TnObject *ann = ((const TnIrVar *)l->var)->type_annotation;
    if (ann) {
      g_string_append(p->out, ": ");
      tn__ir_print_type(p->out, ann);
    }
    g_string_append(p->out, " = ");
    if (inl) {
      inline_expr(p, l->value);
      type_comment(p, l->value);
    } else {
      atom(p, l->value);
    }
    g_string_append_c(p->out, ';');
    e = l->body;
  }
  bool inl = !is_leaf(e) && uses(p, e) <= 1 && !g_hash_table_contains(p->names, e);
  if (inl) ensure_children(p, e);
  else ensure_bound(p, e);
  newline(p);
  if (inl) {
    inline_expr(p, e);
    type_comment(p, e);
  } else {
    atom(p, e);
  }
}

static void print_function(P *p, TnObject *fn, const char *def_name) {
  const TnIrFunction *f = (const TnIrFunction *)fn;
  guint mark = p->bound->len; /* parameters belong to the function's scope */
  if (def_name) g_string_append_printf(p->out, "def @%s(", def_name);
  else g_string_append(p->out, "fn (");
  bool first = true;
  for (int64_t i = 0; i < tn_array_size(f->params); i++) {
    TnObject *v = tn_array_at(f->params, i)->v_obj;
    if (!first) g_string_append(p->out, ", ");
    first = false;
    g_string_append(p->out, var_name(p, v));
    TnObject *ann = ((const TnIrVar *)v)->type_annotation;
    if (ann) {
      g_string_append(p->out, ": ");
      tn__ir_print_type(p->out, ann);
    }
  }
  map_attrs_text(p, f->attrs, &first);
  g_string_append_c(p->out, ')');
  if (f->ret_type) {
    g_string_append(p->out, " -> ");
    tn__ir_print_type(p->out, f->ret_type);
  }
  g_string_append(p->out, " {");
  p->indent++;
  print_block(p, f->body);
  p->indent--;
  close_scope(p, mark);
  newline(p);
  g_string_append_c(p->out, '}');
}

/* ---- entry point -------------------------------------------------------------- */

TN_API TnObject *tn_ir_astext(TnObject *node, int show_meta) {
  const char *who = "tn_ir_astext";
  if (node == NULL) return tn__raise_null(who, "node"), NULL;
  bool is_mod = tn_object_is_instance(node, TN_IR->module);
  if (tn_object_is_instance(node, TN_IR->type)) {
    GString *t = g_string_new(NULL);
    tn__ir_print_type(t, node);
    TnObject *s = tn_string_new(t->str, t->len);
    g_string_free(t, TRUE);
    return s;
  }
  if (!is_mod && !tn_object_is_instance(node, TN_IR->expr))
    return tn_error_raise_in(TN_ERR_TYPE, who, "expected an ir.IRModule, an "
                             "ir.Expr or an ir.Type, got %s",
                             tn_object_type_key(node)),
           NULL;
  P p = {g_string_new(NULL),
         g_hash_table_new(g_direct_hash, g_direct_equal),
         g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
         g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
         g_ptr_array_new(),
         g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release),
         g_hash_table_new(g_direct_hash, g_direct_equal), 0, 0,
         show_meta != 0, NULL};
  int rc = 0;
  if (is_mod) {
    const TnIrModule *m = (const TnIrModule *)node;
    const TnAny *k, *v;
    if (m->attrs && tn_map_size(m->attrs) > 0) {
      bool first = true;
      g_string_append(p.out, "attributes(");
      map_attrs_text(&p, m->attrs, &first);
      g_string_append(p.out, ")\n");
    }
    bool first = true;
    for (int64_t i = tn_map_next(m->functions, 0, &k, &v); rc == 0 && i >= 0;
         i = tn_map_next(m->functions, i + 1, &k, &v)) {
      if (!first) g_string_append_c(p.out, '\n');
      first = false;
      p.next_id = 0; /* names start afresh in each function */
      /* uses count per function: a node two functions share is printed
       * in each, as each reads it back */
      g_hash_table_remove_all(p.uses);
      rc = tn_ir_post_order_visit(v->v_obj, count_uses, &p);
      if (rc == 0) print_function(&p, v->v_obj, tn__ir_key(k));
      g_string_append_c(p.out, '\n');
    }
  } else {
    rc = tn_ir_post_order_visit(node, count_uses, &p);
    if (rc == 0) {
      if (tn_object_is_instance(node, TN_IR->function)) {
        print_function(&p, node, NULL);
      } else {
        print_block(&p, node);
        g_string_erase(p.out, 0, 1); /* the block's leading newline */
      }
      g_string_append_c(p.out, '\n');
    }
  }
  TnObject *result = NULL;
  if (p.error) {
    tn_error_set_raised(p.error);
    rc = -1;
  }
  if (rc == 0 && p.meta->len > 0) {
    if (show_meta) {
      TnObject *arr = tn__ir_array((TnObject *const *)p.meta->pdata,
                                   (int32_t)p.meta->len);
      TnAny a = tn_any_obj(arr);
      TnObject *json = arr ? tn_json_save(&a, 0) : NULL;
      tn_object_release(arr);
      if (json) {
        g_string_append(p.out, "#[metadata]\n");
        g_string_append(p.out, ((TnStringObj *)json)->data);
        g_string_append_c(p.out, '\n');
        tn_object_release(json);
      } else {
        rc = -1;
      }
    } else {
      g_string_append(p.out, "// metadata omitted: print with show_meta to "
                             "include it\n");
    }
  }
  if (rc == 0) result = tn_string_new(p.out->str, p.out->len);
  g_string_free(p.out, TRUE);
  g_hash_table_destroy(p.uses);
  g_hash_table_destroy(p.names);
  g_hash_table_destroy(p.taken);
  g_ptr_array_free(p.bound, TRUE);
  g_ptr_array_free(p.meta, TRUE);
  g_hash_table_destroy(p.meta_idx);
  return result;
}
