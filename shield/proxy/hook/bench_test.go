package hook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// shieldBinary is $SHIELD_TEST_BIN, else a fresh build of cmd/shield.
func shieldBinary(b *testing.B) string {
	if p := os.Getenv("SHIELD_TEST_BIN"); p != "" {
		return p
	}
	out := filepath.Join(b.TempDir(), "shield")
	cmd := exec.Command("go", "build", "-o", out, "../../../cmd/shield")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

func benchInput(command string) []byte {
	return []byte(fmt.Sprintf(`{"session_id":"bench","cwd":"/work/proj","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"t"}`, command))
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d) == 0 {
		return
	}
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkHookProcess is what a runtime pays per tool call: start `shield hook claude-code`, pipe
// the hook input, wait for its answer (an ALLOW: exit 0, no output) from a real appliance
// (`shield serve`, unix socket, every decision audited). "repeated" sends the same command (a
// verdict-cache hit), "unique" a new one each time (a full evaluation).
func BenchmarkHookProcess(b *testing.B) {
	bin := shieldBinary(b)
	root := b.TempDir()
	a := startAppliance(b, bin, root, "/work/proj")
	for _, mode := range []string{"repeated", "unique"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				cmdline := "ls -la"
				if mode == "unique" {
					cmdline = fmt.Sprintf("ls -la src/dir%d", i)
				}
				cmd := exec.Command(bin, "hook", "claude-code", "--socket", a.socket)
				cmd.Stdin = bytes.NewReader(benchInput(cmdline))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				err := cmd.Run()
				lat = append(lat, time.Since(start))
				if err != nil || out.Len() != 0 {
					b.Fatalf("hook for %q: %v %q", cmdline, err, out.String())
				}
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkHookInProcess is the same answer without the process start: Command with a client of
// the running appliance (a fresh client each time, as each hook process has).
func BenchmarkHookInProcess(b *testing.B) {
	bin := shieldBinary(b)
	a := startAppliance(b, bin, b.TempDir(), "/work/proj")
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		c, err := client.New(client.Options{Socket: a.socket, Runtime: string(ClaudeCode)})
		if err != nil {
			b.Fatal(err)
		}
		r := Command(context.Background(), ClaudeCode, c, bytes.NewReader(benchInput(fmt.Sprintf("ls -la src/dir%d", i))), 10*time.Second)
		c.Close()
		lat = append(lat, time.Since(start))
		if r.Exit != 0 {
			b.Fatalf("%+v", r)
		}
	}
	reportPercentiles(b, lat)
}
