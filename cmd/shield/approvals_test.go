package main

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strconv"
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

// approvalsTestServer serves svc on dir/shield.sock as serve does: peer credentials and the
// default unix roles (this process's user has every role).
func approvalsTestServer(t *testing.T, dir string, svc *approval.Service) {
	t.Helper()
	auth, err := server.NewAuth(server.AuthConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "shield.sock"))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(server.PeerCredentials()), grpc.UnaryInterceptor(auth.UnaryInterceptor()),
		grpc.StreamInterceptor(auth.StreamInterceptor()))
	shieldv1.RegisterApprovalServiceServer(gs, server.NewApprovalService(svc, server.Identity))
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
}

// TestApprovalsCLIGrantAndEscaping: the CLI shows agent-supplied fields with control and format
// characters escaped, approves with a scoped grant (--for), and refuses --for on deny.
func TestApprovalsCLIGrantAndEscaping(t *testing.T) {
	dir := t.TempDir()
	svc, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	approvalsTestServer(t, dir, svc)

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
	// The grant allows the same call again; revoked, the call asks a human again.
	if r, err := svc.Tier().Evaluate(context.Background(), in); err != nil || len(r.Findings) == 0 || r.Findings[0].Decision != shield.Allow {
		t.Fatalf("within the grant: %+v %v", r, err)
	}
	if code, out, errs := runCmd(t, "", "approvals", "revoke", id, "--comment", "too broad", "--json", "--state-dir", dir); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %d %q %q", code, out, errs)
	}
	if r, err := svc.Tier().Evaluate(context.Background(), in); err != nil || len(r.Findings) == 0 || r.Findings[0].Decision == shield.Allow {
		t.Fatalf("after revoke the grant still allows: %+v %v", r, err)
	}
	if code, _, _ := runCmd(t, "", "approvals", "revoke", "--state-dir", dir); code == 0 {
		t.Error("revoke without an id was accepted")
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

// TestApprovalsCLIListPagesLargeArguments: five requests with 1 MB arguments list fine; list
// follows pages (--page-size 2) and stops at --limit; list views carry previews; show prints
// the whole arguments.
func TestApprovalsCLIListPagesLargeArguments(t *testing.T) {
	dir := t.TempDir()
	svc, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	approvalsTestServer(t, dir, svc)
	big := strings.Repeat("x", 1000_000)
	var ids []string
	for i := range 5 {
		args, _ := json.Marshal(map[string]string{"command": "echo " + big, "n": strconv.Itoa(i)})
		res, err := svc.Tier().Evaluate(context.Background(), &shield.Input{Call: &shield.Call{Tool: "Bash", Arguments: args,
			Context: shield.CallContext{SessionID: "s1", Caller: "token:runtime-1"}}, Action: &normalize.Action{Class: "exec"},
			ActionHash: "h" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.EscalationID)
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"all pages", []string{"--page-size", "2"}, 5},
		{"one page", nil, 5},
		{"limit", []string{"--page-size", "2", "--limit", "3"}, 3},
		{"limit json", []string{"--limit", "4", "--json"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, "", append([]string{"approvals", "list", "--state-dir", dir}, tc.args...)...)
			if code != 0 {
				t.Fatalf("list: %d %q", code, errs)
			}
			if len(out) > 64<<10 {
				t.Errorf("list printed %d bytes for %d requests", len(out), tc.want)
			}
			for i, id := range ids {
				if got := strings.Contains(out, id); got != (i < tc.want) {
					t.Errorf("request %d in the output: %v, want %v", i, got, i < tc.want)
				}
			}
		})
	}
	code, out, errs := runCmd(t, "", "approvals", "show", ids[3], "--state-dir", dir)
	if code != 0 || !strings.Contains(out, big) || strings.Contains(out, "truncated") {
		t.Errorf("show: %d, %d bytes, %q", code, len(out), errs)
	}
}
