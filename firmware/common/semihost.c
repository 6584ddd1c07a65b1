/*
 * semihost.c: the two semihosting calls the firmware makes, and a line
 * buffer with integer and hex formatting on top of them.
 *
 * On M-profile cores a semihosting call is `bkpt 0xab` with the operation
 * in r0 and its argument in r1; qemu (-semihosting-config enable=on)
 * services it. SYS_EXIT on 32-bit Arm only says "success" or "failure", so
 * the exit uses SYS_EXIT_EXTENDED, whose parameter block carries the code
 * itself: qemu passes it on as its own exit status.
 */
#include "semihost.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static int32_t semihost(int32_t op, const void *arg) {
  register int32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* Longer lines are written in pieces; the reader only sees the joins. */
static char line[256];
static size_t used;

static void flush(void) {
  line[used] = '\0';
  if (used) semihost(SYS_WRITE0, line);
  used = 0;
}

static void put(char c) {
  if (used == sizeof line - 1) flush();
  line[used++] = c;
}

void fw_str(const char *s) {
  while (*s) put(*s++);
}

/* Decimal by long division of four 16-bit limbs by 10 in 32-bit words:
 * v % 10 and v / 10 on a uint64_t call libgcc's __aeabi_uldivmod, 0.7 KB
 * of every firmware's flash. */
void fw_u64(uint64_t v) {
  uint32_t limb[4] = {(uint32_t)(v >> 48), (uint32_t)(v >> 32) & 0xffffu,
                      (uint32_t)(v >> 16) & 0xffffu, (uint32_t)v & 0xffffu};
  char digits[20];
  int n = 0;
  uint32_t left;
  do {
    uint32_t r = 0;
    left = 0;
    for (int i = 0; i < 4; i++) {
      const uint32_t x = r << 16 | limb[i]; /* r < 10: no overflow */
      limb[i] = x / 10, r = x % 10, left |= limb[i];
    }
    digits[n++] = (char)('0' + r);
  } while (left);
  while (n) put(digits[--n]);
}

void fw_i64(int64_t v) {
  if (v < 0) {
    put('-');
    fw_u64(-(uint64_t)v);
  } else {
    fw_u64((uint64_t)v);
  }
}

void fw_hex(const void *bytes, size_t n) {
  static const char xdigit[] = "0123456789abcdef";
  const uint8_t *b = bytes;
  for (size_t i = 0; i < n; i++) {
    put(xdigit[b[i] >> 4]);
    put(xdigit[b[i] & 15]);
  }
}

void fw_hex32(uint32_t v) {
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  fw_str("0x");
  fw_hex(b, sizeof b);
}

void fw_endl(void) {
  put('\n');
  flush();
}

void fw_exit(int code) {
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
  flush();
  semihost(SYS_EXIT_EXTENDED, block);
  for (;;) {
  }
}
