/*
 * libm_check.c: compares support.c's math functions with the host's C
 * library, on the host.
 *
 * The wasm build's outputs equal the host executor's only if support.c
 * returns what the host libm returns for every argument the kernels pass.
 * This program builds support.c natively (its functions renamed with a
 * wasm_ prefix, so both sets link into one program) and counts the floats
 * on which the two disagree: expf and tanhf over every float whose bits are
 * a multiple of STEP (argv[1], default 1: all 2^32), roundf likewise,
 * round, floor and frexp over a few million doubles. Prints one line a
 * function and exits 1 when expf, roundf, round, floor or frexp disagree
 * anywhere (tanhf is only counted). See README.md for the command.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define memcpy wasm_memcpy
#define memmove wasm_memmove
#define memset wasm_memset
#define memcmp wasm_memcmp
#define frexp wasm_frexp
#define round wasm_round
#define roundf wasm_roundf
#define floor wasm_floor
#define floorf wasm_floorf
#define sqrtf wasm_sqrtf
#define fabsf wasm_fabsf
#define expf wasm_expf
#define tanhf wasm_tanhf
#include "support.c"
#undef memcpy
#undef memmove
#undef memset
#undef memcmp
#undef frexp
#undef round
#undef roundf
#undef floor
#undef floorf
#undef sqrtf
#undef fabsf
#undef expf
#undef tanhf

static int same32(float a, float b) {
  return bits32(a) == bits32(b) || (a != a && b != b);
}
static int same64(double a, double b) {
  return bits64(a) == bits64(b) || (a != a && b != b);
}

/* one float function over the floats whose bits are multiples of step */
static uint64_t sweep(const char *name, float (*mine)(float),
                      float (*host)(float), uint32_t step) {
  uint64_t bad = 0, n = 0;
  float first = 0.0f;
  for (uint64_t b = 0; b <= 0xffffffffull; b += step) {
    uint32_t u = (uint32_t)b;
    float x;
    memcpy(&x, &u, sizeof x);
    n++;
    if (!same32(mine(x), host(x)) && bad++ == 0) first = x;
  }
  printf("%-7s %llu of %llu floats differ", name, (unsigned long long)bad,
         (unsigned long long)n);
  if (bad) printf(" (first: %a: %a, host %a)", first, mine(first), host(first));
  printf("\n");
  return bad;
}

static float host_expf(float x) { return expf(x); }
static float host_tanhf(float x) { return tanhf(x); }
static float host_roundf(float x) { return roundf(x); }

int main(int argc, char **argv) {
  uint32_t step = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1;
  if (step == 0) step = 1;
  uint64_t bad = sweep("expf", wasm_expf, host_expf, step);
  bad += sweep("roundf", wasm_roundf, host_roundf, step);
  sweep("tanhf", wasm_tanhf, host_tanhf, step);
  /* doubles: random bit patterns plus the halves and integers near them */
  uint64_t dbad = 0, s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 4000000; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double x = from_bits64(s);
    if (i & 1) x = (double)(int64_t)(s >> 40) * 0.5 * ((i & 2) ? 1 : -1);
    int e1, e2;
    double m1 = wasm_frexp(x, &e1), m2 = frexp(x, &e2);
    if (!same64(wasm_round(x), round(x)) || !same64(wasm_floor(x), floor(x)) ||
        !same64(m1, m2) || (x == x && e1 != e2)) {
      if (dbad++ == 0) printf("double  first difference at %a\n", x);
    }
  }
  printf("round, floor, frexp: %llu of 4000000 doubles differ\n",
         (unsigned long long)dbad);
  return bad || dbad ? 1 : 0;
}
