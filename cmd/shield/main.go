// Command shield is the one binary of the Shield appliance: the service, the evaluator, the policy,
// audit, approval and sandbox tools, and the internal entry points of the processes it spawns.
//
// Each subcommand lives in its own file and registers itself in init with register.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand. run gets the arguments after the subcommand name and returns the
// process exit status; errors it returns are printed as "shield NAME: ERR" with status 1 (or 2 for
// usage errors, see usageError).
type command struct {
	name    string
	summary string
	hidden  bool // internal-* entry points are not listed in help
	run     func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv is what a subcommand may touch of the process: its streams. Tests run commands with
// buffers in place of the real streams.
type cmdEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// exitError carries an exit status other than 1 without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in the command line: printed with the command's usage, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("shield: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// runMain dispatches to a subcommand and maps its error to an exit status.
func runMain(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "shield: unknown command %q (run \"shield help\")\n", args[0])
		return 2
	}
	err := c.run(ctx, env, args[1:])
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(env.stderr, "shield %s: %s\n", c.name, ue.msg)
		return 2
	default:
		fmt.Fprintf(env.stderr, "shield %s: %v\n", c.name, err)
		return 1
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "shield — a security appliance for AI agents' tool calls\n\nUsage: shield COMMAND [FLAGS]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"shield COMMAND -h\" for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting, writing usage to env.stderr.
func newFlagSet(env *cmdEnv, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("shield "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: shield %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns a flag error into a usage error (already printed by flag).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return exitError{code: 2}
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
