/*
 * arm_mve/dw3x3_s8_mve.h: the M-profile Vector Extension (Helium, the
 * Cortex-M55) form of the int8 depthwise 3x3 convolution, for the layers
 * of the DSP form (arm_dsp/dw3x3_s8_dsp.h: dsp_dw3_ok, out of place and
 * in place through its ring) whose every channel's requantization is a
 * right shift (multiplier >= 0, shift in [-31, -1]) and whose output
 * offset is an int8's; the others stay with the DSP form.
 *
 * The channels go four at a time, one vector of int32 lanes, outermost,
 * as in the DSP form (so the in-place ring, its slots and its scratch are
 * the DSP form's, dw3_ring): a group's nine taps' weights are widened
 * into vectors once, with the sums' starting value for a window that
 * lies inside the input, bias + input_offset * the nine weights' sum
 * (mod 2^32, as the portable sums wrap), so that such a window's tap is
 * a widening load of four input bytes (VLDRB.S32), a load of the tap's
 * weights, a VMUL and a VADD (MVE's VMLA takes a scalar): 36 instructions
 * for 36 multiply-adds where the DSP form takes 81, and at stride_w 1 two
 * neighbouring windows go a pass, sharing each weight vector and three of
 * their four input columns. A window whose rows lie inside but one of
 * whose columns does not (the edges of a SAME layer) starts from that
 * sum less input_offset * that column's weights and takes its six taps
 * so; any other window cut by the padding starts from the bias and adds
 * the input offset to its taps inside (those outside contribute nothing,
 * as in TFLite). The four sums are requantized in one vector by conv_s8_mve.h's
 * mve_requant4 (TFLite's arithmetic exactly) and stored by a narrowing
 * VSTRB.32. A tail of 1 to 3 channels takes the same loops under a tail
 * predicate (VCTP), whose lanes past it neither load nor store.
 */
#ifndef TVMNODE_CRT_ARM_MVE_DW3X3_S8_MVE_H_
#define TVMNODE_CRT_ARM_MVE_DW3X3_S8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"

#if TN_CRT_HAVE_ARM_MVE
#include <arm_mve.h>

/* A group of up to four channels, a lane each. */
typedef struct {
  int32x4_t w[9];  /* tap t = 3 ky + kx */
  int32x4_t corr;  /* a whole window's start: bias + io * sum of w */
  int32x4_t cut[2]; /* that of one without column 0, without column 2 */
  /* that of one without row 0 (edge[0]) or row 2 (edge[1]), with all
   * three columns, without column 0, without column 2 (the top and
   * bottom rows of a SAME layer) */
  int32x4_t edge[2][3];
  int32x4_t bias;  /* a cut window's start */
  int32x4_t m, sh; /* multipliers, shifts (-r) */
  mve_pred16_t lanes;
} MveDw3;

/* Whether the layer (dsp_dw3_ok holds) takes the MVE form: every
 * channel's requantization a multiplier >= 0 and a right shift by 1 to
 * 31 (mve_requant4's conditions), the output offset an int8's. */
static int mve_dw3_ok(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (q->output_offset < -128 || q->output_offset > 127) return 0;
  const int32_t n = q->per_channel ? p->out_c : 1;
  for (int32_t k = 0; k < n; k++)
    if (q->multiplier[k] < 0 || q->shift[k] > -1 || q->shift[k] < -31)
      return 0;
  return 1;
}

/* Four int8 at x as int32 lanes, those past the group's not loaded where
 * it is a tail (full: a constant where inlined). */
BLOCK_INLINE int32x4_t mve_ld4(const int8_t *x, mve_pred16_t lanes,
                               int full) {
  return full ? vldrbq_s32(x) : vldrbq_z_s32(x, lanes);
}

/* (not inlined: its temporaries' spills would sit in mve_dw3's frame
 * under every row's) */
static NOINLINE void mve_dw3_group(MveDw3 *g, const Conv *c,
                                   const TnCrtQuant *q, const int32_t *bias,
                                   int32_t c0, int32_t len) {
  const TnCrtConv2d *p = c->p;
  g->lanes = vctp32q((uint32_t)len);
  int32x4_t sum = vdupq_n_s32(0);
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1];
  const int8_t *wr = c->w + c0;
  /* unrolled: a tap's weights one load from a row's pointer (a loop
   * over t with t / 3 and t % 3 took 17 instructions a tap, paid per
   * group: a tenth of a 3x3 layer of 256 channels) */
#pragma GCC unroll 3
  for (int32_t ky = 0; ky < 3; ky++, wr += ws0)
#pragma GCC unroll 3
    for (int32_t kx = 0; kx < 3; kx++) {
      g->w[3 * ky + kx] = mve_ld4(wr + kx * ws1, g->lanes, 0);
      sum = vaddq_s32(sum, g->w[3 * ky + kx]);
    }
  g->bias = bias ? vldrwq_z_s32(bias + c0, g->lanes) : vdupq_n_s32(0);
  g->corr = vmlaq_n_s32(g->bias, sum, c->io);
  int32x4_t col[2]; /* columns 0 and 2's weights, summed */
  for (int32_t j = 0; j < 2; j++) { /* less io * the column's weights */
    col[j] = vaddq_s32(vaddq_s32(g->w[2 * j], g->w[2 * j + 3]),
                       g->w[2 * j + 6]);
    g->cut[j] = vmlaq_n_s32(g->corr, col[j], -c->io);
  }
  for (int32_t j = 0; j < 2; j++) { /* less io * row 0's or row 2's */
    const int32x4_t row = vaddq_s32(vaddq_s32(g->w[6 * j], g->w[6 * j + 1]),
                                    g->w[6 * j + 2]);
    g->edge[j][0] = vmlaq_n_s32(g->corr, row, -c->io);
    for (int32_t k = 0; k < 2; k++) /* and a column's, the corner once */
      g->edge[j][k + 1] = vmlaq_n_s32(
          g->corr, vsubq_s32(vaddq_s32(row, col[k]), g->w[6 * j + 2 * k]),
          -c->io);
  }
  if (q->per_channel) {
    g->m = vldrwq_z_s32(q->multiplier + c0, g->lanes);
    g->sh = vldrwq_z_s32(q->shift + c0, g->lanes);
  } else {
    g->m = vdupq_n_s32(q->multiplier[0]);
    g->sh = vdupq_n_s32(q->shift[0]);
  }
}

/* s + x * w, lane by lane (MVE multiplies and adds two vectors in two
 * instructions: its VMLA takes a scalar); in one statement, so that gcc
 * keeps a window's sum one chain with one temporary, where from the
 * intrinsics it gathers the products first and spills them. */
BLOCK_INLINE int32x4_t mve_mla(int32x4_t s, int32x4_t x, int32x4_t w) {
  int32x4_t t;
  __asm__("vmul.i32 %q[t], %q[x], %q[w]\n\t"
          "vadd.i32 %q[s], %q[s], %q[t]"
          : [s] "+w"(s), [t] "=&w"(t)
          : [x] "w"(x), [w] "w"(w));
  return s;
}

/* g, opaque to gcc: a pixel's loads of the group's vectors then address
 * them from one register, where gcc would otherwise keep each vector's
 * address in a register of its own across the pixel loop, and spill
 * them. */
BLOCK_INLINE const MveDw3 *mve_pin(const MveDw3 *g) {
  __asm__ volatile("" : "+r"(g));
  return g;
}

/* The sums of a window inside the input, x at its tap (0, 0). */
BLOCK_INLINE int32x4_t mve_dw3_whole(const MveDw3 *g, const int8_t *x,
                                     ptrdiff_t is1, ptrdiff_t is2, int full) {
  g = mve_pin(g);
  int32x4_t s = g->corr;
#pragma GCC unroll 3
  for (int32_t ky = 0; ky < 3; ky++, x += is1) {
    s = mve_mla(s, mve_ld4(x, g->lanes, full), g->w[3 * ky]);
    s = mve_mla(s, mve_ld4(x + is2, g->lanes, full), g->w[3 * ky + 1]);
    s = mve_mla(s, mve_ld4(x + 2 * is2, g->lanes, full), g->w[3 * ky + 2]);
  }
  return s;
}

/* The sums s and r of two whole windows side by side (stride_w 1), x at
 * the first's tap (0, 0): each weight vector loaded once for both. */
BLOCK_INLINE void mve_dw3_whole2(const MveDw3 *g, const int8_t *x,
                                 ptrdiff_t is1, ptrdiff_t is2, int full,
                                 int32x4_t *s, int32x4_t *r) {
  int32x4_t a = g->corr, b = g->corr;
#pragma GCC unroll 3
  for (int32_t ky = 0; ky < 3; ky++, x += is1) {
    /* a row at a time: gcc would load all 21 vectors first and spill */
    __asm__ volatile("" : "+w"(a), "+w"(b) : : "memory");
    g = mve_pin(g);
    int32x4_t u = mve_ld4(x, g->lanes, full);
#pragma GCC unroll 3
    for (int32_t kx = 0; kx < 3; kx++) {
      const int32x4_t v = mve_ld4(x + (kx + 1) * is2, g->lanes, full);
      const int32x4_t w = g->w[3 * ky + kx];
      a = mve_mla(a, u, w);
      b = mve_mla(b, v, w);
      u = v;
    }
  }
  *s = a, *r = b;
}

/* The sums of a window whose rows lie inside the input and whose
 * columns 1 and 2 (kx0 1) or 0 and 1 (kx0 0) do, x at tap (0, kx0). */
BLOCK_INLINE int32x4_t mve_dw3_cols2(const MveDw3 *g, const int8_t *x,
                                     ptrdiff_t is1, ptrdiff_t is2,
                                     int32_t kx0, int full) {
  g = mve_pin(g);
  int32x4_t s = g->cut[kx0 == 1 ? 0 : 1];
#pragma GCC unroll 3
  for (int32_t ky = 0; ky < 3; ky++, x += is1) {
    s = mve_mla(s, mve_ld4(x, g->lanes, full), g->w[3 * ky + kx0]);
    s = mve_mla(s, mve_ld4(x + is2, g->lanes, full), g->w[3 * ky + kx0 + 1]);
  }
  return s;
}

/*
 * The same windows of a whole group (four channels, no tail) in assembly
 * with its vector registers named: gcc spilled the intrinsic forms'
 * weight vectors and sums to the stack across a row (about 380
 * instructions for a row's four pixels of KWS, where the taps take about
 * 150). Weights and starting sums are read from g (MveDw3's layout,
 * asserted below) by immediate offsets; q4-q7 hold the taps, the weights
 * and the products; each input column is a pointer stepped a row at a
 * time. MVE_DW3_TAP(S, X, T) adds input column X times weight tap T to
 * the sum S.
 */
_Static_assert(offsetof(MveDw3, w) == 0 && offsetof(MveDw3, corr) == 144 &&
                   offsetof(MveDw3, cut) == 160 &&
                   offsetof(MveDw3, edge) == 192,
               "MveDw3's layout as the assembly reads it");
#define MVE_DW3_W(T) "vldrw.32 q6, [%[g], #(16 * (" #T "))]\n\t"
#define MVE_DW3_MLA(S, X)                                                   \
  "vmul.i32 q7, " X ", q6\n\t"                                             \
  "vadd.i32 %q[" S "], %q[" S "], q7\n\t"
#define MVE_DW3_STEP(C) "add %[" C "], %[" C "], %[is1]\n\t"

/* Two whole windows side by side (stride_w 1), x at the first's tap
 * (0, 0), into *s and *r. A row: four input columns, three weights, six
 * multiply-adds. */
BLOCK_INLINE void mve_dw3_pair_asm(const MveDw3 *g, const int8_t *x,
                                   ptrdiff_t is1, ptrdiff_t is2,
                                   int32x4_t *s, int32x4_t *r) {
  const int8_t *c0 = x, *c1 = x + is2, *c2 = x + 2 * is2, *c3 = x + 3 * is2;
  int32x4_t a, b;
#define MVE_DW3_ROW2(K)                                                     \
  "vldrb.s32 q4, [%[c0]]\n\t"                                               \
  "vldrb.s32 q5, [%[c1]]\n\t" MVE_DW3_W(3 * K)                              \
  MVE_DW3_MLA("a", "q4") MVE_DW3_MLA("b", "q5")                             \
  "vldrb.s32 q4, [%[c2]]\n\t" MVE_DW3_W(3 * K + 1)                          \
  MVE_DW3_MLA("a", "q5") MVE_DW3_MLA("b", "q4")                             \
  "vldrb.s32 q5, [%[c3]]\n\t" MVE_DW3_W(3 * K + 2)                          \
  MVE_DW3_MLA("a", "q4") MVE_DW3_MLA("b", "q5")
  __asm__("vldrw.32 %q[a], [%[g], #144]\n\t"
          "vmov %q[b], %q[a]\n\t"
          MVE_DW3_ROW2(0)
          MVE_DW3_STEP("c0") MVE_DW3_STEP("c1") MVE_DW3_STEP("c2")
          MVE_DW3_STEP("c3")
          MVE_DW3_ROW2(1)
          MVE_DW3_STEP("c0") MVE_DW3_STEP("c1") MVE_DW3_STEP("c2")
          MVE_DW3_STEP("c3")
          MVE_DW3_ROW2(2)
          : [a] "=&w"(a), [b] "=&w"(b), [c0] "+l"(c0), [c1] "+l"(c1),
            [c2] "+l"(c2), [c3] "+l"(c3)
          : [g] "r"(g), [is1] "r"(is1)
          : "q4", "q5", "q6", "q7", "memory");
  *s = a, *r = b;
}

/* Two windows side by side (stride_w 1) of which rows KA and KB lie
 * inside and all three columns, START edge[0][0] (192, row 0 cut) or
 * edge[1][0] (240, row 2 cut), x at the first's tap (KA, 0). */
#define MVE_DW3_TWO2(START, KA, KB)                                         \
  do {                                                                      \
    const int8_t *c0 = x, *c1 = x + is2, *c2 = x + 2 * is2;                 \
    const int8_t *c3 = x + 3 * is2;                                         \
    __asm__("vldrw.32 %q[a], [%[g], #" START "]\n\t"                         \
            "vmov %q[b], %q[a]\n\t"                                         \
            MVE_DW3_ROW2(KA) MVE_DW3_STEP("c0") MVE_DW3_STEP("c1")          \
            MVE_DW3_STEP("c2") MVE_DW3_STEP("c3") MVE_DW3_ROW2(KB)          \
            : [a] "=&w"(a), [b] "=&w"(b), [c0] "+l"(c0), [c1] "+l"(c1),     \
              [c2] "+l"(c2), [c3] "+l"(c3)                                  \
            : [g] "r"(g), [is1] "r"(is1)                                    \
            : "q4", "q5", "q6", "q7", "memory");                            \
  } while (0)

BLOCK_INLINE void mve_dw3_edge_pair_asm(const MveDw3 *g, const int8_t *x,
                                        ptrdiff_t is1, ptrdiff_t is2,
                                        int32_t ky0, int32x4_t *s,
                                        int32x4_t *r) {
  int32x4_t a, b;
  if (ky0 == 1)
    MVE_DW3_TWO2("192", 1, 2);
  else
    MVE_DW3_TWO2("240", 0, 1);
  *s = a, *r = b;
}
#undef MVE_DW3_TWO2
#undef MVE_DW3_ROW2

/* One window whose rows lie inside, columns K0 .. K0 + 2 (whole: START
 * 144, the sum corr) or K0 .. K0 + 1 (one column cut: START the cut's
 * start), x at its tap (0, K0). */
#define MVE_DW3_ROW1_3(K, K0)                                               \
  "vldrb.s32 q4, [%[c0]]\n\t" MVE_DW3_W(3 * K + K0) MVE_DW3_MLA("a", "q4")   \
  "vldrb.s32 q5, [%[c1]]\n\t" MVE_DW3_W(3 * K + K0 + 1)                     \
  MVE_DW3_MLA("a", "q5")                                                    \
  "vldrb.s32 q4, [%[c2]]\n\t" MVE_DW3_W(3 * K + K0 + 2) MVE_DW3_MLA("a", "q4")
#define MVE_DW3_ROW1_2(K, K0)                                               \
  "vldrb.s32 q4, [%[c0]]\n\t" MVE_DW3_W(3 * K + K0) MVE_DW3_MLA("a", "q4")   \
  "vldrb.s32 q5, [%[c1]]\n\t" MVE_DW3_W(3 * K + K0 + 1)                     \
  MVE_DW3_MLA("a", "q5")
#define MVE_DW3_ONE(ROW, START, K0, OUT)                                    \
  do {                                                                      \
    const int8_t *c0 = x, *c1 = x + is2, *c2 = x + 2 * is2;                 \
    __asm__("vldrw.32 %q[a], [%[g], #" START "]\n\t"                         \
            ROW(0, K0) MVE_DW3_STEP("c0") MVE_DW3_STEP("c1")                \
            MVE_DW3_STEP("c2") ROW(1, K0) MVE_DW3_STEP("c0")                \
            MVE_DW3_STEP("c1") MVE_DW3_STEP("c2") ROW(2, K0)                \
            : [a] "=&w"(OUT), [c0] "+l"(c0), [c1] "+l"(c1), [c2] "+l"(c2)   \
            : [g] "r"(g), [is1] "r"(is1)       \
            : "q4", "q5", "q6", "q7", "memory");                            \
  } while (0)

BLOCK_INLINE int32x4_t mve_dw3_whole_asm(const MveDw3 *g, const int8_t *x,
                                         ptrdiff_t is1, ptrdiff_t is2) {
  int32x4_t a;
  MVE_DW3_ONE(MVE_DW3_ROW1_3, "144", 0, a);
  return a;
}

/* kx0 1: columns 1 and 2 (the start cut[0], 160); kx0 0: columns 0 and 1
 * (cut[1], 176). */
BLOCK_INLINE int32x4_t mve_dw3_cols2_asm(const MveDw3 *g, const int8_t *x,
                                         ptrdiff_t is1, ptrdiff_t is2,
                                         int32_t kx0) {
  int32x4_t a;
  if (kx0 == 1)
    MVE_DW3_ONE(MVE_DW3_ROW1_2, "160", 1, a);
  else
    MVE_DW3_ONE(MVE_DW3_ROW1_2, "176", 0, a);
  return a;
}

/* One window of which two rows, KA and KB, lie inside (the top or the
 * bottom row of a SAME layer), START the start of those taps (edge[0]
 * from 192 or edge[1] from 240: all three columns, without column 0,
 * without column 2), x at its tap (KA, K0). */
#define MVE_DW3_TWO(ROW, START, KA, KB, K0, OUT)                            \
  do {                                                                      \
    const int8_t *c0 = x, *c1 = x + is2, *c2 = x + 2 * is2;                 \
    __asm__("vldrw.32 %q[a], [%[g], #" START "]\n\t"                         \
            ROW(KA, K0) MVE_DW3_STEP("c0") MVE_DW3_STEP("c1")               \
            MVE_DW3_STEP("c2") ROW(KB, K0)                                  \
            : [a] "=&w"(OUT), [c0] "+l"(c0), [c1] "+l"(c1), [c2] "+l"(c2)   \
            : [g] "r"(g), [is1] "r"(is1)                                    \
            : "q4", "q5", "q6", "q7", "memory");                            \
  } while (0)

/* The sums of a window whose rows ky0 .. ky0 + 1 lie inside and whose
 * columns kx0 .. kx1 - 1 (all three, or two: one cut) do, x at its tap
 * (ky0, kx0). */
BLOCK_INLINE int32x4_t mve_dw3_edge_asm(const MveDw3 *g, const int8_t *x,
                                        ptrdiff_t is1, ptrdiff_t is2,
                                        int32_t ky0, int32_t kx0,
                                        int32_t kx1) {
  int32x4_t a;
  /* S3, S1, S2: the starts with all three columns, without column 0,
   * without column 2; KA, KB the rows inside */
#define MVE_DW3_EDGE(S3, S1, S2, KA, KB)                                    \
  do {                                                                      \
    if (kx1 - kx0 == 3)                                                     \
      MVE_DW3_TWO(MVE_DW3_ROW1_3, S3, KA, KB, 0, a);                        \
    else if (kx0 == 1)                                                      \
      MVE_DW3_TWO(MVE_DW3_ROW1_2, S1, KA, KB, 1, a);                        \
    else                                                                    \
      MVE_DW3_TWO(MVE_DW3_ROW1_2, S2, KA, KB, 0, a);                        \
  } while (0)
  if (ky0 == 1) /* row 0 cut */
    MVE_DW3_EDGE("192", "208", "224", 1, 2);
  else /* row 2 cut */
    MVE_DW3_EDGE("240", "256", "272", 0, 1);
#undef MVE_DW3_EDGE
  return a;
}

/* The sums of a window whose taps [ky0, ky1) x [kx0, kx1) lie inside
 * the input, x at tap (ky0, kx0). */
BLOCK_INLINE int32x4_t mve_dw3_part(const MveDw3 *g, const int8_t *x,
                                    ptrdiff_t is1, ptrdiff_t is2, int32_t io,
                                    int32_t ky0, int32_t ky1, int32_t kx0,
                                    int32_t kx1, int full) {
  int32x4_t s = g->bias;
  for (int32_t ky = ky0; ky < ky1; ky++, x += is1)
    for (int32_t kx = kx0; kx < kx1; kx++)
      s = mve_mla(s,
                    vaddq_n_s32(mve_ld4(x + (kx - kx0) * is2, g->lanes, full),
                                io),
                    g->w[3 * ky + kx]);
  return s;
}

BLOCK_INLINE void mve_dw3_store(int8_t *o, int32x4_t s, const MveDw3 *g,
                                int32_t off, int32_t lo, int32_t hi,
                                int full) {
  g = mve_pin(g);
  const int32x4_t v = mve_requant4(s, g->m, g->sh, off, lo, hi);
  if (full)
    vstrbq_s32(o, v);
  else
    vstrbq_p_s32(o, v, g->lanes);
}

/* Whether a layer's rows of whole-row windows take mve_dw3_row_same: a
 * SAME layer at stride_w 1 (pad_left 1, as wide as its input, at least
 * two columns), whose row is then a window without column 0, pairs of
 * whole windows, perhaps one more, and one without column 2. */
static int mve_dw3_same_ok(const TnCrtConv2d *p) {
  return p->stride_w == 1 && p->pad_left == 1 && p->in_w == p->out_w &&
         p->out_w >= 2;
}

/* Such a row of a group of four, x at the row's first input column and
 * o at its first output pixel (pixels ps2 apart): each window's form
 * known from its place, with none of the walk's tests per pixel. */
BLOCK_INLINE void mve_dw3_row_same(const MveDw3 *g, const int8_t *x,
                                   int8_t *o, ptrdiff_t is1, ptrdiff_t is2,
                                   ptrdiff_t ps2, int32_t w, int32_t off,
                                   int32_t lo, int32_t hi) {
  mve_dw3_store(o, mve_dw3_cols2_asm(g, x, is1, is2, 1), g, off, lo, hi, 1);
  o += ps2;
  int32_t ox = 1;
  for (; ox + 2 < w; ox += 2, o += 2 * ps2, x += 2 * is2) {
    int32x4_t s, r;
    mve_dw3_pair_asm(g, x, is1, is2, &s, &r);
    mve_dw3_store(o, s, g, off, lo, hi, 1);
    mve_dw3_store(o + ps2, r, g, off, lo, hi, 1);
  }
  if (ox + 1 < w) {
    mve_dw3_store(o, mve_dw3_whole_asm(g, x, is1, is2), g, off, lo, hi, 1);
    o += ps2, x += is2;
  }
  mve_dw3_store(o, mve_dw3_cols2_asm(g, x, is1, is2, 0), g, off, lo, hi, 1);
}

/* A ring slot's row of a group of four channels (w pixels four bytes
 * apart) to its place in out (pixels os2 apart): a word a pixel, by LDR
 * and STR (which, unlike MVE's word loads, take any alignment), in a
 * low-overhead loop. */
BLOCK_INLINE void mve_dw3_flush4(const int8_t *src, int32_t w, int8_t *out,
                                 ptrdiff_t os2) {
  uint32_t t;
  __asm__ volatile("wls lr, %[w], 1f\n"
                   "2:\n\t"
                   "ldr %[t], [%[s]], #4\n\t"
                   "str %[t], [%[o]]\n\t"
                   "add %[o], %[o], %[os2]\n\t"
                   "le lr, 2b\n"
                   "1:"
                   : [t] "=&r"(t), [s] "+r"(src), [o] "+r"(out)
                   : [w] "r"(w), [os2] "r"(os2)
                   : "lr", "memory");
}

/* In place, a group of four after output row oy (dw3_ring's work, inline
 * where its call cost KWS about 70 instructions a row): the next ring
 * slot, and out the row whose input has had its last reader; with oy =
 * out_h, the rows still in the ring. */
BLOCK_INLINE void mve_dw3_ring4(const TnCrtConv2d *p, const int8_t *ring,
                                ptrdiff_t slot_size, int8_t *out_n,
                                int32_t rows, int32_t oy, int32_t *slot) {
  const int32_t w = p->out_w, top = p->pad_top;
  const ptrdiff_t os1 = p->out_strides[1], os2 = p->out_strides[2];
  if (oy == p->out_h) {
    for (int32_t r = oy > top ? oy - top : 0; r < oy; r++)
      mve_dw3_flush4(ring + (r % rows) * slot_size, w, out_n + r * os1, os2);
    return;
  }
  *slot = *slot + 1 == rows ? 0 : *slot + 1;
  if (oy >= top)
    mve_dw3_flush4(ring + *slot * slot_size, w,
                   out_n + (ptrdiff_t)(oy - top) * os1, os2);
}

/* The group's rows of output for batch n (dw3_rows' order): into out or,
 * in place, through the DSP form's ring (a group of four's flushed by
 * mve_dw3_ring4). */
BLOCK_INLINE void mve_dw3_rows_body(const Conv *c, const MveDw3 *g,
                                    int32_t c0, int32_t len, int32_t n,
                                    int32_t off, int32_t lo, int32_t hi,
                                    int8_t *out, int8_t *ring, int full) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];
  const ptrdiff_t step = (ptrdiff_t)p->stride_w * is2;
  const int32_t rows = ring ? ring_rows(p) : 1;
  const int same = mve_dw3_same_ok(p);
  Dw3Walk wk;
  dw3_walk(&wk, c, c0, len, n, out, ring);
  for (int32_t oy = 0, slot = 0; oy < p->out_h; oy++) {
    int32_t iy0, ky0, ky1;
    int8_t *o = dw3_row_at(p, ring, wk.slot_size, slot, wk.out_n, oy, &iy0,
                           &ky0, &ky1);
    const int8_t *const xr = wk.xn + (ptrdiff_t)(iy0 + ky0) * is1;
    const int whole_rows = ky0 == 0 && ky1 == 3;
    /* a SAME layer's row: each window's form known from its place */
    const int known = full && whole_rows && same;
    if (known)
      mve_dw3_row_same(g, xr, o, is1, is2, wk.ps2, p->out_w, off, lo, hi);
    for (int32_t ox = known ? p->out_w : 0; ox < p->out_w; ox++, o += wk.ps2) {
      const int32_t ix0 = ox * p->stride_w - p->pad_left;
      if (whole_rows && ox >= wk.fx0 && ox < wk.fx1) { /* whole windows */
        const int8_t *x = xr + (ptrdiff_t)ix0 * is2;
        if (p->stride_w == 1)
          for (; ox + 1 < wk.fx1; ox += 2, o += 2 * wk.ps2, x += 2 * is2) {
            int32x4_t s, r;
            if (full)
              mve_dw3_pair_asm(g, x, is1, is2, &s, &r);
            else
              mve_dw3_whole2(g, x, is1, is2, full, &s, &r);
            mve_dw3_store(o, s, g, off, lo, hi, full);
            mve_dw3_store(o + wk.ps2, r, g, off, lo, hi, full);
          }
        for (; ox < wk.fx1; ox++, o += wk.ps2, x += step)
          mve_dw3_store(o,
                        full ? mve_dw3_whole_asm(g, x, is1, is2)
                             : mve_dw3_whole(g, x, is1, is2, full),
                        g, off, lo, hi, full);
        ox--, o -= wk.ps2;
        continue;
      }
      if (full && ky1 - ky0 == 2 && p->stride_w == 1 && ox >= wk.fx0 &&
          ox + 1 < wk.fx1) { /* two windows, one row cut */
        int32x4_t s, r;
        mve_dw3_edge_pair_asm(g, xr + (ptrdiff_t)ix0 * is2, is1, is2, ky0,
                              &s, &r);
        mve_dw3_store(o, s, g, off, lo, hi, full);
        mve_dw3_store(o + wk.ps2, r, g, off, lo, hi, full);
        ox++, o += wk.ps2;
        continue;
      }
      int32_t kx0, kx1;
      taps(ix0, 3, 1, p->in_w, &kx0, &kx1);
      const int8_t *const x = xr + (ptrdiff_t)(ix0 + kx0) * is2;
      if (whole_rows && kx1 - kx0 == 2) { /* one column cut */
        mve_dw3_store(o,
                      full ? mve_dw3_cols2_asm(g, x, is1, is2, kx0)
                      : kx0 == 1 ? mve_dw3_cols2(g, x, is1, is2, 1, full)
                                 : mve_dw3_cols2(g, x, is1, is2, 0, full),
                      g, off, lo, hi, full);
        continue;
      }
      if (full && ky1 - ky0 == 2 && kx1 - kx0 >= 2) { /* one row cut */
        mve_dw3_store(o, mve_dw3_edge_asm(g, x, is1, is2, ky0, kx0, kx1), g,
                      off, lo, hi, full);
        continue;
      }
      mve_dw3_store(o,
                    mve_dw3_part(g, x, is1, is2, c->io, ky0, ky1, kx0, kx1,
                                 full),
                    g, off, lo, hi, full);
    }
    if (ring && full)
      mve_dw3_ring4(p, ring, wk.slot_size, wk.out_n, rows, oy, &slot);
    else if (ring)
      dw3_ring(p, ring, wk.slot_size, len, wk.out_n, oy, &slot);
  }
  if (ring && full)
    mve_dw3_ring4(p, ring, wk.slot_size, wk.out_n, rows, p->out_h, NULL);
  else if (ring)
    dw3_ring(p, ring, wk.slot_size, len, wk.out_n, p->out_h, NULL);
}

static NOINLINE void mve_dw3_rows4(const Conv *c, const MveDw3 *g,
                                   int32_t c0, int32_t n, int32_t off,
                                   int32_t lo, int32_t hi, int8_t *out,
                                   int8_t *ring) {
  mve_dw3_rows_body(c, g, c0, 4, n, off, lo, hi, out, ring, 1);
}

static NOINLINE void mve_dw3_rows_tail(const Conv *c, const MveDw3 *g,
                                       int32_t c0, int32_t len, int32_t n,
                                       int32_t off, int32_t lo, int32_t hi,
                                       int8_t *out, int8_t *ring) {
  mve_dw3_rows_body(c, g, c0, len, n, off, lo, hi, out, ring, 0);
}

/* The layer (dsp_dw3_ok holds) into out, as dsp_dw3 (ring: in place, the
 * caller's scratch, else NULL), where mve_dw3_ok holds; else 0 and
 * nothing done. */
static NOINLINE int mve_dw3(const Conv *c, const TnCrtQuant *q, int32_t lo,
                            int32_t hi, const int32_t *bias, int8_t *out,
                            int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  if (!mve_dw3_ok(p, q)) return 0;
  MveDw3 g;
  for (int32_t c0 = 0, len; c0 < p->out_c; c0 += len) {
    len = p->out_c - c0 < 4 ? p->out_c - c0 : 4;
    mve_dw3_group(&g, c, q, bias, c0, len);
    for (int32_t n = 0; n < p->batch; n++)
      if (len == 4)
        mve_dw3_rows4(c, &g, c0, n, q->output_offset, lo, hi, out, ring);
      else
        mve_dw3_rows_tail(c, &g, c0, len, n, q->output_offset, lo, hi, out,
                          ring);
  }
  return 1;
}

#endif /* TN_CRT_HAVE_ARM_MVE */

#endif /* TVMNODE_CRT_ARM_MVE_DW3X3_S8_MVE_H_ */
