package engine

import (
	"log/slog"
	"strings"
	"testing"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// TestWatchers: a watcher of one session gets that session's events only; a watcher of every
// session gets all and the log entries; one that stops reading is dropped, never blocking.
func TestWatchers(t *testing.T) {
	var w watchers
	one, all := w.add("s1"), w.add("")
	log := slog.New(&logTee{next: slog.DiscardHandler, w: &w}).With("workspace", "/ws")
	w.publish(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, SessionId: "s1", Text: "a"})
	w.publish(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, SessionId: "s2", Text: "b"})
	log.Info("agent connected", "agent_id", "a1")
	log.Debug("not at debug")
	if len(one.ch) != 1 || (<-one.ch).GetLlmToken().GetText() != "a" {
		t.Errorf("session watcher got the wrong events")
	}
	if len(all.ch) != 3 {
		t.Fatalf("every-session watcher got %d events, want 3", len(all.ch))
	}
	<-all.ch
	<-all.ch
	le := (<-all.ch).GetLogEntry()
	if le.GetMessage() != "agent connected" || le.GetLevel() != "INFO" || !strings.Contains(le.GetAttrsJson(), `"agent_id":"a1"`) ||
		!strings.Contains(le.GetAttrsJson(), `"workspace":"/ws"`) || le.GetTimestampUnixMs() == 0 {
		t.Errorf("log entry %v", le)
	}
	for i := 0; i < watchQueue+1; i++ {
		w.publish(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, SessionId: "s1"})
	}
	select {
	case <-one.behind:
	default:
		t.Fatal("a watcher that stopped reading was not dropped")
	}
	w.publish(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, SessionId: "s1"}) // no panic on a dropped watcher
	w.remove(all)
	var many []*watcher
	for range maxWatchers {
		many = append(many, w.add("s"))
	}
	if many[maxWatchers-1] == nil || w.add("s") != nil {
		t.Errorf("watchers not bounded at %d", maxWatchers)
	}
	for _, x := range many {
		w.remove(x)
	}
	if w.watching() {
		t.Error("watching after every watcher left")
	}
}
