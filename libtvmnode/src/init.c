/*
 * init.c: library start-up, one layer at a time in layer order.
 *
 * Each layer registers what it owns (types, functions, operators, passes)
 * and may use everything below it, so the order here is the layer order of
 * DESIGN.md: core, func, reflect, ir, kernel, pass, codegen
 * (tests/layering.sh checks it). Built-in types get their fixed indices
 * before any user code runs, so no entry point needs an "initialised yet?"
 * check. A registration that fails here aborts (TN__INIT_CHECK): the
 * library would otherwise start with pieces silently missing. Nothing here
 * starts runtime/host: it registers its functions itself, after this.
 */
#include "codegen/codegen_internal.h"
#include "kernel/kernel_internal.h"
#include "pass/pass_internal.h"

/* Priority 101, the first an application may use: the library starts
 * before every other constructor of the program or of this library, so the
 * host runtime's (runtime/host/init.c, which registers itself) and an
 * application's may use it, whatever order the linker put them in. */
__attribute__((constructor(101))) void tn__library_init(void);
void tn__library_init(void) {
  tn__core_init();
  tn__func_init();
  tn__reflect_init();
  tn__ir_init();
  tn__kernel_init();
  tn__pass_init();
  tn__codegen_init();
}
