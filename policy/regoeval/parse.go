package regoeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/policy"
)

// Parsed is the Rego content of a bundle: its modules (tests included) and its data.
type Parsed struct {
	// Modules maps bundle paths to parsed modules, tests included.
	Modules map[string]*ast.Module
	// Data is the merged data document.
	Data map[string]any
	// RegoVersion is the version the modules were parsed with.
	RegoVersion ast.RegoVersion
	// Capabilities are the builtins policies may call.
	Capabilities *ast.Capabilities
}

// IsTestFile reports whether a bundle path is a Rego test module.
func IsTestFile(p string) bool { return strings.HasSuffix(p, "_test.rego") }

// IsModule reports whether a bundle path is a Rego module (tests included).
func IsModule(p string) bool { return strings.HasSuffix(p, ".rego") }

func isDataFile(p string) bool {
	switch path.Base(p) {
	case "data.json", "data.yaml", "data.yml":
		return true
	}
	return false
}

// forbiddenBuiltins reach outside the process or leak its environment; no policy may call them.
var forbiddenBuiltins = map[string]bool{
	"http.send":              true,
	"net.lookup_ip_addr":     true,
	"opa.runtime":            true,
	"providers.aws.sign_req": true,
}

// Capabilities returns OPA's capabilities without the forbidden builtins.
func Capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !forbiddenBuiltins[b.Name] {
			kept = append(kept, b)
		}
	}
	caps.Builtins = kept
	return caps
}

// Parse parses every module and data file of the bundle, collecting every problem with
// file:line.
func Parse(b *policy.Bundle) (*Parsed, error) {
	p := &Parsed{Modules: map[string]*ast.Module{}, Data: map[string]any{}, RegoVersion: ast.RegoV1, Capabilities: Capabilities()}
	if b.Manifest.RegoVersion != nil && *b.Manifest.RegoVersion == 0 {
		p.RegoVersion = ast.RegoV0
	}
	var probs policy.Problems
	for _, file := range b.Paths(IsModule) {
		m, err := ast.ParseModuleWithOpts(file, string(b.Files[file]), ast.ParserOptions{
			RegoVersion:       p.RegoVersion,
			Capabilities:      p.Capabilities,
			ProcessAnnotation: true,
		})
		if err != nil {
			probs = append(probs, astProblems(file, err)...)
			continue
		}
		if m == nil {
			probs = append(probs, policy.Problem{File: file, Msg: "empty module"})
			continue
		}
		p.Modules[file] = m
	}
	for _, file := range b.Paths(isDataFile) {
		var v any
		raw := b.Files[file]
		if strings.HasSuffix(file, ".json") {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				probs = append(probs, policy.Problem{File: file, Msg: fmt.Sprintf("invalid JSON: %v", err)})
				continue
			}
		} else {
			if ps := policy.DecodeYAML(file, raw, &v); ps != nil {
				probs = append(probs, ps...)
				continue
			}
			v = yamlToJSON(v)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			probs = append(probs, policy.Problem{File: file, Msg: "data file must hold an object"})
			continue
		}
		dir := path.Dir(file)
		var keys []string
		if dir != "." {
			keys = strings.Split(dir, "/")
		}
		if err := mount(p.Data, keys, obj); err != nil {
			probs = append(probs, policy.Problem{File: file, Msg: err.Error()})
		}
	}
	if _, ok := p.Data[DerivedKey]; ok {
		probs = append(probs, policy.Problem{Msg: fmt.Sprintf("data.%s is reserved: the loader derives it from the bundle's lists", DerivedKey)})
	}
	if err := probs.Err(); err != nil {
		return nil, fmt.Errorf("parse rego: %w", err)
	}
	derived, dprobs := derive(p.Data, p.Modules)
	if err := dprobs.Err(); err != nil {
		return nil, fmt.Errorf("parse rego: %w", err)
	}
	p.Data[DerivedKey] = derived
	return p, nil
}

// CheckRoots reports the packages and data paths outside the manifest roots. Shield serves
// them, but OPA's bundle mode (`opa test -b`) rejects the bundle; lint reports them.
func (p *Parsed) CheckRoots(b *policy.Bundle) policy.Problems {
	roots := b.Manifest.Roots
	if len(roots) == 0 {
		return nil
	}
	var probs policy.Problems
	for _, file := range b.Paths(IsModule) {
		m, ok := p.Modules[file]
		if !ok {
			continue
		}
		if pkg := strings.TrimPrefix(m.Package.Path.String(), "data."); !underRoots(pkg, roots) {
			probs = append(probs, policy.Problem{File: file, Line: m.Package.Location.Row,
				Msg: fmt.Sprintf("package %s is outside the manifest roots %v (opa test -b rejects it; name tests like %s.x_test)", pkg, roots, roots[0])})
		}
	}
	for _, file := range b.Paths(isDataFile) {
		var v map[string]any
		if strings.HasSuffix(file, ".json") {
			_ = json.Unmarshal(b.Files[file], &v)
		} else {
			_ = policy.DecodeYAML(file, b.Files[file], &v)
		}
		dir := path.Dir(file)
		var keys []string
		if dir != "." {
			keys = strings.Split(dir, "/")
		}
		for k := range v {
			at := strings.Join(append(append([]string(nil), keys...), k), ".")
			if !underRoots(at, roots) {
				probs = append(probs, policy.Problem{File: file, Msg: fmt.Sprintf("data.%s is outside the manifest roots %v", at, roots)})
			}
		}
	}
	probs.Sort()
	return probs
}

// underRoots reports whether a dotted path lies under one of the manifest roots (slash-separated,
// as OPA writes them). No roots means everything is allowed.
func underRoots(dotted string, roots []string) bool {
	if len(roots) == 0 {
		return true
	}
	p := strings.ReplaceAll(dotted, ".", "/")
	for _, r := range roots {
		r = strings.Trim(r, "/")
		if r == "" || p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// mount merges obj into data at keys; a key defined twice with non-object values is an error.
func mount(data map[string]any, keys []string, obj map[string]any) error {
	cur := data
	for i, k := range keys {
		next, ok := cur[k]
		if !ok {
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("data.%s is already defined as a non-object", strings.Join(keys[:i+1], "."))
		}
		cur = m
	}
	return merge(cur, obj, strings.Join(keys, "."))
}

func merge(dst, src map[string]any, at string) error {
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := src[k]
		name := k
		if at != "" {
			name = at + "." + k
		}
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("data.%s is defined twice", name)
		}
		if err := merge(om, nm, name); err != nil {
			return err
		}
	}
	return nil
}

// yamlToJSON turns YAML-decoded values into JSON-compatible ones (map[string]any keys).
func yamlToJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlToJSON(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = yamlToJSON(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = yamlToJSON(e)
		}
		return x
	}
	return v
}

// astProblems converts OPA parse or compile errors into problems with file:line.
func astProblems(file string, err error) policy.Problems {
	var out policy.Problems
	var errs ast.Errors
	var one *ast.Error
	switch {
	case errors.As(err, &errs):
		for _, x := range errs {
			out = append(out, astErrorProblem(file, x))
		}
	case errors.As(err, &one):
		out = append(out, astErrorProblem(file, one))
	default:
		out = append(out, policy.Problem{File: file, Msg: err.Error()})
	}
	return out
}

func astErrorProblem(file string, e *ast.Error) policy.Problem {
	p := policy.Problem{File: file, Msg: e.Message}
	if e.Code != "" {
		p.Msg = e.Code + ": " + e.Message
	}
	if e.Location != nil {
		if e.Location.File != "" {
			p.File = e.Location.File
		}
		p.Line, p.Col = e.Location.Row, e.Location.Col
	}
	return p
}
