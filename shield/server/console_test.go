package server

import (
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleAssets: the console is served with the strict CSP; every asset it references is
// embedded and served; no asset loads anything from elsewhere, and the script never parses
// strings as markup or code.
func TestConsoleAssets(t *testing.T) {
	f := newHTTPFixture(t, nil)
	resp, err := http.Get(f.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != ConsoleCSP {
		t.Fatalf("console: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("console headers %v", resp.Header)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 2 {
		t.Fatalf("page references %v", refs)
	}
	for _, r := range refs {
		if !strings.HasPrefix(r[1], "/console/") {
			t.Errorf("page references %q outside the embedded assets", r[1])
			continue
		}
		resp, err := http.Get(f.url + r[1])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != ConsoleCSP {
			t.Errorf("%s: %d", r[1], resp.StatusCode)
		}
	}
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	forbidden := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(['"]on|style=`)
	err = fs.WalkDir(consoleFS, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(consoleFS, p)
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to %q: assets must come from the appliance", p, m)
		}
		if strings.HasSuffix(p, ".js") {
			if m := forbidden.Find(b); m != nil {
				t.Errorf("%s uses %q: insert text, never markup or code", p, m)
			}
		}
		if strings.HasSuffix(p, ".html") && regexp.MustCompile(`<script>|<style>| on[a-z]+=`).Match(b) {
			t.Errorf("%s has inline script, style or handler (the CSP refuses them)", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Only the listed assets; index.html only at /.
	for _, p := range []string{"/console/index.html", "/console/nope.js", "/console/..%2fhttp.go"} {
		resp, err := http.Get(f.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
}
