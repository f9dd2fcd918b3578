package sandbox

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// Every syscall the table names must exist on this architecture: a typo would otherwise drop a
// denial (buildFilter refuses it, so Apply fails closed, but catch it here first).
func TestSeccompTableNames(t *testing.T) {
	for _, r := range seccompTable {
		if r.why == "" {
			t.Errorf("rule for %v has no reason", r.names)
		}
		for _, n := range r.names {
			if _, err := syscallNumber(n); err != nil {
				t.Errorf("rule %q: %v", r.why, err)
			}
		}
	}
}

func TestFilterHash(t *testing.T) {
	profiles := map[string]Profile{
		"zero":  {},
		"spawn": {Spawn: true},
		"udp":   {ConnectUDP: []uint16{53}},
		"unix":  {Unix: true},
		"inet":  {ConnectTCP: []uint16{443}},
		"deny":  {Seccomp: SeccompPolicy{Deny: []string{"getpid"}}},
		"meta":  {Metadata: true},
	}
	seen := map[string]string{}
	for name, p := range profiles {
		h1, err := FilterHash(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h2, err := FilterHash(p)
		if err != nil {
			t.Fatal(err)
		}
		if h1 != h2 {
			t.Errorf("%s: hash not deterministic: %s, %s", name, h1, h2)
		}
		if other, dup := seen[h1]; dup {
			t.Errorf("profiles %s and %s give the same filter", name, other)
		}
		seen[h1] = name
	}
	// Paths and ports are Landlock's business, not seccomp's.
	a, _ := FilterHash(Profile{ConnectTCP: []uint16{443}})
	b, _ := FilterHash(Profile{ConnectTCP: []uint16{80}, ReadOnly: []string{"/usr"}})
	if a != b {
		t.Error("the filter depends on ports or paths")
	}
}

func TestRulesGates(t *testing.T) {
	count := func(p Profile, name string) int {
		n := 0
		for _, r := range rules(p) {
			for _, s := range r.names {
				if s == name {
					n++
				}
			}
		}
		return n
	}
	if count(Profile{}, "execve") != 1 || count(Profile{Spawn: true}, "execve") != 0 {
		t.Error("execve must be denied exactly when spawning is not allowed")
	}
	for _, p := range []Profile{{}, {Spawn: true}, {Unix: true, ConnectTCP: []uint16{1}, ConnectUDP: []uint16{1}}} {
		for _, always := range []string{"ptrace", "mount", "io_uring_setup", "unshare", "bpf", "clone3"} {
			if count(p, always) == 0 {
				t.Errorf("profile %+v: %s not denied", p, always)
			}
		}
	}
}

func BenchmarkFilterBuild(b *testing.B) {
	for b.Loop() {
		if _, err := FilterHash(Profile{ConnectTCP: []uint16{443}}); err != nil {
			b.Fatal(err)
		}
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// describeRules renders the rules in force for p, one per line, for review.
func describeRules(p Profile) string {
	var b strings.Builder
	for _, r := range rules(p) {
		errno := r.errno
		if errno == 0 {
			errno = unix.EPERM
		}
		var conds []string
		for _, c := range r.all {
			switch c.op {
			case maskedEq:
				conds = append(conds, fmt.Sprintf("arg%d&%#x==%#x", c.arg, c.mask, c.value))
			case notEq:
				conds = append(conds, fmt.Sprintf("arg%d!=%#x", c.arg, c.value))
			case greater:
				conds = append(conds, fmt.Sprintf("arg%d>%#x", c.arg, c.value))
			}
		}
		cond := "always"
		if len(conds) > 0 {
			cond = strings.Join(conds, " && ")
		}
		fmt.Fprintf(&b, "%s %s when %s  # %s\n", strings.Join(r.names, ","), unix.ErrnoName(errno), cond, r.why)
	}
	return b.String()
}

// TestSeccompGolden pins the rules in force for the zero profile and for a permissive one, so that
// any change to the table shows up in review as a diff of testdata/*.golden
// (go test ./sandbox -run TestSeccompGolden -update rewrites them).
func TestSeccompGolden(t *testing.T) {
	for name, p := range map[string]Profile{
		"zero":       {},
		"permissive": {Spawn: true, Unix: true, Metadata: true, ConnectTCP: []uint16{1}, ConnectUDP: []uint16{1}},
	} {
		t.Run(name, func(t *testing.T) {
			got := describeRules(p)
			path := filepath.Join("testdata", "seccomp_"+name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("rules (-golden +table):\n%s", diff)
			}
		})
	}
}
