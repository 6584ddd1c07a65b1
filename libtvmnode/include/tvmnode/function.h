/*
 * tvmnode/function.h: packed functions, the global registry and the libffi
 * bridge.
 *
 * A tn.Function wraps a TnPackedFn (abi.h) with its context, so functions
 * come from any language. The global registry maps names to functions; the
 * bridge registers a typed C function from its address and a signature
 * string, and turns any function into a real C function pointer.
 */
#ifndef TVMNODE_FUNCTION_H_
#define TVMNODE_FUNCTION_H_

#include "tvmnode/object.h"

#ifdef __cplusplus
extern "C" {
#endif

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
TN_API TnObject *tn_func_get(const char *name);
/* Same, but NULL without raising when `name` is not registered.
 * (transfer full) */
TN_API TnObject *tn_func_find(const char *name);
/* Unregister `name`; KeyError if it is not registered. Handles already
 * taken keep working: they own their reference. */
TN_API int tn_func_unregister(const char *name);
/* The registered names, sorted, as a tn.Array of tn.String. (transfer full) */
TN_API TnObject *tn_func_list(void);

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
 * The signature a function made by tn_func_from_c (or tn_func_register_c)
 * was made with, in canonical form ("i64(i64,i64)", "obj<ir.Var>(str)"), as
 * a tn.String: what function metadata reports as parameter and return
 * types. NULL without raising for any other function (packed, a binding's
 * callable, a closure): its types are not known. NULL with a TypeError when
 * `func` is not a tn.Function. (transfer full)
 */
TN_API TnObject *tn_func_c_signature(const TnObject *func);

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

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_FUNCTION_H_ */
