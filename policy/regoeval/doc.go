// Package regoeval is Tier 1 of the decision pipeline: the Rego modules and data files of a
// policy bundle, compiled into one prepared OPA query per bundle and evaluated with the
// normalised action as input.
//
// regoeval imports shield (to implement shield.Tier), shield/normalize (the Action it reads)
// and policy (the bundle). It never imports another tier. cmd, the pipeline wiring and
// policy/policytest import it.
//
// # Bundle files
//
// Every *.rego file is a module; *_test.rego files are tests (run by policy/policytest and by
// `opa test -b DIR`, never loaded for serving). When the manifest lists roots, OPA's bundle mode
// requires every package and data path to lie under one of them (Parsed.CheckRoots; `shield
// policy lint` warns): name test packages like shield.decision_test. (Plain `opa test DIR` without -b would also load rules/*.yaml and the
// catalog as data and fail; use -b.) data.json, data.yaml and data.yml files are mounted
// under data at their directory's path (rules/net/data.json → data.rules.net), as OPA does;
// data.shield_derived holds forms of the bundle's lists derived at load (derive.go).
// Modules are Rego v1 unless the manifest says "rego_version": 0.
//
// Builtins that reach outside the process (http.send, net.lookup_ip_addr, opa.runtime,
// providers.aws.sign_req) are not available: a policy that calls one does not compile. A builtin
// that fails on its arguments (base64.decode of text that is not base64, json.unmarshal of text
// that is not JSON) makes its expression undefined, as in OPA and `opa test`: strict builtin
// errors would turn every odd argument into a BLOCK of an ordinary call. A deny rule must
// therefore not depend on a builtin succeeding for the attack it stops; test it on malformed
// input. Engine-level failures (deadline, conflicting values, a result outside the contract)
// are errors and fail the call closed.
//
// Evaluation honours the context: a deadline or a cancellation stops it with an error.
//
// # Input
//
// input is the normalised action (normalize.Action, with the names of its json tags: input.tool,
// input.class, input.commands[_].name, input.paths[_].clean, input.urls[_].ip_class, …; lists and
// maps are never null but empty) plus
//
//	input.context = {"session_id": s, "agent_id": s, "runtime": s, "caller": s, "labels": {s: s}}
//
// # Output contract
//
// The engine evaluates data.shield.decision. When it is undefined the tier has no opinion.
// Otherwise it must be an object with only the keys "deny", "escalate" and "allow", each an array
// or a set of objects
//
//	{"rule": "<id>", "reason": "<message safe to show the agent>", "severity": "<optional>"}
//
// Each entry becomes a finding with Rule "rego:<id>" and the decision of its key (deny → BLOCK).
// Anything else (another key, an entry without a rule id, a non-string reason) is an error, and
// an error fails the call closed. A typical policy:
//
//	package shield
//
//	decision := {"deny": deny, "escalate": escalate, "allow": allow}
//
//	deny contains {"rule": "exfil.metadata", "reason": "cloud metadata endpoint"} if {
//		some u in input.urls
//		u.ip_class == "metadata"
//	}
//	escalate contains ... if { ... }
//	allow contains ... if { ... }
//
// Findings are ordered deny, escalate, allow, and by rule id within each.
//
// # Gating
//
// With that plain decision document (and no `with` in any module), each deny/escalate/allow rule
// gets a necessary condition at load and the served modules call a gate built-in first in each
// such rule: a rule whose condition does not hold for the call is not evaluated, and when none
// holds the evaluation is skipped (the decision is then empty). See gate.go for the shapes
// recognised and why skipping never changes a verdict, including an error's.
//
// # Dispatch
//
// A function whose bodies mostly start by comparing one field of an argument with strings
// (inside(e) with e.kind == "…") is served through a helper indexed on that field (dispatch.go):
// OPA's rule index does not look into arguments' fields. TestServedEqualsPlainOPA checks the
// served engine against plain OPA on every corpus call.
package regoeval
