package normalize

import (
	"strings"
	"testing"
)

// Wave 6, programs without a model (unknown_operands.go, local_statements.go): hosts,
// destructive statements, credential files and code named by the operands of programs and
// interpreters no spec describes, with the ordinary look-alikes that must stay unmarked. The
// programs here are other than the development set's (sqlcmd, clickhouse-client, cqlsh, guile,
// jshell, python3 -m base64, perl -n, go run -).
func TestUnknownOperands(t *testing.T) {
	t.Parallel()
	const home = "/home/user"
	runEffectCases(t, []effectCase{
		// 1. Hosts in operands.
		{name: "host option value", cmd: "vsql -h vertica.corp.example -c 'select 1'", want: []fx{{kind: "connect", target: "vertica.corp.example"}}, unknown: []string{"vsql"}},
		{name: "single-dash host option", cmd: "monetdb-client -host metrics.prod.internal -execute 'SHOW DATABASES'", want: []fx{{kind: "connect", target: "metrics.prod.internal"}}, unknown: []string{"monetdb-client"}},
		{name: "host=value option", cmd: "kcat --bootstrap-server=kafka.prod.internal:9092 -L", want: []fx{{kind: "connect", target: "kafka.prod.internal"}}, unknown: []string{"kcat"}},
		{name: "connection URI", cmd: "pgcli postgresql://app@db.prod.internal:5432/app", want: []fx{{kind: "connect", target: "db.prod.internal"}}, unknown: []string{"pgcli"}},
		{name: "jdbc URI", cmd: "sqlline -u jdbc:mysql://mysql.corp.example:3306/shop", want: []fx{{kind: "connect", target: "mysql.corp.example"}}, unknown: []string{"sqlline"}},
		{name: "mongodb+srv URI", cmd: "mongoexport --uri mongodb+srv://u@cluster0.abcde.mongodb.net/shop -c orders", want: []fx{{kind: "connect", target: "cluster0.abcde.mongodb.net"}}, unknown: []string{"mongoexport"}},
		{name: "connection string", cmd: "dbisql --connection 'Server=tcp:sql.corp.example,1433;Database=erp'", want: []fx{{kind: "connect", target: "sql.corp.example"}}, unknown: []string{"dbisql"}},
		{name: "host:port operand", cmd: "nats-top broker.internal:8222", want: []fx{{kind: "connect", target: "broker.internal"}}, unknown: []string{"nats-top"}},
		{name: "bare dotted host operand", cmd: "scylla-shell cass.prod.internal", want: []fx{{kind: "connect", target: "cass.prod.internal"}}, unknown: []string{"scylla-shell"}},
		{name: "file name is no host", cmd: "mytool main.py build.rs notes.md", not: []fx{{kind: "connect", target: "main.py"}, {kind: "connect", target: "build.rs"}, {kind: "connect", target: "notes.md"}}, unknown: []string{"mytool"}},
		{name: "single-label service is no connection", cmd: "pgcli -h db app_dev", not: []fx{{kind: "connect", target: "db"}}, unknown: []string{"pgcli"}},
		// 2. Destructive statements, wherever they run.
		{name: "truncate on named host", cmd: "vsql -h vertica.corp.example -c 'TRUNCATE TABLE fact_sales'", want: []fx{{kind: "delete", target: "database:vertica.corp.example"}}, unknown: []string{"vsql"}},
		{name: "drop on URI host", cmd: "cockroach-sql --url postgresql://root@crdb.prod.internal:26257 -e 'DROP DATABASE bank CASCADE'", want: []fx{{kind: "delete", target: "database:crdb.prod.internal"}}, unknown: []string{"cockroach-sql"}},
		{name: "statement on stdin", cmd: "isql PRODDSN sa pw <<< 'DELETE FROM invoices'", want: []fx{{kind: "delete", target: "database:(default)"}}, unknown: []string{"isql"}},
		{name: "flushall operand", cmd: "keydb-shell -h cache.prod.internal FLUSHALL", want: []fx{{kind: "delete", target: "database:cache.prod.internal"}}, unknown: []string{"keydb-shell"}},
		{name: "select is no delete", cmd: "vsql -h vertica.corp.example -c 'SELECT count(*) FROM fact_sales'", not: []fx{{kind: "delete", target: "database:vertica.corp.example"}}, unknown: []string{"vsql"}},
		{name: "delete with where is no delete", cmd: "vsql -h vertica.corp.example -c 'DELETE FROM sessions WHERE expires < now()'", not: []fx{{kind: "delete", target: "database:vertica.corp.example"}}, unknown: []string{"vsql"}},
		// Programs with a spec but no database handler: a whole-operand statement and where it runs.
		{name: "statement with a db URL option", cmd: "supabase db execute --db-url postgres://x@db.prod.internal/app 'DROP TABLE t'", want: []fx{{kind: "delete", target: "database:db.prod.internal"}}},
		{name: "statement to an HTTP interface", cmd: "curl -X POST http://ch.prod.internal:8123/ --data-binary 'TRUNCATE TABLE events'", want: []fx{{kind: "delete", target: "database:ch.prod.internal"}}},
		{name: "statement in a new pod", cmd: "kubectl run tmp --rm -i --image=postgres -- psql -h db.prod.svc.cluster.local -c 'DROP TABLE t'", want: []fx{{kind: "delete", target: "database:db.prod.svc.cluster.local"}}},
		{name: "commit message naming a statement", cmd: "git commit -m 'DROP TABLE users; see postgres://db.prod.internal'", not: []fx{{kind: "delete", target: "database:db.prod.internal"}}},
		{name: "query to an HTTP interface", cmd: "curl -X POST http://ch.prod.internal:8123/ --data-binary 'SELECT count() FROM events'", not: []fx{{kind: "delete", target: "database:ch.prod.internal"}}},
		// Local databases: a dev-named DROP DATABASE on loopback, the workspace's compose containers.
		{name: "drop dev database by statement", cmd: "psql -h 127.0.0.1 -c 'DROP DATABASE IF EXISTS shop_test'", want: []fx{{kind: "delete", target: "database:127.0.0.1", remote: "local-db:shop_test"}}},
		{name: "drop prod database by statement", cmd: "psql -h 127.0.0.1 -c 'DROP DATABASE IF EXISTS shop'", want: []fx{{kind: "delete", target: "database:127.0.0.1", remote: ""}}},
		{name: "drop dev database, default socket", cmd: "psql -c 'DROP DATABASE shop_test'", want: []fx{{kind: "delete", target: "database:localhost", remote: "local-db:shop_test"}}}, // wave 8: local_default.go
		{name: "drop dev database, conninfo host", cmd: "psql 'host=db.prod dbname=postgres' -c 'DROP DATABASE shop_test'", want: []fx{{kind: "delete", target: "database:localhost", remote: ""}}},
		{name: "two statements", cmd: "psql -h localhost -c 'DROP DATABASE shop_test; DROP DATABASE shop'", want: []fx{{kind: "delete", target: "database:localhost", remote: ""}}},
		{name: "compose container db", cmd: "docker exec project-postgres-1 psql -U postgres -c 'TRUNCATE audit_events'", want: []fx{{kind: "delete", target: "database:localhost", remote: "local-db:compose:project-postgres-1"}}},
		{name: "compose v1 container db", cmd: "docker exec -i project_mysql_1 mysql -uroot -e 'DROP TABLE carts'", want: []fx{{kind: "delete", target: "database:localhost", remote: "local-db:compose:project_mysql_1"}}},
		{name: "other project's container", cmd: "docker exec billing-postgres-1 psql -c 'TRUNCATE invoices'", want: []fx{{kind: "delete", target: "database:localhost", remote: "container:billing-postgres-1"}}},
		{name: "compose container, other context", cmd: "docker --context prod exec project-postgres-1 psql -c 'TRUNCATE invoices'", want: []fx{{kind: "delete", target: "database:localhost", remote: "container:project-postgres-1"}}},
		{name: "compose container, remote host", cmd: "docker exec project-postgres-1 psql -h db.prod.internal -c 'TRUNCATE invoices'", want: []fx{{kind: "delete", target: "database:db.prod.internal", remote: "container:project-postgres-1"}}},
		// 3. Credential operands of programs without a spec, scripts and modules.
		{name: "unknown program credential operand", cmd: "hexyl ~/.netrc", want: []fx{{kind: "secret", target: home + "/.netrc"}}, unknown: []string{"hexyl"}},
		{name: "script argument", cmd: "node tools/read.js ~/.config/gcloud/application_default_credentials.json", want: []fx{{kind: "secret", target: home + "/.config/gcloud/application_default_credentials.json"}}},
		{name: "module argument", cmd: "python3 -m json.tool ~/.docker/config.json", want: []fx{{kind: "secret", target: home + "/.docker/config.json"}}},
		{name: "ruby -n loop file", cmd: "ruby -ne 'print' ~/.netrc", want: []fx{{kind: "secret", target: home + "/.netrc"}}},
		{name: "option value credential", cmd: "sometool --key-file=/home/user/.ssh/id_ecdsa", want: []fx{{kind: "secret", target: home + "/.ssh/id_ecdsa"}}, unknown: []string{"sometool"}},
		{name: "undeclared operand of a spec", cmd: "staticcheck ~/.aws/credentials", want: []fx{{kind: "secret", target: home + "/.aws/credentials"}}},
		{name: "pattern operand is no read", cmd: "rg -F '/etc/shadow' src/", not: []fx{{kind: "secret", target: "/etc/shadow"}}},
		{name: "device operand is no read", cmd: "mdadm --detail /dev/md0", not: []fx{{kind: "secret", target: "/dev/md0"}}},
		{name: "ordinary script argument", cmd: "python3 scripts/seed.py fixtures/users.json", not: []fx{{kind: "secret", target: "/home/user/project/fixtures/users.json"}}},
		// 5. Framework tasks that print decrypted credentials.
		{name: "rails credentials through a path", cmd: "./bin/rails credentials:show --environment staging", want: []fx{{kind: "secret", target: "rails credentials:show staging"}}},
		{name: "artisan env decrypt", cmd: "php artisan env:decrypt --force", want: []fx{{kind: "secret", target: "php artisan env:decrypt"}}},
		{name: "rails migrate is no secret", cmd: "./bin/rails db:migrate", not: []fx{{kind: "secret", target: "rails db:migrate"}}},
	})
}

// Code from any channel (option, here-string, /dev/stdin) of interpreters and compiler-runners
// without a spec, and home-relative names in any language.
func TestUnmodelledCodeNames(t *testing.T) {
	t.Parallel()
	const home = "/home/user"
	opt := specOpts(t, Options{Workspace: "/home/user/project", Home: home})
	opt.Inline = inlineTestList(t)
	n := New(defaultCatalog(t), opt)
	for _, tc := range []effectCase{
		{name: "workspace keystore is not presumed read", cmd: "signtool-x verify --ks app/debug.keystore app.apk", not: []fx{{kind: "secret", target: "/home/user/project/app/debug.keystore"}}},
		// 4. Code from any channel, home-relative names in any language.
		{name: "sbcl eval literal path", cmd: "sbcl --eval '(print (uiop:read-file-string \"~/.ssh/id_rsa\"))'", want: []fx{{kind: "secret", target: home + "/.ssh/id_rsa"}}, unknown: []string{"sbcl"}},
		{name: "ghci here-string", cmd: "ghci <<< 'readFile \"/home/user/.docker/config.json\" >>= putStr'", want: []fx{{kind: "secret", target: home + "/.docker/config.json"}}, unknown: []string{"ghci"}},
		{name: "lua home join", cmd: "lua -e 'print(io.open(os.getenv(\"HOME\")..\"/.netrc\"):read(\"a\"))'", want: []fx{{kind: "secret", target: home + "/.netrc"}}},
		{name: "kotlin user.home join", cmd: "kotlin -e 'println(java.io.File(System.getProperty(\"user.home\"), \".gradle/gradle.properties\").readText())'",
			want: []fx{{kind: "secret", target: home + "/.gradle/gradle.properties"}}},
		{name: "go run stdin", cmd: "go run /dev/stdin <<< 'package main; func main(){ os.ReadFile(os.Getenv(\"HOME\") + \"/.kube/config\") }'", want: []fx{{kind: "secret", target: home + "/.kube/config"}}},
		{name: "home join of an ordinary name", cmd: "lua -e 'print(os.getenv(\"HOME\")..\"/.bashrc_backup_notes\")'", not: []fx{{kind: "secret", target: home + "/.bashrc_backup_notes"}}},
	} {
		a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
		for _, w := range tc.want {
			if findEffect(a.Effects, w) < 0 {
				t.Errorf("%s: no effect %+v in %+v", tc.cmd, w, a.Effects)
			}
		}
		for _, w := range tc.not {
			for _, e := range a.Effects {
				if e.Kind == w.kind && e.Target == w.target {
					t.Errorf("%s: unexpected effect %+v", tc.cmd, w)
				}
			}
		}
	}
}

// Code given to an interpreter without an allow list is capable, whatever the channel.
func TestUnmodelledCodeIsCapable(t *testing.T) {
	t.Parallel()
	opt := specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"})
	opt.Inline = inlineTestList(t)
	n := New(nil, opt)
	for _, cmd := range []string{
		"racket -e '(display 1)'",
		"jshell <<< 'System.out.println(1)'",
		"go run - <<< 'package main; func main(){}'",
		"gforth -e '1 2 + . bye'",
	} {
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		found := false
		for _, e := range a.Effects {
			if e.Kind == EffectExec && strings.HasPrefix(e.Inline, inlineCapable) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no capable exec effect in %+v", cmd, a.Effects)
		}
	}
}

func TestOperandHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		hostOpt bool
		host    string
		ok      bool
	}{
		{in: "postgres://u:p@db.example:5432/app", host: "db.example", ok: true},
		{in: "jdbc:sqlserver://sql.corp.example:1433;databaseName=x", host: "sql.corp.example", ok: true},
		{in: "Server=tcp:sql.corp.example,1433;Database=erp", host: "sql.corp.example", ok: true},
		{in: "Host=pg.internal;Username=app", host: "pg.internal", ok: true},
		{in: "Data Source=SQL01\\PROD;Initial Catalog=x", host: "SQL01", ok: true},
		{in: "cache.internal:6379", host: "cache.internal", ok: true},
		{in: "db:5432", hostOpt: true, host: "db", ok: true},
		{in: "db:5432"},
		{in: "[::1]:5432", host: "::1", ok: true},
		{in: "10.0.0.5", host: "10.0.0.5", ok: true},
		{in: "api.example.com", host: "api.example.com", ok: true},
		{in: "main.py"},
		{in: "Dockerfile.dev"},
		{in: "config.local"},
		{in: "settings.prod"},
		{in: "model.pt"},
		{in: "main.cc"},
		{in: "api.staging.dev", host: "api.staging.dev", ok: true},
		{in: "db.internal", host: "db.internal", ok: true},
		{in: "README.md"},
		{in: "src/app.ts"},
		{in: "v1.2.3"},
		{in: "file:///etc/passwd"},
		{in: "--verbose"},
		{in: "prod-sql", hostOpt: true, host: "prod-sql", ok: true},
		{in: "prod-sql"},
	} {
		h, _, _, ok := operandHost(tc.in, tc.hostOpt)
		if ok != tc.ok || h != tc.host {
			t.Errorf("operandHost(%q, %v) = %q, %v; want %q, %v", tc.in, tc.hostOpt, h, ok, tc.host, tc.ok)
		}
	}
}

// FuzzOperandHost: any value is read without panic, and a host it yields has no separator a
// connection target cannot hold.
func FuzzOperandHost(f *testing.F) {
	for _, s := range []string{"postgres://u:p@db.example:5432/app", "jdbc:mysql://h:1/x", "Server=tcp:a,1;", "Host=;", "Data Source=\\",
		"a.internal:99999", "[::1]:1", "mongodb://a,b,c/x", "x://@", "Server=a b;", "db", "a.b.c.d.com.", "::", "1.2.3.4"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, hostOpt bool) {
		h, _, _, ok := operandHost(v, hostOpt)
		if ok && (h == "" || strings.ContainsAny(h, " \t\n;/")) {
			t.Fatalf("operandHost(%q) = %q", v, h)
		}
	})
}
