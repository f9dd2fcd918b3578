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
	args := ast.NewObject()
	if a.Args != nil {
		v, err := ast.InterfaceToValue(a.Args)
		if err != nil {
			return nil, err
		}
		if o, ok := v.(ast.Object); ok {
			args = o
		}
	}
	var cc shield.CallContext
	if call != nil {
		cc = call.Context
	}
	labels := ast.NewObjectWithCapacity(len(cc.Labels))
	for k, v := range cc.Labels {
		labels.Insert(ast.StringTerm(k), ast.StringTerm(v))
	}
	ctx := ast.NewObject(
		str("session_id", cc.SessionID),
		str("agent_id", cc.AgentID),
		str("runtime", cc.Runtime),
		str("caller", cc.Caller),
		[2]*ast.Term{key("labels"), ast.NewTerm(labels)},
	)
	cmds := ast.NewArrayWithCapacity(len(a.Commands))
	for i := range a.Commands {
		cmds = cmds.Append(ast.NewTerm(commandValue(&a.Commands[i])))
	}
	paths := ast.NewArrayWithCapacity(len(a.Paths))
	for _, p := range a.Paths {
		paths = paths.Append(ast.ObjectTerm(
			str("raw", p.Raw),
			str("clean", p.Clean),
			str("role", p.Role),
			boolean("in_workspace", p.InWorkspace),
			boolean("sensitive", p.Sensitive),
			str("kind", p.Kind),
			boolean("dotdot", p.DotDot),
		))
	}
	urls := ast.NewArrayWithCapacity(len(a.URLs))
	for _, u := range a.URLs {
		urls = urls.Append(ast.ObjectTerm(
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
		))
	}
	effects := ast.NewArrayWithCapacity(len(a.Effects))
	for _, e := range a.Effects {
		effects = effects.Append(ast.ObjectTerm(
			str("kind", e.Kind),
			str("target", e.Target),
			str("program", e.Program),
			str("detail", e.Detail),
			boolean("in_workspace", e.InWorkspace),
			boolean("sensitive", e.Sensitive),
			boolean("unresolved", e.Unresolved),
			num("port", e.Port),
			str("remote", e.Remote),
		))
	}
	flows := ast.NewArrayWithCapacity(len(a.Flows))
	for _, f := range a.Flows {
		flows = flows.Append(ast.ObjectTerm(num("from", f.From), num("to", f.To), str("via", f.Via)))
	}
	return ast.NewObject(
		str("tool", a.Tool),
		str("class", a.Class),
		boolean("known", a.Known),
		ast.Item(key("args"), ast.NewTerm(args)),
		str("cwd", a.Cwd),
		str("workspace", a.Workspace),
		str("command", a.Command),
		ast.Item(key("commands"), ast.NewTerm(cmds)),
		str("parse_error", a.ParseError),
		ast.Item(key("paths"), ast.NewTerm(paths)),
		ast.Item(key("urls"), ast.NewTerm(urls)),
		strs("recipients", a.Recipients),
		str("body", a.Body),
		str("content", a.Content),
		str("prompt", a.Prompt),
		str("method", a.Method),
		strs("strings", a.Strings),
		ast.Item(key("effects"), ast.NewTerm(effects)),
		ast.Item(key("flows"), ast.NewTerm(flows)),
		strs("unresolved", a.Unresolved),
		strs("unknown_programs", a.UnknownPrograms),
		boolean("truncated", a.Truncated),
		ast.Item(key("context"), ast.NewTerm(ctx)),
	), nil
}

func commandValue(c *normalize.Command) ast.Value {
	redirs := ast.NewArrayWithCapacity(len(c.Redirects))
	for _, r := range c.Redirects {
		redirs = redirs.Append(ast.ObjectTerm(str("op", r.Op), str("fd", r.Fd), str("path", r.Path)))
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
		ast.Item(key("redirects"), ast.NewTerm(redirs)),
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
		"effects", "flows", "unresolved", "unknown_programs", "target", "program", "detail", "from", "to",
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
	terms := make([]*ast.Term, len(l))
	for i, s := range l {
		terms[i] = ast.InternedTerm(s)
	}
	return [2]*ast.Term{key(k), ast.ArrayTerm(terms...)}
}
