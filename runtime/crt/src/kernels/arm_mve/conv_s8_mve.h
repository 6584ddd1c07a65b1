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
 * portable kernel's; where the mode allows the vector, a pixel pair's
 * whole turns of four channels run in one assembly block (mve_run), and
 * 1x1 layers over 64 input channels with packed pixels take their pixel
 * pairs in order, each turn's 64 taps with no loop (mve_pw64).
 * conv_s8.c includes this header after arm_dsp/conv_s8_dsp.h (whose
 * helpers it uses) where isa.h says MVE is there (TN_CRT_HAVE_ARM_MVE),
 * and calls mve_pointwise in dsp_pointwise's place (conv_run, and
 * tn_crt_conv2d_s8 in place), with the same scratch.
 */
#ifndef TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

#include "requant_s8_mve.h"

/* n bytes from x to o (not overlapping), 16 a turn and the last under
 * VCTP: a window's rows are a few dozen bytes (IC's 3x3x16: 48), where a
 * call of memcpy costs more than the copy. */
BLOCK_INLINE void mve_copy(int8_t *o, const int8_t *x, size_t n) {
  for (; n >= 16; n -= 16, o += 16, x += 16) vstrbq_s8(o, vldrbq_s8(x));
  if (n > 0) {
    const mve_pred16_t m = vctp8q((uint32_t)n);
    vstrbq_p_s8(o, vldrbq_z_s8(x, m), m);
  }
}

/* n bytes of v from o, 16 a turn and the last under VCTP (mve_copy's
 * fill: a window's cut rows are a few bytes, where a call of memset costs
 * more than the stores). */
BLOCK_INLINE void mve_fill(int8_t *o, int8x16_t v, size_t n) {
  for (; n >= 16; n -= 16, o += 16) vstrbq_s8(o, v);
  if (n > 0) vstrbq_p_s8(o, v, vctp8q((uint32_t)n));
}

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
    int32_t ky0, ky1; /* the window's rows inside */
    taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
    if (len == 0) ky1 = ky0;
    const int8x16_t v = vdupq_n_s8(pad);
    const size_t tail = row - lead - len;
    int8_t *o = col;
    const int8_t *x = /* the first inside row's first tap inside */
        ky0 < ky1 ? xn + (ptrdiff_t)(iy0 + ky0 * p->dilation_h) * is[1] +
                        (ptrdiff_t)(ix0 + kx0) * nc
                  : NULL;
    int32_t ky = 0;
    for (; ky < ky0; ky++, o += ws[0]) mve_fill(o, v, row);
    for (; ky < ky1; ky++, o += ws[0], x += (ptrdiff_t)p->dilation_h * is[1]) {
      mve_fill(o, v, lead);
      mve_copy(o + lead, x, len);
      mve_fill(o + lead + len, v, tail);
    }
    for (; ky < p->k_h; ky++, o += ws[0]) mve_fill(o, v, row);
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

/* What a layer's windows that lie wholly inside the input need to be
 * gathered with no test per row (mve_window): where the window's rows are
 * runs of the input (OHWI over NHWC, undilated across: `merge`), the
 * pixel's first tap's row and column in [0, y_end) x [0, x_end), then
 * k_h runs of `row` bytes, `step` apart in the input and `pitch` apart
 * in the gathered window. */
typedef struct {
  int merge;
  int32_t y_end, x_end;
  size_t row;
  ptrdiff_t step, pitch;
} MveInside;

static void mve_inside_init(MveInside *in, const TnCrtConv2d *p) {
  const int32_t *ws = p->w_strides, *is = p->in_strides, nc = p->in_c;
  const int64_t y_end = (int64_t)p->in_h - (int64_t)(p->k_h - 1) * p->dilation_h;
  in->merge = ws[2] == 1 && ws[1] == nc && is[3] == 1 && is[2] == nc &&
              p->dilation_w == 1 && y_end > 0 && p->k_w <= p->in_w;
  in->y_end = in->merge ? (int32_t)y_end : 0;
  in->x_end = in->merge ? p->in_w - p->k_w + 1 : 0;
  in->row = (size_t)p->k_w * (size_t)nc;
  in->step = (ptrdiff_t)p->dilation_h * is[1];
  in->pitch = ws[0];
}

/* The window of the pixel at `it` as mve_im2col gives it; one wholly
 * inside the input (the usual one: IC's 3x3 layers) taken here, read in
 * place or gathered a row copy each, with none of mve_im2col's tests per
 * row. */
BLOCK_INLINE const int8_t *mve_window(int8_t *col, const Conv *c,
                                      const MveInside *in, const PwPixels *it,
                                      int direct) {
  const TnCrtConv2d *p = c->p;
  const int32_t iy0 = it->oy * p->stride_h - p->pad_top;
  const int32_t ix0 = it->ox * p->stride_w - p->pad_left;
  if ((uint32_t)iy0 >= (uint32_t)in->y_end ||
      (uint32_t)ix0 >= (uint32_t)in->x_end)
    return mve_im2col(col, c, it, direct);
  const int8_t *x = c->in + (ptrdiff_t)it->n * p->in_strides[0] +
                    (ptrdiff_t)iy0 * p->in_strides[1] +
                    (ptrdiff_t)ix0 * p->in_c;
  if (direct && p->k_h == 1) return x; /* the input itself */
  int8_t *o = col;
  for (int32_t ky = 0; ky < p->k_h; ky++, o += in->pitch, x += in->step)
    mve_copy(o, x, in->row);
  return col;
}

/* Four sums requantized in one vector (mve_rq4: TFLite's double rounding,
 * the output offset and the clamp to [lo, hi]), each lane by its
 * multiplier m >= 0 and shift sh in [-31, -1]. */
BLOCK_INLINE int32x4_t mve_requant4(int32x4_t acc, int32x4_t m, int32x4_t sh,
                                    int32_t off, int32_t lo, int32_t hi) {
  return mve_rq4(acc, m, sh, off, vdupq_n_s32(lo), vdupq_n_s32(hi));
}

/*
 * Lanes HI and LO of U (window X0) and of V (window X1) set to the sums
 * of their N taps (N >= 1) times the weight rows WH (lane HI) and WL
 * (lane LO), HI and LO being "2" and "0" or "3" and "1"; IO is "=w" where
 * these are the first lanes written, "+w" where the others are kept. One
 * tail-predicated low-overhead loop (WLSTP/LETP), in assembly so that its
 * four sums stay in the even registers VMLADAVA writes: a turn is four
 * loads and four VMLADAVA for 64 multiply-adds, the last turn's lanes
 * past N neither load nor add, and the sums go to their lanes by two
 * VMOVs (two general registers to two lanes) with no trip through memory.
 * "vmov Qd[2], Qd[0], Rt, Rt2" puts Rt in lane 0 and Rt2 in lane 2 (as
 * qemu executes it and as later GCC releases' vcreateq write it; GCC
 * 12's vcreateq has the other order, with which KWS's outputs differed
 * from the portable kernel's).
 */
#define MVE_LANES(U, V, IO, HI, LO, X0, X1, WH, WL, N)                        \
  do {                                                                      \
    const int8_t *x0_ = (X0), *x1_ = (X1), *wh_ = (WH), *wl_ = (WL);        \
    int32_t a_, b_, d_, e_;                                                 \
    __asm__ volatile("mov %[a], #0\n\t"                                     \
                     "mov %[b], #0\n\t"                                     \
                     "mov %[d], #0\n\t"                                     \
                     "mov %[e], #0\n\t"                                     \
                     "wlstp.8 lr, %[n], 1f\n"                               \
                     "2:\n\t"                                               \
                     "vldrb.8 q0, [%[x0]], #16\n\t"                         \
                     "vldrb.8 q2, [%[wl]], #16\n\t"                         \
                     "vldrb.8 q1, [%[x1]], #16\n\t"                         \
                     "vmladava.s8 %[a], q0, q2\n\t"                         \
                     "vldrb.8 q3, [%[wh]], #16\n\t"                         \
                     "vmladava.s8 %[d], q1, q2\n\t"                         \
                     "vmladava.s8 %[b], q0, q3\n\t"                         \
                     "vmladava.s8 %[e], q1, q3\n\t"                         \
                     "letp lr, 2b\n"                                        \
                     "1:\n\t"                                               \
                     "vmov %q[u][" HI "], %q[u][" LO "], %[a], %[b]\n\t"     \
                     "vmov %q[v][" HI "], %q[v][" LO "], %[d], %[e]"          \
                     : [a] "=&Te"(a_), [b] "=&Te"(b_), [d] "=&Te"(d_),       \
                       [e] "=&Te"(e_), [x0] "+r"(x0_), [x1] "+r"(x1_),       \
                       [wh] "+r"(wh_), [wl] "+r"(wl_), [u] IO(U), [v] IO(V)  \
                     : [n] "r"(N)                                           \
                     : "q0", "q1", "q2", "q3", "lr", "memory");             \
  } while (0)

/* Four channels' sums (rows w, w + w1, w + w2, w + w3, in lanes 0..3) of
 * the windows x0 (in *u) and x1 (in *v): channels 0 and 2 in one loop,
 * then 1 and 3. */
BLOCK_INLINE void mve_quad(int32x4_t *u, int32x4_t *v, const int8_t *x0,
                           const int8_t *x1, const int8_t *w, ptrdiff_t w1,
                           ptrdiff_t w2, ptrdiff_t w3, int32_t n) {
  int32x4_t s, t;
  MVE_LANES(s, t, "=w", "2", "0", x0, x1, w + w2, w, n);
  MVE_LANES(s, t, "+w", "3", "1", x0, x1, w + w3, w + w1, n);
  *u = s, *v = t;
}

/*
 * Four channels' outputs of the pixels o0, o1 from their sums u, v (lanes
 * past the layer's channels off in `on`): corr added mod 2^32, as the
 * portable sums wrap; where `any` is 0 (PW_FAST or PW_WIDE: every
 * multiplier m >= 0, every shift a right shift, mve_requant4's
 * conditions) both pixels requantized with one load of the four
 * multipliers and shifts and each stored by a narrowing VSTRB.32 to its
 * four consecutive bytes (out_strides[3] is 1: dsp_pw_ok), else (PW_ANY)
 * an output at a time by pw_requant_any. Where o1 is o0 (the last of an
 * odd count of pixels) both write the same bytes.
 */
BLOCK_INLINE void mve_turn(const TnCrtQuant *q, int32_t lo, int32_t hi,
                           const uint32_t *corr, int8_t *o0, int8_t *o1,
                           int32_t co, int32x4_t u, int32x4_t v,
                           mve_pred16_t on, int full, int any) {
  const int32_t *const k = (const int32_t *)(const void *)corr + co;
  const int32x4_t kc = full ? vldrwq_s32(k) : vldrwq_z_s32(k, on);
  const int32_t off = q->output_offset, pc = q->per_channel ? 1 : 0;
  const int32_t *const mp = q->multiplier + co * pc, *sp = q->shift + co * pc;
  u = vaddq_s32(u, kc), v = vaddq_s32(v, kc);
  if (any) {
    int32_t su[4], sv[4];
    vstrwq_s32(su, u), vstrwq_s32(sv, v);
    for (int32_t j = 0; j < 4 && (full || (on >> (4 * j) & 1)); j++) {
      const int32_t m = mp[j * pc], sh = sp[j * pc];
      o0[co + j] = pw_requant_any(su[j], m, sh, off, lo, hi);
      o1[co + j] = pw_requant_any(sv[j], m, sh, off, lo, hi);
    }
    return;
  }
  const int32x4_t m = !pc ? vdupq_n_s32(mp[0])
                    : full ? vldrwq_s32(mp) : vldrwq_z_s32(mp, on);
  const int32x4_t sh = !pc ? vdupq_n_s32(sp[0])
                     : full ? vldrwq_s32(sp) : vldrwq_z_s32(sp, on);
  u = mve_requant4(u, m, sh, off, lo, hi);
  v = mve_requant4(v, m, sh, off, lo, hi);
  if (full) {
    vstrbq_s32(o0 + co, u), vstrbq_s32(o1 + co, v);
  } else {
    vstrbq_p_s32(o0 + co, u, on), vstrbq_p_s32(o1 + co, v, on);
  }
}

/*
 * The whole turns of a pixel pair in one assembly block, the state in
 * fixed registers and in an MveRun the block reads and writes at fixed
 * offsets (r12 holds its address), so that no turn spends instructions
 * on gcc's moves and spills: a turn is two tail-predicated loops as in
 * MVE_LANES, whose sums start from the channels' corrections (loaded as
 * scalars, so no vector add), the weight rows reached by adding adj1 =
 * ws - the loop's advance between the loops and adj2 = 3 ws - it after
 * them, then the four outputs of each pixel requantized as mve_rq4 does
 * and stored by post-incremented narrowing stores; the loop ends when
 * the corrections reach kend. Fields the block reads: x0, x1 (the
 * windows), o0, o1 (advanced), m, sh (per-channel: the multipliers' and
 * shifts' next four, advanced; per tensor: the values), wl, wh (rows 0
 * and 2 of the first turn), k, kend, n, adj1, adj2, off, lo, hi.
 * Registers: r0 r2 r4 r6 the sums (even: VMLADAVA), r1 r3 the windows'
 * taps, r5 r8 the weight rows, r9 adj1, r10 n, r11 the corrections, lr
 * the loop; r7 is left to a frame pointer; q6 q7 hold lo and hi.
 */
typedef struct {
  const int8_t *x0, *x1;      /* 0, 4 */
  int8_t *o0, *o1;            /* 8, 12 */
  uintptr_t m, sh;            /* 16, 20: addresses, or per tensor values */
  const int8_t *wl, *wh;      /* 24, 28 */
  const uint32_t *k, *kend;   /* 32, 36 */
  int32_t n, adj1, adj2, off; /* 40, 44, 48, 52 */
  int32_t lo, hi;             /* 56, 60 */
} MveRun;
_Static_assert(offsetof(MveRun, x0) == 0 && offsetof(MveRun, o0) == 8 &&
                   offsetof(MveRun, m) == 16 && offsetof(MveRun, wl) == 24 &&
                   offsetof(MveRun, k) == 32 && offsetof(MveRun, n) == 40 &&
                   offsetof(MveRun, off) == 52 && offsetof(MveRun, lo) == 56,
               "MveRun's offsets are the assembly's");

/* One channel pair's loop of a turn (MVE_LANES's), lanes HI and LO. */
#define MVE_RUN_LOOP(L, HI, LO)                                             \
  "ldrd r1, r3, [r12]\n\t"                                                  \
  "wlstp.8 lr, r10, " L "f\n"                                               \
  "9:\n\t"                                                                  \
  "vldrb.8 q0, [r1], #16\n\t"                                               \
  "vldrb.8 q2, [r5], #16\n\t"                                               \
  "vldrb.8 q1, [r3], #16\n\t"                                               \
  "vmladava.s8 r0, q0, q2\n\t"                                              \
  "vldrb.8 q5, [r8], #16\n\t"                                               \
  "vmladava.s8 r4, q1, q2\n\t"                                              \
  "vmladava.s8 r2, q0, q5\n\t"                                              \
  "vmladava.s8 r6, q1, q5\n\t"                                              \
  "letp lr, 9b\n"                                                           \
  L ":\n\t"                                                                 \
  "vmov q3[" HI "], q3[" LO "], r0, r2\n\t"                                 \
  "vmov q4[" HI "], q4[" LO "], r4, r6\n\t"

/* The block, MUL and SHIFT the requantization's multiply and shift (per
 * channel or per tensor). */
#define MVE_RUN_ASM(R, MUL, SHIFT)                                          \
  __asm__ volatile(                                                         \
      "ldrd r0, r2, [r12, #56]\n\t"                                         \
      "vdup.32 q6, r0\n\t"                                                  \
      "vdup.32 q7, r2\n\t"                                                  \
      "ldrd r5, r8, [r12, #24]\n\t"                                         \
      "ldr r10, [r12, #40]\n\t"                                             \
      "ldr r11, [r12, #32]\n\t"                                             \
      "ldr r9, [r12, #44]\n"                                                \
      "1:\n\t"                                                              \
      "ldr r0, [r11]\n\t"                                                   \
      "ldr r2, [r11, #8]\n\t"                                               \
      "mov r4, r0\n\t"                                                      \
      "mov r6, r2\n\t" MVE_RUN_LOOP("2", "2", "0")                           \
      "add r5, r5, r9\n\t"                                                  \
      "add r8, r8, r9\n\t"                                                  \
      "ldr r0, [r11, #4]\n\t"                                               \
      "ldr r2, [r11, #12]\n\t"                                              \
      "mov r4, r0\n\t"                                                      \
      "mov r6, r2\n\t" MVE_RUN_LOOP("3", "3", "1")                           \
      "ldr r0, [r12, #48]\n\t"                                              \
      "add r5, r5, r0\n\t"                                                  \
      "add r8, r8, r0\n\t"                                                  \
      "add r11, r11, #16\n\t" MUL                                           \
      "vshr.s32 q2, q3, #31\n\t"                                            \
      "vqadd.s32 q3, q3, q2\n\t"                                            \
      "vshr.s32 q2, q4, #31\n\t"                                            \
      "vqadd.s32 q4, q4, q2\n\t" SHIFT                                      \
      "ldr r0, [r12, #52]\n\t"                                              \
      "vadd.i32 q3, q3, r0\n\t"                                             \
      "vadd.i32 q4, q4, r0\n\t"                                             \
      "vmax.s32 q3, q3, q6\n\t"                                             \
      "vmax.s32 q4, q4, q6\n\t"                                             \
      "vmin.s32 q3, q3, q7\n\t"                                             \
      "vmin.s32 q4, q4, q7\n\t"                                             \
      "ldrd r1, r3, [r12, #8]\n\t"                                          \
      "vstrb.32 q3, [r1], #4\n\t"                                           \
      "vstrb.32 q4, [r3], #4\n\t"                                           \
      "strd r1, r3, [r12, #8]\n\t"                                          \
      "ldr r0, [r12, #36]\n\t"                                              \
      "cmp r11, r0\n\t"                                                     \
      "bne 1b"                                                              \
      :                                                                     \
      : "r"(R)                                                              \
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r9", "r10", "r11", \
        "lr", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory",      \
        "cc")

/* Per channel: the next four multipliers and shifts, loaded and advanced. */
#define MVE_RUN_MUL_PC                                                      \
  "ldrd r1, r3, [r12, #16]\n\t"                                             \
  "vldrw.u32 q0, [r1], #16\n\t"                                             \
  "vldrw.u32 q1, [r3], #16\n\t"                                             \
  "strd r1, r3, [r12, #16]\n\t"                                             \
  "vqrdmulh.s32 q3, q3, q0\n\t"                                             \
  "vqrdmulh.s32 q4, q4, q0\n\t"
#define MVE_RUN_SHIFT_PC                                                    \
  "vrshl.s32 q3, q3, q1\n\t"                                                \
  "vrshl.s32 q4, q4, q1\n\t"
/* Per tensor: one multiplier and one shift, as scalars. */
#define MVE_RUN_MUL_PT                                                      \
  "ldrd r1, r3, [r12, #16]\n\t"                                             \
  "vqrdmulh.s32 q3, q3, r1\n\t"                                             \
  "vqrdmulh.s32 q4, q4, r1\n\t"
#define MVE_RUN_SHIFT_PT                                                    \
  "vrshl.s32 q3, r3\n\t"                                                    \
  "vrshl.s32 q4, r3\n\t"

/*
 * The pixels o0, o1's first `quads` * 4 channels (quads >= 1; windows
 * x0, x1; sums from corr) where mve_turn's `any` is 0 (its conditions:
 * every multiplier m >= 0, every shift in [-31, -1]), all in MVE_RUN_ASM.
 */
BLOCK_INLINE void mve_run(const Conv *c, const TnCrtQuant *q, int32_t lo,
                          int32_t hi, const uint32_t *corr, int8_t *o0,
                          int8_t *o1, const int8_t *x0, const int8_t *x1,
                          int32_t quads) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), adv = (n + 15) & ~15;
  const int32_t ws = p->w_strides[3];
  MveRun r = {.x0 = x0, .x1 = x1, .o0 = o0, .o1 = o1,
              .wl = c->w, .wh = c->w + 2 * (ptrdiff_t)ws,
              .k = corr, .kend = corr + 4 * quads, .n = n,
              .adj1 = ws - adv, .adj2 = 3 * ws - adv,
              .off = q->output_offset, .lo = lo, .hi = hi};
  register MveRun *rp __asm__("r12") = &r;
  if (q->per_channel) {
    r.m = (uintptr_t)q->multiplier, r.sh = (uintptr_t)q->shift;
    MVE_RUN_ASM(rp, MVE_RUN_MUL_PC, MVE_RUN_SHIFT_PC);
  } else {
    r.m = (uint32_t)q->multiplier[0], r.sh = (uint32_t)q->shift[0];
    MVE_RUN_ASM(rp, MVE_RUN_MUL_PT, MVE_RUN_SHIFT_PT);
  }
}

/* Every channel of the pixels o0, o1 (windows x0, x1), four a turn
 * (mve_run where `any` is 0, else mve_quad and mve_turn; `any`: the
 * layer's mode is PW_ANY, a constant where this is inlined); a last turn of 1-3 channels reads the last
 * channel's weights in the lanes past out_c, which it neither loads nor
 * stores (VCTP). */
BLOCK_INLINE void mve_turns(const Conv *c, const TnCrtQuant *q, int32_t lo,
                            int32_t hi, const uint32_t *corr, int8_t *o0,
                            int8_t *o1, const int8_t *x0, const int8_t *x1,
                            int any) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), nc = p->out_c;
  const ptrdiff_t ws = p->w_strides[3];
  const int8_t *w = c->w;
  int32_t co = 0;
  int32x4_t u, v;
  if (!any && nc >= 4) { /* the whole turns in assembly */
    co = nc & ~3, w += co * ws;
    mve_run(c, q, lo, hi, corr, o0, o1, x0, x1, nc / 4);
  }
  for (; co + 4 <= nc; co += 4, w += 4 * ws) {
    mve_quad(&u, &v, x0, x1, w, ws, 2 * ws, 3 * ws, n);
    mve_turn(q, lo, hi, corr, o0, o1, co, u, v, 0, 1, any);
  }
  if (co < nc) { /* 1-3 channels */
    const int32_t left = nc - co;
    const ptrdiff_t w1 = left > 1 ? ws : 0, w2 = left > 2 ? 2 * ws : w1;
    mve_quad(&u, &v, x0, x1, w, w1, w2, w2, n);
    mve_turn(q, lo, hi, corr, o0, o1, co, u, v, vctp32q((uint32_t)left), 0,
             any);
  }
}

/* mve_turns with `any` a constant in each copy. */
static NOINLINE void mve_channels(const Conv *c, const TnCrtQuant *q,
                                  int32_t lo, int32_t hi,
                                  const uint32_t *corr, int8_t *o0, int8_t *o1,
                                  const int8_t *x0, const int8_t *x1, int any) {
  if (any)
    mve_turns(c, q, lo, hi, corr, o0, o1, x0, x1, 1);
  else
    mve_turns(c, q, lo, hi, corr, o0, o1, x0, x1, 0);
}

/*
 * The 1x1 layers over 64 input channels whose pixels lie one after the
 * other (mve_pw64_ok: a pixel's window is the 64 bytes at p * 64 of the
 * input, its outputs at p * out_c), a pixel pair's whole turns in one
 * assembly block with no loop over the taps: the pair's 128 taps are
 * the 128 bytes at x (pixel 1's at x + 64), a turn's four weight rows
 * the 256 bytes at w, and each of the window's four runs of 16 taps is
 * two loads of taps, four of weights and eight VMLADAV(A) into eight
 * sums (r0 r2 r4 r6: pixel 0's channels 0-3, r8 r10 r12 lr: pixel 1's),
 * all at fixed offsets. The sums go to their lanes by VMOV, take the
 * corrections by one vector load and add, and are requantized and stored
 * as in MVE_RUN_ASM. r11 holds the MvePw64's address; r7 is left to a
 * frame pointer; q6 q7 hold lo and hi.
 */
typedef struct {
  const int8_t *x;            /* 0 */
  int8_t *o0, *o1;            /* 4, 8 */
  uintptr_t m, sh;            /* 12, 16: addresses, or per tensor values */
  const int8_t *w;            /* 20 */
  const uint32_t *k, *kend;   /* 24, 28 */
  int32_t off, lo, hi;        /* 32, 36, 40 */
} MvePw64;
_Static_assert(offsetof(MvePw64, o0) == 4 && offsetof(MvePw64, m) == 12 &&
                   offsetof(MvePw64, w) == 20 && offsetof(MvePw64, k) == 24 &&
                   offsetof(MvePw64, kend) == 28 &&
                   offsetof(MvePw64, off) == 32 && offsetof(MvePw64, lo) == 36,
               "MvePw64's offsets are the assembly's");

/* One run of 16 taps: X and W the offsets (bytes) of its taps and of its
 * weights in row 0 (rows 1 and 3 64 further, rows 2 and 3 from r9), OP
 * vmladav (the first run) or vmladava. */
#define MVE_PW64_RUN(OP, X, X1, W, W1)                                      \
  "vldrb.8 q0, [r1, #" X "]\n\t"                                            \
  "vldrb.8 q1, [r1, #" X1 "]\n\t"                                           \
  "vldrb.8 q2, [r5, #" W "]\n\t"                                            \
  "vldrb.8 q3, [r5, #" W1 "]\n\t"                                           \
  "vldrb.8 q4, [r9, #" W "]\n\t"                                            \
  "vldrb.8 q5, [r9, #" W1 "]\n\t"                                           \
  OP ".s8 r0, q0, q2\n\t"                                                   \
  OP ".s8 r2, q0, q3\n\t"                                                   \
  OP ".s8 r4, q0, q4\n\t"                                                   \
  OP ".s8 r6, q0, q5\n\t"                                                   \
  OP ".s8 r8, q1, q2\n\t"                                                   \
  OP ".s8 r10, q1, q3\n\t"                                                  \
  OP ".s8 r12, q1, q4\n\t"                                                  \
  OP ".s8 lr, q1, q5\n\t"

/* The block, MUL and SHIFT the requantization's multiply and shift (per
 * channel or per tensor; MVE_RUN_ASM's, the struct's m and sh at 12). */
#define MVE_PW64_ASM(R, MUL, SHIFT)                                         \
  __asm__ volatile(                                                         \
      "ldrd r0, r2, [r11, #36]\n\t"                                         \
      "vdup.32 q6, r0\n\t"                                                  \
      "vdup.32 q7, r2\n\t"                                                  \
      "ldr r1, [r11]\n\t"                                                   \
      "ldrd r5, r3, [r11, #20]\n\t"                                         \
      "add r9, r5, #128\n"                                                  \
      "1:\n\t"                                                              \
      MVE_PW64_RUN("vmladav", "0", "64", "0", "64")                         \
      MVE_PW64_RUN("vmladava", "16", "80", "16", "80")                      \
      MVE_PW64_RUN("vmladava", "32", "96", "32", "96")                      \
      MVE_PW64_RUN("vmladava", "48", "112", "48", "112")                    \
      "add r5, r5, #256\n\t"                                                \
      "add r9, r9, #256\n\t"                                                \
      "vmov q3[2], q3[0], r0, r4\n\t"                                       \
      "vmov q3[3], q3[1], r2, r6\n\t"                                       \
      "vmov q4[2], q4[0], r8, r12\n\t"                                      \
      "vmov q4[3], q4[1], r10, lr\n\t"                                      \
      "vldrw.u32 q0, [r3], #16\n\t"                                         \
      "vadd.i32 q3, q3, q0\n\t"                                             \
      "vadd.i32 q4, q4, q0\n\t" MUL                                         \
      "vshr.s32 q2, q3, #31\n\t"                                            \
      "vqadd.s32 q3, q3, q2\n\t"                                            \
      "vshr.s32 q2, q4, #31\n\t"                                            \
      "vqadd.s32 q4, q4, q2\n\t" SHIFT                                      \
      "ldr r0, [r11, #32]\n\t"                                              \
      "vadd.i32 q3, q3, r0\n\t"                                             \
      "vadd.i32 q4, q4, r0\n\t"                                             \
      "vmax.s32 q3, q3, q6\n\t"                                             \
      "vmax.s32 q4, q4, q6\n\t"                                             \
      "vmin.s32 q3, q3, q7\n\t"                                             \
      "vmin.s32 q4, q4, q7\n\t"                                             \
      "ldrd r0, r2, [r11, #4]\n\t"                                          \
      "vstrb.32 q3, [r0], #4\n\t"                                           \
      "vstrb.32 q4, [r2], #4\n\t"                                           \
      "strd r0, r2, [r11, #4]\n\t"                                          \
      "ldr r0, [r11, #28]\n\t"                                              \
      "cmp r3, r0\n\t"                                                      \
      "bne 1b"                                                              \
      :                                                                     \
      : "r"(R)                                                              \
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r9", "r10", "r12", \
        "lr", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory",      \
        "cc")

#define MVE_PW64_MUL_PC                                                     \
  "ldrd r0, r2, [r11, #12]\n\t"                                             \
  "vldrw.u32 q0, [r0], #16\n\t"                                             \
  "vldrw.u32 q1, [r2], #16\n\t"                                             \
  "strd r0, r2, [r11, #12]\n\t"                                             \
  "vqrdmulh.s32 q3, q3, q0\n\t"                                             \
  "vqrdmulh.s32 q4, q4, q0\n\t"
#define MVE_PW64_MUL_PT                                                     \
  "ldrd r0, r2, [r11, #12]\n\t"                                             \
  "vqrdmulh.s32 q3, q3, r0\n\t"                                             \
  "vqrdmulh.s32 q4, q4, r0\n\t"
#define MVE_PW64_SHIFT_PT                                                   \
  "vrshl.s32 q3, r2\n\t"                                                    \
  "vrshl.s32 q4, r2\n\t"

/* Whether mve_pw_run takes the layer's pixel pairs by mve_pw64: 1x1,
 * stride 1, no padding, 64 input channels (a window of 64 taps, the
 * weight rows 64 apart), out_c a multiple of 4, and the input's and
 * output's pixels packed one after the other (NHWC with no gaps). */
static int mve_pw64_ok(const TnCrtConv2d *p) {
  const int32_t *is = p->in_strides, *os = p->out_strides;
  const int32_t oc = p->out_c;
  return p->k_h == 1 && p->k_w == 1 && p->in_c == 64 && oc >= 4 &&
         (oc & 3) == 0 && p->w_strides[2] == 1 && p->w_strides[3] == 64 &&
         p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
         p->pad_left == 0 && p->out_h == p->in_h && p->out_w == p->in_w &&
         is[3] == 1 && is[2] == 64 && is[1] == 64 * p->in_w &&
         is[0] == is[1] * p->in_h && os[2] == oc &&
         os[1] == oc * p->out_w && os[0] == os[1] * p->out_h;
}

/* mve_pw64_ok's layer's pixels in pairs (0 where the layer is not one),
 * `any` 0 (the run's requantization conditions); the last of an odd
 * count twice, from two copies of its taps in cols, its outputs written
 * twice. In place (out == the input) a pair's 128 taps are copied to
 * cols first: its outputs end where the next pair's taps start. */
static NOINLINE int mve_pw64(const Conv *c, const TnCrtQuant *q, int32_t lo,
                             int32_t hi, const uint32_t *corr, int8_t *out,
                             int8_t *cols) {
  const TnCrtConv2d *p = c->p;
  if (!mve_pw64_ok(p)) return 0;
  const int32_t oc = p->out_c;
  const int direct = (const void *)c->in != (const void *)out;
  const int8_t *x = c->in;
  int8_t *o = out;
  MvePw64 r = {.w = c->w, .kend = corr + oc, .off = q->output_offset,
               .lo = lo, .hi = hi};
  register MvePw64 *rp __asm__("r11") = &r;
  for (int64_t left = (int64_t)p->batch * p->out_h * p->out_w; left > 0;
       left -= 2, x += 128, o += 2 * oc) {
    r.x = x, r.o0 = o, r.o1 = o + oc, r.k = corr;
    if (left == 1) { /* the last of an odd count: its taps twice */
      mve_copy(cols, x, 64), mve_copy(cols + 64, x, 64);
      r.x = cols, r.o1 = o;
    } else if (!direct) {
      mve_copy(cols, x, 128);
      r.x = cols;
    }
    if (q->per_channel) {
      r.m = (uintptr_t)q->multiplier, r.sh = (uintptr_t)q->shift;
      MVE_PW64_ASM(rp, MVE_PW64_MUL_PC, MVE_RUN_SHIFT_PC);
    } else {
      r.m = (uint32_t)q->multiplier[0], r.sh = (uint32_t)q->shift[0];
      MVE_PW64_ASM(rp, MVE_PW64_MUL_PT, MVE_PW64_SHIFT_PT);
    }
    if (left == 1) break;
  }
  return 1;
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
  if (p->in_c == 64 && p->k_w == 1 && kept >= 0 && kept != PW_ANY &&
      mve_pw64(c, q, lo, hi, corr, out, cols))
    return;
  MveInside in;
  mve_inside_init(&in, p);
  PwPixels it = {.p = p, .out = out};
  pw_row(&it);
  for (int64_t left = (int64_t)p->batch * p->out_h * p->out_w; left > 0;
       left -= 2) {
    int8_t *const o0 = it.o;
    const int8_t *const x0 = mve_window(cols, c, &in, &it, direct);
    int8_t *o1 = o0;
    const int8_t *x1 = x0;
    if (left > 1) {
      pw_next(&it);
      o1 = it.o, x1 = mve_window(cols + pitch, c, &in, &it, direct);
    }
    if (kept >= 0)
      mve_channels(c, q, lo, hi, corr, o0, o1, x0, x1, kept == PW_ANY);
    if (left > 2) pw_next(&it);
  }
}

/* pw_corr in MVE: corr[j] = bias[j] + io * (the sum of channel j's
 * weights), mod 2^32, the weights summed 16 a turn by VADDVA in a
 * tail-predicated loop (WLSTP/LETP: the last turn's lanes past n
 * neither load nor add), where pw_corr's SMLADs take four (IC: about 4 %
 * of its instructions). */
static void mve_corr(uint32_t *corr, const Conv *c, const int32_t *bias) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p);
  for (int32_t j = 0; j < p->out_c; j++) {
    const int8_t *const w = c->w + (ptrdiff_t)j * p->w_strides[3];
    const int8_t *wp = w;
    int32_t s = 0;
    /* a tail-predicated low-overhead loop: two instructions a turn */
    __asm__ volatile("wlstp.8 lr, %[n], 1f\n"
                     "2:\n\t"
                     "vldrb.8 q0, [%[w]], #16\n\t"
                     "vaddva.s8 %[s], q0\n\t"
                     "letp lr, 2b\n"
                     "1:"
                     : [s] "+Te"(s), [w] "+r"(wp)
                     : [n] "r"(n)
                     : "q0", "lr", "memory");
    corr[j] = (bias ? (uint32_t)bias[j] : 0) + (uint32_t)c->io * (uint32_t)s;
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
  if (!folded) mve_corr(corr, c, bias);
  mve_pw_run(c, q, lo, hi,
             folded ? (const uint32_t *)(const void *)bias : corr, out,
             (int8_t *)(corr + c->p->out_c), mode);
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_CONV_S8_MVE_H_ */
