package tvmnode_test

import (
	"testing"

	"tvmnode.dev/go/internal/modelfloor"
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

// The Module rows: one inference of the smallest bundled model (the int8
// anomaly-detection autoencoder, ad01) through Module.Run, beside the same
// run through the model's descriptor with one plain cgo call and nothing
// of tvmnode (internal/modelfloor).

func benchModule(b *testing.B) *tn.Module {
	c := model(b, "ad01")
	m, err := tn.LoadModule(c.lib)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.SetInput(m.Inputs()[0].Name, c.inputs[0].Data); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkModuleRun: Module.Run of ad01.
func BenchmarkModuleRun(b *testing.B) {
	m := benchModule(b)
	defer m.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkModuleInference: SetInput, Run and CopyOutput of ad01, Go
// slices in and out.
func BenchmarkModuleInference(b *testing.B) {
	m := benchModule(b)
	defer m.Close()
	c := model(b, "ad01")
	x := c.inputs[0].Data.([]int8)
	y := make([]int8, 640)
	name := m.Inputs()[0].Name
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.SetInput(name, x); err != nil {
			b.Fatal(err)
		}
		if err := m.Run(); err != nil {
			b.Fatal(err)
		}
		if err := m.CopyOutput(0, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCgoFloorModelRun: the model's own run function, one plain cgo
// call each.
func BenchmarkCgoFloorModelRun(b *testing.B) {
	c := model(b, "ad01")
	f, err := modelfloor.Open(c.lib)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := f.Run(); st != 0 {
			b.Fatalf("status %d", st)
		}
	}
}
