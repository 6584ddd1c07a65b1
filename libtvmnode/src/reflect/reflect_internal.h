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

#endif /* TVMNODE_REFLECT_INTERNAL_H_ */
