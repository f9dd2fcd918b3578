package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/audit"
)

// TestAuditQueryRejectsImpossibleFilters: a filter value no record can hold (--decision maybe)
// used to print an empty table; it is a usage error naming the accepted values.
func TestAuditQueryRejectsImpossibleFilters(t *testing.T) {
	dir, _ := auditFixture(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"decision", []string{"--decision", "maybe"}, "want one of ALLOW, BLOCK, ESCALATE"},
		{"tier", []string{"--tier", "7"}, "want 0..3"},
		{"type", []string{"--type", "decisions"}, "want one of decision,"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runShield(t, append([]string{"audit", "query", "--dir", dir}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, tc.want)
			}
		})
	}
	// Accepted values still work, in any case.
	code, out, errs := runShield(t, "audit", "query", "--dir", dir, "--decision", "Block")
	if code != 0 || strings.Count(out, "BLOCK") != 1 {
		t.Fatalf("--decision Block: exit %d\n%s%s", code, out, errs)
	}
}

// TestAuditTableEveryType: approval rows (and the other record types) print their state, id and
// reason instead of blank cells.
func TestAuditTableEveryType(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := audit.Open(audit.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	appends := []struct {
		typ audit.Type
		p   any
	}{
		{audit.TypeServiceStart, map[string]any{"version": "v1.2.3", "bundle_revision": "rev-9"}},
		{audit.TypeApprovalRequested, map[string]any{"id": "apr_0123", "tool": "Bash", "action_class": "vcs_push",
			"session_id": "s-7", "rules": []string{"cel:push"}, "reason": "pushes to main", "state": "pending", "created": now}},
		{audit.TypeApprovalResolved, map[string]any{"id": "apr_0123", "tool": "Bash", "action_class": "vcs_push",
			"session_id": "s-7", "state": "approved", "resolver": "oncall-token", "comment": "release day"}},
		{audit.TypeAgentEvent, map[string]any{"event": "crashed", "detail": "exit 2"}},
	}
	for _, a := range appends {
		if _, err := l.Append(ctx, a.typ, a.p); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	code, out, errs := runShield(t, "audit", "query", "--dir", dir, "--limit", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"PENDING", "apr_0123 pushes to main", "APPROVED", "apr_0123 by oncall-token: release day",
		"vcs_push", "s-7", "cel:push", "version v1.2.3 rev-9", "crashed \"exit 2\"", "covers "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
