package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shieldsec/shield/agent"
	"github.com/shieldsec/shield/agent/llm"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

func init() {
	register(&command{name: "internal-agent", hidden: true, run: runInternalAgent})
}

// runInternalAgent is the sandboxed agent process. The engine starts it confined, with its token
// and canary report in the environment and a connected socket to the engine as descriptor 3.
func runInternalAgent(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "internal-agent", "[--llm-provider P] [--llm-base-url URL] [--llm-model M] [--llm-api-key-env VAR]")
	var cfg llm.Config
	fs.StringVar(&cfg.Provider, "llm-provider", "openai", "openai or anthropic")
	fs.StringVar(&cfg.BaseURL, "llm-base-url", "", "model endpoint base URL")
	fs.StringVar(&cfg.Model, "llm-model", "", "model name")
	fs.StringVar(&cfg.APIKeyEnv, "llm-api-key-env", "", "environment variable holding the API key")
	fs.StringVar(&cfg.Dial, "llm-dial", "", "IP address of the model's host, resolved by the engine (the agent has no DNS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	token, id, canary := os.Getenv("SHIELD_AGENT_TOKEN"), os.Getenv("SHIELD_AGENT_ID"), os.Getenv("SHIELD_CANARY_REPORT")
	// The token must not linger where a child or a crash dump could read it.
	os.Unsetenv("SHIELD_AGENT_TOKEN")
	if token == "" {
		return errors.New("no SHIELD_AGENT_TOKEN: internal-agent is started by the engine only")
	}
	prov, err := llm.New(cfg)
	if err != nil {
		return err
	}
	f := os.NewFile(3, "engine")
	if f == nil {
		return errors.New("no engine connection on descriptor 3")
	}
	conn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("engine connection: %w", err)
	}
	var once sync.Once
	dial := func(context.Context, string) (net.Conn, error) {
		var c net.Conn
		once.Do(func() { c = conn })
		if c == nil {
			return nil, errors.New("the engine connection was already used")
		}
		return c, nil
	}
	cc, err := grpc.NewClient("passthrough:///engine", grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	// A sub-agent (started for one create_agent call) speaks SubAgentService; the messages are
	// the same.
	var st agentv1.AgentService_RunSessionClient
	if os.Getenv("SHIELD_AGENT_ROLE") == "sub" {
		st, err = agentv1.NewSubAgentServiceClient(cc).RunSubAgent(ctx)
	} else {
		st, err = agentv1.NewAgentServiceClient(cc).RunSession(ctx)
	}
	if err != nil {
		return fmt.Errorf("open session: %w", err)
	}
	return agent.Run(ctx, agent.Options{AgentID: id, Token: token, CanaryJSON: canary, Provider: prov, Stream: st})
}
