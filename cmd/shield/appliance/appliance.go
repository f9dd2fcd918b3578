package appliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/engine"
	"github.com/shieldsec/shield/policy"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/judge"
	"github.com/shieldsec/shield/shield/normalize"
	"github.com/shieldsec/shield/shield/server"
	"github.com/shieldsec/shield/shield/shadow"
)

// Version is the version the appliance reports (set by cmd/shield from its build).
var Version = "dev"

// prepared is what loading the configuration yields before anything is opened or listened on:
// what Check verifies and New builds on, so that config check refuses what serve refuses.
type prepared struct {
	bundle *policy.Bundle
	policy *shield.Policy
	auth   *server.Auth
	secret []byte
}

// prepare loads what the configuration names: the policy bundle (loaded, activated and its own
// tests passed), the auth configuration (tokens file, TLS key pair and client CA), the judge's
// configuration and the approval webhook's secret. Every problem is returned at once.
func prepare(cfg *Config) (*prepared, error) {
	var errs []error
	p := &prepared{}
	var err error
	if p.bundle, p.policy, err = LoadBundle(cfg); err != nil {
		errs = append(errs, err)
	}
	authCfg := cfg.Auth
	authCfg.Dev = cfg.Dev
	if p.auth, err = server.NewAuth(authCfg); err != nil {
		errs = append(errs, err)
	}
	if cfg.Judge != nil {
		if _, err := judge.New(*cfg.Judge); err != nil {
			errs = append(errs, fmt.Errorf("judge: %w", err))
		}
	}
	if !cfg.Approvals.Disabled {
		if p.secret, err = webhookSecret(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

// Check reports every problem serve would refuse the configuration for, without opening or
// listening on anything: Validate, then loading the bundle, keys and secrets it names. cfg must
// have its defaults filled (WithDefaults).
func Check(cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		_, perr := prepare(cfg)
		return errors.Join(err, perr)
	}
	_, err := prepare(cfg)
	return err
}

// Appliance is the built service: one pipeline with its tiers, one approval store, one audit
// chain, one metrics registry, the gRPC server with ShieldService, ApprovalService and
// AuditService, and the engines it hosts.
type Appliance struct {
	cfg *Config
	log *slog.Logger
	reg *prometheus.Registry

	pipeline  *shield.Pipeline
	audit     AuditLog
	approvals *approval.Service // nil: approvals disabled
	watcher   *policy.Watcher   // nil: the embedded bundle
	pol       *shield.Policy

	grpc    *grpc.Server
	svc     *server.ShieldService
	aprSvc  *server.ApprovalService
	limits  server.Limits
	lis     []net.Listener
	metrics net.Listener
	mux     *http.ServeMux
	engines []*Engine

	shadow     *shadow.Evaluator // nil: no shadow bundle
	shed       *server.Shedder
	auth       *server.Auth
	stopHTTP   func()
	stopAnchor func()
	stopExport func()
	closeOnce  sync.Once

	// EngineStopIsFatal ends Run when a hosted engine stops for good (its agent's crash budget
	// spent, or a sandbox that does not hold): set by `shield start`, whose process manager then
	// counts a crash. Otherwise (serve) the engine's end is logged and recorded, and the
	// appliance keeps serving.
	EngineStopIsFatal bool
}

// Problems implements server.StatusSource.
func (a *Appliance) Problems() []string {
	var p []string
	if a.audit == nil {
		p = append(p, "no audit log")
	} else if err := a.audit.Healthy(); err != nil {
		p = append(p, "audit log: "+err.Error())
	}
	return p
}

// Reloads implements server.StatusSource.
func (a *Appliance) Reloads() (int64, int64, string) {
	if a.watcher == nil {
		return 0, 0, ""
	}
	st := a.watcher.Stats()
	return int64(st.Reloads), int64(st.Failures), st.LastError
}

// Pipeline is the appliance's one pipeline.
func (a *Appliance) Pipeline() *shield.Pipeline { return a.pipeline }

// Engines are the hosted engines, in the order of the configuration.
func (a *Appliance) Engines() []*Engine { return a.engines }

// Registry is the appliance's one metrics registry.
func (a *Appliance) Registry() *prometheus.Registry { return a.reg }

// Handle mounts an extra HTTP handler on the appliance's HTTP listener (metrics_listen), beside
// /metrics: the place for HTTP APIs (call before Run). The handler is served on loopback only
// and must authenticate its callers itself.
func (a *Appliance) Handle(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }

// accept activates a bundle the watcher loaded: it must compile and pass its own tests, or the
// previous one keeps serving (the watcher logs and counts the error).
func (a *Appliance) accept(b *policy.Bundle) error {
	pol, err := Activate(a.cfg, b)
	if err == nil {
		err = a.pipeline.SetPolicy(pol)
	}
	if err != nil {
		return err
	}
	recordEvent(context.Background(), a.audit, a.log, audit.TypeBundleActivated, audit.BundleActivated{
		BundleRevision: pol.Revision, BundleDigest: pol.Digest, Rules: pol.RuleCounts})
	return nil
}

// New validates cfg (with its defaults filled) and builds the appliance: it opens the state
// directory, the audit trail, the approval store and the listeners, and prepares the hosted
// engines; nothing is served before Run. On error everything opened is closed again.
func New(ctx context.Context, cfg *Config, log *slog.Logger) (_ *Appliance, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	p, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	if err := CheckStateDir(cfg.StateDir); err != nil {
		return nil, err
	}
	a := &Appliance{cfg: cfg, log: log, reg: prometheus.NewRegistry(), pol: p.policy, mux: http.NewServeMux(), stopAnchor: func() {}, stopExport: func() {}, stopHTTP: func() {}}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	reg := a.reg
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_policy_reloads_total", Help: "Bundles activated by reload."},
			func() float64 { ok, _, _ := a.Reloads(); return float64(ok) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_policy_reload_failures_total", Help: "Bundles rejected on reload."},
			func() float64 { _, bad, _ := a.Reloads(); return float64(bad) }))

	if a.audit, err = OpenAuditLog(cfg, log); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	reg.MustRegister(AuditCollectors(a.audit)...)
	pol := p.policy
	recordEvent(ctx, a.audit, log, audit.TypeServiceStart, audit.ServiceStart{Version: Version, PID: os.Getpid(),
		BundleRevision: pol.Revision, BundleDigest: pol.Digest, Rules: pol.RuleCounts})
	if a.stopAnchor, err = startAnchoring(ctx, cfg, a.audit, log); err != nil {
		a.stopAnchor = func() {}
		return nil, fmt.Errorf("rekor anchoring: %w", err)
	}
	// SIEM shipping: reads the trail, off the decision path.
	if a.stopExport, err = startExport(ctx, cfg, a.audit, reg, log); err != nil {
		a.stopExport = func() {}
		return nil, err
	}

	var escalation []shield.Tier
	j, err := NewJudge(cfg, judge.WithRegisterer(reg))
	if err != nil {
		return nil, err
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
	if !cfg.Approvals.Disabled {
		if a.approvals, err = openApprovals(cfg, a.audit, log); err != nil {
			return nil, err
		}
		escalation = append(escalation, a.approvals.Tier())
	}
	// Shadow mode (policy.shadow): a candidate bundle sees each decision once it is recorded.
	if a.shadow, err = startShadow(ctx, cfg, a.audit, func() *shield.Policy { return a.pipeline.Policy() }, reg, log); err != nil {
		return nil, err
	}
	m := shield.NewMetrics(reg)
	if a.pipeline, err = shield.New(shield.Config{
		Escalation: escalation,
		Recorder:   a.shadow.Recorder(m.Recorder(a.audit)), // audit writes timed: shield_audit_write_duration_seconds
		CacheSize:  cfg.Pipeline.CacheSize,
		Timeout:    cfg.Pipeline.Timeout,
		Limits:     normalize.Limits{MaxBytes: cfg.Pipeline.MaxArgumentBytes},
		Metrics:    m,
	}, pol); err != nil {
		return nil, err
	}
	registerServiceMetrics(reg, a, a.approvals) // build/bundle info, pending approvals, checkpoint, Rekor lag
	// The watcher exists before any request can ask for reload counts.
	if cfg.Policy.Path != "" {
		opt, _ := LoadOptions(cfg) // read successfully by prepare
		poll := time.Duration(0)
		if cfg.Policy.Watch != nil && !*cfg.Policy.Watch {
			poll = -1
		}
		if a.watcher, err = policy.NewWatcher(cfg.Policy.Path, p.bundle, policy.WatchOptions{Load: opt, Accept: a.accept, Poll: poll, Logger: log}); err != nil {
			return nil, err
		}
	}
	if cfg.Dev {
		log.Warn("DEVELOPMENT MODE (--dev): every TCP caller acts as admin, unauthenticated; unix-socket peers keep their auth.unix_roles. Never run --dev in production.",
			"tcp_listeners", cfg.Listen)
	}
	limits, nofile, err := fitLimits(cfg)
	if err != nil {
		return nil, err
	}
	a.limits = limits
	log.Info("connection limits", "rlimit_nofile", nofile, "max_connections", limits.MaxConnections,
		"max_connections_per_peer", limits.MaxConnectionsPerPeer, "reserved_descriptors", limits.Reserve(),
		"listeners", 1+len(cfg.Listen))
	if err := a.buildServer(p.auth, m); err != nil {
		return nil, err
	}
	if err := a.listen(); err != nil {
		return nil, err
	}
	if err := a.buildEngines(); err != nil {
		return nil, err
	}
	return a, nil
}

// buildServer builds the one gRPC server (server.NewGRPC). Interceptors: authenticate and
// authorise, shed what is over a limit (Health never is), count evaluations; NewGRPC adds the
// error mapper and panic recovery last.
func (a *Appliance) buildServer(auth *server.Auth, m *shield.Metrics) error {
	shed := server.NewShedder(a.limits, a.reg, a.log)
	a.shed, a.auth = shed, auth
	a.grpc = server.NewGRPC(server.GRPCConfig{Log: a.log, Limits: a.limits, Creds: auth.Credentials(),
		MaxRecvMsgSize: maxRecvMsgSize(a.cfg), Tap: shed.TapHandle(),
		Unary:  []grpc.UnaryServerInterceptor{auth.UnaryInterceptor(), shed.UnaryInterceptor(), inFlightInterceptor(m)},
		Stream: []grpc.StreamServerInterceptor{auth.StreamInterceptor(), shed.StreamInterceptor()}})
	a.svc = server.NewShieldService(a.pipeline, a, Version)
	a.svc.Identity = identity
	shieldv1.RegisterShieldServiceServer(a.grpc, a.svc)
	server.RegisterStandardHealth(a.grpc, a.svc) // grpc.health.v1 for load balancers and probes
	if a.approvals != nil {
		a.aprSvc = server.NewApprovalService(a.approvals, identity)
		shieldv1.RegisterApprovalServiceServer(a.grpc, a.aprSvc)
	}
	shieldv1.RegisterAuditServiceServer(a.grpc, server.NewAuditService(a.audit.Log()))
	reflection.Register(a.grpc)
	return nil
}

// listen opens the unix socket, the TCP listeners and the metrics listener.
func (a *Appliance) listen() error {
	cm := server.NewConnMetrics(a.reg)
	ul, err := listenUnix(a.cfg.Socket)
	if err != nil {
		return err
	}
	a.lis = append(a.lis, server.LimitListener(ul, "unix", a.limits.MaxConnections, a.limits.MaxConnectionsPerPeer, cm, a.log))
	for _, addr := range a.cfg.Listen {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen %s: %w", addr, err)
		}
		a.lis = append(a.lis, server.LimitListener(l, addr, a.limits.MaxConnections, a.limits.MaxConnectionsPerPeer, cm, a.log))
	}
	// HTTP/JSON API and web console (config key http): the same adapters, auth and limits.
	if len(a.cfg.HTTP.Listen) > 0 {
		o := server.HTTPOptions{Auth: a.auth, Shield: a.svc, Shedder: a.shed, MaxArgumentBytes: a.cfg.Pipeline.MaxArgumentBytes,
			StreamSendTimeout: a.limits.StreamSendTimeout, Log: a.log, AuditLog: a.audit.Log(), Routes: a.hookRoutes()}
		if a.approvals != nil {
			o.Approvals, o.ApprovalStore = a.aprSvc, a.approvals
		}
		stop, err := server.ServeHTTP(a.cfg.HTTP, o, a.limits, cm)
		if err != nil {
			return err
		}
		a.stopHTTP = stop
	}
	if a.cfg.MetricsListen != "" {
		ml, err := net.Listen("tcp", a.cfg.MetricsListen)
		if err != nil {
			return fmt.Errorf("metrics listen %s: %w", a.cfg.MetricsListen, err)
		}
		// The metrics endpoint is loopback but open to every local user: its connections are
		// capped too, within the reserve (server.MetricsConnections).
		a.metrics = server.LimitListener(ml, "metrics", server.MetricsConnections, server.MetricsConnections, cm, a.log)
		a.mux.Handle("/metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	}
	return nil
}

// protected are the paths of the appliance no agent or tool may reach.
func (a *Appliance) protected() []string {
	return []string{a.cfg.StateDir, a.cfg.Audit.Dir, a.cfg.Audit.KeyFile, a.cfg.Socket, filepath.Dir(a.cfg.Audit.KeyFile)}
}

// buildEngines prepares the hosted engines on the appliance's own services, in process.
func (a *Appliance) buildEngines() error {
	timeout := a.cfg.Approvals.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	for _, ec := range a.cfg.Engines {
		sh := &localShield{svc: a.svc, approvals: a.aprSvc, engine: "engine:" + ec.Workspace, client: "client:" + ec.Workspace}
		e, err := newEngine(ec, sh, a.cfg.StateDir, a.protected(), timeout, engineRecorder{l: a.audit.Log()}, a.log)
		if err != nil {
			return fmt.Errorf("engine for %s: %w", ec.Workspace, err)
		}
		a.engines = append(a.engines, e)
	}
	return nil
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

// ErrEngineStopped is returned by Run when a hosted engine stopped for good (its agent's crash
// budget spent, or a sandbox that does not hold) and EngineStopIsFatal is set.
var ErrEngineStopped = errors.New("a hosted engine stopped")

// Run serves until ctx ends, then shuts down in order: engines (their agents) first, the gRPC
// server gracefully (at most 10 s), the HTTP listener; Close then records the stop and closes the
// approval store and the audit trail. SIGHUP reloads the policy bundle. A listener or an engine
// that fails ends Run with its error.
func (a *Appliance) Run(ctx context.Context) error {
	defer a.Close()
	cfg, log := a.cfg, a.log
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range a.lis {
		g.Go(func() error {
			if err := a.grpc.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				return fmt.Errorf("grpc server on %s: %w", l.Addr(), err)
			}
			return nil
		})
		log.Info("serving ShieldService", "addr", l.Addr().String(), "network", l.Addr().Network())
	}
	var hs *http.Server
	if a.metrics != nil {
		hs = &http.Server{Handler: a.mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
		g.Go(func() error {
			if err := hs.Serve(a.metrics); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("http server: %w", err)
			}
			return nil
		})
		log.Info("serving metrics", "addr", a.metrics.Addr().String())
	}
	for _, e := range a.engines {
		g.Go(func() error {
			err := e.Run(gctx)
			if err == nil || gctx.Err() != nil {
				return nil
			}
			err = fmt.Errorf("%w: %s: %w", ErrEngineStopped, e.Workspace(), err)
			if a.EngineStopIsFatal {
				return err
			}
			// The appliance keeps deciding for every other engine and runtime.
			log.Error("hosted engine stopped for good; the appliance keeps serving", "workspace", e.Workspace(), "error", err.Error())
			typ, payload := engine.EventEngineStopped.Record(map[string]any{"workspace": e.Workspace(), "error": err.Error()})
			recordEvent(context.WithoutCancel(gctx), a.audit, log, typ, payload)
			return nil
		})
	}
	if w := a.watcher; w != nil && (cfg.Policy.Watch == nil || *cfg.Policy.Watch) {
		g.Go(func() error {
			if err := w.Run(gctx); err != nil && gctx.Err() == nil {
				log.Error("policy watcher stopped", "error", err.Error())
			}
			return nil
		})
	}
	log.Info("shield ready", "version", Version, "bundle_revision", a.pol.Revision, "bundle_digest", a.pol.Digest,
		"state_dir", cfg.StateDir, "rules", a.pol.RuleCounts, "engines", len(a.engines))
	if err := SdNotify("READY=1\nSTATUS=serving"); err != nil {
		log.Warn("sd_notify READY failed", "error", err.Error())
	}
	g.Go(func() error { a.signals(gctx); return nil })
	// Orderly shutdown: when ctx ends or any part fails, stop the rest.
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down")
		_ = SdNotify("STOPPING=1")
		done := make(chan struct{})
		go func() { a.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			a.grpc.Stop()
		}
		if hs != nil {
			_ = hs.Close()
		}
		return nil
	})
	return g.Wait()
}

// signals reloads on SIGHUP and feeds the systemd watchdog until ctx ends.
func (a *Appliance) signals(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if iv := SdWatchdogInterval(); iv > 0 {
		t := time.NewTicker(iv / 2) // ping twice per watchdog period
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			// A service that cannot decide (audit log failing) stops feeding the watchdog:
			// systemd restarts it, which reopens and recovers the log.
			if len(a.Problems()) == 0 {
				_ = SdNotify("WATCHDOG=1")
			}
		case <-hup:
			a.Reload("SIGHUP")
		}
	}
}

// Reload reloads the policy bundle from policy.path (the embedded bundle has nothing to reload);
// the outcome is logged and counted by the watcher, and a bundle that fails keeps the old one.
// The shadow bundle (policy.shadow) is reloaded too.
func (a *Appliance) Reload(reason string) {
	_ = reloadShadow(a.cfg, a.shadow, a.log, reason) // logged; nothing when policy.shadow is unset
	if a.watcher == nil {
		a.log.Info(reason + ": the embedded bundle has nothing to reload")
		return
	}
	a.log.Info(reason+": reloading the policy bundle", "path", a.cfg.Policy.Path)
	_ = a.watcher.Reload(reason)
}

// Close releases everything New opened, in order: engines, listeners, the anchorer's last round,
// the stop record, the approval store, the audit trail. Calling it again does nothing.
func (a *Appliance) Close() {
	a.closeOnce.Do(func() {
		for _, e := range a.engines {
			_ = e.Close()
		}
		a.stopHTTP()
		for _, l := range a.lis {
			_ = l.Close()
		}
		if a.metrics != nil {
			_ = a.metrics.Close()
		}
		a.shadow.Close()
		a.stopExport()
		a.stopAnchor()
		if a.approvals != nil {
			_ = a.approvals.Close()
		}
		if a.audit != nil {
			recordEvent(context.Background(), a.audit, a.log, audit.TypeServiceStop, audit.ServiceStop{Version: Version, PID: os.Getpid()})
			if err := a.audit.Close(); err != nil {
				a.log.Error("close audit log", "error", err.Error())
			}
		}
	})
}
