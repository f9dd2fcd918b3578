package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// testSessionStore is the contract of a SessionStore, run against every implementation through
// the interface only (today the bbolt one; a shared database store must pass it too).
func testSessionStore(t *testing.T, open func(t *testing.T) SessionStore) {
	ctx := context.Background()
	msg := func(role, content string) *agentv1.HistoryMessage {
		return &agentv1.HistoryMessage{Role: role, Content: content}
	}
	t.Run("unknown session", func(t *testing.T) {
		s := open(t)
		if _, err := s.History(ctx, "nope"); !errors.Is(err, ErrNoSession) {
			t.Fatalf("History of an unknown session: %v, want ErrNoSession", err)
		}
		infos, err := s.List(ctx)
		if err != nil || len(infos) != 0 {
			t.Fatalf("List of an empty store: %v, %v", infos, err)
		}
	})
	t.Run("append keeps order and titles by the first user message", func(t *testing.T) {
		s := open(t)
		first := []*agentv1.HistoryMessage{msg("system", "be brief"), msg("user", strings.Repeat("é", 70)), msg("assistant", "ok")}
		if err := s.Append(ctx, "s1", first...); err != nil {
			t.Fatal(err)
		}
		tool := &agentv1.HistoryMessage{Role: "tool", Content: "42", ToolCallId: "c1"}
		if err := s.Append(ctx, "s1", msg("user", "second"), tool); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "s2", msg("user", "other")); err != nil {
			t.Fatal(err)
		}
		got, err := s.History(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		want := append(first, msg("user", "second"), tool)
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("History (-want +got):\n%s", diff)
		}
		infos, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]*agentv1.SessionInfo{}
		for _, in := range infos {
			byID[in.GetSessionId()] = in
		}
		s1, s2 := byID["s1"], byID["s2"]
		if len(infos) != 2 || s1 == nil || s2 == nil {
			t.Fatalf("List: %v, want s1 and s2", infos)
		}
		if s1.GetMessages() != 5 || s1.GetTitle() != strings.Repeat("é", 60)+"…" || s2.GetTitle() != "other" {
			t.Errorf("s1 %v, s2 %v", s1, s2)
		}
		if s1.GetCreatedUnix() == 0 || s1.GetUpdatedUnix() < s1.GetCreatedUnix() {
			t.Errorf("s1 times: created %d updated %d", s1.GetCreatedUnix(), s1.GetUpdatedUnix())
		}
	})
}

func TestSessionsBolt(t *testing.T) {
	testSessionStore(t, func(t *testing.T) SessionStore {
		s, err := OpenSessions(filepath.Join(t.TempDir(), "sessions.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
