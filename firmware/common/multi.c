/*
 * multi.c: several compiled models in one firmware, sharing one workspace
 * pool, run alternately.
 *
 * The models come from fw_models.c, which run.py writes (models_source):
 * for each model its input bytes, its input and output buffers and two
 * functions, one that copies the input in and calls tvmgen_<name>_run with
 * the shared pool, one that prints the outputs; and the shared pool itself,
 * fw_shared_pool, as large as the largest model's pool and aligned as the
 * most demanding one asks. The models run one after another, FW_ROUNDS
 * times over (kws, ad, kws, ad, ...), so that each run starts from a pool
 * the other model has just overwritten. Output, one fact a line:
 *
 *   models 2 pool 9024
 *   run kws 0 status 0
 *   output kws identity 12 <hex bytes>
 *   run ad 0 status 0
 *   output ad identity 640 <hex bytes>
 *   ...
 *   stack 1880 size=65536 (bytes, high-water mark of the painted stack)
 *   done 0
 *
 * Exit code 0 when every run returned 0, 1 otherwise (3 is a fault).
 */
#include <stddef.h>
#include <stdint.h>

#include "measure.h"
#include "semihost.h"

#ifndef FW_ROUNDS
#define FW_ROUNDS 2
#endif

typedef struct {
  const char *name;
  int32_t (*run)(void);
  void (*print)(void);
} FwModel;

extern const FwModel fw_models[];
extern const int fw_num_models;
extern const uint32_t fw_shared_pool_size;

void fw_print_output(const char *model, const char *name, const uint8_t *bytes,
                     size_t n);

void fw_print_output(const char *model, const char *name, const uint8_t *bytes,
                     size_t n) {
  fw_str("output ");
  fw_str(model);
  fw_str(" ");
  fw_str(name);
  fw_str(" ");
  fw_u64(n);
  fw_str(" ");
  fw_hex(bytes, n);
  fw_endl();
}

int main(void) {
  int code = 0;
  fw_str("models ");
  fw_i64(fw_num_models);
  fw_str(" pool ");
  fw_u64(fw_shared_pool_size);
  fw_endl();
  fw_stack_paint();
  for (int r = 0; r < FW_ROUNDS; r++) {
    for (int m = 0; m < fw_num_models; m++) {
      int32_t status = fw_models[m].run();
      fw_str("run ");
      fw_str(fw_models[m].name);
      fw_str(" ");
      fw_i64(r);
      fw_str(" status ");
      fw_i64(status);
      fw_endl();
      if (status != 0) code = 1;
      fw_models[m].print();
    }
  }
  fw_str("stack ");
  fw_u64(fw_stack_used());
  fw_str(" size=");
  fw_u64(fw_stack_size());
  fw_str(" (bytes, high-water mark of the painted stack)");
  fw_endl();
  fw_str("done ");
  fw_i64(code);
  fw_endl();
  return code;
}
