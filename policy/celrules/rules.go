package celrules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shieldsec/shield/policy"
)

// RuleSpec is one rule as written in a rule file.
type RuleSpec struct {
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	Severity    string   `yaml:"severity"`
	Classes     []string `yaml:"classes"`
	Tools       []string `yaml:"tools"`
	When        string   `yaml:"when"`
	Decision    string   `yaml:"decision"`
	Message     string   `yaml:"message"`
	Examples    Examples `yaml:"examples"`

	// Positions, filled by ParseFile.
	File     string `yaml:"-"`
	Line     int    `yaml:"-"` // line of the rule's first key
	WhenLine int    `yaml:"-"` // line where the CEL text starts
	WhenCol  int    `yaml:"-"` // column where the CEL text starts (0 for block scalars)
}

// Examples are calls a rule must match and calls it must not match.
type Examples struct {
	Match    []ExampleCall `yaml:"match"`
	NotMatch []ExampleCall `yaml:"not_match"`
}

// ExampleCall is one tool call of an example.
type ExampleCall struct {
	Tool      string         `yaml:"tool"`
	Arguments map[string]any `yaml:"arguments"`
	Context   ExampleContext `yaml:"context"`

	Line int `yaml:"-"`
}

// ExampleContext is the optional context of an example call.
type ExampleContext struct {
	Cwd       string            `yaml:"cwd"`
	SessionID string            `yaml:"session_id"`
	AgentID   string            `yaml:"agent_id"`
	Runtime   string            `yaml:"runtime"`
	Caller    string            `yaml:"caller"`
	Labels    map[string]string `yaml:"labels"`
}

type ruleFile struct {
	Rules []RuleSpec `yaml:"rules"`
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// IsRuleFile reports whether a bundle path holds CEL rules: rules/**/*.yaml or *.yml.
func IsRuleFile(p string) bool {
	return strings.HasPrefix(p, "rules/") && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml"))
}

// ParseFile decodes one rule file strictly and checks each rule's fields (not its CEL). It
// returns the rules it could decode and every problem found, with file:line.
func ParseFile(file string, data []byte) ([]RuleSpec, policy.Problems) {
	var rf ruleFile
	if ps := policy.DecodeYAML(file, data, &rf); ps != nil {
		return nil, ps
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, policy.YAMLProblems(file, err)
	}
	seq := mapGet(docRoot(&root), "rules")
	var probs policy.Problems
	if seq == nil || len(rf.Rules) == 0 {
		return nil, policy.Problems{{File: file, Line: 1, Msg: "no rules (want a top-level rules: list)"}}
	}
	for i := range rf.Rules {
		r := &rf.Rules[i]
		r.File = file
		var rn *yaml.Node
		if seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
			rn = seq.Content[i]
			r.Line = rn.Line
		}
		if wn := mapGet(rn, "when"); wn != nil {
			r.WhenLine, r.WhenCol = wn.Line, wn.Column
			switch wn.Style {
			case yaml.LiteralStyle, yaml.FoldedStyle:
				r.WhenLine, r.WhenCol = wn.Line+1, 0
			case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
				r.WhenCol = wn.Column + 1
			}
		}
		ex := mapGet(rn, "examples")
		setLines(r.Examples.Match, mapGet(ex, "match"))
		setLines(r.Examples.NotMatch, mapGet(ex, "not_match"))
		for j := range r.Examples.Match {
			r.Examples.Match[j].Arguments = jsonArgs(r.Examples.Match[j].Arguments)
		}
		for j := range r.Examples.NotMatch {
			r.Examples.NotMatch[j].Arguments = jsonArgs(r.Examples.NotMatch[j].Arguments)
		}
		probs = append(probs, checkSpec(r)...)
	}
	return rf.Rules, probs
}

func checkSpec(r *RuleSpec) policy.Problems {
	var probs policy.Problems
	bad := func(format string, args ...any) {
		probs = append(probs, policy.Problem{File: r.File, Line: r.Line, Msg: fmt.Sprintf("rule %q: ", r.ID) + fmt.Sprintf(format, args...)})
	}
	if !idPattern.MatchString(r.ID) {
		bad("id must match %s", idPattern)
	}
	switch r.Decision {
	case policy.DecisionBlock, policy.DecisionEscalate, policy.DecisionAllow:
	default:
		bad("decision %q is not block, escalate or allow", r.Decision)
	}
	switch r.Severity {
	case "", "low", "medium", "high", "critical":
	default:
		bad("severity %q is not low, medium, high or critical", r.Severity)
	}
	if strings.TrimSpace(r.When) == "" {
		bad("when is empty")
	}
	if strings.TrimSpace(r.Message) == "" {
		bad("message is empty")
	}
	for _, c := range r.Classes {
		if c == "" {
			bad("empty class name")
		}
	}
	for _, t := range r.Tools {
		if t == "" {
			bad("empty tool name")
		}
	}
	for _, ex := range [][]ExampleCall{r.Examples.Match, r.Examples.NotMatch} {
		for _, c := range ex {
			if c.Tool == "" {
				probs = append(probs, policy.Problem{File: r.File, Line: c.Line, Msg: fmt.Sprintf("rule %q: example without a tool", r.ID)})
			}
		}
	}
	return probs
}

// jsonArgs gives example arguments the shapes JSON decoding gives real calls (float64 numbers,
// []any, map[string]any).
func jsonArgs(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return m
	}
	return out
}

func docRoot(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func setLines(calls []ExampleCall, seq *yaml.Node) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i := range calls {
		if i < len(seq.Content) {
			calls[i].Line = seq.Content[i].Line
		}
	}
}
