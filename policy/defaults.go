package policy

import (
	"fmt"
	"sort"
)

// Decisions a defaults file may name. They match the rule decisions of the tiers.
const (
	DecisionAllow    = "allow"
	DecisionBlock    = "block"
	DecisionEscalate = "escalate"
)

// Defaults is the decision per action class when no rule of any tier speaks: defaults.yaml,
//
//	default: escalate      # classes not listed below (and the zero value)
//	classes:
//	  exec: allow
//	  unknown: escalate    # tools not in the catalog; never allow
//	review: [message_send] # allowed calls of these classes still go to the judge / a human
//
// Decisions are allow, block or escalate. The zero value answers escalate for every class.
// The class "unknown" may not default to allow, whether named or through default.
type Defaults struct {
	Default string            `yaml:"default"`
	Classes map[string]string `yaml:"classes"`
	// Review lists action classes whose calls go to the escalation tiers (the judge, then a
	// human) even when tiers 0–1 would allow them.
	Review []string `yaml:"review"`
}

// ClassUnknown is the action class of tools the catalog does not know.
const ClassUnknown = "unknown"

// DecisionFor returns the default decision for an action class: "allow", "block" or "escalate".
func (d Defaults) DecisionFor(class string) string {
	if v, ok := d.Classes[class]; ok {
		return v
	}
	if d.Default != "" {
		return d.Default
	}
	return DecisionEscalate
}

// ParseDefaults reads defaults.yaml strictly. Empty or absent data gives the zero Defaults.
func ParseDefaults(data []byte) (Defaults, Problems) {
	var d Defaults
	if len(data) == 0 {
		return d, nil
	}
	if ps := DecodeYAML(DefaultsFile, data, &d); ps != nil {
		return Defaults{}, ps
	}
	var probs Problems
	check := func(what, v string) {
		switch v {
		case DecisionAllow, DecisionBlock, DecisionEscalate:
		default:
			probs = append(probs, Problem{File: DefaultsFile, Msg: fmt.Sprintf("%s: decision %q is not allow, block or escalate", what, v)})
		}
	}
	if d.Default != "" {
		check("default", d.Default)
	}
	classes := make([]string, 0, len(d.Classes))
	for c := range d.Classes {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		check("classes."+c, d.Classes[c])
	}
	if d.DecisionFor(ClassUnknown) == DecisionAllow {
		probs = append(probs, Problem{File: DefaultsFile, Msg: "unknown tools may not default to allow"})
	}
	if len(probs) > 0 {
		return Defaults{}, probs
	}
	return d, nil
}
