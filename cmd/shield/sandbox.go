package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shieldsec/shield/sandbox"
)

func init() {
	register(&command{
		name:    "sandbox",
		summary: "probe the kernel sandbox, or run a command confined by it",
		run:     runSandbox,
	})
	register(&command{name: sandbox.TrampolineCommand, hidden: true, run: runSandboxInit})
	register(&command{name: sandbox.CanaryCommand, hidden: true, run: runSandboxCanary})
}

const sandboxUsage = `probe [--json] | exec [FLAGS] -- CMD ARGS

  probe   run the canary probes in a child confined by the default agent profile and print the
          report; exit status 0 only when the status is sandboxed
  exec    run CMD confined: it may read --ro paths, read and write --rw paths, execute --exec
          paths (CMD itself and its libraries are added), connect to --connect TCP ports, bind
          --bind TCP ports, spawn processes only with --allow-spawn and change file metadata
          only with --allow-metadata`

func runSandbox(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		return usageError{msg: "missing subcommand\nUsage: shield sandbox " + sandboxUsage}
	}
	switch args[0] {
	case "probe":
		return runSandboxProbe(ctx, env, args[1:])
	case "exec":
		return runSandboxExec(ctx, env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.stdout, "Usage: shield sandbox "+sandboxUsage)
		return nil
	}
	return usageError{msg: fmt.Sprintf("unknown subcommand %q\nUsage: shield sandbox %s", args[0], sandboxUsage)}
}

func runSandboxProbe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "sandbox probe", "[--json]")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	llmPort := fs.Uint("llm-port", 443, "TCP port of the LLM endpoint the default agent profile allows")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{msg: "unexpected arguments: " + strings.Join(fs.Args(), " ")}
	}
	if *llmPort > 65535 {
		return usageError{msg: "--llm-port out of range"}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating the shield binary: %w", err)
	}
	workspace, err := os.MkdirTemp("", "shield-probe-workspace-")
	if err != nil {
		return fmt.Errorf("creating a workspace: %w", err)
	}
	defer os.RemoveAll(workspace)
	profile, err := sandbox.DefaultAgentProfile(workspace, sandbox.AgentOptions{LLMPort: uint16(*llmPort)}).WithProgram(self)
	if err != nil {
		return err
	}
	report, err := sandbox.Probe(ctx, sandbox.ProbeOptions{Shield: self, Profile: profile})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		printReport(env, report)
	}
	if report.Status != sandbox.StatusSandboxed {
		return exitError{code: 1}
	}
	return nil
}

func printReport(env *cmdEnv, r *sandbox.Report) {
	w := env.stdout
	fmt.Fprintf(w, "status:       %s\nkernel:       %s\nlandlock ABI: %d\nseccomp:      sha256:%s\n",
		r.Status, r.Kernel, r.LandlockABI, r.SeccompSHA256)
	if p := r.Process; p != nil {
		fmt.Fprintf(w, "process:      pid %d NoNewPrivs %d Seccomp %d filters %d/%d\n",
			p.PID, p.NoNewPrivs, p.SeccompMode, p.SeccompFilters, p.ExpectedSeccompFilters)
	}
	if len(r.Probes) > 0 {
		fmt.Fprintf(w, "\n%-18s %-10s %-16s %-12s %s\n", "PROBE", "CONTROL", "CONFINED", "VERDICT", "FINDING")
	}
	for _, p := range r.Probes {
		confined := p.Confined.Result
		if p.Confined.Errno != "" {
			confined += " " + p.Confined.Errno
		}
		fmt.Fprintf(w, "%-18s %-10s %-16s %-12s %s\n", p.Name, p.Control.Result, confined, p.Verdict, p.Finding)
	}
	for _, pr := range r.Problems {
		fmt.Fprintf(env.stderr, "problem: %s\n", pr)
	}
}

func runSandboxExec(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "sandbox exec", "[--ro PATH]… [--rw PATH]… [--exec PATH]… [--connect PORT]… [--bind PORT]… [--allow-spawn] [--allow-metadata] -- CMD ARGS")
	var ro, rw, ex, connect, bind stringList
	fs.Var(&ro, "ro", "path the command may read (repeatable)")
	fs.Var(&rw, "rw", "path the command may read and write (repeatable)")
	fs.Var(&ex, "exec", "path the command may read and execute (repeatable)")
	fs.Var(&connect, "connect", "TCP port the command may connect to (repeatable)")
	fs.Var(&bind, "bind", "TCP port the command may bind, 0 for any ephemeral port (repeatable)")
	spawn := fs.Bool("allow-spawn", false, "let the command start other processes (of --exec paths)")
	metadata := fs.Bool("allow-metadata", false, "let the command chmod, chown, setxattr and set times of files (Landlock does not restrict these: any file its user owns)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 {
		return usageError{msg: "missing command after --"}
	}
	p := sandbox.Profile{Spawn: *spawn, Metadata: *metadata}
	var errs []error
	for _, set := range []struct {
		flag string
		in   []string
		out  *[]string
	}{{"--ro", ro, &p.ReadOnly}, {"--rw", rw, &p.ReadWrite}, {"--exec", ex, &p.Exec}} {
		for _, path := range set.in {
			abs, err := absClean(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", set.flag, path, err))
				continue
			}
			*set.out = append(*set.out, abs)
		}
	}
	for _, set := range []struct {
		flag string
		in   []string
		out  *[]uint16
	}{{"--connect", connect, &p.ConnectTCP}, {"--bind", bind, &p.BindTCP}} {
		for _, s := range set.in {
			n, err := strconv.ParseUint(s, 10, 16)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q: not a port number", set.flag, s))
				continue
			}
			*set.out = append(*set.out, uint16(n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return usageError{msg: err.Error()}
	}
	// The command, and every program named by an --exec file, get what they need to start.
	programs := []string{cmdArgs[0]}
	for _, e := range p.Exec {
		if st, err := os.Stat(e); err == nil && st.Mode().IsRegular() {
			programs = append(programs, e)
		}
	}
	for _, prog := range programs {
		var err error
		if p, err = p.WithProgram(prog); err != nil {
			return fmt.Errorf("preparing the profile for %s: %w", prog, err)
		}
	}
	if err := p.Validate(); err != nil {
		return usageError{msg: err.Error()}
	}
	// This process becomes the command: apply, then execveat.
	return sandbox.Exec(p, cmdArgs[0], cmdArgs, os.Environ())
}

func absClean(path string) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Clean(path), nil
}

func runSandboxInit(ctx context.Context, env *cmdEnv, args []string) error {
	err := sandbox.Trampoline(args)
	// Trampoline returns only on failure; the process may be partially confined, so it exits.
	fmt.Fprintf(env.stderr, "shield %s: %v\n", sandbox.TrampolineCommand, err)
	return exitError{code: 126}
}

func runSandboxCanary(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) > 0 {
		return usageError{msg: "takes no arguments"}
	}
	return sandbox.RunProbes(env.stdin, env.stdout)
}
