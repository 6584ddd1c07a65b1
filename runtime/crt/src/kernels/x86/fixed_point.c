/*
 * x86/fixed_point.c: which ISA forms of the kernels run here (tn_crt_isa,
 * kernels.h; tn__crt_isa, isa.h): the CPU asked once with CPUID and the
 * OS with XGETBV (the YMM and ZMM state it saves), capped by
 * tn_crt_isa_limit, with which a test, a benchmark or a user runs the
 * lower forms on a machine that has the higher ones. AVX-VNNI (VEX
 * vpdpbusd on ymm: Alder Lake and later clients, without AVX-512) is a
 * flag beside the level: a cap of AVX2 drops it, TN_CRT_ISA_AVX2_VNNI
 * (AVX2 with the flag) keeps it, so that both run here. Where isa.h says no
 * AVX2 forms are compiled in (not x86-64, or -DTN_CRT_NO_AVX2), the level
 * is at most SSE2. It sits beside fixed_point.c, which every archive
 * carries, so that it comes with it.
 */
#include "isa.h"

#if TN_CRT_HAVE_AVX2
#include <cpuid.h>

static int isa_query(void) {
  unsigned a, b, c, d, b7, c7;
  int v = TN_CRT_ISA_SSE2;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return v;
  if (c & bit_SSE4_1) v = TN_CRT_ISA_SSE41;
  /* AVX (CPUID 1 ECX 28) with the OS saving the YMM state (OSXSAVE, ECX
   * 27, and XCR0 bits 1 and 2), then AVX2 (CPUID 7 EBX 5) with FMA (CPUID 1
   * ECX 12, which every AVX2 CPU has; the float forms use it) */
  if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return v;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  if ((lo & 6) != 6 || !__get_cpuid_count(7, 0, &a, &b7, &c7, &d) ||
      !(b7 & bit_AVX2) || !(c & bit_FMA))
    return v;
  v = TN_CRT_ISA_AVX2;
  /* AVX-VNNI: CPUID 7 subleaf 1 EAX bit 4 */
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)))
    v |= TN_CRT_ISA_AVXVNNI;
  /* AVX-512F and BW (CPUID 7 EBX 16 and 30) with the opmask and ZMM state
   * saved (XCR0 bits 5 to 7), then VNNI (CPUID 7 ECX 11) */
  if ((lo & 0xe0) == 0xe0 && (b7 & (1u << 16)) && (b7 & (1u << 30))) {
    v = (v & ~TN_CRT_ISA_LEVEL_MASK) | TN_CRT_ISA_AVX512BW;
    if (c7 & (1u << 11))
      v = (v & ~TN_CRT_ISA_LEVEL_MASK) | TN_CRT_ISA_AVX512VNNI;
  }
  return v;
}
#elif TN_CRT_HAVE_SSE2
static int isa_query(void) { return TN_CRT_ISA_SSE2; }
#endif

#if TN_CRT_HAVE_SSE2
/* the CPU's level plus one (0 until the first query) and how far the cap
 * lies below TN_CRT_ISA_AVX512VNNI (0: no cap): both zero at start, so
 * that they are .bss, not .data, which an archive's crt may not have
 * (static: no GOT entry in PIC code, which the freestanding check
 * forbids) */
static int isa_cpu1;
static int isa_below;
static int isa_no_avxvnni; /* the cap is AVX2 or below, without the flag */

#if defined(__GNUC__)
#define LOAD(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
#define STORE(v, x) __atomic_store_n(&(v), (x), __ATOMIC_RELAXED)
#else
#define LOAD(v) (v)
#define STORE(v, x) ((v) = (x))
#endif

int tn__crt_isa(void) {
  int v = LOAD(isa_cpu1) - 1;
  if (v < 0) {
    v = isa_query();
    STORE(isa_cpu1, v + 1);
  }
  const int cap = TN_CRT_ISA_AVX512VNNI - LOAD(isa_below);
  const int level = v & TN_CRT_ISA_LEVEL_MASK;
  if (cap < TN_CRT_ISA_AVX2) return level < cap ? level : cap;
  /* the AVX-VNNI flag stays under a cap of AVX-512BW, or of AVX2 with
   * the flag (TN_CRT_ISA_AVX2_VNNI), never alone */
  const int flag = LOAD(isa_no_avxvnni) ? 0 : v & TN_CRT_ISA_AVXVNNI;
  return (level < cap ? level : cap) | flag;
}

int tn_crt_isa(void) { return tn__crt_isa(); }

int tn_crt_isa_limit(int level) {
  if (level >= 0) {
    const int l = level & TN_CRT_ISA_LEVEL_MASK;
    STORE(isa_below,
          l >= TN_CRT_ISA_AVX512VNNI ? 0 : TN_CRT_ISA_AVX512VNNI - l);
    STORE(isa_no_avxvnni,
          l <= TN_CRT_ISA_AVX2 && !(level & TN_CRT_ISA_AVXVNNI));
  }
  return tn__crt_isa();
}

#else
/* No ISA forms compiled in: the portable level, and no state (an
 * archive's crt has no .data or .bss). */
int tn__crt_isa(void) { return TN_CRT_ISA_PORTABLE; }
int tn_crt_isa(void) { return TN_CRT_ISA_PORTABLE; }
int tn_crt_isa_limit(int level) {
  (void)level;
  return TN_CRT_ISA_PORTABLE;
}
#endif
