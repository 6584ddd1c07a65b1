/*
 * reflect_internal.h: what the reflection layer (node types, structural equality and hashing,
 * JSON, printing) shares with the layers above it. Private to the library.
 */
#ifndef TVMNODE_REFLECT_INTERNAL_H_
#define TVMNODE_REFLECT_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "reflect_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "func/func_internal.h"

#include "tvmnode/node.h"

/* Start-up of the reflection layer: its built-in function tn.type_info
 * (see init.c). */
void tn__reflect_init(void);

/* Store `v` into a field (checked, converted, owned; the old value is
 * released) or read it into an owned any. `who` names the caller. */
int tn__field_store(TnObject *obj, const TnFieldInfo *f, const TnAny *v,
                    const char *who);
void tn__field_load(const TnObject *obj, const TnFieldInfo *f, TnAny *out);
/* A borrowed view of a field as an any (objects not retained). */
void tn__field_view(const TnObject *obj, const TnFieldInfo *f, TnAny *out);
const char *tn__field_kind_name(int32_t kind);

#endif /* TVMNODE_REFLECT_INTERNAL_H_ */
