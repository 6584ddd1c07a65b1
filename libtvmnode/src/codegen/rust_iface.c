/*
 * rust_iface.c: the Embedded Rust twin of tvmgen_<name>.h. Not written
 * yet: `--interface c,rust` raises NotImplementedError until it is.
 */
#include "codegen/codegen_internal.h"

void tn__codegen_rust(const TnAotInterface *iface, GString *out) {
  (void)iface, (void)out;
}
