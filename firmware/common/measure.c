/*
 * measure.c: the SysTick instruction counter and the painted stack (see
 * measure.h for what the numbers mean).
 *
 * SysTick is a 24-bit down-counter; its interrupt counts wraps so that a
 * long inference (hundreds of millions of instructions) is still measured.
 * The counter's period is RELOAD + 1 ticks: RELOAD, RELOAD - 1, ..., 1, 0,
 * then RELOAD again, and the exception is raised as it reaches 0 (ARMv7-M
 * ARM, B3.3.1). A write to CURRENT sets it to 0, and it loads RELOAD only
 * at the next tick: so right after fw_ticks_start, and for one tick after
 * each wrap, CURRENT reads 0 and its wrap has already been counted. Ticks
 * are therefore wraps x (RELOAD + 1) plus RELOAD + 1 - CURRENT, and nothing
 * when CURRENT is 0; reading RELOAD - CURRENT instead (as this file once
 * did) put a reading taken in the first tick after the start RELOAD ticks
 * (2^24, 671 million instructions) ahead, and one at a wrap RELOAD ahead of
 * the next reading.
 * The painting is done a word at a time from the bottom of the stack up to
 * a margin below the painter's own frame, so it never writes over a live
 * frame.
 */
#include "measure.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
/* The largest reload, so wraps are rare; a test sets a small one to check
 * that wraps are counted right. */
#ifndef FW_SYST_RELOAD
#define FW_SYST_RELOAD 0x00FFFFFFu
#endif
#define SYST_RELOAD ((uint32_t)(FW_SYST_RELOAD))
/* CSR: ENABLE | TICKINT | CLKSOURCE (processor clock). */
#define SYST_CSR_RUN 7u

#define STACK_PATTERN 0xC0FFEE5Au
#define PAINT_MARGIN 64u /* bytes left unpainted below the painter's sp */

extern uint32_t __fw_stack_bottom[], __fw_stack_top[];

static volatile uint32_t wraps;

void fw_systick_handler(void) { wraps++; }

void fw_ticks_start(void) {
  SYST_CSR = 0;
  wraps = 0;
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0; /* any write clears the counter; it reloads on the next tick */
  SYST_CSR = SYST_CSR_RUN;
}

uint64_t fw_ticks(void) {
  uint32_t w, v;
  /* A wrap between the two reads shows as a changed count: read again.
   * (The SysTick exception must be able to run: thread mode, unmasked.) */
  do {
    w = wraps;
    v = SYST_CVR;
  } while (w != wraps);
  /* v == 0: at the start or at a wrap, which w already counts. */
  return (uint64_t)w * (SYST_RELOAD + 1u) + (v ? SYST_RELOAD + 1u - v : 0u);
}

uintptr_t fw_stack_pointer(void) {
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

uintptr_t fw_stack_top(void) { return (uintptr_t)__fw_stack_top; }

uint32_t fw_stack_size(void) {
  return (uint32_t)((uintptr_t)__fw_stack_top - (uintptr_t)__fw_stack_bottom);
}

/* noinline: the margin is measured from this function's own frame. */
__attribute__((noinline)) void fw_stack_paint(void) {
  volatile uint32_t *p = __fw_stack_bottom;
  uintptr_t end = fw_stack_pointer() - PAINT_MARGIN;
  while ((uintptr_t)p < end) *p++ = STACK_PATTERN;
}

uint32_t fw_stack_used(void) {
  const volatile uint32_t *p = __fw_stack_bottom;
  while (p < __fw_stack_top && *p == STACK_PATTERN) p++;
  return (uint32_t)((uintptr_t)__fw_stack_top - (uintptr_t)p);
}

__attribute__((noinline)) void fw_profile_on(void) { __asm__ volatile(""); }
__attribute__((noinline)) void fw_profile_off(void) { __asm__ volatile(""); }
