package tvmnode_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tn "tvmnode.dev/go/tvmnode"
)

// countingPass is a module pass of optLevel that counts its runs.
func countingPass(t *testing.T, name string, optLevel int32, runs *int64) tn.Pass {
	t.Helper()
	return must(tn.ModulePass(name, optLevel, nil, func(mod tn.IRModule) (tn.IRModule, error) {
		atomic.AddInt64(runs, 1)
		return mod, nil
	}))
}

func TestPassContextOptions(t *testing.T) {
	noLeaks(t)
	check(t, tn.RegisterPassConfig("go.test.level", tn.ConfigInt))
	check(t, tn.RegisterPassConfig("go.test.name", tn.ConfigString))
	timing := must(tn.NewPassTimingInstrument())
	defer timing.Release()
	ctx := must(tn.NewPassContext(3,
		tn.WithConfig(map[string]interface{}{"go.test.level": 4, "go.test.name": "fast"}),
		tn.WithRequiredPasses("A"), tn.WithDisabledPasses("B", "C"), tn.WithInstruments(timing)))
	defer ctx.Release()
	if ctx.OptLevel() != 3 {
		t.Errorf("opt level %d", ctx.OptLevel())
	}
	cfg := must(ctx.Config())
	if v := must(cfg.Get("go.test.level")); v != int64(4) || cfg.Len() != 2 {
		t.Errorf("config level %v, %d entries", v, cfg.Len())
	}
	cfg.Release()
	if r := must(ctx.RequiredPasses()); strings.Join(r, ",") != "A" {
		t.Errorf("required %v", r)
	}
	if d := must(ctx.DisabledPasses()); strings.Join(d, ",") != "B,C" {
		t.Errorf("disabled %v", d)
	}
	ins := must(ctx.Instruments())
	if len(ins) != 1 || !ins[0].Same(timing.Object) || ins[0].Name() != "PassTimingInstrument" {
		t.Errorf("instruments %v", ins)
	}
	for _, in := range ins {
		in.Release()
	}
	// what the context checks
	_, err := tn.NewPassContext(2, tn.WithConfig(map[string]interface{}{"go.test.nope": 1}))
	expectErr(t, err, "ValueError", "go.test.nope")
	_, err = tn.NewPassContext(2, tn.WithConfig(map[string]interface{}{"go.test.level": "high"}))
	expectErr(t, err, "TypeError", "go.test.level")
	notInstrument := must(tn.GetGlobal("testing.echo"))
	defer notInstrument.Release()
	_, err = tn.NewPassContext(2, tn.WithInstruments(notInstrument))
	expectErr(t, err, "TypeError", "ir.PassInstrument")
}

func TestPassContextDecidesWhatRuns(t *testing.T) {
	noLeaks(t)
	mod := smallModule(t)
	defer mod.Release()
	var low, high, off int64
	pLow := countingPass(t, "GoLow", 1, &low)
	pHigh := countingPass(t, "GoHigh", 3, &high)
	pOff := countingPass(t, "GoOff", 0, &off)
	for _, p := range []tn.Pass{pLow, pHigh, pOff} {
		defer p.Release()
		check(t, p.Register(true))
		defer func(p tn.Pass) { _ = tn.UnregisterPass(must(p.Info()).Name) }(p)
	}
	seq := must(tn.SequentialNamed("go-ctx", "GoLow", "GoHigh", "GoOff"))
	defer seq.Release()
	run := func(ctx tn.PassContext) {
		out := must(ctx.Run(seq, mod))
		out.Release()
		ctx.Release()
	}
	run(must(tn.NewPassContext(2)))
	if low != 1 || high != 0 || off != 1 {
		t.Errorf("opt level 2: %d %d %d", low, high, off)
	}
	run(must(tn.NewPassContext(3, tn.WithDisabledPasses("GoOff"))))
	if low != 2 || high != 1 || off != 1 {
		t.Errorf("opt level 3, GoOff disabled: %d %d %d", low, high, off)
	}
	run(must(tn.NewPassContext(0, tn.WithRequiredPasses("GoHigh"))))
	if low != 2 || high != 2 || off != 2 {
		t.Errorf("opt level 0, GoHigh required: %d %d %d", low, high, off)
	}
	info := must(pHigh.Info())
	if info.Name != "GoHigh" || info.OptLevel != 3 || len(info.Required) != 0 {
		t.Errorf("info %+v", info)
	}

	// Do: the context is current for Pass.Run on this goroutine only.
	ctx := must(tn.NewPassContext(3))
	defer ctx.Release()
	check(t, ctx.Do(func() error {
		cur := must(tn.CurrentPassContext())
		defer cur.Release()
		if !cur.Same(ctx.Object) {
			t.Error("Do: another current context")
		}
		out := must(seq.Run(mod))
		out.Release()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // another goroutine: the default context
			defer wg.Done()
			c := must(tn.CurrentPassContext())
			if c.OptLevel() != tn.DefaultOptLevel || c.Same(ctx.Object) {
				t.Error("another goroutine sees the entered context")
			}
			c.Release()
		}()
		wg.Wait()
		return nil
	}))
	if high != 3 {
		t.Errorf("GoHigh under Do at opt level 3 ran %d times in all", high)
	}
	def := must(tn.CurrentPassContext())
	if def.Same(ctx.Object) || def.OptLevel() != tn.DefaultOptLevel {
		t.Error("the context is still current after Do")
	}
	def.Release()
	boom := errors.New("boom")
	if err := ctx.Do(func() error { return boom }); err != boom {
		t.Errorf("Do returned %v", err)
	}
}

func TestGoInstrumentsAndTheTimingInstrument(t *testing.T) {
	noLeaks(t)
	mod := smallModule(t)
	defer mod.Release()
	var mu sync.Mutex
	var events []string
	record := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	ins := must(tn.NewPassInstrument("GoRecorder", tn.InstrumentHooks{
		Before: func(m tn.IRModule, info tn.PassInfo) error {
			if !m.IsInstance("ir.IRModule") {
				t.Error("before: not a module")
			}
			record("before " + info.Name)
			return nil
		},
		After: func(m tn.IRModule, info tn.PassInfo) error {
			record("after " + info.Name)
			return nil
		},
		Enter: func() error { record("enter"); return nil },
		Exit:  func() error { record("exit"); return nil },
	}))
	defer ins.Release()
	timing := must(tn.NewPassTimingInstrument())
	defer timing.Release()
	ctx := must(tn.NewPassContext(3, tn.WithInstruments(ins, timing)))
	defer ctx.Release()
	seq := must(tn.SequentialNamed("go-instr", "InferType", "SimplifyExpr", "FuseOps"))
	defer seq.Release()
	check(t, ctx.Do(func() error {
		out, err := seq.Run(mod)
		out.Release()
		return err
	}))
	want := "enter,before InferType,after InferType,before SimplifyExpr,after SimplifyExpr," +
		"before FuseOps,after FuseOps,exit"
	if got := strings.Join(events, ","); !strings.HasPrefix(got, "enter,before InferType") ||
		!strings.HasSuffix(got, "after FuseOps,exit") || strings.Count(got, "before") != strings.Count(got, "after") {
		t.Errorf("events %s\nwant like %s", got, want)
	}
	table := must(timing.Render())
	for _, p := range []string{"InferType", "SimplifyExpr", "FuseOps", "total"} {
		if !strings.Contains(table, p) {
			t.Errorf("timing table without %s:\n%s", p, table)
		}
	}

	// A failing hook fails the pass, naming the instrument and the pass,
	// the Go error its cause; a panicking one too.
	for _, c := range []struct {
		name  string
		hooks tn.InstrumentHooks
		text  string
	}{
		{"GoRefuses", tn.InstrumentHooks{Before: func(tn.IRModule, tn.PassInfo) error {
			return tn.NewError(tn.ValueError, "not this one")
		}}, "not this one"},
		{"GoPanics", tn.InstrumentHooks{After: func(tn.IRModule, tn.PassInfo) error {
			panic("instrument blew up")
		}}, "instrument blew up"},
	} {
		bad := must(tn.NewPassInstrument(c.name, c.hooks))
		bctx := must(tn.NewPassContext(2, tn.WithInstruments(bad)))
		_, err := bctx.Run(seq, mod)
		if err == nil || !strings.Contains(err.Error(), "instrument '"+c.name+"'") ||
			!strings.Contains(err.Error(), "InferType") || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v", c.name, err)
		}
		bad.Release()
		bctx.Release()
	}
	// Enter failing: fn does not run, Exit hooks of those entered do.
	events = nil
	failing := must(tn.NewPassInstrument("GoNoEnter", tn.InstrumentHooks{
		Enter: func() error { return errors.New("cannot enter") },
	}))
	defer failing.Release()
	fctx := must(tn.NewPassContext(2, tn.WithInstruments(ins, failing)))
	defer fctx.Release()
	ran := false
	err := fctx.Do(func() error { ran = true; return nil })
	if err == nil || err.Error() != "cannot enter" || ran || strings.Join(events, ",") != "enter,exit" {
		t.Errorf("Do with a failing Enter: %v, ran %v, events %v", err, ran, events)
	}
}
