package tvmnode_test

import (
	"testing"

	tn "tvmnode.dev/go/tvmnode"
	"tvmnode.dev/go/tvmnode/internal/cgofloor"
	"tvmnode.dev/go/tvmnode/internal/cthreads"
)

// Every benchmark is one call of an add of two ints, so the rows compare
// what each crossing costs: C -> C is the floor, measured by a C loop in the
// same process (go/run_bench.sh prints the ratios).

func cAdd(b *testing.B) tn.Function {
	f, err := tn.GetGlobal("testing.add_i64")
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func goAdd(b *testing.B) tn.Function {
	f, err := tn.FunctionOf(func(x, y int64) int64 { return x + y })
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkCToC: a C loop calling the C function (tn_func_call).
func BenchmarkCToC(b *testing.B) {
	f := cAdd(b)
	defer f.Release()
	b.ResetTimer()
	if _, err := cthreads.CallLoop(f.Pointer(), int64(b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGoToC: Go calling the C function with CallInt64 (one cgo call).
func BenchmarkGoToC(b *testing.B) {
	f := cAdd(b)
	defer f.Release()
	b.ResetTimer()
	var sum int64
	for i := 0; i < b.N; i++ {
		v, err := f.CallInt64(int64(i), 2)
		if err != nil {
			b.Fatal(err)
		}
		sum += v
	}
	_ = sum
}

// BenchmarkGoToCAny: the same through Call (interface values both ways).
func BenchmarkGoToCAny(b *testing.B) {
	f := cAdd(b)
	defer f.Release()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Call(i, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCToGo: a C loop calling a Go func (a cgo callback each time).
func BenchmarkCToGo(b *testing.B) {
	f := goAdd(b)
	defer f.Release()
	b.ResetTimer()
	if _, err := cthreads.CallLoop(f.Pointer(), int64(b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCgoFloorGoToC: a Go -> C call of a plain C add (no tvmnode).
func BenchmarkCgoFloorGoToC(b *testing.B) {
	var sum int64
	for i := 0; i < b.N; i++ {
		sum += cgofloor.Add(int64(i), 2)
	}
	_ = sum
}

// BenchmarkCgoFloorCToGo: a C loop calling a plain exported Go add.
func BenchmarkCgoFloorCToGo(b *testing.B) {
	cgofloor.CallbackLoop(int64(b.N))
}
