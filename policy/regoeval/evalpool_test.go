package regoeval

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEvalPoolPanic: a panic on an evaluation goroutine is raised on the caller's, with the
// value and the stack where it happened, and the goroutine keeps serving. (A call that finds no
// idle evaluation goroutine runs inline and panics as is.)
func TestEvalPoolPanic(t *testing.T) {
	pooled := 0
	for i := 0; i < 10_000 && pooled < 2*evalWorkers(); i++ {
		func() {
			defer func() {
				switch r := recover().(type) {
				case *EvalPanic:
					if r.Value != "boom" || !strings.Contains(fmt.Sprint(r), "evalpool_test.go") {
						t.Fatalf("recovered %v, want boom and the panic's stack", r)
					}
					pooled++
				case string:
					if r != "boom" {
						t.Fatalf("recovered %q, want boom", r)
					}
				default:
					t.Fatalf("recovered %v (%T), want boom", r, r)
				}
			}()
			onEvalStack(func() { panic("boom") })
			t.Fatal("onEvalStack returned after a panic")
		}()
	}
	if pooled == 0 {
		t.Fatal("no panic was raised on an evaluation goroutine")
	}
	ran := false
	onEvalStack(func() { ran = true })
	if !ran {
		t.Fatal("the job did not run")
	}
}

// TestEvalPoolSaturated: with every evaluation goroutine busy, a caller evaluates on its own
// goroutine instead of waiting.
func TestEvalPoolSaturated(t *testing.T) {
	onEvalStack(func() {}) // start the pool
	release := make(chan struct{})
	var started, busy sync.WaitGroup
	// Occupy the goroutines: each job blocks until released. Callers that find none idle run
	// inline; count only those that reached a pool goroutine.
	n := evalWorkers()
	started.Add(n)
	for range n {
		busy.Add(1)
		go func() {
			defer busy.Done()
			onEvalStack(func() { started.Done(); <-release })
		}()
	}
	started.Wait()
	done := make(chan struct{})
	go func() {
		onEvalStack(func() {})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a caller waited for a busy pool")
	}
	close(release)
	busy.Wait()
}

// TestEvaluateOnPoolSameResult: an engine evaluating on the pool and one on the caller's
// goroutine give the same results, errors included (a cancelled context).
func TestEvaluateOnPoolSameResult(t *testing.T) {
	b := loadGood(t)
	pooled, err := Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	inline, err := CompileOptions(b, Options{CallerGoroutine: true})
	if err != nil {
		t.Fatal(err)
	}
	in := netInput("webhook.site", "hostname")
	p, perr := pooled.Evaluate(context.Background(), in)
	i, ierr := inline.Evaluate(context.Background(), in)
	if perr != nil || ierr != nil || len(p.Findings) != 1 || len(i.Findings) != 1 || p.Findings[0] != i.Findings[0] {
		t.Fatalf("pooled %+v %v, inline %+v %v", p, perr, i, ierr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pooled.Evaluate(ctx, in); err == nil {
		t.Fatal("a cancelled evaluation on the pool succeeded")
	}
}
