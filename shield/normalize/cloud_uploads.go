package normalize

import (
	"regexp"
	"strings"
)

// Copies of local files into object storage. A cloud storage CLI that copies, syncs or moves
// local paths into a bucket (aws s3 cp|sync|mv, gsutil cp|rsync|mv, gcloud storage cp|rsync|mv,
// s5cmd cp|sync|mv, s3cmd put|sync, mc cp|mirror, azcopy copy|sync, rclone copy|sync to a URL)
// pushes them to the bucket's owner. bucketUploads adds a push effect, Target "bucket:SCHEME://NAME",
// Detail "upload (PROG VERB)", with ",workspace" when a source is the workspace itself or a
// directory above it (the whole project leaves). The bundle names the buckets of the project
// (data.json egress_buckets); an upload anywhere else is outside the envelope. Downloads and
// bucket-to-bucket copies push nothing from this host. Build outputs (buildOutputRE) get ",artifact".

// buildOutputRE: a build's output (dist/, build/, out/, target/, a site, a release archive or
// package): publishing it to a bucket is ordinary release work. Other sources (data, dumps, the
// sources, a home) leave the project and need a human unless the bucket is the project's.
var buildOutputRE = regexp.MustCompile(`^(\./)?(dist|build|out|target|public|site|_site|docs/_build|release|releases|artifacts|bin|pkg|coverage|storybook-static|\.next/static)(/|$)|\.(tar\.gz|tgz|zip|whl|jar|war|deb|rpm|apk|aab|ipa|dmg|msi|exe|tar\.zst|tar\.xz|nupkg|gem)$`)

var bucketUploadVerbs = set("cp", "sync", "mv", "rsync", "put", "mirror", "copy", "copyto", "move", "moveto", "upload", "upload-batch")

// bucketURL: the bucket an object-storage operand names ("" for a local path).
func bucketURL(a string) string {
	for _, sch := range []string{"s3://", "gs://", "az://", "r2://", "oss://", "cos://", "b2://", "swift://"} {
		if strings.HasPrefix(strings.ToLower(a), sch) {
			b, _, _ := strings.Cut(a[len(sch):], "/")
			if b == "" {
				return ""
			}
			return sch + b
		}
	}
	if strings.HasPrefix(a, "https://") {
		host, rest, _ := strings.Cut(a[len("https://"):], "/")
		if strings.HasSuffix(host, ".blob.core.windows.net") || strings.HasSuffix(host, ".dfs.core.windows.net") {
			c, _, _ := strings.Cut(rest, "?")
			c, _, _ = strings.Cut(c, "/")
			return "https://" + host + "/" + c
		}
	}
	return ""
}

func (w *walker) bucketUploads(pa parsedArgs, name string, ops words) {
	verbs := strings.Fields(pa.name)[1:]
	argv, dyn := ops.argv, ops.dyn
	// aws s3 cp …, gcloud storage cp …, gsutil cp …: the verb may still be among the operands.
	for k := 0; k < 2 && k < len(argv) && (len(verbs) == 0 || !bucketUploadVerbs[verbs[len(verbs)-1]]); k++ {
		if argv[k] == "s3" || argv[k] == "storage" || argv[k] == "blob" || bucketUploadVerbs[argv[k]] {
			verbs = append(verbs, argv[k])
			argv, dyn = argv[k+1:], dyn[k+1:]
			k = -1
		}
	}
	if len(verbs) == 0 || !bucketUploadVerbs[verbs[len(verbs)-1]] || len(argv) < 2 || len(argv) > 256 {
		return
	}
	dst := bucketURL(argv[len(argv)-1])
	if dst == "" {
		return
	}
	s := w.s
	local, whole, artifacts := false, false, true
	for k, a := range argv[:len(argv)-1] {
		if a == "" || bucketURL(a) != "" || strings.Contains(a, "://") {
			continue
		}
		local = true
		if !buildOutputRE.MatchString(a) {
			artifacts = false
		}
		if dyn[k] && isUnresolvedText(a) {
			continue
		}
		if clean, ok := resolvePath(a, s.cwd, s.n.opt.Home); ok && s.n.opt.Workspace != "" && (clean == s.n.opt.Workspace || strings.HasPrefix(s.n.opt.Workspace, strings.TrimSuffix(clean, "/")+"/")) {
			whole = true
		}
	}
	if !local {
		return
	}
	detail := "upload (" + name + " " + verbs[len(verbs)-1] + ")"
	if whole {
		detail += ",workspace"
	} else if artifacts {
		detail += ",artifact"
	}
	s.addEffect(Effect{Kind: EffectPush, Target: "bucket:" + dst, Program: name, Detail: detail})
}
