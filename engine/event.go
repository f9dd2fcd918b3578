package engine

import (
	"context"

	"github.com/shieldsec/shield/audit"
)

// Event is an engine lifecycle event the Supervisor and the Engine record. It is not a string, so
// that a misspelt event cannot compile; Name is the name written to the audit trail (API: never
// renamed, only added).
type Event uint8

// Engine events. All but EventCanaryResult are written as audit.TypeAgentEvent records,
// {"event": Name, "detail": payload}.
const (
	// EventCanaryResult: the sandbox canary report (payload: the report JSON), written as its own
	// record type, audit.TypeSandboxCanaryResult.
	EventCanaryResult Event = iota + 1
	EventAgentStarted
	EventAgentReady
	EventAgentRefused
	EventAgentDropped
	EventAgentExited
	EventAgentCrashed
	EventAgentUnsandboxed
	EventSubagentStarted
	// EventEngineStopped: a hosted engine stopped for good (written by the appliance).
	EventEngineStopped
)

var eventNames = [...]string{
	EventCanaryResult:     string(audit.TypeSandboxCanaryResult),
	EventAgentStarted:     "agent_started",
	EventAgentReady:       "agent_ready",
	EventAgentRefused:     "agent_refused",
	EventAgentDropped:     "agent_dropped",
	EventAgentExited:      "agent_exited",
	EventAgentCrashed:     "agent_crashed",
	EventAgentUnsandboxed: "agent_unsandboxed",
	EventSubagentStarted:  "subagent_started",
	EventEngineStopped:    "engine_stopped",
}

// Name is the event's name in the audit trail ("" for a value that is not an Event).
func (e Event) Name() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return ""
}

func (e Event) String() string { return e.Name() }

// Record returns the audit record type and payload that e with detail is written as.
func (e Event) Record(detail any) (audit.Type, any) {
	if e == EventCanaryResult {
		return audit.TypeSandboxCanaryResult, detail
	}
	return audit.TypeAgentEvent, audit.AgentEvent{Event: e.Name(), Detail: detail}
}

// Recorder writes engine events (agent start, canary report) to the audit trail; ev.Record gives
// the record to write.
type Recorder interface {
	Record(ctx context.Context, ev Event, detail any) error
}
