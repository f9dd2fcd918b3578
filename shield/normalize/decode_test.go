package normalize

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeArguments(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 64) + "1" + strings.Repeat("}", 64)
	tooDeep := `{"a":{"b":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + "}}"
	tests := []struct {
		name    string
		raw     string
		lim     Limits
		want    map[string]any
		wantErr string // substring of the message; "" = success
	}{
		{name: "object", raw: `{"command":"ls","n":1.50,"list":[true,null,"x"]}`,
			want: map[string]any{"command": "ls", "n": json.Number("1.50"), "list": []any{true, nil, "x"}}},
		{name: "empty object", raw: ` {} `, want: map[string]any{}},
		{name: "empty input", raw: "  ", wantErr: "arguments: empty"},
		{name: "array", raw: `[1]`, wantErr: "must be a JSON object, got an array at $"},
		{name: "string", raw: `"x"`, wantErr: "must be a JSON object, got a string"},
		{name: "null", raw: `null`, wantErr: "got null"},
		{name: "invalid JSON", raw: `{"a":}`, wantErr: "invalid JSON at byte offset"},
		{name: "truncated", raw: `{"a":[1,2`, wantErr: "unexpected end of JSON"},
		{name: "trailing data", raw: `{"a":1} {"b":2}`, wantErr: "trailing data after the object"},
		{name: "invalid UTF-8", raw: "{\"a\":\"\xff\"}", wantErr: "invalid UTF-8 at byte offset 6"},
		{name: "NUL in a string", raw: `{"a":{"b":"x\u0000y"}}`, wantErr: "NUL character in a string at $.a.b"},
		{name: "NUL in a key", raw: `{"a\u0000":1}`, wantErr: "NUL character in an object key"},
		{name: "duplicate key", raw: `{"cmd":"ls","cmd":"rm -rf /"}`, wantErr: "duplicate object key at $.cmd"},
		{name: "too large", raw: `{"a":"` + strings.Repeat("x", 100) + `"}`, lim: Limits{MaxBytes: 64}, wantErr: "larger than the limit of 64"},
		{name: "depth 64 is allowed", raw: deep, want: nil},
		{name: "deeper than 64", raw: tooDeep, wantErr: "nesting deeper than 64 at $.a.b" + strings.Repeat("[0]", 62)},
		{name: "odd key path", raw: `{"a b":{"c":[` + strings.Repeat("[", 3) + `]]]]}}`, lim: Limits{MaxDepth: 4}, wantErr: `at $["a b"].c[0][0]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeArguments([]byte(tc.raw), tc.lim)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("no error; got %v", got)
				}
				if !errors.Is(err, ErrInvalidArguments) {
					t.Errorf("error %v does not wrap ErrInvalidArguments", err)
				}
				var ae *ArgumentsError
				if !errors.As(err, &ae) {
					t.Errorf("error %T is not an *ArgumentsError", err)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("-want +got:\n%s", d)
				}
			}
		})
	}
}

func TestDecodeArgumentsHugeNesting(t *testing.T) {
	// 500 000 brackets: rejected at depth 65 without reading the rest.
	raw := `{"a":` + strings.Repeat("[", 500000) + strings.Repeat("]", 500000) + "}"
	_, err := DecodeArguments([]byte(raw), Limits{MaxBytes: 2 << 20})
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than 64") {
		t.Fatalf("got %v", err)
	}
}

// FuzzDecodeArguments checks that decoding never panics, that what it accepts is a JSON object
// which re-encodes and decodes to the same value, and that errors are ArgumentsErrors.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,{"b":null}]}`, `[]`, `{"a":"\u0000"}`, `{"a":1,"a":2}`,
		"{\"a\":\"\xff\"}", `{"a":{"b":{"c":{}}}}`, `{"n":1e400}`, `{"s":"\ud800"}`} {
		f.Add([]byte(s))
	}
	for _, raw := range corpusArguments(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := DecodeArguments(raw, Limits{MaxDepth: 16})
		if err != nil {
			var ae *ArgumentsError
			if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if v == nil {
			t.Fatal("nil map without error")
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		v2, err := DecodeArguments(b, Limits{MaxDepth: 16})
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		if d := cmp.Diff(v, v2); d != "" {
			t.Fatalf("round trip differs:\n%s", d)
		}
	})
}

// FuzzDecodePaths checks that the fast path (one encoding/json call and checks) and the token path
// accept the same inputs with the same values.
func FuzzDecodePaths(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"b":1},"b":{"b":2}}`, `{"a":[{"x":1},{"x":1}]}`,
		`{"a":"\"x\":1,\"x\":2"}`, `{"k\\":1,"k\\":2}`, `{"a":"\u0000"}`, `{"a":[[[[[[1]]]]]]}`, `{} x`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	for _, raw := range corpusArguments(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !utf8.Valid(raw) {
			return
		}
		lim := Limits{MaxDepth: 4}.withDefaults()
		fast, ok := decodeFast(raw, lim.MaxDepth)
		slow, err := decodeSlow(raw, lim)
		if ok && err != nil {
			t.Fatalf("fast path accepts, token path rejects: %v", err)
		}
		if ok {
			if d := cmp.Diff(slow, fast); d != "" {
				t.Fatalf("values differ:\n%s", d)
			}
		}
		if !ok && err == nil && !hasDuplicateKeys(raw) {
			t.Fatalf("fast path rejects what the token path accepts: %q", raw)
		}
	})
}
