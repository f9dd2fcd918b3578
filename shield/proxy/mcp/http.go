package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// HTTPProxy is the Streamable HTTP form of the relay: a reverse proxy for one MCP endpoint.
// Every POST body is bounded and parsed before anything is forwarded; a tools/call is decided
// while the POST is held, and a refused one is answered by the proxy (application/json) without
// reaching the server. Answers from the server — JSON bodies and SSE streams, on POST responses
// and on the GET stream, with progress notifications and server→client requests — are passed
// through unchanged as they arrive, and read on the way for tools/list annotations. A client's
// roots answer is narrowed to the workspace. Sessions (Mcp-Session-Id) keep their own state.
type HTTPProxy struct {
	opts     Options
	upstream *url.URL
	client   *http.Client

	mu       sync.Mutex
	sessions map[string]*state
}

// maxSessions bounds the per-session state kept; beyond it new sessions share one state.
const maxSessions = 4096

// NewHTTPProxy proxies to upstream (the server's MCP endpoint URL, http or https).
func NewHTTPProxy(opts Options, upstream string) (*HTTPProxy, error) {
	if opts.Decider == nil {
		return nil, errors.New("mcp http proxy: no decider")
	}
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp http proxy: upstream %q is not an http(s) URL", upstream)
	}
	opts.defaults()
	return &HTTPProxy{opts: opts, upstream: u, client: &http.Client{}, sessions: map[string]*state{}}, nil
}

func (p *HTTPProxy) state(session string) *state {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.sessions[session]
	if !ok {
		if len(p.sessions) >= maxSessions {
			session = "\x00shared"
			if st, ok = p.sessions[session]; ok {
				return st
			}
		}
		st = newState()
		p.sessions[session] = st
	}
	return st
}

// hopHeaders are not forwarded in either direction.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Content-Length", "Accept-Encoding"}

func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get("Mcp-Session-Id")
	st := p.state(session)
	var body []byte
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(io.LimitReader(r.Body, int64(p.opts.MaxMessage)+1))
		if err != nil {
			http.Error(w, "Shield: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(b) > p.opts.MaxMessage {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse("", -32600, fmt.Sprintf("Shield: message over %d bytes, not relayed", p.opts.MaxMessage)))
			return
		}
		m, err := Parse(bytes.TrimSpace(b))
		if err != nil {
			p.opts.Log("refused a client message: %v", err)
			writeJSON(w, http.StatusBadRequest, errorResponse(idOf(b), -32600, "Shield: "+err.Error()+"; not relayed"))
			return
		}
		switch {
		case m.Method == "tools/call" && !m.IsRequest():
			writeJSON(w, http.StatusBadRequest, errorResponse("", -32600, "Shield: a tools/call notification is not relayed"))
			return
		case m.Method == "tools/call":
			tc, ok := ParseToolCall(m.Params())
			if !ok {
				writeJSON(w, http.StatusOK, errorResponse(m.ID, -32602, "Shield: tools/call without a tool name and an arguments object; not relayed"))
				return
			}
			o := p.opts
			if session != "" {
				o.Session = p.opts.Session + ":" + session
			}
			ctx, cancel := context.WithTimeout(r.Context(), p.opts.Hold)
			d := o.Decider.Decide(ctx, o.call(st, tc, m.ID), true)
			cancel()
			p.opts.Log("tools/call %s: %s", tc.Name, d.Message())
			if !d.Allowed {
				writeJSON(w, http.StatusOK, blockedResult(m.ID, d))
				return
			}
		case m.IsResponse() && m.Result() != nil:
			st.mu.Lock()
			tracked := st.rootsList[m.ID]
			delete(st.rootsList, m.ID)
			st.mu.Unlock()
			if _, hasRoots := Object(m.Result())["roots"]; tracked || hasRoots {
				if res, changed := p.opts.filterRoots(m.Result()); changed {
					p.opts.Log("roots answer narrowed to the workspace %s", p.opts.Workspace)
					b = response(m.ID, res)
				}
			}
		case m.IsRequest() && m.Method == "tools/list":
			st.mu.Lock()
			if len(st.toolsList) < 1024 {
				st.toolsList[m.ID] = true
			}
			st.mu.Unlock()
		}
		body = b
	}
	p.forward(w, r, body, st)
}

func (p *HTTPProxy) forward(w http.ResponseWriter, r *http.Request, body []byte, st *state) {
	target := *p.upstream
	target.RawQuery = r.URL.RawQuery
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), rd)
	if err != nil {
		http.Error(w, "Shield: "+err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, "Shield: the MCP server could not be reached", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.WriteHeader(resp.StatusCode)
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		p.relaySSE(w, resp.Body, st)
	case strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(io.LimitReader(resp.Body, int64(p.opts.MaxServerMessage)+1))
		if err != nil || len(b) > p.opts.MaxServerMessage {
			p.opts.Log("dropped a server answer over %d bytes", p.opts.MaxServerMessage)
			return
		}
		p.serverMessage(bytes.TrimSpace(b), st)
		w.Write(b)
	default:
		io.Copy(w, io.LimitReader(resp.Body, int64(p.opts.MaxServerMessage)))
	}
}

// relaySSE passes an event stream through event by event, flushing each, reading every event's
// data as a message on the way. An event over the bound is dropped whole.
func (p *HTTPProxy) relaySSE(w http.ResponseWriter, body io.Reader, st *state) {
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush() // the headers now: a GET stream may stay quiet for long
	}
	br := bufio.NewReaderSize(body, 64<<10)
	var event, data bytes.Buffer
	over := false
	for {
		line, long, err := readBoundedLine(br, p.opts.MaxServerMessage-event.Len())
		if long {
			over = true
		}
		if len(line) > 0 || long {
			if !over {
				event.Write(line)
				if bytes.HasPrefix(line, []byte("data:")) {
					d := bytes.TrimPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
					if data.Len() > 0 {
						data.WriteByte('\n')
					}
					data.Write(bytes.TrimPrefix(d, []byte(" ")))
				}
			}
			if !long && len(bytes.TrimRight(line, "\r\n")) == 0 { // a blank line ends an event
				if over {
					p.opts.Log("dropped a server event over %d bytes", p.opts.MaxServerMessage)
				} else {
					if data.Len() > 0 {
						p.serverMessage(data.Bytes(), st)
					}
					w.Write(event.Bytes())
					if fl != nil {
						fl.Flush()
					}
				}
				event.Reset()
				data.Reset()
				over = false
			}
		}
		if err != nil {
			if event.Len() > 0 && !over {
				w.Write(event.Bytes())
			}
			return
		}
	}
}

// readBoundedLine reads one line (with its ending); a line longer than max is consumed and
// reported long, without being kept.
func readBoundedLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		frag, e := br.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > max {
				long, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if e != bufio.ErrBufferFull {
			return line, long, e
		}
	}
}

// serverMessage reads one server message for what the proxy tracks.
func (p *HTTPProxy) serverMessage(b []byte, st *state) {
	if len(b) == 0 {
		return
	}
	m, err := Parse(b)
	if err != nil {
		return
	}
	switch {
	case m.IsRequest() && m.Method == "roots/list":
		st.mu.Lock()
		if len(st.rootsList) < 1024 {
			st.rootsList[m.ID] = true
		}
		st.mu.Unlock()
	case m.IsResponse():
		st.mu.Lock()
		tl := st.toolsList[m.ID]
		delete(st.toolsList, m.ID)
		st.mu.Unlock()
		if tl && m.Result() != nil {
			st.learnTools(m.Result())
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
