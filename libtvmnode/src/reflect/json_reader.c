/*
 * json_reader.c: YAJL events to small value trees, streamed per top-level
 * "nodes" element (see json_reader.h).
 *
 * Open containers sit on an explicit stack of levels, each collecting its
 * items in a reusable scratch vector; when a container closes, its items are
 * copied into the arena and the finished value goes to its parent. Values
 * inside the "nodes" array live in a node arena that is reset after every
 * element; the rest (version, root) in a document arena. Nesting is bounded
 * (MAX_DEPTH) because a graph document never needs more, and duplicate keys
 * are refused because they would make a document ambiguous.
 */
#include "reflect/json_reader.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <yajl/yajl_parse.h>

#define MAX_DEPTH 32
#define CHUNK_SIZE 65536

/* ---- a bump allocator ---------------------------------------------------- */

typedef struct Chunk {
  struct Chunk *next;
  size_t used, cap;
  char data[];
} Chunk;

typedef struct {
  Chunk *head;
} Arena;

static void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (a->head == NULL || a->head->used + n > a->head->cap) {
    size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;
    Chunk *c = malloc(sizeof(Chunk) + cap);
    if (c == NULL) return NULL;
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = a->head->data + a->head->used;
  a->head->used += n;
  return p;
}

/* Forget everything but keep one ordinary chunk for reuse. */
static void arena_reset(Arena *a) {
  while (a->head && (a->head->next || a->head->cap != CHUNK_SIZE)) {
    Chunk *c = a->head;
    a->head = c->next;
    free(c);
  }
  if (a->head) a->head->used = 0;
}

static void arena_free(Arena *a) {
  while (a->head) {
    Chunk *c = a->head;
    a->head = c->next;
    free(c);
  }
}

/* ---- the reader ----------------------------------------------------------- */

typedef struct {
  bool is_obj;
  bool streaming; /* the top-level "nodes" array */
  Arena *arena;
  JMember *members; /* scratch, reused (by whatever opens at this depth) */
  JVal **items;     /* scratch, reused */
  size_t n, cap_members, cap_items;
  const char *key; /* objects: the key whose value comes next */
  size_t klen;
} Level;

struct JDoc {
  Arena arena;
  JVal *root;
};

typedef struct {
  JDoc *doc;
  Arena node_arena;
  Level levels[MAX_DEPTH];
  int depth;
  JNodeFn on_node;
  void *ctx;
  size_t node_index;
  bool callback_failed; /* on_node raised: keep its error */
  const char *problem;  /* our own complaint about the text, if any */
} Reader;

static Arena *current_arena(Reader *r) {
  return r->depth >= 2 && r->levels[1].streaming ? &r->node_arena
                                                 : &r->doc->arena;
}

static JVal *new_val(Reader *r, JKind kind) {
  JVal *v = arena_alloc(current_arena(r), sizeof *v);
  if (v == NULL) {
    r->problem = "out of memory";
    return NULL;
  }
  v->kind = kind;
  return v;
}

static int deliver(Reader *r, JVal *v) {
  if (v == NULL) return 0;
  if (r->depth == 0) {
    r->doc->root = v;
    return 1;
  }
  Level *l = &r->levels[r->depth - 1];
  if (l->streaming) {
    int rc = r->on_node(r->ctx, v, r->node_index++);
    arena_reset(&r->node_arena);
    if (rc != 0) r->callback_failed = true;
    return rc == 0;
  }
  size_t *cap = l->is_obj ? &l->cap_members : &l->cap_items;
  if (l->n == *cap) {
    size_t grown = *cap ? *cap * 2 : 8;
    void *p = l->is_obj ? realloc(l->members, grown * sizeof(JMember))
                        : realloc(l->items, grown * sizeof(JVal *));
    if (p == NULL) {
      r->problem = "out of memory";
      return 0;
    }
    if (l->is_obj) l->members = p;
    else l->items = p;
    *cap = grown;
  }
  if (l->is_obj) {
    l->members[l->n].key = l->key;
    l->members[l->n].klen = l->klen;
    l->members[l->n].val = v;
  } else {
    l->items[l->n] = v;
  }
  l->n++;
  return 1;
}

static int on_null(void *ctx) {
  Reader *r = ctx;
  return deliver(r, new_val(r, J_NULL));
}

static int on_boolean(void *ctx, int b) {
  Reader *r = ctx;
  JVal *v = new_val(r, J_BOOL);
  if (v) v->u.b = b != 0;
  return deliver(r, v);
}

static int on_number(void *ctx, const char *s, size_t n) {
  Reader *r = ctx;
  char buf[64];
  if (n >= sizeof buf) {
    r->problem = "number too long";
    return 0;
  }
  memcpy(buf, s, n);
  buf[n] = '\0';
  bool is_float = memchr(buf, '.', n) || memchr(buf, 'e', n) ||
                  memchr(buf, 'E', n);
  JVal *v = new_val(r, is_float ? J_FLOAT : J_INT);
  if (v == NULL) return 0;
  errno = 0;
  if (is_float) {
    v->u.f = g_ascii_strtod(buf, NULL);
    if (isinf(v->u.f)) {
      r->problem = "number out of range";
      return 0;
    }
  } else {
    v->u.i = strtoll(buf, NULL, 10);
    if (errno == ERANGE) {
      r->problem = "integer out of the int64 range";
      return 0;
    }
  }
  return deliver(r, v);
}

static const char *copy_text(Reader *r, const unsigned char *s, size_t n) {
  char *p = arena_alloc(current_arena(r), n + 1);
  if (p == NULL) {
    r->problem = "out of memory";
    return NULL;
  }
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
  Reader *r = ctx;
  JVal *v = new_val(r, J_STR);
  if (v == NULL || (v->u.str.s = copy_text(r, s, n)) == NULL) return 0;
  v->u.str.n = n;
  return deliver(r, v);
}

static int open_level(Reader *r, bool is_obj) {
  if (r->depth == MAX_DEPTH) {
    r->problem = "nesting deeper than 32 levels";
    return 0;
  }
  Level *parent = r->depth ? &r->levels[r->depth - 1] : NULL;
  Level *l = &r->levels[r->depth];
  l->is_obj = is_obj;
  l->streaming = !is_obj && r->depth == 1 && parent->klen == 5 &&
                 memcmp(parent->key, "nodes", 5) == 0;
  l->n = 0;
  l->key = NULL;
  l->klen = 0;
  r->depth++;
  /* The streamed array itself belongs to the document; its elements to
   * the node arena. */
  l->arena = l->streaming ? &r->doc->arena : current_arena(r);
  return 1;
}

static int on_start_map(void *ctx) { return open_level(ctx, true); }
static int on_start_array(void *ctx) { return open_level(ctx, false); }

static int on_map_key(void *ctx, const unsigned char *s, size_t n) {
  Reader *r = ctx;
  Level *l = &r->levels[r->depth - 1];
  if ((l->key = copy_text(r, s, n)) == NULL) return 0;
  l->klen = n;
  return 1;
}

static bool has_duplicate(const JMember *m, size_t n) {
  if (n < 2) return false;
  if (n <= 32) {
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++)
        if (m[i].klen == m[j].klen && memcmp(m[i].key, m[j].key, m[i].klen) == 0)
          return true;
    return false;
  }
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  bool dup = false;
  for (size_t i = 0; i < n && !dup; i++) {
    dup = g_hash_table_contains(seen, m[i].key);
    g_hash_table_add(seen, (gpointer)m[i].key);
  }
  g_hash_table_destroy(seen);
  return dup;
}

static int close_level(Reader *r) {
  Level *l = &r->levels[r->depth - 1];
  JVal *v = arena_alloc(l->arena, sizeof *v);
  if (v == NULL) {
    r->problem = "out of memory";
    return 0;
  }
  if (l->is_obj) {
    if (has_duplicate(l->members, l->n)) {
      r->problem = "duplicate key in an object";
      return 0;
    }
    v->kind = J_OBJ;
    v->u.obj.n = l->n;
    v->u.obj.members = arena_alloc(l->arena, sizeof(JMember) * (l->n ? l->n : 1));
    if (v->u.obj.members == NULL) return (r->problem = "out of memory"), 0;
    if (l->n) memcpy(v->u.obj.members, l->members, sizeof(JMember) * l->n);
  } else {
    v->kind = J_ARR;
    v->u.arr.n = l->n;
    v->u.arr.items = arena_alloc(l->arena, sizeof(JVal *) * (l->n ? l->n : 1));
    if (v->u.arr.items == NULL) return (r->problem = "out of memory"), 0;
    if (l->n) memcpy(v->u.arr.items, l->items, sizeof(JVal *) * l->n);
  }
  r->depth--;
  return deliver(r, v);
}

static int on_end(void *ctx) { return close_level(ctx); }

static const yajl_callbacks kCallbacks = {
    on_null,  on_boolean,   NULL,       NULL,   on_number,      on_string,
    on_start_map, on_map_key, on_end, on_start_array, on_end};

/* Raise a ValueError for bad text at byte `at`, with its line and column. */
static void text_error(const char *text, size_t size, size_t at,
                       const char *what) {
  if (at > size) at = size;
  int line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  tn_error_raise_in(TN_ERR_VALUE, "tn_json_load",
                    "invalid JSON at line %d, column %d (byte %zu): %s", line,
                    col, at, what);
}

JDoc *tn__json_read(const char *text, size_t size, JNodeFn on_node,
                    void *ctx) {
  JDoc *doc = g_new0(JDoc, 1);
  Reader r;
  memset(&r, 0, sizeof r);
  r.doc = doc;
  r.on_node = on_node;
  r.ctx = ctx;
  yajl_handle h = yajl_alloc(&kCallbacks, NULL, &r);
  yajl_status st = yajl_parse(h, (const unsigned char *)text, size);
  if (st == yajl_status_ok) st = yajl_complete_parse(h);
  if (st == yajl_status_ok && doc->root == NULL) {
    r.problem = "no value";
    st = yajl_status_error;
  }
  if (st != yajl_status_ok) {
    if (!r.callback_failed) {
      size_t at = yajl_get_bytes_consumed(h);
      if (r.problem) {
        text_error(text, size, at, r.problem);
      } else {
        unsigned char *msg =
            yajl_get_error(h, 0, (const unsigned char *)text, size);
        /* YAJL's message ends with a newline; drop it. */
        char *clean = g_strchomp(g_strdup((const char *)msg));
        text_error(text, size, at, clean);
        g_free(clean);
        yajl_free_error(h, msg);
      }
    }
    tn__jdoc_free(doc);
    doc = NULL;
  }
  yajl_free(h);
  for (int i = 0; i < MAX_DEPTH; i++) {
    free(r.levels[i].members);
    free(r.levels[i].items);
  }
  arena_free(&r.node_arena);
  return doc;
}

const JVal *tn__jdoc_root(const JDoc *doc) { return doc->root; }

void tn__jdoc_free(JDoc *doc) {
  if (doc == NULL) return;
  arena_free(&doc->arena);
  g_free(doc);
}

const JVal *tn__jobj_get(const JVal *obj, const char *key) {
  if (obj == NULL || obj->kind != J_OBJ) return NULL;
  size_t n = strlen(key);
  for (size_t i = 0; i < obj->u.obj.n; i++) {
    const JMember *m = &obj->u.obj.members[i];
    if (m->klen == n && memcmp(m->key, key, n) == 0) return m->val;
  }
  return NULL;
}

const char *tn__jkind_name(const JVal *v) {
  switch (v->kind) {
    case J_OBJ: return "an object";
    case J_ARR: return "an array";
    case J_STR: return "a string";
    case J_INT: return "an integer";
    case J_FLOAT: return "a float";
    case J_BOOL: return "a bool";
    default: return "null";
  }
}
