package normalize

import (
	"strings"
	"testing"
)

func TestHTTPDeletesAndForgeSettings(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := []struct {
		cmd, kind, target, detail string // kind "" = neither an http delete nor a forge privilege
	}{
		{"curl -X DELETE http://es.globex.io:9200/_all", EffectDelete, "http:es.globex.io:9200/_all", "bulk"},
		{"curl -XDELETE 'http://10.0.3.4:9200/logs-*'", EffectDelete, "http:10.0.3.4:9200/logs-*", "bulk"},
		{"curl --request DELETE https://search.example.com/*", EffectDelete, "http:search.example.com:443/*", "bulk"},
		{"http DELETE https://api.example.com/v1/items/3", EffectDelete, "http:api.example.com:443/v1/items/3", "http DELETE"},
		{"xh delete localhost:9200/test-index", EffectDelete, "http:localhost:9200/test-index", "http DELETE"},
		{"wget --method=DELETE http://es:9200/_all", EffectDelete, "http:es:9200/_all", "bulk"},
		{"curl -s http://localhost:9200/_all/_search", "", "", ""},
		{"curl -X POST http://localhost:9200/idx/_doc -d '{}'", "", "", ""},
		{"gh api -X PATCH orgs/globex -f default_repository_permission=admin", EffectPrivilege, "forge:orgs/globex", "PATCH"},
		{"gh api -X PATCH repos/o/r -f visibility=public", EffectPrivilege, "forge:repos/o/r", "PATCH"},
		{"gh api -X PATCH repos/o/r -f description='new text'", "", "", ""},
		{"gh api orgs/globex", "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			for _, e := range a.Effects {
				hit := e.Kind == EffectDelete && strings.HasPrefix(e.Target, "http:") || e.Kind == EffectPrivilege && strings.HasPrefix(e.Target, "forge:")
				if !hit {
					continue
				}
				if tc.kind == "" {
					t.Fatalf("unexpected effect %+v", e)
				}
				if e.Kind == tc.kind && e.Target == tc.target && strings.Contains(e.Detail, tc.detail) {
					if tc.detail != "bulk" && strings.Contains(e.Detail, "bulk") {
						t.Fatalf("not bulk: %+v", e)
					}
					return
				}
			}
			if tc.kind != "" {
				t.Fatalf("no %s %s (%s) in %+v", tc.kind, tc.target, tc.detail, a.Effects)
			}
			// -XDELETE is not an upload: curl's -X takes the rest of its cluster as its value.
			for _, e := range a.Effects {
				if e.Kind == EffectPush {
					t.Fatalf("unexpected push %+v", e)
				}
			}
		})
	}
}
