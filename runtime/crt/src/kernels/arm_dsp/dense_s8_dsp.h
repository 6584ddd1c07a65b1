/*
 * arm_dsp/dense_s8_dsp.h: the Cortex-M DSP form of the int8 dense layer's
 * contiguous dot products (dense_s8.c): SXTAB16 unpacks four int8 of the
 * input and of each row into int16 pairs, offsets added, and SMLAD
 * multiplies and adds two pairs (arm_dsp/dsp.h), about four times as fast
 * as the portable C on a Cortex-M4, bit for bit the same sums; and the
 * requantization of a block of outputs (dense_rq_block, below).
 * dense_s8.c includes it where isa.h says the DSP extension is there and
 * calls dsp_rows from its own out-of-line dot products: a header of inline
 * functions, so that the rows' loop is compiled into them with the row
 * count a constant and no call of another file in between. Its includes
 * are relative to its own folder, which an archive keeps
 * (runtime/src/arm_dsp/, beside dsp.h).
 */
#ifndef TVMNODE_CRT_ARM_DSP_DENSE_S8_DSP_H_
#define TVMNODE_CRT_ARM_DSP_DENSE_S8_DSP_H_

#include <stddef.h>
#include <stdint.h>

#include "../dense_s8.h"
#include "dsp.h"

#if TN_CRT_HAVE_ARM_DSP
/* One word of each of four rows (w, w + sn, w + 2 sn, w + 3 sn; filter
 * offset 0) against the input pairs xa (k, k + 2) and xb (k + 1, k + 3):
 * s_r += both products' sums; w steps a word. In assembly because gcc,
 * left to itself, spills this loop's thirteen live values (35 instructions
 * for 16 multiply-adds instead of 27); at -O0 it cannot allocate them at
 * all, and the C below does the work. */
#if defined(__OPTIMIZE__)
#define DENSE_ROWS4_ASM 1
BLOCK_INLINE void rows4(int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3,
                       const int8_t **w, ptrdiff_t sn, int32_t xa,
                       int32_t xb) {
  int32_t t0, t1;
  __asm__("ldr %[t0], [%[w]]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s0], %[xa], %[t1], %[s0]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s0], %[xb], %[t0], %[s0]\n\t"
          "ldr %[t0], [%[w], %[sn]]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s1], %[xa], %[t1], %[s1]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s1], %[xb], %[t0], %[s1]\n\t"
          "ldr %[t0], [%[w], %[sn], lsl #1]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s2], %[xa], %[t1], %[s2]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s2], %[xb], %[t0], %[s2]\n\t"
          "add %[t1], %[w], %[sn]\n\t"
          "ldr %[t0], [%[t1], %[sn], lsl #1]\n\t"
          "sxtb16 %[t1], %[t0]\n\t"
          "smlad %[s3], %[xa], %[t1], %[s3]\n\t"
          "sxtb16 %[t0], %[t0], ror #8\n\t"
          "smlad %[s3], %[xb], %[t0], %[s3]\n\t"
          "add %[w], %[w], #4"
          : [s0] "+r"(*s0), [s1] "+r"(*s1), [s2] "+r"(*s2), [s3] "+r"(*s3),
            [w] "+r"(*w), [t0] "=&r"(t0), [t1] "=&r"(t1)
          : [sn] "r"(sn), [xa] "r"(xa), [xb] "r"(xb)
          : "memory");
}

/* One row's word t (its int8 unpacked into pairs through u) against the
 * input pairs xa, xb into the sum s. */
#define TN__DENSE_ROW(s, t)                         \
  "sxtb16 %[u], %[" t "]\n\t"                      \
  "smlad %[" s "], %[xa], %[u], %[" s "]\n\t"      \
  "sxtb16 %[" t "], %[" t "], ror #8\n\t"          \
  "smlad %[" s "], %[xb], %[" t "], %[" s "]\n\t"
/* A word of the input (at x + off) and of each of the four rows, the
 * loads three and two in a row (so that all but two pipeline), then w
 * steps a word. */
#define TN__DENSE_WORD(off)                          \
  "ldr %[xa], [%[x], #" off "]\n\t"                \
  "ldr %[t0], [%[w]]\n\t"                          \
  "ldr %[t1], [%[w], %[sn]]\n\t"                   \
  "sxtb16 %[xb], %[xa], ror #8\n\t"                \
  "sxtb16 %[xa], %[xa]\n\t"                        \
  TN__DENSE_ROW("s0", "t0") TN__DENSE_ROW("s1", "t1") \
  "add %[u], %[w], %[sn]\n\t"                      \
  "ldr %[t0], [%[w], %[sn], lsl #1]\n\t"           \
  "ldr %[t1], [%[u], %[sn], lsl #1]\n\t"           \
  TN__DENSE_ROW("s2", "t0") TN__DENSE_ROW("s3", "t1") \
  "add %[w], %[w], #4\n\t"

/* Eight inputs at x (input offset 0, as FoldInputOffset leaves a dense
 * layer with constant weights and a bias; filter offset 0) against the
 * four rows at w, w + sn, w + 2 sn, w + 3 sn: s_r += the products; w
 * steps two words. The input is unpacked here too (SXTB16), so that one
 * statement issues its loads and the rows' together: of a turn's ten
 * loads, four cost two cycles where nine did with rows4. */
BLOCK_INLINE void rows4_x8(int32_t *s0, int32_t *s1, int32_t *s2,
                           int32_t *s3, const int8_t **w, ptrdiff_t sn,
                           const int8_t *x) {
  int32_t xa, xb, t0, t1, u;
  __asm__(TN__DENSE_WORD("0") TN__DENSE_WORD("4")
          : [s0] "+r"(*s0), [s1] "+r"(*s1), [s2] "+r"(*s2), [s3] "+r"(*s3),
            [w] "+r"(*w), [xa] "=&r"(xa), [xb] "=&r"(xb), [t0] "=&r"(t0),
            [t1] "=&r"(t1), [u] "=&r"(u)
          : [sn] "r"(sn), [x] "r"(x)
          : "memory");
}

/* A group of four inputs (the word at x + xo) against its four rows'
 * words of the N4K4 layout (tn_crt_dense_s8_pack4: the group's 16 bytes
 * at w + wo, row by row): three weight words loaded behind the input's,
 * the fourth once a row's sums free a register (twelve operands: a kept
 * frame pointer leaves gcc no thirteenth). */
#define TN__DENSE_P4_GROUP(xo, wo, wo4, wo8, wo12)  \
  "ldr %[xa], [%[x], #" xo "]\n\t"                \
  "ldr %[t0], [%[w], #" wo "]\n\t"                \
  "ldr %[t1], [%[w], #" wo4 "]\n\t"               \
  "ldr %[t2], [%[w], #" wo8 "]\n\t"               \
  "sxtb16 %[xb], %[xa], ror #8\n\t"               \
  "sxtb16 %[xa], %[xa]\n\t"                       \
  TN__DENSE_ROW("s0", "t0") TN__DENSE_ROW("s1", "t1") \
  "ldr %[t0], [%[w], #" wo12 "]\n\t"              \
  TN__DENSE_ROW("s2", "t2") TN__DENSE_ROW("s3", "t0")
#define TN__DENSE_P4_OPERANDS                                               \
  : [s0] "+r"(*s0), [s1] "+r"(*s1), [s2] "+r"(*s2), [s3] "+r"(*s3),        \
    [w] "+r"(*w), [x] "+r"(*x), [xa] "=&r"(xa), [xb] "=&r"(xb),             \
    [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [u] "=&r"(u)            \
  :                                                                          \
  : "memory"

/* Sixteen inputs at *x against a block of four rows of the N4K4 layout
 * at *w (input and filter offsets 0): s_r += the products; *x steps 16
 * bytes, *w 64. Per four inputs and four rows: five loads (two of them
 * alone), ten SXTB16 and eight SMLAD, no address arithmetic. */
BLOCK_INLINE void p4_x16(int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3,
                         const int8_t **w, const int8_t **x) {
  int32_t xa, xb, t0, t1, t2, u;
  __asm__(TN__DENSE_P4_GROUP("0", "0", "4", "8", "12")
          TN__DENSE_P4_GROUP("4", "16", "20", "24", "28")
          TN__DENSE_P4_GROUP("8", "32", "36", "40", "44")
          TN__DENSE_P4_GROUP("12", "48", "52", "56", "60")
          "add %[w], %[w], #64\n\t"
          "add %[x], %[x], #16"
          TN__DENSE_P4_OPERANDS);
}
/* The same for four inputs: *x steps 4 bytes, *w 16. */
BLOCK_INLINE void p4_x4(int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3,
                        const int8_t **w, const int8_t **x) {
  int32_t xa, xb, t0, t1, t2, u;
  __asm__(TN__DENSE_P4_GROUP("0", "0", "4", "8", "12")
          "add %[w], %[w], #16\n\t"
          "add %[x], %[x], #4"
          TN__DENSE_P4_OPERANDS);
}
#else
#define DENSE_ROWS4_ASM 0
#endif

/* dot_rows with the Cortex-M DSP extension (dsp.h): a word of four
 * inputs and a word of each row unpack into int16 pairs (k, k + 2) and
 * (k + 1, k + 3), the offsets added by SXTAB16, and SMLAD multiplies and
 * adds two pairs; the inputs' pairs serve the four rows. */
BLOCK_INLINE void dsp_rows(const Dense *d, const int8_t *restrict x,
                           const int8_t *restrict w, int rows, uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int32_t io = d->io, fo = d->fo;
  const int32_t io2 = tn__crt_pair(io, io), fo2 = tn__crt_pair(fo, fo);
  const int8_t *w0 = w, *w1 = rows == 4 ? w + sn : w;
  const int8_t *w2 = rows == 4 ? w + 2 * sn : w;
  const int8_t *w3 = rows == 4 ? w + 3 * sn : w;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, k = 0;
#if DENSE_ROWS4_ASM
  if (rows == 4 && fo == 0) {
    /* eight inputs a turn (one taken branch for 32 multiply-adds), then
     * a last four */
    const int8_t *wk = w, *xk = x, *const xe = x + (kk & ~7);
    if (io == 0)
      for (; xk != xe; xk += 8) rows4_x8(&s0, &s1, &s2, &s3, &wk, sn, xk);
    for (; xk != xe; xk += 8) {
      const uint32_t xv = tn__crt_load4(xk), xw = tn__crt_load4(xk + 4);
      rows4(&s0, &s1, &s2, &s3, &wk, sn, __sxtab16(io2, (int32_t)xv),
            tn__crt_sxtab16_ror8(io2, xv));
      rows4(&s0, &s1, &s2, &s3, &wk, sn, __sxtab16(io2, (int32_t)xw),
            tn__crt_sxtab16_ror8(io2, xw));
    }
    if (kk & 4) {
      const uint32_t xv = tn__crt_load4(xk);
      rows4(&s0, &s1, &s2, &s3, &wk, sn, __sxtab16(io2, (int32_t)xv),
            tn__crt_sxtab16_ror8(io2, xv));
    }
    k = kk & ~3;
  }
#endif
  for (; k + 4 <= kk; k += 4) {
    const uint32_t xv = tn__crt_load4(x + k);
    const int32_t xa = __sxtab16(io2, (int32_t)xv);
    const int32_t xb = tn__crt_sxtab16_ror8(io2, xv);
    uint32_t v = tn__crt_load4(w0 + k);
    s0 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s0);
    s0 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s0);
    if (rows == 4) {
      v = tn__crt_load4(w1 + k);
      s1 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s1);
      s1 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s1);
      v = tn__crt_load4(w2 + k);
      s2 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s2);
      s2 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s2);
      v = tn__crt_load4(w3 + k);
      s3 = __smlad(xa, __sxtab16(fo2, (int32_t)v), s3);
      s3 = __smlad(xb, tn__crt_sxtab16_ror8(fo2, v), s3);
    }
  }
  uint32_t u[4] = {(uint32_t)s0, (uint32_t)s1, (uint32_t)s2, (uint32_t)s3};
  for (; k < kk; k++) { /* each product fits an int32 (narrow) */
    const int32_t xv = x[k] + io;
    u[0] += (uint32_t)(xv * (w0[k] + fo));
    if (rows == 4) {
      u[1] += (uint32_t)(xv * (w1[k] + fo));
      u[2] += (uint32_t)(xv * (w2[k] + fo));
      u[3] += (uint32_t)(xv * (w3[k] + fo));
    }
  }
  s[0] = u[0];
  if (rows == 4) s[1] = u[1], s[2] = u[2], s[3] = u[3];
}

/* The N4K4 layout's sums with input and filter offsets 0 (what
 * PackDenseWeights gives a layer for "cortex-m": FoldInputOffset's
 * folded input zero point): s[r] = sum_k(x[k] * w) for the rows (a
 * multiple of 4) of the packed weight at w (a block of four rows is K * 4
 * bytes, its groups of four inputs 16 bytes, row by row), stored. A
 * block's four rows' words are one run of memory, so the loop needs no
 * row stride and no address arithmetic but a step a turn, and one call
 * takes a whole block of outputs. */
/* The last group of kb (1 to 3) inputs at x of a block of four rows
 * (each row's kb bytes in a row at w): s[r] += the products. */
static void p4_tail(int32_t kb, const int8_t *x, const int8_t *w,
                    uint32_t *s) {
  for (int32_t j = 0; j < 4; j++)
    for (int32_t t = 0; t < kb; t++)
      s[j] += (uint32_t)(x[t] * w[j * kb + t]);
}

BLOCK_INLINE void dsp_p4_rows(const Dense *d, const int8_t *x,
                              const int8_t *w, int32_t rows, uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const int8_t *const xe4 = x + (kk & ~3);
  for (int32_t r = 0; r < rows; r += 4, s += 4) {
    const int8_t *wk = w + (ptrdiff_t)r * kk, *xk = x;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if DENSE_ROWS4_ASM
    const int8_t *const xe16 = x + (kk & ~15);
    while (xk != xe16) p4_x16(&s0, &s1, &s2, &s3, &wk, &xk);
    while (xk != xe4) p4_x4(&s0, &s1, &s2, &s3, &wk, &xk);
#else
    for (; xk != xe4; xk += 4, wk += 16) {
      const uint32_t xv = tn__crt_load4(xk);
      const int32_t xa = __sxtab16(0, (int32_t)xv);
      const int32_t xb = tn__crt_sxtb16_ror8(xv);
      int32_t *const acc[4] = {&s0, &s1, &s2, &s3};
      for (int j = 0; j < 4; j++) {
        const uint32_t v = tn__crt_load4(wk + 4 * j);
        *acc[j] = __smlad(xa, __sxtab16(0, (int32_t)v), *acc[j]);
        *acc[j] = __smlad(xb, tn__crt_sxtb16_ror8(v), *acc[j]);
      }
    }
#endif
    s[0] = (uint32_t)s0, s[1] = (uint32_t)s1;
    s[2] = (uint32_t)s2, s[3] = (uint32_t)s3;
    if (kk & 3) p4_tail(kk & 3, xe4, wk, s);
  }
}

/* The N4K4 layout's last block when it has fewer than four rows (any
 * offsets): s[r] = sum_k((x[k] + io) * (w + fo)) for its rows at w, a
 * group of four inputs the rows' words in a row (4 * rows bytes), stored;
 * a row at a time, as dsp_rows takes one row. */
BLOCK_INLINE void dsp_p4_part(const Dense *d, const int8_t *x,
                              const int8_t *w, int32_t rows, uint32_t *s) {
  const int32_t kk = d->p->in_features, kb = kk & 3, step = 4 * rows;
  const int32_t io2 = tn__crt_pair(d->io, d->io), fo2 = tn__crt_pair(d->fo, d->fo);
  for (int32_t j = 0; j < rows; j++) {
    const int8_t *wj = w + 4 * j;
    int32_t acc = 0, k = 0;
    for (; k + 4 <= kk; k += 4, wj += step) {
      const uint32_t xv = tn__crt_load4(x + k), v = tn__crt_load4(wj);
      acc = __smlad(__sxtab16(io2, (int32_t)xv), __sxtab16(fo2, (int32_t)v), acc);
      acc = __smlad(tn__crt_sxtab16_ror8(io2, xv), tn__crt_sxtab16_ror8(fo2, v),
                    acc);
    }
    uint32_t u = (uint32_t)acc; /* the last group: each row's kb in a row */
    const int8_t *wt = w + (ptrdiff_t)(kk - kb) * rows + j * kb;
    for (int32_t t = 0; t < kb; t++)
      u += (uint32_t)((x[k + t] + d->io) * (wt[t] + d->fo));
    s[j] = u;
  }
}

/*
 * The requantization of an output, in tn__crt_requant_s8's seven
 * instructions (dsp.h) where the layer's multipliers and shifts meet its
 * conditions (a multiplier of 0 or at least 2^30, a shift in [-20, -1],
 * an output offset in [-128, 127]: what the importers give), its
 * constants set up once a call for a per-tensor layer; dense_run keeps
 * tn_crt_multiply_by_quantized_multiplier (about 30 cycles an output on
 * a Cortex-M4, a call) for the others. Both give TFLite's integers.
 */
typedef struct {
  int32_t m, round, r;
} DenseRq;

BLOCK_INLINE int dense_rq_ok(int32_t m, int32_t s) {
  return m >= 0 && (m == 0 || m >= (INT32_C(1) << 30)) && s <= -1 && s >= -20;
}

BLOCK_INLINE DenseRq dense_rq(int32_t m, int32_t s, int32_t off) {
  const DenseRq c = {m, (int32_t)(((UINT32_C(1) << -s) >> 1) +
                                  ((uint32_t)off << -s)),
                     -s};
  return c;
}

/* Whether every channel of q (n of them when per channel) takes the
 * fast form; then *c has channel 0's constants. */
static int dense_rq_init(const TnCrtQuant *q, int32_t n, DenseRq *c) {
  if (q->scale != NULL || q->output_offset < -128 || q->output_offset > 127)
    return 0;
  const int32_t k = q->per_channel ? n : 1;
  for (int32_t j = 0; j < k; j++)
    if (!dense_rq_ok(q->multiplier[j], q->shift[j])) return 0;
  *c = dense_rq(q->multiplier[0], q->shift[0], q->output_offset);
  return 1;
}

/* The len outputs from n0 (their sums in a, the bias not yet added)
 * into out[n0 ..], clamped to [lo, hi] (within int8), when dense_rq_init
 * held; c: channel 0's constants. One loop for the block, so that its
 * constants stay in registers and an output takes a dozen instructions. */
static void dense_rq_block(const TnCrtQuant *q, int32_t pc, const DenseRq *c,
                           const uint32_t *a, const int32_t *bias, int32_t n0,
                           int32_t len, int32_t lo, int32_t hi, int8_t *out) {
  const int act = lo > -128 || hi < 127;
  DenseRq k = *c;
  if (!pc && !act && bias != NULL) { /* AD's layers: no test an output */
    for (int32_t j = 0, n = n0; j < len; j++, n++)
      out[n] = (int8_t)tn__crt_requant_s8((int32_t)(a[j] + (uint32_t)bias[n]),
                                          k.m, k.round, k.r);
    return;
  }
  for (int32_t j = 0; j < len; j++) {
    const int32_t n = n0 + j;
    const int32_t v = (int32_t)(bias ? a[j] + (uint32_t)bias[n] : a[j]);
    if (pc) k = dense_rq(q->multiplier[n], q->shift[n], q->output_offset);
    int32_t r = tn__crt_requant_s8(v, k.m, k.round, k.r);
    if (act) r = r < lo ? lo : r > hi ? hi : r;
    out[n] = (int8_t)r;
  }
}
#endif /* TN_CRT_HAVE_ARM_DSP */

#endif /* TVMNODE_CRT_ARM_DSP_DENSE_S8_DSP_H_ */
