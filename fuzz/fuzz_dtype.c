/*
 * fuzz_dtype.c: libFuzzer target for the DataType and Device parsers.
 *
 * A string either parses, and then prints to text that parses back to the
 * same value, or fails with a ValueError; nothing else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

static void expect_value_error(void) {
  TnObject *e = tn_error_take_raised();
  if (e == NULL || strcmp(tn_error_kind(e), "ValueError") != 0) abort();
  tn_object_release(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  DLDataType t, t2;
  char buf[64];
  if (tn_dtype_parse(text, &t) == 0) {
    int n = tn_dtype_print(t, buf, sizeof buf);
    if (n < 0 || (size_t)n >= sizeof buf) abort();
    if (tn_dtype_parse(buf, &t2) != 0 || memcmp(&t, &t2, sizeof t) != 0)
      abort();
  } else {
    expect_value_error();
  }
  DLDevice d, d2;
  if (tn_device_parse(text, &d) == 0) {
    int n = tn_device_print(d, buf, sizeof buf);
    if (n < 0 || (size_t)n >= sizeof buf) abort();
    if (tn_device_parse(buf, &d2) != 0 || d.device_type != d2.device_type ||
        d.device_id != d2.device_id)
      abort();
  } else {
    expect_value_error();
  }
  free(text);
  return 0;
}
