/*
 * tvmnode/crt/params.h: weights supplied at run time (a model compiled with
 * constants_in_pool), from a parameter blob written to flash or received
 * over a link.
 *
 * A parameter blob is a file in the parameter file format (docs/mlf.md,
 * "TNPARAMS", a CRC-32 closing it) with exactly three entries, all uint8
 * vectors, in this order:
 *
 *   "tvmnode.model_id"  16 bytes: u64 model id, u32 layout version, u32 the
 *                       weights' own version (the application's to use)
 *   "tvmnode.pad"       0 or more bytes, so that the next entry's data
 *                       starts at a multiple of the pool's alignment from
 *                       the blob's first byte
 *   <pool name>         the constant pool's whole image (its size bytes)
 *
 * tvmnode.codegen.params_blob writes one. The model id is a 64-bit hash of
 * the generated code that reads the pool (every kernel call, its parameters
 * and its constants' offsets) and of the constants' layout, but not of
 * their values: a second set of weights for the same model has the same
 * id, another model (or the same one compiled differently) another. The
 * generator records it beside the descriptor, in tvmgen_<name>_params_layout
 * (TVMGEN_<NAME>_MODEL_ID in the header, interface.params in
 * metadata.json).
 *
 * Nothing here allocates, prints or aborts; every failure is a TnCrtStatus
 * and leaves the instance's weights as they were. The blob is read in
 * place: bound without a copy when its pool image is aligned as the pool
 * needs (a blob at an address aligned to the pool's alignment always is),
 * copied into the application's RAM pool otherwise.
 *
 * Like all of the crt, this header needs only <stdint.h> and <stddef.h>.
 */
#ifndef TVMNODE_CRT_PARAMS_H_
#define TVMNODE_CRT_PARAMS_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/crc32.h" /* tn_crt_crc32, the blob's checksum */
#include "tvmnode/crt/model.h"
#include "tvmnode/crt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TN_CRT_PARAMS_LAYOUT_MAGIC 0x544e504cu /* "TNPL" */
/* The version of the blob's layout (the three entries above). */
#define TN_CRT_PARAMS_VERSION 1u

/* What a model compiled with constants_in_pool records about its constant
 * pool for the checks below (tvmgen_<name>_params_layout). */
typedef struct {
  uint32_t magic;        /* TN_CRT_PARAMS_LAYOUT_MAGIC */
  uint32_t version;      /* TN_CRT_PARAMS_VERSION */
  uint64_t model_id;     /* TVMGEN_<NAME>_MODEL_ID */
  const TnCrtModel *model;
} TnCrtParamsLayout;

/* What a verified blob holds, and how it was bound. */
typedef struct {
  uint64_t model_id;
  uint32_t weights_version; /* the blob's own, as written */
  uint32_t pool_size;       /* bytes of the pool image */
  const uint8_t *pool_data; /* the image, inside the blob */
  int32_t copied;           /* tn_crt_params_bind/init: 1 when the image was
                               copied into the RAM pool, 0 when bound in
                               place; -1 after verify alone */
} TnCrtParamsInfo;

/* Check `size` bytes at `blob` against `layout` without writing anything
 * but `*out` (cleared first; may be NULL). In order: TN_CRT_NULL_POINTER
 * (no layout or blob), TN_CRT_MODEL_MISMATCH (a layout or descriptor this
 * runtime does not read, or a model without one constant pool),
 * TN_CRT_PARAMS_INVALID (not "TNPARAMS", another format version, not three
 * entries, an entry that is not a uint8 vector, trailing bytes),
 * TN_CRT_PARAMS_TRUNCATED (an entry runs past the end: a blob cut short),
 * TN_CRT_PARAMS_CHECKSUM (the CRC-32 does not match), TN_CRT_PARAMS_INVALID
 * (the entries' names or the id entry's size are not the layout's),
 * TN_CRT_PARAMS_WRONG_MODEL (another model id or layout version, or a pool
 * image of another size). Reads each byte of the blob at most twice. */
int32_t tn_crt_params_verify(const TnCrtParamsLayout *layout,
                             const void *blob, size_t size,
                             TnCrtParamsInfo *out);

/* Verify the blob, then make its pool image the constants of `inst` (an
 * instance of layout->model, initialised; TN_CRT_MODEL_MISMATCH
 * otherwise): in place when the image is aligned to the pool's alignment,
 * else copied into `ram_pool` (`ram_size` bytes, aligned; NULL when there
 * is none: then TN_CRT_POOL_MISALIGNED, TN_CRT_POOL_TOO_SMALL when too
 * small, TN_CRT_POOL_MISALIGNED when the RAM pool is). `out->copied` says
 * which. A blob bound in place must stay where it is, unchanged, while the
 * instance runs. On failure the instance keeps its previous weights; the
 * code is recorded as its last error. */
int32_t tn_crt_params_bind(TnCrtInstance *inst,
                           const TnCrtParamsLayout *layout, const void *blob,
                           size_t size, void *ram_pool, uint32_t ram_size,
                           TnCrtParamsInfo *out);

/* tn_crt_instance_init for a model whose weights come from a blob: checks
 * the workspace pools as tn_crt_instance_init does, verifies and binds the
 * blob as tn_crt_params_bind does, and never copies the model's built-in
 * weights (no RAM pool is needed for an aligned blob). On failure the
 * instance is unusable, its last error the code. */
int32_t tn_crt_params_init(TnCrtInstance *inst,
                           const TnCrtParamsLayout *layout,
                           const TnCrtPool *workspace_pools,
                           int32_t num_workspace_pools, const void *blob,
                           size_t size, void *ram_pool, uint32_t ram_size,
                           TnCrtParamsInfo *out);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_PARAMS_H_ */
