/*
 * builtins.c: functions every tvmnode process has in its registry, for the
 * bindings' tests and benchmarks (testing.*) and for introspection of the
 * registry and the type table (tn.*), so that any language can ask the same
 * questions through the same packed interface. tn.type_info, which reports
 * a type's reflected fields too, is the reflection layer's (reflect/node.c).
 */
#include "func/func_internal.h"

static int check_nargs(const char *name, int32_t nargs, int32_t want_min,
                       int32_t want_max) {
  if (nargs >= want_min && nargs <= want_max) return 0;
  if (want_min == want_max)
    return tn_error_raise_in(TN_ERR_TYPE, NULL,
                             "%s takes %d argument%s, got %d", name, want_min,
                             want_min == 1 ? "" : "s", nargs);
  return tn_error_raise_in(TN_ERR_TYPE, NULL,
                           "%s takes %d to %d arguments, got %d", name,
                           want_min, want_max, nargs);
}

static int nop(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  return 0;
}

/* Returns its first argument (owned), or None. */
static int echo(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  if (nargs == 0) return 0;
  return tn__any_own(ret, &args[0]);
}

/* A hand-written packed add: what the bindings' call benchmarks measure. */
static int add_i64(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  if (TN_UNLIKELY(nargs != 2)) return check_nargs("testing.add_i64", nargs, 2, 2);
  for (int i = 0; i < 2; i++)
    if (TN_UNLIKELY(args[i].type_index != TN_TYPE_INT &&
                    args[i].type_index != TN_TYPE_BOOL))
      return tn_error_raise_in(TN_ERR_TYPE, "testing.add_i64",
                               "argument %d: expected int, got %s", i,
                               tn_any_type_key(&args[i]));
  /* Wrap on overflow, as the C add it stands for would on real hardware. */
  *ret = tn_any_int((int64_t)((uint64_t)args[0].v_int64 +
                              (uint64_t)args[1].v_int64));
  return 0;
}

/* testing.raise(kind, message): fail with that error. */
static int raise_error(void *self, const TnAny *args, int32_t nargs,
                       TnAny *ret) {
  (void)self, (void)ret;
  if (check_nargs("testing.raise", nargs, 2, 2)) return -1;
  const char *kind, *msg;
  if (tn_any_as_str(&args[0], &kind, NULL) ||
      tn_any_as_str(&args[1], &msg, NULL))
    return -1;
  return tn_error_raise(kind, "%s", msg);
}

/* testing.call(f, *args): call f with the remaining arguments; how the
 * bindings test callbacks that cross languages twice. */
static int call(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  if (nargs < 1) return check_nargs("testing.call", nargs, 1, INT32_MAX);
  TnObject *f;
  if (tn_any_as_object(&args[0], TN_TYPE_FUNCTION, &f)) return -1;
  return tn_func_call(f, args + 1, nargs - 1, ret);
}

static int list_names(void *self, const TnAny *args, int32_t nargs,
                      TnAny *ret) {
  (void)self, (void)args;
  if (check_nargs("tn.list_global_func_names", nargs, 0, 0)) return -1;
  TnObject *a = tn_func_list();
  if (a == NULL) return -1;
  *ret = tn_any_obj(a);
  return 0;
}

static int key_to_index(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self;
  const char *key;
  if (check_nargs("tn.type_key_to_index", nargs, 1, 1) ||
      tn_any_as_str(&args[0], &key, NULL))
    return -1;
  int32_t t = tn_type_index(key);
  if (t < 0) return -1;
  *ret = tn_any_int(t);
  return 0;
}

static int index_to_key(void *self, const TnAny *args, int32_t nargs,
                        TnAny *ret) {
  (void)self;
  int64_t t;
  if (check_nargs("tn.type_index_to_key", nargs, 1, 1) ||
      tn_any_as_int(&args[0], &t))
    return -1;
  if (t < INT32_MIN || t > INT32_MAX)
    return tn_error_raise_in(TN_ERR_KEY, "tn.type_index_to_key",
                             "no type has index %lld", (long long)t);
  const char *key = tn_type_key((int32_t)t);
  if (key == NULL) return -1;
  TnAny raw = tn_any_cstr(key);
  return tn__any_own(ret, &raw);
}

void tn__func_init(void) {
  tn__func_registry_init();
  static const struct {
    const char *name;
    TnPackedFn fn;
  } table[] = {
      {"testing.nop", nop},
      {"testing.echo", echo},
      {"testing.add_i64", add_i64},
      {"testing.raise", raise_error},
      {"testing.call", call},
      {"tn.list_global_func_names", list_names},
      {"tn.type_key_to_index", key_to_index},
      {"tn.type_index_to_key", index_to_key},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    TnObject *f = tn_func_new(table[i].fn, NULL, NULL);
    TN__INIT_CHECK(f != NULL);
    TN__INIT_CHECK(tn_func_register(table[i].name, f, 0) == 0);
    tn_object_release(f);
  }
}
