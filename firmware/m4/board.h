/*
 * board.h: what the device-session firmware (common/uart.c) needs to know
 * of mps2-an386: where its CMSDK APB UART0 is, the port qemu's first -serial
 * connects.
 */
#ifndef FW_BOARD_H_
#define FW_BOARD_H_

#define FW_UART0_BASE 0x40004000u

#endif /* FW_BOARD_H_ */
