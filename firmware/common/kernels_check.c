/*
 * kernels_check.c: the int8 convolution and dense kernels on the board,
 * checked byte for byte against a plain C reference built into the same
 * firmware.
 *
 * On a Cortex-M4 the kernels compile their "Cortex-M DSP" forms (SMLAD and
 * friends, runtime/crt/src/kernels/conv_s8.c, dense_s8.c, and quant.c's
 * ADD), which the
 * host never runs; this program runs them where they run. It draws random
 * geometries from a fixed seed (pointwise, depthwise with and without a
 * channel multiplier, regular and grouped, a keyword-spotting first layer,
 * OHWI and NCHW/OIHW layouts; strides, dilations, padding, odd channel
 * counts for the tails; depthwise 3x3 layers of strides 1 and 2 with every
 * padding and TFLite's offsets at their ends, for the DSP form of its own,
 * arm_dsp/dw3x3_s8_dsp.h, also SAME ones in place), random quantizations
 * (per channel or per tensor, TFLite's offsets and unusual ones,
 * multipliers and shifts across their range, offsets and biases large
 * enough to reach the requantization's corner cases, with or without a
 * bias) and random data, runs each through tn_crt_conv2d_s8 (out of place
 * without scratch and with the scratch tn_crt_conv2d_s8_scratch_size_isa
 * asks for the DSP forms, and in place where the geometry allows it),
 * tn_crt_conv2d_s8_s32, tn_crt_dense_s8 and tn_crt_dense_s8_s32, and
 * compares every output with the reference: TFLite's formula written as
 * nested loops over the taps, with tn_crt_multiply_by_quantized_multiplier
 * for the requantization. Output, one fact a line:
 *
 *   mismatch case 17 conv (description) at 203: got 12 want 13
 *   cases 600 conv 300 conv_scratch 300 conv_less 120 inplace 40 conv_s32 90 requant 150
 *   dense 150 dense_s32 45 dw3 40 dw3_inplace 6 dw3_wide 8 dw3_pair 20
 *   dw3_cut 30 dw3_pair_cut 10
 *   pw 120 pw_fast 40
 *   pw_wide 20 pw_unit 30 pw_gather 4 pw_gather_cut 3 pw_inside 9
 *   pw_tail 40 pw_quad6 25
 *   pw_quad6_entries 255 pw_quad6_turns 12 pw_mve 0 dw_mve 0 dense_folded 75
 *   dense_p4 110 dense_p4_dsp 14 dense_p4_mve 0 qadd_mve_checked 150 qadd_mve 0
 *   qadd 75 qadd_dsp 50
 *   instructions kernels 9123440 reference 80123000
 *   instructions conv_no_scratch 4000000 conv_scratch 2000000
 *   (the convolutions run both ways, without scratch and with it)
 *   failures 0
 *   done 0
 *
 * The first few mismatches of a case are printed with the geometry (which
 * ends in " dw3" when the depthwise 3x3 form took the case; dw3 and
 * dw3_inplace count those cases; " pw" when the DSP matrix product takes
 * it given its scratch, pw counting those run with it, preceded by
 * " pw-fast" when its fused assembly takes it, pw_fast counting those,
 * preceded by " pw-wide" when the case's shifts are beyond
 * tn__crt_requant_s8's (a quarter of the convolution cases are drawn so),
 * pw_wide counting those (the fused assembly takes them), " pw-unit"
 * when its columns are one input pixel each (pw_unit) and " pw-gather"
 * when some window inside the input is gathered first (pw_gather),
 * " pw-gather-cut" when some window the padding cuts is (pw_gather_cut),
 * pw_unit, pw_gather and pw_gather_cut counting those; " pw-inside"
 * when some window inside the input is copied by rows (pw_inside) and
 * " pw-tail" when pairs left to pw_sums end in a quad partly filled,
 * pw_inside and pw_tail counting those; " pw-quad6"
 * before " pw-fast" when the fused assembly runs in its fourteen-register
 * form (pw_pairs_fast14), pw_quad6
 * counting those (pw_quad6_entries, a mask of the blocks its turns of 64
 * taps were entered at, bit (8 - the window's blocks of eight) mod 8;
 * pw_quad6_turns, those of windows over 64 taps); " dw3-wide" before
 * " dw3" when a group of the form has shifts below -20 and bounded sums,
 * dw3_wide counting those cases; " dw3-pair" before " dw3" when the form
 * runs two output pixels a pass in the case, dw3_pair counting those;
 * " dw3-pair-cut" before " dw3" when it runs a row's last whole window
 * and the next, cut by the padding, as such a pair, dw3_pair_cut counting
 * those; " dw3-vrows" before " dw3" when it runs two output rows a pass
 * (a SAME layer at stride 1), dw3_vrows counting those;
 * " dw3-undoubled" before " dw3" when a group of the form that
 * requantizes by dw3_q has a bias beyond the bound of its doubled sums
 * (dw3_doubled), whose channel keeps its sums undoubled, dw3_undoubled
 * counting those;
 * " dw3-cut" before " dw3" when it unrolls a border window of two or
 * three rows and columns in the case, dw3_cut counting those;
 * pw_mve, of the pw cases those the MVE form ran, on a core with MVE:
 * the M55 (pw_mve_inside, of those, the ones with some window wholly
 * inside the input gathered by whole rows, mve_window: marked
 * " pw-mve-inside" before " pw"); " dw-mve" before " dw3" when the MVE form of the depthwise
 * 3x3 takes the case there (arm_mve/dw3x3_s8_mve.h), dw_mve counting
 * those (and " dw-mve-asm" before it, dw_mve_asm counting them, when
 * some window of a group of four runs in its assembly, and " dw-mve-same"
 * before that, dw_mve_same counting them, when some row of a group of four
 * runs as a SAME layer's row; " dw-mve-edge" before that, dw_mve_edge
 * counting them, when some window with one row cut runs in assembly;
 * " dw-mve-edge-pair" before that, dw_mve_edge_pair counting them, when it
 * runs two such windows a pass), and then neither dw3-wide nor dw3-pair, the DSP form's);
 * dw_any_mve, of the convolutions without scratch those the MVE form of
 * the other depthwise layers ran (arm_mve/dw_s8_mve.h), marked
 * " dw-any-mve" at the end, and dw_any_mve_inplace those it ran in place
 * (then KC_DW_COLUMN more convolution cases, depthwise layers of one
 * column of up to 15 taps, as the wake word's);
 * dense_p4_mve, of the dense_p4_dsp cases those the MVE form of the
 * dense layer ran (arm_mve/dense_s8_mve.h: mve_dense_ok), marked
 * " p4-mve" before " p4" (after the KC_CASES cases, KC_DENSE_P4 more
 * dense cases with offsets 0 and [N, K] weights, the layers
 * PackDenseWeights and FoldInputOffset give the Cortex-M, so that its
 * forms see many geometries);
 * pw_mve_run, of the pw_mve cases those whose whole turns run in the
 * MVE matrix product's assembly block (arm_mve/conv_s8_mve.h: mve_run),
 * marked " pw-mve-run" before " pw", and pw_mve_run_tensor of those the
 * ones with one multiplier and shift (its per-tensor form), marked
 * " pw-mve-run-tensor" before that;
 * pw_mve_64, of the pw_mve_run cases the 1x1 layers over 64 input
 * channels whose pixels pair off with no window walk
 * (arm_mve/conv_s8_mve.h: mve_pw64), marked " pw-mve-64" before
 * " pw-mve-run-tensor" (after every other case, KC_PW64 more convolution
 * cases, 1x1 layers of 64 input channels, which the main draws rarely
 * give);
 * qadd_mve_checked, int8 ADD cases (KC_QADD_MVE after those, through
 * tn_crt_qadd_s8, check_qadd_mve: runs with tails, rows with the rhs
 * broadcast, in place, parameters from tn_crt_qadd_params and drawn
 * across their ranges), and qadd_mve those the MVE form of the ADD ran
 * (arm_mve/add_s8_mve.h: qadd_mve_case), marked " qadd-mve";
 * qadd, the int8 ADD cases (after those, KC_QADD of them: runs and
 * broadcasts, in place or not, through tn_crt_call_qadd_s8 with the
 * scratch a Cortex-M plan gives it, against TFLite's formula), and qadd_dsp
 * those the DSP form of its table loop takes (arm_dsp/add_s8_dsp.h),
 * marked " qadd-dsp" at the end;
 * exit
 * code 0 when every output matched, 1 otherwise. KC_CASES and KC_SEED
 * (compile-time) set the number of cases and the seed. Built and run by
 * kernels_check.py.
 */
#include <stdint.h>
#include <string.h>

#include "measure.h"
#include "semihost.h"
#include "tvmnode/crt/calls.h"
#include "tvmnode/crt/kernels.h"

#ifndef KC_CASES
#define KC_CASES 600
#endif
#ifndef KC_SEED
#define KC_SEED 1
#endif
#ifndef KC_DENSE_P4
#define KC_DENSE_P4 (KC_CASES / 8)
#endif
#ifndef KC_DW_COLUMN
#define KC_DW_COLUMN (KC_CASES / 8)
#endif
#ifndef KC_QADD_MVE
#define KC_QADD_MVE (KC_CASES / 4)
#endif
#ifndef KC_QADD
#define KC_QADD (KC_CASES / 8)
#endif
#ifndef KC_PW64
#define KC_PW64 (KC_CASES / 8)
#endif

enum {
  MAX_IN = 8192,    /* bytes of input (and of an in-place buffer) */
  MAX_W = 24576,    /* bytes of weights */
  MAX_OUT = 8192,   /* output elements */
  MAX_CH = 80,      /* output channels or features */
  MAX_REPORT = 4,   /* mismatches printed per case */
  SCRATCH = 4096
};

static int8_t in_buf[MAX_IN] __attribute__((aligned(16)));
static int8_t w_buf[MAX_W] __attribute__((aligned(16)));
/* [N, K] weights packed by tn_crt_dense_s8_pack4 */
static int8_t wp_buf[MAX_W] __attribute__((aligned(16)));
static int8_t out_buf[MAX_IN > MAX_OUT ? MAX_IN : MAX_OUT]
    __attribute__((aligned(16)));
static int8_t ref_buf[MAX_OUT];
static int32_t out32[MAX_OUT], ref32[MAX_OUT];
static int32_t bias_buf[MAX_CH], mult_buf[MAX_CH], shift_buf[MAX_CH];
static uint8_t scratch[SCRATCH] __attribute__((aligned(16)));

static uint32_t failures;

/* ------------------------------------------------------------------------ */
/* Random numbers (xorshift32)                                                */
/* ------------------------------------------------------------------------ */

static uint32_t rng = KC_SEED * 2654435761u + 1u;

static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}
/* Uniform in [lo, hi]. */
static int32_t between(int32_t lo, int32_t hi) {
  return (int32_t)((int64_t)lo + (int64_t)(rnd() % ((uint32_t)(hi - lo) + 1u)));
}
static int chance(int percent) { return (int)(rnd() % 100u) < percent; }

static void fill(int8_t *p, int32_t n) {
  for (int32_t i = 0; i < n; i++) p[i] = (int8_t)rnd();
}

static int corner; /* the last random_quant made a corner case */

/* A quantization as a converter produces it, or one of the corners the
 * kernels must also get right. */
static void random_quant(TnCrtQuant *q, int32_t channels) {
  const int k = (int)(rnd() % 10u);
  /* TFLite's, about one in twelve of them 0 as FoldInputOffset gives it
   * (the matrix product's sums then start from the bias), the draws as
   * they were */
  const int32_t tfl = k < 7 ? between(-127, 128) : 0;
  q->input_offset = k < 7 ? (tfl > 108 ? 0 : tfl)
                    : k < 9 ? between(-32640, 32640)
                            : between(-100000, 100000);
  q->filter_offset = chance(80) ? 0
                     : chance(70) ? between(-127, 127)
                                  : between(-70000, 70000);
  const int o = (int)(rnd() % 20u);
  q->output_offset = o < 15   ? between(-128, 127)
                     : o < 17 ? between(-600, 600)
                     : o < 19 ? between(-(1 << 21), 1 << 21)
                              : (int32_t)rnd();
  q->act_min = -128, q->act_max = 127;
  if (chance(20)) {
    q->act_min = between(-128, 20);
    q->act_max = between(q->act_min, 127);
  } else if (chance(5)) {
    q->act_min = between(-1000, -128), q->act_max = between(127, 1000);
  }
  q->per_channel = chance(75);
  q->multiplier = mult_buf, q->shift = shift_buf;
  q->scale = NULL; /* the fixed-point requantization */
  const int32_t n = q->per_channel ? channels : 1;
  corner = chance(12);
  if (corner) { /* the rounding's corners: sums near +-2^31 (random_bias) */
    static const int32_t shifts[] = {-1,  -2,  -12, -16, -20, -20, 0,
                                     -21, -29, -30, -31, -32, 1};
    const int32_t shift = shifts[rnd() % 13u];
    const int small = chance(40); /* multipliers below 2^30 too */
    if (chance(50)) q->output_offset = between(-4, 4);
    for (int32_t c = 0; c < n; c++) {
      const int m = (int)(rnd() % 3u);
      mult_buf[c] = small && chance(50) ? (int32_t)(rnd() >> between(2, 16))
                    : m == 0            ? INT32_MAX - between(0, 1 << 24)
                    : m == 1            ? (1 << 30) + between(0, 1 << 24)
                                        : between(1 << 30, INT32_MAX);
      shift_buf[c] = chance(90) ? shift : shifts[rnd() % 13u];
    }
    return;
  }
  /* every channel as TFLite's converter makes them (the forms that
   * assume that for a whole layer), or a mix with unusual ones */
  const int usual = chance(40);
  for (int32_t c = 0; c < n; c++) {
    const int m = usual ? 0 : (int)(rnd() % 20u);
    mult_buf[c] = m < 17 ? between(1 << 30, INT32_MAX)
                  : m < 18 ? 0
                  : m < 19 ? between(0, 1 << 30)
                           : (int32_t)rnd(); /* negative ones too */
    const int s = usual ? 0 : (int)(rnd() % 20u);
    shift_buf[c] = s < 14 ? between(-12, -1)
                   : s < 16 ? between(-31, 0)
                   : s < 18 ? between(-33, 4)
                            : between(-2, 31);
  }
}

/* Biases small or large, or none (NULL); near +-2^31 after a corner
 * quantization. */
static const int32_t *random_bias(int32_t channels) {
  const int k = corner ? 9 : (int)(rnd() % 10u);
  if (k < 2) return NULL;
  for (int32_t c = 0; c < channels; c++)
    bias_buf[c] = k < 7   ? between(-40000, 40000)
                  : k < 9 ? (int32_t)rnd()
                  : chance(50) ? INT32_MAX - between(0, 1 << 22)
                               : INT32_MIN + between(0, 1 << 22);
  return bias_buf;
}

/* ------------------------------------------------------------------------ */
/* The reference                                                              */
/* ------------------------------------------------------------------------ */

/* TFLite's requantization of an accumulator, the offset added with
 * wrap-around. KC_BREAK_REFERENCE (a test of this program) puts it off by
 * one. */
static int8_t requant(uint32_t acc, const TnCrtQuant *q, int32_t c) {
  const int32_t k = q->per_channel ? c : 0;
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  int32_t v = (int32_t)(
      (uint32_t)tn_crt_multiply_by_quantized_multiplier(
          (int32_t)acc, q->multiplier[k], q->shift[k]) +
      (uint32_t)q->output_offset);
#if defined(KC_BREAK_REFERENCE) && KC_BREAK_REFERENCE
  v = v < INT32_MAX ? v + 1 : v;
#endif
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* sum((x + io) * (w + fo)) over the taps inside the input, + bias: TFLite's
 * ConvPerChannel as loops, mod 2^32. */
static uint32_t conv_acc(const TnCrtConv2d *p, int32_t io, int32_t fo,
                         const int32_t *bias, int32_t n, int32_t oy,
                         int32_t ox, int32_t co) {
  const int32_t cpg = p->in_c / p->groups, fpg = p->out_c / p->groups;
  const int32_t g = co / fpg;
  uint32_t acc = bias ? (uint32_t)bias[co] : 0;
  for (int32_t ky = 0; ky < p->k_h; ky++) {
    const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) continue;
    for (int32_t kx = 0; kx < p->k_w; kx++) {
      const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
      if (ix < 0 || ix >= p->in_w) continue;
      for (int32_t ci = 0; ci < cpg; ci++) {
        const int32_t x =
            in_buf[n * p->in_strides[0] + iy * p->in_strides[1] +
                   ix * p->in_strides[2] + (g * cpg + ci) * p->in_strides[3]];
        const int32_t w =
            w_buf[ky * p->w_strides[0] + kx * p->w_strides[1] +
                  ci * p->w_strides[2] + co * p->w_strides[3]];
        acc += ((uint32_t)x + (uint32_t)io) * ((uint32_t)w + (uint32_t)fo);
      }
    }
  }
  return acc;
}

/* ------------------------------------------------------------------------ */
/* Checking                                                                   */
/* ------------------------------------------------------------------------ */

/* " key" and the value, on the current line. */
static void kv(const char *key, int64_t v) {
  fw_str(key);
  fw_i64(v);
}

/* Whether the kernels are compiled with their MVE forms (the switch
 * isa.h's TN_CRT_HAVE_ARM_MVE reads: the M55). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && \
    defined(__ARM_FEATURE_DSP) && !defined(TN_CRT_NO_MVE)
enum { KC_MVE = 1 };
#else
enum { KC_MVE = 0 };
#endif

static int dw_mve_case(const TnCrtConv2d *p, const TnCrtQuant *q);

/* Whether the depthwise 3x3 DSP form takes the case (arm_dsp/
 * dw3x3_s8_dsp.h: dsp_dw3_ok, conv_s8.c's DW mode), or on a core with
 * MVE, its MVE form where dw_mve_case holds. */
static int dw3_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return p->k_h == 3 && p->k_w == 3 && p->groups == p->in_c &&
         p->out_c == p->in_c && p->dilation_h == 1 && p->dilation_w == 1 &&
         p->stride_h <= 2 && p->stride_w <= 2 && p->in_strides[3] == 1 &&
         p->out_strides[3] == 1 && p->w_strides[3] == 1 &&
         q->filter_offset == 0 && q->input_offset >= -127 &&
         q->input_offset <= 128 && q->scale == NULL;
}

/* Whether the MVE form of the other depthwise layers takes a case out of
 * place (arm_mve/dw_s8_mve.h: mve_dw_ok, reached where neither the
 * matrix product nor the depthwise 3x3 forms take it): a core with MVE,
 * channel multiplier 1, channels contiguous, filter offset 0, every
 * multiplier >= 0 and every shift in [-31, -1]. */
static int dw_any_mve_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!KC_MVE || dw3_case(p, q) || p->groups != p->in_c ||
      p->out_c != p->in_c || q->filter_offset != 0 || q->scale != NULL ||
      p->in_strides[3] != 1 || p->out_strides[3] != 1 ||
      p->w_strides[3] != 1)
    return 0;
  for (int32_t j = 0; j < (q->per_channel ? p->out_c : 1); j++)
    if (q->multiplier[j] < 0 || q->shift[j] > -1 || q->shift[j] < -31)
      return 0;
  return 1;
}

/* Whether that form takes a case in place too (mve_dw_ok's in_place):
 * one column of taps, stride 1 across, no padding on top, the same
 * strides in and out. */
static int dw_any_mve_inplace(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return dw_any_mve_case(p, q) && p->k_w == 1 && p->stride_w == 1 &&
         p->pad_left == 0 && p->pad_top == 0 && p->in_w == p->out_w &&
         p->in_strides[0] == p->out_strides[0] &&
         p->in_strides[1] == p->out_strides[1] &&
         p->in_strides[2] == p->out_strides[2];
}

/* Whether that form runs some sixteen channels of a case in its column
 * layers' assembly (mve_dw_col_ok and mve_dw_col16: one tap across, no
 * padding across, the last output column's input inside, at least
 * sixteen channels): marked " dw-mve-col" before " dw-any-mve",
 * dw_mve_col counting those. */
static int dw_mve_col_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return dw_any_mve_case(p, q) && p->k_w == 1 && p->pad_left == 0 &&
         (int64_t)(p->out_w - 1) * p->stride_w < p->in_w && p->out_c >= 16;
}

/* Whether a depthwise 3x3 case has a group of four channels that the
 * form requantizes with a shift below -20 (arm_dsp/dw3x3_s8_dsp.h:
 * dw3_group, dw3_wide_ok): TFLite's output offset, every channel of the
 * group's in tn__crt_requant_s8's range (pw_quant_ok), or with a
 * multiplier of 0, or above 0 with a shift in [-31, -1], and its sums
 * bounded (its bias within 2^30 less nine taps of 255 * 128); with wide
 * 0, whether it has a group requantized so at all (DW3_FAST or
 * DW3_FAST_ACT); with wide 2, such a group with a bias beyond that bound
 * (dw3_doubled's). */
static int dw3_fast_group(const TnCrtConv2d *p, const TnCrtQuant *q,
                          const int32_t *bias, int wide) {
  if (!dw3_case(p, q) || q->output_offset < -128 || q->output_offset > 127)
    return 0;
  const int32_t lim = (INT32_C(1) << 30) - 9 * 255 * 128;
  for (int32_t c0 = 0; c0 + 4 <= p->out_c; c0 += 4) {
    int ok = 1, beyond = 0, out = 0;
    for (int32_t c = c0; c < c0 + 4; c++) {
      const int32_t k = q->per_channel ? c : 0;
      const int32_t m = q->multiplier[k], s = q->shift[k];
      const int32_t b = bias ? bias[c] : 0;
      out = out || b < -lim || b >= lim;
      const int fast = m >= 0 && (m == 0 || m >= (INT32_C(1) << 30)) &&
                       s <= -1 && s >= -20; /* pw_quant_ok */
      ok = ok && (fast || ((m == 0 || (m > 0 && s <= -1 && s >= -31)) &&
                           b >= -lim && b < lim));
      beyond = beyond || (m > 0 && s < -20);
    }
    if (ok && (wide == 2 ? out : beyond || !wide)) return 1;
  }
  return 0;
}

/* Whether the MVE form of the depthwise 3x3 takes the case in the DSP
 * form's place (arm_mve/dw3x3_s8_mve.h: mve_dw3_ok): a core with MVE, and
 * every multiplier >= 0 with a shift in [-31, -1], an int8 output offset. */
static int dw_mve_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!KC_MVE || !dw3_case(p, q) || q->output_offset < -128 ||
      q->output_offset > 127)
    return 0;
  for (int32_t k = 0; k < (q->per_channel ? p->out_c : 1); k++)
    if (q->multiplier[k] < 0 || q->shift[k] > -1 || q->shift[k] < -31)
      return 0;
  return 1;
}

/* Whether the MVE depthwise 3x3 runs some window of the case in its
 * assembly (arm_mve/dw3x3_s8_mve.h: mve_dw3_pair_asm, mve_dw3_whole_asm,
 * mve_dw3_cols2_asm): a group of four channels (out_c >= 4) and some
 * output pixel whose window's three rows and at least two of its columns
 * lie inside the input. */
static int dw_mve_asm_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!dw_mve_case(p, q) || p->out_c < 4) return 0;
  int rows = 0, cols = 0;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy = oy * p->stride_h - p->pad_top;
    rows |= iy >= 0 && iy + 2 < p->in_h;
  }
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix = ox * p->stride_w - p->pad_left;
    cols |= (ix >= 0 && ix + 1 < p->in_w) || (ix == -1 && p->in_w >= 2);
  }
  return rows && cols;
}

/* The number of output columns whose window's three columns lie inside
 * the input, and whether some output row's window has exactly `rows`
 * rows inside. */
static int32_t dw3_whole_cols(const TnCrtConv2d *p) {
  int32_t n = 0;
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix = ox * p->stride_w - p->pad_left;
    n += ix >= 0 && ix + 3 <= p->in_w;
  }
  return n;
}
static int dw3_rows_inside(const TnCrtConv2d *p, int32_t rows) {
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy = oy * p->stride_h - p->pad_top;
    if ((iy + 3 < p->in_h ? iy + 3 : p->in_h) - (iy > 0 ? iy : 0) == rows)
      return 1;
  }
  return 0;
}

/* Whether the MVE depthwise 3x3 runs some row of the case by its SAME
 * row (arm_mve/dw3x3_s8_mve.h: mve_dw3_same_ok, mve_dw3_row_same): a
 * group of four, stride_w 1, pad_left 1, as wide as the input (at least
 * two columns), and some output row whose three input rows lie inside. */
static int dw_mve_same_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!dw_mve_case(p, q) || p->out_c < 4 || p->stride_w != 1 ||
      p->pad_left != 1 || p->in_w != p->out_w || p->out_w < 2)
    return 0;
  return dw3_rows_inside(p, 3);
}

/* Whether it runs some window with one row cut in its assembly
 * (mve_dw3_edge_asm): a group of four channels and some output pixel
 * whose window has exactly two rows and at least two columns inside the
 * input (the top and bottom rows of a SAME layer). */
static int dw_mve_edge_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!dw_mve_case(p, q) || p->out_c < 4 || !dw3_rows_inside(p, 2)) return 0;
  int cols = 0;
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix = ox * p->stride_w - p->pad_left;
    const int32_t in = (ix + 3 < p->in_w ? ix + 3 : p->in_w) -
                       (ix > 0 ? ix : 0);
    cols |= in >= 2;
  }
  return cols;
}

/* Whether it runs two windows a pass in its assembly where one row is
 * cut (mve_dw3_edge_pair_asm: stride_w 1). */
static int dw_mve_edge_pair_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return dw_mve_case(p, q) && p->out_c >= 4 && p->stride_w == 1 &&
         dw3_whole_cols(p) >= 2 && dw3_rows_inside(p, 2);
}

/* (the DSP form's wide groups and pairs: not where the MVE form runs) */
static int dw3_wide_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                         const int32_t *bias) {
  return !dw_mve_case(p, q) && dw3_fast_group(p, q, bias, 1);
}

/* Where the depthwise 3x3 form runs two output pixels a pass
 * (dw3x3_s8_dsp.h: dw3_out_row, dw3_whole4x2; optimised for speed, not
 * -Os): stride_w 1, no activation's clamp, a group of four channels
 * requantized by dw3_q (DW3_FAST) and an output row whose window rows all
 * lie inside the input; then the count of a row's output columns whose
 * windows do too, else 0. */
static int dw3_vrows_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                          const int32_t *bias);

static int32_t dw3_pair_whole(const TnCrtConv2d *p, const TnCrtQuant *q,
                              const int32_t *bias) {
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
  if (p->stride_w != 1 || q->act_min > -128 || q->act_max < 127 ||
      dw_mve_case(p, q) || !dw3_fast_group(p, q, bias, 0) ||
      dw3_vrows_case(p, q, bias))
    return 0;
  int row = 0;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    row |= iy0 >= 0 && iy0 + 3 <= p->in_h;
  }
  int32_t whole = 0;
  for (int32_t ox = 0; ox < p->out_w; ox++)
    whole += ox >= p->pad_left && ox - p->pad_left + 3 <= p->in_w;
  return row ? whole : 0;
#else
  (void)p, (void)q, (void)bias;
  return 0;
#endif
}

/* Whether the depthwise 3x3 form runs two output rows a pass in the
 * case (dw3x3_s8_dsp.h: dw3_vrows_ok, dw3_vrows; optimised for speed,
 * not -Os): no activation's clamp, a group of four channels requantized
 * by dw3_q (DW3_FAST), a SAME layer at stride 1 (a pad of 1 on top and
 * on the left, the output as large as the input), at least two columns,
 * three rows and six channels; not on a core with MVE. Its layers' rows
 * take no pair side by side (dw3_pair_whole). */
static int dw3_vrows_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                          const int32_t *bias) {
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && \
    !defined(__ARM_FEATURE_MVE)
  return p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 1 &&
         p->pad_left == 1 && p->out_h == p->in_h && p->out_w == p->in_w &&
         p->in_w >= 2 && p->in_h >= 3 && p->out_c >= 6 &&
         q->act_min <= -128 && q->act_max >= 127 && !dw_mve_case(p, q) &&
         dw3_fast_group(p, q, bias, 0);
#else
  (void)p, (void)q, (void)bias;
  return 0;
#endif
}

/* Whether it does so somewhere in the case: two whole windows a row. */
static int dw3_pair_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                         const int32_t *bias) {
  return dw3_pair_whole(p, q, bias) >= 2;
}

/* Whether it runs its pair with the second window cut (dw3_whole4x2 with
 * cut): an odd count of whole windows a row (the pairs leave the last
 * alone) and a pixel after them, whose window has then lost its third
 * column alone. */
static int dw3_pair_cut_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int32_t *bias) {
  const int32_t whole = dw3_pair_whole(p, q, bias);
  return whole % 2 == 1 && p->pad_left + whole < p->out_w;
}

/* Whether a group of four that the DSP form requantizes by dw3_q (as
 * dw3_fast_group asks) has a channel whose bias lies beyond 2^30 less
 * nine taps of 255 * 128 either way, whose sums the form does not double
 * (dw3_doubled). */
static int dw3_undoubled_case(const TnCrtConv2d *p, const TnCrtQuant *q,
                              const int32_t *bias) {
  return !dw_mve_case(p, q) && dw3_fast_group(p, q, bias, 2);
}

/* Whether the depthwise 3x3 DSP form unrolls a border window somewhere in
 * the case (dw3x3_s8_dsp.h: dw3_part4, dw3_cut4; optimised for speed,
 * not -Os): a group of four channels, and an output pixel whose window
 * has two or three of its rows and two or three of its columns inside
 * the input, not all nine taps. Rows and columns are independent, so the
 * counts each takes are gathered apart (bit n: a count of n). */
static int dw3_cut_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
  if (!dw3_case(p, q) || dw_mve_case(p, q) || p->out_c < 4) return 0;
  int rows = 0, cols = 0;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    int n = 0;
    for (int32_t k = 0; k < 3; k++) n += iy0 + k >= 0 && iy0 + k < p->in_h;
    rows |= 1 << n;
  }
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int n = 0;
    for (int32_t k = 0; k < 3; k++) n += ix0 + k >= 0 && ix0 + k < p->in_w;
    cols |= 1 << n;
  }
  return ((rows & 4) && (cols & 12)) || ((rows & 8) && (cols & 4));
#else
  (void)p, (void)q;
  return 0;
#endif
}

/* Whether the DSP matrix product takes the case, given its scratch
 * (arm_dsp/conv_s8_dsp.h: dsp_pw_ok): one group, TFLite's offsets, each
 * output channel's taps in a row (OHWI or OIHW). */
static int pw_geometry(const TnCrtConv2d *p) {
  const int32_t *ws = p->w_strides;
  const int32_t k = p->k_h * p->k_w * p->in_c;
  const int ohwi = ws[2] == 1 && ws[1] == p->in_c && ws[0] == p->k_w * ws[1];
  const int oihw = ws[1] == 1 && ws[0] == p->k_w && ws[2] == p->k_h * p->k_w;
  return p->groups == 1 && p->out_c <= 1024 && p->out_strides[3] == 1 &&
         k <= 1024 && ws[3] == k && (ohwi || oihw);
}

static int pw_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return pw_geometry(p) && q->filter_offset == 0 &&
         q->input_offset >= -127 && q->input_offset <= 128 &&
         q->scale == NULL;
}

/* Whether the columns' paths for speed are compiled in (arm_dsp/
 * conv_s8_dsp.h: TN__PW_SPEED, not in builds for size). */
#if defined(__OPTIMIZE_SIZE__)
enum { KC_PW_SPEED = 0 };
#else
enum { KC_PW_SPEED = 1 };
#endif

/* Whether the matrix product's case has its columns made one input pixel
 * each (arm_dsp/conv_s8_dsp.h: pw_unit_ok): 1x1, channels contiguous,
 * no pixel outside. */
static int pw_unit_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return KC_PW_SPEED && pw_case(p, q) && p->k_h == 1 && p->k_w == 1 &&
         p->in_strides[3] == 1 && p->pad_top == 0 && p->pad_left == 0 &&
         (p->out_h - 1) * p->stride_h < p->in_h &&
         (p->out_w - 1) * p->stride_w < p->in_w;
}

/* Whether some output pixel's window (undilated columns) lies wholly
 * inside the input (inside 1), or whether the padding cuts some pixel's
 * window (inside 0). */
static int some_window(const TnCrtConv2d *p, int inside) {
  int rows = 0, cols = 0, cut_rows = 0, cut_cols = 0;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy = oy * p->stride_h - p->pad_top;
    const int in = iy >= 0 && iy + (p->k_h - 1) * p->dilation_h < p->in_h;
    rows |= in, cut_rows |= !in;
  }
  for (int32_t ox = 0; ox < p->out_w; ox++) {
    const int32_t ix = ox * p->stride_w - p->pad_left;
    const int in = ix >= 0 && ix + p->k_w - 1 < p->in_w;
    cols |= in, cut_cols |= !in;
  }
  return inside ? rows && cols : cut_rows || cut_cols;
}

/* Whether the matrix product's case has its windows gathered first
 * (pw_gather_ok): OHWI over channels-contiguous NHWC, undilated columns,
 * two rows or more, at most 64 taps; then, with cut 0, whether some
 * window lies inside the input (pw_gather), with cut 1 whether the
 * padding cuts some window (pw_gather_cut). */
static int pw_gather_case_of(const TnCrtConv2d *p, const TnCrtQuant *q,
                             int cut) {
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  const int32_t len = p->k_w * p->in_c;
  if (!KC_PW_SPEED || !pw_case(p, q) || p->k_h < 2 || ws[2] != 1 ||
      ws[1] != p->in_c || ws[0] != len || is[3] != 1 || is[2] != p->in_c ||
      p->dilation_w != 1 || p->k_h * len > 64)
    return 0;
  return some_window(p, !cut);
}

static int pw_gather_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return pw_gather_case_of(p, q, 0);
}

static int pw_gather_cut_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return pw_gather_case_of(p, q, 1);
}

/* Whether the matrix product copies some window of the case, wholly
 * inside the input, by rows (arm_dsp/conv_s8_dsp.h: pw_inside,
 * pw_inside_ok): in builds for speed on a core without MVE, a case
 * neither pw_unit's nor gathered (pw_gather_ok: some window then lies
 * inside or is cut), OHWI over channels-contiguous NHWC, undilated
 * columns, window rows of whole words, and some pixel whose window lies
 * inside. */
static int pw_inside_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  const int32_t len = p->k_w * p->in_c;
  if (!KC_PW_SPEED || KC_MVE || !pw_case(p, q) || pw_unit_case(p, q) ||
      pw_gather_case(p, q) || pw_gather_cut_case(p, q) || ws[2] != 1 ||
      ws[1] != p->in_c || ws[0] != len || is[3] != 1 || is[2] != p->in_c ||
      p->dilation_w != 1 || (len & 3) != 0)
    return 0;
  return some_window(p, 1);
}

/* Whether the matrix product's pairs of channels left to pw_sums (the
 * last pair at least, where the window is not whole words of eight taps)
 * end in a quad partly filled taken as a whole one (arm_dsp/
 * conv_s8_dsp.h: pw_sums): in builds for speed on a core without MVE, a
 * window of four taps or more, not a multiple of four. */
static int pw_tail_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  const int32_t n = p->k_h * p->k_w * p->in_c;
  return KC_PW_SPEED && !KC_MVE && pw_case(p, q) && n >= 4 && (n & 3) != 0;
}

/* Whether the MVE matrix product (arm_mve/conv_s8_mve.h: mve_window) takes
 * some window of the case wholly inside the input, in place of
 * mve_im2col, and gathers it by whole rows (or, a 1x1 layer out of
 * place, reads it where it lies): a core with MVE, OHWI over
 * channels-contiguous NHWC, undilated columns, and some pixel whose
 * window lies inside. */
static int pw_mve_inside_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  if (!KC_MVE || !pw_case(p, q) || ws[2] != 1 ||
      ws[1] != p->in_c || ws[0] != p->k_w * p->in_c || is[3] != 1 ||
      is[2] != p->in_c || p->dilation_w != 1)
    return 0;
  return some_window(p, 1);
}

/* Whether the MVE matrix product runs the case's whole turns in its
 * assembly block (arm_mve/conv_s8_mve.h: mve_run): a core with MVE, four
 * channels or more, and the requantization pw_mode does not call PW_ANY
 * (an output offset in int8's range, and every channel's multiplier and
 * shift PW_FAST's or every one PW_WIDE's); with per_tensor 1, of those
 * the ones with one multiplier and shift (its second form). */
static int pw_mve_run_case_of(const TnCrtConv2d *p, const TnCrtQuant *q,
                              int per_tensor) {
  if (!KC_MVE || !pw_case(p, q) || p->out_c < 4 || q->output_offset < -128 ||
      q->output_offset > 127 || (per_tensor && q->per_channel))
    return 0;
  int fast = 1, wide = 1;
  for (int32_t c = 0; c < (q->per_channel ? p->out_c : 1); c++) {
    const int32_t m = q->multiplier[c], s = q->shift[c];
    fast = fast && m >= 0 && (m == 0 || m >= (INT32_C(1) << 30)) && s <= -1 &&
           s >= -20;
    wide = wide && (m == 0 || (m > 0 && s <= -2 && s >= -31));
  }
  return fast || wide;
}

static int pw_mve_run_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return pw_mve_run_case_of(p, q, 0);
}

/* Whether the MVE matrix product takes the case's pixel pairs by its 1x1
 * block of 64 taps (arm_mve/conv_s8_mve.h: mve_pw64_ok): a pw_mve_run
 * case, 1x1, stride 1, no padding, 64 input channels, out_c a multiple of
 * 4, OHWI weights, and both tensors NHWC with no gaps. */
static int pw_mve_64_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  const int32_t *is = p->in_strides, *os = p->out_strides;
  const int32_t oc = p->out_c;
  return pw_mve_run_case(p, q) && p->k_h == 1 && p->k_w == 1 &&
         p->in_c == 64 && oc % 4 == 0 && p->w_strides[2] == 1 &&
         p->w_strides[3] == 64 && p->stride_h == 1 && p->stride_w == 1 &&
         p->pad_top == 0 && p->pad_left == 0 && p->out_h == p->in_h &&
         p->out_w == p->in_w && is[3] == 1 && is[2] == 64 &&
         is[1] == 64 * p->in_w && is[0] == is[1] * p->in_h && os[2] == oc &&
         os[1] == oc * p->out_w && os[0] == os[1] * p->out_h;
}

/* Whether the matrix product's case takes its fused assembly's first
 * form (arm_dsp/conv_s8_dsp.h: pw_pairs_fast): per-channel multipliers
 * and shifts, every channel's in tn__crt_requant_s8's range (pw_mode's
 * PW_FAST), and no activation narrower than int8. */
static int pw_fast_quant(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!pw_case(p, q) || !q->per_channel || q->output_offset < -128 ||
      q->output_offset > 127 || q->act_min > -128 || q->act_max < 127)
    return 0;
  for (int32_t c = 0; c < p->out_c; c++) {
    const int32_t m = q->multiplier[c], s = q->shift[c];
    if (m < 0 || (m != 0 && m < (INT32_C(1) << 30)) || s > -1 || s < -20)
      return 0;
  }
  return 1;
}

/* Whether a case of the matrix product that pw_fast_quant refuses has
 * what pw_mode calls PW_WIDE (every channel's multiplier 0, or positive
 * with a shift in [-31, -2]: shifts below -20, VWW's), per-channel, with
 * offsets and activation as pw_fast_quant asks: the cases of the fused
 * assembly's 64-bit requantization (pw_pairs_wide). */
static int pw_wide_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  if (!pw_case(p, q) || !q->per_channel || q->output_offset < -128 ||
      q->output_offset > 127 || q->act_min > -128 || q->act_max < 127 ||
      pw_fast_quant(p, q))
    return 0;
  for (int32_t c = 0; c < p->out_c; c++) {
    const int32_t m = q->multiplier[c], s = q->shift[c];
    if (m < 0 || (m > 0 && (s > -2 || s < -31))) return 0;
  }
  return 1;
}

/* Whether the matrix product's case also takes its fused assembly
 * (arm_dsp/conv_s8_dsp.h: pw_pairs_fast, pw_pairs_wide): per-channel
 * multipliers and shifts, every channel's in tn__crt_requant_s8's range
 * (pw_mode's PW_FAST) or PW_WIDE's, and no activation narrower than
 * int8. */
static int pw_fast_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  return pw_fast_quant(p, q) || pw_wide_case(p, q);
}

/* Whether the fused assembly runs the case in its fourteen-register form
 * (arm_dsp/conv_s8_dsp.h: pw_pairs_fast14, pw_pairs_wide14: six loads a
 * quad), in builds for speed on a core without MVE: 16 quads a call or
 * more, the pairs pw_pairs_max counts (all but the last where the window
 * is not whole words of eight taps) times the window's words of four. */
static int pw_quad6_case(const TnCrtConv2d *p, const TnCrtQuant *q) {
  const int32_t ws = p->k_h * p->k_w * p->in_c, n8 = (ws + 7) & ~7;
  int32_t back = 1;
  if (!KC_PW_SPEED || KC_MVE || !pw_fast_case(p, q)) return 0;
  while (back * ws < n8) back++;
  const int32_t pairs =
      p->out_c - back - 1 >= 0 ? (p->out_c - back - 1) / 2 + 1 : 0;
  return pairs > 0 && pairs * (n8 >> 2) >= 16;
}

/* Of a case pw_quad6_case counts, the block of eight taps its turns of
 * 64 are entered at, (8 - the window's blocks) mod 8, as a bit of a mask
 * (the cases should reach all eight entries); and whether its window
 * takes more than one turn. */
static int32_t pw_quad6_entry(const TnCrtConv2d *p) {
  const int32_t n8 = (p->k_h * p->k_w * p->in_c + 7) & ~7;
  return INT32_C(1) << ((8 - (n8 >> 3)) & 7);
}

static int pw_quad6_turns(const TnCrtConv2d *p) {
  return ((p->k_h * p->k_w * p->in_c + 7) & ~7) > 64;
}

/* The line that names a convolution case with mismatches. */
static void describe_conv(int32_t index, const TnCrtConv2d *p,
                          const TnCrtQuant *q, const int32_t *bias) {
  kv("case ", index);
  kv(" n=", p->batch);
  kv(" in=", p->in_h), kv("x", p->in_w), kv("x", p->in_c);
  kv(" out=", p->out_h), kv("x", p->out_w), kv("x", p->out_c);
  kv(" k=", p->k_h), kv("x", p->k_w);
  kv(" stride=", p->stride_h), kv(",", p->stride_w);
  kv(" dilation=", p->dilation_h), kv(",", p->dilation_w);
  kv(" pad=", p->pad_top), kv(",", p->pad_left);
  kv(" groups=", p->groups);
  kv(" w_strides=", p->w_strides[0]), kv(",", p->w_strides[1]);
  kv(",", p->w_strides[2]), kv(",", p->w_strides[3]);
  kv(" in_c_stride=", p->in_strides[3]);
  kv(" io=", q->input_offset), kv(" fo=", q->filter_offset);
  kv(" off=", q->output_offset);
  kv(" act=", q->act_min), kv(",", q->act_max);
  kv(" per_channel=", q->per_channel);
  fw_str(bias ? " bias" : " no-bias");
  if (dw3_wide_case(p, q, bias)) fw_str(" dw3-wide");
  if (dw3_pair_case(p, q, bias)) fw_str(" dw3-pair");
  if (dw3_pair_cut_case(p, q, bias)) fw_str(" dw3-pair-cut");
  if (dw3_vrows_case(p, q, bias)) fw_str(" dw3-vrows");
  if (dw3_undoubled_case(p, q, bias)) fw_str(" dw3-undoubled");
  if (dw3_cut_case(p, q)) fw_str(" dw3-cut");
  if (dw_mve_same_case(p, q)) fw_str(" dw-mve-same");

  if (dw_mve_edge_pair_case(p, q)) fw_str(" dw-mve-edge-pair");
  if (dw_mve_edge_case(p, q)) fw_str(" dw-mve-edge");
  if (dw_mve_asm_case(p, q)) fw_str(" dw-mve-asm");
  if (dw_mve_case(p, q)) fw_str(" dw-mve");
  if (dw3_case(p, q)) fw_str(" dw3");
  if (pw_wide_case(p, q)) fw_str(" pw-wide");
  if (pw_quad6_case(p, q)) fw_str(" pw-quad6");
  if (pw_fast_case(p, q)) fw_str(" pw-fast");
  if (pw_unit_case(p, q)) fw_str(" pw-unit");
  if (pw_gather_case(p, q)) fw_str(" pw-gather");
  if (pw_gather_cut_case(p, q)) fw_str(" pw-gather-cut");
  if (pw_mve_inside_case(p, q)) fw_str(" pw-mve-inside");
  if (pw_mve_64_case(p, q)) fw_str(" pw-mve-64");
  if (pw_mve_run_case_of(p, q, 1)) fw_str(" pw-mve-run-tensor");
  if (pw_mve_run_case(p, q)) fw_str(" pw-mve-run");
  if (pw_inside_case(p, q)) fw_str(" pw-inside");
  if (pw_tail_case(p, q)) fw_str(" pw-tail");
  if (pw_case(p, q)) fw_str(" pw");
  if (dw_mve_col_case(p, q)) fw_str(" dw-mve-col");
  if (dw_any_mve_case(p, q)) fw_str(" dw-any-mve");
  fw_endl();
}

/* Counts a case's mismatches and prints the first few; calls counts the
 * kernel's calls. */
typedef struct {
  int32_t bad;
  int32_t index;
  const char *what;
  int32_t *calls;
} Compare;

static void mismatch(Compare *cmp, int32_t i, int64_t got, int64_t want) {
  if (cmp->bad++ == 0) failures++;
  if (cmp->bad > MAX_REPORT) return;
  fw_str("mismatch case ");
  fw_i64(cmp->index);
  fw_str(" ");
  fw_str(cmp->what);
  fw_str(" at ");
  fw_i64(i);
  fw_str(": got ");
  fw_i64(got);
  fw_str(" want ");
  fw_i64(want);
  fw_endl();
}

static uint64_t kernel_ticks, reference_ticks;
/* the convolutions run both ways: without scratch, and with the DSP's */
static uint64_t no_scratch_ticks, scratch_ticks;
static int32_t n_conv, n_scratch, n_less, n_inplace, n_conv32, n_requant, n_dense, n_dense32;
static int32_t n_dw3, n_dw3_inplace; /* cases of the depthwise 3x3 form */
static int32_t n_dw3_wide; /* of those, with a group requantized wide */
static int32_t n_dw3_pair; /* of those, with two pixels a pass */
static int32_t n_dw3_pair_cut; /* of those, with such a pair cut */
static int32_t n_dw3_vrows; /* of those, with two rows a pass */
static int32_t n_dw3_undoubled; /* of those, a dw3_q group's sums undoubled */
static int32_t n_dw3_cut; /* of those, with border windows unrolled */
static int32_t n_pw; /* cases of the matrix product, with its scratch */
static int32_t n_pw_fast; /* of those, its fused assembly's */
static int32_t n_pw_wide; /* of those, with shifts beyond PW_FAST's */
static int32_t n_pw_unit; /* of n_pw, with columns one pixel each */
static int32_t n_pw_quad6; /* of n_pw_fast, in the fourteen-register form */
static int32_t pw_quad6_entries; /* of those, the entries taken (a mask) */
static int32_t n_pw_quad6_turns; /* of those, windows of two turns or more */
static int32_t n_pw_gather; /* of n_pw, with windows gathered first */
static int32_t n_pw_gather_cut; /* of n_pw, with cut windows gathered */
static int32_t n_pw_inside; /* of n_pw, with windows inside copied by rows */
static int32_t n_pw_tail; /* of n_pw, with a last quad partly filled */
/* Of n_pw, those the MVE form ran (arm_mve/conv_s8_mve.h); of n_dw3,
 * those the MVE depthwise form ran (dw_mve_case) */
static int32_t n_pw_mve, n_dw_mve;
/* of n_pw_mve, those with windows inside gathered by rows (mve_window) */
static int32_t n_pw_mve_inside;
/* of n_pw_mve, those whose whole turns run in mve_run's assembly, and of
 * those the ones with one multiplier and shift */
static int32_t n_pw_mve_run, n_pw_mve_run_tensor, n_pw_mve_64;
/* of n_dw_mve, those with windows run in its assembly (dw_mve_asm_case) */
static int32_t n_dw_mve_asm;
/* of those, with rows run by its SAME row (dw_mve_same_case) */
static int32_t n_dw_mve_same;

/* and those with windows of one row cut run there (dw_mve_edge_case) */
static int32_t n_dw_mve_edge;
/* and those with pairs of one row cut (dw_mve_edge_pair_case) */
static int32_t n_dw_mve_edge_pair;
/* of the convolutions without scratch, those the MVE form of the other
 * depthwise layers ran (dw_any_mve_case) */
static int32_t n_dw_any_mve;
/* and of the in-place calls, those it ran in place (a column layer, no
 * padding on top: dw_any_mve_inplace) */
static int32_t n_dw_any_mve_inplace;
/* and of the dw_any_mve cases, those with sixteen channels in the column
 * layers' assembly (dw_mve_col_case) */
static int32_t n_dw_mve_col;
static int32_t n_dense_folded; /* dense cases with offsets 0 */
/* [N, K] dense cases run again packed (tn_crt_dense_s8_pack4), and those
 * of them the DSP form's loop takes (offsets 0, four rows or more) */
static int32_t n_dense_p4, n_dense_p4_dsp;
/* of n_dense_p4_dsp, those the MVE form ran (dense_mve_case) */
static int32_t n_dense_p4_mve;
/* int8 ADD cases (check_qadd_mve), and of those the MVE form ran
 * (qadd_mve_case) */
static int32_t n_qadd_mve_checked, n_qadd_mve;

/* Whether the MVE form of the dense layer takes a packed (N4K4) case of
 * n outputs in the DSP form's place (arm_mve/dense_s8_mve.h:
 * mve_dense_ok): a core with MVE, offsets 0, at least four outputs, every
 * multiplier >= 0 and every shift in [-31, -1]. */
static int dense_mve_case(const TnCrtQuant *q, int32_t n) {
  if (!KC_MVE || q->input_offset != 0 || q->filter_offset != 0 || n < 4 ||
      q->scale != NULL)
    return 0;
  for (int32_t j = 0; j < (q->per_channel ? n : 1); j++)
    if (q->multiplier[j] < 0 || q->shift[j] > -1 || q->shift[j] < -31)
      return 0;
  return 1;
}

/* A kernel's call, which started at tick t0 and returned st, and its n
 * outputs against the reference's. */
static void compare8(Compare *cmp, uint64_t t0, TnCrtStatus st,
                     const int8_t *got, const int8_t *want, int32_t n) {
  kernel_ticks += fw_ticks() - t0, ++*cmp->calls;
  if (st != TN_CRT_OK) mismatch(cmp, -1, st, TN_CRT_OK);
  for (int32_t i = 0; i < n && st == TN_CRT_OK; i++)
    if (got[i] != want[i]) mismatch(cmp, i, got[i], want[i]);
}
static void compare32(Compare *cmp, uint64_t t0, TnCrtStatus st,
                      const int32_t *got, const int32_t *want, int32_t n) {
  kernel_ticks += fw_ticks() - t0, ++*cmp->calls;
  if (st != TN_CRT_OK) mismatch(cmp, -1, st, TN_CRT_OK);
  for (int32_t i = 0; i < n && st == TN_CRT_OK; i++)
    if (got[i] != want[i]) mismatch(cmp, i, got[i], want[i]);
}

/* NHWC (layout 0) or NCHW (1) strides of a tensor. */
static void tensor_strides(int32_t *s, int layout, int32_t h, int32_t w,
                           int32_t c) {
  s[0] = h * w * c;
  if (layout == 0)
    s[1] = w * c, s[2] = c, s[3] = 1;
  else
    s[1] = w, s[2] = 1, s[3] = h * w;
}

enum {
  POINTWISE,
  DEPTHWISE,
  DEPTHWISE_MULT,
  REGULAR,
  GROUPED,
  FIRST,
  DEPTHWISE3,
  KINDS
};

/* A random geometry that fits the buffers, and its kind. The weights are
 * HWIO (TFLite's as lowered: the kernels' BCAST and DW), OHWI (DOT), or
 * OIHW with an NCHW input (DOT, strided). */
/* Set for the extra cases after KC_CASES: random_conv draws depthwise
 * layers of one column of taps (the wake word's), which the main draws
 * rarely reach. */
static int kc_column;
/* Set for the last extra cases: 1x1 layers of 64 input channels, out_c
 * often a multiple of 4, OHWI weights four times in five (the MVE
 * matrix product's 1x1 block, mve_pw64). */
static int kc_pw64;

static int random_conv(TnCrtConv2d *p) {
  for (;;) {
    memset(p, 0, sizeof *p);
    const int kind = kc_column ? DEPTHWISE
                     : kc_pw64 ? POINTWISE
                               : (int)(rnd() % KINDS);
    int same = 0; /* DEPTHWISE3: a SAME stride-1 layer, which runs in place */
    p->batch = chance(85) ? 1 : 2;
    p->in_h = between(1, 9), p->in_w = between(1, 9);
    p->k_h = p->k_w = between(1, 3) * 2 - 1;
    if (chance(20)) p->k_h = between(1, 5), p->k_w = between(1, 5);
    p->stride_h = p->stride_w = chance(70) ? 1 : 2;
    p->dilation_h = p->dilation_w = chance(85) ? 1 : 2;
    p->groups = 1;
    switch (kind) {
      case POINTWISE:
        p->k_h = p->k_w = 1, p->dilation_h = p->dilation_w = 1;
        p->in_c = between(1, 72), p->out_c = between(1, 72);
        if (kc_pw64) {
          p->in_c = 64;
          if (chance(80)) p->out_c = 4 * between(1, 18);
        }
        break;
      case DEPTHWISE:
        p->in_c = p->out_c = p->groups = between(1, 70);
        if (kc_column) { /* k_h taps down one column, 1 to 3 columns */
          p->k_h = between(1, 15), p->k_w = 1;
          p->in_h = between(1, 30), p->in_w = between(1, 3);
          p->stride_w = 1, p->dilation_w = 1;
        }
        break;
      case DEPTHWISE_MULT:
        p->in_c = p->groups = between(1, 20);
        p->out_c = p->in_c * between(2, 6);
        break;
      case REGULAR:
        p->in_c = between(1, 40), p->out_c = between(1, 40);
        break;
      case DEPTHWISE3: /* the DSP form's own: 3x3, undilated, strides 1, 2 */
        p->in_h = between(1, 12), p->in_w = between(1, 12);
        p->in_c = p->out_c = p->groups = chance(30) ? 4 * between(1, 16)
                                                     : between(1, 70);
        p->k_h = p->k_w = 3, p->dilation_h = p->dilation_w = 1;
        p->stride_h = between(1, 2), p->stride_w = between(1, 2);
        same = chance(30);
        if (same) p->stride_h = p->stride_w = 1;
        break;
      case GROUPED:
        p->groups = between(2, 4);
        p->in_c = p->groups * between(1, 12);
        p->out_c = p->groups * between(1, 12);
        break;
      default: /* FIRST: a keyword-spotting first layer, 10x4 stride 2 */
        p->in_h = between(8, 16), p->in_w = between(3, 8);
        p->k_h = between(4, 10), p->k_w = between(1, 4);
        p->stride_h = p->stride_w = 2, p->dilation_h = p->dilation_w = 1;
        p->in_c = between(1, 3), p->out_c = between(4, 40);
        break;
    }
    p->pad_top = kc_column && chance(50) ? 0 : between(0, p->k_h - 1);
    p->pad_left = between(0, p->k_w - 1);
    /* the input's extent with both pads, less the dilated kernel's */
    int32_t eh = p->in_h + p->pad_top + between(0, p->k_h - 1) -
                 (p->k_h - 1) * p->dilation_h;
    int32_t ew = p->in_w + p->pad_left + between(0, p->k_w - 1) -
                 (p->k_w - 1) * p->dilation_w;
    if (same) p->pad_top = p->pad_left = 1, eh = p->in_h, ew = p->in_w;
    if (eh < 1 || ew < 1) continue;
    p->out_h = (eh - 1) / p->stride_h + 1;
    p->out_w = (ew - 1) / p->stride_w + 1;
    const int32_t cpg = p->in_c / p->groups;
    const int32_t nw = p->k_h * p->k_w * cpg * p->out_c;
    const int32_t nin = p->batch * p->in_h * p->in_w * p->in_c;
    const int32_t nout = p->batch * p->out_h * p->out_w * p->out_c;
    if (nw > MAX_W || nin > MAX_IN || nout > MAX_OUT || p->out_c > MAX_CH)
      continue;
    /* one-group layers from TFLite come with each output channel's taps
     * in a row (the DSP matrix-product form) */
    const int rows = kind == POINTWISE || kind == REGULAR || kind == FIRST;
    const int layout = rows && chance(kc_pw64 ? 80 : 50) ? 1
                       : chance(kind == DEPTHWISE3 ? 95 : 75) ? 0
                       : chance(60)                           ? 1
                                                              : 2;
    tensor_strides(p->in_strides, layout == 2, p->in_h, p->in_w, p->in_c);
    tensor_strides(p->out_strides, layout == 2, p->out_h, p->out_w, p->out_c);
    int32_t *ws = p->w_strides;
    if (layout == 0) { /* HWIO */
      ws[3] = 1, ws[2] = p->out_c, ws[1] = cpg * p->out_c;
      ws[0] = p->k_w * ws[1];
    } else if (layout == 1) { /* OHWI */
      ws[2] = 1, ws[1] = cpg, ws[0] = p->k_w * cpg, ws[3] = p->k_h * ws[0];
    } else { /* OIHW */
      ws[1] = 1, ws[0] = p->k_w, ws[2] = p->k_h * p->k_w, ws[3] = cpg * ws[2];
    }
    return kind;
  }
}

/* A quantization of VWW's pointwise layers: per channel, TFLite's
 * offsets, no activation, multipliers of 2^30 and above (or 0) with
 * shifts down to -31, half of them below -20 (PW_WIDE); one layer in
 * three with every shift in [-20, -2] (PW_FAST). */
static void wide_quant(TnCrtQuant *q, int32_t channels) {
  q->per_channel = 1, q->filter_offset = 0;
  q->input_offset = between(-127, 128);
  q->output_offset = between(-128, 127);
  q->act_min = -128, q->act_max = 127;
  const int beyond = chance(67);
  for (int32_t c = 0; c < channels; c++) {
    mult_buf[c] = chance(10) ? 0 : between(1 << 30, INT32_MAX);
    shift_buf[c] = beyond && chance(50) ? between(-31, -21) : between(-20, -2);
  }
}

static void check_conv(int32_t index) {
  TnCrtConv2d p;
  TnCrtQuant q;
  /* one convolution case in four a layer of the matrix product's with
   * VWW's quantization (wide_quant), its biases often near +-2^30 as
   * VWW's channels of near-zero weights have them */
  const int wide = (!kc_column && index % 8 == 1) || (kc_pw64 && chance(50));
  int kind = random_conv(&p);
  while (wide && !pw_geometry(&p)) kind = random_conv(&p);
  random_quant(&q, p.out_c);
  /* and two in five depthwise 3x3 ones */
  const int dw3_wide = kind == DEPTHWISE3 && chance(40);
  if (wide || dw3_wide) wide_quant(&q, p.out_c);
  if (kind == DEPTHWISE3 && chance(85)) {
    /* TFLite's offsets, often at their ends */
    q.filter_offset = 0;
    q.input_offset =
        chance(30) ? (chance(50) ? -127 : 128) : between(-127, 128);
    if (chance(40)) q.output_offset = chance(50) ? -128 : 127;
  }
  const int dw3 = dw3_case(&p, &q);
  const int32_t *bias = random_bias(p.out_c);
  if ((wide || dw3_wide) && bias && chance(40))
    for (int32_t c = 0; c < p.out_c; c++)
      bias_buf[c] = chance(30) ? (int32_t)rnd()
                               : (chance(50) ? 1 : -1) *
                                     ((1 << 30) + between(-(1 << 18), 1 << 18));
  const int32_t nin = p.batch * p.in_h * p.in_w * p.in_c;
  const int32_t nout = p.batch * p.out_h * p.out_w * p.out_c;
  fill(in_buf, nin);
  fill(w_buf, p.k_h * p.k_w * (p.in_c / p.groups) * p.out_c);

  uint64_t t0 = fw_ticks();
  for (int32_t n = 0; n < p.batch; n++)
    for (int32_t oy = 0; oy < p.out_h; oy++)
      for (int32_t ox = 0; ox < p.out_w; ox++)
        for (int32_t co = 0; co < p.out_c; co++) {
          const uint32_t acc = conv_acc(&p, q.input_offset, q.filter_offset,
                                        bias, n, oy, ox, co);
          const int32_t o = n * p.out_strides[0] + oy * p.out_strides[1] +
                            ox * p.out_strides[2] + co * p.out_strides[3];
          ref_buf[o] = requant(acc, &q, co);
          ref32[o] = (int32_t)acc;
        }
  uint64_t t1 = fw_ticks();
  reference_ticks += t1 - t0;

  Compare cmp = {0, index, "conv", &n_conv};
  memset(out_buf, 0x5a, (size_t)nout);
  TnCrtStatus st = tn_crt_conv2d_s8(&p, &q, in_buf, w_buf, bias, out_buf,
                                    NULL, 0);
  const uint64_t no_scratch = fw_ticks() - t1;
  compare8(&cmp, t1, st, out_buf, ref_buf, nout);
  n_dw3 += dw3;
  n_dw3_wide += dw3_wide_case(&p, &q, bias);
  n_dw3_pair += dw3_pair_case(&p, &q, bias);
  n_dw3_pair_cut += dw3_pair_cut_case(&p, &q, bias);
  n_dw3_vrows += dw3_vrows_case(&p, &q, bias);
  n_dw3_undoubled += dw3_undoubled_case(&p, &q, bias);
  n_dw3_cut += dw3_cut_case(&p, &q);
  n_dw_mve += dw_mve_case(&p, &q);
  n_dw_mve_asm += dw_mve_asm_case(&p, &q);
  n_dw_mve_same += dw_mve_same_case(&p, &q);

  n_dw_mve_edge += dw_mve_edge_case(&p, &q);
  n_dw_mve_edge_pair += dw_mve_edge_pair_case(&p, &q);
  n_dw_any_mve += dw_any_mve_case(&p, &q);
  n_dw_mve_col += dw_mve_col_case(&p, &q);

  /* With the scratch the compiler plans for the DSP forms (their buffers
   * there; the call above, with none, takes the unpacked forms), from an
   * odd address. */
  Compare csc = {0, index, "conv-scratch", &n_scratch};
  const size_t dsp =
      tn_crt_conv2d_s8_scratch_size_isa(&p, &q, TN_CRT_ISA_ARM_DSP, 0);
  if (dsp + 1 <= SCRATCH) {
    memset(out_buf, 0x5a, (size_t)nout);
    t0 = fw_ticks();
    st = tn_crt_conv2d_s8(&p, &q, in_buf, w_buf, bias, out_buf, scratch + 1,
                          dsp);
    scratch_ticks += fw_ticks() - t0, no_scratch_ticks += no_scratch;
    compare8(&csc, t0, st, out_buf, ref_buf, nout);
    n_pw += pw_case(&p, &q);
    n_pw_fast += pw_fast_case(&p, &q);
    n_pw_wide += pw_wide_case(&p, &q);
    n_pw_unit += pw_unit_case(&p, &q);
    n_pw_quad6 += pw_quad6_case(&p, &q);
    if (pw_quad6_case(&p, &q)) {
      pw_quad6_entries |= pw_quad6_entry(&p);
      n_pw_quad6_turns += pw_quad6_turns(&p);
    }
    n_pw_gather += pw_gather_case(&p, &q);
    n_pw_gather_cut += pw_gather_cut_case(&p, &q);
    n_pw_inside += pw_inside_case(&p, &q);
    n_pw_tail += pw_tail_case(&p, &q);
    n_pw_mve += KC_MVE && pw_case(&p, &q);
    n_pw_mve_inside += pw_mve_inside_case(&p, &q);
    n_pw_mve_run += pw_mve_run_case(&p, &q);
    n_pw_mve_run_tensor += pw_mve_run_case_of(&p, &q, 1);
    n_pw_mve_64 += pw_mve_64_case(&p, &q);
  }

  /* With one of the smaller scratches a plan may give the call where the
   * pool peaks (tn_crt_conv2d_s8_scratch_less_isa: narrower packed blocks,
   * or the blocks' state alone), drawn at random. */
  Compare cls = {0, index, "conv-less", &n_less};
  size_t less[TN_CRT_SCRATCH_LESS_MAX];
  const int32_t nless =
      tn_crt_conv2d_s8_scratch_less_isa(&p, &q, TN_CRT_ISA_ARM_DSP, 0, less,
                                        NULL);
  if (nless > 0) {
    size_t sz = less[between(0, nless - 1)];
    if (sz + 1 > SCRATCH) sz = less[nless - 1];
    memset(out_buf, 0x5a, (size_t)nout);
    t0 = fw_ticks();
    st = tn_crt_conv2d_s8(&p, &q, in_buf, w_buf, bias, out_buf, scratch + 1,
                          sz);
    compare8(&cls, t0, st, out_buf, ref_buf, nout);
  }

  /* In place: the input in the output's buffer, with the DSP forms'
   * scratch where it fits, else the least. */
  Compare cip = {0, index, "conv-inplace", &n_inplace};
  size_t need =
      tn_crt_conv2d_s8_scratch_size_isa(&p, &q, TN_CRT_ISA_ARM_DSP, 1);
  if (need > SCRATCH) need = tn_crt_conv2d_s8_inplace_scratch_size(&p);
  if (tn_crt_conv2d_s8_inplace_ok(&p) && need <= SCRATCH) {
    memcpy(out_buf, in_buf, (size_t)nin);
    t0 = fw_ticks();
    st = tn_crt_conv2d_s8(&p, &q, out_buf, w_buf, bias, out_buf, scratch,
                          need);
    compare8(&cip, t0, st, out_buf, ref_buf, nout);
    n_dw3_inplace += dw3;
    n_dw_any_mve_inplace += dw_any_mve_inplace(&p, &q);
  }

  /* The int32 accumulators, for some. */
  Compare c32 = {0, index, "conv-s32", &n_conv32};
  if (chance(30)) {
    t0 = fw_ticks();
    st = tn_crt_conv2d_s8_s32(&p, q.input_offset, q.filter_offset, in_buf,
                              w_buf, bias, out32);
    compare32(&c32, t0, st, out32, ref32, nout);
  }
  if (cmp.bad || csc.bad || cls.bad || cip.bad || c32.bad) describe_conv(index, &p, &q, bias);
}

/* The requantization alone: a 1x1 convolution of one input channel with
 * weights 1, so that the sums are bias + x + io, the biases drawn near the
 * values where the rounding changes form (+-2^30, +-2^31). */
static void check_requant(int32_t index) {
  TnCrtConv2d p;
  TnCrtQuant q;
  memset(&p, 0, sizeof p);
  p.batch = 1, p.in_h = 1, p.in_w = between(1, 8), p.in_c = 1;
  p.out_h = 1, p.out_w = p.in_w, p.out_c = between(1, MAX_CH);
  p.k_h = p.k_w = 1, p.stride_h = p.stride_w = 1;
  p.dilation_h = p.dilation_w = 1, p.groups = 1;
  tensor_strides(p.in_strides, 0, 1, p.in_w, 1);
  tensor_strides(p.out_strides, 0, 1, p.out_w, p.out_c);
  p.w_strides[0] = p.w_strides[1] = p.w_strides[2] = p.out_c;
  p.w_strides[3] = 1;
  random_quant(&q, p.out_c);
  q.output_offset = chance(70) ? between(-600, 600) : between(-128, 127);
  /* mostly one shift for all, often near requant_dsp's limit of 20 */
  const int32_t shift = chance(50) ? between(-22, -18) : between(-31, 1);
  for (int32_t c = 0; c < (q.per_channel ? p.out_c : 1); c++) {
    const int m = (int)(rnd() % 10u);
    mult_buf[c] = m < 7 ? between(1 << 30, INT32_MAX)
                  : m < 9 ? (int32_t)(rnd() >> between(1, 20))
                          : (int32_t)rnd();
    shift_buf[c] = chance(80) ? shift : between(-33, 3);
  }
  for (int32_t c = 0; c < p.out_c; c++) {
    const int32_t near = chance(50) ? 1 << 30 : INT32_MAX;
    const int32_t v = chance(30) ? between(1 << 30, INT32_MAX)
                                 : near - between(0, 1 << between(0, 24));
    bias_buf[c] = chance(20) ? (int32_t)rnd() : chance(50) ? v : -v;
  }
  fill(in_buf, p.in_w);
  memset(w_buf, 1, (size_t)p.out_c);
  for (int32_t ox = 0; ox < p.out_w; ox++)
    for (int32_t co = 0; co < p.out_c; co++)
      ref_buf[ox * p.out_c + co] = requant(
          conv_acc(&p, q.input_offset, q.filter_offset, bias_buf, 0, 0, ox, co),
          &q, co);
  Compare cmp = {0, index, "requant", &n_requant};
  const uint64_t t0 = fw_ticks();
  TnCrtStatus st = tn_crt_conv2d_s8(&p, &q, in_buf, w_buf, bias_buf,
                                    out_buf, NULL, 0);
  compare8(&cmp, t0, st, out_buf, ref_buf, p.out_w * p.out_c);
  if (cmp.bad) describe_conv(index, &p, &q, bias_buf);
}

/* A dense case; folded: with offsets 0 and [N, K] weights (the extra
 * cases after KC_CASES). */
static void check_dense(int32_t index, int folded) {
  TnCrtDense p;
  TnCrtQuant q;
  p.batch = chance(80) ? 1 : between(2, 3);
  p.in_features = chance(70) ? between(1, 160) : between(160, 640);
  p.out_features = between(1, MAX_CH);
  while ((int64_t)p.in_features * p.out_features > MAX_W ||
         p.batch * p.in_features > MAX_IN)
    p.in_features /= 2;
  /* nn.dense's [N, K], else matmul's [K, N] */
  const int nk = chance(75) || folded;
  p.w_stride_n = nk ? p.in_features : 1;
  p.w_stride_k = nk ? 1 : p.out_features;
  random_quant(&q, p.out_features);
  /* every other dense case with the offsets a FoldInputOffset'ed layer
   * has (input 0, filter 0), which the DSP form's sums take in a loop of
   * their own (arm_dsp/dense_s8_dsp.h: rows4_x8); by the index, so that
   * the draws stay as they were */
  if (folded || index % 8 == 7) q.input_offset = 0, q.filter_offset = 0;
  n_dense_folded += folded || index % 8 == 7;
  const int32_t *bias = random_bias(p.out_features);
  fill(in_buf, p.batch * p.in_features);
  fill(w_buf, p.in_features * p.out_features);

  uint64_t t0 = fw_ticks();
  for (int32_t m = 0; m < p.batch; m++)
    for (int32_t n = 0; n < p.out_features; n++) {
      uint32_t acc = bias ? (uint32_t)bias[n] : 0;
      for (int32_t k = 0; k < p.in_features; k++)
        acc += ((uint32_t)in_buf[m * p.in_features + k] +
                (uint32_t)q.input_offset) *
               ((uint32_t)w_buf[n * p.w_stride_n + k * p.w_stride_k] +
                (uint32_t)q.filter_offset);
      ref_buf[m * p.out_features + n] = requant(acc, &q, n);
      ref32[m * p.out_features + n] = (int32_t)acc;
    }
  uint64_t t1 = fw_ticks();
  reference_ticks += t1 - t0;

  const int32_t nout = p.batch * p.out_features;
  Compare cmp = {0, index, "dense", &n_dense};
  TnCrtStatus st =
      tn_crt_dense_s8(&p, &q, in_buf, w_buf, bias, out_buf, NULL, 0);
  compare8(&cmp, t1, st, out_buf, ref_buf, nout);
  /* nn.dense's weights packed as PackDenseWeights packs them for
   * "cortex-m" (N4K4), through tn_crt_dense_s8_packed4 */
  Compare cp4 = {0, index, "dense-p4", &n_dense_p4};
  const int p4_dsp = nk && q.input_offset == 0 && q.filter_offset == 0 &&
                     p.out_features >= 4;
  const int p4_mve = nk && dense_mve_case(&q, p.out_features);
  if (nk) {
    if (tn_crt_dense_s8_pack4(p.out_features, p.in_features, w_buf,
                              wp_buf) != TN_CRT_OK)
      mismatch(&cp4, -1, 1, 0);
    const uint64_t t2 = fw_ticks();
    st = tn_crt_dense_s8_packed4(&p, &q, in_buf, wp_buf, bias, out_buf);
    compare8(&cp4, t2, st, out_buf, ref_buf, nout);
    n_dense_p4_dsp += p4_dsp;
    n_dense_p4_mve += p4_mve;
  }
  Compare c32 = {0, index, "dense-s32", &n_dense32};
  if (chance(30)) {
    t0 = fw_ticks();
    st = tn_crt_dense_s8_s32(&p, q.input_offset, q.filter_offset, in_buf,
                             w_buf, bias, out32);
    compare32(&c32, t0, st, out32, ref32, nout);
  }
  if (cmp.bad || c32.bad || cp4.bad) {
    kv("case ", index);
    kv(" dense batch=", p.batch);
    kv(" k=", p.in_features), kv(" n=", p.out_features);
    fw_str(nk ? " [N,K]" : " [K,N]");
    kv(" io=", q.input_offset), kv(" fo=", q.filter_offset);
    kv(" off=", q.output_offset), kv(" per_channel=", q.per_channel);
    fw_str(bias ? " bias" : " no-bias");
    if (p4_mve) fw_str(" p4-mve");
    if (p4_dsp) fw_str(" p4");
    fw_endl();
  }
}

/* ------------------------------------------------------------------------ */
/* The int8 ADD                                                               */
/* ------------------------------------------------------------------------ */

/* Whether one ADD operand is a "half" term of the MVE form
 * (arm_mve/add_s8_mve.h: mve_add_in): multiplier 2^30, shift 0, a left
 * shift of at least 1 that moves no int8 x + off out of int32. */
static int qadd_half(int32_t off, int32_t m, int32_t sh, int32_t left) {
  return m == (INT32_C(1) << 30) && sh == 0 && left >= 1 &&
         ((int64_t)off - 128) * ((int64_t)1 << left) >= INT32_MIN &&
         ((int64_t)off + 127) * ((int64_t)1 << left) <= INT32_MAX;
}

/* Whether the MVE form of the ADD takes a run of the case: a core with
 * MVE, both operands contiguous, the parameters quant.c's add_is_fast
 * passes (multipliers >= 0, shifts in [-31, 0]) with an output shift
 * of at least 1 and each operand's term a half or shifted right. */
static int qadd_mve_case(const TnCrtQBinary *p, int32_t ls, int32_t rs) {
  if (!KC_MVE || ls != 1 || rs != 1 || p->output_multiplier < 0 ||
      p->output_shift > -1 || p->output_shift < -31)
    return 0;
  const int32_t off[2] = {p->lhs_offset, p->rhs_offset};
  const int32_t m[2] = {p->lhs_multiplier, p->rhs_multiplier};
  const int32_t sh[2] = {p->lhs_shift, p->rhs_shift};
  for (int k = 0; k < 2; k++)
    if (m[k] < 0 || sh[k] > 0 || sh[k] < -31 ||
        (!qadd_half(off[k], m[k], sh[k], p->left_shift) && sh[k] > -1))
      return 0;
  return 1;
}

/* TFLite's AddFunc for one element (integer_ops/add.h), with
 * tn_crt_multiply_by_quantized_multiplier (shifts <= 0) and the offsets
 * added with wrap-around. */
static int8_t qadd_ref(const TnCrtQBinary *p, int32_t x, int32_t y) {
  const int32_t lo = p->act_min < -128 ? -128 : p->act_min;
  const int32_t hi = p->act_max > 127 ? 127 : p->act_max;
  const int32_t a = (int32_t)(((uint32_t)x + (uint32_t)p->lhs_offset)
                              << p->left_shift);
  const int32_t b = (int32_t)(((uint32_t)y + (uint32_t)p->rhs_offset)
                              << p->left_shift);
  const uint32_t s =
      (uint32_t)tn_crt_multiply_by_quantized_multiplier(
          a, p->lhs_multiplier, p->lhs_shift) +
      (uint32_t)tn_crt_multiply_by_quantized_multiplier(
          b, p->rhs_multiplier, p->rhs_shift);
  const int32_t v = (int32_t)(
      (uint32_t)tn_crt_multiply_by_quantized_multiplier(
          (int32_t)s, p->output_multiplier, p->output_shift) +
      (uint32_t)p->output_offset);
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* A scale 2^-e times [1, 2), e in [lo, hi]. */
static double random_scale(int32_t lo, int32_t hi) {
  double s = 1.0 + (double)(rnd() % 1000u) / 1000.0;
  for (int32_t e = between(lo, hi); e > 0; e--) s *= 0.5;
  return s;
}

/* A random ADD: its parameters from random scales (tn_crt_qadd_params,
 * as the importers get them: one operand, or both, scaled by exactly 1/2)
 * or drawn across the ranges add_is_fast admits and beyond (left shifts
 * 0 to 30, small right shifts where TFLite's ties round away from zero,
 * shifts of 0, large and wrapping offsets, negative multipliers); n
 * elements in runs of up to 300, 1-D or rows of a 2-D output with the
 * rhs broadcast over them (its stride 0, or along the row), out of
 * place or over either input. The outputs, and 16 guard bytes after
 * them, against qadd_ref. */
static void check_qadd_mve(int32_t index) {
  TnCrtQBinary p;
  memset(&p, 0, sizeof p);
  int from_scales = chance(60);
  if (from_scales) {
    const double sl = random_scale(4, 10);
    const double sr = chance(25) ? sl : random_scale(4, 10);
    if (tn_crt_qadd_params(sl, between(-128, 127), sr, between(-128, 127),
                           random_scale(3, 10), between(-128, 127),
                           &p) != TN_CRT_OK)
      from_scales = 0;
  }
  if (!from_scales) {
    static const int32_t left[] = {20, 20, 0, 1, 8, 24, 30};
    p.left_shift = chance(50) ? left[rnd() % 7u] : between(0, 30);
    int32_t *off[3] = {&p.lhs_offset, &p.rhs_offset, &p.output_offset};
    int32_t *m[3] = {&p.lhs_multiplier, &p.rhs_multiplier,
                     &p.output_multiplier};
    int32_t *sh[3] = {&p.lhs_shift, &p.rhs_shift, &p.output_shift};
    for (int k = 0; k < 3; k++) {
      const int o = (int)(rnd() % 10u);
      *off[k] = o < 6 ? between(-128, 127)
                : o < 8 ? between(-(1 << 16), 1 << 16)
                        : (int32_t)rnd();
      const int h = (int)(rnd() % 10u);
      *m[k] = h < 3 ? INT32_C(1) << 30
              : h < 7 ? between(1 << 30, INT32_MAX)
              : h < 8 ? (int32_t)(rnd() >> between(1, 31))
              : h < 9 ? INT32_MAX
                      : chance(70) ? 0 : (int32_t)rnd();
      const int t = (int)(rnd() % 10u);
      *sh[k] = h < 3 && t < 5 ? 0
               : t < 4 ? between(-3, -1)
               : t < 8 ? between(-31, -1)
               : t < 9 ? 0
                       : between(-33, 2);
    }
  }
  if (chance(30)) {
    p.act_min = between(-140, 30);
    p.act_max = between(p.act_min < -128 ? -128 : p.act_min, 140);
  }

  /* the shape: a run, or rows with the rhs broadcast */
  TnCrtBroadcast b;
  memset(&b, 0, sizeof b);
  const int32_t n = chance(30) ? between(1, 20)
                    : chance(50) ? between(1, 300)
                                 : 16 * between(1, 18);
  const int rows = chance(25) ? between(2, 6) : 1;
  const int along = rows > 1 && chance(30); /* the rhs broadcast along */
  b.ndim = rows > 1 ? 2 : 1;
  b.dims[b.ndim - 1] = n;
  b.lhs_strides[b.ndim - 1] = 1;
  b.rhs_strides[b.ndim - 1] = along ? 0 : 1;
  if (rows > 1) {
    b.dims[0] = rows, b.lhs_strides[0] = n;
    b.rhs_strides[0] = along ? 1 : 0;
  }
  const int32_t total = rows * n;
  const int32_t rn = rows > 1 ? (along ? rows : n) : n;
  fill(in_buf, total);
  fill(w_buf, rn);
  for (int32_t i = 0; i < total; i++) {
    const int32_t row = i / n, col = i % n;
    ref_buf[i] = qadd_ref(&p, in_buf[i], w_buf[along ? row : col]);
  }
  /* out of place, or over the lhs, or over the rhs (a run only) */
  const int where = (int)(rnd() % 3u);
  const int8_t *lhs = in_buf, *rhs = w_buf;
  memset(out_buf, 0x5a, (size_t)total + 16);
  if (where == 1) {
    memcpy(out_buf, in_buf, (size_t)total), lhs = out_buf;
  } else if (where == 2 && rows == 1) {
    memcpy(out_buf, w_buf, (size_t)total), rhs = out_buf;
  }
  const int mve = qadd_mve_case(&p, 1, b.rhs_strides[b.ndim - 1]);
  Compare cmp = {0, index, "qadd", &n_qadd_mve_checked};
  const uint64_t t0 = fw_ticks();
  const TnCrtStatus st = tn_crt_qadd_s8(&p, &b, lhs, rhs, out_buf);
  compare8(&cmp, t0, st, out_buf, ref_buf, total);
  for (int32_t i = total; i < total + 16; i++)
    if (out_buf[i] != 0x5a) mismatch(&cmp, i, out_buf[i], 0x5a);
  n_qadd_mve += mve;
  if (cmp.bad) {
    kv("case ", index);
    kv(" qadd n=", n), kv(" rows=", rows);
    fw_str(along ? " rhs-along" : rows > 1 ? " rhs-over-rows" : "");
    kv(" in_place=", lhs == out_buf ? 1 : rhs == out_buf ? 2 : 0);
    kv(" left=", p.left_shift);
    kv(" lhs=", p.lhs_offset), kv("/", p.lhs_multiplier);
    kv("/", p.lhs_shift);
    kv(" rhs=", p.rhs_offset), kv("/", p.rhs_multiplier);
    kv("/", p.rhs_shift);
    kv(" out=", p.output_offset), kv("/", p.output_multiplier);
    kv("/", p.output_shift);
    kv(" act=", p.act_min), kv("..", p.act_max);
    if (mve) fw_str(" qadd-mve");
    fw_endl();
  }
}

/* The int8 ADD through its call, with the scratch a Cortex-M plan gives
 * it (the M4's table form) */
static int32_t n_qadd; /* ADD cases */
/* of those, the cases the Cortex-M DSP form of its table loop takes
 * (quant.c: add_lut_tables, arm_dsp/add_s8_dsp.h: dsp_add_lut4) */
static int32_t n_qadd_dsp;

/* Whether the DSP table loop takes an ADD given scratch bytes of scratch
 * (tn_crt_qadd_s8_scratch_size_isa's, which says whether the table form
 * applies): a contiguous last dim of four or more on both sides, and on
 * a core with MVE, parameters the MVE form does not take (quant.c
 * prefers it). */
static int qadd_dsp_case(const TnCrtQBinary *q, const TnCrtBroadcast *b,
                         size_t scratch) {
#if defined(__ARM_FEATURE_DSP)
  const int32_t last = b->ndim - 1;
  const int run = b->lhs_strides[last] == 1 && b->rhs_strides[last] == 1;
  return scratch > 0 && run && b->dims[last] >= 4 && !qadd_mve_case(q, 1, 1);
#else
  (void)q, (void)b, (void)scratch;
  return 0;
#endif
}

/* A power of two 2^k, k in [lo, hi] (as a double, exactly). */
static double pow2(int32_t lo, int32_t hi) {
  double v = 1.0;
  int32_t k = between(lo, hi);
  for (; k > 0; k--) v *= 2.0;
  for (; k < 0; k++) v *= 0.5;
  return v;
}

/* An ADD case: TFLite's parameters from random scales within a factor of
 * 4 (a residual network's), or now and then multipliers and shifts drawn
 * at random (which the table form may leave to the other loop); a run
 * of up to MAX_OUT elements, or a broadcast of a row or a column, out of
 * place or in place (into the lhs, as a planner lays a residual ADD). */
static void check_qadd(int32_t index) {
  TnCrtQBinary q;
  const int model = chance(85);
  if (model) {
    const double sl = (1.0 + between(0, 1000) / 1000.0) * pow2(-9, -3);
    const double sr = sl * (1.0 + between(0, 1000) / 1000.0) * pow2(-2, 1);
    const double so = (sl > sr ? sl : sr) * (1.0 + between(0, 1000) / 1000.0) *
                      pow2(-1, 1);
    if (tn_crt_qadd_params(sl, between(-128, 127), sr, between(-128, 127), so,
                           between(-128, 127), &q) != TN_CRT_OK) {
      kv("case ", index), fw_str(" qadd params refused"), fw_endl();
      failures++;
      return;
    }
  } else {
    q.lhs_offset = between(-127, 128), q.rhs_offset = between(-127, 128);
    q.output_offset = between(-128, 127);
    q.left_shift = chance(70) ? 20 : between(0, 22);
    q.lhs_multiplier = between(1 << 30, INT32_MAX), q.lhs_shift = between(-31, 0);
    q.rhs_multiplier = between(1 << 30, INT32_MAX), q.rhs_shift = between(-31, 0);
    q.output_multiplier = between(0, INT32_MAX), q.output_shift = between(-31, 0);
  }
  q.act_min = chance(70) ? -128 : between(-128, 0);
  q.act_max = chance(70) ? 127 : between(q.act_min, 127);
  TnCrtBroadcast b;
  memset(&b, 0, sizeof b);
  const int shape = (int)(rnd() % 4u);
  int32_t ln, rn, on;
  if (shape < 2) { /* one run */
    b.ndim = 1, b.dims[0] = chance(20) ? between(1, 300) : between(256, MAX_OUT);
    b.lhs_strides[0] = b.rhs_strides[0] = 1;
    ln = rn = on = b.dims[0];
  } else { /* rows x cols, rhs broadcast as a row (2) or a column (3) */
    b.ndim = 2, b.dims[0] = between(1, 40), b.dims[1] = between(1, 64);
    while (b.dims[0] * b.dims[1] > MAX_OUT) b.dims[0] /= 2;
    b.lhs_strides[0] = b.dims[1], b.lhs_strides[1] = 1;
    b.rhs_strides[0] = shape == 2 ? 0 : 1, b.rhs_strides[1] = shape == 2;
    on = ln = b.dims[0] * b.dims[1];
    rn = shape == 2 ? b.dims[1] : b.dims[0];
  }
  const int inplace = chance(30);
  fill(in_buf, ln);
  fill(w_buf, rn);
  const uint64_t t0 = fw_ticks();
  for (int32_t i = 0; i < on; i++) {
    const int32_t row = b.ndim == 1 ? 0 : i / b.dims[1];
    const int32_t col = b.ndim == 1 ? i : i % b.dims[1];
    ref_buf[i] = qadd_ref(&q, in_buf[row * b.lhs_strides[0] + col * b.lhs_strides[b.ndim - 1]],
                          w_buf[row * b.rhs_strides[0] + col * b.rhs_strides[b.ndim - 1]]);
  }
  const uint64_t t1 = fw_ticks();
  reference_ticks += t1 - t0;
  /* with the tables' scratch a Cortex-M plan gives the call */
  const size_t size =
      tn_crt_qadd_s8_scratch_size_isa(&q, &b, TN_CRT_ISA_ARM_DSP);
  const int dsp = qadd_dsp_case(&q, &b, size);
  n_qadd_dsp += dsp;
  if (model && on >= 256 && size == 0) {
    kv("case ", index), fw_str(" qadd: no tables for a model's ADD"), fw_endl();
    failures++;
  }
  int8_t *dst = inplace ? in_buf : out_buf;
  Compare cmp = {0, index, "qadd", &n_qadd};
  const TnCrtCallQBinary cp = {q, b};
  const void *ins[2] = {in_buf, w_buf};
  const TnCrtStatus st =
      (TnCrtStatus)tn_crt_call_qadd_s8(&cp, ins, dst, scratch, size);
  compare8(&cmp, t1, st, dst, ref_buf, on);
  if (cmp.bad) {
    kv("case ", index);
    kv(" qadd ndim=", b.ndim), kv(" dims=", b.dims[0]);
    if (b.ndim > 1) kv("x", b.dims[1]), kv(" rhs_stride0=", b.rhs_strides[0]);
    kv(" lo=", q.lhs_offset), kv(" ro=", q.rhs_offset);
    kv(" oo=", q.output_offset), kv(" left=", q.left_shift);
    kv(" lm=", q.lhs_multiplier), kv(" ls=", q.lhs_shift);
    kv(" rm=", q.rhs_multiplier), kv(" rs=", q.rhs_shift);
    kv(" om=", q.output_multiplier), kv(" os=", q.output_shift);
    kv(" act=", q.act_min), kv("..", q.act_max);
    if (inplace) fw_str(" in-place");
    if (dsp) fw_str(" qadd-dsp");
    /* the MVE form's runs (quant.c prefers it to the tables) */
    if (qadd_mve_case(&q, b.lhs_strides[b.ndim - 1],
                      b.rhs_strides[b.ndim - 1]))
      fw_str(" qadd-mve");
    fw_endl();
  }
}

int main(void) {
  fw_ticks_start();
  for (int32_t i = 0; i < KC_CASES; i++) {
    if (i % 4 == 3)
      check_dense(i, 0);
    else if (i % 4 == 2)
      check_requant(i);
    else
      check_conv(i);
  }
  for (int32_t i = 0; i < KC_DENSE_P4; i++) check_dense(KC_CASES + i, 1);
  kc_column = 1;
  for (int32_t i = 0; i < KC_DW_COLUMN; i++)
    check_conv(KC_CASES + KC_DENSE_P4 + i);
  for (int32_t i = 0; i < KC_QADD_MVE; i++)
    check_qadd_mve(KC_CASES + KC_DENSE_P4 + KC_DW_COLUMN + i);
  for (int32_t i = 0; i < KC_QADD; i++)
    check_qadd(KC_CASES + KC_DENSE_P4 + KC_DW_COLUMN + i);
  kc_column = 0, kc_pw64 = 1;
  for (int32_t i = 0; i < KC_PW64; i++)
    check_conv(KC_CASES + KC_DENSE_P4 + KC_DW_COLUMN + KC_QADD + i);
  kv("cases ", KC_CASES);
  kv(" conv ", n_conv), kv(" conv_scratch ", n_scratch);
  kv(" conv_less ", n_less);
  kv(" inplace ", n_inplace);
  kv(" conv_s32 ", n_conv32), kv(" requant ", n_requant);
  kv(" dense ", n_dense);
  kv(" dense_s32 ", n_dense32);
  kv(" dw3 ", n_dw3), kv(" dw3_inplace ", n_dw3_inplace);
  kv(" dw3_wide ", n_dw3_wide), kv(" dw3_pair ", n_dw3_pair);
  kv(" dw3_cut ", n_dw3_cut), kv(" dw3_pair_cut ", n_dw3_pair_cut);
  kv(" dw3_vrows ", n_dw3_vrows);
  kv(" dw3_undoubled ", n_dw3_undoubled);
  kv(" pw ", n_pw), kv(" pw_fast ", n_pw_fast), kv(" pw_wide ", n_pw_wide);
  kv(" pw_unit ", n_pw_unit), kv(" pw_gather ", n_pw_gather);
  kv(" pw_gather_cut ", n_pw_gather_cut);
  kv(" pw_inside ", n_pw_inside), kv(" pw_tail ", n_pw_tail);
  kv(" pw_quad6 ", n_pw_quad6);
  kv(" pw_quad6_entries ", pw_quad6_entries);
  kv(" pw_quad6_turns ", n_pw_quad6_turns);
  kv(" pw_mve ", n_pw_mve), kv(" dw_mve ", n_dw_mve);
  kv(" pw_mve_inside ", n_pw_mve_inside), kv(" dw_mve_asm ", n_dw_mve_asm);
  kv(" dw_mve_same ", n_dw_mve_same);
  kv(" pw_mve_run ", n_pw_mve_run);
  kv(" pw_mve_run_tensor ", n_pw_mve_run_tensor);
  kv(" pw_mve_64 ", n_pw_mve_64);

  kv(" dw_mve_edge ", n_dw_mve_edge);
  kv(" dw_mve_edge_pair ", n_dw_mve_edge_pair);
  kv(" dw_any_mve ", n_dw_any_mve);
  kv(" dw_any_mve_inplace ", n_dw_any_mve_inplace);
  kv(" dw_mve_col ", n_dw_mve_col);
  kv(" dense_folded ", n_dense_folded);
  kv(" dense_p4 ", n_dense_p4), kv(" dense_p4_dsp ", n_dense_p4_dsp);
  kv(" dense_p4_mve ", n_dense_p4_mve);
  kv(" qadd_mve_checked ", n_qadd_mve_checked);
  kv(" qadd_mve ", n_qadd_mve);
  kv(" qadd ", n_qadd), kv(" qadd_dsp ", n_qadd_dsp);
  fw_endl();
  fw_str("instructions kernels ");
  fw_u64(fw_instructions(kernel_ticks));
  fw_str(" reference ");
  fw_u64(fw_instructions(reference_ticks));
  fw_endl();
  fw_str("instructions conv_no_scratch ");
  fw_u64(fw_instructions(no_scratch_ticks));
  fw_str(" conv_scratch ");
  fw_u64(fw_instructions(scratch_ticks));
  fw_endl();
  kv("failures ", failures);
  fw_endl();
  const int code = failures ? 1 : 0;
  kv("done ", code);
  fw_endl();
  return code;
}
