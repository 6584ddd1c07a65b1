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
 *   ticks first=0 reads=200000 backwards=0 maxstep=1 last=123456 wraps=...
 *   done 0
 *
 * first: the reading right after the start (0 or 1: a few instructions
 * ran); backwards: readings smaller than the one before; maxstep: the
 * largest step between two readings, in ticks (each read loop takes fewer
 * instructions than a tick, so at most 1). Exit code 0 when all three are
 * as they should be, 1 otherwise. Built and run by run.py's
 * build_program/run_program (python/tests/test_firmware_device.py).
 */
#include <stdint.h>

#include "measure.h"
#include "semihost.h"

#ifndef TC_READS
#define TC_READS 200000u
#endif

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
  fw_str(" maxstep=");
  fw_u64(maxstep);
  fw_str(" last=");
  fw_u64(prev);
  fw_endl();
  const int code = first <= 1 && backwards == 0 && maxstep <= 1 ? 0 : 1;
  fw_str("done ");
  fw_i64(code);
  fw_endl();
  return code;
}
