package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"tvmnode.dev/go/internal/modeltest"
)

// The anomaly-detection model (int8, the smallest of the trained models:
// a fraction of a million instructions a run on the emulated board),
// exported for the Cortex-M4 and compiled for the host, once for every test.
var adM4 struct {
	once      sync.Once
	dir       string
	arch, lib string
	cache     string
	skip      string
	err       error
}

// qemuModel gives the Cortex-M archive, the host library of the same
// model and a firmware cache shared by the tests; it skips when qemu or
// the Cortex-M toolchain is not installed, or the model tooling is absent.
func qemuModel(t *testing.T) (arch, lib, cache string) {
	t.Helper()
	adM4.once.Do(func() {
		for _, tool := range []string{"qemu-system-arm", "arm-none-eabi-gcc"} {
			if _, err := exec.LookPath(tool); err != nil {
				adM4.skip = tool + " not installed (./dev installs it)"
				return
			}
		}
		tool, why := modeltest.Find()
		if tool == nil {
			adM4.skip = why
			return
		}
		if adM4.dir, adM4.err = os.MkdirTemp("", "tvmnode-serve-qemu-"); adM4.err != nil {
			return
		}
		adM4.arch = filepath.Join(adM4.dir, "ad-m4")
		adM4.cache = filepath.Join(adM4.dir, "firmware")
		adM4.err = tool.Tvmnode("compile", tool.Model("ad01_int8.tflite"), "--name", "ad", "-o", adM4.arch,
			"--target", "cortex-m")
		if adM4.err == nil {
			adM4.lib, adM4.err = tool.Compile("ad01_int8.tflite", "ad", adM4.dir)
		}
		if adM4.err == nil {
			adM4.err = loadOnce(adM4.lib)
		}
	})
	skipOrFail(t, "emulated device tests skipped: ", adM4.skip, adM4.err)
	return adM4.arch, adM4.lib, adM4.cache
}

// runCycles is run.py --cycles' estimate of one run of model in arch: the
// estimated Cortex-M4 cycles of the one-run harness's timed inference.
func runCycles(t *testing.T, arch, model string) uint64 {
	t.Helper()
	runner, err := firmwareRunner(Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", runner, arch, model, "--cycles", "--workdir", t.TempDir()).Output()
	if err != nil {
		t.Fatalf("run.py --cycles: %v\n%s", err, out)
	}
	var res struct {
		OK     bool `json:"ok"`
		Cycles struct {
			Cycles uint64 `json:"cycles"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.OK || res.Cycles.Cycles == 0 {
		t.Fatalf("run.py --cycles: %v\n%s", err, out)
	}
	return res.Cycles.Cycles
}

// adRequest is a request for model of the served server with seeded random
// inputs.
func adRequest(t *testing.T, s *Server, model string, seed int64) *Request {
	t.Helper()
	m := s.models[model]
	rng := mrand.New(mrand.NewSource(seed))
	r := &Request{Model: model}
	for _, in := range m.ins {
		data := make([]byte, in.nbytes)
		rng.Read(data)
		r.Inputs = append(r.Inputs, Input{Name: in.Name, Datatype: in.datatype, Shape: in.Shape, Data: data})
	}
	return r
}

// metricValue is a counter's or a gauge's value.
func metricValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func qemuServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	start := time.Now()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server with %d devices up in %v", len(cfg.Devices), time.Since(start))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for _, m := range s.models {
			if m.devs != nil {
				t.Errorf("model %s: its device is still open after Shutdown", m.name)
			}
		}
	})
	return s
}

// --device NAME=qemu-m4:ARCHIVE: the server builds the session firmware
// for the archive (once: a second server finds it in the cache), starts
// the emulated board and serves its model; the device's outputs equal the
// host Module's for the same inputs, and a timed request answers the
// device's instruction counts beside its seconds.
func TestQemuDeviceFromArchive(t *testing.T) {
	arch, lib, cache := qemuModel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := qemuServer(t, Config{Models: []string{"host=" + lib}, Devices: []string{"ad=qemu-m4:" + arch},
		FirmwareCache: cache})
	if got := s.Models(); len(got) != 2 || got[0] != "ad" || got[1] != "host" {
		t.Fatalf("models %v", got)
	}
	elfs, _ := filepath.Glob(filepath.Join(cache, "ad-*.elf"))
	if len(elfs) != 1 {
		t.Fatalf("firmware cache %s holds %v, want one ELF", cache, elfs)
	}
	built, _ := os.Stat(elfs[0])
	for seed := int64(1); seed <= 3; seed++ {
		r := adRequest(t, s, "ad", seed)
		start := time.Now()
		dev, err := s.Infer(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("one inference on the emulated board through the server: %v", time.Since(start))
		r.Model = "host"
		host, err := s.Infer(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(dev.Outputs) != len(host.Outputs) || len(dev.Outputs) == 0 {
			t.Fatalf("%d outputs on the device, %d on the host", len(dev.Outputs), len(host.Outputs))
		}
		for i := range dev.Outputs {
			if !bytes.Equal(dev.Outputs[i].Data, host.Outputs[i].Data) {
				t.Fatalf("seed %d: output %s differs from the host Module's", seed, dev.Outputs[i].Name)
			}
		}
	}
	r := adRequest(t, s, "ad", 9)
	r.Repeat, r.Number = 3, 2
	res, err := s.Infer(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RepeatInstructions) != 3 || len(res.RepeatSeconds) != 3 || res.Number != 2 {
		t.Fatalf("timing: instructions %v, seconds %v, number %d", res.RepeatInstructions, res.RepeatSeconds,
			res.Number)
	}
	for i, n := range res.RepeatInstructions {
		// -icount shift=0: one instruction a nanosecond of the board's time;
		// a SysTick tick (40 instructions) is the resolution
		if n < 10000 || float64(n) < res.RepeatSeconds[i]*1e9-40 || float64(n) > res.RepeatSeconds[i]*1e9+40 {
			t.Fatalf("repeat %d: %d instructions a run, %g s", i, n, res.RepeatSeconds[i])
		}
	}
	t.Logf("instructions a run: %v", res.RepeatInstructions)
	// each repeat's estimated cycles, counted by the cycle plugin as the
	// board served, against run.py --cycles' estimate of one run of the
	// same archive in the one-run harness (its own build and qemu run)
	if len(res.RepeatCycles) != 3 {
		t.Fatalf("timing: cycles %v, expected 3 repeats'", res.RepeatCycles)
	}
	one := runCycles(t, arch, "ad")
	for i, c := range res.RepeatCycles {
		if c < res.RepeatInstructions[i] || c > 3*res.RepeatInstructions[i] {
			t.Fatalf("repeat %d: %d cycles for %d instructions", i, c, res.RepeatInstructions[i])
		}
		// the session's loop around the runs adds a few cycles a run
		if d := float64(c)/float64(one) - 1; d < -0.005 || d > 0.005 {
			t.Fatalf("repeat %d: %d cycles a run, run.py --cycles estimates %d (%+.2f %%)", i, c, one, 100*d)
		}
	}
	t.Logf("estimated cycles a run: %v; run.py --cycles: %d", res.RepeatCycles, one)
	// the host's timing has no instructions
	r.Model = "host"
	if res, err = s.Infer(ctx, r); err != nil || res.RepeatInstructions != nil {
		t.Fatalf("host timing: %v, instructions %v", err, res.RepeatInstructions)
	}

	// a second server reuses the firmware
	s2 := qemuServer(t, Config{Devices: []string{"ad2=qemu-m4:" + arch}, FirmwareCache: cache})
	if again, _ := os.Stat(elfs[0]); !again.ModTime().Equal(built.ModTime()) {
		t.Fatalf("the cached firmware was built again")
	}
	if _, err := s2.Infer(ctx, adRequest(t, s2, "ad2", 1)); err != nil {
		t.Fatal(err)
	}
}

// The session firmware on other cores of firmware/targets.txt (qemu-m33:
// and qemu-m55:, their UART0 from the target folder's board.h; the M7's
// mps2-an500 has the M4's): the same outputs as the host Module's, timed
// requests answering the board's instruction counts (the M55's from its
// 31.25 instructions a tick, which its session cannot tell), and
// estimated cycles where the estimate prices the core (the M33) and not
// elsewhere; a target the table lacks is refused, naming the ones it has.
func TestQemuDeviceTargets(t *testing.T) {
	arch, lib, cache := qemuModel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s := qemuServer(t, Config{Models: []string{"host=" + lib}, Devices: []string{"m33=qemu-m33:" + arch,
		"m55=qemu-m55:" + arch}, FirmwareCache: cache})
	r := adRequest(t, s, "host", 5)
	want, err := s.Infer(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m33", "m55"} {
		r.Model = name
		r.Repeat, r.Number = 2, 1
		got, err := s.Infer(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Outputs[0].Data, want.Outputs[0].Data) {
			t.Fatalf("%s: other outputs than the host Module's", name)
		}
		// AD is 264,192 multiply-adds: at least one instruction for each
		// 16 (the M55's MVE dense form), the session's own work on top
		if len(got.RepeatInstructions) != 2 || got.RepeatInstructions[0] < 264192/16 {
			t.Fatalf("%s: instructions %v", name, got.RepeatInstructions)
		}
		if priced := name == "m33"; priced != (len(got.RepeatCycles) == 2) {
			t.Fatalf("%s: cycles %v", name, got.RepeatCycles)
		}
		t.Logf("%s: instructions a run %v, estimated cycles %v", name, got.RepeatInstructions, got.RepeatCycles)
	}
	_, err = New(Config{Devices: []string{"x=qemu-m9:" + arch}, FirmwareCache: cache})
	if err == nil || !strings.Contains(err.Error(), "no target 'm9'") || !strings.Contains(err.Error(), "m55") {
		t.Fatalf("qemu-m9: %v", err)
	}
}

// A bad qemu-m4 device stops the start with what is wrong.
func TestQemuDeviceRefused(t *testing.T) {
	arch, _, cache := qemuModel(t)
	empty := t.TempDir()
	for spec, want := range map[string]string{
		"ad=qemu-m4:":                             "got no archive",
		"ad=qemu-m4:" + empty:                     "is not an exported model archive",
		"ad=qemu-m4:" + filepath.Join(empty, "x"): "is not an exported model archive",
	} {
		if _, err := New(Config{Devices: []string{spec}, FirmwareCache: cache}); err == nil ||
			!strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	_, err := New(Config{Devices: []string{"ad=qemu-m4:" + arch}, FirmwareCache: t.TempDir(),
		FirmwareRunner: filepath.Join(empty, "run.py")})
	if err == nil || !strings.Contains(err.Error(), "building the firmware") {
		t.Errorf("a missing run.py: %v", err)
	}
}

// checkUnavailable checks that err is UNAVAILABLE naming the device and
// the reason.
func checkUnavailable(t *testing.T, err error, device, reason string) {
	t.Helper()
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), device) ||
		!strings.Contains(err.Error(), reason) {
		t.Fatalf("%v: want UNAVAILABLE naming %s and %q", err, device, reason)
	}
}

// A dead emulator is restarted: qemu killed during a request fails that
// request UNAVAILABLE naming the device, and the next request succeeds on
// a new qemu; a board that stops answering (its qemu stopped) is restarted
// after --device-timeout the same way. Each restart is counted by reason.
func TestQemuDeviceRestart(t *testing.T) {
	arch, _, cache := qemuModel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := qemuServer(t, Config{Devices: []string{"ad=qemu-m4:" + arch}, FirmwareCache: cache,
		DeviceTimeout: 2 * time.Second})
	emu := s.models["ad"].devs[0].emu
	want, err := s.Infer(ctx, adRequest(t, s, "ad", 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		reason, message string
		sig             syscall.Signal
	}{{"exited", "qemu exited (signal: killed) during the request", syscall.SIGKILL},
		{"timeout", "no answer in 2s", syscall.SIGSTOP}} {
		pid := emu.pid()
		if pid == 0 {
			t.Fatal("no qemu serving")
		}
		// a timed request long enough to be under way when the signal comes
		long := adRequest(t, s, "ad", 2)
		long.Repeat, long.Number = 32, 100000
		done := make(chan error, 1)
		start := time.Now()
		lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
		go func() { _, err := s.Infer(lctx, long); done <- err }()
		// running (it holds the device), then long enough to be on the board
		for metricValue(s.metrics.inflight.WithLabelValues("ad")) != 1 && time.Since(start) < 10*time.Second {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		if err := syscall.Kill(pid, c.sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the request did not end", c.reason)
		}
		lcancel()
		checkUnavailable(t, err, "device qemu-m4:"+arch, c.message)
		t.Logf("%s: %v after %v", c.reason, err, time.Since(start))
		start = time.Now()
		got, err := s.Infer(ctx, adRequest(t, s, "ad", 1))
		if err != nil {
			t.Fatalf("%s: the request after the restart: %v", c.reason, err)
		}
		if !bytes.Equal(got.Outputs[0].Data, want.Outputs[0].Data) {
			t.Fatalf("%s: the restarted board answers other outputs", c.reason)
		}
		if now := emu.pid(); now == 0 || now == pid {
			t.Fatalf("%s: qemu pid %d before, %d after", c.reason, pid, now)
		}
		if n := metricValue(s.metrics.restarts.WithLabelValues("ad", c.reason)); n != 1 {
			t.Fatalf("%s: restarts counted %v", c.reason, n)
		}
		t.Logf("%s: the next request answered %v later", c.reason, time.Since(start))
		// the old qemu is gone
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("%s: qemu %d still there (%v)", c.reason, pid, err)
		}
	}
}

// Devices each with its own qemu and session serve at once, two of them
// the same model a (its pool of boards): all three are seen running a
// request at the same moment, and each answers right.
func TestQemuDevicesInParallel(t *testing.T) {
	arch, _, cache := qemuModel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := qemuServer(t, Config{Devices: []string{"a=qemu-m4:" + arch, "b=qemu-m4:" + arch, "a=qemu-m4:" + arch},
		FirmwareCache: cache})
	if got := s.Models(); len(got) != 2 {
		t.Fatalf("models %v, want a (two boards) and b", got)
	}
	pids := map[int]bool{}
	for _, d := range append(s.models["a"].devs, s.models["b"].devs...) {
		pids[d.emu.pid()] = true
	}
	if len(pids) != 3 || pids[0] {
		t.Fatalf("qemu pids %v, want three", pids)
	}
	ref, err := s.Infer(ctx, adRequest(t, s, "a", 1))
	if err != nil {
		t.Fatal(err)
	}
	both := make(chan struct{})
	go func() { // watch for both devices running at once
		for ctx.Err() == nil {
			if metricValue(s.metrics.inflight.WithLabelValues("a")) == 2 &&
				metricValue(s.metrics.inflight.WithLabelValues("b")) == 1 {
				close(both)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, name := range []string{"a", "a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				r := adRequest(t, s, name, 1)
				r.Repeat, r.Number = 1, 100
				res, err := s.Infer(ctx, r)
				if err == nil && !bytes.Equal(res.Outputs[0].Data, ref.Outputs[0].Data) {
					err = fmt.Errorf("device %s: other outputs than a's first", name)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	select {
	case <-both:
	default:
		t.Fatal("the three devices never ran requests at the same time")
	}
}
