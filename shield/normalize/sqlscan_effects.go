package normalize

// sqlEffects are the effects of SQL text run against target ("database:…"): a delete of data
// (database-destroy), a privilege change (an account, a role attribute, a protection lowered)
// or code and files reached on the database server (COPY … PROGRAM, pg_read_file, INTO
// OUTFILE, xp_cmdshell). Detail starts with "database " for every kind.
func sqlEffects(code, target string, inWS bool) []Effect {
	var out []Effect
	for _, f := range sqlFindings(code) {
		e := Effect{Kind: f.kind, Target: target, Detail: "database " + f.what, InWorkspace: inWS}
		if f.kind == EffectExec {
			e.Remote = target // runs on the database server, not here
		}
		out = append(out, e)
	}
	return out
}

// databaseToolEffects judges the SQL a database tool is given: every string argument is read as
// SQL (the catalog's body keys and any other), against the database the tool names.
func (s *state) databaseToolEffects() {
	a := s.act
	target := "database:" + a.Tool
	texts := append([]string{a.Body}, a.Strings...)
	// SQL held in quoted strings of an argument (dbt vars and hooks, Jinja run_query('…'), JSON
	// or YAML values) is run too: each quoted body is read as SQL (sqlscan_roles.go).
	// A literal inside a statement is data (the statement runners are read by sqlscan.go).
	for _, t := range texts {
		if !startsAsSQL(t) {
			texts = append(texts, quotedBodies(t, 2)...)
		}
	}
	for _, t := range texts {
		if t == "" {
			continue
		}
		deletes := false
		for _, e := range sqlEffects(t, target, false) {
			deletes = deletes || e.Kind == EffectDelete
			s.addToolEffect(e)
		}
		// Redis and MongoDB commands a database tool runs (FLUSHALL, dropDatabase(), deleteMany({})).
		if d := destructiveStatement(t); d != "" && !deletes {
			s.addToolEffect(Effect{Kind: EffectDelete, Target: target, Detail: "database " + d})
		}
	}
}
