/*
 * op_cases_wasm.c: the wasm32 side of op_cases.h. With no imports, the
 * lines collect in a static text buffer; op_cases.mjs calls oc_wasm_run
 * and reads oc_wasm_text / oc_wasm_text_len from the module's memory.
 * A buffer too small for the text ends it with a line saying so.
 */
#include "op_cases.h"

#define OC_TEXT_SIZE (256u * 1024u)

static char text[OC_TEXT_SIZE];
static uint32_t text_len;
static int truncated;

static const char cut[] = "text truncated\n";

void oc_emit(const char *line) {
  uint32_t n = 0;
  while (line[n]) n++;
  if (truncated || text_len + n + 1u + sizeof cut > OC_TEXT_SIZE) {
    truncated = 1;
    return;
  }
  for (uint32_t i = 0; i < n; i++) text[text_len++] = line[i];
  text[text_len++] = '\n';
}

__attribute__((export_name("oc_wasm_run"))) int32_t oc_wasm_run(void) {
  text_len = 0;
  truncated = 0;
  int32_t failed = oc_run_all();
  if (truncated)
    for (uint32_t i = 0; i + 1u < sizeof cut; i++) text[text_len++] = cut[i];
  return failed;
}

__attribute__((export_name("oc_wasm_text"))) const char *oc_wasm_text(void) { return text; }

__attribute__((export_name("oc_wasm_text_len"))) uint32_t oc_wasm_text_len(void) {
  return text_len;
}
