package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/shieldsec/shield/sandbox"
)

// agentBaseEnv names the engine's variables an agent process gets when they are set: what a
// program needs to run and format text, and where the system keeps its CA certificates (the agent
// speaks TLS to its model). Nothing else of the engine's environment reaches the agent: the
// engine's own credentials (approval webhook secret, tokens, cloud keys) stay in the engine.
var agentBaseEnv = []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// agentBaseEnvPrefixes are the variable prefixes passed on as well (locale categories).
var agentBaseEnvPrefixes = []string{"LC_"}

// defaultAgentPath is the agent's PATH when the engine has none.
const defaultAgentPath = "/usr/bin:/bin"

// agentEnv returns the environment of an agent process: the allow-listed variables of environ,
// the model's API key variable when agentArgs name one with --llm-api-key-env (the only engine
// secret the agent is documented to need), then set, the variables the engine gives this agent
// (token, id, canary report, role), which win over any inherited variable of the same name.
func agentEnv(environ, agentArgs []string, set ...string) []string {
	allowed := slices.Clone(agentBaseEnv)
	if key := apiKeyEnv(agentArgs); key != "" {
		allowed = append(allowed, key)
	}
	own := map[string]bool{}
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		own[name] = true
	}
	var out []string
	havePath := false
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || own[name] {
			continue
		}
		if !slices.Contains(allowed, name) && !hasAnyPrefix(name, agentBaseEnvPrefixes) {
			continue
		}
		if name == "PATH" {
			havePath = true
		}
		out = append(out, kv)
	}
	if !havePath && !own["PATH"] {
		out = append(out, "PATH="+defaultAgentPath)
	}
	return append(out, set...)
}

// apiKeyEnv returns the variable named by --llm-api-key-env in args (the internal-agent flags).
func apiKeyEnv(args []string) string {
	name := ""
	for i, a := range args {
		switch {
		case (a == "--llm-api-key-env" || a == "-llm-api-key-env") && i+1 < len(args):
			name = args[i+1]
		case strings.HasPrefix(a, "--llm-api-key-env="):
			name = strings.TrimPrefix(a, "--llm-api-key-env=")
		case strings.HasPrefix(a, "-llm-api-key-env="):
			name = strings.TrimPrefix(a, "-llm-api-key-env=")
		}
	}
	if strings.ContainsAny(name, "=\x00") {
		return ""
	}
	return name
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// agentCommand returns the command that starts `shield internal-agent` confined by prof, with
// the agent's environment (agentEnv over the engine's own, plus set) and agentEnd as descriptor 3.
func (s *Supervisor) agentCommand(ctx context.Context, prof sandbox.Profile, agentEnd *os.File, set ...string) (*exec.Cmd, error) {
	agentArgs, err := s.agentArgs(ctx)
	if err != nil {
		return nil, err
	}
	args := append([]string{"internal-agent"}, agentArgs...)
	cmd, err := sandbox.Command(ctx, s.ShieldBin, prof, s.ShieldBin, args...)
	if err != nil {
		return nil, err
	}
	cmd.Env = agentEnv(os.Environ(), s.AgentArgs, set...)
	cmd.ExtraFiles = []*os.File{agentEnd} // fd 3
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// agentArgs are AgentArgs and, when the model is reached by name (LLMHost), --llm-dial with an
// address the engine resolved now: the agent has no DNS, and each agent start resolves afresh.
func (s *Supervisor) agentArgs(ctx context.Context) ([]string, error) {
	if s.LLMHost == "" {
		return s.AgentArgs, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(rctx, s.LLMHost)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("resolve the model's host %s: %v", s.LLMHost, err)
	}
	ip := addrs[0].IP
	for _, a := range addrs {
		if a.IP.To4() != nil {
			ip = a.IP // IPv4 first: loopback-only hosts often have no IPv6 route
			break
		}
	}
	return append(slices.Clone(s.AgentArgs), "--llm-dial", ip.String()), nil
}
