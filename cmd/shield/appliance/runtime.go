package appliance

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
)

// RuntimeConfig tunes the Go runtime of `shield serve` (runtime: in shield.yaml). Garbage
// collection is 11–25 % of the server's CPU under load (≈1 000 allocations per cache miss,
// most inside OPA's evaluator); a higher GC percent trades heap for fewer collections, and the
// soft memory limit caps what that trade may cost. GOGC and GOMEMLIMIT in the service's
// environment, when the operator sets them, win over these keys.
type RuntimeConfig struct {
	// GCPercent is the garbage collector's target (as GOGC): the heap may grow this many per cent
	// over the live heap before a collection. 0 means DefaultGCPercent; -1 turns the
	// proportional collector off and needs a memory limit; otherwise 10 to 10000.
	GCPercent int `yaml:"gc_percent"`
	// MemoryLimit is the soft memory limit of the Go runtime (as GOMEMLIMIT): bytes, or a number
	// with a B, KiB, MiB, GiB or TiB suffix ("1GiB"); the collector runs as often as it needs to
	// stay under it. "off" sets none. Default: "" (DefaultMemoryLimit). At least 64 MiB.
	MemoryLimit string `yaml:"memory_limit"`
}

const (
	// DefaultGCPercent: GOGC=400 cut the Rego tier's CPU over the corpus by ~13 % and the
	// server's CPU per unique call (see README "Performance"); the live heap of the service is
	// tens of MiB, so the heap stays within a few hundred MiB.
	DefaultGCPercent = 400
	// DefaultMemoryLimit bounds the heap that GCPercent lets grow: near it the collector runs
	// as at GOGC=100 or more often.
	DefaultMemoryLimit = "1GiB"
	// minMemoryLimit: below it the collector would run nearly all the time.
	minMemoryLimit = 64 << 20
)

// memoryLimit parses the configured limit: bytes, or math.MaxInt64 for "off".
func (r RuntimeConfig) memoryLimit() (int64, error) {
	s := strings.TrimSpace(r.MemoryLimit)
	if s == "" {
		s = DefaultMemoryLimit
	}
	if s == "off" {
		return math.MaxInt64, nil
	}
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("runtime.memory_limit %q: want bytes or a number with B, KiB, MiB, GiB or TiB, or off", r.MemoryLimit)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("runtime.memory_limit %q: too large", r.MemoryLimit)
	}
	if n*mult < minMemoryLimit {
		return 0, fmt.Errorf("runtime.memory_limit %q: at least 64MiB (the collector would run nearly all the time)", r.MemoryLimit)
	}
	return n * mult, nil
}

// gcPercent is the configured percent with its default.
func (r RuntimeConfig) gcPercent() int {
	if r.GCPercent == 0 {
		return DefaultGCPercent
	}
	return r.GCPercent
}

// Validate reports every problem of the runtime keys at once.
func (r RuntimeConfig) Validate() error {
	var errs []error
	limit, err := r.memoryLimit()
	if err != nil {
		errs = append(errs, err)
	}
	switch p := r.GCPercent; {
	case p == 0 || (p >= 10 && p <= 10000):
	case p == -1:
		if err == nil && limit == math.MaxInt64 {
			errs = append(errs, errors.New("runtime.gc_percent -1 (collector off) needs a runtime.memory_limit: the heap would grow without bound"))
		}
	default:
		errs = append(errs, fmt.Errorf("runtime.gc_percent %d: use 0 (default %d), -1 (off, with a memory limit) or 10 to 10000", p, DefaultGCPercent))
	}
	return errors.Join(errs...)
}

// RuntimeSettings is what ApplyRuntime set: the values in force after it, and whether each came
// from the environment.
type RuntimeSettings struct {
	GCPercent      int
	MemoryLimit    int64
	GCPercentEnv   bool // GOGC was set: left as the runtime read it
	MemoryLimitEnv bool // GOMEMLIMIT was set: left as the runtime read it
}

// ApplyRuntime sets the collector's percent and soft memory limit from r, except where getenv
// reports GOGC or GOMEMLIMIT set (the runtime already applied those at start). r must have
// passed Validate; an invalid r is refused and nothing is changed.
func ApplyRuntime(r RuntimeConfig, getenv func(string) string) (RuntimeSettings, error) {
	if err := r.Validate(); err != nil {
		return RuntimeSettings{}, err
	}
	limit, _ := r.memoryLimit()
	var s RuntimeSettings
	if getenv("GOMEMLIMIT") != "" {
		s.MemoryLimitEnv = true
		s.MemoryLimit = debug.SetMemoryLimit(-1) // a negative input only reads it
	} else {
		debug.SetMemoryLimit(limit)
		s.MemoryLimit = limit
	}
	if getenv("GOGC") != "" {
		s.GCPercentEnv = true
		s.GCPercent = debug.SetGCPercent(100)
		debug.SetGCPercent(s.GCPercent)
	} else {
		s.GCPercent = r.gcPercent()
		debug.SetGCPercent(s.GCPercent)
	}
	return s, nil
}
