/*
 * text_parse.c: the text format, reading side (see text_print.c and
 * docs/ir.md).
 *
 * A hand-written recursive-descent parser over a small lexer. Nodes are
 * built through the same builders as in C, so a call that does not type
 * checks is refused with the builder's TypeError, prefixed with the line
 * and column of the call. Every object the parser makes is kept in one list
 * and released at the end, so an error anywhere leaks nothing.
 *
 * Recursion follows the nesting of the text (parentheses, blocks,
 * functions), never the length of a chain of bindings; nesting is bounded.
 */
#include "ir/ir_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

enum { T_EOF, T_LOCAL, T_GLOBAL, T_IDENT, T_NUM, T_STR, T_BYTES, T_PUNCT };

typedef struct {
  int kind;
  const char *start;
  size_t len;
  int line, col;
  char punct;        /* T_PUNCT; '>' for "->" */
  bool is_float;     /* T_NUM */
  double f;          /* T_NUM */
  int64_t i;         /* T_NUM, integers */
  bool u64;          /* T_NUM: too large for int64 */
  char suffix[4];    /* T_NUM: "", "f", "f64", "i8", ... */
} Tok;

typedef struct {
  const char *src;
  size_t len, pos;
  int line, col;
  Tok tok;
  bool failed;
  int depth;
  GPtrArray *owned;  /* everything made here, released at the end */
  GPtrArray *scopes; /* GHashTable: name -> object (borrowed from owned) */
  TnObject *meta;    /* tn.Array, or NULL */
  bool bare;         /* an expression, not a module: free variables allowed */
  Tok first_free;    /* where the first free variable is used */
  TnObject *error;   /* the first error, raised again at the end */
} Parser;

#define MAX_DEPTH 256

/* ---- errors ------------------------------------------------------------------ */

static void fail_at(Parser *p, const Tok *t, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static void fail_at(Parser *p, const Tok *t, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = true;
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  tn_error_raise_in(TN_ERR_VALUE, "tn_ir_parse", "line %d, column %d: %s",
                    t->line, t->col, msg);
  g_free(msg);
  p->error = tn_error_take_raised();
}

/* Re-raise the builder's error with the position of `t`, keeping its kind. */
static void blame_at(Parser *p, const Tok *t) {
  TnObject *cause = tn_error_take_raised();
  if (p->failed) { /* a builder called after the first error: drop it */
    tn_object_release(cause);
    return;
  }
  p->failed = true;
  tn_error_raise(
      cause ? tn_error_kind(cause) : tn_error_kind_name(TN_ERR_VALUE),
      "tn_ir_parse: line %d, column %d: %s", t->line, t->col,
      cause ? tn_error_message(cause) : "failed");
  tn_error_set_cause(tn_error_peek_raised(), cause);
  tn_object_release(cause);
  p->error = tn_error_take_raised();
}

static void describe(const Tok *t, char *buf, size_t n) {
  if (t->kind == T_EOF) g_strlcpy(buf, "the end of the text", n);
  else if (t->kind == T_PUNCT && t->punct == '>') g_strlcpy(buf, "'->'", n);
  else
    g_snprintf(buf, n, "'%.*s'", (int)MIN(t->len, (size_t)40), t->start);
}

static void expected(Parser *p, const char *what) {
  char got[64];
  describe(&p->tok, got, sizeof got);
  fail_at(p, &p->tok, "expected %s, got %s", what, got);
}

/* Keep an object for the rest of the parse; NULL (with the error) stays
 * NULL and marks the parse failed at `t`. */
static TnObject *keep(Parser *p, TnObject *o, const Tok *t) {
  if (o == NULL) {
    blame_at(p, t);
    return NULL;
  }
  g_ptr_array_add(p->owned, o);
  return o;
}

/* ---- lexer ------------------------------------------------------------------- */

static int peekc(Parser *p, size_t ahead) {
  return p->pos + ahead < p->len ? (unsigned char)p->src[p->pos + ahead] : -1;
}

static void advance_char(Parser *p) {
  if (p->src[p->pos] == '\n') {
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
  p->pos++;
}

static void skip_space(Parser *p) {
  for (;;) {
    int c = peekc(p, 0);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance_char(p);
    } else if (c == '/' && peekc(p, 1) == '/') {
      while (p->pos < p->len && p->src[p->pos] != '\n') advance_char(p);
    } else if (c == '/' && peekc(p, 1) == '*') {
      Tok at = {T_PUNCT, p->src + p->pos, 2, p->line, p->col, '/', 0, 0, 0, 0, ""};
      advance_char(p);
      advance_char(p);
      while (p->pos < p->len && !(peekc(p, 0) == '*' && peekc(p, 1) == '/'))
        advance_char(p);
      if (p->pos >= p->len) {
        fail_at(p, &at, "a comment is not closed");
        return;
      }
      advance_char(p);
      advance_char(p);
    } else {
      return;
    }
  }
}

static bool ident_char(int c, bool dots) {
  return c >= 0 && (g_ascii_isalnum(c) || c == '_' || (dots && c == '.'));
}

static void lex_number(Parser *p, Tok *t) {
  size_t start = p->pos;
  if (peekc(p, 0) == '-') advance_char(p);
  while (g_ascii_isdigit(peekc(p, 0))) advance_char(p);
  bool is_float = false;
  if (peekc(p, 0) == '.' && g_ascii_isdigit(peekc(p, 1))) {
    is_float = true;
    advance_char(p);
    while (g_ascii_isdigit(peekc(p, 0))) advance_char(p);
  }
  if ((peekc(p, 0) == 'e' || peekc(p, 0) == 'E') &&
      (g_ascii_isdigit(peekc(p, 1)) ||
       ((peekc(p, 1) == '-' || peekc(p, 1) == '+') && g_ascii_isdigit(peekc(p, 2))))) {
    is_float = true;
    advance_char(p);
    advance_char(p);
    while (g_ascii_isdigit(peekc(p, 0))) advance_char(p);
  }
  char *text = g_strndup(p->src + start, p->pos - start);
  t->is_float = is_float;
  errno = 0;
  if (is_float) {
    t->f = g_ascii_strtod(text, NULL);
  } else {
    t->i = g_ascii_strtoll(text, NULL, 10);
    if (errno == ERANGE && text[0] != '-') {
      errno = 0;
      t->u64 = true;
      t->i = (int64_t)g_ascii_strtoull(text, NULL, 10);
    }
    t->f = t->u64 ? (double)(uint64_t)t->i : (double)t->i;
  }
  /* ERANGE also reports a result that underflowed into the denormals, which
   * is exact (the printer writes those); only a float that overflowed or
   * vanished to zero, or an integer past 64 bits, is out of range */
  bool range = errno == ERANGE &&
               (!is_float || isinf(t->f) || t->f == 0.0);
  g_free(text);
  /* a type suffix: f, f32, f64, i8 ... u64 */
  size_t s = 0;
  int c = peekc(p, 0);
  if (c == 'f' || c == 'i' || c == 'u') {
    t->suffix[s++] = (char)c;
    advance_char(p);
    while (s < 3 && g_ascii_isdigit(peekc(p, 0))) {
      t->suffix[s++] = (char)peekc(p, 0);
      advance_char(p);
    }
  }
  t->suffix[s] = 0;
  t->len = p->pos - t->len;
  if (range) fail_at(p, t, "the number is out of range");
  if (ident_char(peekc(p, 0), false)) fail_at(p, t, "a number runs into a name");
}

static void next(Parser *p) {
  skip_space(p);
  Tok *t = &p->tok;
  memset(t, 0, sizeof *t);
  t->start = p->src + p->pos;
  t->line = p->line;
  t->col = p->col;
  if (p->failed || p->pos >= p->len) {
    t->kind = T_EOF;
    return;
  }
  int c = peekc(p, 0);
  size_t start = p->pos;
  if (c == '%' || c == '@') {
    advance_char(p);
    while (ident_char(peekc(p, 0), c == '@')) advance_char(p);
    t->kind = c == '%' ? T_LOCAL : T_GLOBAL;
    t->start++;
    t->len = p->pos - start - 1;
    if (t->len == 0) fail_at(p, t, "'%c' must be followed by a name", c);
    return;
  }
  if (g_ascii_isdigit(c) || (c == '-' && g_ascii_isdigit(peekc(p, 1)))) {
    t->kind = T_NUM;
    t->len = start; /* lex_number turns it into the length */
    lex_number(p, t);
    return;
  }
  if (c == '-' && peekc(p, 1) == 'i' && peekc(p, 2) == 'n' && peekc(p, 3) == 'f' &&
      !ident_char(peekc(p, 4), true)) {
    for (int k = 0; k < 4; k++) advance_char(p);
    t->kind = T_NUM;
    t->is_float = true;
    t->f = -INFINITY;
    t->len = 4;
    return;
  }
  if (c == 'b' && peekc(p, 1) == '"') { /* b"...": bytes */
    advance_char(p);
    c = '"';
  }
  if (g_ascii_isalpha(c) || c == '_') {
    while (ident_char(peekc(p, 0), true)) advance_char(p);
    t->kind = T_IDENT;
    t->len = p->pos - start;
    return;
  }
  if (c == '"') {
    advance_char(p);
    while (p->pos < p->len && p->src[p->pos] != '"' && p->src[p->pos] != '\n') {
      if (p->src[p->pos] == '\\' && p->pos + 1 < p->len) advance_char(p);
      advance_char(p);
    }
    if (peekc(p, 0) != '"') {
      fail_at(p, t, "a string is not closed");
      return;
    }
    advance_char(p);
    t->kind = *t->start == 'b' ? T_BYTES : T_STR;
    t->len = p->pos - start;
    return;
  }
  if (c == '-' && peekc(p, 1) == '>') {
    advance_char(p);
    advance_char(p);
    t->kind = T_PUNCT;
    t->punct = '>';
    t->len = 2;
    return;
  }
  if (strchr("()[]{},;=:.", c)) {
    advance_char(p);
    t->kind = T_PUNCT;
    t->punct = (char)c;
    t->len = 1;
    return;
  }
  t->len = 1;
  fail_at(p, t, "unexpected character '%c'", c);
  t->kind = T_EOF;
}

static bool is_punct(const Parser *p, char c) {
  return p->tok.kind == T_PUNCT && p->tok.punct == c;
}

static bool is_word(const Parser *p, const char *w) {
  return p->tok.kind == T_IDENT && p->tok.len == strlen(w) &&
         memcmp(p->tok.start, w, p->tok.len) == 0;
}

static bool accept(Parser *p, char c) {
  if (!is_punct(p, c)) return false;
  next(p);
  return true;
}

static bool expect(Parser *p, char c) {
  if (accept(p, c)) return true;
  char what[8] = {'\'', c == '>' ? '-' : c, c == '>' ? '>' : '\'',
                  c == '>' ? '\'' : 0, 0};
  expected(p, what);
  return false;
}

/* The token after the current one, without consuming anything. */
static Tok peek_next(Parser *p) {
  size_t pos = p->pos;
  int line = p->line, col = p->col;
  Tok cur = p->tok;
  bool failed = p->failed;
  next(p);
  Tok after = p->tok;
  p->pos = pos;
  p->line = line;
  p->col = col;
  p->tok = cur;
  if (!failed && p->failed) { /* a lexing error ahead is found again later */
    p->failed = false;
    tn_object_release(p->error);
    p->error = NULL;
  }
  return after;
}

static char *tok_text(const Tok *t) { return g_strndup(t->start, t->len); }

/* ---- scopes ------------------------------------------------------------------ */

static void push_scope(Parser *p) {
  g_ptr_array_add(p->scopes, g_hash_table_new_full(g_str_hash, g_str_equal,
                                                   g_free, NULL));
}

static void pop_scope(Parser *p) {
  g_hash_table_destroy(g_ptr_array_index(p->scopes, p->scopes->len - 1));
  g_ptr_array_set_size(p->scopes, p->scopes->len - 1);
}

static TnObject *lookup(Parser *p, const char *name) {
  for (guint i = p->scopes->len; i-- > 0;) {
    TnObject *o = g_hash_table_lookup(g_ptr_array_index(p->scopes, i), name);
    if (o) return o;
  }
  return NULL;
}

static bool define(Parser *p, const Tok *at, char *name, TnObject *o) {
  GHashTable *top = g_ptr_array_index(p->scopes, p->scopes->len - 1);
  if (g_hash_table_contains(top, name)) {
    fail_at(p, at, "%%%s is defined twice", name);
    g_free(name);
    return false;
  }
  g_hash_table_insert(top, name, o);
  return true;
}

/* One level deeper into nested text; false (the parse failed) past the
 * limit, so hostile input cannot exhaust the C stack. */
static bool deeper(Parser *p, const Tok *t, const char *what) {
  if (++p->depth <= MAX_DEPTH) return true;
  fail_at(p, t, "%s nest more than %d deep", what, MAX_DEPTH);
  return false;
}

/* ---- values (attributes) ------------------------------------------------------- */

static bool parse_value(Parser *p, TnAny *out);

static char *unescape(Parser *p, const Tok *t, size_t *n) {
  GString *s = g_string_new(NULL);
  for (size_t i = t->kind == T_BYTES ? 2 : 1; i + 1 < t->len; i++) {
    char c = t->start[i];
    if (c != '\\') {
      g_string_append_c(s, c);
      continue;
    }
    c = t->start[++i];
    if (c == 'n') g_string_append_c(s, '\n');
    else if (c == 't') g_string_append_c(s, '\t');
    else if (c == '"' || c == '\\') g_string_append_c(s, c);
    else if (c == 'x' && i + 2 < t->len - 1 && g_ascii_isxdigit(t->start[i + 1]) &&
             g_ascii_isxdigit(t->start[i + 2])) {
      g_string_append_c(s, (char)(g_ascii_xdigit_value(t->start[i + 1]) * 16 +
                                  g_ascii_xdigit_value(t->start[i + 2])));
      i += 2;
    } else {
      fail_at(p, t, "unknown escape '\\%c' in a string", c);
      g_string_free(s, TRUE);
      return NULL;
    }
  }
  *n = s->len;
  return g_string_free(s, FALSE);
}

static TnObject *meta_ref(Parser *p) {
  Tok at = p->tok;
  next(p); /* meta */
  if (!expect(p, '[')) return NULL;
  if (p->tok.kind != T_NUM || p->tok.is_float) {
    expected(p, "an index");
    return NULL;
  }
  int64_t i = p->tok.i;
  next(p);
  if (!expect(p, ']')) return NULL;
  if (p->meta == NULL) {
    fail_at(p, &at, "meta[%" PRId64 "] refers to metadata, but the text has "
            "no #[metadata] section", i);
    return NULL;
  }
  if (i < 0 || i >= tn_array_size(p->meta)) {
    fail_at(p, &at, "meta[%" PRId64 "] is out of range: the metadata has %"
            PRId64 " entries", i, tn_array_size(p->meta));
    return NULL;
  }
  const TnAny *v = tn_array_at(p->meta, i);
  return tn_any_is_object(v) ? v->v_obj : NULL;
}

/* Items up to `close`, each read by parse_value into a new array. */
static TnObject *value_list(Parser *p, char close) {
  GArray *items = g_array_new(FALSE, FALSE, sizeof(TnAny));
  TnObject *arr = NULL;
  bool ok = true;
  while (!is_punct(p, close)) { /* a trailing comma is allowed: (3,) */
    TnAny v;
    if (!(ok = parse_value(p, &v))) break;
    g_array_append_val(items, v);
    if (!accept(p, ',')) break;
  }
  if (ok && expect(p, close))
    arr = keep(p, tn_array_new((TnAny *)items->data, items->len), &p->tok);
  g_array_free(items, TRUE);
  return arr;
}

/* An integer token in [lo, hi] for DataType(...) / Device(...). */
static bool small_int(Parser *p, int64_t lo, int64_t hi, int64_t *out) {
  if (p->tok.kind != T_NUM || p->tok.is_float || p->tok.suffix[0] ||
      p->tok.u64 || p->tok.i < lo || p->tok.i > hi) {
    char what[64];
    g_snprintf(what, sizeof what, "an integer in [%" PRId64 ", %" PRId64 "]",
               lo, hi);
    expected(p, what);
    return false;
  }
  *out = p->tok.i;
  next(p);
  return true;
}

/* DataType("float32") or DataType(code, bits, lanes); Device("cuda:1") or
 * Device(type, id). The current token is the word. */
static void plain_value(Parser *p, TnAny *out) {
  bool dtype = is_word(p, "DataType");
  next(p);
  if (!expect(p, '(')) return;
  if (p->tok.kind == T_STR) {
    Tok st = p->tok;
    size_t n;
    char *s = unescape(p, &st, &n);
    if (s == NULL) return;
    next(p);
    DLDataType d;
    DLDevice dev;
    if (strlen(s) != n) {
      fail_at(p, &st, "a %s name cannot contain a NUL",
              dtype ? "DataType" : "Device");
    } else if (dtype ? tn_dtype_parse(s, &d) : tn_device_parse(s, &dev)) {
      blame_at(p, &st);
    } else {
      *out = dtype ? tn_any_dtype(d) : tn_any_device(dev);
    }
    g_free(s);
  } else if (dtype) {
    int64_t code, bits, lanes;
    if (small_int(p, 0, 255, &code) && expect(p, ',') &&
        small_int(p, 0, 255, &bits) && expect(p, ',') &&
        small_int(p, 0, 65535, &lanes))
      *out = tn_any_dtype((DLDataType){(uint8_t)code, (uint8_t)bits,
                                       (uint16_t)lanes});
  } else {
    int64_t type, id;
    if (small_int(p, INT32_MIN, INT32_MAX, &type) && expect(p, ',') &&
        small_int(p, INT32_MIN, INT32_MAX, &id))
      *out = tn_any_device((DLDevice){(DLDeviceType)type, (int32_t)id});
  }
  if (!p->failed) expect(p, ')');
  if (p->failed) *out = tn_any_none();
}

/* A value; an object in `out` is owned by the parser (borrowed). */
static bool parse_value(Parser *p, TnAny *out) {
  Tok t = p->tok;
  if (!deeper(p, &t, "values")) return false;
  bool ok = true;
  *out = tn_any_none();
  if (t.kind == T_NUM) {
    *out = t.is_float ? tn_any_float(t.f) : tn_any_int(t.i);
    if (t.suffix[0]) fail_at(p, &t, "an attribute value takes no type suffix");
    if (t.u64) fail_at(p, &t, "%.*s is out of range for an int64", (int)t.len,
                       t.start);
    next(p);
  } else if (t.kind == T_STR || t.kind == T_BYTES) {
    size_t n;
    char *s = unescape(p, &t, &n);
    if (s) {
      TnObject *str = keep(p, t.kind == T_STR ? tn_string_new(s, n)
                                              : tn_bytes_new(s, n), &t);
      if (str) *out = tn_any_obj(str);
      g_free(s);
    }
    next(p);
  } else if (is_word(p, "DataType") || is_word(p, "Device")) {
    plain_value(p, out);
  } else if (is_word(p, "true") || is_word(p, "false")) {
    *out = tn_any_bool(is_word(p, "true"));
    next(p);
  } else if (is_word(p, "None")) {
    next(p);
  } else if (is_word(p, "inf") || is_word(p, "nan")) {
    *out = tn_any_float(is_word(p, "inf") ? INFINITY : NAN);
    next(p);
  } else if (is_word(p, "meta")) {
    TnObject *o = meta_ref(p);
    if (o) *out = tn_any_obj(o);
  } else if (accept(p, '[')) {
    TnObject *arr = value_list(p, ']');
    if (arr) *out = tn_any_obj(arr);
  } else if (accept(p, '(')) {
    TnObject *arr = value_list(p, ')');
    if (arr) {
      int64_t n = tn_array_size(arr);
      int64_t *dims = g_new(int64_t, n ? n : 1);
      for (int64_t i = 0; i < n && !p->failed; i++)
        if (tn_any_as_int(tn_array_at(arr, i), &dims[i])) {
          tn_error_set_raised(NULL);
          fail_at(p, &t, "a shape (...) holds integers");
        }
      TnObject *s = p->failed ? NULL : keep(p, tn_shape_new(dims, n), &t);
      if (s) *out = tn_any_obj(s);
      g_free(dims);
    }
  } else if (accept(p, '{')) {
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(TnAny));
    GArray *vals = g_array_new(FALSE, FALSE, sizeof(TnAny));
    while (!p->failed && !is_punct(p, '}')) {
      TnAny k, v;
      if (!parse_value(p, &k)) break;
      if (!expect(p, ':') || !parse_value(p, &v)) break;
      g_array_append_val(keys, k);
      g_array_append_val(vals, v);
      if (!accept(p, ',')) break;
    }
    if (!p->failed && expect(p, '}')) {
      TnObject *map = keep(p, tn_map_new((TnAny *)keys->data,
                                         (TnAny *)vals->data, keys->len), &t);
      if (map) *out = tn_any_obj(map);
    }
    g_array_free(keys, TRUE); /* objects in them belong to `owned` */
    g_array_free(vals, TRUE);
  } else {
    expected(p, "a value");
  }
  p->depth--;
  ok = !p->failed;
  return ok;
}

/* "name=value" pairs into `keys` (tn.Strings) and `values`; objects in them
 * belong to the parser. On entry the current token is the name, a word or a
 * string (a key that is not a word: the printer quotes it). */
static bool parse_kv(Parser *p, GArray *keys, GArray *values) {
  Tok t = p->tok;
  TnAny key;
  if (t.kind == T_STR) {
    if (!parse_value(p, &key)) return false;
  } else {
    TnObject *name = keep(p, tn_string_new(t.start, t.len), &t);
    if (name == NULL) return false;
    key = tn_any_obj(name);
    next(p);
  }
  if (!expect(p, '=')) return false;
  TnAny v;
  if (!parse_value(p, &v)) return false;
  g_array_append_val(keys, key);
  g_array_append_val(values, v);
  return true;
}

static bool at_kv(Parser *p) {
  if (p->tok.kind != T_IDENT && p->tok.kind != T_STR) return false;
  Tok after = peek_next(p);
  return after.kind == T_PUNCT && after.punct == '=';
}

static TnObject *kv_map(Parser *p, GArray *keys, GArray *values,
                        const Tok *at) {
  return keep(p, tn_map_new((TnAny *)keys->data, (TnAny *)values->data,
                            keys->len), at);
}

/* ---- types -------------------------------------------------------------------- */

static TnObject *parse_type(Parser *p) {
  Tok t = p->tok;
  if (!deeper(p, &t, "types")) return NULL;
  TnObject *out = NULL;
  if (is_word(p, "Tensor")) {
    next(p);
    if (!expect(p, '[') || !expect(p, '(')) goto done;
    GArray *dims = g_array_new(FALSE, FALSE, sizeof(int64_t));
    while (!p->failed && !is_punct(p, ')')) {
      if (p->tok.kind != T_NUM || p->tok.is_float || p->tok.suffix[0] ||
          p->tok.i < 0) {
        expected(p, "a dimension (an integer >= 0)");
        break;
      }
      g_array_append_val(dims, p->tok.i);
      next(p);
      if (!accept(p, ',')) break;
    }
    if (!p->failed && expect(p, ')') && expect(p, ',')) {
      Tok dt = p->tok;
      if (dt.kind != T_IDENT) {
        expected(p, "a dtype");
      } else {
        char *s = tok_text(&dt);
        DLDataType d;
        if (tn_dtype_parse(s, &d)) {
          blame_at(p, &dt);
        } else {
          next(p);
          if (expect(p, ']'))
            out = keep(p, tn_ir_tensor_type((int64_t *)dims->data,
                                            (int32_t)dims->len, d), &t);
        }
        g_free(s);
      }
    }
    g_array_free(dims, TRUE);
  } else if (is_word(p, "fn")) {
    next(p);
    if (!expect(p, '(')) goto done;
    GPtrArray *args = g_ptr_array_new();
    while (!p->failed && !is_punct(p, ')')) {
      TnObject *a = parse_type(p);
      if (a == NULL) break;
      g_ptr_array_add(args, a);
      if (!accept(p, ',')) break;
    }
    TnObject *ret = NULL;
    if (!p->failed && expect(p, ')') && expect(p, '>')) ret = parse_type(p);
    if (ret)
      out = keep(p, tn_ir_func_type((TnObject *const *)args->pdata,
                                    (int32_t)args->len, ret), &t);
    g_ptr_array_free(args, TRUE);
  } else if (accept(p, '(')) {
    GPtrArray *fields = g_ptr_array_new();
    while (!p->failed && !is_punct(p, ')')) {
      TnObject *f = parse_type(p);
      if (f == NULL) break;
      g_ptr_array_add(fields, f);
      if (!accept(p, ',')) break;
    }
    if (!p->failed && expect(p, ')'))
      out = keep(p, tn_ir_tuple_type((TnObject *const *)fields->pdata,
                                     (int32_t)fields->len), &t);
    g_ptr_array_free(fields, TRUE);
  } else {
    expected(p, "a type");
  }
done:
  p->depth--;
  return p->failed ? NULL : out;
}

/* ---- expressions -------------------------------------------------------------- */

static TnObject *parse_expr(Parser *p);
static TnObject *parse_block(Parser *p, char close);

/* A scalar constant from a number token. */
static TnObject *number_constant(Parser *p, const Tok *t) {
  DLDataType d = {kDLFloat, 32, 1};
  const char *s = t->suffix;
  if (s[0] == 0) {
    d = t->is_float ? (DLDataType){kDLFloat, 32, 1} : (DLDataType){kDLInt, 32, 1};
  } else {
    int bits = s[1] ? atoi(s + 1) : 32;
    d.code = s[0] == 'f' ? kDLFloat : s[0] == 'i' ? kDLInt : kDLUInt;
    d.bits = (uint8_t)bits;
    bool ok = s[0] == 'f' ? (bits == 32 || bits == 64)
                          : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    if (!ok) {
      fail_at(p, t, "unknown type suffix '%s' (expected f, f64, i8 ... i64, "
              "u8 ... u64)", s);
      return NULL;
    }
    if (s[0] != 'f' && t->is_float) {
      fail_at(p, t, "an integer constant (suffix '%s') has a fraction", s);
      return NULL;
    }
  }
  DLDevice cpu = {kDLCPU, 0};
  TnObject *tensor = keep(p, tn_tensor_empty(NULL, 0, d, cpu), t);
  if (tensor == NULL) return NULL;
  void *dst = tn_tensor_dltensor(tensor)->data;
  if (d.code == kDLFloat) {
    if (d.bits == 32) *(float *)dst = (float)t->f;
    else *(double *)dst = t->f;
  } else {
    int64_t v = t->i;
    bool fits;
    if (d.code == kDLInt)
      fits = !t->u64 && (d.bits == 64 || (v >= -(INT64_C(1) << (d.bits - 1)) &&
                                          v < (INT64_C(1) << (d.bits - 1))));
    else
      fits = (t->u64 || v >= 0) &&
             (d.bits == 64 || (uint64_t)v < (UINT64_C(1) << d.bits));
    if (!fits) {
      fail_at(p, t, "%.*s does not fit in the type", (int)t->len, t->start);
      return NULL;
    }
    switch (d.bits) {
      case 8: *(int8_t *)dst = (int8_t)v; break;
      case 16: *(int16_t *)dst = (int16_t)v; break;
      case 32: *(int32_t *)dst = (int32_t)v; break;
      default: *(int64_t *)dst = v; break;
    }
  }
  return keep(p, tn_ir_constant(tensor), t);
}

/* Parameters and attributes up to ')': "%x: T" or "name=value". */
static bool parse_params(Parser *p, GPtrArray *params, TnObject **attrs) {
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(TnAny));
  GArray *values = g_array_new(FALSE, FALSE, sizeof(TnAny));
  Tok at = p->tok;
  while (!p->failed && !is_punct(p, ')')) {
    if (p->tok.kind == T_LOCAL) {
      Tok vt = p->tok;
      char *name = tok_text(&vt);
      next(p);
      TnObject *type = NULL;
      if (accept(p, ':') && (type = parse_type(p)) == NULL) {
        g_free(name);
        break;
      }
      TnObject *v = keep(p, tn_ir_var(name, type), &vt);
      if (v == NULL || !define(p, &vt, name, v)) {
        if (v == NULL) g_free(name);
        break;
      }
      g_ptr_array_add(params, v);
    } else if (at_kv(p)) {
      if (!parse_kv(p, keys, values)) break;
    } else {
      expected(p, "a parameter (%name) or an attribute (name=value)");
      break;
    }
    if (!accept(p, ',')) break;
  }
  if (!p->failed && expect(p, ')') && keys->len > 0)
    *attrs = kv_map(p, keys, values, &at);
  g_array_free(values, TRUE);
  g_array_free(keys, TRUE);
  return !p->failed;
}

/* "fn (params) [-> T] { block }" or, with `def`, the same after the name. */
static TnObject *parse_function_rest(Parser *p, const Tok *at) {
  GPtrArray *params = g_ptr_array_new();
  TnObject *attrs = NULL, *ret = NULL, *body = NULL, *fn = NULL;
  push_scope(p);
  if (expect(p, '(') && parse_params(p, params, &attrs)) {
    if (accept(p, '>')) ret = parse_type(p);
    if (!p->failed && expect(p, '{')) body = parse_block(p, '}');
  }
  pop_scope(p);
  if (body)
    fn = keep(p, tn_ir_function((TnObject *const *)params->pdata,
                                (int32_t)params->len, body, ret, attrs), at);
  g_ptr_array_free(params, TRUE);
  return fn;
}

static TnObject *parse_call(Parser *p, TnObject *callee, const char *op_name,
                            const Tok *at) {
  GPtrArray *args = g_ptr_array_new();
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(TnAny));
  GArray *values = g_array_new(FALSE, FALSE, sizeof(TnAny));
  GPtrArray *names = g_ptr_array_new();
  TnObject *out = NULL;
  while (!p->failed && !is_punct(p, ')')) {
    if (at_kv(p)) {
      if (!parse_kv(p, keys, values)) break;
    } else if (keys->len > 0) {
      expected(p, "an attribute (name=value): arguments come first");
      break;
    } else {
      TnObject *a = parse_expr(p);
      if (a == NULL) break;
      g_ptr_array_add(args, a);
    }
    if (!accept(p, ',')) break;
  }
  for (guint i = 0; i < keys->len; i++) { /* the keys are tn.Strings */
    const TnAny *k = &g_array_index(keys, TnAny, i);
    g_ptr_array_add(names, (char *)((TnStringObj *)k->v_obj)->data);
  }
  if (!p->failed && expect(p, ')')) {
    if (op_name) {
      out = keep(p, tn_ir_call_op(op_name, (TnObject *const *)args->pdata,
                                  (int32_t)args->len,
                                  (const char *const *)names->pdata,
                                  (TnAny *)values->data, (int32_t)names->len),
                 at);
    } else if (names->len > 0) {
      fail_at(p, at, "only operator calls take attributes");
    } else {
      out = keep(p, tn_ir_call(callee, (TnObject *const *)args->pdata,
                               (int32_t)args->len, NULL), at);
    }
  }
  g_array_free(values, TRUE);
  g_array_free(keys, TRUE);
  g_ptr_array_free(names, TRUE);
  g_ptr_array_free(args, TRUE);
  return out;
}

static TnObject *parse_primary(Parser *p) {
  Tok t = p->tok;
  if (t.kind == T_LOCAL) {
    char *name = tok_text(&t);
    next(p);
    TnObject *o = lookup(p, name);
    if (o == NULL && p->bare) {
      /* a free variable of a bare expression */
      o = keep(p, tn_ir_var(name, NULL), &t);
      GHashTable *outer = g_ptr_array_index(p->scopes, 0);
      if (p->first_free.line == 0) p->first_free = t;
      if (o) {
        g_hash_table_insert(outer, name, o);
        return o;
      }
    } else if (o == NULL) {
      fail_at(p, &t, "%%%s is not defined", name);
    }
    g_free(name);
    return o;
  }
  if (t.kind == T_GLOBAL) {
    char *name = tok_text(&t);
    next(p);
    TnObject *g = keep(p, tn_ir_global_var(name), &t);
    g_free(name);
    return g;
  }
  if (t.kind == T_NUM) {
    next(p);
    return number_constant(p, &t);
  }
  if (is_word(p, "true") || is_word(p, "false")) {
    bool v = is_word(p, "true");
    next(p);
    return keep(p, tn_ir_scalar(v, (DLDataType){kDLBool, 8, 1}), &t);
  }
  if (is_word(p, "meta")) {
    TnObject *o = meta_ref(p);
    if (o && !tn_object_is_instance(o, TN_TYPE_TENSOR)) {
      fail_at(p, &t, "an expression's meta[...] must be a tensor, got %s",
              tn_object_type_key(o));
      return NULL;
    }
    return o ? keep(p, tn_ir_constant(o), &t) : NULL;
  }
  if (is_word(p, "fn")) {
    next(p);
    return parse_function_rest(p, &t);
  }
  if (t.kind == T_IDENT) {
    char *name = tok_text(&t);
    next(p);
    TnObject *out = NULL;
    if (!is_punct(p, '(')) {
      fail_at(p, &t, "'%s' is not an expression (an operator is called: "
              "%s(...))", name, name);
    } else {
      TnObject *op = keep(p, tn_ir_op_get(name), &t);
      next(p);
      if (op) out = parse_call(p, op, name, &t);
    }
    g_free(name);
    return out;
  }
  if (accept(p, '(')) {
    GPtrArray *items = g_ptr_array_new();
    bool comma = false;
    while (!p->failed && !is_punct(p, ')')) {
      TnObject *e = parse_expr(p);
      if (e == NULL) break;
      g_ptr_array_add(items, e);
      if (!(comma = accept(p, ','))) break;
    }
    TnObject *out = NULL;
    if (!p->failed && expect(p, ')')) {
      if (items->len == 1 && !comma)
        out = g_ptr_array_index(items, 0);
      else
        out = keep(p, tn_ir_tuple((TnObject *const *)items->pdata,
                                  (int32_t)items->len), &t);
    }
    g_ptr_array_free(items, TRUE);
    return out;
  }
  if (accept(p, '{')) {
    push_scope(p);
    TnObject *e = parse_block(p, '}');
    pop_scope(p);
    return e;
  }
  expected(p, "an expression");
  return NULL;
}

static TnObject *parse_expr(Parser *p) {
  Tok t = p->tok;
  if (!deeper(p, &t, "expressions")) return NULL;
  TnObject *e = parse_primary(p);
  while (e && !p->failed) {
    Tok at = p->tok;
    if (accept(p, '.')) {
      if (p->tok.kind != T_NUM || p->tok.is_float || p->tok.suffix[0]) {
        expected(p, "a tuple index");
        e = NULL;
        break;
      }
      int64_t i = p->tok.i;
      next(p);
      e = keep(p, tn_ir_tuple_get_item(e, i), &at);
    } else if (accept(p, '(')) {
      e = parse_call(p, e, NULL, &at);
    } else {
      break;
    }
  }
  p->depth--;
  return p->failed ? NULL : e;
}

typedef struct {
  TnObject *var, *value;
  Tok at;
} LetStmt;

/* Statements then a result, up to `close` (0: the end of the text). The
 * caller opens the scope. */
static TnObject *parse_block(Parser *p, char close) {
  GArray *lets = g_array_new(FALSE, FALSE, sizeof(LetStmt));
  TnObject *result = NULL;
  while (!p->failed) {
    Tok t = p->tok;
    if (is_word(p, "let")) {
      next(p);
      if (p->tok.kind != T_LOCAL) {
        expected(p, "a variable (%name) after let");
        break;
      }
      Tok vt = p->tok;
      char *name = tok_text(&vt);
      next(p);
      TnObject *type = NULL;
      if (accept(p, ':') && (type = parse_type(p)) == NULL) {
        g_free(name);
        break;
      }
      TnObject *value = NULL;
      if (expect(p, '=')) value = parse_expr(p);
      if (value == NULL || !expect(p, ';')) {
        g_free(name);
        break;
      }
      TnObject *var = keep(p, tn_ir_var(name, type), &vt);
      if (var == NULL || !define(p, &vt, name, var)) {
        if (var == NULL) g_free(name);
        break;
      }
      LetStmt s = {var, value, t};
      g_array_append_val(lets, s);
      continue;
    }
    if (t.kind == T_LOCAL) {
      Tok after = peek_next(p);
      if (after.kind == T_PUNCT && after.punct == '=') {
        char *name = tok_text(&t);
        next(p);
        next(p);
        TnObject *value = parse_expr(p);
        if (value == NULL || !expect(p, ';')) {
          g_free(name);
          break;
        }
        if (!define(p, &t, name, value)) break;
        continue;
      }
    }
    result = parse_expr(p);
    if (result == NULL) break;
    if (close ? !expect(p, close) : p->tok.kind != T_EOF) {
      if (!close) expected(p, "the end of the text");
      result = NULL;
    }
    break;
  }
  for (guint i = lets->len; result && i-- > 0;) {
    LetStmt *s = &g_array_index(lets, LetStmt, i);
    result = keep(p, tn_ir_let(s->var, s->value, result), &s->at);
  }
  g_array_free(lets, TRUE);
  return p->failed ? NULL : result;
}

/* ---- modules ------------------------------------------------------------------ */

static TnObject *parse_module(Parser *p) {
  TnObject *attrs = keep(p, tn_map_new(NULL, NULL, 0), &p->tok);
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(TnAny)); /* owned names */
  GArray *vals = g_array_new(FALSE, FALSE, sizeof(TnAny));
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  while (!p->failed && p->tok.kind != T_EOF) {
    Tok t = p->tok;
    if (is_word(p, "attributes")) {
      next(p);
      GArray *akeys = g_array_new(FALSE, FALSE, sizeof(TnAny));
      GArray *values = g_array_new(FALSE, FALSE, sizeof(TnAny));
      if (expect(p, '(')) {
        while (!p->failed && !is_punct(p, ')')) {
          if (!at_kv(p)) {
            expected(p, "an attribute (name=value)");
            break;
          }
          if (!parse_kv(p, akeys, values) || !accept(p, ',')) break;
        }
        if (!p->failed && expect(p, ')'))
          attrs = kv_map(p, akeys, values, &t);
      }
      g_array_free(values, TRUE);
      g_array_free(akeys, TRUE);
      continue;
    }
    if (!is_word(p, "def")) {
      expected(p, "'def' or 'attributes'");
      break;
    }
    next(p);
    if (p->tok.kind != T_GLOBAL) {
      expected(p, "a function name (@name)");
      break;
    }
    Tok nt = p->tok;
    char *name = tok_text(&nt);
    next(p);
    TnObject *fn = parse_function_rest(p, &t);
    if (fn && g_hash_table_contains(seen, name)) {
      fail_at(p, &nt, "@%s is defined twice", name);
      g_free(name);
    } else if (fn) {
      g_hash_table_add(seen, g_strdup(name));
      TnAny k = tn_any_cstr(name);
      g_array_append_val(keys, k);
      TnAny v = tn_any_obj(fn);
      g_array_append_val(vals, v);
    }
    if (!fn) g_free(name);
  }
  TnObject *fns = NULL;
  if (!p->failed)
    fns = keep(p, tn_map_new((TnAny *)keys->data, (TnAny *)vals->data,
                             keys->len), &p->tok);
  for (guint i = 0; i < keys->len; i++)
    g_free((char *)g_array_index(keys, TnAny, i).v_c_str);
  g_array_free(keys, TRUE);
  g_array_free(vals, TRUE);
  g_hash_table_destroy(seen);
  if (p->failed) return NULL;
  return keep(p, tn__ir_module_make(fns, attrs), &p->tok);
}

/* ---- entry point -------------------------------------------------------------- */

static const char *find_metadata(const char *text, size_t size) {
  static const char mark[] = "#[metadata]";
  size_t m = sizeof mark - 1;
  for (size_t i = 0; i + m <= size; i++) {
    if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, mark, m) == 0)
      return text + i;
  }
  return NULL;
}

TN_API TnObject *tn_ir_parse(const char *text, size_t size) {
  if (text == NULL) return tn__raise_null("tn_ir_parse", "text"), NULL;
  Parser p = {0};
  p.src = text;
  p.len = size;
  p.line = p.col = 1;
  p.owned = g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release);
  p.scopes = g_ptr_array_new();
  const char *meta = find_metadata(text, size);
  if (meta) {
    p.len = (size_t)(meta - text);
    const char *json = meta + strlen("#[metadata]");
    TnAny m;
    if (tn_json_load(json, size - (size_t)(json - text), &m)) {
      int line = 1;
      for (const char *c = text; c < meta; c++) line += *c == '\n';
      Tok at = {0};
      at.line = line;
      at.col = 1;
      blame_at(&p, &at);
    } else if (m.type_index != TN_TYPE_ARRAY) {
      tn_any_clear(&m);
      TN_RAISE(VALUE, "the #[metadata] section must hold a JSON array");
      p.failed = true;
      p.error = tn_error_take_raised();
    } else {
      p.meta = m.v_obj;
      g_ptr_array_add(p.owned, p.meta);
    }
  }
  TnObject *result = NULL;
  if (!p.failed) {
    push_scope(&p);
    next(&p);
    if (is_word(&p, "def") || is_word(&p, "attributes") || p.tok.kind == T_EOF) {
      result = parse_module(&p);
    } else {
      p.bare = true;
      TnObject *e = parse_block(&p, 0);
      if (e)
        result = keep(&p, tn_ir_module_from_expr(e),
                      p.first_free.line ? &p.first_free : &p.tok);
    }
    while (p.scopes->len) pop_scope(&p);
  }
  if (p.failed) {
    result = NULL;
    tn_error_set_raised(p.error); /* the first error, not a later one */
  }
  /* what tn_json_load checks of a loaded module, so that text and JSON
   * accept the same modules (a call behind a let whose arguments were
   * typed only after it was built is typed here) */
  if (result && tn_ir_well_formed(result)) {
    /* the same error, said by the parser */
    TnObject *e = tn_error_take_raised();
    tn_error_raise(e ? tn_error_kind(e) : "ValueError", "tn_ir_parse: %s",
                   e ? tn_error_message(e) : "the module is not well formed");
    tn_object_release(e);
    result = NULL;
  }
  if (result) tn_object_retain(result);
  g_ptr_array_free(p.owned, TRUE);
  g_ptr_array_free(p.scopes, TRUE);
  return result;
}
