/*
 * ticks_check.c: the SysTick instruction counter (measure.c) read on the
 * board, as a regression check of its wrap accounting.
 *
 * The counter reads 0 in the tick after it is started and in the tick
 * after each wrap (measure.c says why); a reading must then be the ticks
 * elapsed, not RELOAD ticks more. This program reads the counter right
 * after starting it, then back to back many times across many wraps (the
 * test builds it with a small FW_SYST_RELOAD), and prints
 *
 *   ticks first=0 reads=200000 backwards=0 maxstep=1 allowed=1 last=123456
 *   done 0
 *
 * first: the reading right after the start (0 or 1: a few instructions
 * ran); backwards: readings smaller than the one before; maxstep: the
 * largest step between two readings, in ticks; allowed: the most a step
 * may be, the ticks of one read loop and a wrap's handler rounded up
 * (1 where a tick is at least as long as both, as on the M4: 33 + 5
 * instructions against 40; 2 on the M55, whose loop is 36 instructions
 * against 31.25). A wrap counted wrong jumps by RELOAD ticks. Exit code 0
 * when first, backwards and maxstep are as they should be, 1 otherwise. Built and run by run.py's
 * build_program/run_program (python/tests/test_firmware_device.py).
 */
#include <stdint.h>

#include "measure.h"
#include "semihost.h"

#ifndef TC_READS
#define TC_READS 200000u
#endif
/* fw_systick_handler's instructions: a load, an add, a store, a return
 * and the counter's address (measure.c) */
#define TC_HANDLER_INSTRUCTIONS 6u

int main(void) {
  fw_ticks_start();
  const uint64_t first = fw_ticks();
  uint64_t prev = first, maxstep = 0;
  uint32_t backwards = 0;
  for (uint32_t i = 0; i < TC_READS; i++) {
    const uint64_t t = fw_ticks();
    if (t < prev)
      backwards++;
    else if (t - prev > maxstep)
      maxstep = t - prev;
    prev = t;
  }
  fw_str("ticks first=");
  fw_u64(first);
  fw_str(" reads=");
  fw_u64(TC_READS);
  fw_str(" backwards=");
  fw_u64(backwards);
  /* the instructions of one read loop, from the mean step (in which the
   * wraps' handler is diluted), plus the handler's few */
  const uint64_t per_read = fw_instructions(prev - first) / TC_READS + TC_HANDLER_INSTRUCTIONS;
  const uint64_t allowed =
      (per_read * FW_INSTRUCTIONS_PER_TICK_DEN + FW_INSTRUCTIONS_PER_TICK - 1) /
      FW_INSTRUCTIONS_PER_TICK;
  fw_str(" maxstep=");
  fw_u64(maxstep);
  fw_str(" allowed=");
  fw_u64(allowed);
  fw_str(" last=");
  fw_u64(prev);
  fw_endl();
  const int code = first <= 1 && backwards == 0 && maxstep <= allowed ? 0 : 1;
  fw_str("done ");
  fw_i64(code);
  fw_endl();
  return code;
}
