package normalize

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// A shell write is judged like a file tool's write of the same text. Whatever writes a file —
// a redirection of echo/printf/cat (sessions.go), sed -i (autorun_edits.go), or the programs
// read here — the text it adds is recorded as written to that file (state.written), and the
// call's strings carry it (writtenStrings), so the readers that judge a Write of the file
// (files that run later, agent instruction files, manifests and lockfiles, env files; the Rego
// of workspace_files, ops_supply and later_writes) see the same text:
//
//   - jq FILTER FILE | sponge FILE (or | tee FILE, or > FILE): the string values of the
//     filter's assignments (.scripts.prepare = "…", .resolutions["x"] = "…", .a += {…}),
//     rebuilt as the JSON document they set;
//   - yq -i EXPR FILE (yq e/eval -i): the same assignments, as "key: value" lines for YAML
//     files and a JSON document for JSON files;
//   - perl -i -pe 's/…/…/' FILE: the replacement text, read like sed's;
//   - dd of=FILE and ed/ex FILE fed a here-document or here-string: the text fed.
//
// What cannot be read (a filter from a file, a computed value) adds nothing here: the write
// effect stays, and the file's readers judge only text they were given.

// maxFilterAssignments bounds the assignments read from one jq/yq expression.
const maxFilterAssignments = 32

// filterAssignRE: a path assignment of jq/yq (".a.b[\"c\"] = ", "+=", "|=", "//=", "*=").
var filterAssignRE = regexp.MustCompile(`((?:\.[A-Za-z_$][\w$-]*|\.?\[\s*"(?:[^"\\]|\\.)*"\s*\]|\.?\[\s*'[^']*'\s*\]|\[\s*[0-9]*\s*\])+)\s*(\|=|\+=|//=|\*=|=)`)

var filterKeyRE = regexp.MustCompile(`\.([A-Za-z_$][\w$-]*)|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*'([^']*)'\s*\]`)

// filterDoc reads the assignments of a jq/yq expression into the document they set. ok is false
// when the expression assigns nothing readable.
func filterDoc(expr string) (map[string]any, bool) {
	doc := map[string]any{}
	found := false
	for _, m := range filterAssignRE.FindAllStringSubmatchIndex(expr, maxFilterAssignments) {
		end := m[1]
		if end < len(expr) && expr[end] == '=' {
			continue // == is a comparison
		}
		val, ok := filterValue(expr[end:])
		if !ok {
			continue
		}
		var keys []string
		for _, k := range filterKeyRE.FindAllStringSubmatch(expr[m[2]:m[3]], 16) {
			key := k[1] + k[3]
			if k[2] != "" {
				_ = json.Unmarshal([]byte(`"`+k[2]+`"`), &key)
			}
			keys = append(keys, key)
		}
		if len(keys) == 0 {
			continue
		}
		cur := doc
		for _, k := range keys[:len(keys)-1] {
			next, _ := cur[k].(map[string]any)
			if next == nil {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		cur[keys[len(keys)-1]] = val
		found = true
	}
	return doc, found
}

// filterValue reads the value an assignment sets: a JSON value (jq's and yq's literals), or an
// unquoted word up to the next operator.
func filterValue(rest string) (any, bool) {
	rest = strings.TrimLeft(rest, " \t\n")
	if rest == "" {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(rest))
	if dec.Decode(&v) == nil {
		return v, true
	}
	if rest[0] == '\'' { // yq accepts single-quoted strings
		if i := strings.IndexByte(rest[1:], '\''); i >= 0 {
			return rest[1 : i+1], true
		}
	}
	return nil, false
}

// renderDoc writes doc as the file at clean holds it: JSON for .json files, "key: value" lines
// (each string leaf under its key, JSON-quoted) for the rest.
func renderDoc(clean string, doc map[string]any) string {
	if strings.HasSuffix(strings.ToLower(clean), ".json") || path.Base(clean) == ".babelrc" {
		b, _ := json.Marshal(doc)
		return string(b)
	}
	var b strings.Builder
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > 16 || b.Len() > maxEditText {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				walk(k, x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(key, e, depth+1)
			}
		case string:
			q, _ := json.Marshal(x)
			b.WriteString(key + ": " + string(q) + "\n")
		}
	}
	walk("", doc, 0)
	return b.String()
}

// shellWrites records the text jq, yq, sponge, tee, perl -i, dd and ed/ex write into files.
func (w *walker) shellWrites(c *Command, ws words, pipe bool, idx int, stdin string) {
	s := w.s
	if !pipe || idx == 0 {
		if c.Name != "sponge" && c.Name != "tee" {
			w.piped = ""
		}
	}
	argv := ws.argv
	if len(argv) > 256 {
		argv = argv[:256]
	}
	args := argv[1:]
	record := func(raw, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		if clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home); ok {
			s.recordWritten(clean, text)
		}
	}
	// edited: an in-place editor writes the file it reads (its spec may list it as read only).
	edited := func(raw string) { w.applyRole(c.Name, "write", raw, false) }
	switch c.Name {
	case "jq", "gojq", "jaq":
		expr, files := jqOperands(args)
		doc, ok := filterDoc(expr)
		if !ok {
			return
		}
		target := "x.json"
		if len(files) > 0 {
			target = files[0]
		}
		text := renderDoc(target, doc)
		for _, r := range c.Redirects {
			if (r.Op == ">" || r.Op == ">>" || r.Op == ">|") && (r.Fd == "" || r.Fd == "1") {
				record(r.Path, text)
			}
		}
		if pipe {
			w.piped = text
		}
	case "yq":
		inPlace, expr, files := yqOperands(args)
		doc, ok := filterDoc(expr)
		if !ok {
			return
		}
		if inPlace {
			for _, f := range files {
				edited(f)
				record(f, renderDoc(f, doc))
			}
		}
		for _, r := range c.Redirects {
			if (r.Op == ">" || r.Op == ">>" || r.Op == ">|") && (r.Fd == "" || r.Fd == "1") {
				record(r.Path, renderDoc(r.Path, doc))
			}
		}
		if pipe {
			w.piped = renderDoc("x.yaml", doc)
		}
	case "sponge", "tee":
		if w.piped == "" || !pipe || idx == 0 {
			return
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				record(a, w.piped)
			}
		}
	case "perl":
		var exprs, files []string
		inPlace := false
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-e" || a == "-E":
				if i+1 < len(args) {
					i++
					exprs = append(exprs, args[i])
				}
			case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
				flags := strings.TrimPrefix(a, "-")
				if strings.HasPrefix(flags, "i") || strings.Contains(flags, "i") && !strings.ContainsAny(flags, "IM") {
					inPlace = true
				}
				if strings.HasSuffix(flags, "e") || strings.HasSuffix(flags, "E") {
					if i+1 < len(args) {
						i++
						exprs = append(exprs, args[i])
					}
				}
			default:
				files = append(files, a)
			}
		}
		if !inPlace {
			return
		}
		var text []string
		for _, e := range exprs {
			text = append(text, sedReplacements(e)...)
		}
		for _, f := range files {
			edited(f)
			record(f, strings.Join(text, "\n")+"\n")
		}
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "of="); ok && stdin != "" {
				record(v, stdin)
			}
		}
	case "ed", "ex", "red":
		if stdin == "" {
			return
		}
		var text []string
		for _, l := range strings.Split(stdin, "\n") {
			t := strings.TrimSpace(l)
			if len(t) <= 3 && !strings.Contains(t, " ") || t == "wq" {
				continue // a command: a, i, c, ., w, q, $a, 1i …
			}
			text = append(text, l)
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
				record(a, strings.Join(text, "\n")+"\n")
			}
		}
	}
}

// jqOperands returns jq's filter and its input files, skipping options and their values.
func jqOperands(args []string) (string, []string) {
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--arg", "--argjson", "--slurpfile", "--rawfile":
			i += 2
			continue
		case "--indent", "-L", "--tab-size":
			i++
			continue
		case "-f", "--from-file":
			return "", nil // the filter is in a file: not seen here
		case "--args", "--jsonargs", "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) == 0 {
		return "", nil
	}
	return ops[0], ops[1:]
}

// yqOperands returns whether yq edits in place, its expression and its files.
func yqOperands(args []string) (bool, string, []string) {
	inPlace := false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-i" || a == "--inplace" || strings.HasPrefix(a, "--inplace="):
			inPlace = true
		case a == "-p" || a == "-o" || a == "--input-format" || a == "--output-format" || a == "-I" || a == "--indent":
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.HasPrefix(a, "--") && strings.Contains(a, "i") {
				inPlace = true
			}
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) > 0 && (ops[0] == "e" || ops[0] == "eval" || ops[0] == "ea" || ops[0] == "eval-all") {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return inPlace, "", nil
	}
	return inPlace, ops[0], ops[1:]
}

// writtenStrings adds the text shell commands write into files to the call's strings, so the
// readers of written text see it as they see a file tool's content (bounded like every string).
func (s *state) writtenStrings() {
	for _, t := range sortedKeys(s.written) {
		if len(s.act.Strings) >= s.n.opt.MaxStrings {
			s.act.Truncated = true
			return
		}
		s.act.Strings = append(s.act.Strings, s.written[t])
	}
}

// Env files are environment stores: dotenv loaders, docker compose, direnv and the frameworks
// read .env, .env.local, .env.development … into every process they start. A variable of the
// code-running table (effects_env.go) written there is code that runs later, like the same
// variable stored by go env -w or launchctl setenv (effects_env_persist.go): a persistence
// effect on the file. Preloads and option strings (LD_PRELOAD, NODE_OPTIONS=--require,
// PYTHONSTARTUP, BASH_ENV, JAVA_TOOL_OPTIONS=-javaagent) count even when their code is in the
// workspace: a hidden preload runs in every later process, which nobody reviews as a run of
// that file; search paths (PYTHONPATH=src) and commands by name (EDITOR=vim) count only when
// they reach code outside the workspace. Example files (.env.example, .sample, .template,
// .dist) are not loaded.

// envFileRE: the names loaders read environment from.
var envFileRE = regexp.MustCompile(`^(?:\.env(?:\.[A-Za-z0-9_-]+)*|\.flaskenv|\.envrc\.local|[A-Za-z0-9_-]+\.env)$`)

var envExampleRE = regexp.MustCompile(`(?i)\.(example|sample|template|dist|defaults?|tpl|schema)$|^\.env\.(example|sample|template)`)

var envLineRE = regexp.MustCompile(`(?m)^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$`)

// envFileEffects adds the persistence effect of loader variables written into an env file.
func (s *state) envFileEffects(clean, content string) {
	base := path.Base(clean)
	if !envFileRE.MatchString(base) || envExampleRE.MatchString(base) || strings.TrimSpace(content) == "" {
		return
	}
	if len(content) > maxEditText {
		content = content[:maxEditText]
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	for i, m := range envLineRE.FindAllStringSubmatch(content, -1) {
		if i >= maxStoredAssignments {
			s.act.Truncated = true
			break
		}
		k, v := m[1], strings.TrimSpace(m[2])
		kind, ok := codeEnv[k]
		if !ok || k == "PATH" {
			continue
		}
		inner := s.n.NormalizeContext(ctx, "Bash", map[string]any{"command": "export " + k + "=" + shellQuoteArg(unquoteValue(v))}, s.act.Cwd)
		runs, inWS := inner.OverLimit(), inDir(clean, s.n.opt.Workspace)
		for _, e := range inner.Effects {
			if e.Kind == EffectExec && e.Detail == "file" || e.Kind == EffectPersistence || e.Kind == EffectSecret || e.Unresolved ||
				e.Kind == EffectRead && !e.InWorkspace {
				runs = true
				inWS = inWS && e.InWorkspace && !e.Unresolved
			}
		}
		preload := kind == envFiles || kind == envFile || kind == envShell || kind == envGitConfig ||
			kind == envOptions && envOptionLoadsCode(k, v)
		if runs && (preload || !inWS) {
			s.addToolEffect(Effect{Kind: EffectPersistence, Target: clean, Program: "env-file", Detail: "stored_env " + k, InWorkspace: inWS, Sensitive: true})
		}
	}
}

var nodeLoadOptRE = regexp.MustCompile(`(?:^|[\s"'])(?:-r|--require|--import|--loader|--experimental-loader)(?:[\s=]|$)`)

// envOptionLoadsCode: an interpreter option string that loads code (a require, an import, a
// loader, an agent); heap sizes and warnings flags load none.
func envOptionLoadsCode(k, v string) bool {
	v = strings.ToLower(v)
	switch k {
	case "NODE_OPTIONS":
		return nodeLoadOptRE.MatchString(v)
	case "PERL5OPT":
		return strings.Contains(v, "-m") || strings.Contains(v, "-d")
	case "RUBYOPT":
		return strings.Contains(v, "-r")
	}
	return strings.Contains(v, "agent") || strings.Contains(v, "-xbootclasspath") || strings.Contains(v, "-cp") || strings.Contains(v, "init")
}
