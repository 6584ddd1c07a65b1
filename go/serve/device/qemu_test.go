package device

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// faulty is a stream whose writes go through fault when it is set.
type faulty struct {
	net.Conn
	mu    sync.Mutex
	fault func([]byte) []byte
}

func (f *faulty) Write(p []byte) (int, error) {
	f.mu.Lock()
	fault := f.fault
	f.mu.Unlock()
	if fault != nil {
		if _, err := f.Conn.Write(fault(append([]byte(nil), p...))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return f.Conn.Write(p)
}

func (f *faulty) set(fault func([]byte) []byte) {
	f.mu.Lock()
	f.fault = fault
	f.mu.Unlock()
}

// once makes fault damage the first write longer than an empty frame (a
// request, not an ACK) from now on, once; the count of writes it hit
// is returned.
func (f *faulty) once(fault func([]byte) []byte) *int {
	n := new(int)
	f.set(func(c []byte) []byte {
		if len(c) > EncodedMax(0) && *n == 0 {
			*n++
			return fault(c)
		}
		return c
	})
	return n
}

// buildUARTFirmware builds firmware/common/uart_link.c with the crt's
// frames for the emulated Cortex-M4 (firmware/targets.txt's m4 row).
func buildUARTFirmware(t *testing.T, dir string) string {
	t.Helper()
	for _, tool := range []string{"arm-none-eabi-gcc", "qemu-system-arm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (./dev installs it)", tool)
		}
	}
	top, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	fw := filepath.Join(top, "firmware")
	elf := filepath.Join(dir, "uart_link.elf")
	args := []string{"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
		"-std=c11", "-Os", "-ffunction-sections", "-fdata-sections", "-Wall", "-Wextra", "-Werror",
		"-DFW_INSTRUCTIONS_PER_TICK=40u", `-DFW_TARGET="m4"`,
		"-I" + filepath.Join(top, "runtime/crt/include"), "-I" + filepath.Join(fw, "common"), "-I" + filepath.Join(fw, "m4"),
		"-nostdlib", "-L" + filepath.Join(fw, "common"), "-T", filepath.Join(fw, "m4/mps2_an386.ld"),
		"-Wl,--gc-sections", "-Wl,--defsym=FW_STACK_SIZE=8192", "-o", elf}
	for _, s := range []string{"common/uart_link.c", "common/uart.c", "common/startup.c", "common/semihost.c", "common/measure.c"} {
		args = append(args, filepath.Join(fw, s))
	}
	args = append(args, filepath.Join(top, "runtime/crt/src/frame.c"), filepath.Join(top, "runtime/crt/src/crc32.c"), filepath.Join(top, "runtime/crt/src/status.c"),
		"-Wl,--start-group", "-lm", "-lc", "-lgcc", "-Wl,--end-group")
	if out, err := exec.Command("arm-none-eabi-gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("building uart_link.c: %v\n%s", err, out)
	}
	return elf
}

// startQemu runs elf on the emulated board (StartQemu) and connects to its
// UART; qemu is killed at the test's end.
func startQemu(t *testing.T, ctx context.Context, elf, sock string) net.Conn {
	t.Helper()
	var qout bytes.Buffer
	qemu, err := StartQemu(ctx, elf, sock, &qout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = qemu.Process.Kill()
		_ = qemu.Wait()
		_ = os.Remove(sock)
	})
	conn, err := DialUnix(sock, 2*time.Second)
	if err != nil {
		t.Fatalf("qemu's UART socket: %v\n%s", err, qout.String())
	}
	return conn
}

// The crt's link on the emulated board (qemu's mps2-an386), over its UART
// mapped to a socket: calls answered, requests damaged on the way (bytes
// flipped, cut short) sent again and answered, and a board that resets
// mid-request ending the call with ErrReset, then answering the next. The
// round trip is logged.
func TestQemuUARTSession(t *testing.T) {
	dir := t.TempDir()
	elf := buildUARTFirmware(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := startQemu(t, ctx, elf, filepath.Join(dir, "uart.sock"))
	wire := &faulty{Conn: conn}
	logs := make(chan string, 8)
	l := NewLink(wire, 1024, func(s string) { logs <- s })
	defer l.Close()
	expectLog := func() {
		select {
		case s := <-logs:
			if s != "uart_link: ready" {
				t.Fatalf("log line %q", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no log line from the board")
		}
	}
	expectLog()
	call := func(body []byte) error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		f, err := l.Call(c, body)
		if err != nil {
			return err
		}
		want := make([]byte, len(body))
		for i, x := range body {
			want[len(body)-1-i] = x
		}
		if f.Type != Response || !bytes.Equal(f.Body, want) {
			t.Fatalf("answer %v of %d bytes to a request of %d", f.Type, len(f.Body), len(body))
		}
		return nil
	}
	var rtt []time.Duration
	for i := 0; i < 24; i++ {
		body := bytes.Repeat([]byte{byte(i), 0, 0xFF}, 1+i*5) // the board takes 512
		start := time.Now()
		if err := call(body); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		rtt = append(rtt, time.Since(start))
	}
	sort.Slice(rtt, func(i, j int) bool { return rtt[i] < rtt[j] })
	t.Logf("round trip over the emulated UART, bodies of 3 to 348 bytes: median %v, max %v", rtt[len(rtt)/2], rtt[len(rtt)-1])

	for name, fault := range map[string]func([]byte) []byte{
		"flipped":   func(c []byte) []byte { c[len(c)/2] ^= 0x10; return c },
		"truncated": func(c []byte) []byte { return c[:len(c)/2] },
	} {
		n := wire.once(fault)
		if err := call([]byte("damaged " + name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wire.set(nil)
		if *n != 1 {
			t.Fatalf("%s: the fault hit %d writes", name, *n)
		}
	}

	start := time.Now()
	if err := call([]byte("reset")); !errors.Is(err, ErrReset) {
		t.Fatalf("a board reset mid-request: %v, want ErrReset", err)
	}
	t.Logf("a board reset mid-request ended the call in %v", time.Since(start))
	expectLog()
	for i := 0; i < 3; i++ {
		if err := call([]byte{1, 2, 3, byte(i)}); err != nil {
			t.Fatalf("after the reset: %v", err)
		}
	}
}
