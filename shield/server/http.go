package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/shieldsec/shield/audit"
)

// The HTTP/JSON API is a hand-written mux over the same service adapters as gRPC (ShieldService,
// ApprovalService, AuditService): each route names the gRPC method whose authorisation (the
// methodRoles table) and shedding class it takes, decodes JSON into the proto request and
// answers the proto response in protojson (proto field names). TestHTTPRoutesMatchProto checks
// the route table against the proto descriptors, and TestOpenAPIMatchesRoutes the served
// OpenAPI document against the route table.

// HTTPOptions configure the HTTP API and console (NewHTTP).
type HTTPOptions struct {
	// Auth authenticates callers, as on gRPC. Required.
	Auth *Auth
	// Shield serves evaluate, health and status. Required.
	Shield *ShieldService
	// Approvals and ApprovalStore serve /v1/approvals (nil: tier 3 is off, 404).
	Approvals     *ApprovalService
	ApprovalStore ApprovalStore
	// AuditLog serves /v1/audit (nil: no audit log, 404).
	AuditLog *audit.Log
	// Shedder bounds concurrent requests per class and peer, as on gRPC (nil: no bound beyond
	// the listener's connection caps; tests only).
	Shedder *Shedder
	// MaxArgumentBytes is the pipeline's argument cap (0: 1 MiB); an evaluate body may be this
	// plus 64 KiB of envelope. Other bodies are capped at 64 KiB.
	MaxArgumentBytes int
	// StreamSendTimeout cuts off an event stream whose reader stops taking events (0: 10s).
	StreamSendTimeout time.Duration
	// Console serves the web console at / (assets embedded).
	Console bool
	// Routes are extra handlers mounted with the same authentication (e.g. runtime hooks).
	Routes []HTTPRoute
	Log    *slog.Logger
}

// HTTPRoute is an extra handler of the HTTP listener. The caller is authenticated as for every
// route and authorised as a call of Method (a gRPC full method name in the methodRoles table,
// e.g. "/shield.v1.ShieldService/Evaluate" for agents); Identity(r.Context()) names it.
type HTTPRoute struct {
	// Pattern is an http.ServeMux pattern with a method, e.g. "POST /v1/hooks/claude-code".
	Pattern string
	Method  string
	// Summary describes the route in the OpenAPI document.
	Summary string
	Handler http.Handler
}

// HTTP is the HTTP/JSON API (and console) of the appliance.
type HTTP struct {
	o       HTTPOptions
	mux     *http.ServeMux
	routes  []route
	log     *slog.Logger
	verify  verifier
	handler http.Handler
}

// route is one API route: its pattern, the gRPC method it stands for (authorisation and
// shedding), and its handler.
type route struct {
	pattern string
	method  string // gRPC full method; "" open to every caller (health, console assets)
	// anyIdentity: any authenticated caller may use it (whoami); method is then only a label.
	anyIdentity bool
	// stream: held until the caller leaves (event streams, await): shed as a stream.
	stream bool
	h      func(w http.ResponseWriter, r *http.Request) error
}

const (
	httpMaxBody      = 64 << 10
	httpEnvelope     = 64 << 10
	httpWriteTimeout = 30 * time.Second
	httpMaxAwait     = 10 * time.Minute
	sseKeepAlive     = 15 * time.Second
)

// NewHTTP builds the HTTP API over the given adapters.
func NewHTTP(o HTTPOptions) (*HTTP, error) {
	if o.Auth == nil || o.Shield == nil {
		return nil, errors.New("http: Auth and Shield are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxArgumentBytes <= 0 {
		o.MaxArgumentBytes = 1 << 20
	}
	if o.StreamSendTimeout <= 0 {
		o.StreamSendTimeout = 10 * time.Second
	}
	h := &HTTP{o: o, mux: http.NewServeMux(), log: o.Log}
	h.routes = h.apiRoutes()
	for _, rt := range h.routes {
		h.mux.Handle(rt.pattern, h.wrap(rt))
	}
	for _, x := range o.Routes {
		if x.Pattern == "" || x.Handler == nil {
			return nil, errors.New("http: an extra route needs a pattern and a handler")
		}
		// Fail closed: an extra route is authorised as a method; none would leave it open.
		if x.Method == "" {
			return nil, fmt.Errorf("http: extra route %q names no method to authorise it as", x.Pattern)
		}
		xh := x.Handler
		rt := route{pattern: x.Pattern, method: x.Method, h: func(w http.ResponseWriter, r *http.Request) error {
			xh.ServeHTTP(w, r)
			return nil
		}}
		h.routes = append(h.routes, rt)
		h.mux.Handle(x.Pattern, h.wrap(rt))
	}
	if o.Console {
		h.mountConsole()
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, status.Errorf(codes.NotFound, "no route %s %s: see /v1/openapi.json", r.Method, r.URL.Path))
	})
	// Cross-origin protection refuses unsafe requests (POST …) a browser sends from another
	// origin (Sec-Fetch-Site, else Origin against Host): with client certificates a browser
	// authenticates on its own, so the console must be CSRF-safe without cookies.
	h.handler = http.NewCrossOriginProtection().Handler(securityHeaders(h.mux))
	return h, nil
}

// Handler is the API's http.Handler (for tests and for mounting under another server).
func (h *HTTP) Handler() http.Handler { return h.handler }

// Server returns an http.Server for the API with the listener-side bounds set: header and body
// read timeouts, header size, idle timeout, TLS as configured in auth.tls (mutual with a client
// CA), and the unix peer credentials of each connection recorded for authentication.
func (h *HTTP) Server(idle time.Duration) *http.Server {
	s := &http.Server{
		Handler:           h.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	if c := h.o.Auth.tlsCfg; c != nil {
		s.TLSConfig = c.Clone()
		s.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
	}
	return s
}

// Serve serves the API on l (TLS when auth.tls is configured) until srv is closed. Whether to
// speak TLS is decided by the configuration, never by srv.TLSConfig at this point: the first
// Serve of a server fills in a TLS configuration of its own (HTTP/2 set-up), which would turn the
// next plain listener into a TLS one, racing with it.
func (h *HTTP) Serve(srv *http.Server, l net.Listener) error {
	var err error
	if h.o.Auth.tlsCfg != nil && l.Addr().Network() != "unix" {
		err = srv.Serve(tls.NewListener(l, srv.TLSConfig))
	} else {
		err = srv.Serve(l)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// CheckHTTPListen checks an http_listen address against the authentication configuration, by
// the rules of gRPC's listen: a TCP listener needs mutual TLS or bearer tokens (or dev), and
// only loopback without mutual TLS; "unix:/path" is a unix socket (peer credentials).
func CheckHTTPListen(addr string, cfg AuthConfig, dev bool) error {
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("http_listen %q: a unix socket path must be absolute", addr)
		}
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("http_listen %q: want host:port or unix:/path: %w", addr, err)
	}
	mtls := cfg.TLS.CertFile != "" && cfg.TLS.ClientCA != ""
	if ip := net.ParseIP(host); !mtls && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("http_listen %q: without mutual TLS (auth.tls with client_ca) only loopback TCP listeners are allowed", addr)
	}
	if !dev && cfg.TokensFile == "" && !mtls {
		return fmt.Errorf("http_listen %q: %w", addr, ErrInsecureTCP)
	}
	return nil
}

type connCredKey struct{}

// connContext records SO_PEERCRED of a unix-socket connection in its requests' context.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if uc, ok := unwrapConn(c).(*net.UnixConn); ok {
		pc := &PeerCred{}
		if cred, err := peerUcred(uc); err == nil {
			pc.UID, pc.GID, pc.PID = cred.Uid, cred.Gid, cred.Pid
			return context.WithValue(ctx, connCredKey{}, pc)
		}
		// A unix peer whose credentials cannot be read is anonymous, never a TCP caller.
		return context.WithValue(ctx, connCredKey{}, (*PeerCred)(nil))
	}
	return ctx
}

// httpIdentity authenticates an HTTP request as gRPC authenticates a call.
func (h *HTTP) httpIdentity(r *http.Request) identity {
	var c credential
	if v := r.Context().Value(connCredKey{}); v != nil {
		c.unixAddr = true
		c.unix, _ = v.(*PeerCred)
	}
	if r.TLS != nil {
		c.chains = r.TLS.VerifiedChains
	}
	c.authorization = r.Header.Values("Authorization")
	return h.o.Auth.identify(c)
}

// httpPeer names the caller for per-peer shedding caps, as callPeer does on gRPC.
func httpPeer(r *http.Request) string {
	if v := r.Context().Value(connCredKey{}); v != nil {
		if pc, _ := v.(*PeerCred); pc != nil {
			return "uid:" + strconv.FormatUint(uint64(pc.UID), 10)
		}
		return "unix:unknown"
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return "unknown"
}

// wrap authenticates, authorises, sheds, recovers and maps errors for one route.
func (h *HTTP) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if x := recover(); x != nil {
				if x == http.ErrAbortHandler {
					panic(x)
				}
				h.log.Error("http handler panic", "route", rt.pattern, "panic", x, "stack", string(debug.Stack()))
				writeError(w, status.Error(codes.Internal, "internal error"))
			}
		}()
		id := h.httpIdentity(r)
		var err error
		switch {
		case rt.anyIdentity:
			if id.name == "" {
				err = status.Error(codes.Unauthenticated, "authenticate: a bearer token (Authorization: Bearer …), a client certificate or unix peer credentials")
			}
		case rt.method != "":
			err = authorize(id, rt.method)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		ctx := context.WithValue(r.Context(), identityKey{}, id)
		if h.o.Shedder != nil && rt.method != "" {
			if cl := classOf(rt.method, rt.stream); cl != "" {
				done, err := h.o.Shedder.acquire(ctx, h.o.Shedder.classes[cl], rt.method, httpPeer(r), cl != classStream)
				if err != nil {
					w.Header().Set("Retry-After", "1")
					writeError(w, err)
					return
				}
				defer done()
			}
		}
		if !rt.stream {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(httpWriteTimeout))
		}
		if err := rt.h(w, r.WithContext(ctx)); err != nil {
			writeError(w, err)
		}
	})
}

// securityHeaders sets the headers every response carries: no sniffing, no caching of API
// answers, no framing, no referrer.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// httpStatusOf maps a gRPC status code to an HTTP status: the one mapper of the HTTP API.
func httpStatusOf(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.FailedPrecondition:
		return http.StatusPreconditionFailed
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Canceled:
		return 499
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// httpError is the JSON body of every error: the gRPC code name and a message safe to show.
type httpError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, err error) {
	st, ok := status.FromError(err)
	if !ok {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			st = status.Newf(codes.ResourceExhausted, "request body larger than %d bytes", mbe.Limit)
			writeJSON(w, http.StatusRequestEntityTooLarge, httpError{Code: codeName(st.Code()), Message: st.Message()})
			return
		default:
			st = status.Convert(Status(err))
		}
	}
	writeJSON(w, httpStatusOf(st.Code()), httpError{Code: codeName(st.Code()), Message: st.Message()})
}

// codeName is the canonical name of a gRPC code (INVALID_ARGUMENT), as in google.rpc.Code.
func codeName(c codes.Code) string {
	s := c.String() // "InvalidArgument"
	if s == "OK" {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"code":"Internal","message":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

var protoJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func writeProto(w http.ResponseWriter, m proto.Message) error {
	b, err := protoJSON.Marshal(m)
	if err != nil {
		return status.Error(codes.Internal, "internal error")
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// readBody reads a JSON body of at most limit bytes: Content-Type application/json (which a
// cross-site form cannot send), not empty, within the bound before any parser sees it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		return nil, status.Errorf(codes.InvalidArgument, "Content-Type must be application/json (got %q)", ct)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, status.Errorf(codes.InvalidArgument, "read body: %v", err)
	}
	return b, nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown fields and trailing data,
// with messages that name the field and the offset.
func decodeStrict(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return status.Error(codes.InvalidArgument, "empty body: send a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return status.Error(codes.InvalidArgument, jsonProblem(err))
	}
	if _, err := d.Token(); err != io.EOF {
		return status.Error(codes.InvalidArgument, "body: one JSON object expected, found more after it")
	}
	return nil
}

// jsonProblem words a decoding error for the caller: the field, the expected type, the offset.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("body is not valid JSON at byte %d: %v", se.Offset, se.Error())
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: want %s, got JSON %s (byte %d)", te.Field, te.Type, te.Value, te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "body is truncated JSON"
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ") + " (see /v1/openapi.json)"
	}
	return "body: " + err.Error()
}

// queryInt parses an optional integer query parameter.
func queryInt(r *http.Request, name string, lo, hi int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, status.Errorf(codes.InvalidArgument, "query parameter %s=%q: want an integer in [%d, %d]", name, v, lo, hi)
	}
	return n, nil
}

func queryBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, status.Errorf(codes.InvalidArgument, "query parameter %s=%q: want true or false", name, v)
	}
	return b, nil
}

// verifier runs the appliance's own verification of its audit trail, one at a time, and keeps
// the last result.
type verifier struct {
	mu      sync.Mutex
	running bool
	last    *VerifyResult
}

// VerifyResult is the outcome of an audit verification run from the API.
type VerifyResult struct {
	OK          bool      `json:"ok"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	Records     uint64    `json:"records"`
	Segments    int       `json:"segments"`
	Checkpoints int       `json:"checkpoints"`
	// CheckpointSize is the tree size of the newest verified checkpoint.
	CheckpointSize uint64   `json:"checkpoint_size"`
	Uncovered      uint64   `json:"uncovered"`
	Error          string   `json:"error,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	// Note: the appliance verifies with its own public key; verify offline with a key obtained
	// out of band (shield audit verify) to trust the result.
	Note string `json:"note"`
}

// HTTPConfig configures the HTTP API listeners (config key `http`). The zero value serves no
// HTTP at all.
type HTTPConfig struct {
	// Listen lists the HTTP listeners: "host:port" (TCP, TLS when auth.tls is set; the rules of
	// gRPC's listen apply, see CheckHTTPListen) or "unix:/path" (peer credentials). Default: none.
	Listen []string `yaml:"listen"`
	// Console serves the web console at / on every HTTP listener. Default: off.
	Console bool `yaml:"console"`
}

// Validate checks every listener against the authentication configuration.
func (c HTTPConfig) Validate(auth AuthConfig, dev bool) error {
	var errs []error
	for _, a := range c.Listen {
		if err := CheckHTTPListen(a, auth, dev); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Console && len(c.Listen) == 0 {
		errs = append(errs, errors.New("http.console needs an http.listen address"))
	}
	return errors.Join(errs...)
}

// ServeHTTP starts the HTTP API on every listener of cfg, each capped like the gRPC listeners
// (limits.max_connections, per peer), and returns a function that stops them. o.Console is
// taken from cfg.
func ServeHTTP(cfg HTTPConfig, o HTTPOptions, limits Limits, m *ConnMetrics) (stop func(), err error) {
	o.Console = cfg.Console
	h, err := NewHTTP(o)
	if err != nil {
		return nil, err
	}
	limits = limits.WithDefaults()
	if limits.MaxConnections <= 0 {
		return nil, errors.New("http: limits.max_connections is unset: pass the limits Fit sized")
	}
	srv := h.Server(limits.IdleTimeout)
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: limits.MaxStreamsPerConnection}
	var lis []net.Listener
	closeAll := func() {
		for _, l := range lis {
			_ = l.Close()
		}
	}
	for _, a := range cfg.Listen {
		var l net.Listener
		if p, ok := strings.CutPrefix(a, "unix:"); ok {
			l, err = listenHTTPUnix(p)
		} else {
			l, err = net.Listen("tcp", a)
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("http listen %s: %w", a, err)
		}
		lis = append(lis, LimitListener(l, "http:"+a, limits.MaxConnections, limits.MaxConnectionsPerPeer, m, o.Log))
	}
	useTLS := h.o.Auth.tlsCfg != nil
	for _, l := range lis {
		go func(l net.Listener) {
			if err := h.Serve(srv, l); err != nil {
				h.log.Error("http listener stopped", "addr", l.Addr().String(), "error", err.Error())
			}
		}(l)
		h.log.Info("serving HTTP API", "addr", l.Addr().String(), "network", l.Addr().Network(), "console", cfg.Console,
			"tls", useTLS && l.Addr().Network() != "unix")
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
	}, nil
}

// listenHTTPUnix listens on a unix socket (mode 0660), replacing a stale socket file but not
// one a process still answers on, nor any other file.
func listenHTTPUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s is in use", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	old := syscall.Umask(0o117)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
