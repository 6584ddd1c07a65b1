/*
 * measure.h: counting executed instructions and measuring stack use.
 *
 * qemu models no cycles. Under -icount shift=0 each instruction advances
 * virtual time by 1 ns, and SysTick runs from the board's processor clock
 * (mps2-an386: 25 MHz, 40 instructions a tick; mps2-an505: 20 MHz, 50;
 * mps3-an547: 32 MHz, 31.25), so fw_instructions(ticks), ticks x
 * FW_INSTRUCTIONS_PER_TICK / FW_INSTRUCTIONS_PER_TICK_DEN (the target
 * table's ipt column, a fraction where the clock does not divide 1 GHz,
 * passed by run.py), counts the instructions between two readings, to
 * within one tick. The stack is painted
 * with a pattern; the lowest word no longer holding it is the high-water
 * mark. Both are measurements of this emulated board, not of a real M4's
 * cycles or of another compiler's stack frames.
 */
#ifndef FW_MEASURE_H_
#define FW_MEASURE_H_

#include <stdint.h>

#ifndef FW_INSTRUCTIONS_PER_TICK
#define FW_INSTRUCTIONS_PER_TICK 40u
#endif
#ifndef FW_INSTRUCTIONS_PER_TICK_DEN
#define FW_INSTRUCTIONS_PER_TICK_DEN 1u
#endif

/* The instructions `ticks` SysTick ticks stand for, rounded down. */
static inline uint64_t fw_instructions(uint64_t ticks) {
  return ticks * FW_INSTRUCTIONS_PER_TICK / FW_INSTRUCTIONS_PER_TICK_DEN;
}

/* Start SysTick from its processor clock, free-running with wrap counting. */
void fw_ticks_start(void);
/* Ticks since fw_ticks_start: 0 right after it. */
uint64_t fw_ticks(void);

/* The SysTick exception's handler (in the vector table): counts wraps. */
void fw_systick_handler(void);

/* Paint the stack below the caller's frame (from the bottom of the stack
 * up to a little under the current stack pointer). */
void fw_stack_paint(void);
/* Bytes of stack ever used since the last paint, from the top of the stack. */
uint32_t fw_stack_used(void);
/* The stack's size, from the linker script. */
uint32_t fw_stack_size(void);
/* The current stack pointer, as an address. */
uintptr_t fw_stack_pointer(void);
/* Top of the stack (its highest address + 1). */
uintptr_t fw_stack_top(void);

/* Marks around the profiled region: run.py --cycles counts the
 * instructions executed between the two calls (cycles_plugin.c). They do
 * nothing, and are never inlined, so that their addresses are the marks. */
void fw_profile_on(void);
void fw_profile_off(void);

#endif /* FW_MEASURE_H_ */
