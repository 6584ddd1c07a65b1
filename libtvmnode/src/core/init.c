/*
 * init.c: library start-up. Built-in types get their fixed indices before any
 * user code can run, from an ELF constructor, so that no entry point needs a
 * "was the library initialised?" check on its hot path.
 */
#include "internal.h"

__attribute__((constructor)) static void tn_library_init(void) {
  tn__threads_init();
  tn__types_init();
  tn__func_builtins_init();
}
