package normalize

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Path roles. They are API (rules name them).
const (
	RoleRead   = "read"
	RoleWrite  = "write"
	RoleDelete = "delete"
	RoleSource = "source"
	RoleDest   = "dest"
	RoleExec   = "exec"
	RoleArg    = "arg"
	RoleList   = "list"
)

var knownRoles = map[string]bool{RoleRead: true, RoleWrite: true, RoleDelete: true, RoleSource: true,
	RoleDest: true, RoleExec: true, RoleArg: true, RoleList: true}

// KnownClasses are the built-in action classes. A catalog may declare more under `classes:`.
var KnownClasses = []string{ClassExec, ClassFileRead, ClassFileWrite, ClassFileDelete, ClassFileMove,
	ClassFileList, ClassFileSearch, ClassNetRequest, ClassMessageSend, ClassAgentSpawn, ClassMemoryWrite,
	ClassMemoryRead, ClassSchedule, ClassVCSPush, ClassVCS, ClassDatabase, ClassBrowser, ClassCodeExec,
	ClassConfigChange, ClassQuery, ClassUnknown}

// Catalog maps tool names to entries saying what a tool does and which arguments carry what.
// Once parsed and merged it is read-only; Lookup is safe for concurrent use.
type Catalog struct {
	exact   map[string]*Entry // by exact name
	folded  map[string]*Entry // by lower-cased name, when no exact name matched
	globs   []globEntry       // in precedence order
	classes map[string]bool
	entries []*Entry
	// pathEffects: sensitive path kind → effect kinds it carries (from path_effects).
	pathEffects map[string][]string
	// secretFormats: credential formats by issuer (from secret_formats; tools_data.go), and
	// their union compiled once: whole tokens, and prefixes for decoded text.
	secretFormats          []SecretFormat
	tokenRE, tokenPrefixRE *regexp.Regexp
}

type globEntry struct {
	pattern string // lower-cased
	entry   *Entry
}

// Entry is one catalog entry. Argument keys are names of top-level keys, or dotted paths where `*`
// stands for every element of an array or every value of an object ("edits.*.newText"). When several
// keys are listed, every one present is used.
type Entry struct {
	Names         []string  `yaml:"names"` // exact tool names and glob patterns (path.Match syntax, matched case-insensitively)
	Class         string    `yaml:"class"`
	Note          string    `yaml:"note,omitempty"`
	Command       []string  `yaml:"command,omitempty"` // a shell command string, or an argv list
	Cwd           []string  `yaml:"cwd,omitempty"`
	Paths         []PathArg `yaml:"paths,omitempty"`
	URLs          []string  `yaml:"urls,omitempty"`
	Recipients    []string  `yaml:"recipients,omitempty"`
	Body          []string  `yaml:"body,omitempty"`
	Content       []string  `yaml:"content,omitempty"`
	Prompt        []string  `yaml:"prompt,omitempty"`
	Method        []string  `yaml:"method,omitempty"`
	DefaultMethod string    `yaml:"default_method,omitempty"` // method when no method argument is sent (e.g. GET)
	Patch         []string  `yaml:"patch,omitempty"`          // an apply_patch document ("*** Begin Patch"); its files become paths
	// Effects the call has beyond its paths and URLs (tools_effects.go): a push with its remote and
	// whether it is forced, a message sent, …
	Effects []EffectSpec `yaml:"effects,omitempty"`
	// Instructions: argument keys holding free text that another agent, a schedule or a memory
	// will act on; the effects the text asks for (paths, hosts, secrets) become the call's effects.
	Instructions []string `yaml:"instructions,omitempty"`
	// Search: argument keys holding a search pattern (a glob or regex) applied under the entry's
	// paths; a pattern naming a secret location is a secret read.
	Search []string `yaml:"search,omitempty"`
	// Delegate: the call runs another tool, named by one of Delegate.Tool, with the arguments in
	// one of Delegate.Arguments (an object, or a JSON string holding one): Cline's use_mcp_tool,
	// MCP gateways. The inner call is normalised as if it had been sent itself, and the outer
	// call has its class, paths, URLs and effects (normalize.go, bounded to one level).
	Delegate *Delegate `yaml:"delegate,omitempty"`

	source string // file:line, for messages
}

// Delegate names the argument keys of a call that runs another tool.
type Delegate struct {
	Tool      []string `yaml:"tool"`
	Arguments []string `yaml:"arguments"`
}

// PathArg names the argument keys holding paths and the role those paths play.
type PathArg struct {
	Keys []string `yaml:"keys"`
	Role string   `yaml:"role"`
}

// EffectSpec is an effect a catalog entry declares. The target is the first argument present among
// Target (a default when none is), the detail the Detail of every DetailIf that holds, joined
// with ",".
type EffectSpec struct {
	Kind     string     `yaml:"kind"`
	Target   []string   `yaml:"target,omitempty"`
	Default  string     `yaml:"default,omitempty"`
	Detail   string     `yaml:"detail,omitempty"`
	DetailIf []DetailIf `yaml:"detail_if,omitempty"`
	// Conditional: the effect is there only when one of DetailIf holds (a config change is a
	// privilege change only when it turns a permission off).
	Conditional bool `yaml:"conditional,omitempty"`
}

// DetailIf adds Detail when argument Key holds: true, a non-zero number, or a string that is not
// empty or "false" (with Prefix: a string starting with it; with Equals: one of them, case-folded).
// A detail containing "%s" gets the value ("branch=%s").
type DetailIf struct {
	Key    string   `yaml:"key"`
	Prefix string   `yaml:"prefix,omitempty"`
	Equals []string `yaml:"equals,omitempty"`
	Detail string   `yaml:"detail"`
}

// KnownEffectKinds are the effect kinds a catalog may declare.
var KnownEffectKinds = map[string]bool{EffectRead: true, EffectWrite: true, EffectDelete: true, EffectExec: true,
	EffectConnect: true, EffectListen: true, EffectPrivilege: true, EffectPersistence: true, EffectInstall: true,
	EffectPush: true, EffectSecret: true, EffectEscape: true, EffectSend: true}

// Source is the file:line the entry was defined at.
func (e *Entry) Source() string { return e.source }

type catalogFile struct {
	Version int      `yaml:"version"`
	Classes []string `yaml:"classes,omitempty"`
	// PathEffects maps an effect kind to the sensitive path kinds (sensitive.go) that carry it:
	// reading a "secret" kind is a secret effect, writing a "persistence" kind is persistence.
	PathEffects map[string][]string `yaml:"path_effects,omitempty"`
	// SecretFormats: credentials of known formats, found in what a call sends (tools_data.go).
	SecretFormats []SecretFormat `yaml:"secret_formats,omitempty"`
	Tools         []Entry        `yaml:"tools"`
}

// SecretFormat is one issuer's credential format (gitleaks-style): Regex matches a whole token
// (RE2 syntax, matched at a word boundary); Prefix is the issuer's marker: the words it matches are
// the ones Regex is run on, and in text decoded from hex or base64 it marks a token on its own
// (a truncated token still counts).
type SecretFormat struct {
	ID     string `yaml:"id"`
	Regex  string `yaml:"regex"`
	Prefix string `yaml:"prefix,omitempty"`
}

// compileSecretFormats compiles the union of formats; problems name each bad format.
func compileSecretFormats(name string, fs []SecretFormat) (tok, pre *regexp.Regexp, probs []string) {
	var toks, pres []string
	for _, f := range fs {
		if f.ID == "" || f.Regex == "" || f.Prefix == "" {
			probs = append(probs, fmt.Sprintf("%s: secret_formats: %q: id, regex and prefix are required", name, f.ID))
			continue
		}
		if _, err := regexp.Compile(f.Regex); err != nil {
			probs = append(probs, fmt.Sprintf("%s: secret_formats: %s: %v", name, f.ID, err))
			continue
		}
		if _, err := regexp.Compile(f.Prefix); err != nil {
			probs = append(probs, fmt.Sprintf("%s: secret_formats: %s: prefix: %v", name, f.ID, err))
			continue
		}
		toks = append(toks, "(?:"+f.Regex+")")
		pres = append(pres, "(?:"+f.Prefix+")")
	}
	if len(toks) > 0 && len(probs) == 0 {
		tok = regexp.MustCompile(`\b(?:` + strings.Join(toks, "|") + `)`)
	}
	if len(pres) > 0 && len(probs) == 0 {
		pre = regexp.MustCompile(`\b(?:` + strings.Join(pres, "|") + `)[A-Za-z0-9]`)
	}
	return tok, pre, probs
}

var classNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ParseCatalog parses a catalog file strictly: an unknown key, an unknown class or role, a bad glob or
// a name listed twice is an error. Every problem is reported, each as "name:line: message"; the error
// is a *CatalogError wrapping ErrCatalog.
func ParseCatalog(name string, data []byte) (*Catalog, error) {
	var f catalogFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, &CatalogError{Problems: yamlProblems(name, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &CatalogError{Problems: []string{fmt.Sprintf("%s:%d: more than one YAML document", name, extra.Line)}}
	}
	// Line numbers of the entries, from a second pass over the node tree.
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	lines := entryLines(&root)

	var probs []string
	if f.Version != 1 {
		probs = append(probs, fmt.Sprintf("%s:1: version must be 1, got %d", name, f.Version))
	}
	c := &Catalog{exact: map[string]*Entry{}, folded: map[string]*Entry{}, classes: map[string]bool{}}
	for _, k := range KnownClasses {
		c.classes[k] = true
	}
	for _, k := range f.Classes {
		if !classNameRE.MatchString(k) {
			probs = append(probs, fmt.Sprintf("%s: class %q: must match %s", name, k, classNameRE))
		}
		c.classes[k] = true
	}
	for kind, pks := range f.PathEffects {
		if !KnownEffectKinds[kind] {
			probs = append(probs, fmt.Sprintf("%s: path_effects: unknown effect kind %q", name, kind))
		}
		for _, pk := range pks {
			if c.pathEffects == nil {
				c.pathEffects = map[string][]string{}
			}
			c.pathEffects[pk] = append(c.pathEffects[pk], kind)
		}
	}
	if len(f.SecretFormats) > 0 {
		var fp []string
		c.secretFormats = f.SecretFormats
		c.tokenRE, c.tokenPrefixRE, fp = compileSecretFormats(name, f.SecretFormats)
		probs = append(probs, fp...)
	}
	seen := map[string]string{}
	for i := range f.Tools {
		e := &f.Tools[i]
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		e.source = fmt.Sprintf("%s:%d", name, line)
		bad := func(format string, a ...any) { probs = append(probs, e.source+": "+fmt.Sprintf(format, a...)) }
		if len(e.Names) == 0 {
			bad("entry has no names")
		}
		if !c.classes[e.Class] {
			bad("unknown class %q (declare it under classes: to add one)", e.Class)
		}
		for _, p := range e.Paths {
			if !knownRoles[p.Role] {
				bad("unknown path role %q", p.Role)
			}
			if len(p.Keys) == 0 {
				bad("paths entry with role %q has no keys", p.Role)
			}
		}
		for _, es := range e.Effects {
			if !KnownEffectKinds[es.Kind] {
				bad("unknown effect kind %q", es.Kind)
			}
			for _, d := range es.DetailIf {
				if d.Key == "" || d.Detail == "" {
					bad("effect %q: detail_if needs key and detail", es.Kind)
				}
			}
		}
		if e.Delegate != nil && (len(e.Delegate.Tool) == 0 || len(e.Delegate.Arguments) == 0) {
			bad("delegate needs tool and arguments keys")
		}
		keyLists := [][]string{e.Command, e.Cwd, e.URLs, e.Recipients, e.Body, e.Content, e.Prompt, e.Method, e.Patch, e.Instructions, e.Search}
		if e.Delegate != nil {
			keyLists = append(keyLists, e.Delegate.Tool, e.Delegate.Arguments)
		}
		for _, keys := range keyLists {
			for _, k := range keys {
				if k == "" || strings.HasPrefix(k, ".") || strings.HasSuffix(k, ".") || strings.Contains(k, "..") {
					bad("bad argument key %q", k)
				}
			}
		}
		for _, n := range e.Names {
			if n == "" {
				bad("empty tool name")
				continue
			}
			if prev, dup := seen[n]; dup {
				bad("tool name %q already listed at %s", n, prev)
				continue
			}
			seen[n] = e.source
			if isGlob(n) {
				if _, err := path.Match(n, ""); err != nil {
					bad("bad glob %q: %v", n, err)
					continue
				}
				c.globs = append(c.globs, globEntry{pattern: strings.ToLower(n), entry: e})
				continue
			}
			c.exact[n] = e
			if _, ok := c.folded[strings.ToLower(n)]; !ok {
				c.folded[strings.ToLower(n)] = e
			}
		}
		c.entries = append(c.entries, e)
	}
	if len(probs) > 0 {
		return nil, &CatalogError{Problems: probs}
	}
	return c, nil
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlProblems turns a yaml error into "name:line: message" problems.
func yamlProblems(name string, err error) []string {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if sm := yamlLineRE.FindStringSubmatch(strings.TrimSpace(m)); sm != nil {
			out = append(out, fmt.Sprintf("%s:%s: %s", name, sm[1], sm[2]))
		} else {
			out = append(out, fmt.Sprintf("%s: %s", name, strings.TrimPrefix(m, "yaml: ")))
		}
	}
	return out
}

// entryLines returns the line of each item of the top-level `tools:` sequence.
func entryLines(root *yaml.Node) []int {
	if root == nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "tools" && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, it := range m.Content[i+1].Content {
				lines = append(lines, it.Line)
			}
			return lines
		}
	}
	return nil
}

// Merge extends c with other (a bundle author's catalog over the default one): an exact name in
// other replaces c's entry for that name, other's glob patterns are tried before c's, other's
// classes are added. other is not modified; a nil other changes nothing. Merge before handing c to
// New: it is not safe to run concurrently with Lookup.
func (c *Catalog) Merge(other *Catalog) {
	if c == nil || other == nil {
		return
	}
	for k, v := range other.exact {
		c.exact[k] = v
	}
	for k, v := range other.folded {
		c.folded[k] = v
	}
	for k := range other.classes {
		c.classes[k] = true
	}
	for k, v := range other.pathEffects { // a bundle's path_effects replace the kind's row
		if c.pathEffects == nil {
			c.pathEffects = map[string][]string{}
		}
		c.pathEffects[k] = v
	}
	if len(other.secretFormats) > 0 { // a bundle's formats add to the base's
		c.secretFormats = append(append([]SecretFormat{}, c.secretFormats...), other.secretFormats...)
		c.tokenRE, c.tokenPrefixRE, _ = compileSecretFormats("", c.secretFormats) // each list compiled alone already
	}
	c.globs = append(append([]globEntry{}, other.globs...), c.globs...)
	c.entries = append(c.entries, other.entries...)
}

// Lookup returns the entry for a tool name: an exact name first, then the same name compared
// case-insensitively, then the first matching glob pattern. ok is false when nothing matched.
func (c *Catalog) Lookup(tool string) (e *Entry, ok bool) {
	if c == nil {
		return nil, false
	}
	if e, ok := c.exact[tool]; ok {
		return e, true
	}
	lt := strings.ToLower(tool)
	if e, ok := c.folded[lt]; ok {
		return e, true
	}
	for _, g := range c.globs {
		if g.entry.Class == ClassQuery && !readOnlyToolName(tool) {
			continue // a read-only class by name only needs a read-only name (name_class.go)
		}
		if m, _ := path.Match(g.pattern, lt); m {
			return g.entry, true
		}
	}
	return nil, false
}

// Names lists the exact tool names of the catalog, sorted; for documentation and tests.
func (c *Catalog) Names() []string {
	var out []string
	for k := range c.exact {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
