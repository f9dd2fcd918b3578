package normalize

import (
	"container/list"
	"context"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Session context (issue 11, item 4): effects accumulate per session. What an allowed call did
// is observed; a later call of the same session carries what that history means for it:
//
//   - a secret read earlier in the session: the later call gets a secret effect with detail
//     DetailSession, so anything it sends off the host is judged as data that may carry the secret
//     (the bundle escalates it: effects.session-secret-egress);
//   - a git remote repointed earlier in the session (git remote add/set-url, git config
//     remote.NAME.url …; effects_state.go): a later push to that remote's name goes to the URL it
//     was given, and its push effect says so (Target the URL, Detail "remote=NAME,session");
//   - a file written earlier in the session with known content (a Write, an edit, an apply_patch
//     added file): a later call that runs it gets the effects of that content, read as shell (or
//     as inline code of the interpreter its extension names), with Program "session:PATH".
//
// Sessions is bounded: at most MaxSessions sessions (least recently used evicted), per session at
// most maxSessionSecrets secrets and maxSessionFiles files of at most maxSessionFileBytes each.
// Calls without a session id are not tracked. The state lives in memory: a restart forgets it
// (each call is then judged alone, as without sessions). Version changes whenever a session's
// state does, so a verdict cache keyed on it never serves a verdict computed without the history.

// DetailSession is the detail of effects that come from the session's history.
const DetailSession = "session"

const (
	DefaultMaxSessions  = 4096
	maxSessionSecrets   = 32
	maxSessionFiles     = 32
	maxSessionFileBytes = 64 << 10
	maxSessionRemotes   = 16
)

// Sessions is the per-session history. The zero value is not usable; NewSessions makes one. Safe
// for concurrent use.
type Sessions struct {
	mu    sync.Mutex
	max   int
	m     map[string]*list.Element
	order *list.List // front = most recently used
	gen   uint64     // makes versions unique across evictions
}

type sessionState struct {
	id      string
	version uint64
	secrets []string          // targets of secret effects, in order, unique
	files   map[string]string // cleaned path → content written in the session
	remotes map[string]string // git remote name → the URL the session set it to
}

// NewSessions returns a history of at most max sessions (≤ 0: DefaultMaxSessions).
func NewSessions(max int) *Sessions {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &Sessions{max: max, m: map[string]*list.Element{}, order: list.New()}
}

// Version is a number that changes whenever the session's history does (0: no history).
func (ss *Sessions) Version(session string) uint64 {
	if ss == nil || session == "" {
		return 0
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if el, ok := ss.m[session]; ok {
		return el.Value.(*sessionState).version
	}
	return 0
}

// Observe records what a call that was allowed to run did in its session: the secrets it read and
// the content of the files it wrote. n, when given, reads the content shell commands of an exec
// call write (cat/tee of a here-document, echo/printf redirected).
func (ss *Sessions) Observe(session string, a *Action, n *Normalizer) {
	if ss == nil || session == "" || a == nil {
		return
	}
	var secrets []string
	for _, e := range a.Effects {
		if e.Kind == EffectSecret && e.Detail != DetailSession && e.Detail != DetailContent {
			secrets = append(secrets, e.Target)
		}
	}
	files := map[string]string{}
	if a.Content != "" && (a.Class == ClassFileWrite || a.Class == ClassExec) {
		for _, p := range a.Paths {
			if p.Role == RoleWrite && len(files) < maxSessionFiles {
				files[p.Clean] = a.Content
			}
		}
	}
	if n != nil && a.Class == ClassExec && writesWithShell(a) {
		for p, c := range n.writtenBy(a.Command, a.Cwd) {
			if len(files) < maxSessionFiles {
				files[p] = c
			}
		}
	}
	var remotes map[string]string
	if n != nil && a.Class == ClassExec && setsRemotes(a) {
		remotes = n.remotesSetBy(a.Command, a.Cwd)
	}
	if len(secrets) == 0 && len(files) == 0 && len(remotes) == 0 {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := ss.get(session)
	changed := false
	for name, url := range remotes {
		if st.remotes == nil {
			st.remotes = map[string]string{}
		}
		if _, ok := st.remotes[name]; !ok && len(st.remotes) >= maxSessionRemotes {
			// Past the bound a name is not forgotten silently: it goes nowhere known.
			url = ""
			name = "*"
		}
		if st.remotes[name] != url || url == "" {
			st.remotes[name] = url
			changed = true
		}
	}
	for _, t := range secrets {
		if len(st.secrets) >= maxSessionSecrets {
			break
		}
		if !containsString(st.secrets, t) {
			st.secrets = append(st.secrets, t)
			changed = true
		}
	}
	for p, c := range files {
		if st.files == nil {
			st.files = map[string]string{}
		}
		if _, ok := st.files[p]; !ok && len(st.files) >= maxSessionFiles {
			continue
		}
		if len(c) > maxSessionFileBytes {
			c = c[:maxSessionFileBytes]
		}
		if st.files[p] != c {
			st.files[p] = c
			changed = true
		}
	}
	if changed {
		ss.gen++
		st.version = ss.gen
	}
}

// get returns the session's state, creating it and evicting the least recently used; ss.mu held.
func (ss *Sessions) get(session string) *sessionState {
	if el, ok := ss.m[session]; ok {
		ss.order.MoveToFront(el)
		return el.Value.(*sessionState)
	}
	for ss.order.Len() >= ss.max {
		old := ss.order.Back()
		ss.order.Remove(old)
		delete(ss.m, old.Value.(*sessionState).id)
	}
	st := &sessionState{id: session}
	ss.m[session] = ss.order.PushFront(st)
	return st
}

// snapshot copies what Annotate needs, under the lock.
func (ss *Sessions) snapshot(session string) (secrets []string, files, remotes map[string]string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	el, ok := ss.m[session]
	if !ok {
		return nil, nil, nil
	}
	st := el.Value.(*sessionState)
	secrets = append(secrets, st.secrets...)
	if len(st.remotes) > 0 {
		remotes = make(map[string]string, len(st.remotes))
		for k, v := range st.remotes {
			remotes[k] = v
		}
	}
	if len(st.files) > 0 {
		files = make(map[string]string, len(st.files))
		for k, v := range st.files {
			files[k] = v
		}
	}
	return secrets, files, remotes
}

// Annotate adds to a, a call of session, the effects its session's history gives it (see the
// package comment above). n reads the content of files the call runs; nil skips that part.
func (ss *Sessions) Annotate(ctx context.Context, n *Normalizer, session string, a *Action) {
	if ss == nil || session == "" || a == nil {
		return
	}
	secrets, files, remotes := ss.snapshot(session)
	if len(secrets) == 0 && len(files) == 0 && len(remotes) == 0 {
		return
	}
	repointPushes(a, remotes)
	add := func(e Effect) {
		if len(a.Effects) < DefaultMaxStrings {
			a.Effects = append(a.Effects, e)
		} else {
			a.Truncated = true
		}
	}
	for _, t := range secrets {
		add(Effect{Kind: EffectSecret, Target: t, Program: "session", Detail: DetailSession, Sensitive: true})
	}
	if n == nil || len(files) == 0 {
		return
	}
	// The files this call runs: exec effects on a path, and scripts handed to an interpreter.
	ran := map[string]bool{}
	for _, e := range a.Effects {
		if e.Kind == EffectExec && strings.HasPrefix(e.Target, "/") {
			if _, ok := files[e.Target]; ok {
				ran[e.Target] = true
			}
		}
	}
	for _, p := range a.Paths {
		if _, ok := files[p.Clean]; ok && (p.Role == RoleExec || a.Class == ClassExec && runsFile(a, p.Clean)) {
			ran[p.Clean] = true
		}
	}
	for p := range ran {
		inner := n.NormalizeContext(ctx, "Bash", map[string]any{"command": scriptCommand(p, files[p])}, a.Cwd)
		for _, e := range inner.Effects {
			e.Program = "session:" + p
			add(e)
		}
		a.Unresolved = append(a.Unresolved, inner.Unresolved...)
		a.UnknownPrograms = append(a.UnknownPrograms, inner.UnknownPrograms...)
		if inner.ParseError != "" && a.ParseError == "" {
			a.ParseError = "a script written earlier in the session: " + inner.ParseError
		}
		a.Truncated = a.Truncated || inner.Truncated
	}
}

// runsFile: the exec call hands the file to a program that runs it (bash x.sh, python3 x.py,
// ./x.sh, source x.sh): one of its commands names it as argv[0] or as its first operand.
func runsFile(a *Action, clean string) bool {
	base := path.Base(clean)
	for _, c := range a.Commands {
		if len(c.Argv) == 0 {
			continue
		}
		if path.Base(c.Argv[0]) == base && strings.Contains(c.Argv[0], "/") {
			return true
		}
		for _, arg := range c.Args {
			if strings.HasPrefix(arg, "-") {
				continue
			}
			if path.Base(arg) == base {
				return true
			}
			break
		}
	}
	return false
}

// scriptCommand is the shell command whose effects are those of running a file with content:
// the content itself for a shell script, inline code of the interpreter its extension names
// otherwise.
func scriptCommand(p, content string) string {
	interp := ""
	switch path.Ext(p) {
	case ".py":
		interp = "python3 -c "
	case ".js", ".mjs", ".cjs":
		interp = "node -e "
	case ".rb":
		interp = "ruby -e "
	case ".pl":
		interp = "perl -e "
	case ".php":
		interp = "php -r "
	}
	if interp == "" {
		return content
	}
	q, err := syntax.Quote(content, syntax.LangBash)
	if err != nil {
		return content
	}
	return interp + q
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// writesWithShell: one of the call's commands may write content the session should remember.
func writesWithShell(a *Action) bool {
	for _, c := range a.Commands {
		switch c.Name {
		case "tee":
			return true
		case "cat", "echo", "printf":
			for _, r := range c.Redirects {
				if r.Op == ">" || r.Op == ">>" || r.Op == "&>" || r.Op == ">|" {
					return true
				}
			}
		}
	}
	return false
}

// writtenBy walks command (an exec call's command line, as normalised) again and returns the
// content its shell commands write, by cleaned path.
func (n *Normalizer) writtenBy(command, cwd string) (out map[string]string) {
	if command == "" {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	act := &Action{Tool: "Bash", Class: ClassExec, Workspace: n.opt.Workspace}
	s := &state{n: n, act: act, ctx: context.Background(), cwd: n.opt.Workspace}
	if cwd != "" && len(cwd) <= maxCwdBytes {
		s.cwd, _ = resolvePath(cwd, n.opt.Workspace, n.opt.Home)
	}
	s.command(command)
	return s.written
}

// recordWritten notes the content a shell command writes to files: cat or tee fed a here-document
// or here-string, echo or printf redirected. Bounded like the session history.
func (w *walker) recordWritten(c *Command, stdin string) {
	var content string
	switch c.Name {
	case "cat", "tee":
		content = stdin
	case "echo", "printf":
		args := c.Args
		esc := c.Name == "printf"
		for len(args) > 0 && c.Name == "echo" && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne") {
			esc = esc || strings.Contains(args[0], "e")
			args = args[1:]
		}
		if esc && len(args) > 0 {
			// The escapes printf's format and echo -e interpret: the file gets lines and tabs.
			args = append([]string{printfEscapes.Replace(args[0])}, args[1:]...)
		}
		sep := " "
		if c.Name == "printf" && len(args) > 1 && strings.Contains(args[0], "%") {
			args, sep = args[1:], "\n" // the format's arguments, one per line at most
		}
		content = strings.Join(args, sep) + "\n"
	default:
		return
	}
	if strings.TrimSpace(content) == "" {
		return
	}
	if len(content) > maxSessionFileBytes {
		content = content[:maxSessionFileBytes]
	}
	var targets []string
	for _, r := range c.Redirects {
		if (r.Op == ">" || r.Op == ">>" || r.Op == "&>" || r.Op == ">|") && strings.HasPrefix(r.Path, "/") && (r.Fd == "" || r.Fd == "1") {
			targets = append(targets, r.Path)
		}
	}
	if c.Name == "tee" {
		for _, a := range c.Args {
			if !strings.HasPrefix(a, "-") {
				if clean, ok := resolvePath(a, w.s.cwd, w.s.n.opt.Home); ok {
					targets = append(targets, clean)
				}
			}
		}
	}
	s := w.s
	for _, t := range targets {
		if s.written == nil {
			s.written = map[string]string{}
		}
		if _, ok := s.written[t]; !ok && len(s.written) >= maxSessionFiles {
			return
		}
		if hasAppend(c.Redirects, t) {
			s.written[t] += content
			if len(s.written[t]) > maxSessionFileBytes {
				s.written[t] = s.written[t][:maxSessionFileBytes]
			}
			continue
		}
		s.written[t] = content
	}
}

func hasAppend(rs []Redirect, path string) bool {
	for _, r := range rs {
		if r.Op == ">>" && r.Path == path {
			return true
		}
	}
	return false
}

// setsRemotes: one of the call's commands may repoint a git remote (git remote …, git config …).
func setsRemotes(a *Action) bool {
	for _, c := range a.Commands {
		if c.Name != "git" {
			continue
		}
		for _, arg := range c.Args {
			if arg == "remote" || arg == "config" {
				return true
			}
		}
	}
	return false
}

// remotesSetBy walks command (an exec call's command line, as normalised) again and returns the
// git remotes it repoints, name → URL.
func (n *Normalizer) remotesSetBy(command, cwd string) (out map[string]string) {
	if command == "" {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	act := &Action{Tool: "Bash", Class: ClassExec, Workspace: n.opt.Workspace}
	s := &state{n: n, act: act, ctx: context.Background(), cwd: n.opt.Workspace}
	if cwd != "" && len(cwd) <= maxCwdBytes {
		s.cwd, _ = resolvePath(cwd, n.opt.Workspace, n.opt.Home)
	}
	s.command(command)
	return s.remoteChanges()
}

// repointPushes rewrites the push effects of a whose remote the session repointed: the push goes
// to the URL the remote was given. A remote past the session's bound ("*") makes every push to a
// named remote unresolved.
func repointPushes(a *Action, remotes map[string]string) {
	if len(remotes) == 0 {
		return
	}
	for i := range a.Effects {
		e := &a.Effects[i]
		if e.Kind != EffectPush || e.Detail == DetailSession || strings.Contains(e.Target, "://") || strings.Contains(e.Target, "@") {
			continue
		}
		name := e.Target
		if name == "(upstream)" {
			name = "origin"
		}
		url, ok := remotes[name]
		if !ok {
			if _, over := remotes["*"]; !over {
				continue
			}
		}
		if e.Detail != "" {
			e.Detail += ","
		}
		e.Detail += "remote=" + name + ",session"
		if url == "" || isUnresolvedText(url) {
			e.Unresolved = true
			a.Unresolved = append(a.Unresolved, "push "+name+" (a remote repointed earlier in the session)")
			continue
		}
		e.Target = url
	}
}

// printfEscapes: the escapes of printf's format (and echo -e) that shape a file's lines.
var printfEscapes = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r")
