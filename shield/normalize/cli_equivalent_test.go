package normalize

import (
	"os"
	"strings"
	"testing"
)

func TestCLIEquivalent(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
		want string // "" = no equivalent
	}{
		{"use_aws", map[string]any{"service_name": "dynamodb", "operation_name": "delete-table",
			"parameters": map[string]any{"TableName": "Orders"}, "region": "eu-west-1"},
			"aws dynamodb delete-table --table-name Orders --region eu-west-1"},
		{"use_aws", map[string]any{"service_name": "s3", "operation_name": "rm",
			"parameters": map[string]any{"recursive": true, "dry_run": false}},
			"aws s3 rm --no-dry-run --recursive"},
		{"use_aws", map[string]any{"service_name": "s3"}, ""},                                // no operation: unreadable
		{"use_aws", map[string]any{"service_name": "s3", "operation_name": []any{"ls"}}, ""}, // not a scalar
		{"use_aws", map[string]any{"service_name": "s3", "operation_name": "ls", "parameters": "x"}, ""},
		{"kubectl", map[string]any{"command": "get secrets -A -o yaml"}, "kubectl get secrets -A -o yaml"},
		{"kubectl", map[string]any{"command": "kubectl get pods"}, "kubectl get pods"},
		{"kubectl_get", map[string]any{"resourceType": "secrets", "namespace": "prod"}, "kubectl get secrets -n prod -o json"},
		{"kubectl_delete", map[string]any{"resourceType": "namespace", "name": "payments"}, "kubectl delete namespace payments"},
		{"kubectl_delete", map[string]any{"name": "payments"}, ""},
		{"exec_in_pod", map[string]any{"name": "p", "command": []any{"sh", "-c", "id; cat /x"}}, "kubectl exec p -- sh -c 'id; cat /x'"},
		{"install_helm_chart", map[string]any{"name": "x", "chart": "x", "repo": "https://203.0.113.1/c", "namespace": "kube-system"},
			"helm install x x --repo https://203.0.113.1/c -n kube-system"},
		{"execute_ipython_cell", map[string]any{"code": "import os\n!rm -rf ~/x\nfiles = !ls"}, "python3 -c 'import os' \n rm -rf ~/x \n ls"},
		{"execute_ipython_cell", map[string]any{"code": "%%bash\ncurl x | sh"}, "curl x | sh"},
		{"execute_ipython_cell", map[string]any{"code": "%pip install requests"}, "pip install requests"},
		{"interact_with_process", map[string]any{"input": "len(df)"}, "python3 -c 'len(df)'"},
		{"interact_with_process", map[string]any{"input": "reboot"}, "python3 -c reboot \n reboot"},
		{"computer", map[string]any{"action": "type", "text": "rm -rf /\n"}, "rm -rf /\n"},
		{"computer", map[string]any{"action": "type", "text": "hello"}, ""},
		{"computer", map[string]any{"action": "left_click"}, ""},
		{"Bash", map[string]any{"command": "ls"}, ""},
	}
	for _, c := range cases {
		if got := cliEquivalent(c.tool, c.args); got != c.want {
			t.Errorf("cliEquivalent(%s, %v) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// A quote inside a value cannot end the word it is in.
func TestCLIEquivalentQuoting(t *testing.T) {
	got := cliEquivalent("kubectl_delete", map[string]any{"resourceType": "pod", "name": "x'; rm -rf ~; echo '"})
	if !strings.Contains(got, `'x'\''; rm -rf ~; echo '\'''`) {
		t.Fatalf("name not quoted as one word: %q", got)
	}
}

func TestCLIEquivalentNormalised(t *testing.T) {
	data, err := os.ReadFile("../../policies/default/catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := ParseCatalog("catalog.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	n := New(cat, specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	act := n.Normalize("use_aws", map[string]any{"service_name": "iam", "operation_name": "delete-role",
		"parameters": map[string]any{"role-name": "prod"}}, "")
	if act.Tool != "use_aws" || act.Class != ClassExec || len(act.Commands) == 0 || act.Commands[0].Name != "aws" {
		t.Fatalf("use_aws not normalised as the aws command: tool %q class %q commands %+v", act.Tool, act.Class, act.Commands)
	}
	if act.Args["service_name"] != "iam" {
		t.Fatalf("the call's own arguments are not kept: %v", act.Args)
	}
}

func TestReadOnlyToolName(t *testing.T) {
	for name, want := range map[string]bool{
		"get_weather": true, "list_open_issues": true, "search_docs": true, "getPullRequest": true, "fetch_user_profile": true,
		"get_secret": false, "read_secret": false, "add_to_allow_list": false, "describe_and_delete_stack": false,
		"update_deployment_status": false, "purge_cache_list": false, "set_user_info": false, "getApiKeys": false,
		"list_iam_roles": false, "get_db_password": false, "check_and_deploy": false, "": false,
	} {
		if got := readOnlyToolName(name); got != want {
			t.Errorf("readOnlyToolName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzCLIEquivalent(f *testing.F) {
	f.Add("use_aws", "s3", "ls", "bucket", "x'y")
	f.Add("kubectl_get", "secrets", "a", "namespace", "prod")
	f.Add("execute_ipython_cell", "", "", "code", "!ls\n%%bash\nx")
	f.Add("interact_with_process", "", "", "input", "reboot")
	f.Add("computer", "type", "", "text", "ls\r\n")
	f.Fuzz(func(t *testing.T, tool, a, b, k, v string) {
		args := map[string]any{"service_name": a, "operation_name": b, "resourceType": a, "name": b, "action": a,
			"parameters": map[string]any{k: v}, k: v}
		got := cliEquivalent(tool, args)
		if len(got) > maxEquivalentBytes+len(v)+len(a)+len(b)+64 {
			t.Fatalf("equivalent over the bound: %d bytes", len(got))
		}
	})
}
