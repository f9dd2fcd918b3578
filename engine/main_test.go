package engine

import (
	"fmt"
	"os"
	"testing"

	"github.com/shieldsec/shield/engine/exec"
	"github.com/shieldsec/shield/sandbox"
)

// TestMain lets the test binary act as the shield binary's trampoline and tool reaper, so tests
// can run the shell executor under the real sandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.TrampolineCommand {
		if err := sandbox.Trampoline(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "trampoline:", err)
		}
		os.Exit(126)
	}
	if len(os.Args) > 1 && os.Args[1] == exec.ReaperCommand {
		os.Exit(exec.Reaper(os.Args[2:]))
	}
	os.Exit(m.Run())
}
