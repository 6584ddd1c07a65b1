/*
 * kernel_layout.c: the ConvertKernelLayout pass: the constant weights of
 * one-group 2-D convolutions (nn.conv2d and qnn.conv2d with groups 1)
 * transposed into the kernel layout the pass context's option
 * "ConvertKernelLayout.layout" names ("OHWI", the default, "OIHW" or
 * "HWIO"), with the call's kernel_layout attribute to match. Nothing else
 * changes: the data layout, the other attributes and arguments, the
 * call's type.
 *
 * The kernels read every layout; which is fastest depends on the target.
 * The Cortex-M DSP form multiplies each output channel's taps in a row, in
 * the order of NHWC data (OHWI, TFLite's filter layout), while the x86
 * forms and the portable C broadcast an input against the output channels
 * (HWIO, as the TFLite importer lowers convolutions). codegen.compile runs
 * this pass for the target it is told about. Weights that are not a
 * constant (a parameter), grouped and depthwise layers are left alone.
 */
#include "pass/pass_internal.h"

typedef struct {
  const char *layout; /* OIHW, HWIO or OHWI */
} Ctx;

/* The constant `w` (4-d, compact) in layout `from` transposed into layout
 * `to` (each a permutation of the letters O, I, H, W) by the crt's
 * transpose; NULL with *refused set when that kernel does not take it (an
 * element size it does not move, dimensions past int32), NULL with an
 * error otherwise. */
static TnObject *transposed(const TnIrConstant *w, const char *from,
                            const char *to, bool *refused) {
  *refused = false;
  DLTensor *t = tn_tensor_dltensor(w->data);
  if (t == NULL) return NULL;
  TnCrtTranspose tp = {.ndim = 4,
                       .elem_size = (t->dtype.bits * t->dtype.lanes + 7) / 8};
  int64_t od[4];
  for (int i = 0; i < 4; i++) { /* output axis i is input axis perm[i] */
    if (t->shape[i] > INT32_MAX) return *refused = true, NULL;
    tp.in_dims[i] = (int32_t)t->shape[i];
    tp.perm[i] = (int32_t)(strchr(from, to[i]) - from);
  }
  for (int i = 0; i < 4; i++) od[i] = t->shape[tp.perm[i]];
  TnObject *out = tn_tensor_empty(od, 4, t->dtype, t->device);
  if (out == NULL) return NULL;
  DLTensor *o = tn_tensor_dltensor(out);
  if (tn_crt_transpose(&tp, (const uint8_t *)t->data + t->byte_offset,
                       (uint8_t *)o->data + o->byte_offset) != TN_CRT_OK) {
    tn_object_release(out);
    return *refused = true, NULL;
  }
  TnObject *res = tn_ir_constant(out);
  tn_object_release(out);
  return res;
}

static bool known_layout(const char *l) {
  return strcmp(l, "OIHW") == 0 || strcmp(l, "HWIO") == 0 ||
         strcmp(l, "OHWI") == 0;
}

/* The call `e` with its weight in the wanted layout; NULL with *failed
 * clear when it is not such a call or already is in it. */
static TnObject *convert(void *ctx, TnObject *orig, TnObject *e,
                         bool *failed) {
  const Ctx *cx = ctx;
  (void)orig;
  *failed = false;
  const char *op = tn__ir_call_op_name(e);
  if (op == NULL || (strcmp(op, "nn.conv2d") != 0 && strcmp(op, "qnn.conv2d") != 0))
    return NULL;
  const TnIrCall *c = (const TnIrCall *)e;
  if (c->attrs == NULL || tn_array_size(c->args) < 2) return NULL;
  TnAny v;
  if (tn_node_get(c->attrs, "groups", &v)) {
    *failed = true;
    return NULL;
  }
  const bool one_group = v.type_index == TN_TYPE_INT && v.v_int64 == 1;
  tn_any_clear(&v);
  /* a weight packed by PackDenseWeights (weight_layout "N16K4") holds the
   * [out, in] matrix's packed bytes, not kernel_layout's order: left alone */
  if (tn_object_is_instance(c->attrs, tn_type_index("ir.Conv2DAttrs"))) {
    const TnObject *wl = ((const TnIrConv2DAttrs *)c->attrs)->weight_layout;
    if (wl != NULL && ((const TnStringObj *)wl)->data[0] != '\0') return NULL;
  }
  if (tn_node_get(c->attrs, "kernel_layout", &v)) {
    *failed = true;
    return NULL;
  }
  const char *kl = "";
  if (tn_any_as_str(&v, &kl, NULL)) {
    tn_error_set_raised(NULL);
    kl = "";
  }
  char from[5];
  g_strlcpy(from, kl[0] ? kl : "OIHW", sizeof from);
  tn_any_clear(&v);
  TnObject *w = tn_array_at(c->args, 1)->v_obj;
  if (!one_group || !known_layout(from) || strcmp(from, cx->layout) == 0 ||
      !tn_object_is_instance(w, TN_IR->constant))
    return NULL;
  const TnIrConstant *wc = (const TnIrConstant *)w;
  int contiguous = 0;
  DLTensor *t = tn_tensor_dltensor(wc->data);
  if (t == NULL || t->ndim != 4 || tn_tensor_is_contiguous(wc->data, &contiguous) ||
      !contiguous) {
    tn_error_set_raised(NULL);
    return NULL;
  }
  bool refused;
  TnObject *nw = transposed(wc, from, cx->layout, &refused);
  if (refused) return NULL; /* a weight the transpose does not take */
  const TnAny lv = tn_any_cstr(cx->layout);
  TnObject *na = nw ? tn__pass_attrs_with(c->attrs, "kernel_layout", &lv) : NULL;
  TnObject *out = NULL;
  if (na) {
    const int64_t n = tn_array_size(c->args);
    TnObject **args = g_new(TnObject *, n);
    for (int64_t i = 0; i < n; i++) args[i] = tn_array_at(c->args, i)->v_obj;
    args[1] = nw;
    out = tn_ir_call(c->op, args, (int32_t)n, na);
    g_free(args);
  }
  tn_object_release(nw);
  tn_object_release(na);
  *failed = out == NULL;
  return out;
}

TnObject *tn__kernel_layout_module(TnObject *mod, TnObject *ctx) {
  Ctx cx = {tn__pass_config_str(ctx, "ConvertKernelLayout.layout", "OHWI")};
  if (!known_layout(cx.layout))
    return tn_error_raise_in(TN_ERR_VALUE, "ConvertKernelLayout",
                             "option 'ConvertKernelLayout.layout' must be "
                             "'OIHW', 'HWIO' or 'OHWI', got '%s'", cx.layout),
           NULL;
  return tn__pass_rewrite_nodes(mod, convert, &cx);
}
