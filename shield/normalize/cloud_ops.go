package normalize

import (
	"net/url"
	"strings"
)

// Operations of cloud and platform APIs, derived from the operation's words, not from a list of
// operations. A CLI whose spec says %verbs (aws, gcloud, az, doctl, oci, hcloud …) calls one API
// operation per run; the normaliser records it as one "operate" effect whose Target is the
// operation path (the leading operand words, "kms schedule-key-deletion", "compute instances
// delete") and whose Detail lists the facts its options add (an option set to 0: "zero:--min-size";
// an endpoint on this host: "endpoint:local"). The policy classifies the words by verb with the
// bundle's data (shield/ops/data.yaml: read, transfer, change and destroy words; rego/operations.rego):
// a read is inside the envelope, a destroy is blocked, anything else (a change, a grant, a verb the
// data does not know) leaves the envelope and is escalated. The next operation of a service is
// judged by its verb the day it ships.
//
// Identity options of cluster and cloud CLIs (--as, --token, --impersonate-service-account,
// az login --service-principal …) are privilege effects: the call acts as someone else.

// EffectOperate: an operation of a remote service's API (Target: "SERVICE… OPERATION" words of
// the CLI; Program: the CLI; Detail: comma-separated facts). It is API: rules name it.
const EffectOperate = "operate"

// cloudOperation records the operate effect of a %verbs CLI call.
func (w *walker) cloudOperation(sp *cmdSpec, name string, args words) {
	ws := verbWords(sp, args)
	if len(ws) == 0 {
		return
	}
	var facts []string
	dyn := false
	for _, v := range ws {
		if v == "$" {
			dyn = true
		}
	}
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--") {
			continue
		}
		opt, val, eq := strings.Cut(a, "=")
		if !eq && i+1 < len(args.argv) {
			val = args.argv[i+1]
		}
		switch {
		case val == "0" || val == "00":
			facts = append(facts, "zero:"+strings.ToLower(opt))
		case opt == "--endpoint-url" || opt == "--endpoint":
			if u, err := url.Parse(val); err == nil && loopbackName(strings.ToLower(u.Hostname())) {
				facts = append(facts, "endpoint:local")
			} else {
				facts = append(facts, "endpoint:remote")
			}
		}
	}
	w.s.addEffect(Effect{Kind: EffectOperate, Target: strings.Join(ws, " "), Program: name, Detail: strings.Join(facts, ","), Unresolved: dyn})
}

// identityOptions: options with which a cluster or cloud CLI acts as another identity than the
// caller's configured one. A value of "" in the table means any value; kubeconfig-like options
// only count when the file lies outside the workspace (a project's own kind/k3d kubeconfig is
// the developer's).
var identityOptions = map[string]map[string]string{
	"kubectl": {"--as": "", "--as-group": "", "--as-uid": "", "--token": "", "--kubeconfig": "file", "--user": "", "--client-key": "file", "--client-certificate": "file"},
	"oc":      {"--as": "", "--as-group": "", "--as-uid": "", "--token": "", "--kubeconfig": "file", "--user": "", "--client-key": "file", "--client-certificate": "file"},
	"helm":    {"--kube-as-user": "", "--kube-as-group": "", "--kube-token": "", "--kubeconfig": "file"},
	"gcloud":  {"--impersonate-service-account": "", "--access-token-file": "file", "--credential-file-override": "file"},
	"az":      {"--service-principal": "", "--federated-token": "", "--tenant": ""},
	"aws":     {"--role-arn": "", "--web-identity-token": ""},
	"doctl":   {"-t": "", "--access-token": ""},
	"flyctl":  {"-t": "", "--access-token": ""},
	"vault":   {"-token": ""},
}

// identityEffects: a privilege effect per identity option of the call (identityOptions), and
// for az/gcloud/aws the login or assume-role operations that switch identity.
func (w *walker) identityEffects(name string, args words) {
	opts := identityOptions[name]
	if opts == nil {
		return
	}
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == "--" {
			break
		}
		opt, val, eq := strings.Cut(a, "=")
		kind, ok := opts[opt]
		if !ok {
			continue
		}
		dyn := args.dyn[i]
		if !eq && i+1 < len(args.argv) && opt != "--service-principal" {
			val, dyn = args.argv[i+1], args.dyn[i+1]
		}
		if kind == "file" && !dyn {
			if clean, ok := resolvePath(val, w.s.cwd, w.s.n.opt.Home); ok && inDir(clean, w.s.n.opt.Workspace) {
				continue
			}
		}
		if opt == "--tenant" && !hasAnyArg(args, "--service-principal", "--federated-token") {
			continue
		}
		w.s.addEffect(Effect{Kind: EffectPrivilege, Target: name + " identity", Program: name, Detail: "identity " + opt, Unresolved: dyn})
		return
	}
	// aws sts assume-role*: credentials of another role (a secret effect is recorded by the
	// token table too); gcloud auth activate-service-account: another identity for every later call.
	ops := leadingWords(args, 3)
	switch {
	case name == "aws" && len(ops) >= 2 && ops[0] == "sts" && strings.HasPrefix(ops[1], "assume-role"):
		w.s.addEffect(Effect{Kind: EffectPrivilege, Target: name + " identity", Program: name, Detail: "identity sts " + ops[1]})
	case name == "gcloud" && len(ops) >= 2 && ops[0] == "auth" && ops[1] == "activate-service-account":
		w.s.addEffect(Effect{Kind: EffectPrivilege, Target: name + " identity", Program: name, Detail: "identity auth activate-service-account"})
	}
}

// leadingWords: the first n words of args that are not options (values of options are not
// skipped: callers compare them with sub-command words).
func leadingWords(args words, n int) []string {
	var out []string
	for i, a := range args.argv {
		if len(out) >= n || a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") || args.dyn[i] {
			continue
		}
		out = append(out, strings.ToLower(a))
	}
	return out
}
