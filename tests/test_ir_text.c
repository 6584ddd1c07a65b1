/*
 * test_ir_text.c: the text format. print -> parse -> structurally equal for
 * every test module (the MLPerf Tiny models in float32 and int8, before and
 * after the pass pipeline, and hand-written modules covering lets, tuples,
 * nested functions, global calls, attributes of every kind and scalar
 * literals of every dtype); parse errors give line and column.
 */
#include "ir_test.h"

#include "models/mlperf_tiny.h"

/* The text without its comments (the inferred types, which a parsed module
 * has only where the builders could infer them). */
static char *uncommented(const char *text) {
  GString *out = g_string_new(NULL);
  for (const char *c = text; *c; c++) {
    if (c[0] == ' ' && c[1] == '/' && c[2] == '*') {
      c = strstr(c, "*/") + 1;
      continue;
    }
    g_string_append_c(out, *c);
  }
  return g_string_free(out, FALSE);
}

/* print (with metadata) -> parse -> equal; and print again -> same text */
static void round_trip(TnObject *mod) {
  const char *text = astext(mod, 1);
  TnObject *back = tn_ir_parse(text, strlen(text));
  ck_assert_msg(back != NULL, "parse failed: %s\n%s", tn_test_raised_text(),
                text);
  K(back);
  ck_assert_sequal(mod, back);
  char *a = uncommented(astext(back, 1)), *b = uncommented(text);
  ck_assert_str_eq(a, b);
  g_free(a);
  g_free(b);
}

static TnObject *pipeline(TnObject *mod) {
  const char *names[] = {"InferType", "SimplifyExpr", "FoldConstant",
                         "FuseOps"};
  TnObject *seq = K(tn_pass_sequential_named(names, 4, "test"));
  return K(tn_pass_run(seq, mod, NULL));
}

START_TEST(test_models_round_trip) {
  for (const char *const *n = tn_model_names(); *n; n++) {
    TnObject *mod = K(tn_model_build(*n));
    round_trip(mod);
    round_trip(pipeline(mod));
  }
  round_trip(K(tn_model_build("synthetic:300")));
}
END_TEST

START_TEST(test_issue_example_parses) {
  const char *src = "fn (%x: Tensor[(1, 10), float32]) { nn.relu(%x) }";
  TnObject *mod = K(tn_ir_parse(src, strlen(src)));
  TnObject *f = main_of(mod);
  ck_assert_type(((TnIrFunction *)f)->body, "Tensor[(1, 10), float32]");
  TnObject *x = var("x", tt("float32", 2, 1, 10));
  TnObject *want = module_of(K(tn_ir_function(
      &x, 1, CALL("nn.relu", 1, x), NULL, NULL)));
  ck_assert_sequal(mod, want);
  ck_assert_str_eq(astext(mod, 0),
                   "def @main(%x: Tensor[(1, 10), float32]) {\n"
                   "  nn.relu(%x) /* ty=Tensor[(1, 10), float32] */\n"
                   "}\n");
}
END_TEST

START_TEST(test_module_with_everything) {
  /* lets (annotated or not), tuples, items, a nested closure, a global call,
   * function attrs, module attrs, attributes of every kind */
  TnObject *t = tt("float32", 2, 2, 3);
  TnObject *x = var("x", t), *y = var("y", t);
  TnObject *helper_p = var("a", t);
  TnObject *helper = K(tn_ir_function(
      &helper_p, 1, CALL("negative", 1, helper_p), t, NULL));
  TnObject *mod = K(tn_ir_module_new());
  mod = K(tn_ir_module_with(mod, "helper", helper));
  TnObject *gv = K(tn_ir_global_var("helper"));
  TnObject *g = K(tn_ir_call(gv, &x, 1, NULL));
  TnObject *fields[] = {x, g};
  TnObject *tup = K(tn_ir_tuple(fields, 2));
  TnObject *first = K(tn_ir_tuple_get_item(tup, 0));
  TnObject *l1 = var("l1", NULL), *l2 = var("l2", t);
  TnObject *inner_p = var("q", t);
  TnObject *closure = K(tn_ir_function(
      &inner_p, 1, CALL("add", 2, inner_p, y), NULL, NULL));
  TnObject *applied = K(tn_ir_call(closure, &first, 1, NULL));
  TnObject *clipped = CALL("clip", 1, applied, "a_min", tn_any_float(-1.5),
                           "a_max", tn_any_float(2.25));
  TnObject *tr = CALL("transpose", 1, clipped, "axes", ints(2, 1, 0));
  TnObject *rs = CALL("reshape", 1, tr, "newshape", ints(2, -1, 3));
  TnObject *cast = CALL("cast", 1, rs, "dtype", tn_any_cstr("int8"));
  TnObject *outs[] = {CALL("exp", 1, l2), cast};
  TnObject *body = K(tn_ir_let(l2, rs, K(tn_ir_tuple(outs, 2))));
  body = K(tn_ir_let(l1, tup, body));
  TnAny k = tn_any_cstr("Compiler"), v = tn_any_cstr("c \"quoted\"\n");
  TnObject *fattrs = K(tn_map_new(&k, &v, 1));
  TnObject *params[] = {x, y};
  TnObject *f = K(tn_ir_function(params, 2, body, NULL, fattrs));
  mod = K(tn_ir_module_with(mod, "main", f));
  round_trip(mod);
  mod = K(tn_pass_run(K(tn_pass_infer_type()), mod, NULL));
  round_trip(mod);
  const char *text = astext(mod, 0);
  ck_assert_ptr_nonnull(strstr(text, "%1 = (%x, %0)"));
  ck_assert_ptr_nonnull(strstr(text, "let %l1 = %1;"));
  ck_assert_ptr_nonnull(strstr(text, "let %l2: Tensor[(2, 3), float32] = %7;"));
  ck_assert_ptr_nonnull(strstr(text, "Compiler=\"c \\\"quoted\\\"\\n\""));
  ck_assert_ptr_nonnull(strstr(text, "clip("));
  ck_assert_ptr_nonnull(strstr(text, "a_min=-1.5, a_max=2.25"));
  ck_assert_ptr_nonnull(strstr(text, "@helper(%x)"));
}
END_TEST

START_TEST(test_scalar_literals_of_every_dtype) {
  static const char *const dtypes[] = {"float32", "float64", "int8", "int16",
                                       "int32", "int64", "uint8", "uint16",
                                       "uint32", "bool"};
  static const double values[] = {-0.1, 3.0e-300, -128, -32768, 2147483647,
                                  -9007199254740992.0, 255, 65535,
                                  4294967295.0, 1};
  static const char *const lits[] = {"-0.100000001f", "e-300f64", "-128i8",
                                     "-32768i16", "2147483647i32",
                                     "-9007199254740992i64", "255u8",
                                     "65535u16", "4294967295u32", "true"};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    TnObject *c = scalar(values[i], dtypes[i]);
    TnObject *fields[] = {c, c};
    TnObject *mod = module_of(K(tn_ir_tuple(fields, 2)));
    const char *text = astext(mod, 0);
    ck_assert_msg(strstr(text, lits[i]), "%s: %s", dtypes[i], text);
    ck_assert_ptr_null(strstr(text, "meta"));
    round_trip(mod);
  }
  /* NaN and a non-scalar print through the metadata */
  TnObject *nan = scalar(NAN, "float32");
  TnObject *fields[] = {nan, fconst(NULL, 1, 3)};
  TnObject *mod = module_of(K(tn_ir_tuple(fields, 2)));
  ck_assert_ptr_nonnull(strstr(astext(mod, 1), "meta[1]"));
  round_trip(mod);
}
END_TEST

START_TEST(test_names_are_made_printable_and_unique) {
  TnObject *t = tt("float32", 1, 4);
  TnObject *a = var("x", t), *b = var("x", t), *c = var("0bad name", t),
           *d = var("", t);
  TnObject *params[] = {a, b, c, d};
  TnObject *s1 = CALL("add", 2, a, b), *s2 = CALL("add", 2, c, d);
  TnObject *f = K(tn_ir_function(params, 4, CALL("add", 2, s1, s2), NULL,
                                 NULL));
  TnObject *mod = module_of(f);
  const char *text = astext(mod, 0);
  ck_assert_ptr_nonnull(strstr(text, "%x: "));
  ck_assert_ptr_nonnull(strstr(text, "%x_1: "));
  ck_assert_ptr_nonnull(strstr(text, "%v0bad_name: "));
  ck_assert_ptr_nonnull(strstr(text, "%v: "));
  round_trip(mod);
}
END_TEST

START_TEST(test_shared_nodes_print_once) {
  TnObject *x = var("x", tt("float32", 1, 8));
  TnObject *r = CALL("nn.relu", 1, x);
  TnObject *s = CALL("add", 2, r, r);
  TnObject *mod = module_of(CALL("multiply", 2, s, r));
  const char *text = astext(mod, 0);
  ck_assert_ptr_nonnull(strstr(text, "%0 = nn.relu(%x)"));
  ck_assert_ptr_nonnull(strstr(text, "%1 = add(%0, %0)"));
  ck_assert_ptr_nonnull(strstr(text, "multiply(%1, %0)"));
  round_trip(mod);
}
END_TEST

START_TEST(test_deep_chain) {
  /* printing and parsing do not recurse along a chain */
  TnObject *x = var("x", tt("float32", 1, 4)), *e = x;
  for (int i = 0; i < 20000; i++) e = CALL("nn.relu", 1, e);
  round_trip(module_of(e));
}
END_TEST

START_TEST(test_bare_expression_with_free_variables) {
  const char *src = "%0 = add(%a, %b);\nmultiply(%0, %a)";
  TnObject *mod = K(tn_ir_parse(src, strlen(src)));
  TnIrFunction *f = (TnIrFunction *)main_of(mod);
  ck_assert_int_eq(tn_array_size(f->params), 2);
  ck_assert_str_eq(((TnStringObj *)((TnIrVar *)tn_array_at(f->params, 0)->v_obj)
                        ->name_hint)->data, "a");
  ck_assert_type(f->body, "?"); /* free variables have no type */
}
END_TEST

/* Parse `src`; expect an error of `kind` whose message has each substring. */
#define EXPECT_PARSE_ERROR(src, kind, ...)                          \
  do {                                                              \
    const char *s_ = (src);                                         \
    ck_assert_ptr_null(tn_ir_parse(s_, strlen(s_)));                \
    TN_EXPECT_ERROR(kind, __VA_ARGS__);                             \
  } while (0)

/* ---- attribute values ----------------------------------------------------- */

/* A module with one function; `fattrs` are the function's attributes and
 * `mattrs` the module's (NULL: none). */
static TnObject *attrs_module(TnObject *fattrs, TnObject *mattrs) {
  TnObject *x = var("x", tt("float32", 1, 2));
  TnObject *f = K(tn_ir_function(&x, 1, CALL("nn.relu", 1, x), NULL, fattrs));
  TnAny name = tn_any_cstr("main"), fv = tn_any_obj(f);
  TnObject *fns = K(tn_map_new(&name, &fv, 1));
  const char *names[] = {"functions", "attrs"};
  TnAny values[] = {tn_any_obj(fns), tn_any_obj(mattrs)};
  return K(tn_node_new(tn_ir_types()->module, names, values, mattrs ? 2 : 1));
}

static bool same_float_bits(double a, double b) {
  if (isnan(a) && isnan(b)) return true; /* "nan" reads back as NAN */
  return memcmp(&a, &b, sizeof a) == 0;
}

/* The value under `key` in `map` is `want` exactly: structurally equal,
 * and a float bit for bit (0.0 and -0.0 are structurally equal). */
static void check_attr(TnObject *map, const TnAny *key, const TnAny *want,
                       const char *text) {
  const TnAny *got = tn_map_find(map, key);
  ck_assert_msg(got != NULL, "attribute lost:\n%s", text);
  ck_assert_msg(tn_structural_equal(got, want, 0) == 1,
                "attribute read back as %s:\n%s", tn_any_type_key(got), text);
  if (want->type_index == TN_TYPE_FLOAT)
    ck_assert_msg(same_float_bits(got->v_float64, want->v_float64),
                  "float %.17g read back as %.17g:\n%s", want->v_float64,
                  got->v_float64, text);
}

/* `value` as a module attribute and as a function attribute, under `key`:
 * print -> parse -> equal -> print the same text. */
static void attr_round_trip(const TnAny *key, const TnAny *value) {
  TnObject *m = K(tn_map_new(key, value, 1));
  TnObject *mod = attrs_module(m, m);
  round_trip(mod);
  const char *text = astext(mod, 1);
  TnObject *back = K(tn_ir_parse(text, strlen(text)));
  check_attr(((TnIrModule *)back)->attrs, key, value, text);
  check_attr(((TnIrFunction *)main_of(back))->attrs, key, value, text);
}

static TnAny small_any(int32_t type_index, const char *data, uint32_t n) {
  TnAny a = {type_index, n, {0}};
  memcpy(a.v_small, data, n);
  return a;
}

START_TEST(test_attribute_values_round_trip) {
  TnAny values[64];
  int nv = 0;
  /* tuples (shapes) of every length, nested in arrays and maps */
  int64_t dims[] = {3, 0, INT64_MAX};
  TnObject *s1 = K(tn_shape_new(dims, 1)), *s0 = K(tn_shape_new(NULL, 0)),
           *s3 = K(tn_shape_new(dims, 3));
  values[nv++] = tn_any_obj(s1);
  values[nv++] = tn_any_obj(s0);
  values[nv++] = tn_any_obj(s3);
  TnAny shapes[] = {tn_any_obj(s1), tn_any_obj(s0), tn_any_obj(s3)};
  TnObject *nested = K(tn_array_new(shapes, 3));
  values[nv++] = tn_any_obj(nested);
  TnAny deeper[] = {tn_any_obj(nested), tn_any_obj(K(tn_array_new(NULL, 0)))};
  values[nv++] = tn_any_obj(K(tn_array_new(deeper, 2)));
  /* strings: quotes, backslashes, control characters, NUL, UTF-8, bytes
   * that are not UTF-8, the small and the object form */
  static const char tricky[] = "q\"uo\\te\nnl\ttab\r\x01\x7f";
  static const char nul[] = "a\0b";
  static const char utf8[] = "h\xc3\xa9llo \xe2\x98\x83 \xf0\x9f\x98\x80";
  static const char bad[] = "\xff\xfe\xc3(\xe2\x82 \xed\xa0\x80";
  values[nv++] = tn_any_obj(K(tn_string_new(tricky, sizeof tricky - 1)));
  values[nv++] = tn_any_obj(K(tn_string_new(nul, sizeof nul - 1)));
  values[nv++] = tn_any_obj(K(tn_string_new(utf8, sizeof utf8 - 1)));
  values[nv++] = tn_any_obj(K(tn_string_new(bad, sizeof bad - 1)));
  values[nv++] = tn_any_obj(K(tn_string_new("", 0)));
  values[nv++] = small_any(TN_TYPE_SMALL_STR, "x\"\0y", 4);
  values[nv++] = small_any(TN_TYPE_SMALL_BYTES, "\0\xff\"b", 4);
  values[nv++] = tn_any_obj(K(tn_bytes_new(tricky, sizeof tricky - 1)));
  /* numbers at their extremes */
  values[nv++] = tn_any_int(INT64_MIN);
  values[nv++] = tn_any_int(INT64_MAX);
  values[nv++] = tn_any_int(-1);
  static const double floats[] = {INFINITY, -INFINITY, NAN, -0.0, 0.0, 1e300,
                                  -1e300, 1.7976931348623157e308,
                                  2.2250738585072014e-308,
                                  4.9406564584124654e-324,
                                  2.2250738585072009e-308, 0.1, 1e16, 1e17,
                                  3.0, -2.5e-7};
  for (size_t i = 0; i < G_N_ELEMENTS(floats); i++)
    values[nv++] = tn_any_float(floats[i]);
  values[nv++] = tn_any_bool(1);
  values[nv++] = tn_any_bool(0);
  values[nv++] = tn_any_none();
  /* dtypes and devices, with and without a name that reads back */
  values[nv++] = tn_any_dtype(ir_dtype("float32"));
  values[nv++] = tn_any_dtype(ir_dtype("int8x4"));
  values[nv++] = tn_any_dtype(ir_dtype("bool"));
  values[nv++] = tn_any_dtype(ir_dtype("void"));
  values[nv++] = tn_any_dtype((DLDataType){99, 7, 1});
  values[nv++] = tn_any_dtype((DLDataType){kDLInt, 0, 0});
  values[nv++] = tn_any_device((DLDevice){kDLCUDA, 1});
  values[nv++] = tn_any_device((DLDevice){kDLCPU, -1});
  values[nv++] = tn_any_device((DLDevice){(DLDeviceType)999, 2});
  /* maps (keys of every kind but objects, which are keys by identity) and
   * arrays of everything so far */
  TnAny mk[] = {tn_any_cstr("a"), tn_any_int(2), tn_any_dtype(ir_dtype("int8")),
                tn_any_none()};
  TnAny mv[] = {tn_any_int(1), tn_any_obj(nested), tn_any_float(NAN),
                tn_any_obj(s1)};
  values[nv++] = tn_any_obj(K(tn_map_new(mk, mv, 4)));
  values[nv++] = tn_any_obj(K(tn_map_new(NULL, NULL, 0)));
  /* an object with no literal goes through the metadata, and is then
   * refused as JSON loading refuses it: attributes are plain data */
  {
    TnAny k = tn_any_cstr("v"), c = tn_any_obj(fconst(NULL, 1, 3));
    TnObject *m = K(tn_map_new(&k, &c, 1));
    const char *text = astext(attrs_module(m, m), 1);
    ck_assert_msg(strstr(text, "#[metadata]") != NULL, "%s", text);
    ck_assert_ptr_null(tn_ir_parse(text, strlen(text)));
    TN_EXPECT_ERROR("ValueError", "an attribute value holds a ir.Constant",
                    "plain data");
  }
  int ncore = nv;
  values[nv++] = tn_any_obj(K(tn_array_new(values, ncore)));
  ck_assert_int_le(nv, 64);

  TnAny key = tn_any_cstr("v");
  for (int i = 0; i < nv; i++) attr_round_trip(&key, &values[i]);

  /* names that are not words, and all values at once */
  TnAny keys[64];
  static const char *const names[] = {"with space", "", "true", "def", "a.b",
                                      "x=y", "_ok", "DataType", "9lives",
                                      "caf\xc3\xa9", "q\"", "\xff"};
  int nk = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    keys[nk++] = tn_any_cstr(names[i]);
  keys[nk++] = tn_any_obj(K(tn_string_new(nul, sizeof nul - 1)));
  keys[nk++] = small_any(TN_TYPE_SMALL_STR, "k\0", 2);
  for (int i = 0; i < nk; i++) attr_round_trip(&keys[i], &values[i]);
  TnObject *all = K(tn_map_new(keys, values, nk));
  round_trip(attrs_module(all, all));

  /* the forms the text uses */
  TnAny k1 = tn_any_cstr("t1"), v1 = tn_any_obj(s1);
  const char *text = astext(attrs_module(K(tn_map_new(&k1, &v1, 1)), NULL), 0);
  ck_assert_ptr_nonnull(strstr(text, "t1=(3,)"));
  TnAny kd = tn_any_cstr("d"), vd = tn_any_dtype(ir_dtype("float32"));
  text = astext(attrs_module(K(tn_map_new(&kd, &vd, 1)), NULL), 0);
  ck_assert_ptr_nonnull(strstr(text, "d=DataType(\"float32\")"));
}
END_TEST

START_TEST(test_attribute_text_forms_parse) {
  /* hand-written forms the printer does not produce read back too */
  const char *src =
      "attributes(a=(3), b=[1, 2,], c=(), d=b\"\\x00z\", e=DataType(2, 32, 1),"
      " f=Device(\"cpu:0\"), g=-inf, h=4.9406564584124654e-324,)\n"
      "def @main() { 1f }";
  TnObject *mod = K(tn_ir_parse(src, strlen(src)));
  TnObject *attrs = ((TnIrModule *)mod)->attrs;
  ck_assert_int_eq(tn_map_size(attrs), 8);
  TnAny k = tn_any_cstr("e");
  ck_assert_int_eq(tn_map_find(attrs, &k)->type_index, TN_TYPE_DATA_TYPE);
  k = tn_any_cstr("h");
  ck_assert(tn_map_find(attrs, &k)->v_float64 > 0);
  /* what cannot be read is refused with its place */
  EXPECT_PARSE_ERROR("attributes(a=9223372036854775808)\n", "ValueError",
                     "line 1, column 14", "out of range");
  EXPECT_PARSE_ERROR("attributes(a=1e999)\n", "ValueError", "out of range");
  EXPECT_PARSE_ERROR("attributes(a=DataType(\"floaty\"))\n", "ValueError",
                     "line 1, column 23", "floaty");
  EXPECT_PARSE_ERROR("attributes(a=DataType(1, 2))\n", "ValueError",
                     "expected ','");
  EXPECT_PARSE_ERROR("attributes(a=DataType(1, 2, 70000))\n", "ValueError",
                     "an integer in [0, 65535]");
  EXPECT_PARSE_ERROR("attributes(a=Device(\"moon:0\"))\n", "ValueError",
                     "moon");
  EXPECT_PARSE_ERROR("attributes(a=(1, \"x\"))\n", "ValueError", "integers");
  EXPECT_PARSE_ERROR("def @main(x) { 1f }", "ValueError",
                     "expected a parameter (%name) or an attribute");
}
END_TEST

START_TEST(test_pointer_attribute_has_no_text) {
  int dummy;
  /* (a dtype with no name after it: its failed probes keep the error) */
  TnAny k[] = {tn_any_cstr("p"), tn_any_cstr("d")};
  TnAny v[] = {tn_any_ptr(&dummy), tn_any_dtype((DLDataType){99, 7, 1})};
  TnObject *mod = attrs_module(K(tn_map_new(k, v, 2)), NULL);
  ck_assert_ptr_null(tn_ir_astext(mod, 1));
  TN_EXPECT_ERROR("TypeError", "tn_ir_astext", "void*", "no text form");
  ck_assert_ptr_nonnull(strstr(astext(mod, 0), "p=<void* 0x"));
}
END_TEST


START_TEST(test_parse_errors_give_line_and_column) {
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(1, 10), float32]) {\n"
                     "  nn.relu(%y)\n}\n",
                     "ValueError", "line 2, column 11", "%y is not defined");
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(1, 10), float32]) {\n"
                     "  nn.relu(%x\n}\n",
                     "ValueError", "line 3, column 1", "expected ')'");
  EXPECT_PARSE_ERROR("def @main() {\n  nn.nothing(1f)\n}", "KeyError",
                     "line 2, column 3", "nn.nothing");
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(2, 3), float32],\n"
                     "          %y: Tensor[(4, 3), float32]) {\n"
                     "  add(%x, %y)\n}",
                     "TypeError", "line 3, column 3", "add",
                     "Tensor[(2, 3), float32]", "Tensor[(4, 3), float32]");
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(2, 3), float32]) {\n"
                     "  nn.softmax(%x, axis=1, bogus=2)\n}",
                     "AttributeError", "line 2", "nn.softmax", "bogus");
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(2, 3), floaty]) { %x }",
                     "ValueError", "line 1, column 30", "floaty");
  EXPECT_PARSE_ERROR("def @main() { meta[0] }", "ValueError",
                     "line 1, column 15", "no #[metadata]");
  EXPECT_PARSE_ERROR("def @main() { 300i8 }", "ValueError", "300i8",
                     "does not fit");
  EXPECT_PARSE_ERROR("def @main() { 1f }\ndef @main() { 2f }", "ValueError",
                     "line 2, column 5", "defined twice");
  EXPECT_PARSE_ERROR("def @main() { 1f } junk", "ValueError",
                     "expected 'def'");
  EXPECT_PARSE_ERROR("def @main() { 1f /* open", "ValueError",
                     "comment is not closed");
  EXPECT_PARSE_ERROR("def @main() { \"abc }", "ValueError",
                     "string is not closed");
  EXPECT_PARSE_ERROR("def @main(%x: Tensor[(2,), float32]) { %x.0 }",
                     "TypeError", "line 1", "not a tuple");
  EXPECT_PARSE_ERROR("fn (%z: Tensor[(1, 10), float32]) {\n  nn.relu(%x)\n}",
                     "ValueError", "line 2, column 11", "%x",
                     "neither its parameter");
  EXPECT_PARSE_ERROR("def @main() { 1f }\n#[metadata]\n{\"nope\": 1}",
                     "ValueError", "line 2");
  /* deep nesting is refused, not a stack overflow */
  GString *deep = g_string_new("def @main() { ");
  for (int i = 0; i < 10000; i++) g_string_append_c(deep, '(');
  EXPECT_PARSE_ERROR(deep->str, "ValueError", "nest more than");
  g_string_free(deep, TRUE);
}
END_TEST

START_TEST(test_parse_survives_garbage) {
  /* every prefix of a valid module either parses or fails cleanly */
  TnObject *mod = pipeline(K(tn_model_build("kws-int8")));
  const char *text = astext(mod, 1);
  size_t n = strlen(text);
  for (size_t cut = 0; cut < n; cut += 1 + cut / 8) {
    TnObject *m = tn_ir_parse(text, cut);
    if (m) tn_object_release(m);
    else tn_error_set_raised(NULL);
  }
}
END_TEST

START_TEST(test_no_attributes_is_one_value) {
  /* found by fuzz_ir_pipeline: a module whose attrs are null (as JSON may
   * give it) printed without attributes and read back with {} */
  TnObject *null_attrs = attrs_module(NULL, NULL);
  ck_assert_ptr_null(((TnIrModule *)null_attrs)->attrs);
  round_trip(null_attrs);
  TnObject *empty = attrs_module(NULL, K(tn_map_new(NULL, NULL, 0)));
  ck_assert_sequal(null_attrs, empty);
  TnAny a = tn_any_obj(null_attrs), b = tn_any_obj(empty);
  uint64_t ha, hb;
  TN_OK(tn_structural_hash(&a, 0, &ha));
  TN_OK(tn_structural_hash(&b, 0, &hb));
  ck_assert_uint_eq(ha, hb);
  /* a non-empty map still differs from none */
  TnAny k = tn_any_cstr("version"), v = tn_any_int(1);
  TnObject *one = attrs_module(NULL, K(tn_map_new(&k, &v, 1)));
  TnAny c = tn_any_obj(one);
  ck_assert_int_eq(tn_structural_equal(&a, &c, 0), 0);
  round_trip(one);
}
END_TEST

START_TEST(test_bool_byte_that_is_not_0_or_1) {
  /* found by fuzz_ir_pipeline: a bool scalar holding the byte 2 (from a
   * JSON graph) printed as `true` and read back as 1 */
  TnObject *t = K(tn_tensor_empty(NULL, 0, ir_dtype("bool"),
                                  (DLDevice){kDLCPU, 0}));
  *(uint8_t *)tn_tensor_dltensor(t)->data = 2;
  TnObject *mod = module_of(K(tn_ir_constant(t)));
  const char *text = astext(mod, 1);
  ck_assert_ptr_null(strstr(text, "true"));
  TnObject *back = K(tn_ir_parse(text, strlen(text)));
  ck_assert_sequal(mod, back);
}
END_TEST

START_TEST(test_astext_bad_input) {
  ck_assert_ptr_null(tn_ir_astext(NULL, 0));
  TN_EXPECT_ERROR("ValueError", "tn_ir_astext", "node");
  TnObject *s = K(tn_string_from_cstr("x"));
  ck_assert_ptr_null(tn_ir_astext(s, 0));
  TN_EXPECT_ERROR("TypeError", "tn_ir_astext", "tn.String");
  ck_assert_ptr_null(tn_ir_parse(NULL, 0));
  TN_EXPECT_ERROR("ValueError", "tn_ir_parse", "text");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("ir_text");
  TCase *tc = ir_case(s, "round_trip");
  tcase_add_test(tc, test_models_round_trip);
  tcase_add_test(tc, test_issue_example_parses);
  tcase_add_test(tc, test_module_with_everything);
  tcase_add_test(tc, test_scalar_literals_of_every_dtype);
  tcase_add_test(tc, test_names_are_made_printable_and_unique);
  tcase_add_test(tc, test_shared_nodes_print_once);
  tcase_add_test(tc, test_deep_chain);
  tcase_add_test(tc, test_bare_expression_with_free_variables);
  tcase_add_test(tc, test_attribute_values_round_trip);
  tcase_add_test(tc, test_attribute_text_forms_parse);
  tcase_add_test(tc, test_pointer_attribute_has_no_text);
  tc = ir_case(s, "errors");
  tcase_add_test(tc, test_parse_errors_give_line_and_column);
  tcase_add_test(tc, test_parse_survives_garbage);
  tcase_add_test(tc, test_astext_bad_input);
  tcase_add_test(tc, test_bool_byte_that_is_not_0_or_1);
  tcase_add_test(tc, test_no_attributes_is_one_value);
  return s;
}

TN_TEST_MAIN(make_suite)
