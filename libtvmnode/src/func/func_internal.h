/*
 * func_internal.h: what the function layer (packed functions, the registry, the libffi
 * bridge, the built-ins) shares with the layers above it. Private to the library.
 */
#ifndef TVMNODE_FUNC_INTERNAL_H_
#define TVMNODE_FUNC_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "func_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "core/glib_internal.h"

/* Start-up of the function layer: the built-in functions (see init.c). */
void tn__func_init(void);
/* The global function registry, made first by tn__func_init. */
void tn__func_registry_init(void);

#endif /* TVMNODE_FUNC_INTERNAL_H_ */
