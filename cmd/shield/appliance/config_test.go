package appliance

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEnginesDefaults: hosted engines' workspaces become absolute and the first one is the
// policy's workspace when none is set (the policy judges the engine's files as its workspace);
// a workspace hosted twice, or outside policy.workspace, is refused.
func TestEnginesDefaults(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	state := filepath.Join(t.TempDir(), "state")
	c := &Config{StateDir: state, Engines: []EngineConfig{{Workspace: ".", LLM: LLMConfig{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}}}}
	c.WithDefaults()
	if c.Engines[0].Workspace != dir || c.Policy.Workspace != dir {
		t.Fatalf("engine workspace %q, policy workspace %q, want %q for both", c.Engines[0].Workspace, c.Policy.Workspace, dir)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	c.Engines = append(c.Engines, c.Engines[0], EngineConfig{Workspace: t.TempDir(), LLM: c.Engines[0].LLM})
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "hosted twice") || !strings.Contains(err.Error(), "outside policy.workspace") {
		t.Errorf("Validate = %v, want both refusals", err)
	}
}
