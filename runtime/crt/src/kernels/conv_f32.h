/*
 * conv_f32.h: what the float32 convolution (conv_f32.c, portable C) shares
 * with its x86 forms (x86/conv_f32.c): the channels-last and depthwise
 * paths it hands over where isa.h compiles AVX2 forms in and
 * tn__crt_avx2() says the CPU runs them. Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_CONV_F32_H_
#define TVMNODE_CRT_CONV_F32_H_

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

/* Indices t in [*lo, *hi) (with *hi <= limit) for which base + t * step
 * lies in [0, size). Only non-negative numerators are divided, and the
 * entry checks keep every operand within int32. */
static inline void conv_in_bounds(int32_t base, int32_t step, int32_t size,
                                  int32_t limit, int32_t *lo, int32_t *hi) {
  int32_t l, h;
  if (step == 1) { /* the usual case, and a division costs tens of cycles */
    l = base >= 0 ? 0 : -base;
    h = size - base < 0 ? 0 : size - base;
  } else {
    l = base >= 0 ? 0 : (-base - 1) / step + 1;
    h = size - 1 - base < 0 ? 0 : (size - 1 - base) / step + 1;
  }
  if (h > limit) h = limit;
  if (l > h) l = h;
  *lo = l, *hi = h;
}

#if TN_CRT_HAVE_AVX2
/* conv_f32.c's channels-last path (weights and output with unit channel
 * stride, any input strides, any groups) or, with depthwise set, its
 * depthwise path (also unit input channel stride, multiplier 1), for an
 * already checked p: the AVX-512F form where the level is
 * TN_CRT_ISA_AVX512BW or more, else the AVX2 + FMA one. Each output is the portable one's chain (the bias, then
 * every in-bounds tap in the same order) with each multiply-add fused, so
 * the two forms agree bit for bit and differ from the portable path by
 * that rounding only. */
void tn__crt_conv_f32_x86(const TnCrtConv2d *p, const float *in,
                          const float *w, const float *bias, float lo,
                          float hi, float *out, int depthwise);

/* For the tests: breaks the forms on purpose: 1 stores an odd last
 * pixel's channels one short and 2 leaves the last kernel column out of
 * the full tiles in the AVX-512 depthwise rows of 8 channels (two pixels
 * a vector); 3 steps one float short from pixel to pixel in the channels-last
 * rows of an NHWC input (both levels); 0 puts them right again. */
void tn__crt_conv_f32_fault(int how);
#endif

#endif /* TVMNODE_CRT_CONV_F32_H_ */
