/*
 * movement.c: the data-movement kernels of the crt: transpose, concatenate,
 * constant pad and strided slice, for any element type given by its size
 * (1, 2, 4 or 8 bytes). They move bytes and compute nothing, so each first
 * reduces its problem to the fewest dims that describe it (unit dims
 * dropped, dims that stay adjacent merged; for strided slice the lowering
 * does it), then moves the largest contiguous pieces it can:
 * whole rows by memcpy when the innermost dim is kept, and otherwise a
 * transpose of the two innermost-in-memory dims in small square tiles, so
 * both the reads and the writes stay within a few cache lines. The
 * remaining outer dims are walked row by row (or tile by tile), never with
 * per-element index arithmetic. Elements are copied through may_alias
 * integer types, since the buffers hold floats as often as integers.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

#if defined(__GNUC__)
#define MAY_ALIAS __attribute__((__may_alias__))
#else
#define MAY_ALIAS
#endif
typedef uint16_t MAY_ALIAS u16a;
typedef uint32_t MAY_ALIAS u32a;
typedef uint64_t MAY_ALIAS u64a;

static int valid_elem_size(int32_t e) {
  return e == 1 || e == 2 || e == 4 || e == 8;
}

/* ------------------------------------------------------------------------ */
/* An odometer over up to TN_CRT_MAX_DIMS dims with an input and an output   */
/* offset (in elements)                                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  int32_t n;
  int32_t dims[TN_CRT_MAX_DIMS];
  ptrdiff_t is[TN_CRT_MAX_DIMS], os[TN_CRT_MAX_DIMS];
  int32_t idx[TN_CRT_MAX_DIMS];
  ptrdiff_t ioff, ooff;
} Walk;

static void walk_next(Walk *w) {
  for (int32_t d = w->n - 1; d >= 0; d--) {
    w->ioff += w->is[d], w->ooff += w->os[d];
    if (++w->idx[d] < w->dims[d]) return;
    w->ioff -= w->is[d] * w->dims[d];
    w->ooff -= w->os[d] * w->dims[d];
    w->idx[d] = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* Transpose                                                                  */
/* ------------------------------------------------------------------------ */

/* 16 x 16 tiles: 1 KiB of float on each side, well inside any L1. */
#define TILE 16

/* out[a * os_a + b] = in[a + b * is_b] for a < na, b < nb. */
#define DEFINE_TILE(NAME, T)                                                \
  static void NAME(const void *restrict vin, void *restrict vout,           \
                   int32_t na, int32_t nb, ptrdiff_t os_a, ptrdiff_t is_b) { \
    const T *restrict in = vin;                                             \
    T *restrict out = vout;                                                 \
    for (int32_t a0 = 0; a0 < na; a0 += TILE) {                             \
      int32_t a1 = na - a0 < TILE ? na : a0 + TILE;                         \
      for (int32_t b0 = 0; b0 < nb; b0 += TILE) {                           \
        int32_t b1 = nb - b0 < TILE ? nb : b0 + TILE;                       \
        for (int32_t a = a0; a < a1; a++) {                                 \
          T *restrict o = out + a * os_a;                                   \
          const T *restrict i = in + a;                                     \
          for (int32_t b = b0; b < b1; b++) o[b] = i[b * is_b];             \
        }                                                                   \
      }                                                                     \
    }                                                                       \
  }
DEFINE_TILE(tile1, uint8_t)
DEFINE_TILE(tile2, u16a)
DEFINE_TILE(tile4, u32a)
DEFINE_TILE(tile8, u64a)

typedef void (*TileFn)(const void *restrict, void *restrict, int32_t, int32_t,
                       ptrdiff_t, ptrdiff_t);

TnCrtStatus tn_crt_transpose(const TnCrtTranspose *p, const void *in,
                             void *out) {
  if (!p || !in || !out || p->ndim < 1 || p->ndim > TN_CRT_MAX_DIMS ||
      !valid_elem_size(p->elem_size))
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t nd = p->ndim, esz = p->elem_size;
  int32_t seen = 0;
  int64_t total = 1;
  ptrdiff_t stride[TN_CRT_MAX_DIMS]; /* input strides, in elements */
  for (int32_t d = nd - 1; d >= 0; d--) {
    int32_t a = p->perm[d];
    if (p->in_dims[d] <= 0 || a < 0 || a >= nd || (seen & (1 << a)))
      return TN_CRT_INVALID_ARGUMENT;
    seen |= 1 << a;
    stride[d] = (ptrdiff_t)total;
    total *= p->in_dims[d];
    if (total > INT32_MAX) return TN_CRT_OVERFLOW;
  }
  /* Output dims with their input strides; unit dims dropped, neighbours
   * that are neighbours in the input too merged. */
  int32_t r = 0, dims[TN_CRT_MAX_DIMS];
  ptrdiff_t is[TN_CRT_MAX_DIMS];
  for (int32_t k = 0; k < nd; k++) {
    int32_t a = p->perm[k], e = p->in_dims[a];
    if (e == 1) continue;
    if (r > 0 && is[r - 1] == stride[a] * e) {
      dims[r - 1] *= e, is[r - 1] = stride[a];
      continue;
    }
    dims[r] = e, is[r] = stride[a];
    r++;
  }
  const uint8_t *src = in;
  uint8_t *dst = out;
  if (r <= 1) { /* the identity, as far as memory is concerned */
    memcpy(dst, src, (size_t)total * (size_t)esz);
    return TN_CRT_OK;
  }
  ptrdiff_t os[TN_CRT_MAX_DIMS];
  os[r - 1] = 1;
  for (int32_t k = r - 2; k >= 0; k--) os[k] = os[k + 1] * dims[k + 1];

  Walk w = {0};
  if (is[r - 1] == 1) { /* the innermost dim stays: copy whole rows */
    for (int32_t k = 0; k < r - 1; k++)
      w.dims[k] = dims[k], w.is[k] = is[k], w.os[k] = os[k];
    w.n = r - 1;
    size_t row = (size_t)dims[r - 1] * (size_t)esz;
    int32_t rows = 1;
    for (int32_t k = 0; k < r - 1; k++) rows *= dims[k];
    for (int32_t i = 0; i < rows; i++, walk_next(&w))
      memcpy(dst + w.ooff * esz, src + w.ioff * esz, row);
    return TN_CRT_OK;
  }
  /* Otherwise the input's contiguous dim j lands further out: transpose
   * (j, last) in tiles for every position of the other dims. */
  int32_t j = 0;
  while (is[j] != 1) j++;
  int32_t tiles = 1;
  for (int32_t k = 0; k < r - 1; k++) {
    if (k == j) continue;
    w.dims[w.n] = dims[k], w.is[w.n] = is[k], w.os[w.n] = os[k];
    w.n++;
    tiles *= dims[k];
  }
  TileFn tile = esz == 1 ? tile1 : esz == 2 ? tile2 : esz == 4 ? tile4 : tile8;
  for (int32_t t = 0; t < tiles; t++, walk_next(&w))
    tile(src + w.ioff * esz, dst + w.ooff * esz, dims[j], dims[r - 1], os[j],
         is[r - 1]);
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Concatenate                                                                */
/* ------------------------------------------------------------------------ */

TnCrtStatus tn_crt_concatenate(int32_t n_inputs, const void *const *inputs,
                               const int32_t *sizes, int32_t outer,
                               void *out) {
  if (n_inputs <= 0 || !inputs || !sizes || outer <= 0 || !out)
    return TN_CRT_INVALID_ARGUMENT;
  int64_t row = 0;
  for (int32_t i = 0; i < n_inputs; i++) {
    /* an input with a zero-sized axis contributes nothing (and may be
     * NULL) */
    if (sizes[i] < 0 || (sizes[i] > 0 && !inputs[i]))
      return TN_CRT_INVALID_ARGUMENT;
    row += sizes[i];
  }
  if (row * outer > INT32_MAX) return TN_CRT_OVERFLOW;
  uint8_t *dst = out;
  for (int32_t o = 0; o < outer; o++)
    for (int32_t i = 0; i < n_inputs; i++) {
      size_t sz = (size_t)sizes[i];
      if (sz == 0) continue;
      memcpy(dst, (const uint8_t *)inputs[i] + (size_t)o * sz, sz);
      dst += sz;
    }
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Pad                                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  int32_t ndim, esz;
  int32_t dims[TN_CRT_MAX_DIMS], before[TN_CRT_MAX_DIMS],
      after[TN_CRT_MAX_DIMS];
  size_t in_slab[TN_CRT_MAX_DIMS]; /* bytes per index of each dim */
  size_t out_slab[TN_CRT_MAX_DIMS];
  const uint8_t *value;
  int uniform; /* every byte of the pad value is the same: memset */
} PadPlan;

static void fill(const PadPlan *q, uint8_t *dst, size_t bytes) {
  if (bytes == 0) return;
  if (q->uniform) {
    memset(dst, q->value[0], bytes);
    return;
  }
  size_t n = bytes / (size_t)q->esz;
  switch (q->esz) {
    case 2: {
      u16a v, *o = (u16a *)(void *)dst;
      memcpy(&v, q->value, 2);
      for (size_t i = 0; i < n; i++) o[i] = v;
      break;
    }
    case 4: {
      u32a v, *o = (u32a *)(void *)dst;
      memcpy(&v, q->value, 4);
      for (size_t i = 0; i < n; i++) o[i] = v;
      break;
    }
    default: {
      u64a v, *o = (u64a *)(void *)dst;
      memcpy(&v, q->value, 8);
      for (size_t i = 0; i < n; i++) o[i] = v;
      break;
    }
  }
}

/* Dim d of one block: its leading pad, its rows, its trailing pad. The
 * recursion is at most TN_CRT_MAX_DIMS deep and runs once per row. */
static void pad_dim(const PadPlan *q, int32_t d, const uint8_t *src,
                    uint8_t *dst) {
  size_t slab = q->out_slab[d];
  fill(q, dst, (size_t)q->before[d] * slab);
  dst += (size_t)q->before[d] * slab;
  if (d == q->ndim - 1) {
    memcpy(dst, src, (size_t)q->dims[d] * slab);
  } else {
    for (int32_t i = 0; i < q->dims[d]; i++)
      pad_dim(q, d + 1, src + (size_t)i * q->in_slab[d], dst + i * slab);
  }
  fill(q, dst + (size_t)q->dims[d] * slab, (size_t)q->after[d] * slab);
}

TnCrtStatus tn_crt_pad(const TnCrtPad *p, const void *in,
                       const void *pad_value, void *out) {
  if (!p || !in || !pad_value || !out || p->ndim < 1 ||
      p->ndim > TN_CRT_MAX_DIMS || !valid_elem_size(p->elem_size))
    return TN_CRT_INVALID_ARGUMENT;
  PadPlan q;
  q.ndim = 0;
  q.esz = p->elem_size;
  q.value = pad_value;
  q.uniform = 1;
  for (int32_t i = 1; i < q.esz; i++)
    if (q.value[i] != q.value[0]) q.uniform = 0;
  int64_t in_total = 1, out_total = 1;
  for (int32_t d = 0; d < p->ndim; d++) {
    int32_t e = p->in_dims[d], b = p->before[d], a = p->after[d];
    if (e <= 0 || b < 0 || a < 0) return TN_CRT_INVALID_ARGUMENT;
    in_total *= e;
    out_total *= (int64_t)e + b + a;
    if (in_total > INT32_MAX || out_total > INT32_MAX) return TN_CRT_OVERFLOW;
    /* A dim without padding folds into the one before it: its rows are
     * contiguous in both tensors, so the pair is one longer dim. */
    if (q.ndim > 0 && b == 0 && a == 0) {
      int32_t k = q.ndim - 1;
      q.dims[k] *= e, q.before[k] *= e, q.after[k] *= e;
      continue;
    }
    q.dims[q.ndim] = e, q.before[q.ndim] = b, q.after[q.ndim] = a;
    q.ndim++;
  }
  size_t in_s = (size_t)q.esz, out_s = (size_t)q.esz;
  for (int32_t d = q.ndim - 1; d >= 0; d--) {
    q.in_slab[d] = in_s, q.out_slab[d] = out_s;
    in_s *= (size_t)q.dims[d];
    out_s *= (size_t)q.dims[d] + (size_t)q.before[d] + (size_t)q.after[d];
  }
  pad_dim(&q, 0, in, out);
  return TN_CRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Strided slice                                                             */
/* ------------------------------------------------------------------------ */

/* out[j] = in[j * step] for j < n, elements of `esz` bytes. */
static void gather(const uint8_t *src, uint8_t *dst, int32_t n,
                   ptrdiff_t step, int32_t esz) {
  switch (esz) {
    case 1:
      for (int32_t j = 0; j < n; j++) dst[j] = src[j * step];
      break;
    case 2: {
      const u16a *s = (const u16a *)(const void *)src;
      u16a *o = (u16a *)(void *)dst;
      for (int32_t j = 0; j < n; j++) o[j] = s[j * step];
      break;
    }
    case 4: {
      const u32a *s = (const u32a *)(const void *)src;
      u32a *o = (u32a *)(void *)dst;
      for (int32_t j = 0; j < n; j++) o[j] = s[j * step];
      break;
    }
    default: {
      const u64a *s = (const u64a *)(const void *)src;
      u64a *o = (u64a *)(void *)dst;
      for (int32_t j = 0; j < n; j++) o[j] = s[j * step];
      break;
    }
  }
}

TnCrtStatus tn_crt_strided_slice(const TnCrtStridedSlice *p, const void *in,
                                 void *out) {
  if (!p || p->ndim < 1 || p->ndim > TN_CRT_MAX_DIMS ||
      !valid_elem_size(p->elem_size))
    return TN_CRT_INVALID_ARGUMENT;
  const int32_t nd = p->ndim, esz = p->elem_size;
  int64_t in_total = 1, out_total = 1;
  ptrdiff_t istr[TN_CRT_MAX_DIMS]; /* input strides, in elements */
  for (int32_t d = nd - 1; d >= 0; d--) {
    if (p->in_dims[d] < 0 || p->out_dims[d] < 0 || p->strides[d] == 0)
      return TN_CRT_INVALID_ARGUMENT;
    istr[d] = (ptrdiff_t)in_total;
    in_total *= p->in_dims[d];
    out_total *= p->out_dims[d];
    if (in_total > INT32_MAX || out_total > INT32_MAX) return TN_CRT_OVERFLOW;
  }
  if (out_total == 0) return TN_CRT_OK;
  if (!in || !out) return TN_CRT_INVALID_ARGUMENT;
  /* every index read must be inside its dim: the first and the last of
   * each dim are (the indices between lie between them) */
  ptrdiff_t base = 0;
  for (int32_t d = 0; d < nd; d++) {
    int64_t first = p->begin[d];
    int64_t last = first + (int64_t)(p->out_dims[d] - 1) * p->strides[d];
    if (first < 0 || first >= p->in_dims[d] || last < 0 ||
        last >= p->in_dims[d])
      return TN_CRT_INVALID_ARGUMENT;
    base += (ptrdiff_t)first * istr[d];
  }
  /* rows of the innermost dim, the outer dims walked by the odometer */
  Walk w = {0};
  w.n = nd - 1;
  for (int32_t d = 0; d < nd - 1; d++)
    w.dims[d] = p->out_dims[d], w.is[d] = (ptrdiff_t)p->strides[d] * istr[d];
  const int32_t n = p->out_dims[nd - 1];
  const ptrdiff_t step = (ptrdiff_t)p->strides[nd - 1];
  const int32_t rows = (int32_t)(out_total / n);
  const uint8_t *src = (const uint8_t *)in + base * esz;
  uint8_t *dst = out;
  const size_t row = (size_t)n * (size_t)esz;
  for (int32_t r = 0; r < rows; r++, dst += row, walk_next(&w)) {
    if (step == 1) memcpy(dst, src + w.ioff * esz, row);
    else gather(src + w.ioff * esz, dst, n, step, esz);
  }
  return TN_CRT_OK;
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(transpose, TnCrtTranspose) {
  return tn_crt_transpose(p, in[0], out);
}
TN_CRT_CALL(concatenate, TnCrtCallConcat) {
  return tn_crt_concatenate(p->n, in, p->sizes, p->outer, out);
}
TN_CRT_CALL(pad, TnCrtCallPad) {
  return tn_crt_pad(&p->pad, in[0], p->value, out);
}
TN_CRT_CALL(strided_slice, TnCrtStridedSlice) {
  return tn_crt_strided_slice(p, in[0], out);
}
