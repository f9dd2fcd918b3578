package regoeval

import (
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
			cmds[i] = ast.NewTerm(commandValue(&a.Commands[i]))
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
		labels := ast.InternedEmptyObject
		if len(cc.Labels) > 0 {
			o := ast.NewObjectWithCapacity(len(cc.Labels))
			for k, v := range cc.Labels {
				o.Insert(ast.StringTerm(k), ast.StringTerm(v))
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

func commandValue(c *normalize.Command) ast.Value {
	redirs := ast.InternedEmptyArray
	if len(c.Redirects) > 0 {
		rs := make([]*ast.Term, len(c.Redirects))
		for i, r := range c.Redirects {
			rs[i] = ast.ObjectTerm(str("op", r.Op), str("fd", r.Fd), str("path", r.Path))
		}
		redirs = ast.ArrayTerm(rs...)
	}
	return ast.NewObject(
		str("name", c.Name),
		strs("args", c.Args),
		strs("argv", c.Argv),
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

func str(k, v string) [2]*ast.Term { return [2]*ast.Term{key(k), ast.InternedTerm(v)} }

func boolean(k string, v bool) [2]*ast.Term { return [2]*ast.Term{key(k), ast.InternedTerm(v)} }

func num(k string, v int) [2]*ast.Term { return [2]*ast.Term{key(k), ast.InternedTerm(v)} }

func strs(k string, l []string) [2]*ast.Term {
	if len(l) == 0 {
		return [2]*ast.Term{key(k), ast.InternedEmptyArray}
	}
	terms := make([]*ast.Term, len(l))
	for i, s := range l {
		terms[i] = ast.InternedTerm(s)
	}
	return [2]*ast.Term{key(k), ast.ArrayTerm(terms...)}
}
