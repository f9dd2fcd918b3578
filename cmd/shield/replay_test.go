package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
)

// candidateBundle copies the default bundle and turns one rule (destructive.disk-wipe) from
// block to escalate.
func candidateBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cand")
	if err := os.CopyFS(dir, os.DirFS("../../policies/default")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rules", "destructive.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i := strings.Index(s, "id: destructive.disk-wipe")
	j := strings.Index(s[i:], "decision: block")
	if i < 0 || j < 0 {
		t.Fatal("default bundle no longer has destructive.disk-wipe deciding block")
	}
	s = s[:i+j] + "decision: escalate" + s[i+j+len("decision: block"):]
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	// The effect rule that also blocks formatting (rego/destroy.rego) escalates in the candidate
	// too, so the two wipes change and nothing else does.
	file = filepath.Join(dir, "rego", "destroy.rego")
	text, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const fmtRule = `deny contains finding("effects.disk-format"`
	if !strings.Contains(string(text), fmtRule) {
		t.Fatal("default bundle no longer has effects.disk-format denying")
	}
	s = strings.Replace(string(text), fmtRule, `escalate contains finding("effects.disk-format"`, 1)
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	// Its Rego test follows, or the candidate's own tests refuse it.
	file = filepath.Join(dir, "rego", "destroy_test.rego")
	if text, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	s = strings.ReplaceAll(string(text), `"effects.disk-format" in rules(shield.deny) with input as act([{"kind": "privilege", "target": "root", "program": "nvme"`,
		`"effects.disk-format" in rules(shield.escalate) with input as act([{"kind": "privilege", "target": "root", "program": "nvme"`)
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func replayJSON(t *testing.T, args ...string) replayReport {
	t.Helper()
	code, out, errs := runCmd(t, "", append([]string{"policy", "replay", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("policy replay exit %d: %s%s", code, out, errs)
	}
	var rep replayReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("replay --json output: %v\n%s", err, out)
	}
	return rep
}

func TestPolicyReplayCorpus(t *testing.T) {
	cand := candidateBundle(t)
	corpus := filepath.Join(t.TempDir(), "calls.jsonl")
	lines := []string{
		`{"id":"wipe-1","tool":"Bash","arguments":{"command":"mkfs.ext4 /dev/sdb1"}}`,
		`{"id":"ls-1","tool":"Bash","arguments":{"command":"ls -la"}}`,
		`{"id":"wipe-2","tool":"Bash","arguments":{"command":"wipefs -a /dev/sdc"}}`,
		``,
		`{"id":"rmroot","tool":"Bash","arguments":{"command":"rm -rf /"}}`,
		`not json`,
	}
	if err := os.WriteFile(corpus, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := replayJSON(t, "--bundle", cand, "--corpus", corpus)
	if rep.Calls != 5 || rep.Changed != 2 || rep.Unchanged != 3 {
		t.Errorf("calls/changed/unchanged = %d/%d/%d, want 5/2/3", rep.Calls, rep.Changed, rep.Unchanged)
	}
	if rep.Errors != 1 {
		t.Errorf("errors = %d, want 1 (the line that is not JSON)", rep.Errors)
	}
	if len(rep.Changes) != 1 {
		t.Fatalf("changes = %+v, want one group", rep.Changes)
	}
	g := rep.Changes[0]
	if g.From != "BLOCK" || g.To != "ESCALATE" || g.Rule != "cel:destructive.disk-wipe" || g.Count != 2 ||
		strings.Join(g.Examples, " ") != "wipe-1 wipe-2" {
		t.Errorf("group = %+v", g)
	}
	if rep.Redacted != 0 || len(rep.RedactedChanges) != 0 {
		t.Errorf("a corpus has no redacted calls: %+v", rep)
	}
	// The same bundle as baseline and candidate changes nothing.
	same := replayJSON(t, "--bundle", cand, "--baseline", cand, "--corpus", corpus)
	if same.Changed != 0 || len(same.Changes) != 0 {
		t.Errorf("replay against itself changed %d calls: %+v", same.Changed, same.Changes)
	}
	// With the service's config the baseline is its policy.path: the live bundle is the
	// candidate here, so nothing changes; its workspace applies too.
	cfgFile := filepath.Join(t.TempDir(), "shield.yaml")
	os.WriteFile(cfgFile, []byte("policy:\n  path: "+cand+"\n  workspace: /srv/ws\n"), 0o600)
	live := replayJSON(t, "--bundle", cand, "--config", cfgFile, "--corpus", corpus)
	if live.Changed != 0 || !strings.Contains(live.Baseline, cand) {
		t.Errorf("replay with --config: baseline %q, %d changed; want the config's bundle and no change", live.Baseline, live.Changed)
	}
	// --limit bounds the calls; the text report names the group.
	code, out, errs := runCmd(t, "", "policy", "replay", "--bundle", cand, "--corpus", corpus, "--limit", "1")
	if code != 0 || !strings.Contains(out, "1 calls replayed: 1 changed") ||
		!strings.Contains(out, "BLOCK -> ESCALATE") || !strings.Contains(out, "cel:destructive.disk-wipe") {
		t.Errorf("text report (exit %d):\n%s%s", code, out, errs)
	}
}

func TestPolicyReplayAudit(t *testing.T) {
	cand := candidateBundle(t)
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := audit.Open(audit.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rec := newAuditRecorder(l)
	calls := []struct {
		id, args string
	}{
		{"c-wipe", `{"command":"mkfs.ext4 /dev/sdb1"}`},
		{"c-ls", `{"command":"ls"}`},
		// The token is redacted in the record; the call is still replayed, and reported apart.
		{"c-wipe-secret", `{"command":"mkfs.ext4 /dev/sdc1","token":"s3cr3t-value"}`},
	}
	for _, c := range calls {
		_, err := rec.RecordDecision(context.Background(), &shield.DecisionRecord{
			Call: &shield.Call{ID: c.id, Tool: "Bash", Arguments: json.RawMessage(c.args),
				Context: shield.CallContext{SessionID: "sess-1", AgentID: "agent-1"}},
			Verdict: &shield.Verdict{Decision: shield.Block, Tier: shield.TierCEL, ActionClass: "exec"},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := replayJSON(t, "--bundle", cand, "--audit", dir)
	if rep.Calls != 3 || rep.Changed != 2 || rep.Redacted != 1 || rep.Skipped != 0 {
		t.Errorf("report = %+v", rep)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].Count != 1 || rep.Changes[0].Rule != "cel:destructive.disk-wipe" ||
		len(rep.Changes[0].Examples) != 1 || !strings.HasSuffix(rep.Changes[0].Examples[0], "/c-wipe") {
		t.Errorf("changes = %+v", rep.Changes)
	}
	if len(rep.RedactedChanges) != 1 || rep.RedactedChanges[0].From != "BLOCK" || rep.RedactedChanges[0].To != "ESCALATE" ||
		!strings.HasSuffix(rep.RedactedChanges[0].Examples[0], "/c-wipe-secret") {
		t.Errorf("redacted changes = %+v", rep.RedactedChanges)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "1 calls had redacted arguments") {
		t.Errorf("notes do not say calls were redacted: %q", rep.Notes)
	}
	// The allowed "ls" was recorded as BLOCK: the baseline disagrees with the record.
	if rep.RecordedDiffers != 1 {
		t.Errorf("recorded_differs = %d, want 1", rep.RecordedDiffers)
	}
	code, out, _ := runCmd(t, "", "policy", "replay", "--bundle", cand, "--audit", dir)
	if code != 0 || !strings.Contains(out, "changes among calls with redacted arguments") ||
		!strings.Contains(out, "1 calls had redacted arguments; their verdicts under either bundle may differ from the original") {
		t.Errorf("text report (exit %d):\n%s", code, out)
	}
}

func TestPolicyReplayUsage(t *testing.T) {
	for _, args := range [][]string{
		{"policy", "replay", "--corpus", "x"},
		{"policy", "replay", "--bundle", "b"},
		{"policy", "replay", "--bundle", "b", "--corpus", "x", "--audit", "y"},
		{"policy", "replay", "--bundle", "b", "--corpus", "x", "--limit", "0"},
	} {
		if code, _, _ := runCmd(t, "", args...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
