/*
 * tvmnode/abi.h: the frozen part of tvmnode's C ABI.
 *
 * What every binding relies on byte for byte: the type indices, the 24-byte
 * object header, the 16-byte TnAny, the packed calling convention, the
 * object layouts bindings read directly, and the error protocol (an error is
 * an object left in a per-thread raised slot; status -1 / NULL / -1 tells the
 * caller to look). It depends only on <stdint.h>, <stddef.h> and the DLPack
 * structs, and every size and offset it fixes is checked by a static
 * assertion at the end. TN_ABI_VERSION covers this header, the layouts in
 * reflect.h (TnFieldDesc, TnNodeDesc) and the IR node layouts in ir.h: a
 * change that moves a byte of any of them bumps the major.
 *
 * Conventions for every tvmnode header, stated once:
 *  - Names are tn_<noun>_<verb>; types TnXxx; constants TN_XXX.
 *  - Status-returning functions give 0 on success and -1 on failure, with the
 *    error object left in the calling thread's "raised" slot (see Errors).
 *    Functions returning a pointer give NULL on failure. A function that
 *    must return both a value and a status returns the status and writes the
 *    value through an out-parameter. Nothing aborts on bad input.
 *  - Out of memory: memory whose size the caller chooses (objects, tensor
 *    data, container buffers) is checked, and running out raises a
 *    MemoryError. Small internal bookkeeping (registries, error text, the
 *    working tables of printing, JSON and structural equality) aborts as
 *    GLib does; see "Out of memory" in docs/abi.md.
 *  - Ownership is written on every prototype:
 *      (transfer full)  the caller receives, or gives away, one strong
 *                       reference and must release it / may no longer use it;
 *      (transfer none)  borrowed: valid while the owner keeps it alive.
 *    Object arguments are (transfer none) unless the prototype says
 *    otherwise; a function that keeps one takes its own reference. A
 *    function that steals a reference steals it even when it fails.
 *  - TnAny arguments are borrowed unless said otherwise; a TnAny written to an
 *    out-parameter is owned by the caller (release it with tn_any_clear).
 */
#ifndef TVMNODE_ABI_H_
#define TVMNODE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/dlpack.h"

#define TN_ABI_VERSION_MAJOR 2
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

/*
 * The kinds the library itself raises, as one table (the way libuv maps its
 * error codes): X(NAME, code, "PythonName") gives TN_ERR_NAME = code and the
 * kind's name. Codes are ABI: stable, and new kinds are only appended. Kinds
 * stay free strings across the bindings (Python may raise ZeroDivisionError
 * through C); a kind that is not in the table has the code TN_ERR_OTHER.
 */
#define TN_ERROR_KIND_MAP(X)                   \
  X(RUNTIME, 0, "RuntimeError")                \
  X(TYPE, 1, "TypeError")                      \
  X(VALUE, 2, "ValueError")                    \
  X(INDEX, 3, "IndexError")                    \
  X(KEY, 4, "KeyError")                        \
  X(ATTRIBUTE, 5, "AttributeError")            \
  X(MEMORY, 6, "MemoryError")                  \
  X(OVERFLOW, 7, "OverflowError")              \
  X(NOT_IMPLEMENTED, 8, "NotImplementedError")

typedef enum {
  TN_ERR_OTHER = -1,
#define TN__ERR_ENUM(name, code, str) TN_ERR_##name = code,
  TN_ERROR_KIND_MAP(TN__ERR_ENUM)
#undef TN__ERR_ENUM
} TnErrorKind;

/* The name of a kind code ("TypeError"); NULL for a code not in the table.
 * (transfer none: a static string) */
TN_API const char *tn_error_kind_name(TnErrorKind kind);
/* The code of an error object's kind; TN_ERR_OTHER for a kind not in the
 * table, for NULL and for an object that is not a tn.Error. */
TN_API TnErrorKind tn_error_kind_code(const TnObject *err);
/* The code of a kind name; TN_ERR_OTHER for NULL or a name not in the
 * table. */
TN_API TnErrorKind tn_error_kind_from_name(const char *name);

/* A new error; captures the C frames of the caller. (transfer full) */
TN_API TnObject *tn_error_new(const char *kind, const char *message);
/* Make an error from a printf format and put it in the raised slot.
 * Always returns -1, so `return tn_error_raise(...)` reads naturally. */
TN_API int tn_error_raise(const char *kind, const char *fmt, ...)
    TN_PRINTF(2, 3);
/* The same for a kind from the table, the message prefixed with the name of
 * the function it is raised in: "func: <formatted>" (just the formatted text
 * when `func` is NULL). A kind not in the table raises a RuntimeError.
 * Always returns -1. */
TN_API int tn_error_raise_in(TnErrorKind kind, const char *func,
                             const char *fmt, ...) TN_PRINTF(3, 4);
/* Raise from the enclosing function, named by __func__:
 * `return TN_RAISE(VALUE, "argument 'x' is %d", x);` raises a ValueError
 * "my_function: argument 'x' is 3". */
#define TN_RAISE(KIND, ...) \
  tn_error_raise_in(TN_ERR_##KIND, __func__, __VA_ARGS__)
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
/* The error's cause, or NULL. (transfer none: valid while `err` lives) */
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

#endif /* TVMNODE_ABI_H_ */
