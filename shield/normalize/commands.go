package normalize

// Tables of command behaviour used by the shell walker. They are reviewable data: what a wrapper
// runs, which commands take files and in which role, which commands reach the network.

// shells run a script given with -c, a script file, or their standard input.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true,
	"mksh": true, "yash": true, "rbash": true, "fish": true, "tcsh": true, "csh": true, "busybox sh": true}

// wrappers lists the commands that run another command from their own argv and need the walker's
// own reading (follow in shell.go): privilege wrappers (the inner command runs as root), env and
// xargs (assignments, standard-input operands), command -v, nice -N, taskset -c LIST, watch (joins
// its words into a shell command line). For each: the options that take a separate value (so the
// value is not mistaken for the command), and how many leading operands come before the command.
// Every other launcher is a spec with a "cmd" or "shcmd" operand (commands/*.spec; spec_effects.go),
// walked by commandEffects with the spec's own option table (flock FILE -c CMD, timeout N -- CMD,
// bwrap --bind SRC DEST CMD).
var wrappers = map[string]struct {
	valueOpts map[string]bool
	operands  int
	sudo      bool
}{
	"sudo":    {valueOpts: set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir", "--prompt", "--role", "--type", "--host", "--close-from", "--other-user", "--command-timeout"), sudo: true},
	"doas":    {valueOpts: set("-u", "-C"), sudo: true},
	"pkexec":  {valueOpts: set("--user"), sudo: true},
	"run0":    {valueOpts: set("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv"), sudo: true},
	"env":     {valueOpts: set("-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P")},
	"xargs":   {valueOpts: set("-I", "-i", "-n", "-P", "-d", "-E", "-e", "-L", "-l", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof", "--process-slot-var")},
	"exec":    {valueOpts: set("-a")},
	"command": {},
	"builtin": {},
	"time":    {valueOpts: set("-f", "--format", "-o", "--output")},
	"nice":    {valueOpts: set("-n", "--adjustment")},
	"taskset": {operands: 1, valueOpts: set("-c")},
	"watch":   {valueOpts: set("-n", "--interval", "-d", "-g")}, // watch runs its args through sh -c
}

// fileCmds: commands whose operands are files, and the role of those files. Operands of these
// commands become paths even without a '/' ("rm id_rsa" after "cd ~/.ssh"). "copy" means every
// operand but the last is a source and the last the destination; skipFirst skips a leading
// operand that is not a file (chmod MODE, chown OWNER, grep PATTERN, sed SCRIPT).
var fileCmds = map[string]struct {
	role      string
	skipFirst bool
	valueOpts map[string]bool
}{
	"rm": {role: RoleDelete}, "rmdir": {role: RoleDelete}, "shred": {role: RoleDelete, valueOpts: set("-n", "-s")},
	"unlink": {role: RoleDelete}, "srm": {role: RoleDelete}, "wipe": {role: RoleDelete},
	"cat": {role: RoleRead}, "tac": {role: RoleRead}, "less": {role: RoleRead}, "more": {role: RoleRead},
	"head": {role: RoleRead, valueOpts: set("-n", "-c")}, "tail": {role: RoleRead, valueOpts: set("-n", "-c")},
	"base64": {role: RoleRead}, "base32": {role: RoleRead}, "xxd": {role: RoleRead}, "od": {role: RoleRead}, "hexdump": {role: RoleRead},
	"strings": {role: RoleRead}, "nl": {role: RoleRead}, "wc": {role: RoleRead}, "md5sum": {role: RoleRead}, "sha256sum": {role: RoleRead},
	"sha1sum": {role: RoleRead}, "file": {role: RoleRead}, "stat": {role: RoleRead}, "source": {role: RoleExec}, ".": {role: RoleExec},
	"vi": {role: RoleWrite}, "vim": {role: RoleWrite}, "nano": {role: RoleWrite}, "emacs": {role: RoleWrite},
	"grep":  {role: RoleRead, skipFirst: true, valueOpts: set("-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude")},
	"egrep": {role: RoleRead, skipFirst: true}, "fgrep": {role: RoleRead, skipFirst: true}, "rg": {role: RoleRead, skipFirst: true, valueOpts: set("-t", "-T", "--type", "--type-not", "-g", "--glob", "-e", "-f", "-A", "-B", "-C", "-m", "-M", "-j")},
	"sed": {role: RoleRead, skipFirst: true, valueOpts: set("-e", "-f")}, "awk": {role: RoleRead, skipFirst: true, valueOpts: set("-F", "-v", "-f")},
	"tee": {role: RoleWrite}, "touch": {role: RoleWrite}, "mkdir": {role: RoleWrite, valueOpts: set("-m")}, "truncate": {role: RoleWrite, valueOpts: set("-s")},
	"chmod": {role: RoleWrite, skipFirst: true}, "chown": {role: RoleWrite, skipFirst: true}, "chgrp": {role: RoleWrite, skipFirst: true},
	"chattr": {role: RoleWrite, skipFirst: true}, "setfacl": {role: RoleWrite, skipFirst: true},
	"cp": {role: "copy", valueOpts: set("-t", "--target-directory")}, "mv": {role: "copy", valueOpts: set("-t", "--target-directory")},
	"install": {role: "copy", valueOpts: set("-m", "-o", "-g", "-t")}, "ln": {role: "copy"}, "rsync": {role: "copy", valueOpts: set("-e", "--rsh", "--exclude", "--include")},
	"scp": {role: "copy", valueOpts: set("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J")},
	"ls":  {role: RoleList}, "find": {role: RoleList}, "du": {role: RoleList}, "tree": {role: RoleList},
	"cd": {role: RoleArg}, "pushd": {role: RoleArg},
}

// netCmds take URLs (or bare host[/path] operands read as http URLs).
var netCmds = map[string]map[string]bool{
	"curl": set("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "-H", "--header", "-X", "--request",
		"-o", "--output", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "-F", "--form",
		"-T", "--upload-file", "-x", "--proxy", "-m", "--max-time", "--connect-timeout", "-w", "--write-out", "-K", "--config",
		"--resolve", "--connect-to", "--cacert", "--cert", "--key", "-r", "--range", "-C", "-Y", "-y", "-z", "--retry", "--limit-rate",
		"--interface", "--dns-servers", "-U", "--proxy-user", "-E", "--json", "--url-query", "-D", "--dump-header", "--max-redirs", "-Q", "--quote"),
	"wget": set("-O", "--output-document", "-o", "--output-file", "-P", "--directory-prefix", "--post-data", "--post-file", "-U",
		"--user-agent", "--header", "-e", "--execute", "-t", "--tries", "-T", "--timeout", "-w", "--wait", "--user", "--password",
		"-i", "--input-file", "--body-data", "--body-file", "--method", "-a", "--append-output", "--referer", "-Y", "--proxy"),
	"http": set("-a", "--auth", "-o", "--output", "--session", "-v"), "https": set("-a", "--auth", "-o", "--output", "--session"),
	"xh":     set("-a", "--auth", "-o", "--output", "--session"),
	"aria2c": set("-d", "--dir", "-o", "--out", "-x", "-s", "-i"), "lynx": set(), "links": set(), "w3m": set(), "fetch": set("-o"),
}

// connectCmds open raw connections: HOST PORT operands.
var connectCmds = map[string]map[string]bool{
	"nc":     set("-p", "-s", "-w", "-e", "-c", "-i", "-q", "-x", "-X", "-W", "-T", "-I", "-O", "-P", "-V", "-m"),
	"ncat":   set("-p", "-s", "-w", "-e", "-c", "-i", "-x", "--proxy", "--proxy-type", "--exec", "--sh-exec", "--lua-exec", "-d", "-o", "--output"),
	"netcat": set("-p", "-s", "-w", "-e", "-c", "-i", "-q", "-x", "-X"),
	"telnet": set("-l", "-n", "-e"),
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
