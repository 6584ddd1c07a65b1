/*
 * arm_dsp/dsp.h: the Cortex-M DSP extension's operations that the arm_dsp/
 * forms of the int8 kernels are written with; included by those files only,
 * under TN_CRT_HAVE_ARM_DSP (isa.h: the DSP extension of the Cortex-M4, M7,
 * M33 and M55, with its SIMD32 instructions, GNU C, little-endian, the byte
 * order the unpacking below assumes). SMLAD multiplies two int16 pairs and
 * adds both products to an int32 (wrapping, as the portable uint32 sums
 * do); SXTB16 sign-extends bytes 0 and 2 of a word into such a pair, and
 * SXTAB16 adds the result to a pair (an input or filter offset, for free).
 * With a rotation by 8 they take bytes 1 and 3, so a word of four int8 at k
 * .. k + 3 unpacks into the pairs (k, k + 2) and (k + 1, k + 3), and a sum
 * pairs its terms that way. The intrinsics come from <arm_acle.h>, a header
 * of the compiler (freestanding, like <stdint.h>); gcc 12 has no rotated
 * forms, no PKHBT/PKHTB and no SMMULR, and does not fold a rotation into
 * SXTB16, so those are one instruction of inline assembly each (not
 * volatile: the compiler still schedules and combines them).
 */
#ifndef TVMNODE_CRT_ARM_DSP_DSP_H_
#define TVMNODE_CRT_ARM_DSP_DSP_H_

#include <stdint.h>

#include "../isa.h"

#if TN_CRT_HAVE_ARM_DSP
#include <arm_acle.h>

/* Four int8 at any address, as a word (the M4 loads unaligned words). */
static inline uint32_t tn__crt_load4(const int8_t *p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}
/* One instruction of inline assembly, its result in a new register. */
#define TN__CRT_ASM1(insn, a) \
  __extension__({ uint32_t r_; __asm__(insn : "=r"(r_) : "r"(a)); r_; })
#define TN__CRT_ASM2(insn, a, b)                                  \
  __extension__({                                                \
    uint32_t r_;                                                 \
    __asm__(insn : "=r"(r_) : "r"(a), "r"(b));                   \
    r_;                                                          \
  })

/* SXTB16 v, ROR #8: bytes 1 and 3 of v as an int16 pair. */
static inline int32_t tn__crt_sxtb16_ror8(uint32_t v) {
  return (int32_t)TN__CRT_ASM1("sxtb16 %0, %1, ror #8", v);
}
/* SXTAB16 a, v, ROR #8: the pair a plus bytes 1 and 3 of v. */
static inline int32_t tn__crt_sxtab16_ror8(int32_t a, uint32_t v) {
  return (int32_t)TN__CRT_ASM2("sxtab16 %0, %1, %2, ror #8", a, v);
}
/* PKHBT: the low halfwords of lo and hi, as (lo, hi). */
static inline uint32_t tn__crt_pack_lo(uint32_t lo, uint32_t hi) {
  return TN__CRT_ASM2("pkhbt %0, %1, %2, lsl #16", lo, hi);
}
/* PKHTB: the high halfwords of lo and hi, as (lo, hi). */
static inline uint32_t tn__crt_pack_hi(uint32_t lo, uint32_t hi) {
  return TN__CRT_ASM2("pkhtb %0, %1, %2, asr #16", hi, lo);
}
/* The int16 pair (lo, hi) of two values that fit an int16. */
static inline int32_t tn__crt_pair(int32_t lo, int32_t hi) {
  return (int32_t)tn__crt_pack_lo((uint32_t)lo, (uint32_t)hi);
}
/*
 * Four sums, c[0 .. 3], each multiply-added with pairs: in assembly, because
 * gcc left to itself neither pairs the loads nor keeps these loops' live
 * values (four sums, pointers, operands) off the stack.
 *  - tn__crt_smlad8: c[j] += w[j] . a + w[4 + j] . b, a and b pairs.
 *  - tn__crt_smlad4_bytes: c[j] += u[j] . w[j], u[j] the pair of bytes
 *    of lo and hi that bytes-to-pairs unpacking gives channel j: bytes 0
 *    and 2 of lo, 1 and 3 of lo, 0 and 2 of hi, 1 and 3 of hi.
 */
#define TN__CRT_SUMS4(c, t0, t1)                                   \
  [c0] "+r"(c[0]), [c1] "+r"(c[1]), [c2] "+r"(c[2]), [c3] "+r"(c[3]), \
      [t0] "=&r"(t0), [t1] "=&r"(t1)
static inline __attribute__((always_inline)) void tn__crt_smlad8(
    int32_t *c, const int32_t *w, int32_t a, int32_t b) {
  int32_t t0, t1;
  __asm__("ldrd %[t0], %[t1], [%[w]]\n\t"
          "smlad %[c0], %[t0], %[a], %[c0]\n\t"
          "smlad %[c1], %[t1], %[a], %[c1]\n\t"
          "ldrd %[t0], %[t1], [%[w], #8]\n\t"
          "smlad %[c2], %[t0], %[a], %[c2]\n\t"
          "smlad %[c3], %[t1], %[a], %[c3]\n\t"
          "ldrd %[t0], %[t1], [%[w], #16]\n\t"
          "smlad %[c0], %[t0], %[b], %[c0]\n\t"
          "smlad %[c1], %[t1], %[b], %[c1]\n\t"
          "ldrd %[t0], %[t1], [%[w], #24]\n\t"
          "smlad %[c2], %[t0], %[b], %[c2]\n\t"
          "smlad %[c3], %[t1], %[b], %[c3]"
          : TN__CRT_SUMS4(c, t0, t1)
          : [w] "r"(w), [a] "r"(a), [b] "r"(b)
          : "memory");
}
static inline __attribute__((always_inline)) void tn__crt_smlad4_bytes(
    int32_t *c, uint32_t lo, uint32_t hi, const int32_t *w) {
  int32_t t0, t1;
  __asm__("sxtb16 %[t0], %[lo]\n\t"
          "ldr %[t1], [%[w]]\n\t"
          "smlad %[c0], %[t0], %[t1], %[c0]\n\t"
          "sxtb16 %[t0], %[lo], ror #8\n\t"
          "ldr %[t1], [%[w], #4]\n\t"
          "smlad %[c1], %[t0], %[t1], %[c1]\n\t"
          "sxtb16 %[t0], %[hi]\n\t"
          "ldr %[t1], [%[w], #8]\n\t"
          "smlad %[c2], %[t0], %[t1], %[c2]\n\t"
          "sxtb16 %[t0], %[hi], ror #8\n\t"
          "ldr %[t1], [%[w], #12]\n\t"
          "smlad %[c3], %[t0], %[t1], %[c3]"
          : TN__CRT_SUMS4(c, t0, t1)
          : [lo] "r"(lo), [hi] "r"(hi), [w] "r"(w)
          : "memory");
}

/* SMMULR: a * b / 2^32 rounded to nearest, ties up. */
static inline int32_t tn__crt_smmulr(int32_t a, int32_t b) {
  return (int32_t)TN__CRT_ASM2("smmulr %0, %1, %2", a, b);
}

/*
 * tn_crt_multiply_by_quantized_multiplier(x, m, -r) + off, clamped to
 * int8, in seven instructions, for m = 0 or m >= 2^30 (every multiplier
 * tn_crt_quantize_multiplier makes), r in [1, 20] and off in [-128, 127];
 * round is 2^(r-1) + off * 2^r. h = x * m / 2^31 rounded to nearest, ties
 * up (TFLite's SaturatingRoundingDoublingHighMul, which cannot saturate
 * for m >= 0), is SMMULR of 2x and m. RoundingDivideByPOT of h, plus off,
 * is (h - [h < 0] + round) >> r (exact: off * 2^r is a multiple of 2^r),
 * and SSAT clamps. Where 2x overflows (|x| >= 2^30), QADD saturates it:
 * with m >= 2^30 both the exact and the saturated h are then at least
 * 2^29 in magnitude, the shifted values at least 2^(29-r) >= 2^9, and
 * with |off| <= 128 both clamp to the same bound (m = 0 gives 0 either
 * way). |h| <= 2^30 and |round| < 2^28, so the sum does not overflow. The
 * arithmetic right shifts of negative values are GNU C's.
 */
static inline int32_t tn__crt_requant_s8(int32_t x, int32_t m, int32_t round,
                                         int32_t r) {
  const int32_t h = tn__crt_smmulr(__qadd(x, x), m);
  return __ssat((h + (h >> 31) + round) >> r, 8);
}
#endif /* TN_CRT_HAVE_ARM_DSP */

#endif /* TVMNODE_CRT_ARM_DSP_DSP_H_ */
