/*
 * tvmnode/c_api.h: the stable C ABI of tvmnode.
 *
 * Every language binding is written against this header and nothing else, so
 * it depends only on <stdint.h>, <stddef.h> and the DLPack structs, and every
 * size and offset it fixes is checked by a static assertion at the end. It is
 * versioned by TN_ABI_VERSION: a change that moves a byte bumps the major.
 *
 * Conventions, stated once:
 *  - Names are tn_<noun>_<verb>; types TnXxx; constants TN_XXX.
 *  - Status-returning functions give 0 on success and -1 on failure, with the
 *    error object left in the calling thread's "raised" slot (see Errors).
 *    Functions returning a pointer give NULL on failure; functions returning a
 *    count or index give -1. Nothing aborts on bad input.
 *  - Ownership is written on every prototype:
 *      (transfer full)  the caller receives, or gives away, one strong
 *                       reference and must release it / may no longer use it;
 *      (transfer none)  borrowed: valid while the owner keeps it alive.
 *    A function that steals a reference steals it even when it fails.
 *  - TnAny arguments are borrowed unless said otherwise; a TnAny written to an
 *    out-parameter is owned by the caller (release it with tn_any_clear).
 */
#ifndef TVMNODE_C_API_H_
#define TVMNODE_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/dlpack.h"

#define TN_ABI_VERSION_MAJOR 1
#define TN_ABI_VERSION_MINOR 0
#define TN_ABI_VERSION (TN_ABI_VERSION_MAJOR * 1000 + TN_ABI_VERSION_MINOR)

#if defined(TN_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define TN_API __attribute__((visibility("default")))
#else
#define TN_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TN_PRINTF(fmt_idx, first_arg) \
  __attribute__((format(printf, fmt_idx, first_arg)))
#else
#define TN_PRINTF(fmt_idx, first_arg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Type indices                                                              */
/* ------------------------------------------------------------------------ */

/*
 * 0..63 are plain values carried inline in a TnAny; 64..127 are the built-in
 * object types; indices from 128 are handed out at run time by type key, from
 * any language, by tn_type_register.
 */
enum {
  TN_TYPE_NONE = 0,
  TN_TYPE_INT = 1,
  TN_TYPE_BOOL = 2,
  TN_TYPE_FLOAT = 3,
  TN_TYPE_OPAQUE_PTR = 4,
  TN_TYPE_DATA_TYPE = 5,
  TN_TYPE_DEVICE = 6,
  TN_TYPE_DLTENSOR_PTR = 7,
  TN_TYPE_RAW_STR = 8,   /* borrowed `const char *`, NUL-terminated */
  TN_TYPE_RAW_BYTES = 9, /* borrowed `const TnByteArray *` */
  TN_TYPE_SMALL_STR = 10, /* up to 7 bytes inline, length in small_len */
  TN_TYPE_SMALL_BYTES = 11,
  TN_TYPE_STATIC_OBJECT_BEGIN = 64,
  TN_TYPE_OBJECT = 64,
  TN_TYPE_STRING = 65,
  TN_TYPE_BYTES = 66,
  TN_TYPE_ERROR = 67,
  TN_TYPE_FUNCTION = 68,
  TN_TYPE_SHAPE = 69,
  TN_TYPE_TENSOR = 70,
  TN_TYPE_ARRAY = 71,
  TN_TYPE_LIST = 72,
  TN_TYPE_MAP = 73,
  TN_TYPE_DICT = 74,
  TN_TYPE_MODULE = 75,
  TN_TYPE_OPAQUE_OBJECT = 76, /* wraps a foreign handle with a release hook */
  TN_TYPE_CCLOSURE = 77,      /* owns a C function pointer made from a func */
  TN_TYPE_DYNAMIC_BEGIN = 128
};

/* Largest inline small string or bytes value, in bytes (a NUL follows). */
#define TN_SMALL_STR_MAX 7

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

/* Flags passed to an object's deleter. */
enum {
  TN_DELETER_DESTRUCT = 1, /* release what the object holds */
  TN_DELETER_FREE = 2,     /* give back the object's own memory */
  TN_DELETER_BOTH = 3
};

struct TnObject;
typedef void (*TnDeleter)(struct TnObject *self, int flags);

/*
 * The 24-byte header at the start of every object.
 *
 * `ref_counter` packs the strong count (low 32 bits) and the weak count (high
 * 32 bits); all strong references together hold one weak reference, so a new
 * object starts at strong = 1, weak = 1. It is only ever touched atomically,
 * through tn_object_retain/release and friends. When the strong count drops
 * to zero the deleter runs with TN_DELETER_DESTRUCT; when the weak count
 * drops to zero it runs with TN_DELETER_FREE (both at once when no weak
 * reference was ever taken). A NULL deleter marks static or arena storage
 * that is never freed.
 */
typedef struct TnObject {
  uint64_t ref_counter;
  int32_t type_index;
  uint32_t flags; /* owned by the library (allocation class); leave alone */
  TnDeleter deleter;
} TnObject;

/* ------------------------------------------------------------------------ */
/* Any                                                                       */
/* ------------------------------------------------------------------------ */

/* A borrowed byte range, carried by pointer in a TN_TYPE_RAW_BYTES any. */
typedef struct {
  const char *data;
  size_t size;
} TnByteArray;

/*
 * A 16-byte tagged value: the universal argument, return and element type.
 * Bytes that the active member does not use are zero, so two anys holding the
 * same plain value are bytewise equal. Bool lives in v_int64 as 0 or 1.
 */
typedef struct TnAny {
  int32_t type_index;
  uint32_t small_len; /* length of an inline small string/bytes, else 0 */
  union {
    int64_t v_int64;
    double v_float64;
    void *v_ptr;
    TnObject *v_obj;
    const char *v_c_str;
    const TnByteArray *v_bytes_ptr;
    DLTensor *v_dltensor;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_small[8];
  };
} TnAny;

/* Inline constructors. None of them takes a reference: an any made with
 * tn_any_obj borrows the object (use tn_any_copy to own it). */
static inline TnAny tn_any_none(void) {
  TnAny a = {TN_TYPE_NONE, 0, {0}};
  return a;
}
static inline TnAny tn_any_int(int64_t v) {
  TnAny a = {TN_TYPE_INT, 0, {0}};
  a.v_int64 = v;
  return a;
}
static inline TnAny tn_any_bool(int v) {
  TnAny a = {TN_TYPE_BOOL, 0, {0}};
  a.v_int64 = v ? 1 : 0;
  return a;
}
static inline TnAny tn_any_float(double v) {
  TnAny a = {TN_TYPE_FLOAT, 0, {0}};
  a.v_float64 = v;
  return a;
}
static inline TnAny tn_any_ptr(void *v) {
  TnAny a = {v ? TN_TYPE_OPAQUE_PTR : TN_TYPE_NONE, 0, {0}};
  a.v_ptr = v;
  return a;
}
static inline TnAny tn_any_dtype(DLDataType v) {
  TnAny a = {TN_TYPE_DATA_TYPE, 0, {0}};
  a.v_dtype = v;
  return a;
}
static inline TnAny tn_any_device(DLDevice v) {
  TnAny a = {TN_TYPE_DEVICE, 0, {0}};
  a.v_device = v;
  return a;
}
static inline TnAny tn_any_cstr(const char *v) {
  TnAny a = {v ? TN_TYPE_RAW_STR : TN_TYPE_NONE, 0, {0}};
  a.v_c_str = v;
  return a;
}
static inline TnAny tn_any_obj(TnObject *v) {
  TnAny a = {v ? v->type_index : TN_TYPE_NONE, 0, {0}};
  a.v_obj = v;
  return a;
}
/* True when the any holds an object (and so may own a reference). */
static inline int tn_any_is_object(const TnAny *a) {
  return a->type_index >= TN_TYPE_STATIC_OBJECT_BEGIN;
}

/* ------------------------------------------------------------------------ */
/* Packed functions (the calling convention; the API is in the Functions     */
/* section)                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The type-erased calling convention every function in every language
 * implements. `self` is the context given when the function was made. `args`
 * are borrowed. `*ret` is owned by the caller, who sets it to None before the
 * call. Returns 0, or -1 with the error in the thread-local raised slot.
 */
typedef int (*TnPackedFn)(void *self, const TnAny *args, int32_t nargs,
                          TnAny *ret);

/* ------------------------------------------------------------------------ */
/* Built-in object layouts that bindings may read directly                   */
/* ------------------------------------------------------------------------ */

/* tn.String and tn.Bytes: `data` points at `size` bytes followed by a NUL. */
typedef struct {
  TnObject header;
  const char *data;
  int64_t size;
  uint64_t hash; /* cached by tn_string_hash; 0 until computed */
} TnStringObj;

/*
 * tn.Function: a packed function and its context. Bindings may call
 * `fn(self, ...)` directly instead of going through tn_func_call. When the
 * function dies, `self_deleter(self)` runs (if set).
 */
typedef struct {
  TnObject header;
  TnPackedFn fn;
  void *self;
  void (*self_deleter)(void *self);
} TnFunctionObj;

/* tn.Shape: an immutable list of dimensions. */
typedef struct {
  TnObject header;
  const int64_t *data;
  int64_t ndim;
} TnShapeObj;

/* tn.Tensor: a DLTensor inside an object (so `(DLTensor *)(obj + 1)`). */
typedef struct {
  TnObject header;
  DLTensor dl;
} TnTensorObj;

/* ------------------------------------------------------------------------ */
/* Library                                                                   */
/* ------------------------------------------------------------------------ */

/* The ABI version the library was built with (compare with TN_ABI_VERSION). */
TN_API int32_t tn_abi_version(void);
/* The library's release version, "MAJOR.MINOR.PATCH". (transfer none) */
TN_API const char *tn_version(void);

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
/* Parent index (-1 for roots and plain values) and inheritance depth; -1 with
 * a KeyError for an unknown index (tn_type_parent: -2 on error). */
TN_API int32_t tn_type_parent(int32_t type_index);
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

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * An error is a tn.Error object: a kind (a Python-style class name such as
 * "TypeError", "ValueError", "IndexError", "KeyError", "RuntimeError",
 * "MemoryError"), a message, backtrace frames (C frames captured when it was
 * made, then a frame per language layer it crossed, each appended by that
 * layer), and an optional cause. A failing call leaves it in the calling
 * thread's raised slot; the caller takes it from there (or leaves it for the
 * next failure to replace). Set TN_BACKTRACE=0 to skip C frame capture.
 */

/* A new error; captures the C frames of the caller. (transfer full) */
TN_API TnObject *tn_error_new(const char *kind, const char *message);
/* Make an error from a printf format and put it in the raised slot.
 * Always returns -1, so `return tn_error_raise(...)` reads naturally. */
TN_API int tn_error_raise(const char *kind, const char *fmt, ...)
    TN_PRINTF(2, 3);
/* Put `err` in the raised slot, replacing (and releasing) what was there.
 * NULL clears the slot. (transfer full) */
TN_API void tn_error_set_raised(TnObject *err);
/* Take the raised error out of the slot; NULL if none. (transfer full) */
TN_API TnObject *tn_error_take_raised(void);
/* Look at the raised error without taking it; NULL if none.
 * (transfer none) */
TN_API TnObject *tn_error_peek_raised(void);

/* Accessors; NULL (with no error) if `err` is not a tn.Error.
 * (transfer none) */
TN_API const char *tn_error_kind(const TnObject *err);
TN_API const char *tn_error_message(const TnObject *err);
TN_API TnObject *tn_error_cause(const TnObject *err);
/* Attach a cause (borrowed; a reference is taken). */
TN_API int tn_error_set_cause(TnObject *err, TnObject *cause);
/* Append one frame of text, e.g. `File "x.py", line 3, in f`. */
TN_API int tn_error_append_frame(TnObject *err, const char *frame);
/* Number of frames, and one frame as text (C frames are symbolised on first
 * use). Frames are ordered innermost first. (transfer none) */
TN_API int64_t tn_error_frame_count(const TnObject *err);
TN_API const char *tn_error_frame(const TnObject *err, int64_t i);
/* The whole error as text: frames, then "Kind: message", then the causes.
 * (transfer full: a tn.String) */
TN_API TnObject *tn_error_format(const TnObject *err);

/* ------------------------------------------------------------------------ */
/* String and Bytes                                                          */
/* ------------------------------------------------------------------------ */

/* A new tn.String / tn.Bytes holding a copy of `size` bytes. (transfer full) */
TN_API TnObject *tn_string_new(const char *data, size_t size);
TN_API TnObject *tn_string_from_cstr(const char *cstr);
TN_API TnObject *tn_bytes_new(const char *data, size_t size);
/* Content hash, computed once and cached. 0 with an error for a non-string. */
TN_API uint64_t tn_string_hash(TnObject *str);

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
TN_API TnObject *tn_list_new(const TnAny *items, int64_t n);

/* Readers, for tn.Array and tn.List. */
TN_API int64_t tn_array_size(const TnObject *seq);
/* Borrowed pointer to item `i` (negative counts from the end), valid until
 * the sequence is changed or freed; NULL with an IndexError. */
TN_API const TnAny *tn_array_at(const TnObject *seq, int64_t i);
/* Item `i` as an owned copy in `*out`. */
TN_API int tn_array_get(const TnObject *seq, int64_t i, TnAny *out);

/* Copy-on-write changes to the tn.Array in `*arr`. On failure `*arr` is left
 * exactly as it was. */
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
 * Insertion-ordered hash maps; keys compare as tn_any_equal says. tn.Map has
 * the value semantics of tn.Array; tn.Dict is shared and mutable. Readers
 * accept either.
 */

/* A new map / dict from `n` key/value pairs (later duplicates win).
 * (transfer full) */
TN_API TnObject *tn_map_new(const TnAny *keys, const TnAny *values,
                            int64_t n);
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
/* Whether the tensor is compact row-major. */
TN_API int tn_tensor_is_contiguous(const TnObject *tensor);

/* Wrap a DLPack tensor without copying. The tensor takes over `managed`
 * (transfer full): its deleter runs when the tn.Tensor dies, or right away
 * if this call fails. (transfer full) */
TN_API TnObject *tn_tensor_from_dlpack(DLManagedTensorVersioned *managed);
TN_API TnObject *tn_tensor_from_dlpack_legacy(DLManagedTensor *managed);
/* Export without copying: the managed tensor holds a strong reference to the
 * tn.Tensor until its deleter is called. (transfer full) */
TN_API DLManagedTensorVersioned *tn_tensor_to_dlpack(TnObject *tensor);
TN_API DLManagedTensor *tn_tensor_to_dlpack_legacy(TnObject *tensor);

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * A function made from a packed implementation. `self` is passed back on
 * every call; `self_deleter` (may be NULL) runs once when the function dies.
 * This is how a Python callable, a Rust closure or a Go handle lives inside a
 * function. On failure `self_deleter(self)` is called before returning NULL
 * (the function takes `self` even when it fails). (transfer full)
 */
TN_API TnObject *tn_func_new(TnPackedFn fn, void *self,
                             void (*self_deleter)(void *self));
/* Call `func`. `args` are borrowed; `*ret` must hold None (or anything the
 * caller owns and has cleared) and receives an owned value. */
TN_API int tn_func_call(TnObject *func, const TnAny *args, int32_t nargs,
                        TnAny *ret);

/*
 * The global registry. Look-ups take no lock (a reader never waits for
 * another reader or a writer); registration, override and removal take one.
 */
/* Register `func` (borrowed; a reference is taken) under `name`. A taken
 * name is a ValueError unless `override` is non-zero. */
TN_API int tn_func_register(const char *name, TnObject *func, int override);
/* The function registered as `name`, or NULL with a KeyError naming it.
 * (transfer full) */
TN_API TnObject *tn_func_get_global(const char *name);
/* Same, but NULL without raising when `name` is not registered.
 * (transfer full) */
TN_API TnObject *tn_func_find_global(const char *name);
/* Unregister `name`; KeyError if it is not registered. Handles already
 * taken keep working: they own their reference. */
TN_API int tn_func_remove_global(const char *name);
/* The registered names, sorted, as a tn.Array of tn.String. (transfer full) */
TN_API TnObject *tn_func_list_global_names(void);

/*
 * The libffi bridge, typed to packed: wrap an existing C function, given
 * its address and a signature, as a tn.Function. The signature grammar:
 *
 *   signature := type '(' [ type { ',' type } ] ')'      spaces allowed
 *   type      := 'void' (return only) | 'bool' | 'i8' | 'i16' | 'i32' | 'i64'
 *              | 'u8' | 'u16' | 'u32' | 'u64' | 'f32' | 'f64'
 *              | 'ptr'          void*: an opaque pointer, or None for NULL
 *              | 'str'          const char*: borrowed in; a returned str is
 *                               copied (NULL returns None)
 *              | 'obj' [ '<' type-key '>' ]
 *                               TnObject*, borrowed in (None passes NULL),
 *                               optionally checked against a type key; a
 *                               returned obj is borrowed (a reference is
 *                               taken for the result)
 *              | 'obj+'         return only: the C function returns a new
 *                               reference, which the result takes over
 *              | 'any'          TnAny by value (an argument is borrowed; a
 *                               returned any is owned by the result)
 *              | 'any*'         const TnAny*, argument only, borrowed
 *              | 'dltensor'     DLTensor*: from a tn.Tensor or a DLTensor*
 *              | 'dtype'        DLDataType by value (also from a string)
 *              | 'device'       DLDevice by value
 *
 * e.g. "i64(i64,i64)", "f64(f64,i32)", "void(ptr,u32)", "str(str)",
 * "obj(obj,any)". Integers are range-checked. `name` (may be NULL) is used
 * in error messages. A malformed signature is a ValueError giving the
 * position. (transfer full)
 */
TN_API TnObject *tn_func_from_c(void *fnptr, const char *signature,
                                const char *name);
/* tn_func_from_c followed by tn_func_register(name, ...). */
TN_API int tn_func_register_c(const char *name, void *fnptr,
                              const char *signature, int override);

/*
 * The libffi bridge, packed to typed: make a real C function pointer with
 * the given signature ('any*' and 'obj+' excepted) that calls `func`. The
 * pointer is written to `*out_fnptr` and stays valid while the returned
 * tn.CClosure handle lives; the handle keeps `func` alive. (transfer full)
 *
 * Errors cannot unwind through the foreign C code that calls the pointer:
 * when `func` fails, the pointer returns zero (0, 0.0, false, NULL, None),
 * leaves the error in the calling thread's raised slot, and also records it
 * in the handle, where tn_cclosure_take_error finds it from any thread.
 */
TN_API TnObject *tn_func_to_c(TnObject *func, const char *signature,
                              void **out_fnptr);
/* The most recent error raised through the closure (NULL if none since the
 * last take), and the number of failed calls so far. (transfer full) */
TN_API TnObject *tn_cclosure_take_error(TnObject *closure);
TN_API int64_t tn_cclosure_error_count(const TnObject *closure);

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
  const char *type_key; /* TN_FIELD_OBJ: required type (NULL: any object) */
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

/* Methods: named functions attached to a type, found on subtypes too. */
TN_API int tn_type_register_method(int32_t type_index, const char *name,
                                   TnObject *func, int override);
/* (transfer full) NULL with an AttributeError when neither the type nor an
 * ancestor has it. */
TN_API TnObject *tn_type_get_method(int32_t type_index, const char *name);
/* Remove a method of this very type; AttributeError if it has none. */
TN_API int tn_type_remove_method(int32_t type_index, const char *name);
/* The type's own method names, sorted (tn.Array of tn.String).
 * (transfer full) */
TN_API TnObject *tn_type_list_methods(int32_t type_index);

/*
 * Type attributes: named columns of values indexed by type index (a per-type
 * printer, a fusion pattern). Reads take no lock. They are meant to be set
 * at start-up: a value stays alive until the process exits, even when it is
 * replaced, because a reader may still hold the pointer it got.
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

/*
 * Structural equality: 1 if equal, 0 if not, -1 on error. Variables
 * (TN_NODE_VAR) met in TN_FIELD_DEF fields are bound to each other, so
 * alpha-equivalent functions are equal; other variables compare by identity
 * unless `map_free_vars`, which binds them on first sight. Linear in the
 * number of distinct nodes (shared sub-graphs are compared once).
 */
TN_API int tn_structural_equal(const TnAny *lhs, const TnAny *rhs,
                               int map_free_vars);
/* Same, and on a mismatch `*path` gets the first differing place, e.g.
 * "root.body.args[1].value" (transfer full: a tn.String; NULL if equal). */
TN_API int tn_structural_equal_path(const TnAny *lhs, const TnAny *rhs,
                                    int map_free_vars, TnObject **path);
/* A hash consistent with tn_structural_equal (equal values hash equal). */
TN_API int tn_structural_hash(const TnAny *value, int map_free_vars,
                              uint64_t *out);

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

/* ------------------------------------------------------------------------ */
/* Layout checks: this ABI is frozen                                         */
/* ------------------------------------------------------------------------ */

#if defined(__cplusplus)
#define TN_STATIC_ASSERT static_assert
#else
#define TN_STATIC_ASSERT _Static_assert
#endif

TN_STATIC_ASSERT(sizeof(void *) == 8, "tvmnode's ABI assumes 64-bit pointers");
TN_STATIC_ASSERT(sizeof(TnObject) == 24, "TnObject is 24 bytes");
TN_STATIC_ASSERT(offsetof(TnObject, ref_counter) == 0, "TnObject layout");
TN_STATIC_ASSERT(offsetof(TnObject, type_index) == 8, "TnObject layout");
TN_STATIC_ASSERT(offsetof(TnObject, flags) == 12, "TnObject layout");
TN_STATIC_ASSERT(offsetof(TnObject, deleter) == 16, "TnObject layout");
TN_STATIC_ASSERT(sizeof(TnAny) == 16, "TnAny is 16 bytes");
TN_STATIC_ASSERT(offsetof(TnAny, type_index) == 0, "TnAny layout");
TN_STATIC_ASSERT(offsetof(TnAny, small_len) == 4, "TnAny layout");
TN_STATIC_ASSERT(offsetof(TnAny, v_int64) == 8, "TnAny layout");
TN_STATIC_ASSERT(offsetof(TnAny, v_small) == 8, "TnAny layout");
TN_STATIC_ASSERT(sizeof(TnByteArray) == 16, "TnByteArray is 16 bytes");
TN_STATIC_ASSERT(sizeof(TnStringObj) == 48, "TnStringObj is 48 bytes");
TN_STATIC_ASSERT(offsetof(TnStringObj, data) == 24, "TnStringObj layout");
TN_STATIC_ASSERT(offsetof(TnStringObj, size) == 32, "TnStringObj layout");
TN_STATIC_ASSERT(offsetof(TnStringObj, hash) == 40, "TnStringObj layout");
TN_STATIC_ASSERT(sizeof(TnFunctionObj) == 48, "TnFunctionObj is 48 bytes");
TN_STATIC_ASSERT(offsetof(TnFunctionObj, fn) == 24, "TnFunctionObj layout");
TN_STATIC_ASSERT(offsetof(TnFunctionObj, self) == 32, "TnFunctionObj layout");
TN_STATIC_ASSERT(offsetof(TnFunctionObj, self_deleter) == 40,
                 "TnFunctionObj layout");
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
TN_STATIC_ASSERT(sizeof(TnShapeObj) == 40, "TnShapeObj is 40 bytes");
TN_STATIC_ASSERT(offsetof(TnShapeObj, data) == 24, "TnShapeObj layout");
TN_STATIC_ASSERT(offsetof(TnShapeObj, ndim) == 32, "TnShapeObj layout");
TN_STATIC_ASSERT(offsetof(TnTensorObj, dl) == 24, "TnTensorObj layout");
TN_STATIC_ASSERT(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
TN_STATIC_ASSERT(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
TN_STATIC_ASSERT(sizeof(DLTensor) == 48, "DLTensor is 48 bytes");
TN_STATIC_ASSERT(offsetof(DLTensor, device) == 8, "DLTensor layout");
TN_STATIC_ASSERT(offsetof(DLTensor, ndim) == 16, "DLTensor layout");
TN_STATIC_ASSERT(offsetof(DLTensor, dtype) == 20, "DLTensor layout");
TN_STATIC_ASSERT(offsetof(DLTensor, shape) == 24, "DLTensor layout");
TN_STATIC_ASSERT(offsetof(DLTensor, strides) == 32, "DLTensor layout");
TN_STATIC_ASSERT(offsetof(DLTensor, byte_offset) == 40, "DLTensor layout");
TN_STATIC_ASSERT(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");
TN_STATIC_ASSERT(sizeof(DLManagedTensorVersioned) == 80,
                 "DLManagedTensorVersioned layout");
TN_STATIC_ASSERT(offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
                 "DLManagedTensorVersioned layout");

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_C_API_H_ */
