/*
 * ops_nn.h: the attribute layouts of the operators whose attributes the
 * lowering table reads (it reads them through these structs, never by
 * field name), shared by their type inference, the quantized operators,
 * constant folding and code generation. Private to the library.
 */
#ifndef TVMNODE_IR_OPS_NN_H_
#define TVMNODE_IR_OPS_NN_H_

#ifndef TN_BUILDING_LIBRARY
#error "ops_nn.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "ir/ir_internal.h"

typedef struct {
  TnObject header;
  int64_t units;
  DLDataType out_dtype;
  TnObject *weight_layout; /* "NK", "N16K4" (tn_crt_dense_s8_pack's) or
                          * "N16K1" (tn_crt_dense_f32_pack's) or "N4K4"
                          * (tn_crt_dense_s8_pack4's) */
} TnIrDenseAttrs;

typedef struct {
  TnObject header;
  bool transpose_a, transpose_b;
} TnIrMatmulAttrs;

typedef struct {
  TnObject header;
  TnAny strides, padding, dilation;
  int64_t groups, channels;
  TnAny kernel_size;
  TnObject *data_layout, *kernel_layout;
  DLDataType out_dtype;
  /* "" (as kernel_layout says), or "N16K4": a 1x1 layer's [out, in]
   * matrix as tn_crt_dense_s8_pack lays it out */
  TnObject *weight_layout;
} TnIrConv2DAttrs;

typedef struct {
  TnObject header;
  TnAny pool_size, strides, padding;
  TnObject *layout;
  bool ceil_mode, count_include_pad;
} TnIrPool2DAttrs;

typedef struct {
  TnObject header;
  TnObject *layout;
} TnIrGlobalPool2DAttrs;

typedef struct {
  TnObject header;
  int64_t axis;
} TnIrAxisAttrs;

typedef struct {
  TnObject header;
  TnAny pad_width;
  double pad_value;
} TnIrPadAttrs;

typedef struct {
  TnObject header;
  double a_min, a_max;
} TnIrClipAttrs;

typedef struct {
  TnObject header;
  double alpha;
} TnIrLeakyReluAttrs;

/* qnn.quantize */
typedef struct {
  TnObject header;
  int64_t axis;
  DLDataType out_dtype;
  TnObject *rounding; /* tn.String: AWAY (TFLite) or EVEN (ONNX) */
} TnIrQuantizeAttrs;

/* qnn.requantize */
typedef struct {
  TnObject header;
  int64_t axis;
  TnObject *rounding;
  DLDataType out_dtype;
} TnIrRequantizeAttrs;

/* qnn.softmax */
typedef struct {
  TnObject header;
  int64_t axis;
  double beta;
  DLDataType out_dtype;
} TnIrQSoftmaxAttrs;

/* mean and qnn.mean: Relay's ReduceAttrs. */
typedef struct {
  TnObject header;
  TnAny axis;
  bool keepdims, exclude;
} TnIrReduceAttrs;

/* Which axes of `data` (argument 0, of type `type`) a reduction folds,
 * from its attrs: `axis` None or empty is every axis (Relay's rule),
 * `exclude` folds the axes not listed. -1 with a TypeError naming the
 * operator for an axis out of range or listed twice. */
int tn__ir_reduce_axes(const char *op, TnObject *type,
                       const TnIrTensorType *data, const TnObject *attrs,
                       bool reduce[TN_IR_MAX_DIMS]);
/* The type of a reduction of `data` with the same dtype (mean, qnn.mean);
 * NULL with the error. */
TnObject *tn__ir_reduce_out(const char *op, TnObject *type,
                            const TnIrTensorType *data, const TnObject *attrs);

/* strided_slice resolved against `data`: for each dimension the first
 * index read, the step and the output extent (numpy's slicing: negative
 * indices count from the end, then clamp; an empty range is extent 0, and
 * begin is then 0). -1 with a TypeError naming the operator. */
int tn__ir_strided_slice_plan(const char *op, TnObject *type,
                              const TnIrTensorType *data,
                              const TnObject *attrs, int64_t *begin,
                              int64_t *stride, int64_t *out);

/* Output types of conv2d and dense for the given out dtype (shared with
 * their quantized forms, which check dtypes differently). */
TnObject *tn__ir_conv2d_out(const char *op, TnObject *const *types,
                            const TnObject *attrs, DLDataType out_dtype);
TnObject *tn__ir_dense_out(const char *op, TnObject *const *types,
                           const TnObject *attrs, DLDataType out_dtype);

/* The axes of a 4-d data layout attribute `field` (NCHW or NHWC); false
 * with a TypeError naming it otherwise. */
bool tn__ir_data_layout(const char *op, const char *field, const char *l,
                        int *n, int *c, int *h, int *w);
/* The axes of a 4-d convolution kernel layout (OIHW, HWIO or OHWI); false
 * with a TypeError naming the operator otherwise. */
bool tn__ir_kernel_layout(const char *op, const char *l, int *o, int *i,
                          int *h, int *w);
/* (top, left, bottom, right) from the "padding" attribute's 0, 1, 2 or 4
 * values; -1 with a TypeError. */
int tn__ir_padding4(const char *op, const TnObject *attrs, int64_t pad[4]);
/* A positive pair attribute (strides, dilation) with a default. Both
 * take values the kernels hold in int32 only. */
int tn__ir_pair(const char *op, const TnObject *attrs, const char *field,
                int64_t dflt, int64_t out[2]);

/* Type inference the operators of ops_math.c share: float data of any
 * shape (ops_tensor.c); two int8 operands with six scalar scales and zero
 * points, broadcast (qnn.add's); int8 data with four (qnn.sigmoid's). */
TnObject *tn__ir_infer_unary_float(const char *op, TnObject *const *types,
                                   int32_t n, TnObject *attrs);
TnObject *tn__ir_infer_qnn_binary(const char *op, TnObject *const *types,
                                  int32_t n, TnObject *attrs);
TnObject *tn__ir_infer_qnn_unary(const char *op, TnObject *const *types,
                                 int32_t n, TnObject *attrs);
/* nn.avg_pool2d's inference (data, argument 0, and ir.Pool2DAttrs). */
TnObject *tn__ir_infer_pool2d(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs);

void tn__ir_ops_tensor_init(void);
void tn__ir_ops_nn_init(void);
void tn__ir_ops_qnn_init(void);

/* argmax, argmin (ops_movement.c). */
typedef struct {
  TnObject header;
  int64_t axis;
  bool keepdims;
} TnIrArgReduceAttrs;

/* take (ops_movement.c). */
typedef struct {
  TnObject header;
  int64_t axis;
} TnIrTakeAttrs;

void tn__ir_ops_movement_init(void);

#endif /* TVMNODE_IR_OPS_NN_H_ */
