/*
 * fuzz_json.c: libFuzzer target for the JSON graph loader.
 *
 * Any input must either load (and then survive a save and a second load
 * that is structurally equal to the first) or fail with a ValueError; it
 * must never crash, leak an object, or leave the raised slot dirty after
 * the error is taken. A few node types are registered so that inputs can
 * reach the reflected-field paths.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

typedef struct {
  TnObject header;
  int64_t value;
} FLeaf;

typedef struct {
  TnObject header;
  TnAny a, b;
} FAdd;

typedef struct {
  TnObject header;
  TnObject *name;
  TnObject *leaf;
  double f;
  bool flag;
  DLDataType dtype;
  DLDevice device;
} FMix;

static void register_types(void) {
  static const TnFieldDesc leaf[] = {TN_FIELD_INT(FLeaf, value, 0, NULL)};
  static const TnFieldDesc add[] = {TN_FIELD_ANY(FAdd, a, 0, NULL),
                                    TN_FIELD_ANY(FAdd, b, TN_FIELD_OPTIONAL,
                                                 NULL)};
  static const TnFieldDesc mix[] = {
      TN_FIELD_STR(FMix, name, TN_FIELD_OPTIONAL, NULL),
      TN_FIELD_OBJ(FMix, leaf, "fuzz.Leaf", TN_FIELD_OPTIONAL, NULL),
      TN_FIELD_FLOAT_D(FMix, f, 1.0, 0, NULL),
      TN_FIELD_BOOL(FMix, flag, TN_FIELD_OPTIONAL, NULL),
      TN_FIELD_DTYPE(FMix, dtype, TN_FIELD_OPTIONAL, NULL),
      TN_FIELD_DEVICE(FMix, device, TN_FIELD_OPTIONAL, NULL),
  };
  if (TN_NODE_REGISTER(FLeaf, "fuzz.Leaf", TN_TYPE_OBJECT, TN_NODE_TREE,
                       leaf) < 0 ||
      TN_NODE_REGISTER(FAdd, "fuzz.Add", TN_TYPE_OBJECT, TN_NODE_TREE, add) < 0 ||
      TN_NODE_REGISTER(FMix, "fuzz.Mix", TN_TYPE_OBJECT, TN_NODE_DAG, mix) < 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    register_types();
    ready = 1;
  }
  int64_t live = tn_object_live_count();
  TnAny out;
  if (tn_json_load((const char *)data, size, &out) != 0) {
    TnObject *e = tn_error_take_raised();
    if (e == NULL || strcmp(tn_error_kind(e), "ValueError") != 0) {
      fprintf(stderr, "unexpected error kind %s: %s\n",
              e ? tn_error_kind(e) : "(none)", e ? tn_error_message(e) : "");
      abort();
    }
    tn_object_release(e);
  } else {
    /* What loads must save, and load again to the same structure. */
    TnObject *text = tn_json_save(&out, 0);
    if (text == NULL) abort();
    TnAny again;
    const TnStringObj *s = (const TnStringObj *)text;
    if (tn_json_load(s->data, (size_t)s->size, &again) != 0) abort();
    if (tn_structural_equal(&out, &again, 0) != 1) abort();
    tn_any_clear(&again);
    tn_object_release(text);
    tn_any_clear(&out);
  }
  if (tn_object_live_count() != live) {
    fprintf(stderr, "objects leaked: %lld\n",
            (long long)(tn_object_live_count() - live));
    abort();
  }
  return 0;
}
