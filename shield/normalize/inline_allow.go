package normalize

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// InlineAllowList is the bundle's allow list of pure computations per language (inline.yaml):
// what inline interpreter code may use and still be confined (inline_code.go). Parse it with
// ParseInlineAllowList; nil (no allow list) makes every inline program capable.
type InlineAllowList struct {
	langs    map[string]*inlineLang // by language name
	programs map[string]*inlineLang // by program name
	capable  map[string]bool        // programs whose inline code is always capable
	// escapes: the shell-escape and command primitives of languages read without a grammar
	// (shell_escapes; inline_escapes.go).
	escapes []string
	escOnce sync.Once
	escRE   *regexp.Regexp
}

type inlineLang struct {
	name       string
	functions  map[string]bool
	namespaces map[string]*members // globals and modules alike, by name
	modules    map[string]bool     // names of namespaces that are importable modules
	methods    map[string]bool
	reads      map[string]bool
	reflective map[string]bool
	// runtime: the runtime's own global names; nil when the allow list has none for the language
	// (then a bare name the code binds is never taken for a local).
	runtime map[string]bool
}

// members of a namespace: explicitly listed (dotted chains allowed) and, with "*", any public
// member called.
type members struct {
	explicit map[string]bool
	anyCall  bool
}

type inlineFile struct {
	Capable   []string `yaml:"capable_programs"`
	Escapes   []string `yaml:"shell_escapes"`
	Languages map[string]struct {
		Programs   []string            `yaml:"programs"`
		Functions  []string            `yaml:"functions"`
		Globals    map[string][]string `yaml:"globals"`
		Modules    map[string][]string `yaml:"modules"`
		Methods    []string            `yaml:"methods"`
		Reads      []string            `yaml:"reads"`
		Reflective []string            `yaml:"reflective"`
		Runtime    []string            `yaml:"runtime"`
	} `yaml:"languages"`
}

// inlineLanguages are the languages the analyser has a grammar for.
var inlineLanguages = set("python", "javascript", "perl", "ruby", "lua", "julia", "r", "php")

// ParseInlineAllowList reads an inline.yaml strictly: unknown keys, unknown languages, a program
// claimed by two languages or an empty name are errors, all reported together.
func ParseInlineAllowList(name string, data []byte) (*InlineAllowList, error) {
	var f inlineFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	al := &InlineAllowList{langs: map[string]*inlineLang{}, programs: map[string]*inlineLang{}, capable: map[string]bool{}}
	var problems []string
	for _, p := range f.Capable {
		al.capable[p] = true
	}
	for _, e := range f.Escapes {
		if !escapeNameRE.MatchString(e) {
			problems = append(problems, fmt.Sprintf("shell_escapes: %q is not a function name (letters, digits, '_', '.', '-', '>')", e))
			continue
		}
		al.escapes = append(al.escapes, e)
	}
	names := make([]string, 0, len(f.Languages))
	for n := range f.Languages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, ln := range names {
		l := f.Languages[ln]
		if !inlineLanguages[ln] {
			problems = append(problems, fmt.Sprintf("language %q: no grammar for it (known: python, javascript, perl, ruby, lua, julia, r, php)", ln))
			continue
		}
		il := &inlineLang{name: ln, functions: map[string]bool{}, namespaces: map[string]*members{}, modules: map[string]bool{},
			methods: map[string]bool{}, reads: map[string]bool{}, reflective: map[string]bool{}}
		add := func(what string, dst map[string]bool, list []string) {
			for _, s := range list {
				if strings.TrimSpace(s) == "" {
					problems = append(problems, fmt.Sprintf("language %s: empty name in %s", ln, what))
					continue
				}
				dst[s] = true
			}
		}
		add("functions", il.functions, l.Functions)
		add("methods", il.methods, l.Methods)
		add("reads", il.reads, l.Reads)
		add("reflective", il.reflective, l.Reflective)
		if l.Runtime != nil {
			il.runtime = map[string]bool{}
			add("runtime", il.runtime, l.Runtime)
		}
		for _, pair := range []struct {
			m      map[string][]string
			module bool
		}{{l.Globals, false}, {l.Modules, true}} {
			for ns, list := range pair.m {
				if strings.TrimSpace(ns) == "" {
					problems = append(problems, fmt.Sprintf("language %s: empty namespace name", ln))
					continue
				}
				m := il.namespaces[ns]
				if m == nil {
					m = &members{explicit: map[string]bool{}}
					il.namespaces[ns] = m
				}
				for _, s := range list {
					switch {
					case s == "*":
						m.anyCall = true
					case strings.TrimSpace(s) == "":
						problems = append(problems, fmt.Sprintf("language %s: empty member of %s", ln, ns))
					default:
						m.explicit[s] = true
					}
				}
				if pair.module {
					il.modules[ns] = true
				}
			}
		}
		for _, p := range l.Programs {
			if other := al.programs[p]; other != nil {
				problems = append(problems, fmt.Sprintf("program %q claimed by %s and %s", p, other.name, ln))
				continue
			}
			if strings.TrimSpace(p) == "" {
				problems = append(problems, fmt.Sprintf("language %s: empty program name", ln))
				continue
			}
			al.programs[p] = il
		}
		al.langs[ln] = il
	}
	for p := range al.capable {
		if al.programs[p] != nil {
			problems = append(problems, fmt.Sprintf("program %q is both in capable_programs and in language %s", p, al.programs[p].name))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", name, strings.Join(problems, "; "))
	}
	return al, nil
}

// language returns the language prog runs, or nil: its base name, then without a trailing
// version (python3.12 → python3 → python, lua5.4 → lua) or ".exe".
func (al *InlineAllowList) language(prog string) *inlineLang {
	if al == nil {
		return nil
	}
	p := prog
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	p = strings.TrimSuffix(p, ".exe")
	if l := al.programs[p]; l != nil {
		return l
	}
	q := strings.TrimRight(p, "0123456789.-")
	if q != p && q != "" {
		if l := al.programs[q]; l != nil {
			return l
		}
	}
	return nil
}
