/*
 * bench_util.h: a tiny timing harness shared by the C benchmarks and their
 * C++ peer programs, so both sides are measured the same way.
 *
 * Each benchmark body runs `iters` operations; the harness picks `iters` so
 * one sample takes about 20 ms, takes BENCH_SAMPLES samples (5 when one
 * iteration alone takes a quarter second), and reports the median
 * nanoseconds per operation (machines here are noisy: medians, not
 * means). Results go to stdout as one JSON object per line.
 */
#ifndef TVMNODE_BENCH_UTIL_H_
#define TVMNODE_BENCH_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_SAMPLES 9

typedef void (*bench_fn)(int64_t iters, void *ctx);

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Keep the optimiser from deleting work whose result is unused. */
#define BENCH_KEEP(x) __asm__ __volatile__("" : : "g"(x) : "memory")

/* Median ns per operation of `fn`; `unit` is how many operations one
 * iteration counts for (e.g. a body that inserts 1000 keys per iteration). */
static inline double bench_run(const char *group, const char *name, bench_fn fn,
                               void *ctx, int64_t unit) {
  int64_t iters = 1;
  for (;;) { /* calibrate to ~20 ms */
    double t0 = bench_now_ns();
    fn(iters, ctx);
    double dt = bench_now_ns() - t0;
    if (dt > 2e7 || iters > (INT64_C(1) << 40)) break;
    iters *= dt < 2e6 ? 10 : 2;
  }
  /* One iteration of a quarter second or more (the million-node graphs):
   * fewer samples, still an odd number for a true median. */
  double t_one = bench_now_ns();
  fn(iters, ctx);
  int nsamples = bench_now_ns() - t_one > 2.5e8 ? 5 : BENCH_SAMPLES;
  double samples[BENCH_SAMPLES];
  for (int s = 0; s < nsamples; s++) {
    double t0 = bench_now_ns();
    fn(iters, ctx);
    samples[s] = (bench_now_ns() - t0) / (double)(iters * unit);
  }
  qsort(samples, (size_t)nsamples, sizeof(double), bench_cmp);
  double med = samples[nsamples / 2];
  printf("{\"group\": \"%s\", \"name\": \"%s\", \"ns_per_op\": %.3f, "
         "\"min\": %.3f, \"max\": %.3f, \"iters\": %lld}\n",
         group, name, med, samples[0], samples[nsamples - 1],
         (long long)iters);
  fflush(stdout);
  return med;
}

/* Report a derived figure (e.g. MB/s) that is not a time per operation. */
static inline void bench_report(const char *group, const char *name,
                                double value, const char *unit) {
  printf("{\"group\": \"%s\", \"name\": \"%s\", \"value\": %.3f, "
         "\"unit\": \"%s\"}\n",
         group, name, value, unit);
  fflush(stdout);
}

#endif /* TVMNODE_BENCH_UTIL_H_ */
