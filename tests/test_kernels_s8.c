/*
 * test_kernels_s8.c: the crt's int8 kernels against references written here
 * as plain loops from TFLite's published semantics (a seven-loop
 * convolution with explicit bounds checks accumulating in int64, dense and
 * pooling likewise, the ADD/MUL/QUANTIZE formulas, and TFLite's softmax,
 * logistic and tanh with gemmlowp's fixed-point exp and reciprocal written
 * again below, and MEAN's QuantizedMeanOrSum), on shapes drawn from fixed
 * seeds so that a failure names a case to replay. The fixed-point helpers are checked on hand-computed
 * cases and against exact int64 formulas, and the references use them only
 * where TFLite's semantics do (the requantization of an accumulator).
 * Golden vectors produced by TFLite Micro's own reference kernels pin the
 * transcendental ops, and float versions bound them (softmax within 1/256,
 * logistic and tanh within one step). Every layout and edge a kernel
 * distinguishes is drawn, and bad arguments come back as the right status.
 */
#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernel_test.h"
#include "tvmnode/crt/calls.h"


static int8_t *rand_s8(KtRng *r, int64_t n, int lo, int hi) {
  int8_t *p = xalloc((size_t)n);
  for (int64_t i = 0; i < n; i++) p[i] = (int8_t)kt_int(r, lo, hi);
  return p;
}
static int32_t clamp_i(int64_t v, int32_t lo, int32_t hi) {
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}
/* A zero point, now and then at the extremes. */
static int32_t rand_zp(KtRng *r) {
  int k = kt_int(r, 0, 5);
  return k == 0 ? -128 : k == 1 ? 127 : kt_int(r, -128, 127);
}
static double rand_log2(KtRng *r, double lo, double hi) {
  return exp2(lo + (hi - lo) * kt_float(r, 0, 1));
}
static void quantize(double m, int32_t *mult, int32_t *shift) {
  KT_CHECK_OK(tn_crt_quantize_multiplier(m, mult, shift));
}

/* ------------------------------------------------------------------------ */
/* Fixed point                                                                */
/* ------------------------------------------------------------------------ */

/* floor(a / 2^k) for int64 a. */
static int64_t floor_pot(int64_t a, int k) {
  return a >= 0 ? a >> k : -((-a + ((INT64_C(1) << k) - 1)) >> k);
}
/* round(a * b / 2^31), ties upward (ARM's VQRDMULH), saturated. */
static int32_t exact_srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  return (int32_t)floor_pot((int64_t)a * b + (INT64_C(1) << 30), 31);
}
/* round(x / 2^e), ties away from zero. */
static int32_t exact_rdbpot(int32_t x, int e) {
  if (e == 0) return x;
  int64_t h = INT64_C(1) << (e - 1);
  return (int32_t)(x >= 0 ? floor_pot((int64_t)x + h, e)
                          : -floor_pot(-(int64_t)x + h, e));
}

START_TEST(test_fixed_point_hand) {
  /* SRDHM: the one saturating product, and ties (0.5 up to 1, -0.5 up to
   * 0, 1.5 to 2, -1.5 to -1). */
  static const int32_t srdhm[][3] = {
      {INT32_MIN, INT32_MIN, INT32_MAX}, {INT32_MIN, INT32_MAX, -INT32_MAX},
      {1 << 15, 1 << 15, 1}, {-(1 << 15), 1 << 15, 0}, {3 << 14, 1 << 16, 2},
      {-(3 << 14), 1 << 16, -1}, {1 << 30, 1 << 30, 1 << 29}};
  for (size_t i = 0; i < sizeof srdhm / sizeof srdhm[0]; i++)
    EXPECT(tn_crt_srdhm(srdhm[i][0], srdhm[i][1]) == srdhm[i][2],
           "srdhm(%d, %d)", srdhm[i][0], srdhm[i][1]);
  /* RoundingDivideByPOT: ties away from zero on both sides; exponents 0
   * and 31. */
  static const int32_t rdbpot[][3] = {
      {5, 1, 3}, {-5, 1, -3}, {6, 2, 2}, {-6, 2, -2}, {-7, 2, -2},
      {-5, 2, -1}, {12345, 0, 12345}, {INT32_MIN, 0, INT32_MIN},
      {INT32_MAX, 31, 1}, {1 << 30, 31, 1}, {(1 << 30) - 1, 31, 0},
      {-(1 << 30), 31, -1}, {-(1 << 30) + 1, 31, 0}, {INT32_MIN, 31, -1}};
  for (size_t i = 0; i < sizeof rdbpot / sizeof rdbpot[0]; i++)
    EXPECT(tn_crt_rounding_divide_by_pot(rdbpot[i][0], rdbpot[i][1]) ==
               rdbpot[i][2], "rdbpot(%d, %d)", rdbpot[i][0], rdbpot[i][1]);
  /* MultiplyByQuantizedMultiplier, TFLite's results: left shift first,
   * rounding right shift after. */
  static const int32_t mbqm[][4] = {
      {100, 1 << 30, 1, 100}, {100, 1 << 30, 0, 50}, {3, 1 << 30, -1, 1},
      {-3, 1 << 30, -1, -1}, {-12345, 1518500250, -5, -273},
      {77777, 1073741825, 3, 311108}};
  for (size_t i = 0; i < sizeof mbqm / sizeof mbqm[0]; i++)
    EXPECT(tn_crt_multiply_by_quantized_multiplier(mbqm[i][0], mbqm[i][1],
                                                   mbqm[i][2]) == mbqm[i][3],
           "mbqm(%d, %d, %d)", mbqm[i][0], mbqm[i][1], mbqm[i][2]);
  /* QuantizeMultiplier, with TFLite's own results for the same inputs. */
  static const struct {
    double m;
    int32_t mult, shift;
  } qm[] = {
      {0.0, 0, 0}, {1.0, 1073741824, 1}, {0.5, 1073741824, 0},
      {0.75, 1610612736, 0}, {3.0, 1610612736, 2},
      {1234.5, 1294467072, 11}, {0.0037, 2034096511, -8},
      {0x1p-32, 1073741824, -31}, /* the smallest kept */
      {0x1p-33, 0, 0}, {1e-10, 0, 0}, /* below 2^-32: flushed to zero */
      {1.0 - 0x1p-40, 1073741824, 1}, /* q * 2^31 rounds to 2^31 */
  };
  for (size_t i = 0; i < sizeof qm / sizeof qm[0]; i++) {
    int32_t m = -1, s = -1;
    KT_CHECK_OK(tn_crt_quantize_multiplier(qm[i].m, &m, &s));
    EXPECT(m == qm[i].mult && s == qm[i].shift, "QuantizeMultiplier(%.17g) = "
           "%d, %d, expected %d, %d", qm[i].m, m, s, qm[i].mult, qm[i].shift);
  }
  int32_t m, s;
  EXPECT_ST(tn_crt_quantize_multiplier(0x1p31, &m, &s), TN_CRT_UNSUPPORTED);
  const double bad[] = {-0.5, NAN, INFINITY};
  for (int i = 0; i < 3; i++)
    EXPECT_ST(tn_crt_quantize_multiplier(bad[i], &m, &s),
              TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_quantize_multiplier(0.5, NULL, &s),
            TN_CRT_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_fixed_point_random) {
  KtRng r = kt_rng(1);
  for (int i = 0; i < 20000; i++) {
    int32_t a = (int32_t)kt_next(&r), b = (int32_t)kt_next(&r);
    if (i % 5 == 0) b = a;
    EXPECT(tn_crt_srdhm(a, b) == exact_srdhm(a, b), "srdhm(%d, %d)", a, b);
    int e = kt_int(&r, 0, 31);
    EXPECT(tn_crt_rounding_divide_by_pot(a, e) == exact_rdbpot(a, e),
           "rdbpot(%d, %d)", a, e);
    /* Multipliers: within half a unit of the last place of m. */
    double v = rand_log2(&r, -31.5, 30.5);
    int32_t m, s;
    quantize(v, &m, &s);
    EXPECT(m >= (1 << 30) && s >= -31 && s <= 31, "QM(%g) = %d, %d", v, m, s);
    EXPECT(fabs(ldexp((double)m, s - 31) - v) <= ldexp(1.0, s - 32),
           "QM(%.17g) = %d, %d", v, m, s);
    /* MBQM is SRDHM after the left shift and RDBPOT after: the composition
     * as TFLite writes it, on values whose left shift does not overflow. */
    int32_t x = (int32_t)(kt_next(&r) >> 33) - (1 << 30);
    const int64_t pot = INT64_C(1) << (s > 0 ? s : 0);
    x = (int32_t)(x / pot);
    int32_t want = exact_rdbpot(exact_srdhm((int32_t)(x * pot), m),
                                s > 0 ? 0 : -s);
    EXPECT(tn_crt_multiply_by_quantized_multiplier(x, m, s) == want,
           "mbqm(%d, %d, %d)", x, m, s);
  }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Convolution and dense                                                      */
/* ------------------------------------------------------------------------ */

/* The 7-loop convolution, straight from TFLite's ConvPerChannel /
 * DepthwiseConvPerChannel: out channel co of group co / fpg reads that
 * group's input channels; taps outside the input are skipped. */
static void ref_conv(const TnCrtConv2d *p, const TnCrtQuant *q, int32_t io,
                     int32_t fo, const int8_t *in, const int8_t *w,
                     const int32_t *bias, int8_t *out8, int32_t *out32) {
  const int32_t cpg = p->in_c / p->groups, fpg = p->out_c / p->groups;
  const int32_t *is = p->in_strides, *ws = p->w_strides, *os = p->out_strides;
  for (int32_t n = 0; n < p->batch; n++)
    for (int32_t oy = 0; oy < p->out_h; oy++)
      for (int32_t ox = 0; ox < p->out_w; ox++)
        for (int32_t co = 0; co < p->out_c; co++) {
          int64_t acc = 0;
          for (int32_t ky = 0; ky < p->k_h; ky++)
            for (int32_t kx = 0; kx < p->k_w; kx++)
              for (int32_t ci = 0; ci < cpg; ci++) {
                int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
                int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
                if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w)
                  continue;
                int32_t c = co / fpg * cpg + ci;
                int64_t xv = in[n * is[0] + iy * is[1] + ix * is[2] + c * is[3]];
                int64_t wv = w[ky * ws[0] + kx * ws[1] + ci * ws[2] + co * ws[3]];
                acc += (xv + io) * (wv + fo);
              }
          if (bias) acc += bias[co];
          int64_t o = n * os[0] + oy * os[1] + ox * os[2] + co * os[3];
          if (out32) {
            out32[o] = (int32_t)acc;
            continue;
          }
          int32_t k = q->per_channel ? co : 0;
          int64_t v = tn_crt_multiply_by_quantized_multiplier(
                          (int32_t)acc, q->multiplier[k], q->shift[k]) +
                      (int64_t)q->output_offset;
          out8[o] = (int8_t)clamp_i(v, q->act_min, q->act_max);
        }
}

/* Strides of a compact 4-d tensor stored in the order `order` (a
 * permutation of the logical axes 0..3, outermost first) with logical
 * extents d. */
static void strides(const int32_t d[4], const int order[4], int32_t st[4]) {
  int32_t s = 1;
  for (int i = 3; i >= 0; i--) {
    st[order[i]] = s;
    s *= d[order[i]];
  }
}

/* Storage orders for strides(): NHWC or NCHW data; HWIO, OIHW or OHWI
 * weights. */
static const int nhwc[4] = {0, 1, 2, 3}, nchw[4] = {0, 3, 1, 2};
static const int hwio[4] = {0, 1, 2, 3}, oihw[4] = {3, 2, 0, 1},
                 ohwi[4] = {3, 0, 1, 2};

/* Random requantization parameters for `n` channels: multipliers of real
 * scales 2^lo .. 2^hi (large ones saturate the output). */
static void rand_quant(KtRng *r, TnCrtQuant *q, int32_t n, int32_t *mult,
                       int32_t *shift, double lo, double hi) {
  q->per_channel = kt_int(r, 0, 1);
  for (int32_t c = 0; c < (q->per_channel ? n : 1); c++)
    quantize(rand_log2(r, lo, hi), &mult[c], &shift[c]);
  q->multiplier = mult, q->shift = shift, q->scale = NULL;
  q->input_offset = -rand_zp(r);
  q->filter_offset = q->per_channel || kt_int(r, 0, 2) ? 0 : -rand_zp(r);
  q->output_offset = rand_zp(r);
  q->act_min = kt_int(r, 0, 3) ? -128 : kt_int(r, -128, 0);
  q->act_max = kt_int(r, 0, 3) ? 127 : kt_int(r, q->act_min, 127);
}

/* A convolution's operands for the geometry p: random input and weights,
 * a bias three times in four, and requantization parameters (q points
 * into mult and shift). */
typedef struct {
  int8_t *in, *w;
  int32_t *bias;
  int32_t mult[600], shift[600];
  TnCrtQuant q;
} ConvArgs;

static void rand_conv_args(KtRng *r, const TnCrtConv2d *p, ConvArgs *a) {
  int64_t ni = (int64_t)p->batch * p->in_h * p->in_w * p->in_c;
  int64_t nw = (int64_t)p->k_h * p->k_w * (p->in_c / p->groups) * p->out_c;
  a->in = rand_s8(r, ni, -128, 127), a->w = rand_s8(r, nw, -127, 127);
  a->bias = NULL;
  if (kt_int(r, 0, 3)) {
    a->bias = xalloc((size_t)p->out_c * sizeof *a->bias);
    for (int32_t c = 0; c < p->out_c; c++)
      a->bias[c] = kt_int(r, -30000, 30000);
  }
  rand_quant(r, &a->q, p->out_c, a->mult, a->shift, -14,
             kt_int(r, 0, 3) ? -7 : -2);
}

static void free_conv_args(ConvArgs *a) {
  free(a->in), free(a->w), free(a->bias);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_FORMS 1
#else
#define HAVE_AVX2_FORMS 0
#endif

/* The level tn_crt_isa reports is what the CPU has (gcc's own CPUID
 * reading): AVX2 forms exactly where the CPU has AVX2, and so on. */
static void check_isa_matches_cpu(void) {
  const int top = tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
#if HAVE_AVX2_FORMS
  __builtin_cpu_init();
  const int want = __builtin_cpu_supports("avx512vnni") &&
                           __builtin_cpu_supports("avx512bw")
                       ? TN_CRT_ISA_AVX512VNNI
                   : __builtin_cpu_supports("avx512bw") ? TN_CRT_ISA_AVX512BW
                   : __builtin_cpu_supports("avx2")     ? TN_CRT_ISA_AVX2
                   : __builtin_cpu_supports("sse4.1")   ? TN_CRT_ISA_SSE41
                                                        : TN_CRT_ISA_SSE2;
  ck_assert_int_eq(top & TN_CRT_ISA_LEVEL_MASK, want);
#else
  ck_assert_int_le(top & TN_CRT_ISA_LEVEL_MASK, TN_CRT_ISA_SSE2);
#endif
  /* a cap takes effect, the AVX-VNNI flag goes below AVX2, and a negative
   * level changes nothing */
  ck_assert_int_eq(tn_crt_isa_limit(TN_CRT_ISA_PORTABLE), TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa(), TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa_limit(-1), TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa(), TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa_limit(99), top);
#if HAVE_AVX2_FORMS
  /* the AVX-VNNI flag where the CPU has it, kept by a cap of AVX-512BW or
   * TN_CRT_ISA_AVX2_VNNI, dropped by one of AVX2 */
  /* CPUID leaf 7, subleaf 1, EAX bit 4: AVX-VNNI (read here, as clang 14's
   * __builtin_cpu_supports has no name for it) */
  unsigned a7 = 0, b7, c7, d7;
  const int has_avxvnni =
      __get_cpuid_count(7, 1, &a7, &b7, &c7, &d7) && (a7 & (1u << 4)) != 0;
  const int vex =
      has_avxvnni && (top & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX2
          ? TN_CRT_ISA_AVXVNNI
          : 0;
  ck_assert_int_eq(top & TN_CRT_ISA_AVXVNNI, vex);
  if ((top & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512BW)
    ck_assert_int_eq(tn_crt_isa_limit(TN_CRT_ISA_AVX512BW),
                     TN_CRT_ISA_AVX512BW | vex);
  if ((top & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX2) {
    ck_assert_int_eq(tn_crt_isa_limit(TN_CRT_ISA_AVX2), TN_CRT_ISA_AVX2);
    ck_assert_int_eq(tn_crt_isa_limit(TN_CRT_ISA_AVX2_VNNI),
                     TN_CRT_ISA_AVX2 | vex);
    ck_assert_int_eq(tn_crt_isa_limit(TN_CRT_ISA_SSE41 | TN_CRT_ISA_AVXVNNI),
                     TN_CRT_ISA_SSE41);
  }
  ck_assert_int_eq(tn_crt_isa_limit(99), top);
#endif
}

/* Runs `body` at every ISA level the CPU has, from the highest down to
 * the portable forms, then lifts the cap. */
#define EACH_ISA(body)                                                   \
  do {                                                                   \
    const int cpu_ = tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);            \
    const int top_ = cpu_ & TN_CRT_ISA_LEVEL_MASK;                       \
    for (int lv_ = top_; lv_ >= TN_CRT_ISA_PORTABLE; lv_--) {            \
      /* AVX2 twice where the CPU has AVX-VNNI: with its forms, then   \
       * without */                                                      \
      const int vx_ = lv_ == TN_CRT_ISA_AVX2 &&                          \
                      (cpu_ & TN_CRT_ISA_AVXVNNI) != 0;                  \
      for (int f_ = vx_; f_ >= 0; f_--) {                                \
        const int got_ =                                                 \
            tn_crt_isa_limit(lv_ | (f_ ? TN_CRT_ISA_AVXVNNI : 0));       \
        ck_assert_int_eq(got_ & TN_CRT_ISA_LEVEL_MASK, lv_);             \
        ck_assert_int_eq(got_ & TN_CRT_ISA_AVXVNNI,                      \
                         lv_ > TN_CRT_ISA_AVX2 || f_                     \
                             ? cpu_ & TN_CRT_ISA_AVXVNNI                 \
                             : 0);                                       \
        body;                                                            \
      }                                                                  \
    }                                                                    \
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);                             \
  } while (0)

/* Where conv_random counts the elements that differ from ref_conv instead
 * of failing at the first (NULL: it fails). */
static int *conv_count;

/* The layer p (one group, not 1x1, NHWC, filter offset 0) again through
 * tn_crt_conv2d_s8_packed, as the compiler gives it: the [out_c, k_h *
 * k_w * in_c] matrix packed by tn_crt_dense_s8_pack, (io - 128) * sum(w)
 * added to the bias; against want (conv_count as conv_random). */
static void conv_packed_kxk(const TnCrtConv2d *p, const TnCrtQuant *q,
                            const int8_t *in, const int8_t *w,
                            const int32_t *bias, const int8_t *want,
                            int64_t no) {
  const int32_t kk = p->k_h * p->k_w * p->in_c, nn = p->out_c;
  int8_t *m = xalloc((size_t)nn * kk), *wp = xalloc((size_t)nn * kk);
  int32_t *b = xalloc((size_t)nn * sizeof *b);
  for (int32_t o = 0; o < nn; o++) {
    uint32_t sum = 0;
    for (int32_t ky = 0; ky < p->k_h; ky++)
      for (int32_t kx = 0; kx < p->k_w; kx++)
        for (int32_t ci = 0; ci < p->in_c; ci++) {
          const int8_t v = w[(ptrdiff_t)ky * p->w_strides[0] +
                             (ptrdiff_t)kx * p->w_strides[1] +
                             (ptrdiff_t)ci * p->w_strides[2] +
                             (ptrdiff_t)o * p->w_strides[3]];
          m[(ptrdiff_t)o * kk + ((ptrdiff_t)ky * p->k_w + kx) * p->in_c + ci] =
              v;
          sum += (uint32_t)v;
        }
    b[o] = (int32_t)((bias ? (uint32_t)bias[o] : 0u) +
                     ((uint32_t)q->input_offset - 128u) * sum);
  }
  KT_CHECK_OK(tn_crt_dense_s8_pack(nn, kk, m, wp));
  const size_t ns = tn_crt_conv2d_s8_packed_scratch_size(p);
  void *scratch = xalloc(ns);
  int8_t *got = xalloc((size_t)no);
  KT_CHECK_OK(tn_crt_conv2d_s8_packed(p, q, in, wp, b, got, scratch, ns));
  for (int64_t i = 0; i < no && conv_count; i++)
    *conv_count += got[i] != want[i];
  for (int64_t i = 0; i < no && !conv_count; i++)
    EXPECT(got[i] == want[i], "packed conv %dx%d, %d to %d channels: element "
           "%lld is %d, expected %d", p->k_h, p->k_w, p->in_c, p->out_c,
           (long long)i, got[i], want[i]);
  free(m), free(wp), free(b), free(scratch), free(got);
}

/* `n` random convolutions from `seed` against ref_conv. wide: rows of 8
 * to 30 pixels, weights HWIO three times in four, so that many blocks of
 * 8 and 16 channels have runs of four pixels with whole windows (the AVX2
 * form of BCAST). wide == 2: 1x1 layers of one group, stride 1 two times
 * in three (else 1 to 3 on each axis), NHWC seven times in eight with
 * HWIO weights, 1 to 80 input and output channels and 1 to 91 pixels a
 * row or image (the 1x1 GEMM form). wide == 3: depthwise layers with
 * multiplier 1, NHWC and HWIO ([kh, kw, 1, c]), 1 to 80 channels (several
 * blocks of 16, then 8, 4 and 1 to 3, each set up from the window's taps
 * set once a call), windows of 1x1 to 5x5 and a few larger, a channel's
 * multiplier at least 1 now and then (a block whose requantization is
 * not the vectorised one). wide == 4: regular layers of one group as
 * ResNet's (two groups one time in four), NHWC and HWIO, 8 to 36 pixels
 * a row, 3x3 windows two times in three (else 1 to 4), stride 1 or 2,
 * dilation 2 one time in four, 1 to 40 input channels a group (a
 * multiple of 4 two times in three), 16 to 48 output channels a group
 * (the VNNI row form: tiles of 12, 8 and 4 pixels, runs with and without
 * a tail of 1 to 3 inputs; one group through a padded copy of the input
 * rows, two without). wide == 5: one group of 1 to 4 input channels,
 * kernels of up to 10 rows of up to 16 bytes, 32 to 150 output channels
 * (64 one time in three), strides 1 and 2, a dilated row now and then
 * (x86/conv_wide_s8.c's direct form, and what it leaves to the others).
 * wide == 6: depthwise layers as wide == 3 with 1 to 200 channels (64,
 * 128 or 192 one time in three), up to 12x12 inputs and windows up to
 * 5x5, and a multiplier of 2 or 3 one time in six (its DW form). Both
 * with wide == 3's multipliers. wide == 20: depthwise layers with
 * windows of 3 or 4 rows, rows of up to 48 pixels, 33 to 150 channels or
 * a multiple of 64 (x86/conv_wide_s8.c's column form), with wide == 3's
 * multipliers. wide == 40: layers of one group as ResNet-8's (IC's),
 * 3x3 three times in four, stride 1 or 2, 3, 16, 32 or 64 input channels
 * two times in three (else 1 to 64), 16, 32, 64, 8, 24, 40 or 48 output
 * channels three times in four (else 8 to 80), rows of 4 to 40 pixels
 * (the VNNI row form's tiles of 12, 8, 4 and 1 pixels, one block or two a
 * pass, each tile's requantization constants set once), batches of two
 * now and then; and those that are not 1x1 with a filter offset of 0
 * again with their weight packed as the compiler packs it
 * (tn_crt_conv2d_s8_packed: at AVX-512 VNNI the row form on the packed
 * blocks, the rest unpacked into scratch). */
static void conv_random(uint64_t seed, int n, int wide) {
  KtRng r = kt_rng(seed);
  int cases = 0;
  while (cases < n) {
    TnCrtConv2d p;
    memset(&p, 0, sizeof p);
    int kind = kt_int(&r, 0, 3); /* regular, grouped, depthwise, 1x1 */
    p.batch = kt_int(&r, 1, 2);
    p.in_h = kt_int(&r, 1, 7), p.in_w = kt_int(&r, 1, 7);
    if (wide) p.in_w = kt_int(&r, 8, 30);
    if (wide == 2) kind = 3, p.in_w = kt_int(&r, 1, 13);
    p.k_h = kind == 3 ? 1 : kt_int(&r, 1, 4);
    p.k_w = kind == 3 ? 1 : kt_int(&r, 1, 4);
    p.stride_h = kt_int(&r, 1, 3), p.stride_w = kt_int(&r, 1, 3);
    p.dilation_h = kt_int(&r, 1, 2), p.dilation_w = kt_int(&r, 1, 2);
    int32_t cpg, fpg;
    if (kind == 1) {
      p.groups = kt_int(&r, 2, 3), cpg = kt_int(&r, 2, 5);
      fpg = kt_int(&r, 1, 20);
    } else if (kind == 2) {
      p.groups = kt_int(&r, 1, 20), cpg = 1, fpg = kt_int(&r, 1, 3);
    } else {
      p.groups = 1, cpg = kt_int(&r, 1, 12), fpg = kt_int(&r, 1, 40);
    }
    if (wide == 3) {
      kind = 2, p.in_w = kt_int(&r, 1, 9);
      p.k_h = kt_int(&r, 1, kt_int(&r, 0, 7) ? 5 : 7);
      p.k_w = kt_int(&r, 1, kt_int(&r, 0, 7) ? 5 : 7);
      p.groups = kt_int(&r, 0, 2) ? kt_int(&r, 1, 80) : 16 * kt_int(&r, 1, 5);
      cpg = fpg = 1;
    }
    if (wide == 4) {
      kind = 0, p.groups = kt_int(&r, 0, 3) ? 1 : 2;
      p.in_w = kt_int(&r, 8, 36);
      p.in_h = kt_int(&r, 1, 5);
      p.k_h = p.k_w = kt_int(&r, 0, 2) ? 3 : kt_int(&r, 1, 4);
      p.stride_h = p.stride_w = kt_int(&r, 0, 2) ? 1 : 2;
      p.dilation_h = p.dilation_w = kt_int(&r, 0, 3) ? 1 : 2;
      cpg = kt_int(&r, 0, 2) ? 4 * kt_int(&r, 1, 10) : kt_int(&r, 1, 40);
      fpg = kt_int(&r, 0, 2) ? 16 * kt_int(&r, 1, 3) : kt_int(&r, 16, 48);
    }
    if (wide == 5) { /* few input channels, a large kernel */
      kind = 0, p.groups = 1, cpg = kt_int(&r, 1, 4);
      p.in_h = kt_int(&r, 1, 14), p.in_w = kt_int(&r, 1, 14);
      p.k_h = kt_int(&r, 1, 10), p.k_w = kt_int(&r, 1, 16 / cpg);
      p.stride_h = kt_int(&r, 1, 2), p.stride_w = kt_int(&r, 1, 2);
      p.dilation_w = kt_int(&r, 0, 7) ? 1 : 2;
      fpg = kt_int(&r, 0, 2) ? kt_int(&r, 32, 150) : 64;
    }
    if (wide == 7) { /* a last block of 8 channels (the large ResNet's 40) */
      kind = 0, p.groups = kt_int(&r, 0, 3) ? 1 : 2;
      p.in_w = kt_int(&r, 4, 36), p.in_h = kt_int(&r, 1, 5);
      p.k_h = p.k_w = kt_int(&r, 0, 2) ? 3 : kt_int(&r, 1, 4);
      p.stride_h = p.stride_w = kt_int(&r, 0, 2) ? 1 : 2;
      p.dilation_h = p.dilation_w = kt_int(&r, 0, 3) ? 1 : 2;
      /* up to 80 input channels: rows too wide for the padded copy too */
      cpg = kt_int(&r, 0, 2) ? 8 * kt_int(&r, 1, 10) : kt_int(&r, 1, 80);
      fpg = 16 * kt_int(&r, 0, 2) + 8 + (kt_int(&r, 0, 3) ? 0 : kt_int(&r, 1, 7));
    }
    if (wide == 9) { /* 32 channels and more: the row form's pairs */
      kind = 0, p.groups = 1, p.batch = kt_int(&r, 1, 2);
      p.in_w = kt_int(&r, 4, 30), p.in_h = kt_int(&r, 1, 5);
      p.k_h = p.k_w = kt_int(&r, 0, 2) ? 3 : kt_int(&r, 1, 5);
      p.stride_h = p.stride_w = kt_int(&r, 0, 2) ? 1 : 2;
      p.dilation_h = p.dilation_w = kt_int(&r, 0, 3) ? 1 : 2;
      cpg = kt_int(&r, 0, 2) ? 8 * kt_int(&r, 1, 10) : kt_int(&r, 1, 60);
      fpg = 32 * kt_int(&r, 1, 2) + (kt_int(&r, 0, 2) ? 0 : kt_int(&r, 1, 24));
    }
    if (wide == 40) { /* ResNet-8's 3x3 layers and their neighbours */
      kind = 0, p.groups = 1, p.batch = kt_int(&r, 1, 2);
      p.in_w = kt_int(&r, 4, 40), p.in_h = kt_int(&r, 1, 6);
      p.k_h = p.k_w = kt_int(&r, 0, 3) ? 3 : kt_int(&r, 1, 5);
      p.stride_h = p.stride_w = kt_int(&r, 0, 2) ? 1 : 2;
      p.dilation_h = p.dilation_w = kt_int(&r, 0, 5) ? 1 : 2;
      const int32_t ci[] = {3, 16, 32, 64};
      cpg = kt_int(&r, 0, 2) ? ci[kt_int(&r, 0, 3)] : kt_int(&r, 1, 64);
      const int32_t co[] = {16, 32, 64, 8, 24, 40, 48};
      fpg = kt_int(&r, 0, 3) ? co[kt_int(&r, 0, 6)] : kt_int(&r, 8, 80);
    }
    if (wide == 8) { /* depthwise, fewer than 64 channels, wide rows */
      kind = 2, p.in_h = kt_int(&r, 1, 8), p.in_w = kt_int(&r, 1, 40);
      p.k_h = kt_int(&r, 1, 5), p.k_w = kt_int(&r, 1, 5);
      p.groups = kt_int(&r, 0, 4) ? 1 << kt_int(&r, 0, 5) : kt_int(&r, 1, 63);
      if (kt_int(&r, 0, 3)) p.stride_w = 1;
      cpg = fpg = 1;
    }
    if (wide == 10) { /* depthwise, 8 to 56 channels, stride_w 2, wide rows */
      kind = 2, p.in_h = kt_int(&r, 1, 6), p.in_w = kt_int(&r, 1, 60);
      p.k_h = kt_int(&r, 1, 5), p.k_w = kt_int(&r, 1, 5);
      p.groups = kt_int(&r, 0, 3) ? 8 << kt_int(&r, 0, 2) : 8 * kt_int(&r, 1, 7);
      p.stride_w = kt_int(&r, 0, 4) ? 2 : 1, p.stride_h = kt_int(&r, 1, 2);
      cpg = fpg = 1;
    }
    if (wide == 20) { /* depthwise, windows of 3 or 4 rows, long rows */
      kind = 2, p.in_h = kt_int(&r, 1, 8), p.in_w = kt_int(&r, 1, 48);
      p.k_h = kt_int(&r, 3, 4), p.k_w = kt_int(&r, 1, 5);
      p.groups = kt_int(&r, 0, 2) ? 64 * kt_int(&r, 1, 3) : kt_int(&r, 33, 150);
      p.stride_w = kt_int(&r, 1, 2), p.stride_h = kt_int(&r, 1, 2);
      p.dilation_w = kt_int(&r, 0, 3) ? 1 : 2;
      p.dilation_h = kt_int(&r, 0, 3) ? 1 : 2;
      cpg = fpg = 1;
    }
    if (wide == 6) { /* depthwise, many channels, wider rows */
      kind = 2, p.in_h = kt_int(&r, 1, 12), p.in_w = kt_int(&r, 1, 12);
      p.k_h = kt_int(&r, 1, 5), p.k_w = kt_int(&r, 1, 5);
      p.groups = kt_int(&r, 0, 2) ? kt_int(&r, 1, 200) : 64 * kt_int(&r, 1, 3);
      cpg = 1, fpg = kt_int(&r, 0, 5) ? 1 : kt_int(&r, 2, 3);
    }
    if (wide == 2) {
      if (kt_int(&r, 0, 2)) p.stride_h = p.stride_w = 1;
      cpg = p.in_c = kt_int(&r, 0, 3) ? kt_int(&r, 1, 80) : kt_int(&r, 1, 7);
      fpg = kt_int(&r, 0, 3) ? kt_int(&r, 1, 80) : 16 * kt_int(&r, 1, 4);
    }
    p.in_c = p.groups * cpg, p.out_c = p.groups * fpg;
    int32_t eh = (p.k_h - 1) * p.dilation_h + 1;
    int32_t ew = (p.k_w - 1) * p.dilation_w + 1;
    p.pad_top = kt_int(&r, 0, eh - 1), p.pad_left = kt_int(&r, 0, ew - 1);
    p.out_h = (p.in_h + p.pad_top + kt_int(&r, 0, eh - 1) - eh) / p.stride_h + 1;
    p.out_w = (p.in_w + p.pad_left + kt_int(&r, 0, ew - 1) - ew) / p.stride_w + 1;
    if (p.out_h < 1 || p.out_w < 1) continue;
    cases++;
    /* NHWC or NCHW data; HWIO, OIHW or OHWI weights. */
    const int *dl = wide == 3 || wide == 4 || wide >= 6 || kt_int(&r, 0, wide == 2 ? 7 : 2)
                        ? nhwc : nchw;
    int wk = wide >= 2 ? 0 : wide && kt_int(&r, 0, 3) ? 0 : kt_int(&r, 0, 2);
    const int *wl = wk == 0 ? hwio : wk == 1 ? oihw : ohwi;
    int32_t di[4] = {p.batch, p.in_h, p.in_w, p.in_c};
    int32_t dw[4] = {p.k_h, p.k_w, cpg, p.out_c};
    int32_t dout[4] = {p.batch, p.out_h, p.out_w, p.out_c};
    strides(di, dl, p.in_strides);
    strides(dw, wl, p.w_strides);
    strides(dout, dl, p.out_strides);
    int64_t no = (int64_t)dout[0] * dout[1] * dout[2] * dout[3];
    ConvArgs ca;
    rand_conv_args(&r, &p, &ca);
    if ((wide == 3 || wide >= 5) && ca.q.per_channel && !kt_int(&r, 0, 3)) {
      const int32_t k = kt_int(&r, 0, p.out_c - 1);
      quantize(rand_log2(&r, 0, 3), &ca.mult[k], &ca.shift[k]);
    }
    const int8_t *in = ca.in, *w = ca.w;
    const int32_t *bias = ca.bias;
    const TnCrtQuant q = ca.q;
    int8_t *got = xalloc((size_t)no), *want = xalloc((size_t)no);
    int32_t *got32 = xalloc((size_t)no * 4), *want32 = xalloc((size_t)no * 4);
    KT_CHECK_OK(tn_crt_conv2d_s8(&p, &q, in, w, bias, got, NULL,
                                 tn_crt_conv2d_s8_scratch_size(&p)));
    ref_conv(&p, &q, q.input_offset, q.filter_offset, in, w, bias, want, NULL);
    for (int64_t i = 0; i < no && conv_count; i++)
      *conv_count += got[i] != want[i];
    for (int64_t i = 0; i < no && !conv_count; i++)
      EXPECT(got[i] == want[i], "conv case %d (kind %d): element %lld is %d, "
             "expected %d", cases, kind, (long long)i, got[i], want[i]);
    /* wide == 40: the layer with its weight packed at compile time too */
    if (wide == 40 && (p.k_h != 1 || p.k_w != 1) && q.filter_offset == 0)
      conv_packed_kxk(&p, &q, in, w, bias, want, no);
    KT_CHECK_OK(tn_crt_conv2d_s8_s32(&p, q.input_offset, q.filter_offset, in,
                                     w, bias, got32));
    ref_conv(&p, NULL, q.input_offset, q.filter_offset, in, w, bias, NULL,
             want32);
    for (int64_t i = 0; i < no && conv_count; i++)
      *conv_count += got32[i] != want32[i];
    for (int64_t i = 0; i < no && !conv_count; i++)
      EXPECT(got32[i] == want32[i], "conv_s32 case %d: element %lld is %d, "
             "expected %d", cases, (long long)i, got32[i], want32[i]);
    free_conv_args(&ca), free(got), free(want), free(got32), free(want32);
  }
}

START_TEST(test_conv_random) { conv_random(2, 600, 0); }
END_TEST

/* Wide rows: on an AVX2 machine, BCAST blocks of 8 and 16 channels take
 * the AVX2 form at four pixels at a time (strides, dilations, odd runs,
 * NCHW inputs, groups, zero points at both ends); the same cases through
 * the SSE2 and portable forms next. */
START_TEST(test_conv_random_wide) {
  check_isa_matches_cpu();
  EACH_ISA(conv_random(5, 400, 1));
}
END_TEST

#if HAVE_AVX2_FORMS
/* conv_s8.h (internal to the crt): breaks the VNNI form on purpose */
void tn__crt_conv_vnni_fault(int how);
void tn__crt_conv_avx2_fault(int how);
void tn__crt_conv_wide_fault(int how);
#endif

/* The wide cases through the VNNI form with its -128 * sum(w) left out:
 * outputs differ (where the CPU has AVX-512 VNNI), so the byte-for-byte
 * comparison of test_conv_random_wide would see a broken form; and the
 * count is 0 with the form put right. */
START_TEST(test_conv_vnni_broken_is_caught) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  int n = 0;
  conv_count = &n;
  tn__crt_conv_vnni_fault(1);
  conv_random(5, 100, 1);
  tn__crt_conv_vnni_fault(0);
  const int broken = n;
  n = 0;
  conv_random(5, 100, 1);
  conv_count = NULL;
  ck_assert_int_gt(broken, 0);
  ck_assert_int_eq(n, 0);
#endif
}
END_TEST

/* 1x1 layers at every level: most take the 1x1 GEMM form, at AVX-512
 * VNNI (tiles of 8, 4, 2 and 1 pixels; blocks of 32 and 16 channels;
 * input channel runs with and without a tail of 1 to 3 bytes) and at
 * AVX2 (tiles of 4 pixels by 16 channels, the last pixel repeated), the
 * rest of the channels in the other forms. */
START_TEST(test_conv_gemm_random) { EACH_ISA(conv_random(11, 300, 2)); }
END_TEST

/* The GEMM form with the tail of each input run (1 to 3 channels past the
 * last group of four) left out, and with the VNNI packing's -128 * sum(w)
 * left out: both are seen, and nothing is with the form put right. */
/* Depthwise layers at every level: blocks of 16 channels take the AVX2
 * form of DW, of 8 the SSE2 one, both from the window's taps set up once
 * a call, the rest (4, 1 to 3, windows larger than 5x5) the portable
 * form; the requantization constants of each block as the others. At
 * AVX-512 VNNI the whole layer takes x86/conv_wide_s8.c's DW form where
 * its multipliers allow. */
START_TEST(test_conv_dw_random) { EACH_ISA(conv_random(13, 400, 3)); }
END_TEST

/* At AVX-512 VNNI, depthwise layers of many channels take the DW form
 * of x86/conv_wide_s8.c (64 channels a pass, masked past the last
 * channel), and layers of few input channels and a large kernel its
 * direct form; at AVX2, depthwise layers of a multiple of 8 channels
 * take x86/conv_avx2_s8.c's (32 channels a pass, then 24, 16 or 8);
 * the other levels run the same cases through theirs. */
START_TEST(test_conv_dw_wide_random) { EACH_ISA(conv_random(23, 300, 6)); }
END_TEST

START_TEST(test_conv_direct_random) { EACH_ISA(conv_random(19, 300, 5)); }
END_TEST

/* Depthwise layers of 1 to 32 channels, a divisor of 64 mostly, at every
 * level: at AVX-512 VNNI, x86/conv_wide_s8.c's DW form takes 64 / C
 * neighbouring pixels a pass where their windows are whole (stride_w 1),
 * one pixel a pass at the borders. */
START_TEST(test_conv_dw_narrow_random) { EACH_ISA(conv_random(37, 300, 8)); }
END_TEST

/* Depthwise layers of 8, 16 or 32 channels (a multiple of 8 now and
 * then), stride_w 2 four times in five, rows of up to 60 pixels, at every
 * level: at AVX-512 VNNI, x86/conv_wide_s8.c's DW form takes 64 / C
 * pixels a pass where their windows are whole, each tap's inputs every
 * other run of C bytes of two loads, a row's last pixels fewer a pass. */
START_TEST(test_conv_dw_stride2_random) { EACH_ISA(conv_random(41, 300, 10)); }
END_TEST

/* Depthwise layers of windows of 3 or 4 rows, 33 to 150 channels (64,
 * 128 or 192 two times in three), rows of up to 48 pixels, strides 1 and
 * 2, dilations now and then, at every level: at AVX-512 VNNI,
 * x86/conv_wide_s8.c's column form (each input column under the window's
 * rows interleaved once for every pixel whose window covers it; rows of
 * more than 32 columns in several passes; border pixels in the same
 * loop). */
START_TEST(test_conv_dw_cols_random) { EACH_ISA(conv_random(43, 200, 20)); }
END_TEST

/* The column form with each window's last kernel column left out
 * (tn__crt_conv_wide_fault 1), and x86/conv_wide_s8.c's requantization
 * in float with its unsure lanes kept (2): each seen where the CPU has
 * AVX-512 VNNI, and nothing is with the forms put right. */
START_TEST(test_conv_dw_cols_broken_is_caught) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  for (int how = 2; how >= 0; how--) {
    int n = 0;
    conv_count = &n;
    tn__crt_conv_wide_fault(how);
    conv_random(43, 60, 20);
    tn__crt_conv_wide_fault(0);
    conv_count = NULL;
    if (how)
      ck_assert_msg(n > 0, "fault %d not seen", how);
    else
      ck_assert_int_eq(n, 0);
  }
#endif
}
END_TEST

#if HAVE_AVX2_FORMS
/* Where the CPU has AVX-512 VNNI, conv_random's cases with each of the
 * VNNI forms' faults how[0 .. n) (tn__crt_conv_vnni_fault), then with
 * none: each fault is seen, and nothing is with the forms put right. */
static void conv_faults_seen(const int *how, int n, uint64_t seed, int cases,
                             int wide) {
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  for (int i = 0; i <= n; i++) {
    int count = 0;
    conv_count = &count;
    tn__crt_conv_vnni_fault(i < n ? how[i] : 0);
    conv_random(seed, cases, wide);
    tn__crt_conv_vnni_fault(0);
    conv_count = NULL;
    if (i < n)
      ck_assert_msg(count > 0, "fault %d not seen", how[i]);
    else
      ck_assert_int_eq(count, 0);
  }
}
#endif

START_TEST(test_conv_gemm_broken_is_caught) {
#if HAVE_AVX2_FORMS
  conv_faults_seen((const int[]){2, 1, 5}, 3, 11, 100, 2);
#endif
}
END_TEST

/* ResNet-like layers at every level: at AVX-512 VNNI the runs of pixels
 * with whole windows take the row form, the border pixels the four-pixel
 * form with row pointers; at AVX2, layers of one group whole rows
 * through x86/conv_avx2_s8.c's row form (tiles of 6 pixels and a last
 * one of 1 to 5). */
START_TEST(test_conv_rows_random) { EACH_ISA(conv_random(17, 80, 4)); }
END_TEST

/* Capped at AVX2, the forms of x86/conv_avx2_s8.c broken on purpose
 * (tn__crt_conv_avx2_fault `how`) over `cases` of conv_random(seed, .,
 * wide): their outputs differ, and they do not with the forms put
 * right. */
static void avx2_broken_is_caught(int how, uint64_t seed, int cases,
                                  int wide) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX2) return;
  tn_crt_isa_limit(TN_CRT_ISA_AVX2);
  int n[2] = {0, 0};
  for (int broken = 1; broken >= 0; broken--) {
    conv_count = &n[broken];
    tn__crt_conv_avx2_fault(broken ? how : 0);
    conv_random(seed, cases, wide);
  }
  conv_count = NULL;
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  ck_assert_int_gt(n[1], 0);
  ck_assert_int_eq(n[0], 0);
#else
  (void)how, (void)seed, (void)cases, (void)wide;
#endif
}

/* Depthwise layers of a multiple of 8 channels take the layer form;
 * channel 31's io * sum(w) left out. */
START_TEST(test_conv_dw_avx2_broken_is_caught) {
  avx2_broken_is_caught(1, 23, 150, 6);
}
END_TEST

/* Depthwise layers not in place take all their rows in one call; the
 * last row given the window of the row above. */
START_TEST(test_conv_dw_avx2_rows_broken_is_caught) {
  avx2_broken_is_caught(5, 23, 150, 6);
}
END_TEST

/* The layer form's float requantization keeping the float results of the
 * lanes it is not certain of (the exact one skipped). */
START_TEST(test_conv_dw_avx2_float_broken_is_caught) {
  avx2_broken_is_caught(6, 23, 150, 6);
}
END_TEST

/* Its passes of 8 channels, two pixels at once, the second reading the
 * first one's inputs. */
START_TEST(test_conv_dw_avx2_pairs_broken_is_caught) {
  avx2_broken_is_caught(7, 23, 150, 6);
}
END_TEST

/* ResNet-like layers of one group take the row form over the padded copy
 * of their rows; each window's last row left out. */
START_TEST(test_conv_rows_avx2_broken_is_caught) {
  avx2_broken_is_caught(2, 17, 40, 4);
}
END_TEST

/* The row form with each window's last row left out is seen, and nothing
 * is with the form put right. */
START_TEST(test_conv_rows_broken_is_caught) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  int n[2] = {0, 0};
  for (int how = 1; how >= 0; how--) {
    conv_count = &n[how];
    tn__crt_conv_vnni_fault(how ? 3 : 0);
    conv_random(17, 40, 4);
  }
  conv_count = NULL;
  ck_assert_int_gt(n[1], 0);
  ck_assert_int_eq(n[0], 0);
#endif
}
END_TEST

/* Layers whose channels end in a block of 8 (40, 24, 8, or 8 more and a
 * rest of 1 to 7) at every level: at AVX-512 VNNI that block takes the
 * VNNI forms too, its lanes 8 to 15 zero weights (the row form over the
 * padded copy and in place, the four-pixel form at the borders). */
START_TEST(test_conv_rows8_random) { EACH_ISA(conv_random(29, 120, 7)); }
END_TEST

/* The same layers with the VNNI forms broken (the corrections left out;
 * each window's last row left out): both are seen, nothing is with the
 * forms put right; and so for test_conv_rows2_random's layers (two
 * blocks a pass). */
START_TEST(test_conv_rows8_broken_is_caught) {
#if HAVE_AVX2_FORMS
  conv_faults_seen((const int[]){3, 1}, 2, 29, 60, 7);
  conv_faults_seen((const int[]){3, 1}, 2, 31, 30, 9);
#endif
}
END_TEST

/* Layers of 32 channels and more, one group, at every level: at AVX-512
 * VNNI two blocks of 16 a pass take the row form over the copy of the
 * whole image (the rest one block a pass), up to 80 input channels,
 * batches of two (the copy made again for the second image). */
START_TEST(test_conv_rows2_random) { EACH_ISA(conv_random(31, 60, 9)); }
END_TEST

/* ResNet-8-like layers (conv_random kind 40) at every level; at AVX-512
 * VNNI the row form, broken on purpose (each window's last row left out;
 * the corrections left out; the last byte of its copies of the input not
 * flipped), is seen, and nothing is with it put right. */
START_TEST(test_conv_ic_random) { EACH_ISA(conv_random(47, 120, 40)); }
END_TEST

/* Packed larger windows too wide for tn_crt_conv2d_s8_packed's stack
 * buffer of 16 channels (k_h * k_w * in_c above TN_CRT_CONV_PACKED_STACK /
 * 16: fewer channels a chunk, a chunk crossing no block) and wider than
 * the buffer itself (all channels into scratch, the only case that asks
 * for any), 3x3 padded and 1x3, at every ISA level, against ref_conv;
 * a window that fits asks for no scratch. */
static void conv_packed_wide(uint64_t seed) {
  static const int32_t shape[][4] = {/* k_h, k_w, in_c, out_c */
                                     {3, 3, 120, 40}, {3, 3, 200, 24},
                                     {1, 3, 500, 20}, {3, 3, 1824, 18}};
  KtRng r = kt_rng(seed);
  for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
    TnCrtConv2d p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.in_h = 3, p.in_w = kt_int(&r, 2, 13), p.groups = 1;
    p.k_h = shape[i][0], p.k_w = shape[i][1];
    p.in_c = shape[i][2], p.out_c = shape[i][3];
    p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
    p.pad_top = p.k_h / 2, p.pad_left = 1;
    p.out_h = p.in_h + 2 * p.pad_top - p.k_h + 1;
    p.out_w = p.in_w + 2 - p.k_w + 1;
    const int32_t di[4] = {1, p.in_h, p.in_w, p.in_c};
    const int32_t dw[4] = {p.k_h, p.k_w, p.in_c, p.out_c};
    const int32_t dout[4] = {1, p.out_h, p.out_w, p.out_c};
    strides(di, nhwc, p.in_strides);
    strides(dw, hwio, p.w_strides);
    strides(dout, nhwc, p.out_strides);
    const int64_t no = (int64_t)p.out_h * p.out_w * p.out_c;
    ConvArgs ca;
    rand_conv_args(&r, &p, &ca);
    ca.q.filter_offset = 0;
    const int32_t kk = p.k_h * p.k_w * p.in_c;
    ck_assert_int_eq(tn_crt_conv2d_s8_packed_scratch_size(&p) == 0,
                     kk <= TN_CRT_CONV_PACKED_STACK);
    int8_t *want = xalloc((size_t)no);
    ref_conv(&p, &ca.q, ca.q.input_offset, 0, ca.in, ca.w, ca.bias, want,
             NULL);
    conv_packed_kxk(&p, &ca.q, ca.in, ca.w, ca.bias, want, no);
    free_conv_args(&ca), free(want);
  }
}

START_TEST(test_conv_packed_wide_windows) { EACH_ISA(conv_packed_wide(48)); }
END_TEST

START_TEST(test_conv_ic_broken_is_caught) {
#if HAVE_AVX2_FORMS
  conv_faults_seen((const int[]){3, 1, 6, 7}, 4, 47, 60, 40);
#endif
}
END_TEST

/* Below AVX-512 VNNI, the row forms on a packed larger window (kind 40's
 * packed layers: blocks of 16 channels read where they lie), broken on
 * purpose (each window's last row left out): capped at AVX2 with AVX-VNNI
 * (tn__crt_conv_avx2_fault 4) and at AVX2 alone (tn__crt_conv_vnni_fault
 * 8: tn__crt_conv_pairs16, which turns the blocks into the AVX2 row form's
 * pairs, swaps each group's two), the outputs differ, and nothing does
 * with the forms put right. */
START_TEST(test_conv_packed_rows_broken_is_caught) {
#if HAVE_AVX2_FORMS
  const int cpu = tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  if ((cpu & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX2) return;
  for (int vex = (cpu & TN_CRT_ISA_AVXVNNI) != 0; vex >= 0; vex--) {
    tn_crt_isa_limit(TN_CRT_ISA_AVX2 | (vex ? TN_CRT_ISA_AVXVNNI : 0));
    int n[2] = {0, 0};
    for (int broken = 1; broken >= 0; broken--) {
      conv_count = &n[broken];
      if (vex)
        tn__crt_conv_avx2_fault(broken ? 4 : 0);
      else
        tn__crt_conv_vnni_fault(broken ? 8 : 0);
      conv_random(47, 60, 40);
    }
    conv_count = NULL;
    ck_assert_msg(n[1] > 0, "packed row form (AVX-VNNI %d) broken, not seen",
                  vex);
    ck_assert_int_eq(n[0], 0);
  }
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
#endif
}
END_TEST

START_TEST(test_conv_random_wide_portable) {
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa(), TN_CRT_ISA_PORTABLE);
  conv_random(5, 400, 1);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
}
END_TEST

/* Saturation at both ends and an activation range, on a case small enough
 * to compute by hand: one 1x1 input channel of value 100, zero point -28
 * (so x + input_offset = 128), weights 127 and -128. */
START_TEST(test_conv_saturation) {
  TnCrtConv2d p = {1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1,
                   {1, 1, 1, 1}, {3, 3, 3, 1}, {3, 3, 3, 1}};
  const int8_t in[1] = {100}, w[3] = {127, -128, 1};
  int32_t mult[1], shift[1];
  quantize(1.0, mult, shift); /* the output is the accumulator itself */
  TnCrtQuant q = {28, 0, 0, -128, 127, 0, 1, mult, shift};
  int8_t out[3];
  KT_CHECK_OK(tn_crt_conv2d_s8(&p, &q, in, w, NULL, out, NULL, 0));
  ck_assert_int_eq(out[0], 127); /* 128 * 127 */
  ck_assert_int_eq(out[1], -128); /* 128 * -128 */
  ck_assert_int_eq(out[2], 127);  /* 128 */
  q.act_min = -5, q.act_max = 10, q.output_offset = -200;
  KT_CHECK_OK(tn_crt_conv2d_s8(&p, &q, in, w, NULL, out, NULL, 0));
  ck_assert_int_eq(out[0], 10);
  ck_assert_int_eq(out[1], -5);
  ck_assert_int_eq(out[2], -5); /* 128 - 200 */
}
END_TEST

/* The requantization at its corners, through a 1x1 convolution of one
 * input channel with weights 1, so that each accumulator is bias + x + io:
 * biases near +-2^30 and +-2^31 (where doubling an accumulator, or adding
 * the rounding to its high product, leaves the int32 range), multipliers
 * from 2^30 to 2^31 - 1 and a few outside that range, every right shift
 * and a few left ones, output offsets beyond int8 and narrowed activation
 * ranges. Each form of the kernel's requantization (portable, SSE2's
 * float estimate, the Cortex-M DSP's) has its own limits on these, and
 * must hand the rest to the exact one; the reference adds the offset with
 * wrap-around, as the kernels document. The last 400 cases are depthwise
 * 1x1 layers instead (one input channel per output channel), three in
 * four with every multiplier and shift one that x86/conv_wide_s8.c's
 * requantization takes (so that the whole layer takes it). */
START_TEST(test_conv_requant_corners) {
  KtRng r = kt_rng(11);
  for (int it = 0; it < 800; it++) {
    const int depthwise = it >= 400;
    TnCrtConv2d p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.in_h = 1, p.in_w = kt_int(&r, 1, 6), p.in_c = 1;
    p.out_h = 1, p.out_w = p.in_w, p.out_c = kt_int(&r, 1, 40);
    p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
    p.dilation_h = p.dilation_w = p.groups = 1;
    if (depthwise) p.in_c = p.groups = p.out_c;
    int32_t di[4] = {1, 1, p.in_w, p.in_c}, dw[4] = {1, 1, 1, p.out_c};
    int32_t dout[4] = {1, 1, p.out_w, p.out_c};
    strides(di, nhwc, p.in_strides);
    strides(dw, hwio, p.w_strides);
    strides(dout, nhwc, p.out_strides);
    int32_t mult[40], shift[40], bias[40];
    TnCrtQuant q = {0};
    q.per_channel = kt_int(&r, 0, 3) != 0;
    q.multiplier = mult, q.shift = shift;
    q.input_offset = kt_int(&r, -127, 128), q.filter_offset = 0;
    q.output_offset = kt_int(&r, 0, 2) ? kt_int(&r, -128, 127)
                                       : kt_int(&r, -600, 600);
    q.act_min = kt_int(&r, 0, 3) ? -128 : kt_int(&r, -128, 0);
    q.act_max = kt_int(&r, 0, 3) ? 127 : kt_int(&r, q.act_min, 127);
    const int32_t common = kt_int(&r, -31, 1);
    for (int32_t c = 0; c < p.out_c; c++) {
      int k = kt_int(&r, 0, 9);
      mult[c] = k < 6 ? kt_int(&r, 1 << 30, INT32_MAX)
                : k < 7 ? INT32_MAX
                : k < 8 ? 1 << 30
                : k < 9 ? kt_int(&r, 0, (1 << 30) - 1)
                        : (int32_t)(uint32_t)kt_next(&r);
      shift[c] = kt_int(&r, 0, 4) ? common : kt_int(&r, -33, 3);
      int32_t near = kt_int(&r, 0, 1) ? 1 << 30 : INT32_MAX;
      int32_t dist = kt_int(&r, 0, 1 << kt_int(&r, 0, 24));
      int32_t v = kt_int(&r, 0, 2) ? near - dist
                                   : kt_int(&r, 1 << 30, INT32_MAX);
      bias[c] = kt_int(&r, 0, 4) == 0 ? (int32_t)(uint32_t)kt_next(&r)
                : kt_int(&r, 0, 1)    ? v
                                      : -v;
    }
    if (depthwise && kt_int(&r, 0, 3))
      for (int32_t c = 0; c < p.out_c; c++) {
        mult[c] &= INT32_MAX;
        shift[c] = shift[c] > 0 ? 0 : shift[c] < -31 ? -31 : shift[c];
      }
    int8_t *in = rand_s8(&r, p.in_w * p.in_c, -128, 127), w[40], got[240];
    memset(w, 1, sizeof w);
    KT_CHECK_OK(tn_crt_conv2d_s8(&p, &q, in, w, bias, got, NULL, 0));
    for (int32_t ox = 0; ox < p.out_w; ox++)
      for (int32_t c = 0; c < p.out_c; c++) {
        const int32_t k = q.per_channel ? c : 0;
        const int32_t x = depthwise ? in[ox * p.in_c + c] : in[ox];
        const uint32_t acc = (uint32_t)bias[c] + (uint32_t)(x + q.input_offset);
        const int32_t v = (int32_t)(
            (uint32_t)tn_crt_multiply_by_quantized_multiplier(
                (int32_t)acc, mult[k], shift[k]) +
            (uint32_t)q.output_offset);
        const int32_t want = clamp_i(v, q.act_min, q.act_max);
        EXPECT(got[ox * p.out_c + c] == want,
               "case %d, pixel %d channel %d: %d, expected %d (acc %d, "
               "multiplier %d, shift %d, offset %d)",
               it, ox, c, got[ox * p.out_c + c], want, (int32_t)acc, mult[k],
               shift[k], q.output_offset);
      }
    free(in);
  }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Convolution in place                                                       */
/* ------------------------------------------------------------------------ */

/* A geometry tn_crt_conv2d_s8 runs in place: depthwise (kind 0, any
 * kernel, dilation, pads and stride_w, SAME most of the time), 1x1 with
 * out_c <= in_c (kind 1, groups now and then) or any other convolution of
 * stride_h 1 with out_c <= in_c (kind 2, by whole rows: kernel, dilation,
 * pads and stride_w as kind 0's, groups now and then) or 1x1 with out_c >
 * in_c (kind 3: the buffer the output's size), dense NHWC, the output the
 * size of the input; weights in any of three layouts. big: images up to
 * 49x10 (so that pointwise layers take many chunks). */
static int inplace_dw8; /* depthwise: 8 to 96 channels, a multiple of 8 */
/* in_c up to max_in, out_c up to in_c (more with widen), groups now and
 * then; returns the channels per group. */
static int32_t rand_channels(KtRng *r, int32_t max_in, int widen,
                             TnCrtConv2d *p) {
  p->in_c = kt_int(r, 1, max_in);
  p->out_c = widen ? kt_int(r, p->in_c + 1, 2 * p->in_c + 8)
                   : kt_int(r, 1, p->in_c);
  p->groups = 1;
  if (kt_int(r, 0, 3) == 0) {
    int32_t g = kt_int(r, 1, p->out_c);
    while (p->in_c % g || p->out_c % g) g--;
    p->groups = g;
  }
  return p->in_c / p->groups;
}
static void rand_inplace_geom(KtRng *r, int kind, int big, TnCrtConv2d *p) {
  memset(p, 0, sizeof *p);
  p->batch = kt_int(r, 1, 2);
  p->in_h = p->out_h = kt_int(r, 1, big ? 49 : 9);
  p->in_w = p->out_w = kt_int(r, 1, big ? 10 : 9);
  p->stride_h = p->stride_w = p->dilation_h = p->dilation_w = 1;
  p->k_h = p->k_w = 1;
  int32_t cpg = 1;
  if (kind == 2) cpg = rand_channels(r, 24, 0, p);
  if (kind == 0 || kind == 2) {
    /* (a divisor of 64 now and then: x86/conv_wide_s8.c's pixels a pass) */
    if (kind == 0)
      p->in_c = p->out_c = p->groups =
          inplace_dw8      ? 8 * kt_int(r, 1, 12)
          : kt_int(r, 0, 3) ? kt_int(r, 1, 80)
                            : 1 << kt_int(r, 0, 5);
    p->k_h = kt_int(r, 1, 5), p->k_w = kt_int(r, 1, 5);
    if (kt_int(r, 0, 3) == 0)
      p->dilation_h = kt_int(r, 1, 3), p->dilation_w = kt_int(r, 1, 3);
    if (kt_int(r, 0, 3) == 0) p->stride_w = 2;
    int32_t eh = (p->k_h - 1) * p->dilation_h + 1;
    int32_t ew = (p->k_w - 1) * p->dilation_w + 1;
    /* SAME, or any top/left padding (beyond the window, too: the bottom
     * padding is then negative). */
    p->pad_top = kt_int(r, 0, 2) ? (eh - 1) / 2 : kt_int(r, 0, eh + 1);
    p->pad_left = kt_int(r, 0, 2) ? (ew - 1) / 2 : kt_int(r, 0, ew + 1);
  } else {
    cpg = rand_channels(r, 80, kind == 3, p);
  }
  int wk = kt_int(r, 0, 2);
  int32_t di[4] = {p->batch, p->in_h, p->in_w, p->in_c};
  int32_t dw[4] = {p->k_h, p->k_w, cpg, p->out_c};
  int32_t dout[4] = {p->batch, p->out_h, p->out_w, p->out_c};
  strides(di, nhwc, p->in_strides);
  strides(dw, wk == 0 ? hwio : wk == 1 ? oihw : ohwi, p->w_strides);
  strides(dout, nhwc, p->out_strides);
}

/* In place, in a copy of the input, against out of place into another
 * buffer (and that against the reference), byte for byte; the scratch is
 * allocated at exactly the size asked for. */
static void conv_inplace_random(uint64_t seed, int n) {
  KtRng r = kt_rng(seed);
  for (int cases = 0; cases < n; cases++) {
    int kind = inplace_dw8 ? 0 : cases % 4, big = kt_int(&r, 0, 7) == 0;
    TnCrtConv2d p;
    rand_inplace_geom(&r, kind, big, &p);
    ck_assert_msg(tn_crt_conv2d_s8_inplace_ok(&p), "case %d (kind %d)", cases,
                  kind);
    size_t ss = tn_crt_conv2d_s8_inplace_scratch_size(&p);
    ck_assert_uint_ge(ss, tn_crt_conv2d_s8_scratch_size(&p));
    ck_assert_uint_gt(ss, 0);
    int64_t ni = (int64_t)p.batch * p.in_h * p.in_w * p.in_c;
    int64_t no = (int64_t)p.batch * p.out_h * p.out_w * p.out_c;
    ConvArgs a;
    rand_conv_args(&r, &p, &a);
    const TnCrtQuant *q = &a.q;
    int8_t *want = xalloc((size_t)no), *ref = xalloc((size_t)no);
    /* (kind 3: the output's size, the input at its start) */
    int8_t *buf = xalloc((size_t)(no > ni ? no : ni)), *scratch = xalloc(ss);
    KT_CHECK_OK(tn_crt_conv2d_s8(&p, q, a.in, a.w, a.bias, want, NULL, 0));
    memcpy(buf, a.in, (size_t)ni);
    KT_CHECK_OK(tn_crt_conv2d_s8(&p, q, buf, a.w, a.bias, buf, scratch, ss));
    ref_conv(&p, q, q->input_offset, q->filter_offset, a.in, a.w, a.bias, ref,
             NULL);
    for (int64_t i = 0; i < no; i++) {
      EXPECT(buf[i] == want[i], "in-place case %d (kind %d): element %lld "
             "is %d, out of place %d", cases, kind, (long long)i, buf[i],
             want[i]);
      EXPECT(want[i] == ref[i], "in-place case %d (kind %d): element %lld "
             "is %d, expected %d", cases, kind, (long long)i, want[i], ref[i]);
    }
    /* One byte short, and no scratch at all. */
    EXPECT_ST(tn_crt_conv2d_s8(&p, q, buf, a.w, a.bias, buf, scratch, ss - 1),
              TN_CRT_SCRATCH_TOO_SMALL);
    EXPECT_ST(tn_crt_conv2d_s8(&p, q, buf, a.w, a.bias, buf, NULL, 0),
              TN_CRT_SCRATCH_TOO_SMALL);
    free_conv_args(&a), free(want), free(ref), free(buf), free(scratch);
  }
}

START_TEST(test_conv_inplace_random) { conv_inplace_random(31, 800); }
END_TEST

/* The same layers with the forms capped at AVX2, where the SSE2 and AVX2
 * DW blocks run what the wide forms take above it (seed 31 draws layers
 * whose padding holds whole windows: k 5x1, pad_left 1). */
START_TEST(test_conv_inplace_random_avx2) {
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX2) return;
  tn_crt_isa_limit(TN_CRT_ISA_AVX2);
  conv_inplace_random(31, 800);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
}
END_TEST

/* Depthwise layers of a multiple of 8 channels in place with the forms
 * capped at AVX2: x86/conv_avx2_s8.c's layer form, 32 channels a pass
 * (then 24, 16 or 8), its output rows held back in its ring. */
START_TEST(test_conv_inplace_dw_avx2) {
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX2) return;
  tn_crt_isa_limit(TN_CRT_ISA_AVX2);
  inplace_dw8 = 1;
  conv_inplace_random(37, 300);
  inplace_dw8 = 0;
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
}
END_TEST

/* The layers of MLPerf Tiny's keyword-spotting DS-CNN, 25x5x64: depthwise
 * 3x3 SAME, and pointwise 64->64 (OHWI). */
static const TnCrtConv2d DSCNN_DW = {
    1, 25, 5, 64, 25, 5, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64,
    {8000, 320, 64, 1}, {192, 64, 64, 1}, {8000, 320, 64, 1}};
static const TnCrtConv2d DSCNN_PW = {
    1, 25, 5, 64, 25, 5, 64, 1, 1, 1, 1, 1, 1, 0, 0, 1,
    {8000, 320, 64, 1}, {64, 64, 1, 64}, {8000, 320, 64, 1}};

/* The DS-CNN's layers (depthwise, then pointwise, four times) in one
 * buffer, against the same layers ping-ponging between two. */
START_TEST(test_conv_inplace_dscnn) {
  KtRng r = kt_rng(32);
  TnCrtConv2d dw = DSCNN_DW, pw = DSCNN_PW;
  ck_assert_int_eq(tn_crt_conv2d_s8_inplace_ok(&dw), 1);
  ck_assert_int_eq(tn_crt_conv2d_s8_inplace_ok(&pw), 1);
  ck_assert_uint_eq(tn_crt_conv2d_s8_inplace_scratch_size(&dw), 2 * 5 * 16);
  ck_assert_uint_eq(tn_crt_conv2d_s8_inplace_scratch_size(&pw), 1024);
  int8_t *a = rand_s8(&r, 8000, -128, 127), *b = xalloc(8000);
  int8_t *one = xalloc(8000), *scratch = xalloc(1024);
  memcpy(one, a, 8000);
  for (int layer = 0; layer < 8; layer++) {
    const TnCrtConv2d *p = layer % 2 ? &pw : &dw;
    int32_t nw = p->k_h * p->k_w * (64 / p->groups) * 64;
    int32_t bias[64], mult[64], shift[64];
    int8_t *w = rand_s8(&r, nw, -127, 127);
    for (int c = 0; c < 64; c++) bias[c] = kt_int(&r, -5000, 5000);
    for (int c = 0; c < 64; c++)
      quantize(rand_log2(&r, -10, -7), &mult[c], &shift[c]);
    /* int8 input zero point -128, output -128, ReLU */
    TnCrtQuant q = {128, 0, -128, -128, 127, 1, 64, mult, shift};
    KT_CHECK_OK(tn_crt_conv2d_s8(p, &q, a, w, bias, b, NULL, 0));
    KT_CHECK_OK(tn_crt_conv2d_s8(p, &q, one, w, bias, one, scratch, 1024));
    ck_assert_mem_eq(one, b, 8000);
    int8_t *t = a;
    a = b, b = t;
    free(w);
  }
  free(a), free(b), free(one), free(scratch);
}
END_TEST

/* The forms a call takes on the DSP build (tn_crt_conv2d_s8_forms_isa,
 * what the code generator writes as a model's conv_s8_forms): the
 * DS-CNN's pointwise layer in each requantization mode, with its fused
 * loop or its loop of sums, in place or not, and with a scratch too small
 * for the matrix product; its depthwise 3x3 layer, with its other rows
 * (DW3_ANY) where a group is not requantized by the fast rule; the
 * blocks; none for another ISA. */
START_TEST(test_conv_forms_isa) {
  KtRng r = kt_rng(35);
  TnCrtConv2d dw = DSCNN_DW, pw = DSCNN_PW;
  int32_t mult[64], shift[64];
  for (int c = 0; c < 64; c++)
    quantize(rand_log2(&r, -10, -7), &mult[c], &shift[c]);
  TnCrtQuant q = {128, 0, -128, -128, 127, 1, 64, mult, shift};
  const int32_t D = TN_CRT_ISA_ARM_DSP;
  const size_t full = 3 + 64 * 4 + 64 / 4 * 16;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &q, D, 0, full),
                   TN_CRT_CONV_FORM_PW_FAST | TN_CRT_CONV_FORM_PW_FUSED);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &q, D, 1, 1024 + full),
                   TN_CRT_CONV_FORM_PW_FAST | TN_CRT_CONV_FORM_PW_FUSED);
  /* a scratch 4 bytes short: the blocks */
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &q, D, 0, full - 4),
                   TN_CRT_CONV_FORM_BLOCKS);
  /* an activation that clamps: the loop of sums */
  TnCrtQuant qa = q;
  qa.act_min = -100;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &qa, D, 0, full),
                   TN_CRT_CONV_FORM_PW_FAST | TN_CRT_CONV_FORM_PW_PAIRS);
  /* shifts below -20 (VWW's): the wide mode; a shift of 0: any */
  int32_t sw[64], s0[64];
  for (int c = 0; c < 64; c++) sw[c] = -25, s0[c] = 0;
  TnCrtQuant qw = q;
  qw.shift = sw;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &qw, D, 0, full),
                   TN_CRT_CONV_FORM_PW_WIDE | TN_CRT_CONV_FORM_PW_FUSED);
  qw.shift = s0;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &qw, D, 0, full),
                   TN_CRT_CONV_FORM_PW_ANY | TN_CRT_CONV_FORM_PW_PAIRS);
  /* depthwise 3x3, in place or not; 5x5: the blocks */
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &q, D, 0, 0),
                   TN_CRT_CONV_FORM_DW3);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &q, D, 1, 160),
                   TN_CRT_CONV_FORM_DW3);
  /* its other rows (DW3_ANY): for a clamp, shifts below -20 (fast only
   * for biases near 0, which the forms do not know), or a shift of 0 */
  const int32_t any = TN_CRT_CONV_FORM_DW3 | TN_CRT_CONV_FORM_DW3_ANY;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qa, D, 0, 0), any);
  qa = q, qa.act_max = 100;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qa, D, 1, 160), any);
  qw.shift = sw;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qw, D, 0, 0), any);
  qw.shift = s0;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qw, D, 0, 0), any);
  /* one channel in 64 is enough */
  int32_t s1[64];
  for (int c = 0; c < 64; c++) s1[c] = shift[c];
  s1[37] = -21;
  qw.shift = s1;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qw, D, 0, 0), any);
  /* an output zero point beyond int8 */
  qa = q, qa.output_offset = 128;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw, &qa, D, 0, 0), any);
  TnCrtConv2d dw5 = dw;
  dw5.k_h = dw5.k_w = 5, dw5.pad_top = dw5.pad_left = 2;
  dw5.w_strides[0] = 5 * 64;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&dw5, &q, D, 0, 4096),
                   TN_CRT_CONV_FORM_BLOCKS);
  /* in place: a 3x3 of one group by rows (its window's columns: 576
   * taps), the pointwise layer with a scratch too small for the product
   * by chunks, and one that widens by chunks around the product */
  TnCrtConv2d reg = dw;
  reg.groups = 1;
  const size_t rows = 2 * 5 * 64, cols = 3 + 64 * 4 + 576 / 4 * 16;
  reg.w_strides[3] = 576, reg.w_strides[2] = 1, reg.w_strides[1] = 64;
  reg.w_strides[0] = 3 * 64; /* OHWI, the product's */
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&reg, &q, D, 1, rows + cols),
                   TN_CRT_CONV_FORM_LINES | TN_CRT_CONV_FORM_PW_FAST |
                       TN_CRT_CONV_FORM_PW_FUSED);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&reg, &q, D, 0, cols),
                   TN_CRT_CONV_FORM_PW_FAST | TN_CRT_CONV_FORM_PW_FUSED);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, &q, D, 1, 1024),
                   TN_CRT_CONV_FORM_CHUNKS | TN_CRT_CONV_FORM_BLOCKS);
  TnCrtConv2d up = pw;
  up.in_c = 32, up.in_strides[0] = 25 * 5 * 32, up.in_strides[1] = 5 * 32;
  up.in_strides[2] = 32;
  up.w_strides[0] = up.w_strides[1] = up.w_strides[3] = 32;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&up, &q, D, 1, 1024 + full),
                   TN_CRT_CONV_FORM_CHUNKS | TN_CRT_CONV_FORM_PW_FAST |
                       TN_CRT_CONV_FORM_PW_FUSED);
  /* another ISA, no quantization, no geometry, not in-place-able */
  ck_assert_int_eq(
      tn_crt_conv2d_s8_forms_isa(&pw, &q, TN_CRT_ISA_PORTABLE, 0, full), 0);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&pw, NULL, D, 0, full), 0);
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(NULL, &q, D, 0, full), 0);
  TnCrtConv2d s2 = pw;
  s2.stride_h = s2.stride_w = 2, s2.out_h = 13, s2.out_w = 3;
  s2.out_strides[0] = 13 * 3 * 64, s2.out_strides[1] = 3 * 64;
  ck_assert_int_eq(tn_crt_conv2d_s8_forms_isa(&s2, &q, D, 1, 4096), 0);
}
END_TEST

/* The scratch a call takes on each ISA (the DS-CNN's layers again), and
 * the same bytes from every budget: the size asked for the Cortex-M DSP
 * forms, one byte less, none (out of place) or the in-place minimum; on a
 * DSP build the smaller budgets take the unpacked forms (firmware/common/
 * kernels_check.c runs this on the device). */
START_TEST(test_conv_scratch_isa) {
  KtRng r = kt_rng(33);
  TnCrtConv2d dw = DSCNN_DW, pw = DSCNN_PW;
  int32_t bias[64], mult[64], shift[64];
  for (int c = 0; c < 64; c++) bias[c] = kt_int(&r, -5000, 5000);
  for (int c = 0; c < 64; c++)
    quantize(rand_log2(&r, -10, -7), &mult[c], &shift[c]);
  TnCrtQuant q = {128, 0, -128, -128, 127, 1, 64, mult, shift};
  const int32_t P = TN_CRT_ISA_PORTABLE, D = TN_CRT_ISA_ARM_DSP;
  /* portable (and an ISA the crt does not know): the two sizes above */
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&dw, &q, P, 0), 0);
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&dw, &q, P, 1), 160);
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&pw, &q, 9, 1), 1024);
  /* DSP, pointwise: 3 bytes of alignment, 64 sums, 64 taps' columns
   * (two pixels' int16 pairs: 16 bytes per four taps) */
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&pw, &q, D, 0),
                    3 + 64 * 4 + 64 / 4 * 16);
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&pw, &q, D, 1),
                    1024 + 3 + 64 * 4 + 64 / 4 * 16);
  /* DSP, a first layer of 3x3x3 taps (VWW's, OHWI, 8 channels): the
   * columns padded to 32 taps, whole words of eight for the assembly */
  const TnCrtConv2d first = {
      1, 96, 96, 3, 48, 48, 8, 3, 3, 2, 2, 1, 1, 0, 0, 1,
      {96 * 96 * 3, 96 * 3, 3, 1}, {9, 3, 1, 27}, {48 * 48 * 8, 48 * 8, 8, 1}};
  TnCrtQuant q8 = q;
  q8.channels = 8;
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&first, &q8, D, 0),
                    3 + 8 * 4 + 32 / 4 * 16);
  /* DSP, depthwise 3x3: its own form (arm_dsp/dw3x3_s8_dsp.h) packs
   * nothing, so the portable sizes */
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&dw, &q, D, 0), 0);
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&dw, &q, D, 1), 160);
  /* DSP, depthwise 5x5: the blocks' 468 B of state, then a 16-channel
   * block's pairs, 16 words per pair of taps (13 for 25 taps); smaller,
   * 8- and 4-channel blocks' pairs, then the state without its depthwise
   * fields (260 B) and no pairs */
  TnCrtConv2d dw5 = dw;
  dw5.k_h = dw5.k_w = 5, dw5.pad_top = dw5.pad_left = 2;
  dw5.w_strides[0] = 5 * 64;
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&dw5, &q, D, 0),
                    3 + 468 + 16 * 13 * 4);
  size_t less[TN_CRT_SCRATCH_LESS_MAX];
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&dw5, &q, D, 0, less, NULL),
                   3);
  ck_assert_uint_eq(less[0], 3 + 468 + 8 * 13 * 4);
  ck_assert_uint_eq(less[1], 3 + 468 + 4 * 13 * 4);
  ck_assert_uint_eq(less[2], 3 + 260);
  /* and how much slower each is estimated to run, growing */
  uint16_t pct[TN_CRT_SCRATCH_LESS_MAX];
  ck_assert_int_eq(
      tn_crt_conv2d_s8_scratch_less_isa(&dw5, &q, D, 0, less, pct), 3);
  ck_assert(0 < pct[0] && pct[0] < pct[1] && pct[1] < pct[2]);
  /* in place: after the portable in-place scratch */
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&dw5, &q, D, 1, less, NULL),
                   3);
  ck_assert_uint_eq(less[2], tn_crt_conv2d_s8_inplace_scratch_size(&dw5) +
                                 3 + 260);
  /* none for the portable ISA, the depthwise 3x3 form, or no output */
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&dw5, &q, P, 0, less, NULL),
                   0);
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&dw, &q, D, 0, less, NULL),
                   0);
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&dw5, &q, D, 0, NULL, pct),
                   0);
  /* pointwise: below its matrix product's 384 B, the blocks' state
   * without pairs (packed 4-channel blocks would take more) */
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&pw, &q, D, 0, less, NULL),
                   1);
  ck_assert_uint_eq(less[0], 3 + 260);
  /* which costs the matrix product's speed: more than 2x */
  ck_assert_int_eq(tn_crt_conv2d_s8_scratch_less_isa(&pw, &q, D, 0, less, pct),
                   1);
  ck_assert_uint_gt(pct[0], 100);
  /* a weight zero point: no DSP matrix product, the blocks' state alone */
  TnCrtQuant qf = q;
  qf.filter_offset = 3;
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&pw, &qf, D, 0),
                    3 + 260);
  /* no geometry, no quantization, not in-place-able */
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(NULL, &q, D, 0), 0);
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&pw, NULL, D, 1), 1024);
  TnCrtConv2d s2 = pw;
  s2.stride_h = s2.stride_w = 2, s2.out_h = 13, s2.out_w = 3;
  s2.out_strides[0] = 13 * 3 * 64, s2.out_strides[1] = 3 * 64;
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size_isa(&s2, &q, D, 1), 0);
  ck_assert_uint_gt(tn_crt_conv2d_s8_scratch_size_isa(&s2, &q, D, 0), 0);

  int8_t *in = rand_s8(&r, 8000, -128, 127), *want = xalloc(8000);
  int8_t *out = xalloc(8000), *buf = xalloc(8000);
  for (int layer = 0; layer < 2; layer++) {
    const TnCrtConv2d *p = layer ? &pw : &dw5; /* both take packed forms */
    int8_t *w = rand_s8(&r, p->k_h * p->k_w * (64 / p->groups) * 64, -127, 127);
    KT_CHECK_OK(tn_crt_conv2d_s8(p, &q, in, w, bias, want, NULL, 0));
    for (int place = 0; place < 2; place++) {
      const size_t need = tn_crt_conv2d_s8_scratch_size_isa(p, &q, D, place);
      const size_t least = place ? tn_crt_conv2d_s8_inplace_scratch_size(p) : 0;
      size_t budgets[3 + TN_CRT_SCRATCH_LESS_MAX] = {need, need - 1, least};
      const int nb = 3 + tn_crt_conv2d_s8_scratch_less_isa(p, &q, D, place,
                                                           budgets + 3, NULL);
      for (int b = 0; b < nb; b++) {
        /* at an odd address: the kernel aligns its part itself */
        uint8_t *scratch = xalloc(budgets[b] + 1);
        memset(out, 0x5a, 8000);
        int8_t *dst = out;
        if (place) memcpy(buf, in, 8000), dst = buf;
        KT_CHECK_OK(tn_crt_conv2d_s8(p, &q, place ? buf : in, w, bias, dst,
                                     budgets[b] ? scratch + 1 : NULL,
                                     budgets[b]));
        EXPECT(memcmp(dst, want, 8000) == 0, "layer %d, in place %d, "
               "scratch %zu of %zu: not the same bytes", layer, place,
               budgets[b], need);
        free(scratch);
      }
    }
    free(w);
  }
  free(in), free(want), free(out), free(buf);
}
END_TEST

/* Which geometries run in place, their scratch sizes, and the statuses of
 * in == out calls that cannot. */
START_TEST(test_conv_inplace_geometry) {
  /* 6x5x8 depthwise 3x3 SAME, and 1x1 8 -> 8. */
  const TnCrtConv2d dw = {1, 6, 5, 8, 6, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8,
                          {240, 40, 8, 1}, {24, 8, 8, 1}, {240, 40, 8, 1}};
  const TnCrtConv2d pw = {2, 6, 5, 8, 6, 5, 8, 1, 1, 1, 1, 1, 1, 0, 0, 1,
                          {240, 40, 8, 1}, {64, 64, 8, 1}, {240, 40, 8, 1}};
  TnCrtConv2d p;
#define OK_SIZE(g, ok, size)                                              \
  do {                                                                    \
    ck_assert_int_eq(tn_crt_conv2d_s8_inplace_ok(&(g)), (ok));           \
    ck_assert_uint_eq(tn_crt_conv2d_s8_inplace_scratch_size(&(g)), size); \
  } while (0)
  OK_SIZE(dw, 1, 2 * 5 * 8);
  OK_SIZE(pw, 1, 2 * 6 * 5 * 8); /* every pixel: fewer than 1024 / 8 */
  p = dw, p.batch = 2, p.in_strides[0] = p.out_strides[0] = 240;
  OK_SIZE(p, 1, 2 * 5 * 8);
  /* Dilation 2 (5x5 window): pad 2, three rows held. */
  p = dw, p.dilation_h = p.dilation_w = 2, p.pad_top = p.pad_left = 2;
  OK_SIZE(p, 1, 3 * 5 * 8);
  /* Padding from above beyond the image: every row held. */
  p = dw, p.pad_top = 9;
  OK_SIZE(p, 1, 6 * 5 * 8);
  /* Stride 2 across (the output as wide as the input all the same). */
  p = dw, p.stride_w = 2;
  OK_SIZE(p, 1, 2 * 5 * 8);
  /* 64 channels: blocks of 16. */
  p = dw, p.in_c = p.out_c = p.groups = 64;
  p.in_strides[0] = p.out_strides[0] = 6 * 5 * 64;
  p.in_strides[1] = p.out_strides[1] = 5 * 64;
  p.in_strides[2] = p.out_strides[2] = 64;
  OK_SIZE(p, 1, 2 * 5 * 16);
  /* 1x1 depthwise is (a). */
  p = dw, p.k_h = p.k_w = 1, p.pad_top = p.pad_left = 0;
  OK_SIZE(p, 1, 1 * 5 * 8);
  /* Pointwise: fewer outputs, groups, wide channels, tiny images. */
  p = pw, p.out_c = 3, p.out_strides[0] = 90, p.out_strides[1] = 15;
  p.out_strides[2] = 3;
  OK_SIZE(p, 1, 2 * 6 * 5 * 8);
  p = pw, p.groups = 2;
  OK_SIZE(p, 1, 2 * 6 * 5 * 8);
  p = pw, p.in_h = p.out_h = 30; /* 300 pixels: chunks of 128 */
  p.in_strides[0] = p.out_strides[0] = 30 * 5 * 8;
  OK_SIZE(p, 1, 128 * 8);
  p = pw, p.in_c = p.out_c = 2000;
  p.in_strides[0] = p.out_strides[0] = 6 * 5 * 2000;
  p.in_strides[1] = p.out_strides[1] = 5 * 2000;
  p.in_strides[2] = p.out_strides[2] = 2000;
  OK_SIZE(p, 1, 2000);
  p = pw, p.batch = 1, p.in_h = p.out_h = 1, p.in_w = p.out_w = 3;
  p.in_strides[0] = p.out_strides[0] = 24;
  p.in_strides[1] = p.out_strides[1] = 24;
  OK_SIZE(p, 1, 3 * 8);

  /* Not in place: */
  p = dw, p.stride_h = 2, p.out_h = 3; /* stride 2 */
  OK_SIZE(p, 0, 0);
  p = dw, p.stride_h = 2; /* ... even with the size kept */
  OK_SIZE(p, 0, 0);
  p = dw, p.pad_top = p.pad_left = 0, p.out_h = 4, p.out_w = 3; /* VALID */
  p.out_strides[0] = 96, p.out_strides[1] = 24;
  OK_SIZE(p, 0, 0);
  p = pw, p.out_c = 16, p.out_strides[0] = 480, p.out_strides[1] = 80;
  p.out_strides[2] = 16; /* out_c > in_c: chunks from the last (3) */
  OK_SIZE(p, 3, 2 * 6 * 5 * 8);
  p.stride_w = 2; /* not across by 2 */
  OK_SIZE(p, 0, 0);
  p = dw, p.out_c = 16, p.out_strides[0] = 480, p.out_strides[1] = 80;
  p.out_strides[2] = 16; /* channel multiplier 2 */
  OK_SIZE(p, 0, 0);
  /* By whole rows (2): grouped or regular, stride_h 1, out_c <= in_c;
   * pad_top + 1 rows of every channel held. */
  p = dw, p.groups = 4;
  OK_SIZE(p, 2, 2 * 5 * 8);
  p = dw, p.groups = 1;
  OK_SIZE(p, 2, 2 * 5 * 8);
  p = dw, p.groups = 1, p.pad_top = 9;
  OK_SIZE(p, 2, 6 * 5 * 8);
  p = dw, p.groups = 1, p.out_c = 3, p.out_strides[0] = 90; /* fewer out */
  p.out_strides[1] = 15, p.out_strides[2] = 3;
  OK_SIZE(p, 2, 2 * 5 * 3);
  p = dw, p.groups = 1, p.stride_w = 2; /* as wide all the same */
  OK_SIZE(p, 2, 2 * 5 * 8);
  p = dw, p.groups = 1, p.stride_h = 2; /* stride 2 down: not */
  OK_SIZE(p, 0, 0);
  p = pw, p.stride_w = 2; /* a 1x1 across by 2, or padded: by rows */
  OK_SIZE(p, 2, 1 * 5 * 8);
  p = pw, p.pad_top = 1;
  OK_SIZE(p, 2, 2 * 5 * 8);
  p = dw; /* NCHW */
  p.in_strides[1] = p.out_strides[1] = 5, p.in_strides[2] = 1;
  p.out_strides[2] = 1, p.in_strides[3] = p.out_strides[3] = 30;
  OK_SIZE(p, 0, 0);
  p = dw, p.in_strides[1] = p.out_strides[1] = 48; /* padded rows */
  p.in_strides[0] = p.out_strides[0] = 288;
  OK_SIZE(p, 0, 0);
  p = pw, p.out_strides[2] = 16; /* out pixels spaced wider than in */
  p.out_strides[1] = 80, p.out_strides[0] = 480;
  OK_SIZE(p, 0, 0);
  p = pw, p.out_c = 4; /* out strides those of in_c */
  OK_SIZE(p, 0, 0);
  p = dw, p.groups = 3; /* invalid */
  OK_SIZE(p, 0, 0);
  ck_assert_int_eq(tn_crt_conv2d_s8_inplace_ok(NULL), 0);
  ck_assert_uint_eq(tn_crt_conv2d_s8_inplace_scratch_size(NULL), 0);
#undef OK_SIZE

  int8_t buf[480] = {0}, w[576] = {0}, scratch[2048]; /* w: 3x3, 8 to 8 */
  int32_t one = 1 << 30, zero = 0;
  TnCrtQuant q = {0, 0, 0, -128, 127, 0, 1, &one, &zero};
  /* in == out where it cannot be: INVALID_ARGUMENT, whatever the scratch;
   * in != out, even overlapping: not checked. */
  p = dw, p.stride_h = 2, p.out_h = 3;
  EXPECT_ST(tn_crt_conv2d_s8(&p, &q, buf, w, NULL, buf, scratch, 2048),
            TN_CRT_INVALID_ARGUMENT);
  p = dw, p.groups = 1, p.out_c = 16, p.out_strides[0] = 480;
  p.out_strides[1] = 80, p.out_strides[2] = 16; /* more out than in */
  EXPECT_ST(tn_crt_conv2d_s8(&p, &q, buf, w, NULL, buf, scratch, 2048),
            TN_CRT_INVALID_ARGUMENT);
  /* by rows: the ring's bytes, one byte short */
  p = dw, p.groups = 1;
  KT_CHECK_OK(tn_crt_conv2d_s8(&p, &q, buf, w, NULL, buf, scratch, 80));
  EXPECT_ST(tn_crt_conv2d_s8(&p, &q, buf, w, NULL, buf, scratch, 79),
            TN_CRT_SCRATCH_TOO_SMALL);
  /* The scratch: enough, one byte short, none; NULL with a size. */
  KT_CHECK_OK(tn_crt_conv2d_s8(&dw, &q, buf, w, NULL, buf, scratch, 80));
  EXPECT_ST(tn_crt_conv2d_s8(&dw, &q, buf, w, NULL, buf, scratch, 79),
            TN_CRT_SCRATCH_TOO_SMALL);
  EXPECT_ST(tn_crt_conv2d_s8(&dw, &q, buf, w, NULL, buf, NULL, 0),
            TN_CRT_SCRATCH_TOO_SMALL);
  EXPECT_ST(tn_crt_conv2d_s8(&dw, &q, buf, w, NULL, buf, NULL, 80),
            TN_CRT_INVALID_ARGUMENT);
  KT_CHECK_OK(tn_crt_conv2d_s8(&pw, &q, buf, w, NULL, buf, scratch, 480));
  EXPECT_ST(tn_crt_conv2d_s8(&pw, &q, buf, w, NULL, buf, scratch, 479),
            TN_CRT_SCRATCH_TOO_SMALL);
  /* Bad arguments are reported as such first. */
  p = dw, p.stride_w = 0;
  EXPECT_ST(tn_crt_conv2d_s8(&p, &q, buf, w, NULL, buf, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_conv2d_s8(&dw, &q, buf, NULL, NULL, buf, scratch, 80),
            TN_CRT_INVALID_ARGUMENT);
  /* Out of place needs no scratch, in-place-able or not. */
  KT_CHECK_OK(tn_crt_conv2d_s8(&dw, &q, buf, w, NULL, buf + 240, NULL, 0));
}
END_TEST

static void ref_dense(const TnCrtDense *p, const TnCrtQuant *q, int32_t io,
                      int32_t fo, const int8_t *in, const int8_t *w,
                      const int32_t *bias, int8_t *out8, int32_t *out32) {
  for (int32_t m = 0; m < p->batch; m++)
    for (int32_t n = 0; n < p->out_features; n++) {
      int64_t acc = 0;
      for (int32_t k = 0; k < p->in_features; k++)
        acc += ((int64_t)in[m * p->in_features + k] + io) *
               ((int64_t)w[n * p->w_stride_n + k * p->w_stride_k] + fo);
      if (bias) acc += bias[n];
      int32_t o = m * p->out_features + n;
      if (out32) {
        out32[o] = (int32_t)acc;
        continue;
      }
      int32_t c = q->per_channel ? n : 0;
      int64_t v = tn_crt_multiply_by_quantized_multiplier(
                      (int32_t)acc, q->multiplier[c], q->shift[c]) +
                  (int64_t)q->output_offset;
      out8[o] = (int8_t)clamp_i(v, q->act_min, q->act_max);
    }
}

/* A dense layer's random bias of n, or (one time in four) none. */
static int32_t *rand_dense_bias(KtRng *r, int32_t n) {
  if (!kt_int(r, 0, 3)) return NULL;
  int32_t *bias = xalloc((size_t)n * sizeof *bias);
  for (int32_t c = 0; c < n; c++) bias[c] = kt_int(r, -60000, 60000);
  return bias;
}

static void dense_random(uint64_t seed) {
  KtRng r = kt_rng(seed);
  for (int it = 0; it < 300; it++) {
    TnCrtDense p;
    p.batch = kt_int(&r, 1, 3);
    p.in_features = kt_int(&r, 1, it % 10 == 0 ? 700 : 70);
    p.out_features = kt_int(&r, 1, 40);
    int matmul = kt_int(&r, 0, 1); /* w [K, N] rather than [N, K] */
    p.w_stride_n = matmul ? 1 : p.in_features;
    p.w_stride_k = matmul ? p.out_features : 1;
    int64_t nw = (int64_t)p.in_features * p.out_features;
    int64_t no = (int64_t)p.batch * p.out_features;
    int8_t *in = rand_s8(&r, (int64_t)p.batch * p.in_features, -128, 127);
    int8_t *w = rand_s8(&r, nw, -128, 127);
    int32_t *bias = rand_dense_bias(&r, p.out_features);
    int32_t mult[40], shift[40];
    TnCrtQuant q = {0};
    /* the multipliers' range: the usual one; shifts down to -31; around 1
     * (right shifts of 0 and 1, left shifts, which the vector
     * requantization leaves to the scalar one); an input offset of 128
     * (the VNNI form without sum(w)); a channel's multiplier negative
     * (its block to the scalar form) */
    const int kind = it % 5;
    rand_quant(&r, &q, p.out_features, mult, shift,
               kind == 1 ? -31 : kind == 2 ? -1.5 : -15,
               kind == 1 ? -20 : kind == 2 ? 1.5 : -6);
    if (kind == 3) q.input_offset = 128;
    if (kind == 4 && q.per_channel) {
      const int32_t c = kt_int(&r, 0, p.out_features - 1);
      mult[c] = -mult[c];
    }
    int8_t *got = xalloc((size_t)no), *want = xalloc((size_t)no);
    int32_t *got32 = xalloc((size_t)no * 4), *want32 = xalloc((size_t)no * 4);
    KT_CHECK_OK(tn_crt_dense_s8(&p, &q, in, w, bias, got, NULL,
                                tn_crt_dense_s8_scratch_size(&p)));
    ref_dense(&p, &q, q.input_offset, q.filter_offset, in, w, bias, want,
              NULL);
    for (int64_t i = 0; i < no; i++)
      EXPECT(got[i] == want[i], "dense case %d: element %lld is %d, expected "
             "%d", it, (long long)i, got[i], want[i]);
    KT_CHECK_OK(tn_crt_dense_s8_s32(&p, q.input_offset, q.filter_offset, in,
                                    w, bias, got32));
    ref_dense(&p, NULL, q.input_offset, q.filter_offset, in, w, bias, NULL,
              want32);
    for (int64_t i = 0; i < no; i++)
      EXPECT(got32[i] == want32[i], "dense_s32 case %d: element %lld", it,
             (long long)i);
    free(in), free(w), free(bias), free(got), free(want), free(got32);
    free(want32);
  }
}

START_TEST(test_dense_random) {
  check_isa_matches_cpu();
  EACH_ISA(dense_random(3));
}
END_TEST

#if HAVE_AVX2_FORMS
/* dense_s8.h (internal to the crt): breaks the VNNI form on purpose */
void tn__crt_dense_vnni_fault(int how);
#endif

/* Dense through the VNNI form (where the CPU has AVX-512 VNNI) against the
 * portable form, int8 and int32 outputs byte for byte: K around the
 * 64-byte steps, N past multiples of four, input offsets at both ends of
 * TFLite's range, per-tensor and per-channel; with the 128 * sum(w)
 * correction left out (fault 1) some output must differ. */
static int dense_vnni_vs_portable(int fault) {
  KtRng r = kt_rng(31);
  static const int32_t ks[] = {1, 3, 63, 64, 65, 127, 130, 200, 700};
  int differ = 0;
  for (int it = 0; it < 90; it++) {
    TnCrtDense p;
    p.batch = kt_int(&r, 1, 2);
    p.in_features = ks[it % 9];
    p.out_features = kt_int(&r, 1, 21);
    p.w_stride_n = p.in_features, p.w_stride_k = 1;
    int64_t no = (int64_t)p.batch * p.out_features;
    int8_t *in = rand_s8(&r, (int64_t)p.batch * p.in_features, -128, 127);
    int8_t *w = rand_s8(&r, (int64_t)p.in_features * p.out_features, -128,
                        127);
    int32_t mult[21], shift[21];
    TnCrtQuant q = {0};
    rand_quant(&r, &q, p.out_features, mult, shift, -15, -6);
    q.filter_offset = 0;
    q.input_offset = it % 3 == 0 ? -127 : it % 3 == 1 ? 128 : q.input_offset;
    int8_t *got = xalloc((size_t)no), *want = xalloc((size_t)no);
    int32_t *got32 = xalloc((size_t)no * 4), *want32 = xalloc((size_t)no * 4);
    tn__crt_dense_vnni_fault(fault);
    KT_CHECK_OK(tn_crt_dense_s8(&p, &q, in, w, NULL, got, NULL, 0));
    KT_CHECK_OK(tn_crt_dense_s8_s32(&p, q.input_offset, 0, in, w, NULL,
                                    got32));
    tn__crt_dense_vnni_fault(0);
    tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
    KT_CHECK_OK(tn_crt_dense_s8(&p, &q, in, w, NULL, want, NULL, 0));
    KT_CHECK_OK(tn_crt_dense_s8_s32(&p, q.input_offset, 0, in, w, NULL,
                                    want32));
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
    int same = memcmp(got, want, (size_t)no) == 0 &&
               memcmp(got32, want32, (size_t)no * 4) == 0;
    if (fault == 0)
      EXPECT(same, "dense VNNI case %d (K %d N %d io %d): differs from the "
             "portable form", it, p.in_features, p.out_features,
             q.input_offset);
    differ += !same;
    free(in), free(w), free(got), free(want), free(got32), free(want32);
  }
  return differ;
}

START_TEST(test_dense_vnni) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  ck_assert_int_eq(dense_vnni_vs_portable(0), 0);
  /* the broken form is caught */
  ck_assert_int_gt(dense_vnni_vs_portable(1), 0);
#endif
}
END_TEST

/* Sums past 2^31: (127 + 128) * 127 per product over 2^21 products wrap
 * the int32 lanes. vpdpbusd wraps as the portable uint32 sums do and
 * gives the same int32 outputs; the saturating vpdpbusds (fault 2) does
 * not. */
START_TEST(test_dense_vnni_wraps) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX512VNNI) return;
  const int32_t K = 1 << 21;
  TnCrtDense p = {1, K, 4, K, 1};
  int8_t *in = xalloc((size_t)K), *w = xalloc((size_t)K * 4);
  memset(in, 127, (size_t)K), memset(w, 127, (size_t)K * 4);
  w[K + 5] = -128; /* the rows differ */
  int32_t got[4], want[4], sat[4];
  KT_CHECK_OK(tn_crt_dense_s8_s32(&p, 128, 0, in, w, NULL, got));
  tn__crt_dense_vnni_fault(2);
  KT_CHECK_OK(tn_crt_dense_s8_s32(&p, 128, 0, in, w, NULL, sat));
  tn__crt_dense_vnni_fault(0);
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  KT_CHECK_OK(tn_crt_dense_s8_s32(&p, 128, 0, in, w, NULL, want));
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  /* 255 * 127 * 2^21 mod 2^32, as int32 */
  ck_assert_int_eq(want[0], (int32_t)(uint32_t)(255u * 127u * (1u << 21)));
  ck_assert_int_eq(memcmp(got, want, sizeof got), 0);
  ck_assert_int_ne(memcmp(sat, want, sizeof sat), 0);
  free(in), free(w);
#endif
}
END_TEST

/* The packed weight (tn_crt_dense_s8_pack) against [N, K]: tn_crt_dense_s8_packed
 * and tn_crt_dense_s8 give ref_dense's bytes over random geometries (N past
 * one, two, three and four blocks of 16 and between, K not a multiple of
 * 4, batches of 1 to 3, input offset 128 as PackDenseWeights leaves it, or
 * any, filter offset 0 or not, per-tensor or per-channel, multipliers that
 * the vector requantizations take and that they do not, with a bias or
 * none); the number of outputs that differ (fault: the crt's VNNI fault
 * switch, set for the packed call). With n4, the same through
 * tn_crt_dense_s8_pack4 and tn_crt_dense_s8_packed4, input offset 0 (as
 * PackDenseWeights leaves it for "cortex-m") or any. */
static int dense_packed_random(uint64_t seed, int fault, int n4) {
  KtRng r = kt_rng(seed);
  int differ = 0;
  for (int it = 0; it < 200; it++) {
    TnCrtDense p;
    p.batch = kt_int(&r, 1, 3);
    p.in_features = it % 4 == 0 ? 4 * kt_int(&r, 1, 50) : kt_int(&r, 1, 210);
    p.out_features = it % 5 == 0 ? 16 * kt_int(&r, 1, 6) : kt_int(&r, 1, 90);
    p.w_stride_n = p.in_features, p.w_stride_k = 1;
    const int64_t nw = (int64_t)p.in_features * p.out_features;
    const int64_t no = (int64_t)p.batch * p.out_features;
    int8_t *in = rand_s8(&r, (int64_t)p.batch * p.in_features, -128, 127);
    int8_t *w = rand_s8(&r, nw, -128, 127), *wp = xalloc((size_t)nw);
    int32_t *bias = rand_dense_bias(&r, p.out_features);
    int32_t mult[96], shift[96];
    TnCrtQuant q = {0};
    /* as dense_random: multipliers around 1 now and then (shifts of 0, 1
     * and left shifts, which the vector requantizations leave to the
     * scalar one), and a channel's multiplier negative */
    const int kind = it % 6;
    rand_quant(&r, &q, p.out_features, mult, shift, kind == 4 ? -1.5 : -15,
               kind == 4 ? 1.5 : -6);
    if (kind == 5 && q.per_channel)
      mult[kt_int(&r, 0, p.out_features - 1)] *= -1;
    if (it % 3 != 2) q.input_offset = n4 ? 0 : 128;
    if (it % 7 != 6) q.filter_offset = 0;
    KT_CHECK_OK((n4 ? tn_crt_dense_s8_pack4 : tn_crt_dense_s8_pack)(
        p.out_features, p.in_features, w, wp));
    int8_t *got = xalloc((size_t)no), *want = xalloc((size_t)no);
    int8_t *plain = xalloc((size_t)no);
#if HAVE_AVX2_FORMS
    tn__crt_dense_vnni_fault(fault);
#endif
    KT_CHECK_OK((n4 ? tn_crt_dense_s8_packed4 : tn_crt_dense_s8_packed)(
        &p, &q, in, wp, bias, got));
#if HAVE_AVX2_FORMS
    tn__crt_dense_vnni_fault(0);
#endif
    KT_CHECK_OK(tn_crt_dense_s8(&p, &q, in, w, bias, plain, NULL, 0));
    ref_dense(&p, &q, q.input_offset, q.filter_offset, in, w, bias, want,
              NULL);
    const int same = memcmp(got, want, (size_t)no) == 0;
    if (fault == 0)
      for (int64_t i = 0; i < no; i++)
        EXPECT(got[i] == want[i] && plain[i] == want[i],
               "packed%s dense case %d (M %d K %d N %d io %d fo %d): "
               "element %lld is %d ([N, K]: %d), expected %d",
               n4 ? " N4K4" : "", it, p.batch,
               p.in_features, p.out_features, q.input_offset,
               q.filter_offset, (long long)i, got[i], plain[i], want[i]);
    differ += !same;
    free(in), free(w), free(wp), free(bias), free(got), free(want);
    free(plain);
  }
  return differ;
}

START_TEST(test_dense_packed_random) {
  check_isa_matches_cpu();
  int differ = 0;
  EACH_ISA(differ += dense_packed_random(5, 0, 0));
  ck_assert_int_eq(differ, 0);
#if HAVE_AVX2_FORMS
  /* the VNNI form reading its input without the XOR 0x80 is caught, and
   * so is the AVX-VNNI form (under the cap between AVX2 and AVX-512) */
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512VNNI)
    ck_assert_int_gt(dense_packed_random(5, 3, 0), 0);
  if (tn_crt_isa_limit(TN_CRT_ISA_AVX2_VNNI) & TN_CRT_ISA_AVXVNNI)
    ck_assert_int_gt(dense_packed_random(5, 3, 0), 0);
  /* and the AVX2 form reading its second block's third quarter for its
   * fourth (4), capped at AVX2, */
  if ((tn_crt_isa_limit(TN_CRT_ISA_AVX2) & TN_CRT_ISA_LEVEL_MASK) ==
      TN_CRT_ISA_AVX2) {
    ck_assert_int_gt(dense_packed_random(5, 4, 0), 0);
    /* and its form of a last block of 8 or 12 outputs reading its first
     * quarter for its last (6) */
    ck_assert_int_gt(dense_packed_random(5, 6, 0), 0);
    /* and its requantization from the registers (whole groups of four
     * inputs) leaving the bias out of each block's outputs 8-15 (7), and
     * its inputs widened once a call missing their last group (8) */
    ck_assert_int_gt(dense_packed_random(5, 7, 0), 0);
    ck_assert_int_gt(dense_packed_random(5, 8, 0), 0);
  }
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
#endif
}
END_TEST

/* The N4K4 layout (tn_crt_dense_s8_pack4, the Cortex-M DSP form's) over
 * the same random geometries, at every ISA level: the bytes of [N, K]. */
START_TEST(test_dense_packed4_random) {
  check_isa_matches_cpu();
  int differ = 0;
  EACH_ISA(differ += dense_packed_random(6, 0, 1));
  ck_assert_int_eq(differ, 0);
}
END_TEST

typedef TnCrtStatus (*PackFn)(int32_t, int32_t, const int8_t *, int8_t *);
typedef TnCrtStatus (*PackedFn)(const TnCrtDense *, const TnCrtQuant *,
                                const int8_t *, const int8_t *,
                                const int32_t *, int8_t *);

/* A packed layout on a small weight, byte by byte (bw 16:
 * tn_crt_dense_s8_pack, 4: tn_crt_dense_s8_pack4; N bw + 2: a block of bw
 * and one of 2; K 6: a group of 4 and one of 2), its bad arguments, and
 * the geometry its dense call (tn_crt_dense_s8_packed, _packed4) takes. */
static void pack_layout(int bw) {
  enum { K = 6, NMAX = 18 };
  const PackFn pack = bw == 16 ? tn_crt_dense_s8_pack : tn_crt_dense_s8_pack4;
  const PackedFn run =
      bw == 16 ? tn_crt_dense_s8_packed : tn_crt_dense_s8_packed4;
  const int N = bw + 2;
  int8_t w[NMAX * K], wp[NMAX * K];
  for (int i = 0; i < N * K; i++) w[i] = (int8_t)i;
  KT_CHECK_OK(pack(N, K, w, wp));
  /* block 0: features 0 to bw - 1, group 0 (inputs 0-3) then 1 (4-5) */
  ck_assert_int_eq(wp[0], w[0]);                     /* w[0][0] */
  ck_assert_int_eq(wp[3], w[3]);                     /* w[0][3] */
  ck_assert_int_eq(wp[4], w[K]);                     /* w[1][0] */
  ck_assert_int_eq(wp[4 * bw - 1], w[(bw - 1) * K + 3]); /* w[bw-1][3] */
  ck_assert_int_eq(wp[4 * bw], w[4]);                /* w[0][4] */
  ck_assert_int_eq(wp[4 * bw + 2], w[K + 4]);        /* w[1][4] */
  ck_assert_int_eq(wp[6 * bw - 1], w[(bw - 1) * K + 5]); /* w[bw-1][5] */
  /* block 1: features bw and bw + 1, 2 wide */
  ck_assert_int_eq(wp[6 * bw], w[bw * K]);                /* w[bw][0] */
  ck_assert_int_eq(wp[6 * bw + 4], w[(bw + 1) * K]);      /* w[bw+1][0] */
  ck_assert_int_eq(wp[6 * bw + 8], w[bw * K + 4]);        /* w[bw][4] */
  ck_assert_int_eq(wp[6 * bw + 11], w[(bw + 1) * K + 5]); /* w[bw+1][5] */
  EXPECT_ST(pack(0, K, w, wp), TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(pack(N, K, NULL, wp), TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(pack(N, K, w, NULL), TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(pack(N, -1, w, wp), TN_CRT_INVALID_ARGUMENT);
  TnCrtDense p = {1, K, N, 1, N}; /* matmul's [K, N]: not packed */
  int32_t mult = 1 << 30, shift = -8;
  TnCrtQuant q = {0};
  q.act_min = -128, q.act_max = 127, q.channels = 1;
  q.multiplier = &mult, q.shift = &shift;
  int8_t out[NMAX];
  EXPECT_ST(run(&p, &q, w, wp, NULL, out), TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(run(NULL, &q, w, wp, NULL, out), TN_CRT_INVALID_ARGUMENT);
  p = (TnCrtDense){1, K, N, K, 1};
  EXPECT_ST(run(&p, &q, w, NULL, NULL, out), TN_CRT_INVALID_ARGUMENT);
  KT_CHECK_OK(run(&p, &q, w, wp, NULL, out));
  /* the uniform entry: the layout named, and a value that names none
   * refused */
  TnCrtCallDenseS8 c;
  memset(&c, 0, sizeof c);
  c.d = p, c.q = q;
  c.packed = bw == 16 ? TN_CRT_DENSE_N16K4 : TN_CRT_DENSE_N4K4;
  const void *ins[2] = {w, wp};
  int8_t out2[NMAX];
  KT_CHECK_OK(tn_crt_call_dense_s8(&c, ins, out2, NULL, 0));
  ck_assert_int_eq(memcmp(out, out2, (size_t)N), 0);
  c.packed = 3;
  EXPECT_ST(tn_crt_call_dense_s8(&c, ins, out2, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
}

START_TEST(test_dense_pack_layout) { pack_layout(16); }
END_TEST

/* The same for tn_crt_dense_s8_pack4 (N4K4, the Cortex-M DSP form's). */
START_TEST(test_dense_pack4_layout) { pack_layout(4); }
END_TEST

/* The packed 1x1 convolution (tn_crt_conv2d_s8_packed, its weight's
 * [out_c, in_c] matrix by tn_crt_dense_s8_pack) against ref_conv on the
 * weight as it was (OHWI), over random geometries: in_c a multiple of 4
 * (the VNNI GEMM tiles) or not, out_c past one and two blocks of 16 and
 * between (the GEMM tiles' 32 and 16 channels, the dense rows' rest),
 * 1 to 60 pixels (the tiles' 8, 4, 2 and 1), input offset 128 as
 * PackDenseWeights leaves it or any, filter offset 0 or not, per tensor
 * or per channel, multipliers the vector requantizations take or not,
 * with a bias or none; every fourth case in place (a copy of the input
 * as the output, out_c <= in_c, the scratch asked for). The number of
 * cases that differ (fault: the crt's conv VNNI fault switch, set for
 * the packed call). */
static int packed_avx2_fault; /* tn__crt_conv_avx2_fault for the call */
static int packed_big;        /* larger layers (conv_packed_random) */
static int packed_whole;      /* in place, out_c whole blocks of 16 */

static int conv_packed_random(uint64_t seed, int fault, int tiles) {
  KtRng r = kt_rng(seed);
  int differ = 0;
  for (int it = 0; it < (tiles ? 60 : packed_big ? 48 : 160); it++) {
    TnCrtConv2d p;
    memset(&p, 0, sizeof p);
    p.batch = kt_int(&r, 1, 2);
    p.in_h = p.out_h = kt_int(&r, 1, 5);
    p.in_w = p.out_w = kt_int(&r, 1, packed_big ? 40 : 12);
    p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
    p.dilation_h = p.dilation_w = p.groups = 1;
    p.in_c = it % 3 ? 4 * kt_int(&r, 1, packed_big ? 96 : 24)
                    : kt_int(&r, 1, 70);
    p.out_c = it % 4 == 1 ? 16 * kt_int(&r, 1, 5) : kt_int(&r, 1, 90);
    if (tiles) { /* the VNNI tiles of 4 pixels by 64 channels, and copies
                  * of the input in several chunks (GEMM_XU bytes) */
      p.batch = 1, p.in_h = p.out_h = kt_int(&r, 1, 8);
      p.in_w = p.out_w = kt_int(&r, 1, 60);
      p.in_c = 4 * kt_int(&r, 1, 80);
      p.out_c = it % 2 ? 16 * kt_int(&r, 4, 6) : kt_int(&r, 60, 96);
    }
    if (packed_whole) { /* mostly all pixels' inputs in PACKED_XQ int16 */
      p.in_c = 16 + 4 * kt_int(&r, 0, 60);
      p.out_c = 16 * kt_int(&r, 1, p.in_c / 16 < 6 ? p.in_c / 16 : 6);
      const int32_t fit = 4096 / (p.in_c * p.batch * p.in_h);
      p.in_w = p.out_w = kt_int(&r, 1, it % 5 == 4 || fit < 1 ? 12 : fit);
    }
    const int in_place = (packed_whole || it % 4 == 3) && p.out_c <= p.in_c;
    int32_t di[4] = {p.batch, p.in_h, p.in_w, p.in_c};
    int32_t dw[4] = {1, 1, p.in_c, p.out_c};
    int32_t dout[4] = {p.batch, p.out_h, p.out_w, p.out_c};
    strides(di, nhwc, p.in_strides);
    strides(dw, ohwi, p.w_strides);
    strides(dout, nhwc, p.out_strides);
    const int64_t ni = (int64_t)p.batch * p.in_h * p.in_w * p.in_c;
    const int64_t nw = (int64_t)p.in_c * p.out_c;
    const int64_t no = (int64_t)p.batch * p.out_h * p.out_w * p.out_c;
    int8_t *in = rand_s8(&r, ni, -128, 127);
    int8_t *w = rand_s8(&r, nw, -128, 127), *wp = xalloc((size_t)nw);
    int32_t *bias = rand_dense_bias(&r, p.out_c);
    int32_t mult[96], shift[96];
    TnCrtQuant q = {0};
    const int kind = it % 6;
    rand_quant(&r, &q, p.out_c, mult, shift, kind == 4 ? -1.5 : -15,
               kind == 4 ? 1.5 : -6);
    q.channels = q.per_channel ? p.out_c : 1;
    if (kind == 5 && q.per_channel)
      mult[kt_int(&r, 0, p.out_c - 1)] *= -1;
    if (it % 3 != 2 || packed_whole) q.input_offset = 128;
    if (it % 7 != 6 || packed_whole) q.filter_offset = 0;
    KT_CHECK_OK(tn_crt_dense_s8_pack(p.out_c, p.in_c, w, wp));
    int8_t *got = xalloc((size_t)(no > ni ? no : ni));
    int8_t *want = xalloc((size_t)no);
    const size_t ss = in_place ? tn_crt_conv2d_s8_inplace_scratch_size(&p)
                               : 0;
    void *scratch = ss ? xalloc(ss) : NULL;
    if (in_place) memcpy(got, in, (size_t)ni);
#if HAVE_AVX2_FORMS
    tn__crt_conv_vnni_fault(fault);
    tn__crt_conv_avx2_fault(packed_avx2_fault);
#endif
    KT_CHECK_OK(tn_crt_conv2d_s8_packed(&p, &q, in_place ? got : in, wp,
                                        bias, got, scratch, ss));
#if HAVE_AVX2_FORMS
    tn__crt_conv_vnni_fault(0);
    tn__crt_conv_avx2_fault(0);
#endif
    ref_conv(&p, &q, q.input_offset, q.filter_offset, in, w, bias, want,
             NULL);
    const int same = memcmp(got, want, (size_t)no) == 0;
    if (fault == 0 && packed_avx2_fault == 0)
      for (int64_t i = 0; i < no; i++)
        EXPECT(got[i] == want[i],
               "packed 1x1 case %d (%dx%dx%d, in_c %d out_c %d io %d fo %d%s):"
               " element %lld is %d, expected %d", it, p.batch, p.in_h,
               p.in_w, p.in_c, p.out_c, q.input_offset, q.filter_offset,
               in_place ? ", in place" : "", (long long)i, got[i], want[i]);
    differ += !same;
    free(in), free(w), free(wp), free(bias), free(got), free(want);
    free(scratch);
  }
  return differ;
}

START_TEST(test_conv_packed_random) {
  check_isa_matches_cpu();
  int differ = 0;
  EACH_ISA(differ += conv_packed_random(7, 0, 0));
  ck_assert_int_eq(differ, 0);
#if HAVE_AVX2_FORMS
  /* the VNNI and AVX2 packed forms dropping their last group of inputs
   * are caught, and the VNNI tiles keeping their doubtful lanes' float
   * results (requant_exact skipped) */
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512VNNI) {
    ck_assert_int_gt(conv_packed_random(7, 4, 0), 0);
    ck_assert_int_gt(conv_packed_random(7, 5, 0), 0);
  }
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX2) {
    tn_crt_isa_limit(TN_CRT_ISA_AVX2);
    ck_assert_int_gt(conv_packed_random(7, 4, 0), 0);
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  }
#endif
}
END_TEST

/* Larger packed 1x1 layers (up to 384 inputs, 400 pixels: the AVX-VNNI
 * form's tiles of 6 and its copies of 8 KiB in several chunks) at every
 * level, AVX2 with and without AVX-VNNI; where the CPU has AVX-VNNI, its
 * form dropping its last group of inputs (tn__crt_conv_avx2_fault 3) is
 * caught under the cap between AVX2 and AVX-512. */
START_TEST(test_conv_packed_big_random) {
  int differ = 0;
  packed_big = 1;
  EACH_ISA(differ += conv_packed_random(50, 0, 0));
  ck_assert_int_eq(differ, 0);
#if HAVE_AVX2_FORMS
  if (tn_crt_isa_limit(TN_CRT_ISA_AVX2_VNNI) & TN_CRT_ISA_AVXVNNI) {
    packed_avx2_fault = 3;
    ck_assert_int_gt(conv_packed_random(50, 0, 0), 0);
    packed_avx2_fault = 0;
    /* the same switch leaves the other forms as they were */
    tn_crt_isa_limit(TN_CRT_ISA_AVX2);
    packed_avx2_fault = 3;
    ck_assert_int_eq(conv_packed_random(50, 0, 0), 0);
    packed_avx2_fault = 0;
  }
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
#endif
  packed_big = 0;
}
END_TEST

/* Capped at AVX2 (no AVX-VNNI), larger packed 1x1 layers (seed 51, as
 * test_conv_packed_big_random's: up to 256 inputs, the int16 pairs'
 * tiles of 3 pixels by 32 channels and of 6 by 16 for an odd last block,
 * and their last 1 to 5 pixels; more, the tiles of 3 pixels by 16 and
 * their last 1 or 2; blocks of 1 to 4 by 16 channels, copies of the
 * inputs in several chunks) byte for byte against the reference; the
 * AVX2 tiles dropping their last group of inputs (tn__crt_conv_vnni_fault
 * 4), or their third pixel reading the second's inputs (6), or the int16
 * pairs of each group swapped (9), are caught. */
START_TEST(test_conv_packed_avx2_random) {
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) < TN_CRT_ISA_AVX2) return;
  packed_big = 1;
  tn_crt_isa_limit(TN_CRT_ISA_AVX2);
  const int clean = conv_packed_random(51, 0, 0);
  const int dropped = conv_packed_random(51, 4, 0);
  const int third = conv_packed_random(51, 6, 0);
  const int swapped = conv_packed_random(51, 9, 0);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  packed_big = 0;
  ck_assert_int_eq(clean, 0);
  ck_assert_int_gt(dropped, 0);
  ck_assert_int_gt(third, 0);
  ck_assert_int_gt(swapped, 0);
#endif
}
END_TEST

/* Capped at AVX2 (no AVX-VNNI), packed 1x1 layers in place whose
 * channels are whole blocks of 16 (16 to 256 inputs, up to 96 outputs),
 * most of them with every pixel's inputs in the GEMM's int16 copy: those
 * take all their blocks in one call, with no copy to scratch; a fifth
 * are larger and take the chunks. Byte for byte against the reference at every level;
 * the one call widening the inputs again for each pair of blocks, so
 * reading outputs already written over them (tn__crt_conv_vnni_fault
 * 10), is caught. */
START_TEST(test_conv_packed_whole_in_place) {
  int differ = 0;
  packed_whole = 1;
  EACH_ISA(differ += conv_packed_random(53, 0, 0));
  ck_assert_int_eq(differ, 0);
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX2) {
    tn_crt_isa_limit(TN_CRT_ISA_AVX2);
    const int clean = conv_packed_random(53, 0, 0);
    const int again = conv_packed_random(53, 10, 0);
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
    ck_assert_int_eq(clean, 0);
    ck_assert_int_gt(again, 0);
  }
#endif
  packed_whole = 0;
}
END_TEST

/* The same over larger layers (tiles): 64 to 96 channels, where the VNNI
 * form takes tiles of 4 pixels by 64 channels, then 32 or 16 (or the
 * dense rows' rest); up to 480 pixels of up to 320 inputs, the copy of
 * the inputs as x ^ 0x80 made in several chunks; in place every fourth.
 * The VNNI tiles dropping their last group, or keeping their doubtful
 * lanes, are caught here too. */
START_TEST(test_conv_packed_tiles_random) {
  check_isa_matches_cpu();
  int differ = 0;
  EACH_ISA(differ += conv_packed_random(31, 0, 1));
  ck_assert_int_eq(differ, 0);
#if HAVE_AVX2_FORMS
  if ((tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512VNNI) {
    ck_assert_int_gt(conv_packed_random(31, 4, 1), 0);
    ck_assert_int_gt(conv_packed_random(31, 5, 1), 0);
  }
#endif
}
END_TEST

/* tn_crt_conv2d_s8_packed refuses what is not its geometry, and a short
 * scratch in place. */
START_TEST(test_conv_packed_args) {
  TnCrtConv2d p;
  memset(&p, 0, sizeof p);
  p.batch = 1, p.in_h = p.out_h = 2, p.in_w = p.out_w = 3;
  p.in_c = 8, p.out_c = 4;
  p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
  p.dilation_h = p.dilation_w = p.groups = 1;
  int32_t di[4] = {1, 2, 3, 8}, dw[4] = {1, 1, 8, 4}, dout[4] = {1, 2, 3, 4};
  strides(di, nhwc, p.in_strides);
  strides(dw, ohwi, p.w_strides);
  strides(dout, nhwc, p.out_strides);
  int32_t mult = 1 << 30, shift = -8;
  TnCrtQuant q = {0};
  q.act_min = -128, q.act_max = 127, q.channels = 1;
  q.multiplier = &mult, q.shift = &shift;
  int8_t in[48] = {0}, w[32] = {0}, out[48], scratch[64];
  KT_CHECK_OK(tn_crt_conv2d_s8_packed(&p, &q, in, w, NULL, out, NULL, 0));
  EXPECT_ST(tn_crt_conv2d_s8_packed(&p, NULL, in, w, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_conv2d_s8_packed(&p, &q, in, NULL, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  TnCrtConv2d g = p;
  g.stride_w = 2, g.out_w = 2;
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  g = p, g.pad_top = 1;
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  g = p, g.groups = 2;
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  g = p, g.in_strides[2] = 9; /* not dense NHWC */
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w, NULL, out, NULL, 0),
            TN_CRT_INVALID_ARGUMENT);
  /* in place: the scratch asked for, and no less */
  const size_t need = tn_crt_conv2d_s8_inplace_scratch_size(&p);
  ck_assert_uint_le(need, sizeof scratch);
  KT_CHECK_OK(tn_crt_conv2d_s8_packed(&p, &q, in, w, NULL, in, scratch, need));
  EXPECT_ST(tn_crt_conv2d_s8_packed(&p, &q, in, w, NULL, in, scratch,
                                    need - 1),
            TN_CRT_SCRATCH_TOO_SMALL);
  EXPECT_ST(tn_crt_conv2d_s8_packed(&p, &q, in, w, NULL, in, NULL, need),
            TN_CRT_INVALID_ARGUMENT);
  /* a larger window (its 4 channels unpacked on the stack): never in
   * place, one group, filter offset 0, and no scratch asked for (the
   * scratch of a wider window: test_conv_packed_wide_windows) */
  g = p, g.k_h = g.k_w = 3, g.pad_top = g.pad_left = 1;
  int32_t dw3[4] = {3, 3, 8, 4};
  strides(dw3, ohwi, g.w_strides);
  int8_t w3[288] = {0};
  static int8_t s3[2048];
  const size_t n3 = tn_crt_conv2d_s8_packed_scratch_size(&g);
  ck_assert_uint_eq(n3, 0);
  KT_CHECK_OK(tn_crt_conv2d_s8_packed(&g, &q, in, w3, NULL, out, NULL, 0));
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w3, NULL, in, s3, n3),
            TN_CRT_INVALID_ARGUMENT);
  TnCrtQuant qf = q;
  qf.filter_offset = 3;
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &qf, in, w3, NULL, out, s3, n3),
            TN_CRT_INVALID_ARGUMENT);
  g.groups = 2, g.w_strides[3] /= 2;
  EXPECT_ST(tn_crt_conv2d_s8_packed(&g, &q, in, w3, NULL, out, s3, n3),
            TN_CRT_INVALID_ARGUMENT);
}
END_TEST

/* The same cases through the portable forms (on x86 with AVX2, the forms
 * the machine would not run otherwise). */
START_TEST(test_dense_random_portable) {
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa(), TN_CRT_ISA_PORTABLE);
  dense_random(3);
  dense_random(4);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Pooling                                                                    */
/* ------------------------------------------------------------------------ */

static void ref_pool(const TnCrtPool2d *p, const int8_t *in, int32_t lo,
                     int32_t hi, int is_max, int8_t *out) {
  const int32_t *is = p->in_strides, *os = p->out_strides;
  for (int32_t n = 0; n < p->batch; n++)
    for (int32_t oy = 0; oy < p->out_h; oy++)
      for (int32_t ox = 0; ox < p->out_w; ox++)
        for (int32_t c = 0; c < p->channels; c++) {
          int32_t sum = 0, count = 0, max = -128;
          for (int32_t ky = 0; ky < p->k_h; ky++)
            for (int32_t kx = 0; kx < p->k_w; kx++) {
              int32_t iy = oy * p->stride_h - p->pad_top + ky;
              int32_t ix = ox * p->stride_w - p->pad_left + kx;
              if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w)
                continue;
              int32_t v = in[n * is[0] + iy * is[1] + ix * is[2] + c * is[3]];
              sum += v, count++;
              max = v > max ? v : max;
            }
          int32_t d = p->count_include_pad ? p->k_h * p->k_w : count;
          int32_t v = is_max ? max
                             : sum > 0 ? (sum + d / 2) / d : (sum - d / 2) / d;
          out[n * os[0] + oy * os[1] + ox * os[2] + c * os[3]] =
              (int8_t)clamp_i(v, lo, hi);
        }
}

START_TEST(test_pool_random) {
  KtRng r = kt_rng(4);
  int cases = 0;
  while (cases < 400) {
    TnCrtPool2d p;
    memset(&p, 0, sizeof p);
    p.batch = kt_int(&r, 1, 2);
    p.in_h = kt_int(&r, 1, 8), p.in_w = kt_int(&r, 1, 8);
    p.channels = kt_int(&r, 1, cases % 8 == 0 ? 150 : 20);
    p.k_h = kt_int(&r, 1, 4), p.k_w = kt_int(&r, 1, 4);
    p.stride_h = kt_int(&r, 1, 3), p.stride_w = kt_int(&r, 1, 3);
    p.pad_top = kt_int(&r, 0, p.k_h - 1), p.pad_left = kt_int(&r, 0, p.k_w - 1);
    p.out_h = (p.in_h + p.pad_top + kt_int(&r, 0, p.k_h - 1) - p.k_h) /
                  p.stride_h + 1;
    p.out_w = (p.in_w + p.pad_left + kt_int(&r, 0, p.k_w - 1) - p.k_w) /
                  p.stride_w + 1;
    if (p.out_h < 1 || p.out_w < 1) continue;
    cases++;
    p.count_include_pad = kt_int(&r, 0, 3) == 0;
    const int *lay = kt_int(&r, 0, 1) ? nhwc : nchw;
    int32_t di[4] = {p.batch, p.in_h, p.in_w, p.channels};
    int32_t dout[4] = {p.batch, p.out_h, p.out_w, p.channels};
    strides(di, lay, p.in_strides);
    strides(dout, lay, p.out_strides);
    int64_t ni = (int64_t)di[0] * di[1] * di[2] * di[3];
    int64_t no = (int64_t)dout[0] * dout[1] * dout[2] * dout[3];
    /* Mostly negative data, so that averages round below zero. */
    int8_t *in = rand_s8(&r, ni, -128, kt_int(&r, 0, 1) ? 127 : 5);
    int32_t lo = kt_int(&r, 0, 2) ? -128 : kt_int(&r, -128, 0);
    int32_t hi = kt_int(&r, 0, 2) ? 127 : kt_int(&r, lo, 127);
    int8_t *got = xalloc((size_t)no), *want = xalloc((size_t)no);
    for (int is_max = 0; is_max < 2; is_max++) {
      KT_CHECK_OK(is_max ? tn_crt_max_pool2d_s8(&p, in, lo, hi, got)
                         : tn_crt_avg_pool2d_s8(&p, in, lo, hi, got));
      ref_pool(&p, in, lo, hi, is_max, want);
      for (int64_t i = 0; i < no; i++)
        EXPECT(got[i] == want[i], "%s pool case %d: element %lld is %d, "
               "expected %d", is_max ? "max" : "avg", cases, (long long)i,
               got[i], want[i]);
    }
    free(in), free(got), free(want);
  }
}
END_TEST

/* Rounding of averages by hand: a 2x2 window with stride 2 over a 3x3
 * input padded by one on top and left, so windows are cut to 1, 2 and 4
 * elements. */
START_TEST(test_pool_rounding) {
  TnCrtPool2d p = {1, 3, 3, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0,
                   {9, 3, 1, 1}, {4, 2, 1, 1}};
  const int8_t in[9] = {-5, -3, -4, /* row 0 */
                        -6, 7, 2,   /* row 1 */
                        -7, 0, 1};
  int8_t out[4];
  KT_CHECK_OK(tn_crt_avg_pool2d_s8(&p, in, -128, 127, out));
  ck_assert_int_eq(out[0], -5); /* -5 / 1 */
  ck_assert_int_eq(out[1], -4); /* -7 / 2 = -3.5: away from zero */
  ck_assert_int_eq(out[2], -7); /* -13 / 2 = -6.5 */
  ck_assert_int_eq(out[3], 3);  /* 10 / 4 = 2.5 */
  KT_CHECK_OK(tn_crt_max_pool2d_s8(&p, in, -128, 127, out));
  ck_assert_int_eq(out[0], -5);
  ck_assert_int_eq(out[1], -3);
  ck_assert_int_eq(out[2], -6);
  ck_assert_int_eq(out[3], 7);
  p.count_include_pad = 1; /* every window divided by 4 */
  KT_CHECK_OK(tn_crt_avg_pool2d_s8(&p, in, -128, 127, out));
  ck_assert_int_eq(out[0], -1); /* -5 / 4 = -1.25 */
  ck_assert_int_eq(out[1], -2); /* -7 / 4 = -1.75 */
  ck_assert_int_eq(out[2], -3); /* -13 / 4 = -3.25 */
  ck_assert_int_eq(out[3], 3);
  /* A window entirely in the padding has no average (TFLite fails too). */
  TnCrtPool2d e = {1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 0, 1, 0,
                   {1, 1, 1, 1}, {2, 2, 1, 1}};
  const int8_t one[1] = {9};
  int8_t two[2];
  EXPECT_ST(tn_crt_avg_pool2d_s8(&e, one, -128, 127, two),
            TN_CRT_INVALID_ARGUMENT);
  KT_CHECK_OK(tn_crt_max_pool2d_s8(&e, one, -128, 127, two));
  ck_assert_int_eq(two[0], -128);
  ck_assert_int_eq(two[1], 9);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Quantize, dequantize, requantize, clip                                     */
/* ------------------------------------------------------------------------ */

START_TEST(test_quantize_dequantize) {
  KtRng r = kt_rng(5);
  for (int it = 0; it < 200; it++) {
    int32_t outer = kt_int(&r, 1, 3), ch = kt_int(&r, 1, 4);
    int32_t inner = kt_int(&r, 1, 50);
    int64_t n = (int64_t)outer * ch * inner;
    float scale[4];
    int32_t zp[4];
    for (int c = 0; c < ch; c++)
      scale[c] = (float)rand_log2(&r, -10, 2), zp[c] = rand_zp(&r);
    float *f = xalloc((size_t)n * sizeof *f), *back = xalloc((size_t)n * 4);
    int8_t *q = xalloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
      int32_t c = (int32_t)(i / inner % ch);
      /* Exact ties (k + 0.5 steps) a quarter of the time, on both sides. */
      f[i] = kt_int(&r, 0, 3) ? kt_float(&r, -300, 300) * scale[c]
                              : ((float)kt_int(&r, -200, 200) + 0.5f) * scale[c];
    }
    int8_t *qe = xalloc((size_t)n);
    KT_CHECK_OK(tn_crt_quantize_f32_s8(outer, ch, inner, f, scale, zp, q));
    KT_CHECK_OK(tn_crt_quantize_f32_s8_even(outer, ch, inner, f, scale, zp, qe));
    KT_CHECK_OK(tn_crt_dequantize_s8_f32(outer, ch, inner, q, scale, zp, back));
    for (int64_t i = 0; i < n; i++) {
      int32_t c = (int32_t)(i / inner % ch);
      /* ONNX: the same quotient rounded half to even */
      int8_t even = (int8_t)clamp_i((int64_t)rintf(f[i] / scale[c]) + zp[c],
                                    -128, 127);
      EXPECT(qe[i] == even, "quantize_even(%a / %a) + %d = %d, expected %d",
             (double)f[i], (double)scale[c], zp[c], qe[i], even);
      /* TFLite: round(x / scale) with the division in float, half away
       * from zero, plus the zero point, clamped. */
      int8_t want = (int8_t)clamp_i((int64_t)roundf(f[i] / scale[c]) + zp[c],
                                    -128, 127);
      EXPECT(q[i] == want, "quantize(%a / %a) + %d = %d, expected %d",
             (double)f[i], (double)scale[c], zp[c], q[i], want);
      float fb = (float)((double)scale[c] * (double)(q[i] - zp[c]));
      EXPECT(back[i] == fb, "dequantize(%d)", q[i]);
    }
    free(f), free(back), free(q), free(qe);
  }
  /* Values beyond the int32 range and NaN saturate instead of wrapping. */
  const float big[4] = {3e38f, -3e38f, INFINITY, NAN};
  const float one = 1.0f;
  const int32_t z = 5;
  int8_t out[4];
  KT_CHECK_OK(tn_crt_quantize_f32_s8(1, 1, 4, big, &one, &z, out));
  ck_assert_int_eq(out[0], 127);
  ck_assert_int_eq(out[1], -128);
  ck_assert_int_eq(out[2], 127);
  ck_assert_int_eq(out[3], 5);
}
END_TEST

START_TEST(test_requantize) {
  KtRng r = kt_rng(6);
  for (int it = 0; it < 200; it++) {
    int32_t outer = kt_int(&r, 1, 3), ch = kt_int(&r, 1, 5);
    int32_t inner = kt_int(&r, 1, 40);
    int64_t n = (int64_t)outer * ch * inner;
    int32_t mult[5], shift[5];
    int wide = kt_int(&r, 0, 1);
    for (int c = 0; c < ch; c++)
      quantize(rand_log2(&r, wide ? -16 : -4, wide ? -4 : 4), &mult[c],
               &shift[c]);
    TnCrtRequant p = {wide ? kt_int(&r, -1000, 1000) : rand_zp(&r),
                      rand_zp(&r), -128, 127, ch, mult, shift};
    if (kt_int(&r, 0, 3) == 0) p.act_min = -20, p.act_max = 90;
    int32_t *x32 = xalloc((size_t)n * 4);
    int8_t *x8 = rand_s8(&r, n, -128, 127), *got = xalloc((size_t)n);
    for (int64_t i = 0; i < n; i++) x32[i] = kt_int(&r, -200000, 200000);
    if (wide)
      KT_CHECK_OK(tn_crt_requantize_s32_s8(&p, outer, ch, inner, x32, got));
    else
      KT_CHECK_OK(tn_crt_requantize_s8_s8(&p, outer, ch, inner, x8, got));
    for (int64_t i = 0; i < n; i++) {
      int32_t c = (int32_t)(i / inner % ch);
      int32_t x = wide ? x32[i] : x8[i];
      int64_t v = tn_crt_multiply_by_quantized_multiplier(
                      x - p.input_zero_point, mult[c], shift[c]) +
                  (int64_t)p.output_zero_point;
      EXPECT(got[i] == clamp_i(v, p.act_min, p.act_max), "requantize(%d)", x);
    }
    free(x32), free(x8), free(got);
  }
}
END_TEST

/* The int8 clip at lengths around and between the vector widths (the
 * AVX2 form takes 32 bytes a step, the rest in C), with bounds inside,
 * across and beyond int8 and crossed (lo > hi gives hi, as min(max(x, lo),
 * hi) does), in place half the time; against that formula. */
static void clip_runs(uint64_t seed) {
  KtRng r = kt_rng(seed);
  for (int it = 0; it < 400; it++) {
    const int32_t n = kt_int(&r, 0, 3) ? kt_int(&r, 1, 100)
                                       : kt_int(&r, 100, 2000);
    int32_t lo = kt_int(&r, -200, 200), hi = kt_int(&r, -200, 200);
    if (kt_int(&r, 0, 3)) {
      if (lo > hi) { const int32_t t = lo; lo = hi, hi = t; }
    }
    int8_t *in = rand_s8(&r, n, -128, 127);
    int8_t *got = xalloc((size_t)n);
    const int inplace = kt_int(&r, 0, 1);
    if (inplace) memcpy(got, in, (size_t)n);
    KT_CHECK_OK(tn_crt_clip_s8(n, inplace ? got : in, lo, hi, got));
    const int32_t l = clamp_i(lo, -128, 127), h = clamp_i(hi, -128, 127);
    for (int32_t i = 0; i < n; i++) {
      const int32_t v = in[i] < l ? l : in[i];
      const int32_t want = v > h ? h : v;
      EXPECT(got[i] == want, "clip case %d (n %d, [%d, %d]) element %d: %d, "
             "expected %d", it, n, lo, hi, i, got[i], want);
    }
    free(in), free(got);
  }
}

START_TEST(test_clip_runs) { EACH_ISA(clip_runs(23)); }
END_TEST

START_TEST(test_clip_lut) {
  const int8_t in[6] = {-128, -3, 0, 5, 100, 127};
  int8_t out[6];
  KT_CHECK_OK(tn_crt_clip_s8(6, in, -3, 99, out));
  const int8_t want[6] = {-3, -3, 0, 5, 99, 99};
  ck_assert_mem_eq(out, want, 6);
  KT_CHECK_OK(tn_crt_clip_s8(6, in, -1000, 1000, out)); /* wider than int8 */
  ck_assert_mem_eq(out, in, 6);
  memcpy(out, in, 6);
  KT_CHECK_OK(tn_crt_clip_s8(6, out, 0, 0, out)); /* in place */
  for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], 0);
  TnCrtLut8 t;
  for (int i = 0; i < 256; i++) t.table[i] = (int8_t)(255 - i);
  memcpy(out, in, 6);
  KT_CHECK_OK(tn_crt_lut_s8(&t, 6, out, out));
  for (int i = 0; i < 6; i++)
    ck_assert_int_eq(out[i], (int8_t)(255 - (uint8_t)in[i]));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* ADD and MUL                                                                */
/* ------------------------------------------------------------------------ */

/* A broadcast over `nd` random dims where each operand is dense over its
 * own shape, with extent 1 (stride 0) along a random subset of dims. */
static void rand_broadcast(KtRng *r, TnCrtBroadcast *b, int64_t *ln,
                           int64_t *rn, int64_t *on) {
  memset(b, 0, sizeof *b);
  b->ndim = kt_int(r, 1, 4);
  int64_t ls = 1, rs = 1, os = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    b->dims[d] = kt_int(r, 1, 5);
    int lb = kt_int(r, 0, 3) == 0, rb = !lb && kt_int(r, 0, 3) == 0;
    b->lhs_strides[d] = lb ? 0 : (int32_t)ls;
    b->rhs_strides[d] = rb ? 0 : (int32_t)rs;
    ls *= lb ? 1 : b->dims[d], rs *= rb ? 1 : b->dims[d];
    os *= b->dims[d];
  }
  *ln = ls, *rn = rs, *on = os;
}
/* The operands' offsets of output element i. */
static void bc_offsets(const TnCrtBroadcast *b, int64_t i, int64_t *l,
                       int64_t *r) {
  *l = *r = 0;
  for (int d = b->ndim - 1; d >= 0; d--) {
    int64_t k = i % b->dims[d];
    i /= b->dims[d];
    *l += k * b->lhs_strides[d], *r += k * b->rhs_strides[d];
  }
}

START_TEST(test_qadd_qmul) {
  /* TFLite's Prepare by hand for equal scales s: inputs scaled by 1/2, the
   * sum by 2s / (2^20 s) = 2^-19. */
  TnCrtQBinary p;
  KT_CHECK_OK(tn_crt_qadd_params(0.05, 3, 0.05, -4, 0.05, 7, &p));
  ck_assert_int_eq(p.lhs_multiplier, 1 << 30);
  ck_assert_int_eq(p.lhs_shift, 0);
  ck_assert_int_eq(p.rhs_multiplier, 1 << 30);
  ck_assert_int_eq(p.output_multiplier, 1 << 30);
  ck_assert_int_eq(p.output_shift, -18);
  ck_assert_int_eq(p.left_shift, 20);
  ck_assert_int_eq(p.lhs_offset, -3);
  ck_assert_int_eq(p.rhs_offset, 4);
  ck_assert_int_eq(p.output_offset, 7);

  KtRng r = kt_rng(7);
  for (int it = 0; it < 600; it++) {
    /* TFLite holds the scales as float: the reference starts from them. */
    float sl = (float)rand_log2(&r, -9, 0), sr = (float)rand_log2(&r, -9, 0);
    float so = (float)rand_log2(&r, -8, 1);
    if (it % 4 == 0) sr = sl;
    int32_t zl = rand_zp(&r), zr = rand_zp(&r), zo = rand_zp(&r);
    int is_mul = it % 2;
    TnCrtQBinary q;
    TnCrtBroadcast b;
    int64_t ln, rn, on;
    rand_broadcast(&r, &b, &ln, &rn, &on);
    int8_t *lhs = rand_s8(&r, ln, -128, 127), *rhs = rand_s8(&r, rn, -128, 127);
    int8_t *got = xalloc((size_t)on);
    int32_t m[3], s[3];
    if (is_mul) {
      KT_CHECK_OK(tn_crt_qmul_params(sl, zl, sr, zr, so, zo, &q));
      quantize((double)sl * (double)sr / (double)so, &m[2], &s[2]);
    } else {
      KT_CHECK_OK(tn_crt_qadd_params(sl, zl, sr, zr, so, zo, &q));
      double twice_max = 2.0 * (double)(sl > sr ? sl : sr);
      quantize((double)sl / twice_max, &m[0], &s[0]);
      quantize((double)sr / twice_max, &m[1], &s[1]);
      quantize(twice_max / (1048576.0 * (double)so), &m[2], &s[2]);
      EXPECT(q.lhs_multiplier == m[0] && q.lhs_shift == s[0] &&
             q.rhs_multiplier == m[1] && q.rhs_shift == s[1],
             "qadd params for %a %a", (double)sl, (double)sr);
    }
    EXPECT(q.output_multiplier == m[2] && q.output_shift == s[2],
           "params for %a %a %a", (double)sl, (double)sr, (double)so);
    if (it % 5 == 0) q.act_min = -100, q.act_max = 50;
    KT_CHECK_OK(is_mul ? tn_crt_qmul_s8(&q, &b, lhs, rhs, got)
                       : tn_crt_qadd_s8(&q, &b, lhs, rhs, got));
    for (int64_t i = 0; i < on; i++) {
      int64_t lo, ro;
      bc_offsets(&b, i, &lo, &ro);
      int32_t x = lhs[lo] - zl, y = rhs[ro] - zr, raw;
      if (is_mul) {
        raw = tn_crt_multiply_by_quantized_multiplier(x * y, m[2], s[2]);
      } else {
        int32_t a = tn_crt_multiply_by_quantized_multiplier(x * (1 << 20),
                                                            m[0], s[0]);
        int32_t c = tn_crt_multiply_by_quantized_multiplier(y * (1 << 20),
                                                            m[1], s[1]);
        raw = tn_crt_multiply_by_quantized_multiplier(a + c, m[2], s[2]);
      }
      int32_t want = clamp_i((int64_t)raw + zo, q.act_min, q.act_max);
      EXPECT(got[i] == want, "%s case %d element %lld: %d, expected %d",
             is_mul ? "mul" : "add", it, (long long)i, got[i], want);
      /* And the real-number result, to within one step of the output. */
      double real = is_mul ? (double)sl * x * ((double)sr * y)
                           : (double)sl * x + (double)sr * y;
      int64_t fq = clamp_i(llround(real / so) + zo, q.act_min, q.act_max);
      EXPECT(llabs(fq - got[i]) <= 1, "%s case %d: %d, float says %lld",
             is_mul ? "mul" : "add", it, got[i], (long long)fq);
    }
    free(lhs), free(rhs), free(got);
  }
}
END_TEST

/* ADD over long contiguous runs (on x86, sixteen elements at a time in
 * the AVX-512 form, eight in the AVX2 one, the rest in C), with the
 * multipliers and shifts the inlined arithmetic takes (multipliers >= 0,
 * shifts in [-31, 0]) at their extremes, any left shift and offsets, and
 * an activation range; against TFLite's formula. */
/* With qadd_count set, the elements that differ are counted there
 * instead of failing the test. */
static int *qadd_count;
/* Parameters the inlined arithmetic takes, drawn as described above. */
static void rand_qadd_fast(KtRng *rp, TnCrtQBinary *qp) {
  KtRng r = *rp;
  TnCrtQBinary q;
  memset(&q, 0, sizeof q);
  q.lhs_offset = -rand_zp(&r), q.rhs_offset = -rand_zp(&r);
  q.output_offset = rand_zp(&r);
  q.left_shift = kt_int(&r, 0, 3) ? 20 : kt_int(&r, 0, 24);
  int32_t *m[3] = {&q.lhs_multiplier, &q.rhs_multiplier,
                   &q.output_multiplier};
  int32_t *sh[3] = {&q.lhs_shift, &q.rhs_shift, &q.output_shift};
  for (int i = 0; i < 3; i++) {
    int k = kt_int(&r, 0, 5);
    *m[i] = k == 0 ? 0 : k == 1 ? INT32_MAX
                                : kt_int(&r, k == 2 ? 0 : 1 << 30,
                                         INT32_MAX);
    k = kt_int(&r, 0, 5);
    *sh[i] = k == 0 ? 0 : k == 1 ? -31 : kt_int(&r, -31, 0);
  }
  if (kt_int(&r, 0, 5) == 0) {
    /* exact halves: each operand scaled to (x + offset) * 2^(left - 1),
     * the output to their sum / 2 rounded, so that odd sums, negative
     * ones among them, land on the rounding's ties within int8 (random
     * multipliers almost never do) */
    q.left_shift = kt_int(&r, 2, 24);
    q.lhs_multiplier = q.rhs_multiplier = q.output_multiplier = 1 << 30;
    q.lhs_shift = q.rhs_shift = 0;
    q.output_shift = 1 - q.left_shift;
  }
  q.act_min = kt_int(&r, 0, 2) ? -128 : kt_int(&r, -128, 0);
  q.act_max = kt_int(&r, 0, 2) ? 127 : kt_int(&r, q.act_min, 127);
  *rp = r, *qp = q;
}
/* TFLite's ADD of one pair of inputs under q. */
static int32_t qadd_formula(const TnCrtQBinary *q, int32_t x, int32_t y) {
  int32_t a = (int32_t)((uint32_t)(x + q->lhs_offset) << q->left_shift);
  int32_t c = (int32_t)((uint32_t)(y + q->rhs_offset) << q->left_shift);
  a = tn_crt_multiply_by_quantized_multiplier(a, q->lhs_multiplier,
                                              q->lhs_shift);
  c = tn_crt_multiply_by_quantized_multiplier(c, q->rhs_multiplier,
                                              q->rhs_shift);
  int32_t raw = tn_crt_multiply_by_quantized_multiplier(
      (int32_t)((uint32_t)a + (uint32_t)c), q->output_multiplier,
      q->output_shift);
  return clamp_i((int32_t)((uint32_t)raw + (uint32_t)q->output_offset),
                 q->act_min, q->act_max);
}
static void qadd_runs_of(uint64_t seed, int its, int32_t max_run) {
  KtRng r = kt_rng(seed);
  for (int it = 0; it < its; it++) {
    TnCrtQBinary q;
    rand_qadd_fast(&r, &q);
    TnCrtBroadcast b;
    memset(&b, 0, sizeof b);
    b.ndim = 2;
    b.dims[0] = kt_int(&r, 1, 3), b.dims[1] = kt_int(&r, 1, max_run);
    b.lhs_strides[1] = b.rhs_strides[1] = 1;
    b.lhs_strides[0] = b.rhs_strides[0] = b.dims[1];
    int64_t on = (int64_t)b.dims[0] * b.dims[1];
    int8_t *lhs = rand_s8(&r, on, -128, 127), *rhs = rand_s8(&r, on, -128, 127);
    int8_t *got = xalloc((size_t)on);
    KT_CHECK_OK(tn_crt_qadd_s8(&q, &b, lhs, rhs, got));
    for (int64_t i = 0; i < on; i++) {
      int32_t want = qadd_formula(&q, lhs[i], rhs[i]);
      if (qadd_count)
        *qadd_count += got[i] != want;
      else
        EXPECT(got[i] == want,
               "qadd run case %d element %lld: %d, expected %d", it,
               (long long)i, got[i], want);
    }
    free(lhs), free(rhs), free(got);
  }
}

static void qadd_runs(uint64_t seed) { qadd_runs_of(seed, 300, 100); }

START_TEST(test_qadd_runs) { EACH_ISA(qadd_runs(17)); }
END_TEST

/* Runs long enough for the table form (x86/quant.c, 512 elements and
 * more, where the CPU has AVX512-VBMI), at every level; then the form
 * broken on purpose (tn__crt_qadd_table_fault) must be seen to differ
 * where the CPU runs it. */
void tn__crt_qadd_table_fault(int how);
void tn__crt_qadd_lut_fault(int how);
START_TEST(test_qadd_long_runs) {
  EACH_ISA(qadd_runs_of(19, 60, 3000));
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & bit_AVX512VBMI) &&
      (tn_crt_isa() & TN_CRT_ISA_LEVEL_MASK) >= TN_CRT_ISA_AVX512BW) {
    int bad = 0;
    qadd_count = &bad;
    tn__crt_qadd_table_fault(1);
    qadd_runs_of(19, 60, 3000);
    tn__crt_qadd_table_fault(0);
    qadd_count = NULL;
    ck_assert_msg(bad > 0, "the broken table form went unseen");
    /* and capped at AVX2, where the form is not taken, nothing differs */
    tn_crt_isa_limit(TN_CRT_ISA_AVX2);
    tn__crt_qadd_table_fault(1);
    qadd_count = &bad;
    bad = 0;
    qadd_runs_of(19, 60, 3000);
    qadd_count = NULL;
    tn__crt_qadd_table_fault(0);
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
    ck_assert_int_eq(bad, 0);
  }
#endif
}
END_TEST

/* The ADD's table form (quant.c: add_lut_run; on a Cortex-M its DSP loop,
 * which kernels_check runs there), taken by tn_crt_call_qadd_s8 given the
 * scratch tn_crt_qadd_s8_scratch_size_isa asks for the Cortex-M DSP build,
 * where the AVX2 forms are not (here: capped at the portable level), in
 * calls of 256 elements and more.
 * Every other case puts every pair of int8 inputs through it (65,536
 * elements: every sum the output's requantization can see under those
 * parameters, so the table form's rewriting of that requantization is
 * checked exhaustively for them); the others random broadcasts. Against
 * TFLite's formula. Every third case has a model's parameters (TFLite's
 * Prepare), which the form always takes; the others are drawn as
 * qadd_runs_of's, some of which it leaves to add_run_fast. With count set
 * a difference is counted instead of failing the test: returns the
 * model's cases with a difference. */
static int qadd_lut_cases(uint64_t seed, int its, int count) {
  KtRng r = kt_rng(seed);
  int differ = 0;
  for (int it = 0; it < its; it++) {
    TnCrtQBinary q;
    if (it % 3 == 1) {
      /* a model's: TFLite's Prepare from random zero points and scales
       * within a factor of 4 of each other, as a residual ADD's are */
      const double sl = rand_log2(&r, -9, 0), sr = sl * rand_log2(&r, -2, 2);
      const double so = (sl > sr ? sl : sr) * rand_log2(&r, -1, 2);
      KT_CHECK_OK(tn_crt_qadd_params(sl, rand_zp(&r), sr, rand_zp(&r), so,
                                     rand_zp(&r), &q));
    } else {
      rand_qadd_fast(&r, &q);
    }
    TnCrtBroadcast b;
    int64_t ln, rn, on;
    int8_t *lhs, *rhs;
    if (it % 2 == 0) {
      memset(&b, 0, sizeof b);
      b.ndim = 1, b.dims[0] = 65536;
      b.lhs_strides[0] = b.rhs_strides[0] = 1;
      on = 65536;
      lhs = xalloc(65536), rhs = xalloc(65536);
      for (int32_t i = 0; i < 65536; i++)
        lhs[i] = (int8_t)(i & 255), rhs[i] = (int8_t)(i >> 8);
    } else {
      do rand_broadcast(&r, &b, &ln, &rn, &on); while (on < 256);
      lhs = rand_s8(&r, ln, -128, 127), rhs = rand_s8(&r, rn, -128, 127);
    }
    int8_t *got = xalloc((size_t)on);
    /* the call with the scratch a Cortex-M DSP plan gives it */
    TnCrtCallQBinary cp = {q, b};
    const size_t size =
        tn_crt_qadd_s8_scratch_size_isa(&q, &b, TN_CRT_ISA_ARM_DSP);
    if (it % 3 == 1) ck_assert_uint_eq(size, 2048);
    ck_assert_uint_eq(tn_crt_qadd_s8_scratch_size_isa(&q, &b,
                                                      TN_CRT_ISA_PORTABLE), 0);
    _Alignas(16) static int32_t scratch[512];
    const void *in[2] = {lhs, rhs};
    KT_CHECK_OK(tn_crt_call_qadd_s8(&cp, in, got, scratch, size));
    int bad = 0;
    for (int64_t i = 0; i < on; i++) {
      int64_t lo, ro;
      bc_offsets(&b, i, &lo, &ro);
      int32_t want = qadd_formula(&q, lhs[lo], rhs[ro]);
      bad += got[i] != want;
      if (!count)
        EXPECT(got[i] == want, "qadd table case %d element %lld: %d, "
               "expected %d", it, (long long)i, got[i], want);
    }
    differ += bad > 0 && it % 3 == 1;
    free(lhs), free(rhs), free(got);
  }
  return differ;
}

START_TEST(test_qadd_table_form) {
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(qadd_lut_cases(23, 60, 0), 0);
  /* broken on purpose: the lhs table built from the next inputs */
  tn__crt_qadd_lut_fault(1);
  const int differ = qadd_lut_cases(23, 60, 1);
  tn__crt_qadd_lut_fault(0);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  ck_assert_msg(differ == 20, "the broken table form differed in %d of the "
                "20 cases with a model's parameters", differ);
}
END_TEST

START_TEST(test_qadd_runs_portable) {
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  ck_assert_int_eq(tn_crt_isa(), TN_CRT_ISA_PORTABLE);
  qadd_runs(17);
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Softmax, logistic, tanh                                                    */
/* ------------------------------------------------------------------------ */

/* gemmlowp's fixed-point exp, reciprocal, logistic and tanh, from its
 * definitions, on raw int32 values with `ib` integer bits: the reference
 * semantics of TFLite's int8 softmax, logistic and tanh. */
/* ADD with parameters tn_crt_qadd_params never makes (a left shift of a
 * multiplier, a negative multiplier, another left_shift): the kernel's
 * general loop, against the same formula. */
START_TEST(test_qadd_any_params) {
  KtRng r = kt_rng(13);
  for (int it = 0; it < 200; it++) {
    TnCrtQBinary q;
    memset(&q, 0, sizeof q);
    q.lhs_offset = kt_int(&r, -128, 127), q.rhs_offset = kt_int(&r, -128, 127);
    q.output_offset = kt_int(&r, -128, 127);
    q.left_shift = kt_int(&r, 0, 20);
    int32_t *m[3] = {&q.lhs_multiplier, &q.rhs_multiplier,
                     &q.output_multiplier};
    int32_t *sh[3] = {&q.lhs_shift, &q.rhs_shift, &q.output_shift};
    for (int i = 0; i < 3; i++) {
      *m[i] = kt_int(&r, 0, 3) ? kt_int(&r, 1 << 30, INT32_MAX)
                               : (int32_t)(uint32_t)kt_next(&r);
      *sh[i] = kt_int(&r, -24, 0);
    }
    *sh[kt_int(&r, 0, 2)] = kt_int(&r, -33, 4); /* now and then out of line */
    q.act_min = kt_int(&r, -128, 0), q.act_max = kt_int(&r, q.act_min, 127);
    TnCrtBroadcast b;
    int64_t ln, rn, on;
    rand_broadcast(&r, &b, &ln, &rn, &on);
    int8_t *lhs = rand_s8(&r, ln, -128, 127), *rhs = rand_s8(&r, rn, -128, 127);
    int8_t *got = xalloc((size_t)on);
    KT_CHECK_OK(tn_crt_qadd_s8(&q, &b, lhs, rhs, got));
    for (int64_t i = 0; i < on; i++) {
      int64_t lo, ro;
      bc_offsets(&b, i, &lo, &ro);
      int32_t a = (int32_t)((uint32_t)(lhs[lo] + q.lhs_offset) << q.left_shift);
      int32_t c = (int32_t)((uint32_t)(rhs[ro] + q.rhs_offset) << q.left_shift);
      a = tn_crt_multiply_by_quantized_multiplier(a, q.lhs_multiplier,
                                                  q.lhs_shift);
      c = tn_crt_multiply_by_quantized_multiplier(c, q.rhs_multiplier,
                                                  q.rhs_shift);
      int32_t raw = tn_crt_multiply_by_quantized_multiplier(
          (int32_t)((uint32_t)a + (uint32_t)c), q.output_multiplier,
          q.output_shift);
      int32_t want = clamp_i(
          (int32_t)((uint32_t)raw + (uint32_t)q.output_offset), q.act_min,
          q.act_max);
      EXPECT(got[i] == want, "case %d element %lld: %d, expected %d", it,
             (long long)i, got[i], want);
    }
    free(lhs), free(rhs), free(got);
  }
}
END_TEST

static int32_t g_mul_pot(int32_t x, int e) { /* saturating, e > 0 */
  int64_t lim = (INT64_C(1) << (31 - e)) - 1;
  return x > lim ? INT32_MAX : x < -lim ? INT32_MIN : (int32_t)(x * (INT64_C(1) << e));
}
static int32_t g_exp_neg(int32_t a, int ib) {
  static const int32_t k[7] = {1672461947, 1302514674, 790015084, 290630308,
                               39332535,   720401,     242};
  int fb = 31 - ib;
  int32_t quarter = 1 << (fb - 2);
  int32_t am = (a & (quarter - 1)) - quarter; /* in [-1/4, 0) */
  int32_t x = (ib ? g_mul_pot(am, ib) : am) + (1 << 28);
  int32_t x2 = tn_crt_srdhm(x, x), x3 = tn_crt_srdhm(x2, x);
  int32_t x4 = tn_crt_srdhm(x2, x2);
  int32_t t = tn_crt_rounding_divide_by_pot(
      tn_crt_srdhm(tn_crt_rounding_divide_by_pot(x4, 2) + x3, 715827883) + x2,
      1);
  int32_t res = 1895147668 + tn_crt_srdhm(1895147668, x + t);
  int64_t rem = (int64_t)am - a;
  for (int e = -2; e <= 4; e++)
    if (ib > e && (rem >> (fb + e) & 1)) res = tn_crt_srdhm(res, k[e + 2]);
  if (ib > 5 && a < -(INT64_C(1) << (36 - ib))) res = 0;
  return a == 0 ? INT32_MAX : res;
}
/* 1 / half_denominator in Q2.29, three Newton steps from 48/17 - 32/17 d. */
static int32_t g_recip(int32_t a) {
  int32_t d = (int32_t)(((int64_t)a + INT32_MAX + 1) / 2); /* a >= 0 here */
  int32_t x = 1515870810 + tn_crt_srdhm(d, -1010580540);
  for (int i = 0; i < 3; i++)
    x += g_mul_pot(tn_crt_srdhm(x, (1 << 29) - tn_crt_srdhm(d, x)), 2);
  return x;
}
static int32_t g_logistic_q4(int32_t a) {
  if (a == 0) return 1 << 30;
  int32_t pos = g_mul_pot(g_recip(g_exp_neg(a > 0 ? -a : a, 4)), 1);
  return a > 0 ? pos : INT32_MAX - pos;
}
static int32_t g_tanh_q4(int32_t a) {
  if (a == 0) return 0;
  int32_t t = g_mul_pot(g_recip(g_exp_neg(a < 0 ? a : -a, 5)) - (1 << 29), 2);
  return a < 0 ? -t : t;
}

/* TFLite's int8 softmax of one row, Prepare included. */
static void ref_softmax(double beta, double scale, int32_t n, const int8_t *x,
                        int8_t *y) {
  double real = (double)(float)beta * (double)(float)scale * 67108864.0;
  int32_t m, s;
  quantize(real < 2147483647.0 ? real : 2147483647.0, &m, &s);
  int32_t diff_min = -(int32_t)floor(31.0 * 67108864.0 / ldexp(1.0, s));
  int32_t max = -128;
  for (int32_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
  int64_t sum = 0;
  for (int32_t i = 0; i < n; i++)
    if (x[i] - max >= diff_min)
      sum += tn_crt_rounding_divide_by_pot(
          g_exp_neg(tn_crt_srdhm((x[i] - max) * (1 << s), m), 5), 12);
  int hp1 = 0; /* leading zeros of the Q12.19 sum */
  while (hp1 < 32 && !(sum & (INT64_C(1) << (31 - hp1)))) hp1++;
  int32_t recip = g_mul_pot(g_recip((int32_t)((sum << hp1) - (INT64_C(1) << 31))), 1);
  int e = 12 - hp1 + 31 - 8;
  for (int32_t i = 0; i < n; i++) {
    int32_t v = -128;
    if (x[i] - max >= diff_min) {
      int32_t ex = g_exp_neg(tn_crt_srdhm((x[i] - max) * (1 << s), m), 5);
      v = clamp_i(exact_rdbpot(tn_crt_srdhm(recip, ex), e) - 128, -128, 127);
    }
    y[i] = (int8_t)v;
  }
}

static void check_softmax_row(double beta, double scale, int32_t n,
                              const int8_t *x, const char *what) {
  TnCrtSoftmaxS8 p;
  KT_CHECK_OK(tn_crt_softmax_s8_params(beta, scale, &p));
  int8_t *got = xalloc((size_t)n), *want = xalloc((size_t)n);
  KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, n, x, got));
  ref_softmax(beta, scale, n, x, want);
  double sum = 0, max = -1e30;
  for (int32_t i = 0; i < n; i++) max = fmax(max, (double)x[i]);
  for (int32_t i = 0; i < n; i++) sum += exp(beta * scale * (x[i] - max));
  for (int32_t i = 0; i < n; i++) {
    EXPECT(got[i] == want[i], "softmax %s (n %d, scale %g) element %d: %d, "
           "expected %d", what, n, scale, i, got[i], want[i]);
    double pr = exp(beta * scale * (x[i] - max)) / sum;
    EXPECT(fabs((got[i] + 128) / 256.0 - pr) <= 1.0 / 256, "softmax %s "
           "element %d: %d for %g", what, i, got[i], pr);
  }
  free(got), free(want);
}

START_TEST(test_softmax) {
  /* TFLite Micro's outputs for one row under three quantizations. */
  static const int8_t row[12] = {-128, -90, -30, 0, 1, 2, 50, 100, 126, 127,
                                 127, -1};
  static const struct {
    double scale, beta;
    int32_t mult, shift, diff_min;
    int8_t out[12];
  } golden[] = {
      {0.0625, 1.0, 1073741824, 23, -248,
       {-128, -128, -128, -128, -128, -128, -127, -113, -51, -46, -46, -128}},
      {0.00390625, 1.0, 1073741824, 19, -3968,
       {-117, -115, -112, -109, -109, -109, -105, -101, -98, -98, -98, -110}},
      {0.2f, 0.5, 1717986944, 23, -248,
       {-128, -128, -128, -128, -128, -128, -128, -122, -50, -42, -42, -128}},
  };
  for (size_t g = 0; g < sizeof golden / sizeof golden[0]; g++) {
    TnCrtSoftmaxS8 p;
    int8_t out[12];
    KT_CHECK_OK(tn_crt_softmax_s8_params(golden[g].beta, golden[g].scale, &p));
    ck_assert_int_eq(p.input_multiplier, golden[g].mult);
    ck_assert_int_eq(p.input_left_shift, golden[g].shift);
    ck_assert_int_eq(p.diff_min, golden[g].diff_min);
    KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, 12, row, out));
    ck_assert_mem_eq(out, golden[g].out, 12);
  }
  /* n = 1: probability one, the largest output. */
  const int8_t one[1] = {-7};
  int8_t o1[1];
  TnCrtSoftmaxS8 p;
  KT_CHECK_OK(tn_crt_softmax_s8_params(1.0, 0.1, &p));
  KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, 1, one, o1));
  ck_assert_int_eq(o1[0], 127);
  /* Equal values: 1/n each (n = 4: 64/256, zero point -128). */
  int8_t eq[1500], oe[1500];
  memset(eq, 33, sizeof eq);
  KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, 4, eq, oe));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(oe[i], -64);
  check_softmax_row(1.0, 0.1, 7, eq, "equal");
  check_softmax_row(1.0, 0.1, 300, eq, "equal, n 300");
  /* One dominant value takes (almost) everything. */
  int8_t dom[40];
  memset(dom, -100, sizeof dom);
  dom[17] = 120;
  check_softmax_row(1.0, 0.1, 40, dom, "dominant");
  KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, 40, dom, oe));
  ck_assert_int_eq(oe[17], 127);
  ck_assert_int_eq(oe[0], -128);
  /* Large n (TFLite itself stops at a sum of 512: every output rounds to
   * zero there, which is what comes out). */
  KT_CHECK_OK(tn_crt_softmax_s8(&p, 1, 1500, eq, oe));
  for (int i = 0; i < 1500; i++) ck_assert_int_eq(oe[i], -128);
  KtRng r = kt_rng(8);
  for (int it = 0; it < 300; it++) {
    int32_t n = kt_int(&r, 1, it % 20 == 0 ? 1000 : 40);
    int8_t *x = rand_s8(&r, n, kt_int(&r, 0, 1) ? -128 : 90, 127);
    double scale = rand_log2(&r, -8, 0);
    double beta = kt_int(&r, 0, 3) ? 1.0 : kt_float(&r, 0.2f, 2.0f);
    check_softmax_row(beta, scale, n, x, "random");
    /* Several rows at once are the rows one by one. */
    int8_t *y = xalloc((size_t)n * 2), *x2 = xalloc((size_t)n * 2);
    memcpy(x2, x, (size_t)n), memcpy(x2 + n, x, (size_t)n);
    KT_CHECK_OK(tn_crt_softmax_s8_params(beta, scale, &p));
    KT_CHECK_OK(tn_crt_softmax_s8(&p, 2, n, x2, y));
    ck_assert_mem_eq(y, y + n, (size_t)n);
    free(x), free(y), free(x2);
  }
}
END_TEST

/* TFLM's int8 logistic (tanh) of v, Prepare included. */
static int8_t ref_lut(double in_scale, int32_t zp, int32_t v, int tanh_) {
  int sh;
  double q = frexp((double)(float)in_scale * 134217728.0, &sh);
  int32_t mult = (int32_t)round(q * 2147483648.0);
  int32_t radius = (int32_t)floor(15.0 * 134217728.0 / ldexp(1.0, sh));
  int32_t x = v - zp;
  if (x <= -radius) return -128;
  if (x >= radius) return 127;
  int32_t xq = tn_crt_multiply_by_quantized_multiplier(x, mult, sh);
  if (tanh_) return (int8_t)clamp_i(exact_rdbpot(g_tanh_q4(xq), 24), -128, 127);
  return (int8_t)clamp_i(exact_rdbpot(g_logistic_q4(xq), 23) - 128, -128, 127);
}

START_TEST(test_logistic_tanh) {
  /* TFLite Micro's tables for one quantization of each, as a run of the
   * first value, the values between, and a run of the last value. */
  static const struct {
    int tanh;
    double scale;
    int32_t zp;
    int8_t first, last;
    int n_first, n_mid;
    int8_t mid[219];
  } golden[] = {
      {0, 0.1, -5, -128, 127, 61, 114,
       {
          -127, -127, -127, -127, -127, -127, -127, -127, -127, -127, -127,
          -126, -126, -126, -126, -126, -125, -125, -125, -125, -124, -124,
          -123, -123, -122, -122, -121, -120, -120, -119, -118, -117, -116,
          -115, -113, -112, -110, -109, -107, -105, -102, -100, -97, -95, -92,
          -88, -85, -81, -77, -73, -69, -64, -59, -54, -49, -43, -37, -31,
          -25, -19, -13, -6, 0, 6, 13, 19, 25, 31, 37, 43, 49, 54, 59, 64, 69,
          73, 77, 81, 85, 88, 92, 95, 97, 100, 102, 105, 107, 109, 110, 112,
          113, 115, 116, 117, 118, 119, 120, 120, 121, 122, 122, 123, 123,
          124, 124, 125, 125, 125, 125, 126, 126, 126, 126, 126,}},
      {1, 0.0235294122, 3, -127, 127, 22, 219,
       {
          -126, -126, -126, -126, -126, -126, -126, -126, -126, -126, -126,
          -125, -125, -125, -125, -125, -125, -125, -125, -124, -124, -124,
          -124, -124, -123, -123, -123, -123, -122, -122, -122, -122, -121,
          -121, -121, -120, -120, -120, -119, -119, -118, -118, -118, -117,
          -117, -116, -115, -115, -114, -114, -113, -112, -112, -111, -110,
          -109, -108, -108, -107, -106, -105, -104, -103, -102, -101, -99,
          -98, -97, -96, -94, -93, -91, -90, -88, -87, -85, -83, -82, -80,
          -78, -76, -74, -72, -70, -68, -65, -63, -61, -59, -56, -54, -51,
          -49, -46, -43, -41, -38, -35, -32, -30, -27, -24, -21, -18, -15,
          -12, -9, -6, -3, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 32, 35, 38,
          41, 43, 46, 49, 51, 54, 56, 59, 61, 63, 65, 68, 70, 72, 74, 76, 78,
          80, 82, 83, 85, 87, 88, 90, 91, 93, 94, 96, 97, 98, 99, 101, 102,
          103, 104, 105, 106, 107, 108, 108, 109, 110, 111, 112, 112, 113,
          114, 114, 115, 115, 116, 117, 117, 118, 118, 118, 119, 119, 120,
          120, 120, 121, 121, 121, 122, 122, 122, 122, 123, 123, 123, 123,
          124, 124, 124, 124, 124, 125, 125, 125, 125, 125, 125, 125, 125,
          126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126,}},
  };
  TnCrtLut8 t;
  for (int g = 0; g < 2; g++) {
    KT_CHECK_OK(golden[g].tanh ? tn_crt_tanh_s8_table(golden[g].scale,
                                                      golden[g].zp, 1.0 / 128,
                                                      0, &t)
                               : tn_crt_logistic_s8_table(golden[g].scale,
                                                          golden[g].zp,
                                                          1.0 / 256, -128,
                                                          &t));
    for (int i = 0; i < 256; i++) {
      int k = i - golden[g].n_first;
      int8_t want = k < 0 ? golden[g].first
                    : k < golden[g].n_mid ? golden[g].mid[k] : golden[g].last;
      EXPECT(t.table[(uint8_t)(i - 128)] == want, "%s(%d) = %d, TFLite says "
             "%d", golden[g].tanh ? "tanh" : "logistic", i - 128,
             t.table[(uint8_t)(i - 128)], want);
    }
  }
  /* Many quantizations: TFLM's algorithm, and float within one step. */
  KtRng r = kt_rng(9);
  for (int it = 0; it < 60; it++) {
    double s = rand_log2(&r, -9, 1);
    int32_t zp = rand_zp(&r);
    TnCrtLut8 lg, th;
    KT_CHECK_OK(tn_crt_logistic_s8_table(s, zp, 1.0 / 256, -128, &lg));
    KT_CHECK_OK(tn_crt_tanh_s8_table(s, zp, 0.0078125, 0, &th));
    for (int v = -128; v < 128; v++) {
      int8_t l = lg.table[(uint8_t)v], h = th.table[(uint8_t)v];
      EXPECT(l == ref_lut(s, zp, v, 0), "logistic(%d), scale %g zp %d", v, s,
             zp);
      EXPECT(h == ref_lut(s, zp, v, 1), "tanh(%d), scale %g zp %d", v, s, zp);
      double x = (double)(float)s * (v - zp);
      EXPECT(fabs((l + 128) / 256.0 - 1 / (1 + exp(-x))) <= 1.0 / 256,
             "logistic(%g) = %d", x, l);
      EXPECT(fabs(h / 128.0 - tanh(x)) <= 1.0 / 128, "tanh(%g) = %d", x, h);
    }
  }
  /* Only TFLite's output quantizations. */
  EXPECT_ST(tn_crt_logistic_s8_table(0.1, 0, 1.0 / 128, -128, &t),
            TN_CRT_UNSUPPORTED);
  EXPECT_ST(tn_crt_logistic_s8_table(0.1, 0, 1.0 / 256, 0, &t),
            TN_CRT_UNSUPPORTED);
  EXPECT_ST(tn_crt_tanh_s8_table(0.1, 0, 1.0 / 256, 0, &t),
            TN_CRT_UNSUPPORTED);
  EXPECT_ST(tn_crt_tanh_s8_table(0.1, -128, 1.0 / 128, -128, &t),
            TN_CRT_UNSUPPORTED);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad arguments                                                              */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Mean (TFLite's int8 MEAN)                                                  */
/* ------------------------------------------------------------------------ */

/* TFLite's QuantizedMeanOrSum written again: QuantizeMultiplier of the
 * float scales' ratio, 1/count folded in with a shift of 63 - clz(count)
 * (at most 32 and 31 + shift), the int64 sum less zp * count cast to
 * int32, requantized, saturated. The elements of each output are found by
 * decomposing indices, independently of the kernel's walk. */
static void ref_mean_s8(const TnCrtReduce *p, const int8_t *x, float si,
                        int32_t izp, float so, int32_t ozp, int8_t *out) {
  int64_t n = 1, outputs = 1, count = 1, st[8];
  for (int32_t d = p->ndim - 1; d >= 0; d--) st[d] = n, n *= p->dims[d];
  for (int32_t d = 0; d < p->ndim; d++)
    if ((p->reduce_mask >> d) & 1) count *= p->dims[d];
    else outputs *= p->dims[d];
  int32_t m, sh;
  quantize((double)si / (double)so, &m, &sh);
  int s = 63 - __builtin_clzll((unsigned long long)count);
  s = s < 32 ? s : 32;
  s = s < 31 + sh ? s : 31 + sh;
  m = (int32_t)(((int64_t)m << s) / count);
  sh -= s;
  for (int64_t o = 0; o < outputs; o++) {
    int64_t sum = 0;
    for (int64_t k = 0; k < count; k++) {
      int64_t ro = o, rk = k, off = 0;
      for (int32_t d = p->ndim - 1; d >= 0; d--) {
        int64_t e = p->dims[d];
        if ((p->reduce_mask >> d) & 1) off += rk % e * st[d], rk /= e;
        else off += ro % e * st[d], ro /= e;
      }
      sum += x[off];
    }
    int32_t shifted = (int32_t)(uint32_t)(uint64_t)(sum - izp * count);
    out[o] = (int8_t)clamp_i(
        (int64_t)tn_crt_multiply_by_quantized_multiplier(shifted, m, sh) +
            ozp,
        -128, 127);
  }
}

START_TEST(test_mean) {
  KtRng r = kt_rng(31);
  for (int c = 0; c < 400; c++) {
    TnCrtReduce p = {0};
    p.ndim = kt_int(&r, 1, 5);
    int64_t n = 1;
    for (int32_t d = 0; d < p.ndim; d++) {
      p.dims[d] = kt_int(&r, 1, c % 10 == 0 ? 40 : 7);
      n *= p.dims[d];
      if (kt_int(&r, 0, 1)) p.reduce_mask |= 1u << d;
    }
    if (c % 6 == 0) p.reduce_mask = (1u << p.ndim) - 1;
    /* scales within 2^-12..2^12 of each other; equal ones a sixth of the
     * time (TFLite Micro treats them like any other) */
    float si = (float)rand_log2(&r, -10, 2);
    float so = c % 6 == 1 ? si : (float)(si * rand_log2(&r, -12, 12));
    int32_t izp = rand_zp(&r), ozp = c % 6 == 1 ? izp : rand_zp(&r);
    TnCrtQMean q;
    int64_t count = 1;
    for (int32_t d = 0; d < p.ndim; d++)
      if ((p.reduce_mask >> d) & 1) count *= p.dims[d];
    KT_CHECK_OK(tn_crt_mean_s8_params(si, izp, so, ozp, (int32_t)count, &q));
    int8_t *x = rand_s8(&r, n, -128, 127);
    int8_t *y = xalloc((size_t)n), *want = xalloc((size_t)n);
    size_t ss = tn_crt_mean_s8_scratch_size(&p);
    void *scratch = xalloc(ss);
    KT_CHECK_OK(tn_crt_mean_s8(&p, &q, x, y, scratch, ss));
    ref_mean_s8(&p, x, si, izp, so, ozp, want);
    EXPECT(memcmp(y, want, (size_t)(n / count)) == 0, "mean_s8 case %d", c);
    free(x), free(y), free(want), free(scratch);
  }
  /* by hand: 101 / 4 with equal quantization is 26, not 25 (TFLite's
   * double rounding: 101 * 2^30 / 2^31 rounds to 51, 51 / 2 to 26) */
  TnCrtReduce p = {4, {1, 2, 2, 1}, 6};
  TnCrtQMean q;
  KT_CHECK_OK(tn_crt_mean_s8_params(0.5, 0, 0.5, 0, 4, &q));
  ck_assert_int_eq(q.multiplier, 1 << 30);
  ck_assert_int_eq(q.shift, -1);
  int8_t x[4] = {10, 20, 30, 41}, y = 0;
  int32_t acc[1];
  KT_CHECK_OK(tn_crt_mean_s8(&p, &q, x, &y, acc, sizeof acc));
  ck_assert_int_eq(y, 26);
  /* saturation, and zero points far apart */
  int8_t hi[4] = {127, 127, 127, 127};
  KT_CHECK_OK(tn_crt_mean_s8_params(1.0, -128, 0.25, 100, 4, &q));
  KT_CHECK_OK(tn_crt_mean_s8(&p, &q, hi, &y, acc, sizeof acc));
  ck_assert_int_eq(y, 127);
  /* an empty reduction gives 0s (TFLite's untouched output) */
  TnCrtReduce e = {2, {3, 0}, 2};
  int8_t z[3] = {5, 5, 5};
  KT_CHECK_OK(tn_crt_mean_s8_params(1.0, 3, 1.0, 3, 0, &q));
  KT_CHECK_OK(tn_crt_mean_s8(&e, &q, NULL, z, acc, sizeof acc));
  ck_assert(z[0] == 0 && z[1] == 0 && z[2] == 0);
  /* a count above 2^31 / 2 keeps the shift at 30 */
  KT_CHECK_OK(tn_crt_mean_s8_params(1.0, 0, 1.0, 0, INT32_MAX, &q));
  ck_assert_int_eq(q.shift, 1 - 30);

  /* bad arguments */
  const TnCrtStatus BAD = TN_CRT_INVALID_ARGUMENT;
  KT_CHECK_OK(tn_crt_mean_s8_params(0.5, 0, 0.5, 0, 4, &q));
  EXPECT_ST(tn_crt_mean_s8(NULL, &q, x, &y, acc, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8(&p, NULL, x, &y, acc, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8(&p, &q, NULL, &y, acc, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8(&p, &q, x, NULL, acc, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8(&p, &q, x, &y, NULL, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8(&p, &q, x, &y, acc, 3), TN_CRT_SCRATCH_TOO_SMALL);
  q.count = 5; /* not the geometry's */
  EXPECT_ST(tn_crt_mean_s8(&p, &q, x, &y, acc, 4), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(0.5, 0, 0.5, 0, 4, NULL), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(0.5, 0, 0.5, 0, -1, &q), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(0.0, 0, 0.5, 0, 4, &q), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(0.5, 0, -0.5, 0, 4, &q), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(NAN, 0, 0.5, 0, 4, &q), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(0.5, 0, INFINITY, 0, 4, &q), BAD);
  EXPECT_ST(tn_crt_mean_s8_params(1e30, 0, 1e-30, 0, 4, &q),
            TN_CRT_UNSUPPORTED);
  ck_assert_uint_eq(tn_crt_mean_s8_scratch_size(NULL), 0);
  TnCrtReduce big = {2, {65536, 65536}, 1};
  ck_assert_uint_eq(tn_crt_mean_s8_scratch_size(&big), 0);
  EXPECT_ST(tn_crt_mean_s8(&big, &q, x, &y, acc, 4), TN_CRT_OVERFLOW);
}
END_TEST

START_TEST(test_bad_arguments) {
  const TnCrtStatus BAD = TN_CRT_INVALID_ARGUMENT;
  int8_t b8[64] = {0};
  int32_t b32[64] = {0}, one = 1 << 30, zero = 0;
  float f[64] = {0}, fs = 1.0f;
  TnCrtConv2d c = {1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1,
                   {8, 4, 2, 1}, {4, 4, 2, 1}, {8, 4, 2, 1}};
  TnCrtQuant q = {0, 0, 0, -128, 127, 0, 1, &one, &zero};
  /* (out == in would run in place, with a scratch) */
  KT_CHECK_OK(tn_crt_conv2d_s8(&c, &q, b8, b8, NULL, b8 + 8, NULL, 0));
  ck_assert_uint_eq(tn_crt_conv2d_s8_scratch_size(&c), 0);
  EXPECT_ST(tn_crt_conv2d_s8(NULL, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_conv2d_s8(&c, NULL, b8, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_conv2d_s8(&c, &q, NULL, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_conv2d_s8(&c, &q, b8, NULL, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_conv2d_s8(&c, &q, b8, b8, NULL, NULL, NULL, 0), BAD);
  EXPECT_ST(tn_crt_conv2d_s8_s32(&c, 0, 0, b8, b8, NULL, NULL), BAD);
  TnCrtConv2d c2 = c;
  c2.groups = 3; /* does not divide the channels */
  EXPECT_ST(tn_crt_conv2d_s8(&c2, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  c2 = c, c2.out_h = 0;
  EXPECT_ST(tn_crt_conv2d_s8_s32(&c2, 0, 0, b8, b8, NULL, b32), BAD);
  c2 = c, c2.stride_w = 0;
  EXPECT_ST(tn_crt_conv2d_s8(&c2, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  c2 = c, c2.dilation_h = -1;
  EXPECT_ST(tn_crt_conv2d_s8(&c2, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  c2 = c, c2.pad_left = -1;
  EXPECT_ST(tn_crt_conv2d_s8(&c2, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  c2 = c, c2.out_h = INT32_MAX, c2.stride_h = 2;
  EXPECT_ST(tn_crt_conv2d_s8(&c2, &q, b8, b8, NULL, b8, NULL, 0),
            TN_CRT_OVERFLOW);
  TnCrtQuant q2 = q;
  q2.act_min = 5, q2.act_max = 4;
  EXPECT_ST(tn_crt_conv2d_s8(&c, &q2, b8, b8, NULL, b8, NULL, 0), BAD);
  q2 = q, q2.shift = NULL;
  EXPECT_ST(tn_crt_conv2d_s8(&c, &q2, b8, b8, NULL, b8, NULL, 0), BAD);

  TnCrtDense d = {2, 3, 4, 3, 1};
  KT_CHECK_OK(tn_crt_dense_s8(&d, &q, b8, b8, b32, b8, NULL, 0));
  ck_assert_uint_eq(tn_crt_dense_s8_scratch_size(&d), 0);
  EXPECT_ST(tn_crt_dense_s8(NULL, &q, b8, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_dense_s8(&d, NULL, b8, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_dense_s8(&d, &q2, b8, b8, NULL, b8, NULL, 0), BAD);
  EXPECT_ST(tn_crt_dense_s8_s32(&d, 0, 0, NULL, b8, NULL, b32), BAD);
  TnCrtDense d2 = d;
  d2.in_features = 0;
  EXPECT_ST(tn_crt_dense_s8_s32(&d2, 0, 0, b8, b8, NULL, b32), BAD);

  TnCrtPool2d p = {1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0,
                   {4, 2, 1, 1}, {1, 1, 1, 1}};
  KT_CHECK_OK(tn_crt_avg_pool2d_s8(&p, b8, -128, 127, b8 + 8));
  EXPECT_ST(tn_crt_avg_pool2d_s8(NULL, b8, -128, 127, b8), BAD);
  EXPECT_ST(tn_crt_max_pool2d_s8(&p, NULL, -128, 127, b8), BAD);
  EXPECT_ST(tn_crt_max_pool2d_s8(&p, b8, 1, 0, b8 + 8), BAD);
  TnCrtPool2d p2 = p;
  p2.k_w = 0;
  EXPECT_ST(tn_crt_max_pool2d_s8(&p2, b8, -128, 127, b8 + 8), BAD);

  EXPECT_ST(tn_crt_quantize_f32_s8(1, 1, 0, f, &fs, &zero, b8), BAD);
  EXPECT_ST(tn_crt_quantize_f32_s8(1, 1, 4, f, NULL, &zero, b8), BAD);
  EXPECT_ST(tn_crt_dequantize_s8_f32(1, 1, 4, b8, &fs, NULL, f), BAD);
  EXPECT_ST(tn_crt_dequantize_s8_f32(-1, 1, 4, b8, &fs, &zero, f), BAD);
  TnCrtRequant rq = {0, 0, -128, 127, 1, &one, &zero};
  KT_CHECK_OK(tn_crt_requantize_s8_s8(&rq, 1, 1, 4, b8, b8 + 8));
  EXPECT_ST(tn_crt_requantize_s8_s8(&rq, 1, 0, 4, b8, b8), BAD);
  EXPECT_ST(tn_crt_requantize_s32_s8(NULL, 1, 1, 4, b32, b8), BAD);
  rq.multiplier = NULL;
  EXPECT_ST(tn_crt_requantize_s32_s8(&rq, 1, 1, 4, b32, b8), BAD);
  EXPECT_ST(tn_crt_clip_s8(0, b8, 0, 1, b8), BAD);
  EXPECT_ST(tn_crt_clip_s8(4, NULL, 0, 1, b8), BAD);
  EXPECT_ST(tn_crt_lut_s8(NULL, 4, b8, b8), BAD);

  TnCrtQBinary qb;
  TnCrtBroadcast bc = {1, {4}, {1}, {0}};
  KT_CHECK_OK(tn_crt_qadd_params(0.1, 0, 0.2, 0, 0.3, 0, &qb));
  KT_CHECK_OK(tn_crt_qadd_s8(&qb, &bc, b8, b8, b8 + 8));
  EXPECT_ST(tn_crt_qadd_s8(&qb, &bc, b8, NULL, b8), BAD);
  EXPECT_ST(tn_crt_qmul_s8(NULL, &bc, b8, b8, b8), BAD);
  bc.ndim = 0;
  EXPECT_ST(tn_crt_qadd_s8(&qb, &bc, b8, b8, b8), BAD);
  bc.ndim = 1, bc.dims[0] = 0;
  EXPECT_ST(tn_crt_qmul_s8(&qb, &bc, b8, b8, b8), BAD);
  EXPECT_ST(tn_crt_qadd_params(0.0, 0, 0.2, 0, 0.3, 0, &qb), BAD);
  EXPECT_ST(tn_crt_qadd_params(0.1, 0, 0.2, 300, 0.3, 0, &qb), BAD);
  EXPECT_ST(tn_crt_qmul_params(0.1, 0, NAN, 0, 0.3, 0, &qb), BAD);
  EXPECT_ST(tn_crt_qmul_params(0.1, 0, 0.2, 0, 0.3, 0, NULL), BAD);
  /* An output scale so fine that TFLite's ADD cannot express it. */
  EXPECT_ST(tn_crt_qadd_params(1.0, 0, 1.0, 0, 1e-7, 0, &qb),
            TN_CRT_UNSUPPORTED);

  TnCrtSoftmaxS8 sp;
  EXPECT_ST(tn_crt_softmax_s8_params(1.0, 0.0, &sp), BAD);
  EXPECT_ST(tn_crt_softmax_s8_params(-1.0, 0.1, &sp), BAD);
  EXPECT_ST(tn_crt_softmax_s8_params(1.0, 0.1, NULL), BAD);
  /* beta * scale so small that the multiplier is below one: TFLite
   * refuses it too. */
  EXPECT_ST(tn_crt_softmax_s8_params(1.0, 1e-9, &sp), TN_CRT_UNSUPPORTED);
  KT_CHECK_OK(tn_crt_softmax_s8_params(1.0, 0.1, &sp));
  EXPECT_ST(tn_crt_softmax_s8(&sp, 1, 0, b8, b8), BAD);
  EXPECT_ST(tn_crt_softmax_s8(&sp, 1, 4, NULL, b8), BAD);
  EXPECT_ST(tn_crt_softmax_s8(NULL, 1, 4, b8, b8), BAD);
  TnCrtLut8 t;
  EXPECT_ST(tn_crt_logistic_s8_table(0.1, 0, 1.0 / 256, -128, NULL), BAD);
  EXPECT_ST(tn_crt_logistic_s8_table(-0.1, 0, 1.0 / 256, -128, &t), BAD);
  EXPECT_ST(tn_crt_tanh_s8_table(0.1, 200, 1.0 / 128, 0, &t), BAD);
}
END_TEST

/* The LSTM kernels (lstm.c) by hand with zero weights and bias: every gate
 * is sigmoid(0) = 1/2 (tanh(0) = 0 for the cell gate), so each step halves
 * the cell state and the hidden state is tanh(c) / 2; then their argument
 * checks. */
START_TEST(test_lstm) {
  enum { B = 2, T = 3, I = 2, H = 3 };
  int8_t x[B * T * I] = {0}, wi[4 * H * I] = {0}, wr[4 * H * H] = {0};
  int8_t h0[B * H], seq[B * T * H];
  int32_t bias[4 * H] = {0};
  int16_t c0[B * H], cell[B * H];
  int8_t scratch[64];
  for (int i = 0; i < B * H; i++) h0[i] = 5, c0[i] = (int16_t)(1000 * (i + 1));
  TnCrtLstm p;
  memset(&p, 0, sizeof p);
  p.batch = B, p.steps = T, p.input_size = I, p.units = H;
  p.hidden_zero_point = 5;
  KT_CHECK_OK(tn_crt_quantize_multiplier(1.0 / 32768, &p.forget_multiplier,
                                         &p.forget_shift));
  KT_CHECK_OK(tn_crt_quantize_multiplier(1.0 / 32768, &p.input_multiplier,
                                         &p.input_shift));
  KT_CHECK_OK(tn_crt_quantize_multiplier(1.0 / 8388608, &p.output_multiplier,
                                         &p.output_shift));
  for (int g = 0; g < 8; g++) p.fc_multiplier[g] = 1 << 30;
  size_t ss = tn_crt_lstm_scratch_size(H, 2, 1);
  ck_assert_uint_eq(ss, 2 * H);
  p.emit = TN_CRT_LSTM_CELL;
  KT_CHECK_OK(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, cell, scratch, ss));
  for (int i = 0; i < B * H; i++)
    ck_assert_int_eq(cell[i], 125 * (i + 1)); /* c0 / 2^3, exactly */
  p.emit = TN_CRT_LSTM_SEQUENCE;
  KT_CHECK_OK(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, seq, scratch, ss));
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
      for (int j = 0; j < H; j++) {
        /* tanh(c) / 2 in units of 1/128: positive, below 1/2, shrinking */
        int v = seq[(b * T + t) * H + j] - 5;
        ck_assert(v > 0 && v < 64);
        if (t) ck_assert(v <= seq[(b * T + t - 1) * H + j] - 5);
      }
  /* the 16x8 form: the same cell state; the hidden state tanh(c) / 2 in
   * units of 2^-15 (zero point 0), int64 sums and bias */
  {
    int16_t x16[B * T * I] = {0}, h16[B * H] = {0}, seq16[B * T * H];
    int16_t cell16[B * H];
    int64_t bias64[4 * H] = {0};
    int16_t scratch16[2 * H];
    TnCrtLstm q = p;
    q.hidden_zero_point = 0;
    KT_CHECK_OK(tn_crt_quantize_multiplier(1.0 / 32768, &q.output_multiplier,
                                           &q.output_shift));
    size_t ss16 = tn_crt_lstm_scratch_size(H, 2, 2);
    ck_assert_uint_eq(ss16, sizeof scratch16);
    q.emit = TN_CRT_LSTM_CELL;
    KT_CHECK_OK(tn_crt_lstm_s16(&q, x16, wi, wr, bias64, h16, c0, cell16,
                                scratch16, ss16));
    for (int i = 0; i < B * H; i++) ck_assert_int_eq(cell16[i], cell[i]);
    q.emit = TN_CRT_LSTM_SEQUENCE;
    KT_CHECK_OK(tn_crt_lstm_s16(&q, x16, wi, wr, bias64, h16, c0, seq16,
                                scratch16, ss16));
    for (int b = 0; b < B; b++)
      for (int t = 0; t < T; t++)
        for (int j = 0; j < H; j++) {
          int v = seq16[(b * T + t) * H + j], v8 = seq[(b * T + t) * H + j] - 5;
          ck_assert(v > 0 && v < 16384);
          int d = v / 256 - v8; /* the int8 result, finer */
          ck_assert(d >= -1 && d <= 1);
        }
    EXPECT_ST(tn_crt_lstm_s16(&q, x16, wi, wr, bias64, h16, c0, seq16,
                              scratch16, ss16 - 1),
              TN_CRT_SCRATCH_TOO_SMALL);
    EXPECT_ST(tn_crt_lstm_s16(&q, x16, wi, wr, NULL, h16, c0, seq16,
                              scratch16, ss16),
              TN_CRT_INVALID_ARGUMENT);
  }
  /* float32: the same, exactly as the formula */
  float xf[B * T * I] = {0}, wif[4 * H * I] = {0}, wrf[4 * H * H] = {0};
  float bf[4 * H] = {0}, hf[B * H] = {0}, cf[B * H], sf[B * T * H];
  float fscratch[2 * H];
  for (int i = 0; i < B * H; i++) cf[i] = 1.0f + (float)i;
  KT_CHECK_OK(tn_crt_lstm_f32(&p, xf, wif, wrf, bf, hf, cf, sf, fscratch,
                              sizeof fscratch));
  for (int b = 0; b < B; b++)
    for (int j = 0; j < H; j++) {
      float c = cf[b * H + j] / 8.0f;
      ck_assert(sf[(b * T + 2) * H + j] == tanhf(c) * 0.5f);
    }
  /* argument checks: never a crash */
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, seq, scratch, ss - 1),
            TN_CRT_SCRATCH_TOO_SMALL);
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, seq, NULL, ss),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, NULL, bias, h0, c0, seq, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, NULL, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_lstm_f32(NULL, xf, wif, wrf, bf, hf, cf, sf, fscratch,
                            sizeof fscratch),
            TN_CRT_INVALID_ARGUMENT);
  p.emit = 2;
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, seq, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
  p.emit = TN_CRT_LSTM_SEQUENCE, p.units = 0;
  EXPECT_ST(tn_crt_lstm_s8(&p, x, wi, wr, bias, h0, c0, seq, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
  const void *ins[6] = {x, wi, wr, bias, h0, NULL};
  p.units = H;
  EXPECT_ST(tn_crt_call_lstm_s8(&p, ins, seq, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
  EXPECT_ST(tn_crt_call_lstm_s8(&p, NULL, seq, scratch, ss),
            TN_CRT_INVALID_ARGUMENT);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("kernels_s8");
  TCase *tc = tcase_create("kernels_s8");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_fixed_point_hand);
  tcase_add_test(tc, test_fixed_point_random);
  tcase_add_test(tc, test_conv_random);
  tcase_add_test(tc, test_conv_random_wide);
  tcase_add_test(tc, test_conv_random_wide_portable);
  tcase_add_test(tc, test_conv_vnni_broken_is_caught);
  tcase_add_test(tc, test_conv_dw_cols_random);
  tcase_add_test(tc, test_conv_dw_cols_broken_is_caught);
  tcase_add_test(tc, test_conv_rows2_random);
  tcase_add_test(tc, test_conv_gemm_random);
  tcase_add_test(tc, test_conv_dw_random);
  tcase_add_test(tc, test_conv_dw_wide_random);
  tcase_add_test(tc, test_conv_direct_random);
  tcase_add_test(tc, test_conv_gemm_broken_is_caught);
  tcase_add_test(tc, test_conv_rows_random);
  tcase_add_test(tc, test_conv_rows_broken_is_caught);
  tcase_add_test(tc, test_conv_dw_avx2_broken_is_caught);
  tcase_add_test(tc, test_conv_dw_avx2_rows_broken_is_caught);
  tcase_add_test(tc, test_conv_dw_avx2_float_broken_is_caught);
  tcase_add_test(tc, test_conv_dw_avx2_pairs_broken_is_caught);
  tcase_add_test(tc, test_conv_rows_avx2_broken_is_caught);
  tcase_add_test(tc, test_conv_rows8_random);
  tcase_add_test(tc, test_conv_dw_narrow_random);
  tcase_add_test(tc, test_conv_dw_stride2_random);
  tcase_add_test(tc, test_conv_rows8_broken_is_caught);
  tcase_add_test(tc, test_conv_ic_random);
  tcase_add_test(tc, test_conv_ic_broken_is_caught);
  tcase_add_test(tc, test_conv_packed_rows_broken_is_caught);
  tcase_add_test(tc, test_conv_packed_wide_windows);
  tcase_add_test(tc, test_conv_saturation);
  tcase_add_test(tc, test_conv_requant_corners);
  tcase_add_test(tc, test_conv_inplace_random);
  tcase_add_test(tc, test_conv_inplace_random_avx2);
  tcase_add_test(tc, test_conv_inplace_dw_avx2);
  tcase_add_test(tc, test_conv_inplace_dscnn);
  tcase_add_test(tc, test_conv_scratch_isa);
  tcase_add_test(tc, test_conv_forms_isa);
  tcase_add_test(tc, test_conv_inplace_geometry);
  tcase_add_test(tc, test_dense_random);
  tcase_add_test(tc, test_dense_random_portable);
  tcase_add_test(tc, test_dense_vnni);
  tcase_add_test(tc, test_dense_vnni_wraps);
  tcase_add_test(tc, test_dense_packed_random);
  tcase_add_test(tc, test_conv_packed_random);
  tcase_add_test(tc, test_conv_packed_big_random);
  tcase_add_test(tc, test_conv_packed_avx2_random);
  tcase_add_test(tc, test_conv_packed_whole_in_place);
  tcase_add_test(tc, test_conv_packed_tiles_random);
  tcase_add_test(tc, test_conv_packed_args);
  tcase_add_test(tc, test_dense_packed4_random);
  tcase_add_test(tc, test_dense_pack4_layout);
  tcase_add_test(tc, test_dense_pack_layout);
  tcase_add_test(tc, test_pool_random);
  tcase_add_test(tc, test_pool_rounding);
  tcase_add_test(tc, test_quantize_dequantize);
  tcase_add_test(tc, test_requantize);
  tcase_add_test(tc, test_clip_lut);
  tcase_add_test(tc, test_clip_runs);
  tcase_add_test(tc, test_qadd_qmul);
  tcase_add_test(tc, test_qadd_any_params);
  tcase_add_test(tc, test_qadd_runs);
  tcase_add_test(tc, test_qadd_long_runs);
  tcase_add_test(tc, test_qadd_runs_portable);
  tcase_add_test(tc, test_qadd_table_form);
  tcase_add_test(tc, test_softmax);
  tcase_add_test(tc, test_logistic_tanh);
  tcase_add_test(tc, test_mean);
  tcase_add_test(tc, test_bad_arguments);
  tcase_add_test(tc, test_lstm);
  suite_add_tcase(s, tc);
  return s;
}

KT_MAIN(make_suite)
