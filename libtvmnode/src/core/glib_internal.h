/*
 * glib_internal.h: the core helpers whose types are GLib's: locks, and text
 * and name lists built in GLib containers. Kept apart so that core_internal.h
 * stays GLib-free. Private to the library.
 */
#ifndef TVMNODE_GLIB_INTERNAL_H_
#define TVMNODE_GLIB_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "glib_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "core/core_internal.h" /* first: config.h sets feature macros */

#include <glib.h>

/*
 * Locks are GLib's GMutex. ThreadSanitizer cannot see GMutex on Linux (it is
 * built on raw futexes), so TSan builds use pthread mutexes instead; the
 * zero-initialised static form works for both.
 */
#if defined(__SANITIZE_THREAD__)
#include <pthread.h>
typedef pthread_mutex_t TnMutex;
#define tn__mutex_lock pthread_mutex_lock
#define tn__mutex_unlock pthread_mutex_unlock
#define tn__mutex_init(m) pthread_mutex_init((m), NULL)
#define tn__mutex_clear pthread_mutex_destroy
#else
typedef GMutex TnMutex;
#define tn__mutex_lock g_mutex_lock
#define tn__mutex_unlock g_mutex_unlock
#define tn__mutex_init g_mutex_init
#define tn__mutex_clear g_mutex_clear
#endif

/* A short, human readable rendering of a value for error messages. */
void tn__any_repr(GString *out, const TnAny *a);

/* Sort C strings in place and return them as a tn.Array of strings. */
TnObject *tn__sorted_string_array(GPtrArray *names);

/*
 * A named registry of objects (registry.c): the one implementation behind
 * the function, pass, operator and method registries, with the same verbs
 * and messages for all. `noun` names the kind of value in messages ("a pass
 * named 'x' is already registered"). `lock_free_reads` only for values in
 * type-stable memory (functions). Registries are made at start-up and live
 * for the whole process. `who` is the public function to name in errors.
 */
typedef struct TnRegistry TnRegistry;
TnRegistry *tn__registry_new(const char *noun, bool lock_free_reads);
/* Register `value` (a reference is taken) as `name`; ValueError when the
 * name is taken and not `override`. */
int tn__registry_register(TnRegistry *r, const char *name, TnObject *value,
                          int override, const char *who);
/* Remove `name`; KeyError when it is not registered. */
int tn__registry_unregister(TnRegistry *r, const char *name,
                            const char *who);
/* The value registered as `name`: get raises a KeyError when there is
 * none, find returns NULL without raising. (transfer full) */
TnObject *tn__registry_get(TnRegistry *r, const char *name, const char *who);
TnObject *tn__registry_find(TnRegistry *r, const char *name);
/* Sorted names starting with `prefix` (NULL: all), the prefix cut off.
 * (transfer full: a tn.Array of strings) */
TnObject *tn__registry_list(TnRegistry *r, const char *prefix);

#endif /* TVMNODE_GLIB_INTERNAL_H_ */
