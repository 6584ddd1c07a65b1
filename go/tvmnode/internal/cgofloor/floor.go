// Package cgofloor measures what any cgo binding pays on this machine: a
// Go -> C call of a C function that adds two ints, and a C -> Go callback
// of a Go function that does the same. The binding's benchmarks report
// their figures beside these floors.
package cgofloor

/*
#include <stdint.h>
extern int64_t cgofloorAdd(int64_t, int64_t);
static int64_t cgofloor_add(int64_t a, int64_t b) { return a + b; }
static int64_t cgofloor_loop(int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; i++) s += cgofloorAdd(i, 2);
  return s;
}
*/
import "C"

//export cgofloorAdd
func cgofloorAdd(a, b C.int64_t) C.int64_t { return a + b }

// Add is one Go -> C call.
func Add(a, b int64) int64 { return int64(C.cgofloor_add(C.int64_t(a), C.int64_t(b))) }

// CallbackLoop makes n C -> Go callbacks from one C loop.
func CallbackLoop(n int64) int64 { return int64(C.cgofloor_loop(C.int64_t(n))) }
