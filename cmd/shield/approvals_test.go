package main

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
	"github.com/shieldsec/shield/shield/server"
)

// TestApprovalsCLIGrantAndEscaping: the CLI shows agent-supplied fields with control and format
// characters escaped, approves with a scoped grant (--for), and refuses --for on deny.
func TestApprovalsCLIGrantAndEscaping(t *testing.T) {
	dir := t.TempDir()
	svc, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	l, err := net.Listen("unix", filepath.Join(dir, "shield.sock"))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	shieldv1.RegisterApprovalServiceServer(gs, server.NewApprovalService(svc, func(context.Context) string { return "uid:0" }))
	go gs.Serve(l)
	defer gs.Stop()

	evil := "rm -rf /tmp/x\x1b]0;pwned\x07\u202e"
	args, _ := json.Marshal(map[string]string{"command": evil})
	in := &shield.Input{Call: &shield.Call{Tool: "Bash\x1b[2J", Arguments: args,
		Context: shield.CallContext{SessionID: "s1\x1b[31m", Caller: "token:runtime-1"}},
		Action: &normalize.Action{Class: "exec"}, ActionHash: "h", Prior: &shield.Verdict{Reason: "why\x1b[0m"}}
	res, err := svc.Tier().Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	id := res.EscalationID
	for _, sub := range [][]string{{"list"}, {"show", id}} {
		code, out, errs := runCmd(t, "", append([]string{"approvals"}, append(sub, "--state-dir", dir)...)...)
		if code != 0 || !strings.Contains(out, id) {
			t.Fatalf("%v: %d %q %q", sub, code, out, errs)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%v printed raw control characters: %q", sub, out)
		}
	}
	if code, _, _ := runCmd(t, "", "approvals", "deny", id, "--for", "10m", "--state-dir", dir); code == 0 {
		t.Error("deny --for was accepted")
	}
	code, out, errs := runCmd(t, "", "approvals", "approve", id, "--for", "10m", "--json", "--state-dir", dir)
	if code != 0 {
		t.Fatalf("approve --for: %d %q %q", code, out, errs)
	}
	var got struct {
		State      string    `json:"state"`
		GrantUntil time.Time `json:"grantUntil"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.State != "approved" || time.Until(got.GrantUntil) < 5*time.Minute {
		t.Errorf("approve --for: %q (%v)", out, err)
	}
}

func FuzzApprovalsSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred", "a\u202eb", "\xff\xfe", "tab\there", "line\nbreak", "zero\u200bwidth"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := approvalsSafe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("%q kept %U", s, r)
			}
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) && out != s {
			t.Fatalf("changed a clean string: %q → %q", s, out)
		}
	})
}
