package regoeval

import (
	"fmt"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/shield"
)

// decodeTerm is decode over the decision document as the evaluation produced it (Rego values),
// without converting it to Go maps and slices first. It reads the shape every conforming
// document has: an object whose keys are among "deny", "escalate" and "allow", each a set, an
// array or null, of objects whose keys are among "rule", "reason" and "severity", each a string.
// Anything else (another key, a key that is not a string, another type anywhere) is handed to
// decode on the converted document, so that every document outside the contract fails with the
// very error it failed with before; a conforming one yields the findings decode yields: the
// same entries in the same order (a set's elements in its sorted order, as OPA's conversion
// walks them; then ordered by rule id, stably, within each key). TestDecodeTermEqualsDecode
// compares both on conforming and non-conforming documents.
func decodeTerm(v ast.Value) (shield.Result, error) {
	if res, ok := decodeConforming(v); ok {
		return res, nil
	}
	x, err := ast.JSON(v)
	if err != nil {
		return shield.Result{}, fmt.Errorf("%w: %s: %w", ErrEvaluation, Query, err)
	}
	return decode(x)
}

// decodeConforming decodes a document that conforms to the output contract; ok is false for
// any other.
func decodeConforming(v ast.Value) (res shield.Result, ok bool) {
	obj, isObj := v.(ast.Object)
	if !isObj {
		return shield.Result{}, false
	}
	var lists [3]ast.Value // deny, escalate, allow
	good := true
	obj.Foreach(func(k, x *ast.Term) {
		s, isStr := k.Value.(ast.String)
		if !isStr {
			good = false
			return
		}
		switch s {
		case "deny":
			lists[0] = x.Value
		case "escalate":
			lists[1] = x.Value
		case "allow":
			lists[2] = x.Value
		default:
			good = false
		}
	})
	if !good {
		return shield.Result{}, false
	}
	for i, dk := range decisionKeys {
		var elems []*ast.Term
		switch l := lists[i].(type) {
		case nil, ast.Null:
			continue
		case ast.Set:
			elems = l.Slice() // the sorted order Iter walks
		case *ast.Array:
			elems = make([]*ast.Term, l.Len())
			for j := range elems {
				elems[j] = l.Elem(j)
			}
		default:
			return shield.Result{}, false
		}
		start := len(res.Findings)
		for _, item := range elems {
			m, isObj := item.Value.(ast.Object)
			if !isObj {
				return shield.Result{}, false
			}
			f := shield.Finding{Decision: dk.d, Confidence: 1}
			m.Foreach(func(k, x *ast.Term) {
				ks, kOK := k.Value.(ast.String)
				s, vOK := x.Value.(ast.String)
				if !kOK || !vOK {
					good = false
					return
				}
				switch ks {
				case "rule":
					f.Rule = "rego:" + string(s)
				case "reason":
					f.Reason = string(s)
				case "severity":
					f.Severity = string(s)
				default:
					good = false
				}
			})
			if !good || f.Rule == "rego:" || f.Rule == "" {
				return shield.Result{}, false
			}
			res.Findings = append(res.Findings, f)
		}
		part := res.Findings[start:]
		sort.SliceStable(part, func(i, j int) bool { return part[i].Rule < part[j].Rule })
	}
	return res, true
}
