// Package appliance is the one composition root of Shield: it reads and validates the
// configuration (Config, Validate, Check), builds the appliance once (New: policy bundle and its
// reload, audit trail, tiers, approvals, metrics, the gRPC server with its services, hosted
// engines) and runs it (Run: listeners, reload on SIGHUP and on change, engines, orderly
// shutdown). `shield serve`, `shield start`, `shield eval` and `shield config check` all use it,
// so that what serve refuses, config check refuses, and every engine, hook and proxy is decided by
// one pipeline with one approval store, one audit chain and one metrics registry.
//
// Only cmd/shield imports appliance; it may import every package of the module.
package appliance
