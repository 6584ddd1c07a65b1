/*
 * semihost.h: output and exit for the firmware, through Arm semihosting.
 *
 * The harness prints a handful of lines and ends with an exit code, so it
 * needs two semihosting calls (SYS_WRITE0 and SYS_EXIT_EXTENDED) and an
 * integer formatter, not a C library's stdio: newlib's printf and rdimon
 * bring in malloc, and the point of the firmware is to show a model that
 * runs with no allocator in the link. Output is collected into one line
 * and written when the line ends, one trap per line.
 */
#ifndef FW_SEMIHOST_H_
#define FW_SEMIHOST_H_

#include <stddef.h>
#include <stdint.h>

/* Append to the current line; fw_endl writes it out with a newline. */
void fw_str(const char *s);
void fw_u64(uint64_t v);
void fw_i64(int64_t v);
void fw_hex(const void *bytes, size_t n); /* two lowercase digits a byte */
void fw_hex32(uint32_t v);                 /* 0x and eight digits */
void fw_endl(void);

/* End the program: qemu exits with `code` (0 to 255). Never returns. */
void fw_exit(int code) __attribute__((noreturn));

#endif /* FW_SEMIHOST_H_ */
