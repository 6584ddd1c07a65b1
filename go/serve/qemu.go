package serve

// An emulated board the server runs itself (--device NAME=qemu-m4:ARCHIVE,
// or qemu-TARGET: any target of the sources' firmware/targets.txt: m4, m33,
// m7, m55): the archive's model is built into the session firmware by the
// sources' firmware/common/run.py (--session --build-only --target
// TARGET), the ELF kept in a cache keyed by the content of everything that
// goes into it, and run under the target's qemu machine with its UART on a
// Unix socket in a folder of the server's own. A board whose qemu exits, or whose session fails or stops
// answering, is killed and started again in the background, a bounded
// number of tries with a growing pause between them; the request under way
// fails UNAVAILABLE naming the device, the requests after it wait for the
// new board. Each device has its own qemu and session, so several devices
// serve at once.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"tvmnode.dev/go/serve/device"
	"tvmnode.dev/go/serve/device/sessionpb"
)

// qemuPrefix marks a device spec the server emulates:
// NAME=qemu-TARGET:ARCHIVE (qemu-m4:ARCHIVE, ...).
const qemuPrefix = "qemu-"

// qemuSpec splits a device's path qemu-TARGET:ARCHIVE; ok is false for
// any other path (a serial port or a socket).
func qemuSpec(path string) (target, archive string, ok bool) {
	rest, ok := strings.CutPrefix(path, qemuPrefix)
	if !ok {
		return "", "", false
	}
	target, archive, ok = strings.Cut(rest, ":")
	if !ok || target == "" || strings.ContainsRune(target, filepath.Separator) {
		return "", "", false
	}
	return target, archive, true
}

// Starts of an emulator before a request is told it is unavailable, and
// the pause after the first failed start (doubled after each).
const (
	qemuTries   = 4
	qemuBackoff = 100 * time.Millisecond
	qemuResend  = time.Second // between sends of a frame to the board
)

// qemuDevice is one emulated board serving one archive's model.
type qemuDevice struct {
	name, spec string // the served model, and "qemu-TARGET:ARCHIVE"
	model      string // the model's name in the archive and on the device
	fw         firmware
	dir        string // the server's folder of UART sockets (and cycle logs)
	timeout    time.Duration
	mx         *metrics
	metadata   *sessionpb.MetadataResponse // the first board's

	mu       sync.Mutex
	cur      *qemuRun      // the board serving, or nil
	starting chan struct{} // closed when the starts under way end
	lastErr  error         // why the last starts failed
	starts   int
	closed   bool
	closing  chan struct{}
	bg       sync.WaitGroup // starts and watchers
}

// firmware is a session firmware in the cache: its ELF, the qemu machine
// and cpu of its target, and, for a core the cycle estimate prices
// (run.py's session_pricing), the qemu plugin and the firmware's price
// table ("" otherwise).
type firmware struct {
	elf, plugin, prices string
	board
}

// board is a row of firmware/targets.txt: the qemu machine and cpu, and
// the instructions a SysTick tick under -icount shift=0, ipt[0] / ipt[1]
// (a fraction where the board's clock does not divide 1 GHz: the M55's
// 125/4, which its session cannot tell as a whole number).
type board struct {
	machine, cpu string
	ipt          [2]uint64
}

// instructions is each repeat's instructions a run from its ticks, by the
// board's instructions a tick.
func (b board) instructions(t *device.Timing) []uint64 {
	if b.ipt[1] == 0 || t.Number == 0 {
		return nil
	}
	out := make([]uint64, len(t.Ticks))
	for i, k := range t.Ticks {
		out[i] = k * b.ipt[0] / b.ipt[1] / uint64(t.Number)
	}
	return out
}

// qemuRun is one run of qemu and the session over its UART.
type qemuRun struct {
	cycles *cycleLog // the plugin's counts, or nil
	cmd    *exec.Cmd
	kill   context.CancelFunc
	out    *bytes.Buffer // qemu's own output: read only after exited
	link   *device.Link
	sess   *device.Session
	exited chan struct{} // closed when qemu has ended
	exit   error         // cmd.Wait's error (set before exited closes)
}

// cycleLog reads the cycle plugin's log of one qemu run (cycles_plugin.c's
// session mode): a line "instructions cycles" of running totals each time
// the session's clock function starts, which is before and after every
// timed repeat.
type cycleLog struct {
	path string
	off  int64 // where the lines not read yet begin
}

// repeats is the estimated cycles a run of each of the last n timed
// repeats of number runs: the differences of the last 2n lines written
// since the last call, over number. The plugin writes and flushes a line
// as the clock function starts, so all of a request's lines are in the
// file before its answer leaves the board.
func (c *cycleLog) repeats(n, number int) ([]uint64, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	c.off += int64(end)
	lines := strings.Split(string(b[:end]), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) < 2*n || number < 1 {
		return nil, fmt.Errorf("%s: %d clock readings since the last request, expected %d", c.path, len(lines), 2*n)
	}
	lines = lines[len(lines)-2*n:]
	out := make([]uint64, n)
	for r := range out {
		var i0, c0, i1, c1 uint64
		_, err0 := fmt.Sscanf(lines[2*r], "%d %d", &i0, &c0)
		_, err1 := fmt.Sscanf(lines[2*r+1], "%d %d", &i1, &c1)
		if err0 != nil || err1 != nil || c1 < c0 {
			return nil, fmt.Errorf("%s: bad lines %q and %q", c.path, lines[2*r], lines[2*r+1])
		}
		out[r] = (c1 - c0 + uint64(number)/2) / uint64(number)
	}
	return out, nil
}

func (r *qemuRun) stop() {
	r.kill()
	_ = r.link.Close()
}

// startQemuDevice builds the firmware for the archive and starts its
// first board; errors say which step failed and why.
func startQemuDevice(name, target, archive string, cfg Config, mx *metrics) (*qemuDevice, error) {
	spec := qemuPrefix + target + ":" + archive
	if archive == "" {
		return nil, fmt.Errorf("serve: device '%s': expected NAME=%s%s:ARCHIVE_DIR (an exported model archive), "+
			"got no archive", name, qemuPrefix, target)
	}
	for _, tool := range []string{"qemu-system-arm", "arm-none-eabi-gcc", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("serve: device '%s': %s needs %s, which is not installed (Debian: "+
				"qemu-system-arm gcc-arm-none-eabi libnewlib-arm-none-eabi python3)", name, spec, tool)
		}
	}
	model, err := archiveModel(name, spec, archive)
	if err != nil {
		return nil, err
	}
	fw, err := buildFirmware(cfg, name, target, archive, model)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tvmnode-serve-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("serve: device '%s': %w", name, err)
	}
	d := &qemuDevice{name: name, spec: spec, model: model, fw: fw, dir: dir,
		timeout: cfg.DeviceTimeout, mx: mx, closing: make(chan struct{})}
	for _, reason := range []string{"exited", "timeout", "link", "start_failed"} {
		mx.restarts.WithLabelValues(name, reason) // scraped as 0 until it happens
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := d.acquire(ctx)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("serve: device '%s' (%s): %w", name, d.spec, err)
	}
	md, err := run.sess.Metadata(ctx, model)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("serve: device '%s' (%s): %w", name, d.spec, err)
	}
	d.metadata = md
	return d, nil
}

// archiveModel is the model of the archive to serve as name: the one of
// that name, or the archive's only model.
func archiveModel(name, spec, archive string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(archive, "metadata.json"))
	if err != nil {
		return "", fmt.Errorf("serve: device '%s': %s is not an exported model archive: %w", name, spec, err)
	}
	var meta struct {
		Modules map[string]json.RawMessage `json:"modules"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", fmt.Errorf("serve: device '%s': %s/metadata.json: %w", name, archive, err)
	}
	if _, ok := meta.Modules[name]; ok {
		return name, nil
	}
	var names []string
	for n := range meta.Modules {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 1 {
		return names[0], nil
	}
	return "", fmt.Errorf("serve: device '%s': the archive %s has no model '%s' and not exactly one model "+
		"(it has: %s)", name, archive, name, strings.Join(names, ", "))
}

// firmwareRunner finds firmware/common/run.py.
func firmwareRunner(cfg Config) (string, error) {
	if cfg.FirmwareRunner != "" {
		if _, err := os.Stat(cfg.FirmwareRunner); err != nil {
			return "", fmt.Errorf("--firmware-runner: %w", err)
		}
		return cfg.FirmwareRunner, nil
	}
	var tried []string
	var roots []string
	if src := os.Getenv("TVMNODE_SOURCE_DIR"); src != "" {
		roots = append(roots, src)
	}
	if exe, err := os.Executable(); err == nil {
		roots = append(roots, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, wd)
	}
	for i, root := range roots {
		for dir := root; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, "firmware", "common", "run.py")
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			if i == 0 && os.Getenv("TVMNODE_SOURCE_DIR") != "" || dir == filepath.Dir(dir) {
				break // $TVMNODE_SOURCE_DIR itself, or the top
			}
		}
		tried = append(tried, root)
	}
	return "", fmt.Errorf("no firmware/common/run.py of the tvmnode sources in or above %s: set "+
		"TVMNODE_SOURCE_DIR to the sources (or --firmware-runner)", strings.Join(tried, ", "))
}

// targetBoard is a target's row of firmware/targets.txt (beside run.py's
// folder); the error names the targets the table has.
func targetBoard(runner, target string) (board, error) {
	table := filepath.Join(filepath.Dir(filepath.Dir(runner)), "targets.txt")
	raw, err := os.ReadFile(table)
	if err != nil {
		return board{}, err
	}
	var names []string
	for _, line := range strings.Split(string(raw), "\n") {
		w := strings.Fields(line)
		if len(w) < 4 || strings.HasPrefix(w[0], "#") {
			continue
		}
		if w[0] != target {
			names = append(names, w[0])
			continue
		}
		b := board{machine: w[1], cpu: w[2], ipt: [2]uint64{0, 1}}
		num, den, frac := strings.Cut(w[3], "/")
		_, err := fmt.Sscanf(num, "%d", &b.ipt[0])
		if err == nil && frac {
			_, err = fmt.Sscanf(den, "%d", &b.ipt[1])
		}
		if err != nil || b.ipt[0] == 0 || b.ipt[1] == 0 {
			return board{}, fmt.Errorf("%s: target %s: instructions a tick '%s' is not N or N/D", table, target,
				w[3])
		}
		return b, nil
	}
	return board{}, fmt.Errorf("no target '%s' in %s (it has: %s)", target, table, strings.Join(names, ", "))
}

// hashTree adds every file below root (names and bytes, in order) to h.
func hashTree(h io.Writer, root string) error {
	return filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		_, err = h.Write(b)
		return err
	})
}

// buildFirmware builds the session firmware of model in archive, or finds
// it in the cache: the key is the content of the archive, of the harness
// (firmware/) and of the crt the session adds (runtime/crt), and the
// model's name.
func buildFirmware(cfg Config, name, target, archive, model string) (firmware, error) {
	fail := func(err error) (firmware, error) {
		return firmware{}, fmt.Errorf("serve: device '%s': building the firmware for %s: %w", name, archive, err)
	}
	runner, err := firmwareRunner(cfg)
	if err != nil {
		return fail(err)
	}
	b, err := targetBoard(runner, target)
	if err != nil {
		return firmware{}, fmt.Errorf("serve: device '%s': %s%s: %w", name, qemuPrefix, target, err)
	}
	cache := cfg.FirmwareCache
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cache = filepath.Join(base, "tvmnode-serve", "firmware")
	}
	src := filepath.Dir(filepath.Dir(filepath.Dir(runner))) // run.py is firmware/common/run.py
	h := sha256.New()
	fmt.Fprintf(h, "session firmware 3\x00%s\x00%s\x00", model, target)
	for _, tree := range []string{archive, filepath.Join(src, "firmware"), filepath.Join(src, "runtime", "crt")} {
		fmt.Fprintf(h, "%s\x00", filepath.Base(tree))
		if err := hashTree(h, tree); err != nil {
			return fail(err)
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:32]
	elf := filepath.Join(cache, model+"-"+target+"-"+key+".elf")
	fw := firmware{elf: elf, board: b}
	priced := firmware{elf, strings.TrimSuffix(elf, ".elf") + ".cycles.so",
		strings.TrimSuffix(elf, ".elf") + ".prices", b}
	if _, err := os.Stat(elf); err == nil {
		if _, err := os.Stat(priced.prices); err == nil {
			return priced, nil
		}
		return fw, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return fail(err)
	}
	work, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)
	cmd := exec.Command("python3", runner, archive, model, "--session", "--build-only", "--target", target,
		"--workdir", work,
		"--cache", filepath.Join(cache, "objects"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct {
		OK     bool   `json:"ok"`
		ELF    string `json:"elf"`
		Error  string `json:"error"`
		Cycles *struct {
			Plugin string `json:"plugin"`
			Prices string `json:"prices"`
		} `json:"cycles"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil || !res.OK {
		why := res.Error
		if jerr != nil {
			why = fmt.Sprintf("%v: %s%s", err, out, stderr.Bytes())
		}
		return fail(fmt.Errorf("%s: %s", runner, why))
	}
	// the plugin and the prices first: the ELF's arrival says the rest is
	// there
	if res.Cycles != nil {
		for _, mv := range [][2]string{{res.Cycles.Plugin, priced.plugin}, {res.Cycles.Prices, priced.prices}} {
			if err := os.Rename(mv[0], mv[1]); err != nil {
				return fail(err)
			}
		}
		fw = priced
	}
	tmp := elf + ".tmp" + filepath.Base(work)
	if err := os.Rename(res.ELF, tmp); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, elf); err != nil {
		return fail(err)
	}
	return fw, nil
}

// acquire returns the board serving, waiting for one being started, or
// starting one (at most qemuTries starts) when there is none.
func (d *qemuDevice) acquire(ctx context.Context) (*qemuRun, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errors.New("the device is closed")
	}
	if r := d.cur; r != nil {
		d.mu.Unlock()
		return r, nil
	}
	if d.starting == nil {
		d.startLocked()
	}
	ch := d.starting
	d.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil {
		return nil, fmt.Errorf("the emulator did not start in %d tries: %w", qemuTries, d.lastErr)
	}
	return d.cur, nil
}

// startLocked starts a board in the background (d.mu held; none serving
// and none starting): up to qemuTries starts, pausing qemuBackoff, then
// twice as long, ... between them.
func (d *qemuDevice) startLocked() {
	ch := make(chan struct{})
	d.starting = ch
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		var run *qemuRun
		var err error
		pause := qemuBackoff
		for try := 1; try <= qemuTries; try++ {
			if run, err = d.start(); err == nil {
				break
			}
			log.Printf("device %s (%s): starting qemu, try %d of %d: %v", d.name, d.spec, try, qemuTries, err)
			d.mx.restarts.WithLabelValues(d.name, "start_failed").Inc()
			if try == qemuTries {
				break
			}
			select {
			case <-time.After(pause):
			case <-d.closing:
				try = qemuTries
			}
			pause *= 2
		}
		d.mu.Lock()
		if run != nil && d.closed {
			run.stop()
			run = nil
			err = errors.New("the device is closed")
		}
		d.cur, d.lastErr, d.starting = run, err, nil
		d.mu.Unlock()
		close(ch)
	}()
}

// start runs qemu once and opens the session over its UART.
func (d *qemuDevice) start() (*qemuRun, error) {
	d.mu.Lock()
	d.starts++
	n := d.starts
	d.mu.Unlock()
	sock := filepath.Join(d.dir, fmt.Sprintf("uart%d.sock", n))
	ctx, kill := context.WithCancel(context.Background())
	out := &bytes.Buffer{}
	var extra []string
	var counts *cycleLog
	if d.fw.prices != "" {
		counts = &cycleLog{path: filepath.Join(d.dir, fmt.Sprintf("cycles%d.log", n))}
		extra = []string{"-plugin", d.fw.plugin + ",prices=" + d.fw.prices + ",log=" + counts.path}
	}
	cmd, err := device.StartBoard(ctx, d.fw.machine, d.fw.cpu, d.fw.elf, sock, out, extra...)
	if err != nil {
		kill()
		return nil, err
	}
	r := &qemuRun{cmd: cmd, kill: kill, out: out, exited: make(chan struct{}), cycles: counts}
	conn, err := device.DialUnix(sock, 2*time.Second)
	if err == nil {
		r.link, r.sess, _, err = openSession(conn, d.name, d.model, true, d.timeout)
	}
	if err != nil {
		kill()
		_ = cmd.Wait()
		_ = os.Remove(sock)
		return nil, fmt.Errorf("%w\n%s", err, out.String())
	}
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		r.exit = cmd.Wait()
		_ = os.Remove(sock)
		if r.cycles != nil {
			_ = os.Remove(r.cycles.path)
		}
		close(r.exited)
		d.fail(r, fmt.Errorf("qemu exited (%v)", r.exit), false)
	}()
	log.Printf("device %s (%s): qemu pid %d serving", d.name, d.spec, cmd.Process.Pid)
	return r, nil
}

// fail takes run out of service after err (timedOut: it did not answer in
// d.timeout), kills it and starts a new board; returns the reason as the
// request is told it. A second failure of a run already out of service
// only makes the reason.
func (d *qemuDevice) fail(run *qemuRun, err error, timedOut bool) error {
	reason, why := "link", err
	select {
	case <-run.exited: // the stream ended because qemu did
	case <-time.After(100 * time.Millisecond):
	}
	select {
	case <-run.exited:
		reason, why = "exited", fmt.Errorf("qemu exited (%v) during the request", run.exit)
	default:
		if timedOut {
			reason, why = "timeout", fmt.Errorf("no answer in %v (--device-timeout)", d.timeout)
		}
	}
	d.mu.Lock()
	if d.cur != run {
		d.mu.Unlock()
		return why
	}
	d.cur = nil
	d.mx.restarts.WithLabelValues(d.name, reason).Inc()
	log.Printf("device %s (%s): %v: restarting qemu", d.name, d.spec, why)
	if !d.closed && d.starting == nil {
		d.startLocked()
	}
	d.mu.Unlock()
	run.stop()
	return why
}

// pid is the process id of the qemu serving, 0 if none.
func (d *qemuDevice) pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil {
		return 0
	}
	return d.cur.cmd.Process.Pid
}

// close stops the board and the starts under way and removes the
// sockets' folder.
func (d *qemuDevice) close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	close(d.closing)
	run := d.cur
	d.cur = nil
	d.mu.Unlock()
	if run != nil {
		run.stop()
	}
	d.bg.Wait()
	_ = os.RemoveAll(d.dir)
}
