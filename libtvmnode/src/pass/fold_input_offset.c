/*
 * fold_input_offset.c: the FoldInputOffset pass: an int8 layer that never
 * reads outside its input (a qnn.conv2d with no padding, any kernel,
 * stride, dilation or groups; a qnn.dense), whose weights and bias are
 * constants, gets its input zero point folded into the bias and set to 0.
 * The call nn.bias_add(qnn.conv2d(x, W, zx, zw, ...), B) becomes
 * nn.bias_add(qnn.conv2d(x, W, 0, zw, ...), B') with, per output channel
 * o, B'[o] = B[o] - zx * sum(W[o] - zw) over the channel's weights, mod
 * 2^32, since sum((x - zx) * (w - zw)) = sum(x * (w - zw)) - zx * sum(w -
 * zw) over every tap of a window that lies wholly inside the input.
 *
 * The kernels add the same int32 term on every call, mod 2^32 as TFLite's
 * accumulator wraps (the Cortex-M DSP matrix product sums its weights'
 * rows at the start of each call for it), so the compiler, which knows the
 * weights, does it once: the outputs are the same integers, and a kernel
 * given input offset 0 and a bias skips that set-up. codegen.compile runs
 * this pass for the targets whose kernels gain from it (cortex-m). Left
 * alone: a padded convolution (a tap outside the input contributes
 * nothing, which zx * sum(W) would contradict), weights or a bias that are
 * not constants, a layer without an nn.bias_add on its output channels, an
 * int32 bias only (a 16x8 layer's is int64, and has zero point 0 anyway),
 * int8 weights only, scalar zero points only, and a zero point already 0.
 *
 * The PackDenseWeights pass (below) folds a zero point the same way, for
 * the host's and the Cortex-M's dense kernels, and shares these helpers.
 */
#include "pass/pass_internal.h"

#include <inttypes.h>

#include "ir/ops_nn.h"
#include "tvmnode/crt/kernels.h"

/* A constant's dense data of dtype (code, bits) with `numel` elements, or
 * NULL. */
static const void *const_data(const TnObject *e, uint8_t code, uint8_t bits,
                              int64_t *numel) {
  if (e == NULL || !tn_object_is_instance(e, TN_IR->constant)) return NULL;
  TnObject *data = ((const TnIrConstant *)e)->data;
  DLTensor *t = tn_tensor_dltensor(data);
  int contiguous = 0;
  if (t == NULL || t->dtype.code != code || t->dtype.bits != bits ||
      t->dtype.lanes != 1 || tn_tensor_is_contiguous(data, &contiguous) ||
      !contiguous) {
    tn_error_set_raised(NULL);
    return NULL;
  }
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; i++) n *= t->shape[i];
  *numel = n;
  return (const uint8_t *)t->data + t->byte_offset;
}

/* The int32 scalar (one element) constant `e` into *v; false otherwise. */
static bool const_i32(const TnObject *e, int32_t *v) {
  int64_t n;
  const int32_t *d = const_data(e, kDLInt, 32, &n);
  if (d == NULL || n != 1) return false;
  *v = d[0];
  return true;
}

static const TnObject *call_arg(const TnIrCall *c, int64_t i) {
  return tn_array_at(c->args, i)->v_obj;
}

/* Whether the layer `base` (a qnn.conv2d or qnn.dense call) with weight w
 * reads only inside its input (see the opening comment), and then in
 * *o_axis the weight's output channel axis. */
static bool layer_ok(const TnIrCall *base, bool dense, DLTensor *w, int *o_axis) {
  if (dense) {
    *o_axis = 0; /* [N, K] */
    return w->ndim == 2;
  }
  TnAny v;
  if (tn_node_get(base->attrs, "kernel_layout", &v)) {
    tn_error_set_raised(NULL); /* not a Conv2DAttrs: not a layer it takes */
    return false;
  }
  const char *kl = "";
  if (tn_any_as_str(&v, &kl, NULL)) {
    tn_error_set_raised(NULL);
    kl = "";
  }
  int o, i, h, ww;
  const bool known = w->ndim == 4 &&
                     tn__ir_kernel_layout("qnn.conv2d", kl[0] ? kl : "OIHW",
                                          &o, &i, &h, &ww);
  tn_any_clear(&v);
  int64_t pad[4];
  if (!known || tn__ir_padding4("qnn.conv2d", base->attrs, pad)) {
    tn_error_set_raised(NULL);
    return false;
  }
  *o_axis = o;
  return pad[0] == 0 && pad[1] == 0 && pad[2] == 0 && pad[3] == 0;
}

/* The output channel axis of the layer `base` (whose call `orig_base` has
 * its type) that an nn.bias_add with attrs `battrs` adds along. */
static bool bias_on_channels(const TnIrCall *base, const TnObject *orig_base,
                             const TnObject *battrs, bool dense) {
  const TnObject *t = tn_ir_checked_type(orig_base);
  if (t == NULL || !tn__ir_is(t, TN_IR->tensor_type)) return false;
  const int64_t nd = tn__ir_ndim((const TnIrTensorType *)t);
  int64_t cax = nd - 1;
  if (!dense) {
    TnAny v;
    const char *dl = "";
    if (tn_node_get(base->attrs, "data_layout", &v)) {
      tn_error_set_raised(NULL);
      return false;
    }
    if (tn_any_as_str(&v, &dl, NULL)) {
      tn_error_set_raised(NULL);
      dl = "";
    }
    cax = strcmp(dl, "NHWC") == 0 ? 3 : 1;
    tn_any_clear(&v);
  }
  TnAny a;
  if (battrs == NULL || tn_node_get(battrs, "axis", &a)) {
    tn_error_set_raised(NULL);
    return false;
  }
  int64_t ax = a.type_index == TN_TYPE_INT ? a.v_int64 : INT64_MIN;
  tn_any_clear(&a);
  if (ax < 0) ax += nd;
  return ax == cax;
}

/* The bias `b` (n int32) plus io * sum(w + fo) per output channel of w
 * (int8, channel axis o_axis), mod 2^32, as a new constant. */
static TnObject *folded_bias(const int32_t *b, int64_t n, const int8_t *w,
                             const DLTensor *wt, int o_axis, int32_t io,
                             int32_t fo) {
  int64_t inner = 1, numel = 1;
  for (int32_t i = 0; i < wt->ndim; i++) {
    numel *= wt->shape[i];
    if (i > o_axis) inner *= wt->shape[i];
  }
  uint32_t *s = g_new0(uint32_t, n);
  for (int64_t i = 0; i < numel; i++)
    s[(i / inner) % n] += (uint32_t)w[i] + (uint32_t)fo;
  const int64_t shape[1] = {n};
  const DLDataType i32 = {kDLInt, 32, 1};
  TnObject *t = tn_tensor_empty(shape, 1, i32, wt->device);
  TnObject *c = NULL;
  if (t) {
    DLTensor *o = tn_tensor_dltensor(t);
    int32_t *ob = (int32_t *)(void *)((uint8_t *)o->data + o->byte_offset);
    for (int64_t j = 0; j < n; j++)
      ob[j] = (int32_t)((uint32_t)b[j] + (uint32_t)io * s[j]);
    c = tn_ir_constant(t);
    tn_object_release(t);
  }
  g_free(s);
  return c;
}

/* nn.bias_add(layer, bias) as the call bc with the layer base rebuilt
 * with input zero point zx, the weight w (NULL: base's own) and attrs
 * (all borrowed), or NULL (an error raised, or an argument NULL). */
static TnObject *rebuilt_biased(const TnIrCall *bc, const TnIrCall *base,
                                TnObject *w, TnObject *zx,
                                TnObject *attrs, TnObject *bias) {
  if (zx == NULL || attrs == NULL || bias == NULL) return NULL;
  TnObject *args[6];
  for (int i = 0; i < 6; i++) args[i] = (TnObject *)call_arg(base, i);
  if (w) args[1] = w;
  args[2] = zx;
  TnObject *nbase = tn_ir_call(base->op, args, 6, attrs);
  if (nbase == NULL) return NULL;
  TnObject *bargs[2] = {nbase, bias};
  TnObject *out = tn_ir_call(bc->op, bargs, 2, bc->attrs);
  tn_object_release(nbase);
  return out;
}

/* Whether the layer `base` (dense or convolution) has its weight in a
 * layout other than [N, K] or kernel_layout's (PackDenseWeights'). */
static bool dense_packed(const TnIrCall *base) {
  const TnObject *wl = NULL;
  const char *plain = "";
  if (tn_object_is_instance(base->attrs, tn_type_index("ir.DenseAttrs")))
    wl = ((const TnIrDenseAttrs *)base->attrs)->weight_layout, plain = "NK";
  else if (tn_object_is_instance(base->attrs,
                                 tn_type_index("ir.Conv2DAttrs")))
    wl = ((const TnIrConv2DAttrs *)base->attrs)->weight_layout;
  return wl != NULL && strcmp(((const TnStringObj *)wl)->data, plain) != 0;
}

/* `e` (rebuilt; `orig` has the types) folded, or NULL with *failed clear
 * when it is not a call the pass takes. */
static TnObject *fold(void *ctx, TnObject *orig, TnObject *e, bool *failed) {
  (void)ctx;
  *failed = false;
  const char *op = tn__ir_call_op_name(e);
  if (op == NULL || strcmp(op, "nn.bias_add") != 0) return NULL;
  const TnIrCall *bc = (const TnIrCall *)e;
  if (tn_array_size(bc->args) != 2) return NULL;
  const TnObject *inner = call_arg(bc, 0);
  const char *iop = tn__ir_call_op_name(inner);
  const bool dense = iop && strcmp(iop, "qnn.dense") == 0;
  if (iop == NULL || (!dense && strcmp(iop, "qnn.conv2d") != 0)) return NULL;
  const TnIrCall *base = (const TnIrCall *)inner;
  if (tn_array_size(base->args) != 6 || base->attrs == NULL) return NULL;
  if (dense_packed(base)) return NULL; /* its rows are not runs */
  int32_t zx, zw;
  int64_t nb, nw;
  const int32_t *b = const_data(call_arg(bc, 1), kDLInt, 32, &nb);
  const int8_t *w = const_data(call_arg(base, 1), kDLInt, 8, &nw);
  if (b == NULL || w == NULL || !const_i32(call_arg(base, 2), &zx) ||
      !const_i32(call_arg(base, 3), &zw) || zx == 0)
    return NULL;
  DLTensor *wt = tn_tensor_dltensor(
      ((const TnIrConstant *)call_arg(base, 1))->data);
  DLTensor *bt = tn_tensor_dltensor(((const TnIrConstant *)call_arg(bc, 1))->data);
  int o_axis;
  if (bt->ndim != 1 || !layer_ok(base, dense, wt, &o_axis) ||
      wt->shape[o_axis] != nb)
    return NULL;
  /* the bias_add's own orig: its first argument has the layer's type */
  const TnObject *orig_base = call_arg((const TnIrCall *)orig, 0);
  if (!bias_on_channels(base, orig_base, bc->attrs, dense)) return NULL;
  /* TFLite's offsets: io = -zx, fo = -zw (what the kernels are given) */
  const int32_t io = (int32_t)(0u - (uint32_t)zx);
  const int32_t fo = (int32_t)(0u - (uint32_t)zw);
  TnObject *nbias = folded_bias(b, nb, w, wt, o_axis, io, fo);
  const DLDataType i32 = {kDLInt, 32, 1};
  TnObject *zero = nbias ? tn_ir_scalar(0, i32) : NULL;
  TnObject *out = rebuilt_biased(bc, base, NULL, zero, base->attrs, nbias);
  tn_object_release(zero);
  tn_object_release(nbias);
  *failed = out == NULL;
  return out;
}

TnObject *tn__fold_input_offset_module(TnObject *mod, TnObject *ctx) {
  (void)ctx;
  return tn__pass_rewrite_nodes(mod, fold, NULL);
}

/* ---- PackDenseWeights ------------------------------------------------------
 * The fused int8 dense layer qnn.requantize(nn.bias_add(qnn.dense(x, W,
 * zx, zw, sx, sw), B)) (int8 x and output, the requantize's input zero
 * point 0 and axis the last) with constant W [N, K] (int8), zero points
 * and B (int32 [N]) gets W packed as tn_crt_dense_s8_pack lays it out
 * (weight_layout "N16K4": blocks of 16 outputs, inputs in groups of 4, one
 * vpdpbusd row a group), its input zero point set to -128 and the
 * difference folded into the bias, mod 2^32 as above:
 *   sum((x - zx) * (w - zw)) = sum((x + 128) * (w - zw))
 *                              + (-zx - 128) * sum(w - zw),
 * so B'[o] = B[o] + (-zx - 128) * sum(W[o] - zw). x + 128 is x ^ 0x80 as an
 * unsigned byte, what vpdpbusd multiplies: the x86 forms take the sums as
 * they come, with no correction and no horizontal sums, and the weights
 * were packed once, by the compiler. The outputs are the same integers
 * (the layer's arithmetic is exact mod 2^32). The fused 1x1 convolution
 * of one group, stride 1, unpadded, NHWC (a dense layer over its pixels)
 * is packed the same way: its [out, in] matrix, whatever kernel_layout
 * (the weight keeps its shape and kernel_layout; weight_layout "N16K4"
 * says the bytes are the matrix's packed), the requantize's axis the
 * channels'; and so is a larger window of one group, NHWC, any padding
 * and stride, with filter zero point 0, 16 input and output channels or
 * more, rows of taps in whole groups of four inputs and k_h * k_w * in
 * at most TN_CRT_CONV_PACKED_STACK (what the row forms do not take, and a
 * CPU below AVX2, unpack a block, or as many channels as fit, on the
 * stack: no scratch in the plan): its [out, k_h * k_w * in] matrix, the input zero point kept (the
 * padding's value) and (io - 128) * sum(w) folded into the bias as above,
 * so that the row forms (AVX-512 VNNI, AVX-VNNI, AVX2) read the blocks
 * where they lie instead of packing them on every call
 * (tn_crt_conv2d_s8_packed); unless the option "PackDenseWeights.conv"
 * (default 2) is 1 (the 1x1 layers alone) or 0 (no convolution: for a
 * runtime whose kernels read packed dense weights only). codegen.compile
 * runs it for "host" (codegen.PACK_DENSE_WEIGHTS); the executor reads the
 * layout too, through the same lowering. Left alone: anything else (a
 * layer without the bias or the requantize, non-constant weights or bias,
 * int16 data, a weight already packed, a convolution of another
 * geometry). A float32 nn.dense is packed too (pack_f32).
 *
 * The pass context's option "PackDenseWeights.layout" chooses the layout:
 * "N16K4" (the default, as above) or "N4K4", tn_crt_dense_s8_pack4's
 * blocks of 4 outputs for the Cortex-M DSP form, whose loop reads a
 * block's four rows' words of a group as 16 bytes in a row; there the
 * input zero point becomes 0 (the whole -zx * sum(W[o] - zw) into the
 * bias, FoldInputOffset's fold), since SXTB16 unpacks x as it is and the
 * loop adds no offset. With "N4K4" only the int8 dense layers are packed
 * (neither convolutions nor float32 layers: no Cortex-M form reads them
 * packed). codegen.compile gives "cortex-m" "N4K4". */

typedef struct {
  bool n4;    /* "N4K4" (else "N16K4") */
  bool convs; /* the 1x1 convolutions too ("PackDenseWeights.conv" >= 1) */
  bool kxk;   /* and the larger windows ("PackDenseWeights.conv" 2) */
} PackCtx;

/* The packed copy (N16K4, or N4K4 with n4) of the [n, k] matrix m (int8)
 * as a constant of wt's shape and dtype. */
static TnObject *packed_weight(const int8_t *m, int64_t n, int64_t k,
                               const DLTensor *wt, bool n4) {
  TnObject *t = tn_tensor_empty(wt->shape, wt->ndim, wt->dtype, wt->device);
  if (t == NULL) return NULL;
  DLTensor *o = tn_tensor_dltensor(t);
  TnObject *c = NULL;
  if ((n4 ? tn_crt_dense_s8_pack4 : tn_crt_dense_s8_pack)(
          (int32_t)n, (int32_t)k, m, (int8_t *)o->data + o->byte_offset) ==
      TN_CRT_OK)
    c = tn_ir_constant(t);
  else
    tn_error_raise_in(TN_ERR_VALUE, "PackDenseWeights",
                      "the weight [%" PRId64 ", %" PRId64 "] could not be "
                      "packed", n, k);
  tn_object_release(t);
  return c;
}

/* Whether the qnn.conv2d `base` with weight wt is a layer the packed
 * kernel takes (one group, NHWC, not packed): a 1x1 layer of stride 1,
 * unpadded; or (*kxk) a larger window, any padding, stride and dilation,
 * whose rows of taps are whole groups of four inputs (in_c, or k_w *
 * in_c undilated, a multiple of 4: the VNNI row form reads the packed
 * blocks where they lie) and at least 16 output channels. Then the
 * weight's output, input, row and column axes in ax[0 .. 3]. */
static bool conv_packable(const TnIrCall *base, DLTensor *wt, int ax[4],
                          bool *kxk) {
  if (!tn_object_is_instance(base->attrs, tn_type_index("ir.Conv2DAttrs")))
    return false;
  const TnIrConv2DAttrs *ca = (const TnIrConv2DAttrs *)base->attrs;
  const TnObject *dl = ca->data_layout, *kl = ca->kernel_layout;
  int64_t st[2], dil[2];
  if (ca->groups != 1 || dl == NULL || wt->ndim != 4 ||
      strcmp(((const TnStringObj *)dl)->data, "NHWC") != 0 ||
      tn__ir_pair("qnn.conv2d", base->attrs, "strides", 1, st) ||
      tn__ir_pair("qnn.conv2d", base->attrs, "dilation", 1, dil) ||
      !tn__ir_kernel_layout("qnn.conv2d",
                            kl && ((const TnStringObj *)kl)->data[0]
                                ? ((const TnStringObj *)kl)->data
                                : "OIHW",
                            &ax[0], &ax[1], &ax[2], &ax[3])) {
    tn_error_set_raised(NULL);
    return false;
  }
  const int64_t ci = wt->shape[ax[1]], kw = wt->shape[ax[3]];
  *kxk = wt->shape[ax[2]] != 1 || kw != 1;
  /* a larger window where packing pays: 16 input channels or more (not
   * KWS's 10x4 first layer of one), and a window the kernel can unpack
   * on the stack where the row forms do not take its channels (no scratch
   * in the plan): blocks of 16 channels where 16 windows fit, fewer a
   * chunk where they do not (the large ResNet's 3x3 160 -> 160, whose
   * blocks the row forms of AVX2 and up take where they lie) */
  if (*kxk)
    return wt->shape[ax[0]] >= 16 && ci >= 16 &&
           (dil[1] == 1 ? kw * ci : ci) % 4 == 0 &&
           wt->shape[ax[2]] * kw * ci <= TN_CRT_CONV_PACKED_STACK;
  int oa;
  return layer_ok(base, false, wt, &oa) && st[0] == 1 && st[1] == 1;
}

/* The [n, k] matrix of the weight w (wt's shape, compact; output, input,
 * row and column axes ax[0 .. 3]), a row the window's rows, columns,
 * then input channels (k = k_h * k_w * in_c), newly allocated. */
static int8_t *conv_matrix(const int8_t *w, const DLTensor *wt,
                           const int ax[4]) {
  int64_t st[4];
  st[3] = 1;
  for (int d = 2; d >= 0; d--) st[d] = st[d + 1] * wt->shape[d + 1];
  const int64_t n = wt->shape[ax[0]], ci = wt->shape[ax[1]];
  const int64_t kh = wt->shape[ax[2]], kw = wt->shape[ax[3]];
  int8_t *m = g_new(int8_t, n * kh * kw * ci), *d = m;
  for (int64_t j = 0; j < n; j++)
    for (int64_t y = 0; y < kh; y++)
      for (int64_t x = 0; x < kw; x++)
        for (int64_t t = 0; t < ci; t++)
          *d++ = w[j * st[ax[0]] + y * st[ax[2]] + x * st[ax[3]] +
                   t * st[ax[1]]];
  return m;
}

/* The dtype of e's checked type is int8. */
static bool is_int8(const TnObject *e) {
  const TnObject *t = tn_ir_checked_type(e);
  if (t == NULL || !tn__ir_is(t, TN_IR->tensor_type)) return false;
  const DLDataType d = ((const TnIrTensorType *)t)->dtype;
  return d.code == kDLInt && d.bits == 8 && d.lanes == 1;
}

/* The float32 dense layer nn.dense(x, W) (float32 x, W and output) with
 * constant W [N, K] gets W packed as tn_crt_dense_f32_pack lays it out
 * (weight_layout "N16K1": blocks of 16 outputs, input-major), which the
 * x86 forms stream block by block, an input broadcast against a row of
 * weights. The bias and the activation are untouched (FuseOps fuses them
 * as before). Left alone: anything else (other dtypes, a weight that is
 * not a constant, one packed already). */
static bool is_f32(const TnObject *e) {
  const TnObject *t = e ? tn_ir_checked_type(e) : NULL;
  if (t == NULL || !tn__ir_is(t, TN_IR->tensor_type)) return false;
  const DLDataType d = ((const TnIrTensorType *)t)->dtype;
  return d.code == kDLFloat && d.bits == 32 && d.lanes == 1;
}

static TnObject *pack_f32(TnObject *orig, TnObject *e, bool *failed) {
  const TnIrCall *c = (const TnIrCall *)e;
  if (tn_array_size(c->args) != 2 || c->attrs == NULL ||
      !tn_object_is_instance(c->attrs, tn_type_index("ir.DenseAttrs")) ||
      dense_packed(c) || !is_f32(orig) ||
      !is_f32(call_arg((const TnIrCall *)orig, 0)))
    return NULL;
  int64_t nw;
  const float *w = const_data(call_arg(c, 1), kDLFloat, 32, &nw);
  if (w == NULL) return NULL;
  DLTensor *wt = tn_tensor_dltensor(((const TnIrConstant *)call_arg(c, 1))->data);
  if (wt->ndim != 2 || wt->shape[0] < 1 || wt->shape[1] < 1 ||
      wt->shape[0] * wt->shape[1] > INT32_MAX)
    return NULL;
  TnObject *t = tn_tensor_empty(wt->shape, 2, wt->dtype, wt->device);
  TnObject *nw_ = NULL, *na = NULL, *out = NULL;
  if (t) {
    DLTensor *o = tn_tensor_dltensor(t);
    if (tn_crt_dense_f32_pack((int32_t)wt->shape[0], (int32_t)wt->shape[1], w,
                              (float *)((uint8_t *)o->data + o->byte_offset)) ==
        TN_CRT_OK)
      nw_ = tn_ir_constant(t);
    else
      tn_error_raise_in(TN_ERR_VALUE, "PackDenseWeights",
                        "the weight [%" PRId64 ", %" PRId64 "] could not be "
                        "packed", wt->shape[0], wt->shape[1]);
  }
  const TnAny lv = tn_any_cstr("N16K1");
  if (nw_) na = tn__pass_attrs_with(c->attrs, "weight_layout", &lv);
  if (na) {
    TnObject *args[2] = {(TnObject *)call_arg(c, 0), nw_};
    out = tn_ir_call(c->op, args, 2, na);
  }
  tn_object_release(na);
  tn_object_release(nw_);
  tn_object_release(t);
  *failed = out == NULL;
  return out;
}

/* ctx: the PackCtx. */
static TnObject *pack(void *ctx, TnObject *orig, TnObject *e, bool *failed) {
  const PackCtx *cx = (const PackCtx *)ctx;
  const bool n4 = cx->n4, convs = cx->convs && !n4;
  *failed = false;
  const char *op = tn__ir_call_op_name(e);
  if (op != NULL && strcmp(op, "nn.dense") == 0)
    return n4 ? NULL : pack_f32(orig, e, failed);
  if (op == NULL || strcmp(op, "qnn.requantize") != 0) return NULL;
  const TnIrCall *rq = (const TnIrCall *)e;
  if (tn_array_size(rq->args) != 5 || rq->attrs == NULL) return NULL;
  const TnObject *bias = call_arg(rq, 0);
  const char *bop = tn__ir_call_op_name(bias);
  if (bop == NULL || strcmp(bop, "nn.bias_add") != 0) return NULL;
  const TnIrCall *bc = (const TnIrCall *)bias;
  if (tn_array_size(bc->args) != 2) return NULL;
  const TnObject *inner = call_arg(bc, 0);
  const char *iop = tn__ir_call_op_name(inner);
  const bool dense = iop && strcmp(iop, "qnn.dense") == 0;
  if (iop == NULL || (!dense && (!convs || strcmp(iop, "qnn.conv2d") != 0)))
    return NULL;
  const TnIrCall *base = (const TnIrCall *)inner;
  if (tn_array_size(base->args) != 6 || base->attrs == NULL ||
      (dense &&
       !tn_object_is_instance(base->attrs, tn_type_index("ir.DenseAttrs"))) ||
      dense_packed(base))
    return NULL; /* not a layer it takes, or packed already */
  /* the types: of the original requantize, bias_add, dense and x */
  const TnIrCall *obc = (const TnIrCall *)call_arg((const TnIrCall *)orig, 0);
  const TnObject *obase = call_arg(obc, 0);
  const TnObject *ox = call_arg((const TnIrCall *)obase, 0);
  int32_t zx, zw, rzp;
  int64_t nb, nw;
  const int32_t *b = const_data(call_arg(bc, 1), kDLInt, 32, &nb);
  const int8_t *w = const_data(call_arg(base, 1), kDLInt, 8, &nw);
  if (b == NULL || w == NULL || !const_i32(call_arg(base, 2), &zx) ||
      !const_i32(call_arg(base, 3), &zw) || !const_i32(call_arg(rq, 2), &rzp) ||
      rzp != 0 || !is_int8(orig) || !is_int8(ox))
    return NULL;
  if (!tn_object_is_instance(rq->attrs,
                             tn_type_index("ir.RequantizeAttrs")))
    return NULL;
  const int64_t rax = ((const TnIrRequantizeAttrs *)rq->attrs)->axis;
  DLTensor *wt = tn_tensor_dltensor(
      ((const TnIrConstant *)call_arg(base, 1))->data);
  DLTensor *bt = tn_tensor_dltensor(((const TnIrConstant *)call_arg(bc, 1))->data);
  const TnObject *ot = tn_ir_checked_type(orig);
  const int64_t nd = tn__ir_ndim((const TnIrTensorType *)ot);
  /* the weight's output, input, row and column axes: [N, K]'s, or the
   * convolution's (NHWC: the channels the last axis, as for dense) */
  int ax[4] = {0, 1, -1, -1};
  bool kxk = false;
  if (dense ? wt->ndim != 2 : !conv_packable(base, wt, ax, &kxk) ||
                                  (kxk && !cx->kxk))
    return NULL;
  const int oa = ax[0];
  const int64_t kk = dense ? wt->shape[1]
                           : wt->shape[ax[1]] * wt->shape[ax[2]] *
                                 wt->shape[ax[3]];
  if (bt->ndim != 1 || wt->shape[oa] != nb ||
      wt->shape[oa] < 1 || kk < 1 ||
      wt->shape[oa] > INT32_MAX || kk > INT32_MAX ||
      (rax < 0 ? rax + nd : rax) != nd - 1 ||
      !bias_on_channels(base, obase, bc->attrs, dense) || (kxk && zw != 0))
    return NULL;
  /* TFLite's offsets: io = -zx, fo = -zw; the new io is 128 (N16K4) or
   * 0 (N4K4). A larger window keeps its io, the value of its padding,
   * and its kernel adds (x + 128) * w over each window, the padding's
   * taps too (tn_crt_conv2d_s8_packed): the bias takes (io - 128) *
   * sum(w) all the same. */
  const int32_t io = (int32_t)(0u - (uint32_t)zx);
  const int32_t fo = (int32_t)(0u - (uint32_t)zw);
  const uint32_t nio = n4 ? 0u : 128u;
  TnObject *nbias = folded_bias(b, nb, w, wt, oa,
                                (int32_t)((uint32_t)io - nio), fo);
  int8_t *m = dense || !nbias ? NULL : conv_matrix(w, wt, ax);
  TnObject *nw_ = nbias ? packed_weight(m ? m : w, wt->shape[oa], kk, wt, n4)
                        : NULL;
  g_free(m);
  const DLDataType i32 = {kDLInt, 32, 1};
  TnObject *nzx = nw_ ? tn_ir_scalar(n4 ? 0 : kxk ? zx : -128, i32) : NULL;
  const TnAny lv = tn_any_cstr(n4 ? "N4K4" : "N16K4");
  TnObject *na = nzx ? tn__pass_attrs_with(base->attrs, "weight_layout", &lv)
                     : NULL;
  TnObject *nbc = na ? rebuilt_biased(bc, base, nw_, nzx, na, nbias) : NULL;
  TnObject *out = NULL;
  if (nbc) {
    TnObject *rargs[5];
    for (int i = 0; i < 5; i++) rargs[i] = (TnObject *)call_arg(rq, i);
    rargs[0] = nbc;
    out = tn_ir_call(rq->op, rargs, 5, rq->attrs);
  }
  tn_object_release(nbc);
  tn_object_release(na);
  tn_object_release(nzx);
  tn_object_release(nw_);
  tn_object_release(nbias);
  *failed = out == NULL;
  return out;
}

TnObject *tn__pack_dense_weights_module(TnObject *mod, TnObject *ctx) {
  const char *l = tn__pass_config_str(ctx, "PackDenseWeights.layout", "N16K4");
  if (strcmp(l, "N16K4") != 0 && strcmp(l, "N4K4") != 0)
    return tn_error_raise_in(TN_ERR_VALUE, "PackDenseWeights",
                             "option 'PackDenseWeights.layout' must be "
                             "'N16K4' or 'N4K4', got '%s'", l),
           NULL;
  const int64_t conv = tn__pass_config_int(ctx, "PackDenseWeights.conv", 2);
  PackCtx cx = {strcmp(l, "N4K4") == 0, conv >= 1, conv >= 2};
  return tn__pass_rewrite_nodes(mod, pack, &cx);
}
