/*
 * ops_image.c: the spatial operators TFLite models bring that are neither
 * convolutions nor pooling: image.resize2d (RESIZE_BILINEAR and
 * RESIZE_NEAREST_NEIGHBOR, with TFLite's align_corners and
 * half_pixel_centers flags rather than Relay's coordinate-mode strings,
 * since the kernels are TFLite's). Shapes are static: the output size is
 * an attribute.
 */
#include "ir/ops_image.h"

#include <inttypes.h>

typedef TnIrResizeAttrs ResizeAttrs;

static const TnFieldDesc resize_fields[] = {
    TN_FIELD_ANY(ResizeAttrs, size, 0, "(out_h, out_w)"),
    TN_FIELD_STR_D(ResizeAttrs, method, "linear", 0,
                   "linear or nearest_neighbor"),
    TN_FIELD_BOOL_D(ResizeAttrs, align_corners, false, 0,
                    "scale by (in - 1) / (out - 1): the corner pixels "
                    "line up"),
    TN_FIELD_BOOL_D(ResizeAttrs, half_pixel_centers, false, 0,
                    "sample at pixel centres (not with align_corners)"),
    TN_FIELD_STR_D(ResizeAttrs, layout, "NHWC", 0, "NHWC only"),
};

static const char *text(const TnObject *s) {
  return s ? ((const TnStringObj *)s)->data : "";
}

static TnObject *infer_resize(const char *op, TnObject *const *types,
                              int32_t n, TnObject *attrs) {
  (void)n;
  const ResizeAttrs *a = (const ResizeAttrs *)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  if (d == NULL) return NULL;
  if (strcmp(text(a->layout), "NHWC") != 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "layout '%s' is not supported "
                      "(NHWC only)", text(a->layout));
    return NULL;
  }
  if (tn__ir_ndim(d) != 4)
    return tn__ir_arg_error(op, 0, "data", types[0], "expected 4 dimensions "
                            "(NHWC)"), NULL;
  const char *m = text(a->method);
  if (strcmp(m, "linear") != 0 && strcmp(m, "nearest_neighbor") != 0) {
    tn_error_raise_in(TN_ERR_VALUE, op, "method '%s' is not linear or "
                      "nearest_neighbor", m);
    return NULL;
  }
  if (a->align_corners && a->half_pixel_centers) {
    tn_error_raise_in(TN_ERR_VALUE, op, "align_corners and "
                      "half_pixel_centers cannot both be set");
    return NULL;
  }
  int64_t size[2];
  int32_t ns = tn__ir_attr_ints(attrs, "size", size, 2, op);
  if (ns < 0) return NULL;
  if (ns != 2 || size[0] < 1 || size[1] < 1 || size[0] > INT32_MAX ||
      size[1] > INT32_MAX) {
    tn_error_raise_in(TN_ERR_VALUE, op, "size must be two positive extents "
                      "(out_h, out_w), got %d values", ns);
    return NULL;
  }
  int64_t out[4];
  memcpy(out, tn__ir_dims(d), sizeof out);
  out[1] = size[0], out[2] = size[1];
  return tn_ir_tensor_type(out, 4, d->dtype);
}

void tn__ir_ops_image_init(void) {
  TN__IR_ATTRS(ResizeAttrs, "ir.Resize2DAttrs", resize_fields);
  tn__ir_op_define("image.resize2d", "data", "ir.Resize2DAttrs",
                   TN_OP_INJECTIVE, infer_resize,
                   "resize the spatial axes of NHWC data to size, bilinear "
                   "or nearest neighbour, TFLite's arithmetic");
}
