/*
 * mlperf_tiny.h: the MLPerf Tiny reference models, built as tvmnode IR.
 *
 * The four networks of the MLPerf Tiny inference benchmark, in float32 and
 * int8 (quantized the way TFLite quantizes them: int8 activations, per-
 * channel int8 weights, int32 accumulators and biases):
 *
 *   "ad"   anomaly detection: a dense autoencoder 640-128-128-128-128-8-
 *          128-128-128-128-640 with ReLU
 *   "kws"  keyword spotting: DS-CNN (a 10x4 convolution, four depthwise-
 *          separable blocks, average pooling, dense 12, softmax), 49x10x1
 *   "vww"  visual wake words: MobileNetV1 (width 0.25) on 96x96x3, 2 classes
 *   "ic"   image classification: ResNet-8 on 32x32x3 CIFAR-10, 10 classes
 *
 * Append "-int8" for the quantized model ("kws-int8"). Layout is NHWC like
 * the TFLite originals; the weights are stored as TFLite stores them (OHWI
 * convolutions, [in, out] dense matrices) behind a transpose, as an
 * importer produces them, so FoldConstant has real work. Weight values are
 * deterministic pseudo-random numbers: the graphs, shapes and sizes are the
 * real ones, the accuracy is not.
 *
 * "synthetic:N" is a generated graph of about N operator calls for
 * benchmarks: residual elementwise blocks with a dense layer every few
 * blocks and constant subexpressions to fold.
 *
 * "untyped:NAME" is NAME with its input rebound by an unannotated let, so
 * that no call has a type until InferType runs (for measuring inference).
 */
#ifndef TVMNODE_MODELS_MLPERF_TINY_H_
#define TVMNODE_MODELS_MLPERF_TINY_H_

#include <tvmnode/tvmnode.h>

/* The model called `name` as a module whose "main" takes the input tensor;
 * NULL with a KeyError for an unknown name. (transfer full) */
TnObject *tn_model_build(const char *name);

/* The names tn_model_build knows, NULL-terminated. */
const char *const *tn_model_names(void);

#endif /* TVMNODE_MODELS_MLPERF_TINY_H_ */
