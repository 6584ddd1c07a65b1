/*
 * unroll.h: EACH, a loop written out eight bodies per iteration. gcc 12 at
 * -O2 (how the library and most firmware are built) does not vectorise a
 * plain loop that needs a run-time trip-count or alias check, but does
 * vectorise these straight-line bodies; the elementwise and pooling kernels
 * run three times faster for it. Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_UNROLL_H_
#define TVMNODE_CRT_UNROLL_H_

#include <stdint.h>

/* for (i = 0; i < n; i++) { body }, eight bodies per iteration. */
#define EACH(n, i, ...)                                                     \
  do {                                                                      \
    int32_t i##0_ = 0, i;                                                   \
    for (; i##0_ + 8 <= (n); i##0_ += 8) {                                  \
      i = i##0_ + 0; { __VA_ARGS__; }                                       \
      i = i##0_ + 1; { __VA_ARGS__; }                                       \
      i = i##0_ + 2; { __VA_ARGS__; }                                       \
      i = i##0_ + 3; { __VA_ARGS__; }                                       \
      i = i##0_ + 4; { __VA_ARGS__; }                                       \
      i = i##0_ + 5; { __VA_ARGS__; }                                       \
      i = i##0_ + 6; { __VA_ARGS__; }                                       \
      i = i##0_ + 7; { __VA_ARGS__; }                                       \
    }                                                                       \
    for (i = i##0_; i < (n); i++) { __VA_ARGS__; }                          \
  } while (0)

#endif /* TVMNODE_CRT_UNROLL_H_ */
