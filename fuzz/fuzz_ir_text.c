/*
 * fuzz_ir_text.c: libFuzzer target for the IR text parser.
 *
 * Any input must either parse into a module (which then prints, parses
 * again and is structurally equal to the first) or fail with a ValueError,
 * TypeError, KeyError or AttributeError whose message gives a line and
 * column; it must never crash or leak an object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

static int expected_kind(const char *k) {
  return strcmp(k, "ValueError") == 0 || strcmp(k, "TypeError") == 0 ||
         strcmp(k, "KeyError") == 0 || strcmp(k, "AttributeError") == 0 ||
         strcmp(k, "IndexError") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = tn_object_live_count();
  TnObject *mod = tn_ir_parse((const char *)data, size);
  if (mod == NULL) {
    TnObject *e = tn_error_take_raised();
    if (e == NULL || !expected_kind(tn_error_kind(e)) ||
        strstr(tn_error_message(e), "tn_ir_parse") == NULL) {
      fprintf(stderr, "unexpected error %s: %s\n",
              e ? tn_error_kind(e) : "(none)", e ? tn_error_message(e) : "");
      abort();
    }
    tn_object_release(e);
  } else {
    TnObject *text = tn_ir_astext(mod, 1);
    if (text == NULL) abort();
    const TnStringObj *s = (const TnStringObj *)text;
    TnObject *again = tn_ir_parse(s->data, (size_t)s->size);
    if (again == NULL) {
      fprintf(stderr, "printed text does not parse: %s\n%s\n",
              tn_error_message(tn_error_peek_raised()), s->data);
      abort();
    }
    TnAny a = tn_any_obj(mod), b = tn_any_obj(again);
    if (tn_structural_equal(&a, &b, 0) != 1) {
      fprintf(stderr, "round trip differs:\n%s\n", s->data);
      abort();
    }
    tn_object_release(again);
    tn_object_release(text);
    tn_object_release(mod);
  }
  if (tn_object_live_count() != live) {
    fprintf(stderr, "objects leaked: %lld\n",
            (long long)(tn_object_live_count() - live));
    abort();
  }
  return 0;
}
