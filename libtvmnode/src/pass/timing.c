/*
 * timing.c: the timing instrument, a pass instrument whose hooks are C
 * functions sharing one record of start times and durations. Nested passes
 * (those a pass requires) are timed too and indented in the report.
 */
#include "pass/pass_internal.h"

#include <stdio.h>

typedef struct {
  char *name;
  double ms;
  int depth;
} Record;

typedef struct {
  TnMutex lock;
  GArray *records; /* Record, in the order passes finished */
  GArray *starts;  /* gint64 monotonic microseconds, a stack */
} Timing;

static void timing_free(void *self) {
  Timing *t = self;
  for (guint i = 0; i < t->records->len; i++)
    g_free(g_array_index(t->records, Record, i).name);
  g_array_free(t->records, TRUE);
  g_array_free(t->starts, TRUE);
  tn__mutex_clear(&t->lock);
  g_free(t);
}

static int before(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)args, (void)nargs, (void)ret;
  Timing *t = self;
  gint64 now = g_get_monotonic_time();
  tn__mutex_lock(&t->lock);
  g_array_append_val(t->starts, now);
  tn__mutex_unlock(&t->lock);
  return 0;
}

/* Shares the timing state with `before` (which owns it). */
static int after(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)nargs, (void)ret;
  Timing *t = self;
  gint64 now = g_get_monotonic_time();
  TnAny name;
  if (tn_node_get(args[1].v_obj, "name", &name)) return -1;
  const char *s;
  tn_any_as_str(&name, &s, NULL);
  tn__mutex_lock(&t->lock);
  if (t->starts->len > 0) {
    gint64 start = g_array_index(t->starts, gint64, t->starts->len - 1);
    g_array_set_size(t->starts, t->starts->len - 1);
    Record r = {g_strdup(s), (double)(now - start) / 1000.0,
                (int)t->starts->len};
    g_array_append_val(t->records, r);
  }
  tn__mutex_unlock(&t->lock);
  tn_any_clear(&name);
  return 0;
}

TN_API TnObject *tn_pass_timing_instrument(void) {
  Timing *t = g_new0(Timing, 1);
  tn__mutex_init(&t->lock);
  t->records = g_array_new(FALSE, FALSE, sizeof(Record));
  t->starts = g_array_new(FALSE, FALSE, sizeof(gint64));
  TnObject *b = tn_func_new(before, t, timing_free);
  TnObject *a = b ? tn_func_new(after, t, NULL) : NULL;
  TnObject *i = a ? tn_pass_instrument("PassTimingInstrument", b, a) : NULL;
  tn_object_release(a);
  tn_object_release(b);
  return i;
}

TN_API TnObject *tn_pass_timing_report(TnObject *timing) {
  TnAny b;
  if (tn__check_object(timing, tn__pass_instrument_type(),
                       "tn_pass_timing_report", "timing") ||
      tn_node_get(timing, "before", &b))
    return NULL;
  TnFunctionObj *f = tn_any_is_object(&b) ? (TnFunctionObj *)b.v_obj : NULL;
  if (f == NULL || f->fn != before) {
    tn_any_clear(&b);
    return TN_RAISE(TYPE, "not a timing instrument"), NULL;
  }
  Timing *t = f->self;
  GString *out = g_string_new(NULL);
  double total = 0;
  tn__mutex_lock(&t->lock);
  for (guint i = 0; i < t->records->len; i++) {
    Record *r = &g_array_index(t->records, Record, i);
    if (r->depth == 0) total += r->ms;
  }
  g_string_append_printf(out, "%-32s %12s %8s\n", "pass", "time (ms)",
                         "share");
  for (guint i = 0; i < t->records->len; i++) {
    Record *r = &g_array_index(t->records, Record, i);
    char label[64];
    snprintf(label, sizeof label, "%*s%s", 2 * r->depth, "", r->name);
    g_string_append_printf(out, "%-32s %12.3f %7.1f%%\n", label, r->ms,
                           total > 0 ? 100.0 * r->ms / total : 0.0);
  }
  tn__mutex_unlock(&t->lock);
  g_string_append_printf(out, "%-32s %12.3f\n", "total", total);
  tn_any_clear(&b);
  TnObject *s = tn_string_new(out->str, out->len);
  g_string_free(out, TRUE);
  return s;
}
