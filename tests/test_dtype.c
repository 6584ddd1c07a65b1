/* test_dtype.c: DataType and Device text forms. */
#include "tn_test.h"

static void roundtrip(const char *text, uint8_t code, uint8_t bits,
                      uint16_t lanes, const char *printed) {
  DLDataType t;
  TN_OK(tn_dtype_parse(text, &t));
  ck_assert_msg(t.code == code && t.bits == bits && t.lanes == lanes,
                "%s parsed as {%u, %u, %u}", text, t.code, t.bits, t.lanes);
  char buf[32];
  int n = tn_dtype_print(t, buf, sizeof buf);
  ck_assert_int_eq(n, (int)strlen(printed));
  ck_assert_str_eq(buf, printed);
}

START_TEST(test_parse_print) {
  roundtrip("float32", kDLFloat, 32, 1, "float32");
  roundtrip("float16", kDLFloat, 16, 1, "float16");
  roundtrip("float64", kDLFloat, 64, 1, "float64");
  roundtrip("int8", kDLInt, 8, 1, "int8");
  roundtrip("int64", kDLInt, 64, 1, "int64");
  roundtrip("uint8x4", kDLUInt, 8, 4, "uint8x4");
  roundtrip("uint1", kDLUInt, 1, 1, "uint1");
  roundtrip("int4", kDLInt, 4, 1, "int4");
  roundtrip("bool", kDLBool, 8, 1, "bool");
  roundtrip("boolx2", kDLBool, 8, 2, "boolx2");
  roundtrip("bfloat16", kDLBfloat, 16, 1, "bfloat16");
  roundtrip("handle", kDLOpaqueHandle, 64, 1, "handle");
  roundtrip("void", kDLOpaqueHandle, 0, 0, "void");
  roundtrip("float", kDLFloat, 32, 1, "float32");
  roundtrip("int", kDLInt, 32, 1, "int32");
  roundtrip("float32x65535", kDLFloat, 32, 65535, "float32x65535");
  roundtrip("complex64", kDLComplex, 64, 1, "complex64");
}
END_TEST

START_TEST(test_small_floats) {
  /* every DLPack 1.1 small float: its code, its one width, its name */
  static const struct {
    const char *name;
    uint8_t code, bits;
  } all[] = {
      {"float8_e3m4", 7, 8},      {"float8_e4m3", 8, 8},
      {"float8_e4m3b11fnuz", 9, 8}, {"float8_e4m3fn", 10, 8},
      {"float8_e4m3fnuz", 11, 8}, {"float8_e5m2", 12, 8},
      {"float8_e5m2fnuz", 13, 8}, {"float8_e8m0fnu", 14, 8},
      {"float6_e2m3fn", 15, 6},   {"float6_e3m2fn", 16, 6},
      {"float4_e2m1fn", 17, 4},
  };
  ck_assert_int_eq(kDLFloat8_e3m4, 7);
  ck_assert_int_eq(kDLFloat4_e2m1fn, 17);
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    char text[64], printed[64];
    roundtrip(all[i].name, all[i].code, all[i].bits, 1, all[i].name);
    snprintf(text, sizeof text, "%sx4", all[i].name);
    roundtrip(text, all[i].code, all[i].bits, 4, text);
    /* the short prefixes: fp8_/f8_, fp6_/f6_, fp4_/f4_ */
    const char *variant = all[i].name + 7;
    snprintf(printed, sizeof printed, "%s", all[i].name);
    snprintf(text, sizeof text, "fp%u_%s", all[i].bits, variant);
    roundtrip(text, all[i].code, all[i].bits, 1, printed);
    snprintf(text, sizeof text, "f%u_%s", all[i].bits, variant);
    roundtrip(text, all[i].code, all[i].bits, 1, printed);
  }
  /* float8 alone is still the plain 8-bit float */
  roundtrip("float8", kDLFloat, 8, 1, "float8");
  roundtrip("float8x2", kDLFloat, 8, 2, "float8x2");
  /* a pair of float4s in a byte, as torch spells it */
  roundtrip("float4_e2m1fn_x2", kDLFloat4_e2m1fn, 4, 2, "float4_e2m1fnx2");
  roundtrip("fp4_e2m1fn_x2", kDLFloat4_e2m1fn, 4, 2, "float4_e2m1fnx2");
  /* a code whose width is fixed prints only with that width */
  char buf[32];
  DLDataType wide = {kDLFloat8_e4m3fn, 16, 1};
  ck_assert_int_eq(tn_dtype_print(wide, buf, sizeof buf), -1);
  TN_EXPECT_ERROR("ValueError", "tn_dtype_print", "float8_e4m3fn", "16");
  DLDataType f6 = {kDLFloat6_e3m2fn, 6, 3};
  ck_assert_int_eq(tn_dtype_print(f6, NULL, 0), 15); /* float6_e3m2fnx3 */
  char small[8];
  ck_assert_int_eq(tn_dtype_print(f6, small, sizeof small), 15);
  ck_assert_str_eq(small, "float6_");
}
END_TEST

static void bad(const char *text, const char *why) {
  DLDataType t = {9, 9, 9};
  ck_assert_int_eq(tn_dtype_parse(text, &t), -1);
  char quoted[128];
  snprintf(quoted, sizeof quoted, "'%s'", text);
  TN_EXPECT_ERROR("ValueError", "tn_dtype_parse", quoted, why);
  ck_assert_uint_eq(t.code, 9); /* untouched */
}

START_TEST(test_parse_errors) {
  bad("floaty32", "unknown type code");
  bad("", "unknown type code");
  bad("f32", "unknown type code");
  bad("float7", "float bits");
  bad("int0", "bits must be");
  bad("int256", "bits must be");
  bad("bfloat32", "bfloat bits");
  bad("uint8x0", "lanes");
  bad("uint8x", "lanes");
  bad("uint8x70000", "lanes");
  bad("int8q", "trailing");
  bad("float32 ", "trailing");
  bad("bool8", "trailing");
  bad("float8_", "float8 variant");
  bad("float8_e4m3fnu", "float8 variant");
  bad("float8_e2m1fn", "float8 variant");
  bad("float6_e4m3fn", "float6 variant");
  bad("float4_e2m3fn", "float4 variant");
  bad("fp8_E4M3FN", "float8 variant");
  bad("float8_e4m3fn_x2", "trailing");
  bad("float4_e2m1fn_", "trailing");
  bad("float4_e2m1fn_x", "lanes");
  bad("float8_e5m2x0", "lanes");
  bad("float8_e5m2x70000", "lanes");
  bad("float8_e5m2 ", "float8 variant");
  bad("float8_e5m216", "float8 variant");
  bad("fp16", "unknown type code");
  ck_assert_int_eq(tn_dtype_parse(NULL, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'text' is NULL");
}
END_TEST

START_TEST(test_print_edge_cases) {
  char small[4];
  DLDataType t = {kDLFloat, 32, 4};
  ck_assert_int_eq(tn_dtype_print(t, small, sizeof small), 9); /* float32x4 */
  ck_assert_str_eq(small, "flo");
  ck_assert_int_eq(tn_dtype_print(t, NULL, 0), 9);
  DLDataType unknown = {200, 8, 1};
  char buf[32];
  ck_assert_int_eq(tn_dtype_print(unknown, buf, sizeof buf), -1);
  TN_EXPECT_ERROR("ValueError", "tn_dtype_print", "unknown type code 200");
}
END_TEST

START_TEST(test_device) {
  DLDevice d;
  char buf[32];
  TN_OK(tn_device_parse("cpu", &d));
  ck_assert_int_eq(d.device_type, kDLCPU);
  ck_assert_int_eq(d.device_id, 0);
  TN_OK(tn_device_parse("cuda:3", &d));
  ck_assert_int_eq(d.device_type, kDLCUDA);
  ck_assert_int_eq(d.device_id, 3);
  tn_device_print(d, buf, sizeof buf);
  ck_assert_str_eq(buf, "cuda:3");
  TN_OK(tn_device_parse("cuda_host:0", &d));
  ck_assert_int_eq(d.device_type, kDLCUDAHost);
  ck_assert_int_eq(tn_device_parse("tpu:0", &d), -1);
  TN_EXPECT_ERROR("ValueError", "tn_device_parse", "'tpu:0'", "'tpu'");
  ck_assert_int_eq(tn_device_parse("cpu:x", &d), -1);
  TN_EXPECT_ERROR("ValueError", "'cpu:x'", "non-negative integer");
  ck_assert_int_eq(tn_device_parse("cpu:-1", &d), -1);
  TN_EXPECT_ERROR("ValueError", "'cpu:-1'");
  ck_assert_int_eq(tn_device_parse("cpu:", &d), -1);
  TN_EXPECT_ERROR("ValueError", "'cpu:'");
  DLDevice weird = {(DLDeviceType)99, 0};
  ck_assert_int_eq(tn_device_print(weird, buf, sizeof buf), -1);
  TN_EXPECT_ERROR("ValueError", "unknown device type 99");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("dtype");
  TCase *tc = tn_test_case(s, "dtype");
  tcase_add_test(tc, test_parse_print);
  tcase_add_test(tc, test_small_floats);
  tcase_add_test(tc, test_parse_errors);
  tcase_add_test(tc, test_print_edge_cases);
  tcase_add_test(tc, test_device);
  return s;
}

TN_TEST_MAIN(make_suite)
