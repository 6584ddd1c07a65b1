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
#include <string.h>

#include "host_internal.h"
#include "tvmnode/crt/kernels.h"

int tn__isa_parse(const char *name) {
  static const struct {
    const char *name;
    int level;
  } names[] = {{"portable", TN_CRT_ISA_PORTABLE},
               {"sse2", TN_CRT_ISA_SSE2},
               {"sse41", TN_CRT_ISA_SSE41},
               {"avx2", TN_CRT_ISA_AVX2},
               {"avxvnni", TN_CRT_ISA_AVX2_VNNI},
               {"avx512", TN_CRT_ISA_AVX512BW},
               {"avx512bw", TN_CRT_ISA_AVX512BW},
               {"vnni", TN_CRT_ISA_AVX512VNNI},
               {"avx512vnni", TN_CRT_ISA_AVX512VNNI}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i].name) == 0) return names[i].level;
  return -1;
}

/* TVMNODE_ISA caps the ISA forms of the kernels (tn_crt_isa_limit), read
 * once here; a value it does not know is reported and changes nothing. */
static void isa_from_env(void) {
  const char *v = getenv("TVMNODE_ISA");
  if (v == NULL || *v == 0) return;
  int level = tn__isa_parse(v);
  if (level < 0)
    fprintf(stderr, "tvmnode: TVMNODE_ISA: expected one of %s, got '%s' "
            "(ignored)\n", TN__ISA_NAMES, v);
  else
    tn_crt_isa_limit(level);
}

__attribute__((constructor)) void tn__host_init(void);
void tn__host_init(void) {
  isa_from_env();
  if (tn__executor_init() == 0 && tn__module_init() == 0) return;
  TnObject *err = tn_error_peek_raised();
  fprintf(stderr, "tvmnode: start-up of the host runtime failed: %s: %s\n",
          err ? tn_error_kind(err) : "?", err ? tn_error_message(err) : "?");
  abort();
}
