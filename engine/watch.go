package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// watchQueue is how many events may wait for a watching client; one further behind is dropped
// (its stream ends), so a watcher never slows a turn.
const watchQueue = 256

// watchers are the clients watching sessions (ClientService.WatchSession of openparallax.v1).
// The zero value is ready; publish costs one lock when nobody watches.
type watchers struct {
	mu  sync.Mutex
	set map[*watcher]struct{}
}

// watcher is one watching client: events of session (every session and log entries when "").
type watcher struct {
	session string
	ch      chan *opv1.PipelineEvent
	behind  chan struct{} // closed when the watcher fell too far behind and was dropped
}

// maxWatchers bounds the watchers of one engine.
const maxWatchers = 64

// add registers a watcher, or returns nil when maxWatchers already watch.
func (w *watchers) add(session string) *watcher {
	x := &watcher{session: session, ch: make(chan *opv1.PipelineEvent, watchQueue), behind: make(chan struct{})}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set == nil {
		w.set = map[*watcher]struct{}{}
	}
	if len(w.set) >= maxWatchers {
		return nil
	}
	w.set[x] = struct{}{}
	return x
}

func (w *watchers) remove(x *watcher) {
	w.mu.Lock()
	delete(w.set, x)
	w.mu.Unlock()
}

// watching reports whether anyone watches every session.
func (w *watchers) watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.set {
		if c.session == "" {
			return true
		}
	}
	return false
}

// publish hands a turn's event to the watchers of its session and of every session.
func (w *watchers) publish(ev *agentv1.PipelineEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.set) == 0 {
		return
	}
	x := toOpenParallax(ev)
	for c := range w.set {
		if c.session == "" || c.session == ev.GetSessionId() {
			w.offer(c, x)
		}
	}
}

// publishLog hands a log entry to the watchers of every session.
func (w *watchers) publishLog(ev *opv1.PipelineEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.set {
		if c.session == "" {
			w.offer(c, ev)
		}
	}
}

// offer queues ev for c, or drops c when its queue is full. Called with w.mu held.
func (w *watchers) offer(c *watcher, ev *opv1.PipelineEvent) {
	select {
	case c.ch <- ev:
	default:
		delete(w.set, c)
		close(c.behind)
	}
}

// logTee passes log records on and publishes them as LOG_ENTRY events.
type logTee struct {
	next  slog.Handler
	w     *watchers
	attrs []slog.Attr
}

// Enabled: what the next handler takes, and records of level info and up while anyone watches.
func (l *logTee) Enabled(ctx context.Context, lv slog.Level) bool {
	return l.next.Enabled(ctx, lv) || (lv >= slog.LevelInfo && l.w.watching())
}

func (l *logTee) Handle(ctx context.Context, r slog.Record) error {
	attrs := map[string]any{}
	for _, a := range l.attrs {
		attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
	js, _ := json.Marshal(attrs)
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	l.w.publishLog(&opv1.PipelineEvent{EventType: opv1.PipelineEventType_LOG_ENTRY, TimestampUnixMs: t.UnixMilli(),
		LogEntry: &opv1.LogEntry{Level: r.Level.String(), Message: r.Message, AttrsJson: string(js), TimestampUnixMs: t.UnixMilli()}})
	if !l.next.Enabled(ctx, r.Level) {
		return nil
	}
	return l.next.Handle(ctx, r)
}

func (l *logTee) WithAttrs(as []slog.Attr) slog.Handler {
	return &logTee{next: l.next.WithAttrs(as), w: l.w, attrs: append(append([]slog.Attr(nil), l.attrs...), as...)}
}

func (l *logTee) WithGroup(name string) slog.Handler {
	return &logTee{next: l.next.WithGroup(name), w: l.w, attrs: l.attrs}
}
