/*
 * call.h: how a crt source defines the uniform entry of a kernel form
 * (tvmnode/crt/calls.h). TN_CRT_CALL(form, Type) { body } defines
 * tn_crt_call_<form>, which refuses a NULL parameter struct or input list
 * and runs `body` with `p` the typed parameters and `in`, `out`, `scratch`
 * and `scratch_size` as passed (each may go unused). The body is a static
 * function called once, so the compiler inlines it into the entry.
 */
#ifndef TVMNODE_CRT_KERNELS_CALL_H_
#define TVMNODE_CRT_KERNELS_CALL_H_

#include "tvmnode/crt/calls.h"

#if defined(__GNUC__) || defined(__clang__)
#define TN_CRT_MAYBE_UNUSED __attribute__((unused))
#else
#define TN_CRT_MAYBE_UNUSED
#endif

#define TN_CRT_CALL(form, Type)                                              \
  static int32_t call_##form(                                                \
      const Type *p, const void *const *in TN_CRT_MAYBE_UNUSED,              \
      void *out TN_CRT_MAYBE_UNUSED, void *scratch TN_CRT_MAYBE_UNUSED,      \
      size_t scratch_size TN_CRT_MAYBE_UNUSED);                              \
  int32_t tn_crt_call_##form(const void *params, const void *const *in,      \
                             void *out, void *scratch, size_t scratch_size) { \
    if (params == NULL || in == NULL) return TN_CRT_INVALID_ARGUMENT;        \
    return call_##form((const Type *)params, in, out, scratch, scratch_size); \
  }                                                                          \
  static int32_t call_##form(                                                \
      const Type *p, const void *const *in TN_CRT_MAYBE_UNUSED,              \
      void *out TN_CRT_MAYBE_UNUSED, void *scratch TN_CRT_MAYBE_UNUSED,      \
      size_t scratch_size TN_CRT_MAYBE_UNUSED)

#endif /* TVMNODE_CRT_KERNELS_CALL_H_ */
