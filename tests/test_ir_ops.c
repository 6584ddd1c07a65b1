/*
 * test_ir_ops.c: type inference of every registered IR operator.
 *
 * For each operator, the types it infers (numpy broadcasting, -1 in
 * reshape, layouts, strides, padding, dilation, groups, int32
 * accumulation, per-tensor and per-channel quantisation parameters) and
 * every way its inference refuses a call (dtype, rank, shape, attribute
 * values), each error checked to name the operator, the argument and the
 * types as the library writes them. Also the registry (tn_ir_op_list,
 * unknown operators), call arity, attribute names, values and node types,
 * an operator's inference function called directly, and calls whose
 * argument types are not known yet (no type, no error).
 *
 * The "regressions" case keeps the bugs this suite found (each says what
 * was wrong and where), all fixed.
 */
#include "ir_test.h"

/* ---- helpers ------------------------------------------------------------- */

/* A variable of tensor type: tv("x", "float32", 2, 1, 10). */
static TnObject *tv(const char *name, const char *dtype, int32_t nd, ...) {
  int64_t dims[16];
  va_list ap;
  va_start(ap, nd);
  for (int32_t i = 0; i < nd; i++) dims[i] = va_arg(ap, int);
  va_end(ap);
  return var(name, K(tn_ir_tensor_type(dims, nd, ir_dtype(dtype))));
}

/* A variable of an `nd`-dimensional type, every dimension `size`
 * (for more dimensions than tv takes). */
static TnObject *tv_big(const char *dtype, int32_t nd, int64_t size) {
  int64_t dims[64];
  for (int32_t i = 0; i < nd; i++) dims[i] = size;
  return var("big", K(tn_ir_tensor_type(dims, nd, ir_dtype(dtype))));
}

/* A tuple expression of the given fields. */
static TnObject *tup(int32_t n, ...) {
  TnObject *fields[16];
  va_list ap;
  va_start(ap, n);
  for (int32_t i = 0; i < n; i++) fields[i] = va_arg(ap, TnObject *);
  va_end(ap);
  return K(tn_ir_tuple(fields, n));
}

/* An array attribute of arbitrary TnAny items (nested pad widths). */
static TnAny arr(int32_t n, ...) {
  TnAny items[16];
  va_list ap;
  va_start(ap, n);
  for (int32_t i = 0; i < n; i++) items[i] = va_arg(ap, TnAny);
  va_end(ap);
  return tn_any_obj(K(tn_array_new(items, n)));
}

/* An int array attribute of `n` copies of `v` (longer than ints takes). */
static TnAny ints_n(int32_t n, int64_t v) {
  TnAny items[64];
  for (int32_t i = 0; i < n; i++) items[i] = tn_any_int(v);
  return tn_any_obj(K(tn_array_new(items, n)));
}

static TnObject *f32s(double v) { return scalar(v, "float32"); }
static TnObject *i32s(double v) { return scalar(v, "int32"); }

/* Keep a result that may be NULL (for direct tn_ir_call calls). */
static TnObject *pooled(TnObject *o) {
  if (o) g_ptr_array_add(ir_pool_, o);
  return o;
}

/* A call with attrs given as a node (NULL: the defaults). */
static TnObject *call_attrs(const char *op, TnObject *attrs, int32_t n, ...) {
  TnObject *args[16];
  va_list ap;
  va_start(ap, n);
  for (int32_t i = 0; i < n; i++) args[i] = va_arg(ap, TnObject *);
  va_end(ap);
  return pooled(tn_ir_call(K(tn_ir_op_get(op)), args, n, attrs));
}

/* An attrs node of type `key` from (name, TnAny) pairs ending with NULL. */
static TnObject *attrs_node(const char *key, ...) {
  const char *names[16];
  TnAny values[16];
  int32_t n = 0;
  va_list ap;
  va_start(ap, key);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *)) {
    names[n] = s;
    values[n++] = va_arg(ap, TnAny);
  }
  va_end(ap);
  int32_t t = tn_type_index(key);
  ck_assert_msg(t >= 0, "no type %s", key);
  return K(tn_node_new(t, names, values, n));
}
#define ATTRS(key, ...) attrs_node(key, __VA_ARGS__, NULL)

/* `expr` must fail with an error of `kind` whose message contains each of
 * the substrings. */
#define FAILS(expr, kind, ...)                                             \
  do {                                                                     \
    TnObject *fails_c_ = (expr);                                           \
    ck_assert_msg(fails_c_ == NULL, "%s: expected a %s, got type %s",      \
                  #expr, kind, type_text(fails_c_));                       \
    TN_EXPECT_ERROR(kind, __VA_ARGS__);                                    \
  } while (0)

/* The error raised must contain `want` and not `unwanted`; clears it. */
static void expect_error_without(const char *want, const char *unwanted) {
  TnObject *e = tn_error_take_raised();
  ck_assert_msg(e != NULL, "expected an error");
  const char *m = tn_error_message(e);
  ck_assert_msg(strstr(m, want) && !strstr(m, unwanted),
                "message \"%s\": want \"%s\", not \"%s\"", m, want, unwanted);
  tn_object_release(e);
}

/* "<op>: " for messages that start with the operator's name. */
static const char *who(const char *op) {
  static char buf[64];
  snprintf(buf, sizeof buf, "%s: ", op);
  return buf;
}

static void no_error(void) {
  ck_assert_msg(tn_error_peek_raised() == NULL, "unexpected error: %s",
                tn_test_raised_text());
}

static const char *const kAllOps[] = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum",
    "negative", "exp", "sigmoid", "tanh", "clip", "nn.relu", "cast",
    "reshape", "transpose", "concatenate", "squeeze", "expand_dims",
    "nn.dense", "matmul", "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d",
    "nn.global_avg_pool2d", "nn.softmax", "nn.bias_add", "nn.pad",
    "qnn.quantize", "qnn.dequantize", "qnn.requantize", "qnn.conv2d",
    "qnn.dense", "qnn.add", "strided_slice", "mean", "qnn.mean"};

static const char *const kBinary[] = {"add", "subtract", "multiply",
                                      "divide", "maximum", "minimum"};

/* ---- registry, arity, attributes ----------------------------------------- */

START_TEST(test_op_list_has_every_operator) {
  TnObject *list = K(tn_ir_op_list());
  int64_t n = tn_array_size(list);
  ck_assert_int_ge(n, (int64_t)G_N_ELEMENTS(kAllOps));
  bool found[G_N_ELEMENTS(kAllOps)] = {0};
  const char *prev = NULL;
  for (int64_t i = 0; i < n; i++) {
    const char *s;
    TN_OK(tn_any_as_str(tn_array_at(list, i), &s, NULL));
    if (prev) ck_assert_msg(strcmp(prev, s) < 0, "unsorted: %s, %s", prev, s);
    prev = s;
    for (size_t k = 0; k < G_N_ELEMENTS(kAllOps); k++)
      if (strcmp(s, kAllOps[k]) == 0) found[k] = true;
  }
  for (size_t k = 0; k < G_N_ELEMENTS(kAllOps); k++) {
    ck_assert_msg(found[k], "%s is not in tn_ir_op_list", kAllOps[k]);
    /* One unique ir.Op per name, carrying that name. */
    TnObject *a = K(tn_ir_op_get(kAllOps[k])), *b = K(tn_ir_op_get(kAllOps[k]));
    ck_assert_ptr_eq(a, b);
    ck_assert_str_eq(((TnStringObj *)((TnIrOp *)a)->name)->data, kAllOps[k]);
  }
}
END_TEST

START_TEST(test_unknown_operator) {
  TnObject *x = tv("x", "float32", 2, 1, 10);
  FAILS(TRY_CALL("nn.conv3d", 1, x), "KeyError",
        "no operator is registered as 'nn.conv3d'");
  FAILS(TRY_CALL("Add", 2, x, x), "KeyError", "'Add'");
  FAILS(pooled(tn_ir_op_get("relu")), "KeyError", "tn_ir_op_get", "'relu'");
  FAILS(TRY_CALL("", 1, x), "KeyError", "registered as ''");
}
END_TEST

START_TEST(test_arity) {
  TnObject *x = tv("x", "float32", 2, 1, 10);
  FAILS(TRY_CALL("add", 1, x), "TypeError", "add takes 2 arguments, got 1");
  FAILS(TRY_CALL("subtract", 3, x, x, x), "TypeError",
        "subtract takes 2 arguments, got 3");
  FAILS(TRY_CALL("nn.relu", 2, x, x), "TypeError",
        "nn.relu takes 1 argument, got 2");
  FAILS(TRY_CALL("nn.relu", 0), "TypeError", "nn.relu takes 1 argument, got 0");
  FAILS(TRY_CALL("concatenate", 2, x, x), "TypeError",
        "concatenate takes 1 argument, got 2");
  FAILS(TRY_CALL("qnn.add", 2, x, x), "TypeError",
        "qnn.add takes 8 arguments, got 2");
  FAILS(TRY_CALL("qnn.requantize", 3, x, x, x), "TypeError",
        "qnn.requantize takes 5 arguments, got 3");
  FAILS(TRY_CALL("nn.conv2d", 1, x, "strides", ints(2, 1, 1)), "TypeError",
        "nn.conv2d takes 2 arguments, got 1");
  /* Every operator, one argument too many and (if it takes any) too few. */
  TnObject *args[16];
  for (int i = 0; i < 16; i++) args[i] = x;
  for (size_t k = 0; k < G_N_ELEMENTS(kAllOps); k++) {
    TnObject *op = K(tn_ir_op_get(kAllOps[k]));
    int64_t want = ((TnIrOp *)op)->num_inputs;
    ck_assert_int_ge(want, 1);
    for (int64_t got = want - 1; got <= want + 1; got += 2) {
      char msg[128];
      snprintf(msg, sizeof msg, "%s takes %lld argument%s, got %lld",
               kAllOps[k], (long long)want, want == 1 ? "" : "s",
               (long long)got);
      FAILS(pooled(tn_ir_call(op, args, (int32_t)got, NULL)), "TypeError",
            msg);
    }
  }
}
END_TEST

START_TEST(test_attribute_names_and_values) {
  TnObject *x = tv("x", "float32", 2, 1, 10);
  TnObject *d = tv("d", "float32", 4, 1, 3, 8, 8);
  TnObject *w = tv("w", "float32", 4, 4, 3, 3, 3);
  TnObject *wd = tv("wd", "float32", 2, 4, 10);
  /* An attribute the operator does not have. */
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "stride", ints(2, 2, 2)),
        "AttributeError", "nn.conv2d: ", "ir.Conv2DAttrs",
        "no field 'stride'");
  FAILS(TRY_CALL("nn.softmax", 1, x, "dim", tn_any_int(1)), "AttributeError",
        "nn.softmax: ", "ir.SoftmaxAttrs", "no field 'dim'");
  FAILS(TRY_CALL("add", 2, x, x, "axis", tn_any_int(1)), "TypeError",
        "add takes no attributes, got 'axis'");
  FAILS(TRY_CALL("qnn.add", 8, x, x, x, x, x, x, x, x, "scale",
                 tn_any_float(1)),
        "TypeError", "qnn.add takes no attributes, got 'scale'");
  /* Values of the wrong kind. */
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "groups", tn_any_cstr("two")),
        "TypeError", "nn.conv2d: ", "field 'groups' of ir.Conv2DAttrs",
        "expects int");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "data_layout", tn_any_int(1)),
        "TypeError", "nn.conv2d: ", "field 'data_layout'", "expects str",
        "got int");
  FAILS(TRY_CALL("matmul", 2, x, x, "transpose_a", tn_any_cstr("yes")),
        "TypeError", "matmul: ", "field 'transpose_a'", "expects bool");
  FAILS(TRY_CALL("clip", 1, x, "a_min", tn_any_cstr("low"), "a_max",
                 tn_any_float(1)),
        "TypeError", "clip: ", "field 'a_min'", "expects float");
  FAILS(TRY_CALL("cast", 1, x, "dtype", tn_any_int(3)), "TypeError", "cast: ",
        "field 'dtype'", "expects DataType");
  FAILS(TRY_CALL("nn.dense", 2, x, wd, "units", tn_any_int(4), "units",
                 tn_any_int(4)),
        "TypeError", "nn.dense: ", "field 'units'", "given twice");
  /* Attributes without a default must be given. */
  FAILS(TRY_CALL("clip", 1, x, "a_min", tn_any_float(0)), "TypeError",
        "clip: ", "missing required field 'a_max'");
  FAILS(TRY_CALL("cast", 1, x), "TypeError", "cast: ",
        "missing required field 'dtype'");
  FAILS(TRY_CALL("reshape", 1, x), "TypeError", "reshape: ",
        "missing required field 'newshape'");
  FAILS(TRY_CALL("expand_dims", 1, x), "TypeError", "expand_dims: ",
        "missing required field 'axis'");
  FAILS(TRY_CALL("nn.max_pool2d", 1, d), "TypeError", "nn.max_pool2d: ",
        "missing required field 'pool_size'");
  FAILS(TRY_CALL("nn.pad", 1, d), "TypeError", "nn.pad: ",
        "missing required field 'pad_width'");
}
END_TEST

START_TEST(test_attrs_node_types) {
  TnObject *x = tv("x", "float32", 2, 1, 10);
  TnObject *d = tv("d", "float32", 4, 1, 3, 8, 8);
  TnObject *w = tv("w", "float32", 4, 4, 3, 3, 3);
  TnObject *dense = ATTRS("ir.DenseAttrs", "units", tn_any_int(4));
  FAILS(call_attrs("nn.conv2d", dense, 2, d, w), "TypeError",
        "nn.conv2d: attrs must be a ir.Conv2DAttrs, got a ir.DenseAttrs");
  FAILS(call_attrs("add", dense, 2, x, x), "TypeError",
        "add takes no attributes, got a ir.DenseAttrs");
  /* Same C layout, different node types. */
  TnObject *bias = ATTRS("ir.BiasAddAttrs", "axis", tn_any_int(1));
  FAILS(call_attrs("nn.softmax", bias, 1, x), "TypeError",
        "nn.softmax: attrs must be a ir.SoftmaxAttrs, got a ir.BiasAddAttrs");
  TnObject *map = K(tn_map_new(NULL, NULL, 0));
  FAILS(call_attrs("nn.conv2d", map, 2, d, w), "TypeError",
        "nn.conv2d: attrs must be a ir.Conv2DAttrs, got a tn.Map");
  /* The right node is used as it is; NULL means every default. */
  TnObject *conv = ATTRS("ir.Conv2DAttrs", "padding", ints(1, 1));
  TnObject *c = call_attrs("nn.conv2d", conv, 2, d, w);
  ck_assert_type(c, "Tensor[(1, 4, 8, 8), float32]");
  ck_assert_ptr_eq(((TnIrCall *)c)->attrs, conv);
  c = call_attrs("nn.conv2d", NULL, 2, d, w);
  ck_assert_type(c, "Tensor[(1, 4, 6, 6), float32]");
  ck_assert(tn_object_is_instance(((TnIrCall *)c)->attrs,
                                  tn_type_index("ir.Conv2DAttrs")));
  ck_assert_ptr_null(((TnIrCall *)CALL("add", 2, x, x))->attrs);
  /* Only operators take attrs. */
  TnObject *args[] = {d, w};
  FAILS(pooled(tn_ir_call(K(tn_ir_global_var("f")), args, 2, conv)),
        "TypeError", "tn_ir_call: only operator calls take attrs");
  /* Arguments must be expressions. */
  TnObject *type = tt("float32", 1, 3);
  FAILS(TRY_CALL("add", 2, x, type), "TypeError",
        "add: argument 1 must be an ir.Expr, got ir.TensorType");
}
END_TEST

START_TEST(test_untyped_arguments_defer_inference) {
  TnObject *u = var("u", NULL), *x = tv("x", "float32", 2, 1, 10);
  ck_assert_type(u, "?");
  TnObject *c = CALL("add", 2, u, x);
  ck_assert_ptr_null(tn_ir_checked_type(c));
  ck_assert_type(c, "?");
  no_error();
  ck_assert_type(CALL("nn.relu", 1, c), "?");
  ck_assert_type(CALL("add", 2, x, c), "?");
  ck_assert_type(CALL("nn.dense", 2, x, u), "?");
  ck_assert_type(CALL("qnn.add", 8, u, x, x, x, x, x, x, x), "?");
  /* What inference would reject waits until the types are known. */
  ck_assert_type(CALL("nn.conv2d", 2, u, x, "data_layout",
                      tn_any_cstr("NCWH")),
                 "?");
  ck_assert_type(CALL("clip", 1, u, "a_min", tn_any_float(6), "a_max",
                      tn_any_float(0)),
                 "?");
  TnObject *t = tup(2, x, u);
  ck_assert_type(t, "?");
  ck_assert_type(CALL("concatenate", 1, t, "axis", tn_any_int(5)), "?");
  no_error();
  /* Arity and attribute names are checked at once all the same. */
  FAILS(TRY_CALL("add", 1, u), "TypeError", "add takes 2 arguments, got 1");
  FAILS(TRY_CALL("nn.conv2d", 2, u, u, "stride", ints(2, 1, 1)),
        "AttributeError", "nn.conv2d: ", "no field 'stride'");
}
END_TEST

START_TEST(test_infer_function_directly) {
  TnObject *add = tn_ir_op_get_attr(K(tn_ir_op_get("add")),
                                    TN_OP_ATTR_INFER_TYPE)->v_obj;
  TnAny ok[] = {tn_any_obj(tt("float32", 2, 4, 1)),
                tn_any_obj(tt("float32", 1, 3))};
  TnAny args[] = {tn_any_obj(K(tn_array_new(ok, 2))), tn_any_none()};
  TnAny ret = tn_any_none();
  TN_OK(tn_func_call(add, args, 2, &ret));
  ck_assert(tn_any_is_object(&ret));
  ck_assert_str_eq(astext(K(ret.v_obj), 0), "Tensor[(4, 3), float32]");
  ret = tn_any_none();
  ck_assert_int_ne(tn_func_call(add, args, 1, &ret), 0);
  TN_EXPECT_ERROR("TypeError",
                  "add: type inference takes (arg_types: tn.Array, attrs)");
  TnAny not_types[] = {ok[0], tn_any_int(3)};
  args[0] = tn_any_obj(K(tn_array_new(not_types, 2)));
  ck_assert_int_ne(tn_func_call(add, args, 2, &ret), 0);
  TN_EXPECT_ERROR("TypeError", "add: argument 1 has no type (got int)");
  TnAny bad[] = {ok[0], tn_any_obj(tt("float32", 2, 3, 2))};
  args[0] = tn_any_obj(K(tn_array_new(bad, 2)));
  ck_assert_int_ne(tn_func_call(add, args, 2, &ret), 0);
  TN_EXPECT_ERROR("TypeError", "add: argument 0 has type Tensor[(4, 1), "
                  "float32] and argument 1 has type Tensor[(3, 2), float32]",
                  "(dimension 0: 4 vs 3)");
  /* With an attrs node, as calls pass it. */
  TnObject *tr = tn_ir_op_get_attr(K(tn_ir_op_get("transpose")),
                                   TN_OP_ATTR_INFER_TYPE)->v_obj;
  TnAny one[] = {ok[0]};
  TnAny targs[] = {tn_any_obj(K(tn_array_new(one, 1))),
                   tn_any_obj(ATTRS("ir.TransposeAttrs", "axes",
                                    ints(2, 1, 0)))};
  TN_OK(tn_func_call(tr, targs, 2, &ret));
  ck_assert_str_eq(astext(K(ret.v_obj), 0), "Tensor[(1, 4), float32]");
}
END_TEST

/* ---- elementwise --------------------------------------------------------- */

START_TEST(test_binary_broadcasting) {
  TnObject *a = tv("a", "float32", 2, 1, 10), *b = tv("b", "float32", 2, 1, 10);
  TnObject *c3 = tv("c", "float32", 3, 4, 1, 3);
  TnObject *c2 = tv("c2", "float32", 2, 5, 1);
  TnObject *s = f32s(2), *m = tv("m", "float32", 2, 2, 3);
  TnObject *v3 = tv("v3", "float32", 1, 3), *v4 = tv("v4", "float32", 1, 4);
  TnObject *mi = tv("mi", "int32", 2, 2, 3), *i8 = tv("i8", "int8", 1, 3);
  TnObject *z = tv("z", "float32", 2, 0, 3), *r = tv("r", "float32", 2, 1, 3);
  TnObject *t = tup(1, m);
  for (size_t k = 0; k < G_N_ELEMENTS(kBinary); k++) {
    const char *op = kBinary[k];
    ck_assert_type(CALL(op, 2, a, b), "Tensor[(1, 10), float32]");
    ck_assert_type(CALL(op, 2, c3, c2), "Tensor[(4, 5, 3), float32]");
    ck_assert_type(CALL(op, 2, c2, c3), "Tensor[(4, 5, 3), float32]");
    ck_assert_type(CALL(op, 2, s, m), "Tensor[(2, 3), float32]");
    ck_assert_type(CALL(op, 2, m, s), "Tensor[(2, 3), float32]");
    ck_assert_type(CALL(op, 2, s, s), "Tensor[(), float32]");
    ck_assert_type(CALL(op, 2, v3, m), "Tensor[(2, 3), float32]");
    ck_assert_type(CALL(op, 2, z, r), "Tensor[(0, 3), float32]");
    ck_assert_type(CALL(op, 2, mi, mi), "Tensor[(2, 3), int32]");
    ck_assert_type(CALL(op, 2, i8, i8), "Tensor[(3,), int8]");
    FAILS(TRY_CALL(op, 2, m, v4), "TypeError", who(op),
          "argument 0 has type Tensor[(2, 3), float32] and argument 1 has "
          "type Tensor[(4,), float32]: shapes do not broadcast (dimension 1: "
          "3 vs 4)");
    ck_assert_type(CALL(op, 2, c3, tv("c4", "float32", 2, 2, 3)),
                   "Tensor[(4, 2, 3), float32]");
    FAILS(TRY_CALL(op, 2, c3, tv("c5", "float32", 2, 4, 2)), "TypeError",
          who(op), "argument 0 has type Tensor[(4, 1, 3), float32]",
          "argument 1 has type Tensor[(4, 2), float32]",
          "shapes do not broadcast (dimension 2: 3 vs 2)");
    FAILS(TRY_CALL(op, 2, z, m), "TypeError", who(op),
          "shapes do not broadcast (dimension 0: 0 vs 2)");
    FAILS(TRY_CALL(op, 2, m, mi), "TypeError", who(op),
          "argument 1 has type Tensor[(2, 3), int32], expected "
          "Tensor[(2, 3), float32]");
    FAILS(TRY_CALL(op, 2, i8, v3), "TypeError", who(op),
          "argument 1 has type Tensor[(3,), float32], expected "
          "Tensor[(3,), int8]");
    FAILS(TRY_CALL(op, 2, t, m), "TypeError", who(op),
          "argument 0 (lhs) has type (Tensor[(2, 3), float32],): expected a "
          "tensor");
    FAILS(TRY_CALL(op, 2, m, t), "TypeError", who(op),
          "argument 1 (rhs) has type (Tensor[(2, 3), float32],): expected a "
          "tensor");
  }
  /* At most 16 dimensions. */
  TnObject *d16 = tv_big("float32", 16, 1), *d17 = tv_big("float32", 17, 1);
  ck_assert_type(CALL("add", 2, d16, m),
                 "Tensor[(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3), "
                 "float32]");
  FAILS(TRY_CALL("multiply", 2, d17, m), "TypeError",
        "multiply: argument 0 (lhs)",
        "17 dimensions is more than the 16 operators support");
}
END_TEST

START_TEST(test_unary) {
  static const char *const any[] = {"negative", "nn.relu"};
  static const char *const flt[] = {"exp", "sigmoid", "tanh"};
  TnObject *f = tv("f", "float32", 2, 1, 10), *h = tv("h", "float16", 1, 5);
  TnObject *i = tv("i", "int32", 1, 5), *i8 = tv("i8", "int8", 3, 1, 2, 3);
  TnObject *t = tup(1, f);
  for (size_t k = 0; k < G_N_ELEMENTS(any); k++) {
    ck_assert_type(CALL(any[k], 1, f), "Tensor[(1, 10), float32]");
    ck_assert_type(CALL(any[k], 1, i), "Tensor[(5,), int32]");
    ck_assert_type(CALL(any[k], 1, i8), "Tensor[(1, 2, 3), int8]");
    ck_assert_type(CALL(any[k], 1, f32s(1)), "Tensor[(), float32]");
    FAILS(TRY_CALL(any[k], 1, t), "TypeError", who(any[k]),
          "argument 0 (data) has type (Tensor[(1, 10), float32],): expected "
          "a tensor");
  }
  for (size_t k = 0; k < G_N_ELEMENTS(flt); k++) {
    ck_assert_type(CALL(flt[k], 1, f), "Tensor[(1, 10), float32]");
    ck_assert_type(CALL(flt[k], 1, h), "Tensor[(5,), float16]");
    ck_assert_type(CALL(flt[k], 1, f32s(1)), "Tensor[(), float32]");
    FAILS(TRY_CALL(flt[k], 1, i), "TypeError", who(flt[k]),
          "argument 0 (data) has type Tensor[(5,), int32]: expected a "
          "floating-point tensor");
    FAILS(TRY_CALL(flt[k], 1, i8), "TypeError", who(flt[k]),
          "Tensor[(1, 2, 3), int8]", "floating-point");
    FAILS(TRY_CALL(flt[k], 1, t), "TypeError", who(flt[k]),
          "argument 0 (data)", "expected a tensor");
  }
}
END_TEST

START_TEST(test_clip) {
  TnObject *f = tv("f", "float32", 2, 1, 10), *i = tv("i", "int32", 1, 5);
  ck_assert_type(CALL("clip", 1, f, "a_min", tn_any_float(0), "a_max",
                      tn_any_float(6)),
                 "Tensor[(1, 10), float32]");
  ck_assert_type(CALL("clip", 1, i, "a_min", tn_any_int(-1), "a_max",
                      tn_any_int(1)),
                 "Tensor[(5,), int32]");
  ck_assert_type(CALL("clip", 1, f, "a_min", tn_any_float(2), "a_max",
                      tn_any_float(2)),
                 "Tensor[(1, 10), float32]");
  ck_assert_type(call_attrs("clip", NULL, 1, f), "Tensor[(1, 10), float32]");
  FAILS(TRY_CALL("clip", 1, f, "a_min", tn_any_float(6), "a_max",
                 tn_any_float(0)),
        "TypeError", "clip: a_min 6 is above a_max 0");
  FAILS(TRY_CALL("clip", 1, f, "a_min", tn_any_float(0.5), "a_max",
                 tn_any_float(-0.5)),
        "TypeError", "clip: a_min 0.5 is above a_max -0.5");
  FAILS(TRY_CALL("clip", 1, tup(1, f), "a_min", tn_any_float(0), "a_max",
                 tn_any_float(6)),
        "TypeError", "clip: argument 0 (data) has type (Tensor[(1, 10), "
        "float32],): expected a tensor");
}
END_TEST

START_TEST(test_cast) {
  TnObject *f = tv("f", "float32", 2, 1, 10), *i = tv("i", "int32", 1, 5);
  ck_assert_type(CALL("cast", 1, f, "dtype", tn_any_cstr("int8")),
                 "Tensor[(1, 10), int8]");
  ck_assert_type(CALL("cast", 1, i, "dtype",
                      tn_any_dtype(ir_dtype("float16"))),
                 "Tensor[(5,), float16]");
  ck_assert_type(CALL("cast", 1, f32s(1), "dtype", tn_any_cstr("uint8")),
                 "Tensor[(), uint8]");
  ck_assert_type(CALL("cast", 1, f, "dtype", tn_any_cstr("float32")),
                 "Tensor[(1, 10), float32]");
  /* No dtype at all (the attrs node's default is void). */
  FAILS(call_attrs("cast", NULL, 1, f), "TypeError",
        "cast: attribute 'dtype' must be a value type");
  FAILS(TRY_CALL("cast", 1, f, "dtype", tn_any_cstr("void")), "TypeError",
        "cast: attribute 'dtype' must be a value type");
  FAILS(TRY_CALL("cast", 1, f, "dtype", tn_any_cstr("float33")), "TypeError",
        "cast: ", "'float33'", "not a DataType");
  FAILS(TRY_CALL("cast", 1, tup(1, f), "dtype", tn_any_cstr("int8")),
        "TypeError", "cast: argument 0 (data) has type (Tensor[(1, 10), "
        "float32],): expected a tensor");
}
END_TEST

/* ---- shapes -------------------------------------------------------------- */

START_TEST(test_reshape) {
  TnObject *x = tv("x", "float32", 3, 2, 3, 4), *s = f32s(1);
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(2, 6, 4)),
                 "Tensor[(6, 4), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(1, -1)),
                 "Tensor[(24,), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", tn_any_int(-1)),
                 "Tensor[(24,), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(2, 0, -1)),
                 "Tensor[(2, 12), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(3, 4, -1, 2)),
                 "Tensor[(4, 3, 2), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(4, 0, 0, 4, 1)),
                 "Tensor[(2, 3, 4, 1), float32]");
  ck_assert_type(CALL("reshape", 1, x, "newshape", ints(3, -1, 1, 1)),
                 "Tensor[(24, 1, 1), float32]");
  int64_t dims[] = {4, 6};
  TnAny shape = tn_any_obj(K(tn_shape_new(dims, 2)));
  ck_assert_type(CALL("reshape", 1, x, "newshape", shape),
                 "Tensor[(4, 6), float32]");
  ck_assert_type(CALL("reshape", 1, tv("i", "int8", 1, 6), "newshape",
                      ints(2, 3, 2)),
                 "Tensor[(3, 2), int8]");
  ck_assert_type(CALL("reshape", 1, s, "newshape", ints(2, 1, 1)),
                 "Tensor[(1, 1), float32]");
  ck_assert_type(CALL("reshape", 1, tv("e", "float32", 2, 1, 1), "newshape",
                      ints(0)),
                 "Tensor[(), float32]");
  ck_assert_type(CALL("reshape", 1, tv("z", "float32", 2, 0, 5), "newshape",
                      ints(2, -1, 5)),
                 "Tensor[(0, 5), float32]");
  /* Operators take at most 16 dimensions, inputs included. */
  FAILS(TRY_CALL("reshape", 1, tv_big("float32", 20, 1), "newshape",
                 ints(1, -1)),
        "TypeError", "reshape: argument 0 (data)",
        "20 dimensions is more than the 16 operators support");
  const char *x_is = "reshape: argument 0 (data) has type Tensor[(2, 3, 4), "
                     "float32]: ";
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(2, 5, 5)), "TypeError",
        x_is, "24 elements cannot reshape to 25");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(1, 23)), "TypeError",
        x_is, "24 elements cannot reshape to 23");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(2, -1, -1)), "TypeError",
        "reshape: newshape has more than one -1");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(2, -2, 12)), "TypeError",
        "reshape: newshape[0] = -2 is invalid");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(2, -1, 5)), "TypeError",
        x_is, "24 elements do not reshape with -1 into a multiple of 5");
  FAILS(TRY_CALL("reshape", 1, tv("z", "float32", 2, 2, 0), "newshape",
                 ints(2, -1, 0)),
        "TypeError", "reshape: ", "0 elements do not reshape with -1 into a "
        "multiple of 0");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints(4, 1, 2, 3, 0)),
        "TypeError", x_is, "newshape[3] = 0 copies a dimension the input "
        "does not have");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", tn_any_cstr("flat")),
        "TypeError", "reshape: attribute 'newshape' must be a list of at "
        "most 16 integers");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", tn_any_float(2.5)),
        "TypeError", "reshape: attribute 'newshape' must be a list");
  FAILS(TRY_CALL("reshape", 1, x, "newshape",
                 arr(2, tn_any_int(24), tn_any_cstr("1"))),
        "TypeError", "reshape: attribute 'newshape' must be a list");
  FAILS(TRY_CALL("reshape", 1, x, "newshape", ints_n(17, 1)), "TypeError",
        "reshape: attribute 'newshape' must be a list of at most 16 "
        "integers");
  /* None (the default of a bare attrs node) is the 0-d shape. */
  ck_assert_type(call_attrs("reshape", NULL, 1, s), "Tensor[(), float32]");
  FAILS(call_attrs("reshape", NULL, 1, x), "TypeError", x_is,
        "24 elements cannot reshape to 1");
  FAILS(TRY_CALL("reshape", 1, tup(1, x), "newshape", ints(1, -1)),
        "TypeError", "reshape: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_transpose) {
  TnObject *x = tv("x", "float32", 3, 2, 3, 4);
  ck_assert_type(CALL("transpose", 1, x), "Tensor[(4, 3, 2), float32]");
  ck_assert_type(CALL("transpose", 1, x, "axes", tn_any_none()),
                 "Tensor[(4, 3, 2), float32]");
  ck_assert_type(CALL("transpose", 1, x, "axes", ints(3, 0, 2, 1)),
                 "Tensor[(2, 4, 3), float32]");
  ck_assert_type(CALL("transpose", 1, x, "axes", ints(3, 0, 1, 2)),
                 "Tensor[(2, 3, 4), float32]");
  ck_assert_type(CALL("transpose", 1, x, "axes", ints(3, -1, 0, 1)),
                 "Tensor[(4, 2, 3), float32]");
  ck_assert_type(CALL("transpose", 1, tv("v", "int8", 1, 5)),
                 "Tensor[(5,), int8]");
  ck_assert_type(CALL("transpose", 1, f32s(1)), "Tensor[(), float32]");
  ck_assert_type(CALL("transpose", 1, tv_big("float32", 16, 2)),
                 "Tensor[(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2), "
                 "float32]");
  const char *x_is = "transpose: argument 0 (data) has type Tensor[(2, 3, "
                     "4), float32]: ";
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(2, 1, 0)), "TypeError",
        x_is, "axes has 2 entries for 3 dimensions");
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(4, 0, 1, 2, 3)),
        "TypeError", x_is, "axes has 4 entries for 3 dimensions");
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(3, 0, 1, 3)), "TypeError",
        x_is, "axis 3 is out of range for 3 dimensions");
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(3, -4, 0, 1)), "TypeError",
        x_is, "axis -4 is out of range for 3 dimensions");
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(3, 0, 1, 1)), "TypeError",
        "transpose: axes is not a permutation (axis 1 twice)");
  FAILS(TRY_CALL("transpose", 1, x, "axes", ints(3, 2, 0, -1)), "TypeError",
        "transpose: axes is not a permutation (axis 2 twice)");
  FAILS(TRY_CALL("transpose", 1, x, "axes", tn_any_cstr("reverse")),
        "TypeError", "transpose: attribute 'axes' must be a list");
  FAILS(TRY_CALL("transpose", 1, tup(1, x)), "TypeError",
        "transpose: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_concatenate) {
  TnObject *a = tv("a", "float32", 2, 2, 3), *b = tv("b", "float32", 2, 4, 3);
  TnObject *c = tv("c", "float32", 2, 2, 5);
  ck_assert_type(CALL("concatenate", 1, tup(2, a, b)),
                 "Tensor[(6, 3), float32]");
  ck_assert_type(CALL("concatenate", 1, tup(3, a, b, a), "axis",
                      tn_any_int(0)),
                 "Tensor[(8, 3), float32]");
  ck_assert_type(CALL("concatenate", 1, tup(2, a, c), "axis", tn_any_int(1)),
                 "Tensor[(2, 8), float32]");
  ck_assert_type(CALL("concatenate", 1, tup(2, c, a), "axis",
                      tn_any_int(-1)),
                 "Tensor[(2, 8), float32]");
  ck_assert_type(CALL("concatenate", 1, tup(1, a)), "Tensor[(2, 3), float32]");
  ck_assert_type(CALL("concatenate", 1,
                      tup(2, tv("p", "int8", 1, 2), tv("q", "int8", 1, 0))),
                 "Tensor[(2,), int8]");
  /* A variable of tuple type works as well as a tuple expression. */
  TnObject *fields[] = {tt("float32", 2, 2, 3), tt("float32", 2, 1, 3)};
  TnObject *tv2 = var("t", K(tn_ir_tuple_type(fields, 2)));
  ck_assert_type(CALL("concatenate", 1, tv2), "Tensor[(3, 3), float32]");
  const char *ab = "concatenate: argument 0 (data) has type (Tensor[(2, 3), "
                   "float32], Tensor[(4, 3), float32]): ";
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, b), "axis", tn_any_int(1)),
        "TypeError", ab, "element 1 has dimension 0 = 4, element 0 has 2");
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, c)), "TypeError",
        "concatenate: ", "element 1 has dimension 1 = 5, element 0 has 3");
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, b), "axis", tn_any_int(2)),
        "TypeError", ab, "axis 2 is out of range for 2 dimensions");
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, b), "axis", tn_any_int(-3)),
        "TypeError", ab, "axis -3 is out of range for 2 dimensions");
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, tv("r", "float32", 1, 3))),
        "TypeError", "concatenate: ", "Tensor[(3,), float32]",
        "element 1 does not match element 0 in rank and dtype");
  FAILS(TRY_CALL("concatenate", 1, tup(3, a, a, tv("i", "int32", 2, 2, 3))),
        "TypeError", "concatenate: ", "Tensor[(2, 3), int32]",
        "element 2 does not match element 0 in rank and dtype");
  FAILS(TRY_CALL("concatenate", 1, tup(2, a, tup(1, a))), "TypeError",
        "concatenate: ", "element 1 does not match element 0");
  FAILS(TRY_CALL("concatenate", 1, tup(2, tup(1, a), a)), "TypeError",
        "concatenate: argument 0 (data) has type ((Tensor[(2, 3), "
        "float32],), Tensor[(2, 3), float32]): element 0 is not a tensor");
  FAILS(TRY_CALL("concatenate", 1, K(tn_ir_tuple(NULL, 0))), "TypeError",
        "concatenate: argument 0 (data) has type (): nothing to "
        "concatenate");
  FAILS(TRY_CALL("concatenate", 1, a), "TypeError",
        "concatenate: argument 0 (data) has type Tensor[(2, 3), float32]: "
        "expected a tuple of tensors");
  FAILS(TRY_CALL("concatenate", 1, tup(2, f32s(1), f32s(2))), "TypeError",
        "concatenate: ", "axis 0 is out of range for 0 dimensions");
}
END_TEST

START_TEST(test_squeeze) {
  TnObject *x = tv("x", "float32", 4, 1, 3, 1, 5);
  ck_assert_type(CALL("squeeze", 1, x), "Tensor[(3, 5), float32]");
  ck_assert_type(CALL("squeeze", 1, x, "axis", ints(1, 0)),
                 "Tensor[(3, 1, 5), float32]");
  ck_assert_type(CALL("squeeze", 1, x, "axis", tn_any_int(2)),
                 "Tensor[(1, 3, 5), float32]");
  ck_assert_type(CALL("squeeze", 1, x, "axis", ints(1, -2)),
                 "Tensor[(1, 3, 5), float32]");
  ck_assert_type(CALL("squeeze", 1, x, "axis", ints(2, 2, 0)),
                 "Tensor[(3, 5), float32]");
  ck_assert_type(CALL("squeeze", 1, tv("o", "int8", 2, 1, 1)),
                 "Tensor[(), int8]");
  ck_assert_type(CALL("squeeze", 1, tv("n", "float32", 2, 2, 3)),
                 "Tensor[(2, 3), float32]");
  const char *x_is = "squeeze: argument 0 (data) has type Tensor[(1, 3, 1, "
                     "5), float32]: ";
  FAILS(TRY_CALL("squeeze", 1, x, "axis", ints(1, 1)), "TypeError", x_is,
        "axis 1 has size 3, not 1");
  FAILS(TRY_CALL("squeeze", 1, x, "axis", ints(2, 0, -1)), "TypeError", x_is,
        "axis 3 has size 5, not 1");
  FAILS(TRY_CALL("squeeze", 1, x, "axis", ints(1, 4)), "TypeError", x_is,
        "axis 4 is out of range for 4 dimensions");
  FAILS(TRY_CALL("squeeze", 1, x, "axis", ints(1, -5)), "TypeError", x_is,
        "axis -5 is out of range for 4 dimensions");
  FAILS(TRY_CALL("squeeze", 1, x, "axis", tn_any_float(0)), "TypeError",
        "squeeze: attribute 'axis' must be a list");
  FAILS(TRY_CALL("squeeze", 1, tup(1, x)), "TypeError",
        "squeeze: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_expand_dims) {
  TnObject *x = tv("x", "float32", 2, 2, 3);
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(0)),
                 "Tensor[(1, 2, 3), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(1)),
                 "Tensor[(2, 1, 3), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(2)),
                 "Tensor[(2, 3, 1), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(-1)),
                 "Tensor[(2, 3, 1), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(-3)),
                 "Tensor[(1, 2, 3), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(1),
                      "num_newaxis", tn_any_int(2)),
                 "Tensor[(2, 1, 1, 3), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(1),
                      "num_newaxis", tn_any_int(0)),
                 "Tensor[(2, 3), float32]");
  ck_assert_type(CALL("expand_dims", 1, f32s(1), "axis", tn_any_int(0)),
                 "Tensor[(1,), float32]");
  ck_assert_type(CALL("expand_dims", 1, x, "axis", tn_any_int(0),
                      "num_newaxis", tn_any_int(14)),
                 "Tensor[(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3), "
                 "float32]");
  const char *x_is = "expand_dims: argument 0 (data) has type Tensor[(2, 3), "
                     "float32]: ";
  FAILS(TRY_CALL("expand_dims", 1, x, "axis", tn_any_int(3)), "TypeError",
        x_is, "axis 3 is out of range");
  FAILS(TRY_CALL("expand_dims", 1, x, "axis", tn_any_int(-4)), "TypeError",
        x_is, "axis -4 is out of range");
  FAILS(TRY_CALL("expand_dims", 1, x, "axis", tn_any_int(0), "num_newaxis",
                 tn_any_int(-1)),
        "TypeError", "expand_dims: num_newaxis -1 is out of range");
  FAILS(TRY_CALL("expand_dims", 1, x, "axis", tn_any_int(0), "num_newaxis",
                 tn_any_int(15)),
        "TypeError", "expand_dims: num_newaxis 15 is out of range");
  FAILS(TRY_CALL("expand_dims", 1, tup(1, x), "axis", tn_any_int(0)),
        "TypeError", "expand_dims: argument 0 (data)", "expected a tensor");
}
END_TEST

/* ---- dense and matmul ---------------------------------------------------- */

START_TEST(test_dense) {
  TnObject *x = tv("x", "float32", 2, 1, 10), *w = tv("w", "float32", 2, 4, 10);
  ck_assert_type(CALL("nn.dense", 2, x, w), "Tensor[(1, 4), float32]");
  ck_assert_type(CALL("nn.dense", 2, x, w, "units", tn_any_int(4)),
                 "Tensor[(1, 4), float32]");
  ck_assert_type(CALL("nn.dense", 2, x, w, "units", tn_any_int(0)),
                 "Tensor[(1, 4), float32]");
  ck_assert_type(CALL("nn.dense", 2, tv("b", "float32", 3, 2, 5, 10), w),
                 "Tensor[(2, 5, 4), float32]");
  ck_assert_type(CALL("nn.dense", 2, tv("v", "float32", 1, 10), w),
                 "Tensor[(4,), float32]");
  ck_assert_type(CALL("nn.dense", 2, x, w, "out_dtype",
                      tn_any_cstr("float16")),
                 "Tensor[(1, 4), float16]");
  ck_assert_type(CALL("nn.dense", 2, tv("xi", "int8", 2, 3, 10),
                      tv("wi", "int8", 2, 4, 10), "out_dtype",
                      tn_any_cstr("int32")),
                 "Tensor[(3, 4), int32]");
  TnObject *w9 = tv("w9", "float32", 2, 4, 9);
  FAILS(TRY_CALL("nn.dense", 2, x, w9), "TypeError",
        "nn.dense: argument 1 (weight) has type Tensor[(4, 9), float32]: "
        "expected inner dimension 10 to match data of type Tensor[(1, 10), "
        "float32]");
  FAILS(TRY_CALL("nn.dense", 2, x, w, "units", tn_any_int(5)), "TypeError",
        "nn.dense: argument 1 (weight) has type Tensor[(4, 10), float32]: "
        "units = 5 but the weight has 4");
  FAILS(TRY_CALL("nn.dense", 2, x, tv("w3", "float32", 3, 1, 4, 10)),
        "TypeError", "nn.dense: argument 1 (weight) has type Tensor[(1, 4, "
        "10), float32]: expected 2 dimensions (units, in)");
  FAILS(TRY_CALL("nn.dense", 2, x, tv("w1", "float32", 1, 10)), "TypeError",
        "nn.dense: argument 1 (weight) has type Tensor[(10,), float32]: "
        "expected 2 dimensions");
  FAILS(TRY_CALL("nn.dense", 2, f32s(1), w), "TypeError",
        "nn.dense: argument 0 (data) has type Tensor[(), float32]: expected "
        "at least 1 dimension");
  FAILS(TRY_CALL("nn.dense", 2, x, tv("wi", "int8", 2, 4, 10)), "TypeError",
        "nn.dense: argument 1 has type Tensor[(4, 10), int8], expected "
        "Tensor[(1, 10), float32]");
  FAILS(TRY_CALL("nn.dense", 2, tup(1, x), w), "TypeError",
        "nn.dense: argument 0 (data)", "expected a tensor");
  FAILS(TRY_CALL("nn.dense", 2, x, tup(1, w)), "TypeError",
        "nn.dense: argument 1 (weight)", "expected a tensor");
}
END_TEST

START_TEST(test_matmul) {
  TnObject *a = tv("a", "float32", 2, 2, 3), *b = tv("b", "float32", 2, 3, 4);
  TnObject *at = tv("at", "float32", 2, 3, 2);
  TnObject *bt = tv("bt", "float32", 2, 4, 3);
  ck_assert_type(CALL("matmul", 2, a, b), "Tensor[(2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, at, b, "transpose_a", tn_any_bool(1)),
                 "Tensor[(2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, a, bt, "transpose_b", tn_any_bool(1)),
                 "Tensor[(2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, at, bt, "transpose_a", tn_any_bool(1),
                      "transpose_b", tn_any_bool(1)),
                 "Tensor[(2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, a, b, "transpose_a", tn_any_bool(0),
                      "transpose_b", tn_any_int(0)),
                 "Tensor[(2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, tv("ab", "float32", 3, 5, 2, 3), b),
                 "Tensor[(5, 2, 4), float32]");
  ck_assert_type(CALL("matmul", 2, tv("ai", "int32", 2, 1, 3),
                      tv("bi", "int32", 2, 3, 1)),
                 "Tensor[(1, 1), int32]");
  FAILS(TRY_CALL("matmul", 2, a, bt), "TypeError",
        "matmul: argument 1 (b) has type Tensor[(4, 3), float32]: inner "
        "dimension 4 does not match a's 3");
  FAILS(TRY_CALL("matmul", 2, a, b, "transpose_a", tn_any_bool(1)),
        "TypeError", "matmul: argument 1 (b) has type Tensor[(3, 4), "
        "float32]: inner dimension 3 does not match a's 2");
  FAILS(TRY_CALL("matmul", 2, a, b, "transpose_b", tn_any_bool(1)),
        "TypeError", "matmul: argument 1 (b)",
        "inner dimension 4 does not match a's 3");
  FAILS(TRY_CALL("matmul", 2, tv("v", "float32", 1, 3), b), "TypeError",
        "matmul: argument 0 (a) has type Tensor[(3,), float32]: expected at "
        "least 2 dimensions");
  FAILS(TRY_CALL("matmul", 2, a, tv("b3", "float32", 3, 1, 3, 4)),
        "TypeError", "matmul: argument 1 (b) has type Tensor[(1, 3, 4), "
        "float32]: expected 2 dimensions");
  FAILS(TRY_CALL("matmul", 2, a, tv("bi", "int32", 2, 3, 4)), "TypeError",
        "matmul: argument 1 has type Tensor[(3, 4), int32], expected "
        "Tensor[(2, 3), float32]");
  FAILS(TRY_CALL("matmul", 2, tup(1, a), b), "TypeError",
        "matmul: argument 0 (a)", "expected a tensor");
  FAILS(TRY_CALL("matmul", 2, a, tup(1, b)), "TypeError",
        "matmul: argument 1 (b)", "expected a tensor");
}
END_TEST

/* ---- conv2d -------------------------------------------------------------- */

START_TEST(test_conv2d_nchw) {
  TnObject *d = tv("d", "float32", 4, 1, 3, 32, 32);
  TnObject *w = tv("w", "float32", 4, 16, 3, 3, 3);
  ck_assert_type(CALL("nn.conv2d", 2, d, w),
                 "Tensor[(1, 16, 30, 30), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "padding", ints(1, 1)),
                 "Tensor[(1, 16, 32, 32), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "padding", tn_any_int(1)),
                 "Tensor[(1, 16, 32, 32), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "strides", ints(2, 2, 2),
                      "padding", ints(1, 1)),
                 "Tensor[(1, 16, 16, 16), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "strides", tn_any_int(2)),
                 "Tensor[(1, 16, 15, 15), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "strides", ints(2, 2, 1)),
                 "Tensor[(1, 16, 15, 30), float32]");
  /* padding (ph, pw) and (top, left, bottom, right) */
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "padding", ints(2, 1, 2)),
                 "Tensor[(1, 16, 32, 34), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "padding", ints(4, 1, 0, 0, 2)),
                 "Tensor[(1, 16, 31, 32), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "padding", ints(4, 0, 3, 2, 0)),
                 "Tensor[(1, 16, 32, 33), float32]");
  /* dilation: a 3x3 kernel spans 5 */
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "dilation", ints(2, 2, 2)),
                 "Tensor[(1, 16, 28, 28), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "dilation", ints(2, 3, 1),
                      "strides", ints(2, 2, 2), "padding", ints(2, 1, 3)),
                 "Tensor[(1, 16, 14, 18), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "channels", tn_any_int(16),
                      "kernel_size", ints(2, 3, 3)),
                 "Tensor[(1, 16, 30, 30), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "out_dtype",
                      tn_any_cstr("float16")),
                 "Tensor[(1, 16, 30, 30), float16]");
  ck_assert_type(CALL("nn.conv2d", 2, tv("n", "float32", 4, 8, 3, 5, 7),
                      tv("k", "float32", 4, 2, 3, 5, 1)),
                 "Tensor[(8, 2, 1, 7), float32]");
  /* Explicit default layouts. */
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "data_layout", tn_any_cstr("NCHW"),
                      "kernel_layout", tn_any_cstr("OIHW")),
                 "Tensor[(1, 16, 30, 30), float32]");
}
END_TEST

START_TEST(test_conv2d_nhwc_groups) {
  TnObject *d = tv("d", "float32", 4, 1, 32, 32, 3);
  TnObject *w = tv("w", "float32", 4, 3, 3, 3, 16);
  TnAny nhwc = tn_any_cstr("NHWC"), hwio = tn_any_cstr("HWIO");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "data_layout", nhwc,
                      "kernel_layout", hwio),
                 "Tensor[(1, 30, 30, 16), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "data_layout", nhwc,
                      "kernel_layout", hwio, "strides", ints(2, 2, 2),
                      "padding", ints(1, 1)),
                 "Tensor[(1, 16, 16, 16), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "data_layout", nhwc,
                      "kernel_layout", hwio, "padding", ints(4, 0, 0, 1, 1),
                      "strides", ints(2, 1, 2)),
                 "Tensor[(1, 31, 16, 16), float32]");
  /* NHWC data with an OIHW kernel. */
  ck_assert_type(CALL("nn.conv2d", 2, d, tv("o", "float32", 4, 8, 3, 1, 1),
                      "data_layout", nhwc),
                 "Tensor[(1, 32, 32, 8), float32]");
  /* NHWC data with an OHWI kernel (TFLite's filter layout). */
  ck_assert_type(CALL("nn.conv2d", 2, d, tv("ohwi", "float32", 4, 16, 3, 3, 3),
                      "data_layout", nhwc, "kernel_layout",
                      tn_any_cstr("OHWI"), "padding", ints(1, 1)),
                 "Tensor[(1, 32, 32, 16), float32]");
  /* NCHW data with an HWIO kernel. */
  ck_assert_type(CALL("nn.conv2d", 2, tv("c", "float32", 4, 1, 3, 9, 9), w,
                      "kernel_layout", hwio),
                 "Tensor[(1, 16, 7, 7), float32]");
  /* Grouped: 8 input channels in 2 groups of 4. */
  TnObject *g = tv("g", "float32", 4, 1, 8, 10, 10);
  ck_assert_type(CALL("nn.conv2d", 2, g, tv("gw", "float32", 4, 16, 4, 3, 3),
                      "groups", tn_any_int(2)),
                 "Tensor[(1, 16, 8, 8), float32]");
  /* Depthwise, NCHW/OIHW, multiplier 1 and 2. */
  ck_assert_type(CALL("nn.conv2d", 2, g, tv("dw", "float32", 4, 8, 1, 3, 3),
                      "groups", tn_any_int(8), "padding", ints(1, 1)),
                 "Tensor[(1, 8, 10, 10), float32]");
  ck_assert_type(CALL("nn.conv2d", 2, g, tv("dw2", "float32", 4, 16, 1, 3, 3),
                      "groups", tn_any_int(8), "channels", tn_any_int(16)),
                 "Tensor[(1, 16, 8, 8), float32]");
  /* Depthwise, NHWC/HWIO. */
  ck_assert_type(CALL("nn.conv2d", 2, tv("h", "float32", 4, 1, 10, 10, 8),
                      tv("hw", "float32", 4, 3, 3, 1, 8), "groups",
                      tn_any_int(8), "data_layout", nhwc, "kernel_layout",
                      hwio, "strides", ints(2, 2, 2), "padding", ints(1, 1)),
                 "Tensor[(1, 5, 5, 8), float32]");
}
END_TEST

START_TEST(test_conv2d_errors) {
  TnObject *d = tv("d", "float32", 4, 1, 3, 32, 32);
  TnObject *w = tv("w", "float32", 4, 16, 3, 3, 3);
  const char *w_is = "nn.conv2d: argument 1 (weight) has type Tensor[(16, 3, "
                     "3, 3), float32]: ";
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "data_layout", tn_any_cstr("NCWH")),
        "TypeError", "nn.conv2d: data_layout 'NCWH' is not NCHW or NHWC");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "data_layout", tn_any_cstr("nchw")),
        "TypeError", "nn.conv2d: data_layout 'nchw' is not NCHW or NHWC");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_layout", tn_any_cstr("IOHW")),
        "TypeError",
        "nn.conv2d: kernel_layout 'IOHW' is not OIHW, HWIO or OHWI");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_layout", tn_any_cstr("")),
        "TypeError", "nn.conv2d: kernel_layout '' is not OIHW, HWIO or OHWI");
  FAILS(TRY_CALL("nn.conv2d", 2, tv("d3", "float32", 3, 3, 32, 32), w),
        "TypeError", "nn.conv2d: argument 0 (data) has type Tensor[(3, 32, "
        "32), float32]: expected 4 dimensions (NCHW)");
  FAILS(TRY_CALL("nn.conv2d", 2, tv("d5", "float32", 5, 1, 1, 3, 32, 32), w,
                 "data_layout", tn_any_cstr("NHWC"), "kernel_layout",
                 tn_any_cstr("HWIO")),
        "TypeError", "nn.conv2d: argument 0 (data)",
        "expected 4 dimensions (NHWC)");
  FAILS(TRY_CALL("nn.conv2d", 2, d, tv("w2", "float32", 2, 16, 27)),
        "TypeError", "nn.conv2d: argument 1 (weight) has type Tensor[(16, "
        "27), float32]: expected 4 dimensions (OIHW)");
  FAILS(TRY_CALL("nn.conv2d", 2, d, tv("w4", "float32", 4, 16, 4, 3, 3)),
        "TypeError", "nn.conv2d: argument 1 (weight) has type Tensor[(16, 4, "
        "3, 3), float32]: expected 3 input channels per group to match data "
        "of 3 channels in 1 groups");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "groups", tn_any_int(0)), "TypeError",
        w_is, "groups = 0 does not divide 3 input and 16 output channels");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "groups", tn_any_int(2)), "TypeError",
        w_is, "groups = 2 does not divide 3 input and 16 output channels");
  FAILS(TRY_CALL("nn.conv2d", 2, tv("g", "float32", 4, 1, 8, 10, 10),
                 tv("gw", "float32", 4, 6, 2, 3, 3), "groups", tn_any_int(4)),
        "TypeError", "nn.conv2d: argument 1 (weight) has type Tensor[(6, 2, "
        "3, 3), float32]: groups = 4 does not divide 8 input and 6 output "
        "channels");
  /* Depthwise with a full-channel kernel. */
  FAILS(TRY_CALL("nn.conv2d", 2, tv("g8", "float32", 4, 1, 8, 10, 10),
                 tv("g8w", "float32", 4, 8, 8, 3, 3), "groups", tn_any_int(8)),
        "TypeError", "nn.conv2d: argument 1 (weight)",
        "expected 1 input channels per group to match data of 8 channels in "
        "8 groups");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "channels", tn_any_int(8)),
        "TypeError", w_is, "channels = 8 but the weight has 16");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_size", ints(2, 5, 5)),
        "TypeError", w_is, "kernel_size is (5, 5)");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_size", ints(2, 3, 1)),
        "TypeError", w_is, "kernel_size is (3, 1)");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_size", ints(3, 3, 3, 3)),
        "TypeError", "nn.conv2d: attribute 'kernel_size' must be a list of "
        "at most 2 integers");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "strides", ints(2, 0, 1)),
        "TypeError", "nn.conv2d: strides must be positive");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "strides", tn_any_int(-1)),
        "TypeError", "nn.conv2d: strides must be positive");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "strides", ints(3, 1, 1, 1)),
        "TypeError", "nn.conv2d: attribute 'strides' must be a list of at "
        "most 2 integers");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "strides", tn_any_cstr("2")),
        "TypeError", "nn.conv2d: attribute 'strides' must be a list");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "dilation", ints(2, 1, 0)),
        "TypeError", "nn.conv2d: dilation must be positive");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "padding", ints(3, 1, 1, 1)),
        "TypeError", "nn.conv2d: padding has 3 values; give 1, 2 or 4");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "padding", ints(5, 1, 1, 1, 1, 1)),
        "TypeError", "nn.conv2d: attribute 'padding' must be a list of at "
        "most 4 integers");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "padding", ints(2, 1, -1)),
        "TypeError", "nn.conv2d: padding is negative");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "padding", ints(4, 0, 0, 0, -2)),
        "TypeError", "nn.conv2d: padding is negative");
  /* The kernel must fit the padded input. */
  TnObject *small = tv("s", "float32", 4, 1, 3, 2, 2);
  FAILS(TRY_CALL("nn.conv2d", 2, small, w), "TypeError", w_is,
        "the kernel does not fit the padded 2x2 input");
  ck_assert_type(CALL("nn.conv2d", 2, small, w, "padding", ints(1, 1)),
                 "Tensor[(1, 16, 2, 2), float32]");
  FAILS(TRY_CALL("nn.conv2d", 2, tv("s5", "float32", 4, 1, 3, 4, 4), w,
                 "dilation", tn_any_int(2)),
        "TypeError", w_is, "the kernel does not fit the padded 4x4 input");
  /* dtypes and non-tensors */
  FAILS(TRY_CALL("nn.conv2d", 2, d, tv("wi", "int8", 4, 16, 3, 3, 3)),
        "TypeError", "nn.conv2d: argument 1 has type Tensor[(16, 3, 3, 3), "
        "int8], expected Tensor[(1, 3, 32, 32), float32]");
  FAILS(TRY_CALL("nn.conv2d", 2, tup(1, d), w), "TypeError",
        "nn.conv2d: argument 0 (data)", "expected a tensor");
  FAILS(TRY_CALL("nn.conv2d", 2, d, tup(1, w)), "TypeError",
        "nn.conv2d: argument 1 (weight)", "expected a tensor");
}
END_TEST

/* ---- pooling ------------------------------------------------------------- */

START_TEST(test_pool2d) {
  static const char *const ops[] = {"nn.max_pool2d", "nn.avg_pool2d"};
  TnObject *d = tv("d", "float32", 4, 1, 16, 32, 32);
  TnObject *six = tv("six", "float32", 4, 1, 4, 6, 6);
  for (size_t k = 0; k < G_N_ELEMENTS(ops); k++) {
    const char *op = ops[k];
    ck_assert_type(CALL(op, 1, d, "pool_size", ints(2, 2, 2), "strides",
                        ints(2, 2, 2)),
                   "Tensor[(1, 16, 16, 16), float32]");
    ck_assert_type(CALL(op, 1, d, "pool_size", tn_any_int(3)),
                   "Tensor[(1, 16, 30, 30), float32]");
    ck_assert_type(CALL(op, 1, d, "pool_size", ints(1, 3), "strides",
                        tn_any_int(2), "padding", tn_any_int(1)),
                   "Tensor[(1, 16, 16, 16), float32]");
    ck_assert_type(CALL(op, 1, d, "pool_size", ints(2, 2, 3), "padding",
                        ints(4, 1, 0, 0, 0)),
                   "Tensor[(1, 16, 32, 30), float32]");
    ck_assert_type(CALL(op, 1, six, "pool_size", ints(2, 3, 3), "strides",
                        ints(2, 2, 2)),
                   "Tensor[(1, 4, 2, 2), float32]");
    ck_assert_type(CALL(op, 1, six, "pool_size", ints(2, 3, 3), "strides",
                        ints(2, 2, 2), "ceil_mode", tn_any_bool(1)),
                   "Tensor[(1, 4, 3, 3), float32]");
    ck_assert_type(CALL(op, 1, six, "pool_size", ints(2, 2, 2), "strides",
                        ints(2, 2, 2), "ceil_mode", tn_any_bool(1)),
                   "Tensor[(1, 4, 3, 3), float32]");
    ck_assert_type(CALL(op, 1, tv("h", "float32", 4, 1, 32, 32, 16),
                        "pool_size", ints(2, 2, 2), "strides", ints(2, 2, 2),
                        "layout", tn_any_cstr("NHWC")),
                   "Tensor[(1, 16, 16, 16), float32]");
    ck_assert_type(CALL(op, 1, tv("i8", "int8", 4, 1, 2, 4, 4), "pool_size",
                        ints(2, 2, 2), "count_include_pad", tn_any_bool(1)),
                   "Tensor[(1, 2, 3, 3), int8]");
    ck_assert_type(CALL(op, 1, tv("t", "float32", 4, 2, 3, 2, 2),
                        "pool_size", ints(2, 2, 2)),
                   "Tensor[(2, 3, 1, 1), float32]");
    FAILS(TRY_CALL(op, 1, tv("s", "float32", 4, 1, 16, 2, 2), "pool_size",
                   ints(2, 3, 3)),
          "TypeError", who(op), "argument 0 (data) has type Tensor[(1, 16, "
          "2, 2), float32]: a 3x3 window does not fit");
    ck_assert_type(CALL(op, 1, tv("s", "float32", 4, 1, 16, 2, 2),
                        "pool_size", ints(2, 3, 3), "padding", tn_any_int(1)),
                   "Tensor[(1, 16, 2, 2), float32]");
    FAILS(TRY_CALL(op, 1, d, "pool_size", ints(2, 0, 2)), "TypeError",
          who(op), "a 0x2 window does not fit");
    FAILS(TRY_CALL(op, 1, d, "pool_size", ints(0)), "TypeError", who(op),
          "pool_size must be (kh, kw)");
    FAILS(TRY_CALL(op, 1, d, "pool_size", ints(3, 2, 2, 2)), "TypeError",
          who(op), "attribute 'pool_size' must be a list of at most 2 "
          "integers");
    FAILS(call_attrs(op, NULL, 1, d), "TypeError", who(op),
          "pool_size must be (kh, kw)");
    FAILS(TRY_CALL(op, 1, d, "pool_size", tn_any_int(2), "strides",
                   ints(2, 1, 0)),
          "TypeError", who(op), "strides must be positive");
    FAILS(TRY_CALL(op, 1, d, "pool_size", tn_any_int(2), "padding",
                   ints(3, 1, 1, 1)),
          "TypeError", who(op), "padding has 3 values");
    FAILS(TRY_CALL(op, 1, d, "pool_size", tn_any_int(2), "padding",
                   tn_any_int(-1)),
          "TypeError", who(op), "padding is negative");
    FAILS(TRY_CALL(op, 1, d, "pool_size", tn_any_int(2), "layout",
                   tn_any_cstr("NCDHW")),
          "TypeError", who(op), "layout 'NCDHW' is not NCHW or NHWC");
    FAILS(TRY_CALL(op, 1, tv("d3", "float32", 3, 16, 32, 32), "pool_size",
                   tn_any_int(2)),
          "TypeError", who(op), "argument 0 (data) has type Tensor[(16, 32, "
          "32), float32]: expected 4 dimensions (NCHW)");
    FAILS(TRY_CALL(op, 1, tup(1, d), "pool_size", tn_any_int(2)),
          "TypeError", who(op), "argument 0 (data)", "expected a tensor");
  }
}
END_TEST

START_TEST(test_global_avg_pool2d) {
  const char *op = "nn.global_avg_pool2d";
  ck_assert_type(CALL(op, 1, tv("d", "float32", 4, 1, 16, 7, 7)),
                 "Tensor[(1, 16, 1, 1), float32]");
  ck_assert_type(CALL(op, 1, tv("d", "float32", 4, 2, 16, 7, 5), "layout",
                      tn_any_cstr("NCHW")),
                 "Tensor[(2, 16, 1, 1), float32]");
  ck_assert_type(CALL(op, 1, tv("h", "float32", 4, 1, 7, 7, 16), "layout",
                      tn_any_cstr("NHWC")),
                 "Tensor[(1, 1, 1, 16), float32]");
  ck_assert_type(CALL(op, 1, tv("i", "int8", 4, 1, 8, 1, 1)),
                 "Tensor[(1, 8, 1, 1), int8]");
  FAILS(TRY_CALL(op, 1, tv("d", "float32", 4, 1, 16, 7, 7), "layout",
                 tn_any_cstr("HWCN")),
        "TypeError", "nn.global_avg_pool2d: layout 'HWCN' is not NCHW or "
        "NHWC");
  FAILS(TRY_CALL(op, 1, tv("m", "float32", 2, 16, 49)), "TypeError",
        "nn.global_avg_pool2d: argument 0 (data) has type Tensor[(16, 49), "
        "float32]: expected 4 dimensions (NCHW)");
  FAILS(TRY_CALL(op, 1, tup(1, f32s(1))), "TypeError",
        "nn.global_avg_pool2d: argument 0 (data)", "expected a tensor");
}
END_TEST

/* ---- softmax, bias_add, pad ---------------------------------------------- */

START_TEST(test_softmax) {
  TnObject *x = tv("x", "float32", 2, 1, 10);
  ck_assert_type(CALL("nn.softmax", 1, x), "Tensor[(1, 10), float32]");
  ck_assert_type(CALL("nn.softmax", 1, x, "axis", tn_any_int(0)),
                 "Tensor[(1, 10), float32]");
  ck_assert_type(CALL("nn.softmax", 1, x, "axis", tn_any_int(-2)),
                 "Tensor[(1, 10), float32]");
  ck_assert_type(CALL("nn.softmax", 1, tv("h", "float16", 3, 2, 3, 4)),
                 "Tensor[(2, 3, 4), float16]");
  FAILS(TRY_CALL("nn.softmax", 1, tv("i", "int32", 2, 1, 10)), "TypeError",
        "nn.softmax: argument 0 (data) has type Tensor[(1, 10), int32]: "
        "expected a floating-point tensor");
  FAILS(TRY_CALL("nn.softmax", 1, x, "axis", tn_any_int(2)), "TypeError",
        "nn.softmax: argument 0 (data) has type Tensor[(1, 10), float32]: "
        "axis 2 is out of range");
  FAILS(TRY_CALL("nn.softmax", 1, x, "axis", tn_any_int(-3)), "TypeError",
        "nn.softmax: ", "axis -3 is out of range");
  FAILS(TRY_CALL("nn.softmax", 1, f32s(1)), "TypeError",
        "nn.softmax: argument 0 (data) has type Tensor[(), float32]: axis -1 "
        "is out of range");
  FAILS(TRY_CALL("nn.softmax", 1, tup(1, x)), "TypeError",
        "nn.softmax: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_bias_add) {
  TnObject *d = tv("d", "float32", 4, 1, 16, 8, 8);
  TnObject *b = tv("b", "float32", 1, 16);
  TnObject *h = tv("h", "float32", 4, 1, 8, 8, 16);
  ck_assert_type(CALL("nn.bias_add", 2, d, b),
                 "Tensor[(1, 16, 8, 8), float32]");
  ck_assert_type(CALL("nn.bias_add", 2, h, b, "axis", tn_any_int(3)),
                 "Tensor[(1, 8, 8, 16), float32]");
  ck_assert_type(CALL("nn.bias_add", 2, h, b, "axis", tn_any_int(-1)),
                 "Tensor[(1, 8, 8, 16), float32]");
  ck_assert_type(CALL("nn.bias_add", 2, tv("x", "float32", 2, 1, 16), b),
                 "Tensor[(1, 16), float32]");
  ck_assert_type(CALL("nn.bias_add", 2, tv("i", "int32", 2, 3, 4),
                      tv("ib", "int32", 1, 3), "axis", tn_any_int(0)),
                 "Tensor[(3, 4), int32]");
  FAILS(TRY_CALL("nn.bias_add", 2, d, tv("b8", "float32", 1, 8)),
        "TypeError", "nn.bias_add: argument 1 (bias) has type Tensor[(8,), "
        "float32]: expected one dimension of 16 (the data's axis 1)");
  FAILS(TRY_CALL("nn.bias_add", 2, h, b), "TypeError",
        "nn.bias_add: argument 1 (bias) has type Tensor[(16,), float32]: "
        "expected one dimension of 8 (the data's axis 1)");
  FAILS(TRY_CALL("nn.bias_add", 2, d, tv("b2", "float32", 2, 16, 1)),
        "TypeError", "nn.bias_add: argument 1 (bias) has type Tensor[(16, "
        "1), float32]: expected one dimension of 16");
  FAILS(TRY_CALL("nn.bias_add", 2, d, f32s(1)), "TypeError",
        "nn.bias_add: argument 1 (bias) has type Tensor[(), float32]");
  FAILS(TRY_CALL("nn.bias_add", 2, d, tv("bi", "int32", 1, 16)), "TypeError",
        "nn.bias_add: argument 1 has type Tensor[(16,), int32], expected "
        "Tensor[(1, 16, 8, 8), float32]");
  FAILS(TRY_CALL("nn.bias_add", 2, d, b, "axis", tn_any_int(4)), "TypeError",
        "nn.bias_add: argument 0 (data) has type Tensor[(1, 16, 8, 8), "
        "float32]: axis 4 is out of range");
  FAILS(TRY_CALL("nn.bias_add", 2, d, b, "axis", tn_any_int(-5)),
        "TypeError", "nn.bias_add: argument 0 (data)",
        "axis -5 is out of range");
  FAILS(TRY_CALL("nn.bias_add", 2, tup(1, d), b), "TypeError",
        "nn.bias_add: argument 0 (data)", "expected a tensor");
  FAILS(TRY_CALL("nn.bias_add", 2, d, tup(1, b)), "TypeError",
        "nn.bias_add: argument 1 (bias)", "expected a tensor");
}
END_TEST

START_TEST(test_pad) {
  TnObject *d = tv("d", "float32", 4, 1, 3, 32, 32);
  TnAny p00 = ints(2, 0, 0), p11 = ints(2, 1, 1), p22 = ints(2, 2, 2);
  ck_assert_type(CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p11, p22)),
                 "Tensor[(1, 3, 34, 36), float32]");
  ck_assert_type(CALL("nn.pad", 1, d, "pad_width",
                      ints(8, 0, 0, 0, 1, 1, 1, 0, 3)),
                 "Tensor[(1, 4, 34, 35), float32]");
  ck_assert_type(CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p00, p00),
                      "pad_value", tn_any_float(-1.5)),
                 "Tensor[(1, 3, 32, 32), float32]");
  ck_assert_type(CALL("nn.pad", 1, tv("v", "int8", 1, 5), "pad_width",
                      arr(1, ints(2, 2, 0)), "pad_value", tn_any_int(7)),
                 "Tensor[(7,), int8]");
  ck_assert_type(CALL("nn.pad", 1, f32s(1), "pad_width", arr(0)),
                 "Tensor[(), float32]");
  const char *bad = "nn.pad: pad_width must give (before, after) >= 0 for "
                    "each of the 4 dimensions";
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", arr(3, p00, p11, p22)),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p11,
                                                  ints(2, 1, -1))),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p11,
                                                  ints(3, 1, 1, 1))),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", ints(7, 0, 0, 0, 0, 1, 1, 1)),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", ints(8, 0, 0, 0, 0, 1, 1, -1,
                                                   1)),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", tn_any_int(1)), "TypeError",
        bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width",
                 arr(4, p00, p00, p11, arr(2, tn_any_int(1),
                                           tn_any_cstr("x")))),
        "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p11,
                                                  tn_any_cstr("x"))),
        "TypeError", bad);
  FAILS(call_attrs("nn.pad", NULL, 1, d), "TypeError", bad);
  FAILS(TRY_CALL("nn.pad", 1, d, "pad_width", arr(4, p00, p00, p00, p00),
                 "pad_value", tn_any_cstr("zero")),
        "TypeError", "nn.pad: ", "field 'pad_value'", "expects float");
  FAILS(TRY_CALL("nn.pad", 1, tup(1, d), "pad_width", arr(0)), "TypeError",
        "nn.pad: argument 0 (data)", "expected a tensor");
}
END_TEST

/* ---- quantized ----------------------------------------------------------- */

START_TEST(test_qnn_quantize) {
  const char *op = "qnn.quantize";
  TnObject *d = tv("d", "float32", 4, 1, 16, 8, 8);
  TnObject *s = f32s(0.5), *z = i32s(0);
  TnObject *s16 = tv("s16", "float32", 1, 16), *z16 = tv("z16", "int32", 1, 16);
  TnObject *s8 = tv("s8", "float32", 1, 8), *z8 = tv("z8", "int32", 1, 8);
  ck_assert_type(CALL(op, 3, d, s, z), "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 3, d, s, z, "out_dtype", tn_any_cstr("uint8")),
                 "Tensor[(1, 16, 8, 8), uint8]");
  ck_assert_type(CALL(op, 3, d, s, z, "out_dtype", tn_any_cstr("int32")),
                 "Tensor[(1, 16, 8, 8), int32]");
  /* Per channel along axis 1, and along the default last axis. */
  ck_assert_type(CALL(op, 3, d, s16, z16, "axis", tn_any_int(1)),
                 "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 3, d, s16, z, "axis", tn_any_int(-3)),
                 "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 3, d, s8, z8), "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 3, f32s(1), s, z), "Tensor[(), int8]");
  FAILS(TRY_CALL(op, 3, tv("i", "int8", 2, 1, 16), s, z), "TypeError",
        "qnn.quantize: argument 0 (data) has type Tensor[(1, 16), int8]: "
        "expected float32");
  FAILS(TRY_CALL(op, 3, tv("h", "float16", 2, 1, 16), s, z), "TypeError",
        "qnn.quantize: argument 0 (data) has type Tensor[(1, 16), float16]: "
        "expected float32");
  FAILS(TRY_CALL(op, 3, d, s, z, "out_dtype", tn_any_cstr("float32")),
        "TypeError", "qnn.quantize: out_dtype must be an 8, 16 or 32-bit "
        "integer type");
  FAILS(TRY_CALL(op, 3, d, s, z, "out_dtype", tn_any_cstr("int64")),
        "TypeError", "qnn.quantize: out_dtype must be");
  FAILS(TRY_CALL(op, 3, d, scalar(0.5, "float64"), z), "TypeError",
        "qnn.quantize: argument 1 (output_scale) has type Tensor[(), "
        "float64]: expected float32");
  FAILS(TRY_CALL(op, 3, d, s, scalar(0, "int8")), "TypeError",
        "qnn.quantize: argument 2 (output_zero_point) has type Tensor[(), "
        "int8]: expected int32");
  FAILS(TRY_CALL(op, 3, d, s, f32s(0)), "TypeError",
        "qnn.quantize: argument 2 (output_zero_point) has type Tensor[(), "
        "float32]: expected int32");
  FAILS(TRY_CALL(op, 3, d, s8, z, "axis", tn_any_int(1)), "TypeError",
        "qnn.quantize: argument 1 (output_scale) has type Tensor[(8,), "
        "float32]: a per-channel output_scale needs 16 values (axis 1 of "
        "the data)");
  FAILS(TRY_CALL(op, 3, d, s16, z8, "axis", tn_any_int(1)), "TypeError",
        "qnn.quantize: argument 2 (output_zero_point) has type Tensor[(8,), "
        "int32]: a per-channel output_zero_point needs 16 values (axis 1 of "
        "the data)");
  FAILS(TRY_CALL(op, 3, d, tv("s2", "float32", 2, 1, 16), z, "axis",
                 tn_any_int(1)),
        "TypeError", "qnn.quantize: argument 1 (output_scale) has type "
        "Tensor[(1, 16), float32]: expected a scalar float32 or one per "
        "channel");
  FAILS(TRY_CALL(op, 3, d, s, z, "axis", tn_any_int(4)), "TypeError",
        "qnn.quantize: argument 0 (data) has type Tensor[(1, 16, 8, 8), "
        "float32]: axis 4 is out of range");
  FAILS(TRY_CALL(op, 3, d, s, z, "axis", tn_any_int(-5)), "TypeError",
        "qnn.quantize: argument 0 (data)", "axis -5 is out of range");
  /* A 0-d input takes per-tensor parameters only. */
  ck_assert_ptr_null(TRY_CALL(op, 3, f32s(1), tv("s1", "float32", 1, 1), z));
  expect_error_without("qnn.quantize: argument 1 (output_scale) has type "
                       "Tensor[(1,), float32]: expected a scalar float32",
                       "per channel");
  FAILS(TRY_CALL(op, 3, d, tup(1, s), z), "TypeError",
        "qnn.quantize: argument 1 (output_scale)", "expected a tensor");
}
END_TEST

START_TEST(test_qnn_dequantize) {
  const char *op = "qnn.dequantize";
  TnObject *s = f32s(0.5), *z = i32s(-3);
  TnObject *d = tv("d", "int8", 2, 1, 16);
  ck_assert_type(CALL(op, 3, d, s, z), "Tensor[(1, 16), float32]");
  ck_assert_type(CALL(op, 3, tv("u", "uint8", 1, 4), s, z),
                 "Tensor[(4,), float32]");
  ck_assert_type(CALL(op, 3, tv("a", "int32", 3, 2, 3, 4), s, z),
                 "Tensor[(2, 3, 4), float32]");
  ck_assert_type(CALL(op, 3, tv("h", "int16", 1, 4), s, z),
                 "Tensor[(4,), float32]");
  ck_assert_type(CALL(op, 3, d, tv("s16", "float32", 1, 16),
                      tv("z16", "int32", 1, 16)),
                 "Tensor[(1, 16), float32]");
  ck_assert_type(CALL(op, 3, d, tv("s1", "float32", 1, 1), z, "axis",
                      tn_any_int(0)),
                 "Tensor[(1, 16), float32]");
  FAILS(TRY_CALL(op, 3, tv("f", "float32", 2, 1, 16), s, z), "TypeError",
        "qnn.dequantize: argument 0 (data) has type Tensor[(1, 16), "
        "float32]: expected int8, uint8, int16 or int32");
  FAILS(TRY_CALL(op, 3, tv("l", "int64", 2, 1, 16), s, z), "TypeError",
        "qnn.dequantize: argument 0 (data) has type Tensor[(1, 16), int64]");
  FAILS(TRY_CALL(op, 3, d, i32s(1), z), "TypeError",
        "qnn.dequantize: argument 1 (input_scale) has type Tensor[(), "
        "int32]: expected float32");
  FAILS(TRY_CALL(op, 3, d, s, scalar(0, "uint8")), "TypeError",
        "qnn.dequantize: argument 2 (input_zero_point) has type Tensor[(), "
        "uint8]: expected int32");
  FAILS(TRY_CALL(op, 3, d, s, tv("z4", "int32", 1, 4)), "TypeError",
        "qnn.dequantize: argument 2 (input_zero_point) has type Tensor[(4,), "
        "int32]: a per-channel input_zero_point needs 16 values (axis 1 of "
        "the data)");
  FAILS(TRY_CALL(op, 3, d, tv("s16", "float32", 1, 16), z, "axis",
                 tn_any_int(0)),
        "TypeError", "qnn.dequantize: argument 1 (input_scale)",
        "a per-channel input_scale needs 1 values (axis 0 of the data)");
  FAILS(TRY_CALL(op, 3, d, s, z, "axis", tn_any_int(2)), "TypeError",
        "qnn.dequantize: argument 0 (data) has type Tensor[(1, 16), int8]: "
        "axis 2 is out of range");
  FAILS(TRY_CALL(op, 3, tup(1, d), s, z), "TypeError",
        "qnn.dequantize: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_qnn_requantize) {
  const char *op = "qnn.requantize";
  TnObject *acc = tv("acc", "int32", 4, 1, 16, 8, 8);
  TnObject *s = f32s(0.25), *z = i32s(0), *os = f32s(0.5), *oz = i32s(-128);
  TnObject *s16 = tv("s16", "float32", 1, 16), *z16 = tv("z16", "int32", 1, 16);
  ck_assert_type(CALL(op, 5, acc, s, z, os, oz), "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 5, acc, s16, z16, os, oz, "axis", tn_any_int(1)),
                 "Tensor[(1, 16, 8, 8), int8]");
  ck_assert_type(CALL(op, 5, acc, s16, z, os, oz, "axis", tn_any_int(1),
                      "out_dtype", tn_any_cstr("uint8"), "rounding",
                      tn_any_cstr("TONEAREST")),
                 "Tensor[(1, 16, 8, 8), uint8]");
  ck_assert_type(CALL(op, 5, tv("q", "int8", 2, 2, 3), s, z, os, oz,
                      "out_dtype", tn_any_cstr("int16"), "rounding",
                      tn_any_cstr("UPWARD")),
                 "Tensor[(2, 3), int16]");
  FAILS(TRY_CALL(op, 5, tv("f", "float32", 2, 2, 3), s, z, os, oz),
        "TypeError", "qnn.requantize: argument 0 (data) has type Tensor[(2, "
        "3), float32]: expected a quantized integer tensor");
  FAILS(TRY_CALL(op, 5, acc, s, z, os, oz, "rounding", tn_any_cstr("DOWN")),
        "TypeError", "qnn.requantize: rounding 'DOWN' is not UPWARD, TONEAREST "
        "or ONNX");
  FAILS(TRY_CALL(op, 5, acc, s, z, os, oz, "out_dtype",
                 tn_any_cstr("float32")),
        "TypeError", "qnn.requantize: out_dtype must be a quantized integer "
        "type");
  FAILS(TRY_CALL(op, 5, acc, s, z, os, oz, "out_dtype", tn_any_cstr("int4")),
        "TypeError", "qnn.requantize: out_dtype must be");
  FAILS(TRY_CALL(op, 5, acc, tv("s8", "float32", 1, 8), z, os, oz, "axis",
                 tn_any_int(1)),
        "TypeError", "qnn.requantize: argument 1 (input_scale) has type "
        "Tensor[(8,), float32]: a per-channel input_scale needs 16 values "
        "(axis 1 of the data)");
  FAILS(TRY_CALL(op, 5, acc, s, scalar(0, "int8"), os, oz), "TypeError",
        "qnn.requantize: argument 2 (input_zero_point) has type Tensor[(), "
        "int8]: expected int32");
  /* The output parameters are per tensor only. */
  ck_assert_ptr_null(TRY_CALL(op, 5, acc, s16, z16, s16, oz, "axis",
                              tn_any_int(1)));
  expect_error_without("qnn.requantize: argument 3 (output_scale) has type "
                       "Tensor[(16,), float32]: expected a scalar float32",
                       "per channel");
  ck_assert_ptr_null(TRY_CALL(op, 5, acc, s, z, os, z16));
  expect_error_without("qnn.requantize: argument 4 (output_zero_point) has "
                       "type Tensor[(16,), int32]: expected a scalar int32",
                       "per channel");
  FAILS(TRY_CALL(op, 5, acc, s, z, i32s(1), oz), "TypeError",
        "qnn.requantize: argument 3 (output_scale) has type Tensor[(), "
        "int32]: expected float32");
  FAILS(TRY_CALL(op, 5, acc, s, z, os, oz, "axis", tn_any_int(4)),
        "TypeError", "qnn.requantize: argument 0 (data)",
        "axis 4 is out of range");
}
END_TEST

START_TEST(test_qnn_conv2d) {
  const char *op = "qnn.conv2d";
  TnObject *d = tv("d", "int8", 4, 1, 3, 32, 32);
  TnObject *w = tv("w", "int8", 4, 16, 3, 3, 3);
  TnObject *iz = i32s(-1), *kz = i32s(0), *is = f32s(0.1), *ks = f32s(0.02);
  TnObject *ks16 = tv("ks16", "float32", 1, 16);
  TnObject *kz16 = tv("kz16", "int32", 1, 16);
  /* int8 x int8 accumulates in int32 */
  ck_assert_type(CALL(op, 6, d, w, iz, kz, is, ks),
                 "Tensor[(1, 16, 30, 30), int32]");
  ck_assert_type(CALL(op, 6, d, w, iz, kz16, is, ks16, "padding",
                      ints(1, 1), "strides", ints(2, 2, 2)),
                 "Tensor[(1, 16, 16, 16), int32]");
  ck_assert_type(CALL(op, 6, tv("u", "uint8", 4, 1, 3, 8, 8), w, iz, kz, is,
                      ks, "out_dtype", tn_any_cstr("int16")),
                 "Tensor[(1, 16, 6, 6), int16]");
  /* NHWC/HWIO: output channels are the weight's last axis. */
  TnObject *hd = tv("hd", "int8", 4, 1, 32, 32, 3);
  TnObject *hw = tv("hw", "int8", 4, 3, 3, 3, 16);
  ck_assert_type(CALL(op, 6, hd, hw, iz, kz16, is, ks16, "data_layout",
                      tn_any_cstr("NHWC"), "kernel_layout",
                      tn_any_cstr("HWIO")),
                 "Tensor[(1, 30, 30, 16), int32]");
  /* NHWC/OHWI: output channels are the weight's first axis. */
  ck_assert_type(CALL(op, 6, hd, tv("oh", "int8", 4, 16, 3, 3, 3), iz,
                      tv("z16o", "int32", 1, 16), is,
                      tv("s16o", "float32", 1, 16), "data_layout",
                      tn_any_cstr("NHWC"), "kernel_layout",
                      tn_any_cstr("OHWI")),
                 "Tensor[(1, 30, 30, 16), int32]");
  /* Depthwise NHWC, per channel. */
  ck_assert_type(CALL(op, 6, tv("dd", "int8", 4, 1, 10, 10, 8),
                      tv("dw", "int8", 4, 3, 3, 1, 8), iz,
                      tv("z8", "int32", 1, 8), is, tv("s8", "float32", 1, 8),
                      "groups", tn_any_int(8), "padding", ints(1, 1),
                      "data_layout", tn_any_cstr("NHWC"), "kernel_layout",
                      tn_any_cstr("HWIO")),
                 "Tensor[(1, 10, 10, 8), int32]");
  FAILS(TRY_CALL(op, 6, hd, hw, iz, kz, is, tv("s3", "float32", 1, 3),
                 "data_layout", tn_any_cstr("NHWC"), "kernel_layout",
                 tn_any_cstr("HWIO")),
        "TypeError", "qnn.conv2d: argument 5 (kernel_scale) has type "
        "Tensor[(3,), float32]: a per-channel kernel_scale needs 16 values",
        "axis 3");
  FAILS(TRY_CALL(op, 6, tv("f", "float32", 4, 1, 3, 32, 32), w, iz, kz, is,
                 ks),
        "TypeError", "qnn.conv2d: argument 0 (data) has type Tensor[(1, 3, "
        "32, 32), float32]: expected int8, uint8 or int16");
  FAILS(TRY_CALL(op, 6, tv("h", "int16", 4, 1, 3, 32, 32),
                 tv("wu", "uint8", 4, 16, 3, 3, 3), iz, kz, is, ks),
        "TypeError", "qnn.conv2d: argument 1 (weight)", "uint8",
        "expected int8 with int16 data (16x8)");
  FAILS(TRY_CALL(op, 6, d, tv("w32", "int32", 4, 16, 3, 3, 3), iz, kz, is,
                 ks),
        "TypeError", "qnn.conv2d: argument 1 (weight) has type Tensor[(16, "
        "3, 3, 3), int32]: expected int8 or uint8");
  ck_assert_ptr_null(TRY_CALL(op, 6, d, w, tv("iz3", "int32", 1, 3), kz, is,
                              ks));
  expect_error_without("qnn.conv2d: argument 2 (input_zero_point) has type "
                       "Tensor[(3,), int32]: expected a scalar int32",
                       "per channel");
  FAILS(TRY_CALL(op, 6, d, w, iz, tv("kz8", "int32", 1, 8), is, ks),
        "TypeError", "qnn.conv2d: argument 3 (kernel_zero_point) has type "
        "Tensor[(8,), int32]: a per-channel kernel_zero_point needs 16 "
        "values", "axis 0");
  FAILS(TRY_CALL(op, 6, d, w, f32s(0), kz, is, ks), "TypeError",
        "qnn.conv2d: argument 2 (input_zero_point) has type Tensor[(), "
        "float32]: expected int32");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, i32s(1), ks), "TypeError",
        "qnn.conv2d: argument 4 (input_scale) has type Tensor[(), int32]: "
        "expected float32");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, tv("k64", "float64", 1, 16)),
        "TypeError", "qnn.conv2d: argument 5 (kernel_scale) has type "
        "Tensor[(16,), float64]: expected float32");
  /* Read as HWIO, the OIHW weight has 3 output channels (its axis 3). */
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, ks16, "kernel_layout",
                 tn_any_cstr("HWIO")),
        "TypeError", "qnn.conv2d: argument 5 (kernel_scale) has type "
        "Tensor[(16,), float32]: a per-channel kernel_scale needs 3 values",
        "axis 3");
  /* The shape checks of nn.conv2d, under this operator's name. */
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, ks, "channels", tn_any_int(8)),
        "TypeError", "qnn.conv2d: argument 1 (weight) has type Tensor[(16, "
        "3, 3, 3), int8]: channels = 8 but the weight has 16");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, ks, "data_layout",
                 tn_any_cstr("CHWN")),
        "TypeError", "qnn.conv2d: data_layout 'CHWN' is not NCHW or NHWC");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, ks, "padding", ints(3, 1, 1, 1)),
        "TypeError", "qnn.conv2d: padding has 3 values");
  FAILS(TRY_CALL(op, 6, tv("s", "int8", 4, 1, 3, 2, 2), w, iz, kz, is, ks),
        "TypeError", "qnn.conv2d: argument 1 (weight)",
        "the kernel does not fit the padded 2x2 input");
}
END_TEST

START_TEST(test_qnn_dense) {
  const char *op = "qnn.dense";
  TnObject *d = tv("d", "int8", 2, 1, 10), *w = tv("w", "int8", 2, 4, 10);
  TnObject *iz = i32s(3), *kz = i32s(0), *is = f32s(0.1), *ks = f32s(0.02);
  ck_assert_type(CALL(op, 6, d, w, iz, kz, is, ks), "Tensor[(1, 4), int32]");
  ck_assert_type(CALL(op, 6, d, w, iz, tv("kz4", "int32", 1, 4), is,
                      tv("ks4", "float32", 1, 4), "units", tn_any_int(4)),
                 "Tensor[(1, 4), int32]");
  ck_assert_type(CALL(op, 6, tv("u", "uint8", 3, 2, 5, 10),
                      tv("uw", "uint8", 2, 4, 10), iz, kz, is, ks),
                 "Tensor[(2, 5, 4), int32]");
  ck_assert_type(CALL(op, 6, d, w, iz, kz, is, ks, "out_dtype",
                      tn_any_cstr("int64")),
                 "Tensor[(1, 4), int64]");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, tv("ks10", "float32", 1, 10)),
        "TypeError", "qnn.dense: argument 5 (kernel_scale) has type "
        "Tensor[(10,), float32]: a per-channel kernel_scale needs 4 values",
        "axis 0");
  FAILS(TRY_CALL(op, 6, d, w, iz, tv("kz2", "int32", 2, 1, 4), is, ks),
        "TypeError", "qnn.dense: argument 3 (kernel_zero_point) has type "
        "Tensor[(1, 4), int32]: expected a scalar int32 or one per channel");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, is, ks, "units", tn_any_int(8)),
        "TypeError", "qnn.dense: argument 1 (weight) has type Tensor[(4, "
        "10), int8]: units = 8 but the weight has 4");
  FAILS(TRY_CALL(op, 6, d, tv("w9", "int8", 2, 4, 9), iz, kz, is, ks),
        "TypeError", "qnn.dense: argument 1 (weight)",
        "expected inner dimension 10 to match data of type Tensor[(1, 10), "
        "int8]");
  FAILS(TRY_CALL(op, 6, tv("f", "float32", 2, 1, 10), w, iz, kz, is, ks),
        "TypeError", "qnn.dense: argument 0 (data) has type Tensor[(1, 10), "
        "float32]: expected int8, uint8 or int16");
  FAILS(TRY_CALL(op, 6, d, tv("wf", "float32", 2, 4, 10), iz, kz, is, ks),
        "TypeError", "qnn.dense: argument 1 (weight)",
        "expected int8 or uint8");
  FAILS(TRY_CALL(op, 6, d, w, iz, kz, tv("h", "float16", 0), ks),
        "TypeError", "qnn.dense: argument 4 (input_scale) has type "
        "Tensor[(), float16]: expected float32");
  ck_assert_ptr_null(TRY_CALL(op, 6, d, w, iz, kz, tv("is4", "float32", 1, 4),
                              ks));
  expect_error_without("qnn.dense: argument 4 (input_scale) has type "
                       "Tensor[(4,), float32]: expected a scalar float32",
                       "per channel");
}
END_TEST

START_TEST(test_qnn_add) {
  const char *op = "qnn.add";
  TnObject *a = tv("a", "int8", 2, 1, 16), *b = tv("b", "int8", 2, 1, 16);
  TnObject *s = f32s(0.5), *z = i32s(1);
  ck_assert_type(CALL(op, 8, a, b, s, z, s, z, s, z), "Tensor[(1, 16), int8]");
  ck_assert_type(CALL(op, 8, tv("c", "int8", 2, 4, 1),
                      tv("e", "int8", 2, 1, 5), s, z, s, z, s, z),
                 "Tensor[(4, 5), int8]");
  ck_assert_type(CALL(op, 8, tv("u", "uint8", 1, 3), tv("v", "uint8", 1, 3),
                      s, z, s, z, s, z),
                 "Tensor[(3,), uint8]");
  FAILS(TRY_CALL(op, 8, tv("i", "int32", 2, 1, 16), b, s, z, s, z, s, z),
        "TypeError", "qnn.add: argument 0 (lhs) has type Tensor[(1, 16), "
        "int32]: expected int8, uint8 or int16");
  FAILS(TRY_CALL(op, 8, a, tv("u", "uint8", 2, 1, 16), s, z, s, z, s, z),
        "TypeError", "qnn.add: argument 1 has type Tensor[(1, 16), uint8], "
        "expected Tensor[(1, 16), int8]");
  FAILS(TRY_CALL(op, 8, a, tv("c", "int8", 2, 1, 8), s, z, s, z, s, z),
        "TypeError", "qnn.add: argument 0 has type Tensor[(1, 16), int8] and "
        "argument 1 has type Tensor[(1, 8), int8]: shapes do not broadcast");
  FAILS(TRY_CALL(op, 8, a, b, i32s(1), z, s, z, s, z), "TypeError",
        "qnn.add: argument 2 (lhs_scale) has type Tensor[(), int32]: "
        "expected float32");
  FAILS(TRY_CALL(op, 8, a, b, s, s, s, z, s, z), "TypeError",
        "qnn.add: argument 3 (lhs_zero_point) has type Tensor[(), float32]: "
        "expected int32");
  FAILS(TRY_CALL(op, 8, a, b, s, z, scalar(1, "float64"), z, s, z),
        "TypeError", "qnn.add: argument 4 (rhs_scale)", "expected float32");
  FAILS(TRY_CALL(op, 8, a, b, s, z, s, scalar(1, "int8"), s, z),
        "TypeError", "qnn.add: argument 5 (rhs_zero_point)",
        "expected int32");
  ck_assert_ptr_null(TRY_CALL(op, 8, a, b, s, z, s, z,
                              tv("os", "float32", 1, 16), z));
  expect_error_without("qnn.add: argument 6 (output_scale) has type "
                       "Tensor[(16,), float32]: expected a scalar float32",
                       "per channel");
  FAILS(TRY_CALL(op, 8, a, b, s, z, s, z, s, tv("oz", "int32", 1, 16)),
        "TypeError", "qnn.add: argument 7 (output_zero_point) has type "
        "Tensor[(16,), int32]: expected a scalar int32");
  FAILS(TRY_CALL(op, 8, tup(1, a), b, s, z, s, z, s, z), "TypeError",
        "qnn.add: argument 0 (lhs)", "expected a tensor");
  FAILS(TRY_CALL(op, 8, a, tup(1, b), s, z, s, z, s, z), "TypeError",
        "qnn.add: argument 1 (rhs)", "expected a tensor");
}
END_TEST

START_TEST(test_strided_slice) {
  const char *op = "strided_slice";
  TnObject *x = tv("x", "float32", 3, 5, 6, 7);
  ck_assert_type(CALL(op, 1, x, "begin", ints(1, 1), "end", ints(1, 4)),
                 "Tensor[(3, 6, 7), float32]");
  /* numpy: x[1:4:2, -1:-5:-2, ::3] */
  ck_assert_type(CALL(op, 1, x, "begin", ints(3, 1, -1, 0), "end",
                      ints(3, 4, -5, 7), "strides", ints(3, 2, -2, 3)),
                 "Tensor[(2, 2, 3), float32]");
  /* axes pick the dims; out-of-range ends clamp; empty ranges are 0 */
  ck_assert_type(CALL(op, 1, x, "begin", ints(2, -100, 3), "end",
                      ints(2, 100, 3), "axes", ints(2, 2, 0)),
                 "Tensor[(0, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, x, "begin", ints(1, 100), "end", ints(1, -100),
                      "strides", ints(1, -1), "axes", ints(1, -2)),
                 "Tensor[(5, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, x, "begin", ints(1, 4), "end", ints(1, 1),
                      "strides", ints(1, 1)),
                 "Tensor[(0, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, x, "begin", ints(0), "end", ints(0)),
                 "Tensor[(5, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, tv("i", "int8", 1, 9), "begin", ints(1, 0),
                      "end", ints(1, 9), "strides", ints(1, 4)),
                 "Tensor[(3,), int8]");
  /* steps and ends at the extremes of int64 */
  TnAny big = tn_any_obj(K(tn_array_new((TnAny[]){tn_any_int(INT64_MAX)}, 1)));
  TnAny small =
      tn_any_obj(K(tn_array_new((TnAny[]){tn_any_int(INT64_MIN)}, 1)));
  ck_assert_type(CALL(op, 1, x, "begin", small, "end", big, "strides", big),
                 "Tensor[(1, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, x, "begin", big, "end", small, "strides", small),
                 "Tensor[(1, 6, 7), float32]");
  ck_assert_type(CALL(op, 1, x, "begin", big, "end", small),
                 "Tensor[(0, 6, 7), float32]");

  FAILS(TRY_CALL(op, 1, x, "begin", ints(1, 0), "end", ints(1, 4), "strides",
                 ints(1, 0)),
        "TypeError", "strided_slice: attribute 'strides[0]' = 0: a slice "
        "cannot step by 0");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(2, 0, 0), "end", ints(1, 4)),
        "TypeError", "strided_slice: begin has 2 values but end has 1");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(2, 0, 0), "end", ints(2, 4, 4),
                 "strides", ints(3, 1, 1, 1)),
        "TypeError", "strided_slice: strides has 3 values for the 2 of begin");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(4, 0, 0, 0, 0), "end",
                 ints(4, 1, 1, 1, 1)),
        "TypeError", "strided_slice: argument 0 (data) has type Tensor[(5, 6, "
        "7), float32]: begin has 4 values for 3 dimensions");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(1, 0), "end", ints(1, 1), "axes",
                 ints(1, 3)),
        "TypeError", "strided_slice: argument 0 (data)",
        "axis 3 is out of range for 3 dimensions");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(2, 0, 0), "end", ints(2, 1, 1),
                 "axes", ints(2, 1, -2)),
        "TypeError", "strided_slice: attribute 'axes' lists axis 1 twice "
        "(as -2)");
  FAILS(TRY_CALL(op, 1, x, "begin", ints(2, 0, 0), "end", ints(2, 1, 1),
                 "axes", ints(1, 1)),
        "TypeError", "strided_slice: axes has 1 values for the 2 of begin");
  FAILS(TRY_CALL(op, 1, x, "begin", tn_any_cstr("0"), "end", ints(1, 1)),
        "TypeError", "strided_slice: attribute 'begin' must be a list");
  FAILS(TRY_CALL(op, 1, x, "begin", ints_n(17, 0), "end", ints_n(17, 1)),
        "TypeError", "strided_slice: attribute 'begin' must be a list of at "
        "most 16 integers");
  FAILS(TRY_CALL(op, 1, x, "end", ints(1, 1)), "TypeError",
        "strided_slice", "begin");
  FAILS(TRY_CALL(op, 1, tup(1, x), "begin", ints(1, 0), "end", ints(1, 1)),
        "TypeError", "strided_slice: argument 0 (data)", "expected a tensor");
}
END_TEST

START_TEST(test_mean) {
  const char *op = "mean";
  TnObject *x = tv("x", "float32", 3, 2, 3, 4);
  ck_assert_type(CALL(op, 1, x), "Tensor[(), float32]");
  ck_assert_type(CALL(op, 1, x, "keepdims", tn_any_bool(1)),
                 "Tensor[(1, 1, 1), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", ints(0)), "Tensor[(), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", ints(2, 0, -1)),
                 "Tensor[(3,), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", ints(2, 2, 0), "keepdims",
                      tn_any_bool(1)),
                 "Tensor[(1, 3, 1), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", tn_any_int(1)),
                 "Tensor[(2, 4), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", ints(1, 1), "exclude", tn_any_bool(1)),
                 "Tensor[(3,), float32]");
  ck_assert_type(CALL(op, 1, x, "axis", ints(1, 1), "exclude", tn_any_bool(1),
                      "keepdims", tn_any_bool(1)),
                 "Tensor[(1, 3, 1), float32]");
  ck_assert_type(CALL(op, 1, tv("i", "int32", 2, 5, 2), "axis", ints(1, 0)),
                 "Tensor[(2,), int32]");
  ck_assert_type(CALL(op, 1, f32s(1)), "Tensor[(), float32]");
  ck_assert_type(CALL(op, 1, tv_big("float32", 16, 1), "axis", ints(1, 15)),
                 "Tensor[(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), "
                 "float32]");

  const char *x_is = "mean: argument 0 (data) has type Tensor[(2, 3, 4), "
                     "float32]: ";
  FAILS(TRY_CALL(op, 1, x, "axis", ints(1, 3)), "TypeError", x_is,
        "axis 3 is out of range for 3 dimensions");
  FAILS(TRY_CALL(op, 1, x, "axis", ints(1, -4)), "TypeError", x_is,
        "axis -4 is out of range");
  FAILS(TRY_CALL(op, 1, x, "axis", ints(2, 1, -2)), "TypeError",
        "mean: attribute 'axis' lists axis 1 twice (as -2)");
  FAILS(TRY_CALL(op, 1, f32s(1), "axis", ints(1, 0)), "TypeError",
        "mean: argument 0 (data) has type Tensor[(), float32]: axis 0 is out "
        "of range for 0 dimensions");
  FAILS(TRY_CALL(op, 1, x, "axis", tn_any_cstr("all")), "TypeError",
        "mean: attribute 'axis' must be a list");
  FAILS(TRY_CALL(op, 1, tv("b", "bool", 1, 3)), "TypeError",
        "mean: argument 0 (data) has type Tensor[(3,), bool]: expected a "
        "float or integer tensor");
  FAILS(TRY_CALL(op, 1, tup(1, x)), "TypeError", "mean: argument 0 (data)",
        "expected a tensor");
}
END_TEST

START_TEST(test_qnn_mean) {
  const char *op = "qnn.mean";
  TnObject *x = tv("x", "int8", 4, 1, 7, 7, 16);
  TnObject *s = f32s(0.5), *z = i32s(-3);
  ck_assert_type(CALL(op, 5, x, s, z, s, z, "axis", ints(2, 1, 2),
                      "keepdims", tn_any_bool(1)),
                 "Tensor[(1, 1, 1, 16), int8]");
  ck_assert_type(CALL(op, 5, x, s, z, f32s(0.25), i32s(7), "axis",
                      ints(2, 1, 2)),
                 "Tensor[(1, 16), int8]");
  ck_assert_type(CALL(op, 5, tv("u", "uint8", 2, 3, 4), s, z, s, z),
                 "Tensor[(), uint8]");
  FAILS(TRY_CALL(op, 5, tv("f", "float32", 1, 3), s, z, s, z), "TypeError",
        "qnn.mean: argument 0 (data) has type Tensor[(3,), float32]: "
        "expected int8, uint8 or int16");
  FAILS(TRY_CALL(op, 5, x, z, z, s, z), "TypeError",
        "qnn.mean: argument 1 (input_scale) has type Tensor[(), int32]: "
        "expected float32");
  FAILS(TRY_CALL(op, 5, x, s, s, s, z), "TypeError",
        "qnn.mean: argument 2 (input_zero_point)", "expected int32");
  FAILS(TRY_CALL(op, 5, x, s, z, tv("os", "float32", 1, 16), z), "TypeError",
        "qnn.mean: argument 3 (output_scale) has type Tensor[(16,), "
        "float32]: expected a scalar float32");
  FAILS(TRY_CALL(op, 5, x, s, z, s, tv("oz", "int32", 1, 16)), "TypeError",
        "qnn.mean: argument 4 (output_zero_point)", "expected a scalar int32");
  FAILS(TRY_CALL(op, 5, x, s, z, s, z, "axis", ints(1, 4)), "TypeError",
        "qnn.mean: argument 0 (data)", "axis 4 is out of range");
  FAILS(TRY_CALL(op, 5, x, s, z, s, z, "axis", ints(2, 3, 3)), "TypeError",
        "qnn.mean: attribute 'axis' lists axis 3 twice");
}
END_TEST

/* ---- regressions: bugs this suite found, each fixed ------------------------ */

/*
 * Was a bug: ops_nn.c, tn__ir_conv2d_out. The output size
 * (H + pads - dilation * (kh - 1) - 1) / stride + 1 divides a negative
 * numerator with C's truncation toward zero, so a (dilated) kernel up to
 * stride - 1 rows wider than the padded input still gets an output size
 * of 1 instead of the "does not fit" error it gets with stride 1.
 */
START_TEST(test_bug_conv2d_kernel_too_big_with_stride) {
  TnObject *d = tv("d", "float32", 4, 1, 1, 4, 4);
  FAILS(TRY_CALL("nn.conv2d", 2, d, tv("w", "float32", 4, 1, 1, 5, 5),
                 "strides", ints(2, 2, 2)),
        "TypeError", "nn.conv2d: argument 1 (weight)",
        "the kernel does not fit the padded 4x4 input");
  FAILS(TRY_CALL("nn.conv2d", 2, d, tv("w3", "float32", 4, 1, 1, 3, 3),
                 "dilation", tn_any_int(2), "strides", tn_any_int(3)),
        "TypeError", "nn.conv2d: argument 1 (weight)",
        "the kernel does not fit the padded 4x4 input");
  FAILS(TRY_CALL("qnn.conv2d", 6, tv("q", "int8", 4, 1, 1, 4, 4),
                 tv("qw", "int8", 4, 1, 1, 5, 5), i32s(0), i32s(0),
                 f32s(1), f32s(1), "strides", tn_any_int(2)),
        "TypeError", "qnn.conv2d: argument 1 (weight)",
        "the kernel does not fit");
}
END_TEST

/*
 * Was a bug: ops_nn.c, tn__ir_conv2d_out. kernel_size is documented as "checked
 * against the weight when given", and strides, dilation and pool_size read
 * a single value v as (v, v); but a kernel_size of one value is not
 * checked at all: kernel_size=5 with a 3x3 weight is accepted.
 */
START_TEST(test_bug_conv2d_single_kernel_size_unchecked) {
  TnObject *d = tv("d", "float32", 4, 1, 3, 32, 32);
  TnObject *w = tv("w", "float32", 4, 16, 3, 3, 3);
  ck_assert_type(CALL("nn.conv2d", 2, d, w, "kernel_size", tn_any_int(3)),
                 "Tensor[(1, 16, 30, 30), float32]");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_size", tn_any_int(5)),
        "TypeError", "nn.conv2d: argument 1 (weight)", "kernel_size");
  FAILS(TRY_CALL("nn.conv2d", 2, d, w, "kernel_size", ints(1, 5)),
        "TypeError", "nn.conv2d: argument 1 (weight)", "kernel_size");
}
END_TEST

/*
 * Was a bug (memory safety): a tensor type may have up to 1024 dimensions
 * (tn_shape_new), but these inference functions copy or index ndim entries
 * into stack arrays of TN_IR_MAX_DIMS (16) without checking ndim, a stack
 * buffer overflow for 17 or more dimensions:
 *   ops_tensor.c infer_transpose (axes, out, seen with default axes),
 *   ops_tensor.c infer_squeeze (drop, out), infer_concatenate (out),
 *   ops_nn.c tn__ir_dense_out (out; nn.dense and qnn.dense),
 *   ops_nn.c infer_matmul (out), pad_width/infer_pad (before, after, out).
 * Expected: a TypeError naming the operator, as broadcasting already
 * gives ("17 dimensions is more than 16").
 */
START_TEST(test_bug_more_than_16_dimensions) {
  TnObject *x = tv_big("float32", 17, 2), *c = NULL;
  const char *op = NULL;
  switch (_i) {
    case 0: c = TRY_CALL(op = "transpose", 1, x); break;
    case 1: c = TRY_CALL(op = "squeeze", 1, x); break;
    case 2: c = TRY_CALL(op = "concatenate", 1, tup(2, x, x)); break;
    case 3:
      c = TRY_CALL(op = "nn.dense", 2, x, tv("w", "float32", 2, 4, 2));
      break;
    case 4:
      c = TRY_CALL(op = "matmul", 2, x, tv("b", "float32", 2, 2, 4));
      break;
    default:
      c = TRY_CALL(op = "nn.pad", 1, x, "pad_width", ints_n(34, 1));
      break;
  }
  ck_assert_msg(c == NULL, "%s on 17 dimensions: expected a TypeError, got "
                "%s", op, type_text(c));
  TN_EXPECT_ERROR("TypeError", who(op), "dimensions");
}
END_TEST

/*
 * Was a bug (message): ops_qnn.c, check_qparam. For qnn.conv2d and qnn.dense the
 * per-channel kernel_zero_point and kernel_scale run along the weight's
 * output-channel axis, but the error calls it "the data's axis", naming the
 * wrong argument.
 */
START_TEST(test_bug_qnn_kernel_param_message_names_data) {
  TnObject *w = tv("w", "int8", 4, 3, 3, 3, 16);
  ck_assert_ptr_null(TRY_CALL("qnn.conv2d", 6, tv("d", "int8", 4, 1, 8, 8, 3),
                              w, i32s(0), i32s(0), f32s(1),
                              tv("s", "float32", 1, 3), "data_layout",
                              tn_any_cstr("NHWC"), "kernel_layout",
                              tn_any_cstr("HWIO")));
  expect_error_without("qnn.conv2d: argument 5 (kernel_scale) has type "
                       "Tensor[(3,), float32]: a per-channel kernel_scale "
                       "needs 16 values (axis 3 of the weight)",
                       "of the data");
  ck_assert_ptr_null(TRY_CALL("qnn.dense", 6, tv("x", "int8", 2, 1, 10),
                              tv("wd", "int8", 2, 4, 10), i32s(0),
                              tv("z", "int32", 1, 10), f32s(1), f32s(1)));
  expect_error_without("qnn.dense: argument 3 (kernel_zero_point) has type "
                       "Tensor[(10,), int32]: a per-channel "
                       "kernel_zero_point needs 4 values (axis 0 of the "
                       "weight)", "of the data");
}
END_TEST

/*
 * Was a bug (robustness): op.c, c_infer_call. An operator's inference function
 * is a public tn.Function, infer(arg_types, attrs), but it passes `attrs`
 * on without checking it against the operator's attrs type. With None,
 * operators that read attributes either dereference NULL (clip, cast,
 * concatenate, expand_dims, nn.conv2d, ...: SIGSEGV) or, through
 * tn__ir_attr_ints, fail without raising any error (reshape); attrs of
 * another node type are read as the wrong struct. Expected: a TypeError
 * naming the operator.
 */
/* infer(arg_types, attrs) of operator `op` on one argument of type
 * Tensor[(2, 3), float32]: must fail with a TypeError naming `op` and
 * each of the substrings. */
static void infer_must_refuse(const char *op, TnAny attrs, ...) {
  TnAny one[] = {tn_any_obj(tt("float32", 2, 2, 3))};
  TnAny args[] = {tn_any_obj(K(tn_array_new(one, 1))), attrs};
  TnAny ret = tn_any_none();
  TnObject *o = K(tn_ir_op_get(op));
  int rc = tn_func_call(tn_ir_op_get_attr(o, TN_OP_ATTR_INFER_TYPE)->v_obj,
                        args, 2, &ret);
  if (rc == 0) tn_any_clear(&ret);
  ck_assert_msg(rc != 0, "%s: infer accepted the attrs", op);
  TnObject *e = tn_error_take_raised();
  ck_assert_msg(e != NULL, "%s: infer failed but raised no error", op);
  const char *m = tn_error_message(e);
  bool ok = strcmp(tn_error_kind(e), "TypeError") == 0 && strstr(m, op);
  va_list ap;
  va_start(ap, attrs);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *))
    ok = ok && strstr(m, s);
  va_end(ap);
  char buf[512];
  snprintf(buf, sizeof buf, "%s: %s", tn_error_kind(e), m);
  tn_object_release(e);
  ck_assert_msg(ok, "%s: unexpected error %s", op, buf);
}

START_TEST(test_bug_infer_none_attrs_raises_nothing) {
  infer_must_refuse("reshape", tn_any_none(), "attrs", NULL);
  infer_must_refuse("transpose", tn_any_none(), "attrs", NULL);
}
END_TEST

START_TEST(test_bug_infer_none_attrs_crashes) {
  infer_must_refuse("clip", tn_any_none(), "attrs", NULL);
}
END_TEST

START_TEST(test_bug_infer_wrong_attrs_type) {
  infer_must_refuse("nn.softmax",
                    tn_any_obj(ATTRS("ir.CastAttrs", "dtype",
                                     tn_any_cstr("int8"))),
                    "ir.SoftmaxAttrs", NULL);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("ir_ops");
  TCase *tc = ir_case(s, "registry");
  tcase_add_test(tc, test_op_list_has_every_operator);
  tcase_add_test(tc, test_unknown_operator);
  tcase_add_test(tc, test_arity);
  tcase_add_test(tc, test_attribute_names_and_values);
  tcase_add_test(tc, test_attrs_node_types);
  tcase_add_test(tc, test_untyped_arguments_defer_inference);
  tcase_add_test(tc, test_infer_function_directly);
  tc = ir_case(s, "elementwise");
  tcase_add_test(tc, test_binary_broadcasting);
  tcase_add_test(tc, test_unary);
  tcase_add_test(tc, test_clip);
  tcase_add_test(tc, test_cast);
  tc = ir_case(s, "shape");
  tcase_add_test(tc, test_reshape);
  tcase_add_test(tc, test_transpose);
  tcase_add_test(tc, test_concatenate);
  tcase_add_test(tc, test_squeeze);
  tcase_add_test(tc, test_expand_dims);
  tcase_add_test(tc, test_strided_slice);
  tcase_add_test(tc, test_mean);
  tc = ir_case(s, "nn");
  tcase_add_test(tc, test_dense);
  tcase_add_test(tc, test_matmul);
  tcase_add_test(tc, test_conv2d_nchw);
  tcase_add_test(tc, test_conv2d_nhwc_groups);
  tcase_add_test(tc, test_conv2d_errors);
  tcase_add_test(tc, test_pool2d);
  tcase_add_test(tc, test_global_avg_pool2d);
  tcase_add_test(tc, test_softmax);
  tcase_add_test(tc, test_bias_add);
  tcase_add_test(tc, test_pad);
  tc = ir_case(s, "qnn");
  tcase_add_test(tc, test_qnn_quantize);
  tcase_add_test(tc, test_qnn_dequantize);
  tcase_add_test(tc, test_qnn_requantize);
  tcase_add_test(tc, test_qnn_conv2d);
  tcase_add_test(tc, test_qnn_dense);
  tcase_add_test(tc, test_qnn_add);
  tcase_add_test(tc, test_qnn_mean);
  tc = ir_case(s, "regressions");
  tcase_add_test(tc, test_bug_conv2d_kernel_too_big_with_stride);
  tcase_add_test(tc, test_bug_conv2d_single_kernel_size_unchecked);
  tcase_add_loop_test(tc, test_bug_more_than_16_dimensions, 0, 6);
  tcase_add_test(tc, test_bug_qnn_kernel_param_message_names_data);
  tcase_add_test(tc, test_bug_infer_none_attrs_raises_nothing);
  tcase_add_test(tc, test_bug_infer_none_attrs_crashes);
  tcase_add_test(tc, test_bug_infer_wrong_attrs_type);
  return s;
}

TN_TEST_MAIN(make_suite)
