// Package sandbox owns the kernel confinement of the processes Shield runs: the Profile (what a
// confined process may touch), Apply (no_new_privs → Landlock → seccomp, irreversible), the re-exec
// trampoline that starts a program already confined, the canary probes that prove confinement from
// outside, the canary Report and the Gate that decides whether an agent may start.
//
// It imports nothing of Shield's. The engine (supervisor side: Canary, Probe, Gate), the agent
// (confined side: RunProbes) and cmd/shield (Trampoline, the sandbox CLI) import it.
//
// Linux only; the seccomp part needs cgo and libseccomp.
package sandbox
