package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shieldsec/shield/cmd/shield/appliance"
)

// TestDefaultStateDir: never the working directory (run from a project, ./var put the audit key
// inside the agent's workspace).
func TestDefaultStateDir(t *testing.T) {
	t.Chdir(t.TempDir())
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name, stateDirectory, xdg string
		euid                      int
		want                      string
	}{
		{name: "systemd", stateDirectory: "/run/x/state:/other", euid: 1000, want: "/run/x/state"},
		{name: "root", euid: 0, want: "/var/lib/shield"},
		{name: "xdg", xdg: "/xdg/state", euid: 1000, want: "/xdg/state/shield"},
		{name: "relative xdg ignored", xdg: "rel", euid: 1000, want: filepath.Join(home, ".local/state/shield")},
		{name: "home", euid: 1000, want: filepath.Join(home, ".local/state/shield")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STATE_DIRECTORY", tc.stateDirectory)
			t.Setenv("XDG_STATE_HOME", tc.xdg)
			old := appliance.Geteuid
			appliance.Geteuid = func() int { return tc.euid }
			defer func() { appliance.Geteuid = old }()
			c := &Config{}
			c.WithDefaults()
			if c.StateDir != tc.want {
				t.Errorf("state dir %q, want %q", c.StateDir, tc.want)
			}
		})
	}
}

// TestStateDirOutsideWorkspace: a state dir inside a workspace, or a workspace inside the state
// dir, is refused with both paths named, also through a symbolic link; one beside it is fine.
func TestStateDirOutsideWorkspace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "project")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, state, workspace string
		keyFile                string
		want                   []string // substrings of the error; none: accepted
	}{
		{name: "inside", state: filepath.Join(ws, "var"), workspace: ws, want: []string{"inside the workspace", filepath.Join(ws, "var"), ws}},
		{name: "equal", state: ws, workspace: ws, want: []string{"inside the workspace"}},
		{name: "workspace inside state", state: base, workspace: ws, want: []string{"workspace " + ws + " is inside the state_dir " + base}},
		{name: "through a symlink", state: filepath.Join(link, "var"), workspace: ws, want: []string{"inside the workspace", filepath.Join(ws, "var")}},
		{name: "workspace is a symlink", state: filepath.Join(ws, "var"), workspace: link, want: []string{"inside the workspace"}},
		{name: "key file inside", state: filepath.Join(base, "state"), workspace: ws, keyFile: filepath.Join(ws, "audit.key"), want: []string{"audit.key_file"}},
		{name: "beside", state: filepath.Join(base, "var"), workspace: ws},
		{name: "prefix is not inside", state: ws + "-state", workspace: ws},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{StateDir: tc.state, Policy: PolicyConfig{Workspace: tc.workspace}}
			c.Audit.KeyFile = tc.keyFile
			c.WithDefaults()
			err := c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestConfigCheckRefusesStateInWorkspace: `shield config check` says what serve says.
func TestConfigCheckRefusesStateInWorkspace(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(t.TempDir(), "shield.yaml")
	if err := os.WriteFile(path, []byte("state_dir: "+ws+"/var\npolicy:\n  workspace: "+ws+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd(t, "", "config", "check", path)
	if code != 1 || !strings.Contains(out, "inside the workspace") {
		t.Errorf("config check: exit %d, output %q", code, out)
	}
	code, _, errs := runCmd(t, "", "serve", "--config", path)
	if code == 0 || !strings.Contains(errs, "inside the workspace") {
		t.Errorf("serve: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "var")); err == nil {
		t.Error("serve created the state dir inside the workspace")
	}
}

// TestStartRefusesStateInWorkspace: `shield start --workspace .` with --state-dir inside it is
// refused before anything is written there; a missing llm section is a configuration error.
func TestStartRefusesStateInWorkspace(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "engine.yaml")
	if err := os.WriteFile(cfg, []byte("llm:\n  provider: openai\n  base_url: http://127.0.0.1:1/v1\n  model: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	code, _, errs := runCmd(t, "", "start", "--workspace", ".", "--config", cfg, "--state-dir", "./var")
	if code == 0 || !strings.Contains(errs, "inside the workspace") || !strings.Contains(errs, filepath.Join(ws, "var")) {
		t.Errorf("start: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "var")); err == nil {
		t.Error("start created the state dir inside the workspace")
	}
}

func TestEngineConfigNeedsLLM(t *testing.T) {
	ws := t.TempDir()
	state := t.TempDir()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{name: "missing", yaml: "", want: "llm: missing"},
		{name: "no model", yaml: "llm:\n  provider: openai\n  base_url: https://api.example.com/v1\n", want: "llm.model is required"},
		{name: "bad provider", yaml: "llm:\n  provider: x\n  base_url: https://api.example.com/v1\n  model: m\n", want: "llm.provider"},
		{name: "bad url", yaml: "llm:\n  provider: openai\n  base_url: api.example.com\n  model: m\n", want: "llm.base_url"},
		{name: "ok", yaml: "llm:\n  provider: anthropic\n  base_url: https://api.example.com\n  model: m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "engine.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := loadEngineConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			c.Workspace, c.StateDir, c.Policy.Workspace = ws, state, ws
			c.Config.WithDefaults()
			err = c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	// Through the command: refused at start, before any engine runs.
	path := filepath.Join(t.TempDir(), "engine.yaml")
	os.WriteFile(path, []byte("log:\n  level: info\n"), 0o600)
	code, _, errs := runCmd(t, "", "start", "--workspace", ws, "--config", path, "--state-dir", state)
	if code == 0 || !strings.Contains(errs, "llm: missing") {
		t.Errorf("start without llm: exit %d, stderr %q", code, errs)
	}
}
