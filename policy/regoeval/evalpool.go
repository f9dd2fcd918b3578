package regoeval

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Rego evaluation recurses deeply (OPA's evaluator is written in continuation-passing style).
// On a fresh goroutine, which is what gRPC gives a call whenever its few stream workers are
// busy, every evaluation grows the stack from 8 KiB by repeated copying, and the garbage
// collector shrinks the stacks of parked goroutines again. Profiles of `shield serve` under
// load showed about 10 % of the server's CPU in runtime.copystack, most of it under the
// evaluator; evaluating the default bundle's six benchmark calls on fresh goroutines spent about
// as much copying stacks (BenchmarkTiers/rego-fresh-goroutine against rego-fresh-inline).
//
// Evaluations therefore run on a few long-lived goroutines that keep a deep stack: each parks
// with a padded frame live, so the collector (which halves a stack only while less than a
// quarter of it is in use) leaves stacks up to four times the pad alone. The pool never queues:
// when every evaluation goroutine is busy, the caller evaluates on its own goroutine, as before.

// stackPad is the frame an evaluation goroutine keeps live while it waits.
const stackPad = 32 << 10

type evalJob struct {
	run      func()
	done     chan struct{}
	panicked any // what run panicked with, raised again on the caller's goroutine
}

var (
	evalPoolOnce sync.Once
	evalJobs     chan *evalJob // unbuffered: a send succeeds only when a goroutine is waiting
	jobPool      = sync.Pool{New: func() any { return &evalJob{done: make(chan struct{}, 1)} }}
)

// evalWorkers is the number of evaluation goroutines.
func evalWorkers() int { return max(2*runtime.GOMAXPROCS(0), 4) }

// onEvalStack runs f on an idle evaluation goroutine, or on the caller's when none is idle, and
// returns when f has returned. A panic in f is raised again on the caller's goroutine (where
// the pipeline recovers it and fails the call closed), never left on the evaluation goroutine,
// where it would end the process.
func onEvalStack(f func()) {
	evalPoolOnce.Do(func() {
		evalJobs = make(chan *evalJob)
		for range evalWorkers() {
			go evalWorker()
		}
	})
	j := jobPool.Get().(*evalJob)
	j.run = f
	select {
	case evalJobs <- j:
		<-j.done
	default:
		j.run, j.panicked = nil, nil
		jobPool.Put(j)
		f()
		return
	}
	p := j.panicked
	j.run, j.panicked = nil, nil
	jobPool.Put(j)
	if p != nil {
		panic(p)
	}
}

func evalWorker() {
	var pad [stackPad]byte
	evalLoop(&pad)
}

// evalLoop serves jobs below evalWorker's padded frame, which stays live while it waits.
//
//go:noinline
func evalLoop(pad *[stackPad]byte) {
	pad[0] = 1
	for j := range evalJobs {
		runJob(j)
		j.done <- struct{}{}
	}
}

func runJob(j *evalJob) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked = &EvalPanic{Value: r, Stack: debug.Stack()}
		}
	}()
	j.run()
}

// EvalPanic is what a panic during an evaluation on an evaluation goroutine is raised again
// with on the caller's goroutine: the value and the stack where it happened.
type EvalPanic struct {
	Value any
	Stack []byte
}

func (p *EvalPanic) String() string {
	return fmt.Sprintf("%v (on the evaluation goroutine)\n%s", p.Value, p.Stack)
}
