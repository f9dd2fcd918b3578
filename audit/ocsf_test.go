package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ocsfRequired are the attributes OCSF 1.1.0 requires of each class used (base event
// attributes included).
var ocsfRequired = map[float64][]string{
	0:    {"activity_id", "category_uid", "class_uid", "metadata", "severity_id", "time", "type_uid"},
	6002: {"activity_id", "app", "category_uid", "class_uid", "metadata", "severity_id", "time", "type_uid"},
	6003: {"activity_id", "actor", "api", "category_uid", "class_uid", "cloud", "metadata", "severity_id", "src_endpoint", "time", "type_uid"},
}

func ocsfEvent(t *testing.T, typ Type, payload string) map[string]any {
	t.Helper()
	r := &Record{Seq: 42, Time: time.Date(2026, 11, 24, 9, 0, 0, 123456789, time.UTC), Type: typ, Payload: json.RawMessage(payload),
		Prev: strings.Repeat("1", 64), Hash: strings.Repeat("2", 64)}
	b, err := OCSF(r, OCSFOptions{Host: "appliance-1", Version: "v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("OCSF output is not JSON: %v\n%s", err, b)
	}
	return ev
}

// pick returns the members of ev named by dotted paths.
func pick(ev map[string]any, paths ...string) map[string]any {
	out := map[string]any{}
	for _, p := range paths {
		var v any = ev
		for _, k := range strings.Split(p, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		out[p] = v
	}
	return out
}

// TestOCSFMapping is the mapping table of audit/README.md, record type by record type.
func TestOCSFMapping(t *testing.T) {
	fields := []string{"class_uid", "category_uid", "activity_id", "type_uid", "severity_id", "action_id", "disposition_id", "status_id"}
	tests := []struct {
		typ     Type
		payload string
		want    map[string]any
	}{
		{TypeDecision, `{"decision":"BLOCK","tool":"Bash","tier":0,"rules":["cel:x"]}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 99.0, "type_uid": 600399.0, "severity_id": 3.0, "action_id": 2.0, "disposition_id": 2.0, "status_id": 1.0}},
		{TypeDecision, `{"decision":"ALLOW","tool":"Read","tier":0}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 99.0, "type_uid": 600399.0, "severity_id": 1.0, "action_id": 1.0, "disposition_id": 1.0, "status_id": 1.0}},
		{TypeDecision, `{"decision":"ESCALATE","tool":"Bash","tier":3}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 99.0, "type_uid": 600399.0, "severity_id": 2.0, "action_id": 99.0, "disposition_id": 14.0, "status_id": 1.0}},
		{TypeDecision, `{"decision":"BLOCK","tool":"Bash","tier":-1,"error":"timeout"}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 99.0, "type_uid": 600399.0, "severity_id": 3.0, "action_id": 2.0, "disposition_id": 2.0, "status_id": 2.0}},
		{TypeApprovalRequested, `{"id":"apr_1","tool":"Bash","state":"pending"}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 1.0, "type_uid": 600301.0, "severity_id": 2.0, "action_id": 99.0, "disposition_id": 14.0, "status_id": 1.0}},
		{TypeApprovalResolved, `{"id":"apr_1","tool":"Bash","state":"approved","resolver":"oncall"}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 3.0, "type_uid": 600303.0, "severity_id": 1.0, "action_id": 1.0, "disposition_id": 8.0, "status_id": 1.0}},
		{TypeApprovalResolved, `{"id":"apr_1","tool":"Bash","state":"denied","resolver":"oncall"}`,
			map[string]any{"class_uid": 6003.0, "category_uid": 6.0, "activity_id": 3.0, "type_uid": 600303.0, "severity_id": 1.0, "action_id": 2.0, "disposition_id": 2.0, "status_id": 1.0}},
		{TypeServiceStart, `{"version":"v1"}`,
			map[string]any{"class_uid": 6002.0, "category_uid": 6.0, "activity_id": 3.0, "type_uid": 600203.0, "severity_id": 1.0, "action_id": nil, "disposition_id": nil, "status_id": 1.0}},
		{TypeServiceStop, `{"version":"v1"}`,
			map[string]any{"class_uid": 6002.0, "category_uid": 6.0, "activity_id": 4.0, "type_uid": 600204.0, "severity_id": 1.0, "action_id": nil, "disposition_id": nil, "status_id": 1.0}},
		{TypeBundleActivated, `{"bundle_revision":"r2"}`,
			map[string]any{"class_uid": 6002.0, "category_uid": 6.0, "activity_id": 8.0, "type_uid": 600208.0, "severity_id": 1.0, "action_id": nil, "disposition_id": nil, "status_id": 1.0}},
		{TypeRecovered, `{"reason":"torn tail"}`,
			map[string]any{"class_uid": 0.0, "category_uid": 0.0, "activity_id": 99.0, "type_uid": 99.0, "severity_id": 4.0, "action_id": nil, "disposition_id": nil, "status_id": nil}},
		{TypeCheckpoint, `{"size":3}`,
			map[string]any{"class_uid": 0.0, "category_uid": 0.0, "activity_id": 99.0, "type_uid": 99.0, "severity_id": 1.0, "action_id": nil, "disposition_id": nil, "status_id": nil}},
		{"future_type", `{}`,
			map[string]any{"class_uid": 0.0, "category_uid": 0.0, "activity_id": 99.0, "type_uid": 99.0, "severity_id": 1.0, "action_id": nil, "disposition_id": nil, "status_id": nil}},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ), func(t *testing.T) {
			ev := ocsfEvent(t, tc.typ, tc.payload)
			if diff := cmp.Diff(tc.want, pick(ev, fields...)); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
			for _, req := range ocsfRequired[ev["class_uid"].(float64)] {
				if _, ok := ev[req]; !ok {
					t.Errorf("class %v requires %q; missing in %v", ev["class_uid"], req, ev)
				}
			}
			u := ev["unmapped"].(map[string]any)
			if u["seq"] != 42.0 || u["type"] != string(tc.typ) || u["hash"] != strings.Repeat("2", 64) || u["payload"] == nil {
				t.Errorf("unmapped does not keep the record: %v", u)
			}
			if ev["time"] != float64(time.Date(2026, 11, 24, 9, 0, 0, 123456789, time.UTC).UnixMilli()) {
				t.Errorf("time %v", ev["time"])
			}
		})
	}
}

// TestOCSFDecisionDetail: where a decision's members go.
func TestOCSFDecisionDetail(t *testing.T) {
	ev := ocsfEvent(t, TypeDecision, `{"decision":"BLOCK","tool":"Bash","action_class":"exec","call_id":"c1","caller":"uid:1000",`+
		`"session_id":"s1","agent_id":"a1","runtime":"claude-code","reason":"rm -rf /","bundle_digest":"sha256:ab","bundle_revision":"r7","decision_id":"d9"}`)
	want := map[string]any{
		"api.operation": "Bash", "api.request.uid": "c1", "api.response.message": "d9",
		"actor.user.uid": "uid:1000", "actor.session.uid": "s1", "actor.app_name": "claude-code", "actor.app_uid": "a1",
		"policy.uid": "sha256:ab", "policy.version": "r7", "src_endpoint.hostname": "appliance-1",
		"metadata.uid": strings.Repeat("2", 64), "metadata.sequence": 42.0, "metadata.version": "1.1.0", "metadata.product.version": "v1.0.0",
		"message": "BLOCK Bash (exec): rm -rf /", "disposition": "Blocked", "action": "Denied",
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	if diff := cmp.Diff(want, pick(ev, keys...)); diff != "" {
		t.Errorf("decision mapping (-want +got):\n%s", diff)
	}
}

// FuzzOCSF: any payload either fails to map or maps to one JSON object with the base
// attributes; never a panic.
func FuzzOCSF(f *testing.F) {
	f.Add("decision", `{"decision":"BLOCK","tool":"Bash","rules":["a"]}`)
	f.Add("approval_resolved", `{"id":"apr_1","state":"approved","approvers":["x"]}`)
	f.Add("service_start", `{"version":1}`)
	f.Add("agent_event", `{"event":"crashed","detail":{"a":[1,2]}}`)
	f.Add("x", `[]`)
	f.Fuzz(func(t *testing.T, typ, payload string) {
		r := &Record{Seq: 1, Time: time.Unix(0, 0), Type: Type(typ), Payload: json.RawMessage(payload), Hash: "h", Prev: "p"}
		b, err := OCSF(r, OCSFOptions{})
		if err != nil {
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("not a JSON object: %v\n%s", err, b)
		}
		for _, k := range ocsfRequired[0] {
			if _, ok := ev[k]; !ok {
				t.Fatalf("missing %s: %s", k, b)
			}
		}
	})
}

// TestOCSFLenient: members of unexpected types (service_start's rules is an object of counts)
// do not stop the mapping; the payload is kept whole.
func TestOCSFLenient(t *testing.T) {
	ev := ocsfEvent(t, TypeServiceStart, `{"version":"v2","rules":{"cel":68,"rego":146},"pid":7}`)
	if ev["class_uid"] != 6002.0 || ev["app"].(map[string]any)["version"] != "v2" {
		t.Errorf("service_start with a rules object: %v", ev)
	}
	ev = ocsfEvent(t, TypeDecision, `{"decision":"BLOCK","tool":["not","a","string"],"rules":"x"}`)
	if ev["disposition_id"] != 2.0 || ev["api"].(map[string]any)["operation"] != "decision" {
		t.Errorf("decision with odd members: %v", ev)
	}
}
