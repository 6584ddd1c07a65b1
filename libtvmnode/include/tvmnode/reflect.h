/*
 * tvmnode/reflect.h: node types and the generic algorithms over them.
 *
 * A node type registers its fields, methods and type attributes at run time
 * from any language; structural equality and hashing, JSON graphs, the
 * printer and DOT export are written once against that table. TnFieldDesc
 * and TnNodeDesc are part of the frozen ABI (see abi.h) and their layouts are
 * checked at the end.
 */
#ifndef TVMNODE_REFLECT_H_
#define TVMNODE_REFLECT_H_

#include "tvmnode/object.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Reflection: node types with fields, methods and type attributes           */
/* ------------------------------------------------------------------------ */

/* How a field is stored in the object, and what it holds. */
enum {
  TN_FIELD_ANY = 0,    /* TnAny (16 bytes): any value                       */
  TN_FIELD_OBJ = 1,    /* TnObject* : an object, of type_key if given       */
  TN_FIELD_INT = 2,    /* int64_t                                           */
  TN_FIELD_FLOAT = 3,  /* double                                            */
  TN_FIELD_BOOL = 4,   /* bool (1 byte)                                     */
  TN_FIELD_STR = 5,    /* TnObject* : a tn.String                           */
  TN_FIELD_DTYPE = 6,  /* DLDataType                                        */
  TN_FIELD_DEVICE = 7  /* DLDevice                                          */
};

/* Field flags. */
enum {
  TN_FIELD_READONLY = 1,    /* set only when the object is made             */
  TN_FIELD_NO_SEQ = 2,      /* left out of structural equality and hashing  */
  TN_FIELD_HAS_DEFAULT = 4, /* default_value is used when not given         */
  TN_FIELD_OPTIONAL = 8,    /* OBJ/STR may be NULL (None); ANY may be None  */
  TN_FIELD_DEF = 16,        /* variables met here are defined (bound) by    */
                            /* structural equality: function params, lets   */
  TN_FIELD_NO_SAVE = 32     /* left out of JSON: the type's "__make__"       */
                            /* rebuilds it from the saved fields            */
};

/* How structural equality and hashing treat a node type. */
enum {
  TN_NODE_TREE = 0,   /* compared by content; sharing does not matter       */
  TN_NODE_DAG = 1,    /* by content, and the sharing pattern must match     */
  TN_NODE_VAR = 2,    /* a variable: bound where defined, else by identity  */
  TN_NODE_UNIQUE = 3  /* a unique instance: by identity only (e.g. an Op)   */
};

/* Node type flags. */
enum {
  TN_NODE_NO_CREATE = 1 /* generic construction (tn_node_new, JSON load) is */
                        /* not allowed: only its own code makes these       */
};

typedef struct {
  const char *name;
  int64_t offset;       /* byte offset of the field in the object */
  int32_t kind;         /* TN_FIELD_ANY ... */
  int32_t flags;        /* TN_FIELD_READONLY | ... */
  /* TN_FIELD_OBJ: the required type (NULL: any object), or a typed
   * immutable container, "tn.Array<T>" or "tn.Map<K, V>", whose elements
   * every store checks (JSON loading, tn_node_new, tn_node_set, every
   * binding): T, K and V are type keys ("ir.Var", "tn.String", "int",
   * "float", ...) or "any". */
  const char *type_key;
  TnAny default_value;  /* with TN_FIELD_HAS_DEFAULT */
  const char *doc;
} TnFieldDesc;

typedef struct {
  const char *type_key;
  int32_t parent_index; /* TN_TYPE_OBJECT or another node type */
  int32_t kind;         /* TN_NODE_TREE ... */
  int32_t flags;        /* TN_NODE_NO_CREATE */
  int64_t size;         /* object size in bytes, at least the parent's */
  const TnFieldDesc *fields; /* this type's own fields (not the parent's) */
  int32_t nfields;
  const char *doc;
  /* NULL: the generic deleter, which releases the reflected fields. A custom
   * deleter calls tn_node_destruct_fields itself. */
  TnDeleter deleter;
} TnNodeDesc;

/*
 * Register a node type and its fields; returns its type index. Field names,
 * type keys, docs and defaults are copied. Offsets, sizes and kinds are
 * checked (ValueError naming the field). A type registered as a plain
 * object type first (tn_type_register) may be made a node once; a node type
 * cannot be declared twice. Callable from any language at any time.
 */
TN_API int32_t tn_node_register(const TnNodeDesc *desc);
/* A node type whose own fields are TnAny slots laid out after the parent's:
 * how types declared in Python, Rust or Go store their fields. */
TN_API int32_t tn_node_register_any_slots(const char *type_key,
                                          int32_t parent_index, int32_t kind,
                                          const char *const *names,
                                          int32_t nfields);

/* Number of fields of a type, inherited first; -1 with an error if the
 * type is not a node type. */
TN_API int32_t tn_type_field_count(int32_t type_index);
/* The object size a node type was registered with (a subtype declared
 * from outside lays its fields out after it); -1 with an error if the
 * type is not a node type. */
TN_API int64_t tn_type_node_size(int32_t type_index);
/* Field `i` (transfer none: lives as long as the process). */
TN_API const TnFieldDesc *tn_type_field_at(int32_t type_index, int32_t i);
/* Index of a field by name; -1 with an AttributeError. */
TN_API int32_t tn_type_field_index(int32_t type_index, const char *name);
/* The node kind and flags of a type (a plain object type is a unique
 * instance); -1 with an error for an unknown index. */
TN_API int32_t tn_type_node_kind(int32_t type_index);

/* A new node with every field zero (None) except the defaults: how a
 * type's own code makes its nodes (also TN_NODE_NO_CREATE ones).
 * (transfer full) */
TN_API TnObject *tn_node_alloc(int32_t type_index);
/* A new node from named field values (kw-style): defaults fill the rest,
 * and a required field (no default, not optional) left out is a TypeError
 * naming it. Refused for TN_NODE_NO_CREATE types. (transfer full) */
TN_API TnObject *tn_node_new(int32_t type_index, const char *const *names,
                             const TnAny *values, int32_t n);
/* Release what the reflected fields hold (for custom deleters). */
TN_API void tn_node_destruct_fields(TnObject *obj);

/* Read a field by name into an owned `*out`; AttributeError if there is no
 * such field. */
TN_API int tn_node_get(const TnObject *obj, const char *name, TnAny *out);
TN_API int tn_node_get_at(const TnObject *obj, int32_t field, TnAny *out);
/* Write a field, checked against its kind and type (TypeError naming the
 * type, the field, expected and received); read-only fields refuse. The
 * object is unchanged on failure. */
TN_API int tn_node_set(TnObject *obj, const char *name, const TnAny *value);
TN_API int tn_node_set_at(TnObject *obj, int32_t field, const TnAny *value);
/* Write a field as the type's own constructor does: checked like
 * tn_node_set_at, but a read-only field is written too. For code that
 * builds or rebuilds a node (a constructor written in another language, a
 * translation pass), not for its users. */
TN_API int tn_node_init_at(TnObject *obj, int32_t field, const TnAny *value);

/* Methods: named functions attached to a type, found on subtypes too, with
 * the verbs of every registry (tn_type_method_{register,unregister,get,find,
 * list}). Register takes `func` borrowed (a reference is taken); a taken name
 * is a ValueError unless `override`. */
TN_API int tn_type_method_register(int32_t type_index, const char *name,
                                   TnObject *func, int override);
/* (transfer full) NULL with an AttributeError when neither the type nor an
 * ancestor has it. */
TN_API TnObject *tn_type_method_get(int32_t type_index, const char *name);
/* Same without raising: NULL when there is none. (transfer full) */
TN_API TnObject *tn_type_method_find(int32_t type_index, const char *name);
/* Remove a method of this very type; AttributeError if it has none. */
TN_API int tn_type_method_unregister(int32_t type_index, const char *name);
/* The type's own method names, sorted (tn.Array of tn.String).
 * (transfer full) */
TN_API TnObject *tn_type_method_list(int32_t type_index);

/*
 * Type attributes: named columns of values indexed by type index (a per-type
 * printer, a fusion pattern). Reads take no lock. They are meant to be set
 * at start-up: a value stays alive until the process exits, even when it is
 * replaced, because a reader may still hold the pointer it got.
 * tn_type_attr_set takes `value` borrowed and keeps an owned copy (a
 * reference to an object); the getters lend the library's copy (transfer
 * none), valid until the process exits.
 */
TN_API int tn_type_attr_set(const char *attr, int32_t type_index,
                            const TnAny *value);
/* The value for exactly this type, or NULL (no error). (transfer none) */
TN_API const TnAny *tn_type_attr_get(const char *attr, int32_t type_index);
/* The value for this type or its nearest ancestor that has one, or NULL.
 * (transfer none) */
TN_API const TnAny *tn_type_attr_find(const char *attr, int32_t type_index);

/* ------------------------------------------------------------------------ */
/* Generic algorithms over the reflection table                              */
/* ------------------------------------------------------------------------ */

/* Flags of the structural algorithms. MAP_FREE_VARS is 1, so `true`
 * still means what it did when the argument was `map_free_vars` alone. */
enum {
  TN_STRUCTURAL_MAP_FREE_VARS = 1,
  /* tensors compare (and hash) by dtype, shape and device, not content */
  TN_STRUCTURAL_SKIP_TENSOR_CONTENT = 2
};

/*
 * Structural equality: 1 if equal, 0 if not, -1 on error. Variables
 * (TN_NODE_VAR) met in TN_FIELD_DEF fields are bound to each other, so
 * alpha-equivalent functions are equal; other variables compare by identity
 * unless `flags` has TN_STRUCTURAL_MAP_FREE_VARS, which binds them on first
 * sight. Linear in the
 * number of distinct nodes (shared sub-graphs are compared once). A value
 * that contains itself (a tn.List or tn.Dict, or a node through a writable
 * field) is a ValueError naming the path to the repeat, here and in
 * tn_structural_hash; nesting depth uses no C stack.
 */
TN_API int tn_structural_equal(const TnAny *lhs, const TnAny *rhs,
                               int flags);
/* Same, and on a mismatch `*path` gets the first differing place, e.g.
 * "root.body.args[1].value" (transfer full: a tn.String; NULL if equal). */
TN_API int tn_structural_equal_path(const TnAny *lhs, const TnAny *rhs,
                                    int flags, TnObject **path);
/*
 * Same, with the first differing place as steps: on a mismatch `*steps`
 * gets a tn.Array of steps from the root, each a tn.Array [lhs kind, rhs
 * kind, key] of TnAccessKinds: ATTR (key: the field name), ARRAY_ITEM (the
 * index), MAP_ITEM (the key). The kinds differ only in the last step, when
 * one side lacks an item: ARRAY_ITEM_MISSING there (the other side's
 * length) or MAP_ITEM_MISSING (a key the other side has). Sequences of
 * different lengths are compared item by item first, as tvm-ffi's
 * GetFirstStructuralMismatch does. Returns 1 (equal, *steps NULL), 0, -1.
 */
typedef enum {
  TN_ACCESS_ATTR = 0,
  TN_ACCESS_ARRAY_ITEM = 1,
  TN_ACCESS_MAP_ITEM = 2,
  TN_ACCESS_ARRAY_ITEM_MISSING = 4,
  TN_ACCESS_MAP_ITEM_MISSING = 5
} TnAccessKind;
TN_API int tn_structural_mismatch(const TnAny *lhs, const TnAny *rhs,
                                  int flags, TnObject **steps);
/* A hash consistent with tn_structural_equal (equal values hash equal). */
TN_API int tn_structural_hash(const TnAny *value, int flags, uint64_t *out);

/*
 * JSON graphs (format in docs/json.md): every object once, sharing kept,
 * children before parents. Save returns a tn.String (transfer full); load
 * validates everything and rejects bad input with a ValueError that says
 * where (JSON line and column, or the node and field).
 */
TN_API TnObject *tn_json_save(const TnAny *value, int indent);
TN_API int tn_json_load(const char *text, size_t size, TnAny *out);

/* A readable text form of any value, via reflection or a per-type
 * "__repr__" attribute (a function of the object returning a string).
 * (transfer full: a tn.String) */
TN_API TnObject *tn_repr(const TnAny *value);
/* Graphviz DOT for the object graph under `value`. (transfer full) */
TN_API TnObject *tn_to_dot(const TnAny *value);

/* Layout checks (TN_STATIC_ASSERT is defined in abi.h). */
TN_STATIC_ASSERT(sizeof(TnFieldDesc) == 56, "TnFieldDesc is 56 bytes");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, offset) == 8, "TnFieldDesc layout");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, kind) == 16, "TnFieldDesc layout");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, flags) == 20, "TnFieldDesc layout");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, type_key) == 24, "TnFieldDesc layout");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, default_value) == 32,
                 "TnFieldDesc layout");
TN_STATIC_ASSERT(offsetof(TnFieldDesc, doc) == 48, "TnFieldDesc layout");
TN_STATIC_ASSERT(sizeof(TnNodeDesc) == 64, "TnNodeDesc is 64 bytes");
TN_STATIC_ASSERT(offsetof(TnNodeDesc, size) == 24, "TnNodeDesc layout");
TN_STATIC_ASSERT(offsetof(TnNodeDesc, fields) == 32, "TnNodeDesc layout");
TN_STATIC_ASSERT(offsetof(TnNodeDesc, nfields) == 40, "TnNodeDesc layout");
TN_STATIC_ASSERT(offsetof(TnNodeDesc, deleter) == 56, "TnNodeDesc layout");

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_REFLECT_H_ */
