/*
 * x86/conv_f32.c: the AVX2 + FMA and AVX-512F forms of the float32
 * convolution's channels-last and depthwise paths (conv_f32.c). Both are
 * built of one tile: up to MR output pixels by one or two vectors of
 * output channels, held in registers over every tap of the window.
 *  - channels-last: each tap's weights (HWIO: the output channels
 *    contiguous) are loaded once and multiplied into every pixel of the
 *    tile, each pixel's input broadcast from memory;
 *  - depthwise (multiplier 1): each tap's weight vector is loaded once and
 *    multiplied into every pixel's input vector.
 * Pixels whose window lies wholly inside the input go row by row, whole
 * tiles a fixed step apart (clrows, dwrows; a 1x1 layer's contiguous
 * rows as one run; at AVX-512 an 8-channel depthwise row two pixels a
 * zmm, dwpair). The rest of such a row, and the pixels whose window
 * meets the padding, are addressed by a pointer each, so that they
 * gather into full tiles across output rows (a row of KWS's is 5 pixels
 * wide), the latter by kind over their in-bounds taps. A tail
 * of channels short of a vector is loaded and stored under a mask, so
 * nothing is read or written past the tensors.
 * Each output is the portable chain (the bias, then the in-bounds taps in
 * the portable order: kernel row, column, input channel) with the
 * multiply-adds fused: the AVX2 and AVX-512 forms agree bit for bit, and
 * differ from the portable path by the products' rounding only (within
 * 1e-6 of the output range in test_kernels_f32). The two forms are one
 * body (DEFINE_FORMS) over a few vector macros. Compiled with target
 * attributes and taken where tn__crt_avx2() says the CPU runs them
 * (isa.h asks for FMA beside AVX2); compiles to nothing where isa.h says
 * AVX2 forms are out.
 */
#include "conv_f32.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

/* What every tile of a call shares. */
typedef struct {
  ptrdiff_t xh, xw, xc; /* input steps: a kernel row, column, input channel */
  ptrdiff_t wh, ww, wc; /* weight steps: the same */
  int32_t cig;          /* input channels of a group */
  int merge;            /* a kernel row's columns and channels one run */
  int dw;               /* depthwise, else channels-last */
  int pair;             /* depthwise rows two pixels a zmm (dwpair) */
  int32_t ch;           /* channels (channels-last: of the block) */
  const float *w;       /* weights at tap 0 and the first channel */
  const float *bias;    /* at the first channel, or NULL */
  float lo, hi;         /* the clamp */
} Call;

/* Pixels whose windows meet the input alike (the same first in-bounds
 * tap and counts of in-bounds rows and columns), gathered until they fill
 * a tile: each one's input at its first in-bounds tap and its output. A
 * 3x3 window padded by one has 9 such kinds; a call holds up to GROUPS
 * at once and runs the oldest early when a tenth comes. */
#define GROUPS 9
#define MAXM 8
typedef struct {
  int32_t kh0, kw0, nkh, nkw;
  int m;
  const float *x[MAXM];
  float *o[MAXM];
} Group;

#define INLINE static inline __attribute__((always_inline))

static void dwpair(const TnCrtConv2d *p, const Call *c, const float *x0,
                   float *o0, int32_t ia, int32_t ib);

static int form_fault; /* tn__crt_conv_f32_fault */
void tn__crt_conv_f32_fault(int how) {
  __atomic_store_n(&form_fault, how, __ATOMIC_RELAXED);
}

/* The rows' forms (dwrows, clrows, dwpair): whether output row oh's
 * window has every kernel row, and then its input at column ia's window
 * (from x0, the input at the batch) in *xr. */
static inline int whole_row(const TnCrtConv2d *p, int32_t oh, int32_t ia,
                            const float *x0, const float **xr) {
  const int32_t bh = oh * p->stride_h - p->pad_top;
  int32_t kh0, kh1;
  conv_in_bounds(bh, p->dilation_h, p->in_h, p->k_h, &kh0, &kh1);
  *xr = x0 + (ptrdiff_t)bh * p->in_strides[1] +
        (ptrdiff_t)(ia * p->stride_w - p->pad_left) * p->in_strides[2];
  return kh1 - kh0 == p->k_h;
}

/* One form: SFX names it, ATTR is its target, MR its widest tile (pixels,
 * at most MAXM) and VW the floats of a vector. The vector macros (VEC,
 * MASK, V_*) are defined before each use. */
#define DEFINE_FORMS(SFX, ATTR, MR, VW)                                      \
  /* M pixels by NV vectors of channels from c0 (rem of them left; full:   \
   * NV whole vectors, else under masks): the bias, then nkh kernel rows   \
   * of nkw columns from each pixel's first in-bounds tap (w: its          \
   * weights), clamped and stored. Pixel j's input (at that tap) is xs[j], \
   * its output os[j]; or, where xs and os are NULL, xr + j * ps and       \
   * ob + j * ostep (clrows_SFX's fixed steps). */                         \
  ATTR INLINE void tile_##SFX(const Call *c, const float *const *xs,       \
                              const float *xr, ptrdiff_t ps,               \
                              float *const *os, float *ob, ptrdiff_t ostep,\
                              int32_t c0, int32_t rem,                     \
                              const float *w, int32_t nkh, int32_t nkw,    \
                              int dw, int M, int NV, int full) {           \
    const MASK m0 = V_MASK(rem < VW ? rem : VW),                           \
               m1 = V_MASK(rem < VW ? 0 : rem < 2 * VW ? rem - VW : VW);   \
    const VEC lo = V_SET1(c->lo), hi = V_SET1(c->hi), z = V_ZERO();        \
    const float *bias = c->bias ? c->bias + c0 : NULL;                     \
    const ptrdiff_t xo = dw ? c0 : 0;                                      \
    w += c0;                                                               \
    const VEC b0 = !bias ? z : full ? V_LOAD(bias) : V_LOADM(bias, m0);    \
    const VEC b1 = NV < 2 || !bias ? z : full ? V_LOAD(bias + VW)          \
                                              : V_LOADM(bias + VW, m1);    \
    VEC a0[MR], a1[MR];                                                    \
    _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) a0[j] = b0,        \
                                                        a1[j] = b1;        \
    /* channels-last: runs of cig taps, or of nkw * cig when merged */     \
    const int32_t runs = dw || !c->merge ? nkw : nkw > 0;                  \
    const int32_t len = dw ? 1 : c->merge ? nkw * c->cig : c->cig;         \
    for (int32_t kh = 0; kh < nkh; kh++)                                   \
      for (int32_t r = 0; r < runs; r++) {                                 \
        ptrdiff_t o = xo + kh * c->xh + r * c->xw;                         \
        const float *wp = w + kh * c->wh + r * c->ww;                      \
        for (int32_t k = 0; k < len; k++, o += c->xc, wp += c->wc) {       \
          const VEC w0 = full ? V_LOAD(wp) : V_LOADM(wp, m0);              \
          const VEC w1 = NV < 2 ? z : full ? V_LOAD(wp + VW)               \
                                           : V_LOADM(wp + VW, m1);         \
          _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {            \
            const float *x = (xs ? xs[j] : xr + j * ps) + o;               \
            if (dw) {                                                      \
              a0[j] = V_FMA(full ? V_LOAD(x) : V_LOADM(x, m0), w0, a0[j]); \
              if (NV > 1)                                                  \
                a1[j] = V_FMA(full ? V_LOAD(x + VW) : V_LOADM(x + VW, m1), \
                              w1, a1[j]);                                  \
            } else {                                                       \
              const VEC xb = V_BCAST(x);                                   \
              a0[j] = V_FMA(xb, w0, a0[j]);                                \
              if (NV > 1) a1[j] = V_FMA(xb, w1, a1[j]);                    \
            }                                                              \
          }                                                                \
        }                                                                  \
      }                                                                    \
    /* max(lo, v) then min(hi, v) keep a NaN as the portable clamp does */ \
    _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {                  \
      float *out = (os ? os[j] : ob + j * ostep) + c0;                     \
      const VEC v0 = V_MIN(hi, V_MAX(lo, a0[j]));                          \
      if (full) V_STORE(out, v0); else V_STOREM(out, m0, v0);              \
      if (NV > 1) {                                                        \
        const VEC v1 = V_MIN(hi, V_MAX(lo, a1[j]));                        \
        if (full) V_STORE(out + VW, v1); else V_STOREM(out + VW, m1, v1);  \
      }                                                                    \
    }                                                                      \
  }                                                                        \
                                                                           \
  /* a group's pixels, every block of channels, in tiles of MR, 4, 2 and 1 \
   * pixels: tile_SFX with its shape made constants, one copy each */      \
  ATTR __attribute__((noinline)) static void run_##SFX(const Call *c,      \
                                                       const Group *g) {   \
    const float *w = c->w + g->kh0 * c->wh + g->kw0 * c->ww;               \
    for (int32_t c0 = 0; c0 < c->ch; c0 += 2 * VW) {                       \
      const int32_t rem = c->ch - c0;                                      \
      const int shape = (rem > VW) * 2 + (rem >= 2 * VW || rem == VW);     \
      for (int j = 0, n; j < g->m; j += n) {                               \
        n = g->m - j >= MR ? MR : g->m - j >= 4 ? 4 : g->m - j >= 2 ? 2 : 1; \
        const float *const *xs = g->x + j;                                 \
        float *const *os = g->o + j;                                       \
        switch (shape * 4 + (n == MR ? 0 : n == 4 ? 1 : n == 2 ? 2 : 3)) { \
          SHAPE_CASES(SHAPES, SFX, MR)                                     \
        }                                                                  \
      }                                                                    \
    }                                                                      \
  }                                                                        \
                                                                           \
  /* channels-last whole windows (columns [ia, ib) of rows with every     \
   * kernel row) row by row, tiles of MR (4, 2, 1) pixels a fixed step     \
   * apart, as dwrows_SFX; one: a 1x1 layer whose rows are one run (stride \
   * 1, no padding, rows contiguous), all its pixels one row */            \
  ATTR __attribute__((noinline)) static void clrows_##SFX(                 \
      const TnCrtConv2d *p, const Call *c, const float *x0, float *o0,     \
      int32_t ia, int32_t ib, int one) {                                   \
    /* fault 3: the pixel step one float short (NHWC: a channel) */       \
    const ptrdiff_t ps = (ptrdiff_t)p->stride_w * p->in_strides[2] -       \
        (__atomic_load_n(&form_fault, __ATOMIC_RELAXED) == 3 &&            \
         p->in_strides[3] == 1);                                           \
    const ptrdiff_t os = p->out_strides[2];                                \
    const int32_t rem = c->ch, nkh = p->k_h, nkw = p->k_w;                 \
    const int shape = (rem > VW) * 2 + (rem >= 2 * VW || rem == VW);       \
    const int32_t width = one ? p->out_h * p->out_w : ib - ia;             \
    for (int32_t oh = 0; oh < (one ? 1 : p->out_h); oh++) {                \
      const float *xr;                                                     \
      if (!whole_row(p, oh, ia, x0, &xr)) continue;                        \
      float *orow = o0 + oh * p->out_strides[1] + ia * os;                 \
      for (int32_t i = 0, n; i < width; i += n) {                          \
        n = width - i >= MR ? MR : width - i >= 4 ? 4 : width - i >= 2 ? 2 : 1; \
        const float *x = xr + i * ps;                                      \
        float *o = orow + i * os;                                          \
        switch (shape * 4 + (n == MR ? 0 : n == 4 ? 1 : n == 2 ? 2 : 3)) { \
          SHAPE_CASES(CLSHAPES, SFX, MR)                                   \
        }                                                                  \
      }                                                                    \
    }                                                                      \
  }                                                                        \
                                                                           \
  /* a pixel into the group of its kind, run when it fills a tile */       \
  ATTR static void add_##SFX(const Call *c, Group *gs, int *ng,            \
                             const float *x, float *o, int32_t kh0,        \
                             int32_t kw0, int32_t nkh, int32_t nkw) {      \
    int i = 0;                                                             \
    while (i < *ng && (gs[i].kh0 != kh0 || gs[i].kw0 != kw0 ||             \
                       gs[i].nkh != nkh || gs[i].nkw != nkw))              \
      i++;                                                                 \
    if (i == GROUPS) { /* full: the last one goes now */                   \
      i = GROUPS - 1;                                                      \
      if (gs[i].m) run_##SFX(c, &gs[i]);                                   \
      gs[i].m = 0;                                                         \
    } else if (i == *ng) {                                                 \
      ++*ng, gs[i].m = 0;                                                  \
    }                                                                      \
    Group *g = &gs[i];                                                     \
    g->kh0 = kh0, g->kw0 = kw0, g->nkh = nkh, g->nkw = nkw;                \
    g->x[g->m] = x, g->o[g->m] = o;                                        \
    if (++g->m == MR) run_##SFX(c, g), g->m = 0;                           \
  }                                                                        \
                                                                           \
  /* every output pixel of batch n through add_SFX; x0: the input at the   \
   * batch (and group), o0: the output at the batch (and channel block) */ \
  ATTR static void pixels_##SFX(const TnCrtConv2d *p, const Call *c,       \
                                const float *x0, float *o0) {              \
    const ptrdiff_t is1 = p->in_strides[1], is2 = p->in_strides[2];        \
    const int32_t sw = p->stride_w, pl = p->pad_left;                      \
    Group gs[GROUPS], in;                                                  \
    int ng = 0;                                                            \
    in.kh0 = 0, in.kw0 = 0, in.nkh = p->k_h, in.nkw = p->k_w, in.m = 0;    \
    /* columns [ia, ib): windows wholly inside the input's columns, whose  \
     * pixels in a row of whole windows go straight to the tile `in` */    \
    const int32_t ia = pl / sw + (pl % sw != 0);                           \
    const int32_t last = p->in_w - 1 - (p->k_w - 1) * p->dilation_w + pl;  \
    const int32_t ib = last < 0 ? 0 : last / sw + 1 < p->out_w            \
                                           ? last / sw + 1 : p->out_w;     \
    /* channels-last rows of whole windows by rows where they are wide     \
     * enough to fill tiles, or where a 1x1 layer's rows make one run */    \
    const int one = p->k_h == 1 && p->k_w == 1 && ia == 0 &&               \
                    ib == p->out_w && p->pad_top == 0 &&                   \
                    p->stride_h == 1 && p->stride_w == 1 &&                \
                    p->in_w == p->out_w && p->out_h <= p->in_h &&          \
                    is1 == p->in_w * is2 &&                                \
                    p->out_strides[1] == p->out_w * p->out_strides[2];     \
    const int rows = !c->dw && (one || ib - ia >= MR);                     \
    /* clrows_SFX takes whole tiles of MR of each row (all of a 1x1 run); \
     * the rest of a row, [ir, ib), goes to the tile `in` across rows */   \
    const int32_t ir = !rows || one ? ib : ia + (ib - ia) / MR * MR;       \
    if (c->dw && c->pair) dwpair(p, c, x0, o0, ia, ib);                    \
    else if (c->dw) dwrows_##SFX(p, c, x0, o0, ia, ib);                    \
    else if (rows) clrows_##SFX(p, c, x0, o0, ia, ir, one);                \
    for (int32_t oh = 0; oh < p->out_h; oh++) {                            \
      const int32_t bh = oh * p->stride_h - p->pad_top;                    \
      int32_t kh0, kh1;                                                    \
      conv_in_bounds(bh, p->dilation_h, p->in_h, p->k_h, &kh0, &kh1);      \
      const float *xr = x0 + (ptrdiff_t)(bh + kh0 * p->dilation_h) * is1;  \
      float *orow = o0 + oh * p->out_strides[1];                           \
      for (int32_t ow = 0; ow < p->out_w; ow++) {                          \
        const int32_t bw = ow * sw - pl;                                   \
        if (kh1 - kh0 == p->k_h && ow >= ia && ow < ib) {                  \
          if (c->dw || (rows && ow < ir)) { /* dw/clrows_SFX's, and the  \
                                              * rest of them too */       \
            ow = (c->dw ? ib : ir) - 1;                                    \
            continue;                                                      \
          }                                                                \
          in.x[in.m] = xr + (ptrdiff_t)bw * is2;                           \
          in.o[in.m] = orow + ow * p->out_strides[2];                      \
          if (++in.m == MR) run_##SFX(c, &in), in.m = 0;                   \
          continue;                                                        \
        }                                                                  \
        int32_t kw0, kw1;                                                  \
        conv_in_bounds(bw, p->dilation_w, p->in_w, p->k_w, &kw0, &kw1);    \
        const ptrdiff_t xw = (ptrdiff_t)(bw + kw0 * p->dilation_w) * is2;  \
        add_##SFX(c, gs, &ng, xr + xw, orow + ow * p->out_strides[2], kh0, \
                  kw0, kh1 - kh0, kw1 - kw0);                              \
      }                                                                    \
    }                                                                      \
    if (in.m) run_##SFX(c, &in);                                           \
    for (int i = 0; i < ng; i++)                                           \
      if (gs[i].m) run_##SFX(c, &gs[i]);                                   \
  }                                                                        \
                                                                           \
  ATTR static void conv_##SFX(const TnCrtConv2d *p, const float *in,       \
                              const float *w, const float *bias, float lo, \
                              float hi, float *out, int dw, int pair) { \
    const int32_t cig = p->in_c / p->groups, cog = p->out_c / p->groups;   \
    const ptrdiff_t is3 = p->in_strides[3], ws2 = p->w_strides[2];         \
    Call c = {p->dilation_h * p->in_strides[1],                            \
              p->dilation_w * p->in_strides[2],                            \
              dw ? 1 : is3,                                                \
              p->w_strides[0],                                             \
              p->w_strides[1],                                             \
              dw ? 1 : ws2,                                                \
              cig,                                                         \
              !dw && p->dilation_w * p->in_strides[2] == cig * is3 &&      \
                  p->w_strides[1] == cig * ws2,                            \
              dw,                                                          \
              pair,                                                        \
              p->out_c,                                                    \
              w,                                                           \
              bias,                                                        \
              lo,                                                          \
              hi};                                                         \
    for (int32_t n = 0; n < p->batch; n++) {                               \
      const float *xn = in + n * (ptrdiff_t)p->in_strides[0];              \
      float *on = out + n * (ptrdiff_t)p->out_strides[0];                  \
      if (dw) {                                                            \
        pixels_##SFX(p, &c, xn, on);                                       \
        continue;                                                          \
      }                                                                    \
      /* channels-last: a block of channels over every pixel, so that its  \
       * weights stay in cache */                                          \
      for (int32_t g = 0; g < p->groups; g++)                              \
        for (int32_t co0 = 0; co0 < cog; co0 += 2 * VW) {                  \
          const int32_t cb = g * cog + co0;                                \
          c.ch = cog - co0 < 2 * VW ? cog - co0 : 2 * VW;                  \
          c.w = w + cb, c.bias = bias ? bias + cb : NULL;                  \
          pixels_##SFX(p, &c, xn + (ptrdiff_t)g * cig * is3, on + cb);     \
        }                                                                  \
    }                                                                      \
  }

/* The depthwise path's whole windows (rows whose window has every kernel
 * row, columns [ia, ib)): row by row, one vector of channels at a time,
 * tiles of MR (4, 2, 1) pixels a fixed step apart, so a tap's input of
 * each pixel is one load at a constant offset (no table of pointers, no
 * walk pixel by pixel). Each output is the same chain as tile_SFX's (the
 * bias, then the taps by kernel row and column, fused): the same bits. */
#define DEFINE_DW(SFX, ATTR, MR, VW)                                         \
  ATTR INLINE void dwtile_##SFX(const Call *c, const float *x,             \
                                ptrdiff_t ps, float *o, ptrdiff_t os,      \
                                int32_t c0, int32_t rem, int32_t nkh,      \
                                int32_t nkw, int M, int full) {            \
    const MASK m0 = V_MASK(rem < VW ? rem : VW);                           \
    const VEC lo = V_SET1(c->lo), hi = V_SET1(c->hi);                      \
    const VEC b0 = !c->bias ? V_ZERO() : full ? V_LOAD(c->bias + c0)       \
                                              : V_LOADM(c->bias + c0, m0); \
    VEC a[MR];                                                             \
    _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) a[j] = b0;         \
    for (int32_t kh = 0; kh < nkh; kh++)                                   \
      for (int32_t kw = 0; kw < nkw; kw++) {                               \
        const float *wp = c->w + c0 + kh * c->wh + kw * c->ww;             \
        const float *xp = x + c0 + kh * c->xh + kw * c->xw;                \
        const VEC wv = full ? V_LOAD(wp) : V_LOADM(wp, m0);                \
        _Pragma("GCC unroll 8") for (int j = 0; j < M; j++)                \
          a[j] = V_FMA(full ? V_LOAD(xp + j * ps)                          \
                            : V_LOADM(xp + j * ps, m0), wv, a[j]);         \
      }                                                                    \
    _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {                  \
      const VEC v = V_MIN(hi, V_MAX(lo, a[j]));                            \
      if (full) V_STORE(o + j * os + c0, v);                               \
      else V_STOREM(o + j * os + c0, m0, v);                               \
    }                                                                      \
  }                                                                        \
                                                                           \
  ATTR __attribute__((noinline)) static void dwrows_##SFX(                 \
      const TnCrtConv2d *p, const Call *c, const float *x0, float *o0,     \
      int32_t ia, int32_t ib) {                                            \
    const ptrdiff_t ps = (ptrdiff_t)p->stride_w * p->in_strides[2];        \
    const ptrdiff_t os = p->out_strides[2];                                \
    for (int32_t oh = 0; oh < p->out_h; oh++) {                            \
      const float *xr;                                                     \
      if (!whole_row(p, oh, ia, x0, &xr)) continue;                        \
      float *orow = o0 + oh * p->out_strides[1] + ia * os;                 \
      for (int32_t c0 = 0; c0 < c->ch; c0 += VW) {                         \
        const int32_t rem = c->ch - c0;                                    \
        const int full = rem >= VW;                                        \
        for (int32_t ow = ia, n; ow < ib; ow += n) {                       \
          n = ib - ow >= MR ? MR : ib - ow >= 4 ? 4 : ib - ow >= 2 ? 2 : 1; \
          const float *x = xr + (ow - ia) * ps;                            \
          float *o = orow + (ow - ia) * os;                                \
          const int32_t kh = p->k_h, kw = p->k_w;                          \
          switch ((n == MR ? 0 : n == 4 ? 1 : n == 2 ? 2 : 3) + 4 * full) { \
            case 0: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, MR, 0); break; \
            case 1: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 4, 0); break; \
            case 2: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 2, 0); break; \
            case 3: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 1, 0); break; \
            case 4: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, MR, 1); break; \
            case 5: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 4, 1); break; \
            case 6: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 2, 1); break; \
            default: dwtile_##SFX(c, x, ps, o, os, c0, rem, kh, kw, 1, 1); break; \
          }                                                                \
        }                                                                  \
      }                                                                    \
    }                                                                      \
  }

/* The 16 cases of a switch on a tile's shape (vectors of channels NV,
 * full F, pixels M), each S(SFX, K, NV, F, M). */
#define SHAPE_CASES(S, SFX, MR)                                              \
  S(SFX, 0, 1, 0, MR) S(SFX, 1, 1, 0, 4) S(SFX, 2, 1, 0, 2)                  \
  S(SFX, 3, 1, 0, 1) S(SFX, 4, 1, 1, MR) S(SFX, 5, 1, 1, 4)                  \
  S(SFX, 6, 1, 1, 2) S(SFX, 7, 1, 1, 1) S(SFX, 8, 2, 0, MR)                  \
  S(SFX, 9, 2, 0, 4) S(SFX, 10, 2, 0, 2) S(SFX, 11, 2, 0, 1)                 \
  S(SFX, 12, 2, 1, MR) S(SFX, 13, 2, 1, 4) S(SFX, 14, 2, 1, 2)               \
  S(SFX, 15, 2, 1, 1)

/* case K of run_SFX's switch: a tile of M pixels by NV vectors, full or
 * not, with the depthwise and channels-last bodies each a constant */
#define SHAPES(SFX, K, NV, F, M)                                             \
  case K:                                                                    \
    if (c->dw)                                                               \
      tile_##SFX(c, xs, NULL, 0, os, NULL, 0, c0, rem, w, g->nkh, g->nkw, 1, \
                 M, NV, F);                                                  \
    else                                                                     \
      tile_##SFX(c, xs, NULL, 0, os, NULL, 0, c0, rem, w, g->nkh, g->nkw, 0, \
                 M, NV, F);                                                  \
    break;

/* case K of clrows_SFX's switch, as SHAPES */
#define CLSHAPES(SFX, K, NV, F, M)                                           \
  case K:                                                                    \
    tile_##SFX(c, NULL, x, ps, NULL, o, os, 0, rem, c->w, nkh, nkw, 0, M, NV, \
               F);                                                           \
    break;

/* ---- AVX2 + FMA: 8 floats a vector, tiles of 6 pixels by 16 channels
 * (12 accumulators of the 16 registers) ---------------------------------- */

#define VEC __m256
#define MASK __m256i
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(v) _mm256_set1_ps(v)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_LOADM(p, m) _mm256_maskload_ps(p, m)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
#define V_STOREM(p, m, v) _mm256_maskstore_ps(p, m, v)
#define V_BCAST(p) _mm256_broadcast_ss(p)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
/* max(lo, v) then min(hi, v) keep a NaN v as the portable clamp does */
#define V_MAX(a, b) _mm256_max_ps(a, b)
#define V_MIN(a, b) _mm256_min_ps(a, b)
#define V_MASK(r)                                                        \
  _mm256_cmpgt_epi32(_mm256_set1_epi32(r),                               \
                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))

DEFINE_DW(avx2, __attribute__((target("avx2,fma"))), 6, 8)
DEFINE_FORMS(avx2, __attribute__((target("avx2,fma"))), 6, 8)

#undef VEC
#undef MASK
#undef V_ZERO
#undef V_SET1
#undef V_LOAD
#undef V_LOADM
#undef V_STORE
#undef V_STOREM
#undef V_BCAST
#undef V_FMA
#undef V_MAX
#undef V_MIN
#undef V_MASK

/* ---- AVX-512F: 16 floats a vector, tiles of 8 pixels by 32 channels
 * (16 accumulators of the 32 registers) ---------------------------------- */

#define VEC __m512
#define MASK __mmask16
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(v) _mm512_set1_ps(v)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_LOADM(p, m) _mm512_maskz_loadu_ps(m, p)
#define V_STORE(p, v) _mm512_storeu_ps(p, v)
#define V_STOREM(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define V_BCAST(p) _mm512_set1_ps(*(p))
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_MAX(a, b) _mm512_max_ps(a, b)
#define V_MIN(a, b) _mm512_min_ps(a, b)
#define V_MASK(r) ((__mmask16)((1u << (r)) - 1u))

DEFINE_DW(avx512, __attribute__((target("avx512f"))), 8, 16)
DEFINE_FORMS(avx512, __attribute__((target("avx512f"))), 8, 16)

/* ---- AVX-512F: the depthwise rows of 8 channels at stride 1, two pixels
 * a vector. Neighbouring pixels' inputs and outputs lie 8 floats apart,
 * so one zmm load is a tap's input for two pixels, and the tap's weights
 * go in both halves: a vector filled where the AVX2 form's half fills
 * one (VWW's 48x48x8 layer). A tile is up to PAIRS pairs; an odd last
 * pixel goes under a mask. The same chain per output as dwtile_SFX's, so
 * the same bits. ---------------------------------------------------------- */

#define PAIRS 8
#define ATTR512 __attribute__((target("avx512f")))


/* 8 floats at p in both halves */
ATTR512 INLINE __m512 twice(const float *p) {
  return _mm512_castpd_ps(
      _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(const void *)p)));
}

/* M pairs from x (output o); the last pair's lanes under `last` (all
 * lanes where full) */
ATTR512 INLINE void pairtile(const Call *c, const float *x, float *o,
                             int32_t nkh, int32_t nkw, int M, int full,
                             __mmask16 last) {
  const __m512 lo = _mm512_set1_ps(c->lo), hi = _mm512_set1_ps(c->hi);
  const __m512 b = c->bias ? twice(c->bias) : _mm512_setzero_ps();
  __m512 a[PAIRS];
  _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) a[j] = b;
  for (int32_t kh = 0; kh < nkh; kh++)
    for (int32_t kw = 0; kw < nkw; kw++) {
      const float *xp = x + kh * c->xh + kw * c->xw;
      const __m512 wv = twice(c->w + kh * c->wh + kw * c->ww);
      _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {
        const __m512 v = full || j < M - 1
                             ? _mm512_loadu_ps(xp + 16 * j)
                             : _mm512_maskz_loadu_ps(last, xp + 16 * j);
        a[j] = _mm512_fmadd_ps(v, wv, a[j]);
      }
    }
  _Pragma("GCC unroll 8") for (int j = 0; j < M; j++) {
    const __m512 v = _mm512_min_ps(hi, _mm512_max_ps(lo, a[j]));
    if (full || j < M - 1) _mm512_storeu_ps(o + 16 * j, v);
    else _mm512_mask_storeu_ps(o + 16 * j, last, v);
  }
}

/* dwrows_SFX's rows and columns [ia, ib), in pairs */
ATTR512 __attribute__((noinline)) static void dwpair(
    const TnCrtConv2d *p, const Call *c, const float *x0, float *o0,
    int32_t ia, int32_t ib) {
  const int fault = __atomic_load_n(&form_fault, __ATOMIC_RELAXED);
  /* fault 1: an odd last pixel's mask a lane short; 2: full tiles of
   * PAIRS drop their last kernel column */
  const __mmask16 odd = fault == 1 ? 0x7f : 0xff;
  const int32_t kh = p->k_h, kw = p->k_w, kwf = kw - (fault == 2);
  if (ib <= ia) return; /* no column of whole windows */
  for (int32_t oh = 0; oh < p->out_h; oh++) {
    const float *x;
    if (!whole_row(p, oh, ia, x0, &x)) continue;
    float *o = o0 + oh * p->out_strides[1] + ia * 8;
    int32_t n = ib - ia;
    for (; n >= 2 * PAIRS; n -= 2 * PAIRS, x += 16 * PAIRS, o += 16 * PAIRS)
      pairtile(c, x, o, kh, kwf, PAIRS, 1, 0xffff);
    if (n >= 8)
      pairtile(c, x, o, kh, kw, 4, 1, 0xffff), n -= 8, x += 64, o += 64;
    if (n >= 4)
      pairtile(c, x, o, kh, kw, 2, 1, 0xffff), n -= 4, x += 32, o += 32;
    if (n >= 2)
      pairtile(c, x, o, kh, kw, 1, 1, 0xffff), n -= 2, x += 16, o += 16;
    if (n) pairtile(c, x, o, kh, kw, 1, 0, odd);
  }
}

void tn__crt_conv_f32_x86(const TnCrtConv2d *p, const float *in,
                          const float *w, const float *bias, float lo,
                          float hi, float *out, int depthwise) {
  /* 8 channels or fewer fill an AVX2 vector and half an AVX-512 one: the
   * AVX2 form, which gives the same bits, runs them faster (bench_exec,
   * the mean of two runs: VWW's first layer, 3 -> 8 channels, 14.2
   * against 11.6 GMAC/s; its depthwise layer of 8, 7.5 against 5.9),
   * except the depthwise rows of exactly 8 at stride 1 where the level
   * has AVX-512: two pixels a zmm (dwpair). */
  const int32_t ch = depthwise ? p->in_c : p->out_c / p->groups;
  const int top = (tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512BW;
  if (top && ch > 8)
    conv_avx512(p, in, w, bias, lo, hi, out, depthwise, 0);
  else
    conv_avx2(p, in, w, bias, lo, hi, out, depthwise,
              top && depthwise && ch == 8 &&
                  (ptrdiff_t)p->stride_w * p->in_strides[2] == 8 &&
                  p->out_strides[2] == 8);
}
#else
typedef int tn__crt_unused_x86_conv_f32; /* no AVX2 forms */
#endif
