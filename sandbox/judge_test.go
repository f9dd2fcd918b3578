package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	ok := probeLine{Outcome: Outcome{Result: "ok"}}
	denied := probeLine{Outcome: Outcome{Result: "denied", Errno: "EPERM"}}
	failed := probeLine{Outcome: Outcome{Result: "error", Errno: "ENOENT"}}
	mk := func(l probeLine) *run { return &run{outcomes: map[string]probeLine{probeTCP: l, probeIOURing: l}} }
	trace := evidence{probeTCP: "listener accepted 1 connection(s)"}
	tests := []struct {
		name              string
		probe             string
		control, confined *run
		controlEv, confEv evidence
		want              Verdict
	}{
		{"blocked", probeTCP, mk(ok), mk(denied), trace, evidence{}, VerdictBlocked},
		{"allowed", probeTCP, mk(ok), mk(ok), trace, trace, VerdictAllowed},
		{"denied but the listener got it", probeTCP, mk(ok), mk(denied), trace, trace, VerdictAllowed},
		{"control claims success without a trace", probeTCP, mk(ok), mk(denied), evidence{}, evidence{}, VerdictError},
		{"control failed", probeTCP, mk(failed), mk(denied), evidence{}, evidence{}, VerdictError},
		{"host denies", probeIOURing, mk(denied), mk(denied), evidence{}, evidence{}, VerdictHostDenied},
		{"host lacks the feature", probeMPTCP, &run{outcomes: map[string]probeLine{probeMPTCP: {Outcome: Outcome{Result: "error", Errno: "EPROTONOSUPPORT"}}}},
			&run{outcomes: map[string]probeLine{probeMPTCP: denied}}, evidence{}, evidence{}, VerdictHostDenied},
		{"host lacks the feature but confined succeeds", probeMPTCP, &run{outcomes: map[string]probeLine{probeMPTCP: {Outcome: Outcome{Result: "error", Errno: "EPROTONOSUPPORT"}}}},
			&run{outcomes: map[string]probeLine{probeMPTCP: ok}}, evidence{}, evidence{}, VerdictAllowed},
		{"ENOSYS is no host refusal for tcp", probeTCP, &run{outcomes: map[string]probeLine{probeTCP: {Outcome: Outcome{Result: "error", Errno: "ENOSYS"}}}},
			mk(denied), evidence{}, evidence{}, VerdictError},
		{"other errno confined", probeIOURing, mk(ok), mk(failed), evidence{}, evidence{}, VerdictError},
		{"no report confined", probeIOURing, mk(ok), &run{outcomes: map[string]probeLine{}}, evidence{}, evidence{}, VerdictError},
		{"no trace needed", probeIOURing, mk(ok), mk(denied), evidence{}, evidence{}, VerdictBlocked},
		{"execve replaced control", probeExecve, &run{execTry: true, exited: true}, &run{outcomes: map[string]probeLine{probeExecve: denied}}, evidence{}, evidence{}, VerdictBlocked},
		{"execve replaced confined", probeExecve, &run{execTry: true, exited: true}, &run{execTry: true, exited: true}, evidence{}, evidence{}, VerdictAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge(tt.probe, tt.control, tt.controlEv, tt.confined, tt.confEv)
			if got.Verdict != tt.want {
				t.Errorf("verdict %s, want %s (%+v)", got.Verdict, tt.want, got)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	goodProc := &ProcessCheck{NoNewPrivs: 1, SeccompMode: 2, SeccompFilters: 1, ExpectedSeccompFilters: 1, OK: true}
	probes := func(vs ...Verdict) []ProbeResult {
		var out []ProbeResult
		for i, v := range vs {
			out = append(out, ProbeResult{Name: ProbeNames[i], Verdict: v})
		}
		return out
	}
	tests := []struct {
		name string
		r    Report
		want Status
	}{
		{"all blocked", Report{Process: goodProc, Probes: probes(VerdictBlocked, VerdictHostDenied)}, StatusSandboxed},
		{"one allowed", Report{Process: goodProc, Probes: probes(VerdictBlocked, VerdictAllowed)}, StatusPartial},
		{"one error", Report{Process: goodProc, Probes: probes(VerdictBlocked, VerdictError)}, StatusPartial},
		{"none blocked", Report{Process: goodProc, Probes: probes(VerdictAllowed, VerdictError)}, StatusUnsandboxed},
		{"process not confined", Report{Process: &ProcessCheck{}, Probes: probes(VerdictBlocked)}, StatusPartial},
		{"process not inspected", Report{Probes: probes(VerdictBlocked)}, StatusPartial},
		{"no probes", Report{Process: goodProc}, StatusUnsandboxed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.summarize()
			if diff := cmp.Diff(tt.want, r.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s\nproblems %q", diff, r.Problems)
			}
			if (r.Status == StatusSandboxed) != (len(r.Problems) == 0) {
				t.Errorf("status %s with problems %q", r.Status, r.Problems)
			}
		})
	}
}
