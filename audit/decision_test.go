package audit

import (
	"bytes"
	"encoding/json"
	"testing"

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
