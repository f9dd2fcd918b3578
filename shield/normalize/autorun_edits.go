package normalize

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// Files that run later, edited by commands rather than written whole (autorun_code.go judges
// what ends up in them). The text a command puts in the file is recorded as written to it, and
// judged like a file tool's write:
//
//   - npm/pnpm/bun pkg set scripts.NAME=VALUE and npm set-script NAME VALUE: a package.json
//     script;
//   - sed -i (and -i.bak, --in-place) on a file that runs later: the replacement text of each
//     s/// expression and the text of a, i and c commands (the rest of the file is unchanged and
//     unseen);
//   - a forge's contents API (gh api -X PUT repos/O/R/contents/PATH -f content=BASE64): a commit
//     of PATH with the decoded content.

// maxEditText bounds the text recorded per edit command.
const maxEditText = 16 << 10

// laterEdits records what an editing command writes into files that run later.
func (w *walker) laterEdits(name string, args words) {
	s := w.s
	argv := args.argv
	if len(argv) > 256 {
		argv = argv[:256]
	}
	switch name {
	case "npm", "pnpm", "bun", "yarn":
		// Every key set, as the document it makes (scripts.prepare=X is {"scripts":{"prepare":X}};
		// dependencies.NAME=RANGE is a dependency, manifest_writes.go).
		set := map[string]any{}
		ops := nonOptions(argv)
		switch {
		case len(ops) > 2 && ops[0] == "pkg" && ops[1] == "set":
			for _, kv := range ops[2:] {
				if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
					setDotted(set, k, v)
				}
			}
		case len(ops) > 2 && ops[0] == "set-script":
			setDotted(set, "scripts."+ops[1], strings.Join(ops[2:], " "))
		}
		if len(set) == 0 {
			return
		}
		doc, _ := json.Marshal(set)
		if clean, ok := resolvePath("package.json", s.cwd, s.n.opt.Home); ok {
			s.recordWritten(clean, string(doc))
		}
	case "sed", "gsed":
		w.sedEdits(argv)
	case "gh":
		forgeContentsWrite(s, argv)
	}
}

// setDotted sets a.b.c = v in doc (npm pkg set's key syntax; [] and quoted keys as plain
// names), bounded in depth.
func setDotted(doc map[string]any, key, v string) {
	parts := strings.Split(key, ".")
	if len(parts) > 8 {
		return
	}
	cur := doc
	for _, p := range parts[:len(parts)-1] {
		next, _ := cur[p].(map[string]any)
		if next == nil {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
}

// recordWritten adds text to what the call writes to clean (sessions.go keeps it per call; the
// tool-effects pass judges files that run later).
func (s *state) recordWritten(clean, text string) {
	if len(text) > maxEditText {
		text = text[:maxEditText]
	}
	if s.written == nil {
		s.written = map[string]string{}
	}
	if _, ok := s.written[clean]; !ok && len(s.written) >= maxSessionFiles {
		return
	}
	s.written[clean] += text
}

// sedReplacements returns the replacement text of each s command of a sed script (any
// delimiter; escaped delimiters unescaped). A reading of sed's grammar, bounded: an s that starts
// a command (at the start, after ; newline { } or an address) opens one.
func sedReplacements(expr string) []string {
	var out []string
	for i := 0; i < len(expr) && len(out) < 32; i++ {
		if expr[i] != 's' || i+1 >= len(expr) || !sedCommandStart(expr, i) {
			continue
		}
		d := expr[i+1]
		if d == '\\' || d == '\n' || d == ' ' {
			continue
		}
		parts, j := [2]string{}, i+2
		ok := true
		for k := 0; k < 2 && ok; k++ {
			var b strings.Builder
			for ; j < len(expr) && expr[j] != d; j++ {
				if expr[j] == '\\' && j+1 < len(expr) {
					if expr[j+1] != d {
						b.WriteByte('\\')
					}
					j++
				}
				b.WriteByte(expr[j])
			}
			if j >= len(expr) {
				ok = false
				break
			}
			parts[k] = b.String()
			j++
		}
		if !ok {
			continue
		}
		out = append(out, strings.ReplaceAll(parts[1], `\n`, "\n"))
		i = j - 1
	}
	return out
}

// sedCommandStart: the s at expr[i] starts a command.
func sedCommandStart(expr string, i int) bool {
	k := i - 1
	for k >= 0 && (expr[k] == ' ' || expr[k] == '\t') {
		k--
	}
	return k < 0 || strings.IndexByte(";\n{}0123456789$/!", expr[k]) >= 0
}

// sedTextRE: a, i and c commands with their text (GNU one-line form "a text" or "a\ text").
var sedTextRE = regexp.MustCompile(`(?m)(?:^|[;{])\s*(?:[0-9$,/^.*!]*\s*)?[aic]\\?\s*(.+)$`)

func (w *walker) sedEdits(argv []string) {
	s := w.s
	inPlace := false
	var exprs, files []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-i" || strings.HasPrefix(a, "-i") && !strings.HasPrefix(a, "--") || strings.HasPrefix(a, "--in-place"):
			inPlace = true
		case a == "-e" || a == "--expression":
			if i+1 < len(argv) {
				i++
				exprs = append(exprs, argv[i])
			}
		case strings.HasPrefix(a, "--expression="):
			exprs = append(exprs, strings.TrimPrefix(a, "--expression="))
		case a == "-f" || a == "--file":
			i++ // a script file: its edits are not seen here
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.ContainsRune(a[1:], 'i') && !strings.HasPrefix(a, "--") {
				inPlace = true
			}
		default:
			files = append(files, a)
		}
	}
	if !inPlace {
		return
	}
	if len(exprs) == 0 && len(files) > 0 {
		exprs, files = files[:1], files[1:]
	}
	var text []string
	for _, e := range exprs {
		text = append(text, sedReplacements(e)...)
		if !strings.HasPrefix(strings.TrimSpace(e), "s") {
			for _, m := range sedTextRE.FindAllStringSubmatch(e, 16) {
				text = append(text, m[1])
			}
		}
	}
	if len(text) == 0 {
		return
	}
	for _, f := range files {
		clean, ok := resolvePath(f, s.cwd, s.n.opt.Home)
		if ok { // every file: instruction files, manifests and env files are read too (shell_writes.go)
			s.recordWritten(clean, strings.Join(text, "\n")+"\n")
		}
	}
}

// forgeContentsRE: a repository contents endpoint (GitHub, Gitea, Forgejo), the file path in
// group 1.
var forgeContentsRE = regexp.MustCompile(`^/?(?:api/v[0-9]+/)?repos/[^/]+/[^/]+/contents/(.+)$`)

// forgeContentsWrite: gh api -X PUT|POST repos/O/R/contents/PATH -f content=BASE64: a commit of
// PATH, judged for what it runs later.
func forgeContentsWrite(s *state, argv []string) {
	if len(argv) < 2 || argv[0] != "api" {
		return
	}
	method, endpoint, content := "", "", ""
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		next := func() string {
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch {
		case a == "-X" || a == "--method":
			method = strings.ToUpper(next())
		case strings.HasPrefix(a, "--method="):
			method = strings.ToUpper(strings.TrimPrefix(a, "--method="))
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			method = strings.ToUpper(a[2:])
		case a == "-f" || a == "-F" || a == "--field" || a == "--raw-field":
			if v, ok := strings.CutPrefix(next(), "content="); ok {
				content = v
			}
		case strings.HasPrefix(a, "-"):
		case endpoint == "":
			endpoint = a
		}
	}
	m := forgeContentsRE.FindStringSubmatch(endpoint)
	if m == nil || method != "PUT" && method != "POST" || content == "" {
		return
	}
	clean, ok := resolvePath(m[1], s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	dec, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return
	}
	s.addEffect(Effect{Kind: EffectWrite, Target: clean, Program: "gh api", Detail: "forge", InWorkspace: inDir(clean, s.n.opt.Workspace)})
	s.recordWritten(clean, string(dec))
}
