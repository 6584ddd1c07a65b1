/*
 * registry.c: the global function registry.
 *
 * A core/registry.c registry with lock-free reads: functions live in
 * type-stable memory (function.c), so a look-up never takes a lock. The
 * registry is made by tn__func_init, before any function is registered.
 */
#include "func/func_internal.h"

static TnRegistry *g_funcs;

void tn__func_registry_init(void) {
  g_funcs = tn__registry_new("global function", true);
}

TN_API int tn_func_register(const char *name, TnObject *func, int override) {
  if (tn__check_object(func, TN_TYPE_FUNCTION, "tn_func_register", "func"))
    return -1;
  return tn__registry_register(g_funcs, name, func, override,
                               "tn_func_register");
}

TN_API TnObject *tn_func_find(const char *name) {
  if (name == NULL) return tn__raise_null("tn_func_find", "name"), NULL;
  return tn__registry_find(g_funcs, name);
}

TN_API TnObject *tn_func_get(const char *name) {
  return tn__registry_get(g_funcs, name, "tn_func_get");
}

TN_API int tn_func_unregister(const char *name) {
  return tn__registry_unregister(g_funcs, name, "tn_func_unregister");
}

TN_API TnObject *tn_func_list(void) {
  return tn__registry_list(g_funcs, NULL);
}
