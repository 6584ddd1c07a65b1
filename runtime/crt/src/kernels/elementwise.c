/*
 * elementwise.c: the elementwise kernels of the crt: broadcasting binary
 * operators (float32 and int32), unary operators, clip, cast between every
 * pair of element types, and bias_add. They are memory bound, so the whole
 * design is about keeping the innermost loop a plain loop over contiguous
 * memory that a compiler vectorises: the operator is chosen once per row
 * (never per element), a broadcast is first reduced to as few dims as the
 * strides allow, and the common stride patterns of a row (both dense, one
 * side a scalar) get loops of their own. Outer dims are walked row by row
 * with an odometer, so multi-index arithmetic is paid per row only. Hot
 * loops are written with EACH (eight elements spelled out per iteration):
 * gcc's -O2 vectoriser does not take a plain loop that needs a run-time
 * trip-count or alias check, but does take those eight statements; and
 * kernels that may run in place dispatch on in == out to a single-pointer
 * loop, since restrict would be false there.
 * Integer ADD, SUB, MUL and NEGATIVE wrap modulo 2^32 (computed unsigned, so
 * there is no undefined behaviour); integer DIV fails with
 * TN_CRT_INVALID_ARGUMENT on a zero divisor and TN_CRT_OVERFLOW on
 * INT32_MIN / -1. On an error the output's contents are unspecified.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "unroll.h"


/* ------------------------------------------------------------------------ */
/* Broadcast normalisation and the row walk                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  int32_t ndim;
  int32_t dims[TN_CRT_MAX_DIMS];
  int32_t ls[TN_CRT_MAX_DIMS], rs[TN_CRT_MAX_DIMS];
  int32_t rows; /* product of all dims but the last */
} Shape;

/* Drops unit dims and merges neighbours whose strides stay linear in both
 * operands, so a dense-dense or scalar-dense call becomes one long row
 * whatever shape the caller described. */
static TnCrtStatus normalise(const TnCrtBroadcast *b, Shape *s) {
  if (b->ndim < 1 || b->ndim > TN_CRT_MAX_DIMS) return TN_CRT_INVALID_ARGUMENT;
  int64_t total = 1;
  int32_t n = 0;
  for (int32_t d = 0; d < b->ndim; d++) {
    int32_t e = b->dims[d];
    if (e <= 0) return TN_CRT_INVALID_ARGUMENT;
    total *= e;
    if (total > INT32_MAX) return TN_CRT_OVERFLOW;
    if (e == 1) continue;
    int32_t l = b->lhs_strides[d], r = b->rhs_strides[d];
    if (n > 0 && (int64_t)s->ls[n - 1] == (int64_t)l * e &&
        (int64_t)s->rs[n - 1] == (int64_t)r * e) {
      s->dims[n - 1] *= e;
      s->ls[n - 1] = l, s->rs[n - 1] = r;
      continue;
    }
    s->dims[n] = e, s->ls[n] = l, s->rs[n] = r;
    n++;
  }
  if (n == 0) s->dims[0] = 1, s->ls[0] = 0, s->rs[0] = 0, n = 1;
  s->ndim = n;
  s->rows = 1; /* no int64 division: that is a library call on a Cortex-M */
  for (int32_t d = 0; d < n - 1; d++) s->rows *= s->dims[d];
  return TN_CRT_OK;
}

/* Position of the next row: bumps the odometer over dims [0, ndim-1). */
static void next_row(const Shape *s, int32_t *idx, ptrdiff_t *lo,
                     ptrdiff_t *ro) {
  for (int32_t d = s->ndim - 2; d >= 0; d--) {
    *lo += s->ls[d], *ro += s->rs[d];
    if (++idx[d] < s->dims[d]) return;
    *lo -= (ptrdiff_t)s->ls[d] * s->dims[d];
    *ro -= (ptrdiff_t)s->rs[d] * s->dims[d];
    idx[d] = 0;
  }
}

/* One row, out[i] = F(a[i*as], b[i*bs]), with the stride patterns that
 * matter spelled out so each is a vectorisable loop. */
#define ROW_LOOPS(T, F)                                                   \
  do {                                                                    \
    if (as == 1 && bs == 1) {                                             \
      EACH(n, i, o[i] = F(a[i], b[i]));                                   \
    } else if (as == 0 && bs == 1) {                                      \
      const T x_ = a[0];                                                  \
      EACH(n, i, o[i] = F(x_, b[i]));                                     \
    } else if (as == 1 && bs == 0) {                                      \
      const T y_ = b[0];                                                  \
      EACH(n, i, o[i] = F(a[i], y_));                                     \
    } else {                                                              \
      for (int32_t i = 0; i < n; i++)                                     \
        o[i] = F(a[(ptrdiff_t)i * as], b[(ptrdiff_t)i * bs]);             \
    }                                                                     \
  } while (0)

#define ADD_(x, y) ((x) + (y))
#define SUB_(x, y) ((x) - (y))
#define MUL_(x, y) ((x) * (y))
#define DIV_(x, y) ((x) / (y))
#define MAX_(x, y) ((x) > (y) ? (x) : (y))
#define MIN_(x, y) ((x) < (y) ? (x) : (y))
/* int32 wrap-around arithmetic without signed overflow. */
#define IADD_(x, y) ((int32_t)((uint32_t)(x) + (uint32_t)(y)))
#define ISUB_(x, y) ((int32_t)((uint32_t)(x) - (uint32_t)(y)))
#define IMUL_(x, y) ((int32_t)((uint32_t)(x) * (uint32_t)(y)))

static void row_f32(TnCrtBinaryOp op, int32_t n, const float *restrict a,
                    ptrdiff_t as, const float *restrict b, ptrdiff_t bs,
                    float *restrict o) {
  switch (op) {
    case TN_CRT_ADD: ROW_LOOPS(float, ADD_); break;
    case TN_CRT_SUB: ROW_LOOPS(float, SUB_); break;
    case TN_CRT_MUL: ROW_LOOPS(float, MUL_); break;
    case TN_CRT_DIV: ROW_LOOPS(float, DIV_); break;
    case TN_CRT_MAX: ROW_LOOPS(float, MAX_); break;
    case TN_CRT_MIN: ROW_LOOPS(float, MIN_); break;
  }
}

/* Integer division cannot vectorise anyway, so it checks as it goes. */
static TnCrtStatus row_div_i32(int32_t n, const int32_t *restrict a,
                               ptrdiff_t as, const int32_t *restrict b,
                               ptrdiff_t bs, int32_t *restrict o) {
  for (int32_t i = 0; i < n; i++) {
    int32_t x = a[(ptrdiff_t)i * as], y = b[(ptrdiff_t)i * bs];
    if (y == 0) return TN_CRT_INVALID_ARGUMENT;
    if (y == -1 && x == INT32_MIN) return TN_CRT_OVERFLOW;
    o[i] = x / y;
  }
  return TN_CRT_OK;
}

static TnCrtStatus row_i32(TnCrtBinaryOp op, int32_t n,
                           const int32_t *restrict a, ptrdiff_t as,
                           const int32_t *restrict b, ptrdiff_t bs,
                           int32_t *restrict o) {
  switch (op) {
    case TN_CRT_ADD: ROW_LOOPS(int32_t, IADD_); break;
    case TN_CRT_SUB: ROW_LOOPS(int32_t, ISUB_); break;
    case TN_CRT_MUL: ROW_LOOPS(int32_t, IMUL_); break;
    case TN_CRT_DIV: return row_div_i32(n, a, as, b, bs, o);
    case TN_CRT_MAX: ROW_LOOPS(int32_t, MAX_); break;
    case TN_CRT_MIN: ROW_LOOPS(int32_t, MIN_); break;
  }
  return TN_CRT_OK;
}

/* A switch, not a range test: an enum may be unsigned or short (the ARM
 * EABI), and a range test then draws a type-limits warning. */
static int valid_binary_op(TnCrtBinaryOp op) {
  switch (op) {
    case TN_CRT_ADD:
    case TN_CRT_SUB:
    case TN_CRT_MUL:
    case TN_CRT_DIV:
    case TN_CRT_MAX:
    case TN_CRT_MIN:
      return 1;
  }
  return 0;
}

TnCrtStatus tn_crt_binary_f32(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                              const float *lhs, const float *rhs,
                              float *out) {
  if (!b || !lhs || !rhs || !out || !valid_binary_op(op))
    return TN_CRT_INVALID_ARGUMENT;
  Shape s;
  TnCrtStatus st = normalise(b, &s);
  if (st != TN_CRT_OK) return st;
  int32_t idx[TN_CRT_MAX_DIMS] = {0};
  int32_t n = s.dims[s.ndim - 1];
  ptrdiff_t as = s.ls[s.ndim - 1], bs = s.rs[s.ndim - 1], lo = 0, ro = 0;
  for (int32_t r = 0; r < s.rows; r++, out += n) {
    row_f32(op, n, lhs + lo, as, rhs + ro, bs, out);
    next_row(&s, idx, &lo, &ro);
  }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_binary_i32(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                              const int32_t *lhs, const int32_t *rhs,
                              int32_t *out) {
  if (!b || !lhs || !rhs || !out || !valid_binary_op(op))
    return TN_CRT_INVALID_ARGUMENT;
  Shape s;
  TnCrtStatus st = normalise(b, &s);
  if (st != TN_CRT_OK) return st;
  int32_t idx[TN_CRT_MAX_DIMS] = {0};
  int32_t n = s.dims[s.ndim - 1];
  ptrdiff_t as = s.ls[s.ndim - 1], bs = s.rs[s.ndim - 1], lo = 0, ro = 0;
  for (int32_t r = 0; r < s.rows; r++, out += n) {
    st = row_i32(op, n, lhs + lo, as, rhs + ro, bs, out);
    if (st != TN_CRT_OK) return st;
    next_row(&s, idx, &lo, &ro);
  }
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Unary, clip, bias_add (all may run in place)                               */
/* ------------------------------------------------------------------------ */

/* NAME(n, x, y, p0, p1): y[i] = EXPR of v = x[i] (and p0, p1), with x and
 * y restrict; NAME_inplace the same on one array. MAP picks one. */
#define DEFINE_MAP(NAME, T, EXPR)                                           \
  static void NAME(int32_t n, const T *restrict x, T *restrict y, T p0,     \
                   T p1) {                                                  \
    (void)p0, (void)p1;                                                     \
    EACH(n, i, const T v = x[i]; y[i] = (EXPR));                            \
  }                                                                         \
  static void NAME##_inplace(int32_t n, T *x, T p0, T p1) {                 \
    (void)p0, (void)p1;                                                     \
    EACH(n, i, const T v = x[i]; x[i] = (EXPR));                            \
  }
#define MAP(NAME, n, in, out, p0, p1)                                       \
  do {                                                                      \
    if ((const void *)(in) == (const void *)(out))                          \
      NAME##_inplace(n, out, p0, p1);                                       \
    else                                                                    \
      NAME(n, in, out, p0, p1);                                             \
  } while (0)

/* One exp of -|x| serves both signs (1/(1+e) or e/(1+e)), so no exp ever
 * overflows and the tails keep their relative precision. */
static float sigmoid(float x) {
  float e = expf(x < 0.0f ? x : -x); /* not fabsf: a call when freestanding */
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* min(max(v, lo), hi) exactly as the header states: lo > hi gives hi,
 * and a NaN stays NaN rather than becoming a bound. */
static inline float clip1_f32(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
static inline int32_t clip1_i32(int32_t v, int32_t lo, int32_t hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

DEFINE_MAP(neg_f32, float, -v)
DEFINE_MAP(relu_f32, float, v < 0.0f ? 0.0f : v) /* NaN stays NaN */
DEFINE_MAP(clip_f32, float, clip1_f32(v, p0, p1))
DEFINE_MAP(add_f32, float, v + p0)
DEFINE_MAP(neg_i32, int32_t, ISUB_(0, v)) /* -INT32_MIN wraps to itself */
DEFINE_MAP(relu_i32, int32_t, v < 0 ? 0 : v)
DEFINE_MAP(clip_i32, int32_t, clip1_i32(v, p0, p1))
DEFINE_MAP(add_i32, int32_t, IADD_(v, p0))

TnCrtStatus tn_crt_unary_f32(TnCrtUnaryOp op, int32_t n, const float *in,
                             float *out) {
  if (n <= 0 || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  switch (op) {
    case TN_CRT_NEGATIVE:
      MAP(neg_f32, n, in, out, 0.0f, 0.0f);
      return TN_CRT_OK;
    case TN_CRT_RELU:
      MAP(relu_f32, n, in, out, 0.0f, 0.0f);
      return TN_CRT_OK;
    /* the math library calls dominate these: plain loops */
    case TN_CRT_EXP:
      for (int32_t i = 0; i < n; i++) out[i] = expf(in[i]);
      return TN_CRT_OK;
    case TN_CRT_SIGMOID:
      for (int32_t i = 0; i < n; i++) out[i] = sigmoid(in[i]);
      return TN_CRT_OK;
    case TN_CRT_TANH:
      for (int32_t i = 0; i < n; i++) out[i] = tanhf(in[i]);
      return TN_CRT_OK;
  }
  return TN_CRT_INVALID_ARGUMENT;
}

TnCrtStatus tn_crt_unary_i32(TnCrtUnaryOp op, int32_t n, const int32_t *in,
                             int32_t *out) {
  if (n <= 0 || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  switch (op) {
    case TN_CRT_NEGATIVE:
      MAP(neg_i32, n, in, out, 0, 0);
      return TN_CRT_OK;
    case TN_CRT_RELU:
      MAP(relu_i32, n, in, out, 0, 0);
      return TN_CRT_OK;
    case TN_CRT_EXP:
    case TN_CRT_SIGMOID:
    case TN_CRT_TANH:
      return TN_CRT_UNSUPPORTED;
  }
  return TN_CRT_INVALID_ARGUMENT;
}

TnCrtStatus tn_crt_clip_f32(int32_t n, const float *in, float lo, float hi,
                            float *out) {
  if (n <= 0 || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  MAP(clip_f32, n, in, out, lo, hi);
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_clip_i32(int32_t n, const int32_t *in, int32_t lo,
                            int32_t hi, int32_t *out) {
  if (n <= 0 || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  MAP(clip_i32, n, in, out, lo, hi);
  return TN_CRT_OK;
}

/* y[c] = x[c] + b[c]: the NHWC bias_add row (inner == 1). */
#define DEFINE_ADD_VEC(NAME, T, ADD)                                        \
  static void NAME(int32_t n, const T *restrict x, const T *restrict b,     \
                   T *restrict y) {                                         \
    EACH(n, i, y[i] = ADD(x[i], b[i]));                                     \
  }                                                                         \
  static void NAME##_inplace(int32_t n, T *restrict x,                      \
                             const T *restrict b) {                         \
    EACH(n, i, x[i] = ADD(x[i], b[i]));                                     \
  }
DEFINE_ADD_VEC(add_vec_f32, float, ADD_)
DEFINE_ADD_VEC(add_vec_i32, int32_t, IADD_)

#define BIAS_ADD(T, SFX)                                                    \
  do {                                                                      \
    if (outer <= 0 || channels <= 0 || inner <= 0 || !in || !bias || !out)  \
      return TN_CRT_INVALID_ARGUMENT;                                       \
    if ((int64_t)outer * channels * inner > INT32_MAX)                      \
      return TN_CRT_OVERFLOW;                                               \
    const int inplace = (const void *)in == (const void *)out;              \
    for (int32_t o = 0; o < outer; o++) {                                   \
      const T *x = in + (ptrdiff_t)o * channels * inner;                    \
      T *y = out + (ptrdiff_t)o * channels * inner;                         \
      if (inner == 1) {                                                     \
        if (inplace)                                                        \
          add_vec_##SFX##_inplace(channels, y, bias);                       \
        else                                                                \
          add_vec_##SFX(channels, x, bias, y);                              \
        continue;                                                           \
      }                                                                     \
      for (int32_t c = 0; c < channels; c++, x += inner, y += inner)        \
        MAP(add_##SFX, inner, x, y, bias[c], 0);                            \
    }                                                                       \
    return TN_CRT_OK;                                                       \
  } while (0)

TnCrtStatus tn_crt_bias_add_f32(int32_t outer, int32_t channels,
                                int32_t inner, const float *in,
                                const float *bias, float *out) {
  BIAS_ADD(float, f32);
}

TnCrtStatus tn_crt_bias_add_i32(int32_t outer, int32_t channels,
                                int32_t inner, const int32_t *in,
                                const int32_t *bias, int32_t *out) {
  BIAS_ADD(int32_t, i32);
}

/* ------------------------------------------------------------------------ */
/* Cast                                                                       */
/* ------------------------------------------------------------------------ */

/*
 * Each integer target has three converters: from an integer (any width,
 * widened to int64 and saturated), from float and from double (NaN to 0,
 * then saturate against the powers of two that bound the type, which are
 * exact in both float types, and only then the C conversion, which
 * truncates and is now defined). float sources stay in float, since
 * double is software on a Cortex-M4. _Generic picks the converter from the
 * source expression's type, so one loop macro serves all 64 pairs.
 */
static inline int64_t sat64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* LIM: 2^(bits-1), or 2^bits for unsigned; LO: the type's minimum. */
#define INT_TARGET(NAME, T, MIN, MAX, LO, LIM)                  \
  static inline T NAME##_from_i(int64_t v) {                    \
    return (T)sat64(v, MIN, MAX);                               \
  }                                                             \
  static inline T NAME##_from_f(float x) {                      \
    if (isnan(x)) return 0;                                     \
    if (x >= (float)(LIM)) return MAX;                          \
    if (x <= (float)(LO)) return MIN;                           \
    return (T)x;                                                \
  }                                                             \
  static inline T NAME##_from_d(double x) {                     \
    if (isnan(x)) return 0;                                     \
    if (x >= (double)(LIM)) return MAX;                         \
    if (x <= (double)(LO)) return MIN;                          \
    return (T)x;                                                \
  }

INT_TARGET(i8, int8_t, INT8_MIN, INT8_MAX, -128.0, 128.0)
INT_TARGET(u8, uint8_t, 0, UINT8_MAX, 0.0, 256.0)
INT_TARGET(i16, int16_t, INT16_MIN, INT16_MAX, -32768.0, 32768.0)
INT_TARGET(i32, int32_t, INT32_MIN, INT32_MAX, -2147483648.0, 2147483648.0)
INT_TARGET(i64, int64_t, INT64_MIN, INT64_MAX, -9223372036854775808.0,
           9223372036854775808.0)

#define PICK_(NAME, v)                                                      \
  _Generic((v), float: NAME##_from_f, double: NAME##_from_d,                \
           default: NAME##_from_i)(v)
#define TO_F32(v) ((float)(v))
#define TO_F64(v) ((double)(v))
#define TO_BOOL(v) ((uint8_t)((v) != 0))
#define TO_I8(v) PICK_(i8, v)
#define TO_U8(v) PICK_(u8, v)
#define TO_I16(v) PICK_(i16, v)
#define TO_I32(v) PICK_(i32, v)
#define TO_I64(v) PICK_(i64, v)
/* A bool byte other than 0 or 1 still reads as true. */
#define LOAD_PLAIN(s, i) ((s)[i])
#define LOAD_BOOL(s, i) ((int32_t)((s)[i] != 0))

#define CAST_CASE(TAG, DT, CONV)                                           \
  case TAG: {                                                               \
    DT *restrict o = out;                                                   \
    for (int32_t i = 0; i < n; i++) o[i] = CONV(LOAD(s, i));                \
    return TN_CRT_OK;                                                       \
  }

#define CAST_FROM(NAME, ST)                                                 \
  static TnCrtStatus NAME(TnCrtDType to, int32_t n, const ST *restrict s,   \
                          void *restrict out) {                             \
    switch (to) {                                                           \
      CAST_CASE(TN_CRT_F32, float, TO_F32)                                  \
      CAST_CASE(TN_CRT_I32, int32_t, TO_I32)                                \
      CAST_CASE(TN_CRT_I8, int8_t, TO_I8)                                   \
      CAST_CASE(TN_CRT_U8, uint8_t, TO_U8)                                  \
      CAST_CASE(TN_CRT_I64, int64_t, TO_I64)                                \
      CAST_CASE(TN_CRT_F64, double, TO_F64)                                 \
      CAST_CASE(TN_CRT_I16, int16_t, TO_I16)                                \
      CAST_CASE(TN_CRT_BOOL, uint8_t, TO_BOOL)                              \
    }                                                                       \
    return TN_CRT_INVALID_ARGUMENT;                                         \
  }

#define LOAD LOAD_PLAIN
CAST_FROM(cast_from_f32, float)
CAST_FROM(cast_from_i32, int32_t)
CAST_FROM(cast_from_i8, int8_t)
CAST_FROM(cast_from_u8, uint8_t)
CAST_FROM(cast_from_i64, int64_t)
CAST_FROM(cast_from_f64, double)
CAST_FROM(cast_from_i16, int16_t)
#undef LOAD
#define LOAD LOAD_BOOL
CAST_FROM(cast_from_bool, uint8_t)
#undef LOAD

TnCrtStatus tn_crt_cast(TnCrtDType from, TnCrtDType to, int32_t n,
                        const void *in, void *out) {
  if (n <= 0 || !in || !out) return TN_CRT_INVALID_ARGUMENT;
  switch (from) {
    case TN_CRT_F32: return cast_from_f32(to, n, in, out);
    case TN_CRT_I32: return cast_from_i32(to, n, in, out);
    case TN_CRT_I8: return cast_from_i8(to, n, in, out);
    case TN_CRT_U8: return cast_from_u8(to, n, in, out);
    case TN_CRT_I64: return cast_from_i64(to, n, in, out);
    case TN_CRT_F64: return cast_from_f64(to, n, in, out);
    case TN_CRT_I16: return cast_from_i16(to, n, in, out);
    case TN_CRT_BOOL: return cast_from_bool(to, n, in, out);
  }
  return TN_CRT_INVALID_ARGUMENT;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(binary_f32, TnCrtCallBinary) {
  return tn_crt_binary_f32((TnCrtBinaryOp)p->op, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(binary_i32, TnCrtCallBinary) {
  return tn_crt_binary_i32((TnCrtBinaryOp)p->op, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(unary_f32, TnCrtCallUnary) {
  return tn_crt_unary_f32((TnCrtUnaryOp)p->op, p->n, in[0], out);
}
TN_CRT_CALL(unary_i32, TnCrtCallUnary) {
  return tn_crt_unary_i32((TnCrtUnaryOp)p->op, p->n, in[0], out);
}
TN_CRT_CALL(clip_f32, TnCrtCallClipF32) {
  return tn_crt_clip_f32(p->n, in[0], p->lo, p->hi, out);
}
TN_CRT_CALL(clip_i32, TnCrtCallClip) {
  return tn_crt_clip_i32(p->n, in[0], p->lo, p->hi, out);
}
TN_CRT_CALL(cast, TnCrtCallCast) {
  return tn_crt_cast((TnCrtDType)p->from, (TnCrtDType)p->to, p->n, in[0],
                     out);
}
TN_CRT_CALL(bias_add_f32, TnCrtCallAxis) {
  return tn_crt_bias_add_f32(p->outer, p->channels, p->inner, in[0], in[1],
                             out);
}
TN_CRT_CALL(bias_add_i32, TnCrtCallAxis) {
  return tn_crt_bias_add_i32(p->outer, p->channels, p->inner, in[0], in[1],
                             out);
}

/* TFLite's float LEAKY_RELU: x where x > 0, else x * alpha; out may be in. */
TN_CRT_CALL(leaky_relu_f32, TnCrtCallLeakyRelu) {
  const float *x = in[0];
  float *y = out;
  if (x == NULL || y == NULL || p->n < 0) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < p->n; i++) y[i] = x[i] > 0 ? x[i] : x[i] * p->alpha;
  return TN_CRT_OK;
}
