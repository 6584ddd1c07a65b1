/*
 * session_uart.c: a firmware that serves one compiled model over the
 * board's UART (uart.h): a device session (issue 31), the crt's link
 * (tvmnode/crt/frame.h) carrying requests the crt's session answers
 * (tvmnode/crt/session.h). Built by run.py's build with this file as the
 * harness (harness="session_uart.c"), over the same fw_model.h glue as
 * main.c; the host's end is go/serve/device's Session.
 *
 * The model runs through the firmware API: one instance over static pools
 * and input and output buffers (models whose inputs and outputs live in
 * the pools, io_in_pool, are not served here). At start the firmware sends
 * a RESET and the log line "session: <model> ready", then answers each
 * REQUEST with a RESPONSE; timed requests read SysTick (measure.h: under
 * -icount shift=0 a tick is FW_INSTRUCTIONS_PER_TICK /
 * FW_INSTRUCTIONS_PER_TICK_DEN instructions of 1 ns; the session is told
 * that number where it is a whole one, 0 otherwise).
 * A frame not acknowledged after a while is sent again. Nothing here
 * allocates.
 */
#include <stdint.h>

#include <tvmnode/crt/frame.h>
#include <tvmnode/crt/session.h>

#include "fw_model.h"
#include "measure.h"
#include "uart.h"

#if FW_IO_IN_POOL
#error "session_uart.c serves models with their own input and output buffers"
#endif

#define FW_ALIGNED __attribute__((aligned(FW_ALIGNMENT)))

#define DECLARE_BUFFER(name, size) static uint8_t buf_##name[size] FW_ALIGNED;
FW_INPUTS(DECLARE_BUFFER)
FW_OUTPUTS(DECLARE_BUFFER)
#if FW_HAS_POOLS
#ifndef FW_POOL_SECTION
#define FW_POOL_SECTION
#endif
#define DECLARE_POOL(name, size) \
  static uint8_t pool_##name[size] FW_ALIGNED FW_POOL_SECTION;
FW_POOLS(DECLARE_POOL)
#define POOL_ENTRY(name, size) {pool_##name, size},
static const TnCrtPool pools[] = {FW_POOLS(POOL_ENTRY)};
#define NUM_POOLS ((int32_t)(sizeof pools / sizeof pools[0]))
#else
static const TnCrtPool *const pools = 0;
#define NUM_POOLS 0
#endif
#if FW_HAS_CONSTANT_POOL
static uint8_t constant_pool[FW_CONSTANT_POOL_SIZE] FW_ALIGNED;
static const TnCrtPool constant_pools[] = {{constant_pool,
                                            FW_CONSTANT_POOL_SIZE}};
#define NUM_CONSTANT_POOLS 1
#else
static const TnCrtPool *const constant_pools = 0;
#define NUM_CONSTANT_POOLS 0
#endif

/* Request bodies up to 2 KB (an input of about as much), answers as big. */
enum { kMaxBody = 2048 };
static uint8_t rx_buf[kMaxBody + TN_CRT_FRAME_OVERHEAD];
static uint8_t tx_buf[TN_CRT_FRAME_ENCODED_MAX(kMaxBody)];
static uint8_t answer[kMaxBody];
static TnCrtLink link;
static TnCrtInstance instance;
static TnCrtInstance *const instances[] = {&instance};
static TnCrtSession session;

/* The session's clock, called before and after each timed repeat; under
 * tvmnode-serve's qemu the cycle plugin's session mode logs its running
 * counts each time this function starts (run.py --session --build-only
 * names its address in the price table). */
static uint64_t session_clock(void *ctx) {
  (void)ctx;
  return fw_ticks();
}

/* The instance over the static memory: 0, or the failing status. */
static int32_t setup(void) {
  int32_t st = tn_crt_instance_init(&instance, &FW_MODEL, pools, NUM_POOLS,
                                    constant_pools, NUM_CONSTANT_POOLS);
  int32_t i = 0;
#define BIND_INPUT(name, size) \
  if (st == TN_CRT_OK) st = tn_crt_bind_input(&instance, i++, buf_##name, size);
  FW_INPUTS(BIND_INPUT)
  i = 0;
#define BIND_OUTPUT(name, size) \
  if (st == TN_CRT_OK) st = tn_crt_bind_output(&instance, i++, buf_##name, size);
  FW_OUTPUTS(BIND_OUTPUT)
  if (st == TN_CRT_OK) st = tn_crt_session_init(&session, instances, 1);
  if (st == TN_CRT_OK)
    st = tn_crt_session_set_clock(
        &session, session_clock, 0,
        (uint32_t)(1000000000ull * FW_INSTRUCTIONS_PER_TICK_DEN / FW_INSTRUCTIONS_PER_TICK),
        /* a whole number of instructions a tick, or unknown (0) */
        FW_INSTRUCTIONS_PER_TICK_DEN == 1u ? FW_INSTRUCTIONS_PER_TICK : 0u);
  return st;
}

int main(void) {
  static const char hello[] = "session: " FW_MODEL_NAME " ready";
  static const char broken[] = "session: " FW_MODEL_NAME
                               " could not be set up; status ";
  fw_uart_init();
  fw_ticks_start();
  if (tn_crt_link_init(&link, rx_buf, sizeof rx_buf, tx_buf, sizeof tx_buf,
                       fw_uart_write, 0) != TN_CRT_OK)
    return 1;
  int32_t setup_status = setup();
  (void)tn_crt_link_send(&link, TN_CRT_FRAME_RESET, 0, 0);
  size_t answer_len = 0;
  int have_answer = 0, have_hello = 1;
  for (;;) {
    if (!link.waiting) {
      if (have_hello) {
        have_hello = 0;
        if (setup_status == TN_CRT_OK) {
          (void)tn_crt_link_send(&link, TN_CRT_FRAME_LOG, hello,
                                 sizeof hello - 1);
        } else {
          /* the line and the status's name, in the answer buffer */
          size_t n = 0;
          for (const char *p = broken; *p; p++) answer[n++] = (uint8_t)*p;
          for (const char *p = tn_crt_status_name(setup_status); *p; p++)
            answer[n++] = (uint8_t)*p;
          (void)tn_crt_link_send(&link, TN_CRT_FRAME_LOG, answer, n);
        }
      } else if (have_answer) {
        have_answer = 0;
        (void)tn_crt_link_send(&link, TN_CRT_FRAME_RESPONSE, answer,
                               answer_len);
      }
    }
    int32_t ev = fw_uart_link_turn(&link);
    /* one request at a time: the host waits for each answer */
    if (ev == TN_CRT_LINK_FRAME && link.rx.type == TN_CRT_FRAME_REQUEST &&
        !have_answer) {
      /* an answer is always written: an Error when the model could not be
       * set up (the instance is then no model of the session) */
      if (tn_crt_session_answer(&session, link.rx.body, link.rx.body_len,
                                answer, sizeof answer,
                                &answer_len) == TN_CRT_OK)
        have_answer = 1;
    }
  }
}
