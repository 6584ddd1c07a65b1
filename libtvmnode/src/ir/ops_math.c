/*
 * ops_math.c: the elementwise operators TFLite models use beyond those of
 * ops_tensor.c and ops_qnn.c: abs, sqrt, rsqrt, log, nn.elu and
 * nn.hard_swish (float32), and the int8 forms qnn.subtract (TFLite's SUB),
 * qnn.leaky_relu, qnn.abs, qnn.rsqrt, qnn.elu and qnn.hard_swish; the
 * broadcasting nn.prelu (float), qnn.squared_difference, qnn.prelu and
 * qnn.divide.
 *
 * The int8 operators take their scales (float32) and zero points (int32)
 * as scalar arguments and share the type inference of qnn.add and
 * qnn.sigmoid (ops_qnn.c), the float ones that of exp; their arithmetic
 * is TFLite Micro's, computed by the crt kernels the lowering table picks
 * (kernel/lower_math.c).
 */
#include "ir/ops_nn.h"

/* nn.prelu: float data and alpha, broadcast (TFLite's PRELU). */
static TnObject *infer_prelu(const char *op, TnObject *const *types,
                             int32_t n, TnObject *attrs) {
  (void)n, (void)attrs;
  const TnIrTensorType *d = tn__ir_tensor_arg(op, types, 0, "data");
  const TnIrTensorType *a = d ? tn__ir_tensor_arg(op, types, 1, "alpha") : NULL;
  if (a == NULL) return NULL;
  if (!tn__ir_is_float(d->dtype))
    return tn__ir_arg_error(op, 0, "data", types[0],
                            "expected a floating-point tensor"), NULL;
  if (!tn__ir_dtype_eq(a->dtype, d->dtype))
    return tn__ir_type_mismatch(op, 1, types[0], types[1]), NULL;
  int64_t dims[TN_IR_MAX_DIMS];
  int32_t nd;
  if (tn__ir_broadcast(op, d, a, dims, &nd)) return NULL;
  return tn_ir_tensor_type(dims, nd, d->dtype);
}

#define QBINARY_ARGS(L, R)                                               \
  L "," R "," L "_scale," L "_zero_point," R "_scale," R "_zero_point," \
    "output_scale,output_zero_point"
#define QUNARY_ARGS \
  "data,input_scale,input_zero_point,output_scale,output_zero_point"

void tn__ir_ops_math_init(void) {
  static const struct {
    const char *name, *doc;
  } fl[] = {{"abs", "|data|, elementwise (float)"},
            {"sqrt", "the square root of data, elementwise (float)"},
            {"rsqrt", "1 / sqrt(data), elementwise (float)"},
            {"log", "the natural logarithm of data, elementwise (float)"},
            {"nn.elu", "data where above 0, else exp(data) - 1 (float)"},
            {"nn.hard_swish", "data * relu6(data + 3) / 6 (float)"}};
  for (size_t i = 0; i < G_N_ELEMENTS(fl); i++)
    tn__ir_op_define(fl[i].name, "data", NULL, TN_OP_ELEMWISE,
                     tn__ir_infer_unary_float, fl[i].doc);
  tn__ir_op_define("qnn.subtract", QBINARY_ARGS("lhs", "rhs"), NULL, TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 lhs - rhs, each in its own quantization "
                   "(TFLite's SUB)");
  tn__ir_op_define("qnn.leaky_relu", QUNARY_ARGS, "ir.LeakyReluAttrs",
                   TN_OP_ELEMWISE, tn__ir_infer_qnn_unary,
                   "int8 data where above the zero point, else alpha * "
                   "data (TFLite's LEAKY_RELU)");
  tn__ir_op_define("qnn.abs", QUNARY_ARGS, NULL, TN_OP_ELEMWISE,
                   tn__ir_infer_qnn_unary, "int8 |data| (TFLite's ABS)");
  tn__ir_op_define("qnn.rsqrt", QUNARY_ARGS, NULL, TN_OP_ELEMWISE,
                   tn__ir_infer_qnn_unary,
                   "int8 1 / sqrt(data) (TFLite's RSQRT; inputs below the "
                   "zero point give 127)");
  tn__ir_op_define("qnn.elu", QUNARY_ARGS, NULL, TN_OP_ELEMWISE,
                   tn__ir_infer_qnn_unary, "int8 ELU (TFLite's table)");
  tn__ir_op_define("qnn.hard_swish", QUNARY_ARGS, NULL, TN_OP_ELEMWISE,
                   tn__ir_infer_qnn_unary,
                   "int8 data * relu6(data + 3) / 6 (TFLite's HARD_SWISH)");
  tn__ir_op_define("qnn.squared_difference", QBINARY_ARGS("lhs", "rhs"), NULL,
                   TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 (lhs - rhs)^2 (TFLite's SQUARED_DIFFERENCE)");
  tn__ir_op_define("qnn.prelu", QBINARY_ARGS("data", "alpha"), NULL,
                   TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 data where at or above its zero point, else data * "
                   "alpha, alpha broadcast (TFLite's PRELU)");
  tn__ir_op_define("nn.prelu", "data,alpha", NULL, TN_OP_BROADCAST,
                   infer_prelu,
                   "data where >= 0, else data * alpha, alpha broadcast "
                   "(float)");
  tn__ir_op_define("qnn.divide", QBINARY_ARGS("lhs", "rhs"), NULL,
                   TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
                   "int8 lhs / rhs, each in its own quantization, rhs "
                   "broadcast (TFLite's DIV)");
}
