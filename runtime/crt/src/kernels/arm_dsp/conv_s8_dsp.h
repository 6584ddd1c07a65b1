/*
 * arm_dsp/conv_s8_dsp.h: the Cortex-M DSP form of the int8 convolution
 * (conv_s8.c): one-group layers whose weights hold each output
 * channel's taps in a row as a matrix product (dsp_pointwise, at the end
 * of this file), and otherwise BCAST, DW, DOT and the requantization with
 * SXTB16/SXTAB16, SMLAD, SMMULR, QADD and SSAT (arm_dsp/dsp.h), about
 * three times as fast as the portable C on a Cortex-M4, bit for bit the
 * same integers.
 * conv_s8.c includes it, and calls it, wherever isa.h says the DSP
 * extension is there (__ARM_FEATURE_DSP with GNU C: the M4, M7, M33,
 * M55). A header of static functions rather than a source of its own:
 * conv_s8.c calls these pieces once a pixel or a block, and only in one
 * translation unit does gcc inline them into its loops and keep a block's
 * state in registers across them (as separate files, keyword spotting
 * took 3.6% more instructions at -Os). Its includes are relative to its
 * own folder, which an archive keeps (runtime/src/arm_dsp/, beside
 * dsp.h), so that it is found from conv_s8.c in the tree and in an
 * archive alike.
 */
#ifndef TVMNODE_CRT_ARM_DSP_CONV_S8_DSP_H_
#define TVMNODE_CRT_ARM_DSP_CONV_S8_DSP_H_

#include <stddef.h>
#include <stdint.h>

#include "../conv_s8.h"
#include "dsp.h"

/* The weights' pairs of a block (see below), in the caller's scratch:
 * at most TN_CRT_DSP_PACK_BYTES, the cap of the size the compiler plans
 * (tn_crt_conv2d_s8_scratch_size_isa). */
#ifndef TN_CRT_DSP_PACK_BYTES
#define TN_CRT_DSP_PACK_BYTES 4608
#endif
enum { PACK_WORDS = TN_CRT_DSP_PACK_BYTES / 4, DW_TAPS = 32 };
typedef struct {
  int32_t *w;             /* the pairs */
  int32_t runs, n, quads; /* BCAST: the window's runs of n inputs */
  int32_t taps;           /* DW: the window's taps, in pairs */
  ptrdiff_t xo[DW_TAPS];  /* DW: each tap's input offset in the window */
  uint32_t corr[BLK];     /* DW: bias + io * the sum of the weights */
  int8_t pad[16];         /* DW: -io, the input outside the image */
} Pack;

/*
 * The geometry of the DSP forms' buffers, from here to dsp_scratch_bytes,
 * is compiled on every target, so that the compiler sizes a Cortex-M
 * archive's scratch on the host with the very functions the kernels use.
 *
 * dsp_bcast spends 12 of its 27 instructions a quad making pairs of
 * weights, again at every pixel. So a BCAST block has them made once
 * (pack_block), in the order the sums take them: per group of four
 * channels, per run of the window, per quad of input channels k .. k + 3,
 * the pairs (k, k + 2) of the four channels, then (k + 1, k + 3) (zero
 * past the run); a quad then costs two unpacks, four LDRDs and eight
 * SMLADs. dsp_bcast is left to blocks too large, and to pixels whose runs
 * start inside a quad. The pairs live in the call's scratch, what the
 * layer's widest block needs (16, 8 or 4 channels, the widest that fits;
 * 2 KiB for a 64-channel pointwise layer) and at most
 * TN_CRT_DSP_PACK_BYTES (a 3x3 layer of 64 input channels in blocks of 4);
 * a scratch too small for them packs nothing (dsp_bcast, the same
 * integers, slower).
 */

static void pack_geometry(const Conv *c, Pack *pk) {
  pk->runs = c->merge ? c->p->k_h : c->p->k_h * c->p->k_w;
  pk->n = c->merge ? c->p->k_w * c->cpg : c->cpg;
  pk->quads = (pk->n + 3) / 4;
}

/* The widest block (16, 8 or 4) whose pairs fit in `limit` words (and
 * PACK_WORDS), or 0: no packing; and the words of pairs that block takes
 * (1 when none). A smaller limit gives narrower blocks: the same integers,
 * a little slower, and the scratch a plan can shrink to where it peaks. */
static int32_t pack_width(const Conv *c, int64_t limit, int32_t *words) {
  Pack pk;
  const int32_t taps = c->p->k_h * c->p->k_w;
  int64_t group = 0; /* words per 4 channels */
  int32_t w = 0;
  if (limit > PACK_WORDS) limit = PACK_WORDS;
  *words = 1;
  if (c->mode == DW && taps <= DW_TAPS) {
    w = block_width(c->p->out_c < BLK ? c->p->out_c : BLK);
    group = 4 * ((taps + 1) / 2); /* 4 per group and tap pair */
  } else if (c->mode == BCAST && c->p->in_strides[3] == 1) {
    pack_geometry(c, &pk);
    group = (int64_t)pk.runs * pk.quads * 8;
    w = block_width(c->fpg < BLK ? c->fpg : BLK);
  }
  while (w >= 4 && group * (w / 4) > limit) w /= 2;
  if (w < 4) return 0;
  *words = (int32_t)(group * (w / 4));
  return w;
}

enum {
  PW_MAX_CHANNELS = 1024, /* pw_corr: 4 KiB at most */
  PW_MAX_WINDOW = 1024    /* the columns: 4 KiB at most */
};

/* The taps of a window: kh * kw * in_c. */
static int32_t pw_window(const TnCrtConv2d *p) {
  return p->k_h * p->k_w * p->in_c;
}

static int dsp_pw_ok(const Conv *c, const TnCrtQuant *q) {
  const TnCrtConv2d *p = c->p;
  if (q == NULL || q->scale || p->groups != 1 || c->fo != 0 ||
      c->io < -127 || c->io > 128 || /* -io fits an int8 */
      p->out_c > PW_MAX_CHANNELS || p->out_strides[3] != 1)
    return 0;
  const int64_t k = (int64_t)p->k_h * p->k_w * p->in_c;
  const int32_t *ws = p->w_strides;
  if (k > PW_MAX_WINDOW || ws[3] != k) return 0;
  const int ohwi = ws[2] == 1 && ws[1] == p->in_c && ws[0] == p->k_w * ws[1];
  const int oihw = ws[1] == 1 && ws[0] == p->k_w && ws[2] == p->k_h * p->k_w;
  return ohwi || oihw;
}

/* The taps of a window's columns: the window's, rounded up to whole
 * words of eight taps (the taps past the window's zero), so that the
 * assembly loop (pw_pairs) takes any window. */
static int32_t pw_cols(const TnCrtConv2d *p) {
  return (pw_window(p) + 7) & ~7;
}

/* dsp_pointwise's sums' starting values (4 * out_c bytes), then its
 * columns (two pixels' int16 pairs: four words per four taps). */
static size_t pw_scratch_bytes(const TnCrtConv2d *p) {
  return (size_t)p->out_c * 4 + (size_t)pw_cols(p) / 4 * 16;
}

/* The blocks' state (conv_s8.c's BlockState) at the start of the blocks'
 * scratch, so that it is not on the stack either: its bytes on a
 * Cortex-M core (which a DSP build checks), and its bytes up to Pack's
 * depthwise fields (xo, corr, pad), which only packed depthwise blocks
 * use. */
enum { DSP_STATE_BYTES = 468, DSP_STATE_PLAIN_BYTES = 260 };

/* The state's bytes for blocks with pairs packed, or not. */
static size_t dsp_state_bytes(const Conv *c, int packed) {
  return packed && c->mode == DW ? DSP_STATE_BYTES : DSP_STATE_PLAIN_BYTES;
}

/* The layers the depthwise 3x3 form takes (dw3x3_s8_dsp.h). */
static int dsp_dw3_ok(const Conv *c, const TnCrtQuant *q) {
  const TnCrtConv2d *p = c->p;
  return q != NULL && q->scale == NULL && c->mode == DW && p->k_h == 3 &&
         p->k_w == 3 && p->dilation_h == 1 && p->dilation_w == 1 &&
         (p->stride_h == 1 || p->stride_h == 2) &&
         (p->stride_w == 1 || p->stride_w == 2) && p->out_strides[3] == 1;
}

/* The 4-aligned scratch bytes the DSP forms take for a call (ring: in
 * place by rows, which never takes dsp_pointwise): none for a layer the
 * depthwise 3x3 form takes (dw3x3_s8_dsp.h), dsp_pointwise's, or the
 * blocks' state and a block's pairs. */
static size_t dsp_scratch_bytes(const Conv *c, const TnCrtQuant *q,
                                int ring) {
  if (dsp_dw3_ok(c, q)) return 0;
  if (!ring && dsp_pw_ok(c, q)) return pw_scratch_bytes(c->p);
  int32_t words;
  return pack_width(c, PACK_WORDS, &words)
             ? dsp_state_bytes(c, 1) + (size_t)words * 4
             : dsp_state_bytes(c, 0);
}

/* The smaller scratches the DSP forms still run in, largest first, below
 * `full` (dsp_scratch_bytes'): the blocks' state with the pairs of the
 * next narrower blocks (8, then 4 channels), then the state alone (no
 * pairs); conv_run takes, for each, the form sized so. With each, how
 * much slower the call is estimated to run, in percent. Two are measured
 * on the emulated Cortex-M4 (firmware/common/run.py --cycles): a depthwise
 * layer without pairs makes them at every pixel (+32 %, the wake word's),
 * and a layer the matrix product (dsp_pointwise) takes runs 3.18x slower
 * in unpacked blocks (KWS's pointwise layers). The narrower blocks' +10 %
 * and +25 % are reasoned, not measured: they reload their inputs per
 * channel twice or four times as often. Returns how many (at most 3). */
static int32_t dsp_scratch_less(const Conv *c, const TnCrtQuant *q, int ring,
                                size_t full, size_t out[3], uint16_t pct[3]) {
  int32_t n = 0, words;
  const size_t state = dsp_state_bytes(c, 1);
  if (dsp_dw3_ok(c, q)) return 0;
  const int pw = !ring && dsp_pw_ok(c, q);
  int32_t w = pack_width(c, PACK_WORDS, &words);
  while (w >= 4 && n < 2) {
    w = pack_width(c, (int64_t)words - 1, &words);
    if (w >= 4 && state + (size_t)words * 4 < full) {
      pct[n] = pw ? 218 : w == 8 ? 10 : 25;
      out[n++] = state + (size_t)words * 4;
    }
  }
  if (dsp_state_bytes(c, 0) < full) {
    pct[n] = pw ? 218 : 32;
    out[n++] = dsp_state_bytes(c, 0);
  }
  return n;
}

/* The requantization modes and the pairs of channels of the matrix
 * product (below) are compiled on every target as well: the compiler
 * tells from them which forms a layer takes (tn_crt_conv2d_s8_form_isa). */
/* Whether channel ch's multiplier and shift meet tn__crt_requant_s8's
 * conditions (those of requant_init_dsp). */
BLOCK_INLINE int pw_quant_ok(const TnCrtQuant *q, int32_t ch) {
  const int32_t k = q->per_channel ? ch : 0;
  const int32_t m = q->multiplier[k], s = q->shift[k];
  return m >= 0 && (m == 0 || m >= (INT32_C(1) << 30)) && s <= -1 &&
         s >= -20;
}

/*
 * How a layer's sums are requantized: PW_FAST where every channel meets
 * tn__crt_requant_s8's conditions; PW_WIDE where every
 * channel has m = 0, or m > 0 and a shift in [-31, -2], which a layer
 * with channels of near-zero weights has (a shift below -20: VWW's
 * pointwise layers); PW_ANY otherwise (pw_out has the three).
 */
enum { PW_ANY, PW_FAST, PW_WIDE };

BLOCK_INLINE int pw_mode(const Conv *c, const TnCrtQuant *q) {
  if (q->output_offset < -128 || q->output_offset > 127) return PW_ANY;
  const int32_t n = q->per_channel ? c->p->out_c : 1;
  int fast = 1, wide = 1;
  for (int32_t ch = 0; ch < n; ch++) {
    const int32_t k = q->per_channel ? ch : 0;
    const int32_t m = q->multiplier[k], s = q->shift[k];
    fast = fast && pw_quant_ok(q, ch);
    wide = wide && (m == 0 || (m > 0 && s <= -2 && s >= -31));
  }
  return fast ? PW_FAST : wide ? PW_WIDE : PW_ANY;
}

/* How many channel pairs from the first pw_pairs can take: those whose
 * second row's pw_cols(p) taps end within the weights (all of them but
 * for a window that is not whole words of eight taps). */
static int32_t pw_pairs_max(const TnCrtConv2d *p) {
  const int32_t n8 = pw_cols(p), ws = pw_window(p), nc = p->out_c;
  int32_t back = 1; /* rows from a second row's start to the end */
  while (back * ws < n8) back++;
  return nc - back - 1 >= 0 ? (nc - back - 1) / 2 + 1 : 0;
}

#if TN_CRT_HAVE_ARM_DSP

/* conv_s8.c's taps of a window inside the input: [*k0, *k1). */
static inline void taps(int32_t origin, int32_t k, int32_t dilation,
                        int32_t size, int32_t *k0, int32_t *k1);

/* conv_s8.c's portable BCAST accumulation, the tail of dsp_bcast:
 * a[j] += (x[k * xs] + io) * w[k * ws + j] for k < n, j < len. */
static void bcast(uint32_t *restrict a, int32_t len, const int8_t *x,
                  ptrdiff_t xs, const int8_t *w, ptrdiff_t ws, int32_t n,
                  int16_t io);

/*
 * SMLAD does two multiply-adds of int16 pairs; SXTB16/SXTAB16 unpack a
 * word of four int8 into the pairs (k, k + 2) and (k + 1, k + 3), adding
 * the input offset on the way (dsp.h). A block's channels go four
 * at a time, their sums named scalars (registers); a tail of 1 to 3
 * channels takes the portable C. For BCAST a word of weights is four
 * output channels of one input channel, and a sum pairs input channels k
 * and k + 2: PKHBT/PKHTB join the halfwords of rows k and k + 2 into
 * (w[k][j], w[k][j+1], w[k+2][j], w[k+2][j+1]), so that SXTB16 gives
 * channel j's pair, and with the rotation channel j + 1's (bcast_pairs).
 * Four input by four output channels then take 5 loads, 4 packs, 10
 * unpacks and 8 SMLADs for 16 multiply-adds (the portable C: about 8
 * instructions for one); dsp_packed below does that unpacking once a
 * block. DOT unpacks both operands, the filter offset added by SXTAB16.
 */
typedef struct {
  int32_t s[4];
} Acc4;

/* A memcpy of constant size: plain loads and stores. Inlined into
 * conv_s8.c's loops, this keeps a block's four sums in registers across
 * the SMLAD assembly with fewer spills at -Os than element-by-element
 * copies do (those cost keyword spotting 8% at -Os there). */
#define acc4_load(c, a) __builtin_memcpy((c)->s, (a), sizeof(c)->s)
#define acc4_store(a, c) __builtin_memcpy((a), (c)->s, sizeof(c)->s)

/* u[j] = (w0[j], w1[j]) for the four channels of the weight words w0 and
 * w1 (two rows of BCAST weights). */
BLOCK_INLINE void bcast_pairs(int32_t *u, uint32_t w0, uint32_t w1) {
  const uint32_t lo = tn__crt_pack_lo(w0, w1), hi = tn__crt_pack_hi(w0, w1);
  u[0] = __sxtb16((int32_t)lo), u[1] = tn__crt_sxtb16_ror8(lo);
  u[2] = __sxtb16((int32_t)hi), u[3] = tn__crt_sxtb16_ror8(hi);
}

/* c[j] += u[j] . x for four pairs u and a pair of inputs x. */
BLOCK_INLINE void smlad4(Acc4 *c, const int32_t *u, int32_t x) {
  c->s[0] = __smlad(u[0], x, c->s[0]), c->s[1] = __smlad(u[1], x, c->s[1]);
  c->s[2] = __smlad(u[2], x, c->s[2]), c->s[3] = __smlad(u[3], x, c->s[3]);
}

/* c[j] += w0[j] * x.lo + w1[j] * x.hi, x a pair of inputs. */
BLOCK_INLINE void bcast_quad(Acc4 *c, uint32_t w0, uint32_t w1, int32_t x) {
  int32_t u[4];
  bcast_pairs(u, w0, w1), smlad4(c, u, x);
}

/* BCAST with contiguous inputs, for the window from its first in-bounds
 * tap as accumulate walks it: a[j] += (x[k] + io) * w[k * ws2 + j] over
 * rows (x dy, w ws0 apart) of runs (dx, ws1 apart) of n inputs, j < len. */
static void dsp_bcast(uint32_t *restrict a, int32_t len, const int8_t *x,
                      const int8_t *w, const Conv *c, const Win *wn) {
  const TnCrtConv2d *p = c->p;
  const int32_t nkx = wn->kx1 - wn->kx0, rows = wn->ky1 - wn->ky0;
  const int32_t runs = c->merge ? 1 : nkx, n = c->merge ? nkx * c->cpg
                                                        : c->cpg;
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * p->in_strides[2];
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const ptrdiff_t ws0 = p->w_strides[0], ws1 = p->w_strides[1];
  const ptrdiff_t ws = p->w_strides[2];
  const int32_t io = c->io, io2 = tn__crt_pair(io, io);
  int32_t j = 0;
  for (; j + 4 <= len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    const int8_t *xr = x, *wr = w + j;
    for (int32_t ky = 0; ky < rows; ky++, xr += dy, wr += ws0)
      for (int32_t i = 0; i < runs; i++) {
        const int8_t *xk = xr + i * dx, *wk = wr + i * ws1;
        int32_t k = n;
        for (; k >= 4; k -= 4, xk += 4) {
          const uint32_t xv = tn__crt_load4(xk);
          const uint32_t w0 = tn__crt_load4(wk), w1 = tn__crt_load4(wk + ws);
          wk += 2 * ws;
          const uint32_t w2 = tn__crt_load4(wk), w3 = tn__crt_load4(wk + ws);
          wk += 2 * ws;
          bcast_quad(&s, w0, w2, __sxtab16(io2, (int32_t)xv));
          bcast_quad(&s, w1, w3, tn__crt_sxtab16_ror8(io2, xv));
        }
        if (k >= 2) {
          bcast_quad(&s, tn__crt_load4(wk), tn__crt_load4(wk + ws),
                     tn__crt_pair(xk[0] + io, xk[1] + io));
          k -= 2, xk += 2, wk += 2 * ws;
        }
        if (k == 1) {
          const uint32_t wv = tn__crt_load4(wk);
          bcast_quad(&s, wv, wv, tn__crt_pair(xk[0] + io, 0));
        }
      }
    acc4_store(a + j, &s);
  }
  for (int32_t ky = 0; j < len && ky < rows; ky++)
    for (int32_t i = 0; i < runs; i++)
      bcast(a + j, len - j, x + ky * dy + i * dx, 1,
                         w + j + ky * ws0 + i * ws1, ws, n, (int16_t)io);
}

/* The pairs of the len (4, 8 or 16) channels at co0. Within a run, input
 * channel k's weights are k * ws2 on (merge: ws1 == cpg * ws2). */
static void pack_block(Pack *pk, const Conv *c, int32_t co0, int32_t len) {
  const TnCrtConv2d *p = c->p;
  const ptrdiff_t ws2 = p->w_strides[2];
  int32_t *o = pk->w;
  pack_geometry(c, pk);
  for (int32_t j = 0; j < len; j += 4)
    for (int32_t r = 0; r < pk->runs; r++) {
      const int32_t ky = c->merge ? r : r / p->k_w;
      const int32_t kx = c->merge ? 0 : r % p->k_w;
      const int8_t *w = c->w + (ptrdiff_t)ky * p->w_strides[0] +
                        (ptrdiff_t)kx * p->w_strides[1] +
                        (ptrdiff_t)(co0 + j) * p->w_strides[3];
      for (int32_t k = 0; k < pk->n; k += 4, o += 8) {
        uint32_t v[4];
        for (int32_t i = 0; i < 4; i++)
          v[i] = k + i < pk->n ? tn__crt_load4(w + (k + i) * ws2) : 0;
        bcast_pairs(o, v[0], v[2]);
        bcast_pairs(o + 4, v[1], v[3]);
      }
    }
}

/* The accumulators (from the bias) of the block at the pixel of wn from
 * the pairs of pk; 0 (a left untouched) when the pixel's runs do not start
 * a quad (a left border, input channels not a multiple of 4). */
static int dsp_packed(const Conv *c, const Pack *pk, const Win *wn, int32_t co0,
                      int32_t len, const uint32_t *bias, uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const int32_t nkx = wn->kx1 - wn->kx0, nky = wn->ky1 - wn->ky0;
  const int32_t k0 = c->merge ? wn->kx0 * c->cpg : 0;
  if (k0 % 4 != 0) return 0;
  /* Every lane from the bias (the lanes past len too, which the
   * requantization computes and nothing stores), then the sums from a. */
  for (int32_t j = 0; j < BLK; j++) a[j] = bias[j];
  if (nkx <= 0 || nky <= 0) return 1;
  const ptrdiff_t dx = (ptrdiff_t)p->dilation_w * p->in_strides[2];
  const ptrdiff_t dy = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  const int8_t *x = wn->x + (ptrdiff_t)wn->iy0 * p->in_strides[1] +
                    wn->ky0 * dy +
                    (ptrdiff_t)(wn->ix0 + wn->kx0 * p->dilation_w) *
                        p->in_strides[2] +
                    (ptrdiff_t)(co0 / c->fpg) * c->cpg;
  /* Runs of a row, their first one, and runs from a row to the next. */
  const int32_t runs = c->merge ? 1 : nkx, n = c->merge ? nkx * c->cpg
                                                        : c->cpg;
  const int32_t r0 = c->merge ? wn->ky0 : wn->ky0 * p->k_w + wn->kx0;
  const int32_t rstep = c->merge ? 1 : p->k_w;
  const int32_t io = c->io, io2 = tn__crt_pair(io, io);
  for (int32_t j = 0; j < len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    const int32_t *wg = pk->w + (ptrdiff_t)(j / 4) * pk->runs * pk->quads * 8;
    for (int32_t ky = 0; ky < nky; ky++)
      for (int32_t i = 0; i < runs; i++) {
        const int8_t *xk = x + ky * dy + i * dx;
        const int32_t *wp =
            wg + ((ptrdiff_t)(r0 + ky * rstep + i) * pk->quads + k0 / 4) * 8;
        int32_t k = n;
        for (; k >= 4; k -= 4, xk += 4, wp += 8) {
          const uint32_t xv = tn__crt_load4(xk);
          tn__crt_smlad8(s.s, wp, __sxtab16(io2, (int32_t)xv),
                         tn__crt_sxtab16_ror8(io2, xv));
        }
        if (k > 0) { /* the pairs past the run are zero: any input does */
          smlad4(&s, wp, tn__crt_pair(xk[0] + io, k > 2 ? xk[2] + io : 0));
          if (k > 1) smlad4(&s, wp + 4, tn__crt_pair(xk[1] + io, 0));
        }
      }
    acc4_store(a + j, &s);
  }
  return 1;
}

/*
 * DW sums pair taps t and t + 1 (the last of an odd count with zero), the
 * weights' pairs made once a block (pack_dw). As in the SSE2 form, the
 * input offset is folded out (sum((x + io) * w) = sum(x * w) + io *
 * sum(w), a constant the sums start from) and every pixel takes the whole
 * window, a tap outside the input reading pk->pad, bytes of -io that
 * cancel their share of the constant, so that the pairs never shift. The
 * inputs of a tap pair are paired as bcast_pairs pairs weights.
 */
static void pack_dw(Pack *pk, const Conv *c, int32_t co0, int32_t len,
                    const uint32_t *bias) {
  const TnCrtConv2d *p = c->p;
  pk->taps = p->k_h * p->k_w;
  __builtin_memset(pk->pad, -c->io, sizeof pk->pad); /* io in [-127, 128] */
  for (int32_t t = 0; t < pk->taps; t++)
    pk->xo[t] = (ptrdiff_t)(t / p->k_w) * p->dilation_h * p->in_strides[1] +
                (ptrdiff_t)(t % p->k_w) * p->dilation_w * p->in_strides[2];
  int32_t *o = pk->w;
  for (int32_t j = 0; j < BLK; j++) pk->corr[j] = bias[j];
  for (int32_t j = 0; j < len; j += 4)
    for (int32_t t = 0; t < pk->taps; t += 2, o += 4) {
      uint32_t v[2] = {0, 0};
      for (int32_t i = 0; i < 2 && t + i < pk->taps; i++) {
        const int8_t *w = c->w + co0 + j +
                          (ptrdiff_t)((t + i) / p->k_w) * p->w_strides[0] +
                          (ptrdiff_t)((t + i) % p->k_w) * p->w_strides[1];
        v[i] = tn__crt_load4(w);
        for (int32_t k = 0; k < 4; k++)
          pk->corr[j + k] += (uint32_t)c->io * (uint32_t)w[k];
      }
      bcast_pairs(o, v[0], v[1]);
    }
}

static void dsp_dw_packed(const Conv *c, const Pack *pk, const Win *wn,
                          int32_t co0, int32_t len, uint32_t *restrict a) {
  const TnCrtConv2d *p = c->p;
  const int8_t *tap[DW_TAPS + 1];
  /* The window's origin (outside the input for a border pixel: only
   * offsets of taps inside make pointers). */
  const ptrdiff_t o = (ptrdiff_t)wn->iy0 * p->in_strides[1] +
                      (ptrdiff_t)wn->ix0 * p->in_strides[2] + co0;
  int32_t t = 0;
  if (wn->ky0 == 0 && wn->ky1 == p->k_h && wn->kx0 == 0 && wn->kx1 == p->k_w)
    for (; t < pk->taps; t++) tap[t] = wn->x + (o + pk->xo[t]);
  else
    for (int32_t ky = 0; ky < p->k_h; ky++) {
      const int in = ky >= wn->ky0 && ky < wn->ky1;
      for (int32_t kx = 0; kx < p->k_w; kx++, t++)
        tap[t] = in && kx >= wn->kx0 && kx < wn->kx1 ? wn->x + (o + pk->xo[t])
                                                     : pk->pad;
    }
  tap[t] = pk->pad;
  const int32_t taps = pk->taps;
  const int32_t *w = pk->w;
  for (int32_t j = 0; j < BLK; j++) a[j] = pk->corr[j];
  for (int32_t j = 0; j < len; j += 4) {
    Acc4 s;
    acc4_load(&s, a + j);
    for (t = 0; t < taps; t += 2, w += 4) {
      const uint32_t x0 = tn__crt_load4(tap[t] + j);
      const uint32_t x1 = tn__crt_load4(tap[t + 1] + j);
      tn__crt_smlad4_bytes(s.s, tn__crt_pack_lo(x0, x1),
                           tn__crt_pack_hi(x0, x1), w);
    }
    acc4_store(a + j, &s);
  }
}

/* dot for contiguous operands whose offset sums fit an int16. */
static uint32_t dsp_dot(const int8_t *x, const int8_t *w, int32_t n, int32_t io,
                        int32_t fo) {
  const int32_t io2 = tn__crt_pair(io, io), fo2 = tn__crt_pair(fo, fo);
  int32_t s0 = 0, s1 = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t xv = tn__crt_load4(x + i), wv = tn__crt_load4(w + i);
    s0 = __smlad(__sxtab16(io2, (int32_t)xv), __sxtab16(fo2, (int32_t)wv),
                 s0);
    s1 = __smlad(tn__crt_sxtab16_ror8(io2, xv),
                 tn__crt_sxtab16_ror8(fo2, wv), s1);
  }
  uint32_t s = (uint32_t)s0 + (uint32_t)s1;
  for (; i < n; i++) s += (uint32_t)((x[i] + io) * (w[i] + fo));
  return s;
}

/* requant_exact for every lane when rq->dsp (tn__crt_requant_s8). */
static void requant_dsp(const Requant *restrict rq, const uint32_t *restrict a,
                        int32_t n, int8_t *restrict res) {
  const int32_t lo = rq->lo, hi = rq->hi;
  for (int32_t j = 0; j < n; j++)
    res[j] = (int8_t)tn__crt_requant_s8((int32_t)a[j], (int32_t)rq->m[j],
                                        rq->round[j], rq->r[j]);
  if (lo != -128 || hi != 127)
    for (int32_t j = 0; j < n; j++)
      res[j] = (int8_t)(res[j] < lo ? lo : res[j] > hi ? hi : res[j]);
}

/* requant_dsp's constants of the block rq (its multipliers and shifts set
 * by requant_init). */
static void requant_init_dsp(Requant *rq) {
  /* tn__crt_requant_s8's conditions: a multiplier of 0 or at least 2^30
   * (what tn_crt_quantize_multiplier gives), a right shift in [1, 20], an
   * output offset in [-128, 127]. */
  rq->dsp = rq->vec && rq->off >= -128 && rq->off <= 127;
  for (int32_t j = 0; j < BLK; j++) {
    const uint32_t r = rq->r[j];
    rq->round[j] = (int32_t)(((UINT32_C(1) << r) >> 1) +
                             ((uint32_t)rq->off << r));
    if ((rq->len <= 8 ? j % 8 : j) < rq->len &&
        ((rq->m[j] != 0 && rq->m[j] < UINT32_C(1) << 30) || r < 1 || r > 20))
      rq->dsp = 0;
  }
}

/*
 * One-group convolutions whose weights hold each output channel's taps in
 * a row (OHWI or OIHW: codegen.compile gives regular layers OHWI for a
 * Cortex-M target, ConvertKernelLayout): a matrix product of the pixels'
 * windows by the weights' rows, two pixels by two output channels at a
 * time. A pixel pair's windows are copied first, in the weights' order,
 * into columns in scratch (im2col), unpacked into int16 pairs as SXTB16
 * gives them (once a pixel pair, for every channel pair after), the two
 * pixels' words interleaved, with -io for taps outside the input. Then
 * sum((x + io) * w) = sum(x * w) + io * sum(w) over the whole window, so
 * each channel starts from its bias plus io times its weights' sum
 * (pw_corr, in scratch, once a layer), and the inner loop (pw_pairs,
 * the columns padded with zero taps to whole words of eight) takes per
 * four taps four loads of the pixels' pairs, a word of each channel's
 * weights, four unpacks and eight SMLADs for sixteen multiply-adds
 * (about 20 cycles on a Cortex-M4), with no weight packed. The
 * pixels go in pairs, outermost, so that a 1x1 layer in place (PIXELS,
 * see "In place" in conv_s8.c) needs no more than its columns: a pair's
 * outputs end no later than its inputs do, so they overwrite only inputs
 * already copied. dsp_pw_ok says whether a layer takes this path; the
 * blocks above take every other. The requantization is pw_out's, in
 * the layer's mode (pw_mode).
 */
/* The columns' paths for speed alone (pw_unit, pw_gathered, pw_inside,
 * four words a turn in pw_words, and pw_put and pw_next inlined wherever
 * they are called): 1 in builds for speed, 0 in builds for size (-Os),
 * whose flash they would grow (keyword spotting's by about 0.7 KB) for
 * under 1 % fewer cycles. */
#if defined(__OPTIMIZE_SIZE__)
#define TN__PW_SPEED 0
#define PW_PUT_INLINE static inline
#else
#define TN__PW_SPEED 1
#define PW_PUT_INLINE BLOCK_INLINE
#endif

/* The output pixels in order (batch, row, column), and where the current
 * one's output starts. */
typedef struct {
  const TnCrtConv2d *p;
  int8_t *out, *o;
  int32_t n, oy, ox;
} PwPixels;

static void pw_row(PwPixels *it) {
  const TnCrtConv2d *p = it->p;
  it->o = it->out + (ptrdiff_t)it->n * p->out_strides[0] +
          (ptrdiff_t)it->oy * p->out_strides[1];
}

PW_PUT_INLINE void pw_next(PwPixels *it) {
  const TnCrtConv2d *p = it->p;
  if (++it->ox < p->out_w) {
    it->o += p->out_strides[2];
    return;
  }
  it->ox = 0;
  if (++it->oy == p->out_h) it->oy = 0, it->n++;
  pw_row(it);
}

/* Where tap t of pixel i lies in the columns, in int16 elements: per
 * quad of taps k .. k + 3 (k = t & ~3) four words, pixel 0's pairs
 * (k, k + 2) and (k + 1, k + 3), then pixel 1's, each pair as SXTB16
 * unpacks a word (the SMLAD operands, ready). */
static inline ptrdiff_t pw_at(int32_t t, int i) {
  return (ptrdiff_t)(t >> 2) * 8 + i * 4 + (t & 1) * 2 + ((t >> 1) & 1);
}

/* A word of four taps v at o, unpacked into its two pairs. */
BLOCK_INLINE void pw_word_put(int16_t *o, uint32_t v) {
  const int32_t lo = __sxtb16((int32_t)v), hi = tn__crt_sxtb16_ror8(v);
  __builtin_memcpy(o, &lo, 4);
  __builtin_memcpy(o + 2, &hi, 4);
}

/* len & ~3 bytes of x as words into the column at o (a quad's start):
 * four words a turn, their loads in a row, in builds for speed; returns
 * where the next quad goes. */
BLOCK_INLINE int16_t *pw_words(int16_t *o, const int8_t *x, int32_t len) {
  int32_t k = 0;
  if (TN__PW_SPEED)
    for (; k + 16 <= len; k += 16, o += 32) {
      const uint32_t v0 = tn__crt_load4(x + k), v1 = tn__crt_load4(x + k + 4);
      const uint32_t v2 = tn__crt_load4(x + k + 8);
      const uint32_t v3 = tn__crt_load4(x + k + 12);
      pw_word_put(o, v0), pw_word_put(o + 8, v1);
      pw_word_put(o + 16, v2), pw_word_put(o + 24, v3);
    }
  for (; k + 4 <= len; k += 4, o += 8) pw_word_put(o, tn__crt_load4(x + k));
  return o;
}

/* len bytes of x into pixel i's column from tap t on: one by one up to
 * a quad's start, then a word at a time (pw_words), unpacked into its
 * two pairs, then the rest one by one (a window row of 3x3x3 taps starts
 * at tap 0, 9 or 18). */
PW_PUT_INLINE void pw_put(int16_t *cols, int i, int32_t t, const int8_t *x,
                          int32_t len) {
  int32_t k = 0;
  for (; k < len && ((t + k) & 3) != 0; k++) cols[pw_at(t + k, i)] = x[k];
  int16_t *o = cols + pw_at(t + k, i);
  if (TN__PW_SPEED) o = pw_words(o, x + k, len - k), k += (len - k) & ~3;
  /* builds for size: a word a turn here, as pw_words would be (gcc keeps
   * this loop's state in fewer registers than that call's inlined) */
  for (; k + 4 <= len; k += 4, o += 8) pw_word_put(o, tn__crt_load4(x + k));
  for (; k < len; k++) cols[pw_at(t + k, i)] = x[k];
}

/* len bytes of v into pixel i's column from tap t on: in builds for
 * speed, one by one up to a quad's start, then a quad's two words of
 * (v, v) pairs at a time (IC's padded windows: 27 k taps a run, about
 * ten cycles each one by one), then the rest one by one. */
PW_PUT_INLINE void pw_fill(int16_t *cols, int i, int32_t t, int8_t v, int32_t len) {
  int32_t k = 0;
  if (TN__PW_SPEED) {
    for (; k < len && ((t + k) & 3) != 0; k++) cols[pw_at(t + k, i)] = v;
    const uint32_t vv = (uint16_t)v * UINT32_C(0x10001);
    for (int16_t *o = cols + pw_at(t + k, i); k + 4 <= len; k += 4, o += 8) {
      __builtin_memcpy(o, &vv, 4);
      __builtin_memcpy(o + 2, &vv, 4);
    }
  }
  for (; k < len; k++) cols[pw_at(t + k, i)] = v;
}

/* A word from x to g. */
BLOCK_INLINE void pw_move4(int8_t *g, const int8_t *x) {
  uint32_t v = tn__crt_load4(x);
  __asm__("" : "+r"(v)); /* a word moved, not a memcpy call (gcc's) */
  __builtin_memcpy(g, &v, 4);
}

/* The window's rows (k_h runs of len bytes at x, step apart) one after
 * another into g: a word at a time, then the run's last word over the
 * one before where the run is a word or more (rows of 9 taps: three
 * words), else byte by byte, reading nothing past a run (len & 3 bytes:
 * at most three). */
static void pw_gather(int8_t *g, const int8_t *x, ptrdiff_t step, int32_t k_h,
                      int32_t len) {
  for (int32_t ky = 0; ky < k_h; ky++, x += step, g += len) {
    int32_t k = 0;
    for (; k + 4 <= len; k += 4) pw_move4(g + k, x + k);
    if (k < len && k > 0) {
      pw_move4(g + len - 4, x + len - 4);
      continue;
    }
    /* at most three, written out: no memcpy call either */
    if (k < len) g[k] = x[k];
    if (k + 1 < len) g[k + 1] = x[k + 1];
    if (k + 2 < len) g[k + 2] = x[k + 2];
  }
}

/* The window of the pixel at `it` into pixel i's column: tap (ky, kx, ci)
 * at its weights' offset within a row; -io for taps outside the input.
 * With OHWI weights over NHWC data a row of the window is one run of the
 * input (but for its columns outside), which goes by words. */
static void pw_im2col(int16_t *cols, int i, const Conv *c,
                      const PwPixels *it) {
  const TnCrtConv2d *p = c->p;
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  const int32_t iy0 = it->oy * p->stride_h - p->pad_top;
  const int32_t ix0 = it->ox * p->stride_w - p->pad_left;
  const int8_t pad = (int8_t)-c->io;
  const int8_t *xn = c->in + (ptrdiff_t)it->n * is[0];
  const int32_t nc = p->in_c;
  const int rows = ws[2] == 1 && ws[1] == nc && is[3] == 1 && is[2] == nc &&
                   p->dilation_w == 1;
  int32_t kx0 = 0, kx1 = p->k_w; /* the window's columns inside */
  if (rows) taps(ix0, p->k_w, 1, p->in_w, &kx0, &kx1);
  if (rows && kx0 == 0 && kx1 == p->k_w && iy0 >= 0 &&
      (int64_t)iy0 + (int64_t)(p->k_h - 1) * p->dilation_h < p->in_h) {
    /* the whole window inside (most of a layer's pixels): a run a row */
    const int8_t *x = xn + (ptrdiff_t)iy0 * is[1] + (ptrdiff_t)ix0 * nc;
    const ptrdiff_t step = (ptrdiff_t)p->dilation_h * is[1];
    const int32_t len = p->k_w * nc;
    for (int32_t ky = 0, t = 0; ky < p->k_h; ky++, t += ws[0], x += step)
      pw_put(cols, i, t, x, len);
    return;
  }
  for (int32_t ky = 0; ky < p->k_h; ky++) {
    const int64_t iy = (int64_t)iy0 + (int64_t)ky * p->dilation_h;
    const int row_in = iy >= 0 && iy < p->in_h;
    const int8_t *xr = xn + (row_in ? (ptrdiff_t)iy * is[1] : 0);
    if (rows) { /* OHWI over NHWC: one run, pads around it */
      const int32_t t = ky * ws[0];
      if (!row_in || kx1 <= kx0) {
        pw_fill(cols, i, t, pad, p->k_w * nc);
        continue;
      }
      pw_fill(cols, i, t, pad, kx0 * nc);
      pw_put(cols, i, t + kx0 * nc, xr + (ptrdiff_t)(ix0 + kx0) * nc,
             (kx1 - kx0) * nc);
      pw_fill(cols, i, t + kx1 * nc, pad, (p->k_w - kx1) * nc);
      continue;
    }
    for (int32_t kx = 0; kx < p->k_w; kx++) {
      const int64_t ix = (int64_t)ix0 + (int64_t)kx * p->dilation_w;
      const int32_t t0 = ky * ws[0] + kx * ws[1];
      const int inside = row_in && ix >= 0 && ix < p->in_w;
      const int8_t *x = inside ? xr + (ptrdiff_t)ix * is[2] : NULL;
      for (int32_t ci = 0; ci < nc; ci++)
        cols[pw_at(t0 + ci * ws[2], i)] =
            inside ? x[(ptrdiff_t)ci * is[3]] : pad;
    }
  }
}

/* Whether every pixel's window is one pixel of the input, its in_c bytes
 * in a run: a 1x1 layer, channels contiguous, no pixel outside (most
 * pointwise layers). Its columns then take pw_unit, without pw_im2col's
 * preamble (about 160 instructions for a pixel of 8 channels: VWW's
 * first pointwise layer took 1.83 M estimated cycles, now 1.50 M). */
static int pw_unit_ok(const TnCrtConv2d *p) {
  return p->k_h == 1 && p->k_w == 1 && p->in_strides[3] == 1 &&
         p->pad_top == 0 && p->pad_left == 0 &&
         (int64_t)(p->out_h - 1) * p->stride_h < p->in_h &&
         (int64_t)(p->out_w - 1) * p->stride_w < p->in_w;
}

/* Whether the windows are gathered first (pw_gathered): OHWI weights
 * over channels-contiguous NHWC data, undilated columns, two rows or
 * more, and at most PW_GATHER taps (VWW's and IC's first layers: 3x3x3,
 * rows of 9 taps; KWS's: 10x4x1, rows of a word). Such a window's rows,
 * one by one in pw_im2col, took three times the instructions, most of
 * them placing single bytes (rows not of whole words, and the taps of a
 * window the padding cuts) or entering pw_put's loops for a word. */
enum { PW_GATHER = 64 };
static int pw_gather_ok(const TnCrtConv2d *p) {
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  const int32_t len = p->k_w * p->in_c;
  return p->k_h > 1 && p->k_h * len <= PW_GATHER && ws[2] == 1 &&
         ws[1] == p->in_c && ws[0] == len && is[3] == 1 &&
         is[2] == p->in_c && p->dilation_w == 1;
}

/* The rows of a window the padding cuts into g (pw_gather's order): the
 * taps of columns [kx0, kx1) of the rows inside the input from xn (the
 * batch's first pixel), -io for the others. Each row is filled with -io
 * by words, then its taps inside are copied over it byte by byte (three
 * bytes a row on KWS), each through an empty asm so that gcc calls
 * neither memset nor memcpy for such short runs. */
static void pw_gather_cut(int8_t *g, const Conv *c, const int8_t *xn,
                          int32_t iy0, int32_t ix0, int32_t kx0,
                          int32_t kx1) {
  const TnCrtConv2d *p = c->p;
  const int32_t nc = p->in_c, len = p->k_w * nc, a = kx0 * nc;
  const int32_t n = (kx1 - kx0) * nc; /* the taps inside, of a row inside */
  const ptrdiff_t step = (ptrdiff_t)p->dilation_h * p->in_strides[1];
  int32_t ky0, ky1; /* the window's rows inside */
  taps(iy0, p->k_h, p->dilation_h, p->in_h, &ky0, &ky1);
  ptrdiff_t at = (ptrdiff_t)(ix0 + kx0) * nc; /* row ky0's first tap */
  if (ky0 < ky1) at += ((ptrdiff_t)iy0 + (ptrdiff_t)ky0 * p->dilation_h) *
                       p->in_strides[1];
  uint32_t pads = (uint8_t)-c->io * UINT32_C(0x01010101);
  __asm__("" : "+r"(pads));
  for (int32_t ky = 0; ky < p->k_h; ky++, g += len) {
    int32_t k = 0;
    for (; k + 4 <= len; k += 4) __builtin_memcpy(g + k, &pads, 4);
    for (; k < len; k++) {
      int8_t v = (int8_t)pads;
      __asm__("" : "+r"(v));
      g[k] = v;
    }
    if (ky < ky0 || ky >= ky1) continue;
    const int8_t *x = xn + at;
    at += step;
    for (k = 0; k < n; k++) {
      int8_t v = x[k];
      __asm__("" : "+r"(v));
      g[a + k] = v;
    }
  }
}

/* pw_im2col where pw_gather_ok holds: the window's rows into one run on
 * the stack (pw_gather where it lies inside the input, else
 * pw_gather_cut), then by words as a whole. */
BLOCK_INLINE void pw_gathered(int16_t *cols, int i, const Conv *c,
                              const PwPixels *it) {
  const TnCrtConv2d *p = c->p;
  const int32_t *is = p->in_strides;
  const int32_t iy0 = it->oy * p->stride_h - p->pad_top;
  const int32_t ix0 = it->ox * p->stride_w - p->pad_left;
  const int32_t len = p->k_w * p->in_c;
  const int8_t *xn = c->in + (ptrdiff_t)it->n * is[0];
  const int32_t n = p->k_h * len, n4 = (n + 3) & ~3;
  _Alignas(4) int8_t g[PW_GATHER];
  /* zeros up to a whole word past the window (the columns' padding taps
   * are zero already, pw_run), written first, the window's taps over
   * them: the window then goes by words alone (VWW's and IC's first
   * layers: 27 taps, the last three one by one before) */
  const uint32_t zero = 0;
  __builtin_memcpy(g + n4 - 4, &zero, 4);
  if (iy0 < 0 || ix0 < 0 || ix0 + p->k_w > p->in_w ||
      (int64_t)iy0 + (int64_t)(p->k_h - 1) * p->dilation_h >= p->in_h) {
    int32_t kx0, kx1; /* the window's columns inside */
    taps(ix0, p->k_w, 1, p->in_w, &kx0, &kx1);
    pw_gather_cut(g, c, xn, iy0, ix0, kx0, kx1);
  } else
    pw_gather(g, xn + (ptrdiff_t)iy0 * is[1] + (ptrdiff_t)ix0 * is[2],
              (ptrdiff_t)p->dilation_h * is[1], p->k_h, len);
  pw_words(cols + pw_at(0, i), g, n4);
}

/* pw_im2col where pw_unit_ok holds. */
BLOCK_INLINE void pw_unit(int16_t *cols, int i, const Conv *c,
                          const PwPixels *it) {
  const TnCrtConv2d *p = c->p;
  const int32_t *is = p->in_strides;
  pw_put(cols, i, 0,
         c->in + (ptrdiff_t)it->n * is[0] +
             (ptrdiff_t)it->oy * p->stride_h * is[1] +
             (ptrdiff_t)it->ox * p->stride_w * is[2],
         p->in_c);
}

/* Whether a window wholly inside the input is copied by pw_inside: OHWI
 * weights over channels-contiguous NHWC data, undilated columns, and a
 * window row of whole words (k_w * in_c a multiple of 4: IC's 3x3
 * layers, rows of 48, 96 and 192 taps), so that its rows follow one
 * another in the columns quad by quad. */
static int pw_inside_ok(const TnCrtConv2d *p) {
  const int32_t *ws = p->w_strides, *is = p->in_strides;
  const int32_t len = p->k_w * p->in_c;
  return ws[2] == 1 && ws[1] == p->in_c && ws[0] == len && is[3] == 1 &&
         is[2] == p->in_c && p->dilation_w == 1 && (len & 3) == 0;
}

/* pw_im2col for a window wholly inside the input, where pw_inside_ok
 * holds: its k_h runs of len bytes straight into pixel i's column, 16
 * bytes a turn, without pw_im2col's per-row set-up (IC's 3x3 layers
 * spent about as many cycles on that as on the copying). Returns 0,
 * writing nothing, for a window the padding cuts. */
BLOCK_INLINE int pw_inside(int16_t *cols, int i, const Conv *c,
                           const PwPixels *it) {
  const TnCrtConv2d *p = c->p;
  const int32_t *is = p->in_strides;
  const int32_t iy0 = it->oy * p->stride_h - p->pad_top;
  const int32_t ix0 = it->ox * p->stride_w - p->pad_left;
  if (iy0 < 0 || ix0 < 0 || ix0 + p->k_w > p->in_w ||
      (int64_t)iy0 + (int64_t)(p->k_h - 1) * p->dilation_h >= p->in_h)
    return 0;
  const int8_t *x = c->in + (ptrdiff_t)it->n * is[0] +
                    (ptrdiff_t)iy0 * is[1] + (ptrdiff_t)ix0 * is[2];
  const ptrdiff_t step = (ptrdiff_t)p->dilation_h * is[1];
  const int32_t len = p->k_w * p->in_c;
  int16_t *o = cols + pw_at(0, i);
  for (int32_t ky = 0; ky < p->k_h; ky++, x += step) o = pw_words(o, x, len);
  return 1;
}

/* corr[j] = bias[j] + io * (the sum of channel j's n weights), mod 2^32.
 * A word of four weights is added into two pairs of int16 lanes by two
 * SXTAB16s (bytes 0 and 2, then 1 and 3), the lanes summed by one SMLAD
 * a channel: each lane takes one weight of a word, and a window's at
 * most PW_MAX_WINDOW / 4 = 256 words keep it within [-32768, 32512]. In
 * builds for speed four words a turn (IC's sums: about 390 k estimated
 * cycles a run before, one SMLAD pair a word). */
_Static_assert(PW_MAX_WINDOW / 4 <= 256, "pw_corr's int16 lanes");
static void pw_corr(uint32_t *corr, const Conv *c, const int32_t *bias) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), ones = tn__crt_pair(1, 1);
  for (int32_t j = 0; j < p->out_c; j++) {
    const int8_t *w = c->w + (ptrdiff_t)j * p->w_strides[3];
    int32_t e = 0, o = 0, k = 0; /* bytes 0 and 2, bytes 1 and 3 */
    if (TN__PW_SPEED)
      for (; k + 16 <= n; k += 16) {
        const uint32_t v0 = tn__crt_load4(w + k), v1 = tn__crt_load4(w + k + 4);
        const uint32_t v2 = tn__crt_load4(w + k + 8);
        const uint32_t v3 = tn__crt_load4(w + k + 12);
        e = __sxtab16(e, (int32_t)v0), o = tn__crt_sxtab16_ror8(o, v0);
        e = __sxtab16(e, (int32_t)v1), o = tn__crt_sxtab16_ror8(o, v1);
        e = __sxtab16(e, (int32_t)v2), o = tn__crt_sxtab16_ror8(o, v2);
        e = __sxtab16(e, (int32_t)v3), o = tn__crt_sxtab16_ror8(o, v3);
      }
    for (; k + 4 <= n; k += 4) {
      const uint32_t v = tn__crt_load4(w + k);
      e = __sxtab16(e, (int32_t)v), o = tn__crt_sxtab16_ror8(o, v);
    }
    int32_t s = __smlad(e, ones, __smlad(o, ones, 0));
    for (; k < n; k++) s += w[k];
    corr[j] = (bias ? (uint32_t)bias[j] : 0) + (uint32_t)c->io * (uint32_t)s;
  }
}

/* The assembly below names its registers and memory operands through
 * TN__R: an extended asm's named operand (%[a0]) by default, while the
 * fourteen-register forms (pw_pairs_fast14) map each name to a fixed
 * register or a slot of their own frame (TN__RL_). */
#define TN__R(n) TN__RSEL(n)
#define TN__RSEL(n) "%[" #n "]"

/* Four taps of two pixels' columns (their four pairs, four loads at x)
 * by two channels' weights (a word at w0, unpacked, then one at w1), into
 * the four sums: the inner step of pw_sums and pw_pairs, in assembly. The
 * five loads in a row cost six cycles on a Cortex-M4 (a load after a load
 * takes one), and the columns' pairs need no unpacking. */
#define TN__PW_QUAD                               \
  "ldr %[a0], [%[x]], #4\n\t"                     \
  "ldr %[a1], [%[x]], #4\n\t"                     \
  "ldr %[b0], [%[x]], #4\n\t"                     \
  "ldr %[b1], [%[x]], #4\n\t"                     \
  "ldr %[u], [%[w0]], #4\n\t"                     \
  "sxtb16 %[u0], %[u]\n\t"                        \
  "sxtb16 %[u], %[u], ror #8\n\t"                 \
  "smlad %[s00], %[a0], %[u0], %[s00]\n\t"        \
  "smlad %[s00], %[a1], %[u], %[s00]\n\t"         \
  "smlad %[s10], %[b0], %[u0], %[s10]\n\t"        \
  "smlad %[s10], %[b1], %[u], %[s10]\n\t"         \
  "ldr %[u], [%[w1]], #4\n\t"                     \
  "sxtb16 %[u0], %[u]\n\t"                        \
  "sxtb16 %[u], %[u], ror #8\n\t"                 \
  "smlad %[s01], %[a0], %[u0], %[s01]\n\t"        \
  "smlad %[s01], %[a1], %[u], %[s01]\n\t"         \
  "smlad %[s11], %[b0], %[u0], %[s11]\n\t"        \
  "smlad %[s11], %[b1], %[u], %[s11]\n\t"

/*
 * TN__PW_QUAD with both channels' weight words loaded in the same run as
 * the columns (into u and v): six loads in a row cost seven estimated
 * cycles where TN__PW_QUAD's five and its later sixth cost eight, so a
 * quad takes 19 for its 16 multiply-adds instead of 20. It needs a
 * fourteenth register (v), more than gcc gives an asm statement where
 * the build keeps a frame pointer (r7); pw_pairs_fast14 saves and
 * restores every register itself instead.
 */
#define TN__PW_QUAD6                                                          \
  "ldr " TN__R(a0) ", [" TN__R(x) "], #4\n\t"                                 \
  "ldr " TN__R(a1) ", [" TN__R(x) "], #4\n\t"                                 \
  "ldr " TN__R(b0) ", [" TN__R(x) "], #4\n\t"                                 \
  "ldr " TN__R(b1) ", [" TN__R(x) "], #4\n\t"                                 \
  "ldr " TN__R(u) ", [" TN__R(w0) "], #4\n\t"                                 \
  "ldr " TN__R(v) ", [" TN__R(w1) "], #4\n\t"                                 \
  "sxtb16 " TN__R(u0) ", " TN__R(u) "\n\t"                                    \
  "sxtb16 " TN__R(u) ", " TN__R(u) ", ror #8\n\t"                             \
  "smlad " TN__R(s00) ", " TN__R(a0) ", " TN__R(u0) ", " TN__R(s00) "\n\t"    \
  "smlad " TN__R(s00) ", " TN__R(a1) ", " TN__R(u) ", " TN__R(s00) "\n\t"     \
  "smlad " TN__R(s10) ", " TN__R(b0) ", " TN__R(u0) ", " TN__R(s10) "\n\t"    \
  "smlad " TN__R(s10) ", " TN__R(b1) ", " TN__R(u) ", " TN__R(s10) "\n\t"     \
  "sxtb16 " TN__R(u0) ", " TN__R(v) "\n\t"                                    \
  "sxtb16 " TN__R(v) ", " TN__R(v) ", ror #8\n\t"                             \
  "smlad " TN__R(s01) ", " TN__R(a0) ", " TN__R(u0) ", " TN__R(s01) "\n\t"    \
  "smlad " TN__R(s01) ", " TN__R(a1) ", " TN__R(v) ", " TN__R(s01) "\n\t"     \
  "smlad " TN__R(s11) ", " TN__R(b0) ", " TN__R(u0) ", " TN__R(s11) "\n\t"    \
  "smlad " TN__R(s11) ", " TN__R(b1) ", " TN__R(v) ", " TN__R(s11) "\n\t"

#define TN__PW_OPERANDS                                                 \
  [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11),   \
      [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [a0] "=&r"(a0),        \
      [a1] "=&r"(a1), [b0] "=&r"(b0), [b1] "=&r"(b1), [u] "=&r"(u),     \
      [u0] "=&r"(u0)

/* The operands pw_pairs and pw_pairs_fast share: the four sums, the
 * temporaries, the weights' rows (wp) and the sums' starting values. */
#define TN__PW_PAIRS_OPERANDS                                             \
  [s00] "=&r"(s00), [s01] "=&r"(s01), [s10] "=&r"(s10), [s11] "=&r"(s11), \
      [x] "=&r"(x), [w0] "=&r"(w0), [w1] "=&r"(w1), [a0] "=&r"(a0),       \
      [a1] "=&r"(a1), [b0] "=&r"(b0), [b1] "=&r"(b1), [u] "=&r"(u),       \
      [u0] "=&r"(u0), [wp] "+m"(w), [corr] "+m"(corr)

/* A word of the columns (4-aligned). */
static inline int32_t pw_word(const int16_t *x) {
  int32_t v;
  __builtin_memcpy(&v, x, 4);
  return v;
}

/* Four taps of two pixels' columns at x (pw_at's order) by two channels'
 * weight words u and v into s (pixel 0 with each channel, then pixel 1):
 * pw_sums' quad in C. */
BLOCK_INLINE void pw_quad_c(int32_t s[4], const int16_t *x, uint32_t u,
                            uint32_t v) {
  const int32_t a0 = pw_word(x), a1 = pw_word(x + 2);
  const int32_t b0 = pw_word(x + 4), b1 = pw_word(x + 6);
  const int32_t u0 = __sxtb16((int32_t)u), u1 = tn__crt_sxtb16_ror8(u);
  const int32_t v0 = __sxtb16((int32_t)v), v1 = tn__crt_sxtb16_ror8(v);
  s[0] = __smlad(a1, u1, __smlad(a0, u0, s[0]));
  s[1] = __smlad(a1, v1, __smlad(a0, v0, s[1]));
  s[2] = __smlad(b1, u1, __smlad(b0, u0, s[2]));
  s[3] = __smlad(b1, v1, __smlad(b0, v0, s[3]));
}

/*
 * s[2 i + j] += sum over k < n of x_i[k] * w_j[k], for the columns of two
 * pixels (pw_at's order) and the weights w0, w1 of two channels. Eight
 * taps at a time in assembly: gcc keeps neither the four sums nor the
 * three pointers in registers across such a loop; it takes thirteen, all
 * a function has with a frame pointer, and the loop's end is in memory.
 * Then four taps at a time (all of them without optimisation), then
 * a last partial quad as a whole one in builds for speed, else one by
 * one.
 */
BLOCK_INLINE void pw_sums(int32_t s[4], const int16_t *cols, const int8_t *w0,
                          const int8_t *w1, int32_t n) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  const int16_t *x = cols;
#if defined(__OPTIMIZE__) /* unoptimised, gcc cannot free thirteen */
  if (n >= 8) {
    const int16_t *const end = x + (ptrdiff_t)(n >> 3) * 16;
    uint32_t a0, a1, b0, b1, u, u0;
    __asm__("1:\n\t" TN__PW_QUAD TN__PW_QUAD
            "ldr %[u], %[end]\n\t"
            "cmp %[x], %[u]\n\t"
            "bne 1b"
            : TN__PW_OPERANDS
            : [end] "m"(end)
            : "cc", "memory");
  }
  int32_t k = n & 7;
#else
  int32_t k = n;
#endif
  int32_t t[4] = {s00, s01, s10, s11};
  for (; k >= 4; k -= 4, x += 8, w0 += 4, w1 += 4)
    pw_quad_c(t, x, tn__crt_load4(w0), tn__crt_load4(w1));
  if (TN__PW_SPEED && k > 0 && n >= 4) {
    /* a last quad, partly filled, as a whole one: the word that ends at
     * the row's last tap, shifted down to its k taps (zeros above, as
     * the columns' padding taps are too), so that nothing is read past
     * the row (IC's and VWW's first layers: 27 taps, the last pair's
     * three past 24 one by one before) */
    const int sh = 8 * (4 - k);
    pw_quad_c(t, x, tn__crt_load4(w0 + k - 4) >> sh,
              tn__crt_load4(w1 + k - 4) >> sh);
    k = 0;
  }
  uint32_t t00 = (uint32_t)t[0], t01 = (uint32_t)t[1], t10 = (uint32_t)t[2],
           t11 = (uint32_t)t[3];
  for (int32_t i = 0; i < k; i++) { /* a last quad, partly filled */
    const int32_t x0 = x[pw_at(i, 0)], x1 = x[pw_at(i, 1)];
    t00 += (uint32_t)(x0 * w0[i]), t01 += (uint32_t)(x0 * w1[i]);
    t10 += (uint32_t)(x1 * w0[i]), t11 += (uint32_t)(x1 * w1[i]);
  }
  s[0] = (int32_t)t00, s[1] = (int32_t)t01, s[2] = (int32_t)t10;
  s[3] = (int32_t)t11;
}

#if defined(__OPTIMIZE__)
enum { PW_PAIRS = 16 }; /* channel pairs a pw_pairs call takes at most */

/*
 * The sums of `pairs` consecutive channel pairs, the first one's weights
 * at w (rows of ws bytes, of which it reads n taps, n a multiple of 8:
 * a window padded to n has zero columns past its taps, and reads the
 * next row's first weights there to no effect), for the two pixels whose
 * columns are cols, each pair's sums starting from corr: into sums, four
 * a pair (s00, s01, s10, s11: pixel 0 with the first and the second
 * channel, then pixel 1 with both). The loop over the pairs is in the
 * assembly too, its state in memory, so that the compiler's code around
 * pw_sums (about a hundred instructions a pair, mostly reloads) is left
 * to the requantization. The taps go sixteen a turn (one taken branch
 * for 64 multiply-adds); a window of an odd number of eight-tap blocks
 * enters the first turn half way.
 */
static NOINLINE void pw_pairs(int32_t *sums, const int16_t *cols, int32_t n,
                              const int8_t *w, int32_t ws,
                              const uint32_t *corr, int32_t pairs) {
  const int16_t *const end = cols + (ptrdiff_t)(n >> 3) * 16;
  const int32_t k = ws, half = n & 8;
  int32_t s00, s01, s10, s11;
  const int16_t *x;
  const int8_t *w0, *w1;
  uint32_t a0, a1, b0, b1, u, u0;
  __asm__("1:\n\t"
          "ldr %[w0], %[wp]\n\t"
          "ldr %[a0], %[k]\n\t"
          "add %[w1], %[w0], %[a0]\n\t"
          "add %[a1], %[w1], %[a0]\n\t"
          "str %[a1], %[wp]\n\t" /* the next pair's rows */
          "ldr %[a0], %[corr]\n\t"
          "ldrd %[s00], %[s01], [%[a0]], #8\n\t"
          "str %[a0], %[corr]\n\t"
          "mov %[s10], %[s00]\n\t"
          "mov %[s11], %[s01]\n\t"
          "ldr %[x], %[cols]\n\t"
          "ldr %[a0], %[half]\n\t"
          "cmp %[a0], #0\n\t"
          "bne 3f\n\t"
          "2:\n\t" TN__PW_QUAD TN__PW_QUAD
          "3:\n\t" TN__PW_QUAD TN__PW_QUAD
          "ldr %[u], %[end]\n\t"
          "cmp %[x], %[u]\n\t"
          "bne 2b\n\t"
          "ldr %[a0], %[sums]\n\t"
          "strd %[s00], %[s01], [%[a0]], #8\n\t"
          "strd %[s10], %[s11], [%[a0]], #8\n\t"
          "str %[a0], %[sums]\n\t"
          "ldr %[a0], %[pairs]\n\t"
          "subs %[a0], %[a0], #1\n\t"
          "str %[a0], %[pairs]\n\t"
          "bne 1b"
          : TN__PW_PAIRS_OPERANDS,
            [sums] "+m"(sums), [pairs] "+m"(pairs)
          : [k] "m"(k), [cols] "m"(cols), [end] "m"(end), [half] "m"(half)
          : "cc", "memory");
}
#endif

#if defined(__OPTIMIZE__)
/*
 * Two sums of one channel (sa, sb) requantized with its multiplier m and
 * r - 1 (rr), and the layer's 2 * off + 1 in u: tn__crt_requant_s8's
 * (h + [h < 0] + 2^(r-1) + off * 2^r) >> r, saturated, as
 * ((h + [h < 0]) >> (r - 1)) + 2 * off + 1, halved by SSAT's shift: the
 * same integer, since 2^(r-1) * (2 off + 1) is a multiple of 2^(r-1), and
 * a floor by 2^(r-1) then by 2 is a floor by 2^r.
 */
#define TN__PW_RQ2(sa, sb, m, rr)                                             \
  "qadd " TN__R(sa) ", " TN__R(sa) ", " TN__R(sa) "\n\t"                      \
  "qadd " TN__R(sb) ", " TN__R(sb) ", " TN__R(sb) "\n\t"                      \
  "smmulr " TN__R(sa) ", " TN__R(sa) ", " TN__R(m) "\n\t"                     \
  "smmulr " TN__R(sb) ", " TN__R(sb) ", " TN__R(m) "\n\t"                     \
  "add " TN__R(sa) ", " TN__R(sa) ", " TN__R(sa) ", asr #31\n\t"              \
  "add " TN__R(sb) ", " TN__R(sb) ", " TN__R(sb) ", asr #31\n\t"              \
  "asr " TN__R(sa) ", " TN__R(sa) ", " TN__R(rr) "\n\t"                       \
  "asr " TN__R(sb) ", " TN__R(sb) ", " TN__R(rr) "\n\t"                       \
  "add " TN__R(sa) ", " TN__R(sa) ", " TN__R(u) "\n\t"                        \
  "add " TN__R(sb) ", " TN__R(sb) ", " TN__R(u) "\n\t"                        \
  "ssat " TN__R(sa) ", #8, " TN__R(sa) ", asr #1\n\t"                         \
  "ssat " TN__R(sb) ", #8, " TN__R(sb) ", asr #1\n\t"

/* pw_pairs_fast's and pw_pairs_wide's loop up to a pair's four sums:
 * the pair's rows and starting sums (TN__PW_FUSED_HEAD, which leaves
 * skip in u), then the taps 32 a turn, entering the first turn `skip`
 * blocks in (the loads in a row, so that all but one pipeline). */
#define TN__PW_FUSED_HEAD                                                 \
  "1:\n\t"                                                            \
  "ldr " TN__R(w0) ", " TN__R(wp) "\n\t"                                      \
  "ldr " TN__R(a0) ", " TN__R(k) "\n\t"                                       \
  "ldr " TN__R(a1) ", " TN__R(corr) "\n\t"                                    \
  "ldr " TN__R(x) ", " TN__R(cols) "\n\t"                                     \
  "ldr " TN__R(u) ", " TN__R(skip) "\n\t"                                     \
  "ldrd " TN__R(s00) ", " TN__R(s01) ", [" TN__R(a1) "], #8\n\t"              \
  "add " TN__R(w1) ", " TN__R(w0) ", " TN__R(a0) "\n\t"                       \
  "str " TN__R(a1) ", " TN__R(corr) "\n\t"                                    \
  "add " TN__R(a1) ", " TN__R(w1) ", " TN__R(a0) "\n\t"                       \
  "str " TN__R(a1) ", " TN__R(wp) "\n\t" /* the next pair's rows */           \
  "mov " TN__R(s10) ", " TN__R(s00) "\n\t"                                    \
  "mov " TN__R(s11) ", " TN__R(s01) "\n\t"
#define TN__PW_FUSED_SUMS(QUAD)                                           \
  TN__PW_FUSED_HEAD                                                   \
  "cmp " TN__R(u) ", #2\n\t"                                                  \
  "beq 4f\n\t"                                                        \
  "bhi 5f\n\t"                                                        \
  "cmp " TN__R(u) ", #1\n\t"                                                  \
  "beq 3f\n\t"                                                        \
  "2:\n\t" QUAD QUAD                                  \
  "3:\n\t" QUAD QUAD                                  \
  "4:\n\t" QUAD QUAD                                  \
  "5:\n\t" QUAD QUAD                                  \
  "ldr " TN__R(u) ", " TN__R(end) "\n\t"                                      \
  "cmp " TN__R(x) ", " TN__R(u) "\n\t"                                        \
  "bne 2b\n\t"                                                        \
  TN__PW_FUSED_RQ_LOADS

/* After a pair's sums: both channels' multipliers and shifts (a pair
 * starts at an even channel: word-aligned), and 2 * off + 1. */
#define TN__PW_FUSED_RQ_LOADS                                             \
  "ldr " TN__R(a0) ", " TN__R(mp) "\n\t"                                      \
  "ldr " TN__R(a1) ", " TN__R(sd) "\n\t"                                      \
  "ldr " TN__R(u) ", " TN__R(off2) "\n\t"                                     \
  "add " TN__R(a1) ", " TN__R(a1) ", " TN__R(a0) "\n\t" /* the shifts' */     \
  "ldrd " TN__R(w0) ", " TN__R(w1) ", [" TN__R(a0) "], #8\n\t"                \
  "ldrd " TN__R(b0) ", " TN__R(b1) ", [" TN__R(a1) "]\n\t"                    \
  "str " TN__R(a0) ", " TN__R(mp) "\n\t"                                      \
  "mvn " TN__R(b0) ", " TN__R(b0) "\n\t" /* r - 1 = -shift - 1 */             \
  "mvn " TN__R(b1) ", " TN__R(b1) "\n\t"

/* The loop's end: pixel 1's two bytes, then pixel 0's (the same bytes
 * when o1 is o0), and the next pair. */
#define TN__PW_FUSED_STORE                                                    \
  "ldr " TN__R(a0) ", " TN__R(o0) "\n\t"                                      \
  "ldr " TN__R(a1) ", " TN__R(d) "\n\t"                                       \
  "ldr " TN__R(u) ", " TN__R(oend) "\n\t"                                     \
  "add " TN__R(b0) ", " TN__R(a0) ", " TN__R(a1) "\n\t"                       \
  "strb " TN__R(s10) ", [" TN__R(b0) "]\n\t"                                  \
  "strb " TN__R(s11) ", [" TN__R(b0) ", #1]\n\t"                              \
  "strb " TN__R(s01) ", [" TN__R(a0) ", #1]\n\t"                              \
  "strb " TN__R(s00) ", [" TN__R(a0) "], #2\n\t"                              \
  "str " TN__R(a0) ", " TN__R(o0) "\n\t"                                      \
  "cmp " TN__R(a0) ", " TN__R(u) "\n\t"                                       \
  "bne 1b"

/* The fused loop's operands past TN__PW_PAIRS_OPERANDS, and its inputs. */
#define TN__PW_FUSED_OPERANDS [mp] "+m"(mult), [o0] "+m"(o0)
#define TN__PW_FUSED_INPUTS                                               \
  [k] "m"(k), [cols] "m"(cols), [end] "m"(end), [skip] "m"(skip),         \
      [d] "m"(d), [off2] "m"(off2), [sd] "m"(sd), [oend] "m"(oend)

/* pw_pairs_fast's and pw_pairs_wide's parameters (see pw_pairs_fast). */
#define TN__PW_FUSED_PARAMS                                               \
  int8_t *o0, int8_t *o1, const int16_t *cols, int32_t n, const int8_t *w, \
      int32_t ws, const uint32_t *corr, const int32_t *mult,               \
      const int32_t *shift, int32_t off2, int32_t pairs

/* The locals TN__PW_FUSED_SUMS and TN__PW_FUSED_STORE take: the columns'
 * end, the rows' stride, the blocks to skip, o1's distance from o0, the
 * shifts' from the multipliers, and o0's end. */
#define TN__PW_FUSED_LOCALS                                               \
  const int16_t *const end = cols + (ptrdiff_t)(n >> 3) * 16;             \
  const int32_t k = ws, skip = (4 - (n >> 3)) & 3;                        \
  const int32_t d = (int32_t)(o1 - o0);                                   \
  const int32_t sd = (int32_t)((uintptr_t)shift - (uintptr_t)mult);       \
  const int8_t *const oend = o0 + 2 * pairs;                              \
  int32_t s00, s01, s10, s11;                                             \
  const int16_t *x;                                                       \
  const int8_t *w0, *w1;                                                  \
  uint32_t a0, a1, b0, b1, u, u0

/*
 * pw_pairs and the requantization in one: the sums of `pairs` channel
 * pairs from channel 0 of o0 and o1 on (the first pair's weights at w,
 * rows of ws bytes, its starting sums at corr, its multipliers and shifts
 * at mult and shift, per channel) requantized as tn__crt_requant_s8 does
 * (dsp.h; the layer's mode is PW_FAST, off2 = 2 * output offset + 1) and
 * stored as they come, with no activation's range to clamp to (the whole
 * of int8). The sums never go through memory, and the loop over the
 * pairs is the assembly's, so that a pair's four outputs take about 45
 * cycles where pw_pairs' stored sums and pw_store in C took twice that.
 * The taps go 32 a turn (one taken branch for 128 multiply-adds); a
 * window whose count of eight-tap blocks is not a multiple of four enters
 * the first turn `skip` blocks in. o1 may be o0 (the last pixel of an odd
 * count, paired with itself).
 */
/* pw_pairs_fast's requantization of a pair's four sums. */
#define TN__PW_FAST_RQ                                                   \
  TN__PW_RQ2(s00, s10, w0, b0) TN__PW_RQ2(s01, s11, w1, b1)

static NOINLINE void pw_pairs_fast(TN__PW_FUSED_PARAMS) {
  TN__PW_FUSED_LOCALS;
  __asm__(TN__PW_FUSED_SUMS(TN__PW_QUAD) TN__PW_FAST_RQ TN__PW_FUSED_STORE
          : TN__PW_PAIRS_OPERANDS, TN__PW_FUSED_OPERANDS
          : TN__PW_FUSED_INPUTS
          : "cc", "memory");
}

/*
 * A sum (sa) of one channel requantized with its multiplier m in [0,
 * 2^31) and r - 2 (rr) for r in [2, 31], 2^30 in x and 2 * off + 1 in u,
 * exactly as TFLite does for any sum, in 64 bits (a0, a1): h =
 * SaturatingRoundingDoublingHighMul = floor((acc m + 2^30) / 2^31)
 * (pw_out), then RoundingDivideByPOT = floor((h - [h < 0] + 2^(r-1)) /
 * 2^r), + off. h - [h < 0] and h - [acc < 0] differ only where acc < 0
 * and h = 0 (acc m in [-2^30, 0)), and both then give 0; so the result is
 * floor((floor(Q / 2^31) + 2^(r-1)) / 2^r) + off with Q = acc m + 2^30
 * - [acc < 0] 2^31 (SMLAL onto (acc >> 31, 2^30 + (acc >> 31) << 31)).
 * That is floor((A + 1) / 2) + off, A = floor(Q / 2^(30+r)), the high
 * word shifted by r - 2: (A + 2 off + 1) >> 1 by SSAT's shift. Six
 * instructions a sum, as TN__PW_RQ2 takes.
 */
#define TN__PW_RQ64(sa, m, rr)                                                \
  "asr " TN__R(a1) ", " TN__R(sa) ", #31\n\t"                                 \
  "add " TN__R(a0) ", " TN__R(x) ", " TN__R(a1) ", lsl #31\n\t"               \
  "smlal " TN__R(a0) ", " TN__R(a1) ", " TN__R(sa) ", " TN__R(m) "\n\t"       \
  "asr " TN__R(a1) ", " TN__R(a1) ", " TN__R(rr) "\n\t"                       \
  "add " TN__R(a1) ", " TN__R(a1) ", " TN__R(u) "\n\t"                        \
  "ssat " TN__R(sa) ", #8, " TN__R(a1) ", asr #1\n\t"

/*
 * pw_pairs_fast for a layer whose mode is PW_WIDE (VWW's pointwise
 * layers: channels of near-zero weights have shifts below -20 and
 * biases near +-2^30, whose doubling QADD would saturate): each sum
 * requantized by TN__PW_RQ64, exact for every sum, every multiplier of 0
 * or above, and every shift in [-31, -2] (a multiplier of 0 gives the
 * offset for any shift: A is then 0 or -1). Four instructions a pair
 * more than pw_pairs_fast (r - 2, and 2^30 in x).
 */
/* pw_pairs_wide's requantization of a pair's four sums: r - 2, 2^30 in
 * x, then TN__PW_RQ64 for each. */
#define TN__PW_WIDE_RQ                                                   \
  "sub " TN__R(b0) ", " TN__R(b0) ", #1\n\t"                                  \
  "sub " TN__R(b1) ", " TN__R(b1) ", #1\n\t"                                  \
  "mov " TN__R(x) ", #0x40000000\n\t"                                         \
  TN__PW_RQ64(s00, w0, b0) TN__PW_RQ64(s10, w0, b0)                      \
  TN__PW_RQ64(s01, w1, b1) TN__PW_RQ64(s11, w1, b1)

static NOINLINE void pw_pairs_wide(TN__PW_FUSED_PARAMS) {
  TN__PW_FUSED_LOCALS;
  __asm__(TN__PW_FUSED_SUMS(TN__PW_QUAD) TN__PW_WIDE_RQ TN__PW_FUSED_STORE
          : TN__PW_PAIRS_OPERANDS, TN__PW_FUSED_OPERANDS
          : TN__PW_FUSED_INPUTS
          : "cc", "memory");
}

#if TN__PW_SPEED
/*
 * pw_pairs_fast and pw_pairs_wide with TN__PW_QUAD6 (19 estimated cycles
 * a quad, not 20), in builds for speed. Fourteen registers are more than
 * gcc lets one asm statement have where the build keeps a frame pointer
 * (-fno-omit-frame-pointer takes r7), so the statement gets the loop's
 * twelve values in fixed registers (r0-r6, r8-r12), pushes r0-r12 and lr
 * (the values into a frame of its own, r7 saved whatever it holds), runs
 * the loop on every register with the values at fixed offsets in that
 * frame (TN__RL_: r0's at sp + 0, r12's at sp + 48), then restores r7 and
 * drops the frame. That frame costs about 15 estimated cycles a call more
 * than pw_pairs_fast's, which a call of 16 quads or more repays (pw_run
 * chooses it so).
 */
#undef TN__RSEL
#define TN__RSEL(n) TN__RL_##n
#define TN__RL_s00 "r0"
#define TN__RL_s01 "r1"
#define TN__RL_s10 "r2"
#define TN__RL_s11 "r3"
#define TN__RL_x "r4"
#define TN__RL_w0 "r5"
#define TN__RL_w1 "r6"
#define TN__RL_v "r7"
#define TN__RL_a0 "r8"
#define TN__RL_a1 "r9"
#define TN__RL_b0 "r10"
#define TN__RL_b1 "r11"
#define TN__RL_u "r12"
#define TN__RL_u0 "lr"
#define TN__RL_wp "[sp, #0]"
#define TN__RL_corr "[sp, #4]"
#define TN__RL_mp "[sp, #8]"
#define TN__RL_o0 "[sp, #12]"
#define TN__RL_k "[sp, #16]"
#define TN__RL_cols "[sp, #20]"
#define TN__RL_end "[sp, #24]"
#define TN__RL_skip "[sp, #32]"
#define TN__RL_d "[sp, #36]"
#define TN__RL_off2 "[sp, #40]"
#define TN__RL_sd "[sp, #44]"
#define TN__RL_oend "[sp, #48]"

/*
 * The fourteen-register forms' loop up to a pair's four sums:
 * TN__PW_FUSED_SUMS's, but the taps 64 a turn (sixteen quads, one taken
 * branch for 256 multiply-adds: a turn's end costs about six estimated
 * cycles), entered once a pair at a block of eight taps computed once a
 * call (TN__PW_ENTRY16, in the slot of skip) rather than by a chain of
 * compares. The turn ends on x below end (BLO), not on x unequal to it,
 * so that a wrong entry ends the loop too (with wrong sums, which the
 * checks then see).
 */
#define TN__PW_BLOCK(QUAD) QUAD QUAD
#define TN__PW_FUSED_SUMS16(QUAD)                                         \
  TN__PW_FUSED_HEAD /* skip's slot holds the entry */                  \
  "bx " TN__R(u) "\n\t"                                                      \
  "2:\n\t" TN__PW_BLOCK(QUAD) "3:\n\t" TN__PW_BLOCK(QUAD)                   \
  TN__PW_BLOCK(QUAD) TN__PW_BLOCK(QUAD) TN__PW_BLOCK(QUAD)                  \
  TN__PW_BLOCK(QUAD) TN__PW_BLOCK(QUAD) TN__PW_BLOCK(QUAD)                  \
  "ldr " TN__R(u) ", " TN__R(end) "\n\t"                                      \
  "cmp " TN__R(x) ", " TN__R(u) "\n\t"                                        \
  "blo 2b\n\t"                                                        \
  TN__PW_FUSED_RQ_LOADS

/* Once a call, before TN__PW_FUSED_SUMS16: the entry, skip = (8 - the
 * window's blocks of eight taps) mod 8 blocks into the turn (a block's
 * bytes measured between its labels 2 and 3), with the Thumb bit BX
 * needs, into skip's slot. */
#define TN__PW_ENTRY16                                                    \
  "adr.w " TN__R(a1) ", 2f\n\t"                                               \
  "adr.w " TN__R(u) ", 3f\n\t"                                                \
  "sub " TN__R(u) ", " TN__R(u) ", " TN__R(a1) "\n\t"                         \
  "mla " TN__R(a0) ", " TN__R(a0) ", " TN__R(u) ", " TN__R(a1) "\n\t"         \
  "orr " TN__R(a0) ", " TN__R(a0) ", #1\n\t"                                  \
  "str " TN__R(a0) ", " TN__R(skip) "\n\t"

/* A fourteen-register form whose pair's sums are requantized by RQ. */
#define TN__PW_PAIRS14(RQ)                                                \
  register const int8_t *wp_ __asm__("r0") = w;                          \
  register const uint32_t *corr_ __asm__("r1") = corr;                   \
  register const int32_t *mp_ __asm__("r2") = mult;                      \
  register int8_t *o0_ __asm__("r3") = o0;                               \
  register int32_t k_ __asm__("r4") = ws;                                \
  register const int16_t *cols_ __asm__("r5") = cols;                    \
  register const int16_t *end_ __asm__("r6") =                           \
      cols + (ptrdiff_t)(n >> 3) * 16;                                    \
  register int32_t skip_ __asm__("r8") = (8 - (n >> 3)) & 7;             \
  register int32_t d_ __asm__("r9") = (int32_t)(o1 - o0);                \
  register int32_t off2_ __asm__("r10") = off2;                          \
  register int32_t sd_ __asm__("r11") =                                  \
      (int32_t)((uintptr_t)shift - (uintptr_t)mult);                      \
  register const int8_t *oend_ __asm__("r12") = o0 + 2 * pairs;          \
  __asm__ volatile("push {r0-r12, lr}\n\t" TN__PW_ENTRY16                \
                   TN__PW_FUSED_SUMS16(TN__PW_QUAD6)                      \
                       RQ TN__PW_FUSED_STORE "\n\t"                       \
                   "ldr r7, [sp, #28]\n\t"                               \
                   "add sp, sp, #56"                                      \
                   : "+r"(wp_), "+r"(corr_), "+r"(mp_), "+r"(o0_),        \
                     "+r"(k_), "+r"(cols_), "+r"(end_), "+r"(skip_),      \
                     "+r"(d_), "+r"(off2_), "+r"(sd_), "+r"(oend_)        \
                   :                                                      \
                   : "lr", "cc", "memory")

static NOINLINE void pw_pairs_fast14(TN__PW_FUSED_PARAMS) {
  TN__PW_PAIRS14(TN__PW_FAST_RQ);
}

static NOINLINE void pw_pairs_wide14(TN__PW_FUSED_PARAMS) {
  TN__PW_PAIRS14(TN__PW_WIDE_RQ);
}
#undef TN__RSEL
#define TN__RSEL(n) "%[" #n "]"
#endif
#endif

/* The same for any multiplier and shift: TFLite's arithmetic as
 * tn_crt_multiply_by_quantized_multiplier computes it. */
static int8_t pw_requant_any(int32_t acc, int32_t m, int32_t s, int32_t off,
                             int32_t lo, int32_t hi) {
  const int32_t v = (int32_t)(
      (uint32_t)tn_crt_multiply_by_quantized_multiplier(acc, m, s) +
      (uint32_t)off);
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* A channel's requantization constants, for its mode: the multiplier,
 * the right shift r and a rounding term. */
typedef struct {
  int32_t m, s, r, round;
} PwQuant;

BLOCK_INLINE PwQuant pw_quant(const TnCrtQuant *q, int32_t k, int32_t off,
                              int mode) {
  PwQuant cq = {q->multiplier[k], q->shift[k], 0, 0};
  if (mode == PW_FAST) { /* pw_quant_ok: r in [1, 20] */
    cq.r = -cq.s;
    cq.round = (int32_t)(((UINT32_C(1) << cq.r) >> 1) +
                         ((uint32_t)off << cq.r));
  } else if (mode == PW_WIDE) { /* r in [2, 31]; any for m = 0 */
    cq.r = cq.m ? -cq.s : 2;
    cq.round = INT32_C(1) << (cq.r - 2);
  }
  return cq;
}

/*
 * acc requantized, clamped to [lo, hi] within int8. PW_FAST is
 * tn__crt_requant_s8 (dsp.h). PW_WIDE computes TFLite's
 * SaturatingRoundingDoublingHighMul exactly, h = (acc * m + 2^30) >> 31
 * in 64 bits (its rounding of negative products toward zero is this
 * floor: -floor((|p| + 2^30 - 1) / 2^31) = floor((p + 2^30) / 2^31) for
 * p < 0; it cannot saturate for m >= 0), so that no bound on |acc| is
 * needed, and RoundingDivideByPOT by r in [2, 31] as (a + 2^(r-1)) >> r,
 * a = h - [h < 0], in the form ((a >> 1) + 2^(r-2)) >> (r - 1), which
 * is the same integer (a + 2^(r-1) is even plus a's last bit, which a
 * floor by 2^r never sees) and cannot overflow (|h| < 2^31 for m <
 * 2^31); then the output offset and SSAT. PW_ANY is pw_requant_any.
 */
BLOCK_INLINE int8_t pw_out(int32_t acc, PwQuant cq, int32_t off, int32_t lo,
                           int32_t hi, int mode) {
  int32_t v;
  if (mode == PW_FAST) {
    const int32_t h = tn__crt_smmulr(__qadd(acc, acc), cq.m);
    v = __ssat((h + (h >> 31) + cq.round) >> cq.r, 8);
  } else if (mode == PW_WIDE) {
    const int32_t h =
        (int32_t)(((int64_t)acc * cq.m + (INT64_C(1) << 30)) >> 31);
    const int32_t a = h + (h >> 31);
    v = __ssat((((a >> 1) + cq.round) >> (cq.r - 1)) + off, 8);
  } else {
    return pw_requant_any(acc, cq.m, cq.s, off, lo, hi);
  }
  if (lo > -128 || hi < 127) { /* an activation's range */
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
  }
  return (int8_t)v;
}

/* Channels co and c1 of pixels o0 and o1, from their sums s00, s01
 * (pixel o0), s10, s11 (pixel o1). */
BLOCK_INLINE void pw_store(int8_t *o0, int8_t *o1, int32_t co, int32_t c1,
                           const int32_t s[4], const TnCrtQuant *q,
                           int32_t qs, int32_t off, int32_t lo, int32_t hi,
                           int mode) {
  const PwQuant q0 = pw_quant(q, co * qs, off, mode);
  const PwQuant q1 = pw_quant(q, c1 * qs, off, mode);
  o0[co] = pw_out(s[0], q0, off, lo, hi, mode);
  o0[c1] = pw_out(s[1], q1, off, lo, hi, mode);
  o1[co] = pw_out(s[2], q0, off, lo, hi, mode);
  o1[c1] = pw_out(s[3], q1, off, lo, hi, mode);
}

/* Channels [co, out_c) of one pixel pair (o0, o1; columns in cols) by
 * pw_sums, the last of an odd count of channels paired with itself: the
 * last pair of a window that is not whole words of eight taps (whose
 * padded rows would read past the weights), the last channel of an odd
 * count, and every channel unoptimised. Inlined for PW_FAST (a first
 * layer of 27 taps and 8 channels, VWW's, takes one pair in four here),
 * one copy for the other modes (pw_rest_any). */
BLOCK_INLINE void pw_rest(const Conv *c, const TnCrtQuant *q, int32_t lo,
                          int32_t hi, const uint32_t *corr, int8_t *o0,
                          int8_t *o1, const int16_t *cols, int mode,
                          int32_t co) {
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), nc = p->out_c, off = q->output_offset;
  const ptrdiff_t ws = p->w_strides[3];
  const int32_t qs = q->per_channel ? 1 : 0; /* the multipliers' stride */
  const int8_t *w = c->w + (ptrdiff_t)co * ws;
  for (; co < nc; co += 2, w += 2 * ws) {
    const int32_t c1 = co + 1 < nc ? co + 1 : co;
    int32_t s[4] = {(int32_t)corr[co], (int32_t)corr[c1], (int32_t)corr[co],
                    (int32_t)corr[c1]};
    pw_sums(s, cols, w, w + (c1 - co) * ws, n);
    pw_store(o0, o1, co, c1, s, q, qs, off, lo, hi, mode);
  }
}

static NOINLINE void pw_rest_any(const Conv *c, const TnCrtQuant *q,
                                 int32_t lo, int32_t hi, const uint32_t *corr,
                                 int8_t *o0, int8_t *o1, const int16_t *cols,
                                 int mode, int32_t co) {
  pw_rest(c, q, lo, hi, corr, o0, o1, cols, mode, co);
}

/* The channels of one pixel pair (o0, o1; columns in cols, pw_cols(p)
 * taps) in the mode `mode`, a constant where it is inlined: in
 * pw_pairs_fast (PW_FAST) or pw_pairs_wide (PW_WIDE) where the layer's
 * multipliers are per channel and its activation clamps nothing, else
 * PW_PAIRS pairs at a time in pw_pairs, as many as read no weight past the last
 * row (all but the last pair where the window is not whole words of
 * eight taps), the rest by pw_rest. */
BLOCK_INLINE void pw_channels(const Conv *c, const TnCrtQuant *q, int32_t lo,
                              int32_t hi, const uint32_t *corr, int8_t *o0,
                              int8_t *o1, const int16_t *cols, int mode,
                              int32_t all, int quad6) {
  int32_t co = 0;
  (void)all, (void)quad6;
#if defined(__OPTIMIZE__)
  const TnCrtConv2d *p = c->p;
  const int32_t n = pw_window(p), off = q->output_offset;
  const ptrdiff_t ws = p->w_strides[3];
  const int32_t qs = q->per_channel ? 1 : 0; /* the multipliers' stride */
  const int8_t *w = c->w;
  const int32_t n8 = pw_cols(p);
  if (TN__CONV_FORM(TN_CRT_CONV_FORM_PW_FUSED) && ws >= n &&
      mode != PW_ANY && lo == -128 && hi == 127 && qs == 1) {
#if TN__PW_SPEED
    if (quad6) {
      if (mode == PW_FAST)
        pw_pairs_fast14(o0, o1, cols, n8, w, (int32_t)ws, corr,
                        q->multiplier, q->shift, 2 * off + 1, all);
      else
        pw_pairs_wide14(o0, o1, cols, n8, w, (int32_t)ws, corr,
                        q->multiplier, q->shift, 2 * off + 1, all);
    } else
#endif
    if (all > 0 && mode == PW_FAST)
      pw_pairs_fast(o0, o1, cols, n8, w, (int32_t)ws, corr, q->multiplier,
                    q->shift, 2 * off + 1, all);
    else if (all > 0)
      pw_pairs_wide(o0, o1, cols, n8, w, (int32_t)ws, corr, q->multiplier,
                    q->shift, 2 * off + 1, all);
    co = 2 * all;
  } else if (ws >= n && TN__CONV_FORM(TN_CRT_CONV_FORM_PW_PAIRS)) {
    int32_t sums[4 * PW_PAIRS];
    while (co / 2 < all) {
      const int32_t np = all - co / 2 < PW_PAIRS ? all - co / 2 : PW_PAIRS;
      pw_pairs(sums, cols, n8, w, (int32_t)ws, corr + co, np);
      for (int32_t j = 0; j < np; j++, co += 2, w += 2 * ws)
        pw_store(o0, o1, co, co + 1, sums + 4 * j, q, qs, off, lo, hi, mode);
    }
  }
#endif
  if (co < c->p->out_c) {
    if (mode == PW_FAST)
      pw_rest(c, q, lo, hi, corr, o0, o1, cols, PW_FAST, co);
    else
      pw_rest_any(c, q, lo, hi, corr, o0, o1, cols, mode, co);
  }
}

/* The layer (dsp_pw_ok holds; its pw_mode `mode`) into out, each
 * channel's sums starting from corr: the pixels in pairs (the last of an
 * odd count with itself), their windows in cols, for each pair the
 * channels in pairs (pw_channels). */
static NOINLINE void pw_run(const Conv *c, const TnCrtQuant *q, int32_t lo,
                            int32_t hi, const uint32_t *corr, int8_t *out,
                            int16_t *cols, int mode) {
  const TnCrtConv2d *p = c->p;
  const int64_t pixels = (int64_t)p->batch * p->out_h * p->out_w;
  const int32_t all = pw_pairs_max(p);
  const int unit = TN__PW_SPEED && pw_unit_ok(p);
  const int gather = TN__PW_SPEED && pw_gather_ok(p);
  const int inside = TN__PW_SPEED && !unit && !gather && pw_inside_ok(p);
  /* pw_pairs_fast14's form where a call runs 16 quads or more */
  const int quad6 = TN__PW_SPEED && all > 0 && all * (pw_cols(p) >> 2) >= 16;
  PwPixels it = {.p = p, .out = out};
  for (int32_t t = pw_window(p); t < pw_cols(p); t++) /* the padding */
    cols[pw_at(t, 0)] = cols[pw_at(t, 1)] = 0;
  pw_row(&it);
  for (int64_t i = 0; i < pixels; i += 2) {
    int8_t *o0 = it.o, *o1 = it.o;
    if (unit) pw_unit(cols, 0, c, &it);
    else if (gather) pw_gathered(cols, 0, c, &it);
    else if (!inside || !pw_inside(cols, 0, c, &it)) pw_im2col(cols, 0, c, &it);
    if (i + 1 < pixels) pw_next(&it), o1 = it.o;
    if (unit) pw_unit(cols, 1, c, &it);
    else if (gather) pw_gathered(cols, 1, c, &it);
    else if (!inside || !pw_inside(cols, 1, c, &it)) pw_im2col(cols, 1, c, &it);
    /* only the modes TN_CRT_CONV_S8_FORMS keeps (pw_taken) */
    if (TN__CONV_FORM(TN_CRT_CONV_FORM_PW_FAST) && mode == PW_FAST)
      pw_channels(c, q, lo, hi, corr, o0, o1, cols, PW_FAST, all,
                  quad6);
    else if (TN__CONV_FORM(TN_CRT_CONV_FORM_PW_WIDE) && mode == PW_WIDE)
      pw_channels(c, q, lo, hi, corr, o0, o1, cols, PW_WIDE, all,
                  quad6);
    else if (TN__CONV_FORM(TN_CRT_CONV_FORM_PW_ANY))
      pw_channels(c, q, lo, hi, corr, o0, o1, cols, PW_ANY, all,
                  quad6);
    if (i + 2 < pixels) pw_next(&it);
  }
}

/* pw_run (mode: pw_mode's) with the sums' starting values and the columns in buf
 * (4-aligned, pw_scratch_bytes: the columns' pairs word-aligned). With
 * input offset 0 (FoldInputOffset gives it to a layer whose windows lie
 * inside the input, its bias holding the offset's share) the sums start
 * from the bias itself, and nothing is summed on the call. */
static void dsp_pointwise(const Conv *c, const TnCrtQuant *q, int32_t lo,
                          int32_t hi, const int32_t *bias, int8_t *out,
                          void *buf, int mode) {
  uint32_t *const corr = buf; /* out_c <= PW_MAX_CHANNELS */
  const uint32_t *start = corr;
  if (c->io == 0 && bias != NULL)
    start = (const uint32_t *)(const void *)bias;
  else
    pw_corr(corr, c, bias);
  pw_run(c, q, lo, hi, start, out, (int16_t *)(void *)(corr + c->p->out_c),
         mode);
}

#endif /* TN_CRT_HAVE_ARM_DSP */

#endif /* TVMNODE_CRT_ARM_DSP_CONV_S8_DSP_H_ */
