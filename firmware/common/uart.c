/*
 * uart.c: the CMSDK UART0 of the MPS2 and MPS3 boards, polled (see uart.h);
 * where it is comes from the target folder's board.h.
 */
#include "uart.h"

#include "board.h" /* FW_UART0_BASE, from the target's folder */

#define UART0_BASE FW_UART0_BASE
#define UART_DATA (*(volatile uint32_t *)(UART0_BASE + 0x00u))
#define UART_STATE (*(volatile uint32_t *)(UART0_BASE + 0x04u))
#define UART_CTRL (*(volatile uint32_t *)(UART0_BASE + 0x08u))
#define UART_BAUDDIV (*(volatile uint32_t *)(UART0_BASE + 0x10u))
#define UART_STATE_TX_FULL 1u
#define UART_STATE_RX_FULL 2u
#define UART_CTRL_TX_EN 1u
#define UART_CTRL_RX_EN 2u
#define SCB_AIRCR (*(volatile uint32_t *)0xE000ED0Cu)

void fw_uart_init(void) {
  UART_BAUDDIV = 16u; /* the smallest divider the CMSDK UART accepts */
  UART_CTRL = UART_CTRL_TX_EN | UART_CTRL_RX_EN;
}

int32_t fw_uart_write(void *ctx, const uint8_t *p, size_t n) {
  (void)ctx;
  for (size_t i = 0; i < n; i++) {
    while (UART_STATE & UART_STATE_TX_FULL) {
    }
    UART_DATA = p[i];
  }
  return 0;
}

int fw_uart_read(uint8_t *byte) {
  if (!(UART_STATE & UART_STATE_RX_FULL)) return 0;
  *byte = (uint8_t)UART_DATA;
  return 1;
}

/* Loop turns without a byte before an unacknowledged frame goes again
 * (each turn a few instructions: tens of millions of instructions, tens
 * of milliseconds of the emulated board's time). A frame sent again
 * holds the board in its polled writes while the host's next request
 * waits, and qemu's UART carries a byte in tens of microseconds, so an
 * answer repeated because the host's ACK was late (a loaded host) cost
 * the request after it tens of milliseconds at 2,000,000 turns. */
#define RESEND_TURNS 20000000u

int32_t fw_uart_link_turn(TnCrtLink *link) {
  static uint32_t idle;
  uint8_t byte;
  if (!fw_uart_read(&byte)) {
    if (link->waiting && ++idle >= RESEND_TURNS) {
      idle = 0;
      (void)tn_crt_link_resend(link);
    }
    return TN_CRT_LINK_NONE;
  }
  idle = 0;
  return tn_crt_link_push(link, byte);
}

void fw_system_reset(void) {
  SCB_AIRCR = (0x05FAu << 16) | (1u << 2);
  for (;;) {
  }
}
