/*
 * dense_s8.c: int8 fully-connected layer and matmul, TFLite Micro's
 * FullyConnected / FullyConnectedPerChannel reference arithmetic bit for
 * bit: acc = sum_k((x + input_offset) * (w + filter_offset)) + bias, then
 * MultiplyByQuantizedMultiplier with the output feature's (or the
 * tensor's) multiplier, + output offset, clamped. The weight is read
 * through two strides, so nn.dense's [N, K] and matmul's [K, N] are both
 * native.
 *
 * TFLite's int32 accumulator wraps like any sum mod 2^32, so the sums are
 * uint32 (no signed overflow anywhere) taken in whatever order is fastest:
 *  - K contiguous ([N, K], TFLite's layout): four outputs at a time, each a
 *    dot product over contiguous memory sharing the loads of x. With
 *    offsets that keep x + input_offset and w + filter_offset within int16
 *    (any TFLite zero point) the operands are int16 and the loop has a
 *    fixed multiple of 16 iterations, the form gcc -O2 vectorises into
 *    SSE2's pmaddwd (eight int16 products, summed in pairs into int32s,
 *    per instruction); on x86-64 CPUs with AVX2 (found at run time,
 *    isa.h) four rows take a second form in AVX2 intrinsics (x86/),
 *    sixteen products per vpmaddwd, about 1.4x as fast on the anomaly
 *    detector's layers;
 *  - N contiguous ([K, N]): a block of up to BLK outputs accumulated input
 *    by input, one input value broadcast against a run of weights, in a
 *    local array with a fixed trip count; with TFLite's offsets
 *    (filter_offset 0, |x + input_offset| <= 255) the products fit int16;
 *  - anything else, and other offsets: plain uint32 arithmetic.
 * The requantization is per output, on x86 with AVX2 a block of up to 16
 * outputs at once (x86/dense_s8.c; the anomaly detector's layers of 128
 * inputs spent a quarter of their time in the scalar one). On a Cortex-M
 * with the DSP extension gcc vectorises none of this, and the contiguous
 * case has a second form (arm_dsp/dense_s8_dsp.h): SXTAB16 unpacks four
 * int8 of the input and of each row into int16 pairs, offsets added, and
 * SMLAD multiplies and adds two pairs, about four times as fast as the
 * portable C there; a block's outputs are requantized there too, in seven
 * instructions each (dense_rq_block) instead of a call of
 * tn_crt_multiply_by_quantized_multiplier (the anomaly detector's
 * requantization had been 23 % of its estimated cycles).
 *
 * The weight may also come packed (tn_crt_dense_s8_pack; the compiler's
 * PackDenseWeights pass does it for the host): blocks of 16 outputs, the
 * inputs in groups of 4, each group of a block one row of 16 features by
 * 4 bytes. The portable C runs it block by block as it runs [N, K]; on
 * x86 with AVX-512 VNNI and an input offset of 128 (where the pass puts
 * it) one vpdpbusd adds a group's 64 products to 16 sums (x86/dense_s8.c),
 * up to four blocks at once, and each block is requantized from its
 * registers (sixteen lanes of AVX-512) where K is a multiple of 4; with
 * AVX2 four vpmaddwd do. Same bytes out. At the AVX-512 level every
 * block's requantization takes sixteen lanes at once.
 *
 * Or packed for the Cortex-M DSP form (tn_crt_dense_s8_pack4, which
 * PackDenseWeights does for "cortex-m"): the same groups of 4 inputs in
 * blocks of 4 outputs, so that a block's four rows' words for four inputs
 * are 16 bytes in a row and its loop (arm_dsp/dense_s8_dsp.h: dsp_p4_rows)
 * addresses them by immediate offsets from one pointer. The portable C
 * reads that layout too, block by block. Same bytes out.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "dense_s8.h"
#include "fixed_point.h"
#if TN_CRT_HAVE_ARM_DSP
/* The DSP form: inline functions, compiled into dot4 and dot1 below. */
#include "arm_dsp/dense_s8_dsp.h"
#endif
#if TN_CRT_HAVE_ARM_MVE
/* The MVE form of the N4K4 layout's whole blocks (the M55). */
#include "arm_mve/dense_s8_mve.h"
#endif

/* Outputs per broadcast block. */
enum { BLK = 16 };


static TnCrtStatus check_dense(const TnCrtDense *p, const void *in,
                               const void *w, const void *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->in_features <= 0 || p->out_features <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}


/* s[r] = sum_k((x[k] + io) * (w[r * sn + k] + fo)) for r < rows (1 or 4, a
 * constant) over contiguous x and weight rows. The vectorised loop runs a
 * multiple of 16 iterations (gcc -O2 vectorises only loops that need no
 * scalar epilogue). */
BLOCK_INLINE void dot_rows(const Dense *d, const int8_t *restrict x,
                           const int8_t *restrict w, int rows, uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int16_t io = (int16_t)d->io, fo = (int16_t)d->fo;
  /* Rows past the first only when there are four (no pointer past the
   * weights). */
  const int8_t *w0 = w, *w1 = rows == 4 ? w + sn : w;
  const int8_t *w2 = rows == 4 ? w + 2 * sn : w;
  const int8_t *w3 = rows == 4 ? w + 3 * sn : w;
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int32_t m = kk & ~15;
  for (int32_t k = 0; k < m; k++) {
    const int16_t xv = (int16_t)(x[k] + io);
    s0 += (uint32_t)(xv * (int16_t)(w0[k] + fo));
    if (rows == 4) {
      s1 += (uint32_t)(xv * (int16_t)(w1[k] + fo));
      s2 += (uint32_t)(xv * (int16_t)(w2[k] + fo));
      s3 += (uint32_t)(xv * (int16_t)(w3[k] + fo));
    }
  }
  for (int32_t k = m; k < kk; k++) {
    const int32_t xv = x[k] + io;
    s0 += (uint32_t)(xv * (w0[k] + fo));
    if (rows == 4) {
      s1 += (uint32_t)(xv * (w1[k] + fo));
      s2 += (uint32_t)(xv * (w2[k] + fo));
      s3 += (uint32_t)(xv * (w3[k] + fo));
    }
  }
  s[0] = s0;
  if (rows == 4) s[1] = s1, s[2] = s2, s[3] = s3;
}



OUT_OF_LINE void dot4(const Dense *d, const int8_t *x, const int8_t *w,
                      uint32_t *s) {
#if TN_CRT_HAVE_ARM_DSP
  dsp_rows(d, x, w, 4, s);
#else
#if TN_CRT_HAVE_AVX2
  if (d->vnni) {
    tn__crt_dense_dot4_vnni(d, x, w, s);
    return;
  }
  if (d->avx2) {
    tn__crt_dense_dot4_avx2(d, x, w, s);
    return;
  }
#endif
  dot_rows(d, x, w, 4, s);
#endif
}
OUT_OF_LINE void dot1(const Dense *d, const int8_t *x, const int8_t *w,
                      uint32_t *s) {
#if TN_CRT_HAVE_ARM_DSP
  dsp_rows(d, x, w, 1, s);
#else
  dot_rows(d, x, w, 1, s);
#endif
}
#if TN_CRT_HAVE_ARM_DSP
/* The N4K4 layout's whole blocks of four rows, offsets 0 (the DSP form),
 * and a last block of fewer rows. */
OUT_OF_LINE void dot_p4(const Dense *d, const int8_t *x, const int8_t *w,
                        int32_t rows, uint32_t *s) {
  dsp_p4_rows(d, x, w, rows, s);
}
OUT_OF_LINE void dot_p4_part(const Dense *d, const int8_t *x,
                             const int8_t *w, int32_t rows, uint32_t *s) {
  dsp_p4_part(d, x, w, rows, s);
}
#endif

/* a[j] += (x[k] + io) * w[k * sk + j] for j < len (a constant, or the
 * tail), k < K: products in 16 bits. */
BLOCK_INLINE void bcast_block(const Dense *d, const int8_t *x,
                              const int8_t *restrict w, int32_t len,
                              uint32_t *restrict a) {
  const ptrdiff_t sk = d->p->w_stride_k;
  const int16_t io = (int16_t)d->io;
  for (int32_t k = 0; k < d->p->in_features; k++, w += sk) {
    const int16_t xv = (int16_t)(x[k] + io);
    for (int32_t j = 0; j < len; j++) a[j] += (uint32_t)(int16_t)(xv * w[j]);
  }
}

static void accumulate_p4(const Dense *d, const int8_t *x, int32_t n0,
                          int32_t len, uint32_t *restrict a);

/* Outputs [n0, n0 + len) of input row x into a, stored. */
static void accumulate(const Dense *d, const int8_t *x, int32_t n0,
                       int32_t len, uint32_t *restrict a) {
  const TnCrtDense *p = d->p;
  const ptrdiff_t sn = p->w_stride_n, sk = p->w_stride_k;
  const int8_t *w = d->w + (ptrdiff_t)n0 * sn;
  if (d->packed == TN_CRT_DENSE_N4K4) {
    accumulate_p4(d, x, n0, len, a);
    return;
  }
  if (!TN__DENSE_FORM(TN_CRT_DENSE_FORM_NK)) return; /* dense_forms */
  if (sk == 1 && d->narrow) { /* the rows' sums are stored, not added */
    int32_t j = 0;
    for (; j + 4 <= len; j += 4) dot4(d, x, w + j * sn, a + j);
    for (; j < len; j++) dot1(d, x, w + j * sn, a + j);
    return;
  }
  for (int32_t j = 0; j < len; j++) a[j] = 0;
  if (sn == 1 && d->small) {
    if (len == BLK)
      bcast_block(d, x, w, BLK, a);
    else
      bcast_block(d, x, w, len, a);
  } else {
    const uint32_t io = (uint32_t)d->io, fo = (uint32_t)d->fo;
    for (int32_t j = 0; j < len; j++)
      for (int32_t k = 0; k < p->in_features; k++)
        a[j] += ((uint32_t)x[k] + io) *
                ((uint32_t)w[(ptrdiff_t)j * sn + (ptrdiff_t)k * sk] + fo);
  }
}

/* The packed layout (tn_crt_dense_s8_pack): a[j] += the sums of output j
 * of the block of len outputs at wb (the packed weight's n0 * K) over its
 * groups of inputs from i0 (a multiple of 4) on. */
BLOCK_INLINE void packed_groups(const Dense *d, const int8_t *x,
                                const int8_t *wb, int32_t len, int32_t i0,
                                uint32_t *restrict a) {
  const int32_t kk = d->p->in_features;
  const uint32_t io = (uint32_t)d->io, fo = (uint32_t)d->fo;
  int32_t k0 = i0;
  if (len == BLK && d->narrow) /* whole groups of a whole block: int16 */
    for (; k0 + 4 <= kk; k0 += 4) {
      const int8_t *restrict g = wb + (ptrdiff_t)k0 * BLK;
      int16_t xv[4];
      for (int t = 0; t < 4; t++) xv[t] = (int16_t)(x[k0 + t] + d->io);
      for (int32_t j = 0; j < BLK; j++)
        for (int t = 0; t < 4; t++)
          a[j] += (uint32_t)(xv[t] * (int16_t)(g[4 * j + t] + d->fo));
    }
  for (; k0 < kk; k0 += 4) {
    const int32_t kb = kk - k0 < 4 ? kk - k0 : 4;
    const int8_t *g = wb + (ptrdiff_t)k0 * len;
    for (int32_t j = 0; j < len; j++)
      for (int32_t t = 0; t < kb; t++)
        a[j] += ((uint32_t)x[k0 + t] + io) * ((uint32_t)g[j * kb + t] + fo);
  }
}

/* The N4K4 layout (tn_crt_dense_s8_pack4): outputs [n0, n0 + len) (n0 a
 * multiple of 4) of input row x into a, stored. Its blocks of four rows
 * (the last the rows left) are the packed weight's n0 * K on, each K *
 * rows bytes in groups of four inputs, as N16K4's blocks of 16 are. */
static void accumulate_p4(const Dense *d, const int8_t *x, int32_t n0,
                          int32_t len, uint32_t *restrict a) {
  const int32_t kk = d->p->in_features;
  int32_t j = 0;
#if TN_CRT_HAVE_ARM_DSP
  if (TN__DENSE_FORM(TN_CRT_DENSE_FORM_P4_DSP) && d->io == 0 &&
      d->fo == 0) { /* the DSP form takes whole blocks */
    j = len & ~3;
    if (j) dot_p4(d, x, d->w + (ptrdiff_t)n0 * kk, j, a);
  }
  if (j == (len & ~3) && (len & 3) && d->narrow) { /* and a last part */
    dot_p4_part(d, x, d->w + (ptrdiff_t)(n0 + j) * kk, len & 3, a + j);
    return;
  }
#endif
  if (!TN__DENSE_FORM(TN_CRT_DENSE_FORM_PACKED)) return; /* dense_forms */
  for (; j < len; j += 4) {
    const int32_t rb = len - j < 4 ? len - j : 4;
    for (int32_t i = 0; i < rb; i++) a[j + i] = 0;
    packed_groups(d, x, d->w + (ptrdiff_t)(n0 + j) * kk, rb, 0, a + j);
  }
}

/* Outputs from n0 on of input row x, packed weight, into a (4 * BLK of
 * them): the number of outputs taken (whole blocks, up to four of them,
 * or the last block); *todo: the blocks whose sums are in a (bit b: block
 * b), the others requantized already (with rq, by the VNNI form). */
static int32_t accumulate_packed(const Dense *d, const int8_t *x, int32_t n0,
                                 uint32_t *restrict a, DenseRqSpan *rq,
                                 unsigned *todo) {
  const int32_t nn = d->p->out_features, kk = d->p->in_features;
  const int8_t *w = d->w + (ptrdiff_t)n0 * kk;
  const int32_t left = nn - n0;
  const int32_t nb = left >= BLK ? (left / BLK < 4 ? left / BLK : 4) : 1;
  const int32_t len = left >= BLK ? BLK : left;
  const int32_t whole = kk & ~3; /* inputs in whole groups */
  int32_t from = 0; /* the groups still to add, for every block */
  *todo = (1u << nb) - 1;
#if TN_CRT_HAVE_AVX2
  if (d->pvnni && whole > 0) {
    if (rq && whole == kk) { /* no groups after: requantized there */
      rq->bias = rq->bias ? rq->bias + n0 : NULL;
      rq->mult += rq->pc ? n0 : 0, rq->shift += rq->pc ? n0 : 0;
      rq->out += n0;
      *todo = tn__crt_dense_packed_vnni(d, x, w, nb, len, a, rq);
      return nb * len;
    }
    tn__crt_dense_packed_vnni(d, x, w, nb, len, a, NULL);
    from = whole;
  } else if (d->pvex && len == BLK && whole > 0) {
    tn__crt_dense_packed_avxvnni(d, x, w, nb, a);
    from = whole;
  } else if (d->avx2 && d->narrow && len == BLK && whole > 0) {
    if (rq && whole == kk) { /* no groups after: requantized there */
      rq->bias = rq->bias ? rq->bias + n0 : NULL;
      rq->mult += rq->pc ? n0 : 0, rq->shift += rq->pc ? n0 : 0;
      rq->out += n0;
      *todo = tn__crt_dense_packed_avx2(d, x, w, nb, a, rq);
      return nb * len;
    }
    tn__crt_dense_packed_avx2(d, x, w, nb, a, NULL);
    from = whole;
  } else if (d->avx2 && d->narrow && (len & 3) == 0 && whole > 0) {
    tn__crt_dense_packed_part_avx2(d, x, w, len, a); /* a last block */
    from = whole;
  }
#endif
  if (from == 0) /* no form stored the sums: they start at 0 */
    for (int32_t i = 0; i < nb * len; i++) a[i] = 0;
  for (int32_t b = 0; b < nb; b++)
    packed_groups(d, x, w + (ptrdiff_t)b * BLK * kk, len, from, a + b * BLK);
  (void)rq, (void)whole;
  return nb * len;
}

/* The block of outputs [n0, n0 + len) of row m, sums a: requantized into
 * out8 (with q) or, plus the bias, stored into out32. */
static void finish_block(const Dense *d, const TnCrtQuant *q, int32_t pc,
                         int32_t lo, int32_t hi, const uint32_t *a,
                         const int32_t *bias, int32_t m, int32_t n0,
                         int32_t len, int8_t *out8, int32_t *out32) {
  const int32_t nn = d->p->out_features;
#if TN_CRT_HAVE_AVX2
  /* the block's requantization in vectors (x86/dense_s8.c), where its
   * multipliers and shifts allow: sixteen lanes with AVX-512, or eight */
  if (out8 && d->avx2 && !q->scale &&
      (d->vnni ? tn__crt_dense_requant_avx512 : tn__crt_dense_requant_avx2)(
          a, bias ? bias + n0 : NULL, q->multiplier + (pc ? n0 : 0),
          q->shift + (pc ? n0 : 0), pc, len, q->output_offset, lo, hi,
          out8 + (ptrdiff_t)m * nn + n0))
    return;
#else
  (void)d;
#endif
  for (int32_t j = 0; j < len; j++) {
    const int32_t n = n0 + j;
    const int32_t v = (int32_t)(bias ? a[j] + (uint32_t)bias[n] : a[j]);
    if (out32) {
      out32[(ptrdiff_t)m * nn + n] = v;
      continue;
    }
    if (q->scale) {
      out8[(ptrdiff_t)m * nn + n] = (int8_t)tn__crt_requant_float(
          v, q->scale[pc ? n : 0], q->output_offset, lo, hi);
      continue;
    }
    const int32_t r = (int32_t)(
        (uint32_t)tn_crt_multiply_by_quantized_multiplier(
            v, q->multiplier[pc ? n : 0], q->shift[pc ? n : 0]) +
        (uint32_t)q->output_offset);
    out8[(ptrdiff_t)m * nn + n] = (int8_t)(r < lo ? lo : r > hi ? hi : r);
  }
}

/* Every output, block by block; the block is requantized into out8 (with
 * q) or, plus the bias, stored into out32. */
static void dense_run(const Dense *d, const TnCrtQuant *q, int32_t lo,
                      int32_t hi, const int8_t *in, const int32_t *bias,
                      int8_t *out8, int32_t *out32) {
  const TnCrtDense *p = d->p;
  const int32_t nn = p->out_features, kk = p->in_features;
  const int32_t pc = q != NULL && q->per_channel != 0;
#if TN_CRT_HAVE_ARM_DSP
  DenseRq rq0 = {0, 0, 1}; /* set by dense_rq_init where fast */
  const int fast = out8 != NULL && dense_rq_init(q, nn, &rq0);
#endif
#if TN_CRT_HAVE_ARM_MVE
  /* the blocks of four rows in MVE, the last rows left to the loop */
  const int mve = out8 != NULL && TN__DENSE_FORM(TN_CRT_DENSE_FORM_P4_DSP) &&
                  mve_dense_ok(d, q);
#endif
  for (int32_t m = 0; m < p->batch; m++) {
    const int8_t *x = in + (ptrdiff_t)m * kk;
    if (TN__DENSE_FORM(TN_CRT_DENSE_FORM_PACKED) &&
        d->packed == TN_CRT_DENSE_N16K4) {
      for (int32_t n0 = 0; n0 < nn;) {
        uint32_t a[4 * BLK]; /* set by accumulate_packed */
        /* the fixed-point requantization from the VNNI form's registers */
        DenseRqSpan rq = {bias, NULL, NULL, pc, 0, lo, hi, NULL}, *rqp = NULL;
        if (out8 && !q->scale) {
          rq.mult = q->multiplier, rq.shift = q->shift;
          rq.off = q->output_offset, rq.out = out8 + (ptrdiff_t)m * nn;
          rqp = &rq;
        }
        unsigned left;
        const int32_t span = accumulate_packed(d, x, n0, a, rqp, &left);
        for (int32_t j = 0; j < span; j += BLK)
          if (left & (1u << (j / BLK)))
            finish_block(d, q, pc, lo, hi, a + j, bias, m, n0 + j,
                         span - j < BLK ? span - j : BLK, out8, out32);
        n0 += span;
      }
      continue;
    }
    int32_t first = 0; /* the outputs the MVE form wrote */
#if TN_CRT_HAVE_ARM_MVE
    if (mve)
      first = mve_dense_p4(d, q, lo, hi, x, bias, out8 + (ptrdiff_t)m * nn);
#endif
    for (int32_t n0 = first; n0 < nn; n0 += BLK) {
      const int32_t len = nn - n0 < BLK ? nn - n0 : BLK;
      uint32_t a[BLK]; /* stored by accumulate */
      accumulate(d, x, n0, len, a);
#if TN_CRT_HAVE_ARM_DSP
      if (fast) {
        dense_rq_block(q, pc, &rq0, a, bias, n0, len, lo, hi,
                       out8 + (ptrdiff_t)m * nn);
        continue;
      }
#endif
      finish_block(d, q, pc, lo, hi, a, bias, m, n0, len, out8, out32);
    }
  }
}

static void dense_init(Dense *d, const TnCrtDense *p, const int8_t *w,
                       int32_t io, int32_t fo) {
  d->p = p, d->w = w, d->io = io, d->fo = fo, d->packed = 0, d->pvnni = 0;
  d->pvex = 0;
  /* x in [-128, 127]: x + io fits an int16 for io in [-32640, 32640]. */
  d->narrow = io >= -32640 && io <= 32640 && fo >= -32640 && fo <= 32640;
  d->small = fo == 0 && io >= -127 && io <= 128;
#if TN_CRT_HAVE_AVX2
  d->avx2 = tn__crt_avx2();
  d->vnni = fo == 0 && tn__crt_avx512vnni();
#else
  d->avx2 = 0, d->vnni = 0;
#endif
}

/* The forms (TN_CRT_DENSE_FORM_*) a call of layout `packed` takes with
 * offsets io and fo, on the DSP build (dsp) or another: what dense_run
 * reaches. */
static int32_t dense_forms(int32_t packed, int32_t io, int32_t fo, int dsp) {
  if (packed == TN_CRT_DENSE_NK) return TN_CRT_DENSE_FORM_NK;
  if (packed == TN_CRT_DENSE_N4K4 && dsp && io == 0 && fo == 0)
    return TN_CRT_DENSE_FORM_P4_DSP; /* whole blocks and the last part */
  return TN_CRT_DENSE_FORM_PACKED;
}

/* TN_CRT_UNSUPPORTED where TN_CRT_DENSE_S8_FORMS leaves the call's form
 * out of this build. */
static TnCrtStatus forms_in(int32_t packed, int32_t io, int32_t fo) {
  const int32_t f = dense_forms(packed, io, fo, TN_CRT_HAVE_ARM_DSP);
  return (f & (TN_CRT_DENSE_S8_FORMS)) == f ? TN_CRT_OK : TN_CRT_UNSUPPORTED;
}

int32_t tn_crt_dense_s8_forms_isa(const TnCrtDense *p, const TnCrtQuant *q,
                                  int32_t packed, int32_t isa) {
  if (p == NULL || (packed != TN_CRT_DENSE_NK &&
                    packed != TN_CRT_DENSE_N16K4 &&
                    packed != TN_CRT_DENSE_N4K4) ||
      (q == NULL && packed != TN_CRT_DENSE_NK))
    return 0;
  return q ? dense_forms(packed, q->input_offset, q->filter_offset,
                         isa == TN_CRT_ISA_ARM_DSP)
           : TN_CRT_DENSE_FORM_NK;
}

size_t tn_crt_dense_s8_scratch_size(const TnCrtDense *p) {
  (void)p;
  return 0;
}

/* tn_crt_dense_s8, its weight packed or not */
TnCrtStatus tn__crt_dense_s8_rows(const TnCrtDense *p, const TnCrtQuant *q,
                                  const int8_t *in, const int8_t *w,
                                  const int32_t *bias, int8_t *out,
                                  int packed) {
  TnCrtStatus st = check_dense(p, in, w, out);
  if (st != TN_CRT_OK) return st;
  if (q == NULL || (q->scale == NULL && (q->multiplier == NULL ||
                                          q->shift == NULL)))
    return TN_CRT_INVALID_ARGUMENT;
  /* the packed layouts are [N, K]'s, rearranged */
  if (packed != TN_CRT_DENSE_NK && packed != TN_CRT_DENSE_N16K4 &&
      packed != TN_CRT_DENSE_N4K4)
    return TN_CRT_INVALID_ARGUMENT;
  if (packed && (p->w_stride_k != 1 || p->w_stride_n != p->in_features))
    return TN_CRT_INVALID_ARGUMENT;
  /* The activation range narrowed to int8 (a wider one clamps no more). */
  const int32_t lo = q->act_min < -128 ? -128 : q->act_min;
  const int32_t hi = q->act_max > 127 ? 127 : q->act_max;
  if (q->act_min > q->act_max || lo > hi) return TN_CRT_INVALID_ARGUMENT;
  st = forms_in(packed, q->input_offset, q->filter_offset);
  if (st != TN_CRT_OK) return st;
  Dense d;
  dense_init(&d, p, w, q->input_offset, q->filter_offset);
  d.packed = packed;
  d.pvnni = packed == TN_CRT_DENSE_N16K4 && d.vnni && d.io == 128;
#if TN_CRT_HAVE_AVX2
  d.pvex = packed == TN_CRT_DENSE_N16K4 && !d.vnni && d.fo == 0 &&
           d.io == 128 && tn__crt_avxvnni();
#endif
  dense_run(&d, q, lo, hi, in, bias, out, NULL);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_dense_s8(const TnCrtDense *p, const TnCrtQuant *q,
                            const int8_t *in, const int8_t *w,
                            const int32_t *bias, int8_t *out, void *scratch,
                            size_t scratch_size) {
  (void)scratch, (void)scratch_size;
  return tn__crt_dense_s8_rows(p, q, in, w, bias, out, 0);
}

/* w [n, k] into packed in blocks of bw outputs, inputs in groups of 4
 * (tn_crt_dense_s8_pack's layout for bw 16, pack4's for 4). */
static TnCrtStatus pack_blocks(int32_t n, int32_t k, int32_t bw,
                               const int8_t *w, int8_t *packed) {
  if (w == NULL || packed == NULL || n <= 0 || k <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t j0 = 0; j0 < n; j0 += bw) {
    const int32_t nb = n - j0 < bw ? n - j0 : bw;
    int8_t *blk = packed + (ptrdiff_t)j0 * k;
    for (int32_t i0 = 0; i0 < k; i0 += 4) {
      const int32_t kb = k - i0 < 4 ? k - i0 : 4;
      for (int32_t j = 0; j < nb; j++)
        for (int32_t t = 0; t < kb; t++)
          blk[(ptrdiff_t)i0 * nb + j * kb + t] =
              w[(ptrdiff_t)(j0 + j) * k + i0 + t];
    }
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_dense_s8_pack(int32_t n, int32_t k, const int8_t *w,
                                 int8_t *packed) {
  return pack_blocks(n, k, BLK, w, packed);
}

TnCrtStatus tn_crt_dense_s8_pack4(int32_t n, int32_t k, const int8_t *w,
                                  int8_t *packed) {
  return pack_blocks(n, k, 4, w, packed);
}

TnCrtStatus tn_crt_dense_s8_packed(const TnCrtDense *p, const TnCrtQuant *q,
                                   const int8_t *in, const int8_t *w,
                                   const int32_t *bias, int8_t *out) {
  return tn__crt_dense_s8_rows(p, q, in, w, bias, out, TN_CRT_DENSE_N16K4);
}

TnCrtStatus tn_crt_dense_s8_packed4(const TnCrtDense *p, const TnCrtQuant *q,
                                    const int8_t *in, const int8_t *w,
                                    const int32_t *bias, int8_t *out) {
  return tn__crt_dense_s8_rows(p, q, in, w, bias, out, TN_CRT_DENSE_N4K4);
}

TnCrtStatus tn_crt_dense_s8_s32(const TnCrtDense *p, int32_t input_offset,
                                int32_t filter_offset, const int8_t *in,
                                const int8_t *w, const int32_t *bias,
                                int32_t *out) {
  TnCrtStatus st = check_dense(p, in, w, out);
  if (st == TN_CRT_OK) st = forms_in(TN_CRT_DENSE_NK, 0, 0);
  if (st != TN_CRT_OK) return st;
  Dense d;
  dense_init(&d, p, w, input_offset, filter_offset);
  dense_run(&d, NULL, 0, 0, in, bias, NULL, out);
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(dense_s8, TnCrtCallDenseS8) {
  (void)scratch, (void)scratch_size;
  return tn__crt_dense_s8_rows(&p->d, &p->q, in[0], in[1],
                               p->has_bias ? in[2] : NULL, out, p->packed);
}
TN_CRT_CALL(dense_s8_s32, TnCrtCallDenseS32) {
  return tn_crt_dense_s8_s32(&p->d, p->input_offset, p->filter_offset, in[0],
                             in[1], NULL, out);
}
