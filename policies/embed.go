// Package policies holds the default policy bundle as data, embedded into the binary. Load it
// with policy.LoadFS(policies.Default, "default", opt).
//
// policies imports nothing; cmd and the bundle activation import it.
package policies

import "embed"

// Default is the default bundle under "default/". The all: prefix keeps .manifest, which
// go:embed would otherwise skip.
//
//go:embed all:default
var Default embed.FS
