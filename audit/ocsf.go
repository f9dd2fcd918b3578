package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// OCSF mapping of audit records (Open Cybersecurity Schema Framework 1.1.0). The table is in
// audit/README.md ("Shipping the audit trail"); ocsf_test.go checks it.
//
//   decision, approval_requested, approval_resolved → API Activity (6003, Application Activity),
//     with the Security Control profile (action, disposition, policy)
//   service_start, service_stop, bundle_activated → Application Lifecycle (6002)
//   every other type (checkpoint, anchored, recovered, agent_event, sandbox_canary_result, and
//     types added later) → Base Event (0)
//
// Nothing is dropped: the record's seq, type, hash, prev and its (redacted) payload are kept
// under "unmapped".

// OCSFVersion is the schema version events claim.
const OCSFVersion = "1.1.0"

// OCSF class, activity and enum values used here.
const (
	ocsfClassBase          = 0
	ocsfClassAppLifecycle  = 6002
	ocsfClassAPIActivity   = 6003
	ocsfCategoryUncat      = 0
	ocsfCategoryAppActvity = 6

	ocsfActivityCreate = 1
	ocsfActivityUpdate = 3
	ocsfActivityStart  = 3 // Application Lifecycle
	ocsfActivityStop   = 4 // Application Lifecycle
	ocsfActivityAppUpd = 8 // Application Lifecycle: Update
	ocsfActivityOther  = 99

	ocsfActionAllowed = 1
	ocsfActionDenied  = 2
	ocsfActionOther   = 99

	ocsfDispAllowed  = 1
	ocsfDispBlocked  = 2
	ocsfDispApproved = 8
	ocsfDispDelayed  = 14
	ocsfDispUnknown  = 0

	ocsfStatusSuccess = 1
	ocsfStatusFailure = 2
)

var ocsfSeverityNames = map[int]string{1: "Informational", 2: "Low", 3: "Medium", 4: "High", 5: "Critical"}

// OCSFOptions fills what a record does not hold.
type OCSFOptions struct {
	Host    string // the appliance's host name (src_endpoint.hostname, metadata)
	Version string // product version
	// Redacted lists the payload's JSON pointers the export redaction replaced (unmapped).
	Redacted []string
}

// ocsfPayload is the union of the payload members the mapping reads.
type ocsfPayload struct {
	ActionClass    string   `json:"action_class"`
	AgentID        string   `json:"agent_id"`
	BundleDigest   string   `json:"bundle_digest"`
	BundleRevision string   `json:"bundle_revision"`
	CallID         string   `json:"call_id"`
	Caller         string   `json:"caller"`
	Decision       string   `json:"decision"`
	DecisionID     string   `json:"decision_id"`
	Error          string   `json:"error"`
	Reason         string   `json:"reason"`
	Rules          []string `json:"rules"`
	Runtime        string   `json:"runtime"`
	SessionID      string   `json:"session_id"`
	Tool           string   `json:"tool"`
	// approvals
	ID        string   `json:"id"`
	State     string   `json:"state"`
	Resolver  string   `json:"resolver"`
	Approvers []string `json:"approvers"`
	Comment   string   `json:"comment"`
	// lifecycle and other records
	Version string `json:"version"`
	Event   string `json:"event"`
}

// decodeOCSFPayload reads the members the mapping uses, leniently: a member of another type
// (service_start's "rules" is an object of counts) or a payload that is not an object leaves
// those members empty; the whole payload is kept under "unmapped" anyway.
func decodeOCSFPayload(raw json.RawMessage) ocsfPayload {
	var m map[string]json.RawMessage
	var p ocsfPayload
	if json.Unmarshal(raw, &m) != nil {
		return p
	}
	str := func(k string) string {
		var s string
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return ""
	}
	strs := func(k string) []string {
		var s []string
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return nil
	}
	p = ocsfPayload{ActionClass: str("action_class"), AgentID: str("agent_id"), BundleDigest: str("bundle_digest"),
		BundleRevision: str("bundle_revision"), CallID: str("call_id"), Caller: str("caller"), Decision: str("decision"),
		DecisionID: str("decision_id"), Error: str("error"), Reason: str("reason"), Rules: strs("rules"), Runtime: str("runtime"),
		SessionID: str("session_id"), Tool: str("tool"), ID: str("id"), State: str("state"), Resolver: str("resolver"),
		Approvers: strs("approvers"), Comment: str("comment"), Version: str("version"), Event: str("event")}
	return p
}

// severity is the OCSF severity_id of a record.
func severity(t Type, decision string) int {
	switch t {
	case TypeDecision:
		switch decision {
		case "ALLOW":
			return 1
		case "ESCALATE":
			return 2
		default: // BLOCK, or a decision the mapping does not know
			return 3
		}
	case TypeApprovalRequested:
		return 2
	case TypeRecovered:
		return 4 // a crash or an unsigned tail: worth a look
	}
	return 1
}

// OCSF maps one record (its payload already redacted) to an OCSF event, as one JSON line.
func OCSF(r *Record, o OCSFOptions) ([]byte, error) {
	p := decodeOCSFPayload(r.Payload)
	sev := severity(r.Type, p.Decision)
	ev := map[string]any{
		"time":        r.Time.UnixMilli(),
		"severity_id": sev,
		"severity":    ocsfSeverityNames[sev],
		"metadata": map[string]any{
			"version":  OCSFVersion,
			"uid":      r.Hash,
			"sequence": r.Seq,
			"log_name": "shield-audit",
			"product":  map[string]any{"name": "Shield", "vendor_name": "Shield", "version": o.Version},
		},
		"unmapped": map[string]any{"seq": r.Seq, "type": r.Type, "hash": r.Hash, "prev": r.Prev,
			"time": r.Time.Format(TimeFormat), "payload": r.Payload, "export_redacted": o.Redacted},
	}
	actor := map[string]any{}
	if p.Caller != "" {
		actor["user"] = map[string]any{"uid": p.Caller}
	}
	if p.SessionID != "" {
		actor["session"] = map[string]any{"uid": p.SessionID}
	}
	if p.Runtime != "" {
		actor["app_name"] = p.Runtime
	}
	if p.AgentID != "" {
		actor["app_uid"] = p.AgentID
	}
	set := func(class, category, activity int, className, categoryName, activityName string) {
		ev["class_uid"], ev["class_name"] = class, className
		ev["category_uid"], ev["category_name"] = category, categoryName
		ev["activity_id"], ev["activity_name"] = activity, activityName
		ev["type_uid"] = class*100 + activity
		ev["type_name"] = className + ": " + activityName
	}
	switch r.Type {
	case TypeDecision, TypeApprovalRequested, TypeApprovalResolved:
		activity, name := ocsfActivityOther, "Evaluate"
		switch r.Type {
		case TypeApprovalRequested:
			activity, name = ocsfActivityCreate, "Create"
		case TypeApprovalResolved:
			activity, name = ocsfActivityUpdate, "Update"
		}
		set(ocsfClassAPIActivity, ocsfCategoryAppActvity, activity, "API Activity", "Application Activity", name)
		ev["metadata"].(map[string]any)["profiles"] = []string{"security_control"}
		op := p.Tool
		if op == "" {
			op = string(r.Type)
		}
		api := map[string]any{"operation": op, "service": map[string]any{"name": "shield"}}
		req := map[string]any{}
		if p.CallID != "" {
			req["uid"] = p.CallID
		}
		if p.ID != "" {
			req["uid"] = p.ID // the approval request id
		}
		if len(req) > 0 {
			api["request"] = req
		}
		if p.DecisionID != "" || p.Error != "" {
			resp := map[string]any{}
			if p.DecisionID != "" {
				resp["message"] = p.DecisionID
			}
			if p.Error != "" {
				resp["error"] = p.Error
			}
			api["response"] = resp
		}
		ev["api"] = api
		// Required by the class; the agents Shield decides for run on the appliance's host.
		ev["cloud"] = map[string]any{"provider": "local"}
		ev["src_endpoint"] = map[string]any{"hostname": o.Host}
		if len(actor) == 0 {
			actor["app_name"] = "shield"
		}
		ev["actor"] = actor
		action, disp := ocsfAction(r.Type, p)
		ev["action_id"], ev["action"] = action, map[int]string{ocsfActionAllowed: "Allowed", ocsfActionDenied: "Denied", ocsfActionOther: "Other"}[action]
		ev["disposition_id"], ev["disposition"] = disp, map[int]string{ocsfDispAllowed: "Allowed", ocsfDispBlocked: "Blocked",
			ocsfDispApproved: "Approved", ocsfDispDelayed: "Delayed", ocsfDispUnknown: "Unknown"}[disp]
		if p.BundleDigest != "" || p.BundleRevision != "" {
			ev["policy"] = map[string]any{"name": "shield policy bundle", "uid": p.BundleDigest, "version": p.BundleRevision}
		}
		ev["status_id"], ev["status"] = ocsfStatusSuccess, "Success"
		if p.Error != "" {
			ev["status_id"], ev["status"], ev["status_detail"] = ocsfStatusFailure, "Failure", p.Error
		}
		ev["message"] = ocsfMessage(r.Type, p)
	case TypeServiceStart, TypeServiceStop, TypeBundleActivated:
		activity, name := ocsfActivityStart, "Start"
		switch r.Type {
		case TypeServiceStop:
			activity, name = ocsfActivityStop, "Stop"
		case TypeBundleActivated:
			activity, name = ocsfActivityAppUpd, "Update"
		}
		set(ocsfClassAppLifecycle, ocsfCategoryAppActvity, activity, "Application Lifecycle", "Application Activity", name)
		v := p.Version
		if v == "" {
			v = o.Version
		}
		ev["app"] = map[string]any{"name": "Shield", "vendor_name": "Shield", "version": v}
		msg := string(r.Type)
		if p.BundleRevision != "" {
			msg += " bundle " + p.BundleRevision
		}
		ev["message"] = msg
		ev["status_id"], ev["status"] = ocsfStatusSuccess, "Success"
	default:
		set(ocsfClassBase, ocsfCategoryUncat, ocsfActivityOther, "Base Event", "Uncategorized", "Other")
		msg := string(r.Type)
		if p.Event != "" {
			msg += " " + p.Event
		}
		if p.Reason != "" {
			msg += ": " + p.Reason
		}
		ev["message"] = msg
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("marshal OCSF event: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ocsfAction maps a decision or an approval state onto OCSF action_id and disposition_id.
func ocsfAction(t Type, p ocsfPayload) (action, disposition int) {
	if t == TypeDecision {
		switch p.Decision {
		case "ALLOW":
			return ocsfActionAllowed, ocsfDispAllowed
		case "ESCALATE": // held for a human: neither allowed nor denied yet
			return ocsfActionOther, ocsfDispDelayed
		default:
			return ocsfActionDenied, ocsfDispBlocked
		}
	}
	switch p.State {
	case "pending":
		return ocsfActionOther, ocsfDispDelayed
	case "approved", "used":
		return ocsfActionAllowed, ocsfDispApproved
	case "denied", "expired":
		return ocsfActionDenied, ocsfDispBlocked
	}
	return ocsfActionOther, ocsfDispUnknown
}

func ocsfMessage(t Type, p ocsfPayload) string {
	var b strings.Builder
	switch t {
	case TypeDecision:
		fmt.Fprintf(&b, "%s %s", p.Decision, p.Tool)
	default:
		fmt.Fprintf(&b, "%s %s %s", t, p.ID, p.State)
		if p.Resolver != "" {
			fmt.Fprintf(&b, " by %s", p.Resolver)
		}
	}
	if p.ActionClass != "" {
		fmt.Fprintf(&b, " (%s)", p.ActionClass)
	}
	if p.Reason != "" {
		fmt.Fprintf(&b, ": %s", p.Reason)
	}
	if p.Comment != "" {
		fmt.Fprintf(&b, ": %s", p.Comment)
	}
	return b.String()
}
