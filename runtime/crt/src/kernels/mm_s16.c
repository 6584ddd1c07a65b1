/*
 * mm_s16.c: TFLite's 16x8 products beyond CONV_2D and FULLY_CONNECTED, and
 * its int8 DIV.
 *
 * BATCH_MATMUL on int16 operands (zero points 0) and TRANSPOSE_CONV on int16
 * data with an int8 filter write their int64 sums, as TFLite Micro's
 * reference kernels accumulate them (BatchMatMul<int16_t, int64_t> and the
 * int64 scratch of its 16x8 transpose_conv.cc); the int64 bias and the
 * per-channel requantization to int16 follow as their own calls, as for an
 * unfused 16x8 qnn.conv2d. Integer sums do not depend on their order, so
 * the walks are free to visit the terms as suits them.
 *
 * DIV on int8 is reference/div.h's DivElementwise: the divisor's reciprocal
 * by gemmlowp's Newton-Raphson (GetReciprocal), the dividend normalised by
 * its leading sign bits, one doubling high multiply by the reciprocal and
 * one by the output multiplier, then a rounding right shift by a total
 * that can fall outside [0, 31]: for a dividend of 0 or -1 (31 sign bits),
 * for a zero divisor and for large multipliers. TFLite Micro leaves those
 * shifts undefined; its installed x86-64 build computes the mask in 64
 * bits from the shift modulo 64 and shifts the int32 value by the shift
 * modulo 32 (sweeping every int8 pair of several quantizations agrees with
 * exactly that), and div_shift below does the same on every target. The
 * multiplier is s_lhs / (s_rhs * s_out) in double: the wheel's, though the
 * source reads it as a float quotient.
 */
#include <stddef.h>
#include <stdint.h>

#include "binary_walk.h"
#include "call.h"
#include "fixed_point.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

/* ---- BATCH_MATMUL, int16 ------------------------------------------------- */

TnCrtStatus tn_crt_bmm_s16_s64(const TnCrtBatchMatmul *p, const int16_t *a,
                               const int16_t *b, int64_t *out) {
  if (p == NULL || a == NULL || b == NULL || out == NULL || p->ndim < 1 ||
      p->ndim > 4 || p->m <= 0 || p->n <= 0 || p->k <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  int32_t count = 1;
  for (int32_t d = 0; d < p->ndim; d++) {
    if (p->dims[d] <= 0) return TN_CRT_INVALID_ARGUMENT;
    count *= p->dims[d];
  }
  for (int32_t flat = 0; flat < count; flat++) {
    /* the batch's offsets: its index digits times each operand's strides */
    ptrdiff_t base_a = 0, base_b = 0;
    for (int32_t d = p->ndim - 1, rest = flat; d >= 0; d--) {
      base_a += (ptrdiff_t)(rest % p->dims[d]) * p->a_strides[d];
      base_b += (ptrdiff_t)(rest % p->dims[d]) * p->b_strides[d];
      rest /= p->dims[d];
    }
    for (int32_t r = 0; r < p->m; r++)
      for (int32_t c = 0; c < p->n; c++) {
        const int16_t *x = a + base_a + (ptrdiff_t)r * p->a_stride_m;
        const int16_t *y = b + base_b + (ptrdiff_t)c * p->b_stride_n;
        int64_t acc = 0;
        for (int32_t i = 0; i < p->k; i++, x += p->a_stride_k,
                     y += p->b_stride_k)
          acc += (int32_t)*x * (int32_t)*y;
        *out++ = acc;
      }
  }
  return TN_CRT_OK;
}

/* ---- TRANSPOSE_CONV, int16 data and int8 filter -------------------------- */

TnCrtStatus tn_crt_conv2d_transpose_s16_s64(const TnCrtConvTranspose *p,
                                            const int16_t *in,
                                            const int8_t *w, int64_t *out) {
  if (p == NULL || in == NULL || w == NULL || out == NULL || p->batch <= 0 ||
      p->in_h <= 0 || p->in_w <= 0 || p->in_c <= 0 || p->out_h <= 0 ||
      p->out_w <= 0 || p->out_c <= 0 || p->k_h <= 0 || p->k_w <= 0 ||
      p->stride_h <= 0 || p->stride_w <= 0)
    return TN_CRT_INVALID_ARGUMENT;
  const int64_t total = (int64_t)p->batch * p->out_h * p->out_w * p->out_c;
  if (total > INT32_MAX) return TN_CRT_OVERFLOW;
  memset(out, 0, (size_t)total * sizeof(int64_t));
  /* the filter is OHWI: tap (fy, fx) of output channel oc for input
   * channel ic sits at ((oc * k_h + fy) * k_w + fx) * in_c + ic */
  const ptrdiff_t per_oc = (ptrdiff_t)p->k_h * p->k_w * p->in_c;
  for (int32_t n = 0; n < p->batch; n++)
    for (int32_t y = 0; y < p->in_h; y++)
      for (int32_t x = 0; x < p->in_w; x++, in += p->in_c)
        for (int32_t fy = 0; fy < p->k_h; fy++) {
          const int32_t oy = y * p->stride_h + fy - p->pad_top;
          if (oy < 0 || oy >= p->out_h) continue;
          for (int32_t fx = 0; fx < p->k_w; fx++) {
            const int32_t ox = x * p->stride_w + fx - p->pad_left;
            if (ox < 0 || ox >= p->out_w) continue;
            int64_t *o = out + (((ptrdiff_t)n * p->out_h + oy) * p->out_w +
                                ox) * p->out_c;
            const int8_t *tap = w + ((ptrdiff_t)fy * p->k_w + fx) * p->in_c;
            for (int32_t oc = 0; oc < p->out_c; oc++, tap += per_oc) {
              int64_t s = 0;
              for (int32_t ic = 0; ic < p->in_c; ic++)
                s += (int32_t)in[ic] * (int32_t)tap[ic];
              o[oc] += s;
            }
          }
        }
  return TN_CRT_OK;
}

/* ---- DIV, int8 --------------------------------------------------------------- */

TnCrtStatus tn_crt_qdiv_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out) {
  if (out == NULL) return TN_CRT_INVALID_ARGUMENT;
  const double s[3] = {lhs_scale, rhs_scale, out_scale};
  const int32_t z[3] = {lhs_zp, rhs_zp, out_zp};
  float f[3];
  for (int i = 0; i < 3; i++) {
    /* a positive finite float scale and an int8 zero point */
    f[i] = (float)s[i];
    if (!(s[i] > 0.0) || !(f[i] > 0.0f) || f[i] - f[i] != 0.0f ||
        z[i] < -128 || z[i] > 127)
      return TN_CRT_INVALID_ARGUMENT;
  }
  int32_t m, sh;
  TnCrtStatus st = tn_crt_quantize_multiplier(
      (double)f[0] / ((double)f[1] * (double)f[2]), &m, &sh);
  if (st != TN_CRT_OK) return st;
  const TnCrtQBinary q = {.lhs_offset = -lhs_zp, .rhs_offset = -rhs_zp,
                          .output_offset = out_zp, .output_multiplier = m,
                          .output_shift = sh, .act_min = -128,
                          .act_max = 127};
  *out = q;
  return TN_CRT_OK;
}

static int32_t wrapping_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* x >> s for s in [0, 31], arithmetic whatever the compiler's choice. */
static int32_t shift_right(int32_t x, int32_t s) {
  return x < 0 ? ~(int32_t)((uint32_t)~x >> s) : (int32_t)((uint32_t)x >> s);
}

/* gemmlowp's RoundingDivideByPOT(x, e) for any e, as the wheel runs it:
 * the mask (1 << e) - 1 taken in 64 bits with e modulo 64 and cut to 32,
 * the shift of x by e modulo 32 (see the head of this file). */
static int32_t div_shift(int32_t x, int32_t e) {
  const int32_t mask =
      (int32_t)(uint32_t)((UINT64_C(1) << ((uint32_t)e & 63u)) - 1u);
  const int32_t threshold = shift_right(mask, 1) + (x < 0 ? 1 : 0);
  return wrapping_add(shift_right(x, (int32_t)((uint32_t)e & 31u)),
                      (x & mask) > threshold ? 1 : 0);
}

/* The number of leading zero bits of v (32 for 0). */
static int32_t leading_zeros(uint32_t v) {
  int32_t n = 0;
  if (v == 0) return 32;
  while (!(v & 0x80000000u)) v <<= 1, n++;
  return n;
}

/* CountLeadingSignBits: the bits after the sign bit equal to it (31 for 0
 * and -1). */
static int32_t sign_bits(int32_t v) {
  const uint32_t u = v < 0 ? ~(uint32_t)v : (uint32_t)v;
  return u == 0 ? 31 : leading_zeros(u) - 1;
}

/* GetReciprocal(d, 31): 1 / d as a Q0.31 fraction of 2^-bits_over_unit,
 * from d's bits below its leading one (for d = 0, whose leading-zero count
 * 32 shifts nothing on the wheel's build, from -1). */
static int32_t reciprocal(int32_t d, int32_t *bits_over_unit) {
  const int32_t lz = leading_zeros((uint32_t)d);
  *bits_over_unit = 31 - lz;
  const uint32_t scaled = (uint32_t)d << (lz & 31);
  return tn__crt_one_over_one_plus_x((int32_t)(scaled - 0x80000000u));
}

static int8_t div_one(const TnCrtQBinary *p, int32_t a, int32_t b) {
  int32_t x = a + p->lhs_offset, y = b + p->rhs_offset;
  if (y < 0) x = -x, y = -y;
  int32_t bits;
  const int32_t inv = reciprocal(y, &bits);
  const int32_t head = sign_bits(x);
  /* x * 2^head fits by construction (wrapping only for -1 << 31) */
  const int32_t q = tn_crt_srdhm((int32_t)((uint32_t)x << head), inv);
  const int32_t total = p->output_shift - bits - head;
  const int32_t r = wrapping_add(
      div_shift(tn_crt_srdhm(q, p->output_multiplier), -total),
      p->output_offset);
  return (int8_t)(r < p->act_min ? p->act_min : r > p->act_max ? p->act_max
                                                                : r);
}

static void div_row(const void *p, const void *l, int32_t ls, const void *r,
                    int32_t rs, int32_t n, void *out) {
  const int8_t *a = (const int8_t *)l, *b = (const int8_t *)r;
  int8_t *o = (int8_t *)out;
  for (int32_t i = 0; i < n; i++)
    o[i] = div_one((const TnCrtQBinary *)p, a[(ptrdiff_t)i * ls],
                   b[(ptrdiff_t)i * rs]);
}

TnCrtStatus tn_crt_qdiv_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs,
                           int8_t *out) {
  if (p == NULL || p->act_min > p->act_max || p->act_min < -128 ||
      p->act_max > 127)
    return TN_CRT_INVALID_ARGUMENT;
  return tn__crt_binary_walk(b, 1, lhs, rhs, out, div_row, p);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(bmm_s16_s64, TnCrtCallBmmS32) {
  return tn_crt_bmm_s16_s64(&p->g, in[0], in[1], out);
}
TN_CRT_CALL(conv2d_transpose_s16_s64, TnCrtCallConvTransposeS32) {
  return tn_crt_conv2d_transpose_s16_s64(&p->g, in[0], in[1], out);
}
TN_CRT_CALL(qdiv_s8, TnCrtCallQBinary) {
  return tn_crt_qdiv_s8(&p->q, &p->b, in[0], in[1], out);
}
