/*
 * lower_lstm.c: the part of the lowering table for the recurrent operators
 * of ir/ops_lstm.c (lower.c registers it with the others). nn.lstm and
 * qnn.lstm become the crt's lstm_f32 and lstm_s8 (int8 data) or lstm_s16
 * (int16 data, TFLite's 16x8) forms; for qnn.lstm the
 * host computes TFLite Micro's effective scales once, as its LSTM's
 * Prepare does: each gate's two products go to Q3.12 (scale 2^-12, the
 * input scale times the weight scale multiplied in float first, as
 * TFLite's GetQuantizedConvolutionMultipler does), the gates' Q0.15
 * outputs (2^-15) multiply into the cell scale and the hidden scale, and
 * the cell state's tanh takes its input shift from the cell scale's power
 * of two. nn.svdf_state is the crt's svdf_state (in place over the
 * state: "out may be in"), nn.svdf_time its svdf_time_<type> forms.
 */
#include "kernel/lower_internal.h"
#include "ir/ops_lstm.h"

static const DLDataType kI16 = {kDLInt, 16, 1};

/* The sizes and options both forms share. */
static int lstm_geometry(const TnKernArgs *a, TnKernCall *k, TnCrtLstm *p) {
  const TnIrLstmAttrs *x =
      ATTRS(a->op, a->attrs, TnIrLstmAttrs, "ir.LstmAttrs");
  if (x == NULL) return -1;
  for (int32_t i = 0; i < 6; i++)
    if (check_size(a, numel(a->types[i]))) return -1;
  if (check_size(a, numel(a->out))) return -1;
  const int64_t *d = tn__ir_dims(a->types[0]);
  p->time_major = x->time_major;
  p->batch = (int32_t)(x->time_major ? d[1] : d[0]);
  p->steps = (int32_t)(x->time_major ? d[0] : d[1]);
  p->input_size = (int32_t)d[2];
  p->units = (int32_t)tn__ir_dims(a->types[1])[1];
  p->emit = strcmp(attr_text(x->emit), "cell") == 0 ? TN_CRT_LSTM_CELL
                                                     : TN_CRT_LSTM_SEQUENCE;
  p->cell_clip = (float)x->cell_clip;
  /* the final cell state may be computed over the cell state it starts
   * from (a streaming model's state, updated in place) */
  if (p->emit == TN_CRT_LSTM_CELL) k->inplace = 6;
  return 0;
}

static int lower_nn_lstm(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, NULL);
  TnCrtLstm *p = KERNEL_USE(k, lstm_f32, 0);
  if (lstm_geometry(a, k, p)) return -1;
  k->scratch = tn_crt_lstm_scratch_size(p->units, 4, 4);
  k->inplace_scratch = k->scratch;
  k->macs = 4 * (int64_t)p->batch * p->steps * p->units *
            (p->input_size + p->units);
  reads(k, 6);
  return 0;
}

/* TFLite's QuantizeMultiplier of `m` into (*mul, *shift). */
static int multiplier(const TnKernArgs *a, double m, const char *what,
                      int32_t *mul, int32_t *shift) {
  if (tn_crt_quantize_multiplier(m, mul, shift) != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "the %s scale %g cannot be "
                             "a fixed-point multiplier", what, m);
  return 0;
}

static int lower_qnn_lstm(const TnKernArgs *a, TnKernCall *k) {
  int wide = is(a->types[0]->dtype, kI16);
  if ((!wide && !is(a->types[0]->dtype, kI8)) ||
      !is(a->types[5]->dtype, kI16))
    return no_kernel(a, NULL);
  TnCrtLstm *p =
      wide ? KERNEL_USE(k, lstm_s16, 0) : KERNEL_USE(k, lstm_s8, 0);
  if (lstm_geometry(a, k, p)) return -1;
  double in_s, in_zp, w_s[8], h_s, h_zp, c_s;
  int64_t n;
  if (tn__lower_const_values(a, 6, "input_scale", &in_s, 1, &n) ||
      tn__lower_const_values(a, 7, "input_zero_point", &in_zp, 1, &n) ||
      tn__lower_const_values(a, 8, "weight_scale", w_s, 8, &n) ||
      tn__lower_const_values(a, 9, "hidden_scale", &h_s, 1, &n) ||
      tn__lower_const_values(a, 10, "hidden_zero_point", &h_zp, 1, &n) ||
      tn__lower_const_values(a, 11, "cell_scale", &c_s, 1, &n))
    return -1;
  if (!(in_s > 0) || !(h_s > 0) || !(c_s > 0))
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "the input, hidden and "
                             "cell scales must be positive");
  p->input_zero_point = (int32_t)in_zp;
  p->hidden_zero_point = (int32_t)h_zp;
  const double gate_in = 1.0 / 4096.0, gate_out = 1.0 / 32768.0;
  static const char *const gates[] = {"input gate", "forget gate",
                                      "cell gate", "output gate"};
  for (int32_t g = 0; g < 8; g++) {
    if (!(w_s[g] > 0))
      return tn_error_raise_in(TN_ERR_VALUE, a->op, "weight scale %d must be "
                               "positive", g);
    float product = (float)(g < 4 ? in_s : h_s) * (float)w_s[g];
    if (multiplier(a, (double)product / gate_in, gates[g % 4],
                   &p->fc_multiplier[g], &p->fc_shift[g]))
      return -1;
  }
  if (multiplier(a, gate_out * c_s / c_s, "forget", &p->forget_multiplier,
                 &p->forget_shift) ||
      multiplier(a, gate_out * gate_out / c_s, "input",
                 &p->input_multiplier, &p->input_shift) ||
      multiplier(a, gate_out * gate_out / h_s, "output",
                 &p->output_multiplier, &p->output_shift))
    return -1;
  /* the cell scale's power of two, rounded as TFLite's CheckedLog2 does */
  float l2 = logf((float)c_s) * (1.0f / logf(2.0f));
  int32_t shift = (int32_t)roundf(l2) + 15 - 3;
  p->cell_tanh_multiplier = shift < 0 ? 3 : 0;
  p->cell_tanh_shift = shift < 0 ? -shift : shift;
  if (p->cell_tanh_shift > 14)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "the cell scale %g is out "
                             "of the int16 tanh's range", c_s);
  double q = (double)p->cell_clip / c_s;
  p->cell_clip_q = (int32_t)(int16_t)(q < -32768.0 ? -32768.0
                                      : q > 32767.0 ? 32767.0 : q);
  k->scratch = tn_crt_lstm_scratch_size(p->units, 2, wide ? 2 : 1);
  k->inplace_scratch = k->scratch;
  k->macs = 4 * (int64_t)p->batch * p->steps * p->units *
            (p->input_size + p->units);
  reads(k, 6);
  return 0;
}

/* ---- SVDF ------------------------------------------------------------------- */

static int lower_svdf_state(const TnKernArgs *a, TnKernCall *k) {
  TnCrtSvdfState *p = KERNEL_USE(k, svdf_state, 0);
  const int64_t *d = tn__ir_dims(a->types[0]);
  if (check_size(a, numel(a->types[0]))) return -1;
  p->rows = (int32_t)(d[0] * d[1]);
  p->memory = (int32_t)d[2];
  p->elem_bytes = (int32_t)((a->types[0]->dtype.bits + 7) / 8);
  k->inplace = 1; /* "out may be in" */
  reads(k, 2);
  return 0;
}

static int lower_svdf_time(const TnKernArgs *a, TnKernCall *k) {
  const TnIrSvdfTimeAttrs *x =
      ATTRS(a->op, a->attrs, TnIrSvdfTimeAttrs, "ir.SvdfTimeAttrs");
  if (x == NULL) return -1;
  DLDataType t = a->types[0]->dtype;
  TnCrtSvdfTime *p = is(t, kF32)   ? KERNEL_USE(k, svdf_time_f32, 0)
                     : is(t, kI16) ? KERNEL_USE(k, svdf_time_s16, 0)
                     : is(t, kI8)  ? KERNEL_USE(k, svdf_time_s8, 0)
                                   : NULL;
  if (p == NULL) return no_kernel(a, NULL);
  if (check_size(a, numel(a->types[0]))) return -1;
  const int64_t *d = tn__ir_dims(a->types[0]);
  p->batch = (int32_t)d[0], p->filters = (int32_t)d[1];
  p->memory = (int32_t)d[2], p->rank = (int32_t)x->rank;
  p->zero_point = (int32_t)x->zero_point;
  k->macs = numel(a->types[0]);
  reads(k, 2);
  return 0;
}

/* ---- the table ------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"nn.lstm", {lower_nn_lstm}},
    {"qnn.lstm", {lower_qnn_lstm}},
    {"nn.svdf_state", {lower_svdf_state}},
    {"nn.svdf_time", {lower_svdf_time}},
};

const TnLowerRow *tn__lower_lstm_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
