package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The non-streamed path: a redirect is not followed (the key would go with a 307), a refusal
// still reports its usage, an oversize or malformed answer is an error, never text.
func TestCompleterFailsClosed(t *testing.T) {
	var hits int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer other.Close()
	cases := map[string]struct {
		status int
		body   string
		want   error
	}{
		"refusal":   {200, `{"choices":[{"message":{"content":"","refusal":"no"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, ErrRefusal},
		"malformed": {200, `{"choices":[]}`, ErrMalformed},
		"oversize":  {200, `{"choices":[{"message":{"content":"` + strings.Repeat("a", MaxAnswerBytes) + `"}}]}`, ErrOversize},
		"redirect":  {307, "", nil},
		"status":    {500, "boom", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.status == 307 {
					http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			t.Setenv("TEST_LLM_KEY", "k-123")
			c, err := NewCompleter(Config{Provider: "openai", BaseURL: srv.URL, Model: "m", APIKeyEnv: "TEST_LLM_KEY"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(context.Background(), Request{System: "s", Messages: []Message{{Role: "user", Content: "u"}}}, CompleteOptions{JSONObject: true})
			if err == nil {
				t.Fatalf("no error; text %q", resp.Text)
			}
			var se *StatusError
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v, want %v", err, tc.want)
			case tc.want == nil && !errors.As(err, &se):
				t.Fatalf("err %v, want a StatusError", err)
			}
			if name == "refusal" && (resp == nil || resp.Usage.InputTokens+resp.Usage.OutputTokens != 5) {
				t.Fatalf("refusal lost its usage: %+v", resp)
			}
		})
	}
	if hits != 0 {
		t.Fatalf("the redirect was followed %d times", hits)
	}
}

func TestCompleterRequiresKeyItNames(t *testing.T) {
	t.Setenv("TEST_LLM_ABSENT", "")
	if _, err := NewCompleter(Config{Provider: "anthropic", BaseURL: "http://127.0.0.1:1", Model: "m", APIKeyEnv: "TEST_LLM_ABSENT"}, nil); err == nil {
		t.Fatal("an empty key variable was accepted")
	}
	if _, err := NewCompleter(Config{Provider: "other", BaseURL: "http://127.0.0.1:1", Model: "m"}, nil); err == nil {
		t.Fatal("an unknown provider was accepted")
	}
}
