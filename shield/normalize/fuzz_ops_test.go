package normalize

import (
	"encoding/json"
	"testing"
)

// FuzzOpsNormalize: program-named tools with any arguments, and command lines of the ops
// principles (cloud verbs, forge API, database servers, credential helpers, timestamps, images,
// in-place edits) never crash the normaliser, and a program-named tool whose reading fails is
// never an exec with an empty command.
func FuzzOpsNormalize(f *testing.F) {
	seeds := []struct{ tool, args string }{
		{"kubectl", `{"args": ["delete", "namespace", "prod"]}`},
		{"mcp__k8s__kubectl", `{"command": "get pods -A", "cwd": "/tmp"}`},
		{"docker", `{"argv": ["run", "--rm", "ghcr.io/x/y:latest"]}`},
		{"Bash", `{"command": "aws --endpoint-url http://localhost:4566 ecs update-service --desired-count=0"}`},
		{"Bash", `{"command": "gh api graphql -f query='mutation{x}' -F a=@f"}`},
		{"Bash", `{"command": "sqlcmd -S tcp:h,1433\\\\inst -Q 'DROP TABLE t'"}`},
		{"Bash", `{"command": "git config --global credential.helper 'store --file'"}`},
		{"Bash", `{"command": "touch -d"}`},
		{"Bash", `{"command": "perl -i -pe"}`},
		{"Bash", `{"command": "cqlsh '' -e"}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	n := New(defaultCatalog(f), specOpts(f, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	f.Fuzz(func(t *testing.T, tool, raw string) {
		if len(raw) > 4096 || len(tool) > 128 {
			return
		}
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil {
			return
		}
		act := n.Normalize(tool, args, "/home/user/project")
		if act == nil {
			t.Fatal("nil action")
		}
		if _, _, ok := n.programToolCommand(tool, args); ok && act.Class == ClassExec && act.Command == "" && len(act.Commands) == 0 && act.ParseError == "" && !act.Truncated {
			t.Fatalf("program tool %s %s read as an empty command", tool, raw)
		}
	})
}
