package appliance

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// restoreRuntime puts the collector back as it was after the test.
func restoreRuntime(t *testing.T) {
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
}

func noEnv(string) string { return "" }

// TestApplyRuntime: the configured (or default) GC percent and memory limit are what the runtime
// has afterwards (debug.SetGCPercent and SetMemoryLimit return the previous values); GOGC and
// GOMEMLIMIT set in the environment are left as they are.
func TestApplyRuntime(t *testing.T) {
	restoreRuntime(t)
	cases := []struct {
		name      string
		cfg       RuntimeConfig
		env       map[string]string
		wantGC    int
		wantLimit int64
	}{
		{name: "defaults", cfg: RuntimeConfig{}, wantGC: DefaultGCPercent, wantLimit: 1 << 30},
		{name: "configured", cfg: RuntimeConfig{GCPercent: 250, MemoryLimit: "512MiB"}, wantGC: 250, wantLimit: 512 << 20},
		{name: "bytes", cfg: RuntimeConfig{GCPercent: 100, MemoryLimit: "134217728"}, wantGC: 100, wantLimit: 128 << 20},
		{name: "limit off", cfg: RuntimeConfig{GCPercent: 300, MemoryLimit: "off"}, wantGC: 300, wantLimit: math.MaxInt64},
		{name: "collector off under a limit", cfg: RuntimeConfig{GCPercent: -1, MemoryLimit: "2GiB"}, wantGC: -1, wantLimit: 2 << 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Start from values no case configures, so a no-op would be seen.
			debug.SetGCPercent(77)
			debug.SetMemoryLimit(99 << 20)
			s, err := ApplyRuntime(c.cfg, noEnv)
			if err != nil {
				t.Fatalf("ApplyRuntime: %v", err)
			}
			if got := debug.SetGCPercent(77); got != c.wantGC || s.GCPercent != c.wantGC {
				t.Errorf("GC percent in force %d, reported %d, want %d", got, s.GCPercent, c.wantGC)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit || s.MemoryLimit != c.wantLimit {
				t.Errorf("memory limit in force %d, reported %d, want %d", got, s.MemoryLimit, c.wantLimit)
			}
			if s.GCPercentEnv || s.MemoryLimitEnv {
				t.Errorf("settings %+v claim the environment", s)
			}
		})
	}
	t.Run("environment wins", func(t *testing.T) {
		// The runtime read GOGC/GOMEMLIMIT at start; here the values in force stand for them.
		debug.SetGCPercent(150)
		debug.SetMemoryLimit(300 << 20)
		env := map[string]string{"GOGC": "150", "GOMEMLIMIT": "300MiB"}
		s, err := ApplyRuntime(RuntimeConfig{GCPercent: 800, MemoryLimit: "4GiB"}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("ApplyRuntime: %v", err)
		}
		if got := debug.SetGCPercent(150); got != 150 || s.GCPercent != 150 || !s.GCPercentEnv {
			t.Errorf("GC percent in force %d, settings %+v: want GOGC's 150 kept", got, s)
		}
		if got := debug.SetMemoryLimit(-1); got != 300<<20 || s.MemoryLimit != 300<<20 || !s.MemoryLimitEnv {
			t.Errorf("memory limit in force %d, settings %+v: want GOMEMLIMIT's kept", got, s)
		}
	})
}

// TestRuntimeRefused: bad values are refused by Validate (so by serve, start and config check)
// and by ApplyRuntime, which then changes nothing.
func TestRuntimeRefused(t *testing.T) {
	restoreRuntime(t)
	cases := []struct {
		cfg  RuntimeConfig
		want string
	}{
		{RuntimeConfig{GCPercent: 5}, "runtime.gc_percent 5"},
		{RuntimeConfig{GCPercent: -2}, "runtime.gc_percent -2"},
		{RuntimeConfig{GCPercent: 20000}, "runtime.gc_percent 20000"},
		{RuntimeConfig{GCPercent: -1, MemoryLimit: "off"}, "needs a runtime.memory_limit"},
		{RuntimeConfig{MemoryLimit: "lots"}, `runtime.memory_limit "lots"`},
		{RuntimeConfig{MemoryLimit: "1GB"}, `runtime.memory_limit "1GB"`},
		{RuntimeConfig{MemoryLimit: "-1GiB"}, `runtime.memory_limit "-1GiB"`},
		{RuntimeConfig{MemoryLimit: "1MiB"}, "at least 64MiB"},
		{RuntimeConfig{MemoryLimit: "9999999999TiB"}, "too large"},
	}
	for _, c := range cases {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
		conf := &Config{Runtime: c.cfg}
		if err := conf.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Config.Validate with runtime %+v = %v, want %q", c.cfg, err, c.want)
		}
		debug.SetGCPercent(77)
		debug.SetMemoryLimit(99 << 20)
		if _, err := ApplyRuntime(c.cfg, noEnv); err == nil {
			t.Errorf("ApplyRuntime(%+v) accepted", c.cfg)
		}
		if gc, limit := debug.SetGCPercent(77), debug.SetMemoryLimit(-1); gc != 77 || limit != 99<<20 {
			t.Errorf("ApplyRuntime(%+v) refused but changed the runtime: GC %d, limit %d", c.cfg, gc, limit)
		}
	}
	// Both problems at once.
	err := RuntimeConfig{GCPercent: 3, MemoryLimit: "x"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "gc_percent") || !strings.Contains(err.Error(), "memory_limit") {
		t.Errorf("Validate = %v, want both problems", err)
	}
}
