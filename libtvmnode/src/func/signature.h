/*
 * signature.h: C function signatures ("i64(i64,i64)") as the libffi bridge
 * uses them in both directions: parsing, libffi types, and conversion of
 * each C type to and from TnAny. Private to the library.
 */
#ifndef TVMNODE_FUNC_SIGNATURE_H_
#define TVMNODE_FUNC_SIGNATURE_H_

#ifndef TN_BUILDING_LIBRARY
#error "signature.h is private to libtvmnode"
#endif

#include <ffi.h>
#include <stdbool.h>

#include "func/func_internal.h"

#define TN__SIG_MAX_ARGS 32

typedef enum {
  TN_SIG_VOID,
  TN_SIG_BOOL,
  TN_SIG_I8,
  TN_SIG_I16,
  TN_SIG_I32,
  TN_SIG_I64,
  TN_SIG_U8,
  TN_SIG_U16,
  TN_SIG_U32,
  TN_SIG_U64,
  TN_SIG_F32,
  TN_SIG_F64,
  TN_SIG_PTR,
  TN_SIG_STR,
  TN_SIG_OBJ,
  TN_SIG_OBJ_NEW, /* "obj+": return only, a new reference */
  TN_SIG_ANY,
  TN_SIG_ANY_PTR, /* "any*": argument only */
  TN_SIG_DLTENSOR,
  TN_SIG_DTYPE,
  TN_SIG_DEVICE,
  TN_SIG__COUNT
} TnSigKind;

typedef struct {
  TnSigKind kind;
  int32_t obj_type; /* for TN_SIG_OBJ: required type index, TN_TYPE_OBJECT */
} TnSigType;

typedef struct {
  TnSigType ret;
  int32_t nargs;
  TnSigType args[TN__SIG_MAX_ARGS];
} TnSignature;

/* Every C value a signature type can stand for; libffi reads and writes
 * through pointers into it. Integer returns narrower than ffi_arg are read
 * through `arg`. */
typedef union {
  ffi_arg arg;
  ffi_sarg sarg;
  bool b;
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
  void *ptr;
  const char *str;
  TnObject *obj;
  TnAny any;
  const TnAny *any_ptr;
  DLTensor *dltensor;
  DLDataType dtype;
  DLDevice device;
} TnSigValue;

/* Parse `text`; ValueError naming `who` and the position on bad input. */
int tn__sig_parse(const char *text, TnSignature *out, const char *who);
void tn__sig_format(const TnSignature *sig, GString *out);
const char *tn__sig_kind_name(TnSigKind kind);
ffi_type *tn__sig_ffi_type(TnSigKind kind);
/* Prepare `cif` (with room for the argument types in `types`). */
int tn__sig_prep_cif(const TnSignature *sig, ffi_cif *cif, ffi_type **types,
                     const char *who);

/* A packed argument to a C value. `fname` and `index` name the function and
 * the argument in a TypeError. Borrowed: the value points into `a`. */
int tn__sig_arg_from_any(const TnSigType *t, const TnAny *a, TnSigValue *out,
                         const char *fname, int32_t index);
/* A C return value to an owned TnAny. */
int tn__sig_ret_to_any(const TnSigType *t, const TnSigValue *v, TnAny *out,
                       const char *fname);
/* A C argument (as libffi hands it to a closure) to a borrowed TnAny. */
int tn__sig_arg_to_any(const TnSigType *t, const void *v, TnAny *out,
                       const char *fname, int32_t index);
/* A packed result to the C return value of a closure; `ret` is libffi's
 * return buffer (integers narrower than ffi_arg are widened). */
int tn__sig_ret_from_any(const TnSigType *t, const TnAny *a, void *ret,
                         const char *fname);
/* Zero a closure's return buffer (the error channel's "zero" result). */
void tn__sig_ret_zero(const TnSigType *t, void *ret);

#endif /* TVMNODE_FUNC_SIGNATURE_H_ */
