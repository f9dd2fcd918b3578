package appliance

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
)

// registerServiceMetrics registers the appliance-level series: build and bundle info, pending
// approvals, the published checkpoint's age and Rekor anchoring lag. Every label set is
// bounded: info metrics hold one series each, the rest none.
func registerServiceMetrics(reg prometheus.Registerer, a *Appliance, approvals *approval.Service) {
	shield.RegisterInfo(reg, Version, func() (string, string) {
		pol := a.pipeline.Policy()
		if pol == nil {
			return "", ""
		}
		return pol.Revision, pol.Digest
	})
	if approvals != nil {
		shield.RegisterApprovals(reg, func() (int, time.Time, error) {
			ps, err := approvals.List(true) // oldest first
			if err != nil || len(ps) == 0 {
				return 0, time.Time{}, err
			}
			return len(ps), ps[0].Created, nil
		})
	}
	h, ok := a.audit.(*auditHandle)
	if !ok {
		return
	}
	l := h.log
	// The published checkpoint (the checkpoint file, what anchoring and proofs use) covers the
	// records before its own; whatever was appended after it waits for the next one.
	published := func() (size uint64, at time.Time, ok bool) {
		_, c, err := l.SignedCheckpoint()
		if err != nil {
			return 0, time.Time{}, false
		}
		r, err := l.Get(c.Size) // the checkpoint record itself
		if err != nil {
			return c.Size, time.Time{}, true
		}
		return c.Size, r.Time, true
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_audit_checkpoint_age_seconds",
			Help: "Seconds since the published signed checkpoint was written (0: none yet)."}, func() float64 {
			_, at, ok := published()
			if !ok || at.IsZero() {
				return 0
			}
			return time.Since(at).Seconds()
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_audit_checkpoint_uncovered_records",
			Help: "Audit records appended after the published signed checkpoint (covered only by per-commit checkpoint records)."}, func() float64 {
			size, _, ok := published()
			n := l.Size()
			if !ok {
				return float64(n)
			}
			if n <= size+1 {
				return 0
			}
			return float64(n - size - 1)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_audit_records",
			Help: "Records in the audit trail."}, func() float64 { return float64(l.Size()) }),
	)
	if a.cfg.Audit.Rekor.URL == "" {
		return
	}
	dir := filepath.Join(a.cfg.Audit.Dir, "anchors")
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_rekor_anchor_lag_records",
			Help: "Audit records not covered by the newest checkpoint anchored in Rekor."}, func() float64 {
			size, _ := lastAnchor(dir)
			if n := l.Size(); n > size {
				return float64(n - size)
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_rekor_last_anchor_timestamp_seconds",
			Help: "When the newest checkpoint was anchored in Rekor (Unix time; 0: never)."}, func() float64 {
			_, at := lastAnchor(dir)
			if at.IsZero() {
				return 0
			}
			return float64(at.UnixNano()) / 1e9
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_rekor_outbox_checkpoints",
			Help: "Checkpoints waiting to be uploaded to Rekor."}, func() float64 {
			ents, _ := os.ReadDir(filepath.Join(dir, "outbox"))
			n := 0
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".note") {
					n++
				}
			}
			return float64(n)
		}),
	)
}

// lastAnchor returns the size and time (file modification) of the newest anchor in dir
// (<size>.json files written by audit/rekor).
func lastAnchor(dir string) (uint64, time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, time.Time{}
	}
	var size uint64
	var at time.Time
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		s, err := strconv.ParseUint(n, 10, 64)
		if err != nil || s < size {
			continue
		}
		if fi, err := e.Info(); err == nil {
			size, at = s, fi.ModTime()
		}
	}
	return size, at
}
