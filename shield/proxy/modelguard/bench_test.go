package modelguard

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// BenchmarkFilter: what the guard adds per streamed answer (parse, strict check, hold, release),
// with an appliance that answers at once: a text answer of 200 deltas, and one with a tool call.
func BenchmarkFilter(b *testing.B) {
	var text []string
	for i := 0; i < 200; i++ {
		text = append(text, `content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"some words of text "}}`)
	}
	textBlock := append(append([]string{`content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}, text...),
		`content_block_stop|{"type":"content_block_stop","index":0}`)
	for _, bc := range []struct {
		name, body string
	}{
		{"anthropic-text", anthropicStreamOf("end_turn", textBlock)},
		{"anthropic-tool", anthropicStreamOf("tool_use", anthropicTool(0, "t", "Bash", `{"command":"`+strings.Repeat("ls ", 100)+`"}`))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := New(Options{Decider: allowAll{}, Upstream: "http://127.0.0.1:1"})
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(bc.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				g.filterStream(context.Background(), Anthropic, bytes.NewReader(body), io.Discard, nil)
			}
		})
	}
}
