package tvmnode_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"tvmnode.dev/go/internal/modeltest"
	"tvmnode.dev/go/internal/npy"
	tn "tvmnode.dev/go/tvmnode"
)

// The bundled models the tests compile: file, model name, and the inputs
// each is checked on (made here, run through the host executor by the
// Python tooling for the expected outputs).
type compiled struct {
	lib    string
	arch   string // the Model Library Format archive lib was built from
	inputs []npy.Array
	want   []npy.Array // the executor's output for each input
}

var fixtures struct {
	once   sync.Once
	dir    string
	skip   string
	err    error
	models map[string]*compiled
}

// A model file compiled twice (other flags) is checked on the same inputs
// as the first time.
var modelFiles = []struct {
	file, name string
	flags      []string // more options of `tvmnode compile`
}{
	{"ad01_int8.tflite", "ad01", nil},
	{"kws_ref_model.tflite", "kws", nil},
	{"ad01_fp32.tflite", "ad01f", nil},
	{"ad01_int8.tflite", "adp", []string{"--io-in-pool"}}, // inputs and outputs in the workspace
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

// model is the compiled library of a bundled model and its expected
// outputs; the test is skipped (saying why) when the Python tooling or the
// models are not there.
func model(t testing.TB, name string) *compiled {
	t.Helper()
	fixtures.once.Do(func() { fixtures.err = buildFixtures() })
	if fixtures.skip != "" {
		t.Skip("compiled-model tests skipped: " + fixtures.skip)
	}
	if fixtures.err != nil {
		t.Fatal(fixtures.err)
	}
	return fixtures.models[name]
}

func buildFixtures() error {
	tool, why := modeltest.Find()
	if tool == nil {
		fixtures.skip = why
		return nil
	}
	dir, err := os.MkdirTemp("", "tvmnode-go-models-")
	if err != nil {
		return err
	}
	fixtures.dir = dir
	fixtures.models = map[string]*compiled{}
	rng := rand.New(rand.NewSource(7))
	byFile := map[string]*compiled{}
	for _, mf := range modelFiles {
		lib, err := tool.Compile(mf.file, mf.name, dir, mf.flags...)
		if err != nil {
			return err
		}
		c := &compiled{lib: lib, arch: filepath.Join(dir, mf.name)}
		if first := byFile[mf.file]; first != nil {
			c.inputs, c.want = first.inputs, first.want
			fixtures.models[mf.name] = c
			continue
		}
		byFile[mf.file] = c
		mod, err := tn.LoadModule(lib)
		if err != nil {
			return err
		}
		in := mod.Inputs()[0]
		mod.Close()
		for k := 0; k < 2; k++ {
			x := npy.Array{Shape: in.Shape}
			n := in.NumElements()
			switch in.DType {
			case tn.Int8:
				d := make([]int8, n)
				for i := range d {
					d[i] = int8(rng.Intn(256) - 128)
				}
				x.Data = d
			case tn.Float32:
				d := make([]float32, n)
				for i := range d {
					d[i] = float32(rng.NormFloat64())
				}
				x.Data = d
			default:
				return fmt.Errorf("%s: input dtype %s", mf.name, in.DType)
			}
			xp := filepath.Join(dir, fmt.Sprintf("%s_x%d.npy", mf.name, k))
			yp := filepath.Join(dir, fmt.Sprintf("%s_y%d.npy", mf.name, k))
			if err := npy.WriteFile(xp, x); err != nil {
				return err
			}
			if err := tool.Reference(mf.file, []string{xp}, yp); err != nil {
				return err
			}
			y, err := npy.ReadFile(yp)
			if err != nil {
				return err
			}
			c.inputs = append(c.inputs, x)
			c.want = append(c.want, y)
		}
		fixtures.models[mf.name] = c
	}
	return nil
}

// outputOf reads output 0 through the typed view of its dtype (a copy, so
// it outlives the tensor).
func outputOf(t testing.TB, m *tn.Module) interface{} {
	t.Helper()
	out, err := m.Output(0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	switch out.DType() {
	case tn.Int8:
		v, err := out.Int8s()
		check(t, err)
		return append([]int8(nil), v...)
	case tn.Float32:
		v, err := out.Float32s()
		check(t, err)
		return append([]float32(nil), v...)
	}
	t.Fatalf("output dtype %s", out.DType())
	return nil
}

func expectClass(t testing.TB, err error, class error, kind tn.ErrorKind, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %v (%s), got no error", class, kind)
	}
	if !errors.Is(err, class) || !errors.Is(err, kind) {
		t.Fatalf("expected %v (%s), got %v (kind %s)", class, kind, err, kindOf(err))
	}
	var e *tn.Error
	if !errors.As(err, &e) {
		t.Fatalf("not a *tn.Error: %T", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestModuleDescribesTheModel(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	ins, outs := m.Inputs(), m.Outputs()
	if len(ins) != 1 || len(outs) != 1 {
		t.Fatalf("inputs %v, outputs %v", ins, outs)
	}
	if !reflect.DeepEqual(ins[0].Shape, []int64{1, 49, 10, 1}) || ins[0].DType != tn.Int8 ||
		ins[0].Scale <= 0 || ins[0].Name == "" {
		t.Errorf("input %+v", ins[0])
	}
	if !reflect.DeepEqual(outs[0].Shape, []int64{1, 12}) || outs[0].DType != tn.Int8 || outs[0].Scale <= 0 {
		t.Errorf("output %+v", outs[0])
	}
	info := m.Info()
	if info.Name != "kws" || m.Name() != "kws" || info.MACs <= 0 || info.WorkspaceBytes <= 0 ||
		info.ConstantBytes <= 0 {
		t.Errorf("info %+v", info)
	}
	if pools := m.Pools(); len(pools) != 1 || pools[0].Size != info.WorkspaceBytes || pools[0].Alignment < 1 {
		t.Errorf("pools %+v (workspace %d bytes)", pools, info.WorkspaceBytes)
	}
	ins[0].Shape[0] = 99 // a copy
	if m.Inputs()[0].Shape[0] != 1 {
		t.Error("Inputs shares its shapes")
	}
	// the C Module, for functions of any language
	o := must(m.Object())
	defer o.Release()
	describe := must(tn.GetGlobal("runtime.ModuleDescribe"))
	defer describe.Release()
	d := must(describe.Call(o)).(tn.Map)
	if v := must(d.Get("name")); v != "kws" || o.TypeKey() != "tn.Module" {
		t.Errorf("described as %v (%s)", v, o.TypeKey())
	}
	d.Release()
}

func TestModuleOutputsAreTheExecutors(t *testing.T) {
	for _, mf := range modelFiles {
		t.Run(mf.name, func(t *testing.T) {
			c := model(t, mf.name)
			noLeaks(t)
			m := must(tn.LoadModule(c.lib))
			defer m.Close()
			name := m.Inputs()[0].Name
			for k, x := range c.inputs {
				// a typed slice (copied in)
				check(t, m.SetInput(name, x.Data))
				check(t, m.Run())
				if got := outputOf(t, m); !reflect.DeepEqual(got, c.want[k].Data) {
					t.Fatalf("input %d: output differs from the executor's", k)
				}
				// a tensor copied from the slice, and a view of the slice itself
				var tens []*tn.Tensor
				switch d := x.Data.(type) {
				case []int8:
					tens = []*tn.Tensor{must(tn.TensorFrom(d, x.Shape...)), must(tn.TensorView(d, x.Shape...))}
				case []float32:
					tens = []*tn.Tensor{must(tn.TensorFrom(d, x.Shape...)), must(tn.TensorView(d, x.Shape...))}
				}
				for j, in := range tens {
					check(t, m.SetInputTensor(name, in))
					check(t, m.Run())
					if got := outputOf(t, m); !reflect.DeepEqual(got, c.want[k].Data) {
						t.Fatalf("input %d, tensor %d: output differs from the executor's", k, j)
					}
					in.Close()
				}
				// CopyOutput into a Go slice
				switch want := c.want[k].Data.(type) {
				case []int8:
					got := make([]int8, len(want))
					check(t, m.CopyOutput(0, got))
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("input %d: CopyOutput differs", k)
					}
				case []float32:
					got := make([]float32, len(want))
					check(t, tn.CopyOutputSlice(m, 0, got))
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("input %d: CopyOutput differs", k)
					}
				}
			}
			ms := must(m.Time(2, 3))
			if len(ms) != 3 || ms[0] <= 0 {
				t.Errorf("Time: %v", ms)
			}
		})
	}
}

func TestModuleOutputOutlivesTheModule(t *testing.T) {
	c := model(t, "ad01")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib, "ad01"))
	check(t, m.SetInput(m.Inputs()[0].Name, c.inputs[0].Data))
	check(t, m.Run())
	out := must(m.Output(0))
	check(t, m.Close())
	check(t, m.Close()) // twice: nothing
	v := must(out.Int8s())
	if !reflect.DeepEqual(v, c.want[0].Data) || !reflect.DeepEqual(out.Shape(), []int64{1, 640}) {
		t.Fatal("the output changed after Close")
	}
	out.Close()
}

func TestModuleErrorsAreTyped(t *testing.T) {
	c := model(t, "ad01")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	in := m.Inputs()[0]
	x := c.inputs[0].Data.([]int8)

	expectClass(t, m.SetInput("nope", x), tn.ErrName, tn.KeyError, "'nope'", in.Name)
	expectClass(t, m.SetInput(in.Name, make([]float32, 640)), tn.ErrDType, tn.TypeError, "int8", "float32")
	expectClass(t, m.SetInput(in.Name, x[:639]), tn.ErrShape, tn.ValueError, "639")
	expectClass(t, m.SetInput(in.Name, "text"), tn.ErrDType, tn.TypeError, "string")
	// tensors are checked by the C Module
	wrongShape := must(tn.TensorFrom(x, 640, 1))
	defer wrongShape.Close()
	expectClass(t, m.SetInputTensor(in.Name, wrongShape), tn.ErrShape, tn.ValueError, "shape")
	wrongType := must(tn.TensorFrom(make([]int32, 640), 1, 640))
	defer wrongType.Close()
	expectClass(t, m.SetInput(in.Name, wrongType), tn.ErrDType, tn.TypeError, "int8", "int32")
	// not ready: no input set, no run yet
	expectClass(t, m.Run(), tn.ErrNotReady, tn.RuntimeError, "not set")
	_, err := m.Output(0)
	expectClass(t, err, tn.ErrNotReady, tn.RuntimeError, "has not run")
	check(t, m.SetInput(in.Name, x))
	check(t, m.Run())
	_, err = m.Output(1)
	expectClass(t, err, tn.ErrName, tn.IndexError, "no output 1")
	_, err = m.Output(-1)
	expectClass(t, err, tn.ErrName, tn.IndexError)
	// an index past int32 is named as given, not as a truncated -1
	_, err = m.Output(1 << 40)
	expectClass(t, err, tn.ErrName, tn.IndexError, "no output 1099511627776")
	expectClass(t, m.CopyOutput(0, make([]int8, 3)), tn.ErrShape, tn.ValueError)
	expectClass(t, m.CopyOutput(0, make([]uint8, 640)), tn.ErrDType, tn.TypeError)
	expectClass(t, m.CopyOutput(2, make([]int8, 640)), tn.ErrName, tn.IndexError)

	// NUL bytes in a path or a name are refused, not cut short
	_, err = tn.LoadModule("lib\x00.so")
	expectClass(t, err, tn.ErrLoad, tn.ValueError, "NUL byte at 3")
	_, err = tn.SystemModule("kws\x00x")
	expectClass(t, err, tn.ErrName, tn.ValueError, "NUL byte at 3")

	// libraries and names
	_, err = tn.LoadModule(filepath.Join(t.TempDir(), "missing.so"))
	expectClass(t, err, tn.ErrLoad, "OSError", "missing.so")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing library is not fs.ErrNotExist: %v", err)
	}
	text := filepath.Join(t.TempDir(), "text.so")
	check(t, os.WriteFile(text, []byte("not a library"), 0o644))
	_, err = tn.LoadModule(text)
	expectClass(t, err, tn.ErrLoad, "OSError", "text.so")
	_, err = tn.LoadModule(notAModel(t))
	expectClass(t, err, tn.ErrNotModel, "OSError", "holds no model")
	_, err = tn.LoadModule(c.lib, "kws")
	expectClass(t, err, tn.ErrName, tn.KeyError, "'kws'", "'ad01'")
	_, err = tn.SystemModule("no_such_model")
	expectClass(t, err, tn.ErrName, tn.KeyError, "no_such_model")

	// a closed module
	check(t, m.Close())
	expectClass(t, m.Run(), tn.ErrClosed, tn.ValueError, "closed")
	expectClass(t, m.SetInput(in.Name, x), tn.ErrClosed, tn.ValueError)
	expectClass(t, m.SetInputTensor(in.Name, wrongShape), tn.ErrClosed, tn.ValueError)
	_, err = m.Output(0)
	expectClass(t, err, tn.ErrClosed, tn.ValueError)
	expectClass(t, m.CopyOutput(0, make([]int8, 640)), tn.ErrClosed, tn.ValueError)
	_, err = m.Time(1, 1)
	expectClass(t, err, tn.ErrClosed, tn.ValueError)
	var nilModule *tn.Module
	expectClass(t, nilModule.Run(), tn.ErrClosed, tn.ValueError)
}

// addressOf is where a slice's elements start.
func addressOf[T any](s []T) uintptr { return uintptr(unsafe.Pointer(&s[0])) }

// A model compiled with its inputs and outputs in the workspace pool runs
// in a tensor the caller gives as the pool: the outputs are the
// executor's and live in that tensor, and an output taken there keeps it
// alive and unchanged after the Module has its own pool back and runs
// again.
func TestModuleRunsInTheCallersWorkspace(t *testing.T) {
	c := model(t, "adp")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	pools := m.Pools()
	if len(pools) != 1 || pools[0].Name == "" || pools[0].Size != m.Info().WorkspaceBytes ||
		pools[0].Alignment < 1 {
		t.Fatalf("pools %+v (workspace %d bytes)", pools, m.Info().WorkspaceBytes)
	}
	pools[0].Size = 0 // a copy
	p := m.Pools()[0]
	if p.Size == 0 {
		t.Fatal("Pools shares its slice")
	}
	name := m.Inputs()[0].Name
	want0, want1 := c.want[0].Data.([]int8), c.want[1].Data.([]int8)

	check(t, m.SetInput(name, c.inputs[0].Data))
	check(t, m.Run())
	pool := must(tn.NewTensor([]int64{p.Size}, tn.Uint8))
	b := must(pool.Bytes())
	start, end := addressOf(b), addressOf(b)+uintptr(len(b))
	if start%uintptr(p.Alignment) != 0 {
		t.Fatalf("NewTensor's memory is not aligned to %d bytes", p.Alignment)
	}
	check(t, m.SetWorkspace(0, pool))
	// the input lived in the old pool, the outputs too
	expectClass(t, m.Run(), tn.ErrNotReady, tn.RuntimeError, "not set")
	_, err := m.Output(0)
	expectClass(t, err, tn.ErrNotReady, tn.RuntimeError, "workspace")
	check(t, m.SetInput(name, c.inputs[0].Data))
	check(t, m.Run())
	out := must(m.Output(0))
	defer out.Close()
	v := must(out.Int8s())
	if !reflect.DeepEqual(v, want0) {
		t.Fatal("output differs from the executor's in the caller's pool")
	}
	if a := addressOf(v); a < start || a+uintptr(len(v)) > end {
		t.Fatal("the output does not live in the caller's pool")
	}
	check(t, pool.Close()) // the Module and the output hold it

	check(t, m.SetWorkspace(0, nil)) // the Module's own again
	check(t, m.SetInput(name, c.inputs[1].Data))
	check(t, m.Run())
	if got := outputOf(t, m); !reflect.DeepEqual(got, want1) {
		t.Fatal("output differs from the executor's in the Module's own pool")
	}
	if !reflect.DeepEqual(v, want0) {
		t.Fatal("the output taken in the caller's pool changed")
	}

	// a Go slice as the pool (pinned under a TensorView while the Module
	// holds it), aligned by hand
	align := uintptr(p.Alignment)
	buf := make([]uint8, int(p.Size)+2*int(align))
	off := int((align - addressOf(buf)%align) % align)
	view := must(tn.TensorView(buf[off : off+int(p.Size)]))
	defer view.Close()
	check(t, m.SetWorkspace(0, view))
	check(t, m.SetInput(name, c.inputs[1].Data))
	check(t, m.Run())
	if got := outputOf(t, m); !reflect.DeepEqual(got, want1) {
		t.Fatal("output differs from the executor's in a Go slice's pool")
	}
	check(t, m.SetWorkspace(0, nil))
	runtime.KeepAlive(buf)
}

func TestModuleWorkspaceErrorsAreTyped(t *testing.T) {
	c := model(t, "adp")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	p := m.Pools()[0]
	name := m.Inputs()[0].Name
	pool := must(tn.NewTensor([]int64{p.Size}, tn.Uint8))
	defer pool.Close()

	expectClass(t, m.SetWorkspace(1, pool), tn.ErrName, tn.IndexError, "no pool 1")
	expectClass(t, m.SetWorkspace(-1, nil), tn.ErrName, tn.IndexError)
	small := must(tn.NewTensor([]int64{p.Size - 1}, tn.Uint8))
	defer small.Close()
	expectClass(t, m.SetWorkspace(0, small), tn.ErrShape, tn.ValueError,
		fmt.Sprintf("pool '%s' needs %d bytes, got %d", p.Name, p.Size, p.Size-1))
	if p.Alignment > 1 {
		// a view of a Go slice one byte past an aligned address (Go
		// releases before 1.21 copy it into aligned memory instead)
		align := uintptr(p.Alignment)
		buf := make([]uint8, int(p.Size)+2*int(align))
		off := int((align-addressOf(buf)%align)%align) + 1
		view := must(tn.TensorView(buf[off : off+int(p.Size)]))
		if addressOf(must(view.Bytes()))%align != 0 {
			expectClass(t, m.SetWorkspace(0, view), tn.ErrShape, tn.ValueError,
				fmt.Sprintf("must be aligned to %d bytes", p.Alignment))
		}
		view.Close()
	}
	// (the Go API makes no strided or non-CPU tensor to try)
	closed := must(tn.NewTensor([]int64{p.Size}, tn.Uint8))
	closed.Close()
	expectClass(t, m.SetWorkspace(0, closed), tn.ErrDType, tn.ValueError, "released")

	// after the errors, the Module runs in its own pool as before
	check(t, m.SetInput(name, c.inputs[0].Data))
	check(t, m.Run())
	if got := outputOf(t, m); !reflect.DeepEqual(got, c.want[0].Data) {
		t.Fatal("output differs after the workspace errors")
	}

	check(t, m.Close())
	expectClass(t, m.SetWorkspace(0, pool), tn.ErrClosed, tn.ValueError, "closed")
	expectClass(t, m.SetWorkspace(0, nil), tn.ErrClosed, tn.ValueError)
	var nilModule *tn.Module
	expectClass(t, nilModule.SetWorkspace(0, nil), tn.ErrClosed, tn.ValueError)
}

// notAModel is a shared library that exports no model list.
func notAModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "plain.c")
	lib := filepath.Join(dir, "plain.so")
	check(t, os.WriteFile(src, []byte("int plain_answer(void) { return 42; }\n"), 0o644))
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", src, "-o", lib).CombinedOutput(); err != nil {
		t.Skipf("no C compiler to build a plain library: %v\n%s", err, out)
	}
	return lib
}

// Eight goroutines, each with its own Module of one library, under -race:
// every run gives the executor's output.
func TestModulesOfOneLibraryInParallel(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	inParallel(t, 8, func(g int) error {
		m, err := tn.LoadModule(c.lib)
		if err != nil {
			return err
		}
		defer m.Close()
		name := m.Inputs()[0].Name
		got := make([]int8, 12)
		for r := 0; r < 20; r++ {
			k := (g + r) % len(c.inputs)
			if err := m.SetInput(name, c.inputs[k].Data); err != nil {
				return err
			}
			if err := m.Run(); err != nil {
				return err
			}
			if err := m.CopyOutput(0, got); err != nil {
				return err
			}
			if !reflect.DeepEqual(got, c.want[k].Data) {
				return fmt.Errorf("goroutine %d, run %d: output differs", g, r)
			}
			out, err := m.Output(0)
			if err != nil {
				return err
			}
			v, _ := out.Int8s()
			same := reflect.DeepEqual(v, c.want[k].Data)
			out.Close()
			if !same {
				return fmt.Errorf("goroutine %d, run %d: output view differs", g, r)
			}
		}
		return nil
	})
}

// Two goroutines sharing one Module: the one that comes while the other
// is in a call gets ErrBusy (a RuntimeError), never a race or a wrong
// output.
func TestModuleSharedByTwoGoroutinesIsBusy(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	name := m.Inputs()[0].Name
	check(t, m.SetInput(name, c.inputs[0].Data))
	var wg sync.WaitGroup
	var mu sync.Mutex
	busy, ok := 0, 0
	var other []error
	deadline := time.Now().Add(10 * time.Second)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				err := m.Run()
				mu.Lock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, tn.ErrBusy) && errors.Is(err, tn.RuntimeError):
					busy++
				default:
					other = append(other, err)
				}
				done := busy > 0 && ok > 10
				mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", other)
	}
	if busy == 0 {
		t.Fatalf("no call was refused as busy in %d runs", ok)
	}
	// the Module is sound afterwards
	check(t, m.Run())
	if got := outputOf(t, m); !reflect.DeepEqual(got, c.want[0].Data) {
		t.Fatal("output differs after the contention")
	}
}

// Close while another goroutine is in a call: the call finishes, later
// calls see ErrClosed, and the C object is released once.
func TestModuleClosedDuringARun(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	for r := 0; r < 20; r++ {
		m := must(tn.LoadModule(c.lib))
		check(t, m.SetInput(m.Inputs()[0].Name, c.inputs[0].Data))
		done := make(chan error)
		go func() { done <- m.Run() }()
		time.Sleep(time.Duration(r*10) * time.Microsecond)
		check(t, m.Close())
		if err := <-done; err != nil && !errors.Is(err, tn.ErrClosed) {
			t.Fatalf("run: %v", err)
		}
		expectClass(t, m.Run(), tn.ErrClosed, tn.ValueError)
	}
}

// A streaming model keeps its state in the Module: every Run advances it,
// Reset starts it over, and each step equals the host executor's.
func TestModuleStreamsState(t *testing.T) {
	tool, why := modeltest.Find()
	if tool == nil {
		t.Skip("compiled-model tests skipped: " + why)
	}
	dir := t.TempDir()
	lib, err := tool.Streaming(dir)
	check(t, err)
	xs := must(os.ReadFile(filepath.Join(dir, "inputs.bin")))
	want := must(os.ReadFile(filepath.Join(dir, "want.bin")))
	noLeaks(t)
	m := must(tn.LoadModule(lib))
	defer m.Close()
	if m.Info().StateBytes <= 0 {
		t.Fatalf("StateBytes %d: the model keeps state", m.Info().StateBytes)
	}
	out := make([]int8, 8)
	for k := 0; k < modeltest.Steps; k++ {
		if k == modeltest.ResetAt {
			check(t, m.Reset())
		}
		x := make([]int8, 8)
		for i := range x {
			x[i] = int8(xs[8*k+i])
		}
		check(t, m.SetInput(m.Inputs()[0].Name, x))
		check(t, m.Run())
		for o := 0; o < 2; o++ {
			check(t, m.CopyOutput(o, out))
			for i, v := range out {
				if w := int8(want[16*k+8*o+i]); v != w {
					t.Fatalf("step %d output %d [%d]: %d, the executor %d", k, o, i, v, w)
				}
			}
		}
	}
	// a model without state: Reset does nothing, StateBytes is 0
	plain := must(tn.LoadModule(model(t, "ad01").lib))
	defer plain.Close()
	if plain.Info().StateBytes != 0 {
		t.Fatalf("ad01 StateBytes %d", plain.Info().StateBytes)
	}
	check(t, plain.Reset())
}
