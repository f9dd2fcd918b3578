package normalize

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// codeOptionName: option names that say their value is a command, a program or code.
var codeOptionName = regexp.MustCompile(`^-{1,2}(?:[a-z0-9]+-)*(?:exec|execute|command|cmd|shell|pager|editor|hook|program|askpass|wrap|eval|rsh|rsync-path|upload-pack|receive-pack|to-command|compress-program|checkpoint-action|info-script|new-volume-script|unzip-command|sendmail-cmd|extcmd|httpd|post-renderer|filter|pre|init-command|run|prepare|cleanup|setup|conclude)(?:-[a-z0-9]+)*$`)

// codeOptionsNotCode are options whose name says command but whose value is not one, each with
// the reason. A new option of that shape must get a code role (sh, prog, code, script, opaque,
// cmd, shcmd…) or a line here.
var codeOptionsNotCode = map[string]string{
	"kubectl run --command":                   "a flag: the operands after -- are the container's command (kuberun handler)",
	"docker ps --filter":                      "a listing filter",
	"docker images --filter":                  "a listing filter",
	"gcloud --filter":                         "a listing filter",
	"rsync --filter":                          "an rsync filter rule, not a command",
	"dotnet test --filter":                    "a test filter",
	"git clone --filter":                      "a partial-clone object filter",
	"git filter-branch --subdirectory-filter": "a directory, not a command",
	"rclone --filter":                         "an rclone filter rule",
	"script --command":                        "walked by the walker's follow (script -c)",
	"watchexec --shell":                       "the shell program that runs the command (sh, bash)",
	"hyperfine --shell":                       "the shell program that runs the benchmarks",
	"base32 --wrap":                           "a line width",
	"base64 --wrap":                           "a line width",
	"basenc --wrap":                           "a line width",
	"bat --wrap":                              "a wrapping mode",
	"bwrap --exec-label":                      "an SELinux label",
	"deno run --allow-run":                    "a permission list",
	"fswatch --filter-from":                   "a file of path filters",
	"gdb --exec":                              "the program debugged (gdb is +exec:debugger)",
	"git commit --cleanup":                    "a message cleanup mode",
	"git merge --cleanup":                     "a message cleanup mode",
	"git tag --cleanup":                       "a message cleanup mode",
	"go build -exec":                          "packages.spec (another owner): runs a program, should be prog",
	"go run -exec":                            "packages.spec (another owner): runs a program, should be prog",
	"go test -exec":                           "packages.spec (another owner): runs a program, should be prog",
	"go generate -run":                        "a directive pattern",
	"go test -run":                            "a test pattern",
	"hyperfine --command-name":                "a label",
	"locust --run-time":                       "a duration",
	"pnpm --filter":                           "a package selector",
	"pnpm add --filter":                       "a package selector",
	"pnpm install --filter":                   "a package selector",
	"rg --pre-glob":                           "a glob",
	"shellcheck --shell":                      "a dialect name",
	"sudo --command-timeout":                  "a duration",
	"useradd --shell":                         "a login shell (useradd is +privilege)",
	"usermod --shell":                         "a login shell (usermod is +privilege)",
	"watchexec --delay-run":                   "a duration",
	"watchexec --filter-file":                 "a file of path filters",
	"watchexec --filter":                      "a path filter",
	"wsl --shell-type":                        "standard, login or none",
	"wsl.exe --shell-type":                    "standard, login or none",
}

// TestSpecCodeOptionsHaveRoles is the audit of option values that run code as a test: every
// option of the default specs whose name says its value is a command or program has a role that
// is judged as code (or a reason above why it is not one).
func TestSpecCodeOptionsHaveRoles(t *testing.T) {
	t.Parallel()
	sp := defaultTestSpecs(t)
	var bad []string
	used := map[string]bool{}
	var walk func(name string, c *cmdSpec)
	walk = func(name string, c *cmdSpec) {
		for o, role := range c.opts {
			if !codeOptionName.MatchString(o) || role != "_" && role != "read" && role != "write" && role != "data" {
				continue
			}
			if _, ok := codeOptionsNotCode[name+" "+o]; ok {
				used[name+" "+o] = true
				continue
			}
			bad = append(bad, name+" "+o+"="+role)
		}
		for s, sub := range c.subs {
			walk(name+" "+s, sub)
		}
	}
	for name, c := range sp.table {
		walk(name, c)
	}
	for k := range codeOptionsNotCode {
		if !used[k] {
			bad = append(bad, k+": listed as not code, but no such option without a code role (stale line)")
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("options named as commands without a code role:\n  %s", strings.Join(bad, "\n  "))
	}
}
