/*
 * x86/dense_s8.c: the AVX2 and AVX-512 VNNI forms of the int8 dense
 * layer's contiguous dot products, four rows at a time (dense_s8.c): AVX2
 * sixteen products per vpmaddwd, about 1.4x as fast as the portable C
 * (which gcc vectorises for SSE2) on the anomaly detector's layers; VNNI
 * sixty-four per vpdpbusd; bit for bit the same sums; and the forms of
 * the packed layout (tn_crt_dense_s8_pack), sixteen outputs by four
 * inputs per vpdpbusd or per four vpmaddwd, no horizontal sums. Compiled with
 * target attributes and taken where tn__crt_isa() says the CPU runs them;
 * compiles to nothing where isa.h says these forms are out (not x86-64,
 * or -DTN_CRT_NO_AVX2).
 */
#include "dense_s8.h"

#if TN_CRT_HAVE_AVX2
#include <immintrin.h>

#include "crt_libc.h"
#include "x86/requant_lanes.h"

#define AVX2 __attribute__((target("avx2")))

static int vnni_fault; /* tn__crt_dense_vnni_fault (AVX2 forms too) */
void tn__crt_dense_vnni_fault(int how) {
  __atomic_store_n(&vnni_fault, how, __ATOMIC_RELAXED);
}

AVX2 static inline uint32_t hsum8(__m256i a) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a),
                            _mm256_extracti128_si256(a, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

/* dot_rows for four rows with AVX2: sixteen int8 of x and of each row
 * widened to int16 with the offsets added (vpmovsxbw, vpaddw), multiplied
 * and summed in pairs into eight int32 (vpmaddwd: both products and their
 * sum are exact while x + io and w + fo fit an int16, which `narrow`
 * says), accumulated with wrapping adds; the tail as dot_rows does it. */
AVX2 static inline __m256i widen16(const int8_t *p, __m256i offset) {
  return _mm256_add_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)), offset);
}

/* The tail of a row past the last 16 (plain int32 products, as dot_rows). */
static uint32_t dot_tail(const Dense *d, const int8_t *x, const int8_t *w,
                         int32_t k, uint32_t s) {
  for (; k < d->p->in_features; k++)
    s += (uint32_t)((x[k] + d->io) * (w[k] + d->fo));
  return s;
}

AVX2 __attribute__((noinline)) void tn__crt_dense_dot4_avx2(const Dense *d,
                                                            const int8_t *x,
                                                            const int8_t *w,
                                                            uint32_t *s) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int8_t *w0 = w, *w1 = w + sn, *w2 = w + 2 * sn, *w3 = w + 3 * sn;
  const __m256i io = _mm256_set1_epi16((int16_t)d->io);
  const __m256i fo = _mm256_set1_epi16((int16_t)d->fo);
  /* four accumulators in registers (named, not an array: gcc -O2 would
   * keep an array in memory) */
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  int32_t k = 0;
  for (; k + 16 <= kk; k += 16) {
    const __m256i xv = widen16(x + k, io);
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(xv, widen16(w0 + k, fo)));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(xv, widen16(w1 + k, fo)));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(xv, widen16(w2 + k, fo)));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(xv, widen16(w3 + k, fo)));
  }
  s[0] = dot_tail(d, x, w0, k, hsum8(a0));
  s[1] = dot_tail(d, x, w1, k, hsum8(a1));
  s[2] = dot_tail(d, x, w2, k, hsum8(a2));
  s[3] = dot_tail(d, x, w3, k, hsum8(a3));
}

/* ---- the packed layout (tn_crt_dense_s8_pack), AVX2 ------------------------
 * A group of a whole block is 64 bytes: features 0-3, 4-7, 8-11 and 12-15
 * in four 16-byte quarters, each feature's 4 weights in a row. Each
 * quarter widened to int16 (w + fo) and multiplied by the group's four
 * inputs (x + io, int16, the same 64 bits in each) with vpmaddwd gives a
 * feature's two pair sums in lanes 2j and 2j + 1; the pairs accumulate
 * apart and are added once at the end (vphaddd, then the 64-bit quarters
 * put back in order): no horizontal sum per group, the weights read once
 * a call in the order they lie. Two blocks a turn share the inputs' set-up,
 * and a filter offset of 0 (TFLite's int8 weights) adds nothing. */
AVX2 static inline __attribute__((always_inline)) __m256i qmadd(
    __m256i xv, const int8_t *w, __m256i fo, int fo0) {
  const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w));
  return _mm256_madd_epi16(xv, fo0 ? wv : _mm256_add_epi16(wv, fo));
}

/* acc + p in acc's own register: with a plain add gcc 12 wrote each sum
 * to another register and copied it back every group (seven or eight
 * vmovdqa), as it did in the VNNI loop below */
AVX2 static inline __m256i acc_add(__m256i acc, __m256i p) {
  __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(p));
  return acc;
}

/* requant_exact of eight lanes (x86/requant_lanes.h) */
#define BLEND8(e, o) _mm256_blend_epi32(e, o, 0xaa)
AVX2 static inline __m256i requant8(__m256i x, __m256i m, __m256i r,
                                    __m256i off, __m256i lo, __m256i hi) {
  REQUANT_LANES(__m256i, _mm256_, si256, set1_epi64x, BLEND8);
}
#undef BLEND8

/* Block b's sums (lo: its outputs 0-7, hi: 8-15, in order), requantized
 * from the registers into rq's outputs where rq is not NULL and the
 * block's multipliers and shifts allow, 0; otherwise stored into
 * a + 16 * b for the caller (finish_block), 1. As finish16 does for the
 * VNNI form: the sums are not stored and read again, and a whole block
 * needs no masks. (tn__crt_dense_vnni_fault 7 leaves the bias out of
 * outputs 8-15: a broken form for the tests.) */
AVX2 static inline __attribute__((always_inline)) unsigned finish8x2(
    __m256i lo, __m256i hi, int b, const DenseRqSpan *rq, uint32_t *a) {
  if (rq != NULL) {
    const __m256i zero = _mm256_setzero_si256();
    const int32_t o = 16 * b;
    __m256i m0, m1, s0, s1;
    if (rq->pc) {
      m0 = _mm256_loadu_si256((const __m256i *)(rq->mult + o));
      m1 = _mm256_loadu_si256((const __m256i *)(rq->mult + o + 8));
      s0 = _mm256_loadu_si256((const __m256i *)(rq->shift + o));
      s1 = _mm256_loadu_si256((const __m256i *)(rq->shift + o + 8));
    } else {
      m0 = m1 = _mm256_set1_epi32(rq->mult[0]);
      s0 = s1 = _mm256_set1_epi32(rq->shift[0]);
    }
    /* sign bits: M < 0, a shift > 0 or < -31 */
    const __m256i m31 = _mm256_set1_epi32(-31);
    const __m256i bad = _mm256_or_si256(
        _mm256_or_si256(m0, m1),
        _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpgt_epi32(s0, zero),
                            _mm256_cmpgt_epi32(s1, zero)),
            _mm256_or_si256(_mm256_cmpgt_epi32(m31, s0),
                            _mm256_cmpgt_epi32(m31, s1))));
    if (_mm256_movemask_ps(_mm256_castsi256_ps(bad)) == 0) {
      if (rq->bias) {
        lo = _mm256_add_epi32(
            lo, _mm256_loadu_si256((const __m256i *)(rq->bias + o)));
        if (__atomic_load_n(&vnni_fault, __ATOMIC_RELAXED) != 7)
          hi = _mm256_add_epi32(
              hi, _mm256_loadu_si256((const __m256i *)(rq->bias + o + 8)));
      }
      const __m256i off = _mm256_set1_epi32(rq->off);
      const __m256i vlo = _mm256_set1_epi32(rq->lo);
      const __m256i vhi = _mm256_set1_epi32(rq->hi);
      const __m256i q0 =
          requant8(lo, m0, _mm256_sub_epi32(zero, s0), off, vlo, vhi);
      const __m256i q1 =
          requant8(hi, m1, _mm256_sub_epi32(zero, s1), off, vlo, vhi);
      /* within [lo, hi] of int8: the saturating packs only narrow */
      const __m256i p =
          _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8);
      _mm_storeu_si128((__m128i *)(rq->out + o),
                       _mm_packs_epi16(_mm256_castsi256_si128(p),
                                       _mm256_extracti128_si256(p, 1)));
      return 0;
    }
  }
  _mm256_storeu_si256((__m256i *)(a + 16 * b), lo);
  _mm256_storeu_si256((__m256i *)(a + 16 * b + 8), hi);
  return 1;
}

/* nb (1 or 2) blocks, bs bytes apart, sharing each group's inputs (with
 * xw, the row's whole groups as int16 x + io, widened once a call: each
 * group's four one vpbroadcastq from memory; else widened here); fo0:
 * the filter offset is 0 (no add); requantized by finish8x2 (the blocks
 * first and first + 1 of rq's span). */
AVX2 static inline __attribute__((always_inline)) unsigned packed_avx2(
    const Dense *d, const int8_t *x, const int16_t *xw, const int8_t *w,
    ptrdiff_t bs, int nb, int fo0, uint32_t *a, const DenseRqSpan *rq,
    int first) {
  const int32_t whole = d->p->in_features & ~3;
  const __m128i io = _mm_set1_epi16((int16_t)d->io);
  const __m256i fo = _mm256_set1_epi16((int16_t)d->fo);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  /* the second block's last quarter (tn__crt_dense_vnni_fault 4 reads its
   * third again: a broken form for the tests) */
  const ptrdiff_t b3q = bs + (__atomic_load_n(&vnni_fault, __ATOMIC_RELAXED)
                              == 4 ? 32 : 48);
  for (int32_t k = 0; k < whole; k += 4, w += 64) {
    __m256i xv;
    if (xw) {
      xv = _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(xw + k)));
    } else {
      int32_t x4;
      memcpy(&x4, x + k, 4);
      xv = _mm256_broadcastq_epi64(
          _mm_add_epi16(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(x4)), io));
    }
    a0 = acc_add(a0, qmadd(xv, w, fo, fo0));
    a1 = acc_add(a1, qmadd(xv, w + 16, fo, fo0));
    a2 = acc_add(a2, qmadd(xv, w + 32, fo, fo0));
    a3 = acc_add(a3, qmadd(xv, w + 48, fo, fo0));
    if (nb > 1) {
      b0 = acc_add(b0, qmadd(xv, w + bs, fo, fo0));
      b1 = acc_add(b1, qmadd(xv, w + bs + 16, fo, fo0));
      b2 = acc_add(b2, qmadd(xv, w + bs + 32, fo, fo0));
      b3 = acc_add(b3, qmadd(xv, w + b3q, fo, fo0));
    }
  }
  /* hadd: [f0 f1 f4 f5 | f2 f3 f6 f7]; the quarters (0, 2, 1, 3) */
#define PAIRS(p, q) _mm256_permute4x64_epi64(_mm256_hadd_epi32(p, q), 0xd8)
  unsigned left = finish8x2(PAIRS(a0, a1), PAIRS(a2, a3), first, rq, a);
  if (nb > 1)
    left |= finish8x2(PAIRS(b0, b1), PAIRS(b2, b3), first + 1, rq, a) << 1;
#undef PAIRS
  return left << first;
}

/* A last block of q (1 to 3) quarters: four outputs each, its groups
 * 16 * q bytes; as packed_avx2 for one block. */
AVX2 static inline __attribute__((always_inline)) void part_avx2(
    const Dense *d, const int8_t *x, const int8_t *w, int q, int fo0,
    uint32_t *a) {
  const int32_t whole = d->p->in_features & ~3;
  const __m128i io = _mm_set1_epi16((int16_t)d->io);
  const __m256i fo = _mm256_set1_epi16((int16_t)d->fo);
  const __m256i zero = _mm256_setzero_si256();
  __m256i a0 = zero, a1 = zero, a2 = zero;
  /* the last quarter (tn__crt_dense_vnni_fault 6 reads the first: a
   * broken form for the tests) */
  const ptrdiff_t last =
      __atomic_load_n(&vnni_fault, __ATOMIC_RELAXED) == 6 ? 0 : 16 * (q - 1);
  for (int32_t k = 0; k < whole; k += 4, w += 16 * q) {
    int32_t x4;
    memcpy(&x4, x + k, 4);
    const __m256i xv = _mm256_broadcastq_epi64(
        _mm_add_epi16(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(x4)), io));
    a0 = acc_add(a0, qmadd(xv, w, fo, fo0));
    if (q == 2) a1 = acc_add(a1, qmadd(xv, w + last, fo, fo0));
    if (q == 3) {
      a1 = acc_add(a1, qmadd(xv, w + 16, fo, fo0));
      a2 = acc_add(a2, qmadd(xv, w + last, fo, fo0));
    }
  }
  /* as packed_avx2's: hadd, then the 64-bit quarters (0, 2, 1, 3) */
#define PAIRS(p, r) _mm256_permute4x64_epi64(_mm256_hadd_epi32(p, r), 0xd8)
  if (q == 1) {
    _mm_storeu_si128((__m128i *)a, _mm256_castsi256_si128(PAIRS(a0, zero)));
    return;
  }
  _mm256_storeu_si256((__m256i *)a, PAIRS(a0, a1));
  if (q == 3)
    _mm_storeu_si128((__m128i *)(a + 8),
                     _mm256_castsi256_si128(PAIRS(a2, zero)));
#undef PAIRS
}

AVX2 __attribute__((noinline)) void tn__crt_dense_packed_part_avx2(
    const Dense *d, const int8_t *x, const int8_t *w, int32_t len,
    uint32_t *a) {
  switch (len / 4 + 3 * (d->fo == 0)) {
    case 1: part_avx2(d, x, w, 1, 0, a); break;
    case 2: part_avx2(d, x, w, 2, 0, a); break;
    case 3: part_avx2(d, x, w, 3, 0, a); break;
    case 4: part_avx2(d, x, w, 1, 1, a); break;
    case 5: part_avx2(d, x, w, 2, 1, a); break;
    default: part_avx2(d, x, w, 3, 1, a); break;
  }
}

/* xw[k] = x[k] + io for the n inputs at x. */
AVX2 static void widen_row(const int8_t *x, int32_t n, int32_t io,
                           int16_t *xw) {
  const __m256i iov = _mm256_set1_epi16((int16_t)io);
  int32_t k = 0;
  for (; k + 16 <= n; k += 16)
    _mm256_store_si256(
        (__m256i *)(xw + k),
        _mm256_add_epi16(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + k))),
            iov));
  for (; k < n; k++) xw[k] = (int16_t)(x[k] + io);
}

enum { DENSE_XW = 2048 }; /* inputs widened once a call, on the stack */

AVX2 __attribute__((noinline)) unsigned tn__crt_dense_packed_avx2(
    const Dense *d, const int8_t *x, const int8_t *w, int32_t nb,
    uint32_t *a, const DenseRqSpan *rq) {
  const ptrdiff_t bs = 16 * (ptrdiff_t)d->p->in_features; /* block bytes */
  const int32_t whole = d->p->in_features & ~3;
  /* the row's inputs widened once a call, not once a pair of blocks,
   * where the stack's buffer holds them (how == 8 leaves the last group
   * out of it: a broken form for the tests) */
  int16_t buf[DENSE_XW] __attribute__((aligned(32)));
  const int16_t *xw = NULL;
  if (whole <= DENSE_XW) {
    const int cut = __atomic_load_n(&vnni_fault, __ATOMIC_RELAXED) == 8;
    widen_row(x, whole - 4 * cut, d->io, buf);
    if (cut) memset(buf + whole - 4, 0, 8);
    xw = buf;
  }
  unsigned left = 0;
  for (int32_t b = 0; b < nb; b += 2, w += 2 * bs) {
    const int two = nb - b >= 2;
    if (xw && d->fo == 0) {
      if (two)
        left |= packed_avx2(d, x, xw, w, bs, 2, 1, a, rq, b);
      else
        left |= packed_avx2(d, x, xw, w, bs, 1, 1, a, rq, b);
    } else if (xw) {
      if (two)
        left |= packed_avx2(d, x, xw, w, bs, 2, 0, a, rq, b);
      else
        left |= packed_avx2(d, x, xw, w, bs, 1, 0, a, rq, b);
    } else if (two) {
      left |= packed_avx2(d, x, NULL, w, bs, 2, 0, a, rq, b);
    } else {
      left |= packed_avx2(d, x, NULL, w, bs, 1, 0, a, rq, b);
    }
  }
  return left;
}

/* ---- the requantization of a block -----------------------------------------
 * TFLite's MultiplyByQuantizedMultiplier for eight lanes at once, exactly
 * as conv_s8.h's requant_exact does it for a multiplier M >= 0 and a
 * shift -r in [-31, 0] (every real multiplier below 1): on |x| and the
 * sign, h = (|x| * M + 2^30 - [x < 0]) >> 31 in 64 bits (vpmuludq on the
 * even lanes, then on the odd ones), then +-((h + 2^(r-1)) >> r), the
 * output offset added with a wrapping add, clamped. Per lane the same
 * integers as the scalar call; eight lanes in about as many instructions
 * as one scalar call takes, which was a quarter of the anomaly detector's
 * time (its layers have 128 outputs for 128 inputs). */
/* requant8: above, with the packed form */

/* Eight lanes of a block (a, bias, mult and shift at the half's first),
 * cnt of them in use (the rest masked to 0: x 0, M 0, r 0), requantized;
 * *bad gets the lanes' sign bits of M < 0, or a shift > 0 or < -31. a's
 * lanes in halves of four: the dot4 row sums were stored four at a time,
 * and a load spanning two stores would wait for both to retire. */
AVX2 static inline __attribute__((always_inline)) __m256i requant_half(
    const uint32_t *a, const int32_t *bias, const int32_t *mult,
    const int32_t *shift, int pc, int32_t cnt, int32_t off, int32_t lo,
    int32_t hi, unsigned *bad) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt), iota);
  __m256i x = _mm256_and_si256(
      _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a)),
          _mm_loadu_si128((const __m128i *)(a + 4)), 1),
      in);
  if (bias) x = _mm256_add_epi32(x, _mm256_maskload_epi32(bias, in));
  const __m256i m = pc ? _mm256_maskload_epi32(mult, in)
                       : _mm256_and_si256(_mm256_set1_epi32(mult[0]), in);
  const __m256i sh = pc ? _mm256_maskload_epi32(shift, in)
                        : _mm256_and_si256(_mm256_set1_epi32(shift[0]), in);
  *bad |= (unsigned)_mm256_movemask_epi8(_mm256_or_si256(
      _mm256_or_si256(m, _mm256_cmpgt_epi32(sh, zero)),
      _mm256_cmpgt_epi32(_mm256_set1_epi32(-31), sh)));
  return requant8(x, m, _mm256_sub_epi32(zero, sh), _mm256_set1_epi32(off),
                  _mm256_set1_epi32(lo), _mm256_set1_epi32(hi));
}

AVX2 __attribute__((noinline)) int tn__crt_dense_requant_avx2(
    const uint32_t *a, const int32_t *bias, const int32_t *mult,
    const int32_t *shift, int pc, int32_t len, int32_t off, int32_t lo,
    int32_t hi, int8_t *out) {
  /* Read in place; the two halves in registers (an array of them would
   * live in memory, and the packs below wait for its stores) */
  unsigned bad = 0;
  const __m256i v0 = requant_half(a, bias, mult, shift, pc, len, off, lo, hi,
                                  &bad);
  const __m256i v1 =
      len > 8 ? requant_half(a + 8, bias ? bias + 8 : NULL, pc ? mult + 8 : mult,
                             pc ? shift + 8 : shift, pc, len - 8, off, lo, hi,
                             &bad)
              : _mm256_setzero_si256();
  /* sign bits only: M < 0 sets bit 31, and each compare all 32 bits */
  if (bad & 0x88888888u) return 0;
  /* within [lo, hi] of int8: the saturating packs only narrow */
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1),
                                             0xd8);
  const __m128i r = _mm_packs_epi16(_mm256_castsi256_si128(p),
                                    _mm256_extracti128_si256(p, 1));
  if (len == 16) {
    _mm_storeu_si128((__m128i *)out, r);
  } else {
    int8_t res[16];
    _mm_storeu_si128((__m128i *)res, r);
    memcpy(out, res, (size_t)len);
  }
  return 1;
}

/* ---- AVX-512 VNNI ----------------------------------------------------------
 * vpdpbusd multiplies unsigned by signed bytes, four to a 32-bit lane, and
 * adds the four products to the lane, wrapping (vpdpbusds would saturate
 * there, and the sums would no longer be the portable sums mod 2^32). x
 * is signed: x ^ 0x80 is the unsigned x + 128, so with fo == 0
 *   sum((x + io) * w) = sum((x + 128) * w) + (io - 128) * sum(w)  (mod 2^32)
 * and sum(w) comes from a second vpdpbusd with bytes of 1. Sixty-four
 * bytes of K per instruction; the tail with masked loads (the masked
 * weights are zero, so the lanes add nothing). */
#define VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))


/* The four rows' sums of 16 lanes each, as s[0 .. 3]: each folded to
 * four lanes, then the four added across (vphaddd twice); a fifth of the
 * instructions of four _mm512_reduce_add_epi32, which a short row (the
 * anomaly detector's K = 128: two vpdpbusd a row) spent more time in
 * than in its products. */
VNNI static inline __attribute__((always_inline)) __m128i sum4(__m512i a0,
                                                               __m512i a1,
                                                               __m512i a2,
                                                               __m512i a3) {
#define FOLD(a)                                                           \
  _mm_add_epi32(                                                          \
      _mm256_castsi256_si128(_mm256_add_epi32(                            \
          _mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1))),   \
      _mm256_extracti128_si256(                                           \
          _mm256_add_epi32(_mm512_castsi512_si256(a),                     \
                           _mm512_extracti64x4_epi64(a, 1)),              \
          1))
  const __m128i f0 = FOLD(a0), f1 = FOLD(a1), f2 = FOLD(a2), f3 = FOLD(a3);
#undef FOLD
  return _mm_hadd_epi32(_mm_hadd_epi32(f0, f1), _mm_hadd_epi32(f2, f3));
}

/* The four rows with the correction (io - shift) * sum(w), which needs
 * sum(w) per row (corr: a second vpdpbusd per row with bytes of 1), or
 * without it where it is 0 (!corr: io = 128, an input zero point of
 * -128, as after a ReLU: half the vpdpbusd). */
VNNI static inline __attribute__((always_inline)) void vnni_rows(
    const Dense *d, const int8_t *x, const int8_t *w, uint32_t *s, int sat,
    uint32_t shift, int corr) {
  const int32_t kk = d->p->in_features;
  const ptrdiff_t sn = d->p->w_stride_n;
  const int8_t *w0 = w, *w1 = w + sn, *w2 = w + 2 * sn, *w3 = w + 3 * sn;
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const __m512i one = _mm512_set1_epi8(1);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  __m512i c0 = a0, c1 = a0, c2 = a0, c3 = a0;
#define DP(acc, u, v) \
  (sat ? _mm512_dpbusds_epi32(acc, u, v) : _mm512_dpbusd_epi32(acc, u, v))
  for (int32_t k = 0; k < kk; k += 64) {
    const __mmask64 m =
        kk - k >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (kk - k)) - 1;
    const __m512i u =
        _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + k), flip);
    const __m512i v0 = _mm512_maskz_loadu_epi8(m, w0 + k);
    const __m512i v1 = _mm512_maskz_loadu_epi8(m, w1 + k);
    const __m512i v2 = _mm512_maskz_loadu_epi8(m, w2 + k);
    const __m512i v3 = _mm512_maskz_loadu_epi8(m, w3 + k);
    a0 = DP(a0, u, v0), a1 = DP(a1, u, v1);
    a2 = DP(a2, u, v2), a3 = DP(a3, u, v3);
    if (corr) {
      c0 = _mm512_dpbusd_epi32(c0, one, v0);
      c1 = _mm512_dpbusd_epi32(c1, one, v1);
      c2 = _mm512_dpbusd_epi32(c2, one, v2);
      c3 = _mm512_dpbusd_epi32(c3, one, v3);
    }
  }
#undef DP
  __m128i r = sum4(a0, a1, a2, a3);
  if (corr)
    r = _mm_add_epi32(r, _mm_mullo_epi32(sum4(c0, c1, c2, c3),
                                         _mm_set1_epi32((int32_t)(
                                             (uint32_t)d->io - shift))));
  _mm_storeu_si128((__m128i *)s, r);
}

VNNI __attribute__((noinline)) void tn__crt_dense_dot4_vnni(const Dense *d,
                                                            const int8_t *x,
                                                            const int8_t *w,
                                                            uint32_t *s) {
  switch (__atomic_load_n(&vnni_fault, __ATOMIC_RELAXED)) {
  case 1: /* the 128 * sum(w) correction left out */
    vnni_rows(d, x, w, s, 0, 0, 1);
    break;
  case 2: /* the saturating vpdpbusds */
    vnni_rows(d, x, w, s, 1, 128, d->io != 128);
    break;
  default:
    if (d->io == 128)
      vnni_rows(d, x, w, s, 0, 128, 0);
    else
      vnni_rows(d, x, w, s, 0, 128, 1);
  }
}

/* requant8 with AVX-512: sixteen lanes, the same operations per lane. */
#define BLEND16(e, o) _mm512_mask_blend_epi32(0xaaaa, e, o)
VNNI static inline __attribute__((always_inline)) __m512i requant16(
    __m512i x, __m512i m, __m512i r, __m512i off, __m512i lo, __m512i hi) {
  REQUANT_LANES(__m512i, _mm512_, si512, set1_epi64, BLEND16);
}
#undef BLEND16

VNNI __attribute__((noinline)) int tn__crt_dense_requant_avx512(
    const uint32_t *a, const int32_t *bias, const int32_t *mult,
    const int32_t *shift, int pc, int32_t len, int32_t off, int32_t lo,
    int32_t hi, int8_t *out) {
  /* the lanes past len masked to 0 (x 0, M 0, r 0), none stored */
  const __mmask16 k = (__mmask16)((1u << len) - 1);
  const __m512i zero = _mm512_setzero_si512();
  __m512i x = _mm512_maskz_loadu_epi32(k, a);
  if (bias) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(k, bias));
  const __m512i m = pc ? _mm512_maskz_loadu_epi32(k, mult)
                       : _mm512_maskz_mov_epi32(k, _mm512_set1_epi32(mult[0]));
  const __m512i sh = pc ? _mm512_maskz_loadu_epi32(k, shift)
                        : _mm512_maskz_mov_epi32(k, _mm512_set1_epi32(shift[0]));
  /* M < 0, or a shift > 0 or < -31: the scalar call's */
  if (_mm512_cmplt_epi32_mask(m, zero) | _mm512_cmpgt_epi32_mask(sh, zero) |
      _mm512_cmplt_epi32_mask(sh, _mm512_set1_epi32(-31)))
    return 0;
  /* within [lo, hi] of int8: the saturating narrowing only narrows */
  _mm512_mask_cvtsepi32_storeu_epi8(
      out, k,
      requant16(x, m, _mm512_sub_epi32(zero, sh), _mm512_set1_epi32(off),
                _mm512_set1_epi32(lo), _mm512_set1_epi32(hi)));
  return 1;
}

/* The packed layout with VNNI: a group of 16 features is one 64-byte row
 * of 16 int32 lanes, each a feature's 4 weights; the group's 4 input
 * bytes, XORed with 0x80 (x + 128, unsigned: the input offset is 128, as
 * PackDenseWeights leaves it), broadcast to every lane, and one vpdpbusd
 * adds the group's 64 products to the 16 features' sums: no correction,
 * no horizontal sum. Up to four blocks at once and two accumulators per
 * block (even and odd groups), so that up to eight independent vpdpbusd
 * chains hide the instruction's latency; a block narrower than 16 reads
 * its rows of 4 * len bytes under a mask. */
/* The block b's sums v (its lanes past len unused): requantized into
 * rq's outputs where rq is not NULL and the block's multipliers and
 * shifts allow, 0; otherwise stored into a + 16 * b for the caller, 1. */
VNNI static inline __attribute__((always_inline)) unsigned finish16(
    __m512i v, int b, __mmask16 k, const DenseRqSpan *rq, uint32_t *a) {
  if (rq != NULL) {
    const __m512i zero = _mm512_setzero_si512();
    const int32_t o = 16 * b;
    const __m512i m =
        rq->pc ? _mm512_maskz_loadu_epi32(k, rq->mult + o)
               : _mm512_maskz_mov_epi32(k, _mm512_set1_epi32(rq->mult[0]));
    const __m512i sh =
        rq->pc ? _mm512_maskz_loadu_epi32(k, rq->shift + o)
               : _mm512_maskz_mov_epi32(k, _mm512_set1_epi32(rq->shift[0]));
    if (!(_mm512_cmplt_epi32_mask(m, zero) | _mm512_cmpgt_epi32_mask(sh, zero) |
          _mm512_cmplt_epi32_mask(sh, _mm512_set1_epi32(-31)))) {
      if (rq->bias)
        v = _mm512_add_epi32(v, _mm512_maskz_loadu_epi32(k, rq->bias + o));
      _mm512_mask_cvtsepi32_storeu_epi8(
          rq->out + o, k,
          requant16(v, m, _mm512_sub_epi32(zero, sh),
                    _mm512_set1_epi32(rq->off), _mm512_set1_epi32(rq->lo),
                    _mm512_set1_epi32(rq->hi)));
      return 0;
    }
  }
  _mm512_mask_storeu_epi32(a + 16 * b, k, v);
  return 1;
}

VNNI static inline __attribute__((always_inline)) unsigned packed_vnni(
    const int8_t *x, int32_t whole, const int8_t *w, ptrdiff_t bs, int nb,
    int32_t len, uint32_t *a, uint32_t flip, const DenseRqSpan *rq) {
  const __mmask16 m = (__mmask16)((1u << len) - 1);
  const ptrdiff_t gs = 4 * (ptrdiff_t)len; /* bytes per group */
  /* named, not an array: gcc -O2 keeps an array of vectors in memory */
  __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0;
  __m512i o0 = e0, o1 = e0, o2 = e0, o3 = e0;
#define ROW(b, g) _mm512_maskz_loadu_epi32(m, w + (b) * bs + (g) * gs)
  int32_t k = 0;
  for (; k + 8 <= whole; k += 8, w += 2 * gs) {
    uint32_t x0, x1;
    memcpy(&x0, x + k, 4);
    memcpy(&x1, x + k + 4, 4);
    const __m512i u0 = _mm512_set1_epi32((int32_t)(x0 ^ flip));
    const __m512i u1 = _mm512_set1_epi32((int32_t)(x1 ^ flip));
    e0 = _mm512_dpbusd_epi32(e0, u0, ROW(0, 0));
    o0 = _mm512_dpbusd_epi32(o0, u1, ROW(0, 1));
    if (nb > 1) {
      e1 = _mm512_dpbusd_epi32(e1, u0, ROW(1, 0));
      o1 = _mm512_dpbusd_epi32(o1, u1, ROW(1, 1));
    }
    if (nb > 2) {
      e2 = _mm512_dpbusd_epi32(e2, u0, ROW(2, 0));
      o2 = _mm512_dpbusd_epi32(o2, u1, ROW(2, 1));
    }
    if (nb > 3) {
      e3 = _mm512_dpbusd_epi32(e3, u0, ROW(3, 0));
      o3 = _mm512_dpbusd_epi32(o3, u1, ROW(3, 1));
    }
    /* each accumulator stays in its register: without this gcc 12 -O2
     * gives the odd ones a second register and copies them to and fro
     * on every pass (eight vmovdqa a pass; the anomaly detector's layers
     * took 1.13x the time) */
    __asm__("" : "+v"(e0), "+v"(o0), "+v"(e1), "+v"(o1), "+v"(e2), "+v"(o2),
            "+v"(e3), "+v"(o3));
  }
  if (k < whole) {
    uint32_t x0;
    memcpy(&x0, x + k, 4);
    const __m512i u0 = _mm512_set1_epi32((int32_t)(x0 ^ flip));
    e0 = _mm512_dpbusd_epi32(e0, u0, ROW(0, 0));
    if (nb > 1) e1 = _mm512_dpbusd_epi32(e1, u0, ROW(1, 0));
    if (nb > 2) e2 = _mm512_dpbusd_epi32(e2, u0, ROW(2, 0));
    if (nb > 3) e3 = _mm512_dpbusd_epi32(e3, u0, ROW(3, 0));
  }
#undef ROW
  unsigned left = finish16(_mm512_add_epi32(e0, o0), 0, m, rq, a);
  if (nb > 1) left |= finish16(_mm512_add_epi32(e1, o1), 1, m, rq, a) << 1;
  if (nb > 2) left |= finish16(_mm512_add_epi32(e2, o2), 2, m, rq, a) << 2;
  if (nb > 3) left |= finish16(_mm512_add_epi32(e3, o3), 3, m, rq, a) << 3;
  return left;
}

VNNI __attribute__((noinline)) unsigned tn__crt_dense_packed_vnni(
    const Dense *d, const int8_t *x, const int8_t *w, int32_t nb, int32_t len,
    uint32_t *a, const DenseRqSpan *rq) {
  const int32_t kk = d->p->in_features, whole = kk & ~3;
  const ptrdiff_t bs = 16 * (ptrdiff_t)kk; /* bytes per block */
  const uint32_t flip =
      __atomic_load_n(&vnni_fault, __ATOMIC_RELAXED) == 3 ? 0 : 0x80808080u;
  switch (nb) { /* the number of blocks a constant in each copy */
  case 4:
    return packed_vnni(x, whole, w, bs, 4, 16, a, flip, rq);
  case 3:
    return packed_vnni(x, whole, w, bs, 3, 16, a, flip, rq);
  case 2:
    return packed_vnni(x, whole, w, bs, 2, 16, a, flip, rq);
  default:
    return packed_vnni(x, whole, w, bs, 1, len, a, flip, rq);
  }
}
/* The packed sums with AVX-VNNI (VEX vpdpbusd on ymm), io 128 and fo 0:
 * x ^ 0x80 is the unsigned x + 128, so each group's four inputs are one
 * broadcast whose products with a block's two ymm of 8 outputs by 4
 * inputs add into two accumulators, exactly and wrapping, as the sums
 * mod 2^32 of the portable form. One or two blocks take the even and odd
 * groups into accumulators of their own (four or eight chains, so that
 * the instruction's latency hides), three or four one each. */
#define AVXVNNI __attribute__((target("avx2,avxvnni")))
#define DP(acc, u, p) \
  acc = _mm256_dpbusd_avx_epi32(acc, u, _mm256_loadu_si256((const __m256i *)(p)))

AVXVNNI static inline __attribute__((always_inline)) void packed_vex(
    const int8_t *x, int32_t whole, const int8_t *w, ptrdiff_t bs, int nb,
    uint32_t flip, uint32_t *a) {
  /* named, not an array: gcc -O2 keeps an array of vectors in memory */
  __m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0;
  __m256i e4 = e0, e5 = e0, e6 = e0, e7 = e0;
  int32_t k = 0;
  if (nb <= 2) /* even groups into e0..e3, odd ones into e4..e7 */
    for (; k + 8 <= whole; k += 8, w += 128) {
      uint32_t x0, x1;
      memcpy(&x0, x + k, 4);
      memcpy(&x1, x + k + 4, 4);
      const __m256i u0 = _mm256_set1_epi32((int32_t)(x0 ^ flip));
      const __m256i u1 = _mm256_set1_epi32((int32_t)(x1 ^ flip));
      DP(e0, u0, w), DP(e1, u0, w + 32);
      DP(e4, u1, w + 64), DP(e5, u1, w + 96);
      if (nb > 1) {
        DP(e2, u0, w + bs), DP(e3, u0, w + bs + 32);
        DP(e6, u1, w + bs + 64), DP(e7, u1, w + bs + 96);
      }
    }
  for (; k < whole; k += 4, w += 64) {
    uint32_t x0;
    memcpy(&x0, x + k, 4);
    const __m256i u0 = _mm256_set1_epi32((int32_t)(x0 ^ flip));
    DP(e0, u0, w), DP(e1, u0, w + 32);
    if (nb > 1) DP(e2, u0, w + bs), DP(e3, u0, w + bs + 32);
    if (nb > 2) DP(e4, u0, w + 2 * bs), DP(e5, u0, w + 2 * bs + 32);
    if (nb > 3) DP(e6, u0, w + 3 * bs), DP(e7, u0, w + 3 * bs + 32);
  }
  if (nb <= 2) {
    e0 = _mm256_add_epi32(e0, e4), e1 = _mm256_add_epi32(e1, e5);
    e2 = _mm256_add_epi32(e2, e6), e3 = _mm256_add_epi32(e3, e7);
  }
  const __m256i v[8] = {e0, e1, e2, e3, e4, e5, e6, e7};
  for (int i = 0; i < 2 * nb; i++)
    _mm256_storeu_si256((__m256i *)(a + 8 * i), v[i]);
}
#undef DP

AVXVNNI __attribute__((noinline)) void tn__crt_dense_packed_avxvnni(
    const Dense *d, const int8_t *x, const int8_t *w, int32_t nb,
    uint32_t *a) {
  const int32_t whole = d->p->in_features & ~3;
  const ptrdiff_t bs = 16 * (ptrdiff_t)d->p->in_features; /* block bytes */
  /* (tn__crt_dense_vnni_fault 3: the inputs without the XOR) */
  const uint32_t flip =
      __atomic_load_n(&vnni_fault, __ATOMIC_RELAXED) == 3 ? 0 : 0x80808080u;
  switch (nb) { /* the number of blocks a constant in each copy */
  case 4: packed_vex(x, whole, w, bs, 4, flip, a); return;
  case 3: packed_vex(x, whole, w, bs, 3, flip, a); return;
  case 2: packed_vex(x, whole, w, bs, 2, flip, a); return;
  default: packed_vex(x, whole, w, bs, 1, flip, a); return;
  }
}
#else
typedef int tn__crt_unused_x86_dense_s8; /* no AVX2 forms */
#endif
