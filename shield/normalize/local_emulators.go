package normalize

import (
	"net/url"
	"strings"
)

// Local endpoints make cloud and storage CLIs local. A cloud or object-storage CLI pointed at an
// endpoint on this host acts on a local emulator (LocalStack, MinIO, Azurite, fake-gcs-server, the
// Firebase/Firestore emulators), not on an account: its destructive verb (s3 rb --force, mc rm
// --recursive, az storage container delete) empties a test fixture. The endpoint is local when the
// command itself says so, by one of:
//
//   - an endpoint option whose host is a loopback name or address (aws --endpoint-url, s3cmd
//     --host, az --blob-endpoint, gsutil/gcloud --endpoint …: emulatorEndpointOptions);
//   - an assignment on the command (AWS_ENDPOINT_URL[_SVC]=, MC_HOST_ALIAS=, STORAGE_EMULATOR_HOST=,
//     FIRESTORE_EMULATOR_HOST=, FIREBASE_STORAGE_EMULATOR_HOST=, an Azure connection string with
//     UseDevelopmentStorage=true or loopback endpoints: emulatorEnv);
//   - for mc, every ALIAS/… operand names an alias that points at loopback: "local" (the alias mc's
//     own default configuration defines as http://localhost:9000), an MC_HOST_ALIAS assignment on
//     the command, or an `mc alias set ALIAS URL` earlier in the call. An alias the call points
//     elsewhere (mc alias set local https://s3.amazonaws.com …) is not local.
//
// Every effect of the command on something that is not a file (the API, the bucket, the
// operation) then gets Remote "local-emulator:HOST"; file paths keep their own judgement (an
// upload still reads its file). Anything dynamic, a non-loopback host, an option given twice with
// different hosts, or a command already running on a remote host (ssh …) stays as it was. Rules:
// rego/local_emulators.rego, rules/destructive.yaml (cloud-delete, cloud-storage-remove).
// FPR cost: none (only relaxes). Recall cost: an exported AWS_ENDPOINT_URL (not on the command)
// is not read, so `export …; aws …` stays escalated; an alias redefined in an earlier call is not
// seen (mc's "local" is trusted as its default).
const remoteLocalEmulator = "local-emulator:"

// emulatorEndpointOptions: per CLI, the options whose value is the service endpoint.
var emulatorEndpointOptions = map[string][]string{
	"aws":      {"--endpoint-url"},
	"s3cmd":    {"--host", "--host-bucket"},
	"gsutil":   {},
	"gcloud":   {"--endpoint", "--api-endpoint-overrides"},
	"az":       {"--blob-endpoint", "--queue-endpoint", "--table-endpoint", "--file-endpoint", "--connection-string"},
	"rclone":   {"--s3-endpoint"},
	"mc":       {},
	"firebase": {},
}

// emulatorEnv: assignments that point a CLI or SDK at an endpoint (prefix match for the ones that
// end in "_").
var emulatorEnv = []string{"AWS_ENDPOINT_URL", "MC_HOST_", "STORAGE_EMULATOR_HOST", "FIRESTORE_EMULATOR_HOST",
	"FIREBASE_STORAGE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "FIREBASE_DATABASE_EMULATOR_HOST",
	"PUBSUB_EMULATOR_HOST", "DATASTORE_EMULATOR_HOST", "BIGTABLE_EMULATOR_HOST", "SPANNER_EMULATOR_HOST",
	"AZURE_STORAGE_CONNECTION_STRING", "RCLONE_S3_ENDPOINT"}

// endpointHost: the host of an endpoint value (URL, HOST:PORT, an Azure connection string), and
// whether it is loopback; "" and false when it cannot be told.
func endpointHost(v string) (string, bool) {
	v = strings.TrimSpace(unquoteValue(v))
	if v == "" || isUnresolvedText(v) {
		return "", false
	}
	if strings.Contains(v, "UseDevelopmentStorage=true") && !strings.Contains(strings.ToLower(v), "developmentstorageproxyuri") {
		return "127.0.0.1", true
	}
	if strings.Contains(v, "Endpoint=") { // Azure: every *Endpoint= must be loopback
		host := ""
		for _, part := range strings.Split(v, ";") {
			k, val, ok := strings.Cut(part, "=")
			if !ok || !strings.HasSuffix(k, "Endpoint") {
				continue
			}
			h, ok := endpointHost(val)
			if !ok {
				return "", false
			}
			host = h
		}
		return host, host != ""
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	h := strings.ToLower(u.Hostname())
	return u.Host, loopbackName(h)
}

// localEmulator: the loopback endpoint one cloud or storage command acts on, or "".
func (w *walker) localEmulator(name string, args words, env []string) string {
	opts, ok := emulatorEndpointOptions[name]
	if !ok {
		return ""
	}
	host := ""
	local := func(v string) bool {
		h, ok := endpointHost(v)
		if !ok || host != "" && h != host {
			return false
		}
		host = h
		return true
	}
	remote := false
	mcAliases := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, e := range emulatorEnv {
			if k == e || strings.HasSuffix(e, "_") && strings.HasPrefix(k, e) || e == "AWS_ENDPOINT_URL" && strings.HasPrefix(k, e+"_") {
				if !local(v) {
					remote = true
				} else if strings.HasPrefix(k, "MC_HOST_") {
					mcAliases[strings.TrimPrefix(k, "MC_HOST_")] = true
				}
			}
		}
	}
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == "--" {
			break
		}
		opt, val, eq := strings.Cut(a, "=")
		if indexOf(opts, opt) < 0 {
			continue
		}
		if !eq {
			if i+1 >= len(args.argv) || args.dyn[i+1] {
				return ""
			}
			val = args.argv[i+1]
		} else if args.dyn[i] {
			return ""
		}
		if !local(val) {
			remote = true
		}
	}
	if name == "mc" {
		return w.mcLocal(args, mcAliases, remote)
	}
	if remote {
		return ""
	}
	return host
}

// mcLocal: for mc, records `mc alias set NAME URL` and returns the loopback host when every
// ALIAS/PATH operand names a loopback alias.
func (w *walker) mcLocal(args words, env map[string]bool, remote bool) string {
	x := w.s.fx()
	if x.mcAliases == nil {
		x.mcAliases = map[string]bool{"local": true} // mc's default configuration: http://localhost:9000
	}
	var ops []string
	for k, a := range args.argv {
		if args.dyn[k] {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) >= 3 && ops[0] == "alias" && (ops[1] == "set" || ops[1] == "s" || ops[1] == "add") {
		loop := false
		if len(ops) >= 4 {
			_, loop = endpointHost(ops[3])
		}
		x.mcAliases[ops[2]] = loop
		return ""
	}
	if remote || len(ops) < 2 {
		return ""
	}
	for _, op := range ops[1:] {
		alias, _, ok := strings.Cut(op, "/")
		if !ok || !(env[alias] || x.mcAliases[alias]) {
			return ""
		}
	}
	return "localhost:9000"
}

// markLocalEmulator: the effects from index start on that act on the service, not on files, get
// Remote "local-emulator:HOST".
func (w *walker) markLocalEmulator(start int, host string) {
	for i := start; i < len(w.s.act.Effects); i++ {
		e := &w.s.act.Effects[i]
		if e.Remote != "" || strings.HasPrefix(e.Target, "/") || e.Unresolved {
			continue
		}
		switch e.Kind {
		case EffectDelete, EffectWrite, EffectConnect, EffectOperate, EffectRead:
			e.Remote = remoteLocalEmulator + host
		}
	}
}
