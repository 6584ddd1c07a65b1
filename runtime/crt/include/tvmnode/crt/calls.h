/*
 * tvmnode/crt/calls.h: every kernel form the lowering table can choose,
 * each behind one uniform entry point.
 *
 * A kernel form is a crt kernel called in one way: tn_crt_conv2d_s8 with
 * its requantization and an optional bias is the form `conv2d_s8`. Each form
 * has a parameter struct (declared from one field list, see kernels.h) and
 * an entry
 *
 *   int32_t tn_crt_call_<form>(const void *params, const void *const *in,
 *                              void *out, void *scratch,
 *                              size_t scratch_size);
 *
 * that unpacks the struct and calls the kernel: `in` holds the form's
 * inputs in its documented order, and the result is a TnCrtStatus. The host
 * executor calls the entry through a pointer and generated code calls it by
 * symbol with a `static const` struct, so both run exactly the same code
 * with exactly the same parameters.
 *
 * TN_CRT_CALLS is the one list of forms: name, parameter type and the crt
 * source file that defines the entry. The host's lowering table, the code
 * generator's call and its archive's file list all come from it; a form
 * missing from it cannot be chosen, and a wrong file fails the archive's
 * link in the tests.
 */
#ifndef TVMNODE_CRT_CALLS_H_
#define TVMNODE_CRT_CALLS_H_

#include "tvmnode/crt/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inputs of one call at most (a concatenation's operands). */
#define TN_CRT_MAX_INPUTS 16

typedef int32_t (*TnCrtCallFn)(const void *params, const void *const *in,
                               void *out, void *scratch, size_t scratch_size);

/* ---- the forms' parameter structs ---------------------------------------- */

/* binary_f32, binary_i32: in = {lhs, rhs}. `op` is a TnCrtBinaryOp. */
#define TN_CRT_FIELDS_TnCrtCallBinary(F, T) \
  F(T, S, int32_t, op) F(T, N, TnCrtBroadcast, b)
TN_CRT_STRUCT(TnCrtCallBinary);

/* unary_f32, unary_i32: in = {x}; `op` is a TnCrtUnaryOp, n elements. */
#define TN_CRT_FIELDS_TnCrtCallUnary(F, T) \
  F(T, S, int32_t, op) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallUnary);

/* clip_f32: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallClipF32(F, T) \
  F(T, S, int32_t, n) F(T, S, float, lo) F(T, S, float, hi)
TN_CRT_STRUCT(TnCrtCallClipF32);

/* clip_i32, clip_s8: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallClip(F, T) \
  F(T, S, int32_t, n) F(T, S, int32_t, lo) F(T, S, int32_t, hi)
TN_CRT_STRUCT(TnCrtCallClip);

/* leaky_relu_f32: in = {x}, n elements. */
#define TN_CRT_FIELDS_TnCrtCallLeakyRelu(F, T) \
  F(T, S, int32_t, n) F(T, S, float, alpha)
TN_CRT_STRUCT(TnCrtCallLeakyRelu);

/* cast: in = {x}; `from` and `to` are TnCrtDType. */
#define TN_CRT_FIELDS_TnCrtCallCast(F, T) \
  F(T, S, int32_t, from) F(T, S, int32_t, to) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallCast);

/* [outer, channels, inner] around an axis: bias_add_f32/i32 (in = {x,
 * bias}) and softmax_f32 (in = {x}). */
#define TN_CRT_FIELDS_TnCrtCallAxis(F, T) \
  F(T, S, int32_t, outer) F(T, S, int32_t, channels) F(T, S, int32_t, inner)
TN_CRT_STRUCT(TnCrtCallAxis);

/* concatenate: in = the n operands, sizes[i] bytes of each per outer row. */
#define TN_CRT_FIELDS_TnCrtCallConcat(F, T)     \
  F(T, S, int32_t, n) F(T, S, int32_t, outer) \
  F(T, A, int32_t, sizes, TN_CRT_MAX_INPUTS)
TN_CRT_STRUCT(TnCrtCallConcat);

/* pad: in = {x}; the pad element is the first elem_size bytes of value. */
#define TN_CRT_FIELDS_TnCrtCallPad(F, T) \
  F(T, N, TnCrtPad, pad) F(T, A, uint8_t, value, 8)
TN_CRT_STRUCT(TnCrtCallPad);

/* mean_s8, mean_s16: in = {x}; scratch of tn_crt_mean_s8_scratch_size(&r). */
#define TN_CRT_FIELDS_TnCrtCallMeanS8(F, T) \
  F(T, N, TnCrtReduce, r) F(T, N, TnCrtQMean, q)
TN_CRT_STRUCT(TnCrtCallMeanS8);

/* conv2d_f32: in = {data, weight[, bias]}, bias when has_bias. */
#define TN_CRT_FIELDS_TnCrtCallConvF32(F, T)                       \
  F(T, N, TnCrtConv2d, g) F(T, S, float, act_min) F(T, S, float, act_max) \
  F(T, S, int32_t, has_bias)
TN_CRT_STRUCT(TnCrtCallConvF32);

/* dense_f32: in = {data, weight[, bias]}, bias when has_bias. packed: the
 * weight is in tn_crt_dense_f32_pack's layout (tn_crt_dense_f32_packed),
 * not [N, K]. */
#define TN_CRT_FIELDS_TnCrtCallDenseF32(F, T)                      \
  F(T, N, TnCrtDense, d) F(T, S, float, act_min) F(T, S, float, act_max) \
  F(T, S, int32_t, has_bias) F(T, S, int32_t, packed)
TN_CRT_STRUCT(TnCrtCallDenseF32);

/* batch_matmul_f32: in = {a, b}; the weight's batch stride is 0. */
#define TN_CRT_FIELDS_TnCrtCallMatmul(F, T)                     \
  F(T, N, TnCrtDense, d) F(T, S, int32_t, batches)              \
  F(T, S, int32_t, in_batch_stride) F(T, S, int32_t, in_stride_m) \
  F(T, S, int32_t, in_stride_k)
TN_CRT_STRUCT(TnCrtCallMatmul);

/* max/avg_pool2d_f32: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallPoolF32(F, T) \
  F(T, N, TnCrtPool2d, g) F(T, S, float, act_min) F(T, S, float, act_max)
TN_CRT_STRUCT(TnCrtCallPoolF32);

/* max/avg_pool2d_s8, max/avg_pool2d_s16: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallPoolS8(F, T) \
  F(T, N, TnCrtPool2d, g) F(T, S, int32_t, act_min) F(T, S, int32_t, act_max)
TN_CRT_STRUCT(TnCrtCallPoolS8);

/* quantize_f32_s8, dequantize_s8_f32: in = {x}; `channels` scales and
 * zero points over [outer, channels, inner]. */
#define TN_CRT_FIELDS_TnCrtCallAffine(F, T)                                  \
  F(T, S, int32_t, outer) F(T, S, int32_t, channels) F(T, S, int32_t, inner) \
  F(T, P, float, scale, channels) F(T, P, int32_t, zero_point, channels)  \
  F(T, S, int32_t, round_even)
TN_CRT_STRUCT(TnCrtCallAffine);

/* requantize_s32_s8, requantize_s8_s8: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallRequant(F, T)                     \
  F(T, N, TnCrtRequant, r) F(T, S, int32_t, outer)               \
  F(T, S, int32_t, channels) F(T, S, int32_t, inner)
TN_CRT_STRUCT(TnCrtCallRequant);

/* conv2d_s8_s32: in = {data, weight}; int32 accumulators out. */
#define TN_CRT_FIELDS_TnCrtCallConvS32(F, T) \
  F(T, N, TnCrtConv2d, g) F(T, S, int32_t, input_offset) \
  F(T, S, int32_t, filter_offset)
TN_CRT_STRUCT(TnCrtCallConvS32);

/* dense_s8_s32: in = {data, weight}; int32 accumulators out. */
#define TN_CRT_FIELDS_TnCrtCallDenseS32(F, T) \
  F(T, N, TnCrtDense, d) F(T, S, int32_t, input_offset) \
  F(T, S, int32_t, filter_offset)
TN_CRT_STRUCT(TnCrtCallDenseS32);

/* qadd_s8, qmul_s8, qadd_s16, qmul_s16: in = {lhs, rhs}. */
#define TN_CRT_FIELDS_TnCrtCallQBinary(F, T) \
  F(T, N, TnCrtQBinary, q) F(T, N, TnCrtBroadcast, b)
TN_CRT_STRUCT(TnCrtCallQBinary);

/* softmax_s8, softmax_s8_s16 (int16 out): in = {x}, rows of n. */
#define TN_CRT_FIELDS_TnCrtCallSoftmaxS8(F, T) \
  F(T, N, TnCrtSoftmaxS8, s) F(T, S, int32_t, outer) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallSoftmaxS8);

/* lut_s8: in = {x}. */
#define TN_CRT_FIELDS_TnCrtCallLut(F, T) \
  F(T, N, TnCrtLut8, t) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallLut);

/* conv2d_s8 (the fused int8 convolution): in = {data, weight[, bias]};
 * scratch of tn_crt_conv2d_s8_scratch_size(&g) (or the in-place size).
 * packed: a 1x1 layer's weight in tn_crt_dense_s8_pack's layout of its
 * [out_c, in_c] matrix (tn_crt_conv2d_s8_packed). */
#define TN_CRT_FIELDS_TnCrtCallConvS8(F, T)                                \
  F(T, N, TnCrtConv2d, g) F(T, N, TnCrtQuant, q) F(T, S, int32_t, has_bias) \
  F(T, S, int32_t, packed)
TN_CRT_STRUCT(TnCrtCallConvS8);

/* dense_s8 (the fused int8 dense layer): in = {data, weight[, bias]};
 * scratch of tn_crt_dense_s8_scratch_size(&d). packed: the weight's
 * layout, TN_CRT_DENSE_NK ([N, K]), TN_CRT_DENSE_N16K4
 * (tn_crt_dense_s8_pack's) or TN_CRT_DENSE_N4K4 (tn_crt_dense_s8_pack4's);
 * any other value is an invalid argument. */
#define TN_CRT_FIELDS_TnCrtCallDenseS8(F, T)                              \
  F(T, N, TnCrtDense, d) F(T, N, TnCrtQuant, q) F(T, S, int32_t, has_bias) \
  F(T, S, int32_t, packed)
TN_CRT_STRUCT(TnCrtCallDenseS8);

/* conv2d_s16, dense_s16 (the fused 16x8 layers): in = {data, weight[,
 * int64 bias]}. */
#define TN_CRT_FIELDS_TnCrtCallConvS16(F, T)                          \
  F(T, N, TnCrtConv2d, g) F(T, S, int32_t, filter_offset)             \
  F(T, N, TnCrtRequant, r) F(T, S, int32_t, has_bias)
TN_CRT_STRUCT(TnCrtCallConvS16);
#define TN_CRT_FIELDS_TnCrtCallDenseS16(F, T)                         \
  F(T, N, TnCrtDense, d) F(T, S, int32_t, filter_offset)              \
  F(T, N, TnCrtRequant, r) F(T, S, int32_t, has_bias)
TN_CRT_STRUCT(TnCrtCallDenseS16);

/* bmm_s8_s32: in = {a, b}; int32 sums out. */
#define TN_CRT_FIELDS_TnCrtCallBmmS32(F, T) \
  F(T, N, TnCrtBatchMatmul, g) F(T, S, int32_t, a_offset) \
  F(T, S, int32_t, b_offset)
TN_CRT_STRUCT(TnCrtCallBmmS32);

/* conv2d_transpose_s8_s32: in = {data, weight}; int32 sums out. */
#define TN_CRT_FIELDS_TnCrtCallConvTransposeS32(F, T) \
  F(T, N, TnCrtConvTranspose, g) F(T, S, int32_t, input_offset)
TN_CRT_STRUCT(TnCrtCallConvTransposeS32);

/* arg_reduce_f32, arg_reduce_s8, arg_reduce_i32: in = {x} seen as
 * [outer, n, inner]; out = int32 [outer, inner], the first index of the
 * largest (smallest when is_min) value along n. */
#define TN_CRT_FIELDS_TnCrtCallArgReduce(F, T)                   \
  F(T, S, int32_t, outer) F(T, S, int32_t, n) F(T, S, int32_t, inner) \
  F(T, S, int32_t, is_min)
TN_CRT_STRUCT(TnCrtCallArgReduce);

/* gather: in = {data, indices (int32, count of them)}; data is [outer, n,
 * inner bytes]; out is [outer, count, inner bytes]. */
#define TN_CRT_FIELDS_TnCrtCallGather(F, T)                      \
  F(T, S, int32_t, outer) F(T, S, int32_t, n) F(T, S, int32_t, inner) \
  F(T, S, int32_t, count)
TN_CRT_STRUCT(TnCrtCallGather);

/* math_f32: in = {x}; `op` is a TnCrtMathOp, n elements. */
#define TN_CRT_FIELDS_TnCrtCallMath(F, T) \
  F(T, S, int32_t, op) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallMath); \
/* l2_normalize_f32, log_softmax_f32: in = {x}, rows of n (eps: L2 only). */
#define TN_CRT_FIELDS_TnCrtCallRowsF32(F, T) \
  F(T, S, int32_t, outer) F(T, S, int32_t, n) F(T, S, float, eps)
TN_CRT_STRUCT(TnCrtCallRowsF32);

/* l2_normalize_s8: in = {x}, rows of n. */
#define TN_CRT_FIELDS_TnCrtCallRowsS8(F, T) \
  F(T, S, int32_t, outer) F(T, S, int32_t, n) F(T, S, int32_t, input_zero_point)
TN_CRT_STRUCT(TnCrtCallRowsS8);

/* log_softmax_s8: in = {x}, rows of n. */
#define TN_CRT_FIELDS_TnCrtCallLogSoftmaxS8(F, T) \
  F(T, N, TnCrtLogSoftmaxS8, s) F(T, S, int32_t, outer) F(T, S, int32_t, n)
TN_CRT_STRUCT(TnCrtCallLogSoftmaxS8); \
/* requantize_int: in = {x}; `from` and `to` are TnCrtDType (int8, uint8,
 * int16 or int32). */
#define TN_CRT_FIELDS_TnCrtCallRequantInt(F, T)                    \
  F(T, N, TnCrtRequant, r) F(T, S, int32_t, from)                  \
  F(T, S, int32_t, to) F(T, S, int32_t, outer)                     \
  F(T, S, int32_t, channels) F(T, S, int32_t, inner)
TN_CRT_STRUCT(TnCrtCallRequantInt);

/* qlinear_add_ort, qlinear_mul_ort: in = {lhs, rhs} (onnxruntime's
 * QLinearAdd and QLinearMul, broadcasting). */
#define TN_CRT_FIELDS_TnCrtCallQLinearOrt(F, T) \
  F(T, N, TnCrtQLinearOrt, q) F(T, N, TnCrtBroadcast, b)
TN_CRT_STRUCT(TnCrtCallQLinearOrt);
/* qlinear_avg_pool_ort: in = {x} (onnxruntime's QLinearAveragePool). */
#define TN_CRT_FIELDS_TnCrtCallQLinearPoolOrt(F, T) \
  F(T, N, TnCrtQLinearOrt, q) F(T, N, TnCrtPool2d, g) F(T, S, int32_t, global)
TN_CRT_STRUCT(TnCrtCallQLinearPoolOrt);

/* Every parameter struct, nested ones before those that hold them (the
 * host describes each for the code generator). */
#define TN_CRT_PARAM_TYPES(X)                                               \
  X(TnCrtBroadcast) X(TnCrtTranspose) X(TnCrtPad) X(TnCrtStridedSlice)      \
  X(TnCrtConv2d) X(TnCrtQuant) X(TnCrtDense) X(TnCrtPool2d) X(TnCrtReduce)  \
  X(TnCrtQMean) X(TnCrtSoftmaxS8) X(TnCrtRequant) X(TnCrtQBinary)           \
  X(TnCrtLut8) X(TnCrtCallBinary) X(TnCrtCallUnary) X(TnCrtCallClipF32)     \
  X(TnCrtCallClip) X(TnCrtCallLeakyRelu) X(TnCrtCallCast) X(TnCrtCallAxis) X(TnCrtCallConcat)     \
  X(TnCrtCallPad) X(TnCrtCallMeanS8) X(TnCrtCallConvF32)                    \
  X(TnCrtCallDenseF32) X(TnCrtCallMatmul) X(TnCrtCallPoolF32)               \
  X(TnCrtCallPoolS8) X(TnCrtCallAffine) X(TnCrtCallRequant)                 \
  X(TnCrtCallConvS32) X(TnCrtCallDenseS32) X(TnCrtCallQBinary)              \
  X(TnCrtCallSoftmaxS8) X(TnCrtCallLut) X(TnCrtCallConvS8)                  \
  X(TnCrtCallDenseS8) X(TnCrtResize) X(TnCrtBatchMatmul) X(TnCrtCallBmmS32)     \
  X(TnCrtConvTranspose) X(TnCrtCallConvTransposeS32)  \
  X(TnCrtCallArgReduce) X(TnCrtCallGather)  \
  X(TnCrtCallMath) \
  X(TnCrtCallRowsF32) \
  X(TnCrtCallRowsS8) X(TnCrtLogSoftmaxS8) X(TnCrtCallLogSoftmaxS8)          \
  X(TnCrtCallRequantInt) X(TnCrtLstm)                                      \
  X(TnCrtQLinearOrt) X(TnCrtCallQLinearOrt) X(TnCrtCallQLinearPoolOrt)     \
  X(TnCrtQSoftmaxOrt) X(TnCrtActS16) X(TnCrtSoftmaxS16) X(TnCrtSvdfState) \
  X(TnCrtSvdfTime) X(TnCrtCallConvS16) X(TnCrtCallDenseS16)

/* ---- the forms ------------------------------------------------------------ */

/* X(form, parameter type, the source file of tn_crt_call_<form>, relative
 * to the crt's folder) */
#define TN_CRT_CALLS(X)                                                     \
  X(binary_f32, TnCrtCallBinary, "src/kernels/elementwise.c")               \
  X(binary_i32, TnCrtCallBinary, "src/kernels/elementwise.c")               \
  X(unary_f32, TnCrtCallUnary, "src/kernels/elementwise.c")                 \
  X(unary_i32, TnCrtCallUnary, "src/kernels/elementwise.c")                 \
  X(clip_f32, TnCrtCallClipF32, "src/kernels/elementwise.c")                \
  X(clip_i32, TnCrtCallClip, "src/kernels/elementwise.c")                   \
  X(clip_s8, TnCrtCallClip, "src/kernels/quant.c")                          \
  X(leaky_relu_f32, TnCrtCallLeakyRelu, "src/kernels/elementwise.c")        \
  X(cast, TnCrtCallCast, "src/kernels/elementwise.c")                       \
  X(bias_add_f32, TnCrtCallAxis, "src/kernels/elementwise.c")               \
  X(bias_add_i32, TnCrtCallAxis, "src/kernels/elementwise.c")               \
  X(transpose, TnCrtTranspose, "src/kernels/movement.c")                    \
  X(concatenate, TnCrtCallConcat, "src/kernels/movement.c")                 \
  X(pad, TnCrtCallPad, "src/kernels/movement.c")                            \
  X(strided_slice, TnCrtStridedSlice, "src/kernels/movement.c")             \
  X(mean_f32, TnCrtReduce, "src/kernels/pool_f32.c")                        \
  X(mean_i32, TnCrtReduce, "src/kernels/pool_f32.c")                        \
  X(mean_s8, TnCrtCallMeanS8, "src/kernels/pool_s8.c")                      \
  X(conv2d_f32, TnCrtCallConvF32, "src/kernels/conv_f32.c")                 \
  X(dense_f32, TnCrtCallDenseF32, "src/kernels/dense_f32.c")                \
  X(batch_matmul_f32, TnCrtCallMatmul, "src/kernels/dense_f32.c")           \
  X(max_pool2d_f32, TnCrtCallPoolF32, "src/kernels/pool_f32.c")             \
  X(avg_pool2d_f32, TnCrtCallPoolF32, "src/kernels/pool_f32.c")             \
  X(max_pool2d_s8, TnCrtCallPoolS8, "src/kernels/pool_s8.c")                \
  X(avg_pool2d_s8, TnCrtCallPoolS8, "src/kernels/pool_s8.c")                \
  X(softmax_f32, TnCrtCallAxis, "src/kernels/softmax_f32.c")                \
  X(quantize_f32_s8, TnCrtCallAffine, "src/kernels/quant.c")                \
  X(dequantize_s8_f32, TnCrtCallAffine, "src/kernels/quant.c")              \
  X(requantize_s32_s8, TnCrtCallRequant, "src/kernels/quant.c")             \
  X(requantize_s8_s8, TnCrtCallRequant, "src/kernels/quant.c")              \
  X(conv2d_s8_s32, TnCrtCallConvS32, "src/kernels/conv_s8.c")               \
  X(dense_s8_s32, TnCrtCallDenseS32, "src/kernels/dense_s8.c")              \
  X(qadd_s8, TnCrtCallQBinary, "src/kernels/quant.c")                       \
  X(qmul_s8, TnCrtCallQBinary, "src/kernels/quant.c")                       \
  X(softmax_s8, TnCrtCallSoftmaxS8, "src/kernels/softmax_s8.c")             \
  X(lut_s8, TnCrtCallLut, "src/kernels/quant.c")                            \
  X(conv2d_s8, TnCrtCallConvS8, "src/kernels/conv_s8.c")                    \
  X(dense_s8, TnCrtCallDenseS8, "src/kernels/dense_s8.c")                  \
  X(resize_nearest, TnCrtResize, "src/kernels/resize.c")                    \
  X(resize_bilinear_f32, TnCrtResize, "src/kernels/resize.c")               \
  X(resize_bilinear_s8, TnCrtResize, "src/kernels/resize.c")                \
  X(bmm_f32, TnCrtBatchMatmul, "src/kernels/batch_matmul.c")                \
  X(bmm_s8_s32, TnCrtCallBmmS32, "src/kernels/batch_matmul.c")              \
  X(conv2d_transpose_f32, TnCrtConvTranspose, "src/kernels/transpose_conv.c") \
  X(conv2d_transpose_s8_s32, TnCrtCallConvTransposeS32,                     \
    "src/kernels/transpose_conv.c")  \
  X(sum_f32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(sum_i32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(max_f32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(min_f32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(max_s8, TnCrtReduce, "src/kernels/reduce.c")                            \
  X(min_s8, TnCrtReduce, "src/kernels/reduce.c")                            \
  X(max_i32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(min_i32, TnCrtReduce, "src/kernels/reduce.c")                           \
  X(arg_reduce_f32, TnCrtCallArgReduce, "src/kernels/reduce.c")             \
  X(arg_reduce_s8, TnCrtCallArgReduce, "src/kernels/reduce.c")              \
  X(arg_reduce_i32, TnCrtCallArgReduce, "src/kernels/reduce.c")             \
  X(gather, TnCrtCallGather, "src/kernels/gather.c")  \
  X(math_f32, TnCrtCallMath, "src/kernels/math.c")                          \
  X(minmax_s8, TnCrtCallBinary, "src/kernels/qelementwise.c")               \
  X(qsub_s8, TnCrtCallQBinary, "src/kernels/qelementwise.c")               \
  X(qsquared_difference_s8, TnCrtCallQBinary, "src/kernels/qelementwise.c") \
  X(qprelu_s8, TnCrtCallQBinary, "src/kernels/qelementwise.c")             \
  X(prelu_f32, TnCrtCallBinary, "src/kernels/math.c") \
  X(l2_normalize_f32, TnCrtCallRowsF32, "src/kernels/normalize.c")          \
  X(l2_normalize_s8, TnCrtCallRowsS8, "src/kernels/normalize.c")            \
  X(log_softmax_f32, TnCrtCallRowsF32, "src/kernels/normalize.c")           \
  X(log_softmax_s8, TnCrtCallLogSoftmaxS8, "src/kernels/normalize.c") \
  X(quantize_f32_s16, TnCrtCallAffine, "src/kernels/quant16.c")             \
  X(dequantize_s16_f32, TnCrtCallAffine, "src/kernels/quant16.c")           \
  X(dequantize_u8_f32, TnCrtCallAffine, "src/kernels/quant16.c")            \
  X(requantize_int, TnCrtCallRequantInt, "src/kernels/quant16.c")          \
  X(conv2d_s16_s64, TnCrtCallConvS32, "src/kernels/conv_s16.c")             \
  X(dense_s16_s64, TnCrtCallDenseS32, "src/kernels/conv_s16.c")             \
  X(bias_add_i64, TnCrtCallAxis, "src/kernels/conv_s16.c")                 \
  X(conv2d_s16, TnCrtCallConvS16, "src/kernels/conv_s16.c")                 \
  X(dense_s16, TnCrtCallDenseS16, "src/kernels/conv_s16.c")                 \
  X(clip_s16, TnCrtCallClip, "src/kernels/quant16.c")                      \
  X(max_pool2d_s16, TnCrtCallPoolS8, "src/kernels/pool_s16.c")              \
  X(avg_pool2d_s16, TnCrtCallPoolS8, "src/kernels/pool_s16.c")              \
  X(qadd_s16, TnCrtCallQBinary, "src/kernels/add_s16.c")                    \
  X(qmul_s16, TnCrtCallQBinary, "src/kernels/add_s16.c")                   \
  X(mean_s16, TnCrtCallMeanS8, "src/kernels/pool_s16.c")                  \
  X(lstm_f32, TnCrtLstm, "src/kernels/lstm.c")                              \
  X(lstm_s8, TnCrtLstm, "src/kernels/lstm.c")                               \
  X(softmax_s8_s16, TnCrtCallSoftmaxS8, "src/kernels/softmax_s8.c")        \
  X(qlinear_add_ort, TnCrtCallQLinearOrt, "src/kernels/qlinear_ort.c")      \
  X(qlinear_mul_ort, TnCrtCallQLinearOrt, "src/kernels/qlinear_ort.c")      \
  X(qlinear_avg_pool_ort, TnCrtCallQLinearPoolOrt, "src/kernels/qlinear_ort.c") \
  X(qlinear_softmax_ort, TnCrtQSoftmaxOrt, "src/kernels/qlinear_ort.c")    \
  X(bmm_s16_s64, TnCrtCallBmmS32, "src/kernels/mm_s16.c")                   \
  X(conv2d_transpose_s16_s64, TnCrtCallConvTransposeS32,                    \
    "src/kernels/mm_s16.c")                                                 \
  X(qdiv_s8, TnCrtCallQBinary, "src/kernels/mm_s16.c")                      \
  X(lstm_s16, TnCrtLstm, "src/kernels/lstm.c")                            \
  X(sigmoid_s16, TnCrtActS16, "src/kernels/act_s16.c")                      \
  X(tanh_s16, TnCrtActS16, "src/kernels/act_s16.c")                         \
  X(softmax_s16, TnCrtSoftmaxS16, "src/kernels/act_s16.c")                \
  X(svdf_state, TnCrtSvdfState, "src/kernels/svdf.c")                       \
  X(svdf_time_f32, TnCrtSvdfTime, "src/kernels/svdf.c")                     \
  X(svdf_time_s16, TnCrtSvdfTime, "src/kernels/svdf.c")                     \
  X(svdf_time_s8, TnCrtSvdfTime, "src/kernels/svdf.c")

/* What every compiled model needs of the crt besides its forms' sources,
 * relative to the crt's folder: the headers, the status table, the
 * firmware API and the helpers the kernels share. */
#define TN_CRT_COMMON_SOURCES                                                \
  "include/tvmnode/crt/status.h", "include/tvmnode/crt/kernels.h",           \
      "include/tvmnode/crt/calls.h", "include/tvmnode/crt/model.h",          \
      "include/tvmnode/crt/params.h", "include/tvmnode/crt/crc32.h",         \
      "src/crt_libc.h", "src/status.c", "src/model.c",                       \
      "src/kernels/call.h", "src/kernels/isa.h",                             \
      "src/kernels/fixed_point.h", "src/kernels/fixed_point.c",              \
      "src/kernels/x86/fixed_point.c", "src/kernels/arm_dsp/dsp.h",          \
      "src/kernels/unroll.h", "src/kernels/reduce_walk.h"

/* What a form's source brings along: its private header and its ISA forms
 * (src/kernels/<isa>/: sources, each compiling to nothing where its ISA is
 * absent, and headers of inline functions that the source includes under
 * its ISA's switch in isa.h), or the source whose host-side parameter
 * function it reuses, or whose kernel it calls (with all that source
 * brings: a companion's own companions are not looked up).
 * X(source, companion) */
#define TN_CRT_SOURCE_COMPANIONS(X)                                          \
  X("src/kernels/conv_s8.c", "src/kernels/conv_s8.h")                        \
  X("src/kernels/conv_s8.c", "src/kernels/x86/conv_s8.c")                    \
  X("src/kernels/conv_s8.c", "src/kernels/x86/conv_wide_s8.c")               \
  X("src/kernels/conv_s8.c", "src/kernels/x86/conv_avx2_s8.c")               \
  X("src/kernels/conv_s8.c", "src/kernels/x86/requant_lanes.h")             \
  X("src/kernels/conv_s8.c", "src/kernels/arm_dsp/conv_s8_dsp.h")            \
  X("src/kernels/conv_s8.c", "src/kernels/arm_dsp/dw3x3_s8_dsp.h")          \
  X("src/kernels/conv_s8.c", "src/kernels/arm_mve/conv_s8_mve.h")          \
  X("src/kernels/conv_s8.c", "src/kernels/arm_mve/dw3x3_s8_mve.h")         \
  X("src/kernels/conv_s8.c", "src/kernels/arm_mve/dw_s8_mve.h")            \
  X("src/kernels/conv_s8.c", "src/kernels/arm_mve/requant_s8_mve.h")       \
  X("src/kernels/conv_s8.c", "src/kernels/dense_s8.c")                       \
  X("src/kernels/conv_s8.c", "src/kernels/dense_s8.h")                       \
  X("src/kernels/conv_s8.c", "src/kernels/x86/dense_s8.c")                   \
  X("src/kernels/conv_s8.c", "src/kernels/arm_dsp/dense_s8_dsp.h")           \
  X("src/kernels/conv_s8.c", "src/kernels/arm_mve/dense_s8_mve.h")         \
  X("src/kernels/dense_s8.c", "src/kernels/dense_s8.h")                      \
  X("src/kernels/dense_s8.c", "src/kernels/x86/dense_s8.c")                  \
  X("src/kernels/dense_s8.c", "src/kernels/x86/requant_lanes.h")            \
  X("src/kernels/dense_s8.c", "src/kernels/arm_dsp/dense_s8_dsp.h")          \
  X("src/kernels/dense_s8.c", "src/kernels/arm_mve/dense_s8_mve.h")        \
  X("src/kernels/dense_s8.c", "src/kernels/arm_mve/requant_s8_mve.h")      \
  X("src/kernels/conv_f32.c", "src/kernels/conv_f32.h")                      \
  X("src/kernels/conv_f32.c", "src/kernels/x86/conv_f32.c")                  \
  X("src/kernels/dense_f32.c", "src/kernels/dense_f32.h")                    \
  X("src/kernels/dense_f32.c", "src/kernels/x86/dense_f32.c")                \
  X("src/kernels/quant.c", "src/kernels/quant.h")                            \
  X("src/kernels/quant.c", "src/kernels/x86/quant.c")                        \
  X("src/kernels/quant.c", "src/kernels/arm_mve/add_s8_mve.h")            \
  X("src/kernels/quant.c", "src/kernels/arm_dsp/add_s8_dsp.h")              \
  X("src/kernels/math.c", "src/kernels/binary_walk.h")                       \
  X("src/kernels/qelementwise.c", "src/kernels/binary_walk.h")                \
  X("src/kernels/normalize.c", "src/kernels/softmax_s8.c")                  \
  X("src/kernels/qlinear_ort.c", "src/kernels/binary_walk.h")               \
  X("src/kernels/mm_s16.c", "src/kernels/binary_walk.h")

/* ---- a call cut into parts (src/kernels/split.c) ------------------------
 *
 * A large convolution or dense layer of batch 1 can run as parts on
 * several threads: each part is an ordinary call of the same form on a
 * smaller geometry (a band of output rows with the input rows it reads and
 * its own top padding; or a block of output features, whole blocks of 16,
 * with its weights, bias and per-channel multipliers from the block on).
 * Every output element is the same arithmetic on the same inputs, so the
 * int8 outputs are the same bytes however the call is cut. The crt itself
 * starts no thread: the host executor cuts its steps with these functions,
 * and generated code for a host calls tn_crt_call_split, which hands the
 * call to a hook the application sets (tn_crt_set_parallel) or, without
 * one (the default, and what firmware keeps), runs it whole. */
#define TN_CRT_SPLIT_CONV2D_S8 1  /* TnCrtCallConvS8: bands of rows */
#define TN_CRT_SPLIT_CONV2D_F32 2 /* TnCrtCallConvF32 */
#define TN_CRT_SPLIT_DENSE_S8 3   /* TnCrtCallDenseS8: blocks of features */
#define TN_CRT_SPLIT_DENSE_F32 4  /* TnCrtCallDenseF32 */

/* Room for one part's parameters, of any kind. */
typedef union {
  TnCrtCallConvS8 conv_s8;
  TnCrtCallConvF32 conv_f32;
  TnCrtCallDenseS8 dense_s8;
  TnCrtCallDenseF32 dense_f32;
} TnCrtSplitParams;

/* A call that may be cut: what a parallel hook is handed. */
typedef struct TnCrtSplit {
  int32_t kind;        /* TN_CRT_SPLIT_* */
  int32_t nin;         /* entries of in */
  TnCrtCallFn fn;      /* the form's entry, tn_crt_call_<form> */
  const void *params;  /* the whole call's parameters */
  const void *const *in;
  void *out;
  size_t scratch_size; /* what each part is given (the whole call's) */
  /* the tn_crt_split_count and tn_crt_split_run of the crt that made the
   * call: a hook in another copy of the crt (a host library's) cuts the
   * call with the code that compiled it */
  int32_t (*count)(int32_t kind, const void *params, int32_t n);
  int32_t (*run)(const struct TnCrtSplit *c, int32_t i, int32_t n,
                 void *scratch, size_t scratch_size);
} TnCrtSplit;

/* How many parts a call of `kind` over `params` is cut into for n threads:
 * at most n (fewer rows or blocks than n: fewer), or 0 when it is not cut
 * (batch other than 1, one row or block, an unknown kind, or a band that
 * would read no input row at all). */
int32_t tn_crt_split_count(int32_t kind, const void *params, int32_t n);
/* Part i of n (n from tn_crt_split_count): its parameters into *part, and
 * how far its operands lie into the call's (bytes into in[0..2], and into
 * out). TN_CRT_INVALID_ARGUMENT for an index or kind out of range. */
int32_t tn_crt_split_part(int32_t kind, const void *params, int32_t i,
                          int32_t n, TnCrtSplitParams *part,
                          ptrdiff_t in_off[3], ptrdiff_t *out_off);
/* Run part i of n of `c` with `scratch` (scratch_size bytes, at least
 * c->scratch_size). */
int32_t tn_crt_split_run(const TnCrtSplit *c, int32_t i, int32_t n,
                         void *scratch, size_t scratch_size);

/* A parallel hook runs `c` in parts (each by tn_crt_split_run, on any
 * thread, the calling thread's part with `scratch`) and returns 1 with
 * the first failing part's status (or TN_CRT_OK) in *status; or returns 0
 * to decline, and the call then runs whole on the calling thread. */
typedef int32_t (*TnCrtParallelFn)(void *ctx, const TnCrtSplit *c,
                                   void *scratch, int32_t *status);
/* Set the hook this crt's tn_crt_call_split uses (NULL: none, each call
 * whole). One hook for the whole crt: set it before any run that may call
 * it, not during one. */
void tn_crt_set_parallel(TnCrtParallelFn fn, void *ctx);
/* The hook set (NULL when none), its context in *ctx when ctx is not
 * NULL. */
TnCrtParallelFn tn_crt_parallel(void **ctx);
/* What generated code calls for a call worth cutting: through the hook
 * when one is set and takes it, else fn(params, in, out, scratch,
 * scratch_size), the whole call. */
int32_t tn_crt_call_split(int32_t kind, TnCrtCallFn fn, const void *params,
                          int32_t nin, const void *const *in, void *out,
                          void *scratch, size_t scratch_size);

#define TN_CRT__CALL_DECL(form, Type, file)                                \
  int32_t tn_crt_call_##form(const void *params, const void *const *in,   \
                             void *out, void *scratch, size_t scratch_size);
TN_CRT_CALLS(TN_CRT__CALL_DECL)
#undef TN_CRT__CALL_DECL

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_CALLS_H_ */
