/*
 * crt_firmware_link.c: a bare "firmware" that tests/crt_freestanding.sh
 * links against the crt with no C library, for the host and for a
 * Cortex-M4, and then searches for an allocator. It defines one descriptor
 * as the code generator would (`tvmgen_fw_model`, with a workspace pool, a
 * constant pool and a device), keeps every byte in static storage, and
 * calls every function of tvmnode/crt/model.h, so that whatever the API
 * needs has to be in the link. It is never run: the behaviour is
 * tests/test_crt_model.c's.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/kernels.h"
#include "tvmnode/crt/model.h"

/* y[i] = x[i] + w[i] through the workspace; the device counts runs. */
static int32_t fw_run(void *const *inputs, void *const *outputs,
                      void *const *workspace, void *const *constants,
                      void *const *devices) {
  const int8_t *x = inputs[0], *w = constants[0];
  int8_t *y = outputs[0], *tmp = workspace[0];
  for (int i = 0; i < 4; i++) tmp[i] = (int8_t)(x[i] + w[i]);
  for (int i = 0; i < 4; i++) y[i] = tmp[i];
  ++*(uint32_t *)devices[0];
  return TN_CRT_OK;
}

static const int32_t fw_shape[] = {1, 4};
static const TnCrtTensorInfo fw_inputs[] = {
    {"x", TN_CRT_I8, 2, fw_shape, 4, 0.25f, -1, -1, 0}};
static const TnCrtTensorInfo fw_outputs[] = {
    {"y", TN_CRT_I8, 2, fw_shape, 4, 0.25f, -1, -1, 0}};
static const TnCrtPoolInfo fw_workspace_pools[] = {{"ws", 16, 8}};
static const TnCrtPoolInfo fw_constant_pools[] = {{"weights", 4, 4}};
static const uint8_t fw_weights[] = {1, 2, 3, 4};
static const uint8_t *const fw_constant_data[] = {fw_weights};
static const char *const fw_devices[] = {"counter"};

extern const TnCrtModel tvmgen_fw_model;
const TnCrtModel tvmgen_fw_model = {
    TN_CRT_MODEL_MAGIC, TN_CRT_MODEL_ABI_VERSION, "fw", "link-test",
    1, 1, fw_inputs, fw_outputs,
    1, fw_workspace_pools,
    1, fw_constant_pools, fw_constant_data,
    1, fw_devices,
    4, 4, fw_run};

static _Alignas(8) uint8_t workspace[16];
static _Alignas(4) uint8_t constants[4];
static int8_t input[4], output[4];
static uint32_t counter;
static TnCrtInstance instance;
/* Where the firmware leaves what it learnt, so nothing is optimised out. */
static volatile int32_t fw_status;
static volatile uint32_t fw_bytes;
static const char *volatile fw_status_name;

static int32_t fw_main(void) {
  const TnCrtModel *m = &tvmgen_fw_model;
  TnCrtPool ws = {workspace, sizeof workspace};
  TnCrtPool cp = {constants, sizeof constants};
  int32_t st = tn_crt_instance_init(&instance, m, &ws, 1, &cp, 1);
  if (st == TN_CRT_OK)
    st = tn_crt_bind_input(&instance, tn_crt_input_index(m, "x"), input,
                           sizeof input);
  if (st == TN_CRT_OK)
    st = tn_crt_bind_output(&instance, tn_crt_output_index(m, "y"), output,
                            sizeof output);
  if (st == TN_CRT_OK) st = tn_crt_set_device(&instance, 0, &counter);
  if (st == TN_CRT_OK) st = tn_crt_run(&instance);
  TnCrtTensor in, out;
  if (st == TN_CRT_OK) st = tn_crt_input(&instance, 0, &in);
  if (st == TN_CRT_OK) st = tn_crt_output(&instance, 0, &out);
  TnCrtReport report;
  if (st == TN_CRT_OK) st = tn_crt_report(&instance, &report);
  if (st == TN_CRT_OK)
    fw_bytes = report.workspace_bytes + report.io_bytes + in.info->nbytes +
               out.info->nbytes;
  fw_status_name = tn_crt_status_name(tn_crt_last_error(&instance));
  return st;
}

/* The reset entry; a firmware never returns from it. */
void _start(void);
void _start(void) {
  fw_status = fw_main();
  for (;;) {
  }
}
