/*
 * qlinear_ort.c: onnxruntime's QLinearAdd and QLinearMul (com.microsoft),
 * bit for bit with its CPU kernels on x86-64, for int8 and for uint8
 * stored as int8 less 128.
 *
 * onnxruntime computes these in float32, not in TFLite's fixed point.
 * Add (MLAS's AVX2 kernel): with ratios r = scale / out_scale and a fixed
 * part out_zp - fma(r_a, zp_a, r_b * zp_b), each output is
 * fma(a, r_a, fma(b, r_b, fixed)) rounded half to even and saturated,
 * where `a` is the operand onnxruntime walks and `b` the other: lhs
 * walks unless lhs is one value over the row (then rhs does, and the
 * products swap places). Mul (its SSE2 kernel): (a - zp_a) * (b - zp_b)
 * exactly in integers, times (lhs_scale * rhs_scale) / out_scale, plus
 * out_zp, each step rounded to float32. The fused multiply-add is exact
 * here in portable C (a double sum rounded to odd, then to float). The
 * average pools and the softmax are onnxruntime's too (see kernels.h).
 * Every other
 * float32 step goes through double, which rounds a float
 * sum, product or quotient exactly as float32 arithmetic does: so no
 * compiler contraction or target FMA can change a result.
 */
#include <stddef.h>
#include <stdint.h>

#include "binary_walk.h"
#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

/* float32 a * b + c with one rounding. */
static float fma_f32(float a, float b, float c) {
  double p = (double)a * (double)b; /* exact: 48 significant bits */
  double s = p + (double)c;
  double t = s - p;
  double err = (p - (s - t)) + ((double)c - t); /* exact sum - s */
  if (err != 0) {
    union {
      double d;
      uint64_t u;
    } v;
    v.d = s;
    if ((v.u & 1u) == 0) /* round to odd: the neighbour toward the sum */
      v.u = ((err > 0) == (s > 0)) ? v.u + 1u : v.u - 1u;
    s = v.d;
  }
  return (float)s;
}

static float mul_f32(float a, float b) { return (float)((double)a * b); }
static float add_f32(float a, float b) { return (float)((double)a + b); }
static float div_f32(float a, float b) { return (float)((double)a / b); }

/* x86's float -> int32 conversion (round half to even; NaN and values
 * out of range give INT32_MIN), then saturation to [lo, hi]. */
static int32_t round_sat(float v, int32_t lo, int32_t hi) {
  int64_t q;
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) {
    q = INT32_MIN;
  } else {
    float f = floorf(v);
    float d = v - f; /* exact */
    q = (int64_t)f;
    if (d > 0.5f || (d == 0.5f && (q & 1))) q++;
  }
  return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

typedef struct {
  float r_l, r_r;     /* add: scale / out_scale; mul: r_l the product's */
  float fixed_lr;     /* add: the fixed part with lhs walking */
  float fixed_rl;     /* add: with rhs walking */
  int32_t zl, zr, zo; /* the model's zero points */
  int32_t off, lo, hi, scalar;
} Ort;

static void ort_prepare(const TnCrtQLinearOrt *p, int add, Ort *o) {
  o->off = p->offset;
  o->zl = p->lhs_zp, o->zr = p->rhs_zp, o->zo = p->out_zp;
  o->lo = p->offset ? 0 : -128;
  o->hi = p->offset ? 255 : 127;
  o->scalar = p->scalar;
  if (add) {
    o->r_l = div_f32(p->lhs_scale, p->out_scale);
    o->r_r = div_f32(p->rhs_scale, p->out_scale);
    float zo = (float)o->zo, zl = (float)o->zl, zr = (float)o->zr;
    o->fixed_lr = add_f32(zo, -fma_f32(o->r_l, zl, mul_f32(o->r_r, zr)));
    o->fixed_rl = add_f32(zo, -fma_f32(o->r_r, zr, mul_f32(o->r_l, zl)));
  } else {
    o->r_l = div_f32(mul_f32(p->lhs_scale, p->rhs_scale), p->out_scale);
    o->r_r = 0, o->fixed_lr = o->fixed_rl = 0;
  }
}

static void add_row(const void *pp, const void *lv, int32_t ls, const void *rv,
                    int32_t rs, int32_t n, void *ov) {
  const Ort *o = (const Ort *)pp;
  const int8_t *l = (const int8_t *)lv, *r = (const int8_t *)rv;
  int8_t *out = (int8_t *)ov;
  /* onnxruntime walks rhs when lhs is a single value here */
  const int rhs_walks = o->scalar == 1 || (ls == 0 && o->scalar != 2);
  for (int32_t i = 0; i < n; i++) {
    float a = (float)(l[i * ls] + o->off), b = (float)(r[i * rs] + o->off);
    float v = rhs_walks ? fma_f32(b, o->r_r, fma_f32(a, o->r_l, o->fixed_rl))
                        : fma_f32(a, o->r_l, fma_f32(b, o->r_r, o->fixed_lr));
    out[i] = (int8_t)(round_sat(v, o->lo, o->hi) - o->off);
  }
}

static void mul_row(const void *pp, const void *lv, int32_t ls, const void *rv,
                    int32_t rs, int32_t n, void *ov) {
  const Ort *o = (const Ort *)pp;
  const int8_t *l = (const int8_t *)lv, *r = (const int8_t *)rv;
  int8_t *out = (int8_t *)ov;
  for (int32_t i = 0; i < n; i++) {
    int32_t prod = (l[i * ls] + o->off - o->zl) * (r[i * rs] + o->off - o->zr);
    float v = add_f32(mul_f32((float)prod, o->r_l), (float)o->zo);
    out[i] = (int8_t)(round_sat(v, o->lo, o->hi) - o->off);
  }
}

static TnCrtStatus check(const TnCrtQLinearOrt *p) {
  if (p == NULL || (p->offset != 0 && p->offset != 128) ||
      !(p->lhs_scale > 0) || !(p->rhs_scale > 0) || !(p->out_scale > 0))
    return TN_CRT_INVALID_ARGUMENT;
  return TN_CRT_OK;
}

static TnCrtStatus run(const TnCrtQLinearOrt *p, const TnCrtBroadcast *b,
                       const int8_t *lhs, const int8_t *rhs, int8_t *out,
                       int add) {
  TnCrtStatus st = check(p);
  if (st != TN_CRT_OK) return st;
  Ort o;
  ort_prepare(p, add, &o);
  return tn__crt_binary_walk(b, 1, lhs, rhs, out, add ? add_row : mul_row,
                             &o);
}

TnCrtStatus tn_crt_qlinear_add_ort(const TnCrtQLinearOrt *p,
                                   const TnCrtBroadcast *b, const int8_t *lhs,
                                   const int8_t *rhs, int8_t *out) {
  return run(p, b, lhs, rhs, out, 1);
}

TnCrtStatus tn_crt_qlinear_mul_ort(const TnCrtQLinearOrt *p,
                                   const TnCrtBroadcast *b, const int8_t *lhs,
                                   const int8_t *rhs, int8_t *out) {
  return run(p, b, lhs, rhs, out, 0);
}

TnCrtStatus tn_crt_qlinear_avg_pool_ort(const TnCrtQLinearOrt *p,
                                        const TnCrtPool2d *g, int32_t global,
                                        const int8_t *in, int8_t *out) {
  if (check(p) != TN_CRT_OK || g == NULL || in == NULL || out == NULL ||
      g->k_h < 1 || g->k_w < 1 || g->stride_h < 1 || g->stride_w < 1)
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t off = p->offset, lo = off ? 0 : -128, hi = lo + 255;
  const int32_t zx = p->lhs_zp, zy = p->out_zp;
  const float sx = p->lhs_scale, sy = p->out_scale;
  const int32_t size = g->in_h * g->in_w;
  const float gscale = div_f32(sx, mul_f32(sy, (float)size));
  for (int32_t n = 0; n < g->batch; n++)
    for (int32_t c = 0; c < g->channels; c++) {
      const int8_t *x = in + n * g->in_strides[0] + c * g->in_strides[3];
      int8_t *y = out + n * g->out_strides[0] + c * g->out_strides[3];
      if (global) {
        int32_t acc = -zx * size;
        for (int32_t h = 0; h < g->in_h; h++)
          for (int32_t w = 0; w < g->in_w; w++)
            acc += x[h * g->in_strides[1] + w * g->in_strides[2]] + off;
        float v = mul_f32((float)acc, gscale);
        y[0] = (int8_t)(round_sat(v, lo - zy, hi - zy) + zy - off);
        continue;
      }
      for (int32_t oh = 0; oh < g->out_h; oh++)
        for (int32_t ow = 0; ow < g->out_w; ow++) {
          int32_t h0 = oh * g->stride_h - g->pad_top, h1 = h0 + g->k_h;
          int32_t w0 = ow * g->stride_w - g->pad_left, w1 = w0 + g->k_w;
          h1 = h1 < g->in_h ? h1 : g->in_h, h0 = h0 > 0 ? h0 : 0;
          w1 = w1 < g->in_w ? w1 : g->in_w, w0 = w0 > 0 ? w0 : 0;
          float sum = 0.0f;
          for (int32_t h = h0; h < h1; h++)
            for (int32_t w = w0; w < w1; w++) {
              int32_t q = x[h * g->in_strides[1] + w * g->in_strides[2]] + off;
              sum = add_f32(sum, mul_f32(sx, (float)(q - zx)));
            }
          int32_t count = g->count_include_pad ? g->k_h * g->k_w
                                               : (h1 - h0) * (w1 - w0);
          float v = div_f32(sum, (float)count);
          v = add_f32(div_f32(v, sy), (float)zy);
          y[oh * g->out_strides[1] + ow * g->out_strides[2]] =
              (int8_t)(round_sat(v, lo, hi) - off);
        }
    }
  return TN_CRT_OK;
}

TnCrtStatus tn_crt_qlinear_softmax_ort(const TnCrtQSoftmaxOrt *p,
                                       const int8_t *in, int8_t *out) {
  if (p == NULL || in == NULL || out == NULL || p->outer < 0 || p->n < 1 ||
      p->inner < 1 || !(p->out_scale > 0) ||
      (p->offset != 0 && p->offset != 128))
    return TN_CRT_INVALID_ARGUMENT;
  const float yinv = floorf(div_f32(1.0f, p->out_scale));
  for (int32_t o = 0; o < p->outer; o++)
    for (int32_t i = 0; i < p->inner; i++) {
      const int8_t *x = in + (ptrdiff_t)o * p->n * p->inner + i;
      int8_t *y = out + (ptrdiff_t)o * p->n * p->inner + i;
      int32_t max = x[0];
      for (int32_t d = 1; d < p->n; d++)
        max = x[d * p->inner] > max ? x[d * p->inner] : max;
      float sum = 0.0f;
      for (int32_t d = 0; d < p->n; d++)
        sum = add_f32(sum, p->table[max - x[d * p->inner]]);
      for (int32_t d = 0; d < p->n; d++) {
        float v = div_f32(mul_f32(p->table[max - x[d * p->inner]], yinv), sum);
        int32_t q = round_sat(v, INT32_MIN, INT32_MAX) + p->out_zp;
        /* saturated above (the result is never below the zero point) */
        int32_t hi = p->offset ? 255 : 127;
        y[d * p->inner] = (int8_t)((q > hi ? hi : q) - p->offset);
      }
    }
  return TN_CRT_OK;
}

TN_CRT_CALL(qlinear_add_ort, TnCrtCallQLinearOrt) {
  return tn_crt_qlinear_add_ort(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qlinear_mul_ort, TnCrtCallQLinearOrt) {
  return tn_crt_qlinear_mul_ort(&p->q, &p->b, in[0], in[1], out);
}
TN_CRT_CALL(qlinear_avg_pool_ort, TnCrtCallQLinearPoolOrt) {
  return tn_crt_qlinear_avg_pool_ort(&p->q, &p->g, p->global, in[0], out);
}
TN_CRT_CALL(qlinear_softmax_ort, TnCrtQSoftmaxOrt) {
  return tn_crt_qlinear_softmax_ort(p, in[0], out);
}
