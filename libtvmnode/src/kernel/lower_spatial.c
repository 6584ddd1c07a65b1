/*
 * lower_spatial.c: the third part of the lowering table (lower.c registers
 * it with its own and lower_nn.c's rows): the spatial and normalising
 * operators of ir/ops_image.c. Each is a single kernel form of the crt whose
 * parameters come from the attributes and the static shapes.
 */
#include "kernel/lower_internal.h"
#include "ir/ops_image.h"

static const DLDataType kI16 = {kDLInt, 16, 1};

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

/* ---- batch_matmul ---------------------------------------------------------------- */

/* The strides of one operand of a batch_matmul: its batch dims aligned to
 * the output's last ones (0 where it has extent 1), and its matrix axes. */
static void bmm_operand(const TnIrTensorType *t, int64_t out_nd, bool adj,
                        bool rhs, int32_t bstrides[4], int32_t *s_outer,
                        int32_t *s_k) {
  int64_t nd = tn__ir_ndim(t);
  const int64_t *d = tn__ir_dims(t);
  int64_t st = d[nd - 1] * d[nd - 2];
  for (int64_t i = 0; i < 4; i++) bstrides[i] = 0;
  for (int64_t o = out_nd - 3; o >= 0; o--) {
    int64_t i = o - (out_nd - nd);
    int64_t e = i >= 0 ? d[i] : 1;
    bstrides[o] = e == 1 ? 0 : (int32_t)st;
    st *= e;
  }
  /* a: [M, K] (adj: [K, M]); b: [K, N] (adj: [N, K]) */
  int32_t last = (int32_t)d[nd - 1];
  bool outer_last = rhs ? !adj : adj;
  *s_outer = outer_last ? 1 : last;
  *s_k = outer_last ? last : 1;
}

static int bmm_geom(const TnKernArgs *a, const TnIrBatchMatmulAttrs *x,
                    TnCrtBatchMatmul *g) {
  const TnIrTensorType *o = a->out;
  int64_t nd = tn__ir_ndim(o);
  if (check_size(a, numel(a->types[0])) || check_size(a, numel(a->types[1])) ||
      check_size(a, numel(o)))
    return -1;
  const int64_t *od = tn__ir_dims(o);
  const TnIrTensorType *ta = a->types[0];
  int64_t na = tn__ir_ndim(ta);
  memset(g, 0, sizeof *g);
  g->ndim = nd > 2 ? (int32_t)(nd - 2) : 1;
  g->dims[0] = 1;
  for (int64_t d = 0; d < nd - 2; d++) g->dims[d] = (int32_t)od[d];
  g->m = (int32_t)od[nd - 2], g->n = (int32_t)od[nd - 1];
  g->k = (int32_t)(x->adj_x ? tn__ir_dims(ta)[na - 2]
                            : tn__ir_dims(ta)[na - 1]);
  bmm_operand(ta, nd, x->adj_x, false, g->a_strides, &g->a_stride_m,
              &g->a_stride_k);
  bmm_operand(a->types[1], nd, x->adj_y, true, g->b_strides, &g->b_stride_n,
              &g->b_stride_k);
  return 0;
}

static int lower_batch_matmul(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, "float32 only");
  const TnIrBatchMatmulAttrs *x =
      ATTRS(a->op, a->attrs, TnIrBatchMatmulAttrs, "ir.BatchMatmulAttrs");
  if (x == NULL) return -1;
  TnCrtBatchMatmul *p = KERNEL_USE(k, bmm_f32, 0);
  if (bmm_geom(a, x, p)) return -1;
  k->macs = numel(a->out) * p->k;
  reads(k, 2);
  return 0;
}

/* A scalar constant argument, as an integer. */
static int const_int(const TnKernArgs *a, int32_t i, const char *role,
                     int32_t *out) {
  TnObject *t = a->consts[i];
  if (t == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) must be a "
                             "constant to lower this call", i, role);
  const DLTensor *dl = tn_tensor_dltensor(t);
  if (!is(dl->dtype, kI32))
    return tn_error_raise_in(TN_ERR_TYPE, a->op, "argument %d (%s) must be "
                             "int32", i, role);
  int32_t v = *(const int32_t *)((const char *)dl->data + dl->byte_offset);
  if (v < -128 || v > 127)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d (%s) is %d, "
                             "outside the int8 range", i, role, v);
  *out = v;
  return 0;
}

static int lower_qnn_batch_matmul(const TnKernArgs *a, TnKernCall *k) {
  const bool s16 = is(a->types[0]->dtype, kI16);
  if (!s16 && (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8)))
    return no_kernel(a, "int8 or int16 operands only");
  const TnIrBatchMatmulAttrs *x =
      ATTRS(a->op, a->attrs, TnIrBatchMatmulAttrs, "ir.BatchMatmulAttrs");
  if (x == NULL) return -1;
  if (s16) {
    TnCrtBatchMatmul g;
    return bmm_geom(a, x, &g) ? -1 : tn__lower_bmm_s16(a, k, &g);
  }
  int32_t za, zb;
  if (const_int(a, 2, "a_zero_point", &za) ||
      const_int(a, 3, "b_zero_point", &zb))
    return -1;
  TnCrtCallBmmS32 *p = KERNEL_USE(k, bmm_s8_s32, 0);
  if (bmm_geom(a, x, &p->g)) return -1;
  p->a_offset = -za, p->b_offset = -zb;
  k->macs = numel(a->out) * p->g.k;
  reads(k, 2);
  return 0;
}

/* ---- conv2d_transpose --------------------------------------------------------------- */

static int tconv_geom(const TnKernArgs *a, TnCrtConvTranspose *g) {
  const TnIrConvTransposeAttrs *x = ATTRS(a->op, a->attrs,
                                          TnIrConvTransposeAttrs,
                                          "ir.Conv2DTransposeAttrs");
  if (x == NULL) return -1;
  if (check_size(a, numel(a->types[0])) || check_size(a, numel(a->types[1])) ||
      check_size(a, numel(a->out)))
    return -1;
  int64_t st[2] = {1, 1}, pad[2] = {0, 0};
  int32_t ns = tn__ir_attr_ints(a->attrs, "strides", st, 2, a->op);
  int32_t np = ns < 0 ? -1 : tn__ir_attr_ints(a->attrs, "padding", pad, 2,
                                              a->op);
  if (np < 0) return -1;
  if (ns == 1) st[1] = st[0];
  if (np == 1) pad[1] = pad[0];
  const int64_t *d = tn__ir_dims(a->types[0]), *w = tn__ir_dims(a->types[1]),
                *o = tn__ir_dims(a->out);
  memset(g, 0, sizeof *g);
  g->batch = (int32_t)d[0], g->in_h = (int32_t)d[1], g->in_w = (int32_t)d[2];
  g->in_c = (int32_t)d[3];
  g->out_h = (int32_t)o[1], g->out_w = (int32_t)o[2], g->out_c = (int32_t)o[3];
  g->k_h = (int32_t)w[1], g->k_w = (int32_t)w[2];
  g->stride_h = (int32_t)st[0], g->stride_w = (int32_t)st[1];
  g->pad_top = (int32_t)pad[0], g->pad_left = (int32_t)pad[1];
  return 0;
}

static int64_t tconv_macs(const TnCrtConvTranspose *g) {
  return (int64_t)g->batch * g->in_h * g->in_w * g->in_c * g->k_h * g->k_w *
         g->out_c;
}

static int lower_conv2d_transpose(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, "float32 only");
  TnCrtConvTranspose *p = KERNEL_USE(k, conv2d_transpose_f32, 0);
  if (tconv_geom(a, p)) return -1;
  k->macs = tconv_macs(p);
  reads(k, 2);
  return 0;
}

static int lower_qnn_conv2d_transpose(const TnKernArgs *a, TnKernCall *k) {
  if (is(a->types[0]->dtype, kI16)) {
    TnCrtConvTranspose g;
    return tconv_geom(a, &g) ? -1 : tn__lower_tconv_s16(a, k, &g);
  }
  if (!is(a->types[0]->dtype, kI8) || !is(a->types[1]->dtype, kI8))
    return no_kernel(a, "int8 data and weight (or int16 data) only");
  int32_t zx, zw;
  if (const_int(a, 2, "input_zero_point", &zx)) return -1;
  /* TFLite's int8 kernel has no weight offset: its filters are symmetric */
  TnObject *kz = a->consts[3];
  if (kz == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument 3 "
                             "(kernel_zero_point) must be a constant to "
                             "lower this call");
  const DLTensor *dl = tn_tensor_dltensor(kz);
  int64_t nz = 1;
  for (int32_t i = 0; i < dl->ndim; i++) nz *= dl->shape[i];
  for (int64_t i = 0; i < nz; i++) {
    zw = ((const int32_t *)((const char *)dl->data + dl->byte_offset))[i];
    if (zw != 0)
      return no_kernel(a, "the weight's zero point must be 0 (TFLite's "
                       "symmetric int8 filters)");
  }
  TnCrtCallConvTransposeS32 *p = KERNEL_USE(k, conv2d_transpose_s8_s32, 0);
  if (tconv_geom(a, &p->g)) return -1;
  p->input_offset = -zx;
  k->macs = tconv_macs(&p->g);
  reads(k, 2);
  return 0;
}

/* ---- l2_normalize, log_softmax ------------------------------------------------------ */

/* Rows of the last axis: [outer, n]. */
static int rows(const TnKernArgs *a, int32_t *outer, int32_t *n) {
  const TnIrTensorType *t = a->types[0];
  int64_t nd = tn__ir_ndim(t), last = nd ? tn__ir_dims(t)[nd - 1] : 1;
  if (check_size(a, numel(t))) return -1;
  if (last == 0 || numel(t) == 0) return no_kernel(a, "an empty tensor");
  *n = (int32_t)last, *outer = (int32_t)(numel(t) / last);
  return 0;
}

static int lower_l2_normalize(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, "float32 only");
  const TnIrL2NormalizeAttrs *x =
      ATTRS(a->op, a->attrs, TnIrL2NormalizeAttrs, "ir.L2NormalizeAttrs");
  if (x == NULL) return -1;
  TnCrtCallRowsF32 *p = KERNEL_USE(k, l2_normalize_f32, 0);
  if (rows(a, &p->outer, &p->n)) return -1;
  p->eps = (float)x->eps;
  reads(k, 1);
  return 0;
}

static int lower_log_softmax(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kF32)) return no_kernel(a, "float32 only");
  TnCrtCallRowsF32 *p = KERNEL_USE(k, log_softmax_f32, 0);
  if (rows(a, &p->outer, &p->n)) return -1;
  reads(k, 1);
  return 0;
}

/* The (scale, zero point) pair at arguments i, i + 1 must be TFLite's fixed
 * output quantization of the operator. */
static int fixed_output(const TnKernArgs *a, int32_t i, float scale,
                        int32_t zp, const char *why) {
  TnObject *s = a->consts[i];
  int32_t z;
  if (s == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument %d "
                             "(output_scale) must be a constant to lower "
                             "this call", i);
  const DLTensor *dl = tn_tensor_dltensor(s);
  float v = *(const float *)((const char *)dl->data + dl->byte_offset);
  if (const_int(a, i + 1, "output_zero_point", &z)) return -1;
  if (v != scale || z != zp) return no_kernel(a, why);
  return 0;
}

static int lower_qnn_l2_normalize(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  int32_t zx;
  if (const_int(a, 2, "input_zero_point", &zx) ||
      fixed_output(a, 3, 1.0f / 128, 0, "the int8 L2 normalisation needs "
                   "output scale 1/128 and zero point 0 (TFLite's)"))
    return -1;
  TnCrtCallRowsS8 *p = KERNEL_USE(k, l2_normalize_s8, 0);
  if (rows(a, &p->outer, &p->n)) return -1;
  p->input_zero_point = zx;
  reads(k, 1);
  return 0;
}

static int lower_qnn_log_softmax(const TnKernArgs *a, TnKernCall *k) {
  if (!is(a->types[0]->dtype, kI8)) return no_kernel(a, "int8 only");
  if (fixed_output(a, 3, 16.0f / 256, 127, "the int8 log-softmax needs "
                   "output scale 16/256 and zero point 127 (TFLite's)"))
    return -1;
  TnObject *s = a->consts[1];
  if (s == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "argument 1 (input_scale) "
                             "must be a constant to lower this call");
  const DLTensor *dl = tn_tensor_dltensor(s);
  float scale = *(const float *)((const char *)dl->data + dl->byte_offset);
  TnCrtCallLogSoftmaxS8 *p = KERNEL_USE(k, log_softmax_s8, 0);
  if (rows(a, &p->outer, &p->n)) return -1;
  TnCrtStatus st = tn_crt_log_softmax_s8_params(scale, &p->s);
  if (st != TN_CRT_OK)
    return tn_error_raise_in(TN_ERR_VALUE, a->op, "input scale %g cannot be "
                             "represented (%s)", scale,
                             tn_crt_status_doc(st));
  reads(k, 1);
  return 0;
}

/* ---- the table ---------------------------------------------------------------------- */

static const TnLowerRow g_table[] = {
    {"image.resize2d", {lower_resize}},
    {"nn.batch_matmul", {lower_batch_matmul}},
    {"qnn.batch_matmul", {lower_qnn_batch_matmul}},
    {"nn.conv2d_transpose", {lower_conv2d_transpose}},
    {"qnn.conv2d_transpose", {lower_qnn_conv2d_transpose}},
    {"nn.l2_normalize", {lower_l2_normalize}},
    {"qnn.l2_normalize", {lower_qnn_l2_normalize}},
    {"nn.log_softmax", {lower_log_softmax}},
    {"qnn.log_softmax", {lower_qnn_log_softmax}},
};

const TnLowerRow *tn__lower_spatial_table(size_t *n) {
  *n = G_N_ELEMENTS(g_table);
  return g_table;
}
