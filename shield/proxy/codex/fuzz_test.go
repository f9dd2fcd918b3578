package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/mcp"
)

// refuseAll blocks every call.
type refuseAll struct{}

func (refuseAll) Decide(context.Context, client.Call, bool) client.Decision {
	return client.Decision{Verdict: client.Block, Rules: []string{"fuzz:refuse"}}
}

// granting reports whether a line sent to the runtime grants anything: an accept, an approval,
// or a client action Shield gates.
func granting(line []byte) bool {
	m, err := mcp.Parse(line)
	if err != nil {
		return false
	}
	switch m.Method {
	case "command/exec", "thread/shellCommand", "fs/writeFile", "fs/remove", "fs/copy", "fs/createDirectory", "mcpServer/tool/call":
		return true
	}
	res := mcp.Object(m.Result())
	var s string
	_ = json.Unmarshal(res["decision"], &s)
	if s == "accept" || s == "acceptForSession" || s == "approved" || s == "approved_for_session" || mcp.Object(res["decision"]) != nil {
		return true
	}
	_ = json.Unmarshal(res["action"], &s)
	if s == "accept" {
		return true
	}
	// An op is typed by its "type" (the runtime's serde tag): only approval ops grant.
	op := mcp.Object(m.Fields["op"])
	var typ string
	_ = json.Unmarshal(op["type"], &typ)
	_ = json.Unmarshal(op["decision"], &s)
	return (typ == "exec_approval" || typ == "patch_approval") && (s == "approved" || s == "approved_for_session")
}

var fuzzSeeds = []string{
	`{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"c","command":"rm -rf /","cwd":"/w"}}`,
	`{"method":"item/fileChange/requestApproval","id":1,"params":{"itemId":"c","grantRoot":"/"}}`,
	`{"method":"mcpServer/elicitation/request","id":2,"params":{"serverName":"fs","_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"write_file","tool_params":{"path":"/etc/x"}}}}`,
	`{"method":"execCommandApproval","id":3,"params":{"command":["rm","-rf","/"]}}`,
	`{"id":4,"method":"command/exec","params":{"command":["bash","-c","x"]}}`,
	`{"method":"command/exec","params":{"command":["bash","-c","x"]}}`,
	`{"id":5,"method":"fs/writeFile","params":{"path":"/w/x","dataBase64":"aGk="}}`,
	`{"id":0,"result":{"decision":"acceptForSession"}}`,
	`{"id":"s","msg":{"type":"exec_approval_request","call_id":"c","command":["rm","-rf","/"]}}`,
	`{"id":"c","op":{"type":"exec_approval","id":"s","decision":"approved"}}`,
	`{"id":"c","op":{"type":"run_user_shell_command","command":"rm -rf /"}}`,
}

// FuzzAppServerLine: one line from either side, with an appliance that refuses everything:
// nothing granting reaches the runtime, and nothing panics.
func FuzzAppServerLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, fromRuntime bool) {
		for _, deferAllowed := range []bool{false, true} {
			a, _ := NewAppServer(Options{Decider: refuseAll{}, Workspace: "/w", DeferAllowed: deferAllowed})
			var toServer, toClient bytes.Buffer
			a.toServer, a.toClient = &writer{w: &toServer}, &writer{w: &toClient}
			if fromRuntime {
				a.fromServer(context.Background(), line)
			} else {
				a.fromClient(context.Background(), line)
			}
			a.dec.wg.Wait()
			for _, l := range bytes.Split(toServer.Bytes(), []byte("\n")) {
				if granting(l) {
					t.Fatalf("granted with a refusing appliance: %q → %q", line, l)
				}
			}
		}
	})
}

// FuzzProtoLine: the same for the SQ/EQ relay.
func FuzzProtoLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, fromRuntime bool) {
		p, _ := NewProto(Options{Decider: refuseAll{}, Workspace: "/w", DeferAllowed: true})
		var toServer, toClient bytes.Buffer
		p.toServer, p.toClient = &writer{w: &toServer}, &writer{w: &toClient}
		if fromRuntime {
			p.fromServer(context.Background(), line)
		} else {
			p.fromClient(context.Background(), line)
		}
		p.dec.wg.Wait()
		for _, l := range bytes.Split(toServer.Bytes(), []byte("\n")) {
			if granting(l) {
				t.Fatalf("granted with a refusing appliance: %q → %q", line, l)
			}
		}
	})
}
