package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/cmd/shield/appliance"
	"github.com/shieldsec/shield/shield"
)

// Names the tests of this package used before the wiring moved to package appliance.

func newAuditRecorder(l *audit.Log) shield.Recorder { return appliance.NewAuditRecorder(l, nil) }

func auditCollectors(al appliance.AuditLog) []prometheus.Collector {
	return appliance.AuditCollectors(al)
}

func sdWatchdogInterval() time.Duration { return appliance.SdWatchdogInterval() }
