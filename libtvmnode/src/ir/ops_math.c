/*
 * ops_math.c: the elementwise operators TFLite models use beyond those of
 * ops_tensor.c and ops_qnn.c: abs, sqrt, rsqrt and log (float32), and the
 * int8 forms qnn.subtract (TFLite's SUB), qnn.leaky_relu, qnn.abs and
 * qnn.rsqrt.
 *
 * The int8 operators take their scales (float32) and zero points (int32)
 * as scalar arguments and share the type inference of qnn.add and
 * qnn.sigmoid (ops_qnn.c), the float ones that of exp; their arithmetic
 * is TFLite Micro's, computed by the crt kernels the lowering table picks
 * (kernel/lower_math.c).
 */
#include "ir/ops_nn.h"

#define QUNARY_ARGS \
  "data,input_scale,input_zero_point,output_scale,output_zero_point"

void tn__ir_ops_math_init(void) {
  static const struct {
    const char *name, *doc;
  } fl[] = {{"abs", "|data|, elementwise (float)"},
            {"sqrt", "the square root of data, elementwise (float)"},
            {"rsqrt", "1 / sqrt(data), elementwise (float)"},
            {"log", "the natural logarithm of data, elementwise (float)"}};
  for (size_t i = 0; i < G_N_ELEMENTS(fl); i++)
    tn__ir_op_define(fl[i].name, "data", NULL, TN_OP_ELEMWISE,
                     tn__ir_infer_unary_float, fl[i].doc);
  tn__ir_op_define("qnn.subtract",
                   "lhs,rhs,lhs_scale,lhs_zero_point,rhs_scale,"
                   "rhs_zero_point,output_scale,output_zero_point",
                   NULL, TN_OP_BROADCAST, tn__ir_infer_qnn_binary,
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
}
