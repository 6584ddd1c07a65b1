/*
 * ops_image.h: the attribute layouts of the spatial and normalising
 * operators of ops_image.c (image.resize2d, nn/qnn.batch_matmul and
 * nn/qnn.conv2d_transpose, nn/qnn.l2_normalize, nn/qnn.log_softmax),
 * which their lowering
 * (kernel/lower_spatial.c) reads through these structs. Private to the
 * library.
 */
#ifndef TVMNODE_IR_OPS_IMAGE_H_
#define TVMNODE_IR_OPS_IMAGE_H_

#ifndef TN_BUILDING_LIBRARY
#error "ops_image.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "ir/ops_nn.h"

/* image.resize2d */
typedef struct {
  TnObject header;
  TnAny size;       /* (out_h, out_w) */
  TnObject *method; /* "linear" or "nearest_neighbor" */
  bool align_corners, half_pixel_centers;
  TnObject *layout; /* "NHWC" */
} TnIrResizeAttrs;

/* nn.batch_matmul and qnn.batch_matmul */
typedef struct {
  TnObject header;
  bool adj_x, adj_y;
} TnIrBatchMatmulAttrs;

/* nn.conv2d_transpose and qnn.conv2d_transpose (NHWC data, OHWI weight) */
typedef struct {
  TnObject header;
  TnAny strides;     /* (sh, sw) */
  TnAny padding;     /* (top, left) */
  TnAny output_size; /* (out_h, out_w) */
} TnIrConvTransposeAttrs;

/* nn.l2_normalize */
typedef struct {
  TnObject header;
  double eps;
  int64_t axis;
} TnIrL2NormalizeAttrs;

/* The output dims of a batch_matmul of a and b (ranks 2 to 5, the batch
 * dims broadcast), into out[5]; the rank, or -1 with a TypeError naming
 * the operator and argument. */
int32_t tn__ir_batch_matmul_dims(const char *op, TnObject *const *types,
                                 const TnIrTensorType *a,
                                 const TnIrTensorType *b, bool adj_x,
                                 bool adj_y, int64_t out[5]);

void tn__ir_ops_image_init(void);

#endif /* TVMNODE_IR_OPS_IMAGE_H_ */
