/*
 * host_registry.c: a program that uses nothing of runtime/host but its
 * registered functions, as a binding does, and fails unless every one of
 * them is in the registry. tests/host_registers.sh links it against the
 * static archive (where only a -u of the host's constructor keeps the
 * runtime in the link) and against the shared library.
 */
#include <stdio.h>

#include <tvmnode/tvmnode.h>

#include "host_functions.h"

int main(void) {
  size_t n = sizeof tn_test_host_functions / sizeof tn_test_host_functions[0];
  int missing = 0;
  for (size_t i = 0; i < n; i++) {
    TnObject *f = tn_func_get(tn_test_host_functions[i]);
    if (f == NULL) {
      printf("not registered: %s\n", tn_test_host_functions[i]);
      tn_error_set_raised(NULL);
      missing++;
    }
    tn_object_release(f);
  }
  if (missing == 0) printf("all %zu runtime functions registered\n", n);
  return missing != 0;
}
