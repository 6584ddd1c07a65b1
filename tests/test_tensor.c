/* test_tensor.c: tn.Tensor storage, views and DLPack exchange. */
#include "tn_test.h"

static int is_contiguous(const TnObject *t) {
  int c = -1;
  TN_OK(tn_tensor_is_contiguous(t, &c));
  return c;
}

static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDevice kCPU = {kDLCPU, 0};

START_TEST(test_empty_is_aligned_zeroed_compact) {
  int64_t shape[] = {2, 3, 4};
  TnObject *t = TN_NONNULL(tn_tensor_empty(shape, 3, kF32, kCPU));
  DLTensor *dl = TN_NONNULL(tn_tensor_dltensor(t));
  ck_assert_ptr_eq(dl, &((TnTensorObj *)t)->dl);
  ck_assert_uint_eq((uintptr_t)dl->data % TN_TENSOR_ALIGNMENT, 0);
  ck_assert_int_eq(dl->ndim, 3);
  ck_assert_int_eq(dl->shape[2], 4);
  ck_assert_int_eq(dl->strides[0], 12);
  ck_assert_int_eq(dl->strides[1], 4);
  ck_assert_int_eq(dl->strides[2], 1);
  ck_assert_int_eq(tn_tensor_nbytes(t), 2 * 3 * 4 * 4);
  ck_assert(is_contiguous(t));
  float *f = dl->data;
  for (int i = 0; i < 24; i++) ck_assert(f[i] == 0.0f);
  f[23] = 1.0f; /* the whole range is writable */
  tn_object_release(t);

  TnObject *scalar = TN_NONNULL(tn_tensor_empty(NULL, 0, kF32, kCPU));
  ck_assert_int_eq(tn_tensor_nbytes(scalar), 4);
  tn_object_release(scalar);
}
END_TEST

START_TEST(test_views) {
  int64_t shape[] = {4, 6};
  TnObject *base = TN_NONNULL(tn_tensor_empty(shape, 2, kF32, kCPU));
  float *data = tn_tensor_dltensor(base)->data;
  for (int i = 0; i < 24; i++) data[i] = (float)i;
  /* Transposed view: shape (6, 4), strides (1, 6). */
  int64_t tshape[] = {6, 4}, tstrides[] = {1, 6};
  TnObject *tv = TN_NONNULL(tn_tensor_view(base, tshape, tstrides, 2, kF32, 0));
  ck_assert(!is_contiguous(tv));
  /* No elements: compact whatever the strides (exporters give 0). */
  int64_t eshape[] = {0, 4}, estrides[] = {0, 0};
  TnObject *ev = TN_NONNULL(tn_tensor_view(base, eshape, estrides, 2, kF32, 0));
  ck_assert(is_contiguous(ev));
  tn_object_release(ev);
  DLTensor *dl = tn_tensor_dltensor(tv);
  float *p = (float *)((char *)dl->data + dl->byte_offset);
  ck_assert(p[2 * dl->strides[0] + 3 * dl->strides[1]] == 3 * 6 + 2);
  /* Row 2 as a view via byte_offset. */
  int64_t rshape[] = {6};
  TnObject *row = TN_NONNULL(tn_tensor_view(base, rshape, NULL, 1, kF32, 2 * 6 * 4));
  dl = tn_tensor_dltensor(row);
  ck_assert(((float *)((char *)dl->data + dl->byte_offset))[5] == 17.0f);
  /* Views keep the base alive. */
  ck_assert_uint_eq(tn_object_strong_count(base), 3);
  tn_object_release(base);
  ck_assert(((float *)((char *)dl->data + dl->byte_offset))[0] == 12.0f);
  /* A view of a view checks against the original storage. */
  TnObject *vv = TN_NONNULL(tn_tensor_view(row, rshape, NULL, 1, kF32, 0));
  tn_object_release(vv);
  tn_object_release(tv);
  tn_object_release(row);
}
END_TEST

START_TEST(test_view_bounds) {
  int64_t shape[] = {4, 6};
  TnObject *base = TN_NONNULL(tn_tensor_empty(shape, 2, kF32, kCPU));
  int64_t big[] = {5, 6};
  ck_assert_ptr_null(tn_tensor_view(base, big, NULL, 2, kF32, 0));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_view", "outside", "96 bytes");
  int64_t row[] = {6};
  ck_assert_ptr_null(tn_tensor_view(base, row, NULL, 1, kF32, 4 * 6 * 4));
  TN_EXPECT_ERROR("ValueError", "byte_offset 96");
  int64_t neg_stride[] = {-1};
  ck_assert_ptr_null(tn_tensor_view(base, row, neg_stride, 1, kF32, 0));
  TN_EXPECT_ERROR("ValueError", "outside");
  /* A negative stride that stays inside is fine (a reversed row). */
  TnObject *rev = TN_NONNULL(tn_tensor_view(base, row, neg_stride, 1, kF32, 20));
  tn_object_release(rev);
  ck_assert_ptr_null(tn_tensor_view(base, row, NULL, 1, kF32, UINT64_MAX));
  TN_EXPECT_ERROR("ValueError", "byte_offset");
  int64_t huge_stride[] = {INT64_MAX / 2};
  int64_t two[] = {2};
  ck_assert_ptr_null(tn_tensor_view(base, two, huge_stride, 1, kF32, 0));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_view");
  /* Empty views are allowed anywhere in range. */
  int64_t zero[] = {0};
  TnObject *e = TN_NONNULL(tn_tensor_view(base, zero, NULL, 1, kF32, 0));
  tn_object_release(e);
  tn_object_release(base);
}
END_TEST

START_TEST(test_bad_input) {
  int64_t shape[] = {2};
  DLDevice gpu = {kDLCUDA, 0};
  ck_assert_ptr_null(tn_tensor_empty(shape, 1, kF32, gpu));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_empty", "device type 2");
  int64_t neg[] = {-2};
  ck_assert_ptr_null(tn_tensor_empty(neg, 1, kF32, kCPU));
  TN_EXPECT_ERROR("ValueError", "dimension 0", "-2");
  DLDataType nothing = {kDLFloat, 0, 1};
  ck_assert_ptr_null(tn_tensor_empty(shape, 1, nothing, kCPU));
  TN_EXPECT_ERROR("ValueError", "0 bits");
  int64_t huge[] = {INT64_C(1) << 62, 8};
  ck_assert_ptr_null(tn_tensor_empty(huge, 2, kF32, kCPU));
  TN_EXPECT_ERROR("OverflowError", "tn_tensor_empty");
  ck_assert_ptr_null(tn_tensor_empty(NULL, 2, kF32, kCPU));
  TN_EXPECT_ERROR("ValueError", "'shape' is NULL");
  TnObject *s = TN_NONNULL(tn_string_from_cstr("not a tensor"));
  ck_assert_ptr_null(tn_tensor_dltensor(s));
  TN_EXPECT_ERROR("TypeError", "tn_tensor_dltensor", "tn.Tensor", "tn.String");
  ck_assert_ptr_null(tn_tensor_view(s, shape, NULL, 1, kF32, 0));
  TN_EXPECT_ERROR("TypeError", "tn_tensor_view");
  int contiguous = 7;
  ck_assert_int_eq(tn_tensor_is_contiguous(s, &contiguous), -1);
  ck_assert_int_eq(contiguous, 7); /* untouched on error */
  TN_EXPECT_ERROR("TypeError", "tn_tensor_is_contiguous", "tn.String");
  ck_assert_ptr_null(tn_tensor_to_dlpack(NULL));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_to_dlpack");
  ck_assert_ptr_null(tn_tensor_from_dlpack(NULL));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_from_dlpack");
  tn_object_release(s);
}
END_TEST

/* --- DLPack -------------------------------------------------------------- */

START_TEST(test_export_import_roundtrip) {
  int64_t shape[] = {3, 5};
  TnObject *t = TN_NONNULL(tn_tensor_empty(shape, 2, kF32, kCPU));
  DLManagedTensorVersioned *m = TN_NONNULL(tn_tensor_to_dlpack(t));
  ck_assert_uint_eq(m->version.major, 1);
  ck_assert_uint_eq(tn_object_strong_count(t), 2); /* held by the export */
  ck_assert_ptr_eq(m->dl_tensor.data, tn_tensor_dltensor(t)->data);
  ck_assert_int_eq(m->dl_tensor.shape[1], 5);
  /* Importing our own export wraps it without copying. */
  TnObject *back = TN_NONNULL(tn_tensor_from_dlpack(m));
  ck_assert_ptr_eq(tn_tensor_dltensor(back)->data, tn_tensor_dltensor(t)->data);
  tn_object_release(t);
  ck_assert_int_eq(tn_tensor_nbytes(back), 60);
  tn_object_release(back); /* runs the export's deleter, freeing t */

  TnObject *t2 = TN_NONNULL(tn_tensor_empty(shape, 2, kF32, kCPU));
  DLManagedTensor *lm = TN_NONNULL(tn_tensor_to_dlpack_legacy(t2));
  TnObject *back2 = TN_NONNULL(tn_tensor_from_dlpack_legacy(lm));
  tn_object_release(t2);
  tn_object_release(back2);
}
END_TEST

/* A foreign producer: its memory and deleter are its own. */
typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape[2];
  float data[6];
  int *deleted;
} Producer;

static void producer_delete(DLManagedTensorVersioned *m) {
  Producer *p = (Producer *)m;
  (*p->deleted)++;
  free(p);
}

static Producer *producer_new(int *deleted) {
  Producer *p = calloc(1, sizeof *p);
  p->deleted = deleted;
  p->shape[0] = 2;
  p->shape[1] = 3;
  p->m.version.major = 1;
  p->m.deleter = producer_delete;
  p->m.dl_tensor.data = p->data;
  p->m.dl_tensor.device = kCPU;
  p->m.dl_tensor.ndim = 2;
  p->m.dl_tensor.dtype = kF32;
  p->m.dl_tensor.shape = p->shape;
  p->m.dl_tensor.strides = NULL; /* compact */
  for (int i = 0; i < 6; i++) p->data[i] = (float)i;
  return p;
}

START_TEST(test_import_foreign) {
  int deleted = 0;
  Producer *p = producer_new(&deleted);
  p->m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  TnObject *t = TN_NONNULL(tn_tensor_from_dlpack(&p->m));
  DLTensor *dl = tn_tensor_dltensor(t);
  ck_assert_ptr_eq(dl->data, p->data); /* zero copy */
  ck_assert_ptr_nonnull(dl->strides);  /* filled in */
  ck_assert_int_eq(dl->strides[0], 3);
  ck_assert(((float *)dl->data)[4] == 4.0f);
  /* Re-export keeps the read-only flag. */
  DLManagedTensorVersioned *again = TN_NONNULL(tn_tensor_to_dlpack(t));
  ck_assert_uint_eq(again->flags & DLPACK_FLAG_BITMASK_READ_ONLY,
                    DLPACK_FLAG_BITMASK_READ_ONLY);
  /* Read-only, and so is a view of it; a tensor of our own is not. */
  int ro = -1;
  TN_OK(tn_tensor_is_readonly(t, &ro));
  ck_assert_int_eq(ro, 1);
  int64_t two[] = {2};
  TnObject *v = TN_NONNULL(tn_tensor_view(t, two, NULL, 1, kF32, 8));
  TN_OK(tn_tensor_is_readonly(v, &ro));
  ck_assert_int_eq(ro, 1);
  TnObject *own = TN_NONNULL(tn_tensor_empty(two, 1, kF32, kCPU));
  TN_OK(tn_tensor_is_readonly(own, &ro));
  ck_assert_int_eq(ro, 0);
  TnObject *s = TN_NONNULL(tn_string_new("x", 1));
  ck_assert_int_eq(tn_tensor_is_readonly(s, &ro), -1);
  TN_EXPECT_ERROR("TypeError", "tn_tensor_is_readonly");
  ck_assert_int_eq(tn_tensor_is_readonly(own, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "readonly");
  tn_object_release(s);
  tn_object_release(own);
  tn_object_release(v);
  /* A view of the imported tensor is bounded by the producer's extent. */
  int64_t too_big[] = {7};
  ck_assert_ptr_null(tn_tensor_view(t, too_big, NULL, 1, kF32, 0));
  TN_EXPECT_ERROR("ValueError", "outside");
  tn_object_release(t);
  ck_assert_int_eq(deleted, 0); /* the re-export still holds it */
  again->deleter(again);
  ck_assert_int_eq(deleted, 1);
}
END_TEST

START_TEST(test_import_failure_calls_deleter) {
  int deleted = 0;
  Producer *p = producer_new(&deleted);
  p->m.version.major = 2;
  ck_assert_ptr_null(tn_tensor_from_dlpack(&p->m));
  TN_EXPECT_ERROR("ValueError", "major version 2");
  ck_assert_int_eq(deleted, 1); /* stolen even though it failed */

  p = producer_new(&deleted);
  p->shape[1] = -3;
  ck_assert_ptr_null(tn_tensor_from_dlpack(&p->m));
  TN_EXPECT_ERROR("ValueError", "dimension 1");
  ck_assert_int_eq(deleted, 2);

  p = producer_new(&deleted);
  p->m.dl_tensor.ndim = -1;
  ck_assert_ptr_null(tn_tensor_from_dlpack(&p->m));
  TN_EXPECT_ERROR("ValueError", "ndim -1");
  ck_assert_int_eq(deleted, 3);
}
END_TEST

START_TEST(test_small_float_dlpack) {
  /* float8 crosses DLPack with its code; a whole-byte pair of float4s too */
  int64_t shape[] = {2, 3};
  DLDataType f8 = {kDLFloat8_e4m3fn, 8, 1};
  TnObject *t = TN_NONNULL(tn_tensor_empty(shape, 2, f8, kCPU));
  ck_assert_int_eq(tn_tensor_nbytes(t), 6);
  DLManagedTensorVersioned *m = TN_NONNULL(tn_tensor_to_dlpack(t));
  ck_assert_uint_eq(m->version.minor, 1);
  ck_assert_uint_eq(m->dl_tensor.dtype.code, kDLFloat8_e4m3fn);
  ck_assert_uint_eq(m->dl_tensor.dtype.bits, 8);
  TnObject *back = TN_NONNULL(tn_tensor_from_dlpack(m));
  ck_assert_uint_eq(tn_tensor_dltensor(back)->dtype.code, kDLFloat8_e4m3fn);
  tn_object_release(back);
  DLDataType f4x2 = {kDLFloat4_e2m1fn, 4, 2};
  TnObject *pair = TN_NONNULL(tn_tensor_empty(shape, 2, f4x2, kCPU));
  ck_assert_int_eq(tn_tensor_nbytes(pair), 6);
  DLManagedTensor *lm = TN_NONNULL(tn_tensor_to_dlpack_legacy(pair));
  back = TN_NONNULL(tn_tensor_from_dlpack_legacy(lm));
  tn_object_release(back);
  tn_object_release(pair);

  /* sub-byte elements are packed in DLPack and a byte each here: refused
   * both ways, naming the dtype, before anything is made */
  DLDataType f4 = {kDLFloat4_e2m1fn, 4, 1}, i4x3 = {kDLInt, 4, 3},
             f6 = {kDLFloat6_e2m3fn, 6, 1};
  TnObject *sub = TN_NONNULL(tn_tensor_empty(shape, 2, f4, kCPU));
  ck_assert_int_eq(tn_tensor_nbytes(sub), 6); /* one element a byte */
  ck_assert_ptr_null(tn_tensor_to_dlpack(sub));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_to_dlpack", "float4_e2m1fn",
                  "packed");
  ck_assert_ptr_null(tn_tensor_to_dlpack_legacy(sub));
  TN_EXPECT_ERROR("ValueError", "tn_tensor_to_dlpack_legacy", "4 bits");
  ck_assert_int_eq(tn_object_strong_count(sub), 1);
  tn_object_release(sub);
  DLDataType refused[] = {f4, i4x3, f6};
  for (int i = 0; i < 3; i++) {
    int deleted = 0;
    Producer *p = producer_new(&deleted);
    p->m.dl_tensor.dtype = refused[i];
    ck_assert_ptr_null(tn_tensor_from_dlpack(&p->m));
    TN_EXPECT_ERROR("ValueError", "tn_tensor_from_dlpack", "packed");
    ck_assert_int_eq(deleted, 1);
  }
  tn_object_release(t);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tn_test_case(s, "storage");
  tcase_add_test(tc, test_empty_is_aligned_zeroed_compact);
  tcase_add_test(tc, test_views);
  tcase_add_test(tc, test_view_bounds);
  tcase_add_test(tc, test_bad_input);
  tc = tn_test_case(s, "dlpack");
  tcase_add_test(tc, test_export_import_roundtrip);
  tcase_add_test(tc, test_import_foreign);
  tcase_add_test(tc, test_import_failure_calls_deleter);
  tcase_add_test(tc, test_small_float_dlpack);
  return s;
}

TN_TEST_MAIN(make_suite)
