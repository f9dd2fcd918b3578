package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// checkPprofAddr accepts only a loopback IP literal and a port: profiles (heap, goroutines)
// show the process's memory, call arguments included, so the endpoint must never face a network,
// and a host name could resolve elsewhere.
func checkPprofAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof %q: want IP:port: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--pprof %q: the profiling endpoint listens on a loopback IP only (127.0.0.1 or ::1)", addr)
	}
	if port == "" {
		return fmt.Errorf("--pprof %q: want a port", addr)
	}
	return nil
}

// startPprof serves net/http/pprof on a loopback address until stop is called and returns the
// address it listens on. Only the pprof handlers are mounted (not http.DefaultServeMux).
func startPprof(addr string, log *slog.Logger) (bound string, stop func(), err error) {
	if err := checkPprofAddr(addr); err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// A CPU profile or trace runs for ?seconds=N (30 s by default): the write timeout leaves room.
	s := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: time.Minute}
	go func() { _ = s.Serve(l) }()
	log.Warn("serving pprof: profiles show process memory to local users of this host", "addr", l.Addr().String())
	return l.Addr().String(), func() { _ = s.Close() }, nil
}
