/*
 * ops_image.h: the attribute layouts of the spatial and normalising
 * operators of ops_image.c (image.resize2d), which their lowering
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

void tn__ir_ops_image_init(void);

#endif /* TVMNODE_IR_OPS_IMAGE_H_ */
