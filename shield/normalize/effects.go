package normalize

// Effects: what a call would do, whatever runtime sent it and whatever program it names. Rules
// judge effects, not program names. The shell walker derives them from the command specs (which
// program reads, writes, deletes, connects, runs code), the structured tools from their catalog
// entries, and free text that another agent will act on from what it names.

// Effect kinds. They are API: rules and policies name them.
const (
	EffectRead        = "read"        // a file or directory is read (Target: cleaned path)
	EffectWrite       = "write"       // a file is created or modified (Target: cleaned path)
	EffectDelete      = "delete"      // a file or tree is removed (Target: cleaned path)
	EffectExec        = "exec"        // code runs (Target: the program or interpreter; Detail: inline code or script)
	EffectConnect     = "connect"     // a network connection (Target: host or host:port; Detail: scheme)
	EffectListen      = "listen"      // a listening socket (Target: port)
	EffectPrivilege   = "privilege"   // a privilege change (sudo, su, setuid bits, capabilities)
	EffectPersistence = "persistence" // a write where code runs later: rc files, cron, units, hooks, git config
	EffectInstall     = "install"     // a package install (Target: package or URL; Detail: manager)
	EffectPush        = "push"        // a VCS push (Target: remote; Detail: "force" when forced)
	EffectSecret      = "secret"      // a secret is read (Target: path, variable or command; Detail: kind)
	EffectEscape      = "escape"      // a container or cluster escape shape (Detail: privileged, host_mount, host_pid, docker_socket …)
)

// Install sources (Effect.Detail of an install effect). They are API.
const (
	SourceRegistry = "registry" // a name resolved by the manager's registry (npm, PyPI, crates.io, the Go proxy, apt)
	SourceURL      = "url"      // an archive or wheel fetched from a URL
	SourceVCS      = "vcs"      // a repository (git+https://…, github:owner/repo, cargo --git)
	SourcePath     = "path"     // a local directory or archive
	SourceManifest = "manifest" // the project's own manifest or lock file (npm ci, pip install -r, cargo fetch)
)

// Effect is one thing a call would do.
type Effect struct {
	Kind        string `json:"kind"`
	Target      string `json:"target"`
	Program     string `json:"program"` // the program (argv[0] base name) or tool with the effect
	Detail      string `json:"detail"`
	InWorkspace bool   `json:"in_workspace"` // path effects: the cleaned path lies in the workspace
	Sensitive   bool   `json:"sensitive"`    // path effects: a sensitive location; connect: a metadata or internal host
	// Unresolved: the operand came from an expansion, glob or substitution that could not be
	// resolved; its real value is unknown. Never leads to an allow without tier 2 or 3.
	Unresolved bool `json:"unresolved"`
	Port       int  `json:"port"` // connect, listen: the port when known (explicit or the scheme's default), else 0
	// Remote: where the effect happens when not on this host: "ssh:HOST", "container:NAME",
	// "pod:NAME" (the command ssh, docker exec or kubectl exec runs there). "" = this host.
	Remote string `json:"remote"`
	// Inline: for inline interpreter code whose language the bundle's inline allow list knows
	// (inline_code.go): "confined" when every import, name, member and method it uses is
	// allow-listed, else "capable: <reason>". "" for every other effect.
	Inline string `json:"inline,omitempty"`
}

// Flow is data moving from a source effect to a sink effect within one call (a pipe, a
// redirection, a command substitution, a variable): a secret read whose bytes reach a network
// connection is exfiltration whatever the programs.
type Flow struct {
	From int    `json:"from"` // index into Action.Effects
	To   int    `json:"to"`   // index into Action.Effects
	Via  string `json:"via"`  // "pipe", "subst", "redirect", "var", "arg"
}
