package celrules

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"github.com/gobwas/glob"

	"github.com/shieldsec/shield/shield/normalize"
)

// Context is the call context rules see as the variable ctx.
type Context struct {
	SessionID string            `json:"session_id"`
	AgentID   string            `json:"agent_id"`
	Runtime   string            `json:"runtime"`
	Caller    string            `json:"caller"`
	Labels    map[string]string `json:"labels"`
}

// Variables is the list of variable names rules may read, in declaration order.
var Variables = []string{
	"tool", "class", "known", "args", "cwd", "workspace", "command", "commands", "parse_error",
	"paths", "urls", "recipients", "body", "content", "prompt", "method", "strings", "truncated", "ctx", "names",
	"effects", "flows", "unresolved", "unknown_programs",
}

// newEnv returns a new CEL environment with the rule variables and functions (one per compile,
// so that bundles share nothing).
func newEnv() (*cel.Env, error) {
	return cel.NewEnv(envOptions()...)
}

func envOptions() []cel.EnvOption {
	{
		cmd := cel.ObjectType("normalize.Command")
		path := cel.ObjectType("normalize.Path")
		url := cel.ObjectType("normalize.URL")
		strList := cel.ListType(cel.StringType)
		return []cel.EnvOption{
			// The fused per-class program holds every rule of the class; a rule file is bounded
			// by the bundle's file size limit, so this only lifts the default 100 000 code points.
			cel.ParserExpressionSizeLimit(8 << 20),
			ext.NativeTypes(
				reflect.TypeOf(normalize.Command{}),
				reflect.TypeOf(normalize.Redirect{}),
				reflect.TypeOf(normalize.Path{}),
				reflect.TypeOf(normalize.URL{}),
				reflect.TypeOf(normalize.Effect{}),
				reflect.TypeOf(normalize.Flow{}),
				reflect.TypeOf(Context{}),
				ext.ParseStructTag("json"),
			),
			ext.Strings(),
			ext.Lists(),
			ext.Sets(),
			ext.Encoders(),
			cel.Variable("tool", cel.StringType),
			cel.Variable("class", cel.StringType),
			cel.Variable("known", cel.BoolType),
			cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("cwd", cel.StringType),
			cel.Variable("workspace", cel.StringType),
			cel.Variable("command", cel.StringType),
			cel.Variable("commands", cel.ListType(cmd)),
			cel.Variable("parse_error", cel.StringType),
			cel.Variable("paths", cel.ListType(path)),
			cel.Variable("urls", cel.ListType(url)),
			cel.Variable("recipients", strList),
			cel.Variable("body", cel.StringType),
			cel.Variable("content", cel.StringType),
			cel.Variable("prompt", cel.StringType),
			cel.Variable("method", cel.StringType),
			cel.Variable("strings", strList),
			cel.Variable("truncated", cel.BoolType),
			// names: the name of every parsed command (commands.map(c, c.name), precomputed), so
			// rules can test membership cheaply: sets.intersects(names, ['curl', 'wget']).
			cel.Variable("names", strList),
			cel.Variable("ctx", cel.ObjectType("celrules.Context")),
			// effects: what the call would do (normalize/effects.go); flows between them.
			cel.Variable("effects", cel.ListType(cel.ObjectType("normalize.Effect"))),
			cel.Variable("flows", cel.ListType(cel.ObjectType("normalize.Flow"))),
			cel.Variable("unresolved", strList),
			cel.Variable("unknown_programs", strList),
			cel.Function("base64_decode",
				cel.Overload("shield_base64_decode_string", []*cel.Type{cel.StringType}, cel.StringType,
					cel.UnaryBinding(func(v ref.Val) ref.Val {
						s, ok := v.(types.String)
						if !ok {
							return types.MaybeNoSuchOverloadErr(v)
						}
						return types.String(base64Decode(string(s)))
					}))),
			cel.Function("glob",
				cel.MemberOverload("shield_string_glob_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
					cel.BinaryBinding(func(lhs, rhs ref.Val) ref.Val {
						s, ok1 := lhs.(types.String)
						p, ok2 := rhs.(types.String)
						if !ok1 || !ok2 {
							return types.MaybeNoSuchOverloadErr(lhs)
						}
						g, err := compileGlob(string(p))
						if err != nil {
							return types.NewErr("glob %q: %v", string(p), err)
						}
						return types.Bool(g.Match(string(s)))
					}))),
		}
	}
}

// base64Decode decodes standard or URL-safe base64, padded or not, ignoring ASCII white space
// (as base64 -d does). It returns "" when s is not base64.
func base64Decode(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b)
		}
	}
	return ""
}

// globCache holds compiled glob patterns. Patterns normally come from rules, so the set is
// small; past maxGlobCache entries patterns are compiled per call and not cached.
var (
	globCache   sync.Map // string → *glob.Pattern
	globCount   int
	globCountMu sync.Mutex
)

const maxGlobCache = 4096

func compileGlob(p string) (*glob.Pattern, error) {
	if g, ok := globCache.Load(p); ok {
		return g.(*glob.Pattern), nil
	}
	g, err := glob.Compile(p, '/')
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	globCountMu.Lock()
	if globCount < maxGlobCache {
		globCount++
		globCache.Store(p, g)
	}
	globCountMu.Unlock()
	return g, nil
}
