/*
 * conv_s8.h: what the int8 convolution (conv_s8.c, portable C) shares with
 * its ISA forms, x86/conv_s8.c (SSE2) and arm_dsp/conv_s8_dsp.h (the
 * Cortex-M DSP extension, static functions that conv_s8.c includes): the
 * geometry, the window of a pixel, a block's requantization constants,
 * and the entry points of the SSE2 form, which conv_s8.c calls where
 * isa.h says the form is compiled in. Private to runtime/crt; conv_s8.c's
 * opening comment describes the forms.
 */
#ifndef TVMNODE_CRT_CONV_S8_H_
#define TVMNODE_CRT_CONV_S8_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"
#include "isa.h"

/* Output channels per block (four SSE registers of int32 accumulators),
 * and accumulators per block: the SSE2 path does two pixels at once. */
enum { BLK = 16, ACC = TN_CRT_HAVE_SSE2 ? 2 * BLK : BLK };

/* Inlined with constant arguments, so that each copy gets fixed-length
 * (vectorisable) loops and constant array indices. */
#if defined(__GNUC__)
#define BLOCK_INLINE static inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define BLOCK_INLINE static inline
#define NOINLINE
#endif

enum { BCAST, DW, DOT };

typedef struct {
  const TnCrtConv2d *p;
  const int8_t *in, *w;
  int32_t io, fo;   /* input and filter offsets */
  int32_t cpg, fpg; /* input and output channels per group */
  int mode;
  int narrow; /* x + io and w + fo fit an int16 (DOT's pmaddwd form) */
  int merge;  /* a row of taps and their channels is one run in both the
                 input and the weights (undilated channels-last, HWIO or
                 OHWI, whole groups) */
} Conv;

/* One output pixel: its batch's input and the in-bounds taps; with a
 * second pixel (the next one in the row), that one's kernel columns. */
typedef struct {
  const int8_t *x;
  int32_t iy0, ix0, ky0, ky1, kx0, kx1, nx0, nx1;
} Win;

/* The taps [*k0, *k1) of a dilated window starting at input index `origin`
 * that land inside [0, size): the padding, hoisted out of the tap loops.
 * size - origin and -origin + dilation - 1 can exceed int32 (with a pad
 * near INT32_MAX) but not uint32, where the divisions are done. */
static inline void taps(int32_t origin, int32_t k, int32_t dilation,
                        int32_t size, int32_t *k0, int32_t *k1) {
  const int64_t room = (int64_t)size - origin; /* input left at origin */
  uint32_t end = 0;
  if (room > 0)
    end = dilation == 1 /* the usual case; a division costs tens of cycles */
              ? (uint32_t)room
              : ((uint32_t)room - 1) / (uint32_t)dilation + 1;
  if (origin >= 0)
    *k0 = 0;
  else if (dilation == 1)
    *k0 = -origin;
  else
    *k0 = (int32_t)((0u - (uint32_t)origin + (uint32_t)dilation - 1) /
                    (uint32_t)dilation);
  if (end > (uint32_t)k) end = (uint32_t)k;
  *k1 = (int32_t)end < *k0 ? *k0 : (int32_t)end;
}

/* The widths the loops are specialised for (see conv_f32.c): a block is
 * 16, 8 or 4 wide, and only a tail of 1 to 3 takes the plain loop. */
static inline int32_t block_width(int32_t rem) {
  return rem >= 16 ? 16 : rem >= 8 ? 8 : rem >= 4 ? 4 : rem;
}

/* The requantization constants of a block (see "Requantization of a
 * block" in conv_s8.c). */
typedef struct {
  uint32_t bias[BLK], m[BLK];
  uint8_t r[BLK];
#if TN_CRT_HAVE_SSE2
  float scale[BLK], tol[BLK]; /* see requant_sse */
  int fast;                   /* requant_sse applies */
#endif
#if TN_CRT_HAVE_ARM_DSP
  int32_t round[BLK]; /* 2^(r-1) + the output offset * 2^r */
  int dsp;            /* requant_dsp applies */
#endif
  const TnCrtQuant *q;
  int32_t co0, len, off, lo, hi;
  int vec; /* every channel has M >= 0 and r in [0, 31] */
} Requant;

/* Lane j for the accumulator x when rq->vec. */
static inline int32_t requant_exact(const Requant *rq, int32_t j,
                                    uint32_t x) {
  const uint32_t r = rq->r[j];
  const uint32_t half = r > 0 ? UINT32_C(1) << (r - 1) : 0;
  const uint32_t neg = x >> 31, s = 0u - neg; /* s: all ones if x < 0 */
  const uint32_t ax = (x ^ s) - s;            /* |x| */
  const uint32_t h = (uint32_t)(
      ((uint64_t)ax * rq->m[j] + (UINT64_C(1) << 30) - neg) >> 31);
  const uint32_t mg = (h + half) >> r;
  const int32_t o = (int32_t)(((mg ^ s) - s) + (uint32_t)rq->off);
  return o < rq->lo ? rq->lo : o > rq->hi ? rq->hi : o;
}

#if TN_CRT_HAVE_SSE2
/* x86/conv_s8.c. GNU C vectors of 16 bytes (SSE2 registers). */
typedef int8_t v16i8 __attribute__((vector_size(16)));
typedef int16_t v8i16 __attribute__((vector_size(16)));
typedef int32_t v4i32 __attribute__((vector_size(16)));
typedef uint32_t v4u32 __attribute__((vector_size(16)));
typedef uint64_t v2u64 __attribute__((vector_size(16)));
typedef float v4f32 __attribute__((vector_size(16)));

enum { DW_PAIRS = 13 };
typedef struct {
  v8i16 w[DW_PAIRS][4];
  ptrdiff_t xo[2 * DW_PAIRS]; /* each tap's input offset in the window */
  int32_t ky[2 * DW_PAIRS], kx[2 * DW_PAIRS];
  v4u32 corr[4]; /* bias + io * sum(w) per channel */
  int8_t pad[16];
  int32_t pairs, taps;
} DwWin;

void tn__crt_conv_requant_init_sse2(Requant *rq);
/* The block of 16 channels at the multipliers mk, shifts sk and bias bk
 * (per channel), q's other fields set: its constants, vec and fast. */
void tn__crt_conv_requant_block_sse2(Requant *restrict rq, const int32_t *mk,
                                     const int32_t *sk, const int32_t *bk);
/* BCAST: the block of 8 * u channels at co0 (u 1 or 2) for npx pixels. */
void tn__crt_conv_sse_bcast(const Conv *c, const Win *wn, int32_t co0, int u,
                            int npx, const int8_t *xr, const int8_t *wr,
                            const uint32_t *bias, uint32_t *restrict a);
/* DW: d's taps (the window's geometry, the same for every block of a
 * call: set once a call); 0 if the window is too large for the form. */
int tn__crt_conv_dw_taps(DwWin *d, const Conv *c);
/* DW: d's weights and corrections for the block of 8 * u channels at co0
 * with the given bias (d's taps set). */
void tn__crt_conv_dw_init(DwWin *d, const Conv *c, int32_t co0, int u,
                          const uint32_t *bias);
void tn__crt_conv_dw(const DwWin *d, const Win *wn, int32_t len, int npx,
                     int full, const int8_t *x, ptrdiff_t o, ptrdiff_t step,
                     uint32_t *restrict a);
/* requant_exact for n (8 or 16) lanes when rq->fast. */
void tn__crt_conv_requant_sse(const Requant *restrict rq,
                              const uint32_t *restrict a, int32_t n,
                              int8_t *restrict res);
#endif

#if TN_CRT_HAVE_AVX2
/*
 * The AVX2 form of BCAST (x86/conv_s8.c), for a block of 8 or 16 channels
 * at four neighbouring output pixels whose kernel columns lie wholly
 * inside the input. The window is cut into rows, each a run of inputs
 * contiguous in the weights: one per kernel row where the taps and
 * channels merge (see Conv), else one per tap. tn__crt_conv_avx2_pack
 * sets down each row's input offset from the window's origin and kernel
 * row, and the block's weights as vpmaddwd reads them: per row, per pair
 * of inputs (the last one of an odd run paired with a zero weight), the
 * 8 * u channels' two weights interleaved as int16. The packed blocks stay
 * in AvxBcast for the rest of the call (a layer run in place packs once,
 * not once per chunk), as many as AVX_PACK int16 hold; a block larger than
 * that, or a window of more than AVX_ROWS rows, takes the SSE2 form. Each
 * group of four pixels reads its rows through a table of row pointers (an
 * indirection buffer, built per group from the offsets): rows above or
 * below the input point to a row of -io, whose products are 0, so that
 * the top and bottom output rows take the same path; rows partly left
 * or right of the input are completed with -io in a copy.
 */
enum {
  AVX_ROWS = 64, AVX_PACK = 24576, AVX_BLOCKS = 64, AVX_PAD = 2048,
  AVX_TMP = 8192, AVX_RQ = 8, AVX_IMG = 49152
};
typedef struct {
  int16_t w[AVX_PACK] __attribute__((aligned(32)));
  int8_t pad[AVX_PAD]; /* -io: the input of a row outside the input */
  int8_t tmp[AVX_TMP]; /* rows partly outside, completed with -io */
  /* the VNNI row form's copy of a whole image, completed with -io (as
   * x ^ 0x80), once a call for all its blocks */
  int8_t img[AVX_IMG];
  ptrdiff_t xo[AVX_ROWS];
  ptrdiff_t po[AVX_ROWS]; /* the rows' offsets in tmp's padded copy */
  int32_t ky[AVX_ROWS];
  int32_t rows, run, u, cur; /* cur: the block's weights in w */
  int32_t vnni; /* the block is packed for the AVX-512 VNNI form */
  int32_t blocks, used, co0[AVX_BLOCKS], bu[AVX_BLOCKS], off[AVX_BLOCKS];
  /* the 1x1 GEMM form's requantization constants of blocks of 16
   * channels (at rq_co0), set up once a call, not once a chunk of a
   * layer run in place */
  Requant rq[AVX_RQ];
  int32_t rq_n, rq_co0[AVX_RQ];
} AvxBcast;

/*
 * Where tn__crt_isa() allows AVX-512 VNNI, a block of 8 or 16 channels is
 * packed for vpdpbusd instead (x86/conv_s8.c): per row, per group of four
 * inputs (the last group of a run completed with zero weights), 16
 * channels' four int8 weights, 64 bytes (a block of 8: zero weights in
 * lanes 8 to 15); after the rows, per channel, the int32 correction
 * (io - 128) * sum(w) that the accumulators start from with the bias
 * (each input is read as the unsigned x ^ 0x80 = x + 128).
 */
/* For the tests: 1 leaves out the VNNI form's -128 * sum(w), 2 the 1x1
 * GEMM form's last 1 to 3 inputs of each run, 3 the VNNI row form's last
 * row of each window, 4 the packed GEMM forms' (VNNI and AVX2) last group
 * of 4 inputs, 5 the VNNI 1x1 GEMM tiles' exact requantization of their
 * doubtful lanes (the float's rounding kept), 6 the VNNI row form's
 * copies of the input (tn__crt_conv_xor80) their last byte not flipped,
 * 7 the VNNI row form on weights packed at compile time its second
 * block's weights one group early (a last block of 8: its own
 * one group early), 8 tn__crt_conv_pairs16 each group's two pairs
 * swapped, 9 the AVX2 packed GEMM's int16 pairs (rows of at most 256
 * inputs) each group's two pairs swapped, 10 the same GEMM, its inputs
 * widened once for all pixels, widening them again for each pair of
 * blocks (in place, reading outputs already written over them),
 * 0 puts them right again. */
void tn__crt_conv_vnni_fault(int how);

/* Empties the packed blocks (at the start of a kernel call). */
static inline void tn__crt_conv_avx2_reset(AvxBcast *k) {
  k->blocks = 0, k->used = 0, k->rq_n = 0;
}
/* k for the block of 8 * u channels at co0 (u 1 or 2) of a BCAST
 * convolution, packing its weights unless they are there already; 0 if
 * the window or its weights are too large. */
int tn__crt_conv_avx2_pack(AvxBcast *k, const Conv *c, int32_t co0, int u);
/* The block at the output pixels px[0 .. 3] of an output row (any four,
 * repeats allowed) whose windows start at input row iy0, kernel rows
 * [ky0, ky1) inside the input; x: the batch's input at the block's group.
 * A row of a window partly left or right of the input is copied into
 * k->tmp with -io in place of the missing inputs (merged rows; needs
 * is3 == 1 and rows * run <= AVX_TMP / 4), or reads k->pad (a tap). With
 * out (channels contiguous) and rq->fast, requantized into out[i];
 * otherwise the accumulators (starting from rq->bias) into a, pixel i at
 * a + 8 * u * i. */
void tn__crt_conv_avx2_pixels(AvxBcast *k, const Conv *c, const int8_t *x,
                              int32_t iy0, int32_t ky0, int32_t ky1,
                              const int32_t *px, const Requant *rq,
                              uint32_t *restrict a, int8_t *const *out);
/* The VNNI row form (x86/conv_s8.c): npx (>= 1) neighbouring output
 * pixels of a row whose windows lie wholly inside the input (or inside a
 * copy of its rows completed with -io: k->tmp, offsets k->po), the first
 * window's origin at x (the block's group; input channels contiguous),
 * the next xp further on, its rows at x + xo[r], for the block k holds
 * packed for VNNI (k->vnni); requantized by rq (rq->fast) into out, the
 * pixels os apart (channels contiguous). Tiles of 12, 8 and 4 pixels
 * with no row pointers. pre: x holds x ^ 0x80 (the copy), and 3 bytes
 * past each run's end may be read. */
void tn__crt_conv_vnni_row(const AvxBcast *k, const ptrdiff_t *xo, int pre,
                           const int8_t *x, ptrdiff_t xp, int32_t npx,
                           const Requant *rq, int8_t *out, ptrdiff_t os);
/* A whole block of 16 channels of tn_crt_dense_s8_pack's layout as HWIO
 * rows (input k at wu + k * ws), the groups of four inputs, each
 * channel's weight sum added to sums[0..15]; only where tn__crt_avx2(). */
void tn__crt_conv_unpack16(const int8_t *wb, int32_t kk, int8_t *wu,
                           ptrdiff_t ws, int32_t *sums);
/* dst[i] = src[i] ^ 0x80 for i < n (the VNNI forms' copies of their
 * input: vpdpbusd's unsigned operand), 64 bytes at a time; only where
 * tn__crt_avx512vnni(). */
void tn__crt_conv_xor80(uint8_t *dst, const uint8_t *src, int64_t n);
/* The same over the padded copy (pre) for two blocks of 16 channels that
 * tn__crt_conv_gemm_pack packed (at k->w + off[0] and off[1]), each
 * broadcast of four inputs serving both: requantized by rq[0] and rq[1]
 * into out's 32 channels. */
void tn__crt_conv_vnni_row2(const AvxBcast *k, const int32_t *off,
                            const ptrdiff_t *xo, const int8_t *x,
                            ptrdiff_t xp, int32_t npx,
                            const Requant *const *rq, int8_t *out,
                            ptrdiff_t os);
/*
 * The VNNI row form on a weight packed at compile time
 * (tn_crt_conv2d_s8_packed of a layer other than 1x1: tn_crt_dense_s8_pack's
 * layout of the [out_c, k_h * k_w * in_c] matrix, its bias holding
 * (io - 128) * sum(w)): tn__crt_conv_rows_packed sets k's window rows
 * for it, 0 where the window's rows are not whole groups of four (nor
 * fit k); then tn__crt_conv_vnni_row_packed runs nb (1 or 2) blocks of 16
 * channels (nb == 0: the layer's last block, of 8) whose weights start at
 * w, as tn__crt_conv_vnni_row2 over the padded copy (k->po), the bias
 * rq[b]->bias as it is. With AVX-VNNI the same blocks are read where
 * they lie too: tn__crt_conv_row_packed_avxvnni, nblk blocks of 16
 * channels from w over a copy of a row's window rows as x ^ 0x80 (row r of
 * pixel i's window at x + i * xp + k->po[r]), each rq[b]->vec. With AVX2
 * alone, tn__crt_conv_pairs16 turns a block of 16 (wb, kk inputs) into
 * the pairs that tn__crt_conv_avx2_rows reads, in k->w (as
 * tn__crt_conv_avx2_pack does from the unpacked weight, and no more work).
 */
int tn__crt_conv_rows_packed(AvxBcast *k, const Conv *c);
void tn__crt_conv_vnni_row_packed(const AvxBcast *k, const int8_t *w,
                                  int nb, const int8_t *x, ptrdiff_t xp,
                                  int32_t npx, const Requant *const *rq,
                                  int8_t *out, ptrdiff_t os);
void tn__crt_conv_row_packed_avxvnni(const AvxBcast *k, const int8_t *w,
                                     int32_t nblk, const uint8_t *x,
                                     ptrdiff_t xp, int32_t npx,
                                     const Requant *const *rq, int8_t *out,
                                     ptrdiff_t os);
void tn__crt_conv_pairs16(AvxBcast *k, const int8_t *wb, int32_t kk);
/*
 * The 1x1 GEMM form: a 1x1 unpadded convolution of one group with
 * channels-last input and output reads each pixel's input channels as
 * one contiguous run, so a row of output pixels (or a whole image whose
 * rows are contiguous, at stride 1) is a matrix product with the
 * weights: no row pointers, no set-up per pixel (x86/conv_s8.c). With
 * AVX-512 VNNI, tiles of up to 8 pixels by 32 channels; with AVX2, the
 * BCAST form's 4 pixels by 16 channels. tn__crt_conv_gemm_pack packs the
 * nb (1 or 2; 2 only with VNNI) blocks of 16 channels from co0 as BCAST's
 * forms do, all kept in k at once, their offsets into off; 0 where the
 * form does not apply. tn__crt_conv_gemm: npx pixels from x, xs apart,
 * requantized by rq[0 .. nb - 1] (each rq[b]->fast) into out, os apart
 * (channels contiguous).
 */
int tn__crt_conv_gemm_pack(AvxBcast *k, const Conv *c, int32_t co0, int nb,
                           int32_t *off);
void tn__crt_conv_gemm(AvxBcast *k, const Conv *c, const int32_t *off,
                       int nb, const int8_t *x, ptrdiff_t xs, int32_t npx,
                       const Requant *const *rq, int8_t *out,
                       ptrdiff_t os);
/* tn__crt_conv_gemm with AVX-512 VNNI on a weight packed at compile time
 * (tn_crt_conv2d_s8_packed: tn_crt_dense_s8_pack's layout, kk input
 * channels, a multiple of 4, an input offset of 128 and a filter offset
 * of 0): the nb (1, 2 or 4) blocks of 16 channels at w, read where they
 * lie; the pixels, where contiguous (xs = kk), copied as x ^ 0x80 in
 * chunks of GEMM_XU bytes on the stack. */
enum { GEMM_XU = 8192 }; /* input bytes a chunk, on the stack */
void tn__crt_conv_gemm_packed(const int8_t *w, int32_t kk, int nb,
                              const int8_t *x, ptrdiff_t xs, int32_t npx,
                              const Requant *const *rq, int8_t *out,
                              ptrdiff_t os);
/* The same with AVX2 for the nb blocks of 16 channels at w (each
 * rq[b]->fast), the pixels contiguous (xs = kk), in chunks of PACKED_XQ /
 * kk pixels (kk <= PACKED_XQ): up to PACKED_PAIRS_K inputs, the weights
 * made int16 pairs once a call, tiles of 3 pixels by 32 channels (6 by 16
 * for an odd last block); more, three pixels by 16 channels. Up to
 * PACKED_PAIRS_K inputs and npx * kk <= PACKED_XQ, every input is read
 * (widened once) before any output is written, so out may be x (in
 * place). */
enum { PACKED_XQ = 4096 };    /* int16 inputs a chunk, on the stack */
enum { PACKED_PAIRS_K = 256 }; /* inputs a row for the int16 pairs */
void tn__crt_conv_gemm_packed_avx2(const int8_t *w, int32_t kk,
                                   const int8_t *x, int32_t npx,
                                   const Requant *const *rq, int nb,
                                   int8_t *out, ptrdiff_t os);
/* The same with AVX-VNNI (x86/conv_avx2_s8.c) for the nb blocks of 16
 * channels at w (each rq[b]->vec: requantized exactly), the pixels
 * contiguous (xs = kk), kk <= 8192, six pixels at a time. */
void tn__crt_conv_gemm_packed_avxvnni(const int8_t *w, int32_t kk,
                                      const int8_t *x, int32_t npx,
                                      const Requant *const *rq, int nb,
                                      int8_t *out, ptrdiff_t os);
/* DW (tn__crt_conv_dw) for a block of 16 channels where rq->fast,
 * requantized into out (channels contiguous), the second pixel at
 * out + os2. */
void tn__crt_conv_dw_avx2(const DwWin *d, const Win *wn, int npx, int full,
                          const int8_t *x, ptrdiff_t o, ptrdiff_t xp,
                          const Requant *rq, int8_t *out, ptrdiff_t os2);
/* The AVX-512 VNNI forms of x86/conv_wide_s8.c, 64 channels a pass: a
 * depthwise layer (DW), or one of few input channels and a large kernel,
 * requantized into out (channels contiguous); in_place: out is the input
 * (a ROWS layer). 1 if it ran the layer, 0 (nothing written) where the
 * CPU, the layer or its multipliers are not for them. */
int tn__crt_conv_wide(const Conv *c, const TnCrtQuant *q, int32_t lo,
                      int32_t hi, const int32_t *bias, int8_t *out,
                      int in_place);
/* For the tests: 1 leaves each window's last kernel column out of the
 * column form of tn__crt_conv_wide's DW layer, 2 keeps the lanes its
 * requantization in float is unsure of, 0 puts them right again. */
void tn__crt_conv_wide_fault(int how);
/* The AVX2 form of the DW layer (x86/conv_avx2_s8.c), 32 channels a
 * pass, as tn__crt_conv_wide's (which calls it where the CPU or the cap
 * stops short of AVX-512 VNNI): 1 if it ran the layer, 0 (nothing
 * written) where the CPU, the layer or its multipliers are not for it. */
int tn__crt_conv_dw_avx2_layer(const Conv *c, const TnCrtQuant *q,
                               int32_t lo, int32_t hi, const int32_t *bias,
                               int8_t *out, int in_place);
/* The AVX2 form of the VNNI row form (x86/conv_avx2_s8.c; k packed for
 * AVX2, not for VNNI): npx pixels from the padded copy x of n bytes (as
 * it is, -io outside the input; every window's rows inside it), pixel i's
 * rows at x + i * xp + xo[r], requantized exactly (rq->vec) into out, os
 * apart: tiles of up to 6 pixels over the copy widened to int16. */
void tn__crt_conv_avx2_rows(const AvxBcast *k, const ptrdiff_t *xo,
                            int32_t io, const int8_t *x, int32_t n,
                            ptrdiff_t xp, int32_t npx, const Requant *rq,
                            int8_t *out, ptrdiff_t os);
/* For the tests: 1 leaves io * sum(w) out of channel 31 in the AVX2 DW
 * layer form, 2 each window's last row in the AVX2 row form, 3 the last
 * group of inputs in the AVX-VNNI GEMM form, 4 each window's last row in
 * the AVX-VNNI row form on a packed weight, 5 the last row of the AVX2 DW
 * layer form (not in place) the window of the row above, 6 that form's
 * float requantization keeping the lanes it is not certain of, 7 its
 * pairs of pixels of a pass of 8 channels the second reading the first's
 * inputs, 0 puts them right again. */
void tn__crt_conv_avx2_fault(int how);
#endif

#endif /* TVMNODE_CRT_CONV_S8_H_ */
