package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/bundle"
	"github.com/shieldsec/shield/shield/judge"
	"github.com/shieldsec/shield/shield/normalize"
	"github.com/shieldsec/shield/shield/server"
)

func init() {
	register(&command{name: "serve", summary: "run the ShieldService appliance", run: runServe})
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runServe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "serve", "[--config FILE] [--listen ADDR]... [--metrics-listen ADDR] [--state-dir DIR] [--policy DIR]")
	cfgPath := fs.String("config", "", "YAML config file (strict: unknown keys are errors)")
	var listen stringList
	fs.Var(&listen, "listen", "extra TCP listener host:port (repeatable; loopback only)")
	metrics := fs.String("metrics-listen", "", "loopback host:port for Prometheus metrics")
	stateDir := fs.String("state-dir", "", "state directory (default $STATE_DIRECTORY, /var/lib/shield as root, else $XDG_STATE_HOME/shield)")
	policyPath := fs.String("policy", "", "policy bundle directory or .tar.gz (default: embedded bundle)")
	dev := fs.Bool("dev", false, "DEVELOPMENT ONLY: every caller on a loopback TCP listener is admin, unauthenticated (unix-socket peers keep their roles)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if len(listen) > 0 {
		cfg.Listen = listen
	}
	if *metrics != "" {
		cfg.MetricsListen = *metrics
	}
	if *stateDir != "" {
		cfg.StateDir = *stateDir
	}
	if *policyPath != "" {
		cfg.Policy.Path = *policyPath
	}
	cfg.Dev = *dev
	cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	log := newLogger(env, cfg.Log)
	return serve(ctx, cfg, log)
}

func newLogger(env *cmdEnv, c LogConfig) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(env.stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(env.stderr, opts))
}

// appliance is the running service: the pipeline and what it reports.
type appliance struct {
	cfg      *Config
	log      *slog.Logger
	pipeline *shield.Pipeline
	audit    auditLog

	// watcher reloads a bundle from policy.path (nil for the embedded bundle).
	watcher *policy.Watcher
}

// auditLog is what serve needs of the audit trail.
type auditLog interface {
	shield.Recorder
	Healthy() error
	Close() error
}

// Problems implements server.StatusSource.
func (a *appliance) Problems() []string {
	var p []string
	if a.audit == nil {
		p = append(p, "no audit log")
	} else if err := a.audit.Healthy(); err != nil {
		p = append(p, "audit log: "+err.Error())
	}
	return p
}

// Reloads implements server.StatusSource.
func (a *appliance) Reloads() (int64, int64, string) {
	if a.watcher == nil {
		return 0, 0, ""
	}
	st := a.watcher.Stats()
	return int64(st.Reloads), int64(st.Failures), st.LastError
}

// loadOptions are the bundle load options of the configuration (the signing key).
func loadOptions(cfg *Config) (policy.LoadOptions, error) {
	opt := policy.LoadOptions{}
	if cfg.Policy.PublicKey != "" {
		text, err := os.ReadFile(cfg.Policy.PublicKey)
		if err != nil {
			return opt, fmt.Errorf("read policy public key: %w", err)
		}
		pub, err := policy.ParsePublicKey(text)
		if err != nil {
			return opt, fmt.Errorf("policy public key %s: %w", cfg.Policy.PublicKey, err)
		}
		opt.PublicKey = pub
	}
	return opt, nil
}

// loadPolicy loads and activates the configured bundle.
func loadPolicy(cfg *Config) (*shield.Policy, error) {
	_, pol, err := loadBundle(cfg)
	return pol, err
}

// loadBundle loads the configured bundle (or the embedded one) and activates it.
func loadBundle(cfg *Config) (*policy.Bundle, *shield.Policy, error) {
	opt, err := loadOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	var b *policy.Bundle
	if cfg.Policy.Path == "" {
		b, err = policy.LoadFS(policies.Default, "default", opt)
	} else {
		b, err = policy.Load(cfg.Policy.Path, opt)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load policy bundle: %w", err)
	}
	pol, err := activate(cfg, b)
	return b, pol, err
}

func activate(cfg *Config, b *policy.Bundle) (*shield.Policy, error) {
	pol, err := bundle.Activate(b, bundle.Options{Workspace: cfg.Policy.Workspace, Home: homeFor(cfg.Policy)})
	if err != nil {
		return nil, fmt.Errorf("activate policy bundle %s: %w", b.Source, err)
	}
	// Classes the judge configuration sends to review join those the bundle names.
	if cfg.Judge != nil && len(cfg.Judge.ReviewClasses) > 0 {
		if pol.ReviewClasses == nil {
			pol.ReviewClasses = map[string]bool{}
		}
		for _, c := range cfg.Judge.ReviewClasses {
			pol.ReviewClasses[c] = true
		}
	}
	return pol, nil
}

// homeFor is the home directory "~" expands to: policy.home, else /home/USER when the workspace
// lies under /home/USER, else empty (the normaliser's default).
func homeFor(p PolicyConfig) string {
	if p.Home != "" {
		return p.Home
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p.Workspace), "/"), "/")
	if len(parts) >= 2 && parts[0] == "home" {
		return "/home/" + parts[1]
	}
	return ""
}

// accept activates a bundle the watcher loaded: it must compile and pass its own tests, or the
// previous one keeps serving (the watcher logs and counts the error).
func (a *appliance) accept(b *policy.Bundle) error {
	pol, err := activate(a.cfg, b)
	if err == nil {
		err = a.pipeline.SetPolicy(pol)
	}
	if err != nil {
		return err
	}
	recordEvent(context.Background(), a.audit, a.log, audit.TypeBundleActivated, map[string]any{
		"bundle_revision": pol.Revision, "bundle_digest": pol.Digest, "rules": pol.RuleCounts})
	return nil
}

func serve(ctx context.Context, cfg *Config, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := checkStateDir(cfg.StateDir); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a := &appliance{cfg: cfg, log: log}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_policy_reloads_total", Help: "Bundles activated by reload."},
			func() float64 { ok, _, _ := a.Reloads(); return float64(ok) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_policy_reload_failures_total", Help: "Bundles rejected on reload."},
			func() float64 { _, bad, _ := a.Reloads(); return float64(bad) }))

	b, pol, err := loadBundle(cfg)
	if err != nil {
		return err
	}
	al, err := openAuditLog(cfg, log)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	a.audit = al
	reg.MustRegister(auditCollectors(al)...) // audit side of issue 10 H4: failed/recovered/quarantined
	defer func() {
		if err := al.Close(); err != nil {
			log.Error("close audit log", "error", err.Error())
		}
	}()

	recordEvent(ctx, al, log, audit.TypeServiceStart, map[string]any{"version": version, "pid": os.Getpid(),
		"bundle_revision": pol.Revision, "bundle_digest": pol.Digest, "rules": pol.RuleCounts})
	defer recordEvent(context.WithoutCancel(ctx), al, log, audit.TypeServiceStop, map[string]any{"version": version, "pid": os.Getpid()})

	stopAnchor, err := startAnchoring(ctx, cfg, al, log)
	if err != nil {
		return fmt.Errorf("rekor anchoring: %w", err)
	}
	defer stopAnchor()

	var escalation []shield.Tier
	j, err := newJudge(cfg, judge.WithRegisterer(reg))
	if err != nil {
		return err
	}
	if j != nil {
		escalation = append(escalation, j)
		fallback := cfg.Judge.Fallback
		if fallback == "" {
			fallback = "escalate"
		}
		log.Info("tier 2 judge enabled", "provider", cfg.Judge.Provider, "model", cfg.Judge.Model, "fallback", fallback,
			"review_classes", cfg.Judge.ReviewClasses)
	}

	var approvals *approval.Service
	if !cfg.Approvals.Disabled {
		approvals, err = openApprovals(cfg, al, log)
		if err != nil {
			return err
		}
		defer approvals.Close()
		escalation = append(escalation, approvals.Tier())
	}

	m := shield.NewMetrics(reg)
	p, err := shield.New(shield.Config{
		Escalation: escalation,
		Recorder:   al,
		CacheSize:  cfg.Pipeline.CacheSize,
		Timeout:    cfg.Pipeline.Timeout,
		Limits:     normalize.Limits{MaxBytes: cfg.Pipeline.MaxArgumentBytes},
		Metrics:    m,
	}, pol)
	if err != nil {
		return err
	}
	a.pipeline = p
	// The watcher exists before any request can ask for reload counts.
	if cfg.Policy.Path != "" {
		opt, _ := loadOptions(cfg) // read successfully above
		poll := time.Duration(0)
		if cfg.Policy.Watch != nil && !*cfg.Policy.Watch {
			poll = -1
		}
		if a.watcher, err = policy.NewWatcher(cfg.Policy.Path, b, policy.WatchOptions{Load: opt, Accept: a.accept, Poll: poll, Logger: log}); err != nil {
			return err
		}
	}

	authCfg := cfg.Auth
	authCfg.Dev = cfg.Dev
	auth, err := server.NewAuth(authCfg)
	if err != nil {
		return err
	}
	if cfg.Dev {
		log.Warn("DEVELOPMENT MODE (--dev): every TCP caller acts as admin, unauthenticated; unix-socket peers keep their auth.unix_roles. Never run --dev in production.",
			"tcp_listeners", cfg.Listen)
	}
	limits, nofile, err := fitLimits(cfg)
	if err != nil {
		return err
	}
	log.Info("connection limits", "rlimit_nofile", nofile, "max_connections", limits.MaxConnections,
		"max_connections_per_peer", limits.MaxConnectionsPerPeer, "reserved_descriptors", limits.Reserve(),
		"listeners", 1+len(cfg.Listen))
	connMetrics := server.NewConnMetrics(reg)
	// Interceptors: authenticate and authorise, shed what is over a limit (Health never is),
	// count evaluations, and recover a handler panic last.
	shed := server.NewShedder(limits, reg, log)
	gs := grpc.NewServer(append(limits.ServerOptions(),
		grpc.Creds(auth.Credentials()),
		grpc.MaxRecvMsgSize(maxRecvMsgSize(cfg)),
		grpc.ForceServerCodecV2(server.Codec()), // invalid UTF-8 reaches Evaluate: INVALID_ARGUMENT, audited
		grpc.InTapHandle(shed.TapHandle()),
		grpc.ChainUnaryInterceptor(auth.UnaryInterceptor(), shed.UnaryInterceptor(), inFlightInterceptor(m), server.RecoverUnary(log)),
		grpc.ChainStreamInterceptor(auth.StreamInterceptor(), shed.StreamInterceptor(), server.RecoverStream(log)),
	)...)
	svc := server.NewShieldService(p, a, version)
	svc.Identity = server.Identity
	shieldv1.RegisterShieldServiceServer(gs, svc)
	server.RegisterStandardHealth(gs, svc) // grpc.health.v1 for load balancers and probes
	if approvals != nil {
		shieldv1.RegisterApprovalServiceServer(gs, server.NewApprovalService(approvals, server.Identity))
	}
	if h, ok := al.(*auditHandle); ok {
		shieldv1.RegisterAuditServiceServer(gs, server.NewAuditService(h.log))
	}
	reflection.Register(gs)

	// HTTP/JSON API and web console (config key http): the same adapters, auth and limits.
	if len(cfg.HTTP.Listen) > 0 {
		o := server.HTTPOptions{Auth: auth, Shield: svc, Shedder: shed, MaxArgumentBytes: cfg.Pipeline.MaxArgumentBytes,
			StreamSendTimeout: limits.StreamSendTimeout, Log: log}
		if approvals != nil {
			o.Approvals, o.ApprovalStore = server.NewApprovalService(approvals, server.Identity), approvals
		}
		if h, ok := al.(*auditHandle); ok {
			o.AuditLog = h.log
		}
		stopHTTP, err := server.ServeHTTP(cfg.HTTP, o, limits, connMetrics)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}

	var lis []net.Listener
	ul, err := listenUnix(cfg.Socket)
	if err != nil {
		return err
	}
	lis = append(lis, server.LimitListener(ul, "unix", limits.MaxConnections, limits.MaxConnectionsPerPeer, connMetrics, log))
	for _, addr := range cfg.Listen {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			closeAll(lis)
			return fmt.Errorf("listen %s: %w", addr, err)
		}
		lis = append(lis, server.LimitListener(l, addr, limits.MaxConnections, limits.MaxConnectionsPerPeer, connMetrics, log))
	}

	errc := make(chan error, len(lis)+1)
	for _, l := range lis {
		go func(l net.Listener) { errc <- gs.Serve(l) }(l)
		log.Info("serving ShieldService", "addr", l.Addr().String(), "network", l.Addr().Network())
	}
	var ms *http.Server
	if cfg.MetricsListen != "" {
		ml, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			gs.Stop()
			return fmt.Errorf("metrics listen %s: %w", cfg.MetricsListen, err)
		}
		// The metrics endpoint is loopback but open to every local user: its connections are
		// capped too, within the reserve (server.MetricsConnections).
		ml = server.LimitListener(ml, "metrics", server.MetricsConnections, server.MetricsConnections, connMetrics, log)
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		ms = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
		go func() { _ = ms.Serve(ml) }()
		log.Info("serving metrics", "addr", ml.Addr().String())
	}
	log.Info("shield ready", "version", version, "bundle_revision", pol.Revision, "bundle_digest", pol.Digest,
		"state_dir", cfg.StateDir, "rules", pol.RuleCounts)

	if err := sdNotify("READY=1\nSTATUS=serving"); err != nil {
		log.Warn("sd_notify READY failed", "error", err.Error())
	}
	if iv := sdWatchdogInterval(); iv > 0 {
		go func() {
			t := time.NewTicker(iv / 2) // ping twice per watchdog period
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					// A service that cannot decide (audit log failing) stops feeding the watchdog:
					// systemd restarts it, which reopens and recovers the log.
					if len(a.Problems()) == 0 {
						_ = sdNotify("WATCHDOG=1")
					}
				}
			}
		}()
	}
	if w := a.watcher; w != nil && (cfg.Policy.Watch == nil || *cfg.Policy.Watch) {
		go func() {
			if err := w.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("policy watcher stopped", "error", err.Error())
			}
		}()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	for {
		select {
		case <-hup:
			if a.watcher == nil {
				log.Info("SIGHUP: the embedded bundle has nothing to reload")
			} else {
				log.Info("SIGHUP: reloading the policy bundle", "path", cfg.Policy.Path)
				_ = a.watcher.Reload("SIGHUP") // outcome logged and counted by the watcher
			}
		case err := <-errc:
			gs.Stop()
			return fmt.Errorf("grpc server: %w", err)
		case <-ctx.Done():
			log.Info("shutting down")
			_ = sdNotify("STOPPING=1")
			done := make(chan struct{})
			go func() { gs.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				gs.Stop()
			}
			if ms != nil {
				_ = ms.Close()
			}
			return nil
		}
	}
}

// raiseNofile raises the soft RLIMIT_NOFILE to the hard limit (the Go runtime does so too on
// Linux; this makes it explicit) and returns the limit now in force.
func raiseNofile() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit NOFILE: %w", err)
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = want.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	return rl.Cur, nil
}

// hardNofile is the hard RLIMIT_NOFILE: what serve raises its soft limit to (config check
// measures the configured caps against it).
func hardNofile() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit NOFILE: %w", err)
	}
	return rl.Max, nil
}

// fitLimits raises RLIMIT_NOFILE and sizes the connection caps below it, keeping the reserve
// for the audit log, bundle reloads and the rest (server.Limits documents the arithmetic).
func fitLimits(cfg *Config) (server.Limits, uint64, error) {
	nofile, err := raiseNofile()
	if err != nil {
		return server.Limits{}, 0, err
	}
	l, err := cfg.Limits.Fit(nofile, 1+len(cfg.Listen)+len(cfg.HTTP.Listen))
	if err != nil {
		return l, nofile, fmt.Errorf("limits: %w", err)
	}
	return l, nofile, nil
}

func maxRecvMsgSize(cfg *Config) int {
	n := cfg.Pipeline.MaxArgumentBytes
	if n == 0 {
		n = 1 << 20
	}
	return n + 64<<10 // room for the envelope; the pipeline enforces the argument cap itself
}

func inFlightInterceptor(m *shield.Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod != shieldv1.ShieldService_Evaluate_FullMethodName {
			return h(ctx, req)
		}
		m.InFlight.Inc()
		defer m.InFlight.Dec()
		return h(ctx, req)
	}
}

// listenUnix listens on a unix socket with mode 0660, replacing a stale socket file but refusing
// to take over one a running service still answers on.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("socket path %s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s is in use: is another shield serving this state dir?", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o117)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return l, nil
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		_ = l.Close()
	}
}

// openApprovals opens the tier-3 store under <state-dir>/approvals.
func openApprovals(cfg *Config, al auditLog, log *slog.Logger) (*approval.Service, error) {
	dir := filepath.Join(cfg.StateDir, "approvals")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create approvals dir: %w", err)
	}
	var secret []byte
	if cfg.Approvals.WebhookSecretEnv != "" {
		secret = []byte(os.Getenv(cfg.Approvals.WebhookSecretEnv))
		if len(secret) == 0 {
			return nil, fmt.Errorf("approvals: environment variable %s (the webhook secret) is empty", cfg.Approvals.WebhookSecretEnv)
		}
	}
	s, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db"), Timeout: cfg.Approvals.Timeout,
		TwoPersonClasses: cfg.Approvals.TwoPersonClasses, Recorder: approvalRecorder{al: al},
		WebhookURL: cfg.Approvals.WebhookURL, WebhookSecret: secret, Log: log, Retention: cfg.Approvals.Retention,
		WebhookFormat: cfg.Approvals.WebhookFormat, ConsoleURL: cfg.Approvals.ConsoleURL,
		Redact: audit.Redaction{Keys: cfg.Audit.RedactKeys, Values: cfg.Audit.RedactValues}})
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	return s, nil
}

// approvalRecorder writes approval events to the audit trail.
type approvalRecorder struct{ al auditLog }

func (r approvalRecorder) Record(ctx context.Context, typ string, payload any) error {
	h, ok := r.al.(*auditHandle)
	if !ok {
		return nil
	}
	t := audit.TypeApprovalResolved
	if typ == "approval_requested" {
		t = audit.TypeApprovalRequested
	}
	_, err := h.log.Append(ctx, t, payload)
	return err
}
