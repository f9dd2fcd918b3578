package modelguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// API names, as --api takes them.
const (
	Anthropic       = "anthropic"
	OpenAIResponses = "openai-responses"
	OpenAIChat      = "openai-chat"
)

// Bounds (defaults of the Options fields of the same names).
const (
	DefaultMaxLine    = 8 << 20  // one SSE line
	DefaultMaxEvent   = 8 << 20  // one SSE event (its lines together)
	DefaultMaxArgs    = 4 << 20  // one tool call's arguments, buffered until the call is complete
	DefaultMaxHeld    = 16 << 20 // bytes held behind undecided calls in one response
	DefaultMaxBody    = 32 << 20 // a non-streamed response body; also a request body
	DefaultMaxCalls   = 128      // tool calls in one response
	DefaultHold       = 60 * time.Second
	maxErrorBody      = 1 << 20 // a non-2xx response body passed to the runtime
	upstreamHeaderTTL = 120 * time.Second
)

// Decider is what the guard asks; *client.Client implements it (fail-closed).
type Decider interface {
	Decide(ctx context.Context, c client.Call, hold bool) client.Decision
}

var _ Decider = (*client.Client)(nil)

// Options configure a Guard. Zero values take the defaults above.
type Options struct {
	Decider  Decider // required
	Upstream string  // the model API's base URL, e.g. https://api.anthropic.com
	// API restricts the guard to one API: requests to the other APIs' endpoints are refused.
	// Empty: every endpoint is routed by its path (…/messages, …/responses, …/chat/completions).
	API       string
	Workspace string // sent as every call's cwd
	Session   string
	// Hold is how long an ESCALATE waits for a human before the call is stopped.
	Hold                                                   time.Duration
	MaxLine, MaxEvent, MaxArgs, MaxHeld, MaxBody, MaxCalls int
	Transport                                              http.RoundTripper // default: a fresh transport without compression
	Log                                                    func(format string, args ...any)
}

// Guard is the reverse proxy; it is an http.Handler.
type Guard struct {
	o        Options
	upstream *url.URL
	hc       *http.Client
}

// New checks the options and prepares a guard.
func New(o Options) (*Guard, error) {
	if o.Decider == nil {
		return nil, errors.New("model guard: no decider")
	}
	u, err := url.Parse(o.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model guard: upstream %q is not an http(s) URL", o.Upstream)
	}
	switch o.API {
	case "", Anthropic, OpenAIResponses, OpenAIChat:
	default:
		return nil, fmt.Errorf("model guard: unknown API %q (want %s, %s or %s)", o.API, OpenAIResponses, OpenAIChat, Anthropic)
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxLine, DefaultMaxLine)
	def(&o.MaxEvent, DefaultMaxEvent)
	def(&o.MaxArgs, DefaultMaxArgs)
	def(&o.MaxHeld, DefaultMaxHeld)
	def(&o.MaxBody, DefaultMaxBody)
	def(&o.MaxCalls, DefaultMaxCalls)
	if o.Hold <= 0 {
		o.Hold = DefaultHold
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{Proxy: nil, DisableCompression: true, ResponseHeaderTimeout: upstreamHeaderTTL,
			MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}
	}
	return &Guard{o: o, upstream: u, hc: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// route names the API a request is for: "" for an endpoint that passes unchanged (model lists,
// token counting), "refuse" for one the guard cannot inspect.
func (g *Guard) route(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, "/")
	api := ""
	switch {
	case r.Method == http.MethodGet && (strings.HasSuffix(p, "/models") || strings.Contains(p, "/models/")):
		return ""
	case r.Method == http.MethodPost && (strings.HasSuffix(p, "/messages/count_tokens") || strings.HasSuffix(p, "/responses/input_tokens")):
		return ""
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		api = Anthropic
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		api = OpenAIResponses
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		api = OpenAIChat
	default:
		return "refuse"
	}
	if g.o.API != "" && api != g.o.API {
		return "refuse"
	}
	return api
}

var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, c := range src.Values("Connection") {
		for _, f := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(f))
		}
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := g.route(r)
	if api == "refuse" || r.Header.Get("Upgrade") != "" {
		g.o.Log("refused %s %s: not an endpoint the guard inspects", r.Method, r.URL.Path)
		apiError(w, g.o.API, http.StatusNotFound, "Shield model guard: "+r.Method+" "+r.URL.Path+" is not an endpoint the guard inspects")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(g.o.MaxBody)+1))
	if err != nil || len(body) > g.o.MaxBody {
		apiError(w, api, http.StatusRequestEntityTooLarge, "Shield model guard: request body unreadable or over the bound")
		return
	}
	u := *g.upstream
	u.Path = path.Join("/", g.upstream.Path, r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath, u.RawQuery = "", r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		apiError(w, api, http.StatusBadGateway, "Shield model guard: "+err.Error())
		return
	}
	copyHeaders(out.Header, r.Header)
	out.Header.Set("Accept-Encoding", "identity") // the guard reads the answer: no compression
	out.Host = g.upstream.Host
	resp, err := g.hc.Do(out)
	if err != nil {
		g.o.Log("upstream %s: %v", u.Redacted(), err)
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model API could not be reached")
		return
	}
	defer resp.Body.Close()
	ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if ce != "" && ce != "identity" {
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model API answered with Content-Encoding "+ce+", which the guard cannot inspect")
		return
	}
	if api == "" || resp.StatusCode < 200 || resp.StatusCode > 299 {
		g.passThrough(w, resp, api)
		return
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		g.serveStream(w, r.Context(), resp, api)
	case strings.HasPrefix(ct, "application/json") || strings.Contains(ct, "+json"):
		g.serveJSON(w, r.Context(), resp, api)
	default:
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model API answered with Content-Type "+ct+", which the guard cannot inspect")
	}
}

// passThrough relays an answer that carries no tool call (an endpoint that is not a model
// answer, or an error status), bounded.
func (g *Guard) passThrough(w http.ResponseWriter, resp *http.Response, api string) {
	limit := int64(g.o.MaxBody)
	if api != "" {
		limit = maxErrorBody
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil || int64(len(b)) > limit {
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model API's answer is unreadable or over the bound")
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	w.Write(b)
}

// apiError answers with an error in the API's own JSON shape.
func apiError(w http.ResponseWriter, api string, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if api == Anthropic {
		w.Write(mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}}))
		return
	}
	w.Write(mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": "shield_guard_error", "param": nil, "code": "shield_guard"}}))
}

// call is one tool call found in an answer.
type call struct {
	ID, Name string          // as the runtime sees them
	Tool     string          // as the appliance is asked
	Args     json.RawMessage // evaluated arguments
	Bad      string          // why it cannot be decided (then it is stopped without asking)
	Allowed  bool
	Message  string // the replacement text when stopped
}

// decide asks the appliance about c unless it is already known bad; a non-ALLOW stops it.
func (g *Guard) decide(ctx context.Context, api string, c *call) {
	if c.Bad == "" && c.Tool == "" {
		c.Bad = "the call names no tool"
	}
	if c.Bad != "" {
		c.Allowed = false
		c.Message = fmt.Sprintf("[Shield stopped the tool call %s (%s): %s; it was not run]", c.Name, c.ID, c.Bad)
		g.o.Log("stopped %s %s: %s", api, c.Name, c.Bad)
		return
	}
	hctx, cancel := context.WithTimeout(ctx, g.o.Hold)
	defer cancel()
	d := g.o.Decider.Decide(hctx, client.Call{CallID: c.ID, Tool: c.Tool, Arguments: c.Args, Session: g.o.Session,
		Cwd: g.o.Workspace, Labels: map[string]string{"model_api": api, "seam": "model-guard"}}, true)
	c.Allowed = d.Allowed && d.Verdict == client.Allow && d.Err == nil
	if !c.Allowed {
		c.Message = fmt.Sprintf("[Shield stopped the tool call %s (%s): %s; it was not run]", c.Name, c.ID, d.Message())
		g.o.Log("stopped %s %s: %s", api, c.Name, d.Message())
	}
}

// serveJSON guards a non-streamed answer: the body is read whole (bounded), every call decided,
// and the original bytes sent when nothing was stopped.
func (g *Guard) serveJSON(w http.ResponseWriter, ctx context.Context, resp *http.Response, api string) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(g.o.MaxBody)+1))
	if err != nil || len(b) > g.o.MaxBody {
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model's answer is unreadable or over the bound")
		return
	}
	out, err := g.rewriteJSON(ctx, api, b)
	if err != nil {
		g.o.Log("%s answer refused: %v", api, err)
		apiError(w, api, http.StatusBadGateway, "Shield model guard: the model's answer could not be inspected: "+err.Error())
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// rewriteJSON returns the answer with every stopped call replaced.
func (g *Guard) rewriteJSON(ctx context.Context, api string, b []byte) ([]byte, error) {
	top, err := strictObject(b)
	if err != nil {
		return nil, err
	}
	switch api {
	case Anthropic:
		return g.anthropicJSON(ctx, b, top)
	case OpenAIResponses:
		return g.responsesJSON(ctx, b, top)
	default:
		return g.chatJSON(ctx, b, top)
	}
}
