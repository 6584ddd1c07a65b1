/*
 * arm_mve/add_s8_mve.h: the M-profile Vector Extension (Helium, the
 * Cortex-M55) form of the int8 elementwise ADD on contiguous runs
 * (quant.c's add_run_fast where both strides are 1), TFLite's arithmetic
 * bit for bit. quant.c includes it where isa.h says MVE is there
 * (TN_CRT_HAVE_ARM_MVE).
 *
 * Sixteen elements a pass, as four vectors of four int32 lanes: VLDRB.S32
 * loads four int8 and widens them in one instruction, and VSTRB.32 narrows
 * four lanes back as it stores, so no lane shuffling is needed and an
 * output may be written over either input (the code generator's in-place
 * ADD). The last 1 to 15 elements are groups of four under a tail
 * predicate (VCTP: lanes past the end neither load nor store).
 *
 * An operand's term, RoundingDivideByPOT(SRDHM((x + off) << left, m), e),
 * is VMLAS (x * 2^left + off * 2^left: the shift of the portable C, mod
 * 2^32), VQRDMULH (exactly SRDHM for m >= 0: floor((a m + 2^30) / 2^31))
 * and VRSHL by -e, which rounds ties up where TFLite rounds them away from
 * zero: for h < 0 it is given h - 1 (mve_rdbpot; this is the fix-up
 * requant_s8_mve.h's mve_rq4 makes, with the multiplier and shift in
 * scalar registers here, which leaves the vector registers to the four
 * lanes in flight). The output takes the same three steps, the offset and
 * the clamp.
 *
 * tn_crt_qadd_params scales the input of larger scale by exactly 1/2 (m =
 * 2^30, shift 0), and SRDHM(a, 2^30) of an even a is a / 2: that
 * operand's term is one VMLAS by 2^(left - 1) (a "half" term), given that
 * (x + off) << left cannot wrap for any int8 x. Equal scales make both
 * terms halves. A term that is not a half needs a right shift e >= 1 (a
 * VRSHL fix-up for e = 0 would be wrong), and so does the output; calls
 * with other parameters are left to the portable loop (mve_qadd returns
 * 0).
 */
#ifndef TVMNODE_CRT_ARM_MVE_ADD_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_ADD_S8_MVE_H_

#include <stdint.h>

#include "../isa.h"
#include "tvmnode/crt/kernels.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

#define MVE_ADD_INLINE static inline __attribute__((always_inline))

/* One operand as the loop takes it: its offset times 2^left (2^(left -
 * 1) for a half term), its multiplier and its shift (-e). */
typedef struct {
  int32_t off, m, sh;
} MveAddIn;

/* TFLite's RoundingDivideByPOT of h by 2^-sh, sh in [-31, -1]: VRSHL's
 * round half up of h - 1 where h < 0 (saturating: INT32_MIN stays). */
MVE_ADD_INLINE int32x4_t mve_rdbpot(int32x4_t h, int32_t sh) {
  return vrshlq_n_s32(vqaddq_s32(h, vshrq_n_s32(h, 31)), sh);
}

/* An operand's term for the four int8 in x (widened); pow: 2^left, or
 * 2^(left - 1) for a half term. */
MVE_ADD_INLINE int32x4_t mve_add_term(int32x4_t x, int32x4_t pow,
                                      const MveAddIn *a, int half) {
  const int32x4_t v = vmlasq_n_s32(x, pow, a->off);
  return half ? v : mve_rdbpot(vqrdmulhq_n_s32(v, a->m), a->sh);
}

/* Four outputs: the terms' sum (mod 2^32) requantized, offset and
 * clamped to [lo, hi]. */
MVE_ADD_INLINE int32x4_t mve_add4(int32x4_t x, int32x4_t y, int32x4_t pl,
                                  int32x4_t pr, const MveAddIn *l,
                                  const MveAddIn *r, int hl, int hr,
                                  const MveAddIn *o, int32x4_t lo,
                                  int32x4_t hi) {
  const int32x4_t s =
      vaddq_s32(mve_add_term(x, pl, l, hl), mve_add_term(y, pr, r, hr));
  const int32x4_t v =
      vaddq_n_s32(mve_rdbpot(vqrdmulhq_n_s32(s, o->m), o->sh), o->off);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

/* The run of n with the terms' kinds known (hl, hr: the lhs's, the
 * rhs's is a half term): sixteen a pass, then fours under VCTP. */
MVE_ADD_INLINE void mve_qadd_run(MveAddIn l, MveAddIn r, MveAddIn o,
                                 int32_t left, int hl, int hr, int32_t lo,
                                 int32_t hi, const int8_t *x,
                                 const int8_t *y, int32_t n, int8_t *out) {
  const int32x4_t pl = vdupq_n_s32((int32_t)(UINT32_C(1) << (left - hl)));
  const int32x4_t pr = vdupq_n_s32((int32_t)(UINT32_C(1) << (left - hr)));
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
#define MVE_ADD_STEP                                                      \
  vstrbq_s32(out, mve_add4(vldrbq_s32(x), vldrbq_s32(y), pl, pr, &l, &r, hl, \
                           hr, &o, vlo, vhi));                             \
  x += 4, y += 4, out += 4
  for (int32_t k = n >> 4; k > 0; k--) {
    MVE_ADD_STEP;
    MVE_ADD_STEP;
    MVE_ADD_STEP;
    MVE_ADD_STEP;
  }
#undef MVE_ADD_STEP
  for (int32_t rest = n & 15; rest > 0; rest -= 4, x += 4, y += 4, out += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)rest);
    vstrbq_p_s32(out,
                 mve_add4(vldrbq_z_s32(x, p), vldrbq_z_s32(y, p), pl, pr, &l,
                          &r, hl, hr, &o, vlo, vhi),
                 p);
  }
}

/* Whether an operand's term is a half (multiplier 2^30, shift 0, left >=
 * 1 and (x + off) << left within int32 for every int8 x), and its
 * MveAddIn; else whether it takes the full form (a right shift >= 1). */
static int mve_add_in(int32_t off, int32_t m, int32_t sh, int32_t left,
                      MveAddIn *a, int *half) {
  const int64_t lo = ((int64_t)off - 128) * ((int64_t)1 << left);
  const int64_t hi = ((int64_t)off + 127) * ((int64_t)1 << left);
  *half = m == (INT32_C(1) << 30) && sh == 0 && left >= 1 &&
          lo >= INT32_MIN && hi <= INT32_MAX;
  a->off = (int32_t)((uint32_t)off << (left - *half));
  a->m = m, a->sh = sh;
  return *half || sh <= -1;
}

/* Whether this form takes p (the output shifted right, each operand's
 * term a half or shifted right), with each operand's MveAddIn. */
static int mve_qadd_params(const TnCrtQBinary *p, MveAddIn *a, int *ha,
                           MveAddIn *b, int *hb) {
  return p->output_shift <= -1 &&
         mve_add_in(p->lhs_offset, p->lhs_multiplier, p->lhs_shift,
                    p->left_shift, a, ha) &&
         mve_add_in(p->rhs_offset, p->rhs_multiplier, p->rhs_shift,
                    p->left_shift, b, hb);
}

/* Whether mve_qadd takes p (quant.c prefers it to the table form). */
static inline int mve_qadd_takes(const TnCrtQBinary *p) {
  MveAddIn a, b;
  int ha, hb;
  return mve_qadd_params(p, &a, &ha, &b, &hb);
}

/* The ADD of the contiguous runs l and r into out (either may be out),
 * n elements, for parameters that pass quant.c's add_is_fast (multipliers
 * >= 0, shifts in [-31, 0], left shift in [0, 30]); returns n, or 0 when
 * the parameters are not this form's and the portable loop must run.
 * Out of line, so that its loops have the registers to themselves. */
static __attribute__((noinline)) int32_t mve_qadd(
    const TnCrtQBinary *p, int32_t lo, int32_t hi, const int8_t *l,
    const int8_t *r, int32_t n, int8_t *out) {
  const int32_t left = p->left_shift;
  MveAddIn a, b;
  const MveAddIn o = {p->output_offset, p->output_multiplier,
                      p->output_shift};
  int ha, hb;
  if (!mve_qadd_params(p, &a, &ha, &b, &hb)) return 0;
  /* the sum commutes: a half term (if one) on the right */
  if (ha && !hb) {
    const MveAddIn t = a;
    const int8_t *const u = l;
    a = b, b = t, l = r, r = u, ha = 0, hb = 1;
  }
  if (!hb)
    mve_qadd_run(a, b, o, left, 0, 0, lo, hi, l, r, n, out);
  else if (ha)
    mve_qadd_run(a, b, o, left, 1, 1, lo, hi, l, r, n, out);
  else
    mve_qadd_run(a, b, o, left, 0, 1, lo, hi, l, r, n, out);
  return n;
}

#undef MVE_ADD_INLINE

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_ADD_S8_MVE_H_ */
