/*
 * test_crt_params.c: parameter blobs (tvmnode/crt/params.h) verified and
 * bound, over a descriptor written here by hand: "scale" computes
 * y[i] = x[i] * w[i] + w[4 + i] from an int32 constant pool of 32 bytes
 * (alignment 8), so the outputs say which weights are bound. The blobs are
 * built here in the parameter file format (docs/mlf.md) and checked against
 * a CRC-32 reference value. Hostile blobs: cut at every length, every byte
 * flipped three ways, sizes and counts near 2^32 and 2^64, each in a
 * buffer of exactly its size so ASan and valgrind see any read past it.
 * The suite links the crt alone, as a firmware would.
 */
#include <stdlib.h>
#include <string.h>

#include <tvmnode/crt/model.h>
#include <tvmnode/crt/params.h>

#include "kernel_test.h"

static int32_t scale_run(void *const *inputs, void *const *outputs,
                         void *const *workspace, void *const *constants,
                         void *const *devices) {
  (void)workspace, (void)devices;
  const int32_t *x = inputs[0], *w = constants[0];
  int32_t *y = outputs[0];
  for (int i = 0; i < 4; i++) y[i] = x[i] * w[i] + w[4 + i];
  return TN_CRT_OK;
}

static const int32_t shape4[] = {4};
static const TnCrtTensorInfo scale_in[] = {
    {"x", TN_CRT_I32, 1, shape4, 16, 0.0f, 0, -1, 0}};
static const TnCrtTensorInfo scale_out[] = {
    {"y", TN_CRT_I32, 1, shape4, 16, 0.0f, 0, -1, 0}};
static const TnCrtPoolInfo scale_ws[] = {{"ws", 16, 8}};
static const TnCrtPoolInfo scale_cp[] = {{"constants", 32, 8}};
static const int32_t built_in[8] = {1, 1, 1, 1, 0, 0, 0, 0};
static const uint8_t *const scale_cp_data[] = {(const uint8_t *)built_in};
static const TnCrtModel scale = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "scale", "test",
    1, 1, scale_in, scale_out,
    1, scale_ws,
    1, scale_cp, scale_cp_data,
    0, 0,
    4, 32, scale_run};
#define SCALE_ID UINT64_C(0x0123456789abcdef)
static const TnCrtParamsLayout layout = {
    TN_CRT_PARAMS_LAYOUT_MAGIC, TN_CRT_PARAMS_VERSION, SCALE_ID, &scale};

/* ---- blobs ---------------------------------------------------------------- */

typedef struct {
  uint8_t *p;
  size_t n;
} Buf;

static void put(Buf *b, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; k++) b->p[b->n++] = (uint8_t)(v >> (8 * k));
}

static void put_entry(Buf *b, const char *name, const void *data,
                      uint64_t n) {
  put(b, strlen(name), 4);
  memcpy(b->p + b->n, name, strlen(name));
  b->n += strlen(name);
  put(b, 1, 1), put(b, 8, 1), put(b, 1, 2); /* uint8 */
  put(b, 1, 4);                             /* ndim */
  put(b, n, 8), put(b, n, 8);               /* shape, data bytes */
  memcpy(b->p + b->n, data, (size_t)n);
  b->n += (size_t)n;
}

static void put_crc(Buf *b) { put(b, tn_crt_crc32(0, b->p, b->n), 4); }

/* A blob for "scale" (or another id / layout version / pool) holding
 * `w`, its pool image aligned to 8 from the blob's start; written into
 * `out` (at least 256 bytes), its size returned. */
static size_t make_blob(uint8_t *out, uint64_t id, uint32_t version,
                        const int32_t *w, uint32_t pool_bytes,
                        uint32_t weights_version) {
  Buf b = {out, 0};
  memcpy(b.p, "TNPARAMS", 8);
  b.n = 8;
  put(&b, 1, 4), put(&b, 3, 4);
  uint8_t idb[16];
  Buf ib = {idb, 0};
  put(&ib, id, 8), put(&ib, version, 4), put(&ib, weights_version, 4);
  put_entry(&b, "tvmnode.model_id", idb, 16);
  /* the pad entry's header is 39 bytes; the pool entry's 37 */
  size_t data_at = b.n + 39 + 37;
  uint8_t zeros[8] = {0};
  put_entry(&b, "tvmnode.pad", zeros, (8 - data_at % 8) % 8);
  put_entry(&b, "constants", w, pool_bytes);
  ck_assert_uint_eq((uintptr_t)(b.n - pool_bytes) % 8, 0);
  put_crc(&b);
  return b.n;
}

static const int32_t set_a[8] = {2, 3, 4, 5, 10, 20, 30, 40};
static const int32_t set_b[8] = {-1, -2, -3, -4, 7, 7, 7, 7};

/* A copy of `n` bytes in a heap block of exactly that size. */
static uint8_t *exact(const void *src, size_t n) {
  uint8_t *p = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(p);
  if (n) memcpy(p, src, n);
  return p;
}

typedef struct {
  _Alignas(16) uint8_t ws[16];
  _Alignas(16) int32_t ram[8];
  _Alignas(16) int32_t x[4], y[4];
  _Alignas(16) uint8_t blob_a[256];
  _Alignas(16) uint8_t blob_b[256];
  _Alignas(16) uint8_t shifted[260];
  size_t na, nb;
} Mem;

static void mem_init(Mem *m) {
  memset(m, 0, sizeof *m);
  m->na = make_blob(m->blob_a, SCALE_ID, 1, set_a, 32, 7);
  m->nb = make_blob(m->blob_b, SCALE_ID, 1, set_b, 32, 8);
  for (int i = 0; i < 4; i++) m->x[i] = i + 1;
}

static void expect_y(TnCrtInstance *inst, Mem *m, const int32_t *w) {
  KT_CHECK_OK(tn_crt_run(inst));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(m->y[i], m->x[i] * w[i] + w[4 + i]);
}

static void ready(TnCrtInstance *inst, Mem *m) {
  KT_CHECK_OK(tn_crt_bind_input(inst, 0, m->x, sizeof m->x));
  KT_CHECK_OK(tn_crt_bind_output(inst, 0, m->y, sizeof m->y));
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(test_crc_reference) {
  ck_assert_uint_eq(tn_crt_crc32(0, "123456789", 9), 0xCBF43926u);
  ck_assert_uint_eq(tn_crt_crc32(0, "", 0), 0);
  /* in pieces */
  ck_assert_uint_eq(tn_crt_crc32(tn_crt_crc32(0, "1234", 4), "56789", 5),
                    0xCBF43926u);
}
END_TEST

START_TEST(test_verify_reports) {
  Mem m;
  mem_init(&m);
  TnCrtParamsInfo info;
  KT_CHECK_OK(tn_crt_params_verify(&layout, m.blob_a, m.na, &info));
  ck_assert_uint_eq(info.model_id, SCALE_ID);
  ck_assert_uint_eq(info.weights_version, 7);
  ck_assert_uint_eq(info.pool_size, 32);
  ck_assert_int_eq(info.copied, -1);
  ck_assert(info.pool_data > m.blob_a && info.pool_data + 32 + 4 == m.blob_a + m.na);
  ck_assert_int_eq(memcmp(info.pool_data, set_a, 32), 0);
  KT_CHECK_OK(tn_crt_params_verify(&layout, m.blob_b, m.nb, NULL));
}
END_TEST

START_TEST(test_init_bind_swap_in_place) {
  Mem m;
  mem_init(&m);
  TnCrtInstance inst;
  TnCrtPool ws = {m.ws, sizeof m.ws};
  TnCrtParamsInfo info;
  /* no RAM pool: an aligned blob needs none */
  KT_CHECK_OK(tn_crt_params_init(&inst, &layout, &ws, 1, m.blob_a, m.na, NULL,
                                 0, &info));
  ck_assert_int_eq(info.copied, 0);
  ready(&inst, &m);
  expect_y(&inst, &m, set_a);
  KT_CHECK_OK(tn_crt_params_bind(&inst, &layout, m.blob_b, m.nb, NULL, 0,
                                 &info));
  ck_assert_int_eq(info.copied, 0);
  ck_assert_uint_eq(info.weights_version, 8);
  expect_y(&inst, &m, set_b);
  /* the blob is read in place: a change to it shows (the application's
   * promise is to leave it alone) */
  ((int32_t *)(void *)(m.blob_b + m.nb - 4 - 32))[4] = 100;
  KT_CHECK_OK(tn_crt_run(&inst));
  ck_assert_int_eq(m.y[0], -1 * 1 + 100);
  /* an instance made by tn_crt_instance_init (built-in weights) takes a
   * blob too */
  TnCrtPool cp = {m.ram, sizeof m.ram};
  KT_CHECK_OK(tn_crt_instance_init(&inst, &scale, &ws, 1, &cp, 1));
  ready(&inst, &m);
  expect_y(&inst, &m, built_in);
  KT_CHECK_OK(tn_crt_params_bind(&inst, &layout, m.blob_a, m.na, NULL, 0,
                                 &info));
  expect_y(&inst, &m, set_a);
}
END_TEST

START_TEST(test_misaligned_blob_is_copied) {
  Mem m;
  mem_init(&m);
  memcpy(m.shifted + 1, m.blob_b, m.nb); /* pool image now at 1 mod 8 */
  TnCrtInstance inst;
  TnCrtPool ws = {m.ws, sizeof m.ws};
  TnCrtParamsInfo info;
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &ws, 1, m.shifted + 1, m.nb,
                               NULL, 0, &info), TN_CRT_POOL_MISALIGNED);
  EXPECT_ST(tn_crt_last_error(&inst), TN_CRT_POOL_MISALIGNED);
  EXPECT_ST(tn_crt_run(&inst), TN_CRT_MODEL_MISMATCH);
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &ws, 1, m.shifted + 1, m.nb,
                               m.ram, 31, &info), TN_CRT_POOL_TOO_SMALL);
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &ws, 1, m.shifted + 1, m.nb,
                               (uint8_t *)m.ram + 4, 28, &info),
            TN_CRT_POOL_TOO_SMALL);
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &ws, 1, m.shifted + 1, m.nb,
                               (uint8_t *)m.ram + 4, 32, &info),
            TN_CRT_POOL_MISALIGNED);
  for (int i = 0; i < 8; i++) ck_assert_int_eq(m.ram[i], 0); /* untouched */
  KT_CHECK_OK(tn_crt_params_init(&inst, &layout, &ws, 1, m.shifted + 1, m.nb,
                                 m.ram, sizeof m.ram, &info));
  ck_assert_int_eq(info.copied, 1);
  ready(&inst, &m);
  expect_y(&inst, &m, set_b);
  /* the copy is the instance's: the blob may go */
  memset(m.shifted, 0, sizeof m.shifted);
  expect_y(&inst, &m, set_b);
  /* bind: an aligned blob in place, a misaligned one copied */
  KT_CHECK_OK(tn_crt_params_bind(&inst, &layout, m.blob_a, m.na, m.ram,
                                 sizeof m.ram, &info));
  ck_assert_int_eq(info.copied, 0);
  expect_y(&inst, &m, set_a);
  memcpy(m.shifted + 3, m.blob_b, m.nb);
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, m.shifted + 3, m.nb, NULL, 0,
                               &info), TN_CRT_POOL_MISALIGNED);
  ck_assert_int_eq(info.copied, -1);
  EXPECT_ST(tn_crt_last_error(&inst), TN_CRT_POOL_MISALIGNED);
  expect_y(&inst, &m, set_a); /* kept */
  KT_CHECK_OK(tn_crt_params_bind(&inst, &layout, m.shifted + 3, m.nb, m.ram,
                                 sizeof m.ram, &info));
  ck_assert_int_eq(info.copied, 1);
  expect_y(&inst, &m, set_b);
}
END_TEST

START_TEST(test_refusals_keep_the_weights) {
  Mem m;
  mem_init(&m);
  TnCrtInstance inst;
  TnCrtPool ws = {m.ws, sizeof m.ws};
  KT_CHECK_OK(tn_crt_params_init(&inst, &layout, &ws, 1, m.blob_a, m.na, NULL,
                                 0, NULL));
  ready(&inst, &m);
  _Alignas(16) uint8_t other[256];
  /* another model */
  size_t n = make_blob(other, SCALE_ID ^ 1, 1, set_b, 32, 0);
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, other, n, NULL, 0, NULL),
            TN_CRT_PARAMS_WRONG_MODEL);
  EXPECT_ST(tn_crt_last_error(&inst), TN_CRT_PARAMS_WRONG_MODEL);
  /* another layout version */
  n = make_blob(other, SCALE_ID, 2, set_b, 32, 0);
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, other, n, NULL, 0, NULL),
            TN_CRT_PARAMS_WRONG_MODEL);
  /* a pool image of another size */
  n = make_blob(other, SCALE_ID, 1, set_b, 24, 0);
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, other, n, NULL, 0, NULL),
            TN_CRT_PARAMS_WRONG_MODEL);
  /* a bad checksum */
  memcpy(other, m.blob_b, m.nb);
  other[m.nb - 10] ^= 0x40;
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, other, m.nb, NULL, 0, NULL),
            TN_CRT_PARAMS_CHECKSUM);
  /* cut short */
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, m.blob_b, m.nb - 1, NULL, 0,
                               NULL), TN_CRT_PARAMS_TRUNCATED);
  /* not a blob at all */
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, set_a, sizeof set_a, NULL, 0,
                               NULL), TN_CRT_PARAMS_INVALID);
  expect_y(&inst, &m, set_a);
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_PARAMS_INVALID), "PARAMS_INVALID");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_PARAMS_TRUNCATED),
                   "PARAMS_TRUNCATED");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_PARAMS_CHECKSUM),
                   "PARAMS_CHECKSUM");
  ck_assert_str_eq(tn_crt_status_name(TN_CRT_PARAMS_WRONG_MODEL),
                   "PARAMS_WRONG_MODEL");
}
END_TEST

START_TEST(test_bad_arguments) {
  Mem m;
  mem_init(&m);
  TnCrtInstance inst;
  TnCrtPool ws = {m.ws, sizeof m.ws};
  EXPECT_ST(tn_crt_params_verify(NULL, m.blob_a, m.na, NULL),
            TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_params_verify(&layout, NULL, m.na, NULL),
            TN_CRT_NULL_POINTER);
  TnCrtParamsLayout bad = layout;
  bad.magic ^= 1;
  EXPECT_ST(tn_crt_params_verify(&bad, m.blob_a, m.na, NULL),
            TN_CRT_MODEL_MISMATCH);
  bad = layout;
  bad.model = NULL;
  EXPECT_ST(tn_crt_params_verify(&bad, m.blob_a, m.na, NULL),
            TN_CRT_MODEL_MISMATCH);
  /* a model without a constant pool */
  TnCrtModel flat = scale;
  flat.num_constant_pools = 0;
  bad = layout;
  bad.model = &flat;
  EXPECT_ST(tn_crt_params_verify(&bad, m.blob_a, m.na, NULL),
            TN_CRT_MODEL_MISMATCH);
  EXPECT_ST(tn_crt_params_init(NULL, &layout, &ws, 1, m.blob_a, m.na, NULL, 0,
                               NULL), TN_CRT_NULL_POINTER);
  EXPECT_ST(tn_crt_params_bind(NULL, &layout, m.blob_a, m.na, NULL, 0, NULL),
            TN_CRT_NULL_POINTER);
  /* a workspace too small: refused before the RAM pool is written */
  memcpy(m.shifted + 1, m.blob_b, m.nb);
  TnCrtPool small = {m.ws, 8};
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &small, 1, m.shifted + 1, m.nb,
                               m.ram, sizeof m.ram, NULL),
            TN_CRT_POOL_TOO_SMALL);
  for (int i = 0; i < 8; i++) ck_assert_int_eq(m.ram[i], 0);
  EXPECT_ST(tn_crt_params_init(&inst, &layout, &ws, 2, m.blob_a, m.na, NULL,
                               0, NULL), TN_CRT_INVALID_ARGUMENT);
  /* an instance never initialised, or of another model */
  TnCrtInstance zero;
  memset(&zero, 0, sizeof zero);
  EXPECT_ST(tn_crt_params_bind(&zero, &layout, m.blob_a, m.na, NULL, 0, NULL),
            TN_CRT_MODEL_MISMATCH);
  TnCrtModel twin = scale;
  TnCrtPool cp = {m.ram, sizeof m.ram};
  KT_CHECK_OK(tn_crt_instance_init(&inst, &twin, &ws, 1, &cp, 1));
  EXPECT_ST(tn_crt_params_bind(&inst, &layout, m.blob_a, m.na, NULL, 0, NULL),
            TN_CRT_MODEL_MISMATCH);
  EXPECT_ST(tn_crt_last_error(&inst), TN_CRT_MODEL_MISMATCH);
}
END_TEST

START_TEST(test_truncated_at_every_length) {
  Mem m;
  mem_init(&m);
  for (size_t n = 0; n < m.na; n++) {
    uint8_t *p = exact(m.blob_a, n);
    int32_t st = tn_crt_params_verify(&layout, p, n, NULL);
    ck_assert_msg(st == TN_CRT_PARAMS_TRUNCATED,
                  "cut to %zu of %zu bytes: %s", n, m.na,
                  tn_crt_status_name(st));
    free(p);
  }
  uint8_t *p = exact(m.blob_a, m.na);
  KT_CHECK_OK(tn_crt_params_verify(&layout, p, m.na, NULL));
  free(p);
}
END_TEST

START_TEST(test_every_byte_flipped) {
  Mem m;
  mem_init(&m);
  static const uint8_t masks[] = {0x01, 0x80, 0xff};
  size_t refused[17] = {0};
  for (size_t i = 0; i < m.na; i++)
    for (size_t k = 0; k < sizeof masks; k++) {
      uint8_t *p = exact(m.blob_a, m.na);
      p[i] ^= masks[k];
      int32_t st = tn_crt_params_verify(&layout, p, m.na, NULL);
      ck_assert_msg(st != TN_CRT_OK, "byte %zu ^ 0x%02x accepted", i,
                    masks[k]);
      ck_assert(st >= TN_CRT_PARAMS_INVALID && st <= TN_CRT_PARAMS_WRONG_MODEL);
      refused[st]++;
      free(p);
    }
  /* the data and the CRC are caught by the CRC, the structure before it */
  ck_assert_uint_gt(refused[TN_CRT_PARAMS_CHECKSUM], 3 * 36);
  ck_assert_uint_gt(refused[TN_CRT_PARAMS_INVALID], 0);
  ck_assert_uint_gt(refused[TN_CRT_PARAMS_TRUNCATED], 0);
}
END_TEST

/* Set the `bytes`-byte field at `at` of a copy of the blob to `v`, redo the
 * CRC (so that only the structure checks stand in the way), and verify. */
static int32_t with_field(const Mem *m, size_t at, int bytes, uint64_t v) {
  uint8_t *p = exact(m->blob_a, m->na);
  Buf b = {p, at};
  put(&b, v, bytes);
  b.n = m->na - 4;
  put_crc(&b);
  int32_t st = tn_crt_params_verify(&layout, p, m->na, NULL);
  free(p);
  return st;
}

START_TEST(test_huge_sizes) {
  Mem m;
  mem_init(&m);
  /* header: count; entry 0 at 16: name length, then (after the 16-byte
   * name) dtype at 36, ndim at 40, dim at 44, data bytes at 52 */
  static const uint64_t huge[] = {0xffffffffu, 0x80000000u, UINT64_MAX,
                                  UINT64_C(1) << 63, UINT64_MAX - 15, 17};
  EXPECT_ST(with_field(&m, 12, 4, 0xffffffffu), TN_CRT_PARAMS_INVALID);
  EXPECT_ST(with_field(&m, 12, 4, 2), TN_CRT_PARAMS_INVALID);
  EXPECT_ST(with_field(&m, 8, 4, 2), TN_CRT_PARAMS_INVALID);
  EXPECT_ST(with_field(&m, 16, 4, 0xffffffffu), TN_CRT_PARAMS_TRUNCATED);
  EXPECT_ST(with_field(&m, 40, 4, 0xffffffffu), TN_CRT_PARAMS_INVALID);
  EXPECT_ST(with_field(&m, 36, 1, 2), TN_CRT_PARAMS_INVALID); /* float */
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    int32_t a = with_field(&m, 44, 8, huge[i]);
    int32_t b = with_field(&m, 52, 8, huge[i]);
    ck_assert_int_eq(a, TN_CRT_PARAMS_INVALID); /* dim != data bytes */
    ck_assert_int_eq(b, TN_CRT_PARAMS_INVALID);
    /* both, consistently huge */
    uint8_t *p = exact(m.blob_a, m.na);
    Buf w = {p, 44};
    put(&w, huge[i], 8), put(&w, huge[i], 8);
    w.n = m.na - 4;
    put_crc(&w);
    int32_t st = tn_crt_params_verify(&layout, p, m.na, NULL);
    ck_assert_msg(st == TN_CRT_PARAMS_TRUNCATED || st == TN_CRT_PARAMS_INVALID,
                  "size %llu: %s", (unsigned long long)huge[i],
                  tn_crt_status_name(st));
    free(p);
  }
  /* trailing bytes after the three entries */
  uint8_t *p = malloc(m.na + 4);
  ck_assert_ptr_nonnull(p);
  memcpy(p, m.blob_a, m.na - 4);
  memset(p + m.na - 4, 0, 4);
  Buf b = {p, m.na};
  put_crc(&b);
  EXPECT_ST(tn_crt_params_verify(&layout, p, m.na + 4, NULL),
            TN_CRT_PARAMS_INVALID);
  free(p);
}
END_TEST

START_TEST(test_random_blobs) {
  /* random bytes behind a good header: refused, never read past */
  KtRng r = kt_rng(34);
  for (int t = 0; t < 2000; t++) {
    size_t n = 16 + kt_next(&r) % 200;
    uint8_t *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)kt_next(&r);
    memcpy(p, "TNPARAMS\x01\0\0\0\x03\0\0\0", 16);
    if (t % 2 == 0 && n > 40) { /* plausible small lengths too */
      p[16] = (uint8_t)(kt_next(&r) % 24), p[17] = p[18] = p[19] = 0;
    }
    int32_t st = tn_crt_params_verify(&layout, p, n, NULL);
    ck_assert_int_ne(st, TN_CRT_OK);
    free(p);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("crt_params");
  TCase *tc = tcase_create("crt_params");
  tcase_add_test(tc, test_crc_reference);
  tcase_add_test(tc, test_verify_reports);
  tcase_add_test(tc, test_init_bind_swap_in_place);
  tcase_add_test(tc, test_misaligned_blob_is_copied);
  tcase_add_test(tc, test_refusals_keep_the_weights);
  tcase_add_test(tc, test_bad_arguments);
  tcase_add_test(tc, test_truncated_at_every_length);
  tcase_add_test(tc, test_every_byte_flipped);
  tcase_add_test(tc, test_huge_sizes);
  tcase_add_test(tc, test_random_blobs);
  suite_add_tcase(s, tc);
  return s;
}

KT_MAIN(make_suite)
