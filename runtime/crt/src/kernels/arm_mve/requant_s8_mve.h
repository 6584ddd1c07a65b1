/*
 * arm_mve/requant_s8_mve.h: TFLite's int8 requantization of four int32
 * sums in one M-profile Vector Extension vector (the Cortex-M55), for
 * every MVE form (the dense layer, the depthwise layers and, through
 * conv_s8_mve.h's mve_requant4, the matrix product), included where isa.h says MVE is there. Each lane
 * takes its own multiplier m >= 0 and shift sh in [-31, -1] (a right
 * shift); the forms check that before they take a layer.
 */
#ifndef TVMNODE_CRT_ARM_MVE_REQUANT_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_REQUANT_S8_MVE_H_

#include <stdint.h>

#include "../isa.h"
#include "tvmnode/crt/kernels.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

/*
 * Four sums requantized in one vector: TFLite's
 * SaturatingRoundingDoublingHighMul is VQRDMULH ((acc * m + 2^30) >> 31,
 * the doubling inside the 64-bit product, saturating only for acc = m =
 * INT32_MIN), and its RoundingDivideByPOT by r = -sh (round half away
 * from zero) is VRSHL's round half up of h - 1 where h < 0 (h + (h >>
 * 31), saturating: INT32_MIN stays); then the output offset (mod 2^32,
 * as the portable C adds it) and the clamp to [lo, hi].
 */
static inline int32x4_t mve_rq4(int32x4_t acc, int32x4_t m, int32x4_t sh,
                                int32_t off, int32x4_t lo, int32x4_t hi) {
  const int32x4_t h = vqrdmulhq_s32(acc, m);
  const int32x4_t neg = vshrq_n_s32(h, 31); /* -1 where h < 0 */
  const int32x4_t v = vaddq_n_s32(vrshlq_s32(vqaddq_s32(h, neg), sh), off);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

/* Whether every channel of q (n of them, or 1 per tensor) takes
 * mve_rq4: the fixed-point requantization, each multiplier >= 0, each
 * shift in [-31, -1]. */
static inline int mve_rq_ok(const TnCrtQuant *q, int32_t n) {
  if (q->scale != NULL) return 0;
  for (int32_t j = 0; j < (q->per_channel ? n : 1); j++)
    if (q->multiplier[j] < 0 || q->shift[j] > -1 || q->shift[j] < -31)
      return 0;
  return 1;
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_REQUANT_S8_MVE_H_ */
