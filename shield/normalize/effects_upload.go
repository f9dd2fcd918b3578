package normalize

import "strings"

// Uploads and cloud mutations the spec handlers record only as reads and connections: a program
// that reads local files and sends them to another host (scp, rsync, sftp put, curl -T, wget
// --post-file, git send-email) pushes them there, whatever the files' sensitivity; a cloud CLI
// call that deletes in bulk (aws s3 sync --delete, aws s3 rm --recursive, gsutil rsync -d, gsutil
// rm -r) deletes cloud state; one that grants a role or opens a firewall to everyone changes
// privileges ("cloud:…"). Called for every command that has a spec handler.
func (w *walker) uploadsAndMutations(pa parsedArgs, name string, args words, ops words) {
	s := w.s
	add := func(kind, target, detail string) {
		if kind == EffectPush && (target == "localhost" || strings.HasPrefix(target, "127.") || target == "::1") {
			return // an upload to this host (a local test server) leaves nothing
		}
		s.addEffect(Effect{Kind: kind, Target: target, Program: name, Detail: detail})
	}
	hasArg := func(xs ...string) bool {
		for _, a := range args.argv {
			for _, x := range xs {
				if a == x || strings.HasPrefix(a, x+"=") {
					return true
				}
			}
		}
		return false
	}
	switch pa.spec.handler {
	case "remotecopy":
		if len(ops.argv) >= 2 {
			if h := remoteSpecHost(ops.argv[len(ops.argv)-1]); h != "" {
				add(EffectPush, h, "upload ("+name+")")
			}
		}
	case "wget":
		if hasArg("--post-file", "--body-file") {
			add(EffectPush, uploadHost(ops.argv), "upload (wget)")
		}
	case "aws":
		if len(ops.argv) >= 2 && ops.argv[0] == "s3" {
			switch {
			case ops.argv[1] == "sync" && hasArg("--delete"),
				ops.argv[1] == "rm" && hasArg("--recursive"),
				ops.argv[1] == "rb" && hasArg("--force"):
				add(EffectDelete, "cloud:"+lastBucket(ops.argv), "bulk delete (aws s3 "+ops.argv[1]+")")
			}
		}
		if len(ops.argv) >= 2 && ops.argv[0] == "iam" && cloudIAMVerb(ops.argv[1]) {
			add(EffectPrivilege, "cloud:aws iam", "aws iam "+ops.argv[1])
		}
		if len(ops.argv) >= 2 && ops.argv[0] == "ec2" && strings.HasPrefix(ops.argv[1], "authorize-security-group-") && openToAll(args.argv) {
			add(EffectPrivilege, "cloud:aws ec2", "security group opened to every address")
		}
	case "gsutil":
		if len(ops.argv) >= 1 {
			switch {
			case ops.argv[0] == "rsync" && (hasArg("-d") || clusterHas(args.argv, 'd')),
				ops.argv[0] == "rm" && (hasArg("-r", "-R", "-a") || clusterHas(args.argv, 'r')),
				ops.argv[0] == "rb":
				add(EffectDelete, "cloud:"+lastBucket(ops.argv), "bulk delete (gsutil "+ops.argv[0]+")")
			case ops.argv[0] == "iam" && len(ops.argv) > 1 && (ops.argv[1] == "ch" || ops.argv[1] == "set"):
				add(EffectPrivilege, "cloud:gsutil iam", "gsutil iam "+ops.argv[1])
			case ops.argv[0] == "acl" && len(ops.argv) > 1 && (ops.argv[1] == "ch" || ops.argv[1] == "set"):
				add(EffectPrivilege, "cloud:gsutil acl", "gsutil acl "+ops.argv[1])
			}
		}
	case "gcloud":
		for _, a := range ops.argv {
			if a == "add-iam-policy-binding" || a == "set-iam-policy" {
				add(EffectPrivilege, "cloud:gcloud iam", "gcloud "+a)
			}
		}
		if len(ops.argv) >= 2 && ops.argv[0] == "storage" && ((ops.argv[1] == "rm" && hasArg("-r", "--recursive")) || (ops.argv[1] == "rsync" && hasArg("--delete-unmatched-destination-objects"))) {
			add(EffectDelete, "cloud:"+lastBucket(ops.argv), "bulk delete (gcloud storage "+ops.argv[1]+")")
		}
		if hasSeq(ops.argv, []string{"firewall-rules"}) && openToAll(args.argv) {
			add(EffectPrivilege, "cloud:gcloud compute", "firewall opened to every address")
		}
	case "az":
		if hasSeq(ops.argv, []string{"role", "assignment", "create"}) {
			add(EffectPrivilege, "cloud:az role", "az role assignment create")
		}
		if hasSeq(ops.argv, []string{"nsg", "rule"}) && openToAll(args.argv) {
			add(EffectPrivilege, "cloud:az network", "network rule opened to every address")
		}
	}
	// Text a forge CLI posts (an issue, a comment, a PR body, a release note) that carries a
	// credential: the credential leaves with it.
	if name == "gh" || name == "glab" || name == "tea" || name == "hub" {
		texts := make([]string, 0, len(pa.vals)+len(ops.argv))
		for _, v := range pa.vals {
			texts = append(texts, v.val)
		}
		texts = append(texts, ops.argv...)
		for _, t := range texts {
			if len(t) >= 12 && s.n.cat.carriesCredential(t) {
				add(EffectSecret, name, DetailContent)
				add(EffectSend, "forge:"+pa.name, "posted text")
				break
			}
		}
	}
	if pa.name == "git send-email" {
		to, _, _ := pa.val("--to")
		add(EffectPush, "mail:"+to, "patches mailed (git send-email)")
	}
	if name == "curl" || name == "curlie" {
		if hasArg("-T", "--upload-file") || curlClusterT(args.argv) {
			add(EffectPush, uploadHost(ops.argv), "upload (curl -T)")
		}
	}
}

// cloudIAMVerb: an aws iam sub-command that grants rights or mints credentials.
func cloudIAMVerb(v string) bool {
	for _, p := range []string{"attach-", "put-", "create-access-key", "create-login-profile", "update-login-profile",
		"add-user-to-group", "update-assume-role-policy", "create-policy-version", "set-default-policy-version", "add-role-to-instance-profile", "pass-role"} {
		if strings.HasPrefix(v, p) && (strings.HasSuffix(v, "-policy") || !strings.HasPrefix(p, "put-") && !strings.HasPrefix(p, "attach-")) {
			return true
		}
	}
	return false
}

func openToAll(argv []string) bool {
	for _, a := range argv {
		if strings.Contains(a, "0.0.0.0/0") || strings.Contains(a, "::/0") || a == "*" || strings.HasSuffix(a, "=*") || strings.Contains(a, "Internet") {
			return true
		}
	}
	return false
}

func clusterHas(argv []string, c byte) bool {
	for _, a := range argv {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return true
		}
	}
	return false
}

func lastBucket(argv []string) string {
	for i := len(argv) - 1; i >= 0; i-- {
		if strings.Contains(argv[i], "://") {
			return argv[i]
		}
	}
	return "(bucket)"
}

// remoteSpecHost is the host of an scp/rsync destination (user@host:path, host::module,
// rsync://host/…, sftp://…), or "" for a local path.
func remoteSpecHost(a string) string {
	if i := strings.Index(a, "://"); i > 0 {
		u := parseURL(a, URLConnect, false)
		if u.Host != "" {
			return u.Host
		}
		return "(unresolved)"
	}
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
		return ""
	}
	i := strings.IndexByte(a, ':')
	if i <= 0 || strings.Contains(a[:i], "/") {
		return ""
	}
	h := a[:i]
	if j := strings.LastIndexByte(h, '@'); j >= 0 {
		h = h[j+1:]
	}
	return strings.Trim(h, "[]")
}

func uploadHost(argv []string) string {
	for _, a := range argv {
		if strings.Contains(a, "://") {
			if u := parseURL(a, URLConnect, false); u.Host != "" {
				return u.Host
			}
		}
	}
	return "(upload destination)"
}

// curlClusterT: a cluster of curl's short options holds -T (-sT file, -fsSLT). A letter of an
// option that takes a value ends the cluster: the rest is that value (-XDELETE, -Hx-T:1).
func curlClusterT(argv []string) bool {
	for _, a := range argv {
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		for i := 1; i < len(a); i++ {
			if a[i] == 'T' {
				return true
			}
			if strings.IndexByte("XHdouAeEbcDFKmrwxyzCPQYy", a[i]) >= 0 {
				break
			}
		}
	}
	return false
}
