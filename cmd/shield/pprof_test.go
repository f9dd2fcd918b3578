package main

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
)

func TestPprofAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"127.0.0.2:0", true},
		{"0.0.0.0:6060", false},
		{":6060", false},
		{"localhost:6060", false}, // a name may resolve elsewhere
		{"192.0.2.1:6060", false},
		{"127.0.0.1", false},
	} {
		if err := checkPprofAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("checkPprofAddr(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	if _, _, err := startPprof("0.0.0.0:0", slog.New(slog.DiscardHandler)); err == nil {
		t.Error("startPprof on 0.0.0.0 succeeded")
	}
}

// TestPprofServes: on loopback the index answers, and only pprof is mounted.
func TestPprofServes(t *testing.T) {
	addr, stop, err := startPprof("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("/debug/pprof/cmdline"); c != http.StatusOK {
		t.Errorf("cmdline: status %d", c)
	}
	if c := get("/metrics"); c != http.StatusNotFound {
		t.Errorf("/metrics on the pprof endpoint: status %d, want 404", c)
	}
}
