package hook

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// DefaultTimeout is how long a command hook takes at most when not told otherwise: below Claude
// Code's default hook timeout (60 s), after which the runtime would run the tool.
const DefaultTimeout = 50 * time.Second

// grace is how long Command waits, once its deadline has passed, for the decider to return its
// own (more precise) refusal before answering a generic one.
const grace = 200 * time.Millisecond

// Result is what a command hook writes and how it exits.
type Result struct {
	Stdout []byte
	Stderr string
	Exit   int
	Answer Answer
	// Decision is the appliance's answer; nil when none was reached (bad input, timeout).
	Decision *client.Decision
}

// ResultFor renders an answer the way both runtimes honour it. Deny: exit status 2 with the
// reason on stderr (both runtimes block on 2 whatever stdout holds) and the deny JSON on stdout (the
// structured form, for a runtime that reads it first). Allow: exit 0 and no output at all, so the
// runtime's own permission rules still apply.
func ResultFor(a Answer) Result {
	if !a.Deny {
		return Result{Answer: a}
	}
	return Result{Stdout: append(DenyJSON(a.Reason), '\n'), Stderr: a.Reason + "\n", Exit: 2, Answer: a}
}

// Command runs one command hook of runtime rt: reads the hook input from stdin (at most MaxInput
// bytes), decodes it, asks d (holding an ESCALATE for a human) and answers. It returns within
// timeout (DefaultTimeout when ≤ 0) plus a short grace, whatever stdin or d do; every failure is a
// deny.
func Command(ctx context.Context, rt Runtime, d Decider, stdin io.Reader, timeout time.Duration) Result {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- ResultFor(Denied(fmt.Sprintf("the %s hook failed: %v", rt, p)))
			}
		}()
		done <- decideInput(dctx, d, stdin)
	}()
	select {
	case r := <-done:
		return r
	case <-dctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case r := <-done:
		return r
	case <-t.C:
		return ResultFor(Denied(fmt.Sprintf("no decision within the hook's %s deadline", timeout)))
	}
}

func decideInput(ctx context.Context, d Decider, stdin io.Reader) Result {
	b, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	if err != nil {
		return ResultFor(Denied("reading the hook input: " + err.Error()))
	}
	in, err := Decode(b)
	if err != nil {
		return ResultFor(Denied(err.Error()))
	}
	dec := d.Decide(ctx, in.Call(), true)
	r := ResultFor(AnswerFor(dec))
	r.Decision = &dec
	return r
}
