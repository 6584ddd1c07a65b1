/*
 * dense_s8.h: what the int8 dense layer (dense_s8.c, portable C) shares
 * with its ISA forms, x86/dense_s8.c (AVX2) and arm_dsp/dense_s8_dsp.h (the
 * Cortex-M DSP extension, inline functions that dense_s8.c includes): the
 * layer as the row kernels see it, and the AVX2 form's entry point, which
 * dense_s8.c calls where isa.h says the form is compiled in. Private to
 * runtime/crt.
 */
#ifndef TVMNODE_CRT_DENSE_S8_H_
#define TVMNODE_CRT_DENSE_S8_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"
#include "isa.h"

/* Inlined with constant arguments, so that each copy gets fixed-length
 * (vectorisable) loops; or kept out of line: gcc 12 does not vectorise the
 * dot products once they are inlined into the loop over outputs. */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#define OUT_OF_LINE static __attribute__((noinline))
#else
#define BLOCK_INLINE static inline
#define OUT_OF_LINE static
#endif

typedef struct {
  const TnCrtDense *p;
  const int8_t *w;
  int32_t io, fo;
  int narrow; /* x + io and w + fo fit an int16 */
  int small;  /* fo == 0 and |x + io| <= 255: products fit an int16 */
  int avx2;   /* the AVX2 form runs here (asked once per call) */
  int vnni;   /* the AVX-512 VNNI form runs here and fo == 0 */
  int packed; /* w's layout: TN_CRT_DENSE_NK, _N16K4 or _N4K4 */
  int pvnni;  /* packed, vnni and io == 128: tn__crt_dense_packed_vnni */
  int pvex;   /* packed, AVX-VNNI, not vnni, fo == 0 and io == 128 */
} Dense;

/* The requantization of a span of outputs, for the packed VNNI form: the
 * span's bias (or NULL), multipliers and shifts (from the span's first
 * when per channel, pc), output offset, clamp, and its first output. */
typedef struct {
  const int32_t *bias, *mult, *shift;
  int pc;
  int32_t off, lo, hi;
  int8_t *out;
} DenseRqSpan;

/* tn_crt_dense_s8 (packed TN_CRT_DENSE_NK) or tn_crt_dense_s8_packed
 * (TN_CRT_DENSE_N16K4) or _packed4 (TN_CRT_DENSE_N4K4), for the
 * packed 1x1 convolution (conv_s8.c), whose pixels are the rows. */
TnCrtStatus tn__crt_dense_s8_rows(const TnCrtDense *p, const TnCrtQuant *q,
                                  const int8_t *in, const int8_t *w,
                                  const int32_t *bias, int8_t *out,
                                  int packed);

#if TN_CRT_HAVE_AVX2
/* s[r] = sum_k((x[k] + io) * (w[r * sn + k] + fo)) for the four rows at w,
 * when d->narrow and d->avx2. */
void tn__crt_dense_dot4_avx2(const Dense *d, const int8_t *x, const int8_t *w,
                             uint32_t *s);
/* The same with AVX-512 VNNI, when d->vnni (fo == 0). */
void tn__crt_dense_dot4_vnni(const Dense *d, const int8_t *x, const int8_t *w,
                             uint32_t *s);
/* The outputs out[0 .. len) (len <= 16) of the block's accumulators a (16
 * of them, those past len ignored) plus bias (if not NULL), requantized by
 * TFLite's MultiplyByQuantizedMultiplier with mult[j] and shift[j] (pc),
 * or mult[0] and shift[0], the output offset off added, clamped to
 * [lo, hi] (within int8), when d->avx2: 1; or 0, nothing written, where a
 * channel has M < 0 or a shift outside [-31, 0] (the caller's scalar
 * form then). */
int tn__crt_dense_requant_avx2(const uint32_t *a, const int32_t *bias,
                               const int32_t *mult, const int32_t *shift,
                               int pc, int32_t len, int32_t off, int32_t lo,
                               int32_t hi, int8_t *out);
/* tn__crt_dense_requant_avx2 with AVX-512 (sixteen lanes at once, the
 * same integers), when d->vnni. */
int tn__crt_dense_requant_avx512(const uint32_t *a, const int32_t *bias,
                                 const int32_t *mult, const int32_t *shift,
                                 int pc, int32_t len, int32_t off, int32_t lo,
                                 int32_t hi, int8_t *out);
/* The packed layout's sums a[b * 16 + j] = sum_i((x[i] + io) * (w + fo))
 * over the whole groups of 4 inputs (i < k & ~3), stored (not added), for
 * output j of the nb blocks (1 to 4) of 16 outputs at w (the packed
 * weight's n0 * K), each len wide (16, or the last block's width with nb
 * 1): with AVX-512 VNNI when d->pvnni. With rq (K a multiple of 4, the
 * fixed-point requantization) each block is requantized from its
 * registers into rq->out instead, where its multipliers and shifts allow;
 * returns the blocks whose sums were stored (bit b: block b), for the
 * caller to finish. */
unsigned tn__crt_dense_packed_vnni(const Dense *d, const int8_t *x,
                                   const int8_t *w, int32_t nb, int32_t len,
                                   uint32_t *a, const DenseRqSpan *rq);
/* The same for nb full blocks (len 16) with AVX2, when d->narrow and
 * d->avx2 (vpmaddwd on the int16 x + io and w + fo); with rq, each block
 * requantized from the registers as the VNNI form does (the blocks left
 * to the caller: the bits returned, their sums in a). */
unsigned tn__crt_dense_packed_avx2(const Dense *d, const int8_t *x,
                                   const int8_t *w, int32_t nb, uint32_t *a,
                                   const DenseRqSpan *rq);
/* The same for the last block of a layer, len outputs where len is 4, 8
 * or 12 (its groups len * 4 bytes: a 16-byte quarter a four outputs, as a
 * whole block's), with AVX2, when d->narrow and d->avx2. */
void tn__crt_dense_packed_part_avx2(const Dense *d, const int8_t *x,
                                    const int8_t *w, int32_t len, uint32_t *a);
/* The same with AVX-VNNI (VEX vpdpbusd on ymm), when d->pvex. */
void tn__crt_dense_packed_avxvnni(const Dense *d, const int8_t *x,
                                  const int8_t *w, int32_t nb, uint32_t *a);
/* For the tests: 1 leaves out the VNNI form's 128 * sum(w) correction, 2
 * makes it saturate (vpdpbusds), 0 puts it right again; 3 makes the
 * packed VNNI and AVX-VNNI forms read their input bytes without the XOR
 * 0x80; 4 makes the AVX2 packed form read its second block's third
 * quarter for its fourth, 6 the last-block form its first quarter for
 * its last, 7 the AVX2 form's requantization in registers the bias of
 * each block's outputs 8-15, 8 the AVX2 form's inputs widened once a
 * call their last group of four. */
void tn__crt_dense_vnni_fault(int how);
#endif

#endif /* TVMNODE_CRT_DENSE_S8_H_ */
