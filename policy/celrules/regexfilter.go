package celrules

import (
	"regexp"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/shieldsec/shield/policy/gate"
)

// Regular-expression prefilters. Most rule patterns can only match a string that contains one
// of a few literals (`(?i)(curl|wget)`, `\$\{?IFS`); Go's RE2 engine has no such shortcut for
// unanchored patterns and runs its matcher over every string. At program construction each
// constant pattern of `matches` gets the literals any match must contain (necessary, never
// sufficient); at evaluation a string that contains none of them is answered false without
// running the regular expression, and any other string goes to the regular expression as
// before. The analysis is conservative: a construct it does not understand contributes no
// requirement, and a pattern with no requirement runs unfiltered.

// The analysis (the literals any match must contain) is shared with the Rego tier's
// regex.match built-in: gate.NewRegexFilter.

func newPrefilter(pattern string) *gate.RegexFilter { return gate.NewRegexFilter(pattern) }

// prefilteredMatches replaces cel-go's constant-pattern `matches` (interpreter.
// MatchesRegexOptimization) for both overloads: the same compiled regular expression, behind
// the pattern's prefilter.
func prefilteredMatches() []*interpreter.RegexOptimization {
	factory := func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, err
		}
		f := newPrefilter(pattern)
		return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), func(values ...ref.Val) ref.Val {
			if len(values) != 2 {
				return types.NoSuchOverloadErr()
			}
			in, ok := values[0].Value().(string)
			if !ok {
				return types.NoSuchOverloadErr()
			}
			if f != nil && !f.MayMatch(in) {
				return types.False
			}
			return types.Bool(re.MatchString(in))
		}), nil
	}
	return []*interpreter.RegexOptimization{
		{Function: "matches", OverloadID: "matches_string", RegexIndex: 1, Factory: factory},
		{Function: "matches", OverloadID: "matches", RegexIndex: 1, Factory: factory},
	}
}
