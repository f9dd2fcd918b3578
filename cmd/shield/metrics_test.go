package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"go.yaml.in/yaml/v3"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// scrapeSeries returns every series of the metrics endpoint: "name{labels}" → value text.
func scrapeSeries(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("metrics line %q", line)
		}
		out[line[:i]] = line[i+1:]
	}
	return out
}

// family is the metric name of a series key.
func family(series string) string {
	if i := strings.IndexByte(series, '{'); i >= 0 {
		return series[:i]
	}
	return series
}

// freeLoopbackAddr returns a loopback address nothing listens on (just now).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestMetricLabelsBounded drives the real service with two rounds of calls that share nothing
// but their shape (new sessions, agents, tools, paths, hosts, approval ids, each round) and
// fails if the second round adds any series: a label fed from input would add one per call.
// It also checks that no label value carries an input-derived marker, and that the series the
// dashboard and alerts rely on exist.
func TestMetricLabelsBounded(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	const agentToken = "agent-token-metrics-0123456789"
	os.WriteFile(tokens, []byte(agentToken+" agent runtime-m\n"), 0o600)
	addr, maddr := freeLoopbackAddr(t), freeLoopbackAddr(t)
	cfg := &Config{Listen: []string{addr}, MetricsListen: maddr, Auth: AuthConfigForTest(tokens),
		// Export and Rekor on, so that their series exist too (Rekor at a closed port: uploads
		// fail in the background, decisions are unaffected).
		Export: &ExportConfig{Sink: "jsonl", Path: filepath.Join(dir, "export.jsonl")}}
	cfg.Audit.Rekor.URL = "http://" + freeLoopbackAddr(t)
	startServe(t, cfg)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	uconn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer uconn.Close()
	agent := shieldv1.NewShieldServiceClient(conn)
	approvals := shieldv1.NewApprovalServiceClient(uconn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+agentToken)

	round := func(k int) {
		const n = 12
		var escalated []*shieldv1.EvaluateRequest
		var ids []string
		for i := 0; i < n; i++ {
			mark := fmt.Sprintf("zq%dx%d", k, i) // an input-derived marker no label may carry
			cc := &shieldv1.CallContext{SessionId: "sess-" + mark, AgentId: "agent-" + mark}
			calls := []*shieldv1.ToolCall{
				{CallId: "c1-" + mark, Tool: "Bash", ArgumentsJson: fmt.Sprintf(`{"command":"go vet ./pkg-%s/..."}`, mark)},
				{CallId: "c2-" + mark, Tool: "Bash", ArgumentsJson: fmt.Sprintf(`{"command":"rm -rf /srv/%s"}`, mark)},
				{CallId: "c3-" + mark, Tool: "http_request", ArgumentsJson: fmt.Sprintf(`{"url":"http://169.254.169.254/%s"}`, mark)},
				{CallId: "c4-" + mark, Tool: "tool-" + mark, ArgumentsJson: fmt.Sprintf(`{"x":"%s"}`, mark)},
				{CallId: "c5-" + mark, Tool: "Bash", ArgumentsJson: fmt.Sprintf(`{"command":"curl -u admin:%s https://h-%s.example/"}`, mark, mark)},
			}
			for _, c := range calls {
				req := &shieldv1.EvaluateRequest{Call: c, Context: cc}
				resp, err := agent.Evaluate(actx, req)
				if err != nil {
					t.Fatalf("evaluate %s: %v", c.Tool, err)
				}
				if id := resp.GetVerdict().GetEscalationId(); id != "" {
					escalated = append(escalated, req)
					ids = append(ids, id)
				}
			}
		}
		if len(ids) < n {
			t.Fatalf("round %d: %d escalations, want at least %d (unknown tools)", k, len(ids), n)
		}
		// Approve half (and run the approved calls: tier 3 ALLOW with an approval rule), deny
		// the rest.
		for j, id := range ids {
			if _, err := approvals.Resolve(ctx, &shieldv1.ResolveApprovalRequest{Id: id, Approve: j%2 == 0, Comment: "c-" + id}); err != nil {
				t.Fatalf("resolve %s: %v", id, err)
			}
			if j%2 == 0 {
				if _, err := agent.Evaluate(actx, escalated[j]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	url := "http://" + maddr + "/metrics"
	round(1)
	first := scrapeSeries(t, url)
	round(2)
	second := scrapeSeries(t, url)

	var grown []string
	for s := range second {
		if _, ok := first[s]; !ok {
			grown = append(grown, s)
		}
	}
	sort.Strings(grown)
	if len(grown) > 0 {
		t.Errorf("series added by a round of new inputs (an unbounded label):\n%s", strings.Join(grown, "\n"))
	}
	marker := regexp.MustCompile(`zq\d+x\d+|apr_`)
	for s := range second {
		if marker.MatchString(s) {
			t.Errorf("label carries an input value: %s", s)
		}
	}
	// The series the dashboard and the alert rules use (deploy/grafana, deploy/prometheus).
	families := map[string]bool{}
	for s := range second {
		families[family(s)] = true
	}
	for _, want := range []string{"shield_decisions_total", "shield_rule_hits_total", "shield_approvals_pending",
		"shield_approvals_oldest_pending_age_seconds", "shield_audit_write_duration_seconds_bucket", "shield_audit_checkpoint_age_seconds",
		"shield_audit_checkpoint_uncovered_records", "shield_build_info", "shield_bundle_info", "shield_audit_log_healthy",
		"shield_policy_reload_failures_total", "shield_evaluate_duration_seconds_bucket"} {
		if !families[want] {
			t.Errorf("no %s series", want)
		}
	}
	if n := second[`shield_rule_hits_total{decision="ALLOW",rule="approval"}`]; n == "" || n == "0" {
		t.Errorf("approved calls not counted under rule=\"approval\": %q", n)
	}
	if n := second["shield_approvals_pending"]; n != "0" {
		t.Errorf("shield_approvals_pending = %s after every request was resolved, want 0", n)
	}
	t.Logf("%d series after round 1, %d after round 2", len(first), len(second))
	checkDeployExprs(t, families)

	// The export: section ships the trail from inside serve: the decisions reach the file as
	// OCSF events, redacted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "export.jsonl"))
		if n := strings.Count(string(b), `"class_uid":6003`); n >= 2*12*5 {
			if strings.Contains(string(b), "admin:zq") {
				t.Errorf("exported events hold a basic-auth password")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("export file holds %d API Activity events, want at least %d:\n%.2000s", strings.Count(string(b), `"class_uid":6003`), 2*12*5, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// conditionalSeries have no series in the test service (a component it does not run, or a
// vector nothing fed); each names the source file that registers it (checked).
var conditionalSeries = map[string]string{
	"shield_judge_outcomes_total": "../../shield/judge/judge.go",
	// Registered always, but a vector has no series until a call is shed.
	"shield_requests_shed_total": "../../shield/server/shed.go",
}

// checkDeployExprs: every series the Grafana dashboard and the alert rules name is one the
// service registers (or a recording rule of the rules file, or Prometheus's own "up").
func checkDeployExprs(t *testing.T, families map[string]bool) {
	t.Helper()
	var exprs []string
	dash, err := os.ReadFile("../../deploy/grafana/shield.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" { // the data source variable has none
			exprs = append(exprs, v.Definition)
		}
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Record string `yaml:"record"`
				Alert  string `yaml:"alert"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	rb, err := os.ReadFile("../../deploy/prometheus/shield-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(rb, &rules); err != nil {
		t.Fatalf("alert rules YAML: %v", err)
	}
	recorded := map[string]bool{}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
			if r.Record != "" {
				recorded[r.Record] = true
			}
			if r.Alert != "" {
				alerts++
			}
		}
	}
	if len(d.Panels) < 10 || alerts < 5 {
		t.Fatalf("dashboard has %d panels and the rules %d alerts: files not read as expected", len(d.Panels), alerts)
	}
	name := regexp.MustCompile(`\b(shield[_:][a-z0-9_:]+|up)\b`)
	for _, e := range exprs {
		if strings.TrimSpace(e) == "" {
			t.Errorf("empty expression in the dashboard or rules")
		}
		for _, m := range name.FindAllString(e, -1) {
			switch {
			case m == "up", recorded[m], families[m], families[m+"_bucket"]:
			case conditionalSeries[m] != "":
				src, err := os.ReadFile(conditionalSeries[m])
				if err != nil || !strings.Contains(string(src), `"`+m+`"`) {
					t.Errorf("%s is not registered in %s", m, conditionalSeries[m])
				}
			default:
				t.Errorf("expression %q names %s, which the service does not register", e, m)
			}
		}
	}
}
