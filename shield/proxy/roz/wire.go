package roz

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// The roz.v1 messages the proxy reads or writes, by field number (proto/roz/v1/agent.proto of
// Bedrock-Dynamics/roz-oss; v0.2.0 is the seed-era dialect, HEAD the newer one). Everything
// else is relayed as the bytes it arrived as, never decoded.
const (
	// SessionRequest (client → runtime) oneof
	reqToolResult         = 3
	reqPermissionDecision = 8
	// ToolResult
	trToolCallID = 1
	trSuccess    = 2
	trResult     = 3
	// PermissionDecision: id (v0.2 tool_call_id, HEAD approval_id), approved, HEAD modifier
	pdID       = 1
	pdApproved = 2
	pdModifier = 3

	// SessionResponse (runtime → client) oneof
	respToolRequest    = 4  // v0.2 ToolRequest{tool_call_id, tool_name, parameters, timeout_ms}
	respActivityUpdate = 11 // v0.2 ActivityUpdate{state, detail, progress}
	respSessionEvent   = 19 // HEAD SessionEventEnvelope
	// SessionEventEnvelope
	envEventID                                            = 1
	envCorrelationID                                      = 2
	envEventType                                          = 5
	envToolCallRequested                                  = 14 // ToolCallRequestedPayload{call_id, tool_name, parameters, timeout_ms}
	envActivityChanged                                    = 17 // ActivityChangedPayload{state, reason, robot_safe, unblock_event}
	envApprovalRequested                                  = 23
	toolReqID, toolReqName, toolReqParams, toolReqTimeout = 1, 2, 3, 4
)

// ErrMalformed: a frame the proxy must read did not decode.
var ErrMalformed = errors.New("malformed roz.v1 frame")

// field is one top-level field of a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	val []byte // the value's bytes (for BytesType: the payload)
}

// fields splits a message into its top-level fields, refusing anything malformed.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(m))
		}
		val := b[:m]
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b)
			val = v
		}
		out = append(out, field{num: num, typ: typ, val: val})
		b = b[m:]
		if len(out) > 4096 {
			return nil, fmt.Errorf("%w: too many fields", ErrMalformed)
		}
	}
	return out, nil
}

// toolRequest is a ToolRequest (v0.2) or a ToolCallRequestedPayload (HEAD): same numbers.
type toolRequest struct {
	ID, Tool  string
	Arguments []byte // JSON object
	TimeoutMS uint64
}

func parseToolRequest(b []byte) (toolRequest, error) {
	fs, err := fields(b)
	if err != nil {
		return toolRequest{}, err
	}
	var tr toolRequest
	var params []byte
	for _, f := range fs {
		switch {
		case f.num == toolReqID && f.typ == protowire.BytesType:
			tr.ID = string(f.val)
		case f.num == toolReqName && f.typ == protowire.BytesType:
			tr.Tool = string(f.val)
		case f.num == toolReqParams && f.typ == protowire.BytesType:
			params = append(params, f.val...) // repeated occurrences merge, as the runtime decodes them
		case f.num == toolReqTimeout && f.typ == protowire.VarintType:
			tr.TimeoutMS, _ = protowire.ConsumeVarint(f.val)
		}
	}
	var s structpb.Struct
	if err := (proto.UnmarshalOptions{RecursionLimit: 64}).Unmarshal(params, &s); err != nil {
		return toolRequest{}, fmt.Errorf("%w: parameters: %v", ErrMalformed, err)
	}
	tr.Arguments, err = protojson.Marshal(&s)
	if err != nil {
		return toolRequest{}, fmt.Errorf("%w: parameters: %v", ErrMalformed, err)
	}
	if tr.ID == "" || tr.Tool == "" {
		return toolRequest{}, fmt.Errorf("%w: a tool request without an id or a tool name", ErrMalformed)
	}
	return tr, nil
}

// failedToolResult is SessionRequest{tool_result: ToolResult{id, success: false, result}}.
func failedToolResult(id, result string) []byte {
	var tr []byte
	tr = protowire.AppendTag(tr, trToolCallID, protowire.BytesType)
	tr = protowire.AppendString(tr, id)
	tr = protowire.AppendTag(tr, trSuccess, protowire.VarintType)
	tr = protowire.AppendVarint(tr, 0)
	tr = protowire.AppendTag(tr, trResult, protowire.BytesType)
	tr = protowire.AppendString(tr, result)
	var b []byte
	b = protowire.AppendTag(b, reqToolResult, protowire.BytesType)
	return protowire.AppendBytes(b, tr)
}

// permissionDecision is SessionRequest{permission_decision: {id, approved}}.
func permissionDecision(id string, approved bool) []byte {
	var pd []byte
	pd = protowire.AppendTag(pd, pdID, protowire.BytesType)
	pd = protowire.AppendString(pd, id)
	pd = protowire.AppendTag(pd, pdApproved, protowire.VarintType)
	pd = protowire.AppendVarint(pd, protowire.EncodeBool(approved))
	var b []byte
	b = protowire.AppendTag(b, reqPermissionDecision, protowire.BytesType)
	return protowire.AppendBytes(b, pd)
}

// waitingUpdate tells the client a call waits for a human: v0.2 ActivityUpdate or, for a HEAD
// session, a SessionEventEnvelope carrying ActivityChangedPayload.
func waitingUpdate(head bool, callID string) []byte {
	var b []byte
	if !head {
		var au []byte
		au = protowire.AppendTag(au, 1, protowire.BytesType)
		au = protowire.AppendString(au, "waiting_approval")
		au = protowire.AppendTag(au, 2, protowire.BytesType)
		au = protowire.AppendString(au, callID)
		b = protowire.AppendTag(b, respActivityUpdate, protowire.BytesType)
		return protowire.AppendBytes(b, au)
	}
	var ac []byte
	ac = protowire.AppendTag(ac, 1, protowire.BytesType)
	ac = protowire.AppendString(ac, "waiting_approval")
	ac = protowire.AppendTag(ac, 2, protowire.BytesType)
	ac = protowire.AppendString(ac, "Shield: waiting for a human decision on "+callID)
	var env []byte
	env = protowire.AppendTag(env, envEventID, protowire.BytesType)
	env = protowire.AppendString(env, "shield-"+callID)
	env = protowire.AppendTag(env, envCorrelationID, protowire.BytesType)
	env = protowire.AppendString(env, callID)
	env = protowire.AppendTag(env, envEventType, protowire.BytesType)
	env = protowire.AppendString(env, "activity_changed")
	env = protowire.AppendTag(env, envActivityChanged, protowire.BytesType)
	env = protowire.AppendBytes(env, ac)
	b = protowire.AppendTag(b, respSessionEvent, protowire.BytesType)
	return protowire.AppendBytes(b, env)
}

// withoutField re-encodes a message without every occurrence of field num.
func withoutField(b []byte, num protowire.Number) ([]byte, bool, error) {
	var out []byte
	removed := false
	for len(b) > 0 {
		n, typ, tn := protowire.ConsumeTag(b)
		if tn < 0 {
			return nil, false, ErrMalformed
		}
		m := protowire.ConsumeFieldValue(n, typ, b[tn:])
		if m < 0 {
			return nil, false, ErrMalformed
		}
		if n == num {
			removed = true
		} else {
			out = append(out, b[:tn+m]...)
		}
		b = b[tn+m:]
	}
	return out, removed, nil
}
