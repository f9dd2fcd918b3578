package sandbox

import (
	"errors"
	"fmt"
)

// Status is the overall result of a canary run.
type Status string

const (
	// StatusSandboxed: every probe was blocked (or is impossible on this host even unconfined) and
	// the supervisor saw no_new_privs and the seccomp filter on the process.
	StatusSandboxed Status = "sandboxed"
	// StatusPartial: some probes were blocked, others were not or could not be decided.
	StatusPartial Status = "partial"
	// StatusUnsandboxed: nothing was shown to be blocked.
	StatusUnsandboxed Status = "unsandboxed"
	// StatusUnavailable: the kernel has no Landlock; nothing was confined.
	StatusUnavailable Status = "unavailable"
)

// Verdict is the result of one probe, from its control and confined outcomes and the supervisor's
// own checks.
type Verdict string

const (
	// VerdictBlocked: the control succeeded, the confined attempt failed with EPERM or EACCES, and
	// the supervisor found no trace of it.
	VerdictBlocked Verdict = "blocked"
	// VerdictAllowed: the confined attempt succeeded, or the supervisor found its trace.
	VerdictAllowed Verdict = "allowed"
	// VerdictHostDenied: the host refuses the operation even unconfined (EPERM or EACCES in the
	// control, for example mount without CAP_SYS_ADMIN), and the confined attempt failed too.
	VerdictHostDenied Verdict = "host-denied"
	// VerdictError: nothing can be concluded (the control failed otherwise, the confined attempt
	// failed with another error, timed out, or did not report).
	VerdictError Verdict = "error"
)

// Outcome is how one attempt of a probe ended, as the probing process reported it.
type Outcome struct {
	// Result is "ok", "denied" (EPERM or EACCES), "error" or "missing" (no report).
	Result string `json:"result"`
	// Errno is the error number's name when the attempt failed with one.
	Errno string `json:"errno,omitempty"`
	// Detail says more, for a person.
	Detail string `json:"detail,omitempty"`
}

// ProbeResult is one probe in a report.
type ProbeResult struct {
	Name     string  `json:"name"`
	Control  Outcome `json:"control"`
	Confined Outcome `json:"confined"`
	Verdict  Verdict `json:"verdict"`
	// Finding is what the supervisor checked, or why the verdict is not blocked.
	Finding string `json:"finding,omitempty"`
}

// ProcessCheck is what the supervisor read in /proc/PID/status of the confined process.
type ProcessCheck struct {
	PID                    int  `json:"pid"`
	NoNewPrivs             int  `json:"no_new_privs"`
	SeccompMode            int  `json:"seccomp_mode"`
	SeccompFilters         int  `json:"seccomp_filters"`
	ExpectedSeccompFilters int  `json:"expected_seccomp_filters"`
	OK                     bool `json:"ok"`
}

// Report is the canary report: what the kernel offers, which filter was loaded, and how each probe
// fared. The audit trail records it and the agent sends it in its ready message.
type Report struct {
	Status        Status        `json:"status"`
	Kernel        string        `json:"kernel"`
	LandlockABI   int           `json:"landlock_abi"`
	SeccompSHA256 string        `json:"seccomp_sha256,omitempty"`
	Profile       Profile       `json:"profile"`
	Process       *ProcessCheck `json:"process,omitempty"`
	Probes        []ProbeResult `json:"probes,omitempty"`
	// Problems lists, for a person, why the status is not sandboxed.
	Problems []string `json:"problems,omitempty"`
}

// Gate decides whether an agent may start given its canary report. Only a sandboxed report passes;
// an unavailable one passes only when allowUnsandboxed is set (the caller must log that loudly and
// record the report); partial and unsandboxed never pass. A nil report never passes.
func Gate(r *Report, allowUnsandboxed bool) error {
	if r == nil {
		return fmt.Errorf("no canary report: %w", ErrNotSandboxed)
	}
	switch r.Status {
	case StatusSandboxed:
		return nil
	case StatusUnavailable:
		if allowUnsandboxed {
			return nil
		}
		return fmt.Errorf("kernel %s has no Landlock (pass --allow-unsandboxed to run agents unconfined): %w", r.Kernel, ErrUnavailable)
	case StatusPartial, StatusUnsandboxed:
		return fmt.Errorf("canary status %s: %w", r.Status, errors.Join(ErrNotSandboxed, problems(r)))
	}
	return fmt.Errorf("unknown canary status %q: %w", r.Status, ErrNotSandboxed)
}

func problems(r *Report) error {
	var errs []error
	for _, p := range r.Problems {
		errs = append(errs, errors.New(p))
	}
	return errors.Join(errs...)
}

// summarize sets r.Status and r.Problems from the probes and the process check.
func (r *Report) summarize() {
	r.Problems = nil
	blocked := 0
	for _, p := range r.Probes {
		switch p.Verdict {
		case VerdictBlocked, VerdictHostDenied:
			blocked++
		default:
			r.Problems = append(r.Problems, fmt.Sprintf("probe %s: %s: %s", p.Name, p.Verdict, p.Finding))
		}
	}
	if r.Process == nil {
		r.Problems = append(r.Problems, "the confined process was not inspected")
	} else if !r.Process.OK {
		r.Problems = append(r.Problems, fmt.Sprintf("process %d: NoNewPrivs %d, Seccomp %d, Seccomp_filters %d (want 1, 2, %d)",
			r.Process.PID, r.Process.NoNewPrivs, r.Process.SeccompMode, r.Process.SeccompFilters, r.Process.ExpectedSeccompFilters))
	}
	switch {
	case len(r.Probes) == 0:
		r.Problems = append(r.Problems, "no probe ran")
		r.Status = StatusUnsandboxed
	case len(r.Problems) == 0:
		r.Status = StatusSandboxed
	case blocked == 0:
		r.Status = StatusUnsandboxed
	default:
		r.Status = StatusPartial
	}
}
