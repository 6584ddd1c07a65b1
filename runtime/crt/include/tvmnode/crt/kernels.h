/*
 * tvmnode/crt/kernels.h: the operator kernels of the freestanding runtime.
 *
 * One kernel (or a small family) per operator of the IR registry, float32
 * and int8. They are what the host executor, FoldConstant and the generated
 * code all call; nothing computes an operator a second way.
 *
 * Rules every kernel follows:
 *  - Freestanding C11: no allocation, no stdio, nothing of libtvmnode; only
 *    <stdint.h>, <stddef.h>, <string.h> (memcpy/memset) and <math.h>.
 *    Three exceptions, all bit-identical to the portable C: SSE2 builtins
 *    on x86-64; AVX2 forms of hot loops there too (the int8 and float32
 *    dense dot products), compiled with a
 *    function-level target attribute and taken when CPUID says the CPU
 *    runs AVX2 (<immintrin.h>, <cpuid.h>: compiler headers, nothing
 *    linked; -DTN_CRT_NO_AVX2 leaves them out); and on
 *    Cortex-M cores with the DSP extension (__ARM_FEATURE_DSP) <arm_acle.h>
 *    and a few lines of inline assembly (SMLAD, SXTB16) in the int8
 *    convolution, dense and add kernels. The convolution's DSP forms keep
 *    their buffers (weights widened into 16-bit pairs, im2col columns) in
 *    the call's scratch, sized for that ISA by
 *    tn_crt_conv2d_s8_scratch_size_isa (at most TN_CRT_DSP_PACK_BYTES,
 *    default 4608, of pairs); with less scratch they take the unpacked
 *    loop, the same integers.
 *  - Plain typed signatures: data pointers, a parameter struct filled in by
 *    the caller (on the host, once, by the lowering table; on a device, by
 *    generated `static const` initialisers), a caller-provided scratch
 *    buffer where one is needed (its size from the matching *_scratch_size
 *    function), and a TnCrtStatus as result.
 *  - Sizes and strides are int32_t: a tensor a kernel sees has fewer than
 *    2^31 elements (the lowering checks it).
 *  - A kernel checks what is cheap to check (NULL pointers, non-positive
 *    sizes, scratch size) and returns TN_CRT_INVALID_ARGUMENT or
 *    TN_CRT_SCRATCH_TOO_SMALL; it trusts the shapes it is given to match the
 *    buffers (the lowering checked them against the IR's types).
 *  - Outputs never alias inputs unless the kernel's comment says so.
 *
 * int8 arithmetic is TFLite's reference arithmetic, bit for bit: real
 * multipliers become a Q31 multiplier and a shift (tn_crt_quantize_multiplier,
 * computed on the host; the device only sees integers), products use the
 * saturating rounding doubling high multiply, and shifts round to nearest
 * with ties away from zero.
 */
#ifndef TVMNODE_CRT_KERNELS_H_
#define TVMNODE_CRT_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TN_CRT_MAX_DIMS 8

/*
 * Parameter structs are declared from one field list each,
 * TN_CRT_FIELDS_<Type>(F, T), whose entries are
 *   F(T, S, type, name)         a scalar: int32_t, uint32_t or float
 *   F(T, A, type, name, count)  an inline array of `count` elements
 *   F(T, P, type, name, field)  a pointer to constant elements, as many as
 *                               the int32_t scalar `field` of the struct
 *   F(T, N, type, name)         a nested parameter struct
 * TN_CRT_STRUCT(Type) makes the C struct of the list; the code generator
 * walks the same list to write a struct as a `static const` initialiser
 * (and the host's lowering table fills it), so a field cannot be added to
 * the struct and be missed by the generated code.
 */
#define TN_CRT__FIELD(T, shape, ...) TN_CRT__FIELD_##shape(__VA_ARGS__)
#define TN_CRT__FIELD_S(type, name) type name;
#define TN_CRT__FIELD_A(type, name, n) type name[n];
#define TN_CRT__FIELD_P(type, name, count) const type *name;
#define TN_CRT__FIELD_N(type, name) type name;
#define TN_CRT_STRUCT(Type) \
  typedef struct { TN_CRT_FIELDS_##Type(TN_CRT__FIELD, Type) } Type

/* ------------------------------------------------------------------------ */
/* Instruction-set levels of the x86 forms                                   */
/* ------------------------------------------------------------------------ */

/* The ISA forms a host crt may take, in order: each level runs the forms
 * of the levels below it. TN_CRT_ISA_AVXVNNI is a flag beside the level
 * (VEX-encoded VNNI exists on CPUs without AVX-512). */
enum {
  TN_CRT_ISA_PORTABLE = 0,
  TN_CRT_ISA_SSE2 = 1,
  TN_CRT_ISA_SSE41 = 2,
  TN_CRT_ISA_AVX2 = 3,
  TN_CRT_ISA_AVX512BW = 4,
  TN_CRT_ISA_AVX512VNNI = 5,
  TN_CRT_ISA_LEVEL_MASK = 0xff,
  TN_CRT_ISA_AVXVNNI = 0x100,
  /* the cap between AVX2 and AVX-512: AVX2 and the AVX-VNNI forms */
  TN_CRT_ISA_AVX2_VNNI = TN_CRT_ISA_AVX2 | TN_CRT_ISA_AVXVNNI,
  /* Cortex-M with the DSP extension: a target the compiler sizes kernel
   * scratch for (tn_crt_conv2d_s8_scratch_size_isa), never a level
   * tn_crt_isa returns. */
  TN_CRT_ISA_ARM_DSP = 0x200
};

/* The level whose forms run here: what CPUID and XGETBV say the CPU and
 * the OS support (asked once), at most the limit; the AVX-VNNI flag only
 * where the CPU has it and the limit is above AVX2 or is
 * TN_CRT_ISA_AVX2_VNNI (a cap of TN_CRT_ISA_AVX2 drops it). TN_CRT_ISA_PORTABLE where the crt has no
 * ISA forms (not x86-64 with GNU C). The SSE2 forms are part of every
 * x86-64 build (gcc itself vectorises the portable C for SSE2): levels
 * below AVX2 all run them. */
int tn_crt_isa(void);

/* Caps the level at `level` (TN_CRT_ISA_AVX512VNNI or more: no cap;
 * TN_CRT_ISA_AVX2_VNNI: AVX2 and the AVX-VNNI forms) for every later call
 * of this copy of the crt (a negative level changes nothing); returns the
 * level now in effect, as tn_crt_isa. */
int tn_crt_isa_limit(int level);

/* ------------------------------------------------------------------------ */
/* Fixed-point helpers (TFLite semantics)                                    */
/* ------------------------------------------------------------------------ */

/* The Q31 multiplier and shift of a real multiplier `m` (>= 0): m ==
 * multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) or 0, as TFLite's
 * QuantizeMultiplier in its default (double-rounding) build: multipliers
 * below 2^-32 give 0 (shift 0). TN_CRT_INVALID_ARGUMENT for a negative, NaN
 * or infinite m, TN_CRT_UNSUPPORTED for m >= 2^31 (a shift above 31).
 * Host side: uses frexp. */
TnCrtStatus tn_crt_quantize_multiplier(double m, int32_t *multiplier,
                                       int32_t *shift);
/* a * b / 2^31 rounded to nearest, ties toward +infinity, saturated
 * (INT32_MIN * INT32_MIN gives INT32_MAX): TFLite's
 * SaturatingRoundingDoublingHighMul. */
int32_t tn_crt_srdhm(int32_t a, int32_t b);
/* x / 2^exponent rounded to nearest, ties away from zero (TFLite's range
 * is 0 <= exponent <= 31; below it x is returned, above it 0). */
int32_t tn_crt_rounding_divide_by_pot(int32_t x, int32_t exponent);
/* x * multiplier * 2^(shift - 31), TFLite's (double-rounding)
 * MultiplyByQuantizedMultiplier: a positive shift is a left shift of x
 * (wrapping on overflow) before the high multiply, a negative one a
 * rounding right shift after it. */
int32_t tn_crt_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                int32_t shift);

/* ------------------------------------------------------------------------ */
/* Elementwise and broadcasting                                              */
/* ------------------------------------------------------------------------ */

/* A broadcast of two operands to an output of `ndim` dims: element strides
 * of each operand per output dim (0 where the operand is broadcast). The
 * lowering merges adjacent dims, so most calls have ndim 1 or 2. */
#define TN_CRT_FIELDS_TnCrtBroadcast(F, T)       \
  F(T, S, int32_t, ndim) /* 1..TN_CRT_MAX_DIMS */ \
  F(T, A, int32_t, dims, TN_CRT_MAX_DIMS)        \
  F(T, A, int32_t, lhs_strides, TN_CRT_MAX_DIMS) \
  F(T, A, int32_t, rhs_strides, TN_CRT_MAX_DIMS)
TN_CRT_STRUCT(TnCrtBroadcast);

typedef enum {
  TN_CRT_ADD = 0,
  TN_CRT_SUB = 1,
  TN_CRT_MUL = 2,
  TN_CRT_DIV = 3, /* integer: C division, and TN_CRT_INVALID_ARGUMENT on 0 */
  TN_CRT_MAX = 4,
  TN_CRT_MIN = 5
} TnCrtBinaryOp;

/* out = lhs (op) rhs with broadcasting; out is dense in `b->dims`. */
TnCrtStatus tn_crt_binary_f32(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                              const float *lhs, const float *rhs, float *out);
TnCrtStatus tn_crt_binary_i32(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                              const int32_t *lhs, const int32_t *rhs,
                              int32_t *out);

typedef enum {
  TN_CRT_NEGATIVE = 0,
  TN_CRT_EXP = 1,
  TN_CRT_SIGMOID = 2,
  TN_CRT_TANH = 3,
  TN_CRT_RELU = 4
} TnCrtUnaryOp;

/* out[i] = op(in[i]) for n elements; out may be in. */
TnCrtStatus tn_crt_unary_f32(TnCrtUnaryOp op, int32_t n, const float *in,
                             float *out);
/* Negative and relu on int32 (the other ops are float only). */
TnCrtStatus tn_crt_unary_i32(TnCrtUnaryOp op, int32_t n, const int32_t *in,
                             int32_t *out);

/* out[i] = min(max(in[i], lo), hi); out may be in. */
TnCrtStatus tn_crt_clip_f32(int32_t n, const float *in, float lo, float hi,
                            float *out);
TnCrtStatus tn_crt_clip_i32(int32_t n, const int32_t *in, int32_t lo,
                            int32_t hi, int32_t *out);
TnCrtStatus tn_crt_clip_s8(int32_t n, const int8_t *in, int32_t lo, int32_t hi,
                           int8_t *out);

/* Element types the shape kernels and cast know, in the one table every
 * mapping is made from: X(name, code, DLPack type code, bits, C type, Rust
 * type). DLPack's codes: 0 int, 1 uint, 2 float, 6 bool (one byte, 0 or 1).
 */
#define TN_CRT_DTYPES(X)                      \
  X(TN_CRT_F32, 0, 2, 32, float, f32)         \
  X(TN_CRT_I32, 1, 0, 32, int32_t, i32)       \
  X(TN_CRT_I8, 2, 0, 8, int8_t, i8)           \
  X(TN_CRT_U8, 3, 1, 8, uint8_t, u8)          \
  X(TN_CRT_I64, 4, 0, 64, int64_t, i64)       \
  X(TN_CRT_F64, 5, 2, 64, double, f64)        \
  X(TN_CRT_I16, 6, 0, 16, int16_t, i16)       \
  X(TN_CRT_BOOL, 7, 6, 8, uint8_t, u8)
typedef enum {
#define TN_CRT__DTYPE_ENUM(name, code, dl, bits, c, rs) name = code,
  TN_CRT_DTYPES(TN_CRT__DTYPE_ENUM)
#undef TN_CRT__DTYPE_ENUM
} TnCrtDType;

/* out[i] = (to) in[i] for n elements. Float to integer truncates toward
 * zero and saturates (NaN becomes 0); integer to narrower integer
 * saturates; anything to bool is (x != 0). */
TnCrtStatus tn_crt_cast(TnCrtDType from, TnCrtDType to, int32_t n,
                        const void *in, void *out);

/* out[outer][c][inner] = in[...] + bias[c], float32 and int32 (the
 * accumulator of an int8 convolution); out may be in. */
TnCrtStatus tn_crt_bias_add_f32(int32_t outer, int32_t channels,
                                int32_t inner, const float *in,
                                const float *bias, float *out);
TnCrtStatus tn_crt_bias_add_i32(int32_t outer, int32_t channels,
                                int32_t inner, const int32_t *in,
                                const int32_t *bias, int32_t *out);

/* ------------------------------------------------------------------------ */
/* Data movement (any element type, by element size in bytes: 1, 2, 4, 8)    */
/* ------------------------------------------------------------------------ */

/* out = transpose(in): out dim i is in dim perm[i]. */
#define TN_CRT_FIELDS_TnCrtTranspose(F, T)   \
  F(T, S, int32_t, ndim)                     \
  F(T, A, int32_t, in_dims, TN_CRT_MAX_DIMS) \
  F(T, A, int32_t, perm, TN_CRT_MAX_DIMS)    \
  F(T, S, int32_t, elem_size)
TN_CRT_STRUCT(TnCrtTranspose);
TnCrtStatus tn_crt_transpose(const TnCrtTranspose *p, const void *in,
                             void *out);

/* Concatenation along one axis seen as [outer, axis_i * inner] blocks:
 * input i contributes sizes[i] bytes per outer row (axis extent x inner x
 * element size); out rows are the sum. sizes[i] may be 0 (inputs[i] may
 * then be NULL). */
TnCrtStatus tn_crt_concatenate(int32_t n_inputs, const void *const *inputs,
                               const int32_t *sizes, int32_t outer,
                               void *out);

/* Constant padding: out dims = in dims + before + after per dim; the pad
 * element is the elem_size bytes at `pad_value`. before and after are
 * >= 0. */
#define TN_CRT_FIELDS_TnCrtPad(F, T)         \
  F(T, S, int32_t, ndim)                     \
  F(T, A, int32_t, in_dims, TN_CRT_MAX_DIMS) \
  F(T, A, int32_t, before, TN_CRT_MAX_DIMS)  \
  F(T, A, int32_t, after, TN_CRT_MAX_DIMS)   \
  F(T, S, int32_t, elem_size)
TN_CRT_STRUCT(TnCrtPad);
TnCrtStatus tn_crt_pad(const TnCrtPad *p, const void *in,
                       const void *pad_value, void *out);

/* Strided slice: out[i0, i1, ...] = in[begin[0] + i0 * strides[0], ...],
 * out_dims[d] indices per dim. strides are non-zero and may be negative;
 * every index read, begin[d] + (out_dims[d] - 1) * strides[d], lies in
 * [0, in_dims[d]) (else TN_CRT_INVALID_ARGUMENT). An out dim of 0 is an
 * empty result (nothing is read or written). */
#define TN_CRT_FIELDS_TnCrtStridedSlice(F, T) \
  F(T, S, int32_t, ndim)                      \
  F(T, A, int32_t, in_dims, TN_CRT_MAX_DIMS)  \
  F(T, A, int32_t, begin, TN_CRT_MAX_DIMS)    \
  F(T, A, int32_t, strides, TN_CRT_MAX_DIMS)  \
  F(T, A, int32_t, out_dims, TN_CRT_MAX_DIMS) \
  F(T, S, int32_t, elem_size)
TN_CRT_STRUCT(TnCrtStridedSlice);
TnCrtStatus tn_crt_strided_slice(const TnCrtStridedSlice *p, const void *in,
                                 void *out);

/* ------------------------------------------------------------------------ */
/* Convolution, dense, pooling                                               */
/* ------------------------------------------------------------------------ */

/*
 * The geometry of a 2-D convolution, in any layout: each tensor is
 * addressed through element strides of its logical axes, so NHWC/HWIO
 * (TFLite's layout, the fast path: unit channel strides) and NCHW/OIHW use
 * the same kernels. Groups split the input and output channels; depthwise
 * is groups == in_c (with a channel multiplier out_c / in_c >= 1). The
 * weight's input-channel axis has in_c / groups entries.
 */
#define TN_CRT_FIELDS_TnCrtConv2d(F, T)                                 \
  F(T, S, int32_t, batch) F(T, S, int32_t, in_h) F(T, S, int32_t, in_w)   \
  F(T, S, int32_t, in_c)                                                \
  F(T, S, int32_t, out_h) F(T, S, int32_t, out_w) F(T, S, int32_t, out_c) \
  F(T, S, int32_t, k_h) F(T, S, int32_t, k_w)                           \
  F(T, S, int32_t, stride_h) F(T, S, int32_t, stride_w)                 \
  F(T, S, int32_t, dilation_h) F(T, S, int32_t, dilation_w)             \
  /* >= 0; bottom/right follow from the output size */                  \
  F(T, S, int32_t, pad_top) F(T, S, int32_t, pad_left)                  \
  F(T, S, int32_t, groups)                                              \
  F(T, A, int32_t, in_strides, 4)  /* n, h, w, c */                     \
  F(T, A, int32_t, w_strides, 4)   /* kh, kw, ci (in its group), co */  \
  F(T, A, int32_t, out_strides, 4) /* n, h, w, c */
TN_CRT_STRUCT(TnCrtConv2d);

/* out = act(conv(in, w) + bias); bias (out_c) may be NULL; act clamps to
 * [act_min, act_max] (pass -INFINITY/INFINITY for none). */
TnCrtStatus tn_crt_conv2d_f32(const TnCrtConv2d *p, const float *in,
                              const float *w, const float *bias,
                              float act_min, float act_max, float *out);

/* Quantization of an int8 convolution or dense layer's output, TFLite's:
 * out = clamp(mbqm(acc + bias, multiplier[c], shift[c]) + output_offset,
 *             act_min, act_max)
 * with acc = sum((x + input_offset) * (w + filter_offset)). Per-tensor
 * when per_channel is 0 (one multiplier and shift). With `scale` set the
 * rounding is ONNX Runtime's instead (multiplier and shift unused):
 * out = clamp(round_half_even((float)(acc + bias) * scale[c]) +
 *             output_offset, act_min, act_max), the product in float. */
#define TN_CRT_FIELDS_TnCrtQuant(F, T)                                   \
  F(T, S, int32_t, input_offset)  /* minus the input zero point */       \
  F(T, S, int32_t, filter_offset) /* minus the weight zero point */      \
  F(T, S, int32_t, output_offset) /* the output zero point */            \
  F(T, S, int32_t, act_min) F(T, S, int32_t, act_max)                    \
  F(T, S, int32_t, per_channel)                                          \
  F(T, S, int32_t, channels) /* entries of multiplier and shift: out_c   \
                                when per_channel, else 1 */              \
  F(T, P, int32_t, multiplier, channels)                                 \
  F(T, P, int32_t, shift, channels)                                      \
  F(T, P, float, scale, channels) /* NULL: the fixed-point multipliers */
TN_CRT_STRUCT(TnCrtQuant);

/* Scratch bytes the int8 convolutions need (0 when none). */
size_t tn_crt_conv2d_s8_scratch_size(const TnCrtConv2d *p);
/*
 * The scratch bytes a call takes to run at its best on a given ISA: for
 * TN_CRT_ISA_ARM_DSP (Cortex-M with the DSP extension) the ones above (or,
 * with in_place nonzero, tn_crt_conv2d_s8_inplace_scratch_size's, 0 where
 * the geometry is not in-place-able) plus the DSP forms' buffers (3 bytes
 * of alignment slack, then the im2col columns and per-channel sums of a
 * one-group layer with whole rows of weights, or a block's weights in
 * pairs); for any other ISA the same as the two functions above. It is
 * computed alike on every target, so that a compiler on the host sizes a
 * Cortex-M archive's scratch. A call given less (down to none, out of
 * place) takes the forms that fit, computing the same integers.
 */
size_t tn_crt_conv2d_s8_scratch_size_isa(const TnCrtConv2d *p,
                                         const TnCrtQuant *q, int32_t isa,
                                         int32_t in_place);
/*
 * The smaller scratches a call still runs its DSP forms in, below
 * tn_crt_conv2d_s8_scratch_size_isa's, largest first, in the same terms
 * (in_place alike): a block's weights in pairs for narrower blocks (8,
 * then 4 channels), then none packed. A plan whose peak is at the call may
 * give it one of them: the same integers, slower. Writes at most
 * TN_CRT_SCRATCH_LESS_MAX sizes to out, and to slower_pct (unless NULL)
 * how much slower the call is estimated to run with each, in percent of
 * its fastest form (measured on a Cortex-M4; a guide for a planner
 * weighing RAM against time, not a promise). Returns how many (0 for
 * another ISA, or when no smaller scratch changes the form).
 */
enum { TN_CRT_SCRATCH_LESS_MAX = 3 };
int32_t tn_crt_conv2d_s8_scratch_less_isa(const TnCrtConv2d *p,
                                          const TnCrtQuant *q, int32_t isa,
                                          int32_t in_place, size_t *out,
                                          uint16_t *slower_pct);
/*
 * The forms of the DSP build (TN_CRT_ISA_ARM_DSP) a call takes, as bits:
 * the blocks (BCAST, DW, DOT: every layer the others do not take, and
 * tn_crt_conv2d_s8_s32), the matrix product of one-group layers in its
 * three requantization modes (PW_FAST, PW_WIDE, PW_ANY) with its fused
 * loop (PW_FUSED: pw_pairs_fast, pw_pairs_wide) or its loop of sums
 * (PW_PAIRS), the depthwise 3x3 form (DW3) with, where one of its groups
 * of four channels is not requantized by the fast rule without a clamp
 * (a channel count not a multiple of 4, an activation that clamps, a
 * shift or multiplier outside it: DW3_ANY), its other rows' loops (which
 * double the form's code), and the loops of the calls
 * in place a row (LINES: (c) below) or a chunk (CHUNKS: (d) below, and (b)
 * where the matrix product does not take it) at a time. Defining
 * TN_CRT_CONV_S8_FORMS to a set of them when the crt is compiled leaves
 * the others out of the firmware (the code generator writes the set a
 * model's layers take; undefined, every form is in). A call that would
 * take a form left out takes the blocks or the product's plainer loops
 * instead (the same integers, slower), or returns TN_CRT_UNSUPPORTED
 * where the blocks are out too; a generated model whose layers take a
 * form left out does not compile (#error).
 */
#define TN_CRT_CONV_FORM_BLOCKS 0x01
#define TN_CRT_CONV_FORM_PW_FAST 0x02
#define TN_CRT_CONV_FORM_PW_WIDE 0x04
#define TN_CRT_CONV_FORM_PW_ANY 0x08
#define TN_CRT_CONV_FORM_PW_FUSED 0x10
#define TN_CRT_CONV_FORM_PW_PAIRS 0x20
#define TN_CRT_CONV_FORM_DW3 0x40
#define TN_CRT_CONV_FORM_LINES 0x80
#define TN_CRT_CONV_FORM_CHUNKS 0x100
#define TN_CRT_CONV_FORM_DW3_ANY 0x200
#define TN_CRT_CONV_FORM_ALL 0x3ff
/*
 * The forms (TN_CRT_CONV_FORM_*) a call on the given ISA takes with
 * scratch_size bytes of scratch (in_place as above), as an optimising
 * build compiles them; 0 for another ISA or a geometry the kernel refuses.
 */
int32_t tn_crt_conv2d_s8_forms_isa(const TnCrtConv2d *p, const TnCrtQuant *q,
                                   int32_t isa, int32_t in_place,
                                   size_t scratch_size);
/* int8 in, int8 weights, int32 bias (may be NULL), int8 out. */
TnCrtStatus tn_crt_conv2d_s8(const TnCrtConv2d *p, const TnCrtQuant *q,
                             const int8_t *in, const int8_t *w,
                             const int32_t *bias, int8_t *out, void *scratch,
                             size_t scratch_size);
/*
 * In place: tn_crt_conv2d_s8 may be called with out == in (the same
 * address) when tn_crt_conv2d_s8_inplace_ok(p), with a scratch of at least
 * tn_crt_conv2d_s8_inplace_scratch_size(p) bytes (any alignment); the
 * result is the out-of-place one, bit for bit. With out == in it returns
 * TN_CRT_INVALID_ARGUMENT for a geometry that is not in-place-able,
 * TN_CRT_SCRATCH_TOO_SMALL for a smaller scratch size (and
 * TN_CRT_INVALID_ARGUMENT for a NULL scratch that should not be). Any
 * other overlap of in and out (or of out with w, bias or scratch) is
 * undefined. tn_crt_conv2d_s8_s32 never runs in place.
 *
 * In-place-able, besides a valid geometry: both tensors dense NHWC
 * (in_strides {in_h*in_w*in_c, in_w*in_c, in_c, 1}, out_strides likewise
 * with out_c), out_h == in_h, out_w == in_w, any batch, any quantization
 * and bias, and one of
 *  (a) depthwise with multiplier 1 (groups == in_c == out_c) and
 *      stride_h == 1: any kernel size, dilation, pad_top, pad_left and
 *      stride_w (SAME padding at stride 1 is the usual case). Scratch:
 *      min(pad_top + 1, out_h) * out_w * min(out_c, 16) bytes (3x3 SAME
 *      with 16 channels or more: 2 * out_w * 16).
 *  (b) 1x1 kernel, stride 1 (both), pad_top == pad_left == 0,
 *      out_c <= in_c, any groups (pointwise). Scratch: in_c * P bytes,
 *      P = min(batch * in_h * in_w, max(1, floor(1024 / in_c))) pixels
 *      (64 channels, 16 pixels or more: 1024). With out_c < in_c the
 *      output is the buffer's first batch * in_h * in_w * out_c bytes;
 *      the bytes after it are left unspecified.
 * (A 1x1 depthwise layer is (a).) For these inplace_ok is 1. Two more
 * run in place a row or a chunk per call, a few per cent slower, for
 * plans where RAM counts (the code generator takes them for the Cortex-M):
 *  (c) any other layer of stride_h 1 and out_c <= in_c (a regular 3x3
 *      SAME convolution): inplace_ok 2. Scratch: min(pad_top + 1, out_h)
 *      * out_w * out_c bytes (whole output rows held back).
 *  (d) (b) with out_c > in_c (a pointwise layer that widens): inplace_ok
 *      3. The buffer is the output's size, the input in its first
 *      batch * in_h * in_w * in_c bytes. Scratch: (b)'s.
 * Everything else: 0.
 * tn_crt_conv2d_s8_inplace_scratch_size is 0 where inplace_ok is 0; where
 * it is not the size is at least tn_crt_conv2d_s8_scratch_size(p), so one
 * scratch buffer serves both ways of calling. Both depend only on p and
 * are the same on every target.
 */
int32_t tn_crt_conv2d_s8_inplace_ok(const TnCrtConv2d *p);
size_t tn_crt_conv2d_s8_inplace_scratch_size(const TnCrtConv2d *p);
/* tn_crt_conv2d_s8 for a 1x1 layer of one group, stride 1, no padding,
 * dense NHWC in and out, whose weight is packed (the PackDenseWeights
 * pass does it at compile time for the host): its [out_c, in_c] matrix
 * laid out by tn_crt_dense_s8_pack, whatever w_strides say. Each pixel is
 * a row of a dense layer, and the x86 forms are the packed dense layer's
 * (with an input offset of 128 and a filter offset of 0; AVX-512 VNNI
 * takes tiles of up to 8 pixels by 32 channels where in_c is a multiple
 * of 4). In place as tn_crt_conv2d_s8 (the same scratch); the same bytes
 * out as tn_crt_conv2d_s8 with the unpacked weight.
 *
 * Any other layer of one group, NHWC in and out (not in place): its
 * [out_c, k_h * k_w * in_c] matrix (the window's rows, columns, then
 * input channels) laid out by tn_crt_dense_s8_pack, a filter offset of 0,
 * and a bias that holds (io - 128) * sum(w) per output channel already
 * (mod 2^32; io the input offset, which still names the padding's value):
 * each output is the bias plus the sum over its window of (x + 128) * w,
 * x = -io at a tap outside the input; the same bytes as tn_crt_conv2d_s8
 * with the unpacked weight and bias. With AVX-512 VNNI, AVX-VNNI or AVX2
 * the row forms read the packed blocks of 16 channels where they lie;
 * other channels (and blocks whose requantization the forms do not take)
 * and other CPUs unpack up to 16 channels at a time into a buffer of
 * TN_CRT_CONV_PACKED_STACK bytes on the stack (no scratch), or, where
 * k_h * k_w * in_c exceeds it, all of them into scratch
 * (tn_crt_conv2d_s8_packed_scratch_size). Another geometry:
 * TN_CRT_INVALID_ARGUMENT. */
#define TN_CRT_CONV_PACKED_STACK 16384
size_t tn_crt_conv2d_s8_packed_scratch_size(const TnCrtConv2d *p);
TnCrtStatus tn_crt_conv2d_s8_packed(const TnCrtConv2d *p, const TnCrtQuant *q,
                                    const int8_t *in, const int8_t *w,
                                    const int32_t *bias, int8_t *out,
                                    void *scratch, size_t scratch_size);
/* The int32 accumulators alone (qnn.conv2d unfused): out = acc + bias,
 * ignoring q's output fields. */
TnCrtStatus tn_crt_conv2d_s8_s32(const TnCrtConv2d *p, int32_t input_offset,
                                 int32_t filter_offset, const int8_t *in,
                                 const int8_t *w, const int32_t *bias,
                                 int32_t *out);

/* out[m][n] = sum_k in[m][k] * w[n*w_stride_n + k*w_stride_k] (+ bias[n]):
 * nn.dense has w [N, K] (w_stride_n = K, w_stride_k = 1), matmul [K, N]. */
#define TN_CRT_FIELDS_TnCrtDense(F, T)                             \
  F(T, S, int32_t, batch) /* M: rows of in and out */              \
  F(T, S, int32_t, in_features) F(T, S, int32_t, out_features) /* K, N */ \
  F(T, S, int32_t, w_stride_n) F(T, S, int32_t, w_stride_k)
TN_CRT_STRUCT(TnCrtDense);
TnCrtStatus tn_crt_dense_f32(const TnCrtDense *p, const float *in,
                             const float *w, const float *bias, float act_min,
                             float act_max, float *out);
/* The float32 dense layer's weight packed for the x86 forms (the
 * PackDenseWeights pass does it at compile time for the host): w [n, k]
 * row-major into packed, the same n * k floats, as blocks of 16 output
 * features (the last block the n % 16 left), each block input-major, so
 * that one input meets a row of its block's weights: w[j][i] lies at
 * packed[j0 * k + i * nb + (j - j0)] for j0 = j - j % 16, nb = min(16,
 * n - j0) (weight_layout "N16K1"). */
TnCrtStatus tn_crt_dense_f32_pack(int32_t n, int32_t k, const float *w,
                                  float *packed);
/* tn_crt_dense_f32 with its weight packed by tn_crt_dense_f32_pack (p the
 * [N, K] geometry: w_stride_n = K, w_stride_k = 1). Each output is one
 * chain of multiply-adds over the inputs in order, then the bias, then
 * the clamp: fused on x86 with AVX2 + FMA or AVX-512F (the two levels give
 * the same bits), unfused in the portable C (within rounding of them). */
TnCrtStatus tn_crt_dense_f32_packed(const TnCrtDense *p, const float *in,
                                    const float *w, const float *bias,
                                    float act_min, float act_max, float *out);
size_t tn_crt_dense_s8_scratch_size(const TnCrtDense *p);
TnCrtStatus tn_crt_dense_s8(const TnCrtDense *p, const TnCrtQuant *q,
                            const int8_t *in, const int8_t *w,
                            const int32_t *bias, int8_t *out, void *scratch,
                            size_t scratch_size);
TnCrtStatus tn_crt_dense_s8_s32(const TnCrtDense *p, int32_t input_offset,
                                int32_t filter_offset, const int8_t *in,
                                const int8_t *w, const int32_t *bias,
                                int32_t *out);
/* The int8 dense layer's weight packed for the x86 forms (the
 * PackDenseWeights pass does it at compile time): w [n, k] row-major into
 * packed, the same n * k bytes, as blocks of 16 output features (the last
 * block the n % 16 left), each block's inputs in groups of 4 (the last
 * group the k % 4 left), a group holding its block's features one after
 * another, each feature's (up to) 4 weights in a row: w[j][i] lies at
 * packed[j0 * k + i0 * nb + (j - j0) * kb + (i - i0)] for j0 = j - j % 16,
 * nb = min(16, n - j0), i0 = i - i % 4, kb = min(4, k - i0). A group of a
 * full block is one 64-byte row of 16 int32 lanes, each the four bytes
 * that vpdpbusd multiplies by four input bytes. */
TnCrtStatus tn_crt_dense_s8_pack(int32_t n, int32_t k, const int8_t *w,
                                 int8_t *packed);
/* The same for the Cortex-M DSP form (PackDenseWeights does it for
 * "cortex-m"): blocks of 4 output features instead of 16, the same groups
 * (w[j][i] at packed[j0 * k + i0 * nb + (j - j0) * kb + (i - i0)] for
 * j0 = j - j % 4, nb = min(4, n - j0)): a group of a full block is one
 * word of each of its four rows, 16 bytes in a row. */
TnCrtStatus tn_crt_dense_s8_pack4(int32_t n, int32_t k, const int8_t *w,
                                  int8_t *packed);
/* A dense layer's weight layouts (TnCrtCallDenseS8's packed): [N, K],
 * tn_crt_dense_s8_pack's and tn_crt_dense_s8_pack4's. */
enum {
  TN_CRT_DENSE_NK = 0,
  TN_CRT_DENSE_N16K4 = 1,
  TN_CRT_DENSE_N4K4 = 2
};
/*
 * The forms of the dense layer a call takes, as bits, in the style of
 * TN_CRT_CONV_FORM_*: the [N, K] (and [K, N]) loops (NK: every call with
 * an unpacked weight, and tn_crt_dense_s8_s32), the packed blocks' loop
 * (PACKED: N16K4's, and N4K4's where its DSP form does not take it) and
 * N4K4's DSP form (P4_DSP: input and filter offsets 0, on a core with the
 * DSP extension). Defining TN_CRT_DENSE_S8_FORMS to a set of them when
 * the crt is compiled leaves the others out of the firmware (the code
 * generator writes the set a model's layers take, metadata.json's
 * dense_s8_forms; undefined, every form is in). A call that would take a
 * form left out returns TN_CRT_UNSUPPORTED; a generated model whose
 * layers take one does not compile (#error).
 */
#define TN_CRT_DENSE_FORM_NK 0x01
#define TN_CRT_DENSE_FORM_PACKED 0x02
#define TN_CRT_DENSE_FORM_P4_DSP 0x04
#define TN_CRT_DENSE_FORM_ALL 0x07
/* The forms (TN_CRT_DENSE_FORM_*) a call of weight layout `packed`
 * (TN_CRT_DENSE_*) takes on the given ISA (TN_CRT_ISA_*, the DSP build's
 * for TN_CRT_ISA_ARM_DSP, the portable C's otherwise); 0 for a layout or
 * quantization the kernel refuses. q NULL: tn_crt_dense_s8_s32's. */
int32_t tn_crt_dense_s8_forms_isa(const TnCrtDense *p, const TnCrtQuant *q,
                                  int32_t packed, int32_t isa);
/* tn_crt_dense_s8 with its weight packed by tn_crt_dense_s8_pack (p the
 * [N, K] geometry: w_stride_n = K, w_stride_k = 1): the same bytes out.
 * An input offset of 128 (input zero point -128, where PackDenseWeights
 * puts it, folding the difference into the bias) and a filter offset of 0
 * take the x86 forms: x ^ 0x80, which is x + 128, as the unsigned bytes of
 * vpdpbusd, with no correction. */
TnCrtStatus tn_crt_dense_s8_packed(const TnCrtDense *p, const TnCrtQuant *q,
                                   const int8_t *in, const int8_t *w,
                                   const int32_t *bias, int8_t *out);
/* tn_crt_dense_s8 with its weight packed by tn_crt_dense_s8_pack4 (p as
 * above): the same bytes out. Input and filter offsets of 0 (what
 * PackDenseWeights gives "cortex-m", the input zero point folded into the
 * bias) take the Cortex-M DSP form's loop. */
TnCrtStatus tn_crt_dense_s8_packed4(const TnCrtDense *p, const TnCrtQuant *q,
                                    const int8_t *in, const int8_t *w,
                                    const int32_t *bias, int8_t *out);
/* Batched matmul: `batches` independent products, each in [M, K] x w[K, N]
 * (w addressed by the strides), with batch strides in elements (0: shared).
 * out is [batches, M, N], dense; no bias, no clamp. */
TnCrtStatus tn_crt_batch_matmul_f32(const TnCrtDense *p, int32_t batches,
                                    int32_t in_batch_stride,
                                    int32_t w_batch_stride,
                                    int32_t in_stride_m, int32_t in_stride_k,
                                    const float *in, const float *w,
                                    float *out);

/* 2-D pooling geometry (any layout, through strides as for convolution). */
/* count_include_pad: an average divides by the in-bounds taps when 0
 * (TFLite), by k_h * k_w when 1. A window with no in-bounds tap gives
 * -INFINITY (max) or 0 (average) before the clamp (float). */
#define TN_CRT_FIELDS_TnCrtPool2d(F, T)                                 \
  F(T, S, int32_t, batch) F(T, S, int32_t, in_h) F(T, S, int32_t, in_w)   \
  F(T, S, int32_t, channels)                                            \
  F(T, S, int32_t, out_h) F(T, S, int32_t, out_w)                       \
  F(T, S, int32_t, k_h) F(T, S, int32_t, k_w)                           \
  F(T, S, int32_t, stride_h) F(T, S, int32_t, stride_w)                 \
  F(T, S, int32_t, pad_top) F(T, S, int32_t, pad_left)                  \
  F(T, S, int32_t, count_include_pad)                                   \
  F(T, A, int32_t, in_strides, 4) /* n, h, w, c */                      \
  F(T, A, int32_t, out_strides, 4)
TN_CRT_STRUCT(TnCrtPool2d);
TnCrtStatus tn_crt_max_pool2d_f32(const TnCrtPool2d *p, const float *in,
                                  float act_min, float act_max, float *out);
TnCrtStatus tn_crt_avg_pool2d_f32(const TnCrtPool2d *p, const float *in,
                                  float act_min, float act_max, float *out);
/* int8 pooling, TFLite's: max, and the average rounded half away from
 * zero ((sum +- count/2) / count); clamp to [act_min, act_max]. Input and
 * output share one quantization. An average over a window with no input
 * element (padding covering a whole window) is TN_CRT_INVALID_ARGUMENT
 * unless count_include_pad, as TFLite fails it; the max of such a window is
 * -128 before the clamp. */
TnCrtStatus tn_crt_max_pool2d_s8(const TnCrtPool2d *p, const int8_t *in,
                                 int32_t act_min, int32_t act_max,
                                 int8_t *out);
TnCrtStatus tn_crt_avg_pool2d_s8(const TnCrtPool2d *p, const int8_t *in,
                                 int32_t act_min, int32_t act_max,
                                 int8_t *out);

/* ------------------------------------------------------------------------ */
/* Reductions                                                                */
/* ------------------------------------------------------------------------ */

/* The mean over the dims of `dims` whose bit is set in `reduce_mask`; out
 * holds the other dims' elements in order (keepdims only changes the
 * shape). dims may be 0 (no element reduced: float32 gives NaN, integers
 * 0). Each output sums its elements in the input's order, then divides:
 * float32 by (float)count, as TFLite's float MEAN does (so the float
 * results are TFLite's bit for bit); int32 wraps on overflow and divides
 * truncating toward zero, as TVM's integer mean. */
#define TN_CRT_FIELDS_TnCrtReduce(F, T)        \
  F(T, S, int32_t, ndim) /* 1..TN_CRT_MAX_DIMS */ \
  F(T, A, int32_t, dims, TN_CRT_MAX_DIMS)        \
  F(T, S, uint32_t, reduce_mask) /* bit d: dim d is reduced */
TN_CRT_STRUCT(TnCrtReduce);
TnCrtStatus tn_crt_mean_f32(const TnCrtReduce *p, const float *in, float *out);
TnCrtStatus tn_crt_mean_i32(const TnCrtReduce *p, const int32_t *in,
                            int32_t *out);

/* int8 mean, TFLite's MEAN (reference_ops::QuantizedMeanOrSum) bit for bit:
 * the int32 sum of each output's elements (wrapping), less input_zp *
 * count, times input_scale / output_scale / count as a multiplier and
 * shift, plus output_zp, saturated to int8. tn_crt_mean_s8_params (host
 * side) computes them as TFLite does: QuantizeMultiplier of the scales
 * (rounded to float) ratio, then 1/count folded in with a shift of
 * floor(log2(count)), at most 32 and at most 31 + that shift. It returns
 * TN_CRT_INVALID_ARGUMENT for a scale that is not positive and finite or a
 * count < 0, TN_CRT_UNSUPPORTED for a ratio of 2^31 or more. With count 0
 * every output is 0 (TFLite leaves them so). TFLite Micro has no special
 * case for equal input and output quantization (it had one until 2023);
 * neither has this. The sums live in caller scratch (4 bytes per output). */
#define TN_CRT_FIELDS_TnCrtQMean(F, T)                               \
  F(T, S, int32_t, input_zero_point) F(T, S, int32_t, output_zero_point) \
  F(T, S, int32_t, count) /* elements per output (the reduced dims) */ \
  F(T, S, int32_t, multiplier) F(T, S, int32_t, shift)
TN_CRT_STRUCT(TnCrtQMean);
TnCrtStatus tn_crt_mean_s8_params(double input_scale, int32_t input_zp,
                                  double output_scale, int32_t output_zp,
                                  int32_t count, TnCrtQMean *out);
size_t tn_crt_mean_s8_scratch_size(const TnCrtReduce *p);
TnCrtStatus tn_crt_mean_s8(const TnCrtReduce *p, const TnCrtQMean *q,
                           const int8_t *in, int8_t *out, void *scratch,
                           size_t scratch_size);

/* ------------------------------------------------------------------------ */
/* Softmax and quantization                                                  */
/* ------------------------------------------------------------------------ */

/* Softmax over the middle axis of [outer, n, inner]; max-subtracted. */
TnCrtStatus tn_crt_softmax_f32(int32_t outer, int32_t n, int32_t inner,
                               const float *in, float *out);

/* int8 softmax over the last axis of [outer, n], TFLite's fixed-point
 * algorithm (input_beta_multiplier/left_shift and diff_min from
 * tn_crt_softmax_s8_params on the host); output scale 1/256, zero point
 * -128. tn_crt_softmax_s8_params rounds beta and the scale to float (TFLite
 * holds them as float) and returns TN_CRT_UNSUPPORTED when beta * scale *
 * 2^26 <= 1 (TFLite refuses it too). A row whose sum of exps reaches 512,
 * where TFLite aborts, comes out all -128 (every output rounds to 0). */
#define TN_CRT_FIELDS_TnCrtSoftmaxS8(F, T) \
  F(T, S, int32_t, input_multiplier)       \
  F(T, S, int32_t, input_left_shift)       \
  F(T, S, int32_t, diff_min)
TN_CRT_STRUCT(TnCrtSoftmaxS8);
TnCrtStatus tn_crt_softmax_s8_params(double beta, double input_scale,
                                     TnCrtSoftmaxS8 *out);
TnCrtStatus tn_crt_softmax_s8(const TnCrtSoftmaxS8 *p, int32_t outer,
                              int32_t n, const int8_t *in, int8_t *out);
/* The same into int16: output scale 1/65536, zero point -32768. */
TnCrtStatus tn_crt_softmax_s8_s16(const TnCrtSoftmaxS8 *p, int32_t outer,
                                  int32_t n, const int8_t *in, int16_t *out);

/* float32 -> int8: clamp(round(in / scale) + zero_point, -128, 127), round
 * half away from zero, the division in float as TFLite does. Per channel
 * over [outer, channels, inner] when channels > 1 (scale and zero_point
 * have `channels` entries), else one of each. Values beyond the int32
 * range saturate and NaN gives the zero point (undefined in TFLite). */
TnCrtStatus tn_crt_quantize_f32_s8(int32_t outer, int32_t channels,
                                   int32_t inner, const float *in,
                                   const float *scale,
                                   const int32_t *zero_point, int8_t *out);
/* The same, rounding half to even (ONNX's QuantizeLinear). */
TnCrtStatus tn_crt_quantize_f32_s8_even(int32_t outer, int32_t channels,
                                        int32_t inner, const float *in,
                                        const float *scale,
                                        const int32_t *zero_point,
                                        int8_t *out);
/* int8 -> float32: (float)(scale * (in - zero_point)), the product in
 * double as TFLite does. */
TnCrtStatus tn_crt_dequantize_s8_f32(int32_t outer, int32_t channels,
                                     int32_t inner, const int8_t *in,
                                     const float *scale,
                                     const int32_t *zero_point, float *out);
/* int32 (or int8) -> int8 with a new scale: per channel over [outer,
 * channels, inner], out = clamp(mbqm(x - in_zp, multiplier[c], shift[c]) +
 * out_zp, act_min, act_max); with `scale` set (int32 -> int8 only),
 * ONNX Runtime's: clamp(round_half_even((float)(x - in_zp) * scale[c]) +
 * out_zp, act_min, act_max), the product in float. */
#define TN_CRT_FIELDS_TnCrtRequant(F, T)                      \
  F(T, S, int32_t, input_zero_point)                          \
  F(T, S, int32_t, output_zero_point)                         \
  F(T, S, int32_t, act_min) F(T, S, int32_t, act_max)         \
  F(T, S, int32_t, channels) /* entries of multiplier, shift */ \
  F(T, P, int32_t, multiplier, channels)                      \
  F(T, P, int32_t, shift, channels)                           \
  F(T, P, float, scale, channels) /* NULL: multiplier, shift */
TN_CRT_STRUCT(TnCrtRequant);
TnCrtStatus tn_crt_requantize_s32_s8(const TnCrtRequant *p, int32_t outer,
                                     int32_t channels, int32_t inner,
                                     const int32_t *in, int8_t *out);
TnCrtStatus tn_crt_requantize_s8_s8(const TnCrtRequant *p, int32_t outer,
                                    int32_t channels, int32_t inner,
                                    const int8_t *in, int8_t *out);

/* int8 add and mul with broadcasting, TFLite's (ADD: both inputs rescaled
 * to twice the larger scale with a left shift of 20; MUL: one multiplier
 * for s_lhs * s_rhs / s_out). Parameters from tn_crt_qadd_params /
 * tn_crt_qmul_params on the host. The params functions round the scales to
 * float and need int8 zero points (else TN_CRT_INVALID_ARGUMENT);
 * TN_CRT_UNSUPPORTED when a multiplier TFLite requires below one is not
 * (ADD: 2 max(s_lhs, s_rhs) >= 2^20 s_out). act_min/act_max come out as
 * -128/127: narrow them for a fused activation. */
#define TN_CRT_FIELDS_TnCrtQBinary(F, T)                                  \
  /* -zp, -zp, +zp */                                                     \
  F(T, S, int32_t, lhs_offset) F(T, S, int32_t, rhs_offset)               \
  F(T, S, int32_t, output_offset)                                         \
  F(T, S, int32_t, left_shift)                                            \
  F(T, S, int32_t, lhs_multiplier) F(T, S, int32_t, lhs_shift)            \
  F(T, S, int32_t, rhs_multiplier) F(T, S, int32_t, rhs_shift)            \
  F(T, S, int32_t, output_multiplier) F(T, S, int32_t, output_shift)      \
  F(T, S, int32_t, act_min) F(T, S, int32_t, act_max)
TN_CRT_STRUCT(TnCrtQBinary);
TnCrtStatus tn_crt_qadd_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out);
TnCrtStatus tn_crt_qmul_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out);
TnCrtStatus tn_crt_qadd_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs, int8_t *out);
/* The scratch tn_crt_call_qadd_s8 takes for isa (TN_CRT_ISA_ARM_DSP: 2 KB,
 * two tables of each operand's 256 scaled inputs, for calls of 256
 * elements and more whose parameters the table form takes; 0 otherwise).
 * Given it, the call computes the same integers faster; given less, it
 * runs as tn_crt_qadd_s8. */
size_t tn_crt_qadd_s8_scratch_size_isa(const TnCrtQBinary *p,
                                       const TnCrtBroadcast *b, int32_t isa);
TnCrtStatus tn_crt_qmul_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs, int8_t *out);

/* int8 logistic and tanh, TFLite's (a 256-entry table computed on the host
 * from the input and output quantization, as TFLite builds it for int8;
 * the device only looks it up). The input scale is rounded to float and the
 * zero point must be int8 (else TN_CRT_INVALID_ARGUMENT);
 * TN_CRT_UNSUPPORTED unless the output is 1/256, -128 (logistic) or 1/128,
 * 0 (tanh), or for input scales below 2^-28. */
#define TN_CRT_FIELDS_TnCrtLut8(F, T) \
  F(T, A, int8_t, table, 256) /* indexed by (uint8_t)input */
TN_CRT_STRUCT(TnCrtLut8);
TnCrtStatus tn_crt_logistic_s8_table(double in_scale, int32_t in_zp,
                                     double out_scale, int32_t out_zp,
                                     TnCrtLut8 *out);
TnCrtStatus tn_crt_tanh_s8_table(double in_scale, int32_t in_zp,
                                 double out_scale, int32_t out_zp,
                                 TnCrtLut8 *out);
TnCrtStatus tn_crt_lut_s8(const TnCrtLut8 *t, int32_t n, const int8_t *in,
                          int8_t *out);

/* ------------------------------------------------------------------------ */
/* Resizing (NHWC), TFLite's RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR     */
/* ------------------------------------------------------------------------ */

/* [batch, in_h, in_w, channels] -> [batch, out_h, out_w, channels]. The
 * source coordinate of output index v is v * scale, or (v + 0.5) * scale -
 * 0.5 with half_pixel_centers, scale in / out, or (in - 1) / (out - 1) with
 * align_corners (not both: TN_CRT_INVALID_ARGUMENT). Nearest neighbour
 * floors it (rounds it half away from zero with align_corners; with
 * half_pixel_centers it is (v + 0.5) * scale, floored) and copies pixels of
 * elem_size-byte elements, so it takes any dtype; bilinear is float32
 * (float weights) or int8 (TFLite's 10-bit fixed point, its default
 * double-rounding build: the sum of the four weighted values divided by
 * 2^20, rounded half away from zero). The quantization passes through. */
#define TN_CRT_FIELDS_TnCrtResize(F, T)                                 \
  F(T, S, int32_t, batch) F(T, S, int32_t, in_h) F(T, S, int32_t, in_w)   \
  F(T, S, int32_t, channels)                                            \
  F(T, S, int32_t, out_h) F(T, S, int32_t, out_w)                       \
  F(T, S, int32_t, align_corners) F(T, S, int32_t, half_pixel_centers)  \
  F(T, S, int32_t, elem_size) /* nearest neighbour: 1, 2, 4 or 8 */
TN_CRT_STRUCT(TnCrtResize);
TnCrtStatus tn_crt_resize_nearest(const TnCrtResize *p, const void *in,
                                  void *out);
TnCrtStatus tn_crt_resize_bilinear_f32(const TnCrtResize *p, const float *in,
                                       float *out);
TnCrtStatus tn_crt_resize_bilinear_s8(const TnCrtResize *p, const int8_t *in,
                                      int8_t *out);

/* ------------------------------------------------------------------------ */
/* Batched matrix products, TFLite's BATCH_MATMUL                            */
/* ------------------------------------------------------------------------ */

/* out[i][r][c] = sum_k a[i][r][k] * b[i][k][c] over the batch index i of
 * `dims` (ndim of them), out dense [dims..., m, n]. Every operand is read
 * through element strides: per batch dim (0 where that operand is
 * broadcast) and per matrix axis, so transposed operands (adj_x, adj_y)
 * are read where they lie. The int8 form adds the offsets (minus the zero
 * points) before multiplying and writes the int32 sums. */
#define TN_CRT_FIELDS_TnCrtBatchMatmul(F, T)                           \
  F(T, S, int32_t, ndim) /* 1..4 */                                    \
  F(T, A, int32_t, dims, 4) F(T, A, int32_t, a_strides, 4)             \
  F(T, A, int32_t, b_strides, 4)                                       \
  F(T, S, int32_t, m) F(T, S, int32_t, n) F(T, S, int32_t, k)          \
  F(T, S, int32_t, a_stride_m) F(T, S, int32_t, a_stride_k)            \
  F(T, S, int32_t, b_stride_k) F(T, S, int32_t, b_stride_n)
TN_CRT_STRUCT(TnCrtBatchMatmul);
TnCrtStatus tn_crt_bmm_f32(const TnCrtBatchMatmul *p, const float *a,
                           const float *b, float *out);
TnCrtStatus tn_crt_bmm_s8_s32(const TnCrtBatchMatmul *p, int32_t a_offset,
                              int32_t b_offset, const int8_t *a,
                              const int8_t *b, int32_t *out);

/* ------------------------------------------------------------------------ */
/* Transposed convolution, TFLite's TRANSPOSE_CONV                           */
/* ------------------------------------------------------------------------ */

/* NHWC in [batch, in_h, in_w, in_c], OHWI weight [out_c, k_h, k_w, in_c],
 * NHWC out: input pixel (iy, ix) reaches output (iy * stride_h - pad_top +
 * fy, ix * stride_w - pad_left + fx) for every tap (fy, fx) landing inside
 * the output. float32: the sums (no bias, no clamp); int8: the int32 sums
 * of (x + input_offset) * w. */
#define TN_CRT_FIELDS_TnCrtConvTranspose(F, T)                          \
  F(T, S, int32_t, batch) F(T, S, int32_t, in_h) F(T, S, int32_t, in_w)   \
  F(T, S, int32_t, in_c)                                                \
  F(T, S, int32_t, out_h) F(T, S, int32_t, out_w) F(T, S, int32_t, out_c) \
  F(T, S, int32_t, k_h) F(T, S, int32_t, k_w)                           \
  F(T, S, int32_t, stride_h) F(T, S, int32_t, stride_w)                 \
  F(T, S, int32_t, pad_top) F(T, S, int32_t, pad_left)
TN_CRT_STRUCT(TnCrtConvTranspose);
TnCrtStatus tn_crt_conv2d_transpose_f32(const TnCrtConvTranspose *p,
                                        const float *in, const float *w,
                                        float *out);
TnCrtStatus tn_crt_conv2d_transpose_s8_s32(const TnCrtConvTranspose *p,
                                           int32_t input_offset,
                                           const int8_t *in, const int8_t *w,
                                           int32_t *out);

/* Elementwise math (math.c) and the other int8 elementwise operators        */
/* (qelementwise.c)                                                          */
/* ------------------------------------------------------------------------ */

typedef enum {
  TN_CRT_ABS = 0,
  TN_CRT_SQRT = 1,
  TN_CRT_RSQRT = 2, /* 1 / sqrt(x), TFLite's 1.f / std::sqrt(f) */
  TN_CRT_LOG = 3,
  TN_CRT_ELU = 4,       /* x < 0 ? exp(x) - 1 : x */
  TN_CRT_HARD_SWISH = 5 /* x * min(6, max(0, x + 3)) / 6 */
} TnCrtMathOp;

/* out[i] = op(in[i]) for n float32 elements, as TFLite's ABS, SQRT,
 * RSQRT, LOG, ELU and HARD_SWISH compute them; out may be in. */
TnCrtStatus tn_crt_math_f32(TnCrtMathOp op, int32_t n, const float *in,
                            float *out);

/* int8 MAXIMUM and MINIMUM (op TN_CRT_MAX or TN_CRT_MIN) with broadcasting,
 * TFLite's: the raw int8 values compared, whatever their quantization. */
TnCrtStatus tn_crt_minmax_s8(TnCrtBinaryOp op, const TnCrtBroadcast *b,
                             const int8_t *lhs, const int8_t *rhs,
                             int8_t *out);

/* int8 SUB with broadcasting, TFLite's: ADD's arithmetic with the rescaled
 * rhs subtracted. tn_crt_qsub_params computes the parameters as TFLM's
 * CalculateOpDataSub does (its multipliers' ratios in float, not double as
 * ADD's are), with tn_crt_qadd_params's conditions and results. */
TnCrtStatus tn_crt_qsub_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out);
TnCrtStatus tn_crt_qsub_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs, int8_t *out);

/* int8 SQUARED_DIFFERENCE and PRELU with broadcasting, TFLite's
 * (squared_difference.cc, reference/prelu.h), with the parameters their
 * Prepare computes (the *_params functions, conditions and results as
 * tn_crt_qadd_params's). PRELU's rhs is alpha, in its own quantization. */
TnCrtStatus tn_crt_qsquared_difference_params(double lhs_scale, int32_t lhs_zp,
                                              double rhs_scale, int32_t rhs_zp,
                                              double out_scale, int32_t out_zp,
                                              TnCrtQBinary *out);
TnCrtStatus tn_crt_qprelu_params(double in_scale, int32_t in_zp,
                                 double alpha_scale, int32_t alpha_zp,
                                 double out_scale, int32_t out_zp,
                                 TnCrtQBinary *out);
TnCrtStatus tn_crt_qsquared_difference_s8(const TnCrtQBinary *p,
                                          const TnCrtBroadcast *b,
                                          const int8_t *lhs,
                                          const int8_t *rhs, int8_t *out);
TnCrtStatus tn_crt_qprelu_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                             const int8_t *data, const int8_t *alpha,
                             int8_t *out);

/* float PRELU with broadcasting: data where >= 0, else data * alpha. */
TnCrtStatus tn_crt_prelu_f32(const TnCrtBroadcast *b, const float *data,
                             const float *alpha, float *out);

/* The 256-entry tables (for tn_crt_lut_s8) of TFLite's int8 LEAKY_RELU,
 * ABS and RSQRT, each filled by running TFLM's reference arithmetic for
 * every input value (leaky_relu.h; elementwise.cc's AbsEvalQuantized and
 * RsqrtEvalQuantized) with the multipliers its Prepare computes. Scales
 * are rounded to float as TFLite holds them; TN_CRT_INVALID_ARGUMENT for a
 * scale that is not positive and finite or a zero point outside int8,
 * TN_CRT_UNSUPPORTED for a rescale no Q31 multiplier holds. RSQRT of an
 * input below the zero point is an error in TFLM (it fails the run); its
 * entry here is the int8 maximum, as for the input equal to the zero
 * point. */
TnCrtStatus tn_crt_leaky_relu_s8_table(double in_scale, int32_t in_zp,
                                       double alpha, double out_scale,
                                       int32_t out_zp, TnCrtLut8 *out);
TnCrtStatus tn_crt_abs_s8_table(double in_scale, int32_t in_zp,
                                double out_scale, int32_t out_zp,
                                TnCrtLut8 *out);
TnCrtStatus tn_crt_rsqrt_s8_table(double in_scale, int32_t in_zp,
                                  double out_scale, int32_t out_zp,
                                  TnCrtLut8 *out);
/* The same for HARD_SWISH (reference_ops::HardSwish's int16 fixed point;
 * TN_CRT_UNSUPPORTED where TFLM's Prepare refuses an output multiplier
 * above one) and ELU (TFLM's own table: dequantize, expf(x) - 1 below
 * zero, requantize in float). */
TnCrtStatus tn_crt_hard_swish_s8_table(double in_scale, int32_t in_zp,
                                       double out_scale, int32_t out_zp,
                                       TnCrtLut8 *out);
TnCrtStatus tn_crt_elu_s8_table(double in_scale, int32_t in_zp,
                                double out_scale, int32_t out_zp,
                                TnCrtLut8 *out); \
/* ------------------------------------------------------------------------ */
/* Normalisation over the last axis, TFLite's L2_NORMALIZATION, LOG_SOFTMAX   */
/* ------------------------------------------------------------------------ */

/* Rows of n over [outer, n]. L2: x / max(sqrt(sum x^2), eps) (float32), or
 * TFLite's fixed-point form (int8 in, output scale 1/128, zero point 0;
 * an all-zero row has its inverse norm taken as the largest multiplier, as
 * TFLite does). Log-softmax (float32): x - max - log(sum(exp(x - max))). */
TnCrtStatus tn_crt_l2_normalize_f32(int32_t outer, int32_t n, float eps,
                                    const float *in, float *out);
TnCrtStatus tn_crt_l2_normalize_s8(int32_t outer, int32_t n,
                                   int32_t input_zero_point, const int8_t *in,
                                   int8_t *out);
TnCrtStatus tn_crt_log_softmax_f32(int32_t outer, int32_t n, const float *in,
                                   float *out);
/* int8 log-softmax, TFLite's LogSoftmaxQuantized (output scale 16/256, zero
 * point 127): the input scaling and diff_min of the int8 softmax with beta
 * 1 (tn_crt_softmax_s8_params), and the reverse scaling that bounds which
 * differences still show, from tn_crt_log_softmax_s8_params on the host
 * (TN_CRT_UNSUPPORTED where TFLite refuses the input scale). */
#define TN_CRT_FIELDS_TnCrtLogSoftmaxS8(F, T)                           \
  F(T, S, int32_t, input_multiplier) F(T, S, int32_t, input_left_shift)   \
  F(T, S, int32_t, diff_min)                                            \
  F(T, S, int32_t, reverse_multiplier) F(T, S, int32_t, reverse_shift)
TN_CRT_STRUCT(TnCrtLogSoftmaxS8);
TnCrtStatus tn_crt_log_softmax_s8_params(double input_scale,
                                         TnCrtLogSoftmaxS8 *out);
TnCrtStatus tn_crt_log_softmax_s8(const TnCrtLogSoftmaxS8 *p, int32_t outer,
                                  int32_t n, const int8_t *in, int8_t *out);

/* The QUANTIZE and DEQUANTIZE pairs beyond int8 (quant16.c), TFLite
 * Micro's: float32 -> int16 is tn_crt_quantize_f32_s8 with the int16 clamp;
 * int16 and uint8 -> float32 are tn_crt_dequantize_s8_f32's arithmetic.
 * tn_crt_requantize_int is TFLite's Requantize between any two of int8,
 * uint8, int16 and int32 (`from`, `to`: TN_CRT_I8, TN_CRT_U8, TN_CRT_I16,
 * TN_CRT_I32), the result clamped to p's act range narrowed to `to`'s. */
TnCrtStatus tn_crt_quantize_f32_s16(int32_t outer, int32_t channels,
                                    int32_t inner, const float *in,
                                    const float *scale,
                                    const int32_t *zero_point, int16_t *out);
TnCrtStatus tn_crt_dequantize_s16_f32(int32_t outer, int32_t channels,
                                      int32_t inner, const int16_t *in,
                                      const float *scale,
                                      const int32_t *zero_point, float *out);
TnCrtStatus tn_crt_dequantize_u8_f32(int32_t outer, int32_t channels,
                                     int32_t inner, const uint8_t *in,
                                     const float *scale,
                                     const int32_t *zero_point, float *out);
/* out = min(max(in, lo), hi) on int16, lo and hi narrowed to int16 first
 * (a 16x8 layer's fused activation). */
TnCrtStatus tn_crt_clip_s16(int32_t n, const int16_t *in, int32_t lo,
                            int32_t hi, int16_t *out);
/* int16 max and average pooling (pool_s16.c): tn_crt_max_pool2d_s8's
 * arithmetic on int16. */
TnCrtStatus tn_crt_max_pool2d_s16(const TnCrtPool2d *p, const int16_t *in,
                                  int32_t act_min, int32_t act_max,
                                  int16_t *out);
TnCrtStatus tn_crt_avg_pool2d_s16(const TnCrtPool2d *p, const int16_t *in,
                                  int32_t act_min, int32_t act_max,
                                  int16_t *out);
/* int16 ADD and MUL with broadcasting (add_s16.c): the int8 arithmetic
 * with ADD's left shift 15, zero points 0 (TFLite's symmetric int16);
 * the params functions round the scales to float (else
 * TN_CRT_INVALID_ARGUMENT) and give TN_CRT_UNSUPPORTED where TFLite's
 * multipliers would not be below one. */
TnCrtStatus tn_crt_qadd_s16_params(double lhs_scale, double rhs_scale,
                                   double out_scale, TnCrtQBinary *out);
TnCrtStatus tn_crt_qmul_s16_params(double lhs_scale, double rhs_scale,
                                   double out_scale, TnCrtQBinary *out);
TnCrtStatus tn_crt_qadd_s16(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                            const int16_t *lhs, const int16_t *rhs,
                            int16_t *out);
TnCrtStatus tn_crt_qmul_s16(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                            const int16_t *lhs, const int16_t *rhs,
                            int16_t *out);
/* int16 MEAN (pool_s16.c): tn_crt_mean_s8 on int16, with its parameters
 * (tn_crt_mean_s8_params) and scratch size. */
TnCrtStatus tn_crt_mean_s16(const TnCrtReduce *p, const TnCrtQMean *q,
                            const int16_t *in, int16_t *out, void *scratch,
                            size_t scratch_size);
/* The 16x8 layers' accumulation (conv_s16.c): int16 data, int8 weights,
 * int64 sums of (w + filter_offset) * x, TFLite's with an int64 bias type;
 * then tn_crt_bias_add_i64 and tn_crt_requantize_int from TN_CRT_I64. */
TnCrtStatus tn_crt_conv2d_s16_s64(const TnCrtConv2d *p, int32_t filter_offset,
                                  const int16_t *in, const int8_t *w,
                                  int64_t *out);
TnCrtStatus tn_crt_dense_s16_s64(const TnCrtDense *p, int32_t filter_offset,
                                 const int16_t *in, const int8_t *w,
                                 int64_t *out);
/* The fused 16x8 layers: the sums above plus the int64 bias (or none),
 * then TFLite's 64-bit MultiplyByQuantizedMultiplier per output channel
 * (r's multiplier and shift, one or one per channel; its input zero point
 * must be 0), plus r's output zero point, clamped to [act_min, act_max]
 * within int16: the unfused conv/dense, bias add and requantize_int, with
 * no int64 tensor. */
TnCrtStatus tn_crt_conv2d_s16(const TnCrtConv2d *p, int32_t filter_offset,
                              const TnCrtRequant *r, const int16_t *in,
                              const int8_t *w, const int64_t *bias,
                              int16_t *out);
TnCrtStatus tn_crt_dense_s16(const TnCrtDense *p, int32_t filter_offset,
                             const TnCrtRequant *r, const int16_t *in,
                             const int8_t *w, const int64_t *bias,
                             int16_t *out);
TnCrtStatus tn_crt_bias_add_i64(int32_t outer, int32_t channels,
                                int32_t inner, const int64_t *in,
                                const int64_t *bias, int64_t *out);
/* `from` may also be TN_CRT_I64 (a 16x8 layer's sums), multiplied as
 * TFLite's 64-bit MultiplyByQuantizedMultiplier does. */
TnCrtStatus tn_crt_requantize_int(const TnCrtRequant *p, TnCrtDType from,
                                  TnCrtDType to, int32_t outer,
                                  int32_t channels, int32_t inner,
                                  const void *in, void *out);

/* UNIDIRECTIONAL_SEQUENCE_LSTM (lstm.c), TFLite Micro's: data [batch,
 * steps, input_size] (or [steps, batch, input_size] with time_major),
 * weights [4, units, input_size] and recurrent weights [4, units, units]
 * with the gates in TFLite's order (input, forget, cell, output), bias
 * [4, units], hidden and cell state [batch, units]. `emit` chooses the
 * result: TN_CRT_LSTM_SEQUENCE the hidden state of every step (shaped like
 * data with `units` last), TN_CRT_LSTM_CELL the final cell state. The int8
 * form has int16 cell state and int32 bias; its multipliers are TFLite's:
 * fc_* for the eight products to Q3.12 (input ones first, in gate order),
 * forget_* for f * c and input_* for i * g to the cell scale, output_* for
 * o * tanh(c) to the hidden scale; cell_tanh_* is the input scaling of the
 * cell state's tanh (multiplier 0: 3 << shift), cell_clip_q the clip in
 * cell units (used when cell_clip > 0). The float form reads only the
 * sizes, emit and cell_clip. */
typedef enum { TN_CRT_LSTM_SEQUENCE = 0, TN_CRT_LSTM_CELL = 1 } TnCrtLstmEmit;
#define TN_CRT_FIELDS_TnCrtLstm(F, T)                                     \
  F(T, S, int32_t, batch) F(T, S, int32_t, steps)                         \
  F(T, S, int32_t, input_size) F(T, S, int32_t, units)                    \
  F(T, S, int32_t, time_major) F(T, S, int32_t, emit)                     \
  F(T, S, float, cell_clip) F(T, S, int32_t, input_zero_point)            \
  F(T, S, int32_t, hidden_zero_point) F(T, A, int32_t, fc_multiplier, 8)  \
  F(T, A, int32_t, fc_shift, 8) F(T, S, int32_t, forget_multiplier)       \
  F(T, S, int32_t, forget_shift) F(T, S, int32_t, input_multiplier)       \
  F(T, S, int32_t, input_shift) F(T, S, int32_t, output_multiplier)       \
  F(T, S, int32_t, output_shift) F(T, S, int32_t, cell_tanh_multiplier)   \
  F(T, S, int32_t, cell_tanh_shift) F(T, S, int32_t, cell_clip_q)
TN_CRT_STRUCT(TnCrtLstm);
/* Scratch bytes of any form: cell_bytes 4 and data_bytes 4 for float,
 * 2 and 1 for int8, 2 and 2 for int16. */
size_t tn_crt_lstm_scratch_size(int32_t units, int32_t cell_bytes,
                                int32_t data_bytes);
TnCrtStatus tn_crt_lstm_f32(const TnCrtLstm *p, const float *x,
                            const float *wi, const float *wr,
                            const float *bias, const float *h0,
                            const float *c0, float *out, void *scratch,
                            size_t scratch_size);
/* out: int8 for the sequence, int16 for the cell state. */
TnCrtStatus tn_crt_lstm_s8(const TnCrtLstm *p, const int8_t *x,
                           const int8_t *wi, const int8_t *wr,
                           const int32_t *bias, const int8_t *h0,
                           const int16_t *c0, void *out, void *scratch,
                           size_t scratch_size);
/* The 16x8 form: int16 data and hidden state, int8 weights, int64 bias,
 * int16 cell state (out is int16 either way); the same parameters. */
TnCrtStatus tn_crt_lstm_s16(const TnCrtLstm *p, const int16_t *x,
                            const int8_t *wi, const int8_t *wr,
                            const int64_t *bias, const int16_t *h0,
                            const int16_t *c0, int16_t *out, void *scratch,
                            size_t scratch_size);

/* SVDF's two halves (svdf.c), TFLite Micro's arithmetic. The state is
 * [batch, filters, memory]: `rows` (batch * filters) rows of the last
 * `memory` features, oldest first. tn_crt_svdf_state moves every row one
 * step older and writes the row's new feature (one element of `feature`,
 * [batch, filters]) as its newest; elements are `elem_bytes` wide, and
 * `out` may be `state` (the update then runs in place). */
#define TN_CRT_FIELDS_TnCrtSvdfState(F, T) \
  F(T, S, int32_t, rows) F(T, S, int32_t, memory) F(T, S, int32_t, elem_bytes)
TN_CRT_STRUCT(TnCrtSvdfState);
TnCrtStatus tn_crt_svdf_state(const TnCrtSvdfState *p, const void *state,
                              const void *feature, void *out);
/* The time filter: out[b, u] = sum over the unit's `rank` filters f of
 * sum over j of (state[b, f, j] - zero_point) * weights_time[f, j], the
 * unit's filters being u * rank .. u * rank + rank - 1. int16 and int8
 * states (with weights_time of the same type) sum into int32, as TFLite
 * Micro does; float32 sums each filter in order of j, then the filters. */
#define TN_CRT_FIELDS_TnCrtSvdfTime(F, T)                                  \
  F(T, S, int32_t, batch) F(T, S, int32_t, filters) F(T, S, int32_t, memory) \
  F(T, S, int32_t, rank) F(T, S, int32_t, zero_point)
TN_CRT_STRUCT(TnCrtSvdfTime);
TnCrtStatus tn_crt_svdf_time_f32(const TnCrtSvdfTime *p, const float *state,
                                 const float *weights_time, float *out);
TnCrtStatus tn_crt_svdf_time_s16(const TnCrtSvdfTime *p,
                                 const int16_t *state,
                                 const int16_t *weights_time, int32_t *out);
TnCrtStatus tn_crt_svdf_time_s8(const TnCrtSvdfTime *p, const int8_t *state,
                                const int8_t *weights_time, int32_t *out);

/* onnxruntime's int8/uint8 QLinearAdd and QLinearMul (qlinear_ort.c), the
 * arithmetic of its CPU kernels on x86-64 (MLAS's AVX2 add, its SSE2
 * multiply): float32 throughout, every operation rounded as there (fused
 * multiply-adds included, computed exactly in portable C), rounded half to
 * even and saturated. uint8 tensors are stored as int8 less 128: `offset`
 * is 128 for them (0 for int8), the scales and zero points are the
 * model's own. `scalar` is 1 when lhs is a single element, 2 when rhs is
 * (onnxruntime's order of the operands' products depends on it). */
#define TN_CRT_FIELDS_TnCrtQLinearOrt(F, T)                              \
  F(T, S, float, lhs_scale) F(T, S, float, rhs_scale)                  \
  F(T, S, float, out_scale) F(T, S, int32_t, lhs_zp)                   \
  F(T, S, int32_t, rhs_zp) F(T, S, int32_t, out_zp)                    \
  F(T, S, int32_t, offset) F(T, S, int32_t, scalar)
TN_CRT_STRUCT(TnCrtQLinearOrt);
TnCrtStatus tn_crt_qlinear_add_ort(const TnCrtQLinearOrt *p,
                                   const TnCrtBroadcast *b, const int8_t *lhs,
                                   const int8_t *rhs, int8_t *out);
TnCrtStatus tn_crt_qlinear_mul_ort(const TnCrtQLinearOrt *p,
                                   const TnCrtBroadcast *b, const int8_t *lhs,
                                   const int8_t *rhs, int8_t *out);
/* onnxruntime's QLinearAveragePool and QLinearGlobalAveragePool (NCHW):
 * with `global` (the window is the whole image, no padding), the integer
 * sum less the input zero point times the image size, times
 * x_scale / (y_scale * size) in float32, rounded half to even, plus the
 * output zero point (MLAS); otherwise each value dequantized to float32,
 * summed in order, divided by the count, divided by y_scale, plus the
 * output zero point, rounded half to even. p's lhs fields are the input's
 * quantization, its out fields the output's. */
TnCrtStatus tn_crt_qlinear_avg_pool_ort(const TnCrtQLinearOrt *p,
                                        const TnCrtPool2d *g, int32_t global,
                                        const int8_t *in, int8_t *out);
/* onnxruntime's QLinearSoftmax over the middle axis of [outer, n, inner]:
 * table[d] is the float32 exponential of an input `d` steps below its
 * row's maximum (built on the host as onnxruntime builds it); the row's
 * sum in order, then nearbyint(table * floor(1 / out_scale) / sum) + zp,
 * saturated above (at 255 for uint8, 127 for int8). */
#define TN_CRT_FIELDS_TnCrtQSoftmaxOrt(F, T)                            \
  F(T, A, float, table, 256) F(T, S, float, out_scale)                 \
  F(T, S, int32_t, out_zp) F(T, S, int32_t, offset)                    \
  F(T, S, int32_t, outer) F(T, S, int32_t, n) F(T, S, int32_t, inner)
TN_CRT_STRUCT(TnCrtQSoftmaxOrt);
TnCrtStatus tn_crt_qlinear_softmax_ort(const TnCrtQSoftmaxOrt *p,
                                       const int8_t *in, int8_t *out);

/* TFLite's 16x8 BATCH_MATMUL and TRANSPOSE_CONV (mm_s16.c): int16 operands
 * (zero points 0; an int8 OHWI filter for the transposed convolution) and
 * int64 sums out, requantized by their own calls; and its int8 DIV,
 * broadcasting, whose parameters tn_crt_qdiv_params computes from the
 * three quantizations (the output multiplier and shift, the offsets and
 * act_min/act_max of -128/127). */
TnCrtStatus tn_crt_qdiv_s8(const TnCrtQBinary *p, const TnCrtBroadcast *b,
                           const int8_t *lhs, const int8_t *rhs, int8_t *out);
TnCrtStatus tn_crt_bmm_s16_s64(const TnCrtBatchMatmul *p, const int16_t *a,
                               const int16_t *b, int64_t *out);
TnCrtStatus tn_crt_conv2d_transpose_s16_s64(const TnCrtConvTranspose *p,
                                            const int16_t *in,
                                            const int8_t *w, int64_t *out);
TnCrtStatus tn_crt_qdiv_params(double lhs_scale, int32_t lhs_zp,
                               double rhs_scale, int32_t rhs_zp,
                               double out_scale, int32_t out_zp,
                               TnCrtQBinary *out);

/* ---- int16 activations (act_s16.c), TFLite's 16x8 mode ----------------- */

/* LOGISTIC and TANH on int16 (zero points 0, output scale 2^-15): the
 * input is scaled to the sigmoid table's 1/(3 * 4096) per step as
 * (x * input_multiplier + 2^(shift - 1)) >> input_left_shift, with the
 * multiplier in (0, 32767] and the shift in [0, 31] that TFLite's prepare
 * chooses (its power-of-two case as multiplier 3 * 2^k, shift 0). */
#define TN_CRT_FIELDS_TnCrtActS16(F, T)                                  \
  F(T, S, int32_t, input_multiplier) F(T, S, int32_t, input_left_shift) \
  F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtActS16);
TnCrtStatus tn_crt_logistic_s16(const TnCrtActS16 *p, int32_t n,
                                const int16_t *in, int16_t *out);
TnCrtStatus tn_crt_tanh_s16(const TnCrtActS16 *p, int32_t n,
                            const int16_t *in, int16_t *out);

/* SOFTMAX of int16 rows of n (input zero point 0) to int16 of scale 2^-15,
 * zero point 0: differences from the row maximum times input_multiplier *
 * 2^(input_left_shift - 31) (TFLite's MultiplyByQuantizedMultiplier), the
 * exp and 1 / (1 + x) tables of 513 entries as TFLite's LUTPopulate builds
 * them (on the host). */
#define TN_CRT_FIELDS_TnCrtSoftmaxS16(F, T)                              \
  F(T, S, int32_t, input_multiplier) F(T, S, int32_t, input_left_shift) \
  F(T, S, int32_t, outer) F(T, S, int32_t, n)                           \
  F(T, A, int16_t, exp_lut, 513) F(T, A, int16_t, recip_lut, 513)
TN_CRT_STRUCT(TnCrtSoftmaxS16);
TnCrtStatus tn_crt_softmax_s16(const TnCrtSoftmaxS16 *p, const int16_t *in,
                               int16_t *out);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_KERNELS_H_ */
