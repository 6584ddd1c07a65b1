package device

import (
	"errors"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// boundNotListening makes what qemu's socket chardev is for a moment: a
// Unix socket bound at path (its file exists) that does not listen yet.
func boundNotListening(t *testing.T, path string) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	return fd
}

// A client that finds the socket's file before its server listens is
// refused by a plain dial; DialUnix waits and connects once it listens.
func TestDialUnixWaitsForListen(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "uart.sock")
	fd := boundNotListening(t, sock)
	if _, err := net.Dial("unix", sock); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a plain dial before listen: %v, expected connection refused", err)
	}
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = syscall.Listen(fd, 1)
	}()
	conn, err := DialUnix(sock, 10*time.Second)
	if err != nil {
		t.Fatalf("DialUnix once the server listens: %v", err)
	}
	_ = conn.Close()
}

// A server that never listens: DialUnix gives up after its wait with the
// refusal, and a missing socket fails at once (nothing will appear).
func TestDialUnixGivesUp(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "uart.sock")
	boundNotListening(t, sock)
	start := time.Now()
	if _, err := DialUnix(sock, 200*time.Millisecond); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("DialUnix on a socket that never listens: %v, expected connection refused", err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("DialUnix gave up after %v, before its 200 ms", took)
	}
	start = time.Now()
	if _, err := DialUnix(filepath.Join(dir, "none.sock"), 10*time.Second); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("DialUnix on no socket: %v, expected no such file", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("DialUnix on no socket waited %v", took)
	}
}
