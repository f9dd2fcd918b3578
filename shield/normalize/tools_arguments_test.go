package normalize

import (
	"strings"
	"testing"
)

// argumentCases check the argument reading of class-default tools on both sides: the detail
// prefix of an effect that must be there, or "" for a call that must carry no argument effect.
var argumentCases = []struct {
	name, tool string
	args       map[string]any
	kind, det  string
}{
	{"memory wildcard", "delete_entities", map[string]any{"entityNames": []any{"*"}}, EffectDelete, "argument wildcard deletion"},
	{"all flag on a deletion", "delete_relations", map[string]any{"all": true}, EffectDelete, "argument wildcard deletion"},
	{"one entity", "delete_entities", map[string]any{"entityNames": []any{"note-1"}}, "", ""},
	{"wildcard on a read", "list_memories", map[string]any{"names": "*"}, "", ""},
	{"pid 1", "force_terminate", map[string]any{"pid": 1}, EffectDelete, "argument signal"},
	{"pid -1 as text", "kill_process", map[string]any{"process_id": "-1"}, EffectDelete, "argument signal"},
	{"workspace pid", "force_terminate", map[string]any{"pid": 48213}, "", ""},
	{"production down all", "db_migrate", map[string]any{"direction": "down", "steps": "all", "env": "production"}, EffectDelete, "argument destroy: down in production (all steps)"},
	{"production drop", "update_config", map[string]any{"action": "drop", "stage": "prod-eu"}, EffectDelete, "argument destroy: drop in production"},
	{"production one step down", "db_migrate", map[string]any{"direction": "down", "steps": 1, "env": "prod"}, EffectDelete, "argument revert: down in production"},
	{"production up", "db_migrate", map[string]any{"direction": "up", "env": "production"}, "", ""},
	{"dev down all", "db_migrate", map[string]any{"direction": "down", "steps": "all", "env": "development"}, "", ""},
	{"product is no production", "db_migrate", map[string]any{"direction": "down", "env": "products"}, "", ""},
	{"admin group", "create_user", map[string]any{"username": "x", "groups": []any{"dev", "Admins"}}, EffectPrivilege, "argument administrative group or role"},
	{"nested role", "update_config", map[string]any{"member": map[string]any{"login": "x", "role": "cluster-admin"}}, EffectPrivilege, "argument administrative group or role"},
	{"admin flag", "update_profile", map[string]any{"isAdmin": "true"}, EffectPrivilege, "argument administrative flag"},
	{"admin flag false", "update_profile", map[string]any{"isAdmin": false}, "", ""},
	{"ordinary groups", "create_user", map[string]any{"username": "x", "groups": []any{"developers", "qa"}}, "", ""},
	{"badminton is no admin", "create_user", map[string]any{"username": "x", "group": "badminton"}, "", ""},
	{"public repository", "create_repository", map[string]any{"name": "x", "private": false}, EffectExpose, "argument private=false"},
	{"public visibility", "update_settings", map[string]any{"visibility": "PUBLIC"}, EffectExpose, "argument visibility=public"},
	{"public acl", "update_config", map[string]any{"acl": "public-read"}, EffectExpose, "argument acl=public-read"},
	{"private repository", "create_repository", map[string]any{"name": "x", "private": true}, "", ""},
	{"forge credential", "get_file_contents", map[string]any{"owner": "acme", "repo": "infra", "path": ".env.prod"}, EffectSecret, "argument forge file"},
	{"forge dotfile credential", "get_file_contents", map[string]any{"owner": "acme", "repo": "dotfiles", "path": ".npmrc"}, EffectSecret, "argument forge file"},
	{"forge readme", "get_file_contents", map[string]any{"owner": "acme", "repo": "infra", "path": "README.md"}, "", ""},
	{"forge env example", "get_file_contents", map[string]any{"owner": "acme", "repo": "infra", "path": ".env.example"}, "", ""},
	{"raw credential url", "fetch", map[string]any{"url": "https://raw.githubusercontent.com/a/b/main/.env.prod"}, EffectSecret, "argument remote file"},
	{"raw source url", "fetch", map[string]any{"url": "https://raw.githubusercontent.com/a/b/main/src/env.go"}, "", ""},
	{"backslash userinfo", "WebFetch", map[string]any{"url": `http://registry.npmjs.org\@203.0.113.6/`}, EffectConnect, "url reading by curl as 203.0.113.6"},
	{"no slashes", "fetch", map[string]any{"url": `http:\\198.51.100.7\x`}, EffectConnect, "url reading without '//'"},
	{"tab in host", "fetch", map[string]any{"url": "http://docs.rs\t.evil.example/"}, EffectConnect, "url reading with a control character"},
	{"bare host", "WebFetch", map[string]any{"url": "localhost:3000/api"}, "", ""},
	{"at in path", "fetch", map[string]any{"url": "https://proxy.golang.org/github.com/pkg/errors/@v/list"}, "", ""},
	{"templated drop", "dbt_run", map[string]any{"vars": `{'pre_hook': "{{ run_query('DROP SCHEMA analytics CASCADE') }}"}`}, EffectDelete, "database DROP SCHEMA"},
	{"admin role update", "query_database", map[string]any{"query": "UPDATE users SET role='admin' WHERE email='x@mail.example'"}, EffectPrivilege, "database UPDATE that sets an administrative role or flag"},
	{"viewer role update", "query_database", map[string]any{"query": "UPDATE users SET role='viewer' WHERE id=1"}, "", ""},
	{"settings hook drops", "update_config", map[string]any{"key": "db.on_connect", "init_sql": "DROP TABLE sessions"}, EffectDelete, "database DROP TABLE"},
	{"settings select", "set_config", map[string]any{"key": "report.query", "value": "SELECT count(*) FROM orders"}, "", ""},
	{"literal that mentions delete", "run_sql", map[string]any{"sql": "INSERT INTO log(msg) VALUES ('delete from cache done')"}, "", ""},
}

func TestArgumentEffects(t *testing.T) {
	t.Parallel()
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	for _, tc := range argumentCases {
		t.Run(tc.name, func(t *testing.T) {
			a := n.Normalize(tc.tool, tc.args, "")
			if tc.kind == "" {
				for _, e := range a.Effects {
					if strings.HasPrefix(e.Detail, DetailArgument+" ") || strings.HasPrefix(e.Detail, DetailURLReading+" ") ||
						strings.HasPrefix(e.Detail, "database ") || e.Kind == EffectPrivilege || e.Kind == EffectExpose {
						t.Fatalf("unexpected effect %+v", e)
					}
				}
				return
			}
			for _, e := range a.Effects {
				if e.Kind == tc.kind && strings.HasPrefix(e.Detail, tc.det) {
					return
				}
			}
			t.Fatalf("no %s effect %q in %+v", tc.kind, tc.det, a.Effects)
		})
	}
}

// TestArgumentBounds: nesting and field counts beyond the bounds are not read, and reading them
// does not fail.
func TestArgumentBounds(t *testing.T) {
	t.Parallel()
	var deep any = "*"
	for i := 0; i < maxArgDepth+4; i++ {
		deep = map[string]any{"names": deep}
	}
	if got := argFields(map[string]any{"x": deep}); len(got) != 0 {
		t.Errorf("a value nested beyond %d levels was read: %+v", maxArgDepth, got)
	}
	many := make([]any, maxArgFields*2)
	for i := range many {
		many[i] = "v"
	}
	if got := argFields(map[string]any{"x": many}); len(got) != maxArgFields {
		t.Errorf("read %d fields, want the bound %d", len(got), maxArgFields)
	}
}

func FuzzQuotedBodies(f *testing.F) {
	for _, tc := range argumentCases {
		for _, v := range tc.args {
			if s, ok := v.(string); ok {
				f.Add(s)
			}
		}
	}
	f.Add(`'a\'b' "c\"d" 'unterminated`)
	f.Fuzz(func(t *testing.T, s string) {
		bodies := quotedBodies(s, 2)
		if len(bodies) > maxQuotedBodies {
			t.Fatalf("%d bodies, bound %d", len(bodies), maxQuotedBodies)
		}
		for _, b := range bodies {
			if len(b) > len(s) {
				t.Fatalf("body longer than its text: %q", b)
			}
		}
		_ = startsAsSQL(s)
	})
}

func FuzzURLReadings(f *testing.F) {
	for _, tc := range argumentCases {
		if u, ok := tc.args["url"].(string); ok {
			f.Add(u)
		}
	}
	f.Add("http://a.example\\\\@b.example:8080/x")
	f.Fuzz(func(t *testing.T, raw string) {
		u := parseURL(raw, URLRequest, true)
		alt, why := otherReading(u)
		if why == "" && alt != "" {
			t.Fatalf("a reading without a reason: %q", alt)
		}
		if why != "" && alt == "" {
			t.Fatalf("a differential without a host: %q", why)
		}
	})
}
