/*
 * test_ir_extreme.c: extreme attribute values and shapes (issue 13).
 *
 * Attribute values and dimensions come from files and other languages, so
 * type inference and tensor allocation must take any int64: the answer is
 * either a type whose dimensions are all >= 0 or a TypeError/ValueError
 * that names the operator (OverflowError for a tensor too big to exist),
 * never a wrapped shape, a write past a 16-slot array or undefined
 * behaviour (run under UBSan too).
 *
 * The "regressions" case keeps one test per finding of the issue, each of
 * which failed before the fix (crashed, gave a wrong type, or raised a
 * message that did not say what was wrong). The "sweep" case sets every
 * int and int-tuple attribute of every registered operator to each extreme
 * value in turn, starting from a valid example call per operator, and
 * builds the call three ways: the builder (tn_ir_call_op), the text format
 * (print, tn_ir_parse) and JSON (save, load, InferType). Each way must give
 * a sound type or a clean error naming the operator, the three must agree,
 * and where the size can be computed independently (padding, windows) it
 * is, in 128 bits. An operator with integer or tuple attributes but no
 * example in kExamples fails the sweep, so a new operator cannot skip it.
 */
#include "ir_test.h"

#include <inttypes.h>
#include <stdint.h>

/* ---- helpers ------------------------------------------------------------- */

static TnObject *tensor_type(const char *dtype, int32_t nd,
                             const int64_t *dims) {
  return K(tn_ir_tensor_type(dims, nd, ir_dtype(dtype)));
}

static TnObject *parse(const char *text) {
  return tn_ir_parse(text, strlen(text));
}

static TnObject *infer_type_pass(TnObject *mod) {
  TnObject *pass = tn_pass_get("InferType");
  ck_assert_msg(pass != NULL, "%s", tn_test_raised_text());
  TnObject *out = tn_pass_run(pass, mod, NULL);
  tn_object_release(pass);
  return out;
}

static const TnIrFunction *main_fn(TnObject *mod) {
  return (const TnIrFunction *)main_of(mod);
}

/* The raised error is a TypeError or ValueError whose message contains
 * each of the NULL-terminated strings; clears it. */
static void expect_type_or_value_error_(const char *file, int line, ...) {
  TnObject *e = tn_error_take_raised();
  ck_assert_msg(e != NULL, "%s:%d: nothing was raised", file, line);
  const char *kind = tn_error_kind(e), *msg = tn_error_message(e);
  ck_assert_msg(strcmp(kind, "TypeError") == 0 ||
                    strcmp(kind, "ValueError") == 0,
                "%s:%d: expected a TypeError or ValueError, got %s: %s", file,
                line, kind, msg);
  va_list ap;
  va_start(ap, line);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *))
    ck_assert_msg(strstr(msg, s) != NULL, "%s:%d: \"%s\" does not mention "
                  "\"%s\"", file, line, msg, s);
  va_end(ap);
  tn_object_release(e);
}
#define EXPECT_TV_ERROR(...) \
  expect_type_or_value_error_(__FILE__, __LINE__, __VA_ARGS__, NULL)

#define I64MAX_S "9223372036854775807"

/* ---- regressions: finding 1, expand_dims' rank check --------------------- */

/* expand_dims checked `ndim + num_newaxis > 16`, which overflows for a huge
 * num_newaxis and let inference write num_newaxis 1s into its 16-slot
 * stack array. */
START_TEST(test_expand_dims_huge_builder) {
  int64_t one[] = {1};
  TnObject *x = var("x", tensor_type("float32", 1, one));
  static const int64_t bad[] = {INT64_MAX, INT64_MAX - 1, INT64_C(1) << 62,
                                INT64_MAX / 2, INT64_C(1) << 32, 16, INT64_MIN};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_ptr_null(TRY_CALL("expand_dims", 1, x, "axis", tn_any_int(0),
                                "num_newaxis", tn_any_int(bad[i])));
    char value[32];
    snprintf(value, sizeof value, "%" PRId64, bad[i]);
    EXPECT_TV_ERROR("expand_dims", "num_newaxis", value);
  }
  /* 15 more fit the 16 dimensions operators take. */
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(0),
                      "num_newaxis", tn_any_int(15)),
                 "Tensor[(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), "
                 "float32]");
}
END_TEST

START_TEST(test_expand_dims_huge_text) {
  ck_assert_ptr_null(parse("fn (%x: Tensor[(1,), float32]) { expand_dims(%x, "
                           "axis=0, num_newaxis=" I64MAX_S ") }"));
  EXPECT_TV_ERROR("tn_ir_parse", "expand_dims", "num_newaxis", I64MAX_S);
}
END_TEST

/* A module saved with num_newaxis=1, the value changed in the file: the
 * loader takes it (an int is an int), InferType must refuse it. */
START_TEST(test_expand_dims_huge_json) {
  TnObject *mod = K(parse("fn (%x: Tensor[(1,), float32]) { expand_dims(%x, "
                          "axis=0, num_newaxis=1) }"));
  TnAny m = tn_any_obj(mod);
  const char *json = ((TnStringObj *)K(tn_json_save(&m, 0)))->data;
  const char *field = "\"num_newaxis\": 1";
  const char *at = strstr(json, field);
  ck_assert_msg(at != NULL, "no %s in %s", field, json);
  GString *edited = g_string_new_len(json, at - json);
  g_string_append(edited, "\"num_newaxis\": " I64MAX_S);
  g_string_append(edited, at + strlen(field));
  TnAny loaded = tn_any_none();
  int rc = tn_json_load(edited->str, edited->len, &loaded);
  g_string_free(edited, TRUE);
  if (rc == 0) {
    ir_keep_if(loaded.v_obj);
    ck_assert_ptr_null(infer_type_pass(loaded.v_obj));
  }
  EXPECT_TV_ERROR("expand_dims", "num_newaxis", I64MAX_S);
}
END_TEST

/* ---- regressions: finding 4, signed overflow in type inference ----------- */

/* nn.pad added the widths unchecked: 1 + 0 + INT64_MAX wrapped to a
 * negative dimension. */
START_TEST(test_pad_huge) {
  int64_t dims[] = {1, 2};
  TnObject *x = var("x", tensor_type("float32", 2, dims));
  TnAny big = tn_any_int(INT64_MAX);
  TnAny widths = tn_any_obj(K(tn_array_new(
      (TnAny[]){tn_any_obj(K(tn_array_new((TnAny[]){tn_any_int(0), big}, 2))),
                tn_any_obj(K(tn_array_new(
                    (TnAny[]){tn_any_int(0), tn_any_int(0)}, 2)))},
      2)));
  ck_assert_ptr_null(TRY_CALL("nn.pad", 1, x, "pad_width", widths));
  EXPECT_TV_ERROR("nn.pad", "pad_width", I64MAX_S);
  /* The flat form, with the largest widths that still fit. */
  TnAny flat = tn_any_obj(K(tn_array_new(
      (TnAny[]){tn_any_int(INT64_MAX - 1), tn_any_int(0), tn_any_int(1),
                tn_any_int(INT64_MAX - 3)},
      4)));
  ck_assert_type(CALL("nn.pad", 1, x, "pad_width", flat),
                 "Tensor[(" I64MAX_S ", " I64MAX_S "), float32]");
  TnAny over = tn_any_obj(K(tn_array_new(
      (TnAny[]){tn_any_int(0), tn_any_int(0), tn_any_int(INT64_MAX - 1),
                tn_any_int(0)},
      4)));
  ck_assert_ptr_null(TRY_CALL("nn.pad", 1, x, "pad_width", over));
  EXPECT_TV_ERROR("nn.pad", "pad_width", "9223372036854775806");
}
END_TEST

static TnAny int64s(int32_t n, const int64_t *v) {
  TnAny items[16];
  for (int32_t i = 0; i < n; i++) items[i] = tn_any_int(v[i]);
  return tn_any_obj(K(tn_array_new(items, n)));
}

/* conv2d's output size (in + pads - dilation * (k - 1) - 1) / stride + 1
 * was computed unchecked. */
START_TEST(test_conv2d_huge) {
  int64_t xd[] = {1, 1, 4, 4}, wd[] = {1, 1, 3, 3};
  TnObject *x = var("x", tensor_type("float32", 4, xd));
  TnObject *w = var("w", tensor_type("float32", 4, wd));
  int64_t pad[] = {INT64_MAX, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "padding",
                              int64s(2, pad)));
  EXPECT_TV_ERROR("nn.conv2d", "padding", I64MAX_S);
  int64_t pad4[] = {0, 0, INT64_MAX - 2, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "padding",
                              int64s(4, pad4)));
  EXPECT_TV_ERROR("nn.conv2d", "padding");
  /* the largest padded input the kernels index (int32): 4 + (INT32_MAX -
   * 4) = INT32_MAX, less the kernel's 3 is the room, one more the rows */
  int64_t pad_fit[] = {INT32_MAX - 4, 0, 0, 0};
  ck_assert_type(CALL("nn.conv2d", 2, x, w, "padding", int64s(4, pad_fit)),
                 "Tensor[(1, 1, 2147483645, 2), float32]");
  int64_t pad_over[] = {INT32_MAX - 3, 0, 0, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "padding",
                              int64s(4, pad_over)));
  EXPECT_TV_ERROR("nn.conv2d", "padding", "2147483644", "int32");
  /* issue 32: strides and padding past int32 were truncated in the
   * lowering, which then computed another convolution */
  int64_t x8d[] = {1, 1, 8, 8};
  TnObject *x8 = var("x8", tensor_type("float32", 4, x8d));
  int64_t st_wrap[] = {INT64_C(4294967297), 1}, pad_wrap[] = {
      INT64_C(4294967296), 0, 0, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x8, w, "strides",
                              int64s(2, st_wrap), "padding",
                              int64s(4, pad_wrap)));
  EXPECT_TV_ERROR("nn.conv2d", "strides", "4294967297", "int32");
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x8, w, "padding",
                              int64s(4, pad_wrap)));
  EXPECT_TV_ERROR("nn.conv2d", "padding", "4294967296", "int32");
  int64_t dil_wrap[] = {1, INT64_C(4294967296)};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x8, w, "dilation",
                              int64s(2, dil_wrap)));
  EXPECT_TV_ERROR("nn.conv2d", "dilation", "4294967296", "int32");
  int64_t dil[] = {INT64_MAX / 2 + 1, 1};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "dilation",
                              int64s(2, dil)));
  EXPECT_TV_ERROR("nn.conv2d", "dilation", "4611686018427387904");
  /* a huge dilation that does not overflow: the kernel does not fit */
  int64_t dil_fit[] = {INT64_C(1) << 29, 1};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "dilation",
                              int64s(2, dil_fit)));
  EXPECT_TV_ERROR("nn.conv2d", "does not fit");
  /* a huge stride is fine while the kernels can hold it: one output row */
  int64_t st[] = {INT32_MAX, INT32_MAX};
  ck_assert_type(CALL("nn.conv2d", 2, x, w, "strides", int64s(2, st)),
                 "Tensor[(1, 1, 1, 1), float32]");
  int64_t st_big[] = {INT64_MAX, 1};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "strides",
                              int64s(2, st_big)));
  EXPECT_TV_ERROR("nn.conv2d", "strides", I64MAX_S);
  /* one more row of padding is more than int64 holds */
  int64_t pad_max[] = {INT64_MAX - 3, 0, 0, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, x, w, "padding",
                              int64s(4, pad_max)));
  EXPECT_TV_ERROR("nn.conv2d", "padding");
  /* input dimensions come from files too */
  int64_t hx[] = {1, 1, INT64_MAX, 4};
  TnObject *h = var("h", tensor_type("float32", 4, hx));
  int64_t one_pad[] = {1, 0};
  ck_assert_ptr_null(TRY_CALL("nn.conv2d", 2, h, w, "padding",
                              int64s(2, one_pad)));
  EXPECT_TV_ERROR("nn.conv2d", "padding", I64MAX_S);
  /* the quantized convolution shares the arithmetic */
  int64_t qx[] = {1, 1, 4, 4};
  TnObject *qd = var("qd", tensor_type("int8", 4, qx));
  TnObject *qw = var("qw", tensor_type("int8", 4, wd));
  ck_assert_ptr_null(TRY_CALL("qnn.conv2d", 6, qd, qw, scalar(0, "int32"),
                              scalar(0, "int32"), scalar(1, "float32"),
                              scalar(1, "float32"), "padding",
                              int64s(2, pad)));
  EXPECT_TV_ERROR("qnn.conv2d", "padding", I64MAX_S);
}
END_TEST

/* Pooling: in + pads - size, and ceil_mode's + stride - 1. */
START_TEST(test_pool2d_huge) {
  int64_t xd[] = {1, 1, 4, 4};
  TnObject *x = var("x", tensor_type("float32", 4, xd));
  int64_t size_min[] = {INT64_MIN, 1};
  ck_assert_ptr_null(TRY_CALL("nn.max_pool2d", 1, x, "pool_size",
                              int64s(2, size_min)));
  EXPECT_TV_ERROR("nn.max_pool2d", "pool_size");
  int64_t one[] = {1, 1}, st[] = {INT64_C(1) << 30, INT64_C(1) << 30};
  /* ceil(3 / 2^30) + 1 = 2 windows; hin + stride - 1 overflowed */
  ck_assert_type(CALL("nn.avg_pool2d", 1, x, "pool_size", int64s(2, one),
                      "strides", int64s(2, st), "ceil_mode",
                      tn_any_bool(true)),
                 "Tensor[(1, 1, 2, 2), float32]");
  /* with INT32_MAX the second window would end past int32 */
  int64_t st_max[] = {INT32_MAX, 1};
  ck_assert_ptr_null(TRY_CALL("nn.avg_pool2d", 1, x, "pool_size",
                              int64s(2, one), "strides", int64s(2, st_max),
                              "ceil_mode", tn_any_bool(true)));
  EXPECT_TV_ERROR("nn.avg_pool2d", "strides", "2147483647", "ceil_mode");
  ck_assert_type(CALL("nn.avg_pool2d", 1, x, "pool_size", int64s(2, one),
                      "strides", int64s(2, st_max)),
                 "Tensor[(1, 1, 1, 4), float32]");
  int64_t size_big[] = {INT64_C(1) << 32, 1};
  ck_assert_ptr_null(TRY_CALL("nn.max_pool2d", 1, x, "pool_size",
                              int64s(2, size_big)));
  EXPECT_TV_ERROR("nn.max_pool2d", "pool_size", "4294967296", "int32");
  int64_t pad[] = {INT64_MAX, 0, 0, 0};
  ck_assert_ptr_null(TRY_CALL("nn.max_pool2d", 1, x, "pool_size",
                              int64s(2, one), "padding", int64s(4, pad)));
  EXPECT_TV_ERROR("nn.max_pool2d", "padding", I64MAX_S);
}
END_TEST

/* reshape multiplied dimensions unchecked: INT64_MAX * 2 wrapped to -2. */
START_TEST(test_reshape_huge) {
  int64_t xd[] = {4};
  TnObject *x = var("x", tensor_type("float32", 1, xd));
  int64_t ns[] = {INT64_MAX, 2};
  ck_assert_ptr_null(TRY_CALL("reshape", 1, x, "newshape", int64s(2, ns)));
  EXPECT_TV_ERROR("reshape", "newshape", I64MAX_S);
  int64_t ns2[] = {-1, INT64_C(1) << 62, 4};
  ck_assert_ptr_null(TRY_CALL("reshape", 1, x, "newshape", int64s(3, ns2)));
  EXPECT_TV_ERROR("reshape", "newshape", "4611686018427387904");
  /* an input with more elements than int64 holds */
  int64_t hd[] = {INT64_C(1) << 62, 8};
  TnObject *h = var("h", tensor_type("float32", 2, hd));
  ck_assert_ptr_null(TRY_CALL("reshape", 1, h, "newshape", ints(1, -1)));
  EXPECT_TV_ERROR("reshape", "argument 0 (data)", "overflow");
  /* a zero-size shape whose other dimensions overflow has no strides */
  int64_t zd[] = {0};
  TnObject *z = var("z", tensor_type("float32", 1, zd));
  int64_t ns3[] = {INT64_C(1) << 62, INT64_C(1) << 62, 0};
  ck_assert_ptr_null(TRY_CALL("reshape", 1, z, "newshape", int64s(3, ns3)));
  EXPECT_TV_ERROR("reshape", "newshape", "4611686018427387904");
  /* large but representable is fine */
  int64_t bd[] = {INT64_C(1) << 31, INT64_C(1) << 31};
  TnObject *b = var("b", tensor_type("float32", 2, bd));
  ck_assert_type(CALL("reshape", 1, b, "newshape", ints(2, -1, 2)),
                 "Tensor[(2305843009213693952, 2), float32]");
}
END_TEST

/* concatenate summed the axis unchecked. */
START_TEST(test_concatenate_huge) {
  int64_t ad[] = {INT64_MAX, 1};
  TnObject *a = var("a", tensor_type("float32", 2, ad));
  TnObject *t = K(tn_ir_tuple((TnObject *[]){a, a}, 2));
  ck_assert_ptr_null(TRY_CALL("concatenate", 1, t, "axis", tn_any_int(0)));
  EXPECT_TV_ERROR("concatenate", "argument 0 (data)", "overflow");
  ck_assert_type(CALL("concatenate", 1, t, "axis", tn_any_int(1)),
                 "Tensor[(" I64MAX_S ", 2), float32]");
}
END_TEST

/* Axes at the ends of int64 (axis + ndim for a negative axis): these were
 * right before, and stay so. */
START_TEST(test_axes_extreme) {
  int64_t xd[] = {2, 3};
  TnObject *x = var("x", tensor_type("float32", 2, xd));
  static const int64_t v[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(v); i++) {
    ck_assert_ptr_null(TRY_CALL("expand_dims", 1, x, "axis",
                                tn_any_int(v[i])));
    EXPECT_TV_ERROR("expand_dims", "axis");
    ck_assert_ptr_null(TRY_CALL("nn.softmax", 1, x, "axis", tn_any_int(v[i])));
    EXPECT_TV_ERROR("nn.softmax", "axis");
    ck_assert_ptr_null(TRY_CALL("squeeze", 1, x, "axis", tn_any_int(v[i])));
    EXPECT_TV_ERROR("squeeze", "axis");
    ck_assert_ptr_null(TRY_CALL("transpose", 1, x, "axes",
                                int64s(2, (int64_t[]){v[i], 0})));
    EXPECT_TV_ERROR("transpose", "axis");
  }
}
END_TEST

/* ---- regressions: finding 7, tensor sizes -------------------------------- */

static const DLDevice kCPU = {kDLCPU, 0};

/* tn_tensor_view and tn_tensor_empty computed the row-major strides of the
 * shape unchecked: a shape with a 0 has no bytes, so nothing else looked,
 * and the other dimensions' product wrapped into the strides. Numpy's rule
 * now: the product of the dimensions (0 counted as 1) times the element
 * size must fit int64. */
START_TEST(test_tensor_shape_overflow) {
  DLDataType f32 = ir_dtype("float32");
  int64_t bd[] = {4, 6};
  TnObject *base = K(tn_tensor_empty(bd, 2, f32, kCPU));
  int64_t empty_huge[] = {0, INT64_C(1) << 62, INT64_C(1) << 62};
  ck_assert_ptr_null(tn_tensor_view(base, empty_huge, NULL, 3, f32, 0));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_view", "shape", "dimension 2");
  ck_assert_ptr_null(tn_tensor_empty(empty_huge, 3, f32, kCPU));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_empty", "dimension 2");
  /* the bytes overflow, the element count does not */
  int64_t bytes_huge[] = {INT64_C(1) << 62};
  ck_assert_ptr_null(tn_tensor_view(base, bytes_huge, NULL, 1, f32, 0));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_view", "float32");
  ck_assert_ptr_null(tn_tensor_empty(bytes_huge, 1, f32, kCPU));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_empty", "float32");
  int64_t count_huge[] = {INT64_MAX, 2};
  ck_assert_ptr_null(tn_tensor_view(base, count_huge, NULL, 2, f32, 0));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_view", "dimension 1");
  /* with explicit strides, the same rule holds for the shape */
  int64_t strides[] = {0, 0, 0};
  ck_assert_ptr_null(tn_tensor_view(base, empty_huge, strides, 3, f32, 0));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_view", "dimension 2");
  /* empty views of reasonable shapes are still fine */
  int64_t empty_ok[] = {0, 1 << 20, 1 << 20};
  TnObject *e = K(tn_tensor_view(base, empty_ok, NULL, 3, f32, 0));
  DLTensor *dl = tn_tensor_dltensor(e);
  ck_assert_int_eq(dl->strides[0], INT64_C(1) << 40);
  ck_assert_int_eq(tn_tensor_nbytes(e), 0);
  TnObject *e2 = K(tn_tensor_empty(empty_ok, 3, f32, kCPU));
  ck_assert_int_eq(tn_tensor_nbytes(e2), 0);
}
END_TEST

static void noop_deleter(DLManagedTensorVersioned *m) { (void)m; }

/* DLPack import takes the same rule. */
START_TEST(test_dlpack_shape_overflow) {
  static float storage[4];
  int64_t shape[] = {INT64_C(1) << 62, INT64_C(1) << 62, 0};
  int64_t strides[] = {1, 1, 1};
  DLManagedTensorVersioned m = {0};
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.dl_tensor.data = storage;
  m.dl_tensor.device = kCPU;
  m.dl_tensor.ndim = 3;
  m.dl_tensor.dtype = ir_dtype("float32");
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  m.deleter = noop_deleter;
  ck_assert_ptr_null(tn_tensor_from_dlpack(&m));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_from_dlpack", "dimension 1");
}
END_TEST

/* ---- the sweep ----------------------------------------------------------- */

/* A valid call of each operator that has attributes, as the text format
 * writes it. Every int and int-tuple attribute of the op's attrs type is
 * swept from here, whether the example sets it or not. */
typedef struct {
  const char *op;
  const char *fn;
} Example;

#define QCONV_PARAMS                                                         \
  "%izp: Tensor[(), int32], %kzp: Tensor[(), int32], %is: Tensor[(), "       \
  "float32], %ks: Tensor[(), float32]"
#define QUNARY_PARAMS                                                        \
  "%is: Tensor[(), float32], %izp: Tensor[(), int32], %os: Tensor[(), "      \
  "float32], %ozp: Tensor[(), int32]"

static const Example kExamples[] = {
    {"cast", "fn (%x: Tensor[(2, 3), float32]) { cast(%x, dtype=\"int8\") }"},
    {"clip", "fn (%x: Tensor[(2, 3), float32]) { clip(%x, a_min=0.0, "
             "a_max=6.0) }"},
    {"concatenate", "fn (%x: Tensor[(2, 3), float32], %y: Tensor[(2, 5), "
                    "float32]) { concatenate((%x, %y), axis=1) }"},
    {"expand_dims", "fn (%x: Tensor[(2, 3), float32]) { expand_dims(%x, "
                    "axis=1, num_newaxis=2) }"},
    {"matmul", "fn (%a: Tensor[(2, 3), float32], %b: Tensor[(3, 4), "
               "float32]) { matmul(%a, %b) }"},
    {"mean", "fn (%x: Tensor[(2, 3, 4), float32]) { mean(%x, axis=[0, 2], "
             "keepdims=true) }"},
    {"nn.avg_pool2d", "fn (%x: Tensor[(1, 2, 8, 8), float32]) { "
                      "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], "
                      "padding=[1, 1, 1, 1]) }"},
    {"nn.avg_pool2d", "fn (%x: Tensor[(1, 7, 7, 2), float32]) { "
                      "nn.avg_pool2d(%x, pool_size=[2, 3], strides=[2, 1], "
                      "padding=[0, 1], layout=\"NHWC\", ceil_mode=true) }"},
    {"nn.bias_add", "fn (%x: Tensor[(1, 3, 4, 4), float32], %b: Tensor[(3,), "
                    "float32]) { nn.bias_add(%x, %b, axis=1) }"},
    {"nn.conv2d", "fn (%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 2, "
                  "3, 3), float32]) { nn.conv2d(%x, %w, strides=[2, 2], "
                  "padding=[1, 1, 1, 1], dilation=[1, 1], groups=2, "
                  "channels=6, kernel_size=[3, 3]) }"},
    {"nn.conv2d", "fn (%x: Tensor[(1, 9, 9, 3), float32], %w: Tensor[(3, 3, "
                  "1, 3), float32]) { nn.conv2d(%x, %w, strides=[1, 2], "
                  "padding=[2], dilation=[2, 1], groups=3, "
                  "data_layout=\"NHWC\", kernel_layout=\"HWIO\") }"},
    {"nn.dense", "fn (%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), "
                 "float32]) { nn.dense(%x, %w, units=4) }"},
    {"nn.global_avg_pool2d", "fn (%x: Tensor[(1, 2, 4, 4), float32]) { "
                             "nn.global_avg_pool2d(%x) }"},
    {"nn.max_pool2d", "fn (%x: Tensor[(1, 2, 8, 8), float32]) { "
                      "nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]) }"},
    {"nn.pad", "fn (%x: Tensor[(1, 2, 4, 4), float32]) { nn.pad(%x, "
               "pad_width=[[0, 0], [0, 0], [1, 1], [2, 3]]) }"},
    {"nn.pad", "fn (%x: Tensor[(2, 4), float32]) { nn.pad(%x, "
               "pad_width=[1, 2, 0, 3]) }"},
    {"nn.softmax", "fn (%x: Tensor[(2, 5), float32]) { nn.softmax(%x, "
                   "axis=1) }"},
    {"qnn.conv2d", "fn (%x: Tensor[(1, 4, 8, 8), int8], %w: Tensor[(6, 2, 3, "
                   "3), int8], " QCONV_PARAMS ") { qnn.conv2d(%x, %w, %izp, "
                   "%kzp, %is, %ks, strides=[2, 2], padding=[1, 1], "
                   "dilation=[1, 1], groups=2, channels=6, kernel_size=[3, "
                   "3]) }"},
    {"qnn.dense", "fn (%x: Tensor[(2, 8), int8], %w: Tensor[(4, 8), int8], "
                  QCONV_PARAMS ") { qnn.dense(%x, %w, %izp, %kzp, %is, %ks, "
                  "units=4) }"},
    {"qnn.dequantize", "fn (%x: Tensor[(2, 3), int8], %s: Tensor[(3,), "
                       "float32], %z: Tensor[(3,), int32]) { "
                       "qnn.dequantize(%x, %s, %z, axis=1) }"},
    {"qnn.quantize", "fn (%x: Tensor[(2, 3), float32], %s: Tensor[(), "
                     "float32], %z: Tensor[(), int32]) { qnn.quantize(%x, "
                     "%s, %z, axis=-1) }"},
    {"qnn.requantize", "fn (%x: Tensor[(2, 3), int32], %s: Tensor[(3,), "
                       "float32], %z: Tensor[(3,), int32], %os: Tensor[(), "
                       "float32], %oz: Tensor[(), int32]) { "
                       "qnn.requantize(%x, %s, %z, %os, %oz, axis=1) }"},
    {"qnn.mean", "fn (%x: Tensor[(1, 4, 4, 3), int8], " QUNARY_PARAMS ") { "
                 "qnn.mean(%x, %is, %izp, %os, %ozp, axis=[1, 2], "
                 "keepdims=true) }"},
    {"qnn.softmax", "fn (%x: Tensor[(2, 5), int8], " QUNARY_PARAMS ") { "
                    "qnn.softmax(%x, %is, %izp, %os, %ozp, axis=-1) }"},
    {"reshape", "fn (%x: Tensor[(2, 3, 4), float32]) { reshape(%x, "
                "newshape=[0, -1, 2]) }"},
    {"squeeze", "fn (%x: Tensor[(1, 3, 1, 5), float32]) { squeeze(%x, "
                "axis=[0, 2]) }"},
    {"strided_slice", "fn (%x: Tensor[(5, 6, 7), float32]) { "
                      "strided_slice(%x, begin=[1, -1, 0], end=[4, -5, 7], "
                      "strides=[2, -2, 3], axes=[0, 1, 2]) }"},
    {"strided_slice", "fn (%x: Tensor[(5, 6), float32]) { strided_slice(%x, "
                      "begin=[-2], end=[100]) }"},
    {"transpose", "fn (%x: Tensor[(2, 3, 4), float32]) { transpose(%x, "
                  "axes=[1, 0, 2]) }"},
    {"sum", "fn (%x: Tensor[(2, 3, 4), float32]) { sum(%x, axis=[0, 2], "
            "keepdims=true) }"},
    {"max", "fn (%x: Tensor[(2, 3, 4), int8]) { max(%x, axis=[1]) }"},
    {"min", "fn (%x: Tensor[(2, 3, 4), int32]) { min(%x, axis=[-1], "
            "exclude=true) }"},
    {"argmax", "fn (%x: Tensor[(2, 3, 4), float32]) { argmax(%x, axis=1, "
               "keepdims=true) }"},
    {"argmin", "fn (%x: Tensor[(2, 3, 4), int8]) { argmin(%x, axis=-1) }"},
    {"qnn.sum", "fn (%x: Tensor[(1, 4, 4, 3), int8], " QUNARY_PARAMS ") { "
                "qnn.sum(%x, %is, %izp, %os, %ozp, axis=[1, 2]) }"},
    {"take", "fn (%x: Tensor[(5, 3), float32], %i: Tensor[(2, 2), int32]) { "
             "take(%x, %i, axis=0) }"},
    {"image.resize2d", "fn (%x: Tensor[(1, 3, 4, 2), float32]) { "
                       "image.resize2d(%x, size=[5, 7], "
                       "half_pixel_centers=true) }"},
    {"nn.conv2d_transpose", "fn (%x: Tensor[(1, 3, 3, 2), float32], %w: "
                            "Tensor[(4, 3, 3, 2), float32]) { "
                            "nn.conv2d_transpose(%x, %w, strides=[2, 2], "
                            "padding=[1, 1], output_size=[6, 6]) }"},
    {"qnn.conv2d_transpose", "fn (%x: Tensor[(1, 3, 3, 2), int8], %w: "
                             "Tensor[(4, 3, 3, 2), int8], %izp: Tensor[(), "
                             "int32], %kzp: Tensor[(), int32], %is: "
                             "Tensor[(), float32], %ks: Tensor[(4,), "
                             "float32]) { qnn.conv2d_transpose(%x, %w, %izp, "
                             "%kzp, %is, %ks, strides=[2, 1], "
                             "output_size=[7, 3]) }"},
    {"nn.l2_normalize", "fn (%x: Tensor[(2, 5), float32]) { "
                        "nn.l2_normalize(%x, eps=0.001, axis=1) }"},
    {"nn.log_softmax", "fn (%x: Tensor[(2, 5), float32]) { "
                       "nn.log_softmax(%x, axis=-1) }"},
    {"qnn.qlinear_avg_pool2d",
     "fn (%x: Tensor[(1, 2, 8, 8), int8], " QUNARY_PARAMS ", %off: "
     "Tensor[(), int32]) { qnn.qlinear_avg_pool2d(%x, %is, %izp, %os, %ozp, "
     "%off, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]) }"},
    {"nn.svdf_time", "fn (%s: Tensor[(2, 6, 4), int8], %w: Tensor[(6, 4), "
                     "int8]) { nn.svdf_time(%s, %w, rank=3, zero_point=-5) }"},
};

/* The values every int attribute (and each element of a tuple one) takes:
 * the list, the ends of int64 one step in, and the edges of the
 * 16 dimensions operators take. */
static const int64_t kValues[] = {
    0,          -1,        1,         INT64_MIN,         INT64_MAX,
    INT64_MAX / 2,         INT64_C(1) << 62,  -(INT64_C(1) << 62),
    INT64_MIN + 1,         INT64_MAX - 1,     2, 15, 16, 17, -17,
    /* the int32 edges, where the kernels' geometry truncated (issue 32) */
    INT32_MAX, INT64_C(1) << 31, INT64_C(1) << 32, (INT64_C(1) << 32) + 1,
    INT32_MIN};

/* Attributes of convolutions and pools the kernels hold as int32: a call
 * that lowers has each of them within int32 (issue 32: 2^32 + 1 became a
 * stride of 1). */
static const char *const kInt32Attrs[] = {"strides", "padding", "dilation",
                                          "pool_size", "kernel_size",
                                          "groups", "output_padding",
                                          "output_size", NULL};

static bool all_within_int32(const TnAny *v) {
  if (v->type_index == TN_TYPE_INT)
    return v->v_int64 >= INT32_MIN && v->v_int64 <= INT32_MAX;
  if (v->type_index == TN_TYPE_ARRAY)
    for (int64_t i = 0; i < tn_array_size(v->v_obj); i++)
      if (!all_within_int32(tn_array_at(v->v_obj, i))) return false;
  return true;
}


/* What one way of building a call gave: a type (owned) or an error. */
typedef struct {
  TnObject *type;
  char kind[32];
  char message[512];
} Outcome;

static void outcome_clear(Outcome *o) {
  tn_object_release(o->type);
  o->type = NULL;
}

/* The outcome of a builder result: its checked type, or the raised error
 * (taken). */
static void outcome_of(Outcome *o, TnObject *type_or_null) {
  memset(o, 0, sizeof *o);
  if (type_or_null) {
    tn_object_retain(type_or_null);
    o->type = type_or_null;
    return;
  }
  TnObject *e = tn_error_take_raised();
  g_strlcpy(o->kind, e ? tn_error_kind(e) : "(nothing raised)", sizeof o->kind);
  g_strlcpy(o->message, e ? tn_error_message(e) : "", sizeof o->message);
  tn_object_release(e);
}

/* Whether every dimension in `type` (a tensor or tuple type) is >= 0 and
 * every tensor has at most 16. */
static bool type_sound(const TnObject *type) {
  if (tn_object_is_instance(type, tn_ir_types()->tensor_type)) {
    const TnShapeObj *s =
        (const TnShapeObj *)((const TnIrTensorType *)type)->shape;
    if (s->ndim > 16) return false;
    for (int64_t i = 0; i < s->ndim; i++)
      if (s->data[i] < 0) return false;
    return true;
  }
  if (tn_object_is_instance(type, tn_ir_types()->tuple_type)) {
    const TnObject *f = ((const TnIrTupleType *)type)->fields;
    for (int64_t i = 0; i < tn_array_size(f); i++)
      if (!type_sound(tn_array_at(f, i)->v_obj)) return false;
    return true;
  }
  return false;
}

typedef struct {
  const Example *ex;
  const char *field;
  char value[256]; /* the swept attribute value, as text */
} Case;

static void check_outcome(const Case *c, const char *how, const Outcome *o) {
  if (o->type) {
    GString *t = g_string_new(NULL);
    TnObject *s = tn_ir_astext(o->type, 0);
    g_string_append(t, s ? ((TnStringObj *)s)->data : "?");
    tn_object_release(s);
    tn_error_set_raised(NULL);
    ck_assert_msg(type_sound(o->type), "%s %s=%s via %s: unsound type %s",
                  c->ex->op, c->field, c->value, how, t->str);
    g_string_free(t, TRUE);
    return;
  }
  ck_assert_msg(strcmp(o->kind, "TypeError") == 0 ||
                    strcmp(o->kind, "ValueError") == 0,
                "%s %s=%s via %s: expected a TypeError or ValueError, got "
                "%s: %s", c->ex->op, c->field, c->value, how, o->kind,
                o->message);
  ck_assert_msg(strstr(o->message, c->ex->op) != NULL,
                "%s %s=%s via %s: the error does not name the operator: %s",
                c->ex->op, c->field, c->value, how, o->message);
  if (getenv("TN_SWEEP_VERBOSE") && strstr(o->message, c->field) == NULL)
    fprintf(stderr, "%s %s=%s via %s: %s\n", c->ex->op, c->field, c->value,
            how, o->message);
}

/* The three ways agree: all typed with equal types, or all refused with
 * errors of one kind. */
static void check_agree(const Case *c, const char *how, const Outcome *a,
                        const Outcome *b) {
  ck_assert_msg((a->type != NULL) == (b->type != NULL),
                "%s %s=%s: the builder %s (%s%s%s) but %s %s (%s%s%s)",
                c->ex->op, c->field, c->value, a->type ? "typed it" : "refused",
                a->kind, a->type ? "" : ": ", a->message, how,
                b->type ? "typed it" : "refused", b->kind,
                b->type ? "" : ": ", b->message);
  if (a->type) {
    TnAny x = tn_any_obj(a->type), y = tn_any_obj(b->type);
    ck_assert_msg(tn_structural_equal(&x, &y, 0) == 1,
                  "%s %s=%s: the builder and %s infer different types",
                  c->ex->op, c->field, c->value, how);
  } else if (strstr(b->message, "tn_json_load") == NULL) {
    /* (the JSON loader refuses every bad graph with a ValueError, the
     * well-formedness check naming the original error) */
    ck_assert_msg(strcmp(a->kind, b->kind) == 0,
                  "%s %s=%s: the builder raised %s (%s), %s raised %s (%s)",
                  c->ex->op, c->field, c->value, a->kind, a->message, how,
                  b->kind, b->message);
  }
}

/* The body of a module's main function. (transfer none) */
static TnObject *main_body(TnObject *mod) {
  TnObject *f = tn_ir_module_get(mod, "main");
  if (f == NULL) return NULL;
  TnObject *body = ((TnIrFunction *)f)->body;
  tn_object_release(f); /* the module keeps it */
  return body;
}

typedef struct {
  int64_t cases, typed, checked;
} Stats;

/* ---- what the typed calls should be, in 128 bits ------------------------- */

typedef __int128 i128;

static const TnAny *attr_of(const char *const *names, const TnAny *values,
                            int32_t n, const char *name) {
  for (int32_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return &values[i];
  ck_abort_msg("no attribute %s", name);
  return NULL;
}

/* The ints of an int, int tuple or nested int tuple attribute, flattened;
 * the count. */
static int32_t flat_ints(const TnAny *v, int64_t *out, int32_t cap) {
  if (v->type_index == TN_TYPE_INT) {
    out[0] = v->v_int64;
    return 1;
  }
  if (v->type_index != TN_TYPE_ARRAY) return 0;
  int32_t n = 0;
  for (int64_t i = 0; i < tn_array_size(v->v_obj); i++) {
    const TnAny *e = tn_array_at(v->v_obj, i);
    int32_t k = flat_ints(e, out + n, cap - n);
    n += k;
  }
  return n;
}

static const int64_t *dims_of(const TnObject *type, int64_t *nd) {
  const TnShapeObj *s =
      (const TnShapeObj *)((const TnIrTensorType *)type)->shape;
  *nd = s->ndim;
  return s->data;
}

/* (top, left, bottom, right) as the operators read 0, 1, 2 or 4 values. */
static void padding4(const TnAny *v, int64_t pad[4]) {
  int64_t p[16];
  int32_t n = flat_ints(v, p, 16);
  if (n == 0) pad[0] = pad[1] = pad[2] = pad[3] = 0;
  else if (n == 1) pad[0] = pad[1] = pad[2] = pad[3] = p[0];
  else if (n == 2) pad[0] = pad[2] = p[0], pad[1] = pad[3] = p[1];
  else memcpy(pad, p, 4 * sizeof *pad);
}

static void pair(const TnAny *v, int64_t out[2]) {
  int64_t p[16];
  int32_t n = flat_ints(v, p, 16);
  if (n == 0) out[0] = out[1] = 1;
  else if (n == 1) out[0] = out[1] = p[0];
  else out[0] = p[0], out[1] = p[1];
}

static void expect_dim(const Case *c, const char *what, i128 want,
                       int64_t got) {
  ck_assert_msg(want == (i128)got, "%s %s=%s: %s is %" PRId64 ", in 128 "
                "bits %s%" PRId64 "...", c->ex->op, c->field, c->value, what,
                got, want > INT64_MAX ? "(over int64) " : "",
                (int64_t)(want > INT64_MAX ? INT64_MAX : want));
}

/* Where the result can be computed independently (padding and windows,
 * the sizes attributes grow), compute it in 128 bits: a wrapped size that
 * happens to be positive must not pass. Returns whether it checked. */
static bool oracle(const Case *c, TnObject *const *args,
                   const char *const *names, const TnAny *values, int32_t n,
                   const TnObject *type) {
  const char *op = c->ex->op;
  int64_t ond, ind;
  const int64_t *out = dims_of(type, &ond);
  const int64_t *in = dims_of(tn_ir_checked_type(args[0]), &ind);
  if (strcmp(op, "nn.pad") == 0) {
    int64_t w[64];
    int32_t nw = flat_ints(attr_of(names, values, n, "pad_width"), w, 64);
    ck_assert_int_eq(nw, 2 * ind);
    ck_assert_int_eq(ond, ind);
    for (int64_t i = 0; i < ind; i++)
      expect_dim(c, "a padded dimension", (i128)in[i] + w[2 * i] + w[2 * i + 1],
                 out[i]);
    return true;
  }
  if (strcmp(op, "strided_slice") == 0) {
    /* numpy's slice.indices, in 128 bits */
    int64_t b[64], e[64], st[64], ax[64];
    int32_t nb = flat_ints(attr_of(names, values, n, "begin"), b, 64);
    flat_ints(attr_of(names, values, n, "end"), e, 64);
    int32_t ns = flat_ints(attr_of(names, values, n, "strides"), st, 64);
    int32_t na = flat_ints(attr_of(names, values, n, "axes"), ax, 64);
    ck_assert_int_eq(ond, ind);
    i128 want[16];
    for (int64_t i = 0; i < ind; i++) want[i] = in[i];
    for (int32_t i = 0; i < nb; i++) {
      i128 a = na ? ax[i] : i, d, s = ns ? st[i] : 1, lo, hi;
      if (a < 0) a += ind;
      d = in[a];
      lo = b[i] < 0 ? (i128)b[i] + d : b[i];
      hi = e[i] < 0 ? (i128)e[i] + d : e[i];
      i128 min = s > 0 ? 0 : -1, max = s > 0 ? d : d - 1;
      lo = lo < min ? min : lo > max ? max : lo;
      hi = hi < min ? min : hi > max ? max : hi;
      i128 span = s > 0 ? hi - lo : lo - hi, step = s > 0 ? s : -s;
      want[a] = span > 0 ? (span - 1) / step + 1 : 0;
    }
    for (int64_t i = 0; i < ind; i++)
      expect_dim(c, "a sliced dimension", want[i], out[i]);
    return true;
  }
  bool conv = strcmp(op, "nn.conv2d") == 0 || strcmp(op, "qnn.conv2d") == 0;
  bool pool = strcmp(op, "nn.max_pool2d") == 0 ||
              strcmp(op, "nn.avg_pool2d") == 0;
  if (!conv && !pool) return false;
  const TnAny *layout =
      attr_of(names, values, n, conv ? "data_layout" : "layout");
  const char *l;
  TN_OK(tn_any_as_str(layout, &l, NULL));
  int h = strcmp(l, "NHWC") == 0 ? 1 : 2;
  int64_t pad[4], stride[2], dil[2] = {1, 1}, k[2];
  padding4(attr_of(names, values, n, "padding"), pad);
  pair(attr_of(names, values, n, "strides"), stride);
  bool ceil_mode = false;
  if (conv) {
    pair(attr_of(names, values, n, "dilation"), dil);
    int64_t knd;
    const int64_t *kd = dims_of(tn_ir_checked_type(args[1]), &knd);
    const char *kl;
    TN_OK(tn_any_as_str(attr_of(names, values, n, "kernel_layout"), &kl, NULL));
    int kh = strcmp(kl, "HWIO") == 0 ? 0 : 2;
    k[0] = kd[kh], k[1] = kd[kh + 1];
  } else {
    pair(attr_of(names, values, n, "pool_size"), k);
    ceil_mode = attr_of(names, values, n, "ceil_mode")->v_int64 != 0;
  }
  for (int a = 0; a < 2; a++) {
    i128 room = (i128)in[h + a] + pad[a] + pad[a + 2] -
                ((i128)dil[a] * (k[a] - 1) + 1);
    i128 q = room / stride[a] + (ceil_mode && room % stride[a] != 0);
    expect_dim(c, a ? "the output width" : "the output height", q + 1,
               out[h + a]);
  }
  return true;
}

/* A typed call lowered to kernels (tn_program_new, what the executor and
 * the code generator share): a program, or a clean error naming the
 * operator; never a crash, and no int32 attribute out of range. */
static void check_lowering(const Case *c, const TnIrFunction *fn,
                           TnObject *typed_call, const char *const *names,
                           const TnAny *values, int32_t nfields) {
  TnObject *params = fn->params, *pv[16];
  int32_t np = (int32_t)tn_array_size(params);
  for (int32_t i = 0; i < np; i++) pv[i] = tn_array_at(params, i)->v_obj;
  TnObject *f = tn_ir_function(pv, np, typed_call, NULL, NULL);
  ck_assert_msg(f != NULL, "%s", tn_test_raised_text());
  TnObject *prog = tn_program_new(NULL, f);
  tn_object_release(f);
  if (prog == NULL) {
    TnObject *e = tn_error_take_raised();
    ck_assert_msg(e != NULL, "%s %s=%s: lowering failed with nothing raised",
                  c->ex->op, c->field, c->value);
    const char *kind = tn_error_kind(e), *msg = tn_error_message(e);
    bool clean = strcmp(kind, "ValueError") == 0 ||
                 strcmp(kind, "TypeError") == 0 ||
                 strcmp(kind, "NotImplementedError") == 0;
    bool named = strstr(msg, c->ex->op) != NULL ||
                 strstr(msg, "tn_program_new") != NULL;
    ck_assert_msg(clean && named, "%s %s=%s: lowering raised %s: %s",
                  c->ex->op, c->field, c->value, kind, msg);
    tn_object_release(e);
    return;
  }
  tn_object_release(prog);
  /* the windows' geometry (a strided_slice's step past its extent is
   * clamped, not truncated, and is no window) */
  if (!strstr(c->ex->op, "conv") && !strstr(c->ex->op, "pool")) return;
  for (int32_t j = 0; j < nfields; j++)
    for (const char *const *a = kInt32Attrs; *a; a++)
      if (strcmp(names[j], *a) == 0)
        ck_assert_msg(all_within_int32(&values[j]), "%s %s=%s: lowered with "
                      "%s beyond int32", c->ex->op, c->field, c->value,
                      names[j]);
}

/* Build the example's call with `attrs_values` (every field of its attrs
 * type, by name) three ways and check them. */
static void sweep_case(const Case *c, const TnIrFunction *fn,
                       const TnIrCall *call, const char *const *names,
                       const TnAny *values, int32_t nfields, Stats *st) {
  TnObject *args[16];
  int32_t nargs = (int32_t)tn_array_size(call->args);
  for (int32_t i = 0; i < nargs; i++)
    args[i] = tn_array_at(call->args, i)->v_obj;
  st->cases++;

  /* 1. the builder, by attribute name (as the bindings call it) */
  Outcome built;
  TnObject *bc = tn_ir_call_op(c->ex->op, args, nargs, names, values, nfields);
  outcome_of(&built, bc ? tn_ir_checked_type(bc) : NULL);
  if (bc) ck_assert_msg(built.type != NULL, "%s: a call with no type",
                        c->ex->op);
  if (bc) check_lowering(c, fn, bc, names, values, nfields);
  tn_object_release(bc);
  check_outcome(c, "the builder", &built);
  if (built.type) {
    st->typed++;
    st->checked += oracle(c, args, names, values, nfields, built.type);
  }

  /* The same call made without inference (as a loader does), in a
   * function of the example's parameters. */
  int32_t at = ((const TnIrOp *)call->op)->attrs_index;
  TnObject *attrs = tn_node_new(at, names, values, nfields);
  if (attrs == NULL) {
    /* Only a value the attrs type itself refuses; the builder must have
     * refused it the same way. */
    ck_assert_ptr_null(built.type);
    tn_error_set_raised(NULL);
    outcome_clear(&built);
    return;
  }
  const char *cn[] = {"op", "args", "attrs"};
  TnAny cv[] = {tn_any_obj(call->op), tn_any_obj(call->args),
                tn_any_obj(attrs)};
  TnObject *raw = tn_node_new(tn_ir_types()->call, cn, cv, 3);
  tn_object_release(attrs);
  ck_assert_msg(raw != NULL, "%s", tn_test_raised_text());
  TnObject *params = fn->params;
  TnObject *pv[16];
  int32_t np = (int32_t)tn_array_size(params);
  for (int32_t i = 0; i < np; i++) pv[i] = tn_array_at(params, i)->v_obj;
  TnObject *f = tn_ir_function(pv, np, raw, NULL, NULL);
  tn_object_release(raw);
  ck_assert_msg(f != NULL, "%s", tn_test_raised_text());
  TnObject *empty = tn_ir_module_new();
  TnObject *mod = tn_ir_module_with(empty, "main", f);
  tn_object_release(empty);
  tn_object_release(f);
  ck_assert_msg(mod != NULL, "%s", tn_test_raised_text());

  /* 2. the text format: print, parse (which infers) */
  TnObject *text = tn_ir_astext(mod, 0);
  ck_assert_msg(text != NULL, "%s", tn_test_raised_text());
  TnObject *parsed = parse(((TnStringObj *)text)->data);
  tn_object_release(text);
  Outcome via_text;
  outcome_of(&via_text, parsed ? tn_ir_checked_type(main_body(parsed)) : NULL);
  tn_object_release(parsed);
  check_outcome(c, "the text format", &via_text);
  check_agree(c, "the text format", &built, &via_text);

  /* 3. JSON: save, load, InferType */
  TnAny m = tn_any_obj(mod);
  TnObject *json = tn_json_save(&m, 0);
  ck_assert_msg(json != NULL, "%s", tn_test_raised_text());
  TnAny loaded = tn_any_none();
  int rc = tn_json_load(((TnStringObj *)json)->data,
                        strlen(((TnStringObj *)json)->data), &loaded);
  tn_object_release(json);
  TnObject *typed = rc == 0 ? infer_type_pass(loaded.v_obj) : NULL;
  tn_any_clear(&loaded);
  Outcome via_json;
  outcome_of(&via_json, typed ? tn_ir_checked_type(main_body(typed)) : NULL);
  tn_object_release(typed);
  check_outcome(c, "JSON and InferType", &via_json);
  check_agree(c, "JSON and InferType", &built, &via_json);

  tn_object_release(mod);
  outcome_clear(&built);
  outcome_clear(&via_text);
  outcome_clear(&via_json);
}

/* The variants of an int-tuple attribute for kValues[vi]: the value alone,
 * tuples of it, the example's own tuple (flat or nested pairs) with one
 * element replaced, and a mix of all values. Each owns what it holds. */
static int32_t tuple_variants(const TnAny *base, int32_t vi, TnAny *out,
                              int32_t cap) {
  const int32_t nv = (int32_t)G_N_ELEMENTS(kValues);
  int64_t v = kValues[vi];
  int32_t n = 0;
  TnAny items[16];
  out[n++] = tn_any_int(v);
  for (int32_t len = 1; len <= 4; len *= 2) {
    for (int32_t k = 0; k < len; k++) items[k] = tn_any_int(v);
    out[n++] = tn_any_obj(tn_array_new(items, len));
  }
  if (base->type_index != TN_TYPE_ARRAY) return n;
  const TnObject *b = base->v_obj;
  int32_t len = (int32_t)tn_array_size(b);
  ck_assert_int_le(len, 16);
  bool nested = len > 0 && tn_any_is_object(tn_array_at(b, 0));
  if (!nested) {
    for (int32_t k = 0; k < len && n < cap - 1; k++) {
      for (int32_t j = 0; j < len; j++) items[j] = *tn_array_at(b, j);
      items[k] = tn_any_int(v);
      out[n++] = tn_any_obj(tn_array_new(items, len));
    }
    for (int32_t j = 0; j < len; j++)
      items[j] = tn_any_int(kValues[(vi + j) % nv]);
    if (len) out[n++] = tn_any_obj(tn_array_new(items, len));
    return n;
  }
  for (int32_t k = 0; k < len; k++) {
    const TnObject *pair = tn_array_at(b, k)->v_obj;
    for (int32_t m = 0; m < tn_array_size(pair) && n < cap; m++) {
      TnAny inner[16], outer[16];
      for (int32_t j = 0; j < tn_array_size(pair); j++)
        inner[j] = *tn_array_at(pair, j);
      inner[m] = tn_any_int(v);
      TnObject *changed = tn_array_new(inner, (int32_t)tn_array_size(pair));
      for (int32_t j = 0; j < len; j++) outer[j] = *tn_array_at(b, j);
      outer[k] = tn_any_obj(changed);
      out[n++] = tn_any_obj(tn_array_new(outer, len));
      tn_object_release(changed);
    }
  }
  return n;
}

static void describe(Case *c, const TnAny *value) {
  TnObject *r = tn_repr(value);
  g_strlcpy(c->value, r ? ((TnStringObj *)r)->data : "?", sizeof c->value);
  tn_object_release(r);
  tn_error_set_raised(NULL);
}

/* Sweep every int and int-tuple attribute of one example's call. */
static void sweep_example(const Example *ex, Stats *st) {
  TnObject *mod = parse(ex->fn);
  ck_assert_msg(mod != NULL, "the example of %s does not parse: %s", ex->op,
                tn_test_raised_text());
  ir_keep_if(mod);
  const TnIrFunction *fn = main_fn(mod);
  ck_assert_msg(tn_object_is_instance(fn->body, tn_ir_types()->call),
                "the example of %s is not one call", ex->op);
  const TnIrCall *call = (const TnIrCall *)fn->body;
  ck_assert_str_eq(((TnStringObj *)((TnIrOp *)call->op)->name)->data, ex->op);
  int32_t at = ((const TnIrOp *)call->op)->attrs_index;
  int32_t nf = tn_type_field_count(at);
  ck_assert_int_le(nf, 16);
  const char *names[16];
  TnAny values[16];
  for (int32_t j = 0; j < nf; j++) {
    names[j] = tn_type_field_at(at, j)->name;
    TN_OK(tn_node_get_at(call->attrs, j, &values[j]));
  }
  Case c = {ex, NULL, {0}};
  for (int32_t i = 0; i < nf; i++) {
    int32_t kind = tn_type_field_at(at, i)->kind;
    if (kind != TN_FIELD_INT && kind != TN_FIELD_ANY) continue;
    c.field = names[i];
    TnAny saved = values[i];
    for (int32_t vi = 0; vi < (int32_t)G_N_ELEMENTS(kValues); vi++) {
      TnAny variants[64];
      int32_t nvar = 1;
      if (kind == TN_FIELD_INT) variants[0] = tn_any_int(kValues[vi]);
      else nvar = tuple_variants(&saved, vi, variants, 64);
      for (int32_t k = 0; k < nvar; k++) {
        values[i] = variants[k];
        describe(&c, &variants[k]);
        sweep_case(&c, fn, call, names, values, nf, st);
        tn_any_clear(&variants[k]);
      }
    }
    values[i] = saved;
  }
  for (int32_t j = 0; j < nf; j++) tn_any_clear(&values[j]);
}

START_TEST(test_sweep_every_operator) {
  TnObject *list = K(tn_ir_op_list());
  GString *missing = g_string_new(NULL);
  Stats st = {0, 0, 0};
  int32_t swept = 0;
  for (int64_t i = 0; i < tn_array_size(list); i++) {
    const char *name;
    TN_OK(tn_any_as_str(tn_array_at(list, i), &name, NULL));
    TnObject *op = K(tn_ir_op_get(name));
    if (((TnIrOp *)op)->attrs_type == NULL) continue;
    /* the sweep varies integer and tuple attributes: an operator with
     * none (only floats, strings or dtypes) has nothing to sweep */
    int32_t at = ((const TnIrOp *)op)->attrs_index;
    bool sweepable = false;
    for (int32_t j = 0; j < tn_type_field_count(at); j++) {
      int32_t kind = tn_type_field_at(at, j)->kind;
      sweepable |= kind == TN_FIELD_INT || kind == TN_FIELD_ANY;
    }
    bool found = false;
    for (size_t k = 0; k < G_N_ELEMENTS(kExamples); k++) {
      if (strcmp(kExamples[k].op, name) != 0) continue;
      found = true;
      sweep_example(&kExamples[k], &st);
    }
    if (found) swept++;
    else if (sweepable) g_string_append_printf(missing, " %s", name);
  }
  bool none_missing = missing->len == 0;
  ck_assert_msg(none_missing, "operators with attributes but no example in "
                "kExamples (test_ir_extreme.c):%s", missing->str);
  g_string_free(missing, TRUE);
  /* Every example names a registered operator that takes attributes. */
  for (size_t k = 0; k < G_N_ELEMENTS(kExamples); k++) {
    TnObject *op = K(tn_ir_op_get(kExamples[k].op));
    ck_assert_ptr_nonnull(((TnIrOp *)op)->attrs_type);
  }
  /* The sweep did something: most cases fail, a good share type. */
  ck_assert_int_ge(swept, 22);
  ck_assert_int_gt(st.typed, st.cases / 20);
  ck_assert_int_gt(st.checked, st.typed / 4);
  if (getenv("TN_SWEEP_VERBOSE"))
    fprintf(stderr, "sweep: %d operators, %" PRId64 " cases, %" PRId64
            " typed, %" PRId64 " of them checked in 128 bits\n", swept,
            st.cases, st.typed, st.checked);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("ir_extreme");
  TCase *reg = ir_case(s, "regressions");
  tcase_add_test(reg, test_expand_dims_huge_builder);
  tcase_add_test(reg, test_expand_dims_huge_text);
  tcase_add_test(reg, test_expand_dims_huge_json);
  tcase_add_test(reg, test_pad_huge);
  tcase_add_test(reg, test_conv2d_huge);
  tcase_add_test(reg, test_pool2d_huge);
  tcase_add_test(reg, test_reshape_huge);
  tcase_add_test(reg, test_concatenate_huge);
  tcase_add_test(reg, test_tensor_shape_overflow);
  tcase_add_test(reg, test_dlpack_shape_overflow);
  TCase *sweep = ir_case(s, "sweep");
  tcase_add_test(sweep, test_axes_extreme);
  tcase_add_test(sweep, test_sweep_every_operator);
  return s;
}

TN_TEST_MAIN(make_suite)
