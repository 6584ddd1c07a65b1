/*
 * uart.h: the MPS2 and MPS3 boards' CMSDK APB UART0 (ARM DDI 0479),
 * polled, for the device-session firmwares (uart_link.c, session_uart.c);
 * its address is the target folder's board.h (FW_UART0_BASE). qemu maps
 * it to a socket or a pty with -serial.
 */
#ifndef FW_UART_H_
#define FW_UART_H_

#include <stddef.h>
#include <stdint.h>

#include <tvmnode/crt/frame.h>

/* Enables transmit and receive at the fastest divider. */
void fw_uart_init(void);
/* Writes n bytes, waiting while the transmit buffer is full; 0 (a
 * TnCrtLinkWrite: ctx is unused). */
int32_t fw_uart_write(void *ctx, const uint8_t *p, size_t n);
/* A received byte into *byte: 1, or 0 when none is waiting. */
int fw_uart_read(uint8_t *byte);
/* One turn of a firmware's loop for its link over the UART: the byte
 * waiting, if any, goes to tn_crt_link_push and its TnCrtLinkEvent is
 * returned (TN_CRT_LINK_NONE when none came); after 20,000,000 turns without
 * a byte, the frame outstanding is sent again. One link per firmware. */
int32_t fw_uart_link_turn(TnCrtLink *link);
/* Resets the core through the SCB (AIRCR.SYSRESETREQ); qemu starts the
 * firmware again. */
void fw_system_reset(void);

#endif /* FW_UART_H_ */
