package tvmnode_test

// Threads for compiled Modules (Module.SetThreads): a host library hands
// its large convolutions and dense layers to the crt's parallel hook, and
// a Module with threads runs them in parts on its pool. The int8 outputs
// at 2 and 3 threads are the bytes one thread gives (and the executor's);
// calls are really cut; bad counts are named errors; and goroutines that
// run while another sets the threads get outputs or ErrBusy, never a race.

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tn "tvmnode.dev/go/tvmnode"
)

// cutCalls counts the calls a compiled archive's code hands to the
// parallel hook.
func cutCalls(t *testing.T, c *compiled, name string) int64 {
	t.Helper()
	src := must(os.ReadFile(filepath.Join(c.arch, "codegen", "host", "src", name+"_lib0.c")))
	return int64(strings.Count(string(src), "tn_crt_call_split("))
}

func TestModuleThreadsGiveTheOneThreadBytes(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	cut := cutCalls(t, c, "kws")
	if cut == 0 {
		t.Fatal("the host archive hands no call to the parallel hook")
	}
	one := must(tn.LoadModule(c.lib))
	defer one.Close()
	if n := must(one.Threads()); n != 1 {
		t.Fatalf("a new Module takes %d threads", n)
	}
	name := one.Inputs()[0].Name
	var want [][]int8
	for k, x := range c.inputs {
		check(t, one.SetInput(name, x.Data))
		check(t, one.Run())
		got := outputOf(t, one).([]int8)
		if !reflect.DeepEqual(got, c.want[k].Data) {
			t.Fatalf("one thread, input %d: output differs from the executor's", k)
		}
		want = append(want, got)
	}
	if s := must(one.SplitCalls()); s != 0 {
		t.Fatalf("one thread cut %d calls", s)
	}
	for _, threads := range []int{2, 3} {
		m := must(tn.LoadModule(c.lib))
		check(t, m.SetThreads(threads))
		if n := must(m.Threads()); n != threads {
			t.Fatalf("SetThreads(%d): Threads() is %d", threads, n)
		}
		got := make([]int8, 12)
		for r := 0; r < 3; r++ {
			for k, x := range c.inputs {
				check(t, m.SetInput(name, x.Data))
				check(t, m.Run())
				check(t, m.CopyOutput(0, got))
				if !reflect.DeepEqual(got, want[k]) {
					t.Fatalf("%d threads, run %d, input %d: %v, one thread gave %v", threads, r, k, got, want[k])
				}
				if s := must(m.SplitCalls()); s != cut {
					t.Fatalf("%d threads: %d calls cut, the code hands over %d", threads, s, cut)
				}
			}
		}
		check(t, m.SetThreads(1))
		check(t, m.Run())
		if n, s := must(m.Threads()), must(m.SplitCalls()); n != 1 || s != 0 {
			t.Fatalf("back to one thread: threads %d, %d calls cut", n, s)
		}
		check(t, m.Close())
	}
}

func TestModuleBadThreadCountsAreNamed(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	check(t, m.SetThreads(2))
	for _, bad := range []int{0, -1, 65, 1 << 40} {
		err := m.SetThreads(bad)
		expectErr(t, err, "ValueError", "tn_module_set_threads", "model 'kws'",
			"argument n (threads)", "expected 1 to 64", "got "+strconv.Itoa(bad))
		if errors.Is(err, tn.ErrShape) || errors.Is(err, tn.ErrBusy) {
			t.Errorf("a bad count is classed as a shape or busy error: %v", err)
		}
		// a refused count changes nothing
		if n := must(m.Threads()); n != 2 {
			t.Fatalf("after SetThreads(%d): %d threads", bad, n)
		}
	}
	check(t, m.SetThreads(64)) // the most: 63 workers, ended by the next call
	if n := must(m.Threads()); n != 64 {
		t.Fatalf("SetThreads(64): Threads() is %d", n)
	}
	check(t, m.SetThreads(1))
	check(t, m.Close())
	expectClass(t, m.SetThreads(2), tn.ErrClosed, tn.ValueError, "Module.SetThreads", "closed")
	_, err := m.Threads()
	expectClass(t, err, tn.ErrClosed, tn.ValueError, "Module.Threads")
	_, err = m.SplitCalls()
	expectClass(t, err, tn.ErrClosed, tn.ValueError, "Module.SplitCalls")
	var none *tn.Module
	expectClass(t, none.SetThreads(2), tn.ErrClosed, tn.ValueError, "Module.SetThreads", "nil")
}

// Two goroutines run one Module while a third switches its threads between
// 1, 2 and 3: every call either finishes or is refused with ErrBusy (the
// Module serves one goroutine at a time), every finished run gives the
// one-thread bytes, and the race detector sees nothing.
func TestModuleThreadsSetWhileOthersRun(t *testing.T) {
	c := model(t, "kws")
	noLeaks(t)
	m := must(tn.LoadModule(c.lib))
	defer m.Close()
	name := m.Inputs()[0].Name
	check(t, m.SetInput(name, c.inputs[0].Data))
	want := c.want[0].Data.([]int8)
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		runs, busy, sets int
		other            []error
	)
	note := func(err error, ok *int) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			*ok++
		case errors.Is(err, tn.ErrBusy) && errors.Is(err, tn.RuntimeError):
			busy++
		default:
			other = append(other, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	enough := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return runs >= 40 && sets >= 20 && busy > 0
	}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]int8, len(want))
			for time.Now().Before(deadline) && !enough() {
				err := m.Run()
				if err == nil {
					// another goroutine may run in between: the copy is of
					// some run's output, all of which are the same bytes
					if err = m.CopyOutput(0, got); err == nil && !reflect.DeepEqual(got, want) {
						err = errors.New("a run gave other bytes")
					}
				}
				note(err, &runs)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; time.Now().Before(deadline) && !enough(); k++ {
			note(m.SetThreads(1+k%3), &sets)
		}
	}()
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", other)
	}
	if runs == 0 || sets == 0 {
		t.Fatalf("%d runs and %d thread changes finished (%d refused as busy)", runs, sets, busy)
	}
	t.Logf("%d runs, %d thread changes, %d calls refused as busy", runs, sets, busy)
	// sound afterwards, at three threads
	check(t, m.SetThreads(3))
	check(t, m.Run())
	if got := outputOf(t, m); !reflect.DeepEqual(got, want) {
		t.Fatal("output differs after the contention")
	}
}
