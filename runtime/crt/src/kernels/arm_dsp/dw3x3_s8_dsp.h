/*
 * arm_dsp/dw3x3_s8_dsp.h: the Cortex-M DSP form of the int8 depthwise 3x3
 * convolution with channel multiplier 1 (conv_s8.c's DW mode: NHWC input,
 * TFLite's [1, 3, 3, C] weights, filter offset 0, input offset in
 * [-127, 128]), undilated, stride 1 or 2 each way, any padding, the output
 * channels contiguous. conv_s8.c's conv_run calls dsp_dw3 wherever
 * dsp_dw3_ok holds, out of place and in place (ROWS).
 *
 * The channels go four at a time, outermost, so that a group's weights
 * and requantization constants are set up once: its nine taps' weight
 * words are unpacked by SXTB16 into int16 pairs (channels 0 and 2, then 1
 * and 3), and the group's pixels then stream past them; the group (pairs,
 * bias, and the multipliers and shifts or dw3_q's constants, which share
 * their bytes) is 136 B of locals, the only stack the form takes besides
 * its registers. At each pixel a tap costs
 * one load of the four input bytes, two SXTAB16 (which add the input
 * offset on the way), two loads of the tap's weight pairs and four
 * SMLABB/SMLATT, each a channel's multiply-add: 9 instructions for 4
 * multiply-adds, the nine taps unrolled for a pixel whose window lies
 * inside the input. A border pixel takes the rows and columns of its
 * window that lie inside (the padding is skipped, so it contributes
 * nothing, as in TFLite). Then the four sums are requantized as the
 * matrix product's assembly does (dw3_q, five instructions, the sums
 * doubled by the group's weights and bias, dw3_doubled, where each of
 * the group's four channels meets tn__crt_requant_s8's conditions,
 * pw_quant_ok, or has its sums bounded and a shift down to -31,
 * dw3_wide_ok; else tn_crt_multiply_by_quantized_multiplier's
 * arithmetic, pw_requant_any) and stored. At stride_w 1, in builds
 * optimised for speed (not -Os: 1.2 KB of code that gains KWS
 * nothing), the whole windows of a row of dw3_q's outputs go two pixels a
 * pass (dw3_whole4x2): the two windows share three of their four input
 * columns and every weight pair, so a row of their taps takes seven
 * loads and four SXTAB16 for twelve multiply-adds, and a channel's
 * requantization constants are loaded once for both pixels (VWW's
 * depthwise layers: 0.89x the estimated cycles of a pixel at a time),
 * each half of the group requantized and stored before the other is
 * summed; a row's last whole window, when one is left, goes with the
 * next, cut by the padding (KWS's 5-wide rows: pixels 3 and 4 a pass, not
 * one and then one cut: its depthwise layers 0.92x the estimated cycles).
 * A SAME layer at stride 1 (KWS's, and VWW's at stride 1), in those
 * builds on a core without MVE, goes two output rows a pass instead
 * (dw3_vrows): a column of the two windows shares two of their four input
 * rows and the column's weight pairs, the first and last columns lose a
 * column of taps rather than taking a single window each, and a row's
 * bookkeeping is paid once for two (KWS's depthwise layers: 0.67x the
 * estimated cycles of the pairs side by side; VWW's at stride 1: 0.70x to
 * 0.88x).
 * In those builds too a row of two or three taps is one assembly
 * statement (dw3_taps3, dw3_taps2), and a border window of two or three
 * rows and columns is unrolled with its shape a constant (dw3_cut4):
 * borders are a third to a half of the pixels of KWS's 25x5 and VWW's
 * 6x6 layers. A tail of 1 to 3 channels takes the same loops in plain C,
 * one channel at a time. Nothing is packed per layer and no buffer is
 * needed: in place, the output rows of a group wait in the caller's
 * scratch, as conv_s8.c's ring does for its blocks, and a group of four
 * copies each out by a leaf call (dw3_flush4).
 */
#ifndef TVMNODE_CRT_ARM_DSP_DW3X3_S8_DSP_H_
#define TVMNODE_CRT_ARM_DSP_DW3X3_S8_DSP_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"
#include "conv_s8_dsp.h"
#include "dsp.h"

/* Whether every group of four channels of the layer takes DW3_FAST by
 * pw_quant_ok's channels, so that dw3_rows needs no other loop
 * (TN_CRT_CONV_FORM_DW3_ANY). Biases are not asked: channels dw3_wide_ok
 * adds need one near 0, which tn_crt_conv2d_s8_forms_isa cannot see; a
 * crt without DW3_ANY runs a layer that has them in the blocks (the same
 * integers), and a model's forms name DW3_ANY for such a layer. */
static int dw3_fast_only(const Conv *c, const TnCrtQuant *q, int32_t lo,
                         int32_t hi) {
  if (c->p->out_c % 4 != 0 || lo > -128 || hi < 127 ||
      q->output_offset < -128 || q->output_offset > 127)
    return 0;
  for (int32_t ch = 0; ch < c->p->out_c; ch++)
    if (!pw_quant_ok(q, ch)) return 0;
  return 1;
}

#if TN_CRT_HAVE_ARM_DSP

/* conv_s8.c's ring of an in-place depthwise layer: its rows. */
static int32_t ring_rows(const TnCrtConv2d *p);

/* How a row of a group is requantized: four channels by
 * tn__crt_requant_s8 (clamped to an activation's range or not), or any
 * count by pw_requant_any. */
enum { DW3_FAST, DW3_FAST_ACT, DW3_ANY };

/* A group of up to four channels: its weights' pairs (tap t: w[2 t] for
 * channels 0 and 2, w[2 t + 1] for 1 and 3), bias, and per channel
 * either dw3_q's constants (when the group's channels meet its
 * conditions) or the multipliers and shifts (DW3_ANY), which share their
 * bytes. */
typedef struct {
  int32_t w[18];
  union {
    int32_t rq[4][2]; /* per channel: multiplier, r - 1 */
    struct {
      int32_t m[4], s[4];
    } any;
  } u;
  int32_t bias[4];
  int32_t off, off2; /* the output offset; dw3_q's 2 * off + 1 */
  int32_t len; /* 4, or a tail's 1 to 3 */
  int how;     /* how its rows are requantized (see dw3_store) */
} Dw3Group;


/*
 * Whether channel ch (bias b) takes dw3_q beyond pw_quant_ok's shifts: a
 * multiplier of 0, or above 0 with a shift in [-31, -1], and sums that
 * stay in [-2^30, 2^30) whatever the inputs (nine taps of (x + io) * w,
 * each at most 255 * 128 from 0), so that their double (dw3_doubled)
 * fits an int32: SMMULR's (2 acc m + 2^31) >> 32 is then
 * SaturatingRoundingDoublingHighMul's floor((acc m + 2^30) / 2^31) for
 * any m in [0, 2^31) (pw_out), and dw3_q's shift by r - 1 (up to 30) and
 * SSAT's by 1 are RoundingDivideByPOT for any r in [1, 31] (TN__PW_RQ2);
 * m = 0 gives h = 0, which any shift leaves 0. VWW's depthwise layers
 * have a few channels of near-zero weights, with shifts below -20.
 */
static int dw3_wide_ok(const TnCrtQuant *q, int32_t ch, int32_t b) {
  const int32_t k = q->per_channel ? ch : 0;
  const int32_t m = q->multiplier[k], s = q->shift[k];
  const int32_t lim = (INT32_C(1) << 30) - 9 * 255 * 128;
  return (m == 0 || (m > 0 && s <= -1 && s >= -31)) && b >= -lim && b < lim;
}

/*
 * Whether a channel of a group that dw3_q requantizes (bias b) has its
 * sums doubled: its weights (2 w in [-256, 254], still a halfword) and
 * its bias taken twice, so that the taps give 2 acc itself and dw3_q
 * needs no QADD, a cycle a channel a pixel. That is exact where 2 acc
 * fits an int32, where QADD would not have saturated: a bias in [-lim,
 * lim) (nine taps add at most 255 * 128 either way), as every layer of
 * the benchmarks has. A bias beyond it, which only a pw_quant_ok channel
 * can have in such a group (dw3_wide_ok bounds its own), keeps its sums
 * as TFLite has them, acc, wrapped or not; their |acc| is then at least
 * 2^30 - 2 * 9 * 255 * 128, and dw3_q's SMMULR of acc, not 2 acc, gives
 * an h beyond 2^28 - 2^18 of acc's sign (m >= 2^30), which the shift by
 * r - 1 <= 19 leaves beyond 2^9 - 1 and SSAT takes to 127 or -128, as it
 * does QADD's sum; a multiplier of 0 gives h = 0 either way.
 */
static int dw3_doubled(int32_t b) {
  const int32_t lim = (INT32_C(1) << 30) - 9 * 255 * 128;
  return b >= -lim && b < lim;
}

/* A group's set-up (not inlined: its frame is off the stack while the
 * group's rows run) */
static NOINLINE void dw3_group(Dw3Group *g, const Conv *c,
                               const TnCrtQuant *q, const int32_t *bias,
                               int32_t c0, int32_t len, int act) {
  const TnCrtConv2d *p = c->p;
  g->len = len;
  /* dw3_q where each of the group's four channels meets
   * tn__crt_requant_s8's conditions (pw_quant_ok) or dw3_wide_ok's */
  int fast = len == 4 && q->output_offset >= -128 && q->output_offset <= 127;
  for (int32_t j = 0; j < len; j++)
    fast = fast && (pw_quant_ok(q, c0 + j) ||
                    dw3_wide_ok(q, c0 + j, bias ? bias[c0 + j] : 0));
  g->how = !fast ? DW3_ANY : act ? DW3_FAST_ACT : DW3_FAST;
  g->off = q->output_offset, g->off2 = 2 * q->output_offset + 1;
  uint32_t dbl02 = 0, dbl13 = 0; /* the halfwords doubled of the pairs */
  for (int32_t j = 0; j < 4; j++) {
    const int32_t ch = c0 + (j < len ? j : 0);
    const int32_t k = q->per_channel ? ch : 0;
    g->bias[j] = bias ? bias[ch] : 0;
    const int32_t m = q->multiplier[k], sh = q->shift[k];
    if (g->how == DW3_ANY) {
      g->u.any.m[j] = m, g->u.any.s[j] = sh;
      continue;
    }
    if (dw3_doubled(g->bias[j])) { /* and its weights' halfword, below */
      g->bias[j] *= 2;
      const uint32_t half = j < 2 ? UINT32_C(0xffff) : UINT32_C(0xffff0000);
      if (j & 1)
        dbl13 |= half;
      else
        dbl02 |= half;
    }
    /* r - 1 for a shift in [-31, -1] (any for a multiplier of 0) */
    g->u.rq[j][0] = m;
    g->u.rq[j][1] = sh <= -1 && sh >= -31 ? -sh - 1 : 0;
  }
  if (len < 4) return; /* the tail reads its weights one by one */
  for (int32_t t = 0; t < 9; t++) {
    const uint32_t v = tn__crt_load4(c->w + c0 +
                                     (ptrdiff_t)(t / 3) * p->w_strides[0] +
                                     (ptrdiff_t)(t % 3) * p->w_strides[1]);
    const int32_t w02 = __sxtb16((int32_t)v), w13 = tn__crt_sxtb16_ror8(v);
    /* dw3_doubled's channels' halfwords taken twice */
    g->w[2 * t] = __sadd16(w02, (int32_t)((uint32_t)w02 & dbl02));
    g->w[2 * t + 1] = __sadd16(w13, (int32_t)((uint32_t)w13 & dbl13));
  }
}

/*
 * One tap of a group of four channels, in assembly: s[j] += (x[j] + io) *
 * w[j] for the input word at x and the tap's weight pairs at w[0] and w[1]
 * (SXTB16 order: channels 0 and 2, then 1 and 3). Nine of them make a
 * whole window (dw3_whole4), one to three a row of a cut one (dw3_row4):
 * in assembly because gcc, left to the intrinsics, spills the four sums
 * at every tap. A tap takes ten registers (the sums, the input and weight
 * pointers, the input offset, three temporaries, the second weight word
 * reusing the first pair's), few enough that it compiles at every
 * optimisation level with the frame pointer kept (-fno-omit-frame-pointer,
 * as cc-rs builds by default), where a row in one statement, with its
 * pixel stride, did not.
 */
BLOCK_INLINE void dw3_tap4(int32_t s[4], const int8_t *x, const int32_t *w,
                           int32_t io2) {
  uint32_t xv, av, wa;
  __asm__("ldr %[xv], [%[x]]\n\t"
          "ldr %[wa], [%[w]]\n\t"
          "sxtab16 %[a], %[io2], %[xv]\n\t"
          "sxtab16 %[xv], %[io2], %[xv], ror #8\n\t"
          "smlabb %[s0], %[a], %[wa], %[s0]\n\t"
          "smlatt %[s2], %[a], %[wa], %[s2]\n\t"
          "ldr %[a], [%[w], #4]\n\t"
          "smlabb %[s1], %[xv], %[a], %[s1]\n\t"
          "smlatt %[s3], %[xv], %[a], %[s3]\n\t"
          : [s0] "+r"(s[0]), [s1] "+r"(s[1]), [s2] "+r"(s[2]),
            [s3] "+r"(s[3]), [xv] "=&r"(xv), [a] "=&r"(av), [wa] "=&r"(wa)
          : [x] "r"(x), [w] "r"(w), [io2] "r"(io2)
          : "memory");
}

#if defined(__OPTIMIZE__) /* unoptimised, gcc cannot free ten */
/* A row of three taps (or, n = 2, two) in one statement (builds for
 * speed; the taps at x, x + is2 and x + 2 is2 by the load's own shift),
 * where one dw3_tap4 a tap left gcc copying the four sums between
 * registers and the weight pointers to and from the stack at each. Ten
 * registers: each tap loads its input word twice, once a half, because
 * with eleven (dw3_tap4's two temporaries and the input word) gcc 12
 * found none left inside dw3_out_row at -O3 with the frame pointer kept
 * (the load costs KWS 0.5 % of its estimated cycles). Not on a core with
 * MVE: there, with the frame pointer kept, it finds no ten at -O2 (and
 * the MVE form takes most depthwise 3x3 layers on such a core). */
#if !defined(__OPTIMIZE_SIZE__) && !defined(__ARM_FEATURE_MVE)
#define TN__DW3_TAPS 1
#else
#define TN__DW3_TAPS 0
#endif
#if TN__DW3_TAPS
#define DW3_TAP_ASM(X, W0, W1)                                               \
  "ldr %[a], " X "\n\t"                                                      \
  "ldr %[wa], [%[w], #" W0 "]\n\t"                                           \
  "sxtab16 %[a], %[io2], %[a]\n\t"                                          \
  "smlabb %[s0], %[a], %[wa], %[s0]\n\t"                                    \
  "smlatt %[s2], %[a], %[wa], %[s2]\n\t"                                    \
  "ldr %[a], " X "\n\t"                                                      \
  "ldr %[wa], [%[w], #" W1 "]\n\t"                                           \
  "sxtab16 %[a], %[io2], %[a], ror #8\n\t"                                  \
  "smlabb %[s1], %[a], %[wa], %[s1]\n\t"                                    \
  "smlatt %[s3], %[a], %[wa], %[s3]\n\t"
#define DW3_TAPS_ASM(TAPS)                                                   \
  uint32_t av, wa;                                                           \
  __asm__(TAPS                                                               \
          : [s0] "+r"(s[0]), [s1] "+r"(s[1]), [s2] "+r"(s[2]),               \
            [s3] "+r"(s[3]), [a] "=&r"(av), [wa] "=&r"(wa)                   \
          : [x] "r"(x), [is2] "r"(is2), [w] "r"(w), [io2] "r"(io2)           \
          : "memory")
BLOCK_INLINE void dw3_taps3(int32_t s[4], const int8_t *x, ptrdiff_t is2,
                           const int32_t *w, int32_t io2) {
  DW3_TAPS_ASM(DW3_TAP_ASM("[%[x]]", "0", "4")
               DW3_TAP_ASM("[%[x], %[is2]]", "8", "12")
               DW3_TAP_ASM("[%[x], %[is2], lsl #1]", "16", "20"));
}
BLOCK_INLINE void dw3_taps2(int32_t s[4], const int8_t *x, ptrdiff_t is2,
                           const int32_t *w, int32_t io2) {
  DW3_TAPS_ASM(DW3_TAP_ASM("[%[x]]", "0", "4")
               DW3_TAP_ASM("[%[x], %[is2]]", "8", "12"));
}
#undef DW3_TAPS_ASM
#undef DW3_TAP_ASM
#endif

/* s[j] += the taps [0, n) of a row (n <= 3), x at its first, w its
 * pairs. */
BLOCK_INLINE void dw3_row4(int32_t s[4], const int8_t *x, ptrdiff_t is2,
                           const int32_t *w, int32_t n, int32_t io2) {
#if TN__DW3_TAPS
  if (n == 3 || n == 2) {
    if (n == 3)
      dw3_taps3(s, x, is2, w, io2);
    else
      dw3_taps2(s, x, is2, w, io2);
    return;
  }
#endif
  dw3_tap4(s, x, w, io2);
  if (n >= 2) dw3_tap4(s, x + is2, w + 2, io2);
  if (n >= 3) dw3_tap4(s, x + 2 * is2, w + 4, io2);
}

/* The four sums (from the bias) of a pixel whose window lies inside the
 * input, x at its tap (0, 0), input pixels is2 apart, rows is1: three
 * rows of three taps (each its own statement, so that gcc keeps the row
 * stride and its loop's state in the registers left). */
BLOCK_INLINE void dw3_whole4(int32_t s[4], const Dw3Group *g, const int8_t *x,
                             ptrdiff_t is1, ptrdiff_t is2, int32_t io2) {
  s[0] = g->bias[0], s[1] = g->bias[1], s[2] = g->bias[2];
  s[3] = g->bias[3];
  dw3_row4(s, x, is2, g->w, 3, io2);
  dw3_row4(s, x + is1, is2, g->w + 6, 3, io2);
  dw3_row4(s, x + 2 * is1, is2, g->w + 12, 3, io2);
}

/*
 * One row of the whole windows of two neighbouring output pixels at
 * stride 1 (x at the first's tap (ky, 0), input pixels is2 apart), half a
 * group: channels 0 and 2 (ROR empty) or 1 and 3 (ROR ", ror #8"), w at
 * the row's first pair of that half (pairs 8 bytes apart). The two
 * windows share three of their four input columns and all three weight
 * pairs, so the row costs seven loads (four input words, three weight
 * pairs) and four SXTAB16 for twelve multiply-adds where a pixel at a time
 * costs nine loads and six SXTAB16; each weight load follows another load
 * or stands before one, so that most are pipelined. Eleven registers:
 * the four sums, x, is2, w, the input offset and three temporaries.
 */
#define DW3_ROW2_HEAD_ASM(ROR, W0, W1, W2)                                   \
  "ldr %[wv], [%[w], #" W0 "]\n\t"                                           \
  "ldr %[t], [%[x]]\n\t"                                                     \
  "ldr %[v], [%[x], %[is2]]\n\t"                                             \
  "add %[x], %[x], %[is2], lsl #1\n\t"                                       \
  "sxtab16 %[t], %[io2], %[t]" ROR "\n\t"                                    \
  "sxtab16 %[v], %[io2], %[v]" ROR "\n\t"                                    \
  "smlabb %[a0], %[t], %[wv], %[a0]\n\t"                                     \
  "smlatt %[a2], %[t], %[wv], %[a2]\n\t"                                     \
  "smlabb %[b0], %[v], %[wv], %[b0]\n\t"                                     \
  "smlatt %[b2], %[v], %[wv], %[b2]\n\t"                                     \
  "ldr %[wv], [%[w], #" W1 "]\n\t"                                           \
  "ldr %[t], [%[x]]\n\t"                                                     \
  "sxtab16 %[t], %[io2], %[t]" ROR "\n\t"                                    \
  "smlabb %[a0], %[v], %[wv], %[a0]\n\t"                                     \
  "smlatt %[a2], %[v], %[wv], %[a2]\n\t"                                     \
  "smlabb %[b0], %[t], %[wv], %[b0]\n\t"                                     \
  "smlatt %[b2], %[t], %[wv], %[b2]\n\t"                                     \
  "ldr %[wv], [%[w], #" W2 "]\n\t"
#define DW3_ROW2_ASM(ROR, W0, W1, W2)                                        \
  DW3_ROW2_HEAD_ASM(ROR, W0, W1, W2)                                         \
  "ldr %[v], [%[x], %[is2]]\n\t"                                             \
  "sxtab16 %[v], %[io2], %[v]" ROR "\n\t"                                    \
  "smlabb %[a0], %[t], %[wv], %[a0]\n\t"                                     \
  "smlatt %[a2], %[t], %[wv], %[a2]\n\t"                                     \
  "smlabb %[b0], %[v], %[wv], %[b0]\n\t"                                     \
  "smlatt %[b2], %[v], %[wv], %[b2]\n\t"

/* The same where the second pixel's window has lost its third column to
 * the padding (the last whole window of a row and the cut one after it):
 * its third column is neither loaded nor summed. */
#define DW3_ROW2_CUT_ASM(ROR, W0, W1, W2)                                    \
  DW3_ROW2_HEAD_ASM(ROR, W0, W1, W2)                                         \
  "smlabb %[a0], %[t], %[wv], %[a0]\n\t"                                     \
  "smlatt %[a2], %[t], %[wv], %[a2]\n\t"

#define DW3_ROW2(name, ASM, ROR, W0, W1, W2)                                 \
  BLOCK_INLINE void name(int32_t *a0, int32_t *a2, int32_t *b0, int32_t *b2, \
                         const int8_t *x, ptrdiff_t is2, const int32_t *w,   \
                         int32_t io2) {                                      \
    uint32_t t, v, wv;                                                       \
    __asm__(ASM(ROR, W0, W1, W2)                                             \
            : [a0] "+r"(*a0), [a2] "+r"(*a2), [b0] "+r"(*b0),                \
              [b2] "+r"(*b2), [x] "+r"(x), [t] "=&r"(t), [v] "=&r"(v),       \
              [wv] "=&r"(wv)                                                 \
            : [is2] "r"(is2), [w] "r"(w), [io2] "r"(io2)                     \
            : "memory");                                                     \
  }
/* w at the group's first pair (Dw3Group.w), the row's and the half's
 * offsets in the instructions (bytes: 24 a row, 4 for channels 1 and 3),
 * so that one pointer serves the six rows of a pair of windows */
DW3_ROW2(dw3_row2_02_0, DW3_ROW2_ASM, "", "0", "8", "16")
DW3_ROW2(dw3_row2_02_1, DW3_ROW2_ASM, "", "24", "32", "40")
DW3_ROW2(dw3_row2_02_2, DW3_ROW2_ASM, "", "48", "56", "64")
DW3_ROW2(dw3_row2_13_0, DW3_ROW2_ASM, ", ror #8", "4", "12", "20")
DW3_ROW2(dw3_row2_13_1, DW3_ROW2_ASM, ", ror #8", "28", "36", "44")
DW3_ROW2(dw3_row2_13_2, DW3_ROW2_ASM, ", ror #8", "52", "60", "68")
DW3_ROW2(dw3_row2c_02_0, DW3_ROW2_CUT_ASM, "", "0", "8", "16")
DW3_ROW2(dw3_row2c_02_1, DW3_ROW2_CUT_ASM, "", "24", "32", "40")
DW3_ROW2(dw3_row2c_02_2, DW3_ROW2_CUT_ASM, "", "48", "56", "64")
DW3_ROW2(dw3_row2c_13_0, DW3_ROW2_CUT_ASM, ", ror #8", "4", "12", "20")
DW3_ROW2(dw3_row2c_13_1, DW3_ROW2_CUT_ASM, ", ror #8", "28", "36", "44")
DW3_ROW2(dw3_row2c_13_2, DW3_ROW2_CUT_ASM, ", ror #8", "52", "60", "68")
#undef DW3_ROW2
#undef DW3_ROW2_CUT_ASM
#undef DW3_ROW2_ASM
#undef DW3_ROW2_HEAD_ASM

#else
/* The same in C: one tap, then a row, then a whole window. */
BLOCK_INLINE void dw3_tap(int32_t s[4], const int8_t *x, const int32_t *w,
                          int32_t io2) {
  const uint32_t xv = tn__crt_load4(x);
  const int32_t x02 = __sxtab16(io2, (int32_t)xv);
  const int32_t x13 = tn__crt_sxtab16_ror8(io2, xv);
  s[0] = __smlabb(x02, w[0], s[0]), s[2] = __smlatt(x02, w[0], s[2]);
  s[1] = __smlabb(x13, w[1], s[1]), s[3] = __smlatt(x13, w[1], s[3]);
}

static void dw3_row4(int32_t s[4], const int8_t *x, ptrdiff_t is2,
                     const int32_t *w, int32_t n, int32_t io2) {
  for (int32_t kx = 0; kx < n; kx++) dw3_tap(s, x + kx * is2, w + 2 * kx, io2);
}

static void dw3_whole4(int32_t s[4], const Dw3Group *g, const int8_t *x,
                       ptrdiff_t is1, ptrdiff_t is2, int32_t io2) {
  s[0] = g->bias[0], s[1] = g->bias[1], s[2] = g->bias[2];
  s[3] = g->bias[3];
  for (int32_t ky = 0; ky < 3; ky++)
    dw3_row4(s, x + ky * is1, is2, g->w + 6 * ky, 3, io2);
}
#endif

#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
/* s[j] += the taps of nr rows of nc columns (each 2 or 3, constants
 * where it is called), x and w at the first: a border window unrolled as
 * a whole one is, where the loop of dw3_part4 kept the sums moving
 * between registers at each tap and paid a row's bookkeeping per row. */
BLOCK_INLINE void dw3_cut4(int32_t s[4], const int8_t *x, ptrdiff_t is1,
                           ptrdiff_t is2, const int32_t *w, int32_t nr,
                           int32_t nc, int32_t io2) {
  dw3_row4(s, x, is2, w, nc, io2);
  dw3_row4(s, x + is1, is2, w + 6, nc, io2);
  if (nr == 3) dw3_row4(s, x + 2 * is1, is2, w + 12, nc, io2);
}
#endif

/* The same for a pixel whose taps [ky0, ky1) x [kx0, kx1) lie inside the
 * input, x at tap (ky0, kx0). In builds for speed, the windows of two or
 * three rows of two or three columns (a border's, with a pad of 1: KWS's
 * and VWW's) take dw3_cut4 with their shape a constant. */
BLOCK_INLINE void dw3_part4(int32_t s[4], const Dw3Group *g, const int8_t *x,
                            ptrdiff_t is1, ptrdiff_t is2, int32_t ky0,
                            int32_t ky1, int32_t kx0, int32_t kx1,
                            int32_t io2) {
  s[0] = g->bias[0], s[1] = g->bias[1], s[2] = g->bias[2];
  s[3] = g->bias[3];
  const int32_t *w = g->w + 2 * (ky0 * 3 + kx0);
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
  const int32_t nr = ky1 - ky0, nc = kx1 - kx0;
  if (nr >= 2 && nc >= 2 && nr + nc < 6) {
    if (nr == 2 && nc == 2)
      dw3_cut4(s, x, is1, is2, w, 2, 2, io2);
    else if (nr == 2)
      dw3_cut4(s, x, is1, is2, w, 2, 3, io2);
    else
      dw3_cut4(s, x, is1, is2, w, 3, 2, io2);
    return;
  }
#endif
  for (int32_t ky = ky0; ky < ky1; ky++, x += is1, w += 6)
    dw3_row4(s, x, is2, w, kx1 - kx0, io2);
}

/* The sum of channel j of the tail, x and w at its tap (ky0, kx0). */
static int32_t dw3_sum1(const Conv *c, const Dw3Group *g, int32_t j,
                        const int8_t *x, ptrdiff_t is1, ptrdiff_t is2,
                        int32_t ky0, int32_t ky1, int32_t kx0, int32_t kx1,
                        const int8_t *w) {
  const ptrdiff_t ws0 = c->p->w_strides[0], ws1 = c->p->w_strides[1];
  uint32_t s = (uint32_t)g->bias[j];
  for (int32_t ky = 0; ky < ky1 - ky0; ky++)
    for (int32_t kx = 0; kx < kx1 - kx0; kx++)
      s += (uint32_t)((x[ky * is1 + kx * is2] + c->io) *
                      w[ky * ws0 + kx * ws1]);
  return (int32_t)s;
}


/* Channel j's output for the sum v = 2 acc (how != DW3_ANY; acc itself
 * for a bias beyond dw3_doubled's bound): pw_pairs_fast's
 * requantization (TN__PW_RQ2), tn__crt_requant_s8's (h - [h < 0] + 2^(r-1)
 * + off * 2^r) >> r as ((h - [h < 0]) >> (r - 1)) + 2 * off + 1 halved by
 * SSAT's shift, which needs no rounding term that a shift beyond 20 would
 * overflow. */
BLOCK_INLINE int8_t dw3_q(int32_t v, const int32_t *rq, int32_t off2, int how,
                          int32_t lo,
                          int32_t hi) {
  const int32_t h = tn__crt_smmulr(v, rq[0]); /* dw3_doubled */
  v = __ssat((((h + (h >> 31)) >> rq[1]) + off2) >> 1, 8);
  if (how == DW3_FAST_ACT) {
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
  }
  return (int8_t)v;
}

BLOCK_INLINE void dw3_store(int8_t *o, const int32_t s[4], const Dw3Group *g,
                            int how, int32_t off, int32_t lo, int32_t hi) {
  if (how == DW3_ANY) {
    for (int32_t j = 0; j < g->len; j++)
      o[j] = pw_requant_any(s[j], g->u.any.m[j], g->u.any.s[j], off, lo,
                            hi);
    return;
  }
  /* unrolled, so that the sums stay in registers; g->off2 in a local,
   * loaded once (a byte stored could alias g) */
  const int32_t off2 = g->off2;
  o[0] = dw3_q(s[0], g->u.rq[0], off2, how, lo, hi);
  o[1] = dw3_q(s[1], g->u.rq[1], off2, how, lo, hi);
  o[2] = dw3_q(s[2], g->u.rq[2], off2, how, lo, hi);
  o[3] = dw3_q(s[3], g->u.rq[3], off2, how, lo, hi);
}

/* A channel's outputs of two pixels (sums v and u) into o and o2, both
 * worked out before either byte is stored (which could alias rq), so that
 * its constants are loaded once. */
BLOCK_INLINE void dw3_q2(int8_t *o, int8_t *o2, int32_t v, int32_t u,
                         const int32_t *rq, int32_t off2, int how, int32_t lo,
                         int32_t hi) {
  const int8_t a = dw3_q(v, rq, off2, how, lo, hi);
  const int8_t b = dw3_q(u, rq, off2, how, lo, hi);
  *o = a, *o2 = b;
}

#if defined(__OPTIMIZE__)
/* Row r's statement of a pair and its weight pointer: one pointer for the
 * six rows, the row in the statement's offsets; on a core with MVE, one
 * pointer a row and row 0's offsets (with the frame pointer kept, gcc
 * finds no registers for the shared pointer at -O2 on the M55). */
#if defined(__ARM_FEATURE_MVE)
#define DW3_ROW2_AT(name, r) name##_0
#define DW3_ROW2_W(r) (g->w + 6 * (r))
#else
#define DW3_ROW2_AT(name, r) name##_##r
#define DW3_ROW2_W(r) (g->w)
#endif
/* The outputs of two whole windows at stride 1 (DW3_FAST; x at the
 * first's tap (0, 0), its pixel o, the next's o2): channels 0 and 2 over
 * the three rows, requantized and stored, then 1 and 3 the same way, so
 * that four sums are live at a time; with all eight summed before any
 * was stored, gcc kept half of them and the row pointers on the stack
 * (VWW: about 70 instructions a pair besides the taps and stores). With
 * cut (a constant where it is called), the second window is the first
 * cut by the right padding, its third column outside (dw3_row2c_02_0). */
BLOCK_INLINE void dw3_whole4x2(int8_t *o, int8_t *o2, const Dw3Group *g,
                               const int8_t *x, ptrdiff_t is1, ptrdiff_t is2,
                               int32_t io2, int32_t lo, int32_t hi, int cut) {
  const int32_t off2 = g->off2;
  int32_t a0 = g->bias[0], a2 = g->bias[2], b0 = a0, b2 = a2;
  if (cut) {
    DW3_ROW2_AT(dw3_row2c_02, 0)(&a0, &a2, &b0, &b2, x, is2,
                                 DW3_ROW2_W(0), io2);
    DW3_ROW2_AT(dw3_row2c_02, 1)(&a0, &a2, &b0, &b2, x + is1, is2,
                                 DW3_ROW2_W(1), io2);
    DW3_ROW2_AT(dw3_row2c_02, 2)(&a0, &a2, &b0, &b2, x + 2 * is1, is2,
                                 DW3_ROW2_W(2), io2);
  } else {
    DW3_ROW2_AT(dw3_row2_02, 0)(&a0, &a2, &b0, &b2, x, is2,
                                DW3_ROW2_W(0), io2);
    DW3_ROW2_AT(dw3_row2_02, 1)(&a0, &a2, &b0, &b2, x + is1, is2,
                                DW3_ROW2_W(1), io2);
    DW3_ROW2_AT(dw3_row2_02, 2)(&a0, &a2, &b0, &b2, x + 2 * is1, is2,
                                DW3_ROW2_W(2), io2);
  }
  dw3_q2(o, o2, a0, b0, g->u.rq[0], off2, DW3_FAST, lo, hi);
  dw3_q2(o + 2, o2 + 2, a2, b2, g->u.rq[2], off2, DW3_FAST, lo, hi);
  a0 = b0 = g->bias[1], a2 = b2 = g->bias[3];
  if (cut) {
    DW3_ROW2_AT(dw3_row2c_13, 0)(&a0, &a2, &b0, &b2, x, is2,
                                 DW3_ROW2_W(0), io2);
    DW3_ROW2_AT(dw3_row2c_13, 1)(&a0, &a2, &b0, &b2, x + is1, is2,
                                 DW3_ROW2_W(1), io2);
    DW3_ROW2_AT(dw3_row2c_13, 2)(&a0, &a2, &b0, &b2, x + 2 * is1, is2,
                                 DW3_ROW2_W(2), io2);
  } else {
    DW3_ROW2_AT(dw3_row2_13, 0)(&a0, &a2, &b0, &b2, x, is2,
                                DW3_ROW2_W(0), io2);
    DW3_ROW2_AT(dw3_row2_13, 1)(&a0, &a2, &b0, &b2, x + is1, is2,
                                DW3_ROW2_W(1), io2);
    DW3_ROW2_AT(dw3_row2_13, 2)(&a0, &a2, &b0, &b2, x + 2 * is1, is2,
                                DW3_ROW2_W(2), io2);
  }
  dw3_q2(o + 1, o2 + 1, a0, b0, g->u.rq[1], off2, DW3_FAST, lo, hi);
  dw3_q2(o + 3, o2 + 3, a2, b2, g->u.rq[3], off2, DW3_FAST, lo, hi);
}
#undef DW3_ROW2_W
#undef DW3_ROW2_AT
#endif

#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && \
    !defined(__ARM_FEATURE_MVE)
/*
 * Two output rows a pass (dw3_vrows, builds for speed, not on a core with
 * MVE, where the MVE form takes most depthwise 3x3 layers and this would
 * be 6 KB of KWS's flash run by none): one column of the windows of two
 * pixels one above the other (x at the upper's tap (0, kx), input rows
 * is1 apart), half a group as dw3_row2_02 has it, w at the group's first
 * pair and the column's and half's offsets in the instructions. The two
 * windows share two of their four input rows and the column's three
 * weight pairs: seven loads and four SXTAB16 for twelve multiply-adds,
 * as a row of a pair side by side. With CUT, the lower window has lost
 * its third row to the padding (a layer's last row).
 */
#define DW3_COL2_HEAD_ASM(ROR, W0, W1, W2)                                   \
  "ldr %[q], [%[w], #" W0 "]\n\t"                                            \
  "ldr %[e], [%[x]]\n\t"                                                     \
  "ldr %[f], [%[x], %[is1]]\n\t"                                             \
  "add %[x], %[x], %[is1], lsl #1\n\t"                                       \
  "sxtab16 %[e], %[io2], %[e]" ROR "\n\t"                                    \
  "sxtab16 %[f], %[io2], %[f]" ROR "\n\t"                                    \
  "smlabb %[u0], %[e], %[q], %[u0]\n\t"                                      \
  "smlatt %[u2], %[e], %[q], %[u2]\n\t"                                      \
  "smlabb %[d0], %[f], %[q], %[d0]\n\t"                                      \
  "smlatt %[d2], %[f], %[q], %[d2]\n\t"                                      \
  "ldr %[q], [%[w], #" W1 "]\n\t"                                            \
  "ldr %[e], [%[x]]\n\t"                                                     \
  "sxtab16 %[e], %[io2], %[e]" ROR "\n\t"                                    \
  "smlabb %[u0], %[f], %[q], %[u0]\n\t"                                      \
  "smlatt %[u2], %[f], %[q], %[u2]\n\t"                                      \
  "smlabb %[d0], %[e], %[q], %[d0]\n\t"                                      \
  "smlatt %[d2], %[e], %[q], %[d2]\n\t"                                      \
  "ldr %[q], [%[w], #" W2 "]\n\t"
#define DW3_COL2_ASM(ROR, W0, W1, W2)                                        \
  DW3_COL2_HEAD_ASM(ROR, W0, W1, W2)                                         \
  "ldr %[f], [%[x], %[is1]]\n\t"                                             \
  "sxtab16 %[f], %[io2], %[f]" ROR "\n\t"                                    \
  "smlabb %[u0], %[e], %[q], %[u0]\n\t"                                      \
  "smlatt %[u2], %[e], %[q], %[u2]\n\t"                                      \
  "smlabb %[d0], %[f], %[q], %[d0]\n\t"                                      \
  "smlatt %[d2], %[f], %[q], %[d2]\n\t"
#define DW3_COL2_CUT_ASM(ROR, W0, W1, W2)                                    \
  DW3_COL2_HEAD_ASM(ROR, W0, W1, W2)                                         \
  "smlabb %[u0], %[e], %[q], %[u0]\n\t"                                      \
  "smlatt %[u2], %[e], %[q], %[u2]\n\t"
#define DW3_COL2(name, ASM, ROR, W0, W1, W2)                                 \
  BLOCK_INLINE void name(int32_t *u0, int32_t *u2, int32_t *d0, int32_t *d2, \
                         const int8_t *x, ptrdiff_t is1, const int32_t *w,   \
                         int32_t io2) {                                      \
    uint32_t e, f, q;                                                        \
    __asm__(ASM(ROR, W0, W1, W2)                                             \
            : [u0] "+r"(*u0), [u2] "+r"(*u2), [d0] "+r"(*d0),                \
              [d2] "+r"(*d2), [x] "+r"(x), [e] "=&r"(e), [f] "=&r"(f),       \
              [q] "=&r"(q)                                                   \
            : [is1] "r"(is1), [w] "r"(w), [io2] "r"(io2)                     \
            : "memory");                                                     \
  }
DW3_COL2(dw3_col2_02_0, DW3_COL2_ASM, "", "0", "24", "48")
DW3_COL2(dw3_col2_02_1, DW3_COL2_ASM, "", "8", "32", "56")
DW3_COL2(dw3_col2_02_2, DW3_COL2_ASM, "", "16", "40", "64")
DW3_COL2(dw3_col2_13_0, DW3_COL2_ASM, ", ror #8", "4", "28", "52")
DW3_COL2(dw3_col2_13_1, DW3_COL2_ASM, ", ror #8", "12", "36", "60")
DW3_COL2(dw3_col2_13_2, DW3_COL2_ASM, ", ror #8", "20", "44", "68")
DW3_COL2(dw3_col2c_02_0, DW3_COL2_CUT_ASM, "", "0", "24", "48")
DW3_COL2(dw3_col2c_02_1, DW3_COL2_CUT_ASM, "", "8", "32", "56")
DW3_COL2(dw3_col2c_02_2, DW3_COL2_CUT_ASM, "", "16", "40", "64")
DW3_COL2(dw3_col2c_13_0, DW3_COL2_CUT_ASM, ", ror #8", "4", "28", "52")
DW3_COL2(dw3_col2c_13_1, DW3_COL2_CUT_ASM, ", ror #8", "12", "36", "60")
DW3_COL2(dw3_col2c_13_2, DW3_COL2_CUT_ASM, ", ror #8", "20", "44", "68")
#undef DW3_COL2
#undef DW3_COL2_CUT_ASM
#undef DW3_COL2_ASM
#undef DW3_COL2_HEAD_ASM

/* Column kx (a constant where it is called) of one half (h13: channels 1
 * and 3) of a vertical pair of windows, cut or not. */
#define DW3_COL2_CALL(F) F(u0, u2, d0, d2, x, is1, w, io2)
BLOCK_INLINE void dw3_col2(int32_t *u0, int32_t *u2, int32_t *d0,
                           int32_t *d2, const int8_t *x, ptrdiff_t is1,
                           const int32_t *w, int32_t io2, int kx, int h13,
                           int cut) {
  if (!cut && !h13) {
    if (kx == 0)
      DW3_COL2_CALL(dw3_col2_02_0);
    else if (kx == 1)
      DW3_COL2_CALL(dw3_col2_02_1);
    else
      DW3_COL2_CALL(dw3_col2_02_2);
  } else if (!cut) {
    if (kx == 0)
      DW3_COL2_CALL(dw3_col2_13_0);
    else if (kx == 1)
      DW3_COL2_CALL(dw3_col2_13_1);
    else
      DW3_COL2_CALL(dw3_col2_13_2);
  } else if (!h13) {
    if (kx == 0)
      DW3_COL2_CALL(dw3_col2c_02_0);
    else if (kx == 1)
      DW3_COL2_CALL(dw3_col2c_02_1);
    else
      DW3_COL2_CALL(dw3_col2c_02_2);
  } else {
    if (kx == 0)
      DW3_COL2_CALL(dw3_col2c_13_0);
    else if (kx == 1)
      DW3_COL2_CALL(dw3_col2c_13_1);
    else
      DW3_COL2_CALL(dw3_col2c_13_2);
  }
}
#undef DW3_COL2_CALL

/* Half h (channels h and h + 2) of two windows one above the other
 * (DW3_FAST; the upper's pixel o, the lower's o2), their columns [k0,
 * k1) inside the input (x at the upper's tap (0, k0)): summed,
 * requantized and stored. k0, k1, h and cut are constants where it is
 * called. */
BLOCK_INLINE void dw3_vhalf(int8_t *o, int8_t *o2, const Dw3Group *g,
                            const int8_t *x, ptrdiff_t is1, ptrdiff_t is2,
                            int32_t io2, int k0, int k1, int h, int cut) {
  int32_t a0 = g->bias[h], a2 = g->bias[h + 2], b0 = a0, b2 = a2;
  if (k0 == 0) dw3_col2(&a0, &a2, &b0, &b2, x, is1, g->w, io2, 0, h, cut);
  dw3_col2(&a0, &a2, &b0, &b2, x + (1 - k0) * is2, is1, g->w, io2, 1, h,
           cut);
  if (k1 == 3)
    dw3_col2(&a0, &a2, &b0, &b2, x + (2 - k0) * is2, is1, g->w, io2, 2, h,
             cut);
  const int32_t off2 = g->off2;
  dw3_q2(o + h, o2 + h, a0, b0, g->u.rq[h], off2, DW3_FAST, 0, 0);
  dw3_q2(o + h + 2, o2 + h + 2, a2, b2, g->u.rq[h + 2], off2, DW3_FAST, 0,
         0);
}

/* Both halves: channels 0 and 2 are summed, requantized and stored, then
 * 1 and 3, as dw3_whole4x2 does. */
BLOCK_INLINE void dw3_vpair4(int8_t *o, int8_t *o2, const Dw3Group *g,
                             const int8_t *x, ptrdiff_t is1, ptrdiff_t is2,
                             int32_t io2, int k0, int k1, int cut) {
  dw3_vhalf(o, o2, g, x, is1, is2, io2, k0, k1, 0, cut);
  dw3_vhalf(o, o2, g, x, is1, is2, io2, k0, k1, 1, cut);
}

/* A pass of two output rows (x at the upper's input row above, column 0;
 * pixels ps2 apart in both outputs), the layer SAME at stride 1
 * (dw3_vrows_ok): column 0 has lost its window's first column to the
 * padding and the last column its third. */
BLOCK_INLINE void dw3_vpass(const Dw3Group *g, const int8_t *x,
                            ptrdiff_t is1, ptrdiff_t is2, int32_t w,
                            int8_t *o, int8_t *o2, ptrdiff_t ps2,
                            int32_t io2, int cut) {
  dw3_vpair4(o, o2, g, x, is1, is2, io2, 1, 3, cut);
  o += ps2, o2 += ps2;
  const int8_t *const end = x + (ptrdiff_t)(w - 2) * is2;
  for (; x < end; x += is2, o += ps2, o2 += ps2)
    dw3_vpair4(o, o2, g, x, is1, is2, io2, 0, 3, cut);
  dw3_vpair4(o, o2, g, x, is1, is2, io2, 0, 2, cut);
}

#define TN__DW3_VROWS 1
#else
#define TN__DW3_VROWS 0
#endif

/* One output row of a group of four into o (pixels ps2 apart): the
 * columns [fx0, fx1) with whole windows, the others cut. */
BLOCK_INLINE void dw3_out_row(const Conv *c, const Dw3Group *g,
                           const int8_t *xn, int32_t iy0, int32_t ky0,
                           int32_t ky1, int32_t fx0, int32_t fx1, int8_t *o,
                           ptrdiff_t ps2, int how, int32_t off, int32_t lo,
                           int32_t hi) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];
  const ptrdiff_t step = (ptrdiff_t)p->stride_w * is2;
  const int32_t io2 = tn__crt_pair(c->io, c->io);
  const int whole_rows = ky0 == 0 && ky1 == 3;
  const ptrdiff_t row = (ptrdiff_t)(iy0 + ky0) * is1;
  int32_t s[4];
  for (int32_t ox = 0; ox < p->out_w; ox++, o += ps2) {
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    if (whole_rows && ox >= fx0 && ox < fx1) {
      /* a run of whole windows */
      const int8_t *x = xn + (row + (ptrdiff_t)ix0 * is2);
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
      if (how == DW3_FAST && p->stride_w == 1) {
        for (; ox + 1 < fx1; ox += 2, o += 2 * ps2, x += 2 * is2)
          dw3_whole4x2(o, o + ps2, g, x, is1, is2, io2, lo, hi, 0);
        /* one whole window left, and after it one whose third column
         * alone is outside (KWS's 5-wide rows: the pixels 3 and 4) */
        if (ox + 1 == fx1 && fx1 < p->out_w) {
          dw3_whole4x2(o, o + ps2, g, x, is1, is2, io2, lo, hi, 1);
          ox += 2, o += 2 * ps2;
        }
      }
#endif
      for (; ox < fx1; ox++, o += ps2, x += step) {
        dw3_whole4(s, g, x, is1, is2, io2);
        dw3_store(o, s, g, how, off, lo, hi);
      }
      ox--, o -= ps2;
      continue;
    }
    int32_t kx0, kx1;
    taps(ix0, 3, 1, p->in_w, &kx0, &kx1);
    dw3_part4(s, g, xn + (row + (ptrdiff_t)(ix0 + kx0) * is2), is1, is2,
              ky0, ky1, kx0, kx1, io2);
    dw3_store(o, s, g, how, off, lo, hi);
  }
}

/* A row of a group of len channels from its ring slot (pixels len apart)
 * to its place in out (pixels os2 apart): a word a pixel for four.
 * Inlined into dw3_ring, where its call of its own cost KWS about 30 k
 * estimated cycles (dw3_ring itself is not inlined into dw3_rows: with
 * it there, gcc found no registers for dw3_taps3 at -O3 on the M33 with
 * the frame pointer kept). */
BLOCK_INLINE void dw3_flush(const TnCrtConv2d *p, const int8_t *src,
                            int32_t len, int8_t *out) {
  /* the width in a local: out may alias *p, so the loop would reload it
   * after every store */
  const ptrdiff_t os2 = p->out_strides[2];
  const int8_t *const end = src + (ptrdiff_t)p->out_w * len;
  if (len == 4)
    for (; src < end; out += os2, src += 4) __builtin_memcpy(out, src, 4);
  else
    for (; src < end; out += os2, src += len)
      for (int32_t j = 0; j < len; j++) out[j] = src[j];
}

/* A row of a group of four from its ring slot src to out (pixels os2
 * apart), src to end: dw3_rows' flush, a leaf of four arguments, where
 * dw3_ring's call at every row cost KWS about 100 k estimated cycles (its
 * seven arguments, its frame, the ring's geometry read again). Not
 * inlined: with the copy inside dw3_rows, gcc found no registers for
 * dw3_taps3 at -O3 on the M33 with the frame pointer kept. In builds for
 * speed only (TN__DW3_FLUSH4). */
#if !defined(__OPTIMIZE_SIZE__)
#define TN__DW3_FLUSH4 1
#else /* -Os: 200 B more of KWS's flash, which its filing size has not */
#define TN__DW3_FLUSH4 0
#endif
static NOINLINE void dw3_flush4(int8_t *out, const int8_t *src,
                                const int8_t *end, ptrdiff_t os2) {
  for (; src < end; out += os2, src += 4) __builtin_memcpy(out, src, 4);
}

/* In place, after output row oy: the next ring slot, and out the row
 * whose input has had its last reader (as conv_blocks does); with oy
 * = out_h, the rows still in the ring. (dw3_rows does the same for a
 * group of four by dw3_flush4.) */
static NOINLINE void dw3_ring(const TnCrtConv2d *p, int8_t *ring,
                              ptrdiff_t slot_size, int32_t len, int8_t *out_n,
                              int32_t oy, int32_t *slot) {
  const int32_t rows = ring_rows(p);
  const ptrdiff_t os1 = p->out_strides[1];
  if (oy == p->out_h) {
    for (int32_t r = oy > p->pad_top ? oy - p->pad_top : 0; r < oy; r++)
      dw3_flush(p, ring + (r % rows) * slot_size, len, out_n + r * os1);
    return;
  }
  *slot = *slot + 1 == rows ? 0 : *slot + 1;
  if (oy >= p->pad_top)
    dw3_flush(p, ring + *slot * slot_size, len,
              out_n + (ptrdiff_t)(oy - p->pad_top) * os1);
}

/* The output columns [*fx0, *fx1) whose three input columns lie inside
 * the input (in uint32, where a pad near INT32_MAX still fits); also the
 * MVE form's (arm_mve/dw3x3_s8_mve.h). */
static void dw3_whole_cols(const TnCrtConv2d *p, int32_t *fx0,
                           int32_t *fx1) {
  const uint32_t sw = (uint32_t)p->stride_w, span = (uint32_t)p->in_w +
                                                    (uint32_t)p->pad_left;
  const uint32_t fx0u = ((uint32_t)p->pad_left + sw - 1) / sw;
  const uint32_t fx1u = span < 3 ? 0 : (span - 3) / sw + 1;
  *fx0 = fx0u > (uint32_t)p->out_w ? p->out_w : (int32_t)fx0u;
  *fx1 = fx1u > (uint32_t)p->out_w ? p->out_w : (int32_t)fx1u;
}

/* Where a group's rows of batch n (dw3_rows, and the MVE form's) read
 * and write: its first channel's input and output, the output pixels'
 * pitch (len in a ring slot of out_w * len bytes, in place), and the
 * output columns [fx0, fx1) whose windows' columns lie inside. */
typedef struct {
  const int8_t *xn;
  int8_t *out_n;
  ptrdiff_t ps2, slot_size;
  int32_t fx0, fx1;
} Dw3Walk;

static void dw3_walk(Dw3Walk *w, const Conv *c, int32_t c0, int32_t len,
                     int32_t n, int8_t *out, const int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  w->xn = c->in + (ptrdiff_t)n * p->in_strides[0] + c0;
  w->out_n = out + (ptrdiff_t)n * p->out_strides[0] + c0;
  w->ps2 = ring ? len : p->out_strides[2];
  w->slot_size = (ptrdiff_t)p->out_w * len;
  dw3_whole_cols(p, &w->fx0, &w->fx1);
}

/* Output row oy of a group's (dw3_rows, and the MVE form's): where its
 * bytes go (ring slot `slot` in place, else out_n's row oy), the input
 * row *iy0 of its windows' first taps, and their rows [*ky0, *ky1)
 * inside the input. */
BLOCK_INLINE int8_t *dw3_row_at(const TnCrtConv2d *p, int8_t *ring,
                                ptrdiff_t slot_size, int32_t slot,
                                int8_t *out_n, int32_t oy, int32_t *iy0,
                                int32_t *ky0, int32_t *ky1) {
  *iy0 = oy * p->stride_h - p->pad_top;
  taps(*iy0, 3, 1, p->in_h, ky0, ky1);
  return ring ? ring + slot * slot_size
              : out_n + (ptrdiff_t)oy * p->out_strides[1];
}

#if TN__DW3_VROWS
/* Whether a layer's groups of four requantized by dw3_q without a clamp
 * (DW3_FAST) have their rows two a pass (dw3_vrows): a 3x3 SAME layer at
 * stride 1 (a
 * pad of 1 on top and on the left, the output as large as the input) at
 * least two columns wide and three rows high, and six channels or more:
 * in place, the ring's scratch (two rows of up to 16 channels) then holds
 * three rows of the group (the pass's two and the row before them, which
 * still waits). */
static int dw3_vrows_ok(const TnCrtConv2d *p, const int8_t *ring) {
  return p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 1 &&
         p->pad_left == 1 && p->out_h == p->in_h && p->out_w == p->in_w &&
         p->in_w >= 2 && p->in_h >= 3 && p->out_c >= 6 &&
         (!ring || 3 * 4 <= ring_rows(p) * (p->out_c < BLK ? p->out_c : BLK));
}

/* The group's rows of batch n two a pass (dw3_vrows_ok holds): the first
 * row (its window's first row in the padding) by dw3_out_row, then pairs
 * of rows, the last pair's lower row cut by the padding, and a last row
 * left alone by dw3_out_row. In place, three slots of the ring: a pass
 * fills the two after the waiting row's, which then goes out with the
 * pass's upper row (whose input no later row reads). */
static NOINLINE void dw3_vrows(const Conv *c, const Dw3Group *g, int32_t c0,
                               int32_t n, int8_t *out, int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];
  const ptrdiff_t os1 = p->out_strides[1], os2 = p->out_strides[2];
  /* dw3_walk's, without its call: SAME at stride 1 has the whole windows
   * of the output columns [1, out_w - 1) */
  const int8_t *const xn = c->in + (ptrdiff_t)n * p->in_strides[0] + c0;
  int8_t *const out_n = out + (ptrdiff_t)n * p->out_strides[0] + c0;
  const ptrdiff_t ss = (ptrdiff_t)p->out_w * 4, ps2 = ring ? 4 : os2;
  const int32_t io2 = tn__crt_pair(c->io, c->io), h = p->out_h;
  const int32_t fx0 = 1, fx1 = p->out_w - 1;
  int32_t wait = 0; /* in place, the slot of the row that waits */
  dw3_out_row(c, g, xn, -1, 1, 3, fx0, fx1, ring ? ring : out_n, ps2,
              DW3_FAST, g->off, -128, 127);
  int32_t oy = 1;
  for (; oy + 1 < h; oy += 2) {
    const int32_t s1 = wait == 2 ? 0 : wait + 1, s2 = s1 == 2 ? 0 : s1 + 1;
    int8_t *const o = ring ? ring + s1 * ss : out_n + oy * os1;
    int8_t *const o2 = ring ? ring + s2 * ss : o + os1;
    const int8_t *const x = xn + (ptrdiff_t)(oy - 1) * is1;
    if (oy + 2 == h)
      dw3_vpass(g, x, is1, is2, p->out_w, o, o2, ps2, io2, 1);
    else
      dw3_vpass(g, x, is1, is2, p->out_w, o, o2, ps2, io2, 0);
    if (ring) {
      dw3_flush4(out_n + (ptrdiff_t)(oy - 1) * os1, ring + wait * ss,
                 ring + wait * ss + ss, os2);
      dw3_flush4(out_n + (ptrdiff_t)oy * os1, o, o + ss, os2);
      wait = s2;
    }
  }
  if (oy < h) { /* the last row, its window's third row in the padding */
    const int32_t s1 = wait == 2 ? 0 : wait + 1;
    dw3_out_row(c, g, xn, oy - 1, 0, 2, fx0, fx1,
                ring ? ring + s1 * ss : out_n + oy * os1, ps2, DW3_FAST,
                g->off, -128, 127);
    if (ring) {
      dw3_flush4(out_n + (ptrdiff_t)(oy - 1) * os1, ring + wait * ss,
                 ring + wait * ss + ss, os2);
      wait = s1;
    }
  }
  if (ring)
    dw3_flush4(out_n + (ptrdiff_t)(h - 1) * os1, ring + wait * ss,
               ring + wait * ss + ss, os2);
}
#endif

/* The group's rows of output for batch n: into out (rows os1 apart) or,
 * in place, through the ring (rows of out_w * len bytes in scratch). */
static NOINLINE void dw3_rows(const Conv *c, const Dw3Group *g, int32_t c0,
                              int32_t n, int32_t lo, int32_t hi, int8_t *out,
                              int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  const int32_t off = g->off;
  const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];
  const int32_t len = g->len;
  const int32_t rows = ring ? ring_rows(p) : 1;
  const ptrdiff_t os1 = p->out_strides[1], os2 = p->out_strides[2];
  Dw3Walk wk;
  dw3_walk(&wk, c, c0, len, n, out, ring);
  for (int32_t oy = 0, slot = 0; oy < p->out_h; oy++) {
    int32_t iy0, ky0, ky1;
    int8_t *o = dw3_row_at(p, ring, wk.slot_size, slot, wk.out_n, oy, &iy0,
                           &ky0, &ky1);
    /* (a crt without TN_CRT_CONV_FORM_DW3_ANY runs layers of DW3_FAST
     * groups alone: conv_run asks dw3_fast_only) */
    if (!TN__CONV_FORM(TN_CRT_CONV_FORM_DW3_ANY) ||
        (len == 4 && g->how == DW3_FAST))
      dw3_out_row(c, g, wk.xn, iy0, ky0, ky1, wk.fx0, wk.fx1, o, wk.ps2,
                  DW3_FAST, off, lo, hi);
    else if (len == 4)
      dw3_out_row(c, g, wk.xn, iy0, ky0, ky1, wk.fx0, wk.fx1, o, wk.ps2,
                  g->how, off, lo, hi);
    else
      for (int32_t ox = 0; ox < p->out_w; ox++, o += wk.ps2) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int32_t kx0, kx1, s[4];
        taps(ix0, 3, 1, p->in_w, &kx0, &kx1);
        const int8_t *x = wk.xn + ((ptrdiff_t)(iy0 + ky0) * is1 +
                                   (ptrdiff_t)(ix0 + kx0) * is2);
        for (int32_t j = 0; j < len; j++)
          s[j] = dw3_sum1(c, g, j, x + j, is1, is2, ky0, ky1, kx0, kx1,
                          c->w + c0 + j + ky0 * p->w_strides[0] +
                              kx0 * p->w_strides[1]);
        dw3_store(o, s, g, DW3_ANY, off, lo, hi);
      }
    if (TN__DW3_FLUSH4 && ring && len == 4) {
      /* dw3_ring's step, its copy by dw3_flush4 */
      slot = slot + 1 == rows ? 0 : slot + 1;
      if (oy >= p->pad_top) {
        const int8_t *src = ring + slot * wk.slot_size;
        dw3_flush4(wk.out_n + (ptrdiff_t)(oy - p->pad_top) * os1, src,
                   src + wk.slot_size, os2);
      }
    } else if (ring)
      dw3_ring(p, ring, wk.slot_size, len, wk.out_n, oy, &slot);
  }
  /* the rows still in the ring (dw3_ring's last step; for four channels
   * here too, so that no row of KWS's calls dw3_ring, whose frame sat on
   * top of dw3_rows') */
  if (TN__DW3_FLUSH4 && ring && len == 4)
    for (int32_t r = p->out_h > p->pad_top ? p->out_h - p->pad_top : 0;
         r < p->out_h; r++) {
      const int8_t *src = ring + (r % rows) * wk.slot_size;
      dw3_flush4(wk.out_n + r * os1, src, src + wk.slot_size, os2);
    }
  else if (ring)
    dw3_ring(p, ring, wk.slot_size, len, wk.out_n, p->out_h, NULL);
}

/* The layer (dsp_dw3_ok holds) into out; ring: in place, the caller's
 * scratch (tn_crt_conv2d_s8_inplace_scratch_size), else NULL. */
static NOINLINE void dsp_dw3(const Conv *c, const TnCrtQuant *q, int32_t lo,
                             int32_t hi, const int32_t *bias, int8_t *out,
                             int8_t *ring) {
  const TnCrtConv2d *p = c->p;
  const int act = lo > -128 || hi < 127;
  Dw3Group g;
#if TN__DW3_VROWS
  const int vrows = dw3_vrows_ok(p, ring);
#endif
  for (int32_t c0 = 0, len; c0 < p->out_c; c0 += len) {
    len = p->out_c - c0 < 4 ? p->out_c - c0 : 4;
    dw3_group(&g, c, q, bias, c0, len, act);
    for (int32_t n = 0; n < p->batch; n++)
#if TN__DW3_VROWS /* (called from here: its frame beside dw3_rows') */
      if (vrows && g.len == 4 && g.how == DW3_FAST)
        dw3_vrows(c, &g, c0, n, out, ring);
      else
#endif
        dw3_rows(c, &g, c0, n, lo, hi, out, ring);
  }
}

#endif /* TN_CRT_HAVE_ARM_DSP */

#endif /* TVMNODE_CRT_ARM_DSP_DW3X3_S8_DSP_H_ */
