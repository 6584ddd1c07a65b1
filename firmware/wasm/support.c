/*
 * support.c: the C library functions that runtime/crt references
 * (crt_libc.h), for wasm32 with no libc and no WASI.
 *
 * clang --target=wasm32 has no C library at all, so the memory functions and
 * the few libm functions the kernels call are defined here. The aim is not
 * a libm but the host's results: a model run in wasm must give the outputs
 * the host executor gives, bit for bit. So frexp, round, roundf and floor
 * are exact (they have one right answer); expf evaluates the same table
 * method, with the same constants and in the same order, as glibc's, so it
 * returns glibc's float for every one of the 2^32 inputs (glibc's FMA
 * variant, which x86-64 CPUs with FMA take, differs on 2; libm_check.c
 * counts); tanhf is computed in double and is correctly rounded but for
 * rare inputs, so it differs from glibc's (which is not) in the last bit on
 * about 3% of floats. No bundled model calls tanhf. logf is computed in
 * double and rounded once, so it is within one ulp of glibc's (which is
 * not correctly rounded either) and usually equal.
 * The memory functions are plain loops: the kernels expand their small
 * copies inline through __builtin_memcpy, so only a few large copies and
 * fills reach these. -ffreestanding (which implies -fno-builtin) keeps
 * clang from turning these loops back into calls of themselves.
 */
#include <stddef.h>
#include <stdint.h>

#define TN_WASM_LIBC __attribute__((visibility("hidden")))

/* ---- memory --------------------------------------------------------------- */

TN_WASM_LIBC void *memcpy(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  for (size_t i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

TN_WASM_LIBC void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if ((uintptr_t)d - (uintptr_t)s >= n) { /* no overlap that forward breaks */
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  } else {
    for (size_t i = n; i > 0; i--) d[i - 1] = s[i - 1];
  }
  return dst;
}

TN_WASM_LIBC void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  for (size_t i = 0; i < n; i++) d[i] = (unsigned char)c;
  return dst;
}

TN_WASM_LIBC int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* ---- exact math ----------------------------------------------------------- */

static uint64_t bits64(double x) {
  uint64_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}
static double from_bits64(uint64_t u) {
  double x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}
static uint32_t bits32(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}

/* x = m * 2^e with |m| in [0.5, 1); 0, inf and NaN come back as they are,
 * with *e = 0 (as glibc does). */
TN_WASM_LIBC double frexp(double x, int *e) {
  uint64_t u = bits64(x);
  int ex = (int)(u >> 52 & 0x7ff);
  if (ex == 0x7ff || x == 0.0) {
    *e = 0;
    return x;
  }
  if (ex == 0) { /* subnormal: scale into the normal range first */
    double m = frexp(x * 0x1p64, e);
    *e -= 64;
    return m;
  }
  *e = ex - 1022;
  return from_bits64((u & 0x800fffffffffffffull) | 0x3fe0000000000000ull);
}

/* Half away from zero. wasm's nearest is half to even, so: truncate, then
 * step away from zero when the dropped part is at least a half (x - t is
 * exact: both have the same exponent or t is 0). */
TN_WASM_LIBC double round(double x) {
  double t = __builtin_trunc(x);
  if (__builtin_fabs(x - t) >= 0.5) t += __builtin_copysign(1.0, x);
  return t;
}

TN_WASM_LIBC float roundf(float x) {
  float t = __builtin_truncf(x);
  if (__builtin_fabsf(x - t) >= 0.5f) t += __builtin_copysignf(1.0f, x);
  return t;
}

/* Each is one wasm instruction. */
TN_WASM_LIBC double floor(double x) { return __builtin_floor(x); }
TN_WASM_LIBC float floorf(float x) { return __builtin_floorf(x); }
TN_WASM_LIBC float sqrtf(float x) { return __builtin_sqrtf(x); }
TN_WASM_LIBC float fabsf(float x) { return __builtin_fabsf(x); }

/* ---- expf ----------------------------------------------------------------- */

/* exp(x) = 2^(k/32) * 2^(r/32) with x * 32/ln2 = k + r, |r| <= 1/2. Entry i
 * holds the bits of 2^(i/32) rounded to double, less i << 47, so that adding
 * k << 47 puts both the table value and k's power of two into place. Made by
 *   struct.unpack("<Q", struct.pack("<d", float(Decimal(2) ** (Decimal(i) /
 *   32))))[0] - (i << 47)
 * at 80 digits. The cubic, and the order in which expf evaluates it, are
 * glibc's (its expf, since 2.27, is this method): that is what makes the
 * results the host's. */
static const uint64_t exp2_32[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f,
    0x3fef9301d0125b51, 0x3fef72b83c7d517b, 0x3fef54873168b9aa,
    0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74,
    0x3feea11473eb0187, 0x3feea589994cce13, 0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c,
    0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};

TN_WASM_LIBC float expf(float x) {
  const double inv_ln2_32 = 0x1.71547652b82fep+0 * 32;
  const double shift = 0x1.8p+52; /* x + shift rounds x to an integer */
  const double c0 = 0x1.c6af84b912394p-5 / (32.0 * 32.0 * 32.0);
  const double c1 = 0x1.ebfce50fac4f3p-3 / (32.0 * 32.0);
  const double c2 = 0x1.62e42ff0c52d6p-1 / 32.0;
  uint32_t top = bits32(x) >> 20 & 0x7ff;
  if (top >= (bits32(88.0f) >> 20)) { /* |x| >= 88, inf or NaN */
    if (bits32(x) == 0xff800000u) return 0.0f; /* exp(-inf) */
    if (top >= 0x7f8) return x + x;            /* inf, NaN */
    if (x > 0x1.62e42ep6f) return __builtin_inff();
    if (x < -0x1.9fe368p6f) return 0.0f;
  }
  double z = inv_ln2_32 * (double)x;
  double kd = z + shift;
  uint64_t ki = bits64(kd);
  kd -= shift;
  double r = z - kd;
  double s = from_bits64(exp2_32[ki % 32] + (ki << 47));
  double p = c0 * r + c1;
  double r2 = r * r;
  double y = c2 * r + 1.0;
  y = p * r2 + y;
  return (float)(y * s);
}

/* ---- tanhf ---------------------------------------------------------------- */

/* e^y in double, |y| <= 20: y = k ln2 + r with |r| <= ln2/2, e^r by its
 * Taylor series to r^13 (error below 2^-60 relative), times 2^k. */
static double exp_d(double y) {
  const double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;
  double k = __builtin_nearbyint(y * 0x1.71547652b82fep+0);
  double r = (y - k * ln2_hi) - k * ln2_lo;
  double p = 1.0;
  for (int i = 13; i > 0; i--) p = 1.0 + p * r / i;
  return p * from_bits64((uint64_t)(1023 + (int64_t)k) << 52);
}

/* tanh |x| = (e - 1) / (e + 1), e = e^(2|x|), in double: for |x| >= 2^-12
 * the cancellation in e - 1 costs at most 2^13 double ulps, far below a
 * float's half ulp. Below 2^-12 tanh x rounds to x; above 10, to +-1. */
TN_WASM_LIBC float tanhf(float x) {
  float a = __builtin_fabsf(x);
  if (!(a == a)) return x + x; /* NaN */
  if (a < 0x1p-12f) return x;
  if (a > 10.0f) return __builtin_copysignf(1.0f, x);
  double e = exp_d(2.0 * (double)a);
  return __builtin_copysignf((float)((e - 1.0) / (e + 1.0)), x);
}

/* ---- log, logf ------------------------------------------------------------ */

/* log x = e ln2 + log m with x = m 2^e, m in [sqrt(1/2), sqrt(2)), and
 * log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the odd series
 * to s^27 leaves an error below 2^-66 relative, so log is within an ulp of
 * the correctly rounded double, and logf, rounded from it once, equals the
 * correctly rounded float but for rare halfway cases. */
TN_WASM_LIBC double log(double x) {
  if (x != x) return x + x;                       /* NaN */
  if (x == 0.0) return -__builtin_inf();           /* +-0 */
  if (x < 0.0) return __builtin_nan("");           /* negative */
  if (x == __builtin_inf()) return x;              /* +inf */
  double m = x;
  int e = 0;
  if (m < 0x1p-1000) m *= 0x1p100, e -= 100;      /* subnormal doubles */
  while (m >= 0x1.6a09e667f3bcdp+0) m *= 0.5, e++;
  while (m < 0x1.6a09e667f3bcdp-1) m *= 2.0, e--;
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, p = 0.0;
  for (int k = 27; k >= 3; k -= 2) p = (p + 1.0 / k) * s2;
  double lm = 2.0 * s + 2.0 * s * p;
  const double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;
  return (e * ln2_hi + lm) + e * ln2_lo;
}

TN_WASM_LIBC float logf(float x) { return (float)log((double)x); }
