package normalize

import (
	"regexp"
	"strings"
)

// Public access and grants: cloud and cluster CLI calls that make data readable by everyone
// (a public ACL, a policy whose principal is "*", a public-access block removed, a snapshot or
// image shared with all accounts, an unauthenticated endpoint) or hand administration to an
// identity (an admin role, cluster-admin, a key minted for a service account). They are
// privilege effects: Target "cloud:…" when the call is public or administrative by its own
// words (rego structured.cloud-privilege blocks it), "grant:…" when it changes access in a way
// the words do not show (a policy from a file, a role binding to a named role): outside the
// envelope, so it escalates.
//
// Families: aws s3api put-bucket-acl|put-object-acl|create-bucket|put-object --acl public-*,
// --grant-* AllUsers/AuthenticatedUsers, put-bucket-policy (Principal "*"),
// delete-public-access-block / put-public-access-block false (s3api and s3control), aws s3
// cp|sync|mv --acl public-*, ec2 modify-image-attribute / modify-snapshot-attribute to all,
// rds modify-db-snapshot-attribute all / --publicly-accessible, lambda add-permission
// --principal "*" and function URLs without auth, ecr/sns/sqs/secretsmanager/kms policies with
// "*"; gsutil defacl, gcloud storage … allUsers/allAuthenticatedUsers / predefined public ACLs /
// --no-public-access-prevention, gcloud run deploy --allow-unauthenticated, gcloud iam
// service-accounts keys create; az storage container set-permission|create --public-access,
// az storage account create|update --allow-blob-public-access true, az ad sp create-for-rbac
// --role Owner|Contributor, az keyvault set-policy; kubectl create clusterrolebinding|rolebinding
// (cluster-admin or admin: cloud; other roles: grant).

var (
	publicPrincipalRE = regexp.MustCompile(`(?i)"principal"\s*:\s*(\{\s*"aws"\s*:\s*(\[\s*)?)?"\*"`)
	publicGranteeRE   = regexp.MustCompile(`(?i)(acs\.amazonaws\.com/groups/global/(AllUsers|AuthenticatedUsers)|\ballUsers\b|\ballAuthenticatedUsers\b)`)
	adminRoleRE       = regexp.MustCompile(`(?i)^(roles/(owner|editor|iam\.\w+admin|resourcemanager\.\w*admin|iam\.serviceAccount(TokenCreator|KeyAdmin|User))|owner|contributor|user access administrator|cluster-admin|admin|administratoraccess|arn:aws:iam::aws:policy/(administratoraccess|iamfullaccess|poweruseraccess))$`)
)

// publicGrants records the public-access and grant changes of a cloud or cluster CLI call.
func (w *walker) publicGrants(pa parsedArgs, name string, args, ops words) {
	o := ops.argv
	add := func(public bool, target, detail string) {
		prefix := "grant:"
		if public {
			prefix = "cloud:"
		}
		w.s.addEffect(Effect{Kind: EffectPrivilege, Target: prefix + target, Program: name, Detail: detail})
	}
	argVal := func(opts ...string) string { v, _ := optValue(args, opts...); return v }
	anyArg := func(re *regexp.Regexp) bool {
		for _, a := range args.argv {
			if re.MatchString(a) {
				return true
			}
		}
		return false
	}
	publicACL := func(v string) bool {
		v = strings.ToLower(v)
		return strings.HasPrefix(v, "public-") || v == "authenticated-read" || v == "publicread" || v == "publicreadwrite" ||
			v == "public" || v == "authenticatedread"
	}
	switch name {
	case "aws":
		if len(o) < 2 {
			return
		}
		svc, op := o[0], o[1]
		switch {
		case (svc == "s3api" || svc == "s3") && (publicACL(argVal("--acl")) || anyArg(publicGranteeRE)):
			add(true, "aws s3", "aws "+svc+" "+op+" makes objects public")
		case svc == "s3" && op == "presign":
			add(false, "aws s3", "presigned URL: a bearer link to the object")
		case svc == "s3api" && (op == "put-bucket-acl" || op == "put-object-acl"):
			add(false, "aws s3", "aws s3api "+op+" (grants not shown)") // --access-control-policy, --grant-* to named accounts
		case svc == "ec2-instance-connect" && op == "send-ssh-public-key":
			add(argVal("--instance-os-user") == "root", "aws ec2", "ssh key pushed to an instance for "+argVal("--instance-os-user"))
		case svc == "s3api" && op == "put-bucket-policy", svc == "s3control" && op == "put-access-point-policy":
			if anyArg(publicPrincipalRE) {
				add(true, "aws s3", "bucket policy grants access to everyone")
			} else {
				add(false, "aws s3", "bucket policy changed")
			}
		case (svc == "s3api" || svc == "s3control") && op == "delete-public-access-block":
			add(true, "aws s3", "public access block removed")
		case (svc == "s3api" || svc == "s3control") && op == "put-public-access-block" && anyArgContainsFold(args.argv, "=false", `": false`, `":false`):
			add(true, "aws s3", "public access block turned off")
		case svc == "ec2" && (op == "modify-image-attribute" || op == "modify-snapshot-attribute") && anyArgContainsFold(args.argv, "group=all", "all"):
			add(true, "aws ec2", op+" shares with every account")
		case svc == "rds" && (op == "modify-db-snapshot-attribute" || op == "modify-db-cluster-snapshot-attribute") && strings.EqualFold(argVal("--values-to-add"), "all"):
			add(true, "aws rds", "snapshot shared with every account")
		case svc == "rds" && (op == "modify-db-instance" || op == "create-db-instance" || op == "modify-db-cluster") && hasWord(args.argv, "--publicly-accessible"):
			add(true, "aws rds", "database made publicly accessible")
		case svc == "lambda" && op == "add-permission" && argVal("--principal") == "*":
			add(true, "aws lambda", "function callable by everyone")
		case svc == "lambda" && (op == "create-function-url-config" || op == "update-function-url-config") && strings.EqualFold(argVal("--auth-type"), "NONE"):
			add(true, "aws lambda", "function URL without authentication")
		case strings.HasPrefix(op, "set-") && strings.HasSuffix(op, "-policy") || op == "put-resource-policy" || op == "put-key-policy" || op == "add-permission" || op == "set-topic-attributes" || op == "set-queue-attributes":
			if anyArg(publicPrincipalRE) || argVal("--principal") == "*" {
				add(true, "aws "+svc, op+" grants access to everyone")
			}
		case svc == "iam" && (op == "create-user" || op == "create-role" || op == "add-user-to-group" || op == "create-service-specific-credential" || op == "upload-ssh-public-key"):
			add(false, "aws iam", "aws iam "+op)
		}
	case "gsutil":
		if len(o) >= 1 && o[0] == "signurl" {
			add(false, "gsutil", "signed URL: a bearer link to the object")
		}
		if len(o) >= 2 && o[0] == "defacl" && (o[1] == "ch" || o[1] == "set") {
			add(anyArg(publicGranteeRE) || anyArgContainsFold(args.argv, "public-read"), "gsutil defacl", "gsutil defacl "+o[1])
		}
		if len(o) >= 1 && (o[0] == "cp" || o[0] == "rsync") && publicACL(strings.ReplaceAll(argVal("-a"), "_", "-")) {
			add(true, "gsutil acl", "gsutil "+o[0]+" -a "+argVal("-a"))
		}
	case "gcloud":
		switch {
		case anyArg(publicGranteeRE):
			add(true, "gcloud iam", "grants access to allUsers/allAuthenticatedUsers")
		case hasWord(args.argv, "--no-public-access-prevention") || strings.EqualFold(argVal("--public-access-prevention"), "inherited"):
			add(true, "gcloud storage", "public access prevention removed")
		case publicACL(argVal("--predefined-acl", "--predefined-default-object-acl", "-a")):
			add(true, "gcloud storage", "predefined public ACL")
		case hasWord(args.argv, "--allow-unauthenticated"):
			add(true, "gcloud run", "service callable without authentication")
		case hasWord(o, "add-metadata") && sshKeysMetadata(argVal("--metadata", "--metadata-from-file")):
			v := argVal("--metadata", "--metadata-from-file")
			add(strings.Contains(v, "root:"), "gcloud compute", "ssh keys added to instance metadata")
		case hasSeq(o, []string{"os-login", "ssh-keys", "add"}):
			add(false, "gcloud compute", "ssh key added to the OS Login profile")
		case hasSeq(o, []string{"sql", "instances"}) && strings.Contains(argVal("--authorized-networks"), "0.0.0.0/0"):
			add(true, "gcloud sql", "database reachable from every address")
		case hasSeq(o, []string{"storage", "sign-url"}):
			add(false, "gcloud storage", "signed URL: a bearer link to the object")
		case hasSeq(o, []string{"service-accounts", "keys", "create"}):
			add(true, "gcloud iam", "key minted for a service account")
		case hasWord(o, "add-iam-policy-binding") && !adminRoleRE.MatchString(argVal("--role")):
			add(false, "gcloud iam", "role binding added")
		}
	case "az":
		switch {
		case hasSeq(o, []string{"storage", "container"}) && (hasWord(o, "set-permission") || hasWord(o, "create")) && publicBlobAccess(argVal("--public-access")):
			add(true, "az storage", "container opened to anonymous reads")
		case hasSeq(o, []string{"storage", "account"}) && strings.EqualFold(argVal("--allow-blob-public-access"), "true"):
			add(true, "az storage", "blob public access allowed")
		case hasWord(o, "storage") && hasWord(o, "generate-sas"):
			add(false, "az storage", "SAS token: a bearer link to the data")
		case hasSeq(o, []string{"ad", "sp", "create-for-rbac"}):
			add(adminRoleRE.MatchString(argVal("--role")) || argVal("--role") == "", "az ad", "service principal with credentials")
		case hasSeq(o, []string{"ad", "app", "credential", "reset"}), hasSeq(o, []string{"ad", "sp", "credential", "reset"}):
			add(true, "az ad", "credentials minted for an application")
		case hasWord(o, "firewall-rule") && argVal("--start-ip-address") == "0.0.0.0" && argVal("--end-ip-address") == "255.255.255.255":
			add(true, "az network", "database firewall opened to every address")
		case hasSeq(o, []string{"ad", "group", "member", "add"}), hasSeq(o, []string{"ad", "group", "owner", "add"}):
			add(adminRoleRE.MatchString(argVal("-g", "--group")) || strings.Contains(strings.ToLower(argVal("-g", "--group")), "admin"), "az ad", "member added to group "+argVal("-g", "--group"))
		case hasSeq(o, []string{"role", "definition", "create"}), hasSeq(o, []string{"role", "definition", "update"}):
			add(false, "az role", "custom role defined")
		case hasSeq(o, []string{"keyvault", "set-policy"}):
			add(false, "az keyvault", "key vault access policy changed")
		}
	case "gh", "glab":
		// gh api -X PATCH repos/O/R -f private=false | -f visibility=public: as gh repo edit --visibility public.
		for _, v := range []string{"private=false", "visibility=public", "visibility=internal"} {
			if hasWord(args.argv, v) {
				w.s.addEffect(Effect{Kind: EffectPush, Target: "forge:repository visibility", Program: name, Detail: "repository made public (" + v + ")"})
				break
			}
		}
	case "kubectl", "oc":
		if hasSeq(args.argv, []string{"create", "clusterrolebinding"}) || hasSeq(args.argv, []string{"create", "rolebinding"}) {
			role := argVal("--clusterrole", "--role")
			add(adminRoleRE.MatchString(role) || role == "", "kubernetes rbac", "binds "+role)
		}
		if i := indexOf(args.argv, "policy"); i > 0 && args.argv[i-1] == "adm" && i+1 < len(args.argv) && strings.HasPrefix(args.argv[i+1], "add-") {
			o = args.argv[i-1:]
			add(len(o) > 3 && adminRoleRE.MatchString(o[3]) || hasWord(o, "privileged") || hasWord(o, "anyuid"), "openshift rbac", "oc adm policy "+o[2])
		}
	}
}

func publicBlobAccess(v string) bool {
	v = strings.ToLower(v)
	return v == "blob" || v == "container"
}

func anyArgContainsFold(argv []string, subs ...string) bool {
	for _, a := range argv {
		la := strings.ToLower(a)
		for _, s := range subs {
			if s == "all" {
				if strings.Contains(la, "group=all") || strings.Contains(la, `"group":"all"`) || strings.Contains(la, `"group": "all"`) || la == "all" {
					return true
				}
				continue
			}
			if strings.Contains(la, s) {
				return true
			}
		}
	}
	return false
}

// sshKeysMetadata: a --metadata value setting ssh-keys or sshKeys (project or instance wide).
func sshKeysMetadata(v string) bool {
	lv := strings.ToLower(v)
	return strings.HasPrefix(lv, "ssh-keys=") || strings.HasPrefix(lv, "sshkeys=") || strings.Contains(lv, ",ssh-keys=") || strings.Contains(lv, ",sshkeys=")
}
