/*
 * json.c: object graphs to and from JSON (format: docs/json.md).
 *
 * Saving numbers every object once, children before parents (an iterative
 * post-order walk, so depth costs no C stack), and writes each node with
 * references to earlier nodes only; that is what preserves sharing and what
 * lets the loader refuse cycles and dangling references with one
 * comparison. JSON text is written directly. Loading parses with YAJL
 * (which reports where bad text is) and then validates every node against
 * the type table before building it; any failure
 * releases what was built and raises a ValueError naming the place
 * ("nodes[3].fields.value"). Reading streams (json_reader.c): each node is
 * built as soon as its JSON element closes.
 */
#include "reflect/reflect_internal.h"

#include <inttypes.h>
#include "reflect/json_reader.h"
#include <math.h>
#include <stdio.h>

#define FORMAT_KEY "tvmnode.json"
#define FORMAT_VERSION 1

/* ======================================================================== */
/* Save                                                                      */
/* ======================================================================== */

typedef struct {
  GHashTable *index; /* object -> index + 1 (done) or 0 marker (in progress) */
  GPtrArray *order;  /* objects in post-order */
  GString *out;
  int indent;
  bool failed; /* a value could not be written; the error is raised */
} Saver;

/* Strings and bytes are values, not nodes. */
static bool is_node_object(const TnAny *a) {
  return tn_any_is_object(a) && a->type_index != TN_TYPE_STRING &&
         a->type_index != TN_TYPE_BYTES;
}

typedef struct {
  TnObject *obj;
  int64_t next;
} SFrame;

static int check_serialisable(TnObject *o) {
  int32_t t = o->type_index;
  if (t == TN_TYPE_ARRAY || t == TN_TYPE_LIST || t == TN_TYPE_MAP ||
      t == TN_TYPE_DICT || t == TN_TYPE_SHAPE || tn__node_info(t))
    return 0;
  if (t == TN_TYPE_TENSOR) {
    if (((TnTensorObj *)o)->dl.device.device_type == kDLCPU) return 0;
    return tn_error_raise_in(TN_ERR_VALUE, "tn_json_save",
                             "only CPU tensors can be saved");
  }
  return tn_error_raise_in(TN_ERR_TYPE, "tn_json_save",
                           "a %s cannot be saved (no reflected fields)",
                           tn_object_type_key(o));
}

static int number_nodes(Saver *s, const TnAny *root) {
  if (!is_node_object(root)) return 0;
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(SFrame));
  int rc = 0;
  if ((rc = check_serialisable(root->v_obj)) == 0) {
    SFrame f = {root->v_obj, 0};
    g_array_append_val(stack, f);
    g_hash_table_insert(s->index, root->v_obj, GINT_TO_POINTER(0));
  }
  while (rc == 0 && stack->len > 0) {
    SFrame *f = &g_array_index(stack, SFrame, stack->len - 1);
    TnAny child;
    if (!tn__object_next_child(f->obj, &f->next, &child)) {
      g_ptr_array_add(s->order, f->obj);
      g_hash_table_insert(s->index, f->obj,
                          GSIZE_TO_POINTER((gsize)s->order->len));
      g_array_set_size(stack, stack->len - 1);
      continue;
    }
    const TnNodeInfo *info = tn__node_info(f->obj->type_index);
    if (info && (info->fields[f->next - 1].desc.flags & TN_FIELD_NO_SAVE))
      continue;
    if (child.type_index == TN_TYPE_OPAQUE_PTR ||
        child.type_index == TN_TYPE_DLTENSOR_PTR) {
      rc = tn_error_raise_in(TN_ERR_TYPE, "tn_json_save",
                             "a %s inside a %s cannot be saved",
                             tn_any_type_key(&child),
                             tn_object_type_key(f->obj));
      break;
    }
    if (!is_node_object(&child)) continue;
    gpointer mark;
    if (g_hash_table_lookup_extended(s->index, child.v_obj, NULL, &mark)) {
      if (mark == NULL) /* still on the stack: a cycle */
        rc = tn_error_raise_in(TN_ERR_VALUE, "tn_json_save",
                               "the graph has a cycle through a %s",
                               tn_object_type_key(child.v_obj));
      continue;
    }
    if ((rc = check_serialisable(child.v_obj))) break;
    g_hash_table_insert(s->index, child.v_obj, NULL);
    SFrame nf = {child.v_obj, 0};
    g_array_append_val(stack, nf);
  }
  g_array_free(stack, TRUE);
  return rc;
}

/* Integers are most of a graph's text: format them without printf. */
static void put_int(GString *out, int64_t v) {
  char buf[24];
  char *p = buf + sizeof buf;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--p = '-';
  g_string_append_len(out, p, buf + sizeof buf - p);
}

static void put_string(GString *out, const char *d, size_t n) {
  if (!g_utf8_validate(d, (gssize)n, NULL)) {
    gchar *b64 = g_base64_encode((const guchar *)d, n);
    g_string_append_printf(out, "{\"$strb64\": \"%s\"}", b64);
    g_free(b64);
    return;
  }
  g_string_append_c(out, '"');
  size_t plain = 0; /* copy runs that need no escaping in one go */
  while (plain < n && (unsigned char)d[plain] >= 0x20 && d[plain] != '"' &&
         d[plain] != '\\')
    plain++;
  g_string_append_len(out, d, (gssize)plain);
  for (size_t i = plain; i < n; i++) {
    unsigned char c = (unsigned char)d[i];
    switch (c) {
      case '"': g_string_append(out, "\\\""); break;
      case '\\': g_string_append(out, "\\\\"); break;
      case '\n': g_string_append(out, "\\n"); break;
      case '\t': g_string_append(out, "\\t"); break;
      case '\r': g_string_append(out, "\\r"); break;
      default:
        if (c < 0x20) g_string_append_printf(out, "\\u%04x", c);
        else g_string_append_c(out, (char)c);
    }
  }
  g_string_append_c(out, '"');
}

static void put_float(GString *out, double d) {
  if (isnan(d)) {
    g_string_append(out, "{\"$float\": \"nan\"}");
  } else if (isinf(d)) {
    g_string_append_printf(out, "{\"$float\": \"%sinf\"}", d < 0 ? "-" : "");
  } else {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", d);
    g_string_append(out, buf);
    if (!strpbrk(buf, ".eE")) g_string_append(out, ".0"); /* stay a float */
  }
}

static void put_value(Saver *s, const TnAny *v) {
  GString *out = s->out;
  char buf[64] = "";
  const char *d;
  size_t n;
  switch (v->type_index) {
    case TN_TYPE_NONE: g_string_append(out, "null"); return;
    case TN_TYPE_BOOL: g_string_append(out, v->v_int64 ? "true" : "false"); return;
    case TN_TYPE_INT:
      put_int(out, v->v_int64);
      return;
    case TN_TYPE_FLOAT: put_float(out, v->v_float64); return;
    case TN_TYPE_DATA_TYPE:
      if (tn_dtype_print(v->v_dtype, buf, sizeof buf) < 0) s->failed = true;
      g_string_append_printf(out, "{\"$dtype\": \"%s\"}", buf);
      return;
    case TN_TYPE_DEVICE:
      if (tn_device_print(v->v_device, buf, sizeof buf) < 0) s->failed = true;
      g_string_append_printf(out, "{\"$device\": \"%s\"}", buf);
      return;
    default:
      break;
  }
  TnTextKind text = tn__any_text(v, &d, &n);
  if (text == TN_TEXT_STR) {
    put_string(out, d, n);
    return;
  }
  if (text == TN_TEXT_BYTES) {
    gchar *b64 = g_base64_encode((const guchar *)d, n);
    g_string_append_printf(out, "{\"$bytes\": \"%s\"}", b64);
    g_free(b64);
    return;
  }
  gsize idx = GPOINTER_TO_SIZE(g_hash_table_lookup(s->index, v->v_obj));
  g_string_append(out, "{\"$node\": ");
  put_int(out, (int64_t)idx - 1);
  g_string_append_c(out, '}');
}

static void put_node(Saver *s, TnObject *o) {
  GString *out = s->out;
  int32_t t = o->type_index;
  g_string_append(out, "{\"type\": ");
  put_string(out, tn_object_type_key(o), strlen(tn_object_type_key(o)));
  if (t == TN_TYPE_ARRAY || t == TN_TYPE_LIST) {
    const TnArrayObj *a = (const TnArrayObj *)o;
    g_string_append(out, ", \"items\": [");
    for (int64_t i = 0; i < a->size; i++) {
      if (i) g_string_append(out, ", ");
      put_value(s, &a->data[i]);
    }
    g_string_append(out, "]}");
  } else if (t == TN_TYPE_MAP || t == TN_TYPE_DICT) {
    const TnMapObj *m = (const TnMapObj *)o;
    g_string_append(out, ", \"items\": [");
    bool first = true;
    for (int64_t i = 0; i < m->used; i++) {
      const TnMapEntry *e = &m->entries[i];
      if (e->key.type_index == TN__MAP_DELETED) continue;
      g_string_append(out, first ? "[" : ", [");
      first = false;
      put_value(s, &e->key);
      g_string_append(out, ", ");
      put_value(s, &e->value);
      g_string_append_c(out, ']');
    }
    g_string_append(out, "]}");
  } else if (t == TN_TYPE_SHAPE) {
    const TnShapeObj *sh = (const TnShapeObj *)o;
    g_string_append(out, ", \"dims\": [");
    for (int64_t i = 0; i < sh->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", sh->data[i]);
    g_string_append(out, "]}");
  } else if (t == TN_TYPE_TENSOR) {
    const DLTensor *dl = &((TnTensorObj *)o)->dl;
    char dt[64] = "";
    if (tn_dtype_print(dl->dtype, dt, sizeof dt) < 0) s->failed = true;
    g_string_append_printf(out, ", \"dtype\": \"%s\", \"shape\": [", dt);
    for (int32_t i = 0; i < dl->ndim; i++)
      g_string_append_printf(out, "%s%" PRId64, i ? ", " : "", dl->shape[i]);
    /* The copy is as large as the tensor: malloc it and report failure (see
     * "Out of memory" in docs/abi.md). */
    int64_t bytes = tn_tensor_nbytes(o);
    size_t size = bytes > 0 ? (size_t)bytes : 1;
    char *tmp = tn__alloc_fails() ? NULL : malloc(size);
    if (tmp == NULL) {
      tn__raise_memory("tn_json_save", (size_t)bytes);
      s->failed = true;
      return;
    }
    tn__tensor_copy_compact(dl, tmp);
    gchar *b64 = g_base64_encode((const guchar *)tmp, (gsize)bytes);
    g_string_append_printf(out, "], \"data\": \"%s\"}", b64);
    g_free(b64);
    free(tmp);
  } else {
    const TnNodeInfo *n = tn__node_info(t);
    g_string_append(out, ", \"fields\": {");
    bool first = true;
    for (int32_t i = 0; i < n->nfields; i++) {
      if (n->fields[i].desc.flags & TN_FIELD_NO_SAVE) continue;
      TnAny v;
      tn__field_view(o, &n->fields[i], &v);
      if (!first) g_string_append(out, ", ");
      first = false;
      put_string(out, n->fields[i].desc.name, strlen(n->fields[i].desc.name));
      g_string_append(out, ": ");
      put_value(s, &v);
    }
    g_string_append(out, "}}");
  }
}

TN_API TnObject *tn_json_save(const TnAny *value, int indent) {
  if (value == NULL) return tn__raise_null("tn_json_save", "value"), NULL;
  if (tn__any_check(value, "tn_json_save")) return NULL;
  if (value->type_index == TN_TYPE_OPAQUE_PTR ||
      value->type_index == TN_TYPE_DLTENSOR_PTR) {
    TN_RAISE(TYPE, "a %s cannot be saved", tn_any_type_key(value));
    return NULL;
  }
  Saver s = {g_hash_table_new(g_direct_hash, g_direct_equal),
             g_ptr_array_new(), g_string_new(NULL), indent, false};
  TnObject *result = NULL;
  if (number_nodes(&s, value) == 0) {
    const char *nl = indent > 0 ? "\n" : "";
    g_string_append_printf(s.out, "{\"%s\": %d,%s \"root\": ", FORMAT_KEY,
                           FORMAT_VERSION, nl);
    put_value(&s, value);
    g_string_append_printf(s.out, ",%s \"nodes\": [", nl);
    for (guint i = 0; i < s.order->len; i++) {
      if (i) g_string_append_c(s.out, ',');
      if (indent > 0) g_string_append(s.out, "\n  ");
      else if (i) g_string_append_c(s.out, ' ');
      put_node(&s, g_ptr_array_index(s.order, i));
    }
    g_string_append_printf(s.out, "%s]}%s", nl, nl);
    if (!s.failed) result = tn_string_new(s.out->str, s.out->len);
  }
  g_hash_table_destroy(s.index);
  g_ptr_array_free(s.order, TRUE);
  g_string_free(s.out, TRUE);
  return result;
}

/* ======================================================================== */
/* Load                                                                      */
/* ======================================================================== */

typedef struct {
  TnObject **objs; /* nodes built so far */
  size_t nbuilt, cap;
  /* The place being read, e.g. "nodes[3].fields.value", kept in parts:
   * only an error formats it. */
  const char *where; /* "document" or "root", or NULL for nodes[node] */
  size_t node;
  const char *field; /* ".fields.<field>", or NULL */
  int64_t item;      /* ".items[<item>]", or -1 */
} Loader;

static int bad(Loader *l, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int bad(Loader *l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  GString *place = g_string_new(l->where);
  if (l->where == NULL) g_string_printf(place, "nodes[%zu]", l->node);
  if (l->field) g_string_append_printf(place, ".fields.%s", l->field);
  if (l->item >= 0) g_string_append_printf(place, ".items[%" PRId64 "]", l->item);
  tn_error_raise_in(TN_ERR_VALUE, "tn_json_load", "%s: %s", place->str, why);
  g_string_free(place, TRUE);
  g_free(why);
  return -1;
}

/* Re-raise the pending error as a ValueError that says where. */
static int bad_from_raised(Loader *l) {
  TnObject *e = tn_error_take_raised();
  bad(l, "%s", e ? tn_error_message(e) : "error");
  tn_object_release(e);
  return -1;
}

static int decode_base64(Loader *l, const JVal *j, guchar **data, gsize *len) {
  if (j->kind != J_STR)
    return bad(l, "expected base64 text, got %s", tn__jkind_name(j));
  const char *t = j->u.str.s;
  size_t n = j->u.str.n;
  for (size_t i = 0; i < n; i++) {
    char c = t[i];
    if (!(g_ascii_isalnum(c) || c == '+' || c == '/' || c == '='))
      return bad(l, "invalid base64 character at offset %zu", i);
  }
  if (n % 4 != 0) return bad(l, "base64 text of length %zu is truncated", n);
  *data = g_base64_decode(t, len);
  return 0;
}

/* A single-key tagged object {"$tag": x}: returns the tag's value. */
static const JVal *tagged(const JVal *j, const char **tag) {
  if (j->kind != J_OBJ || j->u.obj.n != 1) return NULL;
  *tag = j->u.obj.members[0].key;
  return (*tag)[0] == '$' ? j->u.obj.members[0].val : NULL;
}

/* Decode a value into an owned any; node references must point before
 * `limit`. */
static int decode_value(Loader *l, const JVal *j, size_t limit, TnAny *out) {
  *out = tn_any_none();
  switch (j->kind) {
    case J_NULL: return 0;
    case J_BOOL: *out = tn_any_bool(j->u.b); return 0;
    case J_INT: *out = tn_any_int(j->u.i); return 0;
    case J_FLOAT: *out = tn_any_float(j->u.f); return 0;
    case J_STR: {
      if (memchr(j->u.str.s, '\0', j->u.str.n)) { /* not a C string */
        TnObject *so = tn_string_new(j->u.str.s, j->u.str.n);
        if (so == NULL) return -1;
        *out = tn_any_obj(so);
        return 0;
      }
      TnAny raw = tn_any_cstr(j->u.str.s);
      return tn_any_to_owned(out, &raw);
    }
    case J_ARR:
      return bad(l, "an array is not a value (arrays are nodes)");
    case J_OBJ:
      break;
  }
  const char *tag;
  const JVal *v = tagged(j, &tag);
  if (v == NULL) return bad(l, "expected a value, got an object that is not "
                            "{\"$node\": ...} or another tagged value");
  if (strcmp(tag, "$node") == 0) {
    if (v->kind != J_INT) return bad(l, "$node must be an integer");
    if (v->u.i < 0 || (uint64_t)v->u.i >= limit)
      return bad(l, "node reference %" PRId64 " is out of range (must be "
                 "below %zu: references point to earlier nodes)",
                 v->u.i, limit);
    *out = tn_any_obj(l->objs[v->u.i]);
    tn_object_retain(l->objs[v->u.i]);
    return 0;
  }
  if (strcmp(tag, "$dtype") == 0 || strcmp(tag, "$device") == 0) {
    if (v->kind != J_STR) return bad(l, "%s must be a string", tag);
    if (tag[2] == 't') {
      DLDataType dt;
      if (tn_dtype_parse(v->u.str.s, &dt)) return bad_from_raised(l);
      *out = tn_any_dtype(dt);
    } else {
      DLDevice dv;
      if (tn_device_parse(v->u.str.s, &dv)) return bad_from_raised(l);
      *out = tn_any_device(dv);
    }
    return 0;
  }
  if (strcmp(tag, "$float") == 0) {
    const char *s = v->kind == J_STR ? v->u.str.s : "";
    if (strcmp(s, "nan") == 0) *out = tn_any_float(NAN);
    else if (strcmp(s, "inf") == 0) *out = tn_any_float(INFINITY);
    else if (strcmp(s, "-inf") == 0) *out = tn_any_float(-INFINITY);
    else return bad(l, "$float must be \"nan\", \"inf\" or \"-inf\"");
    return 0;
  }
  if (strcmp(tag, "$bytes") == 0 || strcmp(tag, "$strb64") == 0) {
    guchar *data;
    gsize n;
    if (decode_base64(l, v, &data, &n)) return -1;
    TnObject *o = tag[1] == 'b' ? tn_bytes_new((const char *)data, n)
                                : tn_string_new((const char *)data, n);
    g_free(data);
    if (o == NULL) return -1;
    *out = tn_any_obj(o);
    return 0;
  }
  return bad(l, "unknown tag '%s'", tag);
}

static const JVal *member(Loader *l, const JVal *obj, const char *key,
                          JKind want) {
  const JVal *m = tn__jobj_get(obj, key);
  if (m == NULL) {
    bad(l, "missing \"%s\"", key);
    return NULL;
  }
  if (m->kind != want) {
    bad(l, "\"%s\" has the wrong JSON type (%s)", key, tn__jkind_name(m));
    return NULL;
  }
  return m;
}

static int check_keys(Loader *l, const JVal *obj, const char *const *allowed,
                      int n) {
  for (size_t k = 0; k < obj->u.obj.n; k++) {
    const char *key = obj->u.obj.members[k].key;
    bool ok = false;
    for (int i = 0; i < n; i++) ok |= strcmp(key, allowed[i]) == 0;
    if (!ok) return bad(l, "unexpected key \"%s\"", key);
  }
  return 0;
}

static TnObject *build_seq(Loader *l, int32_t t, const JVal *node, size_t i) {
  static const char *const keys[] = {"type", "items"};
  if (check_keys(l, node, keys, 2)) return NULL;
  const JVal *items = member(l, node, "items", J_ARR);
  if (items == NULL) return NULL;
  int64_t n = (int64_t)items->u.arr.n;
  TnObject *seq = t == TN_TYPE_LIST ? tn_list_new(NULL, 0) : tn_array_new(NULL, 0);
  if (seq == NULL) return NULL;
  if (t == TN_TYPE_LIST && tn_list_reserve(seq, n)) {
    tn_object_release(seq);
    return NULL;
  }
  for (int64_t k = 0; k < n; k++) {
    TnAny v;
    l->item = k;
    int rc = decode_value(l, items->u.arr.items[k], i, &v);
    l->item = -1;
    if (rc == 0) {
      rc = t == TN_TYPE_LIST ? tn_list_append(seq, &v) : tn_array_push(&seq, &v);
      tn_any_clear(&v);
    }
    if (rc) {
      tn_object_release(seq);
      return NULL;
    }
  }
  return seq;
}

static TnObject *build_map(Loader *l, int32_t t, const JVal *node, size_t i) {
  static const char *const keys[] = {"type", "items"};
  if (check_keys(l, node, keys, 2)) return NULL;
  const JVal *items = member(l, node, "items", J_ARR);
  if (items == NULL) return NULL;
  TnObject *m = t == TN_TYPE_DICT ? tn_dict_new(NULL, NULL, 0)
                                  : tn_map_new(NULL, NULL, 0);
  if (m == NULL) return NULL;
  for (size_t k = 0; k < items->u.arr.n; k++) {
    const JVal *pair = items->u.arr.items[k];
    l->item = (int64_t)k;
    int rc = 0;
    TnAny kv[2] = {tn_any_none(), tn_any_none()};
    if (pair->kind != J_ARR || pair->u.arr.n != 2) {
      rc = bad(l, "a map entry must be a [key, value] pair");
    } else if ((rc = decode_value(l, pair->u.arr.items[0], i, &kv[0])) == 0 &&
               (rc = decode_value(l, pair->u.arr.items[1], i, &kv[1])) == 0) {
      if (tn_map_find(m, &kv[0])) rc = bad(l, "duplicate key");
      else rc = t == TN_TYPE_DICT ? tn_dict_set(m, &kv[0], &kv[1])
                                  : tn_map_set(&m, &kv[0], &kv[1]);
    }
    tn_any_clear(&kv[0]);
    tn_any_clear(&kv[1]);
    l->item = -1;
    if (rc) {
      tn_object_release(m);
      return NULL;
    }
  }
  return m;
}

static int read_dims(Loader *l, const JVal *arr, int64_t **dims,
                     int32_t *ndim) {
  size_t n = arr->u.arr.n;
  if (n > 1024) return bad(l, "%zu dimensions is too many", n);
  *dims = g_new0(int64_t, n ? n : 1);
  *ndim = (int32_t)n;
  for (size_t k = 0; k < n; k++) {
    const JVal *d = arr->u.arr.items[k];
    if (d->kind != J_INT || d->u.i < 0) {
      g_free(*dims);
      return bad(l, "dimension %zu must be a non-negative integer", k);
    }
    (*dims)[k] = d->u.i;
  }
  return 0;
}

static TnObject *build_shape(Loader *l, const JVal *node) {
  static const char *const keys[] = {"type", "dims"};
  if (check_keys(l, node, keys, 2)) return NULL;
  const JVal *arr = member(l, node, "dims", J_ARR);
  int64_t *dims;
  int32_t ndim;
  if (arr == NULL || read_dims(l, arr, &dims, &ndim)) return NULL;
  TnObject *s = tn_shape_new(dims, ndim);
  g_free(dims);
  return s;
}

static TnObject *build_tensor(Loader *l, const JVal *node) {
  static const char *const keys[] = {"type", "dtype", "shape", "data"};
  if (check_keys(l, node, keys, 4)) return NULL;
  const JVal *dt = member(l, node, "dtype", J_STR);
  const JVal *sh = dt ? member(l, node, "shape", J_ARR) : NULL;
  const JVal *data = sh ? member(l, node, "data", J_STR) : NULL;
  if (data == NULL) return NULL;
  DLDataType dtype;
  if (tn_dtype_parse(dt->u.str.s, &dtype)) return bad_from_raised(l), NULL;
  int64_t *dims;
  int32_t ndim;
  if (read_dims(l, sh, &dims, &ndim)) return NULL;
  /* Check the size the data must have before allocating anything. */
  int64_t want = ((int64_t)dtype.bits * dtype.lanes + 7) / 8;
  for (int32_t k = 0; k < ndim; k++) {
    if (__builtin_mul_overflow(want, dims[k], &want) ||
        want > (INT64_C(1) << 40)) {
      g_free(dims);
      bad(l, "the tensor's size is absurd");
      return NULL;
    }
  }
  size_t b64 = data->u.str.n;
  if ((int64_t)(b64 / 4 * 3) < want || (int64_t)(b64 / 4 * 3) > want + 2) {
    g_free(dims);
    bad(l, "\"data\" holds about %zu bytes; the shape and dtype need %" PRId64,
        b64 / 4 * 3, want);
    return NULL;
  }
  guchar *bytes;
  gsize n;
  if (decode_base64(l, data, &bytes, &n)) {
    g_free(dims);
    return NULL;
  }
  TnObject *t = NULL;
  if ((int64_t)n != want) {
    bad(l, "\"data\" holds %" G_GSIZE_FORMAT " bytes; the shape and dtype "
        "need %" PRId64, n, want);
  } else {
    DLDevice cpu = {kDLCPU, 0};
    t = tn_tensor_empty(dims, ndim, dtype, cpu);
    if (t) memcpy(tn_tensor_dltensor(t)->data, bytes, n);
  }
  g_free(bytes);
  g_free(dims);
  return t;
}

/* A type only its own code may make (it has a "__make__" hook, or cannot
 * be loaded at all). */
static TnObject *build_via_make(Loader *l, int32_t t, const JVal *fields,
                                size_t i) {
  size_t n = fields->u.obj.n;
  const char **names = g_new(const char *, n ? n : 1);
  TnAny *values = g_new0(TnAny, n ? n : 1);
  TnObject *obj = NULL;
  size_t k = 0;
  for (; k < n; k++) {
    names[k] = fields->u.obj.members[k].key;
    l->field = names[k];
    if (decode_value(l, fields->u.obj.members[k].val, i, &values[k])) break;
    l->field = NULL;
  }
  if (k == n) {
    obj = tn__node_make(t, names, values, (int32_t)n, "tn_json_load");
    if (obj == NULL) bad_from_raised(l);
  }
  l->field = NULL;
  for (size_t q = 0; q < k; q++) tn_any_clear(&values[q]);
  g_free(names);
  g_free(values);
  return obj;
}

static TnObject *build_node(Loader *l, int32_t t, const TnNodeInfo *n,
                            const JVal *node, size_t i) {
  static const char *const keys[] = {"type", "fields"};
  if (check_keys(l, node, keys, 2)) return NULL;
  const JVal *fields = member(l, node, "fields", J_OBJ);
  if (fields == NULL) return NULL;
  if (n->flags & TN_NODE_NO_CREATE) return build_via_make(l, t, fields, i);
  TnObject *obj = tn_node_alloc(t);
  if (obj == NULL) return NULL;
  int32_t given = 0;
  for (size_t k = 0; k < fields->u.obj.n; k++) {
    const JMember *m = &fields->u.obj.members[k];
    int32_t f = -1;
    for (int32_t q = 0; q < n->nfields && f < 0; q++)
      if (strcmp(n->fields[q].desc.name, m->key) == 0) f = q;
    int rc;
    TnAny v;
    l->field = m->key;
    if (f < 0) {
      rc = bad(l, "%s has no such field", tn__type_key_or(t, "?"));
    } else if ((rc = decode_value(l, m->val, i, &v)) == 0) {
      rc = tn__field_store(obj, &n->fields[f], &v, "tn_json_load");
      tn_any_clear(&v);
      if (rc) bad_from_raised(l); /* the TypeError, with its place */
      given++;
    }
    l->field = NULL;
    if (rc) {
      tn_object_release(obj);
      return NULL;
    }
  }
  if (given < n->nfields) {
    for (int32_t q = 0; q < n->nfields; q++) {
      const TnFieldDesc *d = &n->fields[q].desc;
      if (!(d->flags & (TN_FIELD_HAS_DEFAULT | TN_FIELD_OPTIONAL)) &&
          tn__jobj_get(fields, d->name) == NULL) {
        bad(l, "required field '%s' of %s is missing", d->name,
            tn__type_key_or(t, "?"));
        tn_object_release(obj);
        return NULL;
      }
    }
  }
  return obj;
}

/* The type index of a node's "type", cached for the run of one load: most
 * graphs use a handful of types over and over. */
static int32_t lookup_type(const char *key) {
  static TN_TLS const char *last_key;
  static TN_TLS int32_t last_index;
  if (last_key && strcmp(last_key, key) == 0 && tn__type_info(last_index))
    return last_index;
  int32_t t = tn_type_index(key);
  if (t >= 0) {
    last_key = tn__type_key_or(t, NULL); /* type keys live for the process */
    last_index = t;
  }
  return t;
}

static TnObject *build(Loader *l, const JVal *node, size_t i) {
  if (node->kind != J_OBJ) {
    bad(l, "a node must be an object, got %s", tn__jkind_name(node));
    return NULL;
  }
  const JVal *type = member(l, node, "type", J_STR);
  if (type == NULL) return NULL;
  const char *key = type->u.str.s;
  int32_t t = lookup_type(key);
  if (t < 0) {
    tn_error_set_raised(NULL);
    bad(l, "unknown type key '%s'", key);
    return NULL;
  }
  switch (t) {
    case TN_TYPE_ARRAY:
    case TN_TYPE_LIST: return build_seq(l, t, node, i);
    case TN_TYPE_MAP:
    case TN_TYPE_DICT: return build_map(l, t, node, i);
    case TN_TYPE_SHAPE: return build_shape(l, node);
    case TN_TYPE_TENSOR: return build_tensor(l, node);
    default: break;
  }
  const TnNodeInfo *n = tn__node_info(t);
  if (n == NULL) {
    bad(l, "type '%s' has no reflected fields and cannot be loaded", key);
    return NULL;
  }
  return build_node(l, t, n, node, i);
}

static int on_node(void *ctx, const JVal *node, size_t i) {
  Loader *l = ctx;
  l->where = NULL;
  l->node = i;
  TnObject *o = build(l, node, i);
  if (o == NULL) return -1;
  /* A type that must be valid as a whole before anything trusts it (an
   * IRModule: well formed) says so with a "__check__" attribute. */
  const TnAny *check = tn_type_attr_get("__check__", o->type_index);
  if (check && tn_any_is_object(check)) {
    TnAny arg = tn_any_obj(o), ret = tn_any_none();
    int rc = tn_func_call(check->v_obj, &arg, 1, &ret);
    tn_any_clear(&ret);
    if (rc) {
      bad_from_raised(l);
      tn_object_release(o);
      return -1;
    }
  }
  if (l->nbuilt == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->objs = g_renew(TnObject *, l->objs, l->cap);
  }
  l->objs[l->nbuilt++] = o;
  return 0;
}

TN_API int tn_json_load(const char *text, size_t size, TnAny *out) {
  if (text == NULL && size) return tn__raise_null("tn_json_load", "text");
  if (out == NULL) return tn__raise_null("tn_json_load", "out");
  *out = tn_any_none();
  Loader l = {NULL, 0, 0, "document", 0, NULL, -1};
  int rc = -1;
  JDoc *doc = tn__json_read(text ? text : "", size, on_node, &l);
  const JVal *top = doc ? tn__jdoc_root(doc) : NULL;
  const JVal *version, *root;
  if (doc == NULL) goto done;
  l.where = "document";
  if (top->kind != J_OBJ) {
    bad(&l, "expected a JSON object, got %s", tn__jkind_name(top));
    goto done;
  }
  version = tn__jobj_get(top, FORMAT_KEY);
  if (version == NULL || version->kind != J_INT) {
    bad(&l, "missing \"%s\": not a tvmnode JSON graph", FORMAT_KEY);
    goto done;
  }
  if (version->u.i != FORMAT_VERSION) {
    bad(&l, "format version %" PRId64 " is not supported (this library "
        "reads version %d)", version->u.i, FORMAT_VERSION);
    goto done;
  }
  static const char *const keys[] = {FORMAT_KEY, "root", "nodes"};
  if (check_keys(&l, top, keys, 3)) goto done;
  if (member(&l, top, "nodes", J_ARR) == NULL) goto done;
  if ((root = tn__jobj_get(top, "root")) == NULL) {
    bad(&l, "missing \"root\"");
    goto done;
  }
  l.where = "root";
  TnAny v;
  if (decode_value(&l, root, l.nbuilt, &v) == 0) {
    *out = v;
    rc = 0;
  }
done:
  for (size_t i = 0; i < l.nbuilt; i++) tn_object_release(l.objs[i]);
  g_free(l.objs);
  tn__jdoc_free(doc);
  return rc;
}
