package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shieldsec/shield/cmd/shield/appliance"
)

func init() {
	register(&command{name: "stop", summary: "stop the `shield start` of a workspace (SIGTERM, SIGKILL after 10 s)", run: runStop})
}

// daemonReadyTimeout bounds how long `start --daemon` waits for the engine's client port.
const daemonReadyTimeout = 60 * time.Second

// runDaemon is `shield start --daemon` (seed 003): the process manager runs detached (its own
// session, no terminal; output to <state>/engines/<id>.log), and this process prints the
// connection info once the engine serves, then exits 0. The engine keeps running until `shield
// stop`. If the engine does not come up, the error carries the end of its log.
func runDaemon(env *cmdEnv, args []string, stateDir, workspace, base string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := base + ".log"
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	began := time.Now()
	cmd := osexec.Command(self, append([]string{"start"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	reg := appliance.RegistryPath(stateDir, workspace)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(daemonReadyTimeout)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the detached engine exited before serving (%v); its log %s ends:\n%s", err, logPath, logTail(logPath))
		case <-deadline:
			return fmt.Errorf("the detached engine (pid %d) did not serve within %s; it keeps trying (stop it with shield stop --workspace %s); its log %s ends:\n%s",
				cmd.Process.Pid, daemonReadyTimeout, workspace, logPath, logTail(logPath))
		case <-tick.C:
		}
		fi, err := os.Stat(reg)
		if err != nil || fi.ModTime().Before(began.Add(-time.Second)) {
			continue // not yet written by this engine (an older file is a stale one)
		}
		b, err := os.ReadFile(reg)
		var e appliance.RegistryEntry
		if err != nil || json.Unmarshal(b, &e) != nil || e.Port == 0 {
			continue
		}
		fmt.Fprintf(env.stdout, "shield start: running in the background (pid %d)\nPORT:%d\nworkspace: %s\nregistry: %s\nlog: %s\nstop with: shield stop --workspace %s --state-dir %s\n",
			cmd.Process.Pid, e.Port, workspace, reg, logPath, workspace, stateDir)
		_ = cmd.Process.Release()
		return nil
	}
}

// logTail is the last 2 KiB of a log file.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return string(b)
}

// runStop is `shield stop`: SIGTERM to the workspace's `shield start` (its pid file), SIGKILL
// after 10 s, as the seed's stop does.
func runStop(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "stop", "--workspace DIR [--state-dir DIR]")
	workspace := fs.String("workspace", "", "the workspace whose engine to stop")
	stateDir := fs.String("state-dir", "", "state directory (default as for start)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *workspace == "" {
		return usageError{"--workspace is required"}
	}
	ws, err := filepath.Abs(*workspace)
	if err != nil {
		return err
	}
	sd := *stateDir
	if sd == "" {
		sd = appliance.DefaultStateDir()
	}
	if sd, err = filepath.Abs(sd); err != nil {
		return err
	}
	pidFile := strings.TrimSuffix(appliance.RegistryPath(sd, ws), ".json") + ".pid"
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return fmt.Errorf("no shield start is running for %s (%v)", ws, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("pid file %s is malformed", pidFile)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("no shield start is running for %s (stale pid file %s)", ws, pidFile)
		}
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			fmt.Fprintf(env.stdout, "stopped (pid %d)\n", pid)
			return nil
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	fmt.Fprintf(env.stdout, "killed (pid %d) after 10 s\n", pid)
	return nil
}

// daemonArgs are the arguments of the detached `shield start` (absolute paths: it runs from /).
func daemonArgs(ws, stateDir, cfgPath, socket string) []string {
	args := []string{"--workspace", ws, "--state-dir", stateDir}
	if cfgPath != "" {
		if abs, err := filepath.Abs(cfgPath); err == nil {
			cfgPath = abs
		}
		args = append(args, "--config", cfgPath)
	}
	if socket != "" {
		if abs, err := filepath.Abs(socket); err == nil {
			socket = abs
		}
		args = append(args, "--socket", socket)
	}
	return args
}
