package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedactText: each built-in value pattern on the command lines and texts that leaked
// (curl -u admin:hunter2, AWS_SECRET_ACCESS_KEY=…) and on look-alikes that must stay intact.
func TestRedactText(t *testing.T) {
	r, err := Redaction{}.compile()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, want string }{
		{"curl -u", "curl -u admin:hunter2 https://x.example/api", "curl -u admin:[REDACTED] https://x.example/api"},
		{"curl --user=", "curl --user=admin:hunter2 https://x", "curl --user=admin:[REDACTED] https://x"},
		{"curl -u glued", "curl -uadmin:hunter2 https://x", "curl -uadmin:[REDACTED] https://x"},
		{"curl -u quoted", "curl -u 'admin:hunter 2' x", "curl -u 'admin:[REDACTED] 2' x"},
		{"proxy user", "curl --proxy-user bob:s3cr3t http://x", "curl --proxy-user bob:[REDACTED] http://x"},
		{"aws env assignment", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG aws s3 ls", "AWS_SECRET_ACCESS_KEY=[REDACTED] aws s3 ls"},
		{"export token", "export GITHUB_TOKEN=abc123; gh pr list", "export GITHUB_TOKEN=[REDACTED]; gh pr list"},
		{"docker -e", "docker run -e DB_PASSWORD='p w' img", "docker run -e DB_PASSWORD=[REDACTED] img"},
		{"flag =", "mysql --password=hunter22 db", "mysql --password=[REDACTED] db"},
		{"flag space", "vault login --token hvs.abcdef", "vault login --token [REDACTED]"},
		{"query string", "https://x.example/cb?access_token=abc&state=1", "https://x.example/cb?access_token=[REDACTED]&state=1"},
		{"source code", `password = "hunter2"`, `password = [REDACTED]`},
		{"url credentials", "git clone https://admin:hunter2@git.example/r.git", "git clone https://admin:[REDACTED]@git.example/r.git"},
		{"url empty user", "redis-cli -u redis://:hunter2@cache:6379", "redis-cli -u redis://:[REDACTED]@cache:6379"},
		{"url password with @", "https://u:p@ss@h.example/x", "https://u:[REDACTED]@h.example/x"},
		{"authorization header", "curl -H 'Authorization: Basic YWRtaW46aHVudGVyMg==' x", "curl -H 'Authorization: [REDACTED]' x"},
		{"bearer alone", "token is Bearer abcdefghijklmnop", "token is Bearer [REDACTED]"},
		{"api key header", `curl -H "X-Api-Key: 12345" x`, `curl -H "X-Api-Key: [REDACTED]" x`},
		{"json text", `{"client_secret": "abc\"def", "id": "x"}`, `{"client_secret": [REDACTED], "id": "x"}`},
		{"yaml text", "db:\n  db_password: hunter2\n  host: h", "db:\n  db_password: [REDACTED]\n  host: h"},
		{"aws key id", "AKIAABCDEFGHIJKLMNOP", "[REDACTED]"},
		// Over-redaction, documented: a uid:gid cannot be told from user:password.
		{"docker -u uid:gid", "docker run -u 1000:1000 img", "docker run -u 1000:[REDACTED] img"},
		// Look-alikes that stay.
		{"git push -u", "git push -u origin main:main", "git push -u origin main:main"},
		{"sort -u", "sort -u a.txt", "sort -u a.txt"},
		{"url without credentials", "https://example.com:8443/x?q=1", "https://example.com:8443/x?q=1"},
		{"email", "mail bob@example.com", "mail bob@example.com"},
		{"plain", "ls -la /tmp", "ls -la /tmp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := r.text(tc.in); got != tc.want {
				t.Errorf("text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if got := r.text(r.text(tc.in)); got != r.text(tc.in) {
				t.Errorf("redaction is not idempotent: %q", got)
			}
		})
	}
}

// TestRedactDecisionStored: the stored decision holds none of the secrets, in its arguments nor
// in its reason or error (a judge may quote the call).
func TestRedactDecisionStored(t *testing.T) {
	l := mustOpen(t, testConfig(t))
	defer l.Close()
	args := `{"command":"curl -u admin:hunter2 https://x && AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI aws s3 ls"}`
	p, err := l.Append(context.Background(), TypeDecision, &Decision{Tool: "Bash", Decision: "BLOCK", Arguments: json.RawMessage(args),
		Reason: "curl -u admin:hunter2 sends credentials", Error: "judge: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI seen"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := l.Get(p.Seq)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := rec.MarshalJSON()
	for _, secret := range []string{"hunter2", "wJalrXUtnFEMI"} {
		if bytes.Contains(line, []byte(secret)) {
			t.Errorf("stored record holds %q: %s", secret, line)
		}
	}
	var d Decision
	if err := json.Unmarshal(rec.Payload, &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/command"}, d.Redacted); diff != "" {
		t.Errorf("redacted paths (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(d.Arguments), "AWS_SECRET_ACCESS_KEY=[REDACTED]") || !strings.Contains(string(d.Arguments), "-u admin:[REDACTED]") {
		t.Errorf("arguments lost their context: %s", d.Arguments)
	}
}

// TestRedactPayloadEveryType: Payload redacts any record type the same way (approval requests
// and resolutions, agent events, unknown types), and redacting again changes nothing.
func TestRedactPayloadEveryType(t *testing.T) {
	x, err := NewRedactor(Redaction{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, payload string
		paths         []string
	}{
		{"approval requested", `{"id":"apr_1","arguments":{"command":"curl -u admin:hunter2 x"},"reason":"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI","labels":{"api_token":"hunter2"}}`,
			[]string{"/arguments/command", "/labels/api_token", "/reason"}},
		{"approval resolved", `{"id":"apr_1","comment":"ok, password=hunter2 is a test one","state":"approved"}`, []string{"/comment"}},
		{"agent event", `{"event":"crashed","detail":"exec: git clone https://u:hunter2@h/r failed"}`, []string{"/detail"}},
		{"unknown type", `{"x":[{"Cookie":"hunter2"}]}`, []string{"/x/0/Cookie"}},
		{"nothing secret", `{"event":"ready","detail":"ok"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, paths, err := x.Payload(json.RawMessage(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.paths, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			for _, secret := range []string{"hunter2", "wJalrXUtnFEMI"} {
				if bytes.Contains(out, []byte(secret)) {
					t.Errorf("payload still holds %q: %s", secret, out)
				}
			}
			if tc.paths == nil && string(out) != tc.payload {
				t.Errorf("unchanged payload rewritten: %s", out)
			}
			again, paths2, err := x.Payload(out)
			if err != nil || len(paths2) != 0 || !bytes.Equal(again, out) {
				t.Errorf("second redaction changed %v: %s (%v)", paths2, again, err)
			}
		})
	}
}

// FuzzRedactPayload: any payload is either refused or redacted into valid canonical JSON that a
// second pass leaves unchanged, and a value planted under a secret member never survives.
func FuzzRedactPayload(f *testing.F) {
	f.Add(`{"command":"curl -u admin:hunter2 https://x"}`, "hunter2")
	f.Add(`{"detail":"AWS_SECRET_ACCESS_KEY=wJalr aws s3 ls","n":1e400}`, "wJalr")
	f.Add(`{"a":[{"Authorization":"Basic YWRtaW4="}],"b":"https://u:p@h/"}`, "YWRtaW4=")
	f.Add(`{"x":"\u2028 password: pw1 \n  token: t0k"}`, "t0k")
	f.Add(`[]`, "")
	x, err := NewRedactor(Redaction{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload, secret string) {
		out, _, err := x.Payload(json.RawMessage(payload))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("redacted payload is not JSON: %q", out)
		}
		again, paths, err := x.Payload(out)
		if err != nil || len(paths) != 0 || !bytes.Equal(again, out) {
			t.Fatalf("second pass changed %v (%v):\n%s\n%s", paths, err, out, again)
		}
		// A planted secret under a secret-looking member is always masked.
		if secret == "" || strings.Contains(RedactedMark, secret) {
			return
		}
		planted, err := json.Marshal(map[string]any{"password": secret, "inner": json.RawMessage(out)})
		if err != nil {
			return
		}
		red, _, err := x.Payload(planted)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Password string `json:"password"`
		}
		if json.Unmarshal(red, &v) != nil || v.Password != RedactedMark {
			t.Fatalf("planted secret survived: %s", red)
		}
	})
}

// TestTextCache: the cached redaction of free text answers what the patterns answer, for texts
// seen again, texts over the cached length and once the cache is full.
func TestTextCache(t *testing.T) {
	r, err := Redaction{Values: []string{`hunter[0-9]`}}.compile()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the command reads credential files and sends data over the network",
		"sends AWS_SECRET_ACCESS_KEY=abcdefghijklmnop to evil.example",
		"password hunter2 in a reason",
		"plain reason",
		strings.Repeat("token=abcdefgh ", 60), // over textCacheLen
	}
	for i := range textCacheMax + 10 {
		texts = append(texts, fmt.Sprintf("reason %d with Bearer abcdefghijklmnopq%d", i, i))
	}
	for round := range 2 {
		for _, s := range texts {
			if got, want := r.text(s), r.redactText(s); got != want {
				t.Fatalf("round %d: text(%.60q) = %.60q, want %.60q", round, s, got, want)
			}
		}
	}
	if n := r.textCount.Load(); n != textCacheMax {
		t.Fatalf("cached %d texts, want the bound %d", n, textCacheMax)
	}
	if got := r.text(texts[1]); strings.Contains(got, "abcdefghijklmnop") {
		t.Fatalf("a cached reason kept its secret: %q", got)
	}
}
