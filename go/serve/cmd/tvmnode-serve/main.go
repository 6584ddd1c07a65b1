// Command tvmnode-serve serves compiled models (shared libraries from
// `tvmnode compile --shared`, or a model repository folder of them) on the
// Open Inference Protocol, over gRPC and HTTP/JSON. See docs/remote.md.
//
//	tvmnode-serve [flags] MODEL.so|NAME=MODEL.so|REPOSITORY ...
//	tvmnode-serve [flags] --device NAME=SERIAL_PORT|QEMU_SOCKET|qemu-m4:ARCHIVE_DIR ...
//	    (qemu-m33:, qemu-m7:, qemu-m55: the other targets of firmware/targets.txt)
//
// It listens on the loopback interface unless --listen names another
// address; it loads only the models named here, never code a client sends.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/credentials"
	"tvmnode.dev/go/serve"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tvmnode-serve:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tvmnode-serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: tvmnode-serve [flags] MODEL.so|NAME=MODEL.so|REPOSITORY ...\n\n")
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1", "address to listen on (loopback by default; 0.0.0.0 or :: opens "+
		"the server to the network)")
	grpcPort := fs.Int("grpc-port", 8001, "gRPC port (0: any free port; -1: no gRPC)")
	httpPort := fs.Int("http-port", 8000, "HTTP/REST and /metrics port (0: any free port; -1: no HTTP)")
	instances := fs.Int("instances", 1, "instances of each model that run at once")
	queue := fs.Int("queue", 64, "requests per model that may wait for an instance; more are answered "+
		"RESOURCE_EXHAUSTED")
	maxBytes := fs.Int("max-request-bytes", 16<<20, "largest request accepted, in bytes")
	timeout := fs.Duration("timeout", 30*time.Second, "longest time a request may take, whatever its deadline")
	drain := fs.Duration("drain", 30*time.Second, "on SIGTERM or SIGINT, time given to requests in flight")
	certFile := fs.String("tls-cert", "", "TLS certificate (PEM) for gRPC and HTTP; with --tls-key")
	keyFile := fs.String("tls-key", "", "TLS private key (PEM)")
	tokenFile := fs.String("token-file", "", "file holding the bearer token every request must carry")
	var devices []string
	fs.Func("device", "NAME=PATH: serve the model NAME running on a device behind PATH, a serial port or "+
		"qemu's UART socket (the crt's device session); NAME=qemu-m4:ARCHIVE_DIR: build the archive's model "+
		"into the session firmware and run it on an emulated Cortex-M4 the server starts and restarts "+
		"(qemu-m33:, qemu-m7:, qemu-m55: the other cores of firmware/targets.txt); repeatable: devices "+
		"given the same NAME serve that model together, one request each at a time", func(v string) error {
		devices = append(devices, v)
		return nil
	})
	deviceTimeout := fs.Duration("device-timeout", 10*time.Second, "an emulated board that does not answer a "+
		"request in this time is restarted")
	runner := fs.String("firmware-runner", "", "firmware/common/run.py of the tvmnode sources, which builds "+
		"qemu-TARGET firmware (default: under $TVMNODE_SOURCE_DIR, or above this program or the working folder)")
	fwCache := fs.String("firmware-cache", "", "folder of the qemu-TARGET firmware built, keyed by content "+
		"(default: the user's cache folder)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() == 0 && len(devices) == 0 {
		fs.Usage()
		return errors.New("no models given")
	}
	cfg := serve.Config{Models: fs.Args(), Instances: *instances, QueueSize: *queue,
		MaxRequestBytes: *maxBytes, Timeout: *timeout, Devices: devices, DeviceTimeout: *deviceTimeout,
		FirmwareRunner: *runner, FirmwareCache: *fwCache}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		cfg.Token = strings.TrimSpace(string(b))
		if cfg.Token == "" {
			return fmt.Errorf("--token-file: %s is empty", *tokenFile)
		}
	}
	var tlsConfig *tls.Config
	var creds credentials.TransportCredentials
	if (*certFile == "") != (*keyFile == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if *certFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		creds = credentials.NewTLS(tlsConfig)
	}
	if *grpcPort < 0 && *httpPort < 0 {
		return errors.New("--grpc-port and --http-port are both off")
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	open := func(port int) (net.Listener, error) {
		return net.Listen("tcp", net.JoinHostPort(*listen, strconv.Itoa(port)))
	}
	var listeners []net.Listener
	if *grpcPort >= 0 {
		l, err := open(*grpcPort)
		if err != nil {
			_ = srv.Shutdown(context.Background())
			return fmt.Errorf("gRPC: %w", err)
		}
		listeners = append(listeners, l)
		fmt.Printf("tvmnode-serve: grpc on %s\n", l.Addr())
		go func() { errs <- srv.ServeGRPC(l, creds) }()
	}
	if *httpPort >= 0 {
		l, err := open(*httpPort)
		if err != nil {
			_ = srv.Shutdown(context.Background())
			return fmt.Errorf("HTTP: %w", err)
		}
		listeners = append(listeners, l)
		fmt.Printf("tvmnode-serve: http on %s://%s\n", scheme, l.Addr())
		go func() { errs <- srv.ServeHTTP(l, tlsConfig) }()
	}
	fmt.Printf("tvmnode-serve: models %s\n", strings.Join(srv.Models(), ", "))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case sig := <-stop:
		fmt.Printf("tvmnode-serve: %v: draining\n", sig)
	case err := <-errs:
		_ = srv.Shutdown(context.Background())
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	err = srv.Shutdown(ctx)
	fmt.Println("tvmnode-serve: stopped")
	return err
}
