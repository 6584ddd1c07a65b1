package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// DialUnix connects to the Unix socket at path, trying again for up to
// wait while the connection is refused: qemu's `-chardev
// socket,server=on` makes the socket's file when it binds it, a moment
// before it listens, so a client that saw the file may still be refused.
func DialUnix(path string, wait time.Duration) (net.Conn, error) {
	conn, err := net.Dial("unix", path)
	for start := time.Now(); errors.Is(err, syscall.ECONNREFUSED) && time.Since(start) < wait; {
		time.Sleep(10 * time.Millisecond)
		conn, err = net.Dial("unix", path)
	}
	return conn, err
}

// StartQemu runs a firmware (an ELF for firmware/targets.txt's m4 row)
// on qemu's mps2-an386: StartBoard for the Cortex-M4.
func StartQemu(ctx context.Context, elf, sock string, out *bytes.Buffer, extra ...string) (*exec.Cmd, error) {
	return StartBoard(ctx, "mps2-an386", "cortex-m4", elf, sock, out, extra...)
}

// StartBoard runs a firmware on qemu's machine with cpu (a row of
// firmware/targets.txt) under -icount shift=0 (a SysTick tick is then a
// fixed count of instructions: firmware/common/measure.h), with UART0 on a
// Unix socket at sock, and returns once qemu listens there: the board
// starts when a client (a Link over DialUnix(sock, ...), or
// tvmnode-serve --device NAME=SOCK) connects. extra: more qemu arguments
// (a -plugin). Cancelling ctx kills qemu; Wait reaps it. Its own output is
// in out.
func StartBoard(ctx context.Context, machine, cpu, elf, sock string, out *bytes.Buffer,
	extra ...string) (*exec.Cmd, error) {
	args := []string{"-M", machine, "-cpu", cpu, "-nographic",
		"-monitor", "none", "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
		"-chardev", "socket,id=u0,path=" + sock + ",server=on,wait=on", "-serial", "chardev:u0"}
	qemu := exec.CommandContext(ctx, "qemu-system-arm", append(append(args, extra...), "-kernel", elf)...)
	qemu.Stdout, qemu.Stderr = out, out
	if err := qemu.Start(); err != nil {
		return nil, err
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return qemu, nil
		}
		if time.Since(start) > 10*time.Second {
			_ = qemu.Process.Kill()
			_ = qemu.Wait()
			return nil, fmt.Errorf("device: qemu made no UART socket at %s in 10 s\n%s", sock, out.String())
		}
	}
}

// SessionCase is a firmware serving a compiled model (firmware/common/
// session_uart.c), one input for it and the outputs the host computed for
// that input: what python/tests/test_firmware_device.py's
// test_model_behind_the_uart writes, as JSON in the file
// TVMNODE_SESSION_CASE names, for the Go tests on the emulated board.
type SessionCase struct {
	ELF     string   `json:"elf"`
	Model   string   `json:"model"`
	Inputs  [][]byte `json:"inputs"`
	Outputs [][]byte `json:"outputs"`
}

// ReadSessionCase reads the case TVMNODE_SESSION_CASE names; nil and no
// error when the variable is not set.
func ReadSessionCase() (*SessionCase, error) {
	path := os.Getenv("TVMNODE_SESSION_CASE")
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c SessionCase
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("device: %s: %w", path, err)
	}
	return &c, nil
}
