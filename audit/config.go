package audit

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// Config configures a Log. The zero value of every field but Dir selects its documented default.
type Config struct {
	// Dir holds the segments (audit-<first seq>.jsonl), their indexes, the latest checkpoint
	// ("checkpoint") and the quarantine directory. Created with mode 0700 if missing. Required.
	Dir string
	// KeyFile is the note signer key for checkpoints ("PRIVATE+KEY+name+hash+key", mode 0600).
	// Default Dir/signing.key. If it does not exist, an Ed25519 key named Origin is generated
	// there, with its verifier key at KeyFile+".pub".
	KeyFile string
	// Origin names a newly generated key, and so the checkpoints' origin line. Default
	// "shield-audit". An existing key keeps its own name.
	Origin string
	// CheckpointEvery replaces the checkpoint file (the published checkpoint, the truncation
	// anchor) after this many records. Every commit writes a checkpoint record regardless.
	// Default 1000.
	CheckpointEvery int
	// CheckpointInterval replaces the checkpoint file when records written since it are older
	// than this. Default 10s.
	CheckpointInterval time.Duration
	// SegmentMaxBytes seals the active segment once it reaches this size. Default 64 MiB.
	SegmentMaxBytes int64
	// SegmentMaxAge seals the active segment once its first record is this old. Default 24h.
	SegmentMaxAge time.Duration
	// GroupCommitWait bounds how long the writer waits, before committing a batch, for appenders
	// that have entered Append and are still preparing their record, so that one write, one
	// signed checkpoint and one fsync cover them too. It never waits when no other append is
	// being prepared (one call in flight). Default 100µs; negative: never wait.
	GroupCommitWait time.Duration
	// Redact configures redaction of decision arguments. The zero value redacts with the
	// default patterns.
	Redact Redaction

	// Logger receives every failure of the log (rate-limited) and its recoveries. Default
	// slog.Default().
	Logger *slog.Logger

	// wrap, when set (tests), wraps the active segment's file to inject faults.
	wrap func(segmentFile) segmentFile
}

func (c *Config) setDefaults() {
	if c.KeyFile == "" && c.Dir != "" {
		c.KeyFile = filepath.Join(c.Dir, "signing.key")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Origin == "" {
		c.Origin = "shield-audit"
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = 1000
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = 10 * time.Second
	}
	if c.SegmentMaxBytes == 0 {
		c.SegmentMaxBytes = 64 << 20
	}
	if c.SegmentMaxAge == 0 {
		c.SegmentMaxAge = 24 * time.Hour
	}
	if c.GroupCommitWait == 0 {
		c.GroupCommitWait = 100 * time.Microsecond
	}
}

// Validate reports every problem with the configuration (after defaults are applied).
func (c Config) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("audit: dir is required"))
	}
	if c.CheckpointEvery < 0 {
		errs = append(errs, fmt.Errorf("audit: checkpoint_every %d is negative", c.CheckpointEvery))
	}
	if c.CheckpointInterval < 0 {
		errs = append(errs, fmt.Errorf("audit: checkpoint_interval %v is negative", c.CheckpointInterval))
	}
	if c.SegmentMaxBytes < 4096 {
		errs = append(errs, fmt.Errorf("audit: segment_max_bytes %d is below 4096", c.SegmentMaxBytes))
	}
	if c.GroupCommitWait > 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("audit: group_commit_wait %v is over 100ms", c.GroupCommitWait))
	}
	if c.SegmentMaxAge < time.Second {
		errs = append(errs, fmt.Errorf("audit: segment_max_age %v is below 1s", c.SegmentMaxAge))
	}
	if _, err := c.Redact.compile(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
