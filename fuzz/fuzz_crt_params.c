/*
 * fuzz_crt_params.c: libFuzzer target for the crt's parameter blob
 * verifier (tn_crt_params_verify / tn_crt_params_bind, runtime/crt/src/
 * params.c), which reads blobs from flash or a link on a device.
 *
 * The first byte picks a mode, the rest is the blob, copied into a block of
 * exactly its size (so ASan sees any read past it). In the odd modes the
 * target first writes the correct CRC-32 into the blob's last four bytes,
 * so that mutations reach the checks behind the checksum. The layout is
 * that of a made-up model whose constant pool is 32 bytes aligned to 8 and
 * whose id is the seed's (fuzz/corpus/crt_params). Any blob must be refused
 * with one of the crt's status codes or be accepted with its pool image
 * inside the blob; an accepted one is bound to an instance (in place when
 * aligned, else copied into a RAM pool) and run, and the model reads the
 * image's 32 bytes. Nothing may crash or read out of bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/crt/kernels.h> /* TnCrtDType */
#include <tvmnode/crt/params.h>

static int32_t sum_run(void *const *inputs, void *const *outputs,
                       void *const *workspace, void *const *constants,
                       void *const *devices) {
  (void)inputs, (void)workspace, (void)devices;
  const uint8_t *w = constants[0];
  uint32_t s = 0;
  for (int i = 0; i < 32; i++) s = s * 31 + w[i];
  *(uint32_t *)outputs[0] = s;
  return TN_CRT_OK;
}

static const int32_t shape1[] = {1};
static const TnCrtTensorInfo out_info[] = {
    {"s", TN_CRT_I32, 1, shape1, 4, 0.0f, 0, -1, 0}};
static const TnCrtPoolInfo cp_info[] = {{"constants", 32, 8}};
static const uint8_t zeros[32];
static const uint8_t *const cp_data[] = {zeros};
static const TnCrtModel model = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "sum", "fuzz",
    0, 1, 0, out_info,
    0, 0,
    1, cp_info, cp_data,
    0, 0,
    0, 32, sum_run};
static const TnCrtParamsLayout layout = {
    TN_CRT_PARAMS_LAYOUT_MAGIC, TN_CRT_PARAMS_VERSION,
    UINT64_C(0x0123456789abcdef), &model};

static void fail(const char *what, int32_t st) {
  fprintf(stderr, "%s (%s)\n", what, tn_crt_status_name(st));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t n = size - 1;
  uint8_t *blob = malloc(n ? n : 1);
  if (blob == NULL) return 0;
  memcpy(blob, data + 1, n);
  if ((data[0] & 1) && n >= 4) {
    uint32_t crc = tn_crt_crc32(0, blob, n - 4);
    for (int k = 0; k < 4; k++) blob[n - 4 + k] = (uint8_t)(crc >> 8 * k);
  }
  TnCrtParamsInfo info;
  int32_t st = tn_crt_params_verify(&layout, blob, n, &info);
  if (st != TN_CRT_OK) {
    if (st < TN_CRT_PARAMS_INVALID || st > TN_CRT_PARAMS_WRONG_MODEL)
      fail("a bad blob must be refused with a PARAMS_ status", st);
    free(blob);
    return 0;
  }
  if (info.pool_size != 32 || info.pool_data < blob ||
      info.pool_data + 32 > blob + n || info.model_id != layout.model_id)
    fail("an accepted blob's image must lie inside it", st);
  static _Alignas(8) uint8_t ram[32];
  static TnCrtInstance inst;
  uint32_t out = 0;
  st = tn_crt_params_init(&inst, &layout, 0, 0, blob, n, ram, sizeof ram,
                          &info);
  if (st != TN_CRT_OK) fail("an accepted blob must bind", st);
  if (tn_crt_bind_output(&inst, 0, &out, sizeof out) != TN_CRT_OK ||
      tn_crt_run(&inst) != TN_CRT_OK)
    fail("the model must run on an accepted blob", st);
  free(blob);
  return 0;
}
