/*
 * dense_f32.h: what the float32 dense layer (dense_f32.c, portable C)
 * shares with its AVX2 form (x86/dense_f32.c): the four-row dot product it
 * calls where isa.h compiles AVX2 forms in and tn__crt_avx2() says the CPU
 * runs them. Private to runtime/crt.
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
#endif

#endif /* TVMNODE_CRT_DENSE_F32_H_ */
