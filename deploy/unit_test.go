package deploy

import (
	"os"
	"strings"
	"testing"
)

// readUnit parses systemd/shield.service into key → values (in order; a key may repeat).
func readUnit(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("systemd/shield.service")
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string][]string{}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == ';' || l[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("unit line without '=': %q", l)
		}
		kv[k] = append(kv[k], v)
	}
	return kv
}
