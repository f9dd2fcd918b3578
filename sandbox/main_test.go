package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// The test binary doubles as the shield binary (trampoline and canary entry points) and as the
// victim program: a test re-executes it with arguments or an environment variable that select
// the role, as go-landlock's lltest does. Confinement is irreversible, so it only ever happens in
// these children.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case TrampolineCommand:
			err := Trampoline(os.Args[2:])
			fmt.Fprintf(os.Stderr, "%s: %v\n", TrampolineCommand, err)
			os.Exit(126)
		case CanaryCommand:
			if err := RunProbes(os.Stdin, os.Stdout); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", CanaryCommand, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	if name := os.Getenv(victimEnv); name != "" {
		os.Exit(runVictim(name))
	}
	os.Exit(m.Run())
}

// victimReport is what a victim child prints.
type victimReport struct {
	Result string `json:"result"` // "ok" or the errno name or "error: ..."
	Apply  string `json:"apply,omitempty"`
}

func printVictim(r victimReport) {
	_ = json.NewEncoder(os.Stdout).Encode(r)
}
