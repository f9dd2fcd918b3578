package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLoadMatrix: the matrix runs every row against an in-process service and prints a table
// row per in-flight count and kind, with a CPU figure.
func TestLoadMatrix(t *testing.T) {
	code, out, errOut := runCmd(t, "", "load", "--matrix", "--duration", "150ms")
	if code != 0 {
		t.Fatalf("load --matrix exited %d:\n%s\n%s", code, out, errOut)
	}
	for _, row := range []string{"| 1 | repeated |", "| 256 | repeated |", "| 16 | unique |", "| 256 | unique |"} {
		if !strings.Contains(out, row) {
			t.Errorf("no row %q in:\n%s", row, out)
		}
	}
	if !strings.Contains(out, "process CPU/call") {
		t.Errorf("no CPU column:\n%s", out)
	}
}

// TestLoadOPA: the OPA driver posts Shield's Rego input to the data API; a non-200 answer is an
// error and fails the run.
func TestLoadOPA(t *testing.T) {
	var posts atomic.Int64
	var bad atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/data/shield/decision" {
			bad.Store(true)
		}
		fmt.Fprint(w, `{"result":{"deny":[],"escalate":[],"allow":[]}}`)
	}))
	defer srv.Close()
	code, out, errOut := runCmd(t, "", "load", "--opa", srv.URL, "--inflight", "4", "--duration", "1s", "--unique", "--server-pid", fmt.Sprint(os.Getpid()))
	if code != 0 || posts.Load() == 0 || bad.Load() {
		t.Fatalf("load --opa exited %d after %d posts (bad request %v):\n%s\n%s", code, posts.Load(), bad.Load(), out, errOut)
	}
	if !strings.Contains(out, "server CPU/call") {
		t.Errorf("no server CPU figure:\n%s", out)
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer failing.Close()
	if code, out, _ := runCmd(t, "", "load", "--opa", failing.URL, "--inflight", "2", "--duration", "1s"); code == 0 {
		t.Errorf("load against a failing OPA exited 0:\n%s", out)
	}
}
