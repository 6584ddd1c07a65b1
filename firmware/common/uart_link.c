/*
 * uart_link.c: a firmware that keeps a device session's link (the crt's
 * TnCrtLink, tvmnode/crt/frame.h) over the board's UART (uart.h), for the
 * host's link tests on qemu (go/serve/device).
 *
 * At start it sends a RESET and a LOG line. It answers each REQUEST with a
 * RESPONSE holding the request's body reversed, except the request
 * "reset", which it acknowledges and then resets the core through the
 * SCB (AIRCR.SYSRESETREQ), as a board that crashes mid-request would: qemu
 * starts the firmware again and the new one sends its RESET. A frame not
 * acknowledged after a while is sent again. Nothing here allocates.
 */
#include <stdint.h>

#include <tvmnode/crt/frame.h>

#include "uart.h"

enum { kMaxBody = 512 };
static uint8_t rx_buf[kMaxBody + TN_CRT_FRAME_OVERHEAD];
static uint8_t tx_buf[TN_CRT_FRAME_ENCODED_MAX(kMaxBody)];
static uint8_t answer[kMaxBody];
static TnCrtLink link;

int main(void) {
  static const char hello[] = "uart_link: ready";
  fw_uart_init();
  if (tn_crt_link_init(&link, rx_buf, sizeof rx_buf, tx_buf, sizeof tx_buf,
                       fw_uart_write, NULL) != TN_CRT_OK)
    return 1;
  (void)tn_crt_link_send(&link, TN_CRT_FRAME_RESET, NULL, 0);
  size_t answer_len = 0;
  int have_answer = 0, have_hello = 1, reset_after_ack = 0;
  for (;;) {
    if (!link.waiting) {
      if (reset_after_ack) fw_system_reset();
      if (have_hello) {
        have_hello = 0;
        (void)tn_crt_link_send(&link, TN_CRT_FRAME_LOG, hello,
                               sizeof hello - 1);
      } else if (have_answer) {
        have_answer = 0;
        (void)tn_crt_link_send(&link, TN_CRT_FRAME_RESPONSE, answer,
                               answer_len);
      }
    }
    int32_t ev = fw_uart_link_turn(&link);
    if (ev == TN_CRT_LINK_FRAME && link.rx.type == TN_CRT_FRAME_REQUEST) {
      const uint8_t *b = link.rx.body;
      size_t n = link.rx.body_len;
      if (n == 5 && b[0] == 'r' && b[1] == 'e' && b[2] == 's' &&
          b[3] == 'e' && b[4] == 't')
        fw_system_reset(); /* its ACK is already written */
      for (size_t i = 0; i < n; i++) answer[i] = b[n - 1 - i];
      answer_len = n;
      have_answer = 1;
    }
  }
}
