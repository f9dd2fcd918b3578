package mcp

import (
	"bytes"
	"context"
	"testing"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// BenchmarkClientToolCall: what the relay adds per tools/call before the appliance is asked
// (strict parse, tool-call extraction, forwarding) with an appliance that answers at once.
func BenchmarkClientToolCall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/user/project/src/main.go","content":"package main\n\nfunc main() {}\n"},"_meta":{"claudecode/toolUseId":"toolu_01","progressToken":12}}}`)
	r, _ := NewRelay(Options{Decider: &fakeDecider{verdict: map[string]client.Decision{"write_file": allow}}, Workspace: "/home/user/project"})
	var out bytes.Buffer
	r.toServer, r.toClient = &lockedWriter{w: &out}, &lockedWriter{w: &out}
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		out.Reset()
		r.clientMessage(context.Background(), line)
		r.wg.Wait()
	}
}

func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/user/project/src/main.go","content":"package main\n\nfunc main() {}\n"}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
