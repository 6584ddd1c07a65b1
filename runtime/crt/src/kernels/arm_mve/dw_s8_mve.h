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

/* A layer's requantization as the walks below take it: the per-channel
 * multipliers and shifts (mult NULL: per tensor, m1 and sh1), the output
 * offset and the clamp (lh[0], lh[1]). */
typedef struct {
  const int32_t *mult, *shift;
  int32_t off;
  int32x4_t m1, sh1, lh[2];
} MveDwRq;

static void mve_dw_rq(MveDwRq *r, const TnCrtQuant *q, int32_t lo,
                      int32_t hi) {
  r->mult = q->per_channel ? q->multiplier : NULL, r->shift = q->shift;
  r->off = q->output_offset;
  r->m1 = vdupq_n_s32(q->multiplier[0]), r->sh1 = vdupq_n_s32(q->shift[0]);
  r->lh[0] = vdupq_n_s32(lo), r->lh[1] = vdupq_n_s32(hi);
}

/* The sums of channels c0 .. c0 + 15 (of nc) from the bias, and their
 * predicates (lanes past nc off). */
BLOCK_INLINE void mve_dw_start(int32x4_t a[4], mve_pred16_t pr[4],
                               const int32_t *bias, int32_t c0, int32_t nc) {
  for (int g = 0; g < 4; g++) {
    const int32_t left = nc - c0 - 4 * g;
    pr[g] = vctp32q(left > 0 ? (uint32_t)left : 0u);
    a[g] = bias ? vldrwq_z_s32(bias + c0 + 4 * g, pr[g]) : vdupq_n_s32(0);
  }
}

/* Those sums requantized (mve_rq4, r's numbers) and stored at o + c0:
 * the lanes of pr only, unless `full` (a constant where inlined). */
BLOCK_INLINE void mve_dw_put(int8_t *o, const int32x4_t a[4],
                             const mve_pred16_t pr[4], int32_t c0,
                             const MveDwRq *r, int full) {
  const int32_t *const mult = r->mult, *const shift = r->shift;
  const int32x4_t m1 = r->m1, sh1 = r->sh1;
  for (int g = 0; g < 4; g++) {
    const int32_t k = c0 + 4 * g;
    const int32x4_t m = !mult ? m1
                        : full ? vldrwq_s32(mult + k)
                               : vldrwq_z_s32(mult + k, pr[g]);
    const int32x4_t sh = !mult ? sh1
                         : full ? vldrwq_s32(shift + k)
                                : vldrwq_z_s32(shift + k, pr[g]);
    const int32x4_t v = mve_rq4(a[g], m, sh, r->off, r->lh[0], r->lh[1]);
    if (full)
      vstrbq_s32(o + k, v);
    else
      vstrbq_p_s32(o + k, v, pr[g]);
  }
}

/*
 * Sixteen whole channels of a pixel of a column layer (mve_dw_col_run),
 * in assembly: the sums start from the bias (b, NULL for none) and stay
 * in four vector registers (a0-a3, beside the clobbered q4-q7); a tap of
 * four channels is a widening load of the input, the input offset added
 * (io, 0 for FoldInputOffset's layers), a widening load of the weights,
 * VMUL and VADD (the same int32 sums mod 2^32 as mve_dw_taps), n taps
 * (n >= 0) in a low-overhead loop (WLS/LE), the input ys and the weights
 * wy bytes a tap. Then, with per-channel numbers (r->mult not NULL:
 * channels c0 .. c0 + 15's), each four are requantized in a second block
 * (mve_rq4's steps in its order) and stored by a narrowing VSTRB.32 at
 * o; else by mve_dw_put.
 */
BLOCK_INLINE void mve_dw_col16(const int8_t *x, const int8_t *w, int32_t n,
                               ptrdiff_t ys, ptrdiff_t wy, int32_t io,
                               const int32_t *b, const MveDwRq *r,
                               int32_t c0, int8_t *o) {
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
  if (b)
    a0 = vldrwq_s32(b), a1 = vldrwq_s32(b + 4), a2 = vldrwq_s32(b + 8),
    a3 = vldrwq_s32(b + 12);
#define MVE_DW_COL_TAP(A, X, W, OFF)                                        \
  "vldrb.s32 " X ", [%[x], #" OFF "]\n\t"                                   \
  "vldrb.s32 " W ", [%[w], #" OFF "]\n\t"                                   \
  "vadd.i32 " X ", " X ", %[io]\n\t"                                        \
  "vmul.i32 " X ", " X ", " W "\n\t"                                        \
  "vadd.i32 %q[" A "], %q[" A "], " X "\n\t"
  __asm__ volatile("wls lr, %[n], 1f\n"
                   "2:\n\t"
                   MVE_DW_COL_TAP("a0", "q4", "q5", "0")
                   MVE_DW_COL_TAP("a1", "q6", "q7", "4")
                   MVE_DW_COL_TAP("a2", "q4", "q5", "8")
                   MVE_DW_COL_TAP("a3", "q6", "q7", "12")
                   "add %[x], %[x], %[ys]\n\t"
                   "add %[w], %[w], %[wy]\n\t"
                   "le lr, 2b\n"
                   "1:"
                   : [a0] "+w"(a0), [a1] "+w"(a1), [a2] "+w"(a2),
                     [a3] "+w"(a3), [x] "+l"(x), [w] "+l"(w)
                   : [n] "r"(n), [ys] "r"(ys), [wy] "r"(wy), [io] "r"(io)
                   : "q4", "q5", "q6", "q7", "lr", "memory");
#undef MVE_DW_COL_TAP
  if (!r->mult) {
    const int32x4_t a[4] = {a0, a1, a2, a3};
    mve_dw_put(o - c0, a, NULL, c0, r, 1);
    return;
  }
  const int32_t *const m = r->mult + c0, *const sh = r->shift + c0;
  const int32x4_t *const lh = r->lh;
  const int32_t off = r->off;
#define MVE_DW_COL_RQ(A, OFF)                                               \
  "vldrw.32 q4, [%[m], #(4 * " OFF ")]\n\t"                                 \
  "vldrw.32 q5, [%[sh], #(4 * " OFF ")]\n\t"                                \
  "vqrdmulh.s32 %q[" A "], %q[" A "], q4\n\t"                               \
  "vshr.s32 q6, %q[" A "], #31\n\t"                                         \
  "vqadd.s32 %q[" A "], %q[" A "], q6\n\t"                                  \
  "vldrw.32 q6, [%[lh], #16]\n\t"                                          \
  "vrshl.s32 %q[" A "], %q[" A "], q5\n\t"                                  \
  "vadd.i32 %q[" A "], %q[" A "], %[off]\n\t"                               \
  "vmax.s32 %q[" A "], %q[" A "], q7\n\t"                                   \
  "vmin.s32 %q[" A "], %q[" A "], q6\n\t"                                   \
  "vstrb.32 %q[" A "], [%[o], #" OFF "]\n\t"
  /* q7 the clamp's low end; q6 the rounding's scratch, then its high
   * end */
  __asm__ volatile("vldrw.32 q7, [%[lh]]\n\t"
                   MVE_DW_COL_RQ("a0", "0") MVE_DW_COL_RQ("a1", "4")
                   MVE_DW_COL_RQ("a2", "8") MVE_DW_COL_RQ("a3", "12")
                   : [a0] "+w"(a0), [a1] "+w"(a1), [a2] "+w"(a2),
                     [a3] "+w"(a3)
                   : [m] "r"(m), [sh] "r"(sh), [lh] "r"(lh), [off] "r"(off),
                     [o] "l"(o)
                   : "q4", "q5", "q6", "q7", "memory");
#undef MVE_DW_COL_RQ
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
  const int32_t nc = p->out_c, io = c->io;
  const int32_t batch = p->batch, oh = p->out_h, ow = p->out_w;
  const int32_t sy = p->stride_h, sx = p->stride_w, pt = p->pad_top;
  const int32_t pl = p->pad_left, kh = p->k_h, kw = p->k_w;
  const int32_t dh = p->dilation_h, dw = p->dilation_w;
  const int32_t ih = p->in_h, iw = p->in_w;
  const int8_t *const in = c->in, *const w = c->w;
  MveDwRq rq;
  mve_dw_rq(&rq, q, lo, hi);
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
          mve_dw_start(a, pr, bias, c0, nc);
          const int8_t *const x = in + xo + c0, *const wc = w + wo + c0;
          const int32_t ny = ky1 - ky0, nx = kx1 - kx0;
          if (nc - c0 < 16) /* the last channels, any offset */
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, io, 1, 0);
          else if (io)
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, io, 1, 1);
          else /* FoldInputOffset's layers */
            mve_dw_taps(a, x, wc, ny, nx, ys, xs, wy, wx, pr, 0, 0, 1);
          mve_dw_put(o, a, pr, c0, &rq, 0);
        }
      }
    }
}

/* Whether every window of a layer (mve_dw_ok held) is a column inside
 * the input across (one tap across, no padding across, its last column
 * inside): the wake word's layers. */
static int mve_dw_col_ok(const TnCrtConv2d *p) {
  return p->k_w == 1 && p->pad_left == 0 &&
         (int64_t)(p->out_w - 1) * p->stride_w < p->in_w;
}

/* Such a layer (mve_dw_col_ok) into out, in mve_dw_run's order (so in
 * place too): a row's taps worked out once a row, and each pixel's whole
 * sixteens of channels by mve_dw_col16 from unpredicated loads of their
 * bias, requantized with unpredicated loads and stores, where the
 * general walk above spent about three times the taps' instructions on
 * its bookkeeping (the wake word's layers); the last channels as there. */
static NOINLINE void mve_dw_col_run(const Conv *c, const TnCrtQuant *q,
                                    int32_t lo, int32_t hi,
                                    const int32_t *bias, int8_t *out) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t ys = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const ptrdiff_t xs = (ptrdiff_t)p->stride_w * p->in_strides[2];
  const ptrdiff_t wy = p->w_strides[0], os2 = p->out_strides[2];
  const int32_t nc = p->out_c, io = c->io, whole = nc & ~15;
  const int32_t oh = p->out_h, ow = p->out_w, rows = p->batch * oh;
  MveDwRq rq;
  mve_dw_rq(&rq, q, lo, hi);
  /* the output rows of every batch in turn (row r: batch r / oh) */
  for (int32_t r = 0; r < rows; r++) {
    const int32_t n = r / oh, oy = r - n * oh;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    int32_t ky0, ky1;
    taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
    const int32_t ny = ky1 - ky0;
    const int8_t *x = c->in + (ptrdiff_t)n * p->in_strides[0] +
                      (ptrdiff_t)(iy0 + ky0 * p->dilation_h) * p->in_strides[1];
    const int8_t *const wr = c->w + (ptrdiff_t)ky0 * wy;
    int8_t *o = out + (ptrdiff_t)n * p->out_strides[0] +
                (ptrdiff_t)oy * p->out_strides[1];
    for (int32_t ox = 0; ox < ow; ox++, x += xs, o += os2) {
      for (int32_t c0 = 0; c0 < whole; c0 += 16)
        mve_dw_col16(x + c0, wr + c0, ny, ys, wy, io, bias ? bias + c0 : NULL,
                     &rq, c0, o + c0);
      if (whole == nc) continue;
      int32x4_t a[4];
      mve_pred16_t pr[4];
      mve_dw_start(a, pr, bias, whole, nc);
      mve_dw_taps(a, x + whole, wr + whole, ny, 1, ys, ys, wy, 0, pr, io, 1,
                  0);
      mve_dw_put(o, a, pr, whole, &rq, 0);
    }
  }
}

/* The layer in MVE where mve_dw_ok holds (ring: the in-place call's, or
 * NULL); 0 where the caller's forms take it. */
static int mve_dw(const Conv *c, const TnCrtQuant *q, int32_t lo, int32_t hi,
                  const int32_t *bias, int8_t *out, const int8_t *ring) {
  if (!mve_dw_ok(c, q, ring != NULL)) return 0;
  if (mve_dw_col_ok(c->p))
    mve_dw_col_run(c, q, lo, hi, bias, out);
  else
    mve_dw_run(c, q, lo, hi, bias, out);
  return 1;
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_DW_S8_MVE_H_ */
