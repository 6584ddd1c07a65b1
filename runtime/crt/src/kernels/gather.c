/*
 * gather.c: TFLite's GATHER (batch_dims 0) for any element size: the data
 * seen as [outer, n, inner] (inner in bytes), each of `count` int32
 * indices picks one [inner] block along n, for every outer. A negative
 * index counts from the end (numpy's and ONNX's take; TFLite's models
 * never hold one, its kernel refuses them); one outside [-n, n) is
 * TN_CRT_INVALID_ARGUMENT before anything is written.
 */
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "tvmnode/crt/kernels.h"
#include "crt_libc.h"

TN_CRT_CALL(gather, TnCrtCallGather) {
  const unsigned char *data = in[0];
  const int32_t *idx = in[1];
  unsigned char *dst = out;
  if (p->outer < 0 || p->n < 0 || p->inner < 0 || p->count < 0)
    return TN_CRT_INVALID_ARGUMENT;
  if ((int64_t)p->outer * p->count * p->inner == 0) return TN_CRT_OK;
  if (data == NULL || idx == NULL || dst == NULL)
    return TN_CRT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < p->count; i++)
    if (idx[i] < -p->n || idx[i] >= p->n) return TN_CRT_INVALID_ARGUMENT;
  const size_t block = (size_t)p->inner;
  for (int32_t o = 0; o < p->outer; o++) {
    const unsigned char *src = data + (size_t)o * (size_t)p->n * block;
    for (int32_t i = 0; i < p->count; i++, dst += block) {
      int32_t at = idx[i] < 0 ? idx[i] + p->n : idx[i];
      memcpy(dst, src + (size_t)at * block, block);
    }
  }
  return TN_CRT_OK;
}
