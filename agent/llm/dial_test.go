package llm

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPinnedTransport: a client given Dial reaches the model's host name at that address without
// resolving it, and refuses every other destination.
func TestPinnedTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("model:" + r.Host)) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tr, err := pinnedTransport("http://model.invalid:"+port+"/v1", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: tr}
	resp, err := c.Get("http://model.invalid:" + port + "/v1/models")
	if err != nil {
		t.Fatalf("pinned host: %v", err)
	}
	resp.Body.Close()
	for _, u := range []string{"http://127.0.0.1:" + port + "/", "http://other.invalid:" + port + "/", "http://model.invalid:1/"} {
		if _, err := c.Get(u); err == nil || !strings.Contains(err.Error(), "refusing to connect") {
			t.Errorf("GET %s: %v, want a refusal", u, err)
		}
	}
	for _, bad := range [][2]string{{"http://m/v1", "not-an-ip"}, {"::", "127.0.0.1"}} {
		if _, err := pinnedTransport(bad[0], bad[1]); err == nil {
			t.Errorf("pinnedTransport(%q, %q) accepted", bad[0], bad[1])
		}
	}
}
