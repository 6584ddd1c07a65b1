/*
 * host_internal.h: what the host runtime's files share and nothing else
 * sees.
 */
#ifndef TVMNODE_HOST_INTERNAL_H_
#define TVMNODE_HOST_INTERNAL_H_

#include <stddef.h>

#include "tvmnode/tvmnode.h"

/* A global function of the host runtime: its registry name and body. */
typedef struct {
  const char *name;
  TnPackedFn fn;
} TnHostFn;

/* The host runtime's functions, registered by its start-up (init.c):
 * executor.c's, then module.c's (Modules and params.c's). 0, or -1 with the
 * error raised. */
int tn__executor_init(void);
int tn__module_init(void);

/* The names TVMNODE_ISA and runtime.IsaLimit take for the ISA levels of
 * tn_crt_isa_limit (init.c): the level, or -1 for a name not among
 * TN__ISA_NAMES. */
#define TN__ISA_NAMES                                                \
  "portable, sse2, sse41, avx2, avxvnni (avx2 and AVX-VNNI), avx512 " \
  "(avx512bw), vnni (avx512vnni)"
int tn__isa_parse(const char *name);

/* Register `n` global functions; -1 with the error raised at the first
 * that fails. */
static inline int tn__host_register(const TnHostFn *fns, size_t n) {
  for (size_t i = 0; i < n; i++) {
    TnObject *f = tn_func_new(fns[i].fn, NULL, NULL);
    int rc = f ? tn_func_register(fns[i].name, f, 0) : -1;
    tn_object_release(f);
    if (rc) return -1;
  }
  return 0;
}

#endif /* TVMNODE_HOST_INTERNAL_H_ */
