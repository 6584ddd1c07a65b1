/*
 * pass_internal.h: what the pass sources share. Private to the library.
 */
#ifndef TVMNODE_PASS_INTERNAL_H_
#define TVMNODE_PASS_INTERNAL_H_

#ifndef TN_BUILDING_LIBRARY
#error "pass_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "kernel/kernel_internal.h"
#include "tvmnode/pass.h"

int32_t tn__pass_type(void);
int32_t tn__pass_context_type(void);
int32_t tn__pass_instrument_type(void);

/* Whether a function is a fused primitive function (attrs "Primitive"). */
bool tn__pass_is_primitive(const TnObject *func);

/* A module pass implemented in C: fn(mod, ctx) -> new module (or NULL with
 * an error). */
typedef TnObject *(*TnModulePassC)(TnObject *mod, TnObject *ctx);
TnObject *tn__pass_from_c(const char *name, int32_t opt_level,
                          const char *const *required, int32_t nrequired,
                          TnModulePassC fn);

/* An integer option of a pass context's config (`ctx` may be NULL), or
 * `fallback` when it is not set. */
int64_t tn__pass_config_int(const TnObject *ctx, const char *key,
                            int64_t fallback);

/* A string option of a pass context's config (`ctx` may be NULL), or
 * `fallback` when it is not set; borrowed from the config. */
const char *tn__pass_config_str(const TnObject *ctx, const char *key,
                                const char *fallback);

/* The attrs node `attrs` with field `field` set to `value` (borrowed) and
 * every other field copied: attrs are immutable, a rewrite makes new ones.
 * (transfer full) */
TnObject *tn__pass_attrs_with(const TnObject *attrs, const char *field,
                              const TnAny *value);

/* Rewrite every function of a module that is not primitive: fn returns the
 * new function (transfer full; the same one when unchanged) or NULL with an
 * error. Returns the new module, or `mod` itself (a new reference) when no
 * function changed. */
typedef TnObject *(*TnFunctionRewriteC)(void *ctx, const char *name,
                                        TnObject *func);
TnObject *tn__pass_map_functions(TnObject *mod, TnFunctionRewriteC fn,
                                 void *ctx);

/* A rewrite of one node: the replacement of `rebuilt` (the node over its
 * rewritten children; `orig`, the node as it was, keeps its types)
 * (transfer full), or NULL with *failed clear to keep it, or NULL with
 * *failed set and an error raised to stop. */
typedef TnObject *(*TnNodeRewriteC)(void *ctx, TnObject *orig,
                                    TnObject *rebuilt, bool *failed);
/* Every function of a module that is not primitive rewritten bottom-up,
 * node by node, by fn (tn_ir_mutate); as tn__pass_map_functions. */
TnObject *tn__pass_rewrite_nodes(TnObject *mod, TnNodeRewriteC fn, void *ctx);

/* The built-in module passes. */
TnObject *tn__infer_type_module(TnObject *mod, TnObject *ctx);
TnObject *tn__simplify_module(TnObject *mod, TnObject *ctx);
TnObject *tn__fold_constant_module(TnObject *mod, TnObject *ctx);
TnObject *tn__dce_module(TnObject *mod, TnObject *ctx);
TnObject *tn__fuse_ops_module(TnObject *mod, TnObject *ctx);
TnObject *tn__kernel_layout_module(TnObject *mod, TnObject *ctx);
TnObject *tn__fold_input_offset_module(TnObject *mod, TnObject *ctx);
TnObject *tn__pack_dense_weights_module(TnObject *mod, TnObject *ctx);
TnObject *tn__patch_stages_module(TnObject *mod, TnObject *ctx);

/* The function pass bodies of the built-in passes, shared with tests of the
 * rewrites in isolation. */
TnObject *tn__simplify_expr(TnObject *expr);
TnObject *tn__fold_constant_expr(TnObject *expr, int64_t max_elements);

void tn__pass_types_init(void);
void tn__passes_builtin_init(void);
/* Start-up of the pass layer: its node types, then the built-in passes
 * (init.c). */
void tn__pass_init(void);

#endif /* TVMNODE_PASS_INTERNAL_H_ */
