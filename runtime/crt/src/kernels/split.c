/*
 * split.c: a convolution or dense layer of batch 1 cut into parts that
 * may run side by side (tvmnode/crt/calls.h, "a call cut into parts").
 *
 * The one place that says how a call is cut: the host executor prepares
 * its steps' parts with tn_crt_split_part when its threads are set, and
 * generated code for a host cuts a call at run time through
 * tn_crt_call_split, on the stack, when the application's parallel hook
 * asks for it. A part is an ordinary call of the same form on a smaller
 * geometry, so nothing here computes, allocates or starts a thread, and
 * without a hook (firmware) tn_crt_call_split is the whole call.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/calls.h"

static TnCrtParallelFn g_hook;
static void *g_hook_ctx;

void tn_crt_set_parallel(TnCrtParallelFn fn, void *ctx) {
  g_hook = fn;
  g_hook_ctx = ctx;
}

TnCrtParallelFn tn_crt_parallel(void **ctx) {
  if (ctx) *ctx = g_hook_ctx;
  return g_hook;
}

/* The output rows of band i of n: [r0, r1). */
static void band_rows(int32_t rows, int32_t i, int32_t n, int32_t *r0,
                      int32_t *r1) {
  *r0 = (int32_t)((int64_t)rows * i / n);
  *r1 = (int32_t)((int64_t)rows * (i + 1) / n);
}

/* Make `g` the convolution of output rows [r0, r1): the input rows the
 * band reads, from *in_row on, and the padding above them (below follows
 * from the output size, as for any call). 0 when the band reads no input
 * row at all (it lies wholly in the padding). */
static int conv_band(TnCrtConv2d *g, int32_t r0, int32_t r1,
                     int64_t *in_row) {
  int64_t ext = (int64_t)(g->k_h - 1) * g->dilation_h + 1;
  int64_t first = (int64_t)r0 * g->stride_h - g->pad_top;
  int64_t end = (int64_t)(r1 - 1) * g->stride_h - g->pad_top + ext;
  int64_t lo = first < 0 ? 0 : first, hi = end > g->in_h ? g->in_h : end;
  if (hi <= lo) return 0;
  g->pad_top = (int32_t)(lo - first);
  g->in_h = (int32_t)(hi - lo);
  g->out_h = r1 - r0;
  /* batch 1: the batch strides say only that the tensors are dense */
  g->in_strides[0] = g->in_strides[1] * g->in_h;
  g->out_strides[0] = g->out_strides[1] * g->out_h;
  *in_row = lo;
  return 1;
}

static const TnCrtConv2d *conv_of(int32_t kind, const void *params) {
  /* g is the first field of both forms' parameters */
  if (kind == TN_CRT_SPLIT_CONV2D_S8)
    return &((const TnCrtCallConvS8 *)params)->g;
  if (kind == TN_CRT_SPLIT_CONV2D_F32)
    return &((const TnCrtCallConvF32 *)params)->g;
  return NULL;
}

static const TnCrtDense *dense_of(int32_t kind, const void *params) {
  if (kind == TN_CRT_SPLIT_DENSE_S8)
    return &((const TnCrtCallDenseS8 *)params)->d;
  if (kind == TN_CRT_SPLIT_DENSE_F32)
    return &((const TnCrtCallDenseF32 *)params)->d;
  return NULL;
}

int32_t tn_crt_split_count(int32_t kind, const void *params, int32_t n) {
  if (params == NULL || n < 2) return 0;
  const TnCrtConv2d *g = conv_of(kind, params);
  const TnCrtDense *d = dense_of(kind, params);
  if (g) {
    if (g->batch != 1 || g->out_h < 2) return 0;
    if (n > g->out_h) n = g->out_h;
    /* a band of padding alone: the call runs whole */
    for (int32_t i = 0; i < n; i++) {
      TnCrtConv2d b = *g;
      int32_t r0, r1;
      int64_t row;
      band_rows(g->out_h, i, n, &r0, &r1);
      if (!conv_band(&b, r0, r1, &row)) return 0;
    }
    return n;
  }
  if (d) {
    int32_t blocks = (d->out_features + 15) / 16;
    if (d->batch != 1) return 0;
    if (n > blocks) n = blocks;
    return n > 1 ? n : 0;
  }
  return 0;
}

int32_t tn_crt_split_part(int32_t kind, const void *params, int32_t i,
                          int32_t n, TnCrtSplitParams *part,
                          ptrdiff_t in_off[3], ptrdiff_t *out_off) {
  const TnCrtConv2d *g = conv_of(kind, params);
  const TnCrtDense *d = dense_of(kind, params);
  if ((g == NULL && d == NULL) || part == NULL || i < 0 || i >= n)
    return TN_CRT_INVALID_ARGUMENT;
  in_off[0] = in_off[1] = in_off[2] = 0;
  if (g) {
    size_t esize = kind == TN_CRT_SPLIT_CONV2D_S8 ? 1 : sizeof(float);
    TnCrtConv2d *b;
    if (kind == TN_CRT_SPLIT_CONV2D_S8) {
      part->conv_s8 = *(const TnCrtCallConvS8 *)params;
      b = &part->conv_s8.g;
    } else {
      part->conv_f32 = *(const TnCrtCallConvF32 *)params;
      b = &part->conv_f32.g;
    }
    int32_t r0, r1;
    int64_t in_row;
    band_rows(g->out_h, i, n, &r0, &r1);
    if (!conv_band(b, r0, r1, &in_row)) return TN_CRT_INVALID_ARGUMENT;
    in_off[0] = (ptrdiff_t)(in_row * g->in_strides[1] * (int64_t)esize);
    *out_off = (ptrdiff_t)((int64_t)r0 * g->out_strides[1] * (int64_t)esize);
    return TN_CRT_OK;
  }
  /* whole blocks of 16 output features (the packed layouts' blocks), the
   * last block the rest: a block's packed weights lie in a row from
   * j0 * K on, as the [N, K] weights of its rows from j0 * w_stride_n */
  int32_t blocks = (d->out_features + 15) / 16;
  int32_t n0 = blocks * i / n * 16;
  int32_t n1 = i == n - 1 ? d->out_features : blocks * (i + 1) / n * 16;
  int32_t packed;
  size_t esize;
  TnCrtDense *b;
  if (kind == TN_CRT_SPLIT_DENSE_S8) {
    part->dense_s8 = *(const TnCrtCallDenseS8 *)params;
    TnCrtQuant *q = &part->dense_s8.q;
    if (q->per_channel) {
      q->channels = n1 - n0;
      if (q->multiplier) q->multiplier += n0;
      if (q->shift) q->shift += n0;
      if (q->scale) q->scale += n0;
    }
    b = &part->dense_s8.d;
    packed = part->dense_s8.packed;
    esize = 1;
  } else {
    part->dense_f32 = *(const TnCrtCallDenseF32 *)params;
    b = &part->dense_f32.d;
    packed = part->dense_f32.packed;
    esize = sizeof(float);
  }
  b->out_features = n1 - n0;
  int64_t w = packed ? (int64_t)n0 * d->in_features
                     : (int64_t)n0 * d->w_stride_n;
  in_off[1] = (ptrdiff_t)(w * (int64_t)esize);
  in_off[2] = (ptrdiff_t)n0 * 4; /* int32 or float bias */
  *out_off = (ptrdiff_t)n0 * (ptrdiff_t)esize;
  return TN_CRT_OK;
}

int32_t tn_crt_split_run(const TnCrtSplit *c, int32_t i, int32_t n,
                         void *scratch, size_t scratch_size) {
  TnCrtSplitParams part;
  ptrdiff_t in_off[3], out_off = 0;
  const void *in[3] = {0, 0, 0};
  if (c == NULL || c->fn == NULL || c->nin < 1 || c->nin > 3)
    return TN_CRT_INVALID_ARGUMENT;
  int32_t st = tn_crt_split_part(c->kind, c->params, i, n, &part, in_off,
                                 &out_off);
  if (st != TN_CRT_OK) return st;
  for (int32_t j = 0; j < c->nin; j++)
    in[j] = (const char *)c->in[j] + in_off[j];
  return c->fn(&part, in, (char *)c->out + out_off, scratch, scratch_size);
}

int32_t tn_crt_call_split(int32_t kind, TnCrtCallFn fn, const void *params,
                          int32_t nin, const void *const *in, void *out,
                          void *scratch, size_t scratch_size) {
  TnCrtParallelFn hook = g_hook;
  /* in place (the output over input 0): one band would write over rows
   * another still reads */
  if (hook && in && in[0] != out) {
    TnCrtSplit c;
    int32_t status = TN_CRT_OK;
    c.kind = kind;
    c.nin = nin;
    c.fn = fn;
    c.params = params;
    c.in = in;
    c.out = out;
    c.scratch_size = scratch_size;
    c.count = tn_crt_split_count;
    c.run = tn_crt_split_run;
    if (hook(g_hook_ctx, &c, scratch, &status)) return status;
  }
  return fn(params, in, out, scratch, scratch_size);
}
