/*
 * params_check.c: weights updated in the field, on the board. The model
 * (compiled with constants_in_pool) takes its weights from parameter blobs
 * (tvmnode/crt/params.h) that are not part of the firmware: they are
 * written to a second memory region, in slots at fixed addresses, the way
 * an update would be programmed into external flash (under qemu, by its
 * generic loader: run.py's run_program(..., loads=...)). A slot is a u32
 * byte count, 12 bytes of padding and the blob (16-aligned):
 *
 *   slot 0  weights A         slot 3  a blob whose CRC does not match
 *   slot 1  weights B         slot 4  weights B cut short
 *   slot 2  another model's   slot 5  the input (raw bytes)
 *
 * The program binds A in place, runs, swaps in B, runs, offers slots 2 to
 * 4 (each must be refused, B kept), then binds B from a misaligned copy in
 * RAM (copied into the RAM pool) and runs again. It prints
 *
 *   init st=OK copied=0 version=<weights version> instructions=<count>
 *   out A <output bytes in hex>
 *   bind B st=OK copied=0 version=... instructions=...
 *   out B <hex>
 *   bind other st=PARAMS_WRONG_MODEL
 *   bind badcrc st=PARAMS_CHECKSUM
 *   bind truncated st=PARAMS_TRUNCATED
 *   out kept <hex>
 *   bind copy st=OK copied=1 version=... instructions=...
 *   out copy <hex>
 *   done 0
 *
 * (instructions: of the call, SysTick ticks times the board's instructions
 * per tick, measure.h) and exits 0 when every call returned what it must;
 * the outputs are
 * compared with the host executor's by python/tests/test_params_blob.py.
 * PC_LAYOUT names the model's tvmgen_<name>_params_layout; the model has
 * one workspace pool, one input and one output.
 */
#include <stdint.h>

#include "measure.h"
#include "semihost.h"
#include "tvmnode/crt/params.h"

#ifndef PC_LAYOUT
#error "build with -DPC_LAYOUT=tvmgen_<name>_params_layout"
#endif
#ifndef PC_SLOTS
#define PC_SLOTS 0x21000000u /* the PSRAM of mps2-an385/an386 */
#endif
#define PC_SLOT_BYTES 0x80000u
#ifndef PC_WS_BYTES
#define PC_WS_BYTES 65536u
#endif
#ifndef PC_BLOB_BYTES
#define PC_BLOB_BYTES 65536u
#endif

extern const TnCrtParamsLayout PC_LAYOUT;

static uint8_t ws[PC_WS_BYTES] __attribute__((aligned(64)));
static uint8_t ram_pool[PC_BLOB_BYTES] __attribute__((aligned(64)));
static uint8_t ram_blob[PC_BLOB_BYTES + 64] __attribute__((aligned(64)));
static uint8_t out[4096] __attribute__((aligned(16)));
static TnCrtInstance inst;
static int failures;
static uint64_t t0; /* ticks at the start of the call measured */

static const uint8_t *slot(int i, uint32_t *size) {
  const uint8_t *s = (const uint8_t *)(uintptr_t)(PC_SLOTS + i * PC_SLOT_BYTES);
  *size = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
          (uint32_t)s[3] << 24;
  return s + 16;
}

static void expect(const char *what, int32_t st, int32_t want,
                   const TnCrtParamsInfo *info) {
  fw_str(what);
  fw_str(" st=");
  fw_str(tn_crt_status_name(st));
  if (info && st == TN_CRT_OK) {
    fw_str(" copied=");
    fw_i64(info->copied);
    fw_str(" version=");
    fw_u64(info->weights_version);
    fw_str(" instructions=");
    fw_u64(fw_instructions(fw_ticks() - t0));
  }
  fw_endl();
  if (st != want) failures++;
}

static void run(const char *what) {
  TnCrtTensor t;
  int32_t st = tn_crt_run(&inst);
  if (st != TN_CRT_OK || tn_crt_output(&inst, 0, &t) != TN_CRT_OK) {
    expect(what, st, TN_CRT_OK, 0);
    return;
  }
  fw_str("out ");
  fw_str(what);
  fw_str(" ");
  fw_hex(t.data, t.info->nbytes);
  fw_endl();
}

int main(void) {
  const TnCrtModel *m = PC_LAYOUT.model;
  uint32_t n;
  TnCrtParamsInfo info;
  if (m->num_workspace_pools != 1 || m->workspace_pools[0].size > PC_WS_BYTES ||
      m->constant_pools[0].size > PC_BLOB_BYTES ||
      m->outputs[0].nbytes > sizeof out) {
    fw_str("the model does not fit this program's buffers");
    fw_endl();
    fw_exit(2);
  }
  TnCrtPool pool = {ws, PC_WS_BYTES};
  const uint8_t *a = slot(0, &n);
  fw_ticks_start();
  t0 = fw_ticks();
  expect("init", tn_crt_params_init(&inst, &PC_LAYOUT, &pool, 1, a, n, 0, 0,
                                    &info), TN_CRT_OK, &info);
  if (info.copied != 0) failures++;
  uint32_t xn;
  const uint8_t *x = slot(5, &xn);
  if (tn_crt_bind_input(&inst, 0, (void *)(uintptr_t)x, xn) != TN_CRT_OK ||
      tn_crt_bind_output(&inst, 0, out, sizeof out) != TN_CRT_OK) {
    fw_str("bind failed");
    fw_endl();
    fw_exit(2);
  }
  run("A");
  const uint8_t *b = slot(1, &n);
  uint32_t nb = n;
  t0 = fw_ticks();
  expect("bind B", tn_crt_params_bind(&inst, &PC_LAYOUT, b, n, 0, 0, &info),
         TN_CRT_OK, &info);
  if (info.copied != 0) failures++;
  run("B");
  const uint8_t *p = slot(2, &n);
  expect("bind other", tn_crt_params_bind(&inst, &PC_LAYOUT, p, n, 0, 0, 0),
         TN_CRT_PARAMS_WRONG_MODEL, 0);
  p = slot(3, &n);
  expect("bind badcrc", tn_crt_params_bind(&inst, &PC_LAYOUT, p, n, 0, 0, 0),
         TN_CRT_PARAMS_CHECKSUM, 0);
  p = slot(4, &n);
  expect("bind truncated", tn_crt_params_bind(&inst, &PC_LAYOUT, p, n, 0, 0, 0),
         TN_CRT_PARAMS_TRUNCATED, 0);
  run("kept");
  /* B received over a link into a buffer at an odd address: copied */
  if (nb > PC_BLOB_BYTES) fw_exit(2);
  for (uint32_t i = 0; i < nb; i++) ram_blob[1 + i] = b[i];
  t0 = fw_ticks();
  expect("bind copy", tn_crt_params_bind(&inst, &PC_LAYOUT, ram_blob + 1, nb,
                                         ram_pool, sizeof ram_pool, &info),
         TN_CRT_OK, &info);
  if (info.copied != 1) failures++;
  for (uint32_t i = 0; i < nb; i++) ram_blob[1 + i] = 0; /* the copy is its own */
  run("copy");
  fw_str("done ");
  fw_i64(failures);
  fw_endl();
  return failures ? 1 : 0;
}
