/*
 * arm_mve/dense_s8_mve.h: the M-profile Vector Extension (Helium, the
 * Cortex-M55) form of the int8 dense layer (dense_s8.c) on the weights
 * PackDenseWeights lays out for "cortex-m" (tn_crt_dense_s8_pack4, N4K4:
 * blocks of four rows, each group of four inputs 16 bytes, row by row),
 * with input and filter offsets 0 (FoldInputOffset has moved the input
 * zero point into the bias).
 *
 * A block's row r holds its inputs k .. k + 3 in the word at 16 (k / 4) +
 * 4 r of the block, so sixteen inputs of a row are four words 16 bytes
 * apart: one gather load (VLDRW with a vector of four addresses, which it
 * steps by 64 bytes as it loads) brings them into one vector in input
 * order, and VMLADAVA multiplies its 16 int8 lanes by 16 inputs and adds
 * the 16 products to the row's 32-bit sum. The four rows share the input
 * vector: a turn is one input load, four gathers and four VMLADAVA for 64
 * multiply-adds. The last 4, 8 or 12 inputs of a row are one turn under
 * tail predicates (VCTP: the lanes past them neither load nor add), the
 * last 1 to 3 (the layout keeps them row by row) scalar, as the DSP form
 * does (p4_tail). The sums wrap mod 2^32 like the portable ones; the
 * bias is added to them as a vector.
 *
 * The block's four outputs are requantized in one vector (mve_rq4,
 * requant_s8_mve.h), TFLite's arithmetic exactly, where every multiplier
 * m >= 0 and every shift is a right shift by 1 to 31 (what the importers
 * give); else the DSP form (arm_dsp/dense_s8_dsp.h) takes the layer. dense_s8.c includes
 * this header after that one where isa.h says MVE is there
 * (TN_CRT_HAVE_ARM_MVE) and runs mve_dense_p4 on each input row before
 * its blocks loop, which then has only the last 1 to 3 rows left.
 */
#ifndef TVMNODE_CRT_ARM_MVE_DENSE_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_DENSE_S8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "../dense_s8.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

#include "requant_s8_mve.h"

/* Whether the MVE form takes the call: the N4K4 layout, offsets 0, at
 * least one block of four rows, the fixed-point requantization with
 * every multiplier >= 0 and every shift in [-31, -1]. */
static int mve_dense_ok(const Dense *d, const TnCrtQuant *q) {
  return d->packed == TN_CRT_DENSE_N4K4 && d->io == 0 && d->fo == 0 &&
         q != NULL && d->p->out_features >= 4 &&
         mve_rq_ok(q, d->p->out_features);
}

/* The four words at the addresses *a + 64 as 16 int8 lanes, *a stepped
 * by 64 (VLDRW's gather with writeback). In assembly because gcc 12
 * expands the intrinsic into two gathers, one for the value and one for
 * the new addresses. */
BLOCK_INLINE int8x16_t mve_gather_wb(uint32x4_t *a) {
  int32x4_t v;
  __asm__("vldrw.u32 %q[v], [%q[a], #64]!"
          : [v] "=&w"(v), [a] "+w"(*a)
          :
          : "memory");
  return vreinterpretq_s8_s32(v);
}

/* The sums of the kk inputs at x with the four rows of the N4K4 block
 * at w (kk * 4 bytes), as a vector; a: w + offs - 64, offs the words'
 * offsets {0, 16, 32, 48} (the gather adds its 64 before it loads). */
BLOCK_INLINE int32x4_t mve_p4_block(const int8_t *x, const int8_t *w,
                                    int32_t kk, uint32x4_t a) {
  uint32x4_t a0 = a, a1 = vaddq_n_u32(a, 4), a2 = vaddq_n_u32(a, 8);
  uint32x4_t a3 = vaddq_n_u32(a, 12);
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int8_t *xk = x;
  for (int32_t n = kk >> 4; n > 0; n--, xk += 16) {
    const int8x16_t xv = vldrbq_s8(xk);
    s0 = vmladavaq_s8(s0, xv, mve_gather_wb(&a0));
    s1 = vmladavaq_s8(s1, xv, mve_gather_wb(&a1));
    s2 = vmladavaq_s8(s2, xv, mve_gather_wb(&a2));
    s3 = vmladavaq_s8(s3, xv, mve_gather_wb(&a3));
  }
  const int32_t groups = (kk & 15) >> 2; /* whole groups of four left */
  if (groups) {
    const mve_pred16_t pw = vctp32q((uint32_t)groups);
    const int8x16_t xv = vldrbq_z_s8(xk, vctp8q((uint32_t)(4 * groups)));
    s0 = vmladavaq_s8(s0, xv, vreinterpretq_s8_s32(
                                  vldrwq_gather_base_wb_z_s32(&a0, 64, pw)));
    s1 = vmladavaq_s8(s1, xv, vreinterpretq_s8_s32(
                                  vldrwq_gather_base_wb_z_s32(&a1, 64, pw)));
    s2 = vmladavaq_s8(s2, xv, vreinterpretq_s8_s32(
                                  vldrwq_gather_base_wb_z_s32(&a2, 64, pw)));
    s3 = vmladavaq_s8(s3, xv, vreinterpretq_s8_s32(
                                  vldrwq_gather_base_wb_z_s32(&a3, 64, pw)));
  }
  if (kk & 3) { /* the last group, each row's kk & 3 inputs in a row */
    uint32_t s[4] = {(uint32_t)s0, (uint32_t)s1, (uint32_t)s2, (uint32_t)s3};
    p4_tail(kk & 3, x + (kk & ~3), w + (ptrdiff_t)(kk & ~3) * 4, s);
    s0 = (int32_t)s[0], s1 = (int32_t)s[1], s2 = (int32_t)s[2];
    s3 = (int32_t)s[3];
  }
  int32x4_t v = vdupq_n_s32(s0);
  v = vsetq_lane_s32(s1, v, 1);
  v = vsetq_lane_s32(s2, v, 2);
  return vsetq_lane_s32(s3, v, 3);
}

/* The whole blocks of four rows of the input row x (mve_dense_ok held):
 * out[n] for n < (out_features & ~3), requantized and clamped to [lo,
 * hi]; returns how many outputs it wrote. The bias is added to a block's
 * sums as a vector (mod 2^32, as the portable sums wrap). */
OUT_OF_LINE int32_t mve_dense_p4(const Dense *d, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, const int8_t *x,
                                 const int32_t *bias, int8_t *out) {
  const int32_t kk = d->p->in_features, nn = d->p->out_features & ~3;
  const int pc = q->per_channel != 0;
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  int32x4_t m = vdupq_n_s32(q->multiplier[0]), sh = vdupq_n_s32(q->shift[0]);
  const uint32x4_t offs = vshlq_n_u32(vidupq_n_u32(0, 4), 2);
  const int8_t *w = d->w;
  for (int32_t n = 0; n < nn; n += 4, w += 4 * kk) {
    int32x4_t acc = mve_p4_block(
        x, w, kk, vaddq_n_u32(offs, (uint32_t)(uintptr_t)w - 64u));
    if (bias != NULL) acc = vaddq_s32(acc, vldrwq_s32(bias + n));
    if (pc) m = vldrwq_s32(q->multiplier + n), sh = vldrwq_s32(q->shift + n);
    vstrbq_s32(out + n, mve_rq4(acc, m, sh, q->output_offset, vlo, vhi));
  }
  return nn;
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_DENSE_S8_MVE_H_ */
