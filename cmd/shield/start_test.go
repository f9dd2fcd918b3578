package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeEngine writes a script that plays the engine: it prints the start-up lines, then exits
// with the statuses listed in a counter file, one per run.
func fakeEngine(t *testing.T, statuses ...string) (bin, runs string) {
	dir := t.TempDir()
	runs = filepath.Join(dir, "runs")
	script := "#!/bin/sh\nn=$(wc -l < " + runs + " 2>/dev/null || echo 0)\necho run >> " + runs + "\necho PORT:1234\necho WEB_DISABLED\ncase $n in\n"
	for i, st := range statuses {
		script += "  " + string(rune('0'+i)) + ") exit " + st + ";;\n"
	}
	script += "  *) sleep 30;;\nesac\n"
	bin = filepath.Join(dir, "engine.sh")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs
}

func countRuns(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "run")
}

func TestProcessManagerRestartAndCrashBudget(t *testing.T) {
	// 75 asks for an immediate restart (not a crash); five crashes in 60 s end the manager.
	bin, runs := fakeEngine(t, "75", "75", "1", "1", "1", "1", "1")
	var out, errb bytes.Buffer
	pm := &processManager{bin: bin, env: &cmdEnv{stdout: &out, stderr: &errb}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := pm.run(ctx)
	if err == nil || !strings.Contains(err.Error(), "crashed 5 times") {
		t.Fatalf("run = %v, want the crash budget error", err)
	}
	if n := countRuns(runs); n != 7 {
		t.Errorf("engine started %d times, want 7 (2 restarts + 5 crashes)", n)
	}
	if !strings.Contains(out.String(), "engine ready: client port 1234") || strings.Count(errb.String(), "asked for a restart") != 2 {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestProcessManagerStopsEngineOnCancel(t *testing.T) {
	bin, runs := fakeEngine(t) // never exits on its own
	pm := &processManager{bin: bin, env: &cmdEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pm.run(ctx) }()
	for countRuns(runs) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the manager did not stop the engine (SIGTERM, then SIGKILL after 5 s)")
	}
}

// TestProcessManagerCleanExitIsNotACrash: exit status 0 stops the manager without error; before,
// it was counted as a crash and the engine restarted.
func TestProcessManagerCleanExitIsNotACrash(t *testing.T) {
	bin, runs := fakeEngine(t, "0")
	var errb bytes.Buffer
	pm := &processManager{bin: bin, env: &cmdEnv{stdout: &bytes.Buffer{}, stderr: &errb}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pm.run(ctx); err != nil {
		t.Fatalf("run = %v, want nil", err)
	}
	if n := countRuns(runs); n != 1 || strings.Contains(errb.String(), "crashes") {
		t.Errorf("engine started %d times, stderr %q: want one run and no crash", n, errb.String())
	}
}
