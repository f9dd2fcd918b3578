// Package celrules is Tier 0 of the decision pipeline: CEL rules, written as YAML in a policy
// bundle (rules/*.yaml), type-checked against the normalised action, prepared once per bundle and
// evaluated in microseconds with a cost limit and context cancellation.
//
// celrules imports shield (to implement shield.Tier), shield/normalize (the Action it reads) and
// policy (the bundle). It never imports another tier. cmd and the pipeline wiring import it.
//
// # Rule files
//
// A rule file holds a list of rules; unknown keys are errors:
//
//	rules:
//	  - id: destructive.rm-root            # [a-z0-9][a-z0-9._-]*, unique in the bundle
//	    description: rm -rf of / or of the home directory
//	    severity: critical                 # low | medium | high | critical (optional)
//	    classes: [exec]                    # action classes it applies to (empty: all)
//	    tools: []                          # tool names it applies to (empty: all)
//	    when: >-
//	      commands.exists(c, c.name == "rm" && c.args.exists(a, a == "/"))
//	    decision: block                    # block | escalate | allow
//	    message: refusing to delete the root file system
//	    examples:                          # run at load; a failing example is a compile error
//	      match:
//	        - {tool: Bash, arguments: {command: "rm -rf /"}}
//	      not_match:
//	        - tool: Bash
//	          arguments: {command: "rm -rf ./build"}
//	          context: {cwd: /work/project}
//
// An example's context may give cwd, session_id, agent_id, runtime, caller and labels; the
// workspace is the one the normaliser was built with.
//
// # Variables
//
// A rule's `when` is a CEL expression of type bool over these variables (the fields of
// normalize.Action, same names as its json tags):
//
//	tool string, class string, known bool, args map(string, dyn), cwd string, workspace string,
//	command string, commands list(normalize.Command), parse_error string,
//	paths list(normalize.Path), urls list(normalize.URL), recipients list(string),
//	body string, content string, prompt string, method string, strings list(string),
//	truncated bool, names list(string) (the name of every command, precomputed: prefer
//	sets.intersects(names, ['curl', 'wget']) to commands.exists(c, c.name in [...]) as a guard),
//	ctx celrules.Context {session_id, agent_id, runtime, caller, labels map(string, string)}
//
// The object types are the normalize structs with their json names: normalize.Command (name,
// args, argv, raw, depth, via, pipe, pipe_index, redirects, dynamic, sudo, background, env),
// normalize.Redirect (op, fd, path), normalize.Path (raw, clean, role, in_workspace, sensitive,
// kind, dotdot), normalize.URL (raw, scheme, host, port, path, query, userinfo, ip_class, role);
// see shield/normalize/action.go. A misspelt field is a compile error.
//
// Besides the CEL standard library and the strings, lists, sets and encoders extensions:
//
//	base64_decode(string) string   lenient base64 (standard or URL alphabet, padded or not);
//	                               "" when the text is not base64
//	string.glob(pattern) bool      shell-style glob on slash-separated paths: * and ? stay
//	                               within a path element, ** crosses elements, {a,b} alternates
//
// Reading a missing map key (args.x when the call has no x) is an evaluation error, and an
// evaluation error fails the call closed (BLOCK): guard optional keys with has(args.x).
//
// # Evaluation
//
// The rules that apply to a class (those listing it, and those listing no class) are fused
// into one CEL program per class at compile time, each rule guarded by its tool list, so one
// evaluation pays the set-up once. Matches combine deny-first: every matched block rule is
// reported if any matched; otherwise every matched escalate rule; otherwise every matched allow
// rule. An exception to a block belongs in that rule's condition, not in an allow rule.
//
// Rules are gated (gate.go): at compile time each rule gets a necessary condition for it to be
// true or to fail (class, tool, command names, effect kinds, non-empty lists, …); per call, the
// fused program evaluates only the rules whose condition holds (each rule is guarded by a gate
// variable), and nothing when none holds. A rule whose shape the analysis does not recognise is
// always evaluated. `shield policy lint` lists those.
//
// Each rule's worst-case cost is estimated statically at compile time (cost.go: cel-go's
// estimator with the normaliser's bounds on list sizes and string lengths); a rule over
// Options.CostLimit is a compile error. Evaluation honours the context (the pipeline's tier
// timeout): a cancelled context or any other evaluation error is returned as an error (the
// failing rule is named), never an allow.
package celrules
