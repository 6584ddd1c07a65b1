/*
 * cnop.c: the C side of the ctypes peer in bench_python.py. No-op
 * functions of the arities the call benchmarks use, and a function that
 * calls a callback, so ctypes is measured doing what tvmnode and tvm-ffi do.
 * Built by the benchmark with the system C compiler.
 */
#include <stdint.h>

void nop0(void) {}
void nop1(int64_t a) { (void)a; }
void nop3(int64_t a, int64_t b, int64_t c) { (void)a, (void)b, (void)c; }
void nop3p(void *a, void *b, void *c) { (void)a, (void)b, (void)c; }
int64_t call_cb(int64_t (*cb)(int64_t), int64_t x) { return cb(x); }
