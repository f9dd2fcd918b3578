package sandbox

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// deniedBy returns the reason of the first rule in force for p that refuses syscall name with
// args, "" if none does. It reads the table the way the filter does (every condition of a rule
// must hold), so the table's logic can be checked for calls the tests cannot safely make.
func deniedBy(p Profile, name string, args [6]uint64) string {
	for _, r := range rules(p) {
		if !slices.Contains(r.names, name) {
			continue
		}
		all := true
		for _, c := range r.all {
			v := args[c.arg]
			var ok bool
			switch c.op {
			case maskedEq:
				ok = v&c.mask == c.value
			case notEq:
				ok = v != c.value
			case greater:
				ok = v > c.value
			}
			all = all && ok
		}
		if all {
			return r.why
		}
	}
	return ""
}

// TestSeccompScope pins the rules for syscalls whose arguments can reach processes other than the
// caller: only the caller itself may be named. Some of these cannot be tried for real in a test
// (as root, PRIO_USER or IOPRIO_WHO_USER with who=0 reach every root process on the host); the
// victims in victim_test.go try the others.
func TestSeccompScope(t *testing.T) {
	const (
		ioprioWhoPgrp = 2
		ioprioWhoUser = 3
		minusOne      = 0xffffffffffffffff
	)
	for _, tc := range []struct {
		name    string
		syscall string
		args    [6]uint64
		denied  bool
	}{
		{"setpriority self", "setpriority", [6]uint64{unix.PRIO_PROCESS, 0, 5}, false},
		{"setpriority another process", "setpriority", [6]uint64{unix.PRIO_PROCESS, 4242, 5}, true},
		{"setpriority own group", "setpriority", [6]uint64{unix.PRIO_PGRP, 0, 5}, true},
		{"setpriority own user", "setpriority", [6]uint64{unix.PRIO_USER, 0, 5}, true},
		{"setpriority own user, high half", "setpriority", [6]uint64{1<<32 | unix.PRIO_USER, 0, 5}, true},
		{"setpriority self, high half of which", "setpriority", [6]uint64{1 << 32, 0, 5}, true},
		{"setpriority self, high half of who", "setpriority", [6]uint64{unix.PRIO_PROCESS, 1 << 32, 5}, true},
		{"ioprio_set self", "ioprio_set", [6]uint64{ioprioWhoProcess, 0, 0x4007}, false},
		{"ioprio_set another process", "ioprio_set", [6]uint64{ioprioWhoProcess, 4242, 0x4007}, true},
		{"ioprio_set own group", "ioprio_set", [6]uint64{ioprioWhoPgrp, 0, 0x4007}, true},
		{"ioprio_set uid 0 (who 0)", "ioprio_set", [6]uint64{ioprioWhoUser, 0, 0x4007}, true},
		{"kill self (positive pid, left to Landlock)", "kill", [6]uint64{4242, 9}, false},
		{"kill own group", "kill", [6]uint64{0, 9}, true},
		{"kill own group, high half", "kill", [6]uint64{1 << 32, 9}, true},
		{"kill everyone", "kill", [6]uint64{minusOne, 9}, true},
		{"kill everyone, 32-bit -1", "kill", [6]uint64{0xffffffff, 9}, true},
		{"kill a group", "kill", [6]uint64{uint64(1<<64 - 4242), 9}, true},
		{"prlimit64 self", "prlimit64", [6]uint64{0, unix.RLIMIT_NOFILE}, false},
		{"prlimit64 another process", "prlimit64", [6]uint64{4242, unix.RLIMIT_NOFILE}, true},
		{"sched_setaffinity another thread", "sched_setaffinity", [6]uint64{4242}, true},
		{"sched_setscheduler another thread", "sched_setscheduler", [6]uint64{4242}, true},
		{"sched_setparam another thread", "sched_setparam", [6]uint64{4242}, true},
		{"sched_setattr another thread", "sched_setattr", [6]uint64{4242}, true},
		{"sched_setattr self", "sched_setattr", [6]uint64{0}, false},
		{"migrate_pages another process", "migrate_pages", [6]uint64{4242}, true},
		{"migrate_pages self", "migrate_pages", [6]uint64{0}, false},
		{"move_pages another process", "move_pages", [6]uint64{4242}, true},
		{"get_robust_list another thread", "get_robust_list", [6]uint64{4242}, true},
		{"get_robust_list self", "get_robust_list", [6]uint64{0}, false},
		{"process_mrelease", "process_mrelease", [6]uint64{3}, true},
		{"process_vm_readv", "process_vm_readv", [6]uint64{4242}, true},
		{"process_vm_writev", "process_vm_writev", [6]uint64{4242}, true},
		{"ptrace", "ptrace", [6]uint64{unix.PTRACE_ATTACH, 4242}, true},
		{"pidfd_getfd", "pidfd_getfd", [6]uint64{3, 0}, true},
		{"process_madvise", "process_madvise", [6]uint64{3}, true},
		{"kcmp", "kcmp", [6]uint64{4242, 4243}, true},
		{"perf_event_open", "perf_event_open", [6]uint64{0, 4242}, true},
		{"clone CLONE_PARENT", "clone", [6]uint64{unix.CLONE_PARENT | uint64(unix.SIGCHLD)}, true},
		{"clone a thread", "clone", [6]uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []Profile{{}, {Spawn: true, Unix: true, Metadata: true, ConnectTCP: []uint16{1}, ConnectUDP: []uint16{1}}} {
				if got := deniedBy(p, tc.syscall, tc.args) != ""; got != tc.denied {
					t.Errorf("profile %+v: denied %v, want %v", p, got, tc.denied)
				}
			}
		})
	}
}
