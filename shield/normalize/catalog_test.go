package normalize

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultCatalogCoversRuntimes(t *testing.T) {
	c := defaultCatalog(t)
	tests := []struct {
		tool, class string
	}{
		// OpenParallax
		{"execute_command", ClassExec}, {"shell_command", ClassExec}, {"read_file", ClassFileRead},
		{"write_file", ClassFileWrite}, {"delete_file", ClassFileDelete}, {"delete_directory", ClassFileDelete},
		{"move_file", ClassFileMove}, {"http_request", ClassNetRequest}, {"send_email", ClassMessageSend},
		{"email", ClassMessageSend}, {"send_message", ClassMessageSend}, {"agent_message", ClassMessageSend},
		{"create_agent", ClassAgentSpawn}, {"create_schedule", ClassSchedule}, {"memory_write", ClassMemoryWrite},
		{"git_push", ClassVCSPush},
		// Claude Code
		{"Bash", ClassExec}, {"Read", ClassFileRead}, {"Write", ClassFileWrite}, {"Edit", ClassFileWrite},
		{"MultiEdit", ClassFileWrite}, {"WebFetch", ClassNetRequest}, {"WebSearch", ClassQuery},
		{"Glob", ClassFileSearch}, {"Grep", ClassFileSearch}, {"Task", ClassAgentSpawn}, {"NotebookEdit", ClassFileWrite},
		// Codex
		{"shell", ClassExec}, {"apply_patch", ClassFileWrite},
		// MCP filesystem and fetch
		{"read_multiple_files", ClassFileRead}, {"edit_file", ClassFileWrite}, {"create_directory", ClassFileWrite},
		{"list_directory", ClassFileList}, {"directory_tree", ClassFileList}, {"search_files", ClassFileSearch},
		{"get_file_info", ClassFileRead}, {"fetch", ClassNetRequest},
		// patterns
		{"get_user", ClassQuery}, {"weather_lookup", ClassQuery}, {"list_transactions", ClassQuery},
		{"k8s_exec", ClassExec}, {"agentdb_pattern_search", ClassQuery}, {"dbt_list", ClassQuery},
		// GitHub MCP, memory MCP, browser automation
		{"create_issue", ClassMessageSend}, {"push_files", ClassVCSPush}, {"create_entities", ClassMemoryWrite},
		{"read_graph", ClassMemoryRead}, {"puppeteer_evaluate", ClassCodeExec}, {"git_status", ClassVCS},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			e, ok := c.Lookup(tc.tool)
			if !ok {
				t.Fatalf("%s not in the catalog", tc.tool)
			}
			if e.Class != tc.class {
				t.Errorf("class %s, want %s (entry at %s)", e.Class, tc.class, e.Source())
			}
		})
	}
	if _, ok := c.Lookup("send_red_packet"); ok {
		t.Error("send_red_packet should be unknown")
	}
}

func TestParseCatalogErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every problem, in order
	}{
		{name: "unknown key", yaml: "version: 1\ntools:\n  - names: [a]\n    class: exec\n    comand: [x]\n",
			want: []string{"c.yaml:5: field comand not found in type normalize.Entry"}},
		{name: "every semantic problem at once", yaml: `version: 1
tools:
  - names: [a]
    class: exce
  - names: ["b[", a]
    class: exec
    paths:
      - {keys: [p], role: readd}
  - class: exec
`, want: []string{
			`c.yaml:3: unknown class "exce" (declare it under classes: to add one)`,
			`c.yaml:5: unknown path role "readd"`,
			`c.yaml:5: bad glob "b[": syntax error in pattern`,
			`c.yaml:5: tool name "a" already listed at c.yaml:3`,
			`c.yaml:9: entry has no names`,
		}},
		{name: "wrong version", yaml: "version: 2\ntools: []\n", want: []string{"c.yaml:1: version must be 1, got 2"}},
		{name: "not yaml", yaml: "version: [\n", want: []string{"c.yaml:1: did not find expected node content"}},
		{name: "two documents", yaml: "version: 1\ntools: []\n---\nversion: 1\n", want: []string{"c.yaml:3: more than one YAML document"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCatalog("c.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrCatalog) {
				t.Errorf("%v does not wrap ErrCatalog", err)
			}
			var ce *CatalogError
			if !errors.As(err, &ce) {
				t.Fatalf("%T is not a *CatalogError", err)
			}
			if d := cmp.Diff(tc.want, ce.Problems); d != "" {
				t.Errorf("problems -want +got:\n%s", d)
			}
		})
	}
}

func TestCatalogMerge(t *testing.T) {
	base, err := ParseCatalog("base.yaml", []byte(`version: 1
tools:
  - names: [run, "get_*"]
    class: exec
    command: [command]
  - names: [fetch]
    class: net_request
`))
	if err != nil {
		t.Fatal(err)
	}
	over, err := ParseCatalog("bundle.yaml", []byte(`version: 1
classes: [payment]
tools:
  - names: [run]
    class: code_exec
  - names: ["get_secret*"]
    class: payment
`))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := ParseCatalog("base.yaml", []byte(`version: 1
tools:
  - names: [x]
    class: exec
`))
	before.Merge(nil) // no-op
	if _, ok := before.Lookup("x"); !ok {
		t.Fatal("Merge(nil) lost an entry")
	}
	base.Merge(over)
	for _, tc := range []struct{ tool, class string }{
		{"run", ClassCodeExec}, {"fetch", ClassNetRequest}, {"get_secret_value", "payment"}, {"get_user", ClassExec},
		{"RUN", ClassCodeExec},
	} {
		e, ok := base.Lookup(tc.tool)
		if !ok || e.Class != tc.class {
			t.Errorf("%s: got %v %v, want %s", tc.tool, e, ok, tc.class)
		}
	}
	// other is unchanged.
	if _, ok := over.Lookup("fetch"); ok {
		t.Error("other gained base's entries")
	}
	if !strings.HasPrefix(mustLookup(t, base, "run").Source(), "bundle.yaml:") {
		t.Errorf("source %q", mustLookup(t, base, "run").Source())
	}
}

func mustLookup(t *testing.T, c *Catalog, tool string) *Entry {
	t.Helper()
	e, ok := c.Lookup(tool)
	if !ok {
		t.Fatalf("%s not found", tool)
	}
	return e
}
