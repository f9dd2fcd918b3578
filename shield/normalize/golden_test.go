package normalize

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// Golden cases live in testdata/golden/*.yaml, each a list of:
//
//   - name: what the case shows
//     tool: Bash
//     args: {command: "…"}      # YAML, turned into JSON and read with DecodeArguments
//     cwd: ""                   # optional call context cwd
//     want:                     # a subset of the Action's JSON: only the keys given are compared;
//     class: exec             # lists must have the same length, objects in them are compared
//     commands: [{name: rm}]  # by the keys given
//
// Options for every case: workspace /home/user/project, home /home/user.
type goldenCase struct {
	Name string         `yaml:"name"`
	Tool string         `yaml:"tool"`
	Args map[string]any `yaml:"args"`
	Cwd  string         `yaml:"cwd"`
	Want map[string]any `yaml:"want"`
}

var goldenOptions = Options{Workspace: "/home/user/project", Home: "/home/user"}

func loadGolden(t testing.TB) map[string][]goldenCase {
	t.Helper()
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	out := map[string][]goldenCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []goldenCase
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = cases
	}
	return out
}

func defaultCatalog(t testing.TB) *Catalog {
	t.Helper()
	data, err := os.ReadFile("../../policies/default/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog("policies/default/catalog.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func argsJSON(t testing.TB, args map[string]any) []byte {
	t.Helper()
	if args == nil {
		return []byte("{}")
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, goldenOptions))
	for file, cases := range loadGolden(t) {
		for _, tc := range cases {
			t.Run(file+"/"+tc.Name, func(t *testing.T) {
				args, err := DecodeArguments(argsJSON(t, tc.Args), Limits{})
				if err != nil {
					t.Fatal(err)
				}
				act := n.Normalize(tc.Tool, args, tc.Cwd)
				b, err := json.Marshal(act)
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				want := jsonRoundTrip(t, tc.Want)
				if probs := subset(want, got, "$"); len(probs) > 0 {
					t.Errorf("%s\n\ngot: %s", strings.Join(probs, "\n"), describe(act))
				}
			})
		}
	}
}

func jsonRoundTrip(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// subset reports where got differs from want, comparing only the object keys want has.
func subset(want, got any, at string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", at, got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var probs []string
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				probs = append(probs, fmt.Sprintf("%s.%s: missing", at, k))
				continue
			}
			probs = append(probs, subset(w[k], gv, at+"."+k)...)
		}
		return probs
	case []any:
		g, _ := got.([]any)
		if len(w) != len(g) {
			return []string{fmt.Sprintf("%s: want %d items, got %d: %s", at, len(w), len(g), compact(got))}
		}
		var probs []string
		for i := range w {
			probs = append(probs, subset(w[i], g[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
		return probs
	default:
		if want == nil && got == nil {
			return nil
		}
		if d := cmp.Diff(want, got); d != "" {
			return []string{fmt.Sprintf("%s: want %s, got %s", at, compact(want), compact(got))}
		}
		return nil
	}
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// describe prints the parts of an Action a failing case needs, one per line.
func describe(a *Action) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "class=%s known=%v cwd=%s command=%q parse_error=%q truncated=%v method=%q recipients=%q\n",
		a.Class, a.Known, a.Cwd, a.Command, a.ParseError, a.Truncated, a.Method, a.Recipients)
	for _, c := range a.Commands {
		fmt.Fprintf(&sb, "  command %s\n", compact(c))
	}
	for _, p := range a.Paths {
		fmt.Fprintf(&sb, "  path %s\n", compact(p))
	}
	for _, u := range a.URLs {
		fmt.Fprintf(&sb, "  url %s\n", compact(u))
	}
	fmt.Fprintf(&sb, "  body=%q content=%q prompt=%q", a.Body, a.Content, a.Prompt)
	return sb.String()
}
