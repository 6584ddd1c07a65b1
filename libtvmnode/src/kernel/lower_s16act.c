/*
 * lower_s16act.c: the int16 forms of qnn.sigmoid, qnn.tanh and qnn.softmax
 * (TFLite's 16x8 mode), which lower_nn.c hands int16 calls to. Everything
 * TFLite Micro computes at prepare is computed here, on the host, in the
 * same precision: the input multiplier and shift of LOGISTIC and TANH
 * (logistic_common.cc, tanh.cc), and SOFTMAX's multiplier and its two
 * interpolated tables (softmax_common.cc, LUTPopulate in float). The
 * kernels are the crt's act_s16.c.
 */
#include "kernel/lower_internal.h"

static const DLDataType kI16 = {kDLInt, 16, 1};

/* The (input scale, input zero point, output scale, output zero point) of
 * a qnn unary call, arguments 1 to 4. */
static int qparams(const TnKernArgs *a, double q[4]) {
  static const char *roles[] = {"input_scale", "input_zero_point",
                                "output_scale", "output_zero_point"};
  for (int32_t i = 0; i < 4; i++) {
    int64_t n;
    if (tn__lower_const_values(a, 1 + i, roles[i], &q[i], 1, &n)) return -1;
  }
  return check_size(a, numel(a->out));
}

/* TFLite's CheckedLog2: log2(x) rounded to *out, and whether x is within
 * 1e-3 of that power of two in the log (all in float, as TFLite). */
static bool checked_log2(float x, int32_t *out) {
  const float l = logf(x) * (1.0f / logf(2.0f));
  const float r = roundf(l);
  *out = (int32_t)r;
  return fabsf(l - r) < 1e-3f;
}

/* LOGISTIC's and TANH's input scaling: a scale of 2^-12 (LOGISTIC) or
 * 2^-12 or 2^-11 (TANH) by 3 * 2^k exactly; any other doubled until it
 * exceeds 16383.5 (TFLite's loop, at most 31 doublings) and truncated. */
static int act_params(const TnKernArgs *a, bool tanh_, TnCrtActS16 *p) {
  double q[4];
  if (qparams(a, q)) return -1;
  if (q[1] != 0 || q[3] != 0)
    return no_kernel(a, "the int16 logistic and tanh need zero points 0 "
                     "(TFLite's)");
  int32_t out_log2;
  if (!checked_log2((float)q[2], &out_log2) || out_log2 != -15)
    return no_kernel(a, "the int16 logistic and tanh need output scale "
                     "2^-15 (TFLite's)");
  const float s = (float)q[0];
  int32_t in_log2;
  bool pot = checked_log2(s, &in_log2);
  const int32_t k = 12 + in_log2;
  pot = pot && (k == 0 || (tanh_ && k == 1));
  if (pot) {
    p->input_multiplier = 3 << k;
    p->input_left_shift = 0;
  } else {
    double m = (double)s * 4096.0 * 3.0;
    int32_t shift = 0;
    while (m <= 32767.0 / 2.0 && shift <= 30) {
      shift++;
      m *= 2.0;
    }
    if (!(m <= 32767.0) || m < 1.0)
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "input scale %g is "
                               "outside what TFLite's int16 %s handles "
                               "(2^-31 to 2.6)", (double)s,
                               tanh_ ? "tanh" : "logistic");
    p->input_multiplier = (int32_t)m;
    p->input_left_shift = shift;
  }
  p->n = (int32_t)numel(a->out);
  return 0;
}

int tn__lower_act_s16(const TnKernArgs *a, TnKernCall *k, bool tanh_) {
  if (!is(a->types[0]->dtype, kI16) || !is(a->out->dtype, kI16))
    return no_kernel(a, "int16 in and out");
  TnCrtActS16 *p = tanh_ ? KERNEL_USE(k, tanh_s16, 0)
                         : KERNEL_USE(k, sigmoid_s16, 0);
  if (act_params(a, tanh_, p)) return -1;
  reads(k, 1);
  return 0;
}

/* TFLite's LUTPopulate for int16: 512 segments over the input's range,
 * each start sampled and lowered by half the error its interpolation
 * makes at the segment's middle, and the range's end; float throughout. */
static void lut16(float in_scale, int32_t in_zp, float out_scale,
                  int32_t out_zp, float (*f)(float), int16_t lut[513]) {
  const float in_min = in_scale * (float)(INT16_MIN - in_zp);
  const float in_max = in_scale * (float)(INT16_MAX - in_zp);
  const float out_min = out_scale * (float)(INT16_MIN - out_zp);
  const float out_max = out_scale * (float)(INT16_MAX - out_zp);
  const float step = (in_max - in_min) / 512.0f, half = step / 2.0f;
  const float inv = 65536.0f / (out_max - out_min);
  for (int32_t i = 0; i < 512; i++) {
    const float x = in_min + (float)i * step;
    const float v = f(x), mid = f(x + half);
    const float next = f(in_min + (float)(i + 1) * step);
    const float sample = roundf(v * inv);
    const float interp = roundf((next * inv + roundf(v * inv)) / 2.0f);
    const float bias = roundf((interp - roundf(mid * inv)) / 2.0f);
    lut[i] = (int16_t)fminf(fmaxf(sample - bias, -32768.0f), 32767.0f);
  }
  lut[512] = (int16_t)fminf(fmaxf(roundf(f(in_max) * inv), -32768.0f),
                            32767.0f);
}

static float exp_of(float x) { return expf(x); }
static float one_over_one_plus(float x) { return 1.0f / (1.0f + x); }

int tn__lower_softmax_s16(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI16) || !is(a->out->dtype, kI16))
    return no_kernel(a, "int16 in and out");
  double q[4];
  if (qparams(a, q)) return -1;
  const float s_out = (float)q[2];
  if (q[1] != 0 || q[3] != 0 ||
      fabsf(s_out - 1.0f / 32768) > 0.001f * 1.0f / 32768)
    return no_kernel(a, "the int16 softmax needs zero points 0 and output "
                     "scale 1/32768 (TFLite's)");
  const TnIrQSoftmaxAttrs *x =
      ATTRS(a->op, a->attrs, TnIrQSoftmaxAttrs, "ir.QnnSoftmaxAttrs");
  if (x == NULL) return -1;
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t);
  int64_t n = nd ? tn__ir_dims(t)[nd - 1] : 1, total = numel(t);
  if (n > 65536)
    return no_kernel(a, "rows of at most 65536 (the int16 softmax's sum)");
  TnCrtSoftmaxS16 *p = KERNEL_USE(k, softmax_s16, 0);
  p->n = (int32_t)n;
  p->outer = (int32_t)(n ? total / n : 0);
  /* differences scaled so that [-65535, 0] spans [-10, 0] */
  const double m = (double)(float)q[0] * (double)(float)x->beta /
                   (10.0 / 65535.0);
  int32_t mult, shift;
  if (tn_crt_quantize_multiplier(m, &mult, &shift) != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "beta %g with input scale "
                             "%g cannot be represented", x->beta, q[0]);
  p->input_multiplier = mult;
  p->input_left_shift = shift;
  const float range = (float)(INT16_MAX - INT16_MIN);
  lut16(10.0f / range, INT16_MAX, 2.0f / range, 0, exp_of, p->exp_lut);
  lut16(1.0f / range, INT16_MIN, 2.0f / range, 0, one_over_one_plus,
        p->recip_lut);
  reads(k, 1);
  return 0;
}
