package normalize

// Git tools of MCP servers and runtimes are the git command lines they run (cli_equivalent.go):
// git_show {repo_path, revision} is `git -C REPO show REV`, so a credential file at a revision
// ("a1b2c3d:config/credentials.yml.key") is the same history secret read as in a shell
// (git_history.go), and a dump of the repository is the same read of it (reach.go). A call
// without the required fields keeps its catalog class.
var gitToolBuilders = map[string]func(w *cliWords){
	"git_show": func(w *cliWords) {
		w.lit("git")
		w.opt("-C", "repo_path", "repo", "repository", "path")
		w.lit("show")
		w.need("revision", "rev", "commit", "ref")
	},
	"git_diff": func(w *cliWords) {
		w.lit("git")
		w.opt("-C", "repo_path", "repo", "repository")
		w.lit("diff")
		w.need("target", "revision", "base")
	},
	"git_diff_unstaged": func(w *cliWords) {
		w.lit("git")
		w.opt("-C", "repo_path", "repo", "repository")
		w.lit("diff")
	},
	"git_diff_staged": func(w *cliWords) {
		w.lit("git")
		w.opt("-C", "repo_path", "repo", "repository")
		w.lit("diff", "--cached")
	},
}
