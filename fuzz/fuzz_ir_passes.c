/*
 * fuzz_ir_passes.c: libFuzzer target for the passes, on modules written in
 * the text format.
 *
 * The input is parsed (a parse error must be an expected error naming
 * tn_ir_parse) and checked with tn_ir_well_formed (which may refuse it
 * the same way: passes assume well-formed input); a well-formed module
 * then goes through every built-in pass alone and
 * through three pipelines: the default one (InferType, SimplifyExpr,
 * FoldConstant, FuseOps, DeadCodeElimination), the same backwards, and
 * fusion of an already fused module. A pass may refuse the module with an
 * error of an expected kind that names it; what it returns must be well
 * formed and print, with and without metadata. Nothing may crash, leak an
 * object or leave an error raised.
 */
#include "fuzz_util.h"

static void print(TnObject *mod, const char *what) {
  for (int meta = 0; meta < 2; meta++) {
    TnObject *text = tn_ir_astext(mod, meta);
    fz_must(text, what);
    tn_object_release(text);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    fz_warm_up(print);
    ready = 1;
  }
  int64_t live = tn_object_live_count();
  TnObject *mod = tn_ir_parse((const char *)data, size);
  if (mod == NULL) {
    fz_expect_error("tn_ir_parse", "tn_ir_parse");
  } else {
    if (tn_ir_well_formed(mod) != 0)
      fz_expect_error("tn_ir_well_formed", "tn_ir_well_formed");
    else
      fz_run_passes(mod, print, 1);
    tn_object_release(mod);
  }
  fz_check_leaks(live);
  return 0;
}
