package normalize

// The MCP git server's tools that read history (git_show {repo_path, revision}, git_diff
// {repo_path, target}) are the git command lines they run, walked by the git spec: a revision
// that names a file (a1b2c3d:config/master.key) reads that file's content from history, as `git
// show REV:PATH` does in a shell (git_history.go). Registered with cliEquivalent's builders.
func init() {
	gitC := func(w *cliWords) {
		w.lit("git")
		w.opt("-C", "repo_path", "repository", "repo")
	}
	cliBuilders["git_show"] = func(w *cliWords) { gitC(w); w.lit("show"); w.need("revision", "rev", "commit", "ref") }
	cliBuilders["git_diff"] = func(w *cliWords) { gitC(w); w.lit("diff"); w.need("target", "revision", "ref") }
}
