/*
 * arm_mve/dw_s8_mve.h: the M-profile Vector Extension (the Cortex-M55)
 * form of the int8 depthwise convolutions that neither the DSP depthwise
 * 3x3 form nor its MVE form takes (conv_s8.c's conv_blocks otherwise):
 * channel multiplier 1, channels contiguous in the input, the output and
 * the weights, filter offset 0, any kernel, stride, dilation and padding
 * (the wake word's layers of 3 to 15 taps down a column). Sixteen
 * channels a pass, four in the int32 lanes of each of four sums: a tap
 * is, for each four, VLDRB.S32 of four input bytes (the input offset
 * added where it is not 0), VLDRB.S32 of the tap's four weights, VMUL and
 * VADD; the taps outside the input are skipped (their input is the zero
 * point, whose sum with the offset is 0), so the sums are the portable
 * ones mod 2^32, from the bias. The last channels run under VCTP
 * predicates. The outputs are requantized four in a vector (mve_rq4,
 * requant_s8_mve.h) where every multiplier is >= 0 with a right shift of
 * 1 to 31; else the layer stays with conv_blocks.
 *
 * In place (the output over the input, the ring given) only for a column
 * layer (one tap across, stride 1 across, no padding across or on top,
 * the same strides in and out): output pixel (oy, ox) overwrites input
 * pixel (oy, ox), which no later output pixel reads (they read rows oy'
 * * stride + ky * dilation > oy, or their own column), and within a pixel
 * a channel's output only its own channel's input.
 *
 * conv_s8.c includes this header where isa.h says MVE is there and calls
 * mve_dw in conv_run before conv_blocks.
 */
#ifndef TVMNODE_CRT_ARM_MVE_DW_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_DW_S8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

#include "requant_s8_mve.h"

/* Whether the form takes the layer (out of place, or in place with the
 * ring when `in_place`). */
static int mve_dw_ok(const Conv *c, const TnCrtQuant *q, int in_place) {
  const TnCrtConv2d *p = c->p;
  if (c->cpg != 1 || c->fpg != 1 || c->fo != 0 || p->in_strides[3] != 1 ||
      p->out_strides[3] != 1 || p->w_strides[3] != 1)
    return 0;
  if (in_place &&
      (p->k_w != 1 || p->stride_w != 1 || p->pad_left != 0 ||
       p->pad_top != 0 || p->in_w != p->out_w ||
       p->in_strides[0] != p->out_strides[0] ||
       p->in_strides[1] != p->out_strides[1] ||
       p->in_strides[2] != p->out_strides[2]))
    return 0;
  return mve_rq_ok(q, p->out_c);
}

/* Four int8 at x as int32 lanes: those of pr only, unless `full` (a
 * constant where inlined: a predicated load costs a VMSR and a VPST). */
BLOCK_INLINE int32x4_t mve_dw_ld4(const int8_t *x, mve_pred16_t pr,
                                  int full) {
  return full ? vldrbq_s32(x) : vldrbq_z_s32(x, pr);
}

/* The sums of sixteen channels (four lanes in each of a[0..3], those
 * of pr[g] on, or all of them when `full`) over the taps from x and w:
 * ny rows of nx taps, the rows ys and wy bytes apart, the taps xs and
 * wx; the input offset added when `offset` (constants where inlined). */
BLOCK_INLINE void mve_dw_taps(int32x4_t a[4], const int8_t *x,
                              const int8_t *w, int32_t ny, int32_t nx,
                              ptrdiff_t ys, ptrdiff_t xs, ptrdiff_t wy,
                              ptrdiff_t wx, const mve_pred16_t pr[4],
                              int32_t io, int offset, int full) {
  int32x4_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  if (nx == 1) /* a column of taps: one run of ny, for the inner loop */
    nx = ny, ny = 1, xs = ys, wx = wy;
  for (int32_t ky = 0; ky < ny; ky++, x += ys, w += wy) {
    const int8_t *xt = x, *wt = w;
    for (int32_t kx = 0; kx < nx; kx++, xt += xs, wt += wx) {
      int32x4_t x0 = mve_dw_ld4(xt, pr[0], full);
      int32x4_t x1 = mve_dw_ld4(xt + 4, pr[1], full);
      int32x4_t x2 = mve_dw_ld4(xt + 8, pr[2], full);
      int32x4_t x3 = mve_dw_ld4(xt + 12, pr[3], full);
      if (offset) {
        x0 = vaddq_n_s32(x0, io), x1 = vaddq_n_s32(x1, io);
        x2 = vaddq_n_s32(x2, io), x3 = vaddq_n_s32(x3, io);
      }
      a0 = vaddq_s32(a0, vmulq_s32(x0, mve_dw_ld4(wt, pr[0], full)));
      a1 = vaddq_s32(a1, vmulq_s32(x1, mve_dw_ld4(wt + 4, pr[1], full)));
      a2 = vaddq_s32(a2, vmulq_s32(x2, mve_dw_ld4(wt + 8, pr[2], full)));
      a3 = vaddq_s32(a3, vmulq_s32(x3, mve_dw_ld4(wt + 12, pr[3], full)));
    }
  }
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
}

/* Every output of the layer (mve_dw_ok held) into out: each pixel's
 * channels sixteen at a time (the last ones under predicates). The
 * layer's numbers are read into locals first: out may alias anything. */
static NOINLINE void mve_dw_run(const Conv *c, const TnCrtQuant *q,
                                int32_t lo, int32_t hi, const int32_t *bias,
                                int8_t *out) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is0 = p->in_strides[0], is1 = p->in_strides[1];
  const ptrdiff_t is2 = p->in_strides[2], os0 = p->out_strides[0];
  const ptrdiff_t os1 = p->out_strides[1], os2 = p->out_strides[2];
  const ptrdiff_t ys = (ptrdiff_t)p->dilation_h * is1;
  const ptrdiff_t xs = (ptrdiff_t)p->dilation_w * is2;
  const ptrdiff_t wy = p->w_strides[0], wx = p->w_strides[1];
  const int32_t nc = p->out_c, io = c->io, off = q->output_offset;
  const int32_t batch = p->batch, oh = p->out_h, ow = p->out_w;
  const int32_t sy = p->stride_h, sx = p->stride_w, pt = p->pad_top;
  const int32_t pl = p->pad_left, kh = p->k_h, kw = p->k_w;
  const int32_t dh = p->dilation_h, dw = p->dilation_w;
  const int32_t ih = p->in_h, iw = p->in_w;
  const int8_t *const in = c->in, *const w = c->w;
  const int32_t *const mult = q->per_channel ? q->multiplier : NULL;
  const int32_t *const shift = q->shift;
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  const int32x4_t m1 = vdupq_n_s32(q->multiplier[0]);
  const int32x4_t sh1 = vdupq_n_s32(q->shift[0]);
  for (int32_t n = 0; n < batch; n++)
    for (int32_t oy = 0; oy < oh; oy++) {
      const int32_t iy0 = oy * sy - pt;
      int32_t ky0, ky1;
      taps(iy0, kh, dh, ih, &ky0, &ky1);
      for (int32_t ox = 0; ox < ow; ox++) {
        const int32_t ix0 = ox * sx - pl;
        int32_t kx0, kx1;
        taps(ix0, kw, dw, iw, &kx0, &kx1);
        /* the first tap inside (the window's origin may be outside) */
        const ptrdiff_t xo = (ptrdiff_t)n * is0 +
                             (ptrdiff_t)(iy0 + ky0 * dh) * is1 +
                             (ptrdiff_t)(ix0 + kx0 * dw) * is2;
        const ptrdiff_t wo = (ptrdiff_t)ky0 * wy + (ptrdiff_t)kx0 * wx;
        int8_t *const o = out + (ptrdiff_t)n * os0 + (ptrdiff_t)oy * os1 +
                          (ptrdiff_t)ox * os2;
        for (int32_t c0 = 0; c0 < nc; c0 += 16) {
          mve_pred16_t pr[4];
          int32x4_t a[4];
          for (int g = 0; g < 4; g++) {
            const int32_t left = nc - c0 - 4 * g;
            pr[g] = vctp32q(left > 0 ? (uint32_t)left : 0u);
            a[g] = bias ? vldrwq_z_s32(bias + c0 + 4 * g, pr[g])
                        : vdupq_n_s32(0);
          }
          const int8_t *const x = in + xo + c0, *const wc = w + wo + c0;
          const int32_t ny = ky1 - ky0, nx = kx1 - kx0;
          if (nc - c0 < 16) /* the last channels, any offset */
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, io, 1, 0);
          else if (io)
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, io, 1, 1);
          else /* FoldInputOffset's layers */
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, 0, 0, 1);
          for (int g = 0; g < 4; g++) {
            const int32_t k = c0 + 4 * g;
            const int32x4_t m = mult ? vldrwq_z_s32(mult + k, pr[g]) : m1;
            const int32x4_t sh = mult ? vldrwq_z_s32(shift + k, pr[g]) : sh1;
            vstrbq_p_s32(o + k, mve_rq4(a[g], m, sh, off, vlo, vhi), pr[g]);
          }
        }
      }
    }
}

/* The layer in MVE where mve_dw_ok holds (ring: the in-place call's, or
 * NULL); 0 where the caller's forms take it. */
static int mve_dw(const Conv *c, const TnCrtQuant *q, int32_t lo, int32_t hi,
                  const int32_t *bias, int8_t *out, const int8_t *ring) {
  if (!mve_dw_ok(c, q, ring != NULL)) return 0;
  mve_dw_run(c, q, lo, hi, bias, out);
  return 1;
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_DW_S8_MVE_H_ */
