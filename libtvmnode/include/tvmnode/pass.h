/*
 * tvmnode/pass.h: passes over IR modules.
 *
 * A pass is a named IRModule -> IRModule function with an opt level and a
 * list of passes it requires; it is built from any tn.Function, so passes
 * written in C, Python, Rust and Go mix in one Sequential. A PassContext
 * carries the opt level, a validated config and instruments.
 *
 * Ownership: every function returning an object returns a new reference
 * (transfer full); object arguments are borrowed (transfer none).
 */
#ifndef TVMNODE_PASS_H_
#define TVMNODE_PASS_H_

#include "tvmnode/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Passes                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A pass turns a module into a module. Module passes call
 * func(mod, ctx) -> mod; function passes call func(function, mod, ctx) ->
 * function for every function that is not primitive. Passes are built from
 * any tn.Function, so they can be written in any language. `required`
 * (NULL or a tn.Array of pass names) run first. (transfer full) */
TN_API TnObject *tn_pass_module(const char *name, int32_t opt_level,
                                TnObject *required, TnObject *func);
/* (transfer full) */
TN_API TnObject *tn_pass_function(const char *name, int32_t opt_level,
                                  TnObject *required, TnObject *func);
/* Run passes in order. (transfer full) */
TN_API TnObject *tn_pass_sequential(TnObject *const *passes, int32_t n,
                                    const char *name, int32_t opt_level);
/* A sequential of registered passes named in `names`. (transfer full) */
TN_API TnObject *tn_pass_sequential_named(const char *const *names,
                                          int32_t n, const char *name);

/*
 * Run `pass` on `mod` under `ctx` (NULL: the current context, or the
 * default one). The pass is skipped when its opt_level is above the
 * context's, or when the context disables it (unless it requires it). A
 * failing pass raises an error naming it, with the original as its cause;
 * `mod` is never changed. (transfer full: the new module)
 */
TN_API TnObject *tn_pass_run(TnObject *pass, TnObject *mod, TnObject *ctx);

/* The pass registry, tn_pass_{register,unregister,get,find,list} like every
 * registry of the library: register a pass under its name (borrowed, a
 * reference is taken; ValueError if the name is taken, unless `override`);
 * remove one (KeyError if absent); look one up (get raises a KeyError, find
 * returns NULL without raising; transfer full); list the sorted names
 * (transfer full). */
TN_API int tn_pass_register(TnObject *pass, int override);
TN_API int tn_pass_unregister(const char *name);
/* (transfer full) */
TN_API TnObject *tn_pass_get(const char *name);
/* (transfer full) */
TN_API TnObject *tn_pass_find(const char *name);
/* (transfer full) */
TN_API TnObject *tn_pass_list(void);

/* Options a PassContext's config may set, with their value type. */
TN_API int tn_pass_config_register(const char *key, int32_t type_index);

/*
 * A pass context: opt level (default 2), config (a map checked against the
 * registered options), required and disabled pass names, instruments.
 * Any argument may be NULL. (transfer full)
 */
TN_API TnObject *tn_pass_context_new(int32_t opt_level, TnObject *config,
                                     TnObject *required, TnObject *disabled,
                                     TnObject *instruments);
/* Make `ctx` the current context of this thread until the matching exit;
 * contexts nest. */
TN_API int tn_pass_context_enter(TnObject *ctx);
TN_API int tn_pass_context_exit(void);
/* The current context (or the default). (transfer full) */
TN_API TnObject *tn_pass_context_current(void);

/* An instrument with hooks (each may be NULL) called as before(mod, info)
 * and after(mod, info), where info is the pass's ir.PassInfo.
 * (transfer full) */
TN_API TnObject *tn_pass_instrument(const char *name, TnObject *before,
                                    TnObject *after);
/* An instrument that times every pass it sees; its report is a table.
 * (transfer full) */
TN_API TnObject *tn_pass_timing_instrument(void);
/* (transfer full) */
TN_API TnObject *tn_pass_timing_report(TnObject *timing);

/*
 * The built-in passes. They assume a well-formed module (tn_ir_well_formed:
 * what the builders, the text parser and the JSON loader hand them), except
 * InferType, which derives every type again and so also accepts a module
 * whose saved types were set wrongly from outside. (transfer full) */
TN_API TnObject *tn_pass_infer_type(void);
/* (transfer full) */
TN_API TnObject *tn_pass_simplify_expr(void);
/* (transfer full) */
TN_API TnObject *tn_pass_fold_constant(void);
/* (transfer full) */
TN_API TnObject *tn_pass_dead_code_elimination(void);
/* (transfer full) */
TN_API TnObject *tn_pass_fuse_ops(void);
/* ConvertKernelLayout: the constant weights of one-group conv2d calls in
 * the layout the option "ConvertKernelLayout.layout" names (OHWI, OIHW or
 * HWIO; OHWI by default). (transfer full) */
TN_API TnObject *tn_pass_convert_kernel_layout(void);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_PASS_H_ */
