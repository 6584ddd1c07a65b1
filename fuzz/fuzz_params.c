/*
 * fuzz_params.c: libFuzzer target for the parameter file reader
 * (tn_params_load, runtime/host/params.c).
 *
 * The first byte picks a mode, the rest is the file. In the odd modes the
 * target first writes the correct CRC-32 into the file's last four bytes,
 * so that mutations reach the entries behind the checksum instead of
 * stopping at it. Any file must either load, and then save back to exactly
 * its own bytes (when no name repeats: a repeated name keeps one tensor),
 * or fail with a ValueError from tn_params_load; it must never crash, read
 * out of bounds, leak an object or leave an error raised.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmnode/tvmnode.h>

#include "runtime/host/include/tvmnode/params.h"

static void must_err(int ok, const char *what, const TnObject *e) {
  if (ok) return;
  fprintf(stderr, "%s\n  %s: %s\n", what, e ? tn_error_kind(e) : "(none)",
          e ? tn_error_message(e) : "");
  abort();
}

static void must(int ok, const char *what) {
  must_err(ok, what, tn_error_peek_raised());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int64_t live = tn_object_live_count();
  size_t n = size - 1;
  uint8_t *file = malloc(n ? n : 1);
  if (file == NULL) return 0;
  memcpy(file, data + 1, n);
  if ((data[0] & 1) && n >= 4) {
    uint32_t crc = tn_params_crc32(0, file, n - 4);
    for (int k = 0; k < 4; k++) file[n - 4 + k] = (uint8_t)(crc >> 8 * k);
  }
  TnObject *map = tn_params_load(file, n);
  if (map == NULL) {
    TnObject *e = tn_error_take_raised();
    must_err(e && strcmp(tn_error_kind(e), "ValueError") == 0 &&
                 strncmp(tn_error_message(e), "tn_params_load: ", 16) == 0,
             "a bad file must be a ValueError from tn_params_load", e);
    tn_object_release(e);
  } else {
    uint32_t count = (uint32_t)file[12] | (uint32_t)file[13] << 8 |
                     (uint32_t)file[14] << 16 | (uint32_t)file[15] << 24;
    must(tn_map_size(map) <= (int64_t)count, "more tensors than the file has");
    TnObject *again = tn_params_save(map);
    must(again != NULL, "a loaded file must save");
    if (tn_map_size(map) == (int64_t)count) {
      const TnStringObj *b = (const TnStringObj *)again;
      must((size_t)b->size == n && memcmp(b->data, file, n) == 0,
           "saving what was loaded must give the same bytes");
    }
    tn_object_release(again);
    tn_object_release(map);
  }
  free(file);
  must(tn_object_live_count() == live, "objects leaked");
  must(tn_error_peek_raised() == NULL, "an error was left raised");
  return 0;
}
