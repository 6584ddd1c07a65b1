/*
 * unroll.h: EACH, a loop written out eight bodies per iteration. gcc 12 at
 * -O2 (how the library and most firmware are built) does not vectorise a
 * plain loop that needs a run-time trip-count or alias check, but does
 * vectorise these straight-line bodies; the elementwise and pooling kernels
 * run three times faster for it. Also R4/R8/R16, which write a block of
 * named accumulators: a compiler keeps named scalars in registers (SSE or
 * NEON vectors, the Cortex-M4's single registers), where an array's
 * elements are loaded and stored around every multiply-add. Private to
 * runtime/crt.
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

/* M(0) M(1) ... M(N-1): one statement per accumulator of a block. */
#define R4(M) M(0) M(1) M(2) M(3)
#define R8(M) R4(M) M(4) M(5) M(6) M(7)
#define R16(M) R8(M) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)

/* v clamped to [lo, hi] (a fused activation). */
static inline float clamp_f32(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

#endif /* TVMNODE_CRT_UNROLL_H_ */
