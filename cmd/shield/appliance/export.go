package appliance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/audit"
)

// ExportConfig ships the audit trail to a SIEM (the export: section of shield.yaml, and the
// flags of shield audit export --sink). The shipper reads the trail; it is never on the
// decision path. Default: off.
type ExportConfig struct {
	// Sink is jsonl, syslog or http. Required.
	Sink string `yaml:"sink"`
	// Format is ocsf (default: OCSF 1.1 events, audit/README.md) or record (the stored lines).
	Format string `yaml:"format"`
	// Types ships only these record types. Default: every type but checkpoint.
	Types []string `yaml:"types"`
	// Cursor is the file holding the shipped position. Default <state_dir>/export/<sink>.cursor.
	Cursor string `yaml:"cursor"`
	// Batch is the most records per send. Default 500.
	Batch int `yaml:"batch"`
	// Path is the jsonl sink's file (appended, fsynced per batch); "-" or empty: stdout.
	Path string `yaml:"path"`
	// Syslog configures the syslog sink (RFC 5424 over TCP, or TLS with tls: true).
	Syslog SyslogExportConfig `yaml:"syslog"`
	// HTTP configures the http sink (POST of application/x-ndjson batches).
	HTTP HTTPExportConfig `yaml:"http"`
}

// SyslogExportConfig configures the syslog sink.
type SyslogExportConfig struct {
	// Address is the receiver's host:port. Required for the syslog sink.
	Address string `yaml:"address"`
	// TLS speaks TLS (RFC 5425); CAFile (PEM) replaces the system roots; CertFile and KeyFile
	// present a client certificate; ServerName overrides the name checked.
	TLS        bool   `yaml:"tls"`
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	// Facility (0..23). Default 13 (log audit).
	Facility *int `yaml:"facility"`
	// AppName is the APP-NAME field. Default "shield".
	AppName string `yaml:"app_name"`
}

// HTTPExportConfig configures the http sink.
type HTTPExportConfig struct {
	// URL receives the batches. Required for the http sink. https:// unless the host is loopback.
	URL string `yaml:"url"`
	// TokenEnv names an environment variable holding a bearer token (Authorization: Bearer …).
	TokenEnv string `yaml:"token_env"`
	// Headers are added to every request (no secrets here: use token_env).
	Headers map[string]string `yaml:"headers"`
	// CAFile, CertFile, KeyFile: as for syslog.
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// Timeout bounds one request. Default 30s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxAttempts bounds the tries of one batch before the shipper backs off. Default 4.
	MaxAttempts int `yaml:"max_attempts"`
}

// Validate reports every problem with the section.
func (c *ExportConfig) Validate() error {
	var errs []error
	switch c.Sink {
	case "jsonl":
	case "syslog":
		if c.Syslog.Address == "" {
			errs = append(errs, errors.New("export.syslog.address is required for the syslog sink"))
		}
		if !c.Syslog.TLS && (c.Syslog.CAFile != "" || c.Syslog.CertFile != "") {
			errs = append(errs, errors.New("export.syslog: ca_file and cert_file need tls: true"))
		}
	case "http":
		if u, err := url.Parse(c.HTTP.URL); c.HTTP.URL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("export.http.url %q: want an http(s) URL", c.HTTP.URL))
		} else if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			errs = append(errs, fmt.Errorf("export.http.url %q: decisions leave the host in clear text; use https (http only to loopback)", c.HTTP.URL))
		}
		if c.HTTP.TokenEnv != "" && os.Getenv(c.HTTP.TokenEnv) == "" {
			errs = append(errs, fmt.Errorf("export.http.token_env: environment variable %s is empty", c.HTTP.TokenEnv))
		}
	default:
		errs = append(errs, fmt.Errorf("export.sink %q: use jsonl, syslog or http", c.Sink))
	}
	if (c.Syslog.CertFile == "") != (c.Syslog.KeyFile == "") || (c.HTTP.CertFile == "") != (c.HTTP.KeyFile == "") {
		errs = append(errs, errors.New("export: cert_file and key_file go together"))
	}
	if err := c.ShipperConfig("", nil).Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ShipperConfig is the audit.ExportConfig of the section.
func (c *ExportConfig) ShipperConfig(cursor string, log *slog.Logger) audit.ExportConfig {
	ec := audit.ExportConfig{Cursor: cursor, Format: audit.ExportFormat(c.Format), Batch: c.Batch, Version: Version, Logger: log}
	for _, t := range c.Types {
		ec.Types = append(ec.Types, audit.Type(t))
	}
	return ec
}

// exportTLS builds a client TLS configuration from PEM files.
func exportTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// NewExportSink builds the configured sink; stdout receives a jsonl sink without a path.
func NewExportSink(c *ExportConfig, stdout io.Writer) (audit.Sink, error) {
	switch c.Sink {
	case "jsonl":
		if c.Path == "" || c.Path == "-" {
			return audit.NewJSONLWriter(stdout), nil
		}
		return audit.NewJSONLFile(c.Path)
	case "syslog":
		sc := audit.SyslogConfig{Address: c.Syslog.Address, Facility: c.Syslog.Facility, AppName: c.Syslog.AppName}
		if c.Syslog.TLS {
			t, err := exportTLS(c.Syslog.CAFile, c.Syslog.CertFile, c.Syslog.KeyFile, c.Syslog.ServerName)
			if err != nil {
				return nil, fmt.Errorf("export.syslog: %w", err)
			}
			sc.TLS = t
		}
		return audit.NewSyslogSink(sc)
	case "http":
		hc := audit.HTTPConfig{URL: c.HTTP.URL, Header: http.Header{}, Timeout: c.HTTP.Timeout, MaxAttempts: c.HTTP.MaxAttempts}
		for k, v := range c.HTTP.Headers {
			hc.Header.Set(k, v)
		}
		if c.HTTP.TokenEnv != "" {
			tok := os.Getenv(c.HTTP.TokenEnv)
			if tok == "" {
				return nil, fmt.Errorf("export.http.token_env: environment variable %s is empty", c.HTTP.TokenEnv)
			}
			hc.Header.Set("Authorization", "Bearer "+tok)
		}
		if c.HTTP.CAFile != "" || c.HTTP.CertFile != "" {
			t, err := exportTLS(c.HTTP.CAFile, c.HTTP.CertFile, c.HTTP.KeyFile, "")
			if err != nil {
				return nil, fmt.Errorf("export.http: %w", err)
			}
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = t
			hc.Client = &http.Client{Transport: tr}
		}
		return audit.NewHTTPSink(hc)
	}
	return nil, fmt.Errorf("export.sink %q: use jsonl, syslog or http", c.Sink)
}

// ExportCursor is the cursor file of the section: configured, else <state_dir>/export/<sink>.cursor.
func ExportCursor(c *ExportConfig, stateDir string) (string, error) {
	p := c.Cursor
	if p == "" {
		p = filepath.Join(stateDir, "export", c.Sink+".cursor")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("create export cursor dir: %w", err)
	}
	return p, nil
}

// startExport runs the shipper inside serve when the export: section is set, and registers
// its metrics. stop cancels it and waits for it (before the audit log closes).
func startExport(ctx context.Context, cfg *Config, al AuditLog, reg prometheus.Registerer, log *slog.Logger) (stop func(), err error) {
	h, ok := al.(*auditHandle)
	if cfg.Export == nil || !ok {
		return func() {}, nil
	}
	cursor, err := ExportCursor(cfg.Export, cfg.StateDir)
	if err != nil {
		return nil, err
	}
	sink, err := NewExportSink(cfg.Export, os.Stdout)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	ec := cfg.Export.ShipperConfig(cursor, log)
	ec.Redact = audit.Redaction{Keys: cfg.Audit.RedactKeys, Values: cfg.Audit.RedactValues} // the log's own patterns
	sh, err := audit.NewShipper(ec, h.log, sink)
	if err != nil {
		sink.Close()
		return nil, err
	}
	reg.MustRegister(exportCollectors(sh, h.log)...)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sink.Close()
		// Errors that retrying cannot fix (a cursor that does not match the trail, an
		// unwritable cursor) stop the shipper loudly; decisions are unaffected.
		if err := sh.Run(sctx, true); err != nil {
			log.Error("AUDIT EXPORT STOPPED: the trail is no longer shipped", "sink", cfg.Export.Sink, "error", err.Error())
		}
	}()
	log.Info("shipping the audit trail", "sink", cfg.Export.Sink, "format", cfg.Export.Format, "cursor", cursor)
	return func() { cancel(); <-done }, nil
}

// exportCollectors exports the shipper's progress.
func exportCollectors(sh *audit.Shipper, l *audit.Log) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_audit_export_records_total",
			Help: "Audit records the export sink acknowledged (since start)."}, func() float64 { return float64(sh.Stats().Shipped) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shield_audit_export_failures_total",
			Help: "Failed sends of an audit export batch (each batch is sent again)."}, func() float64 { return float64(sh.Stats().Failures) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_audit_export_lag_records",
			Help: "Audit records not yet acknowledged by the export sink."}, func() float64 {
			n, next := l.Size(), sh.Stats().Next
			if next > n {
				return 0
			}
			return float64(n - next)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_audit_export_last_success_timestamp_seconds",
			Help: "When the export sink last acknowledged a batch (Unix time; 0: not yet)."}, func() float64 {
			t := sh.Stats().LastSuccess
			if t.IsZero() {
				return 0
			}
			return float64(t.UnixNano()) / 1e9
		}),
	}
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
