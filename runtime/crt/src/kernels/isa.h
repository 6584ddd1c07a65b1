/*
 * isa.h: which ISA forms of the kernels are compiled in, decided once from
 * the compiler's own macros. A kernel's portable C (src/kernels/F.c) is
 * the reference and is always there; its ISA forms live in
 * src/kernels/<isa>/: x86/F.c (SSE2 and AVX2), each of which compiles to
 * nothing where this header says its ISA is absent, so that an archive
 * can always carry them all; and arm_dsp/F_dsp.h (the Cortex-M DSP
 * extension), static functions that F.c includes, so that gcc inlines
 * them into its loops (called once a pixel, a call into another file cost
 * the firmware up to 3.6% more instructions). The portable file calls a
 * form only under its switch here.
 *
 * An ISA source includes the headers beside its portable file by name
 * alone ("conv_s8.h", not "../conv_s8.h"): the source tree compiles the
 * crt with -I src/kernels, and an exported archive has every crt source
 * flat in runtime/src (x86/conv_s8.c as x86_conv_s8.c), the headers beside
 * them. An ISA header keeps its folder in an archive (arm_dsp/conv_s8_dsp.h
 * as runtime/src/arm_dsp/conv_s8_dsp.h, beside arm_dsp/dsp.h): the
 * portable file includes it as "arm_dsp/conv_s8_dsp.h", and it includes
 * its neighbours by name and the portable headers as "../conv_s8.h", paths
 * that hold in both layouts with no -I.
 *
 *  - TN_CRT_HAVE_SSE2: x86 with SSE2 (every x86-64), GNU C. Compile-time.
 *  - TN_CRT_HAVE_AVX2: x86-64 with GNU C, unless -DTN_CRT_NO_AVX2. The
 *    AVX2 and AVX-512 forms are compiled in, each taken at run time where
 *    tn__crt_isa() says the CPU runs it (x86/fixed_point.c).
 *  - TN_CRT_HAVE_ARM_DSP: the DSP extension of the Cortex-M4, M7, M33 and
 *    M55 (__ARM_FEATURE_DSP with its SIMD32 instructions), GNU C,
 *    little-endian (the byte order the unpacking assumes). Compile-time.
 *  - TN_CRT_HAVE_ARM_MVE: MVE (the M55), below; arm_mve/F_mve.h, headers
 *    of static functions like arm_dsp's.
 *
 * Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_ISA_H_
#define TVMNODE_CRT_ISA_H_

#include "tvmnode/crt/kernels.h"

#if defined(__SSE2__) && defined(__GNUC__)
#define TN_CRT_HAVE_SSE2 1
#else
#define TN_CRT_HAVE_SSE2 0
#endif

/*
 * AVX2 on x86-64 with GNU C: TN_CRT_HAVE_AVX2 is 1 and kernels may carry
 * forms of a hot loop compiled for AVX2 or AVX-512 (functions with
 * __attribute__((target(...))), intrinsics from <immintrin.h>, a header
 * of the compiler), each taken when tn__crt_isa() (the level of
 * tn_crt_isa, kernels.h: TN_CRT_ISA_AVX2, ..._AVX512VNNI, with the
 * AVX-VNNI flag) says the CPU and the OS run it; it is found once with
 * CPUID and XGETBV (<cpuid.h>, also a compiler header), so nothing is
 * linked in, and is capped by tn_crt_isa_limit, so that a test runs the
 * lower forms on a machine that has the higher ones. The AVX2 level asks
 * for FMA as well (every AVX2 CPU has it; the float forms fuse their
 * multiply-adds). Integer forms are
 * bit-identical to the portable ones: their sums wrap mod 2^32 like the
 * portable uint32 sums, in any order. -DTN_CRT_NO_AVX2 leaves these forms
 * out.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TN_CRT_NO_AVX2)
#define TN_CRT_HAVE_AVX2 1
#else
#define TN_CRT_HAVE_AVX2 0
#endif

int tn__crt_isa(void);
/* the AVX2 forms run here */
#define tn__crt_avx2() ((tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX2)
/* the AVX-VNNI forms (VEX vpdpbusd on ymm) run here */
#define tn__crt_avxvnni() ((tn__crt_isa() & TN_CRT_ISA_AVXVNNI) != 0)
/* the AVX-512 VNNI forms run here */
#define tn__crt_avx512vnni() \
  ((tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512VNNI)

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && \
    defined(__GNUC__) && !defined(__ARM_BIG_ENDIAN)
#define TN_CRT_HAVE_ARM_DSP 1
#else
#define TN_CRT_HAVE_ARM_DSP 0
#endif

/* TN_CRT_HAVE_ARM_MVE: the M-profile Vector Extension's integer
 * instructions (Helium: the Cortex-M55; __ARM_FEATURE_MVE bit 0) beside
 * the DSP extension, GNU C, little-endian, unless -DTN_CRT_NO_MVE.
 * Compile-time; its forms (src/kernels/arm_mve/) take the place of some
 * DSP forms, which stay for the rest. */
#if TN_CRT_HAVE_ARM_DSP && defined(__ARM_FEATURE_MVE) && \
    (__ARM_FEATURE_MVE & 1) && !defined(TN_CRT_NO_MVE)
#define TN_CRT_HAVE_ARM_MVE 1
#else
#define TN_CRT_HAVE_ARM_MVE 0
#endif

/* TN_CRT_CONV_S8_FORMS: the int8 convolution's DSP forms compiled in
 * (TN_CRT_CONV_FORM_*, kernels.h), every one unless defined; a form out
 * is a branch gcc drops with the static functions only it calls. */
#ifndef TN_CRT_CONV_S8_FORMS
#define TN_CRT_CONV_S8_FORMS TN_CRT_CONV_FORM_ALL
#endif
#define TN__CONV_FORM(f) (((TN_CRT_CONV_S8_FORMS) & (f)) != 0)

/* TN_CRT_DENSE_S8_FORMS: the int8 dense layer's forms compiled in
 * (TN_CRT_DENSE_FORM_*, kernels.h), in the same way. */
#ifndef TN_CRT_DENSE_S8_FORMS
#define TN_CRT_DENSE_S8_FORMS TN_CRT_DENSE_FORM_ALL
#endif
#define TN__DENSE_FORM(f) (((TN_CRT_DENSE_S8_FORMS) & (f)) != 0)

/* The names these switches had before. */
#define TN__CRT_AVX2 TN_CRT_HAVE_AVX2
#define TN__CRT_DSP TN_CRT_HAVE_ARM_DSP

#endif /* TVMNODE_CRT_ISA_H_ */
