/*
 * tvmnode/dlpack.h: the DLPack 1.1 tensor-exchange structs, as tvmnode uses
 * them in its ABI.
 *
 * DLPack is a layout convention, not a library: every framework that speaks it
 * declares the same handful of C structs. tvmnode declares them here so that
 * its public headers depend on nothing outside the C standard library. The
 * include guard is DLPack's own, so whichever declaration a translation unit
 * sees first wins and a later `#include <dlpack/dlpack.h>` is a no-op (or the
 * other way round). If a pre-1.0 dlpack.h was included first we stop, because
 * the versioned structs would be missing. The layout is frozen by static
 * assertions in abi.h.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#include <stddef.h>
#include <stdint.h>

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#ifndef DLPACK_EXTERN_C
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#endif

#ifndef DLPACK_DLL
#define DLPACK_DLL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the DLPack ABI carried by a versioned managed tensor. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* Kind of device that holds a tensor's memory; the numbering is DLPack's. */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/* Element kind of a tensor; the numbering is DLPack's. */
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  /* DLPack 1.1: the float8 variants (8 bits), float6 (6 bits) and float4
   * (4 bits), named as ml_dtypes names them. Elements narrower than a byte
   * are packed little-bit-endian in a DLPack tensor; tvmnode's own tensors
   * keep one element a byte (see docs/). */
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

/* A scalar or short-vector element type: "float32" is {kDLFloat, 32, 1}. */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/* A strided view of memory. `strides` may be NULL for a compact row-major
 * tensor; `byte_offset` is added to `data` before indexing. */
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

/* Pre-1.0 ("legacy") managed tensor: a DLTensor plus the producer's context
 * and the function the consumer calls when it no longer needs the memory. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

/* The 1.0 managed tensor: versioned, with read-only and copied flags. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}
#endif

#elif !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
#error "tvmnode needs DLPack >= 1.0; an older dlpack.h was included first"
#endif /* DLPACK_DLPACK_H_ */
