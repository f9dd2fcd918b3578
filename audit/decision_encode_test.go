package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// referenceDecision is the encoder decision records were written with before appendDecision:
// it returns the RFC 8785 form of d, whose Arguments must already be canonical.
// encoding/json writes the struct's members in declaration order (sorted), numbers as ES6 does,
// and, without HTML escaping, strings as RFC 8785 does except for U+2028 and U+2029, which it
// escapes, and invalid UTF-8; such payloads go through the general canonicalizer.
func referenceDecision(d *Decision) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("marshal decision: %w", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// encoding/json writes \u escapes other than for control characters (\u00xx) for U+2028,
	// U+2029 and invalid UTF-8 (\ufffd); RFC 8785 writes those characters literally.
	for i := 0; ; {
		j := bytes.Index(out[i:], []byte(`\u`))
		if j < 0 {
			break
		}
		i += j + 2
		if !bytes.HasPrefix(out[i:], []byte("00")) {
			return jcs.Transform(out)
		}
	}
	return out, nil
}

// decisionStrings are awkward strings for the differential tests: every escape, U+2028/U+2029,
// invalid UTF-8, HTML characters, astral characters.
var decisionStrings = []string{
	"", "Bash", "echo <a> & \u2028 \u2029 \x01 \"q\" \\ é 😀", "\b\f\n\r\t\x7f\x00\x1f", "\xff invalid",
	"a\xc3", "\xed\xa0\x80 surrogate", "\\u2028 literal", "[REDACTED]", "\ufffd", "ﬀ", "line\u0085next",
}

var decisionFloats = []float64{0, math.Copysign(0, -1), 0.25, 1, -1, 1e21, 1e20, 1e-6, 1e-7, 5e-324,
	math.MaxFloat64, 0.1 + 0.2, 123456789012345680000, -2.5e-9, 1.0000000000000002}

func randomDecision(r *rand.Rand) *Decision {
	str := func() string {
		if r.Intn(3) == 0 {
			return ""
		}
		if r.Intn(2) == 0 {
			return decisionStrings[r.Intn(len(decisionStrings))]
		}
		b := make([]byte, r.Intn(12))
		for i := range b {
			b[i] = byte(r.Intn(256))
		}
		return string(b)
	}
	list := func() []string {
		var l []string
		for n := r.Intn(4) - 1; n > 0; n-- {
			l = append(l, str())
		}
		if l == nil && r.Intn(2) == 0 {
			l = []string{}
		}
		return l
	}
	d := &Decision{
		ActionClass: str(), ActionHash: str(), AgentID: str(), ArgsHash: str(), ArgsInvalid: r.Intn(2) == 0,
		BundleDigest: str(), BundleRevision: str(), Cached: r.Intn(2) == 0, CallID: str(), Caller: str(),
		Confidence: decisionFloats[r.Intn(len(decisionFloats))], Decision: str(), DecisionID: str(),
		Error: str(), EscalationID: str(), Judge: str(), Reason: str(), Redacted: list(), Rules: list(),
		Runtime: str(), SessionID: str(), Tier: r.Intn(7) - 3, Tool: str(),
	}
	if r.Intn(4) != 0 {
		args, _ := json.Marshal(map[string]any{str(): str(), "n": r.Float64() * 1e6, "l": []any{str(), nil, true}})
		d.Arguments, _ = jcs.Transform(args)
	}
	return d
}

// TestAppendDecisionDifferential: the hand-written encoder writes the same bytes as the
// encoding/json one it replaced, on the corpus of awkward values and 20 000 random decisions,
// each also through redaction as Append prepares it.
func TestAppendDecisionDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	red, err := Redaction{}.compile()
	if err != nil {
		t.Fatal(err)
	}
	decisions := []*Decision{{}, benchDecision(1), {Tool: "x", Rules: []string{}, Redacted: []string{""}}}
	for i := 0; i < 20000; i++ {
		decisions = append(decisions, randomDecision(r))
	}
	for i, d := range decisions {
		checkDecisionEncoding(t, d)
		p, err := red.prepare(d)
		if err != nil {
			t.Fatalf("decision %d: prepare: %v", i, err)
		}
		checkDecisionEncoding(t, p)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := canonicalDecision(&Decision{Confidence: f}); err == nil {
			t.Errorf("confidence %v encoded", f)
		}
		if _, err := referenceDecision(&Decision{Confidence: f}); err == nil {
			t.Errorf("reference encoded confidence %v", f)
		}
	}
}

func checkDecisionEncoding(t *testing.T, d *Decision) {
	t.Helper()
	want, werr := referenceDecision(d)
	got, gerr := canonicalDecision(d)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%+v: reference error %v, new error %v", d, werr, gerr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodings differ:\n got %q\nwant %q", got, want)
	}
	if werr == nil && !strings.HasPrefix(string(got), `{"action_class":`) {
		t.Fatalf("unexpected encoding %q", got)
	}
}

// FuzzAppendDecision: any strings, numbers and arguments; both encoders agree.
func FuzzAppendDecision(f *testing.F) {
	for _, s := range decisionStrings {
		f.Add(s, s, 0.25, 3, `{"z":1,"a":[true,null,"x"]}`, true)
	}
	f.Add("\u2028", "\xff", 1e21, -1, `{}`, false)
	f.Fuzz(func(t *testing.T, a, b string, conf float64, tier int, args string, flag bool) {
		red, _ := Redaction{}.compile()
		d, err := red.prepare(&Decision{Tool: a, Reason: b, Confidence: conf, Tier: tier, Cached: flag,
			Rules: []string{a, b}, Redacted: []string{b}, Arguments: json.RawMessage(args), SessionID: b, Caller: a})
		if err != nil {
			return
		}
		checkDecisionEncoding(t, d)
	})
}

// BenchmarkEncodeDecision: the encoding/json reference beside the hand-written encoder on a
// prepared decision record.
func BenchmarkEncodeDecision(b *testing.B) {
	red, _ := Redaction{}.compile()
	d, err := red.prepare(benchDecision(1))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range []struct {
		name string
		f    func(*Decision) ([]byte, error)
	}{{"encoding-json", referenceDecision}, {"append", canonicalDecision}} {
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.f(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// referenceContainsFold is the per-literal search the redaction prefilter used before foldSet.
func referenceContainsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		c := s[i]
		if c|0x20 != sub[0] && c != sub[0] {
			continue
		}
		j := 1
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func referenceAny(s string, lits []string) bool {
	for _, l := range lits {
		if referenceContainsFold(s, l) {
			return true
		}
	}
	return false
}

// TestFoldSetDifferential: the one-pass trigger search answers as the per-literal one did, on
// random strings built from the triggers, their case variants and random bytes.
func TestFoldSetDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(14))
	all := append(append([]string(nil), defaultTriggers...), defaultKeyTriggers...)
	hits := 0
	for i := 0; i < 50000; i++ {
		var b []byte
		for n := r.Intn(5); n >= 0; n-- {
			switch r.Intn(3) {
			case 0:
				l := []byte(all[r.Intn(len(all))])
				for k := range l {
					if r.Intn(2) == 0 && l[k] >= 'a' && l[k] <= 'z' {
						l[k] -= 'a' - 'A'
					}
					if r.Intn(20) == 0 {
						l[k] ^= 0x20
					}
				}
				b = append(b, l[:r.Intn(len(l)+1)]...)
			default:
				b = append(b, byte(r.Intn(256)))
			}
		}
		s := string(b)
		want := referenceAny(s, defaultTriggers)
		if got := hasTrigger(s); got != want {
			t.Fatalf("hasTrigger(%q) = %v, reference %v", s, got, want)
		}
		want2 := referenceAny(s, all)
		if got := mayMatchSet.contains(s); got != want2 {
			t.Fatalf("mayMatch(%q) = %v, reference %v", s, got, want2)
		}
		if want2 {
			hits++
		}
	}
	if hits < 1000 || hits > 49000 {
		t.Fatalf("weak test: %d of 50 000 strings contain a trigger", hits)
	}
}

// TestCheckpointPayloadCanonical: the hand-written checkpoint payload is byte for byte the
// general canonical encoding (encoding/json, then RFC 8785), for notes with every kind of
// character and sizes up to and beyond 2^53.
func TestCheckpointPayloadCanonical(t *testing.T) {
	rng := rand.New(rand.NewSource(34))
	notes := []string{"", "shield.example/audit\n42\nq83+Zg==\n\n— shield.example/audit AAAA\n", "<>&\u2028\u2029\"\\\x00\x1f\x7f é 日本 😀", "\xff\xfe invalid"}
	for range 500 {
		b := make([]byte, rng.Intn(80))
		for i := range b {
			b[i] = byte(rng.Intn(256))
		}
		notes = append(notes, string(b))
	}
	sizes := []uint64{0, 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, math.MaxUint64}
	for i, note := range notes {
		size := sizes[i%len(sizes)]
		if i >= len(sizes) {
			size = uint64(rng.Int63n(1 << 40))
		}
		c := checkpointPayload{Size: size, Root: "q83+Zg/" + note[:min(3, len(note))], Note: note}
		got, gerr := c.canonical()
		want, werr := canonicalPayload(c)
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("size %d note %q:\n got %s (%v)\nwant %s (%v)", size, note, got, gerr, want, werr)
		}
	}
}
