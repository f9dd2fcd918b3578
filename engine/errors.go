package engine

import (
	"context"
	"errors"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// errAgentGone ends a turn whose agent disconnected (the supervisor starts a new one).
var errAgentGone = errors.New("the agent disconnected")

// agentError is an error the agent reported for its request.
type agentError struct{ code, msg string }

func (e *agentError) Error() string { return "agent error " + e.code + ": " + e.msg }

// errorEvent is the error event a turn that ended with err sends its client: a stable code, and
// whether a new message may succeed (every turn error leaves the engine serving).
func errorEvent(err error) *agentv1.PipelineEvent {
	code := "PIPELINE_ERROR"
	var ae *agentError
	switch {
	case errors.Is(err, errAgentGone):
		code = "AGENT_UNAVAILABLE"
	case errors.As(err, &ae):
		code = "AGENT_ERROR"
		if ae.code != "" {
			code = ae.code
		}
	case errors.Is(err, context.DeadlineExceeded):
		code = "TURN_TIMEOUT"
	case errors.Is(err, context.Canceled):
		code = "CANCELLED"
	case errors.Is(err, errClientBehind):
		code = "CLIENT_BEHIND"
	}
	return &agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ERROR, Text: err.Error(), IsError: true, Code: code, Recoverable: true}
}
