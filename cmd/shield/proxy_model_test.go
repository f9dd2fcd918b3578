package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// shield proxy model refuses what would expose it or leave it without an upstream.
func TestProxyModelUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "model"}, "give --upstream URL"},
		{[]string{"proxy", "model", "--listen", "0.0.0.0:8788", "--upstream", "http://127.0.0.1:1"}, "loopback"},
		{[]string{"proxy", "model", "--listen", "127.0.0.1:0", "--upstream", "ftp://x"}, "not an http(s) URL"},
		{[]string{"proxy", "model", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1", "--api", "gemini"}, "unknown API"},
	} {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
