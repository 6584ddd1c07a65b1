// Package tvmnodetest helps tests and programs that check tvmnode objects
// are not leaked. A Go handle releases its object when the collector
// finalizes it, so the count of live objects settles only after a few
// collections; Settle waits for that.
package tvmnodetest

import (
	"runtime"
	"time"

	tn "tvmnode.dev/go/tvmnode"
)

// Settle runs the collector (which releases what finalizers hold) until
// the count of live tvmnode objects (tvmnode.LiveObjects) reaches want,
// or, when want is negative, until it has not moved for five rounds. It
// returns the last count, after at most about 200 rounds of 2 ms.
func Settle(want int64) int64 {
	last, stable := tn.LiveObjects(), 0
	for i := 0; i < 200; i++ {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		n := tn.LiveObjects()
		if n == last {
			stable++
		} else {
			stable = 0
		}
		if (want >= 0 && n == want) || (want < 0 && stable >= 5) {
			return n
		}
		last = n
	}
	return last
}
