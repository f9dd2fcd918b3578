package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exampleConfig = "../../deploy/shield.yaml"

func TestExampleConfigValid(t *testing.T) {
	t.Setenv("STATE_DIRECTORY", "/var/lib/shield")
	cfg, err := loadConfig(exampleConfig)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if cfg.StateDir != "/var/lib/shield" || cfg.Socket != "/var/lib/shield/shield.sock" {
		t.Errorf("state dir %q, socket %q: want the systemd state directory", cfg.StateDir, cfg.Socket)
	}
	if cfg.Judge != nil {
		t.Errorf("the example enables the judge; it must stay off by default")
	}
	if cfg.Auth.UnixRoles != nil {
		t.Errorf("the example sets auth.unix_roles (%v), which would replace the default roles", cfg.Auth.UnixRoles)
	}
	// Keys the example sets to their zero value must decode to the zero value: the example
	// documents the defaults, it must not change them.
	zero := &Config{}
	zero.WithDefaults()
	w := true
	zero.Policy.Watch = &w
	if diff := cmp.Diff(zero, cfg, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().Type().Kind() == reflect.Slice || p.Last().Type().Kind() == reflect.Map
	}, cmp.Ignore())); diff != "" {
		t.Errorf("example config differs from the defaults (-default +example):\n%s", diff)
	}
}

// TestExampleConfigDocumentsEveryKey walks Config's YAML keys: each must appear in the example,
// set or commented out, so a new key cannot go undocumented.
func TestExampleConfigDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range yamlKeys(reflect.TypeOf(Config{}), "") {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !regexp.MustCompile(`(?m)^[ #]*` + regexp.QuoteMeta(leaf) + `:`).Match(data) {
			t.Errorf("key %s is not in %s", key, exampleConfig)
		}
	}
}

// TestExampleJudgeBlock uncomments the example's judge section and checks it is a valid one.
func TestExampleJudgeBlock(t *testing.T) {
	data, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "\n# judge:\n")
	if !ok {
		t.Fatal("no commented-out judge section in the example")
	}
	var b strings.Builder
	b.WriteString("judge:\n")
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) == "" {
			break // the section ends at the first blank line
		}
		if strings.HasPrefix(l, "#   ") && !strings.HasPrefix(l, "#   #") {
			b.WriteString(strings.TrimPrefix(l, "#") + "\n")
		}
	}
	// config check refuses what serve refuses, a named key variable that is unset included.
	t.Setenv("SHIELD_JUDGE_API_KEY", "test-key-not-used")
	path := filepath.Join(t.TempDir(), "judge.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if problems := checkConfigFile(path); len(problems) > 0 {
		t.Fatalf("uncommented judge section:\n%s\nproblems: %q", b.String(), problems)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Judge == nil || cfg.Judge.Fallback != "escalate" || cfg.Judge.Model == "" {
		t.Errorf("judge section decoded to %+v", cfg.Judge)
	}
}

// yamlKeys lists the dotted YAML keys of a struct type, descending into nested structs (not into
// maps or slices).
func yamlKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || name == "" || !f.IsExported() {
			continue
		}
		keys = append(keys, prefix+name)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() != "time" {
			keys = append(keys, yamlKeys(ft, prefix+name+".")...)
		}
	}
	return keys
}

func TestConfigCheckCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.yaml", "state_dir: /x\nlisen: [127.0.0.1:1]\nlog:\n  formatt: json\n")
	invalid := write("invalid.yaml", "listen: [\"0.0.0.0:8443\"]\nmetrics_listen: 10.0.0.1:9464\nlog:\n  level: loud\npipeline:\n  cache_size: -2\n")
	badType := write("type.yaml", "pipeline:\n  timeout: soon\n")
	empty := write("empty.yaml", "")
	limits := write("limits.yaml", "limits:\n  max_evaluate: -1\n  max_queries: 4\n  max_queries_per_peer: 8\n  queue_wait: 1h\n")
	fds := write("fds.yaml", "limits:\n  max_connections: 1048576\n")
	// File modes: serve's rules (state dir not group/other-writable; tokens file and TLS key
	// readable at most by group, writable by no group).
	openState := filepath.Join(dir, "open-state")
	tightState := filepath.Join(dir, "tight-state")
	for p, mode := range map[string]os.FileMode{openState: 0o777, tightState: 0o750} {
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	tokens := func(name string, mode os.FileMode) string {
		p := write(name, "tok-0123456789abcdef agent rt\n")
		os.Chmod(p, mode)
		return p
	}
	badModes := write("modes.yaml", "state_dir: "+openState+"\nauth:\n  tokens_file: "+tokens("tokens-644", 0o644)+
		"\n  tls:\n    cert_file: /nonexistent.pem\n    key_file: "+tokens("key-660", 0o660)+"\n")
	goodModes := write("goodmodes.yaml", "state_dir: "+tightState+"\nauth:\n  tokens_file: "+tokens("tokens-640", 0o640)+"\n")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // substrings, one problem each
		wantErr  string
	}{
		{name: "example", args: []string{"config", "check", exampleConfig}, wantCode: 0, wantOut: []string{"ok"}},
		{name: "empty file", args: []string{"config", "check", empty}, wantCode: 0, wantOut: []string{"ok"}},
		{name: "unknown keys all reported", args: []string{"config", "check", unknown}, wantCode: 1,
			wantOut: []string{"field lisen not found", "field formatt not found"}},
		{name: "every invalid value reported", args: []string{"config", "check", invalid}, wantCode: 1,
			wantOut: []string{`listen "0.0.0.0:8443"`, "metrics_listen", "log.level", "pipeline.cache_size"}},
		{name: "limits", args: []string{"config", "check", limits}, wantCode: 1,
			wantOut: []string{"limits.max_evaluate -1", "limits.max_queries_per_peer 8 is above", "limits.queue_wait"}},
		{name: "connections beyond the descriptor limit", args: []string{"config", "check", fds}, wantCode: 1,
			wantOut: []string{"RLIMIT_NOFILE"}},
		{name: "file modes", args: []string{"config", "check", badModes}, wantCode: 1,
			wantOut: []string{"state_dir " + openState + " has mode 0777", "auth.tokens_file: " + dir + "/tokens-644 has mode 0644", "auth.tls.key_file: " + dir + "/key-660 has mode 0660"}},
		{name: "file modes as documented", args: []string{"config", "check", goodModes}, wantCode: 0, wantOut: []string{"ok"}},
		{name: "wrong type", args: []string{"config", "check", badType}, wantCode: 1, wantOut: []string{"soon"}},
		{name: "missing file", args: []string{"config", "check", filepath.Join(dir, "absent.yaml")}, wantCode: 1,
			wantOut: []string{"read config"}},
		{name: "no file", args: []string{"config", "check"}, wantCode: 2, wantErr: "usage"},
		{name: "two files", args: []string{"config", "check", empty, empty}, wantCode: 2, wantErr: "usage"},
		{name: "unknown subcommand", args: []string{"config", "lint", empty}, wantCode: 2, wantErr: "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out.String(), errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if tc.wantCode == 1 && len(lines) < len(tc.wantOut) {
				t.Errorf("%d problem lines for %d expected problems:\n%s", len(lines), len(tc.wantOut), out.String())
			}
			if tc.wantCode == 1 && strings.Contains(out.String(), "ok\n") {
				t.Errorf("printed ok along with problems:\n%s", out.String())
			}
			if !strings.Contains(errb.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q: %s", tc.wantErr, errb.String())
			}
		})
	}
}

// TestConfigCheckRefusesWhatServeRefuses: configurations serve refuses at start (a bundle that
// does not load, an unreadable signing key, an empty webhook secret, a malformed tokens file, a
// TLS key pair that does not load, hosted engines without a model or outside the policy's
// workspace) are refused by `shield config check` too, which once said ok to all of them: both go
// through appliance.Check.
func TestConfigCheckRefusesWhatServeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ws := filepath.Join(dir, "ws")
	other := filepath.Join(dir, "other")
	os.Mkdir(ws, 0o755)
	os.Mkdir(other, 0o755)
	tokens := write("tokens", "this-line-has-no-role\n")
	key := write("tls.key", "not a key\n")
	t.Setenv("SHIELD_TEST_EMPTY_SECRET", "")
	llm := "    llm:\n      provider: openai\n      base_url: http://127.0.0.1:1/v1\n      model: m\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"bundle missing", "policy:\n  path: " + filepath.Join(dir, "no-bundle") + "\n", "load policy bundle"},
		{"signing key unreadable", "policy:\n  public_key: " + filepath.Join(dir, "no.pub") + "\n", "policy public key"},
		{"empty webhook secret", "approvals:\n  webhook_url: https://hooks.example/x\n  webhook_secret_env: SHIELD_TEST_EMPTY_SECRET\n", "webhook secret"},
		{"malformed tokens file", "auth:\n  tokens_file: " + tokens + "\n", "TOKEN ROLE"},
		{"TLS key pair", "auth:\n  tls:\n    cert_file: " + filepath.Join(dir, "no.pem") + "\n    key_file: " + key + "\n", "auth.tls"},
		{"engine without a model", "engines:\n  - workspace: " + ws + "\n", "llm: missing"},
		{"engine outside the policy workspace", "policy:\n  workspace: " + ws + "\nengines:\n  - workspace: " + other + "\n" + llm, "outside policy.workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.yaml)
			code, out, _ := runCmd(t, "", "config", "check", path)
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Errorf("config check: exit %d, output %q; want 1 and %q", code, out, tc.want)
			}
			state := filepath.Join(t.TempDir(), "state")
			code, _, errs := runCmd(t, "", "serve", "--config", path, "--state-dir", state)
			if code == 0 || !strings.Contains(errs, tc.want) {
				t.Errorf("serve: exit %d, stderr %q; want a refusal with %q", code, errs, tc.want)
			}
		})
	}
}
