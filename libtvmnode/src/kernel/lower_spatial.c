/*
 * lower_spatial.c: the third part of the lowering table (lower.c registers
 * it with its own and lower_nn.c's rows): the spatial and normalising
 * operators of ir/ops_image.c. Each is a single kernel form of the crt whose
 * parameters come from the attributes and the static shapes.
 */
#include "kernel/lower_internal.h"
#include "ir/ops_image.h"

/* ---- image.resize2d ---------------------------------------------------------- */

static int lower_resize(const TnKernArgs *a, TnKernCall *k) {
  const TnIrTensorType *t = a->types[0];
  const TnIrResizeAttrs *x =
      ATTRS(a->op, a->attrs, TnIrResizeAttrs, "ir.Resize2DAttrs");
  if (x == NULL) return -1;
  bool linear = strcmp(attr_text(x->method), "linear") == 0;
  int32_t esz = (int32_t)((t->dtype.bits + 7) / 8);
  if (linear && !is(t->dtype, kF32) && !is(t->dtype, kI8))
    return no_kernel(a, "bilinear resizing takes float32 or int8");
  if (!linear && (t->dtype.lanes != 1 || (esz != 1 && esz != 2 && esz != 4 &&
                                          esz != 8)))
    return no_kernel(a, "elements of 1, 2, 4 or 8 bytes only");
  if (check_size(a, numel(t)) || check_size(a, numel(a->out))) return -1;
  TnCrtResize *p = !linear ? KERNEL_USE(k, resize_nearest, 0)
                   : is(t->dtype, kF32) ? KERNEL_USE(k, resize_bilinear_f32, 0)
                                        : KERNEL_USE(k, resize_bilinear_s8, 0);
  const int64_t *d = tn__ir_dims(t), *o = tn__ir_dims(a->out);
  p->batch = (int32_t)d[0], p->in_h = (int32_t)d[1], p->in_w = (int32_t)d[2];
  p->channels = (int32_t)d[3];
  p->out_h = (int32_t)o[1], p->out_w = (int32_t)o[2];
  p->align_corners = x->align_corners;
  p->half_pixel_centers = x->half_pixel_centers;
  p->elem_size = esz;
  reads(k, 1);
  return 0;
}

/* ---- the table ---------------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"image.resize2d", {lower_resize}},
};

const TnLowerRow *tn__lower_spatial_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
