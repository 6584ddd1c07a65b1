package tvmnode_test

// The host executor from Go, mirroring rust-sys/tvmnode/tests/runtime.rs:
// modules parsed or built here run through the C kernels and agree with
// values computed in Go; bad inputs are errors naming the input; an
// operator without a kernel is an error when the executor is made; one
// executor shared between goroutines takes turns.

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	tn "tvmnode.dev/go/tvmnode"
)

const reluAdd = "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(add(%x, %x)) }"

// values are n deterministic values in [-2, 2).
func values(n int, seed uint32) []float32 {
	s := seed*2654435761 + 1
	out := make([]float32, n)
	for i := range out {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		out[i] = float32(s%4000)/1000 - 2
	}
	return out
}

func closeTo(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// expectErr checks err's kind and that its message has every part.
func expectErr(t *testing.T, err error, kind string, parts ...string) {
	t.Helper()
	if kindOf(err) != kind {
		t.Fatalf("want a %s, got %v", kind, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q not in %v", p, err)
		}
	}
}

func executorOf(t *testing.T, text string, entry ...string) *tn.Executor {
	t.Helper()
	mod := must(tn.ParseModule(text))
	defer mod.Release()
	return must(tn.NewExecutor(mod, entry...))
}

func TestExecutorDescribesInputsAndOutputs(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, "def @main(%image: Tensor[(1, 4), float32], %n: Tensor[(3,), int32]) { (nn.relu(%image), %n) }")
	defer ex.Close()
	want := []tn.TensorInfo{{Name: "image", Shape: []int64{1, 4}, DType: tn.Float32},
		{Name: "n", Shape: []int64{3}, DType: tn.Int32}}
	if got := ex.Inputs(); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs %+v", got)
	}
	outs := ex.Outputs()
	if len(outs) != 2 || outs[0].Name != "output0" || !reflect.DeepEqual(outs[0].Shape, []int64{1, 4}) ||
		outs[1].DType != tn.Int32 {
		t.Errorf("outputs %+v", outs)
	}
	if n := ex.Inputs()[0].NumElements(); n != 4 {
		t.Errorf("NumElements %d", n)
	}
	ex.Inputs()[0].Shape[0] = 99 // a copy: the executor's own is unchanged
	if ex.Inputs()[0].Shape[0] != 1 {
		t.Error("Inputs returned the executor's own slice")
	}
	s := must(ex.Stats())
	if s.Steps < 1 || s.Runs != 0 || s.RunNs != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestExecutorRunsAParsedModule(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, reluAdd)
	defer ex.Close()
	x := values(6, 1)
	want := make([]float32, 6)
	for i, v := range x {
		want[i] = float32(math.Max(float64(v+v), 0))
	}
	out := must(ex.Run(x))
	if len(out) != 1 || !reflect.DeepEqual(out[0], want) {
		t.Fatalf("got %v, want [%v]", out, want)
	}
	// Running again gives new values, not the old slice.
	again := must(ex.Run(x))
	out[0].([]float32)[0] = 42
	if again[0].([]float32)[0] == 42 {
		t.Error("two runs share their output")
	}
	if s := must(ex.Stats()); s.Steps != 2 {
		t.Errorf("add and nn.relu, unfused: %+v", s)
	}
}

func TestExecutorRunsAnEntryOtherThanMainWithTuplesAndLets(t *testing.T) {
	noLeaks(t)
	text := "def @double(%a: Tensor[(2, 3), float32]) {\n  add(%a, %a)\n}\n" +
		"def @net(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) {\n" +
		"  let %t = (@double(%x), nn.relu(%y));\n" +
		"  let %s = add(%t.0, %t.1);\n" +
		"  (%s, reshape(%s, newshape=[3, 2]))\n}\n"
	mod := must(tn.ParseModule(text))
	defer mod.Release()
	_, err := tn.NewExecutor(mod)
	expectErr(t, err, "KeyError", "main")
	_, err = tn.NewExecutor(mod, "nothing")
	expectErr(t, err, "KeyError", "nothing")
	_, err = tn.NewExecutor(mod, "net", "main")
	expectErr(t, err, "TypeError", "at most one entry")
	ex := must(tn.NewExecutor(mod, "net"))
	defer ex.Close()
	if in := ex.Inputs(); len(in) != 2 || in[0].Name != "x" || in[1].Name != "y" {
		t.Errorf("inputs %+v", in)
	}
	if s := ex.Outputs()[1].Shape; !reflect.DeepEqual(s, []int64{3, 2}) {
		t.Errorf("output 1 shape %v", s)
	}
	x, y := values(6, 2), values(3, 3)
	want := make([]float32, 6)
	for i := range want {
		want[i] = 2*x[i] + float32(math.Max(float64(y[i%3]), 0))
	}
	out := must(ex.Run(x, y))
	if len(out) != 2 {
		t.Fatalf("%d outputs", len(out))
	}
	closeTo(t, "output 0", out[0].([]float32), want, 1e-6)
	closeTo(t, "output 1", out[1].([]float32), want, 1e-6)
}

// convRef is an NHWC x HWIO convolution with padding 1, stride 1, in
// float64.
func convRef(x, w []float32, h, wd, ci, co int) []float32 {
	out := make([]float64, h*wd*co)
	for oy := 0; oy < h; oy++ {
		for ox := 0; ox < wd; ox++ {
			for ky := 0; ky < 3; ky++ {
				for kx := 0; kx < 3; kx++ {
					iy, ix := oy+ky-1, ox+kx-1
					if iy < 0 || ix < 0 || iy >= h || ix >= wd {
						continue
					}
					for c := 0; c < ci; c++ {
						xv := float64(x[(iy*wd+ix)*ci+c])
						for o := 0; o < co; o++ {
							out[(oy*wd+ox)*co+o] += xv * float64(w[((ky*3+kx)*ci+c)*co+o])
						}
					}
				}
			}
		}
	}
	res := make([]float32, len(out))
	for i, v := range out {
		res[i] = float32(v)
	}
	return res
}

func TestExecutorRunsConvAndDenseBeforeAndAfterFusion(t *testing.T) {
	noLeaks(t)
	text := "def @main(%x: Tensor[(1, 5, 4, 3), float32], %w: Tensor[(3, 3, 3, 2), float32],\n" +
		"          %b: Tensor[(2,), float32], %d: Tensor[(6, 40), float32]) {\n" +
		"  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\");\n" +
		"  %1 = nn.bias_add(%0, %b, axis=3);\n" +
		"  %2 = clip(%1, a_min=0.0, a_max=6.0);\n" +
		"  %3 = reshape(%2, newshape=[1, 40]);\n" +
		"  nn.dense(%3, %d)\n}\n"
	mod := must(tn.ParseModule(text))
	defer mod.Release()
	x, w, b, d := values(60, 4), values(54, 5), values(2, 6), values(240, 7)
	conv := convRef(x, w, 5, 4, 3, 2)
	act := make([]float64, len(conv))
	for i, v := range conv {
		act[i] = math.Min(math.Max(float64(v+b[i%2]), 0), 6)
	}
	want := make([]float32, 6)
	for u := range want {
		var sum float64
		for k := 0; k < 40; k++ {
			sum += act[k] * float64(d[u*40+k])
		}
		want[u] = float32(sum)
	}

	plain := must(tn.NewExecutor(mod))
	defer plain.Close()
	if s := plain.Outputs()[0].Shape; !reflect.DeepEqual(s, []int64{1, 6}) {
		t.Errorf("output shape %v", s)
	}
	out := must(plain.Run(x, w, b, d))
	closeTo(t, "unfused", out[0].([]float32), want, 1e-4)
	stats := must(plain.Stats())
	if stats.MACs != 5*4*2*27+6*40 {
		t.Errorf("stats %+v", stats)
	}

	pipeline := must(tn.SequentialNamed("fuse", "InferType", "FuseOps"))
	defer pipeline.Release()
	fusedMod := must(pipeline.Run(mod))
	defer fusedMod.Release()
	fused := must(tn.NewExecutor(fusedMod))
	defer fused.Close()
	again := must(fused.Run(x, w, b, d))
	closeTo(t, "fused", again[0].([]float32), out[0].([]float32), 1e-6)
	if s := must(fused.Stats()); s.Steps >= stats.Steps {
		t.Errorf("fused %d steps, unfused %d", s.Steps, stats.Steps)
	}
}

func TestExecutorRunsAModuleBuiltWithTheIRBuilders(t *testing.T) {
	noLeaks(t)
	a := must(tn.Var("a", []int64{4}, tn.Int32))
	defer a.Release()
	b := must(tn.Var("b", []int64{2, 4}, tn.Int32))
	defer b.Release()
	body := must(tn.CallOp("maximum", []tn.Expr{a, b}, nil))
	defer body.Release()
	fn := must(tn.NewFunction([]tn.Expr{a, b}, body))
	defer fn.Release()
	mod := must(tn.ModuleFromExpr(fn))
	defer mod.Release()
	ex := must(tn.NewExecutor(mod))
	defer ex.Close()
	av := []int32{3, -7, 0, 12}
	bv := []int32{1, 2, 3, 4, -5, -6, 70, 8}
	want := make([]int32, 8)
	for i := range want {
		want[i] = av[i%4]
		if bv[i] > want[i] {
			want[i] = bv[i]
		}
	}
	out := must(ex.Run(av, bv))
	if !reflect.DeepEqual(out, []interface{}{want}) {
		t.Errorf("got %v, want %v", out, want)
	}
}

func TestExecutorBadInputsNameTheInput(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3,), float32]) { add(%x, %y) }")
	defer ex.Close()
	x, y := make([]float32, 6), make([]float32, 3)
	// Count.
	_, err := ex.Run(x)
	expectErr(t, err, "TypeError", "expected 2 inputs, got 1")
	_, err = ex.Run(x, y, y)
	expectErr(t, err, "TypeError", "expected 2 inputs, got 3")
	_, err = ex.Run()
	expectErr(t, err, "TypeError", "expected 2 inputs, got 0")
	// Length: the slice goes in one-dimensional.
	_, err = ex.Run(x, make([]float32, 4))
	expectErr(t, err, "TypeError", "input 1 ('y')", "Tensor[(3,), float32]", "Tensor[(4,), float32]")
	// Element type.
	_, err = ex.Run(make([]int32, 6), y)
	expectErr(t, err, "TypeError", "input 0 ('x')", "Tensor[(2, 3), int32]")
	_, err = ex.Run(x, make([]float64, 3))
	expectErr(t, err, "TypeError", "input 1 ('y')", "float64")
	// Go values that are no tensor.
	_, err = ex.Run(x, []string{"a", "b", "c"})
	expectErr(t, err, "TypeError", "input 1 ('y')", "[]string")
	_, err = ex.Run(1.5, y)
	expectErr(t, err, "TypeError", "input 0 ('x')", "float64")
	// A handle that is no tensor.
	mod := must(tn.ParseModule(reluAdd))
	defer mod.Release()
	_, err = ex.Run(mod, y)
	expectErr(t, err, "TypeError", "input 0 ('x')", "tn.Tensor", "ir.IRModule")
	// The error has a frame naming the Go caller.
	_, err = ex.Run(x)
	var e *tn.Error
	if !errors.As(err, &e) || indexOf(e.Frames(), "runtime_test.go") < 0 {
		t.Errorf("frames %v", e.Frames())
	}
}

func TestExecutorOutputsOfOtherElementTypes(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, "def @main(%x: Tensor[(4,), float32]) { (cast(%x, dtype=\"int32\"), cast(%x, dtype=\"int8\")) }")
	defer ex.Close()
	out := must(ex.Run([]float32{1.5, -2.5, 3, 0.25}))
	if !reflect.DeepEqual(out, []interface{}{[]int32{1, -2, 3, 0}, []int8{1, -2, 3, 0}}) {
		t.Errorf("got %#v", out)
	}
}

func TestExecutorModulesThatCannotRunFailWhenMade(t *testing.T) {
	noLeaks(t)
	mod := must(tn.ParseModule("def @main(%d: Tensor[(4,), float64]) { exp(%d) }"))
	defer mod.Release()
	_, err := tn.NewExecutor(mod)
	expectErr(t, err, "NotImplementedError", "exp", "no kernel", "Tensor[(4,), float64]")
	// Not a module.
	_, err = tn.NewExecutor(tn.IRModule{})
	expectErr(t, err, "ValueError", "NewExecutor")
	fn := must(mod.Function("main"))
	defer fn.Release()
	_, err = tn.NewExecutor(tn.IRModule{Object: fn.Object})
	expectErr(t, err, "TypeError", "ir.IRModule", "ir.Function")
}

func TestExecutorSharedBetweenGoroutinesTakesTurns(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, reluAdd)
	defer ex.Close()
	check(t, ex.SetProfiling(true))
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for round := 0; round < 50; round++ {
				x := values(6, uint32(k*100+round))
				out, err := ex.Run(x)
				if err != nil {
					errs <- err
					return
				}
				for i, v := range out[0].([]float32) {
					if want := float32(math.Max(float64(x[i]+x[i]), 0)); v != want {
						errs <- tn.Errorf(tn.ValueError, "goroutine %d: element %d is %v, want %v", k, i, v, want)
						return
					}
				}
				if round%10 == 0 {
					if _, err := ex.Stats(); err != nil {
						errs <- err
						return
					}
				}
			}
		}(k)
	}
	report(t, &wg, errs)
	s := must(ex.Stats())
	if s.Runs != 200 || s.KernelNs <= 0 || s.RunNs < s.KernelNs {
		t.Errorf("stats %+v", s)
	}
	check(t, ex.SetProfiling(false))
	if s := must(ex.Stats()); s.Runs != 0 {
		t.Errorf("counters not reset: %+v", s)
	}
}

func TestExecutorThreadsGiveTheOneThreadOutputs(t *testing.T) {
	noLeaks(t)
	text := "def @main(%x: Tensor[(1, 12, 10, 8), float32], %w: Tensor[(3, 3, 8, 16), float32]) {\n" +
		"  nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")\n}\n"
	x, w := values(12*10*8, 11), values(3*3*8*16, 12)
	one := executorOf(t, text)
	defer one.Close()
	want := must(one.Run(x, w))[0].([]float32)
	closeTo(t, "one thread", want, convRef(x, w, 12, 10, 8, 16), 1e-4)
	many := executorOf(t, text)
	defer many.Close()
	if s := must(one.Stats()); s.Threads != 1 || s.SplitSteps != 0 {
		t.Errorf("one thread: stats %+v", s)
	}
	check(t, many.SetThreads(3))
	// the convolution (138,240 MACs) is cut over the three threads
	if s := must(many.Stats()); s.Threads != 3 || s.SplitSteps != 1 {
		t.Errorf("three threads: stats %+v", s)
	}
	for run := 0; run < 3; run++ {
		closeTo(t, "three threads", must(many.Run(x, w))[0].([]float32), want, 1e-6)
	}
	expectErr(t, many.SetThreads(0), "ValueError", "tn_program_set_threads", "expected 1 to 64", "got 0")
	expectErr(t, many.SetThreads(65), "ValueError", "expected 1 to 64", "got 65")
	check(t, many.SetThreads(1))
	check(t, many.Close())
	expectErr(t, many.SetThreads(2), "ValueError", "closed")
}

func TestExecutorClose(t *testing.T) {
	noLeaks(t)
	ex := executorOf(t, reluAdd)
	check(t, ex.Close())
	check(t, ex.Close())
	_, err := ex.Run(make([]float32, 6))
	expectErr(t, err, "ValueError", "closed")
	_, err = ex.Stats()
	expectErr(t, err, "ValueError", "closed")
	expectErr(t, ex.SetProfiling(true), "ValueError", "closed")
	if len(ex.Inputs()) != 1 {
		t.Error("the description went with the program")
	}
	// One never closed is released by the finalizers (noLeaks collects).
	_ = executorOf(t, reluAdd)
}
