/*
 * lstm.c: TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite Micro computes
 * it: four gates (input, forget, cell, output), no peephole, projection,
 * layer normalisation or coupled input and forget gates, the cell gate's
 * activation tanh, an optional cell clip. Three forms: float32 throughout;
 * int8 data and weights with int16 gates and cell state ("8x8_16"); and
 * int16 data with int8 weights, int64 bias and int16 cell state ("16x8"),
 * the integer ones bit for bit with TFLite Micro: each gate is two fully
 * connected products (input and recurrent) requantized to Q3.12 int16 and
 * added with saturation, then squashed by TFLite's int16 sigmoid or tanh
 * (a 256-entry table interpolated linearly); the cell and hidden updates
 * are int16 multiplications requantized by multipliers the host computed
 * once. The two integer forms differ only in the products: int32 sums and
 * bias for int8 data, int64 sums and bias with TFLite's 64-bit requantize
 * for int16 data.
 *
 * One call runs the whole sequence from the given hidden and cell state
 * and writes one result, chosen by `emit`: the output sequence (every
 * step's hidden state) or the final cell state. The final hidden state is
 * the sequence's last step, a view for the caller; the cell state needs a
 * second call, since a form has one output buffer. Batches are
 * independent, so each runs all its steps before the next, in both
 * layouts. Each unit's four gates are computed together from the previous
 * hidden state, so no gate buffers are needed: the new hidden state goes
 * straight to the output row (or, for the cell state, to one of two
 * scratch rows) and the cell state is updated in place, in scratch (or in
 * the output). Scratch: tn_crt_lstm_scratch_size.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"
#include "fixed_point.h"

size_t tn_crt_lstm_scratch_size(int32_t units, int32_t cell_bytes,
                                int32_t data_bytes) {
  if (units <= 0 || cell_bytes <= 0 || data_bytes <= 0) return 0;
  /* the cell state (emitting the sequence) or two hidden states (the cell) */
  size_t c = (size_t)cell_bytes, h = 2u * (size_t)data_bytes;
  return (size_t)units * (c > h ? c : h);
}

static TnCrtStatus check_lstm(const TnCrtLstm *p, const void *const *t,
                              int32_t n, const void *out, size_t scratch_size,
                              int32_t cell_bytes, int32_t data_bytes) {
  if (p == NULL || out == NULL) return TN_CRT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < n; i++)
    if (t[i] == NULL) return TN_CRT_INVALID_ARGUMENT;
  if (p->batch <= 0 || p->steps <= 0 || p->input_size <= 0 || p->units <= 0 ||
      (p->emit != TN_CRT_LSTM_SEQUENCE && p->emit != TN_CRT_LSTM_CELL))
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)p->batch * p->steps * p->input_size > INT32_MAX ||
      (int64_t)p->batch * p->steps * p->units > INT32_MAX ||
      (int64_t)4 * p->units * p->input_size > INT32_MAX ||
      (int64_t)4 * p->units * p->units > INT32_MAX)
    return TN_CRT_INVALID_ARGUMENT;
  if (scratch_size < tn_crt_lstm_scratch_size(p->units, cell_bytes, data_bytes))
    return TN_CRT_SCRATCH_TOO_SMALL;
  return TN_CRT_OK;
}

/* Row (batch b, step t) of a [batch, steps, n] or [steps, batch, n] tensor. */
static size_t row(const TnCrtLstm *p, int32_t b, int32_t t, int32_t n) {
  size_t r = p->time_major ? (size_t)t * (size_t)p->batch + (size_t)b
                           : (size_t)b * (size_t)p->steps + (size_t)t;
  return r * (size_t)n;
}

/* One step of one batch: input row x and hidden state h to the new hidden
 * state `next` (not h), the cell state c updated in place; `in` are the
 * call's six inputs. */
typedef void (*LstmStep)(const TnCrtLstm *p, const void *const *in,
                         const void *x, const void *h, void *c, void *next);

/* Every batch through every step from its initial state (in[4], in[5]),
 * writing what p->emit asks for; elements of data_bytes (data, hidden
 * state) and cell_bytes (cell state). */
static TnCrtStatus run_lstm(const TnCrtLstm *p, const void *const *in,
                            void *out, void *scratch, size_t scratch_size,
                            int32_t cell_bytes, int32_t data_bytes,
                            LstmStep step) {
  const void *t[] = {in[0], in[1], in[2], in[3], in[4], in[5], scratch};
  TnCrtStatus st =
      check_lstm(p, t, 7, out, scratch_size, cell_bytes, data_bytes);
  if (st != TN_CRT_OK) return st;
  size_t n = (size_t)p->units, cb = (size_t)cell_bytes;
  size_t db = (size_t)data_bytes;
  int seq = p->emit == TN_CRT_LSTM_SEQUENCE;
  const char *x = (const char *)in[0], *h0 = (const char *)in[4];
  const char *c0 = (const char *)in[5];
  char *o = (char *)out, *tmp = (char *)scratch;
  for (int32_t b = 0; b < p->batch; b++) {
    /* the cell form may run in place: out is then c0, each batch's rows
     * read before they are written */
    char *c = seq ? tmp : o + (size_t)b * n * cb;
    if (c != c0 + (size_t)b * n * cb) memcpy(c, c0 + (size_t)b * n * cb, n * cb);
    const char *h = h0 + (size_t)b * n * db;
    for (int32_t s = 0; s < p->steps; s++) {
      char *next = seq ? o + row(p, b, s, p->units) * db
                       : tmp + (size_t)(s & 1) * n * db;
      step(p, in, x + row(p, b, s, p->input_size) * db, h, c, next);
      h = next;
    }
  }
  return TN_CRT_OK;
}

/* ---- float32 --------------------------------------------------------------- */

static float sigmoid_f32(float v) {
  /* TFLite's reference logistic: exact limits outside [-9, 16.62] */
  if (v > 16.619047164916992188f) return 1.0f;
  if (v < -9.0f) return expf(v);
  return 1.0f / (1.0f + expf(-v));
}

static float dot_f32(const float *a, const float *b, int32_t n) {
  float s = 0.0f;
  for (int32_t d = 0; d < n; d++) s += a[d] * b[d];
  return s;
}

/* Gate g of unit j before its activation: W x + b + R h (TFLite's two
 * products, the bias on the first). */
static float gate_f32(const TnCrtLstm *p, const void *const *in, int32_t g,
                      int32_t j, const float *x, const float *h) {
  const float *wi = in[1], *wr = in[2], *bias = in[3];
  size_t k = (size_t)g * (size_t)p->units + (size_t)j;
  float a = dot_f32(x, wi + k * (size_t)p->input_size, p->input_size) + bias[k];
  return a + dot_f32(h, wr + k * (size_t)p->units, p->units);
}

static void step_f32(const TnCrtLstm *p, const void *const *in,
                     const void *xv, const void *hv, void *cv, void *nv) {
  const float *x = xv, *h = hv;
  float *c = cv, *next = nv, clip = p->cell_clip;
  for (int32_t j = 0; j < p->units; j++) {
    float i = sigmoid_f32(gate_f32(p, in, 0, j, x, h));
    float f = sigmoid_f32(gate_f32(p, in, 1, j, x, h));
    float g = tanhf(gate_f32(p, in, 2, j, x, h));
    float o = sigmoid_f32(gate_f32(p, in, 3, j, x, h));
    float v = f * c[j] + i * g;
    if (clip > 0.0f) v = v > clip ? clip : v < -clip ? -clip : v;
    c[j] = v;
    next[j] = tanhf(v) * o;
  }
}

TnCrtStatus tn_crt_lstm_f32(const TnCrtLstm *p, const float *x,
                            const float *wi, const float *wr,
                            const float *bias, const float *h0,
                            const float *c0, float *out, void *scratch,
                            size_t scratch_size) {
  const void *in[] = {x, wi, wr, bias, h0, c0};
  return run_lstm(p, in, out, scratch, scratch_size, 4, 4, step_f32);
}

/* ---- int8 data, int16 cell ------------------------------------------------- */

static int16_t sat16(int32_t v) {
  return (int16_t)(v > INT16_MAX ? INT16_MAX : v < INT16_MIN ? INT16_MIN : v);
}

/* TFLite's int16 logistic of a Q3.12 value, to Q0.15 (its input scale
 * 2^-12 is the power-of-two case: x * 3). */
static int16_t sigmoid_s16(int16_t x) { return tn__crt_logistic_s16(x, 3, 0); }

/* One fully connected product to Q3.12: sum (x - zp) * w over n values
 * (plus bias[k] when bias is given), requantized and saturated to int16.
 * int8 data sums in int32 with an int32 bias; int16 data (fc_s16) in
 * int64 with an int64 bias. */
typedef int16_t (*LstmFc)(const void *x, int32_t zp, const int8_t *w,
                          int32_t n, const void *bias, size_t k, int32_t mul,
                          int32_t shift);

static int16_t fc_s8(const void *xv, int32_t zp, const int8_t *w, int32_t n,
                     const void *bias, size_t k, int32_t mul, int32_t shift) {
  const int8_t *x = xv;
  int32_t acc = 0;
  for (int32_t d = 0; d < n; d++) acc += (int32_t)w[d] * ((int32_t)x[d] - zp);
  if (bias) acc += ((const int32_t *)bias)[k];
  return sat16(tn_crt_multiply_by_quantized_multiplier(acc, mul, shift));
}

/* x >> s, rounding toward minus infinity for negative x as the arithmetic
 * shift TFLite relies on does (C leaves it to the implementation). */
static int64_t shift_down64(int64_t x, int32_t s) {
  return x >= 0 ? x >> s : ~(~x >> s);
}

/* TFLite's MultiplyByQuantizedMultiplier of an int64 sum (its 16x8
 * products): the multiplier rounded to 16 bits, then one rounding shift
 * by 15 - shift (kept within [1, 62]), truncated to int32. */
static int32_t requantize64(int64_t x, int32_t mul, int32_t shift) {
  int64_t m = mul < 0x7FFF0000 ? ((int64_t)mul + (1 << 15)) >> 16 : 0x7FFF;
  int32_t total = 15 - shift;
  total = total < 1 ? 1 : total > 62 ? 62 : total;
  uint64_t v = (uint64_t)x * (uint64_t)m + (UINT64_C(1) << (total - 1));
  return (int32_t)(uint32_t)(uint64_t)shift_down64((int64_t)v, total);
}

static int16_t fc_s16(const void *xv, int32_t zp, const int8_t *w,
                      int32_t n, const void *bias, size_t k, int32_t mul,
                      int32_t shift) {
  const int16_t *x = xv;
  int64_t acc = 0;
  for (int32_t d = 0; d < n; d++)
    acc += (int64_t)((int32_t)w[d] * ((int32_t)x[d] - zp));
  if (bias) acc += ((const int64_t *)bias)[k];
  return sat16(requantize64(acc, mul, shift));
}

/* Gate g of unit j before its activation, Q3.12: the input and recurrent
 * products added with saturation. */
static int16_t gate_q(const TnCrtLstm *p, const void *const *in, int32_t g,
                      int32_t j, const void *x, const void *h, LstmFc fc) {
  const int8_t *wi = in[1], *wr = in[2];
  size_t k = (size_t)g * (size_t)p->units + (size_t)j;
  int16_t a = fc(x, p->input_zero_point, wi + k * (size_t)p->input_size,
                 p->input_size, in[3], k, p->fc_multiplier[g],
                 p->fc_shift[g]);
  int16_t r = fc(h, p->hidden_zero_point, wr + k * (size_t)p->units,
                 p->units, NULL, 0, p->fc_multiplier[4 + g],
                 p->fc_shift[4 + g]);
  return sat16((int32_t)a + r);
}

/* a * b requantized, plus `zp`, clamped to [lo, hi]. */
static int32_t mul_s16(int16_t a, int16_t b, int32_t mul, int32_t shift,
                       int32_t zp, int32_t lo, int32_t hi) {
  int32_t v = zp + tn_crt_multiply_by_quantized_multiplier((int32_t)a * b,
                                                           mul, shift);
  return v < lo ? lo : v > hi ? hi : v;
}

/* One integer step: the gates from products `fc`, the int16 cell update,
 * the new hidden state as int8 (wide 0) or int16 (wide 1). */
static void step_q(const TnCrtLstm *p, const void *const *in, const void *x,
                   const void *h, void *cv, void *nv, LstmFc fc, int wide) {
  int16_t *c = cv, clip = (int16_t)p->cell_clip_q;
  int32_t lo = wide ? INT16_MIN : INT8_MIN, hi = wide ? INT16_MAX : INT8_MAX;
  for (int32_t j = 0; j < p->units; j++) {
    int16_t i = sigmoid_s16(gate_q(p, in, 0, j, x, h, fc));
    int16_t f = sigmoid_s16(gate_q(p, in, 1, j, x, h, fc));
    int16_t g = tn__crt_tanh_s16(gate_q(p, in, 2, j, x, h, fc), 0, 0);
    int16_t o = sigmoid_s16(gate_q(p, in, 3, j, x, h, fc));
    int32_t kept = mul_s16(f, c[j], p->forget_multiplier, p->forget_shift, 0,
                           INT16_MIN, INT16_MAX);
    int32_t added = mul_s16(i, g, p->input_multiplier, p->input_shift, 0,
                            INT16_MIN, INT16_MAX);
    int16_t v = sat16(kept + added);
    if (p->cell_clip > 0.0f)
      v = v > clip ? clip : v < (int16_t)-clip ? (int16_t)-clip : v;
    c[j] = v;
    int16_t tc = tn__crt_tanh_s16(v, p->cell_tanh_multiplier, p->cell_tanh_shift);
    int32_t y = mul_s16(tc, o, p->output_multiplier, p->output_shift,
                        p->hidden_zero_point, lo, hi);
    if (wide) ((int16_t *)nv)[j] = (int16_t)y;
    else ((int8_t *)nv)[j] = (int8_t)y;
  }
}

static void step_s8(const TnCrtLstm *p, const void *const *in,
                    const void *x, const void *h, void *c, void *next) {
  step_q(p, in, x, h, c, next, fc_s8, 0);
}

static void step_s16(const TnCrtLstm *p, const void *const *in,
                     const void *x, const void *h, void *c, void *next) {
  step_q(p, in, x, h, c, next, fc_s16, 1);
}

TnCrtStatus tn_crt_lstm_s8(const TnCrtLstm *p, const int8_t *x,
                           const int8_t *wi, const int8_t *wr,
                           const int32_t *bias, const int8_t *h0,
                           const int16_t *c0, void *out, void *scratch,
                           size_t scratch_size) {
  const void *in[] = {x, wi, wr, bias, h0, c0};
  return run_lstm(p, in, out, scratch, scratch_size, 2, 1, step_s8);
}

TnCrtStatus tn_crt_lstm_s16(const TnCrtLstm *p, const int16_t *x,
                            const int8_t *wi, const int8_t *wr,
                            const int64_t *bias, const int16_t *h0,
                            const int16_t *c0, int16_t *out, void *scratch,
                            size_t scratch_size) {
  const void *in[] = {x, wi, wr, bias, h0, c0};
  return run_lstm(p, in, out, scratch, scratch_size, 2, 2, step_s16);
}

/* ---- the uniform entries (tvmnode/crt/calls.h) ---------------------------- */

TN_CRT_CALL(lstm_f32, TnCrtLstm) {
  return tn_crt_lstm_f32(p, in[0], in[1], in[2], in[3], in[4], in[5], out,
                         scratch, scratch_size);
}
TN_CRT_CALL(lstm_s8, TnCrtLstm) {
  return tn_crt_lstm_s8(p, in[0], in[1], in[2], in[3], in[4], in[5], out,
                        scratch, scratch_size);
}
TN_CRT_CALL(lstm_s16, TnCrtLstm) {
  return tn_crt_lstm_s16(p, in[0], in[1], in[2], in[3], in[4], in[5], out,
                         scratch, scratch_size);
}
