package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// HTTPPath is where the appliance's HTTP listener mounts NewHTTPHandler, and the URL path a
// Claude Code http hook is pointed at:
//
//	{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"http",
//	  "url":"http://127.0.0.1:PORT/shield/v1/hooks/claude-code/pretooluse","timeout":300,
//	  "headers":{"Authorization":"Bearer TOKEN"}}]}]}}
const HTTPPath = "/shield/v1/hooks/claude-code/pretooluse"

// HTTPHandler answers Claude Code's `type: "http"` PreToolUse hooks: a POST whose body is the
// hook input, answered 200 with the deny JSON for anything but an ALLOW, and 200 with `{}` (no
// opinion) for an ALLOW. Claude Code treats a non-2xx status, an unreachable endpoint or a
// timeout as "no opinion" and runs the tool, so every failure here, a panic of the decider
// included, is still a 200 deny; only a request that is not a hook call at all (wrong method or
// content type) gets a 4xx.
//
// The handler authenticates nobody: mount it at HTTPPath behind the listener's authentication
// (bearer token; Claude Code sends the configured "headers"), with the caller's identity in the
// request context for the decider, which decides for runtime claude-code. An http hook cannot
// cover the appliance being down (Claude Code then runs the tool); the command hook can.
type HTTPHandler struct {
	Decider Decider
	// Hold bounds how long an ESCALATE is held for a human within one request; it must be below
	// the hook's configured timeout. Zero: DefaultTimeout.
	Hold time.Duration
}

// NewHTTPHandler returns an HTTPHandler deciding through d with the default hold.
func NewHTTPHandler(d Decider) *HTTPHandler { return &HTTPHandler{Decider: d} }

var _ http.Handler = (*HTTPHandler)(nil)

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a PreToolUse hook input", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
			return
		}
	}
	hold := h.Hold
	if hold <= 0 {
		hold = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), hold)
	defer cancel()
	body, err := io.ReadAll(io.LimitReader(http.MaxBytesReader(w, r.Body, MaxInput+1), MaxInput+1))
	var a Answer
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		a = Denied("hook input over the bound")
	case err != nil:
		a = Denied("reading the hook input: " + err.Error())
	default:
		if in, derr := Decode(body); derr != nil {
			a = Denied(derr.Error())
		} else {
			a = h.decide(ctx, in)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if a.Deny {
		w.Write(DenyJSON(a.Reason))
		return
	}
	w.Write([]byte("{}"))
}

// decide asks the decider, turning a panic into a deny.
func (h *HTTPHandler) decide(ctx context.Context, in Input) (a Answer) {
	defer func() {
		if p := recover(); p != nil {
			a = Denied(fmt.Sprintf("the hook handler failed: %v", p))
		}
	}()
	if h.Decider == nil {
		return Denied("no decider configured")
	}
	return AnswerFor(h.Decider.Decide(ctx, in.Call(), true))
}
