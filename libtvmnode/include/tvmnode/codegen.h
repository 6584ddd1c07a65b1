/*
 * tvmnode/codegen.h: ahead-of-time compilation to C. The static memory
 * planner it shares with the host executor (tn_memory_plan) is declared in
 * tvmnode/kernel.h, which this header includes.
 */
#ifndef TVMNODE_CODEGEN_H_
#define TVMNODE_CODEGEN_H_

#include "tvmnode/ir.h"
#include "tvmnode/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Compile the "main" function of a typed, fused IRModule to C (the C part
 * of a Model Library Format archive). `options` (a tn.Map, or NULL for the
 * defaults) may hold:
 *   "name": str          the model name, a C identifier ("default")
 *   "alignment": int     of every buffer and pool (16)
 *   "interface": str     "c" or "c,rust"
 *   "io_in_pool": bool   inputs and outputs inside the workspace pool
 *   "constants_in_pool": bool  constants in a pool the application
 *                        supplies instead of const arrays
 *   "pools": [{"name": str, "limit": int, "accepts": [kinds]}]
 *                        workspace pools in order of preference, each
 *                        with a byte limit (0: none) and the kinds of
 *                        buffer it may hold ("intermediate", "input",
 *                        "output", "scratch"; all when absent)
 *                        ([{"name": "global_workspace"}])
 *   "devices": {name: [operator names]}  operators handed to devices
 *   "constants_section": str  the linker section of the constant arrays
 *                        (of the constant pool's initial data with
 *                        constants_in_pool)
 *   "workspace_section": str  the section the pools belong in: the
 *                        header's TVMGEN_<NAME>_WORKSPACE_SECTION
 *                        attribute, for the application's pools
 *                        (section names: letters, digits, '_', '.', '$',
 *                        not starting with a digit, up to 64 characters)
 *   "constants_align": int  of the constant arrays (a power of two up to
 *                        4096; "alignment" when absent)
 * Returns a tn.Map: "files" (path -> text: codegen/host/src/<name>_lib0.c,
 * <name>_lib1.c, codegen/host/include/tvmgen_<name>.h, metadata.json),
 * "runtime_sources" (the crt files the code needs, relative to
 * runtime/crt), "plan" (pools, buffers with their live steps and offsets,
 * the lower bound) and "constants" (the constant tensors the code reads,
 * by the names of their arrays: "const<i>").
 * (transfer full)
 */
TN_API TnObject *tn_codegen_aot(const TnObject *mod, const TnObject *options);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CODEGEN_H_ */
