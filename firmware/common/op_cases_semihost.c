/*
 * op_cases_semihost.c: the Cortex-M side of op_cases.h. Lines go out
 * through semihosting (semihost.c); startup.c exits with main's code,
 * 0 when every case passed and 1 otherwise.
 */
#include "op_cases.h"
#include "semihost.h"

void oc_emit(const char *line) {
  fw_str(line);
  fw_endl();
}

int main(void) {
  int32_t failed = oc_run_all();
  fw_str("done ");
  fw_i64(failed);
  fw_endl();
  return failed ? 1 : 0;
}
