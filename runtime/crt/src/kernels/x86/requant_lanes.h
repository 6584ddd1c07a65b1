/*
 * x86/requant_lanes.h: TFLite's MultiplyByQuantizedMultiplier in vector
 * lanes, exactly as conv_s8.h's requant_exact does it for a multiplier
 * M >= 0 and a shift -r in [-31, 0], written once for the AVX2 and
 * AVX-512 widths and shared by the x86 forms that requantize in registers
 * (x86/dense_s8.c, x86/conv_avx2_s8.c): on |x| and the sign, h = (|x| *
 * M + 2^30 - [x < 0]) >> 31 in 64 bits (vpmuludq on the even lanes, then
 * on the odd ones), then +-((h + 2^(r-1)) >> r), the output offset added
 * with a wrapping add, clamped. A macro, so that each width's function
 * stays inline in its own target attribute. Private to runtime/crt's x86
 * forms; included under TN_CRT_HAVE_AVX2.
 */
#ifndef TVMNODE_CRT_X86_REQUANT_LANES_H_
#define TVMNODE_CRT_X86_REQUANT_LANES_H_

/* The body of a function of the vectors x (the sums), m (multipliers),
 * r (right shifts), off, lo and hi that returns the requantized lanes: V
 * the vector type, P the intrinsics' prefix, SI the bitwise operations'
 * suffix, SET64 the 64-bit broadcast, BLEND(even, odd) the lanes'
 * merge. */
#define REQUANT_LANES(V, P, SI, SET64, BLEND)                                 \
  const V s = P##srai_epi32(x, 31); /* all ones where x < 0 */              \
  const V ax = P##sub_epi32(P##xor_##SI(x, s), s);                          \
  const V neg = P##srli_epi32(x, 31);                                       \
  const V low = P##SET64(0xffffffff);                                       \
  const V r30 = P##SET64(INT64_C(1) << 30);                                 \
  const V he = P##srli_epi64(                                               \
      P##add_epi64(P##mul_epu32(ax, m),                                     \
                   P##sub_epi64(r30, P##and_##SI(neg, low))),               \
      31);                                                                  \
  const V ho = P##srli_epi64(                                               \
      P##add_epi64(P##mul_epu32(P##srli_epi64(ax, 32), P##srli_epi64(m, 32)), \
                   P##sub_epi64(r30, P##srli_epi64(neg, 32))),              \
      31);                                                                  \
  const V h = BLEND(he, P##slli_epi64(ho, 32));                             \
  const V half = P##srli_epi32(P##sllv_epi32(P##set1_epi32(1), r), 1);      \
  const V mg = P##srlv_epi32(P##add_epi32(h, half), r);                     \
  const V o = P##add_epi32(P##sub_epi32(P##xor_##SI(mg, s), s), off);       \
  return P##min_epi32(P##max_epi32(o, lo), hi)

#endif /* TVMNODE_CRT_X86_REQUANT_LANES_H_ */
