package tvmnode_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tn "tvmnode.dev/go/tvmnode"
	"tvmnode.dev/go/tvmnode/internal/cthreads"
	tnt "tvmnode.dev/go/tvmnode/tvmnodetest"
)

// noLeaks records the live-object count and, at the end of the test,
// checks that it is back (after the garbage collector has finalized the
// handles the test did not release).
func noLeaks(t *testing.T) {
	t.Helper()
	runtime.GC()
	before := tnt.Settle(-1)
	t.Cleanup(func() {
		if after := tnt.Settle(before); after != before {
			t.Errorf("%d tvmnode objects left alive", after-before)
		}
	})
}

// must returns v, or fails the running test (by panicking, which the
// testing package reports with the stack) when err is not nil.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// report waits for the goroutines of wg, then fails the test with every
// error they sent on errs.
func report(t *testing.T, wg *sync.WaitGroup, errs chan error) {
	t.Helper()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// inParallel runs fn(0) ... fn(n-1) in n goroutines and fails the test
// with every error they return.
func inParallel(t *testing.T, n int, fn func(g int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if err := fn(g); err != nil {
				errs <- err
			}
		}(g)
	}
	report(t, &wg, errs)
}

func kindOf(err error) string {
	var e *tn.Error
	if errors.As(err, &e) {
		return string(e.Kind())
	}
	return fmt.Sprintf("not a *tn.Error: %T", err)
}

func last(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[len(ss)-1]
}

// indexOf is the index of the first of ss containing sub, or -1.
func indexOf(ss []string, sub string) int {
	for i, s := range ss {
		if strings.Contains(s, sub) {
			return i
		}
	}
	return -1
}

func TestValuesRoundTripThroughC(t *testing.T) {
	noLeaks(t)
	echo := must(tn.GetGlobal("testing.echo"))
	defer echo.Release()
	long := strings.Repeat("tvmnode ", 10)
	for _, v := range []interface{}{nil, true, false, int64(-7), 2.5, "", "short", long,
		tn.Float32, tn.Int8, tn.CPU} {
		got := must(echo.Call(v))
		if got != v {
			t.Errorf("echo(%#v) = %#v", v, got)
		}
	}
	if got := must(echo.Call(42)); got != int64(42) {
		t.Errorf("echo(int 42) = %#v", got)
	}
	if got := must(echo.Call(uint8(200))); got != int64(200) {
		t.Errorf("echo(uint8 200) = %#v", got)
	}
	b := must(echo.Call([]byte{0, 1, 2, 255})).([]byte)
	if string(b) != "\x00\x01\x02\xff" {
		t.Errorf("bytes came back as %v", b)
	}
	arr := must(echo.Call([]interface{}{int64(1), "two", 3.0})).(tn.Array)
	items := must(arr.Items())
	if len(items) != 3 || items[0] != int64(1) || items[1] != "two" || items[2] != 3.0 {
		t.Errorf("array items %#v", items)
	}
	arr.Release()
	m := must(echo.Call(map[string]interface{}{"b": int64(2), "a": "x"})).(tn.Map)
	if v := must(m.Get("a")); v != "x" || m.Len() != 2 {
		t.Errorf("map get a = %#v, len %d", v, m.Len())
	}
	_, err := m.Get("missing")
	if kindOf(err) != "KeyError" || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing key: %v", err)
	}
	m.Release()
	dt := must(tn.ParseDataType("uint8x4"))
	if dt != (tn.DataType{Code: 1, Bits: 8, Lanes: 4}) || dt.String() != "uint8x4" {
		t.Errorf("uint8x4 parsed as %v", dt)
	}
	if _, err := tn.ParseDataType("float3x"); kindOf(err) != "ValueError" {
		t.Errorf("bad dtype: %v", err)
	}
	if _, err := echo.Call(uint64(1) << 63); kindOf(err) != "TypeError" ||
		!strings.Contains(err.Error(), "argument 0") {
		t.Errorf("uint64 overflow: %v", err)
	}
	if _, err := echo.Call(struct{}{}); kindOf(err) != "TypeError" {
		t.Errorf("struct argument: %v", err)
	}
}

func TestCallCFunctionsAndErrors(t *testing.T) {
	noLeaks(t)
	add := must(tn.GetGlobal("testing.add_i64"))
	defer add.Release()
	if v := must(add.Call(40, 2)); v != int64(42) {
		t.Errorf("add = %#v", v)
	}
	if v := must(add.CallInt64(40, 2)); v != 42 {
		t.Errorf("CallInt64 = %d", v)
	}
	_, err := add.Call("x", 2)
	if kindOf(err) != "TypeError" || !strings.Contains(err.Error(), "testing.add_i64") {
		t.Errorf("wrong argument type: %v", err)
	}
	var e *tn.Error
	if !errors.As(err, &e) || !strings.Contains(last(e.Frames()), "Go: Function.Call") ||
		!strings.Contains(last(e.Frames()), "tvmnode_test.TestCallCFunctionsAndErrors") {
		t.Errorf("frames do not name the Go caller: %q", e.Frames())
	}
	if _, err := tn.GetGlobal("no.such.function"); kindOf(err) != "KeyError" ||
		!strings.Contains(err.Error(), "no.such.function") {
		t.Errorf("missing function: %v", err)
	}
	raise := must(tn.GetGlobal("testing.raise"))
	defer raise.Release()
	if _, err := raise.Call("IndexError", "from C"); kindOf(err) != "IndexError" ||
		!strings.Contains(err.Error(), "from C") {
		t.Errorf("raised from C: %v", err)
	}
	gone := tn.Function{Object: add.Clone()}
	gone.Release()
	if _, err := gone.Call(1, 2); kindOf(err) != "ValueError" {
		t.Errorf("released handle: %v", err)
	}
	if !add.IsInstance("tn.Function") || add.TypeKey() != "tn.Function" {
		t.Errorf("type of add: %s", add.TypeKey())
	}
	// Every arity of the by-value paths (0 to 4 arguments, then the
	// buffer), their failures, and a result of the wrong type.
	sum := must(tn.FunctionOf(tn.PackedFunc(func(args []interface{}) (interface{}, error) {
		s := int64(0)
		for _, a := range args {
			n, ok := a.(int64)
			if !ok {
				return "not a sum", nil
			}
			s += n
		}
		return s, nil
	})))
	defer sum.Release()
	for n := 0; n <= 6; n++ {
		vs := make([]int64, n)
		xs := make([]interface{}, n)
		want := int64(0)
		for i := range vs {
			vs[i] = int64(i + 1)
			xs[i] = i + 1
			want += vs[i]
		}
		if got := must(sum.CallInt64(vs...)); got != want {
			t.Errorf("CallInt64 with %d arguments = %d", n, got)
		}
		if got := must(sum.Call(xs...)); got != want {
			t.Errorf("Call with %d arguments = %v", n, got)
		}
	}
	for _, args := range [][]int64{{1}, {1, 2}, {1, 2, 3}} {
		if _, err := raise.CallInt64(args...); kindOf(err) != "TypeError" {
			t.Errorf("CallInt64 of raise%v: %v", args, err)
		}
	}
	if v := must(sum.Call(1, "x")); v != "not a sum" {
		t.Errorf("a string result: %#v", v)
	}
	strSum := must(tn.FunctionOf(func(a, b int64) string { return "nope" }))
	defer strSum.Release()
	if _, err := strSum.CallInt64(1, 2); kindOf(err) != "TypeError" || !strings.Contains(err.Error(), "not an int") {
		t.Errorf("a string result of CallInt64: %v", err)
	}
	if _, err := raise.Call("KeyError", "two args"); kindOf(err) != "KeyError" {
		t.Errorf("raise with two arguments: %v", err)
	}
	if _, err := raise.Call("KeyError", "three", 3); err == nil {
		t.Errorf("raise with three arguments did not fail")
	}
}

func TestGoFunctionsCalledFromC(t *testing.T) {
	noLeaks(t)
	f := must(tn.RegisterGlobal("gotest.add", func(a, b int64) int64 { return a + b }, false))
	defer f.Release()
	defer func() { _ = tn.RemoveGlobal("gotest.add") }()
	// C looks it up by name and calls it: Go -> C -> Go.
	g := must(tn.GetGlobal("gotest.add"))
	defer g.Release()
	if !g.Same(f.Object) {
		t.Error("the registry returned another function")
	}
	if s := must(cthreads.CallLoop(g.Pointer(), 100)); s != 99*100/2+2*100 {
		t.Errorf("C loop over the Go function: %d", s)
	}
	call := must(tn.GetGlobal("testing.call"))
	defer call.Release()
	if v := must(call.Call(g, 1, 2)); v != int64(3) {
		t.Errorf("testing.call = %#v", v)
	}
	_, err := call.Call(g, "one", 2)
	if kindOf(err) != "TypeError" || !strings.Contains(err.Error(), "gotest.add: argument 0: expected int64, got") {
		t.Errorf("bad argument: %v", err)
	}
	if _, err := call.Call(g, 1); kindOf(err) != "TypeError" ||
		!strings.Contains(err.Error(), "takes 2 argument(s), got 1") {
		t.Errorf("arity: %v", err)
	}
	if _, err := tn.RegisterGlobal("gotest.add", func() {}, false); kindOf(err) != "ValueError" {
		t.Errorf("taken name: %v", err)
	}
	// Strings, objects and interface{} parameters; a Go func as argument.
	greet := must(tn.FunctionOf(func(name string, n int, extra interface{}) (string, error) {
		return fmt.Sprintf("%s x%d %v", name, n, extra), nil
	}))
	defer greet.Release()
	if v := must(call.Call(greet, "hi", 3, nil)); v != "hi x3 <nil>" {
		t.Errorf("greet = %#v", v)
	}
	if v := must(call.Call(func(a tn.Array) int { return a.Len() }, []interface{}{1, 2, 3})); v != int64(3) {
		t.Errorf("array parameter: %#v", v)
	}
	if _, err := tn.FunctionOf(func(ch chan int) {}); kindOf(err) != "TypeError" {
		t.Errorf("unsupported parameter: %v", err)
	}
}

func TestErrorsAndPanicsCrossBothWays(t *testing.T) {
	noLeaks(t)
	call := must(tn.GetGlobal("testing.call"))
	defer call.Release()
	fail := must(tn.FunctionOfNamed("gotest.fail", func() error {
		return tn.NewError(tn.ValueError, "bad value from Go")
	}))
	defer fail.Release()
	_, err := call.Call(fail)
	var e *tn.Error
	if !errors.As(err, &e) || e.Kind() != tn.ValueError || e.Message() != "bad value from Go" {
		t.Fatalf("error through C: %v", err)
	}
	joined := strings.Join(e.Frames(), "\n")
	if !strings.Contains(joined, "Go: in function 'gotest.fail'") || !strings.Contains(joined, "Go: Function.Call") {
		t.Errorf("frames: %q", e.Frames())
	}
	plain := must(tn.FunctionOf(func() (int, error) { return 0, errors.New("plain Go error") }))
	defer plain.Release()
	if _, err := call.Call(plain); kindOf(err) != "RuntimeError" || !strings.Contains(err.Error(), "plain Go error") {
		t.Errorf("plain error: %v", err)
	}
	boom := must(tn.FunctionOfNamed("gotest.boom", func() int { panic("kaboom") }))
	defer boom.Release()
	if _, err := call.Call(boom); kindOf(err) != "RuntimeError" ||
		!strings.Contains(err.Error(), "Go function 'gotest.boom' panicked: kaboom") {
		t.Errorf("panic: %v", err)
	}
	// Returning something tvmnode cannot hold is a TypeError, not a crash.
	odd := must(tn.FunctionOf(func() chan int { return nil }))
	defer odd.Release()
	if _, err := call.Call(odd); kindOf(err) != "TypeError" {
		t.Errorf("unconvertible result: %v", err)
	}
}

func TestGoFunctionsFromManyGoroutines(t *testing.T) {
	noLeaks(t)
	var calls int64
	f := must(tn.FunctionOf(func(a, b int64) int64 { atomic.AddInt64(&calls, 1); return a * b }))
	defer f.Release()
	inParallel(t, 8, func(g int) error {
		for i := 0; i < 200; i++ {
			s, err := cthreads.CallLoop(f.Pointer(), 3)
			if err != nil || s != (0+1+2)*2 {
				return fmt.Errorf("goroutine %d: %d, %v", g, s, err)
			}
		}
		return nil
	})
	if calls != 8*200*3 {
		t.Errorf("%d calls", calls)
	}
}

var pointOnce sync.Once

func pointType(t *testing.T) {
	pointOnce.Do(func() {
		must(tn.RegisterNodeType("gotest.Point", "", tn.NodeTree, []string{"x", "y", "label"}))
	})
}

func TestNodeTypeDeclaredInGo(t *testing.T) {
	pointType(t)
	noLeaks(t)
	p := must(tn.NewNode("gotest.Point", map[string]interface{}{"x": 1, "y": 2.5, "label": "p"}))
	defer p.Release()
	if p.TypeKey() != "gotest.Point" || strings.Join(p.Fields(), ",") != "x,y,label" {
		t.Errorf("type %s fields %v", p.TypeKey(), p.Fields())
	}
	if v := must(p.Get("y")); v != 2.5 {
		t.Errorf("y = %#v", v)
	}
	if err := p.Set("x", int64(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get("z"); err == nil || !strings.Contains(err.Error(), "z") {
		t.Errorf("missing field: %v", err)
	}
	text := must(tn.SaveJSON(p, 0))
	back := must(tn.LoadJSON(text)).(tn.Object)
	defer back.Release()
	if back.Same(p) || !must(tn.StructuralEqual(back, p, false)) {
		t.Errorf("JSON round trip differs: %s", text)
	}
	h1, h2 := must(tn.StructuralHash(p, false)), must(tn.StructuralHash(back, false))
	if h1 != h2 {
		t.Errorf("hashes %x %x", h1, h2)
	}
	if s := p.String(); !strings.Contains(s, "gotest.Point") || !strings.Contains(s, "10") {
		t.Errorf("repr %q", s)
	}
	if _, err := tn.LoadJSON(`{"tvmnode.json": 1, "root": {"$node": 9}, "nodes": []}`); kindOf(err) != "ValueError" {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := tn.NewNode("gotest.Nope", nil); kindOf(err) != "KeyError" {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := tn.NewNode("gotest.Point", map[string]interface{}{"w": 1}); err == nil ||
		!strings.Contains(err.Error(), "w") {
		t.Errorf("unknown field: %v", err)
	}
}

// x: [2, 3]; relu(x + 1)
func smallGraph(t *testing.T) (tn.Expr, tn.Expr) {
	t.Helper()
	x := must(tn.Var("x", []int64{2, 3}, tn.Float32))
	one := must(tn.Scalar(1, tn.Float32))
	defer one.Release()
	add := must(tn.CallOp("add", []tn.Expr{x, one}, nil))
	defer add.Release()
	return x, must(tn.CallOp("nn.relu", []tn.Expr{add}, nil))
}

// smallModule is a module whose main is fn (%x) { relu(%x + 1) }.
func smallModule(t *testing.T) tn.IRModule {
	t.Helper()
	x, relu := smallGraph(t)
	defer x.Release()
	defer relu.Release()
	fn := must(tn.NewFunction([]tn.Expr{x}, relu))
	defer fn.Release()
	return must(tn.ModuleFromExpr(fn))
}

func TestBuildAndReadIR(t *testing.T) {
	noLeaks(t)
	x, relu := smallGraph(t)
	defer x.Release()
	defer relu.Release()
	if relu.OpName() != "nn.relu" {
		t.Errorf("op %q", relu.OpName())
	}
	ty := relu.CheckedType()
	defer ty.Release()
	if s := must(tn.AsText(ty, false)); s != "Tensor[(2, 3), float32]" {
		t.Errorf("type %q", s)
	}
	args := must(relu.Args())
	if len(args) != 1 || args[0].OpName() != "add" {
		t.Errorf("args %v", args)
	}
	y := must(tn.Var("y", []int64{4, 3}, tn.Float32))
	defer y.Release()
	_, err := tn.CallOp("add", []tn.Expr{x, y}, nil)
	if kindOf(err) != "TypeError" || !strings.Contains(err.Error(), "add: argument 0 has type Tensor[(2, 3), float32]") {
		t.Errorf("shape mismatch: %v", err)
	}
	if _, err := tn.CallOp("nn.no_such_op", []tn.Expr{x}, nil); kindOf(err) != "KeyError" {
		t.Errorf("unknown op: %v", err)
	}
	if _, err := tn.CallOp("nn.conv2d", []tn.Expr{x, x}, map[string]interface{}{"no_attr": 1}); err == nil ||
		!strings.Contains(err.Error(), "no_attr") {
		t.Errorf("unknown attribute: %v", err)
	}
	fn := must(tn.NewFunction([]tn.Expr{x}, relu))
	defer fn.Release()
	mod := must(tn.ModuleFromExpr(fn))
	defer mod.Release()
	text := must(tn.AsText(mod, true))
	parsed := must(tn.ParseModule(text))
	defer parsed.Release()
	if !must(tn.StructuralEqual(parsed, mod, false)) {
		t.Errorf("text round trip differs:\n%s", text)
	}
	if _, err := tn.ParseModule("def @main(%x: Tensor[(2), float32]) {\n  nn.relu(%x\n}"); kindOf(err) != "ValueError" ||
		!strings.Contains(err.Error(), "line 3, column 1") {
		t.Errorf("parse error: %v", err)
	}
	var seen []string
	check(t, tn.PostOrderVisit(fn, func(e tn.Expr) error {
		if name := e.OpName(); name != "" {
			seen = append(seen, name)
		}
		return nil
	}))
	if strings.Join(seen, ",") != "add,nn.relu" {
		t.Errorf("visit order %v", seen)
	}
}

// reluToSigmoid rewrites every nn.relu call into sigmoid.
func reluToSigmoid(runs *int64) func(f tn.Expr, mod tn.IRModule) (tn.Expr, error) {
	return func(f tn.Expr, mod tn.IRModule) (tn.Expr, error) {
		atomic.AddInt64(runs, 1)
		return tn.Mutate(f, func(orig, rebuilt tn.Expr) (tn.Expr, error) {
			if rebuilt.OpName() != "nn.relu" {
				return rebuilt, nil
			}
			args, err := rebuilt.Args()
			if err != nil {
				return tn.Expr{}, err
			}
			return tn.CallOp("sigmoid", args, nil)
		})
	}
}

func TestGoPassInAMixedNamedPipeline(t *testing.T) {
	noLeaks(t)
	var runs int64
	pass := must(tn.FunctionPass("GoReluToSigmoid", 1, []string{"InferType"}, reluToSigmoid(&runs)))
	defer pass.Release()
	check(t, pass.Register(false))
	defer func() { _ = tn.UnregisterPass("GoReluToSigmoid") }()
	mod := smallModule(t)
	defer mod.Release()
	seq := must(tn.SequentialNamed("go-mixed", "InferType", "SimplifyExpr", "GoReluToSigmoid", "FoldConstant", "FuseOps"))
	defer seq.Release()
	out := must(seq.Run(mod))
	defer out.Release()
	text := must(tn.AsText(out, false))
	if runs != 1 || !strings.Contains(text, "sigmoid(") || strings.Contains(text, "nn.relu") ||
		!strings.Contains(text, "Primitive=1") {
		t.Errorf("runs %d, result:\n%s", runs, text)
	}
	if before := must(tn.AsText(mod, false)); !strings.Contains(before, "nn.relu") {
		t.Errorf("the input module changed:\n%s", before)
	}
	// Python or Rust would find it the same way.
	again := must(tn.GetPass("GoReluToSigmoid"))
	defer again.Release()
	if !again.Same(pass.Object) {
		t.Error("the registry returned another pass")
	}
}

func TestFailingGoPassesNameThePass(t *testing.T) {
	noLeaks(t)
	mod := smallModule(t)
	defer mod.Release()
	for _, c := range []struct {
		name string
		body func(tn.IRModule) (tn.IRModule, error)
		kind string
		text string
	}{
		{"GoFails", func(tn.IRModule) (tn.IRModule, error) {
			return tn.IRModule{}, tn.NewError(tn.ValueError, "no good")
		}, "ValueError", "no good"},
		{"GoPanics", func(tn.IRModule) (tn.IRModule, error) { panic("pass blew up") }, "RuntimeError", "pass blew up"},
	} {
		p := must(tn.ModulePass(c.name, 0, nil, c.body))
		_, err := p.Run(mod)
		if kindOf(err) != c.kind || !strings.Contains(err.Error(), "pass '"+c.name+"' failed") ||
			!strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v", c.name, err)
		}
		p.Release()
	}
	if text := must(tn.AsText(mod, false)); !strings.Contains(text, "nn.relu(") {
		t.Errorf("module changed:\n%s", text)
	}
}

func TestGoFunctionsCalledFromForeignCThreads(t *testing.T) {
	noLeaks(t)
	var calls int64
	f := must(tn.FunctionOfNamed("gotest.threads", func(thread, i int64) (int64, error) {
		atomic.AddInt64(&calls, 1)
		if i == 7 {
			return 0, tn.NewError(tn.ValueError, "seven")
		}
		return thread + i, nil
	}))
	defer f.Release()
	const threads, each = 8, 100
	sum, failures := cthreads.CallFromThreads(f.Pointer(), threads, each)
	want := int64(0)
	for th := int64(0); th < threads; th++ {
		for i := int64(0); i < each; i++ {
			if i != 7 {
				want += th + i
			}
		}
	}
	if calls != threads*each || failures != threads || sum != want {
		t.Errorf("calls %d, failures %d (want %d), sum %d (want %d)", calls, failures, threads, sum, want)
	}
	// The last reference dropped on a thread Go never saw: the Go side of
	// the function is forgotten there.
	g := must(tn.FunctionOf(func() int { return 1 }))
	if !cthreads.ReleaseOnThread(g.Detach()) || !g.IsNil() {
		t.Fatal("could not release on a C thread")
	}
}

func TestOperatorWithGoInference(t *testing.T) {
	noLeaks(t)
	check(t, tn.RegisterOp("gotest.double", 1, tn.PatternElemwise, "", "x * 2",
		func(types []tn.Type, attrs tn.Object) (tn.Type, error) {
			if !attrs.IsNil() {
				return tn.Type{}, errors.New("gotest.double takes no attributes")
			}
			dt, err := types[0].Get("dtype")
			if err != nil {
				return tn.Type{}, err
			}
			if dt != tn.Float32 {
				return tn.Type{}, tn.Errorf(tn.TypeError, "gotest.double takes float32, got %v", dt)
			}
			return types[0], nil
		}))
	defer func() { check(t, tn.UnregisterOp("gotest.double")) }()
	x := must(tn.Var("x", []int64{2, 3}, tn.Float32))
	defer x.Release()
	d := must(tn.CallOp("gotest.double", []tn.Expr{x}, nil))
	defer d.Release()
	ty := d.CheckedType()
	defer ty.Release()
	if s := must(tn.AsText(ty, false)); s != "Tensor[(2, 3), float32]" {
		t.Errorf("type %q", s)
	}
	q := must(tn.Var("q", []int64{2}, tn.Int8))
	defer q.Release()
	if _, err := tn.CallOp("gotest.double", []tn.Expr{q}, nil); kindOf(err) != "TypeError" ||
		!strings.Contains(err.Error(), "gotest.double takes float32, got int8") {
		t.Errorf("inference error: %v", err)
	}
	relu := must(tn.CallOp("nn.relu", []tn.Expr{d}, nil))
	defer relu.Release()
	fn := must(tn.NewFunction([]tn.Expr{x}, relu))
	defer fn.Release()
	mod := must(tn.ModuleFromExpr(fn))
	defer mod.Release()
	text := must(tn.AsText(mod, false))
	parsed := must(tn.ParseModule(text))
	defer parsed.Release()
	if !strings.Contains(text, "gotest.double(%x)") || !must(tn.StructuralEqual(parsed, mod, false)) {
		t.Errorf("text round trip:\n%s", text)
	}
	fuse := must(tn.GetPass("FuseOps"))
	defer fuse.Release()
	fused := must(fuse.Run(mod))
	defer fused.Release()
	if n := strings.Count(must(tn.AsText(fused, false)), "Primitive=1"); n != 1 {
		t.Errorf("%d primitive functions", n)
	}
	same := func(types []tn.Type, _ tn.Object) (tn.Type, error) { return types[0], nil }
	if err := tn.RegisterOp("gotest.double", 1, tn.PatternOpaque, "", "", same); kindOf(err) != "ValueError" {
		t.Errorf("taken name: %v", err)
	}
	if err := tn.RegisterOp("gotest.other", 1, tn.PatternOpaque, "no.Such", "", same); kindOf(err) != "TypeError" {
		t.Errorf("bad attrs type: %v", err)
	}
	if err := tn.UnregisterOp("gotest.other"); kindOf(err) != "KeyError" {
		t.Errorf("unregister missing: %v", err)
	}
}

func TestCErrorKeepsItsIdentityThroughAGoFunction(t *testing.T) {
	noLeaks(t)
	raise := must(tn.GetGlobal("testing.raise"))
	defer raise.Release()
	call := must(tn.GetGlobal("testing.call"))
	defer call.Release()
	// Go -> C (testing.call) -> Go (gotest.relay) -> C (testing.raise): the
	// error raised in C comes to relay, which returns it into C as it is.
	var inner *tn.Error
	relay := must(tn.FunctionOfNamed("gotest.relay", func() error {
		_, err := raise.Call("KeyError", "from C")
		if !errors.As(err, &inner) {
			return fmt.Errorf("testing.raise gave %v", err)
		}
		return err
	}))
	defer relay.Release()
	_, err := call.Call(relay)
	var outer *tn.Error
	if !errors.As(err, &outer) || inner == nil {
		t.Fatalf("relayed error: %v", err)
	}
	if outer == inner || !outer.Same(inner) || !errors.Is(err, inner) {
		t.Errorf("another error object came back: %v", err)
	}
	if outer.Kind() != tn.KeyError || outer.Message() != "from C" || outer.Cause() != nil {
		t.Errorf("relayed error changed: %s (cause %v)", outer.Format(), outer.Cause())
	}
	if !errors.Is(err, tn.KeyError) || errors.Is(err, tn.TypeError) || !errors.Is(inner, tn.KeyError) {
		t.Errorf("errors.Is with kinds: %v", err)
	}
	// One frame per crossing, appended in order to the one object, which
	// both Errors see.
	frames := outer.Frames()
	first := indexOf(frames, "tvmnode_test.TestCErrorKeepsItsIdentityThroughAGoFunction.func")
	relayed := indexOf(frames, "Go: in function 'gotest.relay'")
	back := indexOf(frames, "tvmnode_test.TestCErrorKeepsItsIdentityThroughAGoFunction at ")
	if first < 0 || relayed != first+1 || back != relayed+1 || back != len(frames)-1 {
		t.Errorf("frames (%d, %d, %d): %q", first, relayed, back, frames)
	}
	if got := inner.Frames(); strings.Join(got, "\n") != strings.Join(frames, "\n") {
		t.Errorf("the first holder sees other frames: %q", got)
	}
	// An *Error passed as a value is the object too.
	echo := must(tn.GetGlobal("testing.echo"))
	defer echo.Release()
	if v, ok := must(echo.Call(inner)).(*tn.Error); !ok || !v.Same(inner) {
		t.Errorf("echo(*Error) = %#v", v)
	}
	// So is one made in Go.
	made := tn.NewError(tn.IndexError, "made in Go")
	relayMade := must(tn.FunctionOf(func() error { return made }))
	defer relayMade.Release()
	if _, err := call.Call(relayMade); !errors.Is(err, made) || !errors.Is(err, tn.IndexError) ||
		indexOf(made.Frames(), "Go: in function") < 0 {
		t.Errorf("Go-made error through C: %v, frames %q", err, made.Frames())
	}
}

func TestErrorsAsAndIsThroughWrapping(t *testing.T) {
	noLeaks(t)
	_, cerr := tn.GetGlobal("no.such.function")
	wrapped := fmt.Errorf("loading the model: %w", cerr)
	var e *tn.Error
	if !errors.As(wrapped, &e) || e.Kind() != tn.KeyError || !errors.Is(wrapped, tn.KeyError) ||
		!errors.Is(wrapped, cerr) || errors.Is(wrapped, tn.ValueError) {
		t.Fatalf("errors.As / errors.Is through fmt.Errorf: %v", wrapped)
	}
	// The wrapped error returned into C: a new error of the same kind with
	// the whole message, caused by the C error (the same object).
	call := must(tn.GetGlobal("testing.call"))
	defer call.Release()
	f := must(tn.FunctionOfNamed("gotest.wrap", func() error { return wrapped }))
	defer f.Release()
	_, err := call.Call(f)
	var got *tn.Error
	if !errors.As(err, &got) || got.Kind() != tn.KeyError ||
		got.Message() != "loading the model: KeyError: "+e.Message() {
		t.Fatalf("wrapped error through C: %v", err)
	}
	if got.Same(e) || !got.Cause().Same(e) || !errors.Is(err, e) || !errors.Is(err, tn.KeyError) {
		t.Errorf("cause of the wrapped error: %v", got.Cause())
	}
	if text := got.Format(); !strings.Contains(text, "direct cause") || !strings.Contains(text, "no.such.function") ||
		!strings.Contains(text, "Go: in function 'gotest.wrap'") {
		t.Errorf("format:\n%s", text)
	}
	// Kinds as Go errors: wrapped, bare, or none.
	for _, c := range []struct {
		err  error
		kind tn.ErrorKind
		msg  string
	}{
		{fmt.Errorf("%w: no entry %q", tn.IndexError, "k"), tn.IndexError, `IndexError: no entry "k"`},
		{tn.AttributeError, tn.AttributeError, ""},
		{errors.New("plain"), tn.RuntimeError, "plain"},
		{&tn.Error{}, tn.RuntimeError, "RuntimeError: "},
	} {
		err := c.err
		g := must(tn.FunctionOf(func() error { return err }))
		_, out := call.Call(g)
		g.Release()
		if !errors.As(out, &got) || got.Kind() != c.kind || got.Message() != c.msg || !errors.Is(out, c.kind) {
			t.Errorf("%#v through C: %v", c.err, out)
		}
	}
	// Causes set from Go.
	outer := tn.Errorf(tn.ValueError, "bad %s", "input")
	check(t, outer.SetCause(e))
	if !errors.Is(outer, e) || !errors.Is(outer, tn.KeyError) || outer.Kind() != tn.ValueError {
		t.Errorf("SetCause: %s", outer.Format())
	}
	if err := e.SetCause(outer); kindOf(err) != "ValueError" {
		t.Errorf("a cause loop: %v", err)
	}
	check(t, outer.SetCause(nil))
	if outer.Cause() != nil || errors.Is(outer, tn.KeyError) {
		t.Errorf("cause not removed: %v", outer.Cause())
	}
}

func TestErrorObjectsAreReleased(t *testing.T) {
	runtime.GC()
	base := tnt.Settle(-1)
	call := must(tn.GetGlobal("testing.call"))
	func() {
		_, err := tn.GetGlobal("no.such.function")
		var e *tn.Error
		if !errors.As(err, &e) {
			t.Fatalf("not a *tn.Error: %v", err)
		}
		held := tn.LiveObjects()
		if held <= base+1 { // call and at least the error
			t.Errorf("%d live objects with an error held, %d before", held, base)
		}
		for i := 0; i < 50; i++ {
			e.Object().Release()
			_, _ = call.Call(func() error { return fmt.Errorf("wrapped: %w", e) })
			_, _ = call.Call(func() error { return e })
		}
		runtime.KeepAlive(e)
	}()
	call.Release()
	if n := tnt.Settle(base); n != base {
		t.Errorf("%d tvmnode objects left alive once the errors were dropped", n-base)
	}
}

func TestOperatorAttributesAreSharedWithC(t *testing.T) {
	noLeaks(t)
	names := must(tn.OpGetAttr("nn.conv2d", tn.OpAttrInputNames)).(tn.Array)
	defer names.Release()
	if s := must(names.Strings()); strings.Join(s, ",") != "data,weight" {
		t.Errorf("conv2d input names %v", s)
	}
	if p := must(tn.OpGetAttr("nn.conv2d", tn.OpAttrPattern)); p != int64(tn.PatternOutFusable) {
		t.Errorf("conv2d pattern %v", p)
	}
	if v := must(tn.OpGetAttr("nn.conv2d", "no_such_attribute")); v != nil {
		t.Errorf("missing attribute: %v", v)
	}
	if _, err := tn.OpGetAttr("gotest.no_such_op", "doc"); kindOf(err) != "KeyError" {
		t.Errorf("missing op: %v", err)
	}
	same := func(types []tn.Type, _ tn.Object) (tn.Type, error) { return types[0], nil }
	check(t, tn.RegisterOp("gotest.attrs", 2, tn.PatternElemwise, "", "", same))
	defer func() { check(t, tn.UnregisterOp("gotest.attrs")) }()
	check(t, tn.OpSetAttr("gotest.attrs", tn.OpAttrInputNames, []interface{}{"base", "overlay"}, false))
	check(t, tn.OpSetAttr("gotest.attrs", "layout", "NHWC", false))
	if err := tn.OpSetAttr("gotest.attrs", "layout", "NCHW", false); kindOf(err) != "ValueError" {
		t.Errorf("set twice: %v", err)
	}
	check(t, tn.OpSetAttr("gotest.attrs", "layout", "NCHW", true))
	if err := tn.OpSetAttr("gotest.attrs", tn.OpAttrPattern, "opaque", true); kindOf(err) != "TypeError" {
		t.Errorf("pattern as a string: %v", err)
	}
	if err := tn.OpSetAttr("gotest.attrs", tn.OpAttrInputNames, []interface{}{"x"}, true); kindOf(err) != "ValueError" {
		t.Errorf("one name for two inputs: %v", err)
	}
	// What Go set, C reads through the function registry.
	get := must(tn.GetGlobal("ir.OpGetAttr"))
	defer get.Release()
	if v := must(get.Call("gotest.attrs", "layout")); v != "NCHW" {
		t.Errorf("layout through C: %v", v)
	}
	in := must(tn.OpGetAttr("gotest.attrs", tn.OpAttrInputNames)).(tn.Array)
	defer in.Release()
	if s := must(in.Strings()); strings.Join(s, ",") != "base,overlay" {
		t.Errorf("input names %v", s)
	}
}

// ir.Function.params is declared tn.Array<ir.Var>: the generic constructor
// checks the elements, as JSON loading and every binding do.
func TestTypedIRFieldsAreChecked(t *testing.T) {
	noLeaks(t)
	x := must(tn.Var("x", []int64{4}, tn.Float32))
	defer x.Release()
	ints := must(tn.NewArray(3))
	defer ints.Release()
	_, err := tn.NewNode("ir.Function", map[string]interface{}{"params": ints.Object, "body": x.Object})
	if kindOf(err) != "TypeError" || !strings.Contains(err.Error(), "tn.Array<ir.Var>: element 0 is int") {
		t.Fatalf("params of ints: %v", err)
	}
	vars := must(tn.NewArray(x.Object))
	defer vars.Release()
	f := must(tn.NewNode("ir.Function", map[string]interface{}{"params": vars.Object, "body": x.Object}))
	f.Release()
}
