/*
 * tvmnode/crt/status.h: the status codes of the freestanding runtime.
 *
 * Everything in runtime/crt reports failure as one of these codes, never by
 * aborting or printing: a microcontroller has nowhere to print and nothing to
 * unwind. The codes come from one X-macro table, as the library's error kinds
 * do (TN_ERROR_KIND_MAP in tvmnode/abi.h), so the enum and the names cannot
 * drift apart. Codes are stable: new ones are added at the end.
 *
 * This header, like all of the crt, needs only <stdint.h> and <stddef.h>.
 */
#ifndef TVMNODE_CRT_STATUS_H_
#define TVMNODE_CRT_STATUS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, code, "description") */
#define TN_CRT_STATUS_MAP(X)                                               \
  X(OK, 0, "success")                                                      \
  X(INVALID_ARGUMENT, 1, "an argument is invalid (NULL, out of range)")    \
  X(SHAPE_MISMATCH, 2, "tensor shapes do not match what the call expects") \
  X(DTYPE_MISMATCH, 3, "tensor element types do not match")                \
  X(UNSUPPORTED, 4, "the parameters ask for something not implemented")    \
  X(SCRATCH_TOO_SMALL, 5, "the caller's scratch buffer is too small")      \
  X(POOL_TOO_SMALL, 6, "a memory pool is smaller than the model needs")    \
  X(OVERFLOW, 7, "a size or index computation would overflow")          \
  X(POOL_MISALIGNED, 8, "a memory pool is not aligned as the model needs") \
  X(NULL_POINTER, 9, "a required pointer is NULL")                         \
  X(MODEL_MISMATCH, 10,                                                    \
    "the model descriptor is not one this runtime reads (another ABI "     \
    "version, or not a descriptor)")                                       \
  X(NOT_BOUND, 11, "an input or output has no buffer bound to it")         \
  X(DEVICE_FAILED, 12, "an external device failed to compute an operator") \
  X(PARAMS_INVALID, 13,                                                    \
    "not a parameter blob of the layout tn_crt_params_* reads (bad magic, " \
    "format version, entry names, types or sizes, or trailing bytes)")     \
  X(PARAMS_TRUNCATED, 14,                                                  \
    "a parameter blob ends before the entries it declares")                \
  X(PARAMS_CHECKSUM, 15,                                                   \
    "a parameter blob's CRC-32 does not match its bytes (corrupted)")      \
  X(PARAMS_WRONG_MODEL, 16,                                                \
    "a parameter blob was made for another model (or another version of " \
    "its constants' layout)")                                  \
  X(BUSY, 17, "a frame sent earlier still waits for its acknowledgement")  \
  X(WRITE_FAILED, 18, "the transport refused to write a frame")

typedef enum {
#define TN_CRT_STATUS_ENUM_(name, code, doc) TN_CRT_##name = code,
  TN_CRT_STATUS_MAP(TN_CRT_STATUS_ENUM_)
#undef TN_CRT_STATUS_ENUM_
} TnCrtStatus;

/* The name of a status ("INVALID_ARGUMENT"), or "UNKNOWN" for a code not in
 * the table. Static storage. */
const char *tn_crt_status_name(int32_t status);
/* A one-line description of a status, or "unknown status". */
const char *tn_crt_status_doc(int32_t status);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_STATUS_H_ */
