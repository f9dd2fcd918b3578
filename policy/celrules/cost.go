package celrules

import (
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"

	"github.com/shieldsec/shield/shield/normalize"
)

// sizeEstimator gives the static cost estimator the largest size each variable can have in a
// normalised action, from the normaliser's bounds, so that a rule's worst case is known at load
// and no runtime cost tracker is needed (it took ~40 % of an evaluation).
type sizeEstimator struct{}

// Bounds of the action's lists and strings (shield/normalize: DefaultMaxCommands,
// DefaultMaxStrings, the 1 MiB argument bound, the 256 KiB substituted into one command's argv).
const (
	maxCommands    = normalize.DefaultMaxCommands
	maxListItems   = normalize.DefaultMaxStrings
	maxStringBytes = normalize.DefaultMaxArgumentBytes
	maxArgvWords   = 128 << 10
	maxWordBytes   = normalize.MaxShellBytes
	maxArgsKeys    = 64 << 10
)

func (sizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	t := n.Type()
	if t == nil {
		return nil
	}
	path := n.Path()
	var sz uint64
	switch t.Kind() {
	case types.StringKind, types.BytesKind:
		sz = maxStringBytes
		if len(path) > 1 && path[0] == "commands" {
			sz = maxWordBytes // a word of a parsed command comes from a bounded shell string
		}
	case types.ListKind:
		sz = maxListItems
		if len(path) > 0 {
			switch path[len(path)-1] {
			case "commands", "names":
				sz = maxCommands
			case "args", "argv":
				sz = maxArgvWords
			}
		}
	case types.MapKind:
		sz = maxArgsKeys
	default:
		return nil
	}
	return &cost.SizeEstimate{Min: 0, Max: sz}
}

func (sizeEstimator) EstimateCallCost(function, overloadID string, target *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	return nil
}
