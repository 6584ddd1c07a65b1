/* test_bridge.c: typed C functions called as packed functions (libffi). */
#include <math.h>
#include <stdbool.h>

#include "tn_test.h"

/* The C functions being wrapped. */
static int64_t add2(int64_t a, int64_t b) { return a + b; }
static int64_t sum8(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e,
                    int64_t f, int64_t g, int64_t h) {
  return a + b + c + d + e + f + g + h;
}
static double fmix(double x, int32_t k) { return x * k; }
static double hyp(double a, double b) { return sqrt(a * a + b * b); }
static void store(void *p, uint32_t v) { *(uint32_t *)p = v; }
static const char *greet(const char *who) {
  static char buf[64];
  snprintf(buf, sizeof buf, "hello, %s", who ? who : "nobody");
  return buf;
}
static const char *null_str(void) { return NULL; }
static TnObject *pick(TnObject *arr, TnAny which) {
  return which.v_int64 ? arr : NULL;
}
static TnObject *make_list(int64_t n) {
  TnObject *l = tn_list_new(NULL, 0);
  for (int64_t i = 0; i < n; i++) {
    TnAny v = tn_any_int(i);
    tn_list_append(l, &v);
  }
  return l; /* a new reference */
}
static TnAny pass_any(TnAny a) {
  TnAny out;
  tn_any_copy(&out, &a); /* the result owns what it returns */
  return out;
}
static int64_t any_type(const TnAny *a) { return a->type_index; }
static int8_t neg8(int8_t x) { return (int8_t)-x; }
static uint16_t u16id(uint16_t x) { return x; }
static bool is_pos(double x) { return x > 0; }
static float half(float x) { return x / 2; }
static DLDataType widen(DLDataType t) {
  t.bits = (uint8_t)(t.bits * 2);
  return t;
}
static DLDevice next_dev(DLDevice d) {
  d.device_id++;
  return d;
}
static int64_t tensor_ndim(DLTensor *t) { return t ? t->ndim : -1; }
static uint64_t big(void) { return UINT64_MAX; }
static int64_t arr_size(TnObject *a) { return tn_array_size(a); }

static TnAny call(TnObject *f, const TnAny *args, int32_t n) {
  TnAny ret = tn_any_none();
  ck_assert_msg(tn_func_call(f, args, n, &ret) == 0, "call failed: %s",
                tn_test_raised_text());
  return ret;
}

static TnObject *wrap(void *fn, const char *sig, const char *name) {
  return TN_NONNULL(tn_func_from_c(fn, sig, name));
}

static void check_integers(void) {
  TnObject *f = wrap((void *)add2, "i64(i64,i64)", "add2");
  TnAny a[] = {tn_any_int(40), tn_any_int(2)};
  ck_assert_int_eq(call(f, a, 2).v_int64, 42);
  TnAny b[] = {tn_any_bool(1), tn_any_int(2)}; /* bool converts to int */
  ck_assert_int_eq(call(f, b, 2).v_int64, 3);
  TnAny ret = tn_any_none();
  TnAny c[] = {tn_any_int(1), tn_any_float(2.0)};
  ck_assert_int_eq(tn_func_call(f, c, 2, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "'add2'", "argument 1", "expected i64",
                  "got float");
  ck_assert_int_eq(tn_func_call(f, a, 3, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "'add2' takes 2 arguments", "i64(i64,i64)",
                  "got 3");
  tn_object_release(f);
  TnObject *g = wrap((void *)sum8, "i64(i64,i64,i64,i64,i64,i64,i64,i64)",
                     "sum8");
  TnAny eight[8];
  for (int i = 0; i < 8; i++) eight[i] = tn_any_int(i + 1);
  ck_assert_int_eq(call(g, eight, 8).v_int64, 36);
  tn_object_release(g);
  TnObject *h = wrap((void *)hyp, "f64(f64, f64)", "hyp");
  TnAny d[] = {tn_any_float(3), tn_any_int(4)}; /* int converts to float */
  ck_assert(call(h, d, 2).v_float64 == 5.0);
  TnAny e[] = {tn_any_float(3), tn_any_cstr("4")};
  ck_assert_int_eq(tn_func_call(h, e, 2, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "'hyp' argument 1", "expected f64",
                  "got const char*");
  tn_object_release(h);
}

/* The same checks with and without the libffi-free fast path. */
START_TEST(test_fast_path) {
  unsetenv("TN_FFI_NO_FAST_PATH");
  check_integers();
}
END_TEST

START_TEST(test_libffi_path) {
  setenv("TN_FFI_NO_FAST_PATH", "1", 1);
  check_integers();
  unsetenv("TN_FFI_NO_FAST_PATH");
}
END_TEST

START_TEST(test_scalar_types) {
  TnObject *f = wrap((void *)fmix, "f64(f64,i32)", "fmix");
  TnAny a[] = {tn_any_float(1.5), tn_any_int(4)};
  ck_assert(call(f, a, 2).v_float64 == 6.0);
  TnAny ret = tn_any_none();
  TnAny big_k[] = {tn_any_float(1.5), tn_any_int(INT64_C(1) << 40)};
  ck_assert_int_eq(tn_func_call(f, big_k, 2, &ret), -1);
  TN_EXPECT_ERROR("OverflowError", "'fmix' argument 1", "does not fit in i32");
  tn_object_release(f);

  TnObject *n = wrap((void *)neg8, "i8(i8)", "neg8");
  TnAny five = tn_any_int(5);
  ck_assert_int_eq(call(n, &five, 1).v_int64, -5); /* narrow, sign-extended */
  TnAny too_big = tn_any_int(300);
  ck_assert_int_eq(tn_func_call(n, &too_big, 1, &ret), -1);
  TN_EXPECT_ERROR("OverflowError", "300 does not fit in i8");
  tn_object_release(n);

  TnObject *u = wrap((void *)u16id, "u16(u16)", NULL);
  TnAny v = tn_any_int(65535);
  ck_assert_int_eq(call(u, &v, 1).v_int64, 65535);
  TnAny neg = tn_any_int(-1);
  ck_assert_int_eq(tn_func_call(u, &neg, 1, &ret), -1);
  TN_EXPECT_ERROR("OverflowError", "-1 does not fit in u16", "C function");
  tn_object_release(u);

  TnObject *p = wrap((void *)is_pos, "bool(f64)", "is_pos");
  TnAny x = tn_any_float(-2);
  TnAny r = call(p, &x, 1);
  ck_assert_int_eq(r.type_index, TN_TYPE_BOOL);
  ck_assert_int_eq(r.v_int64, 0);
  tn_object_release(p);

  TnObject *h = wrap((void *)half, "f32(f32)", "half");
  TnAny three = tn_any_float(3.0);
  ck_assert(call(h, &three, 1).v_float64 == 1.5);
  tn_object_release(h);

  TnObject *b = wrap((void *)big, "u64()", "big");
  ck_assert_int_eq(tn_func_call(b, NULL, 0, &ret), -1);
  TN_EXPECT_ERROR("OverflowError", "'big' returned 18446744073709551615");
  tn_object_release(b);
}
END_TEST

START_TEST(test_pointer_and_string_types) {
  uint32_t cell = 0;
  TnObject *s = wrap((void *)store, "void(ptr,u32)", "store");
  TnAny a[] = {tn_any_ptr(&cell), tn_any_int(77)};
  TnAny r = call(s, a, 2);
  ck_assert_int_eq(r.type_index, TN_TYPE_NONE);
  ck_assert_uint_eq(cell, 77);
  tn_object_release(s);

  TnObject *g = wrap((void *)greet, "str(str)", "greet");
  TnObject *so = TN_NONNULL(tn_string_from_cstr("tvmnode"));
  TnAny forms[] = {tn_any_cstr("world"), tn_any_obj(so), tn_any_none()};
  const char *want[] = {"hello, world", "hello, tvmnode", "hello, nobody"};
  for (int i = 0; i < 3; i++) {
    TnAny out = call(g, &forms[i], 1);
    const char *text;
    TN_OK(tn_any_as_str(&out, &text, NULL));
    ck_assert_str_eq(text, want[i]);
    ck_assert(text != greet("x")); /* copied out of the static buffer */
    tn_any_clear(&out);
  }
  tn_object_release(so);
  tn_object_release(g);
  TnObject *ns = wrap((void *)null_str, "str()", NULL);
  ck_assert_int_eq(call(ns, NULL, 0).type_index, TN_TYPE_NONE);
  tn_object_release(ns);
}
END_TEST

START_TEST(test_object_and_any_types) {
  TnObject *arr = TN_NONNULL(tn_array_new(NULL, 0));
  TnObject *p = wrap((void *)pick, "obj(obj,any)", "pick");
  TnAny a[] = {tn_any_obj(arr), tn_any_int(1)};
  TnAny r = call(p, a, 2);
  ck_assert_ptr_eq(r.v_obj, arr);
  ck_assert_uint_eq(tn_object_strong_count(arr), 2); /* borrowed + taken */
  tn_any_clear(&r);
  a[1] = tn_any_int(0);
  ck_assert_int_eq(call(p, a, 2).type_index, TN_TYPE_NONE);
  tn_object_release(p);

  TnObject *m = wrap((void *)make_list, "obj+(i64)", "make_list");
  TnAny three = tn_any_int(3);
  r = call(m, &three, 1);
  ck_assert_int_eq(r.type_index, TN_TYPE_LIST);
  ck_assert_uint_eq(tn_object_strong_count(r.v_obj), 1); /* taken over */
  ck_assert_int_eq(tn_array_size(r.v_obj), 3);
  tn_any_clear(&r);
  tn_object_release(m);

  TnObject *pa = wrap((void *)pass_any, "any(any)", "pass_any");
  TnAny in = tn_any_obj(arr);
  r = call(pa, &in, 1);
  ck_assert_ptr_eq(r.v_obj, arr);
  tn_any_clear(&r);
  TnAny fl = tn_any_float(0.25);
  ck_assert(call(pa, &fl, 1).v_float64 == 0.25);
  tn_object_release(pa);

  TnObject *at = wrap((void *)any_type, "i64(any*)", "any_type");
  TnAny s = tn_any_cstr("x");
  ck_assert_int_eq(call(at, &s, 1).v_int64, TN_TYPE_RAW_STR);
  tn_object_release(at);

  TnObject *sz = wrap((void *)arr_size, "i64(obj<tn.Array>)", "arr_size");
  ck_assert_int_eq(call(sz, &in, 1).v_int64, 0);
  TnObject *map = TN_NONNULL(tn_map_new(NULL, NULL, 0));
  TnAny mm = tn_any_obj(map), ret = tn_any_none();
  ck_assert_int_eq(tn_func_call(sz, &mm, 1, &ret), -1);
  TN_EXPECT_ERROR("TypeError", "'arr_size' argument 0",
                  "expected obj<tn.Array>", "got tn.Map");
  tn_object_release(map);
  tn_object_release(sz);
  tn_object_release(arr);
}
END_TEST

START_TEST(test_dtype_device_tensor) {
  TnObject *w = wrap((void *)widen, "dtype(dtype)", "widen");
  TnAny s = tn_any_cstr("float16");
  TnAny r = call(w, &s, 1);
  ck_assert_int_eq(r.type_index, TN_TYPE_DATA_TYPE);
  ck_assert_uint_eq(r.v_dtype.bits, 32);
  tn_object_release(w);
  TnObject *n = wrap((void *)next_dev, "device(device)", "next_dev");
  DLDevice d = {kDLCUDA, 1};
  TnAny dv = tn_any_device(d);
  r = call(n, &dv, 1);
  ck_assert_int_eq(r.v_device.device_id, 2);
  ck_assert_int_eq(r.v_device.device_type, kDLCUDA);
  tn_object_release(n);
  TnObject *t = wrap((void *)tensor_ndim, "i64(dltensor)", "tensor_ndim");
  int64_t shape[] = {2, 3, 4};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *tensor = TN_NONNULL(tn_tensor_empty(shape, 3, f32, cpu));
  TnAny ta = tn_any_obj(tensor);
  ck_assert_int_eq(call(t, &ta, 1).v_int64, 3);
  TnAny none = tn_any_none();
  ck_assert_int_eq(call(t, &none, 1).v_int64, -1);
  tn_object_release(tensor);
  tn_object_release(t);
}
END_TEST

static void bad_sig(const char *sig, const char *pos, const char *why) {
  ck_assert_ptr_null(tn_func_from_c((void *)add2, sig, "x"));
  TN_EXPECT_ERROR("ValueError", "tn_func_from_c", sig, pos, why);
}

START_TEST(test_malformed_signatures) {
  bad_sig("i64(i64,,i64)", "position 8", "expected a type");
  bad_sig("i64 i64", "position 4", "expected '('");
  bad_sig("q(i64)", "position 0", "unknown type");
  bad_sig("i64(void)", "position 4", "'void' cannot be an argument");
  bad_sig("i64(obj+)", "position 4", "return types only");
  bad_sig("any*()", "position 0", "cannot be a return type");
  bad_sig("i64(i64", "position 7", "expected ',' or ')'");
  bad_sig("i64(i64) x", "position 9", "unexpected text");
  bad_sig("i64(obj<no.such.Type>)", "position 8", "unknown type key");
  bad_sig("i64(obj<tn.Array)", "position 16", "expected '>'");
  bad_sig("", "position 0", "expected a type");
  ck_assert_ptr_null(tn_func_from_c((void *)add2, NULL, "x"));
  TN_EXPECT_ERROR("ValueError", "'signature' is NULL");
  ck_assert_ptr_null(tn_func_from_c(NULL, "i64()", "x"));
  TN_EXPECT_ERROR("ValueError", "'fnptr' is NULL");
}
END_TEST

START_TEST(test_register_c) {
  TN_OK(tn_func_register_c("test.add2", (void *)add2, "i64(i64,i64)", 0));
  TnObject *f = TN_NONNULL(tn_func_get("test.add2"));
  TnAny a[] = {tn_any_int(1), tn_any_int(2)};
  ck_assert_int_eq(call(f, a, 2).v_int64, 3);
  ck_assert_int_eq(
      tn_func_register_c("test.add2", (void *)add2, "i64(i64,i64)", 0), -1);
  TN_EXPECT_ERROR("ValueError", "already registered");
  ck_assert_int_eq(tn_func_register_c("test.bad", (void *)add2, "i64(", 0), -1);
  TN_EXPECT_ERROR("ValueError", "position 4");
  ck_assert_ptr_null(tn_func_find("test.bad"));
  TN_OK(tn_func_unregister("test.add2"));
  tn_object_release(f);
}
END_TEST

static int packed_nop(void *self, const TnAny *args, int32_t nargs,
                      TnAny *ret) {
  (void)self, (void)args, (void)nargs, (void)ret;
  return 0;
}

static void expect_signature(TnObject *f, const char *want) {
  TnObject *s = TN_NONNULL(tn_func_c_signature(f));
  ck_assert_str_eq(((TnStringObj *)s)->data, want);
  tn_object_release(s);
}

START_TEST(test_c_signature) {
  /* the fast paths, the libffi path, and spaces and aliases normalised */
  TnObject *f = wrap((void *)add2, "i64( i64 , i64 )", "add2");
  expect_signature(f, "i64(i64,i64)");
  tn_object_release(f);
  f = wrap((void *)hyp, "f64(f64,f64)", "hyp");
  expect_signature(f, "f64(f64,f64)");
  tn_object_release(f);
  f = wrap((void *)fmix, "f64(f64,i32)", "fmix");
  expect_signature(f, "f64(f64,i32)");
  tn_object_release(f);
  f = wrap((void *)pick, "obj(obj<tn.Array>,any)", "pick");
  expect_signature(f, "obj(obj<tn.Array>,any)");
  tn_object_release(f);
  f = wrap((void *)store, "void(ptr,u32)", "store");
  expect_signature(f, "void(ptr,u32)");
  tn_object_release(f);
  /* registered by signature: the registry hands back the same function */
  TN_OK(tn_func_register_c("test.sig_add2", (void *)add2, "i64(i64,i64)", 0));
  TnObject *g = TN_NONNULL(tn_func_get("test.sig_add2"));
  expect_signature(g, "i64(i64,i64)");
  tn_object_release(g);
  TN_OK(tn_func_unregister("test.sig_add2"));
  /* a packed function has no known signature, and that is not an error */
  TnObject *p = TN_NONNULL(tn_func_new(packed_nop, NULL, NULL));
  ck_assert_ptr_null(tn_func_c_signature(p));
  ck_assert_ptr_null(tn_error_peek_raised());
  tn_object_release(p);
  /* not a function */
  TnObject *str = TN_NONNULL(tn_string_new("x", 1));
  ck_assert_ptr_null(tn_func_c_signature(str));
  TN_EXPECT_ERROR("TypeError", "tn.Function", "tn.String");
  tn_object_release(str);
  ck_assert_ptr_null(tn_func_c_signature(NULL));
  TN_EXPECT_ERROR("ValueError", "'func' is NULL");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("bridge");
  TCase *tc = tn_test_case(s, "typed-to-packed");
  tcase_add_test(tc, test_fast_path);
  tcase_add_test(tc, test_libffi_path);
  tcase_add_test(tc, test_scalar_types);
  tcase_add_test(tc, test_pointer_and_string_types);
  tcase_add_test(tc, test_object_and_any_types);
  tcase_add_test(tc, test_dtype_device_tensor);
  tcase_add_test(tc, test_malformed_signatures);
  tcase_add_test(tc, test_register_c);
  tcase_add_test(tc, test_c_signature);
  return s;
}

TN_TEST_MAIN(make_suite)
