/*
 * status.c: names and descriptions of the crt's status codes, generated from
 * the one table in status.h. A switch rather than an array indexed by code,
 * so a code out of range is simply unknown and the table may have gaps.
 */
#include "tvmnode/crt/status.h"

const char *tn_crt_status_name(int32_t status) {
  switch (status) {
#define TN_CRT_STATUS_NAME_(name, code, doc) \
  case code: return #name;
    TN_CRT_STATUS_MAP(TN_CRT_STATUS_NAME_)
#undef TN_CRT_STATUS_NAME_
    default: return "UNKNOWN";
  }
}

const char *tn_crt_status_doc(int32_t status) {
  switch (status) {
#define TN_CRT_STATUS_DOC_(name, code, doc) \
  case code: return doc;
    TN_CRT_STATUS_MAP(TN_CRT_STATUS_DOC_)
#undef TN_CRT_STATUS_DOC_
    default: return "unknown status";
  }
}
