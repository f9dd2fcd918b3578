package normalize

import "strings"

// An application's own accounts: UPDATE users SET role = 'admin' (or is_admin = TRUE,
// is_superuser = 1) raises an account to administrator whatever the table is called. The column
// names are the field-name class of tools_arguments.go (argGroupKeys, argAdminFlagKeys) and the
// value the administrative value class (argAdminRE); a role set to anything else is ordinary.

// setsAdminColumn reports whether the UPDATE at t[k] assigns an administrative value to a role
// column or true to an administrative flag column, in its SET list.
func setsAdminColumn(t []sqlTok, k int) bool {
	set := indexWord(t, k, "SET")
	if set < 0 {
		return false
	}
	for j := set + 1; j+2 < len(t); j++ {
		if t[j].kind == sqlWord && t[j].text == "WHERE" {
			return false
		}
		if t[j].kind != sqlWord && t[j].kind != sqlIdent || t[j+1].text != "=" {
			continue
		}
		col := foldKey(t[j].text)
		if i := strings.LastIndexByte(col, '.'); i >= 0 {
			col = col[i+1:]
		}
		v := t[j+2]
		switch {
		case argGroupKeys[col] && v.kind == sqlString && argAdminRE.MatchString(strings.TrimSpace(v.text)):
			return true
		case argAdminFlagKeys[col] && (v.kind == sqlWord && v.text == "TRUE" || v.kind == sqlNumber && v.text == "1" ||
			v.kind == sqlString && argTrue(v.text)):
			return true
		}
	}
	return false
}

// maxQuotedBodies bounds the quoted strings read out of one argument.
const maxQuotedBodies = 32

// quotedBodies returns the bodies of the single- and double-quoted strings in text, and those
// nested in them up to depth levels, bounded by maxQuotedBodies. A backslash escapes the next
// byte. Bodies shorter than 6 bytes hold no statement and are skipped.
func quotedBodies(text string, depth int) []string {
	if len(text) > maxSQLScan {
		text = text[:maxSQLScan]
	}
	var out []string
	var scan func(s string, d int)
	scan = func(s string, d int) {
		for i := 0; i < len(s) && len(out) < maxQuotedBodies; i++ {
			q := s[i]
			if q != '\'' && q != '"' {
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != q {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return
			}
			body := s[i+1 : j]
			if len(strings.TrimSpace(body)) >= 6 {
				out = append(out, body)
				if d > 1 {
					scan(body, d-1)
				}
			}
			i = j
		}
	}
	scan(text, depth)
	return out
}

// sqlStarters are the first words of SQL statements.
var sqlStarters = set("SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "CREATE", "ALTER", "DROP", "TRUNCATE", "GRANT",
	"REVOKE", "MERGE", "REPLACE", "UPSERT", "COPY", "EXPLAIN", "SHOW", "DESCRIBE", "CALL", "EXEC", "EXECUTE", "DO",
	"BEGIN", "SET", "VALUES", "TABLE", "PRAGMA", "ANALYZE", "VACUUM", "USE", "DECLARE", "COMMENT")

// startsAsSQL reports whether text is a SQL statement (its first word starts one).
func startsAsSQL(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n(")
	end := 0
	for end < len(text) && end < 16 && isSQLWordByte(text[end]) {
		end++
	}
	return sqlStarters[strings.ToUpper(text[:end])]
}
