package server

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FuzzDecodeEvaluate: the JSON decoding of POST /v1/evaluate never panics; it either fails with
// INVALID_ARGUMENT or yields a request whose arguments are one JSON object, passed on as sent.
func FuzzDecodeEvaluate(f *testing.F) {
	for _, s := range []string{
		httpEvalBody,
		`{"call": {"tool": "Bash", "arguments": {"command": "ls"}}}`,
		`{"call": {"tool": "Bash", "arguments": "{\"command\":\"ls\"}"}}`,
		`{"call": {"tool": "Bash", "arguments": null}, "max_tier": 1, "dry_run": true}`,
		`{"call": {"tool": "Bash", "arguments": [1,2]}}`,
		`{"call": {"tool": "x", "arguments": {"a": {"b": {"c": [1, 2, {"d": "\u0000"}]}}}}, "context": {"labels": {"k": "v"}}}`,
		`{"call": {"tool": "Bash", "arguments": {"command": "ls"}}, "call": {"tool": "rm"}}`,
		`{"call": {"tool": "Bash", "arguments": {"command": "ls"}}} trailing`,
		`{"call": {"tool": "\xff\xfe"}}`,
		`{"max_tier": 99999999999}`,
		`[]`, `null`, ``, `{`, `{"call": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeEvaluate(b)
		if err != nil {
			if st, ok := status.FromError(err); !ok || st.Code() != codes.InvalidArgument || st.Message() == "" {
				t.Fatalf("error %v is not INVALID_ARGUMENT with a message", err)
			}
			return
		}
		c := req.GetCall()
		if c == nil || c.GetTool() == "" {
			t.Fatalf("accepted a request without call.tool: %s", b)
		}
		args := strings.TrimSpace(c.GetArgumentsJson())
		var obj map[string]any
		if !strings.HasPrefix(args, "{") || json.Unmarshal([]byte(args), &obj) != nil {
			t.Fatalf("arguments %q are not one JSON object", args)
		}
	})
}
