package celrules

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield/normalize"
)

// TestEveryActionFieldIsAVariable keeps the declared variables in step with normalize.Action:
// a field added there must be declared here (and resolved by the activation).
func TestEveryActionFieldIsAVariable(t *testing.T) {
	declared := map[string]bool{}
	for _, v := range Variables {
		declared[v] = true
		if varIndex(v) < 0 {
			t.Errorf("variable %q has no activation slot", v)
		}
	}
	typ := reflect.TypeOf(normalize.Action{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !declared[name] {
			t.Errorf("Action field %s (json %q) is not a CEL variable", typ.Field(i).Name, name)
		}
	}
	if len(Variables) != numVars {
		t.Errorf("%d variables, %d activation slots", len(Variables), numVars)
	}
}
