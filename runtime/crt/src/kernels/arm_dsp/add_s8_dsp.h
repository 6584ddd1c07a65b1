/*
 * arm_dsp/add_s8_dsp.h: the Cortex-M DSP form of the int8 ADD's table loop
 * (quant.c: add_lut_run), four elements a turn. Each operand's scaled
 * input is looked up (quant.c builds the two tables of 256 int32 once a
 * call), so what is left an element is the output's requantization:
 * SMMLAR adds the output offset and its rounding term for free, one SUB
 * takes the negative values' tie step, one ASR and SSAT finish it (quant.c:
 * lut_out says why that is TFLite's double rounding, bit for bit). The
 * int8 inputs are read byte by byte (LDRB then the table's LDR: loads in a
 * row take one cycle each on the M4, where a word load would need an
 * extraction per byte); the four results are packed into a word, clamped
 * to the activation's range with SSUB8 / SEL (a byte min and max) and
 * stored at once. Included by quant.c only, under TN_CRT_HAVE_ARM_DSP.
 */
#ifndef TVMNODE_CRT_ARM_DSP_ADD_S8_DSP_H_
#define TVMNODE_CRT_ARM_DSP_ADD_S8_DSP_H_

#include <stdint.h>

#include "dsp.h"

#if TN_CRT_HAVE_ARM_DSP

/* SMMLAR: c + a * b / 2^32 rounded to nearest, ties up (one instruction:
 * the high word of c * 2^32 + a * b + 2^31). */
static inline int32_t tn__crt_smmlar(int32_t a, int32_t b, int32_t c) {
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}

/* Each byte of v (int8) clamped to the bytes of lo4 and hi4: SSUB8 sets
 * the GE flags SEL reads, so each pair is one statement. */
static inline uint32_t dsp_add_clamp4(uint32_t v, uint32_t lo4, uint32_t hi4) {
  uint32_t t;
  __asm__("ssub8 %[t], %[v], %[lo]\n\t"
          "sel %[v], %[v], %[lo]\n\t"
          "ssub8 %[t], %[v], %[hi]\n\t"
          "sel %[v], %[hi], %[v]"
          : [v] "+r"(v), [t] "=&r"(t)
          : [lo] "r"(lo4), [hi] "r"(hi4)
          : "cc");
  return v;
}

/* One element's output before the clamp: lut_out's arithmetic, SSAT to
 * int8 (the activation's range lies inside it). */
#define TN__CRT_ADD_OUT(s) \
  __ssat((tn__crt_smmlar((s), om, c) - (int32_t)((uint32_t)(s) >> 31)) >> e, 8)

/* BFI: the low byte of x into byte pos / 8 of w (gcc makes a mask, a
 * shift and an OR of it). */
#define TN__CRT_BFI8(w, x, pos) \
  __asm__("bfi %0, %1, #" #pos ", #8" : "+r"(w) : "r"(x))

/* The first n - n % 4 elements of add_lut_run's loop (t: the lhs table,
 * then the rhs one); returns how many it did. */
static int32_t dsp_add_lut4(const int32_t *t, int32_t om, int32_t c,
                            int32_t e, int32_t lo, int32_t hi,
                            const int8_t *l, const int8_t *r, int32_t n,
                            int8_t *out) {
  const int32_t *tr = t + 256;
  const uint32_t lo4 = (uint8_t)lo * 0x01010101u;
  const uint32_t hi4 = (uint8_t)hi * 0x01010101u;
  const int8_t *const end = l + (n & ~3);
  while (l < end) {
    const int32_t s0 = t[(uint8_t)l[0]] + tr[(uint8_t)r[0]];
    const int32_t s1 = t[(uint8_t)l[1]] + tr[(uint8_t)r[1]];
    const int32_t s2 = t[(uint8_t)l[2]] + tr[(uint8_t)r[2]];
    const int32_t s3 = t[(uint8_t)l[3]] + tr[(uint8_t)r[3]];
    l += 4, r += 4;
    uint32_t v = (uint32_t)TN__CRT_ADD_OUT(s0);
    TN__CRT_BFI8(v, TN__CRT_ADD_OUT(s1), 8);
    TN__CRT_BFI8(v, TN__CRT_ADD_OUT(s2), 16);
    TN__CRT_BFI8(v, TN__CRT_ADD_OUT(s3), 24);
    const uint32_t w = dsp_add_clamp4(v, lo4, hi4);
    __builtin_memcpy(out, &w, 4);
    out += 4;
  }
  return n & ~3;
}
#undef TN__CRT_ADD_OUT
#undef TN__CRT_BFI8

#endif /* TN_CRT_HAVE_ARM_DSP */

#endif /* TVMNODE_CRT_ARM_DSP_ADD_S8_DSP_H_ */
