package shadow

import (
	"context"
	"testing"

	"github.com/shieldsec/shield/shield"
)

// BenchmarkRecorderOffer is what shadow mode adds to a decision: the wrapped recorder's
// non-blocking offer (copying the call), with room in the queue and with the queue full.
func BenchmarkRecorderOffer(b *testing.B) {
	pol := policyOf("p", &tier{})
	rec := decision("1", "Bash", `{"command":"go test ./... && git status"}`, shield.Allow)
	for _, tc := range []struct {
		name  string
		queue func(n int) int
	}{
		{"room", func(n int) int { return n + 1 }},
		{"full", func(int) int { return 1 }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := New(Config{Candidate: pol, Live: func() *shield.Policy { return pol }, QueueSize: tc.queue(b.N)})
			if err != nil {
				b.Fatal(err)
			}
			r := e.Recorder(okRecorder{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := r.RecordDecision(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
