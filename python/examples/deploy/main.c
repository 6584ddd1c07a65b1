/*
 * main.c: a host program around a compiled model, as a firmware's main
 * loop would use it: static buffers sized by the generated header, one
 * call of tvmgen_<name>_run per inference, nothing allocated.
 *
 *   ./model INPUT.bin OUTPUT.bin [REPEAT]
 *
 * reads the raw input tensor, runs the model (REPEAT times, timing the
 * median), writes the raw output tensor and prints the status, the stack
 * the run used (measured by painting: the stack below main is filled with
 * a pattern before the run and scanned after it) and the time per run.
 * Built by examples/deploy.py with -DMODEL_HEADER=... -DNAME=... and the
 * size macros of the model's one input and one output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include MODEL_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(x) CAT(CAT(CAT(tvmgen_, NAME), _), x)
#define STRUCT(x) struct CAT(CAT(CAT(tvmgen_, NAME), _), x)

static uint8_t input[INPUT_SIZE];
static uint8_t output[OUTPUT_SIZE];
static uint8_t pool[POOL_SIZE > 0 ? POOL_SIZE : 1] __attribute__((aligned(64)));

#define PAINT 65536
#define PATTERN 0xA5

/* Fill PAINT bytes of stack below the caller with the pattern; returns
 * where they start. The run that follows, called from the same frame,
 * overwrites them from the top down as deep as it goes. */
__attribute__((noinline)) static uintptr_t paint(void) {
  volatile uint8_t area[PAINT];
  for (size_t i = 0; i < PAINT; i++) area[i] = PATTERN;
  return (uintptr_t)area;
}

/* How much of the painted area was overwritten, counted from its far
 * end (read after the run returned; nothing has used that stack since). */
static size_t used(uintptr_t base) {
  const volatile uint8_t *area = (const volatile uint8_t *)base;
  size_t i = 0;
  while (i < PAINT && area[i] == PATTERN) i++;
  return PAINT - i;
}

static int run_once(void) {
  STRUCT(inputs) in = {input};
  STRUCT(outputs) out = {output};
  STRUCT(workspace_pools) ws = {pool};
  return (int)FN(run)(&in, &out, &ws);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s INPUT.bin OUTPUT.bin [REPEAT]\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(input, 1, sizeof input, f) != sizeof input) {
    fprintf(stderr, "%s: cannot read %zu bytes\n", argv[1], sizeof input);
    return 2;
  }
  fclose(f);
  int repeat = argc > 3 ? atoi(argv[3]) : 1;
  if (repeat < 1 || repeat > 100000) repeat = 1;
  uintptr_t base = paint();
  int status = run_once();
  size_t stack = used(base);
  double *ns = malloc(sizeof(double) * (size_t)repeat);
  for (int r = 0; r < repeat && status == 0 && ns; r++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    status = run_once();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ns[r] = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  }
  if (ns) qsort(ns, (size_t)repeat, sizeof(double), cmp);
  f = fopen(argv[2], "wb");
  if (!f || fwrite(output, 1, sizeof output, f) != sizeof output) {
    fprintf(stderr, "%s: cannot write\n", argv[2]);
    return 2;
  }
  fclose(f);
  printf("status %d stack %zu ns %.0f\n", status, stack,
         ns ? ns[repeat / 2] : 0.0);
  free(ns);
  return status == 0 ? 0 : 1;
}
