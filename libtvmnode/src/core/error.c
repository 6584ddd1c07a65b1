/*
 * error.c: the tn.Error object and the thread-local raised slot.
 *
 * An error records the C program counters of the code that made it, but does
 * not symbolise them until somebody reads the frames: errors are created far
 * more often (probing, conversions that fall through) than they are printed,
 * and symbolising costs tens of microseconds. Frames appended by language
 * layers are plain strings. Frame lists change after creation (lazy
 * symbolisation, appends), so they are guarded by one library-wide mutex;
 * errors are not a hot path. The kinds of abi.h's table are static strings
 * shared by every error of that kind, so an error's kind code is read off
 * the address of its kind string.
 */
#include "core/glib_internal.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_C_FRAMES 48

typedef struct {
  TnObject header;
  TnObject *kind;    /* tn.String */
  TnObject *message; /* tn.String */
  TnObject *cause;   /* tn.Error or NULL */
  void **pcs;        /* C frames, innermost first, not yet symbolised */
  int n_pcs;
  GPtrArray *frames; /* char*, innermost first; C frames come first */
} ErrorObj;

/* One static tn.String per kind of the table (NULL deleters: never freed,
 * never counted). Errors of those kinds share them instead of copying the
 * name, and a kind's code is its string's place in this array. */
static TnStringObj g_kinds[] = {
#define KIND_STRING(name, code, str) \
  [code] = {{TN__RC_INIT, TN_TYPE_STRING, 0, NULL}, str, sizeof(str) - 1, 0},
    TN_ERROR_KIND_MAP(KIND_STRING)
#undef KIND_STRING
};
#define N_KINDS ((int)(sizeof g_kinds / sizeof g_kinds[0]))

static TnMutex g_frames_lock;
static int g_capture = -1; /* -1 unknown, else whether TN_BACKTRACE allows */

static void error_deleter(TnObject *self, int flags) {
  ErrorObj *e = (ErrorObj *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    tn_object_release(e->kind);
    tn_object_release(e->message);
    tn_object_release(e->cause);
    free(e->pcs);
    if (e->frames) g_ptr_array_free(e->frames, TRUE);
  }
  if (flags & TN_DELETER_FREE) tn__object_mfree(self);
}

static bool capture_enabled(void) {
  int c = __atomic_load_n(&g_capture, __ATOMIC_RELAXED);
  if (c < 0) {
    const char *env = getenv("TN_BACKTRACE");
    c = !(env && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0));
    __atomic_store_n(&g_capture, c, __ATOMIC_RELAXED);
  }
  return c;
}

TN_API const char *tn_error_kind_name(TnErrorKind kind) {
  if (kind < 0 || kind >= N_KINDS) return NULL;
  return g_kinds[kind].data; /* NULL in a gap of the table */
}

TN_API TnErrorKind tn_error_kind_from_name(const char *name) {
  if (name == NULL) return TN_ERR_OTHER;
  for (int k = 0; k < N_KINDS; k++)
    if (g_kinds[k].data && strcmp(g_kinds[k].data, name) == 0)
      return (TnErrorKind)k;
  return TN_ERR_OTHER;
}

/* The kind as a tn.String: the table's static one, or a new copy of a name
 * the table does not have. NULL only when out of memory. (transfer full) */
static TnObject *kind_string(TnErrorKind code, const char *name) {
  if (code < 0 || code >= N_KINDS || g_kinds[code].data == NULL)
    return tn_string_from_cstr(name);
  tn__retain(&g_kinds[code].header);
  return &g_kinds[code].header;
}

/* Make an error without touching the raised slot; `skip` frames of our own
 * are dropped from the capture. `kind` is stolen. Returns NULL only when out
 * of memory. */
static TnObject *error_make(TnObject *kind, const char *message, int skip) {
  if (kind == NULL) return NULL;
  ErrorObj *e = tn__object_malloc(sizeof *e, 0, TN_TYPE_ERROR, "tn_error_new");
  if (e == NULL) {
    tn__release(kind);
    return NULL;
  }
  tn__object_zero_body(e, sizeof *e);
  tn__object_init(&e->header, TN_TYPE_ERROR, error_deleter);
  e->kind = kind;
  e->message = tn_string_from_cstr(message ? message : "");
  e->frames = g_ptr_array_new_with_free_func(g_free);
  if (e->kind == NULL || e->message == NULL) {
    tn__release(&e->header);
    return NULL;
  }
  if (capture_enabled()) {
    void *buf[MAX_C_FRAMES];
    int n = backtrace(buf, MAX_C_FRAMES);
    if (n > skip) {
      e->pcs = malloc(sizeof(void *) * (size_t)(n - skip));
      if (e->pcs) {
        memcpy(e->pcs, buf + skip, sizeof(void *) * (size_t)(n - skip));
        e->n_pcs = n - skip;
      }
    }
  }
  return &e->header;
}

/* Symbolise pending C frames; the caller holds g_frames_lock. */
static void symbolise(ErrorObj *e) {
  if (e->n_pcs == 0 || e->frames == NULL) return;
  GPtrArray *c = g_ptr_array_new();
  for (int i = 0; i < e->n_pcs; i++) {
    Dl_info info;
    char *line;
    if (dladdr(e->pcs[i], &info) && info.dli_fname) {
      const char *obj = strrchr(info.dli_fname, '/');
      obj = obj ? obj + 1 : info.dli_fname;
      if (info.dli_sname) {
        line = g_strdup_printf(
            "%s+0x%tx (%s) [C]", info.dli_sname,
            (char *)e->pcs[i] - (char *)info.dli_saddr, obj);
      } else {
        line = g_strdup_printf("%s+0x%tx [C]", obj,
                               (char *)e->pcs[i] - (char *)info.dli_fbase);
      }
    } else {
      line = g_strdup_printf("%p [C]", e->pcs[i]);
    }
    g_ptr_array_add(c, line);
  }
  /* C frames are the innermost: put them before any appended frames. */
  for (guint i = 0; i < e->frames->len; i++)
    g_ptr_array_add(c, g_ptr_array_index(e->frames, i));
  g_ptr_array_set_free_func(e->frames, NULL);
  g_ptr_array_free(e->frames, TRUE);
  g_ptr_array_set_free_func(c, g_free);
  e->frames = c;
  free(e->pcs);
  e->pcs = NULL;
  e->n_pcs = 0;
}

static ErrorObj *as_error(const TnObject *err) {
  return (err && err->type_index == TN_TYPE_ERROR) ? (ErrorObj *)err : NULL;
}

TN_API TnObject *tn_error_new(const char *kind, const char *message) {
  TnErrorKind code = kind ? tn_error_kind_from_name(kind) : TN_ERR_RUNTIME;
  TnObject *e = error_make(kind_string(code, kind), message, 1);
  if (e == NULL) tn__raise_memory("tn_error_new", sizeof(ErrorObj));
  return e;
}

TN_API void tn_error_set_raised(TnObject *err) {
  TnThreadState *s = tn__thread_state();
  TnObject *old = s->raised;
  s->raised = err;
  if (old) tn__release(old);
}

/* Out of memory while reporting an error: hand out one static error whose
 * parts are static too (NULL deleters: never freed, never counted). */
static TnStringObj g_oom_message = {
    {TN__RC_INIT, TN_TYPE_STRING, 0, NULL}, "out of memory", 13, 0};
static ErrorObj g_oom = {{TN__RC_INIT, TN_TYPE_ERROR, 0, NULL},
                         &g_kinds[TN_ERR_MEMORY].header,
                         &g_oom_message.header, NULL, NULL, 0, NULL};

static TnObject *oom_error(void) {
  tn__retain(&g_oom.header);
  return &g_oom.header;
}

TN_API int tn_error_raise(const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = fmt ? g_strdup_vprintf(fmt, ap) : NULL;
  va_end(ap);
  TnErrorKind code = kind ? tn_error_kind_from_name(kind) : TN_ERR_RUNTIME;
  TnObject *e = error_make(kind_string(code, kind), msg, 1);
  g_free(msg);
  tn_error_set_raised(e ? e : oom_error());
  return -1;
}

TN_API int tn_error_raise_in(TnErrorKind kind, const char *func,
                             const char *fmt, ...) {
  GString *msg = g_string_new(func);
  if (func) g_string_append(msg, ": ");
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    g_string_append_vprintf(msg, fmt, ap);
    va_end(ap);
  }
  if (tn_error_kind_name(kind) == NULL) kind = TN_ERR_RUNTIME;
  TnObject *e = error_make(kind_string(kind, NULL), msg->str, 1);
  g_string_free(msg, TRUE);
  tn_error_set_raised(e ? e : oom_error());
  return -1;
}

TN_API TnObject *tn_error_take_raised(void) {
  TnThreadState *s = tn__thread_state();
  TnObject *e = s->raised;
  s->raised = NULL;
  return e;
}

TN_API TnObject *tn_error_peek_raised(void) {
  return tn__thread_state()->raised;
}

TN_API const char *tn_error_kind(const TnObject *err) {
  ErrorObj *e = as_error(err);
  return e ? ((TnStringObj *)e->kind)->data : NULL;
}

TN_API TnErrorKind tn_error_kind_code(const TnObject *err) {
  ErrorObj *e = as_error(err);
  if (e == NULL) return TN_ERR_OTHER;
  TnStringObj *k = (TnStringObj *)e->kind;
  return (k >= g_kinds && k < g_kinds + N_KINDS) ? (TnErrorKind)(k - g_kinds)
                                                 : TN_ERR_OTHER;
}

TN_API const char *tn_error_message(const TnObject *err) {
  ErrorObj *e = as_error(err);
  return e ? ((TnStringObj *)e->message)->data : NULL;
}

TN_API TnObject *tn_error_cause(const TnObject *err) {
  ErrorObj *e = as_error(err);
  return e ? e->cause : NULL;
}

TN_API int tn_error_set_cause(TnObject *err, TnObject *cause) {
  if (tn__check_object(err, TN_TYPE_ERROR, "tn_error_set_cause", "err"))
    return -1;
  if (cause && tn__check_object(cause, TN_TYPE_ERROR, "tn_error_set_cause",
                                "cause"))
    return -1;
  /* Refuse a cycle: `err` must not already be in `cause`'s chain. */
  for (TnObject *c = cause; c; c = ((ErrorObj *)c)->cause)
    if (c == err)
      return TN_RAISE(VALUE,
                      "the cause chain would loop back to the error itself");
  ErrorObj *e = (ErrorObj *)err;
  if (cause) tn__retain(cause);
  TnObject *old = e->cause;
  e->cause = cause;
  tn_object_release(old);
  return 0;
}

TN_API int tn_error_append_frame(TnObject *err, const char *frame) {
  if (tn__check_object(err, TN_TYPE_ERROR, "tn_error_append_frame", "err"))
    return -1;
  if (frame == NULL) return tn__raise_null("tn_error_append_frame", "frame");
  ErrorObj *e = (ErrorObj *)err;
  if (e->frames == NULL) return 0; /* the static out-of-memory error */
  char *copy = g_strdup(frame);
  tn__mutex_lock(&g_frames_lock);
  g_ptr_array_add(e->frames, copy);
  tn__mutex_unlock(&g_frames_lock);
  return 0;
}

TN_API int64_t tn_error_frame_count(const TnObject *err) {
  ErrorObj *e = as_error(err);
  if (e == NULL)
    return tn__check_object(err, TN_TYPE_ERROR, "tn_error_frame_count", "err");
  tn__mutex_lock(&g_frames_lock);
  int64_t n = (e->frames ? (int64_t)e->frames->len : 0) + e->n_pcs;
  tn__mutex_unlock(&g_frames_lock);
  return n;
}

TN_API const char *tn_error_frame(const TnObject *err, int64_t i) {
  ErrorObj *e = as_error(err);
  if (e == NULL) {
    tn__check_object(err, TN_TYPE_ERROR, "tn_error_frame", "err");
    return NULL;
  }
  tn__mutex_lock(&g_frames_lock);
  symbolise(e);
  int64_t n = e->frames ? (int64_t)e->frames->len : 0;
  const char *f =
      (i >= 0 && i < n) ? g_ptr_array_index(e->frames, (guint)i) : NULL;
  tn__mutex_unlock(&g_frames_lock);
  if (f == NULL)
    TN_RAISE(INDEX, "frame %" PRId64 " out of range for an error with %" PRId64
             " frames", i, n);
  return f;
}

static void format_one(GString *out, ErrorObj *e) {
  tn__mutex_lock(&g_frames_lock);
  symbolise(e);
  if (e->frames && e->frames->len > 0) {
    g_string_append(out, "Traceback (most recent call last):\n");
    for (guint i = e->frames->len; i-- > 0;)
      g_string_append_printf(out, "  %s\n",
                             (char *)g_ptr_array_index(e->frames, i));
  }
  tn__mutex_unlock(&g_frames_lock);
  g_string_append_printf(out, "%s: %s", ((TnStringObj *)e->kind)->data,
                         ((TnStringObj *)e->message)->data);
}

TN_API TnObject *tn_error_format(const TnObject *err) {
  ErrorObj *e = as_error(err);
  if (e == NULL) {
    tn__check_object(err, TN_TYPE_ERROR, "tn_error_format", "err");
    return NULL;
  }
  GString *out = g_string_new(NULL);
  /* Python prints the root cause first; do the same. */
  GPtrArray *chain = g_ptr_array_new();
  for (ErrorObj *c = e; c; c = (ErrorObj *)c->cause) g_ptr_array_add(chain, c);
  for (guint i = chain->len; i-- > 0;) {
    format_one(out, g_ptr_array_index(chain, i));
    if (i > 0)
      g_string_append(out, "\n\nThe above error was the direct cause of "
                           "the following error:\n\n");
  }
  g_ptr_array_free(chain, TRUE);
  TnObject *s = tn_string_new(out->str, out->len);
  g_string_free(out, TRUE);
  return s;
}

/* ------------------------------------------------------------------------ */
/* Helpers for argument checks across the library                            */
/* ------------------------------------------------------------------------ */

/* TN__INIT_CHECK's failure, for the start-up of every layer: here in core,
 * below them all, so no layer reaches up to init.c for it. */
_Noreturn void tn__init_failed(const char *what, const char *file, int line) {
  TnObject *err = tn_error_peek_raised();
  fprintf(stderr, "tvmnode: start-up failed at %s:%d: %s\n", file, line,
          what);
  if (err != NULL)
    fprintf(stderr, "tvmnode: %s: %s\n", tn_error_kind(err),
            tn_error_message(err));
  abort();
}


int tn__raise_null(const char *func, const char *arg) {
  return tn_error_raise_in(TN_ERR_VALUE, func, "argument '%s' is NULL", arg);
}

int tn__raise_memory(const char *func, size_t bytes) {
  if (bytes)
    return tn_error_raise_in(TN_ERR_MEMORY, func,
                             "out of memory allocating %zu bytes", bytes);
  return tn_error_raise_in(TN_ERR_MEMORY, func, "out of memory");
}

int tn__check_object_fail(const TnObject *obj, int32_t type_index,
                          const char *func, const char *arg) {
  if (obj != NULL && tn__is_instance(obj, type_index)) return 0;
  if (obj == NULL) return tn__raise_null(func, arg);
  return tn_error_raise_in(TN_ERR_TYPE, func,
                           "argument '%s' expected %s, got %s", arg,
                           tn__type_key_or(type_index, "?"),
                           tn_object_type_key(obj));
}

int tn__check_object2_fail(const TnObject *obj, int32_t t1, int32_t t2,
                           const char *func, const char *arg) {
  if (obj != NULL && (tn__is_instance(obj, t1) || tn__is_instance(obj, t2)))
    return 0;
  if (obj == NULL) return tn__raise_null(func, arg);
  return tn_error_raise_in(TN_ERR_TYPE, func,
                           "argument '%s' expected %s or %s, got %s", arg,
                           tn__type_key_or(t1, "?"), tn__type_key_or(t2, "?"),
                           tn_object_type_key(obj));
}
