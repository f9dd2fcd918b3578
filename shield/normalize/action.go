// Package normalize turns a raw tool call (tool name + JSON arguments + context) into an Action:
// the action class from the tool catalog, shell commands parsed into simple commands, paths cleaned
// and classified, URLs split and their hosts classified. Every tier reads the Action, never the raw
// arguments alone.
//
// It owns:
//   - argument decoding with limits (DecodeArguments, Limits; errors in errors.go);
//   - the tool catalog format (ParseCatalog, Catalog.Merge; the default catalog is the bundle file
//     policies/default/catalog.yaml);
//   - shell parsing (shell.go, with the wrapper and file-command tables in commands.go), behind a
//     linear pre-scan of every shell string against the input limits (limits.go);
//   - the command-effect model: the command spec format (spec.go: ParseCommandSpecs, a getopt
//     grammar and operand roles per program; the default specs are the bundle files
//     policies/default/commands/*.spec) and the engine that turns each simple command into Effects,
//     Flows between them, Unresolved operands and UnknownPrograms (effects.go, effects_shell.go);
//   - environment variables that run code (effects_env.go), MCP tool annotations passed as call
//     labels (tools_annotations.go, WithLabels), delegated calls (catalog `delegate:`);
//   - state earlier commands change for later ones: the working directory after cd/pushd/popd,
//     git remotes repointed before a push, the workspace root removed (effects_state.go);
//   - payloads of structured and free-text calls: code run by code tools and browser pages
//     (tools_code.go), commands, pushes and protections asked for in prose (tools_prose.go);
//   - session context: the bounded per-session history of allowed calls and the effects it
//     gives later calls (sessions.go, Sessions);
//   - path resolution and the sensitive-path table (paths.go, sensitive.go), symbolic links on
//     disk when Options.ResolveLinks is set (links.go);
//   - URL splitting and host classification (urls.go);
//   - Normalizer (New, Normalize): bounded, never failing, safe for concurrent use.
//
// What cannot be read is a signal, not an error: Action.ParseError and Action.Truncated are set and
// must never lead to an allow. A call over an input limit (Action.OverLimit: ParseError starts with
// LimitPrefix) is not a command anyone runs: the pipeline blocks it.
//
// normalize imports nothing of this module; the shield pipeline, the bundle loader, the tier
// engines and the CLI import it.
package normalize

// Action classes. They are API: rules and policies name them, so they are never renamed.
const (
	ClassExec         = "exec"
	ClassFileRead     = "file_read"
	ClassFileWrite    = "file_write"
	ClassFileDelete   = "file_delete"
	ClassFileMove     = "file_move"
	ClassFileList     = "file_list"
	ClassFileSearch   = "file_search"
	ClassNetRequest   = "net_request"
	ClassMessageSend  = "message_send"
	ClassAgentSpawn   = "agent_spawn"
	ClassMemoryWrite  = "memory_write"
	ClassMemoryRead   = "memory_read"
	ClassSchedule     = "schedule"
	ClassVCSPush      = "vcs_push"
	ClassVCS          = "vcs"
	ClassDatabase     = "database"
	ClassBrowser      = "browser"
	ClassCodeExec     = "code_exec"
	ClassConfigChange = "config_change"
	ClassQuery        = "query" // a read-only lookup in an external system (get_*, search_*, list_*, *_lookup)
	ClassUnknown      = "unknown"
)

// IP classes of a URL's host. They are API.
const (
	IPLoopback  = "loopback"
	IPPrivate   = "private"
	IPLinkLocal = "link_local"
	IPMetadata  = "metadata" // cloud instance metadata (169.254.169.254, fd00:ec2::254, metadata.google.internal, …)
	IPPublic    = "public"
	IPHostname  = "hostname" // a name that was not resolved (Shield never resolves names on the decision path)
	IPInvalid   = "invalid"
)

// Action is a normalised tool call. The zero value is an unknown action with nothing parsed.
// Normalize returns every list non-nil (empty lists encode as [], never null).
//
// Field names in the `json` tags are the names CEL rules and Rego policies see (input.<name>).
type Action struct {
	Tool      string         `json:"tool"`
	Class     string         `json:"class"`
	Known     bool           `json:"known"` // the tool is in the catalog
	Args      map[string]any `json:"args"`  // the decoded arguments, as sent
	Cwd       string         `json:"cwd"`
	Workspace string         `json:"workspace"`

	// Exec: the command line as one string (argv lists are joined with shell quoting) and its
	// parse into simple commands, including those nested in $(…), backticks, bash -c, eval.
	Command    string    `json:"command"`
	Commands   []Command `json:"commands"`
	ParseError string    `json:"parse_error"` // non-empty when a command did not parse (a signal, never an allow); "input limit: …" when over a limit

	Paths      []Path   `json:"paths"`
	URLs       []URL    `json:"urls"`
	Recipients []string `json:"recipients"`
	Body       string   `json:"body"`    // message / request / file content body, as sent
	Content    string   `json:"content"` // content written (file_write, patch), as sent
	Prompt     string   `json:"prompt"`  // agent_spawn / schedule prompt or task text
	Method     string   `json:"method"`  // upper-cased HTTP method, "" when not a request
	Strings    []string `json:"strings"` // every string value in the arguments, depth-first, bounded

	// Effects: what the call would do (effects.go). Flows: data moving between them.
	Effects []Effect `json:"effects"`
	Flows   []Flow   `json:"flows"`
	// Unresolved lists operands that matter (a program name, a path, a URL) that came from an
	// expansion, glob or substitution that could not be resolved. Never an allow without tier 2/3.
	Unresolved []string `json:"unresolved"`
	// UnknownPrograms lists programs run that have no command spec: their effects are unknown.
	UnknownPrograms []string `json:"unknown_programs"`

	// Truncated is set when a bound was hit (command count, nesting depth, string count): parts of
	// the call were not looked at. Like ParseError, a signal that must never lead to an allow.
	Truncated bool `json:"truncated"`
}

// Command is one simple command: argv after quote removal, with what surrounds it.
type Command struct {
	Name       string     `json:"name"` // base name of argv[0] ("/usr/bin/rm" → "rm")
	Args       []string   `json:"args"` // argv[1:]
	Argv       []string   `json:"argv"`
	Raw        string     `json:"raw"`        // source text of the command
	Depth      int        `json:"depth"`      // 0 top level; +1 inside $(…), bash -c, eval, …
	Via        string     `json:"via"`        // how it was reached: "", "subst", "bash -c", "eval", "sudo", …
	Pipe       bool       `json:"pipe"`       // part of a pipeline
	PipeIndex  int        `json:"pipe_index"` // position in its pipeline (0 = first)
	Redirects  []Redirect `json:"redirects"`
	Env        []string   `json:"env"`     // assignments before the command or given to env ("LD_PRELOAD=/tmp/x.so")
	Dynamic    bool       `json:"dynamic"` // argv[0] or an argument came from an expansion ($VAR, $(…), globs we did not expand)
	Sudo       bool       `json:"sudo"`    // run through sudo/doas/su -c
	Background bool       `json:"background"`
}

// Redirect is a redirection of a simple command.
type Redirect struct {
	Op   string `json:"op"`   // ">", ">>", "<", "<<", "<<<", "&>", ">&", …
	Fd   string `json:"fd"`   // "", "1", "2", …
	Path string `json:"path"` // the target word after quote removal (cleaned against cwd when it is a path)
}

// Path is a file system path the call names, cleaned and classified.
type Path struct {
	Raw         string `json:"raw"`
	Clean       string `json:"clean"` // absolute, cleaned, ~ expanded, resolved against cwd
	Role        string `json:"role"`  // "read", "write", "delete", "source", "dest", "exec", "arg"
	InWorkspace bool   `json:"in_workspace"`
	Sensitive   bool   `json:"sensitive"`
	Kind        string `json:"kind"`   // "" or the sensitive kind: ssh_key, credentials, shadow, shell_rc, proc_environ, …
	DotDot      bool   `json:"dotdot"` // the path as written has a ".." element (traversal)
}

// URL is a URL the call names, split and classified.
type URL struct {
	Raw      string `json:"raw"`
	Scheme   string `json:"scheme"`
	Host     string `json:"host"` // lower-cased, no port, no brackets
	Port     int    `json:"port"` // explicit or the scheme's default; 0 when unknown
	Path     string `json:"path"`
	Query    string `json:"query"`
	UserInfo bool   `json:"userinfo"` // the URL carries user:password@
	IPClass  string `json:"ip_class"`
	Role     string `json:"role"` // "request", "connect" or "text" (found inside another string); see the URL* constants
	// Registrable: the host name's registrable domain (one label below its public suffix, by the
	// public suffix list with its private section: "evil.github.io", "signin-verify.net"); ""
	// for addresses and names without one. What a look-alike host really belongs to.
	Registrable string `json:"registrable"`
}
