package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shieldsec/shield/engine/exec"
)

// Tools are the tools the engine offers agents and the executors behind them.
type Tools struct {
	Files   *exec.Files
	Shell   *exec.Shell   // nil: no shell tool
	Fetcher *exec.Fetcher // nil: no HTTP tool
	root    string
}

// NewTools returns the tool set for a workspace.
func NewTools(workspace string, shell *exec.Shell, fetcher *exec.Fetcher) (*Tools, error) {
	f, err := exec.NewFiles(workspace)
	if err != nil {
		return nil, err
	}
	return &Tools{Files: f, Shell: shell, Fetcher: fetcher, root: workspace}, nil
}

// Workspace is the directory tool calls work in.
func (t *Tools) Workspace() string { return t.root }

type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	writes      bool
}

func obj(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

func (t *Tools) defs() []toolDef {
	str := func(name, desc string) string {
		return fmt.Sprintf(`%q:{"type":"string","description":%q}`, name, desc)
	}
	d := []toolDef{
		{Name: "read_file", Description: "Read a text file in the workspace.", Parameters: obj(str("path", "file path, relative to the workspace"), "path")},
		{Name: "write_file", Description: "Create or replace a file in the workspace.", Parameters: obj(str("path", "file path")+","+str("content", "full new content"), "path", "content"), writes: true},
		{Name: "list_directory", Description: "List a directory of the workspace.", Parameters: obj(str("path", "directory path; . for the workspace"), "path")},
		{Name: "delete_file", Description: "Delete a file or empty directory in the workspace.", Parameters: obj(str("path", "path to delete"), "path"), writes: true},
		{Name: "move_file", Description: "Move or rename a file within the workspace.", Parameters: obj(str("source", "existing path")+","+str("destination", "new path"), "source", "destination"), writes: true},
	}
	if t.Shell != nil {
		d = append(d, toolDef{Name: "execute_command", Description: "Run a shell command in the workspace (sandboxed, no network).",
			Parameters: obj(str("command", "the command line for /bin/sh -c"), "command"), writes: true})
	}
	if t.Fetcher != nil {
		d = append(d, toolDef{Name: "http_request", Description: "HTTP GET a URL on the egress allowlist.",
			Parameters: obj(str("url", "http or https URL"), "url")})
	}
	return d
}

// Definitions returns the tools as JSON Schema objects (one JSON document per tool).
func (t *Tools) Definitions() []string {
	var out []string
	for _, d := range t.defs() {
		b, _ := json.Marshal(d)
		out = append(out, string(b))
	}
	return out
}

// Writes reports whether a tool changes state (refused in off-the-record sessions). Unknown
// tools count as writing.
func (t *Tools) Writes(name string) bool {
	for _, d := range t.defs() {
		if d.Name == name {
			return d.writes
		}
	}
	return true
}

// Run executes an allowed call and returns its output (or the error text) and whether it failed.
func (t *Tools) Run(ctx context.Context, name, argsJSON string) (string, bool) {
	var a map[string]any
	if err := json.Unmarshal([]byte(argsJSON), &a); err != nil {
		return "invalid arguments: " + err.Error(), true
	}
	s := func(k string) string { v, _ := a[k].(string); return v }
	fail := func(err error) (string, bool) { return err.Error(), true }
	switch name {
	case "read_file":
		b, trunc, err := t.Files.Read(s("path"))
		if err != nil {
			return fail(err)
		}
		if trunc {
			return string(b) + "\n[truncated]", false
		}
		return string(b), false
	case "write_file":
		if err := t.Files.Write(s("path"), []byte(s("content"))); err != nil {
			return fail(err)
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(s("content")), s("path")), false
	case "list_directory":
		names, err := t.Files.List(s("path"))
		if err != nil {
			return fail(err)
		}
		return strings.Join(names, "\n"), false
	case "delete_file":
		if err := t.Files.Delete(s("path")); err != nil {
			return fail(err)
		}
		return "deleted " + s("path"), false
	case "move_file":
		if err := t.Files.Move(s("source"), s("destination")); err != nil {
			return fail(err)
		}
		return "moved " + s("source") + " to " + s("destination"), false
	case "execute_command":
		if t.Shell == nil {
			break
		}
		r, err := t.Shell.Run(ctx, s("command"))
		if err != nil {
			return fail(err)
		}
		out := r.Output
		if r.Truncated {
			out += "\n[output truncated]"
		}
		if r.TimedOut {
			return out + "\n[timed out]", true
		}
		return fmt.Sprintf("%s\n[exit %d]", out, r.ExitCode), r.ExitCode != 0
	case "http_request":
		if t.Fetcher == nil {
			break
		}
		code, body, trunc, err := t.Fetcher.Get(ctx, s("url"))
		if err != nil {
			return fail(err)
		}
		out := fmt.Sprintf("HTTP %d\n%s", code, body)
		if trunc {
			out += "\n[truncated]"
		}
		return out, code >= 400
	}
	return fmt.Sprintf("unknown tool %q", name), true
}
