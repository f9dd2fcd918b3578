package hook_test

import (
	"fmt"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/hook"
)

// A Claude Code hook input becomes the call the appliance evaluates.
func ExampleDecode() {
	in, err := hook.Decode([]byte(`{"session_id":"s1","cwd":"/work","hook_event_name":"PreToolUse",
		"tool_name":"mcp__fs__write_file","tool_input":{"path":"/work/a","content":"x"},"tool_use_id":"toolu_1"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := in.Call()
	fmt.Println(c.Tool, string(c.Arguments), c.Session, c.Cwd, c.Labels["mcp.server"], c.Labels["mcp.tool"])
	// Output: mcp__fs__write_file {"path":"/work/a","content":"x"} s1 /work fs write_file
}

// Only an ALLOW is silent; everything else is a deny in the form both runtimes honour.
func ExampleResultFor() {
	allow := hook.ResultFor(hook.AnswerFor(client.Decision{Verdict: client.Allow, Allowed: true}))
	fmt.Printf("allow: exit %d, %d bytes\n", allow.Exit, len(allow.Stdout)+len(allow.Stderr))
	block := hook.ResultFor(hook.AnswerFor(client.Decision{Verdict: client.Block, Rules: []string{"cel:vcs.force-push"},
		Reason: "force-pushes and rewrites shared history"}))
	fmt.Printf("block: exit %d\n%s%s", block.Exit, block.Stderr, block.Stdout)
	// Output:
	// allow: exit 0, 0 bytes
	// block: exit 2
	// Shield: BLOCK (cel:vcs.force-push): force-pushes and rewrites shared history
	// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Shield: BLOCK (cel:vcs.force-push): force-pushes and rewrites shared history"}}
}
