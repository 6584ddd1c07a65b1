/*
 * init.c: the host runtime's start-up. The runtime puts its functions
 * (runtime.Executor*, runtime.Module*, runtime.SaveParams/LoadParams) in
 * the global registry itself: nothing in libtvmnode calls into
 * runtime/host (DESIGN.md, "Layers"), and bindings reach it through those
 * names.
 *
 * The constructor has no priority, so it runs after the library's own
 * start-up, which has the lowest one (libtvmnode/src/init.c): every type and
 * registry it uses exists by then, whatever order the linker put the
 * objects in. A static link keeps this object, which nothing references,
 * by naming its constructor: -Wl,-u,tn__host_init (tvmnode.pc gives it to
 * `pkg-config --static`). A registration that fails aborts, as the
 * library's own do: the runtime would otherwise start with functions
 * silently missing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "host_internal.h"

__attribute__((constructor)) void tn__host_init(void);
void tn__host_init(void) {
  if (tn__executor_init() == 0 && tn__module_init() == 0) return;
  TnObject *err = tn_error_peek_raised();
  fprintf(stderr, "tvmnode: start-up of the host runtime failed: %s: %s\n",
          err ? tn_error_kind(err) : "?", err ? tn_error_message(err) : "?");
  abort();
}
