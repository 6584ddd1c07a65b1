/*
 * ops_lstm.c: the recurrent operators TFLite models bring,
 * UNIDIRECTIONAL_SEQUENCE_LSTM as nn.lstm (float32) and qnn.lstm (int8 data
 * and weights with int32 bias, or int16 data with int8 weights and int64
 * bias; int16 cell state). The IR is functional while the LSTM has
 * state: the hidden and cell state are arguments (the importer passes the
 * module's states) and the new values are results. A call has one result,
 * chosen by `emit`: "sequence" is every step's hidden state, whose last
 * step is the new hidden state; "cell" is the final cell state. The four
 * gates' weights come stacked, in TFLite's order (input, forget, cell,
 * output): weight [4, units, input], recurrent_weight [4, units, units],
 * bias [4, units].
 */
#include "ir/ops_lstm.h"

#include <inttypes.h>
#include <math.h>

typedef TnIrLstmAttrs LstmAttrs;

static const TnFieldDesc lstm_fields[] = {
    TN_FIELD_STR_D(LstmAttrs, emit, "sequence", 0,
                   "sequence (every step's hidden state) or cell (the "
                   "final cell state)"),
    TN_FIELD_BOOL_D(LstmAttrs, time_major, false, 0,
                    "data is [steps, batch, input] (else [batch, steps, "
                    "input])"),
    TN_FIELD_FLOAT_D(LstmAttrs, cell_clip, 0.0, 0,
                     "> 0: clip the cell state to [-cell_clip, cell_clip]"),
};

static const DLDataType kF32 = {kDLFloat, 32, 1}, kI32 = {kDLInt, 32, 1},
                        kI16 = {kDLInt, 16, 1}, kI8 = {kDLInt, 8, 1},
                        kI64 = {kDLInt, 64, 1};

static const char *type_name(DLDataType t, char *buf, size_t n) {
  tn__dtype_text(t, buf, n);
  return buf;
}

/* Argument i: of dtype `want` and the given dims (-1: any extent). */
static const TnIrTensorType *arg_of(const char *op, TnObject *const *types,
                                    int32_t i, const char *role,
                                    DLDataType want, const int64_t *dims,
                                    int32_t nd) {
  const TnIrTensorType *t = tn__ir_tensor_arg(op, types, i, role);
  if (t == NULL) return NULL;
  char buf[32];
  if (!tn__ir_dtype_eq(t->dtype, want))
    return tn__ir_arg_error(op, i, role, types[i], "expected %s",
                            type_name(want, buf, sizeof buf)), NULL;
  bool ok = tn__ir_ndim(t) == nd;
  for (int32_t d = 0; ok && d < nd; d++)
    ok = dims[d] < 0 || tn__ir_dims(t)[d] == dims[d];
  if (!ok) {
    GString *s = g_string_new("[");
    for (int32_t d = 0; d < nd; d++) {
      if (d) g_string_append(s, ", ");
      if (dims[d] < 0) g_string_append(s, "?");
      else g_string_append_printf(s, "%" PRId64, dims[d]);
    }
    g_string_append(s, "]");
    tn__ir_arg_error(op, i, role, types[i], "expected shape %s", s->str);
    g_string_free(s, TRUE);
    return NULL;
  }
  return t;
}

/* Both operators: data, weight, recurrent_weight, bias, hidden, cell, of
 * dtypes data_t, data_t's weights (w_t), bias_t and cell_t. */
static TnObject *infer_lstm(const char *op, TnObject *const *types,
                            TnObject *attrs, DLDataType data_t,
                            DLDataType bias_t, DLDataType cell_t) {
  const LstmAttrs *a = (const LstmAttrs *)attrs;
  const char *emit = a->emit ? ((const TnStringObj *)a->emit)->data : "";
  bool cell = strcmp(emit, "cell") == 0;
  if (!cell && strcmp(emit, "sequence") != 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "emit '%s' is not sequence or cell",
                      emit);
    return NULL;
  }
  if (!(a->cell_clip >= 0.0) || isinf(a->cell_clip)) {
    tn_error_raise_in(TN_ERR_VALUE, op, "cell_clip must be a finite number "
                      ">= 0, got %g", a->cell_clip);
    return NULL;
  }
  const int64_t any3[3] = {-1, -1, -1};
  const TnIrTensorType *d = arg_of(op, types, 0, "data", data_t, any3, 3);
  if (d == NULL) return NULL;
  const int64_t *dd = tn__ir_dims(d);
  int64_t batch = a->time_major ? dd[1] : dd[0], in = dd[2];
  const TnIrTensorType *w = arg_of(op, types, 1, "weight", data_t.code ==
                                   kDLFloat ? data_t : kI8,
                                   (int64_t[]){4, -1, in}, 3);
  if (w == NULL) return NULL;
  int64_t units = tn__ir_dims(w)[1];
  if (!arg_of(op, types, 2, "recurrent_weight", w->dtype,
              (int64_t[]){4, units, units}, 3) ||
      !arg_of(op, types, 3, "bias", bias_t, (int64_t[]){4, units}, 2) ||
      !arg_of(op, types, 4, "hidden", data_t, (int64_t[]){batch, units}, 2) ||
      !arg_of(op, types, 5, "cell", cell_t, (int64_t[]){batch, units}, 2))
    return NULL;
  if (batch < 1 || units < 1 || in < 1 || dd[0] < 1 || dd[1] < 1)
    return tn__ir_arg_error(op, 0, "data", types[0], "every extent must be "
                            "positive"), NULL;
  if (cell) return tn_ir_tensor_type((int64_t[]){batch, units}, 2, cell_t);
  return tn_ir_tensor_type((int64_t[]){dd[0], dd[1], units}, 3, data_t);
}

static TnObject *infer_nn_lstm(const char *op, TnObject *const *types,
                               int32_t n, TnObject *attrs) {
  (void)n;
  return infer_lstm(op, types, attrs, kF32, kF32, kF32);
}

/* The quantization arguments after the six tensors: scalars, except the
 * eight weight scales (input weights' four, then the recurrent ones). */
static TnObject *infer_qnn_lstm(const char *op, TnObject *const *types,
                                int32_t n, TnObject *attrs) {
  (void)n;
  static const char *roles[] = {"input_scale", "input_zero_point",
                                "weight_scale", "hidden_scale",
                                "hidden_zero_point", "cell_scale"};
  for (int32_t i = 0; i < 6; i++) {
    bool zp = i == 1 || i == 4;
    const int64_t eight = 8;
    if (!arg_of(op, types, 6 + i, roles[i], zp ? kI32 : kF32, &eight,
                i == 2 ? 1 : 0))
      return NULL;
  }
  /* int16 data is TFLite's 16x8 form, with an int64 bias */
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (tn__ir_dtype_eq(d->dtype, kI16))
    return infer_lstm(op, types, attrs, kI16, kI64, kI16);
  return infer_lstm(op, types, attrs, kI8, kI32, kI16);
}

void tn__ir_ops_lstm_init(void) {
  TN__IR_ATTRS(LstmAttrs, "ir.LstmAttrs", lstm_fields);
  tn__ir_op_define("nn.lstm", "data,weight,recurrent_weight,bias,hidden,cell",
                   "ir.LstmAttrs", TN_OP_OPAQUE, infer_nn_lstm,
                   "a float32 LSTM over a sequence (TFLite's "
                   "UNIDIRECTIONAL_SEQUENCE_LSTM): every step's hidden state "
                   "or the final cell state");
  tn__ir_op_define("qnn.lstm",
                   "data,weight,recurrent_weight,bias,hidden,cell,input_scale,"
                   "input_zero_point,weight_scale,hidden_scale,"
                   "hidden_zero_point,cell_scale",
                   "ir.LstmAttrs", TN_OP_OPAQUE, infer_qnn_lstm,
                   "an int8 (int32 bias) or int16 (int8 weights, int64 "
                   "bias) LSTM with int16 cell state, TFLite Micro's "
                   "arithmetic: every step's hidden state (in the hidden "
                   "state's quantization) or the final cell state");
}
