package normalize

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Default bounds of a Normalizer.
const (
	DefaultMaxDepth    = 4    // nesting of $(…), bash -c, eval, sudo … below the top command
	DefaultMaxCommands = 256  // simple commands kept per call
	DefaultMaxStrings  = 1024 // strings, paths and URLs kept per call (each)
	DefaultWorkspace   = "/workspace"
	DefaultHome        = "/root"

	maxCwdBytes = 4096 // Linux PATH_MAX
)

// Options configures a Normalizer. Zero fields take the defaults above.
type Options struct {
	Workspace   string // absolute; relative paths resolve against it when the call has no cwd
	Home        string // absolute; "~" expands to it
	MaxDepth    int
	MaxCommands int
	MaxStrings  int
	// Commands are the command specs the shell walker reads programs with (the bundle's
	// commands/*.spec). nil knows no program: every command is an unknown program.
	Commands *CommandSpecs
	// Inline is the allow list inline interpreter code is judged by (the bundle's inline.yaml,
	// inline_code.go). nil makes the inline code of every interpreter capable.
	Inline *InlineAllowList
	// Prose is the intent lexicon free text is read with (the bundle's prose.yaml,
	// tools_prose_intent.go). nil reads no intent from plain words (paths, URLs, code spans and
	// named secrets are still read).
	Prose *ProseLexicon
	// InstructionFiles are the files agents read as their instructions (the bundle's data.json
	// shield.lists.agent_instruction_files): what a file tool writes to one is read as free text
	// an agent will act on. A path that contains an entry matches, as in the rules.
	InstructionFiles []string
	// ResolveLinks: classify workspace paths that exist on this host where their symbolic links
	// lead (links.go). Off by default: set it only when the appliance shares the workspace's
	// file system.
	ResolveLinks bool
}

// Normalizer turns tool calls into Actions. Build one per catalog with New; it is immutable and
// safe for concurrent use.
type Normalizer struct {
	cat     *Catalog
	opt     Options
	sens    *sensitiveMatcher
	parsers sync.Pool
	// exemplars: concrete paths standing for the sensitive table's patterns (globs are matched
	// against them).
	exemplars []string
	// reach: the exemplars of secret kinds, for recursive reads (reach.go).
	reach []reachPoint
	// wsReal: the workspace's own location on disk, when ResolveLinks is set.
	wsReal string
}

// New returns a Normalizer over cat (nil: every tool is unknown).
func New(cat *Catalog, opt Options) *Normalizer {
	if opt.Workspace == "" {
		opt.Workspace = DefaultWorkspace
	}
	if opt.Home == "" {
		opt.Home = DefaultHome
	}
	opt.Workspace, _ = resolvePath(opt.Workspace, "/", "/")
	opt.Home, _ = resolvePath(opt.Home, "/", "/")
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = DefaultMaxDepth
	}
	if opt.MaxCommands <= 0 {
		opt.MaxCommands = DefaultMaxCommands
	}
	if opt.MaxStrings <= 0 {
		opt.MaxStrings = DefaultMaxStrings
	}
	n := &Normalizer{cat: cat, opt: opt, sens: newSensitiveMatcher(opt.Home), exemplars: sensitiveExemplars(opt.Home)}
	n.reach = reachExemplars(n)
	n.parsers.New = func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }
	if opt.ResolveLinks {
		if real, err := filepath.EvalSymlinks(opt.Workspace); err == nil {
			n.wsReal = filepath.ToSlash(real)
		}
	}
	return n
}

// state is the per-call work area.
type state struct {
	n        *Normalizer
	act      *Action
	cwd      string
	pathSeen map[string]int // clean path → index of its first entry
	urlSeen  map[string]bool

	ctx    context.Context
	polls  int  // calls of stopped, to poll ctx every few
	stop   bool // an input limit was hit or ctx is done: no more shell is parsed or walked
	parsed int  // bytes of shell source parsed so far, bounded by MaxShellParseBytes

	eff *effCtx // effect bookkeeping (effects_shell.go), made on first use

	// written: content shell commands write to files (sessions.go: recordWritten), by path.
	written map[string]string

	nested int // URLs added as nested in request URLs (urls_nested.go), bounded
	// inspected: programs run in a public inspection mode (metadata_only.go), by name.
	inspected map[string]bool
}

// stopped reports whether the walk must stop: an input limit was hit, or the context is done
// (polled every 16 calls; it is also polled before every parse).
func (s *state) stopped() bool {
	if s.stop {
		return true
	}
	s.polls++
	if s.polls%16 == 1 && s.ctx != nil && s.ctx.Err() != nil {
		s.overLimit("normalisation stopped: %v", s.ctx.Err())
	}
	return s.stop
}

// Normalize builds the Action for a call. args are decoded arguments (DecodeArguments); cwd is the
// caller's working directory ("" = the workspace). It never fails: what cannot be read is reported
// in ParseError or Truncated, and an internal fault yields an unknown action with ParseError set.
func (n *Normalizer) Normalize(tool string, args map[string]any, cwd string) *Action {
	return n.NormalizeContext(context.Background(), tool, args, cwd)
}

// NormalizeContext is Normalize bounded by ctx: once ctx is done, no more shell is parsed or
// walked and the action is marked OverLimit (ParseError "input limit: normalisation stopped: …").
// The work is bounded by the input limits whatever ctx says; ctx lets the caller's budget cover
// normalisation too.
func (n *Normalizer) NormalizeContext(ctx context.Context, tool string, args map[string]any, cwd string) (act *Action) {
	return n.normalize(ctx, tool, args, cwd, 0)
}

// maxDelegateDepth bounds calls that run other tools (use_mcp_tool of use_mcp_tool …).
const maxDelegateDepth = 1

func (n *Normalizer) normalize(ctx context.Context, tool string, args map[string]any, cwd string, depth int) (act *Action) {
	act = &Action{Tool: tool, Class: ClassUnknown, Args: args, Workspace: n.opt.Workspace}
	defer func() {
		if r := recover(); r != nil {
			act = &Action{Tool: tool, Class: ClassUnknown, Args: args, Workspace: n.opt.Workspace,
				Cwd: n.opt.Workspace, ParseError: fmt.Sprintf("internal error while normalising: %v", r), Truncated: true}
			act.fillNil()
		}
	}()
	s := &state{n: n, act: act, ctx: ctx}
	base := n.opt.Workspace
	if len(cwd) > maxCwdBytes { // longer than PATH_MAX: not a directory a process can be in
		act.Truncated = true
		cwd = ""
	}
	if cwd != "" {
		base, _ = resolvePath(cwd, n.opt.Workspace, n.opt.Home)
	}
	s.cwd = base
	act.Cwd = base

	if depth == 0 {
		// A structured tool that stands for a command line (cli_equivalent.go) is that command.
		if cmd := cliEquivalent(tool, args); cmd != "" {
			inner := n.normalize(ctx, cliEquivalentTool, map[string]any{"command": cmd}, cwd, depth+1)
			inner.Tool, inner.Args = tool, args
			return inner
		}
		// A tool named after a program, given its argv (cli_program_tool.go).
		if cmd, dir, ok := n.programToolCommand(tool, args); ok {
			if dir == "" {
				dir = cwd
			}
			inner := n.normalize(ctx, cliEquivalentTool, map[string]any{"command": cmd}, dir, depth+1)
			inner.Tool, inner.Args = tool, args
			return inner
		}
	}
	e, known := n.cat.Lookup(tool)
	if known && e.Delegate != nil {
		if inner := n.delegate(ctx, e, args, cwd, depth); inner != nil {
			inner.Tool, inner.Args = tool, args
			return inner
		}
	}
	used := map[string]bool{}
	if known {
		act.Known = true
		act.Class = e.Class
		s.applyEntry(e, used)
	}
	class := ""
	if known {
		class = e.Class
	}
	s.generic(args, used, known && len(e.Command) > 0, class)
	s.execFallback() // tools_exec_args.go: an exec tool's command in another field, or unknown
	s.collectStrings(args)
	s.textURLs()
	s.toolEffects(e, known)  // tools_effects.go
	s.historyFilterEffects() // history_filters.go: history patches filtered for credentials
	s.historyObjectEffects() // history_filters.go: committed versions of credential files
	s.nameSearchEffects()    // name_searches.go: searches for credential files by name
	if !known {
		s.annotationEffects(annotationsFrom(ctx)) // tools_annotations.go
	}
	s.markLocalTargets() // local_targets.go
	s.markCountOnly()    // count_only.go
	s.markLocalDBs()     // local_dbs.go
	act.fillNil()
	return act
}

// delegate normalises the call a delegating tool runs (Cline's use_mcp_tool {server_name,
// tool_name, arguments}): the inner tool and its arguments, an object or a JSON string holding
// one. nil when the call names no inner tool; an inner call that cannot be read, or one nested
// deeper than maxDelegateDepth, is an unknown action marked with a parse error.
func (n *Normalizer) delegate(ctx context.Context, e *Entry, args map[string]any, cwd string, depth int) *Action {
	var inner string
	for _, k := range e.Delegate.Tool {
		if t := scalarString(lookupKey(args, k)); t != "" {
			inner = t
			break
		}
	}
	if inner == "" {
		return nil
	}
	fail := func(msg string) *Action {
		a := &Action{Tool: inner, Class: ClassUnknown, Workspace: n.opt.Workspace, Cwd: n.opt.Workspace, ParseError: msg}
		a.fillNil()
		return a
	}
	if depth >= maxDelegateDepth {
		return fail("a delegated call runs another delegated call")
	}
	innerArgs := map[string]any{}
	for _, k := range e.Delegate.Arguments {
		vs := lookupKey(args, k)
		if len(vs) == 0 {
			continue
		}
		switch x := vs[0].(type) {
		case map[string]any:
			innerArgs = x
		case string:
			if strings.TrimSpace(x) == "" {
				break
			}
			m, err := DecodeArguments([]byte(x), Limits{})
			if err != nil {
				return fail("the delegated call's arguments are not a JSON object: " + err.Error())
			}
			innerArgs = m
		default:
			return fail("the delegated call's arguments are not a JSON object")
		}
		break
	}
	return n.normalize(ctx, inner, innerArgs, cwd, depth+1)
}

// fillNil makes every list non-nil, so rules and policies see [] rather than null.
func (a *Action) fillNil() {
	if a.Commands == nil {
		a.Commands = []Command{}
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Redirects == nil {
			c.Redirects = []Redirect{}
		}
		if c.Env == nil {
			c.Env = []string{}
		}
	}
	if a.Paths == nil {
		a.Paths = []Path{}
	}
	if a.URLs == nil {
		a.URLs = []URL{}
	}
	if a.Recipients == nil {
		a.Recipients = []string{}
	}
	if a.Strings == nil {
		a.Strings = []string{}
	}
	if a.Effects == nil {
		a.Effects = []Effect{}
	}
	if a.Flows == nil {
		a.Flows = []Flow{}
	}
	if a.Unresolved == nil {
		a.Unresolved = []string{}
	}
	if a.UnknownPrograms == nil {
		a.UnknownPrograms = []string{}
	}
}

func (s *state) applyEntry(e *Entry, used map[string]bool) {
	args := s.act.Args
	take := func(keys []string) []any {
		var out []any
		for _, k := range keys {
			vs := lookupKey(args, k)
			if len(vs) > 0 {
				used[topKey(k)] = true
				out = append(out, vs...)
			}
		}
		return out
	}
	// cwd first: every other path resolves against it.
	for _, v := range take(e.Cwd) {
		if str, ok := v.(string); ok && str != "" {
			s.setCwd(str)
			s.act.Cwd = s.cwd
			break
		}
	}
	for _, pa := range e.Paths {
		for _, v := range take(pa.Keys) {
			for _, str := range stringsOf(v) {
				if strings.Contains(str, "://") && !strings.HasPrefix(strings.ToLower(str), "file:") {
					s.addURL(str, URLRequest, false)
					continue
				}
				s.addPath(str, pa.Role)
			}
		}
	}
	for _, v := range take(e.URLs) {
		for _, str := range stringsOf(v) {
			isFile := strings.HasPrefix(strings.ToLower(str), "file:")
			// A file: URI given to a file tool (an MCP resource) names the file it reads; given to
			// a request tool it is a request that reads a local file, and stays a URL too.
			if !isFile || (e.Class != ClassFileRead && e.Class != ClassFileList) {
				s.addURL(str, URLRequest, true)
			}
			if isFile {
				s.addPath(str, RoleRead)
			}
		}
	}
	for _, v := range take(e.Recipients) {
		for _, str := range stringsOf(v) {
			for _, r := range strings.FieldsFunc(str, func(r rune) bool { return r == ',' || r == ';' }) {
				if r = recipient(r); r != "" {
					s.act.Recipients = append(s.act.Recipients, r)
				}
			}
		}
	}
	s.act.Body = joinText(s.act.Body, take(e.Body))
	s.act.Content = joinText(s.act.Content, take(e.Content))
	s.act.Prompt = joinText(s.act.Prompt, take(e.Prompt))
	for _, v := range take(e.Method) {
		if str, ok := v.(string); ok && str != "" {
			s.act.Method = strings.ToUpper(strings.TrimSpace(str))
			break
		}
	}
	if s.act.Method == "" && e.DefaultMethod != "" {
		s.act.Method = strings.ToUpper(e.DefaultMethod)
	}
	for _, v := range take(e.Patch) {
		if str, ok := v.(string); ok {
			s.act.Content = joinText(s.act.Content, []any{str})
			s.patchPaths(str)
		}
	}
	for _, v := range take(e.Command) {
		s.command(v)
		break
	}
	if e.Class == ClassCodeExec && s.act.Content != "" {
		s.codePaths(s.act.Content)
	}
}

// quotedPathRE finds quoted absolute or home-relative paths inside code ('/etc/shadow', "~/.ssh").
var quotedPathRE = regexp.MustCompile(`['"]((?:/|~/)[^'"\s]+)['"]`)

// codePaths records the paths quoted in a piece of code (role arg), at most 64.
func (s *state) codePaths(code string) {
	for _, m := range quotedPathRE.FindAllStringSubmatch(code, 64) {
		if !strings.Contains(m[1], "://") {
			s.addPath(m[1], RoleArg)
		}
	}
}

// command handles a command argument: a string is parsed as shell, an argv list is taken as is.
func (s *state) command(v any) {
	defer func(cwd string) { s.cwd = cwd }(s.cwd) // cd inside the command does not move other arguments
	switch c := v.(type) {
	case string:
		if s.act.Command == "" {
			s.act.Command = c
		}
		w := s.walker()
		w.script(c, 0, "", false)
	case []any:
		argv := make([]string, 0, len(c))
		for _, x := range c {
			str, ok := x.(string)
			if !ok {
				str = fmt.Sprint(x)
			}
			argv = append(argv, str)
		}
		if s.act.Command == "" {
			s.act.Command = quoteArgv(argv)
		}
		if len(argv) > 0 {
			w := s.walker()
			w.emit(frame{}, words{argv: argv, dyn: make([]bool, len(argv))}, s.act.Command, nil, nil, false, 0, false, "")
		}
	}
}

func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}

// generic extracts from keys the catalog entry did not name (all keys of an unknown tool): paths
// from path-like keys, URLs from URL-like keys, a shell command from command-like keys when the
// entry names no command argument.
//
// A path under a key the entry did not name takes the role of the tool's class: the file a write
// tool names is what it writes (Cursor's edit_file {target_file}), whatever the key is called.
func (s *state) generic(args map[string]any, used map[string]bool, hasCommand bool, class string) {
	keys := make([]string, 0, len(args))
	for k := range args {
		if !used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := args[k]
		switch {
		case isURLKey(k):
			for _, str := range stringsOf(v) {
				if strings.Contains(str, "://") || looksLikeHost(str) {
					s.addURL(str, URLRequest, true)
				}
			}
		case isPathKey(k):
			for _, str := range stringsOf(v) {
				if strings.Contains(str, "://") {
					s.addURL(str, URLRequest, true)
					continue
				}
				s.addPath(str, classPathRole(class, pathRoleForKey(k)))
			}
		case !hasCommand && isCommandKey(k):
			s.command(v)
		}
	}
}

// classPathRole gives a generic path the role of its tool's class, unless the key said more.
func classPathRole(class, role string) string {
	if role != RoleArg {
		return role
	}
	switch class {
	case ClassFileWrite:
		return RoleWrite
	case ClassFileDelete:
		return RoleDelete
	case ClassFileRead:
		return RoleRead
	case ClassFileList, ClassFileSearch:
		return RoleList
	}
	return role
}

func isCommandKey(k string) bool {
	switch strings.ToLower(k) {
	case "command", "cmd", "shell", "script", "bash", "shell_command", "commandline", "command_line":
		return true
	}
	return false
}

// collectStrings gathers every string value (and object key) depth-first, bounded.
func (s *state) collectStrings(args map[string]any) {
	max := s.n.opt.MaxStrings
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if len(s.act.Strings) >= max {
			s.act.Truncated = true
			return
		}
		if depth > 128 {
			s.act.Truncated = true
			return
		}
		switch x := v.(type) {
		case string:
			s.act.Strings = append(s.act.Strings, x)
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				walk(x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(args, 0)
}

// textURLs finds scheme://… URLs in every string and adds those not already present.
func (s *state) textURLs() {
	for _, str := range s.act.Strings {
		if !strings.Contains(str, "://") {
			continue
		}
		for _, m := range urlInTextRE.FindAllString(str, 64) {
			s.addURL(strings.TrimRight(m, ".,:;!?"), URLText, false)
		}
	}
}

// setCwd moves the working directory other paths resolve against. A directory longer than PATH_MAX
// is refused (and the call marked Truncated): every path would carry it.
func (s *state) setCwd(dir string) {
	p, ok := resolvePath(dir, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	if len(p) > maxCwdBytes {
		s.act.Truncated = true
		return
	}
	s.cwd = p
}

func (s *state) addPath(raw, role string) {
	if raw == "" || raw == "-" {
		return
	}
	clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	clean = s.n.onDisk(clean) // links.go
	if inUnresolvedCwd(clean) {
		s.addUnresolved("path " + raw + " (relative to an unresolved working directory)")
	}
	// One entry per (clean, role); a generic "arg" entry gives way to a specific role.
	if s.pathSeen == nil {
		s.pathSeen = map[string]int{}
	}
	if i, ok := s.pathSeen[clean]; ok {
		prev := &s.act.Paths[i]
		switch {
		case prev.Role == role || role == RoleArg:
			return
		case prev.Role == RoleArg:
			prev.Role = role
			prev.InWorkspace = s.pathInWorkspace(clean, role)
			return
		}
		for _, p := range s.act.Paths {
			if p.Clean == clean && p.Role == role {
				return
			}
		}
	}
	if len(s.act.Paths) >= s.n.opt.MaxStrings {
		s.act.Truncated = true
		return
	}
	if _, ok := s.pathSeen[clean]; !ok {
		s.pathSeen[clean] = len(s.act.Paths)
	}
	kind := s.n.sens.classify(clean)
	dotdot := hasDotDot(raw)
	if kind == "" && dotdot && !inDir(clean, s.n.opt.Workspace) {
		kind = s.traversalKind(raw)
	}
	s.act.Paths = append(s.act.Paths, Path{Raw: raw, Clean: clean, Role: role,
		InWorkspace: s.pathInWorkspace(clean, role), Sensitive: kind != "", Kind: kind,
		DotDot: dotdot})
}

// traversalKind classifies where a path that climbs with ".." may land. How far a climb goes
// depends on how deep the working directory of the program really is (an MCP file server's
// cwd need not be the workspace), so its tail is classified at the root and at home too:
// "../../etc/passwd" may be /etc/passwd. "" when no landing place is sensitive.
func (s *state) traversalKind(raw string) string {
	tail := raw
	for {
		switch {
		case strings.HasPrefix(tail, "../"):
			tail = tail[3:]
		case strings.HasPrefix(tail, "./"):
			tail = tail[2:]
		default:
			if i := strings.LastIndex(tail, "/../"); i >= 0 { // a climb inside the path: its tail
				tail = tail[i+4:]
				continue
			}
			if tail == "" || tail == ".." || strings.HasPrefix(tail, "/") {
				return ""
			}
			for _, root := range []string{"/", s.n.opt.Home + "/"} {
				if k := s.n.sens.classify(path.Clean(root + tail)); k != "" {
					return k
				}
			}
			return ""
		}
	}
}

// pathInWorkspace: a path with role lies in the workspace. Deleting or moving away the
// workspace root itself is not a change inside it (effects_state.go).
func (s *state) pathInWorkspace(clean, role string) bool {
	if role == RoleDelete && isWorkspaceOrAncestor(clean, s.n.opt.Workspace) {
		return false
	}
	return inDir(clean, s.n.opt.Workspace)
}

// hasDotDot reports whether a path as written has a ".." element.
func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

func (s *state) addURL(raw, role string, assumeHTTP bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return
	}
	if s.urlSeen == nil {
		s.urlSeen = map[string]bool{}
	}
	if s.urlSeen[raw] { // the first role seen wins: request and connect are added before text
		return
	}
	if len(s.act.URLs) >= s.n.opt.MaxStrings {
		s.act.Truncated = true
		return
	}
	s.urlSeen[raw] = true
	s.act.URLs = append(s.act.URLs, parseURL(raw, role, assumeHTTP))
	s.nestedURLs(s.act.URLs[len(s.act.URLs)-1], 0) // urls_nested.go: URLs inside it are targets too
}

// addConnect adds a raw connection target.
func (s *state) addConnect(host, port string) {
	raw := "tcp://" + host
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		raw = "tcp://[" + host + "]"
	}
	if port != "" {
		raw += ":" + port
	}
	s.addURL(raw, URLConnect, false)
}

// lookupKey returns the values at a dotted key path; "*" walks every element of an array or value
// of an object.
func lookupKey(args map[string]any, key string) []any {
	if !strings.Contains(key, ".") {
		if v, ok := args[key]; ok && v != nil {
			return []any{v}
		}
		return nil
	}
	parts := strings.Split(key, ".")
	cur := []any{args}
	for _, p := range parts {
		var next []any
		for _, c := range cur {
			switch x := c.(type) {
			case map[string]any:
				if p == "*" {
					ks := make([]string, 0, len(x))
					for k := range x {
						ks = append(ks, k)
					}
					sort.Strings(ks)
					for _, k := range ks {
						next = append(next, x[k])
					}
				} else if v, ok := x[p]; ok && v != nil {
					next = append(next, v)
				}
			case []any:
				if p == "*" {
					next = append(next, x...)
				}
			}
		}
		cur = next
	}
	return cur
}

func topKey(k string) string {
	if i := strings.IndexByte(k, '.'); i >= 0 {
		return k[:i]
	}
	return k
}

// stringsOf returns v if it is a string, the strings of v if it is an array.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// joinText appends text values to cur, one per line: strings as they are, lists of strings item by
// item, other values (objects, numbers) as JSON.
func joinText(cur string, vs []any) string {
	for _, v := range vs {
		strs := stringsOf(v)
		if strs == nil {
			if b, err := json.Marshal(v); err == nil {
				strs = []string{string(b)}
			}
		}
		for _, str := range strs {
			if cur == "" {
				cur = str
			} else {
				cur += "\n" + str
			}
		}
	}
	return cur
}

// patchPaths reads the file names of an apply_patch document.
func (s *state) patchPaths(patch string) {
	codexFormat := strings.Contains(patch, "*** Begin Patch")
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			s.addPath(strings.TrimSpace(strings.TrimPrefix(line, "*** Add File: ")), RoleWrite)
		case strings.HasPrefix(line, "*** Update File: "):
			s.addPath(strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: ")), RoleWrite)
		case strings.HasPrefix(line, "*** Delete File: "):
			s.addPath(strings.TrimSpace(strings.TrimPrefix(line, "*** Delete File: ")), RoleDelete)
		case strings.HasPrefix(line, "*** Move to: "):
			s.addPath(strings.TrimSpace(strings.TrimPrefix(line, "*** Move to: ")), RoleDest)
		case !codexFormat && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")): // unified diff headers
			p := strings.TrimSpace(line[4:])
			if i := strings.IndexByte(p, '\t'); i >= 0 {
				p = p[:i]
			}
			if p != "/dev/null" && p != "" {
				p = strings.TrimPrefix(strings.TrimPrefix(p, "a/"), "b/")
				s.addPath(p, RoleWrite)
			}
		}
	}
}

// recipient normalises one recipient so that only what is an address on some domain looks like
// one: "Name <a@b>" and "mailto:a@b" are the address a@b; a chat handle ("@maria", Slack's
// "<@U0123>") is "user:NAME", no e-mail address; a Matrix id "@user:server" is an account on
// that server, written user@server so its domain is judged like an e-mail's.
func recipient(r string) string {
	r = strings.TrimSpace(r)
	if i := strings.LastIndexByte(r, '<'); i >= 0 && strings.HasSuffix(r, ">") {
		r = strings.TrimSpace(r[i+1 : len(r)-1])
	}
	if len(r) > 7 && strings.EqualFold(r[:7], "mailto:") {
		r = r[7:]
	}
	if h, ok := strings.CutPrefix(r, "@"); ok && h != "" && !strings.Contains(h, "@") {
		if user, server, ok := strings.Cut(h, ":"); ok && user != "" && server != "" {
			return user + "@" + server
		}
		return "user:" + h
	}
	return r
}
