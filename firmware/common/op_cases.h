/*
 * op_cases.h: many small compiled modules in one device program, each run
 * on its stored inputs and compared with its stored expected outputs.
 *
 * python/tests/test_op_device.py compiles every one-operator case of
 * test_op_codegen.py under its own model name, computes the host
 * executor's outputs, and writes the table (OcCase entries and the arena)
 * that op_cases.c walks. The same C runs on every device: a platform file
 * supplies oc_emit (one line of text out) and calls oc_run_all
 * (op_cases_semihost.c on the Cortex-M boards, op_cases_wasm.c in wasm32).
 *
 * Each case runs through the generic firmware API (tvmnode/crt/model.h)
 * over buffers carved from one static arena: the inputs copied into RAM,
 * the outputs filled with a marker first and followed by guard bytes,
 * every workspace pool at its alignment. One line a case:
 *
 *   case 12 clip-s8 PASS outputs=1 maxulp=0
 *   case 13 exp-f32-vec FAIL output=0 index=3 got=3f800001 want=3f800000 mismatches=1 maxulp=1
 *   case 14 foo FAIL status=5 step=run
 *
 * got/want are the element's value in hex (its bytes read little-endian,
 * as every target stores them), so a float shows its bits; maxulp is the largest distance, in units in the last
 * place, between a float32 output and its expected value (0 for integer
 * outputs, which must be equal byte for byte). A float32 output passes
 * within the case's `ulps`. Then `cases N failed F` and `done F`.
 */
#ifndef FW_OP_CASES_H_
#define FW_OP_CASES_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/model.h"

typedef struct {
  const char *id;
  const TnCrtModel *model;
  const uint8_t *const *inputs;   /* the descriptor's input bytes, in order */
  const uint8_t *const *expected; /* the host executor's output bytes */
  uint32_t ulps;                  /* allowed distance of float32 outputs */
} OcCase;

/* Written by the test: the cases, and the arena their buffers come from. */
extern const OcCase oc_cases[];
extern const int32_t oc_num_cases;
extern uint8_t oc_arena[];
extern const uint32_t oc_arena_size;

/* One line of text (no newline), from the platform. */
void oc_emit(const char *line);

/* Runs every case, emitting a line each and the summary; returns the
 * number of failed cases. */
int32_t oc_run_all(void);

#endif /* FW_OP_CASES_H_ */
