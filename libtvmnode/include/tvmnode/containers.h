/*
 * tvmnode/containers.h: the built-in containers.
 *
 * String and Bytes, Array (immutable, copy-on-write) and List (mutable), Map
 * (immutable, copy-on-write) and Dict (mutable), Shape, and Tensor with
 * DLPack exchange. Immutable containers may be shared between threads
 * freely; a List or Dict must not be mutated while another thread reads it.
 */
#ifndef TVMNODE_CONTAINERS_H_
#define TVMNODE_CONTAINERS_H_

#include "tvmnode/object.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* String and Bytes                                                          */
/* ------------------------------------------------------------------------ */

/* A new tn.String / tn.Bytes holding a copy of `size` bytes. (transfer full) */
TN_API TnObject *tn_string_new(const char *data, size_t size);
/* (transfer full) */
TN_API TnObject *tn_string_from_cstr(const char *cstr);
/* (transfer full) */
TN_API TnObject *tn_bytes_new(const char *data, size_t size);
/* Content hash into `*hash`, computed once and cached in the object (the
 * same as tn_any_hash of the string); -1 with a TypeError for a non-string. */
TN_API int tn_string_hash(TnObject *str, uint64_t *hash);

/* ------------------------------------------------------------------------ */
/* Array (immutable, copy-on-write) and List (mutable)                        */
/* ------------------------------------------------------------------------ */

/*
 * tn.Array has value semantics: the "mutators" take the address of the
 * caller's reference and write in place only when that reference is the
 * sole one (no other strong or weak reference); otherwise they copy first and
 * replace the caller's reference with the copy. tn.List is an ordinary shared
 * mutable list. The readers below accept either. Items are stored owned
 * (raw strings are copied in, see tn_any_to_owned).
 */

/* A new array / list of `n` items copied from `items`. (transfer full) */
TN_API TnObject *tn_array_new(const TnAny *items, int64_t n);
/* (transfer full) */
TN_API TnObject *tn_list_new(const TnAny *items, int64_t n);

/* Readers, for tn.Array and tn.List. */
TN_API int64_t tn_array_size(const TnObject *seq);
/* Borrowed pointer to item `i` (negative counts from the end), valid until
 * the sequence is changed or freed; NULL with an IndexError. */
TN_API const TnAny *tn_array_at(const TnObject *seq, int64_t i);
/* Item `i` as an owned copy in `*out`. */
TN_API int tn_array_get(const TnObject *seq, int64_t i, TnAny *out);

/* Copy-on-write changes to the tn.Array in `*arr`: the caller's reference in
 * `*arr` is given up (transfer full) and replaced by one to the changed array
 * (a new one when the old was shared). `item` is borrowed (the array takes its
 * own reference). tn_array_pop writes the last item to `out`, owned by the
 * caller (tn_any_clear it). On failure `*arr` is left exactly as it was. */
TN_API int tn_array_push(TnObject **arr, const TnAny *item);
TN_API int tn_array_set(TnObject **arr, int64_t i, const TnAny *item);
TN_API int tn_array_pop(TnObject **arr, TnAny *out);

/* In-place changes to a tn.List. */
TN_API int tn_list_append(TnObject *list, const TnAny *item);
TN_API int tn_list_set(TnObject *list, int64_t i, const TnAny *item);
TN_API int tn_list_insert(TnObject *list, int64_t i, const TnAny *item);
/* Remove item `i` (negative counts from the end); `out` (may be NULL)
 * receives it. */
TN_API int tn_list_pop(TnObject *list, int64_t i, TnAny *out);
TN_API int tn_list_clear(TnObject *list);
TN_API int tn_list_reserve(TnObject *list, int64_t capacity);

/* ------------------------------------------------------------------------ */
/* Map (immutable, copy-on-write) and Dict (mutable)                          */
/* ------------------------------------------------------------------------ */

/*
 * Insertion-ordered hash maps; keys compare as tn_any_equal says, except
 * that every NaN is one key (a key must find itself). tn.Map has the value
 * semantics of tn.Array; tn.Dict is shared and mutable. Readers accept
 * either.
 */

/* A new map / dict from `n` key/value pairs (later duplicates win).
 * (transfer full) */
TN_API TnObject *tn_map_new(const TnAny *keys, const TnAny *values,
                            int64_t n);
/* (transfer full) */
TN_API TnObject *tn_dict_new(const TnAny *keys, const TnAny *values,
                             int64_t n);

/* Readers, for tn.Map and tn.Dict. */
TN_API int64_t tn_map_size(const TnObject *map);
/* The value for `key` borrowed, or NULL when absent. No error is raised for
 * an absent key (one is for a bad `map`). */
TN_API const TnAny *tn_map_find(const TnObject *map, const TnAny *key);
/* The value for `key` as an owned copy; KeyError naming the key if absent. */
TN_API int tn_map_get(const TnObject *map, const TnAny *key, TnAny *out);
/* Iterate in insertion order: returns the position of the first entry at or
 * after `pos` and points `*key` / `*value` (either may be NULL) at it, or -1
 * at the end. Loop with `p = tn_map_next(m, p + 1, ...)` starting from 0. */
TN_API int64_t tn_map_next(const TnObject *map, int64_t pos,
                           const TnAny **key, const TnAny **value);

/* Copy-on-write changes to the tn.Map in `*map`; unchanged on failure. */
TN_API int tn_map_set(TnObject **map, const TnAny *key, const TnAny *value);
/* KeyError if absent. */
TN_API int tn_map_erase(TnObject **map, const TnAny *key);

/* In-place changes to a tn.Dict. */
TN_API int tn_dict_set(TnObject *dict, const TnAny *key, const TnAny *value);
TN_API int tn_dict_erase(TnObject *dict, const TnAny *key);
TN_API int tn_dict_clear(TnObject *dict);

/* ------------------------------------------------------------------------ */
/* Shape                                                                     */
/* ------------------------------------------------------------------------ */

/* A new shape; dimensions must be >= 0. (transfer full) */
TN_API TnObject *tn_shape_new(const int64_t *dims, int64_t ndim);
/* Product of the dimensions (1 for a scalar); -1 with an error on overflow
 * or a bad argument. */
TN_API int64_t tn_shape_numel(const TnObject *shape);

/* ------------------------------------------------------------------------ */
/* Tensor                                                                    */
/* ------------------------------------------------------------------------ */

/* Byte alignment of tensor storage allocated by tvmnode. */
#define TN_TENSOR_ALIGNMENT 64

/* A new compact tensor with zeroed storage on `device` (CPU only for now).
 * (transfer full) */
TN_API TnObject *tn_tensor_empty(const int64_t *shape, int32_t ndim,
                                 DLDataType dtype, DLDevice device);
/*
 * A view of `base`'s storage with its own shape, strides (NULL for compact)
 * and byte offset; it keeps `base` alive. Every element the view can reach
 * must lie inside the base's storage. (transfer full)
 */
TN_API TnObject *tn_tensor_view(TnObject *base, const int64_t *shape,
                                const int64_t *strides, int32_t ndim,
                                DLDataType dtype, uint64_t byte_offset);
/* Borrowed DLTensor of a tn.Tensor; NULL with an error for anything else. */
TN_API DLTensor *tn_tensor_dltensor(TnObject *tensor);
/* Size in bytes of the elements (product of shape times element size). */
TN_API int64_t tn_tensor_nbytes(const TnObject *tensor);
/* Whether the tensor is compact row-major, into `*contiguous` (1 or 0);
 * -1 with a TypeError for a non-tensor. */
TN_API int tn_tensor_is_contiguous(const TnObject *tensor, int *contiguous);
/* Whether the tensor's data must not be written (it came through DLPack
 * marked read-only, or views such a tensor), into `*readonly` (1 or 0); -1
 * with a TypeError for a non-tensor. */
TN_API int tn_tensor_is_readonly(const TnObject *tensor, int *readonly);

/* Wrap a DLPack tensor without copying. The tensor takes over `managed`
 * (transfer full): its deleter runs when the tn.Tensor dies, or right away
 * if this call fails. (transfer full) */
TN_API TnObject *tn_tensor_from_dlpack(DLManagedTensorVersioned *managed);
/* (transfer full) */
TN_API TnObject *tn_tensor_from_dlpack_legacy(DLManagedTensor *managed);
/* Export without copying: the managed tensor holds a strong reference to the
 * tn.Tensor until its deleter is called. (transfer full) */
TN_API DLManagedTensorVersioned *tn_tensor_to_dlpack(TnObject *tensor);
TN_API DLManagedTensor *tn_tensor_to_dlpack_legacy(TnObject *tensor);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CONTAINERS_H_ */
