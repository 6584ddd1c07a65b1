/*
 * tvmnode/node.h: declaring node types from C in one place.
 *
 * A node type is a C struct that starts with its parent's struct (or a
 * TnObject header) and a table of its own fields. These macros fill in
 * names, offsets and kinds from the struct so they cannot drift apart:
 *
 *   typedef struct { TnObject header; TnObject *name; TnAny annotation; } MyVar;
 *   static const TnFieldDesc my_var_fields[] = {
 *     TN_FIELD_STR(MyVar, name, TN_FIELD_NO_SEQ, "the name, for printing"),
 *     TN_FIELD_ANY(MyVar, annotation, TN_FIELD_OPTIONAL, "its type"),
 *   };
 *   int32_t t = TN_NODE_REGISTER(MyVar, "my.Var", TN_TYPE_OBJECT,
 *                                TN_NODE_VAR, my_var_fields);
 *
 * Everything here expands to the plain ABI of reflect.h (TnFieldDesc,
 * TnNodeDesc, tn_node_register), which other languages use directly.
 */
#ifndef TVMNODE_NODE_H_
#define TVMNODE_NODE_H_

#include <stddef.h>

#include "tvmnode/reflect.h"

/* The default value comes last, as a brace initializer of TnAny (plain C
 * designated initializers, so a static field table is a constant
 * expression for every C compiler). */
#define TN__FIELD(S, m, kind, flags, key, doc, ...) \
  { #m, (int64_t)offsetof(S, m), (kind), (flags), (key), __VA_ARGS__, (doc) }

#define TN__NO_DEFAULT {.type_index = TN_TYPE_NONE}

/* Fields without defaults. `flags` is a mask of TN_FIELD_READONLY,
 * TN_FIELD_NO_SEQ, TN_FIELD_OPTIONAL and TN_FIELD_DEF. */
#define TN_FIELD_ANY(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_ANY, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_OBJ(S, m, type_key, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_OBJ, flags, type_key, doc, TN__NO_DEFAULT)
#define TN_FIELD_INT(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_INT, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_FLOAT(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_FLOAT, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_BOOL(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_BOOL, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_STR(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_STR, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_DTYPE(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_DTYPE, flags, NULL, doc, TN__NO_DEFAULT)
#define TN_FIELD_DEVICE(S, m, flags, doc) \
  TN__FIELD(S, m, TN_FIELD_DEVICE, flags, NULL, doc, TN__NO_DEFAULT)

/* Fields with defaults. */
#define TN_FIELD_INT_D(S, m, value, flags, doc)                       \
  TN__FIELD(S, m, TN_FIELD_INT, (flags) | TN_FIELD_HAS_DEFAULT, NULL, \
            doc, {.type_index = TN_TYPE_INT, .v_int64 = (value)})
#define TN_FIELD_FLOAT_D(S, m, value, flags, doc)                       \
  TN__FIELD(S, m, TN_FIELD_FLOAT, (flags) | TN_FIELD_HAS_DEFAULT, NULL, \
            doc, {.type_index = TN_TYPE_FLOAT, .v_float64 = (value)})
#define TN_FIELD_BOOL_D(S, m, value, flags, doc)                       \
  TN__FIELD(S, m, TN_FIELD_BOOL, (flags) | TN_FIELD_HAS_DEFAULT, NULL, \
            doc, {.type_index = TN_TYPE_BOOL, .v_int64 = !!(value)})
#define TN_FIELD_STR_D(S, m, cstr, flags, doc)                        \
  TN__FIELD(S, m, TN_FIELD_STR, (flags) | TN_FIELD_HAS_DEFAULT, NULL, \
            doc, {.type_index = TN_TYPE_RAW_STR, .v_c_str = (cstr)})
#define TN_FIELD_DTYPE_D(S, m, code, bits, lanes, flags, doc)             \
  TN__FIELD(S, m, TN_FIELD_DTYPE, (flags) | TN_FIELD_HAS_DEFAULT, NULL,   \
            doc, {.type_index = TN_TYPE_DATA_TYPE,                        \
                  .v_dtype = {(code), (bits), (lanes)}})
/* `...` is a TnAny brace initializer, e.g. {.type_index = TN_TYPE_NONE}. */
#define TN_FIELD_ANY_D(S, m, flags, doc, ...) \
  TN__FIELD(S, m, TN_FIELD_ANY, (flags) | TN_FIELD_HAS_DEFAULT, NULL, doc, \
            __VA_ARGS__)

/* Register `S` as node type `key` under `parent` with its own `fields`
 * (a static array); returns the type index or -1 with an error. */
#define TN_NODE_REGISTER(S, key, parent, kind, fields)                   \
  tn_node_register(&(TnNodeDesc){(key), (parent), (kind), 0,            \
                                 (int64_t)sizeof(S), (fields),          \
                                 (int32_t)(sizeof(fields) / sizeof((fields)[0])), \
                                 NULL, NULL})

/* The same with node flags (TN_NODE_NO_CREATE), a doc string and a custom
 * deleter (NULL for the generic one). */
#define TN_NODE_REGISTER_EX(S, key, parent, kind, flags, fields, doc, del) \
  tn_node_register(&(TnNodeDesc){(key), (parent), (kind), (flags),        \
                                 (int64_t)sizeof(S), (fields),            \
                                 (int32_t)(sizeof(fields) / sizeof((fields)[0])), \
                                 (doc), (del)})

#endif /* TVMNODE_NODE_H_ */
