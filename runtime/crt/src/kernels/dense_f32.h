/*
 * dense_f32.h: what the float32 dense layer (dense_f32.c, portable C)
 * shares with its x86 forms (x86/dense_f32.c): the four-row dot product
 * and the packed layout's row, which it calls where isa.h compiles AVX2
 * forms in and tn__crt_avx2() says the CPU runs them. Private to
 * runtime/crt.
 */
#ifndef TVMNODE_CRT_DENSE_F32_H_
#define TVMNODE_CRT_DENSE_F32_H_

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

#if TN_CRT_HAVE_AVX2
/* v[r] = dense_f32.c's dot() of x and row r of the four rows at w (sn
 * apart), k long, bit for bit. */
void tn__crt_dot4_f32_avx2(const float *restrict x, const float *restrict w,
                           ptrdiff_t sn, int32_t k, float *v);
/* One row of tn_crt_dense_f32_packed: o[n] = clamp(chain + bias[n]), the
 * chain fused multiply-adds over x[0..K) in order; the AVX-512F form where
 * tn__crt_isa() reaches TN_CRT_ISA_AVX512BW, else the AVX2 + FMA one (the
 * same bits). */
void tn__crt_dense_f32_packed_x86(int32_t K, int32_t N, const float *x,
                                  const float *w, const float *bias, float lo,
                                  float hi, float *o);
#endif

#endif /* TVMNODE_CRT_DENSE_F32_H_ */
