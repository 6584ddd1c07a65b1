/*
 * x86/fixed_point.c: whether the AVX2 forms of the kernels run here
 * (tn__crt_avx2, isa.h): asked once of the CPU with CPUID and of the OS
 * with XGETBV, and tn__crt_avx2_allow, with which a test runs the portable
 * forms on an AVX2 machine. Compiles to nothing where isa.h says AVX2
 * forms are out (not x86-64, or -DTN_CRT_NO_AVX2). It sits beside
 * fixed_point.c, which every archive carries, so that it comes with it.
 */
#include "isa.h"

#if TN_CRT_HAVE_AVX2
#include <cpuid.h>

/* -1 until the first query, then 0 or 1 (static: no GOT entry in PIC
 * code, which the freestanding check forbids) */
static int avx2_state = -1;
static int avx2_allowed = 1;

void tn__crt_avx2_allow(int allow) {
  __atomic_store_n(&avx2_allowed, allow != 0, __ATOMIC_RELAXED);
}

int tn__crt_avx2(void) {
  if (!__atomic_load_n(&avx2_allowed, __ATOMIC_RELAXED)) return 0;
  int v = __atomic_load_n(&avx2_state, __ATOMIC_RELAXED);
  if (v >= 0) return v;
  unsigned a, b, c, d;
  v = 0;
  /* AVX (CPUID 1 ECX 28) with the OS saving the YMM state (OSXSAVE, ECX 27,
   * and XCR0 bits 1 and 2), then AVX2 (CPUID 7 EBX 5) */
  if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && (c & bit_AVX)) {
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6) == 6 && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
        (b & bit_AVX2))
      v = 1;
  }
  __atomic_store_n(&avx2_state, v, __ATOMIC_RELAXED);
  return v;
}
#else
typedef int tn__crt_unused_x86_fixed_point; /* no AVX2 forms */
#endif
