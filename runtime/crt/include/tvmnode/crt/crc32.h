/*
 * crc32.h: the crt's one CRC-32, shared by parameter blobs (params.h) and
 * device-session frames (frame.h). Freestanding, no allocation.
 */
#ifndef TVMNODE_CRT_CRC32_H_
#define TVMNODE_CRT_CRC32_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, as zlib and Go's
 * hash/crc32 compute it) of `size` bytes at `data`, continued from `crc`
 * (0 to start, or the result over the bytes before):
 * tn_crt_crc32(0, "123456789", 9) == 0xCBF43926. Four bits at a time from
 * a 64-byte table rather than a 1 KB one: on a microcontroller the flash
 * matters more than the speed. */
uint32_t tn_crt_crc32(uint32_t crc, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_CRC32_H_ */
