package client

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// An appliance that is not there never yields ALLOW, and the reason names where it was looked for.
func TestUnreachableApplianceRefuses(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "absent.sock")
	c, err := New(Options{Socket: sock, Runtime: "test", EvalTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, hold := range []bool{false, true} {
		d := c.Decide(context.Background(), Call{Tool: "Bash", Arguments: []byte(`{"command":"ls"}`)}, hold)
		if d.Allowed || d.Verdict != Block || d.Err == nil {
			t.Fatalf("hold=%v: got %+v, want a BLOCK with an error", hold, d)
		}
		if want := sock; !contains(d.Reason, want) {
			t.Fatalf("reason %q does not name the socket %s", d.Reason, want)
		}
	}
}

func TestDefaultSocketFollowsEnvironment(t *testing.T) {
	t.Setenv("SHIELD_SOCKET", "/run/x/s.sock")
	if got := DefaultSocket(); got != "/run/x/s.sock" {
		t.Fatalf("SHIELD_SOCKET ignored: %s", got)
	}
	t.Setenv("SHIELD_SOCKET", "")
	t.Setenv("STATE_DIRECTORY", "/var/lib/a:/var/lib/b")
	if got := DefaultSocket(); got != "/var/lib/a/shield.sock" {
		t.Fatalf("STATE_DIRECTORY ignored: %s", got)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
