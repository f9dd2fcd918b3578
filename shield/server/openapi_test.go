package server

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/shieldsec/shield/audit"
)

// httpOnlyMethods are routes with no gRPC method of their own, authorised under a service's
// prefix in methodRoles (the reason is the comment).
var httpOnlyMethods = map[string]string{
	httpMethodEffects: "approver: the request's effects, for the console",
	httpMethodVerify:  "auditor: the appliance verifies its trail",
	httpMethodWhoAmI:  "any authenticated caller: the console's login",
}

// grpcOnlyMethods are proto methods the HTTP API does not serve, with the reason.
var grpcOnlyMethods = map[string]string{}

// TestHTTPRoutesMatchProto: every route stands for a method of the proto services (or an
// HTTP-only one listed above), every proto method has a route (or is listed as gRPC-only), and
// the JSON fields of the evaluate request are the proto's, but for arguments.
func TestHTTPRoutesMatchProto(t *testing.T) {
	f := newHTTPFixture(t, nil)
	protoMethods := map[string]protoreflect.MethodDescriptor{}
	for _, svc := range []string{"shield.v1.ShieldService", "shield.v1.ApprovalService", "shield.v1.AuditService"} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			t.Fatal(err)
		}
		ms := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range ms.Len() {
			m := ms.Get(i)
			protoMethods["/"+svc+"/"+string(m.Name())] = m
		}
	}
	routed := map[string]bool{}
	for _, rt := range f.api.routes {
		if rt.method == "" {
			if rt.pattern != "GET /v1/openapi.json" {
				t.Errorf("route %s has no method: it would be open to everyone", rt.pattern)
			}
			continue
		}
		routed[rt.method] = true
		m, inProto := protoMethods[rt.method]
		_, httpOnly := httpOnlyMethods[rt.method]
		switch {
		case inProto && httpOnly:
			t.Errorf("%s is in the proto now: drop it from httpOnlyMethods", rt.method)
		case !inProto && !httpOnly:
			t.Errorf("route %s names %s, which is no proto method", rt.pattern, rt.method)
		case inProto && m.IsStreamingServer() != rt.stream && rt.method != methodAwait:
			t.Errorf("route %s: streaming %v, proto method %s streaming %v", rt.pattern, rt.stream, rt.method, m.IsStreamingServer())
		}
		if httpOnly && !rt.anyIdentity {
			// It must fall under a service prefix that names roles, never the admin-only default.
			if _, ok := methodRoles[rt.method[:strings.LastIndex(rt.method, "/")+1]]; !ok {
				t.Errorf("HTTP-only %s is under no service prefix of methodRoles", rt.method)
			}
		}
	}
	for name := range protoMethods {
		if !routed[name] && grpcOnlyMethods[name] == "" {
			t.Errorf("proto method %s has no HTTP route (add one, or list it in grpcOnlyMethods with a reason)", name)
		}
	}

	// The evaluate body's fields are the proto's JSON names.
	want := map[string][]string{}
	for _, msg := range []string{"shield.v1.EvaluateRequest", "shield.v1.ToolCall", "shield.v1.CallContext"} {
		d, _ := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(msg))
		fs := d.(protoreflect.MessageDescriptor).Fields()
		for i := range fs.Len() {
			n := string(fs.Get(i).Name())
			if n == "arguments_json" {
				n = "arguments" // the one deliberate difference: a JSON object, not a string
			}
			want[msg] = append(want[msg], n)
		}
		sort.Strings(want[msg])
	}
	got := map[string][]string{
		"shield.v1.EvaluateRequest": jsonFields(httpEvaluateRequest{}),
		"shield.v1.ToolCall":        jsonFields(httpCall{}),
		"shield.v1.CallContext":     jsonFields(httpCallContext{}),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("evaluate JSON fields differ from the proto (-proto +http):\n%s", d)
	}
	// Resolve's body is ResolveApprovalRequest without the id (in the path).
	d, _ := protoregistry.GlobalFiles.FindDescriptorByName("shield.v1.ResolveApprovalRequest")
	var rw []string
	fs := d.(protoreflect.MessageDescriptor).Fields()
	for i := range fs.Len() {
		if n := string(fs.Get(i).Name()); n != "id" {
			rw = append(rw, n)
		}
	}
	sort.Strings(rw)
	if d := cmp.Diff(rw, jsonFields(httpResolve{})); d != "" {
		t.Errorf("resolve JSON fields differ from the proto (-proto +http):\n%s", d)
	}
}

func jsonFields(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIMatchesRoutes: every operation of the served document is a route, every route is
// an operation with the same x-grpc-method, and every $ref resolves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newHTTPFixture(t, nil)
	code, b := f.do(t, "GET", "/v1/openapi.json", "", "")
	if code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi version %v", doc["openapi"])
	}
	inDoc := map[string]string{}
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			m, _ := op.(map[string]any)["x-grpc-method"].(string)
			inDoc[strings.ToUpper(method)+" "+path] = m
		}
	}
	routes := map[string]string{}
	for _, rt := range f.api.routes {
		routes[rt.pattern] = rt.method
	}
	if d := cmp.Diff(routes, inDoc); d != "" {
		t.Errorf("routes and OpenAPI operations differ (-routes +document):\n%s", d)
	}
	// Every route answers something other than the catch-all 404 (it is mounted). Only the
	// status line and the first bytes are read: the event stream does not end.
	for pattern := range routes {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.NewReplacer("{id}", "apr_none", "{seq}", "0").Replace(path)
		req, _ := http.NewRequest(method, f.url+path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokHTTPAdmin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 64)
		n, _ := io.ReadAtLeast(resp.Body, head, 1)
		resp.Body.Close()
		if resp.StatusCode == 404 && strings.Contains(string(head[:n]), "no route") {
			t.Errorf("%s is in the document but not routed", pattern)
		}
	}
	refs := map[string]bool{}
	collectRefs(doc, refs)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	responses := doc["components"].(map[string]any)["responses"].(map[string]any)
	for ref := range refs {
		switch {
		case strings.HasPrefix(ref, "#/components/schemas/"):
			if schemas[strings.TrimPrefix(ref, "#/components/schemas/")] == nil {
				t.Errorf("unresolved $ref %s", ref)
			}
		case strings.HasPrefix(ref, "#/components/responses/"):
			if responses[strings.TrimPrefix(ref, "#/components/responses/")] == nil {
				t.Errorf("unresolved $ref %s", ref)
			}
		default:
			t.Errorf("$ref %s points outside the document's components", ref)
		}
	}
	// Generated from the proto: the Verdict schema has the proto's fields.
	v := schemas["shield.v1.Verdict"].(map[string]any)["properties"].(map[string]any)
	for _, k := range []string{"decision", "escalation_id", "audit_seq", "rules"} {
		if v[k] == nil {
			t.Errorf("Verdict schema lacks %s", k)
		}
	}
}

// TestOpenAPIAuditFilterValues: the values the document lists for the audit query's decision and
// type filters are the ones audit.ParseFilter accepts.
func TestOpenAPIAuditFilterValues(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string `json:"name"`
				Schema struct {
					Enum  []string `json:"enum"`
					Items struct {
						Enum []string `json:"enum"`
					} `json:"items"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapiDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ty := range audit.Types {
		types = append(types, string(ty))
	}
	found := 0
	for _, p := range doc.Paths["/v1/audit/records"]["get"].Parameters {
		switch p.Name {
		case "decision":
			found++
			if d := cmp.Diff(audit.Decisions, p.Schema.Enum); d != "" {
				t.Errorf("decision enum (-audit +openapi):\n%s", d)
			}
		case "type":
			found++
			if d := cmp.Diff(types, p.Schema.Items.Enum); d != "" {
				t.Errorf("type enum (-audit +openapi):\n%s", d)
			}
		}
	}
	if found != 2 {
		t.Fatalf("GET /v1/audit/records documents %d of the decision and type parameters", found)
	}
}
