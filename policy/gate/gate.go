// Package gate holds the necessary conditions under which a policy rule can fire, derived from
// the rule's text when a bundle is loaded, and their evaluation on a normalised action. The tier
// engines (policy/celrules, policy/regoeval) derive one Cond per rule and, per call, evaluate
// only the rules whose Cond holds.
//
// A Cond is sound when the rule can only be true — or fail with an evaluation error, which fails
// the call closed — if the Cond holds. Skipping a rule whose Cond does not hold therefore never
// changes a verdict. The engines derive atoms only from shapes they recognise and treat every
// other expression as "may hold" (a nil Cond); a rule whose Cond is nil is always evaluated.
//
// gate imports shield/normalize (the Action it reads). The tier engines and the lint import it.
package gate

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shieldsec/shield/shield/normalize"
)

// Field is a part of the action an atom reads.
type Field uint8

// Fields.
const (
	FieldNone Field = iota
	// String fields.
	FieldTool
	FieldClass
	FieldMethod
	FieldBody
	FieldContent
	FieldPrompt
	FieldCommand
	FieldParseError
	// Collections. Names are the commands' names, EffectKinds the effects' kinds, ArgKeys the
	// top-level argument keys.
	FieldNames
	FieldEffectKinds
	FieldArgKeys
	FieldCommands
	FieldEffects
	FieldPaths
	FieldURLs
	FieldStrings
	FieldFlows
	FieldRecipients
	FieldUnresolved
	FieldUnknownPrograms
	FieldArgs
	// PathRoles are the roles of the paths ("read", "write", "dest", …).
	FieldPathRoles
)

var fieldNames = map[Field]string{
	FieldTool: "tool", FieldClass: "class", FieldMethod: "method", FieldBody: "body",
	FieldContent: "content", FieldPrompt: "prompt", FieldCommand: "command",
	FieldParseError: "parse_error", FieldNames: "names", FieldEffectKinds: "effect kinds",
	FieldArgKeys: "arg keys", FieldCommands: "commands", FieldEffects: "effects",
	FieldPaths: "paths", FieldURLs: "urls", FieldStrings: "strings", FieldFlows: "flows",
	FieldRecipients: "recipients", FieldUnresolved: "unresolved",
	FieldUnknownPrograms: "unknown_programs", FieldArgs: "args", FieldPathRoles: "path roles",
}

func (f Field) String() string { return fieldNames[f] }

// ListField returns the collection field of an action variable named v ("commands", "effects",
// …), or FieldNone.
func ListField(v string) Field {
	switch v {
	case "commands":
		return FieldCommands
	case "effects":
		return FieldEffects
	case "paths":
		return FieldPaths
	case "urls":
		return FieldURLs
	case "strings":
		return FieldStrings
	case "flows":
		return FieldFlows
	case "recipients":
		return FieldRecipients
	case "unresolved":
		return FieldUnresolved
	case "unknown_programs":
		return FieldUnknownPrograms
	case "args":
		return FieldArgs
	case "names":
		return FieldNames
	}
	return FieldNone
}

// StringField returns the string field of an action variable named v ("tool", "class", …), or
// FieldNone.
func StringField(v string) Field {
	switch v {
	case "tool":
		return FieldTool
	case "class":
		return FieldClass
	case "method":
		return FieldMethod
	case "body":
		return FieldBody
	case "content":
		return FieldContent
	case "prompt":
		return FieldPrompt
	case "command":
		return FieldCommand
	case "parse_error":
		return FieldParseError
	}
	return FieldNone
}

type op uint8

const (
	opIn       op = iota + 1 // string field in set, or collection ∩ set ≠ ∅
	opNotIn                  // string field not in set
	opNonEmpty               // string field ≠ "" or collection not empty
	opMatch                  // string field matches a regular expression
	opAnd
	opOr
	opFalse
)

// Cond is a necessary condition. nil means "may hold" (nothing is known): it always holds.
type Cond struct {
	op    op
	field Field
	fold  bool // opIn on FieldArgKeys: compare lower-cased keys
	set   []string
	re    *regexp.Regexp
	kids  []*Cond
	// matches caches re's answers for short strings (opMatch): the same few tool names are
	// matched on every call, and the tools' patterns ran the backtracker each time.
	matches *matchCache
}

// matchCache remembers a pattern's answers for up to matchCacheMax strings of at most
// matchCacheLen bytes.
type matchCache struct {
	m sync.Map // string → bool
	n atomic.Int64
}

const (
	matchCacheMax = 1024
	matchCacheLen = 256
)

func (c *Cond) match(s string) bool {
	if len(s) > matchCacheLen {
		return c.re.MatchString(s)
	}
	if v, ok := c.matches.m.Load(s); ok {
		return v.(bool)
	}
	ok := c.re.MatchString(s)
	if c.matches.n.Load() < matchCacheMax {
		c.matches.n.Add(1)
		c.matches.m.Store(strings.Clone(s), ok)
	}
	return ok
}

// In: the string field is one of set, or the collection (Names, EffectKinds, ArgKeys) has an
// element in set.
func In(f Field, set ...string) *Cond { return &Cond{op: opIn, field: f, set: sorted(set)} }

// InFold is In on lower-cased argument keys (set must be lower case).
func InFold(f Field, set ...string) *Cond {
	return &Cond{op: opIn, field: f, fold: true, set: sorted(set)}
}

// NotIn: the string field is none of set.
func NotIn(f Field, set ...string) *Cond { return &Cond{op: opNotIn, field: f, set: sorted(set)} }

// NonEmpty: the string field is not "" or the collection is not empty.
func NonEmpty(f Field) *Cond { return &Cond{op: opNonEmpty, field: f} }

// Match: the string field matches re (Go regexp, the syntax CEL and Rego both use).
func Match(f Field, re *regexp.Regexp) *Cond {
	return &Cond{op: opMatch, field: f, re: re, matches: &matchCache{}}
}

// False never holds (a rule that can never fire).
func False() *Cond { return &Cond{op: opFalse} }

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

// And is the conjunction; nil operands (may hold) drop out.
func And(cs ...*Cond) *Cond {
	var kids []*Cond
	for _, c := range cs {
		switch {
		case c == nil:
		case c.op == opFalse:
			return c
		case c.op == opAnd:
			kids = append(kids, c.kids...)
		default:
			kids = append(kids, c)
		}
	}
	switch len(kids) {
	case 0:
		return nil
	case 1:
		return kids[0]
	}
	return &Cond{op: opAnd, kids: kids}
}

// Or is the disjunction; a nil operand (may hold) makes it nil.
func Or(cs ...*Cond) *Cond {
	var kids []*Cond
	for _, c := range cs {
		switch {
		case c == nil:
			return nil
		case c.op == opFalse:
		case c.op == opOr:
			kids = append(kids, c.kids...)
		default:
			kids = append(kids, c)
		}
	}
	switch len(kids) {
	case 0:
		return False()
	case 1:
		return kids[0]
	}
	return &Cond{op: opOr, kids: kids}
}

// Holds reports whether c holds for the action. A nil Cond always holds.
func (c *Cond) Holds(a *normalize.Action) bool {
	if c == nil {
		return true
	}
	switch c.op {
	case opAnd:
		for _, k := range c.kids {
			if !k.Holds(a) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range c.kids {
			if k.Holds(a) {
				return true
			}
		}
		return false
	case opFalse:
		return false
	case opNonEmpty:
		return size(a, c.field) > 0
	case opMatch:
		s, ok := str(a, c.field)
		return !ok || c.match(s)
	case opIn, opNotIn:
		if s, ok := str(a, c.field); ok {
			_, in := slices.BinarySearch(c.set, s)
			return in == (c.op == opIn)
		}
		if c.op == opNotIn {
			return true // not a string field: may hold
		}
		return c.anyIn(a)
	}
	return true
}

func (c *Cond) has(s string) bool {
	_, ok := slices.BinarySearch(c.set, s)
	return ok
}

func (c *Cond) anyIn(a *normalize.Action) bool {
	switch c.field {
	case FieldNames:
		for i := range a.Commands {
			if c.has(a.Commands[i].Name) {
				return true
			}
		}
		return false
	case FieldEffectKinds:
		for i := range a.Effects {
			if c.has(a.Effects[i].Kind) {
				return true
			}
		}
		return false
	case FieldPathRoles:
		for i := range a.Paths {
			if c.has(a.Paths[i].Role) {
				return true
			}
		}
		return false
	case FieldArgKeys:
		for k := range a.Args {
			if c.fold {
				k = strings.ToLower(k)
			}
			if c.has(k) {
				return true
			}
		}
		return false
	}
	return true // unknown field: may hold
}

func str(a *normalize.Action, f Field) (string, bool) {
	switch f {
	case FieldTool:
		return a.Tool, true
	case FieldClass:
		return a.Class, true
	case FieldMethod:
		return a.Method, true
	case FieldBody:
		return a.Body, true
	case FieldContent:
		return a.Content, true
	case FieldPrompt:
		return a.Prompt, true
	case FieldCommand:
		return a.Command, true
	case FieldParseError:
		return a.ParseError, true
	}
	return "", false
}

func size(a *normalize.Action, f Field) int {
	if s, ok := str(a, f); ok {
		return len(s)
	}
	switch f {
	case FieldNames, FieldCommands:
		return len(a.Commands)
	case FieldEffects, FieldEffectKinds:
		return len(a.Effects)
	case FieldPaths, FieldPathRoles:
		return len(a.Paths)
	case FieldURLs:
		return len(a.URLs)
	case FieldStrings:
		return len(a.Strings)
	case FieldFlows:
		return len(a.Flows)
	case FieldRecipients:
		return len(a.Recipients)
	case FieldUnresolved:
		return len(a.Unresolved)
	case FieldUnknownPrograms:
		return len(a.UnknownPrograms)
	case FieldArgs, FieldArgKeys:
		return len(a.Args)
	}
	return 1 // unknown field: may hold
}

// String renders c for lint output ("always" for nil).
func (c *Cond) String() string {
	if c == nil {
		return "always"
	}
	var b strings.Builder
	c.write(&b, false)
	return b.String()
}

func (c *Cond) write(b *strings.Builder, nested bool) {
	switch c.op {
	case opAnd, opOr:
		sep := " && "
		if c.op == opOr {
			sep = " || "
		}
		if nested {
			b.WriteString("(")
		}
		for i, k := range c.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			k.write(b, true)
		}
		if nested {
			b.WriteString(")")
		}
	case opFalse:
		b.WriteString("never")
	case opNonEmpty:
		b.WriteString(c.field.String() + " not empty")
	case opMatch:
		b.WriteString(c.field.String() + " matches " + c.re.String())
	case opIn, opNotIn:
		b.WriteString(c.field.String())
		if c.fold {
			b.WriteString(" (lower-cased)")
		}
		if c.op == opNotIn {
			b.WriteString(" not")
		}
		b.WriteString(" in [" + strings.Join(c.set, ", ") + "]")
	}
}

// Indexed reports whether c says anything (a nil Cond does not: its rule is always evaluated).
func (c *Cond) Indexed() bool { return c != nil }
