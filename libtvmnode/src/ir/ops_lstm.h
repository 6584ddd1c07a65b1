/*
 * ops_lstm.h: the attribute layout of the recurrent operators of
 * ops_lstm.c (nn.lstm, qnn.lstm, nn.svdf_time), which their lowering
 * (kernel/lower_lstm.c) reads through this struct. Private to the library.
 */
#ifndef TVMNODE_IR_OPS_LSTM_H_
#define TVMNODE_IR_OPS_LSTM_H_

#ifndef TN_BUILDING_LIBRARY
#error "ops_lstm.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "ir/ops_nn.h"

/* nn.lstm, qnn.lstm */
typedef struct {
  TnObject header;
  TnObject *emit;   /* "sequence" or "cell" */
  bool time_major;  /* data is [steps, batch, input] */
  double cell_clip; /* > 0: the cell state is clipped to +-cell_clip */
} TnIrLstmAttrs;

/* nn.svdf_time */
typedef struct {
  TnObject header;
  int64_t rank;       /* filters summed into each unit */
  int64_t zero_point; /* the integer state's zero point */
} TnIrSvdfTimeAttrs;

void tn__ir_ops_lstm_init(void);

#endif /* TVMNODE_IR_OPS_LSTM_H_ */
