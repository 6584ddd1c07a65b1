/*
 * crt_libc.h: the few C library functions the crt may call (memcpy, memset,
 * memmove and float math), without assuming the target ships a C library.
 *
 * A freestanding compiler provides <stdint.h> and <stddef.h> but not
 * <string.h> or <math.h>: clang --target=wasm32 and a bare arm-none-eabi-gcc
 * have neither. Where the headers exist (the host, newlib) they are used;
 * elsewhere the prototypes are declared here, and the firmware or the wasm
 * harness links an implementation. tests/crt_freestanding.sh checks that
 * nothing outside this list is referenced. Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_LIBC_H_
#define TVMNODE_CRT_LIBC_H_

#include <stddef.h>

#if defined(__has_include)
#if __has_include(<string.h>) && __has_include(<math.h>)
#define TN_CRT_HAVE_LIBC_HEADERS 1
#endif
#endif

#ifdef TN_CRT_HAVE_LIBC_HEADERS
#include <math.h>
#include <string.h>
#else
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
float expf(float x);
float tanhf(float x);
float sqrtf(float x);
float floorf(float x);
float roundf(float x);
float fabsf(float x);
float logf(float x);
double exp(double x);
double frexp(double x, int *e);
double round(double x);
double floor(double x);
double log(double x);
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define isnan(x) __builtin_isnan(x)
#endif

/* -ffreestanding implies -fno-builtin, under which gcc calls memcpy and
 * memset even for the small fixed-size copies of a kernel's inner loop
 * (halving the int8 convolutions' speed). The __builtin_ forms are still
 * expanded inline where the size allows, and call the function otherwise. */
#if defined(__GNUC__)
#undef memcpy
#undef memmove
#undef memset
#define memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define memmove(d, s, n) __builtin_memmove((d), (s), (n))
#define memset(d, c, n) __builtin_memset((d), (c), (n))
#endif

#endif /* TVMNODE_CRT_LIBC_H_ */
