/*
 * x86/quant.c: the AVX2 and AVX-512 forms of the int8 ADD's contiguous
 * runs (quant.c, add_run_fast): eight or sixteen elements at a time,
 * TFLite's three requantizations (mbqm_right) bit for bit, or on long
 * runs 64 at a time, each operand's requantization looked up in a table
 * of its 256 values (AVX512-VBMI); and of the
 * int8 clip (quant.c, tn_crt_clip_s8), 32 bytes at a time by signed byte
 * min and max. Compiled for their ISA with target attributes and taken
 * where tn__crt_isa() says the CPU runs them; compiles to nothing where
 * isa.h says AVX2 forms are out (not x86-64, or -DTN_CRT_NO_AVX2).
 */
#include "quant.h"

#if TN_CRT_HAVE_AVX2
#include <cpuid.h>
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f,avx512bw")))

/*
 * mbqm_right on eight int32 lanes, for m >= 0 and e = -shift in [0, 31]:
 * h = floor((x * m + 2^30) / 2^31), whose low 32 bits are bits 31 to 62 of
 * the 64-bit sum (a logical shift gives the same low bits as an
 * arithmetic one, and h fits an int32); then the rounding right shift,
 * floor(h / 2^e) + 1 where the remainder h & mask exceeds
 * (mask >> 1) + (h < 0). vpmuldq multiplies the even lanes; the odd ones
 * are shifted down first and their results shifted back up.
 */
AVX2 static inline __m256i mbqm8(__m256i x, __m256i m, __m128i e,
                                 __m256i mask, __m256i half) {
  const __m256i nudge = _mm256_set1_epi64x(INT64_C(1) << 30);
  const __m256i ev = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(x, m), nudge), 31);
  const __m256i od = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m), nudge),
      31);
  const __m256i h = _mm256_blend_epi32(ev, _mm256_slli_epi64(od, 32), 0xaa);
  const __m256i q = _mm256_sra_epi32(h, e);
  const __m256i thr = _mm256_add_epi32(half, _mm256_srli_epi32(h, 31));
  /* q - (-1) where the remainder is above the threshold */
  return _mm256_sub_epi32(
      q, _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), thr));
}

AVX2 static inline __m256i load8(const int8_t *p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

/* The ADD's constants in eight lanes: k = 0, 1, 2 for lhs, rhs and the
 * output, each's offset, multiplier, right shift, remainder mask and its
 * half; the activation range; the left shift. The AVX-512 form widens
 * them. */
typedef struct {
  __m256i off[3], m[3], mask[3], half[3], lo, hi;
  __m128i e[3], left;
} AddLanes;

AVX2 static inline void add_lanes(const TnCrtQBinary *p, int32_t lo,
                                  int32_t hi, AddLanes *c) {
  const int32_t off[3] = {p->lhs_offset, p->rhs_offset, p->output_offset};
  const int32_t m[3] = {p->lhs_multiplier, p->rhs_multiplier,
                        p->output_multiplier};
  const int32_t shifts[3] = {p->lhs_shift, p->rhs_shift, p->output_shift};
  for (int k = 0; k < 3; k++) {
    const uint32_t mk = (UINT32_C(1) << -shifts[k]) - 1;
    c->off[k] = _mm256_set1_epi32(off[k]);
    c->m[k] = _mm256_set1_epi32(m[k]);
    c->e[k] = _mm_cvtsi32_si128(-shifts[k]);
    c->mask[k] = _mm256_set1_epi32((int32_t)mk);
    c->half[k] = _mm256_set1_epi32((int32_t)(mk >> 1));
  }
  c->lo = _mm256_set1_epi32(lo), c->hi = _mm256_set1_epi32(hi);
  c->left = _mm_cvtsi32_si128(p->left_shift);
}

AVX2 int32_t tn__crt_qadd_avx2(const TnCrtQBinary *p, int32_t lo,
                               int32_t hi, const int8_t *l, const int8_t *r,
                               int32_t n, int8_t *out) {
  AddLanes c;
  add_lanes(p, lo, hi, &c);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_sll_epi32(
        _mm256_add_epi32(load8(l + i), c.off[0]), c.left);
    const __m256i b = _mm256_sll_epi32(
        _mm256_add_epi32(load8(r + i), c.off[1]), c.left);
    const __m256i s = _mm256_add_epi32(
        mbqm8(a, c.m[0], c.e[0], c.mask[0], c.half[0]),
        mbqm8(b, c.m[1], c.e[1], c.mask[1], c.half[1]));
    __m256i v = _mm256_add_epi32(
        mbqm8(s, c.m[2], c.e[2], c.mask[2], c.half[2]), c.off[2]);
    v = _mm256_min_epi32(_mm256_max_epi32(v, c.lo), c.hi);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v),
                                      _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(out + i), _mm_packs_epi16(w, w));
  }
  return i;
}

/* mbqm8 on sixteen lanes. The odd lanes reach vpmuldq by a shuffle
 * that copies each onto the even lane below it; their sums' bits 31 to
 * 62 go to bits 32 to 63 by one left shift (the top bit falls off) and
 * are merged under a mask; the rounding step is added under the
 * comparison's mask. */
AVX512 static inline __m512i mbqm16(__m512i x, __m512i m, __m128i e,
                                   __m512i mask, __m512i half) {
  const __m512i nudge = _mm512_set1_epi64(INT64_C(1) << 30);
  const __m512i odd = _mm512_shuffle_epi32(x, _MM_PERM_DDBB);
  const __m512i h = _mm512_mask_blend_epi32(
      0xaaaa,
      _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, m), nudge), 31),
      _mm512_slli_epi64(_mm512_add_epi64(_mm512_mul_epi32(odd, m), nudge), 1));
  const __m512i q = _mm512_sra_epi32(h, e);
  const __mmask16 up = _mm512_cmpgt_epi32_mask(
      _mm512_and_si512(h, mask),
      _mm512_add_epi32(half, _mm512_srli_epi32(h, 31)));
  return _mm512_mask_add_epi32(q, up, q, _mm512_set1_epi32(1));
}

AVX512 static inline __m512i wide(__m256i v) {
  return _mm512_broadcast_i64x4(v);
}

AVX512 static inline __m512i load16(const int8_t *p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p));
}

/* AddLanes in sixteen lanes; k = 0, 1, 2 as there. */
typedef struct {
  __m512i off[3], m[3], mask[3], half[3], lo, hi;
  __m128i e[3], left;
  __m512i k, neg;  /* the output's constants for out_mbqm */
  __m512i lo8, hi8; /* the activation range in bytes */
  __m128i e31;
} AddWide;

AVX512 static inline void add_wide(const TnCrtQBinary *p, int32_t lo,
                                   int32_t hi, AddWide *w) {
  AddLanes c;
  add_lanes(p, lo, hi, &c);
  for (int k = 0; k < 3; k++)
    w->off[k] = wide(c.off[k]), w->m[k] = wide(c.m[k]),
    w->mask[k] = wide(c.mask[k]), w->half[k] = wide(c.half[k]),
    w->e[k] = c.e[k];
  w->lo = wide(c.lo), w->hi = wide(c.hi), w->left = c.left;
  const int e = -p->output_shift; /* in [0, 31] (add_is_fast) */
  w->k = _mm512_set1_epi64((INT64_C(1) << 30) +
                           (e > 0 ? INT64_C(1) << (30 + e) : 0));
  w->neg = _mm512_set1_epi64(e > 0 ? -(INT64_C(1) << 30) : INT64_MIN);
  w->e31 = _mm_cvtsi32_si128(31 + e);
  w->lo8 = _mm512_set1_epi8((char)lo), w->hi8 = _mm512_set1_epi8((char)hi);
}

/*
 * mbqm16 for the output (its multiplier and shift in w) with its two
 * roundings as one 64-bit shift: with p = x * m, h = floor((p + 2^30) /
 * 2^31) and TFLite's rounding right shift floor((h + 2^(e-1) - (h < 0)) /
 * 2^e) for e > 0 (h for e = 0), the result is floor((p + 2^30 +
 * (2^(e-1) - (h < 0)) * 2^31) / 2^(31 + e)), and h < 0 where p < -2^30.
 * |p| < 2^62, so nothing wraps, and vpsraq shifts it. Two multiplies and
 * two shifts (the zmm shifts and multiplies share one port) where mbqm16
 * has six.
 */
AVX512 static inline __m512i out_mbqm(const AddWide *w, __m512i x) {
  const __m512i two31 = _mm512_set1_epi64(INT64_C(1) << 31);
  const __m512i pe = _mm512_mul_epi32(x, w->m[2]);
  const __m512i po = _mm512_mul_epi32(_mm512_shuffle_epi32(x, _MM_PERM_DDBB),
                                      w->m[2]);
  const __mmask8 ne = _mm512_cmplt_epi64_mask(pe, w->neg);
  const __mmask8 no = _mm512_cmplt_epi64_mask(po, w->neg);
  const __m512i qe = _mm512_add_epi64(pe, w->k);
  const __m512i qo = _mm512_add_epi64(po, w->k);
  const __m512i re =
      _mm512_sra_epi64(_mm512_mask_sub_epi64(qe, ne, qe, two31), w->e31);
  const __m512i ro =
      _mm512_sra_epi64(_mm512_mask_sub_epi64(qo, no, qo, two31), w->e31);
  /* the odd lanes' results from the low halves of ro's quadwords */
  return _mm512_mask_shuffle_epi32(re, 0xaaaa, ro, _MM_PERM_CCAA);
}

/* An operand's (k = 0, 1) sixteen int8 inputs x (in int32 lanes) scaled:
 * ((x + offset) << left) requantized. */
AVX512 static inline __m512i add_in(const AddWide *w, int k, __m512i x) {
  return mbqm16(_mm512_sll_epi32(_mm512_add_epi32(x, w->off[k]), w->left),
                w->m[k], w->e[k], w->mask[k], w->half[k]);
}

/* The sum of two scaled inputs requantized and offset; the clamp is
 * left to the caller (saturating narrowing, then bytes' min and max: the
 * range lies within int8). */
AVX512 static inline __m512i add_out(const AddWide *w, __m512i s) {
  return _mm512_add_epi32(out_mbqm(w, s), w->off[2]);
}

/*
 * The table form, for long runs on CPUs with AVX512-VBMI: an operand's
 * scaled input takes one of 256 values, one per int8, so add_in is
 * computed once a call for each (1,024 bytes an operand, kept as four
 * planes of 256 bytes: byte j of every entry), and each 64 inputs look
 * theirs up with vpermt2b (128 entries a lookup; the input's top bit
 * picks the half), two operations and a blend a plane, where add_in
 * takes about fifteen for 16 inputs. The planes' bytes are interleaved
 * back into int32 by vpunpck[lh]bw / [lh]wd, which take each 128-bit
 * lane's elements out of order; the vpackss[dw|wb] of the results undo
 * that order within the lane, so the 64 outputs are stored as they come.
 * Only the output's requantization is left in lanes (TFLite's double
 * rounding needs the 64-bit product).
 */
#define VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

static int qadd_table_fault; /* tn__crt_qadd_table_fault */
void tn__crt_qadd_table_fault(int how) {
  __atomic_store_n(&qadd_table_fault, how, __ATOMIC_RELAXED);
}

static int qadd_lut_fault; /* tn__crt_qadd_lut_fault (quant.c's form) */
void tn__crt_qadd_lut_fault(int how) {
  __atomic_store_n(&qadd_lut_fault, how, __ATOMIC_RELAXED);
}
int tn__crt_qadd_lut_broken(void) {
  return __atomic_load_n(&qadd_lut_fault, __ATOMIC_RELAXED);
}

/* Below this many elements the tables cost more than they save. */
#define TABLE_MIN 512

/* 0: not asked yet, 1: no VBMI, 2: VBMI (the AVX-512 level, which
 * tn__crt_isa found, says the OS saves the zmm registers) */
static int vbmi_cpu;
static int cpu_vbmi(void) {
  int v = __atomic_load_n(&vbmi_cpu, __ATOMIC_RELAXED);
  if (v == 0) {
    unsigned a, b, c, d;
    v = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & bit_AVX512VBMI) ? 2
                                                                        : 1;
    __atomic_store_n(&vbmi_cpu, v, __ATOMIC_RELAXED);
  }
  return v == 2;
}

/* Operand k's table: t[j * 256 + u] is byte j of add_in of the int8 u. */
AVX512 static void add_table(const AddWide *w, int k, uint8_t *t) {
  const __m512i iota =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  /* (how == 1 scales the inputs of 1 past their own: a broken form) */
  const int bad = k == 0 && __atomic_load_n(&qadd_table_fault,
                                            __ATOMIC_RELAXED) == 1;
  for (int u = 0; u < 256; u += 16) {
    /* the int8 whose bits are u .. u + 15 */
    __m512i x = _mm512_srai_epi32(
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_set1_epi32(u), iota), 24),
        24);
    if (bad) x = _mm512_add_epi32(x, _mm512_set1_epi32(1));
    const __m512i v = add_in(w, k, x);
    for (int j = 0; j < 4; j++)
      _mm_store_si128((__m128i *)(t + j * 256 + u),
                      _mm512_cvtepi32_epi8(_mm512_srli_epi32(v, 8 * j)));
  }
}

/* Byte j of the table entries of the 64 inputs x (top: their top bits). */
VBMI static inline __m512i table_plane(const uint8_t *t, __m512i x,
                                       __mmask64 top) {
  const __m512i lo = _mm512_permutex2var_epi8(
      _mm512_load_si512(t), x, _mm512_load_si512(t + 64));
  const __m512i hi = _mm512_permutex2var_epi8(
      _mm512_load_si512(t + 128), x, _mm512_load_si512(t + 192));
  return _mm512_mask_blend_epi8(top, lo, hi);
}

/* The 64 entries of t for the inputs at p, as int32: d[0] elements 0 to
 * 3 of each 128-bit lane of inputs, d[1] 4 to 7, d[2] 8 to 11, d[3] 12 to
 * 15. */
VBMI static inline void table_look(const uint8_t *t, const int8_t *p,
                                   __m512i *d) {
  const __m512i x = _mm512_loadu_si512(p);
  const __mmask64 top = _mm512_movepi8_mask(x);
  const __m512i b0 = table_plane(t, x, top), b1 = table_plane(t + 256, x, top);
  const __m512i b2 = table_plane(t + 512, x, top);
  const __m512i b3 = table_plane(t + 768, x, top);
  const __m512i w01l = _mm512_unpacklo_epi8(b0, b1);
  const __m512i w01h = _mm512_unpackhi_epi8(b0, b1);
  const __m512i w23l = _mm512_unpacklo_epi8(b2, b3);
  const __m512i w23h = _mm512_unpackhi_epi8(b2, b3);
  d[0] = _mm512_unpacklo_epi16(w01l, w23l);
  d[1] = _mm512_unpackhi_epi16(w01l, w23l);
  d[2] = _mm512_unpacklo_epi16(w01h, w23h);
  d[3] = _mm512_unpackhi_epi16(w01h, w23h);
}

VBMI static int32_t qadd_table(const AddWide *w, const int8_t *l,
                               const int8_t *r, int32_t n, int8_t *out) {
  _Alignas(64) uint8_t t[2][1024];
  add_table(w, 0, t[0]);
  add_table(w, 1, t[1]);
  int32_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i a[4], b[4];
    table_look(t[0], l + i, a);
    table_look(t[1], r + i, b);
    for (int q = 0; q < 4; q++) a[q] = add_out(w, _mm512_add_epi32(a[q], b[q]));
    const __m512i v = _mm512_packs_epi16(_mm512_packs_epi32(a[0], a[1]),
                                         _mm512_packs_epi32(a[2], a[3]));
    _mm512_storeu_si512(out + i,
                        _mm512_min_epi8(_mm512_max_epi8(v, w->lo8), w->hi8));
  }
  return i;
}

AVX512 int32_t tn__crt_qadd_avx512(const TnCrtQBinary *p, int32_t lo,
                                   int32_t hi, const int8_t *l,
                                   const int8_t *r, int32_t n, int8_t *out) {
  AddWide w;
  add_wide(p, lo, hi, &w);
  int32_t i = 0;
  /* (at the top level only, so that a cap below it leaves the form out;
   * the CPUs with VBMI have VNNI too) */
  if (n >= TABLE_MIN &&
      (tn__crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512VNNI &&
      cpu_vbmi())
    i = qadd_table(&w, l, r, n, out);
  for (; i + 16 <= n; i += 16) {
    const __m512i s =
        _mm512_add_epi32(add_in(&w, 0, load16(l + i)), add_in(&w, 1, load16(r + i)));
    const __m128i v = _mm512_cvtsepi32_epi8(add_out(&w, s));
    _mm_storeu_si128((__m128i *)(out + i),
                     _mm_min_epi8(_mm_max_epi8(v, _mm512_castsi512_si128(w.lo8)),
                                  _mm512_castsi512_si128(w.hi8)));
  }
  return i;
}

AVX2 int32_t tn__crt_clip_s8_avx2(int32_t n, const int8_t *in, int8_t lo,
                                  int8_t hi, int8_t *out) {
  const __m256i vlo = _mm256_set1_epi8(lo), vhi = _mm256_set1_epi8(hi);
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(in + i));
    _mm256_storeu_si256((__m256i *)(out + i),
                        _mm256_min_epi8(_mm256_max_epi8(v, vlo), vhi));
  }
  return i;
}
#else
typedef int tn__crt_unused_x86_quant; /* no AVX2 or AVX-512 forms */
#endif
