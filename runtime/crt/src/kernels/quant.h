/*
 * quant.h: what the int8 elementwise kernels (quant.c, portable C) share
 * with their ISA form, x86/quant.c (AVX2): the entry of the AVX2 ADD; and
 * the table form's fault hook.
 * Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_QUANT_H_
#define TVMNODE_CRT_QUANT_H_

#include <stdint.h>

#include "tvmnode/crt/kernels.h"
#include "isa.h"

#if TN_CRT_HAVE_AVX2
/* quant.c's add_run_fast over the first n - n % 8 elements of contiguous
 * runs l and r (the parameters pass add_is_fast), eight at a time;
 * returns how many it did. */
int32_t tn__crt_qadd_avx2(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                          const int8_t *l, const int8_t *r, int32_t n,
                          int8_t *out);
/* The same sixteen at a time (n - n % 16 of them), for AVX-512BW; on
 * long runs, where the CPU has AVX512-VBMI, 64 at a time through tables
 * of each operand's 256 scaled values. */
int32_t tn__crt_qadd_avx512(const TnCrtQBinary *p, int32_t lo, int32_t hi,
                            const int8_t *l, const int8_t *r, int32_t n,
                            int8_t *out);
/* Breaks the table form on purpose for the tests: 1 builds the lhs
 * table from the wrong inputs; 0 (the default) is the true form. */
void tn__crt_qadd_table_fault(int how);
/* tn_crt_clip_s8 over the first n - n % 32 bytes, lo <= hi or not (the
 * portable min(max(x, lo), hi)); returns how many it did. */
int32_t tn__crt_clip_s8_avx2(int32_t n, const int8_t *in, int8_t lo,
                             int8_t hi, int8_t *out);
#endif

/* Breaks quant.c's table form of the ADD (add_lut_run) on purpose for the
 * host's tests: 1 builds the lhs table from the wrong inputs; 0 (the
 * default) is the true form. The hook lives in x86/quant.c, so that a
 * device's crt has no state (its DSP loop's broken copy is
 * test_firmware_device.py's). */
#if TN_CRT_HAVE_AVX2
void tn__crt_qadd_lut_fault(int how);
int tn__crt_qadd_lut_broken(void);
#else
#define tn__crt_qadd_lut_broken() 0
#endif

#endif /* TVMNODE_CRT_QUANT_H_ */
