package tvmnode

// #include "helpers.h"
import "C"

import "runtime"

// CLoopAddInt64 calls f(i, 2) for i in 0..n-1 from a C loop (tn_func_call)
// and returns the sum of the results. It exists for benchmarks that
// compare a call made from Go with the same call made from C, and for
// calling Go functions from C in tests.
func CLoopAddInt64(f Function, n int64) (int64, error) {
	p, err := f.live("CLoopAddInt64")
	if err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := int64(C.tngo_bench_c_calls(p, C.int64_t(n)))
	runtime.KeepAlive(f.r)
	if s == -1 && n > 0 {
		if e := C.tn_error_peek_raised(); e != nil {
			return 0, takeRaised("CLoopAddInt64")
		}
	}
	return s, nil
}
