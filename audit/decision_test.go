package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gowebpki/jcs"
)

// FuzzCanonicalDecision: the fast encoder of decisions agrees with the RFC 8785 canonicalizer.
func FuzzCanonicalDecision(f *testing.F) {
	f.Add("Bash", "echo <a> & \u2028 \x01 \"q\" \\ é 😀", 0.25, 3, `{"z":1,"a":[true,null,"x"]}`)
	f.Add("", "\b\f\n\r\t\x7f", 1e21, -1, `{}`)
	f.Add("t", "\xff invalid", 1e-7, 0, `{"k":"\u00e9"}`)
	f.Fuzz(func(t *testing.T, tool, reason string, conf float64, tier int, args string) {
		r, _ := Redaction{}.compile()
		d, err := r.prepare(&Decision{Tool: tool, Reason: reason, Confidence: conf, Tier: tier,
			Rules: []string{reason, tool}, Arguments: json.RawMessage(args), SessionID: reason})
		if err != nil {
			return
		}
		got, err := canonicalDecision(d)
		if err != nil {
			return // e.g. NaN: not encodable, Append reports it
		}
		want, err := jcs.Transform(got)
		if err != nil {
			t.Fatalf("fast encoding %q is not JSON: %v", got, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("fast encoding differs from RFC 8785:\n got %q\nwant %q", got, want)
		}
	})
}

func TestRedactionPrefilter(t *testing.T) {
	tests := []struct {
		name, args string
		cfg        Redaction
		redacted   bool
	}{
		{"plain", `{"command":"ls -la"}`, Redaction{}, false},
		{"anchored default key", `{"auth":"x"}`, Redaction{}, true},
		{"upper-case key", `{"PASSWORD":"x"}`, Redaction{}, true},
		{"token in value", `{"command":"echo ghp_abcdefghijklmnopqrstuvwxyz0123"}`, Redaction{}, true},
		{"anchored configured key", `{"pin":"1234"}`, Redaction{Keys: []string{`^pin$`}}, true},
		{"anchored configured value", `{"a":"hunter2"}`, Redaction{Values: []string{`^hunter2$`}}, true},
		// Every built-in value pattern, reached through its trigger.
		{"private key", `{"body":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----"}`, Redaction{}, true},
		{"aws key id", `{"c":"AKIAABCDEFGHIJKLMNOP"}`, Redaction{}, true},
		{"slack token", `{"c":"xoxb-1234567890-abcdef"}`, Redaction{}, true},
		{"openai style key", `{"c":"sk-abcdefghijklmnopqrstuvwx"}`, Redaction{}, true},
		{"gitlab token", `{"c":"glpat-abcdefghijklmnopqrstu"}`, Redaction{}, true},
		{"jwt", `{"c":"eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl"}`, Redaction{}, true},
		{"bearer header", `{"c":"curl -H 'Authorization: Bearer abcdefghijklmnop' https://x"}`, Redaction{}, true},
		{"key=value", `{"c":"mysql --password=hunter22 db"}`, Redaction{}, true},
		{"upper-case key=value", `{"c":"export API_KEY=abcdef123"}`, Redaction{}, true},
		{"credentials in a URL", `{"url":"https://admin:hunter22@example.com/x"}`, Redaction{}, true},
		{"query string without secrets", `{"url":"https://example.com/search?q=go&page=2"}`, Redaction{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.cfg.compile()
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.prepare(&Decision{Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(d.Redacted) > 0; got != tc.redacted {
				t.Fatalf("redacted = %v (%s), want %v", got, d.Arguments, tc.redacted)
			}
		})
	}
}

// BenchmarkPrepareDecision is the appender's CPU per decision record: redaction, argument hash
// and RFC 8785 encoding (no I/O).
func BenchmarkPrepareDecision(b *testing.B) {
	r, _ := Redaction{}.compile()
	d := benchDecision(1)
	for b.Loop() {
		p, err := r.prepare(d)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := canonicalDecision(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPrepareCanonicalArguments: arguments handed over in the form CanonicalArguments wrote (the
// pipeline's hashing pass) give the same prepared record as arguments the log canonicalises
// itself, and the canonical value is not carried into the record.
func TestPrepareCanonicalArguments(t *testing.T) {
	for _, cfg := range []Redaction{{}, {Disable: true}, {Keys: []string{`^pin$`}}} {
		r, err := cfg.compile()
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range []string{
			`{"command":"ls -la"}`,
			`{"pin":"1234","z":[1.50,-0,1e21],"PASSWORD":"x"}`,
			`{"c":"echo ghp_abcdefghijklmnopqrstuvwxyz0123","u":"\u2028 é 😀"}`,
			`{"url":"https://admin:hunter22@example.com/x","n":{"b":null,"a":true}}`,
		} {
			tree, err := decodeTree(args)
			if err != nil {
				t.Fatal(err)
			}
			canon, ok := CanonicalArguments(tree)
			if !ok {
				t.Fatalf("%s: not canonicalised", args)
			}
			ref, err := r.prepare(&Decision{Tool: "Bash", Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.prepare(&Decision{Tool: "Bash", Arguments: json.RawMessage(args), CanonicalArguments: canon})
			if err != nil {
				t.Fatal(err)
			}
			if !got.CanonicalArguments.IsZero() {
				t.Fatal("the prepared record keeps CanonicalArguments")
			}
			if diff := cmp.Diff(ref, got); diff != "" {
				t.Fatalf("%s: prepared records differ (-self +handed over):\n%s", args, diff)
			}
		}
	}
}

// decodeTree decodes a JSON object as the argument decoder does (numbers as json.Number).
func decodeTree(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

// TestCanonicalArguments: the canonical form written from a decoded tree is RFC 8785's form of
// the text (jcs), and what it cannot write the way RFC 8785 requires it refuses.
func TestCanonicalArguments(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"command":"git status && npm test"}`,
		`{"z":1,"a":[1,2.50,-0,1e21,1E-7,123456789012345678901234567890],"m":{"b":null,"a":true}}`,
		`{"s":"tab\tnl\ncr\rq\"bs\\ctl\u0001\u001f del\u007f","u":"\u2028\u2029 é 日本 😀","/":"a/b"}`,
		`{"e":{},"l":[],"deep":[[[[{"a":[{}]}]]]]}`,
		`{"big":-1.7976931348623157e308,"tiny":5e-324,"int":9007199254740993}`,
	} {
		tree, err := decodeTree(s)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := CanonicalArguments(tree)
		want, err := jcs.Transform([]byte(s))
		if !ok || err != nil || !bytes.Equal(c.AppendTo(nil), want) {
			t.Fatalf("%s: %s (%v), jcs %s (%v)", s, c.AppendTo(nil), ok, want, err)
		}
	}
	for name, tree := range map[string]map[string]any{
		"key outside the BMP": {"😀": 1.0},
		"invalid UTF-8 value": {"a": "\xff"},
		"invalid UTF-8 key":   {"\xff": "a"},
		"not a number":        {"n": json.Number("1e400")},
		"a Go type":           {"f": 1.5},
	} {
		if c, ok := CanonicalArguments(tree); ok || !c.IsZero() {
			t.Errorf("%s: canonicalised as %s", name, c.AppendTo(nil))
		}
	}
}
