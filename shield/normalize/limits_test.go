package normalize

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks the re-executed test binary of TestHugeShellInputInChild.
const childEnv = "SHIELD_NORMALIZE_LIMITS_CHILD"

// hugeShellInputs are the inputs of the penetration test (issue 10, C1) and their relatives: before
// the pre-scan, the first one ended the process with "fatal error: stack overflow" inside the
// shell parser, which no recover can catch.
func hugeShellInputs() map[string]string {
	return map[string]string{
		"160 000 nested parentheses (C1)": strings.Repeat("(", 160000) + "ls" + strings.Repeat(")", 160000),
		"200 000 nested subshells":        strings.Repeat("( ", 200000) + "ls" + strings.Repeat(" )", 200000),
		"400 000 nested [[ ! ]]":          "[[ " + strings.Repeat("! ", 400000) + "a ]]",
		"340 000 && in a chain":           strings.Repeat("a&&", 340000) + "a",
	}
}

// TestHugeShellInputInChild normalises the huge inputs in a child process, since a stack overflow
// cannot be recovered: the child must exit normally and report every input over a limit.
func TestHugeShellInputInChild(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		n := New(nil, Options{})
		out := map[string]string{}
		for name, cmd := range hugeShellInputs() {
			a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
			out[name] = a.ParseError
		}
		b, _ := json.Marshal(out)
		os.Stdout.Write(append([]byte("RESULT "), b...))
		os.Stdout.Write([]byte("\n"))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugeShellInputInChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s := string(out)
		if i := strings.Index(s, "fatal error"); i >= 0 {
			s = s[i:min(len(s), i+300)]
		} else if len(s) > 600 {
			s = s[:600]
		}
		t.Fatalf("the child normalising huge shell input died (%v):\n%s", err, s)
	}
	var res map[string]string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(res) != len(hugeShellInputs()) {
		t.Fatalf("child reported %d results:\n%s", len(res), out)
	}
	for name, perr := range res {
		if !strings.HasPrefix(perr, "input limit: ") {
			t.Errorf("%s: parse_error %q, want an input limit", name, perr)
		}
	}
}
