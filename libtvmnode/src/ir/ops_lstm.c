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
 *
 * SVDF (TFLite's, whose state is a variable tensor) is two operators here
 * and plain ones around them: nn.svdf_state gives the next state, each
 * filter's row of the last `memory` features moved one step older with
 * the new feature as its newest entry (its kernel may write over the
 * state it reads, so the code generator updates a stateful model's state
 * in place), and nn.svdf_time the filters' dot products with their time
 * weights, summed over each unit's `rank` filters.
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

/* ---- SVDF ------------------------------------------------------------------ */

typedef TnIrSvdfTimeAttrs SvdfTimeAttrs;

static const TnFieldDesc svdf_time_fields[] = {
    TN_FIELD_INT_D(SvdfTimeAttrs, rank, 1, 0,
                   "filters per unit, summed (the filters divide by it)"),
    TN_FIELD_INT_D(SvdfTimeAttrs, zero_point, 0, 0,
                   "the integer state's zero point, subtracted first"),
};

static bool svdf_dtype(DLDataType t) {
  return tn__ir_dtype_eq(t, kF32) || tn__ir_dtype_eq(t, kI16) ||
         tn__ir_dtype_eq(t, kI8);
}

/* state [batch, filters, memory] of float32, int16 or int8. */
static const TnIrTensorType *svdf_state_arg(const char *op,
                                            TnObject *const *types) {
  const TnIrTensorType *s = tn__ir_tensor_arg(op, types, 0, "state");
  if (s == NULL) return NULL;
  char buf[32];
  if (!svdf_dtype(s->dtype))
    return tn__ir_arg_error(op, 0, "state", types[0], "expected float32, "
                            "int16 or int8, got %s",
                            type_name(s->dtype, buf, sizeof buf)), NULL;
  const int64_t *d = tn__ir_dims(s);
  if (tn__ir_ndim(s) != 3 || d[0] < 1 || d[1] < 1 || d[2] < 1)
    return tn__ir_arg_error(op, 0, "state", types[0], "expected shape "
                            "[batch, filters, memory], every extent "
                            "positive"), NULL;
  return s;
}

static TnObject *infer_svdf_state(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *s = svdf_state_arg(op, types);
  if (s == NULL) return NULL;
  const int64_t *d = tn__ir_dims(s);
  if (!arg_of(op, types, 1, "feature", s->dtype, (int64_t[]){d[0], d[1]}, 2))
    return NULL;
  return tn_ir_tensor_type(d, 3, s->dtype);
}

static TnObject *infer_svdf_time(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs) {
  (void)n;
  const SvdfTimeAttrs *a = (const SvdfTimeAttrs *)attrs;
  const TnIrTensorType *s = svdf_state_arg(op, types);
  if (s == NULL) return NULL;
  if (a == NULL)
    return tn_error_raise_in(TN_ERR_TYPE, op, "needs ir.SvdfTimeAttrs"),
           NULL;
  const int64_t *d = tn__ir_dims(s);
  if (!arg_of(op, types, 1, "weights_time", s->dtype,
              (int64_t[]){d[1], d[2]}, 2))
    return NULL;
  bool fl = tn__ir_dtype_eq(s->dtype, kF32);
  int64_t lo = tn__ir_dtype_eq(s->dtype, kI8) ? -128 : -32768,
          hi = -lo - 1;
  if (a->rank < 1 || d[1] % a->rank)
    return tn_error_raise_in(TN_ERR_VALUE, op, "attribute 'rank' must divide the %" PRId64
                           " filters, got %" PRId64, d[1], a->rank), NULL;
  if (fl ? a->zero_point != 0 : a->zero_point < lo || a->zero_point > hi)
    return tn_error_raise_in(TN_ERR_VALUE, op, "attribute 'zero_point' must be %s, got %"
                           PRId64, fl ? "0 for a float32 state"
                                      : "in the state's range",
                           a->zero_point), NULL;
  return tn_ir_tensor_type((int64_t[]){d[0], d[1] / a->rank}, 2,
                           fl ? kF32 : kI32);
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
  TN__IR_ATTRS(SvdfTimeAttrs, "ir.SvdfTimeAttrs", svdf_time_fields);
  tn__ir_op_define("nn.svdf_state", "state,feature", NULL, TN_OP_OPAQUE,
                   infer_svdf_state,
                   "an SVDF's next state: each filter's row of past "
                   "features [batch, filters, memory] moved one step older, "
                   "the feature [batch, filters] its newest entry");
  tn__ir_op_define("nn.svdf_time", "state,weights_time", "ir.SvdfTimeAttrs",
                   TN_OP_OPAQUE, infer_svdf_time,
                   "an SVDF's time filter: each filter's row of the state "
                   "(less zero_point) dotted with its weights_time row, "
                   "summed over each unit's rank filters; float32, or "
                   "int32 for an int16 or int8 state");
}
