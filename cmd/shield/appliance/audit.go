package appliance

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/audit/rekor"
	"github.com/shieldsec/shield/shield"
)

// AuditLog is what the appliance needs of the audit trail: the pipeline's recorder, health and
// close; Log is the chain itself (lifecycle, approval and engine records, the audit API).
type AuditLog interface {
	shield.Recorder
	Healthy() error
	Close() error
	Log() *audit.Log
}

// auditHandle joins the audit log with the recorder the pipeline calls.
type auditHandle struct {
	shield.Recorder
	log *audit.Log
}

func (h *auditHandle) Healthy() error  { return h.log.Healthy() }
func (h *auditHandle) Close() error    { return h.log.Close() }
func (h *auditHandle) Log() *audit.Log { return h.log }

// OpenAuditLog opens the audit trail under the state dir; serve refuses to start without one.
func OpenAuditLog(cfg *Config, log *slog.Logger) (AuditLog, error) {
	// Whoever can write the state directory can replace the key, the log or the socket: refuse
	// to run on one that group or others may write (systemd's StateDirectoryMode=0710 passes).
	if err := audit.CheckPrivateDir("state directory", cfg.StateDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Audit.KeyFile), 0o700); err != nil {
		return nil, fmt.Errorf("create key dir: %w", err)
	}
	l, err := audit.Open(audit.Config{
		Dir:                cfg.Audit.Dir,
		KeyFile:            cfg.Audit.KeyFile,
		CheckpointEvery:    cfg.Audit.CheckpointEvery,
		CheckpointInterval: cfg.Audit.CheckpointInterval,
		SegmentMaxBytes:    cfg.Audit.SegmentMaxBytes,
		SegmentMaxAge:      cfg.Audit.SegmentMaxAge,
		Redact:             audit.Redaction{Keys: cfg.Audit.RedactKeys, Values: cfg.Audit.RedactValues},
		Logger:             log, // every failure (rate-limited) and every recovery
	})
	if err != nil {
		return nil, err
	}
	if r := l.Recovery(); r != nil {
		// Loud: bytes no signed checkpoint covered were moved out of the trail. After a crash
		// that is a torn or unacknowledged tail; records appended without the key look the same.
		log.Error("AUDIT LOG TAIL QUARANTINED: bytes after the last signed checkpoint were moved aside, not adopted",
			"segment", r.Segment, "offset", r.Offset, "bytes", r.Bytes, "uncovered_records", r.Records,
			"first_seq", r.FirstSeq, "quarantine_file", r.Quarantine, "sha256", r.SHA256, "reason", r.Reason)
	}
	log.Info("audit log open", "dir", cfg.Audit.Dir, "checkpoint_key", l.PublicKey())
	return &auditHandle{Recorder: &auditRecorder{l: l, log: log}, log: l}, nil
}

// AuditCollectors exports the audit log's state: healthy or failed, failures, self-recoveries,
// appends refused while failed, and what was quarantined at open.
func AuditCollectors(al AuditLog) []prometheus.Collector {
	h, ok := al.(*auditHandle)
	if !ok {
		return nil
	}
	st := func() audit.Status { return h.log.Status() }
	counter := func(name, help string, f func(audit.Status) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(st())) })
	}
	gauge := func(name, help string, f func(audit.Status) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(st()) })
	}
	return []prometheus.Collector{
		gauge("shield_audit_log_healthy", "1 while the audit log accepts records; 0 while it is failed (every decision is BLOCKed).",
			func(s audit.Status) float64 {
				if s.Healthy {
					return 1
				}
				return 0
			}),
		counter("shield_audit_log_failures_total", "Times the audit log failed (write, fsync, segment or checkpoint file).", func(s audit.Status) uint64 { return s.Failures }),
		counter("shield_audit_log_recoveries_total", "Times the audit log recovered by itself after a failure.", func(s audit.Status) uint64 { return s.Recoveries }),
		counter("shield_audit_log_rejected_appends_total", "Records refused while the audit log was failed.", func(s audit.Status) uint64 { return s.Rejected }),
		gauge("shield_audit_log_quarantined_records", "Records no signed checkpoint covered, moved to quarantine when the log was opened.",
			func(s audit.Status) float64 {
				if s.Quarantined == nil {
					return 0
				}
				return float64(s.Quarantined.Records)
			}),
		gauge("shield_audit_log_quarantined_bytes", "Bytes moved to quarantine when the log was opened (torn or unsigned tail).",
			func(s audit.Status) float64 {
				if s.Quarantined == nil {
					return 0
				}
				return float64(s.Quarantined.Bytes)
			}),
	}
}

// startAnchoring runs the Rekor anchorer in the background when configured. stop cancels it and
// waits for its last round (at shutdown), which must finish before the audit log closes.
func startAnchoring(ctx context.Context, cfg *Config, al AuditLog, log *slog.Logger) (stop func(), err error) {
	h, ok := al.(*auditHandle)
	if cfg.Audit.Rekor.URL == "" || !ok {
		return func() {}, nil
	}
	var up rekor.Uploader
	switch cfg.Audit.Rekor.API {
	case "v1":
		up, err = rekor.NewV1(cfg.Audit.Rekor.URL)
	default:
		up, err = rekor.NewV2(cfg.Audit.Rekor.URL)
	}
	if err != nil {
		return nil, err
	}
	a, err := rekor.New(rekor.Config{Dir: filepath.Join(cfg.Audit.Dir, "anchors"), KeyFile: cfg.Audit.Rekor.KeyFile,
		Interval: cfg.Audit.Rekor.Interval, Timeout: cfg.Audit.Rekor.Timeout}, h.log, up)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Run(actx, func(err error) {
			log.Warn("rekor anchoring round failed; the outbox keeps the checkpoint", "error", err.Error())
		})
	}()
	log.Info("anchoring checkpoints in Rekor", "url", cfg.Audit.Rekor.URL, "api", up.API())
	return func() { cancel(); <-done }, nil
}

// recordEvent appends a lifecycle record (service_start, bundle_activated, …). Failures are
// logged: they make the log unhealthy, which Health reports and which blocks every decision.
func recordEvent(ctx context.Context, al AuditLog, log *slog.Logger, typ audit.Type, payload any) {
	h, ok := al.(*auditHandle)
	if !ok {
		return
	}
	if _, err := h.log.Append(ctx, typ, payload); err != nil {
		log.Error("audit record failed", "type", string(typ), "error", err.Error())
	}
}
