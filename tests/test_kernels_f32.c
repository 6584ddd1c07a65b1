/*
 * test_kernels_f32.c: the crt's float32 and data-movement kernels against
 * references written here as plain loops (convolution, dense and pooling
 * accumulate in double with explicit bounds checks), on shapes drawn from
 * fixed seeds so that a failure names a case to replay. The draws cover
 * every path and edge a kernel distinguishes: every broadcast direction,
 * padding on each side, stride beyond the kernel, dilation, depthwise
 * multipliers, groups, NCHW as well as NHWC, channel and column counts
 * around each register block, cast edge values; and every kernel's bad
 * arguments come back as the right status. Float results must agree to a
 * relative 1e-5, with an absolute floor of 1e-6 times the sum of the
 * magnitudes of the terms (a rounding bound for sums that cancel).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernel_test.h"

#define BAD(expr) EXPECT_ST(expr, TN_CRT_INVALID_ARGUMENT)

static float *rand_f32(KtRng *r, int64_t n, float lo, float hi) {
  float *p = xalloc((size_t)n * sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = kt_float(r, lo, hi);
  return p;
}
static uint8_t *rand_bytes(KtRng *r, size_t n) {
  uint8_t *p = xalloc(n);
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)kt_next(r);
  return p;
}
static int close_to(float got, double ref, double mag) {
  if (isnan(ref)) return isnan(got);
  if (isinf((float)ref)) return got == (float)ref;
  return fabs((double)got - ref) <= 1e-5 * fabs(ref) + 1e-6 * mag + 1e-30;
}
static double dclamp(double v, double lo, double hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* ---- Binary ---------------------------------------------------------- */

/* A broadcast whose operands are dense over their own shapes: mask bit d
 * set means that operand has extent 1 along d. */
static void broadcast(int32_t nd, const int32_t *dims, unsigned lmask,
                      unsigned rmask, TnCrtBroadcast *b, int64_t *ln,
                      int64_t *rn) {
  memset(b, 0, sizeof *b);
  b->ndim = nd;
  int64_t ls = 1, rs = 1;
  for (int32_t d = nd - 1; d >= 0; d--) {
    b->dims[d] = dims[d];
    int32_t le = (lmask >> d) & 1 ? 1 : dims[d];
    int32_t re = (rmask >> d) & 1 ? 1 : dims[d];
    b->lhs_strides[d] = le == 1 ? 0 : (int32_t)ls;
    b->rhs_strides[d] = re == 1 ? 0 : (int32_t)rs;
    ls *= le, rs *= re;
  }
  *ln = ls, *rn = rs;
}

static float ref_f32(TnCrtBinaryOp op, float a, float b) {
  switch (op) {
    case TN_CRT_ADD: return a + b;
    case TN_CRT_SUB: return a - b;
    case TN_CRT_MUL: return a * b;
    case TN_CRT_DIV: return a / b;
    case TN_CRT_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}
/* int32 results wrap: the exact value in int64, its low 32 bits. */
static int32_t ref_i32(TnCrtBinaryOp op, int32_t a, int32_t b) {
  switch (op) {
    case TN_CRT_ADD: return (int32_t)(uint32_t)(uint64_t)((int64_t)a + b);
    case TN_CRT_SUB: return (int32_t)(uint32_t)(uint64_t)((int64_t)a - b);
    case TN_CRT_MUL: return (int32_t)(uint32_t)(uint64_t)((int64_t)a * b);
    case TN_CRT_DIV: return a / b;
    case TN_CRT_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}

/* All six ops of both types on one broadcast; each element's operands
 * found by full multi-index arithmetic. */
static void check_binary(KtRng *r, const TnCrtBroadcast *b, int64_t ln,
                         int64_t rn, int tag) {
  int64_t n = 1;
  for (int32_t d = 0; d < b->ndim; d++) n *= b->dims[d];
  float *lf = rand_f32(r, ln, -4, 4), *rf = rand_f32(r, rn, -4, 4);
  float *of = xalloc((size_t)n * 4);
  int32_t *li = xalloc((size_t)ln * 4), *ri = xalloc((size_t)rn * 4);
  int32_t *oi = xalloc((size_t)n * 4);
  for (int64_t i = 0; i < ln; i++)
    li[i] = (int32_t)kt_next(r) >> (i % 3 ? 0 : 20);
  for (int64_t i = 0; i < rn; i++) {
    ri[i] = (int32_t)kt_next(r) >> (i % 2 ? 28 : 4);
    if (ri[i] == 0 || ri[i] == -1) ri[i] = 3;
  }
  for (int op = TN_CRT_ADD; op <= TN_CRT_MIN; op++) {
    KT_CHECK_OK(tn_crt_binary_f32((TnCrtBinaryOp)op, b, lf, rf, of));
    KT_CHECK_OK(tn_crt_binary_i32((TnCrtBinaryOp)op, b, li, ri, oi));
    for (int64_t i = 0; i < n; i++) {
      int64_t lo = 0, ro = 0, rem = i;
      for (int32_t d = b->ndim - 1; d >= 0; d--) {
        lo += rem % b->dims[d] * b->lhs_strides[d];
        ro += rem % b->dims[d] * b->rhs_strides[d];
        rem /= b->dims[d];
      }
      float ef = ref_f32((TnCrtBinaryOp)op, lf[lo], rf[ro]);
      int32_t ei = ref_i32((TnCrtBinaryOp)op, li[lo], ri[ro]);
      EXPECT(of[i] == ef, "case %d op %d f32 [%lld]: %g != %g", tag, op,
             (long long)i, of[i], ef);
      EXPECT(oi[i] == ei, "case %d op %d i32 [%lld]: %d != %d", tag, op,
             (long long)i, oi[i], ei);
    }
  }
  free(lf), free(rf), free(of), free(li), free(ri), free(oi);
}

START_TEST(test_binary_directions) {
  /* [3, 4, 9]: each operand broadcast along every subset of the axes
   * (scalar, row, column, middle axis, ...) */
  KtRng r = kt_rng(1);
  const int32_t dims[3] = {3, 4, 9};
  for (unsigned lm = 0; lm < 8; lm++)
    for (unsigned rm = 0; rm < 8; rm++) {
      TnCrtBroadcast b;
      int64_t ln, rn;
      broadcast(3, dims, lm, rm, &b, &ln, &rn);
      check_binary(&r, &b, ln, rn, (int)(lm * 8 + rm));
    }
}
END_TEST

START_TEST(test_binary_random) {
  KtRng r = kt_rng(2);
  for (int c = 0; c < 150; c++) {
    int32_t nd = c % 10 == 0 ? TN_CRT_MAX_DIMS : kt_int(&r, 1, 5), dims[8];
    for (int32_t d = 0; d < nd; d++) dims[d] = kt_int(&r, 1, nd > 5 ? 3 : 6);
    unsigned lm = (unsigned)kt_next(&r), rm = (unsigned)kt_next(&r);
    if (c % 7 == 0) lm = 0, rm = 0; /* same shape */
    if (c % 7 == 1) lm = 0xff;      /* scalar lhs */
    if (c % 7 == 2) rm = 0xff;      /* scalar rhs */
    TnCrtBroadcast b;
    int64_t ln, rn;
    broadcast(nd, dims, lm, rm, &b, &ln, &rn);
    check_binary(&r, &b, ln, rn, 1000 + c);
  }
  /* an operand read through transposed strides: lhs stored as [13, 4] */
  TnCrtBroadcast b = {2, {4, 13}, {1, 4}, {13, 1}};
  check_binary(&r, &b, 52, 52, 9999);
}
END_TEST

START_TEST(test_binary_errors) {
  TnCrtBroadcast b = {1, {3}, {1}, {1}};
  float f[3] = {1, 2, 3};
  int32_t a[3] = {7, INT32_MIN, -7}, o[3];
  int32_t z[3] = {2, 1, 0}, m1[3] = {2, -1, 2}, d[3] = {2, 1, 2};
  BAD(tn_crt_binary_i32(TN_CRT_DIV, &b, a, z, o));
  EXPECT_ST(tn_crt_binary_i32(TN_CRT_DIV, &b, a, m1, o), TN_CRT_OVERFLOW);
  KT_CHECK_OK(tn_crt_binary_i32(TN_CRT_DIV, &b, a, d, o));
  ck_assert(o[0] == 3 && o[1] == INT32_MIN && o[2] == -3); /* truncation */
  BAD(tn_crt_binary_f32(TN_CRT_ADD, NULL, f, f, f));
  BAD(tn_crt_binary_f32(TN_CRT_ADD, &b, NULL, f, f));
  BAD(tn_crt_binary_f32(TN_CRT_ADD, &b, f, NULL, f));
  BAD(tn_crt_binary_i32(TN_CRT_ADD, &b, a, a, NULL));
  BAD(tn_crt_binary_f32((TnCrtBinaryOp)6, &b, f, f, f));
  BAD(tn_crt_binary_i32((TnCrtBinaryOp)-1, &b, a, a, o));
  TnCrtBroadcast bad = b;
  bad.ndim = 0;
  BAD(tn_crt_binary_f32(TN_CRT_ADD, &bad, f, f, f));
  bad.ndim = TN_CRT_MAX_DIMS + 1;
  BAD(tn_crt_binary_f32(TN_CRT_ADD, &bad, f, f, f));
  bad = b, bad.dims[0] = 0;
  BAD(tn_crt_binary_f32(TN_CRT_ADD, &bad, f, f, f));
  bad.dims[0] = -2;
  BAD(tn_crt_binary_i32(TN_CRT_ADD, &bad, a, a, o));
  TnCrtBroadcast big = {2, {65536, 65536}, {0, 0}, {0, 0}};
  EXPECT_ST(tn_crt_binary_f32(TN_CRT_ADD, &big, f, f, f), TN_CRT_OVERFLOW);
}
END_TEST

/* ---- Unary, clip, bias_add ------------------------------------------- */

START_TEST(test_unary) {
  KtRng r = kt_rng(3);
  enum { N = 301 };
  float in[N], out[N], io[N];
  const float special[] = {0.0f,   -0.0f, 1e30f, -1e30f,  INFINITY,
                           -INFINITY, 88.0f, -88.0f, 100.0f, -100.0f,
                           20.0f,  -20.0f, NAN,  1e-20f, -1e-20f};
  size_t ns = sizeof special / sizeof special[0];
  for (int i = 0; i < N; i++)
    in[i] = (size_t)i < ns ? special[i] : kt_float(&r, -12, 12);
  for (int op = TN_CRT_NEGATIVE; op <= TN_CRT_RELU; op++) {
    KT_CHECK_OK(tn_crt_unary_f32((TnCrtUnaryOp)op, N, in, out));
    memcpy(io, in, sizeof io);
    KT_CHECK_OK(tn_crt_unary_f32((TnCrtUnaryOp)op, N, io, io));
    for (int i = 0; i < N; i++) {
      double x = in[i], e;
      switch (op) {
        case TN_CRT_NEGATIVE: e = -x; break;
        case TN_CRT_EXP: e = exp(x); break;
        case TN_CRT_SIGMOID: e = 1.0 / (1.0 + exp(-x)); break;
        case TN_CRT_TANH: e = tanh(x); break;
        default: e = isnan(x) ? x : x < 0 ? 0 : x; break;
      }
      EXPECT(close_to(out[i], e, 0), "op %d x %g: %g != %g", op, x, out[i],
             e);
      EXPECT(memcmp(&out[i], &io[i], 4) == 0, "op %d in place differs", op);
    }
  }
  /* sigmoid stays in [0, 1], never NaN, for huge inputs */
  float s[4] = {1e38f, -1e38f, INFINITY, -INFINITY};
  KT_CHECK_OK(tn_crt_unary_f32(TN_CRT_SIGMOID, 4, s, s));
  ck_assert(s[0] == 1.0f && s[1] == 0.0f && s[2] == 1.0f && s[3] == 0.0f);

  int32_t ii[5] = {INT32_MIN, -5, 0, 7, INT32_MAX}, oi[5];
  KT_CHECK_OK(tn_crt_unary_i32(TN_CRT_NEGATIVE, 5, ii, oi));
  ck_assert(oi[0] == INT32_MIN && oi[1] == 5 && oi[2] == 0 && oi[3] == -7 &&
            oi[4] == -INT32_MAX);
  KT_CHECK_OK(tn_crt_unary_i32(TN_CRT_NEGATIVE, 5, oi, oi));
  ck_assert(memcmp(oi, ii, sizeof ii) == 0);
  int32_t big[37], rb[37]; /* past one eight-element chunk */
  for (int i = 0; i < 37; i++) big[i] = i % 3 ? -i : i;
  KT_CHECK_OK(tn_crt_unary_i32(TN_CRT_RELU, 37, big, rb));
  KT_CHECK_OK(tn_crt_unary_i32(TN_CRT_NEGATIVE, 37, big, big));
  for (int i = 0; i < 37; i++)
    ck_assert(rb[i] == (i % 3 ? 0 : i) && big[i] == (i % 3 ? i : -i));
  KT_CHECK_OK(tn_crt_unary_i32(TN_CRT_RELU, 5, ii, ii));
  ck_assert(ii[0] == 0 && ii[1] == 0 && ii[3] == 7 && ii[4] == INT32_MAX);
  EXPECT_ST(tn_crt_unary_i32(TN_CRT_EXP, 5, ii, oi), TN_CRT_UNSUPPORTED);
  EXPECT_ST(tn_crt_unary_i32(TN_CRT_TANH, 5, ii, oi), TN_CRT_UNSUPPORTED);
  BAD(tn_crt_unary_f32(TN_CRT_EXP, 0, in, out));
  BAD(tn_crt_unary_f32(TN_CRT_EXP, -1, in, out));
  BAD(tn_crt_unary_f32(TN_CRT_EXP, 3, NULL, out));
  BAD(tn_crt_unary_f32(TN_CRT_EXP, 3, in, NULL));
  BAD(tn_crt_unary_f32((TnCrtUnaryOp)9, 3, in, out));
  BAD(tn_crt_unary_i32((TnCrtUnaryOp)9, 3, ii, oi));
  BAD(tn_crt_unary_i32(TN_CRT_RELU, 0, ii, oi));
}
END_TEST

START_TEST(test_clip_bias) {
  KtRng r = kt_rng(4);
  float f[6] = {-3, -0.5f, 0.25f, 2, NAN, 9}, g[6];
  KT_CHECK_OK(tn_crt_clip_f32(6, f, -1, 1, g));
  ck_assert(g[0] == -1 && g[1] == -0.5f && g[2] == 0.25f && g[3] == 1 &&
            isnan(g[4]) && g[5] == 1);
  KT_CHECK_OK(tn_crt_clip_f32(6, f, 2, 1, f)); /* lo > hi: hi; in place */
  ck_assert(f[0] == 1 && f[2] == 1 && f[5] == 1);
  int32_t a[5] = {INT32_MIN, -4, 0, 4, INT32_MAX}, b[5];
  KT_CHECK_OK(tn_crt_clip_i32(5, a, -3, 3, b));
  ck_assert(b[0] == -3 && b[1] == -3 && b[2] == 0 && b[3] == 3 && b[4] == 3);
  KT_CHECK_OK(tn_crt_clip_i32(5, a, 0, INT32_MAX, a));
  ck_assert(a[0] == 0 && a[1] == 0 && a[4] == INT32_MAX);
  float big[41], cl[41];
  for (int i = 0; i < 41; i++) big[i] = (float)(i - 20) / 8;
  KT_CHECK_OK(tn_crt_clip_f32(41, big, -1, 1.5f, cl));
  KT_CHECK_OK(tn_crt_clip_f32(41, big, -1, 1.5f, big));
  for (int i = 0; i < 41; i++)
    ck_assert(cl[i] == (float)dclamp((i - 20) / 8.0, -1, 1.5) &&
              big[i] == cl[i]);
  BAD(tn_crt_clip_f32(0, f, 0, 1, g));
  BAD(tn_crt_clip_f32(3, NULL, 0, 1, g));
  BAD(tn_crt_clip_i32(3, a, 0, 1, NULL));

  for (int c = 0; c < 40; c++) {
    int32_t outer = kt_int(&r, 1, 4), ch = kt_int(&r, 1, 19);
    int32_t inner = c % 3 ? kt_int(&r, 1, 19) : 1, n = outer * ch * inner;
    float *x = rand_f32(&r, n, -5, 5), *bias = rand_f32(&r, ch, -5, 5);
    float *y = xalloc((size_t)n * 4);
    int32_t *xi = xalloc((size_t)n * 4), *bi = xalloc((size_t)ch * 4);
    int32_t *yi = xalloc((size_t)n * 4);
    for (int32_t i = 0; i < n; i++) xi[i] = (int32_t)kt_next(&r);
    for (int32_t i = 0; i < ch; i++) bi[i] = (int32_t)kt_next(&r);
    KT_CHECK_OK(tn_crt_bias_add_f32(outer, ch, inner, x, bias, y));
    KT_CHECK_OK(tn_crt_bias_add_i32(outer, ch, inner, xi, bi, yi));
    for (int32_t i = 0; i < n; i++) {
      int32_t k = i / inner % ch;
      EXPECT(y[i] == x[i] + bias[k], "bias_add f32 case %d [%d]", c, i);
      EXPECT(yi[i] == ref_i32(TN_CRT_ADD, xi[i], bi[k]),
             "bias_add i32 case %d [%d]", c, i);
    }
    KT_CHECK_OK(tn_crt_bias_add_f32(outer, ch, inner, x, bias, x));
    KT_CHECK_OK(tn_crt_bias_add_i32(outer, ch, inner, xi, bi, xi));
    EXPECT(memcmp(x, y, (size_t)n * 4) == 0 &&
               memcmp(xi, yi, (size_t)n * 4) == 0,
           "bias_add in place, case %d", c);
    free(x), free(bias), free(y), free(xi), free(bi), free(yi);
  }
  float one = 1;
  BAD(tn_crt_bias_add_f32(0, 1, 1, &one, &one, &one));
  BAD(tn_crt_bias_add_f32(1, -1, 1, &one, &one, &one));
  BAD(tn_crt_bias_add_f32(1, 1, 1, &one, NULL, &one));
  BAD(tn_crt_bias_add_i32(1, 1, 0, a, a, a));
  BAD(tn_crt_bias_add_i32(1, 1, 1, NULL, a, a));
}
END_TEST

/* ---- Cast ------------------------------------------------------------ */

static int is_float(int t) { return t == TN_CRT_F32 || t == TN_CRT_F64; }

typedef struct {
  int f; /* a float value (in d) or an integer (in i) */
  double d;
  int64_t i;
} Val;

static Val load(int t, const void *p, int k) {
  Val v = {0, 0, 0};
  switch (t) {
    case TN_CRT_F32: v.f = 1, v.d = ((const float *)p)[k]; break;
    case TN_CRT_F64: v.f = 1, v.d = ((const double *)p)[k]; break;
    case TN_CRT_I32: v.i = ((const int32_t *)p)[k]; break;
    case TN_CRT_I8: v.i = ((const int8_t *)p)[k]; break;
    case TN_CRT_U8: v.i = ((const uint8_t *)p)[k]; break;
    case TN_CRT_I64: v.i = ((const int64_t *)p)[k]; break;
    case TN_CRT_I16: v.i = ((const int16_t *)p)[k]; break;
    default: v.i = ((const uint8_t *)p)[k] != 0; break;
  }
  return v;
}

static void store(int t, void *p, int k, Val v) {
  switch (t) {
    case TN_CRT_F32: ((float *)p)[k] = v.f ? (float)v.d : (float)v.i; break;
    case TN_CRT_F64: ((double *)p)[k] = v.f ? v.d : (double)v.i; break;
    case TN_CRT_I32: ((int32_t *)p)[k] = (int32_t)v.i; break;
    case TN_CRT_I8: ((int8_t *)p)[k] = (int8_t)v.i; break;
    case TN_CRT_I64: ((int64_t *)p)[k] = v.i; break;
    case TN_CRT_I16: ((int16_t *)p)[k] = (int16_t)v.i; break;
    default: ((uint8_t *)p)[k] = (uint8_t)v.i; break; /* u8, bool */
  }
}

/* The cast of one value from its mathematical value: truncate, then
 * saturate against the target's range (compared in double). */
static Val ref_cast(Val v, int to) {
  static const int64_t lo[8] = {0, INT32_MIN, INT8_MIN, 0,
                                INT64_MIN, 0, INT16_MIN, 0};
  static const int64_t hi[8] = {0, INT32_MAX, INT8_MAX, UINT8_MAX,
                                INT64_MAX, 0, INT16_MAX, 1};
  Val o = {0, 0, 0};
  if (is_float(to)) {
    o.f = 1;
    o.d = v.f ? v.d : to == TN_CRT_F32 ? (double)(float)v.i : (double)v.i;
    if (to == TN_CRT_F32) o.d = (float)o.d;
  } else if (to == TN_CRT_BOOL) {
    o.i = v.f ? v.d != 0 : v.i != 0;
  } else if (!v.f) {
    o.i = v.i < lo[to] ? lo[to] : v.i > hi[to] ? hi[to] : v.i;
  } else if (!isnan(v.d)) {
    double t = trunc(v.d);
    o.i = t >= (double)hi[to] + 1.0 ? hi[to]
          : t < (double)lo[to]      ? lo[to]
                                    : (int64_t)t;
  }
  return o;
}

START_TEST(test_cast_all_pairs) {
  static const double fv[] = {
      0.0, -0.0, 0.4, -0.6, 1.5, -1.5, 3, 127.5, 128, -128.5, -129, 200.7,
      255.9, 256, -1, 32767.5, 32768, -32768.9, -32769, 65535.5,
      2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4.0e9,
      9223371487098961920.0, 9223372036854775808.0, -9223372036854775808.0,
      -1e19, 1e30, -1e30, FLT_MAX, -FLT_MAX, 1e-40, INFINITY, -INFINITY,
      NAN, -NAN, 1e300, -1e300, 9223372036854774784.0, 2147483647.5,
      -2147483648.5, 16777217.0};
  static const int64_t iv[] = {
      0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768,
      -32769, 65535, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
      (int64_t)INT32_MIN - 1, 16777217, (INT64_C(1) << 53) + 1, INT64_MAX,
      INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, -(INT64_C(1) << 40)};
  enum { NF = sizeof fv / sizeof fv[0], NI = sizeof iv / sizeof iv[0] };
  for (int from = 0; from < 8; from++) {
    /* the edge values in the source type: integers both wrapped (C's
     * conversion) and saturated, so each type meets its own extremes */
    uint8_t src[64 * 8], got[64 * 8], want[64 * 8];
    int n = 0;
    if (is_float(from)) {
      for (int k = 0; k < NF; k++)
        if (from == TN_CRT_F64 || !(fabs(fv[k]) > FLT_MAX) || isinf(fv[k]))
          store(from, src, n++, (Val){1, fv[k], 0});
    } else if (from == TN_CRT_BOOL) {
      const uint8_t bv[] = {0, 1, 2, 255}; /* 2 and 255: not canonical */
      for (int k = 0; k < 4; k++) src[n++] = bv[k];
    } else {
      for (int k = 0; k < NI; k++) {
        Val v = {0, 0, iv[k]};
        store(from, src, n++, k % 2 ? ref_cast(v, from) : v);
      }
    }
    for (int to = 0; to < 8; to++) {
      memset(got, 0xAB, sizeof got);
      KT_CHECK_OK(tn_crt_cast((TnCrtDType)from, (TnCrtDType)to, n, src, got));
      for (int k = 0; k < n; k++) {
        Val v = load(from, src, k);
        store(to, want, k, ref_cast(v, to));
        Val g = load(to, got, k), e = load(to, want, k);
        int ok = e.f ? (isnan(e.d) && isnan(g.d)) || g.d == e.d
                     : g.i == e.i && (to != TN_CRT_BOOL || got[k] <= 1);
        EXPECT(ok, "cast %d -> %d of (%g, %lld): (%g, %lld) != (%g, %lld)",
               from, to, v.d, (long long)v.i, g.d, (long long)g.i, e.d,
               (long long)e.i);
      }
    }
  }
}
END_TEST

START_TEST(test_cast_table) {
  /* expectations written out by hand, independent of the reference */
  static const struct {
    int from, to;
    double in; /* integer inputs are exact in double, or given by iin */
    int64_t iin, want;
  } t[] = {
      {TN_CRT_F32, TN_CRT_I8, 127.9, 0, 127},
      {TN_CRT_F32, TN_CRT_I8, 128.0, 0, 127},
      {TN_CRT_F32, TN_CRT_I8, -128.9, 0, -128},
      {TN_CRT_F32, TN_CRT_I8, -129.0, 0, -128},
      {TN_CRT_F32, TN_CRT_I8, NAN, 0, 0},
      {TN_CRT_F32, TN_CRT_I8, -0.9, 0, 0},
      {TN_CRT_F32, TN_CRT_I8, -INFINITY, 0, -128},
      {TN_CRT_F32, TN_CRT_U8, 255.5, 0, 255},
      {TN_CRT_F32, TN_CRT_U8, -1.0, 0, 0},
      {TN_CRT_F32, TN_CRT_U8, INFINITY, 0, 255},
      {TN_CRT_F32, TN_CRT_I32, 2147483648.0, 0, INT32_MAX},
      {TN_CRT_F32, TN_CRT_I32, -2147483648.0, 0, INT32_MIN},
      {TN_CRT_F32, TN_CRT_I32, -3e9, 0, INT32_MIN},
      {TN_CRT_F32, TN_CRT_I32, 2147483520.0, 0, 2147483520},
      {TN_CRT_F32, TN_CRT_I32, -2.9, 0, -2},
      {TN_CRT_F32, TN_CRT_I64, NAN, 0, 0},
      {TN_CRT_F32, TN_CRT_I64, INFINITY, 0, INT64_MAX},
      {TN_CRT_F32, TN_CRT_I64, -3e9, 0, -3000000000LL},
      {TN_CRT_F32, TN_CRT_BOOL, NAN, 0, 1},
      {TN_CRT_F32, TN_CRT_BOOL, -0.0, 0, 0},
      {TN_CRT_F32, TN_CRT_BOOL, 0.25, 0, 1},
      {TN_CRT_F64, TN_CRT_I64, 9223372036854775808.0, 0, INT64_MAX},
      {TN_CRT_F64, TN_CRT_I64, 9223372036854774784.0, 0,
       INT64_C(9223372036854774784)},
      {TN_CRT_F64, TN_CRT_I64, -9223372036854775808.0, 0, INT64_MIN},
      {TN_CRT_F64, TN_CRT_I16, -1e300, 0, INT16_MIN},
      {TN_CRT_I64, TN_CRT_I32, 0, INT64_MIN, INT32_MIN},
      {TN_CRT_I64, TN_CRT_I32, 0, INT64_MAX, INT32_MAX},
      {TN_CRT_I64, TN_CRT_U8, 0, -5, 0},
      {TN_CRT_I64, TN_CRT_U8, 0, 300, 255},
      {TN_CRT_I32, TN_CRT_BOOL, 0, 256, 1}, /* not a truncation to 0 */
      {TN_CRT_I32, TN_CRT_I16, 0, -40000, INT16_MIN},
      {TN_CRT_U8, TN_CRT_I8, 0, 200, 127},
      {TN_CRT_BOOL, TN_CRT_I32, 0, 2, 1}, /* a non-canonical true */
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    uint8_t in[8], out[8];
    store(t[k].from, in, 0, (Val){is_float(t[k].from), t[k].in, t[k].iin});
    KT_CHECK_OK(tn_crt_cast((TnCrtDType)t[k].from, (TnCrtDType)t[k].to, 1,
                            in, out));
    Val g = load(t[k].to, out, 0);
    ck_assert_msg(g.i == t[k].want, "row %zu: %lld", k, (long long)g.i);
  }
  double d[2] = {1e300, -1e300}, i64[1] = {0};
  float f[2];
  const int64_t big = (INT64_C(1) << 53) + 1;
  KT_CHECK_OK(tn_crt_cast(TN_CRT_F64, TN_CRT_F32, 2, d, f));
  KT_CHECK_OK(tn_crt_cast(TN_CRT_I64, TN_CRT_F64, 1, &big, i64));
  ck_assert(f[0] == INFINITY && f[1] == -INFINITY);
  ck_assert(i64[0] == 9007199254740992.0);
  BAD(tn_crt_cast((TnCrtDType)8, TN_CRT_F32, 1, f, d));
  BAD(tn_crt_cast(TN_CRT_F32, (TnCrtDType)-1, 1, f, d));
  BAD(tn_crt_cast(TN_CRT_F32, TN_CRT_I8, 0, f, d));
  BAD(tn_crt_cast(TN_CRT_F32, TN_CRT_I8, 1, NULL, d));
  BAD(tn_crt_cast(TN_CRT_F32, TN_CRT_I8, 1, f, NULL));
}
END_TEST

/* ---- Transpose, concatenate, pad ------------------------------------- */

static const int32_t kESize[4] = {1, 2, 4, 8};

static void check_transpose(KtRng *r, const TnCrtTranspose *p, int tag) {
  int64_t n = 1, st[8];
  for (int32_t d = p->ndim - 1; d >= 0; d--) st[d] = n, n *= p->in_dims[d];
  size_t es = (size_t)p->elem_size;
  uint8_t *in = rand_bytes(r, (size_t)n * es), *out = xalloc((size_t)n * es);
  KT_CHECK_OK(tn_crt_transpose(p, in, out));
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, off = 0;
    for (int32_t d = p->ndim - 1; d >= 0; d--) {
      int32_t e = p->in_dims[p->perm[d]];
      off += rem % e * st[p->perm[d]];
      rem /= e;
    }
    EXPECT(memcmp(out + i * es, in + off * es, es) == 0,
           "transpose case %d, element %lld", tag, (long long)i);
  }
  free(in), free(out);
}

START_TEST(test_transpose) {
  KtRng r = kt_rng(5);
  for (int c = 0; c < 300; c++) {
    TnCrtTranspose p = {0};
    p.ndim = 1 + c % 6;
    p.elem_size = kESize[kt_int(&r, 0, 3)];
    for (int32_t d = 0; d < p.ndim; d++)
      p.in_dims[d] = kt_int(&r, 1, p.ndim > 4 ? 4 : 7), p.perm[d] = d;
    for (int32_t d = p.ndim - 1; d > 0; d--) { /* Fisher-Yates */
      int32_t j = kt_int(&r, 0, d), t = p.perm[d];
      p.perm[d] = p.perm[j], p.perm[j] = t;
    }
    check_transpose(&r, &p, c);
  }
  /* tiles with remainders, unit dims, rows kept, the identity, a scalar */
  const TnCrtTranspose fixed[] = {
      {2, {37, 53}, {1, 0}, 4},          {4, {3, 1, 40, 17}, {2, 1, 0, 3}, 2},
      {4, {2, 19, 5, 7}, {0, 2, 3, 1}, 8}, {3, {2, 3, 4}, {0, 1, 2}, 1},
      {2, {1, 1}, {1, 0}, 4}};
  for (int c = 0; c < 5; c++) check_transpose(&r, &fixed[c], 1000 + c);

  uint8_t buf[64];
  TnCrtTranspose bad = {2, {2, 3}, {1, 0}, 4};
  BAD(tn_crt_transpose(NULL, buf, buf));
  BAD(tn_crt_transpose(&bad, NULL, buf));
  BAD(tn_crt_transpose(&bad, buf, NULL));
  bad.elem_size = 3;
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
  bad.elem_size = 4, bad.perm[1] = 1; /* not a permutation */
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
  bad.perm[1] = 2;
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
  bad.perm[1] = 0, bad.in_dims[0] = 0;
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
  bad.in_dims[0] = 2, bad.ndim = 0;
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
  bad.ndim = 9;
  BAD(tn_crt_transpose(&bad, buf, buf + 32));
}
END_TEST

START_TEST(test_concatenate) {
  KtRng r = kt_rng(6);
  for (int c = 0; c < 60; c++) {
    int32_t n = kt_int(&r, 1, 4), outer = kt_int(&r, 1, 5), sizes[4];
    const void *ins[4];
    int32_t row = 0;
    for (int32_t i = 0; i < n; i++) {
      sizes[i] = kt_int(&r, 0, 3) == 0 ? 0 : kt_int(&r, 1, 24);
      ins[i] = sizes[i] ? rand_bytes(&r, (size_t)(sizes[i] * outer)) : NULL;
      row += sizes[i];
    }
    uint8_t *out = xalloc((size_t)(row * outer));
    KT_CHECK_OK(tn_crt_concatenate(n, ins, sizes, outer, out));
    const uint8_t *at = out;
    for (int32_t o = 0; o < outer; o++)
      for (int32_t i = 0; i < n; at += sizes[i], i++)
        EXPECT(!sizes[i] || memcmp(at, (const uint8_t *)ins[i] + o * sizes[i],
                                   (size_t)sizes[i]) == 0,
               "concat case %d", c);
    for (int32_t i = 0; i < n; i++) free((void *)ins[i]);
    free(out);
  }
  uint8_t a[4] = {1, 2, 3, 4}, o[8];
  const void *ins[2] = {a, NULL};
  int32_t sz[2] = {4, 4};
  BAD(tn_crt_concatenate(2, ins, sz, 1, o)); /* NULL with bytes to copy */
  sz[1] = -1;
  BAD(tn_crt_concatenate(2, ins, sz, 1, o));
  sz[1] = 0;
  KT_CHECK_OK(tn_crt_concatenate(2, ins, sz, 1, o));
  BAD(tn_crt_concatenate(0, ins, sz, 1, o));
  BAD(tn_crt_concatenate(2, NULL, sz, 1, o));
  BAD(tn_crt_concatenate(2, ins, NULL, 1, o));
  BAD(tn_crt_concatenate(2, ins, sz, 0, o));
  BAD(tn_crt_concatenate(2, ins, sz, 1, NULL));
}
END_TEST

static void check_pad(KtRng *r, const TnCrtPad *p, const uint8_t *val,
                      int tag) {
  size_t es = (size_t)p->elem_size;
  int64_t n = 1, m = 1, ost[8];
  for (int32_t d = p->ndim - 1; d >= 0; d--) {
    ost[d] = m, n *= p->in_dims[d];
    m *= p->in_dims[d] + p->before[d] + p->after[d];
  }
  uint8_t *in = rand_bytes(r, (size_t)n * es), *out = xalloc((size_t)m * es);
  uint8_t *want = xalloc((size_t)m * es);
  for (int64_t i = 0; i < m; i++) memcpy(want + i * es, val, es);
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, off = 0;
    for (int32_t d = p->ndim - 1; d >= 0; d--) {
      off += (rem % p->in_dims[d] + p->before[d]) * ost[d];
      rem /= p->in_dims[d];
    }
    memcpy(want + off * es, in + i * es, es);
  }
  KT_CHECK_OK(tn_crt_pad(p, in, val, out));
  EXPECT(memcmp(out, want, (size_t)m * es) == 0, "pad case %d", tag);
  free(in), free(out), free(want);
}

START_TEST(test_pad) {
  KtRng r = kt_rng(7);
  const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const uint8_t mixed[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  const int32_t side[4][2] = {{0, 0}, {1, 0}, {0, 2}, {2, 1}};
  /* rank 3: every (before, after) pattern on every axis */
  for (int c = 0; c < 64; c++) {
    TnCrtPad p = {3, {2, 3, 4}, {0}, {0}, kESize[c % 4]};
    for (int d = 0; d < 3; d++) {
      int s = (c >> (2 * d)) & 3;
      p.before[d] = side[s][0], p.after[d] = side[s][1];
    }
    check_pad(&r, &p, c % 3 ? mixed : ones, c);
  }
  for (int c = 0; c < 100; c++) {
    TnCrtPad p = {kt_int(&r, 1, 5), {0}, {0}, {0}, kESize[kt_int(&r, 0, 3)]};
    for (int32_t d = 0; d < p.ndim; d++) {
      p.in_dims[d] = kt_int(&r, 1, 4);
      p.before[d] = kt_int(&r, 0, 2), p.after[d] = kt_int(&r, 0, 2);
    }
    uint8_t val[8];
    for (int k = 0; k < 8; k++) val[k] = (uint8_t)kt_next(&r);
    check_pad(&r, &p, val, 100 + c);
  }
  uint8_t buf[16] = {0};
  TnCrtPad bad = {1, {2}, {1}, {1}, 4};
  BAD(tn_crt_pad(NULL, buf, buf, buf));
  BAD(tn_crt_pad(&bad, NULL, buf, buf));
  BAD(tn_crt_pad(&bad, buf, NULL, buf));
  BAD(tn_crt_pad(&bad, buf, buf, NULL));
  bad.before[0] = -1;
  BAD(tn_crt_pad(&bad, buf, buf, buf));
  bad.before[0] = 0, bad.elem_size = 16;
  BAD(tn_crt_pad(&bad, buf, buf, buf));
  bad.elem_size = 4, bad.ndim = 0;
  BAD(tn_crt_pad(&bad, buf, buf, buf));
  bad.ndim = 1, bad.in_dims[0] = 0;
  BAD(tn_crt_pad(&bad, buf, buf, buf));
}
END_TEST

/* ---- Convolution ----------------------------------------------------- */

/* Element strides of logical axes (a0, a1, a2, a3) laid out in memory in
 * the order pos gives (pos[i]: the place of axis i, 0 outermost). */
static void strides_of(const int32_t ext[4], const int pos[4],
                       int32_t st[4]) {
  int32_t mem[4], s = 1;
  for (int i = 0; i < 4; i++) mem[pos[i]] = i;
  for (int k = 3; k >= 0; k--) st[mem[k]] = s, s *= ext[mem[k]];
}

static const int kNHWC[4] = {0, 1, 2, 3}, kNCHW[4] = {0, 2, 3, 1};
static const int kHWIO[4] = {0, 1, 2, 3}, kOIHW[4] = {2, 3, 1, 0};
static const int kIHWO[4] = {1, 2, 0, 3}; /* channels last, taps not linear */

/* One geometry; tag picks the layouts (16 combinations), bias and clamp. */
static void conv_case(KtRng *r, TnCrtConv2d *g, int tag) {
  const int32_t cig = g->in_c / g->groups, cog = g->out_c / g->groups;
  int32_t ein[4] = {g->batch, g->in_h, g->in_w, g->in_c};
  int32_t ew[4] = {g->k_h, g->k_w, cig, g->out_c};
  int32_t eout[4] = {g->batch, g->out_h, g->out_w, g->out_c};
  int lay = tag % 16;
  strides_of(ein, lay & 1 ? kNCHW : kNHWC, g->in_strides);
  strides_of(ew, lay & 8 ? kIHWO : lay & 2 ? kOIHW : kHWIO, g->w_strides);
  strides_of(eout, lay & 4 ? kNCHW : kNHWC, g->out_strides);
  float *x = rand_f32(r, (int64_t)ein[0] * ein[1] * ein[2] * ein[3], -1, 1);
  float *w = rand_f32(r, (int64_t)ew[0] * ew[1] * ew[2] * ew[3], -1, 1);
  float *bias = tag % 3 ? rand_f32(r, g->out_c, -1, 1) : NULL;
  float *out = xalloc((size_t)eout[0] * eout[1] * eout[2] * eout[3] * 4);
  float lo = tag % 5 ? -INFINITY : -0.5f, hi = tag % 5 ? INFINITY : 0.7f;
  KT_CHECK_OK(tn_crt_conv2d_f32(g, x, w, bias, lo, hi, out));
  const int32_t *is = g->in_strides, *ws = g->w_strides, *os = g->out_strides;
  for (int32_t n = 0; n < g->batch; n++)
    for (int32_t oh = 0; oh < g->out_h; oh++)
      for (int32_t ow = 0; ow < g->out_w; ow++)
        for (int32_t co = 0; co < g->out_c; co++) {
          double s = bias ? bias[co] : 0, mag = fabs(s);
          for (int32_t kh = 0; kh < g->k_h; kh++)
            for (int32_t kw = 0; kw < g->k_w; kw++)
              for (int32_t ci = 0; ci < cig; ci++) {
                int32_t ih = oh * g->stride_h - g->pad_top + kh * g->dilation_h;
                int32_t iw =
                    ow * g->stride_w - g->pad_left + kw * g->dilation_w;
                if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w)
                  continue;
                int32_t c = co / cog * cig + ci;
                double t =
                    (double)x[n * is[0] + ih * is[1] + iw * is[2] + c * is[3]] *
                    w[kh * ws[0] + kw * ws[1] + ci * ws[2] + co * ws[3]];
                s += t, mag += fabs(t);
              }
          double e = dclamp(s, lo, hi);
          float got = out[n * os[0] + oh * os[1] + ow * os[2] + co * os[3]];
          EXPECT(close_to(got, e, mag),
                 "conv case %d (n %d oh %d ow %d co %d): %.9g != %.9g", tag,
                 n, oh, ow, co, got, e);
        }
  free(x), free(w), free(bias), free(out);
}

/* A random window: batch, input of up to hw by hw, kernel of up to 4 by
 * 4, strides up to st, dilations up to 2, padding up to pad on each side
 * (the bottom and right ones in *pb, *pr). */
static void draw_window(KtRng *r, TnCrtConv2d *g, int32_t hw, int32_t st,
                        int32_t pad, int32_t *pb, int32_t *pr) {
  g->batch = kt_int(r, 1, 2);
  g->in_h = kt_int(r, 1, hw), g->in_w = kt_int(r, 1, hw);
  g->k_h = kt_int(r, 1, 4), g->k_w = kt_int(r, 1, 4);
  g->stride_h = kt_int(r, 1, st), g->stride_w = kt_int(r, 1, st);
  g->dilation_h = kt_int(r, 1, 2), g->dilation_w = kt_int(r, 1, 2);
  g->pad_top = kt_int(r, 0, pad), g->pad_left = kt_int(r, 0, pad);
  *pb = kt_int(r, 0, pad), *pr = kt_int(r, 0, pad);
}

/* The output size of g's window with that bottom and right padding; 0
 * when the window does not fit. */
static int fit_output(TnCrtConv2d *g, int32_t pb, int32_t pr) {
  int32_t hh = g->in_h + g->pad_top + pb - (g->k_h - 1) * g->dilation_h - 1;
  int32_t ww = g->in_w + g->pad_left + pr - (g->k_w - 1) * g->dilation_w - 1;
  if (hh < 0 || ww < 0) return 0;
  g->out_h = hh / g->stride_h + 1, g->out_w = ww / g->stride_w + 1;
  return 1;
}

START_TEST(test_conv2d) {
  KtRng r = kt_rng(8);
  for (int c = 0, done = 0; done < 480; c++) {
    TnCrtConv2d g = {0};
    int32_t pb, pr;
    draw_window(&r, &g, 7, 3, 3, &pb, &pr);
    int wide = c % 11 == 0; /* full 16-channel blocks */
    switch (c % 4) {
      case 0: /* ordinary */
        g.groups = 1, g.in_c = kt_int(&r, 1, 5);
        g.out_c = wide ? kt_int(&r, 16, 37) : kt_int(&r, 1, 5);
        break;
      case 1: /* depthwise */
        g.in_c = g.groups = wide ? kt_int(&r, 16, 37) : kt_int(&r, 1, 6);
        g.out_c = g.in_c;
        break;
      case 2: /* depthwise with a channel multiplier */
        g.in_c = g.groups = kt_int(&r, 1, 4);
        g.out_c = g.in_c * (wide ? 17 : kt_int(&r, 2, 3));
        break;
      default: /* grouped */
        g.groups = kt_int(&r, 2, 3);
        g.in_c = g.groups * kt_int(&r, 1, 3);
        g.out_c = g.groups * (wide ? 18 : kt_int(&r, 1, 4));
        break;
    }
    if (!fit_output(&g, pb, pr)) continue;
    conv_case(&r, &g, done++);
  }
  /* batch, in h w c, out h w c, k, stride, dilation, pad, groups */
  TnCrtConv2d fixed[] = {
      {1, 5, 5, 3, 5, 5, 4, 1, 1, 1, 1, 1, 1, 0, 0, 1, {0}, {0}, {0}}, /* 1x1 */
      {2, 7, 7, 2, 3, 3, 3, 1, 1, 3, 3, 1, 1, 0, 0, 1, {0}, {0}, {0}}, /* s>k */
      /* windows wholly in the padding */
      {1, 2, 2, 2, 6, 6, 3, 2, 2, 1, 1, 1, 1, 3, 3, 1, {0}, {0}, {0}},
      /* wide rows: NCHW column blocks of 16, 8, 4 and a tail */
      {1, 3, 40, 3, 3, 40, 2, 3, 3, 1, 1, 1, 2, 1, 2, 1, {0}, {0}, {0}},
      /* 29 = 16 + 8 + 4 + 1 channels: ordinary, depthwise, grouped */
      {1, 4, 3, 5, 4, 3, 29, 3, 2, 1, 1, 1, 1, 1, 1, 1, {0}, {0}, {0}},
      {1, 4, 3, 29, 4, 3, 29, 3, 2, 1, 1, 1, 1, 1, 1, 29, {0}, {0}, {0}},
      {2, 4, 3, 6, 2, 2, 58, 3, 2, 2, 2, 1, 1, 1, 1, 2, {0}, {0}, {0}}};
  for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
    for (int t = 0; t < 16; t++) conv_case(&r, &fixed[k], 1000 + t);
}
END_TEST

/* What the forms' tests share: one case's outputs at each level of
 * levels[] the CPU has (top and below) against the reference's at the
 * portable level, within 1e-6 of the range of the reference's unclamped
 * output (a clamp narrows the range, not the sums' rounding), and the
 * outputs above the portable level bit for bit alike. ref and form
 * compute the case (ctx) with the clamp [lo, hi] into out (n floats),
 * which is filled with NaN first so that a missed output shows. */
typedef void (*FormFn)(const void *ctx, float lo, float hi, float *out);
typedef struct {
  int level;    /* the first level off the tolerance, or -1 */
  size_t at;    /* its first output off it */
  float got, want;
  double tol;
  int differs;  /* the levels above the portable one differ */
  int compared; /* levels run */
} FormsResult;

/* The CPU's level (tn_crt_isa_limit's cap raised to the top first). */
static int isa_top(void) {
  return tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI) & TN_CRT_ISA_LEVEL_MASK;
}

static FormsResult forms_case(FormFn ref, FormFn form, const void *ctx,
                              const int *levels, size_t nl, float lo,
                              float hi, size_t n) {
  const int top = isa_top();
  FormsResult res = {-1, n, 0, 0, 0, 0, 0};
  float *plain = xalloc(n * 4), *fast = xalloc(n * 4), *first = xalloc(n * 4);
  tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
  ref(ctx, -INFINITY, INFINITY, plain);
  float mn = plain[0], mx = plain[0];
  for (size_t i = 0; i < n; i++)
    mn = plain[i] < mn ? plain[i] : mn, mx = plain[i] > mx ? plain[i] : mx;
  res.tol = 1e-6 * ((double)mx - mn);
  ref(ctx, lo, hi, plain);
  int above = 0;
  for (size_t l = 0; l < nl; l++) {
    if (levels[l] > top) continue;
    tn_crt_isa_limit(levels[l]);
    memset(fast, 0xff, n * 4);
    form(ctx, lo, hi, fast);
    for (size_t i = 0; i < n && res.level < 0; i++)
      if (!(fabs((double)fast[i] - plain[i]) <= res.tol))
        res.level = levels[l], res.at = i, res.got = fast[i],
        res.want = plain[i];
    if (levels[l] > TN_CRT_ISA_PORTABLE && above++)
      res.differs |= memcmp(first, fast, n * 4) != 0;
    else if (levels[l] > TN_CRT_ISA_PORTABLE)
      memcpy(first, fast, n * 4);
    res.compared++;
  }
  tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
  free(plain), free(fast), free(first);
  return res;
}

/* On x86 the channels-last and depthwise paths have AVX2 + FMA and
 * AVX-512F forms (x86/conv_f32.c): each level the CPU has is run here
 * against the portable path on geometries drawn around the forms' tiles
 * (6 or 8 pixels, 8, 16 and 32 channels, and the tails of each), and must
 * agree within 1e-6 of the portable output's range before the clamp (the
 * multiply-adds are fused; the portable ones are not). The AVX2 and AVX-512 forms run the
 * same fused chains in the same order, so they must agree bit for bit. */
typedef struct {
  const TnCrtConv2d *g;
  const float *x, *w, *bias;
} ConvCase;

static void conv_form(const void *ctx, float lo, float hi, float *out) {
  const ConvCase *c = ctx;
  KT_CHECK_OK(tn_crt_conv2d_f32(c->g, c->x, c->w, c->bias, lo, hi, out));
}

/* cases random layers from seed (wide: rows up to 40 pixels, half of
 * them 1x1 kernels without padding at stride 1, so that the forms' rows
 * of whole tiles and the 1x1 layers taken as one run are drawn) through
 * forms_case; each failure reported, or, with bad, counted there. */
static void conv_forms_cases(uint64_t seed, int cases, int wide, int *bad) {
  const int levels[] = {TN_CRT_ISA_AVX2, TN_CRT_ISA_AVX512BW}, top = isa_top();
  KtRng r = kt_rng(seed);
  int compared = 0;
  for (int c = 0, done = 0; done < cases; c++) {
    TnCrtConv2d g = {0};
    int32_t pb, pr;
    draw_window(&r, &g, 11, 3, 2, &pb, &pr);
    if (wide) {
      g.in_w = kt_int(&r, 1, 40), g.in_h = kt_int(&r, 1, 6);
      if (c % 2) {
        g.k_h = g.k_w = 1, g.stride_h = g.stride_w = 1;
        g.pad_top = g.pad_left = pb = pr = 0;
      }
      if (c % 4 == 2) c++; /* channels-last only */
    }
    switch (c % 4) {
      case 0: /* ordinary */
      case 1:
        g.groups = 1, g.in_c = kt_int(&r, 1, 20), g.out_c = kt_int(&r, 1, 70);
        break;
      case 2: /* depthwise */
        g.in_c = g.groups = g.out_c = kt_int(&r, 1, 70);
        break;
      default: /* grouped, or a depthwise multiplier */
        g.groups = kt_int(&r, 1, 3);
        g.in_c = g.groups * kt_int(&r, 1, 5);
        g.out_c = g.groups * kt_int(&r, 1, 40);
        break;
    }
    if (!fit_output(&g, pb, pr)) continue;
    const int32_t cig = g.in_c / g.groups;
    int32_t ein[4] = {g.batch, g.in_h, g.in_w, g.in_c};
    int32_t ew[4] = {g.k_h, g.k_w, cig, g.out_c};
    int32_t eout[4] = {g.batch, g.out_h, g.out_w, g.out_c};
    /* the input NHWC or NCHW, the weights HWIO or IHWO (channels last) */
    strides_of(ein, done % 5 == 4 ? kNCHW : kNHWC, g.in_strides);
    strides_of(ew, done % 7 == 6 ? kIHWO : kHWIO, g.w_strides);
    strides_of(eout, kNHWC, g.out_strides);
    const size_t no = (size_t)eout[0] * eout[1] * eout[2] * eout[3];
    float *x = rand_f32(&r, (int64_t)ein[0] * ein[1] * ein[2] * ein[3], -1, 1);
    float *w = rand_f32(&r, (int64_t)ew[0] * ew[1] * ew[2] * ew[3], -1, 1);
    float *bias = done % 3 ? rand_f32(&r, g.out_c, -1, 1) : NULL;
    float lo = done % 4 ? -INFINITY : -0.5f, hi = done % 4 ? INFINITY : 0.7f;
    const ConvCase cc = {&g, x, w, bias};
    const FormsResult fr = forms_case(conv_form, conv_form, &cc, levels, 2,
                                      lo, hi, no);
    if (bad) *bad += fr.level >= 0 || fr.differs;
    EXPECT(bad || fr.level < 0,
           "conv form case %d at ISA level %d (groups %d, c %d -> %d, "
           "k %dx%d): output %zu %.9g != portable %.9g (tolerance %.3g)",
           done, fr.level, g.groups, g.in_c, g.out_c, g.k_h, g.k_w, fr.at,
           fr.got, fr.want, fr.tol);
    EXPECT(bad || !fr.differs, "conv form case %d: AVX-512 differs from AVX2",
           done);
    compared += fr.compared;
    free(x), free(w), free(bias);
    done++;
  }
  /* every level the CPU has was compared (none where it has no AVX2) */
  EXPECT(top < TN_CRT_ISA_AVX2 || compared >= cases, "%d comparisons",
         compared);
}

START_TEST(test_conv2d_forms) { conv_forms_cases(31, 300, 0, NULL); }
END_TEST

START_TEST(test_conv2d_forms_rows) { conv_forms_cases(32, 300, 1, NULL); }
END_TEST

#if defined(__x86_64__) && defined(__GNUC__)
/* conv_f32.h (internal to the crt): breaks the depthwise pair form */
void tn__crt_conv_f32_fault(int how);
#define HAVE_AVX2_FORMS 1
#else
#define HAVE_AVX2_FORMS 0
#endif

/* Depthwise layers of exactly 8 channels at stride 1 (NHWC, HWIO): at
 * the AVX-512 level their whole windows go two pixels a zmm (dwpair in
 * x86/conv_f32.c). cases random geometries (rows of 1 to 45 pixels, so
 * tiles of 8, 4, 2 and 1 pairs and an odd pixel; kernels up to 5x5,
 * dilations, padding, strides down the rows) against the portable path
 * at the AVX2 and AVX-512 levels, as test_conv2d_forms; returns how many
 * cases were off the tolerance or differed between the levels, and
 * counts the levels compared into *compared. */
static int dw8_cases(uint64_t seed, int cases, int *compared) {
  const int levels[] = {TN_CRT_ISA_AVX2, TN_CRT_ISA_AVX512BW};
  KtRng r = kt_rng(seed);
  int bad = 0;
  for (int done = 0; done < cases;) {
    TnCrtConv2d g = {0};
    g.batch = kt_int(&r, 1, 2);
    g.in_h = kt_int(&r, 1, 9), g.in_w = kt_int(&r, 1, 45);
    g.k_h = kt_int(&r, 1, 5), g.k_w = kt_int(&r, 1, 5);
    g.stride_h = kt_int(&r, 1, 2), g.stride_w = 1;
    g.dilation_h = kt_int(&r, 1, 2), g.dilation_w = kt_int(&r, 1, 2);
    g.pad_top = kt_int(&r, 0, 2), g.pad_left = kt_int(&r, 0, 2);
    g.in_c = g.out_c = g.groups = 8;
    if (!fit_output(&g, kt_int(&r, 0, 2), kt_int(&r, 0, 2))) continue;
    int32_t ein[4] = {g.batch, g.in_h, g.in_w, 8};
    int32_t ew[4] = {g.k_h, g.k_w, 1, 8};
    int32_t eout[4] = {g.batch, g.out_h, g.out_w, 8};
    strides_of(ein, kNHWC, g.in_strides);
    strides_of(ew, kHWIO, g.w_strides);
    strides_of(eout, kNHWC, g.out_strides);
    const size_t no = (size_t)eout[0] * eout[1] * eout[2] * 8;
    float *x = rand_f32(&r, (int64_t)ein[0] * ein[1] * ein[2] * 8, -1, 1);
    float *w = rand_f32(&r, (int64_t)g.k_h * g.k_w * 8, -1, 1);
    float *bias = done % 3 ? rand_f32(&r, 8, -1, 1) : NULL;
    float lo = done % 4 ? -INFINITY : -0.5f, hi = done % 4 ? INFINITY : 0.7f;
    const ConvCase cc = {&g, x, w, bias};
    const FormsResult fr =
        forms_case(conv_form, conv_form, &cc, levels, 2, lo, hi, no);
    bad += fr.level >= 0 || fr.differs;
    *compared += fr.compared;
    free(x), free(w), free(bias);
    done++;
  }
  return bad;
}

START_TEST(test_conv2d_dw8_pairs) {
  int compared = 0;
  const int bad = dw8_cases(47, 300, &compared);
  EXPECT(bad == 0, "%d of 300 depthwise 8-channel cases off", bad);
  EXPECT(isa_top() < TN_CRT_ISA_AVX2 || compared >= 300, "%d comparisons",
         compared);
}
END_TEST

/* The pair form broken on purpose, each way, must fail dw8_cases where
 * the CPU runs it (AVX-512), and nothing may with it put right. */
START_TEST(test_conv2d_dw8_broken_is_caught) {
#if HAVE_AVX2_FORMS
  if (isa_top() < TN_CRT_ISA_AVX512BW) return;
  int compared = 0;
  for (int how = 1; how <= 2; how++) {
    tn__crt_conv_f32_fault(how);
    const int bad = dw8_cases(48, 100, &compared);
    tn__crt_conv_f32_fault(0);
    ck_assert_msg(bad > 0, "fault %d not seen", how);
  }
  ck_assert_int_eq(dw8_cases(48, 100, &compared), 0);
#endif
}
END_TEST

/* The channels-last rows' step broken on purpose must fail the wide
 * cases at the levels the CPU has, and nothing may with it put right. */
START_TEST(test_conv2d_rows_broken_is_caught) {
#if HAVE_AVX2_FORMS
  if (isa_top() < TN_CRT_ISA_AVX2) return;
  int bad = 0;
  tn__crt_conv_f32_fault(3);
  conv_forms_cases(33, 100, 1, &bad);
  tn__crt_conv_f32_fault(0);
  ck_assert_msg(bad > 0, "fault 3 not seen");
  bad = 0;
  conv_forms_cases(33, 100, 1, &bad);
  ck_assert_int_eq(bad, 0);
#endif
}
END_TEST

START_TEST(test_conv2d_errors) {
  float buf[64] = {0};
  TnCrtConv2d g = {1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1,
                   {8, 4, 2, 1}, {4, 4, 2, 1}, {8, 4, 2, 1}};
  float *x = buf, *w = buf + 16, *o = buf + 32;
  KT_CHECK_OK(tn_crt_conv2d_f32(&g, x, w, NULL, -INFINITY, INFINITY, o));
  BAD(tn_crt_conv2d_f32(NULL, x, w, NULL, 0, 1, o));
  BAD(tn_crt_conv2d_f32(&g, NULL, w, NULL, 0, 1, o));
  BAD(tn_crt_conv2d_f32(&g, x, NULL, NULL, 0, 1, o));
  BAD(tn_crt_conv2d_f32(&g, x, w, NULL, 0, 1, NULL));
  int32_t *fields[] = {&g.batch,    &g.in_h,       &g.in_w,       &g.in_c,
                       &g.out_h,    &g.out_w,      &g.out_c,      &g.k_h,
                       &g.k_w,      &g.stride_h,   &g.stride_w,
                       &g.dilation_h, &g.dilation_w, &g.groups};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    int32_t keep = *fields[i];
    *fields[i] = 0;
    BAD(tn_crt_conv2d_f32(&g, x, w, NULL, 0, 1, o));
    *fields[i] = keep;
  }
  g.pad_top = -1;
  BAD(tn_crt_conv2d_f32(&g, x, w, NULL, 0, 1, o));
  g.pad_top = 0, g.groups = 3; /* does not divide the channels */
  BAD(tn_crt_conv2d_f32(&g, x, w, NULL, 0, 1, o));
  g.groups = 1, g.stride_h = INT32_MAX, g.k_h = 2;
  EXPECT_ST(tn_crt_conv2d_f32(&g, x, w, NULL, 0, 1, o), TN_CRT_OVERFLOW);
}
END_TEST

/* ---- Dense, batch_matmul --------------------------------------------- */

/* A float dense entry's argument checks: NULL pointers, sizes <= 0. */
static void bad_dense_args(TnCrtStatus (*fn)(const TnCrtDense *, const float *,
                                              const float *, const float *,
                                              float, float, float *)) {
  float f[4] = {0};
  TnCrtDense p = {1, 2, 2, 2, 1};
  BAD(fn(NULL, f, f, NULL, 0, 1, f));
  BAD(fn(&p, NULL, f, NULL, 0, 1, f));
  BAD(fn(&p, f, NULL, NULL, 0, 1, f));
  BAD(fn(&p, f, f, NULL, 0, 1, NULL));
  p.in_features = 0;
  BAD(fn(&p, f, f, NULL, 0, 1, f));
  p.in_features = 2, p.batch = -1;
  BAD(fn(&p, f, f, NULL, 0, 1, f));
  p.batch = 1, p.out_features = 0;
  BAD(fn(&p, f, f, NULL, 0, 1, f));
}

START_TEST(test_dense) {
  KtRng r = kt_rng(9);
  for (int c = 0; c < 90; c++) {
    int32_t M = kt_int(&r, 1, 5), K = kt_int(&r, 1, 40), N = kt_int(&r, 1, 40);
    TnCrtDense p = {M, K, N, K, 1}; /* [N, K] */
    if (c % 3 == 1) p.w_stride_n = 1, p.w_stride_k = N; /* [K, N] */
    if (c % 3 == 2) p.w_stride_n = 2 * K, p.w_stride_k = 2; /* [N, 2K] */
    float *x = rand_f32(&r, M * K, -1, 1), *w = rand_f32(&r, 2 * K * N, -1, 1);
    float *bias = c % 4 ? rand_f32(&r, N, -1, 1) : NULL;
    float *out = xalloc((size_t)(M * N) * 4);
    float lo = c % 5 ? -INFINITY : -0.3f, hi = c % 5 ? INFINITY : 0.4f;
    KT_CHECK_OK(tn_crt_dense_f32(&p, x, w, bias, lo, hi, out));
    for (int32_t m = 0; m < M; m++)
      for (int32_t n = 0; n < N; n++) {
        double s = bias ? bias[n] : 0, mag = fabs(s);
        for (int32_t k = 0; k < K; k++) {
          double t = (double)x[m * K + k] *
                     w[n * p.w_stride_n + k * p.w_stride_k];
          s += t, mag += fabs(t);
        }
        EXPECT(close_to(out[m * N + n], dclamp(s, lo, hi), mag),
               "dense case %d [%d, %d]", c, m, n);
      }
    free(x), free(w), free(bias), free(out);
  }
  bad_dense_args(tn_crt_dense_f32);
}
END_TEST

/* On x86 with AVX2, dense over [N, K] weights has a second form (four rows
 * at once): the same bits as the portable form, which the random cases
 * here run too. */
START_TEST(test_dense_forms_agree_bit_for_bit) {
  KtRng r = kt_rng(19);
  for (int c = 0; c < 60; c++) {
    int32_t M = kt_int(&r, 1, 3), K = kt_int(&r, 1, c % 6 ? 90 : 700);
    int32_t N = kt_int(&r, 1, 23);
    TnCrtDense p = {M, K, N, K, 1};
    float *x = rand_f32(&r, M * K, -1, 1), *w = rand_f32(&r, K * N, -1, 1);
    float *bias = c % 2 ? rand_f32(&r, N, -1, 1) : NULL;
    float *fast = xalloc((size_t)(M * N) * 4), *plain = xalloc((size_t)(M * N) * 4);
    KT_CHECK_OK(tn_crt_dense_f32(&p, x, w, bias, -INFINITY, INFINITY, fast));
    tn_crt_isa_limit(TN_CRT_ISA_PORTABLE);
    KT_CHECK_OK(tn_crt_dense_f32(&p, x, w, bias, -INFINITY, INFINITY, plain));
    tn_crt_isa_limit(TN_CRT_ISA_AVX512VNNI);
    EXPECT(memcmp(fast, plain, (size_t)(M * N) * 4) == 0,
           "dense case %d (M %d K %d N %d): the forms differ", c, M, K, N);
    free(x), free(w), free(bias), free(fast), free(plain);
  }
}
END_TEST

/* The packed layout (tn_crt_dense_f32_pack, weight_layout "N16K1"): the
 * packing against its formula, then random layers (1 to 150 outputs, so
 * groups of 8, 4, 2 and 1 whole blocks and every tail; inputs up to 200,
 * some 700; batches up to 3; with and without a bias and a clamp) at the
 * portable level and every level the CPU has, against the portable [N, K]
 * form: within 1e-6 of the range of its unclamped output (the chains run
 * in another order, and fused above the portable level); the AVX2 + FMA
 * and AVX-512F forms bit for bit the same. */
typedef struct {
  const TnCrtDense *p;
  const float *x, *w, *pw, *bias;
} DenseCase;

static void dense_plain(const void *ctx, float lo, float hi, float *out) {
  const DenseCase *c = ctx;
  KT_CHECK_OK(tn_crt_dense_f32(c->p, c->x, c->w, c->bias, lo, hi, out));
}

static void dense_packed(const void *ctx, float lo, float hi, float *out) {
  const DenseCase *c = ctx;
  KT_CHECK_OK(tn_crt_dense_f32_packed(c->p, c->x, c->pw, c->bias, lo, hi, out));
}

START_TEST(test_dense_packed) {
  const int levels[] = {TN_CRT_ISA_PORTABLE, TN_CRT_ISA_AVX2,
                        TN_CRT_ISA_AVX512BW};
  KtRng r = kt_rng(47);
  int compared = 0;
  for (int c = 0; c < 200; c++) {
    int32_t M = kt_int(&r, 1, 3), K = kt_int(&r, 1, c % 9 ? 200 : 700);
    int32_t N = c % 3 ? kt_int(&r, 1, 150) : 16 * kt_int(&r, 1, 9);
    TnCrtDense p = {M, K, N, K, 1};
    const size_t no = (size_t)M * N;
    float *x = rand_f32(&r, M * K, -1, 1), *w = rand_f32(&r, K * N, -1, 1);
    float *pw = xalloc((size_t)K * N * 4);
    float *bias = c % 2 ? rand_f32(&r, N, -1, 1) : NULL;
    float lo = c % 4 ? -INFINITY : -0.5f, hi = c % 4 ? INFINITY : 0.7f;
    KT_CHECK_OK(tn_crt_dense_f32_pack(N, K, w, pw));
    int32_t bad_j = -1, bad_i = -1;
    for (int32_t j = 0; j < N && bad_j < 0; j++)
      for (int32_t i = 0; i < K && bad_j < 0; i++) {
        const int32_t j0 = j - j % 16, nb = N - j0 < 16 ? N - j0 : 16;
        if (pw[(size_t)j0 * K + (size_t)i * nb + (size_t)(j - j0)] !=
            w[(size_t)j * K + i])
          bad_j = j, bad_i = i;
      }
    EXPECT(bad_j < 0, "pack case %d [%d, %d]: w[%d][%d] misplaced", c, N, K,
           bad_j, bad_i);
    const DenseCase dc = {&p, x, w, pw, bias};
    const FormsResult fr = forms_case(dense_plain, dense_packed, &dc, levels,
                                      3, lo, hi, no);
    EXPECT(fr.level < 0,
           "packed dense case %d at ISA level %d (M %d K %d N %d): output "
           "%zu %.9g != portable %.9g (tolerance %.3g)", c, fr.level, M, K,
           N, fr.at, fr.got, fr.want, fr.tol);
    EXPECT(!fr.differs, "packed dense case %d: AVX-512 differs from AVX2", c);
    compared += fr.compared;
    free(x), free(w), free(pw), free(bias);
  }
  /* every level the CPU has was compared */
  const int top = isa_top();
  EXPECT(compared >= 200 * (top >= TN_CRT_ISA_AVX512BW ? 3
                            : top >= TN_CRT_ISA_AVX2    ? 2
                                                        : 1),
         "%d comparisons", compared);
  float f[4] = {0};
  BAD(tn_crt_dense_f32_pack(2, 2, NULL, f));
  BAD(tn_crt_dense_f32_pack(2, 2, f, NULL));
  BAD(tn_crt_dense_f32_pack(0, 2, f, f));
  BAD(tn_crt_dense_f32_pack(2, -1, f, f));
  BAD(tn_crt_dense_f32_pack(65536, 65536, f, f));
  bad_dense_args(tn_crt_dense_f32_packed);
}
END_TEST

START_TEST(test_batch_matmul) {
  KtRng r = kt_rng(10);
  for (int c = 0; c < 60; c++) {
    int32_t B = kt_int(&r, 1, 3), M = kt_int(&r, 1, 6);
    int32_t K = kt_int(&r, 1, 20), N = kt_int(&r, 1, 35);
    TnCrtDense p = {M, K, N, 1, N};                   /* w stored [K, N] */
    if (c & 2) p.w_stride_n = K, p.w_stride_k = 1;    /* w stored [N, K] */
    int32_t sm = c & 1 ? 1 : K, sk = c & 1 ? M : 1;   /* x [K, M] when odd */
    int32_t xb = c % 5 ? M * K : 0, wb = c & 4 ? 0 : K * N; /* 0: shared */
    float *x = rand_f32(&r, B * M * K, -1, 1);
    float *w = rand_f32(&r, B * K * N, -1, 1);
    float *out = xalloc((size_t)(B * M * N) * 4);
    KT_CHECK_OK(tn_crt_batch_matmul_f32(&p, B, xb, wb, sm, sk, x, w, out));
    for (int32_t b = 0; b < B; b++)
      for (int32_t m = 0; m < M; m++)
        for (int32_t n = 0; n < N; n++) {
          double s = 0, mag = 0;
          for (int32_t k = 0; k < K; k++) {
            double t = (double)x[b * xb + m * sm + k * sk] *
                       w[b * wb + n * p.w_stride_n + k * p.w_stride_k];
            s += t, mag += fabs(t);
          }
          EXPECT(close_to(out[(b * M + m) * N + n], s, mag),
                 "batch_matmul case %d [%d, %d, %d]", c, b, m, n);
        }
    free(x), free(w), free(out);
  }
  float f[4] = {0};
  TnCrtDense p = {1, 2, 2, 1, 2};
  BAD(tn_crt_batch_matmul_f32(&p, 0, 0, 0, 2, 1, f, f, f));
  BAD(tn_crt_batch_matmul_f32(NULL, 1, 0, 0, 2, 1, f, f, f));
  BAD(tn_crt_batch_matmul_f32(&p, 1, 0, 0, 2, 1, NULL, f, f));
  BAD(tn_crt_batch_matmul_f32(&p, 1, 0, 0, 2, 1, f, NULL, f));
  BAD(tn_crt_batch_matmul_f32(&p, 1, 0, 0, 2, 1, f, f, NULL));
  p.out_features = 0;
  BAD(tn_crt_batch_matmul_f32(&p, 1, 0, 0, 2, 1, f, f, f));
}
END_TEST

/* ---- Pooling --------------------------------------------------------- */

static void pool_case(KtRng *r, TnCrtPool2d *g, int is_max, int tag) {
  int32_t ein[4] = {g->batch, g->in_h, g->in_w, g->channels};
  int32_t eout[4] = {g->batch, g->out_h, g->out_w, g->channels};
  strides_of(ein, tag & 1 ? kNCHW : kNHWC, g->in_strides);
  strides_of(eout, tag & 1 ? kNCHW : kNHWC, g->out_strides);
  float *x = rand_f32(r, (int64_t)ein[0] * ein[1] * ein[2] * ein[3], -1, 1);
  float *out = xalloc((size_t)eout[0] * eout[1] * eout[2] * eout[3] * 4);
  float lo = tag % 5 ? -INFINITY : -0.2f, hi = tag % 5 ? INFINITY : 0.5f;
  if (is_max) KT_CHECK_OK(tn_crt_max_pool2d_f32(g, x, lo, hi, out));
  else KT_CHECK_OK(tn_crt_avg_pool2d_f32(g, x, lo, hi, out));
  const int32_t *is = g->in_strides, *os = g->out_strides;
  for (int32_t n = 0; n < g->batch; n++)
    for (int32_t oh = 0; oh < g->out_h; oh++)
      for (int32_t ow = 0; ow < g->out_w; ow++)
        for (int32_t c = 0; c < g->channels; c++) {
          double m = -INFINITY, s = 0, mag = 0;
          int32_t cnt = 0;
          for (int32_t kh = 0; kh < g->k_h; kh++)
            for (int32_t kw = 0; kw < g->k_w; kw++) {
              int32_t ih = oh * g->stride_h - g->pad_top + kh;
              int32_t iw = ow * g->stride_w - g->pad_left + kw;
              if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w)
                continue;
              double v = x[n * is[0] + ih * is[1] + iw * is[2] + c * is[3]];
              m = v > m ? v : m, s += v, mag += fabs(v), cnt++;
            }
          int32_t div = g->count_include_pad ? g->k_h * g->k_w : cnt;
          double e = dclamp(is_max ? m : div ? s / div : 0, lo, hi);
          float got = out[n * os[0] + oh * os[1] + ow * os[2] + c * os[3]];
          EXPECT(close_to(got, e, div ? mag / div : 0),
                 "%s pool case %d (n %d oh %d ow %d c %d): %g != %g",
                 is_max ? "max" : "avg", tag, n, oh, ow, c, got, e);
        }
  free(x), free(out);
}

START_TEST(test_pool) {
  KtRng r = kt_rng(11);
  for (int c = 0, done = 0; done < 300; c++) {
    TnCrtPool2d g = {0};
    g.batch = kt_int(&r, 1, 2), g.channels = kt_int(&r, 1, c % 7 ? 5 : 19);
    g.in_h = kt_int(&r, 1, 8), g.in_w = kt_int(&r, 1, 8);
    g.k_h = kt_int(&r, 1, 4), g.k_w = kt_int(&r, 1, 4);
    g.stride_h = kt_int(&r, 1, 5), g.stride_w = kt_int(&r, 1, 5);
    g.pad_top = kt_int(&r, 0, 4), g.pad_left = kt_int(&r, 0, 4);
    g.count_include_pad = kt_int(&r, 0, 1);
    int32_t hh = g.in_h + g.pad_top + kt_int(&r, 0, 4) - g.k_h;
    int32_t ww = g.in_w + g.pad_left + kt_int(&r, 0, 4) - g.k_w;
    if (hh < 0 || ww < 0) continue;
    g.out_h = hh / g.stride_h + 1, g.out_w = ww / g.stride_w + 1;
    pool_case(&r, &g, done & 2, done);
    done++;
  }
  float f[16] = {0};
  TnCrtPool2d g = {1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0,
                   {4, 2, 1, 1}, {1, 1, 1, 1}};
  KT_CHECK_OK(tn_crt_max_pool2d_f32(&g, f, -INFINITY, INFINITY, f + 8));
  BAD(tn_crt_max_pool2d_f32(NULL, f, 0, 1, f + 8));
  BAD(tn_crt_avg_pool2d_f32(&g, NULL, 0, 1, f + 8));
  BAD(tn_crt_avg_pool2d_f32(&g, f, 0, 1, NULL));
  g.k_w = 0;
  BAD(tn_crt_avg_pool2d_f32(&g, f, 0, 1, f + 8));
  g.k_w = 2, g.stride_h = -1;
  BAD(tn_crt_max_pool2d_f32(&g, f, 0, 1, f + 8));
  g.stride_h = 1, g.pad_left = -1;
  BAD(tn_crt_max_pool2d_f32(&g, f, 0, 1, f + 8));
  g.pad_left = 0, g.channels = 0;
  BAD(tn_crt_avg_pool2d_f32(&g, f, 0, 1, f + 8));
}
END_TEST

/* ---- Softmax --------------------------------------------------------- */

START_TEST(test_softmax) {
  KtRng r = kt_rng(12);
  const int32_t edge[4] = {1, 32, 33, 65}; /* around 32-column chunks */
  for (int c = 0; c < 60; c++) {
    int32_t outer = kt_int(&r, 1, 3), n = kt_int(&r, 1, 20);
    int32_t inner = c % 3 == 0 ? edge[c / 3 % 4] : kt_int(&r, 1, 70);
    float scale = c % 4 == 0 ? 1000.0f : 8.0f; /* 1000: exp would overflow */
    int32_t total = outer * n * inner;
    float *x = rand_f32(&r, total, -scale, scale);
    float *y = xalloc((size_t)total * 4);
    KT_CHECK_OK(tn_crt_softmax_f32(outer, n, inner, x, y));
    for (int32_t o = 0; o < outer; o++)
      for (int32_t j = 0; j < inner; j++) {
        const float *xs = x + o * n * inner + j;
        double m = -INFINITY, s = 0;
        for (int32_t i = 0; i < n; i++) m = fmax(m, xs[i * inner]);
        for (int32_t i = 0; i < n; i++) s += exp(xs[i * inner] - m);
        for (int32_t i = 0; i < n; i++) {
          double e = exp(xs[i * inner] - m) / s;
          float got = y[o * n * inner + j + i * inner];
          EXPECT(close_to(got, e, 0) || fabs(got - e) < 1e-37,
                 "softmax case %d (%d, %d, %d): %g != %g", c, o, i, j, got,
                 e);
        }
      }
    free(x), free(y);
  }
  float f[4] = {0};
  BAD(tn_crt_softmax_f32(0, 2, 2, f, f + 2));
  BAD(tn_crt_softmax_f32(1, 0, 2, f, f + 2));
  BAD(tn_crt_softmax_f32(1, 2, -2, f, f + 2));
  BAD(tn_crt_softmax_f32(1, 2, 2, NULL, f));
  BAD(tn_crt_softmax_f32(1, 2, 2, f, NULL));
  EXPECT_ST(tn_crt_softmax_f32(65536, 65536, 2, f, f), TN_CRT_OVERFLOW);
}
END_TEST

/* ---- Strided slice --------------------------------------------------- */

/* A random valid slice of a random shape: begin and a non-zero step per
 * dim, the output extent as large as the step allows or smaller. */
static void rand_slice(KtRng *r, TnCrtStridedSlice *p) {
  memset(p, 0, sizeof *p);
  p->ndim = kt_int(r, 1, 6);
  p->elem_size = kESize[kt_int(r, 0, 3)];
  for (int32_t d = 0; d < p->ndim; d++) {
    int32_t n = kt_int(r, 1, p->ndim > 4 ? 4 : 9);
    int32_t s = kt_int(r, 1, 3) * (kt_int(r, 0, 2) == 0 ? -1 : 1);
    int32_t b = kt_int(r, 0, n - 1);
    int32_t room = s > 0 ? (n - 1 - b) / s + 1 : b / -s + 1;
    p->in_dims[d] = n, p->begin[d] = b, p->strides[d] = s;
    p->out_dims[d] = kt_int(r, 1, room);
  }
}

static void check_slice(KtRng *r, const TnCrtStridedSlice *p, int tag) {
  int64_t n = 1, m = 1, st[8];
  for (int32_t d = p->ndim - 1; d >= 0; d--)
    st[d] = n, n *= p->in_dims[d], m *= p->out_dims[d];
  size_t es = (size_t)p->elem_size;
  uint8_t *in = rand_bytes(r, (size_t)n * es), *out = xalloc((size_t)m * es);
  KT_CHECK_OK(tn_crt_strided_slice(p, in, out));
  for (int64_t i = 0; i < m; i++) {
    int64_t rem = i, off = 0;
    for (int32_t d = p->ndim - 1; d >= 0; d--) {
      off += (p->begin[d] + rem % p->out_dims[d] * p->strides[d]) * st[d];
      rem /= p->out_dims[d];
    }
    EXPECT(memcmp(out + i * es, in + off * es, es) == 0,
           "strided slice case %d, element %lld", tag, (long long)i);
  }
  free(in), free(out);
}

START_TEST(test_strided_slice) {
  KtRng r = kt_rng(13);
  for (int c = 0; c < 400; c++) {
    TnCrtStridedSlice p;
    rand_slice(&r, &p);
    check_slice(&r, &p, c);
  }
  /* whole rows (memcpy), a reversed row, one element, eight dims */
  const TnCrtStridedSlice fixed[] = {
      {2, {5, 40}, {1, 0}, {2, 1}, {2, 40}, 4},
      {1, {33}, {32}, {-1}, {33}, 8},
      {3, {2, 3, 4}, {1, 2, 3}, {5, 7, 9}, {1, 1, 1}, 2},
      {8, {2, 2, 2, 2, 2, 2, 2, 3}, {1, 0, 1, 0, 1, 0, 1, 2},
       {-1, 1, -1, 1, -1, 1, -1, -2}, {2, 2, 2, 2, 2, 2, 2, 2}, 1}};
  for (int c = 0; c < 4; c++) check_slice(&r, &fixed[c], 1000 + c);

  /* an empty result reads and writes nothing (NULL buffers are fine) */
  TnCrtStridedSlice e = {2, {0, 3}, {0, 0}, {1, 1}, {0, 3}, 4};
  KT_CHECK_OK(tn_crt_strided_slice(&e, NULL, NULL));

  uint8_t buf[64];
  TnCrtStridedSlice bad = {2, {2, 3}, {0, 0}, {1, 1}, {2, 3}, 4};
  KT_CHECK_OK(tn_crt_strided_slice(&bad, buf, buf + 32));
  BAD(tn_crt_strided_slice(NULL, buf, buf + 32));
  BAD(tn_crt_strided_slice(&bad, NULL, buf + 32));
  BAD(tn_crt_strided_slice(&bad, buf, NULL));
  bad.elem_size = 3;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.elem_size = 4, bad.strides[1] = 0;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.strides[1] = 2; /* reads index 4 of 3 */
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.strides[1] = -1; /* reads index -2 */
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.strides[1] = 1, bad.begin[0] = 2; /* begins past the end */
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.begin[0] = -1;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.begin[0] = 0, bad.out_dims[0] = -1;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.out_dims[0] = 2, bad.ndim = 0;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  bad.ndim = 9;
  BAD(tn_crt_strided_slice(&bad, buf, buf + 32));
  TnCrtStridedSlice big = {2, {65536, 65536}, {0, 0}, {1, 1}, {1, 1}, 1};
  EXPECT_ST(tn_crt_strided_slice(&big, buf, buf + 32), TN_CRT_OVERFLOW);
}
END_TEST

/* ---- Mean ------------------------------------------------------------- */

/* The reference: for each output, its elements in row-major order of the
 * reduced coordinates, summed in float (as TFLite) and in int64. */
static void ref_mean(const TnCrtReduce *p, const float *xf,
                     const int32_t *xi, float *of, int32_t *oi) {
  int64_t n = 1, outputs = 1, count = 1, st[8];
  for (int32_t d = p->ndim - 1; d >= 0; d--) st[d] = n, n *= p->dims[d];
  for (int32_t d = 0; d < p->ndim; d++)
    if ((p->reduce_mask >> d) & 1) count *= p->dims[d];
    else outputs *= p->dims[d];
  for (int64_t o = 0; o < outputs; o++) {
    float s = 0;
    uint32_t si = 0;
    for (int64_t k = 0; k < count; k++) {
      /* output index o over kept dims, k over reduced dims, row-major */
      int64_t ro = o, rk = k, off = 0;
      for (int32_t d = p->ndim - 1; d >= 0; d--) {
        int64_t e = p->dims[d];
        if ((p->reduce_mask >> d) & 1) off += rk % e * st[d], rk /= e;
        else off += ro % e * st[d], ro /= e;
      }
      s += xf[off];
      si += (uint32_t)xi[off];
    }
    of[o] = s / (float)count;
    oi[o] = count ? (int32_t)si / (int32_t)count : 0;
  }
}

START_TEST(test_mean) {
  KtRng r = kt_rng(14);
  for (int c = 0; c < 300; c++) {
    TnCrtReduce p = {0};
    p.ndim = kt_int(&r, 1, 6);
    int64_t n = 1;
    for (int32_t d = 0; d < p.ndim; d++) {
      p.dims[d] = kt_int(&r, 1, p.ndim > 3 ? 5 : 11);
      n *= p.dims[d];
      if (kt_int(&r, 0, 1)) p.reduce_mask |= 1u << d;
    }
    if (c % 7 == 0) p.reduce_mask = (1u << p.ndim) - 1; /* everything */
    float *xf = rand_f32(&r, n, -4, 4);
    int32_t *xi = xalloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
      xi[i] = c % 5 == 0 ? (int32_t)(uint32_t)kt_next(&r) /* wraps */
                         : kt_int(&r, -1000, 1000);
    float *of = xalloc((size_t)n * 4), *wf = xalloc((size_t)n * 4);
    int32_t *oi = xalloc((size_t)n * 4), *wi = xalloc((size_t)n * 4);
    KT_CHECK_OK(tn_crt_mean_f32(&p, xf, of));
    KT_CHECK_OK(tn_crt_mean_i32(&p, xi, oi));
    ref_mean(&p, xf, xi, wf, wi);
    int64_t outputs = 1;
    for (int32_t d = 0; d < p.ndim; d++)
      if (!((p.reduce_mask >> d) & 1)) outputs *= p.dims[d];
    /* the same additions in the same order: the same bits */
    EXPECT(memcmp(of, wf, (size_t)outputs * 4) == 0, "mean_f32 case %d", c);
    EXPECT(memcmp(oi, wi, (size_t)outputs * 4) == 0, "mean_i32 case %d", c);
    free(xf), free(xi), free(of), free(wf), free(oi), free(wi);
  }
  /* an empty reduction: NaN (0 / 0) and 0; empty outputs: nothing */
  TnCrtReduce e = {2, {3, 0}, 2};
  float f[3];
  int32_t i3[3] = {7, 7, 7};
  KT_CHECK_OK(tn_crt_mean_f32(&e, NULL, f));
  KT_CHECK_OK(tn_crt_mean_i32(&e, NULL, i3));
  for (int k = 0; k < 3; k++) ck_assert(isnan(f[k]) && i3[k] == 0);
  e.reduce_mask = 1;
  KT_CHECK_OK(tn_crt_mean_f32(&e, NULL, NULL));
  /* truncation toward zero, the int32 way */
  TnCrtReduce q = {1, {2}, 1};
  int32_t xi[2] = {-3, 0}, yi;
  KT_CHECK_OK(tn_crt_mean_i32(&q, xi, &yi));
  ck_assert_int_eq(yi, -1);

  TnCrtReduce bad = {2, {2, 3}, 1};
  float buf[8] = {0};
  BAD(tn_crt_mean_f32(NULL, buf, buf + 4));
  BAD(tn_crt_mean_f32(&bad, NULL, buf + 4));
  BAD(tn_crt_mean_f32(&bad, buf, NULL));
  BAD(tn_crt_mean_i32(&bad, NULL, (int32_t *)(void *)buf));
  bad.reduce_mask = 4; /* a dim it does not have */
  BAD(tn_crt_mean_f32(&bad, buf, buf + 4));
  bad.reduce_mask = 1, bad.dims[1] = -1;
  BAD(tn_crt_mean_f32(&bad, buf, buf + 4));
  bad.dims[1] = 3, bad.ndim = 0;
  BAD(tn_crt_mean_f32(&bad, buf, buf + 4));
  bad.ndim = 9;
  BAD(tn_crt_mean_i32(&bad, (int32_t *)(void *)buf, (int32_t *)(void *)buf));
  TnCrtReduce big = {2, {65536, 65536}, 1};
  EXPECT_ST(tn_crt_mean_f32(&big, buf, buf), TN_CRT_OVERFLOW);
}
END_TEST

#define TEST_CASES(X)                                                    \
  X(binary_directions) X(binary_random) X(binary_errors) X(unary)         \
  X(clip_bias) X(cast_all_pairs) X(cast_table) X(transpose)               \
  X(concatenate) X(pad) X(conv2d) X(conv2d_errors) X(dense)               \
  X(conv2d_forms) X(conv2d_forms_rows) X(conv2d_dw8_pairs)                \
  X(conv2d_dw8_broken_is_caught) X(conv2d_rows_broken_is_caught)         \
  X(dense_forms_agree_bit_for_bit) X(dense_packed)                        \
  X(batch_matmul) X(pool) X(softmax) X(strided_slice) X(mean)

static Suite *make_suite(void) {
  Suite *s = suite_create("kernels_f32");
#define ADD_CASE(name)                                       \
  {                                                          \
    TCase *tc = tcase_create(#name);                         \
    tcase_set_timeout(tc, 120); /* valgrind */               \
    tcase_add_test(tc, test_##name);                         \
    suite_add_tcase(s, tc);                                  \
  }
  TEST_CASES(ADD_CASE)
  return s;
}

KT_MAIN(make_suite)
