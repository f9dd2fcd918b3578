package normalize

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Workspace files that run later (package.json scripts, Makefile recipes, .envrc and git hooks,
// setup.py and conftest.py, JavaScript tool configs, CI run steps, dev container commands) are
// judged by what their code does when it runs, not by a few shapes of text: when a call writes
// such a file, the code the file kind runs is extracted and walked by the engines that judge the
// same code in a shell call (the shell effect walker; the inline-code reading for Python and
// JavaScript). What that walk finds that matters for a file nobody watches when it runs becomes
// one EffectAutorun effect on the call, the file in Program ("autorun:PATH"):
//
//	Detail "fetch-exec"   code downloaded from Target and run (a pipe or substitution into an
//	                      interpreter, eval of a response, a script fetched and evaluated)
//	Detail "fetch-run"    a download from Target piped to a shell (an install script's shape)
//	Detail "decode-exec"  code decoded at run time and run
//	Detail "secret-send"  a secret (the environment, a credential file or variable) reaches a
//	                      connection to Target
//	Detail "secret-auth"  a credential variable read by name reaches a request to Target
//	Detail "install"      a package taken from a URL or repository at Target
//	Detail "persistence"  a write where code runs later outside the workspace (Target: the path)
//	Detail "over-size"    the content is over the bound: it cannot be judged
//
// Ordinary content (a test script, a lint hook, setuptools only, fixtures, go test) yields none:
// running programs, or the default registries, is not an autorun effect. Rules decide on the
// hosts (workspace_files.rego): the allowed egress is configuration.
const EffectAutorun = "autorun"

// maxAutorunContent bounds the content of one autorun file judged per call; over it the file is
// "over-size" (fails closed). maxAutorunSnippets bounds the pieces of code walked per file.
const (
	maxAutorunContent  = 64 << 10
	maxAutorunSnippets = 32
)

// autorunDepthKey marks a normalisation that walks autorun code, so the walk does not recurse
// into files that code writes.
type autorunDepthKey struct{}

// Autorun file kinds: how the file's code is extracted and which engine reads it.
const (
	autorunShell = "sh"   // the whole file is shell (.envrc, git hooks, husky)
	autorunNPM   = "npm"  // package.json: scripts values are shell
	autorunMake  = "make" // Makefile: recipe lines and $(shell …) are shell
	autorunPy    = "py"   // setup.py, conftest.py, noxfile.py, sitecustomize.py …: Python
	autorunJS    = "js"   // JavaScript tool configs: JavaScript run by node
	autorunCI    = "ci"   // CI definitions: run: steps and script: lists are shell
	autorunDevc  = "devc" // dev containers: *Command values are shell
	autorunNB    = "nb"   // Jupyter notebooks: ! lines and %%bash cells are shell, the rest Python
)

var (
	autorunJSConfigRE  = regexp.MustCompile(`^(?:(?:vite|vitest|webpack|jest|rollup|babel|next|nuxt|svelte|astro|tailwind|postcss|playwright|cypress|eslint|prettier|stylelint|lint-staged|commitlint|tsup|esbuild|karma|metro|remix|gatsby-config|gatsby-node|electron-builder|storybook)(?:\.config)?|\.eslintrc|\.prettierrc|\.stylelintrc|\.mocharc|\.babelrc|babel\.config|gulpfile|gruntfile)\.(?:js|cjs|mjs|ts|cts|mts)$`)
	autorunCIPathRE    = regexp.MustCompile(`/\.(?:github|gitea|forgejo)/(?:workflows|actions)/|/\.gitlab-ci\.ya?ml$|/\.gitlab/ci/|/\.circleci/|/azure-pipelines[^/]*\.ya?ml$|/bitbucket-pipelines\.ya?ml$|/\.drone\.ya?ml$|/\.travis\.ya?ml$|/\.woodpecker|/\.buildkite/|/\.gitpod\.ya?ml$|/\.pre-commit-(?:config|hooks)\.ya?ml$|/lefthook(?:-local)?\.ya?ml$`)
	autorunShellPathRE = regexp.MustCompile(`/\.envrc$|/\.husky/[^/_][^/]*$|/\.git/hooks/[^/]+$|/\.githooks/[^/]+$|/\.lefthook/.+`)
)

// autorunKind returns how the code of the file at clean is read, "" when it is no autorun kind.
func autorunKind(clean string) string {
	base := strings.ToLower(path.Base(clean))
	switch {
	case base == "package.json":
		return autorunNPM
	case base == "makefile" || base == "gnumakefile" || strings.HasSuffix(base, ".mk"):
		return autorunMake
	case base == "setup.py" || base == "conftest.py" || base == "noxfile.py" || base == "sitecustomize.py" ||
		base == "usercustomize.py" || base == "fabfile.py" || base == "dodo.py" || base == "pavement.py" ||
		strings.HasSuffix(base, ".pth"):
		return autorunPy
	case autorunJSConfigRE.MatchString(base):
		return autorunJS
	case base == "devcontainer.json" || base == ".devcontainer.json":
		return autorunDevc
	case strings.HasSuffix(base, ".ipynb"):
		return autorunNB
	case autorunCIPathRE.MatchString(clean):
		return autorunCI
	case autorunShellPathRE.MatchString(clean):
		return autorunShell
	}
	return autorunBuildKind(clean) // autorun_build.go: wrappers, JVM options
}

// autorunCode is one piece of code a file runs: the shell command whose walk gives its effects.
func autorunCommands(kind, content string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		if strings.TrimSpace(c) != "" && !seen[c] && len(out) < maxAutorunSnippets {
			seen[c] = true
			out = append(out, c)
		}
	}
	switch kind {
	case autorunShell:
		add(content)
	case autorunPy:
		add("python3 -c " + shellQuoteArg(content))
	case autorunJS:
		add("node -e " + shellQuoteArg(content))
	case autorunNPM, autorunDevc:
		// The whole document when it parses; a fragment (an edit's new text) pair by pair.
		var doc map[string]any
		if json.Unmarshal([]byte(content), &doc) == nil {
			src := doc
			if kind == autorunNPM {
				src, _ = doc["scripts"].(map[string]any)
			}
			keys := sortedKeys(src)
			for _, k := range keys {
				v := src[k]
				if kind == autorunDevc && !strings.HasSuffix(strings.ToLower(k), "command") {
					continue
				}
				for _, s := range stringsOf(v) {
					add(s)
				}
			}
			if kind == autorunDevc {
				for _, s := range jsonPairs(content, true) {
					add(s) // commands nested deeper (features, customizations)
				}
			}
			return out
		}
		for _, s := range jsonPairs(content, kind == autorunDevc) {
			add(s)
		}
	case autorunMake:
		var recipe []string
		for _, l := range strings.Split(content, "\n") {
			if strings.HasPrefix(l, "\t") {
				l = strings.TrimLeft(strings.TrimPrefix(l, "\t"), "@+- \t")
				recipe = append(recipe, strings.ReplaceAll(l, "$$", "$"))
				continue
			}
			for _, m := range makeShellRE.FindAllStringSubmatch(l, 4) {
				recipe = append(recipe, m[1])
			}
		}
		add(strings.Join(joinContinued(recipe), "\n"))
	case autorunCI:
		add(strings.Join(ciRunLines(content), "\n"))
	case autorunNB:
		var shell, py []string
		for _, cell := range notebookCells(content) {
			t := strings.TrimSpace(cell)
			if strings.HasPrefix(t, "%%bash") || strings.HasPrefix(t, "%%sh") || strings.HasPrefix(t, "%%script") {
				if i := strings.IndexByte(t, '\n'); i >= 0 {
					shell = append(shell, t[i+1:])
				}
				continue
			}
			for _, l := range strings.Split(cell, "\n") {
				lt := strings.TrimSpace(l)
				switch {
				case strings.HasPrefix(lt, "!"):
					shell = append(shell, lt[1:])
				case strings.HasPrefix(lt, "%pip ") || strings.HasPrefix(lt, "%conda "):
					shell = append(shell, lt[1:])
				case strings.HasPrefix(lt, "%"):
				default:
					py = append(py, l)
				}
			}
		}
		add(strings.Join(shell, "\n"))
		add("python3 -c " + shellQuoteArg(strings.Join(py, "\n")))
	default:
		for _, c := range autorunBuildCommands(kind, content) { // autorun_build.go
			add(c)
		}
	}
	return out
}

var (
	jsonPairRE  = regexp.MustCompile(`"([A-Za-z0-9_:.@/-]+)"\s*:\s*("(?:[^"\\]|\\.)*")`)
	makeShellRE = regexp.MustCompile(`\$\(shell\s+([^)]*)\)`)
	ciKeyRE     = regexp.MustCompile(`^(\s*)(?:-\s+)?(?:run|script|before_script|after_script|command|commands|cmds?|entry|entrypoint|init|before|tasks?)\s*:\s*(.*)$`)
)

// notebookCells: the sources of a notebook's code cells; content that is no notebook document
// (a cell's new source) is one cell.
func notebookCells(content string) []string {
	var doc struct {
		Cells []struct {
			Type   string `json:"cell_type"`
			Source any    `json:"source"`
		} `json:"cells"`
	}
	if json.Unmarshal([]byte(content), &doc) != nil || doc.Cells == nil {
		return []string{content}
	}
	var out []string
	for _, c := range doc.Cells {
		if c.Type != "code" || len(out) >= maxAutorunSnippets {
			continue
		}
		out = append(out, strings.Join(stringsOf(c.Source), ""))
	}
	return out
}

// jsonPairs: the string values of "key": "value" pairs in a JSON fragment; with onlyCommands,
// only those whose key ends in "command".
func jsonPairs(content string, onlyCommands bool) []string {
	var out []string
	for _, m := range jsonPairRE.FindAllStringSubmatch(content, 64) {
		if onlyCommands && !strings.HasSuffix(strings.ToLower(m[1]), "command") {
			continue
		}
		var s string
		if json.Unmarshal([]byte(m[2]), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// joinContinued joins recipe lines ending in a backslash.
func joinContinued(lines []string) []string {
	var out []string
	cur := ""
	for _, l := range lines {
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// ciRunLines: the shell of a CI definition: run: values (inline or a block scalar), script:
// lists. A reading of YAML's shapes, not a parser: what is not a step's shell is not walked.
func ciRunLines(content string) []string {
	var out []string
	lines := strings.Split(content, "\n")
	for i := 0; i < len(lines); i++ {
		m := ciKeyRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, val := len(m[1]), strings.TrimSpace(m[2])
		if val != "" && val[0] != '|' && val[0] != '>' {
			out = append(out, unquoteYAML(val))
			continue
		}
		// A block scalar or a list: the more indented lines that follow, up to the next key
		// that holds shell (a nested run:, which the loop reads itself).
		for i+1 < len(lines) {
			next := lines[i+1]
			t := strings.TrimSpace(next)
			deeper := len(next)-len(strings.TrimLeft(next, " \t")) > indent
			if t != "" && !deeper && !strings.HasPrefix(t, "- ") || val == "" && ciKeyRE.MatchString(next) {
				break
			}
			i++
			if val == "" {
				if !strings.HasPrefix(t, "- ") {
					continue // a key of a mapping (lint:, name:), not a command
				}
				t = unquoteYAML(strings.TrimPrefix(t, "- "))
			}
			out = append(out, t)
		}
	}
	return out
}

func unquoteYAML(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"') {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			return s
		}
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

func shellQuoteArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fetchEvalRE: code that evaluates text at run time (with a connection in the same code, text
// it downloaded).
var fetchEvalRE = regexp.MustCompile(`\b(?:exec|eval|compile|Function|runInThisContext|runInNewContext|execfile|instance_eval)\s*[(\s]|\.then\(\s*eval\s*\)|new\s+Function\b|\bvm\.Script\b|\brequire\s*\(\s*[^'"\s)]|\bimport\s*\(\s*[^'"\s)]`)

// netAPIRE: code that uses a network API (the modules and calls that send data off the host).
var netAPIRE = regexp.MustCompile(`require\(\s*['"](?:node:)?(?:https?|http2|net|tls|dgram)['"]|from\s+['"](?:node:)?(?:https?|http2|net|tls|dgram)['"]|\burllib\b|\brequests\b|\bhttpx\b|http\.client|\bsocket\b|\bfetch\s*\(|XMLHttpRequest|\baxios\b|\bsendBeacon\b|\bWebSocket\b`)

// autorunEffects judges content written to clean, a file that runs later, and adds what it
// would do when run as EffectAutorun effects.
func (s *state) autorunEffects(clean, content string) {
	kind := autorunKind(clean)
	if kind == "" || strings.TrimSpace(content) == "" {
		return
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Value(autorunDepthKey{}) != nil {
		return // code written by autorun code: the outer walk judges the outer file
	}
	prog := "autorun:" + clean
	if len(content) > maxAutorunContent {
		s.addToolEffect(Effect{Kind: EffectAutorun, Target: clean, Program: prog, Detail: "over-size", Unresolved: true})
		return
	}
	ctx = context.WithValue(ctx, autorunDepthKey{}, true)
	for _, cmd := range autorunCommands(kind, content) {
		inner := s.n.NormalizeContext(ctx, "Bash", map[string]any{"command": cmd}, s.act.Cwd)
		for _, e := range append(autorunFindings(inner, cmd), s.foreignCodeFindings(kind, inner)...) {
			e.Program = prog
			s.addToolEffect(e)
		}
	}
	s.autorunConnects(ctx, kind, clean, content, prog)      // autorun_beacon.go: self-running code that connects
	for _, e := range autorunBuildFindings(kind, content) { // autorun_build.go
		e.Program = prog
		s.addToolEffect(e)
	}
}

// foreignCodeFindings: files the code runs or loads that are not the project's, the system's or
// a build tool's cache: fetched by the same code ("fetch-run" from each host it connects to: a
// download saved and run), or run from a directory anyone can write to, or loaded as JVM code
// ("exec-foreign": what is there when the file runs is not what is judged now).
func (s *state) foreignCodeFindings(kind string, a *Action) []Effect {
	var out []Effect
	var hosts []string
	for _, e := range a.Effects {
		if e.Kind == EffectConnect {
			hosts = append(hosts, effectHost(e.Target))
		}
	}
	jvm := kind == autorunJVM || kind == autorunGradle || kind == autorunMvnCfg || kind == autorunPyProj
	for _, e := range a.Effects {
		if e.Kind != EffectExec || e.Detail != "file" || !s.foreignCodeFile(e.Target) {
			continue
		}
		for _, h := range hosts {
			out = append(out, Effect{Kind: EffectAutorun, Target: h, Detail: "fetch-run"})
		}
		if jvm || inScratch(e.Target) {
			out = append(out, Effect{Kind: EffectAutorun, Target: e.Target, Detail: "exec-foreign"})
		}
	}
	return out
}

// autorunFindings: what in the walk of one piece of autorun code matters when it runs unwatched.
func autorunFindings(a *Action, cmd string) []Effect {
	var out []Effect
	add := func(detail, target string) {
		out = append(out, Effect{Kind: EffectAutorun, Target: target, Detail: detail})
	}
	if a.OverLimit() {
		add("over-size", "(code)")
	}
	conns := map[int]string{}
	for i, e := range a.Effects {
		if e.Kind == EffectConnect {
			conns[i] = effectHost(e.Target)
		}
	}
	for _, f := range a.Flows {
		if f.From < 0 || f.To < 0 || f.From >= len(a.Effects) || f.To >= len(a.Effects) {
			continue
		}
		from, to := a.Effects[f.From], a.Effects[f.To]
		switch {
		case from.Kind == EffectConnect && to.Kind == EffectExec && f.Via == "pipe" && (shells[path.Base(to.Target)] || shells[path.Base(to.Program)]):
			// A download piped to a shell: a vendor's install script's shape, judged by its host.
			add("fetch-run", effectHost(from.Target))
		case from.Kind == EffectConnect && to.Kind == EffectExec:
			add("fetch-exec", effectHost(from.Target))
		case from.Kind == EffectSecret && to.Kind == EffectConnect:
			add(secretFinding(from), effectHost(to.Target))
		}
	}
	for _, e := range a.Effects {
		switch {
		case e.Kind == EffectExec && e.Detail == "decoded code":
			add("decode-exec", e.Target)
		case e.Kind == EffectExec && e.Inline != InlineConfined && !shells[e.Target] && fetchEvalRE.MatchString(e.Detail) && len(conns) > 0:
			// Inline code that connects and evaluates text: what it evaluates is what it fetched.
			for _, h := range conns {
				add("fetch-exec", h)
			}
		case e.Kind == EffectInstall && (e.Detail == SourceURL || e.Detail == SourceVCS):
			add("install", installHost(e.Target))
		case e.Kind == EffectPersistence && strings.HasPrefix(e.Target, "/") && !e.InWorkspace && e.Remote == "":
			add("persistence", e.Target)
		}
	}
	// Code that takes the whole environment and uses a network API whose target is built at run
	// time (https.request({host: …}), a socket): the environment may go anywhere.
	if len(conns) == 0 {
		envAll, netCode := false, false
		for _, e := range a.Effects {
			envAll = envAll || e.Kind == EffectSecret && e.Target == "environment"
			netCode = netCode || e.Kind == EffectExec && e.Inline != InlineConfined && !shells[e.Target] && netAPIRE.MatchString(e.Detail)
		}
		if envAll && netCode {
			add("secret-send", "(run time)")
		}
	}
	// A secret and a connection in code with no visible flow between them (an inline program
	// posting os.environ): the secret may reach every connection.
	if len(conns) > 0 {
		for _, e := range a.Effects {
			if e.Kind == EffectSecret {
				for _, h := range conns {
					add(secretFinding(e), h)
				}
			}
		}
	}
	return out
}

// secretFinding: a credential variable read by name (carried in a request, or named in a command
// line: the shell's lines are also judged data against authentication by the text rules)
// authenticates (the project's own server, maybe: "secret-auth"); the whole environment, a credential file or
// any other secret is sent ("secret-send").
func secretFinding(e Effect) string {
	if !e.Sensitive && (e.Detail == "request" || e.Detail == "env" && e.Target != "environment") {
		return "secret-auth" // a variable named in the code or its command line, not the environment
	}
	return "secret-send"
}

// effectHost: the host of a connect effect's target ("h:443" → "h", "[::1]:80" → "::1").
func effectHost(t string) string {
	if strings.HasPrefix(t, "[") {
		if i := strings.IndexByte(t, ']'); i > 0 {
			return t[1:i]
		}
	}
	if i := strings.LastIndexByte(t, ':'); i > 0 && !strings.Contains(t[:i], ":") {
		return strings.ToLower(t[:i])
	}
	return strings.ToLower(t)
}

// installHost: the host of an install source URL (git+https://h/…, https://h/x.tgz), else the
// target.
func installHost(t string) string {
	u := t
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexAny(u, "/?#"); j >= 0 {
			u = u[:j]
		}
		if j := strings.LastIndexByte(u, '@'); j >= 0 {
			u = u[j+1:]
		}
		return effectHost(u)
	}
	return t
}

// sortedKeys: the keys of m in order, so effects come out the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
