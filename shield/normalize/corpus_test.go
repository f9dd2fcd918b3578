package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// seedCall is one fuzz seed: a tool call.
type seedCall struct {
	Tool string
	Args []byte
	Cwd  string
}

// corpusArguments returns the arguments of the golden cases and of testdata/seeds.jsonl, the seeds
// of the fuzz targets.
func corpusArguments(t testing.TB) [][]byte {
	var out [][]byte
	for _, c := range corpusCalls(t) {
		out = append(out, c.Args)
	}
	return out
}

func corpusCalls(t testing.TB) []seedCall {
	t.Helper()
	var out []seedCall
	for _, cases := range loadGolden(t) {
		for _, c := range cases {
			out = append(out, seedCall{Tool: c.Tool, Args: argsJSON(t, c.Args), Cwd: c.Cwd})
		}
	}
	files, _ := filepath.Glob("testdata/seeds/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range splitLines(data) {
			var c struct {
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, seedCall{Tool: c.Tool, Args: c.Arguments})
		}
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, b[start:i])
			}
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
