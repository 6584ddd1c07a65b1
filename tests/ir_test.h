/*
 * ir_test.h: helpers for the IR and pass suites.
 *
 * Every object a test makes through K() goes into a pool the fixture
 * releases before it checks that no object is left alive, so tests read as
 * straight-line graph code. Builders that are expected to fail are called
 * directly and their NULL checked with TN_EXPECT_ERROR.
 */
#ifndef TVMNODE_TESTS_IR_TEST_H_
#define TVMNODE_TESTS_IR_TEST_H_

#include <glib.h>
#include <math.h>
#include <stdbool.h>

#include <tvmnode/tvmnode.h>

#include "tn_test.h"

static GPtrArray *ir_pool_;

static inline void ir_setup(void) {
  tn_test_setup();
  ir_pool_ = g_ptr_array_new_with_free_func((GDestroyNotify)tn_object_release);
}

static inline void ir_teardown(void) {
  g_ptr_array_free(ir_pool_, TRUE);
  ir_pool_ = NULL;
  tn_test_teardown();
}

static inline TCase *ir_case(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, ir_setup, ir_teardown);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return tc;
}

static inline TnObject *ir_keep_(TnObject *o, const char *what,
                                 const char *file, int line) {
  ck_assert_msg(o != NULL, "%s:%d: %s returned NULL: %s", file, line, what,
                tn_test_raised_text());
  g_ptr_array_add(ir_pool_, o);
  return o;
}
/* Assert non-NULL and keep until the end of the test. */
#define K(expr) ir_keep_((expr), #expr, __FILE__, __LINE__)

static inline DLDataType ir_dtype(const char *s) {
  DLDataType d;
  ck_assert_msg(tn_dtype_parse(s, &d) == 0, "bad dtype %s", s);
  return d;
}

/* Tensor[(dims...), dtype]; dims are int */
static inline TnObject *tt(const char *dtype, int32_t nd, ...) {
  int64_t dims[16];
  va_list ap;
  va_start(ap, nd);
  for (int32_t i = 0; i < nd; i++) dims[i] = va_arg(ap, int);
  va_end(ap);
  return K(tn_ir_tensor_type(dims, nd, ir_dtype(dtype)));
}

static inline TnObject *var(const char *name, TnObject *type) {
  return K(tn_ir_var(name, type));
}

/* A type inference function for test operators: the call's type is its
 * first argument's. */
static inline int ir_infer_same_type(void *self, const TnAny *args,
                                     int32_t n, TnAny *ret) {
  (void)self, (void)n;
  TnObject *t = tn_array_at(args[0].v_obj, 0)->v_obj;
  tn_object_retain(t);
  *ret = tn_any_obj(t);
  return 0;
}

/* A call of `op` on `nargs` expressions, then (name, TnAny) attribute pairs
 * ending with NULL. Returns NULL (the error raised) when the builder
 * refuses; see CALL for the asserting form. */
static inline TnObject *ir_call_v(const char *op, int32_t nargs, va_list ap) {
  TnObject *args[16];
  const char *names[16];
  TnAny values[16];
  for (int32_t i = 0; i < nargs; i++) args[i] = va_arg(ap, TnObject *);
  int32_t na = 0;
  for (const char *n = va_arg(ap, const char *); n; n = va_arg(ap, const char *)) {
    names[na] = n;
    values[na++] = va_arg(ap, TnAny);
  }
  return tn_ir_call_op(op, args, nargs, names, values, na);
}

static inline TnObject *try_call(const char *op, int32_t nargs, ...) {
  va_list ap;
  va_start(ap, nargs);
  TnObject *c = ir_call_v(op, nargs, ap);
  va_end(ap);
  return c;
}

static inline TnObject *ir_keep_if(TnObject *o) {
  if (o) g_ptr_array_add(ir_pool_, o);
  return o;
}

#define CALL(op, ...) K(try_call(op, __VA_ARGS__, NULL))
#define TRY_CALL(op, ...) ir_keep_if(try_call(op, __VA_ARGS__, NULL))

/* An int array attribute value (kept in the pool). */
static inline TnAny ints(int32_t n, ...) {
  TnAny items[16];
  va_list ap;
  va_start(ap, n);
  for (int32_t i = 0; i < n; i++) items[i] = tn_any_int(va_arg(ap, int));
  va_end(ap);
  return tn_any_obj(K(tn_array_new(items, n)));
}

/* A float32 constant of the given shape, filled from `values` (or with
 * 0, 1, 2, ... when NULL). */
static inline TnObject *fconst(const float *values, int32_t nd, ...) {
  int64_t dims[16], n = 1;
  va_list ap;
  va_start(ap, nd);
  for (int32_t i = 0; i < nd; i++) n *= dims[i] = va_arg(ap, int);
  va_end(ap);
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = K(tn_tensor_empty(dims, nd, ir_dtype("float32"), cpu));
  float *d = tn_tensor_dltensor(t)->data;
  for (int64_t i = 0; i < n; i++) d[i] = values ? values[i] : (float)i;
  return K(tn_ir_constant(t));
}

static inline TnObject *scalar(double v, const char *dtype) {
  return K(tn_ir_scalar(v, ir_dtype(dtype)));
}

/* The type of `e` in the text format ("?" when it has none). */
static inline const char *type_text(const TnObject *e) {
  static char buf[512];
  TnObject *t = tn_ir_checked_type(e);
  if (t == NULL) return "?";
  TnObject *s = tn_ir_astext(t, 0);
  ck_assert_msg(s != NULL, "printing a type: %s", tn_test_raised_text());
  g_strlcpy(buf, ((TnStringObj *)s)->data, sizeof buf);
  tn_object_release(s);
  return buf;
}
#define ck_assert_type(e, text) ck_assert_str_eq(type_text(e), text)

/* Structural equality with the first differing path in the message. */
static inline void ir_assert_sequal_(TnObject *a, TnObject *b, bool want,
                                     const char *file, int line) {
  TnAny x = tn_any_obj(a), y = tn_any_obj(b);
  TnObject *path = NULL;
  int eq = tn_structural_equal_path(&x, &y, 0, &path);
  ck_assert_msg(eq >= 0, "%s:%d: structural_equal failed: %s", file, line,
                tn_test_raised_text());
  ck_assert_msg((eq == 1) == want, "%s:%d: expected %s, differ at %s", file,
                line, want ? "equal" : "different",
                path ? ((TnStringObj *)path)->data : "(nowhere)");
  tn_object_release(path);
}
#define ck_assert_sequal(a, b) ir_assert_sequal_((a), (b), true, __FILE__, __LINE__)
#define ck_assert_not_sequal(a, b) \
  ir_assert_sequal_((a), (b), false, __FILE__, __LINE__)

/* The module's "main" (kept). */
static inline TnObject *main_of(TnObject *mod) {
  return K(tn_ir_module_get(mod, "main"));
}

/* A module from an expression (kept). */
static inline TnObject *module_of(TnObject *expr) {
  return K(tn_ir_module_from_expr(expr));
}

/* Text of a module or expression (kept as a tn.String; returns the chars). */
static inline const char *astext(TnObject *node, int meta) {
  return ((TnStringObj *)K(tn_ir_astext(node, meta)))->data;
}

/* Float32 elements of a constant. */
static inline const float *const_data(const TnObject *c) {
  ck_assert_msg(tn_object_is_instance(c, tn_ir_types()->constant),
                "expected an ir.Constant, got %s", tn_object_type_key(c));
  return tn_tensor_dltensor(((TnIrConstant *)c)->data)->data;
}

#endif /* TVMNODE_TESTS_IR_TEST_H_ */
