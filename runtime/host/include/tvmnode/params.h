/*
 * tvmnode/params.h: the parameter file format (docs/mlf.md) from C.
 *
 * A parameter file holds named tensors: the constants of a compiled model
 * (parameters/<name>.params in a Model Library Format archive), or any
 * weights an application wants to keep beside it. It is versioned and ends
 * in a CRC-32, so a damaged file is refused rather than half read. These
 * functions write exactly the bytes that tvmnode.codegen.save_params
 * writes, and read what it reads; loading treats its input as untrusted
 * (it is fuzzed): every truncated, corrupted or oversized file is a
 * ValueError that says what is wrong, nothing is read out of bounds, and no
 * allocation is larger than the input could describe. Every language
 * reaches them through the registry:
 *
 *   "runtime.SaveParams"(map of name -> tn.Tensor) -> tn.Bytes
 *   "runtime.LoadParams"(bytes) -> tn.Map of name -> tn.Tensor
 */
#ifndef TVMNODE_PARAMS_H_
#define TVMNODE_PARAMS_H_

#include "tvmnode/tvmnode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tensors of `params` (a tn.Map or tn.Dict from names to CPU
 * tn.Tensors, in its order) as a parameter file. A key that is not a
 * string or a value that is not a tensor is a TypeError, and so is a dtype
 * the format does not carry (it carries int8/16/32/64, uint8, float32/64
 * and bool); a tensor not on the CPU is a ValueError. Strided tensors are
 * written in C order. (transfer full: a tn.Bytes) */
TN_API TnObject *tn_params_save(const TnObject *params);

/* The tensors of the parameter file in `data` (`size` bytes), as a tn.Map
 * in file order (a name given twice keeps its last tensor, as a Python
 * dict would). (transfer full) */
TN_API TnObject *tn_params_load(const void *data, size_t size);

/* zlib's CRC-32: continue `crc` (0 to start) over `size` bytes. The file's
 * last four bytes are this over everything before them. */
TN_API uint32_t tn_params_crc32(uint32_t crc, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_PARAMS_H_ */
