/*
 * node.c: node types, the reflected side of the type table.
 *
 * A node type describes its object's layout as a list of fields (name,
 * offset, kind, flags, default), inherited fields first. Everything generic
 * is written once against that list: allocation with defaults, kw-style
 * construction, checked get/set by name, the deleter that releases fields,
 * and (in other files) structural equality, hashing, JSON and printing.
 * Registration checks the layout it is given (bounds, alignment, overlap,
 * duplicate names) because a wrong offset would otherwise corrupt memory
 * much later, far from the mistake. Node info is immutable once published.
 */
#include "reflect/reflect_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

static TnMutex g_node_lock; /* serialises registration */

const char *tn__field_kind_name(int32_t kind) {
  static const char *names[] = {"any", "obj", "int", "float",
                                "bool", "str", "DataType", "Device"};
  return kind >= 0 && kind <= TN_FIELD_DEVICE ? names[kind] : "?";
}

static const char *type_key(int32_t t) {
  return tn__type_key_or(t, "<unknown type>");
}

/* ------------------------------------------------------------------------ */
/* Field storage                                                             */
/* ------------------------------------------------------------------------ */

static inline void *slot(const TnObject *obj, const TnFieldInfo *f) {
  return (char *)obj + f->desc.offset;
}

static int store_error(const TnObject *obj, const TnFieldInfo *f,
                       const TnAny *v, const char *who) {
  const char *want = tn__field_kind_name(f->desc.kind);
  if (f->desc.kind == TN_FIELD_OBJ && f->obj_type != TN_TYPE_OBJECT)
    want = f->desc.type_key ? f->desc.type_key : type_key(f->obj_type);
  const char *or_none = (f->desc.flags & TN_FIELD_OPTIONAL) ? " or None" : "";
  return tn_error_raise_in(TN_ERR_TYPE, who,
                           "field '%s' of %s expects %s%s, got %s",
                           f->desc.name, tn_object_type_key(obj), want,
                           or_none, tn_any_type_key(v));
}

/* Whether an element stored in a container is of type `t` (see
 * tn_node_register: TN_TYPE_NONE takes anything). */
static bool elem_is(const TnAny *e, int32_t t) {
  switch (t) {
    case TN_TYPE_NONE: return true;
    case TN_TYPE_STRING:
      return e->type_index == TN_TYPE_STRING ||
             e->type_index == TN_TYPE_SMALL_STR;
    case TN_TYPE_FLOAT:
      return e->type_index == TN_TYPE_FLOAT || e->type_index == TN_TYPE_INT;
    default:
      if (t >= TN_TYPE_STATIC_OBJECT_BEGIN)
        return tn_any_is_object(e) && tn__is_instance(e->v_obj, t);
      return e->type_index == t;
  }
}

/* The elements (and keys) of a typed container field; a TypeError naming
 * the field, the first element that does not fit and its type. */
static int check_elements(const TnObject *obj, const TnFieldInfo *f,
                          const TnObject *c, const char *who) {
  if (f->obj_type == TN_TYPE_ARRAY) {
    int64_t n = tn_array_size(c);
    for (int64_t i = 0; i < n; i++) {
      const TnAny *e = tn_array_at(c, i);
      if (!elem_is(e, f->elem_type))
        return tn_error_raise_in(TN_ERR_TYPE, who, "field '%s' of %s expects "
                                 "%s: element %" PRId64 " is %s",
                                 f->desc.name, tn_object_type_key(obj),
                                 f->desc.type_key, i, tn_any_type_key(e));
    }
    return 0;
  }
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(c, 0, &k, &v); p >= 0;
       p = tn_map_next(c, p + 1, &k, &v)) {
    bool key_ok = elem_is(k, f->key_type);
    if (!key_ok || !elem_is(v, f->elem_type))
      return tn_error_raise_in(TN_ERR_TYPE, who, "field '%s' of %s expects "
                               "%s: entry %" PRId64 " has a %s %s",
                               f->desc.name, tn_object_type_key(obj),
                               f->desc.type_key, p, key_ok ? "value" : "key",
                               tn_any_type_key(key_ok ? v : k));
  }
  return 0;
}

int tn__field_store(TnObject *obj, const TnFieldInfo *f, const TnAny *v,
                    const char *who) {
  void *p = slot(obj, f);
  int32_t t = v->type_index;
  bool optional = f->desc.flags & TN_FIELD_OPTIONAL;
  switch (f->desc.kind) {
    case TN_FIELD_ANY: {
      TnAny owned;
      if (tn__any_own_in(&owned, v, who)) return -1;
      TnAny old;
      memcpy(&old, p, sizeof old);
      memcpy(p, &owned, sizeof owned);
      tn__any_clear(&old);
      return 0;
    }
    case TN_FIELD_OBJ:
    case TN_FIELD_STR: {
      TnObject *o = NULL;
      if (t == TN_TYPE_NONE) {
        if (!optional) break;
      } else if (f->desc.kind == TN_FIELD_STR ||
                 f->obj_type == TN_TYPE_STRING) {
        if (t == TN_TYPE_STRING) {
          o = v->v_obj;
          tn__retain(o);
        } else {
          const char *d;
          size_t n;
          if (t != TN_TYPE_RAW_STR && t != TN_TYPE_SMALL_STR) break;
          if (tn_any_as_str(v, &d, &n)) return -1;
          o = tn__string_new(TN_TYPE_STRING, d, n, who);
          if (o == NULL) return -1;
        }
      } else if (tn_any_is_object(v) && tn__is_instance(v->v_obj, f->obj_type)) {
        o = v->v_obj;
        if ((f->elem_type != TN_TYPE_NONE || f->key_type != TN_TYPE_NONE) &&
            check_elements(obj, f, o, who))
          return -1;
        tn__retain(o);
      } else {
        break;
      }
      TnObject *old;
      memcpy(&old, p, sizeof old);
      memcpy(p, &o, sizeof o);
      if (old) tn__release(old);
      return 0;
    }
    case TN_FIELD_INT:
      if (t != TN_TYPE_INT && t != TN_TYPE_BOOL) break;
      memcpy(p, &v->v_int64, 8);
      return 0;
    case TN_FIELD_FLOAT: {
      double d;
      if (t == TN_TYPE_FLOAT) d = v->v_float64;
      else if (t == TN_TYPE_INT || t == TN_TYPE_BOOL) d = (double)v->v_int64;
      else break;
      memcpy(p, &d, 8);
      return 0;
    }
    case TN_FIELD_BOOL:
      if (t != TN_TYPE_BOOL && t != TN_TYPE_INT) break;
      *(bool *)p = v->v_int64 != 0;
      return 0;
    case TN_FIELD_DTYPE: {
      DLDataType d;
      if (t == TN_TYPE_DATA_TYPE) d = v->v_dtype;
      else if (t == TN_TYPE_RAW_STR || t == TN_TYPE_SMALL_STR ||
               t == TN_TYPE_STRING) {
        if (tn_any_as_dtype(v, &d)) return -1;
      } else break;
      memcpy(p, &d, sizeof d);
      return 0;
    }
    case TN_FIELD_DEVICE:
      if (t != TN_TYPE_DEVICE) break;
      memcpy(p, &v->v_device, sizeof v->v_device);
      return 0;
  }
  return store_error(obj, f, v, who);
}

void tn__field_view(const TnObject *obj, const TnFieldInfo *f, TnAny *out) {
  const void *p = slot(obj, f);
  switch (f->desc.kind) {
    case TN_FIELD_ANY: memcpy(out, p, sizeof *out); return;
    case TN_FIELD_OBJ:
    case TN_FIELD_STR: {
      TnObject *o;
      memcpy(&o, p, sizeof o);
      *out = tn_any_obj(o);
      return;
    }
    case TN_FIELD_INT: {
      int64_t i;
      memcpy(&i, p, 8);
      *out = tn_any_int(i);
      return;
    }
    case TN_FIELD_FLOAT: {
      double d;
      memcpy(&d, p, 8);
      *out = tn_any_float(d);
      return;
    }
    case TN_FIELD_BOOL: *out = tn_any_bool(*(const bool *)p); return;
    case TN_FIELD_DTYPE: {
      DLDataType d;
      memcpy(&d, p, sizeof d);
      *out = tn_any_dtype(d);
      return;
    }
    case TN_FIELD_DEVICE: {
      DLDevice d;
      memcpy(&d, p, sizeof d);
      *out = tn_any_device(d);
      return;
    }
  }
  *out = tn_any_none();
}

void tn__field_load(const TnObject *obj, const TnFieldInfo *f, TnAny *out) {
  TnAny v;
  tn__field_view(obj, f, &v);
  tn_any_copy(out, &v);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */
/* ------------------------------------------------------------------------ */

static void node_deleter(TnObject *obj, int flags) {
  if (flags & TN_DELETER_DESTRUCT) tn_node_destruct_fields(obj);
  if (flags & TN_DELETER_FREE) tn__object_mfree(obj);
}

static void field_info_free(TnFieldInfo *f) {
  g_free((char *)f->desc.name);
  g_free((char *)f->desc.type_key);
  g_free((char *)f->desc.doc);
  tn_any_clear(&f->desc.default_value);
}

static size_t field_align(int32_t kind) {
  return kind == TN_FIELD_BOOL ? 1 : kind == TN_FIELD_DTYPE ? 2
       : kind == TN_FIELD_DEVICE ? 4 : 8;
}

static int reg_error(const char *key, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int reg_error(const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  tn_error_raise_in(TN_ERR_VALUE, "tn_node_register", "'%s': %s", key, why);
  g_free(why);
  return -1;
}

/* One type key of a field's type, [s, e) with spaces trimmed: "any" is
 * TN_TYPE_NONE (not checked). */
static int32_t parse_type_name(const char *key, const TnFieldDesc *d,
                               const char *s, const char *e) {
  while (s < e && *s == ' ') s++;
  while (e > s && e[-1] == ' ') e--;
  char *name = g_strndup(s, (gsize)(e - s));
  int32_t t = strcmp(name, "any") == 0 ? TN_TYPE_NONE : tn_type_index(name);
  if (t < 0) {
    tn_error_set_raised(NULL);
    reg_error(key, "field '%s' refers to unknown type '%s'", d->name, name);
  } else if (strchr(name, '<')) {
    t = -1;
    reg_error(key, "field '%s': nested container types ('%s') are not "
              "supported", d->name, d->type_key);
  }
  g_free(name);
  return t;
}

/* The type of an obj field: a type key ("ir.Expr"), or a typed immutable
 * container, "tn.Array<T>" or "tn.Map<K, V>", whose elements are checked
 * whenever the field is stored. */
static int parse_field_type(const char *key, const TnFieldDesc *d,
                            int32_t *obj, int32_t *elem, int32_t *keyt) {
  const char *tk = d->type_key, *lt = strchr(tk, '<');
  if (lt == NULL)
    return (*obj = parse_type_name(key, d, tk, tk + strlen(tk))) < 0 ? -1 : 0;
  const char *end = tk + strlen(tk);
  if (end[-1] != '>')
    return reg_error(key, "field '%s': type '%s' does not end with '>'",
                     d->name, tk);
  if ((*obj = parse_type_name(key, d, tk, lt)) < 0) return -1;
  const char *comma = memchr(lt + 1, ',', (size_t)(end - 1 - (lt + 1)));
  int32_t want = *obj == TN_TYPE_ARRAY ? 1 : *obj == TN_TYPE_MAP ? 2 : 0;
  if (want == 0)
    return reg_error(key, "field '%s': only tn.Array<T> and tn.Map<K, V> "
                     "take element types, got '%s'", d->name, tk);
  if ((comma != NULL) != (want == 2))
    return reg_error(key, "field '%s': '%s' needs %d element type%s",
                     d->name, tk, want, want == 1 ? "" : "s");
  if (want == 1)
    return (*elem = parse_type_name(key, d, lt + 1, end - 1)) < 0 ? -1 : 0;
  if ((*keyt = parse_type_name(key, d, lt + 1, comma)) < 0) return -1;
  return (*elem = parse_type_name(key, d, comma + 1, end - 1)) < 0 ? -1 : 0;
}

/* Check one field and copy it into `out`; fields[0, n) are the ones
 * already accepted (inherited and own). */
static int add_field(const char *key, const TnFieldDesc *d, int64_t size,
                     const TnFieldInfo *fields, int32_t n, TnFieldInfo *out) {
  if (d->name == NULL || d->name[0] == '\0')
    return reg_error(key, "field %d has no name", n);
  if (d->kind < TN_FIELD_ANY || d->kind > TN_FIELD_DEVICE)
    return reg_error(key, "field '%s' has unknown kind %d", d->name, d->kind);
  int64_t width = (int64_t)tn__field_size(d->kind);
  if (d->offset < (int64_t)sizeof(TnObject) || d->offset + width > size)
    return reg_error(key,
                     "field '%s' at offset %" PRId64 " (%" PRId64
                     " bytes) is outside the object's %" PRId64 "-byte body",
                     d->name, d->offset, width, size);
  if (d->offset % (int64_t)field_align(d->kind) != 0)
    return reg_error(key, "field '%s' at offset %" PRId64 " is not aligned",
                     d->name, d->offset);
  if (d->flags & ~(TN_FIELD_READONLY | TN_FIELD_NO_SEQ | TN_FIELD_HAS_DEFAULT |
                   TN_FIELD_OPTIONAL | TN_FIELD_DEF | TN_FIELD_NO_SAVE))
    return reg_error(key, "field '%s' has unknown flags 0x%x", d->name,
                     d->flags);
  if ((d->flags & TN_FIELD_DEF) && d->kind != TN_FIELD_OBJ &&
      d->kind != TN_FIELD_ANY)
    return reg_error(key, "field '%s': only obj and any fields can define "
                     "variables", d->name);
  for (int32_t i = 0; i < n; i++) {
    const TnFieldDesc *o = &fields[i].desc;
    if (strcmp(o->name, d->name) == 0)
      return reg_error(key, "field '%s' is declared twice", d->name);
    int64_t ow = (int64_t)tn__field_size(o->kind);
    if (d->offset < o->offset + ow && o->offset < d->offset + width)
      return reg_error(key, "field '%s' overlaps field '%s'", d->name,
                       o->name);
  }
  int32_t obj_type = TN_TYPE_OBJECT;
  int32_t elem_type = TN_TYPE_NONE, key_type = TN_TYPE_NONE;
  if (d->type_key && d->kind == TN_FIELD_OBJ &&
      parse_field_type(key, d, &obj_type, &elem_type, &key_type))
    return -1;
  memset(out, 0, sizeof *out);
  out->desc = *d;
  out->desc.name = g_strdup(d->name);
  out->desc.type_key = d->type_key ? g_strdup(d->type_key) : NULL;
  out->desc.doc = d->doc ? g_strdup(d->doc) : NULL;
  out->desc.default_value = tn_any_none();
  out->obj_type = obj_type;
  out->elem_type = elem_type;
  out->key_type = key_type;
  if (d->flags & TN_FIELD_HAS_DEFAULT) {
    /* Check the default by storing it in a scratch object of the field's
     * shape, then keep the converted form. */
    union {
      TnObject header;
      char bytes[sizeof(TnObject) + 16];
    } scratch = {0};
    TnFieldInfo tmp = *out;
    tmp.desc.offset = sizeof(TnObject);
    scratch.header.type_index = TN_TYPE_OBJECT;
    if (tn__field_store(&scratch.header, &tmp, &d->default_value,
                        "tn_node_register")) {
      field_info_free(out);
      return -1;
    }
    tn__field_view(&scratch.header, &tmp, &out->desc.default_value);
    /* The scratch slot's reference (if any) moves to the default. */
  }
  return 0;
}

TN_API int32_t tn_node_register(const TnNodeDesc *desc) {
  if (desc == NULL) return tn__raise_null("tn_node_register", "desc");
  const char *key = desc->type_key;
  if (key == NULL) return tn__raise_null("tn_node_register", "type_key");
  if (desc->kind < TN_NODE_TREE || desc->kind > TN_NODE_UNIQUE)
    return reg_error(key, "unknown node kind %d", desc->kind);
  if (desc->flags & ~TN_NODE_NO_CREATE)
    return reg_error(key, "unknown node flags 0x%x", desc->flags);
  if (desc->nfields < 0 || (desc->nfields > 0 && desc->fields == NULL))
    return reg_error(key, "%d fields given with fields = %p", desc->nfields,
                     (const void *)desc->fields);
  const TnTypeInfo *parent = tn__type_info(desc->parent_index);
  const TnNodeInfo *pnode = tn__node_info(desc->parent_index);
  if (parent == NULL || !parent->is_object ||
      (pnode == NULL && desc->parent_index != TN_TYPE_OBJECT))
    return TN_RAISE(TYPE,
                    "parent index %d of '%s' is not tn.Object or a node type",
                    desc->parent_index, key);
  int64_t psize = pnode ? pnode->size : (int64_t)sizeof(TnObject);
  if (desc->size < psize)
    return reg_error(key, "size %" PRId64 " is smaller than the parent's %"
                     PRId64, desc->size, psize);

  /* Build and check everything before the type key is touched, so that a
   * rejected declaration leaves no trace. */
  int32_t ninherited = pnode ? pnode->nfields : 0;
  int32_t total = ninherited + desc->nfields;
  TnNodeInfo *node = g_new0(TnNodeInfo, 1);
  node->fields = g_new0(TnFieldInfo, total > 0 ? total : 1);
  int32_t n = 0;
  for (; n < ninherited; n++) {
    node->fields[n] = pnode->fields[n];
    TnFieldDesc *d = &node->fields[n].desc;
    d->name = g_strdup(d->name);
    d->type_key = d->type_key ? g_strdup(d->type_key) : NULL;
    d->doc = d->doc ? g_strdup(d->doc) : NULL;
    tn_any_copy(&d->default_value, &pnode->fields[n].desc.default_value);
  }
  int32_t index = 0;
  for (int32_t i = 0; i < desc->nfields && index == 0; i++) {
    if (add_field(key, &desc->fields[i], desc->size, node->fields, n,
                  &node->fields[n]) == 0)
      n++;
    else
      index = -1;
  }
  tn__mutex_lock(&g_node_lock);
  TnTypeInfo *info = NULL;
  if (index == 0) {
    index = tn_type_register(key, desc->parent_index);
    info = index >= 0 ? (TnTypeInfo *)tn__type_info(index) : NULL;
    if (info && atomic_load_explicit(&info->node, memory_order_acquire)) {
      reg_error(key, "already declared as a node type");
      info = NULL;
    }
  }
  if (info == NULL) {
    tn__mutex_unlock(&g_node_lock);
    for (int32_t i = 0; i < n; i++) field_info_free(&node->fields[i]);
    g_free(node->fields);
    g_free(node);
    return -1;
  }
  node->kind = desc->kind;
  node->flags = desc->flags;
  node->size = desc->size;
  node->nfields = n;
  node->deleter = desc->deleter ? desc->deleter : node_deleter;
  node->doc = desc->doc ? g_strdup(desc->doc) : NULL;
  node->key_hash = tn__hash_bytes(key, strlen(key)) ^ (uint64_t)desc->kind;
  atomic_store_explicit(&info->node, node, memory_order_release);
  tn__mutex_unlock(&g_node_lock);
  return index;
}

TN_API int32_t tn_node_register_any_slots(const char *type_key,
                                          int32_t parent_index, int32_t kind,
                                          const char *const *names,
                                          int32_t nfields) {
  if (nfields < 0 || (nfields > 0 && names == NULL))
    return TN_RAISE(VALUE, "%d fields given with names = %p", nfields,
                    (const void *)names);
  const TnNodeInfo *pnode = tn__node_info(parent_index);
  int64_t base = pnode ? pnode->size : (int64_t)sizeof(TnObject);
  base = (base + 7) / 8 * 8;
  TnFieldDesc *fields = g_new0(TnFieldDesc, nfields > 0 ? nfields : 1);
  for (int32_t i = 0; i < nfields; i++) {
    fields[i].name = names[i];
    fields[i].offset = base + (int64_t)sizeof(TnAny) * i;
    fields[i].kind = TN_FIELD_ANY;
    fields[i].flags = TN_FIELD_OPTIONAL;
  }
  TnNodeDesc desc = {type_key, parent_index, kind, 0,
                     base + (int64_t)sizeof(TnAny) * nfields, fields, nfields,
                     NULL, NULL};
  int32_t rc = tn_node_register(&desc);
  g_free(fields);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

static const TnNodeInfo *node_or_raise(int32_t type_index, const char *who) {
  const TnNodeInfo *n = tn__node_info(type_index);
  if (n == NULL) {
    if (tn__type_info(type_index) == NULL)
      tn_error_raise_in(TN_ERR_KEY, who, "no type has index %d", type_index);
    else
      tn_error_raise_in(TN_ERR_TYPE, who,
                        "%s is not a node type (it has no fields)",
                        type_key(type_index));
  }
  return n;
}

TN_API int32_t tn_type_field_count(int32_t type_index) {
  const TnNodeInfo *n = node_or_raise(type_index, "tn_type_field_count");
  return n ? n->nfields : -1;
}

TN_API int64_t tn_type_node_size(int32_t type_index) {
  const TnNodeInfo *n = node_or_raise(type_index, "tn_type_node_size");
  return n ? n->size : -1;
}

TN_API const TnFieldDesc *tn_type_field_at(int32_t type_index, int32_t i) {
  const TnNodeInfo *n = node_or_raise(type_index, "tn_type_field_at");
  if (n == NULL) return NULL;
  if (i < 0 || i >= n->nfields) {
    TN_RAISE(INDEX, "field %d is out of range for %s, which has %d fields", i,
             type_key(type_index), n->nfields);
    return NULL;
  }
  return &n->fields[i].desc;
}

static int32_t find_field(const TnNodeInfo *n, const char *name) {
  for (int32_t i = 0; i < n->nfields; i++)
    if (strcmp(n->fields[i].desc.name, name) == 0) return i;
  return -1;
}

static int no_field(int32_t type_index, const char *name, const char *who) {
  return tn_error_raise_in(TN_ERR_ATTRIBUTE, who, "%s has no field '%s'",
                           type_key(type_index), name);
}

TN_API int32_t tn_type_field_index(int32_t type_index, const char *name) {
  if (name == NULL) return tn__raise_null("tn_type_field_index", "name");
  const TnNodeInfo *n = node_or_raise(type_index, "tn_type_field_index");
  if (n == NULL) return -1;
  int32_t i = find_field(n, name);
  return i >= 0 ? i : no_field(type_index, name, "tn_type_field_index");
}

TN_API int32_t tn_type_node_kind(int32_t type_index) {
  if (tn__type_info(type_index) == NULL)
    return TN_RAISE(KEY, "no type has index %d", type_index);
  const TnNodeInfo *n = tn__node_info(type_index);
  return n ? n->kind : TN_NODE_UNIQUE;
}

/* ------------------------------------------------------------------------ */
/* Making and destroying nodes                                               */
/* ------------------------------------------------------------------------ */

static TnObject *alloc_node(int32_t type_index, const TnNodeInfo *n,
                            const char *who) {
  TnObject *obj = tn__object_malloc((size_t)n->size, 0, type_index, who);
  if (obj == NULL) return NULL;
  tn__object_zero_body(obj, (size_t)n->size);
  tn__object_init(obj, type_index, n->deleter);
  for (int32_t i = 0; i < n->nfields; i++) {
    const TnFieldInfo *f = &n->fields[i];
    if (f->desc.flags & TN_FIELD_HAS_DEFAULT) {
      tn__field_store(obj, f, &f->desc.default_value, who); /* checked once */
    } else if (f->desc.kind == TN_FIELD_DTYPE) {
      /* All-zero bits are no DataType at all ("int0x0"); start from void. */
      DLDataType v = {kDLOpaqueHandle, 0, 0};
      memcpy(slot(obj, f), &v, sizeof v);
    } else if (f->desc.kind == TN_FIELD_DEVICE) {
      DLDevice v = {kDLCPU, 0}; /* device type 0 is no device */
      memcpy(slot(obj, f), &v, sizeof v);
    }
  }
  return obj;
}

TN_API TnObject *tn_node_alloc(int32_t type_index) {
  const TnNodeInfo *n = node_or_raise(type_index, "tn_node_alloc");
  return n ? alloc_node(type_index, n, "tn_node_alloc") : NULL;
}

TN_API TnObject *tn_node_new(int32_t type_index, const char *const *names,
                             const TnAny *values, int32_t count) {
  const char *who = "tn_node_new";
  const TnNodeInfo *n = node_or_raise(type_index, who);
  if (n == NULL) return NULL;
  if (n->flags & TN_NODE_NO_CREATE)
    return tn__node_make(type_index, names, values, count, who);
  if (count < 0 || (count > 0 && (names == NULL || values == NULL))) {
    tn_error_raise_in(TN_ERR_VALUE, who,
                      "%d values given with names = %p, values = %p", count,
                      (const void *)names, (const void *)values);
    return NULL;
  }
  TnObject *obj = alloc_node(type_index, n, who);
  if (obj == NULL) return NULL;
  uint64_t seen_small = 0; /* bitmap for the first 64 fields */
  bool *seen = n->nfields > 64 ? g_new0(bool, n->nfields) : NULL;
  for (int32_t k = 0; k < count; k++) {
    if (names[k] == NULL) {
      tn__raise_null(who, "names[k]");
      goto fail;
    }
    int32_t i = find_field(n, names[k]);
    if (i < 0) {
      no_field(type_index, names[k], who);
      goto fail;
    }
    bool dup = seen ? seen[i] : (seen_small >> i) & 1;
    if (dup) {
      tn_error_raise_in(TN_ERR_TYPE, who, "field '%s' of %s is given twice",
                        names[k], type_key(type_index));
      goto fail;
    }
    if (seen) seen[i] = true;
    else seen_small |= UINT64_C(1) << i;
    if (tn__field_store(obj, &n->fields[i], &values[k], who)) goto fail;
  }
  for (int32_t i = 0; i < n->nfields; i++) {
    const TnFieldDesc *d = &n->fields[i].desc;
    bool given = seen ? seen[i] : (seen_small >> i) & 1;
    if (!given && !(d->flags & (TN_FIELD_HAS_DEFAULT | TN_FIELD_OPTIONAL))) {
      tn_error_raise_in(TN_ERR_TYPE, who, "%s is missing required field '%s'",
                        type_key(type_index), d->name);
      goto fail;
    }
  }
  g_free(seen);
  return obj;
fail:
  g_free(seen);
  tn__release(obj);
  return NULL;
}

TN_API void tn_node_destruct_fields(TnObject *obj) {
  if (obj == NULL) return;
  const TnNodeInfo *n = tn__node_info(obj->type_index);
  if (n == NULL) return;
  for (int32_t i = 0; i < n->nfields; i++) {
    const TnFieldInfo *f = &n->fields[i];
    void *p = slot(obj, f);
    if (f->desc.kind == TN_FIELD_ANY) {
      TnAny a;
      memcpy(&a, p, sizeof a);
      memset(p, 0, sizeof a);
      tn__any_clear(&a);
    } else if (f->desc.kind == TN_FIELD_OBJ || f->desc.kind == TN_FIELD_STR) {
      TnObject *o;
      memcpy(&o, p, sizeof o);
      memset(p, 0, sizeof o);
      if (o) tn__release(o);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Get and set                                                               */
/* ------------------------------------------------------------------------ */

static const TnNodeInfo *node_of(const TnObject *obj, const char *who) {
  if (obj == NULL) return tn__raise_null(who, "obj"), NULL;
  return node_or_raise(obj->type_index, who);
}

TN_API int tn_node_get(const TnObject *obj, const char *name, TnAny *out) {
  const char *who = "tn_node_get";
  if (name == NULL) return tn__raise_null(who, "name");
  if (out == NULL) return tn__raise_null(who, "out");
  const TnNodeInfo *n = node_of(obj, who);
  if (n == NULL) return -1;
  int32_t i = find_field(n, name);
  if (i < 0) return no_field(obj->type_index, name, who);
  tn__field_load(obj, &n->fields[i], out);
  return 0;
}

/* The node info of `obj` when `field` is one of its field indices; NULL with
 * the error otherwise. */
static const TnNodeInfo *node_with_field(const TnObject *obj, int32_t field,
                                         const char *who) {
  const TnNodeInfo *n = node_of(obj, who);
  if (n != NULL && (field < 0 || field >= n->nfields)) {
    tn_error_raise_in(TN_ERR_INDEX, who,
                      "field %d is out of range for %s, which has %d fields",
                      field, tn_object_type_key(obj), n->nfields);
    return NULL;
  }
  return n;
}

TN_API int tn_node_get_at(const TnObject *obj, int32_t field, TnAny *out) {
  const char *who = "tn_node_get_at";
  if (out == NULL) return tn__raise_null(who, "out");
  const TnNodeInfo *n = node_with_field(obj, field, who);
  if (n == NULL) return -1;
  tn__field_load(obj, &n->fields[field], out);
  return 0;
}

static int set_checked(TnObject *obj, const TnNodeInfo *n, int32_t i,
                       const TnAny *value, const char *who) {
  const TnFieldInfo *f = &n->fields[i];
  if (value == NULL) return tn__raise_null(who, "value");
  if (f->desc.flags & TN_FIELD_READONLY)
    return tn_error_raise_in(TN_ERR_ATTRIBUTE, who,
                             "field '%s' of %s is read-only", f->desc.name,
                             tn_object_type_key(obj));
  return tn__field_store(obj, f, value, who);
}

TN_API int tn_node_set(TnObject *obj, const char *name, const TnAny *value) {
  const char *who = "tn_node_set";
  if (name == NULL) return tn__raise_null(who, "name");
  const TnNodeInfo *n = node_of(obj, who);
  if (n == NULL) return -1;
  int32_t i = find_field(n, name);
  if (i < 0) return no_field(obj->type_index, name, who);
  return set_checked(obj, n, i, value, who);
}

TN_API int tn_node_set_at(TnObject *obj, int32_t field, const TnAny *value) {
  const char *who = "tn_node_set_at";
  const TnNodeInfo *n = node_with_field(obj, field, who);
  if (n == NULL) return -1;
  return set_checked(obj, n, field, value, who);
}

TN_API int tn_node_init_at(TnObject *obj, int32_t field, const TnAny *value) {
  const char *who = "tn_node_init_at";
  if (value == NULL) return tn__raise_null(who, "value");
  const TnNodeInfo *n = node_with_field(obj, field, who);
  if (n == NULL) return -1;
  return tn__field_store(obj, &n->fields[field], value, who);
}

/* ------------------------------------------------------------------------ */
/* Walking a graph                                                           */
/* ------------------------------------------------------------------------ */

bool tn__object_next_child(const TnObject *o, int64_t *pos, TnAny *child) {
  int32_t t = o->type_index;
  if (t == TN_TYPE_ARRAY || t == TN_TYPE_LIST) {
    const TnArrayObj *a = (const TnArrayObj *)o;
    if (*pos >= a->size) return false;
    *child = a->data[(*pos)++];
    return true;
  }
  if (t == TN_TYPE_MAP || t == TN_TYPE_DICT) {
    const TnMapObj *m = (const TnMapObj *)o;
    for (;;) { /* even positions are keys, odd ones values */
      int64_t e = *pos / 2;
      if (e >= m->used) return false;
      bool key = (*pos)++ % 2 == 0;
      if (m->entries[e].key.type_index == TN__MAP_DELETED) continue;
      *child = key ? m->entries[e].key : m->entries[e].value;
      return true;
    }
  }
  const TnNodeInfo *n = tn__node_info(t);
  if (n == NULL || *pos >= n->nfields) return false;
  tn__field_view(o, &n->fields[(*pos)++], child);
  return true;
}

TnObject *tn__node_make(int32_t type_index, const char *const *names,
                        const TnAny *values, int32_t n, const char *who) {
  const TnAny *make = tn_type_attr_get("__make__", type_index);
  if (make == NULL || make->type_index != TN_TYPE_FUNCTION) {
    tn_error_raise_in(TN_ERR_TYPE, who,
                      "%s cannot be made generically; use its own constructor",
                      type_key(type_index));
    return NULL;
  }
  TnAny *keys = g_new(TnAny, n > 0 ? n : 1);
  for (int32_t i = 0; i < n; i++) keys[i] = tn_any_cstr(names[i]);
  TnObject *fields = tn_map_new(keys, values, n);
  g_free(keys);
  if (fields == NULL) return NULL;
  TnAny arg = tn_any_obj(fields), ret = tn_any_none();
  int rc = tn_func_call(make->v_obj, &arg, 1, &ret);
  tn_object_release(fields);
  if (rc) return NULL;
  if (!tn_any_is_object(&ret) || !tn__is_instance(ret.v_obj, type_index)) {
    tn_error_raise_in(TN_ERR_TYPE, who, "__make__ of %s returned %s",
                      type_key(type_index), tn_any_type_key(&ret));
    tn_any_clear(&ret);
    return NULL;
  }
  return ret.v_obj;
}

/* ------------------------------------------------------------------------ */
/* The registry's view                                                       */
/* ------------------------------------------------------------------------ */

/* tn.type_info(key or index) -> Map of what the type table knows of a
 * type, its reflected fields included. */
static int type_info(void *self, const TnAny *args, int32_t nargs,
                     TnAny *ret) {
  (void)self;
  if (nargs != 1)
    return tn_error_raise_in(TN_ERR_TYPE, NULL, "tn.type_info takes 1 "
                             "argument, got %d", nargs);
  int32_t t;
  const char *key;
  if (args[0].type_index == TN_TYPE_INT) {
    t = (int32_t)args[0].v_int64;
    if ((int64_t)t != args[0].v_int64 || tn_type_key(t) == NULL)
      return tn_error_raise_in(TN_ERR_KEY, "tn.type_info",
                               "no type has index %lld",
                               (long long)args[0].v_int64);
  } else if (tn_any_as_str(&args[0], &key, NULL) == 0) {
    t = tn_type_index(key);
    if (t < 0) return -1;
  } else {
    return tn_error_raise_in(TN_ERR_TYPE, "tn.type_info",
                             "argument 0: expected str or int, got %s",
                             tn_any_type_key(&args[0]));
  }
  const TnTypeInfo *info = tn__type_info(t);
  TnObject *fields = tn_array_new(NULL, 0);
  if (fields == NULL) return -1;
  const TnNodeInfo *node = tn__node_info(t);
  for (int32_t i = 0; node && i < node->nfields; i++) {
    const TnFieldDesc *d = &node->fields[i].desc;
    TnAny fk[] = {tn_any_cstr("name"), tn_any_cstr("kind"),
                  tn_any_cstr("flags"), tn_any_cstr("type_key"),
                  tn_any_cstr("offset"), tn_any_cstr("doc")};
    TnAny fv[] = {tn_any_cstr(d->name),
                  tn_any_cstr(tn__field_kind_name(d->kind)),
                  tn_any_int(d->flags), tn_any_cstr(d->type_key),
                  tn_any_int(d->offset), tn_any_cstr(d->doc)};
    TnObject *fm = tn_map_new(fk, fv, G_N_ELEMENTS(fk));
    TnAny item = tn_any_obj(fm);
    int rc = fm ? tn_array_push(&fields, &item) : -1;
    tn_object_release(fm);
    if (rc) {
      tn__release(fields);
      return -1;
    }
  }
  static const char *kinds[] = {"tree", "dag", "var", "unique"};
  TnAny keys[] = {tn_any_cstr("type_key"), tn_any_cstr("type_index"),
                  tn_any_cstr("parent_index"), tn_any_cstr("depth"),
                  tn_any_cstr("is_object"), tn_any_cstr("node_kind"),
                  tn_any_cstr("fields")};
  TnAny vals[] = {tn_any_cstr(info->key), tn_any_int(t),
                  tn_any_int(info->parent), tn_any_int(info->depth),
                  tn_any_bool(info->is_object),
                  node ? tn_any_cstr(kinds[node->kind]) : tn_any_none(),
                  tn_any_obj(fields)};
  TnObject *m = tn_map_new(keys, vals, G_N_ELEMENTS(keys));
  tn__release(fields);
  if (m == NULL) return -1;
  *ret = tn_any_obj(m);
  return 0;
}

void tn__reflect_init(void) {
  TnObject *f = tn_func_new(type_info, NULL, NULL);
  TN__INIT_CHECK(f != NULL);
  TN__INIT_CHECK(tn_func_register("tn.type_info", f, 0) == 0);
  tn_object_release(f);
}
