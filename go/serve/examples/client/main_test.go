package main

import (
	"context"
	"net"
	"os"
	"testing"

	"tvmnode.dev/go/internal/modeltest"
	"tvmnode.dev/go/serve"
)

// The example runs against a server of the compiled model (docs/remote.md
// shows its code).
func TestClientExample(t *testing.T) {
	tool, why := modeltest.Find()
	if tool == nil {
		t.Skip(why)
	}
	lib, err := tool.Compile("kws_ref_model.tflite", "kws", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(serve.Config{Models: []string{lib}, Token: "t0ken"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeGRPC(l, nil) }()
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if err := run(l.Addr().String(), "kws", "t0ken", ""); err != nil {
		t.Fatal(err)
	}
	if err := run(l.Addr().String(), "kws", "wrong", ""); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	if err := run(l.Addr().String(), "kws", "t0ken", os.DevNull); err == nil {
		t.Fatal("an empty .npy was accepted")
	}
}
