/*
 * startup.c: the vector table and reset handler of the firmware, for a
 * Cortex-M4 with FPU (qemu's mps2-an386), with no vendor code.
 *
 * Reset enables the FPU first (the hard-float ABI may touch s0-s31 in any
 * function, memcpy included), then copies .data from its load address,
 * zeroes .bss, paints the stack and calls main. The copy loops are built
 * with loop-pattern recognition off so the compiler does not turn them into
 * memcpy/memset calls before those could be relied on. Faults print what
 * the core recorded and exit with code 3, so a bad firmware ends the run
 * instead of hanging until the runner's timeout.
 */
#include <stdint.h>

#include "measure.h"
#include "semihost.h"

int main(void);
void fw_reset(void);
void fw_fault_handler(void);

extern uint32_t __fw_stack_top[];
extern uint32_t __fw_data_load[], __fw_data_start[], __fw_data_end[];
extern uint32_t __fw_bss_start[], __fw_bss_end[];

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define CPACR_CP10_CP11_FULL (0xFu << 20)

typedef void (*Vector)(void);

/* Entries 0-15: the initial stack pointer and the core's exceptions. The
 * firmware enables no peripheral interrupt, so there are no more. */
__attribute__((section(".vectors"), used)) static const Vector vectors[16] = {
    (Vector)(uintptr_t)__fw_stack_top,
    fw_reset,
    fw_fault_handler, /* NMI */
    fw_fault_handler, /* HardFault */
    fw_fault_handler, /* MemManage */
    fw_fault_handler, /* BusFault */
    fw_fault_handler, /* UsageFault */
    0, 0, 0, 0,
    fw_fault_handler, /* SVCall */
    fw_fault_handler, /* DebugMonitor */
    0,
    fw_fault_handler, /* PendSV */
    fw_systick_handler,
};

__attribute__((optimize("no-tree-loop-distribute-patterns"))) void fw_reset(void) {
  SCB_CPACR |= CPACR_CP10_CP11_FULL;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  const uint32_t *src = __fw_data_load;
  for (uint32_t *dst = __fw_data_start; dst < __fw_data_end;) *dst++ = *src++;
  for (uint32_t *dst = __fw_bss_start; dst < __fw_bss_end;) *dst++ = 0;
  fw_stack_paint();
  fw_exit(main());
}

/* The core pushed r0-r3, r12, lr, pc, xpsr on the stack it was using (the
 * firmware never leaves the main stack); the report reads pc from there. */
__attribute__((used)) static void fault_report(const uint32_t *frame) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  fw_str("fault exception=");
  fw_u64(ipsr & 0x1FFu);
  fw_str(" pc=");
  fw_hex32(frame[6]);
  fw_str(" cfsr=");
  fw_hex32(SCB_CFSR);
  fw_str(" hfsr=");
  fw_hex32(SCB_HFSR);
  fw_endl();
  fw_exit(3);
}

__attribute__((naked)) void fw_fault_handler(void) {
  __asm__ volatile("mrs r0, msp\n\tb fault_report");
}
