package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
)

// auditHandle joins the audit log with the recorder the pipeline calls.
type auditHandle struct {
	shield.Recorder
	log *audit.Log
}

func (h *auditHandle) Healthy() error { return h.log.Healthy() }
func (h *auditHandle) Close() error   { return h.log.Close() }

// openAuditLog opens the audit trail under the state dir; serve refuses to start without one.
func openAuditLog(cfg *Config, log *slog.Logger) (auditLog, error) {
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
		Redact:             audit.Redaction{Keys: cfg.Audit.RedactKeys},
	})
	if err != nil {
		return nil, err
	}
	if r := l.Recovery(); r != nil {
		log.Warn("audit log recovered a torn tail", "recovery", fmt.Sprintf("%+v", *r))
	}
	log.Info("audit log open", "dir", cfg.Audit.Dir, "checkpoint_key", l.PublicKey())
	return &auditHandle{Recorder: newAuditRecorder(l), log: l}, nil
}
