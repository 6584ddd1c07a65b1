/*
 * emit.c: the crt's parameter structs written as C initialisers, for the
 * code generator. Each lowering's emitter (lower.c) hands its own
 * parameters to these, so the `static const` data in generated code holds
 * the very values the host executor passes to the same kernels. Designated
 * initialisers keep the generated code readable and independent of field
 * order; floats are printed so that they read back to the same bits.
 */
#include "kernel/kernel_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

void tn__emit_f32(GString *s, float v) {
  if (isinf(v)) {
    g_string_append(s, v < 0 ? "-TVMGEN_INF" : "TVMGEN_INF");
    return;
  }
  if (isnan(v)) {
    g_string_append(s, "TVMGEN_NAN");
    return;
  }
  char buf[48];
  g_snprintf(buf, sizeof buf, "%.9g", (double)v);
  g_string_append(s, buf);
  if (!strpbrk(buf, ".e")) g_string_append(s, ".0");
  g_string_append_c(s, 'f');
}

/* "{1, 2, 3}" (at least one element: "{0}" for none) */
static void ints(GString *s, const int32_t *v, int64_t n) {
  g_string_append_c(s, '{');
  for (int64_t i = 0; i < n; i++)
    g_string_append_printf(s, i ? (i % 16 ? ", %d" : ",\n    %d") : "%d",
                           v[i]);
  if (n == 0) g_string_append_c(s, '0');
  g_string_append_c(s, '}');
}

static void open_decl(TnKernEmit *e, const char *type, const char *name) {
  g_string_append_printf(e->decls, "static const %s %s%s", type, e->prefix,
                         name);
}

void tn__emit_i32s(TnKernEmit *e, const char *name, const int32_t *v,
                   int64_t n) {
  open_decl(e, "int32_t", name);
  g_string_append_printf(e->decls, "[%" G_GINT64_FORMAT "] = ",
                         n > 0 ? n : 1);
  ints(e->decls, v, n);
  g_string_append(e->decls, ";\n");
}

void tn__emit_f32s(TnKernEmit *e, const char *name, const float *v,
                   int64_t n) {
  open_decl(e, "float", name);
  g_string_append_printf(e->decls, "[%" G_GINT64_FORMAT "] = {",
                         n > 0 ? n : 1);
  for (int64_t i = 0; i < n; i++) {
    if (i) g_string_append(e->decls, i % 8 ? ", " : ",\n    ");
    tn__emit_f32(e->decls, v[i]);
  }
  if (n == 0) g_string_append_c(e->decls, '0');
  g_string_append(e->decls, "};\n");
}

void tn__emit_bytes(TnKernEmit *e, const char *name, const uint8_t *v,
                    int64_t n) {
  open_decl(e, "uint8_t", name);
  g_string_append_printf(e->decls, "[%" G_GINT64_FORMAT "] = {",
                         n > 0 ? n : 1);
  for (int64_t i = 0; i < n; i++)
    g_string_append_printf(e->decls, i ? (i % 16 ? ", %u" : ",\n    %u")
                                       : "%u", v[i]);
  if (n == 0) g_string_append_c(e->decls, '0');
  g_string_append(e->decls, "};\n");
}

/* Fields: "name", then a value; arrays through ints(). */
static void field_i(GString *s, const char *f, int64_t v) {
  g_string_append_printf(s, "\n    .%s = %" G_GINT64_FORMAT ",", f, v);
}
static void field_a(GString *s, const char *f, const int32_t *v, int64_t n) {
  g_string_append_printf(s, "\n    .%s = ", f);
  ints(s, v, n);
  g_string_append_c(s, ',');
}
static void close_decl(TnKernEmit *e) { g_string_append(e->decls, "\n};\n"); }

void tn__emit_broadcast(TnKernEmit *e, const char *name,
                        const TnCrtBroadcast *b) {
  open_decl(e, "TnCrtBroadcast", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "ndim", b->ndim);
  field_a(e->decls, "dims", b->dims, b->ndim);
  field_a(e->decls, "lhs_strides", b->lhs_strides, b->ndim);
  field_a(e->decls, "rhs_strides", b->rhs_strides, b->ndim);
  close_decl(e);
}

void tn__emit_conv2d(TnKernEmit *e, const char *name, const TnCrtConv2d *g) {
  open_decl(e, "TnCrtConv2d", name);
  g_string_append(e->decls, " = {");
#define F(x) field_i(e->decls, #x, g->x)
  F(batch), F(in_h), F(in_w), F(in_c), F(out_h), F(out_w), F(out_c);
  F(k_h), F(k_w), F(stride_h), F(stride_w), F(dilation_h), F(dilation_w);
  F(pad_top), F(pad_left), F(groups);
#undef F
  field_a(e->decls, "in_strides", g->in_strides, 4);
  field_a(e->decls, "w_strides", g->w_strides, 4);
  field_a(e->decls, "out_strides", g->out_strides, 4);
  close_decl(e);
}

void tn__emit_dense(TnKernEmit *e, const char *name, const TnCrtDense *d) {
  open_decl(e, "TnCrtDense", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "batch", d->batch);
  field_i(e->decls, "in_features", d->in_features);
  field_i(e->decls, "out_features", d->out_features);
  field_i(e->decls, "w_stride_n", d->w_stride_n);
  field_i(e->decls, "w_stride_k", d->w_stride_k);
  close_decl(e);
}

void tn__emit_pool2d(TnKernEmit *e, const char *name, const TnCrtPool2d *g) {
  open_decl(e, "TnCrtPool2d", name);
  g_string_append(e->decls, " = {");
#define F(x) field_i(e->decls, #x, g->x)
  F(batch), F(in_h), F(in_w), F(channels), F(out_h), F(out_w), F(k_h);
  F(k_w), F(stride_h), F(stride_w), F(pad_top), F(pad_left);
  F(count_include_pad);
#undef F
  field_a(e->decls, "in_strides", g->in_strides, 4);
  field_a(e->decls, "out_strides", g->out_strides, 4);
  close_decl(e);
}

void tn__emit_reduce(TnKernEmit *e, const char *name, const TnCrtReduce *r) {
  open_decl(e, "TnCrtReduce", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "ndim", r->ndim);
  field_a(e->decls, "dims", r->dims, r->ndim);
  g_string_append_printf(e->decls, "\n    .reduce_mask = %" PRIu32 "u,",
                         r->reduce_mask);
  close_decl(e);
}

void tn__emit_transpose(TnKernEmit *e, const char *name,
                        const TnCrtTranspose *t) {
  open_decl(e, "TnCrtTranspose", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "ndim", t->ndim);
  field_a(e->decls, "in_dims", t->in_dims, t->ndim);
  field_a(e->decls, "perm", t->perm, t->ndim);
  field_i(e->decls, "elem_size", t->elem_size);
  close_decl(e);
}

void tn__emit_pad(TnKernEmit *e, const char *name, const TnCrtPad *p) {
  open_decl(e, "TnCrtPad", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "ndim", p->ndim);
  field_a(e->decls, "in_dims", p->in_dims, p->ndim);
  field_a(e->decls, "before", p->before, p->ndim);
  field_a(e->decls, "after", p->after, p->ndim);
  field_i(e->decls, "elem_size", p->elem_size);
  close_decl(e);
}

void tn__emit_strided_slice(TnKernEmit *e, const char *name,
                            const TnCrtStridedSlice *p) {
  open_decl(e, "TnCrtStridedSlice", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "ndim", p->ndim);
  field_a(e->decls, "in_dims", p->in_dims, p->ndim);
  field_a(e->decls, "begin", p->begin, p->ndim);
  field_a(e->decls, "strides", p->strides, p->ndim);
  field_a(e->decls, "out_dims", p->out_dims, p->ndim);
  field_i(e->decls, "elem_size", p->elem_size);
  close_decl(e);
}

/* name_mult and name_shift arrays, then the struct pointing at them */
static void mult_shift(TnKernEmit *e, const char *name, const int32_t *m,
                       const int32_t *sh, int32_t n) {
  char *a = g_strconcat(name, "_mult", NULL), *b = g_strconcat(name, "_shift",
                                                               NULL);
  tn__emit_i32s(e, a, m, n);
  tn__emit_i32s(e, b, sh, n);
  g_free(a), g_free(b);
}

void tn__emit_quant(TnKernEmit *e, const char *name, const TnCrtQuant *q,
                    int32_t channels) {
  int32_t n = q->per_channel ? channels : 1;
  mult_shift(e, name, q->multiplier, q->shift, n);
  open_decl(e, "TnCrtQuant", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "input_offset", q->input_offset);
  field_i(e->decls, "filter_offset", q->filter_offset);
  field_i(e->decls, "output_offset", q->output_offset);
  field_i(e->decls, "act_min", q->act_min);
  field_i(e->decls, "act_max", q->act_max);
  field_i(e->decls, "per_channel", q->per_channel);
  g_string_append_printf(e->decls, "\n    .multiplier = %s%s_mult,"
                         "\n    .shift = %s%s_shift,", e->prefix, name,
                         e->prefix, name);
  close_decl(e);
}

void tn__emit_requant(TnKernEmit *e, const char *name, const TnCrtRequant *r,
                      int32_t channels) {
  mult_shift(e, name, r->multiplier, r->shift, channels);
  open_decl(e, "TnCrtRequant", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "input_zero_point", r->input_zero_point);
  field_i(e->decls, "output_zero_point", r->output_zero_point);
  field_i(e->decls, "act_min", r->act_min);
  field_i(e->decls, "act_max", r->act_max);
  g_string_append_printf(e->decls, "\n    .multiplier = %s%s_mult,"
                         "\n    .shift = %s%s_shift,", e->prefix, name,
                         e->prefix, name);
  close_decl(e);
}

void tn__emit_qbinary(TnKernEmit *e, const char *name,
                      const TnCrtQBinary *q) {
  open_decl(e, "TnCrtQBinary", name);
  g_string_append(e->decls, " = {");
#define F(x) field_i(e->decls, #x, q->x)
  F(lhs_offset), F(rhs_offset), F(output_offset), F(left_shift);
  F(lhs_multiplier), F(lhs_shift), F(rhs_multiplier), F(rhs_shift);
  F(output_multiplier), F(output_shift), F(act_min), F(act_max);
#undef F
  close_decl(e);
}

void tn__emit_qmean(TnKernEmit *e, const char *name, const TnCrtQMean *q) {
  open_decl(e, "TnCrtQMean", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "input_zero_point", q->input_zero_point);
  field_i(e->decls, "output_zero_point", q->output_zero_point);
  field_i(e->decls, "count", q->count);
  field_i(e->decls, "multiplier", q->multiplier);
  field_i(e->decls, "shift", q->shift);
  close_decl(e);
}

void tn__emit_softmax_s8(TnKernEmit *e, const char *name,
                         const TnCrtSoftmaxS8 *s) {
  open_decl(e, "TnCrtSoftmaxS8", name);
  g_string_append(e->decls, " = {");
  field_i(e->decls, "input_multiplier", s->input_multiplier);
  field_i(e->decls, "input_left_shift", s->input_left_shift);
  field_i(e->decls, "diff_min", s->diff_min);
  close_decl(e);
}

void tn__emit_lut8(TnKernEmit *e, const char *name, const TnCrtLut8 *t) {
  int32_t v[256];
  for (int i = 0; i < 256; i++) v[i] = t->table[i];
  open_decl(e, "TnCrtLut8", name);
  g_string_append(e->decls, " = {\n    .table = ");
  ints(e->decls, v, 256);
  g_string_append(e->decls, ",\n};\n");
}

void tn__emit_return(TnKernEmit *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *call = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_string_append(e->body, "  return ");
  for (const char *c = call; *c; c++) {
    if (*c == '$') g_string_append(e->body, e->prefix);
    else g_string_append_c(e->body, *c);
  }
  g_string_append(e->body, ";\n");
  g_free(call);
}

const char *tn__emit_binary_op(TnCrtBinaryOp op) {
  static const char *names[] = {"TN_CRT_ADD", "TN_CRT_SUB", "TN_CRT_MUL",
                                "TN_CRT_DIV", "TN_CRT_MAX", "TN_CRT_MIN"};
  return (unsigned)op < G_N_ELEMENTS(names) ? names[op] : "TN_CRT_ADD";
}

const char *tn__emit_unary_op(TnCrtUnaryOp op) {
  static const char *names[] = {"TN_CRT_NEGATIVE", "TN_CRT_EXP",
                                "TN_CRT_SIGMOID", "TN_CRT_TANH",
                                "TN_CRT_RELU"};
  return (unsigned)op < G_N_ELEMENTS(names) ? names[op] : "TN_CRT_NEGATIVE";
}

const char *tn__emit_dtype(TnCrtDType t) {
  static const char *names[] = {"TN_CRT_F32", "TN_CRT_I32", "TN_CRT_I8",
                                "TN_CRT_U8",  "TN_CRT_I64", "TN_CRT_F64",
                                "TN_CRT_I16", "TN_CRT_BOOL"};
  return (unsigned)t < G_N_ELEMENTS(names) ? names[t] : "TN_CRT_F32";
}
