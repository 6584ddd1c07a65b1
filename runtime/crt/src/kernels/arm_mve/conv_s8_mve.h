/*
 * arm_mve/conv_s8_mve.h: the M-profile Vector Extension (Helium, the
 * Cortex-M55) form of the int8 convolution's matrix product
 * (conv_s8.c's dsp_pointwise layers: one group, OHWI or OIHW weights,
 * filter offset 0, the window at most PW_MAX_WINDOW taps). A window's
 * taps are a run of int8, the input itself where a pixel's window is one
 * run of it (a 1x1 layer over NHWC data), else gathered into the call's
 * scratch with -input_offset in the padding (always in place, where the
 * outputs overwrite the input); VMLADAVA multiplies 16 int8 lanes of a
 * window by 16 of a channel's weights and adds the 16 products to a
 * 32-bit sum, two pixels by two channels a turn (four loads and four
 * VMLADAVA for 64 multiply-adds), and a window's last taps are one turn
 * under a tail predicate (VCTP), whose lanes past the window neither
 * load nor add. The sums wrap mod 2^32 like the portable ones; they
 * start from the DSP form's corrections (bias + input_offset * the
 * weights' sum); a turn's four outputs are requantized in one vector
 * (mve_store4, TFLite's arithmetic exactly) where the layer's mode allows,
 * else one at a time by the DSP form's pw_out, so the bytes are the
 * portable kernel's. conv_s8.c includes this header after
 * arm_dsp/conv_s8_dsp.h (whose helpers it uses) where isa.h says MVE is
 * there (TN_CRT_HAVE_ARM_MVE), and calls mve_pointwise in
 * dsp_pointwise's place (conv_run, and tn_crt_conv2d_s8 in place), with
 * the same scratch.
 */
#ifndef TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

/* The window of the pixel at `it` as a run of pw_window(p) int8 taps in
 * the weights' order: the input itself where it is one run there (OHWI
 * over NHWC, one row of the window, wholly inside) and `direct`, else
 * gathered into col (the taps outside the input -io, whose sum with io
 * is 0). With OHWI weights over NHWC data, undilated across, a row of
 * the window is a run of the input between runs of padding; else tap by
 * tap. */
static const int8_t *mve_im2col(int8_t *col, const Conv *c,
                                const PwPixels *it, int direct) {
  const TnCrtConv2d *p = c->p;
  const int32_t *ws = p->w_strides, *is = p->in_strides, nc = p->in_c;
  const int32_t iy0 = it->oy * p->stride_h - p->pad_top;
  const int32_t ix0 = it->ox * p->stride_w - p->pad_left;
  const int8_t pad = (int8_t)-c->io;
  const int8_t *xn = c->in + (ptrdiff_t)it->n * is[0];
  if (ws[2] == 1 && ws[1] == nc && is[3] == 1 && is[2] == nc &&
      p->dilation_w == 1) {
    int32_t kx0, kx1; /* the window's columns inside */
    taps(ix0, p->k_w, 1, p->in_w, &kx0, &kx1);
    const size_t row = (size_t)p->k_w * (size_t)nc;
    const size_t lead = (size_t)kx0 * (size_t)nc;
    const size_t len = kx1 > kx0 ? (size_t)(kx1 - kx0) * (size_t)nc : 0;
    if (direct && p->k_h == 1 && len == row && iy0 >= 0 && iy0 < p->in_h)
      return xn + (ptrdiff_t)iy0 * is[1] + (ptrdiff_t)ix0 * nc;
    for (int32_t ky = 0; ky < p->k_h; ky++) {
      int8_t *const o = col + (ptrdiff_t)ky * ws[0];
      const int64_t iy = (int64_t)iy0 + (int64_t)ky * p->dilation_h;
      if (iy < 0 || iy >= p->in_h || len == 0) {
        memset(o, pad, row);
        continue;
      }
      if (lead > 0) memset(o, pad, lead);
      memcpy(o + lead, xn + (ptrdiff_t)iy * is[1] + (ptrdiff_t)(ix0 + kx0) * nc,
             len);
      if (lead + len < row) memset(o + lead + len, pad, row - lead - len);
    }
    return col;
  }
  for (int32_t ky = 0; ky < p->k_h; ky++)
    for (int32_t kx = 0; kx < p->k_w; kx++) {
      const int64_t iy = (int64_t)iy0 + (int64_t)ky * p->dilation_h;
      const int64_t ix = (int64_t)ix0 + (int64_t)kx * p->dilation_w;
      const int inside = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
      const int8_t *x =
          inside ? xn + (ptrdiff_t)iy * is[1] + (ptrdiff_t)ix * is[2] : NULL;
      int8_t *const o = col + ky * ws[0] + kx * ws[1];
      for (int32_t ci = 0; ci < nc; ci++)
        o[ci * ws[2]] = inside ? x[(ptrdiff_t)ci * is[3]] : pad;
    }
  return col;
}

/* s[0..3] += the n taps of windows x0, x1 times the weight rows w0, w1:
 * (x0, w0), (x0, w1), (x1, w0), (x1, w1). */
BLOCK_INLINE void mve_sums(int32_t s[4], const int8_t *x0, const int8_t *x1,
                           const int8_t *w0, const int8_t *w1, int32_t n) {
  int32_t a = s[0], b = s[1], d = s[2], e = s[3];
  for (; n >= 16; n -= 16, x0 += 16, x1 += 16, w0 += 16, w1 += 16) {
    const int8x16_t u0 = vldrbq_s8(x0), u1 = vldrbq_s8(x1);
    const int8x16_t v0 = vldrbq_s8(w0), v1 = vldrbq_s8(w1);
    a = vmladavaq_s8(a, u0, v0);
    b = vmladavaq_s8(b, u0, v1);
    d = vmladavaq_s8(d, u1, v0);
    e = vmladavaq_s8(e, u1, v1);
  }
  if (n > 0) { /* the last taps: lanes past them neither load nor add */
    const mve_pred16_t m = vctp8q((uint32_t)n);
    const int8x16_t u0 = vldrbq_z_s8(x0, m), u1 = vldrbq_z_s8(x1, m);
    const int8x16_t v0 = vldrbq_z_s8(w0, m), v1 = vldrbq_z_s8(w1, m);
    a = vmladavaq_p_s8(a, u0, v0, m);
    b = vmladavaq_p_s8(b, u0, v1, m);
    d = vmladavaq_p_s8(d, u1, v0, m);
    e = vmladavaq_p_s8(e, u1, v1, m);
  }
  s[0] = a, s[1] = b, s[2] = d, s[3] = e;
}

/*
 * Four sums requantized in one vector, each lane by its multiplier m >= 0
 * and shift sh in [-31, -1] (a right shift by r = -sh): TFLite's
 * SaturatingRoundingDoublingHighMul is VQRDMULH, (acc * m + 2^30) >> 31
 * with the doubling inside the 64-bit product (what pw_out's PW_WIDE
 * computes; no bound on acc, and it saturates only for acc = m =
 * INT32_MIN), and its RoundingDivideByPOT, which rounds a negative half
 * away from zero, is VRSHL's round-half-up of h - 1 for a negative h (h +
 * (h >> 31), saturating: INT32_MIN stays); then the output offset and the
 * clamp to [lo, hi], as pw_out's SSAT and activation.
 */
BLOCK_INLINE int32x4_t mve_requant4(int32x4_t acc, int32x4_t m, int32x4_t sh,
                                    int32_t off, int32_t lo, int32_t hi) {
  const int32x4_t h = vqrdmulhq_s32(acc, m);
  int32x4_t v = vrshlq_s32(vqaddq_s32(h, vshrq_n_s32(h, 31)), sh);
  v = vaddq_n_s32(v, off);
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* The four sums s (pixel o0's channels co, co + 1, then pixel o1's: at
 * o0 + off[j]) requantized by mve_requant4, where the layer's mode is
 * PW_FAST or PW_WIDE (every multiplier m >= 0, every shift a right shift
 * r >= 1). The bytes are pw_store's. */
BLOCK_INLINE void mve_store4(int8_t *o0, uint32x4_t off, const int32_t s[4],
                             const TnCrtQuant *q, int32_t k0, int32_t k1,
                             int32_t lo, int32_t hi) {
  const int32_t mm[4] = {q->multiplier[k0], q->multiplier[k1],
                         q->multiplier[k0], q->multiplier[k1]};
  const int32_t sh[4] = {q->shift[k0], q->shift[k1], q->shift[k0],
                         q->shift[k1]};
  vstrbq_scatter_offset_s32(o0, off,
                            mve_requant4(vldrwq_s32(s), vldrwq_s32(mm),
                                         vldrwq_s32(sh), q->output_offset, lo,
                                         hi));
}

/* Every channel of the pixels o0, o1 (windows x0, x1), in pairs (the
 * last of an odd count with itself), requantized in `mode`, a constant
 * where it is inlined: a pair's four outputs by mve_store4 but in
 * PW_ANY and for the last of an odd count, there by pw_store. */
BLOCK_INLINE void mve_channels(const Conv *c, const TnCrtQuant *q, int32_t lo,
                               int32_t hi, const uint32_t *corr, int8_t *o0,
                               int8_t *o1, const int8_t *x0, const int8_t *x1,
                               int mode) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), nc = p->out_c, off = q->output_offset;
  const ptrdiff_t ws = p->w_strides[3];
  const int32_t qs = q->per_channel ? 1 : 0; /* the multipliers' stride */
  const int8_t *w = c->w;
  const uint32_t d = (uint32_t)(o1 - o0); /* mod 2^32, as addresses add */
  const uint32_t o4[4] = {0, 1, d, d + 1};
  const uint32x4_t base = vldrwq_u32(o4);
  for (int32_t co = 0; co < nc; co += 2, w += 2 * ws) {
    const int32_t c1 = co + 1 < nc ? co + 1 : co;
    int32_t s[4] = {(int32_t)corr[co], (int32_t)corr[c1], (int32_t)corr[co],
                    (int32_t)corr[c1]};
    mve_sums(s, x0, x1, w, w + (c1 - co) * ws, n);
    if (mode != PW_ANY && c1 == co + 1)
      mve_store4(o0, vaddq_n_u32(base, (uint32_t)co), s, q, co * qs,
                 c1 * qs, lo, hi);
    else
      pw_store(o0, o1, co, c1, s, q, qs, off, lo, hi, mode);
  }
}

/* The requantization mode mve_channels takes for a layer of pw_mode
 * `mode`: its own where TN_CRT_CONV_S8_FORMS keeps its loop, else the
 * any-mode one where that is kept (pw_taken), else -1 (none runs). */
static int mve_kept(int mode) {
  if (mode == PW_FAST && TN__CONV_FORM(TN_CRT_CONV_FORM_PW_FAST))
    return PW_FAST;
  if (mode == PW_WIDE && TN__CONV_FORM(TN_CRT_CONV_FORM_PW_WIDE))
    return PW_WIDE;
  return TN__CONV_FORM(TN_CRT_CONV_FORM_PW_ANY) ? PW_ANY : -1;
}

/* The layer into out, each channel's sums from corr: the pixels in pairs
 * (the last of an odd count with itself), the gathered windows in cols
 * (two runs of pw_cols(p) taps). In place (out == the input: a 1x1
 * layer, out_c <= in_c) both windows of a pair are gathered before its
 * outputs are written, which end no later than its inputs do, as in
 * dsp_pointwise; a window read where it lies would be overwritten by its
 * own first channels. */
static NOINLINE void mve_pw_run(const Conv *c, const TnCrtQuant *q,
                                int32_t lo, int32_t hi, const uint32_t *corr,
                                int8_t *out, int8_t *cols, int mode) {
  const TnCrtConv2d *p = c->p;
  const int32_t pitch = pw_cols(p);
  const int direct = (const void *)c->in != (const void *)out;
  const int kept = mve_kept(mode);
  PwPixels it = {.p = p, .out = out};
  pw_row(&it);
  for (int64_t left = (int64_t)p->batch * p->out_h * p->out_w; left > 0;
       left -= 2) {
    int8_t *const o0 = it.o;
    const int8_t *const x0 = mve_im2col(cols, c, &it, direct);
    int8_t *o1 = o0;
    const int8_t *x1 = x0;
    if (left > 1) {
      pw_next(&it);
      o1 = it.o, x1 = mve_im2col(cols + pitch, c, &it, direct);
    }
    switch (kept) { /* a constant mode for each copy of the loop */
    case PW_FAST:
      mve_channels(c, q, lo, hi, corr, o0, o1, x0, x1, PW_FAST);
      break;
    case PW_WIDE:
      mve_channels(c, q, lo, hi, corr, o0, o1, x0, x1, PW_WIDE);
      break;
    case PW_ANY:
      mve_channels(c, q, lo, hi, corr, o0, o1, x0, x1, PW_ANY);
      break;
    default:
      break;
    }
    if (left > 2) pw_next(&it);
  }
}

/* dsp_pointwise's layers (dsp_pw_ok, pw_taken; mode: pw_mode's) with the
 * same buffer (pw_scratch_bytes: the sums' starting values, then room
 * for 4 * pw_cols(p) int16 taps, of which the two windows take 2 *
 * pw_cols(p) bytes). With input offset 0 and a bias, the bias is the
 * sums' start (it holds the offset's share: FoldInputOffset). */
static void mve_pointwise(const Conv *c, const TnCrtQuant *q, int32_t lo,
                          int32_t hi, const int32_t *bias, int8_t *out,
                          void *buf, int mode) {
  uint32_t *const corr = buf; /* out_c <= PW_MAX_CHANNELS */
  const int folded = c->io == 0 && bias != NULL;
  (void)dsp_pointwise; /* the form this one stands in for: not linked */
  if (!folded) pw_corr(corr, c, bias);
  mve_pw_run(c, q, lo, hi,
             folded ? (const uint32_t *)(const void *)bias : corr, out,
             (int8_t *)(corr + c->p->out_c), mode);
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_ */
