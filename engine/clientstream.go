package engine

import (
	"errors"
	"sync"
	"time"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// clientQueue is how many events may wait for a client that reads slowly; a client further
// behind than that (or gone) ends its turn, as a disconnect does.
const clientQueue = 1024

// errClientBehind ends a turn whose client stopped reading.
var errClientBehind = errors.New("the client stopped reading its events")

// clientStream sends a turn's events to its client from one goroutine, so a client that stops
// reading, without going away, cannot block the turn (and every turn queued behind it) inside a
// gRPC Send held by flow control.
type clientStream struct {
	out    agentv1.ClientService_SendMessageServer
	q      chan *agentv1.PipelineEvent
	done   chan struct{}
	failed chan struct{} // closed when a Send failed or the queue overflowed
	err    error         // set before failed is closed
	stop   func()        // cancels the turn
	once   sync.Once
}

func newClientStream(out agentv1.ClientService_SendMessageServer, stop func()) *clientStream {
	c := &clientStream{out: out, q: make(chan *agentv1.PipelineEvent, clientQueue), done: make(chan struct{}),
		failed: make(chan struct{}), stop: stop}
	go c.loop()
	return c
}

func (c *clientStream) loop() {
	defer close(c.done)
	for ev := range c.q {
		if err := c.out.Send(ev); err != nil {
			c.fail(err)
			for range c.q { // discard the rest
			}
			return
		}
	}
}

func (c *clientStream) fail(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.failed)
		c.stop()
	})
}

// send queues ev; it fails, and ends the turn, once the client is gone or too far behind.
func (c *clientStream) send(ev *agentv1.PipelineEvent) error {
	select {
	case <-c.failed:
		return c.err
	default:
	}
	select {
	case c.q <- ev:
		return nil
	default:
		c.fail(errClientBehind)
		return errClientBehind
	}
}

// close flushes what is queued, waiting at most wait for a client that does not read (the
// handler's return then ends the stream and its blocked Send).
func (c *clientStream) close(wait time.Duration) {
	close(c.q)
	select {
	case <-c.failed:
		return // gone or too far behind: nothing more will be read
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
}
