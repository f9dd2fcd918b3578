package regoeval

import (
	"maps"
	"slices"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// InputValue builds the Rego input for an action and its call straight as an ast.Value, without
// a JSON round trip. It equals the JSON encoding of the action plus "context", except that
// lists and maps are never null but empty (TestInputMatchesJSON checks it).
func InputValue(a *normalize.Action, call *shield.Call) (ast.Value, error) {
	return inputValue(a, call, nil)
}

// inputValue is InputValue with only the top-level keys keep holds (nil: every key).
func inputValue(a *normalize.Action, call *shield.Call, keep map[string]bool) (ast.Value, error) {
	return buildInput(a, call, keep, nil)
}

// buildInput is inputValue with a vocabulary: strings of the input found in vocab are its
// shared terms (see Engine.vocab), others are allocated from the builder's slab.
func buildInput(a *normalize.Action, call *shield.Call, keep map[string]bool, vocab map[string]*ast.Term) (ast.Value, error) {
	b := &inputBuilder{vocab: vocab}
	str, strs := b.str, b.strs
	want := func(k string) bool { return keep == nil || keep[k] }
	items := make([][2]*ast.Term, 0, 23)
	add := func(k string, f func() *ast.Term) {
		if want(k) {
			items = append(items, [2]*ast.Term{key(k), f()})
		}
	}
	addStr := func(k, v string) {
		if want(k) {
			items = append(items, str(k, v))
		}
	}
	addStrs := func(k string, l []string) {
		if want(k) {
			items = append(items, strs(k, l))
		}
	}
	addStr("tool", a.Tool)
	addStr("class", a.Class)
	if want("known") {
		items = append(items, boolean("known", a.Known))
	}
	if want("args") {
		args := ast.InternedEmptyObject
		if len(a.Args) > 0 {
			v, err := ast.InterfaceToValue(a.Args)
			if err != nil {
				return nil, err
			}
			if _, ok := v.(ast.Object); ok {
				args = ast.NewTerm(v)
			}
		}
		items = append(items, [2]*ast.Term{key("args"), args})
	}
	addStr("cwd", a.Cwd)
	addStr("workspace", a.Workspace)
	addStr("command", a.Command)
	add("commands", func() *ast.Term {
		if len(a.Commands) == 0 {
			return ast.InternedEmptyArray
		}
		cmds := make([]*ast.Term, len(a.Commands))
		for i := range a.Commands {
			cmds[i] = ast.NewTerm(b.commandValue(&a.Commands[i]))
		}
		return ast.ArrayTerm(cmds...)
	})
	addStr("parse_error", a.ParseError)
	add("paths", func() *ast.Term {
		if len(a.Paths) == 0 {
			return ast.InternedEmptyArray
		}
		paths := make([]*ast.Term, len(a.Paths))
		for i, p := range a.Paths {
			paths[i] = ast.ObjectTerm(
				str("raw", p.Raw),
				str("clean", p.Clean),
				str("role", p.Role),
				boolean("in_workspace", p.InWorkspace),
				boolean("sensitive", p.Sensitive),
				str("kind", p.Kind),
				boolean("dotdot", p.DotDot),
			)
		}
		return ast.ArrayTerm(paths...)
	})
	add("urls", func() *ast.Term {
		if len(a.URLs) == 0 {
			return ast.InternedEmptyArray
		}
		urls := make([]*ast.Term, len(a.URLs))
		for i, u := range a.URLs {
			urls[i] = ast.ObjectTerm(
				str("raw", u.Raw),
				str("scheme", u.Scheme),
				str("host", u.Host),
				num("port", u.Port),
				str("path", u.Path),
				str("query", u.Query),
				boolean("userinfo", u.UserInfo),
				str("ip_class", u.IPClass),
				str("role", u.Role),
				str("registrable", u.Registrable),
			)
		}
		return ast.ArrayTerm(urls...)
	})
	addStrs("recipients", a.Recipients)
	addStr("body", a.Body)
	addStr("content", a.Content)
	addStr("prompt", a.Prompt)
	addStr("method", a.Method)
	addStrs("strings", a.Strings)
	add("effects", func() *ast.Term {
		if len(a.Effects) == 0 {
			return ast.InternedEmptyArray
		}
		effects := make([]*ast.Term, len(a.Effects))
		for i, e := range a.Effects {
			if e.Inline != "" {
				// Inline code the normaliser analysed: "confined" or "capable: why".
				effects[i] = ast.ObjectTerm(
					str("kind", e.Kind), str("target", e.Target), str("program", e.Program), str("detail", e.Detail),
					boolean("in_workspace", e.InWorkspace), boolean("sensitive", e.Sensitive), boolean("unresolved", e.Unresolved),
					num("port", e.Port), str("remote", e.Remote), str("inline", e.Inline))
				continue
			}
			effects[i] = ast.ObjectTerm(
				str("kind", e.Kind),
				str("target", e.Target),
				str("program", e.Program),
				str("detail", e.Detail),
				boolean("in_workspace", e.InWorkspace),
				boolean("sensitive", e.Sensitive),
				boolean("unresolved", e.Unresolved),
				num("port", e.Port),
				str("remote", e.Remote),
			)
		}
		return ast.ArrayTerm(effects...)
	})
	add("flows", func() *ast.Term {
		if len(a.Flows) == 0 {
			return ast.InternedEmptyArray
		}
		flows := make([]*ast.Term, len(a.Flows))
		for i, f := range a.Flows {
			flows[i] = ast.ObjectTerm(num("from", f.From), num("to", f.To), str("via", f.Via))
		}
		return ast.ArrayTerm(flows...)
	})
	addStrs("unresolved", a.Unresolved)
	addStrs("unknown_programs", a.UnknownPrograms)
	if want("truncated") {
		items = append(items, boolean("truncated", a.Truncated))
	}
	add("context", func() *ast.Term {
		var cc shield.CallContext
		if call != nil {
			cc = call.Context
		}
		if cc.SessionID == "" && cc.AgentID == "" && cc.Runtime == "" && cc.Caller == "" && len(cc.Labels) == 0 {
			return emptyContext // shared, never modified (as OPA's interned terms)
		}
		labels := ast.InternedEmptyObject
		if len(cc.Labels) > 0 {
			o := ast.NewObjectWithCapacity(len(cc.Labels))
			for k, v := range cc.Labels {
				o.Insert(b.term(k), b.term(v))
			}
			labels = ast.NewTerm(o)
		}
		return ast.ObjectTerm(
			str("session_id", cc.SessionID),
			str("agent_id", cc.AgentID),
			str("runtime", cc.Runtime),
			str("caller", cc.Caller),
			[2]*ast.Term{key("labels"), labels},
		)
	})
	return ast.NewObject(items...), nil
}

func (b *inputBuilder) commandValue(c *normalize.Command) ast.Value {
	str, strs := b.str, b.strs
	redirs := ast.InternedEmptyArray
	if len(c.Redirects) > 0 {
		rs := make([]*ast.Term, len(c.Redirects))
		for i, r := range c.Redirects {
			rs[i] = ast.ObjectTerm(str("op", r.Op), str("fd", r.Fd), str("path", r.Path))
		}
		redirs = ast.ArrayTerm(rs...)
	}
	args, argv := b.args(c)
	return ast.NewObject(
		str("name", c.Name),
		args,
		argv,
		str("raw", c.Raw),
		num("depth", c.Depth),
		str("via", c.Via),
		boolean("pipe", c.Pipe),
		num("pipe_index", c.PipeIndex),
		ast.Item(key("redirects"), redirs),
		boolean("dynamic", c.Dynamic),
		boolean("sudo", c.Sudo),
		boolean("background", c.Background),
		strs("env", c.Env),
	)
}

// emptyContext is input.context of a call without context: every field empty.
var emptyContext = ast.ObjectTerm(
	[2]*ast.Term{ast.StringTerm("session_id"), ast.InternedTerm("")},
	[2]*ast.Term{ast.StringTerm("agent_id"), ast.InternedTerm("")},
	[2]*ast.Term{ast.StringTerm("runtime"), ast.InternedTerm("")},
	[2]*ast.Term{ast.StringTerm("caller"), ast.InternedTerm("")},
	[2]*ast.Term{ast.StringTerm("labels"), ast.InternedEmptyObject},
)

// keyTerms holds one shared, never-modified term per object key of the input, so that building
// an input allocates only for values.
var keyTerms = map[string]*ast.Term{}

func init() {
	for _, k := range []string{
		"tool", "class", "known", "args", "cwd", "workspace", "command", "commands", "parse_error",
		"paths", "urls", "recipients", "body", "content", "prompt", "method", "strings", "truncated",
		"context", "session_id", "agent_id", "runtime", "caller", "labels",
		"name", "argv", "raw", "depth", "via", "pipe", "pipe_index", "redirects", "dynamic", "sudo",
		"background", "env", "op", "fd", "path", "clean", "role", "in_workspace", "sensitive", "kind",
		"dotdot", "scheme", "host", "port", "query", "userinfo", "ip_class", "registrable",
		"effects", "flows", "unresolved", "unknown_programs", "target", "program", "detail", "from", "to", "inline",
		gateInputKey,
	} {
		keyTerms[k] = ast.StringTerm(k)
	}
}

func key(k string) *ast.Term {
	if t, ok := keyTerms[k]; ok {
		return t
	}
	return ast.StringTerm(k)
}

// inputBuilder builds one input. Its strings come from the vocabulary when they are in it
// (shared terms, never modified: OPA never modifies the terms of an input, as it shares
// interned ones) and otherwise from a slab of terms allocated a chunk at a time, so that a string
// costs one allocation (its value) instead of two.
type inputBuilder struct {
	vocab map[string]*ast.Term
	slab  []ast.Term
}

// slabChunk is the number of terms one allocation of the slab holds.
const slabChunk = 64

func (b *inputBuilder) term(s string) *ast.Term {
	if t, ok := b.vocab[s]; ok {
		return t
	}
	if len(s) == 0 {
		return ast.InternedTerm(s)
	}
	if len(b.slab) == 0 {
		b.slab = make([]ast.Term, slabChunk)
	}
	t := &b.slab[0]
	b.slab = b.slab[1:]
	t.Value = ast.String(s)
	return t
}

func (b *inputBuilder) str(k, v string) [2]*ast.Term { return [2]*ast.Term{key(k), b.term(v)} }

func boolean(k string, v bool) [2]*ast.Term { return [2]*ast.Term{key(k), ast.InternedTerm(v)} }

func num(k string, v int) [2]*ast.Term { return [2]*ast.Term{key(k), ast.InternedTerm(v)} }

func (b *inputBuilder) strs(k string, l []string) [2]*ast.Term {
	if len(l) == 0 {
		return [2]*ast.Term{key(k), ast.InternedEmptyArray}
	}
	terms := make([]*ast.Term, len(l))
	for i, s := range l {
		terms[i] = b.term(s)
	}
	return [2]*ast.Term{key(k), ast.ArrayTerm(terms...)}
}

// args returns the command's args and argv items. When argv is the name followed by the
// arguments (the usual case) its terms after the first are the arguments' own (equal strings, one
// allocation each instead of two), in a slice of its own: neither array shares the other's
// storage.
func (b *inputBuilder) args(c *normalize.Command) (args, argv [2]*ast.Term) {
	args = b.strs("args", c.Args)
	if len(c.Argv) != len(c.Args)+1 || len(c.Args) == 0 || !slices.Equal(c.Argv[1:], c.Args) {
		return args, b.strs("argv", c.Argv)
	}
	terms := make([]*ast.Term, len(c.Argv))
	terms[0] = b.term(c.Argv[0])
	a := args[1].Value.(*ast.Array)
	for i := range c.Args {
		terms[i+1] = a.Elem(i)
	}
	return args, [2]*ast.Term{key("argv"), ast.ArrayTerm(terms...)}
}

// Bounds of an engine's vocabulary: strings longer than maxVocabString are rarely repeated
// whole in an input, and a bundle with many strings keeps only the first maxVocab.
const (
	maxVocab       = 1 << 14
	maxVocabString = 128
)

// vocabulary collects the string constants of the served modules and the strings of the data
// (keys and values), as shared terms: the effect kinds, classes, roles, program names and hosts
// the rules compare the input with are the strings an input most often holds.
func vocabulary(mods map[string]*ast.Module, data map[string]any) map[string]*ast.Term {
	v := map[string]*ast.Term{}
	add := func(s string) {
		if len(s) == 0 || len(s) > maxVocabString || len(v) >= maxVocab {
			return
		}
		if _, ok := v[s]; !ok {
			v[s] = ast.StringTerm(s)
		}
	}
	files := make([]string, 0, len(mods))
	for f := range mods {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		ast.WalkTerms(mods[f], func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok {
				add(string(s))
			}
			return false
		})
	}
	var walk func(x any, depth int)
	walk = func(x any, depth int) {
		if depth > 32 || len(v) >= maxVocab {
			return
		}
		switch x := x.(type) {
		case string:
			add(x)
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				add(k)
				walk(x[k], depth+1)
			}
		case []any:
			for _, y := range x {
				walk(y, depth+1)
			}
		}
	}
	walk(data, 0)
	return v
}
