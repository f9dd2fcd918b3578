package normalize

import (
	"strconv"
	"strings"
)

// SQL statements judged by what they do, whatever the tool or client carries them: a database
// tool's query argument, psql -c, mysql -e, sqlite3 DB SQL, a here-document on a client's stdin.
//
// A tokenizer with statement classification, not a parser. The maintained Go SQL parsers each
// read one dialect (vitess and the TiDB parser: MySQL; pg_query_go: PostgreSQL, through cgo and
// the PostgreSQL source), reject what another dialect accepts, and weigh megabytes of
// dependencies; a statement a parser rejects would have to be judged as opaque anyway. The
// tokenizer reads every dialect, and where the dialects disagree on what is code (nested /* */
// comments, "--" without a blank, '#' comments, backslash escapes in strings, MySQL's executable
// /*! … */ comments) the text is scanned once per reading and the findings are united: text that
// any dialect runs is judged. An unterminated string or comment hides nothing: the text after
// its opener is scanned as code too.

// sqlFinding is what one statement does that matters: a delete of data, a privilege change, or
// code or files reached on the database server.
type sqlFinding struct {
	kind string // EffectDelete, EffectPrivilege or EffectExec
	what string // "DELETE without WHERE", "GRANT ALL", "COPY … PROGRAM", …
}

// maxSQLScan bounds the text scanned; the rest is not read (the caller's input is already bounded).
const maxSQLScan = 64 << 10

// maxSQLFindings bounds the findings of one text.
const maxSQLFindings = 32

// sqlDialect is one reading of the text.
type sqlDialect struct {
	nestComments bool // PostgreSQL, SQL Server: /* /* */ */ is one comment
	dashNeedsSp  bool // MySQL: "--" starts a comment only before a blank
	hashComment  bool // MySQL: '#' starts a comment
	backslash    bool // MySQL: \' escapes a quote inside '…'
	execComment  bool // MySQL: /*! … */ and /*M! … */ are code
	dollarQuote  bool // PostgreSQL: $tag$ … $tag$ is a string
}

var sqlDialects = []sqlDialect{
	{nestComments: true, dollarQuote: true},                                    // PostgreSQL, standard
	{dashNeedsSp: true, hashComment: true, backslash: true, execComment: true}, // MySQL, MariaDB
	{}, // SQLite, SQL Server without nesting: /* ends at the first */
}

type sqlTokKind int

const (
	sqlWord   sqlTokKind = iota // keyword or bare identifier, upper-cased
	sqlIdent                    // "quoted", `quoted`, [quoted] identifier (text as written)
	sqlString                   // '…', E'…', $$…$$ (text without quotes)
	sqlNumber                   // 12, 1.5, 0x1f
	sqlPunct                    // ( ) , = <> != <= >= . * …
	sqlSemi                     // ;
)

type sqlTok struct {
	kind sqlTokKind
	text string
}

// sqlTokens splits code into tokens under one dialect. Comments are dropped.
func sqlTokens(code string, d sqlDialect) []sqlTok {
	var out []sqlTok
	i, n := 0, len(code)
	for i < n && len(out) < maxSQLScan {
		c := code[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && code[i+1] == '-' && (!d.dashNeedsSp || i+2 >= n || isSQLSpace(code[i+2])):
			i = lineEnd(code, i)
		case c == '#' && d.hashComment:
			i = lineEnd(code, i)
		case c == '/' && i+1 < n && code[i+1] == '*':
			if d.execComment && i+2 < n && (code[i+2] == '!' || (code[i+2] == 'M' && i+3 < n && code[i+3] == '!')) {
				// Executable comment: its body is code (after an optional version number).
				j := i + 3
				if code[i+2] == 'M' {
					j++
				}
				for j < n && code[j] >= '0' && code[j] <= '9' {
					j++
				}
				end := strings.Index(code[j:], "*/")
				body := code[j:]
				next := n
				if end >= 0 {
					body, next = code[j:j+end], j+end+2
				}
				out = append(out, sqlTokens(body, d)...)
				i = next
				continue
			}
			end := blockCommentEnd(code, i, d.nestComments)
			if end < 0 { // unterminated: what follows hides nothing
				i += 2
				continue
			}
			i = end
		case c == '\'' || ((c == 'E' || c == 'e' || c == 'N' || c == 'n' || c == 'X' || c == 'x' || c == 'B' || c == 'b') && i+1 < n && code[i+1] == '\''):
			start := i
			bs := d.backslash
			if c != '\'' {
				bs = bs || c == 'E' || c == 'e'
				i++
			}
			s, end, ok := quoted(code, i, '\'', bs)
			if !ok {
				i = start + 1
				if c != '\'' {
					i = start + 2
				}
				continue
			}
			out = append(out, sqlTok{kind: sqlString, text: s})
			i = end
		case c == '"' || c == '`':
			s, end, ok := quoted(code, i, c, d.backslash && c == '"')
			if !ok {
				i++
				continue
			}
			kind := sqlIdent
			if c == '"' && d.backslash { // MySQL without ANSI_QUOTES: a string
				kind = sqlString
			}
			out = append(out, sqlTok{kind: kind, text: s})
			i = end
		case c == '[' && !d.dollarQuote && !d.backslash: // SQL Server [identifier]
			end := strings.IndexByte(code[i:], ']')
			if end < 0 {
				i++
				continue
			}
			out = append(out, sqlTok{kind: sqlIdent, text: code[i+1 : i+end]})
			i += end + 1
		case c == '$' && d.dollarQuote && dollarTag(code, i) != "":
			tag := dollarTag(code, i)
			end := strings.Index(code[i+len(tag):], tag)
			if end < 0 {
				i += len(tag)
				continue
			}
			out = append(out, sqlTok{kind: sqlString, text: code[i+len(tag) : i+len(tag)+end]})
			i += len(tag) + end + len(tag)
		case c == ';':
			out = append(out, sqlTok{kind: sqlSemi, text: ";"})
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < n && (isSQLWordByte(code[j]) || code[j] == '.') {
				j++
			}
			out = append(out, sqlTok{kind: sqlNumber, text: code[i:j]})
			i = j
		case isSQLWordByte(c) || c >= 0x80:
			j := i
			for j < n && (isSQLWordByte(code[j]) || code[j] == '$' || code[j] >= 0x80) {
				j++
			}
			out = append(out, sqlTok{kind: sqlWord, text: strings.ToUpper(code[i:j])})
			i = j
		default:
			j := i + 1
			if j < n && strings.Contains("=<>!|:", string(code[j])) && strings.Contains("<>!=|:", string(c)) {
				j++
			}
			out = append(out, sqlTok{kind: sqlPunct, text: code[i:j]})
			i = j
		}
	}
	return out
}

func isSQLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isSQLWordByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '@'
}

func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// blockCommentEnd is the index after the comment opened at i, or -1 when it does not end.
func blockCommentEnd(s string, i int, nest bool) int {
	depth := 0
	for j := i; j+1 < len(s); {
		switch {
		case s[j] == '/' && s[j+1] == '*':
			if depth == 0 || nest {
				depth++
			}
			j += 2
		case s[j] == '*' && s[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return -1
}

// quoted reads the literal opened by q at i: its text, the index after it, and whether it ends.
// A doubled quote is a quote; with bs, a backslash escapes the next byte.
func quoted(s string, i int, q byte, bs bool) (string, int, bool) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch {
		case bs && s[j] == '\\' && j+1 < len(s):
			b.WriteByte(s[j+1])
			j++
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			b.WriteByte(q)
			j++
		case s[j] == q:
			return b.String(), j + 1, true
		default:
			b.WriteByte(s[j])
		}
	}
	return "", 0, false
}

// dollarTag is the $tag$ opening a PostgreSQL dollar-quoted string at i, or "".
func dollarTag(s string, i int) string {
	for j := i + 1; j < len(s) && j < i+64; j++ {
		c := s[j]
		if c == '$' {
			return s[i : j+1]
		}
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (j > i+1 && c >= '0' && c <= '9')) {
			return ""
		}
	}
	return ""
}

// sqlFindings classifies every statement of code under every dialect reading and returns the
// union of what they do, in order of first appearance.
func sqlFindings(code string) []sqlFinding {
	var out []sqlFinding
	sqlFindingsInto(code, 0, &out, map[sqlFinding]bool{})
	return out
}

// maxSQLNesting bounds how deep code in strings (a DO block, a function body, EXEC('…')) is read.
const maxSQLNesting = 2

func sqlFindingsInto(code string, depth int, out *[]sqlFinding, seen map[sqlFinding]bool) {
	if len(code) > maxSQLScan {
		code = code[:maxSQLScan]
	}
	add := func(f sqlFinding) {
		if !seen[f] && len(*out) < maxSQLFindings {
			seen[f] = true
			*out = append(*out, f)
		}
	}
	for _, d := range sqlDialects {
		toks := sqlTokens(code, d)
		start := 0
		for k := 0; k <= len(toks); k++ {
			if k < len(toks) && toks[k].kind != sqlSemi {
				continue
			}
			st := toks[start:k]
			start = k + 1
			for _, f := range classifyStatement(st) {
				add(f)
			}
			if !runsStrings(st) {
				continue
			}
			if dynamicExpression(st) {
				add(sqlFinding{kind: EffectExec, what: "dynamic SQL built at run time"})
			}
			if depth < maxSQLNesting {
				for _, body := range stringBodies(st) {
					sqlFindingsInto(body, depth+1, out, seen)
				}
			}
		}
	}
}

// Words that make a statement run code held in its strings: a DO block, a function, procedure,
// trigger or event body, EXEC('…'), EXECUTE IMMEDIATE, sp_executesql, dblink_exec.
var sqlStringRunners = set("DO", "FUNCTION", "PROCEDURE", "TRIGGER", "EVENT", "EXEC", "EXECUTE", "PREPARE",
	"SP_EXECUTESQL", "DBLINK_EXEC", "DBLINK", "IMMEDIATE", "RULE")

func runsStrings(t []sqlTok) bool {
	for _, x := range t {
		if x.kind == sqlWord && sqlStringRunners[x.text] {
			return true
		}
	}
	return false
}

// dynamicExpression: an EXEC/EXECUTE of text built at run time (a variable, a function's result,
// a concatenation with anything but literals), which no scan can read.
func dynamicExpression(t []sqlTok) bool {
	for k, x := range t {
		if x.kind != sqlWord || (x.text != "EXEC" && x.text != "EXECUTE") || k+1 >= len(t) {
			continue
		}
		next := t[k+1]
		switch {
		case next.kind == sqlWord && strings.HasPrefix(next.text, "@"):
			return true // EXEC @sql
		case next.text == "(" || next.text == "IMMEDIATE" || next.text == "SP_EXECUTESQL" || next.text == "FORMAT":
			for j := k + 2; j < len(t); j++ {
				y := t[j]
				if y.kind == sqlSemi {
					break
				}
				if y.kind == sqlIdent || (y.kind == sqlWord && !sqlConstWords[y.text] && y.text != "N") {
					return true
				}
				if y.text == ")" && next.text == "(" {
					break
				}
			}
		}
	}
	return false
}

// stringBodies: the statement's string literals, adjacent ones joined across || and +.
func stringBodies(t []sqlTok) []string {
	var out []string
	var b strings.Builder
	joining := false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, x := range t {
		switch {
		case x.kind == sqlString:
			if !joining {
				flush()
			}
			b.WriteString(x.text)
			joining = false
		case x.text == "||" || x.text == "+":
			joining = b.Len() > 0
		default:
			joining = false
		}
	}
	flush()
	return out
}

// Words after which a DELETE or UPDATE starts a statement (its start, a sub-query or CTE, a
// trigger or rule body).
var sqlStmtLead = set("(", ")", "BEGIN", "THEN", "ELSE", "LOOP", "INSTEAD", "ALSO", "AS", "EXECUTE")

// DROP objects that hold no data and lower no protection (migrations drop and re-create them).
var sqlDropSchemaOnly = set("DEFAULT", "NOT", "IDENTITY", "EXPRESSION", "INDEX", "CONSTRAINT", "FOREIGN",
	"PRIMARY", "KEY", "CHECK", "FUNCTION", "PROCEDURE", "TYPE", "DOMAIN", "RULE", "CAST", "OPERATOR",
	"AGGREGATE", "STATISTICS", "EVENT", "SEQUENCE", "VIEW", "MATERIALIZED", "PREPARE", "UNIQUE", "COLLATION",
	"SYNONYM", "PACKAGE", "COMMENT", "GENERATED", "VALUE", "SPATIAL", "FULLTEXT", "PARTITIONING")

// DROP objects that lower a protection.
var sqlDropProtection = set("TRIGGER", "POLICY", "AUDIT", "SECURITY", "MASKING")

// Functions and procedures that reach files, programs or the network from the database server.
var sqlServerFuncs = set("PG_READ_FILE", "PG_READ_BINARY_FILE", "PG_LS_DIR", "PG_STAT_FILE", "LO_IMPORT",
	"LO_EXPORT", "DBLINK", "DBLINK_EXEC", "DBLINK_CONNECT", "LOAD_FILE", "SYS_EXEC", "SYS_EVAL", "XP_CMDSHELL",
	"XP_DIRTREE", "XP_FILEEXIST", "XP_REGWRITE", "SP_OACREATE", "SP_OAMETHOD", "SP_CONFIGURE", "SP_EXECUTE_EXTERNAL_SCRIPT",
	"OPENROWSET", "OPENDATASOURCE", "OPENQUERY", "LOAD_EXTENSION", "UTL_HTTP", "UTL_FILE", "UTL_TCP", "DBMS_JAVA",
	"DBMS_SCHEDULER", "HTTP_GET", "HTTP_POST", "PG_FILE_WRITE", "PG_LOGDIR_LS", "WRITEFILE", "READFILE", "FILEIO_WRITE")

// Procedures and tables that hold accounts and roles.
var sqlAccountProcs = set("SP_ADDSRVROLEMEMBER", "SP_ADDROLEMEMBER", "SP_ADDLOGIN", "SP_GRANTLOGIN", "SP_PASSWORD")

var sqlAccountTables = set("MYSQL.USER", "MYSQL.DB", "MYSQL.GLOBAL_PRIV", "PG_AUTHID", "PG_SHADOW", "PG_CATALOG.PG_AUTHID",
	"SYS.SQL_LOGINS", "MYSQL.TABLES_PRIV")

// Role attributes that lift a database account above ordinary rights.
var sqlRoleAttrs = set("SUPERUSER", "CREATEROLE", "BYPASSRLS", "REPLICATION", "CREATEDB", "PASSWORD", "IDENTIFIED", "SYSADMIN", "LOGIN")

// Languages whose functions run code on the database server outside SQL.
var sqlUntrustedLangs = set("C", "PLPYTHONU", "PLPYTHON3U", "PLPERLU", "PLTCLU", "PLSH", "PLV8", "JAVA", "INTERNAL")

// Clauses that end a WHERE predicate.
var sqlAfterWhere = set("ORDER", "GROUP", "LIMIT", "RETURNING", "HAVING", "WINDOW", "UNION", "OFFSET", "FETCH",
	"OUTPUT", "INTERSECT", "EXCEPT")

// classifyStatement returns what one statement (tokens without ';') does that matters.
func classifyStatement(t []sqlTok) []sqlFinding {
	var out []sqlFinding
	add := func(kind, what string) { out = append(out, sqlFinding{kind: kind, what: what}) }
	w := func(k int) string {
		if k >= 0 && k < len(t) && (t[k].kind == sqlWord || t[k].kind == sqlPunct) {
			return t[k].text
		}
		return ""
	}
	first := w(0)
	for k := 0; k < len(t); k++ {
		if t[k].kind != sqlWord {
			continue
		}
		word, prev, next := t[k].text, w(k-1), w(k+1)
		lead := k == 0 || sqlStmtLead[prev]
		switch word {
		case "DROP":
			if next == "" || sqlDropSchemaOnly[next] || prev == "ON" {
				continue
			}
			obj := next
			if sqlDropProtection[obj] {
				add(EffectPrivilege, "DROP "+obj)
				continue
			}
			if first == "ALTER" && (obj == "IF" || t[k+1].kind != sqlWord || !sqlDropObjects[obj]) {
				obj = "COLUMN" // ALTER TABLE t DROP c / DROP IF EXISTS c
			}
			if first != "ALTER" && !sqlDropObjects[obj] && !lead {
				continue
			}
			add(EffectDelete, "DROP "+obj)
		case "TRUNCATE":
			if next == "(" || (!lead && first != "TRUNCATE") {
				continue
			}
			add(EffectDelete, "TRUNCATE")
		case "DELETE", "UPDATE":
			if !lead || next == "" || next == "(" || next == "," {
				continue
			}
			if word == "UPDATE" && !hasWordAtDepth(t, k, "SET") {
				continue
			}
			if word == "UPDATE" && isAccountTable(t, k+1) {
				add(EffectPrivilege, "UPDATE of an account table")
			} else if word == "UPDATE" && setsAdminColumn(t, k) { // sqlscan_roles.go
				add(EffectPrivilege, "UPDATE that sets an administrative role or flag")
			}
			switch where := whereAt(t, k); {
			case where < 0:
				add(EffectDelete, word+" without WHERE")
			case tautology(predicate(t, where+1)):
				add(EffectDelete, word+" with an always-true WHERE")
			case selfSubquery(predicate(t, where+1), targetTable(t, k)):
				add(EffectDelete, word+" of every row through a sub-query of the same table")
			}
		case "INSERT", "REPLACE":
			if lead && next == "INTO" && isAccountTable(t, k+2) {
				add(EffectPrivilege, "INSERT into an account table")
			}
		case "GRANT":
			if !lead {
				continue
			}
			on, to := indexWord(t, k, "ON"), indexWord(t, k, "TO")
			switch {
			case next == "ALL":
				add(EffectPrivilege, "GRANT ALL")
			case on < 0 && to > 0:
				add(EffectPrivilege, "GRANT of a role")
			case sqlHasSeq(t, k, "GRANT", "OPTION") || sqlHasSeq(t, k, "ADMIN", "OPTION"):
				add(EffectPrivilege, "GRANT … WITH GRANT OPTION")
			case to > 0 && w(to+1) == "PUBLIC":
				add(EffectPrivilege, "GRANT to PUBLIC")
			}
		case "CREATE", "ALTER":
			if !lead {
				continue
			}
			switch {
			case next == "USER" || next == "ROLE" || next == "LOGIN":
				if word == "CREATE" || anyWord(t[k:], sqlRoleAttrs) {
					add(EffectPrivilege, word+" "+next)
				}
			case next == "SERVER" && w(k+2) == "ROLE":
				add(EffectPrivilege, "ALTER SERVER ROLE")
			case next == "TABLE" && sqlHasSeq(t, k, "DISABLE", "ROW") || sqlHasSeq(t, k, "NO", "FORCE"):
				add(EffectPrivilege, "row level security disabled")
			case next == "TABLE" && sqlHasSeq(t, k, "DISABLE", "TRIGGER"):
				add(EffectPrivilege, "DISABLE TRIGGER")
			case next == "EXTENSION" && w(k+2) != "" && (sqlUntrustedLangs[w(k+2)] || w(k+2) == "ADMINPACK" || w(k+2) == "DBLINK" || w(k+2) == "FILE_FDW"):
				add(EffectExec, "CREATE EXTENSION "+w(k+2))
			case (next == "FUNCTION" || next == "PROCEDURE" || (next == "OR" && w(k+2) == "REPLACE")) && untrustedLanguage(t, k):
				add(EffectExec, "function in an untrusted language")
			}
		case "COPY":
			if !lead {
				continue
			}
			depth := 0 // COPY (SELECT … FROM users) TO PROGRAM: the query's own FROM is not the copy's
			for j := k + 1; j < len(t); j++ {
				if t[j].kind == sqlPunct && t[j].text == "(" {
					depth++
				} else if t[j].kind == sqlPunct && t[j].text == ")" && depth > 0 {
					depth--
				}
				if depth == 0 && t[j].kind == sqlWord && (t[j].text == "TO" || t[j].text == "FROM") {
					switch {
					case w(j+1) == "PROGRAM":
						add(EffectExec, "COPY "+t[j].text+" PROGRAM")
					case j+1 < len(t) && t[j+1].kind == sqlString:
						add(EffectExec, "COPY "+t[j].text+" a server file")
					}
					break
				}
			}
		case "INTO":
			if next == "OUTFILE" || next == "DUMPFILE" {
				add(EffectExec, "INTO "+next)
			}
		case "LOAD":
			if next == "DATA" || next == "XML" {
				if w(k+2) != "LOCAL" && w(k+3) != "LOCAL" {
					add(EffectExec, "LOAD "+next+" INFILE")
				}
			}
		case "BULK":
			if next == "INSERT" {
				add(EffectExec, "BULK INSERT")
			}
		case "ATTACH":
			add(EffectExec, "ATTACH DATABASE")
		case "SET":
			if next == "SESSION_REPLICATION_ROLE" || (next == "SESSION" && w(k+2) == "SESSION_REPLICATION_ROLE") {
				add(EffectPrivilege, "session_replication_role (triggers off)")
			}
			if next == "PASSWORD" {
				add(EffectPrivilege, "SET PASSWORD")
			}
		default:
			if sqlServerFuncs[word] {
				add(EffectExec, strings.ToLower(word))
			} else if sqlAccountProcs[word] {
				add(EffectPrivilege, strings.ToLower(word))
			}
		}
	}
	return out
}

// Objects whose DROP destroys data or accounts.
var sqlDropObjects = set("TABLE", "DATABASE", "SCHEMA", "COLUMN", "PARTITION", "COLLECTION", "KEYSPACE", "OWNED",
	"USER", "ROLE", "TABLESPACE", "LOGIN", "TEMPORARY", "FOREIGN", "IF", "STREAM", "BUCKET", "SNAPSHOT")

func hasWordAtDepth(t []sqlTok, k int, want string) bool {
	depth := 0
	for j := k + 1; j < len(t); j++ {
		switch t[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth < 0 {
				return false
			}
		}
		if depth == 0 && t[j].kind == sqlWord && t[j].text == want {
			return true
		}
	}
	return false
}

// whereAt is the index of the WHERE of the DELETE/UPDATE at k (same parenthesis depth), or -1.
func whereAt(t []sqlTok, k int) int {
	depth := 0
	for j := k + 1; j < len(t); j++ {
		switch t[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth < 0 {
				return -1
			}
		}
		if depth == 0 && t[j].kind == sqlWord && t[j].text == "WHERE" {
			return j
		}
	}
	return -1
}

// predicate is the WHERE expression starting at k, up to the next clause at its depth.
func predicate(t []sqlTok, k int) []sqlTok {
	depth := 0
	for j := k; j < len(t); j++ {
		switch t[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth < 0 {
				return t[k:j]
			}
		}
		if depth == 0 && t[j].kind == sqlWord && sqlAfterWhere[t[j].text] {
			return t[k:j]
		}
	}
	return t[k:]
}

// tautology reports whether a WHERE predicate holds for every row: one of its OR terms (at the
// top level, or inside parentheses that wrap the whole term) is a constant that is not plainly
// false, an expression compared with itself, or a LIKE '%'.
func tautology(p []sqlTok) bool {
	if len(p) == 0 {
		return true
	}
	depth, start := 0, 0
	for j := 0; j <= len(p); j++ {
		if j < len(p) {
			switch p[j].text {
			case "(":
				depth++
				continue
			case ")":
				depth--
				continue
			}
			if depth != 0 || p[j].kind != sqlWord || p[j].text != "OR" {
				continue
			}
		}
		if termAlwaysTrue(p[start:j]) {
			return true
		}
		start = j + 1
	}
	return false
}

func termAlwaysTrue(term []sqlTok) bool {
	for len(term) >= 2 && term[0].text == "(" && term[len(term)-1].text == ")" && balanced(term[1:len(term)-1]) {
		term = term[1 : len(term)-1]
		if tautology(term) {
			return true
		}
	}
	if len(term) == 0 {
		return false
	}
	constant := true
	for _, x := range term {
		if x.kind == sqlIdent || (x.kind == sqlWord && !sqlConstWords[x.text]) {
			constant = false
			break
		}
	}
	if constant {
		return !plainlyFalse(term)
	}
	// X = X, X LIKE '%', X IS NULL OR … are judged on the two sides of one operator.
	for j, x := range term {
		if x.kind == sqlPunct && (x.text == "=" || x.text == ">=" || x.text == "<=") || (x.kind == sqlWord && x.text == "LIKE") {
			l, r := term[:j], term[j+1:]
			if x.text == "LIKE" && len(r) == 1 && r[0].kind == sqlString && strings.Trim(r[0].text, "%") == "" {
				return true
			}
			if sameTokens(l, r) {
				return true
			}
		}
	}
	return false
}

var sqlConstWords = set("TRUE", "FALSE", "NULL", "NOT", "IS", "AND", "LIKE", "IN", "BETWEEN")

func balanced(t []sqlTok) bool {
	depth := 0
	for _, x := range t {
		switch x.text {
		case "(":
			depth++
		case ")":
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// plainlyFalse: a constant term that no row satisfies (FALSE, 0, 1=0, 'a'='b', NOT TRUE).
func plainlyFalse(t []sqlTok) bool {
	if len(t) == 1 {
		return t[0].text == "FALSE" || t[0].text == "NULL" || (t[0].kind == sqlNumber && isZeroNumber(t[0].text))
	}
	if len(t) == 2 && t[0].text == "NOT" {
		return t[1].text == "TRUE" || (t[1].kind == sqlNumber && !isZeroNumber(t[1].text))
	}
	if len(t) == 3 && t[1].kind == sqlPunct && t[0].kind == t[2].kind {
		eq := t[0].text == t[2].text
		if t[0].kind == sqlNumber {
			a, err1 := strconv.ParseFloat(t[0].text, 64)
			b, err2 := strconv.ParseFloat(t[2].text, 64)
			if err1 == nil && err2 == nil {
				eq = a == b
			}
		}
		switch t[1].text {
		case "=":
			return !eq
		case "<>", "!=":
			return eq
		}
	}
	return false
}

func isZeroNumber(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 0
}

func sameTokens(a, b []sqlTok) bool {
	if len(a) == 0 || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func indexWord(t []sqlTok, k int, want string) int {
	for j := k + 1; j < len(t); j++ {
		if t[j].kind == sqlWord && t[j].text == want {
			return j
		}
	}
	return -1
}

func sqlHasSeq(t []sqlTok, k int, a, b string) bool {
	for j := k + 1; j+1 < len(t); j++ {
		if t[j].kind == sqlWord && t[j].text == a && t[j+1].kind == sqlWord && t[j+1].text == b {
			return true
		}
	}
	return false
}

func anyWord(t []sqlTok, words map[string]bool) bool {
	for _, x := range t {
		if x.kind == sqlWord && words[x.text] {
			return true
		}
	}
	return false
}

// isAccountTable: the (possibly qualified) table named at k holds accounts (mysql.user, pg_authid).
func isAccountTable(t []sqlTok, k int) bool {
	var b strings.Builder
	for j := k; j < len(t) && j < k+5; j += 2 {
		if t[j].kind != sqlWord && t[j].kind != sqlIdent {
			break
		}
		b.WriteString(strings.ToUpper(t[j].text))
		if j+1 >= len(t) || t[j+1].text != "." {
			break
		}
		b.WriteByte('.')
	}
	name := b.String()
	if sqlAccountTables[name] {
		return true
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return sqlAccountTables[name[i+1:]] && strings.HasPrefix(name[i+1:], "PG_")
	}
	return false
}

func untrustedLanguage(t []sqlTok, k int) bool {
	for j := k + 1; j+1 < len(t); j++ {
		if t[j].kind == sqlWord && t[j].text == "LANGUAGE" {
			l := strings.ToUpper(t[j+1].text)
			return sqlUntrustedLangs[l]
		}
	}
	return false
}

// targetTable is the (upper-cased, possibly qualified) table a DELETE or UPDATE at k changes.
func targetTable(t []sqlTok, k int) string {
	j := k + 1
	if t[k].text == "DELETE" {
		for j < len(t) && j < k+6 && !(t[j].kind == sqlWord && t[j].text == "FROM") {
			j++
		}
		j++
	}
	for j < len(t) && t[j].kind == sqlWord && (t[j].text == "ONLY" || t[j].text == "LOW_PRIORITY" || t[j].text == "IGNORE" || t[j].text == "QUICK") {
		j++
	}
	var b strings.Builder
	for ; j < len(t) && (t[j].kind == sqlWord || t[j].kind == sqlIdent); j += 2 {
		b.WriteString(strings.ToUpper(t[j].text))
		if j+1 >= len(t) || t[j+1].text != "." {
			break
		}
		b.WriteByte('.')
	}
	return b.String()
}

// selfSubquery: a predicate "X IN (SELECT … FROM <table> …)" over the table being changed, with no
// WHERE of its own in the sub-query: every row matches.
func selfSubquery(p []sqlTok, table string) bool {
	if table == "" {
		return false
	}
	for j := 0; j+2 < len(p); j++ {
		if !(p[j].kind == sqlWord && p[j].text == "IN" && p[j+1].text == "(" && p[j+2].kind == sqlWord && p[j+2].text == "SELECT") {
			continue
		}
		depth, from, where := 0, "", false
		for i := j + 1; i < len(p); i++ {
			switch p[i].text {
			case "(":
				depth++
			case ")":
				depth--
			}
			if depth == 0 {
				break
			}
			if depth == 1 && p[i].kind == sqlWord && p[i].text == "FROM" && from == "" {
				from = targetTable(append([]sqlTok{{kind: sqlWord, text: "UPDATE"}}, p[i+1:]...), 0)
			}
			if depth == 1 && p[i].kind == sqlWord && (p[i].text == "WHERE" || p[i].text == "LIMIT" || p[i].text == "JOIN") {
				where = true
			}
		}
		if from == table && !where {
			return true
		}
	}
	return false
}
