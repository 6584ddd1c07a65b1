/*
 * fuzz_ir_pipeline.c: libFuzzer target for the way a saved model goes
 * through the compiler: JSON -> IRModule -> well-formedness check -> every
 * pass -> text -> IRModule.
 *
 * Any input must either fail to load or be refused by tn_ir_well_formed
 * with an error of an expected kind (ValueError, TypeError, KeyError,
 * AttributeError, IndexError) and a message, or be a value that is not a
 * module, or be a well-formed module that every built-in pass and the
 * default pipeline either transform or refuse (an expected error naming the
 * pass). Every module a pass returns, and the loaded module itself, must be
 * well formed and print (with metadata) to text that parses back to a
 * structurally equal module. Nothing may crash, leak an object or leave an
 * error raised.
 */
#include "fuzz_util.h"

static void round_trip(TnObject *mod, const char *what) {
  tn_object_release(fz_round_trip(mod, what));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    fz_warm_up(round_trip);
    ready = 1;
  }
  int64_t live = tn_object_live_count();
  TnAny value;
  if (tn_json_load((const char *)data, size, &value) != 0) {
    fz_expect_error("tn_json_load", NULL);
  } else {
    if (tn_any_is_object(&value) &&
        tn_object_is_instance(value.v_obj, tn_ir_types()->module)) {
      TnObject *mod = value.v_obj;
      if (tn_ir_well_formed(mod) != 0) {
        fz_expect_error("tn_ir_well_formed", "tn_ir_well_formed");
      } else {
        round_trip(mod, "the loaded module");
        fz_run_passes(mod, round_trip, 0);
      }
    }
    tn_any_clear(&value);
  }
  fz_check_leaks(live);
  return 0;
}
