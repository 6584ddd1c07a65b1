/*
 * tvmnode/object.h: objects, the type registry and values.
 *
 * The life cycle of every object (strong and weak references, allocation of
 * objects declared in other languages, live-object counts for leak tests),
 * the run-time type registry with single inheritance, and the operations on
 * TnAny values: ownership, checked casts, equality, and the text forms of
 * DataType and Device.
 */
#ifndef TVMNODE_OBJECT_H_
#define TVMNODE_OBJECT_H_

#include "tvmnode/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Object life cycle                                                          */
/* ------------------------------------------------------------------------ */

/* Take a strong reference. NULL is ignored. */
TN_API void tn_object_retain(TnObject *obj);
/* Drop a strong reference (transfer full). NULL is ignored. */
TN_API void tn_object_release(TnObject *obj);
/* Take / drop a weak reference: it keeps the memory, not the object, alive. */
TN_API void tn_object_weak_retain(TnObject *obj);
TN_API void tn_object_weak_release(TnObject *obj);
/* From a weak reference, a strong one if the object is still alive, else
 * NULL (no error is raised for NULL). (transfer full) */
TN_API TnObject *tn_object_weak_upgrade(TnObject *obj);
/* Current counts, for tests and debugging; 0 for NULL. */
TN_API uint32_t tn_object_strong_count(const TnObject *obj);
TN_API uint32_t tn_object_weak_count(const TnObject *obj);
/* Whether the caller's reference is the only one, strong or weak, read in
 * one atomic load: a copy-on-write container or a node may then be changed in
 * place without anyone else seeing it. 0 for NULL. */
TN_API int tn_object_is_unique(const TnObject *obj);

/*
 * Allocate `size` zeroed bytes (at least sizeof(TnObject)) for an object of a
 * registered object type, with the header set up: strong = weak = 1. This is
 * how objects declared in other languages are made. `deleter` must end its
 * TN_DELETER_FREE step by calling tn_object_free. (transfer full)
 */
TN_API TnObject *tn_object_alloc(int32_t type_index, size_t size,
                                 TnDeleter deleter);
/* Give back memory from tn_object_alloc; only a deleter calls this. */
TN_API void tn_object_free(TnObject *obj);

/* Number of objects alive now, over all threads and types. Tests assert that
 * it returns to its starting value. */
TN_API int64_t tn_object_live_count(void);
/* Alive objects of one exact type; -1 with an error unless the library was
 * built with --enable-debug. */
TN_API int64_t tn_object_live_count_by_type(int32_t type_index);
/* For tests of out-of-memory paths: the `countdown`-th allocation of object
 * memory or of a container's buffer made by the calling thread from now on
 * fails, once, as if malloc had returned NULL (so the call raises a
 * MemoryError); 0 disarms. Allocations that abort on failure (see "Out of
 * memory" in docs/abi.md) are not counted. -1 with a NotImplementedError
 * unless the library was built with --enable-debug. */
TN_API int tn_debug_set_alloc_fail(int64_t countdown);

/* Whether `obj` is an instance of `type_index` or of a subtype; O(1). 0 for
 * NULL or an unknown type index. */
TN_API int tn_object_is_instance(const TnObject *obj, int32_t type_index);
/* The type key of an object ("tn.Array"); "NULL" for NULL. (transfer none) */
TN_API const char *tn_object_type_key(const TnObject *obj);

/* ------------------------------------------------------------------------ */
/* Type registry                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Register an object type by key under `parent_index` (TN_TYPE_OBJECT for a
 * root type) and return its index. Registering the same key with the same
 * parent again returns the same index; with a different parent it is a
 * ValueError. Thread-safe; callable from any language at any time.
 */
TN_API int32_t tn_type_register(const char *type_key, int32_t parent_index);
/* Index of a registered key; -1 with a KeyError if there is none. */
TN_API int32_t tn_type_index(const char *type_key);
/* Key of a registered index, or NULL with a KeyError. (transfer none) */
TN_API const char *tn_type_key(int32_t type_index);
/* The parent index of a type into `*parent` (-1 for roots and plain
 * values); -1 with a KeyError for an unknown index. */
TN_API int tn_type_parent(int32_t type_index, int32_t *parent);
/* Inheritance depth (0 for roots); -1 with a KeyError for an unknown index. */
TN_API int32_t tn_type_depth(int32_t type_index);
/* Whether `child` is `parent` or derives from it; 0 for unknown indices. */
TN_API int tn_type_is_subtype(int32_t child, int32_t parent);
/* One past the largest type index handed out so far. */
TN_API int32_t tn_type_count(void);

/* ------------------------------------------------------------------------ */
/* Any: ownership, checked casts, equality                                    */
/* ------------------------------------------------------------------------ */

/* Copy `src` into `dst`, taking a reference if it holds an object. `dst` is
 * overwritten without being released. */
TN_API void tn_any_copy(TnAny *dst, const TnAny *src);
/* Like tn_any_copy, but turn borrowed forms into owned ones: a raw string or
 * raw bytes becomes a small inline value (up to 7 bytes) or a tn.String /
 * tn.Bytes object. This is what containers do with what they store. */
TN_API int tn_any_to_owned(TnAny *dst, const TnAny *src);
/* Release what `a` owns and set it to None. */
TN_API void tn_any_clear(TnAny *a);

/* The type key of the value an any holds: "int", "tn.String", ...
 * (transfer none) */
TN_API const char *tn_any_type_key(const TnAny *a);

/*
 * Checked casts. Each returns 0 and writes `*out`, or returns -1 with a
 * TypeError naming the function, the expected and the received type.
 * Bool converts to int; int converts to float; None converts to a NULL ptr.
 */
TN_API int tn_any_as_int(const TnAny *a, int64_t *out);
TN_API int tn_any_as_bool(const TnAny *a, int *out);
TN_API int tn_any_as_float(const TnAny *a, double *out);
TN_API int tn_any_as_ptr(const TnAny *a, void **out);
TN_API int tn_any_as_dtype(const TnAny *a, DLDataType *out);
TN_API int tn_any_as_device(const TnAny *a, DLDevice *out);
/* A string's bytes from a raw string, a small string or a tn.String; `*data`
 * is borrowed from `a` (and NUL-terminated); `size` may be NULL. */
TN_API int tn_any_as_str(const TnAny *a, const char **data, size_t *size);
/* Bytes from raw or small bytes, tn.Bytes, or any string form. */
TN_API int tn_any_as_bytes(const TnAny *a, const char **data, size_t *size);
/* An object that is an instance of `type_index` (TN_TYPE_OBJECT for any);
 * None is rejected. (transfer none) */
TN_API int tn_any_as_object(const TnAny *a, int32_t type_index,
                            TnObject **out);

/*
 * Key equality and hashing, as Map and Dict use them: strings and bytes by
 * content (whatever their form), numbers by value (1 == 1.0 == true, as in
 * Python), other plain values bytewise, objects by identity.
 */
TN_API int tn_any_equal(const TnAny *a, const TnAny *b);
TN_API uint64_t tn_any_hash(const TnAny *a);

/* ------------------------------------------------------------------------ */
/* DataType and Device                                                       */
/* ------------------------------------------------------------------------ */

/* Parse "float32", "int8", "uint8x4", "bool", "bfloat16", "handle", "void".
 * ValueError naming the string on bad input. */
TN_API int tn_dtype_parse(const char *text, DLDataType *out);
/* Print into `buf`; returns the length (not counting the NUL) it needed, or
 * -1 with an error. Output is truncated to `size` like snprintf. */
TN_API int tn_dtype_print(DLDataType dtype, char *buf, size_t size);
/* Parse "cpu", "cpu:0", "cuda:1", ... ValueError on bad input. */
TN_API int tn_device_parse(const char *text, DLDevice *out);
TN_API int tn_device_print(DLDevice device, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_OBJECT_H_ */
